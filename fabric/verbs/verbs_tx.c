/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verbs backend: posting, the per-endpoint op queues, completions, credits
 * and the mailbox. An op is queued by fab_send/fab_write/fab_read; the next
 * fab_progress posts each endpoint's queue as one WR chain. Ops move to the
 * endpoint's ring in posting order; a signaled completion retires every op
 * up to it (selective signaling), so completions keep posting order.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "fabric/verbs/verbs.h"

static int verbs_wc_errno(const struct verbs_ep *ep, enum ibv_wc_status s)
{
	switch (s) {
	case IBV_WC_SUCCESS:
		return 0;
	case IBV_WC_REM_ACCESS_ERR:
		return -EACCES;
	case IBV_WC_REM_INV_REQ_ERR:
		return -EINVAL;
	case IBV_WC_LOC_PROT_ERR:
		return -EFAULT;
	case IBV_WC_LOC_LEN_ERR:
		return -EMSGSIZE;
	case IBV_WC_RETRY_EXC_ERR:
		return -ETIMEDOUT;
	case IBV_WC_RNR_RETRY_EXC_ERR:
		return -ENOBUFS;
	case IBV_WC_REM_OP_ERR:
		return -EREMOTEIO;
	case IBV_WC_WR_FLUSH_ERR:
		return ep->fail_status ? ep->fail_status : -ECANCELED;
	default:
		return -EIO;
	}
}

const char *verbs_op_kind_name(enum verbs_op_kind k)
{
	static const char *const names[] = { "send",	   "write",	  "read",
					     "mailbox write", "key lookup", "window bind",
					     "window invalidation" };

	return names[k];
}

/* ------------------------------------------------------------ completion */

static void verbs_op_complete(struct verbs_ep *ep, struct verbs_op *op, int status)
{
	struct verbs_domain *vd = ep->vd;
	struct fab_cqe cqe = { 0 };
	struct fab_ep_stats *st = &ep->base.stats;

	switch (op->kind) {
	case VERBS_OP_MBOX:
		ep->mbox_inflight = false;
		verbs_op_free(vd, op);
		return;
	case VERBS_OP_KEYREAD:
		ep->key_wait = false;
		if (status == 0) {
			struct verbs_tbl_ent e;
			struct verbs_keyent *k = &ep->keys[op->raddr % VERBS_KEY_CACHE];

			memcpy(&e, vd->outbox + (size_t)ep->slot * VERBS_SLOT_LEN + 64, sizeof(e));
			k->key = e.key;
			k->addr = e.addr;
			k->len = e.len;
			k->access = e.access;
			k->qpn = e.qpn;
			ep->key_checked = op->rkey64;
			verbs_txlist_add(ep);
		}
		verbs_op_free(vd, op);
		return;
	case VERBS_OP_BIND:
	case VERBS_OP_INV:
		verbs_win_done(ep, op, status);
		verbs_op_free(vd, op);
		return;
	case VERBS_OP_SEND:
		cqe.kind = FAB_EV_SEND;
		if (!status) {
			st->sends++;
			st->tx_bytes += op->len;
		}
		break;
	case VERBS_OP_WRITE:
		cqe.kind = FAB_EV_WRITE;
		if (!status) {
			st->writes++;
			st->write_bytes += op->len;
			st->tx_bytes += op->len;
		}
		break;
	case VERBS_OP_READ:
		cqe.kind = FAB_EV_READ;
		if (!status) {
			st->reads++;
			st->read_bytes += op->len;
			st->rx_bytes += op->len;
		}
		break;
	}
	cqe.status = status;
	cqe.len = op->len;
	cqe.ctx = op->ctx;
	cqe.ep = ep->user_closed ? NULL : &ep->base;
	ep->user_ops--;
	fab_cq_push(&vd->base, &cqe);
	verbs_op_free(vd, op);
}

/* Complete refused ops at the head of the ring once nothing before them is on the QP. */
static void verbs_ring_settle(struct verbs_ep *ep)
{
	bool failing = ep->state == VERBS_EP_DRAINING || ep->state == VERBS_EP_FAILED;

	while (ep->ring.head && !ep->ring.head->hw && (ep->hw_inflight == 0 || failing)) {
		struct verbs_op *op = verbs_opq_pop(&ep->ring);

		verbs_op_complete(ep, op, op->status);
	}
	if (ep->state == VERBS_EP_DRAINING && ep->hw_inflight == 0)
		verbs_ep_drained(ep);
}

/* Complete what never reached the QP, and (all) what did; for failures and close. */
void verbs_ep_flush_all(struct verbs_ep *ep, int status)
{
	struct verbs_op *op;

	while ((op = verbs_opq_pop(&ep->ring))) {
		if (op->hw)
			ep->hw_inflight--;
		verbs_op_complete(ep, op, op->status ? op->status : status);
	}
	while ((op = verbs_opq_pop(&ep->pending)))
		verbs_op_complete(ep, op, op->status ? op->status : status);
}

static void verbs_credit_update(struct verbs_ep *ep, uint64_t released)
{
	if (released > ep->peer_released && released <= ep->sent_total) {
		ep->peer_released = released;
		if (ep->pending.head)
			verbs_txlist_add(ep);
	}
}

static void verbs_recv_handle(struct verbs_domain *vd, const struct ibv_wc *wc)
{
	struct verbs_rbuf *rb = verbs_rbuf_get(vd, (uint32_t)(wc->wr_id & 0xffffffffu));
	struct fab_cqe cqe = { 0 };
	struct verbs_ep *ep;

	if (!rb)
		return;
	if (wc->status != IBV_WC_SUCCESS) {
		if (wc->status != IBV_WC_WR_FLUSH_ERR)
			verbs_log_warn(vd, "qp 0x%x: receive failed: %s", wc->qp_num,
				       ibv_wc_status_str(wc->status));
		verbs_rbuf_repost(vd, rb);
		return;
	}
	ep = verbs_ep_by_qpn(vd, wc->qp_num);
	/*
	 * A message can arrive before the connection event that announces
	 * its endpoint (the passive side's ESTABLISHED trails the peer's first
	 * send): the endpoint is established now, and its ACCEPTED event goes
	 * out before this message's. Dropping it would lose the message and
	 * the peer's credit for good.
	 */
	if (ep && (ep->state == VERBS_EP_ACCEPTING || ep->state == VERBS_EP_CONNECTING))
		verbs_ep_comm_est(ep);
	if (!ep || ep->state != VERBS_EP_CONNECTED) {
		verbs_rbuf_repost(vd, rb); /* closed or failing: nobody reads it */
		return;
	}
	if (ep->received_total - ep->released_total >= vd->base.attr.recv_credits) {
		verbs_rbuf_repost(vd, rb);
		verbs_log_err(vd, "qp 0x%x: peer %s broke the protocol: sent without credit",
			      wc->qp_num, ep->base.peer_addr);
		verbs_ep_fail(ep, -EPROTO, NULL);
		return;
	}
	ep->received_total++;
	ep->base.stats.rx_bytes += wc->byte_len;
	cqe.ep = &ep->base;
	cqe.ctx = ep->base.ctx;
	cqe.len = wc->byte_len;
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		/* nothing landed in the buffer: back to the SRQ; the credit waits for the poll */
		verbs_rbuf_repost(vd, rb);
		ep->imm_held++;
		cqe.kind = FAB_EV_WRITE_IMM;
		cqe.imm = be32toh(wc->imm_data);
		fab_cq_push(&vd->base, &cqe);
		return;
	}
	if (wc->wc_flags & IBV_WC_WITH_IMM) {
		/* the sender's count of our messages it released, mod 2^32 */
		uint32_t d = be32toh(wc->imm_data) - (uint32_t)ep->peer_released;

		if (d && d < (1u << 31))
			verbs_credit_update(ep, ep->peer_released + d);
	}
	rb->held = true;
	rb->ep = ep;
	ep->rx_held++;
	ep->base.stats.recvs++;
	cqe.kind = FAB_EV_RECV;
	cqe.data = rb->addr;
	cqe.priv = rb;
	fab_cq_push(&vd->base, &cqe);
}

void verbs_cq_handle(struct verbs_domain *vd, const struct ibv_wc *wc)
{
	struct verbs_ep *ep;
	struct verbs_op *op;
	uint32_t seq = (uint32_t)wc->wr_id;
	enum verbs_op_kind kind = VERBS_OP_SEND;
	int status;

	if (wc->wr_id >> 63) {
		verbs_recv_handle(vd, wc);
		return;
	}
	ep = verbs_ep_by_id(vd, (uint32_t)(wc->wr_id >> 32));
	if (!ep)
		return; /* closed: its ops were completed then */
	status = verbs_wc_errno(ep, wc->status);
	ep->hw_quiet_ns = 0; /* the QP moves (verbs_check_stalls) */
	while ((op = ep->ring.head) && (int32_t)(op->seq - seq) <= 0) {
		verbs_opq_pop(&ep->ring);
		if (op->hw)
			ep->hw_inflight--;
		kind = op->kind;
		if (op->seq == seq)
			verbs_op_complete(ep, op, status);
		else
			verbs_op_complete(ep, op, op->status);
	}
	if (status && wc->status != IBV_WC_WR_FLUSH_ERR) {
		verbs_log_err(vd, "qp 0x%x: %s to %s failed: %s", wc->qp_num, verbs_op_kind_name(kind),
			      ep->base.peer_addr, ibv_wc_status_str(wc->status));
		verbs_ep_fail(ep, status, NULL);
	}
	verbs_ring_settle(ep);
	if (ep->pending.head && ep->state == VERBS_EP_CONNECTED)
		verbs_txlist_add(ep);
}

/* ----------------------------------------------------------------- posting */

static int verbs_post_check(struct verbs_ep *ep)
{
	if (ep->user_closed)
		return -EBADF;
	if (ep->state == VERBS_EP_FAILED || ep->state == VERBS_EP_DRAINING)
		return -ENOTCONN;
	if (ep->user_ops >= ep->vd->base.attr.sq_depth)
		return -EAGAIN;
	return 0;
}

static void verbs_post_queue(struct verbs_ep *ep, struct verbs_op *op)
{
	verbs_opq_push(&ep->pending, op);
	ep->user_ops++;
	/*
	 * Nothing in flight (a request/response pattern): ring the doorbell now
	 * rather than at the next progress. Otherwise queue, so a burst of posts
	 * goes out as one chain with one signaled WR.
	 */
	if (ep->state == VERBS_EP_CONNECTED && ep->hw_inflight == 0 && ep->pending.count == 1 &&
	    !ep->vd->in_progress) {
		verbs_ep_tx(ep);
		return;
	}
	verbs_txlist_add(ep);
}

int verbs_post_send(struct fab_ep *fep, const void *buf, size_t len, void *ctx)
{
	struct verbs_ep *ep = verbs_ep_of(fep);
	struct verbs_domain *vd = ep->vd;
	struct verbs_op *op;
	int rc = verbs_post_check(ep);

	if (rc)
		return rc;
	if (ep->state == VERBS_EP_CONNECTED && len > ep->peer_msg_size) {
		verbs_log_err(vd, "send to %s: %zu bytes exceeds the peer's msg_size %u",
			      fep->peer_addr, len, ep->peer_msg_size);
		return -EMSGSIZE;
	}
	op = verbs_op_alloc(vd);
	if (!op)
		return -ENOMEM;
	if (len <= vd->max_inline) {
		memcpy(op->inl, buf, len);
	} else {
		if (vd->nsfree == 0) {
			verbs_op_free(vd, op);
			return -EAGAIN; /* every send copy is in flight */
		}
		op->sbuf = vd->sfree[--vd->nsfree];
		memcpy(vd->smem + (size_t)op->sbuf * vd->base.attr.msg_size, buf, len);
	}
	op->kind = VERBS_OP_SEND;
	op->len = (uint32_t)len;
	op->ctx = ctx;
	verbs_post_queue(ep, op);
	return 0;
}

int verbs_post_write(struct fab_ep *fep, const struct fab_sge *src, uint64_t raddr, uint64_t rkey,
		     bool with_imm, uint32_t imm, void *ctx)
{
	struct verbs_ep *ep = verbs_ep_of(fep);
	struct verbs_op *op;
	int rc = verbs_post_check(ep);

	if (rc)
		return rc;
	op = verbs_op_alloc(ep->vd);
	if (!op)
		return -ENOMEM;
	op->kind = VERBS_OP_WRITE;
	op->with_imm = with_imm;
	op->imm = imm;
	op->len = src->len;
	op->laddr = src->addr;
	op->mr = src->mr;
	op->raddr = raddr;
	op->rkey64 = rkey;
	op->ctx = ctx;
	verbs_post_queue(ep, op);
	return 0;
}

int verbs_post_read(struct fab_ep *fep, const struct fab_sge *dst, uint64_t raddr, uint64_t rkey,
		    void *ctx)
{
	struct verbs_ep *ep = verbs_ep_of(fep);
	struct verbs_op *op;
	int rc = verbs_post_check(ep);

	if (rc)
		return rc;
	op = verbs_op_alloc(ep->vd);
	if (!op)
		return -ENOMEM;
	op->kind = VERBS_OP_READ;
	op->len = dst->len;
	op->laddr = dst->addr;
	op->mr = dst->mr;
	op->raddr = raddr;
	op->rkey64 = rkey;
	op->ctx = ctx;
	verbs_post_queue(ep, op);
	return 0;
}

/*
 * Check a one-sided op against the peer's region table: 0 = go, 1 = the
 * entry must be read first, <0 = refused (as the target would on TCP).
 */
static int verbs_key_check(struct verbs_ep *ep, const struct verbs_op *op)
{
	uint32_t idx = (uint32_t)(op->rkey64 >> 32) & 0xffffu;
	const struct verbs_keyent *k = &ep->keys[idx % VERBS_KEY_CACHE];
	unsigned int right = op->kind == VERBS_OP_READ ? FAB_ACCESS_REMOTE_READ
						       : FAB_ACCESS_REMOTE_WRITE;

	if ((op->rkey64 >> 48) == 0 || idx >= ep->peer_tbl_n)
		return -EACCES;
	if (k->key != op->rkey64)
		return ep->key_checked == op->rkey64 ? -EACCES : 1;
	if (k->qpn != 0 && k->qpn != ep->qp->qp_num)
		return -EACCES; /* a window for another connection */
	if (!(k->access & right))
		return -EACCES;
	if (op->raddr < k->addr || op->raddr - k->addr > k->len ||
	    op->len > k->len - (op->raddr - k->addr))
		return -ERANGE;
	return 0;
}

/*
 * A window's entry is good for the op that read it (and the ops right
 * behind it with the same key): its owner may revoke it any time, and a
 * revoked key must meet our check, not the device's, which would end the
 * connection.
 */
static void verbs_key_consume(struct verbs_ep *ep, const struct verbs_op *op)
{
	struct verbs_keyent *k = &ep->keys[((op->rkey64 >> 32) & 0xffffu) % VERBS_KEY_CACHE];
	const struct verbs_op *next = ep->pending.head;

	if (!(k->access & VERBS_TBL_WINDOW) ||
	    (next && next->rkey64 == op->rkey64 &&
	     (next->kind == VERBS_OP_WRITE || next->kind == VERBS_OP_READ)))
		return;
	k->key = 0;
	if (ep->key_checked == op->rkey64)
		ep->key_checked = 0;
}

/* A window's bind or invalidation (verbs_win.c); NULL win: refused before posting. */
static void verbs_win_wr(struct ibv_send_wr *wr, const struct verbs_op *op,
			 const struct verbs_win *w)
{
	if (op->kind == VERBS_OP_INV) {
		wr->opcode = IBV_WR_LOCAL_INV;
		wr->invalidate_rkey = w->hwkey;
		return;
	}
	wr->opcode = IBV_WR_BIND_MW;
	wr->bind_mw.mw = w->mw;
	wr->bind_mw.rkey = w->hwkey;
	wr->bind_mw.bind_info.mr = ((const struct verbs_mr *)w->mr)->ibmr;
	wr->bind_mw.bind_info.addr = w->addr;
	wr->bind_mw.bind_info.length = w->len;
	wr->bind_mw.bind_info.mw_access_flags =
	    ((w->access & FAB_ACCESS_REMOTE_READ) ? IBV_ACCESS_REMOTE_READ : 0) |
	    ((w->access & FAB_ACCESS_REMOTE_WRITE) ? IBV_ACCESS_REMOTE_WRITE : 0);
}

struct verbs_batch {
	struct ibv_send_wr wr[VERBS_POST_BATCH];
	struct ibv_sge sge[VERBS_POST_BATCH];
	unsigned int n;
};

static struct ibv_send_wr *verbs_batch_add(struct verbs_ep *ep, struct verbs_batch *b,
					   struct verbs_op *op)
{
	struct ibv_send_wr *wr = &b->wr[b->n];
	struct ibv_sge *sge = &b->sge[b->n];

	memset(wr, 0, sizeof(*wr));
	op->hw = true;
	op->seq = ep->next_seq++;
	wr->wr_id = ((uint64_t)ep->ep_id << 32) | op->seq;
	wr->sg_list = sge;
	wr->num_sge = op->len ? 1 : 0;
	if (++ep->unsignaled >= VERBS_SIGNAL_EVERY) {
		wr->send_flags |= IBV_SEND_SIGNALED;
		ep->unsignaled = 0;
	}
	if (b->n)
		b->wr[b->n - 1].next = wr;
	b->n++;
	ep->hw_inflight++;
	verbs_opq_push(&ep->ring, op);
	return wr;
}

static void verbs_sge_user(struct ibv_send_wr *wr, const struct verbs_op *op)
{
	wr->sg_list->addr = (uintptr_t)op->laddr;
	wr->sg_list->length = op->len;
	wr->sg_list->lkey = ((const struct verbs_mr *)op->mr)->ibmr->lkey;
}

/* Look up the peer's region-table entry for the head op's key. */
static void verbs_keyread_add(struct verbs_ep *ep, struct verbs_batch *b, uint64_t key)
{
	struct verbs_domain *vd = ep->vd;
	struct verbs_op *op = verbs_op_alloc(vd);
	struct ibv_send_wr *wr;
	uint32_t idx = (uint32_t)(key >> 32) & 0xffffu;

	if (!op)
		return;
	op->kind = VERBS_OP_KEYREAD;
	op->len = sizeof(struct verbs_tbl_ent);
	op->raddr = idx;
	op->rkey64 = key;
	wr = verbs_batch_add(ep, b, op);
	wr->opcode = IBV_WR_RDMA_READ;
	wr->wr.rdma.remote_addr = ep->peer_tbl_addr + (uint64_t)idx * sizeof(struct verbs_tbl_ent);
	wr->wr.rdma.rkey = ep->peer_tbl_rkey;
	wr->sg_list->addr = (uintptr_t)(vd->outbox + (size_t)ep->slot * VERBS_SLOT_LEN + 64);
	wr->sg_list->length = op->len;
	wr->sg_list->lkey = vd->outbox_mr->lkey;
	ep->key_wait = true;
}

/* Credits we owe and what we did to the peer, into its mailbox slot. */
static void verbs_mbox_add(struct verbs_ep *ep, struct verbs_batch *b)
{
	struct verbs_domain *vd = ep->vd;
	struct verbs_mbox *out = (struct verbs_mbox *)(vd->outbox +
						       (size_t)ep->slot * VERBS_SLOT_LEN);
	struct verbs_op *op = verbs_op_alloc(vd);
	struct ibv_send_wr *wr;

	if (!op)
		return;
	out->released = ep->released_total;
	out->writes = ep->out_writes;
	out->reads = ep->out_reads;
	out->errors = ep->out_errors;
	ep->released_pushed = ep->released_total;
	ep->owed_since_ns = 0;
	ep->owed_checks = 0;
	ep->pushed_writes = ep->out_writes;
	ep->pushed_reads = ep->out_reads;
	ep->pushed_errors = ep->out_errors;
	op->kind = VERBS_OP_MBOX;
	op->len = sizeof(*out);
	wr = verbs_batch_add(ep, b, op);
	wr->opcode = IBV_WR_RDMA_WRITE;
	wr->wr.rdma.remote_addr = ep->peer_mbox_addr;
	wr->wr.rdma.rkey = ep->peer_mbox_rkey;
	wr->sg_list->addr = (uintptr_t)out;
	wr->sg_list->length = op->len;
	wr->sg_list->lkey = vd->outbox_mr->lkey;
	if (op->len <= vd->max_inline)
		wr->send_flags |= IBV_SEND_INLINE;
	ep->mbox_inflight = true;
}

/*
 * Counters go out at once (a peer's stats must be right when our op
 * completes); credits ride on our sends, and go alone only when a quarter
 * of the window is owed or the oldest owed credit is VERBS_CREDIT_LAZY_NS old.
 */
static bool verbs_mbox_due(struct verbs_ep *ep)
{
	uint64_t owed = ep->released_total - ep->released_pushed;
	uint64_t now;

	if (ep->out_writes != ep->pushed_writes || ep->out_reads != ep->pushed_reads ||
	    ep->out_errors != ep->pushed_errors)
		return true;
	if (owed == 0)
		return false;
	if (owed * 4 >= ep->vd->base.attr.recv_credits || ep->vd->in_wait)
		return true; /* a quarter of the window, or we are about to sleep */
	/* the clock is costly (an HPET syscall in VMs): look every 64th call */
	if (++ep->owed_checks & 63)
		return false;
	now = clock_now_ns();
	if (!ep->owed_since_ns)
		ep->owed_since_ns = now;
	return now - ep->owed_since_ns >= VERBS_CREDIT_LAZY_NS;
}

bool verbs_ep_owes(const struct verbs_ep *ep)
{
	return ep->released_total != ep->released_pushed;
}

bool verbs_ep_credit_stalled(const struct verbs_ep *ep)
{
	return ep->stalled && ep->pending.head;
}

/* Move what can go from the pending queue onto the QP, as one chain. */
int verbs_ep_tx(struct verbs_ep *ep)
{
	struct verbs_domain *vd = ep->vd;
	struct verbs_batch b;
	struct ibv_send_wr *wr, *bad;
	struct verbs_op *op;
	uint64_t r;
	int rc;

	if (ep->state != VERBS_EP_CONNECTED)
		return 0;
	b.n = 0;
	r = __atomic_load_n(&vd->mbox[ep->slot].released, __ATOMIC_ACQUIRE);
	verbs_credit_update(ep, r);
	while ((op = ep->pending.head) && b.n < VERBS_POST_BATCH - 2 &&
	       ep->hw_inflight + 2 < ep->hw_sq) {
		if (!op->status && (op->kind == VERBS_OP_WRITE || op->kind == VERBS_OP_READ)) {
			rc = verbs_key_check(ep, op);
			if (rc > 0) {
				if (!ep->key_wait)
					verbs_keyread_add(ep, &b, op->rkey64);
				break;
			}
			if (rc < 0) {
				op->status = rc;
				ep->out_errors++;
			}
		}
		if (!op->status && (op->kind == VERBS_OP_BIND || op->kind == VERBS_OP_INV) &&
		    !verbs_win_of_op(ep, op))
			op->status = -ECANCELED; /* its window went meanwhile (teardown) */
		if (op->status) {
			/* refused: completes in order, after what was posted before it */
			verbs_opq_pop(&ep->pending);
			if (op->kind == VERBS_OP_WRITE || op->kind == VERBS_OP_READ)
				verbs_key_consume(ep, op);
			op->hw = false;
			op->seq = ep->next_seq++;
			verbs_opq_push(&ep->ring, op);
			continue;
		}
		if (op->kind == VERBS_OP_SEND || op->with_imm) {
			if (ep->sent_total - ep->peer_released >= ep->peer_credits) {
				if (!ep->stalled) {
					ep->stalled = true;
					ep->base.stats.credit_stalls++;
				}
				break;
			}
			ep->stalled = false;
			ep->sent_total++;
		}
		verbs_opq_pop(&ep->pending);
		wr = verbs_batch_add(ep, &b, op);
		switch (op->kind) {
		case VERBS_OP_SEND:
			wr->opcode = IBV_WR_SEND_WITH_IMM;
			wr->imm_data = htobe32((uint32_t)ep->released_total);
			ep->released_pushed = ep->released_total;
			ep->owed_since_ns = 0;
			ep->owed_checks = 0;
			wr->sg_list->length = op->len;
			if (op->sbuf < 0) {
				wr->sg_list->addr = (uintptr_t)op->inl;
				wr->send_flags |= IBV_SEND_INLINE;
			} else {
				wr->sg_list->addr = (uintptr_t)(vd->smem + (size_t)op->sbuf *
								vd->base.attr.msg_size);
				wr->sg_list->lkey = vd->smr->lkey;
			}
			break;
		case VERBS_OP_WRITE:
			wr->opcode = op->with_imm ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
			wr->imm_data = htobe32(op->imm);
			wr->wr.rdma.remote_addr = op->raddr;
			wr->wr.rdma.rkey = (uint32_t)op->rkey64;
			verbs_sge_user(wr, op);
			ep->out_writes++;
			verbs_key_consume(ep, op);
			break;
		case VERBS_OP_READ:
			wr->opcode = IBV_WR_RDMA_READ;
			wr->wr.rdma.remote_addr = op->raddr;
			wr->wr.rdma.rkey = (uint32_t)op->rkey64;
			verbs_sge_user(wr, op);
			ep->out_reads++;
			verbs_key_consume(ep, op);
			break;
		default: /* VERBS_OP_BIND, VERBS_OP_INV */
			verbs_win_wr(wr, op, verbs_win_of_op(ep, op));
			break;
		}
	}
	if (!ep->mbox_inflight && verbs_mbox_due(ep) && ep->hw_inflight < ep->hw_sq)
		verbs_mbox_add(ep, &b);
	if (b.n == 0) {
		verbs_ring_settle(ep);
		if (verbs_ep_owes(ep) || verbs_mbox_due(ep) || (ep->pending.head && !ep->key_wait))
			verbs_txlist_add(ep);
		return 0;
	}
	b.wr[b.n - 1].send_flags |= IBV_SEND_SIGNALED;
	ep->unsignaled = 0;
	rc = ibv_post_send(ep->qp, &b.wr[0], &bad);
	if (rc) {
		verbs_log_err(vd, "qp 0x%x: post_send to %s: %s", ep->qp->qp_num,
			      ep->base.peer_addr, strerror(rc));
		/* nothing of the chain from bad on reached the QP; fail it all */
		for (wr = bad; wr; wr = wr->next)
			ep->hw_inflight--;
		for (op = ep->ring.head; op; op = op->next)
			if ((int32_t)(op->seq - (uint32_t)bad->wr_id) >= 0)
				op->hw = false;
		verbs_ep_fail(ep, -rc, NULL);
		return (int)b.n;
	}
	if (ep->pending.head || verbs_ep_owes(ep) || verbs_mbox_due(ep))
		verbs_txlist_add(ep);
	return (int)b.n;
}

/* ---------------------------------------------------------------- receive */

void verbs_recv_release(const struct fab_cqe *cqe)
{
	struct verbs_ep *ep = verbs_ep_of(cqe->ep);
	struct verbs_rbuf *rb = cqe->priv;

	if (cqe->kind == FAB_EV_RECV) {
		if (!rb || !rb->held || rb->ep != ep) {
			verbs_log_err(ep->vd, "recv_release: buffer %p is not held", cqe->data);
			return;
		}
		verbs_rbuf_repost(ep->vd, rb);
		ep->rx_held--;
	} else if (cqe->kind == FAB_EV_WRITE_IMM) {
		if (ep->imm_held == 0)
			return;
		ep->imm_held--;
	} else {
		return;
	}
	ep->released_total++;
	if (ep->user_closed) {
		if (ep->rx_held == 0 && ep->imm_held == 0)
			verbs_ep_destroy(ep);
		return;
	}
	if (ep->state == VERBS_EP_CONNECTED)
		verbs_txlist_add(ep);
}

void verbs_ep_stats(const struct fab_ep *fep, struct fab_ep_stats *st)
{
	const struct verbs_ep *ep = (const struct verbs_ep *)fep;
	const struct verbs_mbox *m = &ep->vd->mbox[ep->slot];
	uint64_t released = __atomic_load_n(&m->released, __ATOMIC_ACQUIRE);
	uint64_t used;

	if (released < ep->peer_released || released > ep->sent_total)
		released = ep->peer_released;
	used = ep->sent_total - released;
	st->credits = used >= ep->peer_credits ? 0 : ep->peer_credits - (uint32_t)used;
	st->sq_inflight = ep->user_ops;
	/* what the peer did to us, as it reported into our mailbox */
	st->remote_writes = __atomic_load_n(&m->writes, __ATOMIC_RELAXED);
	st->remote_reads = __atomic_load_n(&m->reads, __ATOMIC_RELAXED);
	st->remote_errors = __atomic_load_n(&m->errors, __ATOMIC_RELAXED);
}
