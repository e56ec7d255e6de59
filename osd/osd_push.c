/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Pushes (docs/recovery.md, "Recovery"): the PG state machine asks for an
 * object to be sent to another OSD (a member that misses it, or the
 * primary that pulled it); it goes into that OSD's replication ring with
 * one-sided writes with immediate, like a replication record, on the
 * cluster network: PUSH chunks of at most osd_max_op_size (the first one
 * truncates), the last one PUSH_LAST (sets the version), or PUSH_RM when
 * the object must not exist. The target acks each chunk once committed; a
 * chunk whose connection changed, or that waited 10 s, is posted again
 * (pushes are idempotent). A push carries the version the machine asked
 * for: if our copy has another one when it is read, the push fails and the
 * machine decides again.
 *
 * The recovery budget: at most osd_recovery_max_active pushes and pulls in
 * flight per OSD and osd_recovery_max_bytes per second, both halved per
 * level of the client-p99 feedback (osd_rthrottle.c). A client waiting
 * for an object bypasses it (the machine does not ask).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "admin/asok.h"
#include "common/clock.h"
#include "common/log.h"
#include "osd/osd_perf.h"
#include "osd/osd_pg.h"
#include "osd/osd_rthrottle.h"

#define OSD_PUSH_RETRY_MS 10000u

struct osd_push {
	struct osd_push *next;
	struct osd *osd;
	uint32_t pool, pg, target, epoch;
	bool tracked; /* the primary's (pg_push_done when it ends); else a pull's answer */
	uint64_t off, size, version;
	bool posted, last;
	bool reading; /* the chunk is being read into buf (store_read_start) */
	bool gone;    /* dropped while reading: the read's callback frees it */
	size_t hl;    /* the record header's bytes at the start of buf */
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
	struct osd_push *gone; /* dropped while their read runs: freed by its callback */
	bool due;	  /* a push to post: osd_push_run from the loop */
	uint32_t active;  /* budget taken: pushes + pulls in flight */
	int64_t tokens;	  /* bytes we may still push this second; negative = in debt */
	uint64_t last_refill_ms;
	struct osd_rthrottle thr; /* client p99 feedback (osd_rthrottle.h) */
};

int osd_push_init(struct osd *osd)
{
	osd->rec = calloc(1, sizeof(*osd->rec));
	return osd->rec == NULL ? -ENOMEM : 0;
}

static void osd_push_free(struct osd_push *p)
{
	if (p->reading) {
		struct osd_recovery *r = p->osd->rec;

		p->gone = true; /* the device still writes into buf */
		p->next = r->gone;
		r->gone = p;
		return;
	}
	if (p->buf)
		fab_pool_put(p->bpool, p->buf);
	free(p);
}

void osd_push_fini(struct osd *osd)
{
	if (osd->rec == NULL)
		return;
	/* reads were abandoned (store_reads_abandon): no callback frees the gone ones */
	for (int l = 0; l < 2; l++) {
		struct osd_push **head = l == 0 ? &osd->rec->pushes : &osd->rec->gone;

		while (*head) {
			struct osd_push *p = *head;

			*head = p->next;
			p->buf = NULL; /* the pools go with the domain */
			free(p);
		}
	}
	free(osd->rec);
	osd->rec = NULL;
}

bool osd_push_budget(struct osd *osd, int take)
{
	struct osd_recovery *r = osd->rec;
	uint32_t max = (uint32_t)conf_get_int(osd->conf, CONF_OSD_RECOVERY_MAX_ACTIVE);
	uint64_t rate = conf_get_size(osd->conf, CONF_OSD_RECOVERY_MAX_BYTES);

	if (take < 0) {
		if (r->active > 0)
			r->active--;
		return true;
	}
	if (r->active >= osd_rthrottle_max_active(&r->thr, max))
		return false;
	if (rate != 0 && r->tokens <= 0)
		return false; /* each posted chunk is charged (osd_push_post) */
	r->active++;
	return true;
}

int osd_push_start(struct osd *osd, struct pg *m, int32_t to, const char *name, uint64_t version,
		   uint32_t epoch, bool tracked)
{
	size_t nl = strlen(name) + 1;
	struct osd_push *p = calloc(1, sizeof(*p) + nl);

	if (p == NULL || to < 0)
		return -ENOMEM;
	p->osd = osd;
	p->pool = m->pool;
	p->pg = m->id;
	p->target = (uint32_t)to;
	p->epoch = epoch;
	p->tracked = tracked;
	p->version = version;
	memcpy(p->name, name, nl);
	p->next = osd->rec->pushes;
	osd->rec->pushes = p;
	osd->rec->due = true; /* posted from the loop (osd_push_run), not inside the machine */
	return 0;
}

static void osd_push_unlink(struct osd *osd, struct osd_push *p)
{
	for (struct osd_push **pp = &osd->rec->pushes; *pp; pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			osd_push_free(p);
			return;
		}
	}
}

/* The push is over: the machine hears how (tracked ones), then it goes. */
static void osd_push_end(struct osd *osd, struct osd_push *p, int rc)
{
	struct pg *m = p->tracked ? osd_pgm_get(osd, p->pool, p->pg) : NULL;
	int32_t target = (int32_t)p->target;
	char name[PROTO_OBJ_NAME_MAX + 1];

	memcpy(name, p->name, strlen(p->name) + 1);
	osd_push_unlink(osd, p);
	if (m != NULL)
		pg_push_done(m, target, name, rc);
}

/* p's chunk is in its buffer: into the target's ring. 0 posted, -EAGAIN retry later. */
static int osd_push_send(struct osd *osd, struct osd_push *p)
{
	struct fab_sge src = {p->buf, (uint32_t)(p->hl + p->chunk), p->sge.mr};
	int rc = osd_repl_post_raw(osd, p->target, &src, &p->ring_off);

	if (rc != 0) {
		fab_pool_put(p->bpool, p->buf);
		p->buf = NULL;
		return rc;
	}
	p->posted = true;
	osd->rec->tokens -= (int64_t)(p->hl + p->chunk);
	p->conn = osd_peer_get(osd, p->target)->conn;
	p->post_ms = clock_now_ms();
	return 0;
}

/* A push that cannot go on ends (-ESTALE: the machine decides again, not worth a line). */
static void osd_push_failed(struct osd *osd, struct osd_push *p, int rc)
{
	if (rc != -ESTALE)
		log_warn("osd", "%s pg %u.%x: push of %s to osd.%u: %s", osd->name, p->pool, p->pg,
			 p->name, p->target, weft_strerror(rc));
	osd_push_end(osd, p, rc);
}

static void osd_push_read_cb(void *arg, int rc, uint64_t got)
{
	struct osd_push *p = arg;
	struct osd *osd = p->osd;
	struct osd_pg *pg;

	osd->store_pending--;
	p->reading = false;
	if (p->gone) {
		for (struct osd_push **pp = &osd->rec->gone; *pp; pp = &(*pp)->next) {
			if (*pp == p) {
				*pp = p->next;
				break;
			}
		}
		osd_push_free(p);
		return;
	}
	/* writes of the object held back while it was read may go (osd_push_reading) */
	pg = osd_pg_get(osd, p->pool, p->pg);
	if (pg != NULL)
		osd_pg_kick_later(osd, pg);
	if (rc == 0 && got != p->chunk)
		rc = -ESTALE; /* changed under us */
	if (rc == 0) {
		rc = osd_push_send(osd, p);
	} else {
		fab_pool_put(p->bpool, p->buf);
		p->buf = NULL;
	}
	if (rc != 0 && rc != -EAGAIN) /* -EAGAIN: the tick posts it again */
		osd_push_failed(osd, p, rc);
}

/*
 * Build and post the next chunk of p. 0 posted or being read (the read's
 * callback posts it: the reactor never waits for the device, docs/osd.md),
 * -EAGAIN retry later, else failed.
 */
static int osd_push_post(struct osd *osd, struct osd_push *p)
{
	uint64_t pgk = osd_pg_key(p->pool, p->pg), got = 0, have = 0;
	struct osd_rec_hdr h = {.pool = p->pool, .pg = p->pg, .epoch = p->epoch};
	struct store_stat st;
	size_t hl;
	int rc;

	if (p->off == 0) {
		rc = store_stat(osd->store, pgk, p->name, &st);
		if (rc != 0 && rc != -ENOENT)
			return rc;
		if (rc == 0 && osd_pg_obj_version(osd, pgk, p->name, &have) != 0)
			have = 1; /* written before versions were kept: any non-zero */
		if (have != p->version)
			return -ESTALE; /* changed since it was asked: the machine decides again */
		p->size = rc == 0 ? st.size : UINT64_MAX; /* UINT64_MAX: a removal */
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
	p->last = h.op != OSD_REC_PUSH;
	rc = osd_rec_hdr_encode(&h, NULL, 0, &hl);
	if (rc != 0)
		return rc;
	if (p->buf == NULL) {
		p->buf = osd_buf_get(osd, hl + p->chunk, &p->bpool, &p->sge);
		if (p->buf == NULL)
			return -EAGAIN;
	}
	rc = osd_rec_hdr_encode(&h, p->buf, hl, &hl);
	p->hl = hl;
	if (rc == 0 && p->chunk > 0) {
		rc = store_read_start(osd->store, pgk, p->name, p->off, p->chunk, (char *)p->buf + hl,
				      p->chunk, osd_push_read_cb, p, &got);
		if (rc == 0) {
			p->reading = true;
			osd->store_pending++;
			return 0;
		}
		if (rc == 1) /* no device read was needed */
			rc = got == p->chunk ? 0 : -ESTALE;
	}
	if (rc == 0)
		return osd_push_send(osd, p);
	fab_pool_put(p->bpool, p->buf);
	p->buf = NULL;
	return rc;
}

/* A push's chunk was committed by its target (status 0) or refused. */
bool osd_push_acked(struct osd *osd, uint32_t peer_id, const struct proto_repl_ack *m)
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
		osd_push_end(osd, p, m->status);
		return true;
	}
	osd->rec_bytes += p->chunk;
	if (!p->last) {
		p->off += p->chunk;
		osd->rec->due = true; /* the next chunk goes from the loop */
		return true;
	}
	osd->rec_objects++;
	osd_push_end(osd, p, 0);
	return true;
}

/* The PG's interval ended here: its pushes stop (a push of a new interval is asked again). */
void osd_push_interval(struct osd *osd, struct pg *m)
{
	for (struct osd_push **pp = &osd->rec->pushes; *pp;) {
		struct osd_push *p = *pp;

		if (p->pool == m->pool && p->pg == m->id) {
			*pp = p->next;
			osd_push_free(p);
			continue;
		}
		pp = &p->next;
	}
}

/* Client write p99 of the last window against osd_recovery_client_p99. */
static void osd_push_adapt(struct osd *osd, uint64_t now)
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

/*
 * Post every chunk not posted yet, and again those whose connection is gone
 * or that waited OSD_PUSH_RETRY_MS. A chunk waits only when no buffer or
 * ring space is free (-EAGAIN): the tick tries again.
 */
static void osd_push_post_all(struct osd *osd, uint64_t now)
{
	struct osd_recovery *r = osd->rec;

	r->due = false;
	for (struct osd_push *p = r->pushes, *next; p; p = next) {
		struct osd_peer *peer = osd_peer_get(osd, p->target);
		int rc;

		next = p->next;
		if (p->reading)
			continue;
		if (p->posted && (peer == NULL || p->conn == peer->conn) &&
		    now - p->post_ms < OSD_PUSH_RETRY_MS)
			continue;
		if (p->posted) {
			p->posted = false;
			fab_pool_put(p->bpool, p->buf);
			p->buf = NULL;
		}
		rc = osd_push_post(osd, p);
		if (rc != 0 && rc != -EAGAIN)
			osd_push_failed(osd, p, rc);
	}
}

void osd_push_tick(struct osd *osd)
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
	osd_push_adapt(osd, now);
	osd_push_post_all(osd, now);
}

bool osd_push_reading(const struct osd *osd, uint32_t pool, uint32_t pg, const char *name)
{
	if (osd->rec == NULL)
		return false;
	for (const struct osd_push *p = osd->rec->pushes; p; p = p->next)
		if (p->reading && p->pg == pg && p->pool == pool && !strcmp(p->name, name))
			return true;
	return false;
}

bool osd_push_due(const struct osd *osd)
{
	return osd->rec != NULL && osd->rec->due;
}

void osd_push_run(struct osd *osd)
{
	osd_push_post_all(osd, clock_now_ms());
}

/* The "recovery" member of perf dump (osd_admin.c). */
void osd_push_perf(struct osd *osd, struct asok_out *out)
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
		    (unsigned long long)target_us, (unsigned long long)r->thr.windows,
		    (unsigned long long)r->thr.slow_windows,
		    (unsigned long long)(r->thr.last_p99_ns / 1000),
		    (unsigned long long)r->thr.last_count);
}
