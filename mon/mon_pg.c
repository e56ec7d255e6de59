/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PG states on the monitors (docs/recovery.md, "What the monitors show").
 * Every OSD reports the PGs it leads once a second (PG_STATS, forwarded to
 * the leader like beacons, answered with the operators' scrub/repair
 * requests for that OSD). The leader keeps the newest report of each PG in
 * memory only, like the beacon times: a new leader knows the states again
 * within a report interval. A PG keeps the state its current primary last
 * reported, at whatever epoch, until that primary reports anew (within a
 * second of a map change), so an ordinary map change does not flash every
 * PG "unknown"; a PG whose primary changed and has not reported yet is
 * "unknown". Health counts a PG inactive (PG_AVAILABILITY) only once it has
 * been without an active report for mon_pg_inactive_grace: peering after a
 * map change, or a new leader waiting for its first reports, is not an
 * alarm; a PG its primary reports down or incomplete counts at once.
 * `status`, `health` and `pg ls` read this table; `pg scrub|
 * deep-scrub|repair` queue requests.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "mon/mon_priv.h"
#include "placement/plc_map.h"

/*
 * A report older than this is "stale": its primary stopped reporting (it
 * reports every second), so what it said may no longer be true — shown as
 * STATE+stale and never counted clean, until the map says where the PG is.
 */
#define MON_PG_STALE_MS 5000u
#define MON_PG_CMDS_MAX 4096 /* `weft pg verify --all` asks for every PG at once */
#define MON_PG_RATE_MS 5000u

struct mon_pgent {
	uint64_t key; /* pool << 32 | pg, 0 = free slot (pool ids start at 1) */
	uint32_t osd, osd_epoch;
	uint64_t recv_ms; /* 0: no report yet (an entry made for inactive_ms) */
	uint64_t inactive_ms; /* since when the PG has no active report from its primary; 0 = active */
	struct proto_pg_stat s;
};

struct mon_pgrate {
	uint64_t objs, bytes, ms;	   /* newest totals */
	uint64_t b_objs, b_bytes, b_ms;	   /* baseline a few seconds older */
	double objs_per_s, bytes_per_s;
};

struct mon_pgcmd {
	uint32_t osd, pool, pg;
	uint32_t token; /* of a verify: the operator's, reported back in the PG's stats */
	char op[16];
};

struct mon_pgs {
	struct mon_pgent *t;
	uint32_t cap, n;
	struct mon_pgrate *rate; /* by OSD id */
	uint32_t nrate;
	struct mon_pgcmd cmds[MON_PG_CMDS_MAX];
	unsigned int ncmds;
};

static struct mon_pgs mon_pgs;

static uint32_t mon_pg_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (uint32_t)k;
}

/* Room for more entries without a rehash (so pointers into the table stay valid). */
static int mon_pg_reserve(uint32_t more)
{
	struct mon_pgs *p = &mon_pgs;

	while ((uint64_t)(p->n + more + 1) * 2 > p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 256;
		struct mon_pgent *t = calloc(cap, sizeof(*t));

		if (t == NULL)
			return -ENOMEM;
		for (uint32_t i = 0; i < p->cap; i++) {
			if (p->t[i].key == 0)
				continue;
			for (uint32_t k = mon_pg_hash(p->t[i].key) & (cap - 1);; k = (k + 1) & (cap - 1))
				if (t[k].key == 0) {
					t[k] = p->t[i];
					break;
				}
		}
		free(p->t);
		p->t = t;
		p->cap = cap;
	}
	return 0;
}

static struct mon_pgent *mon_pg_slot(uint64_t key, bool create)
{
	struct mon_pgs *p = &mon_pgs;

	if (create && mon_pg_reserve(1) != 0)
		return NULL;
	if (p->cap == 0)
		return NULL;
	for (uint32_t k = mon_pg_hash(key) & (p->cap - 1);; k = (k + 1) & (p->cap - 1)) {
		if (p->t[k].key == key)
			return &p->t[k];
		if (p->t[k].key == 0) {
			if (!create)
				return NULL;
			p->t[k].key = key;
			p->n++;
			return &p->t[k];
		}
	}
}

static void mon_pg_rate(uint32_t osd, const struct proto_pg_stat *s, uint64_t now)
{
	struct mon_pgs *p = &mon_pgs;
	struct mon_pgrate *r;

	if (osd >= p->nrate) {
		uint32_t n = osd + 16;
		struct mon_pgrate *nr = realloc(p->rate, n * sizeof(*nr));

		if (nr == NULL)
			return;
		memset(nr + p->nrate, 0, (n - p->nrate) * sizeof(*nr));
		p->rate = nr;
		p->nrate = n;
	}
	r = &p->rate[osd];
	if (s->recovered_objects < r->objs || r->b_ms == 0) { /* first report, or a restart */
		r->b_objs = s->recovered_objects;
		r->b_bytes = s->recovered_bytes;
		r->b_ms = now;
	}
	r->objs = s->recovered_objects;
	r->bytes = s->recovered_bytes;
	r->ms = now;
	if (now - r->b_ms >= MON_PG_RATE_MS) {
		double dt = (double)(now - r->b_ms) / 1000.0;

		r->objs_per_s = (double)(r->objs - r->b_objs) / dt;
		r->bytes_per_s = (double)(r->bytes - r->b_bytes) / dt;
		r->b_objs = r->objs;
		r->b_bytes = r->bytes;
		r->b_ms = now;
	}
}

/* Leader: store a report, answer with the requests queued for that OSD. */
void mon_pg_report(struct mon *mon, struct msgr_conn *conn, uint64_t tid,
		   const struct proto_pg_stats *m)
{
	struct proto_pg_stat s;
	json_t *cmds = json_array(), *out;
	uint64_t now = clock_now_ms();
	size_t off = 0;
	char *text;

	mon_cap_report(mon, m->osd, &m->osd_stat);
	if (m->has_io)
		mon_io_report(m->osd, &m->io, now);
	while (proto_pg_stat_next(m, &off, &s)) {
		struct mon_pgent *e = mon_pg_slot(((uint64_t)s.pool << 32) | s.pg, true);

		if (e == NULL)
			break;
		/* a former primary that has not seen the newer map yet does not undo its successor */
		if (e->recv_ms != 0 && e->osd != m->osd && m->epoch < e->osd_epoch)
			continue;
		e->osd = m->osd;
		e->osd_epoch = m->epoch;
		e->recv_ms = now;
		e->s = s;
		/* the inactive clock stops on an active report at the current map only */
		if ((s.state & PROTO_PGS_ACTIVE) && m->epoch >= mon->map.epoch)
			e->inactive_ms = 0;
		else if (!(s.state & PROTO_PGS_ACTIVE) && e->inactive_ms == 0)
			e->inactive_ms = now;
		mon_pg_rate(m->osd, &s, now);
	}
	for (unsigned int i = 0; i < mon_pgs.ncmds;) {
		struct mon_pgcmd *c = &mon_pgs.cmds[i];

		if (c->osd != m->osd) {
			i++;
			continue;
		}
		json_array_append_new(cmds, json_pack("{s:i, s:i, s:s, s:I}", "pool", c->pool, "pg",
						      c->pg, "op", c->op, "token",
						      (json_int_t)c->token));
		*c = mon_pgs.cmds[--mon_pgs.ncmds];
	}
	out = json_pack("{s:o}", "cmds", cmds);
	text = json_dumps(out, JSON_COMPACT);
	mon_reply(mon, msgr_conn_id(conn), tid, text ? 0 : -ENOMEM, text, "%s", "");
	free(text);
	json_decref(out);
}

/*
 * The report of (pool, pg) that stands: the newest from its current
 * primary, whatever its epoch (the primary reports again within a second
 * of a map change; until then its last word is the best known).
 */
static const struct mon_pgent *mon_pg_current(struct mon *mon, const struct mon_pool *pool,
					      uint32_t pg, int32_t *acting, int *n_out)
{
	const struct mon_pgent *e = mon_pg_slot(((uint64_t)pool->id << 32) | pg, false);
	int n = plc_map_acting(&mon->map, pool, pg, acting);

	*n_out = n;
	if (e == NULL || e->recv_ms == 0 || n <= 0 || e->osd != (uint32_t)acting[0])
		return NULL;
	return e;
}

/* Entries for every PG of the map can be made without a rehash (mon_pg_inactive). */
static void mon_pg_reserve_map(struct mon *mon)
{
	uint32_t total = 0;

	for (uint32_t p = 0; p < mon->map.npools; p++)
		total += mon->map.pools[p].pg_num;
	mon_pg_reserve(total);
}

/*
 * Is the PG inactive for longer than mon_pg_inactive_grace? Its clock
 * starts when it is first seen without an active report (cur: what
 * mon_pg_current gave); call mon_pg_reserve_map first in a loop, so
 * making an entry here does not move cur.
 */
static bool mon_pg_inactive(struct mon *mon, const struct mon_pool *pool, uint32_t pg,
			    const struct mon_pgent *cur, uint64_t now)
{
	uint64_t grace = conf_get_duration_us(mon->conf, CONF_MON_PG_INACTIVE_GRACE) / 1000;
	struct mon_pgent *e;

	if (cur != NULL && (cur->s.state & PROTO_PGS_ACTIVE))
		return false;
	e = mon_pg_slot(((uint64_t)pool->id << 32) | pg, true);
	if (e == NULL)
		return true;
	if (e->inactive_ms == 0)
		e->inactive_ms = now;
	/* down or incomplete, as its primary says: no passing phase, at once */
	if (cur != NULL && (cur->s.state & (PROTO_PGS_DOWN | PROTO_PGS_INCOMPLETE)))
		return true;
	return now - e->inactive_ms >= grace;
}

/* Leader, every tick: start the inactive clocks even when nobody asks for health. */
void mon_pg_tick(struct mon *mon)
{
	static uint64_t last_ms;
	uint64_t now = clock_now_ms();

	if (now - last_ms < 1000)
		return;
	last_ms = now;
	mon_pg_reserve_map(mon);
	for (uint32_t p = 0; p < mon->map.npools; p++) {
		const struct mon_pool *pool = &mon->map.pools[p];

		for (uint32_t g = 0; g < pool->pg_num; g++) {
			int32_t acting[PLC_MAX_REPLICAS];
			int n;

			mon_pg_inactive(mon, pool, g, mon_pg_current(mon, pool, g, acting, &n), now);
		}
	}
}

static bool mon_pg_stale(const struct mon_pgent *e)
{
	return e != NULL && e->recv_ms != 0 && clock_now_ms() - e->recv_ms > MON_PG_STALE_MS;
}

uint32_t mon_pg_state_now(struct mon *mon, const struct mon_pool *pool, uint32_t pg,
			  int32_t *acting, int *n_out)
{
	const struct mon_pgent *e = mon_pg_current(mon, pool, pg, acting, n_out);

	return e != NULL && !mon_pg_stale(e) ? e->s.state : 0;
}

static void mon_pg_state_name(const struct mon_pgent *e, char *buf, size_t cap)
{
	size_t len;

	if (e == NULL) {
		snprintf(buf, cap, "unknown");
		return;
	}
	proto_pg_state_str(e->s.state, buf, cap);
	len = strlen(buf);
	if (mon_pg_stale(e) && len < cap)
		snprintf(buf + len, cap - len, "+stale");
}

json_t *mon_pg_json_summary(struct mon *mon)
{
	json_t *states = json_object(), *out;
	uint64_t pgs = 0, missing = 0, inconsistent = 0, inactive = 0, unfound = 0, unfound_pgs = 0;
	uint64_t stale = 0, inactive_grace = 0;
	uint64_t missing_bytes = 0;
	double objs_s = 0, bytes_s = 0, eta = -1;
	uint64_t now = clock_now_ms();

	mon_pg_reserve_map(mon);
	for (uint32_t p = 0; p < mon->map.npools; p++) {
		const struct mon_pool *pool = &mon->map.pools[p];

		for (uint32_t g = 0; g < pool->pg_num; g++) {
			int32_t acting[PLC_MAX_REPLICAS];
			int n;
			const struct mon_pgent *e = mon_pg_current(mon, pool, g, acting, &n);
			char name[128];
			json_t *c;

			mon_pg_state_name(e, name, sizeof(name));
			c = json_object_get(states, name);
			json_object_set_new(states, name,
					    json_integer((c ? json_integer_value(c) : 0) + 1));
			pgs++;
			stale += mon_pg_stale(e);
			if (e == NULL || !(e->s.state & PROTO_PGS_ACTIVE)) {
				inactive++;
				inactive_grace += mon_pg_inactive(mon, pool, g, e, now);
				continue;
			}
			/* active as last reported, not yet confirmed at this epoch: not "ready" */
			inactive += e->osd_epoch < mon->map.epoch;
			missing += e->s.missing;
			missing_bytes += e->s.missing_bytes;
			unfound += e->s.unfound;
			unfound_pgs += e->s.unfound > 0;
			inconsistent += (e->s.state & PROTO_PGS_INCONSISTENT) != 0;
		}
	}
	for (uint32_t i = 0; i < mon_pgs.nrate; i++) {
		const struct mon_osd *o = mon_map_osd(&mon->map, i);

		if (o != NULL && (o->state & MON_OSD_UP) &&
		    clock_now_ms() - mon_pgs.rate[i].ms < 3 * MON_PG_RATE_MS) {
			objs_s += mon_pgs.rate[i].objs_per_s;
			bytes_s += mon_pgs.rate[i].bytes_per_s;
		}
	}
	/* ETA: the slower of what is left by objects and by bytes at the current rates */
	if (missing > 0 && objs_s > 0.01)
		eta = (double)missing / objs_s;
	if (missing_bytes > 0 && bytes_s > 1 && (double)missing_bytes / bytes_s > eta)
		eta = (double)missing_bytes / bytes_s;
	out = json_pack("{s:I, s:o, s:I, s:I, s:I, s:I}", "num_pgs", (json_int_t)pgs, "states",
			states, "inactive_pgs", (json_int_t)inactive, "degraded_objects",
			(json_int_t)missing, "degraded_bytes", (json_int_t)missing_bytes,
			"inconsistent_pgs", (json_int_t)inconsistent);
	json_object_set_new(out, "unfound_objects", json_integer((json_int_t)unfound));
	json_object_set_new(out, "unfound_pgs", json_integer((json_int_t)unfound_pgs));
	json_object_set_new(out, "stale_pgs", json_integer((json_int_t)stale));
	/* what health counts (PG_AVAILABILITY): inactive for over mon_pg_inactive_grace */
	json_object_set_new(out, "inactive_pgs_over_grace", json_integer((json_int_t)inactive_grace));
	json_object_set_new(out, "client_io", mon_io_json(mon));
	json_object_set_new(out, "recovery",
			    json_pack("{s:f, s:f, s:o}", "objects_per_sec", objs_s,
				      "bytes_per_sec", bytes_s, "eta_sec",
				      eta >= 0 ? json_integer((json_int_t)eta) : json_null()));
	return out;
}

static json_t *mon_pg_blocked_json(const struct proto_pg_stat *s)
{
	json_t *a = json_array();

	for (unsigned int i = 0; i < s->nblocked && i < PROTO_PG_BLOCKED_MAX; i++)
		json_array_append_new(a, json_integer(s->blocked[i]));
	return a;
}

/* PGs matching want (a state bit, or 0 for "inactive"), one detail line each, at most 50. */
static json_t *mon_pg_detail(struct mon *mon, uint32_t want, bool stale)
{
	json_t *d = json_array();
	unsigned int n = 0, more = 0;
	uint64_t now = clock_now_ms();

	mon_pg_reserve_map(mon);
	for (uint32_t p = 0; p < mon->map.npools; p++) {
		const struct mon_pool *pool = &mon->map.pools[p];

		for (uint32_t g = 0; g < pool->pg_num; g++) {
			int32_t acting[PLC_MAX_REPLICAS];
			int na;
			const struct mon_pgent *e = mon_pg_current(mon, pool, g, acting, &na);
			char name[128], who[PROTO_PG_BLOCKED_MAX * 12] = "";
			bool hit;

			if (stale)
				hit = mon_pg_stale(e);
			else if (want == 0)
				hit = mon_pg_inactive(mon, pool, g, e, now);
			else
				hit = e != NULL && (e->s.state & PROTO_PGS_ACTIVE) && (e->s.state & want);
			if (!hit)
				continue;
			if (n++ >= 50) {
				more++;
				continue;
			}
			mon_pg_state_name(e, name, sizeof(name));
			for (unsigned int i = 0; e != NULL && i < e->s.nblocked &&
						 i < PROTO_PG_BLOCKED_MAX; i++)
				snprintf(who + strlen(who), sizeof(who) - strlen(who), "%sosd.%u",
					 i ? ", " : "", e->s.blocked[i]);
			if (who[0] != '\0' && (e->s.state & PROTO_PGS_DOWN))
				json_array_append_new(d, json_sprintf(
					"pg %u.%x is down: waiting for %s (a past interval may hold "
					"acknowledged writes only they have)", pool->id, g, who));
			else if (e != NULL && e->s.unfound > 0 && want == 0)
				json_array_append_new(d, json_sprintf("pg %u.%x is %s, %u unfound",
								      pool->id, g, name, e->s.unfound));
			else
				json_array_append_new(d, json_sprintf("pg %u.%x is %s, acting on %s%d",
								      pool->id, g, name,
								      na > 0 ? "osd." : "none ",
								      na > 0 ? acting[0] : -1));
		}
	}
	if (more > 0)
		json_array_append_new(d, json_sprintf("%u more pgs (weft pg ls)", more));
	return d;
}

/* Checks for `health`: inactive, stale, degraded, unfound and inconsistent PGs. */
void mon_pg_health(struct mon *mon, json_t *checks, const char **status)
{
	json_t *sum = mon_pg_json_summary(mon), *states = json_object_get(sum, "states");
	json_int_t inactive = json_integer_value(json_object_get(sum, "inactive_pgs_over_grace"));
	json_int_t degraded = json_integer_value(json_object_get(sum, "degraded_objects"));
	json_int_t bad = json_integer_value(json_object_get(sum, "inconsistent_pgs"));
	json_int_t unfound = json_integer_value(json_object_get(sum, "unfound_objects"));
	json_int_t stale = json_integer_value(json_object_get(sum, "stale_pgs"));
	json_int_t ndeg = 0, toofull = 0;
	const char *k;
	json_t *v;

	json_object_foreach(states, k, v) {
		if (strstr(k, "degraded"))
			ndeg += json_integer_value(v);
		if (strstr(k, "backfill_toofull"))
			toofull += json_integer_value(v);
	}
	if (inactive > 0 && mon->map.npools > 0)
		mon_health_add_n(checks, status, "PG_AVAILABILITY", false, inactive,
				 mon_pg_detail(mon, 0, false),
				 "%lld pgs inactive (peering, down or unknown) for over %.0f s",
				 (long long)inactive,
				 conf_get_duration_us(mon->conf, CONF_MON_PG_INACTIVE_GRACE) / 1e6);
	if (stale > 0)
		mon_health_add_n(checks, status, "PG_STALE", false, stale, mon_pg_detail(mon, 0, true),
			       "%lld pgs stale: their primary has not reported for %u s (down, or "
			       "blocked; the mons mark a silent OSD down after its grace)",
			       (long long)stale, MON_PG_STALE_MS / 1000);
	if (ndeg > 0)
		mon_health_add_n(checks, status, "PG_DEGRADED", false, ndeg,
			       mon_pg_detail(mon, PROTO_PGS_DEGRADED, false),
			       "%lld pgs degraded, %lld objects to recover", (long long)ndeg,
			       (long long)degraded);
	if (toofull > 0)
		mon_health_add_n(checks, status, "PG_BACKFILL_FULL", false, toofull,
			       mon_pg_detail(mon, PROTO_PGS_BACKFILL_TOOFULL, false),
			       "%lld pgs backfill_toofull: the OSD they backfill to is past the "
			       "backfillfull ratio (weft osd df; free space or add OSDs)",
			       (long long)toofull);
	if (unfound > 0)
		mon_health_add_n(checks, status, "OBJECT_UNFOUND", false, unfound, NULL,
			       "%lld objects unfound in %lld pgs: no complete copy is up (bring back "
			       "the OSDs that held them; weft pg ls shows which pgs)",
			       (long long)unfound,
			       (long long)json_integer_value(json_object_get(sum, "unfound_pgs")));
	if (bad > 0)
		mon_health_add_n(checks, status, "PG_DAMAGED", true, bad,
			       mon_pg_detail(mon, PROTO_PGS_INCONSISTENT, false),
			       "%lld pgs inconsistent (weft pg ls --inconsistent; weft pg repair PGID)",
			       (long long)bad);
	json_decref(sum);
}

/*
 * A pool's objects and logical bytes: the sum of the newest report of each
 * of its PGs (whatever the epoch: a PG between primaries still holds what
 * it held). *complete: every PG has a report younger than the stale bound.
 */
void mon_pg_pool_usage(struct mon *mon, const struct mon_pool *pool, uint64_t *objects_out,
		       uint64_t *bytes_out, bool *complete_out)
{
	uint64_t objects = 0, bytes = 0;
	bool complete = true;

	for (uint32_t g = 0; g < pool->pg_num; g++) {
		const struct mon_pgent *e = mon_pg_slot(((uint64_t)pool->id << 32) | g, false);

		if (e == NULL || e->recv_ms == 0 || mon_pg_stale(e)) {
			complete = false;
			if (e == NULL || e->recv_ms == 0)
				continue;
		}
		objects += e->s.objects;
		bytes += e->s.bytes;
	}
	*objects_out = objects;
	*bytes_out = bytes;
	*complete_out = complete;
}

static int mon_pg_parse(const char *s, uint32_t *pool, uint32_t *pg)
{
	char *end;
	unsigned long a, b;

	if (s == NULL)
		return -EINVAL;
	a = strtoul(s, &end, 10);
	if (end == s || *end != '.')
		return -EINVAL;
	s = end + 1;
	b = strtoul(s, &end, 16);
	if (end == s || *end != '\0' || a > UINT32_MAX || b > UINT32_MAX)
		return -EINVAL;
	*pool = (uint32_t)a;
	*pg = (uint32_t)b;
	return 0;
}

/* pg ls [state]; pg scrub|deep-scrub|repair|verify {pgid[, token]}. NULL: not a pg command. */
json_t *mon_pg_cmd(struct mon *mon, const char *prefix, json_t *root, int *rc_out, char *err,
		   size_t errcap)
{
	*rc_out = 0;
	if (!strcmp(prefix, "pg ls")) {
		const char *want = json_string_value(json_object_get(root, "state"));
		json_t *list = json_array();

		for (uint32_t p = 0; p < mon->map.npools; p++) {
			const struct mon_pool *pool = &mon->map.pools[p];

			for (uint32_t g = 0; g < pool->pg_num; g++) {
				int32_t acting[PLC_MAX_REPLICAS];
				int n;
				const struct mon_pgent *e = mon_pg_current(mon, pool, g, acting, &n);
				json_t *a = json_array(), *o;
				char name[128], id[32];

				mon_pg_state_name(e, name, sizeof(name));
				if (want && !strstr(name, want)) {
					json_decref(a);
					continue;
				}
				for (int i = 0; i < n; i++)
					json_array_append_new(a, json_integer(acting[i]));
				snprintf(id, sizeof(id), "%u.%x", pool->id, g);
				o = json_pack("{s:s, s:s, s:o, s:i}", "pgid", id, "state", name,
					      "acting", a, "primary", n > 0 ? acting[0] : -1);
				if (e != NULL) {
					char v[40];

					snprintf(v, sizeof(v), "%u.%u",
						 (unsigned)(e->s.last_update >> 32),
						 (unsigned)e->s.last_update);
					json_object_set_new(o, "last_update", json_string(v));
					json_object_set_new(o, "objects", json_integer((json_int_t)e->s.objects));
					json_object_set_new(o, "missing", json_integer((json_int_t)e->s.missing));
					json_object_set_new(o, "inconsistent",
							    json_integer(e->s.inconsistent));
					json_object_set_new(o, "last_scrub", json_integer(e->s.last_scrub));
					json_object_set_new(o, "unfound", json_integer(e->s.unfound));
					json_object_set_new(o, "verify_token",
							    json_integer(e->s.verify_token));
					json_object_set_new(o, "verify_inconsistent",
							    json_integer(e->s.verify_inconsistent));
					json_object_set_new(o, "since", json_integer(e->s.same_since));
					if (e->s.nblocked > 0)
						json_object_set_new(o, "waiting_for",
								    mon_pg_blocked_json(&e->s));
				}
				json_array_append_new(list, o);
			}
		}
		return json_pack("{s:i, s:o}", "epoch", mon->map.epoch, "pg_stats", list);
	}
	if (!strcmp(prefix, "pg scrub") || !strcmp(prefix, "pg deep-scrub") ||
	    !strcmp(prefix, "pg repair") || !strcmp(prefix, "pg verify")) {
		const char *id = json_string_value(json_object_get(root, "pgid"));
		json_int_t token = json_integer_value(json_object_get(root, "token"));
		const struct mon_pool *pool;
		int32_t acting[PLC_MAX_REPLICAS];
		uint32_t pl, pg;
		struct mon_pgcmd *c;
		int n;

		if (mon_pg_parse(id, &pl, &pg) != 0 || (pool = mon_map_pool(&mon->map, pl)) == NULL ||
		    pg >= pool->pg_num) {
			*rc_out = -ENOENT;
			snprintf(err, errcap, "no such PG '%s' (POOLID.PG, PG in hex)", id ? id : "");
			return NULL;
		}
		if (token < 0 || token > UINT32_MAX) {
			*rc_out = -EINVAL;
			snprintf(err, errcap, "token: want an integer in [0, %u]", UINT32_MAX);
			return NULL;
		}
		n = plc_map_acting(&mon->map, pool, pg, acting);
		c = NULL;
		for (unsigned int i = 0; i < mon_pgs.ncmds && n > 0; i++)
			if (mon_pgs.cmds[i].pool == pl && mon_pgs.cmds[i].pg == pg &&
			    !strcmp(mon_pgs.cmds[i].op, prefix + 3))
				c = &mon_pgs.cmds[i]; /* asked again: one request, the newest token */
		if (c == NULL && (n <= 0 || mon_pgs.ncmds == MON_PG_CMDS_MAX)) {
			*rc_out = -EAGAIN;
			snprintf(err, errcap, "%s", n <= 0 ? "the PG has no OSD up" : "too many requests queued");
			return NULL;
		}
		if (c == NULL)
			c = &mon_pgs.cmds[mon_pgs.ncmds++];
		c->osd = (uint32_t)acting[0];
		c->token = (uint32_t)token;
		c->pool = pl;
		c->pg = pg;
		snprintf(c->op, sizeof(c->op), "%s", prefix + 3);
		return json_pack("{s:s, s:s, s:i}", "pgid", id, "op", c->op, "osd", acting[0]);
	}
	return NULL;
}
