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
 * Times are wall-clock microseconds (CLOCK_REALTIME): tickets cross hosts.
 */
#ifndef WEFT_AUTH_TICKET_H
#define WEFT_AUTH_TICKET_H

#include <stddef.h>
#include <stdint.h>

#include "auth/caps.h"
#include "auth/crypto.h"
#include "auth/key.h"
#include "proto/codec.h"

#define AUTH_TICKET_VERSION 1
#define AUTH_SVC_KEYS_MAX 4 /* current + the retired ones inside their grace */

struct auth_ticket {
	char entity[AUTH_ENTITY_MAX];
	struct auth_caps caps;
	uint64_t issued_us;
	uint64_t expires_us;
	struct auth_key session;
};

struct auth_svc_key {
	uint32_t id;
	struct auth_key key;
	uint64_t created_us;
	uint64_t retired_us; /* 0 while current */
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
/* The current key, or NULL before the first rotation. */
const struct auth_svc_key *auth_svc_current(const struct auth_svc_keys *sk);
void auth_svc_keys_clear(struct auth_svc_keys *sk);

/* A new ticket valid for ttl_us from now_us, with a fresh session key. */
int auth_ticket_issue(const char *entity, const struct auth_caps *caps, uint64_t now_us,
		      uint64_t ttl_us, struct auth_ticket *t_out);
/* Whether a holder should renew: past three quarters of its lifetime. */
bool auth_ticket_renew_due(const struct auth_ticket *t, uint64_t now_us);

/* The plaintext body (bounded codec, like proto/). */
int auth_ticket_encode(struct proto_enc *enc, const struct auth_ticket *t);
int auth_ticket_decode(const void *buf, size_t len, struct proto_err *err,
		       struct auth_ticket *t_out);

#define AUTH_SEALED_OVERHEAD (1 + 4 + AUTH_AEAD_IV_LEN + 4 + AUTH_AEAD_TAG_LEN)
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
int auth_ticket_unseal(const struct auth_svc_keys *sk, const void *buf, size_t len,
		       uint64_t now_us, struct proto_err *err, struct auth_ticket *t_out);

/*
 * The grant: what the monitor sends a client after the handshake, over its
 * session: the sealed ticket, and the ticket's session key and expiry
 * sealed under the connection's session key (so only that client learns
 * it). Layout: blob32 sealed ticket | u64 expires_us | 12-byte IV |
 * 32 bytes ciphertext of the session key | 16-byte tag.
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
		     const void *sealed, size_t sealed_len, void *out, size_t cap,
		     size_t *len_out);
int auth_grant_decode(const void *buf, size_t len, struct proto_err *err,
		      struct auth_grant_msg *m_out);
int auth_grant_encode(struct proto_enc *enc, const struct auth_grant_msg *m);
/* The client's side: the ticket's session key, -EBADMSG when it does not open. */
int auth_grant_open(const struct auth_key *conn_session, const struct auth_grant_msg *m,
		    struct auth_key *ticket_key_out);

#endif
