/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The authoritative history and what each copy misses (docs/recovery.md,
 * "The authoritative history"). Versions are unique per PG and grow across
 * intervals (an interval's primary orders with its map epoch in the high
 * half, and a restarted OSD always comes back in a new epoch), so:
 *
 *  - the copy with the newest last_update saw the newest write; every
 *    acknowledged write is in its log (its interval's members all committed
 *    it, and every later interval was peered from a log that had it);
 *  - two copies that hold the same entry (version and object) hold the same
 *    history up to it: the fork point of a copy is the newest entry it
 *    shares with the authoritative log, and its entries after that never
 *    happened (never acknowledged): rolled back;
 *  - a copy misses at most the objects named by its log after
 *    min(last_complete, fork) and the ones it rolls back. Where the logs no
 *    longer name them (behind the tail), the copy is rebuilt by a scan.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osd/pg/pg_int.h"

static bool pg_info_complete(const struct proto_pg *a)
{
	return a->last_complete >= a->last_update && !(a->flags & PROTO_PG_INFO_F_BACKFILL);
}

/*
 * The newest log is the history, whatever the copy's objects are like:
 * every copy's log holds every entry after its tail. On a tie, a copy that
 * is not being backfilled, then a complete one, then the longer log.
 */
static bool pg_info_better(const struct proto_pg *a, const struct proto_pg *b)
{
	bool bfa = a->flags & PROTO_PG_INFO_F_BACKFILL, bfb = b->flags & PROTO_PG_INFO_F_BACKFILL;

	if (a->last_update != b->last_update)
		return a->last_update > b->last_update;
	if (bfa != bfb)
		return !bfa;
	if (pg_info_complete(a) != pg_info_complete(b))
		return pg_info_complete(a);
	return a->tail < b->tail;
}

/* A copy whose objects can be trusted as far as its log says (not being backfilled). */
static bool pg_info_usable(const struct proto_pg *a)
{
	return !(a->flags & (PROTO_PG_INFO_F_EMPTY | PROTO_PG_INFO_F_BACKFILL));
}

/* Index of the fetched entry of version v, or pg->nfe (sorted by version). */
uint32_t pg_fetched_find(const struct pg *pg, uint64_t v)
{
	uint32_t lo = 0, hi = pg->nfe;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (pg->fe[mid].v < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < pg->nfe && pg->fe[lo].v == v ? lo : pg->nfe;
}

/* Is (v, name) in the fetched entries, not rolled back? */
static bool pg_fetched_has(const struct pg *pg, uint64_t v, const char *name)
{
	uint32_t k = pg_fetched_find(pg, v);

	return k < pg->nfe && pg->fe[k].op != PG_OP_ROLLBACK &&
	       (name == NULL || !strcmp(pg->fe[k].name, name));
}

/* Where the authoritative history is while a base is chosen (pg_merge_in_history). */
enum pg_hist {
	PG_HIST_UNKNOWN, /* not fetched yet: chosen again once it is */
	PG_HIST_FETCHED, /* the auth's log, fetched */
	PG_HIST_OURS,	 /* our log: we are the auth, or the PG is active (merged) */
};

/*
 * Is version v (a copy's last_update) in the authoritative history? Then
 * the copy holds no entry after it that never happened. Not known before
 * the auth's log is fetched: true, and the base is chosen again with it.
 */
static bool pg_merge_in_history(const struct pg *pg, uint64_t v, uint64_t tail, enum pg_hist h)
{
	if (v == tail)
		return true;
	if (pg->auth < 0 || h == PG_HIST_OURS)
		return pg_log_has(&pg->log, v, NULL);
	return h == PG_HIST_UNKNOWN || pg_fetched_has(pg, v, NULL);
}

/* Active (PG_HIST_OURS), a base serves pulls now: only a copy whose OSD is up. */
static bool pg_merge_base_up(const struct pg *pg, int i, enum pg_hist h)
{
	return h != PG_HIST_OURS || pg_osd_up(pg, pg->p[i].osd);
}

/*
 * Rebuilding our copy by a scan needs a copy whose objects are right for
 * everything the log does not name (changed at or before its tail): the
 * auth when it is not itself being backfilled and is complete up to that
 * tail, else another such copy, else the auth all the same (the copy that
 * can best say what it holds). A copy that rolled back an object and has
 * not recovered it is not complete up to the tail (pg_log_rollback_lc);
 * one with entries the history does not have (rolled back at this
 * activation) holds their writes, not the history's: sim_pg seed 38970
 * rebuilt the primary from such a copy, and a write that never happened
 * became the object on two copies (DIVERGENT after clean). -1 when none
 * was heard.
 */
static int pg_merge_base(const struct pg *pg, uint64_t tail, enum pg_hist h)
{
	int best = -1;

	if (pg->auth >= 0 && pg_info_usable(&pg->p[pg->auth].info) &&
	    pg->p[pg->auth].info.last_complete >= tail && pg_merge_base_up(pg, pg->auth, h))
		return pg->auth;
	for (unsigned int i = 0; i < pg->np; i++) {
		const struct proto_pg *in = &pg->p[i].info;

		if (!pg->p[i].heard || !pg_merge_base_up(pg, (int)i, h) || !pg_info_usable(in) ||
		    in->last_complete < tail || in->last_update < tail ||
		    !pg_merge_in_history(pg, in->last_update, tail, h))
			continue;
		if (best < 0 || in->last_update > pg->p[best].info.last_update)
			best = (int)i;
	}
	if (best < 0 && pg->auth >= 0 && pg_info_usable(&pg->p[pg->auth].info))
		best = pg->auth;
	return best;
}

/*
 * The tail a base must be complete up to: that of the log that will say
 * which objects are wanted "as the base holds them" (pg_merge_want). Ours
 * when we keep our log and it was trimmed past the auth's tail: an object
 * written between the two tails is named by neither part of it, and a copy
 * complete only up to the auth's tail may hold it older.
 */
static uint64_t pg_merge_base_tail(const struct pg *pg, uint64_t auth_tail)
{
	return pg->self_backfill || pg->info.tail < auth_tail ? auth_tail : pg->info.tail;
}

int pg_merge_choose(struct pg *pg)
{
	struct proto_pg best;
	bool have = pg_has_copy(pg);

	pg_info_msg(pg, &best);
	pg->auth = -1;
	for (unsigned int i = 0; i < pg->np; i++) {
		const struct pg_peer *p = &pg->p[i];

		if (!p->heard || (p->info.flags & PROTO_PG_INFO_F_EMPTY))
			continue;
		if (!have || pg_info_better(&p->info, &best)) {
			best = p->info;
			pg->auth = (int)i;
			have = true;
		}
	}
	pg->auth_lu = have ? best.last_update : 0;
	pg->base = -1;
	if (pg->auth >= 0) {
		const struct proto_pg *a = &pg->p[pg->auth].info;

		/* our log must overlap the auth's, else our objects are compared by a scan */
		if (pg->info.backfill || pg->info.lu < a->tail ||
		    (!pg_has_copy(pg) && a->tail > 0))
			pg->self_backfill = true;
	} else if (pg->info.backfill) {
		pg->self_backfill = true; /* the history is ours, our objects a backfill's */
	}
	/* where what the log does not name comes from (a rollback can need it too) */
	pg->base = pg_merge_base(pg, pg_merge_base_tail(pg, best.tail), PG_HIST_UNKNOWN);
	if (pg->self_backfill) {
		if (pg->base < 0) {
			pg_logf(pg, PG_LOG_ERROR, "no copy heard from holds the objects older than "
						  "the log (v%llx): incomplete until one answers",
				(unsigned long long)best.tail);
			pg->phase = PG_PH_DOWN;
			pg->state |= PROTO_PGS_INCOMPLETE;
			pg_update_state(pg);
			return -EAGAIN;
		}
	}
	pg->state &= ~PROTO_PGS_INCOMPLETE;
	{
		char how[64] = "";

		if (pg->self_backfill)
			snprintf(how, sizeof(how), "; ours is rebuilt by a scan of osd.%d",
				 pg->p[pg->base].osd);
		pg_logf(pg, PG_LOG_INFO, "authoritative copy osd.%d (last_update %llx, tail %llx)%s",
			pg->auth < 0 ? pg->env->self : pg->p[pg->auth].osd,
			(unsigned long long)best.last_update, (unsigned long long)best.tail, how);
	}
	return 0;
}

/*
 * Active without a base complete up to the tail and up (none was heard when
 * we peered, or its OSD went down since): a copy heard now, or another one
 * heard before, can be one (called when a copy answers and by the recovery
 * tick while our own copy misses objects). Objects the log does not
 * name wait for it (PG_V_ANY, pg_source), and nothing chose it again: in
 * sim_pg seed 49048 the primary rolled back the only write of an object its
 * log named, the one complete copy answered after the activation, and the
 * object stayed unfound for ever with every OSD up. Our log is the merged
 * history now, so it says whether a copy's last_update is in it.
 */
void pg_merge_base_again(struct pg *pg)
{
	const struct pg_peer *b = pg->base >= 0 ? &pg->p[pg->base] : NULL;
	int base;

	if (pg->self_backfill ||
	    (b != NULL && b->heard && pg_osd_up(pg, b->osd) && pg_info_usable(&b->info) &&
	     b->info.last_complete >= pg->info.tail))
		return;
	base = pg_merge_base(pg, pg->info.tail, PG_HIST_OURS);
	/* pg_merge_base's last resort, the auth however incomplete, is no better */
	if (base < 0 || base == pg->base || !pg_info_usable(&pg->p[base].info) ||
	    pg->p[base].info.last_complete < pg->info.tail)
		return;
	pg->base = base;
	pg_logf(pg, PG_LOG_INFO, "osd.%d holds the objects older than the log (v%llx)",
		pg->p[base].osd, (unsigned long long)pg->info.tail);
	pg_recovery_base_changed(pg);
}

/*
 * A primary whose own copy is a backfill one holds the newest log, and the
 * next peering may choose that log again: it then needs a copy complete up
 * to the log's tail (pg_merge_base). Trimmed freely, our tail passed the
 * last_complete of the only copy that could be one, and the PG stayed
 * down+incomplete with every OSD up (sim_pg seed 10957, docs/recovery.md).
 * So the log keeps what the base may still miss: nothing to keep once the
 * base is a member with nothing missing (its copy follows every write),
 * else everything after the last_complete it had when we peered. Bounded:
 * at PG_TRIM_FLOOR_MAX times log_max the log trims anyway.
 */
uint64_t pg_merge_trim_floor(const struct pg *pg)
{
	const struct pg_peer *b;

	if (!pg->primary || !pg->self_backfill || !pg->info.backfill || pg->base < 0 ||
	    (unsigned int)pg->base >= pg->np)
		return UINT64_MAX;
	b = &pg->p[pg->base];
	if (b->acting && !b->backfill && b->missing_done && b->missing.n == 0)
		return UINT64_MAX;
	return b->info.last_complete < b->info.last_update ? b->info.last_complete
							   : b->info.last_update;
}

/*
 * The trim floor a backfill member gets in its ACTIVATE (last_complete, 0 =
 * none): its log is ours, and if it ends up the newest one (we lost our
 * last entries in a crash), the next peering needs a copy complete up to
 * its tail. Ours is one while it is complete (it follows every write);
 * else the member keeps what we, or our base, still miss.
 */
static uint64_t pg_merge_member_floor(const struct pg *pg)
{
	uint64_t floor;

	if (pg->info.backfill)
		floor = pg_merge_trim_floor(pg);
	else if (pg->info.lc < pg->info.lu)
		floor = pg->info.lc;
	else
		return 0;
	if (floor == UINT64_MAX)
		return 0;
	if (floor > pg->info.lu)
		floor = pg->info.lu;
	return floor > 1 ? floor : 1; /* versions start at epoch 1 << 32: 1 keeps them all */
}

/*
 * Named by no entry that stands (none, or only rolled back ones): the object
 * is as it was at the log's tail, which only a copy complete up to the tail
 * knows (PG_V_ANY: the base's copy). With tail 0 the log holds every write
 * the PG ever had, so the object does not exist. Asked "whatever you have",
 * a copy that rolled back the only write of an object used to hand out the
 * rolled-back content: lc 0 still counts as complete up to a tail of 0
 * (sim_pg seed 19297, DIVERGENT after clean).
 */
uint64_t pg_merge_want(const struct pg *pg, const char *name)
{
	const struct pg_entry *e = pg_log_newest_of(&pg->log, name, UINT64_MAX);

	if (e == NULL)
		return pg->info.tail == 0 ? 0 : PG_V_ANY;
	return e->op == PROTO_OP_REMOVE ? 0 : e->v;
}

int pg_merge_own_missing(struct pg *pg, uint64_t from)
{
	pg_set_clear(&pg->missing);
	for (uint32_t i = 0; i < pg->log.n; i++) {
		const struct pg_entry *e = pg_log_at(&pg->log, i);
		int rc;

		if (e->v <= from)
			continue;
		rc = pg_set_add(&pg->missing, e->name, pg_merge_want(pg, e->name), 0);
		if (rc != 0)
			return rc;
	}
	if (pg->missing.n > 0)
		pg_logf(pg, PG_LOG_INFO, "our copy misses %u objects changed after v%llx",
			pg->missing.n, (unsigned long long)from);
	return 0;
}

int pg_merge_auth(struct pg *pg)
{
	const struct proto_pg *a = &pg->p[pg->auth].info;
	struct pg_txn *t = pg_txn_begin(pg);
	uint64_t fork = pg->info.tail, lc;
	unsigned int rolled = 0;
	int base = pg->base, rc = 0;

	/* the base again, now that the history is here: none with entries it lacks */
	pg->base = pg_merge_base(pg, pg_merge_base_tail(pg, a->tail), PG_HIST_FETCHED);
	if (pg->self_backfill && pg->base < 0) {
		pg_logf(pg, PG_LOG_ERROR,
			"no copy heard from holds the objects older than the log "
			"(v%llx) and only its history: incomplete until one answers",
			(unsigned long long)a->tail);
		pg->state |= PROTO_PGS_INCOMPLETE;
		return -EAGAIN;
	}
	if (pg->self_backfill && base >= 0 && pg->base != base)
		pg_logf(pg, PG_LOG_INFO,
			"ours is rebuilt by a scan of osd.%d: osd.%d has entries "
			"the history does not",
			pg->p[pg->base].osd, pg->p[base].osd);

	/* the auth as a member: its own log names what it misses (after its last_complete) */
	if (pg->p[pg->auth].acting && (a->flags & PROTO_PG_INFO_F_BACKFILL)) {
		pg->p[pg->auth].backfill = true; /* its log is the history, its objects are not */
		pg->p[pg->auth].missing_done = true;
	} else if (pg->p[pg->auth].acting) {
		struct pg_peer *ap = &pg->p[pg->auth];

		ap->fork = a->last_update;
		for (uint32_t i = 0; rc == 0 && i < pg->nfe; i++)
			if (pg->fe[i].v > a->last_complete)
				rc = pg_set_add(&ap->missing, pg->fe[i].name, pg->fe[i].v, 0);
		ap->missing_done = true;
	}
	if (pg->self_backfill) {
		/* our log restarts as the auth's; our objects are compared by a scan */
		pg_log_clear(&pg->log);
		t->clear = true;
		for (uint32_t i = 0; rc == 0 && i < pg->nfe; i++) {
			struct pg_entry *e;

			if (pg->fe[i].op == PG_OP_ROLLBACK)
				continue;
			e = pg_log_put(&pg->log, pg->fe[i].v, pg->fe[i].op, pg->fe[i].name);
			rc = e == NULL ? -ENOMEM : pg_txn_put(t, e);
		}
		pg->info.tail = a->tail;
		pg->info.lu = pg->auth_lu;
		pg->info.lc = 0;
		pg->info.backfill = true;
		/* what the log names must be as it says (also where no listing has it) */
		if (rc == 0)
			rc = pg_merge_own_missing(pg, 0);
		t->info = true;
		return rc != 0 ? rc : pg_persist(pg, t);
	}
	/* the fork point: our newest entry the auth has too (at or before its tail: shared) */
	for (uint32_t i = pg->log.n; i > 0; i--) {
		const struct pg_entry *e = pg_log_at(&pg->log, i - 1);

		if (e->op == PG_OP_ROLLBACK)
			continue;
		if (e->v <= a->tail || pg_fetched_has(pg, e->v, e->name)) {
			fork = e->v;
			break;
		}
	}
	/* ours after it never happened: markers (the name stays: the object is recovered) */
	for (uint32_t i = 0; rc == 0 && i < pg->log.n; i++) {
		struct pg_entry *e = pg_log_at(&pg->log, i);

		if (e->v <= fork || e->op == PG_OP_ROLLBACK)
			continue;
		pg_logf(pg, PG_LOG_INFO, "rolling back unacknowledged %s v%llx", e->name,
			(unsigned long long)e->v);
		e->op = PG_OP_ROLLBACK;
		rc = pg_txn_put(t, e);
		rolled++;
	}
	/* the auth's after it: appended */
	for (uint32_t i = 0; rc == 0 && i < pg->nfe; i++) {
		struct pg_entry *e;
		int k;

		if (pg->fe[i].v <= fork || pg->fe[i].op == PG_OP_ROLLBACK)
			continue; /* the auth's markers are not history */
		k = pg_log_find(&pg->log, pg->fe[i].v);
		if (k >= 0 && strcmp(pg_log_at(&pg->log, (uint32_t)k)->name, pg->fe[i].name) != 0)
			pg_logf(pg, PG_LOG_ERROR, "version %llx names %s here and %s on the "
						  "authoritative copy: a version was reused",
				(unsigned long long)pg->fe[i].v, pg_log_at(&pg->log, (uint32_t)k)->name,
				pg->fe[i].name);
		e = pg_log_put(&pg->log, pg->fe[i].v, pg->fe[i].op, pg->fe[i].name);
		rc = e == NULL ? -ENOMEM : pg_txn_put(t, e);
	}
	if (rc != 0)
		return rc;
	pg->info.lu = pg->auth_lu; /* the newest of ours after the fork are markers now */
	lc = pg->info.lc < fork ? pg->info.lc : fork;
	rc = pg_merge_own_missing(pg, lc);
	if (rc != 0)
		return rc;
	/* what we rolled back is ours until recovered: never "complete" past it */
	for (uint32_t i = 0; i < pg->log.n; i++) {
		const struct pg_entry *e = pg_log_at(&pg->log, i);
		uint64_t cap;

		if (e->v <= fork || e->op != PG_OP_ROLLBACK)
			continue;
		cap = pg_log_rollback_lc(&pg->log, e->name, e->v);
		if (lc > cap)
			lc = cap;
	}
	pg->info.lc = pg->missing.n == 0 ? pg->info.lu : lc;
	if (rolled > 0)
		pg_logf(pg, PG_LOG_INFO, "%u entries rolled back after v%llx", rolled,
			(unsigned long long)fork);
	t->info = true;
	return pg_persist(pg, t);
}

bool pg_merge_member_needs_log(const struct pg *pg, const struct pg_peer *p)
{
	const struct proto_pg *in = &p->info;

	if (in->flags & PROTO_PG_INFO_F_EMPTY)
		return false;
	/* its newest entry is not one of ours: it may have entries that never happened */
	if (in->last_update != pg->info.tail && !pg_log_has(&pg->log, in->last_update, NULL))
		return true;
	/* it misses objects: only its own log names them all (its rollback markers too) */
	return in->last_complete < in->last_update;
}

static int pg_peer_missing_add(struct pg *pg, struct pg_peer *p, const char *name)
{
	return pg_set_add(&p->missing, name, pg_merge_want(pg, name), 0);
}

/* Our entries after `from`: missing on p. */
static int pg_peer_missing_ours(struct pg *pg, struct pg_peer *p, uint64_t from)
{
	for (uint32_t i = 0; i < pg->log.n; i++) {
		const struct pg_entry *e = pg_log_at(&pg->log, i);
		int rc;

		if (e->v <= from || e->op == PG_OP_ROLLBACK)
			continue;
		rc = pg_peer_missing_add(pg, p, e->name);
		if (rc != 0)
			return rc;
	}
	return 0;
}

void pg_merge_member_plain(struct pg *pg, struct pg_peer *p)
{
	const struct proto_pg *in = &p->info;
	uint64_t from;

	p->fork = (in->flags & PROTO_PG_INFO_F_EMPTY) ? 0 : in->last_update;
	from = in->last_complete < p->fork ? in->last_complete : p->fork;
	pg_peer_missing_ours(pg, p, from);
}

static int pg_peer_rb_add(struct pg_peer *p, const struct pg_entry *e)
{
	if (p->nrb == p->caprb) {
		uint32_t cap = p->caprb ? p->caprb * 2 : 16;
		struct pg_entry *n = realloc(p->rb, cap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		p->rb = n;
		p->caprb = cap;
	}
	p->rb[p->nrb].name = strdup(e->name);
	if (p->rb[p->nrb].name == NULL)
		return -ENOMEM;
	p->rb[p->nrb].v = e->v;
	p->rb[p->nrb].op = PG_OP_ROLLBACK;
	p->nrb++;
	return 0;
}

void pg_merge_member_log(struct pg *pg, struct pg_peer *p)
{
	const struct proto_pg *in = &p->info;
	uint64_t fork = in->tail, from;

	for (uint32_t i = pg->nfe; i > 0; i--) {
		const struct pg_entry *f = &pg->fe[i - 1];

		if (f->op == PG_OP_ROLLBACK)
			continue;
		if (f->v <= pg->info.tail || pg_log_has(&pg->log, f->v, f->name)) {
			fork = f->v;
			break;
		}
	}
	p->fork = fork;
	from = in->last_complete < fork ? in->last_complete : fork;
	for (uint32_t i = 0; i < pg->nfe; i++) {
		const struct pg_entry *f = &pg->fe[i];

		if (f->v <= from)
			continue;
		/* its own entries after its complete point name what it misses (markers too) */
		pg_peer_missing_add(pg, p, f->name);
		if (f->v > fork && f->op != PG_OP_ROLLBACK) {
			p->divergent = true;
			pg_peer_rb_add(p, f);
		}
	}
	if (p->divergent)
		pg_logf(pg, PG_LOG_INFO, "osd.%d has %u entries after v%llx that never happened: "
					 "rolled back there", p->osd, p->nrb,
			(unsigned long long)fork);
	pg_peer_missing_ours(pg, p, fork);
}

/* ------------------------------------------------------------- activation */

struct pg_send_ctx {
	struct pg *pg;
	struct pg_peer *p;
	uint8_t *buf;
	size_t cap;
	struct proto_enc enc;
	uint32_t n, max;
	uint32_t total; /* entries sent: ACTIVATE says how many came before it */
};

static void pg_send_flush(struct pg_send_ctx *c)
{
	struct proto_pg r = pg_hdr(c->pg);

	if (c->n == 0)
		return;
	r.count = c->n;
	r.entries = c->buf;
	r.entries_len = (uint32_t)c->enc.off;
	pg_send(c->pg, c->p->osd, PROTO_PG_LOG, &r);
	proto_enc_init(&c->enc, c->buf, c->cap);
	c->n = 0;
}

static void pg_send_entry(struct pg_send_ctx *c, const struct pg_entry *e)
{
	struct proto_pg_log_entry le = {.version = e->v, .op = e->op};
	size_t before = c->enc.off;

	le.name_len = strlen(e->name);
	memcpy(le.name, e->name, le.name_len + 1);
	proto_pg_log_entry_put(&c->enc, &le);
	if (c->enc.err != 0 || c->n == c->max) {
		c->enc.off = before;
		c->enc.err = 0;
		pg_send_flush(c);
		proto_pg_log_entry_put(&c->enc, &le);
	}
	c->n++;
	c->total++;
}

void pg_merge_activate_member(struct pg *pg, struct pg_peer *p)
{
	struct proto_pg a = pg_hdr(pg);
	struct pg_send_ctx c = {pg, p};

	c.cap = pg->env->msg_bytes ? pg->env->msg_bytes : 65536;
	c.max = pg->env->max_chunk ? pg->env->max_chunk : PROTO_PG_ENTRIES_MAX;
	c.buf = malloc(c.cap);
	if (c.buf == NULL) {
		pg_logf(pg, PG_LOG_ERROR, "no memory to activate osd.%d", p->osd);
		return;
	}
	proto_enc_init(&c.enc, c.buf, c.cap);
	if (!p->backfill) {
		/* rollbacks first: the member drops them before appending ours */
		for (uint32_t i = 0; i < p->nrb; i++)
			pg_send_entry(&c, &p->rb[i]);
		for (uint32_t i = 0; i < pg->log.n; i++) {
			const struct pg_entry *e = pg_log_at(&pg->log, i);

			if (e->v > p->fork && e->op != PG_OP_ROLLBACK)
				pg_send_entry(&c, e);
		}
		a.last_complete = p->info.last_complete < p->fork ? p->info.last_complete : p->fork;
	} else {
		/*
		 * Rebuilt by a scan, but it keeps the whole log: if it ends up
		 * with the newest history, a copy complete up to our tail (not up
		 * to our head) is enough to rebuild the objects the log does not
		 * name.
		 */
		for (uint32_t i = 0; i < pg->log.n; i++) {
			const struct pg_entry *e = pg_log_at(&pg->log, i);

			if (e->op != PG_OP_ROLLBACK)
				pg_send_entry(&c, e);
		}
		a.flags = PROTO_PG_ACT_F_BACKFILL;
		a.last_complete = pg_merge_member_floor(pg);
		pg_set_clear(&p->missing);
	}
	pg_send_flush(&c);
	free(c.buf);
	a.last_update = pg->info.lu;
	a.tail = pg->info.tail;
	a.les = pg->same_since;
	a.count = c.total;
	if (a.last_complete > a.last_update)
		a.last_complete = a.last_update;
	pg_send(pg, p->osd, PROTO_PG_ACTIVATE, &a);
	/*
	 * Sent is not applied: a connection that fails now loses the message
	 * (PG messages are not resent), and a member that never applied it
	 * refuses this interval's records and cannot vouch for it later. Clean
	 * waits for its answer; without one the PG peers again (pg_tick).
	 */
	p->activated = true;
	p->act_ms = pg_now(pg);
	p->act_acked = pg->env->ops->acks_activate != NULL &&
		       pg->env->ops->acks_activate(pg->env->arg, p->osd) == 0;
	if (p->backfill)
		pg_logf(pg, PG_LOG_INFO, "osd.%d is rebuilt by backfill", p->osd);
}
