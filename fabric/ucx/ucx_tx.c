/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UCX backend: posting, issuing and completing operations.
 *
 * Posts only queue (pendq). ucx_ep_pump, run by progress after UCX has
 * delivered what arrived, hands ops to UCX strictly in posting order: a send
 * waits for a credit, a one-sided op for its peer's rkey, and everything
 * waits behind a write_imm until its IMM message left. Issued ops sit in
 * inflq and complete in posting order once UCX is done with them; a write
 * also needs a later ucp_ep_flush_nbx to have completed, which is what makes
 * "completion = data placed at the target" true on every transport.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/ucx/ucx.h"

static void ucx_op_release(struct ucx_ep *ep, struct ucx_op *op)
{
	if (op->rk) {
		ucx_rkey_release(ep, op->rk);
		op->rk = NULL;
	}
	ucx_op_put(ep->ud, op);
}

/* A request finished (from its callback, or at once when UCX returned no request). */
static void ucx_op_finished(struct ucx_op *op, ucs_status_t st)
{
	struct ucx_ep *ep = op->ep;

	if (st != UCS_OK && op->status == 0)
		op->status = ucx_status_errno(st);
	switch (op->kind) {
	case UCX_OP_FLUSH:
		/* A failed flush leaves its writes unconfirmed: they fail with it. */
		if (op->seq > ep->flushed_seq)
			ep->flushed_seq = op->seq;
		if (st != UCS_OK)
			ucx_ep_set_failing(ep, op->status, "flush");
		ep->ud->dirty = true;
		break;
	case UCX_OP_CTRL:
		if (op->revoke)
			ep->ud->revokes_inflight--;
		break;
	case UCX_OP_READ:
		if (st == UCS_OK)
			ep->base.stats.rx_bytes += op->len;
		ep->ud->dirty = true;
		break;
	default:
		ep->ud->dirty = true;
		break;
	}
	if (op->refs == 0 && op->reported)
		ucx_op_release(ep, op);
}

void ucx_req_cb(void *request, ucs_status_t status, void *user_data)
{
	struct ucx_op *op = user_data;

	ucp_request_free(request);
	op->refs--;
	op->ep->refs--;
	ucx_op_finished(op, status);
}

/*
 * What UCX returned for a request: 1 in flight (the callback will come),
 * 0 done now, -errno failed now. The caller finishes the op in the last two
 * cases (ucx_op_finished or its own cleanup).
 */
int ucx_op_track(struct ucx_op *op, ucs_status_ptr_t sp)
{
	if (sp == NULL)
		return 0;
	if (UCS_PTR_IS_ERR(sp))
		return ucx_status_errno(UCS_PTR_STATUS(sp));
	op->refs++;
	op->ep->refs++;
	return 1;
}

static void ucx_req_param(ucp_request_param_t *rp, struct ucx_op *op)
{
	memset(rp, 0, sizeof(*rp));
	rp->op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
	rp->cb.send = ucx_req_cb;
	rp->user_data = op;
}

/* Fill in the credits we owe and the peer's cookie, encode into op->hdr. */
static void ucx_hdr_seal(struct ucx_ep *ep, struct ucx_op *op, struct ucx_hdr *h)
{
	if (h->type != UCX_M_HELLO) {
		h->cookie = ep->peer_cookie;
		h->credits = ep->rx_owed;
		ep->rx_owed = 0;
	}
	ucx_hdr_encode(h, op->hdr);
}

static ucs_status_ptr_t ucx_am_send(struct ucx_ep *ep, struct ucx_op *op, const void *payload,
				    uint32_t len, uint32_t flags)
{
	ucp_request_param_t rp;

	ucx_req_param(&rp, op);
	rp.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
	/* Eager only: messages stay in order and arrive whole (no rendezvous). */
	rp.flags = flags | UCP_AM_SEND_FLAG_EAGER;
	ep->base.stats.tx_bytes += UCX_HDR_LEN + len;
	return ucp_am_send_nbx(ep->uep, UCX_AM_ID, op->hdr, UCX_HDR_LEN, payload, len, &rp);
}

/* Send an internal message now. The op is ours to keep or free; -errno if it failed. */
int ucx_ctrl_send(struct ucx_ep *ep, struct ucx_op *op, const struct ucx_hdr *h,
		  const void *payload, uint32_t len, uint32_t flags)
{
	struct ucx_hdr hh = *h;
	int rc;

	op->kind = UCX_OP_CTRL;
	op->ep = ep;
	op->reported = true;
	if (len) {
		if (!op->msgbuf)
			op->msgbuf = ucx_msgbuf_alloc(ep->ud);
		if (!op->msgbuf) {
			ucx_op_put(ep->ud, op);
			return -ENOMEM;
		}
		if (payload != op->msgbuf)
			memcpy(op->msgbuf, payload, len);
	}
	ucx_hdr_seal(ep, op, &hh);
	if (op->revoke)
		ep->ud->revokes_inflight++;
	rc = ucx_op_track(op, ucx_am_send(ep, op, op->msgbuf, len, flags));
	if (rc <= 0) {
		if (op->revoke)
			ep->ud->revokes_inflight--;
		ucx_op_put(ep->ud, op);
	}
	return rc < 0 ? rc : 0;
}

/* Queue an internal message (answers, revocations); the next pump sends it. */
int ucx_ep_queue_ctrl(struct ucx_ep *ep, struct ucx_hdr *h, const void *payload, uint32_t len)
{
	struct ucx_op *op = ucx_op_alloc(ep->ud);

	if (!op)
		return -ENOMEM;
	if (len) {
		op->msgbuf = ucx_msgbuf_alloc(ep->ud);
		if (!op->msgbuf) {
			ucx_op_put(ep->ud, op);
			return -ENOMEM;
		}
		memcpy(op->msgbuf, payload, len);
	}
	op->kind = UCX_OP_CTRL;
	op->len = len;
	op->revoke = h->type == UCX_M_REVOKE;
	ucx_hdr_encode(h, op->hdr); /* kept decoded-able until sent */
	ucx_op_enqueue(&ep->ctlq, op);
	return 0;
}

/* ------------------------------------------------------------ posting */

static int ucx_post_check(struct ucx_ep *ep)
{
	if (ep->user_closed)
		return -EBADF;
	if (ep->state == UCX_EP_FAILED)
		return -ENOTCONN;
	if (ep->user_ops >= ep->ud->base.attr.sq_depth)
		return -EAGAIN;
	return 0;
}

static struct ucx_op *ucx_post_op(struct ucx_ep *ep, enum ucx_op_kind kind, void *ctx)
{
	struct ucx_op *op = ucx_op_alloc(ep->ud);

	if (!op)
		return NULL;
	op->kind = kind;
	op->ep = ep;
	op->ctx = ctx;
	ucx_op_enqueue(&ep->pendq, op);
	ep->user_ops++;
	ep->ud->dirty = true; /* fab_wait must not sleep on it */
	return op;
}

int ucx_post_send(struct fab_ep *fep, const void *buf, size_t len, void *ctx)
{
	struct ucx_ep *ep = ucx_ep_of(fep);
	struct ucx_op *op;
	void *copy;
	int rc = ucx_post_check(ep);

	if (rc)
		return rc;
	if (ep->state == UCX_EP_CONNECTED && len > ep->peer_msg_size) {
		fab_log_err(fep->dom, "send to %s: %zu bytes exceeds the peer's msg_size %u",
			    fep->peer_addr, len, ep->peer_msg_size);
		return -EMSGSIZE;
	}
	copy = ucx_msgbuf_alloc(ep->ud);
	if (!copy)
		return -ENOMEM;
	op = ucx_post_op(ep, UCX_OP_SEND, ctx);
	if (!op) {
		free(copy);
		return -ENOMEM;
	}
	if (len)
		memcpy(copy, buf, len);
	op->msgbuf = copy;
	op->len = (uint32_t)len;
	return 0;
}

int ucx_post_write(struct fab_ep *fep, const struct fab_sge *src, uint64_t raddr, uint64_t rkey,
		   bool with_imm, uint32_t imm, void *ctx)
{
	struct ucx_ep *ep = ucx_ep_of(fep);
	struct ucx_op *op;
	int rc = ucx_post_check(ep);

	if (rc)
		return rc;
	op = ucx_post_op(ep, UCX_OP_WRITE, ctx);
	if (!op)
		return -ENOMEM;
	op->laddr = src->addr;
	op->len = src->len;
	op->mr = src->mr;
	op->raddr = raddr;
	op->rkey = rkey;
	op->with_imm = with_imm;
	op->imm = imm;
	return 0;
}

int ucx_post_read(struct fab_ep *fep, const struct fab_sge *dst, uint64_t raddr, uint64_t rkey,
		  void *ctx)
{
	struct ucx_ep *ep = ucx_ep_of(fep);
	struct ucx_op *op;
	int rc = ucx_post_check(ep);

	if (rc)
		return rc;
	op = ucx_post_op(ep, UCX_OP_READ, ctx);
	if (!op)
		return -ENOMEM;
	op->laddr = dst->addr;
	op->len = dst->len;
	op->mr = dst->mr;
	op->raddr = raddr;
	op->rkey = rkey;
	return 0;
}

/* ------------------------------------------------------------- issuing */

/* An op leaves pendq for inflq; status != 0 means it failed before UCX saw it. */
static void ucx_op_to_inflight(struct ucx_ep *ep, struct ucx_op *op, int status)
{
	ucx_op_dequeue(&ep->pendq);
	op->status = status;
	ucx_op_enqueue(&ep->inflq, op);
	ep->ud->dirty = true;
}

static void ucx_ep_refuse(struct ucx_ep *ep, struct ucx_op *op, int rc, const char *why)
{
	ep->note_errors++;
	if (ep->log_budget) {
		ep->log_budget--;
		fab_log_warn(&ep->ud->base, "%s of %u bytes at 0x%lx key 0x%lx on %s refused: %s%s",
			     op->kind == UCX_OP_READ ? "read" : "write", op->len,
			     (unsigned long)op->raddr, (unsigned long)op->rkey, ep->base.peer_addr,
			     why, ep->log_budget ? "" : " (further refusals are only counted)");
	}
	ucx_op_to_inflight(ep, op, rc);
}

static int ucx_ep_send_note(struct ucx_ep *ep)
{
	struct ucx_hdr h = { .type = UCX_M_NOTE };
	struct ucx_op *op;

	if (!ep->note_writes && !ep->note_reads && !ep->note_errors)
		return 0;
	op = ucx_op_alloc(ep->ud);
	if (!op)
		return -ENOMEM;
	h.a = ep->note_writes;
	h.b = ep->note_reads;
	h.c = ep->note_errors;
	ep->note_writes = ep->note_reads = ep->note_errors = 0;
	return ucx_ctrl_send(ep, op, &h, NULL, 0, 0);
}

static int ucx_issue_send(struct ucx_ep *ep, struct ucx_op *op)
{
	struct ucx_hdr h = { .type = UCX_M_MSG };
	int rc;

	if (op->len > ep->peer_msg_size) {
		fab_log_err(&ep->ud->base, "send to %s: %u bytes exceeds the peer's msg_size %u",
			    ep->base.peer_addr, op->len, ep->peer_msg_size);
		ucx_op_to_inflight(ep, op, -EMSGSIZE);
		return 1;
	}
	if (ep->tx_credits == 0) {
		if (!op->stalled) {
			op->stalled = true;
			ep->base.stats.credit_stalls++;
		}
		return 0;
	}
	ep->tx_credits--;
	h.a = ep->tx_seq++;
	ucx_hdr_seal(ep, op, &h);
	ucx_op_to_inflight(ep, op, 0);
	rc = ucx_op_track(op, ucx_am_send(ep, op, op->msgbuf, op->len, 0));
	if (rc <= 0)
		ucx_op_finished(op, rc ? UCS_ERR_IO_ERROR : UCS_OK);
	return 1;
}

/* Returns 1 if the op left pendq, 0 if it must wait (rkey, credit). */
static int ucx_issue_rma(struct ucx_ep *ep, struct ucx_op *op)
{
	bool is_write = op->kind == UCX_OP_WRITE;
	struct ucx_rkey *rk = ucx_rkey_find(ep, op->rkey);
	ucp_request_param_t rp;
	ucs_status_ptr_t sp;
	uint64_t off;
	int rc;

	if (!rk || rk->fetching)
		return 0; /* ucx_rkey_find asked the owner; RKEY_RESP wakes us */
	if (rk->status) {
		ucx_ep_refuse(ep, op, -EACCES, "refused by its owner");
		ucx_rkey_drop(ep, rk); /* ask again next time: the key may be registered by then */
		return 1;
	}
	if (!(rk->access & (is_write ? FAB_ACCESS_REMOTE_WRITE : FAB_ACCESS_REMOTE_READ))) {
		ucx_ep_refuse(ep, op, -EACCES, "the key does not allow it");
		if (rk->once)
			ucx_rkey_drop(ep, rk);
		return 1;
	}
	off = op->raddr - rk->base;
	if (op->raddr < rk->base || off > rk->len || op->len > rk->len - off) {
		ucx_ep_refuse(ep, op, -ERANGE, "outside the key's range");
		if (rk->once)
			ucx_rkey_drop(ep, rk);
		return 1;
	}
	if (op->with_imm) {
		if (ep->tx_credits == 0) {
			if (!op->stalled) {
				op->stalled = true;
				ep->base.stats.credit_stalls++;
			}
			return 0;
		}
		ep->tx_credits--;
	}
	/* Counted for the target in the NOTE the pump sends after this batch. */
	if (is_write)
		ep->note_writes++;
	else
		ep->note_reads++;
	op->rk = rk;
	rk->inuse++;
	if (rk->once)
		rk->dead = true; /* the next op asks the owner again */
	ucx_op_to_inflight(ep, op, 0);
	ucx_req_param(&rp, op);
	if (is_write) {
		op->seq = ++ep->write_seq;
		ep->base.stats.tx_bytes += op->len;
		sp = ucp_put_nbx(ep->uep, op->laddr, op->len, op->raddr, rk->rkey, &rp);
		if (op->with_imm)
			ep->barrier = op;
	} else {
		sp = ucp_get_nbx(ep->uep, op->laddr, op->len, op->raddr, rk->rkey, &rp);
	}
	rc = ucx_op_track(op, sp);
	if (rc <= 0)
		ucx_op_finished(op, rc ? UCS_PTR_STATUS(sp) : UCS_OK);
	return 1;
}

static int ucx_issue_flush(struct ucx_ep *ep)
{
	struct ucx_op *op = ucx_op_alloc(ep->ud);
	ucp_request_param_t rp;
	int rc;

	if (!op)
		return -ENOMEM;
	op->kind = UCX_OP_FLUSH;
	op->ep = ep;
	op->reported = true;
	op->seq = ep->write_seq;
	ep->flush_seq = ep->write_seq;
	ucx_req_param(&rp, op);
	rc = ucx_op_track(op, ucp_ep_flush_nbx(ep->uep, &rp));
	if (rc <= 0)
		ucx_op_finished(op, rc ? UCS_ERR_IO_ERROR : UCS_OK);
	return 0;
}

static int ucx_ep_send_ctlq(struct ucx_ep *ep)
{
	struct ucx_op *op;
	int n = 0;

	while ((op = ucx_op_dequeue(&ep->ctlq))) {
		struct ucx_hdr h;

		ucx_hdr_decode(op->hdr, &h);
		ucx_ctrl_send(ep, op, &h, op->msgbuf, op->len, 0);
		n++;
	}
	return n;
}

/* Hand what can go to UCX. Returns how many things went. */
int ucx_ep_pump(struct ucx_ep *ep)
{
	struct ucx_op *op;
	int n = 0;

	if (ep->state != UCX_EP_CONNECTED || ep->fail_rc)
		return 0;
	n += ucx_ep_send_ctlq(ep);
	while ((op = ep->pendq.head) && !ep->barrier) {
		int went;

		if (op->kind == UCX_OP_SEND) {
			/* What the peer should count goes before later messages. */
			ucx_ep_send_note(ep);
			went = ucx_issue_send(ep, op);
		} else {
			went = ucx_issue_rma(ep, op);
		}
		if (!went)
			break;
		n++;
	}
	n += ucx_ep_send_ctlq(ep); /* rkey requests the loop just queued */
	ucx_ep_send_note(ep);
	if (ep->write_seq != ep->flush_seq)
		ucx_issue_flush(ep);
	/* Credits owed with nothing else to carry them travel alone. */
	if (ep->rx_owed) {
		struct ucx_hdr h = { .type = UCX_M_CREDIT };

		op = ucx_op_alloc(ep->ud);
		if (op)
			ucx_ctrl_send(ep, op, &h, NULL, 0, 0);
	}
	return n;
}

/* ---------------------------------------------------------- completions */

static void ucx_op_complete(struct ucx_ep *ep, struct ucx_op *op, int status)
{
	struct fab_cqe cqe = { 0 };

	switch (op->kind) {
	case UCX_OP_SEND:
		cqe.kind = FAB_EV_SEND;
		if (!status)
			ep->base.stats.sends++;
		break;
	case UCX_OP_WRITE:
		cqe.kind = FAB_EV_WRITE;
		if (!status) {
			ep->base.stats.writes++;
			ep->base.stats.write_bytes += op->len;
		}
		break;
	default:
		cqe.kind = FAB_EV_READ;
		if (!status) {
			ep->base.stats.reads++;
			ep->base.stats.read_bytes += op->len;
		}
		break;
	}
	cqe.len = op->len;
	cqe.status = status;
	cqe.ctx = op->ctx;
	cqe.ep = ep->user_closed ? NULL : &ep->base;
	ep->user_ops--;
	fab_cq_push(&ep->ud->base, &cqe);
	op->reported = true;
	if (op->refs == 0)
		ucx_op_release(ep, op);
}

/* A write_imm whose data is placed: the IMM message goes now, on its credit. */
static void ucx_send_imm(struct ucx_ep *ep, struct ucx_op *op)
{
	struct ucx_hdr h = { .type = UCX_M_IMM };
	struct ucx_op *c = ucx_op_alloc(ep->ud);
	int rc = -ENOMEM;

	h.a = op->imm;
	h.b = op->len;
	if (c)
		rc = ucx_ctrl_send(ep, c, &h, NULL, 0, 0);
	if (rc)
		ucx_ep_set_failing(ep, rc, "cannot send the immediate");
	op->imm_sent = true;
}

/* Completions, in posting order, for the ops UCX is done with; at most budget. */
unsigned int ucx_ep_complete_ready(struct ucx_ep *ep, unsigned int budget)
{
	struct ucx_op *op;
	unsigned int n = 0;

	while ((op = ep->inflq.head) && op->refs == 0) {
		if (n == budget) {
			ep->ud->dirty = true; /* more next time */
			break;
		}
		if (op->kind == UCX_OP_WRITE && op->status == 0 && op->rk) {
			if (ep->flushed_seq < op->seq)
				break;
			if (op->with_imm && !op->imm_sent) {
				if (ep->state != UCX_EP_CONNECTED || ep->fail_rc)
					break; /* the failure path completes it */
				ucx_send_imm(ep, op);
			}
		}
		if (op->with_imm && op->status && op->rk)
			ep->tx_credits++; /* the IMM never went: its credit is still ours */
		if (ep->barrier == op)
			ep->barrier = NULL;
		ucx_op_dequeue(&ep->inflq);
		ucx_op_complete(ep, op, op->status);
		n++;
	}
	return n;
}

/* The endpoint failed or was closed: every op completes with status, in order. */
void ucx_ep_flush_ops(struct ucx_ep *ep, int status)
{
	struct ucx_op *op;

	while ((op = ucx_op_dequeue(&ep->inflq)))
		ucx_op_complete(ep, op,
				op->status && op->status != -ECANCELED ? op->status : status);
	while ((op = ucx_op_dequeue(&ep->pendq)))
		ucx_op_complete(ep, op, status);
	while ((op = ucx_op_dequeue(&ep->ctlq)))
		ucx_op_put(ep->ud, op);
	ep->barrier = NULL;
}

/*
 * A local region is going away. Queued ops using it are cancelled; an op
 * already in UCX may still read or write it, so its endpoint is failed,
 * which makes UCX drop the request (as TCP does for a half-sent frame).
 */
void ucx_ep_revoke_local(struct ucx_ep *ep, struct fab_mr *mr)
{
	struct ucx_op_queue keep = { 0 };
	struct ucx_op *op;
	bool fatal = false;

	for (op = ep->inflq.head; op; op = op->next)
		if (op->mr == mr && op->refs > 0)
			fatal = true;
	if (fatal) {
		ucx_ep_fail(ep, -ECANCELED, "region deregistered while in use");
		return;
	}
	while ((op = ucx_op_dequeue(&ep->pendq))) {
		if (op->mr == mr) {
			op->status = -ECANCELED;
			ucx_op_enqueue(&ep->inflq, op);
			ep->ud->dirty = true;
		} else {
			ucx_op_enqueue(&keep, op);
		}
	}
	ep->pendq = keep;
}
