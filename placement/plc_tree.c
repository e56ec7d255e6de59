/* SPDX-License-Identifier: Apache-2.0 */
/*
 * straw2 descent over the topology tree (see plc_tree.h). Everything here
 * is a pure function of (tree, rule, pg): clients, OSDs, mons and the
 * simulator compute the same sets from the same map.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "placement/plc_priv.h"
#include "placement/plc_tree.h"

/* The draw's seed for (pool, pg) and attempt rr: independent of the bucket. */
static uint64_t plc_seed(uint32_t pool, uint32_t pg, uint32_t rr)
{
	return plc_mix64(((uint64_t)pool << 32 | pg) ^ plc_mix64(0x51ed270bull + rr));
}

/*
 * straw2 over a bucket's children: ln(u) / w with u uniform in (0, 1], the
 * largest wins; ties (practically impossible) go to the lower key. glibc's
 * log() is correctly rounded, so every x86-64 reader draws alike. Returns
 * the child, or NULL when no child has weight.
 */
static const struct plc_child *plc_straw2(const struct plc_tree *t, const struct plc_node *b,
					  uint64_t seed)
{
	const struct plc_child *best = NULL;
	double bd = -INFINITY;

	for (uint32_t i = 0; i < b->nchild; i++) {
		const struct plc_child *c = &t->child[b->first + i];
		uint64_t h;
		double d;

		if (c->inv_weight <= 0)
			continue;
		h = plc_mix64(seed ^ c->key);
		d = log(((double)(h >> 11) + 1.0) * 0x1p-53) * c->inv_weight;
		if (d > bd || (d == bd && best != NULL && c->key < best->key)) {
			bd = d;
			best = c;
		}
	}
	return best;
}

int32_t plc_tree_domain_of(const struct plc_tree *t, const struct plc_rule *rule, int32_t osd)
{
	int32_t d = -1;

	if (osd >= 0 && (uint32_t)osd < t->max_osd && rule->domain > 1 &&
	    rule->domain < PLC_TREE_TYPES)
		d = t->osds[osd].anc[rule->domain];
	return d >= 0 ? d : -2 - osd; /* domain osd, or a tree that skips the level */
}

static bool plc_under_root(const struct plc_tree *t, const struct plc_rule *rule, int32_t osd)
{
	const struct plc_node *r;

	if (osd < 0 || (uint32_t)osd >= t->max_osd || rule->root < 0 ||
	    (uint32_t)rule->root >= t->nnodes)
		return false;
	r = &t->nodes[rule->root];
	return r->type < PLC_TREE_TYPES && t->osds[osd].anc[r->type] == rule->root;
}

/*
 * The reweight override (Ceph's `osd reweight`): an OSD turns away a fixed
 * share of PGs, decided by (pool, pg, osd) alone, so each retry of that PG
 * skips it alike and lowering the share takes back exactly the PGs it
 * turned away. A turned-away draw is retried like a down OSD's.
 */
static bool plc_rejects(const struct plc_tree *t, uint32_t pool, uint32_t pg, int32_t osd)
{
	uint32_t r = t->osds[osd].reject;

	if (r == 0)
		return false;
	if (r >= 0x10000u)
		return true;
	return (uint32_t)(plc_mix64(((uint64_t)pool << 32 | pg) ^
				    plc_mix64(0x2e5e1647ull + (uint64_t)(uint32_t)osd)) &
			  0xffffu) < r;
}

/* One descent from the root with attempt rr: the OSD reached, or -1. */
static int32_t plc_descend(const struct plc_tree *t, const struct plc_rule *rule, uint32_t pg,
			   uint32_t rr)
{
	uint64_t seed = plc_seed(rule->pool, pg, rr);
	const struct plc_node *b = &t->nodes[rule->root];

	for (unsigned int depth = 0; depth < PLC_TREE_TYPES; depth++) {
		const struct plc_child *c = plc_straw2(t, b, seed);

		if (c == NULL)
			return -1;
		if (c->ref < 0)
			return -1 - c->ref;
		b = &t->nodes[c->ref];
	}
	return -1; /* deeper than the types allow: not a tree the builder makes */
}

/*
 * Replicas are placed try by try, not replica by replica: every replica's
 * first descent is placed first (in replica order), then the second
 * descents of those still missing, and so on. A replica that must retry
 * (its OSD failed, its domain was taken) so never displaces one that
 * landed at its first try: a failure moves only the failed replica, even
 * with few failure domains. For the same reason the domain of a replica's
 * first descent stays reserved to it when that OSD is down or out: another
 * replica that had to avoid the domain keeps avoiding it. Pass 0 wants
 * distinct failure domains; pass 1 (too few domains hold an eligible OSD)
 * only distinct OSDs.
 */
unsigned int plc_tree_choose(const struct plc_tree *t, const struct plc_rule *rule, uint32_t pg,
			     int32_t *acting_out, bool *short_out)
{
	int32_t osd_at[PLC_MAX_REPLICAS], dom_at[PLC_MAX_REPLICAS], resv[PLC_MAX_REPLICAS];
	unsigned int n = 0, size = rule->size, placed = 0;
	bool shrt = false, dead = false;

	if (size > PLC_MAX_REPLICAS)
		size = PLC_MAX_REPLICAS;
	if (short_out)
		*short_out = false;
	if (rule->root < 0 || (uint32_t)rule->root >= t->nnodes)
		return 0;
	for (unsigned int r = 0; r < size; r++)
		osd_at[r] = resv[r] = -1;
	/* pass 1 only when too few domains hold an in OSD (not merely an up one) */
	for (unsigned int pass = 0;
	     pass < (t->ndom_in != NULL &&
			     t->ndom_in[(uint32_t)rule->root * PLC_TREE_TYPES +
					(rule->domain < PLC_TREE_TYPES ? rule->domain : 1)] >= size
			 ? 1u
			 : 2u) &&
	     placed < size && !dead;
	     pass++) {
		shrt |= pass == 1;
		for (unsigned int try = 0; try < PLC_TREE_TRIES && placed < size && !dead; try++) {
			for (unsigned int r = 0; r < size && !dead; r++) {
				uint32_t rr = r + (try + pass * PLC_TREE_TRIES) * size;
				int32_t osd, d;
				bool clash = false;

				if (osd_at[r] >= 0)
					continue;
				osd = plc_descend(t, rule, pg, rr);
				if (osd < 0) {
					dead = true; /* the root has no weight */
					break;
				}
				if ((uint32_t)osd >= t->max_osd)
					continue;
				d = plc_tree_domain_of(t, rule, osd);
				if (!t->osds[osd].eligible || plc_rejects(t, rule->pool, pg, osd)) {
					if (try == 0 && pass == 0)
						resv[r] = d;
					continue;
				}
				for (unsigned int k = 0; k < size && !clash; k++)
					clash =
					    (osd_at[k] >= 0 &&
					     (osd_at[k] == osd || (pass == 0 && dom_at[k] == d))) ||
					    (pass == 0 && k != r && resv[k] == d && resv[k] != -1);
				if (clash)
					continue;
				osd_at[r] = osd;
				dom_at[r] = d;
				placed++;
			}
		}
	}
	for (unsigned int r = 0; r < size; r++)
		if (osd_at[r] >= 0)
			acting_out[n++] = osd_at[r];
	if (short_out)
		*short_out = shrt && placed > 0;
	return n;
}

bool plc_tree_can_hold(const struct plc_tree *t, const struct plc_rule *rule, const int32_t *set,
		       unsigned int n, int32_t from, int32_t to)
{
	int32_t d;

	if (to < 0 || (uint32_t)to >= t->max_osd || !t->osds[to].eligible ||
	    !plc_under_root(t, rule, to))
		return false;
	d = plc_tree_domain_of(t, rule, to);
	for (unsigned int k = 0; k < n; k++) {
		if (set[k] == from)
			continue;
		if (set[k] == to || plc_tree_domain_of(t, rule, set[k]) == d)
			return false;
	}
	return true;
}

/* The items of one PG: a contiguous run in the sorted array. */
static const struct plc_upmap *plc_tree_items(const struct plc_upmap *items, unsigned int n,
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

/* A pair of members breaking the rule (same OSD, or same domain unless shrt): true if found. */
static bool plc_tree_conflict(const struct plc_tree *t, const struct plc_rule *rule,
			      const int32_t *set, unsigned int n, bool shrt, unsigned int *a,
			      unsigned int *b)
{
	for (unsigned int i = 0; i < n; i++) {
		for (unsigned int j = i + 1; j < n; j++) {
			if (set[i] == set[j] ||
			    (!shrt && plc_tree_domain_of(t, rule, set[i]) ==
					  plc_tree_domain_of(t, rule, set[j]))) {
				*a = i;
				*b = j;
				return true;
			}
		}
	}
	return false;
}

unsigned int plc_tree_apply(const struct plc_tree *t, const struct plc_rule *rule, int32_t *set,
			    unsigned int n, bool shrt, const struct plc_upmap *it, unsigned int k,
			    bool *applied_out)
{
	int32_t raw[PLC_MAX_REPLICAS];
	bool on[PLC_MAX_REPLICAS * 2];
	unsigned int count = 0, a, b;

	if (k > PLC_MAX_REPLICAS * 2)
		k = PLC_MAX_REPLICAS * 2;
	memcpy(raw, set, n * sizeof(*raw));
	/* an item applies when its from is in the raw set and its to may hold data */
	for (unsigned int j = 0; j < k; j++) {
		on[j] = false;
		for (unsigned int c = 0; c < n && !on[j]; c++)
			on[j] = raw[c] == it[j].from && it[j].to >= 0 &&
				(uint32_t)it[j].to < t->max_osd && t->osds[it[j].to].eligible &&
				plc_under_root(t, rule, it[j].to);
	}
	/*
	 * All at once (the order the items were made in is not known here);
	 * while the result breaks the rule, drop an item that made one of the
	 * clashing members. Each round drops one, so k + 1 rounds end it.
	 */
	for (unsigned int round = 0; round <= k; round++) {
		int drop = -1;

		memcpy(set, raw, n * sizeof(*set));
		for (unsigned int j = 0; j < k; j++)
			for (unsigned int c = 0; on[j] && c < n; c++)
				if (raw[c] == it[j].from)
					set[c] = it[j].to;
		if (!plc_tree_conflict(t, rule, set, n, shrt, &a, &b))
			break;
		for (unsigned int j = k; j-- > 0 && drop < 0;)
			if (on[j] && (raw[b] == it[j].from || raw[a] == it[j].from))
				drop = (int)j;
		if (drop < 0) { /* the raw set itself clashes: cannot happen, keep it */
			memcpy(set, raw, n * sizeof(*set));
			memset(on, 0, sizeof(on));
			break;
		}
		on[drop] = false;
	}
	for (unsigned int j = 0; j < k; j++) {
		count += on[j];
		if (applied_out)
			applied_out[j] = on[j];
	}
	return count;
}

int plc_tree_acting(const struct plc_tree *t, const struct plc_rule *rule, uint32_t pg,
		    const struct plc_upmap *items, unsigned int nitems, int32_t *acting_out,
		    bool *short_out)
{
	const struct plc_upmap *it;
	unsigned int n, k = 0;
	bool shrt = false;

	if (rule->size == 0 || rule->size > PLC_MAX_REPLICAS || (nitems && !items))
		return -EINVAL;
	n = plc_tree_choose(t, rule, pg, acting_out, &shrt);
	if (short_out)
		*short_out = shrt;
	if (nitems == 0)
		return (int)n;
	it = plc_tree_items(items, nitems, rule->pool, pg, &k);
	if (k > 0)
		plc_tree_apply(t, rule, acting_out, n, shrt, it, k, NULL);
	return (int)n;
}

unsigned int plc_tree_domains(const struct plc_tree *t, const struct plc_rule *rule)
{
	unsigned int count = 0;
	uint8_t *seen;

	if (rule->root < 0 || (uint32_t)rule->root >= t->nnodes)
		return 0;
	if (rule->domain <= 1 || rule->domain >= PLC_TREE_TYPES) {
		for (uint32_t i = 0; i < t->max_osd; i++)
			count += t->osds[i].eligible && plc_under_root(t, rule, (int32_t)i);
		return count;
	}
	seen = calloc(t->nnodes + 1, 1);
	if (seen == NULL)
		return 0;
	for (uint32_t i = 0; i < t->max_osd; i++) {
		int32_t d;

		if (!t->osds[i].eligible || !plc_under_root(t, rule, (int32_t)i))
			continue;
		d = t->osds[i].anc[rule->domain];
		if (d < 0) { /* the tree skips the level here: the OSD is its own domain */
			count++;
			continue;
		}
		count += !seen[d];
		seen[d] = 1;
	}
	free(seen);
	return count;
}

void plc_tree_free(struct plc_tree *t)
{
	free(t->ndom_in);
	free(t->nodes);
	free(t->child);
	free(t->osds);
	memset(t, 0, sizeof(*t));
}
