/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Capacity on the monitors (docs/capacity.md). Every OSD's PG_STATS carries
 * its store's use; the leader keeps the newest of each in memory (like the
 * PG reports: a new leader knows them again within a second) and from them
 *  - sets and clears the OSDs' nearfull/backfillfull/full bits against the
 *    map's ratios, with a hysteresis so a bit does not flap at the line,
 *  - sets and clears a pool's full flag against its quotas, from the sum of
 *    its PGs' reported objects and bytes,
 * each in one increment when anything changes; it answers `df`, `osd df`,
 * the capacity health checks and the usage part of `status`, and builds the
 * increments of `osd set-*-ratio` and `pool set-quota`.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "mon/mon_priv.h"
#include "placement/plc_map.h"

#define MON_CAP_FRESH_MS       5000u   /* an older report says nothing any more */
#define MON_CAP_TICK_MS	       1000u   /* reports come once a second */
#define MON_CAP_HYST_PPM       5000u   /* a bit set at ratio r is cleared below r - 0.5% */
#define MON_CAP_QUOTA_WARN_PPM 900000u /* POOL_QUOTA from 90% of a quota */

struct mon_capent {
	uint64_t recv_ms; /* 0 = never reported */
	struct proto_osd_stat s;
};

static struct {
	struct mon_capent *o; /* by OSD id */
	uint32_t n;
	uint64_t next_ms;
} mon_cap;

static int mon_cap_ratio_parse(const struct conf *conf, enum conf_key key, const char *name,
			       uint32_t *ppm_out, char *err, size_t cap)
{
	const char *s = conf_get_str(conf, key);
	char *end;
	double x;

	errno = 0;
	x = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !(x > 0 && x < 1)) {
		snprintf(err, cap, "%s: '%s' is not a number between 0 and 1 (0.85)", name, s);
		return -EINVAL;
	}
	*ppm_out = (uint32_t)llround(x * MON_RATIO_ONE);
	return 0;
}

int mon_cap_conf_ratios(const struct conf *conf, struct mon_ratios *out, char *err, size_t cap)
{
	struct mon_ratios r;

	if (mon_cap_ratio_parse(conf, CONF_MON_OSD_NEARFULL_RATIO, "mon_osd_nearfull_ratio",
				&r.nearfull, err, cap) != 0 ||
	    mon_cap_ratio_parse(conf, CONF_MON_OSD_BACKFILLFULL_RATIO, "mon_osd_backfillfull_ratio",
				&r.backfillfull, err, cap) != 0 ||
	    mon_cap_ratio_parse(conf, CONF_MON_OSD_FULL_RATIO, "mon_osd_full_ratio", &r.full, err,
				cap) != 0)
		return -EINVAL;
	if (!mon_ratios_valid(&r)) {
		snprintf(err, cap,
			 "mon_osd_nearfull_ratio <= mon_osd_backfillfull_ratio <= "
			 "mon_osd_full_ratio must hold (%g, %g, %g)",
			 r.nearfull / 1e6, r.backfillfull / 1e6, r.full / 1e6);
		return -EINVAL;
	}
	*out = r;
	return 0;
}

void mon_cap_report(struct mon *mon, uint32_t osd, const struct proto_osd_stat *s)
{
	(void)mon;
	if (osd >= MON_OSD_MAX)
		return;
	if (osd >= mon_cap.n) {
		uint32_t n = osd + 16;
		struct mon_capent *t = realloc(mon_cap.o, n * sizeof(*t));

		if (t == NULL)
			return;
		memset(t + mon_cap.n, 0, (n - mon_cap.n) * sizeof(*t));
		mon_cap.o = t;
		mon_cap.n = n;
	}
	mon_cap.o[osd].recv_ms = clock_now_ms();
	mon_cap.o[osd].s = *s;
}

/* The OSD's report if it is recent enough to decide from, else NULL. */
static const struct proto_osd_stat *mon_cap_fresh(uint32_t osd)
{
	if (osd >= mon_cap.n || mon_cap.o[osd].recv_ms == 0 ||
	    clock_now_ms() - mon_cap.o[osd].recv_ms > MON_CAP_FRESH_MS)
		return NULL;
	return &mon_cap.o[osd].s;
}

/* used / total in parts per million (past 1000000 when used is past the data area). */
static uint64_t mon_cap_ppm(const struct proto_osd_stat *s)
{
	if (s->total == 0)
		return 0;
	return (uint64_t)((double)s->used * MON_RATIO_ONE / (double)s->total);
}

static double mon_cap_pct(uint64_t ppm)
{
	return (double)ppm / (MON_RATIO_ONE / 100.0);
}

/* The fullness bits an OSD at ppm should have, given those it has (the hysteresis). */
static uint8_t mon_cap_bits(const struct mon_map *map, uint8_t cur, uint64_t ppm)
{
	const uint32_t ratio[3] = {map->nearfull_ratio, map->backfillfull_ratio, map->full_ratio};
	const uint8_t bit[3] = {MON_OSD_NEARFULL, MON_OSD_BACKFILLFULL, MON_OSD_FULL};
	uint8_t out = 0;

	for (int i = 0; i < 3; i++)
		if (ppm >= ratio[i] || ((cur & bit[i]) && ppm + MON_CAP_HYST_PPM > ratio[i]))
			out |= bit[i];
	if (out & MON_OSD_FULL)
		out |= MON_OSD_BACKFILLFULL;
	if (out & MON_OSD_BACKFILLFULL)
		out |= MON_OSD_NEARFULL;
	return out;
}

/* The state osd should have: its fullness from a fresh report, unchanged without one. */
static uint8_t mon_cap_osd_want(const struct mon_map *map, const struct mon_osd *o)
{
	const struct proto_osd_stat *s = mon_cap_fresh(o->id);

	if (s == NULL || s->total == 0)
		return o->state;
	return (uint8_t)((o->state & ~MON_OSD_FULLNESS) |
			 mon_cap_bits(map, o->state, mon_cap_ppm(s)));
}

/*
 * The flags pool p should have for quotas q_bytes/q_objects: full at or past
 * a quota; cleared below only when every PG has reported (a new leader that
 * has heard from few PGs yet must not lift the flag).
 */
static uint32_t mon_cap_pool_want(struct mon *mon, const struct mon_pool *p)
{
	uint64_t objects, bytes;
	bool complete;

	if (p->quota_max_bytes == 0 && p->quota_max_objects == 0)
		return p->flags & ~MON_POOL_F_FULL;
	mon_pg_pool_usage(mon, p, &objects, &bytes, &complete);
	if ((p->quota_max_bytes != 0 && bytes >= p->quota_max_bytes) ||
	    (p->quota_max_objects != 0 && objects >= p->quota_max_objects))
		return p->flags | MON_POOL_F_FULL;
	return complete ? p->flags & ~MON_POOL_F_FULL : p->flags;
}

static int mon_cap_build_auto(struct mon *mon, struct mon_job *job, struct mon_inc *inc)
{
	int rc = 0;

	(void)job;
	mon->cap_job_queued = false;
	for (uint32_t i = 0; i < mon->map.max_osd && rc == 0; i++) {
		const struct mon_osd *o = mon_map_osd(&mon->map, i);
		const struct proto_osd_stat *s = mon_cap_fresh(i);
		struct mon_op op = {.kind = MON_OP_OSD_SET};
		uint8_t want;

		/* without a fresh report the OSD keeps its bits (mon_cap_osd_want) */
		if (o == NULL || s == NULL || (want = mon_cap_osd_want(&mon->map, o)) == o->state)
			continue;
		op.osd = *o;
		op.osd.state = want;
		mon_reason_add(inc, "osd.%u %s at %.1f%%", i,
			       (want & MON_OSD_FULLNESS) ? mon_osd_fullness_str(want) : "not full",
			       mon_cap_pct(mon_cap_ppm(s)));
		rc = mon_inc_add(inc, &op);
	}
	for (uint32_t i = 0; i < mon->map.npools && rc == 0; i++) {
		const struct mon_pool *p = &mon->map.pools[i];
		struct mon_op op = {.kind = MON_OP_POOL_SET};
		uint32_t want = mon_cap_pool_want(mon, p);

		if (want == p->flags)
			continue;
		op.pool = *p;
		op.pool.flags = want;
		mon_reason_add(inc, "pool '%s' %s", p->name,
			       (want & MON_POOL_F_FULL) ? "reached its quota" : "below its quotas");
		rc = mon_inc_add(inc, &op);
	}
	if (rc != 0)
		return rc;
	return inc->nops > 0 ? 0 : 1;
}

/* Leader, every tick: one increment when an OSD's fullness or a pool's flag should change. */
void mon_cap_tick(struct mon *mon)
{
	uint64_t now = clock_now_ms();
	struct mon_job *job;
	bool due = false;

	if (now < mon_cap.next_ms || mon->cap_job_queued)
		return;
	mon_cap.next_ms = now + MON_CAP_TICK_MS;
	for (uint32_t i = 0; i < mon->map.max_osd && !due; i++) {
		const struct mon_osd *o = mon_map_osd(&mon->map, i);

		due = o != NULL && mon_cap_osd_want(&mon->map, o) != o->state;
	}
	for (uint32_t i = 0; i < mon->map.npools && !due; i++)
		due = mon_cap_pool_want(mon, &mon->map.pools[i]) != mon->map.pools[i].flags;
	if (!due)
		return;
	job = mon_job_alloc(NULL, 0, mon_cap_build_auto);
	if (job == NULL)
		return;
	mon->cap_job_queued = true; /* first: the submit may build the job at once */
	if (mon_job_submit(mon, job) != 0)
		mon->cap_job_queued = false;
}

/* ------------------------------------------------------------- commands */

static int mon_cap_ratio_job(struct mon *mon, struct mon_job *job, json_t *root, const char *prefix,
			     struct mon_inc *inc)
{
	json_t *v = json_object_get(root, "ratio");
	struct mon_op op = {.kind = MON_OP_FULL_RATIOS};
	struct mon_ratios *r = &op.ratios;
	const char *which = prefix + strlen("osd set-");
	double x = json_number_value(v);
	uint32_t ppm;

	if (!json_is_number(v) || !(x > 0 && x < 1)) {
		mon_job_refuse(job, "the ratio must be a number between 0 and 1 (0.85), exclusive");
		return -EINVAL;
	}
	ppm = (uint32_t)llround(x * MON_RATIO_ONE);
	if (ppm == 0 || ppm >= MON_RATIO_ONE) {
		mon_job_refuse(job, "the ratio %g rounds to %s", x, ppm == 0 ? "0" : "1");
		return -EINVAL;
	}
	*r = (struct mon_ratios){mon->map.nearfull_ratio, mon->map.backfillfull_ratio,
				 mon->map.full_ratio};
	if (!strcmp(which, "nearfull-ratio"))
		r->nearfull = ppm;
	else if (!strcmp(which, "backfillfull-ratio"))
		r->backfillfull = ppm;
	else
		r->full = ppm;
	if (!mon_ratios_valid(r)) {
		mon_job_refuse(job,
			       "ratios must be ordered nearfull <= backfillfull <= full: that "
			       "would make them %g <= %g <= %g",
			       r->nearfull / 1e6, r->backfillfull / 1e6, r->full / 1e6);
		return -EINVAL;
	}
	if (r->nearfull == mon->map.nearfull_ratio &&
	    r->backfillfull == mon->map.backfillfull_ratio && r->full == mon->map.full_ratio)
		return 1;
	snprintf(inc->reason, sizeof(inc->reason), "'%s %g' by an operator", prefix, x);
	return mon_inc_add(inc, &op);
}

static int mon_cap_quota_job(struct mon *mon, struct mon_job *job, json_t *root,
			     struct mon_inc *inc)
{
	const char *name = json_string_value(json_object_get(root, "name"));
	const char *field = json_string_value(json_object_get(root, "field"));
	json_t *v = json_object_get(root, "value");
	const struct mon_pool *cur = name != NULL ? mon_map_pool_by_name(&mon->map, name) : NULL;
	struct mon_op op = {.kind = MON_OP_POOL_SET};

	if (cur == NULL) {
		mon_job_refuse(job, "pool '%s' does not exist", name ? name : "");
		return -ENOENT;
	}
	if (field == NULL || (strcmp(field, "max_bytes") && strcmp(field, "max_objects"))) {
		mon_job_refuse(job, "the quota is max_bytes or max_objects, not '%s'",
			       field ? field : "");
		return -EINVAL;
	}
	if (!json_is_integer(v) || json_integer_value(v) < 0) {
		mon_job_refuse(job, "the quota must be an integer >= 0 (0 removes it)");
		return -EINVAL;
	}
	op.pool = *cur;
	if (!strcmp(field, "max_bytes"))
		op.pool.quota_max_bytes = (uint64_t)json_integer_value(v);
	else
		op.pool.quota_max_objects = (uint64_t)json_integer_value(v);
	/* decided at once against the newest reports: a quota below the use is full now */
	op.pool.flags = mon_cap_pool_want(mon, &op.pool);
	if (!memcmp(&op.pool, cur, sizeof(*cur)))
		return 1;
	snprintf(inc->reason, sizeof(inc->reason), "pool set-quota '%s' %s %llu%s", name, field,
		 (unsigned long long)json_integer_value(v),
		 (op.pool.flags & MON_POOL_F_FULL) ? " (full)" : "");
	return mon_inc_add(inc, &op);
}

int mon_cap_job(struct mon *mon, struct mon_job *job, json_t *root, const char *prefix,
		struct mon_inc *inc)
{
	if (!strcmp(prefix, "pool set-quota"))
		return mon_cap_quota_job(mon, job, root, inc);
	if (!strcmp(prefix, "osd set-nearfull-ratio") ||
	    !strcmp(prefix, "osd set-backfillfull-ratio") || !strcmp(prefix, "osd set-full-ratio"))
		return mon_cap_ratio_job(mon, job, root, prefix, inc);
	mon_job_refuse(job, "unknown command '%s'", prefix);
	return -EINVAL;
}

/* ---------------------------------------------------------------- reads */

/*
 * Replicas of pool p on each OSD (counts[max_osd], zeroed here) over its PGs'
 * up sets; returns their total.
 */
static uint64_t mon_cap_pool_spread(struct mon *mon, const struct mon_pool *p, uint32_t *counts)
{
	uint64_t total = 0;

	memset(counts, 0, sizeof(*counts) * mon->map.max_osd);
	for (uint32_t g = 0; g < p->pg_num; g++) {
		int32_t acting[PLC_MAX_REPLICAS];
		int n = plc_map_acting(&mon->map, p, g, acting);

		for (int i = 0; i < n; i++)
			if (acting[i] >= 0 && (uint32_t)acting[i] < mon->map.max_osd) {
				counts[acting[i]]++;
				total++;
			}
	}
	return total;
}

/*
 * What can still be written to pool p (docs/capacity.md): each OSD the pool
 * maps to takes its share of the pool's new data (its replicas / all
 * replicas); the first OSD to reach the full ratio stops the pool, so the raw
 * bytes writable are min over its OSDs of room / share, divided by the
 * replicas, and capped by a byte quota.
 */
static uint64_t mon_cap_max_avail(struct mon *mon, const struct mon_pool *p, uint32_t *counts,
				  uint64_t stored)
{
	uint64_t replicas = mon_cap_pool_spread(mon, p, counts);
	double raw = -1;
	uint64_t out;

	for (uint32_t i = 0; i < mon->map.max_osd && replicas > 0; i++) {
		const struct proto_osd_stat *s = mon_cap_fresh(i);
		double cap, room, can;

		if (counts[i] == 0 || s == NULL)
			continue;
		cap = (double)s->total * mon->map.full_ratio / MON_RATIO_ONE;
		room = cap > (double)s->used ? cap - (double)s->used : 0;
		can = room * (double)replicas / counts[i];
		if (raw < 0 || can < raw)
			raw = can;
	}
	out = raw > 0 ? (uint64_t)(raw / p->size) : 0;
	if (p->quota_max_bytes != 0)
		out = stored >= p->quota_max_bytes
			  ? 0
			  : (p->quota_max_bytes - stored < out ? p->quota_max_bytes - stored : out);
	return out;
}

static void mon_cap_raw(struct mon *mon, uint64_t *total, uint64_t *used, uint64_t *avail,
			uint32_t *n, uint64_t *purging)
{
	*total = *used = *avail = *purging = 0;
	*n = 0;
	for (uint32_t i = 0; i < mon->map.max_osd; i++) {
		const struct proto_osd_stat *s =
		    mon_map_osd(&mon->map, i) ? mon_cap_fresh(i) : NULL;

		if (s == NULL)
			continue;
		*total += s->total;
		*used += s->used;
		*avail += s->avail;
		*purging += s->purging_objects;
		(*n)++;
	}
}

static double mon_cap_div_pct(double a, double b)
{
	return b > 0 ? 100.0 * a / b : 0;
}

json_t *mon_cap_df(struct mon *mon)
{
	uint32_t *counts = calloc(mon->map.max_osd ? mon->map.max_osd : 1, sizeof(*counts));
	uint64_t total, used, avail, purging;
	json_t *pools = json_array(), *out;
	uint32_t n;

	if (counts == NULL)
		return NULL;
	mon_cap_raw(mon, &total, &used, &avail, &n, &purging);
	for (uint32_t i = 0; i < mon->map.npools; i++) {
		const struct mon_pool *p = &mon->map.pools[i];
		uint64_t objects, bytes, max_avail;
		bool complete;

		mon_pg_pool_usage(mon, p, &objects, &bytes, &complete);
		max_avail = mon_cap_max_avail(mon, p, counts, bytes);
		json_array_append_new(
		    pools,
		    json_pack(
			"{s:s, s:i, s:i, s:{s:I, s:I, s:I, s:f, s:I, s:I, s:I, s:b, s:b}}", "name",
			p->name, "id", p->id, "size", p->size, "stats", "stored", (json_int_t)bytes,
			"objects", (json_int_t)objects, "used", (json_int_t)(bytes * p->size),
			"percent_used",
			mon_cap_div_pct((double)bytes * p->size,
					(double)bytes * p->size + (double)max_avail * p->size),
			"max_avail", (json_int_t)max_avail, "quota_max_bytes",
			(json_int_t)p->quota_max_bytes, "quota_max_objects",
			(json_int_t)p->quota_max_objects, "full", (p->flags & MON_POOL_F_FULL) != 0,
			"complete", complete));
	}
	free(counts);
	out =
	    json_pack("{s:i, s:{s:I, s:I, s:I, s:f, s:i, s:I}, s:o, s:{s:f, s:f, s:f}}", "epoch",
		      mon->map.epoch, "stats", "total_bytes", (json_int_t)total, "total_used_bytes",
		      (json_int_t)used, "total_avail_bytes", (json_int_t)avail, "percent_used",
		      mon_cap_div_pct((double)used, (double)total), "num_osds", n,
		      "purging_objects", (json_int_t)purging, "pools", pools, "ratios", "nearfull",
		      mon->map.nearfull_ratio / 1e6, "backfillfull",
		      mon->map.backfillfull_ratio / 1e6, "full", mon->map.full_ratio / 1e6);
	return out;
}

json_t *mon_cap_osd_df(struct mon *mon)
{
	json_t *nodes = json_array();
	uint64_t total = 0, used = 0, avail = 0;
	double minv = 0, maxv = 0, sum2 = 0, mean;
	uint32_t n = 0;

	for (uint32_t i = 0; i < mon->map.max_osd; i++) {
		const struct proto_osd_stat *s =
		    mon_map_osd(&mon->map, i) ? mon_cap_fresh(i) : NULL;

		if (s == NULL || s->total == 0)
			continue;
		total += s->total;
		used += s->used;
		avail += s->avail;
		n++;
	}
	mean = mon_cap_div_pct((double)used, (double)total);
	for (uint32_t i = 0; i < mon->map.max_osd; i++) {
		const struct mon_osd *o = mon_map_osd(&mon->map, i);
		const struct proto_osd_stat *s = o ? mon_cap_fresh(i) : NULL;
		struct proto_osd_stat z = {0};
		double util, var;

		if (o == NULL)
			continue;
		util = s != NULL ? mon_cap_div_pct((double)s->used, (double)s->total) : 0;
		var = s != NULL && mean > 0 ? util / mean : 0;
		if (s != NULL && s->total > 0) {
			minv = (n == 0 || minv == 0 || var < minv) ? var : minv;
			maxv = var > maxv ? var : maxv;
			sum2 += (util - mean) * (util - mean);
		}
		json_array_append_new(
		    nodes,
		    json_pack(
			"{s:i, s:s, s:b, s:b, s:s, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:f, "
			"s:f, s:i}",
			"id", i, "host", o->host, "up", (o->state & MON_OSD_UP) != 0, "in",
			(o->state & MON_OSD_IN) != 0, "fullness", mon_osd_fullness_str(o->state),
			"reported", s != NULL, "size", (json_int_t)(s ? s : &z)->total, "used",
			(json_int_t)(s ? s : &z)->used, "data", (json_int_t)(s ? s : &z)->data_used,
			"wal", (json_int_t)(s ? s : &z)->wal_bytes, "kv",
			(json_int_t)(s ? s : &z)->kv_bytes, "avail",
			(json_int_t)(s ? s : &z)->avail, "utilization", util, "var", var, "pgs",
			(s ? s : &z)->num_pgs));
	}
	return json_pack("{s:i, s:o, s:{s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:i}}", "epoch",
			 mon->map.epoch, "nodes", nodes, "summary", "total_size", (json_int_t)total,
			 "total_used", (json_int_t)used, "total_avail", (json_int_t)avail,
			 "average_utilization", mean, "min_var", minv, "max_var", maxv, "dev",
			 n > 0 ? sqrt(sum2 / n) : 0.0, "reported_osds", n);
}

/* The usage part of `status`: raw totals, each pool's stored bytes, pool removal progress. */
json_t *mon_cap_status(struct mon *mon)
{
	uint64_t total, used, avail, purging, stored = 0, objects = 0;
	json_t *pools = json_array();
	uint32_t n;

	mon_cap_raw(mon, &total, &used, &avail, &n, &purging);
	for (uint32_t i = 0; i < mon->map.npools; i++) {
		const struct mon_pool *p = &mon->map.pools[i];
		uint64_t o, b;
		bool complete;

		mon_pg_pool_usage(mon, p, &o, &b, &complete);
		stored += b;
		objects += o;
		json_array_append_new(pools, json_pack("{s:s, s:I, s:I}", "name", p->name, "stored",
						       (json_int_t)b, "objects", (json_int_t)o));
	}
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "total_bytes", (json_int_t)total,
			 "used_bytes", (json_int_t)used, "avail_bytes", (json_int_t)avail,
			 "stored_bytes", (json_int_t)stored, "objects", (json_int_t)objects,
			 "purging_objects", (json_int_t)purging, "pools", pools);
}

/* ---------------------------------------------------------------- health */

static void mon_cap_health_osds(struct mon *mon, json_t *checks, const char **status)
{
	static const struct {
		uint8_t bit, unless; /* counted under a higher bit instead */
		const char *code, *what;
		bool error;
	} lv[] = {
	    {MON_OSD_FULL, 0, "OSD_FULL", "full", true},
	    {MON_OSD_BACKFILLFULL, MON_OSD_FULL, "OSD_BACKFILLFULL", "backfillfull", false},
	    {MON_OSD_NEARFULL, MON_OSD_BACKFILLFULL | MON_OSD_FULL, "OSD_NEARFULL", "nearfull",
	     false},
	};
	const uint32_t ratio[3] = {mon->map.full_ratio, mon->map.backfillfull_ratio,
				   mon->map.nearfull_ratio};

	for (int l = 0; l < 3; l++) {
		json_t *d = json_array();
		unsigned int n = 0;

		for (uint32_t i = 0; i < mon->map.max_osd; i++) {
			const struct mon_osd *o = mon_map_osd(&mon->map, i);
			const struct proto_osd_stat *s = mon_cap_fresh(i);

			if (o == NULL || !(o->state & lv[l].bit) || (o->state & lv[l].unless))
				continue;
			n++;
			if (s != NULL)
				json_array_append_new(
				    d, json_sprintf("osd.%u is %s at %.1f%% (%s ratio "
						    "%.1f%%)",
						    i, lv[l].what, mon_cap_pct(mon_cap_ppm(s)),
						    lv[l].what, mon_cap_pct(ratio[l])));
			else
				json_array_append_new(
				    d,
				    json_sprintf("osd.%u is %s (no recent report)", i, lv[l].what));
		}
		if (n == 0) {
			json_decref(d);
			continue;
		}
		mon_health_add(checks, status, lv[l].code, lv[l].error, d,
			       l == 0 ? "%u full osd(s): writes that allocate are refused in their "
					"PGs (remove data, add OSDs or raise the full ratio)"
			       : l == 1 ? "%u backfillfull osd(s): no backfill or recovery goes to "
					  "them"
					: "%u nearfull osd(s)",
			       n);
	}
}

static void mon_cap_health_pools(struct mon *mon, json_t *checks, const char **status)
{
	uint32_t *counts = calloc(mon->map.max_osd ? mon->map.max_osd : 1, sizeof(*counts));
	json_t *dfull = json_array(), *dnear = json_array(), *dquota = json_array();
	unsigned int nfull = 0, nnear = 0, nquota = 0;

	for (uint32_t i = 0; counts != NULL && i < mon->map.npools; i++) {
		const struct mon_pool *p = &mon->map.pools[i];
		uint64_t objects, bytes;
		uint32_t worst = PROTO_OSD_ID_NONE;
		uint8_t wbits = 0;
		bool complete;

		mon_pg_pool_usage(mon, p, &objects, &bytes, &complete);
		mon_cap_pool_spread(mon, p, counts);
		for (uint32_t o = 0; o < mon->map.max_osd; o++) {
			uint8_t b = counts[o] ? mon->map.osds[o].state & MON_OSD_FULLNESS : 0;

			if (b > wbits) { /* FULL > BACKFILLFULL > NEARFULL as numbers */
				wbits = b;
				worst = o;
			}
		}
		if (p->flags & MON_POOL_F_FULL) {
			nfull++;
			json_array_append_new(dfull,
					      json_sprintf("pool '%s' reached its quota (%llu "
							   "objects of max %llu, %llu bytes of max "
							   "%llu): writes that allocate get EDQUOT",
							   p->name, (unsigned long long)objects,
							   (unsigned long long)p->quota_max_objects,
							   (unsigned long long)bytes,
							   (unsigned long long)p->quota_max_bytes));
		} else if (wbits & MON_OSD_FULL) {
			nfull++;
			json_array_append_new(
			    dfull, json_sprintf("pool '%s' maps to full osd.%u", p->name, worst));
		} else if (wbits != 0) {
			nnear++;
			json_array_append_new(dnear,
					      json_sprintf("pool '%s' maps to %s osd.%u", p->name,
							   mon_osd_fullness_str(wbits), worst));
		}
		if (p->flags & MON_POOL_F_FULL)
			continue;
		if (p->quota_max_objects != 0 &&
		    objects * (double)MON_RATIO_ONE >=
			(double)p->quota_max_objects * MON_CAP_QUOTA_WARN_PPM) {
			nquota++;
			json_array_append_new(
			    dquota,
			    json_sprintf(
				"pool '%s' holds %llu objects of its max_objects quota %llu",
				p->name, (unsigned long long)objects,
				(unsigned long long)p->quota_max_objects));
		} else if (p->quota_max_bytes != 0 &&
			   bytes * (double)MON_RATIO_ONE >=
			       (double)p->quota_max_bytes * MON_CAP_QUOTA_WARN_PPM) {
			nquota++;
			json_array_append_new(
			    dquota,
			    json_sprintf("pool '%s' holds %llu bytes of its max_bytes quota %llu",
					 p->name, (unsigned long long)bytes,
					 (unsigned long long)p->quota_max_bytes));
		}
	}
	free(counts);
	if (nfull > 0)
		mon_health_add(checks, status, "POOL_FULL", false, dfull,
			       "%u pool(s) full: writes that allocate are refused", nfull);
	else
		json_decref(dfull);
	if (nnear > 0)
		mon_health_add(checks, status, "POOL_NEARFULL", false, dnear,
			       "%u pool(s) map to nearly full OSDs", nnear);
	else
		json_decref(dnear);
	if (nquota > 0)
		mon_health_add(checks, status, "POOL_QUOTA", false, dquota,
			       "%u pool(s) near a quota (%u%% or more)", nquota,
			       MON_CAP_QUOTA_WARN_PPM / 10000);
	else
		json_decref(dquota);
}

void mon_cap_health(struct mon *mon, json_t *checks, const char **status)
{
	mon_cap_health_osds(mon, checks, status);
	mon_cap_health_pools(mon, checks, status);
}
