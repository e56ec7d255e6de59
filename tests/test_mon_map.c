/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cluster map and monitor messages: round trips, increments applied in
 * order and refused out of order, every truncation of an encoding refused,
 * and the mon message types' validation rules.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mon/map.h"
#include "proto/codec.h"
#include "proto/proto.h"

static struct mon_osd mk_osd(uint32_t id, uint8_t state)
{
	struct mon_osd o;

	memset(&o, 0, sizeof(o));
	o.id = id;
	o.state = MON_OSD_EXISTS | state;
	o.uuid[0] = (uint8_t)(id + 1);
	o.uuid[15] = 0x5a;
	o.weight = MON_WEIGHT_ONE;
	o.up_from = 2;
	snprintf(o.host, sizeof(o.host), "host%u", id % 2);
	snprintf(o.public_addr, sizeof(o.public_addr), "127.1.0.%u:6800", 10 + id);
	snprintf(o.cluster_addr, sizeof(o.cluster_addr), "127.2.0.%u:6800", 10 + id);
	return o;
}

/* Build epochs 1..3: create, add 3 OSDs and a pool, mark osd.1 down + set noout. */
static void build_map(struct mon_map *map)
{
	struct mon_inc inc;
	struct mon_op op;

	mon_map_init(map);
	mon_inc_init(&inc);
	inc.epoch = 1;
	assert_int_equal(mon_map_apply(map, &inc), 0);
	mon_inc_free(&inc);

	inc.epoch = 2;
	for (uint32_t i = 0; i < 3; i++) {
		op.kind = MON_OP_OSD_SET;
		op.osd = mk_osd(i, MON_OSD_UP | MON_OSD_IN);
		assert_int_equal(mon_inc_add(&inc, &op), 0);
	}
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_POOL_SET;
	op.pool.id = 1;
	op.pool.size = 3;
	op.pool.min_size = 2;
	op.pool.pg_num = 128;
	strcpy(op.pool.name, "rbd");
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_map_apply(map, &inc), 0);
	mon_inc_free(&inc);

	inc.epoch = 3;
	op.kind = MON_OP_OSD_SET;
	op.osd = mk_osd(1, MON_OSD_IN);
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	op.kind = MON_OP_FLAGS;
	op.flags = MON_FLAG_NOOUT;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_map_apply(map, &inc), 0);
	mon_inc_free(&inc);
}

static void test_map_apply_and_roundtrip(void **state)
{
	struct mon_map map, back;
	struct proto_err err;
	uint32_t total, up, in;
	void *buf, *buf2;
	size_t len, len2;

	build_map(&map);
	assert_int_equal(map.epoch, 3);
	mon_map_osd_counts(&map, &total, &up, &in);
	assert_int_equal(total, 3);
	assert_int_equal(up, 2);
	assert_int_equal(in, 3);
	assert_int_equal(map.flags, MON_FLAG_NOOUT);
	assert_non_null(mon_map_pool_by_name(&map, "rbd"));
	assert_int_equal(map.next_pool_id, 2);

	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	mon_map_init(&back);
	assert_int_equal(mon_map_decode(buf, len, &err, &back), 0);
	assert_int_equal(mon_map_encode(&back, &buf2, &len2), 0);
	assert_int_equal(len, len2);
	assert_memory_equal(buf, buf2, len);
	/* Every strict prefix is refused, and refused without touching the output. */
	for (size_t n = 0; n < len; n++) {
		uint8_t *cut = malloc(n > 0 ? n : 1);

		memcpy(cut, buf, n);
		err.msg[0] = '\0';
		assert_int_equal(mon_map_decode(cut, n, &err, &back), -EBADMSG);
		assert_true(err.msg[0] != '\0');
		assert_int_equal(back.epoch, 3);
		free(cut);
	}
	free(buf);
	free(buf2);
	mon_map_free(&back);
	mon_map_free(&map);
}

static void put_le32(uint8_t *p, uint32_t v) /* the codec's byte order */
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint8_t enc_version(const struct mon_map *map)
{
	void *buf;
	size_t len;
	uint8_t v;

	assert_int_equal(mon_map_encode(map, &buf, &len), 0);
	v = ((uint8_t *)buf)[0];
	free(buf);
	return v;
}

/* Version 3: ratios, fullness bits, quotas and pool flags; defaults; canonical encodings. */
static void test_map_capacity(void **state)
{
	struct mon_map map, back;
	struct mon_inc inc, iback;
	struct proto_err err;
	struct mon_op op;
	void *buf, *buf2;
	size_t len, len2;

	build_map(&map);
	/* a map without capacity content is still version 1, with the default ratios */
	assert_int_equal(enc_version(&map), 1);
	assert_int_equal(map.nearfull_ratio, MON_NEARFULL_RATIO_DEFAULT);
	assert_int_equal(map.backfillfull_ratio, MON_BACKFILLFULL_RATIO_DEFAULT);
	assert_int_equal(map.full_ratio, MON_FULL_RATIO_DEFAULT);
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	mon_map_init(&back);
	back.full_ratio = 1; /* replaced by the decode */
	assert_int_equal(mon_map_decode(buf, len, &err, &back), 0);
	assert_int_equal(back.full_ratio, MON_FULL_RATIO_DEFAULT);
	assert_int_equal(back.nearfull_ratio, MON_NEARFULL_RATIO_DEFAULT);
	free(buf);
	assert_false(mon_map_osd_nearfull(&map, 0));
	assert_false(mon_map_pool_full(&map, 1));
	assert_false(mon_map_pool_full(&map, 99));
	assert_false(mon_map_osd_full(&map, 99));

	mon_inc_init(&inc);
	inc.epoch = 4;
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_FULL_RATIOS;
	op.ratios = (struct mon_ratios){ 800000, 880000, 920000 };
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	op.kind = MON_OP_OSD_SET;
	op.osd = *mon_map_osd(&map, 2);
	op.osd.state |= MON_OSD_FULLNESS;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	op.osd = *mon_map_osd(&map, 0);
	op.osd.state |= MON_OSD_NEARFULL;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_POOL_SET;
	op.pool = *mon_map_pool(&map, 1);
	op.pool.quota_max_bytes = 10ull << 30;
	op.pool.quota_max_objects = 5000000000ull; /* past 32 bits */
	op.pool.flags = MON_POOL_F_FULL;
	assert_int_equal(mon_inc_add(&inc, &op), 0);

	/* the increment round-trips as version 3 */
	assert_int_equal(mon_inc_encode(&inc, &buf, &len), 0);
	assert_int_equal(((uint8_t *)buf)[0], 3);
	assert_int_equal(mon_inc_decode(buf, len, &err, &iback), 0);
	assert_int_equal(iback.nops, 4);
	assert_int_equal(iback.ops[0].ratios.full, 920000);
	assert_int_equal(iback.ops[1].osd.state & MON_OSD_FULLNESS, MON_OSD_FULLNESS);
	assert_int_equal(iback.ops[3].pool.quota_max_objects, 5000000000ull);
	assert_int_equal(iback.ops[3].pool.flags, MON_POOL_F_FULL);
	mon_inc_free(&iback);
	free(buf);

	assert_int_equal(mon_map_apply(&map, &inc), 0);
	mon_inc_free(&inc);
	assert_int_equal(map.nearfull_ratio, 800000);
	assert_int_equal(map.backfillfull_ratio, 880000);
	assert_int_equal(map.full_ratio, 920000);
	assert_true(mon_map_osd_full(&map, 2));
	assert_true(mon_map_osd_backfillfull(&map, 2));
	assert_true(mon_map_osd_nearfull(&map, 2));
	assert_false(mon_map_osd_full(&map, 0));
	assert_false(mon_map_osd_backfillfull(&map, 0));
	assert_true(mon_map_osd_nearfull(&map, 0));
	assert_false(mon_map_osd_nearfull(&map, 1));
	assert_true(mon_map_pool_full(&map, 1));
	assert_string_equal(mon_osd_fullness_str(mon_map_osd(&map, 2)->state), "full");
	assert_string_equal(mon_osd_fullness_str(mon_map_osd(&map, 0)->state), "nearfull");
	assert_string_equal(mon_osd_state_str(mon_map_osd(&map, 2)->state), "up,in");

	/* the map round-trips as version 3, byte for byte; every prefix is refused */
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	assert_int_equal(((uint8_t *)buf)[0], 3);
	assert_int_equal(mon_map_decode(buf, len, &err, &back), 0);
	assert_int_equal(back.full_ratio, 920000);
	assert_int_equal(mon_map_pool(&back, 1)->quota_max_bytes, 10ull << 30);
	assert_true(mon_map_osd_full(&back, 2));
	assert_int_equal(mon_map_encode(&back, &buf2, &len2), 0);
	assert_int_equal(len, len2);
	assert_memory_equal(buf, buf2, len);
	free(buf2);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(mon_map_decode(buf, n, &err, &back), -EBADMSG);
	free(buf);

	/* ratios out of order are refused by apply, and the map does not change */
	mon_inc_init(&inc);
	inc.epoch = 5;
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_FULL_RATIOS;
	op.ratios = (struct mon_ratios){ 900000, 880000, 950000 };
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_map_apply(&map, &inc), -EINVAL);
	op.ratios = (struct mon_ratios){ 0, 880000, 950000 };
	inc.ops[0] = op;
	assert_int_equal(mon_map_apply(&map, &inc), -EINVAL);
	op.ratios = (struct mon_ratios){ 800000, 880000, MON_RATIO_ONE };
	inc.ops[0] = op;
	assert_int_equal(mon_map_apply(&map, &inc), -EINVAL);
	assert_int_equal(map.epoch, 4);
	assert_int_equal(map.full_ratio, 920000);
	/* ... and by the decoder: the op is the last 12 bytes of the increment */
	op.ratios = (struct mon_ratios){ 800000, 880000, 950000 };
	inc.ops[0] = op;
	assert_int_equal(mon_inc_encode(&inc, &buf, &len), 0);
	assert_int_equal(mon_inc_decode(buf, len, &err, &iback), 0);
	mon_inc_free(&iback);
	put_le32((uint8_t *)buf + len - 12, 960000);
	assert_int_equal(mon_inc_decode(buf, len, &err, &iback), -EBADMSG);
	free(buf);
	mon_inc_free(&inc);

	/* unknown pool flags and OSD state bits are refused */
	mon_inc_init(&inc);
	inc.epoch = 5;
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_POOL_SET;
	op.pool = *mon_map_pool(&map, 1);
	op.pool.flags = 0x80;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_map_apply(&map, &inc), -EINVAL);
	mon_inc_free(&inc);

	/* back to defaults and no bits: the encoding drops to version 1 again */
	mon_inc_init(&inc);
	inc.epoch = 5;
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_FULL_RATIOS;
	op.ratios = (struct mon_ratios){ MON_NEARFULL_RATIO_DEFAULT, MON_BACKFILLFULL_RATIO_DEFAULT,
					 MON_FULL_RATIO_DEFAULT };
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	op.kind = MON_OP_OSD_SET;
	for (uint32_t i = 0; i < 3; i++) {
		op.osd = *mon_map_osd(&map, i);
		op.osd.state &= (uint8_t)~MON_OSD_FULLNESS;
		assert_int_equal(mon_inc_add(&inc, &op), 0);
	}
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_POOL_SET;
	op.pool = *mon_map_pool(&map, 1);
	op.pool.quota_max_bytes = op.pool.quota_max_objects = 0;
	op.pool.flags = 0;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_map_apply(&map, &inc), 0);
	mon_inc_free(&inc);
	assert_int_equal(enc_version(&map), 1);
	assert_false(mon_map_osd_nearfull(&map, 2));
	assert_false(mon_map_pool_full(&map, 1));

	/* canonical: version 3 saying only what version 1 can say is refused */
	mon_inc_init(&inc);
	inc.epoch = 6;
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_FULL_RATIOS;
	op.ratios = (struct mon_ratios){ 700000, 800000, 900000 };
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_map_apply(&map, &inc), 0);
	mon_inc_free(&inc);
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	assert_int_equal(((uint8_t *)buf)[0], 3);
	assert_int_equal(mon_map_decode(buf, len, &err, &back), 0);
	put_le32((uint8_t *)buf + len - 12, MON_NEARFULL_RATIO_DEFAULT);
	put_le32((uint8_t *)buf + len - 8, MON_BACKFILLFULL_RATIO_DEFAULT);
	put_le32((uint8_t *)buf + len - 4, MON_FULL_RATIO_DEFAULT);
	assert_int_equal(mon_map_decode(buf, len, &err, &back), -EBADMSG);
	assert_non_null(strstr(err.msg, "version"));
	put_le32((uint8_t *)buf + len - 12, 950000); /* out of order */
	assert_int_equal(mon_map_decode(buf, len, &err, &back), -EBADMSG);
	assert_int_equal(back.nearfull_ratio, 700000); /* the last good decode */
	free(buf);
	mon_map_free(&back);
	mon_map_free(&map);
}

/* Version 4: the new flags, an OSD's reweight override, the removal of an OSD. */
static void test_map_lifecycle(void **state)
{
	struct mon_map map, back;
	struct mon_inc inc, inc2;
	struct proto_err err;
	struct mon_op op;
	void *buf;
	size_t len;
	char f[MON_FLAGS_STR_MAX];

	(void)state;
	build_map(&map);
	assert_int_equal(enc_version(&map), 1);
	/* the names round-trip, and every flag fits the buffer */
	for (uint32_t bit = 1; bit & MON_FLAGS_KNOWN; bit <<= 1)
		assert_int_equal(mon_flag_parse(mon_flags_str(bit, f, sizeof(f))), bit);
	assert_string_equal(mon_flags_str(MON_FLAGS_KNOWN, f, sizeof(f)),
			    "noout,pause,noin,noup,nodown,norecover,nobackfill,norebalance,"
			    "noscrub,nodeep-scrub");
	assert_int_equal(mon_flag_parse("bogus"), 0);

	/* epoch 4: norecover and osd.2 reweighted to 0.5: version 4 */
	mon_inc_init(&inc);
	inc.epoch = 4;
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_FLAGS;
	op.flags = MON_FLAG_NOOUT | MON_FLAG_NORECOVER;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	op.kind = MON_OP_OSD_SET;
	op.osd = map.osds[2];
	op.osd.reject = MON_WEIGHT_ONE / 2;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_inc_encode(&inc, &buf, &len), 0);
	assert_int_equal(((uint8_t *)buf)[0], 4);
	assert_int_equal(mon_inc_decode(buf, len, &err, &inc2), 0);
	free(buf);
	assert_int_equal(inc2.ops[1].osd.reject, MON_WEIGHT_ONE / 2);
	assert_int_equal(mon_map_apply(&map, &inc2), 0);
	mon_inc_free(&inc2);
	mon_inc_free(&inc);
	assert_int_equal(enc_version(&map), 4);
	assert_true(mon_osd_reweight(&map.osds[2]) == 0.5);
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	mon_map_init(&back);
	assert_int_equal(mon_map_decode(buf, len, &err, &back), 0);
	free(buf);
	assert_int_equal(back.flags, MON_FLAG_NOOUT | MON_FLAG_NORECOVER);
	assert_int_equal(back.osds[2].reject, MON_WEIGHT_ONE / 2);
	assert_int_equal(back.osds[0].reject, 0);
	mon_map_free(&back);

	/* a reject above 1.0 is refused by apply */
	mon_inc_init(&inc);
	inc.epoch = 5;
	op.kind = MON_OP_OSD_SET;
	op.osd = map.osds[0];
	op.osd.reject = MON_WEIGHT_ONE + 1;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_map_apply(&map, &inc), -EINVAL);
	mon_inc_free(&inc);

	/* epoch 5: osd.2 removed (the last id: max_osd shrinks as a decoder's would) */
	mon_inc_init(&inc);
	inc.epoch = 5;
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_OSD_RM;
	op.osd_id = 2;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_inc_encode(&inc, &buf, &len), 0);
	assert_int_equal(((uint8_t *)buf)[0], 4);
	assert_int_equal(mon_inc_decode(buf, len, &err, &inc2), 0);
	free(buf);
	assert_int_equal(inc2.ops[0].kind, MON_OP_OSD_RM);
	assert_int_equal(inc2.ops[0].osd_id, 2);
	assert_int_equal(mon_map_apply(&map, &inc2), 0);
	mon_inc_free(&inc2);
	mon_inc_free(&inc);
	assert_null(mon_map_osd(&map, 2));
	assert_int_equal(map.max_osd, 2);
	assert_non_null(mon_map_osd(&map, 1));

	/* unsetting the new flags goes back to the lowest version */
	mon_inc_init(&inc);
	inc.epoch = 6;
	op.kind = MON_OP_FLAGS;
	op.flags = MON_FLAG_NOOUT;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_map_apply(&map, &inc), 0);
	mon_inc_free(&inc);
	assert_int_equal(enc_version(&map), 1);
	mon_map_free(&map);
}

static void test_inc_order(void **state)
{
	struct mon_map map;
	struct mon_inc inc, back;
	struct proto_err err;
	struct mon_op op;
	void *buf;
	size_t len;

	build_map(&map);
	mon_inc_init(&inc);
	inc.epoch = 3; /* stale */
	op.kind = MON_OP_POOL_RM;
	op.pool_id = 1;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_map_apply(&map, &inc), -ESTALE);
	inc.epoch = 5; /* a gap */
	assert_int_equal(mon_map_apply(&map, &inc), -ESTALE);
	inc.epoch = 4;
	strcpy(inc.reason, "test");
	assert_int_equal(mon_inc_encode(&inc, &buf, &len), 0);
	assert_int_equal(mon_inc_decode(buf, len, &err, &back), 0);
	assert_string_equal(back.reason, "test");
	assert_int_equal(mon_map_apply(&map, &back), 0);
	assert_int_equal(map.epoch, 4);
	assert_null(mon_map_pool_by_name(&map, "rbd"));
	mon_inc_free(&back);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(mon_inc_decode(buf, n, &err, &back), -EBADMSG);
	/* An unknown op kind is refused. */
	((uint8_t *)buf)[len - 5] = 99;
	assert_int_equal(mon_inc_decode(buf, len, &err, &back), -EBADMSG);
	free(buf);
	mon_inc_free(&inc);
	mon_map_free(&map);
}

static void test_map_bad_input(void **state)
{
	struct mon_map map;
	struct proto_err err;
	void *buf;
	size_t len;

	build_map(&map);
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	((uint8_t *)buf)[0] = 9; /* version */
	assert_int_equal(mon_map_decode(buf, len, &err, &map), -EBADMSG);
	assert_non_null(strstr(err.msg, "version"));
	((uint8_t *)buf)[0] = MON_MAP_VERSION;
	((uint8_t *)buf)[5] = 0x80; /* unknown flag */
	assert_int_equal(mon_map_decode(buf, len, &err, &map), -EBADMSG);
	free(buf);
	mon_map_free(&map);
}

/* Health mutes (version 6): set, replace, remove; the map and increments round-trip. */
static void test_map_mutes(void **state)
{
	struct mon_map map, back;
	struct mon_inc inc, ib;
	struct mon_op op = { .kind = MON_OP_MUTE_SET };
	struct proto_err err;
	void *buf;
	size_t len;

	(void)state;
	mon_map_init(&map);
	mon_map_init(&back);
	mon_inc_init(&inc);
	inc.epoch = 1;
	snprintf(op.mute.code, sizeof(op.mute.code), "PG_DEGRADED");
	op.mute.count = 16;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	snprintf(op.mute.code, sizeof(op.mute.code), "OSD_DOWN");
	op.mute.until_ms = 1800000000000ull;
	op.mute.count = 1;
	op.mute.sticky = 1;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_inc_encode(&inc, &buf, &len), 0);
	assert_int_equal(((uint8_t *)buf)[0], 6);
	assert_int_equal(mon_inc_decode(buf, len, &err, &ib), 0);
	free(buf);
	assert_int_equal(mon_map_apply(&map, &ib), 0);
	mon_inc_free(&ib);
	assert_int_equal(map.nmutes, 2);
	assert_string_equal(map.mutes[0].code, "OSD_DOWN"); /* sorted */
	assert_non_null(mon_map_mute(&map, "PG_DEGRADED"));
	assert_null(mon_map_mute(&map, "MON_DOWN"));
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	assert_int_equal(((uint8_t *)buf)[0], 6);
	assert_int_equal(mon_map_decode(buf, len, &err, &back), 0);
	free(buf);
	assert_int_equal(back.nmutes, 2);
	assert_int_equal(back.mutes[0].until_ms, 1800000000000ull);
	assert_int_equal(back.mutes[0].sticky, 1);
	assert_int_equal(back.mutes[1].count, 16);
	/* remove one, the other; the map goes back to a lower version */
	mon_inc_free(&inc);
	inc.epoch = 2;
	op = (struct mon_op){ .kind = MON_OP_MUTE_RM };
	snprintf(op.mute.code, sizeof(op.mute.code), "OSD_DOWN");
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	snprintf(op.mute.code, sizeof(op.mute.code), "PG_DEGRADED");
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_map_apply(&map, &inc), 0);
	assert_int_equal(map.nmutes, 0);
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	assert_int_equal(((uint8_t *)buf)[0], 1);
	free(buf);
	/* a bad code is refused by apply */
	mon_inc_free(&inc);
	inc.epoch = 3;
	op = (struct mon_op){ .kind = MON_OP_MUTE_SET };
	snprintf(op.mute.code, sizeof(op.mute.code), "osd down");
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_map_apply(&map, &inc), -EINVAL);
	assert_false(mon_mute_code_valid(""));
	assert_true(mon_mute_code_valid("OSD_NEARFULL"));
	mon_inc_free(&inc);
	mon_map_free(&map);
	mon_map_free(&back);
}

/* The client blocklist (version 7): add, replace, remove, canonical order, bad input. */
static void test_map_blocklist(void **state)
{
	struct mon_map map, back;
	struct mon_inc inc, ib;
	struct mon_op op = { .kind = MON_OP_BLOCKLIST_ADD };
	struct proto_err err;
	void *buf;
	size_t len;

	(void)state;
	mon_map_init(&map);
	mon_map_init(&back);
	mon_inc_init(&inc);
	inc.epoch = 1;
	/* added out of order: the map keeps them sorted by instance */
	op.bl = (struct mon_blocklist){ 0x9000000000000001ull, 1800000000000ull, 1700000000000ull };
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	op.bl = (struct mon_blocklist){ 0x11ull, 1800000001000ull, 1700000000500ull };
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	op.bl = (struct mon_blocklist){ 0x5555ull, 1800000002000ull, 1700000000600ull };
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_inc_encode(&inc, &buf, &len), 0);
	assert_int_equal(((uint8_t *)buf)[0], 7);
	assert_int_equal(mon_inc_decode(buf, len, &err, &ib), 0);
	/* every truncation of the increment is refused, never crashes */
	for (size_t n = 0; n < len; n++) {
		struct mon_inc t;

		assert_int_equal(mon_inc_decode(buf, n, &err, &t), -EBADMSG);
	}
	free(buf);
	assert_int_equal(ib.nops, 3);
	assert_int_equal(ib.ops[1].bl.until_ms, 1800000001000ull);
	assert_int_equal(mon_map_apply(&map, &ib), 0);
	mon_inc_free(&ib);
	assert_int_equal(map.nblocklist, 3);
	assert_true(map.blocklist[0].instance == 0x11ull);
	assert_true(map.blocklist[1].instance == 0x5555ull);
	assert_true(map.blocklist[2].instance == 0x9000000000000001ull);
	assert_true(mon_map_blocklisted(&map, 0x5555ull));
	assert_true(mon_map_blocklisted(&map, 0x9000000000000001ull));
	assert_false(mon_map_blocklisted(&map, 0x5556ull));
	assert_false(mon_map_blocklisted(&map, 1));
	/* the map round-trips in version 7 */
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	assert_int_equal(((uint8_t *)buf)[0], 7);
	assert_int_equal(mon_map_decode(buf, len, &err, &back), 0);
	assert_int_equal(back.nblocklist, 3);
	assert_true(back.blocklist[1].added_ms == 1700000000600ull);
	assert_true(back.blocklist[2].until_ms == 1800000000000ull);
	/* out of order on the wire (swap the first two instances' bytes): refused */
	{
		size_t at = len - 3 * 24, i;
		uint8_t tmp[8];

		for (i = 0; i < 8; i++)
			tmp[i] = ((uint8_t *)buf)[at + i];
		memcpy((uint8_t *)buf + at, (uint8_t *)buf + at + 24, 8);
		memcpy((uint8_t *)buf + at + 24, tmp, 8);
		assert_int_equal(mon_map_decode(buf, len, &err, &back), -EBADMSG);
		assert_non_null(strstr(err.msg, "blocklist"));
	}
	free(buf);
	/* replace (new expiry), then remove two, one of them absent: a no-op */
	mon_inc_free(&inc);
	inc.epoch = 2;
	op.bl = (struct mon_blocklist){ 0x5555ull, 1900000000000ull, 1700000009000ull };
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	op = (struct mon_op){ .kind = MON_OP_BLOCKLIST_RM };
	op.bl.instance = 0x11ull;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	op.bl.instance = 0x77ull;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_inc_encode(&inc, &buf, &len), 0);
	assert_int_equal(mon_inc_decode(buf, len, &err, &ib), 0);
	free(buf);
	assert_int_equal(mon_map_apply(&map, &ib), 0);
	mon_inc_free(&ib);
	assert_int_equal(map.nblocklist, 2);
	assert_true(mon_map_blocklist_find(&map, 0x5555ull)->until_ms == 1900000000000ull);
	assert_false(mon_map_blocklisted(&map, 0x11ull));
	/* remove the rest: the map goes back to a lower version */
	mon_inc_free(&inc);
	inc.epoch = 3;
	op.bl.instance = 0x5555ull;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	op.bl.instance = 0x9000000000000001ull;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_map_apply(&map, &inc), 0);
	assert_int_equal(map.nblocklist, 0);
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	assert_int_equal(((uint8_t *)buf)[0], 1);
	free(buf);
	/* an entry without expiry, or of instance 0, is refused by apply and by the decoder */
	mon_inc_free(&inc);
	inc.epoch = 4;
	op = (struct mon_op){ .kind = MON_OP_BLOCKLIST_ADD };
	op.bl.instance = 0x42;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_map_apply(&map, &inc), -EINVAL);
	assert_int_equal(mon_inc_encode(&inc, &buf, &len), 0);
	assert_int_equal(mon_inc_decode(buf, len, &err, &ib), -EBADMSG);
	assert_non_null(strstr(err.msg, "expire"));
	free(buf);
	inc.ops[0].bl.until_ms = 5;
	inc.ops[0].bl.instance = 0;
	assert_int_equal(mon_map_apply(&map, &inc), -EINVAL);
	/* a version-6 increment cannot carry a blocklist op */
	inc.ops[0].bl.instance = 0x42;
	assert_int_equal(mon_inc_encode(&inc, &buf, &len), 0);
	((uint8_t *)buf)[0] = 6;
	assert_int_equal(mon_inc_decode(buf, len, &err, &ib), -EBADMSG);
	assert_non_null(strstr(err.msg, "needs version 7"));
	free(buf);
	mon_inc_free(&inc);
	mon_map_free(&map);
	mon_map_free(&back);
}

static void roundtrip(const struct proto_msg *m)
{
	uint8_t buf[4096], buf2[4096];
	struct proto_hdr hdr;
	struct proto_msg back;
	struct proto_err err;
	size_t len, len2;

	assert_int_equal(proto_frame_encode(m, 7, buf, sizeof(buf), &len), 0);
	assert_int_equal(proto_frame_decode(buf, len, PROTO_PAYLOAD_MAX, NULL, &err, &hdr, &back),
			 0);
	assert_int_equal(back.type, m->type);
	assert_int_equal(proto_frame_encode(&back, 7, buf2, sizeof(buf2), &len2), 0);
	assert_int_equal(len, len2);
	assert_memory_equal(buf, buf2, len);
	for (size_t n = PROTO_HDR_LEN; n < len; n++)
		assert_int_equal(proto_msg_decode(m->type, buf + PROTO_HDR_LEN, n - PROTO_HDR_LEN,
						  &err, &back),
				 -EBADMSG);
}

/* PG_STATS: the OSD's stat block and a PG's bytes survive the round trip; avail > total is refused. */
static void test_pg_stats_capacity(void **state)
{
	uint8_t ent[512], buf[4096];
	struct proto_enc enc;
	struct proto_pg_stat s = { .pool = 2, .pg = 0x1f, .state = PROTO_PGS_ACTIVE |
					   PROTO_PGS_CLEAN | PROTO_PGS_BACKFILL_TOOFULL,
				   .same_since = 9, .objects = 12, .bytes = 12345678901ull };
	struct proto_pg_stat back_s;
	struct proto_msg m = { .type = PROTO_PG_STATS }, back;
	struct proto_hdr hdr;
	struct proto_err err;
	size_t len, off = 0;
	char name[128];

	proto_enc_init(&enc, ent, sizeof(ent));
	proto_pg_stat_put(&enc, &s);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	m.pg_stats.osd = 3;
	m.pg_stats.epoch = 77;
	m.pg_stats.osd_stat = (struct proto_osd_stat){ .total = 64ull << 20, .used = 40ull << 20,
						      .avail = 24ull << 20, .data_used = 36ull << 20,
						      .wal_bytes = 1ull << 20, .kv_bytes = 3ull << 20,
						      .purging_objects = 5, .num_pgs = 33 };
	m.pg_stats.count = 1;
	m.pg_stats.entries = ent;
	m.pg_stats.entries_len = (uint32_t)len;
	roundtrip(&m);
	assert_int_equal(proto_frame_encode(&m, 7, buf, sizeof(buf), &len), 0);
	assert_int_equal(proto_frame_decode(buf, len, PROTO_PAYLOAD_MAX, NULL, &err, &hdr, &back), 0);
	assert_int_equal(back.pg_stats.osd_stat.total, 64ull << 20);
	assert_int_equal(back.pg_stats.osd_stat.kv_bytes, 3ull << 20);
	assert_int_equal(back.pg_stats.osd_stat.purging_objects, 5);
	assert_int_equal(back.pg_stats.osd_stat.num_pgs, 33);
	assert_int_equal(proto_pg_stat_next(&back.pg_stats, &off, &back_s), 1);
	assert_int_equal(back_s.bytes, 12345678901ull);
	assert_int_equal(back_s.objects, 12);
	assert_string_equal(proto_pg_state_str(back_s.state, name, sizeof(name)),
			    "active+clean+backfill_toofull");
	/* the I/O counters (PROTO_FEAT_IO_STATS) after the entries; without them, nothing */
	assert_false(back.pg_stats.has_io);
	assert_int_equal(back.pg_stats.entries_len, m.pg_stats.entries_len);
	m.pg_stats.has_io = true;
	m.pg_stats.io = (struct proto_osd_io){ .rd_ops = 1, .rd_bytes = 4096, .wr_ops = 7,
					       .wr_bytes = 7ull << 30 };
	roundtrip(&m);
	assert_int_equal(proto_frame_encode(&m, 7, buf, sizeof(buf), &len), 0);
	assert_int_equal(proto_frame_decode(buf, len, PROTO_PAYLOAD_MAX, NULL, &err, &hdr, &back), 0);
	assert_true(back.pg_stats.has_io);
	assert_int_equal(back.pg_stats.entries_len, m.pg_stats.entries_len);
	assert_int_equal(back.pg_stats.io.wr_bytes, 7ull << 30);
	assert_int_equal(back.pg_stats.io.wr_ops, 7);
	off = 0;
	assert_int_equal(proto_pg_stat_next(&back.pg_stats, &off, &back_s), 1);
	assert_int_equal(proto_pg_stat_next(&back.pg_stats, &off, &back_s), 0);
	m.pg_stats.has_io = false;
	m.pg_stats.osd_stat.avail = m.pg_stats.osd_stat.total + 1;
	assert_int_equal(proto_frame_encode(&m, 7, buf, sizeof(buf), &len), 0);
	assert_int_equal(proto_frame_decode(buf, len, PROTO_PAYLOAD_MAX, NULL, &err, &hdr, &back),
			 -EBADMSG);
	assert_non_null(strstr(err.msg, "avail"));
}

static void test_mon_messages(void **state)
{
	struct proto_msg m;
	static const char json[] = "{\"prefix\":\"status\"}";

	memset(&m, 0, sizeof(m));
	m.type = PROTO_MON_CMD;
	m.mon_cmd.json = json;
	m.mon_cmd.json_len = sizeof(json) - 1;
	roundtrip(&m);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_MON_CMD_REPLY;
	m.mon_cmd_reply.status = -ENOENT;
	m.mon_cmd_reply.epoch = 9;
	m.mon_cmd_reply.out = json;
	m.mon_cmd_reply.out_len = 5;
	strcpy(m.mon_cmd_reply.msg, "pool 'x' does not exist");
	m.mon_cmd_reply.msg_len = strlen(m.mon_cmd_reply.msg);
	roundtrip(&m);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_MON_SUB;
	m.mon_sub.have_epoch = 3;
	m.mon_sub.flags = PROTO_SUB_F_ONETIME;
	roundtrip(&m);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_OSD_BOOT;
	m.osd_boot.uuid[3] = 1;
	m.osd_boot.want_id = PROTO_OSD_ID_NONE;
	strcpy(m.osd_boot.host, "node1");
	m.osd_boot.host_len = 5;
	strcpy(m.osd_boot.public_addr, "127.1.0.10:6800");
	m.osd_boot.public_addr_len = strlen(m.osd_boot.public_addr);
	roundtrip(&m);
	m.osd_boot.uuid[3] = 0; /* all-zero uuid */
	assert_int_equal(proto_osd_boot_validate(&m.osd_boot, NULL), -EBADMSG);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_OSD_BEACON;
	m.osd_beacon.id = 4;
	roundtrip(&m);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_OSD_FAILURE;
	m.osd_failure.target = 1;
	m.osd_failure.reporter = 2;
	roundtrip(&m);
	m.osd_failure.reporter = 1; /* reports itself */
	assert_int_equal(proto_osd_failure_validate(&m.osd_failure, NULL), -EBADMSG);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_BULK;
	m.bulk.id = 1;
	m.bulk.len = 100000;
	m.bulk.rkey.addr = 0x1000;
	m.bulk.rkey.len = 100000;
	m.bulk.rkey.key = 42;
	roundtrip(&m);
	m.bulk.rkey.len = 10; /* region smaller than the frame */
	assert_int_equal(proto_bulk_validate(&m.bulk, NULL), -EBADMSG);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_BULK_DONE;
	m.bulk_done.id = 1;
	roundtrip(&m);
}

/* Version 5: the monitor list; ids never reused, names and addresses unique, canonical. */
static struct mon_op mk_mon(uint32_t id, const char *name, const char *addr)
{
	struct mon_op op;

	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_MON_SET;
	op.mon.id = id;
	snprintf(op.mon.name, sizeof(op.mon.name), "%s", name);
	snprintf(op.mon.addr, sizeof(op.mon.addr), "%s", addr);
	return op;
}

static int apply1(struct mon_map *map, struct mon_op op)
{
	struct mon_inc inc;
	int rc;

	mon_inc_init(&inc);
	inc.epoch = map->epoch + 1;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	rc = mon_map_apply(map, &inc);
	mon_inc_free(&inc);
	return rc;
}

static void test_map_mons(void **state)
{
	struct mon_map map, back;
	struct mon_inc inc, iback;
	struct proto_err err;
	struct mon_op op;
	void *buf;
	size_t len;

	build_map(&map);
	assert_int_equal(enc_version(&map), 1);
	/* the first list: three monitors in one increment, one not named yet */
	mon_inc_init(&inc);
	inc.epoch = map.epoch + 1;
	op = mk_mon(1, "a", "127.1.0.1:6789");
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	op = mk_mon(2, "", "127.1.0.2:6789");
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	op = mk_mon(3, "c", "127.1.0.3:6789");
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_inc_encode(&inc, &buf, &len), 0);
	assert_int_equal(((uint8_t *)buf)[0], 5);
	assert_int_equal(mon_inc_decode(buf, len, &err, &iback), 0);
	assert_int_equal(iback.nops, 3);
	assert_string_equal(iback.ops[2].mon.addr, "127.1.0.3:6789");
	mon_inc_free(&iback);
	free(buf);
	assert_int_equal(mon_map_apply(&map, &inc), 0);
	mon_inc_free(&inc);
	assert_int_equal(map.nmons, 3);
	assert_int_equal(map.next_mon_id, 4);
	assert_int_equal(enc_version(&map), 5);
	assert_null(mon_map_mon_by_name(&map, "")); /* an unnamed one has no name to find */

	/* b registers its name; d is added; the name or address of another is refused */
	assert_int_equal(apply1(&map, mk_mon(2, "b", "127.1.0.2:6789")), 0);
	assert_int_equal(mon_map_mon_by_name(&map, "b")->id, 2);
	assert_int_equal(apply1(&map, mk_mon(4, "d", "127.1.0.4:6789")), 0);
	assert_int_equal(apply1(&map, mk_mon(5, "d", "127.1.0.5:6789")), -EINVAL);
	assert_int_equal(apply1(&map, mk_mon(5, "e", "127.1.0.4:6789")), -EINVAL);
	/* removed, its id is not given again */
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_MON_RM;
	op.mon_id = 4;
	assert_int_equal(apply1(&map, op), 0);
	assert_null(mon_map_mon(&map, 4));
	assert_int_equal(apply1(&map, op), -EINVAL);
	assert_int_equal(apply1(&map, mk_mon(4, "d", "127.1.0.4:6789")), -EINVAL);
	assert_int_equal(apply1(&map, mk_mon(5, "d", "127.1.0.4:6789")), 0);
	assert_int_equal(map.next_mon_id, 6);

	/* round trip; every truncation refused */
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	mon_map_init(&back);
	assert_int_equal(mon_map_decode(buf, len, &err, &back), 0);
	assert_int_equal(back.nmons, 4);
	assert_int_equal(back.next_mon_id, 6);
	assert_string_equal(back.mons[3].name, "d");
	assert_int_equal(back.mons[3].id, 5);
	for (size_t cut = 0; cut < len; cut++)
		assert_int_not_equal(mon_map_decode(buf, cut, &err, &back), 0);
	/* not canonical: ids out of order (swap the last two records' ids) */
	{
		uint8_t *p = buf;
		size_t off = len - (4 + 2 + 1 + 2 + 14); /* the last record: id 5, "d", 14-byte addr */

		assert_int_equal(p[off], 5);
		p[off] = 2;
		assert_int_not_equal(mon_map_decode(buf, len, &err, &back), 0);
	}
	free(buf);
	mon_map_free(&back);
	mon_map_free(&map);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_apply_and_roundtrip),
		cmocka_unit_test(test_inc_order),
		cmocka_unit_test(test_map_capacity),
		cmocka_unit_test(test_map_lifecycle),
		cmocka_unit_test(test_map_mons),
		cmocka_unit_test(test_map_bad_input),
		cmocka_unit_test(test_mon_messages),
		cmocka_unit_test(test_pg_stats_capacity),
		cmocka_unit_test(test_map_mutes),
		cmocka_unit_test(test_map_blocklist),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
