/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The recovery throttle's client-p99 feedback (osd/osd_rthrottle.c) on
 * recorded histograms: the window's p99 is that of the window only, slow
 * windows halve the budget step by step, quiet ones give it back, and the
 * budget never reaches zero. Time is passed in, never waited for.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "osd/osd_rthrottle.h"

#define MS 1000000ull /* ns */

static void record(struct hist *h, unsigned int n, uint64_t ns)
{
	for (unsigned int i = 0; i < n; i++)
		hist_record(h, ns);
}

/* The window's p99 ignores what came before it. */
static void test_window_p99(void **state)
{
	static struct hist cur, snap;
	uint64_t count, p99;

	(void)state;
	hist_init(&cur);
	record(&cur, 1000, 50 * MS); /* an old slow period */
	snap = cur;
	record(&cur, 1000, 1 * MS); /* this window: all fast */
	p99 = osd_rthrottle_window_p99(&cur, &snap, &count);
	assert_int_equal(count, 1000);
	assert_true(p99 >= 1 * MS && p99 < 2 * MS);
	/* 2% slow in the window: the p99 is slow */
	snap = cur;
	record(&cur, 980, 1 * MS);
	record(&cur, 20, 20 * MS);
	p99 = osd_rthrottle_window_p99(&cur, &snap, &count);
	assert_true(p99 >= 20 * MS && p99 < 22 * MS);
	/* nothing new: 0 writes, p99 0 */
	snap = cur;
	assert_int_equal(osd_rthrottle_window_p99(&cur, &snap, &count), 0);
	assert_int_equal(count, 0);
}

static void test_decide(void **state)
{
	(void)state;
	assert_int_equal(osd_rthrottle_decide(0, 20 * MS, 100, 10 * MS), 1);
	assert_int_equal(osd_rthrottle_decide(1, 20 * MS, 100, 10 * MS), 2);
	assert_int_equal(osd_rthrottle_decide(OSD_RTHROTTLE_LEVEL_MAX, 20 * MS, 100, 10 * MS),
			 OSD_RTHROTTLE_LEVEL_MAX);
	assert_int_equal(osd_rthrottle_decide(2, 5 * MS, 100, 10 * MS), 1);
	assert_int_equal(osd_rthrottle_decide(2, 10 * MS, 100, 10 * MS), 1); /* at target: fine */
	assert_int_equal(osd_rthrottle_decide(2, 0, 0, 10 * MS), 1);	     /* no clients */
	assert_int_equal(osd_rthrottle_decide(0, 5 * MS, 100, 10 * MS), 0);
	assert_int_equal(osd_rthrottle_decide(3, 20 * MS, 100, 0), 0); /* off */
}

/* A run of windows: slow ones throttle, quiet ones release, one step each. */
static void test_ticks_and_budget(void **state)
{
	static struct hist cur;
	struct osd_rthrottle t;
	uint64_t now = 1000, target = 10 * MS;

	(void)state;
	memset(&t, 0, sizeof(t));
	hist_init(&cur);
	assert_false(osd_rthrottle_tick(&t, &cur, now, target)); /* starts the first window */
	assert_int_equal(osd_rthrottle_max_active(&t, 8), 8);
	assert_int_equal(osd_rthrottle_rate(&t, 64 << 20), 64 << 20);
	record(&cur, 500, 30 * MS);
	assert_false(osd_rthrottle_tick(&t, &cur, now + 4999, target)); /* window not over */
	now += OSD_RTHROTTLE_WINDOW_MS;
	assert_true(osd_rthrottle_tick(&t, &cur, now, target));
	assert_int_equal(t.level, 1);
	assert_int_equal(t.slow_windows, 1);
	assert_int_equal(t.last_count, 500);
	assert_int_equal(osd_rthrottle_max_active(&t, 8), 4);
	assert_int_equal(osd_rthrottle_rate(&t, 64 << 20), 32 << 20);
	for (int i = 0; i < 6; i++) { /* slow goes on: down to the floor, never zero */
		record(&cur, 500, 30 * MS);
		now += OSD_RTHROTTLE_WINDOW_MS;
		assert_true(osd_rthrottle_tick(&t, &cur, now, target));
	}
	assert_int_equal(t.level, OSD_RTHROTTLE_LEVEL_MAX);
	assert_int_equal(osd_rthrottle_max_active(&t, 8), 1);
	assert_int_equal(osd_rthrottle_max_active(&t, 4), 1);
	assert_int_equal(osd_rthrottle_rate(&t, 64 << 20), 4 << 20);
	assert_int_equal(osd_rthrottle_rate(&t, 0), 0); /* no rate limit stays none */
	/* clients fast again: one step back per window */
	record(&cur, 500, 2 * MS);
	now += OSD_RTHROTTLE_WINDOW_MS;
	assert_true(osd_rthrottle_tick(&t, &cur, now, target));
	assert_int_equal(t.level, OSD_RTHROTTLE_LEVEL_MAX - 1);
	assert_int_equal(osd_rthrottle_max_active(&t, 8), 1);
	assert_int_equal(osd_rthrottle_max_active(&t, 16), 2);
	for (int i = 0; i < 5; i++) { /* no client writes at all: release too */
		now += OSD_RTHROTTLE_WINDOW_MS;
		osd_rthrottle_tick(&t, &cur, now, target);
	}
	assert_int_equal(t.level, 0);
	assert_int_equal(t.windows, 13);
	assert_int_equal(t.slow_windows, 7);
	/* target off: level 0 at once, no windows judged */
	t.level = 3;
	record(&cur, 500, 30 * MS);
	now += OSD_RTHROTTLE_WINDOW_MS;
	assert_false(osd_rthrottle_tick(&t, &cur, now, 0));
	assert_int_equal(t.level, 0);
	assert_int_equal(osd_rthrottle_max_active(&t, 8), 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_window_p99),
	    cmocka_unit_test(test_decide),
	    cmocka_unit_test(test_ticks_and_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
