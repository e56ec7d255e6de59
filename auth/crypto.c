/* SPDX-License-Identifier: Apache-2.0 */
#include "auth/crypto.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>

#include "common/log.h"

static int auth_ssl_fail(const char *what)
{
	unsigned long e = ERR_get_error();

	log_error("auth", "%s failed: %s", what, e ? ERR_reason_error_string(e) : "unknown");
	ERR_clear_error();
	return -EIO;
}

int auth_random(void *buf, size_t len)
{
	if (len > INT_MAX || RAND_bytes(buf, (int)len) != 1)
		return auth_ssl_fail("RAND_bytes");
	return 0;
}

int auth_hmac(const struct auth_key *key, const struct auth_iov *iov, unsigned int n,
	      uint8_t mac_out[AUTH_MAC_LEN])
{
	OSSL_PARAM params[] = {
	    OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
	    OSSL_PARAM_construct_end(),
	};
	EVP_MAC_CTX *ctx = NULL;
	EVP_MAC *mac;
	size_t outl = 0;
	int rc = -EIO;

	mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (mac == NULL)
		return auth_ssl_fail("EVP_MAC_fetch(HMAC)");
	ctx = EVP_MAC_CTX_new(mac);
	if (ctx == NULL || EVP_MAC_init(ctx, key->b, sizeof(key->b), params) != 1) {
		rc = auth_ssl_fail("HMAC init");
		goto out;
	}
	for (unsigned int i = 0; i < n; i++) {
		if (iov[i].len > 0 && EVP_MAC_update(ctx, iov[i].p, iov[i].len) != 1) {
			rc = auth_ssl_fail("HMAC update");
			goto out;
		}
	}
	if (EVP_MAC_final(ctx, mac_out, &outl, AUTH_MAC_LEN) != 1 || outl != AUTH_MAC_LEN) {
		rc = auth_ssl_fail("HMAC final");
		goto out;
	}
	rc = 0;
out:
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return rc;
}

bool auth_mac_equal(const uint8_t a[AUTH_MAC_LEN], const uint8_t b[AUTH_MAC_LEN])
{
	return CRYPTO_memcmp(a, b, AUTH_MAC_LEN) == 0;
}

int auth_sha256(const void *p, size_t len, uint8_t out[32])
{
	unsigned int outl = 0;

	if (EVP_Digest(p, len, out, &outl, EVP_sha256(), NULL) != 1 || outl != 32)
		return auth_ssl_fail("SHA-256");
	return 0;
}

int auth_hkdf(const struct auth_key *ikm, const void *salt, size_t salt_len, const void *info,
	      size_t info_len, struct auth_key *key_out)
{
	OSSL_PARAM params[] = {
	    OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, "SHA256", 0),
	    OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)ikm->b, sizeof(ikm->b)),
	    OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt, salt_len),
	    OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info, info_len),
	    OSSL_PARAM_construct_end(),
	};
	struct auth_key out;
	EVP_KDF_CTX *ctx = NULL;
	EVP_KDF *kdf;
	int rc = 0;

	kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	if (kdf == NULL)
		return auth_ssl_fail("EVP_KDF_fetch(HKDF)");
	ctx = EVP_KDF_CTX_new(kdf);
	if (ctx == NULL || EVP_KDF_derive(ctx, out.b, sizeof(out.b), params) != 1)
		rc = auth_ssl_fail("HKDF");
	EVP_KDF_CTX_free(ctx);
	EVP_KDF_free(kdf);
	if (rc == 0)
		*key_out = out;
	auth_key_wipe(&out);
	return rc;
}

struct auth_mac_ctx {
	EVP_MAC_CTX *ctx;     /* HMAC */
	EVP_CIPHER_CTX *gcm; /* GMAC: the key schedule set once, a new nonce per run */
};

static int auth_gmac_ctx_new(const struct auth_key *key, struct auth_mac_ctx **ctx_out)
{
	struct auth_mac_ctx *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return -ENOMEM;
	c->gcm = EVP_CIPHER_CTX_new();
	if (c->gcm == NULL ||
	    EVP_EncryptInit_ex(c->gcm, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c->gcm, EVP_CTRL_GCM_SET_IVLEN, AUTH_MAC_NONCE_LEN, NULL) != 1 ||
	    EVP_EncryptInit_ex(c->gcm, NULL, NULL, key->b, NULL) != 1) {
		auth_mac_ctx_free(c);
		return auth_ssl_fail("GMAC init");
	}
	*ctx_out = c;
	return 0;
}

int auth_mac_ctx_new_alg(const struct auth_key *key, enum auth_mac_alg alg,
			 struct auth_mac_ctx **ctx_out)
{
	if (alg == AUTH_MAC_GMAC)
		return auth_gmac_ctx_new(key, ctx_out);
	return alg == AUTH_MAC_HMAC ? auth_mac_ctx_new(key, ctx_out) : -EINVAL;
}

int auth_mac_ctx_new(const struct auth_key *key, struct auth_mac_ctx **ctx_out)
{
	OSSL_PARAM params[] = {
	    OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
	    OSSL_PARAM_construct_end(),
	};
	struct auth_mac_ctx *c;
	EVP_MAC *mac;
	int rc = 0;

	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (mac == NULL) {
		free(c);
		return auth_ssl_fail("EVP_MAC_fetch(HMAC)");
	}
	c->ctx = EVP_MAC_CTX_new(mac);
	EVP_MAC_free(mac); /* the context holds its own reference */
	if (c->ctx == NULL || EVP_MAC_init(c->ctx, key->b, sizeof(key->b), params) != 1)
		rc = auth_ssl_fail("HMAC init");
	if (rc != 0) {
		auth_mac_ctx_free(c);
		return rc;
	}
	*ctx_out = c;
	return 0;
}

int auth_mac_ctx_run(struct auth_mac_ctx *c, const struct auth_iov *iov, unsigned int n,
		     uint8_t mac_out[AUTH_MAC_LEN])
{
	size_t outl = 0;

	if (c->ctx == NULL)
		return -EINVAL; /* GMAC: auth_mac_ctx_run_nonce */
	/* A NULL key restarts the MAC under the key already set (OpenSSL 3 HMAC). */
	if (EVP_MAC_init(c->ctx, NULL, 0, NULL) != 1)
		return auth_ssl_fail("HMAC reinit");
	for (unsigned int i = 0; i < n; i++)
		if (iov[i].len > 0 && EVP_MAC_update(c->ctx, iov[i].p, iov[i].len) != 1)
			return auth_ssl_fail("HMAC update");
	if (EVP_MAC_final(c->ctx, mac_out, &outl, AUTH_MAC_LEN) != 1 || outl != AUTH_MAC_LEN)
		return auth_ssl_fail("HMAC final");
	return 0;
}

int auth_mac_ctx_run_nonce(struct auth_mac_ctx *c, const uint8_t nonce[AUTH_MAC_NONCE_LEN],
			   const struct auth_iov *iov, unsigned int n,
			   uint8_t mac_out[AUTH_MAC_LEN])
{
	uint8_t none[16];
	int outl;

	if (c->gcm == NULL)
		return auth_mac_ctx_run(c, iov, n, mac_out);
	/* A NULL key keeps the schedule: only the nonce and the GHASH state are new. */
	if (EVP_EncryptInit_ex(c->gcm, NULL, NULL, NULL, nonce) != 1)
		return auth_ssl_fail("GMAC nonce");
	for (unsigned int i = 0; i < n; i++) {
		const uint8_t *p = iov[i].p;

		/* additional data only, in pieces no larger than an int */
		for (size_t off = 0; off < iov[i].len;) {
			size_t k = iov[i].len - off > INT_MAX ? INT_MAX : iov[i].len - off;

			if (EVP_EncryptUpdate(c->gcm, NULL, &outl, p + off, (int)k) != 1)
				return auth_ssl_fail("GMAC update");
			off += k;
		}
	}
	if (EVP_EncryptFinal_ex(c->gcm, none, &outl) != 1 ||
	    EVP_CIPHER_CTX_ctrl(c->gcm, EVP_CTRL_GCM_GET_TAG, 16, mac_out) != 1)
		return auth_ssl_fail("GMAC final");
	memset(mac_out + 16, 0, AUTH_MAC_LEN - 16);
	return 0;
}

void auth_mac_ctx_free(struct auth_mac_ctx *c)
{
	if (c == NULL)
		return;
	EVP_MAC_CTX_free(c->ctx);     /* frees (and cleanses) the key schedule */
	EVP_CIPHER_CTX_free(c->gcm); /* the same for AES's */
	free(c);
}

int auth_aead_seal(const struct auth_key *key, const uint8_t iv[AUTH_AEAD_IV_LEN], const void *aad,
		   size_t aad_len, const void *pt, size_t len, uint8_t *ct,
		   uint8_t tag_out[AUTH_AEAD_TAG_LEN])
{
	EVP_CIPHER_CTX *ctx;
	int outl, rc = -EIO;

	if (len > INT_MAX || aad_len > INT_MAX)
		return -EINVAL;
	ctx = EVP_CIPHER_CTX_new();
	if (ctx == NULL)
		return auth_ssl_fail("EVP_CIPHER_CTX_new");
	if (EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, AUTH_AEAD_IV_LEN, NULL) != 1 ||
	    EVP_EncryptInit_ex(ctx, NULL, NULL, key->b, iv) != 1 ||
	    (aad_len > 0 && EVP_EncryptUpdate(ctx, NULL, &outl, aad, (int)aad_len) != 1) ||
	    (len > 0 && EVP_EncryptUpdate(ctx, ct, &outl, pt, (int)len) != 1) ||
	    EVP_EncryptFinal_ex(ctx, ct + len, &outl) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, AUTH_AEAD_TAG_LEN, tag_out) != 1) {
		rc = auth_ssl_fail("AES-256-GCM seal");
		goto out;
	}
	rc = 0;
out:
	EVP_CIPHER_CTX_free(ctx);
	return rc;
}

int auth_aead_open(const struct auth_key *key, const uint8_t iv[AUTH_AEAD_IV_LEN], const void *aad,
		   size_t aad_len, const void *ct, size_t len, const uint8_t tag[AUTH_AEAD_TAG_LEN],
		   uint8_t *pt)
{
	uint8_t tagbuf[AUTH_AEAD_TAG_LEN];
	EVP_CIPHER_CTX *ctx;
	int outl, rc = -EIO;

	if (len > INT_MAX || aad_len > INT_MAX)
		return -EINVAL;
	memcpy(tagbuf, tag, sizeof(tagbuf));
	ctx = EVP_CIPHER_CTX_new();
	if (ctx == NULL)
		return auth_ssl_fail("EVP_CIPHER_CTX_new");
	if (EVP_DecryptInit_ex(ctx, EVP_aes_256_gcm(), NULL, NULL, NULL) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, AUTH_AEAD_IV_LEN, NULL) != 1 ||
	    EVP_DecryptInit_ex(ctx, NULL, NULL, key->b, iv) != 1 ||
	    (aad_len > 0 && EVP_DecryptUpdate(ctx, NULL, &outl, aad, (int)aad_len) != 1) ||
	    (len > 0 && EVP_DecryptUpdate(ctx, pt, &outl, ct, (int)len) != 1) ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, AUTH_AEAD_TAG_LEN, tagbuf) != 1) {
		rc = auth_ssl_fail("AES-256-GCM open");
		goto out;
	}
	/* A tag that does not verify is an input error, not a library failure. */
	if (EVP_DecryptFinal_ex(ctx, pt + len, &outl) != 1) {
		ERR_clear_error();
		OPENSSL_cleanse(pt, len);
		rc = -EBADMSG;
		goto out;
	}
	rc = 0;
out:
	EVP_CIPHER_CTX_free(ctx);
	return rc;
}
