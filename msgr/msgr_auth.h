/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The messenger's side of authentication (msgr-internal: msgr.c calls
 * these; owners use msgr_auth_set() and the accessors in msgr.h).
 *
 * A link is one connection's state. It turns the handshake of
 * auth/session.h into frames: after both version hellos, the side that
 * connected sends AUTH(HELLO), the accepting side answers AUTH(CHALLENGE),
 * then AUTH(PROOF) and AUTH(DONE). A link says, for every frame, whether
 * it is handshake (consumed here, maybe with a frame to send back), to be
 * delivered, or a reason to refuse the peer; and whether frames in each
 * direction carry a MAC trailer yet.
 */
#ifndef WEFT_MSGR_MSGR_AUTH_H
#define WEFT_MSGR_MSGR_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/session.h"
#include "msgr/msgr.h"

#define MSGR_AUTH_TIMEOUT_MS 10000 /* from connect/accept to an open session */
/* How long a server asks again for an entity it does not know (its database may lag). */
#define MSGR_AUTH_LOOKUP_WAIT_MS 1500
#define MSGR_AUTH_WHY_MAX	 320

struct msgr_auth_cfg;
struct msgr_auth_link;

enum msgr_auth_verdict {
	MSGR_AUTH_PASS = 0, /* deliver the frame to the owner */
	MSGR_AUTH_TAKEN,    /* a handshake frame, consumed; out may hold a frame to send */
	MSGR_AUTH_REFUSE,   /* refuse the peer (logged): send out (an ERROR) and linger */
	MSGR_AUTH_FAIL,	    /* close at once (logged) */
};

/* What a step produces: a frame to post as is (no MAC), and why it refused. */
struct msgr_auth_out {
	uint8_t frame[PROTO_HDR_LEN + 4 + AUTH_SESS_MSG_MAX];
	size_t len; /* 0 = nothing to send */
	int status; /* REFUSE/FAIL: -EACCES, -EPROTO, -ETIMEDOUT, -EPROTONOSUPPORT */
	char why[MSGR_AUTH_WHY_MAX];
};

/* The connection as the link sees it (filled by msgr.c on each call). */
struct msgr_auth_conn {
	const char *name;	/* ours, for logs ("mon.a") */
	const char *local_addr; /* "ip:port" */
	const char *peer_addr;
};

int msgr_auth_cfg_new(const struct msgr_auth *a, const char *name, struct msgr_auth_cfg **cfg_out);
void msgr_auth_cfg_free(struct msgr_auth_cfg *cfg);

/* A link for a connection we opened (initiator) or accepted. */
int msgr_auth_link_new(const struct msgr_auth_cfg *cfg, bool initiator,
		       struct msgr_auth_link **l_out);
void msgr_auth_link_free(struct msgr_auth_link *l);

/* Our hello (its frame bytes) went out; an initiator that authenticates gets AUTH(HELLO) in out. */
int msgr_auth_link_start(struct msgr_auth_link *l, const void *hello, size_t len,
			 struct msgr_auth_out *out);
/* The peer's hello passed the version check: PASS, or REFUSE when it cannot authenticate. */
enum msgr_auth_verdict msgr_auth_link_peer_hello(struct msgr_auth_link *l,
						 const struct msgr_auth_conn *conn,
						 const void *frame, size_t len,
						 const struct proto_hello *h,
						 struct msgr_auth_out *out);
/* A frame after the hellos (its MAC already checked when one was due). */
enum msgr_auth_verdict msgr_auth_link_recv(struct msgr_auth_link *l,
					   const struct msgr_auth_conn *conn,
					   const struct proto_msg *msg, struct msgr_auth_out *out);
/* FAIL when the handshake is late or the session's key ended (now: monotonic ms). */
enum msgr_auth_verdict msgr_auth_link_tick(struct msgr_auth_link *l,
					   const struct msgr_auth_conn *conn, uint64_t now_ms,
					   struct msgr_auth_out *out);

/* Frames we send must wait (the session key is not there yet). */
bool msgr_auth_link_tx_hold(const struct msgr_auth_link *l);
/* Frames we send / receive carry a MAC trailer of AUTH_SESS_MAC_LEN bytes. */
bool msgr_auth_link_tx_mac(const struct msgr_auth_link *l);
bool msgr_auth_link_rx_mac(const struct msgr_auth_link *l);
/* Seal a frame; its MAC goes to mac_out. */
int msgr_auth_link_seal(struct msgr_auth_link *l, const void *frame, size_t len,
			uint8_t mac_out[AUTH_SESS_MAC_LEN]);
uint64_t msgr_auth_link_tx_next(const struct msgr_auth_link *l);
int msgr_auth_link_seal_bulk(struct msgr_auth_link *l, uint64_t seq, const void *frame, size_t len,
			     uint8_t mac_out[AUTH_SESS_MAC_LEN]);
/* data holds the frame and its trailer (len includes it): 0 or -EACCES (logged). */
int msgr_auth_link_verify(struct msgr_auth_link *l, const struct msgr_auth_conn *conn,
			  const void *data, size_t len);
uint64_t msgr_auth_link_rx_last(const struct msgr_auth_link *l);
int msgr_auth_link_verify_bulk(struct msgr_auth_link *l, const struct msgr_auth_conn *conn,
			       uint64_t seq, const void *data, size_t len);

/* Close the session at mono_ms at the latest (its key was rotated). */
void msgr_auth_link_expire(struct msgr_auth_link *l, uint64_t mono_ms);
const char *msgr_auth_link_entity(const struct msgr_auth_link *l);
/* auth_sess_seal_key of an open session; -ENOTCONN before. */
int msgr_auth_link_seal_key(const struct msgr_auth_link *l, struct auth_key *key_out);
const struct auth_caps *msgr_auth_link_caps(const struct msgr_auth_link *l);
void msgr_auth_link_caps_set(struct msgr_auth_link *l, const struct auth_caps *caps);
/* The peer's claim (its hello name, or the entity of its AUTH hello), for log lines. */
const char *msgr_auth_link_claim(const struct msgr_auth_link *l);

#endif
