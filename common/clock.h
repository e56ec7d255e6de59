/* SPDX-License-Identifier: Apache-2.0 */
/* Monotonic clock helpers (CLOCK_MONOTONIC; never goes backwards). */
#ifndef WEFT_COMMON_CLOCK_H
#define WEFT_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t clock_now_us(void)
{
	return clock_now_ns() / 1000u;
}

static inline uint64_t clock_now_ms(void)
{
	return clock_now_ns() / 1000000u;
}

/* Wall-clock seconds since the epoch, for logs and reports only. */
static inline double clock_wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif
