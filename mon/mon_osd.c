/* SPDX-License-Identifier: Apache-2.0 */
/*
 * OSD membership (boot, beacons, peer failure reports) and the liveness
 * rules (down after the grace or enough reporters, out after the down-out
 * interval unless noout). Changes become jobs whose increments the leader
 * builds against the current map (mon_raft.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "mon/mon_priv.h"

#define MON_LIVE_CHECK_MS 200

struct mon_job *mon_job_alloc(struct msgr_conn *conn, uint64_t tid, mon_job_build_fn fn)
{
	struct mon_job *job = calloc(1, sizeof(*job));

	if (job == NULL)
		return NULL;
	job->build = fn;
	job->conn_id = conn != NULL ? msgr_conn_id(conn) : 0;
	job->tid = tid;
	job->result_id = PROTO_OSD_ID_NONE;
	return job;
}

void mon_job_refuse(struct mon_job *job, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(job->errmsg, sizeof(job->errmsg), fmt, ap);
	va_end(ap);
}

static int mon_inc_osd(struct mon_inc *inc, const struct mon_osd *o)
{
	struct mon_op op = { .kind = MON_OP_OSD_SET };

	op.osd = *o;
	return mon_inc_add(inc, &op);
}

void mon_reason_add(struct mon_inc *inc, const char *fmt, ...)
{
	size_t n = strlen(inc->reason);
	va_list ap;

	if (n > 0 && n + 2 < sizeof(inc->reason)) {
		memcpy(inc->reason + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(inc->reason + n, sizeof(inc->reason) - n, fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------- map changes */

void mon_map_log_changes(struct mon *mon, const struct mon_map *old, const struct mon_inc *inc)
{
	char a[MON_FLAGS_STR_MAX], b[MON_FLAGS_STR_MAX];

	for (uint32_t i = 0; i < inc->nops; i++) {
		const struct mon_op *op = &inc->ops[i];
		const struct mon_osd *prev;

		switch (op->kind) {
		case MON_OP_OSD_SET:
			prev = mon_map_osd(old, op->osd.id);
			if (prev != NULL && ((prev->state ^ op->osd.state) & MON_OSD_FULLNESS))
				log_info("mon", "%s: epoch %u: osd.%u %s -> %s (%s)", mon->name,
					 inc->epoch, op->osd.id,
					 (prev->state & MON_OSD_FULLNESS) ? mon_osd_fullness_str(prev->state)
									  : "not full",
					 (op->osd.state & MON_OSD_FULLNESS)
						 ? mon_osd_fullness_str(op->osd.state)
						 : "not full",
					 inc->reason);
			if (prev != NULL && ((prev->state ^ op->osd.state) & ~MON_OSD_FULLNESS) == 0)
				break;
			log_info("mon", "%s: epoch %u: osd.%u %s -> %s (%s)", mon->name, inc->epoch,
				 op->osd.id, prev != NULL ? mon_osd_state_str(prev->state) : "new",
				 mon_osd_state_str(op->osd.state), inc->reason);
			break;
		case MON_OP_POOL_SET:
			log_info("mon", "%s: epoch %u: pool %u '%s' size %u min_size %u pg_num %u%s%s (%s)",
				 mon->name, inc->epoch, op->pool.id, op->pool.name, op->pool.size,
				 op->pool.min_size, op->pool.pg_num,
				 op->pool.quota_max_bytes || op->pool.quota_max_objects ? " quota" : "",
				 (op->pool.flags & MON_POOL_F_FULL) ? " full" : "", inc->reason);
			break;
		case MON_OP_FULL_RATIOS:
			log_info("mon", "%s: epoch %u: full ratios %.3f/%.3f/%.3f (%s)", mon->name,
				 inc->epoch, op->ratios.nearfull / 1e6, op->ratios.backfillfull / 1e6,
				 op->ratios.full / 1e6, inc->reason);
			break;
		case MON_OP_POOL_RM:
			log_info("mon", "%s: epoch %u: pool %u removed (%s)", mon->name, inc->epoch,
				 op->pool_id, inc->reason);
			break;
		case MON_OP_FLAGS:
			log_info("mon", "%s: epoch %u: flags '%s' -> '%s' (%s)", mon->name,
				 inc->epoch, mon_flags_str(old->flags, a, sizeof(a)),
				 mon_flags_str(op->flags, b, sizeof(b)), inc->reason);
			break;
		}
	}
	if (inc->nops == 0)
		log_info("mon", "%s: epoch %u: %s", mon->name, inc->epoch, inc->reason);
}

/* -------------------------------------------------------------- liveness */

static int mon_live_grow(struct mon *mon, uint32_t n)
{
	struct mon_live *l;
	uint64_t now = clock_now_ms();

	if (n <= mon->nlive)
		return 0;
	l = realloc(mon->live, sizeof(*l) * n);
	if (l == NULL)
		return -ENOMEM;
	for (uint32_t i = mon->nlive; i < n; i++) {
		memset(&l[i], 0, sizeof(l[i]));
		l[i].last_beacon_ms = now;
	}
	mon->live = l;
	mon->nlive = n;
	return 0;
}

void mon_live_reset(struct mon *mon)
{
	/* A new leader knows no beacon history: every OSD gets a full grace period. */
	mon->nlive = 0;
	mon_live_grow(mon, mon->map.max_osd);
	mon_member_seen_reset(mon);
}

/*
 * Reports standing against OSD id: each reporter up in the map and heard
 * within the grace, counted once per host. mon_osd_min_down_reporters
 * counts hosts (Ceph's reporter subtree level "host"): the OSDs of one host
 * share its network and its troubles. Stale reports are dropped here.
 */
static unsigned int mon_live_reports(struct mon *mon, uint32_t id, uint64_t now)
{
	struct mon_live *l = &mon->live[id];
	const char *hosts[MON_REPORTERS_MAX];
	unsigned int nhosts = 0;

	for (unsigned int i = 0; i < l->nreporters;) {
		const struct mon_osd *r = mon_map_osd(&mon->map, l->reporters[i]);
		unsigned int k;

		if (r == NULL || !(r->state & MON_OSD_UP) || now - l->report_ms[i] > mon->grace_ms) {
			l->nreporters--;
			l->reporters[i] = l->reporters[l->nreporters];
			l->report_ms[i] = l->report_ms[l->nreporters];
			continue;
		}
		for (k = 0; k < nhosts && strcmp(hosts[k], r->host) != 0; k++)
			;
		if (k == nhosts)
			hosts[nhosts++] = r->host;
		i++;
	}
	return nhosts;
}

/*
 * Flap damping: an OSD that peer reports marked down mon_osd_report_markdown_max
 * times within the period (a peer or a link that keeps failing, an OSD
 * that hangs and recovers) is marked down by its beacons only, until the
 * period has passed since the oldest of those markdowns.
 */
static bool mon_live_damped(struct mon *mon, uint32_t id, uint64_t now)
{
	struct mon_live *l = &mon->live[id];
	unsigned int n = 0;

	for (unsigned int i = 0; i < MON_MARKDOWNS_MAX; i++)
		if (l->markdown_ms[i] != 0 && now - l->markdown_ms[i] < mon->markdown_period_ms)
			n++;
	if (n < mon->markdown_max) {
		l->damped = false;
		return false;
	}
	if (!l->damped)
		log_warn("mon", "%s: osd.%u was marked down by peer reports %u times in %llu s: "
				"ignoring its peers' reports (beacon grace only)",
			 mon->name, id, n, (unsigned long long)(mon->markdown_period_ms / 1000));
	l->damped = true;
	return true;
}

static bool mon_live_reported(struct mon *mon, uint32_t id, uint64_t now)
{
	return mon->live[id].nreporters > 0 && mon_live_reports(mon, id, now) >= mon->min_reporters &&
	       !mon_live_damped(mon, id, now);
}

static void mon_live_markdown_note(struct mon_live *l, uint64_t now)
{
	unsigned int oldest = 0;

	for (unsigned int i = 1; i < MON_MARKDOWNS_MAX; i++)
		if (l->markdown_ms[i] < l->markdown_ms[oldest])
			oldest = i;
	l->markdown_ms[oldest] = now;
}

static int mon_job_build_live(struct mon *mon, struct mon_job *job, struct mon_inc *inc)
{
	uint64_t now = clock_now_ms(), wall = (uint64_t)clock_wall_s();
	int rc;

	mon->live_job_queued = false;
	mon_live_grow(mon, mon->map.max_osd);
	for (uint32_t id = 0; id < mon->map.max_osd && id < mon->nlive; id++) {
		struct mon_osd o = mon->map.osds[id];
		struct mon_live *l = &mon->live[id];

		if (!(o.state & MON_OSD_EXISTS))
			continue;
		if (o.state & MON_OSD_UP) {
			if (mon->map.flags & MON_FLAG_NODOWN)
				continue; /* nodown: neither the grace nor reports mark it down */
			if (now - l->last_beacon_ms > mon->grace_ms)
				mon_reason_add(inc, "osd.%u: no beacon for %.1f s (grace %.1f s)",
					       id, (now - l->last_beacon_ms) / 1000.0,
					       mon->grace_ms / 1000.0);
			else if (mon_live_reported(mon, id, now)) {
				mon_reason_add(inc, "osd.%u: reported failed by %u peers on %u hosts (min %u)",
					       id, l->nreporters, mon_live_reports(mon, id, now),
					       mon->min_reporters);
				mon_live_markdown_note(l, now);
			} else
				continue;
			o.state &= (uint8_t)~MON_OSD_UP;
			o.down_at = inc->epoch;
			o.down_stamp = wall;
			l->nreporters = 0;
		} else if ((o.state & MON_OSD_IN) && !(mon->map.flags & MON_FLAG_NOOUT) &&
			   mon->down_out_s > 0 && o.down_stamp != 0 &&
			   wall >= o.down_stamp + mon->down_out_s) {
			mon_reason_add(inc, "osd.%u: down for %llu s (mon_osd_down_out_interval %llu s)",
				       id, (unsigned long long)(wall - o.down_stamp),
				       (unsigned long long)mon->down_out_s);
			o.state &= (uint8_t)~MON_OSD_IN;
		} else {
			continue;
		}
		rc = mon_inc_osd(inc, &o);
		if (rc != 0)
			return rc;
	}
	return inc->nops > 0 ? 0 : 1;
}

void mon_live_check(struct mon *mon)
{
	uint64_t now = clock_now_ms(), wall = (uint64_t)clock_wall_s();
	struct mon_job *job;
	bool due = false;

	if (now - mon->last_check_ms < MON_LIVE_CHECK_MS || mon->live_job_queued)
		return;
	mon->last_check_ms = now;
	mon_live_grow(mon, mon->map.max_osd);
	for (uint32_t id = 0; id < mon->map.max_osd && id < mon->nlive && !due; id++) {
		const struct mon_osd *o = &mon->map.osds[id];
		const struct mon_live *l = &mon->live[id];

		if (!(o->state & MON_OSD_EXISTS))
			continue;
		if (o->state & MON_OSD_UP)
			due = !(mon->map.flags & MON_FLAG_NODOWN) &&
			      (now - l->last_beacon_ms > mon->grace_ms ||
			       mon_live_reported(mon, id, now));
		else
			due = (o->state & MON_OSD_IN) && !(mon->map.flags & MON_FLAG_NOOUT) &&
			      mon->down_out_s > 0 && o->down_stamp != 0 &&
			      wall >= o->down_stamp + mon->down_out_s;
	}
	if (!due)
		return;
	job = mon_job_alloc(NULL, 0, mon_job_build_live);
	if (job == NULL)
		return;
	/* Set first: the submit may build the job at once, which clears it. */
	mon->live_job_queued = true;
	if (mon_job_submit(mon, job) != 0)
		mon->live_job_queued = false;
}

/* ------------------------------------------------------------ membership */

static int mon_job_build_boot(struct mon *mon, struct mon_job *job, struct mon_inc *inc)
{
	const struct proto_osd_boot *b = &job->boot;
	const struct mon_osd *cur = NULL;
	struct mon_osd o;
	uint32_t id = PROTO_OSD_ID_NONE;
	int rc;

	for (uint32_t i = 0; i < mon->map.max_osd; i++) {
		if ((mon->map.osds[i].state & MON_OSD_EXISTS) &&
		    !memcmp(mon->map.osds[i].uuid, b->uuid, PROTO_UUID_LEN)) {
			id = i;
			break;
		}
	}
	if (id == PROTO_OSD_ID_NONE && b->want_id != PROTO_OSD_ID_NONE) {
		if (b->want_id >= MON_OSD_MAX) {
			mon_job_refuse(job, "osd id %u is out of range", b->want_id);
			return -EINVAL;
		}
		if (mon_map_osd(&mon->map, b->want_id) != NULL) {
			mon_job_refuse(job, "osd.%u exists with another uuid", b->want_id);
			return -EEXIST;
		}
		id = b->want_id;
	}
	if (id != PROTO_OSD_ID_NONE && b->want_id != PROTO_OSD_ID_NONE && id != b->want_id) {
		mon_job_refuse(job, "this uuid is osd.%u, not osd.%u", id, b->want_id);
		return -EEXIST;
	}
	for (uint32_t i = 0; id == PROTO_OSD_ID_NONE && i <= mon->map.max_osd; i++)
		if (i < MON_OSD_MAX && mon_map_osd(&mon->map, i) == NULL)
			id = i;
	if (id == PROTO_OSD_ID_NONE) {
		mon_job_refuse(job, "no free osd id");
		return -ENOSPC;
	}
	cur = mon_map_osd(&mon->map, id);
	/*
	 * noup: the boot waits (the OSD asks again until the flag goes; -EBUSY
	 * is not retried by the mon client, so the OSD sees the reason at once).
	 */
	if (mon->map.flags & MON_FLAG_NOUP) {
		mon_job_refuse(job, "noup is set: osd.%u is not marked up until 'weft osd unset "
			       "noup'", id);
		return -EBUSY;
	}
	memset(&o, 0, sizeof(o));
	if (cur != NULL)
		o = *cur;
	o.id = id;
	memcpy(o.uuid, b->uuid, PROTO_UUID_LEN);
	snprintf(o.host, sizeof(o.host), "%s", b->host);
	snprintf(o.public_addr, sizeof(o.public_addr), "%s", b->public_addr);
	snprintf(o.cluster_addr, sizeof(o.cluster_addr), "%s", b->cluster_addr);
	if (b->weight != 0 || cur == NULL)
		o.weight = b->weight != 0 ? b->weight : MON_WEIGHT_ONE;
	/*
	 * A boot marks the OSD in, unless an operator marked it out (Ceph's
	 * auto-mark-in of an OSD that only the down-out interval took out). A
	 * restart does not empty the store: its fullness stays until its next
	 * report.
	 */
	if (cur != NULL && (cur->state & MON_OSD_KEEP_OUT))
		o.state = MON_OSD_EXISTS | MON_OSD_UP | MON_OSD_KEEP_OUT;
	else if ((mon->map.flags & MON_FLAG_NOIN) && (cur == NULL || !(cur->state & MON_OSD_IN)))
		o.state = MON_OSD_EXISTS | MON_OSD_UP; /* noin: a new or out OSD stays out */
	else
		o.state = MON_OSD_EXISTS | MON_OSD_UP | MON_OSD_IN;
	o.state |= cur != NULL ? (cur->state & MON_OSD_FULLNESS) : 0;
	job->result_id = id;
	mon_live_grow(mon, id + 1);
	if (id < mon->nlive) {
		mon->live[id].last_beacon_ms = clock_now_ms();
		mon->live[id].nreporters = 0;
	}
	/*
	 * Every boot starts an epoch, even with the same addresses and never
	 * marked down: up_from moves, so the OSD's PGs start new intervals (it
	 * lost what it had not committed) and the versions it orders come from
	 * an epoch no earlier process of it ordered in (docs/recovery.md). A
	 * boot asked twice (a lost reply) costs one more epoch, nothing else.
	 */
	o.up_from = inc->epoch;
	snprintf(inc->reason, sizeof(inc->reason), "osd.%u booted (%s, host %s, public %s)", id,
		 cur == NULL ? "new" : "known", o.host, o.public_addr);
	rc = mon_inc_osd(inc, &o);
	/* a new OSD is new capacity: the balancer fills it (docs/scale.md) */
	if (rc == 0 && (cur == NULL || o.weight > cur->weight) && mon_crush_pin(mon, inc) != 0)
		log_error("mon", "%s: osd.%u: cannot pin PGs; placement moves them", mon->name, id);
	return rc;
}

void mon_osd_boot(struct mon *mon, struct msgr_conn *conn, uint64_t tid,
		  const struct proto_osd_boot *boot)
{
	struct mon_job *job = mon_job_alloc(conn, tid, mon_job_build_boot);
	int rc;

	if (job == NULL) {
		mon_reply(mon, msgr_conn_id(conn), tid, -ENOMEM, NULL, "out of memory");
		return;
	}
	job->boot = *boot;
	rc = mon_job_submit(mon, job);
	if (rc != 0)
		mon_reply(mon, msgr_conn_id(conn), tid, rc, NULL, "cannot queue the boot: %s",
			  strerror(-rc));
}

void mon_osd_beacon(struct mon *mon, const struct proto_osd_beacon *b)
{
	const struct mon_osd *o = mon_map_osd(&mon->map, b->id);

	if (o == NULL || memcmp(o->uuid, b->uuid, PROTO_UUID_LEN) != 0 || b->id >= mon->nlive)
		return; /* not registered (yet): it will boot */
	mon->live[b->id].last_beacon_ms = clock_now_ms();
}

void mon_osd_failure(struct mon *mon, const struct proto_osd_failure *f)
{
	const struct mon_osd *t = mon_map_osd(&mon->map, f->target);
	const struct mon_osd *r = mon_map_osd(&mon->map, f->reporter);
	struct mon_live *l;
	unsigned int i;

	if (t == NULL || r == NULL || !(t->state & MON_OSD_UP) || !(r->state & MON_OSD_UP) ||
	    f->target >= mon->nlive)
		return;
	l = &mon->live[f->target];
	for (i = 0; i < l->nreporters && l->reporters[i] != f->reporter; i++)
		;
	if (f->flags & PROTO_FAIL_F_ALIVE) {
		if (i < l->nreporters) {
			l->nreporters--;
			l->reporters[i] = l->reporters[l->nreporters];
			l->report_ms[i] = l->report_ms[l->nreporters];
		}
		return;
	}
	if (i == l->nreporters) {
		if (l->nreporters == MON_REPORTERS_MAX)
			return;
		l->reporters[l->nreporters++] = f->reporter;
		log_info("mon", "%s: osd.%u reported failed by osd.%u (host %s) after %u ms "
				"(%u reporters, %u hosts needed)",
			 mon->name, f->target, f->reporter, r->host, f->failed_ms, l->nreporters,
			 mon->min_reporters);
	}
	l->report_ms[i] = clock_now_ms(); /* reporters repeat while it stays unreachable */
	/* mark it down now, not at the next liveness tick */
	mon->last_check_ms = 0;
	mon_live_check(mon);
}
