/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Latency histogram with log-linear buckets: values (nanoseconds, or any
 * unsigned unit) are bucketed by power of two, each power split into
 * HIST_SUB linear sub-buckets, so relative error stays under 1/HIST_SUB.
 * Fixed size, no allocation, mergeable (a per-thread histogram is summed
 * into a report). Not thread-safe: one writer per histogram.
 */
#ifndef WEFT_COMMON_HISTOGRAM_H
#define WEFT_COMMON_HISTOGRAM_H

#include <stdint.h>

/*
 * 64 sub-buckets: a bucket is at most 1/64 (1.6 %) of its values wide, so
 * a p50 resolves a 3 % bound (docs/performance.md, the cost of auth); 16
 * made one bucket 3-6 %. A histogram is 32 KiB.
 */
#define HIST_SUB_BITS 6
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS (64u * HIST_SUB)

struct hist {
	uint64_t count;
	uint64_t sum;
	double sumsq; /* for stddev; double so it cannot overflow */
	uint64_t min;
	uint64_t max;
	uint64_t buckets[HIST_BUCKETS];
};

void hist_init(struct hist *h);
void hist_record(struct hist *h, uint64_t value);
/* dst += src */
void hist_merge(struct hist *dst, const struct hist *src);
/*
 * Value at quantile q in [0, 1] (0.5 = p50, 0.999 = p99.9): the upper bound
 * of the bucket that holds it, clamped to [min, max]. 0 if empty.
 */
uint64_t hist_quantile(const struct hist *h, double q);
double hist_mean(const struct hist *h);
/* The smallest value bucket idx (< HIST_BUCKETS) holds: exporters map buckets to bounds. */
uint64_t hist_bucket_low_value(unsigned int idx);
double hist_stddev(const struct hist *h);

#endif
