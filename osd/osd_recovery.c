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
 * at most osd_recovery_max_bytes per second, both halved per level of the
 * client-p99 feedback (osd_rthrottle.c: a 5 s window whose client write
 * p99 exceeds osd_recovery_client_p99 raises the level, a quiet one lowers it).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd_perf.h"
#include "osd/osd_pg.h"
#include "osd/osd_rthrottle.h"

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
	struct osd_rthrottle thr; /* client p99 feedback (osd_rthrottle.h) */
};

int osd_pg_init(struct osd *osd)
{
	osd->rec = calloc(1, sizeof(*osd->rec));
	if (osd->rec == NULL)
		return -ENOMEM;
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

#define OSD_REC_SIZE_SAMPLES 4096u /* store_stat calls per PG and report, at most */

/*
 * Bytes still to move: the size of this OSD's copy of each missing object
 * (the push source; for what the primary itself misses, its older copy if
 * any). Beyond OSD_REC_SIZE_SAMPLES objects the average of those sampled
 * stands in for the rest, so a report stays cheap with many missing.
 */
uint64_t osd_recovery_missing_bytes(struct osd *osd, const struct osd_pgx *x)
{
	uint64_t pgk = osd_pg_key(x->pg->pool, x->pg->pg), bytes = 0, sampled = 0, total = 0;

	for (int i = -1; i < (int)x->nm; i++) {
		const struct pg_set *set = i < 0 ? &x->missing : &x->m[i].missing;
		struct pg_set_ent *e;
		uint32_t it = 0;

		if (i >= 0 && !x->m[i].acting)
			continue;
		total += set->n;
		while (sampled < OSD_REC_SIZE_SAMPLES && (e = pg_set_next(set, &it)) != NULL) {
			struct store_stat st;

			if (store_stat(osd->store, pgk, e->name, &st) == 0)
				bytes += st.size;
			sampled++;
		}
	}
	if (sampled > 0 && total > sampled)
		bytes += bytes / sampled * (total - sampled);
	return bytes;
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
		if (x->missing.e[i].name && (x->missing.e[i].flags & PG_SET_INFLIGHT) &&
		    !(x->missing.e[i].flags & PG_SET_TOMB))
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
			struct pg_set_ent *e = mb ? pg_set_find(&mb->missing, p->name) : NULL;

			if (e)
				e->flags &= ~PG_SET_INFLIGHT; /* tried again later */
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
			pg_set_del(&mb->missing, p->name);
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
	struct pg_set_ent *e;

	if (x == NULL || !x->primary || !whole)
		return;
	e = pg_set_find(&x->missing, name);
	if (e == NULL)
		return;
	if (e->flags & PG_SET_INFLIGHT)
		osd->rec->active--;
	pg_set_del(&x->missing, name);
	osd_pg_kick(x->pg);
}

bool osd_pg_obj_ready(struct osd *osd, struct osd_pg *pg, const char *name)
{
	struct osd_pgx *x = pg->x;
	bool ready = true;
	struct pg_set_ent *e;

	(void)osd;
	if (x == NULL || !x->primary)
		return true;
	if ((e = pg_set_find(&x->missing, name)) != NULL) {
		e->flags |= PG_SET_URGENT;
		ready = false;
	}
	if (x->self_backfill) {
		struct osd_pg_member *a = x->auth >= 0 ? &x->m[x->auth] : NULL;

		if (a && !a->bf_done && (a->bf_pos == NULL || strcmp(name, a->bf_pos) > 0)) {
			pg_set_add(&x->missing, name, 0, PG_SET_URGENT);
			ready = false;
		}
	}
	for (unsigned int i = 0; i < x->nm; i++) {
		struct osd_pg_member *mb = &x->m[i];

		if (!mb->acting)
			continue;
		if ((e = pg_set_find(&mb->missing, name)) != NULL) {
			e->flags |= PG_SET_URGENT;
			ready = false;
		} else if (mb->backfill && !mb->bf_done &&
			   (mb->bf_pos == NULL || strcmp(name, mb->bf_pos) > 0)) {
			/* not backfilled yet: copy it now, then the op goes to every member */
			pg_set_add(&mb->missing, name, 0, PG_SET_URGENT);
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

	max = osd_rthrottle_max_active(&r->thr, (uint32_t)max);
	if (r->active >= max)
		return false;
	return rate == 0 || r->tokens > 0; /* each posted chunk is charged (osd_push_post) */
}

static void osd_rec_pulls(struct osd *osd, struct osd_pgx *x, bool urgent_only)
{
	uint64_t now = clock_now_ms();
	int src = osd_rec_source(x);
	uint32_t i = 0, unfound = src < 0 ? x->missing.n : 0;
	struct pg_set_ent *e;

	if (unfound != x->unfound) {
		/* counted in PG_STATS (weft health); logged when the count changes */
		e = pg_set_next(&x->missing, &i);
		if (unfound > 0 && e != NULL)
			log_warn("osd", "%s pg %u.%x: %u objects unfound: no complete copy is up "
					"(e.g. %s); they wait for an OSD that holds them", osd->name,
				 x->pg->pool, x->pg->pg, unfound, e->name);
		else if (x->unfound > 0)
			log_info("osd", "%s pg %u.%x: unfound objects have a source again",
				 osd->name, x->pg->pool, x->pg->pg);
		x->unfound = unfound;
		i = 0;
	}
	while ((e = pg_set_next(&x->missing, &i)) != NULL) {
		struct proto_pg m;

		if (e->flags & PG_SET_INFLIGHT) {
			if (now - e->version < OSD_PULL_RETRY_MS)
				continue;
			e->flags &= ~PG_SET_INFLIGHT; /* lost: ask again */
			osd->rec->active--;
		}
		if (urgent_only && !(e->flags & PG_SET_URGENT))
			continue;
		if (src < 0)
			return; /* unfound (counted above) */
		if (!(e->flags & PG_SET_URGENT) && !osd_rec_budget(osd))
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
		e->flags |= PG_SET_INFLIGHT;
		e->version = now; /* for a pull in flight: when it was asked */
		osd->rec->active++;
	}
}

static void osd_rec_pushes(struct osd *osd, struct osd_pgx *x, struct osd_pg_member *mb,
			   bool urgent_only)
{
	uint32_t i = 0;
	struct pg_set_ent *e;

	while ((e = pg_set_next(&mb->missing, &i)) != NULL) {
		struct osd_push *p;

		if (e->flags & PG_SET_INFLIGHT)
			continue;
		if (urgent_only && !(e->flags & PG_SET_URGENT))
			continue;
		/* our own copy first, and never under a client write in flight */
		if (pg_set_find(&x->missing, e->name) || osd_rec_write_pending(x, e->name))
			continue;
		if (!(e->flags & PG_SET_URGENT) && !osd_rec_budget(osd))
			return;
		p = osd_push_new(osd, x->pg->pool, x->pg->pg, (uint32_t)mb->osd, x->same_since,
				 e->name, true);
		if (p == NULL)
			return;
		e->flags |= PG_SET_INFLIGHT;
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

/* Client write p99 of the last window against osd_recovery_client_p99. */
static void osd_rec_adapt(struct osd *osd, uint64_t now)
{
	struct osd_recovery *r = osd->rec;
	uint64_t target = conf_get_duration_us(osd->conf, CONF_OSD_RECOVERY_CLIENT_P99) * 1000;
	uint32_t before = r->thr.level;
	uint32_t max = (uint32_t)conf_get_int(osd->conf, CONF_OSD_RECOVERY_MAX_ACTIVE);

	if (!osd_rthrottle_tick(&r->thr, &osd->perf->h[OSD_ST_OP_WRITE], now, target))
		return;
	if (r->thr.level != before)
		log_info("osd", "%s: recovery throttle level %u -> %u (client write p99 %.1f ms "
				"over %llu writes, target %.1f ms): %u in flight at most",
			 osd->name, before, r->thr.level, (double)r->thr.last_p99_ns / 1e6,
			 (unsigned long long)r->thr.last_count, (double)target / 1e6,
			 osd_rthrottle_max_active(&r->thr, max));
}

/* The "recovery" member of perf dump (osd_admin.c). */
void osd_recovery_perf(struct osd *osd, struct asok_out *out)
{
	const struct osd_recovery *r = osd->rec;
	uint32_t max = (uint32_t)conf_get_int(osd->conf, CONF_OSD_RECOVERY_MAX_ACTIVE);
	uint64_t rate = conf_get_size(osd->conf, CONF_OSD_RECOVERY_MAX_BYTES);
	uint64_t target_us = conf_get_duration_us(osd->conf, CONF_OSD_RECOVERY_CLIENT_P99);

	if (r == NULL) {
		asok_printf(out, "null");
		return;
	}
	asok_printf(out,
		    "{\"active\": %u, \"max_active\": %u, \"max_bytes_per_sec\": %llu, "
		    "\"objects\": %llu, \"bytes\": %llu, \"client_p99\": {\"throttled\": %s, "
		    "\"level\": %u, \"target_us\": %llu, \"windows\": %llu, "
		    "\"slow_windows\": %llu, \"last_p99_us\": %llu, \"last_writes\": %llu}}",
		    r->active, osd_rthrottle_max_active(&r->thr, max),
		    (unsigned long long)osd_rthrottle_rate(&r->thr, rate),
		    (unsigned long long)osd->rec_objects, (unsigned long long)osd->rec_bytes,
		    r->thr.level > 0 ? "true" : "false", r->thr.level,
		    (unsigned long long)target_us,
		    (unsigned long long)r->thr.windows, (unsigned long long)r->thr.slow_windows,
		    (unsigned long long)(r->thr.last_p99_ns / 1000),
		    (unsigned long long)r->thr.last_count);
}

void osd_recovery_tick(struct osd *osd)
{
	struct osd_recovery *r = osd->rec;
	uint64_t now = clock_now_ms(), rate = conf_get_size(osd->conf, CONF_OSD_RECOVERY_MAX_BYTES);

	rate = osd_rthrottle_rate(&r->thr, rate);
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
