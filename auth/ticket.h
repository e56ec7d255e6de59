/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tickets: what a monitor hands an authenticated client so that OSDs can
 * check it without knowing every client's key (cephx's idea).
 *
 * A ticket carries the entity, its caps, when it was issued and when it
 * expires, and a fresh session key. It is sealed with AES-256-GCM under
 * the current service key, which the monitors rotate and share with the
 * OSDs; the sealed form names the key by id:
 *
 *	u8 version | u32 key_id | 12-byte IV | u32 length | ciphertext | 16-byte tag
 *
 * with version and key_id in the AEAD's additional data, so neither can be
 * changed without the tag failing. The client learns the session key from
 * the monitor over its authenticated session (auth_grant_*), presents the
 * sealed ticket in its HELLO to an OSD, and proves it knows the session
 * key with the same handshake (method TICKET).
 *
 * Service keys rotate: the new key seals, a retired key still opens
 * tickets for a grace (at least a ticket's lifetime, so no valid ticket
 * dies with its key), then it is dropped and its tickets fail.
 *
 * The monitors keep the set in their replicated state and rotate it with
 * auth_svc_advance(): besides the current key there is a *pending* one,
 * made a rotation ahead, which seals nothing yet but is already handed to
 * the OSDs; when it becomes current, the OSDs hold it already, so no
 * ticket arrives sealed under a key they have not fetched (Ceph's
 * previous/current/next). auth_svc_rotate() (a new key, current at once)
 * is the simple form for one process.
 * Times are wall-clock microseconds (CLOCK_REALTIME): tickets cross hosts.
 */
#ifndef WEFT_AUTH_TICKET_H
#define WEFT_AUTH_TICKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/caps.h"
#include "auth/crypto.h"
#include "auth/key.h"
#include "proto/codec.h"

#define AUTH_TICKET_VERSION 1
#define AUTH_SVC_KEYS_MAX   6 /* pending + current + the retired ones inside their grace */

struct auth_ticket {
	char entity[AUTH_ENTITY_MAX];
	struct auth_caps caps;
	uint64_t issued_us;
	uint64_t expires_us;
	struct auth_key session;
};

enum auth_svc_state {
	AUTH_SVC_PENDING = 0, /* made ahead: handed to the OSDs, sealing nothing yet */
	AUTH_SVC_CURRENT = 1, /* seals new tickets */
	AUTH_SVC_RETIRED = 2, /* opens tickets for the grace after retired_us */
};

struct auth_svc_key {
	uint32_t id;
	uint8_t state; /* enum auth_svc_state */
	struct auth_key key;
	uint64_t created_us;
	uint64_t activated_us; /* when it became current (0 while pending) */
	uint64_t retired_us;   /* when it retired (0 before) */
};

struct auth_svc_keys {
	struct auth_svc_key keys[AUTH_SVC_KEYS_MAX];
	unsigned int count;
	uint64_t grace_us; /* how long a retired key still opens tickets */
};

/* Empty set with a grace; the first auth_svc_rotate() makes key 1. */
void auth_svc_keys_init(struct auth_svc_keys *sk, uint64_t grace_us);
/*
 * A new current key (id = the last one + 1); the old current one retires
 * at now_us; keys retired more than the grace ago are dropped (wiped).
 */
int auth_svc_rotate(struct auth_svc_keys *sk, uint64_t now_us);
/*
 * The monitors' rotation, deterministic (the leader chose key and now_us,
 * every replica applies the same): the current key retires at now_us, the
 * pending one becomes current, key (id new_id, which must be the last id
 * + 1, or 1 in an empty set) becomes the pending one, and the grace
 * becomes grace_us; keys retired a grace ago or more are dropped, and the
 * oldest retired ones while the set would exceed AUTH_SVC_KEYS_MAX.
 * 0, or -ESTALE when new_id is not the next id (nothing changes). From
 * an empty set, two calls make a current and a pending key.
 */
int auth_svc_advance(struct auth_svc_keys *sk, uint32_t new_id, const struct auth_key *key,
		     uint64_t now_us, uint64_t grace_us);
/* The id the next auth_svc_advance() must give. */
uint32_t auth_svc_next_id(const struct auth_svc_keys *sk);
/* The current key, or NULL before the first rotation. */
const struct auth_svc_key *auth_svc_current(const struct auth_svc_keys *sk);
/* The pending key (auth_svc_advance() only), or NULL. */
const struct auth_svc_key *auth_svc_pending(const struct auth_svc_keys *sk);
void auth_svc_keys_clear(struct auth_svc_keys *sk);
/*
 * Wire and snapshot form of a whole set (bounded like proto/):
 *   u64 grace_us | u8 count (<= AUTH_SVC_KEYS_MAX) | count x
 *   (u32 id | u8 state | bytes[32] key | u64 created_us | u64 activated_us |
 *    u64 retired_us)
 * Ids strictly ascending from 1; states in order (retired keys, at most one
 * current, at most one pending: the newest); times in order.
 */
void auth_svc_keys_encode(struct proto_enc *enc, const struct auth_svc_keys *sk);
int auth_svc_keys_decode(struct proto_dec *dec, struct auth_svc_keys *sk_out);
/*
 * The set as the monitor hands it to an OSD (AUTH_SVC_KEYS_REPLY), sealed
 * under the OSD's session (its seal key, auth_sess_seal_key) with AES-256-GCM:
 *	12-byte IV | ciphertext of auth_svc_keys_encode() | 16-byte tag
 * with a label as additional data, so nothing else sealed under that
 * session opens as a set. open: 0, -EBADMSG (malformed, or the tag does
 * not verify) with one line in err.
 */
#define AUTH_SVC_KEYS_WIRE_MAX                                                                     \
	(AUTH_AEAD_IV_LEN + 8 + 1 + AUTH_SVC_KEYS_MAX * (4 + 1 + AUTH_KEY_LEN + 24) +              \
	 AUTH_AEAD_TAG_LEN)
int auth_svc_keys_seal(const struct auth_key *session, const struct auth_svc_keys *sk, void *out,
		       size_t cap, size_t *len_out);
int auth_svc_keys_open(const struct auth_key *session, const void *buf, size_t len,
		       struct proto_err *err, struct auth_svc_keys *sk_out);
/* A short fingerprint of a key (hex of 8 bytes of SHA-256 over a label and the key), for display.
 */
int auth_svc_key_fingerprint(const struct auth_svc_key *k, char out[17]);

/* A new ticket valid for ttl_us from now_us, with a fresh session key. */
int auth_ticket_issue(const char *entity, const struct auth_caps *caps, uint64_t now_us,
		      uint64_t ttl_us, struct auth_ticket *t_out);
/* Whether a holder should renew: past three quarters of its lifetime. */
bool auth_ticket_renew_due(const struct auth_ticket *t, uint64_t now_us);

/* The plaintext body (bounded codec, like proto/). */
int auth_ticket_encode(struct proto_enc *enc, const struct auth_ticket *t);
int auth_ticket_decode(const void *buf, size_t len, struct proto_err *err,
		       struct auth_ticket *t_out);

#define AUTH_SEALED_OVERHEAD  (1 + 4 + AUTH_AEAD_IV_LEN + 4 + AUTH_AEAD_TAG_LEN)
#define AUTH_TICKET_PLAIN_MAX 3072

/* Seal under the current service key into out (cap >= the result). */
int auth_ticket_seal(const struct auth_svc_keys *sk, const struct auth_ticket *t, void *out,
		     size_t cap, size_t *len_out);
/*
 * Open and check a sealed ticket at now_us. 0, or with one line in err:
 * -EBADMSG  malformed, or the tag does not verify (forged or damaged)
 * -ENOKEY   sealed under a key id this side does not hold
 * -EKEYEXPIRED  the key retired more than the grace ago, or the ticket expired
 */
int auth_ticket_unseal(const struct auth_svc_keys *sk, const void *buf, size_t len, uint64_t now_us,
		       struct proto_err *err, struct auth_ticket *t_out);

/*
 * An OSD's check of the ticket a peer presents in a TICKET hello while
 * claiming to be claimed: open it with the service keys at now_us, check it
 * was issued to claimed, and give its session key and caps as the keys the
 * handshake proves (keys_out) and its expiry. 0; -ENOKEY: sealed under a key
 * id sk lacks (fetch the keys again); -EACCES: forged, expired, retired past
 * its grace, or another entity's; why: one line.
 */
struct auth_sess_keys;
int auth_ticket_accept(const struct auth_svc_keys *sk, const void *sealed, size_t len,
		       const char *claimed, uint64_t now_us, struct auth_sess_keys *keys_out,
		       uint64_t *expires_us, char *why, size_t whycap);

/*
 * The grant: what the monitor sends a client after the handshake, over its
 * session: the sealed ticket, and the ticket's session key and expiry
 * sealed under the connection's seal key (auth_sess_seal_key, so only
 * that client learns it; conn_session below). Layout: blob32 sealed
 * ticket | u64 expires_us | 12-byte IV | 32 bytes ciphertext of the
 * session key | 16-byte tag.
 */
struct auth_grant_msg {
	const uint8_t *ticket; /* view into the input on decode */
	uint32_t ticket_len;
	uint64_t expires_us;
	uint8_t iv[AUTH_AEAD_IV_LEN];
	uint8_t sealed_key[AUTH_KEY_LEN];
	uint8_t tag[AUTH_AEAD_TAG_LEN];
};

int auth_grant_build(const struct auth_key *conn_session, const struct auth_ticket *t,
		     const void *sealed, size_t sealed_len, void *out, size_t cap, size_t *len_out);
int auth_grant_decode(const void *buf, size_t len, struct proto_err *err,
		      struct auth_grant_msg *m_out);
int auth_grant_encode(struct proto_enc *enc, const struct auth_grant_msg *m);
/* The client's side: the ticket's session key, -EBADMSG when it does not open. */
int auth_grant_open(const struct auth_key *conn_session, const struct auth_grant_msg *m,
		    struct auth_key *ticket_key_out);

/*
 * What a ticket's holder (the mon client of a client or an OSD's peer)
 * keeps: the sealed ticket to present in HELLO and its session key. It
 * asks for a new one from three quarters of the lifetime on (counted from
 * when the grant arrived: the holder does not see the sealed issue time),
 * and keeps using the one it has until the new one is in hand, so renewal
 * never interrupts I/O. A grant that does not open or has expired never
 * replaces a good ticket.
 */
struct auth_ticket_holder {
	uint8_t ticket[AUTH_TICKET_PLAIN_MAX + AUTH_SEALED_OVERHEAD];
	uint32_t ticket_len;
	struct auth_key key; /* the ticket's session key */
	uint64_t got_us, renew_us, expires_us;
	bool have;
};

/* A grant from the monitor (the blob of AUTH_TICKET_REPLY): 0, or -EBADMSG with why in err. */
int auth_ticket_holder_take(struct auth_ticket_holder *h, const struct auth_key *conn_session,
			    const void *grant, size_t len, uint64_t now_us, struct proto_err *err);
/* No ticket yet, or past three quarters of its lifetime: ask for a new one. */
bool auth_ticket_holder_renew_due(const struct auth_ticket_holder *h, uint64_t now_us);
/* A ticket to present now (not expired). */
bool auth_ticket_holder_valid(const struct auth_ticket_holder *h, uint64_t now_us);
void auth_ticket_holder_clear(struct auth_ticket_holder *h);

#endif
