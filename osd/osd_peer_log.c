/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Peering, the logs (docs/recovery.md, "Peering" steps 5-7): fetch the
 * authoritative copy's log (LOG_REQ -> LOG, one message at a time, one
 * fetch per OSD at a time), roll back our own entries it does not have,
 * append the ones we lack and mark their objects missing; fetch a
 * divergent member's log to find the entries to roll back there; and send
 * each member the entries it lacks before ACTIVATE, which also fills its
 * missing set.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd_pg.h"

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


static struct osd_fetch osd_fetch_cur = {.from = -1}; /* one GETLOG at a time per OSD */

void osd_fetch_reset(void)
{
	for (uint32_t i = 0; i < osd_fetch_cur.n; i++)
		free(osd_fetch_cur.e[i].name);
	free(osd_fetch_cur.e);
	memset(&osd_fetch_cur, 0, sizeof(osd_fetch_cur));
	osd_fetch_cur.from = -1;
}


struct osd_pgx *osd_fetch_pg(void)
{
	return osd_fetch_cur.x;
}

int osd_fetch_from(void)
{
	return osd_fetch_cur.from;
}

void osd_fetch_begin(struct osd_pgx *x, int from)
{
	osd_fetch_cur.x = x;
	osd_fetch_cur.from = from;
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

static int osd_own_missing_one(void *arg, uint64_t seq, const void *entry, size_t len)
{
	struct osd_pgx *x = arg;
	static __thread struct proto_pg_log_entry e;

	(void)seq;
	if (osd_pglog_entry_decode(entry, len, &e) != 0)
		return 0;
	/* a rolled-back entry's object was to be recovered as well */
	return pg_set_add(&x->missing, e.name, 0, 0) != 0;
}

/*
 * We are the authoritative copy but incomplete (an interval ended while we
 * were still being recovered): every object named after our last_complete
 * is missing here again. Without this the empty missing set would make us
 * declare ourselves complete.
 */
int osd_peer_own_missing(struct osd *osd, struct osd_pgx *x)
{
	uint64_t pgk = osd_pg_key(x->pg->pool, x->pg->pg);
	int rc;

	if (x->last_complete >= x->last_update || x->backfill_flag)
		return 0;
	rc = store_pglog_read(osd->store, pgk, x->last_complete + 1, osd_own_missing_one, x);
	if (rc < 0) {
		log_error("osd", "%s pg %u.%x: reading our log for what we miss: %s", osd->name,
			  x->pg->pool, x->pg->pg, weft_strerror(rc));
		return rc;
	}
	log_info("osd", "%s pg %u.%x: the newest copy is ours but incomplete: %u objects after "
			"v%llx missing", osd->name, x->pg->pool, x->pg->pg, x->missing.n,
		 (unsigned long long)x->last_complete);
	return 0;
}

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
			c->rc = pg_set_add(&c->x->missing, e.name, 0, 0);
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
			rc = pg_set_add(&x->missing, osd_fetch_cur.e[i].name, 0, 0);
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
			pg_set_add(&mb->missing, e->name, e->v, PG_SET_REMOVE);
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
void osd_peer_next_fetch(struct osd *osd, struct osd_pgx *x)
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
		osd_fetch_begin(x, (int)i);
		osd_fetch_send(osd, x);
		return;
	}
	osd_peer_activate(osd, x);
}

void osd_primary_log(struct osd *osd, struct osd_pgx *x, int from, const struct proto_pg *m)
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
		c->rc = c->rc ? c->rc : pg_set_add(&c->mb->missing, e.name, seq, 0);
	return c->rc != 0;
}

void osd_peer_activate_member(struct osd *osd, struct osd_pgx *x, struct osd_pg_member *mb)
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
			const struct pg_set_ent *e = &mb->missing.e[i];
			struct proto_pg_log_entry le = {.version = e->version,
							.op = PROTO_PG_LOG_ROLLBACK};

			if (e->name == NULL || (e->flags & PG_SET_TOMB) ||
			    !(e->flags & PG_SET_REMOVE))
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
		mb->missing.e[i].flags &= ~PG_SET_REMOVE;
}
