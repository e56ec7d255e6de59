/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The balancer on a topology tree (plc_tree_balance): hashing leaves every
 * OSD's PG count with multinomial noise; upmap items move single replicas
 * from OSDs above their weighted share to OSDs below it, never breaking
 * the rule (the new OSD is under the rule's root, eligible, and in a
 * failure domain no other replica uses). It works in passes: rank the
 * OSDs once, move what the ranking allows, rank again. Deterministic: the
 * same map in gives the same items out, so any mon can run it and a
 * simulator can replay it.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "placement/plc_tree.h"

#define PLC_BAL_TARGETS 64 /* candidates tried per replica in one pass */

struct plc_tbal {
	const struct plc_tree *t;
	const struct plc_rule *rule;
	uint32_t pg_num;
	unsigned int size;
	int32_t *sets;	      /* pg_num x size, -1 = empty */
	uint8_t *shrt;	      /* PGs whose replicas share a domain: left alone */
	int32_t *ifrom, *ito; /* pg_num x size items of this pool, -1 = none */
	unsigned int *load;   /* by OSD id */
	double *share;	      /* by OSD id; 0 = not a candidate */
	uint32_t **pgs;	      /* PGs on each OSD */
	uint32_t *npgs, *cappgs;
	double tol_ratio;
	uint8_t *flagged; /* outside the bound when the run started: aim at half of it */
};

static double plc_tbal_tol(const struct plc_tbal *b, uint32_t o)
{
	double tol = b->share[o] * b->tol_ratio;

	if (b->flagged != NULL && b->flagged[o])
		tol /= 2;
	return tol < 1.0 ? 1.0 : tol;
}

static int plc_tbal_pg_add(struct plc_tbal *b, int32_t osd, uint32_t pg)
{
	if (b->npgs[osd] == b->cappgs[osd]) {
		uint32_t cap = b->cappgs[osd] ? 2 * b->cappgs[osd] : 16;
		uint32_t *p = realloc(b->pgs[osd], cap * sizeof(*p));

		if (p == NULL)
			return -ENOMEM;
		b->pgs[osd] = p;
		b->cappgs[osd] = cap;
	}
	b->pgs[osd][b->npgs[osd]++] = pg;
	return 0;
}

static void plc_tbal_pg_del(struct plc_tbal *b, int32_t osd, uint32_t pg)
{
	for (uint32_t i = 0; i < b->npgs[osd]; i++) {
		if (b->pgs[osd][i] == pg) {
			b->pgs[osd][i] = b->pgs[osd][--b->npgs[osd]];
			return;
		}
	}
}

/* Split the items: this pool's go to per-PG slots (kept when they still apply). */
static int plc_tbal_init(struct plc_tbal *b, struct plc_upmap *items, unsigned int *nitems,
			 unsigned int *dropped)
{
	const struct plc_tree *t = b->t;
	size_t slots = (size_t)b->pg_num * b->size;
	unsigned int keep = 0, j = 0;
	double wsum = 0, total = 0;

	b->sets = malloc(slots * sizeof(*b->sets));
	b->ifrom = malloc(slots * sizeof(*b->ifrom));
	b->ito = malloc(slots * sizeof(*b->ito));
	b->shrt = calloc(b->pg_num, 1);
	b->load = calloc(t->max_osd + 1, sizeof(*b->load));
	b->share = calloc(t->max_osd + 1, sizeof(*b->share));
	b->pgs = calloc(t->max_osd + 1, sizeof(*b->pgs));
	b->npgs = calloc(t->max_osd + 1, sizeof(*b->npgs));
	b->cappgs = calloc(t->max_osd + 1, sizeof(*b->cappgs));
	if (!b->sets || !b->ifrom || !b->ito || !b->shrt || !b->load || !b->share || !b->pgs ||
	    !b->npgs || !b->cappgs)
		return -ENOMEM;
	memset(b->ifrom, 0xff, slots * sizeof(*b->ifrom));
	memset(b->ito, 0xff, slots * sizeof(*b->ito));
	*dropped = 0;
	for (uint32_t pg = 0; pg < b->pg_num; pg++) {
		int32_t *set = b->sets + (size_t)pg * b->size;
		unsigned int n, k = 0;
		bool s = false;

		n = plc_tree_choose(t, b->rule, pg, set, &s);
		for (unsigned int c = n; c < b->size; c++)
			set[c] = -1;
		b->shrt[pg] = s;
		/* this pool's items of pg: a run in the sorted array from j on */
		while (j < *nitems && (items[j].pool < b->rule->pool ||
				       (items[j].pool == b->rule->pool && items[j].pg < pg)))
			items[keep++] = items[j++];
		{
			unsigned int first = j, cnt;
			bool on[PLC_MAX_REPLICAS * 2] = {false};

			while (j < *nitems && items[j].pool == b->rule->pool && items[j].pg == pg)
				j++;
			cnt = j - first;
			if (cnt > 0 && !s)
				plc_tree_apply(t, b->rule, set, n, s, items + first,
					       cnt < b->size ? cnt : b->size, on);
			for (unsigned int q = 0; q < cnt; q++) {
				if (q < b->size && on[q]) {
					b->ifrom[(size_t)pg * b->size + k] = items[first + q].from;
					b->ito[(size_t)pg * b->size + k++] = items[first + q].to;
				} else {
					(*dropped)++;
				}
			}
		}
		for (unsigned int c = 0; c < n; c++) {
			b->load[set[c]]++;
			if (plc_tbal_pg_add(b, set[c], pg) != 0)
				return -ENOMEM;
		}
		total += n;
	}
	while (j < *nitems)
		items[keep++] = items[j++];
	*nitems = keep; /* the other pools' items; this pool's are re-emitted at the end */
	/* shares: eligible OSDs under the root, by weight */
	for (uint32_t i = 0; i < t->max_osd; i++) {
		const struct plc_tree_osd *o = &t->osds[i];
		const struct plc_node *r = &t->nodes[b->rule->root];

		if (o->eligible && r->type < PLC_TREE_TYPES && o->anc[r->type] == b->rule->root)
			b->share[i] = -1; /* mark; the weight comes below */
	}
	for (uint32_t n = 0; n < t->nnodes; n++) {
		const struct plc_node *nd = &t->nodes[n];

		for (uint32_t c = 0; c < nd->nchild; c++) {
			const struct plc_child *ch = &t->child[nd->first + c];
			int32_t id = -1 - ch->ref;

			if (ch->ref < 0 && b->share[id] < 0 && ch->inv_weight > 0) {
				/* the reweight override lowers the target as it lowers the draws */
				double w = (1.0 / ch->inv_weight) *
					   (double)(0x10000u - t->osds[id].reject) / 0x10000u;

				b->share[id] = -w;
				wsum += w;
			}
		}
	}
	for (uint32_t i = 0; i < t->max_osd; i++)
		b->share[i] = b->share[i] < 0 && wsum > 0 ? total * -b->share[i] / wsum : 0;
	return 0;
}

static void plc_tbal_fini(struct plc_tbal *b)
{
	if (b->pgs != NULL)
		for (uint32_t i = 0; i < b->t->max_osd; i++)
			free(b->pgs[i]);
	free(b->pgs);
	free(b->npgs);
	free(b->cappgs);
	free(b->sets);
	free(b->ifrom);
	free(b->ito);
	free(b->shrt);
	free(b->load);
	free(b->share);
	free(b->flagged);
}

static double plc_tbal_dev(const struct plc_tbal *b)
{
	double worst = 0;

	for (uint32_t i = 0; i < b->t->max_osd; i++)
		if (b->share[i] > 0 && fabs(b->load[i] / b->share[i] - 1) > worst)
			worst = fabs(b->load[i] / b->share[i] - 1);
	return worst;
}

/* Record that pg's replica on x now lives on y (an item added, changed or cancelled). */
static int plc_tbal_move(struct plc_tbal *b, uint32_t pg, int32_t x, int32_t y)
{
	int32_t *set = b->sets + (size_t)pg * b->size;
	int32_t *from = b->ifrom + (size_t)pg * b->size, *to = b->ito + (size_t)pg * b->size;
	unsigned int k;

	for (k = 0; k < b->size && to[k] != x; k++)
		;
	if (k < b->size) { /* x was itself an item's target: retarget or cancel */
		if (from[k] == y) {
			from[k] = to[k] = -1;
		} else {
			to[k] = y;
		}
	} else {
		for (k = 0; k < b->size && from[k] >= 0; k++)
			;
		if (k == b->size)
			return -ENOSPC; /* cannot happen: at most size replicas move */
		from[k] = x;
		to[k] = y;
	}
	for (unsigned int c = 0; c < b->size; c++)
		if (set[c] == x)
			set[c] = y;
	b->load[x]--;
	b->load[y]++;
	plc_tbal_pg_del(b, x, pg);
	return plc_tbal_pg_add(b, y, pg);
}

static const struct plc_tbal *plc_tbal_sort_ctx;

static int plc_tbal_cmp(const void *a, const void *c)
{
	const struct plc_tbal *b = plc_tbal_sort_ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)c;
	double rx = b->load[x] / b->share[x], ry = b->load[y] / b->share[y];

	if (rx != ry)
		return rx < ry ? -1 : 1;
	return x < y ? -1 : x > y;
}

/*
 * One pass: OSDs ranked by load / share once; each OSD above its share
 * (most loaded first) sends replicas to the least loaded OSDs that can
 * take them, while that narrows the spread. Returns moves made.
 */
static int plc_tbal_pass(struct plc_tbal *b, uint32_t *order, unsigned int budget)
{
	uint32_t m = 0, moves = 0;

	for (uint32_t i = 0; i < b->t->max_osd; i++)
		if (b->share[i] > 0)
			order[m++] = i;
	plc_tbal_sort_ctx = b;
	qsort(order, m, sizeof(*order), plc_tbal_cmp);
	for (uint32_t hi = m; hi-- > 0 && moves < budget;) {
		int32_t x = (int32_t)order[hi];
		uint32_t lo0 = 0;

		if (b->load[x] <= b->share[x])
			break;
		for (uint32_t i = 0; i < b->npgs[x] && moves < budget;) {
			uint32_t pg = b->pgs[x][i];
			int32_t *set = b->sets + (size_t)pg * b->size;
			bool moved = false;
			bool over = b->load[x] > b->share[x] + plc_tbal_tol(b, (uint32_t)x);

			/* first OSD that may still take one (ordered by load when ranked) */
			while (lo0 < hi && b->load[order[lo0]] + 1 >
					       b->share[order[lo0]] + plc_tbal_tol(b, order[lo0]))
				lo0++;
			if (b->shrt[pg]) {
				i++;
				continue;
			}
			for (uint32_t lo = lo0, tried = 0; lo < hi && tried < PLC_BAL_TARGETS;
			     lo++) {
				int32_t y = (int32_t)order[lo];
				bool under =
				    b->load[y] + plc_tbal_tol(b, (uint32_t)y) < b->share[y];

				if (b->load[y] >= b->share[y])
					break; /* ranked: the rest are at or above share */
				/* a move must fix one side (ranked: the rest are less under) */
				if (!over && !under)
					break;
				tried++;
				/* ... without pushing the other past its bound */
				if (b->load[y] + 1 > b->share[y] + plc_tbal_tol(b, (uint32_t)y) ||
				    b->load[x] - 1 + plc_tbal_tol(b, (uint32_t)x) < b->share[x])
					continue;
				if (!plc_tree_can_hold(b->t, b->rule, set, b->size, x, y))
					continue;
				if (plc_tbal_move(b, pg, x, y) != 0)
					return -ENOMEM;
				moves++;
				moved = true;
				break;
			}
			if (!moved)
				i++; /* a move swapped another PG into slot i */
			if (b->load[x] <= b->share[x])
				break;
		}
	}
	return (int)moves;
}

static int plc_tbal_emit(const struct plc_tbal *b, struct plc_upmap *items, unsigned int *nitems,
			 unsigned int cap)
{
	for (uint32_t pg = 0; pg < b->pg_num; pg++) {
		for (unsigned int k = 0; k < b->size; k++) {
			size_t s = (size_t)pg * b->size + k;

			if (b->ifrom[s] < 0)
				continue;
			if (*nitems == cap)
				return -ENOSPC;
			items[(*nitems)++] =
			    (struct plc_upmap){b->rule->pool, pg, b->ifrom[s], b->ito[s]};
		}
	}
	plc_upmap_sort(items, *nitems);
	return 0;
}

int plc_tree_balance(const struct plc_tree *t, const struct plc_rule *rule, uint32_t pg_num,
		     double max_dev, unsigned int max_moves, struct plc_upmap *items,
		     unsigned int *nitems, unsigned int cap, struct plc_bal_stats *stats_out)
{
	struct plc_tbal b = {.t = t, .rule = rule, .pg_num = pg_num, .size = rule->size};
	unsigned int dropped = 0, moved = 0;
	uint32_t *order = NULL;
	int rc;

	if (rule->size == 0 || rule->size > PLC_MAX_REPLICAS || pg_num == 0 || max_dev <= 0 ||
	    *nitems > cap || rule->root < 0 || (uint32_t)rule->root >= t->nnodes)
		return -EINVAL;
	b.tol_ratio = max_dev;
	plc_upmap_sort(items, *nitems);
	rc = plc_tbal_init(&b, items, nitems, &dropped);
	order = malloc((t->max_osd + 1) * sizeof(*order));
	if (rc == 0 && order == NULL)
		rc = -ENOMEM;
	if (rc == 0 && stats_out) {
		stats_out->max_dev_before = plc_tbal_dev(&b);
		stats_out->dropped = dropped;
	}
	/*
	 * Hysteresis: OSDs outside max_dev are brought within half of it; the
	 * others only take or give while they stay within max_dev. So a small
	 * change (an OSD added) moves little besides what the change needs, and
	 * does not start another round at once.
	 */
	if (rc == 0) {
		bool outside = false;

		b.flagged = calloc(t->max_osd + 1, 1);
		if (b.flagged == NULL)
			rc = -ENOMEM;
		for (uint32_t i = 0; rc == 0 && i < t->max_osd; i++) {
			b.flagged[i] =
			    b.share[i] > 0 && fabs(b.load[i] - b.share[i]) > plc_tbal_tol(&b, i);
			outside |= b.flagged[i];
		}
		if (!outside)
			max_moves = 0;
	}
	/* every pass moves at least one replica or ends; max_moves bounds the work */
	while (rc == 0 && moved < max_moves) {
		int n = plc_tbal_pass(&b, order, max_moves - moved);

		if (n < 0)
			rc = n;
		if (n <= 0)
			break;
		moved += (unsigned int)n;
	}
	if (rc == 0)
		rc = plc_tbal_emit(&b, items, nitems, cap);
	if (rc == 0 && stats_out)
		stats_out->max_dev_after = plc_tbal_dev(&b);
	free(order);
	plc_tbal_fini(&b);
	return rc ? rc : (int)moved;
}

int plc_tree_pin(const struct plc_tree *t, const struct plc_rule *rule, uint32_t pg_num,
		 const int32_t *old_sets, const uint8_t *fresh, struct plc_upmap *items,
		 unsigned int *nitems, unsigned int cap, unsigned int *pinned_out)
{
	struct plc_tbal b = {.t = t, .rule = rule, .pg_num = pg_num, .size = rule->size};
	unsigned int dropped = 0, pinned = 0;
	int rc;

	if (rule->size == 0 || rule->size > PLC_MAX_REPLICAS || pg_num == 0 || *nitems > cap)
		return -EINVAL;
	plc_upmap_sort(items, *nitems);
	rc = plc_tbal_init(&b, items, nitems, &dropped);
	for (uint32_t pg = 0; rc == 0 && pg < pg_num; pg++) {
		int32_t *set = b.sets + (size_t)pg * b.size;
		const int32_t *old = old_sets + (size_t)pg * b.size;

		if (b.shrt[pg])
			continue;
		for (unsigned int c = 0; c < b.size && rc == 0; c++) {
			int32_t x = set[c];
			bool kept = false;

			for (unsigned int k = 0; k < b.size; k++)
				kept |= old[k] == x;
			if (x < 0 || kept)
				continue;
			/*
			 * x replaced an old member that is still eligible: put the replica
			 * back, unless x is fresh and the old member is above its share
			 * (then the move is one the balancer would make anyway).
			 */
			for (unsigned int k = 0; k < b.size; k++) {
				int32_t y = old[k];
				bool there = false;

				for (unsigned int j = 0; j < b.size; j++)
					there |= set[j] == y;
				if (y < 0 || there ||
				    !plc_tree_can_hold(t, rule, set, b.size, x, y))
					continue;
				if (fresh[x] && b.load[y] >= b.share[y])
					break;
				rc = plc_tbal_move(&b, pg, x, y);
				pinned++;
				break;
			}
		}
	}
	if (rc == 0)
		rc = plc_tbal_emit(&b, items, nitems, cap);
	if (rc == 0 && pinned_out)
		*pinned_out = pinned;
	plc_tbal_fini(&b);
	return rc;
}

int plc_tree_loads(const struct plc_tree *t, const struct plc_rule *rule, uint32_t pg_num,
		   const struct plc_upmap *items, unsigned int nitems, unsigned int *load_out,
		   double *share_out)
{
	struct plc_tbal b = {.t = t, .rule = rule, .pg_num = pg_num, .size = rule->size};
	struct plc_upmap *copy = NULL;
	unsigned int n = nitems, dropped;
	int rc;

	if (rule->size == 0 || rule->size > PLC_MAX_REPLICAS || pg_num == 0)
		return -EINVAL;
	if (nitems > 0) {
		copy = malloc(nitems * sizeof(*copy));
		if (copy == NULL)
			return -ENOMEM;
		memcpy(copy, items, nitems * sizeof(*copy));
	}
	rc = plc_tbal_init(&b, copy, &n, &dropped);
	if (rc == 0) {
		memcpy(load_out, b.load, t->max_osd * sizeof(*load_out));
		if (share_out)
			memcpy(share_out, b.share, t->max_osd * sizeof(*share_out));
	}
	free(copy);
	plc_tbal_fini(&b);
	return rc;
}
