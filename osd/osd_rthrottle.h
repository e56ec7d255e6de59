/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The recovery throttle's reaction to client latency (docs/recovery.md,
 * "Throttle"): every window (5 s) the client write latency histogram of
 * that window is compared with osd_recovery_client_p99. A window above the
 * target raises the throttle level by one, a window under it (or without
 * client writes) lowers it by one; each level halves the recovery
 * budget (pushes + pulls in flight, and the bytes per second when a rate is
 * set), down to one op in flight and 1/16 of the rate.
 *
 * Pure: no OSD, no clock; osd_push.c feeds it and the unit test
 * (tests/test_osd_rthrottle.c) drives it with histograms.
 */
#ifndef WEFT_OSD_OSD_RTHROTTLE_H
#define WEFT_OSD_OSD_RTHROTTLE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/histogram.h"

#define OSD_RTHROTTLE_WINDOW_MS 5000u
#define OSD_RTHROTTLE_LEVEL_MAX 4u /* at most 1/16 of the configured budget */

struct osd_rthrottle {
	struct hist snap;      /* the client write histogram at the window's start */
	uint64_t snap_ms;      /* 0: no window started yet */
	uint32_t level;	       /* halvings in force */
	uint64_t windows;      /* windows judged (a target was set) */
	uint64_t slow_windows; /* of which above the target */
	uint64_t last_p99_ns;  /* the last window's client write p99 (0: no writes) */
	uint64_t last_count;   /* client writes in the last window */
};

/* p99 of what cur recorded since snap (0 when nothing). */
uint64_t osd_rthrottle_window_p99(const struct hist *cur, const struct hist *snap,
				  uint64_t *count_out);

/* The decision: the next level from this one and a window's p99 and count. */
uint32_t osd_rthrottle_decide(uint32_t level, uint64_t p99_ns, uint64_t count, uint64_t target_ns);

/*
 * Every tick: when a window has passed, judge it (target 0 = off: level 0)
 * and start the next. Returns true when a window was judged.
 */
bool osd_rthrottle_tick(struct osd_rthrottle *t, const struct hist *cur, uint64_t now_ms,
			uint64_t target_ns);

/* The budget under the current level: ops in flight (>= 1) and bytes/s (0 stays unlimited). */
uint32_t osd_rthrottle_max_active(const struct osd_rthrottle *t, uint32_t max_active);
uint64_t osd_rthrottle_rate(const struct osd_rthrottle *t, uint64_t rate);

#endif
