/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "weft/weft.h"

static void test_success(void **state)
{
	(void)state;
	assert_string_equal(weft_strerror(0), "success");
}

static void test_errno(void **state)
{
	(void)state;
	assert_string_equal(weft_strerror(-ENOENT), strerror(ENOENT));
	assert_string_equal(weft_strerror(-EINVAL), "Invalid argument");
	assert_string_equal(weft_strerror(-EIO), "Input/output error");
	assert_string_equal(weft_strerror(-ESTALE), strerror(ESTALE));
}

static void test_weft_codes(void **state)
{
	(void)state;
	assert_string_equal(weft_strerror(-WEFT_E_BADCONF), "invalid configuration");
	assert_string_equal(weft_strerror(-WEFT_E_NOQUORUM), "monitors have no quorum");
	assert_string_equal(weft_strerror(-WEFT_E_NOBACKEND), "no usable fabric backend");
	assert_string_equal(weft_strerror(-WEFT_E_AUTH), "authentication failed");
	assert_string_equal(weft_strerror(-WEFT_E_BADKEY), "remote key unknown or revoked");
	assert_string_equal(weft_strerror(-WEFT_E_CORRUPT), "checksum mismatch on stored data");
	assert_string_equal(weft_strerror(-WEFT_E_BLOCKLISTED),
			    "this client instance is blocklisted (fenced)");
}

static void test_unknown(void **state)
{
	(void)state;
	assert_string_equal(weft_strerror(5), "unknown error 5");
	assert_string_equal(weft_strerror(-4000), "unknown error -4000");
	assert_string_equal(weft_strerror(-WEFT_ERRNO_BASE), "unknown error -4096");
	assert_string_equal(weft_strerror(-WEFT_ERRNO_MAX), "unknown error -4104");
	assert_string_equal(weft_strerror(-99999), "unknown error -99999");
	assert_string_equal(weft_strerror(INT32_MIN), "unknown error -2147483648");
}

/* The buffer is per thread: another thread's calls do not change our result. */
static pthread_barrier_t status_barrier;

static void *status_thread(void *arg)
{
	const char *mine = weft_strerror(-(int)(intptr_t)arg);
	char copy[128];

	snprintf(copy, sizeof(copy), "%s", mine);
	pthread_barrier_wait(&status_barrier); /* main thread now calls weft_strerror() */
	pthread_barrier_wait(&status_barrier);
	return (void *)(intptr_t)(strcmp(copy, mine) == 0 ? 0 : 1);
}

static void test_threads(void **state)
{
	pthread_t t[4];

	(void)state;
	assert_int_equal(pthread_barrier_init(&status_barrier, NULL, 5), 0);
	for (intptr_t i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, status_thread, (void *)(5000 + i)), 0);
	pthread_barrier_wait(&status_barrier);
	for (int i = 0; i < 1000; i++) {
		char want[64];

		snprintf(want, sizeof(want), "unknown error %d", -7000 - i);
		assert_string_equal(weft_strerror(-7000 - i), want);
	}
	pthread_barrier_wait(&status_barrier);
	for (int i = 0; i < 4; i++) {
		void *ret;

		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_null(ret);
	}
	pthread_barrier_destroy(&status_barrier);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_success),	   cmocka_unit_test(test_errno),
		cmocka_unit_test(test_weft_codes), cmocka_unit_test(test_unknown),
		cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
