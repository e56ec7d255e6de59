/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"
#include "placement/placement.h"
#include "placement/plc_priv.h"

uint32_t plc_name_hash(const void *name, size_t len)
{
	uint64_t h = crc32c(0, name, len);

	h |= (uint64_t)len << 32;
	return (uint32_t)plc_mix64(h);
}

uint32_t plc_hash_to_pg(uint32_t hash, uint32_t pg_num)
{
	uint32_t mask = 1;

	if (pg_num <= 1)
		return 0;
	/* mask = 2^ceil(log2(pg_num)) - 1 */
	while (mask < pg_num - 1)
		mask = (mask << 1) | 1;
	if ((hash & mask) < pg_num)
		return hash & mask;
	return hash & (mask >> 1);
}

uint32_t plc_object_pg(const void *name, size_t len, uint32_t pg_num)
{
	return plc_hash_to_pg(plc_name_hash(name, len), pg_num);
}

/*
 * straw2 draw: ln(u) / w with u uniform in (0, 1]; the largest draw wins.
 * Each OSD's draw depends only on (pool, pg, osd), so adding or removing
 * one OSD never reorders the others. glibc's log() is correctly rounded,
 * so every x86-64 client computes the same ranks.
 */
static double plc_draw(uint32_t pool, uint32_t pg, const struct plc_osd *o)
{
	uint64_t h = plc_mix64(((uint64_t)pool << 32 | pg) ^ plc_mix64((uint64_t)(uint32_t)o->id));
	double u = ((double)(h >> 11) + 1.0) / 9007199254740992.0; /* (0, 1] */

	return log(u) / ((double)o->weight / 65536.0);
}

static bool plc_eligible(const struct plc_osd *o)
{
	return o->up && o->in && o->weight > 0;
}

static int plc_find(const struct plc_osd *osds, unsigned int n, int32_t id)
{
	for (unsigned int i = 0; i < n; i++)
		if (osds[i].id == id)
			return (int)i;
	return -1;
}

static int plc_item_cmp(const void *a, const void *b)
{
	const struct plc_upmap *x = a, *y = b;

	if (x->pool != y->pool)
		return x->pool < y->pool ? -1 : 1;
	if (x->pg != y->pg)
		return x->pg < y->pg ? -1 : 1;
	return x->from < y->from ? -1 : x->from > y->from;
}

void plc_upmap_sort(struct plc_upmap *items, unsigned int n)
{
	if (n > 1)
		qsort(items, n, sizeof(*items), plc_item_cmp);
}

/* The items of one PG: a contiguous run in the sorted array. */
static const struct plc_upmap *plc_items_of(const struct plc_upmap *items, unsigned int n,
					    uint32_t pool, uint32_t pg, unsigned int *count_out)
{
	unsigned int lo = 0, hi = n, k = 0;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (items[mid].pool < pool || (items[mid].pool == pool && items[mid].pg < pg))
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo + k < n && items[lo + k].pool == pool && items[lo + k].pg == pg)
		k++;
	*count_out = k;
	return items + lo;
}

/* Distinct hosts among OSDs that may hold data (eligible or forced). */
static unsigned int plc_host_count(const struct plc_osd *osds, unsigned int n, const int32_t *force,
				   unsigned int nforce)
{
	uint32_t seen[PLC_MAX_REPLICAS];
	unsigned int hosts = 0;

	for (unsigned int i = 0; i < n && hosts < PLC_MAX_REPLICAS; i++) {
		bool ok = plc_eligible(&osds[i]), dup = false;

		for (unsigned int f = 0; f < nforce && !ok; f++)
			ok = force[f] == osds[i].id;
		if (!ok)
			continue;
		for (unsigned int j = 0; j < hosts; j++)
			dup |= seen[j] == osds[i].host;
		if (!dup)
			seen[hosts++] = osds[i].host;
	}
	return hosts;
}

/*
 * Pick one replica at a time: the best-ranked OSD not chosen yet and, while
 * there are more distinct hosts than replicas chosen, not on a chosen host.
 * force lists OSDs ranked as if eligible (the `from` of applied items).
 */
static unsigned int plc_choose(const struct plc_osd *osds, unsigned int n, uint32_t pool,
			       uint32_t pg, unsigned int size, const int32_t *force,
			       unsigned int nforce, unsigned int *idx_out)
{
	unsigned int hosts = plc_host_count(osds, n, force, nforce), chosen = 0;

	while (chosen < size) {
		bool separate = hosts > chosen;
		double bd = -INFINITY;
		unsigned int bi = n;

		for (unsigned int i = 0; i < n; i++) {
			const struct plc_osd *o = &osds[i];
			bool ok = plc_eligible(o), taken = false;
			double d;

			for (unsigned int f = 0; f < nforce && !ok; f++)
				ok = force[f] == o->id && o->weight > 0;
			if (!ok)
				continue;
			for (unsigned int k = 0; k < chosen; k++)
				taken |= idx_out[k] == i ||
					 (separate && osds[idx_out[k]].host == o->host);
			if (taken)
				continue;
			d = plc_draw(pool, pg, o);
			/* Ties (practically impossible) go to the lower id. */
			if (d > bd || (d == bd && bi < n && o->id < osds[bi].id)) {
				bd = d;
				bi = i;
			}
		}
		if (bi == n)
			break;
		idx_out[chosen++] = bi;
	}
	return chosen;
}

int plc_pg_acting(const struct plc_osd *osds, unsigned int nosds, uint32_t pool, uint32_t pg,
		  unsigned int size, const struct plc_upmap *items, unsigned int nitems,
		  int32_t *acting_out)
{
	unsigned int idx[PLC_MAX_REPLICAS], chosen, k = 0, nvalid;
	const struct plc_upmap *it = NULL;
	bool valid[PLC_MAX_REPLICAS];
	int32_t force[PLC_MAX_REPLICAS];

	if (size == 0 || size > PLC_MAX_REPLICAS || (nosds && !osds) || (nitems && !items))
		return -EINVAL;
	if (nitems)
		it = plc_items_of(items, nitems, pool, pg, &k);
	if (k > PLC_MAX_REPLICAS)
		k = PLC_MAX_REPLICAS;
	for (unsigned int j = 0; j < k; j++) {
		int t = plc_find(osds, nosds, it[j].to);

		valid[j] = t >= 0 && plc_eligible(&osds[t]) && it[j].to != it[j].from;
	}
	/*
	 * An item whose `to` would share a host with another member is dropped
	 * and the set recomputed without it; at most k rounds.
	 */
	for (unsigned int round = 0; round <= k; round++) {
		bool conflict = false;

		nvalid = 0;
		for (unsigned int j = 0; j < k; j++)
			if (valid[j])
				force[nvalid++] = it[j].from;
		chosen = plc_choose(osds, nosds, pool, pg, size, force, nvalid, idx);
		for (unsigned int c = 0; c < chosen; c++)
			acting_out[c] = osds[idx[c]].id;
		for (unsigned int j = 0; j < k && !conflict; j++) {
			if (!valid[j])
				continue;
			int t = plc_find(osds, nosds, it[j].to);

			for (unsigned int c = 0; c < chosen; c++) {
				if (acting_out[c] != it[j].from)
					continue;
				for (unsigned int d = 0; d < chosen; d++)
					if (d != c && (acting_out[d] == it[j].to ||
						       osds[idx[d]].host == osds[t].host))
						conflict = true;
				if (!conflict)
					acting_out[c] = it[j].to;
				else
					valid[j] = false;
				break;
			}
		}
		if (!conflict)
			break;
	}
	/* A forced `from` that is not itself eligible must not survive unreplaced. */
	unsigned int out = 0;

	for (unsigned int c = 0; c < chosen; c++) {
		int i = plc_find(osds, nosds, acting_out[c]);

		if (i >= 0 && plc_eligible(&osds[i]))
			acting_out[out++] = acting_out[c];
	}
	return (int)out;
}
