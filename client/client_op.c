/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libweft ops (docs/client.md): the client computes the primary from its
 * map, sends one OSD_OP carrying its epoch and the key of a registered
 * buffer (small writes inline), and handles the answer:
 *   -ESTALE  the OSD has a newer map: wait for that epoch, resend
 *   -EAGAIN  the OSD is behind us: resend shortly
 *   -ENXIO   not the primary (maps disagree): resend once the map moves
 * An OSD connection failing makes its ops wait and resend. Every op has a
 * deadline (client_op_timeout) and completes exactly once. Each op has one
 * timer in the loop (docs/evloop.md): its next retry while it waits, else
 * its deadline; nothing walks every op on a poll.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/client_debug.h"
#include "client/client_int.h"
#include "common/clock.h"
#include "common/log.h"
#include "placement/plc_map.h"

#define CLIENT_RETRY_MS	     20u
#define CLIENT_FAIL_RETRY_MS 200u
/*
 * A waiting op with no retry time of its own (its epoch, the pause flag, a
 * free bounce buffer) is tried again this often; a new map also sends it.
 */
#define CLIENT_WAIT_POLL_MS 5u

static void client_op_tid_del(struct weft_cluster *cl, struct client_op *op)
{
	struct client_op **pp = &cl->by_tid[op->tid & (CLIENT_TID_BUCKETS - 1)];

	if (!op->in_tid)
		return;
	while (*pp != op)
		pp = &(*pp)->tnext;
	*pp = op->tnext;
	op->in_tid = false;
}

/* A new tid for op, findable by its reply (the old one's late reply finds nothing). */
static void client_op_tid_new(struct weft_cluster *cl, struct client_op *op)
{
	struct client_op **b;

	client_op_tid_del(cl, op);
	op->tid = cl->next_tid++;
	b = &cl->by_tid[op->tid & (CLIENT_TID_BUCKETS - 1)];
	op->tnext = *b;
	*b = op;
	op->in_tid = true;
}

static void client_op_unlink(struct weft_cluster *cl, struct client_op *op)
{
	client_op_tid_del(cl, op);
	if (op->prev)
		op->prev->next = op->next;
	else
		cl->ops = op->next;
	if (op->next)
		op->next->prev = op->prev;
	cl->nops--;
}

/* The OSD that had the op's buffer key can no longer touch the buffer. */
static void client_op_unscope(struct weft_cluster *cl, struct client_op *op)
{
	if (op->scoped)
		fab_rkey_revoke(cl->dom, &op->rkey);
	op->scoped = false;
}

static void client_op_free(struct weft_cluster *cl, struct client_op *op)
{
	client_op_unscope(cl, op);
	client_op_unlink(cl, op);
	evl_timer_cancel(cl->loop, &op->timer);
	if (op->bounce)
		fab_pool_put(op->bpool, op->bounce);
	free(op);
}

/* The op's callback runs from the loop's done poller (never inside the call that finished it). */
static void client_op_done_queue(struct weft_cluster *cl, struct client_op *op)
{
	evl_timer_cancel(cl->loop, &op->timer);
	if (op->done_queued)
		return;
	op->done_queued = true;
	op->done_next = NULL;
	if (cl->done_tail)
		cl->done_tail->done_next = op;
	else
		cl->done_head = op;
	cl->done_tail = op;
}

static void client_op_complete(struct client_op *op, int rc)
{
	client_op_unscope(op->cl, op);
	op->res.rc = rc;
	op->state = CLIENT_OP_DONE;
	client_op_done_queue(op->cl, op);
}

/* Its timer: WAIT at its retry time (or a short poll), capped by the deadline; SENT: deadline. */
static void client_op_timer_set(struct weft_cluster *cl, struct client_op *op)
{
	uint64_t due = op->deadline_ms;

	if (op->state == CLIENT_OP_WAIT) {
		uint64_t now = clock_now_ms();
		uint64_t retry =
		    op->retry_at_ms > now ? op->retry_at_ms : now + CLIENT_WAIT_POLL_MS;

		if (retry < due)
			due = retry;
	} else if (op->state != CLIENT_OP_SENT) {
		return;
	}
	if (evl_timer_arm_at(cl->loop, &op->timer, due * 1000000u) != 0)
		log_error("client", "%s: out of memory arming the timer of an op on %s", cl->name,
			  op->name);
}

static void client_op_wait(struct client_op *op, uint32_t want_epoch, uint64_t delay_ms)
{
	op->state = CLIENT_OP_WAIT;
	op->conn = NULL;
	if (want_epoch > op->want_epoch)
		op->want_epoch = want_epoch;
	op->retry_at_ms = clock_now_ms() + delay_ms;
	op->resends++;
	op->cl->resends++;
	client_op_timer_set(op->cl, op);
}

static bool client_op_is_write(uint16_t opc)
{
	return opc == PROTO_OP_WRITE || opc == PROTO_OP_WRITE_FULL ||
	       opc == PROTO_OP_CMP_WRITE_FULL;
}

/* Where the payload goes or comes from: the caller's registered buffer or a bounce buffer. */
static int client_op_prepare_buf(struct weft_cluster *cl, struct client_op *op)
{
	const void *user = client_op_is_write(op->opcode) ? op->wbuf : op->rbuf;
	struct fab_rkey k;
	void *b;

	if (op->direct || op->bounce)
		return 0;
	if (client_buf_pool(cl, user, op->len) != NULL) {
		op->direct = true;
		b = (void *)user;
		op->rkey_mr = fab_pool_mr(client_buf_pool(cl, user, op->len));
	} else {
		b = client_bounce_get(cl, op->len, &op->bpool);
		if (b == NULL)
			return -ENOBUFS;
		op->bounce = b;
		op->rkey_mr = fab_pool_mr(op->bpool);
		if (client_op_is_write(op->opcode))
			memcpy(b, op->wbuf, op->len);
	}
	fab_mr_rkey(op->rkey_mr, &k);
	op->rkey = (struct fab_rkey){(uint64_t)(uintptr_t)b, op->len, k.key};
	return 0;
}

/*
 * The buffer's key for this send: this connection, this range, the one
 * direction (the OSD reads a write's payload, writes a read's); the key of
 * an earlier send (another OSD, another epoch) is revoked first.
 */
static int client_op_scope(struct weft_cluster *cl, struct client_op *op, struct client_conn *conn)
{
	unsigned int access =
	    client_op_is_write(op->opcode) ? FAB_ACCESS_REMOTE_READ : FAB_ACCESS_REMOTE_WRITE;
	struct fab_ep *ep = msgr_conn_ep(conn->mc);
	int rc;

	client_op_unscope(cl, op);
	if (ep == NULL)
		return -ENOTCONN;
	rc = fab_rkey_scope(ep, op->rkey_mr, (const void *)(uintptr_t)op->rkey.addr, op->len,
			    access, &op->rkey);
	if (rc == 0)
		op->scoped = true;
	return rc;
}

/* Try to send a WAIT op now; leaves it WAIT when it must wait longer. */
static void client_op_send(struct weft_cluster *cl, struct client_op *op)
{
	const struct mon_map *map = monc_map(cl->monc);
	struct proto_msg m = {.type = PROTO_OSD_OP};
	struct proto_osd_op *o = &m.osd_op;
	const struct mon_pool *pool;
	const struct mon_osd *osd;
	int32_t acting[PLC_MAX_REPLICAS];
	struct client_conn *conn;
	size_t flen;
	int n, rc;

	if (map->epoch == 0 || map->epoch < op->want_epoch || clock_now_ms() < op->retry_at_ms)
		return;
	/* pause (weft osd set pause): new ops wait, within their timeout, for it to go */
	if ((map->flags & MON_FLAG_PAUSE) && op->opcode != PROTO_OP_PERF)
		return;
	pool = mon_map_pool(map, op->pool);
	if (pool == NULL && op->opcode != PROTO_OP_PERF)
		return client_op_complete(op, -ENOENT);
	o->op = op->opcode;
	o->pool = op->pool;
	o->pg = pool ? plc_map_object_pg(pool, op->name, op->name_len) : 0;
	o->epoch = map->epoch;
	o->offset = op->off;
	o->length = op->len;
	memcpy(o->name, op->name, op->name_len + 1);
	o->name_len = op->name_len;
	if (op->target == CLIENT_TARGET_PRIMARY) {
		n = plc_map_acting(map, pool, o->pg, acting);
		if (n <= 0) {
			op->retry_at_ms = clock_now_ms() + CLIENT_FAIL_RETRY_MS; /* no OSD up yet */
			return;
		}
	} else {
		acting[0] = op->target;
	}
	osd = mon_map_osd(map, (uint32_t)acting[0]);
	if (op->target != CLIENT_TARGET_PRIMARY && (osd == NULL || !(osd->state & MON_OSD_UP)))
		return client_op_complete(op, osd == NULL ? -ENOENT : -EHOSTDOWN);
	if (osd == NULL || !(osd->state & MON_OSD_UP) || osd->public_addr[0] == '\0') {
		op->retry_at_ms = clock_now_ms() + CLIENT_FAIL_RETRY_MS;
		return;
	}
	if (op->opcode == PROTO_OP_ZERO) {
		/* the range travels in offset/length; no payload */
	} else if (op->len > 0 && !(client_op_is_write(op->opcode) && op->len <= cl->inline_max)) {
		if (client_op_prepare_buf(cl, op) != 0)
			return; /* every bounce buffer busy: retried on the next tick */
		o->flags |= PROTO_OP_F_RKEY; /* o->rkey once the connection is known */
	} else if (op->len > 0) {
		o->flags |= PROTO_OP_F_INLINE;
		o->data = op->wbuf;
		o->data_len = (uint32_t)op->len;
	}
	conn = client_conn_get(cl, (uint32_t)acting[0], osd->public_addr);
	if (conn == NULL) {
		op->retry_at_ms = clock_now_ms() + CLIENT_FAIL_RETRY_MS;
		return;
	}
	if (o->flags & PROTO_OP_F_RKEY) {
		rc = client_op_scope(cl, op, conn);
		if (rc == -ENOTCONN || rc == -ENOSPC) { /* -ENOSPC: every scoped key in use */
			op->retry_at_ms = clock_now_ms() + 1;
			return;
		}
		if (rc != 0)
			return client_op_complete(op, rc);
		o->rkey = (struct proto_rkey){op->rkey.addr, op->rkey.len, op->rkey.key};
	}
	client_op_tid_new(cl, op);
	rc = (o->flags & PROTO_OP_F_INLINE) ? proto_frame_encode(&m, op->tid, NULL, 0, &flen) : 0;
	if (rc == 0 && (o->flags & PROTO_OP_F_INLINE) && flen > cl->msg_size) {
		/* name + data too big for one message: pull it instead */
		cl->inline_max = 0;
		op->retry_at_ms = 0;
		return;
	}
	if (rc == 0)
		rc = msgr_send(conn->mc, &m, op->tid); /* a full send queue parks it in order */
	if (rc == -ENOTCONN) {
		op->retry_at_ms = clock_now_ms() + 1;
		return;
	}
	if (rc != 0)
		return client_op_complete(op, rc);
	op->conn = conn;
	op->state = CLIENT_OP_SENT;
}

void client_op_reply(struct weft_cluster *cl, struct client_conn *conn, uint64_t tid,
		     const struct proto_osd_op_reply *r)
{
	struct client_op *op;

	for (op = cl->by_tid[tid & (CLIENT_TID_BUCKETS - 1)]; op; op = op->tnext)
		if (op->tid == tid && op->conn == conn)
			break;
	if (op == NULL)
		return; /* a reply to an op that was resent or completed */
	if (op->state == CLIENT_OP_ZOMBIE) {
		client_op_free(cl, op);
		return;
	}
	if (op->state != CLIENT_OP_SENT)
		return;
	switch (r->status) {
	case -ESTALE:
		return client_op_wait(op, r->epoch, 0);
	case -EAGAIN:
		return client_op_wait(op, 0, CLIENT_RETRY_MS);
	case -ENXIO:
		if (op->target != CLIENT_TARGET_PRIMARY)
			break; /* a debug op aimed at one OSD: its caller wants the refusal */
		return client_op_wait(op, r->epoch > monc_map(cl->monc)->epoch ? r->epoch : 0,
				      CLIENT_RETRY_MS);
	default:
		break;
	}
	if (r->status == -WEFT_E_BLOCKLISTED)
		client_blocklisted_mark(cl, "an OSD refused an op");
	op->res.length = r->length;
	op->res.version = r->version;
	if (r->status != 0) {
		op->res.flags = (r->flags & PROTO_REPLY_F_MAYBE ? WEFT_RESULT_F_MAYBE : 0) |
				(r->flags & PROTO_REPLY_F_OSD ? WEFT_RESULT_F_OSD : 0);
		op->res.osd = r->flags & PROTO_REPLY_F_OSD ? (int32_t)r->version : 0;
	}
	if (r->status == 0 && op->inline_out != NULL) {
		size_t n = r->data_len < op->inline_cap - 1 ? r->data_len : op->inline_cap - 1;

		memcpy(op->inline_out, r->data, n);
		((char *)op->inline_out)[n] = '\0';
	}
	if (r->status == 0 && op->bounce != NULL && !client_op_is_write(op->opcode) &&
	    op->rbuf != NULL)
		memcpy(op->rbuf, op->bounce, r->length < op->len ? r->length : op->len);
	client_op_complete(op, r->status);
}

void client_ops_conn_failed(struct weft_cluster *cl, struct client_conn *conn)
{
	for (struct client_op *op = cl->ops, *next; op; op = next) {
		next = op->next;
		if (op->conn != conn)
			continue;
		if (op->state == CLIENT_OP_ZOMBIE)
			client_op_free(cl, op); /* nobody can touch its buffer any more */
		else if (op->state == CLIENT_OP_SENT && conn->refused)
			/* the OSD runs a version we cannot talk to, or refused our ticket: resending
			 * cannot help */
			client_op_complete(op, conn->refused);
		else if (op->state == CLIENT_OP_SENT)
			client_op_wait(op, 0, CLIENT_FAIL_RETRY_MS);
	}
}

/* Try a WAIT op again now; its timer then follows what it waits for. */
static void client_op_try(struct weft_cluster *cl, struct client_op *op)
{
	client_op_send(cl, op);
	client_op_timer_set(cl, op);
}

/* The op's deadline passed: its callback runs now, with -ETIMEDOUT, exactly once. */
static void client_op_expire(struct weft_cluster *cl, struct client_op *op)
{
	static const char *const states[] = {"?", "waiting to be sent", "sent", "zombie",
					     "done"};
	struct fab_ep *ep = op->conn && op->conn->mc ? msgr_conn_ep(op->conn->mc) : NULL;
	struct fab_ep_stats es = {0};

	/* where it stuck, so a hang can be told from a slow OSD after the fact */
	if (ep != NULL)
		fab_ep_stats(ep, &es);
	log_warn("client",
		 "%s: op on %s timed out after %llu ms (%u resends; tid %llu, %s%s%s; connection: "
		 "%llu sends, %llu recvs, %u credits, %llu credit stalls, %u posted)",
		 cl->name, op->name, (unsigned long long)cl->op_timeout_ms, op->resends,
		 (unsigned long long)op->tid, states[op->state <= CLIENT_OP_DONE ? op->state : 0],
		 op->conn ? " to " : "", op->conn ? op->conn->addr : "",
		 (unsigned long long)es.sends, (unsigned long long)es.recvs, es.credits,
		 (unsigned long long)es.credit_stalls, es.sq_inflight);
	op->res.rc = -ETIMEDOUT;
	if (op->cb) {
		op->cb(&op->res, op->arg);
		cl->callbacks++;
	}
	op->cb = NULL;
	client_op_unscope(cl, op); /* the caller may reuse its buffer now */
	/* an OSD may still pull from or push into the bounce buffer (where keys are not scoped) */
	if (op->state == CLIENT_OP_SENT && op->bounce)
		op->state = CLIENT_OP_ZOMBIE; /* freed by its reply or its connection's end */
	else
		client_op_free(cl, op);
}

static void client_op_timer_cb(struct evl *evl, struct evl_timer *t, void *arg)
{
	struct client_op *op = arg;
	struct weft_cluster *cl = op->cl;

	if (op->state != CLIENT_OP_WAIT && op->state != CLIENT_OP_SENT)
		return;
	if (op->state == CLIENT_OP_WAIT && clock_now_ms() < op->deadline_ms) {
		client_op_try(cl, op);
		return;
	}
	if (clock_now_ms() >= op->deadline_ms)
		client_op_expire(cl, op);
	else
		client_op_timer_set(cl, op); /* early (a retry time moved): the deadline again */
}

void client_ops_map_changed(struct weft_cluster *cl)
{
	for (struct client_op *op = cl->ops, *next; op; op = next) {
		next = op->next;
		if (op->state == CLIENT_OP_WAIT && op->retry_at_ms <= clock_now_ms())
			client_op_try(cl, op);
	}
}

int client_ops_done_poll(struct evl *evl, void *arg)
{
	struct weft_cluster *cl = arg;
	int ran = 0;

	while (cl->done_head != NULL) {
		struct client_op *op = cl->done_head;

		cl->done_head = op->done_next;
		if (cl->done_head == NULL)
			cl->done_tail = NULL;
		op->done_queued = false;
		if (op->cb) {
			op->cb(&op->res, op->arg); /* may submit, poll, or complete others */
			cl->callbacks++;
			ran++;
		}
		client_op_free(cl, op);
	}
	return ran;
}

void client_ops_cancel_all(struct weft_cluster *cl)
{
	while (cl->ops) {
		struct client_op *op = cl->ops;

		if (op->cb && op->state != CLIENT_OP_ZOMBIE) {
			op->res.rc = op->state == CLIENT_OP_DONE ? op->res.rc : -ECANCELED;
			op->cb(&op->res, op->arg);
		}
		client_op_free(cl, op);
	}
	cl->done_head = cl->done_tail = NULL; /* every op on it was freed above */
}

static int client_op_new(struct weft_cluster *cl, uint16_t opcode, uint32_t pool, const char *name,
			 uint64_t off, uint64_t len, weft_op_cb cb, void *arg,
			 struct client_op **op_out)
{
	struct client_op *op;
	size_t nl = name ? strlen(name) : 0;

	if (nl == 0 || nl > PROTO_OBJ_NAME_MAX)
		return -EINVAL;
	if (len > (opcode == PROTO_OP_ZERO ? (uint64_t)WEFT_OBJECT_MAX : cl->max_op))
		return -E2BIG;
	op = calloc(1, sizeof(*op));
	if (op == NULL)
		return -ENOMEM;
	op->cl = cl;
	op->opcode = opcode;
	op->pool = pool;
	memcpy(op->name, name, nl + 1);
	op->name_len = nl;
	op->off = off;
	op->len = len;
	op->cb = cb;
	op->arg = arg;
	op->target = CLIENT_TARGET_PRIMARY;
	op->state = CLIENT_OP_WAIT;
	op->deadline_ms = clock_now_ms() + cl->op_timeout_ms;
	evl_timer_init(&op->timer, client_op_timer_cb, op);
	*op_out = op;
	return 0;
}

static int client_op_queue(struct weft_cluster *cl, struct client_op *op)
{
	op->next = cl->ops;
	if (cl->ops)
		cl->ops->prev = op;
	cl->ops = op;
	cl->nops++;
	client_op_try(cl, op);
	/*
	 * Submitted from outside the loop: on the wire now, not at the next
	 * weft_poll (a caller may sleep on weft_fd() first). Inside it, the
	 * fabric poller's next round sends everything queued meanwhile at once.
	 */
	if (evl_depth(cl->loop) == 0)
		fab_flush(cl->dom);
	return 0;
}

int weft_aio_write(struct weft_cluster *cl, uint32_t pool, const char *name, const void *buf,
		   size_t len, uint64_t off, weft_op_cb cb, void *arg)
{
	struct client_op *op;
	int rc = client_op_new(cl, PROTO_OP_WRITE, pool, name, off, len, cb, arg, &op);

	if (rc != 0)
		return rc;
	op->wbuf = buf;
	return client_op_queue(cl, op);
}

int weft_aio_write_full(struct weft_cluster *cl, uint32_t pool, const char *name, const void *buf,
			size_t len, weft_op_cb cb, void *arg)
{
	struct client_op *op;
	int rc = client_op_new(cl, PROTO_OP_WRITE_FULL, pool, name, 0, len, cb, arg, &op);

	if (rc != 0)
		return rc;
	op->wbuf = buf;
	return client_op_queue(cl, op);
}

int weft_aio_read(struct weft_cluster *cl, uint32_t pool, const char *name, void *buf, size_t len,
		  uint64_t off, weft_op_cb cb, void *arg)
{
	struct client_op *op;
	int rc = client_op_new(cl, PROTO_OP_READ, pool, name, off, len, cb, arg, &op);

	if (rc != 0)
		return rc;
	op->rbuf = buf;
	return client_op_queue(cl, op);
}

int weft_aio_stat(struct weft_cluster *cl, uint32_t pool, const char *name, weft_op_cb cb,
		  void *arg)
{
	struct client_op *op;
	int rc = client_op_new(cl, PROTO_OP_STAT, pool, name, 0, 0, cb, arg, &op);

	return rc != 0 ? rc : client_op_queue(cl, op);
}

int weft_aio_remove(struct weft_cluster *cl, uint32_t pool, const char *name, weft_op_cb cb,
		    void *arg)
{
	struct client_op *op;
	int rc = client_op_new(cl, PROTO_OP_REMOVE, pool, name, 0, 0, cb, arg, &op);

	return rc != 0 ? rc : client_op_queue(cl, op);
}

int weft_aio_truncate(struct weft_cluster *cl, uint32_t pool, const char *name, uint64_t size,
		      weft_op_cb cb, void *arg)
{
	struct client_op *op;
	int rc = client_op_new(cl, PROTO_OP_TRUNCATE, pool, name, size, 0, cb, arg, &op);

	return rc != 0 ? rc : client_op_queue(cl, op);
}

int weft_aio_zero(struct weft_cluster *cl, uint32_t pool, const char *name, uint64_t off,
		  uint64_t len, weft_op_cb cb, void *arg)
{
	struct client_op *op;
	int rc;

	if (len > UINT64_MAX - off)
		return -EINVAL;
	rc = client_op_new(cl, PROTO_OP_ZERO, pool, name, off, len, cb, arg, &op);
	return rc != 0 ? rc : client_op_queue(cl, op);
}

int client_op_defer(struct weft_cluster *cl, const struct weft_result *res, weft_op_cb cb,
		    void *arg)
{
	struct client_op *op = calloc(1, sizeof(*op));

	if (op == NULL)
		return -ENOMEM;
	op->cl = cl;
	op->res = *res;
	op->cb = cb;
	op->arg = arg;
	op->state = CLIENT_OP_DONE; /* the done poller runs it, nothing sends it */
	evl_timer_init(&op->timer, client_op_timer_cb, op);
	op->next = cl->ops;
	if (cl->ops)
		cl->ops->prev = op;
	cl->ops = op;
	cl->nops++;
	client_op_done_queue(cl, op);
	/* a caller sleeping on weft_fd() wakes and polls */
	evl_wake(cl->loop);
	return 0;
}

int client_aio_cmp_write_full(struct weft_cluster *cl, uint32_t pool, const char *name,
			      const void *buf, size_t cmp_len, size_t len, weft_op_cb cb, void *arg)
{
	struct client_op *op;
	int rc;

	if (cmp_len > len)
		return -EINVAL;
	rc = client_op_new(cl, PROTO_OP_CMP_WRITE_FULL, pool, name, cmp_len, len, cb, arg, &op);
	if (rc != 0)
		return rc;
	op->wbuf = buf;
	return client_op_queue(cl, op);
}

/* ------------------------------------------------------------ sync forms */

struct client_sync {
	bool done;
	struct weft_result res;
};

static void client_sync_cb(const struct weft_result *res, void *arg)
{
	struct client_sync *s = arg;

	s->res = *res;
	s->done = true;
}

/* Run the loop until the op completes; the op's own deadline bounds this. */
static int client_sync_wait(struct weft_cluster *cl, struct client_sync *s, int rc)
{
	uint64_t hard = clock_now_ms() + cl->op_timeout_ms + 5000;

	if (rc != 0)
		return rc;
	while (!s->done) {
		if (clock_now_ms() > hard)
			return -ETIMEDOUT; /* only if the loop itself is wedged */
		rc = weft_poll(cl, 5);
		if (rc < 0)
			return rc;
	}
	return s->res.rc;
}

int weft_write(struct weft_cluster *cl, uint32_t pool, const char *name, const void *buf,
	       size_t len, uint64_t off)
{
	struct client_sync s = {0};

	return client_sync_wait(cl, &s,
				weft_aio_write(cl, pool, name, buf, len, off, client_sync_cb, &s));
}

int weft_write_full(struct weft_cluster *cl, uint32_t pool, const char *name, const void *buf,
		    size_t len)
{
	struct client_sync s = {0};

	return client_sync_wait(cl, &s,
				weft_aio_write_full(cl, pool, name, buf, len, client_sync_cb, &s));
}

int weft_read(struct weft_cluster *cl, uint32_t pool, const char *name, void *buf, size_t len,
	      uint64_t off, size_t *read_out)
{
	struct client_sync s = {0};
	int rc = client_sync_wait(cl, &s,
				  weft_aio_read(cl, pool, name, buf, len, off, client_sync_cb, &s));

	if (rc == 0 && read_out)
		*read_out = s.res.length;
	return rc;
}

int weft_stat(struct weft_cluster *cl, uint32_t pool, const char *name, uint64_t *size_out,
	      uint64_t *version_out)
{
	struct client_sync s = {0};
	int rc = client_sync_wait(cl, &s, weft_aio_stat(cl, pool, name, client_sync_cb, &s));

	if (rc == 0 && size_out)
		*size_out = s.res.length;
	if (rc == 0 && version_out)
		*version_out = s.res.version;
	return rc;
}

int weft_remove(struct weft_cluster *cl, uint32_t pool, const char *name)
{
	struct client_sync s = {0};

	return client_sync_wait(cl, &s, weft_aio_remove(cl, pool, name, client_sync_cb, &s));
}

int weft_truncate(struct weft_cluster *cl, uint32_t pool, const char *name, uint64_t size)
{
	struct client_sync s = {0};

	return client_sync_wait(cl, &s,
				weft_aio_truncate(cl, pool, name, size, client_sync_cb, &s));
}

int weft_zero(struct weft_cluster *cl, uint32_t pool, const char *name, uint64_t off, uint64_t len)
{
	struct client_sync s = {0};

	return client_sync_wait(cl, &s,
				weft_aio_zero(cl, pool, name, off, len, client_sync_cb, &s));
}

/* ------------------------------------------------------------ debug calls */

int weft_debug_read_local(struct weft_cluster *cl, uint32_t osd, uint32_t pool, const char *name,
			  void *buf, size_t len, uint64_t off, size_t *read_out)
{
	struct client_sync s = {0};
	struct client_op *op;
	int rc =
	    client_op_new(cl, PROTO_OP_READ_LOCAL, pool, name, off, len, client_sync_cb, &s, &op);

	if (rc != 0)
		return rc;
	op->rbuf = buf;
	op->target = (int)osd;
	rc = client_sync_wait(cl, &s, client_op_queue(cl, op));
	if (rc == 0 && read_out)
		*read_out = s.res.length;
	return rc;
}

int weft_debug_stat_at(struct weft_cluster *cl, uint32_t osd, uint32_t pool, const char *name,
		       uint64_t *size_out, uint64_t *primary_out)
{
	struct client_sync s = {0};
	struct client_op *op;
	int rc = client_op_new(cl, PROTO_OP_STAT, pool, name, 0, 0, client_sync_cb, &s, &op);

	if (rc != 0)
		return rc;
	op->target = (int)osd;
	rc = client_sync_wait(cl, &s, client_op_queue(cl, op));
	if (rc == 0)
		*size_out = s.res.length;
	else if (rc == -ENXIO)
		*primary_out = s.res.version; /* the OSD names the primary there */
	return rc;
}

int weft_debug_osd_perf(struct weft_cluster *cl, uint32_t osd, char *buf, size_t cap)
{
	struct client_sync s = {0};
	struct client_op *op;
	int rc;

	if (cap < 2)
		return -EINVAL;
	rc = client_op_new(cl, PROTO_OP_PERF, 0, "perf", 0, 0, client_sync_cb, &s, &op);
	if (rc != 0)
		return rc;
	op->target = (int)osd;
	op->inline_out = buf;
	op->inline_cap = cap;
	return client_sync_wait(cl, &s, client_op_queue(cl, op));
}

const char *weft_result_describe(const struct weft_result *res, char *buf, size_t cap)
{
	const char *e = weft_strerror(res->rc);
	bool osd = (res->flags & WEFT_RESULT_F_OSD) != 0;

	if (cap == 0)
		return buf;
	if (res->flags & WEFT_RESULT_F_MAYBE) {
		char who[32] = "a replica";

		if (osd)
			snprintf(who, sizeof(who), "osd.%d", res->osd);
		snprintf(buf, cap,
			 "%s (%s failed it; the write may have been applied and "
			 "completes on every copy by recovery)",
			 e, who);
	} else if (osd && res->rc == -ENOSPC) {
		snprintf(buf, cap, "%s (osd.%d is full)", e, res->osd);
	} else if (osd) {
		snprintf(buf, cap, "%s (osd.%d)", e, res->osd);
	} else {
		snprintf(buf, cap, "%s", e);
	}
	return buf;
}
