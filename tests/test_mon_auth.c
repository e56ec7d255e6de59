/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The monitors' auth database (mon/mon_auth.c): ops applied the same way
 * everywhere, their codec, the snapshot form, and the entry tag that no
 * map-increment entry can start with.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/log.h"
#include "mon/mon_auth.h"

static struct mon_auth_op op_make(uint8_t kind, const char *entity, const char *mon_caps)
{
	struct mon_auth_op op = {0};
	char err[256];

	op.kind = kind;
	strcpy(op.entity, entity);
	assert_int_equal(auth_key_generate(&op.key), 0);
	if (mon_caps != NULL)
		assert_int_equal(auth_caps_parse(&op.caps, AUTH_SVC_MON, mon_caps, err, sizeof(err)),
				 0);
	op.stamp_us = 1800000000ull * 1000000;
	return op;
}

static void test_apply(void **state)
{
	struct mon_auth db;
	struct mon_auth_op add = op_make(MON_AUTH_OP_ADD, "client.a", "allow r");
	struct mon_auth_op add2 = op_make(MON_AUTH_OP_ADD, "osd.1", "profile osd");
	struct mon_auth_op caps = op_make(MON_AUTH_OP_CAPS, "client.a", "allow *");
	struct mon_auth_op rot = op_make(MON_AUTH_OP_ROTATE, "client.a", NULL);
	struct mon_auth_op rm = op_make(MON_AUTH_OP_RM, "client.a", NULL);
	const struct mon_auth_ent *e;

	(void)state;
	mon_auth_init(&db);
	assert_int_equal(mon_auth_apply(&db, &add), 0);
	assert_int_equal(mon_auth_apply(&db, &add), -EEXIST);
	assert_int_equal(mon_auth_apply(&db, &add2), 0);
	assert_int_equal(db.count, 2);
	e = mon_auth_find(&db, "client.a");
	assert_true(auth_key_equal(&e->key, &add.key));
	assert_int_equal(mon_auth_apply(&db, &caps), 0);
	assert_true(auth_caps_allow(&e->caps, AUTH_SVC_MON, NULL, AUTH_PERM_X));
	rot.grace_us = 600ull * 1000000;
	assert_int_equal(mon_auth_apply(&db, &rot), 0);
	assert_true(auth_key_equal(&e->key, &rot.key));
	assert_true(auth_key_equal(&e->old_key, &add.key));
	assert_int_equal(e->old_until_us, rot.stamp_us + rot.grace_us);
	assert_int_equal(mon_auth_apply(&db, &rm), 0);
	assert_int_equal(mon_auth_apply(&db, &rm), -ENOENT);
	assert_null(mon_auth_find(&db, "client.a"));
	assert_non_null(mon_auth_find(&db, "osd.1"));
	caps.kind = 9;
	assert_int_equal(mon_auth_apply(&db, &caps), -EINVAL);
	mon_auth_free(&db);
}

static void test_op_codec(void **state)
{
	struct mon_auth_op op = op_make(MON_AUTH_OP_ADD, "client.admin", "allow *"), back;
	struct proto_err err;
	uint8_t *buf;
	size_t len;
	void *p;

	(void)state;
	op.grace_us = 5;
	assert_int_equal(mon_auth_op_encode(&op, &p, &len), 0);
	buf = p;
	assert_int_equal(mon_auth_op_decode(buf, len, &err, &back), 0);
	assert_string_equal(back.entity, "client.admin");
	assert_true(auth_key_equal(&back.key, &op.key));
	assert_int_equal(back.grace_us, 5);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(mon_auth_op_decode(buf, n, &err, &back), -EBADMSG);
	buf[1] = 7;
	assert_int_equal(mon_auth_op_decode(buf, len, &err, &back), -EBADMSG);
	assert_non_null(strstr(err.msg, "kind: 7 is unknown"));
	free(p);
}

static void test_db_snapshot(void **state)
{
	struct mon_auth db, back;
	struct mon_auth_op a = op_make(MON_AUTH_OP_ADD, "client.a", "allow r");
	struct mon_auth_op b = op_make(MON_AUTH_OP_ADD, "mon.", "allow *");
	struct proto_err err;
	const uint8_t *auth;
	size_t len, map_len, auth_len;
	uint8_t *snap;
	void *p;

	(void)state;
	mon_auth_init(&db);
	mon_auth_init(&back);
	assert_int_equal(mon_auth_apply(&db, &a), 0);
	assert_int_equal(mon_auth_apply(&db, &b), 0);
	assert_int_equal(mon_auth_db_encode(&db, &p, &len), 0);
	/* The snapshot as mon_raft.c writes it: map bytes, auth bytes, [len][magic]. */
	snap = malloc(10 + len + 8);
	memset(snap, 0xee, 10);
	memcpy(snap + 10, p, len);
	for (int i = 0; i < 4; i++) {
		snap[10 + len + i] = (uint8_t)(len >> (8 * i));
		snap[10 + len + 4 + i] = (uint8_t)(MON_SNAP_AUTH_MAGIC >> (8 * i));
	}
	mon_auth_snap_split(snap, 10 + len + 8, &map_len, &auth, &auth_len);
	assert_int_equal(map_len, 10);
	assert_int_equal(auth_len, len);
	assert_int_equal(mon_auth_db_decode(auth, auth_len, &err, &back), 0);
	assert_int_equal(back.count, 2);
	assert_true(auth_key_equal(&mon_auth_find(&back, "mon.")->key, &b.key));
	/* A snapshot from before (the map alone) has no trailer. */
	mon_auth_snap_split(snap, 10, &map_len, &auth, &auth_len);
	assert_int_equal(map_len, 10);
	assert_null(auth);
	/* A trailer whose length runs past the start is not one. */
	snap[10 + len] = 0xff;
	snap[10 + len + 1] = 0xff;
	mon_auth_snap_split(snap, 10 + len + 8, &map_len, &auth, &auth_len);
	assert_null(auth);
	/* Truncations of the database are refused and leave the target as it was. */
	for (size_t n = 0; n < len; n++)
		assert_int_equal(mon_auth_db_decode(p, n, &err, &back), -EBADMSG);
	assert_int_equal(back.count, 2);
	free(snap);
	free(p);
	mon_auth_free(&db);
	mon_auth_free(&back);
}

/* A map entry starts with its length; the tag is no length an entry can have. */
static void test_tag(void **state)
{
	(void)state;
	assert_true(MON_ENTRY_TAG_AUTH > 0xf0000000u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apply),
		cmocka_unit_test(test_op_codec),
		cmocka_unit_test(test_db_snapshot),
		cmocka_unit_test(test_tag),
	};

	weft_log_mute(true);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
