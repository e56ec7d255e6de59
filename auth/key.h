/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Secrets and entity names (issue 17).
 *
 * A key is 32 random bytes from OpenSSL's RAND_bytes, written as standard
 * base64 (44 characters with one '=' of padding). Only the canonical form
 * decodes, so one key has one spelling in a keyring and on a command line.
 *
 * An entity is who holds a key: "client.NAME" (NAME per the naming rule of
 * common/name.h), "osd.N" (N a decimal OSD id without leading zeros) or
 * "mon." (the one key every monitor shares, as in Ceph; "mon.ID" also
 * parses, for the names of individual monitors).
 */
#ifndef WEFT_AUTH_KEY_H
#define WEFT_AUTH_KEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_KEY_LEN 32
#define AUTH_KEY_B64_LEN 44 /* without the NUL */

struct auth_key {
	uint8_t b[AUTH_KEY_LEN];
};

/* 0, or -EIO when the random generator fails (logged). */
int auth_key_generate(struct auth_key *key_out);
/* Writes the 44 base64 characters and a NUL; buf must hold AUTH_KEY_B64_LEN + 1. */
void auth_key_encode(const struct auth_key *key, char buf[AUTH_KEY_B64_LEN + 1]);
/* 0, or -EINVAL and the reason in err ("key: expected 44 base64 characters, got 12"). */
int auth_key_decode(const char *text, struct auth_key *key_out, char *err, size_t errcap);
/* Constant-time comparison. */
bool auth_key_equal(const struct auth_key *a, const struct auth_key *b);
/* Overwrite a secret so it does not linger in freed memory. */
void auth_key_wipe(struct auth_key *key);

enum auth_etype {
	AUTH_ETYPE_CLIENT = 1,
	AUTH_ETYPE_OSD = 2,
	AUTH_ETYPE_MON = 3,
};

#define AUTH_ENTITY_MAX 72 /* "client." + a 63-character name, with room */

struct auth_entity {
	enum auth_etype type;
	int32_t osd_id;		   /* AUTH_ETYPE_OSD only */
	char name[AUTH_ENTITY_MAX]; /* the canonical spelling, "client.admin" */
};

/* 0, or -EINVAL and one line in err naming the problem. */
int auth_entity_parse(const char *text, struct auth_entity *ent_out, char *err, size_t errcap);
const char *auth_etype_name(enum auth_etype type);

#endif
