/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Membership commands (docs/mon.md, "Membership"): `mon add`, `mon remove`,
 * the internal `mon _register` of a bootstrap member, and the first monitor
 * list of a cluster made before version 5. Each builds one increment of
 * the map's monitor list; mon_member.c then makes raft follow it.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/name.h"
#include "mon/mon_member.h"

/* --------------------------------------------------------------- commands */

static int mon_member_add(struct mon *mon, struct mon_job *job, json_t *root,
			  struct mon_inc *inc)
{
	const char *name = json_string_value(json_object_get(root, "name"));
	const char *addr = json_string_value(json_object_get(root, "addr"));
	struct mon_op op = { .kind = MON_OP_MON_SET };
	char err[PROTO_ERRMSG_MAX + 1], why[160], ra[PROTO_ADDR_MAX + 1];
	const struct mon_mon *o;
	uint32_t joining;

	if (name == NULL || weft_name_check("monitor", name, MON_NAME_MAX, err, sizeof(err)) != 0) {
		mon_job_refuse(job, "%s", name == NULL ? "mon add needs a name" : err);
		return -EINVAL;
	}
	if (addr == NULL || strlen(addr) > PROTO_ADDR_MAX ||
	    mon_member_raft_addr(mon, addr, ra, sizeof(ra)) != 0) {
		mon_job_refuse(job, "mon add %s: '%s' is not an IP:PORT address (its raft port is "
			       "PORT + mon_raft_port_offset)", name, addr != NULL ? addr : "");
		return -EINVAL;
	}
	if (mon->map.next_mon_id == 0) {
		mon_job_refuse(job, "the monitor list is not in the map yet; retry");
		return -EAGAIN;
	}
	o = mon_map_mon_by_name(&mon->map, name);
	if (o != NULL) {
		mon_job_refuse(job, "mon.%s exists (raft id %u, %s)", name, o->id, o->addr);
		return -EEXIST;
	}
	for (uint32_t i = 0; i < mon->map.nmons; i++) {
		if (!strcmp(mon->map.mons[i].addr, addr)) {
			mon_job_refuse(job, "%s is the address of mon.%s", addr,
				       mon->map.mons[i].name);
			return -EEXIST;
		}
	}
	if (mon_member_pending(mon, why, sizeof(why), &joining)) {
		mon_job_refuse(job, "one monitor change at a time: %s", why);
		return -EBUSY;
	}
	if (mon->map.nmons >= MON_MONS_MAX) {
		mon_job_refuse(job, "a cluster has at most %u monitors", MON_MONS_MAX);
		return -ENOSPC;
	}
	op.mon.id = mon->map.next_mon_id;
	snprintf(op.mon.name, sizeof(op.mon.name), "%s", name);
	snprintf(op.mon.addr, sizeof(op.mon.addr), "%s", addr);
	snprintf(inc->reason, sizeof(inc->reason), "mon add %s %s (raft id %u)", name, addr,
		 op.mon.id);
	snprintf(job->out, sizeof(job->out),
		 "{\"name\": \"%s\", \"id\": %u, \"addr\": \"%s\", \"raft_addr\": \"%s\"}", name,
		 op.mon.id, addr, ra);
	return mon_inc_add(inc, &op);
}

static int mon_member_remove(struct mon *mon, struct mon_job *job, json_t *root,
			     struct mon_inc *inc)
{
	const char *name = json_string_value(json_object_get(root, "name"));
	struct mon_op op = { .kind = MON_OP_MON_RM };
	const struct mon_mon *mm;
	const struct mon_peer *p;
	unsigned int n, up, need;
	uint32_t joining;
	char why[160];

	if (name != NULL && !strncmp(name, "mon.", 4))
		name += 4;
	mm = name != NULL ? mon_map_mon_by_name(&mon->map, name) : NULL;
	if (mm == NULL) {
		mon_job_refuse(job, "no monitor named '%s' (weft mon stat lists them)",
			       name != NULL ? name : "");
		return -ENOENT;
	}
	if (mon->map.nmons <= 1) {
		mon_job_refuse(job, "mon.%s is the last monitor; it cannot be removed", name);
		return -EINVAL;
	}
	if (mon_member_pending(mon, why, sizeof(why), &joining) && joining != mm->id) {
		mon_job_refuse(job, "one monitor change at a time: %s", why);
		return -EBUSY;
	}
	p = mon_peer_by_id(mon, mm->id);
	mon_member_voters(mon, &n, &up);
	if (p != NULL && p->in_raft && p->role == RAFT_VOTER) {
		/* it stops at the increment, and votes until raft_remove: count both */
		need = n / 2 + 1;
		if (mon_peer_up(mon, p))
			up--;
		if (up < need) {
			mon_job_refuse(job, "removing mon.%s would lose the quorum: %u of %u voters "
				       "would be up, %u needed", name, up, n, need);
			return -EBUSY;
		}
	}
	if (mm->id == mon->self_id) {
		/* the leader does not remove itself: the next one does (the client retries) */
		mon_member_step_down(mon);
		mon_job_refuse(job, "mon.%s is the leader: it hands leadership over first; retry",
			       name);
		return -EAGAIN;
	}
	op.mon_id = mm->id;
	snprintf(inc->reason, sizeof(inc->reason), "mon remove %s (raft id %u, %s)", name, mm->id,
		 mm->addr);
	snprintf(job->out, sizeof(job->out), "{\"name\": \"%s\", \"id\": %u, \"removed\": true}",
		 name, mm->id);
	return mon_inc_add(inc, &op);
}

/* A monitor's own name and address, sent to the leader (bootstrap members). */
static int mon_member_register(struct mon *mon, struct mon_job *job, json_t *root,
			       struct mon_inc *inc)
{
	json_int_t id = json_integer_value(json_object_get(root, "id"));
	const char *name = json_string_value(json_object_get(root, "name"));
	const char *addr = json_string_value(json_object_get(root, "addr"));
	const struct mon_mon *mm = mon_map_mon(&mon->map, (uint32_t)id);
	const struct mon_mon *other = name != NULL ? mon_map_mon_by_name(&mon->map, name) : NULL;
	struct mon_op op = { .kind = MON_OP_MON_SET };
	char err[PROTO_ERRMSG_MAX + 1];

	if (mm == NULL || name == NULL || addr == NULL || strlen(addr) > PROTO_ADDR_MAX ||
	    weft_name_check("monitor", name, MON_NAME_MAX, err, sizeof(err)) != 0) {
		mon_job_refuse(job, "mon register: not a monitor of the map");
		return -EINVAL;
	}
	if (other != NULL && other->id != mm->id) {
		mon_job_refuse(job, "mon register: name '%s' is taken by raft id %u", name,
			       other->id);
		log_error("mon", "%s: raft id %u calls itself mon.%s, the name of raft id %u",
			  mon->name, mm->id, name, other->id);
		return -EEXIST;
	}
	if (!strcmp(mm->name, name) && !strcmp(mm->addr, addr))
		return 1;
	/* only a name the map does not have yet, at the address Raft has: nothing is renamed */
	if (mm->name[0] != '\0' || strcmp(mm->addr, addr) != 0) {
		mon_job_refuse(job, "mon register: raft id %u is mon.%s at %s already", mm->id,
			       mm->name[0] != '\0' ? mm->name : "?", mm->addr);
		return -EEXIST;
	}
	op.mon = *mm;
	snprintf(op.mon.name, sizeof(op.mon.name), "%s", name);
	snprintf(op.mon.addr, sizeof(op.mon.addr), "%s", addr);
	snprintf(inc->reason, sizeof(inc->reason), "mon.%s (raft id %u) registered at %s", name,
		 mm->id, addr);
	return mon_inc_add(inc, &op);
}

int mon_member_job(struct mon *mon, struct mon_job *job, json_t *root, const char *prefix,
		   struct mon_inc *inc)
{
	if (!strcmp(prefix, "mon add"))
		return mon_member_add(mon, job, root, inc);
	if (!strcmp(prefix, "mon remove") || !strcmp(prefix, "mon rm"))
		return mon_member_remove(mon, job, root, inc);
	return mon_member_register(mon, job, root, inc);
}

/* The map of an existing cluster has no monitor list yet: one from raft's configuration. */
int mon_member_build_seed(struct mon *mon, struct mon_job *job, struct mon_inc *inc)
{
	const struct raft_configuration *cfg = &mon->raft.configuration;
	long off = (long)conf_get_int(mon->conf, CONF_MON_RAFT_PORT_OFFSET);
	raft_id ids[MON_PEERS_MAX];
	unsigned int n = 0;
	int rc = 0;

	mon->seed_queued = false;
	if (mon->map.next_mon_id != 0)
		return 1;
	for (unsigned int i = 0; i < cfg->n && n < MON_PEERS_MAX; i++)
		ids[n++] = cfg->servers[i].id;
	/* ascending ids: each op's id must be new */
	for (unsigned int i = 1; i < n; i++)
		for (unsigned int j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
			raft_id t = ids[j];

			ids[j] = ids[j - 1];
			ids[j - 1] = t;
		}
	for (unsigned int i = 0; i < n && rc == 0; i++) {
		struct mon_op op = { .kind = MON_OP_MON_SET };
		const struct raft_server *s = NULL;

		for (unsigned int k = 0; k < cfg->n; k++)
			if (cfg->servers[k].id == ids[i])
				s = &cfg->servers[k];
		op.mon.id = (uint32_t)s->id;
		if (mon_addr_shift(s->address, -off, op.mon.addr, sizeof(op.mon.addr)) != 0)
			snprintf(op.mon.addr, sizeof(op.mon.addr), "%s", s->address);
		if (s->id == mon->self_id)
			snprintf(op.mon.name, sizeof(op.mon.name), "%s", mon->name + 4);
		rc = mon_inc_add(inc, &op);
	}
	snprintf(inc->reason, sizeof(inc->reason), "monitor list from raft's configuration "
		 "(%u monitors)", n);
	(void)job;
	return rc;
}

