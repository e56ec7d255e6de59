/* SPDX-License-Identifier: Apache-2.0 */
/*
 * auth_peer: a hostile (or honest, for reference) peer of the monitors for
 * the security suite (tests/test_security.sh). It speaks the messenger's
 * wire itself, frame by frame over a raw fabric endpoint, so it can record,
 * replay, reflect, relay and tamper.
 *
 *   auth_peer -c CONF [-k KEYRING -n ENTITY] [-b LOCAL_IP] MODE ARGS
 *
 *   cmd MON JSON          honest: handshake, one command; prints its status
 *   nokey MON JSON        no handshake: the command right after the hello
 *   replay MON JSON       an honest session recorded, then every frame it
 *                         sent replayed on a new connection from the same
 *                         address
 *   tamper MON JSON       honest; then the command again with one bit of its
 *                         MAC flipped
 *   ticket MON            honest: AUTH_TICKET for the OSDs; the grant must
 *                         open under the session's seal key (exit 3 when
 *                         the monitor refuses, with its line)
 *   osdticket MON OSD [ring]  a ticket from MON (as mode ticket), then to
 *                         the OSD at OSD (its cluster address): the TICKET
 *                         handshake (it must pass: the ticket is real),
 *                         then a PING (with "ring": a replication ring
 *                         request as osd.0), a cluster message: a client
 *                         must be closed on, with no PONG or ring grant
 *                         (exit 0 when it is)
 *   boot MON ID           OSD_BOOT for osd.ID
 *   report MON REPORTER TARGET   OSD_FAILURE: REPORTER says TARGET failed
 *   hold MON SECONDS      honest, then a status every 500 ms until the
 *                         monitor closes the session or SECONDS pass
 *   rtt MON N             the cost of authentication (docs/performance.md):
 *                         N fresh connections (time to the first PONG, the
 *                         handshake included), then N PINGs and N "mon stat"
 *                         commands on one connection; with -k authenticated,
 *                         without it plain (the monitor must allow that)
 *   macbench N [gmac]     no network: the cost of sealing and verifying one
 *                         frame of 64, 256, 1024 and 8192 bytes (N each)
 *   stalebulk MON JSON    honest: a command whose reply is larger than a
 *                         frame, so it comes as a BULK (a key to the
 *                         monitor's buffer, scoped to this connection);
 *                         read it, answer BULK_DONE, then read again with
 *                         the same key: the read must fail (-EACCES) and
 *                         the connection still be served (exit 0)
 *   fakemon LISTEN reflect-nonce|reflect-proof|relay [REALMON] SECONDS
 *                         a monitor impostor for honest clients: it echoes
 *                         their nonce, returns their own proof as its DONE,
 *                         or relays everything to REALMON
 *
 * Every mode prints one line "result: ..." (with "local IP:PORT", the
 * address the monitors saw) and exits 0 when the outcome is the one a
 * correct monitor (or client) produces: refused where it must be, served
 * where it must be. Bounded: every wait has a deadline.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auth/keyring.h"
#include "auth/policy.h"
#include "auth/session.h"
#include "auth/ticket.h"
#include "common/clock.h"
#include "common/conf.h"
#include "common/log.h"
#include "fabric/fabric.h"
#include "proto/hello.h"
#include "proto/proto.h"

#define PEER_WAIT_MS 8000
#define PEER_MSG_MAX 65536
#define PEER_QUEUE   64

struct peer_msg {
	size_t len;
	uint8_t *data;
};

/* One raw endpoint and what arrived on it. */
struct raw {
	struct fab_ep *ep;
	bool closed, connected;
	int status;
	struct peer_msg q[PEER_QUEUE];
	unsigned int head, n;
};

static struct fab_domain *dom;
static struct fab_listener *lis;
static struct raw *accepted; /* fakemon: the newest accepted connection */
static uint8_t fsid[16];
static char entity[AUTH_ENTITY_MAX] = "client.admin";
static struct auth_key key;
static const char *bind_ip;
/* stalebulk: one-sided reads done, the last one's status; a BULK seen by sess_reply */
static unsigned int reads_done;
static int read_status;
static bool want_bulk;
static struct proto_bulk last_bulk;

static void raw_event(const struct fab_cqe *cqe)
{
	struct raw *r = cqe->ep != NULL ? fab_ep_ctx(cqe->ep) : NULL;

	switch (cqe->kind) {
	case FAB_EV_ACCEPTED:
		r = calloc(1, sizeof(*r));
		if (r == NULL) {
			fab_ep_close(cqe->ep);
			return;
		}
		r->ep = cqe->ep;
		r->connected = true;
		fab_ep_set_ctx(cqe->ep, r);
		accepted = r;
		return;
	case FAB_EV_CONNECTED:
		if (r != NULL) {
			r->connected = cqe->status == 0;
			r->closed = cqe->status != 0;
			r->status = cqe->status;
		}
		return;
	case FAB_EV_READ:
		reads_done++;
		read_status = cqe->status;
		return;
	case FAB_EV_PEER_FAILED:
		if (r != NULL) {
			r->closed = true;
			r->status = cqe->status;
		}
		return;
	case FAB_EV_RECV:
		if (r != NULL && r->n < PEER_QUEUE) {
			struct peer_msg *m = &r->q[(r->head + r->n) % PEER_QUEUE];

			m->data = malloc(cqe->len);
			if (m->data != NULL) {
				memcpy(m->data, cqe->data, cqe->len);
				m->len = cqe->len;
				r->n++;
			}
		}
		fab_recv_release(cqe);
		return;
	default:
		return;
	}
}

static void pump(int ms)
{
	struct fab_cqe cqe;

	fab_progress(dom, 0);
	while (fab_cq_poll(dom, &cqe, 1) == 1)
		raw_event(&cqe);
	if (ms > 0)
		fab_wait(dom, ms);
}

static int raw_connect(struct raw *r, const char *addr, const char *local)
{
	uint64_t deadline = clock_now_ms() + PEER_WAIT_MS;
	int rc;

	memset(r, 0, sizeof(*r));
	rc = fab_connect(dom, addr, local, r, &r->ep);
	if (rc != 0)
		return rc;
	while (!r->connected && !r->closed && clock_now_ms() < deadline)
		pump(10);
	return r->connected ? 0 : r->status != 0 ? r->status : -ETIMEDOUT;
}

static void raw_close(struct raw *r)
{
	if (r->ep != NULL)
		fab_ep_close(r->ep);
	r->ep = NULL;
	while (r->n > 0) {
		free(r->q[r->head].data);
		r->head = (r->head + 1) % PEER_QUEUE;
		r->n--;
	}
}

static int raw_send(struct raw *r, const void *buf, size_t len)
{
	return r->closed ? -ENOTCONN : fab_send(r->ep, buf, len, NULL);
}

/* The next message (caller frees), or NULL: closed or ms passed. */
static uint8_t *raw_recv(struct raw *r, size_t *len_out, int ms)
{
	uint64_t deadline = clock_now_ms() + (uint64_t)ms;
	uint8_t *p;

	while (r->n == 0 && !r->closed && clock_now_ms() < deadline)
		pump(5);
	if (r->n == 0)
		return NULL;
	p = r->q[r->head].data;
	*len_out = r->q[r->head].len;
	r->head = (r->head + 1) % PEER_QUEUE;
	r->n--;
	return p;
}

/* Wait until the peer closes r; true if it did within ms. */
static bool raw_wait_closed(struct raw *r, int ms)
{
	uint64_t deadline = clock_now_ms() + (uint64_t)ms;

	while (!r->closed && clock_now_ms() < deadline)
		pump(5);
	return r->closed;
}

/* ------------------------------------------------------------- frames */

static int frame_of(const struct proto_msg *m, uint64_t tid, uint8_t *buf, size_t cap, size_t *len)
{
	return proto_frame_encode(m, tid, buf, cap, len);
}

static int auth_frame(const void *msg, size_t mlen, uint8_t *buf, size_t cap, size_t *len)
{
	struct proto_msg m = {.type = PROTO_AUTH};

	m.auth.data = msg;
	m.auth.len = (uint32_t)mlen;
	return frame_of(&m, 0, buf, cap, len);
}

static int decode(const uint8_t *p, size_t len, struct proto_hdr *hdr, struct proto_msg *msg)
{
	return proto_frame_decode(p, len, PROTO_PAYLOAD_MAX, NULL, NULL, hdr, msg);
}

/* What an honest client session sent, frame by frame, to replay it. */
struct record {
	uint8_t *f[8];
	size_t len[8];
	unsigned int n;
};

static void rec_add(struct record *rec, const void *p, size_t len)
{
	if (rec == NULL || rec->n >= 8)
		return;
	rec->f[rec->n] = malloc(len);
	if (rec->f[rec->n] == NULL)
		return;
	memcpy(rec->f[rec->n], p, len);
	rec->len[rec->n++] = len;
}

static int send_rec(struct raw *r, struct record *rec, const void *p, size_t len)
{
	rec_add(rec, p, len);
	return raw_send(r, p, len);
}

/* A client session over r. */
struct csess {
	struct raw *r;
	struct auth_sess s;
	uint8_t hello[512], peer_hello[512];
	size_t hello_len, peer_hello_len;
	bool gmac; /* both hellos offer GMAC frame MACs, as the messenger decides */
	char why[512];
};

/* The version hello, both ways: ours as entity, then theirs. */
/* The ticket to present instead of the key (osdticket), or NULL. */
static struct auth_ticket_holder *hello_ticket;

static int sess_hellos(struct csess *c, const char *name, struct record *rec, bool auth)
{
	struct proto_hello h;
	uint8_t *p, msg[AUTH_SESS_MSG_MAX], fr[AUTH_SESS_MSG_MAX + 64];
	size_t len, mlen, flen;
	struct proto_hdr hdr;
	struct proto_msg pm;
	int rc;

	proto_hello_init(&h, name);
	rc = proto_hello_frame(&h, c->hello, sizeof(c->hello), &c->hello_len);
	if (rc == 0)
		rc = send_rec(c->r, rec, c->hello, c->hello_len);
	if (rc == 0 && auth) {
		if (hello_ticket != NULL)
			rc = auth_sess_client_start_ticket(&c->s, entity, hello_ticket->ticket,
							   hello_ticket->ticket_len,
							   &hello_ticket->key, AUTH_OSD_SERVICE, msg,
							   sizeof(msg), &mlen);
		else
			rc = auth_sess_client_start(&c->s, entity, &key, "mon.", msg, sizeof(msg),
						    &mlen);
		if (rc == 0)
			rc = auth_frame(msg, mlen, fr, sizeof(fr), &flen);
		if (rc == 0)
			rc = send_rec(c->r, rec, fr, flen);
	}
	if (rc != 0)
		return rc;
	p = raw_recv(c->r, &len, PEER_WAIT_MS);
	if (p == NULL || decode(p, len, &hdr, &pm) != 0 || pm.type != PROTO_HELLO ||
	    len > sizeof(c->peer_hello)) {
		free(p);
		snprintf(c->why, sizeof(c->why), "no hello from the monitor");
		return -EPROTO;
	}
	memcpy(c->peer_hello, p, len);
	c->peer_hello_len = len;
	c->gmac = (pm.hello.features & PROTO_FEAT_GMAC) && (h.features & PROTO_FEAT_GMAC);
	free(p);
	return 0;
}

/* A frame from the monitor; an ERROR becomes its status and message. */
static int sess_recv_auth(struct csess *c, struct proto_msg *pm, uint8_t **keep)
{
	struct proto_hdr hdr;
	size_t len;
	uint8_t *p = raw_recv(c->r, &len, PEER_WAIT_MS);

	if (p == NULL) {
		snprintf(c->why, sizeof(c->why), "closed by the monitor");
		return -ECONNRESET;
	}
	if (decode(p, len, &hdr, pm) != 0) {
		free(p);
		snprintf(c->why, sizeof(c->why), "undecodable frame");
		return -EPROTO;
	}
	*keep = p;
	if (pm->type == PROTO_ERROR) {
		snprintf(c->why, sizeof(c->why), "%s", pm->error.msg);
		return pm->error.status < 0 ? pm->error.status : -EACCES;
	}
	return pm->type == PROTO_AUTH ? 0 : -EPROTO;
}

/* CHALLENGE in, PROOF out (recorded); then the session key seals what we send. */
static int sess_handshake(struct csess *c, struct record *rec, uint8_t *proof_frame,
			  size_t *proof_len)
{
	struct auth_sess_conn f = {0};
	uint8_t msg[AUTH_SESS_MSG_MAX], fr[AUTH_SESS_MSG_MAX + 64], *keep = NULL;
	struct proto_msg pm;
	struct proto_err err;
	size_t mlen, flen;
	int rc;

	rc = sess_recv_auth(c, &pm, &keep);
	if (rc != 0) {
		free(keep);
		return rc;
	}
	memcpy(f.fsid, fsid, sizeof(fsid));
	snprintf(f.local_addr, sizeof(f.local_addr), "%s", fab_ep_local_addr(c->r->ep));
	snprintf(f.peer_addr, sizeof(f.peer_addr), "%s", fab_ep_peer_addr(c->r->ep));
	auth_sess_prelude(c->hello, c->hello_len, c->peer_hello, c->peer_hello_len, f.prelude);
	c->s.gmac = c->gmac;
	rc = auth_sess_client_challenge(&c->s, &f, pm.auth.data, pm.auth.len, &err, msg,
					sizeof(msg), &mlen);
	free(keep);
	if (rc != 0) {
		snprintf(c->why, sizeof(c->why), "%s", err.msg);
		return rc;
	}
	rc = auth_frame(msg, mlen, fr, sizeof(fr), &flen);
	if (rc == 0)
		rc = send_rec(c->r, rec, fr, flen);
	if (rc == 0 && proof_frame != NULL) {
		memcpy(proof_frame, fr, flen);
		*proof_len = flen;
	}
	return rc;
}

static int sess_done(struct csess *c)
{
	struct proto_msg pm;
	struct proto_err err;
	uint8_t *keep = NULL;
	int rc = sess_recv_auth(c, &pm, &keep);

	if (rc == 0 && auth_sess_client_done(&c->s, pm.auth.data, pm.auth.len, &err) != 0) {
		snprintf(c->why, sizeof(c->why), "%s", err.msg);
		rc = -EACCES;
	}
	free(keep);
	return rc;
}

/* Encode msg, seal it (flip a MAC bit when asked), send (recorded). */
static int sess_send(struct csess *c, const struct proto_msg *m, uint64_t tid, struct record *rec,
		     bool flip)
{
	uint8_t buf[8192];
	size_t len;
	int rc = frame_of(m, tid, buf, sizeof(buf) - AUTH_SESS_MAC_LEN, &len);

	if (rc == 0 && auth_sess_tx_ready(&c->s)) {
		rc = auth_sess_seal(&c->s, buf, len, buf + len);
		if (flip)
			buf[len + 5] ^= 0x08;
		len += AUTH_SESS_MAC_LEN;
	}
	return rc != 0 ? rc : send_rec(c->r, rec, buf, len);
}

/* The blob of the last AUTH_TICKET_REPLY / AUTH_SVC_KEYS_REPLY (a grant, the sealed keys). */
static uint8_t reply_blob[PROTO_AUTH_GRANT_MAX];
static size_t reply_blob_len;

/* The next frame, its MAC checked when the session is open: the reply to tid, or an error. */
static int sess_reply(struct csess *c, uint64_t tid, int *status_out, char *msg, size_t cap)
{
	uint64_t deadline = clock_now_ms() + PEER_WAIT_MS;

	while (clock_now_ms() < deadline) {
		struct proto_hdr hdr;
		struct proto_msg pm;
		size_t len;
		uint8_t *p = raw_recv(c->r, &len, 200);

		if (p == NULL) {
			if (c->r->closed) {
				snprintf(c->why, sizeof(c->why), "closed by the monitor");
				return -ECONNRESET;
			}
			continue;
		}
		if (auth_sess_open(&c->s)) {
			if (len < AUTH_SESS_MAC_LEN ||
			    auth_sess_verify(&c->s, p, len - AUTH_SESS_MAC_LEN,
					     p + len - AUTH_SESS_MAC_LEN) != 0) {
				free(p);
				snprintf(c->why, sizeof(c->why),
					 "the monitor's frame fails its MAC");
				return -EACCES;
			}
			len -= AUTH_SESS_MAC_LEN;
		}
		if (decode(p, len, &hdr, &pm) != 0) {
			free(p);
			return -EPROTO;
		}
		if (pm.type == PROTO_ERROR) {
			snprintf(c->why, sizeof(c->why), "%s", pm.error.msg);
			free(p);
			return pm.error.status;
		}
		if (pm.type == PROTO_BULK && want_bulk) {
			last_bulk = pm.bulk;
			free(p);
			return 1; /* the reply, too big for a frame: its key */
		}
		if (pm.type == PROTO_MON_CMD_REPLY && hdr.tid == tid) {
			*status_out = pm.mon_cmd_reply.status;
			snprintf(msg, cap, "%s", pm.mon_cmd_reply.msg);
			free(p);
			return 0;
		}
		if ((pm.type == PROTO_AUTH_TICKET_REPLY || pm.type == PROTO_AUTH_SVC_KEYS_REPLY) &&
		    hdr.tid == tid) {
			*status_out = pm.auth_ticket_reply.status;
			snprintf(msg, cap, "%s", pm.auth_ticket_reply.msg);
			reply_blob_len = pm.auth_ticket_reply.blob_len;
			if (reply_blob_len > 0)
				memcpy(reply_blob, pm.auth_ticket_reply.blob, reply_blob_len);
			free(p);
			return 0;
		}
		free(p); /* maps and the like */
	}
	snprintf(c->why, sizeof(c->why), "no reply");
	return -ETIMEDOUT;
}

static const char *local_of(const struct raw *r)
{
	return r->ep != NULL ? fab_ep_local_addr(r->ep) : "?";
}

static char bind_addr[64];

static const char *bind_local(void)
{
	if (bind_ip == NULL)
		return NULL;
	snprintf(bind_addr, sizeof(bind_addr), "%s:0", bind_ip);
	return bind_addr;
}

/* An honest session: handshake, then msg; the reply's status in *status_out. */
static int honest(struct raw *r, struct csess *c, const char *mon, const struct proto_msg *m,
		  struct record *rec, int *status_out, char *rmsg, size_t cap)
{
	int rc;

	memset(c, 0, sizeof(*c));
	c->r = r;
	rc = raw_connect(r, mon, bind_local());
	if (rc != 0) {
		snprintf(c->why, sizeof(c->why), "connect: %s", strerror(-rc));
		return rc;
	}
	rc = sess_hellos(c, entity, rec, true);
	if (rc == 0)
		rc = sess_handshake(c, rec, NULL, NULL);
	if (rc == 0)
		rc = sess_send(c, m, 7, rec, false);
	if (rc == 0)
		rc = sess_done(c);
	if (rc == 0)
		rc = sess_reply(c, 7, status_out, rmsg, cap);
	return rc;
}

static void cmd_msg(struct proto_msg *m, const char *json)
{
	memset(m, 0, sizeof(*m));
	m->type = PROTO_MON_CMD;
	m->mon_cmd.json = json;
	m->mon_cmd.json_len = (uint32_t)strlen(json);
}

/* ------------------------------------------------------------------ modes */

static int mode_cmd(const char *mon, const char *json)
{
	struct proto_msg m;
	struct raw r;
	struct csess c;
	char rmsg[PROTO_ERRMSG_MAX + 1] = "";
	int status = 0, rc;

	cmd_msg(&m, json);
	rc = honest(&r, &c, mon, &m, NULL, &status, rmsg, sizeof(rmsg));
	printf("result: %s local %s status %d msg '%s'\n", rc == 0 ? "answered" : "refused",
	       local_of(&r), rc == 0 ? status : rc, rc == 0 ? rmsg : c.why);
	raw_close(&r);
	auth_sess_clear(&c.s);
	return rc == 0 ? (status == 0 ? 0 : 3) : 1;
}

/* One-sided read of the monitor's bulk buffer with key into buf; the completion's status. */
static int bulk_read(struct raw *r, const struct proto_bulk *bk, void *buf, struct fab_mr *mr)
{
	struct fab_rkey k = {bk->rkey.addr, bk->rkey.len, bk->rkey.key};
	struct fab_sge sge = {buf, bk->len, mr};
	uint64_t deadline = clock_now_ms() + PEER_WAIT_MS;
	unsigned int before = reads_done;
	int rc = fab_read(r->ep, &sge, &k, 0, NULL);

	if (rc != 0)
		return rc;
	while (reads_done == before && !r->closed && clock_now_ms() < deadline)
		pump(5);
	return reads_done != before ? read_status : -ETIMEDOUT;
}

static int mode_stalebulk(const char *mon, const char *json)
{
	struct proto_msg m, done = {.type = PROTO_BULK_DONE};
	struct fab_mr *mr = NULL;
	struct raw r;
	struct csess c;
	char rmsg[PROTO_ERRMSG_MAX + 1] = "";
	int status = 0, rc, first = -1, stale = -1, served = -1;
	uint8_t *buf = NULL;

	cmd_msg(&m, json);
	want_bulk = true;
	rc = honest(&r, &c, mon, &m, NULL, &status, rmsg, sizeof(rmsg));
	want_bulk = false;
	if (rc != 1) {
		printf("result: no bulk reply local %s: %s\n", local_of(&r),
		       rc == 0 ? "answered in one frame (make the reply larger)" : c.why);
		goto out;
	}
	buf = malloc(last_bulk.len);
	if (buf == NULL || fab_mr_reg(dom, buf, last_bulk.len, FAB_ACCESS_LOCAL, &mr) != 0)
		goto out;
	first = bulk_read(&r, &last_bulk, buf, mr);
	done.bulk_done.id = last_bulk.id;
	if (first == 0 && sess_send(&c, &done, 0, NULL, false) == 0) {
		pump(300); /* the monitor takes the BULK_DONE and drops the buffer with its key */
		memset(buf, 0, last_bulk.len);
		stale = bulk_read(&r, &last_bulk, buf, mr);
		cmd_msg(&m, "{\"prefix\": \"health\"}");
		served = sess_send(&c, &m, 9, NULL, false);
		if (served == 0)
			served = sess_reply(&c, 9, &status, rmsg, sizeof(rmsg));
	}
	printf("result: %s local %s: bulk of %u bytes read (%d), the same key after BULK_DONE: "
	       "%s (%d); the connection %s\n",
	       stale == -EACCES ? "refused" : "NOT refused", local_of(&r), last_bulk.len, first,
	       stale == 0 ? "read" : strerror(-stale), stale,
	       served == 0 ? "still served" : "was not served after");
	for (uint32_t i = 0; stale == 0 && i < last_bulk.len; i++)
		if (buf[i] != 0) {
			printf("result: the stale key returned the monitor's bytes\n");
			break;
		}
out:
	if (mr != NULL)
		fab_mr_dereg(mr);
	free(buf);
	raw_close(&r);
	auth_sess_clear(&c.s);
	return first == 0 && stale == -EACCES && served == 0 ? 0 : 1;
}

/* Tickets carry wall-clock times (auth/ticket.h). */
static uint64_t wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int mode_ticket(const char *mon)
{
	struct proto_msg m = {.type = PROTO_AUTH_TICKET};
	struct auth_ticket_holder h = {0};
	struct proto_err err = {""};
	struct auth_key seal;
	struct raw r;
	struct csess c;
	char rmsg[PROTO_ERRMSG_MAX + 1] = "";
	int status = 0, rc;
	uint64_t now;

	m.auth_ticket.service = PROTO_AUTH_SVC_OSD;
	rc = honest(&r, &c, mon, &m, NULL, &status, rmsg, sizeof(rmsg));
	if (rc != 0 || status != 0) {
		printf("result: refused local %s status %d msg '%s'\n", local_of(&r),
		       rc == 0 ? status : rc, rc == 0 ? rmsg : c.why);
		raw_close(&r);
		auth_sess_clear(&c.s);
		return rc == 0 ? 3 : 1;
	}
	now = wall_us();
	rc = auth_sess_seal_key(&c.s, &seal);
	if (rc == 0)
		rc = auth_ticket_holder_take(&h, &seal, reply_blob, reply_blob_len, now, &err);
	if (rc == 0)
		printf("result: ticket local %s: %u bytes, expires in %llu s\n", local_of(&r),
		       h.ticket_len, (unsigned long long)((h.expires_us - now) / 1000000));
	else
		printf("result: the grant does not open local %s: %s\n", local_of(&r),
		       err.msg[0] != '\0' ? err.msg : strerror(-rc));
	auth_key_wipe(&seal);
	auth_ticket_holder_clear(&h);
	raw_close(&r);
	auth_sess_clear(&c.s);
	return rc == 0 ? 0 : 1;
}

static int mode_osdticket(const char *mon, const char *osd, bool ring)
{
	struct proto_msg m = {.type = PROTO_AUTH_TICKET}, ping = {.type = PROTO_PING};

	if (ring) { /* a ring: 32 MiB of registered memory and writes into a replica */
		ping.type = PROTO_REPL_RING_REQ;
		ping.repl_ring_req.osd_id = 0;
	}
	struct auth_ticket_holder h = {0};
	struct proto_err err = {""};
	struct auth_key seal;
	struct raw r, r2 = {0};
	struct csess c, c2 = {0};
	char rmsg[PROTO_ERRMSG_MAX + 1] = "";
	int status = 0, rc, out = 1;
	bool closed = false, pong = false;
	uint64_t deadline;

	m.auth_ticket.service = PROTO_AUTH_SVC_OSD;
	rc = honest(&r, &c, mon, &m, NULL, &status, rmsg, sizeof(rmsg));
	if (rc == 0 && status == 0)
		rc = auth_sess_seal_key(&c.s, &seal);
	else
		rc = rc != 0 ? rc : status;
	if (rc == 0) {
		rc = auth_ticket_holder_take(&h, &seal, reply_blob, reply_blob_len, wall_us(), &err);
		auth_key_wipe(&seal);
	}
	raw_close(&r);
	auth_sess_clear(&c.s);
	if (rc != 0) {
		printf("result: no ticket: %s %s\n", strerror(-rc), err.msg);
		return 1;
	}
	hello_ticket = &h;
	c2.r = &r2;
	rc = raw_connect(&r2, osd, bind_local());
	if (rc == 0)
		rc = sess_hellos(&c2, entity, NULL, true);
	if (rc == 0)
		rc = sess_handshake(&c2, NULL, NULL, NULL);
	if (rc == 0)
		rc = sess_send(&c2, &ping, 9, NULL, false);
	if (rc == 0)
		rc = sess_done(&c2); /* the OSD proved it holds the service keys */
	hello_ticket = NULL;
	if (rc != 0) {
		printf("result: the ticket handshake failed local %s: %s\n", local_of(&r2), c2.why);
		goto done;
	}
	deadline = clock_now_ms() + PEER_WAIT_MS;
	while (!closed && !pong && clock_now_ms() < deadline) {
		struct proto_hdr hdr;
		struct proto_msg pm;
		size_t len;
		uint8_t *p = raw_recv(&r2, &len, 200);

		if (p == NULL) {
			closed = r2.closed;
			continue;
		}
		if (len > AUTH_SESS_MAC_LEN && decode(p, len - AUTH_SESS_MAC_LEN, &hdr, &pm) == 0 &&
		    (pm.type == PROTO_PONG || pm.type == PROTO_REPL_RING_GRANT))
			pong = true;
		free(p);
	}
	printf("result: %s local %s\n",
	       pong ? "answered" : closed ? "closed after the handshake" : "no answer", local_of(&r2));
	out = closed && !pong ? 0 : 1;
done:
	raw_close(&r2);
	auth_sess_clear(&c2.s);
	auth_ticket_holder_clear(&h);
	return out;
}

static int mode_nokey(const char *mon, const char *json)
{
	struct proto_msg m;
	struct raw r;
	struct csess c = {0};
	char rmsg[PROTO_ERRMSG_MAX + 1];
	int status = 0, rc;

	cmd_msg(&m, json);
	c.r = &r;
	rc = raw_connect(&r, mon, bind_local());
	if (rc == 0)
		rc = sess_hellos(&c, entity, NULL, false);
	if (rc == 0)
		rc = sess_send(&c, &m, 7, NULL, false);
	if (rc == 0)
		rc = sess_reply(&c, 7, &status, rmsg, sizeof(rmsg));
	printf("result: %s local %s status %d msg '%s'\n", rc == 0 ? "answered" : "refused",
	       local_of(&r), rc, rc == 0 ? rmsg : c.why);
	/* refused: an ERROR naming the requirement, then the monitor closes */
	rc = rc == -EACCES && strstr(c.why, "requires authentication") != NULL &&
		     raw_wait_closed(&r, 5000)
		 ? 0
		 : 1;
	raw_close(&r);
	return rc;
}

static int mode_replay(const char *mon, const char *json)
{
	char rmsg[PROTO_ERRMSG_MAX + 1] = "", local[64];
	struct record rec = {0};
	struct proto_msg m;
	struct raw r, r2;
	struct csess c;
	int status = -1, rc, out = 1;
	unsigned int i;
	size_t len;
	uint8_t *p;

	cmd_msg(&m, json);
	rc = honest(&r, &c, mon, &m, &rec, &status, rmsg, sizeof(rmsg));
	if (rc != 0 || status != 0 || rec.n != 4) {
		printf("result: the recorded session failed: %d %s\n", rc, c.why);
		goto out;
	}
	snprintf(local, sizeof(local), "%s", local_of(&r));
	printf("recorded: %u frames from %s\n", rec.n, local);
	fflush(stdout);
	/*
	 * End it with a frame the monitor must drop: it closes first, so the
	 * TIME_WAIT is its own and our address is free to dial from again.
	 */
	if (sess_send(&c, &m, 8, NULL, true) == 0)
		raw_wait_closed(&r, 5000);
	raw_close(&r);
	auth_sess_clear(&c.s);
	/* PEER_GO=FILE: wait (20 s at most) for FILE before replaying (the test resets state first)
	 */
	if (getenv("PEER_GO") != NULL) {
		uint64_t until = clock_now_ms() + 20000;

		while (access(getenv("PEER_GO"), F_OK) != 0 && clock_now_ms() < until)
			pump(50);
	}
	pump(100);
	/* The same address if the kernel lets us have it again; else the next port. */
	if (raw_connect(&r2, mon, local) != 0) {
		raw_close(&r2);
		if (raw_connect(&r2, mon, bind_local()) != 0) {
			printf("result: cannot connect for the replay\n");
			goto out;
		}
	}
	/* hello and AUTH(HELLO), the server's hello and CHALLENGE, then PROOF and the command */
	raw_send(&r2, rec.f[0], rec.len[0]);
	raw_send(&r2, rec.f[1], rec.len[1]);
	for (i = 0; i < 2 && (p = raw_recv(&r2, &len, PEER_WAIT_MS)) != NULL; i++)
		free(p);
	raw_send(&r2, rec.f[2], rec.len[2]);
	raw_send(&r2, rec.f[3], rec.len[3]);
	/* refused: an ERROR (never a DONE or a reply), then closed */
	p = raw_recv(&r2, &len, PEER_WAIT_MS);
	if (p != NULL) {
		struct proto_hdr hdr;
		struct proto_msg pm;

		if (decode(p, len, &hdr, &pm) == 0 && pm.type == PROTO_ERROR &&
		    pm.error.status == -EACCES && raw_wait_closed(&r2, 5000))
			out = 0;
		printf("result: replay from %s (recorded from %s): %s '%s'\n", local_of(&r2), local,
		       out == 0 ? "refused" : "NOT REFUSED",
		       pm.type == PROTO_ERROR ? pm.error.msg : proto_type_name(pm.type));
		free(p);
	} else {
		printf("result: replay from %s: no answer\n", local_of(&r2));
	}
	raw_close(&r2);
out:
	for (i = 0; i < rec.n; i++)
		free(rec.f[i]);
	return out;
}

static int mode_tamper(const char *mon, const char *json)
{
	char rmsg[PROTO_ERRMSG_MAX + 1] = "";
	struct proto_msg m;
	struct raw r;
	struct csess c;
	int status = -1, rc, out = 1;

	cmd_msg(&m, json);
	rc = honest(&r, &c, mon, &m, NULL, &status, rmsg, sizeof(rmsg));
	if (rc != 0 || status != 0) {
		printf("result: the honest part failed: %d %s\n", rc, c.why);
		goto out;
	}
	rc = sess_send(&c, &m, 8, NULL, true);
	rc = rc == 0 ? sess_reply(&c, 8, &status, rmsg, sizeof(rmsg)) : rc;
	/* dropped and closed: no answer, the connection gone */
	if (rc == -ECONNRESET && r.closed)
		out = 0;
	printf("result: tampered frame from %s: %s (%d %s)\n", local_of(&r),
	       out == 0 ? "dropped, connection closed" : "NOT REFUSED", rc, c.why);
out:
	raw_close(&r);
	auth_sess_clear(&c.s);
	return out;
}

static int mode_boot(const char *mon, uint32_t id)
{
	char rmsg[PROTO_ERRMSG_MAX + 1] = "";
	struct proto_msg m = {.type = PROTO_OSD_BOOT};
	struct raw r;
	struct csess c;
	int status = 0, rc;

	for (int i = 0; i < PROTO_UUID_LEN; i++)
		m.osd_boot.uuid[i] = (uint8_t)(0x40 + i);
	m.osd_boot.want_id = id;
	snprintf(m.osd_boot.host, sizeof(m.osd_boot.host), "evilhost");
	m.osd_boot.host_len = strlen(m.osd_boot.host);
	snprintf(m.osd_boot.public_addr, sizeof(m.osd_boot.public_addr), "127.1.0.99:6800");
	m.osd_boot.public_addr_len = strlen(m.osd_boot.public_addr);
	rc = honest(&r, &c, mon, &m, NULL, &status, rmsg, sizeof(rmsg));
	printf("result: boot as osd.%u from %s as %s: status %d '%s'\n", id, local_of(&r), entity,
	       rc == 0 ? status : rc, rc == 0 ? rmsg : c.why);
	raw_close(&r);
	auth_sess_clear(&c.s);
	return rc == 0 && status == -EACCES && strstr(rmsg, "permission denied") ? 0 : 1;
}

static int mode_report(const char *mon, uint32_t reporter, uint32_t target)
{
	char rmsg[PROTO_ERRMSG_MAX + 1] = "";
	struct proto_msg m, f = {.type = PROTO_OSD_FAILURE};
	struct raw r;
	struct csess c;
	int status = -1, rc, out = 1;

	cmd_msg(&m, "{\"prefix\": \"status\"}");
	rc = honest(&r, &c, mon, &m, NULL, &status, rmsg, sizeof(rmsg));
	if (rc != 0 || status != 0) {
		printf("result: the honest part failed: %d %s\n", rc, c.why);
		goto out;
	}
	f.osd_failure.target = target;
	f.osd_failure.reporter = reporter;
	f.osd_failure.failed_ms = 5000;
	rc = sess_send(&c, &f, 0, NULL, false);
	/* the same report again, and a status: the monitor must have closed the session */
	if (rc == 0)
		rc = sess_send(&c, &f, 0, NULL, false);
	if (rc == 0)
		rc = sess_send(&c, &m, 9, NULL, false);
	rc = rc == 0 ? sess_reply(&c, 9, &status, rmsg, sizeof(rmsg)) : rc;
	if ((rc == -ECONNRESET || rc == -ENOTCONN) && raw_wait_closed(&r, 3000))
		out = 0;
	printf("result: failure report osd.%u -> osd.%u from %s as %s: %s (%d %s)\n", reporter,
	       target, local_of(&r), entity, out == 0 ? "connection closed" : "NOT REFUSED", rc,
	       c.why);
out:
	raw_close(&r);
	auth_sess_clear(&c.s);
	return out;
}

static int mode_hold(const char *mon, double secs)
{
	char rmsg[PROTO_ERRMSG_MAX + 1] = "";
	uint64_t start = clock_now_ms(), t = start;
	struct proto_msg m;
	struct raw r;
	struct csess c;
	int status = -1, rc;
	uint64_t tid = 20;

	cmd_msg(&m, "{\"prefix\": \"status\"}");
	rc = honest(&r, &c, mon, &m, NULL, &status, rmsg, sizeof(rmsg));
	if (rc != 0 || status != 0) {
		printf("result: the session did not open: %d %s\n", rc, c.why);
		raw_close(&r);
		return 1;
	}
	printf("open: local %s\n", local_of(&r));
	fflush(stdout);
	while (rc == 0 && (t = clock_now_ms()) - start < secs * 1000) {
		rc = sess_send(&c, &m, ++tid, NULL, false);
		if (rc == 0)
			rc = sess_reply(&c, tid, &status, rmsg, sizeof(rmsg));
		pump(500);
	}
	printf("result: session %s after %.1f s (%d %s)\n", rc == 0 ? "still open" : "closed",
	       (double)(t - start) / 1000, rc, rc == 0 ? "" : c.why);
	raw_close(&r);
	auth_sess_clear(&c.s);
	return rc == 0 ? 0 : 4;
}

/* -------------------------------------------------------------------- rtt */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* p50 and p99 of v[n] in microseconds, as "p50 X p99 Y". */
static void pct(uint64_t *v, int n, double *p50, double *p99)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	*p50 = (double)v[n / 2] / 1000.0;
	*p99 = (double)v[(n * 99) / 100] / 1000.0;
}

/* One connection: handshake when we have a key; the first PONG's time from connect (ns). */
static int rtt_open(struct raw *r, struct csess *c, const char *mon, bool auth, uint64_t *ns)
{
	struct proto_msg ping = {.type = PROTO_PING};
	uint64_t t0 = clock_now_ns();
	int rc;

	memset(c, 0, sizeof(*c));
	c->r = r;
	rc = raw_connect(r, mon, bind_local());
	if (rc == 0)
		rc = sess_hellos(c, entity, NULL, auth);
	if (rc == 0 && auth)
		rc = sess_handshake(c, NULL, NULL, NULL);
	if (rc == 0)
		rc = sess_send(c, &ping, 1, NULL, false);
	if (rc == 0 && auth)
		rc = sess_done(c);
	/* the PONG: a reply to tid 1 that sess_reply does not know, so wait for it here */
	while (rc == 0) {
		struct proto_hdr hdr;
		struct proto_msg pm;
		size_t len;
		uint8_t *p = raw_recv(r, &len, PEER_WAIT_MS);

		if (p == NULL) {
			rc = -ETIMEDOUT;
			break;
		}
		if (auth_sess_open(&c->s)) {
			rc = auth_sess_verify(&c->s, p, len - AUTH_SESS_MAC_LEN,
					      p + len - AUTH_SESS_MAC_LEN);
			len -= AUTH_SESS_MAC_LEN;
		}
		if (rc == 0 && decode(p, len, &hdr, &pm) == 0 && pm.type == PROTO_PONG) {
			free(p);
			break;
		}
		free(p);
	}
	*ns = clock_now_ns() - t0;
	return rc;
}

/* The next PONG or MON_CMD_REPLY for tid (MAC checked when open). */
static int rtt_wait(struct csess *c, uint16_t type, uint64_t tid)
{
	uint64_t deadline = clock_now_ms() + PEER_WAIT_MS;

	while (clock_now_ms() < deadline) {
		struct proto_hdr hdr;
		struct proto_msg pm;
		size_t len;
		uint8_t *p = raw_recv(c->r, &len, PEER_WAIT_MS);

		if (p == NULL)
			return -ETIMEDOUT;
		if (auth_sess_open(&c->s)) {
			if (auth_sess_verify(&c->s, p, len - AUTH_SESS_MAC_LEN,
					     p + len - AUTH_SESS_MAC_LEN) != 0) {
				free(p);
				return -EACCES;
			}
			len -= AUTH_SESS_MAC_LEN;
		}
		if (decode(p, len, &hdr, &pm) == 0 && pm.type == type && hdr.tid == tid) {
			free(p);
			return 0;
		}
		free(p);
	}
	return -ETIMEDOUT;
}

static int mode_rtt(const char *mon, int n, bool auth)
{
	uint64_t *conn = calloc((size_t)n, sizeof(uint64_t)), *ping = calloc((size_t)n, 8),
		 *cmd = calloc((size_t)n, 8);
	struct proto_msg pm = {.type = PROTO_PING}, cm;
	double c50, c99, p50, p99, m50, m99;
	struct raw r;
	struct csess c;
	int rc = 0, i;

	if (conn == NULL || ping == NULL || cmd == NULL)
		return 1;
	cmd_msg(&cm, "{\"prefix\": \"mon stat\"}");
	for (i = 0; i < n && rc == 0; i++) {
		rc = rtt_open(&r, &c, mon, auth, &conn[i]);
		raw_close(&r);
		auth_sess_clear(&c.s);
		pump(1);
	}
	if (rc == 0)
		rc = rtt_open(&r, &c, mon, auth, &conn[0]);
	for (i = 0; i < n && rc == 0; i++) {
		uint64_t t0 = clock_now_ns();

		pm.ping.seq = (uint64_t)i;
		rc = sess_send(&c, &pm, 1000 + (uint64_t)i, NULL, false);
		if (rc == 0)
			rc = rtt_wait(&c, PROTO_PONG, 1000 + (uint64_t)i);
		ping[i] = clock_now_ns() - t0;
	}
	for (i = 0; i < n && rc == 0; i++) {
		uint64_t t0 = clock_now_ns();

		rc = sess_send(&c, &cm, 100000 + (uint64_t)i, NULL, false);
		if (rc == 0)
			rc = rtt_wait(&c, PROTO_MON_CMD_REPLY, 100000 + (uint64_t)i);
		cmd[i] = clock_now_ns() - t0;
	}
	raw_close(&r);
	auth_sess_clear(&c.s);
	if (rc != 0) {
		printf("result: rtt failed: %s (%s)\n", strerror(-rc), c.why);
		return 1;
	}
	pct(conn, n, &c50, &c99);
	pct(ping, n, &p50, &p99);
	pct(cmd, n, &m50, &m99);
	printf("{\"auth\": %s, \"n\": %d, \"connect_us_p50\": %.1f, \"connect_us_p99\": %.1f, "
	       "\"ping_us_p50\": %.1f, \"ping_us_p99\": %.1f, \"mon_stat_us_p50\": %.1f, "
	       "\"mon_stat_us_p99\": %.1f}\n",
	       auth ? "true" : "false", n, c50, c99, p50, p99, m50, m99);
	free(conn);
	free(ping);
	free(cmd);
	return 0;
}

/* An open pair of sessions in process; then seal + verify per frame size. */
static int mode_macbench(int n, bool gmac)
{
	static const size_t sizes[] = {64, 256, 1024, 8192};
	struct auth_sess c, s;
	struct auth_sess_conn f = {0};
	struct auth_sess_keys k = {0};
	struct proto_err err;
	uint8_t a[AUTH_SESS_MSG_MAX], b[AUTH_SESS_MSG_MAX], frame[8192], mac[AUTH_SESS_MAC_LEN];
	size_t alen, blen;

	auth_random(k.key[0].b, AUTH_KEY_LEN);
	k.nkeys = 1;
	snprintf(f.local_addr, sizeof(f.local_addr), "127.0.0.1:1");
	snprintf(f.peer_addr, sizeof(f.peer_addr), "127.0.0.1:1");
	if (auth_sess_client_start(&c, "client.admin", &k.key[0], "mon.", a, sizeof(a), &alen) ||
	    auth_sess_server_hello(&s, a, alen, &err) ||
	    auth_sess_server_challenge(&s, "mon.", &f, &k, &err, b, sizeof(b), &blen) ||
	    (c.gmac = s.gmac = gmac, false) ||
	    auth_sess_client_challenge(&c, &f, b, blen, &err, a, sizeof(a), &alen) ||
	    auth_sess_server_proof(&s, a, alen, &err, b, sizeof(b), &blen) ||
	    auth_sess_client_done(&c, b, blen, &err))
		return 1;
	memset(frame, 0x42, sizeof(frame));
	printf("{");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t t0 = clock_now_ns();

		for (int j = 0; j < n; j++)
			if (auth_sess_seal(&c, frame, sizes[i], mac) ||
			    auth_sess_verify(&s, frame, sizes[i], mac))
				return 1;
		printf("%s\"seal_verify_%zu_us\": %.3f", i ? ", " : "", sizes[i],
		       (double)(clock_now_ns() - t0) / 1000.0 / n);
	}
	printf("}\n");
	auth_sess_clear(&c);
	auth_sess_clear(&s);
	return 0;
}

/* ---------------------------------------------------------------- fakemon */

/* Relay one message each way as it comes, until either side closes. */
static void relay(struct raw *cl, struct raw *up, uint64_t deadline)
{
	while (!cl->closed && !up->closed && clock_now_ms() < deadline) {
		size_t len;
		uint8_t *p;

		pump(5);
		while (cl->n > 0 && (p = raw_recv(cl, &len, 0)) != NULL) {
			raw_send(up, p, len);
			free(p);
		}
		while (up->n > 0 && (p = raw_recv(up, &len, 0)) != NULL) {
			raw_send(cl, p, len);
			free(p);
		}
	}
	/* what is left in flight, then both gone */
	pump(50);
}

static int fake_one(struct raw *cl, const char *mode, const char *realmon, uint64_t deadline)
{
	uint8_t hello[512], msg[AUTH_SESS_MSG_MAX], fr[AUTH_SESS_MSG_MAX + 64], *p;
	struct proto_hello h;
	struct auth_hs_hello ah;
	struct auth_hs_challenge ch;
	struct proto_enc enc;
	struct proto_err err;
	struct proto_hdr hdr;
	struct proto_msg pm;
	size_t len, flen, mlen;
	int outcome = 0;

	if (!strcmp(mode, "relay")) {
		struct raw up;

		if (raw_connect(&up, realmon, NULL) != 0) {
			printf("fakemon: cannot reach %s\n", realmon);
			return 0;
		}
		printf("fakemon: relaying %s <-> %s (as %s)\n", fab_ep_peer_addr(cl->ep), realmon,
		       fab_ep_local_addr(up.ep));
		relay(cl, &up, deadline);
		raw_close(&up);
		return 1;
	}
	proto_hello_init(&h, "mon.fake");
	if (proto_hello_frame(&h, hello, sizeof(hello), &len) != 0 || raw_send(cl, hello, len))
		return 0;
	/* their hello, then their AUTH(HELLO) */
	p = raw_recv(cl, &len, PEER_WAIT_MS);
	free(p);
	p = raw_recv(cl, &len, PEER_WAIT_MS);
	if (p == NULL || decode(p, len, &hdr, &pm) != 0 || pm.type != PROTO_AUTH ||
	    auth_hs_hello_decode(pm.auth.data, pm.auth.len, &err, &ah) != 0) {
		free(p);
		return 0;
	}
	free(p);
	snprintf(ch.server, sizeof(ch.server), "%s", ah.server);
	if (!strcmp(mode, "reflect-nonce"))
		memcpy(ch.nonce_s, ah.nonce_c, AUTH_NONCE_LEN);
	else
		auth_random(ch.nonce_s, AUTH_NONCE_LEN);
	proto_enc_init(&enc, msg, sizeof(msg));
	auth_hs_challenge_encode(&enc, &ch);
	if (proto_enc_finish(&enc, &mlen) != 0 || auth_frame(msg, mlen, fr, sizeof(fr), &flen) ||
	    raw_send(cl, fr, flen))
		return 0;
	if (!strcmp(mode, "reflect-proof")) {
		/* their PROOF, returned as our DONE: the same MAC under another label */
		p = raw_recv(cl, &len, PEER_WAIT_MS);
		if (p == NULL || decode(p, len, &hdr, &pm) != 0 || pm.type != PROTO_AUTH ||
		    pm.auth.len < 1) {
			free(p);
			printf("fakemon: no proof (the client refused the challenge)\n");
			return 0;
		}
		memcpy(msg, pm.auth.data, pm.auth.len);
		msg[0] = AUTH_HS_DONE;
		if (auth_frame(msg, pm.auth.len, fr, sizeof(fr), &flen) == 0)
			raw_send(cl, fr, flen);
		free(p);
	}
	/* A correct client closes on us without another handshake message. */
	outcome = raw_wait_closed(cl, PEER_WAIT_MS) ? 1 : 0;
	printf("fakemon: %s: the client %s\n", mode,
	       outcome ? "closed the connection" : "stayed connected");
	return outcome;
}

static int mode_fakemon(const char *listen, const char *mode, const char *realmon, double secs)
{
	uint64_t deadline = clock_now_ms() + (uint64_t)(secs * 1000);
	int conns = 0, closed = 0, rc;

	rc = fab_listen(dom, listen, NULL, &lis);
	if (rc != 0) {
		printf("result: listen %s: %s\n", listen, strerror(-rc));
		return 1;
	}
	printf("fakemon: listening on %s (%s)\n", listen, mode);
	fflush(stdout);
	while (clock_now_ms() < deadline) {
		struct raw *cl;

		pump(20);
		if (accepted == NULL)
			continue;
		cl = accepted;
		accepted = NULL;
		conns++;
		closed += fake_one(cl, mode, realmon, deadline);
		raw_close(cl);
		free(cl);
		fflush(stdout);
	}
	printf("result: fakemon %s: %d connections, %d ended by the client\n", mode, conns, closed);
	return conns > 0 && closed == conns ? 0 : 1;
}

/* ------------------------------------------------------------------- main */

static int usage(void)
{
	fprintf(stderr, "usage: auth_peer -c CONF [-k KEYRING -n ENTITY] [-b IP] MODE ARGS "
			"(see tests/auth_peer.c)\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *conf_file = NULL, *keyring = NULL, *mode;
	struct fab_domain_attr attr;
	struct conf *conf = NULL;
	int opt, rc = 2;

	while ((opt = getopt(argc, argv, "c:k:n:b:")) != -1) {
		switch (opt) {
		case 'c':
			conf_file = optarg;
			break;
		case 'k':
			keyring = optarg;
			break;
		case 'n':
			snprintf(entity, sizeof(entity), "%s", optarg);
			break;
		case 'b':
			bind_ip = optarg;
			break;
		default:
			return usage();
		}
	}
	if (conf_file == NULL || optind >= argc)
		return usage();
	mode = argv[optind++];
	weft_log_open("auth_peer", WEFT_LOG_ERROR, NULL);
	if (conf_create(entity, &conf) != 0 || conf_load_file(conf, conf_file) != 0 ||
	    auth_fsid_parse(conf_get_str(conf, CONF_FSID), fsid) != 0)
		goto out;
	if (keyring != NULL) {
		struct auth_keyring kr;
		const struct auth_keyring_entry *e;
		char err[512];

		auth_keyring_init(&kr);
		if (auth_keyring_load(&kr, keyring, err, sizeof(err)) != 0 ||
		    (e = auth_keyring_find(&kr, entity)) == NULL) {
			fprintf(stderr, "auth_peer: no key for %s in %s\n", entity, keyring);
			auth_keyring_free(&kr);
			goto out;
		}
		key = e->key;
		auth_keyring_free(&kr);
	}
	/* the conf's transport (ms_type: verbs in the Soft-RoCE VM), as the daemons' */
	fab_domain_attr_init(&attr);
	fab_domain_attr_from_conf(&attr, conf);
	attr.name = entity;
	if (fab_domain_open(&attr, &dom) != 0)
		goto out;
	rc = 2;
	if (!strcmp(mode, "cmd") && argc - optind == 2)
		rc = mode_cmd(argv[optind], argv[optind + 1]);
	else if (!strcmp(mode, "nokey") && argc - optind == 2)
		rc = mode_nokey(argv[optind], argv[optind + 1]);
	else if (!strcmp(mode, "replay") && argc - optind == 2)
		rc = mode_replay(argv[optind], argv[optind + 1]);
	else if (!strcmp(mode, "tamper") && argc - optind == 2)
		rc = mode_tamper(argv[optind], argv[optind + 1]);
	else if (!strcmp(mode, "ticket") && argc - optind == 1)
		rc = mode_ticket(argv[optind]);
	else if (!strcmp(mode, "osdticket") && argc - optind == 2)
		rc = mode_osdticket(argv[optind], argv[optind + 1], false);
	else if (!strcmp(mode, "osdticket") && argc - optind == 3 && !strcmp(argv[optind + 2], "ring"))
		rc = mode_osdticket(argv[optind], argv[optind + 1], true);
	else if (!strcmp(mode, "boot") && argc - optind == 2)
		rc = mode_boot(argv[optind], (uint32_t)strtoul(argv[optind + 1], NULL, 10));
	else if (!strcmp(mode, "report") && argc - optind == 3)
		rc = mode_report(argv[optind], (uint32_t)strtoul(argv[optind + 1], NULL, 10),
				 (uint32_t)strtoul(argv[optind + 2], NULL, 10));
	else if (!strcmp(mode, "macbench") && (argc - optind == 1 || argc - optind == 2))
		rc = mode_macbench(atoi(argv[optind]),
				   argc - optind == 2 && !strcmp(argv[optind + 1], "gmac"));
	else if (!strcmp(mode, "rtt") && argc - optind == 2)
		rc = mode_rtt(argv[optind], atoi(argv[optind + 1]), keyring != NULL);
	else if (!strcmp(mode, "hold") && argc - optind == 2)
		rc = mode_hold(argv[optind], strtod(argv[optind + 1], NULL));
	else if (!strcmp(mode, "stalebulk") && argc - optind == 2)
		rc = mode_stalebulk(argv[optind], argv[optind + 1]);
	else if (!strcmp(mode, "fakemon") && argc - optind == 3)
		rc = mode_fakemon(argv[optind], argv[optind + 1], NULL,
				  strtod(argv[optind + 2], NULL));
	else if (!strcmp(mode, "fakemon") && argc - optind == 4)
		rc = mode_fakemon(argv[optind], argv[optind + 1], argv[optind + 2],
				  strtod(argv[optind + 3], NULL));
	else
		usage();
	if (lis != NULL)
		fab_listener_close(lis);
	fab_domain_close(dom);
out:
	auth_key_wipe(&key);
	conf_destroy(conf);
	return rc;
}
