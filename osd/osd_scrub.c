/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scrub (docs/recovery.md, "Scrub"). The primary of an active PG walks
 * its objects in name order, a batch at a time: it asks every member for
 * the same range (SCAN_REQ; with DEEP each copy reads its data, which
 * checks every block's crc, and returns a crc32c of the object), lists its
 * own copy the same way, and compares existence, version and size (light)
 * and the crc (deep). An object whose copies disagree, or that a copy
 * cannot read, is inconsistent: counted in the PG's stats (the mons show
 * it in `weft health` and `weft pg ls --inconsistent`). Repair queues the
 * bad copies for recovery from the authoritative one: the primary's copy
 * when it is readable and newest, else a member's that is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd_pg.h"

#define OSD_SCRUB_BATCH 64u
#define OSD_SCRUB_RESEND_MS 10000u
#define OSD_SCRUB_BAD_CRC 0xffffffffu

struct osd_scrub {
	struct osd_pgx *x; /* the PG being scrubbed (one at a time per OSD) */
	bool deep, repair;
	uint32_t epoch;
	char *pos; /* objects up to here are compared */
	uint64_t sent_ms;
	unsigned int nmem;
	int32_t mem[PLC_MAX_REPLICAS];
	bool got[PLC_MAX_REPLICAS], last[PLC_MAX_REPLICAS];
	struct proto_pg_scan_entry *ent[PLC_MAX_REPLICAS];
	uint32_t nent[PLC_MAX_REPLICAS];
	uint32_t bad, objects;
};

static struct osd_scrub osd_scrub_cur;

static void osd_scrub_reset(void)
{
	free(osd_scrub_cur.pos);
	for (unsigned int i = 0; i < PLC_MAX_REPLICAS; i++)
		free(osd_scrub_cur.ent[i]);
	memset(&osd_scrub_cur, 0, sizeof(osd_scrub_cur));
}

static void osd_scrub_request(struct osd *osd)
{
	struct osd_scrub *s = &osd_scrub_cur;
	struct osd_pgx *x = s->x;

	for (unsigned int i = 0; i < s->nmem; i++) {
		struct proto_pg q;

		if (s->got[i])
			continue;
		memset(&q, 0, sizeof(q));
		q.pool = x->pg->pool;
		q.pg = x->pg->pg;
		q.epoch = x->same_since;
		q.max = OSD_SCRUB_BATCH;
		q.flags = s->deep ? PROTO_PG_SCAN_F_DEEP : 0;
		if (s->pos) {
			q.name_len = strlen(s->pos);
			memcpy(q.name, s->pos, q.name_len + 1);
		}
		osd_peer_send(osd, osd_peer_conn_to(osd, (uint32_t)s->mem[i]), PROTO_PG_SCAN_REQ,
			      &q);
	}
	s->sent_ms = clock_now_ms();
}

static void osd_scrub_begin(struct osd *osd, struct osd_pgx *x)
{
	struct osd_scrub *s = &osd_scrub_cur;

	osd_scrub_reset();
	s->x = x;
	s->deep = x->deep_wanted || x->repair_wanted;
	s->repair = x->repair_wanted;
	s->epoch = x->same_since;
	x->scrub_wanted = x->deep_wanted = x->repair_wanted = false;
	for (unsigned int i = 1; i < x->nacting && s->nmem < PLC_MAX_REPLICAS; i++)
		s->mem[s->nmem++] = x->acting[i];
	x->state |= PROTO_PGS_SCRUBBING;
	log_info("osd", "%s pg %u.%x: %s%s started", osd->name, x->pg->pool, x->pg->pg,
		 s->deep ? "deep scrub" : "scrub", s->repair ? " + repair" : "");
	osd_scrub_request(osd);
}

static const struct proto_pg_scan_entry *osd_scrub_find(const struct proto_pg_scan_entry *e,
							uint32_t n, const char *name)
{
	for (uint32_t i = 0; i < n; i++)
		if (!strcmp(e[i].name, name))
			return &e[i];
	return NULL;
}

static bool osd_scrub_same(const struct proto_pg_scan_entry *a,
			   const struct proto_pg_scan_entry *b, bool deep)
{
	if (a == NULL || b == NULL)
		return a == b;
	return a->version == b->version && a->size == b->size && (!deep || a->crc == b->crc) &&
	       a->crc != OSD_SCRUB_BAD_CRC && b->crc != OSD_SCRUB_BAD_CRC;
}

/* Compare one object's copies; repair queues the ones that differ from the best. */
static void osd_scrub_object(struct osd *osd, const char *name,
			     const struct proto_pg_scan_entry *local)
{
	struct osd_scrub *s = &osd_scrub_cur;
	struct osd_pgx *x = s->x;
	const struct proto_pg_scan_entry *copy[PLC_MAX_REPLICAS], *best = local;
	bool bad = false;

	s->objects++;
	for (unsigned int i = 0; i < s->nmem; i++) {
		copy[i] = osd_scrub_find(s->ent[i], s->nent[i], name);
		if (copy[i] && copy[i]->crc != OSD_SCRUB_BAD_CRC &&
		    (best == NULL || best->crc == OSD_SCRUB_BAD_CRC ||
		     copy[i]->version > best->version))
			best = copy[i];
	}
	if (local == NULL || !osd_scrub_same(local, best, s->deep))
		bad = local != best || (local && local->crc == OSD_SCRUB_BAD_CRC);
	for (unsigned int i = 0; i < s->nmem; i++)
		bad |= !osd_scrub_same(copy[i], best, s->deep);
	if (!bad)
		return;
	s->bad++;
	log_warn("osd", "%s pg %u.%x: %s is inconsistent%s", osd->name, x->pg->pool, x->pg->pg,
		 name, s->repair ? ": repairing" : "");
	if (!s->repair)
		return;
	if (!osd_scrub_same(local, best, s->deep))
		pg_set_add(&x->missing, name, 0, PG_SET_URGENT);
	for (unsigned int i = 0; i < s->nmem; i++) {
		if (osd_scrub_same(copy[i], best, s->deep))
			continue;
		for (unsigned int k = 0; k < x->nm; k++)
			if (x->m[k].osd == s->mem[i])
				pg_set_add(&x->m[k].missing, name, 0, 0);
	}
}

/* Every member answered this batch: compare up to the smallest last name. */
static void osd_scrub_batch(struct osd *osd)
{
	struct osd_scrub *s = &osd_scrub_cur;
	struct osd_pgx *x = s->x;
	const char *hi = NULL;
	struct proto_pg_scan_entry *loc = NULL;
	uint32_t nloc = 0;
	bool all_last = true;
	char *newpos;

	for (unsigned int i = 0; i < s->nmem; i++) {
		if (s->last[i])
			continue;
		all_last = false;
		if (s->nent[i] && (hi == NULL || strcmp(s->ent[i][s->nent[i] - 1].name, hi) < 0))
			hi = s->ent[i][s->nent[i] - 1].name;
	}
	if (!all_last && hi == NULL)
		hi = s->pos ? s->pos : "";
	if (osd_scan_local(osd, x, s->pos, all_last ? NULL : hi, s->deep, &loc, &nloc) != 0)
		return;
	/* every name any copy has in the range, each compared once */
	for (uint32_t i = 0; i < nloc; i++)
		osd_scrub_object(osd, loc[i].name, &loc[i]);
	for (unsigned int m = 0; m < s->nmem; m++) {
		for (uint32_t i = 0; i < s->nent[m]; i++) {
			const char *n = s->ent[m][i].name;
			bool seen = osd_scrub_find(loc, nloc, n) != NULL;

			if (!all_last && strcmp(n, hi) > 0)
				continue;
			for (unsigned int k = 0; k < m && !seen; k++)
				seen = osd_scrub_find(s->ent[k], s->nent[k], n) != NULL;
			if (!seen)
				osd_scrub_object(osd, n, NULL);
		}
	}
	newpos = !all_last ? strdup(hi) : NULL;
	free(loc);
	if (all_last) {
		x->inconsistent = s->repair ? 0 : s->bad;
		x->last_scrub = (uint32_t)(clock_now_ms() / 1000);
		x->objects = s->objects;
		x->state &= ~PROTO_PGS_SCRUBBING;
		log_info("osd", "%s pg %u.%x: %s done: %u objects, %u inconsistent%s", osd->name,
			 x->pg->pool, x->pg->pg, s->deep ? "deep scrub" : "scrub", s->objects,
			 s->bad, s->repair && s->bad ? " (queued for repair)" : "");
		osd_scrub_reset();
		osd_peer_update_state(osd, x);
		return;
	}
	free(s->pos);
	s->pos = newpos;
	for (unsigned int i = 0; i < s->nmem; i++) {
		free(s->ent[i]);
		s->ent[i] = NULL;
		s->nent[i] = 0;
		s->got[i] = s->last[i] = false;
	}
	osd_scrub_request(osd);
}

bool osd_scrub_scanned(struct osd *osd, struct osd_pgx *x, const struct proto_pg *m)
{
	struct osd_scrub *s = &osd_scrub_cur;
	static __thread struct proto_pg_scan_entry e;
	size_t off = 0;

	if (s->x != x)
		return false;
	for (unsigned int i = 0; i < s->nmem; i++) {
		if (s->mem[i] != (int32_t)m->from || s->got[i])
			continue;
		s->ent[i] = calloc(m->count ? m->count : 1, sizeof(*s->ent[i]));
		if (s->ent[i] == NULL)
			return true;
		while (s->nent[i] < m->count && proto_pg_scan_entry_next(m, &off, &e))
			s->ent[i][s->nent[i]++] = e;
		s->got[i] = true;
		s->last[i] = (m->flags & PROTO_PG_F_LAST) != 0;
	}
	for (unsigned int i = 0; i < s->nmem; i++)
		if (!s->got[i])
			return true;
	osd_scrub_batch(osd);
	return true;
}

/* Every 100 ms: start a wanted scrub, resend a lost batch, abandon an ended interval. */
void osd_scrub_tick(struct osd *osd)
{
	struct osd_scrub *s = &osd_scrub_cur;
	uint64_t now = clock_now_ms();
	uint64_t every = conf_get_duration_us(osd->conf, CONF_OSD_SCRUB_INTERVAL) / 1000000;

	if (s->x != NULL) {
		if (!s->x->primary || s->x->same_since != s->epoch ||
		    s->x->phase != OSD_PH_ACTIVE) {
			s->x->state &= ~PROTO_PGS_SCRUBBING;
			osd_scrub_reset(); /* the interval ended: asked again by the operator */
		} else if (s->nmem == 0) {
			osd_scrub_batch(osd);
		} else if (now - s->sent_ms > OSD_SCRUB_RESEND_MS) {
			osd_scrub_request(osd);
		}
		return;
	}
	for (unsigned int b = 0; b < OSD_PG_BUCKETS; b++) {
		for (struct osd_pg *pg = osd->pgs[b]; pg; pg = pg->hnext) {
			struct osd_pgx *x = pg->x;

			if (x == NULL || !x->primary || x->phase != OSD_PH_ACTIVE)
				continue;
			if (every && (x->state & PROTO_PGS_CLEAN) &&
			    now / 1000 - x->last_scrub > every)
				x->scrub_wanted = true;
			if (!(x->scrub_wanted || x->deep_wanted || x->repair_wanted))
				continue;
			if (!(x->state & PROTO_PGS_CLEAN) && !x->repair_wanted)
				continue; /* scrub compares settled copies: after recovery */
			osd_scrub_begin(osd, x);
			return;
		}
	}
}

/* A scrub request from the mons (weft pg scrub|deep-scrub|repair). */
void osd_scrub_want(struct osd *osd, uint32_t pool, uint32_t pgid, const char *what)
{
	struct osd_pgx *x = osd_pgx_get(osd, pool, pgid);

	if (x == NULL || !x->primary)
		return;
	if (!strcmp(what, "repair"))
		x->repair_wanted = true;
	else if (!strcmp(what, "deep-scrub"))
		x->deep_wanted = true;
	else
		x->scrub_wanted = true;
	log_info("osd", "%s pg %u.%x: %s requested", osd->name, pool, pgid, what);
}
