/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The authenticated Raft transport (mon_raft_auth.h).
 *
 * One struct mra per monitor; one struct mra_conn per connection still in
 * its handshake, inbound (accepted on the Raft port) or outbound (raft asked
 * us to connect). A connection leaves the list in one of two ways: handed
 * to raft (its uv_tcp_t, allocated with raft_malloc because raft frees it,
 * goes with it), or closed by us (refused, timed out, or the transport is
 * closing). Outbound requests are answered exactly once: raft's connect
 * callback with the stream, or with an error once the handle is closed.
 */
#include "mon/mon_raft_auth.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "common/clock.h"
#include "common/log.h"
#include "mon/mon_raft_wire.h"

#define MRA_TICK_MS	   100
#define MRA_BACKLOG	   64
#define MRA_SEEN_MAX	   32
#define MRA_SEEN_WINDOW_MS 60000 /* one line per peer IP and reason per minute */
#define MRA_PEERS_MAX	   16	 /* outbound failures remembered (raft ids) */
#define MRA_SERVER_ENTITY  "mon."

enum mra_stage {
	MRA_IN_HELLO = 1, /* inbound: waiting for HELLO */
	MRA_IN_PROOF,
	MRA_IN_IDENT,
	MRA_OUT_CONNECTING, /* outbound: TCP connect in flight */
	MRA_OUT_CHALLENGE,
	MRA_OUT_DONE,
};

/* Why an inbound connection was refused: the key of the once-a-minute log lines. */
enum mra_why {
	MRA_WHY_LIMIT = 1,
	MRA_WHY_TIMEOUT,
	MRA_WHY_FRAME,
	MRA_WHY_HELLO,
	MRA_WHY_PROOF,
	MRA_WHY_IDENT,
	MRA_WHY_CLOSED,
};

struct mra;

struct mra_conn {
	struct mra_conn *next, *prev;
	struct mra *m;
	bool inbound;
	enum mra_stage stage;
	uv_tcp_t *tcp;
	uint64_t deadline_ms;
	char peer[AUTH_ADDR_MAX];  /* the other end, "ip:port" */
	char local[AUTH_ADDR_MAX]; /* our end */
	char peer_ip[AUTH_ADDR_MAX];
	struct auth_hs hs;
	/* the frame being read: header, then body */
	uint8_t hdr[MON_RAFT_HDR_LEN];
	uint8_t body[MON_RAFT_FRAME_MAX];
	uint32_t body_len;
	size_t got;
	bool in_body;
	/* outbound */
	struct raft_uv_connect *req;
	raft_id to_id;
	char to_addr[AUTH_ADDR_MAX];
	uv_connect_t creq;
	int status; /* for req->cb once the handle is closed */
};

struct mra_seen {
	char ip[AUTH_ADDR_MAX];
	enum mra_why why;
	uint64_t first_ms;
	uint32_t suppressed;
};

struct mra_peer_fail {
	raft_id id;
	bool logged;
};

struct mra {
	struct raft_uv_transport *t;
	uv_loop_t *loop;
	struct mon_raft_auth_conf conf;
	unsigned int per_ip_max;
	raft_id id;
	char address[AUTH_ADDR_MAX];
	uv_tcp_t listener;
	uv_timer_t timer;
	bool inited, timer_on, bind_warned;
	raft_uv_accept_cb accept_cb;
	struct mra_conn *conns;
	unsigned int open_handles; /* listener, timer, connections being closed */
	bool closing;
	raft_uv_transport_close_cb close_cb;
	struct mon_raft_auth_stats st;
	struct mra_seen seen[MRA_SEEN_MAX];
	struct mra_peer_fail fails[MRA_PEERS_MAX];
};

/* ------------------------------------------------------------- addresses */

static int mra_addr_parse(const char *text, struct sockaddr_storage *ss)
{
	char ip[AUTH_ADDR_MAX];
	const char *colon = strrchr(text, ':');
	unsigned long port;
	char *end;
	size_t n;

	if (colon == NULL || colon == text)
		return -EINVAL;
	port = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || colon[1] == '\0' || port > 65535)
		return -EINVAL;
	n = (size_t)(colon - text);
	if (text[0] == '[') {
		if (n < 3 || text[n - 1] != ']' || n - 2 >= sizeof(ip))
			return -EINVAL;
		memcpy(ip, text + 1, n - 2);
		ip[n - 2] = '\0';
		return uv_ip6_addr(ip, (int)port, (struct sockaddr_in6 *)ss) == 0 ? 0 : -EINVAL;
	}
	if (n >= sizeof(ip))
		return -EINVAL;
	memcpy(ip, text, n);
	ip[n] = '\0';
	return uv_ip4_addr(ip, (int)port, (struct sockaddr_in *)ss) == 0 ? 0 : -EINVAL;
}

/* "ip:port" ("[ip]:port" for IPv6), and the bare IP, the same way on both sides. */
static int mra_addr_fmt(const struct sockaddr_storage *ss, char *buf, size_t cap, char *ip_out,
			size_t ipcap)
{
	char ip[AUTH_ADDR_MAX];
	unsigned int port;
	int n;

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		if (uv_ip4_name(in, ip, sizeof(ip)) != 0)
			return -EINVAL;
		port = ntohs(in->sin_port);
		n = snprintf(buf, cap, "%s:%u", ip, port);
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		if (uv_ip6_name(in6, ip, sizeof(ip)) != 0)
			return -EINVAL;
		port = ntohs(in6->sin6_port);
		n = snprintf(buf, cap, "[%s]:%u", ip, port);
	} else {
		return -EAFNOSUPPORT;
	}
	if (n < 0 || (size_t)n >= cap)
		return -ENAMETOOLONG;
	if (ip_out != NULL)
		snprintf(ip_out, ipcap, "%s", ip);
	return 0;
}

/* Both ends of a connected socket. */
static int mra_conn_addrs(struct mra_conn *c)
{
	struct sockaddr_storage ss;
	int len = sizeof(ss);

	if (uv_tcp_getpeername(c->tcp, (struct sockaddr *)&ss, &len) != 0 ||
	    mra_addr_fmt(&ss, c->peer, sizeof(c->peer), c->peer_ip, sizeof(c->peer_ip)) != 0)
		return -ENOTCONN;
	len = sizeof(ss);
	if (uv_tcp_getsockname(c->tcp, (struct sockaddr *)&ss, &len) != 0 ||
	    mra_addr_fmt(&ss, c->local, sizeof(c->local), NULL, 0) != 0)
		return -ENOTCONN;
	return 0;
}

/* --------------------------------------------------------------- logging */

/*
 * One line per (peer IP, reason) per minute: a peer that retries every
 * second, or a flood, does not fill the log; the count not logged is said
 * with the next line.
 */
static void mra_refuse_log(struct mra *m, struct mra_conn *c, enum mra_why why, const char *fmt,
			   ...) __attribute__((format(printf, 4, 5)));
static void mra_refuse_log(struct mra *m, struct mra_conn *c, enum mra_why why, const char *fmt,
			   ...)
{
	uint64_t now = clock_now_ms();
	struct mra_seen *s = NULL, *oldest = &m->seen[0];
	char what[320], more[160] = "";
	va_list ap;

	for (unsigned int i = 0; i < MRA_SEEN_MAX; i++) {
		struct mra_seen *e = &m->seen[i];

		if (e->why == why && strcmp(e->ip, c->peer_ip) == 0) {
			s = e;
			break;
		}
		if (e->first_ms < oldest->first_ms)
			oldest = e;
	}
	if (s != NULL && now - s->first_ms < MRA_SEEN_WINDOW_MS) {
		s->suppressed++;
		return;
	}
	if (s != NULL && s->suppressed > 0)
		snprintf(more, sizeof(more),
			 " (and %u more from %s in the last minute, not logged)", s->suppressed,
			 c->peer_ip);
	if (s == NULL)
		s = oldest;
	snprintf(s->ip, sizeof(s->ip), "%s", c->peer_ip);
	s->why = why;
	s->first_ms = now;
	s->suppressed = 0;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	log_warn("mon", "%s: raft port: refused %s: %s%s", m->conf.name, c->peer, what, more);
}

static struct mra_peer_fail *mra_peer_fail(struct mra *m, raft_id id)
{
	struct mra_peer_fail *free_slot = NULL;

	for (unsigned int i = 0; i < MRA_PEERS_MAX; i++) {
		if (m->fails[i].id == id)
			return &m->fails[i];
		if (m->fails[i].id == 0 && free_slot == NULL)
			free_slot = &m->fails[i];
	}
	if (free_slot == NULL)
		free_slot = &m->fails[id % MRA_PEERS_MAX];
	free_slot->id = id;
	free_slot->logged = false;
	return free_slot;
}

/* An outbound handshake failed: logged once per peer until one succeeds again. */
static void mra_out_fail_log(struct mra *m, struct mra_conn *c, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void mra_out_fail_log(struct mra *m, struct mra_conn *c, const char *fmt, ...)
{
	struct mra_peer_fail *f = mra_peer_fail(m, c->to_id);
	char what[320];
	va_list ap;

	m->st.connect_failed++;
	if (f->logged)
		return;
	f->logged = true;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	log_warn("mon",
		 "%s: raft port: handshake with raft id %llu at %s failed: %s "
		 "(logged once until it succeeds)",
		 m->conf.name, (unsigned long long)c->to_id, c->to_addr, what);
}

/* ----------------------------------------------------------- connections */

static void mra_maybe_closed(struct mra *m)
{
	if (m->closing && m->open_handles == 0 && m->close_cb != NULL) {
		raft_uv_transport_close_cb cb = m->close_cb;

		m->close_cb = NULL;
		cb(m->t);
	}
}

static void mra_conn_link(struct mra *m, struct mra_conn *c)
{
	c->prev = NULL;
	c->next = m->conns;
	if (m->conns != NULL)
		m->conns->prev = c;
	m->conns = c;
	if (c->inbound)
		m->st.in_handshake++;
}

static void mra_conn_unlink(struct mra *m, struct mra_conn *c)
{
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		m->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	c->next = c->prev = NULL;
	if (c->inbound)
		m->st.in_handshake--;
}

static void mra_conn_free(struct mra_conn *c)
{
	auth_hs_clear(&c->hs);
	OPENSSL_cleanse(c->body, sizeof(c->body));
	free(c);
}

static void mra_conn_close_cb(uv_handle_t *h)
{
	struct mra_conn *c = h->data;
	struct mra *m = c->m;

	raft_free(c->tcp);
	if (!c->inbound)
		c->req->cb(c->req, NULL, c->status);
	mra_conn_free(c);
	m->open_handles--;
	mra_maybe_closed(m);
}

/* Close a connection still in its handshake (outbound: raft hears status once closed). */
static void mra_conn_close(struct mra_conn *c, int status)
{
	struct mra *m = c->m;

	mra_conn_unlink(m, c);
	c->status = status;
	m->open_handles++;
	uv_close((uv_handle_t *)c->tcp, mra_conn_close_cb);
}

struct mra_write {
	uv_write_t w;
	size_t len;
	uint8_t data[MON_RAFT_HDR_LEN + MON_RAFT_FRAME_MAX];
};

static void mra_write_cb(uv_write_t *w, int status)
{
	/* A failed write shows on the read side (EOF, reset) or as the deadline. */
	OPENSSL_cleanse(((struct mra_write *)w)->data, sizeof(((struct mra_write *)w)->data));
	free(w);
}

/*
 * Queue one frame. Its buffer lives until libuv is done with it, which may
 * be after the stream went to raft (raft's writes queue behind it).
 */
static int mra_write_frame(struct mra_conn *c, const void *payload, size_t len)
{
	struct mra_write *w;
	uv_buf_t buf;
	int rc;

	if (len == 0 || len > MON_RAFT_FRAME_MAX)
		return -EMSGSIZE;
	w = malloc(sizeof(*w));
	if (w == NULL)
		return -ENOMEM;
	mon_raft_frame_hdr(w->data, (uint32_t)len);
	memcpy(w->data + MON_RAFT_HDR_LEN, payload, len);
	w->len = MON_RAFT_HDR_LEN + len;
	buf = uv_buf_init((char *)w->data, (unsigned int)w->len);
	rc = uv_write(&w->w, (uv_stream_t *)c->tcp, &buf, 1, mra_write_cb);
	if (rc != 0) {
		free(w);
		return rc;
	}
	return 0;
}

/* ------------------------------------------------------------ inbound */

static void mra_in_refuse(struct mra_conn *c, enum mra_why why, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void mra_in_refuse(struct mra_conn *c, enum mra_why why, const char *fmt, ...)
{
	struct mra *m = c->m;
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (why == MRA_WHY_TIMEOUT)
		m->st.timed_out++;
	else if (why == MRA_WHY_LIMIT)
		m->st.over_limit++;
	else
		m->st.refused++;
	mra_refuse_log(m, c, why, "%s", what);
	mra_conn_close(c, 0);
}

static void mra_in_hello(struct mra_conn *c)
{
	struct mra *m = c->m;
	struct auth_hs_hello hello;
	struct auth_hs_bind bind = {0};
	struct auth_entity ent;
	struct proto_err err = {""};
	uint8_t out[MON_RAFT_FRAME_MAX];
	char why[200];
	size_t len;
	int rc;

	if (auth_hs_hello_decode(c->body, c->body_len, &err, &hello) != 0) {
		mra_in_refuse(c, MRA_WHY_HELLO, "%s", err.msg);
		return;
	}
	if (hello.method != AUTH_METHOD_KEY) {
		mra_in_refuse(c, MRA_WHY_HELLO,
			      "%s asks for method %u: the Raft port takes the "
			      "mon. key only",
			      hello.client, hello.method);
		return;
	}
	if (auth_entity_parse(hello.client, &ent, why, sizeof(why)) != 0 ||
	    ent.type != AUTH_ETYPE_MON) {
		mra_in_refuse(c, MRA_WHY_HELLO,
			      "%s is not a monitor: only monitors talk on the "
			      "Raft port",
			      hello.client);
		return;
	}
	bind.method = AUTH_METHOD_KEY;
	memcpy(bind.fsid, m->conf.fsid, sizeof(bind.fsid));
	snprintf(bind.server, sizeof(bind.server), "%s", MRA_SERVER_ENTITY);
	snprintf(bind.client_addr, sizeof(bind.client_addr), "%s", c->peer);
	snprintf(bind.server_addr, sizeof(bind.server_addr), "%s", c->local);
	rc =
	    auth_hs_server_start(&c->hs, &bind, &hello, &m->conf.key, &err, out, sizeof(out), &len);
	if (rc == 0)
		rc = mra_write_frame(c, out, len);
	if (rc != 0) {
		mra_in_refuse(c, MRA_WHY_HELLO, "%s", err.msg[0] ? err.msg : uv_strerror(rc));
		return;
	}
	c->stage = MRA_IN_PROOF;
}

static void mra_in_proof(struct mra_conn *c)
{
	struct proto_err err = {""};
	uint8_t out[MON_RAFT_FRAME_MAX];
	size_t len;
	int rc;

	rc = auth_hs_server_on_proof(&c->hs, c->body, c->body_len, &err, out, sizeof(out), &len);
	if (rc == -EACCES) {
		mra_in_refuse(c, MRA_WHY_PROOF,
			      "%s (it does not hold this cluster's mon. key, or "
			      "replays a recorded handshake)",
			      err.msg);
		return;
	}
	if (rc == 0)
		rc = mra_write_frame(c, out, len);
	if (rc != 0) {
		mra_in_refuse(c, MRA_WHY_PROOF, "%s", err.msg[0] ? err.msg : uv_strerror(rc));
		return;
	}
	c->stage = MRA_IN_IDENT;
}

static void mra_in_ident(struct mra_conn *c)
{
	struct mra *m = c->m;
	struct mon_raft_ident id;
	struct proto_err err = {""};
	uv_stream_t *stream = (uv_stream_t *)c->tcp;

	if (mon_raft_ident_decode(&c->hs.session, c->body, c->body_len, &err, &id) != 0) {
		mra_in_refuse(c, MRA_WHY_IDENT, "%s", err.msg);
		return;
	}
	if (id.to_id != m->id) {
		mra_in_refuse(c, MRA_WHY_IDENT,
			      "%s (raft id %llu) wants raft id %llu, this is %llu",
			      c->hs.bind.client, (unsigned long long)id.from_id,
			      (unsigned long long)id.to_id, (unsigned long long)m->id);
		return;
	}
	uv_read_stop(stream);
	mra_conn_unlink(m, c);
	m->st.accepted++;
	log_info("mon", "%s: raft port: %s at %s (raft id %llu, raft address %s) authenticated",
		 m->conf.name, c->hs.bind.client, c->peer, (unsigned long long)id.from_id,
		 id.from_addr);
	/* raft owns the stream from here (and frees it with raft_free) */
	m->accept_cb(m->t, id.from_id, id.from_addr, stream);
	mra_conn_free(c);
}

/* ----------------------------------------------------------- outbound */

static void mra_out_fail(struct mra_conn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void mra_out_fail(struct mra_conn *c, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	mra_out_fail_log(c->m, c, "%s", what);
	mra_conn_close(c, RAFT_NOCONNECTION);
}

static void mra_out_challenge(struct mra_conn *c)
{
	struct proto_err err = {""};
	uint8_t out[MON_RAFT_FRAME_MAX];
	size_t len;
	int rc;

	rc =
	    auth_hs_client_on_challenge(&c->hs, c->body, c->body_len, &err, out, sizeof(out), &len);
	if (rc == 0)
		rc = mra_write_frame(c, out, len);
	if (rc != 0) {
		mra_out_fail(c, "%s", err.msg[0] ? err.msg : uv_strerror(rc));
		return;
	}
	c->stage = MRA_OUT_DONE;
}

static void mra_out_done(struct mra_conn *c)
{
	struct mra *m = c->m;
	struct mon_raft_ident id = {0};
	struct proto_err err = {""};
	uint8_t out[MON_RAFT_FRAME_MAX];
	uv_stream_t *stream = (uv_stream_t *)c->tcp;
	struct raft_uv_connect *req = c->req;
	size_t len;
	int rc;

	rc = auth_hs_client_on_done(&c->hs, c->body, c->body_len, &err);
	if (rc == -EACCES) {
		mra_out_fail(c, "%s: it does not hold this cluster's mon. key", err.msg);
		return;
	}
	id.from_id = m->id;
	snprintf(id.from_addr, sizeof(id.from_addr), "%s", m->address);
	id.to_id = c->to_id;
	if (rc == 0)
		rc = mon_raft_ident_encode(&c->hs.session, &id, out, sizeof(out), &len);
	if (rc == 0)
		rc = mra_write_frame(c, out, len);
	if (rc != 0) {
		mra_out_fail(c, "%s", err.msg[0] ? err.msg : strerror(-rc));
		return;
	}
	uv_read_stop(stream);
	mra_conn_unlink(m, c);
	m->st.connected++;
	if (mra_peer_fail(m, c->to_id)->logged)
		log_info("mon", "%s: raft port: handshake with raft id %llu at %s succeeds again",
			 m->conf.name, (unsigned long long)c->to_id, c->to_addr);
	mra_peer_fail(m, c->to_id)->logged = false;
	mra_conn_free(c);
	/* IDENT is queued first: raft's own writes follow it on the stream */
	req->cb(req, stream, 0);
}

/* -------------------------------------------------------------- reading */

static void mra_alloc_cb(uv_handle_t *h, size_t suggested, uv_buf_t *buf)
{
	struct mra_conn *c = h->data;

	/* exactly what the current frame still lacks: never a byte of raft's stream */
	if (c->in_body)
		*buf = uv_buf_init((char *)c->body + c->got, (unsigned int)(c->body_len - c->got));
	else
		*buf =
		    uv_buf_init((char *)c->hdr + c->got, (unsigned int)(MON_RAFT_HDR_LEN - c->got));
}

static void mra_on_frame(struct mra_conn *c)
{
	switch (c->stage) {
	case MRA_IN_HELLO:
		mra_in_hello(c);
		break;
	case MRA_IN_PROOF:
		mra_in_proof(c);
		break;
	case MRA_IN_IDENT:
		mra_in_ident(c);
		break;
	case MRA_OUT_CHALLENGE:
		mra_out_challenge(c);
		break;
	case MRA_OUT_DONE:
		mra_out_done(c);
		break;
	case MRA_OUT_CONNECTING:
		break;
	}
}

static void mra_read_cb(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	struct mra_conn *c = s->data;
	struct proto_err err = {""};

	if (nread == 0)
		return;
	if (nread < 0) {
		const char *what =
		    nread == UV_EOF ? "closed the connection" : uv_strerror((int)nread);

		if (c->inbound)
			mra_in_refuse(c, MRA_WHY_CLOSED, "%s during the handshake", what);
		else
			mra_out_fail(c,
				     "%s during the handshake (does it hold this cluster's mon. "
				     "key? its log says why it refused us)",
				     what);
		return;
	}
	c->got += (size_t)nread;
	if (!c->in_body) {
		if (c->got < MON_RAFT_HDR_LEN)
			return;
		if (mon_raft_frame_hdr_decode(c->hdr, &err, &c->body_len) != 0) {
			if (c->inbound)
				mra_in_refuse(c, MRA_WHY_FRAME, "%s", err.msg);
			else
				mra_out_fail(c, "%s", err.msg);
			return;
		}
		c->in_body = true;
		c->got = 0;
		return;
	}
	if (c->got < c->body_len)
		return;
	c->in_body = false;
	c->got = 0;
	mra_on_frame(c); /* may hand the stream over or close it: nothing of c after this */
}

/* ------------------------------------------------------ listen, accept */

static unsigned int mra_in_from(const struct mra *m, const char *ip)
{
	unsigned int n = 0;

	for (const struct mra_conn *c = m->conns; c != NULL; c = c->next)
		n += c->inbound && strcmp(c->peer_ip, ip) == 0;
	return n;
}

static void mra_listen_cb(uv_stream_t *server, int status)
{
	struct mra *m = server->data;
	struct mra_conn *c;
	unsigned int from;

	if (status != 0 || m->closing)
		return;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return;
	c->tcp = raft_malloc(sizeof(*c->tcp));
	if (c->tcp == NULL) {
		free(c);
		return;
	}
	c->m = m;
	c->inbound = true;
	c->stage = MRA_IN_HELLO;
	uv_tcp_init(m->loop, c->tcp);
	c->tcp->data = c;
	if (uv_accept(server, (uv_stream_t *)c->tcp) != 0 || mra_conn_addrs(c) != 0) {
		m->open_handles++;
		uv_close((uv_handle_t *)c->tcp, mra_conn_close_cb);
		return;
	}
	from = mra_in_from(m, c->peer_ip);
	mra_conn_link(m, c);
	c->deadline_ms = clock_now_ms() + m->conf.timeout_ms;
	if (m->st.in_handshake > m->conf.unauth_max) {
		mra_in_refuse(c, MRA_WHY_LIMIT,
			      "%u handshakes already in progress "
			      "(mon_raft_unauth_max)",
			      m->st.in_handshake - 1);
		return;
	}
	if (from >= m->per_ip_max) {
		mra_in_refuse(c, MRA_WHY_LIMIT,
			      "%u handshakes from %s already in progress "
			      "(a quarter of mon_raft_unauth_max)",
			      from, c->peer_ip);
		return;
	}
	uv_tcp_nodelay(c->tcp, 1);
	if (uv_read_start((uv_stream_t *)c->tcp, mra_alloc_cb, mra_read_cb) != 0)
		mra_in_refuse(c, MRA_WHY_CLOSED, "cannot read from the connection");
}

static void mra_tick_cb(uv_timer_t *timer)
{
	struct mra *m = timer->data;
	uint64_t now = clock_now_ms();
	struct mra_conn *c = m->conns, *next;

	for (; c != NULL; c = next) {
		next = c->next;
		if (now < c->deadline_ms)
			continue;
		if (c->inbound)
			mra_in_refuse(c, MRA_WHY_TIMEOUT,
				      "no complete handshake within %llu ms "
				      "(mon_raft_handshake_timeout)",
				      (unsigned long long)m->conf.timeout_ms);
		else if (c->stage == MRA_OUT_CONNECTING)
			mra_conn_close(c, RAFT_NOCONNECTION); /* TCP connect: a peer down */
		else
			mra_out_fail(c, "no complete handshake within %llu ms",
				     (unsigned long long)m->conf.timeout_ms);
	}
}

static void mra_timer_start(struct mra *m)
{
	if (m->timer_on)
		return;
	m->timer_on = true;
	uv_timer_start(&m->timer, mra_tick_cb, MRA_TICK_MS, MRA_TICK_MS);
}

/* ------------------------------------------------------------ transport */

static int mra_init(struct raft_uv_transport *t, raft_id id, const char *address)
{
	struct mra *m = t->impl;

	if (strlen(address) >= sizeof(m->address)) {
		snprintf(t->errmsg, sizeof(t->errmsg), "raft address %s is too long", address);
		return RAFT_NAMETOOLONG;
	}
	m->id = id;
	snprintf(m->address, sizeof(m->address), "%s", address);
	uv_tcp_init(m->loop, &m->listener);
	m->listener.data = m;
	uv_timer_init(m->loop, &m->timer);
	m->timer.data = m;
	m->inited = true;
	m->open_handles = 2;
	return 0;
}

static int mra_listen(struct raft_uv_transport *t, raft_uv_accept_cb cb)
{
	struct mra *m = t->impl;
	struct sockaddr_storage ss;
	int rc;

	if (!m->conf.have_key) {
		snprintf(t->errmsg, sizeof(t->errmsg), "no mon. key: the Raft port is not opened");
		return RAFT_UNAUTHORIZED;
	}
	if (mra_addr_parse(m->address, &ss) != 0) {
		snprintf(t->errmsg, sizeof(t->errmsg), "raft address %s: not ip:port", m->address);
		return RAFT_INVALID;
	}
	m->accept_cb = cb;
	rc = uv_tcp_bind(&m->listener, (struct sockaddr *)&ss, 0);
	if (rc == 0)
		rc = uv_listen((uv_stream_t *)&m->listener, MRA_BACKLOG, mra_listen_cb);
	if (rc != 0) {
		snprintf(t->errmsg, sizeof(t->errmsg), "listen on %s: %s", m->address,
			 uv_strerror(rc));
		log_error("mon", "%s: raft port: listen on %s: %s", m->conf.name, m->address,
			  uv_strerror(rc));
		return RAFT_IOERR;
	}
	mra_timer_start(m);
	log_info("mon",
		 "%s: raft port %s: peers must prove the mon. key (handshake timeout %llu "
		 "ms, at most %u handshakes at once, %u per IP)",
		 m->conf.name, m->address, (unsigned long long)m->conf.timeout_ms,
		 m->conf.unauth_max, m->per_ip_max);
	return 0;
}

static void mra_connect_cb(uv_connect_t *creq, int status)
{
	struct mra_conn *c = creq->data;
	struct mra *m = c->m;
	struct auth_hs_bind bind = {0};
	uint8_t out[MON_RAFT_FRAME_MAX];
	size_t len;
	int rc;

	if (status == UV_ECANCELED || c->stage != MRA_OUT_CONNECTING)
		return; /* closed under us: the close callback answers raft */
	if (status != 0) {
		/* no listener there (a peer down): raft retries; not an auth event */
		mra_conn_close(c, RAFT_NOCONNECTION);
		return;
	}
	if (mra_conn_addrs(c) != 0) {
		mra_conn_close(c, RAFT_NOCONNECTION);
		return;
	}
	bind.method = AUTH_METHOD_KEY;
	memcpy(bind.fsid, m->conf.fsid, sizeof(bind.fsid));
	snprintf(bind.client, sizeof(bind.client), "%s", m->conf.name);
	snprintf(bind.server, sizeof(bind.server), "%s", MRA_SERVER_ENTITY);
	snprintf(bind.client_addr, sizeof(bind.client_addr), "%s", c->local);
	snprintf(bind.server_addr, sizeof(bind.server_addr), "%s", c->peer);
	rc = auth_hs_client_start(&c->hs, &bind, &m->conf.key, NULL, 0, out, sizeof(out), &len);
	if (rc == 0)
		rc = mra_write_frame(c, out, len);
	if (rc == 0)
		rc = uv_read_start((uv_stream_t *)c->tcp, mra_alloc_cb, mra_read_cb);
	if (rc != 0) {
		mra_out_fail(c, "cannot start the handshake: %s", strerror(rc < 0 ? -rc : rc));
		return;
	}
	c->stage = MRA_OUT_CHALLENGE;
}

/* Bind the outbound socket to our own Raft IP: the address the peer knows us by. */
static void mra_bind_self(struct mra *m, uv_tcp_t *tcp)
{
	struct sockaddr_storage ss;
	int rc;

	if (mra_addr_parse(m->address, &ss) != 0)
		return;
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = 0;
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = 0;
	rc = uv_tcp_bind(tcp, (struct sockaddr *)&ss, 0);
	if (rc != 0 && !m->bind_warned) {
		m->bind_warned = true;
		log_warn("mon",
			 "%s: raft port: cannot bind outgoing connections to %s (%s): the "
			 "kernel picks their source address",
			 m->conf.name, m->address, uv_strerror(rc));
	}
}

static int mra_connect(struct raft_uv_transport *t, struct raft_uv_connect *req, raft_id id,
		       const char *address, raft_uv_connect_cb cb)
{
	struct mra *m = t->impl;
	struct sockaddr_storage ss;
	struct mra_conn *c;
	int rc;

	if (!m->conf.have_key) {
		snprintf(t->errmsg, sizeof(t->errmsg), "no mon. key: no connection to raft peers");
		return RAFT_UNAUTHORIZED;
	}
	if (mra_addr_parse(address, &ss) != 0) {
		snprintf(t->errmsg, sizeof(t->errmsg), "raft address %s: not ip:port", address);
		return RAFT_NOCONNECTION;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return RAFT_NOMEM;
	c->tcp = raft_malloc(sizeof(*c->tcp));
	if (c->tcp == NULL) {
		free(c);
		return RAFT_NOMEM;
	}
	c->m = m;
	c->stage = MRA_OUT_CONNECTING;
	c->req = req;
	c->to_id = id;
	snprintf(c->to_addr, sizeof(c->to_addr), "%s", address);
	c->creq.data = c;
	req->cb = cb;
	uv_tcp_init(m->loop, c->tcp);
	c->tcp->data = c;
	mra_bind_self(m, c->tcp);
	uv_tcp_nodelay(c->tcp, 1);
	rc = uv_tcp_connect(&c->creq, c->tcp, (struct sockaddr *)&ss, mra_connect_cb);
	if (rc != 0) {
		snprintf(t->errmsg, sizeof(t->errmsg), "connect to %s: %s", address,
			 uv_strerror(rc));
		/* not linked, no callback: raft sees the error returned here */
		uv_close((uv_handle_t *)c->tcp, (uv_close_cb)raft_free);
		free(c);
		return RAFT_NOCONNECTION;
	}
	c->deadline_ms = clock_now_ms() + m->conf.timeout_ms;
	mra_conn_link(m, c);
	mra_timer_start(m);
	return 0;
}

static void mra_handle_close_cb(uv_handle_t *h)
{
	struct mra *m = h->data;

	m->open_handles--;
	mra_maybe_closed(m);
}

static void mra_close(struct raft_uv_transport *t, raft_uv_transport_close_cb cb)
{
	struct mra *m = t->impl;

	m->closing = true;
	m->close_cb = cb;
	while (m->conns != NULL)
		mra_conn_close(m->conns, RAFT_CANCELED);
	if (m->inited) {
		uv_close((uv_handle_t *)&m->listener, mra_handle_close_cb);
		uv_close((uv_handle_t *)&m->timer, mra_handle_close_cb);
	}
	mra_maybe_closed(m);
}

int mon_raft_auth_init(struct raft_uv_transport *t, uv_loop_t *loop,
		       const struct mon_raft_auth_conf *conf)
{
	void *data = t->data;
	struct mra *m;

	memset(t, 0, sizeof(*t));
	t->data = data;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return -ENOMEM;
	m->t = t;
	m->loop = loop;
	m->conf = *conf;
	if (m->conf.unauth_max == 0)
		m->conf.unauth_max = 1;
	m->per_ip_max = m->conf.unauth_max / 4 > 4 ? m->conf.unauth_max / 4 : 4;
	t->impl = m;
	t->init = mra_init;
	t->listen = mra_listen;
	t->connect = mra_connect;
	t->close = mra_close;
	return 0;
}

void mon_raft_auth_close(struct raft_uv_transport *t)
{
	struct mra *m = t->impl;

	if (m == NULL)
		return;
	OPENSSL_cleanse(&m->conf.key, sizeof(m->conf.key));
	free(m);
	t->impl = NULL;
}

void mon_raft_auth_stats(const struct raft_uv_transport *t, struct mon_raft_auth_stats *out)
{
	const struct mra *m = t->impl;

	if (m == NULL) {
		memset(out, 0, sizeof(*out));
		return;
	}
	*out = m->st;
}
