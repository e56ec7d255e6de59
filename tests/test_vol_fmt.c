/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Volume encodings (client/volume_fmt.c): header, lock and directory
 * round-trip, and every truncation, every single-bit flip and the semantic
 * violations decode to an error, never to a value.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "client/volume_int.h"
#include "common/crc32c.h"
#include "common/le.h"
#include "common/log.h"

static struct vol_hdr sample_hdr(void)
{
	struct vol_hdr h;

	assert_int_equal(vol_hdr_init(&h, "vm-1.disk_0", 10ull << 30, NULL), 0);
	h.id = 0x0123456789abcdefull;
	h.create_time = 1790000000;
	return h;
}

static void test_hdr_roundtrip(void **state)
{
	struct vol_hdr h = sample_hdr(), got;
	uint8_t buf[VOL_HDR_MAX];
	size_t len;

	assert_int_equal(h.object_size, 4u << 20);
	assert_int_equal(h.stripe_unit, 4u << 20);
	assert_int_equal(h.stripe_count, 1);
	assert_int_equal(vol_hdr_encode(&h, buf, sizeof(buf), &len), 0);
	assert_int_equal(vol_hdr_decode(buf, len, "t", &got), 0);
	assert_memory_equal(&h, &got, sizeof(h));
	/* too small a buffer is an error, not a short header */
	assert_int_equal(vol_hdr_encode(&h, buf, len - 1, &len), -ENOBUFS);
}

static void test_hdr_damage(void **state)
{
	struct vol_hdr h = sample_hdr(), got;
	uint8_t buf[VOL_HDR_MAX], bad[VOL_HDR_MAX + 8];
	size_t len;

	assert_int_equal(vol_hdr_encode(&h, buf, sizeof(buf), &len), 0);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(vol_hdr_decode(buf, n, "t", &got), -WEFT_E_CORRUPT);
	for (size_t bit = 0; bit < len * 8; bit++) {
		memcpy(bad, buf, len);
		bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(vol_hdr_decode(bad, len, "t", &got), -WEFT_E_CORRUPT);
	}
	/* trailing bytes (crc recomputed): not canonical */
	memcpy(bad, buf, len - 4);
	memset(bad + len - 4, 0, 4);
	le_put32(bad + len, crc32c(0, bad, len));
	assert_int_equal(vol_hdr_decode(bad, len + 4, "t", &got), -WEFT_E_CORRUPT);
	/* oversized */
	memset(bad, 0, sizeof(bad));
	assert_int_equal(vol_hdr_decode(bad, VOL_HDR_MAX + 1, "t", &got), -WEFT_E_CORRUPT);
}

static void expect_hdr_rc(struct vol_hdr h, int want)
{
	uint8_t buf[VOL_HDR_MAX];
	struct vol_hdr got;
	size_t len;

	assert_int_equal(vol_hdr_encode(&h, buf, sizeof(buf), &len), 0);
	assert_int_equal(vol_hdr_decode(buf, len, "t", &got), want);
}

static void test_hdr_fields(void **state)
{
	struct vol_hdr h = sample_hdr(), x;

	x = h, x.format = 2;
	expect_hdr_rc(x, -ENOTSUP); /* newer: refused, not misread */
	x = h, x.format = 0;
	expect_hdr_rc(x, -WEFT_E_CORRUPT);
	x = h, x.features = 4;
	expect_hdr_rc(x, -ENOTSUP);
	x = h, x.object_size = 3u << 20, x.stripe_unit = x.object_size;
	expect_hdr_rc(x, -WEFT_E_CORRUPT);
	x = h, x.object_size = 2048, x.stripe_unit = 2048;
	expect_hdr_rc(x, -WEFT_E_CORRUPT);
	x = h, x.object_size = 64u << 20, x.stripe_unit = x.object_size;
	expect_hdr_rc(x, -WEFT_E_CORRUPT);
	x = h, x.size = 0;
	expect_hdr_rc(x, -WEFT_E_CORRUPT);
	x = h, x.size = WEFT_VOL_SIZE_MAX + 1;
	expect_hdr_rc(x, -WEFT_E_CORRUPT);
	x = h, x.stripe_count = 4;
	expect_hdr_rc(x, -ENOTSUP);
	x = h, x.stripe_unit = 1u << 20;
	expect_hdr_rc(x, -ENOTSUP);
	x = h, x.size = WEFT_VOL_SIZE_MAX, x.object_size = WEFT_VOL_OBJ_MIN,
	x.stripe_unit = WEFT_VOL_OBJ_MIN;
	expect_hdr_rc(x, 0); /* the extremes are valid */
}

static void test_names(void **state)
{
	struct vol_hdr h;
	char n[WEFT_VOL_NAME_MAX + 2], out[PROTO_OBJ_NAME_MAX + 1];

	memset(n, 'a', sizeof(n));
	n[WEFT_VOL_NAME_MAX] = '\0';
	assert_int_equal(vol_name_check(n), 0);
	n[WEFT_VOL_NAME_MAX] = 'a';
	n[WEFT_VOL_NAME_MAX + 1] = '\0';
	assert_int_equal(vol_name_check(n), -EINVAL);
	assert_int_equal(vol_name_check(""), -EINVAL);
	assert_int_equal(vol_name_check(".x"), -EINVAL);
	assert_int_equal(vol_name_check("a b"), -EINVAL);
	assert_int_equal(vol_name_check("a@b"), -EINVAL);
	assert_int_equal(vol_name_check("A-z_0.9"), 0);
	assert_int_equal(vol_hdr_init(&h, "x", 1, NULL), 0);
	vol_data_obj_name(0xabcull, 0x12ull, out, sizeof(out));
	assert_string_equal(out, "wvol_data.0000000000000abc.0000000000000012");
	vol_lock_obj_name(0xabcull, out, sizeof(out));
	assert_string_equal(out, "wvol_lock.0000000000000abc");
	vol_hdr_obj_name("vm1", out, sizeof(out));
	assert_string_equal(out, "wvol_header.vm1");
}

static void test_lock(void **state)
{
	struct vol_lock l = {.epoch = 7, .since = 1790000000}, got;
	uint8_t buf[VOL_LOCK_MAX], bad[VOL_LOCK_MAX];
	size_t len;

	snprintf(l.holder, sizeof(l.holder), "client.admin@host:123/00ff");
	assert_int_equal(vol_lock_encode(&l, buf, sizeof(buf), &len), 0);
	assert_int_equal(vol_lock_decode(buf, len, "t", &got), 0);
	assert_memory_equal(&l, &got, sizeof(l));
	assert_int_equal(vol_lock_decode(buf, 0, "t", &got), 0); /* missing = free */
	assert_int_equal(got.epoch, 0);
	assert_string_equal(got.holder, "");
	for (size_t n = 1; n < len; n++)
		assert_int_equal(vol_lock_decode(buf, n, "t", &got), -WEFT_E_CORRUPT);
	/* holders are printable ASCII (they are shown and put in JSON) */
	l.holder[3] = '\n';
	assert_int_equal(vol_lock_encode(&l, bad, sizeof(bad), &len), 0);
	assert_int_equal(vol_lock_decode(bad, len, "t", &got), -WEFT_E_CORRUPT);
	l.holder[3] = 'e';
	assert_int_equal(vol_lock_encode(&l, buf, sizeof(buf), &len), 0);
	for (size_t bit = 0; bit < len * 8; bit++) {
		memcpy(bad, buf, len);
		bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(vol_lock_decode(bad, len, "t", &got), -WEFT_E_CORRUPT);
	}
}

static void test_dir(void **state)
{
	char *names[] = {"a", "b-vol", "vm1"}, **got = NULL;
	static uint8_t buf[VOL_DIR_MAX], bad[256];
	uint32_t n = 0;
	size_t len;

	assert_int_equal(vol_dir_encode(names, 3, buf, sizeof(buf), &len), 0);
	assert_int_equal(vol_dir_decode(buf, len, &got, &n), 0);
	assert_int_equal(n, 3);
	for (uint32_t i = 0; i < n; i++)
		assert_string_equal(got[i], names[i]);
	vol_dir_free(got, n);
	assert_int_equal(vol_dir_decode(buf, 0, &got, &n), 0);
	assert_int_equal(n, 0);
	for (size_t k = 1; k < len; k++)
		assert_int_equal(vol_dir_decode(buf, k, &got, &n), -WEFT_E_CORRUPT);
	for (size_t bit = 0; bit < len * 8; bit++) {
		memcpy(bad, buf, len);
		bad[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		assert_int_equal(vol_dir_decode(bad, len, &got, &n), -WEFT_E_CORRUPT);
	}
	/* out of order or duplicate names (valid crc) are corrupt */
	char *unsorted[] = {"b", "a"}, *dup[] = {"a", "a"};

	assert_int_equal(vol_dir_encode(unsorted, 2, buf, sizeof(buf), &len), 0);
	assert_int_equal(vol_dir_decode(buf, len, &got, &n), -WEFT_E_CORRUPT);
	assert_int_equal(vol_dir_encode(dup, 2, buf, sizeof(buf), &len), 0);
	assert_int_equal(vol_dir_decode(buf, len, &got, &n), -WEFT_E_CORRUPT);
	/* a count far beyond the bytes present is refused before allocating */
	assert_int_equal(vol_dir_encode(names, 1, buf, sizeof(buf), &len), 0);
	le_put32(buf + 6, 60000);
	le_put32(buf + len - 4, crc32c(0, buf, len - 4));
	assert_int_equal(vol_dir_decode(buf, len, &got, &n), -WEFT_E_CORRUPT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hdr_roundtrip), cmocka_unit_test(test_hdr_damage),
	    cmocka_unit_test(test_hdr_fields),	  cmocka_unit_test(test_names),
	    cmocka_unit_test(test_lock),	  cmocka_unit_test(test_dir),
	};

	/* thousands of expected decode failures, one log line each */
	weft_log_open("test_vol_fmt", WEFT_LOG_ERROR, "/dev/null");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
