/* SPDX-License-Identifier: Apache-2.0 */
/* One connection's authentication: the handshake as messages, then frame MACs (session.h). */
#include "auth/session.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "common/le.h"

static const char auth_label_c2s[] = "weft-auth-v1 frames client to server";
static const char auth_label_s2c[] = "weft-auth-v1 frames server to client";
/* GMAC keys come from labels of their own: no key is ever used by both MACs */
static const char auth_label_c2s_gmac[] = "weft-auth-v1 gmac frames client to server";
static const char auth_label_s2c_gmac[] = "weft-auth-v1 gmac frames server to client";
static const char auth_salt_frames[] = "weft-auth-v1 frame keys";
static const char auth_label_seal[] = "weft-auth-v1 sealed to the peer";

void auth_sess_init(struct auth_sess *s)
{
	memset(s, 0, sizeof(*s));
}

void auth_sess_clear(struct auth_sess *s)
{
	auth_hs_clear(&s->hs);
	auth_mac_ctx_free(s->tx);
	auth_mac_ctx_free(s->rx);
	OPENSSL_cleanse(s, sizeof(*s));
}

int auth_sess_prelude(const void *client, size_t clen, const void *server, size_t slen,
		      uint8_t out[AUTH_PRELUDE_LEN])
{
	uint8_t buf[16 + 2 * AUTH_PRELUDE_PART_MAX];

	if (clen > AUTH_PRELUDE_PART_MAX || slen > AUTH_PRELUDE_PART_MAX)
		return -EINVAL;
	/* Length-prefixed, so where one ends and the other starts is bound too. */
	le_put64(buf, clen);
	le_put64(buf + 8, slen);
	memcpy(buf + 16, client, clen);
	memcpy(buf + 16 + clen, server, slen);
	return auth_sha256(buf, 16 + clen + slen, out);
}

static int auth_sess_fail(struct auth_sess *s, int rc)
{
	s->state = AUTH_SESS_FAILED;
	auth_hs_clear(&s->hs);
	auth_mac_ctx_free(s->tx);
	auth_mac_ctx_free(s->rx);
	s->tx = s->rx = NULL;
	OPENSSL_cleanse(&s->cand, sizeof(s->cand));
	return rc;
}

/* The two frame MAC keys from the session key, this side's tx and rx. */
static int auth_sess_keys_derive(struct auth_sess *s)
{
	enum auth_mac_alg alg = s->gmac ? AUTH_MAC_GMAC : AUTH_MAC_HMAC;
	const char *lc = s->gmac ? auth_label_c2s_gmac : auth_label_c2s;
	const char *ls = s->gmac ? auth_label_s2c_gmac : auth_label_s2c;
	struct auth_key c2s, s2c;
	int rc;

	rc = auth_hkdf(&s->hs.session, auth_salt_frames, sizeof(auth_salt_frames), lc,
		       strlen(lc) + 1, &c2s);
	if (rc == 0)
		rc = auth_hkdf(&s->hs.session, auth_salt_frames, sizeof(auth_salt_frames), ls,
			       strlen(ls) + 1, &s2c);
	if (rc == 0)
		rc = auth_mac_ctx_new_alg(s->role == AUTH_ROLE_CLIENT ? &c2s : &s2c, alg, &s->tx);
	if (rc == 0)
		rc = auth_mac_ctx_new_alg(s->role == AUTH_ROLE_CLIENT ? &s2c : &c2s, alg, &s->rx);
	auth_key_wipe(&c2s);
	auth_key_wipe(&s2c);
	s->tx_seq = 0;
	s->rx_seq = 0;
	return rc;
}

static void auth_sess_name(char dst[AUTH_ENTITY_MAX], const char *src)
{
	size_t n = strnlen(src, AUTH_ENTITY_MAX - 1);

	memcpy(dst, src, n);
	memset(dst + n, 0, AUTH_ENTITY_MAX - n);
}

/* ---------------------------------------------------------------- client */

static int auth_sess_client_begin(struct auth_sess *s, const char *entity,
				  const struct auth_key *key, const void *ticket,
				  uint32_t ticket_len, const char *server, void *out, size_t cap,
				  size_t *len_out)
{
	struct auth_hs_bind b = {0};
	int rc;

	auth_sess_init(s);
	s->role = AUTH_ROLE_CLIENT;
	b.method = ticket != NULL ? AUTH_METHOD_TICKET : AUTH_METHOD_KEY;
	auth_sess_name(b.client, entity);
	auth_sess_name(b.server, server);
	rc = auth_hs_client_start(&s->hs, &b, key, ticket, ticket_len, out, cap, len_out);
	if (rc != 0)
		return auth_sess_fail(s, rc);
	auth_sess_name(s->peer, server);
	s->state = AUTH_SESS_C_HELLO;
	return 0;
}

int auth_sess_client_start(struct auth_sess *s, const char *entity, const struct auth_key *key,
			   const char *server, void *out, size_t cap, size_t *len_out)
{
	return auth_sess_client_begin(s, entity, key, NULL, 0, server, out, cap, len_out);
}

int auth_sess_client_start_ticket(struct auth_sess *s, const char *entity, const void *ticket,
				  uint32_t ticket_len, const struct auth_key *ticket_key,
				  const char *server, void *out, size_t cap, size_t *len_out)
{
	if (ticket == NULL || ticket_len == 0)
		return -EINVAL;
	return auth_sess_client_begin(s, entity, ticket_key, ticket, ticket_len, server, out, cap,
				      len_out);
}

int auth_sess_client_challenge(struct auth_sess *s, const struct auth_sess_conn *conn,
			       const void *msg, size_t len, struct proto_err *err, void *out,
			       size_t cap, size_t *len_out)
{
	struct auth_hs_bind *b = &s->hs.bind;
	int rc;

	if (s->role != AUTH_ROLE_CLIENT || s->state != AUTH_SESS_C_HELLO) {
		proto_err_set(err, NULL, "auth_challenge: out of order");
		return auth_sess_fail(s, -EPROTO);
	}
	/* Known only now: the connection is up and both hellos have crossed. */
	memcpy(b->fsid, conn->fsid, sizeof(b->fsid));
	snprintf(b->client_addr, sizeof(b->client_addr), "%s", conn->local_addr);
	snprintf(b->server_addr, sizeof(b->server_addr), "%s", conn->peer_addr);
	memcpy(b->prelude, conn->prelude, sizeof(b->prelude));
	rc = auth_hs_client_on_challenge(&s->hs, msg, len, err, out, cap, len_out);
	if (rc != 0)
		return auth_sess_fail(s, rc);
	/* The session key now, so requests can follow PROOF without waiting for DONE. */
	rc = auth_hs_session_key(&s->hs.key, b, &s->hs.session);
	if (rc == 0)
		rc = auth_sess_keys_derive(s);
	if (rc != 0)
		return auth_sess_fail(s, rc);
	s->state = AUTH_SESS_C_PROOF;
	return 0;
}

int auth_sess_client_done(struct auth_sess *s, const void *msg, size_t len, struct proto_err *err)
{
	int rc;

	if (s->role != AUTH_ROLE_CLIENT || s->state != AUTH_SESS_C_PROOF) {
		proto_err_set(err, NULL, "auth_done: out of order");
		return auth_sess_fail(s, -EPROTO);
	}
	rc = auth_hs_client_on_done(&s->hs, msg, len, err);
	if (rc != 0)
		return auth_sess_fail(s, rc);
	/* The long-term key is not needed any more. */
	auth_key_wipe(&s->hs.key);
	s->state = AUTH_SESS_OPEN;
	return 0;
}

/* ---------------------------------------------------------------- server */

int auth_sess_server_hello(struct auth_sess *s, const void *msg, size_t len, struct proto_err *err)
{
	struct auth_hs_hello h;
	int rc;

	auth_sess_init(s);
	s->role = AUTH_ROLE_SERVER;
	rc = auth_hs_hello_decode(msg, len, err, &h);
	if (rc != 0)
		return auth_sess_fail(s, rc);
	s->hello = h; /* the ticket, if any, is a view into msg: the caller copies it */
	auth_sess_name(s->peer, h.client);
	s->state = AUTH_SESS_S_HELLO;
	return 0;
}

int auth_sess_server_challenge(struct auth_sess *s, const char *self,
			       const struct auth_sess_conn *conn, const struct auth_sess_keys *keys,
			       struct proto_err *err, void *out, size_t cap, size_t *len_out)
{
	struct auth_hs_bind b = {0};
	int rc;

	if (s->role != AUTH_ROLE_SERVER || s->state != AUTH_SESS_S_HELLO || keys->nkeys < 1 ||
	    keys->nkeys > 2) {
		proto_err_set(err, NULL, "auth_challenge: out of order");
		return auth_sess_fail(s, -EPROTO);
	}
	memcpy(b.fsid, conn->fsid, sizeof(b.fsid));
	auth_sess_name(b.server, self);
	/* The server's view: the peer is the client, we are the server. */
	snprintf(b.client_addr, sizeof(b.client_addr), "%s", conn->peer_addr);
	snprintf(b.server_addr, sizeof(b.server_addr), "%s", conn->local_addr);
	memcpy(b.prelude, conn->prelude, sizeof(b.prelude));
	s->cand = *keys;
	rc = auth_hs_server_start(&s->hs, &b, &s->hello, &keys->key[0], err, out, cap, len_out);
	if (rc != 0)
		return auth_sess_fail(s, rc);
	s->state = AUTH_SESS_S_CHALLENGE;
	return 0;
}

int auth_sess_server_proof(struct auth_sess *s, const void *msg, size_t len, struct proto_err *err,
			   void *out, size_t cap, size_t *len_out)
{
	struct auth_hs saved;
	int rc = -EACCES;

	if (s->role != AUTH_ROLE_SERVER || s->state != AUTH_SESS_S_CHALLENGE) {
		proto_err_set(err, NULL, "auth_proof: out of order");
		return auth_sess_fail(s, -EPROTO);
	}
	saved = s->hs;
	for (unsigned int i = 0; i < s->cand.nkeys; i++) {
		s->hs = saved;
		s->hs.key = s->cand.key[i];
		rc = auth_hs_server_on_proof(&s->hs, msg, len, err, out, cap, len_out);
		if (rc != -EACCES || s->hs.state == AUTH_HS_S_DONE) {
			s->valid_until_us = i == 1 ? s->cand.old_until_us : 0;
			break;
		}
	}
	OPENSSL_cleanse(&saved, sizeof(saved));
	if (rc == 0)
		rc = auth_sess_keys_derive(s);
	if (rc != 0)
		return auth_sess_fail(s, rc);
	s->caps = s->cand.caps;
	OPENSSL_cleanse(&s->cand, sizeof(s->cand));
	auth_key_wipe(&s->hs.key);
	s->state = AUTH_SESS_OPEN;
	return 0;
}

/* ---------------------------------------------------------------- frames */

static int auth_sess_mac(struct auth_mac_ctx *ctx, uint64_t seq, uint8_t kind, const void *frame,
			 size_t len, uint8_t mac_out[AUTH_SESS_MAC_LEN])
{
	uint8_t head[9], nonce[AUTH_MAC_NONCE_LEN] = {0};
	struct auth_iov iov[2] = {{head, sizeof(head)}, {frame, len}};

	le_put64(head, seq);
	head[8] = kind;
	/*
	 * GMAC's nonce: the kind, then the sequence number. A sequence number
	 * is used once per direction for a frame and at most once more for
	 * the content that frame announced (kind BULK), so no nonce repeats
	 * under a key; each session and direction has its own key.
	 */
	nonce[0] = kind;
	le_put64(nonce + 4, seq);
	return auth_mac_ctx_run_nonce(ctx, nonce, iov, 2, mac_out);
}

int auth_sess_seal(struct auth_sess *s, const void *frame, size_t len,
		   uint8_t mac_out[AUTH_SESS_MAC_LEN])
{
	int rc;

	if (!auth_sess_tx_ready(s))
		return -EPROTO;
	rc = auth_sess_mac(s->tx, s->tx_seq, AUTH_SESS_FRAME, frame, len, mac_out);
	if (rc == 0)
		s->tx_seq++;
	return rc;
}

int auth_sess_seal_bulk(struct auth_sess *s, uint64_t seq, const void *frame, size_t len,
			uint8_t mac_out[AUTH_SESS_MAC_LEN])
{
	if (!auth_sess_tx_ready(s))
		return -EPROTO;
	return auth_sess_mac(s->tx, seq, AUTH_SESS_BULK, frame, len, mac_out);
}

static int auth_sess_check(struct auth_sess *s, uint64_t seq, uint8_t kind, const void *frame,
			   size_t len, const uint8_t mac[AUTH_SESS_MAC_LEN])
{
	uint8_t want[AUTH_SESS_MAC_LEN];
	int rc;

	if (s->state != AUTH_SESS_OPEN || s->rx == NULL)
		return -EPROTO;
	rc = auth_sess_mac(s->rx, seq, kind, frame, len, want);
	if (rc == 0 && !auth_mac_equal(want, mac))
		rc = -EACCES;
	OPENSSL_cleanse(want, sizeof(want));
	if (rc != 0)
		auth_sess_fail(s, rc);
	return rc;
}

int auth_sess_verify(struct auth_sess *s, const void *frame, size_t len,
		     const uint8_t mac[AUTH_SESS_MAC_LEN])
{
	int rc = auth_sess_check(s, s->rx_seq, AUTH_SESS_FRAME, frame, len, mac);

	if (rc == 0)
		s->rx_seq++;
	return rc;
}

int auth_sess_verify_bulk(struct auth_sess *s, uint64_t seq, const void *frame, size_t len,
			  const uint8_t mac[AUTH_SESS_MAC_LEN])
{
	return auth_sess_check(s, seq, AUTH_SESS_BULK, frame, len, mac);
}

int auth_sess_seal_key(const struct auth_sess *s, struct auth_key *key_out)
{
	if (!auth_sess_open(s))
		return -ENOTCONN;
	return auth_hkdf(&s->hs.session, auth_salt_frames, sizeof(auth_salt_frames),
			 auth_label_seal, sizeof(auth_label_seal), key_out);
}
