/* SPDX-License-Identifier: Apache-2.0 */
/* TCP backend: posting operations, returning receive credit, region revocation. */
#include <errno.h>
#include <string.h>

#include "fabric/tcp/tcp.h"

/* --------------------------------------------------------------- posting */

static int tcp_post_check(struct tcp_ep *ep)
{
	if (ep->user_closed)
		return -EBADF;
	if (ep->state == TCP_EP_FAILED)
		return -ENOTCONN;
	if (ep->user_ops >= ep->tdom->base.attr.sq_depth)
		return -EAGAIN;
	return 0;
}

int tcp_post_send(struct fab_ep *fep, const void *buf, size_t len, void *ctx)
{
	struct tcp_ep *ep = tcp_ep_of(fep);
	struct tcp_op *op;
	int rc = tcp_post_check(ep);

	if (rc)
		return rc;
	if (ep->state == TCP_EP_CONNECTED && len > ep->peer_msg_size) {
		fab_log_err(fep->dom, "send to %s: %zu bytes exceeds the peer's msg_size %u",
			    fep->peer_addr, len, ep->peer_msg_size);
		return -EMSGSIZE;
	}
	op = tcp_op_alloc(ep->tdom);
	if (!op)
		return -ENOMEM;
	op->msgbuf = tcp_msgbuf_alloc(ep->tdom);
	if (!op->msgbuf) {
		tcp_op_free(ep->tdom, op);
		return -ENOMEM;
	}
	if (len)
		memcpy(op->msgbuf, buf, len);
	op->kind = TCP_OP_SEND;
	op->h.type = TCP_F_MSG;
	op->h.len = (uint32_t)len;
	op->payload = op->msgbuf;
	op->payload_len = (uint32_t)len;
	op->ctx = ctx;
	tcp_op_enqueue(&ep->txq, op);
	ep->user_ops++;
	tcp_txlist_add(ep);
	return 0;
}

int tcp_post_write(struct fab_ep *fep, const struct fab_sge *src, uint64_t raddr, uint64_t rkey,
		   bool with_imm, uint32_t imm, void *ctx)
{
	struct tcp_ep *ep = tcp_ep_of(fep);
	struct tcp_op *op;
	int rc = tcp_post_check(ep);

	if (rc)
		return rc;
	op = tcp_op_alloc(ep->tdom);
	if (!op)
		return -ENOMEM;
	op->kind = TCP_OP_WRITE;
	op->h.type = with_imm ? TCP_F_WRITE_IMM : TCP_F_WRITE;
	op->h.len = src->len;
	op->h.imm = imm;
	op->h.id = ep->next_id++;
	op->h.addr = raddr;
	op->h.key = rkey;
	op->payload = src->addr;
	op->payload_len = src->len;
	op->mr = src->mr;
	op->ctx = ctx;
	tcp_op_enqueue(&ep->txq, op);
	ep->user_ops++;
	tcp_txlist_add(ep);
	return 0;
}

int tcp_post_read(struct fab_ep *fep, const struct fab_sge *dst, uint64_t raddr, uint64_t rkey,
		  void *ctx)
{
	struct tcp_ep *ep = tcp_ep_of(fep);
	struct tcp_op *op;
	int rc = tcp_post_check(ep);

	if (rc)
		return rc;
	op = tcp_op_alloc(ep->tdom);
	if (!op)
		return -ENOMEM;
	op->kind = TCP_OP_READ;
	op->h.type = TCP_F_READ_REQ;
	op->h.imm = dst->len; /* READ_REQ carries the length asked for in imm */
	op->h.id = ep->next_id++;
	op->h.addr = raddr;
	op->h.key = rkey;
	op->dst = dst->addr;
	op->mr = dst->mr;
	op->ctx = ctx;
	tcp_op_enqueue(&ep->txq, op);
	ep->user_ops++;
	tcp_txlist_add(ep);
	return 0;
}

void tcp_recv_release(const struct fab_cqe *cqe)
{
	struct tcp_ep *ep = tcp_ep_of(cqe->ep);

	if (cqe->kind == FAB_EV_RECV) {
		struct tcp_slot *slot = cqe->priv;

		if (!slot || slot->ep != ep || !slot->held) {
			fab_log_err(cqe->ep->dom, "recv_release: buffer %p is not held", cqe->data);
			return;
		}
		slot->held = false;
		ep->free_slots[ep->nfree++] = (uint32_t)(slot - ep->slots);
		ep->slots_held--;
	} else if (cqe->kind == FAB_EV_WRITE_IMM) {
		if (ep->imm_held == 0)
			return;
		ep->imm_held--;
	} else {
		return;
	}
	if (ep->user_closed) {
		if (ep->slots_held == 0 && ep->imm_held == 0)
			tcp_ep_destroy(ep);
		return;
	}
	if (ep->state == TCP_EP_CONNECTED) {
		ep->rx_owed++;
		tcp_txlist_add(ep);
	}
}

/* --------------------------------------------------------- revocation */

/* A region is going away: nothing may read or write it after we return. */
void tcp_ep_revoke_mr(struct tcp_ep *ep, struct fab_mr *mr)
{
	struct tcp_op_queue keep = {0};
	struct tcp_op *op;
	bool fatal = false;

	if (ep->state == TCP_EP_FAILED)
		return;
	while ((op = tcp_op_dequeue(&ep->txq))) {
		if (op->mr != mr) {
			tcp_op_enqueue(&keep, op);
			continue;
		}
		if (op->kind == TCP_OP_READ) {
			op->revoked = true; /* the answer is discarded */
			tcp_op_enqueue(&keep, op);
		} else if (op->tx_off > 0 || (op->encoded && op->payload_len)) {
			/* Part of it is on the wire: the stream cannot be taken back. */
			fatal = true;
			tcp_op_enqueue(&keep, op);
		} else if (op->kind == TCP_OP_CTRL) {
			/* An unsent READ_RESP becomes an error answer without data. */
			op->h.status = -ECANCELED;
			op->h.len = 0;
			op->payload = NULL;
			op->payload_len = 0;
			op->mr = NULL;
			if (op->encoded)
				tcp_hdr_encode(&op->h, op->hdr);
			tcp_op_enqueue(&keep, op);
		} else {
			if (op->encoded && op->h.type == TCP_F_WRITE_IMM)
				ep->tx_credits++;
			if (op->encoded)
				ep->rx_owed += op->h.credits;
			if (op->encoded && op->h.flags) {
				/* the write acks it carried keep their place in the stream */
				struct tcp_op *c = tcp_op_alloc(ep->tdom);

				if (c != NULL) {
					c->kind = TCP_OP_CTRL;
					c->h.type = TCP_F_CREDIT;
					c->h.flags = op->h.flags;
					c->wacks_fixed = true;
					tcp_op_enqueue(&keep, c);
				} else {
					fatal = true;
				}
			}
			tcp_ep_complete(ep, op, -ECANCELED);
		}
	}
	ep->txq = keep;
	for (op = ep->waitq.head; op; op = op->next)
		if (op->mr == mr)
			op->revoked = true;
	if (ep->rx == TCP_RX_PAYLOAD && ep->rx_mr == mr) {
		ep->rx = TCP_RX_DISCARD;
		ep->rx_status = -ECANCELED;
		ep->rx_mr = NULL;
	}
	if (ep->rx == TCP_RX_PAYLOAD && ep->rx_op && ep->rx_op->mr == mr)
		ep->rx = TCP_RX_DISCARD;
	if (fatal)
		tcp_ep_fail(ep, -ECANCELED, "region deregistered while being sent");
}
