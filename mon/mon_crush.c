/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The topology and the balancer in the monitors: `osd crush ...` commands
 * (buckets, moves, OSD locations), `osd tree`, the PG_UNDERSIZED_DOMAIN
 * health check, and the leader's balancer rounds (`balancer
 * status|on|off|eval`). Placement itself is placement/ (plc_map.c), the
 * same code clients and OSDs run. docs/scale.md describes the design.
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

/* ------------------------------------------------------------------ reads */

static void mon_tree_node_json(const struct mon_map *map, const struct plc_tree *t, uint32_t n,
			       int depth, json_t *out)
{
	const struct plc_node *nd = &t->nodes[n];

	json_array_append_new(out, json_pack("{s:i, s:s, s:s, s:f, s:i, s:b}", "id", nd->id, "name",
					     nd->name, "type", mon_crush_type_str(nd->type) ?: "?",
					     "weight", nd->weight, "depth", depth, "implicit",
					     nd->implicit));
	for (uint32_t c = 0; c < nd->nchild; c++) {
		const struct plc_child *ch = &t->child[nd->first + c];

		if (ch->ref >= 0 && depth < PLC_TREE_TYPES) {
			mon_tree_node_json(map, t, (uint32_t)ch->ref, depth + 1, out);
		} else if (ch->ref < 0) {
			const struct mon_osd *o = mon_map_osd(map, (uint32_t)(-1 - ch->ref));

			if (o == NULL)
				continue;
			json_array_append_new(
			    out, json_pack("{s:i, s:s, s:s, s:f, s:i, s:s, s:b, s:b, s:f}", "id",
					   o->id, "name", "", "type", "osd", "weight",
					   o->weight / 65536.0, "depth", depth + 1, "state",
					   mon_osd_state_str(o->state), "up",
					   (o->state & MON_OSD_UP) != 0, "in",
					   (o->state & MON_OSD_IN) != 0, "reweight",
					   mon_osd_reweight(o)));
		}
	}
}

/* The tree placement uses (explicit buckets and the ones made up from host names). */
json_t *mon_crush_tree_json(struct mon *mon)
{
	const struct plc_tree *t = plc_map_tree(&mon->map);
	json_t *nodes = json_array();

	for (uint32_t i = 0; t != NULL && i < t->nnodes; i++)
		if (t->nodes[i].parent < 0)
			mon_tree_node_json(&mon->map, t, i, 0, nodes);
	return nodes;
}

/* PG_UNDERSIZED_DOMAIN: a pool wants more failure domains than hold an up+in OSD. */
void mon_crush_health(struct mon *mon, json_t *checks, const char **status)
{
	const struct plc_tree *t;

	if (mon->map.npools == 0 || (t = plc_map_tree(&mon->map)) == NULL)
		return;
	for (uint32_t i = 0; i < mon->map.npools; i++) {
		const struct mon_pool *p = &mon->map.pools[i];
		struct plc_rule rule;
		unsigned int nd;

		if (plc_map_rule(t, &mon->map, p, &rule) != 0) {
			mon_health_add(checks, status, "POOL_RULE_ROOT_MISSING", true, NULL,
				       "pool '%s': its rule's root is not in the map", p->name);
			continue;
		}
		nd = plc_tree_domains(t, &rule);
		if (nd >= rule.size)
			continue;
		mon_health_add(checks, status, "PG_UNDERSIZED_DOMAIN", false, NULL,
			       "pool '%s' puts %u replicas in distinct %ss under '%s' but only %u "
			       "%s(s) have an up+in OSD: replicas share a %s",
			       p->name, rule.size, mon_crush_type_str(rule.domain),
			       t->nodes[rule.root].name, nd, mon_crush_type_str(rule.domain),
			       mon_crush_type_str(rule.domain));
	}
}

static bool mon_balancer_enabled(const struct mon *mon)
{
	if (mon->map.balancer == MON_BALANCER_ON)
		return true;
	if (mon->map.balancer == MON_BALANCER_OFF)
		return false;
	return conf_get_bool(mon->conf, CONF_MON_BALANCER_ENABLE);
}

/* The pool's items from the map, and room for a round's new ones. */
static struct plc_upmap *mon_bal_items(const struct mon_map *map, unsigned int extra,
				       unsigned int *n_out, unsigned int *cap_out)
{
	unsigned int n = 0;
	const struct plc_upmap *cur = plc_map_items(map, &n);
	struct plc_upmap *items = malloc((n + extra + 1) * sizeof(*items));

	if (items == NULL)
		return NULL;
	if (n > 0)
		memcpy(items, cur, n * sizeof(*items));
	*n_out = n;
	*cap_out = n + extra;
	return items;
}

static json_t *mon_bal_eval(struct mon *mon)
{
	const struct plc_tree *t = plc_map_tree(&mon->map);
	json_t *pools = json_array();
	double dev = conf_get_int(mon->conf, CONF_MON_BALANCER_DEVIATION) / 100.0;

	for (uint32_t i = 0; t != NULL && i < mon->map.npools; i++) {
		const struct mon_pool *p = &mon->map.pools[i];
		unsigned int n, cap, *load = calloc(t->max_osd + 1, sizeof(*load)), outside = 0;
		unsigned int extra = p->pg_num * p->size;
		double *share = calloc(t->max_osd + 1, sizeof(*share)), worst = 0;
		struct plc_upmap *items = mon_bal_items(&mon->map, extra, &n, &cap);
		struct plc_bal_stats st = {0};
		struct plc_rule rule;
		int moves = -EINVAL;

		if (load && share && items && plc_map_rule(t, &mon->map, p, &rule) == 0 &&
		    plc_tree_loads(t, &rule, p->pg_num, items, n, load, share) == 0) {
			for (uint32_t o = 0; o < t->max_osd; o++) {
				double tol = share[o] * dev < 1 ? 1 : share[o] * dev;

				if (share[o] <= 0)
					continue;
				outside += fabs(load[o] - share[o]) > tol;
				if (fabs(load[o] / share[o] - 1) > worst)
					worst = fabs(load[o] / share[o] - 1);
			}
			moves =
			    plc_tree_balance(t, &rule, p->pg_num, dev, extra, items, &n, cap, &st);
		}
		json_array_append_new(pools, json_pack("{s:s, s:f, s:i, s:i, s:i}", "pool", p->name,
						       "max_deviation_pct", worst * 100,
						       "osds_outside", outside,
						       "balancer_would_move", moves < 0 ? 0 : moves,
						       "invalid_items", st.dropped));
		free(load);
		free(share);
		free(items);
	}
	return json_pack("{s:i, s:i, s:o}", "epoch", mon->map.epoch, "upmap_items",
			 mon->map.nupmaps, "pools", pools);
}

json_t *mon_crush_read(struct mon *mon, const char *prefix)
{
	if (!strcmp(prefix, "balancer eval"))
		return mon_bal_eval(mon);
	if (!strcmp(prefix, "balancer status")) {
		uint64_t now = clock_now_ms();

		return json_pack(
		    "{s:s, s:b, s:i, s:s, s:I, s:I, s:I, s:I}", "mode",
		    mon->map.balancer == MON_BALANCER_ON    ? "on"
		    : mon->map.balancer == MON_BALANCER_OFF ? "off"
							    : "default",
		    "active", mon_balancer_enabled(mon), "upmap_items", mon->map.nupmaps,
		    "last_result", mon->bal_last, "last_round_ago_s",
		    mon->bal_last_ms ? (json_int_t)((now - mon->bal_last_ms) / 1000) : -1,
		    "max_misplaced_pct",
		    (json_int_t)conf_get_int(mon->conf, CONF_MON_BALANCER_MAX_MISPLACED),
		    "deviation_pct",
		    (json_int_t)conf_get_int(mon->conf, CONF_MON_BALANCER_DEVIATION), "interval_s",
		    (json_int_t)(conf_get_duration_us(mon->conf, CONF_MON_BALANCER_INTERVAL) /
				 1000000));
	}
	return NULL;
}

/* ----------------------------------------------------------------- writes */

/* Buckets made earlier in this increment (not in the map yet). */
struct mon_crush_pending {
	struct mon_bucket b[PLC_TREE_TYPES + 1];
	unsigned int n;
	int32_t next_id;
};

static const struct mon_bucket *mon_crush_find(const struct mon *mon,
					       const struct mon_crush_pending *p, const char *name)
{
	for (unsigned int i = 0; i < p->n; i++)
		if (!strcmp(p->b[i].name, name))
			return &p->b[i];
	return mon_map_bucket_by_name(&mon->map, name);
}

static int mon_crush_new(struct mon_job *job, struct mon_crush_pending *p, struct mon_inc *inc,
			 const char *name, uint8_t type, int32_t parent, int32_t *id_out)
{
	struct mon_op op = {.kind = MON_OP_BUCKET_SET};

	if (strlen(name) == 0 || strlen(name) > MON_NAME_MAX || p->n > PLC_TREE_TYPES) {
		mon_job_refuse(job, "bucket names are 1..%d characters", MON_NAME_MAX);
		return -EINVAL;
	}
	op.bucket.id = p->next_id--;
	op.bucket.type = type;
	op.bucket.parent = parent;
	snprintf(op.bucket.name, sizeof(op.bucket.name), "%s", name);
	p->b[p->n++] = op.bucket;
	*id_out = op.bucket.id;
	return mon_inc_add(inc, &op);
}

/*
 * A location {"root": "default", "rack": "r1", ...}: the lowest bucket it
 * names (made, with the ones above it, when missing) into *parent_out; 0
 * for an empty location. below: the type of what will go there.
 */
static int mon_crush_loc(struct mon *mon, struct mon_job *job, json_t *loc, uint8_t below,
			 struct mon_crush_pending *p, struct mon_inc *inc, int32_t *parent_out)
{
	const char *names[MON_CT_COUNT] = {NULL};
	const char *key;
	json_t *v;
	int32_t parent = 0;
	int rc;

	if (loc != NULL && !json_is_object(loc)) {
		mon_job_refuse(job, "a location is TYPE=NAME words (root=default rack=r1)");
		return -EINVAL;
	}
	json_object_foreach(loc, key, v)
	{
		uint8_t type = mon_crush_type_parse(key);

		if (type < MON_CT_HOST || !json_is_string(v)) {
			mon_job_refuse(job,
				       "'%s' is not a bucket type (host, chassis, rack, row, "
				       "pdu, pod, room, datacenter, zone, region, root)",
				       key);
			return -EINVAL;
		}
		if (type <= below) {
			mon_job_refuse(job, "a %s cannot hold a %s", key,
				       mon_crush_type_str(below));
			return -EINVAL;
		}
		names[type] = json_string_value(v);
	}
	for (int type = MON_CT_COUNT - 1; type >= MON_CT_HOST; type--) {
		const struct mon_bucket *b;

		if (names[type] == NULL)
			continue;
		b = mon_crush_find(mon, p, names[type]);
		if (b != NULL && b->type != type) {
			mon_job_refuse(job, "bucket '%s' is a %s, not a %s", names[type],
				       mon_crush_type_str(b->type), mon_crush_type_str(type));
			return -EINVAL;
		}
		if (b != NULL) {
			parent = b->id;
			continue;
		}
		rc = mon_crush_new(job, p, inc, names[type], (uint8_t)type, parent, &parent);
		if (rc != 0)
			return rc;
	}
	*parent_out = parent;
	return 0;
}

static bool mon_host_name_used(const struct mon_map *map, const char *name)
{
	for (uint32_t i = 0; i < map->max_osd; i++)
		if (mon_map_osd(map, i) != NULL && !strcmp(map->osds[i].host, name))
			return true;
	return false;
}

static int mon_crush_build(struct mon *mon, struct mon_job *job, json_t *root, const char *prefix,
			   struct mon_inc *inc)
{
	struct mon_crush_pending p = {.next_id = -1};
	const char *name = json_string_value(json_object_get(root, "name"));
	json_t *loc = json_object_get(root, "loc");
	struct mon_op op = {0};
	const struct mon_bucket *b;
	int32_t parent = 0;
	int rc;

	if (mon->map.nbuckets > 0)
		p.next_id = mon->map.buckets[mon->map.nbuckets - 1].id - 1;
	if (!strcmp(prefix, "balancer on") || !strcmp(prefix, "balancer off")) {
		op.kind = MON_OP_BALANCER;
		op.balancer = prefix[10] == 'n' ? MON_BALANCER_ON : MON_BALANCER_OFF;
		if (op.balancer == mon->map.balancer)
			return 1;
		snprintf(inc->reason, sizeof(inc->reason), "'%s' by an operator", prefix);
		return mon_inc_add(inc, &op);
	}
	if (!strcmp(prefix, "osd crush set-location")) {
		uint32_t id;
		json_t *v = json_object_get(root, "id");

		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    mon_map_osd(&mon->map, (uint32_t)(id = (uint32_t)json_integer_value(v))) ==
			NULL) {
			mon_job_refuse(job, "no such osd");
			return -ENOENT;
		}
		rc = mon_crush_loc(mon, job, loc, MON_CT_OSD, &p, inc, &parent);
		if (rc != 0)
			return rc;
		if (parent == mon_map_osd_loc(&mon->map, id))
			return 1;
		op.kind = MON_OP_OSD_LOC;
		op.loc.osd = id;
		op.loc.parent = parent;
		snprintf(inc->reason, sizeof(inc->reason), "osd.%u located by an operator", id);
		return mon_inc_add(inc, &op);
	}
	if (name == NULL || name[0] == '\0' || strlen(name) > MON_NAME_MAX) {
		mon_job_refuse(job, "a bucket name of 1..%d characters is required", MON_NAME_MAX);
		return -EINVAL;
	}
	b = mon_map_bucket_by_name(&mon->map, name);
	if (!strcmp(prefix, "osd crush add-bucket")) {
		const char *ts = json_string_value(json_object_get(root, "type"));
		uint8_t type = ts ? mon_crush_type_parse(ts) : MON_CT_NONE;
		int32_t id;

		if (type < MON_CT_HOST) {
			mon_job_refuse(job, "'%s' is not a bucket type", ts ? ts : "");
			return -EINVAL;
		}
		if (b != NULL && b->type == type && loc == NULL)
			return 1; /* already there: nothing to do */
		if (b != NULL) {
			mon_job_refuse(job, "bucket '%s' exists as a %s (osd crush move places it)",
				       name, mon_crush_type_str(b->type));
			return -EEXIST;
		}
		rc = mon_crush_loc(mon, job, loc, type, &p, inc, &parent);
		if (rc == 0)
			rc = mon_crush_new(job, &p, inc, name, type, parent, &id);
		snprintf(inc->reason, sizeof(inc->reason), "bucket '%s' (%s) added by an operator",
			 name, mon_crush_type_str(type));
		return rc;
	}
	if (!strcmp(prefix, "osd crush move")) {
		/* a host bucket only made up from OSDs' host names becomes explicit */
		uint8_t type = b != NULL ? b->type : MON_CT_HOST;

		if (b == NULL && !mon_host_name_used(&mon->map, name)) {
			mon_job_refuse(job, "no bucket or OSD host named '%s'", name);
			return -ENOENT;
		}
		rc = mon_crush_loc(mon, job, loc, type, &p, inc, &parent);
		if (rc != 0)
			return rc;
		snprintf(inc->reason, sizeof(inc->reason), "bucket '%s' moved by an operator",
			 name);
		if (b == NULL) {
			int32_t id;

			return mon_crush_new(job, &p, inc, name, type, parent, &id);
		}
		if (b->parent == parent)
			return 1;
		op.kind = MON_OP_BUCKET_SET;
		op.bucket = *b;
		op.bucket.parent = parent;
		return mon_inc_add(inc, &op);
	}
	/* osd crush rm NAME */
	if (b == NULL) {
		mon_job_refuse(job, "no bucket named '%s'", name);
		return -ENOENT;
	}
	op.kind = MON_OP_BUCKET_RM;
	op.bucket_id = b->id;
	for (uint32_t i = 0; i < mon->map.nbuckets; i++)
		if (mon->map.buckets[i].parent == b->id) {
			mon_job_refuse(job, "bucket '%s' holds '%s'", name,
				       mon->map.buckets[i].name);
			return -EBUSY;
		}
	for (uint32_t i = 0; i < mon->map.nlocs; i++)
		if (mon->map.locs[i].parent == b->id) {
			mon_job_refuse(job, "bucket '%s' holds osd.%u", name, mon->map.locs[i].osd);
			return -EBUSY;
		}
	for (uint32_t i = 0; i < mon->map.npools; i++)
		if (mon->map.pools[i].root == b->id) {
			mon_job_refuse(job, "pool '%s' places under '%s'", mon->map.pools[i].name,
				       name);
			return -EBUSY;
		}
	snprintf(inc->reason, sizeof(inc->reason), "bucket '%s' removed by an operator", name);
	return mon_inc_add(inc, &op);
}

int mon_crush_job(struct mon *mon, struct mon_job *job, json_t *root, const char *prefix,
		  struct mon_inc *inc)
{
	int rc = mon_crush_build(mon, job, root, prefix, inc);

	/* a topology change moves data like new capacity does: pin it likewise */
	if (rc == 0 && strncmp(prefix, "balancer", 8) != 0 && mon_crush_pin(mon, inc) != 0)
		log_error("mon", "%s: cannot pin PGs for '%s': placement moves them", mon->name,
			  prefix);
	return rc;
}

static int mon_bal_diff(struct mon_inc *inc, uint32_t pool, const struct plc_upmap *a,
			unsigned int na, const struct plc_upmap *b, unsigned int nb);

/* --------------------------------------------------------------- pinning */

/*
 * inc adds capacity (a new OSD, a bucket moved): straw2 per tree level
 * would move about one pool share per level, mostly between old OSDs.
 * With the balancer on, pin every replica that would move between old
 * OSDs where it is (upmap items in the same increment), and let the
 * balancer's rounds fill the new OSDs from the fullest ones: the data
 * moved stays near the optimum (docs/scale.md, weft sim "pinned").
 */
int mon_crush_pin(struct mon *mon, struct mon_inc *inc)
{
	struct mon_map next;
	const struct plc_tree *t;
	uint8_t *fresh = NULL;
	int rc = 0;

	if (!mon_balancer_enabled(mon) || mon->map.npools == 0)
		return 0;
	mon_map_init(&next);
	rc = mon_map_copy(&next, &mon->map);
	if (rc == 0) {
		inc->epoch = mon->map.epoch + 1;
		rc = mon_map_apply(&next, inc);
	}
	t = rc == 0 ? plc_map_tree(&next) : NULL;
	if (rc == 0 && t == NULL)
		rc = -ENOMEM;
	if (rc == 0 && (fresh = calloc(next.max_osd + 1, 1)) == NULL)
		rc = -ENOMEM;
	for (uint32_t i = 0; rc == 0 && i < next.max_osd; i++) {
		const struct mon_osd *o = mon_map_osd(&mon->map, i), *n = mon_map_osd(&next, i);

		fresh[i] = n != NULL && (o == NULL || n->weight > o->weight);
	}
	for (uint32_t i = 0; rc == 0 && i < next.npools; i++) {
		const struct mon_pool *p = &next.pools[i];
		size_t slots = (size_t)p->pg_num * p->size;
		int32_t *old = malloc(slots * sizeof(*old));
		unsigned int n, cap, n0, pinned = 0;
		struct plc_upmap *items = mon_bal_items(&next, (unsigned int)slots, &n, &cap);
		struct plc_upmap *before = mon_bal_items(&next, 0, &n0, &cap);
		struct plc_rule rule;

		cap = n + (unsigned int)slots;
		if (old == NULL || items == NULL || before == NULL)
			rc = -ENOMEM;
		for (uint32_t g = 0; rc == 0 && g < p->pg_num; g++) {
			int32_t *set = old + (size_t)g * p->size;
			int k = plc_map_acting(&mon->map, mon_map_pool(&mon->map, p->id), g, set);

			for (unsigned int c = k < 0 ? 0 : (unsigned int)k; c < p->size; c++)
				set[c] = -1;
		}
		if (rc == 0 && mon_map_pool(&mon->map, p->id) != NULL &&
		    plc_map_rule(t, &next, p, &rule) == 0)
			rc = plc_tree_pin(t, &rule, p->pg_num, old, fresh, items, &n, cap, &pinned);
		if (rc == 0 && pinned > 0) {
			rc = mon_bal_diff(inc, p->id, before, n0, items, n);
			log_info("mon",
				 "%s: pool %u: %u replicas pinned where they are; the balancer "
				 "fills the new capacity",
				 mon->name, p->id, pinned);
		}
		free(old);
		free(items);
		free(before);
	}
	free(fresh);
	mon_map_free(&next);
	return rc;
}

/* --------------------------------------------------------------- balancer */

/* Changes between two sorted item lists of one pool become ops. */
static int mon_bal_diff(struct mon_inc *inc, uint32_t pool, const struct plc_upmap *a,
			unsigned int na, const struct plc_upmap *b, unsigned int nb)
{
	unsigned int i = 0, j = 0;
	int rc = 0;

	while (rc == 0 && (i < na || j < nb) && inc->nops < MON_INC_OPS_MAX) {
		struct mon_op op = {0};
		int c;

		if (i < na && a[i].pool != pool) {
			i++;
			continue;
		}
		if (j < nb && b[j].pool != pool) {
			j++;
			continue;
		}
		if (i == na)
			c = 1;
		else if (j == nb)
			c = -1;
		else
			c = a[i].pg != b[j].pg
				? (a[i].pg < b[j].pg ? -1 : 1)
				: (a[i].from < b[j].from ? -1 : a[i].from > b[j].from);
		if (c < 0) { /* gone */
			op.kind = MON_OP_UPMAP_RM;
			op.upmap = (struct mon_upmap){pool, a[i].pg, a[i].from, a[i].to};
			i++;
		} else if (c > 0) { /* new */
			op.kind = MON_OP_UPMAP_SET;
			op.upmap = (struct mon_upmap){pool, b[j].pg, b[j].from, b[j].to};
			j++;
		} else {
			bool same = a[i].to == b[j].to;

			op.kind = MON_OP_UPMAP_SET;
			op.upmap = (struct mon_upmap){pool, b[j].pg, b[j].from, b[j].to};
			i++;
			j++;
			if (same)
				continue;
		}
		rc = mon_inc_add(inc, &op);
	}
	return rc;
}

/* Why a round cannot start now, or NULL. */
static const char *mon_bal_blocked(struct mon *mon, uint64_t *replicas_out, uint64_t *budget_out)
{
	json_t *sum = mon_pg_json_summary(mon), *states = json_object_get(sum, "states");
	json_int_t pgs = json_integer_value(json_object_get(sum, "num_pgs"));
	json_int_t clean = json_integer_value(json_object_get(states, "active+clean"));
	uint64_t replicas = 0, limit, moving;
	double pct = conf_get_int(mon->conf, CONF_MON_BALANCER_MAX_MISPLACED) / 100.0;
	const char *why = NULL;

	json_decref(sum);
	for (uint32_t i = 0; i < mon->map.npools; i++)
		replicas += (uint64_t)mon->map.pools[i].pg_num * mon->map.pools[i].size;
	for (uint32_t i = 0; i < mon->map.max_osd && why == NULL; i++) {
		const struct mon_osd *o = mon_map_osd(&mon->map, i);

		if (o != NULL && (o->state & MON_OSD_IN) && !(o->state & MON_OSD_UP))
			why = "an in OSD is down: waiting for it to come back or be marked out";
	}
	limit = (uint64_t)(pct * (double)replicas);
	/* replicas of PGs not active+clean count as moving (misplaced or degraded) */
	moving = pgs > clean ? (uint64_t)(pgs - clean) * replicas / (uint64_t)pgs : 0;
	if (why == NULL && pgs > 0 && clean == 0)
		why = "no PG is active+clean yet";
	if (why == NULL && moving > limit)
		why = "more than mon_balancer_max_misplaced of the replicas are moving";
	*replicas_out = replicas;
	/* what is moving already counts against this round's share; one move at least */
	*budget_out = limit > moving ? limit - moving : 1;
	return why;
}

static int mon_job_build_balance(struct mon *mon, struct mon_job *job, struct mon_inc *inc)
{
	const struct plc_tree *t = plc_map_tree(&mon->map);
	double dev = conf_get_int(mon->conf, CONF_MON_BALANCER_DEVIATION) / 100.0;
	uint64_t replicas = 0, budget = 0;
	const char *why;
	unsigned int moved = 0;
	int rc = 0;

	(void)job;
	mon->bal_queued = false;
	mon->bal_last_ms = clock_now_ms();
	if (!mon_balancer_enabled(mon)) {
		snprintf(mon->bal_last, sizeof(mon->bal_last), "off");
		return 1;
	}
	why = mon_bal_blocked(mon, &replicas, &budget);
	if (why != NULL) {
		snprintf(mon->bal_last, sizeof(mon->bal_last), "waiting: %s", why);
		return 1;
	}
	for (uint32_t i = 0; t != NULL && i < mon->map.npools && rc == 0; i++) {
		const struct mon_pool *p = &mon->map.pools[i];
		unsigned int n, cap, n0;
		unsigned int extra =
		    (unsigned int)(budget < p->pg_num * p->size ? budget : p->pg_num * p->size);
		struct plc_upmap *items = mon_bal_items(&mon->map, extra + 1, &n, &cap);
		struct plc_upmap *before = mon_bal_items(&mon->map, 0, &n0, &cap);
		struct plc_rule rule;
		int moves;

		cap = n + extra + 1;
		if (items == NULL || before == NULL) {
			rc = -ENOMEM;
		} else if (plc_map_rule(t, &mon->map, p, &rule) == 0) {
			moves =
			    plc_tree_balance(t, &rule, p->pg_num, dev, extra, items, &n, cap, NULL);
			if (moves >= 0) {
				moved += (unsigned int)moves;
				budget -= (uint64_t)moves < budget ? (uint64_t)moves : budget;
				rc = mon_bal_diff(inc, p->id, before, n0, items, n);
			} else if (moves != -ENOSPC) {
				rc = moves;
			}
		}
		free(items);
		free(before);
	}
	if (rc != 0) {
		snprintf(mon->bal_last, sizeof(mon->bal_last), "failed: %s", strerror(-rc));
		return rc;
	}
	if (inc->nops == 0) {
		snprintf(mon->bal_last, sizeof(mon->bal_last),
			 "balanced: every OSD within %.0f%% of "
			 "its share (or 1 PG)",
			 dev * 100);
		return 1;
	}
	snprintf(mon->bal_last, sizeof(mon->bal_last),
		 "round at epoch %u: %u replicas moved, %u "
		 "item changes",
		 mon->map.epoch + 1, moved, inc->nops);
	snprintf(inc->reason, sizeof(inc->reason), "balancer: %u replicas moved (%u item changes)",
		 moved, inc->nops);
	return 0;
}

void mon_balancer_tick(struct mon *mon)
{
	uint64_t now = clock_now_ms();
	uint64_t every = conf_get_duration_us(mon->conf, CONF_MON_BALANCER_INTERVAL) / 1000;
	struct mon_job *job;

	/* norebalance: no upmap changes (pinning at a boot still keeps data where it is) */
	if (mon->bal_queued || now - mon->bal_tick_ms < every || mon->map.npools == 0 ||
	    (mon->map.flags & MON_FLAG_NOREBALANCE))
		return;
	mon->bal_tick_ms = now;
	job = mon_job_alloc(NULL, 0, mon_job_build_balance);
	if (job == NULL)
		return;
	mon->bal_queued = true;
	if (mon_job_submit(mon, job) != 0)
		mon->bal_queued = false;
}
