/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mutual handshake, as pure state machines and message codecs (the
 * messenger carries the bytes). Four messages:
 *
 *   client -> server  HELLO      version, method, client entity, the server
 *                                entity it expects, nonce_c [, ticket]
 *   server -> client  CHALLENGE  server entity, nonce_s
 *   client -> server  PROOF      HMAC(K, "weft-auth-v1 client proof" || T)
 *   server -> client  DONE       HMAC(K, "weft-auth-v1 server proof" || T)
 *
 * T, the transcript, binds the version, the method, the cluster fsid,
 * both entity names, both connection addresses (as "ip:port", the client's
 * own address as the server sees it), both nonces and a digest of what the
 * connection carried before the handshake (the prelude: the messenger's
 * version hellos). K is the client's
 * long-term key (method KEY, client -> mon) or the session key inside a
 * ticket (method TICKET, client -> OSD, the ticket carried in HELLO).
 *
 * Why this shape: a fresh nonce from each side means a recorded PROOF or
 * DONE never verifies again (replay); the role label differs between the
 * two proofs and the names sit in fixed roles, so a proof cannot be
 * reflected back as the other side's (reflection); the fsid and the
 * addresses stop a handshake from being relayed to another cluster or
 * another connection. Both sides then derive the session key
 * HKDF-SHA256(K, salt = nonce_c || nonce_s, info = label || SHA-256(T)).
 *
 * Every decoder is bounded like proto/codec.c and refuses bad input with
 * -EBADMSG and one line in struct proto_err; a proof that does not verify
 * is -EACCES; a message out of order is -EPROTO.
 */
#ifndef WEFT_AUTH_HANDSHAKE_H
#define WEFT_AUTH_HANDSHAKE_H

#include <stddef.h>
#include <stdint.h>

#include "auth/crypto.h"
#include "auth/key.h"
#include "proto/codec.h"

#define AUTH_HS_VERSION	     1
#define AUTH_NONCE_LEN	     32
#define AUTH_FSID_LEN	     16
#define AUTH_ADDR_MAX	     64	  /* "[v6]:port" with room */
#define AUTH_TICKET_WIRE_MAX 4096 /* a sealed ticket in HELLO */
/*
 * The entity an OSD proves to be in a TICKET handshake: not one OSD but
 * whoever holds the service keys that open the ticket (as "mon." is
 * whoever holds the monitors' key). Valid only as a handshake's entity.
 */
#define AUTH_OSD_SERVICE "osd."
#define AUTH_PRELUDE_LEN     32	  /* SHA-256 of the bytes before the handshake */

enum auth_method {
	AUTH_METHOD_KEY = 1,	/* K = the entity's key (client/OSD -> mon) */
	AUTH_METHOD_TICKET = 2, /* K = the ticket's session key (client -> OSD) */
};

enum auth_hs_kind {
	AUTH_HS_HELLO = 1,
	AUTH_HS_CHALLENGE = 2,
	AUTH_HS_PROOF = 3,
	AUTH_HS_DONE = 4,
};

struct auth_hs_hello {
	uint8_t version;
	uint8_t method; /* enum auth_method */
	char client[AUTH_ENTITY_MAX];
	char server[AUTH_ENTITY_MAX];
	uint8_t nonce_c[AUTH_NONCE_LEN];
	uint32_t ticket_len; /* method TICKET: the sealed ticket (a view into the input) */
	const uint8_t *ticket;
};

struct auth_hs_challenge {
	char server[AUTH_ENTITY_MAX];
	uint8_t nonce_s[AUTH_NONCE_LEN];
};

struct auth_hs_proof {
	uint8_t mac[AUTH_MAC_LEN];
};

/* Each message starts with its kind (u8), so a message of the wrong kind is refused. */
int auth_hs_hello_encode(struct proto_enc *enc, const struct auth_hs_hello *m);
int auth_hs_hello_decode(const void *buf, size_t len, struct proto_err *err,
			 struct auth_hs_hello *m_out);
int auth_hs_challenge_encode(struct proto_enc *enc, const struct auth_hs_challenge *m);
int auth_hs_challenge_decode(const void *buf, size_t len, struct proto_err *err,
			     struct auth_hs_challenge *m_out);
/* kind: AUTH_HS_PROOF or AUTH_HS_DONE (same layout). */
int auth_hs_proof_encode(struct proto_enc *enc, enum auth_hs_kind kind,
			 const struct auth_hs_proof *m);
int auth_hs_proof_decode(const void *buf, size_t len, enum auth_hs_kind kind, struct proto_err *err,
			 struct auth_hs_proof *m_out);

/* Everything the transcript binds. */
struct auth_hs_bind {
	uint8_t version;
	uint8_t method;
	uint8_t fsid[AUTH_FSID_LEN];
	char client[AUTH_ENTITY_MAX];
	char server[AUTH_ENTITY_MAX];
	char client_addr[AUTH_ADDR_MAX];
	char server_addr[AUTH_ADDR_MAX];
	uint8_t nonce_c[AUTH_NONCE_LEN];
	uint8_t nonce_s[AUTH_NONCE_LEN];
	/*
	 * SHA-256 of what the connection said before the handshake (the
	 * messenger's two version hellos, the client's first): an attacker
	 * who edits a hello (to strip a feature) breaks both proofs.
	 */
	uint8_t prelude[AUTH_PRELUDE_LEN];
};

enum auth_role {
	AUTH_ROLE_CLIENT = 1,
	AUTH_ROLE_SERVER = 2,
};

#define AUTH_TRANSCRIPT_MAX 512

/* The transcript's bytes: 0 and *len_out, or -ENOBUFS. */
int auth_hs_transcript(const struct auth_hs_bind *b, uint8_t *buf, size_t cap, size_t *len_out);
/* The proof of role over transcript bytes t. */
int auth_hs_mac(const struct auth_key *k, enum auth_role role, const uint8_t *t, size_t tlen,
		uint8_t mac_out[AUTH_MAC_LEN]);
/* 0 when mac is role's proof over t under k, -EACCES when not. */
int auth_hs_mac_verify(const struct auth_key *k, enum auth_role role, const uint8_t *t, size_t tlen,
		       const uint8_t mac[AUTH_MAC_LEN]);
int auth_hs_session_key(const struct auth_key *k, const struct auth_hs_bind *b,
			struct auth_key *key_out);

enum auth_hs_state {
	AUTH_HS_S_INIT = 0,
	AUTH_HS_S_SENT_HELLO,	  /* client */
	AUTH_HS_S_SENT_PROOF,	  /* client */
	AUTH_HS_S_SENT_CHALLENGE, /* server */
	AUTH_HS_S_DONE,
	AUTH_HS_S_FAILED,
};

/* One side of one connection's handshake. */
struct auth_hs {
	enum auth_role role;
	enum auth_hs_state state;
	struct auth_hs_bind bind;
	struct auth_key key;	 /* K */
	struct auth_key session; /* valid in AUTH_HS_S_DONE */
};

/*
 * Client: fill bind's fsid, client, server, client_addr, server_addr and
 * method; writes HELLO (with a fresh nonce_c, and ticket for method
 * TICKET) into out.
 */
int auth_hs_client_start(struct auth_hs *hs, const struct auth_hs_bind *bind,
			 const struct auth_key *k, const void *ticket, uint32_t ticket_len,
			 void *out, size_t cap, size_t *len_out);
/* Client: CHALLENGE in, PROOF out. -EACCES when the server is not who we asked for. */
int auth_hs_client_on_challenge(struct auth_hs *hs, const void *msg, size_t len,
				struct proto_err *err, void *out, size_t cap, size_t *len_out);
/* Client: DONE in; then hs->session holds the session key. */
int auth_hs_client_on_done(struct auth_hs *hs, const void *msg, size_t len, struct proto_err *err);

/*
 * Server: after auth_hs_hello_decode() and finding K for hello->client (and
 * for method TICKET after unsealing the ticket), start the server side:
 * fsid, server entity and both addresses from the connection in bind.
 * Writes CHALLENGE with a fresh nonce_s. -EACCES when the hello names
 * another server or reuses our nonce.
 */
int auth_hs_server_start(struct auth_hs *hs, const struct auth_hs_bind *bind,
			 const struct auth_hs_hello *hello, const struct auth_key *k,
			 struct proto_err *err, void *out, size_t cap, size_t *len_out);
/* Server: PROOF in, DONE out; then hs->session holds the session key. */
int auth_hs_server_on_proof(struct auth_hs *hs, const void *msg, size_t len, struct proto_err *err,
			    void *out, size_t cap, size_t *len_out);
/* Wipe the keys. */
void auth_hs_clear(struct auth_hs *hs);

#endif
