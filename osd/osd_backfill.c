/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Backfill (docs/recovery.md, "Backfill"): a member whose copy the log
 * cannot bring up to date (new, emptied, or behind the log's tail) is
 * rebuilt by comparing listings. The primary asks the member for its
 * objects in name order (SCAN_REQ -> SCAN, a batch at a time), lists its
 * own objects of the same range, and queues a push for every object that
 * is missing there or has another version, and a removal for every object
 * that should not be there. Objects up to bf_pos are done; a client op on
 * a later object waits for that object to be copied first. The same walk,
 * reversed, rebuilds a primary whose own copy is too far behind: it scans
 * the authoritative copy and pulls what differs.
 *
 * The SCAN answer also serves scrub (osd_scrub.c): with the DEEP flag every
 * object's data is read and its crc32c returned.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/crc32c.h"
#include "common/log.h"
#include "osd/osd_pg.h"

#define OSD_BF_BATCH 128u
#define OSD_BF_QUEUE 256u /* pending copies before the next batch is scanned */
#define OSD_BF_RESEND_MS 5000u

struct osd_scan_ctx {
	struct osd *osd;
	uint64_t pgk;
	bool deep;
	struct proto_enc enc;
	size_t limit;
	uint32_t n, max;
	bool full;
	const char *upto; /* local listing: stop after this name (NULL = no bound) */
	struct proto_pg_scan_entry *out;
	uint32_t nout, capout;
};

/* Version, size and (deep) crc32c of one local object. */
int osd_scan_entry(struct osd *osd, uint64_t pgk, const char *name, bool deep,
		   struct proto_pg_scan_entry *e)
{
	struct store_stat st;
	int rc;

	memset(e, 0, sizeof(*e));
	e->name_len = strlen(name);
	memcpy(e->name, name, e->name_len + 1);
	rc = store_stat(osd->store, pgk, name, &st);
	if (rc != 0)
		return rc;
	e->size = st.size;
	if (osd_pg_obj_version(osd, pgk, name, &e->version) != 0)
		e->version = 0;
	if (deep && st.size > 0) {
		size_t chunk = st.size < (1u << 20) ? st.size : (1u << 20);
		char *buf = malloc(chunk);
		uint64_t off = 0, got;

		if (buf == NULL)
			return -ENOMEM;
		e->crc = 0;
		while (off < st.size) {
			rc = store_read(osd->store, pgk, name, off, chunk, buf, &got);
			if (rc != 0 || got == 0)
				break;
			e->crc = crc32c(e->crc, buf, got);
			off += got;
		}
		free(buf);
		if (rc == -WEFT_E_CORRUPT || rc == -EIO) {
			e->crc = 0xffffffffu; /* unreadable: never equal to a good copy's */
			e->version = UINT64_MAX;
			rc = 0;
		}
	}
	return rc;
}

static int osd_scan_one(void *arg, const char *name)
{
	struct osd_scan_ctx *c = arg;
	static __thread struct proto_pg_scan_entry e;

	if (c->upto && strcmp(name, c->upto) > 0)
		return 1;
	if (c->n == c->max) {
		c->full = true;
		return 1;
	}
	if (osd_scan_entry(c->osd, c->pgk, name, c->deep, &e) != 0)
		return 0; /* removed meanwhile */
	if (c->out != NULL) {
		if (c->nout == c->capout) {
			uint32_t cap = c->capout ? c->capout * 2 : 64;
			struct proto_pg_scan_entry *n = realloc(c->out, cap * sizeof(*n));

			if (n == NULL)
				return 1;
			c->out = n;
			c->capout = cap;
		}
		c->out[c->nout++] = e;
		c->n++;
		return 0;
	}
	{
		size_t before = c->enc.off;

		proto_pg_scan_entry_put(&c->enc, &e);
		if (c->enc.err != 0 || c->enc.off > c->limit) {
			c->enc.off = before;
			c->enc.err = 0;
			c->full = true;
			return 1;
		}
	}
	c->n++;
	return 0;
}

/* Our objects after `after` up to `upto` (inclusive; NULL = all) into *out. */
int osd_scan_local(struct osd *osd, struct osd_pgx *x, const char *after, const char *upto,
		   bool deep, struct proto_pg_scan_entry **out, uint32_t *n_out)
{
	struct osd_scan_ctx c = {.osd = osd, .pgk = osd_pg_key(x->pg->pool, x->pg->pg),
				 .deep = deep, .max = UINT32_MAX, .upto = upto};
	int rc;

	c.out = malloc(sizeof(*c.out));
	if (c.out == NULL)
		return -ENOMEM;
	c.capout = 1;
	rc = store_list(osd->store, c.pgk, after ? after : "", osd_scan_one, &c);
	if (rc < 0) {
		free(c.out);
		return rc;
	}
	*out = c.out;
	*n_out = c.nout;
	return 0;
}

/* SCAN_REQ on any copy: our objects after m->name, as many as fit one SCAN. */
static void osd_scan_answer(struct osd_conn *conn, struct osd_pgx *x, const struct proto_pg *m)
{
	struct osd *osd = conn->osd;
	struct osd_scan_ctx c = {.osd = osd, .pgk = osd_pg_key(x->pg->pool, x->pg->pg),
				 .deep = (m->flags & PROTO_PG_SCAN_F_DEEP) != 0, .max = m->max};
	struct proto_pg r;
	uint8_t *buf = malloc(osd->msg_size);
	int rc;

	if (buf == NULL)
		return;
	c.limit = osd->msg_size - 96;
	proto_enc_init(&c.enc, buf, osd->msg_size);
	rc = store_list(osd->store, c.pgk, m->name, osd_scan_one, &c);
	memset(&r, 0, sizeof(r));
	r.pool = m->pool;
	r.pg = m->pg;
	r.epoch = m->epoch;
	r.count = c.n;
	r.entries = buf;
	r.entries_len = (uint32_t)c.enc.off;
	r.flags = c.full || rc < 0 ? 0 : PROTO_PG_F_LAST;
	osd_peer_send(osd, conn, PROTO_PG_SCAN, &r);
	free(buf);
}

static void osd_bf_remove_local(struct osd *osd, struct osd_pgx *x, const char *name)
{
	struct store_tx *tx;

	if (store_tx_create(&tx) != 0)
		return;
	if (store_tx_remove(tx, osd_pg_key(x->pg->pool, x->pg->pg), name) != 0 ||
	    osd_pgx_submit(osd, x, tx, NULL, NULL) != 0)
		store_tx_destroy(tx);
}

/* One scanned batch of mb's (or, self-backfill, the auth's) objects against ours. */
static void osd_bf_merge(struct osd *osd, struct osd_pgx *x, struct osd_pg_member *mb, bool self)
{
	const char *hi = mb->bf_remote_last || mb->bf_nremote == 0
			     ? NULL
			     : mb->bf_remote[mb->bf_nremote - 1].name;
	struct proto_pg_scan_entry *loc = NULL;
	uint32_t nloc = 0, i = 0, k = 0;
	struct pg_set *dst = self ? &x->missing : &mb->missing;

	if (osd_scan_local(osd, x, mb->bf_pos, hi, false, &loc, &nloc) != 0)
		return; /* tried again next tick */
	while (i < nloc || k < mb->bf_nremote) {
		int cmp = i == nloc		? 1
			  : k == mb->bf_nremote ? -1
						: strcmp(loc[i].name, mb->bf_remote[k].name);

		if (cmp == 0) {
			if (loc[i].version != mb->bf_remote[k].version ||
			    loc[i].size != mb->bf_remote[k].size)
				pg_set_add(dst, loc[i].name, 0, 0);
			i++;
			k++;
		} else if (cmp < 0) { /* only here */
			if (self)
				osd_bf_remove_local(osd, x, loc[i].name);
			else
				pg_set_add(dst, loc[i].name, 0, 0);
			i++;
		} else { /* only there */
			pg_set_add(dst, mb->bf_remote[k].name, 0, 0);
			k++;
		}
	}
	free(loc);
	free(mb->bf_pos);
	mb->bf_pos = hi ? strdup(hi) : NULL;
	if (hi == NULL) {
		mb->bf_done = true;
		log_info("osd", "%s pg %u.%x: backfill scan of osd.%d finished", osd->name,
			 x->pg->pool, x->pg->pg, mb->osd);
	}
	free(mb->bf_remote);
	mb->bf_remote = NULL;
	mb->bf_nremote = 0;
	mb->bf_remote_last = false;
}

void osd_backfill_step(struct osd *osd, struct osd_pgx *x, struct osd_pg_member *mb)
{
	bool self = x->self_backfill && x->auth >= 0 && mb == &x->m[x->auth];
	struct proto_pg q;
	uint64_t now = clock_now_ms();

	if ((!self && !mb->backfill) || mb->bf_done)
		return;
	if (mb->bf_remote != NULL) {
		osd_bf_merge(osd, x, mb, self);
		return;
	}
	if ((self ? x->missing.n : mb->missing.n) > OSD_BF_QUEUE)
		return; /* let the copies catch up first */
	if (mb->bf_scan_inflight && now - mb->bf_scan_ms < OSD_BF_RESEND_MS)
		return;
	memset(&q, 0, sizeof(q));
	q.pool = x->pg->pool;
	q.pg = x->pg->pg;
	q.epoch = x->same_since;
	q.max = OSD_BF_BATCH;
	if (mb->bf_pos) {
		q.name_len = strlen(mb->bf_pos);
		memcpy(q.name, mb->bf_pos, q.name_len + 1);
	}
	if (osd_peer_send(osd, osd_peer_conn_to(osd, (uint32_t)mb->osd), PROTO_PG_SCAN_REQ, &q) ==
	    0) {
		mb->bf_scan_inflight = true;
		mb->bf_scan_ms = now;
	}
}

static void osd_bf_scanned(struct osd *osd, struct osd_pgx *x, const struct proto_pg *m)
{
	static __thread struct proto_pg_scan_entry e;
	struct osd_pg_member *mb = NULL;
	size_t off = 0;

	for (unsigned int i = 0; i < x->nm; i++)
		if (x->m[i].osd == (int32_t)m->from)
			mb = &x->m[i];
	if (mb == NULL || !mb->bf_scan_inflight || m->epoch != x->same_since)
		return;
	mb->bf_scan_inflight = false;
	mb->bf_remote = calloc(m->count ? m->count : 1, sizeof(*mb->bf_remote));
	if (mb->bf_remote == NULL)
		return;
	mb->bf_nremote = 0;
	while (mb->bf_nremote < m->count && proto_pg_scan_entry_next(m, &off, &e))
		mb->bf_remote[mb->bf_nremote++] = e;
	mb->bf_remote_last = (m->flags & PROTO_PG_F_LAST) != 0;
	osd_backfill_step(osd, x, mb);
	(void)osd;
}

void osd_backfill_msg(struct osd_conn *conn, struct osd_pgx *x, uint16_t type,
		      const struct proto_pg *m)
{
	if (type == PROTO_PG_SCAN_REQ)
		return osd_scan_answer(conn, x, m);
	if (!x->primary)
		return;
	if (osd_scrub_scanned(conn->osd, x, m))
		return;
	osd_bf_scanned(conn->osd, x, m);
}
