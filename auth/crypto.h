/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The primitives auth/ uses, each a thin wrapper over OpenSSL 3 (EVP_MAC
 * HMAC-SHA256, EVP_KDF HKDF-SHA256, EVP AES-256-GCM, RAND_bytes), so the
 * rest of the module never touches an OpenSSL context. Failures of the
 * library itself are logged once here and returned as -EIO.
 */
#ifndef WEFT_AUTH_CRYPTO_H
#define WEFT_AUTH_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/key.h"

#define AUTH_MAC_LEN	  32
#define AUTH_AEAD_IV_LEN  12
#define AUTH_AEAD_TAG_LEN 16

/* One piece of the message a MAC covers (the pieces are concatenated). */
struct auth_iov {
	const void *p;
	size_t len;
};

int auth_random(void *buf, size_t len);
/* HMAC-SHA256 under key over the concatenation of iov[0..n). */
int auth_hmac(const struct auth_key *key, const struct auth_iov *iov, unsigned int n,
	      uint8_t mac_out[AUTH_MAC_LEN]);
/* Constant-time. */
bool auth_mac_equal(const uint8_t a[AUTH_MAC_LEN], const uint8_t b[AUTH_MAC_LEN]);
int auth_sha256(const void *p, size_t len, uint8_t out[32]);
/* HKDF-SHA256 (RFC 5869) from ikm, salt and info to one 32-byte key. */
int auth_hkdf(const struct auth_key *ikm, const void *salt, size_t salt_len, const void *info,
	      size_t info_len, struct auth_key *key_out);
/*
 * AES-256-GCM. seal writes len bytes of ciphertext to ct and the tag;
 * open returns 0, or -EBADMSG when the tag does not verify (nothing of
 * the plaintext may be used then).
 */
/*
 * A keyed MAC for many messages under one key (a session's frame MACs):
 * the key is set once, each run costs only the MAC.
 *
 * AUTH_MAC_HMAC: HMAC-SHA256, 32 bytes. AUTH_MAC_GMAC: AES-256-GMAC (GCM
 * with the message as additional data and no plaintext), the 16-byte tag
 * then 16 zero bytes, so both fill the same AUTH_MAC_LEN trailer. GMAC
 * needs a nonce that never repeats under one key (auth_mac_ctx_run_nonce:
 * the session's per-direction sequence number and the frame's kind); it
 * costs a fraction of SHA-256 per byte on CPUs with AES and carry-less
 * multiply instructions.
 */
enum auth_mac_alg {
	AUTH_MAC_HMAC = 0,
	AUTH_MAC_GMAC = 1,
};
#define AUTH_MAC_NONCE_LEN 12
struct auth_mac_ctx;
int auth_mac_ctx_new(const struct auth_key *key, struct auth_mac_ctx **ctx_out); /* HMAC */
int auth_mac_ctx_new_alg(const struct auth_key *key, enum auth_mac_alg alg,
			 struct auth_mac_ctx **ctx_out);
/* HMAC only (-EINVAL on a GMAC context: it needs a nonce). */
int auth_mac_ctx_run(struct auth_mac_ctx *ctx, const struct auth_iov *iov, unsigned int n,
		     uint8_t mac_out[AUTH_MAC_LEN]);
/* Either algorithm; HMAC ignores the nonce (the caller's iov binds what it must). */
int auth_mac_ctx_run_nonce(struct auth_mac_ctx *ctx, const uint8_t nonce[AUTH_MAC_NONCE_LEN],
			   const struct auth_iov *iov, unsigned int n,
			   uint8_t mac_out[AUTH_MAC_LEN]);
void auth_mac_ctx_free(struct auth_mac_ctx *ctx);
int auth_aead_seal(const struct auth_key *key, const uint8_t iv[AUTH_AEAD_IV_LEN], const void *aad,
		   size_t aad_len, const void *pt, size_t len, uint8_t *ct,
		   uint8_t tag_out[AUTH_AEAD_TAG_LEN]);
int auth_aead_open(const struct auth_key *key, const uint8_t iv[AUTH_AEAD_IV_LEN], const void *aad,
		   size_t aad_len, const void *ct, size_t len, const uint8_t tag[AUTH_AEAD_TAG_LEN],
		   uint8_t *pt);

#endif
