/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Recovery throttled by client p99 (osd_rthrottle.h). One step per window
 * both ways: a burst of slow windows backs recovery off quickly (halving
 * each time), and it climbs back one doubling per quiet window, so a
 * single good window does not release the whole budget at once.
 */
#include "osd/osd_rthrottle.h"

#include <string.h>

uint64_t osd_rthrottle_window_p99(const struct hist *cur, const struct hist *snap,
				  uint64_t *count_out)
{
	static __thread struct hist win;

	*count_out = 0;
	if (cur->count <= snap->count)
		return 0;
	hist_init(&win);
	for (unsigned int b = 0; b < HIST_BUCKETS; b++)
		win.buckets[b] = cur->buckets[b] >= snap->buckets[b]
				     ? cur->buckets[b] - snap->buckets[b]
				     : 0; /* a reset histogram: count what is there */
	win.count = cur->count - snap->count;
	/* per-window min/max are unknown: clamp to the whole run's (bucket bounds stay exact) */
	win.min = 0;
	win.max = cur->max;
	*count_out = win.count;
	return hist_quantile(&win, 0.99);
}

uint32_t osd_rthrottle_decide(uint32_t level, uint64_t p99_ns, uint64_t count, uint64_t target_ns)
{
	if (target_ns == 0)
		return 0;
	if (count > 0 && p99_ns > target_ns)
		return level < OSD_RTHROTTLE_LEVEL_MAX ? level + 1 : level;
	return level > 0 ? level - 1 : 0;
}

bool osd_rthrottle_tick(struct osd_rthrottle *t, const struct hist *cur, uint64_t now_ms,
			uint64_t target_ns)
{
	uint64_t count, p99;

	if (t->snap_ms != 0 && now_ms - t->snap_ms < OSD_RTHROTTLE_WINDOW_MS)
		return false;
	if (t->snap_ms == 0 || target_ns == 0) {
		/* first call, or off: start a window, judge nothing */
		t->level = 0;
		t->snap = *cur;
		t->snap_ms = now_ms ? now_ms : 1;
		return false;
	}
	p99 = osd_rthrottle_window_p99(cur, &t->snap, &count);
	t->level = osd_rthrottle_decide(t->level, p99, count, target_ns);
	t->windows++;
	t->slow_windows += count > 0 && p99 > target_ns;
	t->last_p99_ns = p99;
	t->last_count = count;
	t->snap = *cur;
	t->snap_ms = now_ms;
	return true;
}

uint32_t osd_rthrottle_max_active(const struct osd_rthrottle *t, uint32_t max_active)
{
	uint32_t m = max_active >> t->level;

	return m > 0 ? m : 1;
}

uint64_t osd_rthrottle_rate(const struct osd_rthrottle *t, uint64_t rate)
{
	uint64_t r = rate >> t->level;

	return rate == 0 ? 0 : (r > 0 ? r : 1);
}
