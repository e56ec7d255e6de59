/* SPDX-License-Identifier: Apache-2.0 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/crc32c.h"

/* Bitwise reference (reflected polynomial 0x82F63B78). */
static uint32_t crc32c_ref(uint32_t crc, const uint8_t *p, size_t len)
{
	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
	}
	return ~crc;
}

static void test_known_vectors(void **state)
{
	uint8_t zeros[32] = {0}, ones[32], inc[32], dec[32];

	(void)state;
	memset(ones, 0xff, sizeof(ones));
	for (int i = 0; i < 32; i++) {
		inc[i] = (uint8_t)i;
		dec[i] = (uint8_t)(31 - i);
	}
	assert_int_equal(crc32c(0, "123456789", 9), 0xE3069283u);
	assert_int_equal(crc32c(0, "", 0), 0);
	assert_int_equal(crc32c(0x12345678, NULL, 0), 0x12345678);
	/* RFC 3720 B.4 test vectors */
	assert_int_equal(crc32c(0, zeros, 32), 0x8A9136AAu);
	assert_int_equal(crc32c(0, ones, 32), 0x62A8AB43u);
	assert_int_equal(crc32c(0, inc, 32), 0x46DD794Eu);
	assert_int_equal(crc32c(0, dec, 32), 0x113FDB5Cu);
}

static void test_chaining(void **state)
{
	uint8_t buf[4096];
	uint32_t whole;

	(void)state;
	srand(7);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rand();
	whole = crc32c(0, buf, sizeof(buf));
	assert_int_equal(whole, crc32c_ref(0, buf, sizeof(buf)));
	for (size_t split = 0; split <= sizeof(buf); split += 97) {
		uint32_t c = crc32c(0, buf, split);

		assert_int_equal(crc32c(c, buf + split, sizeof(buf) - split), whole);
	}
	assert_int_equal(crc32c(crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
}

static void test_unaligned(void **state)
{
	uint8_t *buf = malloc(1024 + 16);

	(void)state;
	assert_non_null(buf);
	for (size_t i = 0; i < 1024 + 16; i++)
		buf[i] = (uint8_t)(i * 31 + 7);
	for (size_t off = 0; off < 16; off++) {
		for (size_t len = 0; len < 300; len += 13)
			assert_int_equal(crc32c(0, buf + off, len), crc32c_ref(0, buf + off, len));
		assert_int_equal(crc32c(0xdeadbeef, buf + off, 1024),
				 crc32c_ref(0xdeadbeef, buf + off, 1024));
	}
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_vectors),
		cmocka_unit_test(test_chaining),
		cmocka_unit_test(test_unaligned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
