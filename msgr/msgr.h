/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Messenger: typed proto frames over fabric endpoints, for one thread. Every
 * connection of a process goes through its one messenger (docs/fabric.md,
 * "One messenger per process"): the mon client's, the OSD's client and
 * cluster connections, libweft's OSD connections.
 *
 * - A messenger runs on one fabric domain: its own (msgr_create) or one the
 *   caller owns and also uses for its registered memory (msgr_create_on).
 *   It is the only consumer of the domain's completion queue: every
 *   completion reaches its owner through the messenger.
 * - Owners: each listener and each outgoing connection names the ops table
 *   and the arg of whoever owns it (msgr_listen_ops, msgr_connect_ops); an
 *   accepted connection belongs to its listener's owner. The mon client, the
 *   OSD's client service and its replication share one messenger this way,
 *   each seeing only its own connections.
 * - Frames up to ms_msg_size go as one fabric send. Larger frames (a full
 *   map, a long command output) use a rendezvous: the sender registers the
 *   encoded frame for remote read and sends a small BULK {id, len, rkey};
 *   the receiver pulls it with one fab_read into its own buffer, delivers
 *   it like any frame and answers BULK_DONE {id}, on which the sender
 *   deregisters and frees it. On RDMA the pull is a one-sided read that
 *   costs the sender no CPU; on TCP the fabric emulates it.
 * - One-sided operations: owners post fab_write / fab_write_imm / fab_read
 *   on msgr_conn_ep() with a ctx of their own; the completion comes back
 *   through the messenger's rma handler (msgr_rma_handler) even after the
 *   connection closed (then with -ECANCELED and no connection). A peer's
 *   write_imm into our memory reaches the owner's write_imm_cb, only after
 *   the peer's hello (before it, the connection fails: no peer may write
 *   before it said who it is).
 * - Back-pressure, one rule: sends never block and never spin. A full send
 *   queue (-EAGAIN) parks the frame in a per-connection queue that
 *   msgr_progress() flushes in order; past MSGR_PENDING_MAX parked frames a
 *   send fails with -ENOBUFS, and the connection fails (-ENOBUFS, one log
 *   line) at the next msgr_progress(): a peer that withholds its credits
 *   costs a bounded queue, never a spin or a log line per frame.
 * - Hello: the first frame each side sends is its HELLO (proto/hello.h);
 *   the peer's first frame must be a HELLO that passes proto_hello_check,
 *   else the connection fails with -EPROTONOSUPPORT (the one-line reason,
 *   naming both versions, is logged and kept: msgr_conn_refusal). A refused
 *   connection first lingers, delivering nothing, until the peer closes it
 *   or 2 s pass, so our queued hello reaches the peer and it refuses too.
 *   Nothing reaches recv_cb before the peer's hello has been accepted;
 *   frames sent earlier are queued behind ours.
 * - Authentication (msgr_auth_set, msgr_auth_add; msgr_auth.c,
 *   docs/security.md): per owner. After the hellos the connecting side
 *   proves its entity's key and the accepting side proves it knows that key
 *   too (auth/session.h); frames the owner sends before then wait. From
 *   then on every frame carries a MAC trailer; one that fails closes the
 *   connection. Nothing reaches recv_cb (nor ready_cb) before the handshake
 *   passed, or before the peer's first frame showed it does not
 *   authenticate where the conf allows that. A refused peer gets an ERROR
 *   frame with the reason, and fail_cb(-EACCES) runs (msgr_conn_refusal has
 *   the line). The mon client authenticates its connections while the
 *   OSD's own connections on the same messenger do not (yet).
 * - Failure: when a connection breaks, fail_cb runs once with why: a
 *   fabric status (the peer closed, reset, refused or timed out: the peer
 *   is lost), -EPROTO (it sent a malformed frame), -EPROTONOSUPPORT (its
 *   hello was refused), -EACCES (authentication refused) or -ENOMEM. The
 *   owner then calls msgr_conn_close() (inside the callback is fine). Every
 *   callback may close the connection it is given, and nothing else.
 */
#ifndef WEFT_MSGR_MSGR_H
#define WEFT_MSGR_MSGR_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric/fabric.h"
#include "proto/proto.h"

struct msgr;
struct msgr_conn;
struct msgr_listener;

struct msgr_ops {
	/* A frame arrived. hdr and msg (and its views) are valid during the call only. */
	void (*recv_cb)(struct msgr_conn *conn, const struct proto_hdr *hdr,
			const struct proto_msg *msg, void *arg);
	/* A listener accepted conn (optional). */
	void (*accept_cb)(struct msgr_conn *conn, void *arg);
	/* msgr_connect finished; status 0 or -errno (a failure also raises fail_cb). */
	void (*connect_cb)(struct msgr_conn *conn, int status, void *arg);
	/* The connection broke or was refused: close it. */
	void (*fail_cb)(struct msgr_conn *conn, int status, void *arg);
	/* The peer's hello was accepted: its frames may follow (optional). */
	void (*ready_cb)(struct msgr_conn *conn, void *arg);
	/* The peer wrote len bytes into our memory with immediate imm (optional:
	 * without it such a write fails the connection). */
	void (*write_imm_cb)(struct msgr_conn *conn, uint32_t imm, uint32_t len, void *arg);
};

/*
 * The completion of a one-sided op an owner posted on msgr_conn_ep():
 * cqe->ctx is the poster's ctx, cqe->status says how it went; conn is NULL
 * when the connection was closed first.
 */
typedef void (*msgr_rma_cb)(struct msgr_conn *conn, const struct fab_cqe *cqe, void *arg);

/*
 * A messenger on a domain of its own, opened from attr (msg_size, timeouts,
 * name for logs); ops and arg own the connections of msgr_listen() and
 * msgr_connect().
 */
int msgr_create(const struct fab_domain_attr *attr, const struct msgr_ops *ops, void *arg,
		struct msgr **msgr_out);
/*
 * A messenger on the caller's domain, which must outlive it; name is used in
 * logs and as our hello's entity. No default owner: use msgr_listen_ops()
 * and msgr_connect_ops().
 */
int msgr_create_on(struct fab_domain *dom, const char *name, struct msgr **msgr_out);
/* Closes every connection and listener (no callbacks), and the domain if it is ours. */
void msgr_destroy(struct msgr *msgr);
struct fab_domain *msgr_domain(const struct msgr *msgr);
/* The completions of the one-sided ops posted by the owners (see msgr_rma_cb). */
void msgr_rma_handler(struct msgr *msgr, msgr_rma_cb cb, void *arg);

/* Listen with the messenger's default owner (msgr_create's ops). */
int msgr_listen(struct msgr *msgr, const char *addr);
/* The default listener's port (useful after listening on port 0); 0 when not listening. */
uint16_t msgr_listen_port(const struct msgr *msgr);
/*
 * Listen on addr; accepted connections belong to ops/arg and authenticate
 * with auth (msgr_auth_add; NULL: not). A port in use is -EADDRINUSE
 * without a log line (the caller may try the next port).
 */
struct msgr_auth_cfg;
int msgr_listen_ops(struct msgr *msgr, const char *addr, const struct msgr_ops *ops, void *arg,
		    const struct msgr_auth_cfg *auth, struct msgr_listener **l_out);
uint16_t msgr_listener_port(const struct msgr_listener *l);
/* Stop accepting; connections already accepted stay. */
void msgr_listener_close(struct msgr_listener *l);

/* Connect with the default owner; ctx is the connection's (msgr_conn_ctx). */
int msgr_connect(struct msgr *msgr, const char *addr, void *ctx, struct msgr_conn **conn_out);
/*
 * Connect to addr from local_addr (NULL = any) for owner ops/arg,
 * authenticating with auth (msgr_auth_add; NULL: not). The connection is
 * usable at once: frames sent before it is up wait for it.
 */
int msgr_connect_ops(struct msgr *msgr, const char *addr, const char *local_addr,
		     const struct msgr_ops *ops, void *arg, const struct msgr_auth_cfg *auth,
		     void *ctx, struct msgr_conn **conn_out);
void msgr_conn_close(struct msgr_conn *conn);

/* Encode and send one frame. 0, -EINVAL (bad message), -ENOTCONN, -ENOMEM, -ENOBUFS. */
int msgr_send(struct msgr_conn *conn, const struct proto_msg *msg, uint64_t tid);

void msgr_conn_set_ctx(struct msgr_conn *conn, void *ctx);
void *msgr_conn_ctx(const struct msgr_conn *conn);
/* The fabric endpoint, for one-sided ops and byte counters; never close it directly. */
struct fab_ep *msgr_conn_ep(const struct msgr_conn *conn);
/* "ip:port" of the peer, "" when unknown. */
const char *msgr_conn_peer(const struct msgr_conn *conn);
/* A number unique for the messenger's life: lets others name a conn without a pointer. */
uint64_t msgr_conn_id(const struct msgr_conn *conn);
/* The live connection with this id, or NULL. */
struct msgr_conn *msgr_conn_find(struct msgr *msgr, uint64_t id);
/* Frames parked behind a full send queue on this connection. */
unsigned int msgr_conn_parked(const struct msgr_conn *conn);

/*
 * Stop delivering this connection's frames (pause) or start again. A paused
 * connection's frames stay in their receive buffers, so the peer runs out
 * of send credits and stops sending: an owner that cannot take more from a
 * peer parks it instead of reading and dropping, and nothing spins. Frames
 * that waited are delivered in order by msgr_progress() after the resume.
 */
void msgr_conn_pause(struct msgr_conn *conn, bool pause);
bool msgr_conn_paused(const struct msgr_conn *conn);

/*
 * Denial-of-service limits on accepted connections (docs/security.md,
 * "Denial-of-service limits"). A connection over a limit is closed as soon
 * as it is accepted, counted, and logged once per peer IP per minute (with
 * the count of lines not logged). 0 turns a limit off.
 */
struct msgr_limits {
	unsigned int max_conns;	       /* per listener (ms_max_conns) */
	unsigned int max_conns_per_ip; /* from one peer IP, all listeners (ms_max_conns_per_ip) */
	/*
	 * Accepted but not yet through hello and handshake (ms_max_unauth);
	 * one peer IP may hold a quarter of them (at least 4).
	 */
	unsigned int max_unauth;
	uint32_t hello_timeout_ms; /* such a connection is closed after this */
};

#define MSGR_MAX_CONNS_DEFAULT	      4096
#define MSGR_MAX_CONNS_PER_IP_DEFAULT 256
#define MSGR_MAX_UNAUTH_DEFAULT	      512

struct msgr_stats {
	uint64_t accepted;	 /* connections accepted and kept */
	uint64_t refused_conns;	 /* closed at accept: ms_max_conns */
	uint64_t refused_per_ip; /* closed at accept: ms_max_conns_per_ip */
	uint64_t refused_unauth; /* closed at accept: ms_max_unauth (or its per-IP quarter) */
	uint64_t hello_timeouts; /* closed: no hello and handshake within hello_timeout_ms */
	uint64_t log_suppressed; /* refusal lines not logged (the once a minute rule) */
	uint64_t pauses;	 /* msgr_conn_pause(true) on a running connection */
	uint64_t send_overflows; /* connections failed: the peer took nothing we sent */
	unsigned int conns;	 /* accepted connections open now */
	unsigned int unauth;	 /* of which not through hello and handshake yet */
	unsigned int paused;	 /* connections paused now */
};

struct conf;
/* The defaults (MSGR_*_DEFAULT, the hello deadline MSGR_AUTH_TIMEOUT_MS) apply until set. */
void msgr_limits_set(struct msgr *msgr, const struct msgr_limits *lim);
/* The limits of a conf (ms_max_conns, ms_max_conns_per_ip, ms_max_unauth). */
void msgr_limits_from_conf(const struct conf *conf, struct msgr_limits *lim_out);
void msgr_stats_get(const struct msgr *msgr, struct msgr_stats *st_out);

/*
 * Drive the fabric and run callbacks: at most budget completions (0 = the
 * default, 256). Returns events handled or a negative errno.
 */
int msgr_progress_budget(struct msgr *msgr, unsigned int budget);
int msgr_progress(struct msgr *msgr);
/* Sleep until there may be work, at most timeout_ms. */
int msgr_wait(struct msgr *msgr, int timeout_ms);
/* For event loops: readable when msgr_progress may have work (poll after it returned 0). */
int msgr_fd(const struct msgr *msgr);
uint32_t msgr_msg_size(const struct msgr *msgr);

struct auth_key;
struct auth_caps;
struct auth_sess_keys;

/* struct msgr_auth's ticket callbacks (below). */
typedef int (*msgr_ticket_fn)(void *arg, const uint8_t **sealed, uint32_t *len,
			      struct auth_key *key_out);
typedef int (*msgr_ticket_open_fn)(void *arg, const void *sealed, size_t len,
				   const char *claimed, struct auth_sess_keys *keys_out,
				   uint64_t *expires_us, char *why, size_t whycap);

/* What a messenger proves and checks; strings and the key are copied. */
struct msgr_auth {
	/* Connections we open: authenticate as entity (NULL or "": do not) with key, to server. */
	const char *entity;
	const struct auth_key *key;
	const char *server; /* the entity we expect to answer: "mon." */
	/*
	 * Connections we accept: prove to be self ("mon.") with the keys lookup
	 * finds for the entity a peer claims: 0, -ENOENT (no such entity), or
	 * -EAGAIN (cannot tell yet: the peer is told to try elsewhere, and
	 * fails with -EAGAIN rather than -EACCES); NULL: we serve no handshake.
	 */
	const char *self;
	int (*lookup)(const char *entity, struct auth_sess_keys *keys_out, void *arg);
	void *lookup_arg;
	/* Refuse an accepted peer that does not authenticate, by what its hello claims. */
	bool require_daemons, require_clients;
	const char *fsid; /* the conf's fsid (a UUID); NULL or "": none */
	/*
	 * Tickets (auth/ticket.h; an OSD's connections). Connections we open
	 * present a ticket when ticket is set (key may then be NULL): it gives
	 * the sealed ticket (copied at once) and its session key: 0, or
	 * -EAGAIN when there is none yet (the connection then fails with it).
	 */
	msgr_ticket_fn ticket;
	void *ticket_arg;
	/*
	 * Connections we accept may present one when ticket_open is set: open
	 * the sealed ticket for the entity the peer claims, keys_out taking its
	 * session key and caps and *expires_us its expiry: 0; -EAGAIN (cannot
	 * tell yet: no service key that opens it here, asked again for
	 * MSGR_AUTH_LOOKUP_WAIT_MS); any other -errno refuses the peer with
	 * why (one line). Sessions opened with a ticket end when it expires if
	 * ticket_expire is set (the peer reconnects with its renewed ticket).
	 */
	msgr_ticket_open_fn ticket_open;
	void *ticket_open_arg;
	bool ticket_expire;
};

/*
 * The default owner's connections (msgr_listen, msgr_connect) authenticate
 * from now on. 0, -EINVAL (a bad fsid or an incomplete config, logged),
 * -ENOMEM.
 */
int msgr_auth_set(struct msgr *msgr, const struct msgr_auth *auth);
/*
 * A set-up for another owner's connections (msgr_listen_ops,
 * msgr_connect_ops), kept until the messenger is destroyed. Errors as
 * msgr_auth_set.
 */
int msgr_auth_add(struct msgr *msgr, const struct msgr_auth *auth,
		  const struct msgr_auth_cfg **cfg_out);
/*
 * The peer's authenticated entity ("client.admin"; on a connection we
 * opened, the server's: "mon."), or NULL: not authenticated (yet, or not
 * at all where the conf lets a peer in without a key).
 */
const char *msgr_conn_entity(const struct msgr_conn *conn);
/*
 * The key to seal something to the peer of an authenticated connection
 * (auth_sess_seal_key: a ticket grant, the service keys); both ends get the
 * same. 0, or -ENOTCONN when the connection did not authenticate (yet).
 */
int msgr_conn_seal_key(const struct msgr_conn *conn, struct auth_key *key_out);
/* An accepted peer's caps (from the lookup at its handshake), or NULL. */
const struct auth_caps *msgr_conn_caps(const struct msgr_conn *conn);
/* Replace them (the auth database changed). */
void msgr_conn_caps_set(struct msgr_conn *conn, const struct auth_caps *caps);
/* The key this session proved stops authenticating in ms (a rotation): close it then. */
void msgr_conn_auth_expire(struct msgr_conn *conn, uint64_t ms);
/* Walk the connections: the first (prev NULL) or the one after prev; NULL at the end. */
struct msgr_conn *msgr_conn_next(struct msgr *msgr, struct msgr_conn *prev);

/* Replace the hello this messenger sends (its features, a client's instance). */
void msgr_hello_set(struct msgr *msgr, const struct proto_hello *h);
const struct proto_hello *msgr_hello(const struct msgr *msgr);
/* The peer's accepted hello, or NULL before it arrived. */
const struct proto_hello *msgr_conn_peer_hello(const struct msgr_conn *conn);
/* Why the hello check or authentication refused this connection's peer, or NULL. */
const char *msgr_conn_refusal(const struct msgr_conn *conn);

#endif
