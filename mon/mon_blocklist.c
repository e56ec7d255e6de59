/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client blocklist, as Ceph's `osd blocklist`: `weft osd blocklist add
 * INSTANCE [SECONDS]` puts one libweft instance (the id its cluster handle
 * sends in its hello) into the cluster map; OSDs then refuse its ops and
 * drop its connections. It is how a broken volume lock fences the old
 * holder (docs/volumes.md, "Exclusive lock"). Entries live in the map
 * (version 7) so every mon and OSD has them and a new leader keeps them;
 * the leader removes an entry when its time comes, with an increment.
 * The reply to `add` and `rm` carries the epoch that holds the change: a
 * caller that waits for that epoch before its own ops knows every OSD that
 * serves it has the change (docs/volumes.md says why).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "mon/mon_priv.h"

#define MON_BLOCKLIST_TICK_MS	1000
#define MON_BLOCKLIST_DEFAULT_S 3600ull /* Ceph's mon_osd_blocklist_default_expire */
#define MON_BLOCKLIST_MAX_S	(10ull * 365 * 86400)

static uint64_t mon_blocklist_wall_ms(void)
{
	return (uint64_t)(clock_wall_s() * 1000.0);
}

json_t *mon_blocklist_ls(struct mon *mon)
{
	json_t *a = json_array();
	uint64_t now = mon_blocklist_wall_ms();

	for (uint32_t i = 0; i < mon->map.nblocklist; i++) {
		const struct mon_blocklist *b = &mon->map.blocklist[i];
		char inst[MON_INSTANCE_STR];

		json_array_append_new(
		    a, json_pack(
			   "{s:s, s:I, s:I, s:I}", "instance", mon_instance_str(b->instance, inst),
			   "added", (json_int_t)(b->added_ms / 1000), "until",
			   (json_int_t)(b->until_ms / 1000), "ttl_left_sec",
			   (json_int_t)(b->until_ms > now ? (b->until_ms - now + 999) / 1000 : 0)));
	}
	return json_pack("{s:i, s:o}", "epoch", mon->map.epoch, "blocklist", a);
}

/* osd blocklist add {instance, seconds (optional)}; osd blocklist rm {instance} */
int mon_blocklist_job(struct mon *mon, struct mon_job *job, json_t *root, const char *prefix,
		      struct mon_inc *inc)
{
	const char *text = json_string_value(json_object_get(root, "instance"));
	json_t *secs = json_object_get(root, "seconds");
	struct mon_op op = {.kind = MON_OP_BLOCKLIST_ADD};
	char inst[MON_INSTANCE_STR];
	uint64_t s = MON_BLOCKLIST_DEFAULT_S, now = mon_blocklist_wall_ms();

	if (mon_instance_parse(text, &op.bl.instance) != 0) {
		mon_job_refuse(job,
			       "'%s' is not a client instance (1..16 hex digits, not 0; "
			       "weft vol lock ls shows a holder's)",
			       text ? text : "");
		return -EINVAL;
	}
	mon_instance_str(op.bl.instance, inst);
	job->reply_epoch = true;
	if (!strcmp(prefix, "osd blocklist rm")) {
		snprintf(job->out, sizeof(job->out), "\"instance\": \"%s\", \"removed\": %s", inst,
			 mon_map_blocklisted(&mon->map, op.bl.instance) ? "true" : "false");
		if (!mon_map_blocklisted(&mon->map, op.bl.instance))
			return 1; /* not listed: nothing to do, as Ceph (it says so) */
		op.kind = MON_OP_BLOCKLIST_RM;
		log_info("mon", "%s: un-blocklisting client instance %s", mon->name, inst);
		snprintf(inc->reason, sizeof(inc->reason), "'osd blocklist rm %s' by an operator",
			 inst);
		return mon_inc_add(inc, &op);
	}
	if (strcmp(prefix, "osd blocklist add") != 0) {
		mon_job_refuse(job, "unknown command '%s' (osd blocklist add|rm|ls)", prefix);
		return -EINVAL;
	}
	if (secs != NULL && !json_is_null(secs)) {
		if (!json_is_integer(secs) || json_integer_value(secs) < 1 ||
		    (unsigned long long)json_integer_value(secs) > MON_BLOCKLIST_MAX_S) {
			mon_job_refuse(job, "seconds must be 1..%llu (default %llu)",
				       MON_BLOCKLIST_MAX_S, MON_BLOCKLIST_DEFAULT_S);
			return -EINVAL;
		}
		s = (uint64_t)json_integer_value(secs);
	}
	if (!mon_map_blocklisted(&mon->map, op.bl.instance) &&
	    mon->map.nblocklist >= MON_BLOCKLIST_MAX) {
		mon_job_refuse(job,
			       "%u instances are blocklisted already (the most); remove one "
			       "first (weft osd blocklist rm)",
			       MON_BLOCKLIST_MAX);
		return -ENOSPC;
	}
	op.bl.added_ms = now;
	op.bl.until_ms = now + s * 1000;
	snprintf(job->out, sizeof(job->out), "\"instance\": \"%s\", \"until\": %llu", inst,
		 (unsigned long long)(op.bl.until_ms / 1000));
	snprintf(inc->reason, sizeof(inc->reason), "'osd blocklist add %s %llu'", inst,
		 (unsigned long long)s);
	log_info("mon", "%s: blocklisting client instance %s for %llu s", mon->name, inst,
		 (unsigned long long)s);
	return mon_inc_add(inc, &op);
}

static int mon_blocklist_build_gc(struct mon *mon, struct mon_job *job, struct mon_inc *inc)
{
	uint64_t now = mon_blocklist_wall_ms();
	int rc = 0;

	(void)job;
	mon->blocklist_job_queued = false;
	for (uint32_t i = 0; i < mon->map.nblocklist && rc == 0; i++) {
		const struct mon_blocklist *b = &mon->map.blocklist[i];
		struct mon_op op = {.kind = MON_OP_BLOCKLIST_RM};
		char inst[MON_INSTANCE_STR];

		if (now < b->until_ms)
			continue;
		op.bl.instance = b->instance;
		mon_reason_add(inc, "blocklist entry %s expired",
			       mon_instance_str(b->instance, inst));
		log_info("mon", "%s: blocklist entry %s expired", mon->name, inst);
		rc = mon_inc_add(inc, &op);
	}
	if (rc != 0)
		return rc;
	return inc->nops > 0 ? 0 : 1;
}

void mon_blocklist_tick(struct mon *mon)
{
	uint64_t now = clock_now_ms(), wall = mon_blocklist_wall_ms();
	struct mon_job *job;
	bool due = false;

	if (mon->map.nblocklist == 0 || mon->blocklist_job_queued ||
	    now - mon->blocklist_tick_ms < MON_BLOCKLIST_TICK_MS)
		return;
	mon->blocklist_tick_ms = now;
	for (uint32_t i = 0; i < mon->map.nblocklist && !due; i++)
		due = wall >= mon->map.blocklist[i].until_ms;
	if (!due)
		return;
	job = mon_job_alloc(NULL, 0, mon_blocklist_build_gc);
	if (job == NULL)
		return;
	mon->blocklist_job_queued = true; /* first: the submit may build the job at once */
	if (mon_job_submit(mon, job) != 0)
		mon->blocklist_job_queued = false;
}
