/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Which PGs the 100 ms tick takes (docs/osd.md, "Ticks"). A PG is listed
 * when an entry point of its machine runs (env tick_wanted: a message, a
 * map, a commit, an op, a push), when ops queue on it, when a replica fences
 * it, and when its own timer fires. After its tick it stays listed while
 * pg_tick_due says PG_TICK_NOW (it peers, recovers, scrubs, waits for an
 * answer), while ops wait on it or a fence holds it; a time arms its timer
 * (the next periodic scrub, a stray's next NOTIFY); otherwise it sleeps
 * until the next event. An idle OSD with a thousand clean PGs ticks none.
 */
#include "common/clock.h"
#include "osd/osd_pg.h"

static struct osd *osd_pgtick_osd; /* one OSD per process: the timers' callbacks find it here */

void osd_pg_tick_want(struct osd *osd, struct osd_pg *pg)
{
	if (pg->tick_listed) {
		pg->tick_again = true; /* on a list already, maybe the one being walked */
		return;
	}
	pg->tick_listed = true;
	pg->tnext = osd->tick_list;
	osd->tick_list = pg;
}

static void osd_pgtick_timer_cb(struct evl *evl, struct evl_timer *t, void *arg)
{
	struct osd_pg *pg = arg;

	(void)evl;
	(void)t;
	if (osd_pgtick_osd->pgs_timed > 0)
		osd_pgtick_osd->pgs_timed--;
	osd_pg_tick_want(osd_pgtick_osd, pg);
}

static void osd_pgtick_cancel(struct osd *osd, struct osd_pg *pg)
{
	if (pg->tick_timer.cb == NULL || !evl_timer_armed(&pg->tick_timer))
		return;
	evl_timer_cancel(osd->loop, &pg->tick_timer);
	if (osd->pgs_timed > 0)
		osd->pgs_timed--;
}

/* After its tick: listed again, on its timer, or asleep until an event. */
static void osd_pgtick_settle(struct osd *osd, struct osd_pg *pg, uint64_t now)
{
	uint64_t due = pg->m != NULL ? pg_tick_due(pg->m) : PG_TICK_NEVER;

	if (pg->tick_again || pg->head != NULL || pg->fenced_epoch != 0 || due <= now) {
		osd_pgtick_cancel(osd, pg);
		osd_pg_tick_want(osd, pg);
		return;
	}
	if (due == PG_TICK_NEVER) {
		osd_pgtick_cancel(osd, pg);
		return;
	}
	if (pg->tick_timer.cb == NULL)
		evl_timer_init(&pg->tick_timer, osd_pgtick_timer_cb, pg);
	if (!evl_timer_armed(&pg->tick_timer))
		osd->pgs_timed++;
	if (evl_timer_arm(osd->loop, &pg->tick_timer, (due - now) * 1000u, 0) != 0) {
		/* only a heap that cannot grow: tick it every round instead */
		osd->pgs_timed--;
		osd_pg_tick_want(osd, pg);
	}
}

/*
 * The listed PGs' round: their queued ops kicked and their records posted
 * (a safety net for waits without an event of their own: a free buffer, a
 * blocked ring), their machines ticked, a fence that outlived its hold
 * lifted. A PG listed again meanwhile waits for the next round.
 */
void osd_pgtick_round(struct osd *osd, uint64_t now, uint32_t fence_hold_ms)
{
	struct osd_pg *list = osd->tick_list;
	uint32_t n = 0;

	osd_pgtick_osd = osd;
	osd->tick_list = NULL;
	while (list != NULL) {
		struct osd_pg *pg = list;

		list = pg->tnext;
		pg->tnext = NULL;
		pg->tick_again = false;
		n++;
		if (pg->head != NULL) {
			osd_pg_kick(pg);
			osd_repl_pg_flush(osd, pg);
		}
		if (pg->m != NULL) {
			pg_tick(pg->m);
			osd->pg_ticks++;
		}
		if (pg->fenced_epoch != 0 && (pg->fenced_epoch != osd->map.epoch ||
					      now - pg->fenced_ms >= fence_hold_ms)) {
			pg->fenced_epoch = 0; /* the held writes go (or fail) now */
			osd_pg_kick_later(osd, pg);
		}
		pg->tick_listed = false;
		osd_pgtick_settle(osd, pg, now);
	}
	osd->pgs_listed = n;
}
