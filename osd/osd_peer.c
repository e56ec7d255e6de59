/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Peering (docs/recovery.md, "Peering"). When a PG's acting set changes,
 * its primary stops ordering writes, waits for its own transactions of the
 * old interval to commit, asks every up OSD for its copy's info (QUERY ->
 * INFO; a member answers only once its own transactions committed, and
 * from then on refuses ring records of older intervals), picks the
 * authoritative history (the newest last_update, a complete copy before
 * an incomplete one, itself on a tie), fetches the log entries it lacks
 * (LOG_REQ -> LOG), rolls back entries of its own that the authoritative
 * log does not have, fetches the log of a member whose newest entry is
 * unknown (divergent), then sends each member the entries it lacks and
 * ACTIVATE, and serves I/O. Recovery (osd_recovery.c) then pushes what the
 * members miss and pulls what it misses itself.
 *
 * This file: intervals, the primary's GetInfo / choice / activation, the
 * message dispatch and the tick. osd_peer_log.c: fetching and merging
 * logs, the entries sent to members. osd_peer_member.c: what a member or a
 * stray does (answers, appends, activation, deletion of a stray copy).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd_pg.h"
#include "placement/plc_map.h"

#define OSD_QUERY_RESEND_MS 2000u
#define OSD_STRAY_WAIT_MS 3000u /* a probed non-member that does not answer is skipped */

struct osd_conn *osd_peer_conn_to(struct osd *osd, uint32_t id)
{
	struct osd_peer *p = osd_peer_get(osd, id);

	if (p == NULL)
		return NULL;
	if (p->conn == NULL)
		osd_peer_connect(osd, p); /* rate-limited; sends RING_REQ first */
	return p->conn != NULL && !p->conn->failed ? p->conn : NULL;
}

int osd_peer_send(struct osd *osd, struct osd_conn *conn, uint16_t type, const struct proto_pg *m)
{
	static __thread struct proto_msg msg;
	uint8_t *buf;
	size_t len;
	int rc;

	if (conn == NULL)
		return -ENOTCONN;
	buf = malloc(osd->msg_size);
	if (buf == NULL)
		return -ENOMEM;
	msg.type = type;
	msg.pg = *m;
	msg.pg.from = osd->id;
	rc = proto_frame_encode(&msg, 0, buf, osd->msg_size, &len);
	if (rc == 0)
		rc = osd_conn_send(conn, buf, len);
	free(buf);
	return rc;
}

struct proto_pg osd_peer_hdr(const struct osd_pgx *x)
{
	struct proto_pg m;

	memset(&m, 0, sizeof(m));
	m.pool = x->pg->pool;
	m.pg = x->pg->pg;
	m.epoch = x->same_since;
	return m;
}

void osd_peer_own_info(const struct osd_pgx *x, struct proto_pg *m)
{
	*m = osd_peer_hdr(x);
	m->last_update = x->last_update;
	m->tail = x->tail < x->last_update ? x->tail : x->last_update;
	m->last_complete = x->last_complete;
	m->les = x->les;
	if (x->last_update == 0 && x->nlog == 0 && x->tail == 0)
		m->flags |= PROTO_PG_INFO_F_EMPTY;
	if (x->backfill_flag)
		m->flags |= PROTO_PG_INFO_F_BACKFILL;
}

/* PG_INFO of a member: its info and the past intervals it knows (sent at once). */
void osd_peer_info_msg(const struct osd_pgx *x, struct proto_pg *m)
{
	static __thread uint8_t buf[PG_PI_MAX * PROTO_PG_IV_ENC_MAX];
	struct proto_enc enc;
	size_t len = 0;

	osd_peer_own_info(x, m);
	proto_enc_init(&enc, buf, sizeof(buf));
	for (uint32_t i = 0; i < x->pi.n; i++)
		proto_pg_interval_put(&enc, &x->pi.e[i]);
	if (proto_enc_finish(&enc, &len) != 0)
		return; /* cannot happen: sized for PG_PI_MAX */
	m->count = x->pi.n;
	m->entries = buf;
	m->entries_len = (uint32_t)len;
}

static void osd_peer_delete_strays(struct osd *osd, struct osd_pgx *x);

void osd_peer_update_state(struct osd *osd, struct osd_pgx *x)
{
	uint32_t st = 0;

	if (!x->primary) {
		x->state = 0;
		return;
	}
	switch (x->phase) {
	case OSD_PH_ACTIVE:
		st = PROTO_PGS_ACTIVE;
		break;
	case OSD_PH_DOWN:
		st = PROTO_PGS_DOWN;
		break;
	default:
		st = PROTO_PGS_PEERING;
	}
	if (x->nacting < x->pool_size)
		st |= PROTO_PGS_UNDERSIZED | PROTO_PGS_DEGRADED;
	if (x->phase == OSD_PH_ACTIVE) {
		bool bf = x->self_backfill, rec = x->missing.n > 0;

		for (unsigned int i = 0; i < x->nm; i++) {
			if (!x->m[i].acting)
				continue;
			bf |= x->m[i].backfill && !x->m[i].bf_done;
			rec |= x->m[i].missing.n > 0;
		}
		if (bf)
			st |= PROTO_PGS_BACKFILLING | PROTO_PGS_DEGRADED;
		if (rec)
			st |= PROTO_PGS_RECOVERING | PROTO_PGS_DEGRADED;
		if (!(st & PROTO_PGS_DEGRADED))
			st |= PROTO_PGS_CLEAN;
	}
	if (x->inconsistent)
		st |= PROTO_PGS_INCONSISTENT;
	if (x->state & PROTO_PGS_SCRUBBING)
		st |= PROTO_PGS_SCRUBBING;
	if ((st ^ x->state) & (PROTO_PGS_ACTIVE | PROTO_PGS_CLEAN | PROTO_PGS_DOWN))
		log_info("osd", "%s pg %u.%x: %s", osd->name, x->pg->pool, x->pg->pg,
			 proto_pg_state_str(st, (char[96]){0}, 96));
	x->state = st;
	if (st & PROTO_PGS_CLEAN)
		osd_peer_delete_strays(osd, x);
}

/*
 * Clean: every member holds every object, so copies left on OSDs that are
 * no longer members (after an out, or a map change) can go. Only strays
 * that answered with data are told, once per interval.
 */
static void osd_peer_delete_strays(struct osd *osd, struct osd_pgx *x)
{
	for (unsigned int i = 0; i < x->nm; i++) {
		struct osd_pg_member *mb = &x->m[i];
		struct proto_pg d = osd_peer_hdr(x);

		if (mb->acting || !mb->answered || mb->activated ||
		    (mb->info.flags & PROTO_PG_INFO_F_EMPTY))
			continue;
		if (osd_peer_send(osd, osd_peer_conn_to(osd, (uint32_t)mb->osd), PROTO_PG_DELETE,
				  &d) == 0) {
			mb->activated = true; /* told */
			log_info("osd", "%s pg %u.%x: clean; osd.%d removes its old copy", osd->name,
				 x->pg->pool, x->pg->pg, mb->osd);
		}
	}
}

/* ------------------------------------------------------------ intervals */

static void osd_peer_reset_members(struct osd_pgx *x)
{
	for (unsigned int i = 0; i < x->nm; i++) {
		pg_set_clear(&x->m[i].missing);
		free(x->m[i].bf_pos);
		free(x->m[i].bf_remote);
	}
	memset(x->m, 0, sizeof(x->m));
	x->nm = 0;
	x->auth = -1;
	x->self_backfill = false;
	pg_set_clear(&x->missing);
	if (osd_fetch_pg() == x)
		osd_fetch_reset();
}


static void osd_peer_set_interval(struct osd *osd, struct osd_pgx *x, const int32_t *acting,
				  unsigned int n, const struct mon_pool *pool)
{
	bool was_primary = x->primary;

	x->same_since = osd->map.epoch;
	if (n > 0 && acting[0] == (int32_t)osd->id && x->fence < x->same_since)
		x->fence = x->same_since; /* pulls of older intervals are refused */
	memcpy(x->acting, acting, n * sizeof(*acting));
	x->nacting = n;
	x->primary = n > 0 && acting[0] == (int32_t)osd->id;
	x->pool_size = pool ? pool->size : 0;
	x->min_size = pool ? pool->min_size : 0;
	osd_recovery_interval(osd, x);
	osd_peer_reset_members(x);
	if (was_primary || x->primary)
		osd_op_pg_interval(osd, x->pg);
	if (!x->primary) {
		x->phase = OSD_PH_NONE;
		x->state = 0;
		return;
	}
	log_info("osd", "%s pg %u.%x: new interval at epoch %u, acting of %u: peering", osd->name,
		 x->pg->pool, x->pg->pg, x->same_since, n);
	x->phase = OSD_PH_WAIT_TX;
	osd_peer_update_state(osd, x);
	osd_peer_start(osd, x);
}

void osd_peer_map_changed(struct osd *osd)
{
	const struct mon_map *map = &osd->map;

	/* PGs we are in get their state first, so their intervals start now */
	for (uint32_t p = 0; p < map->npools; p++) {
		for (uint32_t g = 0; g < map->pools[p].pg_num; g++) {
			int32_t acting[PLC_MAX_REPLICAS];
			int n = plc_map_acting(map, &map->pools[p], g, acting);

			for (int i = 0; i < n; i++)
				if (acting[i] == (int32_t)osd->id)
					(void)osd_pgx_get(osd, map->pools[p].id, g);
		}
	}
	osd_peer_pi_track(osd);

	/* PGs we are in: a new interval when the acting set differs */
	for (uint32_t p = 0; p < map->npools; p++) {
		const struct mon_pool *pool = &map->pools[p];

		for (uint32_t g = 0; g < pool->pg_num; g++) {
			int32_t acting[PLC_MAX_REPLICAS];
			int n = plc_map_acting(map, pool, g, acting);
			bool in = false;
			struct osd_pgx *x;

			for (int i = 0; i < n; i++)
				in |= acting[i] == (int32_t)osd->id;
			if (!in)
				continue;
			x = osd_pgx_get(osd, pool->id, g);
			if (x == NULL) {
				log_error("osd", "%s pg %u.%x: cannot load PG state", osd->name,
					  pool->id, g);
				continue;
			}
			if (x->same_since != 0 && x->nacting == (unsigned int)n &&
			    !memcmp(x->acting, acting, n * sizeof(*acting))) {
				x->pool_size = pool->size;
				x->min_size = pool->min_size;
				if (x->primary && x->phase == OSD_PH_DOWN) {
					/* an OSD it waits for may be up now: ask everyone again */
					osd_peer_reset_members(x);
					x->phase = OSD_PH_WAIT_TX;
					osd_peer_start(osd, x);
					continue;
				}
				osd_peer_update_state(osd, x);
				continue;
			}
			osd_peer_set_interval(osd, x, acting, (unsigned int)n, pool);
		}
	}
	/* PGs we left (or whose pool is gone): we keep the copy, a stray */
	for (unsigned int b = 0; b < OSD_PG_BUCKETS; b++) {
		for (struct osd_pg *pg = osd->pgs[b]; pg; pg = pg->hnext) {
			struct osd_pgx *x = pg->x;
			const struct mon_pool *pool;
			int32_t acting[PLC_MAX_REPLICAS];
			int n;
			bool in = false;

			if (x == NULL || x->same_since == osd->map.epoch)
				continue;
			pool = mon_map_pool(map, pg->pool);
			n = pool ? plc_map_acting(map, pool, pg->pg, acting) : 0;
			for (int i = 0; i < n; i++)
				in |= acting[i] == (int32_t)osd->id;
			if (!in && x->nacting > 0)
				osd_peer_set_interval(osd, x, acting, 0, pool);
		}
	}
}

/* --------------------------------------------------------------- primary */


static void osd_peer_query_all(struct osd *osd, struct osd_pgx *x, bool resend)
{
	uint64_t now = clock_now_ms();

	for (unsigned int i = 0; i < x->nm; i++) {
		struct osd_pg_member *mb = &x->m[i];
		struct proto_pg q = osd_peer_hdr(x);

		if (mb->answered || (resend && now - mb->query_ms < OSD_QUERY_RESEND_MS))
			continue;
		mb->query_ms = now;
		osd_peer_send(osd, osd_peer_conn_to(osd, (uint32_t)mb->osd), PROTO_PG_QUERY, &q);
	}
}

/* WAIT_TX -> GETINFO: every up OSD is asked (members and possible strays). */
void osd_peer_start(struct osd *osd, struct osd_pgx *x)
{
	const struct mon_map *map = &osd->map;

	if (x->tx_inflight > 0)
		return; /* osd_peer_tx_settled calls again */
	x->phase = OSD_PH_GETINFO;
	x->nm = 0;
	for (unsigned int i = 1; i < x->nacting && x->nm < OSD_PG_PROBE_MAX; i++) {
		x->m[x->nm].osd = x->acting[i];
		x->m[x->nm++].acting = true;
	}
	for (uint32_t id = 0; id < map->max_osd && x->nm < OSD_PG_PROBE_MAX; id++) {
		bool known = id == osd->id;

		if (!(map->osds[id].state & MON_OSD_EXISTS) || !(map->osds[id].state & MON_OSD_UP))
			continue;
		for (unsigned int i = 0; i < x->nm; i++)
			known |= x->m[i].osd == (int32_t)id;
		if (!known)
			x->m[x->nm++].osd = (int32_t)id;
	}
	osd_peer_query_all(osd, x, false);
	osd_peer_tick(osd); /* with no other OSD up this completes now */
}

static bool osd_info_better(const struct proto_pg *a, const struct proto_pg *b)
{
	bool ca = a->last_complete >= a->last_update && !(a->flags & PROTO_PG_INFO_F_BACKFILL);
	bool cb = b->last_complete >= b->last_update && !(b->flags & PROTO_PG_INFO_F_BACKFILL);

	if (a->last_update != b->last_update)
		return a->last_update > b->last_update;
	if (ca != cb)
		return ca;
	return a->tail < b->tail; /* the longer log serves more members */
}

/* Every answer is in: choose the authoritative copy. */
static void osd_peer_choose(struct osd *osd, struct osd_pgx *x)
{
	struct proto_pg best;
	unsigned int members = 1;

	osd_peer_own_info(x, &best);
	x->auth = -1;
	for (unsigned int i = 0; i < x->nm; i++) {
		const struct osd_pg_member *mb = &x->m[i];

		if (mb->acting && mb->answered)
			members++;
		if (!mb->answered || (mb->info.flags & PROTO_PG_INFO_F_EMPTY))
			continue;
		if (osd_info_better(&mb->info, &best)) {
			best = mb->info;
			x->auth = (int)i;
		}
	}
	x->nblocked = 0;
	if (members < x->min_size) {
		/* too few copies to know the history: no I/O (reads would be stale) */
		log_info("osd", "%s pg %u.%x: %u of min_size %u members up, write blocked (PG down)",
			 osd->name, x->pg->pool, x->pg->pg, members, x->min_size);
		x->phase = OSD_PH_DOWN;
		osd_peer_update_state(osd, x);
		return;
	}
	if (!osd_peer_prior_ok(osd, x))
		return;
	if (best.flags & PROTO_PG_INFO_F_BACKFILL) {
		log_error("osd", "%s pg %u.%x: the newest copy (osd.%d) is itself incomplete "
				 "(backfill); PG incomplete", osd->name, x->pg->pool, x->pg->pg,
			  x->auth < 0 ? (int)osd->id : x->m[x->auth].osd);
		x->phase = OSD_PH_DOWN;
		x->state |= PROTO_PGS_INCOMPLETE;
		return;
	}
	x->auth_lu = best.last_update;
	log_info("osd", "%s pg %u.%x: authoritative copy osd.%d (last_update %llx, tail %llx)",
		 osd->name, x->pg->pool, x->pg->pg, x->auth < 0 ? (int)osd->id : x->m[x->auth].osd,
		 (unsigned long long)best.last_update, (unsigned long long)best.tail);
	x->phase = OSD_PH_GETLOG;
	osd_fetch_reset();
	if (x->auth >= 0) {
		const struct proto_pg *a = &x->m[x->auth].info;

		/* our log must overlap the auth's, else we rebuild ourselves by a scan */
		if (x->backfill_flag || x->last_update < a->tail ||
		    (x->last_update == 0 && a->tail > 0))
			x->self_backfill = true;
		x->getlog_after = a->tail;
		osd_fetch_begin(x, x->auth);
	} else if (osd_peer_own_missing(osd, x) != 0) {
		x->phase = OSD_PH_DOWN;
		osd_peer_update_state(osd, x);
		return;
	}
	osd_peer_next_fetch(osd, x);
}

void osd_peer_activate(struct osd *osd, struct osd_pgx *x)
{
	struct store_tx *tx;

	for (unsigned int i = 0; i < x->nm; i++)
		if (x->m[i].acting && x->m[i].answered)
			osd_peer_activate_member(osd, x, &x->m[i]);
	x->les = x->same_since;
	x->nblocked = 0;
	pg_pi_trim(&x->pi, x->les); /* what came before is in this interval's history now */
	if (store_tx_create(&tx) == 0) {
		if (osd_pgx_info_tx(osd, x, tx) != 0 || osd_pgx_submit(osd, x, tx, NULL, NULL) != 0)
			store_tx_destroy(tx);
	}
	/* versions go on after the newest entry, even within one epoch (a quick restart) */
	if (x->pg->seq_epoch < (uint32_t)(x->last_update >> 32) ||
	    (x->pg->seq_epoch == (uint32_t)(x->last_update >> 32) &&
	     x->pg->seq < (uint32_t)x->last_update)) {
		x->pg->seq_epoch = (uint32_t)(x->last_update >> 32);
		x->pg->seq = (uint32_t)x->last_update;
	}
	x->phase = OSD_PH_ACTIVE;
	osd_peer_update_state(osd, x);
	osd_recovery_start(osd, x);
	osd_pg_kick(x->pg);
}

int osd_peer_member_index(const struct osd_pgx *x, uint32_t osd_id)
{
	for (unsigned int i = 0; i < x->nm; i++)
		if (x->m[i].osd == (int32_t)osd_id)
			return (int)i;
	return -1;
}

static void osd_primary_info(struct osd *osd, struct osd_pgx *x, const struct proto_pg *m)
{
	int i = osd_peer_member_index(x, m->from);
	struct proto_pg_interval iv;
	unsigned int merged = 0;

	if (i < 0 || x->phase != OSD_PH_GETINFO || m->epoch != x->same_since)
		return;
	x->m[i].info = *m;
	x->m[i].info.count = 0; /* the entries are a view into a receive buffer */
	x->m[i].info.entries = NULL;
	x->m[i].info.entries_len = 0;
	x->m[i].answered = true;
	x->m[i].heard = true;
	for (size_t off = 0; proto_pg_interval_next(m, &off, &iv) == 1;)
		merged += pg_pi_merge(&x->pi, &iv) == 1;
	if (merged > 0)
		log_info("osd", "%s pg %u.%x: %u past intervals learnt from osd.%u", osd->name,
			 x->pg->pool, x->pg->pg, merged, m->from);
	osd_peer_tick(osd);
}

void osd_peer_msg(struct osd_conn *conn, uint16_t type, const struct proto_pg *m)
{
	struct osd *osd = conn->osd;
	struct osd_pgx *x;

	if (mon_map_pool(&osd->map, m->pool) == NULL)
		return; /* a pool we do not know (yet, or any more) */
	x = osd_pgx_get(osd, m->pool, m->pg);
	if (x == NULL)
		return;
	switch (type) {
	case PROTO_PG_QUERY:
		return osd_member_query(conn, x, m);
	case PROTO_PG_INFO:
		return x->primary ? osd_primary_info(osd, x, m) : (void)0;
	case PROTO_PG_LOG_REQ:
		return osd_member_logreq(conn, x, m);
	case PROTO_PG_LOG:
		if (x->primary)
			return osd_primary_log(osd, x, osd_peer_member_index(x, m->from), m);
		return osd_member_log(osd, x, m);
	case PROTO_PG_ACTIVATE:
		return osd_member_activate(osd, x, m);
	case PROTO_PG_DELETE:
		return osd_stray_delete(osd, x, m);
	}
}

/* Every 100 ms: resend unanswered queries, and move peering on when it can. */
void osd_peer_tick(struct osd *osd)
{
	uint64_t now = clock_now_ms();

	for (unsigned int b = 0; b < OSD_PG_BUCKETS; b++) {
		for (struct osd_pg *pg = osd->pgs[b]; pg; pg = pg->hnext) {
			struct osd_pgx *x = pg->x;
			bool wait = false;

			if (x == NULL || !x->primary)
				continue;
			if (x->phase == OSD_PH_WAIT_TX) {
				osd_peer_start(osd, x);
				continue;
			}
			if (x->phase == OSD_PH_GETLOG && osd_fetch_pg() == x &&
			    now - x->m[osd_fetch_from()].query_ms > OSD_QUERY_RESEND_MS) {
				osd_fetch_reset(); /* a lost answer: fetch again from the start */
				osd_peer_choose(osd, x);
				continue;
			}
			if (x->phase != OSD_PH_GETINFO)
				continue;
			for (unsigned int i = 0; i < x->nm; i++) {
				struct osd_pg_member *mb = &x->m[i];

				if (mb->answered)
					continue;
				if (!mb->acting && mb->query_ms &&
				    now - mb->query_ms > OSD_STRAY_WAIT_MS &&
				    !osd_peer_pi_witness(x, mb->osd)) {
					mb->answered = true; /* a stray that does not answer */
					mb->info.flags = PROTO_PG_INFO_F_EMPTY;
					continue;
				}
				wait = true;
			}
			if (wait) {
				osd_peer_query_all(osd, x, true);
				continue;
			}
			if (osd_fetch_pg() != NULL && osd_fetch_pg() != x)
				continue; /* another PG is fetching a log: next tick */
			osd_peer_choose(osd, x);
		}
	}
}
