/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Client ops on the primary (docs/osd.md, "The op pipeline").
 *
 * Each PG keeps its ops in arrival order. A write moves NEW -> PULLING
 * (one-sided read of the client's payload, unless inline) -> READY ->
 * SUBMITTED (version assigned in queue order; the replica records and the
 * local transaction start together) -> replied once the local commit and
 * every replica still in the acting set have acknowledged. Writes are
 * ordered by version even when their pulls finish out of order; a read or
 * stat waits for earlier unfinished ops on the same object, and a write is
 * not submitted while an earlier read of its object still reads the device
 * (READING: the store's reads do not block the reactor), so ops on one
 * object apply in the order they arrived.
 *
 * Two things move an op: the PG's kick (osd_pg_kick: whatever can start,
 * starts, in queue order) and an event (osd_op_event: something the op
 * waited for happened). Every completion, commit, ack and failure arrives
 * as an event; the table above osd_op_event says what each does.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd.h"
#include "osd/osd_perf.h"
#include "placement/plc_map.h"
#include "proto/hello.h"

static bool osd_op_is_write(uint16_t op)
{
	return op == PROTO_OP_WRITE || op == PROTO_OP_WRITE_FULL || op == PROTO_OP_REMOVE ||
	       op == PROTO_OP_TRUNCATE || op == PROTO_OP_CMP_WRITE_FULL || op == PROTO_OP_ZERO;
}

/* The record header's length: the payload's, or zero's range (it has no payload). */
static uint64_t osd_op_rec_length(const struct osd_op *op)
{
	if (op->op == PROTO_OP_WRITE || op->op == PROTO_OP_WRITE_FULL || op->op == PROTO_OP_ZERO)
		return op->length;
	return 0;
}

/* Ops that carry a payload the primary pulls (or gets inline). */
static bool osd_op_has_data(uint16_t op)
{
	return op == PROTO_OP_WRITE || op == PROTO_OP_WRITE_FULL || op == PROTO_OP_CMP_WRITE_FULL;
}

static void osd_op_maybe_free(struct osd_op *op)
{
	if (op->state != OSD_OP_DONE || op->refs > 0)
		return;
	if (op->pg->kicking) {
		/* the kick loop still looks at it: freed when the loop ends */
		op->next = op->pg->dead;
		op->pg->dead = op;
		return;
	}
	if (op->buf)
		fab_pool_put(op->bpool, op->buf);
	free(op->inline_data);
	free(op->cmp_buf);
	free(op);
}

/* Reply (unless the client is gone) and leave the PG queue; the op lives on until refs drop. */
static void osd_op_finish(struct osd_op *op, int status)
{
	struct osd *osd = op->osd;
	struct osd_pg *pg = op->pg;

	if (op->state == OSD_OP_DONE)
		return;
	evl_timer_cancel(osd->loop, &op->timer);
	osd_perf_op_done(op, status);
	if (op->conn != NULL) {
		struct proto_osd_op_reply r = {.status = status, .epoch = osd->map.epoch};

		if (status == 0) {
			r.version = op->version;
			r.length = op->result_len;
		} else if (op->reply_flags != 0 &&
			   (op->conn->peer_features & PROTO_FEAT_REPLY_OSD)) {
			r.flags = op->reply_flags;
			if (op->reply_flags & PROTO_REPLY_F_OSD)
				r.version = (uint64_t)op->reply_osd;
		}
		osd_conn_send_reply(op->conn, op->tid, &r);
		op->conn->ops_inflight--;
		if (op->conn->paused && op->conn->ops_inflight < osd->max_ops_per_conn) {
			/* room again: what waited in its receive buffers comes in */
			op->conn->paused = false;
			msgr_conn_pause(op->conn->mc, false);
		}
	}
	if (status != 0)
		osd->ctr.op_errors++;
	if (status == -ESTALE)
		osd->ctr.estale++;
	if (op->prev)
		op->prev->next = op->next;
	else
		pg->head = op->next;
	if (op->next)
		op->next->prev = op->prev;
	else
		pg->tail = op->prev;
	op->next = op->prev = NULL;
	op->state = OSD_OP_DONE;
	pg->rekick = true;
	osd_op_maybe_free(op);
}

static void osd_reply_now(struct osd_conn *conn, uint64_t tid, int status, uint64_t version)
{
	struct proto_osd_op_reply r = {.status = status, .epoch = conn->osd->map.epoch};

	r.version = version;
	if (status != 0)
		conn->osd->ctr.op_errors++;
	osd_conn_send_reply(conn, tid, &r);
}

static void osd_perf_reply(struct osd_conn *conn, uint64_t tid)
{
	struct osd *osd = conn->osd;
	struct proto_osd_op_reply r = {.epoch = osd->map.epoch, .flags = PROTO_REPLY_F_INLINE};
	size_t cap = osd->msg_size - 128, len;
	char *json = malloc(cap);
	int rc;

	if (json == NULL)
		return osd_reply_now(conn, tid, -ENOMEM, 0);
	rc = osd_perf_json(osd, json, cap, &len);
	if (rc != 0) {
		free(json);
		return osd_reply_now(conn, tid, rc, 0);
	}
	r.data = json;
	r.data_len = (uint32_t)len;
	r.length = len;
	osd_conn_send_reply(conn, tid, &r);
	free(json);
}

/*
 * Where (pool, pg) stands in the current map: 0 and the acting set, or
 * -ENOENT (pool gone), -ESTALE (we are no longer its primary).
 */
static int osd_op_acting(struct osd *osd, struct osd_op *op, int32_t *acting, unsigned int *n,
			 const struct mon_pool **pool_out)
{
	const struct mon_pool *pool = mon_map_pool(&osd->map, op->pg->pool);
	int rc;

	if (pool == NULL)
		return -ENOENT;
	/* the same map gives the same answer: receive, start and submit ask in turn */
	if (op->plc_epoch != osd->map.epoch || op->plc_epoch == 0) {
		op->plc_n = plc_map_acting(&osd->map, pool, op->pg->pg, op->plc_acting);
		op->plc_epoch = osd->map.epoch;
	}
	rc = op->plc_n;
	if (rc < 0)
		return rc;
	memcpy(acting, op->plc_acting, (size_t)rc * sizeof(*acting));
	if (op->op != PROTO_OP_READ_LOCAL && (rc == 0 || acting[0] != (int32_t)osd->id))
		return -ESTALE;
	*n = (unsigned int)rc;
	*pool_out = pool;
	return 0;
}

/* osd_op_timeout after it arrived, an op still unanswered fails with -ETIMEDOUT. */
static void osd_op_timeout_cb(struct evl *evl, struct evl_timer *t, void *arg)
{
	struct osd_op *op = arg;
	struct osd *osd = op->osd;
	struct osd_pg *pg = op->pg;

	(void)evl;
	(void)t;
	osd_op_event(op, OSD_OP_EV_TIMEOUT, 0, 0); /* may free op */
	if (pg->head) {
		osd_pg_kick(pg);
		osd_repl_pg_flush(osd, pg);
	}
}

bool osd_epoch_insane(const struct osd *osd, uint32_t epoch)
{
	/* before the first map there is nothing to measure against: the callers wait */
	return osd->map.epoch != 0 &&
	       (uint64_t)epoch > (uint64_t)osd->map.epoch + osd->epoch_ahead_max;
}

void osd_dos_log(struct osd *osd, const char *fmt, ...)
{
	uint64_t now = clock_now_ms();
	char what[320];
	va_list ap;

	if (osd->ctr.dos_log_ms != 0 && now - osd->ctr.dos_log_ms < 10000) {
		osd->ctr.dos_log_suppressed++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (osd->ctr.dos_log_suppressed > 0)
		log_warn("osd",
			 "%s: %s (and %llu more refused messages in the last 10 s, not logged)",
			 osd->name, what, (unsigned long long)osd->ctr.dos_log_suppressed);
	else
		log_warn("osd", "%s: %s", osd->name, what);
	osd->ctr.dos_log_ms = now;
	osd->ctr.dos_log_suppressed = 0;
}

/* The client's op names a PG of a pool that cannot hold it: refused, never queued. */
static void osd_op_bad_pg(struct osd_conn *conn, uint64_t tid, const struct proto_osd_op *m,
			  uint32_t pg_num)
{
	struct osd *osd = conn->osd;

	osd->ctr.bad_pg_refused++;
	osd_dos_log(osd, "refused an op from %s for pg %u.%x: pool %u has pg_num %u",
		    osd_conn_peer(conn), m->pool, m->pg, m->pool, pg_num);
	osd_reply_now(conn, tid, -EINVAL, 0);
}

/* An op still waiting when osd_op_recv returns keeps its own copy of the inline bytes. */
static void osd_op_inline_keep(struct osd_op *op, size_t len)
{
	void *copy;

	op->inline_borrowed = false;
	if (op->state == OSD_OP_DONE) {
		op->inline_data = NULL; /* answered already: nothing needs them */
		return;
	}
	copy = malloc(len);
	if (copy != NULL)
		memcpy(copy, op->inline_data, len);
	op->inline_data = copy;
	if (copy == NULL) {
		op->refs++; /* finished here: freed by the caller's osd_op_maybe_free */
		osd_op_finish(op, -ENOMEM);
		op->refs--;
	}
}

void osd_op_recv(struct osd_conn *conn, uint64_t tid, const struct proto_osd_op *m)
{
	struct osd *osd = conn->osd;
	const struct mon_pool *pool;
	int32_t acting[PLC_MAX_REPLICAS];
	struct osd_op *op;
	struct osd_pg *pg;
	int n;

	osd->ctr.ops++;
	if (m->op == PROTO_OP_PERF)
		return osd_perf_reply(conn, tid);
	if ((n = osd_blocklist_check(conn)) != 0) /* a fenced client (osd_blocklist.c) */
		return osd_reply_now(conn, tid, n, 0);
	/* from a map that will never come: an answer now, not a retry forever */
	if (osd_epoch_insane(osd, m->epoch)) {
		osd->ctr.bad_epoch_refused++;
		osd_dos_log(osd,
			    "refused an op from %s: its map epoch %u is more than %u past ours "
			    "(%u, osd_epoch_ahead_max)",
			    osd_conn_peer(conn), m->epoch, osd->epoch_ahead_max, osd->map.epoch);
		return osd_reply_now(conn, tid, -EINVAL, 0);
	}
	/* we are behind (or our boot's map has not come yet): the client retries */
	if (!osd->booted || osd->map.epoch < osd->boot_epoch || osd->map.epoch == 0 ||
	    m->epoch > osd->map.epoch)
		return osd_reply_now(conn, tid, -EAGAIN, 0);
	if (m->epoch < osd->map.epoch)
		return osd_reply_now(conn, tid, -ESTALE, 0);
	pool = mon_map_pool(&osd->map, m->pool);
	if (pool == NULL)
		return osd_reply_now(conn, tid, -ENOENT, 0);
	/* the caps of the client's ticket (osd_auth.c); READ_LOCAL and STAT only read */
	n = osd_auth_op(conn, pool->name,
			m->op != PROTO_OP_READ && m->op != PROTO_OP_READ_LOCAL && m->op != PROTO_OP_STAT);
	if (n != 0)
		return osd_reply_now(conn, tid, n, 0);
	if (m->pg >= pool->pg_num)
		return osd_op_bad_pg(conn, tid, m, pool->pg_num);
	if (plc_map_object_pg(pool, m->name, m->name_len) != m->pg || m->name_len > STORE_NAME_MAX)
		return osd_reply_now(conn, tid, -EINVAL, 0);
	if (m->length > (m->op == PROTO_OP_ZERO ? STORE_OBJECT_MAX : osd->max_op))
		return osd_reply_now(conn, tid, -E2BIG, 0);
	n = plc_map_acting(&osd->map, pool, m->pg, acting);
	if (m->op != PROTO_OP_READ_LOCAL && (n <= 0 || acting[0] != (int32_t)osd->id)) {
		osd->ctr.enxio++;
		/* the right primary travels in version; the client recomputes it from the same
		 * epoch */
		return osd_reply_now(conn, tid, -ENXIO, n > 0 ? (uint64_t)acting[0] : UINT32_MAX);
	}
	pg = osd_pg_get(osd, m->pool, m->pg);
	op = calloc(1, sizeof(*op));
	if (pg == NULL || op == NULL) {
		free(op);
		return osd_reply_now(conn, tid, -ENOMEM, 0);
	}
	op->osd = osd;
	op->plc_epoch = osd->map.epoch; /* the placement just computed, for this map */
	op->plc_n = n;
	memcpy(op->plc_acting, acting, sizeof(acting));
	op->pg = pg;
	op->conn = conn;
	op->tid = tid;
	op->op = m->op;
	op->flags = m->flags;
	op->epoch = m->epoch;
	op->offset = m->offset;
	op->length = m->length;
	memcpy(op->name, m->name, m->name_len + 1);
	op->name_len = m->name_len;
	op->rkey = m->rkey;
	op->start_ms = clock_now_ms();
	op->t_recv_ns = op->t_last_ns = clock_now_ns();
	if ((m->flags & PROTO_OP_F_INLINE) && m->data_len > 0) {
		/*
		 * The receive buffer goes back when this returns. The kick below
		 * usually starts the write and copies the bytes straight into its
		 * registered buffer; only an op that has to wait copies them first.
		 */
		op->inline_data = (void *)m->data;
		op->inline_borrowed = true;
	}
	evl_timer_init(&op->timer, osd_op_timeout_cb, op);
	if (evl_timer_arm(osd->loop, &op->timer, osd->op_timeout_ms * 1000u, 0) != 0) {
		free(op);
		return osd_reply_now(conn, tid, -ENOMEM, 0);
	}
	conn->ops_inflight++;
	if (osd->max_ops_per_conn != 0 && conn->ops_inflight >= osd->max_ops_per_conn &&
	    !conn->paused) {
		/*
		 * Park the connection, not the ops: its next frames stay in their
		 * receive buffers, so the client runs out of credits and waits,
		 * and the OSD neither queues without bound nor reads to refuse.
		 */
		conn->paused = true;
		osd->ctr.conn_pauses++;
		msgr_conn_pause(conn->mc, true);
	}
	op->prev = pg->tail;
	if (pg->tail)
		pg->tail->next = op;
	else
		pg->head = op;
	pg->tail = op;
	osd_pg_tick_want(osd, pg); /* the tick's safety net covers queued ops */
	op->refs++; /* op is looked at after the kick */
	osd_pg_kick(pg);
	op->refs--;
	if (op->inline_borrowed)
		osd_op_inline_keep(op, m->data_len);
	osd_op_maybe_free(op);
}

static int osd_op_hdr(struct osd_op *op, void *buf, size_t cap, size_t *len_out)
{
	struct osd_rec_hdr h = {
	    .op = op->op,
	    .pool = op->pg->pool,
	    .pg = op->pg->pg,
	    .epoch = op->osd->map.epoch,
	    .version = op->version,
	    .prev = op->log_prev,
	    .offset = op->offset,
	    .length = op->op == PROTO_OP_CMP_WRITE_FULL ? op->length : osd_op_rec_length(op),
	    .name_len = op->name_len,
	};

	memcpy(h.name, op->name, op->name_len + 1);
	return osd_rec_hdr_encode(&h, buf, cap, len_out);
}

/*
 * Writes that allocate (docs/capacity.md): write, write_full and
 * compare-and-write. The store never overwrites in place (a write takes new
 * units and frees the old ones at the next checkpoint), so an overwrite
 * allocates too and is refused like any write. Remove, truncate and zero
 * free whole units and rewrite at most a partial unit at each end: they
 * are what an operator frees space with, and always go.
 */
static bool osd_op_allocates(uint16_t op)
{
	return op == PROTO_OP_WRITE || op == PROTO_OP_WRITE_FULL || op == PROTO_OP_CMP_WRITE_FULL;
}

/*
 * The capacity rule for a write about to be ordered: -EDQUOT while the
 * pool's quota is reached, -ENOSPC (naming the OSD in the reply) while an
 * OSD of the acting set is full per the map. Checked before the payload is
 * pulled, so a full cluster costs no data transfer.
 */
static int osd_op_space_check(struct osd_op *op, const int32_t *acting, unsigned int n)
{
	struct osd *osd = op->osd;
	uint64_t now;
	int32_t full = -1;

	if (!osd_op_allocates(op->op))
		return 0;
	if (mon_map_pool_full(&osd->map, op->pg->pool)) {
		osd->ctr.quota_refused++;
		return -EDQUOT;
	}
	for (unsigned int i = 0; i < n && full < 0; i++)
		if (acting[i] >= 0 && mon_map_osd_full(&osd->map, (uint32_t)acting[i]))
			full = acting[i];
	if (full < 0)
		return 0;
	osd->ctr.full_refused++;
	now = clock_now_ms();
	if (now - osd->ctr.full_log_ms >= 10000) {
		osd->ctr.full_log_ms = now;
		log_warn("osd",
			 "%s pg %u.%x: refusing writes: osd.%d is full (map epoch %u; %llu "
			 "refused so far)",
			 osd->name, op->pg->pool, op->pg->pg, full, osd->map.epoch,
			 (unsigned long long)osd->ctr.full_refused);
	}
	op->reply_flags = PROTO_REPLY_F_OSD;
	op->reply_osd = full;
	return -ENOSPC;
}

/* NEW write: check min_size, take a buffer, start pulling the payload. */
static void osd_op_start_write(struct osd_op *op)
{
	struct osd *osd = op->osd;
	const struct mon_pool *pool;
	int32_t acting[PLC_MAX_REPLICAS];
	uint64_t data_len = osd_op_has_data(op->op) ? op->length : 0;
	unsigned int n;
	size_t hl;
	int rc;

	if (op->conn == NULL)
		return osd_op_finish(op, -ENOTCONN);
	rc = osd_op_acting(osd, op, acting, &n, &pool);
	if (rc != 0)
		return osd_op_finish(op, rc);
	if (n < pool->min_size) {
		/* never acknowledge under-replicated: wait for a map with enough OSDs up */
		if (!op->blocked) {
			op->blocked = true;
			osd->ctr.blocked++;
			log_info("osd", "%s pg %u.%x: %u of min_size %u up, write blocked",
				 osd->name, op->pg->pool, op->pg->pg, n, pool->min_size);
		}
		return;
	}
	rc = osd_op_space_check(op, acting, n);
	if (rc != 0)
		return osd_op_finish(op, rc);
	rc = osd_op_hdr(op, NULL, 0, &hl);
	if (rc != 0)
		return osd_op_finish(op, rc);
	op->buf = osd_buf_get(osd, hl + data_len, &op->bpool, &op->sge);
	if (op->buf == NULL)
		return; /* all payload buffers busy: retried when one frees */
	op->hdr_len = (uint32_t)hl;
	if (data_len == 0 || op->inline_data != NULL) {
		if (data_len)
			memcpy((char *)op->buf + hl, op->inline_data, data_len);
		if (!op->inline_borrowed)
			free(op->inline_data);
		op->inline_data = NULL;
		op->inline_borrowed = false;
		osd_perf_mark(osd, OSD_ST_RECEIVE, op);
		op->state = OSD_OP_READY;
		return;
	}
	{
		struct fab_sge dst = {(char *)op->buf + hl, (uint32_t)data_len, op->sge.mr};
		struct fab_rkey src = {op->rkey.addr, op->rkey.len, op->rkey.key};

		op->rma = (struct osd_rma){op, OSD_RMA_PULL, 0};
		rc = fab_read(op->conn->ep, &dst, &src, 0, &op->rma);
	}
	if (rc == -EAGAIN)
		return; /* send queue full: the next kick retries */
	if (rc != 0)
		return osd_op_finish(op, rc);
	op->refs++;
	osd_perf_mark(osd, OSD_ST_RECEIVE, op);
	op->state = OSD_OP_PULLING;
}

static void osd_op_local_cb(void *arg, int rc)
{
	struct osd_op *op = arg;

	op->osd->store_pending--;
	osd_op_event(op, OSD_OP_EV_LOCAL_COMMIT, 0, rc);
}

void osd_op_check_done(struct osd_op *op)
{
	if (op->state != OSD_OP_SUBMITTED)
		return;
	if (op->local_done && op->local_rc != 0)
		return osd_op_finish(op, op->local_rc);
	if (op->local_done && op->repl_wait == 0 && op->min_ok) {
		op->result_len = op->length;
		op->osd->ctr.writes++;
		op->osd->ctr.write_bytes += op->length;
		osd_op_finish(op, 0);
	}
}

/* data, version attribute and the PG log entry; *prev_out: the entry before it */
static int osd_op_tx_build(struct osd_op *op, struct store_tx *tx, uint64_t *prev_out,
			   uint64_t *token_out)
{
	struct osd_rec_hdr h = {
	    .op = op->op,
	    .pool = op->pg->pool,
	    .pg = op->pg->pg,
	    .epoch = op->osd->map.epoch,
	    .version = op->version,
	    .offset = op->offset,
	    .length = osd_op_rec_length(op),
	    .name_len = op->name_len,
	};

	memcpy(h.name, op->name, op->name_len + 1);
	return osd_pg_op_tx(op->osd, op->pg, tx, &h, (const char *)op->buf + op->hdr_len, prev_out,
			    token_out);
}

static bool osd_op_earlier_same_object(const struct osd_op *op);

static void osd_op_cmp_cb(void *arg, int rc, uint64_t got)
{
	struct osd_op *op = arg;

	op->osd->store_pending--;
	op->cmp_got = got;
	osd_op_event(op, OSD_OP_EV_CMP_READ, 0, rc);
}

/*
 * Start reading the range cmp_write_full compares (1: wait for
 * OSD_OP_EV_CMP_READ; 0: read already, no device read was needed). The
 * reactor goes on meanwhile: the op stays READY, so the writes of the PG
 * behind it wait and nothing changes the object under the read.
 */
static int osd_op_cmp_read(struct osd_op *op, uint64_t cmp_len)
{
	uint64_t pgk = osd_pg_key(op->pg->pool, op->pg->pg), got = 0;
	int rc;

	op->cmp_buf = malloc(cmp_len);
	if (op->cmp_buf == NULL)
		return -ENOMEM;
	rc = store_read_start(op->osd->store, pgk, op->name, 0, cmp_len, op->cmp_buf, cmp_len,
			      osd_op_cmp_cb, op, &got);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		op->cmp = OSD_OP_CMP_READ;
		op->cmp_rc = 0;
		op->cmp_got = got;
		return 0;
	}
	op->refs++;
	op->osd->store_pending++;
	op->cmp = OSD_OP_CMP_READING;
	return 1;
}

/*
 * cmp_write_full whose turn it is: compare the object with the expected
 * prefix of the payload. Earlier writes to the object must have finished
 * first, so the store shows them (1 = wait); so must the read of the
 * compared range. On a match the op becomes a plain write_full of the rest
 * of the payload, which is what the PG log and the replicas get; on a
 * mismatch -ECANCELED.
 */
static int osd_op_cmp_resolve(struct osd_op *op)
{
	uint64_t pgk = osd_pg_key(op->pg->pool, op->pg->pg), cmp_len = op->offset;
	char *data = (char *)op->buf + op->hdr_len;
	struct store_stat st = {0};
	int rc;

	if (op->cmp == OSD_OP_CMP_READING)
		return 1;
	if (op->cmp == OSD_OP_CMP_NONE) {
		if (osd_op_earlier_same_object(op))
			return 1;
		rc = store_stat(op->osd->store, pgk, op->name, &st);
		if (rc == -ENOENT)
			st.size = 0;
		else if (rc != 0)
			return rc;
		if (st.size != cmp_len)
			return -ECANCELED;
		if (cmp_len > 0) {
			rc = osd_op_cmp_read(op, cmp_len);
			if (rc != 0)
				return rc;
		}
	}
	if (cmp_len > 0) {
		rc = op->cmp_rc;
		if (rc == 0 && (op->cmp_got != cmp_len || memcmp(op->cmp_buf, data, cmp_len) != 0))
			rc = -ECANCELED;
		free(op->cmp_buf);
		op->cmp_buf = NULL;
		op->cmp = OSD_OP_CMP_NONE;
		if (rc != 0)
			return rc;
	}
	memmove(data, data + cmp_len, op->length - cmp_len);
	op->op = PROTO_OP_WRITE_FULL;
	op->length -= cmp_len;
	op->offset = 0;
	return 0;
}

bool osd_op_range_busy(const struct osd_pg *pg, const char *after, const char *upto)
{
	for (const struct osd_op *op = pg->head; op; op = op->next)
		if (op->state == OSD_OP_SUBMITTED && osd_op_is_write(op->op) &&
		    (after == NULL || strcmp(op->name, after) > 0) &&
		    (upto == NULL || strcmp(op->name, upto) <= 0))
			return true;
	return false;
}

/* READY write whose turn it is: version, local transaction, replica records. */
static void osd_op_submit(struct osd_op *op)
{
	struct osd *osd = op->osd;
	struct osd_pg *pg = op->pg;
	const struct mon_pool *pool;
	struct store_stat st;
	struct store_tx *tx;
	uint64_t prev = 0, token = 0;
	size_t hl;
	int rc;

	rc = osd_op_acting(osd, op, op->acting, &op->nacting, &pool);
	if (rc != 0)
		return osd_op_finish(op, rc);
	if (op->nacting < pool->min_size)
		return; /* blocked while READY; a later map or the timeout moves it */
	if (osd_push_reading(osd, pg->pool, pg->pg, op->name))
		return; /* its push's chunk is read: it reaches the replica first */
	if (osd_pg_scrub_holds(pg, op->name))
		return; /* a scrub batch compares the object's copies now: after it */
	if (op->op == PROTO_OP_REMOVE &&
	    store_stat(osd->store, osd_pg_key(pg->pool, pg->pg), op->name, &st) == -ENOENT)
		return osd_op_finish(op, -ENOENT);
	if (op->op == PROTO_OP_CMP_WRITE_FULL) {
		rc = osd_op_cmp_resolve(op);
		if (rc == 1)
			return; /* stays READY, later writes of the PG wait behind it */
		if (rc != 0)
			return osd_op_finish(op, rc);
	}
	op->version = osd_pg_op_version(osd, pg);
	rc = store_tx_create(&tx);
	if (rc != 0)
		return osd_op_finish(op, rc);
	store_tx_nowait(tx); /* a checkpoint that gives freed units back runs off the reactor */
	/* the log entry first: the record header carries the entry before it */
	rc = osd_op_tx_build(op, tx, &prev, &token);
	if (rc == 0) {
		op->log_prev = prev;
		rc = osd_op_hdr(op, op->buf, op->hdr_len, &hl);
		if (rc != 0)
			osd_pg_op_cancel(osd, pg, op->version);
	}
	/* stamped before the store sees it: with osd_store_wal_sync = inline a
	 * lone transaction commits inside osd_pg_op_submit, and that time
	 * belongs to the WAL stage */
	op->t_submit_ns = clock_now_ns();
	if (rc == 0)
		rc = osd_pg_op_submit(osd, pg, tx, op->version, token, osd_op_local_cb, op);
	if (rc == -EAGAIN) {
		/*
		 * No room until the checkpoint the store just started gives freed
		 * units back: the op stays READY (later writes of the PG wait
		 * behind it) and its PG's tick submits it again (osd_pgtick.c);
		 * nothing was logged or replicated. Bounded by osd_op_timeout.
		 */
		store_tx_destroy(tx);
		return;
	}
	if (rc != 0) {
		store_tx_destroy(tx);
		log_error("osd", "%s pg %u.%x: %s of %s refused by the store: %s", osd->name,
			  pg->pool, pg->pg, op->op == PROTO_OP_REMOVE ? "remove" : "write",
			  op->name, weft_strerror(rc));
		return osd_op_finish(op, rc);
	}
	osd->store_pending++;
	op->refs++;
	osd_pg_busy(pg, op->name, 1);
	op->state = OSD_OP_SUBMITTED;
	op->min_ok = true;
	op->repl_wait = 0;
	for (unsigned int i = 1; i < op->nacting; i++)
		op->repl_wait |= 1u << i;
	/* records go out from the PG flush so they keep version order per peer */
	osd_repl_pg_flush(osd, pg);
}

static bool osd_op_earlier_same_object(const struct osd_op *op)
{
	for (const struct osd_op *o = op->prev; o; o = o->prev)
		if (osd_op_is_write(o->op) && o->name_len == op->name_len &&
		    !memcmp(o->name, op->name, op->name_len))
			return true;
	return false;
}

/* An earlier read of op's object is still reading the device: op may not change it yet. */
static bool osd_op_earlier_reading(const struct osd_op *op)
{
	for (const struct osd_op *o = op->prev; o; o = o->prev)
		if (o->state == OSD_OP_READING && o->name_len == op->name_len &&
		    !memcmp(o->name, op->name, op->name_len))
			return true;
	return false;
}

/* The read's got bytes are in op->buf: into the client's buffer, replied when they landed. */
static void osd_op_read_send(struct osd_op *op, uint64_t got)
{
	struct osd *osd = op->osd;
	struct fab_sge src = {op->buf, (uint32_t)got, op->sge.mr};
	struct fab_rkey dst = {op->rkey.addr, op->rkey.len, op->rkey.key};
	int rc;

	op->result_len = got;
	osd->ctr.reads++;
	osd->ctr.read_bytes += got;
	if (got == 0)
		return osd_op_finish(op, 0);
	if (op->conn == NULL)
		return osd_op_finish(op, -ENOTCONN);
	op->rma = (struct osd_rma){op, OSD_RMA_SEND, 0};
	rc = fab_write(op->conn->ep, &src, &dst, 0, &op->rma);
	if (rc != 0)
		return osd_op_finish(op, rc);
	op->refs++;
	op->state = OSD_OP_SENDING;
}

static void osd_op_read_cb(void *arg, int rc, uint64_t got)
{
	struct osd_op *op = arg;

	op->osd->store_pending--;
	op->result_len = got;
	osd_op_event(op, OSD_OP_EV_READ_DONE, 0, rc);
}

static void osd_op_do_read(struct osd_op *op)
{
	struct osd *osd = op->osd;
	uint64_t pgk = osd_pg_key(op->pg->pool, op->pg->pg), got = 0;
	const struct mon_pool *pool;
	int32_t acting[PLC_MAX_REPLICAS];
	struct store_stat st;
	unsigned int n;
	int rc;

	if (op->conn == NULL)
		return osd_op_finish(op, -ENOTCONN);
	rc = osd_op_acting(osd, op, acting, &n, &pool);
	if (rc != 0)
		return osd_op_finish(op, rc);
	if (op->op == PROTO_OP_STAT) {
		rc = store_stat(osd->store, pgk, op->name, &st);
		if (rc == 0) {
			op->result_len = st.size;
			op->version = st.version;
		}
		return osd_op_finish(op, rc);
	}
	if (op->length == 0)
		return osd_op_finish(op, 0);
	if (!(op->flags & PROTO_OP_F_RKEY))
		return osd_op_finish(op, -EINVAL);
	op->buf = osd_buf_get(osd, op->length, &op->bpool, &op->sge);
	if (op->buf == NULL)
		return; /* retried when a buffer frees */
	osd_perf_mark(osd, OSD_ST_RECEIVE, op);
	/* the reactor goes on while the device reads (docs/osd.md, "Read path") */
	rc = store_read_start(osd->store, pgk, op->name, op->offset, op->length, op->buf,
			      op->sge.len, osd_op_read_cb, op, &got);
	if (rc < 0)
		return osd_op_finish(op, rc);
	if (rc == 1)
		return osd_op_read_send(op, got); /* no device read was needed */
	op->refs++;
	osd->store_pending++;
	op->state = OSD_OP_READING;
}

void osd_pg_kick(struct osd_pg *pg)
{
	if (pg->kicking) {
		pg->rekick = true;
		return;
	}
	if (pg->head == NULL || !osd_pg_io_ready(pg->head->osd, pg))
		return; /* queued until the PG is peered (osd_pg.c kicks it) */
	pg->kicking = true;
	/* each pass either moves an op or stops; finishing ops asks for one more pass */
	for (int pass = 0; pass < 1024; pass++) {
		bool order_blocked = false;

		pg->rekick = false;
		for (struct osd_op *op = pg->head, *next; op; op = next) {
			next = op->next;
			if (op->state == OSD_OP_NEW && op->op != PROTO_OP_READ_LOCAL &&
			    !osd_pg_obj_ready(op->osd, pg, op->name)) {
				/* the object is being recovered first (recover on access) */
				if (osd_op_is_write(op->op))
					order_blocked = true;
				continue;
			}
			if (osd_op_is_write(op->op)) {
				if (op->state == OSD_OP_NEW)
					osd_op_start_write(op);
				if (op->state == OSD_OP_READY && !order_blocked &&
				    !osd_op_earlier_reading(op))
					osd_op_submit(op);
				if (op->state < OSD_OP_SUBMITTED)
					order_blocked = true;
			} else if (op->state == OSD_OP_NEW && !osd_op_earlier_same_object(op)) {
				osd_op_do_read(op);
			}
		}
		if (!pg->rekick)
			break;
	}
	pg->kicking = false;
	while (pg->dead) {
		struct osd_op *op = pg->dead;

		pg->dead = op->next;
		osd_op_maybe_free(op);
	}
}

void osd_pg_kick_all(struct osd *osd)
{
	struct osd_pg *pg;

	osd_pg_foreach(osd, pg)
		if (pg->head)
			osd_pg_kick(pg);
}

/* A replica's ACK (status 0) or refusal of op's record to acting[idx]. */
static void osd_op_repl_ack(struct osd_op *op, unsigned int idx, int status)
{
	struct osd *osd = op->osd;
	struct osd_pg *pg = op->pg;
	uint32_t peer_id = (uint32_t)op->acting[idx];

	if (status == -ESTALE) {
		/* a newer interval asked it: the client resends after our map moves */
		osd_pg_fenced(osd, pg, peer_id);
		return osd_op_finish(op, status);
	}
	if (status != 0) {
		/*
		 * Not a fence: our copy (and maybe others) has the write, this
		 * one does not. The PG peers again and recovery brings the
		 * write to it (docs/recovery.md "A replica that fails a
		 * write"), so the client hears "failed, may have been applied".
		 */
		osd_pg_repl_failed(osd, pg, peer_id, op->version, status);
		log_warn("osd", "%s pg %u.%x: osd.%u failed %s v%llx: %s", osd->name, pg->pool,
			 pg->pg, peer_id, op->name, (unsigned long long)op->version,
			 weft_strerror(status));
		op->reply_flags = PROTO_REPLY_F_MAYBE | PROTO_REPLY_F_OSD;
		op->reply_osd = (int32_t)peer_id;
		return osd_op_finish(op, status);
	}
	if (op->repl_wait & (1u << idx))
		osd_perf_since_submit(osd, OSD_ST_REPL, op);
	op->repl_wait &= ~(1u << idx);
	osd_op_check_done(op);
}

/* Our store transaction is durable (or failed): whether or not the op was answered. */
static void osd_op_local_commit(struct osd_op *op, int rc)
{
	struct osd *osd = op->osd;

	osd_pg_busy(op->pg, op->name, -1); /* pushes of the object may go again */
	op->local_done = true;
	op->local_rc = rc;
	if (rc != 0)
		log_error("osd", "%s pg %u.%x: commit of %s v%llx failed: %s", osd->name,
			  op->pg->pool, op->pg->pg, op->name, (unsigned long long)op->version,
			  weft_strerror(rc));
	if (op->state != OSD_OP_SUBMITTED)
		return; /* already answered (timeout, primary change) */
	if (rc == 0)
		osd_perf_since_submit(osd, OSD_ST_WAL, op);
	osd_op_check_done(op);
}

/*
 * Every event of an op, and what it does (states as in osd.h):
 *
 *   event             state       effect
 *   PULLED            PULLING     READY (or finished with the pull's error)
 *   READ_DONE         READING     the data to the client (SENDING), or finished with the
 *                                 store's error
 *   CMP_READ          READY       cmp_write_full's compared range is here: compared at
 *                                 the op's next turn
 *   SENT              SENDING     finished with the write's status
 *   REPL_WRITTEN      any         an error unmarks the record: it goes again on the
 *                                 peer's next connection (its ACK still decides)
 *   LOCAL_COMMIT      SUBMITTED   local_done; finished when every replica acked too
 *   REPL_ACK          SUBMITTED   the replica's bit cleared, or finished: -ESTALE
 *                                 (fenced), other errors MAYBE with the replica named
 *   INTERVAL_CHANGE   SUBMITTED   finished -EAGAIN (the client resends, peering decides)
 *   CONN_LOST         any         no reply any more; a NEW write stops at its next kick
 *   TIMEOUT           any         finished -ETIMEDOUT
 *
 * In state DONE an event only drops its reference. The completions of
 * one-sided ops and the local commit each hold a reference (op->refs), so
 * the op and its buffer live until the last one arrived; the event holds
 * one more while it runs, so a finish inside it never frees the op under
 * it. Then the PG is kicked if the event can let an op behind this one go.
 */
void osd_op_event(struct osd_op *op, enum osd_op_ev ev, unsigned int idx, int status)
{
	struct osd_pg *pg = op->pg;
	bool kick = true;

	op->refs++;
	switch (ev) {
	case OSD_OP_EV_PULLED:
		op->refs--;
		if (op->state != OSD_OP_PULLING)
			break;
		if (status != 0) {
			log_warn("osd", "%s pg %u.%x: payload pull for %s failed: %s",
				 op->osd->name, pg->pool, pg->pg, op->name, weft_strerror(status));
			osd_op_finish(op, status);
			break;
		}
		osd_perf_mark(op->osd, OSD_ST_PULL, op);
		op->state = OSD_OP_READY;
		break;
	case OSD_OP_EV_READ_DONE:
		op->refs--;
		if (op->state != OSD_OP_READING)
			break; /* answered meanwhile (timeout, map, connection): the buffer goes now */
		if (status != 0) {
			osd_op_finish(op, status);
			break;
		}
		osd_perf_mark(op->osd, OSD_ST_READ, op);
		osd_op_read_send(op, op->result_len);
		break; /* kick: a write of the object may go now */
	case OSD_OP_EV_CMP_READ:
		op->refs--;
		if (op->state != OSD_OP_READY || op->cmp != OSD_OP_CMP_READING)
			break; /* answered meanwhile: the buffer goes with the op */
		op->cmp = OSD_OP_CMP_READ;
		op->cmp_rc = status;
		break; /* kick: the op's turn comes again */
	case OSD_OP_EV_SENT:
		op->refs--;
		if (op->state != OSD_OP_SENDING)
			break;
		op->t_last_ns = clock_now_ns(); /* the reply stage starts when the data landed */
		osd_op_finish(op, status);
		break;
	case OSD_OP_EV_REPL_WRITTEN:
		op->refs--;
		if (status != 0)
			op->repl_sent &= ~(1u << idx); /* resent after the peer reconnects */
		kick = false;
		break;
	case OSD_OP_EV_LOCAL_COMMIT:
		op->refs--;
		osd_op_local_commit(op, status);
		/* ops waiting on this one (a read, a compare-and-write of the object) go now */
		kick = pg->rekick;
		break;
	case OSD_OP_EV_REPL_ACK:
		if (op->state == OSD_OP_SUBMITTED && idx < op->nacting)
			osd_op_repl_ack(op, idx, status);
		break;
	case OSD_OP_EV_INTERVAL_CHANGE:
		if (op->state == OSD_OP_SUBMITTED)
			osd_op_finish(op, -EAGAIN);
		kick = false;
		break;
	case OSD_OP_EV_CONN_LOST:
		op->conn = NULL; /* finishes without a reply */
		kick = false;
		break;
	case OSD_OP_EV_TIMEOUT:
		log_warn("osd", "%s pg %u.%x: %s on %s timed out after %llu ms%s", op->osd->name,
			 pg->pool, pg->pg, osd_op_is_write(op->op) ? "write" : "read", op->name,
			 (unsigned long long)(clock_now_ms() - op->start_ms),
			 op->blocked ? " (PG below min_size)" : "");
		osd_op_finish(op, -ETIMEDOUT);
		kick = false;
		break;
	}
	op->refs--;
	osd_op_maybe_free(op); /* op may be gone from here on */
	if (kick)
		osd_pg_kick(pg);
}

void osd_op_rma_done(const struct osd_rma *r, int status)
{
	static const enum osd_op_ev ev[] = {
	    [OSD_RMA_PULL] = OSD_OP_EV_PULLED,
	    [OSD_RMA_SEND] = OSD_OP_EV_SENT,
	    [OSD_RMA_REPL] = OSD_OP_EV_REPL_WRITTEN,
	};

	osd_op_event(r->op, ev[r->kind], r->idx, status);
}

/* A replica committed (status 0) or failed a record: find its op and index. */
void osd_op_repl_acked(struct osd *osd, uint32_t peer_id, uint32_t pool, uint32_t pgid,
		       uint64_t version, int status)
{
	struct osd_pg *pg = osd_pg_find(osd, pool, pgid);

	if (pg == NULL)
		return;
	for (struct osd_op *op = pg->head; op; op = op->next) {
		if (op->state != OSD_OP_SUBMITTED || op->version != version)
			continue;
		for (unsigned int i = 1; i < op->nacting; i++)
			if (op->acting[i] == (int32_t)peer_id)
				return osd_op_event(op, OSD_OP_EV_REPL_ACK, i, status);
		break;
	}
	osd_pg_kick(pg);
}

void osd_op_conn_failed(struct osd *osd, struct osd_conn *conn)
{
	struct osd_pg *pg;

	if (conn->ops_inflight == 0)
		return; /* the common case: nothing of it queued */
	osd_pg_foreach(osd, pg) {
		bool had = false;

		for (struct osd_op *op = pg->head, *next; op; op = next) {
			next = op->next;
			if (op->conn == conn) {
				osd_op_event(op, OSD_OP_EV_CONN_LOST, 0, 0);
				had = true;
			}
		}
		if (had)
			osd_pg_kick(pg);
	}
}

/*
 * A new map: ops of PGs we no longer lead get -ESTALE (the client resends
 * to the new primary; writes are idempotent), replicas that left the acting
 * set are no longer waited for, and blocked PGs are retried.
 */
void osd_op_map_changed(struct osd *osd)
{
	struct osd_pg *pg;

	osd_pg_foreach(osd, pg) {
		for (struct osd_op *op = pg->head, *next; op; op = next) {
			const struct mon_pool *pool;
			int32_t acting[PLC_MAX_REPLICAS];
			unsigned int n;
			int rc;

			next = op->next;
			rc = osd_op_acting(osd, op, acting, &n, &pool);
			if (rc != 0) {
				osd_op_finish(op, rc);
				continue;
			}
			if (op->state != OSD_OP_SUBMITTED)
				continue;
			for (unsigned int i = 1; i < op->nacting; i++) {
				bool still = false;

				for (unsigned int k = 1; k < n; k++)
					still |= acting[k] == op->acting[i];
				if (!still)
					op->repl_wait &= ~(1u << i);
			}
			op->min_ok = n >= pool->min_size;
			osd_op_check_done(op);
		}
		if (pg->head) {
			osd_pg_kick(pg);
			osd_repl_pg_flush(osd, pg);
		}
	}
}

/*
 * The PG's acting set changed while we stay its primary: writes already
 * ordered were replicated to the old set, so they are answered -EAGAIN
 * (the client resends; writes are idempotent) and peering decides what of
 * them survives. Ops not yet ordered wait in the queue for the new interval.
 */
void osd_op_pg_interval(struct osd *osd, struct osd_pg *pg)
{
	(void)osd;
	pg->kicking = true; /* finishing ops must not free them under this loop */
	for (struct osd_op *op = pg->head, *next; op; op = next) {
		next = op->next;
		osd_op_event(op, OSD_OP_EV_INTERVAL_CHANGE, 0, 0);
	}
	pg->kicking = false;
	while (pg->dead) {
		struct osd_op *op = pg->dead;

		pg->dead = op->next;
		osd_op_maybe_free(op);
	}
}

void osd_ops_cleanup(struct osd *osd)
{
	struct osd_pg *pg;

	/* ops still queued are dropped without a reply; the domain is gone */
	osd_pg_foreach(osd, pg) {
		for (struct osd_op *op = pg->head, *next; op; op = next) {
			next = op->next;
			free(op->inline_data);
			free(op);
		}
		pg->head = pg->tail = NULL;
	}
	osd_pgs_free(osd);
}
