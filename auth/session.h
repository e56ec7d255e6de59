/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One connection's authentication, independent of the transport: the
 * handshake of handshake.h as messages in and messages out, then a MAC on
 * every frame under keys derived from the session key. The messenger
 * (msgr/msgr_auth.c) drives it; any other connection type (the OSDs'
 * own) can drive the same calls.
 *
 *   client                                server
 *   auth_sess_client_start   -> HELLO ->  auth_sess_server_hello (claimed entity)
 *                                         (the owner finds that entity's keys)
 *   auth_sess_client_challenge <- CHALLENGE <- auth_sess_server_challenge
 *                            -> PROOF ->  auth_sess_server_proof: verified, open
 *   auth_sess_client_done    <- DONE  <-
 *
 * The client may send MAC'd frames right after PROOF (it knows the
 * session key by then) but accepts nothing before DONE has verified, so a
 * request costs no extra round trip beyond the handshake's; the server
 * accepts nothing before PROOF has verified.
 *
 * Frame MACs: HMAC-SHA256 under a key per direction (HKDF of the session
 * key with "c2s" / "s2c"), over the frame's sequence number (le64, one
 * counter per direction, starting at 0 after the handshake), a kind byte
 * (0 a frame, 1 the content of a large frame pulled by the peer, bound to
 * the sequence number of the frame that announced it) and the frame. A
 * frame that is dropped, replayed, reordered, reflected back to its
 * sender or moved to another connection fails. When both sides' hellos
 * offer it (PROTO_FEAT_GMAC; the owner sets gmac before the keys are
 * derived), the MAC is AES-256-GMAC instead, over the same bytes, keyed
 * per direction from labels of its own, with (kind, sequence number) as
 * its nonce: the same guarantees for a fraction of SHA-256's cost per
 * byte. The hellos are bound in the transcript, so the choice cannot be
 * stripped by someone in the middle.
 *
 * Rotation: a server gives up to two keys for an entity (the current one
 * and, inside its grace after `weft auth rotate`, the previous one); the
 * proof is tried against each. A session opened with the previous key
 * records when that key's grace ends (valid_until_us), and the owner
 * closes it then.
 */
#ifndef WEFT_AUTH_SESSION_H
#define WEFT_AUTH_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/caps.h"
#include "auth/handshake.h"

#define AUTH_SESS_MAC_LEN AUTH_MAC_LEN /* the trailer of every frame after the handshake */
#define AUTH_SESS_MSG_MAX (AUTH_TICKET_WIRE_MAX + 512) /* a handshake message */

enum auth_sess_state {
	AUTH_SESS_INIT = 0,
	AUTH_SESS_C_HELLO,     /* client: HELLO sent */
	AUTH_SESS_C_PROOF,     /* client: PROOF sent; may send, must not accept */
	AUTH_SESS_S_HELLO,     /* server: HELLO decoded, waiting for the owner's keys */
	AUTH_SESS_S_CHALLENGE, /* server: CHALLENGE sent */
	AUTH_SESS_OPEN,	       /* both directions MAC'd */
	AUTH_SESS_FAILED,
};

/* What a server knows of an entity (found by the owner between hello and challenge). */
struct auth_sess_keys {
	struct auth_key key[2]; /* the current key, then the previous one inside its grace */
	unsigned int nkeys;	/* 1 or 2 */
	uint64_t old_until_us;	/* key[1] authenticates until then (wall clock) */
	struct auth_caps caps;
};

/* The connection's facts, as this side sees them. */
struct auth_sess_conn {
	uint8_t fsid[AUTH_FSID_LEN];
	char local_addr[AUTH_ADDR_MAX]; /* "ip:port" */
	char peer_addr[AUTH_ADDR_MAX];
	uint8_t prelude[AUTH_PRELUDE_LEN]; /* auth_sess_prelude() */
};

struct auth_mac_ctx;

struct auth_sess {
	enum auth_role role;
	enum auth_sess_state state;
	struct auth_hs hs;
	struct auth_hs_hello hello;   /* server: the client's HELLO (its ticket: a stale view) */
	char peer[AUTH_ENTITY_MAX];   /* the peer's entity: verified once OPEN */
	struct auth_caps caps;	      /* server: the peer's caps, from its keys */
	uint64_t valid_until_us;      /* 0, or when the key this session used stops (rotation) */
	struct auth_mac_ctx *tx, *rx; /* frame MAC keys; tx from PROOF (client) or DONE (server) */
	uint64_t tx_seq, rx_seq;
	struct auth_sess_keys cand; /* server: the keys a PROOF is tried against */
	bool gmac; /* frame MACs are GMAC: set by the owner before the keys are derived */
};

void auth_sess_init(struct auth_sess *s);
/* Wipes every key and frees the MAC contexts; s can be reused after auth_sess_init. */
void auth_sess_clear(struct auth_sess *s);

/* SHA-256 of the bytes exchanged before the handshake: client's, then server's (-EINVAL: too long).
 */
#define AUTH_PRELUDE_PART_MAX 512
int auth_sess_prelude(const void *client, size_t clen, const void *server, size_t slen,
		      uint8_t out[AUTH_PRELUDE_LEN]);

/*
 * Client: HELLO as entity with key, to server (the entity we expect, "mon.").
 * Writes the message to out[cap] and its length to *len_out.
 */
int auth_sess_client_start(struct auth_sess *s, const char *entity, const struct auth_key *key,
			   const char *server, void *out, size_t cap, size_t *len_out);
/*
 * Client, method TICKET (to an OSD): HELLO as entity presenting the sealed
 * ticket a monitor granted; the proofs are under the ticket's session key,
 * which only the monitors and the holders of the service keys can know.
 */
int auth_sess_client_start_ticket(struct auth_sess *s, const char *entity, const void *ticket,
				  uint32_t ticket_len, const struct auth_key *ticket_key,
				  const char *server, void *out, size_t cap, size_t *len_out);
/*
 * Client: CHALLENGE in (with the connection's facts, known by now), PROOF
 * out; the session key is derived and frames may be sent MAC'd. -EACCES
 * when the server is not whom we asked for or reflects our nonce.
 */
int auth_sess_client_challenge(struct auth_sess *s, const struct auth_sess_conn *conn,
			       const void *msg, size_t len, struct proto_err *err, void *out,
			       size_t cap, size_t *len_out);
/* Client: DONE in. 0: the server proved it holds our key; the session is open. */
int auth_sess_client_done(struct auth_sess *s, const void *msg, size_t len, struct proto_err *err);

/*
 * Server: HELLO in; s->hello.client is the entity it claims (unverified),
 * s->hello.method how it proves it. With method TICKET, s->hello.ticket
 * points into msg (valid during this call only: the caller copies it, and
 * refuses the method where it serves no tickets). -EBADMSG (malformed).
 */
int auth_sess_server_hello(struct auth_sess *s, const void *msg, size_t len, struct proto_err *err);
/*
 * Server: CHALLENGE out, as self ("mon."), for the claimed entity's keys.
 * -EACCES when the hello asked for another server or reflects our nonce.
 */
int auth_sess_server_challenge(struct auth_sess *s, const char *self,
			       const struct auth_sess_conn *conn, const struct auth_sess_keys *keys,
			       struct proto_err *err, void *out, size_t cap, size_t *len_out);
/*
 * Server: PROOF in, DONE out. 0: the peer holds one of the keys; the
 * session is open, s->peer and s->caps are its entity and caps and
 * s->valid_until_us is set when it used the previous key. -EACCES: no key
 * verifies.
 */
int auth_sess_server_proof(struct auth_sess *s, const void *msg, size_t len, struct proto_err *err,
			   void *out, size_t cap, size_t *len_out);

/* Whether this side may send MAC'd frames / must verify received ones. */
static inline bool auth_sess_tx_ready(const struct auth_sess *s)
{
	return s->tx != NULL && s->state != AUTH_SESS_FAILED;
}
static inline bool auth_sess_open(const struct auth_sess *s)
{
	return s->state == AUTH_SESS_OPEN;
}

enum auth_sess_kind {
	AUTH_SESS_FRAME = 0,
	AUTH_SESS_BULK = 1, /* a large frame's content, bound to its announcement's seq */
};

/* The MAC of the next frame we send (consumes a sequence number). */
int auth_sess_seal(struct auth_sess *s, const void *frame, size_t len,
		   uint8_t mac_out[AUTH_SESS_MAC_LEN]);
/* The sequence number the next auth_sess_seal will use. */
static inline uint64_t auth_sess_tx_next(const struct auth_sess *s)
{
	return s->tx_seq;
}
/* The MAC of a large frame's content announced by the frame of sequence seq. */
int auth_sess_seal_bulk(struct auth_sess *s, uint64_t seq, const void *frame, size_t len,
			uint8_t mac_out[AUTH_SESS_MAC_LEN]);
/*
 * Verify the next received frame: 0 (its sequence number consumed), or
 * -EACCES, after which the session is failed and nothing more verifies.
 */
int auth_sess_verify(struct auth_sess *s, const void *frame, size_t len,
		     const uint8_t mac[AUTH_SESS_MAC_LEN]);
/* The sequence number of the frame auth_sess_verify accepted last. */
static inline uint64_t auth_sess_rx_last(const struct auth_sess *s)
{
	return s->rx_seq - 1;
}
int auth_sess_verify_bulk(struct auth_sess *s, uint64_t seq, const void *frame, size_t len,
			  const uint8_t mac[AUTH_SESS_MAC_LEN]);

/*
 * The key for what one side seals to the other over this session (a ticket
 * grant, the service keys for an OSD: auth/ticket.h): HKDF of the session
 * key under a label of its own, so it is never a frame MAC key. Both sides
 * derive the same. 0, or -ENOTCONN until the session is open.
 */
int auth_sess_seal_key(const struct auth_sess *s, struct auth_key *key_out);

#endif
