/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The balancer: straw2 leaves every OSD's PG count with multinomial noise;
 * a handful of upmap items moves single replicas from the most loaded OSD
 * to the least loaded one until all are within max_dev of their share.
 * Deterministic (same map in, same items out), so any mon can run it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "placement/placement.h"

struct plc_bal {
	const struct plc_osd *osds;
	unsigned int n, size;
	uint32_t pool, pg_num;
	int32_t *sets;	     /* pg_num x size acting sets, -1 = empty */
	unsigned int *load;  /* replicas per OSD index */
	double *target;	     /* weighted share per OSD index */
};

static int plc_bal_index(const struct plc_bal *b, int32_t id)
{
	for (unsigned int i = 0; i < b->n; i++)
		if (b->osds[i].id == id)
			return (int)i;
	return -1;
}

static double plc_bal_ratio(const struct plc_bal *b, unsigned int i)
{
	return b->target[i] > 0 ? (double)b->load[i] / b->target[i] : 0;
}

/* Can pg's replica on osd x move to osd y without breaking the set's rules? */
static bool plc_bal_can_move(const struct plc_bal *b, const struct plc_upmap *items,
			     unsigned int nitems, uint32_t pg, unsigned int x, unsigned int y)
{
	const int32_t *set = b->sets + (size_t)pg * b->size;
	bool has_x = false;

	for (unsigned int i = 0; i < nitems; i++) /* one item per PG keeps it simple */
		if (items[i].pool == b->pool && items[i].pg == pg)
			return false;
	for (unsigned int c = 0; c < b->size; c++) {
		int j;

		if (set[c] < 0)
			continue;
		if (set[c] == b->osds[y].id)
			return false;
		if (set[c] == b->osds[x].id) {
			has_x = true;
			continue;
		}
		j = plc_bal_index(b, set[c]);
		if (j >= 0 && b->osds[j].host == b->osds[y].host)
			return false;
	}
	return has_x;
}

static int plc_bal_init(struct plc_bal *b, const struct plc_upmap *items, unsigned int nitems)
{
	double wsum = 0, total = 0;

	b->sets = malloc((size_t)b->pg_num * b->size * sizeof(*b->sets));
	b->load = calloc(b->n, sizeof(*b->load));
	b->target = calloc(b->n, sizeof(*b->target));
	if (!b->sets || !b->load || !b->target)
		return -ENOMEM;
	for (uint32_t pg = 0; pg < b->pg_num; pg++) {
		int32_t *set = b->sets + (size_t)pg * b->size;
		int k = plc_pg_acting(b->osds, b->n, b->pool, pg, b->size, items, nitems, set);

		if (k < 0)
			return k;
		for (unsigned int c = (unsigned int)k; c < b->size; c++)
			set[c] = -1;
		for (int c = 0; c < k; c++)
			b->load[plc_bal_index(b, set[c])]++;
		total += k;
	}
	for (unsigned int i = 0; i < b->n; i++)
		if (b->osds[i].up && b->osds[i].in)
			wsum += b->osds[i].weight;
	for (unsigned int i = 0; i < b->n; i++)
		if (b->osds[i].up && b->osds[i].in && wsum > 0)
			b->target[i] = total * b->osds[i].weight / wsum;
	return 0;
}

static void plc_bal_fini(struct plc_bal *b)
{
	free(b->sets);
	free(b->load);
	free(b->target);
}

/* Order eligible OSD indexes by load ratio, descending. */
static unsigned int plc_bal_rank(const struct plc_bal *b, unsigned int *order)
{
	unsigned int m = 0;

	for (unsigned int i = 0; i < b->n; i++)
		if (b->target[i] > 0)
			order[m++] = i;
	for (unsigned int i = 1; i < m; i++) { /* insertion sort: n is modest, ties by index */
		unsigned int v = order[i], j = i;

		while (j > 0 && plc_bal_ratio(b, order[j - 1]) < plc_bal_ratio(b, v)) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = v;
	}
	return m;
}

/* Try one move from a high OSD to a low one; true if an item was added. */
static bool plc_bal_step(struct plc_bal *b, const unsigned int *order, unsigned int m,
			 double max_dev, struct plc_upmap *items, unsigned int *nitems)
{
	for (unsigned int hi = 0; hi < m; hi++) {
		unsigned int x = order[hi];

		if (b->load[x] <= b->target[x])
			break;
		for (unsigned int lo = m; lo-- > hi + 1;) {
			unsigned int y = order[lo];

			if (b->load[y] + 1 > b->target[y] * (1 + max_dev))
				break;
			for (uint32_t pg = 0; pg < b->pg_num; pg++) {
				int32_t *set = b->sets + (size_t)pg * b->size;

				if (!plc_bal_can_move(b, items, *nitems, pg, x, y))
					continue;
				items[*nitems] = (struct plc_upmap){ b->pool, pg, b->osds[x].id,
								     b->osds[y].id };
				(*nitems)++;
				for (unsigned int c = 0; c < b->size; c++)
					if (set[c] == b->osds[x].id)
						set[c] = b->osds[y].id;
				b->load[x]--;
				b->load[y]++;
				return true;
			}
		}
	}
	return false;
}

static bool plc_bal_done(const struct plc_bal *b, const unsigned int *order, unsigned int m,
			 double max_dev)
{
	return m == 0 || (plc_bal_ratio(b, order[0]) <= 1 + max_dev &&
			  plc_bal_ratio(b, order[m - 1]) >= 1 - max_dev);
}

int plc_balance(const struct plc_osd *osds, unsigned int nosds, uint32_t pool, uint32_t pg_num,
		unsigned int size, double max_dev, struct plc_upmap *items, unsigned int *nitems,
		unsigned int cap)
{
	struct plc_bal b = { osds, nosds, size, pool, pg_num, NULL, NULL, NULL };
	unsigned int *order = NULL, start = *nitems, m;
	int rc;

	if (size == 0 || size > PLC_MAX_REPLICAS || pg_num == 0 || max_dev <= 0 || !items ||
	    *nitems > cap)
		return -EINVAL;
	plc_upmap_sort(items, *nitems);
	rc = plc_bal_init(&b, items, *nitems);
	order = malloc((nosds ? nosds : 1) * sizeof(*order));
	if (rc == 0 && !order)
		rc = -ENOMEM;
	/* Every step moves one replica closer to balance; pg_num * size bounds the loop. */
	for (uint64_t step = 0; rc == 0 && step < (uint64_t)pg_num * size; step++) {
		m = plc_bal_rank(&b, order);
		if (plc_bal_done(&b, order, m, max_dev))
			break;
		if (*nitems == cap) {
			rc = -ENOSPC;
			break;
		}
		if (!plc_bal_step(&b, order, m, max_dev, items, nitems))
			break;
	}
	plc_upmap_sort(items, *nitems);
	free(order);
	plc_bal_fini(&b);
	return rc ? rc : (int)(*nitems - start);
}
