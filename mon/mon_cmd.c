/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Commands: a JSON object {"prefix": "osd tree", ...args}. Reads are
 * answered from this monitor's applied map; writes become jobs whose
 * increment is built (and every argument checked) against the map at the
 * moment they are proposed. The output is JSON; the CLI renders it.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/name.h"
#include "mon/mon_priv.h"
#include "placement/plc_map.h"
#include "placement/plc_tree.h"

static const char *const mon_write_cmds[] = {
	"osd down", "osd out", "osd in", "osd set", "osd unset",
	"pool create", "pool rm", "pool set", "osd crush add-bucket", "osd crush move",
	"osd crush set-location", "osd crush rm", "balancer on", "balancer off",
	"osd set-nearfull-ratio", "osd set-backfillfull-ratio", "osd set-full-ratio",
	"pool set-quota", "mon add", "mon remove", "mon rm", "mon _register", "health mute",
	"health unmute", "osd blocklist add", "osd blocklist rm", NULL,
};

static bool mon_prefix_in(const char *json, size_t len, const char *const *list)
{
	json_t *root = json_loadb(json, len, 0, NULL);
	const char *p = json_string_value(json_object_get(root, "prefix"));
	bool hit = false;

	for (unsigned int i = 0; p != NULL && list[i] != NULL && !hit; i++)
		hit = !strcmp(p, list[i]);
	json_decref(root);
	return hit;
}

bool mon_cmd_is_write(const char *json, size_t len)
{
	json_t *root;
	bool life;

	if (mon_prefix_in(json, len, mon_write_cmds))
		return true;
	root = json_loadb(json, len, 0, NULL);
	life = mon_life_is_write(json_string_value(json_object_get(root, "prefix"))) ||
	       mon_auth_is_write(json_string_value(json_object_get(root, "prefix")));
	json_decref(root);
	return life;
}

/* ------------------------------------------------------------------ reads */

static json_t *mon_json_osd(const struct mon_osd *o)
{
	char uuid[37];

	mon_uuid_str(o->uuid, uuid);
	return json_pack("{s:i, s:s, s:s, s:b, s:b, s:f, s:f, s:s, s:s, s:s, s:i, s:i, s:s}",
			 "id", o->id, "uuid", uuid, "host", o->host, "up",
			 (o->state & MON_OSD_UP) != 0, "in", (o->state & MON_OSD_IN) != 0, "weight",
			 o->weight / 65536.0, "reweight", mon_osd_reweight(o), "public_addr",
			 o->public_addr, "cluster_addr", o->cluster_addr, "state",
			 mon_osd_state_str(o->state), "up_from", o->up_from, "down_at",
			 o->down_at, "fullness", mon_osd_fullness_str(o->state));
}

static json_t *mon_json_pools(const struct mon_map *map)
{
	json_t *a = json_array();

	for (uint32_t i = 0; i < map->npools; i++) {
		const struct mon_pool *p = &map->pools[i];

		const struct mon_bucket *r = p->root ? mon_map_bucket(map, p->root) : NULL;

		json_array_append_new(
			a, json_pack("{s:i, s:s, s:i, s:i, s:i, s:s, s:s, s:I, s:I, s:b}", "id", p->id,
				     "name", p->name, "size", p->size, "min_size", p->min_size,
				     "pg_num", p->pg_num, "failure_domain",
				     mon_crush_type_str(p->domain ? p->domain : MON_CT_HOST), "root",
				     r != NULL ? r->name : "default", "quota_max_bytes",
				     (json_int_t)p->quota_max_bytes, "quota_max_objects",
				     (json_int_t)p->quota_max_objects, "full",
				     (p->flags & MON_POOL_F_FULL) != 0));
	}
	return a;
}

static json_t *mon_cmd_status(struct mon *mon, const char *prefix)
{
	uint32_t total, up, in;
	unsigned int nq;
	bool have;
	json_t *quorum = mon_member_quorum_json(mon, &have, &nq), *health, *out;
	char f[MON_FLAGS_STR_MAX];

	health = mon_json_health(mon, have, nq);
	if (!strcmp(prefix, "health")) {
		json_decref(quorum);
		return health;
	}
	if (!strcmp(prefix, "mon stat")) {
		json_decref(health);
		json_object_set_new(quorum, "epoch", json_integer(mon->map.epoch));
		return quorum;
	}
	mon_map_osd_counts(&mon->map, &total, &up, &in);
	out = json_pack("{s:o, s:o, s:{s:i, s:i, s:i, s:i, s:s}, s:o, s:o}", "health",
			health, "monmap", quorum, "osdmap", "epoch", mon->map.epoch, "num_osds",
			total, "num_up_osds", up, "num_in_osds", in, "flags",
			mon_flags_str(mon->map.flags, f, sizeof(f)), "pools",
			mon_json_pools(&mon->map), "pgmap", mon_pg_json_summary(mon));
	json_object_set_new(out, "usage", mon_cap_status(mon));
	return out;
}

static json_t *mon_cmd_osd_tree(struct mon *mon)
{
	json_t *hosts = json_object(), *out = json_array();
	const char *h;
	json_t *v;

	for (uint32_t i = 0; i < mon->map.max_osd; i++) {
		const struct mon_osd *o = mon_map_osd(&mon->map, i);
		json_t *list;

		if (o == NULL)
			continue;
		list = json_object_get(hosts, o->host);
		if (list == NULL) {
			list = json_array();
			json_object_set_new(hosts, o->host, list);
		}
		json_array_append_new(list, mon_json_osd(o));
	}
	json_object_foreach(hosts, h, v)
		json_array_append_new(out, json_pack("{s:s, s:O}", "host", h, "osds", v));
	json_decref(hosts);
	/* hosts: by host name (as before topologies); nodes: the placement tree, depth first */
	return json_pack("{s:i, s:o, s:o}", "epoch", mon->map.epoch, "hosts", out, "nodes",
			 mon_crush_tree_json(mon));
}

static json_t *mon_cmd_osd_dump(struct mon *mon)
{
	json_t *osds = json_array();
	char f[MON_FLAGS_STR_MAX];

	for (uint32_t i = 0; i < mon->map.max_osd; i++) {
		const struct mon_osd *o = mon_map_osd(&mon->map, i);

		if (o != NULL)
			json_array_append_new(osds, mon_json_osd(o));
	}
	return json_pack("{s:i, s:s, s:o, s:o, s:f, s:f, s:f}", "epoch", mon->map.epoch, "flags",
			 mon_flags_str(mon->map.flags, f, sizeof(f)), "osds", osds, "pools",
			 mon_json_pools(&mon->map), "nearfull_ratio", mon->map.nearfull_ratio / 1e6,
			 "backfillfull_ratio", mon->map.backfillfull_ratio / 1e6, "full_ratio",
			 mon->map.full_ratio / 1e6);
}

/* ----------------------------------------------------------------- writes */

static int mon_arg_u32(struct mon_job *job, json_t *root, const char *key, bool required,
		       uint32_t def, uint32_t min, uint32_t max, uint32_t *v_out)
{
	json_t *v = json_object_get(root, key);

	if (v == NULL || json_is_null(v)) {
		if (required) {
			mon_job_refuse(job, "missing argument '%s'", key);
			return -EINVAL;
		}
		*v_out = def;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < min || json_integer_value(v) > max) {
		mon_job_refuse(job, "argument '%s' must be an integer in %u..%u", key, min, max);
		return -EINVAL;
	}
	*v_out = (uint32_t)json_integer_value(v);
	return 0;
}

static int mon_build_osd(struct mon *mon, struct mon_job *job, json_t *root, const char *prefix,
			 struct mon_inc *inc)
{
	struct mon_op op = { .kind = MON_OP_OSD_SET };
	const struct mon_osd *o;
	uint32_t id;
	uint8_t state;
	int rc;

	rc = mon_arg_u32(job, root, "id", true, 0, 0, MON_OSD_MAX - 1, &id);
	if (rc != 0)
		return rc;
	o = mon_map_osd(&mon->map, id);
	if (o == NULL) {
		mon_job_refuse(job, "osd.%u does not exist", id);
		return -ENOENT;
	}
	op.osd = *o;
	state = o->state;
	if (!strcmp(prefix, "osd down")) {
		op.osd.state &= (uint8_t)~MON_OSD_UP;
		if (state & MON_OSD_UP) {
			op.osd.down_at = inc->epoch;
			op.osd.down_stamp = (uint64_t)clock_wall_s();
		}
	} else if (!strcmp(prefix, "osd out")) {
		/* an operator's drain survives restarts of the OSD (sticky until `osd in`) */
		op.osd.state &= (uint8_t)~MON_OSD_IN;
		op.osd.state |= MON_OSD_KEEP_OUT;
	} else {
		/* An operator's "in" wins over the automatic down -> out: cancel it. */
		op.osd.state |= MON_OSD_IN;
		op.osd.state &= (uint8_t)~MON_OSD_KEEP_OUT;
		op.osd.down_stamp = 0;
	}
	if (op.osd.state == state)
		return 1;
	snprintf(inc->reason, sizeof(inc->reason), "'%s %u' by an operator", prefix, id);
	return mon_inc_add(inc, &op);
}

static int mon_build_flag(struct mon *mon, struct mon_job *job, json_t *root, bool set,
			  struct mon_inc *inc)
{
	const char *key = json_string_value(json_object_get(root, "key"));
	struct mon_op op = { .kind = MON_OP_FLAGS };
	uint32_t flag = key != NULL ? mon_flag_parse(key) : 0;

	if (flag == 0) {
		mon_job_refuse(job, "unknown flag '%s' (known: %s)", key ? key : "",
			       mon_flag_names());
		return -EINVAL;
	}
	op.flags = set ? mon->map.flags | flag : mon->map.flags & ~flag;
	if (op.flags == mon->map.flags)
		return 1;
	snprintf(inc->reason, sizeof(inc->reason), "'osd %s %s' by an operator",
		 set ? "set" : "unset", key);
	return mon_inc_add(inc, &op);
}

static int mon_pool_check(struct mon_job *job, const struct mon_pool *p)
{
	if (p->min_size > p->size) {
		mon_job_refuse(job, "min_size %u is larger than size %u", p->min_size, p->size);
		return -EINVAL;
	}
	return 0;
}

/*
 * A pool with more replicas than failure domains (under its root, holding
 * an in OSD, up or down) would keep replicas in one host, which size was to
 * avoid: refused unless forced. A map without OSDs yet (a cluster being
 * built, pools made before the OSDs) has nothing to count and is let be.
 */
static int mon_pool_domain_check(struct mon *mon, struct mon_job *job, json_t *root,
				 const struct mon_pool *p)
{
	const struct plc_tree *t = plc_map_tree(&mon->map);
	uint32_t total, up, in;
	struct plc_rule rule;
	unsigned int nd;

	mon_map_osd_counts(&mon->map, &total, &up, &in);
	if (json_is_true(json_object_get(root, "force")) || total == 0 || t == NULL ||
	    plc_map_rule(t, &mon->map, p, &rule) != 0)
		return 0;
	nd = t->ndom_in[(size_t)rule.root * PLC_TREE_TYPES + rule.domain];
	if (p->size <= nd)
		return 0;
	mon_job_refuse(job, "pool '%s': size %u exceeds the %u %s(s) under '%s' that hold an in "
		       "OSD, so replicas would share a %s; add %ss, lower the size, or pass "
		       "--force", p->name, p->size, nd, mon_crush_type_str(rule.domain),
		       t->nodes[rule.root].name, mon_crush_type_str(rule.domain),
		       mon_crush_type_str(rule.domain));
	return -EINVAL;
}

/* failure_domain TYPE and root BUCKET of a pool's rule, when given. */
static int mon_pool_rule(struct mon *mon, struct mon_job *job, json_t *root, struct mon_pool *p)
{
	const char *d = json_string_value(json_object_get(root, "failure_domain"));
	const char *r = json_string_value(json_object_get(root, "root"));

	if (json_object_get(root, "failure_domain") != NULL) {
		uint8_t t = d != NULL ? mon_crush_type_parse(d) : MON_CT_NONE;

		if (t == MON_CT_NONE || t >= MON_CT_ROOT) {
			mon_job_refuse(job, "failure_domain must be osd, host, chassis, rack, row, "
				       "pdu, pod, room, datacenter, zone or region, not '%s'",
				       d ? d : "");
			return -EINVAL;
		}
		p->domain = t == MON_CT_HOST ? MON_CT_NONE : t; /* host is the default: encoded so */
	}
	if (json_object_get(root, "root") != NULL) {
		const struct mon_bucket *b = r != NULL ? mon_map_bucket_by_name(&mon->map, r) : NULL;

		if (r != NULL && !strcmp(r, "default") && b == NULL) {
			p->root = 0; /* the made-up default root */
			return 0;
		}
		if (b == NULL || b->type != MON_CT_ROOT) {
			mon_job_refuse(job, "root must name a bucket of type root, not '%s'",
				       r ? r : "");
			return -EINVAL;
		}
		p->root = !strcmp(b->name, "default") ? 0 : b->id;
	}
	return 0;
}

static int mon_build_pool(struct mon *mon, struct mon_job *job, json_t *root, const char *prefix,
			  struct mon_inc *inc)
{
	const char *name = json_string_value(json_object_get(root, "name"));
	const struct mon_pool *cur;
	struct mon_op op = { 0 };
	char err[256];
	int rc;

	/* a new pool follows the naming rule; an old one is named as it is */
	if (!strcmp(prefix, "pool create") &&
	    weft_name_check("pool", name, MON_NAME_MAX, err, sizeof(err)) != 0) {
		mon_job_refuse(job, "%s", err);
		return -EINVAL;
	}
	if (name == NULL || name[0] == '\0' || strlen(name) > MON_NAME_MAX) {
		mon_job_refuse(job, "a pool name of 1..%d characters is required", MON_NAME_MAX);
		return -EINVAL;
	}
	cur = mon_map_pool_by_name(&mon->map, name);
	if (!strcmp(prefix, "pool create")) {
		uint32_t dsize = (uint32_t)conf_get_int(mon->conf, CONF_OSD_POOL_DEFAULT_SIZE);

		if (cur != NULL) {
			mon_job_refuse(job, "pool '%s' already exists", name);
			return -EEXIST;
		}
		op.kind = MON_OP_POOL_SET;
		op.pool.id = mon->map.next_pool_id;
		snprintf(op.pool.name, sizeof(op.pool.name), "%s", name);
		rc = mon_arg_u32(job, root, "size", false, dsize, 1, 10, &op.pool.size);
		if (rc == 0)
			rc = mon_arg_u32(job, root, "min_size", false,
					 (uint32_t)conf_get_int(mon->conf,
								CONF_OSD_POOL_DEFAULT_MIN_SIZE),
					 1, 10, &op.pool.min_size);
		if (rc == 0)
			rc = mon_arg_u32(job, root, "pg_num", false,
					 (uint32_t)conf_get_int(mon->conf,
								CONF_OSD_POOL_DEFAULT_PG_NUM),
					 1, 65536, &op.pool.pg_num);
		if (rc == 0)
			rc = mon_pool_rule(mon, job, root, &op.pool);
		/* A default min_size above an explicit small size follows the size. */
		if (rc == 0 && json_object_get(root, "min_size") == NULL &&
		    op.pool.min_size > op.pool.size)
			op.pool.min_size = op.pool.size;
		if (rc == 0)
			rc = mon_pool_check(job, &op.pool);
		if (rc == 0)
			rc = mon_pool_domain_check(mon, job, root, &op.pool);
		if (rc == 0 && mon->map.npools >= MON_POOL_MAX) {
			mon_job_refuse(job, "too many pools (max %u)", MON_POOL_MAX);
			rc = -ENOSPC;
		}
		if (rc != 0)
			return rc;
		snprintf(inc->reason, sizeof(inc->reason), "pool create '%s'", name);
		return mon_inc_add(inc, &op);
	}
	if (cur == NULL) {
		mon_job_refuse(job, "pool '%s' does not exist", name);
		return -ENOENT;
	}
	if (!strcmp(prefix, "pool rm")) {
		const char *name2 = json_string_value(json_object_get(root, "name2"));

		/* as Ceph: the mons must allow it, and the command says it twice */
		if (!conf_get_bool(mon->conf, CONF_MON_ALLOW_POOL_DELETE)) {
			mon_job_refuse(job, "pool deletion is disabled on the monitors; set "
				       "mon_allow_pool_delete = true in their [mon] section first");
			return -EPERM;
		}
		if (name2 == NULL || strcmp(name, name2) != 0 ||
		    !json_is_true(json_object_get(root, "yes_i_really_really_mean_it"))) {
			mon_job_refuse(job, "this deletes pool '%s' and all its data; give its name "
				       "twice and --yes-i-really-really-mean-it", name);
			return -EPERM;
		}
		op.kind = MON_OP_POOL_RM;
		op.pool_id = cur->id;
		snprintf(inc->reason, sizeof(inc->reason), "pool rm '%s'", name);
		return mon_inc_add(inc, &op);
	}
	/* pool set NAME KEY VALUE */
	{
		const char *key = json_string_value(json_object_get(root, "key"));
		uint32_t *field;

		op.kind = MON_OP_POOL_SET;
		op.pool = *cur;
		if (key != NULL && (!strcmp(key, "failure_domain") || !strcmp(key, "root"))) {
			json_t *args = json_pack("{s:O}", key, json_object_get(root, "value"));

			rc = mon_pool_rule(mon, job, args, &op.pool);
			json_decref(args);
			if (rc == 0)
				rc = mon_pool_domain_check(mon, job, root, &op.pool);
			if (rc != 0)
				return rc;
			if (!memcmp(&op.pool, cur, sizeof(*cur)))
				return 1;
			snprintf(inc->reason, sizeof(inc->reason), "pool set '%s' %s", name, key);
			return mon_inc_add(inc, &op);
		}
		if (key != NULL && !strcmp(key, "size"))
			field = &op.pool.size;
		else if (key != NULL && !strcmp(key, "min_size"))
			field = &op.pool.min_size;
		else if (key != NULL && !strcmp(key, "pg_num"))
			field = &op.pool.pg_num;
		else {
			mon_job_refuse(job, "unknown pool property '%s' (size, min_size, pg_num)",
				       key != NULL ? key : "");
			return -EINVAL;
		}
		rc = mon_arg_u32(job, root, "value", true, 0, 1,
				 field == &op.pool.pg_num ? 65536 : 10, field);
		if (rc == 0)
			rc = mon_pool_check(job, &op.pool);
		if (rc == 0 && field == &op.pool.size && op.pool.size > cur->size)
			rc = mon_pool_domain_check(mon, job, root, &op.pool);
		if (rc != 0)
			return rc;
		if (field == &op.pool.pg_num && op.pool.pg_num < cur->pg_num) {
			mon_job_refuse(job, "pg_num can only grow (%u now)", cur->pg_num);
			return -EINVAL;
		}
		if (!memcmp(&op.pool, cur, sizeof(*cur)))
			return 1;
		snprintf(inc->reason, sizeof(inc->reason), "pool set '%s' %s %u", name, key,
			 *field);
		return mon_inc_add(inc, &op);
	}
}

static int mon_job_build_cmd(struct mon *mon, struct mon_job *job, struct mon_inc *inc)
{
	json_t *root = json_loads(job->json, 0, NULL);
	const char *prefix = json_string_value(json_object_get(root, "prefix"));
	int rc;

	if (prefix == NULL) {
		rc = -EINVAL;
		mon_job_refuse(job, "command is not a JSON object with a prefix");
	} else if (!strncmp(prefix, "health ", 7)) {
		rc = mon_mute_job(mon, job, root, prefix, inc);
	} else if (!strncmp(prefix, "osd blocklist ", 14)) {
		rc = mon_blocklist_job(mon, job, root, prefix, inc);
	} else if (!strncmp(prefix, "osd set-", 8) || !strcmp(prefix, "pool set-quota")) {
		rc = mon_cap_job(mon, job, root, prefix, inc);
	} else if (mon_life_is_write(prefix)) {
		rc = mon_life_job(mon, job, root, prefix, inc);
	} else if (!strncmp(prefix, "osd crush ", 10) || !strncmp(prefix, "balancer ", 9)) {
		rc = mon_crush_job(mon, job, root, prefix, inc);
	} else if (!strncmp(prefix, "mon ", 4)) {
		rc = mon_member_job(mon, job, root, prefix, inc);
	} else if (!strncmp(prefix, "osd set", 7) || !strncmp(prefix, "osd unset", 9)) {
		rc = mon_build_flag(mon, job, root, prefix[4] == 's', inc);
	} else if (!strncmp(prefix, "osd ", 4)) {
		rc = mon_build_osd(mon, job, root, prefix, inc);
	} else {
		rc = mon_build_pool(mon, job, root, prefix, inc);
	}
	json_decref(root);
	return rc;
}

void mon_cmd_handle(struct mon *mon, struct msgr_conn *conn, uint64_t tid, const char *json,
		    size_t len)
{
	uint64_t cid = msgr_conn_id(conn);
	json_error_t jerr;
	json_t *root = json_loadb(json, len, 0, &jerr), *out = NULL;
	const char *prefix = json_string_value(json_object_get(root, "prefix"));
	struct mon_job *job;
	char *text;
	int rc;

	if (prefix == NULL) {
		mon_reply(mon, cid, tid, -EINVAL, NULL, "malformed command: %s",
			  root == NULL ? jerr.text : "no \"prefix\"");
		goto out;
	}
	if (mon_cmd_is_write(json, len)) {
		job = mon_job_alloc(conn, tid, mon_job_build_cmd);
		if (job != NULL && mon_auth_is_write(prefix))
			job->build_auth = mon_auth_job; /* an auth entry, not a map increment */
		if (job != NULL)
			job->json = strndup(json, len);
		if (job == NULL || job->json == NULL) {
			mon_job_free(job);
			mon_reply(mon, cid, tid, -ENOMEM, NULL, "out of memory");
			goto out;
		}
		rc = mon_job_submit(mon, job);
		if (rc != 0)
			mon_reply(mon, cid, tid, rc, NULL, "%s",
				  rc == -EAGAIN ? "not the leader; retry" : "too many pending changes");
		goto out;
	}
	if (!strcmp(prefix, "status") || !strcmp(prefix, "health") || !strcmp(prefix, "mon stat")) {
		/*
		 * Between a leader's loss and the next one's first barrier, this
		 * mon's view of the quorum is stale: say "electing" (the CLI
		 * retries, then asks another mon) rather than HEALTH_ERR, for a
		 * bounded time; past it the lack of quorum is real and shown.
		 */
		uint64_t grace = conf_get_duration_us(mon->conf, CONF_MON_ELECTION_GRACE) / 1000;
		bool electing = mon_raft_leader(mon) == 0 || (mon_is_leader(mon) && !mon->leader_ready);

		if (electing && clock_now_ms() - mon->leader_seen_ms < grace) {
			mon_reply(mon, cid, tid, -EAGAIN, NULL,
				  "%s: electing a monitor leader; retry", mon->name);
			goto out;
		}
		out = mon_cmd_status(mon, prefix);
	}
	else if (!strcmp(prefix, "osd tree"))
		out = mon_cmd_osd_tree(mon);
	else if (!strcmp(prefix, "osd dump"))
		out = mon_cmd_osd_dump(mon);
	else if (!strcmp(prefix, "osd blocklist ls"))
		out = mon_blocklist_ls(mon);
	else if (!strcmp(prefix, "df"))
		out = mon_cap_df(mon);
	else if (!strcmp(prefix, "osd df"))
		out = mon_cap_osd_df(mon);
	else if (!strcmp(prefix, "pool ls"))
		out = json_pack("{s:i, s:o}", "epoch", mon->map.epoch, "pools",
				mon_json_pools(&mon->map));
	else if (!strncmp(prefix, "balancer ", 9))
		out = mon_crush_read(mon, prefix);
	else if (!strncmp(prefix, "pg ", 3) || !strcmp(prefix, "osd safe-to-destroy") ||
		 !strcmp(prefix, "osd ok-to-stop") || !strncmp(prefix, "auth ", 5)) {
		char err[PROTO_ERRMSG_MAX + 1] = "";

		out = prefix[0] == 'a'	 ? mon_auth_read(mon, prefix, root, &rc, err, sizeof(err))
		      : prefix[0] == 'p' ? mon_pg_cmd(mon, prefix, root, &rc, err, sizeof(err))
				       : mon_life_read(mon, prefix, root, &rc, err, sizeof(err));
		if (out == NULL && rc != 0) {
			mon_reply(mon, cid, tid, rc, NULL, "%s", err);
			goto out;
		}
	}
	if (out == NULL) {
		mon_reply(mon, cid, tid, -EOPNOTSUPP, NULL, "unknown command '%s'", prefix);
		goto out;
	}
	text = json_dumps(out, JSON_COMPACT);
	mon_reply(mon, cid, tid, text != NULL ? 0 : -ENOMEM, text, "%s", "");
	free(text);
	json_decref(out);
out:
	json_decref(root);
}

json_t *mon_cmd_status_json(struct mon *mon, const char *prefix)
{
	return mon_cmd_status(mon, prefix);
}

int mon_cmd_submit_internal(struct mon *mon, const char *json, size_t len)
{
	struct mon_job *job = mon_job_alloc(NULL, 0, mon_job_build_cmd);

	if (job == NULL)
		return -ENOMEM;
	job->json = strndup(json, len);
	if (job->json == NULL) {
		mon_job_free(job);
		return -ENOMEM;
	}
	return mon_job_submit(mon, job);
}
