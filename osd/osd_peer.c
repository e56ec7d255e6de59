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

/* Entries fetched from another copy (GETLOG). */
struct osd_fetch_ent {
	uint64_t v;
	uint16_t op;
	char *name;
};

struct osd_fetch {
	struct osd_pgx *x;
	int from; /* member index, -1 = none */
	struct osd_fetch_ent *e;
	uint32_t n, cap;
};

static struct osd_fetch osd_fetch_cur; /* one GETLOG at a time per OSD */

static void osd_fetch_reset(void)
{
	for (uint32_t i = 0; i < osd_fetch_cur.n; i++)
		free(osd_fetch_cur.e[i].name);
	free(osd_fetch_cur.e);
	memset(&osd_fetch_cur, 0, sizeof(osd_fetch_cur));
	osd_fetch_cur.from = -1;
}

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

static struct proto_pg osd_peer_hdr(const struct osd_pgx *x)
{
	struct proto_pg m;

	memset(&m, 0, sizeof(m));
	m.pool = x->pg->pool;
	m.pg = x->pg->pg;
	m.epoch = x->same_since;
	return m;
}

static void osd_peer_own_info(const struct osd_pgx *x, struct proto_pg *m)
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

struct osd_del_ctx {
	char **names;
	uint32_t n, cap;
};

static int osd_del_one(void *arg, const char *name)
{
	struct osd_del_ctx *c = arg;

	if (c->n == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 256;
		char **n = realloc(c->names, cap * sizeof(*n));

		if (n == NULL)
			return 1;
		c->names = n;
		c->cap = cap;
	}
	c->names[c->n] = strdup(name);
	return c->names[c->n] ? (c->n++, 0) : 1;
}

/* DELETE on a stray: its copy of the PG (objects, log, info) goes. */
static void osd_stray_delete(struct osd *osd, struct osd_pgx *x, const struct proto_pg *m)
{
	uint64_t pgk = osd_pg_key(x->pg->pool, x->pg->pg);
	struct osd_del_ctx c = {0};
	struct store_tx *tx = NULL;
	char key[32];
	int rc = 0;

	if (x->nacting > 0 || m->epoch < x->fence)
		return; /* a member again: nothing to remove */
	rc = store_list(osd->store, pgk, "", osd_del_one, &c);
	for (uint32_t i = 0; rc >= 0 && i <= c.n; i++) {
		if (tx == NULL && (rc = store_tx_create(&tx)) != 0)
			break;
		if (i < c.n)
			rc = store_tx_remove(tx, pgk, c.names[i]);
		if (rc == 0 && (i == c.n || (i + 1) % 256 == 0)) {
			if (i == c.n) {
				snprintf(key, sizeof(key), "%u.%x", x->pg->pool, x->pg->pg);
				rc = store_tx_pglog_trim(tx, pgk, UINT64_MAX - 1);
				if (rc == 0 && (x->last_update || x->tail || x->les))
					rc = store_tx_rmattr(tx, OSD_META_PG, OSD_PGINFO_OBJ, key);
			}
			if (rc == 0)
				rc = osd_pgx_submit(osd, x, tx, NULL, NULL);
			if (rc != 0)
				break;
			tx = NULL;
		}
	}
	if (tx != NULL)
		store_tx_destroy(tx);
	for (uint32_t i = 0; i < c.n; i++)
		free(c.names[i]);
	free(c.names);
	if (rc < 0) {
		log_error("osd", "%s pg %u.%x: removing the stray copy: %s", osd->name, x->pg->pool,
			  x->pg->pg, weft_strerror(rc));
		return;
	}
	x->nlog = 0;
	x->last_update = x->tail = x->last_complete = 0;
	x->les = 0;
	x->backfill_flag = false;
	log_info("osd", "%s pg %u.%x: stray copy removed (%u objects)", osd->name, x->pg->pool,
		 x->pg->pg, c.n);
}

/* ------------------------------------------------------------ intervals */

static void osd_peer_reset_members(struct osd_pgx *x)
{
	for (unsigned int i = 0; i < x->nm; i++) {
		osd_pgset_clear(&x->m[i].missing);
		free(x->m[i].bf_pos);
		free(x->m[i].bf_remote);
	}
	memset(x->m, 0, sizeof(x->m));
	x->nm = 0;
	x->auth = -1;
	x->self_backfill = false;
	osd_pgset_clear(&x->missing);
	if (osd_fetch_cur.x == x)
		osd_fetch_reset();
}

static void osd_peer_start(struct osd *osd, struct osd_pgx *x);

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

/* ---------------------------------------------------------------- member */

static void osd_peer_answer_query(struct osd *osd, struct osd_pgx *x, struct osd_conn *conn,
				  uint32_t epoch)
{
	struct proto_pg info;

	osd_peer_own_info(x, &info);
	info.epoch = epoch; /* the asker's interval */
	osd_peer_send(osd, conn, PROTO_PG_INFO, &info);
}

static bool osd_conn_alive(struct osd *osd, const struct osd_conn *c)
{
	for (const struct osd_conn *k = osd->conns; k; k = k->next)
		if (k == c)
			return !k->failed;
	return false;
}

void osd_peer_tx_settled(struct osd *osd, struct osd_pgx *x)
{
	for (unsigned int i = 0; i < x->nq; i++)
		if (osd_conn_alive(osd, x->q[i].conn) && x->q[i].epoch >= x->fence)
			osd_peer_answer_query(osd, x, x->q[i].conn, x->q[i].epoch);
	x->nq = 0;
	if (x->primary && x->phase == OSD_PH_WAIT_TX)
		osd_peer_start(osd, x);
}

static void osd_member_query(struct osd_conn *conn, struct osd_pgx *x, const struct proto_pg *m)
{
	struct osd *osd = conn->osd;

	if (m->epoch < x->fence)
		return; /* a query of an interval that already ended */
	x->fence = m->epoch; /* from now on older ring records are refused */
	if (x->tx_inflight == 0)
		return osd_peer_answer_query(osd, x, conn, m->epoch);
	if (x->nq == sizeof(x->q) / sizeof(x->q[0]))
		x->nq--; /* the oldest ones stay: a primary asks again anyway */
	x->q[x->nq++] = (struct osd_pg_query){conn, m->from, m->epoch};
}

struct osd_logreq_ctx {
	struct proto_enc enc;
	uint32_t n, max;
	size_t limit;
	bool full;
};

static int osd_logreq_one(void *arg, uint64_t seq, const void *entry, size_t len)
{
	struct osd_logreq_ctx *c = arg;
	static __thread struct proto_pg_log_entry e;
	size_t before = c->enc.off;

	if (osd_pglog_entry_decode(entry, len, &e) != 0 || e.version != seq)
		return 0;
	if (c->n == c->max) {
		c->full = true;
		return 1;
	}
	proto_pg_log_entry_put(&c->enc, &e);
	if (c->enc.err != 0 || c->enc.off > c->limit) {
		c->enc.off = before;
		c->enc.err = 0;
		c->full = true;
		return 1;
	}
	c->n++;
	return 0;
}

/* Answer LOG_REQ: our entries after m->after, as many as fit one message. */
static void osd_member_logreq(struct osd_conn *conn, struct osd_pgx *x, const struct proto_pg *m)
{
	struct osd *osd = conn->osd;
	struct osd_logreq_ctx c = {.max = m->max};
	struct proto_pg r = osd_peer_hdr(x);
	uint8_t *buf = malloc(osd->msg_size);

	if (buf == NULL)
		return;
	c.limit = osd->msg_size - 96; /* frame header + the LOG fields */
	proto_enc_init(&c.enc, buf, osd->msg_size);
	store_pglog_read(osd->store, osd_pg_key(x->pg->pool, x->pg->pg), m->after + 1,
			 osd_logreq_one, &c);
	r.epoch = m->epoch;
	r.count = c.n;
	r.entries = buf;
	r.entries_len = (uint32_t)c.enc.off;
	r.flags = c.full ? 0 : PROTO_PG_F_LAST;
	osd_peer_send(osd, conn, PROTO_PG_LOG, &r);
	free(buf);
}

/* Entries the primary sends before ACTIVATE: appended (rolled back) in one transaction. */
static void osd_member_log(struct osd *osd, struct osd_pgx *x, const struct proto_pg *m)
{
	static __thread struct proto_pg_log_entry e;
	struct store_tx *tx;
	size_t off = 0;
	int rc;

	if (m->epoch < x->fence || x->primary)
		return;
	rc = store_tx_create(&tx);
	if (rc != 0)
		return;
	x->log_catchup = true;
	while (rc == 0 && proto_pg_log_entry_next(m, &off, &e)) {
		struct osd_rec_hdr h = {.op = e.op,
					.pool = x->pg->pool,
					.pg = x->pg->pg,
					.epoch = (uint32_t)(e.version >> 32),
					.version = e.version,
					.name_len = e.name_len};
		uint8_t hb[OSD_REC_HDR_MAX];
		size_t hl;

		memcpy(h.name, e.name, e.name_len + 1);
		rc = osd_rec_hdr_encode(&h, hb, sizeof(hb), &hl);
		if (rc == 0)
			rc = osd_pgx_log_tx(osd, x, tx, e.op, e.version, e.name, hb, hl);
	}
	x->log_catchup = false;
	if (rc == 0)
		rc = osd_pgx_info_tx(osd, x, tx);
	if (rc == 0)
		rc = osd_pgx_submit(osd, x, tx, NULL, NULL);
	if (rc != 0) {
		store_tx_destroy(tx);
		log_error("osd", "%s pg %u.%x: appending the primary's log entries: %s", osd->name,
			  x->pg->pool, x->pg->pg, weft_strerror(rc));
	}
}

static void osd_member_activate(struct osd *osd, struct osd_pgx *x, const struct proto_pg *m)
{
	struct store_tx *tx;
	int rc;

	if (m->epoch < x->fence || x->primary)
		return;
	rc = store_tx_create(&tx);
	if (rc != 0)
		return;
	if (!(m->flags & PROTO_PG_ACT_F_BACKFILL) && m->last_update > x->last_update)
		x->last_update = m->last_update;
	if (m->flags & PROTO_PG_ACT_F_BACKFILL) {
		/* rebuilt by a scan: our log restarts at the primary's head */
		rc = store_tx_pglog_trim(tx, osd_pg_key(x->pg->pool, x->pg->pg), UINT64_MAX - 1);
		x->nlog = 0;
		x->tail = x->last_update = m->last_update;
		x->last_complete = 0;
		x->backfill_flag = true;
	}
	x->les = m->les;
	if (rc == 0)
		rc = osd_pgx_info_tx(osd, x, tx);
	if (rc == 0)
		rc = osd_pgx_submit(osd, x, tx, NULL, NULL);
	if (rc != 0) {
		store_tx_destroy(tx);
		log_error("osd", "%s pg %u.%x: activation: %s", osd->name, x->pg->pool, x->pg->pg,
			  weft_strerror(rc));
	}
}

/* --------------------------------------------------------------- primary */

static void osd_peer_activate(struct osd *osd, struct osd_pgx *x);
static void osd_peer_next_fetch(struct osd *osd, struct osd_pgx *x);

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
static void osd_peer_start(struct osd *osd, struct osd_pgx *x)
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
	if (members < x->min_size) {
		/* too few copies to know the history: no I/O (reads would be stale) */
		x->phase = OSD_PH_DOWN;
		osd_peer_update_state(osd, x);
		return;
	}
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
		osd_fetch_cur.x = x;
		osd_fetch_cur.from = x->auth;
	}
	osd_peer_next_fetch(osd, x);
}

static void osd_fetch_send(struct osd *osd, struct osd_pgx *x)
{
	struct proto_pg r = osd_peer_hdr(x);

	r.after = x->getlog_after;
	r.max = PROTO_PG_ENTRIES_MAX;
	osd_peer_send(osd, osd_peer_conn_to(osd, (uint32_t)x->m[osd_fetch_cur.from].osd),
		      PROTO_PG_LOG_REQ, &r);
	x->m[osd_fetch_cur.from].query_ms = clock_now_ms();
}

static int osd_fetch_add(const struct proto_pg_log_entry *e)
{
	struct osd_fetch *f = &osd_fetch_cur;

	if (f->n == f->cap) {
		uint32_t cap = f->cap ? f->cap * 2 : 256;
		struct osd_fetch_ent *n = realloc(f->e, cap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		f->e = n;
		f->cap = cap;
	}
	f->e[f->n].name = strdup(e->name);
	if (f->e[f->n].name == NULL)
		return -ENOMEM;
	f->e[f->n].v = e->version;
	f->e[f->n].op = e->op;
	f->n++;
	return 0;
}

static bool osd_fetch_has(uint64_t v)
{
	for (uint32_t i = 0; i < osd_fetch_cur.n; i++)
		if (osd_fetch_cur.e[i].v == v)
			return true;
	return false;
}

struct osd_own_ctx {
	struct osd *osd;
	struct osd_pgx *x;
	struct store_tx *tx;
	uint64_t after;
	int rc;
};

/* Our entries after the auth's tail that the auth's log lacks: roll back, recover. */
static int osd_own_divergent(void *arg, uint64_t seq, const void *entry, size_t len)
{
	struct osd_own_ctx *c = arg;
	static __thread struct proto_pg_log_entry e;

	if (osd_pglog_entry_decode(entry, len, &e) != 0 || e.op == PROTO_PG_LOG_ROLLBACK ||
	    seq <= c->after || osd_fetch_has(seq))
		return 0;
	{
		struct osd_rec_hdr h = {.op = PROTO_PG_LOG_ROLLBACK,
					.pool = c->x->pg->pool,
					.pg = c->x->pg->pg,
					.epoch = (uint32_t)(seq >> 32),
					.version = seq,
					.name_len = e.name_len};
		uint8_t hb[OSD_REC_HDR_MAX];
		size_t hl;

		memcpy(h.name, e.name, e.name_len + 1);
		log_info("osd", "%s pg %u.%x: rolling back unacknowledged %s v%llx", c->osd->name,
			 c->x->pg->pool, c->x->pg->pg, e.name, (unsigned long long)seq);
		c->rc = osd_rec_hdr_encode(&h, hb, sizeof(hb), &hl);
		if (c->rc == 0)
			c->rc = osd_pgx_log_tx(c->osd, c->x, c->tx, PROTO_PG_LOG_ROLLBACK, seq,
					       e.name, hb, hl);
		if (c->rc == 0)
			c->rc = osd_pgset_add(&c->x->missing, e.name, 0, 0);
	}
	return c->rc != 0;
}

/*
 * The auth's log is here (entries after its tail): roll back our divergent
 * entries, append the ones we lack, and make what they name missing here.
 */
static int osd_peer_merge_auth(struct osd *osd, struct osd_pgx *x)
{
	struct osd_own_ctx c = {osd, x, NULL, x->m[x->auth].info.tail, 0};
	uint64_t pgk = osd_pg_key(x->pg->pool, x->pg->pg);
	uint64_t old_lc = x->last_complete;
	int rc = store_tx_create(&c.tx);

	if (rc != 0)
		return rc;
	if (x->self_backfill) {
		/* our log restarts as the auth's; objects are compared by a scan */
		rc = store_tx_pglog_trim(c.tx, pgk, UINT64_MAX - 1);
		x->nlog = 0;
		x->last_update = 0;
		x->tail = x->m[x->auth].info.tail;
		x->backfill_flag = true;
		old_lc = 0;
	} else {
		rc = store_pglog_read(osd->store, pgk, c.after + 1, osd_own_divergent, &c);
		rc = rc < 0 ? rc : c.rc;
	}
	x->log_catchup = true;
	for (uint32_t i = 0; rc == 0 && i < osd_fetch_cur.n; i++) {
		const struct osd_fetch_ent *e = &osd_fetch_cur.e[i];
		struct osd_rec_hdr h = {.op = e->op,
					.pool = x->pg->pool,
					.pg = x->pg->pg,
					.epoch = (uint32_t)(e->v >> 32),
					.version = e->v};
		uint8_t hb[OSD_REC_HDR_MAX];
		size_t hl;

		if (osd_pgx_log_has(x, e->v) || e->op == PROTO_PG_LOG_ROLLBACK)
			continue;
		h.name_len = strlen(e->name);
		memcpy(h.name, e->name, h.name_len + 1);
		rc = osd_rec_hdr_encode(&h, hb, sizeof(hb), &hl);
		if (rc == 0)
			rc = osd_pgx_log_tx(osd, x, c.tx, e->op, e->v, e->name, hb, hl);
	}
	x->log_catchup = false;
	/* what changed after our last complete point is missing here (unless rebuilt by scan) */
	for (uint32_t i = 0; rc == 0 && !x->self_backfill && i < osd_fetch_cur.n; i++)
		if (osd_fetch_cur.e[i].v > old_lc && osd_fetch_cur.e[i].op != PROTO_PG_LOG_ROLLBACK)
			rc = osd_pgset_add(&x->missing, osd_fetch_cur.e[i].name, 0, 0);
	if (x->last_update < x->auth_lu)
		x->last_update = x->auth_lu;
	x->last_complete = x->missing.n == 0 && !x->self_backfill ? x->last_update : old_lc;
	if (rc == 0)
		rc = osd_pgx_info_tx(osd, x, c.tx);
	if (rc == 0)
		rc = osd_pgx_submit(osd, x, c.tx, NULL, NULL);
	if (rc != 0)
		store_tx_destroy(c.tx);
	return rc;
}

/* A divergent member's log is here: its entries we do not have are rolled back on it. */
static void osd_peer_merge_member(struct osd_pgx *x, struct osd_pg_member *mb)
{
	for (uint32_t i = 0; i < osd_fetch_cur.n; i++) {
		const struct osd_fetch_ent *e = &osd_fetch_cur.e[i];

		if (!osd_pgx_log_has(x, e->v) && e->op != PROTO_PG_LOG_ROLLBACK)
			osd_pgset_add(&mb->missing, e->name, e->v, OSD_PGSET_REMOVE);
	}
	mb->log_fetched = true;
}

static void osd_peer_fetch_done(struct osd *osd, struct osd_pgx *x)
{
	int from = osd_fetch_cur.from;
	int rc = 0;

	if (from == x->auth && !x->m[from].log_fetched) {
		rc = osd_peer_merge_auth(osd, x);
		x->m[from].log_fetched = true;
	} else {
		osd_peer_merge_member(x, &x->m[from]);
	}
	osd_fetch_reset();
	if (rc != 0) {
		log_error("osd", "%s pg %u.%x: merging the authoritative log: %s", osd->name,
			  x->pg->pool, x->pg->pg, weft_strerror(rc));
		x->phase = OSD_PH_DOWN;
		return;
	}
	osd_peer_next_fetch(osd, x);
}

/* Next log to fetch: a divergent member's; when none is left, activate. */
static void osd_peer_next_fetch(struct osd *osd, struct osd_pgx *x)
{
	if (osd_fetch_cur.from >= 0) {
		osd_fetch_send(osd, x);
		return;
	}
	for (unsigned int i = 0; i < x->nm; i++) {
		struct osd_pg_member *mb = &x->m[i];
		const struct proto_pg *in = &mb->info;

		if (!mb->acting || !mb->answered || mb->log_fetched)
			continue;
		if ((in->flags & (PROTO_PG_INFO_F_EMPTY | PROTO_PG_INFO_F_BACKFILL)) ||
		    in->last_update < x->tail) {
			mb->backfill = !(in->flags & PROTO_PG_INFO_F_EMPTY) || x->tail > 0;
			continue;
		}
		if (in->last_update == 0 || in->last_update == x->tail ||
		    osd_pgx_log_has(x, in->last_update))
			continue;
		/* its newest entry is not ours: read its log to find what to undo */
		mb->divergent = true;
		x->getlog_after = x->tail > in->tail ? x->tail : in->tail;
		osd_fetch_cur.x = x;
		osd_fetch_cur.from = (int)i;
		osd_fetch_send(osd, x);
		return;
	}
	osd_peer_activate(osd, x);
}

static void osd_primary_log(struct osd *osd, struct osd_pgx *x, int from, const struct proto_pg *m)
{
	static __thread struct proto_pg_log_entry e;
	size_t off = 0;

	if (x->phase != OSD_PH_GETLOG || osd_fetch_cur.x != x || osd_fetch_cur.from != from)
		return;
	while (proto_pg_log_entry_next(m, &off, &e)) {
		if (osd_fetch_add(&e) != 0) {
			x->phase = OSD_PH_DOWN;
			return;
		}
		if (e.version > x->getlog_after)
			x->getlog_after = e.version;
	}
	if (m->flags & PROTO_PG_F_LAST)
		osd_peer_fetch_done(osd, x);
	else
		osd_fetch_send(osd, x);
}

struct osd_send_ctx {
	struct osd *osd;
	struct osd_pgx *x;
	struct osd_pg_member *mb;
	struct osd_conn *conn;
	uint8_t *buf;
	struct proto_enc enc;
	uint32_t n;
	uint64_t lc;
	int rc;
};

static void osd_send_flush(struct osd_send_ctx *c)
{
	struct proto_pg r = osd_peer_hdr(c->x);

	if (c->n == 0)
		return;
	r.count = c->n;
	r.entries = c->buf;
	r.entries_len = (uint32_t)c->enc.off;
	c->rc = osd_peer_send(c->osd, c->conn, PROTO_PG_LOG, &r);
	proto_enc_init(&c->enc, c->buf, c->osd->msg_size);
	c->n = 0;
}

static void osd_send_entry(struct osd_send_ctx *c, const struct proto_pg_log_entry *e)
{
	size_t before = c->enc.off;

	proto_pg_log_entry_put(&c->enc, e);
	if (c->enc.err != 0 || c->enc.off > c->osd->msg_size - 96 ||
	    c->n == PROTO_PG_ENTRIES_MAX) {
		c->enc.off = before;
		c->enc.err = 0;
		osd_send_flush(c);
		proto_pg_log_entry_put(&c->enc, e);
	}
	c->n++;
}

/* Our entries after the member's newest: sent, and what they name becomes missing there. */
static int osd_send_one(void *arg, uint64_t seq, const void *entry, size_t len)
{
	struct osd_send_ctx *c = arg;
	static __thread struct proto_pg_log_entry e;

	if (osd_pglog_entry_decode(entry, len, &e) != 0 || e.op == PROTO_PG_LOG_ROLLBACK)
		return 0;
	if (seq > c->mb->info.last_update || c->mb->divergent)
		osd_send_entry(c, &e);
	if (seq > c->lc && !c->mb->backfill)
		c->rc = c->rc ? c->rc : osd_pgset_add(&c->mb->missing, e.name, seq, 0);
	return c->rc != 0;
}

static void osd_peer_activate_member(struct osd *osd, struct osd_pgx *x, struct osd_pg_member *mb)
{
	struct osd_send_ctx c = {osd, x, mb, osd_peer_conn_to(osd, (uint32_t)mb->osd)};
	struct proto_pg a = osd_peer_hdr(x);
	uint64_t from = mb->info.last_complete;

	if (mb->divergent || from < x->tail)
		from = x->tail;
	c.lc = mb->info.last_complete;
	if (!mb->backfill) {
		c.buf = malloc(osd->msg_size);
		if (c.buf == NULL)
			return;
		proto_enc_init(&c.enc, c.buf, osd->msg_size);
		/* rolled-back entries first: the member drops them before appending ours */
		for (uint32_t i = 0; i < mb->missing.cap; i++) {
			const struct osd_pgset_ent *e = &mb->missing.e[i];
			struct proto_pg_log_entry le = {.version = e->version,
							.op = PROTO_PG_LOG_ROLLBACK};

			if (e->name == NULL || (e->flags & OSD_PGSET_TOMB) ||
			    !(e->flags & OSD_PGSET_REMOVE))
				continue;
			le.name_len = strlen(e->name);
			memcpy(le.name, e->name, le.name_len + 1);
			osd_send_entry(&c, &le);
		}
		store_pglog_read(osd->store, osd_pg_key(x->pg->pool, x->pg->pg), from + 1,
				 osd_send_one, &c);
		osd_send_flush(&c);
		free(c.buf);
	}
	a.flags = mb->backfill ? PROTO_PG_ACT_F_BACKFILL : 0;
	a.last_update = x->last_update;
	a.tail = x->tail;
	a.les = x->same_since;
	if (c.rc == 0)
		c.rc = osd_peer_send(osd, c.conn, PROTO_PG_ACTIVATE, &a);
	if (c.rc != 0)
		log_warn("osd", "%s pg %u.%x: activating osd.%d: %s", osd->name, x->pg->pool,
			 x->pg->pg, mb->osd, weft_strerror(c.rc));
	mb->activated = true;
	/* the REMOVE flag only marked rolled-back names; what to do is decided at push time */
	for (uint32_t i = 0; i < mb->missing.cap; i++)
		mb->missing.e[i].flags &= ~OSD_PGSET_REMOVE;
}

static void osd_peer_activate(struct osd *osd, struct osd_pgx *x)
{
	struct store_tx *tx;

	for (unsigned int i = 0; i < x->nm; i++)
		if (x->m[i].acting && x->m[i].answered)
			osd_peer_activate_member(osd, x, &x->m[i]);
	x->les = x->same_since;
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

static int osd_peer_member_index(const struct osd_pgx *x, uint32_t osd_id)
{
	for (unsigned int i = 0; i < x->nm; i++)
		if (x->m[i].osd == (int32_t)osd_id)
			return (int)i;
	return -1;
}

static void osd_primary_info(struct osd *osd, struct osd_pgx *x, const struct proto_pg *m)
{
	int i = osd_peer_member_index(x, m->from);

	if (i < 0 || x->phase != OSD_PH_GETINFO || m->epoch != x->same_since)
		return;
	x->m[i].info = *m;
	x->m[i].answered = true;
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
			if (x->phase == OSD_PH_GETLOG && osd_fetch_cur.x == x &&
			    now - x->m[osd_fetch_cur.from].query_ms > OSD_QUERY_RESEND_MS) {
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
				if (!mb->acting && mb->query_ms && now - mb->query_ms >
								       OSD_STRAY_WAIT_MS) {
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
			if (osd_fetch_cur.x != NULL && osd_fetch_cur.x != x)
				continue; /* another PG is fetching a log: next tick */
			osd_peer_choose(osd, x);
		}
	}
}
