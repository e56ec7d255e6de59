/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hierarchical placement (placement/plc_tree.c, plc_map.c, balance_tree.c)
 * on maps built with real increments: the descent is deterministic and the
 * same after encode/decode (client and OSD), a weight change in one bucket
 * moves data only into or out of it, failure domains hold (and health's
 * domain count says when they cannot), maps without a topology keep host
 * separation, upmap items apply, and the balancer brings a 100-OSD map
 * within +-5%. Also the map's version-2 encoding rules.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mon/map.h"
#include "placement/plc_map.h"

#define NPG 2048

static void commit(struct mon_map *map, struct mon_inc *inc)
{
	inc->epoch = map->epoch + 1;
	assert_int_equal(mon_map_apply(map, inc), 0);
	mon_inc_free(inc);
}

static void add_bucket(struct mon_map *map, int32_t id, uint8_t type, int32_t parent,
		       const char *name)
{
	struct mon_inc inc;
	struct mon_op op = {.kind = MON_OP_BUCKET_SET};

	mon_inc_init(&inc);
	op.bucket.id = id;
	op.bucket.type = type;
	op.bucket.parent = parent;
	snprintf(op.bucket.name, sizeof(op.bucket.name), "%s", name);
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	commit(map, &inc);
}

static void add_osds(struct mon_map *map, uint32_t first, uint32_t n, const char *host,
		     uint32_t weight)
{
	struct mon_inc inc;
	struct mon_op op = {.kind = MON_OP_OSD_SET};

	mon_inc_init(&inc);
	for (uint32_t i = first; i < first + n; i++) {
		memset(&op.osd, 0, sizeof(op.osd));
		op.osd.id = i;
		op.osd.state = MON_OSD_EXISTS | MON_OSD_UP | MON_OSD_IN;
		op.osd.uuid[0] = (uint8_t)i;
		op.osd.weight = weight;
		snprintf(op.osd.host, sizeof(op.osd.host), "%s", host);
		assert_int_equal(mon_inc_add(&inc, &op), 0);
	}
	commit(map, &inc);
}

static void add_pool(struct mon_map *map, uint32_t size, uint8_t domain, uint32_t pg_num)
{
	struct mon_inc inc;
	struct mon_op op = {.kind = MON_OP_POOL_SET};

	mon_inc_init(&inc);
	op.pool.id = 1;
	op.pool.size = size;
	op.pool.min_size = 1;
	op.pool.pg_num = pg_num;
	op.pool.domain = domain;
	snprintf(op.pool.name, sizeof(op.pool.name), "p");
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	commit(map, &inc);
}

/* root default > racks r0..r(R-1) > hosts rXhY > OSDs (OSD i in host i / per_host). */
static uint32_t build(struct mon_map *map, unsigned int racks, unsigned int hosts,
		      unsigned int per_host)
{
	char name[64];
	int32_t id = -1;
	uint32_t osd = 0;

	mon_map_init(map);
	add_bucket(map, id--, MON_CT_ROOT, 0, "default");
	for (unsigned int r = 0; r < racks; r++) {
		int32_t rid = id--;

		snprintf(name, sizeof(name), "r%u", r);
		add_bucket(map, rid, MON_CT_RACK, -1, name);
		for (unsigned int h = 0; h < hosts; h++) {
			snprintf(name, sizeof(name), "r%uh%u", r, h);
			add_bucket(map, id--, MON_CT_HOST, rid, name);
			add_osds(map, osd, per_host, name, MON_WEIGHT_ONE);
			osd += per_host;
		}
	}
	return osd;
}

static void sets_of(const struct mon_map *map, int32_t (*sets)[PLC_MAX_REPLICAS], int *n,
		    unsigned int *shrt)
{
	const struct mon_pool *p = mon_map_pool(map, 1);

	*shrt = 0;
	for (uint32_t pg = 0; pg < p->pg_num; pg++) {
		bool s;

		memset(sets[pg], 0xff, sizeof(sets[pg]));
		n[pg] = plc_map_acting_ex(map, p, pg, sets[pg], &s);
		*shrt += s;
	}
}

static int32_t sets_a[NPG][PLC_MAX_REPLICAS], sets_b[NPG][PLC_MAX_REPLICAS];
static int n_a[NPG], n_b[NPG];

static void test_deterministic_after_decode(void **state)
{
	struct mon_map map, client, osd;
	struct proto_err err;
	unsigned int shrt;
	void *buf;
	size_t len;

	(void)state;
	build(&map, 3, 4, 4);
	add_pool(&map, 3, MON_CT_NONE, NPG);
	sets_of(&map, sets_a, n_a, &shrt);
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	assert_int_equal(((uint8_t *)buf)[0], 2);
	mon_map_init(&client);
	mon_map_init(&osd);
	assert_int_equal(mon_map_decode(buf, len, &err, &client), 0);
	assert_int_equal(mon_map_decode(buf, len, &err, &osd), 0);
	sets_of(&client, sets_b, n_b, &shrt);
	assert_memory_equal(sets_a, sets_b, sizeof(sets_a));
	sets_of(&osd, sets_b, n_b, &shrt);
	assert_memory_equal(sets_a, sets_b, sizeof(sets_a));
	for (unsigned int pg = 0; pg < NPG; pg++)
		assert_int_equal(n_a[pg], 3);
	free(buf);
	mon_map_free(&client);
	mon_map_free(&osd);
	mon_map_free(&map);
}

/* OSDs 0..15 are rack r0 (4 hosts of 4). */
static bool in_rack0(int32_t osd)
{
	return osd >= 0 && osd < 16;
}

/*
 * Heavier OSDs in host r0h1 make r0h1 and its rack r0 heavier. Each straw2
 * draw then moves only into the heavier bucket: with one replica, every PG
 * that changes ends in r0. With three, a descent that moved into r0 can
 * clash with a replica there and retry elsewhere (as in CRUSH): allowed for
 * at most 2% of the PGs here, and PGs wholly outside r0 stay.
 */
static void weight_change(unsigned int size, unsigned int max_outside)
{
	struct mon_map map;
	struct mon_inc inc;
	struct mon_op op = {.kind = MON_OP_OSD_SET};
	unsigned int shrt, changed = 0, outside = 0;

	build(&map, 2, 4, 4);
	add_pool(&map, size, MON_CT_NONE, NPG);
	sets_of(&map, sets_a, n_a, &shrt);
	mon_inc_init(&inc);
	for (uint32_t i = 4; i < 8; i++) { /* host r0h1 */
		op.osd = map.osds[i];
		op.osd.weight = MON_WEIGHT_ONE * 3 / 2;
		assert_int_equal(mon_inc_add(&inc, &op), 0);
	}
	commit(&map, &inc);
	sets_of(&map, sets_b, n_b, &shrt);
	for (unsigned int pg = 0; pg < NPG; pg++) {
		bool joined_r0 = false, diff = false, any_r0 = false;

		for (unsigned int i = 0; i < size; i++) {
			bool stays = false;

			for (unsigned int j = 0; j < size; j++)
				stays |= sets_b[pg][i] == sets_a[pg][j];
			diff |= !stays;
			joined_r0 |= !stays && in_rack0(sets_b[pg][i]);
			any_r0 |= in_rack0(sets_a[pg][i]) || in_rack0(sets_b[pg][i]);
		}
		changed += diff;
		outside += diff && !joined_r0;
		if (!any_r0)
			assert_memory_equal(sets_a[pg], sets_b[pg], size * sizeof(int32_t));
	}
	assert_true(changed > 0);
	assert_true(outside <= max_outside);
	mon_map_free(&map);
}

static void test_weight_change_stays_in_bucket(void **state)
{
	(void)state;
	weight_change(1, 0);
	weight_change(3, NPG / 50);
}

static void test_failure_domains(void **state)
{
	struct mon_map map;
	const struct plc_tree *t;
	struct plc_rule rule;
	unsigned int shrt;

	(void)state;
	build(&map, 3, 2, 3);
	add_pool(&map, 3, MON_CT_RACK, NPG);
	sets_of(&map, sets_a, n_a, &shrt);
	assert_int_equal(shrt, 0);
	for (unsigned int pg = 0; pg < NPG; pg++) {
		assert_int_equal(n_a[pg], 3);
		/* 6 OSDs a rack: ids / 6 tell the racks apart */
		assert_true(sets_a[pg][0] / 6 != sets_a[pg][1] / 6);
		assert_true(sets_a[pg][0] / 6 != sets_a[pg][2] / 6);
		assert_true(sets_a[pg][1] / 6 != sets_a[pg][2] / 6);
	}
	t = plc_map_tree(&map);
	assert_non_null(t);
	assert_int_equal(plc_map_rule(t, &map, mon_map_pool(&map, 1), &rule), 0);
	assert_int_equal(plc_tree_domains(t, &rule), 3);
	/* rack r2 fails (its OSDs out): too few racks, placed as well as possible */
	{
		struct mon_inc inc;
		struct mon_op op = {.kind = MON_OP_OSD_SET};

		mon_inc_init(&inc);
		for (uint32_t i = 12; i < 18; i++) {
			op.osd = map.osds[i];
			op.osd.state = MON_OSD_EXISTS;
			assert_int_equal(mon_inc_add(&inc, &op), 0);
		}
		commit(&map, &inc);
	}
	t = plc_map_tree(&map);
	assert_int_equal(plc_map_rule(t, &map, mon_map_pool(&map, 1), &rule), 0);
	assert_int_equal(plc_tree_domains(t, &rule), 2);
	sets_of(&map, sets_b, n_b, &shrt);
	assert_int_equal(shrt, NPG);
	for (unsigned int pg = 0; pg < NPG; pg++) {
		assert_int_equal(n_b[pg], 3);
		for (int i = 0; i < 3; i++)
			assert_true(sets_b[pg][i] < 12);
		assert_true(sets_b[pg][0] != sets_b[pg][1] && sets_b[pg][1] != sets_b[pg][2] &&
			    sets_b[pg][0] != sets_b[pg][2]);
	}
	mon_map_free(&map);
}

/* A map of version 1 (no topology): a default root with one host per host name. */
static void test_no_topology(void **state)
{
	struct mon_map map;
	unsigned int shrt;
	void *buf;
	size_t len;
	char host[16];

	(void)state;
	mon_map_init(&map);
	for (uint32_t h = 0; h < 5; h++) {
		snprintf(host, sizeof(host), "node%u", h);
		add_osds(&map, h * 2, 2, host, MON_WEIGHT_ONE);
	}
	add_pool(&map, 3, MON_CT_NONE, NPG);
	assert_int_equal(map.nbuckets, 0);
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	assert_int_equal(((uint8_t *)buf)[0], 1); /* older decoders still read it */
	free(buf);
	sets_of(&map, sets_a, n_a, &shrt);
	assert_int_equal(shrt, 0);
	for (unsigned int pg = 0; pg < NPG; pg++) {
		assert_int_equal(n_a[pg], 3);
		/* OSDs 2h and 2h+1 share host h */
		assert_true(sets_a[pg][0] / 2 != sets_a[pg][1] / 2);
		assert_true(sets_a[pg][0] / 2 != sets_a[pg][2] / 2);
		assert_true(sets_a[pg][1] / 2 != sets_a[pg][2] / 2);
	}
	/* the same hosts made explicit under "default" draw alike: nothing moves */
	add_bucket(&map, -1, MON_CT_ROOT, 0, "default");
	for (uint32_t h = 0; h < 5; h++) {
		snprintf(host, sizeof(host), "node%u", h);
		add_bucket(&map, -2 - (int32_t)h, MON_CT_HOST, -1, host);
	}
	sets_of(&map, sets_b, n_b, &shrt);
	assert_memory_equal(sets_a, sets_b, sizeof(sets_a));
	mon_map_free(&map);
}

/*
 * The reweight override: osd.X at 0.5 holds about half its PGs, only its
 * PGs move (each to another OSD, host separation kept), and back at 1.0
 * every PG is where it was. 0 takes every PG off it.
 */
static void test_reweight(void **state)
{
	struct mon_map map;
	struct mon_inc inc;
	struct mon_op op = {.kind = MON_OP_OSD_SET};
	unsigned int shrt, before = 0, after = 0, moved_other = 0;
	const uint32_t x = 4;

	(void)state;
	build(&map, 1, 5, 2); /* 5 hosts of 2 OSDs */
	add_pool(&map, 3, MON_CT_NONE, NPG);
	sets_of(&map, sets_a, n_a, &shrt);
	for (uint32_t rw = 0; rw < 3; rw++) {
		mon_inc_init(&inc);
		op.osd = map.osds[x];
		op.osd.reject = rw == 0 ? MON_WEIGHT_ONE / 2 : rw == 1 ? MON_WEIGHT_ONE : 0;
		assert_int_equal(mon_inc_add(&inc, &op), 0);
		commit(&map, &inc);
		sets_of(&map, sets_b, n_b, &shrt);
		assert_int_equal(shrt, 0);
		before = after = moved_other = 0;
		for (unsigned int pg = 0; pg < NPG; pg++) {
			bool had = false, has = false;

			assert_int_equal(n_b[pg], 3);
			for (int r = 0; r < 3; r++) {
				had |= sets_a[pg][r] == (int32_t)x;
				has |= sets_b[pg][r] == (int32_t)x;
				/* host separation: OSDs 2h and 2h+1 share host h */
				for (int k = 0; k < r; k++)
					assert_true(sets_b[pg][r] / 2 != sets_b[pg][k] / 2);
			}
			before += had;
			after += has;
			assert_false(has && !had); /* nothing new comes to it */
			moved_other += !had && memcmp(sets_a[pg], sets_b[pg], sizeof(sets_a[pg])) != 0;
		}
		assert_int_equal(moved_other, 0); /* only its PGs move */
		if (rw == 0)
			assert_true(after > before * 4 / 10 && after < before * 6 / 10);
		else if (rw == 1)
			assert_int_equal(after, 0);
		else
			assert_memory_equal(sets_a, sets_b, sizeof(sets_a));
	}
	mon_map_free(&map);
}

static void test_upmap_items(void **state)
{
	struct mon_map map, back;
	struct mon_inc inc;
	struct mon_op op = {.kind = MON_OP_UPMAP_SET};
	struct proto_err err;
	int32_t act[PLC_MAX_REPLICAS], to = -1;
	unsigned int shrt;
	void *buf;
	size_t len;

	(void)state;
	build(&map, 1, 4, 2);
	add_pool(&map, 2, MON_CT_NONE, 64);
	sets_of(&map, sets_a, n_a, &shrt);
	/* move pg 5's first replica to an OSD of a host it does not use */
	for (int32_t o = 0; o < 8 && to < 0; o++)
		if (o / 2 != sets_a[5][0] / 2 && o / 2 != sets_a[5][1] / 2)
			to = o;
	mon_inc_init(&inc);
	op.upmap = (struct mon_upmap){1, 5, sets_a[5][0], to};
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	/* an item that would put both replicas on one host is ignored */
	op.upmap = (struct mon_upmap){1, 6, sets_a[6][0], sets_a[6][1] ^ 1};
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	commit(&map, &inc);
	assert_int_equal(map.nupmaps, 2);
	assert_int_equal(plc_map_acting(&map, mon_map_pool(&map, 1), 5, act), 2);
	assert_int_equal(act[0], to);
	assert_int_equal(act[1], sets_a[5][1]);
	assert_int_equal(plc_map_acting(&map, mon_map_pool(&map, 1), 6, act), 2);
	assert_int_equal(act[0], sets_a[6][0]);
	/* items survive the encoding, and go with their pool */
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	mon_map_init(&back);
	assert_int_equal(mon_map_decode(buf, len, &err, &back), 0);
	assert_int_equal(plc_map_acting(&back, mon_map_pool(&back, 1), 5, act), 2);
	assert_int_equal(act[0], to);
	free(buf);
	mon_inc_init(&inc);
	op.kind = MON_OP_POOL_RM;
	op.pool_id = 1;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	commit(&map, &inc);
	assert_int_equal(map.nupmaps, 0);
	mon_map_free(&back);
	mon_map_free(&map);
}

/* 100 OSDs (weights 1 and 2), 4096 PGs of 3: the balancer brings all within +-5% (or 1 PG). */
static void test_balancer_100(void **state)
{
	static struct plc_upmap items[4096 * 3];
	struct mon_map map;
	struct mon_inc inc;
	struct mon_op op = {.kind = MON_OP_OSD_SET};
	unsigned int load[100], n = 0, outside_before = 0;
	double share[100];
	const struct plc_tree *t;
	struct plc_bal_stats st;
	struct plc_rule rule;
	int moved;

	(void)state;
	build(&map, 2, 5, 10);
	mon_inc_init(&inc);
	for (uint32_t i = 0; i < 100; i += 7) { /* a few heavier OSDs */
		op.osd = map.osds[i];
		op.osd.weight = 2 * MON_WEIGHT_ONE;
		assert_int_equal(mon_inc_add(&inc, &op), 0);
	}
	commit(&map, &inc);
	add_pool(&map, 3, MON_CT_NONE, 4096);
	t = plc_map_tree(&map);
	assert_int_equal(plc_map_rule(t, &map, mon_map_pool(&map, 1), &rule), 0);
	assert_int_equal(plc_tree_loads(t, &rule, 4096, NULL, 0, load, share), 0);
	for (int i = 0; i < 100; i++)
		outside_before += fabs(load[i] - share[i]) > fmax(0.05 * share[i], 1);
	assert_true(outside_before > 0); /* hashing alone: some OSD is off */
	moved = plc_tree_balance(t, &rule, 4096, 0.05, 4096 * 3, items, &n, 4096 * 3, &st);
	assert_true(moved > 0);
	assert_int_equal(plc_tree_loads(t, &rule, 4096, items, n, load, share), 0);
	for (int i = 0; i < 100; i++)
		assert_true(fabs(load[i] - share[i]) <= fmax(0.05 * share[i], 1));
	/* every item keeps the rule: replicas on distinct hosts */
	for (uint32_t pg = 0; pg < 4096; pg++) {
		int32_t a[PLC_MAX_REPLICAS];

		assert_int_equal(plc_tree_acting(t, &rule, pg, items, n, a, NULL), 3);
		assert_true(a[0] / 10 != a[1] / 10 && a[0] / 10 != a[2] / 10 &&
			    a[1] / 10 != a[2] / 10);
	}
	/* the same map in, the same items out; balanced, a second run moves nothing */
	{
		unsigned int n2 = n;

		assert_int_equal(
		    plc_tree_balance(t, &rule, 4096, 0.05, 4096 * 3, items, &n2, 4096 * 3, NULL),
		    0);
		assert_int_equal(n2, n);
	}
	mon_map_free(&map);
}

static void test_map_v2_rules(void **state)
{
	struct mon_map map;
	struct mon_inc inc;
	struct mon_op op = {.kind = MON_OP_BUCKET_SET};
	struct proto_err err;
	void *buf;
	size_t len;

	(void)state;
	build(&map, 1, 1, 1);
	/* a parent of a lower type, an unknown parent, a taken name: refused, nothing changes */
	mon_inc_init(&inc);
	op.bucket = (struct mon_bucket){-9, MON_CT_RACK, -3, "bad"}; /* -3 is a host */
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	inc.epoch = map.epoch + 1;
	assert_int_equal(mon_map_apply(&map, &inc), -EINVAL);
	mon_inc_free(&inc);
	op.bucket = (struct mon_bucket){-9, MON_CT_HOST, -42, "bad"};
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	inc.epoch = map.epoch + 1;
	assert_int_equal(mon_map_apply(&map, &inc), -EINVAL);
	mon_inc_free(&inc);
	op.bucket = (struct mon_bucket){-9, MON_CT_HOST, -2, "r0"};
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	inc.epoch = map.epoch + 1;
	assert_int_equal(mon_map_apply(&map, &inc), -EINVAL);
	mon_inc_free(&inc);
	/* a bucket that holds something cannot go */
	op.kind = MON_OP_BUCKET_RM;
	op.bucket_id = -2;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	inc.epoch = map.epoch + 1;
	assert_int_equal(mon_map_apply(&map, &inc), -EINVAL);
	mon_inc_free(&inc);
	assert_int_equal(map.nbuckets, 3);
	/* every truncation of a version-2 map is refused */
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(mon_map_decode(buf, n, &err, &map), -EBADMSG);
	free(buf);
	mon_map_free(&map);
	/* version 2 for a map with nothing of version 2 is not canonical */
	mon_map_init(&map);
	assert_int_equal(mon_map_encode(&map, &buf, &len), 0);
	{
		uint8_t *v2 = malloc(len + 13);

		memcpy(v2, buf, len);
		v2[0] = 2;
		memset(v2 + len, 0, 13); /* 0 buckets, 0 locs, 0 upmaps, balancer default */
		assert_int_equal(mon_map_decode(v2, len + 13, &err, &map), -EBADMSG);
		assert_non_null(strstr(err.msg, "version"));
		free(v2);
	}
	free(buf);
	mon_map_free(&map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_deterministic_after_decode),
	    cmocka_unit_test(test_weight_change_stays_in_bucket),
	    cmocka_unit_test(test_failure_domains),
	    cmocka_unit_test(test_no_topology),
	    cmocka_unit_test(test_upmap_items),
	    cmocka_unit_test(test_reweight),
	    cmocka_unit_test(test_balancer_100),
	    cmocka_unit_test(test_map_v2_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
