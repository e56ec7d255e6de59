/* SPDX-License-Identifier: Apache-2.0 */
/* The messenger's side of authentication: the handshake as frames, MACs, refusals. See msgr_auth.h.
 */
#include "msgr/msgr_auth.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "auth/policy.h"
#include "common/clock.h"
#include "common/log.h"
#include "proto/hello.h"

struct msgr_auth_cfg {
	char name[PROTO_NAME_MAX + 1]; /* ours, for logs */
	bool client;		       /* authenticate the connections we open */
	char entity[AUTH_ENTITY_MAX];
	struct auth_key key;
	char server[AUTH_ENTITY_MAX];
	bool serve; /* serve the handshake on connections we accept */
	char self[AUTH_ENTITY_MAX];
	int (*lookup)(const char *entity, struct auth_sess_keys *keys_out, void *arg);
	void *lookup_arg;
	bool require_daemons, require_clients;
	uint8_t fsid[AUTH_FSID_LEN];
	/* tickets (msgr.h): presented on connections we open, opened on those we accept */
	msgr_ticket_fn ticket;
	void *ticket_arg;
	msgr_ticket_open_fn ticket_open;
	void *ticket_open_arg;
	bool ticket_expire;
};

enum msgr_auth_phase {
	MSGR_AUTH_P_HELLO = 0, /* the version hellos have not both crossed */
	MSGR_AUTH_P_WAIT,      /* server: waiting for the client's AUTH(HELLO) or its first frame */
	MSGR_AUTH_P_HANDSHAKE, /* the session runs the handshake */
	MSGR_AUTH_P_OPEN,      /* authenticated: every frame MAC'd */
	MSGR_AUTH_P_PLAIN,     /* no authentication on this connection (allowed by the conf) */
	MSGR_AUTH_P_DEAD,
};

struct msgr_auth_link {
	const struct msgr_auth_cfg *cfg;
	bool initiator;
	bool authenticate; /* initiator: we sent AUTH(HELLO) */
	enum msgr_auth_phase phase;
	struct auth_sess sess;
	uint8_t hello_ours[AUTH_PRELUDE_PART_MAX], hello_peer[AUTH_PRELUDE_PART_MAX];
	size_t hello_ours_len, hello_peer_len;
	bool peer_daemon;	     /* the peer's hello says osd or mon */
	bool gmac; /* both hellos offer PROTO_FEAT_GMAC (ours always does): GMAC frame MACs */
	char claim[AUTH_ENTITY_MAX]; /* the hello name, then the AUTH hello entity */
	uint64_t deadline_ms;	     /* handshake: FAIL when not open by then; 0 = none */
	uint64_t expire_ms;	     /* open with a rotated-out key: FAIL then; 0 = none */
	bool passed;		     /* a frame went to the owner */
	bool lookup_pending; /* server: the claimed entity is not known (yet): asking again */
	uint64_t lookup_until_ms;
	uint8_t *ticket; /* server: the sealed ticket of a TICKET hello, until it is opened */
	uint32_t ticket_len;
	uint64_t ticket_expires_us; /* server: the session's ticket expires then (wall clock) */
	bool ticket_expiry;	    /* expire_ms is the ticket's expiry, not a rotation's grace */
};

static uint64_t msgr_auth_wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

int msgr_auth_cfg_new(const struct msgr_auth *a, const char *name, struct msgr_auth_cfg **cfg_out)
{
	struct msgr_auth_cfg *cfg;
	int rc;

	cfg = calloc(1, sizeof(*cfg));
	if (cfg == NULL)
		return -ENOMEM;
	snprintf(cfg->name, sizeof(cfg->name), "%s", name);
	if (a->entity != NULL && a->entity[0] != '\0') {
		if ((a->key == NULL && a->ticket == NULL) || a->server == NULL ||
		    a->server[0] == '\0') {
			rc = -EINVAL;
			goto err;
		}
		cfg->client = true;
		snprintf(cfg->entity, sizeof(cfg->entity), "%s", a->entity);
		if (a->key != NULL)
			cfg->key = *a->key;
		snprintf(cfg->server, sizeof(cfg->server), "%s", a->server);
		cfg->ticket = a->ticket;
		cfg->ticket_arg = a->ticket_arg;
	}
	if (a->lookup != NULL || a->ticket_open != NULL) {
		if (a->self == NULL || a->self[0] == '\0') {
			rc = -EINVAL;
			goto err;
		}
		cfg->serve = true;
		snprintf(cfg->self, sizeof(cfg->self), "%s", a->self);
		cfg->lookup = a->lookup;
		cfg->lookup_arg = a->lookup_arg;
		cfg->ticket_open = a->ticket_open;
		cfg->ticket_open_arg = a->ticket_open_arg;
		cfg->ticket_expire = a->ticket_expire;
	}
	cfg->require_daemons = a->require_daemons;
	cfg->require_clients = a->require_clients;
	rc = auth_fsid_parse(a->fsid, cfg->fsid);
	if (rc != 0) {
		log_error("msgr", "%s: fsid '%s' is not a UUID", name, a->fsid);
		goto err;
	}
	*cfg_out = cfg;
	return 0;
err:
	msgr_auth_cfg_free(cfg);
	return rc;
}

void msgr_auth_cfg_free(struct msgr_auth_cfg *cfg)
{
	if (cfg == NULL)
		return;
	OPENSSL_cleanse(cfg, sizeof(*cfg));
	free(cfg);
}

int msgr_auth_link_new(const struct msgr_auth_cfg *cfg, bool initiator,
		       struct msgr_auth_link **l_out)
{
	struct msgr_auth_link *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return -ENOMEM;
	l->cfg = cfg;
	l->initiator = initiator;
	l->phase = MSGR_AUTH_P_HELLO;
	auth_sess_init(&l->sess);
	/* Accepted connections must finish too: a silent peer must not hold a slot forever. */
	if (initiator ? cfg->client : cfg->serve || cfg->require_clients || cfg->require_daemons)
		l->deadline_ms = clock_now_ms() + MSGR_AUTH_TIMEOUT_MS;
	*l_out = l;
	return 0;
}

void msgr_auth_link_free(struct msgr_auth_link *l)
{
	if (l == NULL)
		return;
	auth_sess_clear(&l->sess);
	free(l->ticket);
	free(l);
}

/* ---------------------------------------------------------------- helpers */

/* Encode one AUTH frame carrying msg[len] into out. */
static int msgr_auth_frame(struct msgr_auth_out *out, const void *msg, size_t len)
{
	struct proto_msg m = {.type = PROTO_AUTH};

	m.auth.data = msg;
	m.auth.len = (uint32_t)len;
	return proto_frame_encode(&m, 0, out->frame, sizeof(out->frame), &out->len);
}

/* An ERROR frame for the peer: why it was refused (never which check failed). */
static void msgr_auth_error_frame(struct msgr_auth_out *out, int status, const char *fmt, ...)
{
	struct proto_msg m = {.type = PROTO_ERROR};
	va_list ap;
	int n;

	m.error.status = status;
	va_start(ap, fmt);
	n = vsnprintf(m.error.msg, sizeof(m.error.msg), fmt, ap);
	va_end(ap);
	m.error.msg_len = n < 0				     ? 0
			  : (size_t)n >= sizeof(m.error.msg) ? sizeof(m.error.msg) - 1
							     : (size_t)n;
	if (proto_frame_encode(&m, 0, out->frame, sizeof(out->frame), &out->len) != 0)
		out->len = 0;
}

static enum msgr_auth_verdict msgr_auth_stop(struct msgr_auth_link *l, struct msgr_auth_out *out,
					     enum msgr_auth_verdict v, int status, const char *fmt,
					     ...) __attribute__((format(printf, 5, 6)));

/* Refuse or fail: one log line (the why), the session wiped. */
static enum msgr_auth_verdict msgr_auth_stop(struct msgr_auth_link *l, struct msgr_auth_out *out,
					     enum msgr_auth_verdict v, int status, const char *fmt,
					     ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->why, sizeof(out->why), fmt, ap);
	va_end(ap);
	out->status = status;
	/* A refused client's owner reports it (its request fails with the reason); a server logs.
	 */
	if (l->initiator)
		log_warn("msgr", "%s", out->why);
	else
		log_error("msgr", "%s", out->why);
	l->phase = MSGR_AUTH_P_DEAD;
	auth_sess_clear(&l->sess);
	return v;
}

static void msgr_auth_facts(const struct msgr_auth_link *l, const struct msgr_auth_conn *conn,
			    struct auth_sess_conn *f)
{
	memset(f, 0, sizeof(*f));
	memcpy(f->fsid, l->cfg->fsid, sizeof(f->fsid));
	snprintf(f->local_addr, sizeof(f->local_addr), "%s", conn->local_addr);
	snprintf(f->peer_addr, sizeof(f->peer_addr), "%s", conn->peer_addr);
	/* The prelude: the initiator's hello first, whichever side we are. */
	if (l->initiator)
		auth_sess_prelude(l->hello_ours, l->hello_ours_len, l->hello_peer,
				  l->hello_peer_len, f->prelude);
	else
		auth_sess_prelude(l->hello_peer, l->hello_peer_len, l->hello_ours,
				  l->hello_ours_len, f->prelude);
}

/* ------------------------------------------------------------------ start */

int msgr_auth_link_start(struct msgr_auth_link *l, const void *hello, size_t len,
			 struct msgr_auth_out *out)
{
	uint8_t msg[AUTH_SESS_MSG_MAX];
	size_t mlen;
	int rc;

	out->len = 0;
	if (len > sizeof(l->hello_ours))
		return -EINVAL;
	memcpy(l->hello_ours, hello, len);
	l->hello_ours_len = len;
	if (!l->initiator || !l->cfg->client)
		return 0;
	if (l->cfg->ticket != NULL) {
		const uint8_t *sealed = NULL;
		struct auth_key tkey;
		uint32_t tlen = 0;

		rc = l->cfg->ticket(l->cfg->ticket_arg, &sealed, &tlen, &tkey);
		if (rc == 0)
			rc = auth_sess_client_start_ticket(&l->sess, l->cfg->entity, sealed, tlen,
							   &tkey, l->cfg->server, msg, sizeof(msg),
							   &mlen);
		auth_key_wipe(&tkey);
	} else {
		rc = auth_sess_client_start(&l->sess, l->cfg->entity, &l->cfg->key,
					    l->cfg->server, msg, sizeof(msg), &mlen);
	}
	if (rc == 0)
		rc = msgr_auth_frame(out, msg, mlen);
	OPENSSL_cleanse(msg, sizeof(msg));
	if (rc != 0)
		return rc;
	l->authenticate = true;
	return 0;
}

enum msgr_auth_verdict msgr_auth_link_peer_hello(struct msgr_auth_link *l,
						 const struct msgr_auth_conn *conn,
						 const void *frame, size_t len,
						 const struct proto_hello *h,
						 struct msgr_auth_out *out)
{
	out->len = 0;
	snprintf(l->claim, sizeof(l->claim), "%s", h->name);
	l->peer_daemon = h->entity_type == PROTO_ENTITY_OSD || h->entity_type == PROTO_ENTITY_MON;
	l->gmac = (h->features & PROTO_FEAT_GMAC) && (PROTO_FEATS_SUPPORTED & PROTO_FEAT_GMAC);
	if (len > sizeof(l->hello_peer))
		return msgr_auth_stop(l, out, MSGR_AUTH_FAIL, -EPROTO,
				      "%s: peer %s (%s): hello of %zu bytes", conn->name,
				      conn->peer_addr, l->claim, len);
	memcpy(l->hello_peer, frame, len);
	l->hello_peer_len = len;
	if (l->initiator) {
		if (!l->authenticate) {
			l->phase = MSGR_AUTH_P_PLAIN;
			l->deadline_ms = 0;
			return MSGR_AUTH_PASS;
		}
		if (!(h->features & PROTO_FEAT_AUTH))
			return msgr_auth_stop(
			    l, out, MSGR_AUTH_FAIL, -EPROTONOSUPPORT,
			    "%s: %s at %s (weft %s) does not authenticate; upgrade it, or set "
			    "auth_%s_required = none here to connect without a key",
			    conn->name, h->name, conn->peer_addr, h->version,
			    l->cfg->entity[0] == 'c' ? "client" : "cluster");
		l->phase = MSGR_AUTH_P_HANDSHAKE;
		return MSGR_AUTH_PASS;
	}
	l->phase = MSGR_AUTH_P_WAIT;
	return MSGR_AUTH_PASS;
}

/* ----------------------------------------------------------------- server */

static enum msgr_auth_verdict msgr_auth_refuse_peer(struct msgr_auth_link *l,
						    const struct msgr_auth_conn *conn,
						    const char *entity, struct msgr_auth_out *out,
						    const char *detail)
{
	msgr_auth_error_frame(out, -EACCES,
			      "%s: authentication of %s failed (no such entity, a wrong key, or a "
			      "key that was removed or rotated out)",
			      conn->name, entity);
	return msgr_auth_stop(l, out, MSGR_AUTH_REFUSE, -EACCES,
			      "%s: peer %s claiming %s: authentication refused: %s", conn->name,
			      conn->peer_addr, entity, detail);
}

/*
 * The claimed entity's keys, then CHALLENGE. An entity this side does not
 * know may be one just created that its copy of the database has not
 * reached: asked again on every tick for MSGR_AUTH_LOOKUP_WAIT_MS before
 * the peer is refused.
 */
static enum msgr_auth_verdict msgr_auth_server_lookup(struct msgr_auth_link *l,
						      const struct msgr_auth_conn *conn,
						      struct msgr_auth_out *out)
{
	uint8_t msg[AUTH_SESS_MSG_MAX];
	struct auth_sess_keys keys;
	struct auth_sess_conn facts;
	struct proto_err err;
	size_t mlen;
	int rc;

	char twhy[MSGR_AUTH_WHY_MAX] = "";

	memset(&keys, 0, sizeof(keys));
	if (l->ticket != NULL)
		rc = l->cfg->ticket_open(l->cfg->ticket_open_arg, l->ticket, l->ticket_len,
					 l->sess.hello.client, &keys, &l->ticket_expires_us, twhy,
					 sizeof(twhy));
	else
		rc = l->cfg->lookup(l->sess.hello.client, &keys, l->cfg->lookup_arg);
	if (l->ticket != NULL && rc != 0 && rc != -EAGAIN) {
		OPENSSL_cleanse(&keys, sizeof(keys));
		l->lookup_pending = false;
		return msgr_auth_refuse_peer(l, conn, l->claim, out, twhy);
	}
	if ((rc == -ENOENT || rc == -EAGAIN) && clock_now_ms() < l->lookup_until_ms) {
		l->lookup_pending = true;
		return MSGR_AUTH_TAKEN;
	}
	l->lookup_pending = false;
	if (rc == -EAGAIN) {
		/* Not a refusal of the key: this side cannot judge it yet. */
		if (l->ticket != NULL)
			msgr_auth_error_frame(out, -EAGAIN,
					      "%s: cannot open %s's ticket yet (%s); try again",
					      conn->name, l->claim, twhy);
		else
			msgr_auth_error_frame(out, -EAGAIN,
					      "%s: cannot check %s's key yet (catching up); try "
					      "another monitor",
					      conn->name, l->claim);
		snprintf(out->why, sizeof(out->why),
			 "%s: peer %s claiming %s: not ready to check its %s yet", conn->name,
			 conn->peer_addr, l->claim, l->ticket != NULL ? "ticket" : "key");
		out->status = -EAGAIN;
		log_info("msgr", "%s", out->why);
		l->phase = MSGR_AUTH_P_DEAD;
		auth_sess_clear(&l->sess);
		return MSGR_AUTH_REFUSE;
	}
	if (rc != 0 || keys.nkeys < 1 || keys.nkeys > 2) {
		OPENSSL_cleanse(&keys, sizeof(keys));
		return msgr_auth_refuse_peer(l, conn, l->claim, out,
					     rc == -ENOENT ? "no such entity in the auth database"
							   : "its keys cannot be read");
	}
	if (l->ticket != NULL) { /* opened: the copy is not needed any more */
		free(l->ticket);
		l->ticket = NULL;
	}
	msgr_auth_facts(l, conn, &facts);
	rc = auth_sess_server_challenge(&l->sess, l->cfg->self, &facts, &keys, &err, msg,
					sizeof(msg), &mlen);
	OPENSSL_cleanse(&keys, sizeof(keys));
	if (rc == 0)
		rc = msgr_auth_frame(out, msg, mlen);
	if (rc != 0)
		return msgr_auth_refuse_peer(l, conn, l->claim, out, err.msg);
	return MSGR_AUTH_TAKEN;
}

static enum msgr_auth_verdict msgr_auth_server_hello(struct msgr_auth_link *l,
						     const struct msgr_auth_conn *conn,
						     const struct proto_auth *a,
						     struct msgr_auth_out *out)
{
	struct proto_err err;
	int rc;

	if (!l->cfg->serve) {
		msgr_auth_error_frame(out, -EPROTONOSUPPORT, "%s does not serve authentication",
				      conn->name);
		return msgr_auth_stop(l, out, MSGR_AUTH_REFUSE, -EPROTONOSUPPORT,
				      "%s: peer %s (%s) wants to authenticate, but this side does "
				      "not serve it: refused",
				      conn->name, conn->peer_addr, l->claim);
	}
	rc = auth_sess_server_hello(&l->sess, a->data, a->len, &err);
	if (rc != 0) {
		msgr_auth_error_frame(out, rc, "%s: %s", conn->name, err.msg);
		return msgr_auth_stop(l, out, MSGR_AUTH_REFUSE, rc,
				      "%s: peer %s (%s): bad authentication hello: %s", conn->name,
				      conn->peer_addr, l->claim, err.msg);
	}
	snprintf(l->claim, sizeof(l->claim), "%s", l->sess.hello.client);
	if ((l->sess.hello.method == AUTH_METHOD_TICKET && l->cfg->ticket_open == NULL) ||
	    (l->sess.hello.method == AUTH_METHOD_KEY && l->cfg->lookup == NULL)) {
		/* a monitor serves keys only, an OSD tickets only */
		bool ticket = l->sess.hello.method == AUTH_METHOD_TICKET;

		msgr_auth_error_frame(out, -EPROTONOSUPPORT, "%s: %s", conn->name,
				      ticket ? "method 2 (ticket) is not served on this connection"
					     : "only tickets are served here: ask a monitor for one");
		return msgr_auth_stop(l, out, MSGR_AUTH_REFUSE, -EPROTONOSUPPORT,
				      "%s: peer %s claiming %s: %s: refused", conn->name,
				      conn->peer_addr, l->claim,
				      ticket ? "method 2 (ticket) is not served on this connection"
					     : "offered a key, not a ticket");
	}
	if (l->sess.hello.method == AUTH_METHOD_TICKET) {
		l->ticket = malloc(l->sess.hello.ticket_len);
		if (l->ticket == NULL)
			return msgr_auth_stop(l, out, MSGR_AUTH_FAIL, -ENOMEM,
					      "%s: peer %s (%s): out of memory", conn->name,
					      conn->peer_addr, l->claim);
		memcpy(l->ticket, l->sess.hello.ticket, l->sess.hello.ticket_len);
		l->ticket_len = l->sess.hello.ticket_len;
	}
	l->sess.hello.ticket = NULL; /* pointed into the frame */
	l->sess.hello.ticket_len = 0;
	l->lookup_until_ms = clock_now_ms() + MSGR_AUTH_LOOKUP_WAIT_MS;
	return msgr_auth_server_lookup(l, conn, out);
}

static enum msgr_auth_verdict msgr_auth_server_proof(struct msgr_auth_link *l,
						     const struct msgr_auth_conn *conn,
						     const struct proto_auth *a,
						     struct msgr_auth_out *out)
{
	uint8_t msg[AUTH_SESS_MSG_MAX];
	struct proto_err err;
	size_t mlen;
	int rc;

	l->sess.gmac = l->gmac; /* before the frame keys are derived */
	rc = auth_sess_server_proof(&l->sess, a->data, a->len, &err, msg, sizeof(msg), &mlen);
	if (rc == 0)
		rc = msgr_auth_frame(out, msg, mlen);
	if (rc != 0)
		return msgr_auth_refuse_peer(l, conn, l->claim, out,
					     rc == -EACCES
						 ? "its proof does not verify (a wrong key, "
						   "a replayed or relayed handshake, or a "
						   "key rotated out)"
						 : err.msg);
	l->phase = MSGR_AUTH_P_OPEN;
	l->deadline_ms = 0;
	if (l->ticket_expires_us != 0 && l->cfg->ticket_expire) {
		uint64_t now = msgr_auth_wall_us();
		uint64_t left = l->ticket_expires_us > now ? l->ticket_expires_us - now : 0;

		l->expire_ms = clock_now_ms() + left / 1000;
		l->ticket_expiry = true;
		log_debug("msgr", "%s: peer %s authenticated as %s with a ticket valid %llu s more",
			  conn->name, conn->peer_addr, l->sess.peer,
			  (unsigned long long)(left / 1000000));
	} else if (l->sess.valid_until_us != 0) {
		uint64_t now = msgr_auth_wall_us();
		uint64_t left = l->sess.valid_until_us > now ? l->sess.valid_until_us - now : 0;

		l->expire_ms = clock_now_ms() + left / 1000;
		log_info("msgr",
			 "%s: peer %s authenticated as %s with its previous key, valid for "
			 "%llu s more",
			 conn->name, conn->peer_addr, l->sess.peer,
			 (unsigned long long)(left / 1000000));
	} else {
		log_debug("msgr", "%s: peer %s authenticated as %s", conn->name, conn->peer_addr,
			  l->sess.peer);
	}
	return MSGR_AUTH_TAKEN;
}

static enum msgr_auth_verdict msgr_auth_server_recv(struct msgr_auth_link *l,
						    const struct msgr_auth_conn *conn,
						    const struct proto_msg *msg,
						    struct msgr_auth_out *out)
{
	bool required;

	if (l->phase == MSGR_AUTH_P_WAIT) {
		if (msg->type == PROTO_AUTH) {
			l->phase = MSGR_AUTH_P_HANDSHAKE;
			return msgr_auth_server_hello(l, conn, &msg->auth, out);
		}
		required = l->peer_daemon ? l->cfg->require_daemons : l->cfg->require_clients;
		if (required) {
			msgr_auth_error_frame(out, -EACCES,
					      "%s requires authentication (auth_%s_required = "
					      "weft): no key was offered",
					      conn->name, l->peer_daemon ? "cluster" : "service");
			return msgr_auth_stop(l, out, MSGR_AUTH_REFUSE, -EACCES,
					      "%s: peer %s claiming %s sent %s without "
					      "authenticating (auth_%s_required = weft): refused",
					      conn->name, conn->peer_addr, l->claim,
					      proto_type_name(msg->type),
					      l->peer_daemon ? "cluster" : "service");
		}
		l->phase = MSGR_AUTH_P_PLAIN;
		l->deadline_ms = 0;
		return MSGR_AUTH_PASS;
	}
	/* P_HANDSHAKE: the proof, and nothing else, comes next. */
	if (msg->type != PROTO_AUTH) {
		msgr_auth_error_frame(out, -EACCES, "%s: %s before the handshake finished",
				      conn->name, proto_type_name(msg->type));
		return msgr_auth_stop(l, out, MSGR_AUTH_REFUSE, -EACCES,
				      "%s: peer %s claiming %s sent %s before its proof: refused",
				      conn->name, conn->peer_addr, l->claim,
				      proto_type_name(msg->type));
	}
	return msgr_auth_server_proof(l, conn, &msg->auth, out);
}

/* ----------------------------------------------------------------- client */

static enum msgr_auth_verdict msgr_auth_client_recv(struct msgr_auth_link *l,
						    const struct msgr_auth_conn *conn,
						    const struct proto_msg *msg,
						    struct msgr_auth_out *out)
{
	uint8_t reply[AUTH_SESS_MSG_MAX];
	struct auth_sess_conn facts;
	struct proto_err err;
	size_t mlen;
	int rc;

	if (msg->type == PROTO_ERROR && msg->error.status == -EAGAIN) {
		snprintf(out->why, sizeof(out->why), "%s: %s at %s: %.200s", conn->name, l->claim,
			 conn->peer_addr, msg->error.msg);
		out->status = -EAGAIN;
		log_info("msgr", "%s", out->why);
		l->phase = MSGR_AUTH_P_DEAD;
		auth_sess_clear(&l->sess);
		return MSGR_AUTH_FAIL;
	}
	if (msg->type == PROTO_ERROR)
		return msgr_auth_stop(l, out, MSGR_AUTH_FAIL,
				      msg->error.status < 0 ? msg->error.status : -EACCES,
				      "%s: %s at %s refused us: %s", conn->name, l->claim,
				      conn->peer_addr, msg->error.msg);
	if (msg->type != PROTO_AUTH)
		return msgr_auth_stop(l, out, MSGR_AUTH_FAIL, -EACCES,
				      "%s: %s at %s sent %s before proving who it is: closing",
				      conn->name, l->claim, conn->peer_addr,
				      proto_type_name(msg->type));
	if (l->sess.state == AUTH_SESS_C_HELLO) {
		msgr_auth_facts(l, conn, &facts);
		l->sess.gmac = l->gmac; /* before the frame keys are derived */
		rc = auth_sess_client_challenge(&l->sess, &facts, msg->auth.data, msg->auth.len,
						&err, reply, sizeof(reply), &mlen);
		if (rc == 0)
			rc = msgr_auth_frame(out, reply, mlen);
		OPENSSL_cleanse(reply, sizeof(reply));
		if (rc != 0)
			return msgr_auth_stop(l, out, MSGR_AUTH_FAIL, rc == -EACCES ? rc : -EPROTO,
					      "%s: %s at %s: %s: closing", conn->name, l->claim,
					      conn->peer_addr, err.msg);
		return MSGR_AUTH_TAKEN;
	}
	rc = auth_sess_client_done(&l->sess, msg->auth.data, msg->auth.len, &err);
	if (rc != 0)
		return msgr_auth_stop(l, out, MSGR_AUTH_FAIL, rc == -EACCES ? rc : -EPROTO,
				      "%s: %s at %s did not prove it holds %s's key (%s): closing",
				      conn->name, l->claim, conn->peer_addr, l->cfg->entity,
				      err.msg);
	l->phase = MSGR_AUTH_P_OPEN;
	l->deadline_ms = 0;
	log_debug("msgr", "%s: authenticated %s at %s as %s", conn->name, l->sess.peer,
		  conn->peer_addr, l->cfg->entity);
	return MSGR_AUTH_TAKEN;
}

enum msgr_auth_verdict msgr_auth_link_recv(struct msgr_auth_link *l,
					   const struct msgr_auth_conn *conn,
					   const struct proto_msg *msg, struct msgr_auth_out *out)
{
	out->len = 0;
	switch (l->phase) {
	case MSGR_AUTH_P_OPEN:
	case MSGR_AUTH_P_PLAIN:
		if (msg->type == PROTO_AUTH)
			return msgr_auth_stop(l, out, MSGR_AUTH_FAIL, -EPROTO,
					      "%s: peer %s (%s) sent a handshake message on a "
					      "connection past its handshake: closing",
					      conn->name, conn->peer_addr, l->claim);
		/* We sent no key and the peer wants one: its ERROR says so, first thing. */
		if (l->phase == MSGR_AUTH_P_PLAIN && l->initiator && !l->passed &&
		    msg->type == PROTO_ERROR)
			return msgr_auth_stop(l, out, MSGR_AUTH_FAIL,
					      msg->error.status < 0 ? msg->error.status : -EACCES,
					      "%s: %s at %s refused us: %s", conn->name, l->claim,
					      conn->peer_addr, msg->error.msg);
		l->passed = true;
		return MSGR_AUTH_PASS;
	case MSGR_AUTH_P_WAIT:
		return msgr_auth_server_recv(l, conn, msg, out);
	case MSGR_AUTH_P_HANDSHAKE:
		return l->initiator ? msgr_auth_client_recv(l, conn, msg, out)
				    : msgr_auth_server_recv(l, conn, msg, out);
	case MSGR_AUTH_P_HELLO:
	case MSGR_AUTH_P_DEAD:
		break;
	}
	out->status = -EPROTO;
	snprintf(out->why, sizeof(out->why), "%s: peer %s: frame on a dead link", conn->name,
		 conn->peer_addr);
	return MSGR_AUTH_FAIL;
}

enum msgr_auth_verdict msgr_auth_link_tick(struct msgr_auth_link *l,
					   const struct msgr_auth_conn *conn, uint64_t now_ms,
					   struct msgr_auth_out *out)
{
	out->len = 0;
	if (l->phase == MSGR_AUTH_P_DEAD)
		return MSGR_AUTH_PASS;
	if (l->lookup_pending)
		return msgr_auth_server_lookup(l, conn, out);
	if (l->deadline_ms != 0 && now_ms >= l->deadline_ms)
		return msgr_auth_stop(l, out, MSGR_AUTH_FAIL, -ETIMEDOUT,
				      "%s: peer %s (%s) did not finish authenticating within %d s: "
				      "closing",
				      conn->name, conn->peer_addr, l->claim[0] ? l->claim : "?",
				      MSGR_AUTH_TIMEOUT_MS / 1000);
	if (l->expire_ms != 0 && now_ms >= l->expire_ms && l->ticket_expiry) {
		/* not a refusal: the peer reconnects with the ticket it has renewed by now */
		log_info("msgr", "%s: peer %s (%s): its ticket expired: closing the session",
			 conn->name, conn->peer_addr, l->sess.peer);
		out->status = -EKEYEXPIRED;
		snprintf(out->why, sizeof(out->why), "%s: peer %s (%s): its ticket expired",
			 conn->name, conn->peer_addr, l->sess.peer);
		l->phase = MSGR_AUTH_P_DEAD;
		auth_sess_clear(&l->sess);
		return MSGR_AUTH_FAIL;
	}
	if (l->expire_ms != 0 && now_ms >= l->expire_ms)
		return msgr_auth_stop(l, out, MSGR_AUTH_FAIL, -EACCES,
				      "%s: peer %s (%s): the previous key it authenticated with is "
				      "past its grace after a rotation: closing",
				      conn->name, conn->peer_addr, l->sess.peer);
	return MSGR_AUTH_PASS;
}

/* ----------------------------------------------------------------- frames */

bool msgr_auth_link_tx_hold(const struct msgr_auth_link *l)
{
	switch (l->phase) {
	case MSGR_AUTH_P_HELLO:
	case MSGR_AUTH_P_WAIT:
	case MSGR_AUTH_P_HANDSHAKE:
		/* A plain initiator sends at once; one that authenticates waits for its PROOF. */
		if (l->initiator && !l->authenticate)
			return false;
		return !auth_sess_tx_ready(&l->sess);
	default:
		return false;
	}
}

bool msgr_auth_link_tx_mac(const struct msgr_auth_link *l)
{
	return (l->phase == MSGR_AUTH_P_HANDSHAKE || l->phase == MSGR_AUTH_P_OPEN) &&
	       auth_sess_tx_ready(&l->sess);
}

bool msgr_auth_link_rx_mac(const struct msgr_auth_link *l)
{
	return l->phase == MSGR_AUTH_P_OPEN;
}

int msgr_auth_link_seal(struct msgr_auth_link *l, const void *frame, size_t len,
			uint8_t mac_out[AUTH_SESS_MAC_LEN])
{
	return auth_sess_seal(&l->sess, frame, len, mac_out);
}

uint64_t msgr_auth_link_tx_next(const struct msgr_auth_link *l)
{
	return auth_sess_tx_next(&l->sess);
}

int msgr_auth_link_seal_bulk(struct msgr_auth_link *l, uint64_t seq, const void *frame, size_t len,
			     uint8_t mac_out[AUTH_SESS_MAC_LEN])
{
	return auth_sess_seal_bulk(&l->sess, seq, frame, len, mac_out);
}

static int msgr_auth_mac_failed(struct msgr_auth_link *l, const struct msgr_auth_conn *conn,
				const char *what, size_t len)
{
	log_error("msgr",
		  "%s: %s of %zu bytes from %s (%s) fails its MAC: dropped, closing the "
		  "connection",
		  conn->name, what, len, conn->peer_addr,
		  l->sess.peer[0] ? l->sess.peer : l->claim);
	l->phase = MSGR_AUTH_P_DEAD;
	auth_sess_clear(&l->sess);
	return -EACCES;
}

int msgr_auth_link_verify(struct msgr_auth_link *l, const struct msgr_auth_conn *conn,
			  const void *data, size_t len)
{
	const uint8_t *p = data;

	if (len < PROTO_HDR_LEN + AUTH_SESS_MAC_LEN ||
	    auth_sess_verify(&l->sess, p, len - AUTH_SESS_MAC_LEN, p + len - AUTH_SESS_MAC_LEN) !=
		0)
		return msgr_auth_mac_failed(l, conn, "a frame", len);
	return 0;
}

uint64_t msgr_auth_link_rx_last(const struct msgr_auth_link *l)
{
	return auth_sess_rx_last(&l->sess);
}

int msgr_auth_link_verify_bulk(struct msgr_auth_link *l, const struct msgr_auth_conn *conn,
			       uint64_t seq, const void *data, size_t len)
{
	const uint8_t *p = data;

	if (len < PROTO_HDR_LEN + AUTH_SESS_MAC_LEN ||
	    auth_sess_verify_bulk(&l->sess, seq, p, len - AUTH_SESS_MAC_LEN,
				  p + len - AUTH_SESS_MAC_LEN) != 0)
		return msgr_auth_mac_failed(l, conn, "a large frame", len);
	return 0;
}

void msgr_auth_link_expire(struct msgr_auth_link *l, uint64_t mono_ms)
{
	if (l->phase == MSGR_AUTH_P_OPEN && (l->expire_ms == 0 || mono_ms < l->expire_ms)) {
		l->expire_ms = mono_ms;
		l->ticket_expiry = false; /* the key's grace ends first: a refusal */
	}
}

const char *msgr_auth_link_entity(const struct msgr_auth_link *l)
{
	return l->phase == MSGR_AUTH_P_OPEN ? l->sess.peer : NULL;
}

int msgr_auth_link_seal_key(const struct msgr_auth_link *l, struct auth_key *key_out)
{
	if (l->phase != MSGR_AUTH_P_OPEN)
		return -ENOTCONN;
	return auth_sess_seal_key(&l->sess, key_out);
}

const struct auth_caps *msgr_auth_link_caps(const struct msgr_auth_link *l)
{
	return l->phase == MSGR_AUTH_P_OPEN && !l->initiator ? &l->sess.caps : NULL;
}

void msgr_auth_link_caps_set(struct msgr_auth_link *l, const struct auth_caps *caps)
{
	l->sess.caps = *caps;
}

const char *msgr_auth_link_claim(const struct msgr_auth_link *l)
{
	return l->claim;
}
