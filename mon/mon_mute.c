/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Health mutes, as Ceph's `health mute`: `weft health mute CODE [TTL]
 * [--sticky]` hides one check from the overall status (the check is still
 * listed, marked muted) until `health unmute CODE`, until its TTL, or -
 * unless sticky - until the check clears or gets worse (its count, e.g. the
 * OSDs down, grows past the count when it was muted). The mutes are in the
 * cluster map (version 6), so every mon shows them and a new leader keeps
 * them; the leader ends them with an increment, logged with the reason.
 * docs/mon.md, "Muting a check".
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "mon/mon_priv.h"

#define MON_MUTE_TICK_MS 1000
/*
 * A new leader has no PG reports yet: its PG checks are absent for a few
 * seconds, which must not read as "cleared". Past this, they are current.
 */
#define MON_MUTE_WARMUP_MS 10000
#define MON_MUTE_TTL_MAX (10ull * 365 * 86400) /* seconds */

static uint64_t mon_mute_wall_ms(void)
{
	return (uint64_t)(clock_wall_s() * 1000.0);
}

static json_t *mon_mute_check_find(json_t *checks, const char *code)
{
	size_t i;
	json_t *c;

	json_array_foreach(checks, i, c)
		if (!strcmp(json_string_value(json_object_get(c, "code")), code))
			return c;
	return NULL;
}

/* Does m hide a check of count now? (An ended mute waits for the leader to remove it.) */
static bool mon_mute_holds(const struct mon_mute *m, json_int_t count, uint64_t now)
{
	if (m->until_ms != 0 && now >= m->until_ms)
		return false;
	return m->sticky || count <= (json_int_t)m->count;
}

json_t *mon_mute_health(struct mon *mon, json_t *health)
{
	json_t *checks = json_object_get(health, "checks"), *mutes = json_array(), *c;
	const char *status = "HEALTH_OK";
	uint64_t now = mon_mute_wall_ms();
	size_t i;

	json_array_foreach(checks, i, c) {
		const char *code = json_string_value(json_object_get(c, "code"));
		const char *sev = json_string_value(json_object_get(c, "severity"));
		const struct mon_mute *m = mon_map_mute(&mon->map, code);
		bool muted = m != NULL &&
			     mon_mute_holds(m, json_integer_value(json_object_get(c, "count")), now);

		json_object_set_new(c, "muted", json_boolean(muted));
		if (muted)
			continue;
		if (!strcmp(sev, "HEALTH_ERR"))
			status = "HEALTH_ERR";
		else if (strcmp(status, "HEALTH_ERR") != 0)
			status = "HEALTH_WARN";
	}
	for (uint32_t k = 0; k < mon->map.nmutes; k++) {
		const struct mon_mute *m = &mon->map.mutes[k];
		json_t *o = json_pack("{s:s, s:b, s:I}", "code", m->code, "sticky", m->sticky != 0,
				      "count", (json_int_t)m->count);

		c = mon_mute_check_find(checks, m->code);
		json_object_set_new(o, "until", m->until_ms ? json_integer((json_int_t)(m->until_ms / 1000))
							    : json_null());
		json_object_set_new(o, "ttl_left_sec",
				    m->until_ms == 0	 ? json_null()
				    : m->until_ms > now ? json_integer((json_int_t)((m->until_ms - now + 999) / 1000))
							 : json_integer(0));
		json_object_set_new(o, "active", json_boolean(c != NULL && json_is_true(json_object_get(c, "muted"))));
		json_array_append_new(mutes, o);
	}
	json_object_set_new(health, "status", json_string(status));
	json_object_set_new(health, "mutes", mutes);
	return health;
}

/*
 * Why the leader should end mute m now (into why), or false. checks: the
 * current health's. warm: the leader has had its PG reports long enough
 * for an absent check to mean a cleared one.
 */
static bool mon_mute_ended(const struct mon_mute *m, json_t *checks, uint64_t now, bool warm,
			   char *why, size_t cap)
{
	json_t *c = mon_mute_check_find(checks, m->code);
	json_int_t count = c != NULL ? json_integer_value(json_object_get(c, "count")) : 0;

	if (m->until_ms != 0 && now >= m->until_ms) {
		snprintf(why, cap, "mute of %s expired", m->code);
		return true;
	}
	if (m->sticky)
		return false;
	if (c == NULL && warm) {
		snprintf(why, cap, "mute of %s ended: the check cleared", m->code);
		return true;
	}
	if (c != NULL && count > (json_int_t)m->count) {
		snprintf(why, cap, "mute of %s ended: count grew from %u to %lld", m->code, m->count,
			 (long long)count);
		return true;
	}
	return false;
}

static bool mon_mute_warm(struct mon *mon)
{
	return clock_now_ms() - mon->ready_ms >= MON_MUTE_WARMUP_MS;
}

static int mon_mute_build_gc(struct mon *mon, struct mon_job *job, struct mon_inc *inc)
{
	json_t *h = mon_cmd_status_json(mon, "health"), *checks = json_object_get(h, "checks");
	uint64_t now = mon_mute_wall_ms();
	bool warm = mon_mute_warm(mon);
	int rc = 0;

	(void)job;
	mon->mute_job_queued = false;
	for (uint32_t i = 0; i < mon->map.nmutes && rc == 0; i++) {
		struct mon_op op = {.kind = MON_OP_MUTE_RM};
		char why[128];

		if (!mon_mute_ended(&mon->map.mutes[i], checks, now, warm, why, sizeof(why)))
			continue;
		snprintf(op.mute.code, sizeof(op.mute.code), "%s", mon->map.mutes[i].code);
		mon_reason_add(inc, "%s", why);
		log_info("mon", "%s: %s", mon->name, why); /* proposed now, once */
		rc = mon_inc_add(inc, &op);
	}
	json_decref(h);
	if (rc != 0)
		return rc;
	return inc->nops > 0 ? 0 : 1;
}

void mon_mute_tick(struct mon *mon)
{
	uint64_t now = clock_now_ms(), wall = mon_mute_wall_ms();
	json_t *h, *checks;
	struct mon_job *job;
	bool due = false, warm;

	if (mon->map.nmutes == 0 || mon->mute_job_queued || now - mon->mute_tick_ms < MON_MUTE_TICK_MS)
		return;
	mon->mute_tick_ms = now;
	h = mon_cmd_status_json(mon, "health");
	checks = json_object_get(h, "checks");
	warm = mon_mute_warm(mon);
	for (uint32_t i = 0; i < mon->map.nmutes && !due; i++) {
		char why[128];

		due = mon_mute_ended(&mon->map.mutes[i], checks, wall, warm, why, sizeof(why));
	}
	json_decref(h);
	if (!due)
		return;
	job = mon_job_alloc(NULL, 0, mon_mute_build_gc);
	if (job == NULL)
		return;
	mon->mute_job_queued = true; /* first: the submit may build the job at once */
	if (mon_job_submit(mon, job) != 0)
		mon->mute_job_queued = false;
}

/* health mute {code, ttl (s, 0 = none), sticky}; health unmute {code} */
int mon_mute_job(struct mon *mon, struct mon_job *job, json_t *root, const char *prefix,
		 struct mon_inc *inc)
{
	const char *code = json_string_value(json_object_get(root, "code"));
	json_t *ttl = json_object_get(root, "ttl"), *h, *c;
	bool sticky = json_is_true(json_object_get(root, "sticky"));
	struct mon_op op = {.kind = MON_OP_MUTE_SET};

	if (!mon_mute_code_valid(code)) {
		mon_job_refuse(job, "'%s' is not a health check code (1..%d of A-Z, 0-9, _; "
			       "weft health lists the raised ones)", code ? code : "",
			       MON_MUTE_CODE_MAX);
		return -EINVAL;
	}
	snprintf(op.mute.code, sizeof(op.mute.code), "%s", code);
	if (!strcmp(prefix, "health unmute")) {
		if (mon_map_mute(&mon->map, code) == NULL)
			return 1; /* not muted: nothing to do, as `osd unset` of an unset flag */
		op.kind = MON_OP_MUTE_RM;
		log_info("mon", "%s: unmuting %s", mon->name, code);
		snprintf(inc->reason, sizeof(inc->reason), "'health unmute %s' by an operator", code);
		return mon_inc_add(inc, &op);
	}
	if (ttl != NULL && !json_is_null(ttl) &&
	    (!json_is_integer(ttl) || json_integer_value(ttl) < 0 ||
	     (unsigned long long)json_integer_value(ttl) > MON_MUTE_TTL_MAX)) {
		mon_job_refuse(job, "ttl must be seconds in 0..%llu (0: until unmuted)",
			       MON_MUTE_TTL_MAX);
		return -EINVAL;
	}
	h = mon_cmd_status_json(mon, "health");
	c = mon_mute_check_find(json_object_get(h, "checks"), code);
	if (c == NULL && !sticky) {
		json_decref(h);
		mon_job_refuse(job, "%s is not raised now (weft health); --sticky mutes a check "
			       "before it is raised", code);
		return -ENOENT;
	}
	op.mute.count = c != NULL ? (uint32_t)json_integer_value(json_object_get(c, "count")) : 0;
	json_decref(h);
	if (mon_map_mute(&mon->map, code) == NULL && mon->map.nmutes >= MON_MUTE_MAX) {
		mon_job_refuse(job, "%u checks are muted already (the most); unmute one first",
			       MON_MUTE_MAX);
		return -ENOSPC;
	}
	op.mute.sticky = sticky;
	if (ttl != NULL && json_integer_value(ttl) > 0)
		op.mute.until_ms = mon_mute_wall_ms() + (uint64_t)json_integer_value(ttl) * 1000;
	snprintf(inc->reason, sizeof(inc->reason), "'health mute %s%s' by an operator (%s)", code,
		 sticky ? " --sticky" : "", op.mute.until_ms ? "with a ttl" : "until unmuted");
	log_info("mon", "%s: muting %s (count %u, ttl %lld s%s)", mon->name, code, op.mute.count,
		 ttl != NULL ? (long long)json_integer_value(ttl) : 0LL, sticky ? ", sticky" : "");
	return mon_inc_add(inc, &op);
}
