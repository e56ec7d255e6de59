/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scripted regression scenarios for the PG state machine (docs/recovery.md,
 * "What went wrong before"): each replays, in the simulator's world, the
 * sequence of failures that once lost or diverged data, with the message
 * order left to the seed. The random runs (sim_pg.c) find such sequences
 * by chance; these make sure each one stays covered.
 *
 *   double-kill   two members die after acknowledging writes the third
 *                 missed; the third comes back with a fresh OSD: the PG
 *                 must stay down until one of the two returns
 *   replica-error a replica fails one record (ENOSPC): the client hears
 *                 the error, the copies end identical
 *   quick-restart the primary, then a replica, crash and restart before the
 *                 mons mark them down, three times while writing: no
 *                 version given twice, no record lost in a replica's log
 *   out-in        a member out (backfill, stray removal) and in again
 *   new-disks     the primary and another OSD come back with empty stores
 *                 (replaced disks), one after the other: the primary, new
 *                 to the PG, must hear from every up OSD, also from one
 *                 whose first map is newer than the primary's interval
 *   lost-activate the ACTIVATE of a new interval to one member is lost (a
 *                 connection failed right after the send) and no write
 *                 follows: the primary must not call the PG clean before
 *                 that member answers; it peers again instead
 *   scrub-writes  a verify and a deep scrub of a PG while clients keep
 *                 writing to it: copies that are the same must not be
 *                 counted inconsistent because a write landed between the
 *                 members' scans and the primary's
 *   blind-primary the three members that hold the writes die together and
 *                 three OSDs with new stores take the PG: no copy heard
 *                 knows its history (the history horizon), so it must stay
 *                 down naming them, not go active empty
 *   fenced-notify the primary orders a write whose records the members never
 *                 apply (refused by a new interval's fence) and whose own
 *                 transaction is still on its way to the disk when a map
 *                 moves it out; it crashes before that commit. The new
 *                 primary must not take the entry from its NOTIFY as the
 *                 history: no copy would ever hold that version (unfound,
 *                 the PG never clean)
 *   stale-notify  a member leaves (a stray), the clean primary's DELETE and
 *                 the stray's notifies wait on their links; the member is
 *                 back in while the primary waits for its own transaction,
 *                 the stray (still in the old map) carries out the DELETE,
 *                 and only then do its stale answers reach the primary. A
 *                 NOTIFY must not stand for the member's answer: recovered
 *                 from the last_update of a copy already gone, it would
 *                 miss the older objects after clean (sim_pg seed 92466;
 *                 fails in every message order without the rule)
 *   stale-log     the primary comes back behind and fetches the
 *                 authoritative log in chunks; the source's answers wait
 *                 past PG_LOG_RESEND_MS, so the fetch starts over: the
 *                 earlier round's answer arrives first and must not be
 *                 taken for the new round's (sim_pg seed 27312)
 *
 * Each ends as every run does: everything back, settle, and the checks of
 * s_finish (no acknowledged write lost, identical copies, no strays).
 */
#include <errno.h>
#include <string.h>

#include "tests/sim_pg.h"

#define SCN_PG 0 /* the PG the scenarios write to */

/* Steps without chaos; with writes to PG g (random names) unless g < 0. */
static void scn_steps(uint64_t n, int g)
{
	for (uint64_t i = 0; i < n && !s_failed; i++) {
		s_step_once(false, false);
		if (g >= 0 && rn(8) == 0)
			(void)s_client_issue_at(g, (int)rn(S_NAMES), false);
	}
}

/* Writes to PG g until `want` more were acknowledged (bounded). */
static void scn_write_acked(int g, unsigned int want)
{
	uint32_t from = s_nops;
	unsigned int acked = 0;

	for (uint64_t i = 0; i < 200000 && acked < want && !s_failed; i++) {
		scn_steps(1, g);
		acked = 0;
		for (uint32_t k = from; k < s_nops; k++)
			acked += s_opv[k].pgi == g && s_opv[k].st == S_OP_DONE && s_opv[k].rc == 0;
	}
	if (acked < want)
		s_fail("scenario: %u of %u writes to pg %d acknowledged", acked, want, g);
}

static void scn_settle(void)
{
	for (uint64_t i = 0; i < 400000 && !s_failed; i++) {
		s_step_once(false, false);
		if ((i & 1023) == 1023 && s_all_clean())
			return;
	}
	s_fail("scenario: not active+clean in time");
}

/* The primary of PG g in the current map, its machine, or NULL. */
static struct pg *scn_primary(int g, int32_t *osd_out)
{
	int32_t acting[S_SIZE];
	unsigned int n = s_acting(s_map_cur(), g, acting);

	if (n == 0)
		return NULL;
	if (osd_out)
		*osd_out = acting[0];
	return s_osd[acting[0]].up ? s_osd[acting[0]].pg[g] : NULL;
}

static void scn_double_kill(void)
{
	int32_t a[S_SIZE], fresh = -1;
	unsigned int n;

	scn_settle();
	n = s_acting(s_map_cur(), SCN_PG, a);
	if (n != S_SIZE)
		return (void)s_fail("double-kill: pg %d has %u members", SCN_PG, n);
	/* only the three members (and later one fresh OSD) may hold the PG */
	for (int o = 0; o < S_OSDS; o++)
		if (o != a[0] && o != a[1] && o != a[2]) {
			if (fresh < 0)
				fresh = o;
			s_mark(o, true, false);
		}
	scn_settle();
	scn_write_acked(SCN_PG, 10);
	/* the third member dies: {a0, a1} acknowledge writes it misses */
	s_hold_down = 1u << a[2];
	s_osd_crash(&s_osd[a[2]]);
	s_mark(a[2], false, true);
	scn_write_acked(SCN_PG, 10);
	/* both die at once; the third returns, a fresh OSD comes in: min_size again */
	s_hold_down = 1u << a[0] | 1u << a[1];
	s_osd_crash(&s_osd[a[0]]);
	s_osd_crash(&s_osd[a[1]]);
	s_mark(a[0], false, true);
	s_mark(a[1], false, true);
	s_osd_start(&s_osd[a[2]]);
	s_mark(fresh, true, true);
	for (uint64_t i = 0; i < 30000 && !s_failed; i++) {
		struct pg *p = scn_primary(SCN_PG, NULL);

		scn_steps(1, -1);
		if (p != NULL && (p->state & PROTO_PGS_ACTIVE))
			return (void)s_fail("double-kill: pg %d went active without osd.%d or osd.%d, "
					    "which alone hold the last writes",
					    SCN_PG, a[0], a[1]);
	}
	{
		struct pg *p = scn_primary(SCN_PG, NULL);
		bool named = false;

		if (p == NULL || !(p->state & PROTO_PGS_DOWN))
			return (void)s_fail("double-kill: pg %d is not down", SCN_PG);
		for (unsigned int i = 0; i < p->nblocked; i++)
			named |= p->blocked[i] == a[0] || p->blocked[i] == a[1];
		if (!named)
			return (void)s_fail("double-kill: pg %d does not name osd.%d or osd.%d as "
					    "what it waits for",
					    SCN_PG, a[0], a[1]);
	}
	/* one of them back: it goes on (s_finish checks, with every OSD up) */
	s_hold_down = 1u << a[1];
	s_osd_start(&s_osd[a[0]]);
	scn_settle();
}

static void scn_replica_error(void)
{
	int32_t a[S_SIZE];
	bool seen = false;

	scn_settle();
	scn_write_acked(SCN_PG, 10);
	if (s_acting(s_map_cur(), SCN_PG, a) < 2)
		return (void)s_fail("replica-error: pg %d has no replica", SCN_PG);
	s_fail_rec_osd = a[1];
	scn_write_acked(SCN_PG, 20);
	if (s_fail_rec_count != 1)
		return (void)s_fail("replica-error: osd.%d failed %llu records, want 1", a[1],
				    (unsigned long long)s_fail_rec_count);
	scn_settle(); /* the refusal reaches the primary, which peers again */
	for (uint32_t k = 0; k < s_nops; k++) /* (the random ones may add more) */
		seen |= s_opv[k].pgi == SCN_PG && s_opv[k].rc == -ENOSPC;
	if (!seen)
		return (void)s_fail("replica-error: no client op heard the replica's ENOSPC");
	s_check_final();
}

/* Every version in any OSD's log of g names one object only. */
static void scn_versions_unique(int g)
{
	for (int o = 0; o < S_OSDS && !s_failed; o++) {
		const struct s_spg *x = &s_osd[o].st.pg[g];

		for (int q = o; q < S_OSDS && !s_failed; q++) {
			const struct s_spg *y = &s_osd[q].st.pg[g];

			for (uint32_t i = 0; i < x->nlog; i++)
				for (uint32_t j = 0; j < y->nlog; j++)
					if (x->log[i].v == y->log[j].v &&
					    x->log[i].op != PG_OP_ROLLBACK &&
					    y->log[j].op != PG_OP_ROLLBACK &&
					    strcmp(x->log[i].name, y->log[j].name) != 0)
						return (void)s_fail(
						    "quick-restart: v%llx is %s on osd.%d and %s on "
						    "osd.%d",
						    (unsigned long long)x->log[i].v, x->log[i].name, o,
						    y->log[j].name, q);
		}
	}
}

static void scn_quick_restart(void)
{
	scn_settle();
	for (int round = 0; round < 3 && !s_failed; round++) {
		int32_t p = -1;

		int32_t a[S_SIZE];

		scn_write_acked(SCN_PG, 5);
		(void)scn_primary(SCN_PG, &p);
		s_acting(s_map_cur(), SCN_PG, a);
		/* writes in flight, then gone with it; it boots before anyone saw it down */
		scn_steps(20, SCN_PG);
		s_osd_crash(&s_osd[p]);
		s_osd_start(&s_osd[p]);
		scn_write_acked(SCN_PG, 5);
		/* the same for a replica: it lost records it had not committed */
		scn_steps(20, SCN_PG);
		s_osd_crash(&s_osd[a[1]]);
		s_osd_start(&s_osd[a[1]]);
		scn_write_acked(SCN_PG, 5);
		scn_versions_unique(SCN_PG);
	}
	scn_settle();
	s_check_final();
	scn_versions_unique(SCN_PG);
}

static void scn_out_in(void)
{
	int32_t a[S_SIZE];

	scn_settle();
	scn_write_acked(SCN_PG, 10);
	s_acting(s_map_cur(), SCN_PG, a);
	s_mark(a[1], true, false);
	scn_write_acked(SCN_PG, 10);
	scn_settle();
	s_check_final(); /* the moved copy is deleted: no stray */
	s_mark(a[1], true, true);
	scn_write_acked(SCN_PG, 10);
	scn_settle();
	s_check_final();
}

static void scn_new_disks(void)
{
	int32_t p = -1, x = -1, a[S_SIZE];
	unsigned int n;

	scn_settle();
	scn_write_acked(SCN_PG, 10);
	(void)scn_primary(SCN_PG, &p);
	n = s_acting(s_map_cur(), SCN_PG, a);
	for (int o = 0; o < S_OSDS && x < 0; o++) {
		bool member = false;

		for (unsigned int i = 0; i < n; i++)
			member |= a[i] == o;
		if (!member)
			x = o;
	}
	s_hold_down = 1u << p | 1u << x;
	s_osd_crash(&s_osd[p]);
	s_osd_crash(&s_osd[x]);
	s_osd_wipe(&s_osd[p]);
	s_osd_wipe(&s_osd[x]);
	s_mark(p, false, true);
	s_mark(x, false, true);
	scn_settle(); /* recovered onto the others meanwhile */
	s_hold_down = 1u << x;
	s_osd_start(&s_osd[p]);
	scn_steps(50, -1);
	s_osd_start(&s_osd[x]);
	s_hold_down = 0;
	scn_settle();
	s_check_final();
}

static void scn_lost_activate(void)
{
	int32_t a[S_SIZE];

	scn_settle();
	scn_write_acked(SCN_PG, 10);
	scn_settle();
	if (s_acting(s_map_cur(), SCN_PG, a) != S_SIZE)
		return (void)s_fail("lost-activate: pg %d has too few members", SCN_PG);
	/* a new interval (a[2] out); the ACTIVATE to a[1] of whichever PG goes first is lost */
	s_drop_act_osd = a[1];
	s_mark(a[2], true, false);
	scn_settle();
	if (s_drop_act_count != 1)
		return (void)s_fail("lost-activate: %llu ACTIVATEs lost, want 1",
				    (unsigned long long)s_drop_act_count);
	s_check_final(); /* UNACTIVATED if a PG went clean without that member's answer */
}

static void scn_fenced_notify(void)
{
	int32_t a[S_SIZE], q = -1;
	struct s_osd *p;
	struct s_op *op;
	uint64_t seq = 0, i;

	scn_settle();
	scn_write_acked(SCN_PG, 10);
	scn_settle();
	if (s_acting(s_map_cur(), SCN_PG, a) != S_SIZE)
		return (void)s_fail("fenced-notify: pg %d has too few members", SCN_PG);
	p = &s_osd[a[0]];
	for (i = 0; i < 10000 && seq == 0 && !s_failed; i++) {
		seq = s_client_issue_at(SCN_PG, 0, false);
		if (seq == 0)
			s_step_once(false, false);
	}
	if (seq == 0)
		return (void)s_fail("fenced-notify: no write taken");
	op = &s_opv[seq - 1];
	for (i = 0; i < 10000 && op->st == S_OP_QUEUED && !s_failed; i++)
		s_step_once(false, false);
	if (op->st != S_OP_ORDERED || op->primary != a[0])
		return (void)s_fail("fenced-notify: the write was not ordered by osd.%d", a[0]);
	/* its records never apply anywhere; its own transaction (and every later one) stalls */
	if (s_net_drop_recs(a[0], SCN_PG) == 0)
		return (void)s_fail("fenced-notify: no record of the write to drop");
	for (struct s_tx *t = p->txq; t; t = t->next)
		t->commit_at = UINT64_MAX;
	s_mark(a[0], true, false);
	if (s_acting(s_map_cur(), SCN_PG, a) == 0)
		return (void)s_fail("fenced-notify: pg %d has no members", SCN_PG);
	q = a[0];
	for (i = 0; i < 200000 && !s_failed; i++) {
		struct pg *g = s_osd[q].up ? s_osd[q].pg[SCN_PG] : NULL;

		if (g != NULL && g->phase == PG_PH_ACTIVE && g->same_since == s_map_cur()->epoch)
			break;
		s_step_once(false, false);
	}
	/* the old primary dies before its transaction reached the disk: the entry is gone */
	s_osd_crash(p);
	s_mark((int)(p - s_osd), false, false);
}

static void scn_scrub_writes(void)
{
	struct pg *p;
	uint32_t token = 7000;

	scn_settle();
	scn_write_acked(SCN_PG, 30);
	for (int round = 0; round < 4 && !s_failed; round++) {
		bool deep = round & 1, started = false, done = false;
		uint64_t i;

		p = scn_primary(SCN_PG, NULL);
		if (p == NULL)
			return (void)s_fail("scrub-writes: pg %d has no primary", SCN_PG);
		if (deep)
			pg_scrub_request(p, true, false);
		else
			pg_verify_request(p, ++token);
		for (i = 0; i < 200000 && !s_failed && !done; i++) {
			scn_steps(1, SCN_PG); /* writes keep coming */
			if (scn_primary(SCN_PG, NULL) != p)
				return (void)s_fail("scrub-writes: pg %d changed primary", SCN_PG);
			started |= p->scrub != NULL;
			done = deep ? started && p->scrub == NULL : p->verify_token == token;
			if (!deep && !done && p->scrub == NULL && !p->verify_wanted)
				pg_verify_request(p, token); /* peering again dropped it: asked again,
								as the mons do */
		}
		if (!done)
			return (void)s_fail("scrub-writes: round %d not done", round);
		if (deep ? p->inconsistent != 0 : p->verify_inconsistent != 0)
			return (void)s_fail("scrub-writes: %s of pg %d counted %u inconsistent "
					    "copies while clients wrote",
					    deep ? "deep scrub" : "verify", SCN_PG,
					    deep ? p->inconsistent : p->verify_inconsistent);
	}
	scn_settle();
	s_check_final();
}

static void scn_blind_primary(void)
{
	int32_t a[S_SIZE];
	uint32_t gone = 0;

	scn_settle();
	if (s_acting(s_map_cur(), SCN_PG, a) != S_SIZE)
		return (void)s_fail("blind-primary: pg %d has too few members", SCN_PG);
	for (int i = 0; i < S_SIZE; i++)
		gone |= 1u << a[i];
	/* the other OSDs get new stores, out of the PG: they never saw it */
	for (int o = 0; o < S_OSDS; o++)
		if (!(gone & (1u << o))) {
			s_mark(o, true, false);
			s_hold_down = 1u << o;
			s_osd_crash(&s_osd[o]);
			s_osd_wipe(&s_osd[o]);
			s_mark(o, false, false);
		}
	s_hold_down = 0;
	for (int o = 0; o < S_OSDS; o++)
		if (!(gone & (1u << o)))
			s_osd_start(&s_osd[o]);
	scn_settle();
	scn_write_acked(SCN_PG, 10);
	/* every copy that holds the writes dies; the new ones take the PG */
	s_hold_down = gone;
	for (int i = 0; i < S_SIZE; i++) {
		s_osd_crash(&s_osd[a[i]]);
		s_mark(a[i], false, false);
	}
	for (int o = 0; o < S_OSDS; o++)
		if (!(gone & (1u << o)))
			s_mark(o, true, true);
	for (uint64_t i = 0; i < 30000 && !s_failed; i++) {
		struct pg *p = scn_primary(SCN_PG, NULL);

		scn_steps(1, -1);
		if (p != NULL && (p->state & PROTO_PGS_ACTIVE))
			return (void)s_fail("blind-primary: pg %d went active on new stores while "
					    "every copy of its history was down",
					    SCN_PG);
	}
	{
		struct pg *p = scn_primary(SCN_PG, NULL);
		bool named = false;

		if (p == NULL || !(p->state & PROTO_PGS_DOWN))
			return (void)s_fail("blind-primary: pg %d is not down", SCN_PG);
		for (unsigned int i = 0; i < p->nblocked; i++)
			named |= (gone & (1u << p->blocked[i])) != 0;
		if (!named)
			return (void)s_fail("blind-primary: pg %d does not name an OSD it waits for",
					    SCN_PG);
	}
	/* they come back: the history is heard again (s_finish checks the writes) */
	s_hold_down = 0;
	for (int i = 0; i < S_SIZE; i++) {
		s_osd_start(&s_osd[a[i]]);
		s_mark(a[i], true, true);
	}
	scn_settle();
}

/* Hold (or release) every transaction queued on o: the head waits, so all do. */
static void scn_stall(struct s_osd *o, bool on)
{
	for (struct s_tx *t = o->txq; t; t = t->next)
		t->commit_at = on ? UINT64_MAX : s_now;
}

static bool scn_has_tx(const struct s_osd *o, int g)
{
	for (const struct s_tx *t = o->txq; t; t = t->next)
		if (t->pgi == g && t->kind != S_TX_MAP)
			return true;
	return false;
}

#define SCN_LINK(a, b) (1ull << ((a)*S_OSDS + (b)))

static void scn_stale_notify(void)
{
	int32_t a[S_SIZE], p, b;
	struct pg *pp, *bp;
	uint64_t i;

	scn_settle();
	scn_write_acked(SCN_PG, 10);
	if (s_acting(s_map_cur(), SCN_PG, a) != S_SIZE)
		return (void)s_fail("stale-notify: pg %d has too few members", SCN_PG);
	p = a[0];
	b = a[1];
	pp = s_osd[p].pg[SCN_PG];
	bp = s_osd[b].pg[SCN_PG];
	/* b leaves the PG; nothing from the primary reaches it for now */
	s_net_held = SCN_LINK(p, b);
	s_mark(b, true, false);
	for (i = 0; i < 200000 && !s_failed; i++) {
		bool sent = false;

		scn_steps(1, -1);
		for (unsigned int k = 0; k < pp->np; k++)
			sent |= pp->p[k].osd == b && pp->p[k].stray_delete_sent;
		if ((pp->state & PROTO_PGS_CLEAN) && pp->same_since == s_map_cur()->epoch && sent)
			break;
	}
	if (!(pp->state & PROTO_PGS_CLEAN))
		return (void)s_fail("stale-notify: pg %d not clean without osd.%d", SCN_PG, b);
	/* the stray's notifies (describing its copy) wait on their way too */
	s_net_held |= SCN_LINK(b, p);
	for (i = 0; i < 20000 && s_net_count(b, p, SCN_PG) < 2 && !s_failed; i++)
		scn_steps(1, -1);
	/* back in; b keeps the old map; the primary waits for its own transaction */
	s_map_held = 1u << b;
	for (i = 0; i < 10000 && !scn_has_tx(&s_osd[p], SCN_PG) && !s_failed; i++)
		scn_steps(1, SCN_PG);
	scn_stall(&s_osd[p], true);
	s_mark(b, true, true);
	for (i = 0; i < 10000 && s_osd[p].map_epoch < s_map_cur()->epoch && !s_failed; i++)
		scn_steps(1, -1);
	/* the old interval's query and DELETE reach b, a stray in its map: its copy goes */
	s_net_held &= ~SCN_LINK(p, b);
	for (i = 0; i < 10000 && !bp->destroying && !s_failed; i++)
		scn_steps(1, -1);
	if (!bp->destroying)
		return (void)s_fail("stale-notify: osd.%d did not remove its stray copy", b);
	/* the primary hears the stray's stale answers before it probes anyone */
	scn_stall(&s_osd[b], true);
	s_net_held &= ~SCN_LINK(b, p);
	for (i = 0; i < 10000 && s_net_count(b, p, SCN_PG) > 0 && !s_failed; i++)
		scn_steps(1, -1);
	/* the removal is done before b hears of the new map; what it says next waits */
	s_net_held |= SCN_LINK(b, p);
	scn_stall(&s_osd[b], false);
	for (i = 0; i < 10000 && bp->destroying && !s_failed; i++)
		scn_steps(1, -1);
	scn_stall(&s_osd[p], false);
	s_map_held = 0;
	for (i = 0; i < 20000 && pp->phase != PG_PH_ACTIVE && !s_failed; i++)
		scn_steps(1, -1);
	scn_steps(300, -1);
	s_net_held = 0;
	scn_settle();
	s_check_final();
}

/* One acknowledged write to each of names k0..k0+n-1 of PG g, in order (bounded). */
static void scn_write_names(int g, int k0, int n)
{
	for (int k = k0; k < k0 + n && !s_failed; k++) {
		bool acked = false;

		for (int try = 0; try < 50 && !acked && !s_failed; try++) {
			uint64_t seq = 0, i;

			for (i = 0; i < 20000 && seq == 0 && !s_failed; i++) {
				seq = s_client_issue_at(g, k % S_NAMES, false);
				if (seq == 0)
					s_step_once(false, false);
			}
			for (i = 0;
			     i < 200000 && seq != 0 && s_opv[seq - 1].st != S_OP_DONE && !s_failed;
			     i++)
				s_step_once(false, false);
			acked =
			    seq != 0 && s_opv[seq - 1].st == S_OP_DONE && s_opv[seq - 1].rc == 0;
		}
		if (!acked)
			return (void)s_fail("scenario: no acknowledged write of o%d", k % S_NAMES);
	}
}

static void scn_stale_log(void)
{
	int32_t a[S_SIZE], p, src;
	struct pg *pp;
	uint64_t i, t0;

	scn_settle();
	if (s_acting(s_map_cur(), SCN_PG, a) != S_SIZE)
		return (void)s_fail("stale-log: pg %d has too few members", SCN_PG);
	p = a[0];
	scn_write_names(SCN_PG, 0, 5);
	scn_steps(500, -1);
	/*
	 * The primary misses writes: down while the others write o5-o7 once
	 * (the only writes of those names) and then 9 others. The authoritative
	 * log goes out in answers of 8 entries; the first holds o5-o7's writes.
	 */
	s_hold_down = 1u << p;
	s_osd_crash(&s_osd[p]);
	s_mark(p, false, true);
	scn_write_names(SCN_PG, 5, 3);
	scn_write_names(SCN_PG, 8, 9);
	scn_steps(3000, -1);
	/* back: it fetches the authoritative log */
	s_hold_down = 0;
	s_osd_start(&s_osd[p]);
	pp = s_osd[p].pg[SCN_PG];
	for (i = 0; i < 100000 && !s_failed; i++) {
		s_step_once(false, false);
		if (pp->phase == PG_PH_GETLOG && pp->fetch >= 0 && pp->nfe > 0 &&
		    pp->same_since == s_map_cur()->epoch)
			break;
	}
	if (pp->phase != PG_PH_GETLOG || pp->nfe == 0)
		return (void)s_fail("stale-log: osd.%d never fetched a log in chunks", p);
	/* the next answers wait; the fetch starts over (no answer in PG_LOG_RESEND_MS) */
	src = pp->p[pp->fetch].osd;
	s_net_held = SCN_LINK(src, p);
	t0 = s_now;
	for (i = 0; i < 100000 && s_now < t0 + 4000 && !s_failed; i++)
		s_step_once(false, false);
	/* the earlier round's answer comes first, then the new round's */
	s_net_held = 0;
	scn_settle();
	s_check_final();
}

static const struct {
	const char *name;
	void (*run)(void);
} scn_table[] = {
    {"double-kill", scn_double_kill},	  {"replica-error", scn_replica_error},
    {"quick-restart", scn_quick_restart}, {"out-in", scn_out_in},
    {"new-disks", scn_new_disks},	  {"lost-activate", scn_lost_activate},
    {"scrub-writes", scn_scrub_writes},	  {"blind-primary", scn_blind_primary},
    {"fenced-notify", scn_fenced_notify}, {"stale-notify", scn_stale_notify},
    {"stale-log", scn_stale_log},
};

int s_scenarios_run(uint64_t seed, const char *only, unsigned int *nrun_out)
{
	*nrun_out = 0;
	for (size_t i = 0; i < sizeof(scn_table) / sizeof(scn_table[0]); i++) {
		if (only != NULL && strcmp(only, "all") != 0 && strcmp(only, scn_table[i].name) != 0)
			continue;
		s_world_start(seed);
		scn_table[i].run();
		if (!s_failed)
			(void)s_finish();
		(*nrun_out)++;
		if (s_failed) {
			printf("FAIL scenario %s seed %llu at step %llu: %s\n", scn_table[i].name,
			       (unsigned long long)seed, (unsigned long long)s_step, s_why);
			return -1;
		}
	}
	if (*nrun_out == 0) {
		printf("sim_pg: no scenario '%s'\n", only);
		return -1;
	}
	return 0;
}
