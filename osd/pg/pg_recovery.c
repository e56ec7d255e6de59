/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Recovery on an active primary (docs/recovery.md, "Recovery"): every
 * object a member misses is pushed from our copy, every object we miss is
 * pulled from a copy that holds exactly the version the log says (any copy
 * heard in this interval: the auth, members, strays; the source checks the
 * version and answers NAK when it has another), objects to remove are
 * removed; members the log cannot describe are backfilled by comparing
 * listings, and so is our own copy when it is too old. A client op on an
 * object still missing anywhere waits and moves it ahead (pg_obj_ready).
 * The PG is clean when nothing is missing anywhere; then strays are told
 * to drop their copies, until they say they did.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osd/pg/pg_int.h"

#define PG_SET_BUDGET	    0x10u /* this push/pull took a unit of the OSD's recovery budget */
#define PG_SET_TOMB_PENDING 0x20u /* right here already: leaves the set after the walk */

static bool pg_take_budget(struct pg *pg, struct pg_set_ent *e)
{
	if (e->flags & PG_SET_URGENT)
		return true; /* a client waits: outside the throttle */
	if (!pg->env->ops->budget(pg->env->arg, 1))
		return false;
	e->flags |= PG_SET_BUDGET;
	return true;
}

static void pg_give_budget(struct pg *pg, struct pg_set_ent *e)
{
	if (e->flags & PG_SET_BUDGET)
		pg->env->ops->budget(pg->env->arg, -1);
	e->flags &= ~(PG_SET_BUDGET | PG_SET_INFLIGHT);
}

static void pg_set_release(struct pg *pg, struct pg_set *s)
{
	struct pg_set_ent *e;
	uint32_t i = 0;

	while ((e = pg_set_next(s, &i)) != NULL)
		if (e->flags & PG_SET_INFLIGHT)
			pg_give_budget(pg, e);
}

void pg_recovery_start(struct pg *pg)
{
	uint64_t n = pg_missing_count(pg);

	if (n > 0)
		pg_logf(pg, PG_LOG_INFO, "recovering %llu objects", (unsigned long long)n);
}

uint64_t pg_missing_count(const struct pg *pg)
{
	uint64_t n = pg->missing.n;

	for (unsigned int i = 0; i < pg->np; i++)
		n += pg->p[i].acting ? pg->p[i].missing.n : 0;
	return n;
}

int pg_missing_each(const struct pg *pg, int (*cb)(void *arg, const char *name), void *arg)
{
	for (int i = -1; i < (int)pg->np; i++) {
		const struct pg_set *s = i < 0 ? &pg->missing : &pg->p[i].missing;
		struct pg_set_ent *e;
		uint32_t it = 0;
		int rc;

		if (i >= 0 && !pg->p[i].acting)
			continue;
		while ((e = pg_set_next(s, &it)) != NULL)
			if ((rc = cb(arg, e->name)) != 0)
				return rc;
	}
	return 0;
}

/* --------------------------------------------------------------- sources */

/*
 * Any copy may serve a version it holds: versions are unique, so an object
 * with the version wanted is the object wanted (the source checks it), also
 * on a copy being backfilled or one that misses other objects.
 */
static bool pg_source_ok(const struct pg *pg, const struct pg_peer *p, uint64_t want)
{
	const struct proto_pg *in = &p->info;

	if (!p->heard || !pg_osd_up(pg, p->osd) || (in->flags & PROTO_PG_INFO_F_EMPTY))
		return false;
	if (want == PG_V_ANY) /* what the log does not name: as the base copy holds it */
		return pg->base >= 0 && p == &pg->p[pg->base];
	return in->last_update >= want;
}

/*
 * The k-th candidate source of version `want`: the auth first, then complete
 * members, complete strays, and last the copies being backfilled.
 */
static int pg_source(const struct pg *pg, uint64_t want, uint32_t k)
{
	uint32_t n = 0;

	if (want == PG_V_ANY)
		return k == 0 && pg->base >= 0 && pg_source_ok(pg, &pg->p[pg->base], want) ? pg->base
											      : -1;
	if (pg->auth >= 0 && pg_source_ok(pg, &pg->p[pg->auth], want) && n++ == k)
		return pg->auth;
	for (int pass = 0; pass < 3; pass++) {
		for (unsigned int i = 0; i < pg->np; i++) {
			const struct pg_peer *p = &pg->p[i];
			bool bf = (p->info.flags & PROTO_PG_INFO_F_BACKFILL) != 0;

			if ((int)i == pg->auth || (pass == 2) != bf ||
			    (pass < 2 && p->acting != (pass == 0)))
				continue;
			if (pg_source_ok(pg, p, want) && n++ == k)
				return (int)i;
		}
	}
	return -1;
}

/* The capacity rule for recovery writing into osd (e: the object, NULL: a backfill batch). */
static bool pg_space_ok(struct pg *pg, int32_t osd, const struct pg_set_ent *e)
{
	if (pg->env->ops->space_ok == NULL ||
	    pg->env->ops->space_ok(pg->env->arg, pg, osd, e && (e->flags & PG_SET_URGENT)))
		return true;
	pg->space_wait = true; /* the PG shows backfill_toofull (pg_update_state) */
	pg->toofull_osd = osd;
	return false;
}

/* ----------------------------------------------------------------- pulls */

static void pg_pull_one(struct pg *pg, struct pg_set_ent *e, uint64_t now, uint32_t *unfound)
{
	struct pg_txn *t;
	struct proto_pg m;
	int src;

	if (e->flags & PG_SET_INFLIGHT) {
		/*
		 * src < 0: a local removal, whose stamp is its transaction's token.
		 * A pull's entry can be turned into a removal while it waits
		 * (pg_set_add of version 0): it stays a pull (src, a time in
		 * stamp) until its answer or its retry time, then removes.
		 */
		if ((e->version == 0 && e->src < 0) || now - e->stamp < PG_PULL_RETRY_MS)
			return; /* a local removal commits, or a pull waits for its answer */
		pg_give_budget(pg, e); /* no answer: the next source */
		e->tries++;
	}
	/*
	 * The log says it may be stale here; it may well be right already.
	 * Asked once per wanted version (PG_SET_CHECKED, cleared when the
	 * version changes): only this recovery changes a missing object here
	 * (a client op on it waits), and a step runs after every object.
	 */
	if (!(e->flags & (PG_SET_INFLIGHT | PG_SET_CHECKED)) && e->version != PG_V_ANY) {
		struct pg_obj o;
		int rc = pg->env->ops->obj_stat(pg->env->arg, pg, e->name, 0, &o);

		if ((rc == 0 && e->version != 0 && o.version == e->version) ||
		    (rc == -ENOENT && e->version == 0)) {
			e->flags |= PG_SET_TOMB_PENDING;
			return;
		}
		if (rc == 0 || rc == -ENOENT)
			e->flags |= PG_SET_CHECKED;
	}
	if (e->version == 0) {
		/* the object must not exist: removed here, no copy needed */
		if (!pg_take_budget(pg, e))
			return;
		t = pg_txn_begin(pg);
		if (pg_txn_remove(t, e->name) != 0 || pg_persist(pg, t) != 0) {
			pg_give_budget(pg, e);
			return;
		}
		e->flags |= PG_SET_INFLIGHT;
		e->src = -1;	     /* no source: ours */
		e->stamp = t->token; /* pg_committed(token) ends it */
		return;
	}
	src = pg_source(pg, e->version, e->tries);
	if (src < 0) {
		(*unfound)++;
		if (e->tries > 0 && now - e->stamp >= PG_UNFOUND_RETRY_MS) {
			e->tries = 0; /* every source said no: ask them again later */
			e->stamp = now;
		}
		return;
	}
	if (!pg_space_ok(pg, pg->env->self, e))
		return; /* a pull writes our own store */
	if (!pg_take_budget(pg, e))
		return;
	m = pg_hdr(pg);
	m.name_len = strlen(e->name);
	memcpy(m.name, e->name, m.name_len + 1);
	m.last_update = e->version;
	pg_send(pg, pg->p[src].osd, PROTO_PG_PULL, &m);
	e->src = pg->p[src].osd;
	e->flags |= PG_SET_INFLIGHT;
	e->stamp = now;
}

/* ---------------------------------------------------------------- flags */

/*
 * Misplaced only (Ceph's remapped, not degraded): nothing to do but
 * backfill new members, while the copies we hold, the complete members and
 * the complete strays (the copies the new members replace) are `size` at
 * least. norebalance holds the backfill of such a PG only.
 */
static bool pg_misplaced_only(const struct pg *pg)
{
	unsigned int complete = 1; /* ours */

	if (pg->missing.n > 0 || pg->self_backfill || pg->nacting < pg->size)
		return false;
	for (unsigned int i = 0; i < pg->np; i++) {
		const struct pg_peer *p = &pg->p[i];

		if (p->acting) {
			if (!p->activated || (!p->backfill && p->missing.n > 0))
				return false; /* log-based recovery: degraded */
			complete += !p->backfill || (p->bf_done && p->missing.n == 0);
		} else if (p->heard && pg_osd_up(pg, p->osd) &&
			   !(p->info.flags & (PROTO_PG_INFO_F_EMPTY | PROTO_PG_INFO_F_BACKFILL)) &&
			   p->info.last_update >= pg->info.lu) {
			complete++;
		}
	}
	return complete >= pg->size;
}

/*
 * Which kinds of this PG's background recovery the flags hold now:
 * PG_PAUSE_RECOVERY for log-based recovery, PG_PAUSE_BACKFILL for
 * backfill (norebalance counts as nobackfill for a PG only misplaced).
 */
static uint32_t pg_recovery_paused(struct pg *pg)
{
	uint32_t f = pg->env->ops->paused != NULL ? pg->env->ops->paused(pg->env->arg, pg) : 0;
	uint32_t held = f & (PG_PAUSE_RECOVERY | PG_PAUSE_BACKFILL);

	if ((f & PG_PAUSE_REBALANCE) && !(held & PG_PAUSE_BACKFILL) && pg_misplaced_only(pg))
		held |= PG_PAUSE_BACKFILL | PG_PAUSE_REBALANCE;
	return held;
}

/* Is the work on p (NULL: ourselves) backfill or log-based recovery, and is it held? */
static bool pg_held(const struct pg *pg, const struct pg_peer *p, uint32_t held)
{
	bool bf = p != NULL ? p->backfill : pg->self_backfill;

	return (held & (bf ? PG_PAUSE_BACKFILL : PG_PAUSE_RECOVERY)) != 0;
}

static const char *pg_held_str(uint32_t held)
{
	if (held & PG_PAUSE_REBALANCE)
		return "backfill held: norebalance is set and the PG is only misplaced";
	if (held == (PG_PAUSE_RECOVERY | PG_PAUSE_BACKFILL))
		return "recovery and backfill held: norecover and nobackfill are set";
	if (held & PG_PAUSE_RECOVERY)
		return "recovery held: norecover is set (objects a client waits for still go)";
	if (held & PG_PAUSE_BACKFILL)
		return "backfill held: nobackfill is set";
	return "recovery goes on: the flags that held it are unset";
}

static void pg_recovery_pulls(struct pg *pg, bool urgent_only, uint64_t now)
{
	struct pg_set_ent *e;
	uint32_t i = 0, unfound = 0;

	bool resolved = false;

	while ((e = pg_set_next(&pg->missing, &i)) != NULL)
		if (!urgent_only || (e->flags & PG_SET_URGENT))
			pg_pull_one(pg, e, now, &unfound);
	/* the ones already right here leave the set (not while iterating it) */
	for (i = 0; (e = pg_set_next(&pg->missing, &i)) != NULL;) {
		if (e->flags & PG_SET_TOMB_PENDING) {
			pg_set_del(&pg->missing, e->name);
			resolved = true;
		}
	}
	if (resolved)
		pg->env->ops->kick(pg->env->arg, pg);
	if (urgent_only)
		return;
	if (unfound != pg->unfound) {
		if (unfound > 0)
			pg_logf(pg, PG_LOG_WARN, "%u objects unfound: no copy heard from holds the "
						 "version they need; waiting for one", unfound);
		else if (pg->unfound > 0)
			pg_logf(pg, PG_LOG_INFO, "unfound objects have a source again");
		pg->unfound = unfound;
	}
}

/* A local removal of ours (version 0) committed. */
static void pg_recovery_removed(struct pg *pg, uint64_t token)
{
	struct pg_set_ent *e;
	uint32_t i = 0;

	while ((e = pg_set_next(&pg->missing, &i)) != NULL) {
		/* a pull turned removal has a time in stamp: never taken for a token */
		if (e->version == 0 && (e->flags & PG_SET_INFLIGHT) && e->src < 0 &&
		    e->stamp == token) {
			pg->recover_due |= (e->flags & PG_SET_BUDGET) != 0;
			pg_give_budget(pg, e);
			pg_set_del(&pg->missing, e->name);
			pg->env->ops->kick(pg->env->arg, pg);
		}
	}
}

/*
 * The base changed (pg_merge_base_again): pulls "as the base holds it" start
 * over from the new one, instead of waiting for the old one's answer and
 * then counting as unfound until PG_UNFOUND_RETRY_MS.
 */
void pg_recovery_base_changed(struct pg *pg)
{
	struct pg_set_ent *e;
	uint32_t i = 0;

	while ((e = pg_set_next(&pg->missing, &i)) != NULL) {
		if (e->version != PG_V_ANY)
			continue;
		if (e->flags & PG_SET_INFLIGHT)
			pg_give_budget(pg, e);
		e->tries = 0;
	}
}

void pg_recovery_pull_answer(struct pg *pg, const struct proto_pg *m)
{
	struct pg_set_ent *e = pg_set_find(&pg->missing, m->name);

	/*
	 * Only the source asked last answers the pull in flight: a late NAK
	 * from one asked before (the base changed, or it was slow past
	 * PG_PULL_RETRY_MS) would count against the new source.
	 */
	if (e == NULL || !(e->flags & PG_SET_INFLIGHT) || m->epoch != pg->same_since ||
	    (int32_t)m->from != e->src)
		return;
	pg_give_budget(pg, e);
	e->tries++;
	e->stamp = pg_now(pg);
	if ((m->flags & PROTO_PG_PULL_F_LOGV) && e->version == PG_V_ANY && m->last_update != 0) {
		/* the base copy's log names the version it misses: that one is wanted */
		pg_logf(pg, PG_LOG_INFO, "%s: osd.%u names v%llx, which it misses; looking for it",
			m->name, m->from, (unsigned long long)m->last_update);
		e->version = m->last_update;
		e->flags &= ~PG_SET_CHECKED;
		e->tries = 0;
	}
}

void pg_obj_arrived(struct pg *pg, const char *name, uint64_t version)
{
	struct pg_set_ent *e;

	pg_tick_want(pg);
	if (!pg->primary)
		return;
	e = pg_set_find(&pg->missing, name);
	if (e == NULL)
		return;
	if (e->version != PG_V_ANY && e->version != version) {
		/* an older push overtaken by the log: ask again */
		if (e->flags & PG_SET_INFLIGHT)
			pg_give_budget(pg, e);
		return;
	}
	pg->recover_due |= (e->flags & PG_SET_BUDGET) != 0; /* freed: the next object now */
	if (e->flags & PG_SET_INFLIGHT)
		pg_give_budget(pg, e);
	pg_set_del(&pg->missing, name);
	pg->env->ops->kick(pg->env->arg, pg);
}

/* ----------------------------------------------------------------- pushes */

/* Is our own copy of name known to be right (not missing, not awaiting our own backfill)? */
static bool pg_own_ok(const struct pg *pg, const char *name)
{
	const struct pg_peer *a = pg->self_backfill && pg->base >= 0 ? &pg->p[pg->base] : NULL;

	if (pg_set_find(&pg->missing, name) != NULL)
		return false;
	return a == NULL || a->bf_done || (a->bf_pos != NULL && strcmp(name, a->bf_pos) <= 0);
}

static void pg_recovery_pushes(struct pg *pg, struct pg_peer *p, bool urgent_only, uint64_t now)
{
	struct pg_set_ent *e;
	uint32_t i = 0;

	while ((e = pg_set_next(&p->missing, &i)) != NULL) {
		struct pg_obj o;
		uint64_t v;
		int rc;

		if (e->flags & PG_SET_INFLIGHT) {
			if (now - e->stamp < PG_PUSH_RETRY_MS)
				continue;
			pg_give_budget(pg, e); /* lost: again */
		}
		if (urgent_only && !(e->flags & PG_SET_URGENT))
			continue;
		/* our own copy first, and never under a client write in flight */
		if (!pg_own_ok(pg, e->name) || pg->env->ops->obj_busy(pg->env->arg, pg, e->name))
			continue;
		rc = pg->env->ops->obj_stat(pg->env->arg, pg, e->name, 0, &o);
		if (rc != 0 && rc != -ENOENT)
			continue;
		v = rc == 0 ? (o.version ? o.version : 1) : 0;
		if (v != 0 && !pg_space_ok(pg, p->osd, e))
			continue; /* a removal frees space: it goes */
		if (!pg_take_budget(pg, e))
			return;
		if (pg->env->ops->push(pg->env->arg, pg, p->osd, e->name, v, pg->same_since) != 0) {
			pg_give_budget(pg, e);
			continue;
		}
		e->flags |= PG_SET_INFLIGHT;
		e->stamp = now;
	}
}

void pg_push_done(struct pg *pg, int32_t to, const char *name, int rc)
{
	int i = pg_peer_index(pg, to);
	struct pg_set_ent *e;
	bool freed;

	pg_tick_want(pg);
	if (!pg->primary || i < 0)
		return;
	e = pg_set_find(&pg->p[i].missing, name);
	if (e == NULL || !(e->flags & PG_SET_INFLIGHT))
		return;
	freed = (e->flags & PG_SET_BUDGET) != 0;
	pg_give_budget(pg, e);
	if (rc == -ENOTCONN && pg->p[i].acting && pg->phase == PG_PH_ACTIVE) {
		if (!pg->restart_wanted)
			pg_logf(pg, PG_LOG_WARN, "osd.%d was not activated in this interval (it "
						 "was removing a stray copy): peering again", to);
		pg->restart_wanted = true;
		pg->restart_ms = pg_now(pg);
		pg_update_state(pg);
		return;
	}
	if (rc != 0) {
		pg_logf(pg, PG_LOG_WARN, "push of %s to osd.%d: %s (again later)", name, to,
			strerror(rc < 0 ? -rc : rc));
		return;
	}
	pg_set_del(&pg->p[i].missing, name);
	pg->p[i].pushed++;
	pg->recover_due |= freed; /* the budget goes to the next object now */
	pg->env->ops->kick(pg->env->arg, pg);
}

void pg_recovery_kicked(struct pg *pg)
{
	if (!pg->recover_due)
		return; /* nothing changed: no tick wanted either */
	pg_tick_want(pg);
	pg->recover_due = false;
	/* what pg_tick checks before it runs the step */
	if (!pg->destroying && pg->primary && pg->phase == PG_PH_ACTIVE && !pg->restart_wanted)
		pg_recovery_tick(pg);
}

/* ----------------------------------------------------------------- backfill */

int pg_obj_range(struct pg *pg, const char *pos, const char *hi, unsigned int what,
		 struct pg_obj **out, uint32_t *n_out)
{
	char after[PROTO_OBJ_NAME_MAX + 1];
	struct pg_obj *loc = NULL;
	uint32_t n = 0, cap = 0;
	bool last = false;

	snprintf(after, sizeof(after), "%s", pos ? pos : "");
	while (!last) {
		uint32_t got = 0;

		if (n + PG_BF_BATCH > cap) {
			uint32_t c = cap ? cap * 2 : PG_BF_BATCH * 2;
			struct pg_obj *nb = realloc(loc, c * sizeof(*nb));

			if (nb == NULL) {
				free(loc);
				return -ENOMEM;
			}
			loc = nb;
			cap = c;
		}
		if (pg->env->ops->obj_list(pg->env->arg, pg, after, PG_BF_BATCH, what, loc + n, &got,
					   &last) != 0) {
			free(loc);
			return -EIO;
		}
		for (uint32_t j = 0; j < got; j++) {
			/* the j-th new one is at loc[n]: each kept one moves n on */
			if (hi != NULL && strcmp(loc[n].name, hi) > 0) {
				last = true;
				break;
			}
			n++;
		}
		if (got == 0 || n == 0)
			break;
		snprintf(after, sizeof(after), "%s", loc[n - 1].name);
	}
	*out = loc;
	*n_out = n;
	return 0;
}

static struct pg_peer *pg_bf_peer(struct pg *pg, bool *self)
{
	*self = pg->self_backfill && pg->base >= 0;
	return *self ? &pg->p[pg->base] : NULL;
}

/* One scanned batch of p's objects against ours: what differs goes to `dst`. */
static void pg_bf_merge(struct pg *pg, struct pg_peer *p, bool self)
{
	const char *hi = p->bf_remote_last || p->bf_nremote == 0
			     ? NULL
			     : p->bf_remote[p->bf_nremote - 1].name;
	struct pg_set *dst = self ? &pg->missing : &p->missing;
	struct pg_obj *loc = NULL;
	uint32_t nloc = 0, i = 0, k = 0;

	if (pg_obj_range(pg, p->bf_pos, hi, 0, &loc, &nloc) != 0)
		return; /* tried again next tick */
	while (i < nloc || k < p->bf_nremote) {
		int cmp = i == nloc		 ? 1
			  : k == p->bf_nremote ? -1
					       : strcmp(loc[i].name, p->bf_remote[k].name);
		const struct pg_obj *l = cmp <= 0 ? &loc[i] : NULL;
		const struct pg_obj *r = cmp >= 0 ? &p->bf_remote[k] : NULL;
		const char *name = l ? l->name : r->name;

		if (self) {
			/*
			 * Our own copy against the auth's: what the log names is what it
			 * must be (the auth may miss it itself); older objects are as the
			 * auth holds them.
			 */
			uint64_t want = pg_merge_want(pg, name);

			if (want == PG_V_ANY)
				want = r ? r->version : 0;
			if (l ? l->version != want : want != 0) {
				pg_logf(pg, PG_LOG_DEBUG, "our %s is v%llx, wanted v%llx", name,
					(unsigned long long)(l ? l->version : 0),
					(unsigned long long)want);
				pg_set_add(dst, name, want, 0);
			}
		} else if (l == NULL || r == NULL || l->version != r->version ||
			   l->size != r->size || pg_set_find(&pg->missing, name)) {
			/* equal to ours proves nothing while ours is still to be recovered */
			pg_set_add(dst, name, l ? l->version : 0, 0);
		}
		i += l != NULL;
		k += r != NULL;
	}
	/* what we still recover ourselves in this range goes to the member after us */
	if (!self) {
		struct pg_set_ent *e;
		uint32_t it = 0;

		while ((e = pg_set_next(&pg->missing, &it)) != NULL)
			if ((p->bf_pos == NULL || strcmp(e->name, p->bf_pos) > 0) &&
			    (hi == NULL || strcmp(e->name, hi) <= 0))
				pg_set_add(dst, e->name, e->version, 0);
	}
	free(p->bf_pos);
	p->bf_pos = hi ? strdup(hi) : NULL;
	if (hi == NULL) {
		p->bf_done = true;
		pg_logf(pg, PG_LOG_INFO, "backfill scan of osd.%d finished%s", p->osd,
			self ? " (our own copy)" : "");
	}
	free(p->bf_remote);
	p->bf_remote = NULL;
	p->bf_nremote = 0;
	p->bf_remote_last = false;
	free(loc);
}

static void pg_bf_step(struct pg *pg, struct pg_peer *p, bool self, uint64_t now)
{
	struct proto_pg q;

	if (p->bf_done)
		return;
	/* a member is compared with our copy: only once ours was compared with the auth's */
	if (!self && pg->self_backfill && pg->base >= 0 && !pg->p[pg->base].bf_done)
		return;
	if (p->bf_remote != NULL)
		return pg_bf_merge(pg, p, self);
	if ((self ? pg->missing.n : p->missing.n) > PG_BF_QUEUE)
		return; /* let the copies catch up first */
	if (p->bf_scan_inflight && now - p->bf_scan_ms < PG_BF_RESEND_MS)
		return;
	if (!pg_space_ok(pg, self ? pg->env->self : p->osd, NULL))
		return; /* no further batches for a target past its space limit */
	q = pg_hdr(pg);
	q.max = PG_BF_BATCH;
	if (p->bf_pos) {
		q.name_len = strlen(p->bf_pos);
		memcpy(q.name, p->bf_pos, q.name_len + 1);
	}
	pg_send(pg, p->osd, PROTO_PG_SCAN_REQ, &q);
	p->bf_scan_inflight = true;
	p->bf_scan_ms = now;
}

void pg_recovery_scan(struct pg *pg, const struct proto_pg *m)
{
	static __thread struct proto_pg_scan_entry e;
	int i = pg_peer_index(pg, (int32_t)m->from);
	struct pg_peer *p;
	size_t off = 0;

	if (i < 0 || m->epoch != pg->same_since || pg->phase != PG_PH_ACTIVE)
		return;
	p = &pg->p[i];
	if (!p->bf_scan_inflight)
		return;
	p->bf_scan_inflight = false;
	free(p->bf_remote);
	p->bf_remote = calloc(m->count ? m->count : 1, sizeof(*p->bf_remote));
	if (p->bf_remote == NULL)
		return;
	p->bf_nremote = 0;
	while (p->bf_nremote < m->count && proto_pg_scan_entry_next(m, &off, &e)) {
		struct pg_obj *o = &p->bf_remote[p->bf_nremote++];

		memcpy(o->name, e.name, e.name_len + 1);
		o->version = e.version;
		o->size = e.size;
		o->crc = e.crc;
	}
	p->bf_remote_last = (m->flags & PROTO_PG_F_LAST) != 0;
	pg_bf_step(pg, p, i == pg->base && pg->self_backfill, pg_now(pg));
}

/*
 * A client waits for an object of a missing set: it goes first, and now
 * (the kick asked for here runs the step, pg_recovery_kicked); only the
 * first time, so a kick that finds the op still waiting does not run the
 * step again. (An object a backfill has not reached is added urgent each
 * time its op is checked, until the scan passes it; those wait for the
 * tick, or each check would copy it again at once.)
 */
static void pg_obj_urgent(struct pg *pg, struct pg_set_ent *e)
{
	if (!(e->flags & PG_SET_URGENT) && !pg->recover_due) {
		pg->recover_due = true;
		pg->env->ops->kick(pg->env->arg, pg);
	}
	e->flags |= PG_SET_URGENT;
}

bool pg_obj_ready(struct pg *pg, const char *name)
{
	struct pg_set_ent *e;
	bool ready = true, self;
	struct pg_peer *a = pg_bf_peer(pg, &self);

	pg_tick_want(pg);
	if (!pg->primary)
		return true;
	if ((e = pg_set_find(&pg->missing, name)) != NULL) {
		pg_obj_urgent(pg, e);
		ready = false;
	} else if (self && !a->bf_done && (a->bf_pos == NULL || strcmp(name, a->bf_pos) > 0)) {
		/* not compared yet: what the log says, or the auth's copy, whatever it is */
		pg_set_add(&pg->missing, name, pg_merge_want(pg, name), PG_SET_URGENT);
		ready = false;
	}
	for (unsigned int i = 0; i < pg->np; i++) {
		struct pg_peer *p = &pg->p[i];

		if (!p->acting || !p->activated)
			continue;
		if ((e = pg_set_find(&p->missing, name)) != NULL) {
			pg_obj_urgent(pg, e);
			ready = false;
		} else if (p->backfill && !p->bf_done &&
			   (p->bf_pos == NULL || strcmp(name, p->bf_pos) > 0)) {
			/* not backfilled yet: copy it now, then the op goes to every member */
			pg_set_add(&p->missing, name, 0, PG_SET_URGENT);
			ready = false;
		}
	}
	return ready;
}

/* --------------------------------------------------------------- progress */

bool pg_recovery_done(const struct pg *pg)
{
	if (pg->missing.n > 0 || pg->self_backfill)
		return false;
	for (unsigned int i = 0; i < pg->np; i++) {
		const struct pg_peer *p = &pg->p[i];

		if (p->acting && (p->missing.n > 0 || !p->activated || !p->act_acked ||
				  (p->backfill && !p->bf_done)))
			return false;
	}
	return true;
}

static void pg_recovery_member_done(struct pg *pg, struct pg_peer *p)
{
	struct proto_pg m;

	if (p->recovered_sent || p->missing.n > 0 || !p->activated || !p->act_acked ||
	    (p->backfill && !p->bf_done))
		return;
	m = pg_hdr(pg);
	m.last_complete = pg->info.lu;
	pg_send(pg, p->osd, PROTO_PG_RECOVERED, &m);
	p->recovered_sent = true;
	if (p->pushed)
		pg_logf(pg, PG_LOG_INFO, "osd.%d recovered (%u objects)", p->osd, p->pushed);
}

static void pg_recovery_self_done(struct pg *pg)
{
	bool self;
	struct pg_peer *a = pg_bf_peer(pg, &self);

	if (pg->missing.n > 0 || (self && !a->bf_done))
		return;
	if (pg->info.lc >= pg->info.lu && !pg->info.backfill && !pg->self_backfill)
		return;
	pg->info.lc = pg->info.lu;
	pg->info.backfill = false;
	pg->self_backfill = false;
	pg_persist_info(pg);
	pg_logf(pg, PG_LOG_INFO, "primary copy recovered");
}

void pg_recovery_tick(struct pg *pg)
{
	uint64_t now = pg_now(pg);
	bool self;
	struct pg_peer *a = pg_bf_peer(pg, &self);
	uint32_t held = pg_recovery_paused(pg);

	pg->space_wait = false;
	if (pg->missing.n > 0)
		pg_merge_base_again(pg); /* objects "as the base holds them" need one up */
	/*
	 * What a client waits for first, outside the throttle and the flags;
	 * then the rest, unless a flag holds it (the set entries stay: they go
	 * on from where they were once the flag is unset).
	 */
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 0 || !pg_held(pg, NULL, held))
			pg_recovery_pulls(pg, pass == 0, now);
		for (unsigned int i = 0; i < pg->np; i++)
			if (pg->p[i].acting && pg->p[i].activated &&
			    (pass == 0 || !pg_held(pg, &pg->p[i], held)))
				pg_recovery_pushes(pg, &pg->p[i], pass == 0, now);
	}
	for (unsigned int i = 0; i < pg->np; i++) {
		struct pg_peer *p = &pg->p[i];

		if (!p->acting || !p->activated)
			continue;
		if (p->backfill && !(held & PG_PAUSE_BACKFILL))
			pg_bf_step(pg, p, false, now);
		pg_recovery_member_done(pg, p);
	}
	if (self && !(held & PG_PAUSE_BACKFILL))
		pg_bf_step(pg, a, true, now);
	if (held != pg->paused && !pg_recovery_done(pg))
		pg_logf(pg, PG_LOG_INFO, "%s", pg_held_str(held));
	pg->paused = held;
	pg_recovery_self_done(pg);
	if (pg->space_wait != pg->toofull)
		pg_logf(pg, pg->space_wait ? PG_LOG_WARN : PG_LOG_INFO,
			pg->space_wait ? "recovery waits: osd.%d is past its backfillfull ratio"
				       : "recovery goes on: osd.%d has room again",
			pg->toofull_osd);
	pg->toofull = pg->space_wait;
	pg_update_state(pg);
}

/* Clean: every copy not in the acting set is told to drop its copy, until it says so. */
void pg_recovery_strays(struct pg *pg)
{
	uint64_t now = pg_now(pg);

	if (!(pg->state & PROTO_PGS_CLEAN))
		return;
	for (unsigned int i = 0; i < pg->np; i++) {
		struct pg_peer *p = &pg->p[i];
		struct proto_pg d = pg_hdr(pg);

		if (p->acting || !p->heard || (p->info.flags & PROTO_PG_INFO_F_EMPTY) ||
		    !pg_osd_up(pg, p->osd))
			continue;
		if (p->stray_delete_sent && now - p->stray_delete_ms < PG_DELETE_RESEND_MS)
			continue;
		if (!p->stray_delete_sent)
			pg_logf(pg, PG_LOG_INFO, "clean; osd.%d removes its old copy", p->osd);
		p->stray_delete_sent = true;
		p->stray_delete_ms = now;
		pg_send(pg, p->osd, PROTO_PG_DELETE, &d);
	}
}

/* The interval ended or peering restarts: what was in flight gives its budget back. */
void pg_recovery_release(struct pg *pg)
{
	pg_set_release(pg, &pg->missing);
	for (unsigned int i = 0; i < pg->np; i++)
		pg_set_release(pg, &pg->p[i].missing);
}

void pg_committed(struct pg *pg, uint64_t token)
{
	pg_tick_want(pg);
	if (pg->tx_inflight > 0)
		pg->tx_inflight--;
	if (pg->primary && pg->missing.n > 0)
		pg_recovery_removed(pg, token);
	if (pg->tx_inflight == 0)
		pg_member_settled(pg);
}
