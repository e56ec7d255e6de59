/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Recovery (docs/recovery.md, "Recovery"): once a PG is active its primary
 * pushes every object a member misses and pulls every object it misses
 * itself. A push is a ring record like replication (one-sided write with
 * immediate into the target's ring on the cluster network, acked when the
 * target committed it): PUSH chunks of at most osd_max_op_size, the last
 * one PUSH_LAST (which sets the object's version), or PUSH_RM when the
 * object must not exist. A pull is a PULL message; the source answers
 * with pushes. A client op on an object still missing somewhere waits and
 * moves that object to the front (recover on access).
 *
 * Throttle: at most osd_recovery_max_active pushes and pulls in flight,
 * at most osd_recovery_max_bytes per second, and half the pushes in flight
 * while the client write p99 of the last seconds exceeds
 * osd_recovery_client_p99.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd_perf.h"
#include "osd/osd_pg.h"

#define OSD_PUSH_RETRY_MS 10000u
#define OSD_PULL_RETRY_MS 10000u

struct osd_push {
	struct osd_push *next;
	uint32_t pool, pg, target, epoch;
	bool tracked; /* ours (a member's missing set); else an answer to a PULL */
	uint64_t off, size, version;
	bool posted, last;
	uint64_t ring_off, chunk;
	struct osd_conn *conn; /* the target's connection when posted */
	uint64_t post_ms;
	void *buf;
	struct fab_pool *bpool;
	struct fab_sge sge;
	char name[];
};

struct osd_recovery {
	struct osd_push *pushes;
	uint32_t active; /* pushes + pulls in flight */
	int64_t tokens; /* bytes we may still push this second; negative = in debt */
	uint64_t last_refill_ms;
	struct hist snap; /* client write latency a few seconds ago */
	uint64_t snap_ms;
	bool slow; /* clients' recent p99 above the target: half the pushes */
};

int osd_pg_init(struct osd *osd)
{
	osd->rec = calloc(1, sizeof(*osd->rec));
	if (osd->rec == NULL)
		return -ENOMEM;
	hist_init(&osd->rec->snap);
	return 0;
}

static void osd_push_free(struct osd_push *p)
{
	if (p->buf)
		fab_pool_put(p->bpool, p->buf);
	free(p);
}

void osd_pg_fini(struct osd *osd)
{
	if (osd->rec) {
		while (osd->rec->pushes) {
			struct osd_push *p = osd->rec->pushes;

			osd->rec->pushes = p->next;
			p->buf = NULL; /* the pools are gone with the domain */
			free(p);
		}
		free(osd->rec);
		osd->rec = NULL;
	}
	for (unsigned int b = 0; b < OSD_PG_BUCKETS; b++)
		for (struct osd_pg *pg = osd->pgs[b]; pg; pg = pg->hnext)
			if (pg->x) {
				osd_pgx_free(pg->x);
				pg->x = NULL;
			}
}

uint64_t osd_recovery_missing(const struct osd_pgx *x)
{
	uint64_t n = x->missing.n;

	for (unsigned int i = 0; i < x->nm; i++)
		n += x->m[i].acting ? x->m[i].missing.n : 0;
	return n;
}

static struct osd_pg_member *osd_rec_member(struct osd_pgx *x, uint32_t id)
{
	for (unsigned int i = 0; i < x->nm; i++)
		if (x->m[i].osd == (int32_t)id)
			return &x->m[i];
	return NULL;
}

/* The interval ended: our pushes for it stop (their acks are ignored). */
void osd_recovery_interval(struct osd *osd, struct osd_pgx *x)
{
	struct osd_recovery *r = osd->rec;

	for (struct osd_push **pp = &r->pushes; *pp;) {
		struct osd_push *p = *pp;

		if (p->tracked && p->pool == x->pg->pool && p->pg == x->pg->pg) {
			*pp = p->next;
			if (p->posted || p->tracked)
				r->active--;
			osd_push_free(p);
			continue;
		}
		pp = &p->next;
	}
	for (uint32_t i = 0; x->missing.cap && i < x->missing.cap; i++)
		if (x->missing.e[i].name && (x->missing.e[i].flags & OSD_PGSET_INFLIGHT) &&
		    !(x->missing.e[i].flags & OSD_PGSET_TOMB))
			r->active--; /* pulls in flight */
}

static bool osd_rec_write_pending(const struct osd_pgx *x, const char *name)
{
	for (const struct osd_op *op = x->pg->head; op; op = op->next)
		if (op->state >= OSD_OP_PULLING && op->state <= OSD_OP_SUBMITTED &&
		    !strcmp(op->name, name))
			return true;
	return false;
}

/* Build and post the next chunk of p. 0 posted, -EAGAIN retry later, else failed. */
static int osd_push_post(struct osd *osd, struct osd_push *p)
{
	uint64_t pgk = osd_pg_key(p->pool, p->pg), got = 0;
	struct osd_rec_hdr h = {.pool = p->pool, .pg = p->pg, .epoch = p->epoch};
	struct store_stat st;
	size_t hl;
	int rc;

	if (p->off == 0) {
		rc = store_stat(osd->store, pgk, p->name, &st);
		if (rc != 0 && rc != -ENOENT)
			return rc;
		p->size = rc == 0 ? st.size : 0;
		p->last = false;
		h.op = rc == -ENOENT ? OSD_REC_PUSH_RM : 0;
		p->version = 0;
		if (rc == 0 && osd_pg_obj_version(osd, pgk, p->name, &p->version) != 0)
			p->version = 1; /* written before versions were kept: any non-zero */
		if (rc == -ENOENT)
			p->size = UINT64_MAX; /* marks a remove */
	}
	h.name_len = strlen(p->name);
	memcpy(h.name, p->name, h.name_len + 1);
	h.version = p->version;
	if (p->size == UINT64_MAX) {
		h.op = OSD_REC_PUSH_RM;
		p->chunk = 0;
	} else {
		p->chunk = p->size - p->off < osd->max_op ? p->size - p->off : osd->max_op;
		h.op = p->off + p->chunk >= p->size ? OSD_REC_PUSH_LAST : OSD_REC_PUSH;
		h.offset = p->off;
		h.length = p->chunk;
	}
	rc = osd_rec_hdr_encode(&h, NULL, 0, &hl);
	if (rc != 0)
		return rc;
	if (p->buf == NULL) {
		p->buf = osd_buf_get(osd, hl + p->chunk, &p->bpool, &p->sge);
		if (p->buf == NULL)
			return -EAGAIN;
	}
	rc = osd_rec_hdr_encode(&h, p->buf, hl, &hl);
	if (rc == 0 && p->chunk > 0) {
		rc = store_read(osd->store, pgk, p->name, p->off, p->chunk, (char *)p->buf + hl,
				&got);
		if (rc == 0 && got != p->chunk)
			rc = -EIO; /* changed under us: start over */
	}
	if (rc == 0) {
		struct fab_sge src = {p->buf, (uint32_t)(hl + p->chunk), p->sge.mr};

		rc = osd_repl_post_raw(osd, p->target, &src, &p->ring_off);
	}
	if (rc != 0) {
		fab_pool_put(p->bpool, p->buf);
		p->buf = NULL;
		if (rc == -EIO)
			p->off = 0;
		return rc == -EIO ? -EAGAIN : rc;
	}
	p->posted = true;
	p->last = h.op != OSD_REC_PUSH;
	osd->rec->tokens -= (int64_t)(hl + p->chunk);
	p->conn = osd_peer_get(osd, p->target)->conn;
	p->post_ms = clock_now_ms();
	return 0;
}

static struct osd_push *osd_push_new(struct osd *osd, uint32_t pool, uint32_t pg, uint32_t target,
				     uint32_t epoch, const char *name, bool tracked)
{
	size_t nl = strlen(name) + 1;
	struct osd_push *p = calloc(1, sizeof(*p) + nl);

	if (p == NULL)
		return NULL;
	p->pool = pool;
	p->pg = pg;
	p->target = target;
	p->epoch = epoch;
	p->tracked = tracked;
	memcpy(p->name, name, nl);
	p->next = osd->rec->pushes;
	osd->rec->pushes = p;
	osd->rec->active++;
	return p;
}

static void osd_push_unlink(struct osd *osd, struct osd_push *p)
{
	for (struct osd_push **pp = &osd->rec->pushes; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			osd->rec->active--;
			osd_push_free(p);
			return;
		}
	}
}

/* A push's chunk was committed by its target (status 0) or refused. */
bool osd_recovery_acked(struct osd *osd, uint32_t peer_id, const struct osd_wire_msg *m)
{
	struct osd_peer *peer = osd_peer_get(osd, peer_id);
	struct osd_push *p;

	if (osd->rec == NULL || peer == NULL)
		return false;
	for (p = osd->rec->pushes; p; p = p->next)
		if (p->posted && p->target == peer_id && p->ring_off == m->ring_off &&
		    p->conn == peer->conn)
			break;
	if (p == NULL)
		return false;
	p->posted = false;
	fab_pool_put(p->bpool, p->buf);
	p->buf = NULL;
	if (m->status != 0) {
		log_warn("osd", "%s pg %u.%x: push of %s to osd.%u refused: %s", osd->name,
			 p->pool, p->pg, p->name, peer_id, weft_strerror(m->status));
		if (p->tracked) {
			struct osd_pgx *x = osd_pgx_get(osd, p->pool, p->pg);
			struct osd_pg_member *mb = x ? osd_rec_member(x, peer_id) : NULL;
			struct osd_pgset_ent *e = mb ? osd_pgset_find(&mb->missing, p->name) : NULL;

			if (e)
				e->flags &= ~OSD_PGSET_INFLIGHT; /* tried again later */
		}
		osd_push_unlink(osd, p);
		return true;
	}
	osd->rec_bytes += p->chunk;
	if (!p->last) {
		p->off += p->chunk;
		return true; /* the tick posts the next chunk */
	}
	osd->rec_objects++;
	if (p->tracked) {
		struct osd_pgx *x = osd_pgx_get(osd, p->pool, p->pg);
		struct osd_pg_member *mb = x ? osd_rec_member(x, peer_id) : NULL;

		if (mb != NULL) {
			osd_pgset_del(&mb->missing, p->name);
			mb->pushed++;
			osd_pg_kick(x->pg); /* ops waiting for this object */
		}
	}
	osd_push_unlink(osd, p);
	return true;
}

/* A pushed object arrived here (commit of PUSH_LAST / PUSH_RM): one pull fewer. */
void osd_recovery_pushed(struct osd *osd, uint32_t pool, uint32_t pgid, const char *name,
			 bool whole)
{
	struct osd_pgx *x = osd_pgx_get(osd, pool, pgid);
	struct osd_pgset_ent *e;

	if (x == NULL || !x->primary || !whole)
		return;
	e = osd_pgset_find(&x->missing, name);
	if (e == NULL)
		return;
	if (e->flags & OSD_PGSET_INFLIGHT)
		osd->rec->active--;
	osd_pgset_del(&x->missing, name);
	osd_pg_kick(x->pg);
}

bool osd_pg_obj_ready(struct osd *osd, struct osd_pg *pg, const char *name)
{
	struct osd_pgx *x = pg->x;
	bool ready = true;
	struct osd_pgset_ent *e;

	(void)osd;
	if (x == NULL || !x->primary)
		return true;
	if ((e = osd_pgset_find(&x->missing, name)) != NULL) {
		e->flags |= OSD_PGSET_URGENT;
		ready = false;
	}
	if (x->self_backfill) {
		struct osd_pg_member *a = x->auth >= 0 ? &x->m[x->auth] : NULL;

		if (a && !a->bf_done && (a->bf_pos == NULL || strcmp(name, a->bf_pos) > 0)) {
			osd_pgset_add(&x->missing, name, 0, OSD_PGSET_URGENT);
			ready = false;
		}
	}
	for (unsigned int i = 0; i < x->nm; i++) {
		struct osd_pg_member *mb = &x->m[i];

		if (!mb->acting)
			continue;
		if ((e = osd_pgset_find(&mb->missing, name)) != NULL) {
			e->flags |= OSD_PGSET_URGENT;
			ready = false;
		} else if (mb->backfill && !mb->bf_done &&
			   (mb->bf_pos == NULL || strcmp(name, mb->bf_pos) > 0)) {
			/* not backfilled yet: copy it now, then the op goes to every member */
			osd_pgset_add(&mb->missing, name, 0, OSD_PGSET_URGENT);
			ready = false;
		}
	}
	return ready;
}

/* Pull source: a member whose copy is complete up to the authoritative head. */
static int osd_rec_source(const struct osd_pgx *x)
{
	if (x->auth >= 0) {
		const struct proto_pg *a = &x->m[x->auth].info;

		if (a->last_complete >= a->last_update && !(a->flags & PROTO_PG_INFO_F_BACKFILL))
			return x->auth;
	}
	for (unsigned int i = 0; i < x->nm; i++) {
		const struct proto_pg *in = &x->m[i].info;

		if (x->m[i].answered && !(in->flags & (PROTO_PG_INFO_F_EMPTY |
						       PROTO_PG_INFO_F_BACKFILL)) &&
		    !x->m[i].divergent && in->last_complete >= x->auth_lu)
			return (int)i;
	}
	return -1;
}

/* May one more push or pull start? (Urgent ones, which a client waits for, do not ask.) */
static bool osd_rec_budget(struct osd *osd)
{
	struct osd_recovery *r = osd->rec;
	uint64_t max = (uint64_t)conf_get_int(osd->conf, CONF_OSD_RECOVERY_MAX_ACTIVE);
	uint64_t rate = conf_get_size(osd->conf, CONF_OSD_RECOVERY_MAX_BYTES);

	if (r->slow && max > 1)
		max /= 2;
	if (r->active >= max)
		return false;
	return rate == 0 || r->tokens > 0; /* each posted chunk is charged (osd_push_post) */
}

static void osd_rec_pulls(struct osd *osd, struct osd_pgx *x, bool urgent_only)
{
	uint64_t now = clock_now_ms();
	int src = osd_rec_source(x);
	uint32_t i = 0;
	struct osd_pgset_ent *e;

	while ((e = osd_pgset_next(&x->missing, &i)) != NULL) {
		struct proto_pg m;

		if (e->flags & OSD_PGSET_INFLIGHT) {
			if (now - e->version < OSD_PULL_RETRY_MS)
				continue;
			e->flags &= ~OSD_PGSET_INFLIGHT; /* lost: ask again */
			osd->rec->active--;
		}
		if (urgent_only && !(e->flags & OSD_PGSET_URGENT))
			continue;
		if (src < 0) {
			log_warn("osd", "%s pg %u.%x: no complete copy holds %s (unfound)",
				 osd->name, x->pg->pool, x->pg->pg, e->name);
			return;
		}
		if (!(e->flags & OSD_PGSET_URGENT) && !osd_rec_budget(osd))
			return;
		memset(&m, 0, sizeof(m));
		m.pool = x->pg->pool;
		m.pg = x->pg->pg;
		m.epoch = x->same_since;
		m.name_len = strlen(e->name);
		memcpy(m.name, e->name, m.name_len + 1);
		if (osd_peer_send(osd, osd_peer_conn_to(osd, (uint32_t)x->m[src].osd), PROTO_PG_PULL,
				  &m) != 0)
			return;
		e->flags |= OSD_PGSET_INFLIGHT;
		e->version = now; /* for a pull in flight: when it was asked */
		osd->rec->active++;
	}
}

static void osd_rec_pushes(struct osd *osd, struct osd_pgx *x, struct osd_pg_member *mb,
			   bool urgent_only)
{
	uint32_t i = 0;
	struct osd_pgset_ent *e;

	while ((e = osd_pgset_next(&mb->missing, &i)) != NULL) {
		struct osd_push *p;

		if (e->flags & OSD_PGSET_INFLIGHT)
			continue;
		if (urgent_only && !(e->flags & OSD_PGSET_URGENT))
			continue;
		/* our own copy first, and never under a client write in flight */
		if (osd_pgset_find(&x->missing, e->name) || osd_rec_write_pending(x, e->name))
			continue;
		if (!(e->flags & OSD_PGSET_URGENT) && !osd_rec_budget(osd))
			return;
		p = osd_push_new(osd, x->pg->pool, x->pg->pg, (uint32_t)mb->osd, x->same_since,
				 e->name, true);
		if (p == NULL)
			return;
		e->flags |= OSD_PGSET_INFLIGHT;
	}
}

/* A member misses nothing any more: it is complete again. */
static void osd_rec_member_done(struct osd *osd, struct osd_pgx *x, struct osd_pg_member *mb)
{
	struct proto_pg m;

	if (mb->recovered_sent || mb->missing.n > 0 || !mb->activated ||
	    (mb->backfill && !mb->bf_done))
		return;
	memset(&m, 0, sizeof(m));
	m.pool = x->pg->pool;
	m.pg = x->pg->pg;
	m.epoch = x->same_since;
	m.last_complete = x->last_update;
	if (osd_peer_send(osd, osd_peer_conn_to(osd, (uint32_t)mb->osd), PROTO_PG_RECOVERED, &m) ==
	    0) {
		mb->recovered_sent = true;
		if (mb->pushed)
			log_info("osd", "%s pg %u.%x: osd.%d recovered (%u objects)", osd->name,
				 x->pg->pool, x->pg->pg, mb->osd, mb->pushed);
	}
}

static void osd_rec_self_done(struct osd *osd, struct osd_pgx *x)
{
	struct store_tx *tx;

	if (x->missing.n > 0 || x->last_complete >= x->last_update ||
	    (x->self_backfill && x->auth >= 0 && !x->m[x->auth].bf_done))
		return;
	x->last_complete = x->last_update;
	x->backfill_flag = false;
	x->self_backfill = false;
	if (store_tx_create(&tx) == 0) {
		if (osd_pgx_info_tx(osd, x, tx) != 0 || osd_pgx_submit(osd, x, tx, NULL, NULL) != 0)
			store_tx_destroy(tx);
	}
	log_info("osd", "%s pg %u.%x: primary copy recovered", osd->name, x->pg->pool, x->pg->pg);
}

void osd_recovery_start(struct osd *osd, struct osd_pgx *x)
{
	uint64_t n = osd_recovery_missing(x);

	if (n > 0)
		log_info("osd", "%s pg %u.%x: recovering %llu objects", osd->name, x->pg->pool,
			 x->pg->pg, (unsigned long long)n);
}

/* Client write p99 over the last ~5 s against osd_recovery_client_p99. */
static void osd_rec_adapt(struct osd *osd, uint64_t now)
{
	struct osd_recovery *r = osd->rec;
	uint64_t target = conf_get_duration_us(osd->conf, CONF_OSD_RECOVERY_CLIENT_P99) * 1000;
	const struct hist *cur = &osd->perf->h[OSD_ST_OP_WRITE];
	struct hist win;

	if (now - r->snap_ms < 5000)
		return;
	if (target != 0 && cur->count > r->snap.count) {
		hist_init(&win);
		for (unsigned int b = 0; b < HIST_BUCKETS; b++)
			win.buckets[b] = cur->buckets[b] - r->snap.buckets[b];
		win.count = cur->count - r->snap.count;
		win.min = 0;
		win.max = cur->max;
		r->slow = hist_quantile(&win, 0.99) > target;
	} else {
		r->slow = false;
	}
	r->snap = *cur;
	r->snap_ms = now;
}

void osd_recovery_tick(struct osd *osd)
{
	struct osd_recovery *r = osd->rec;
	uint64_t now = clock_now_ms(), rate = conf_get_size(osd->conf, CONF_OSD_RECOVERY_MAX_BYTES);

	if (rate && now > r->last_refill_ms) {
		r->tokens += (int64_t)(rate * (now - r->last_refill_ms) / 1000);
		if (r->tokens > (int64_t)rate)
			r->tokens = (int64_t)rate;
	}
	r->last_refill_ms = now;
	osd_rec_adapt(osd, now);
	/* chunks to (re)post: not posted yet, or the connection they went on is gone */
	for (struct osd_push *p = r->pushes, *next; p; p = next) {
		struct osd_peer *peer = osd_peer_get(osd, p->target);
		int rc;

		next = p->next;
		if (p->posted && (peer == NULL || p->conn == peer->conn) &&
		    now - p->post_ms < OSD_PUSH_RETRY_MS)
			continue;
		if (p->posted) {
			p->posted = false;
			fab_pool_put(p->bpool, p->buf);
			p->buf = NULL;
		}
		rc = osd_push_post(osd, p);
		if (rc != 0 && rc != -EAGAIN) {
			log_warn("osd", "%s pg %u.%x: push of %s to osd.%u: %s", osd->name, p->pool,
				 p->pg, p->name, p->target, weft_strerror(rc));
			osd_push_unlink(osd, p);
		}
	}
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned int b = 0; b < OSD_PG_BUCKETS; b++) {
			for (struct osd_pg *pg = osd->pgs[b]; pg; pg = pg->hnext) {
				struct osd_pgx *x = pg->x;

				if (x == NULL || !x->primary || x->phase != OSD_PH_ACTIVE)
					continue;
				osd_rec_pulls(osd, x, pass == 0);
				for (unsigned int i = 0; i < x->nm; i++) {
					if (!x->m[i].acting || !x->m[i].activated)
						continue;
					osd_rec_pushes(osd, x, &x->m[i], pass == 0);
					if (pass == 1) {
						osd_backfill_step(osd, x, &x->m[i]);
						osd_rec_member_done(osd, x, &x->m[i]);
					}
				}
				if (pass == 1) {
					if (x->self_backfill && x->auth >= 0)
						osd_backfill_step(osd, x, &x->m[x->auth]);
					osd_rec_self_done(osd, x);
					osd_peer_update_state(osd, x);
				}
			}
		}
	}
}

/* Member / source side: PULL (push it to the asker), RECOVERED (we are complete). */
void osd_recovery_msg(struct osd_conn *conn, uint16_t type, const struct proto_pg *m)
{
	struct osd *osd = conn->osd;
	struct osd_pgx *x;

	if (mon_map_pool(&osd->map, m->pool) == NULL)
		return;
	x = osd_pgx_get(osd, m->pool, m->pg);
	if (x == NULL)
		return;
	switch (type) {
	case PROTO_PG_PULL:
		if (osd_push_new(osd, m->pool, m->pg, m->from, m->epoch, m->name, false) == NULL)
			log_error("osd", "%s pg %u.%x: no memory for a pull of %s", osd->name,
				  m->pool, m->pg, m->name);
		return;
	case PROTO_PG_RECOVERED: {
		struct store_tx *tx;

		if (m->epoch < x->fence || x->primary)
			return;
		x->last_complete = x->last_update;
		x->backfill_flag = false;
		if (store_tx_create(&tx) == 0) {
			if (osd_pgx_info_tx(osd, x, tx) != 0 ||
			    osd_pgx_submit(osd, x, tx, NULL, NULL) != 0)
				store_tx_destroy(tx);
		}
		return;
	}
	case PROTO_PG_SCAN_REQ:
	case PROTO_PG_SCAN:
		return osd_backfill_msg(conn, x, type, m);
	}
}
