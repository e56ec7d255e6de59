/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The auth database (mon_auth.h): its ops, their codec and application,
 * and its snapshot form. No I/O, no clock: every replica applies the same
 * entries to the same result.
 */
#include "mon/mon_auth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#define MON_AUTH_OP_VERSION 1
#define MON_AUTH_DB_VERSION 1
#define MON_AUTH_DB_VERSION_SVC 2 /* version 1 + the service keys */

void mon_auth_init(struct mon_auth *db)
{
	memset(db, 0, sizeof(*db));
}

void mon_auth_free(struct mon_auth *db)
{
	auth_svc_keys_clear(&db->svc);
	if (db->ents != NULL)
		OPENSSL_cleanse(db->ents, db->cap * sizeof(db->ents[0]));
	free(db->ents);
	mon_auth_init(db);
}

static struct mon_auth_ent *mon_auth_lookup(struct mon_auth *db, const char *entity)
{
	for (uint32_t i = 0; i < db->count; i++)
		if (strcmp(db->ents[i].entity, entity) == 0)
			return &db->ents[i];
	return NULL;
}

const struct mon_auth_ent *mon_auth_find(const struct mon_auth *db, const char *entity)
{
	return mon_auth_lookup((struct mon_auth *)db, entity);
}

static int mon_auth_grow(struct mon_auth *db)
{
	uint32_t ncap;
	struct mon_auth_ent *n;

	if (db->count < db->cap)
		return 0;
	if (db->count >= MON_AUTH_MAX)
		return -ENOSPC;
	ncap = db->cap ? db->cap * 2 : 16;
	n = calloc(ncap, sizeof(*n));
	if (n == NULL)
		return -ENOMEM;
	if (db->count > 0)
		memcpy(n, db->ents, db->count * sizeof(*n));
	if (db->ents != NULL)
		OPENSSL_cleanse(db->ents, db->cap * sizeof(db->ents[0]));
	free(db->ents);
	db->ents = n;
	db->cap = ncap;
	return 0;
}

int mon_auth_apply(struct mon_auth *db, const struct mon_auth_op *op)
{
	struct mon_auth_ent *e = mon_auth_lookup(db, op->entity);
	int rc;

	switch (op->kind) {
	case MON_AUTH_OP_ADD:
		if (e != NULL)
			return -EEXIST;
		rc = mon_auth_grow(db);
		if (rc != 0)
			return rc;
		e = &db->ents[db->count++];
		memset(e, 0, sizeof(*e));
		memcpy(e->entity, op->entity, sizeof(e->entity));
		e->key = op->key;
		e->caps = op->caps;
		return 0;
	case MON_AUTH_OP_CAPS:
		if (e == NULL)
			return -ENOENT;
		e->caps = op->caps;
		return 0;
	case MON_AUTH_OP_RM:
		if (e == NULL)
			return -ENOENT;
		OPENSSL_cleanse(e, sizeof(*e));
		*e = db->ents[db->count - 1];
		OPENSSL_cleanse(&db->ents[db->count - 1], sizeof(*e));
		db->count--;
		return 0;
	case MON_AUTH_OP_ROTATE:
		if (e == NULL)
			return -ENOENT;
		e->old_key = e->key;
		e->old_until_us = op->stamp_us + op->grace_us;
		e->key = op->key;
		return 0;
	}
	return -EINVAL;
}

/* ---------------------------------------------------------------- codecs */

static void mon_auth_put_entity(struct proto_enc *enc, const char *entity)
{
	proto_enc_put_str16(enc, entity, strlen(entity));
}

static int mon_auth_get_entity(struct proto_dec *dec, char *dst)
{
	struct auth_entity ent;
	char why[200];

	if (proto_dec_get_str16(dec, "entity", AUTH_ENTITY_MAX - 1, dst, AUTH_ENTITY_MAX,
				&(size_t){0}) != 0)
		return -EBADMSG;
	if (auth_entity_parse(dst, &ent, why, sizeof(why)) != 0)
		return proto_dec_fail(dec, "entity: %s", why);
	return 0;
}

static int mon_auth_finish_alloc(struct proto_enc *enc, void (*fill)(struct proto_enc *,
								      const void *),
				 const void *arg, void **buf_out, size_t *len_out)
{
	size_t len;
	void *buf;
	int rc;

	proto_enc_init(enc, NULL, 0);
	fill(enc, arg);
	rc = proto_enc_finish(enc, &len);
	if (rc != 0)
		return rc;
	buf = malloc(len ? len : 1);
	if (buf == NULL)
		return -ENOMEM;
	proto_enc_init(enc, buf, len);
	fill(enc, arg);
	rc = proto_enc_finish(enc, &len);
	if (rc != 0) {
		free(buf);
		return rc;
	}
	*buf_out = buf;
	*len_out = len;
	return 0;
}

static void mon_auth_op_fill(struct proto_enc *enc, const void *arg)
{
	const struct mon_auth_op *op = arg;

	proto_enc_put_u8(enc, MON_AUTH_OP_VERSION);
	proto_enc_put_u8(enc, op->kind);
	mon_auth_put_entity(enc, op->entity);
	proto_enc_put_bytes(enc, op->key.b, sizeof(op->key.b));
	auth_caps_encode(enc, &op->caps);
	proto_enc_put_u64(enc, op->stamp_us);
	proto_enc_put_u64(enc, op->grace_us);
}

int mon_auth_op_encode(const struct mon_auth_op *op, void **buf_out, size_t *len_out)
{
	struct proto_enc enc;

	return mon_auth_finish_alloc(&enc, mon_auth_op_fill, op, buf_out, len_out);
}

int mon_auth_op_decode(const void *buf, size_t len, struct proto_err *err,
		       struct mon_auth_op *op_out)
{
	struct mon_auth_op op = {0};
	struct proto_dec dec;
	uint8_t version;

	proto_dec_init(&dec, buf, len, "auth_op", err);
	proto_dec_get_u8(&dec, "version", &version);
	if (dec.err == 0 && version != MON_AUTH_OP_VERSION)
		return proto_dec_fail(&dec, "version: %u is not supported", version);
	proto_dec_get_u8(&dec, "kind", &op.kind);
	if (dec.err == 0 && (op.kind < MON_AUTH_OP_ADD || op.kind > MON_AUTH_OP_ROTATE))
		return proto_dec_fail(&dec, "kind: %u is unknown", op.kind);
	if (mon_auth_get_entity(&dec, op.entity) != 0)
		return -EBADMSG;
	proto_dec_get_bytes(&dec, "key", op.key.b, sizeof(op.key.b));
	if (auth_caps_decode(&dec, &op.caps) != 0)
		goto bad;
	proto_dec_get_u64(&dec, "stamp_us", &op.stamp_us);
	proto_dec_get_u64(&dec, "grace_us", &op.grace_us);
	if (proto_dec_finish(&dec) != 0)
		goto bad;
	*op_out = op;
	auth_key_wipe(&op.key);
	return 0;
bad:
	auth_key_wipe(&op.key);
	return -EBADMSG;
}

static void mon_auth_db_fill(struct proto_enc *enc, const void *arg)
{
	const struct mon_auth *db = arg;

	/* version 1 while there are no service keys: what a monitor before them reads */
	proto_enc_put_u8(enc, db->svc.count > 0 ? MON_AUTH_DB_VERSION_SVC : MON_AUTH_DB_VERSION);
	proto_enc_put_u32(enc, db->count);
	for (uint32_t i = 0; i < db->count; i++) {
		const struct mon_auth_ent *e = &db->ents[i];

		mon_auth_put_entity(enc, e->entity);
		proto_enc_put_bytes(enc, e->key.b, sizeof(e->key.b));
		auth_caps_encode(enc, &e->caps);
		proto_enc_put_bytes(enc, e->old_key.b, sizeof(e->old_key.b));
		proto_enc_put_u64(enc, e->old_until_us);
	}
	if (db->svc.count > 0)
		auth_svc_keys_encode(enc, &db->svc);
}

int mon_auth_db_encode(const struct mon_auth *db, void **buf_out, size_t *len_out)
{
	struct proto_enc enc;

	return mon_auth_finish_alloc(&enc, mon_auth_db_fill, db, buf_out, len_out);
}

int mon_auth_db_decode(const void *buf, size_t len, struct proto_err *err,
		       struct mon_auth *db_out)
{
	struct mon_auth db;
	struct proto_dec dec;
	uint8_t version;
	uint32_t n;
	int rc = -EBADMSG;

	mon_auth_init(&db);
	proto_dec_init(&dec, buf, len, "auth_db", err);
	proto_dec_get_u8(&dec, "version", &version);
	if (dec.err == 0 && version != MON_AUTH_DB_VERSION && version != MON_AUTH_DB_VERSION_SVC)
		return proto_dec_fail(&dec, "version: %u is not supported", version);
	/* entity (3) + key (32) + caps (6) + old key (32) + until (8) at least */
	if (proto_dec_get_count(&dec, "count", MON_AUTH_MAX, 81, &n) != 0)
		return -EBADMSG;
	for (uint32_t i = 0; i < n; i++) {
		struct mon_auth_ent e = {0};

		if (mon_auth_get_entity(&dec, e.entity) != 0)
			goto out;
		proto_dec_get_bytes(&dec, "key", e.key.b, sizeof(e.key.b));
		if (auth_caps_decode(&dec, &e.caps) != 0)
			goto out;
		proto_dec_get_bytes(&dec, "old_key", e.old_key.b, sizeof(e.old_key.b));
		proto_dec_get_u64(&dec, "old_until_us", &e.old_until_us);
		if (dec.err != 0)
			goto out;
		if (mon_auth_find(&db, e.entity) != NULL) {
			proto_dec_fail(&dec, "entity %s appears twice", e.entity);
			goto out;
		}
		rc = mon_auth_grow(&db);
		if (rc != 0)
			goto out;
		db.ents[db.count++] = e;
		OPENSSL_cleanse(&e, sizeof(e));
		rc = -EBADMSG;
	}
	if (version == MON_AUTH_DB_VERSION_SVC) {
		if (auth_svc_keys_decode(&dec, &db.svc) != 0)
			goto out;
		/* canonical: an empty set is written as version 1 */
		if (db.svc.count == 0) {
			proto_dec_fail(&dec, "version 2 without service keys");
			goto out;
		}
	}
	if (proto_dec_finish(&dec) != 0)
		goto out;
	mon_auth_free(db_out);
	*db_out = db;
	return 0;
out:
	mon_auth_free(&db);
	return rc;
}

void mon_auth_snap_split(const uint8_t *buf, size_t len, size_t *map_len_out,
			 const uint8_t **auth_out, size_t *auth_len_out)
{
	uint32_t alen, magic;

	*map_len_out = len;
	*auth_out = NULL;
	*auth_len_out = 0;
	if (len < 8)
		return;
	magic = (uint32_t)buf[len - 4] | (uint32_t)buf[len - 3] << 8 |
		(uint32_t)buf[len - 2] << 16 | (uint32_t)buf[len - 1] << 24;
	alen = (uint32_t)buf[len - 8] | (uint32_t)buf[len - 7] << 8 |
	       (uint32_t)buf[len - 6] << 16 | (uint32_t)buf[len - 5] << 24;
	if (magic != MON_SNAP_AUTH_MAGIC || alen > len - 8)
		return;
	*map_len_out = len - 8 - alen;
	*auth_out = buf + len - 8 - alen;
	*auth_len_out = alen;
}
