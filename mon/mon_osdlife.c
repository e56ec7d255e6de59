/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OSD lifecycle on the monitors (docs/operations.md, "OSD lifecycle"):
 * `osd reweight` (the override that turns a share of an OSD's PGs away),
 * `osd crush reweight` (its placement weight), `osd rm` and `osd purge`
 * (take a down OSD out of the map; purge also out of the placement tree,
 * and only when nothing would be lost unless forced), and the two
 * questions an operator asks before touching OSDs: `osd safe-to-destroy`
 * and `osd ok-to-stop`. The answers read the PG states the OSDs report to
 * the leader (mon_pg.c), which is where reads are answered while there is
 * one (mon_svc.c); purge asks the same question when its job is built.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "mon/mon_priv.h"
#include "placement/plc_map.h"

#define MON_LIFE_IDS_MAX 64	 /* OSDs in one safe-to-destroy / ok-to-stop */
#define MON_LIFE_PGS_SHOWN 8	 /* PG ids named in a one-line reason */
#define MON_LIFE_PGS_LISTED 1024 /* PG ids listed in the JSON answer */

static const char *const mon_life_writes[] = {
	"osd reweight", "osd crush reweight", "osd rm", "osd purge", NULL,
};

bool mon_life_is_write(const char *prefix)
{
	for (unsigned int i = 0; prefix != NULL && mon_life_writes[i] != NULL; i++)
		if (!strcmp(prefix, mon_life_writes[i]))
			return true;
	return false;
}

/* A list of PG ids: all of them (up to a bound) in JSON, the first few in text. */
struct mon_life_pgs {
	json_t *ids;
	unsigned int n;
	char text[MON_LIFE_PGS_SHOWN * 16 + 8];
};

static void mon_life_pgs_init(struct mon_life_pgs *l)
{
	l->ids = json_array();
	l->n = 0;
	l->text[0] = '\0';
}

static void mon_life_pgs_add(struct mon_life_pgs *l, uint32_t pool, uint32_t pg)
{
	char id[24];
	size_t len = strlen(l->text);

	snprintf(id, sizeof(id), "%u.%x", pool, pg);
	if (l->n < MON_LIFE_PGS_LISTED)
		json_array_append_new(l->ids, json_string(id));
	if (l->n < MON_LIFE_PGS_SHOWN)
		snprintf(l->text + len, sizeof(l->text) - len, "%s%s", l->n ? " " : "", id);
	else if (l->n == MON_LIFE_PGS_SHOWN)
		snprintf(l->text + len, sizeof(l->text) - len, " ...");
	l->n++;
}

static bool mon_life_has(const uint32_t *ids, unsigned int n, int32_t osd)
{
	for (unsigned int i = 0; i < n; i++)
		if ((int32_t)ids[i] == osd)
			return true;
	return false;
}

/* "ids": [N, ...] (or "id": N), each an OSD of the map. */
static int mon_life_ids(struct mon *mon, json_t *root, uint32_t *ids, unsigned int *n_out,
			char *err, size_t cap)
{
	json_t *a = json_object_get(root, "ids"), *v;
	unsigned int n = 0;
	size_t i;

	if (a == NULL && json_object_get(root, "id") != NULL) {
		a = json_pack("[O]", json_object_get(root, "id"));
	} else if (!json_is_array(a) || json_array_size(a) == 0) {
		snprintf(err, cap, "give one or more OSD ids");
		return -EINVAL;
	} else {
		json_incref(a);
	}
	json_array_foreach(a, i, v) {
		json_int_t id = json_integer_value(v);

		if (!json_is_integer(v) || id < 0 || id >= MON_OSD_MAX || n >= MON_LIFE_IDS_MAX) {
			snprintf(err, cap, "OSD ids are integers in 0..%u, at most %u of them",
				 MON_OSD_MAX - 1, MON_LIFE_IDS_MAX);
			json_decref(a);
			return -EINVAL;
		}
		if (mon_map_osd(&mon->map, (uint32_t)id) == NULL) {
			snprintf(err, cap, "osd.%lld does not exist", (long long)id);
			json_decref(a);
			return -ENOENT;
		}
		if (!mon_life_has(ids, n, (int32_t)id))
			ids[n++] = (uint32_t)id;
	}
	json_decref(a);
	*n_out = n;
	return 0;
}

static json_t *mon_life_ids_json(const uint32_t *ids, unsigned int n)
{
	json_t *a = json_array();

	for (unsigned int i = 0; i < n; i++)
		json_array_append_new(a, json_integer(ids[i]));
	return a;
}

static void mon_life_who(const uint32_t *ids, unsigned int n, char *buf, size_t cap)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < n && len < cap; i++)
		len += (size_t)snprintf(buf + len, cap - len, "%sosd.%u", i ? "," : "", ids[i]);
}

/*
 * Safe to destroy: no PG maps to the OSDs (their data was moved off, or
 * they are down or out), and every PG of the cluster is active+clean as its
 * primary reported it at this epoch, so every object has its full count of
 * copies without them. As Ceph, a PG that is not clean anywhere makes every
 * OSD unsafe: we cannot tell which copies it is missing.
 */
static json_t *mon_life_destroy_check(struct mon *mon, const uint32_t *ids, unsigned int n)
{
	struct mon_life_pgs mapped, unclean;
	char who[MON_LIFE_IDS_MAX * 12], reason[2048] = "";
	uint64_t total = 0;
	json_t *out;

	mon_life_pgs_init(&mapped);
	mon_life_pgs_init(&unclean);
	for (uint32_t p = 0; p < mon->map.npools; p++) {
		const struct mon_pool *pool = &mon->map.pools[p];

		for (uint32_t g = 0; g < pool->pg_num; g++) {
			int32_t acting[PLC_MAX_REPLICAS];
			int na = 0;
			uint32_t st = mon_pg_state_now(mon, pool, g, acting, &na);
			bool hit = false;

			total++;
			for (int i = 0; i < na && !hit; i++)
				hit = mon_life_has(ids, n, acting[i]);
			if (hit)
				mon_life_pgs_add(&mapped, pool->id, g);
			if (!(st & PROTO_PGS_ACTIVE) || !(st & PROTO_PGS_CLEAN))
				mon_life_pgs_add(&unclean, pool->id, g);
		}
	}
	mon_life_who(ids, n, who, sizeof(who));
	if (mapped.n > 0)
		snprintf(reason, sizeof(reason), "%u pgs still map to %s (%s)", mapped.n, who,
			 mapped.text);
	if (unclean.n > 0)
		snprintf(reason + strlen(reason), sizeof(reason) - strlen(reason),
			 "%s%u of %llu pgs are not active+clean (%s), so some objects may have "
			 "copies only on %s",
			 reason[0] ? "; " : "", unclean.n, (unsigned long long)total, unclean.text,
			 who);
	out = json_pack("{s:i, s:o, s:b, s:I, s:o, s:o}", "epoch", mon->map.epoch, "osds",
			mon_life_ids_json(ids, n), "safe_to_destroy", mapped.n == 0 && unclean.n == 0,
			"num_pgs", (json_int_t)total, "mapped_pgs", mapped.ids, "unclean_pgs",
			unclean.ids);
	json_object_set_new(out, "reason", json_string(reason));
	return out;
}

/*
 * OK to stop: every PG that has one of the OSDs in its acting set keeps at
 * least min_size up members without them (so it stays active and takes
 * writes), and is active and not degraded now (a degraded PG may have its
 * only complete copy on them; as Ceph, we do not guess how degraded).
 */
static json_t *mon_life_stop_check(struct mon *mon, const uint32_t *ids, unsigned int n)
{
	json_t *bad = json_array(), *out;
	char reason[512] = "", st_name[96];
	unsigned int touched = 0, nbad = 0;

	for (uint32_t p = 0; p < mon->map.npools; p++) {
		const struct mon_pool *pool = &mon->map.pools[p];

		for (uint32_t g = 0; g < pool->pg_num; g++) {
			int32_t acting[PLC_MAX_REPLICAS];
			int na = 0, hit = 0;
			uint32_t st = mon_pg_state_now(mon, pool, g, acting, &na);
			char why[160] = "";

			for (int i = 0; i < na; i++)
				hit += mon_life_has(ids, n, acting[i]);
			if (hit == 0)
				continue;
			touched++;
			if ((unsigned int)(na - hit) < pool->min_size)
				snprintf(why, sizeof(why), "would keep %d of min_size %u replicas up",
					 na - hit, pool->min_size);
			else if (st == 0)
				snprintf(why, sizeof(why), "state unknown (no report at this epoch)");
			else if (!(st & PROTO_PGS_ACTIVE) || (st & PROTO_PGS_DEGRADED))
				snprintf(why, sizeof(why), "is %s now",
					 proto_pg_state_str(st, st_name, sizeof(st_name)));
			if (why[0] == '\0')
				continue;
			if (nbad < MON_LIFE_PGS_LISTED) {
				char id[24];

				snprintf(id, sizeof(id), "%u.%x", pool->id, g);
				json_array_append_new(bad,
						      json_pack("{s:s, s:s}", "pgid", id, "why", why));
			}
			if (nbad++ == 0)
				snprintf(reason, sizeof(reason), "pg %u.%x %s", pool->id, g, why);
		}
	}
	if (nbad > 1)
		snprintf(reason + strlen(reason), sizeof(reason) - strlen(reason),
			 " (and %u more pgs)", nbad - 1);
	out = json_pack("{s:i, s:o, s:b, s:i, s:o, s:s}", "epoch", mon->map.epoch, "osds",
			mon_life_ids_json(ids, n), "ok_to_stop", nbad == 0, "touched_pgs", touched,
			"bad_pgs", bad, "reason", reason);
	return out;
}

json_t *mon_life_read(struct mon *mon, const char *prefix, json_t *root, int *rc_out, char *err,
		      size_t errcap)
{
	uint32_t ids[MON_LIFE_IDS_MAX];
	unsigned int n = 0;

	*rc_out = 0;
	if (strcmp(prefix, "osd safe-to-destroy") != 0 && strcmp(prefix, "osd ok-to-stop") != 0)
		return NULL;
	*rc_out = mon_life_ids(mon, root, ids, &n, err, errcap);
	if (*rc_out != 0)
		return NULL;
	return !strcmp(prefix, "osd ok-to-stop") ? mon_life_stop_check(mon, ids, n)
						  : mon_life_destroy_check(mon, ids, n);
}

/* ----------------------------------------------------------------- writes */

/* A weight argument: a JSON number in [lo, hi], in 16.16 fixed point. */
static int mon_life_weight(struct mon_job *job, json_t *root, double lo, double hi,
			   uint32_t *w_out)
{
	json_t *v = json_object_get(root, "weight");
	double w = json_number_value(v);

	if (!json_is_number(v) || !isfinite(w) || w < lo || w > hi) {
		mon_job_refuse(job, "the weight must be a number in %g..%g", lo, hi);
		return -EINVAL;
	}
	*w_out = (uint32_t)lround(w * MON_WEIGHT_ONE);
	return 0;
}

static int mon_life_osd_arg(struct mon *mon, struct mon_job *job, json_t *root,
			    const struct mon_osd **o_out)
{
	json_t *v = json_object_get(root, "id");
	json_int_t id = json_integer_value(v);

	if (!json_is_integer(v) || id < 0 || id >= MON_OSD_MAX) {
		mon_job_refuse(job, "argument 'id' must be an OSD id in 0..%u", MON_OSD_MAX - 1);
		return -EINVAL;
	}
	*o_out = mon_map_osd(&mon->map, (uint32_t)id);
	if (*o_out == NULL) {
		mon_job_refuse(job, "osd.%lld does not exist", (long long)id);
		return -ENOENT;
	}
	return 0;
}

/* osd rm / osd purge: the OSD must be down (a running one would boot again). */
static int mon_life_remove(struct mon *mon, struct mon_job *job, json_t *root, bool purge,
			   const struct mon_osd *o, struct mon_inc *inc)
{
	struct mon_op op = { .kind = MON_OP_OSD_RM };
	int rc;

	if (purge && !json_is_true(json_object_get(root, "yes_i_really_mean_it"))) {
		mon_job_refuse(job, "this removes osd.%u from the map and the placement tree for "
			       "good; pass --yes-i-really-mean-it", o->id);
		return -EPERM;
	}
	if (o->state & MON_OSD_UP) {
		mon_job_refuse(job, "osd.%u is up; stop it (or mark it down) before removing it",
			       o->id);
		return -EBUSY;
	}
	if (purge && !json_is_true(json_object_get(root, "force"))) {
		json_t *chk = mon_life_destroy_check(mon, &o->id, 1);

		if (!json_is_true(json_object_get(chk, "safe_to_destroy"))) {
			mon_job_refuse(job, "osd.%u is not safe to destroy: %s; wait for recovery, "
				       "or pass --force to lose what only it holds", o->id,
				       json_string_value(json_object_get(chk, "reason")));
			json_decref(chk);
			return -EBUSY;
		}
		json_decref(chk);
	}
	op.osd_id = o->id;
	rc = mon_inc_add(inc, &op);
	if (rc == 0 && purge && mon_map_osd_loc(&mon->map, o->id) != 0) {
		struct mon_op loc = { .kind = MON_OP_OSD_LOC };

		loc.loc.osd = o->id;
		loc.loc.parent = 0; /* clear: out of the placement tree */
		rc = mon_inc_add(inc, &loc);
	}
	/* purge removes osd.N's key too, once this increment is applied (mon_raft.c) */
	if (purge) {
		job->purge_key = true;
		job->purge_id = o->id;
	}
	snprintf(inc->reason, sizeof(inc->reason), "'osd %s %u'%s by an operator",
		 purge ? "purge" : "rm", o->id,
		 purge && json_is_true(json_object_get(root, "force")) ? " (forced)" : "");
	return rc;
}

int mon_life_job(struct mon *mon, struct mon_job *job, json_t *root, const char *prefix,
		 struct mon_inc *inc)
{
	struct mon_op op = { .kind = MON_OP_OSD_SET };
	const struct mon_osd *o = NULL;
	uint32_t w;
	int rc;

	rc = mon_life_osd_arg(mon, job, root, &o);
	if (rc != 0)
		return rc;
	if (!strcmp(prefix, "osd rm") || !strcmp(prefix, "osd purge"))
		return mon_life_remove(mon, job, root, prefix[4] == 'p', o, inc);
	op.osd = *o;
	if (!strcmp(prefix, "osd reweight")) {
		rc = mon_life_weight(job, root, 0.0, 1.0, &w);
		if (rc != 0)
			return rc;
		op.osd.reject = MON_WEIGHT_ONE - w;
		if (op.osd.reject == o->reject)
			return 1;
		snprintf(inc->reason, sizeof(inc->reason), "'osd reweight %u %.4f' by an operator",
			 o->id, (double)w / MON_WEIGHT_ONE);
		return mon_inc_add(inc, &op);
	}
	/* osd crush reweight: the placement weight (0 takes no data) */
	rc = mon_life_weight(job, root, 0.0, 65535.0, &w);
	if (rc != 0)
		return rc;
	op.osd.weight = w;
	if (op.osd.weight == o->weight)
		return 1;
	snprintf(inc->reason, sizeof(inc->reason), "'osd crush reweight osd.%u %.4f' by an operator",
		 o->id, (double)w / MON_WEIGHT_ONE);
	rc = mon_inc_add(inc, &op);
	/* more weight is more capacity: pin what would move between the others */
	if (rc == 0 && w > o->weight && mon_crush_pin(mon, inc) != 0)
		log_error("mon", "%s: osd.%u: cannot pin PGs; placement moves them", mon->name, o->id);
	return rc;
}
