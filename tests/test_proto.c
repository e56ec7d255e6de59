/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Wire protocol codec: round trip of every message type, and every class of
 * malformed input returns -EBADMSG with one clear reason. Inputs are copied
 * into heap buffers of their exact size so ASan reports any overread.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/crc32c.h"
#include "common/log.h"
#include "proto/codec.h"
#include "proto/proto.h"

static const uint16_t all_types[] = {
	PROTO_HELLO,	PROTO_AUTH_CHALLENGE, PROTO_AUTH_RESPONSE, PROTO_PING,
	PROTO_PONG,	PROTO_ERROR,	      PROTO_MAP_GET,	   PROTO_MAP,
	PROTO_OSD_OP,	PROTO_OSD_OP_REPLY,   PROTO_REPL_RING_REQ, PROTO_REPL_RING_GRANT,
	PROTO_REPL_ACK,
};
#define N_TYPES (sizeof(all_types) / sizeof(all_types[0]))

static uint8_t inline_data[300];
static uint8_t map_blob[777];

/* A heap copy of exactly len bytes (len 0 still gets its own allocation). */
static uint8_t *dup_exact(const void *p, size_t len)
{
	uint8_t *q = malloc(len > 0 ? len : 1);

	assert_non_null(q);
	if (len > 0)
		memcpy(q, p, len);
	return q;
}

/* A message of the given type with non-trivial values in every field. */
static void sample_msg(uint16_t type, struct proto_msg *m)
{
	for (size_t i = 0; i < sizeof(inline_data); i++)
		inline_data[i] = (uint8_t)(i * 7 + 3);
	for (size_t i = 0; i < sizeof(map_blob); i++)
		map_blob[i] = (uint8_t)(i ^ 0x5a);
	memset(m, 0, sizeof(*m));
	m->type = type;
	switch (type) {
	case PROTO_HELLO:
		m->hello.entity_type = PROTO_ENTITY_OSD;
		strcpy(m->hello.name, "osd.12");
		m->hello.name_len = 6;
		m->hello.proto_version = 1;
		strcpy(m->hello.version, "0.1.0 (git c9582dd3d2d4)");
		m->hello.version_len = strlen(m->hello.version);
		m->hello.features = 0x8000000000000003ull;
		m->hello.required = 0x3;
		m->hello.nonce = 0x0123456789abcdefull;
		break;
	case PROTO_AUTH_CHALLENGE:
		for (int i = 0; i < PROTO_NONCE_LEN; i++)
			m->auth_challenge.nonce[i] = (uint8_t)(0xa0 + i);
		break;
	case PROTO_AUTH_RESPONSE:
		for (int i = 0; i < PROTO_HMAC_LEN; i++)
			m->auth_response.hmac[i] = (uint8_t)(0xff - i);
		break;
	case PROTO_PING:
	case PROTO_PONG:
		m->ping.seq = 0xfedcba9876543210ull;
		m->ping.stamp_ns = 1234567890123456789ull;
		break;
	case PROTO_ERROR:
		m->error.status = -ESTALE;
		strcpy(m->error.msg, "map epoch 41 is stale, have 42");
		m->error.msg_len = strlen(m->error.msg);
		break;
	case PROTO_MAP_GET:
		m->map_get.have_epoch = 0xdeadbeef;
		break;
	case PROTO_MAP:
		m->map.epoch = 42;
		m->map.blob = map_blob;
		m->map.blob_len = sizeof(map_blob);
		break;
	case PROTO_OSD_OP:
		m->osd_op.op = PROTO_OP_WRITE;
		m->osd_op.flags = PROTO_OP_F_INLINE | PROTO_OP_F_FUA;
		m->osd_op.pool = 3;
		m->osd_op.pg = 0x2f;
		m->osd_op.epoch = 41;
		m->osd_op.offset = 1ull << 40;
		m->osd_op.length = sizeof(inline_data);
		strcpy(m->osd_op.name, "rbd_data.1234.0000000000000007");
		m->osd_op.name_len = strlen(m->osd_op.name);
		m->osd_op.data = inline_data;
		m->osd_op.data_len = sizeof(inline_data);
		break;
	case PROTO_OSD_OP_REPLY:
		m->osd_op_reply.status = 0;
		m->osd_op_reply.flags = PROTO_REPLY_F_INLINE;
		m->osd_op_reply.epoch = 42;
		m->osd_op_reply.version = 0x1122334455667788ull;
		m->osd_op_reply.length = 100;
		m->osd_op_reply.data = inline_data;
		m->osd_op_reply.data_len = 100;
		break;
	case PROTO_REPL_RING_REQ:
		m->repl_ring_req.osd_id = 0x01020304;
		break;
	case PROTO_REPL_RING_GRANT:
		m->repl_ring_grant.ring.addr = 0x7f0011220000ull;
		m->repl_ring_grant.ring.len = 32u << 20;
		m->repl_ring_grant.ring.key = 0x5566778899aabbccull;
		break;
	case PROTO_REPL_ACK:
		m->repl_ack.ring_off = 0x123440;
		m->repl_ack.pool = 7;
		m->repl_ack.pg = 0x3f;
		m->repl_ack.version = 0x0000002a00000101ull;
		m->repl_ack.status = -ESTALE;
		break;
	}
}

/* A second OSD_OP shape: a read into a remote buffer. */
static void sample_read_rkey(struct proto_msg *m)
{
	sample_msg(PROTO_OSD_OP, m);
	m->osd_op.op = PROTO_OP_READ;
	m->osd_op.flags = PROTO_OP_F_RKEY;
	m->osd_op.offset = 4096;
	m->osd_op.length = 1 << 20;
	m->osd_op.rkey.addr = 0x7f0000001000ull;
	m->osd_op.rkey.len = 2 << 20;
	m->osd_op.rkey.key = 0xabcdef0012345678ull;
	m->osd_op.data = NULL;
	m->osd_op.data_len = 0;
}

static void assert_msg_equal(const struct proto_msg *a, const struct proto_msg *b)
{
	assert_int_equal(a->type, b->type);
	switch (a->type) {
	case PROTO_HELLO:
		assert_int_equal(a->hello.entity_type, b->hello.entity_type);
		assert_int_equal(a->hello.name_len, b->hello.name_len);
		assert_string_equal(a->hello.name, b->hello.name);
		assert_int_equal(a->hello.proto_version, b->hello.proto_version);
		assert_int_equal(a->hello.version_len, b->hello.version_len);
		assert_string_equal(a->hello.version, b->hello.version);
		assert_true(a->hello.features == b->hello.features);
		assert_true(a->hello.required == b->hello.required);
		assert_true(a->hello.nonce == b->hello.nonce);
		break;
	case PROTO_AUTH_CHALLENGE:
		assert_memory_equal(a->auth_challenge.nonce, b->auth_challenge.nonce,
				    PROTO_NONCE_LEN);
		break;
	case PROTO_AUTH_RESPONSE:
		assert_memory_equal(a->auth_response.hmac, b->auth_response.hmac, PROTO_HMAC_LEN);
		break;
	case PROTO_PING:
	case PROTO_PONG:
		assert_true(a->ping.seq == b->ping.seq);
		assert_true(a->ping.stamp_ns == b->ping.stamp_ns);
		break;
	case PROTO_ERROR:
		assert_int_equal(a->error.status, b->error.status);
		assert_int_equal(a->error.msg_len, b->error.msg_len);
		assert_string_equal(a->error.msg, b->error.msg);
		break;
	case PROTO_MAP_GET:
		assert_int_equal(a->map_get.have_epoch, b->map_get.have_epoch);
		break;
	case PROTO_MAP:
		assert_int_equal(a->map.epoch, b->map.epoch);
		assert_int_equal(a->map.blob_len, b->map.blob_len);
		assert_memory_equal(a->map.blob, b->map.blob, a->map.blob_len);
		break;
	case PROTO_OSD_OP:
		assert_int_equal(a->osd_op.op, b->osd_op.op);
		assert_int_equal(a->osd_op.flags, b->osd_op.flags);
		assert_int_equal(a->osd_op.pool, b->osd_op.pool);
		assert_int_equal(a->osd_op.pg, b->osd_op.pg);
		assert_int_equal(a->osd_op.epoch, b->osd_op.epoch);
		assert_true(a->osd_op.offset == b->osd_op.offset);
		assert_true(a->osd_op.length == b->osd_op.length);
		assert_int_equal(a->osd_op.name_len, b->osd_op.name_len);
		assert_string_equal(a->osd_op.name, b->osd_op.name);
		if (a->osd_op.flags & PROTO_OP_F_RKEY) {
			assert_true(a->osd_op.rkey.addr == b->osd_op.rkey.addr);
			assert_true(a->osd_op.rkey.len == b->osd_op.rkey.len);
			assert_true(a->osd_op.rkey.key == b->osd_op.rkey.key);
		}
		assert_int_equal(a->osd_op.data_len, b->osd_op.data_len);
		if (a->osd_op.data_len > 0)
			assert_memory_equal(a->osd_op.data, b->osd_op.data, a->osd_op.data_len);
		break;
	case PROTO_OSD_OP_REPLY:
		assert_int_equal(a->osd_op_reply.status, b->osd_op_reply.status);
		assert_int_equal(a->osd_op_reply.flags, b->osd_op_reply.flags);
		assert_int_equal(a->osd_op_reply.epoch, b->osd_op_reply.epoch);
		assert_true(a->osd_op_reply.version == b->osd_op_reply.version);
		assert_true(a->osd_op_reply.length == b->osd_op_reply.length);
		assert_int_equal(a->osd_op_reply.data_len, b->osd_op_reply.data_len);
		if (a->osd_op_reply.data_len > 0)
			assert_memory_equal(a->osd_op_reply.data, b->osd_op_reply.data,
					    a->osd_op_reply.data_len);
		break;
	case PROTO_REPL_RING_REQ:
		assert_int_equal(a->repl_ring_req.osd_id, b->repl_ring_req.osd_id);
		break;
	case PROTO_REPL_RING_GRANT:
		assert_true(a->repl_ring_grant.ring.addr == b->repl_ring_grant.ring.addr);
		assert_true(a->repl_ring_grant.ring.len == b->repl_ring_grant.ring.len);
		assert_true(a->repl_ring_grant.ring.key == b->repl_ring_grant.ring.key);
		break;
	case PROTO_REPL_ACK:
		assert_true(a->repl_ack.ring_off == b->repl_ack.ring_off);
		assert_int_equal(a->repl_ack.pool, b->repl_ack.pool);
		assert_int_equal(a->repl_ack.pg, b->repl_ack.pg);
		assert_true(a->repl_ack.version == b->repl_ack.version);
		assert_int_equal(a->repl_ack.status, b->repl_ack.status);
		break;
	default:
		fail_msg("unknown type %u", a->type);
	}
}

/* Encode msg's payload into a fresh heap buffer of its exact size. */
static uint8_t *encode_payload(const struct proto_msg *m, size_t *len_out)
{
	size_t len, len2;
	uint8_t *buf;

	assert_int_equal(proto_msg_encode(m, NULL, 0, &len), 0);
	buf = malloc(len > 0 ? len : 1);
	assert_non_null(buf);
	assert_int_equal(proto_msg_encode(m, buf, len, &len2), 0);
	assert_int_equal(len, len2);
	*len_out = len;
	return buf;
}

static uint8_t *encode_frame(const struct proto_msg *m, uint64_t tid, size_t *len_out)
{
	size_t len, len2;
	uint8_t *buf;

	assert_int_equal(proto_frame_encode(m, tid, NULL, 0, &len), 0);
	buf = malloc(len);
	assert_non_null(buf);
	assert_int_equal(proto_frame_encode(m, tid, buf, len, &len2), 0);
	assert_int_equal(len, len2);
	*len_out = len;
	return buf;
}

/* Decode [p, p+len) as type from an exact heap copy; expect -EBADMSG and reason. */
static void expect_bad_payload(uint16_t type, const void *p, size_t len, const char *reason)
{
	struct proto_msg out;
	struct proto_err err;
	uint8_t *q = dup_exact(p, len);
	int rc;

	memset(&out, 0x77, sizeof(out));
	rc = proto_msg_decode(type, q, len, &err, &out);
	if (rc != -EBADMSG)
		fail_msg("%s: %zu bytes: rc %d, expected -EBADMSG", proto_type_name(type), len, rc);
	assert_int_equal(out.type, 0x7777); /* out untouched on failure */
	assert_true(err.msg[0] != '\0');
	if (reason != NULL && strstr(err.msg, reason) == NULL)
		fail_msg("reason \"%s\" lacks \"%s\"", err.msg, reason);
	free(q);
}

/* Decode a 32-byte header image from an exact heap copy; expect -EBADMSG. */
static void expect_bad_hdr(const uint8_t *h, size_t len, uint32_t max, const char *reason)
{
	struct proto_hdr out;
	struct proto_err err;
	uint8_t *q = dup_exact(h, len);

	assert_int_equal(proto_hdr_decode(q, len, max, &err, &out), -EBADMSG);
	if (reason != NULL && strstr(err.msg, reason) == NULL)
		fail_msg("reason \"%s\" lacks \"%s\"", err.msg, reason);
	free(q);
}

static void hdr_fix_crc(uint8_t *h)
{
	uint32_t crc = crc32c(0, h, PROTO_HDR_CRC_OFF);

	for (int i = 0; i < 4; i++)
		h[PROTO_HDR_CRC_OFF + i] = (uint8_t)(crc >> (8 * i));
}

/* ------------------------------------------------------------------ codec */

static void test_codec_ints(void **state)
{
	uint8_t buf[15];
	struct proto_enc enc;
	struct proto_dec dec;
	struct proto_err err;
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;
	size_t len;
	static const uint8_t want[15] = { 0xfe, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 0x08,
					  0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01 };

	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_u8(&enc, 0xfe);
	proto_enc_put_u16(&enc, 0x1234);
	proto_enc_put_u32(&enc, 0x12345678);
	proto_enc_put_u64(&enc, 0x0102030405060708ull);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	assert_int_equal(len, 15);
	assert_memory_equal(buf, want, 15); /* little-endian */

	/* one more byte does not fit: sticky -ENOBUFS, nothing written */
	proto_enc_put_u8(&enc, 1);
	proto_enc_put_u64(&enc, 0);
	assert_int_equal(proto_enc_finish(&enc, &len), -ENOBUFS);

	proto_dec_init(&dec, buf, sizeof(buf), "t", &err);
	assert_int_equal(proto_dec_get_u8(&dec, "a", &v8), 0);
	assert_int_equal(proto_dec_get_u16(&dec, "b", &v16), 0);
	assert_int_equal(proto_dec_get_u32(&dec, "c", &v32), 0);
	assert_int_equal(proto_dec_get_u64(&dec, "d", &v64), 0);
	assert_int_equal(v8, 0xfe);
	assert_int_equal(v16, 0x1234);
	assert_int_equal(v32, 0x12345678);
	assert_true(v64 == 0x0102030405060708ull);
	assert_int_equal(proto_dec_finish(&dec), 0);

	/* past the end: -EBADMSG, out untouched, sticky, one reason */
	v32 = 99;
	assert_int_equal(proto_dec_get_u32(&dec, "e", &v32), -EBADMSG);
	assert_int_equal(v32, 99);
	assert_string_equal(err.msg, "t.e: truncated: needs 4 bytes at offset 15, 0 left");
	assert_int_equal(proto_dec_get_u8(&dec, "f", &v8), -EBADMSG);
	assert_string_equal(err.msg, "t.e: truncated: needs 4 bytes at offset 15, 0 left");
	assert_int_equal(proto_dec_finish(&dec), -EBADMSG);

	/* trailing bytes */
	proto_dec_init(&dec, buf, sizeof(buf), "t", &err);
	proto_dec_get_u64(&dec, "a", &v64);
	assert_int_equal(proto_dec_finish(&dec), -EBADMSG);
	assert_non_null(strstr(err.msg, "7 trailing bytes"));

	/* measure mode */
	proto_enc_init(&enc, NULL, 0);
	proto_enc_put_u64(&enc, 1);
	proto_enc_put_str16(&enc, "abc", 3);
	proto_enc_put_blob32(&enc, "xy", 2);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	assert_int_equal(len, 8 + 2 + 3 + 4 + 2);
}

static void test_codec_strings(void **state)
{
	uint8_t buf[64];
	struct proto_enc enc;
	struct proto_dec dec;
	struct proto_err err;
	char s[8];
	size_t slen, len;
	const void *view;
	uint32_t vlen, count;
	uint8_t *q;

	/* round trip */
	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_str16(&enc, "weft", 4);
	proto_enc_put_blob32(&enc, "\x01\x02\x03", 3);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	q = dup_exact(buf, len);
	proto_dec_init(&dec, q, len, "t", &err);
	assert_int_equal(proto_dec_get_str16(&dec, "s", 7, s, sizeof(s), &slen), 0);
	assert_string_equal(s, "weft");
	assert_int_equal(slen, 4);
	assert_int_equal(proto_dec_get_blob32(&dec, "b", 100, &view, &vlen), 0);
	assert_int_equal(vlen, 3);
	assert_ptr_equal(view, q + 10); /* a view, not a copy */
	assert_int_equal(proto_dec_finish(&dec), 0);
	free(q);

	/* string length past the end */
	q = dup_exact("\x05\x00" "abc", 5);
	proto_dec_init(&dec, q, 5, "t", &err);
	assert_int_equal(proto_dec_get_str16(&dec, "s", 7, s, sizeof(s), &slen), -EBADMSG);
	assert_string_equal(err.msg, "t.s: string length 5 past end (3 bytes left)");
	free(q);

	/* string too long (bytes present) */
	q = dup_exact("\x08\x00" "abcdefgh", 10);
	proto_dec_init(&dec, q, 10, "t", &err);
	assert_int_equal(proto_dec_get_str16(&dec, "s", 7, s, sizeof(s), &slen), -EBADMSG);
	assert_string_equal(err.msg, "t.s: string length 8 exceeds max 7");
	free(q);

	/* NUL inside a string */
	q = dup_exact("\x03\x00" "a\0b", 5);
	proto_dec_init(&dec, q, 5, "t", &err);
	assert_int_equal(proto_dec_get_str16(&dec, "s", 7, s, sizeof(s), &slen), -EBADMSG);
	assert_non_null(strstr(err.msg, "NUL"));
	free(q);

	/* blob length past the end; 0xffffffff must not wrap anything */
	q = dup_exact("\xff\xff\xff\xff" "ab", 6);
	proto_dec_init(&dec, q, 6, "t", &err);
	assert_int_equal(proto_dec_get_blob32(&dec, "b", UINT32_MAX, &view, &vlen), -EBADMSG);
	assert_string_equal(err.msg, "t.b: length 4294967295 past end (2 bytes left)");
	free(q);

	/* counts: over max, past end (checked before any allocation), fits */
	q = dup_exact("\x10\x00\x00\x00" "0123456789abcdef", 20);
	proto_dec_init(&dec, q, 20, "t", &err);
	assert_int_equal(proto_dec_get_count(&dec, "n", 8, 1, &count), -EBADMSG);
	assert_string_equal(err.msg, "t.n: count 16 exceeds max 8");
	proto_dec_init(&dec, q, 20, "t", &err);
	assert_int_equal(proto_dec_get_count(&dec, "n", 100, 2, &count), -EBADMSG);
	assert_string_equal(err.msg, "t.n: count 16 of 2-byte elements past end (16 bytes left)");
	proto_dec_init(&dec, q, 20, "t", &err);
	assert_int_equal(proto_dec_get_count(&dec, "n", 100, 1, &count), 0);
	assert_int_equal(count, 16);
	free(q);
	q = dup_exact("\xff\xff\xff\xff", 4);
	proto_dec_init(&dec, q, 4, "t", &err);
	assert_int_equal(proto_dec_get_count(&dec, "n", UINT32_MAX, 1ull << 40, &count), -EBADMSG);
	free(q);

	/* encoder: a string longer than u16 is refused */
	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_str16(&enc, "x", 70000);
	assert_int_equal(proto_enc_finish(&enc, &len), -EINVAL);
}

/* ----------------------------------------------------------------- header */

static void test_hdr_roundtrip(void **state)
{
	struct proto_hdr h = { .flags = 0, .type = PROTO_OSD_OP, .payload_len = 65536,
			       .payload_crc = 0xcafef00d, .tid = 0x0102030405060708ull };
	struct proto_hdr out;
	struct proto_err err;
	uint8_t img[PROTO_HDR_LEN];
	uint8_t *q;

	proto_hdr_encode(&h, img);
	assert_memory_equal(img, "WEFT", 4);
	assert_int_equal(img[4], PROTO_VERSION);
	q = dup_exact(img, sizeof(img));
	assert_int_equal(proto_hdr_decode(q, PROTO_HDR_LEN, 65536, &err, &out), 0);
	free(q);
	assert_int_equal(out.version, 1);
	assert_int_equal(out.type, PROTO_OSD_OP);
	assert_int_equal(out.payload_len, 65536);
	assert_int_equal(out.payload_crc, 0xcafef00d);
	assert_true(out.tid == h.tid);
}

static void test_hdr_malformed(void **state)
{
	struct proto_hdr h = { .type = PROTO_PING, .payload_len = 16, .tid = 7 };
	uint8_t good[PROTO_HDR_LEN], img[PROTO_HDR_LEN];

	proto_hdr_encode(&h, good);

	/* truncated at every length */
	for (size_t n = 0; n < PROTO_HDR_LEN; n++)
		expect_bad_hdr(good, n, 1024, "truncated");
	assert_int_equal(proto_hdr_decode(NULL, 0, 1024, NULL, &h), -EBADMSG);

	memcpy(img, good, sizeof(img));
	img[0] = 'X';
	hdr_fix_crc(img);
	expect_bad_hdr(img, sizeof(img), 1024, "magic");

	memcpy(img, good, sizeof(img));
	img[4] = 2;
	hdr_fix_crc(img);
	expect_bad_hdr(img, sizeof(img), 1024, "version: 2 not supported");

	memcpy(img, good, sizeof(img));
	img[PROTO_HDR_CRC_OFF] ^= 1;
	expect_bad_hdr(img, sizeof(img), 1024, "header_crc");
	memcpy(img, good, sizeof(img));
	img[17] ^= 0x80; /* a tid bit flip is caught by the crc */
	expect_bad_hdr(img, sizeof(img), 1024, "header_crc");

	memcpy(img, good, sizeof(img));
	img[24] = 1;
	hdr_fix_crc(img);
	expect_bad_hdr(img, sizeof(img), 1024, "reserved");

	memcpy(img, good, sizeof(img));
	img[5] = 0x40;
	hdr_fix_crc(img);
	expect_bad_hdr(img, sizeof(img), 1024, "flags: unknown bits 0x40");

	memcpy(img, good, sizeof(img));
	img[6] = 0x99;
	hdr_fix_crc(img);
	expect_bad_hdr(img, sizeof(img), 1024, "type: unknown message type 153");

	/* payload too long, against the caller's max and the hard ceiling */
	h.payload_len = 70000;
	proto_hdr_encode(&h, img);
	expect_bad_hdr(img, sizeof(img), 65536, "payload_len: 70000 exceeds max 65536");
	h.payload_len = PROTO_PAYLOAD_MAX + 1;
	proto_hdr_encode(&h, img);
	expect_bad_hdr(img, sizeof(img), UINT32_MAX, "exceeds max 16777216");
}

static void test_payload_check(void **state)
{
	struct proto_msg m;
	struct proto_hdr hdr;
	struct proto_msg out;
	struct proto_err err;
	size_t len;
	uint8_t *f, *q;

	sample_msg(PROTO_PING, &m);
	f = encode_frame(&m, 5, &len);
	assert_int_equal(proto_hdr_decode(f, len, 1024, &err, &hdr), 0);
	assert_int_equal(proto_payload_check(&hdr, f + PROTO_HDR_LEN, 16, &err), 0);
	assert_int_equal(proto_payload_check(&hdr, f + PROTO_HDR_LEN, 15, &err), -EBADMSG);
	assert_string_equal(err.msg, "ping.payload: 15 bytes, header says 16");

	/* one payload bit flipped: crc mismatch */
	f[PROTO_HDR_LEN + 3] ^= 0x10;
	q = dup_exact(f, len);
	assert_int_equal(proto_frame_decode(q, len, 1024, NULL, &err, &hdr, &out), -EBADMSG);
	assert_non_null(strstr(err.msg, "payload_crc"));
	free(q);

	/* frame longer than header + payload_len */
	f[PROTO_HDR_LEN + 3] ^= 0x10;
	q = malloc(len + 1);
	memcpy(q, f, len);
	q[len] = 0;
	assert_int_equal(proto_frame_decode(q, len + 1, 1024, NULL, &err, &hdr, &out), -EBADMSG);
	assert_non_null(strstr(err.msg, "17 bytes, header says 16"));
	free(q);
	free(f);
}

/* ------------------------------------------------------------- round trip */

static void roundtrip_one(const struct proto_msg *m)
{
	struct proto_msg out;
	struct proto_hdr hdr;
	struct proto_err err;
	size_t len, plen, len2;
	uint8_t *f, *q, *p;

	/* payload alone */
	p = encode_payload(m, &plen);
	memset(&out, 0, sizeof(out));
	assert_int_equal(proto_msg_decode(m->type, p, plen, &err, &out), 0);
	assert_msg_equal(m, &out);
	free(p);

	/* whole frame, and decoded -> encoded gives the same bytes */
	f = encode_frame(m, 0x1122334455667788ull, &len);
	assert_int_equal(len, PROTO_HDR_LEN + plen);
	memset(&out, 0, sizeof(out));
	assert_int_equal(proto_frame_decode(f, len, 1 << 20, "test", &err, &hdr, &out), 0);
	assert_int_equal(hdr.type, m->type);
	assert_true(hdr.tid == 0x1122334455667788ull);
	assert_int_equal(hdr.payload_len, plen);
	assert_msg_equal(m, &out);
	q = malloc(len);
	assert_int_equal(proto_frame_encode(&out, hdr.tid, q, len, &len2), 0);
	assert_int_equal(len2, len);
	assert_memory_equal(q, f, len);

	/* too small a buffer: -ENOBUFS, never an overflow */
	assert_int_equal(proto_frame_encode(&out, hdr.tid, q, len - 1, &len2), -ENOBUFS);
	assert_int_equal(proto_frame_encode(&out, hdr.tid, q, 3, &len2), -ENOBUFS);
	free(q);
	free(f);
}

static void test_roundtrip_all(void **state)
{
	struct proto_msg m;

	for (size_t i = 0; i < N_TYPES; i++) {
		sample_msg(all_types[i], &m);
		roundtrip_one(&m);
	}
	/* other shapes: read with rkey, stat, truncate, empty error text, empty map,
	 * failed reply, boundary values */
	sample_read_rkey(&m);
	roundtrip_one(&m);
	sample_msg(PROTO_OSD_OP, &m);
	m.osd_op.op = PROTO_OP_STAT;
	m.osd_op.flags = 0;
	m.osd_op.offset = m.osd_op.length = 0;
	m.osd_op.data_len = 0;
	roundtrip_one(&m);
	sample_msg(PROTO_OSD_OP, &m);
	m.osd_op.op = PROTO_OP_TRUNCATE;
	m.osd_op.flags = 0;
	m.osd_op.offset = UINT64_MAX;
	m.osd_op.length = 0;
	m.osd_op.data_len = 0;
	memset(m.osd_op.name, 'n', PROTO_OBJ_NAME_MAX);
	m.osd_op.name[PROTO_OBJ_NAME_MAX] = '\0';
	m.osd_op.name_len = PROTO_OBJ_NAME_MAX;
	roundtrip_one(&m);
	sample_msg(PROTO_ERROR, &m);
	m.error.status = INT32_MIN;
	m.error.msg[0] = '\0';
	m.error.msg_len = 0;
	roundtrip_one(&m);
	sample_msg(PROTO_MAP, &m);
	m.map.blob = NULL;
	m.map.blob_len = 0;
	roundtrip_one(&m);
	sample_msg(PROTO_OSD_OP_REPLY, &m);
	m.osd_op_reply.status = -ESTALE;
	m.osd_op_reply.flags = 0;
	m.osd_op_reply.data = NULL;
	m.osd_op_reply.data_len = 0;
	roundtrip_one(&m);
	sample_msg(PROTO_HELLO, &m);
	memset(m.hello.name, 'c', PROTO_NAME_MAX);
	m.hello.name[PROTO_NAME_MAX] = '\0';
	m.hello.name_len = PROTO_NAME_MAX;
	m.hello.entity_type = PROTO_ENTITY_MON;
	roundtrip_one(&m);
}

/* ------------------------------------------------------------- truncation */

static void test_truncated_every_byte(void **state)
{
	struct proto_msg m, out;
	struct proto_hdr hdr;
	struct proto_err err;
	size_t len, plen;
	uint8_t *f, *p, *q;

	for (size_t i = 0; i < N_TYPES + 1; i++) {
		if (i < N_TYPES)
			sample_msg(all_types[i], &m);
		else
			sample_read_rkey(&m);
		p = encode_payload(&m, &plen);
		for (size_t n = 0; n < plen; n++)
			expect_bad_payload(m.type, p, n, NULL);
		/* one byte too many */
		q = malloc(plen + 1);
		memcpy(q, p, plen);
		q[plen] = 0;
		expect_bad_payload(m.type, q, plen + 1, "trailing");
		free(q);
		free(p);

		/* frames cut at every byte */
		f = encode_frame(&m, 9, &len);
		for (size_t n = 0; n < len; n++) {
			q = dup_exact(f, n);
			assert_int_equal(proto_frame_decode(q, n, 1 << 20, NULL, &err, &hdr, &out),
					 -EBADMSG);
			free(q);
		}
		free(f);
	}
}

/* ------------------------------------------------- malformed message bodies */

/*
 * Raw OSD_OP bytes, bypassing the encoder's validation. rkey / data are
 * written when flags say so.
 */
static size_t raw_osd_op(uint8_t *buf, size_t cap, uint16_t op, uint16_t flags, uint64_t off,
			 uint64_t length, const char *name, size_t name_len,
			 const struct proto_rkey *rkey, const void *data, uint32_t data_len)
{
	struct proto_enc enc;
	size_t len;

	proto_enc_init(&enc, buf, cap);
	proto_enc_put_u16(&enc, op);
	proto_enc_put_u16(&enc, flags);
	proto_enc_put_u32(&enc, 1);
	proto_enc_put_u32(&enc, 2);
	proto_enc_put_u32(&enc, 3);
	proto_enc_put_u64(&enc, off);
	proto_enc_put_u64(&enc, length);
	proto_enc_put_str16(&enc, name, name_len);
	if (flags & PROTO_OP_F_RKEY) {
		proto_enc_put_u64(&enc, rkey->addr);
		proto_enc_put_u64(&enc, rkey->len);
		proto_enc_put_u64(&enc, rkey->key);
	}
	if (flags & PROTO_OP_F_INLINE)
		proto_enc_put_blob32(&enc, data, data_len);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	return len;
}

static void test_osd_op_malformed(void **state)
{
	static uint8_t buf[4096];
	static char longname[PROTO_OBJ_NAME_MAX + 2];
	struct proto_rkey rk = { .addr = 0x1000, .len = 4096, .key = 9 };
	struct proto_rkey rk_wrap = { .addr = UINT64_MAX - 10, .len = 4096, .key = 9 };
	struct proto_msg m;
	size_t len;

	/* sanity: the raw builder makes a valid op */
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_WRITE, PROTO_OP_F_RKEY, 0, 4096, "obj", 3, &rk,
			 NULL, 0);
	assert_int_equal(proto_msg_decode(PROTO_OSD_OP, buf, len, NULL, &m), 0);

	len = raw_osd_op(buf, sizeof(buf), 0, 0, 0, 0, "obj", 3, NULL, NULL, 0);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "op: unknown op code 0");
	len = raw_osd_op(buf, sizeof(buf), 77, 0, 0, 0, "obj", 3, NULL, NULL, 0);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "op: unknown op code 77");
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_READ, 0x100, 0, 0, "obj", 3, NULL, NULL, 0);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "flags: unknown bits 0x0100");

	/* offset + length overflow */
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_READ, 0, UINT64_MAX - 5, 6, "obj", 3, NULL,
			 NULL, 0);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "overflows");
	/* rkey shorter than length; rkey addr + len wraps */
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_READ, PROTO_OP_F_RKEY, 0, 4097, "obj", 3, &rk,
			 NULL, 0);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "rkey: region of 4096 bytes < length 4097");
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_READ, PROTO_OP_F_RKEY, 0, 10, "obj", 3,
			 &rk_wrap, NULL, 0);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "rkey: addr");
	/* inline length != length, both ways */
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_WRITE, PROTO_OP_F_INLINE, 0, 10, "obj", 3,
			 NULL, "123456789", 9);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "data: inline length 9 != length 10");
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_WRITE, PROTO_OP_F_INLINE, 0, 8, "obj", 3, NULL,
			 "123456789", 9);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "data: inline length 9 != length 8");
	/* inline length past the end: cut the last data byte off */
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_WRITE, PROTO_OP_F_INLINE, 0, 9, "obj", 3, NULL,
			 "123456789", 9);
	expect_bad_payload(PROTO_OSD_OP, buf, len - 1, "data: length 9 past end (8 bytes left)");
	/* rkey and inline together */
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_WRITE, PROTO_OP_F_RKEY | PROTO_OP_F_INLINE, 0,
			 3, "obj", 3, &rk, "abc", 3);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "both rkey and inline");
	/* write without a payload source */
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_WRITE, 0, 0, 3, "obj", 3, NULL, NULL, 0);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "without rkey or inline");
	/* op-specific rules */
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_READ, PROTO_OP_F_INLINE, 0, 3, "obj", 3, NULL,
			 "abc", 3);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "read with inline data");
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_STAT, 0, 0, 5, "obj", 3, NULL, NULL, 0);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "stat with length 5");
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_REMOVE, PROTO_OP_F_RKEY, 0, 0, "obj", 3, &rk,
			 NULL, 0);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "remove takes no flags");
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_WRITE_FULL, PROTO_OP_F_RKEY, 4, 0, "obj", 3,
			 &rk, NULL, 0);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "write_full at 4");
	/* cmp_write_full: offset (the compare length) within the payload */
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_CMP_WRITE_FULL, PROTO_OP_F_INLINE, 3, 6, "obj",
			 3, NULL, "oldnew", 6);
	assert_int_equal(proto_msg_decode(PROTO_OSD_OP, buf, len, NULL, &m), 0);
	assert_int_equal(m.osd_op.offset, 3);
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_CMP_WRITE_FULL, PROTO_OP_F_INLINE, 7, 6, "obj",
			 3, NULL, "oldnew", 6);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "compare length 7 > length 6");
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_CMP_WRITE_FULL, 0, 0, 4, "obj", 3, NULL, NULL,
			 0);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "cmp_write_full of 4 bytes without rkey");
	/* zero: a range without a payload; any flag is refused */
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_ZERO, 0, 4096, 1ull << 30, "obj", 3, NULL, NULL,
			 0);
	assert_int_equal(proto_msg_decode(PROTO_OSD_OP, buf, len, NULL, &m), 0);
	assert_int_equal(m.osd_op.length, 1ull << 30);
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_ZERO, PROTO_OP_F_INLINE, 0, 3, "obj", 3, NULL,
			 "abc", 3);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "zero carries no data");
	/* names: empty, too long, NUL inside, length past end */
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_STAT, 0, 0, 0, "", 0, NULL, NULL, 0);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "name: length 0");
	memset(longname, 'x', PROTO_OBJ_NAME_MAX + 1);
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_STAT, 0, 0, 0, longname,
			 PROTO_OBJ_NAME_MAX + 1, NULL, NULL, 0);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "name: string length 1025 exceeds max 1024");
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_STAT, 0, 0, 0, "o\0j", 3, NULL, NULL, 0);
	expect_bad_payload(PROTO_OSD_OP, buf, len, "NUL");
	len = raw_osd_op(buf, sizeof(buf), PROTO_OP_STAT, 0, 0, 0, "obj", 3, NULL, NULL, 0);
	buf[32] = 200; /* name length low byte: 200 > 3 bytes left */
	expect_bad_payload(PROTO_OSD_OP, buf, len, "name: string length 200 past end");

	/* the encoder refuses the same things (and says why once) */
	sample_msg(PROTO_OSD_OP, &m);
	m.osd_op.op = 42;
	assert_int_equal(proto_msg_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	sample_read_rkey(&m);
	m.osd_op.rkey.len = 1;
	assert_int_equal(proto_msg_encode(&m, buf, sizeof(buf), &len), -EINVAL);
	sample_msg(PROTO_OSD_OP, &m);
	m.osd_op.name_len = PROTO_OBJ_NAME_MAX + 1; /* never reads past name[] */
	assert_int_equal(proto_msg_encode(&m, buf, sizeof(buf), &len), -EINVAL);
}

static void test_repl_malformed(void **state)
{
	uint8_t buf[64];
	struct proto_enc enc;
	struct proto_msg m;
	size_t len;

	(void)state;
	/* a ring of no bytes, a ring that wraps the address space */
	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_u64(&enc, 0x1000);
	proto_enc_put_u64(&enc, 0);
	proto_enc_put_u64(&enc, 7);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	expect_bad_payload(PROTO_REPL_RING_GRANT, buf, len, "ring: empty region");
	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_u64(&enc, UINT64_MAX - 10);
	proto_enc_put_u64(&enc, 4096);
	proto_enc_put_u64(&enc, 7);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	expect_bad_payload(PROTO_REPL_RING_GRANT, buf, len, "overflows");
	/* an ack whose status is positive (not 0 or -errno) */
	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_u64(&enc, 64);
	proto_enc_put_u32(&enc, 1);
	proto_enc_put_u32(&enc, 2);
	proto_enc_put_u64(&enc, 3);
	proto_enc_put_u32(&enc, 5);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	expect_bad_payload(PROTO_REPL_ACK, buf, len, "status: 5 is positive");
	/* a trailing byte */
	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_u32(&enc, 3);
	proto_enc_put_u8(&enc, 0);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	expect_bad_payload(PROTO_REPL_RING_REQ, buf, len, NULL);
	/* the encoder refuses what the decoder would */
	memset(&m, 0, sizeof(m));
	m.type = PROTO_REPL_ACK;
	m.repl_ack.status = 1;
	assert_int_equal(proto_msg_encode(&m, buf, sizeof(buf), &len), -EINVAL);
}

static void test_other_malformed(void **state)
{
	uint8_t buf[512];
	struct proto_enc enc;
	size_t len;

	/* hello: unknown entity type, empty name, name over max */
	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_u8(&enc, 9);
	proto_enc_put_str16(&enc, "osd.1", 5);
	proto_enc_put_u16(&enc, 1);
	proto_enc_put_str16(&enc, "0.1.0", 5);
	proto_enc_put_u64(&enc, 3);
	proto_enc_put_u64(&enc, 1);
	proto_enc_put_u64(&enc, 0);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	expect_bad_payload(PROTO_HELLO, buf, len, "entity_type: unknown type 9");
	buf[0] = PROTO_ENTITY_CLIENT;
	assert_int_equal(proto_msg_decode(PROTO_HELLO, buf, len, NULL,
					  &(struct proto_msg){ 0 }),
			 0);
	buf[1] = 0; /* name length 0; the name bytes now trail... */
	expect_bad_payload(PROTO_HELLO, buf, len, NULL);
	buf[1] = 64;
	expect_bad_payload(PROTO_HELLO, buf, len, "name: string length 64 exceeds max 63");
	buf[1] = 5;
	buf[8] = 0; /* proto_version 0 */
	expect_bad_payload(PROTO_HELLO, buf, len, "proto_version: 0");
	buf[8] = 1;
	buf[25] = 0x4; /* required 0x4, features 0x3 */
	expect_bad_payload(PROTO_HELLO, buf, len, "required: bits 0x4");
	buf[25] = 0x1;
	buf[10] = 0; /* version text of length 0; its bytes now trail */
	expect_bad_payload(PROTO_HELLO, buf, len, NULL);
	buf[10] = 5;
	assert_int_equal(proto_msg_decode(PROTO_HELLO, buf, len, NULL, &(struct proto_msg){0}), 0);

	/* auth: fixed sizes */
	memset(buf, 1, 64);
	expect_bad_payload(PROTO_AUTH_CHALLENGE, buf, 31, "truncated");
	expect_bad_payload(PROTO_AUTH_CHALLENGE, buf, 33, "trailing");
	expect_bad_payload(PROTO_AUTH_RESPONSE, buf, 64, "trailing");

	/* error: non-negative status, text over max */
	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_u32(&enc, 0);
	proto_enc_put_str16(&enc, "ok?", 3);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	expect_bad_payload(PROTO_ERROR, buf, len, "status: 0 is not negative");
	memset(buf, 'e', sizeof(buf));
	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_u32(&enc, (uint32_t)-EIO);
	proto_enc_put_u16(&enc, 256);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	expect_bad_payload(PROTO_ERROR, buf, len + 256, "msg: string length 256 exceeds max 255");

	/* map: epoch 0, blob length past end */
	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_u32(&enc, 0);
	proto_enc_put_blob32(&enc, "m", 1);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	expect_bad_payload(PROTO_MAP, buf, len, "epoch: 0");
	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_u32(&enc, 5);
	proto_enc_put_u32(&enc, 0x00ffffff);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	expect_bad_payload(PROTO_MAP, buf, len + 10, "blob: length 16777215 past end");

	/* reply: positive status, inline data on error, inline mismatch */
	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_u32(&enc, 1);
	proto_enc_put_u16(&enc, 0);
	proto_enc_put_u32(&enc, 1);
	proto_enc_put_u64(&enc, 1);
	proto_enc_put_u64(&enc, 0);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	expect_bad_payload(PROTO_OSD_OP_REPLY, buf, len, "status: 1 is positive");
	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_u32(&enc, (uint32_t)-EIO);
	proto_enc_put_u16(&enc, PROTO_REPLY_F_INLINE);
	proto_enc_put_u32(&enc, 1);
	proto_enc_put_u64(&enc, 1);
	proto_enc_put_u64(&enc, 2);
	proto_enc_put_blob32(&enc, "ab", 2);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	expect_bad_payload(PROTO_OSD_OP_REPLY, buf, len, "inline data with status");
	buf[0] = 0;
	buf[1] = buf[2] = buf[3] = 0;
	buf[18] = 3; /* length 3, inline 2 */
	expect_bad_payload(PROTO_OSD_OP_REPLY, buf, len, "inline length 2 != length 3");

	/* unknown type at dispatch */
	expect_bad_payload(0, buf, 0, "unknown message type 0");
	expect_bad_payload(999, buf, 4, "unknown message type 999");
}

/* ---------------------------------------------------------------- logging */

static size_t count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;
	int c;

	assert_non_null(f);
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* proto_frame_decode logs exactly one line per malformed frame, none when quiet. */
static void test_frame_decode_logs_once(void **state)
{
	char path[] = "/tmp/weft-test-proto-XXXXXX";
	struct proto_msg m, out;
	struct proto_hdr hdr;
	size_t len;
	uint8_t *f;
	int fd;

	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(weft_log_open("test", WEFT_LOG_INFO, path), 0);

	sample_msg(PROTO_OSD_OP, &m);
	f = encode_frame(&m, 1, &len);
	/* malformed in three places: header, payload crc, truncated */
	f[0] ^= 1;
	assert_int_equal(proto_frame_decode(f, len, 1 << 20, "client.7", NULL, &hdr, &out),
			 -EBADMSG);
	f[0] ^= 1;
	f[len - 1] ^= 1;
	assert_int_equal(proto_frame_decode(f, len, 1 << 20, "client.7", NULL, &hdr, &out),
			 -EBADMSG);
	f[len - 1] ^= 1;
	assert_int_equal(proto_frame_decode(f, len - 1, 1 << 20, "client.7", NULL, &hdr, &out),
			 -EBADMSG);
	/* payload too long for this receiver */
	assert_int_equal(proto_frame_decode(f, len, 64, "client.7", NULL, &hdr, &out), -EBADMSG);
	/* quiet */
	assert_int_equal(proto_frame_decode(f, len - 1, 1 << 20, NULL, NULL, &hdr, &out), -EBADMSG);
	/* valid: no line */
	assert_int_equal(proto_frame_decode(f, len, 1 << 20, "client.7", NULL, &hdr, &out), 0);
	free(f);

	weft_log_open("test", WEFT_LOG_INFO, "-");
	assert_int_equal(count_lines(path), 4);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codec_ints),
		cmocka_unit_test(test_codec_strings),
		cmocka_unit_test(test_hdr_roundtrip),
		cmocka_unit_test(test_hdr_malformed),
		cmocka_unit_test(test_payload_check),
		cmocka_unit_test(test_roundtrip_all),
		cmocka_unit_test(test_truncated_every_byte),
		cmocka_unit_test(test_osd_op_malformed),
		cmocka_unit_test(test_other_malformed),
		cmocka_unit_test(test_repl_malformed),
		cmocka_unit_test(test_frame_decode_logs_once),
	};

	return cmocka_run_group_tests_name("proto", tests, NULL, NULL);
}
