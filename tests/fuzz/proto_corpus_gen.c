/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto-corpus-gen DIR: write the seed corpus of the proto fuzzer into DIR
 * (created if missing). Seeds are deterministic: a valid frame of every
 * message type and shape, the same payloads bare, and a few malformed
 * frames (bad crc, truncated, trailing byte) as negative seeds. The output
 * is committed as tests/corpus/proto/.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/proto.h"

static uint8_t gen_data[200];
static uint8_t gen_blob[96];
static uint8_t gen_buf[8192];

static int gen_write(const char *dir, const char *name, const void *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(p, 1, len, f) != len) {
		fprintf(stderr, "proto-corpus-gen: %s: %s\n", path, strerror(errno));
		if (f != NULL)
			fclose(f);
		return -1;
	}
	if (fclose(f) != 0) {
		fprintf(stderr, "proto-corpus-gen: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Frame, bare payload and (for the first shape of a type) malformed frames. */
static int gen_msg(const char *dir, const char *name, const struct proto_msg *m, bool bad)
{
	char fname[128];
	size_t len, plen;
	int rc;

	rc = proto_frame_encode(m, 0x100 + m->type, gen_buf, sizeof(gen_buf), &len);
	if (rc != 0) {
		fprintf(stderr, "proto-corpus-gen: %s: encode: %s\n", name, strerror(-rc));
		return -1;
	}
	snprintf(fname, sizeof(fname), "frame-%s", name);
	if (gen_write(dir, fname, gen_buf, len) != 0)
		return -1;
	rc = proto_msg_encode(m, gen_buf, sizeof(gen_buf), &plen);
	if (rc != 0)
		return -1;
	snprintf(fname, sizeof(fname), "payload-%s", name);
	if (gen_write(dir, fname, gen_buf, plen) != 0)
		return -1;
	if (!bad)
		return 0;
	proto_frame_encode(m, 0x100 + m->type, gen_buf, sizeof(gen_buf), &len);
	snprintf(fname, sizeof(fname), "bad-trunc-%s", name);
	if (gen_write(dir, fname, gen_buf, len - 1) != 0)
		return -1;
	gen_buf[len] = 0xee;
	snprintf(fname, sizeof(fname), "bad-trailing-%s", name);
	if (gen_write(dir, fname, gen_buf, len + 1) != 0)
		return -1;
	gen_buf[len - 1] ^= 0x01;
	snprintf(fname, sizeof(fname), "bad-pcrc-%s", name);
	if (gen_write(dir, fname, gen_buf, len) != 0)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir;
	struct proto_msg m;
	int rc = 0;

	if (argc != 2 || argv[1][0] == '-') {
		fprintf(stderr, "usage: proto-corpus-gen DIR\n"
				"Write the proto fuzzer's seed corpus into DIR.\n");
		return argc == 2 && strcmp(argv[1], "--help") == 0 ? 0 : 1;
	}
	dir = argv[1];
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "proto-corpus-gen: %s: %s\n", dir, strerror(errno));
		return 1;
	}
	for (size_t i = 0; i < sizeof(gen_data); i++)
		gen_data[i] = (uint8_t)(i * 13 + 1);
	for (size_t i = 0; i < sizeof(gen_blob); i++)
		gen_blob[i] = (uint8_t)(0xff - i);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_HELLO;
	m.hello.entity_type = PROTO_ENTITY_CLIENT;
	strcpy(m.hello.name, "client.admin");
	m.hello.name_len = strlen(m.hello.name);
	m.hello.proto_version = 1;
	strcpy(m.hello.version, "0.1.0 (git c9582dd3d2d4)");
	m.hello.version_len = strlen(m.hello.version);
	m.hello.features = 0x3;
	m.hello.required = 0x3;
	m.hello.nonce = 0x1122334455667788ull;
	rc |= gen_msg(dir, "hello", &m, true);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_AUTH_CHALLENGE;
	for (int i = 0; i < PROTO_NONCE_LEN; i++)
		m.auth_challenge.nonce[i] = (uint8_t)(i * 3);
	rc |= gen_msg(dir, "auth_challenge", &m, false);
	m.type = PROTO_AUTH_RESPONSE;
	rc |= gen_msg(dir, "auth_response", &m, false);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_PING;
	m.ping.seq = 17;
	m.ping.stamp_ns = 1700000000123456789ull;
	rc |= gen_msg(dir, "ping", &m, false);
	m.type = PROTO_PONG;
	rc |= gen_msg(dir, "pong", &m, false);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_REPL_RING_REQ;
	m.repl_ring_req.osd_id = 3;
	rc |= gen_msg(dir, "repl_ring_req", &m, false);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_REPL_RING_GRANT;
	m.repl_ring_grant.ring.addr = 0x7f3a00000000ull;
	m.repl_ring_grant.ring.len = 20u << 20;
	m.repl_ring_grant.ring.key = 0x1234;
	rc |= gen_msg(dir, "repl_ring_grant", &m, false);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_REPL_ACK;
	m.repl_ack.ring_off = 4096;
	m.repl_ack.pool = 1;
	m.repl_ack.pg = 0x1f;
	m.repl_ack.version = 0x700000012ull;
	m.repl_ack.status = -ENOSPC;
	rc |= gen_msg(dir, "repl_ack", &m, true);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_ERROR;
	m.error.status = -EPERM;
	strcpy(m.error.msg, "client.foo: not authorized");
	m.error.msg_len = strlen(m.error.msg);
	rc |= gen_msg(dir, "error", &m, true);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_MAP_GET;
	m.map_get.have_epoch = 41;
	rc |= gen_msg(dir, "map_get", &m, false);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_MAP;
	m.map.epoch = 42;
	m.map.blob = gen_blob;
	m.map.blob_len = sizeof(gen_blob);
	rc |= gen_msg(dir, "map", &m, true);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_OSD_OP;
	m.osd_op.op = PROTO_OP_WRITE;
	m.osd_op.flags = PROTO_OP_F_INLINE;
	m.osd_op.pool = 1;
	m.osd_op.pg = 0x2f;
	m.osd_op.epoch = 42;
	m.osd_op.offset = 8192;
	m.osd_op.length = sizeof(gen_data);
	strcpy(m.osd_op.name, "vol1.0000000000000003");
	m.osd_op.name_len = strlen(m.osd_op.name);
	m.osd_op.data = gen_data;
	m.osd_op.data_len = sizeof(gen_data);
	rc |= gen_msg(dir, "osd_op-write-inline", &m, true);
	m.osd_op.op = PROTO_OP_WRITE_FULL;
	m.osd_op.offset = 0;
	m.osd_op.flags = PROTO_OP_F_RKEY | PROTO_OP_F_FUA;
	m.osd_op.length = 4 << 20;
	m.osd_op.rkey.addr = 0x7f1234560000ull;
	m.osd_op.rkey.len = 4 << 20;
	m.osd_op.rkey.key = 0x1234;
	m.osd_op.data = NULL;
	m.osd_op.data_len = 0;
	rc |= gen_msg(dir, "osd_op-write_full-rkey", &m, false);
	m.osd_op.op = PROTO_OP_READ;
	m.osd_op.flags = PROTO_OP_F_RKEY;
	m.osd_op.offset = 4096;
	m.osd_op.length = 65536;
	rc |= gen_msg(dir, "osd_op-read-rkey", &m, false);
	m.osd_op.op = PROTO_OP_STAT;
	m.osd_op.flags = 0;
	m.osd_op.offset = 0;
	m.osd_op.length = 0;
	rc |= gen_msg(dir, "osd_op-stat", &m, false);
	m.osd_op.op = PROTO_OP_REMOVE;
	rc |= gen_msg(dir, "osd_op-remove", &m, false);
	m.osd_op.op = PROTO_OP_TRUNCATE;
	m.osd_op.offset = 1 << 20;
	rc |= gen_msg(dir, "osd_op-truncate", &m, false);
	m.osd_op.op = PROTO_OP_PERF;
	m.osd_op.offset = 0;
	rc |= gen_msg(dir, "osd_op-perf", &m, false);
	m.osd_op.op = PROTO_OP_READ_LOCAL;
	m.osd_op.flags = PROTO_OP_F_RKEY;
	m.osd_op.length = 65536;
	m.osd_op.rkey.len = 65536;
	rc |= gen_msg(dir, "osd_op-read_local-rkey", &m, false);

	memset(&m, 0, sizeof(m));
	m.type = PROTO_OSD_OP_REPLY;
	m.osd_op_reply.status = 0;
	m.osd_op_reply.flags = PROTO_REPLY_F_INLINE;
	m.osd_op_reply.epoch = 42;
	m.osd_op_reply.version = 977;
	m.osd_op_reply.length = 64;
	m.osd_op_reply.data = gen_data;
	m.osd_op_reply.data_len = 64;
	rc |= gen_msg(dir, "osd_op_reply-read", &m, true);
	m.osd_op_reply.status = -ESTALE;
	m.osd_op_reply.flags = 0;
	m.osd_op_reply.epoch = 43;
	m.osd_op_reply.length = 0;
	m.osd_op_reply.data = NULL;
	m.osd_op_reply.data_len = 0;
	rc |= gen_msg(dir, "osd_op_reply-estale", &m, false);

	if (rc != 0)
		return 1;
	printf("proto-corpus-gen: corpus written to %s\n", dir);
	return 0;
}
