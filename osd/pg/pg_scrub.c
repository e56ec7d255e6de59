/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scrub, deep scrub, verify and repair (docs/recovery.md, "Scrub"). The
 * primary of a clean PG walks its objects in name order, a batch at a
 * time: every member lists the same range (SCAN_REQ): light = name,
 * version, size; verify = also a digest of the object's stored block
 * checksums (no data read); deep = also a crc32c of the data read back,
 * which checks every block. Copies that disagree (or that a copy cannot
 * read) are inconsistent: counted in the PG's stats; repair queues them
 * for recovery from the best copy (the readable one with the newest
 * version; ours on a tie). Light scrub and deep scrub also run on their
 * own, every env->scrub_ms / env->deep_scrub_ms, each PG at its own
 * moment within the period (spread by the PG id), one at a time per OSD.
 *
 * Client writes go on during a scrub, so each batch is a fenced range:
 * the primary picks the batch's last name from its own listing first,
 * holds writes to the names in (pos, hi] that are not ordered yet
 * (pg_scrub_holds), waits until the ordered ones completed on every copy
 * (env range_busy), and only then asks the members. Without the fence a
 * write landing between a member's scan and the primary's own made equal
 * copies look inconsistent (sim_pg scenario scrub-writes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "osd/pg/pg_int.h"

#define PG_SCRUB_BATCH	   64u
/*
 * A deep batch reads every copy of its objects before the PG's writes to
 * the range (and, in PG order, behind them) may go on: 8 objects of up to
 * 4 MiB is ~32 MiB per copy, tens of ms on a fast disk, not seconds.
 */
#define PG_SCRUB_DEEP_BATCH 8u
#define PG_SCRUB_RESEND_MS 10000u

enum pg_scrub_kind { PG_SCRUB_LIGHT, PG_SCRUB_VERIFY, PG_SCRUB_DEEP };

struct pg_scrub {
	enum pg_scrub_kind kind;
	bool repair;
	char *pos; /* objects up to here are compared */
	/* this batch's range (pos, fence_hi] (fence_hi NULL: to the end) */
	bool fenced;
	bool draining; /* fenced; ordered writes in the range still completing */
	char *fence_hi;
	char *batch_hi; /* the members answered: compared up to here (NULL: to the end) */
	uint64_t sent_ms;
	uint64_t next_ms; /* the next batch is fenced no sooner (osd_scrub_sleep) */
	unsigned int nmem;
	int32_t mem[PG_MAX_REPLICAS];
	bool got[PG_MAX_REPLICAS], last[PG_MAX_REPLICAS];
	struct pg_obj *ent[PG_MAX_REPLICAS];
	uint32_t nent[PG_MAX_REPLICAS];
	uint32_t bad, objects;
	uint32_t token; /* of a verify */
};

void pg_scrub_stop(struct pg *pg)
{
	struct pg_scrub *s = pg->scrub;

	if (s == NULL)
		return;
	pg_crc_cancel(pg); /* a member's SCAN answer has no scrub: only ours is cancelled here */
	free(s->pos);
	free(s->fence_hi);
	free(s->batch_hi);
	for (unsigned int i = 0; i < PG_MAX_REPLICAS; i++)
		free(s->ent[i]);
	free(s);
	pg->scrub = NULL;
	pg->env->ops->scrub_slot(pg->env->arg, -1);
	/*
	 * No kick here (pg_free calls this too): writes the fence held go on
	 * when the scrub ends (pg_scrub_compare kicks) or when the PG is
	 * peered again after an interval change (the OSD kicks its ops then).
	 */
}

bool pg_scrub_holds(const struct pg *pg, const char *name)
{
	const struct pg_scrub *s = pg->scrub;

	return s != NULL && s->fenced && (s->pos == NULL || strcmp(name, s->pos) > 0) &&
	       (s->fence_hi == NULL || strcmp(name, s->fence_hi) <= 0);
}

void pg_scrub_request(struct pg *pg, bool deep, bool repair)
{
	pg_tick_want(pg);
	if (repair)
		pg->repair_wanted = true;
	else if (deep)
		pg->deep_wanted = true;
	else
		pg->scrub_wanted = true;
	pg_logf(pg, PG_LOG_INFO, "%s requested", repair ? "repair" : deep ? "deep scrub" : "scrub");
}

void pg_verify_request(struct pg *pg, uint32_t token)
{
	pg_tick_want(pg);
	pg->verify_wanted = true;
	pg->verify_token_wanted = token;
	pg_logf(pg, PG_LOG_INFO, "verify requested");
}

static uint8_t pg_scrub_flags(const struct pg_scrub *s)
{
	return s->kind == PG_SCRUB_DEEP	    ? PROTO_PG_SCAN_F_DEEP
	       : s->kind == PG_SCRUB_VERIFY ? PROTO_PG_SCAN_F_DIGEST
					    : 0;
}

static unsigned int pg_scrub_what(const struct pg_scrub *s)
{
	return s->kind == PG_SCRUB_DEEP ? PG_OBJ_DEEP : s->kind == PG_SCRUB_VERIFY ? PG_OBJ_DIGEST : 0;
}

static uint32_t pg_scrub_batch_max(const struct pg_scrub *s)
{
	return s->kind == PG_SCRUB_DEEP ? PG_SCRUB_DEEP_BATCH : PG_SCRUB_BATCH;
}

static void pg_scrub_send(struct pg *pg)
{
	struct pg_scrub *s = pg->scrub;

	for (unsigned int i = 0; i < s->nmem; i++) {
		struct proto_pg q = pg_hdr(pg);

		if (s->got[i])
			continue;
		q.max = pg_scrub_batch_max(s);
		q.flags = pg_scrub_flags(s);
		if (s->pos) {
			q.name_len = strlen(s->pos);
			memcpy(q.name, s->pos, q.name_len + 1);
		}
		pg_send(pg, s->mem[i], PROTO_PG_SCAN_REQ, &q);
	}
	s->sent_ms = pg_now(pg);
}

static void pg_scrub_batch(struct pg *pg);

/*
 * Fence the next batch: its last name is our own PG_SCRUB_BATCH-th (deep:
 * PG_SCRUB_DEEP_BATCH-th) object after pos (none: to the end). The
 * members are asked once the writes already ordered in the range
 * completed (pg_scrub_fence_check).
 */
static void pg_scrub_fence(struct pg *pg)
{
	struct pg_scrub *s = pg->scrub;
	uint32_t max = pg_scrub_batch_max(s);
	struct pg_obj *loc = calloc(max, sizeof(*loc));
	uint32_t n = 0;
	bool last = true;

	free(s->fence_hi);
	s->fence_hi = NULL;
	if (loc == NULL || pg->env->ops->obj_list(pg->env->arg, pg, s->pos ? s->pos : "", max, 0,
						  loc, &n, &last) != 0) {
		free(loc);
		return; /* the next tick tries again */
	}
	if (!last && n > 0)
		s->fence_hi = strdup(loc[n - 1].name);
	free(loc);
	if (!last && n > 0 && s->fence_hi == NULL)
		return;
	s->fenced = true;
	s->draining = true;
	for (unsigned int i = 0; i < s->nmem; i++)
		s->got[i] = s->last[i] = false;
}

/* Fenced: once no ordered write in the range is in flight, ask the members. */
static void pg_scrub_fence_check(struct pg *pg)
{
	struct pg_scrub *s = pg->scrub;

	if (!s->fenced)
		pg_scrub_fence(pg);
	if (!s->fenced || !s->draining)
		return;
	if (pg->env->ops->range_busy != NULL &&
	    pg->env->ops->range_busy(pg->env->arg, pg, s->pos, s->fence_hi))
		return;
	s->draining = false;
	if (s->nmem == 0)
		return pg_scrub_batch(pg);
	pg_scrub_send(pg);
}

static void pg_scrub_begin(struct pg *pg, enum pg_scrub_kind kind, bool repair)
{
	struct pg_scrub *s = calloc(1, sizeof(*s));
	static const char *what[] = {"scrub", "verify", "deep scrub"};

	if (s == NULL)
		return;
	pg->scrub = s;
	s->kind = kind;
	s->token = kind == PG_SCRUB_VERIFY ? pg->verify_token_wanted : 0;
	s->repair = repair;
	for (unsigned int i = 1; i < pg->nacting && s->nmem < PG_MAX_REPLICAS; i++)
		s->mem[s->nmem++] = pg->acting[i];
	pg_logf(pg, PG_LOG_INFO, "%s%s started", what[kind], repair ? " + repair" : "");
	pg_update_state(pg);
	pg_scrub_fence_check(pg);
}

static const struct pg_obj *pg_scrub_find(const struct pg_obj *e, uint32_t n, const char *name)
{
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(e[i].name, name))
			return &e[i];
	return NULL;
}

static bool pg_scrub_same(const struct pg_scrub *s, const struct pg_obj *a, const struct pg_obj *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	if (a->version != b->version || a->size != b->size)
		return false;
	if (s->kind == PG_SCRUB_DEEP)
		return a->crc == b->crc && a->crc != PG_OBJ_CRC_BAD;
	if (s->kind == PG_SCRUB_VERIFY)
		return a->digest == b->digest;
	return true;
}

/* Compare one object's copies; repair queues the ones that differ from the best. */
static void pg_scrub_object(struct pg *pg, const char *name, const struct pg_obj *local)
{
	struct pg_scrub *s = pg->scrub;
	const struct pg_obj *copy[PG_MAX_REPLICAS], *best = local;
	bool bad = false;

	s->objects++;
	for (unsigned int i = 0; i < s->nmem; i++) {
		copy[i] = pg_scrub_find(s->ent[i], s->nent[i], name);
		if (copy[i] && copy[i]->crc != PG_OBJ_CRC_BAD &&
		    (best == NULL || best->crc == PG_OBJ_CRC_BAD || copy[i]->version > best->version))
			best = copy[i];
	}
	bad = !pg_scrub_same(s, local, best) || (local && local->crc == PG_OBJ_CRC_BAD);
	for (unsigned int i = 0; i < s->nmem; i++)
		bad |= !pg_scrub_same(s, copy[i], best);
	if (!bad)
		return;
	s->bad++;
	pg_logf(pg, PG_LOG_WARN, "%s is inconsistent%s", name, s->repair ? ": repairing" : "");
	if (!s->repair)
		return;
	if (!pg_scrub_same(s, local, best) || (local && local->crc == PG_OBJ_CRC_BAD))
		pg_set_add(&pg->missing, name, best ? best->version : 0, PG_SET_URGENT);
	for (unsigned int i = 0; i < s->nmem; i++) {
		int k;

		if (pg_scrub_same(s, copy[i], best))
			continue;
		k = pg_peer_index(pg, s->mem[i]);
		if (k >= 0)
			pg_set_add(&pg->p[k].missing, name, best ? best->version : 0, 0);
	}
}

/* ------------------------------------------------------------ deep crcs */

/*
 * Tokens are unique in the process, not per PG: a crc read that outlives
 * its PG (freed, made again) must not be taken for the new one's. The PG
 * machines of a process run on one thread.
 */
static uint64_t pg_crc_seq;

void pg_crc_cancel(struct pg *pg)
{
	if (pg->crc == NULL)
		return;
	free(pg->crc->objs);
	free(pg->crc);
	pg->crc = NULL;
}

static void pg_crc_step(struct pg *pg)
{
	struct pg_crc_job *j = pg->crc;

	while (j->next < j->n) {
		struct pg_obj *o = &j->objs[j->next];
		uint32_t crc = PG_OBJ_CRC_BAD;
		int rc;

		j->token = ++pg_crc_seq;
		rc = pg->env->ops->obj_crc(pg->env->arg, pg, o->name, o->size, j->token, &crc);
		if (rc == 0) {
			j->waiting = true;
			return;
		}
		if (rc < 0) {
			pg_logf(pg, PG_LOG_WARN, "deep scrub: %s not read: %s; the batch is asked again",
				o->name, strerror(-rc));
			pg_crc_cancel(pg);
			return;
		}
		o->crc = crc;
		j->next++;
	}
	pg->crc = NULL;
	j->done(pg, j);
	free(j->objs);
	free(j);
}

void pg_crc_start(struct pg *pg, struct pg_obj *objs, uint32_t n,
		  void (*done)(struct pg *pg, struct pg_crc_job *j), int32_t to, uint32_t epoch,
		  bool last)
{
	struct pg_crc_job *j = calloc(1, sizeof(*j));

	pg_crc_cancel(pg);
	if (j == NULL) {
		free(objs);
		return; /* the primary asks again */
	}
	*j = (struct pg_crc_job){.objs = objs, .n = n, .done = done, .to = to, .epoch = epoch,
				 .last = last};
	pg->crc = j;
	pg_crc_step(pg);
}

void pg_obj_crc_done(struct pg *pg, uint64_t token, uint32_t crc)
{
	struct pg_crc_job *j = pg->crc;

	pg_tick_want(pg);
	if (j == NULL || !j->waiting || j->token != token)
		return; /* of a job given up or replaced */
	j->waiting = false;
	j->objs[j->next++].crc = crc;
	pg_crc_step(pg);
}

/* ------------------------------------------------------------- batches */

static void pg_scrub_compare(struct pg *pg, struct pg_obj *loc, uint32_t nloc);

static void pg_scrub_crcs_done(struct pg *pg, struct pg_crc_job *j)
{
	if (pg->scrub == NULL)
		return;
	pg_scrub_compare(pg, j->objs, j->n);
	j->objs = NULL;
}

/*
 * Every member answered this batch: compare up to the smallest last name
 * (and no further than the fence), after reading our own crcs for a deep
 * scrub.
 */
static void pg_scrub_batch(struct pg *pg)
{
	struct pg_scrub *s = pg->scrub;
	const char *hi = NULL;
	struct pg_obj *loc = NULL;
	uint32_t nloc = 0;
	bool all_last = true;

	for (unsigned int i = 0; i < s->nmem; i++) {
		if (s->last[i])
			continue;
		all_last = false;
		if (s->nent[i] && (hi == NULL || strcmp(s->ent[i][s->nent[i] - 1].name, hi) < 0))
			hi = s->ent[i][s->nent[i] - 1].name;
	}
	if (!all_last && hi == NULL)
		hi = s->pos ? s->pos : "";
	/* no further than the fence: past it writes went on during the scans */
	if (s->fence_hi != NULL && (all_last || strcmp(s->fence_hi, hi) < 0))
		hi = s->fence_hi;
	free(s->batch_hi);
	s->batch_hi = hi != NULL ? strdup(hi) : NULL;
	if (hi != NULL && s->batch_hi == NULL)
		return; /* the next resend tries again */
	if (pg_obj_range(pg, s->pos, s->batch_hi, pg_scrub_what(s) & ~PG_OBJ_DEEP, &loc, &nloc) != 0)
		return; /* the next tick sends the batch again */
	if (s->kind == PG_SCRUB_DEEP && nloc > 0)
		return pg_crc_start(pg, loc, nloc, pg_scrub_crcs_done, -1, 0, false);
	pg_scrub_compare(pg, loc, nloc);
}

/* Our copies of the batch's range are listed (loc, ours now): compare, then the next batch. */
static void pg_scrub_compare(struct pg *pg, struct pg_obj *loc, uint32_t nloc)
{
	struct pg_scrub *s = pg->scrub;
	const char *hi = s->batch_hi;
	bool all_last = hi == NULL;
	static const char *what[] = {"scrub", "verify", "deep scrub"};

	for (uint32_t i = 0; i < nloc; i++)
		pg_scrub_object(pg, loc[i].name, &loc[i]);
	/* names only members have, each compared once */
	for (unsigned int m = 0; m < s->nmem; m++) {
		for (uint32_t i = 0; i < s->nent[m]; i++) {
			const char *n = s->ent[m][i].name;
			bool seen = pg_scrub_find(loc, nloc, n) != NULL;

			if (!all_last && strcmp(n, hi) > 0)
				continue;
			for (unsigned int k = 0; k < m && !seen; k++)
				seen = pg_scrub_find(s->ent[k], s->nent[k], n) != NULL;
			if (!seen)
				pg_scrub_object(pg, n, NULL);
		}
	}
	free(loc);
	if (all_last) {
		uint32_t now_s = (uint32_t)(pg_now(pg) / 1000);

		pg->inconsistent = s->repair ? 0 : s->bad;
		if (s->kind == PG_SCRUB_VERIFY) {
			pg->last_verify = now_s ? now_s : 1;
			pg->verify_inconsistent = s->bad;
			pg->verify_token = s->token;
		} else {
			pg->last_scrub = now_s ? now_s : 1;
		}
		if (s->kind == PG_SCRUB_DEEP)
			pg->last_deep_scrub = pg->last_scrub;
		pg->objects = s->objects;
		pg_logf(pg, s->bad ? PG_LOG_WARN : PG_LOG_INFO,
			"%s done: %u objects, %u inconsistent%s", what[s->kind], s->objects, s->bad,
			s->repair && s->bad ? " (queued for repair)" : "");
		pg_scrub_stop(pg);
		pg_update_state(pg);
		pg->env->ops->kick(pg->env->arg, pg); /* writes the last batch held */
		return;
	}
	free(s->pos);
	s->pos = s->batch_hi;
	s->batch_hi = NULL;
	for (unsigned int i = 0; i < s->nmem; i++) {
		free(s->ent[i]);
		s->ent[i] = NULL;
		s->nent[i] = 0;
		s->got[i] = s->last[i] = false;
	}
	s->fenced = false;
	pg->env->ops->kick(pg->env->arg, pg); /* writes this batch held */
	if (pg->env->scrub_sleep_ms != 0) {
		s->next_ms = pg_now(pg) + pg->env->scrub_sleep_ms; /* pg_scrub_tick goes on */
		return;
	}
	pg_scrub_fence_check(pg);
}

bool pg_scrub_scan(struct pg *pg, const struct proto_pg *m)
{
	static __thread struct proto_pg_scan_entry e;
	struct pg_scrub *s = pg->scrub;
	size_t off = 0;

	if (s == NULL || m->epoch != pg->same_since)
		return s != NULL;
	if (!s->fenced || s->draining)
		return true; /* an answer to an earlier batch: this one is not asked yet */
	for (unsigned int i = 0; i < s->nmem; i++) {
		if (s->mem[i] != (int32_t)m->from || s->got[i])
			continue;
		s->ent[i] = calloc(m->count ? m->count : 1, sizeof(*s->ent[i]));
		if (s->ent[i] == NULL)
			return true;
		while (s->nent[i] < m->count && proto_pg_scan_entry_next(m, &off, &e)) {
			struct pg_obj *o = &s->ent[i][s->nent[i]++];

			memcpy(o->name, e.name, e.name_len + 1);
			o->version = e.version;
			o->size = e.size;
			o->crc = s->kind == PG_SCRUB_VERIFY ? 0 : e.crc;
			o->digest = s->kind == PG_SCRUB_VERIFY ? e.crc : 0;
		}
		s->got[i] = true;
		s->last[i] = (m->flags & PROTO_PG_F_LAST) != 0;
	}
	for (unsigned int i = 0; i < s->nmem; i++)
		if (!s->got[i])
			return true;
	pg_scrub_batch(pg);
	return true;
}

/* FNV-1a of the PG id: where in each period this PG's own scrub falls. */
static uint64_t pg_scrub_offset(const struct pg *pg, uint64_t period)
{
	uint32_t h = 2166136261u;

	h = (h ^ pg->pool) * 16777619u;
	h = (h ^ pg->id) * 16777619u;
	h = (h ^ (uint32_t)pg->env->self) * 16777619u;
	return period ? h % period : 0;
}

/*
 * When pg_scrub_tick has work for the running scrub: the end of its sleep
 * between batches (osd_scrub_sleep), else now (a fence to check, answers
 * to wait for or ask again). A sleeping scrub used to tick its PG on every
 * round of the OSD's tick for nothing.
 */
uint64_t pg_scrub_due(const struct pg *pg)
{
	const struct pg_scrub *s = pg->scrub;

	return s != NULL && !s->fenced ? s->next_ms : PG_TICK_NOW;
}

void pg_scrub_tick(struct pg *pg)
{
	struct pg_scrub *s = pg->scrub;
	uint64_t now = pg_now(pg), light = pg->env->scrub_ms, deep = pg->env->deep_scrub_ms;
	bool clean = (pg->state & PROTO_PGS_CLEAN) != 0;
	enum pg_scrub_kind kind;
	uint32_t paused;
	bool repair;

	if (s != NULL) {
		bool all_got = true;

		for (unsigned int i = 0; i < s->nmem; i++)
			all_got &= s->got[i];
		if (!s->fenced && now < s->next_ms)
			return; /* osd_scrub_sleep between batches */
		if (!s->fenced || s->draining)
			pg_scrub_fence_check(pg);
		else if (all_got && pg->crc == NULL)
			pg_scrub_batch(pg); /* our listing or a crc read failed: again */
		else if (now - s->sent_ms > PG_SCRUB_RESEND_MS)
			pg_scrub_send(pg);
		return;
	}
	/* the periodic ones: the first at a spread moment after the PG went active */
	if (pg->next_scrub_ms == 0 && light)
		pg->next_scrub_ms = now + pg_scrub_offset(pg, light);
	if (pg->next_deep_ms == 0 && deep)
		pg->next_deep_ms = now + pg_scrub_offset(pg, deep);
	/*
	 * noscrub / nodeep-scrub hold the periodic ones (an overdue one starts
	 * once the flag is unset); what an operator asks for still runs.
	 */
	paused = pg->env->ops->paused != NULL ? pg->env->ops->paused(pg->env->arg, pg) : 0;
	if (clean && light && now >= pg->next_scrub_ms && !(paused & PG_PAUSE_SCRUB)) {
		pg->scrub_wanted = true;
		pg->next_scrub_ms = now + light;
	}
	if (clean && deep && now >= pg->next_deep_ms && !(paused & PG_PAUSE_DEEP_SCRUB)) {
		pg->deep_wanted = true;
		pg->next_deep_ms = now + deep;
	}
	if (!(pg->scrub_wanted || pg->deep_wanted || pg->repair_wanted || pg->verify_wanted))
		return;
	if (!clean && !pg->repair_wanted)
		return; /* scrub compares settled copies: after recovery */
	if (!pg->env->ops->scrub_slot(pg->env->arg, 1))
		return; /* another PG of this OSD scrubs: next tick */
	repair = pg->repair_wanted;
	kind = repair || pg->deep_wanted ? PG_SCRUB_DEEP
	       : pg->verify_wanted	 ? PG_SCRUB_VERIFY
					 : PG_SCRUB_LIGHT;
	if (kind == PG_SCRUB_VERIFY)
		pg->verify_wanted = false;
	else
		pg->scrub_wanted = pg->deep_wanted = pg->repair_wanted = false;
	pg_scrub_begin(pg, kind, repair);
}
