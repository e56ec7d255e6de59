/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft bench object content and metadata (tools/bench_obj.c): an object
 * verifies as itself and as nothing else; any flipped byte, a short read,
 * another index, size or run is caught; the metadata codec round-trips and
 * refuses malformed text (it is read back from the cluster).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tools/bench.h"
#include "weft/weft.h"

static uint8_t *make(uint64_t size, uint32_t key, uint64_t index)
{
	uint8_t *b = malloc(size);

	assert_non_null(b);
	bench_obj_pattern(b, size, key);
	bench_obj_stamp(b, size, key, index);
	return b;
}

static void test_verify(void **state)
{
	static const uint64_t sizes[] = {BENCH_MIN_SIZE, 49, 4096, 4097, 4096 + 16, 65536 + 3,
					 1u << 20};
	uint32_t key = bench_run_key("run-a");
	char why[192];

	(void)state;
	assert_int_not_equal(key, bench_run_key("run-b"));
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint64_t size = sizes[i];
		uint8_t *b, *c;

		if (size < BENCH_MIN_SIZE)
			abort(); /* tells -O3 that b[size - 1] is in bounds */
		b = make(size, key, 7);

		assert_int_equal(bench_obj_verify(b, size, size, key, 7, why, sizeof(why)), 0);
		/* another index, size, run: refused, with a reason */
		assert_int_equal(bench_obj_verify(b, size, size, key, 8, why, sizeof(why)),
				 -WEFT_E_CORRUPT);
		assert_non_null(strstr(why, "object 7"));
		assert_int_equal(bench_obj_verify(b, size, size, key ^ 1, 7, why, sizeof(why)),
				 -WEFT_E_CORRUPT);
		assert_int_equal(bench_obj_verify(b, size - 1, size, key, 7, why, sizeof(why)),
				 -WEFT_E_CORRUPT);
		assert_non_null(strstr(why, "bytes"));
		/* every byte matters: header, body, stamps, tail */
		for (uint64_t off = 0; off < size; off += off < 64 ? 1 : 997) {
			b[off] ^= 0x10;
			assert_int_equal(bench_obj_verify(b, size, size, key, 7, why, sizeof(why)),
					 -WEFT_E_CORRUPT);
			b[off] ^= 0x10;
		}
		b[size - 1] ^= 1;
		assert_int_equal(bench_obj_verify(b, size, size, key, 7, why, sizeof(why)),
				 -WEFT_E_CORRUPT);
		assert_non_null(
		    strstr(why, size > BENCH_HDR_SIZE ? "data crc32c" : "header crc32c"));
		b[size - 1] ^= 1;
		/* the same index from the same run is the same bytes; another index differs */
		c = make(size, key, 7);
		assert_memory_equal(b, c, size);
		bench_obj_stamp(c, size, key, 9);
		assert_memory_not_equal(b, c, size);
		/* re-stamping a buffer that held another object gives this object */
		bench_obj_stamp(c, size, key, 7);
		assert_memory_equal(b, c, size);
		free(c);
		free(b);
	}
}

/* A 4 KiB block moved from another object or offset fails the data crc. */
static void test_blocks_are_unique(void **state)
{
	uint32_t key = bench_run_key("r");
	uint64_t size = 4 * 4096;
	uint8_t *a = make(size, key, 1), *b = make(size, key, 2);
	char why[192];

	(void)state;
	memcpy(a + 2 * 4096, b + 2 * 4096, 4096); /* same offset, other object */
	assert_int_equal(bench_obj_verify(a, size, size, key, 1, why, sizeof(why)),
			 -WEFT_E_CORRUPT);
	free(a);
	a = make(size, key, 1);
	memcpy(a + 2 * 4096, a + 3 * 4096, 4096); /* same object, other offset */
	assert_int_equal(bench_obj_verify(a, size, size, key, 1, why, sizeof(why)),
			 -WEFT_E_CORRUPT);
	free(a);
	free(b);
}

static void test_meta(void **state)
{
	struct bench_meta m = {.objects = 1234, .object_size = 4194304}, got;
	char buf[512];
	size_t len;

	(void)state;
	strcpy(m.run, "benchmark_data_host_42");
	assert_int_equal(bench_meta_encode(&m, buf, sizeof(buf), &len), 0);
	assert_int_equal(bench_meta_decode(buf, len, &got), 0);
	assert_string_equal(got.run, m.run);
	assert_int_equal(got.objects, 1234);
	assert_int_equal(got.object_size, 4194304);
	assert_int_equal(bench_meta_encode(&m, buf, 20, &len), -ENOBUFS);

	static const char *const bad[] = {
	    "",
	    "weft-bench-meta 2\nrun a\nobjects 1\nobject_size 4096\n",
	    "weft-bench-meta 1\nrun a\nobjects 1\nobject_size 4096", /* no final newline */
	    "weft-bench-meta 1\nrun a\nobjects 1\nobject_size 4096\nextra 1\n",
	    "weft-bench-meta 1\nrun \nobjects 1\nobject_size 4096\n",
	    "weft-bench-meta 1\nrun a b\nobjects 1\nobject_size 4096\n",
	    "weft-bench-meta 1\nrun a\nobjects -1\nobject_size 4096\n",
	    "weft-bench-meta 1\nrun a\nobjects 99999999999\nobject_size 4096\n",
	    "weft-bench-meta 1\nrun a\nobjects 1\nobject_size 47\n",
	    "weft-bench-meta 1\nrun a\nobjects 1x\nobject_size 4096\n",
	    "weft-bench-meta 1\nobjects 1\nrun a\nobject_size 4096\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(bench_meta_decode(bad[i], strlen(bad[i]), &got), -EINVAL);
	/* an embedded NUL */
	memcpy(buf, "weft-bench-meta 1\nrun a\0b\nobjects 1\nobject_size 4096\n", 52);
	assert_int_equal(bench_meta_decode(buf, 52, &got), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_verify),
	    cmocka_unit_test(test_blocks_are_unique),
	    cmocka_unit_test(test_meta),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
