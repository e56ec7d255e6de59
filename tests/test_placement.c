/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "placement/placement.h"

#define NPG 1024

static void make_osds(struct plc_osd *o, unsigned int n, unsigned int per_host)
{
	for (unsigned int i = 0; i < n; i++) {
		o[i].id = (int32_t)i;
		o[i].weight = 0x10000;
		o[i].host = i / per_host;
		o[i].up = 1;
		o[i].in = 1;
	}
}

static void count_load(const struct plc_osd *o, unsigned int n, unsigned int size,
		       const struct plc_upmap *items, unsigned int nitems, unsigned int *load,
		       int32_t sets[][PLC_MAX_REPLICAS])
{
	memset(load, 0, n * sizeof(*load));
	for (uint32_t pg = 0; pg < NPG; pg++) {
		int32_t act[PLC_MAX_REPLICAS];
		int k = plc_pg_acting(o, n, 1, pg, size, items, nitems, act);

		assert_int_equal(k, (int)size);
		for (int i = 0; i < k; i++) {
			load[act[i]]++;
			if (sets)
				sets[pg][i] = act[i];
		}
	}
}

static struct plc_upmap items[4096];
static unsigned int nitems;

/*
 * 12 equal OSDs on 4 hosts, 1024 PGs, size 3: straw2 alone leaves some OSD
 * more than 10% off (multinomial noise); the balancer's items bring every
 * OSD within +-10% of its share (it aims at 5%).
 */
static void test_balance(void **state)
{
	struct plc_osd o[12];
	unsigned int load[12], worst = 0;
	const double share = NPG * 3 / 12.0;
	int added;

	make_osds(o, 12, 3);
	nitems = 0;
	count_load(o, 12, 3, NULL, 0, load, NULL);
	for (int i = 0; i < 12; i++) {
		unsigned int dev = (unsigned int)fabs(load[i] - share);

		worst = dev > worst ? dev : worst;
	}
	printf("straw2 alone: worst OSD %u PGs off a share of %.0f\n", worst, share);
	added = plc_balance(o, 12, 1, NPG, 3, 0.05, items, &nitems, 4096);
	assert_true(added >= 0);
	printf("balancer: %d items\n", added);
	count_load(o, 12, 3, items, nitems, load, NULL);
	for (int i = 0; i < 12; i++) {
		printf("osd.%d: %u PGs\n", i, load[i]);
		assert_true(load[i] >= share * 0.9 && load[i] <= share * 1.1);
	}
	/* Deterministic: the same map gives the same items. */
	struct plc_upmap again[4096];
	unsigned int n2 = 0;

	assert_int_equal(plc_balance(o, 12, 1, NPG, 3, 0.05, again, &n2, 4096), added);
	assert_memory_equal(again, items, n2 * sizeof(*items));
	/* Balancing a balanced map adds nothing. */
	assert_int_equal(plc_balance(o, 12, 1, NPG, 3, 0.05, items, &nitems, 4096), 0);
	/* Items still respect host separation. */
	for (uint32_t pg = 0; pg < NPG; pg++) {
		int32_t a[3];

		assert_int_equal(plc_pg_acting(o, 12, 1, pg, 3, items, nitems, a), 3);
		assert_true(o[a[0]].host != o[a[1]].host && o[a[0]].host != o[a[2]].host &&
			    o[a[1]].host != o[a[2]].host);
	}
}

/* Never two replicas on one host while there are enough hosts. */
static void test_distinct_hosts(void **state)
{
	struct plc_osd o[12];

	make_osds(o, 12, 3); /* 4 hosts */
	for (uint32_t pg = 0; pg < NPG; pg++) {
		int32_t a[3];

		assert_int_equal(plc_pg_acting(o, 12, 7, pg, 3, NULL, 0, a), 3);
		assert_true(o[a[0]].host != o[a[1]].host);
		assert_true(o[a[0]].host != o[a[2]].host);
		assert_true(o[a[1]].host != o[a[2]].host);
	}
	/* Two hosts, size 3: hosts are used up, then the third copy shares one. */
	make_osds(o, 4, 2);
	for (uint32_t pg = 0; pg < 64; pg++) {
		int32_t a[3];

		assert_int_equal(plc_pg_acting(o, 4, 7, pg, 3, NULL, 0, a), 3);
		assert_true(o[a[0]].host != o[a[1]].host);
		assert_true(a[2] != a[0] && a[2] != a[1]);
	}
}

/* Removing one OSD moves only the PGs that had it, and those keep their other members. */
static void test_minimal_movement(void **state)
{
	struct plc_osd o[12];
	unsigned int load[12];
	static int32_t before[NPG][PLC_MAX_REPLICAS], after[NPG][PLC_MAX_REPLICAS];
	unsigned int moved = 0;

	make_osds(o, 12, 3);
	nitems = 0;
	assert_true(plc_balance(o, 12, 1, NPG, 3, 0.05, items, &nitems, 4096) >= 0);
	count_load(o, 12, 3, items, nitems, load, before);
	o[5].up = 0; /* osd.5 goes down; the items stay in the map */
	count_load(o, 12, 3, items, nitems, load, after);
	assert_int_equal(load[5], 0);
	for (uint32_t pg = 0; pg < NPG; pg++) {
		bool had = false;

		for (int i = 0; i < 3; i++)
			had |= before[pg][i] == 5;
		if (!had) {
			assert_memory_equal(before[pg], after[pg], 3 * sizeof(int32_t));
			continue;
		}
		moved++;
		/* Survivors stay, in their order. */
		for (int i = 0, j = 0; i < 3; i++) {
			if (before[pg][i] == 5)
				continue;
			while (j < 3 && after[pg][j] != before[pg][i])
				j++;
			assert_true(j < 3);
		}
	}
	assert_true(moved > 0 && moved < NPG / 2);
}

/* Weights are honoured: double weight, about double load. */
static void test_weights(void **state)
{
	struct plc_osd o[12];
	unsigned int load[12], heavy = 0, light = 0;

	make_osds(o, 12, 1); /* 12 hosts so host separation does not interfere */
	for (int i = 0; i < 6; i++)
		o[i].weight = 0x20000;
	/* Enough PGs that the noise is small: 16384 draws, expected 2:1. */
	memset(load, 0, sizeof(load));
	for (uint32_t pg = 0; pg < 16384; pg++) {
		int32_t a[1];

		assert_int_equal(plc_pg_acting(o, 12, 3, pg, 1, NULL, 0, a), 1);
		load[a[0]]++;
	}
	for (int i = 0; i < 6; i++)
		heavy += load[i];
	for (int i = 6; i < 12; i++)
		light += load[i];
	printf("weight 2: %u PGs, weight 1: %u PGs\n", heavy, light);
	assert_true(heavy > 1.9 * light && heavy < 2.1 * light);
	/* Weight 0 and out OSDs get nothing. */
	o[0].weight = 0;
	o[1].in = 0;
	count_load(o, 12, 1, NULL, 0, load, NULL);
	assert_int_equal(load[0], 0);
	assert_int_equal(load[1], 0);
}

/* object -> PG is stable, spreads evenly, and splits cleanly when pg_num doubles. */
static void test_object_pg(void **state)
{
	unsigned int cnt[64] = { 0 };
	char name[32];

	for (int i = 0; i < 64000; i++) {
		int len = snprintf(name, sizeof(name), "obj-%d", i);
		uint32_t pg = plc_object_pg(name, (size_t)len, 64);
		uint32_t pg128 = plc_object_pg(name, (size_t)len, 128);

		assert_true(pg < 64);
		cnt[pg]++;
		/* Doubling: an object stays or moves to its split child pg + 64. */
		assert_true(pg128 == pg || pg128 == pg + 64);
		/* Non-power-of-two pg_num stays in range. */
		assert_true(plc_object_pg(name, (size_t)len, 100) < 100);
	}
	for (int i = 0; i < 64; i++)
		assert_true(cnt[i] > 800 && cnt[i] < 1200);
	assert_int_equal(plc_object_pg("a", 1, 1), 0);
	assert_int_equal(plc_name_hash("abc", 3), plc_name_hash("abc", 3));
}

static void test_bad_args(void **state)
{
	struct plc_osd o[3];
	int32_t a[PLC_MAX_REPLICAS];

	make_osds(o, 3, 1);
	assert_int_equal(plc_pg_acting(o, 3, 1, 1, 0, NULL, 0, a), -EINVAL);
	assert_int_equal(plc_pg_acting(o, 3, 1, 1, PLC_MAX_REPLICAS + 1, NULL, 0, a), -EINVAL);
	/* Fewer OSDs than replicas: as many as exist. */
	assert_int_equal(plc_pg_acting(o, 3, 1, 1, 5, NULL, 0, a), 3);
	assert_int_equal(plc_pg_acting(NULL, 0, 1, 1, 3, NULL, 0, a), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_balance),	      cmocka_unit_test(test_distinct_hosts),
		cmocka_unit_test(test_minimal_movement), cmocka_unit_test(test_weights),
		cmocka_unit_test(test_object_pg),      cmocka_unit_test(test_bad_args),
	};

	return cmocka_run_group_tests_name("placement", tests, NULL, NULL);
}
