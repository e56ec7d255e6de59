/* SPDX-License-Identifier: Apache-2.0 */
#include "auth/key.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "common/log.h"
#include "common/name.h"

int auth_key_generate(struct auth_key *key_out)
{
	struct auth_key key;

	if (RAND_bytes(key.b, sizeof(key.b)) != 1) {
		log_error("auth", "cannot generate a key: RAND_bytes failed: %s",
			  ERR_reason_error_string(ERR_get_error()));
		return -EIO;
	}
	*key_out = key;
	auth_key_wipe(&key);
	return 0;
}

void auth_key_encode(const struct auth_key *key, char buf[AUTH_KEY_B64_LEN + 1])
{
	/* EVP_EncodeBlock writes 4 * ceil(32 / 3) = 44 characters and a NUL. */
	EVP_EncodeBlock((unsigned char *)buf, key->b, sizeof(key->b));
}

int auth_key_decode(const char *text, struct auth_key *key_out, char *err, size_t errcap)
{
	unsigned char raw[AUTH_KEY_LEN + 3];
	char again[AUTH_KEY_B64_LEN + 1];
	struct auth_key key;
	size_t len = strlen(text);
	int n;

	if (len != AUTH_KEY_B64_LEN) {
		snprintf(err, errcap, "key: expected %d base64 characters, got %zu",
			 AUTH_KEY_B64_LEN, len);
		return -EINVAL;
	}
	/* EVP_DecodeBlock ignores surrounding blanks: refuse them here. */
	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '+' || c == '/' || (c == '=' && i == len - 1))) {
			snprintf(err, errcap, "key: character %zu ('%c') is not base64", i + 1,
				 c >= 0x20 && c < 0x7f ? c : '?');
			return -EINVAL;
		}
	}
	n = EVP_DecodeBlock(raw, (const unsigned char *)text, (int)len);
	/* 44 characters decode to 33 bytes, the last one the padding's zero. */
	if (n != AUTH_KEY_LEN + 1) {
		snprintf(err, errcap, "key: not valid base64");
		return -EINVAL;
	}
	memcpy(key.b, raw, sizeof(key.b));
	OPENSSL_cleanse(raw, sizeof(raw));
	/* Canonical only: the unused low bits of the last character must be zero. */
	auth_key_encode(&key, again);
	if (strcmp(again, text) != 0) {
		auth_key_wipe(&key);
		snprintf(err, errcap, "key: not the canonical base64 of 32 bytes");
		return -EINVAL;
	}
	*key_out = key;
	auth_key_wipe(&key);
	return 0;
}

bool auth_key_equal(const struct auth_key *a, const struct auth_key *b)
{
	return CRYPTO_memcmp(a->b, b->b, sizeof(a->b)) == 0;
}

void auth_key_wipe(struct auth_key *key)
{
	OPENSSL_cleanse(key->b, sizeof(key->b));
}

const char *auth_etype_name(enum auth_etype type)
{
	switch (type) {
	case AUTH_ETYPE_CLIENT:
		return "client";
	case AUTH_ETYPE_OSD:
		return "osd";
	case AUTH_ETYPE_MON:
		return "mon";
	}
	return "?";
}

int auth_entity_parse(const char *text, struct auth_entity *ent_out, char *err, size_t errcap)
{
	struct auth_entity ent = {0};
	const char *dot = strchr(text, '.');
	const char *id;
	char why[200];

	/* Checked first: the other messages quote the text, which must stay one line. */
	for (size_t i = 0; text[i]; i++) {
		if ((unsigned char)text[i] < 0x20 || (unsigned char)text[i] >= 0x7f) {
			snprintf(err, errcap, "entity name: byte 0x%02x at offset %zu is not allowed",
				 (unsigned char)text[i], i);
			return -EINVAL;
		}
	}
	if (strlen(text) >= AUTH_ENTITY_MAX) {
		snprintf(err, errcap, "entity name: longer than %d characters", AUTH_ENTITY_MAX - 1);
		return -EINVAL;
	}
	if (dot == NULL) {
		snprintf(err, errcap,
			 "entity '%s': expected TYPE.ID: client.NAME, osd.N or mon.", text);
		return -EINVAL;
	}
	id = dot + 1;
	if ((size_t)(dot - text) == 6 && !strncmp(text, "client", 6)) {
		if (weft_name_check("client", id, 63, why, sizeof(why)) != 0) {
			snprintf(err, errcap, "entity '%s': %s", text, why);
			return -EINVAL;
		}
		ent.type = AUTH_ETYPE_CLIENT;
	} else if ((size_t)(dot - text) == 3 && !strncmp(text, "osd", 3)) {
		char *end;
		long v;

		if (id[0] < '0' || id[0] > '9' || (id[0] == '0' && id[1] != '\0')) {
			snprintf(err, errcap, "entity '%s': an OSD id is a decimal number", text);
			return -EINVAL;
		}
		errno = 0;
		v = strtol(id, &end, 10);
		if (*end != '\0' || errno != 0 || v > INT32_MAX) {
			snprintf(err, errcap, "entity '%s': an OSD id is a decimal number up to %d",
				 text, INT32_MAX);
			return -EINVAL;
		}
		ent.type = AUTH_ETYPE_OSD;
		ent.osd_id = (int32_t)v;
	} else if ((size_t)(dot - text) == 3 && !strncmp(text, "mon", 3)) {
		if (id[0] != '\0' && weft_name_check("mon", id, 63, why, sizeof(why)) != 0) {
			snprintf(err, errcap, "entity '%s': %s", text, why);
			return -EINVAL;
		}
		ent.type = AUTH_ETYPE_MON;
	} else {
		snprintf(err, errcap, "entity '%s': unknown type '%.*s' (expected client, osd or mon)",
			 text, (int)(dot - text), text);
		return -EINVAL;
	}
	snprintf(ent.name, sizeof(ent.name), "%s", text);
	*ent_out = ent;
	return 0;
}
