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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_apply_and_roundtrip),
		cmocka_unit_test(test_inc_order),
		cmocka_unit_test(test_map_bad_input),
		cmocka_unit_test(test_mon_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
