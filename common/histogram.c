/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Log-linear histogram. Values below HIST_SUB have a bucket each. A larger
 * value v with its top bit at position m (m >= HIST_SUB_BITS) lands in group
 * g = m - HIST_SUB_BITS + 1, sub-bucket (v >> (m - HIST_SUB_BITS)) & (HIST_SUB - 1):
 * each bucket is 2^(m - HIST_SUB_BITS) wide and starts at or above
 * HIST_SUB * 2^(m - HIST_SUB_BITS), so its width is at most 1/HIST_SUB of
 * any value in it. UINT64_MAX lands in group 60, well inside HIST_BUCKETS.
 *
 * sum is exact until it would wrap (2^64 ns is 584 years of latency); it
 * then saturates and hist_mean() falls back to bucket midpoints.
 */
#include "common/histogram.h"

#include <assert.h>
#include <math.h>
#include <string.h>

static unsigned int hist_index(uint64_t v)
{
	unsigned int msb, shift;

	if (v < HIST_SUB)
		return (unsigned int)v;
	msb = 63u - (unsigned int)__builtin_clzll(v);
	shift = msb - HIST_SUB_BITS;
	return (shift + 1u) * HIST_SUB + (unsigned int)((v >> shift) & (HIST_SUB - 1));
}

static uint64_t hist_bucket_low(unsigned int idx)
{
	unsigned int group = idx / HIST_SUB, sub = idx % HIST_SUB;

	if (group == 0)
		return sub;
	return (uint64_t)(HIST_SUB + sub) << (group - 1);
}

static uint64_t hist_bucket_high(unsigned int idx)
{
	unsigned int group = idx / HIST_SUB;

	if (group == 0)
		return hist_bucket_low(idx);
	/* low + width - 1: never wraps, the last bucket ends at UINT64_MAX. */
	return hist_bucket_low(idx) + ((1ull << (group - 1)) - 1);
}

void hist_init(struct hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

static uint64_t hist_add_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return UINT64_MAX;
	return r;
}

void hist_record(struct hist *h, uint64_t value)
{
	unsigned int idx = hist_index(value);

	assert(idx < HIST_BUCKETS);
	h->buckets[idx]++;
	h->count++;
	h->sum = hist_add_sat(h->sum, value);
	h->sumsq += (double)value * (double)value;
	if (value < h->min)
		h->min = value;
	if (value > h->max)
		h->max = value;
}

void hist_merge(struct hist *dst, const struct hist *src)
{
	if (src->count == 0)
		return;
	for (unsigned int i = 0; i < HIST_BUCKETS; i++)
		dst->buckets[i] += src->buckets[i];
	dst->count += src->count;
	dst->sum = hist_add_sat(dst->sum, src->sum);
	dst->sumsq += src->sumsq;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

uint64_t hist_quantile(const struct hist *h, double q)
{
	uint64_t rank, seen = 0;

	if (h->count == 0)
		return 0;
	if (!(q > 0.0)) /* also catches NaN */
		return h->min;
	if (q >= 1.0)
		return h->max;
	rank = (uint64_t)ceil(q * (double)h->count);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		seen += h->buckets[i];
		if (seen >= rank) {
			uint64_t v = hist_bucket_high(i);

			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	return h->max;
}

double hist_mean(const struct hist *h)
{
	double acc = 0.0;

	if (h->count == 0)
		return 0.0;
	if (h->sum != UINT64_MAX)
		return (double)h->sum / (double)h->count;
	/* The sum saturated: estimate from bucket midpoints. */
	for (unsigned int i = 0; i < HIST_BUCKETS; i++) {
		if (h->buckets[i] == 0)
			continue;
		acc += (double)h->buckets[i] *
		       ((double)hist_bucket_low(i) / 2.0 + (double)hist_bucket_high(i) / 2.0);
	}
	return acc / (double)h->count;
}

/* Population standard deviation. */
double hist_stddev(const struct hist *h)
{
	double mean, var;

	if (h->count == 0 || h->min == h->max)
		return 0.0;
	mean = hist_mean(h);
	var = h->sumsq / (double)h->count - mean * mean;
	return var > 0.0 ? sqrt(var) : 0.0;
}

uint64_t hist_bucket_low_value(unsigned int idx)
{
	return hist_bucket_low(idx);
}
