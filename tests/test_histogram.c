/* SPDX-License-Identifier: Apache-2.0 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/histogram.h"

#define N 20000

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng_next(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Latency-like values spanning 1 ns .. ~1 s, log-uniform. */
static uint64_t sample(void)
{
	unsigned int bits = (unsigned int)(rng_next() % 30);

	return (rng_next() & ((1ull << bits) - 1)) + (1ull << bits);
}

static void check_quantiles(const struct hist *h, uint64_t *sorted, size_t n)
{
	static const double qs[] = {0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999, 0.9999};

	qsort(sorted, n, sizeof(*sorted), cmp_u64);
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		size_t rank = (size_t)ceil(qs[i] * (double)n);
		uint64_t exact = sorted[rank - 1];
		uint64_t got = hist_quantile(h, qs[i]);

		/* The bucket's upper bound: never below, at most 1/HIST_SUB above. */
		assert_true(got >= exact);
		assert_true((double)(got - exact) <= (double)exact / HIST_SUB + 1.0);
	}
	assert_int_equal(hist_quantile(h, 0.0), sorted[0]);
	assert_int_equal(hist_quantile(h, 1.0), sorted[n - 1]);
}

static void test_quantiles_random(void **state)
{
	static uint64_t vals[N];
	struct hist h;
	double sum = 0, sumsq = 0, mean, sd;

	(void)state;
	hist_init(&h);
	for (size_t i = 0; i < N; i++) {
		vals[i] = sample();
		hist_record(&h, vals[i]);
		sum += (double)vals[i];
	}
	mean = sum / N;
	for (size_t i = 0; i < N; i++)
		sumsq += ((double)vals[i] - mean) * ((double)vals[i] - mean);
	sd = sqrt(sumsq / N);
	assert_int_equal(h.count, N);
	assert_true(fabs(hist_mean(&h) - mean) <= mean * 1e-9);
	assert_true(fabs(hist_stddev(&h) - sd) <= sd * 1e-6);
	check_quantiles(&h, vals, N);
}

static void test_small_exact(void **state)
{
	struct hist h;

	(void)state;
	hist_init(&h);
	for (uint64_t v = 1; v <= 10; v++)
		hist_record(&h, v);
	/* Values below HIST_SUB have their own bucket: exact. */
	assert_int_equal(hist_quantile(&h, 0.5), 5);
	assert_int_equal(hist_quantile(&h, 0.9), 9);
	assert_int_equal(hist_quantile(&h, 0.91), 10);
	assert_true(fabs(hist_mean(&h) - 5.5) < 1e-12);
	assert_true(fabs(hist_stddev(&h) - sqrt(8.25)) < 1e-9);
}

static void test_merge(void **state)
{
	static uint64_t vals[N];
	struct hist a, b, all;

	(void)state;
	hist_init(&a);
	hist_init(&b);
	hist_init(&all);
	for (size_t i = 0; i < N; i++) {
		vals[i] = sample() * (i % 2 ? 3 : 1);
		hist_record(i % 3 ? &a : &b, vals[i]);
		hist_record(&all, vals[i]);
	}
	hist_merge(&a, &b);
	assert_int_equal(a.count, all.count);
	assert_int_equal(a.sum, all.sum);
	assert_int_equal(a.min, all.min);
	assert_int_equal(a.max, all.max);
	assert_memory_equal(a.buckets, all.buckets, sizeof(a.buckets));
	assert_true(fabs(a.sumsq - all.sumsq) <= all.sumsq * 1e-12);
	for (double q = 0.0; q <= 1.0; q += 0.05)
		assert_int_equal(hist_quantile(&a, q), hist_quantile(&all, q));
	check_quantiles(&a, vals, N);

	/* Merging an empty histogram changes nothing, into an empty one copies. */
	hist_init(&b);
	hist_merge(&a, &b);
	assert_int_equal(a.count, N);
	assert_int_equal(a.min, all.min);
	hist_merge(&b, &a);
	assert_int_equal(b.count, N);
	assert_int_equal(hist_quantile(&b, 0.5), hist_quantile(&all, 0.5));
}

static void test_empty(void **state)
{
	struct hist h;

	(void)state;
	hist_init(&h);
	assert_int_equal(h.count, 0);
	assert_int_equal(hist_quantile(&h, 0.5), 0);
	assert_int_equal(hist_quantile(&h, 0.0), 0);
	assert_int_equal(hist_quantile(&h, 1.0), 0);
	assert_true(hist_mean(&h) == 0.0);
	assert_true(hist_stddev(&h) == 0.0);
}

static void test_extremes(void **state)
{
	struct hist h;

	(void)state;
	hist_init(&h);
	hist_record(&h, 0);
	hist_record(&h, UINT64_MAX);
	assert_int_equal(h.count, 2);
	assert_int_equal(h.min, 0);
	assert_int_equal(h.max, UINT64_MAX);
	assert_int_equal(hist_quantile(&h, 0.5), 0);
	assert_int_equal(hist_quantile(&h, 0.51), UINT64_MAX);
	assert_int_equal(hist_quantile(&h, 1.0), UINT64_MAX);
	/* sum == UINT64_MAX reads as saturated: the mean is estimated within 1/HIST_SUB. */
	assert_true(fabs(hist_mean(&h) - (double)UINT64_MAX / 2) <=
		    (double)UINT64_MAX / 2 / HIST_SUB);

	/* The sum saturates instead of wrapping; the mean stays in range. */
	hist_record(&h, UINT64_MAX);
	hist_record(&h, UINT64_MAX);
	assert_int_equal(h.sum, UINT64_MAX);
	assert_true(hist_mean(&h) > (double)UINT64_MAX * 0.7);
	assert_true(hist_mean(&h) <= (double)UINT64_MAX);
	assert_true(hist_stddev(&h) > 0.0);

	hist_init(&h);
	for (int i = 0; i < 100; i++)
		hist_record(&h, 1000000000ull);
	assert_int_equal(hist_quantile(&h, 0.5), 1000000000ull);
	assert_true(hist_stddev(&h) == 0.0);
	/* Every power of two and its neighbours: quantile within 1/HIST_SUB. */
	for (unsigned int b = 0; b < 64; b++) {
		uint64_t v = 1ull << b;

		for (int d = -1; d <= 1; d++) {
			uint64_t x = v + (uint64_t)(int64_t)d;

			hist_init(&h);
			hist_record(&h, 0);
			hist_record(&h, x);
			hist_record(&h, UINT64_MAX);
			assert_true(hist_quantile(&h, 0.5) >= x);
			assert_true((double)(hist_quantile(&h, 0.5) - x) <= (double)x / HIST_SUB);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantiles_random),
		cmocka_unit_test(test_small_exact),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_extremes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
