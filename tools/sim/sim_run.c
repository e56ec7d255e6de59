/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The simulator's reports: placement cost, PG spread before and after the
 * balancer, map and increment sizes, data movement and recovery
 * parallelism. Every acting set comes from plc_map_acting on a map built
 * by increments, as in the daemons.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "placement/plc_map.h"
#include "tools/sim/sim.h"

static const struct mon_pool *sim_pool(const struct mon_map *map)
{
	return mon_map_pool(map, 1);
}

/* All acting sets of the pool into sets (pg_num x size); -1 pads. */
static int sim_sets(const struct sim *s, const struct mon_map *map, int32_t *sets,
		    unsigned int *short_out)
{
	const struct mon_pool *pool = sim_pool(map);
	unsigned int shrt = 0;

	for (uint32_t pg = 0; pg < s->a.pg_num; pg++) {
		int32_t acting[PLC_MAX_REPLICAS], *set = sets + (size_t)pg * s->a.size;
		bool sh = false;
		int n = plc_map_acting_ex(map, pool, pg, acting, &sh);

		if (n < 0)
			return n;
		shrt += sh;
		for (unsigned int c = 0; c < s->a.size; c++)
			set[c] = c < (unsigned int)n ? acting[c] : -1;
	}
	if (short_out)
		*short_out = shrt;
	return 0;
}

int sim_run_placement(struct sim *s)
{
	size_t slots = (size_t)s->a.pg_num * s->a.size;
	int32_t *other = malloc(slots * sizeof(*other));
	struct mon_map fresh, client, osd;
	struct proto_err err;
	unsigned int shrt = 0;
	double t0, t_tree, t_all;
	void *buf = NULL;
	size_t len;
	int rc = -ENOMEM;

	mon_map_init(&fresh);
	mon_map_init(&client);
	mon_map_init(&osd);
	s->sets0 = malloc(slots * sizeof(*s->sets0));
	if (other == NULL || s->sets0 == NULL || mon_map_copy(&fresh, &s->map) != 0)
		goto out;
	/* what an OSD does with a new epoch: build the tree, then place every PG */
	t0 = sim_now();
	if (plc_map_tree(&fresh) == NULL)
		goto out;
	t_tree = sim_now() - t0;
	t0 = sim_now();
	rc = sim_sets(s, &fresh, s->sets0, &shrt);
	t_all = sim_now() - t0;
	if (rc != 0)
		goto out;
	sim_metric(s, "tree_build_ms", t_tree * 1e3, "ms");
	sim_metric(s, "place_per_pg_us", t_all / s->a.pg_num * 1e6, "us");
	sim_metric(s, "place_all_pgs_s", t_all, "s");
	sim_metric(s, "osd_recompute_s", t_tree + t_all, "s");
	sim_metric(s, "pgs_sharing_a_domain", shrt, "pgs");
	sim_expect(s, shrt == 0, "%u PGs have replicas sharing a failure domain", shrt);
	/* a client and an OSD decode the same epoch and must place every PG alike */
	rc = mon_map_encode(&s->map, &buf, &len);
	if (rc == 0)
		rc = mon_map_decode(buf, len, &err, &client);
	if (rc == 0)
		rc = mon_map_decode(buf, len, &err, &osd);
	if (rc == 0)
		rc = sim_sets(s, &client, other, NULL);
	if (rc != 0)
		goto out;
	sim_expect(s, !memcmp(other, s->sets0, slots * sizeof(*other)),
		   "a decoded map (client) places PGs differently from the original");
	rc = sim_sets(s, &osd, other, NULL);
	if (rc == 0)
		sim_expect(s, !memcmp(other, s->sets0, slots * sizeof(*other)),
			   "a decoded map (osd) places PGs differently from the original");
out:
	free(buf);
	free(other);
	mon_map_free(&fresh);
	mon_map_free(&client);
	mon_map_free(&osd);
	return rc;
}

/* Spread of loads vs shares: worst |load/share - 1|, and how many are outside max_dev. */
static double sim_spread(const struct sim *s, const unsigned int *load, const double *share,
			 unsigned int *outside, double *stddev, unsigned int *lo, unsigned int *hi)
{
	double worst = 0, sq = 0;
	unsigned int n = 0;

	*outside = 0;
	*lo = UINT32_MAX;
	*hi = 0;
	for (uint32_t i = 0; i < s->nosd; i++) {
		double d, tol;

		if (share[i] <= 0)
			continue;
		d = load[i] / share[i] - 1;
		tol = share[i] * s->a.max_dev < 1 ? 1 : share[i] * s->a.max_dev;
		*outside += fabs(load[i] - share[i]) > tol;
		worst = fabs(d) > worst ? fabs(d) : worst;
		sq += d * d;
		n++;
		*lo = load[i] < *lo ? load[i] : *lo;
		*hi = load[i] > *hi ? load[i] : *hi;
	}
	*stddev = n ? sqrt(sq / n) : 0;
	return worst;
}

static int sim_loads_of(const struct sim *s, const struct mon_map *map, unsigned int *load)
{
	int32_t *sets = malloc((size_t)s->a.pg_num * s->a.size * sizeof(*sets));
	int rc = sets ? sim_sets(s, map, sets, NULL) : -ENOMEM;

	memset(load, 0, s->nosd * sizeof(*load));
	for (size_t i = 0; rc == 0 && i < (size_t)s->a.pg_num * s->a.size; i++)
		if (sets[i] >= 0)
			load[sets[i]]++;
	free(sets);
	return rc;
}

int sim_run_balance(struct sim *s)
{
	const struct plc_tree *t = plc_map_tree(&s->map);
	unsigned int cap = s->a.pg_num * s->a.size, n = 0, out0, out1, lo0, hi0, lo1, hi1;
	unsigned int *before = calloc(s->nosd + 1, sizeof(*before));
	unsigned int *after = calloc(s->nosd + 1, sizeof(*after));
	double *share = calloc(s->nosd + 1, sizeof(*share)), sd0, sd1, w0, w1, t0, t_bal;
	struct plc_upmap *items = malloc(cap * sizeof(*items));
	struct plc_bal_stats st;
	struct plc_rule rule;
	struct mon_inc inc;
	struct mon_op op = {.kind = MON_OP_UPMAP_SET};
	FILE *csv;
	int rc = -ENOMEM, moves;

	mon_inc_init(&inc);
	mon_map_init(&s->balanced);
	if (t == NULL || !before || !after || !share || !items)
		goto out;
	rc = plc_map_rule(t, &s->map, sim_pool(&s->map), &rule);
	if (rc == 0)
		rc = plc_tree_loads(t, &rule, s->a.pg_num, NULL, 0, before, share);
	if (rc != 0)
		goto out;
	t0 = sim_now();
	moves = plc_tree_balance(t, &rule, s->a.pg_num, s->a.max_dev, cap, items, &n, cap, &st);
	t_bal = sim_now() - t0;
	if (moves < 0) {
		rc = moves;
		goto out;
	}
	/* the items go into the map as the mon leader proposes them; placement reads them back */
	rc = mon_map_copy(&s->balanced, &s->map);
	for (unsigned int i = 0; i < n && rc == 0; i++) {
		op.upmap =
		    (struct mon_upmap){items[i].pool, items[i].pg, items[i].from, items[i].to};
		rc = sim_op_add(&inc, &s->balanced, &op, "balancer");
	}
	if (rc == 0)
		rc = sim_map_commit(&s->balanced, &inc, "balancer");
	if (rc == 0)
		rc = sim_loads_of(s, &s->balanced, after);
	s->sets_bal = malloc((size_t)cap * sizeof(*s->sets_bal));
	if (rc == 0 && s->sets_bal == NULL)
		rc = -ENOMEM;
	if (rc == 0)
		rc = sim_sets(s, &s->balanced, s->sets_bal, NULL);
	if (rc != 0)
		goto out;
	w0 = sim_spread(s, before, share, &out0, &sd0, &lo0, &hi0);
	w1 = sim_spread(s, after, share, &out1, &sd1, &lo1, &hi1);
	sim_metric(s, "pg_share_per_osd", (double)cap / s->nosd, "replicas");
	sim_metric(s, "spread_before_max_dev_pct", w0 * 100, "%");
	sim_metric(s, "spread_before_stddev_pct", sd0 * 100, "%");
	sim_metric(s, "spread_before_min", lo0, "replicas");
	sim_metric(s, "spread_before_max", hi0, "replicas");
	sim_metric(s, "spread_before_osds_outside", out0, "osds");
	sim_metric(s, "balancer_moves", moves, "replicas");
	sim_metric(s, "balancer_moved_pct", 100.0 * moves / cap, "%");
	sim_metric(s, "balancer_rounds_at_5pct", ceil(moves / (0.05 * cap)), "rounds");
	sim_metric(s, "balancer_time_s", t_bal, "s");
	sim_metric(s, "upmap_items", n, "items");
	sim_metric(s, "spread_after_max_dev_pct", w1 * 100, "%");
	sim_metric(s, "spread_after_stddev_pct", sd1 * 100, "%");
	sim_metric(s, "spread_after_min", lo1, "replicas");
	sim_metric(s, "spread_after_max", hi1, "replicas");
	sim_metric(s, "spread_after_osds_outside", out1, "osds");
	sim_expect(s, out1 == 0,
		   "%u OSDs outside +-%.0f%% (or 1 PG) of their share after the "
		   "balancer",
		   out1, s->a.max_dev * 100);
	csv = sim_csv(s, "spread.csv", "osd,share,before,after");
	for (uint32_t i = 0; csv != NULL && i < s->nosd; i++)
		fprintf(csv, "%u,%.3f,%u,%u\n", i, share[i], before[i], after[i]);
	if (csv != NULL)
		fclose(csv);
out:
	mon_inc_free(&inc);
	free(before);
	free(after);
	free(share);
	free(items);
	return rc;
}

int sim_run_mapsize(struct sim *s)
{
	struct mon_map back;
	struct mon_inc inc;
	struct mon_op op = {.kind = MON_OP_OSD_SET};
	struct proto_err err;
	void *buf = NULL, *ibuf = NULL;
	size_t len = 0, ilen = 0;
	double t0, t_enc, t_dec;
	const int reps = 5;
	int rc = 0;

	mon_map_init(&back);
	t0 = sim_now();
	for (int i = 0; i < reps && rc == 0; i++) {
		free(buf);
		rc = mon_map_encode(&s->balanced, &buf, &len);
	}
	t_enc = (sim_now() - t0) / reps;
	t0 = sim_now();
	for (int i = 0; i < reps && rc == 0; i++)
		rc = mon_map_decode(buf, len, &err, &back);
	t_dec = (sim_now() - t0) / reps;
	if (rc != 0)
		goto out;
	sim_metric(s, "map_bytes", (double)len, "bytes");
	sim_metric(s, "map_encode_ms", t_enc * 1e3, "ms");
	sim_metric(s, "map_decode_ms", t_dec * 1e3, "ms");
	/* the commonest increment: one OSD goes down */
	mon_inc_init(&inc);
	op.osd = *mon_map_osd(&s->balanced, 0);
	op.osd.state &= (uint8_t)~MON_OSD_UP;
	inc.epoch = s->balanced.epoch + 1;
	snprintf(inc.reason, sizeof(inc.reason), "osd.0: no beacon for 20.0 s (grace 20.0 s)");
	rc = mon_inc_add(&inc, &op);
	if (rc == 0)
		rc = mon_inc_encode(&inc, &ibuf, &ilen);
	mon_inc_free(&inc);
	if (rc != 0)
		goto out;
	sim_metric(s, "inc_osd_down_bytes", (double)ilen, "bytes");
	free(ibuf);
	ibuf = NULL;
	/* a full balancer increment (MON_INC_OPS_MAX items) */
	mon_inc_init(&inc);
	inc.epoch = s->balanced.epoch + 1;
	snprintf(inc.reason, sizeof(inc.reason), "balancer: %u items", MON_INC_OPS_MAX);
	for (uint32_t i = 0; i < MON_INC_OPS_MAX && rc == 0; i++) {
		struct mon_op u = {.kind = MON_OP_UPMAP_SET};

		u.upmap = (struct mon_upmap){1, i, 0, 1};
		rc = mon_inc_add(&inc, &u);
	}
	if (rc == 0)
		rc = mon_inc_encode(&inc, &ibuf, &ilen);
	mon_inc_free(&inc);
	if (rc == 0)
		sim_metric(s, "inc_balancer_8192_items_bytes", (double)ilen, "bytes");
out:
	free(buf);
	free(ibuf);
	mon_map_free(&back);
	return rc;
}

struct sim_scen {
	const char *name;
	bool add;
	uint32_t first, n; /* removals: OSDs [first, first + n) fail */
	uint8_t level;	   /* MON_CT_OSD, HOST, RACK */
};

/* Moved replicas (new members not in the old set) and the recovery of a failure. */
static int sim_compare(struct sim *s, const struct sim_scen *sc, const int32_t *old,
		       const int32_t *sets, uint32_t nosd, double changed_w, const char *how,
		       FILE *mcsv, FILE *rcsv)
{
	size_t slots = (size_t)s->a.pg_num * s->a.size;
	uint64_t *sent = calloc(nosd + 1, sizeof(*sent)), *recv = calloc(nosd + 1, sizeof(*recv));
	uint64_t moved = 0, old_on_removed = 0, pgs = 0, lost = 0, below_min = 0;
	uint64_t max_s = 0, max_r = 0, senders = 0, receivers = 0;
	double optimum, ratio, pg_bytes, hours;
	int rc = -ENOMEM;

	if (sent == NULL || recv == NULL)
		goto out;
	for (uint32_t pg = 0; pg < s->a.pg_num; pg++) {
		const int32_t *a = old + (size_t)pg * s->a.size, *b = sets + (size_t)pg * s->a.size;
		int32_t src = -1;
		unsigned int left = 0, news = 0;

		for (unsigned int i = 0; i < s->a.size; i++) {
			bool in_a = false, in_b = false;

			for (unsigned int j = 0; j < s->a.size; j++) {
				in_a |= b[i] >= 0 && a[j] == b[i];
				in_b |= a[i] >= 0 && b[j] == a[i];
			}
			if (b[i] >= 0 && !in_a)
				news++;
			if (a[i] >= 0 && in_b) {
				left++;
				if (src < 0)
					src = a[i];
			}
			if (!sc->add && a[i] >= (int32_t)sc->first &&
			    a[i] < (int32_t)(sc->first + sc->n))
				old_on_removed++;
		}
		/* the primary of the new set pushes to every new member, from a survivor */
		for (unsigned int i = 0; i < s->a.size && news > 0; i++) {
			bool in_a = false;

			for (unsigned int j = 0; j < s->a.size; j++)
				in_a |= b[i] >= 0 && a[j] == b[i];
			if (b[i] >= 0 && !in_a) {
				recv[b[i]]++;
				if (src >= 0)
					sent[src]++;
			}
		}
		moved += news;
		pgs += news > 0;
		lost += left == 0;
		below_min += left < s->a.min_size;
	}
	optimum = sc->add ? changed_w * (double)slots : (double)old_on_removed;
	ratio = optimum > 0 ? moved / optimum : 0;
	for (uint32_t i = 0; i < nosd; i++) {
		senders += sent[i] > 0;
		receivers += recv[i] > 0;
		max_s = sent[i] > max_s ? sent[i] : max_s;
		max_r = recv[i] > max_r ? recv[i] : max_r;
	}
	if (mcsv != NULL)
		fprintf(mcsv, "%s_%s,%.6f,%llu,%.1f,%.4f\n", sc->name, how, changed_w,
			(unsigned long long)moved, optimum, ratio);
	if (!s->a.quiet)
		printf("  %-22s %10.4f%% %10llu %12.1f %8.3f\n", how, changed_w * 100,
		       (unsigned long long)moved, optimum, ratio);
	/* raw additions move about one share per tree level: the target is for the pinned run */
	if (strcmp(how, "raw") != 0 || !sc->add)
		sim_expect(s, ratio <= 1.1, "%s (%s): moved %.3fx the optimum (target <= 1.1)",
			   sc->name, how, ratio);
	if (!sc->add && rcsv != NULL) {
		/* a PG replica holds the OSD's used capacity over its PG replicas */
		pg_bytes = s->a.osd_gb * 1e9 * s->a.fill / ((double)slots / s->nosd);
		hours =
		    (max_s > max_r ? max_s : max_r) * pg_bytes / (s->a.recovery_mbs * 1e6) / 3600;
		if (rcsv != NULL)
			fprintf(rcsv, "%s,%llu,%llu,%llu,%.2f,%.2f,%.3f,%llu,%llu\n", sc->name,
				(unsigned long long)pgs, (unsigned long long)senders,
				(unsigned long long)receivers, max_s * pg_bytes / 1e9,
				max_r * pg_bytes / 1e9, hours, (unsigned long long)below_min,
				(unsigned long long)lost);
		/* a failure no bigger than the failure domain must leave every PG a replica */
		sim_expect(s, lost == 0 || sc->level > s->a.domain,
			   "%s: %llu PGs lost every replica", sc->name, (unsigned long long)lost);
		if (!s->a.quiet)
			printf(
			    "  %-22s %llu PGs, %llu senders, %llu receivers, max %.1f GB in, %.2f "
			    "h at %.0f MB/s; %llu PGs below min_size, %llu lost\n",
			    "recovery", (unsigned long long)pgs, (unsigned long long)senders,
			    (unsigned long long)receivers, max_r * pg_bytes / 1e9, hours,
			    s->a.recovery_mbs, (unsigned long long)below_min,
			    (unsigned long long)lost);
	}
	rc = 0;
out:
	free(sent);
	free(recv);
	return rc;
}

/*
 * An addition as the monitors handle it: the new map keeps the balancer's
 * items, every replica that would move between old OSDs is pinned where it
 * was, and the balancer fills the new OSDs. Sets of the result into sets.
 */
static int sim_pinned(struct sim *s, const struct mon_map *next, int32_t *sets,
		      unsigned int *pinned, unsigned int *outside)
{
	const struct plc_tree *t = plc_map_tree(next);
	unsigned int cap = s->a.pg_num * s->a.size + next->nupmaps, n = 0, nit = 0;
	const struct plc_upmap *cur = plc_map_items(next, &nit);
	struct plc_upmap *items = malloc((cap + 1) * sizeof(*items));
	uint8_t *fresh = calloc(next->max_osd + 1, 1);
	unsigned int *load = calloc(next->max_osd + 1, sizeof(*load));
	double *share = calloc(next->max_osd + 1, sizeof(*share));
	struct plc_bal_stats st;
	struct plc_rule rule;
	int rc = -ENOMEM;

	if (t == NULL || items == NULL || fresh == NULL || load == NULL || share == NULL)
		goto out;
	memcpy(items, cur, nit * sizeof(*items));
	n = nit;
	for (uint32_t i = s->nosd; i < next->max_osd; i++)
		fresh[i] = 1;
	rc = plc_map_rule(t, next, sim_pool(next), &rule);
	if (rc == 0)
		rc =
		    plc_tree_pin(t, &rule, s->a.pg_num, s->sets_bal, fresh, items, &n, cap, pinned);
	if (rc == 0)
		rc =
		    plc_tree_balance(t, &rule, s->a.pg_num, s->a.max_dev, cap, items, &n, cap, &st);
	if (rc < 0)
		goto out;
	rc = plc_tree_loads(t, &rule, s->a.pg_num, items, n, load, share);
	*outside = 0;
	for (uint32_t i = 0; rc == 0 && i < next->max_osd; i++) {
		double tol = share[i] * s->a.max_dev < 1 ? 1 : share[i] * s->a.max_dev;

		if (share[i] > 0 && fabs(load[i] - share[i]) > tol) {
			if (*outside < 3 && s->a.check)
				fprintf(stderr, "weft sim: osd.%u holds %u replicas, share %.1f\n",
					i, load[i], share[i]);
			(*outside)++;
		}
	}
	for (uint32_t pg = 0; rc == 0 && pg < s->a.pg_num; pg++) {
		int32_t *set = sets + (size_t)pg * s->a.size;
		int k = plc_tree_acting(t, &rule, pg, items, n, set, NULL);

		if (k < 0)
			rc = k;
		for (unsigned int c = k < 0 ? 0 : (unsigned int)k; c < s->a.size; c++)
			set[c] = -1;
	}
out:
	free(items);
	free(fresh);
	free(load);
	free(share);
	return rc;
}

int sim_run_movement(struct sim *s)
{
	const uint32_t per_rack = s->a.hosts * s->a.per_host;
	const struct sim_scen scen[] = {
	    {"add_osd", true, 0, 1, MON_CT_OSD},
	    {"add_host", true, 0, s->a.per_host, MON_CT_HOST},
	    {"add_rack", true, 0, per_rack, MON_CT_RACK},
	    {"fail_osd", false, 0, 1, MON_CT_OSD},
	    {"fail_host", false, 0, s->a.per_host, MON_CT_HOST},
	    {"fail_rack", false, 0, per_rack, MON_CT_RACK},
	};
	FILE *mcsv = sim_csv(s, "movement.csv", "scenario,changed_share,moved,optimum,ratio");
	FILE *rcsv = sim_csv(s, "recovery.csv",
			     "scenario,pgs,senders,receivers,max_send_gb,max_recv_gb,hours,"
			     "pgs_below_min_size,pgs_lost");
	size_t slots = (size_t)s->a.pg_num * s->a.size;
	int32_t *sets = malloc(slots * sizeof(*sets));
	struct mon_map next, nextb;
	int rc = sets ? 0 : -ENOMEM;

	if (!s->a.quiet)
		printf("\ndata movement (moved replicas; optimum = the changed share of capacity)\n"
		       "  %-22s %11s %10s %12s %8s\n",
		       "scenario", "changed", "moved", "optimum", "ratio");
	for (unsigned int i = 0; i < sizeof(scen) / sizeof(scen[0]) && rc == 0; i++) {
		const struct sim_scen *sc = &scen[i];
		double w = (double)sc->n / (s->nosd + (sc->add ? sc->n : 0));
		unsigned int pinned = 0, outside = 0;
		char how[64];

		mon_map_init(&next);
		mon_map_init(&nextb);
		if (!s->a.quiet)
			printf("  %s\n", sc->name);
		if (sc->level == MON_CT_OSD && sc->add) { /* one more OSD in the first host */
			rc = sim_map_add(&s->map, "rack000", false, "r000-h000", 0, 1, &next);
			if (rc == 0)
				rc = sim_map_add(&s->balanced, "rack000", false, "r000-h000", 0, 1,
						 &nextb);
		} else if (sc->level == MON_CT_HOST && sc->add) { /* a new host in the first rack */
			rc = sim_map_add(&s->map, "rack000", false, "r000-new", 1, s->a.per_host,
					 &next);
			if (rc == 0)
				rc = sim_map_add(&s->balanced, "rack000", false, "r000-new", 1,
						 s->a.per_host, &nextb);
		} else if (sc->add) { /* a new rack of the same shape */
			rc = sim_map_add(&s->map, "racknew", true, "rnew", s->a.hosts,
					 s->a.per_host, &next);
			if (rc == 0)
				rc = sim_map_add(&s->balanced, "racknew", true, "rnew", s->a.hosts,
						 s->a.per_host, &nextb);
		} else { /* OSDs 0.. are the first host, the first rack */
			rc = sim_map_out(&s->map, sc->first, sc->n, &next);
		}
		if (rc == 0)
			rc = sim_sets(s, &next, sets, NULL);
		if (rc == 0)
			rc = sim_compare(s, sc, s->sets0, sets, next.max_osd, w, "raw", mcsv, rcsv);
		if (rc == 0 && sc->add) {
			rc = sim_pinned(s, &nextb, sets, &pinned, &outside);
			snprintf(how, sizeof(how), "pinned+balanced");
			if (rc == 0)
				rc = sim_compare(s, sc, s->sets_bal, sets, nextb.max_osd, w, how,
						 mcsv, NULL);
			if (rc == 0 && !s->a.quiet)
				printf(
				    "  %-22s %u replicas pinned; %u OSDs outside the bound after\n",
				    "", pinned, outside);
			sim_expect(s, outside == 0,
				   "%s: %u OSDs outside the bound after the balancer", sc->name,
				   outside);
		}
		mon_map_free(&next);
		mon_map_free(&nextb);
	}
	free(sets);
	if (mcsv != NULL)
		fclose(mcsv);
	if (rcsv != NULL)
		fclose(rcsv);
	return rc;
}
