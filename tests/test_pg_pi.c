/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Past intervals (osd/osd_pi.c): intervals built from a sequence of acting
 * sets, the prior-set verdict peering takes from them, trimming at les,
 * merging a peer's intervals, the bound, and the persisted form.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "osd/pg/pg_pi.h"
#include "proto/codec.h"

/* Which OSDs answered peering and which are up, as bitmasks over ids 0..31. */
struct world {
	uint32_t heard, up;
};

static int w_heard(void *arg, int32_t osd)
{
	return (((struct world *)arg)->heard >> osd) & 1u ? PG_PI_HEARD_FULL : 0;
}

static bool w_up(void *arg, int32_t osd)
{
	return (((struct world *)arg)->up >> osd) & 1u;
}

static enum pg_pi_verdict check(const struct pg_pi *pi, uint32_t les, uint32_t heard, uint32_t up,
				 int32_t *blocked, unsigned int *nb)
{
	struct world w = {heard, up};
	struct pg_pi_probe p = {w_heard, w_up, &w};

	return pg_pi_check(pi, les, &p, blocked, 8, nb);
}

#define ACT(...) ((const int32_t[]){__VA_ARGS__}), (sizeof((int32_t[]){__VA_ARGS__}) / 4)

/*
 * The case peering used to get wrong (size 2, min_size 1): {0,1} active
 * at epoch 5, osd.1 dies -> {0} (may go active, acks writes alone), osd.0
 * dies -> {}, osd.1 comes back -> {1}. The new primary osd.1 must hear
 * from osd.0; with osd.0 down the PG is down and names osd.0.
 */
static void test_lost_newest_interval(void **state)
{
	static struct pg_pi pi;
	int32_t blocked[8];
	unsigned int nb = 99;

	(void)state;
	memset(&pi, 0, sizeof(pi));
	assert_int_equal(pg_pi_advance(&pi, 5, 0, ACT(0, 1), 1), 0);
	assert_int_equal(pg_pi_advance(&pi, 6, 0, ACT(0, 1), 1), 0); /* no change */
	assert_int_equal(pg_pi_advance(&pi, 7, 0, ACT(0), 1), 1);
	assert_int_equal(pg_pi_advance(&pi, 9, 7, ACT(0), 1), 2); /* 8 skipped: a gap */
	assert_int_equal(pg_pi_advance(&pi, 10, 0, (const int32_t[1]){-1}, 0, 1), 1);
	assert_int_equal(pg_pi_advance(&pi, 12, 10, ACT(1), 1), 2); /* {} is not recorded */
	/* {0} closed at 7 (the last epoch seen before the gap) and {0} at 9: one entry */
	assert_int_equal(pi.n, 2);
	assert_int_equal(pi.e[0].first, 5);
	assert_int_equal(pi.e[0].last, 6);
	assert_int_equal(pi.e[1].first, 7);
	assert_int_equal(pi.e[1].last, 9);
	assert_true(pi.e[1].flags & PG_PI_F_ACTIVE);
	assert_int_equal(pi.cur.first, 12);

	/* les 5 (went active at 5); osd.1 heard (itself), osd.0 down: down, waiting for 0 */
	assert_int_equal(check(&pi, 5, 1u << 1, 1u << 1, blocked, &nb), PG_PI_DOWN);
	assert_int_equal(nb, 1);
	assert_int_equal(blocked[0], 0);
	/* osd.0 up but not answered yet: wait */
	assert_int_equal(check(&pi, 5, 1u << 1, 3u, blocked, &nb), PG_PI_WAIT);
	assert_int_equal(nb, 0);
	/* osd.0 answered: fine */
	assert_int_equal(check(&pi, 5, 3u, 3u, blocked, &nb), PG_PI_OK);
	/* a later les (the PG went active at 12 since) makes the old intervals irrelevant */
	assert_int_equal(check(&pi, 12, 1u << 1, 1u << 1, blocked, &nb), PG_PI_OK);
	pg_pi_trim(&pi, 8);
	assert_int_equal(pi.n, 1);
	assert_int_equal(pi.e[0].first, 7);
	pg_pi_trim(&pi, 12);
	assert_int_equal(pi.n, 0);
}

/* size 3 min_size 2: an interval with one member cannot have gone active. */
static void test_min_size(void **state)
{
	static struct pg_pi pi;
	int32_t blocked[8];
	unsigned int nb;

	(void)state;
	memset(&pi, 0, sizeof(pi));
	pg_pi_advance(&pi, 3, 0, ACT(0, 1, 2), 2);
	pg_pi_advance(&pi, 4, 0, ACT(0, 1), 2);
	pg_pi_advance(&pi, 5, 0, ACT(0), 2);
	pg_pi_advance(&pi, 6, 0, ACT(2), 2);
	/* epochs 7, 8 went by without this PG's state being written: no gap, no change */
	assert_int_equal(pg_pi_advance(&pi, 9, 0, ACT(2), 2), 0);
	assert_int_equal(pi.n, 3);
	assert_true(pi.e[1].flags & PG_PI_F_ACTIVE);
	assert_false(pi.e[2].flags & PG_PI_F_ACTIVE);
	/* since les 3: {0,1,2} is covered by osd.2; {0,1} needs 0 or 1, both down */
	assert_int_equal(check(&pi, 3, 1u << 2, 1u << 2, blocked, &nb), PG_PI_DOWN);
	assert_int_equal(nb, 2);
	assert_int_equal(blocked[0], 0);
	assert_int_equal(blocked[1], 1);
	/* osd.1 back and answered: the {0} interval never blocks */
	assert_int_equal(check(&pi, 3, 6u, 6u, blocked, &nb), PG_PI_OK);
}

/* A peer's intervals fill what this copy did not see (it was down: a gap). */
static void test_merge(void **state)
{
	static struct pg_pi pi;
	struct pg_pi_ent e = {0};
	int32_t blocked[8];
	unsigned int nb;

	(void)state;
	memset(&pi, 0, sizeof(pi));
	pg_pi_advance(&pi, 5, 0, ACT(0, 1), 1);
	pg_pi_advance(&pi, 9, 5, ACT(1), 1); /* a gap: we missed 6..8 */
	assert_int_equal(check(&pi, 5, 2u, 2u, blocked, &nb), PG_PI_OK); /* blind */
	e.first = 6;
	e.last = 7;
	e.flags = PG_PI_F_ACTIVE;
	e.n = 1;
	e.osd[0] = 0;
	assert_int_equal(pg_pi_merge(&pi, &e), 1);
	assert_int_equal(pg_pi_merge(&pi, &e), 0); /* known */
	assert_int_equal(pi.n, 2);
	assert_int_equal(pi.e[1].first, 6);
	assert_int_equal(check(&pi, 5, 2u, 2u, blocked, &nb), PG_PI_DOWN);
	assert_int_equal(blocked[0], 0);
	e.first = 9; /* our own open interval: ours is authoritative */
	e.last = 9;
	assert_int_equal(pg_pi_merge(&pi, &e), 0);
	e.first = 0;
	assert_int_equal(pg_pi_merge(&pi, &e), -EINVAL);
}

/* The bound drops intervals that could not have gone active first. */
/* Distinct member sets for the bound: {i, i + 1 + j} over 8 OSDs. */
static int32_t bound_set(uint32_t k, int32_t out[2])
{
	out[0] = (int32_t)(k / 8);
	out[1] = (int32_t)(100 + k % 8);
	return 2;
}

static void test_bound(void **state)
{
	static struct pg_pi pi;
	int32_t a[2];

	(void)state;
	memset(&pi, 0, sizeof(pi));
	/* alternating one set that may go active with one that cannot */
	for (uint32_t ep = 1; ep <= 2 * PG_PI_MAX; ep++) {
		if (ep % 2)
			pg_pi_advance(&pi, ep, 0, a, (unsigned int)bound_set(ep / 2, a), 2);
		else
			pg_pi_advance(&pi, ep, 0, ACT(0), 2); /* cannot */
	}
	/* the {0} ones are one entry, and went first when room was needed */
	assert_int_equal(pi.dropped, 0);
	assert_int_equal(pi.n, PG_PI_MAX);
	for (uint32_t i = 0; i < pi.n; i++)
		assert_true(pi.e[i].flags & PG_PI_F_ACTIVE);
	/* more distinct sets that may have gone active: the oldest of them are lost, counted */
	pg_pi_advance(&pi, 2 * PG_PI_MAX + 1, 0, a, (unsigned int)bound_set(PG_PI_MAX + 5, a), 2);
	pg_pi_advance(&pi, 2 * PG_PI_MAX + 2, 0, a, (unsigned int)bound_set(PG_PI_MAX + 6, a), 2);
	pg_pi_advance(&pi, 2 * PG_PI_MAX + 3, 0, ACT(0), 2);
	assert_int_equal(pi.n, PG_PI_MAX);
	assert_true(pi.dropped > 0);
	assert_int_equal(pi.e[pi.n - 1].first, 2 * PG_PI_MAX + 2);
}

/* The same members again widen the entry they already have; a peer's too. */
static void test_absorb(void **state)
{
	static struct pg_pi pi;
	struct pg_pi_ent e = {.first = 2, .last = 3, .flags = PG_PI_F_ACTIVE, .n = 2, .osd = {4, 3}};

	(void)state;
	memset(&pi, 0, sizeof(pi));
	pg_pi_advance(&pi, 5, 0, ACT(3, 4), 2);
	pg_pi_advance(&pi, 6, 0, ACT(3, 5), 2);
	pg_pi_advance(&pi, 8, 0, ACT(4, 3), 2); /* {3,4} again, other order */
	pg_pi_advance(&pi, 9, 0, ACT(3, 5), 2);
	assert_int_equal(pi.n, 2);
	assert_int_equal(pi.e[0].first, 5);
	assert_int_equal(pi.e[0].last, 8);
	assert_int_equal(pg_pi_merge(&pi, &e), 1); /* a peer's {4,3} before ours: widened */
	assert_int_equal(pi.n, 2);
	assert_int_equal(pi.e[0].first, 2);
	assert_int_equal(pg_pi_merge(&pi, &e), 0); /* known now */
}

static int w_heard_part(void *arg, int32_t osd)
{
	struct world *w = arg;

	if ((w->heard >> osd) & 1u)
		return PG_PI_HEARD_FULL;
	return ((w->up >> (osd + 16)) & 1u) ? PG_PI_HEARD_PART : 0;
}

/* A member heard but being backfilled covers an interval only with every member heard. */
static void test_partial(void **state)
{
	static struct pg_pi pi;
	int32_t blocked[8];
	unsigned int nb;
	struct world w;
	struct pg_pi_probe p = {w_heard_part, w_up, &w};

	(void)state;
	memset(&pi, 0, sizeof(pi));
	pg_pi_advance(&pi, 5, 0, ACT(0, 1), 2);
	pg_pi_advance(&pi, 7, 0, ACT(2, 3), 2);
	/* osd.1 heard, backfilling; osd.0 down: down, waiting for 0 and 1 */
	w = (struct world){0, 1u << (1 + 16) | 1u << 1};
	assert_int_equal(pg_pi_check(&pi, 5, &p, blocked, 8, &nb), PG_PI_DOWN);
	/* both heard, both backfilling: nothing only they could have acknowledged */
	w = (struct world){0, 1u << (1 + 16) | 1u << (0 + 16) | 3u};
	assert_int_equal(pg_pi_check(&pi, 5, &p, blocked, 8, &nb), PG_PI_OK);
	/* osd.0 heard with a complete copy: fine however osd.1 is */
	w = (struct world){1u, 1u};
	assert_int_equal(pg_pi_check(&pi, 5, &p, blocked, 8, &nb), PG_PI_OK);
}

static void test_encode(void **state)
{
	static struct pg_pi pi, back;
	uint8_t buf[PG_PI_ENC_MAX];
	struct proto_enc enc;
	struct proto_dec dec;
	size_t len;

	(void)state;
	memset(&pi, 0, sizeof(pi));
	pg_pi_advance(&pi, 5, 0, ACT(3, 1, 2), 2);
	pg_pi_advance(&pi, 8, 5, ACT(1, 2), 2);
	pg_pi_advance(&pi, 11, 8, ACT(2), 2);
	proto_enc_init(&enc, buf, sizeof(buf));
	pg_pi_encode(&pi, &enc);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	proto_dec_init(&dec, buf, len, "pi", NULL);
	assert_int_equal(pg_pi_decode(&dec, &back), 0);
	assert_int_equal(proto_dec_finish(&dec), 0);
	assert_int_equal(back.epoch, 11);
	assert_int_equal(back.n, 2);
	assert_int_equal(back.cur.first, 11);
	assert_int_equal(back.cur.n, 1);
	assert_int_equal(back.e[0].osd[0], 3);
	assert_int_equal(back.e[1].last, 8); /* 9..10 were never seen */
	/* truncated input is an error, not a crash */
	for (size_t cut = 0; cut < len; cut++) {
		proto_dec_init(&dec, buf, cut, "pi", NULL);
		assert_int_not_equal(pg_pi_decode(&dec, &back), 0);
	}
	/* an interval whose last precedes its first is refused */
	{
		struct proto_pg_interval iv = {.first = 9, .last = 8, .n = 1};
		struct proto_pg_interval out;

		proto_enc_init(&enc, buf, sizeof(buf));
		proto_pg_interval_put(&enc, &iv);
		assert_int_equal(proto_enc_finish(&enc, &len), 0);
		proto_dec_init(&dec, buf, len, "iv", NULL);
		assert_int_not_equal(proto_pg_interval_get(&dec, &out), 0);
		iv.last = 9;
		iv.n = 17; /* more members than an acting set holds */
		buf[9] = 17;
		proto_dec_init(&dec, buf, len, "iv", NULL);
		assert_int_not_equal(proto_pg_interval_get(&dec, &out), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lost_newest_interval),
	    cmocka_unit_test(test_min_size),
	    cmocka_unit_test(test_merge),
	    cmocka_unit_test(test_bound),
	    cmocka_unit_test(test_absorb),
	    cmocka_unit_test(test_partial),
	    cmocka_unit_test(test_encode),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
