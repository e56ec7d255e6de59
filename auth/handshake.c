/* SPDX-License-Identifier: Apache-2.0 */
#include "auth/handshake.h"

#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>

static const char auth_label_client[] = "weft-auth-v1 client proof";
static const char auth_label_server[] = "weft-auth-v1 server proof";
static const char auth_label_session[] = "weft-auth-v1 session key";
static const char auth_label_transcript[] = "weft-auth-v1 transcript";

/* ---------------------------------------------------------------- codecs */

static void auth_put_str(struct proto_enc *enc, const char *s)
{
	proto_enc_put_str16(enc, s, strlen(s));
}

/* An entity name field: bounded, and it must parse as an entity. */
static int auth_get_entity(struct proto_dec *dec, const char *field, char *dst)
{
	struct auth_entity ent;
	char why[200];

	if (proto_dec_get_str16(dec, field, AUTH_ENTITY_MAX - 1, dst, AUTH_ENTITY_MAX,
				&(size_t){0}) != 0)
		return -EBADMSG;
	/* the OSDs as a service: whoever holds the service keys (method TICKET) */
	if (strcmp(dst, AUTH_OSD_SERVICE) == 0)
		return 0;
	if (auth_entity_parse(dst, &ent, why, sizeof(why)) != 0)
		return proto_dec_fail(dec, "%s: %s", field, why);
	return 0;
}

static int auth_get_kind(struct proto_dec *dec, enum auth_hs_kind want)
{
	uint8_t kind;

	if (proto_dec_get_u8(dec, "kind", &kind) != 0)
		return -EBADMSG;
	if (kind != want)
		return proto_dec_fail(dec, "kind: %u, expected %u", kind, want);
	return 0;
}

int auth_hs_hello_encode(struct proto_enc *enc, const struct auth_hs_hello *m)
{
	proto_enc_put_u8(enc, AUTH_HS_HELLO);
	proto_enc_put_u8(enc, m->version);
	proto_enc_put_u8(enc, m->method);
	auth_put_str(enc, m->client);
	auth_put_str(enc, m->server);
	proto_enc_put_bytes(enc, m->nonce_c, sizeof(m->nonce_c));
	proto_enc_put_blob32(enc, m->ticket, m->ticket_len);
	return enc->err;
}

int auth_hs_hello_decode(const void *buf, size_t len, struct proto_err *err,
			 struct auth_hs_hello *m_out)
{
	struct auth_hs_hello m = {0};
	struct proto_dec dec;
	const void *ticket = NULL;

	proto_dec_init(&dec, buf, len, "auth_hello", err);
	if (auth_get_kind(&dec, AUTH_HS_HELLO) != 0)
		return -EBADMSG;
	proto_dec_get_u8(&dec, "version", &m.version);
	proto_dec_get_u8(&dec, "method", &m.method);
	if (dec.err == 0 && m.version != AUTH_HS_VERSION)
		return proto_dec_fail(&dec, "version: %u is not supported (this side speaks %u)",
				      m.version, AUTH_HS_VERSION);
	if (dec.err == 0 && m.method != AUTH_METHOD_KEY && m.method != AUTH_METHOD_TICKET)
		return proto_dec_fail(&dec, "method: %u is not key (1) or ticket (2)", m.method);
	if (auth_get_entity(&dec, "client", m.client) != 0 ||
	    auth_get_entity(&dec, "server", m.server) != 0)
		return -EBADMSG;
	proto_dec_get_bytes(&dec, "nonce_c", m.nonce_c, sizeof(m.nonce_c));
	proto_dec_get_blob32(&dec, "ticket", AUTH_TICKET_WIRE_MAX, &ticket, &m.ticket_len);
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;
	if (m.method == AUTH_METHOD_KEY && m.ticket_len != 0)
		return proto_err_set(err, NULL, "auth_hello.ticket: given with method key");
	if (m.method == AUTH_METHOD_TICKET && m.ticket_len == 0)
		return proto_err_set(err, NULL, "auth_hello.ticket: missing with method ticket");
	m.ticket = ticket;
	*m_out = m;
	return 0;
}

int auth_hs_challenge_encode(struct proto_enc *enc, const struct auth_hs_challenge *m)
{
	proto_enc_put_u8(enc, AUTH_HS_CHALLENGE);
	auth_put_str(enc, m->server);
	proto_enc_put_bytes(enc, m->nonce_s, sizeof(m->nonce_s));
	return enc->err;
}

int auth_hs_challenge_decode(const void *buf, size_t len, struct proto_err *err,
			     struct auth_hs_challenge *m_out)
{
	struct auth_hs_challenge m;
	struct proto_dec dec;

	proto_dec_init(&dec, buf, len, "auth_challenge", err);
	if (auth_get_kind(&dec, AUTH_HS_CHALLENGE) != 0 ||
	    auth_get_entity(&dec, "server", m.server) != 0)
		return -EBADMSG;
	proto_dec_get_bytes(&dec, "nonce_s", m.nonce_s, sizeof(m.nonce_s));
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

int auth_hs_proof_encode(struct proto_enc *enc, enum auth_hs_kind kind,
			 const struct auth_hs_proof *m)
{
	proto_enc_put_u8(enc, (uint8_t)kind);
	proto_enc_put_bytes(enc, m->mac, sizeof(m->mac));
	return enc->err;
}

int auth_hs_proof_decode(const void *buf, size_t len, enum auth_hs_kind kind, struct proto_err *err,
			 struct auth_hs_proof *m_out)
{
	struct auth_hs_proof m;
	struct proto_dec dec;

	proto_dec_init(&dec, buf, len, kind == AUTH_HS_DONE ? "auth_done" : "auth_proof", err);
	if (auth_get_kind(&dec, kind) != 0)
		return -EBADMSG;
	proto_dec_get_bytes(&dec, "mac", m.mac, sizeof(m.mac));
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

/* ------------------------------------------------------------ transcript */

int auth_hs_transcript(const struct auth_hs_bind *b, uint8_t *buf, size_t cap, size_t *len_out)
{
	struct proto_enc enc;

	proto_enc_init(&enc, buf, cap);
	auth_put_str(&enc, auth_label_transcript);
	proto_enc_put_u8(&enc, b->version);
	proto_enc_put_u8(&enc, b->method);
	proto_enc_put_bytes(&enc, b->fsid, sizeof(b->fsid));
	/* Length-prefixed fields: "ab"+"c" and "a"+"bc" are different transcripts. */
	auth_put_str(&enc, b->client);
	auth_put_str(&enc, b->server);
	auth_put_str(&enc, b->client_addr);
	auth_put_str(&enc, b->server_addr);
	proto_enc_put_bytes(&enc, b->nonce_c, sizeof(b->nonce_c));
	proto_enc_put_bytes(&enc, b->nonce_s, sizeof(b->nonce_s));
	proto_enc_put_bytes(&enc, b->prelude, sizeof(b->prelude));
	return proto_enc_finish(&enc, len_out);
}

int auth_hs_mac(const struct auth_key *k, enum auth_role role, const uint8_t *t, size_t tlen,
		uint8_t mac_out[AUTH_MAC_LEN])
{
	const char *label = role == AUTH_ROLE_CLIENT ? auth_label_client : auth_label_server;
	struct auth_iov iov[2] = {{label, strlen(label) + 1}, {t, tlen}};

	return auth_hmac(k, iov, 2, mac_out);
}

int auth_hs_mac_verify(const struct auth_key *k, enum auth_role role, const uint8_t *t, size_t tlen,
		       const uint8_t mac[AUTH_MAC_LEN])
{
	uint8_t want[AUTH_MAC_LEN];
	int rc;

	rc = auth_hs_mac(k, role, t, tlen, want);
	if (rc != 0)
		return rc;
	rc = auth_mac_equal(want, mac) ? 0 : -EACCES;
	OPENSSL_cleanse(want, sizeof(want));
	return rc;
}

int auth_hs_session_key(const struct auth_key *k, const struct auth_hs_bind *b,
			struct auth_key *key_out)
{
	uint8_t t[AUTH_TRANSCRIPT_MAX], salt[2 * AUTH_NONCE_LEN];
	uint8_t info[sizeof(auth_label_session) + 32];
	size_t tlen;
	int rc;

	rc = auth_hs_transcript(b, t, sizeof(t), &tlen);
	if (rc != 0)
		return rc;
	memcpy(salt, b->nonce_c, AUTH_NONCE_LEN);
	memcpy(salt + AUTH_NONCE_LEN, b->nonce_s, AUTH_NONCE_LEN);
	memcpy(info, auth_label_session, sizeof(auth_label_session));
	rc = auth_sha256(t, tlen, info + sizeof(auth_label_session));
	if (rc != 0)
		return rc;
	return auth_hkdf(k, salt, sizeof(salt), info, sizeof(info), key_out);
}

/* The proof of role over hs->bind. */
static int auth_hs_prove(const struct auth_hs *hs, enum auth_role role,
			 uint8_t mac_out[AUTH_MAC_LEN])
{
	uint8_t t[AUTH_TRANSCRIPT_MAX];
	size_t tlen;
	int rc;

	rc = auth_hs_transcript(&hs->bind, t, sizeof(t), &tlen);
	return rc != 0 ? rc : auth_hs_mac(&hs->key, role, t, tlen, mac_out);
}

static int auth_hs_check(const struct auth_hs *hs, enum auth_role role,
			 const uint8_t mac[AUTH_MAC_LEN])
{
	uint8_t t[AUTH_TRANSCRIPT_MAX];
	size_t tlen;
	int rc;

	rc = auth_hs_transcript(&hs->bind, t, sizeof(t), &tlen);
	return rc != 0 ? rc : auth_hs_mac_verify(&hs->key, role, t, tlen, mac);
}

static int auth_hs_finish(struct auth_hs *hs, struct proto_enc *enc, size_t *len_out)
{
	size_t len;
	int rc = proto_enc_finish(enc, &len);

	if (rc != 0) {
		hs->state = AUTH_HS_S_FAILED;
		return rc;
	}
	*len_out = len;
	return 0;
}

static int auth_hs_fail(struct auth_hs *hs, int rc)
{
	hs->state = AUTH_HS_S_FAILED;
	auth_key_wipe(&hs->key);
	auth_key_wipe(&hs->session);
	return rc;
}

/* ---------------------------------------------------------------- client */

int auth_hs_client_start(struct auth_hs *hs, const struct auth_hs_bind *bind,
			 const struct auth_key *k, const void *ticket, uint32_t ticket_len,
			 void *out, size_t cap, size_t *len_out)
{
	struct auth_hs_hello hello = {0};
	struct proto_enc enc;
	int rc;

	memset(hs, 0, sizeof(*hs));
	hs->role = AUTH_ROLE_CLIENT;
	hs->bind = *bind;
	hs->bind.version = AUTH_HS_VERSION;
	memset(hs->bind.nonce_s, 0, sizeof(hs->bind.nonce_s));
	hs->key = *k;
	rc = auth_random(hs->bind.nonce_c, sizeof(hs->bind.nonce_c));
	if (rc != 0)
		return auth_hs_fail(hs, rc);
	hello.version = AUTH_HS_VERSION;
	hello.method = hs->bind.method;
	memcpy(hello.client, hs->bind.client, sizeof(hello.client));
	memcpy(hello.server, hs->bind.server, sizeof(hello.server));
	memcpy(hello.nonce_c, hs->bind.nonce_c, sizeof(hello.nonce_c));
	hello.ticket = ticket;
	hello.ticket_len = ticket_len;
	proto_enc_init(&enc, out, cap);
	auth_hs_hello_encode(&enc, &hello);
	rc = auth_hs_finish(hs, &enc, len_out);
	if (rc != 0)
		return auth_hs_fail(hs, rc);
	hs->state = AUTH_HS_S_SENT_HELLO;
	return 0;
}

int auth_hs_client_on_challenge(struct auth_hs *hs, const void *msg, size_t len,
				struct proto_err *err, void *out, size_t cap, size_t *len_out)
{
	struct auth_hs_challenge ch;
	struct auth_hs_proof proof;
	struct proto_enc enc;
	int rc;

	if (hs->role != AUTH_ROLE_CLIENT || hs->state != AUTH_HS_S_SENT_HELLO) {
		proto_err_set(err, NULL, "auth_challenge: out of order");
		return auth_hs_fail(hs, -EPROTO);
	}
	rc = auth_hs_challenge_decode(msg, len, err, &ch);
	if (rc != 0)
		return auth_hs_fail(hs, rc);
	if (strcmp(ch.server, hs->bind.server) != 0) {
		proto_err_set(err, NULL, "auth_challenge: server is %s, expected %s", ch.server,
			      hs->bind.server);
		return auth_hs_fail(hs, -EACCES);
	}
	/* Our own nonce echoed back is a reflection attempt. */
	if (CRYPTO_memcmp(ch.nonce_s, hs->bind.nonce_c, AUTH_NONCE_LEN) == 0) {
		proto_err_set(err, NULL, "auth_challenge: the server's nonce is ours (reflected)");
		return auth_hs_fail(hs, -EACCES);
	}
	memcpy(hs->bind.nonce_s, ch.nonce_s, AUTH_NONCE_LEN);
	rc = auth_hs_prove(hs, AUTH_ROLE_CLIENT, proof.mac);
	if (rc != 0)
		return auth_hs_fail(hs, rc);
	proto_enc_init(&enc, out, cap);
	auth_hs_proof_encode(&enc, AUTH_HS_PROOF, &proof);
	rc = auth_hs_finish(hs, &enc, len_out);
	if (rc != 0)
		return auth_hs_fail(hs, rc);
	hs->state = AUTH_HS_S_SENT_PROOF;
	return 0;
}

int auth_hs_client_on_done(struct auth_hs *hs, const void *msg, size_t len, struct proto_err *err)
{
	struct auth_hs_proof done;
	int rc;

	if (hs->role != AUTH_ROLE_CLIENT || hs->state != AUTH_HS_S_SENT_PROOF) {
		proto_err_set(err, NULL, "auth_done: out of order");
		return auth_hs_fail(hs, -EPROTO);
	}
	rc = auth_hs_proof_decode(msg, len, AUTH_HS_DONE, err, &done);
	if (rc != 0)
		return auth_hs_fail(hs, rc);
	rc = auth_hs_check(hs, AUTH_ROLE_SERVER, done.mac);
	if (rc != 0) {
		proto_err_set(err, NULL, "auth_done: %s's proof does not verify", hs->bind.server);
		return auth_hs_fail(hs, rc);
	}
	rc = auth_hs_session_key(&hs->key, &hs->bind, &hs->session);
	if (rc != 0)
		return auth_hs_fail(hs, rc);
	hs->state = AUTH_HS_S_DONE;
	return 0;
}

/* ---------------------------------------------------------------- server */

int auth_hs_server_start(struct auth_hs *hs, const struct auth_hs_bind *bind,
			 const struct auth_hs_hello *hello, const struct auth_key *k,
			 struct proto_err *err, void *out, size_t cap, size_t *len_out)
{
	struct auth_hs_challenge ch;
	struct proto_enc enc;
	int rc;

	memset(hs, 0, sizeof(*hs));
	hs->role = AUTH_ROLE_SERVER;
	hs->bind = *bind;
	hs->key = *k;
	if (strcmp(hello->server, bind->server) != 0) {
		proto_err_set(err, NULL, "auth_hello: asks for %s, this is %s", hello->server,
			      bind->server);
		return auth_hs_fail(hs, -EACCES);
	}
	hs->bind.version = hello->version;
	hs->bind.method = hello->method;
	memcpy(hs->bind.client, hello->client, sizeof(hs->bind.client));
	memcpy(hs->bind.nonce_c, hello->nonce_c, AUTH_NONCE_LEN);
	rc = auth_random(hs->bind.nonce_s, AUTH_NONCE_LEN);
	if (rc != 0)
		return auth_hs_fail(hs, rc);
	/* 2^-256 by chance; otherwise someone is reflecting our nonce. */
	if (CRYPTO_memcmp(hs->bind.nonce_s, hs->bind.nonce_c, AUTH_NONCE_LEN) == 0) {
		proto_err_set(err, NULL, "auth_hello: nonce_c equals ours (reflected)");
		return auth_hs_fail(hs, -EACCES);
	}
	memcpy(ch.server, hs->bind.server, sizeof(ch.server));
	memcpy(ch.nonce_s, hs->bind.nonce_s, AUTH_NONCE_LEN);
	proto_enc_init(&enc, out, cap);
	auth_hs_challenge_encode(&enc, &ch);
	rc = auth_hs_finish(hs, &enc, len_out);
	if (rc != 0)
		return auth_hs_fail(hs, rc);
	hs->state = AUTH_HS_S_SENT_CHALLENGE;
	return 0;
}

int auth_hs_server_on_proof(struct auth_hs *hs, const void *msg, size_t len, struct proto_err *err,
			    void *out, size_t cap, size_t *len_out)
{
	struct auth_hs_proof proof, done;
	struct proto_enc enc;
	int rc;

	/* One proof per challenge: a second one (a replay on this connection) fails. */
	if (hs->role != AUTH_ROLE_SERVER || hs->state != AUTH_HS_S_SENT_CHALLENGE) {
		proto_err_set(err, NULL, "auth_proof: out of order");
		return auth_hs_fail(hs, -EPROTO);
	}
	rc = auth_hs_proof_decode(msg, len, AUTH_HS_PROOF, err, &proof);
	if (rc != 0)
		return auth_hs_fail(hs, rc);
	rc = auth_hs_check(hs, AUTH_ROLE_CLIENT, proof.mac);
	if (rc != 0) {
		proto_err_set(err, NULL, "auth_proof: %s's proof does not verify", hs->bind.client);
		return auth_hs_fail(hs, rc);
	}
	rc = auth_hs_prove(hs, AUTH_ROLE_SERVER, done.mac);
	if (rc == 0)
		rc = auth_hs_session_key(&hs->key, &hs->bind, &hs->session);
	if (rc != 0)
		return auth_hs_fail(hs, rc);
	proto_enc_init(&enc, out, cap);
	auth_hs_proof_encode(&enc, AUTH_HS_DONE, &done);
	rc = auth_hs_finish(hs, &enc, len_out);
	if (rc != 0)
		return auth_hs_fail(hs, rc);
	hs->state = AUTH_HS_S_DONE;
	return 0;
}

void auth_hs_clear(struct auth_hs *hs)
{
	auth_key_wipe(&hs->key);
	auth_key_wipe(&hs->session);
	OPENSSL_cleanse(&hs->bind, sizeof(hs->bind));
	hs->state = AUTH_HS_S_INIT;
}
