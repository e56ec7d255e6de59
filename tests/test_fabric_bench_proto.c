/* SPDX-License-Identifier: Apache-2.0 */
/* fabric-bench control messages and data pattern: round trips and garbage. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tools/fabric_bench.h"

static struct fb_ctrl test_hello(void)
{
	struct fb_ctrl m = {
		.type = FB_MSG_HELLO,
		.op = FB_OP_WRITE,
		.mode = FB_MODE_BW,
		.flags = FB_FLAG_VERIFY,
		.outstanding = 16,
		.size = 65536,
		.iters = 5000,
		.check = 0x1234,
		.rkey = {.addr = 0x7f0000001000ull, .len = 1 << 20, .key = 0xabcdef},
	};
	return m;
}

static void test_roundtrip(void **state)
{
	struct fb_ctrl m = test_hello(), out;
	uint8_t buf[FB_CTRL_LEN];
	const char *why = NULL;

	(void)state;
	fb_ctrl_encode(&m, buf);
	/* Little-endian, fixed offsets: the magic spells the protocol name. */
	assert_memory_equal(buf, "WEFTFBv1", 8);
	assert_int_equal(buf[8], FB_MSG_HELLO);
	assert_int_equal(buf[32], 0x00);
	assert_int_equal(buf[34], 0x01); /* 65536 = 0x10000 */
	assert_true(fb_ctrl_is_ctrl(buf, sizeof(buf)));
	assert_int_equal(fb_ctrl_decode(buf, sizeof(buf), &out, &why), 0);
	assert_memory_equal(&m, &out, sizeof(m));

	m = (struct fb_ctrl){.type = FB_MSG_RESULT, .status = -EILSEQ, .check = 42};
	fb_ctrl_encode(&m, buf);
	assert_int_equal(fb_ctrl_decode(buf, sizeof(buf), &out, &why), 0);
	assert_int_equal(out.status, -EILSEQ);
}

static void expect_bad(const uint8_t *buf, size_t len)
{
	struct fb_ctrl out;
	const char *why = NULL;

	assert_int_equal(fb_ctrl_decode(buf, len, &out, &why), -EPROTO);
	assert_non_null(why);
}

static void test_garbage(void **state)
{
	struct fb_ctrl m = test_hello();
	uint8_t buf[FB_CTRL_LEN + 8], bad[FB_CTRL_LEN];
	uint32_t seed = 1;

	(void)state;
	fb_ctrl_encode(&m, buf);
	expect_bad(buf, FB_CTRL_LEN - 1); /* truncated */
	expect_bad(buf, FB_CTRL_LEN + 8); /* too long */
	expect_bad(buf, 0);

	memcpy(bad, buf, FB_CTRL_LEN);
	bad[0] ^= 1; /* magic */
	expect_bad(bad, FB_CTRL_LEN);
	assert_false(fb_ctrl_is_ctrl(bad, FB_CTRL_LEN));

#define MUTATE(field, value)                                                                       \
	do {                                                                                       \
		struct fb_ctrl x = test_hello();                                                   \
		x.field = value;                                                                   \
		fb_ctrl_encode(&x, bad);                                                           \
		expect_bad(bad, FB_CTRL_LEN);                                                      \
	} while (0)
	MUTATE(type, 0);
	MUTATE(type, 99);
	MUTATE(op, 0);
	MUTATE(op, 7);
	MUTATE(mode, 3);
	MUTATE(flags, 0x80);
	MUTATE(size, 0);
	MUTATE(size, FB_MAX_SIZE + 1);
	MUTATE(outstanding, 0);
	MUTATE(outstanding, FB_MAX_OUTSTANDING + 1);
	MUTATE(status, 5);
	MUTATE(status, -100000);
#undef MUTATE
	{
		struct fb_ctrl x = test_hello();

		x.size = FB_MAX_SIZE;
		x.outstanding = 1024; /* 64G of buffers */
		fb_ctrl_encode(&x, bad);
		expect_bad(bad, FB_CTRL_LEN);
		x = test_hello();
		x.mode = FB_MODE_LAT; /* latency runs keep one op in flight */
		fb_ctrl_encode(&x, bad);
		expect_bad(bad, FB_CTRL_LEN);
	}

	/* Random bytes with a valid magic never crash, and mostly fail. */
	for (int round = 0; round < 10000; round++) {
		struct fb_ctrl out;
		const char *why;

		for (size_t i = 0; i < FB_CTRL_LEN; i++) {
			seed = seed * 1103515245u + 12345u;
			bad[i] = (uint8_t)(seed >> 16);
		}
		memcpy(bad, "WEFTFBv1", 8);
		(void)fb_ctrl_decode(bad, FB_CTRL_LEN, &out, &why);
	}
}

static void test_pattern(void **state)
{
	uint8_t buf[1029];

	(void)state;
	for (size_t len = 1; len <= sizeof(buf); len += 7) {
		fb_pattern_fill(buf, len, 77);
		assert_int_equal(fb_pattern_check(buf, len, 77), -1);
		assert_true(fb_pattern_check(buf, len, 78) >= 0 || len < 8);
		buf[len - 1] ^= 0x10;
		assert_int_equal(fb_pattern_check(buf, len, 77), (int64_t)(len - 1));
	}
	/* A data send never looks like a control message. */
	fb_pattern_fill(buf, FB_CTRL_LEN, 1);
	assert_false(fb_ctrl_is_ctrl(buf, FB_CTRL_LEN));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_pattern),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
