/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Peering, the member's side (docs/recovery.md, "Peering"): answer a
 * primary's QUERY once our own transactions of the PG committed (and fence
 * off older intervals' ring records from then on), answer LOG_REQ from our
 * log, append the entries a primary sends before ACTIVATE (rolling back
 * the ones it says never happened) without moving last_complete, record
 * the activation (and, for a backfill, restart our log at the primary's
 * head), and, as a stray of a clean PG, delete our old copy.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd_pg.h"

static void osd_peer_answer_query(struct osd *osd, struct osd_pgx *x, struct osd_conn *conn,
				  uint32_t epoch)
{
	struct proto_pg info;

	osd_peer_info_msg(x, &info);
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

void osd_member_query(struct osd_conn *conn, struct osd_pgx *x, const struct proto_pg *m)
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
void osd_member_logreq(struct osd_conn *conn, struct osd_pgx *x, const struct proto_pg *m)
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
void osd_member_log(struct osd *osd, struct osd_pgx *x, const struct proto_pg *m)
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

void osd_member_activate(struct osd *osd, struct osd_pgx *x, const struct proto_pg *m)
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
	pg_pi_trim(&x->pi, x->les);
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
void osd_stray_delete(struct osd *osd, struct osd_pgx *x, const struct proto_pg *m)
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
