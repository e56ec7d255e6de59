/* SPDX-License-Identifier: Apache-2.0 */
#include "auth/ticket.h"
#include "auth/session.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

static const char auth_ticket_aad_label[] = "weft-ticket-v1";
static const char auth_grant_aad_label[] = "weft-grant-v1";

/* ---------------------------------------------------------- service keys */

void auth_svc_keys_init(struct auth_svc_keys *sk, uint64_t grace_us)
{
	memset(sk, 0, sizeof(*sk));
	sk->grace_us = grace_us;
}

void auth_svc_keys_clear(struct auth_svc_keys *sk)
{
	OPENSSL_cleanse(sk->keys, sizeof(sk->keys));
	sk->count = 0;
}

const struct auth_svc_key *auth_svc_current(const struct auth_svc_keys *sk)
{
	for (unsigned int i = sk->count; i-- > 0;)
		if (sk->keys[i].state == AUTH_SVC_CURRENT)
			return &sk->keys[i];
	return NULL;
}

const struct auth_svc_key *auth_svc_pending(const struct auth_svc_keys *sk)
{
	return sk->count > 0 && sk->keys[sk->count - 1].state == AUTH_SVC_PENDING
		   ? &sk->keys[sk->count - 1]
		   : NULL;
}

uint32_t auth_svc_next_id(const struct auth_svc_keys *sk)
{
	return sk->count > 0 ? sk->keys[sk->count - 1].id + 1 : 1;
}

/*
 * Retire the current key at now_us, drop the keys retired a grace ago or
 * more, and make room for one more key (the oldest retired ones go first).
 */
static void auth_svc_retire(struct auth_svc_keys *sk, uint64_t now_us)
{
	unsigned int kept = 0;

	for (unsigned int i = 0; i < sk->count; i++) {
		struct auth_svc_key *k = &sk->keys[i];

		if (k->state == AUTH_SVC_CURRENT) {
			k->state = AUTH_SVC_RETIRED;
			k->retired_us = now_us;
		}
		if (k->state == AUTH_SVC_RETIRED && now_us >= k->retired_us &&
		    now_us - k->retired_us >= sk->grace_us) {
			auth_key_wipe(&k->key);
			continue;
		}
		sk->keys[kept++] = *k;
	}
	for (unsigned int i = kept; i < sk->count; i++)
		OPENSSL_cleanse(&sk->keys[i], sizeof(sk->keys[i]));
	/* Rotating faster than the grace: the oldest key goes first. */
	while (kept >= AUTH_SVC_KEYS_MAX) {
		auth_key_wipe(&sk->keys[0].key);
		memmove(&sk->keys[0], &sk->keys[1], (kept - 1) * sizeof(sk->keys[0]));
		kept--;
		OPENSSL_cleanse(&sk->keys[kept], sizeof(sk->keys[kept]));
	}
	sk->count = kept;
}

int auth_svc_rotate(struct auth_svc_keys *sk, uint64_t now_us)
{
	struct auth_svc_key fresh = {0};
	int rc;

	rc = auth_key_generate(&fresh.key);
	if (rc != 0)
		return rc;
	fresh.id = auth_svc_next_id(sk);
	fresh.state = AUTH_SVC_CURRENT;
	fresh.created_us = now_us;
	fresh.activated_us = now_us;
	auth_svc_retire(sk, now_us);
	sk->keys[sk->count++] = fresh;
	auth_key_wipe(&fresh.key);
	return 0;
}

int auth_svc_advance(struct auth_svc_keys *sk, uint32_t new_id, const struct auth_key *key,
		     uint64_t now_us, uint64_t grace_us)
{
	struct auth_svc_key *pending;

	if (new_id != auth_svc_next_id(sk))
		return -ESTALE;
	sk->grace_us = grace_us;
	auth_svc_retire(sk, now_us);
	pending = sk->count > 0 && sk->keys[sk->count - 1].state == AUTH_SVC_PENDING
		      ? &sk->keys[sk->count - 1]
		      : NULL;
	if (pending != NULL) {
		pending->state = AUTH_SVC_CURRENT;
		pending->activated_us = now_us;
	}
	memset(&sk->keys[sk->count], 0, sizeof(sk->keys[0]));
	sk->keys[sk->count].id = new_id;
	sk->keys[sk->count].state = AUTH_SVC_PENDING;
	sk->keys[sk->count].key = *key;
	sk->keys[sk->count].created_us = now_us;
	sk->count++;
	return 0;
}

void auth_svc_keys_encode(struct proto_enc *enc, const struct auth_svc_keys *sk)
{
	proto_enc_put_u64(enc, sk->grace_us);
	proto_enc_put_u8(enc, (uint8_t)sk->count);
	for (unsigned int i = 0; i < sk->count; i++) {
		const struct auth_svc_key *k = &sk->keys[i];

		proto_enc_put_u32(enc, k->id);
		proto_enc_put_u8(enc, k->state);
		proto_enc_put_bytes(enc, k->key.b, sizeof(k->key.b));
		proto_enc_put_u64(enc, k->created_us);
		proto_enc_put_u64(enc, k->activated_us);
		proto_enc_put_u64(enc, k->retired_us);
	}
}

/* One key's fields against the key before it (prev NULL for the first). */
static int auth_svc_key_check(struct proto_dec *dec, const struct auth_svc_key *k,
			      const struct auth_svc_key *prev)
{
	if (k->id == 0 || (prev != NULL && k->id <= prev->id))
		return proto_dec_fail(dec, "service key %u: ids must ascend from 1", k->id);
	if (k->state > AUTH_SVC_RETIRED)
		return proto_dec_fail(dec, "service key %u: state %u is unknown", k->id, k->state);
	if (prev != NULL && prev->state <= k->state &&
	    !(prev->state == AUTH_SVC_RETIRED && k->state == AUTH_SVC_RETIRED))
		return proto_dec_fail(dec, "service key %u: %s after %s", k->id,
				      k->state == AUTH_SVC_PENDING   ? "pending"
				      : k->state == AUTH_SVC_CURRENT ? "current"
								     : "retired",
				      prev->state == AUTH_SVC_PENDING	? "pending"
				      : prev->state == AUTH_SVC_CURRENT ? "current"
									: "retired");
	if ((k->state == AUTH_SVC_PENDING && (k->activated_us != 0 || k->retired_us != 0)) ||
	    (k->state == AUTH_SVC_CURRENT &&
	     (k->activated_us < k->created_us || k->retired_us != 0)) ||
	    (k->state == AUTH_SVC_RETIRED &&
	     (k->activated_us < k->created_us || k->retired_us < k->activated_us)))
		return proto_dec_fail(dec, "service key %u: times out of order", k->id);
	return 0;
}

int auth_svc_keys_decode(struct proto_dec *dec, struct auth_svc_keys *sk_out)
{
	struct auth_svc_keys sk;
	uint8_t n = 0;

	memset(&sk, 0, sizeof(sk));
	proto_dec_get_u64(dec, "grace_us", &sk.grace_us);
	proto_dec_get_u8(dec, "count", &n);
	if (dec->err == 0 && n > AUTH_SVC_KEYS_MAX)
		return proto_dec_fail(dec, "count: %u service keys (at most %d)", n,
				      AUTH_SVC_KEYS_MAX);
	for (unsigned int i = 0; i < n && dec->err == 0; i++) {
		struct auth_svc_key *k = &sk.keys[i];

		proto_dec_get_u32(dec, "id", &k->id);
		proto_dec_get_u8(dec, "state", &k->state);
		proto_dec_get_bytes(dec, "key", k->key.b, sizeof(k->key.b));
		proto_dec_get_u64(dec, "created_us", &k->created_us);
		proto_dec_get_u64(dec, "activated_us", &k->activated_us);
		proto_dec_get_u64(dec, "retired_us", &k->retired_us);
		if (dec->err == 0)
			auth_svc_key_check(dec, k, i > 0 ? &sk.keys[i - 1] : NULL);
	}
	if (dec->err != 0) {
		OPENSSL_cleanse(&sk, sizeof(sk));
		return -EBADMSG;
	}
	sk.count = n;
	*sk_out = sk;
	OPENSSL_cleanse(&sk, sizeof(sk));
	return 0;
}

static const char auth_svc_keys_aad[] = "weft-svc-keys-v1";

int auth_svc_keys_seal(const struct auth_key *session, const struct auth_svc_keys *sk, void *out,
		       size_t cap, size_t *len_out)
{
	uint8_t plain[AUTH_SVC_KEYS_WIRE_MAX];
	uint8_t *o = out;
	struct proto_enc enc;
	size_t plen;
	int rc;

	proto_enc_init(&enc, plain, sizeof(plain));
	auth_svc_keys_encode(&enc, sk);
	rc = proto_enc_finish(&enc, &plen);
	if (rc != 0)
		goto out;
	if (cap < AUTH_AEAD_IV_LEN + plen + AUTH_AEAD_TAG_LEN) {
		rc = -ENOBUFS;
		goto out;
	}
	rc = auth_random(o, AUTH_AEAD_IV_LEN);
	if (rc == 0)
		rc = auth_aead_seal(session, o, auth_svc_keys_aad, sizeof(auth_svc_keys_aad), plain,
				    plen, o + AUTH_AEAD_IV_LEN, o + AUTH_AEAD_IV_LEN + plen);
	if (rc == 0)
		*len_out = AUTH_AEAD_IV_LEN + plen + AUTH_AEAD_TAG_LEN;
out:
	OPENSSL_cleanse(plain, sizeof(plain));
	return rc;
}

int auth_svc_keys_open(const struct auth_key *session, const void *buf, size_t len,
		       struct proto_err *err, struct auth_svc_keys *sk_out)
{
	uint8_t plain[AUTH_SVC_KEYS_WIRE_MAX];
	const uint8_t *b = buf;
	struct auth_svc_keys sk;
	struct proto_dec dec;
	size_t plen;
	int rc;

	if (len < AUTH_AEAD_IV_LEN + AUTH_AEAD_TAG_LEN + 9 || len > AUTH_SVC_KEYS_WIRE_MAX)
		return proto_err_set(err, NULL, "sealed_svc_keys: %zu bytes (%d..%d)", len,
				     AUTH_AEAD_IV_LEN + AUTH_AEAD_TAG_LEN + 9,
				     (int)AUTH_SVC_KEYS_WIRE_MAX);
	plen = len - AUTH_AEAD_IV_LEN - AUTH_AEAD_TAG_LEN;
	rc = auth_aead_open(session, b, auth_svc_keys_aad, sizeof(auth_svc_keys_aad),
			    b + AUTH_AEAD_IV_LEN, plen, b + len - AUTH_AEAD_TAG_LEN, plain);
	if (rc != 0) {
		OPENSSL_cleanse(plain, sizeof(plain));
		return proto_err_set(
		    err, NULL, "sealed_svc_keys: does not authenticate under the session key");
	}
	proto_dec_init(&dec, plain, plen, "svc_keys", err);
	rc = auth_svc_keys_decode(&dec, &sk);
	if (rc == 0)
		rc = proto_dec_finish(&dec);
	OPENSSL_cleanse(plain, sizeof(plain));
	if (rc != 0) {
		OPENSSL_cleanse(&sk, sizeof(sk));
		return -EBADMSG;
	}
	*sk_out = sk;
	OPENSSL_cleanse(&sk, sizeof(sk));
	return 0;
}

int auth_svc_key_fingerprint(const struct auth_svc_key *k, char out[17])
{
	static const char label[] = "weft-service-key-fingerprint";
	uint8_t buf[sizeof(label) + AUTH_KEY_LEN], h[32];
	int rc;

	memcpy(buf, label, sizeof(label));
	memcpy(buf + sizeof(label), k->key.b, AUTH_KEY_LEN);
	rc = auth_sha256(buf, sizeof(buf), h);
	OPENSSL_cleanse(buf, sizeof(buf));
	if (rc != 0)
		return rc;
	for (int i = 0; i < 8; i++)
		snprintf(out + 2 * i, 3, "%02x", h[i]);
	return 0;
}

static const struct auth_svc_key *auth_svc_find(const struct auth_svc_keys *sk, uint32_t id)
{
	for (unsigned int i = 0; i < sk->count; i++)
		if (sk->keys[i].id == id)
			return &sk->keys[i];
	return NULL;
}

/* ---------------------------------------------------------------- ticket */

int auth_ticket_issue(const char *entity, const struct auth_caps *caps, uint64_t now_us,
		      uint64_t ttl_us, struct auth_ticket *t_out)
{
	struct auth_ticket t = {0};
	int rc;

	if (strlen(entity) >= sizeof(t.entity) || ttl_us == 0 || now_us + ttl_us < now_us)
		return -EINVAL;
	memcpy(t.entity, entity, strlen(entity) + 1);
	t.caps = *caps;
	t.issued_us = now_us;
	t.expires_us = now_us + ttl_us;
	rc = auth_key_generate(&t.session);
	if (rc != 0)
		return rc;
	*t_out = t;
	auth_key_wipe(&t.session);
	return 0;
}

bool auth_ticket_renew_due(const struct auth_ticket *t, uint64_t now_us)
{
	uint64_t life = t->expires_us - t->issued_us;

	return now_us >= t->issued_us + life / 4 * 3;
}

int auth_ticket_encode(struct proto_enc *enc, const struct auth_ticket *t)
{
	proto_enc_put_str16(enc, t->entity, strlen(t->entity));
	auth_caps_encode(enc, &t->caps);
	proto_enc_put_u64(enc, t->issued_us);
	proto_enc_put_u64(enc, t->expires_us);
	proto_enc_put_bytes(enc, t->session.b, sizeof(t->session.b));
	return enc->err;
}

int auth_ticket_decode(const void *buf, size_t len, struct proto_err *err,
		       struct auth_ticket *t_out)
{
	struct auth_ticket t = {0};
	struct auth_entity ent;
	struct proto_dec dec;
	char why[200];

	proto_dec_init(&dec, buf, len, "ticket", err);
	if (proto_dec_get_str16(&dec, "entity", AUTH_ENTITY_MAX - 1, t.entity, sizeof(t.entity),
				&(size_t){0}) != 0)
		return -EBADMSG;
	if (auth_entity_parse(t.entity, &ent, why, sizeof(why)) != 0)
		return proto_dec_fail(&dec, "entity: %s", why);
	if (auth_caps_decode(&dec, &t.caps) != 0)
		return -EBADMSG;
	proto_dec_get_u64(&dec, "issued_us", &t.issued_us);
	proto_dec_get_u64(&dec, "expires_us", &t.expires_us);
	proto_dec_get_bytes(&dec, "session", t.session.b, sizeof(t.session.b));
	if (proto_dec_finish(&dec) != 0)
		goto bad;
	if (t.expires_us <= t.issued_us) {
		proto_err_set(err, NULL,
			      "ticket: expires (%" PRIu64 ") before it is issued (%" PRIu64 ")",
			      t.expires_us, t.issued_us);
		goto bad;
	}
	*t_out = t;
	auth_key_wipe(&t.session);
	return 0;
bad:
	auth_key_wipe(&t.session);
	return -EBADMSG;
}

static void auth_ticket_aad(uint8_t aad[sizeof(auth_ticket_aad_label) + 5], uint32_t key_id)
{
	memcpy(aad, auth_ticket_aad_label, sizeof(auth_ticket_aad_label));
	aad[sizeof(auth_ticket_aad_label)] = AUTH_TICKET_VERSION;
	for (int i = 0; i < 4; i++)
		aad[sizeof(auth_ticket_aad_label) + 1 + i] = (uint8_t)(key_id >> (8 * i));
}

int auth_ticket_seal(const struct auth_svc_keys *sk, const struct auth_ticket *t, void *out,
		     size_t cap, size_t *len_out)
{
	const struct auth_svc_key *cur = auth_svc_current(sk);
	uint8_t plain[AUTH_TICKET_PLAIN_MAX], aad[sizeof(auth_ticket_aad_label) + 5];
	uint8_t iv[AUTH_AEAD_IV_LEN], tag[AUTH_AEAD_TAG_LEN];
	uint8_t *ct = NULL;
	struct proto_enc enc;
	size_t plen, len;
	int rc;

	if (cur == NULL)
		return -ENOKEY;
	proto_enc_init(&enc, plain, sizeof(plain));
	auth_ticket_encode(&enc, t);
	rc = proto_enc_finish(&enc, &plen);
	if (rc != 0)
		goto out;
	rc = auth_random(iv, sizeof(iv));
	if (rc != 0)
		goto out;
	ct = malloc(plen);
	if (ct == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	auth_ticket_aad(aad, cur->id);
	rc = auth_aead_seal(&cur->key, iv, aad, sizeof(aad), plain, plen, ct, tag);
	if (rc != 0)
		goto out;
	proto_enc_init(&enc, out, cap);
	proto_enc_put_u8(&enc, AUTH_TICKET_VERSION);
	proto_enc_put_u32(&enc, cur->id);
	proto_enc_put_bytes(&enc, iv, sizeof(iv));
	proto_enc_put_blob32(&enc, ct, plen);
	proto_enc_put_bytes(&enc, tag, sizeof(tag));
	rc = proto_enc_finish(&enc, &len);
	if (rc == 0)
		*len_out = len;
out:
	OPENSSL_cleanse(plain, sizeof(plain));
	free(ct);
	return rc;
}

int auth_ticket_unseal(const struct auth_svc_keys *sk, const void *buf, size_t len, uint64_t now_us,
		       struct proto_err *err, struct auth_ticket *t_out)
{
	uint8_t plain[AUTH_TICKET_PLAIN_MAX], aad[sizeof(auth_ticket_aad_label) + 5];
	uint8_t iv[AUTH_AEAD_IV_LEN], tag[AUTH_AEAD_TAG_LEN];
	const struct auth_svc_key *key;
	struct auth_ticket t;
	struct proto_dec dec;
	const void *ct = NULL;
	uint32_t key_id, ct_len = 0;
	uint8_t version;
	int rc;

	proto_dec_init(&dec, buf, len, "sealed_ticket", err);
	proto_dec_get_u8(&dec, "version", &version);
	if (dec.err == 0 && version != AUTH_TICKET_VERSION)
		return proto_dec_fail(&dec, "version: %u is not supported", version);
	proto_dec_get_u32(&dec, "key_id", &key_id);
	proto_dec_get_bytes(&dec, "iv", iv, sizeof(iv));
	proto_dec_get_blob32(&dec, "ciphertext", AUTH_TICKET_PLAIN_MAX, &ct, &ct_len);
	proto_dec_get_bytes(&dec, "tag", tag, sizeof(tag));
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;
	key = auth_svc_find(sk, key_id);
	if (key == NULL) {
		proto_err_set(err, NULL, "sealed_ticket: service key %u is unknown here", key_id);
		return -ENOKEY;
	}
	if (key->state == AUTH_SVC_RETIRED && now_us >= key->retired_us &&
	    now_us - key->retired_us >= sk->grace_us) {
		proto_err_set(err, NULL, "sealed_ticket: service key %u retired past its grace",
			      key_id);
		return -EKEYEXPIRED;
	}
	auth_ticket_aad(aad, key_id);
	rc = auth_aead_open(&key->key, iv, aad, sizeof(aad), ct, ct_len, tag, plain);
	if (rc != 0) {
		proto_err_set(err, NULL,
			      "sealed_ticket: does not authenticate under service key %u", key_id);
		return rc == -EBADMSG ? -EBADMSG : rc;
	}
	rc = auth_ticket_decode(plain, ct_len, err, &t);
	OPENSSL_cleanse(plain, sizeof(plain));
	if (rc != 0)
		return rc;
	if (now_us >= t.expires_us) {
		proto_err_set(err, NULL, "ticket for %s expired %" PRIu64 " s ago", t.entity,
			      (now_us - t.expires_us) / 1000000);
		auth_key_wipe(&t.session);
		return -EKEYEXPIRED;
	}
	*t_out = t;
	auth_key_wipe(&t.session);
	return 0;
}

/* ----------------------------------------------------------------- grant */

/* AAD of the grant: label, the sealed ticket and the expiry it is for. */
static int auth_grant_aad(const struct auth_grant_msg *m, uint8_t **aad_out, size_t *len_out)
{
	size_t len = sizeof(auth_grant_aad_label) + m->ticket_len + 8;
	uint8_t *aad = malloc(len);

	if (aad == NULL)
		return -ENOMEM;
	memcpy(aad, auth_grant_aad_label, sizeof(auth_grant_aad_label));
	if (m->ticket_len > 0)
		memcpy(aad + sizeof(auth_grant_aad_label), m->ticket, m->ticket_len);
	for (int i = 0; i < 8; i++)
		aad[len - 8 + i] = (uint8_t)(m->expires_us >> (8 * i));
	*aad_out = aad;
	*len_out = len;
	return 0;
}

int auth_grant_encode(struct proto_enc *enc, const struct auth_grant_msg *m)
{
	proto_enc_put_blob32(enc, m->ticket, m->ticket_len);
	proto_enc_put_u64(enc, m->expires_us);
	proto_enc_put_bytes(enc, m->iv, sizeof(m->iv));
	proto_enc_put_bytes(enc, m->sealed_key, sizeof(m->sealed_key));
	proto_enc_put_bytes(enc, m->tag, sizeof(m->tag));
	return enc->err;
}

int auth_grant_decode(const void *buf, size_t len, struct proto_err *err,
		      struct auth_grant_msg *m_out)
{
	struct auth_grant_msg m = {0};
	struct proto_dec dec;
	const void *ticket = NULL;

	proto_dec_init(&dec, buf, len, "auth_grant", err);
	proto_dec_get_blob32(&dec, "ticket", AUTH_TICKET_PLAIN_MAX + AUTH_SEALED_OVERHEAD, &ticket,
			     &m.ticket_len);
	proto_dec_get_u64(&dec, "expires_us", &m.expires_us);
	proto_dec_get_bytes(&dec, "iv", m.iv, sizeof(m.iv));
	proto_dec_get_bytes(&dec, "sealed_key", m.sealed_key, sizeof(m.sealed_key));
	proto_dec_get_bytes(&dec, "tag", m.tag, sizeof(m.tag));
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;
	if (m.ticket_len == 0)
		return proto_err_set(err, NULL, "auth_grant.ticket: empty");
	m.ticket = ticket;
	*m_out = m;
	return 0;
}

int auth_grant_build(const struct auth_key *conn_session, const struct auth_ticket *t,
		     const void *sealed, size_t sealed_len, void *out, size_t cap, size_t *len_out)
{
	struct auth_grant_msg m = {0};
	struct proto_enc enc;
	uint8_t *aad = NULL;
	size_t aad_len, len;
	int rc;

	if (sealed_len == 0 || sealed_len > UINT32_MAX)
		return -EINVAL;
	m.ticket = sealed;
	m.ticket_len = (uint32_t)sealed_len;
	m.expires_us = t->expires_us;
	rc = auth_random(m.iv, sizeof(m.iv));
	if (rc == 0)
		rc = auth_grant_aad(&m, &aad, &aad_len);
	if (rc == 0)
		rc = auth_aead_seal(conn_session, m.iv, aad, aad_len, t->session.b,
				    sizeof(t->session.b), m.sealed_key, m.tag);
	free(aad);
	if (rc != 0)
		return rc;
	proto_enc_init(&enc, out, cap);
	auth_grant_encode(&enc, &m);
	rc = proto_enc_finish(&enc, &len);
	if (rc == 0)
		*len_out = len;
	return rc;
}

int auth_grant_open(const struct auth_key *conn_session, const struct auth_grant_msg *m,
		    struct auth_key *ticket_key_out)
{
	struct auth_key k;
	uint8_t *aad = NULL;
	size_t aad_len;
	int rc;

	rc = auth_grant_aad(m, &aad, &aad_len);
	if (rc != 0)
		return rc;
	rc = auth_aead_open(conn_session, m->iv, aad, aad_len, m->sealed_key, sizeof(m->sealed_key),
			    m->tag, k.b);
	free(aad);
	if (rc == 0)
		*ticket_key_out = k;
	auth_key_wipe(&k);
	return rc;
}

/* ---------------------------------------------------------------- holder */

int auth_ticket_holder_take(struct auth_ticket_holder *h, const struct auth_key *conn_session,
			    const void *grant, size_t len, uint64_t now_us, struct proto_err *err)
{
	struct auth_grant_msg m;
	struct auth_key k;
	int rc;

	rc = auth_grant_decode(grant, len, err, &m);
	if (rc != 0)
		return rc;
	if (m.ticket_len > sizeof(h->ticket))
		return proto_err_set(err, NULL, "auth_grant.ticket: %u bytes (at most %zu)",
				     m.ticket_len, sizeof(h->ticket));
	if (m.expires_us <= now_us)
		return proto_err_set(err, NULL, "auth_grant: the ticket expired %" PRIu64 " s ago",
				     (now_us - m.expires_us) / 1000000);
	rc = auth_grant_open(conn_session, &m, &k);
	if (rc != 0)
		return proto_err_set(
		    err, NULL, "auth_grant: the ticket's key does not open under this session");
	memcpy(h->ticket, m.ticket, m.ticket_len);
	h->ticket_len = m.ticket_len;
	h->key = k;
	h->got_us = now_us;
	h->expires_us = m.expires_us;
	h->renew_us = now_us + (m.expires_us - now_us) / 4 * 3;
	h->have = true;
	auth_key_wipe(&k);
	return 0;
}

bool auth_ticket_holder_renew_due(const struct auth_ticket_holder *h, uint64_t now_us)
{
	return !h->have || now_us >= h->renew_us;
}

bool auth_ticket_holder_valid(const struct auth_ticket_holder *h, uint64_t now_us)
{
	return h->have && now_us < h->expires_us;
}

void auth_ticket_holder_clear(struct auth_ticket_holder *h)
{
	OPENSSL_cleanse(h, sizeof(*h));
}

int auth_ticket_accept(const struct auth_svc_keys *sk, const void *sealed, size_t len,
		       const char *claimed, uint64_t now_us, struct auth_sess_keys *keys_out,
		       uint64_t *expires_us, char *why, size_t whycap)
{
	struct auth_ticket tk;
	struct proto_err err = {0};
	int rc;

	rc = auth_ticket_unseal(sk, sealed, len, now_us, &err, &tk);
	if (rc == -ENOKEY) {
		snprintf(why, whycap, "%s", err.msg);
		return rc;
	}
	if (rc != 0) {
		snprintf(why, whycap, "its ticket does not open: %s", err.msg);
		return -EACCES;
	}
	if (strcmp(tk.entity, claimed) != 0) {
		snprintf(why, whycap, "it presents a ticket issued to %s", tk.entity);
		OPENSSL_cleanse(&tk, sizeof(tk));
		return -EACCES;
	}
	memset(keys_out, 0, sizeof(*keys_out));
	keys_out->key[0] = tk.session;
	keys_out->nkeys = 1;
	keys_out->caps = tk.caps;
	*expires_us = tk.expires_us;
	OPENSSL_cleanse(&tk, sizeof(tk));
	return 0;
}
