/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mon-corpus-gen DIR: seeds for fuzz_mon (committed as tests/corpus/mon/):
 * an encoded map, increments of every op kind, and a frame and a bare
 * payload of every mon message type. Deterministic.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mon/map.h"
#include "proto/proto.h"

static uint8_t gen_buf[16384];

static int gen_write(const char *dir, const char *name, const void *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(p, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "mon-corpus-gen: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int gen_msg(const char *dir, const char *name, const struct proto_msg *m)
{
	char fname[128];
	size_t len;

	if (proto_frame_encode(m, 0x200 + m->type, gen_buf, sizeof(gen_buf), &len) != 0)
		return -1;
	snprintf(fname, sizeof(fname), "frame-%s", name);
	if (gen_write(dir, fname, gen_buf, len) != 0)
		return -1;
	if (proto_msg_encode(m, gen_buf, sizeof(gen_buf), &len) != 0)
		return -1;
	snprintf(fname, sizeof(fname), "payload-%s", name);
	return gen_write(dir, fname, gen_buf, len);
}

static struct mon_osd gen_osd(uint32_t id)
{
	struct mon_osd o;

	memset(&o, 0, sizeof(o));
	o.id = id;
	o.state = MON_OSD_EXISTS | MON_OSD_UP | MON_OSD_IN;
	o.uuid[0] = (uint8_t)(0x10 + id);
	o.weight = MON_WEIGHT_ONE;
	o.up_from = 2;
	snprintf(o.host, sizeof(o.host), "node%u", id);
	snprintf(o.public_addr, sizeof(o.public_addr), "127.1.0.%u:6800", 10 + id);
	snprintf(o.cluster_addr, sizeof(o.cluster_addr), "127.2.0.%u:6800", 10 + id);
	return o;
}

int main(int argc, char **argv)
{
	static const char json[] = "{\"prefix\":\"osd tree\"}";
	struct mon_map map;
	struct mon_inc inc;
	struct mon_op op;
	struct proto_msg m;
	void *buf;
	size_t len;
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: mon-corpus-gen DIR\n");
		return 2;
	}
	if (mkdir(argv[1], 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "mon-corpus-gen: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	mon_map_init(&map);
	mon_inc_init(&inc);
	inc.epoch = 1;
	strcpy(inc.reason, "seed");
	for (uint32_t i = 0; i < 3; i++) {
		op.kind = MON_OP_OSD_SET;
		op.osd = gen_osd(i);
		rc |= mon_inc_add(&inc, &op);
	}
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_POOL_SET;
	op.pool.id = 1;
	op.pool.size = 2;
	op.pool.min_size = 1;
	op.pool.pg_num = 32;
	strcpy(op.pool.name, "rbd");
	rc |= mon_inc_add(&inc, &op);
	op.kind = MON_OP_POOL_RM;
	op.pool_id = 7;
	rc |= mon_inc_add(&inc, &op);
	op.kind = MON_OP_FLAGS;
	op.flags = MON_FLAG_NOOUT;
	rc |= mon_inc_add(&inc, &op);
	rc |= mon_inc_encode(&inc, &buf, &len);
	if (rc == 0) {
		rc |= gen_write(argv[1], "inc-all-ops", buf, len);
		free(buf);
	}
	rc |= mon_map_apply(&map, &inc);
	rc |= mon_map_encode(&map, &buf, &len);
	if (rc == 0) {
		rc |= gen_write(argv[1], "map-3osd-1pool", buf, len);
		memset(&m, 0, sizeof(m));
		m.type = PROTO_MAP_INC;
		m.map.epoch = 1;
		m.map.blob = buf;
		m.map.blob_len = (uint32_t)len;
		rc |= gen_msg(argv[1], "map_inc", &m);
		free(buf);
	}

	/* version 2: a topology, a pool rule, an upmap item, the balancer mode */
	mon_inc_free(&inc);
	inc.epoch = 2;
	strcpy(inc.reason, "seed v2");
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_BUCKET_SET;
	op.bucket = (struct mon_bucket){ -1, MON_CT_ROOT, 0, "default" };
	rc |= mon_inc_add(&inc, &op);
	op.bucket = (struct mon_bucket){ -2, MON_CT_RACK, -1, "r0" };
	rc |= mon_inc_add(&inc, &op);
	op.bucket = (struct mon_bucket){ -3, MON_CT_HOST, -2, "host0" };
	rc |= mon_inc_add(&inc, &op);
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_OSD_LOC;
	op.loc = (struct mon_osd_loc){ 0, -3 };
	rc |= mon_inc_add(&inc, &op);
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_POOL_SET;
	op.pool = (struct mon_pool){ .id = 1, .size = 2, .min_size = 1, .pg_num = 32,
				     .name = "rbd", .domain = MON_CT_RACK, .root = -1 };
	rc |= mon_inc_add(&inc, &op);
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_UPMAP_SET;
	op.upmap = (struct mon_upmap){ 1, 3, 0, 1 };
	rc |= mon_inc_add(&inc, &op);
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_BALANCER;
	op.balancer = MON_BALANCER_ON;
	rc |= mon_inc_add(&inc, &op);
	rc |= mon_inc_encode(&inc, &buf, &len);
	if (rc == 0) {
		rc |= gen_write(argv[1], "inc-v2-topology", buf, len);
		free(buf);
	}
	rc |= mon_map_apply(&map, &inc);
	rc |= mon_map_encode(&map, &buf, &len);
	if (rc == 0) {
		rc |= gen_write(argv[1], "map-v2-topology", buf, len);
		free(buf);
	}

	/* version 3: ratios, an OSD's fullness, a pool quota with its full flag */
	mon_inc_free(&inc);
	inc.epoch = 3;
	strcpy(inc.reason, "seed v3");
	memset(&op, 0, sizeof(op));
	op.kind = MON_OP_FULL_RATIOS;
	op.ratios = (struct mon_ratios){ 800000, 880000, 920000 };
	rc |= mon_inc_add(&inc, &op);
	if (mon_map_osd(&map, 0) != NULL) {
		memset(&op, 0, sizeof(op));
		op.kind = MON_OP_OSD_SET;
		op.osd = *mon_map_osd(&map, 0);
		op.osd.state |= MON_OSD_NEARFULL | MON_OSD_BACKFILLFULL;
		rc |= mon_inc_add(&inc, &op);
	}
	if (mon_map_pool(&map, 1) != NULL) {
		memset(&op, 0, sizeof(op));
		op.kind = MON_OP_POOL_SET;
		op.pool = *mon_map_pool(&map, 1);
		op.pool.quota_max_bytes = 10ull << 30;
		op.pool.quota_max_objects = 1000;
		op.pool.flags = MON_POOL_F_FULL;
		rc |= mon_inc_add(&inc, &op);
	}
	rc |= mon_inc_encode(&inc, &buf, &len);
	if (rc == 0) {
		rc |= gen_write(argv[1], "inc-v3-capacity", buf, len);
		free(buf);
	}
	rc |= mon_map_apply(&map, &inc);
	rc |= mon_map_encode(&map, &buf, &len);
	if (rc == 0) {
		rc |= gen_write(argv[1], "map-v3-capacity", buf, len);
		free(buf);
	}

	memset(&m, 0, sizeof(m));
	m.type = PROTO_MON_CMD;
	m.mon_cmd.json = json;
	m.mon_cmd.json_len = sizeof(json) - 1;
	rc |= gen_msg(argv[1], "mon_cmd", &m);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_MON_CMD_REPLY;
	m.mon_cmd_reply.status = -2;
	m.mon_cmd_reply.epoch = 5;
	m.mon_cmd_reply.out = json;
	m.mon_cmd_reply.out_len = sizeof(json) - 1;
	strcpy(m.mon_cmd_reply.msg, "no such pool");
	m.mon_cmd_reply.msg_len = strlen(m.mon_cmd_reply.msg);
	rc |= gen_msg(argv[1], "mon_cmd_reply", &m);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_MON_SUB;
	m.mon_sub.have_epoch = 4;
	m.mon_sub.flags = PROTO_SUB_F_ONETIME;
	rc |= gen_msg(argv[1], "mon_sub", &m);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_AUTH_TICKET;
	m.auth_ticket.service = PROTO_AUTH_SVC_OSD;
	rc |= gen_msg(argv[1], "auth_ticket", &m);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_AUTH_TICKET_REPLY;
	m.auth_ticket_reply.blob = json; /* opaque to the proto layer */
	m.auth_ticket_reply.blob_len = sizeof(json) - 1;
	rc |= gen_msg(argv[1], "auth_ticket_reply", &m);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_AUTH_TICKET_REPLY;
	m.auth_ticket_reply.status = -13;
	strcpy(m.auth_ticket_reply.msg, "client.x: no such entity");
	m.auth_ticket_reply.msg_len = strlen(m.auth_ticket_reply.msg);
	rc |= gen_msg(argv[1], "auth_ticket_refused", &m);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_AUTH_SVC_KEYS;
	m.auth_svc_keys.have_id = 7;
	rc |= gen_msg(argv[1], "auth_svc_keys", &m);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_AUTH_SVC_KEYS_REPLY;
	m.auth_ticket_reply.blob = json;
	m.auth_ticket_reply.blob_len = sizeof(json) - 1;
	rc |= gen_msg(argv[1], "auth_svc_keys_reply", &m);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_OSD_BOOT;
	m.osd_boot.uuid[0] = 1;
	m.osd_boot.want_id = 3;
	strcpy(m.osd_boot.host, "node1");
	m.osd_boot.host_len = 5;
	strcpy(m.osd_boot.public_addr, "127.1.0.10:6800");
	m.osd_boot.public_addr_len = strlen(m.osd_boot.public_addr);
	strcpy(m.osd_boot.cluster_addr, "127.2.0.10:6800");
	m.osd_boot.cluster_addr_len = strlen(m.osd_boot.cluster_addr);
	rc |= gen_msg(argv[1], "osd_boot", &m);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_OSD_BEACON;
	m.osd_beacon.id = 3;
	m.osd_beacon.epoch = 9;
	rc |= gen_msg(argv[1], "osd_beacon", &m);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_OSD_FAILURE;
	m.osd_failure.target = 1;
	m.osd_failure.reporter = 2;
	m.osd_failure.failed_ms = 20000;
	rc |= gen_msg(argv[1], "osd_failure", &m);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_BULK;
	m.bulk.id = 9;
	m.bulk.len = 70000;
	m.bulk.rkey.addr = 0x7f0000001000ull;
	m.bulk.rkey.len = 70000;
	m.bulk.rkey.key = 0x1234000000000001ull;
	rc |= gen_msg(argv[1], "bulk", &m);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_BULK_DONE;
	m.bulk_done.id = 9;
	rc |= gen_msg(argv[1], "bulk_done", &m);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_AUTH;
	m.auth.data = "\x01\x01\x01 an auth handshake message, opaque to proto";
	m.auth.len = 44;
	rc |= gen_msg(argv[1], "auth", &m);
	mon_inc_free(&inc);
	mon_map_free(&map);
	if (rc != 0) {
		fprintf(stderr, "mon-corpus-gen: failed\n");
		return 1;
	}
	return 0;
}
