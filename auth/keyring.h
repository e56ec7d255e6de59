/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The keyring file, in the ceph.conf style of Ceph's keyrings:
 *
 *	[client.admin]
 *		key = <base64 of 32 random bytes>
 *		caps mon = "allow *"
 *		caps osd = "allow *"
 *
 * Parsed with libinih like common/conf. A keyring is a secret: it must be
 * a regular file that neither group nor other may access (mode 0600 or
 * stricter), else loading refuses with the mode and the chmod to run.
 * Saving writes a temporary file with mode 0600, fsyncs and renames it.
 */
#ifndef WEFT_AUTH_KEYRING_H
#define WEFT_AUTH_KEYRING_H

#include <stddef.h>

#include "auth/caps.h"
#include "auth/key.h"

struct conf;

struct auth_keyring_entry {
	struct auth_entity entity;
	struct auth_key key;
	struct auth_caps caps;
};

#define AUTH_KEYRING_MAX 4096 /* entries in one file */

struct auth_keyring {
	struct auth_keyring_entry *ents;
	size_t count;
	size_t cap;
};

void auth_keyring_init(struct auth_keyring *kr);
/* Wipes the keys and frees the entries. */
void auth_keyring_free(struct auth_keyring *kr);

/*
 * Load path into kr (replacing its contents). 0, -ENOENT (no such file),
 * -EACCES (mode too open, or not readable), -EINVAL (syntax, bad key, bad
 * caps, duplicate or keyless entity): each logged once, and the same line
 * in err ("keyring /x: line 3: ...") for the caller to print.
 */
int auth_keyring_load(struct auth_keyring *kr, const char *path, char *err, size_t errcap);
/* Parse text (no mode check; for tests and for keyrings carried in messages). */
int auth_keyring_parse(struct auth_keyring *kr, const char *text, const char *name, char *err,
		       size_t errcap);
/* Write kr to path with mode 0600 (atomically: tmp file, fsync, rename). */
int auth_keyring_save(const struct auth_keyring *kr, const char *path, char *err, size_t errcap);
/* The text of kr as auth_keyring_save writes it; malloc'ed, NULL on ENOMEM. */
char *auth_keyring_format(const struct auth_keyring *kr);

/* The entry for an entity name, or NULL. */
const struct auth_keyring_entry *auth_keyring_find(const struct auth_keyring *kr,
						   const char *entity);
/* Add or replace an entry. 0, -ENOMEM, -ENOSPC (AUTH_KEYRING_MAX). */
int auth_keyring_put(struct auth_keyring *kr, const struct auth_keyring_entry *ent);

/*
 * The keyring path of this entity from the conf ("keyring", with $name,
 * $type and $id expanded): a pointer into conf.
 */
const char *auth_keyring_path(const struct conf *conf);

#endif
