/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Peering on the primary (docs/recovery.md, "Intervals and peering"). A
 * map whose acting set differs starts an interval; its primary stops
 * ordering writes (env->interval), waits for its own transactions to
 * commit, asks the copies that may matter (the members, the members of
 * every past interval since the PG last went active, strays that told us
 * they hold a copy) for their info, waits for every member and for one
 * member of every past interval that may have acknowledged writes (the
 * prior-set rule, pg_pi.c), chooses the authoritative history
 * (pg_merge.c), fetches the logs it needs, sends each member what it
 * lacks, and goes active. Recovery (pg_recovery.c) then makes every copy
 * whole. This file also dispatches messages and timers to the others.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osd/pg/pg_int.h"

int pg_peer_index(const struct pg *pg, int32_t osd)
{
	for (unsigned int i = 0; i < pg->np; i++)
		if (pg->p[i].osd == osd)
			return (int)i;
	return -1;
}

/* Is osd a member of our interval (other than us)? */
static bool pg_peer_is_acting(const struct pg *pg, int32_t osd)
{
	for (unsigned int i = 1; i < pg->nacting; i++)
		if (pg->acting[i] == osd)
			return true;
	return false;
}

struct pg_peer *pg_peer_add(struct pg *pg, int32_t osd, bool acting)
{
	int i = pg_peer_index(pg, osd);
	struct pg_peer *p;

	if (osd == pg->env->self || osd < 0)
		return NULL;
	if (i >= 0) {
		pg->p[i].acting |= acting;
		return &pg->p[i];
	}
	if (pg->np == pg->capp) {
		unsigned int cap = pg->capp ? pg->capp * 2 : 8;
		struct pg_peer *n = cap <= PG_PEERS_MAX ? realloc(pg->p, cap * sizeof(*n)) : NULL;

		if (n == NULL) {
			pg_logf(pg, PG_LOG_WARN, "no room to ask a %uth copy: osd.%d left out",
				pg->np + 1, osd);
			return NULL;
		}
		pg->p = n;
		pg->capp = cap;
	}
	p = &pg->p[pg->np++];
	memset(p, 0, sizeof(*p));
	p->osd = osd;
	p->acting = acting;
	return p;
}

static void pg_peer_free(struct pg_peer *p)
{
	for (uint32_t i = 0; i < p->nrb; i++)
		free(p->rb[i].name);
	free(p->rb);
	p->rb = NULL;
	p->nrb = p->caprb = 0;
	pg_set_clear(&p->missing);
	free(p->bf_pos);
	free(p->bf_remote);
	p->bf_pos = NULL;
	p->bf_remote = NULL;
}

void pg_peer_reset(struct pg *pg)
{
	pg_recovery_release(pg);
	/* strays we heard hold a copy until told otherwise: the next peering asks them again */
	for (unsigned int i = 0; i < pg->np; i++) {
		const struct pg_peer *p = &pg->p[i];
		bool known = false;

		if (p->acting || !p->heard || (p->info.flags & PROTO_PG_INFO_F_EMPTY))
			continue;
		for (unsigned int k = 0; k < pg->nstrays; k++)
			known |= pg->strays[k] == p->osd;
		if (!known && pg->nstrays < PG_STRAYS_MAX)
			pg->strays[pg->nstrays++] = p->osd;
	}
	for (unsigned int i = 0; i < pg->np; i++)
		pg_peer_free(&pg->p[i]);
	pg->np = 0;
	pg->auth = -1;
	pg->base = -1;
	pg->auth_lu = 0;
	pg->self_backfill = false;
	pg_set_clear(&pg->missing);
	pg_fetch_reset(pg);
	pg->unfound = 0;
	pg->nblocked = 0;
}

static bool pg_acting_same(const struct pg *pg, const struct pg_map *m)
{
	if (pg->nacting != m->n || memcmp(pg->acting, m->acting, m->n * sizeof(*m->acting)))
		return false;
	/* the same members, but one of them restarted: a new interval all the same */
	return m->up_from == NULL ||
	       !memcmp(pg->acting_up_from, m->up_from, m->n * sizeof(*m->up_from));
}

/* Start over in the same interval (a down PG after a map, a replica that failed). */
static void pg_peer_restart(struct pg *pg, const char *why)
{
	pg_logf(pg, PG_LOG_INFO, "peering again: %s", why);
	pg->env->ops->interval(pg->env->arg, pg);
	pg_peer_reset(pg);
	pg_scrub_stop(pg);
	pg->restart_wanted = false;
	pg->phase = PG_PH_WAIT_TX;
	pg_update_state(pg);
	pg_peer_start(pg);
}

void pg_map(struct pg *pg, const struct pg_map *m)
{
	int32_t self = pg->env->self;

	pg_tick_want(pg);
	if (m->epoch > pg->map_epoch)
		pg->map_epoch = m->epoch;
	bool in = false, was_primary = pg->primary;
	char who[PG_MAX_REPLICAS * 8] = "";

	for (unsigned int i = 0; i < m->n; i++)
		in |= m->acting[i] == self;
	/*
	 * Every copy follows the PG's history, member or not: a stray may be a
	 * witness later; so does a machine that went active once, with or
	 * without data (it witnessed that interval, and its `since` must stay
	 * true). One with no copy that was never active (a new one, a removed
	 * stray) stops following outside the acting set, so what it knew gets
	 * a hole: it forgets it, and is blind (unsure) when it is in again.
	 */
	bool follow = in || pg_has_copy(pg) || pg->info.les != 0;

	if (!follow && (pg->info.pi.epoch != 0 || pg->info.since != 0)) {
		memset(&pg->info.pi, 0, sizeof(pg->info.pi));
		pg->info.since = 0;
		pg_persist_info(pg);
	}
	if (in && pg->info.pi.epoch == 0 && !pg_has_copy(pg) && pg->info.les == 0)
		pg->pi_unsure = true; /* new to this PG: what happened before is unknown to us */
	if (m->created != 0 && pg->info.born == 0)
		pg->info.born = m->created; /* we saw the pool appear */
	if (follow) {
		uint32_t dropped = pg->info.pi.dropped;
		int rc = pg_pi_advance(&pg->info.pi, m->epoch, m->gap_from, m->acting, m->n,
				       m->min_size);

		if (pg->info.since == 0) {
			pg->info.since = m->epoch; /* we follow its maps from here */
			rc = rc ? rc : 1;
		}
		if (pg->info.pi.dropped != dropped)
			pg_logf(pg, PG_LOG_WARN, "more than %u past intervals since it was last "
						 "active: the oldest is forgotten", PG_PI_MAX);
		if (rc == 2)
			pg->pi_gap = true;
		if (rc != 0)
			pg_persist_info(pg);
	}
	pg->size = m->size;
	pg->min_size = m->min_size;
	if (!in) {
		if (pg->nacting > 0 || pg->same_since == 0) {
			/*
			 * The old interval's records are refused: from where the new
			 * one began. A machine that never followed the PG (made for a
			 * query, no copy) does not know where that is, and has nothing
			 * to protect: no fence, or it would drop the query of a primary
			 * whose interval began before our first map.
			 */
			uint32_t start = pg->info.pi.cur.first;

			if (pg->nacting > 0)
				pg->left_epoch = m->epoch;
			pg->same_since = m->epoch;
			if (start != 0 && pg->fence < start)
				pg->fence = start;
			pg->nacting = 0;
			pg->primary = false;
			pg_peer_reset(pg);
			pg_scrub_stop(pg);
			if (pg->act_epoch < m->epoch)
				pg_act_reset(pg);
			pg->phase = PG_PH_NONE;
			pg->state = 0;
			pg->env->ops->interval(pg->env->arg, pg);
		}
		/* a new primary, a new interval, or a restarted primary: it may not know of us */
		if (pg->stray_primary != m->primary || pg->notify_epoch != pg->info.pi.cur.first ||
		    pg->notify_up_from != m->primary_up_from)
			pg->notify_heard = false;
		pg->notify_up_from = m->primary_up_from;
		pg->stray_primary = m->primary;
		if (pg_has_copy(pg) && m->primary >= 0 && !pg->notify_heard)
			pg_stray_notify(pg, m->primary);
		return;
	}
	pg->stray_primary = -1;
	if (pg->same_since != 0 && pg_acting_same(pg, m)) {
		if (pg->primary && pg->phase == PG_PH_DOWN)
			pg_peer_restart(pg, "a new map may bring up an OSD it waits for");
		else if (pg->primary && pg->phase == PG_PH_GETINFO)
			pg_peer_start(pg); /* ask who is up now; check again */
		else
			pg_update_state(pg);
		return;
	}
	pg->same_since = m->epoch;
	memcpy(pg->acting, m->acting, m->n * sizeof(*m->acting));
	if (m->up_from)
		memcpy(pg->acting_up_from, m->up_from, m->n * sizeof(*m->up_from));
	else
		memset(pg->acting_up_from, 0, sizeof(pg->acting_up_from));
	pg->nacting = m->n;
	pg->primary = m->acting[0] == self;
	if (pg->fence < pg->same_since)
		pg->fence = pg->same_since; /* records and pushes of older intervals are refused */
	pg_peer_reset(pg);
	pg_scrub_stop(pg);
	/* entries of the new interval's activation may have come before this map */
	if (pg->act_epoch < m->epoch)
		pg_act_reset(pg);
	pg->restart_wanted = false;
	pg->env->ops->interval(pg->env->arg, pg);
	if (!pg->primary) {
		pg->phase = PG_PH_NONE;
		pg->state = 0;
		(void)was_primary;
		return;
	}
	for (unsigned int i = 0; i < m->n; i++)
		snprintf(who + strlen(who), sizeof(who) - strlen(who), "%s%d", i ? "," : "",
			 m->acting[i]);
	pg_logf(pg, PG_LOG_INFO, "new interval at epoch %u, acting [%s]: peering", m->epoch, who);
	pg->phase = PG_PH_WAIT_TX;
	pg_update_state(pg);
	pg_peer_start(pg);
}

/* Who may hold what peering must see: members, past members since les, notified strays. */
static void pg_peer_probe(struct pg *pg)
{
	uint64_t now = pg_now(pg);

	for (unsigned int i = 1; i < pg->nacting; i++)
		pg_peer_add(pg, pg->acting[i], true);
	for (uint32_t k = 0; k < pg->info.pi.n; k++) {
		const struct pg_pi_ent *iv = &pg->info.pi.e[k];

		for (unsigned int j = 0; j < iv->n; j++)
			if (pg_osd_up(pg, iv->osd[j]))
				pg_peer_add(pg, iv->osd[j], false);
	}
	for (unsigned int k = 0; k < pg->nstrays; k++)
		if (pg_osd_up(pg, pg->strays[k]))
			pg_peer_add(pg, pg->strays[k], false);
	pg->nstrays = 0; /* those that still hold a copy answer and are kept again */
	/* intervals forgotten (the bound, a map gap, new to it): any up OSD may hold the history */
	if (pg->info.pi.dropped > 0 || pg->pi_gap || pg->pi_unsure) {
		uint32_t max = pg->env->ops->max_osd(pg->env->arg);

		for (uint32_t id = 0; id < max; id++)
			if (pg_osd_up(pg, (int32_t)id))
				pg_peer_add(pg, (int32_t)id, false);
	}
	for (unsigned int i = 0; i < pg->np; i++) {
		struct pg_peer *p = &pg->p[i];
		struct proto_pg q = pg_hdr(pg);

		if (p->queried || !pg_osd_up(pg, p->osd))
			continue;
		p->queried = true;
		p->query_ms = now;
		pg_send(pg, p->osd, PROTO_PG_QUERY, &q);
	}
}

/* WAIT_TX -> GETINFO once our own transactions committed. */
void pg_peer_start(struct pg *pg)
{
	if (!pg->primary)
		return;
	if (pg->tx_inflight > 0) {
		pg->phase = PG_PH_WAIT_TX; /* pg_member_settled calls again */
		return;
	}
	pg->phase = PG_PH_GETINFO;
	pg_peer_probe(pg);
	pg_peer_check(pg);
}

/* Heard from, with the epoch it last went active in (pg_pi_check). */
static int pg_prior_heard(void *arg, int32_t id, uint32_t *les_out)
{
	struct pg *pg = arg;
	int i;

	if (id == pg->env->self) {
		*les_out = pg->info.les;
		return 1;
	}
	i = pg_peer_index(pg, id);
	if (i < 0 || !pg->p[i].heard)
		return 0;
	*les_out = pg->p[i].info.les;
	return 1;
}

static bool pg_prior_up(void *arg, int32_t id)
{
	return pg_osd_up(arg, id);
}

static void pg_peer_down(struct pg *pg)
{
	pg->phase = PG_PH_DOWN;
	pg_update_state(pg);
}

/*
 * Has every OSD that exists answered? 1: yes; 0: an up one has not (it was
 * asked: wait for it); -1: some are down, now in pg->blocked and in `who`.
 */
static int pg_peer_all_heard(struct pg *pg, char *who, size_t wlen)
{
	uint32_t max = pg->env->ops->max_osd(pg->env->arg);
	int32_t blocked[PROTO_PG_BLOCKED_MAX];
	unsigned int nb = 0;

	who[0] = '\0';
	for (uint32_t id = 0; id < max; id++) {
		int i = pg_peer_index(pg, (int32_t)id);

		if ((int32_t)id == pg->env->self ||
		    !pg->env->ops->osd_exists(pg->env->arg, (int32_t)id) ||
		    (i >= 0 && pg->p[i].heard))
			continue;
		if (pg_osd_up(pg, (int32_t)id))
			return 0;
		if (nb < PROTO_PG_BLOCKED_MAX) {
			snprintf(who + strlen(who), wlen - strlen(who), "%sosd.%u", nb ? ", " : "", id);
			blocked[nb++] = (int32_t)id;
		}
	}
	if (nb == 0)
		return 1;
	memcpy(pg->blocked, blocked, nb * sizeof(*blocked));
	pg->nblocked = (uint8_t)nb;
	return -1;
}

/*
 * The past intervals we hold are complete since `les` only if some copy we
 * heard (or we) followed the PG's maps from `les` on, or from its creation
 * when it was never active. Copies that all began following later (new
 * OSDs, replaced disks, a PG whose knowing copies are all down) would
 * otherwise find "no interval to cover" and go active on an empty history,
 * rolling back what the down copies acknowledged. Then, as when past
 * intervals were forgotten, only every OSD's answer is proof that no
 * history exists. 1: go on; 0: asked every up OSD, wait; -1: down.
 */
static int pg_peer_horizon(struct pg *pg, uint32_t les)
{
	uint32_t horizon = les > pg->info.born ? les : pg->info.born;
	uint32_t best = pg->info.since;
	char who[PROTO_PG_BLOCKED_MAX * 12];
	int rc;

	for (unsigned int i = 0; i < pg->np; i++) {
		const struct pg_peer *p = &pg->p[i];

		if (p->heard && p->info.since != 0 && (best == 0 || p->info.since < best))
			best = p->info.since;
	}
	if (horizon != 0 && best != 0 && best <= horizon)
		return 1;
	if (!pg->pi_unsure) {
		pg->pi_unsure = true; /* blind after all: every up OSD is asked */
		pg_peer_probe(pg);
	}
	rc = pg_peer_all_heard(pg, who, sizeof(who));
	if (rc >= 0)
		return rc; /* 1: every OSD answered, no history exists anywhere; 0: wait */
	if (horizon == 0)
		pg_logf(pg, PG_LOG_WARN, "down: no copy heard was ever active or saw the PG "
					 "created, so its history is unknown; waiting for %s", who);
	else
		pg_logf(pg, PG_LOG_WARN, "down: the copies heard followed the PG only since epoch "
					 "%u, its history since %u is unknown; waiting for %s",
			 best, horizon, who);
	return -1;
}

/* GETINFO: every member answered, and the prior set is covered: choose, fetch, activate. */
void pg_peer_check(struct pg *pg)
{
	struct pg_pi_probe probe = {pg_prior_heard, pg_prior_up, pg};
	int32_t blocked[PROTO_PG_BLOCKED_MAX];
	unsigned int members = 1, nb = 0;
	uint32_t les = pg->info.les;
	enum pg_pi_verdict v;
	char who[PROTO_PG_BLOCKED_MAX * 12] = "";
	int hz;

	if (!pg->primary || pg->phase != PG_PH_GETINFO)
		return;
	for (unsigned int i = 0; i < pg->np; i++) {
		const struct pg_peer *p = &pg->p[i];

		if (p->acting && !p->answered)
			return; /* members must answer (a dead one is marked down by a new map) */
		/* blind to the history: every up OSD's answer, with the intervals it knows */
		if ((pg->pi_unsure || pg->pi_gap) && !p->answered && pg_osd_up(pg, p->osd))
			return;
		members += p->acting;
		if (p->heard && p->info.les > les)
			les = p->info.les;
	}
	if (members < pg->min_size) {
		pg_logf(pg, PG_LOG_INFO, "%u of min_size %u members answer: down, I/O (write "
					 "blocked) waits for more", members, pg->min_size);
		return pg_peer_down(pg);
	}
	if (pg->env->ops->log != NULL) {
		char buf[400] = "";

		for (unsigned int i = 0; i < pg->np; i++)
			if (pg->p[i].heard)
				snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
					 " osd.%d(les %u lu %llx%s)", pg->p[i].osd, pg->p[i].info.les,
					 (unsigned long long)pg->p[i].info.last_update,
					 (pg->p[i].info.flags & PROTO_PG_INFO_F_BACKFILL) ? " bf" : "");
		pg_logf(pg, PG_LOG_DEBUG, "answers in: les %u, %u past intervals, heard%s", les,
			pg->info.pi.n, buf);
		buf[0] = '\0';
		for (uint32_t k = 0; k < pg->info.pi.n && strlen(buf) < sizeof(buf) - 40; k++) {
			const struct pg_pi_ent *iv = &pg->info.pi.e[k];

			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " [%u-%u%s", iv->first,
				 iv->last, (iv->flags & PG_PI_F_ACTIVE) ? " A:" : ":");
			for (unsigned int j = 0; j < iv->n; j++)
				snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%d",
					 j ? "," : "", iv->osd[j]);
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "]");
		}
		pg_logf(pg, PG_LOG_DEBUG, "past intervals:%s", buf);
	}
	if (pg->info.pi.dropped > 0) {
		/* past intervals were forgotten (the bound): only every OSD's answer is proof */
		int rc = pg_peer_all_heard(pg, who, sizeof(who));

		if (rc == 0)
			return; /* asked (pg_peer_probe asks every up OSD then) */
		if (rc < 0) {
			pg_logf(pg, PG_LOG_WARN, "down: %u past intervals were forgotten (more than "
						 "%u since it was last active): waiting for every OSD, "
						 "%s is not up", pg->info.pi.dropped, PG_PI_MAX, who);
			return pg_peer_down(pg);
		}
	}
	v = pg_pi_check(&pg->info.pi, les, &probe, blocked, PROTO_PG_BLOCKED_MAX, &nb);
	if (v == PG_PI_WAIT)
		return; /* a past member is up and asked: its answer decides */
	if (v == PG_PI_DOWN) {
		unsigned int k = 0;

		for (unsigned int i = 0; i < nb; i++) {
			if (blocked[i] == pg->env->self)
				continue; /* our own copy is here: we wait for the others */
			pg->blocked[k++] = blocked[i];
			snprintf(who + strlen(who), sizeof(who) - strlen(who), "%sosd.%d",
				 k > 1 ? ", " : "", blocked[i]);
		}
		pg->nblocked = (uint8_t)k;
		pg_logf(pg, PG_LOG_WARN, "down: an interval since epoch %u may have acknowledged "
					 "writes and none of its OSDs is up; waiting for %s", les, who);
		return pg_peer_down(pg);
	}
	hz = pg_peer_horizon(pg, les);
	if (hz == 0)
		return;
	if (hz < 0)
		return pg_peer_down(pg);
	pg->nblocked = 0;
	if (pg_merge_choose(pg) != 0)
		return;
	pg->phase = PG_PH_GETLOG;
	pg_peer_next(pg);
}

/*
 * The LOG_REQs of this interval that osd has not answered yet. A LOG does
 * not say which request it answers, and a fetch starts over from its
 * beginning when the primary peers again in the same interval: the answers
 * to the earlier round still arrive first (one connection, in order).
 * Taken for the new round's, a continuation's entries made fetch_after
 * jump, the new round's own first answer was then dropped as a duplicate,
 * and the merged log missed those entries (sim_pg seed 27312: a write of
 * the authoritative history never reached the primary's log, and its
 * members refused the object's push for ever). An answer lost with a
 * connection stays counted: every later fetch from that OSD in the
 * interval drops one answer too many, and its resend after
 * PG_LOG_RESEND_MS asks again. No request goes out uncounted: an OSD
 * without a slot has nothing due (a slot is reused only at 0), and while
 * every slot holds answers due the fetch waits (pg_fetch_send).
 */
static uint32_t *pg_lreq(struct pg *pg, int32_t osd, bool add)
{
	uint32_t k, slot = pg->nlreq;

	if (pg->lreq_epoch != pg->same_since) {
		pg->lreq_epoch = pg->same_since;
		pg->nlreq = slot = 0;
	}
	for (k = 0; k < pg->nlreq; k++) {
		if (pg->lreq[k].osd == osd)
			return &pg->lreq[k].n;
		if (slot == pg->nlreq && pg->lreq[k].n == 0)
			slot = k;
	}
	if (!add)
		return NULL; /* never asked, or nothing due: no answer of it is stale */
	if (slot == pg->nlreq) {
		if (pg->nlreq == PG_LREQ_MAX)
			return NULL;
		pg->nlreq++;
	}
	pg->lreq[slot].osd = osd;
	pg->lreq[slot].n = 0;
	return &pg->lreq[slot].n;
}

static void pg_fetch_send(struct pg *pg)
{
	struct proto_pg r = pg_hdr(pg);
	uint32_t *n = pg_lreq(pg, pg->p[pg->fetch].osd, true);

	pg->fetch_ms = pg_now(pg);
	if (n == NULL) {
		/* every slot has answers due (lost ones): uncounted, a late one could pass */
		pg_logf(pg, PG_LOG_WARN,
			"%u OSDs still owe log answers: the fetch from osd.%d "
			"waits",
			PG_LREQ_MAX, pg->p[pg->fetch].osd);
		return; /* the GETLOG tick tries again after PG_LOG_RESEND_MS */
	}
	r.after = pg->fetch_after;
	r.max = pg->env->max_chunk ? pg->env->max_chunk : PROTO_PG_ENTRIES_MAX;
	(*n)++;
	pg_send(pg, pg->p[pg->fetch].osd, PROTO_PG_LOG_REQ, &r);
}

static void pg_fetch_begin(struct pg *pg, int i, uint64_t after)
{
	uint32_t *n = pg_lreq(pg, pg->p[i].osd, false);

	pg->fetch = i;
	pg->fetch_from = pg->fetch_after = after;
	pg->fetch_stale = n != NULL ? *n : 0; /* answers to the earlier rounds come first */
	for (uint32_t k = 0; k < pg->nfe; k++)
		free(pg->fe[k].name);
	pg->nfe = 0;
	pg_fetch_send(pg);
}

/* A LOG of this interval from osd: is it an answer to an earlier fetch round? */
static bool pg_fetch_stale(struct pg *pg, int32_t osd)
{
	uint32_t *n = pg_lreq(pg, osd, false);

	if (n == NULL || *n == 0)
		return false;
	(*n)--;
	if (pg->fetch < 0 || pg->p[pg->fetch].osd != osd || pg->fetch_stale == 0)
		return false;
	pg->fetch_stale--;
	pg_logf(pg, PG_LOG_DEBUG, "osd.%d answered an earlier fetch of its log: dropped", osd);
	return true;
}

void pg_fetch_reset(struct pg *pg)
{
	for (uint32_t k = 0; k < pg->nfe; k++)
		free(pg->fe[k].name);
	pg->nfe = 0;
	pg->fetch = -1;
}

/* GETLOG: the auth's log, then each member's that is needed; then activate. */
void pg_peer_next(struct pg *pg)
{
	if (pg->auth >= 0 && !pg->p[pg->auth].log_fetched) {
		pg_fetch_begin(pg, pg->auth, pg->p[pg->auth].info.tail);
		return;
	}
	for (unsigned int i = 0; i < pg->np; i++) {
		struct pg_peer *p = &pg->p[i];
		const struct proto_pg *in = &p->info;

		if (!p->acting || !p->answered || p->log_fetched || p->backfill)
			continue;
		/* a copy the log cannot bring up to date is rebuilt by a scan */
		if (((in->flags & PROTO_PG_INFO_F_EMPTY) && pg->info.tail > 0) ||
		    (in->flags & PROTO_PG_INFO_F_BACKFILL) ||
		    (!(in->flags & PROTO_PG_INFO_F_EMPTY) && in->last_update < pg->info.tail)) {
			p->backfill = true;
			continue;
		}
		if (pg_merge_member_needs_log(pg, p)) {
			pg_fetch_begin(pg, (int)i, in->tail);
			return;
		}
	}
	pg_peer_activate(pg);
}

void pg_peer_log(struct pg *pg, const struct proto_pg *m)
{
	static __thread struct proto_pg_log_entry e;
	size_t off = 0;
	int i = pg_peer_index(pg, (int32_t)m->from);
	uint64_t after0;

	if (m->epoch != pg->same_since || pg_fetch_stale(pg, (int32_t)m->from))
		return;
	if (pg->phase != PG_PH_GETLOG || i < 0 || i != pg->fetch)
		return;
	after0 = pg->fetch_after;
	while (proto_pg_log_entry_next(m, &off, &e)) {
		if (e.version <= pg->fetch_from)
			continue; /* before what this round fetches */
		if (e.version <= pg->fetch_after) {
			if (pg_fetched_find(pg, e.version) < pg->nfe)
				continue; /* a duplicate answer */
			/* one we went past without it: the counts missed (a safety net) */
			pg_logf(pg, PG_LOG_WARN,
				"osd.%d's log came out of order (v%llx after "
				"v%llx): fetched again",
				pg->p[i].osd, (unsigned long long)e.version,
				(unsigned long long)pg->fetch_after);
			pg_fetch_begin(pg, i, pg->fetch_from);
			return;
		}
		if (pg->nfe == pg->capfe) {
			uint32_t cap = pg->capfe ? pg->capfe * 2 : 256;
			struct pg_entry *n = realloc(pg->fe, cap * sizeof(*n));

			if (n == NULL)
				goto nomem;
			pg->fe = n;
			pg->capfe = cap;
		}
		pg->fe[pg->nfe].name = strdup(e.name);
		if (pg->fe[pg->nfe].name == NULL)
			goto nomem;
		pg->fe[pg->nfe].v = e.version;
		pg->fe[pg->nfe].op = e.op;
		pg->nfe++;
		pg->fetch_after = e.version;
	}
	if (!(m->flags & PROTO_PG_F_LAST)) {
		/*
		 * Only an answer that moved the fetch on asks for more: one that
		 * added nothing answered an earlier request (a resend's twin),
		 * and the request for what follows is on its way already.
		 */
		if (pg->fetch_after != after0)
			pg_fetch_send(pg);
		return;
	}
	if (i == pg->auth) {
		if (pg_merge_auth(pg) != 0) {
			pg_fetch_reset(pg);
			return pg_peer_down(pg);
		}
	} else {
		pg_merge_member_log(pg, &pg->p[i]);
		pg->p[i].missing_done = true;
	}
	pg->p[i].log_fetched = true;
	pg_fetch_reset(pg);
	pg_peer_next(pg);
	return;
nomem:
	pg_logf(pg, PG_LOG_ERROR, "no memory for osd.%d's log", pg->p[i].osd);
	pg_fetch_reset(pg);
	pg_peer_down(pg);
}

void pg_peer_activate(struct pg *pg)
{
	uint32_t lu_epoch = (uint32_t)(pg->info.lu >> 32), lu_seq = (uint32_t)pg->info.lu;

	for (unsigned int i = 0; i < pg->np; i++) {
		struct pg_peer *p = &pg->p[i];

		if (!p->acting || !p->answered)
			continue;
		if (!p->backfill && !p->missing_done)
			pg_merge_member_plain(pg, p);
		pg_merge_activate_member(pg, p);
	}
	if (pg->auth < 0)
		pg_merge_own_missing(pg, pg->self_backfill ? 0 : pg->info.lc);
	pg->info.les = pg->same_since;
	if (pg->info.since == 0 || pg->info.since > pg->info.les)
		pg->info.since = pg->info.les; /* the history we merged is ours now */
	pg_pi_trim(&pg->info.pi, pg->info.les); /* what came before is this interval's history now */
	pg->pi_gap = false;
	pg->pi_unsure = false;
	pg_persist_info(pg);
	/* versions go on after the newest entry, even within one epoch */
	if (pg->seq_epoch < lu_epoch || (pg->seq_epoch == lu_epoch && pg->seq < lu_seq)) {
		pg->seq_epoch = lu_epoch;
		pg->seq = lu_seq;
	}
	pg->phase = PG_PH_ACTIVE;
	pg_recovery_start(pg);
	pg_update_state(pg);
	pg->env->ops->kick(pg->env->arg, pg);
}

/* INFO (an answer to our QUERY) or NOTIFY (a stray telling us it holds a copy). */
void pg_peer_info(struct pg *pg, const struct proto_pg *m, bool notify)
{
	int i = pg_peer_index(pg, (int32_t)m->from);
	struct proto_pg_interval iv;
	struct pg_peer *p;
	unsigned int merged = 0;
	bool news;

	/* an answer to an older round still says a copy is there: asked again, like a notify */
	if (!notify && (i < 0 || m->epoch != pg->same_since)) {
		if (i >= 0 || m->epoch > pg->same_since)
			return; /* a known one answers this round anyway; a newer one is not ours */
		notify = true;
	}
	if (notify && i < 0) {
		struct proto_pg q = pg_hdr(pg);

		if (pg->phase == PG_PH_NONE || (m->flags & PROTO_PG_INFO_F_EMPTY))
			return;
		/*
		 * A member of ours heard before our probe (we waited for our own
		 * transactions) is a member all the same: only its answer to this
		 * interval's query counts, never a NOTIFY. sim_pg seed 92466: a
		 * stray's NOTIFY, sent just before it carried out the DELETE of our
		 * previous interval, was taken as its answer; as a member it was
		 * recovered from the last_update of a copy already gone, and held
		 * none of the older objects after clean (DIVERGENT).
		 */
		p = pg_peer_add(pg, (int32_t)m->from, pg_peer_is_acting(pg, (int32_t)m->from));
		if (p == NULL)
			return;
		/* asked like any copy: its answer (INFO) is what peering records */
		p->queried = true;
		p->query_ms = pg_now(pg);
		pg_send(pg, p->osd, PROTO_PG_QUERY, &q);
		return;
	} else {
		p = &pg->p[i];
	}
	if (notify && p->acting)
		return; /* its map is not ours yet: it answers our query */
	if (notify && !(m->flags & PROTO_PG_INFO_F_EMPTY))
		p->stray_delete_sent = false; /* still there: a delete was lost (it restarted) */
	news = !p->heard || p->info.last_update != m->last_update ||
	       p->info.last_complete != m->last_complete || p->info.flags != m->flags;
	p->info = *m;
	p->info.count = 0; /* the entries are a view into a receive buffer */
	p->info.entries = NULL;
	p->info.entries_len = 0;
	p->answered = p->heard = true;
	if (m->born != 0 && pg->info.born == 0)
		pg->info.born = m->born; /* persisted with our next info */
	/* intervals that ended before our own last activation cannot matter (les only grows) */
	for (size_t off = 0; proto_pg_interval_next(m, &off, &iv) == 1;)
		if (iv.last >= pg->info.les)
			merged += pg_pi_merge(&pg->info.pi, &iv) == 1;
	if (merged > 0)
		pg_logf(pg, PG_LOG_INFO, "%u past intervals learnt from osd.%u", merged, m->from);
	if (pg->phase == PG_PH_DOWN &&
	    ((news && !(m->flags & PROTO_PG_INFO_F_EMPTY)) || merged > 0)) {
		/* a copy, or intervals, heard after we judged: judge again (same round) */
		pg->phase = PG_PH_GETINFO;
		pg_update_state(pg);
	}
	if (pg->phase == PG_PH_GETINFO) {
		/*
		 * Intervals learnt since the probe (in this answer or an earlier
		 * one, also while down) may name OSDs that are up and were never
		 * asked: pg_pi_check waits for an up past member's answer, so it
		 * must be asked. The probe asks only those (the rest are queried
		 * already). sim_pg seed 15127: a primary restarted before it
		 * persisted the intervals it had learnt, probed the members
		 * alone, learnt them again from one, and waited in peering for
		 * ever for two up OSDs it never queried.
		 */
		pg_peer_probe(pg);
		pg_peer_check(pg);
	} else if (pg->phase == PG_PH_ACTIVE) {
		if (pg->primary)
			pg_merge_base_again(pg);
		pg_recovery_strays(pg);
	}
}

/* ------------------------------------------------------------------ state */

void pg_update_state(struct pg *pg)
{
	uint32_t st;

	if (!pg->primary) {
		pg->state = 0;
		return;
	}
	switch (pg->phase) {
	case PG_PH_ACTIVE:
		st = PROTO_PGS_ACTIVE;
		break;
	case PG_PH_DOWN:
		st = PROTO_PGS_DOWN | (pg->state & PROTO_PGS_INCOMPLETE);
		break;
	default:
		st = PROTO_PGS_PEERING;
	}
	if (pg->nacting < pg->size)
		st |= PROTO_PGS_UNDERSIZED | PROTO_PGS_DEGRADED;
	if (pg->phase == PG_PH_ACTIVE) {
		bool bf = pg->self_backfill, rec = pg->missing.n > 0 || pg->restart_wanted;

		for (unsigned int i = 0; i < pg->np; i++) {
			const struct pg_peer *p = &pg->p[i];

			if (!p->acting)
				continue;
			bf |= p->backfill && !p->bf_done;
			rec |= p->missing.n > 0 || !p->activated || !p->act_acked;
		}
		if (bf)
			st |= PROTO_PGS_BACKFILLING | PROTO_PGS_DEGRADED;
		if (rec)
			st |= PROTO_PGS_RECOVERING | PROTO_PGS_DEGRADED;
		if (pg->toofull && (bf || rec))
			st |= PROTO_PGS_BACKFILL_TOOFULL;
		if (!(st & PROTO_PGS_DEGRADED))
			st |= PROTO_PGS_CLEAN;
	}
	if (pg->inconsistent)
		st |= PROTO_PGS_INCONSISTENT;
	if (pg->scrub != NULL)
		st |= PROTO_PGS_SCRUBBING;
	if ((st ^ pg->state) & (PROTO_PGS_ACTIVE | PROTO_PGS_CLEAN | PROTO_PGS_DOWN)) {
		char s[96];

		pg_logf(pg, PG_LOG_INFO, "%s", proto_pg_state_str(st, s, sizeof(s)));
	}
	pg->state = st;
	if (st & PROTO_PGS_CLEAN)
		pg_recovery_strays(pg);
}

/* --------------------------------------------------------------- dispatch */

/* A member applied our ACTIVATE of this interval (PROTO_PG_ACT_F_APPLIED). */
static void pg_peer_act_acked(struct pg *pg, const struct proto_pg *m)
{
	int i = pg_peer_index(pg, (int32_t)m->from);

	if (i < 0 || pg->phase != PG_PH_ACTIVE || m->epoch != pg->same_since ||
	    m->les != pg->same_since || !pg->p[i].activated)
		return; /* an answer to an earlier round: this round's comes too */
	pg->p[i].act_acked = true;
	pg_update_state(pg);
	pg->env->ops->kick(pg->env->arg, pg);
}

static void pg_msg_do(struct pg *pg, uint16_t type, const struct proto_pg *m);

int pg_msg(struct pg *pg, uint16_t type, const struct proto_pg *m)
{
	pg_tick_want(pg);
	/* a primary of a newer map: we might still think we lead the PG; wait for the map */
	if (m->epoch > pg->map_epoch)
		return -EAGAIN;
	if (pg->destroying && type != PROTO_PG_QUERY)
		return 0;
	pg_msg_do(pg, type, m);
	return 0;
}

static void pg_msg_do(struct pg *pg, uint16_t type, const struct proto_pg *m)
{
	switch (type) {
	case PROTO_PG_QUERY:
		return pg_member_query(pg, m);
	case PROTO_PG_INFO:
	case PROTO_PG_NOTIFY:
		if (pg->primary)
			pg_peer_info(pg, m, type == PROTO_PG_NOTIFY);
		return;
	case PROTO_PG_LOG_REQ:
		return pg_member_logreq(pg, m);
	case PROTO_PG_LOG:
		if (pg->primary)
			return pg_peer_log(pg, m);
		return pg_member_log(pg, m);
	case PROTO_PG_ACTIVATE:
		if (m->flags & PROTO_PG_ACT_F_APPLIED)
			return pg->primary ? pg_peer_act_acked(pg, m) : (void)0;
		return pg_member_activate(pg, m);
	case PROTO_PG_RECOVERED:
		return pg_member_recovered(pg, m);
	case PROTO_PG_DELETE:
		return pg_member_delete(pg, m);
	case PROTO_PG_PULL:
		if (m->flags & PROTO_PG_PULL_F_NAK)
			return pg->primary ? pg_recovery_pull_answer(pg, m) : (void)0;
		return pg_member_pull(pg, m);
	case PROTO_PG_SCAN_REQ:
		return pg_member_scan_req(pg, m);
	case PROTO_PG_SCAN:
		if (!pg->primary || pg_scrub_scan(pg, m))
			return;
		return pg_recovery_scan(pg, m);
	}
}

/*
 * A member that has not answered our ACTIVATE in PG_ACT_ACK_MS: the
 * message or its answer was lost with a failed connection, or the member
 * refused it. Peer again (true) rather than call the PG clean with a copy
 * that was never activated in this interval: it would refuse the
 * interval's records, and after the others die its older les would keep
 * the PG down (scale_func_30osd_full, docs/recovery.md).
 */
static bool pg_peer_act_late(struct pg *pg, uint64_t now)
{
	for (unsigned int i = 0; i < pg->np; i++) {
		const struct pg_peer *p = &pg->p[i];
		char why[96];

		if (!p->acting || !p->activated || p->act_acked || now - p->act_ms < PG_ACT_ACK_MS)
			continue;
		snprintf(why, sizeof(why), "osd.%d did not answer its activation in %u ms", p->osd,
			 PG_ACT_ACK_MS);
		pg_peer_restart(pg, why);
		return true;
	}
	return false;
}

static void pg_tick_do(struct pg *pg);

void pg_tick(struct pg *pg)
{
	pg->in_tick = true;
	pg_tick_do(pg);
	pg->in_tick = false;
}

/*
 * pg_tick_do's rule turned round: what of it can happen, and when, without
 * an entry point running first. Anything unsure is PG_TICK_NOW: a PG ticked
 * when it had nothing to do costs a few compares, one never ticked when it
 * had something to do stalls. sim_pg ticks a PG only when this says so or
 * an entry point ran, and its liveness checks (every PG clean, no op left
 * waiting) hold over thousands of seeds.
 */
uint64_t pg_tick_due(const struct pg *pg)
{
	uint64_t due = PG_TICK_NEVER, light = pg->env->scrub_ms, deep = pg->env->deep_scrub_ms;

	if (pg->destroying)
		return PG_TICK_NEVER;
	if (!pg->primary) {
		/* the waits that pg_committed ends: a member's tick retries them too */
		if (pg->delete_wait || pg->notify_wait || pg->nq > 0)
			return PG_TICK_NOW;
		if (pg->nacting == 0 && pg_has_copy(pg) && pg->stray_primary >= 0)
			return pg->notify_ms + (pg->notify_heard ? PG_RENOTIFY_MS : PG_NOTIFY_MS);
		return PG_TICK_NEVER;
	}
	if (pg->phase == PG_PH_DOWN)
		return PG_TICK_NEVER; /* an answer (pg_msg) or a map (pg_map) moves it */
	if (pg->phase != PG_PH_ACTIVE || pg->restart_wanted || !pg_recovery_done(pg) ||
	    pg->info.lc < pg->info.lu || pg->info.backfill || pg->crc != NULL || pg->scrub_wanted ||
	    pg->deep_wanted || pg->repair_wanted || pg->verify_wanted)
		return PG_TICK_NOW;
	if (pg->scrub != NULL && (due = pg_scrub_due(pg)) == PG_TICK_NOW)
		return PG_TICK_NOW;
	for (unsigned int i = 0; i < pg->np; i++) {
		const struct pg_peer *p = &pg->p[i];

		if (p->acting && !p->recovered_sent)
			return PG_TICK_NOW;
		/* a stray to tell to drop its copy, resent until it says so (a down one: pg_map) */
		if (!p->acting && p->heard && !(p->info.flags & PROTO_PG_INFO_F_EMPTY) &&
		    pg_osd_up(pg, p->osd))
			return PG_TICK_NOW;
	}
	/*
	 * The periodic scrubs, of a clean PG with no scrub running (one that
	 * sleeps between batches is due when it wakes: an overdue periodic
	 * one cannot start before it ends, and made every round a tick); a PG
	 * not clean is moved by an entry point.
	 */
	if ((pg->state & PROTO_PGS_CLEAN) && pg->scrub == NULL) {
		if ((light && pg->next_scrub_ms == 0) || (deep && pg->next_deep_ms == 0))
			return PG_TICK_NOW;
		if (light && pg->next_scrub_ms < due)
			due = pg->next_scrub_ms;
		if (deep && pg->next_deep_ms < due)
			due = pg->next_deep_ms;
	}
	return due;
}

static void pg_tick_do(struct pg *pg)
{
	uint64_t now = pg_now(pg);

	if (pg->destroying)
		return;
	if (!pg->primary) {
		pg_member_delete_waiting(pg);
		if (pg->destroying)
			return;
		if (pg->nacting == 0 && pg_has_copy(pg) && pg->stray_primary >= 0 &&
		    now - pg->notify_ms >= (pg->notify_heard ? PG_RENOTIFY_MS : PG_NOTIFY_MS))
			pg_stray_notify(pg, pg->stray_primary);
		return;
	}
	switch (pg->phase) {
	case PG_PH_WAIT_TX:
		pg_peer_start(pg);
		break;
	case PG_PH_GETINFO:
		for (unsigned int i = 0; i < pg->np; i++) {
			struct pg_peer *p = &pg->p[i];
			struct proto_pg q = pg_hdr(pg);

			if (p->answered || !pg_osd_up(pg, p->osd) ||
			    now - p->query_ms < PG_QUERY_RESEND_MS)
				continue;
			p->queried = true;
			p->query_ms = now;
			pg_send(pg, p->osd, PROTO_PG_QUERY, &q);
		}
		break;
	case PG_PH_GETLOG:
		/* the copy we fetch from went down (the acting set, and so the
		 * interval, may stay the same): resending to it would wait for ever */
		if (pg->fetch >= 0 && !pg_osd_up(pg, pg->p[pg->fetch].osd)) {
			pg_peer_restart(pg, "the copy whose log we fetch is down");
			break;
		}
		/*
		 * No answer in PG_LOG_RESEND_MS (lost with a connection, or
		 * late): ask again for what follows what we have. Starting
		 * over from the beginning let a late answer of the old round,
		 * to a request further on, be taken for the new round's first
		 * (scenario stale-log: the primary's own acknowledged entries
		 * rolled back, LOST); asked again from fetch_after, a late
		 * answer is only a duplicate.
		 */
		if (pg->fetch >= 0 && now - pg->fetch_ms >= PG_LOG_RESEND_MS)
			pg_fetch_send(pg);
		break;
	case PG_PH_ACTIVE:
		if (pg->restart_wanted && now >= pg->restart_ms) {
			pg_peer_restart(pg, "a replica failed a write");
			break;
		}
		/*
		 * The copy our scan reads went down: a stray (a member's going
		 * down is a new interval), and no map would move us; the scan
		 * would ask it for ever. Peering again chooses another or waits.
		 */
		if (pg->self_backfill && pg->info.backfill && pg->base >= 0 &&
		    !pg_osd_up(pg, pg->p[pg->base].osd)) {
			pg_peer_restart(pg, "the copy our scan reads is down");
			break;
		}
		if (pg_peer_act_late(pg, now))
			break;
		pg_recovery_tick(pg);
		pg_scrub_tick(pg);
		break;
	default:
		break;
	}
}

/*
 * A write may be acknowledged only while a member holds a complete copy
 * (not being backfilled): a later peering finds acknowledged writes on
 * such copies alone (backfill copies are never the authoritative one).
 */
bool pg_complete_member(const struct pg *pg)
{
	if (!pg->info.backfill && !pg->self_backfill)
		return true;
	for (unsigned int i = 0; i < pg->np; i++) {
		const struct pg_peer *p = &pg->p[i];

		if (p->acting && p->activated && (!p->backfill || (p->bf_done && p->missing.n == 0)))
			return true;
	}
	return false;
}

bool pg_io_ready(const struct pg *pg)
{
	return !pg->primary ||
	       (pg->phase == PG_PH_ACTIVE && !pg->restart_wanted && pg_complete_member(pg));
}

void pg_repl_failed(struct pg *pg, int32_t osd, uint64_t v, int rc)
{
	pg_tick_want(pg);
	if (!pg->primary || pg->phase != PG_PH_ACTIVE)
		return;
	if (!pg->restart_wanted)
		pg_logf(pg, PG_LOG_ERROR, "osd.%d failed v%llx: %s; peering again so that every "
					  "copy holds the same", osd, (unsigned long long)v,
			strerror(rc < 0 ? -rc : rc));
	pg->restart_wanted = true;
	pg->restart_ms = pg_now(pg);
	pg_update_state(pg);
}

uint64_t pg_op_version(struct pg *pg, uint32_t epoch)
{
	if (pg->seq_epoch < epoch) {
		pg->seq_epoch = epoch;
		pg->seq = 0;
	}
	return ((uint64_t)pg->seq_epoch << 32) | ++pg->seq;
}

int pg_op_prepare(struct pg *pg, uint64_t v, uint16_t op, const char *name, struct pg_txn **t_out)
{
	struct pg_txn *t = pg_txn_begin(pg);
	const struct pg_entry *last = pg_log_newest(&pg->log);
	uint64_t prev = last ? last->v : pg->info.tail;
	int rc = pg_log_append_tx(pg, v, op, name, t);

	pg_tick_want(pg);
	if (rc != 0)
		return rc;
	t->prev = prev;
	t->token = ++pg->tx_token;
	pg->tx_inflight++;
	*t_out = t;
	return 0;
}

void pg_op_cancel(struct pg *pg, uint64_t v)
{
	int i = pg_log_find(&pg->log, v);

	pg_tick_want(pg);
	if (i >= 0 && (uint32_t)i == pg->log.n - 1) {
		const struct pg_entry *e;

		free(pg_log_at(&pg->log, (uint32_t)i)->name);
		pg->log.n--;
		e = pg_log_newest(&pg->log);
		pg->info.lu = e ? e->v : pg->info.tail;
		if (pg->info.lc > pg->info.lu)
			pg->info.lc = pg->info.lu;
	}
	if (pg->tx_inflight > 0)
		pg->tx_inflight--;
	if (pg->tx_inflight == 0)
		pg_member_settled(pg);
}
