/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A copy that is not the primary (docs/recovery.md): a member answers a
 * primary's QUERY once its own transactions committed (and from then on
 * refuses ring records of older intervals: the fence), answers LOG_REQ
 * from its log, takes the entries and the ACTIVATE of the primary in one
 * transaction, becomes complete on RECOVERED; a stray tells the primary it
 * holds a copy (NOTIFY) and drops it on DELETE; any copy answers PULL
 * (only with the exact version asked for) and SCAN_REQ. Ring records
 * (pg_rec_prepare) and pushes (pg_push_accept) are checked here too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osd/pg/pg_int.h"

static void pg_member_answer(struct pg *pg, int32_t to, uint32_t epoch)
{
	struct proto_pg info;

	pg_info_msg(pg, &info);
	info.epoch = epoch; /* the asker's interval */
	pg_send(pg, to, PROTO_PG_INFO, &info);
}

void pg_act_reset(struct pg *pg)
{
	for (uint32_t i = 0; i < pg->nact; i++)
		free(pg->act_ent[i].name);
	pg->nact = 0;
	pg->act_epoch = 0;
}

void pg_member_query(struct pg *pg, const struct proto_pg *m)
{
	if (m->epoch < pg->fence)
		return; /* a query of an interval that already ended */
	pg->fence = m->epoch; /* from now on older ring records are refused */
	pg->stalled = false;  /* the primary learns what we hold and repairs it */
	if ((int32_t)m->from == pg->stray_primary) {
		pg->notify_heard = true;
		pg->notify_epoch = pg->info.pi.cur.first;
		pg->notify_ms = pg_now(pg);
	}
	pg_act_reset(pg);
	if (pg->tx_inflight == 0)
		return pg_member_answer(pg, (int32_t)m->from, m->epoch);
	if (pg->nq == sizeof(pg->q) / sizeof(pg->q[0]))
		pg->nq--; /* the oldest stay: a primary asks again anyway */
	pg->q[pg->nq].from = (int32_t)m->from;
	pg->q[pg->nq].epoch = m->epoch;
	pg->nq++;
}

/* Every transaction of the PG committed: queued answers go, a waiting primary peers. */
void pg_member_settled(struct pg *pg)
{
	for (unsigned int i = 0; i < pg->nq; i++)
		if (pg->q[i].epoch >= pg->fence)
			pg_member_answer(pg, pg->q[i].from, pg->q[i].epoch);
	pg->nq = 0;
	if (pg->notify_wait) {
		pg->notify_wait = false;
		if (!pg->primary && pg->nacting == 0 && pg->stray_primary >= 0)
			pg_stray_notify(pg, pg->stray_primary);
	}
	if (pg->primary && pg->phase == PG_PH_WAIT_TX)
		pg_peer_start(pg);
}

/* A DELETE that waited for our transactions, from the tick: not inside a store callback. */
void pg_member_delete_waiting(struct pg *pg)
{
	struct proto_pg d = {.from = (uint32_t)pg->delete_from, .epoch = pg->delete_epoch};

	if (!pg->delete_wait || pg->tx_inflight > 0)
		return;
	pg->delete_wait = false;
	pg_member_delete(pg, &d);
}

/*
 * LOG_REQ: our entries after m->after, as many as fit one LOG; rollback
 * markers too: they name objects we still have to be brought back to the
 * history (the primary marks them missing here; as the auth's log they
 * are ignored).
 */
void pg_member_logreq(struct pg *pg, const struct proto_pg *m)
{
	size_t cap = pg->env->msg_bytes ? pg->env->msg_bytes : 65536;
	uint8_t *buf = malloc(cap);
	struct proto_pg r = pg_hdr(pg);
	struct proto_enc enc;
	uint32_t n = 0, max = m->max;
	bool full = false;

	if (buf == NULL)
		return;
	proto_enc_init(&enc, buf, cap);
	for (uint32_t i = 0; i < pg->log.n; i++) {
		const struct pg_entry *e = pg_log_at(&pg->log, i);
		struct proto_pg_log_entry le = {.version = e->v, .op = e->op};
		size_t before = enc.off;

		if (e->v <= m->after)
			continue;
		if (n == max) {
			full = true;
			break;
		}
		le.name_len = strlen(e->name);
		memcpy(le.name, e->name, le.name_len + 1);
		proto_pg_log_entry_put(&enc, &le);
		if (enc.err != 0) {
			enc.off = before;
			enc.err = 0;
			full = true;
			break;
		}
		n++;
	}
	r.epoch = m->epoch;
	r.count = n;
	r.entries = buf;
	r.entries_len = (uint32_t)enc.off;
	r.flags = full ? 0 : PROTO_PG_F_LAST;
	pg_send(pg, (int32_t)m->from, PROTO_PG_LOG, &r);
	free(buf);
}

/* Entries the primary sends before ACTIVATE: kept until ACTIVATE applies them all at once. */
void pg_member_log(struct pg *pg, const struct proto_pg *m)
{
	static __thread struct proto_pg_log_entry e;
	size_t off = 0;

	if (m->epoch < pg->fence)
		return;
	if (m->epoch != pg->act_epoch) {
		pg_act_reset(pg);
		pg->act_epoch = m->epoch;
	}
	while (proto_pg_log_entry_next(m, &off, &e)) {
		if (pg->nact == pg->capact) {
			uint32_t cap = pg->capact ? pg->capact * 2 : 64;
			struct pg_entry *n = realloc(pg->act_ent, cap * sizeof(*n));

			if (n == NULL)
				goto nomem;
			pg->act_ent = n;
			pg->capact = cap;
		}
		pg->act_ent[pg->nact].name = strdup(e.name);
		if (pg->act_ent[pg->nact].name == NULL)
			goto nomem;
		pg->act_ent[pg->nact].v = e.version;
		pg->act_ent[pg->nact].op = e.op;
		pg->nact++;
	}
	return;
nomem:
	pg_logf(pg, PG_LOG_ERROR, "no memory for the primary's log entries");
	pg_act_reset(pg);
	pg->act_epoch = UINT32_MAX; /* this activation cannot be applied */
}

/*
 * Tell the primary we applied its ACTIVATE (queued behind our transaction:
 * the records that follow it are ordered after it here too). Only to a
 * primary that knows the flag; an older one would refuse the frame.
 */
static void pg_member_act_answer(struct pg *pg, const struct proto_pg *m)
{
	struct proto_pg r = pg_hdr(pg);

	if (pg->env->ops->acks_activate != NULL &&
	    pg->env->ops->acks_activate(pg->env->arg, (int32_t)m->from) != 1)
		return;
	r.epoch = m->epoch;
	r.flags = PROTO_PG_ACT_F_APPLIED;
	r.les = pg->info.les;
	r.last_update = pg->info.lu;
	r.tail = pg->info.tail;
	r.last_complete = pg->info.lc < pg->info.lu ? pg->info.lc : pg->info.lu;
	pg_send(pg, (int32_t)m->from, PROTO_PG_ACTIVATE, &r);
}

void pg_member_activate(struct pg *pg, const struct proto_pg *m)
{
	struct pg_txn *t;
	int rc = 0;

	if (m->epoch < pg->fence || pg->primary)
		return;
	if (pg->act_epoch == UINT32_MAX || (pg->nact > 0 && pg->act_epoch != m->epoch) ||
	    pg->nact != m->count) {
		/* applying it would leave a hole in our log: refuse records until asked again */
		pg_logf(pg, PG_LOG_WARN, "activation by osd.%u with %u of its %u log entries: "
					 "refused (the primary peers again)", m->from, pg->nact,
			m->count);
		pg_act_reset(pg);
		pg->stalled = true;
		return;
	}
	t = pg_txn_begin(pg);
	if (m->flags & PROTO_PG_ACT_F_BACKFILL) {
		/* rebuilt by a scan; our log becomes the primary's whole log */
		pg_log_clear(&pg->log);
		t->clear = true;
		for (uint32_t i = 0; rc == 0 && i < pg->nact; i++) {
			const struct pg_entry *a = &pg->act_ent[i];
			struct pg_entry *e = a->op == PG_OP_ROLLBACK
						 ? NULL
						 : pg_log_put(&pg->log, a->v, a->op, a->name);

			if (a->op != PG_OP_ROLLBACK)
				rc = e == NULL ? -ENOMEM : pg_txn_put(t, e);
		}
		pg->info.tail = m->tail;
		pg->info.lu = m->last_update;
		pg->info.lc = 0;
		pg->info.backfill = true;
		/* pg_merge_member_floor; 0 (none) from older primaries */
		pg->trim_floor = m->last_complete;
	} else {
		pg->trim_floor = 0;
		for (uint32_t i = 0; rc == 0 && i < pg->nact; i++) {
			const struct pg_entry *a = &pg->act_ent[i];
			struct pg_entry *e;
			int k = pg_log_find(&pg->log, a->v);

			if (a->op == PG_OP_ROLLBACK && k < 0)
				continue; /* nothing of ours to undo */
			if (a->op == PG_OP_ROLLBACK)
				e = pg_log_at(&pg->log, (uint32_t)k), e->op = PG_OP_ROLLBACK;
			else
				e = pg_log_put(&pg->log, a->v, a->op, a->name);
			rc = e == NULL ? -ENOMEM : pg_txn_put(t, e);
		}
		pg->info.lu = m->last_update;
		if (pg->info.lc > m->last_complete)
			pg->info.lc = m->last_complete;
		/* what we rolled back is ours until recovered: never "complete" past it */
		for (uint32_t i = 0; i < pg->nact; i++) {
			const struct pg_entry *a = &pg->act_ent[i];
			uint64_t cap;

			if (a->op != PG_OP_ROLLBACK || pg_log_find(&pg->log, a->v) < 0)
				continue;
			cap = pg_log_rollback_lc(&pg->log, a->name, a->v);
			if (pg->info.lc > cap)
				pg->info.lc = cap;
		}
		if (pg->info.tail > pg->info.lu)
			pg->info.tail = pg->info.lu;
	}
	pg->info.les = m->les;
	if (pg->info.since == 0 || pg->info.since > m->les)
		pg->info.since = m->les; /* the history up to les is the primary's, now ours */
	pg_pi_trim(&pg->info.pi, pg->info.les);
	pg->pi_gap = false;
	pg->pi_unsure = false;
	pg_act_reset(pg);
	t->info = true;
	if (rc == 0)
		rc = pg_persist(pg, t);
	if (rc != 0) {
		pg_logf(pg, PG_LOG_ERROR, "activation: %s; refusing this interval's writes",
			strerror(-rc));
		pg->stalled = true;
		return;
	}
	pg_member_act_answer(pg, m);
}

void pg_member_recovered(struct pg *pg, const struct proto_pg *m)
{
	if (m->epoch < pg->fence || pg->primary || pg->nacting == 0)
		return;
	pg->info.lc = pg->info.lu;
	pg->info.backfill = false;
	pg_persist_info(pg);
}

/* ----------------------------------------------------------------- strays */

void pg_stray_notify(struct pg *pg, int32_t primary)
{
	struct proto_pg n;

	/*
	 * A NOTIFY describes our copy as the store holds it, like an INFO
	 * answer: the primary records it as this copy's info (pg_peer_info)
	 * and may choose our log as the authoritative one. Sent while a
	 * transaction is in flight, it would name entries that a crash then
	 * loses: an old primary's op refused by the fence (never
	 * acknowledged) became the authoritative history, and no copy ever
	 * held the object at that version (unfound for ever, sim_pg seed
	 * 2203). It goes once they committed (pg_member_settled).
	 * Waiting cannot drop an acknowledged write: it only delays what the
	 * primary hears from a stray, as the INFO answer already waits, and
	 * an acknowledged write is on every member of its interval's store
	 * (the op's reply waits for every commit), so a member's committed
	 * log has it.
	 */
	if (pg->tx_inflight > 0) {
		pg->notify_wait = true;
		return;
	}
	pg_info_msg(pg, &n);
	/* our map's epoch: a primary that has not seen it yet waits for it (pg_msg) */
	n.epoch = pg->map_epoch ? pg->map_epoch : n.epoch;
	pg->notify_ms = pg_now(pg);
	pg_send(pg, primary, PROTO_PG_NOTIFY, &n);
}

/* DELETE on a stray: its copy of the PG (objects, log, info) goes. */
void pg_member_delete(struct pg *pg, const struct proto_pg *m)
{
	int rc;

	/*
	 * Only from the primary of an interval that began after we last left the
	 * acting set: an older DELETE may predate writes we took as a member
	 * since. (After a restart none from before it can still arrive: its
	 * connection died with us.)
	 */
	if (pg->nacting > 0 || pg->primary || (int32_t)m->from != pg->stray_primary ||
	    m->epoch < pg->left_epoch)
		return;
	pg->notify_heard = true;
	pg->notify_epoch = pg->info.pi.cur.first;
	pg->notify_ms = pg_now(pg);
	if (!pg_has_copy(pg)) {
		pg_stray_notify(pg, (int32_t)m->from); /* says EMPTY: the primary stops asking */
		return;
	}
	/*
	 * The removal lists the objects the store holds now: one whose record
	 * or push is still on its way to the disk would outlive it, a copy no
	 * log names (the stray objects osd_recovery_peerdown found). Our
	 * transactions commit first (a notify may have gone before them); the
	 * tick takes the DELETE up then (pg_member_delete_waiting).
	 */
	if (pg->tx_inflight > 0) {
		pg->delete_wait = true;
		pg->delete_from = (int32_t)m->from;
		pg->delete_epoch = m->epoch;
		return;
	}
	pg->destroying = true;
	pg->stray_primary = (int32_t)m->from;
	rc = pg->env->ops->destroy(pg->env->arg, pg);
	if (rc != 0) {
		pg_logf(pg, PG_LOG_ERROR, "removing the stray copy: %s", strerror(-rc));
		pg->destroying = false;
		return;
	}
	/*
	 * In memory the copy is gone at once: what is persisted after the
	 * removal (the info of a map, say) must describe the empty copy it
	 * follows, not the old one.
	 */
	pg_log_clear(&pg->log);
	memset(&pg->info, 0, sizeof(pg->info));
}

void pg_destroyed(struct pg *pg, int rc)
{
	pg_tick_want(pg);
	pg->destroying = false;
	if (rc != 0) {
		pg_logf(pg, PG_LOG_ERROR, "removing the stray copy: %s", strerror(-rc));
		return;
	}
	pg_logf(pg, PG_LOG_INFO, "stray copy removed");
	if (pg->stray_primary >= 0)
		pg_stray_notify(pg, pg->stray_primary);
}

/* ------------------------------------------------------------ pulls, scans */

void pg_member_pull(struct pg *pg, const struct proto_pg *m)
{
	struct pg_obj o;
	uint64_t want = m->last_update, have = 0, logv = 0;
	int rc;

	rc = pg->destroying ? -ENOENT : pg->env->ops->obj_stat(pg->env->arg, pg, m->name, 0, &o);
	if (rc == 0)
		have = o.version ? o.version : 1;
	else if (rc != -ENOENT)
		goto nak;
	/* only the exact version wanted (the auth's copy when the logs do not name it) */
	if (want != PG_V_ANY && have != want)
		goto nak;
	if (want == PG_V_ANY) {
		/*
		 * "Whatever you have" is only what our log says we have: a copy
		 * that misses the object's newest version (or a backfill copy)
		 * would hand out an older one as current, losing a write. The
		 * answer names the version our log has, for the puller to find.
		 */
		const struct pg_entry *e = pg_log_newest_of(&pg->log, m->name, UINT64_MAX);

		if (e != NULL && e->op != PROTO_OP_REMOVE && have != e->v) {
			logv = e->v;
			goto nak;
		}
		if (pg->info.backfill || (e != NULL && e->op == PROTO_OP_REMOVE && rc == 0))
			goto nak;
		/* what we hold is a write we rolled back and have not recovered yet */
		if (rc == 0 && pg_log_has_rollback(&pg->log, have, m->name))
			goto nak;
	}
	/*
	 * In the interval of the primary that asked: a stray's own fence may be
	 * older than the puller's, which would refuse the push as stale forever.
	 */
	if (pg->env->ops->push(pg->env->arg, pg, (int32_t)m->from, m->name, have, m->epoch) == 0)
		return;
nak: {
	struct proto_pg r = *m;

	r.flags = PROTO_PG_PULL_F_NAK | (logv ? PROTO_PG_PULL_F_LOGV : 0);
	r.last_update = logv ? logv : rc == 0 ? have : 0;
	r.count = 0;
	r.entries = NULL;
	r.entries_len = 0;
	pg_send(pg, (int32_t)m->from, PROTO_PG_PULL, &r);
}
}

/* The SCAN answer: objs[0..n) (as many as fit one message; then not last). */
static void pg_member_scan_send(struct pg *pg, int32_t to, uint32_t epoch,
				const struct pg_obj *objs, uint32_t n, bool last, unsigned int what)
{
	size_t cap = pg->env->msg_bytes ? pg->env->msg_bytes : 65536;
	uint8_t *buf = malloc(cap);
	struct proto_pg r = pg_hdr(pg);
	struct proto_enc enc;
	uint32_t put = 0;

	if (buf == NULL)
		return; /* the primary asks again */
	proto_enc_init(&enc, buf, cap);
	for (uint32_t i = 0; i < n; i++) {
		struct proto_pg_scan_entry e = {.version = objs[i].version, .size = objs[i].size,
						.crc = (what & PG_OBJ_DIGEST) ? objs[i].digest
									       : objs[i].crc};
		size_t before = enc.off;

		e.name_len = strlen(objs[i].name);
		memcpy(e.name, objs[i].name, e.name_len + 1);
		proto_pg_scan_entry_put(&enc, &e);
		if (enc.err != 0) {
			enc.off = before;
			enc.err = 0;
			last = false;
			break;
		}
		put++;
	}
	r.epoch = epoch;
	r.count = put;
	r.entries = buf;
	r.entries_len = (uint32_t)enc.off;
	r.flags = last ? PROTO_PG_F_LAST : 0;
	pg_send(pg, to, PROTO_PG_SCAN, &r);
	free(buf);
}

static void pg_member_scan_crcs_done(struct pg *pg, struct pg_crc_job *j)
{
	pg_member_scan_send(pg, j->to, j->epoch, j->objs, j->n, j->last, PG_OBJ_DEEP);
}

/*
 * SCAN_REQ on any copy: our objects after m->name, as many as fit one
 * SCAN. A deep one reads every object back first, through env obj_crc
 * (without blocking the OSD: the answer goes when the last crc is in).
 */
void pg_member_scan_req(struct pg *pg, const struct proto_pg *m)
{
	uint32_t max = m->max < PG_BF_BATCH * 4 ? m->max : PG_BF_BATCH * 4, n = 0;
	struct pg_obj *objs = calloc(max ? max : 1, sizeof(*objs));
	bool last = true;
	unsigned int what = 0;
	int rc;

	if (objs == NULL)
		return; /* the primary asks again */
	if (m->flags & PROTO_PG_SCAN_F_DEEP)
		what |= PG_OBJ_DEEP;
	if ((what & PG_OBJ_DEEP) && pg->scrub != NULL) {
		free(objs);
		return; /* we deep-scrub as primary ourselves: an asker of an older view */
	}
	if ((what & PG_OBJ_DEEP) && pg->crc != NULL && pg->crc->to == (int32_t)m->from &&
	    pg->crc->epoch == m->epoch && !strcmp(pg->crc->after, m->name)) {
		/* the primary asked again (every 10 s) while we still read: let the reads end */
		free(objs);
		return;
	}
	if (m->flags & PROTO_PG_SCAN_F_DIGEST)
		what |= PG_OBJ_DIGEST;
	rc = pg->env->ops->obj_list(pg->env->arg, pg, m->name, max, what & ~PG_OBJ_DEEP, objs, &n,
				    &last);
	if (rc != 0) {
		n = 0;
		last = false; /* asked again */
	}
	if ((what & PG_OBJ_DEEP) && n > 0) {
		pg_crc_start(pg, objs, n, pg_member_scan_crcs_done, (int32_t)m->from, m->epoch,
			     last);
		if (pg->crc != NULL) /* still reading: remember which request it answers */
			snprintf(pg->crc->after, sizeof(pg->crc->after), "%s", m->name);
		return;
	}
	pg_member_scan_send(pg, (int32_t)m->from, m->epoch, objs, n, last, what);
	free(objs);
}

/* ------------------------------------------------------------ ring records */

int pg_rec_prepare(struct pg *pg, uint32_t epoch, uint64_t v, uint64_t prev, uint16_t op,
		   const char *name, struct pg_txn **t_out)
{
	const struct pg_entry *last = pg_log_newest(&pg->log);
	uint64_t ours = last ? last->v : pg->info.tail;
	struct pg_txn *t;
	int rc;

	pg_tick_want(pg);
	if (epoch < pg->fence)
		return -ESTALE;
	if (pg->stalled || pg->destroying)
		return -EAGAIN;
	/*
	 * Only the records of the interval we were activated in: the primary
	 * takes writes once it sent ACTIVATE (it waits for our answer only to
	 * call the PG clean), and a connection that failed right after lost it
	 * (records are resent on the new one, PG messages are not). Taking the interval's writes without its les would leave a
	 * copy whose own peering finds it never was active (docs/recovery.md).
	 * Refused, the primary peers again and activates us anew.
	 */
	if (!pg->primary && pg->info.les != pg->same_since) {
		pg_logf(pg, PG_LOG_WARN, "record v%llx of an interval (since epoch %u) we were not "
					 "activated in (les %u): refusing the interval's records until "
					 "the primary peers again",
			(unsigned long long)v, pg->same_since, pg->info.les);
		pg->stalled = true;
		return -EAGAIN;
	}
	/* the entry before it must be our newest (a resent one we hold already is fine) */
	if (prev != ours && !pg_log_has(&pg->log, v, name)) {
		pg_logf(pg, PG_LOG_WARN, "record v%llx follows v%llx, our log ends at v%llx: one "
					 "is missing; refusing the interval's records until the "
					 "primary peers again",
			(unsigned long long)v, (unsigned long long)prev, (unsigned long long)ours);
		pg->stalled = true;
		return -EAGAIN;
	}
	t = pg_txn_begin(pg);
	rc = pg_log_append_tx(pg, v, op, name, t);
	if (rc != 0)
		return rc;
	t->token = ++pg->tx_token;
	pg->tx_inflight++;
	*t_out = t;
	return 0;
}

void pg_rec_cancel(struct pg *pg, uint64_t v, int rc)
{
	pg_tick_want(pg);
	pg_op_cancel(pg, v);
	if (rc != 0 && rc != -ESTALE && !pg->stalled) {
		/* later records would leave a hole in our log: none until the primary asks */
		pg_logf(pg, PG_LOG_ERROR, "a record (v%llx) failed here: %s; refusing the "
					  "interval's records until the primary peers again",
			(unsigned long long)v, strerror(-rc));
		pg->stalled = true;
	}
}

/*
 * A push brings an object to the state our log says it has (its newest
 * entry: that version, or absent after a remove); one that disagrees is
 * stale or a bug elsewhere, and is refused rather than applied.
 */
int pg_push_accept(struct pg *pg, uint32_t epoch, const char *name, uint64_t version)
{
	const struct pg_entry *e;

	pg_tick_want(pg);
	/* a copy outside the acting set takes no pushes (it would hold what no log names) */
	if (epoch < pg->fence || pg->destroying || (pg->nacting == 0 && !pg->primary))
		return -ESTALE;
	/*
	 * A member takes the primary's pushes only once activated by it: an
	 * activation it dropped (removing a stray copy then) left it with no
	 * log, and objects pushed now would be named by none.
	 */
	if (!pg->primary && pg->info.les != epoch)
		return -ENOTCONN;
	e = pg_log_newest_of(&pg->log, name, UINT64_MAX);
	if (e != NULL && (e->op == PROTO_OP_REMOVE ? version != 0 : version != e->v)) {
		pg_logf(pg, PG_LOG_ERROR, "refused a push of %s v%llx: our log says v%llx%s", name,
			(unsigned long long)version, (unsigned long long)e->v,
			e->op == PROTO_OP_REMOVE ? " (removed)" : "");
		return -ESTALE;
	}
	pg->tx_inflight++;
	return 0;
}

void pg_push_finished(struct pg *pg)
{
	pg_tick_want(pg);
	if (pg->tx_inflight > 0)
		pg->tx_inflight--;
	if (pg->tx_inflight == 0)
		pg_member_settled(pg);
}
