/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TCP backend: the receive side. Frames are parsed from a per-endpoint
 * staging buffer; large payloads are received straight into their
 * destination (the registered region or the read buffer), so a one-sided
 * write costs one copy, done by the kernel. Everything a peer sends is
 * checked before use: a malformed frame closes the connection with one log
 * line; a refused one-sided op is answered with an error.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "common/clock.h"
#include "fabric/tcp/tcp.h"

static void tcp_rx_reset(struct tcp_ep *ep)
{
	ep->rx = TCP_RX_HDR;
	ep->rx_have = 0;
	ep->rx_dst = NULL;
	ep->rx_left = 0;
	ep->rx_status = 0;
	ep->rx_mr = NULL;
	ep->rx_slot = NULL;
	ep->rx_op = NULL;
}

static void tcp_rx_proto_error(struct tcp_ep *ep, const char *what)
{
	fab_log_err(&ep->tdom->base, "peer %s broke the protocol: %s (frame type %u len %u)",
		    ep->base.peer_addr, what, ep->rh.type, ep->rh.len);
	tcp_ep_fail(ep, -EPROTO, NULL);
}

/*
 * Check a one-sided access by the peer: the key names a live region of
 * ours with the access right, or a scoped key of this connection with it,
 * and [addr, addr+len) lies inside the region or the key's range.
 */
static int tcp_rx_check_access(struct tcp_ep *ep, uint64_t key, uint64_t addr, uint64_t len,
			       unsigned int right, struct fab_mr **mr_out)
{
	struct fab_win *w = fab_win_lookup(&ep->tdom->wins, key);
	struct fab_mr *mr = w ? w->mr : tcp_mr_lookup(ep->tdom, key);
	const char *why = NULL;
	uint64_t base, off, span;
	int rc = 0;

	if (!mr) {
		why = key & FAB_KEY_WIN ? "unknown or revoked scoped key" : "unknown key";
		rc = -EACCES;
		goto refuse;
	}
	if (w && w->ep != &ep->base) {
		why = "scoped key of another connection";
		rc = -EACCES;
		goto refuse;
	}
	if (!w && (mr->access & FAB_ACCESS_SCOPED)) {
		why = "region reachable through scoped keys only";
		rc = -EACCES;
		goto refuse;
	}
	if (!((w ? w->access : mr->access) & right)) {
		why = w ? "scoped key does not allow it" : "region does not allow it";
		rc = -EACCES;
		goto refuse;
	}
	base = w ? w->addr : (uint64_t)(uintptr_t)mr->addr;
	span = w ? w->len : mr->len;
	off = addr - base;
	if (addr < base || off > span || len > span - off) {
		why = w ? "outside the scoped key's range" : "outside the region";
		rc = -ERANGE;
		goto refuse;
	}
	*mr_out = mr;
	return 0;
refuse:
	ep->base.stats.remote_errors++;
	if (ep->log_budget) {
		ep->log_budget--;
		fab_log_warn(&ep->tdom->base,
			     "peer %s: refused remote %s of %lu bytes at 0x%lx key 0x%lx: %s%s",
			     ep->base.peer_addr, right == FAB_ACCESS_REMOTE_READ ? "read" : "write",
			     (unsigned long)len, (unsigned long)addr, (unsigned long)key, why,
			     ep->log_budget ? ""
					    : " (further refusals on this connection are only "
					      "counted)");
	}
	return rc;
}

static void tcp_rx_answer(struct tcp_ep *ep, uint8_t type, int status, uint32_t len,
			  const void *payload, struct fab_mr *mr)
{
	struct tcp_hdr h = {0};

	h.type = type;
	h.status = status;
	h.id = ep->rh.id;
	h.len = len;
	if (tcp_ep_queue_ctrl(ep, &h, payload, mr))
		tcp_ep_fail(ep, -ENOMEM, "cannot queue an answer");
}

/* The frame (header and payload) is complete. */
static void tcp_rx_done(struct tcp_ep *ep)
{
	struct tcp_hdr *h = &ep->rh;
	struct fab_cqe cqe = {0};
	struct tcp_op *op;

	switch (h->type) {
	case TCP_F_HELLO:
		tcp_rx_reset(ep);
		tcp_ep_on_hello(ep);
		return;
	case TCP_F_MSG:
		ep->rx_slot->held = true;
		ep->slots_held++;
		ep->base.stats.recvs++;
		cqe.kind = FAB_EV_RECV;
		cqe.ep = &ep->base;
		cqe.ctx = ep->base.ctx;
		cqe.data = ep->rx_slot->buf;
		cqe.len = h->len;
		cqe.priv = ep->rx_slot;
		fab_cq_push(&ep->tdom->base, &cqe);
		break;
	case TCP_F_WRITE:
	case TCP_F_WRITE_IMM:
		if (ep->rx_status == 0) {
			ep->base.stats.remote_writes++;
			if (h->type == TCP_F_WRITE_IMM) {
				cqe.kind = FAB_EV_WRITE_IMM;
				cqe.ep = &ep->base;
				cqe.ctx = ep->base.ctx;
				cqe.len = h->len;
				cqe.imm = h->imm;
				fab_cq_push(&ep->tdom->base, &cqe);
			}
		} else if (h->type == TCP_F_WRITE_IMM) {
			/* No event for a refused write: its credit comes straight back. */
			ep->imm_held--;
			ep->rx_owed++;
		}
		/* a placed write's ack rides on a later frame; a refusal is answered at once */
		if (ep->rx_status == 0 && ep->wacks)
			tcp_ep_wack_owe(ep, h->type == TCP_F_WRITE);
		else
			tcp_rx_answer(ep, TCP_F_WRITE_ACK, ep->rx_status, 0, NULL, NULL);
		break;
	case TCP_F_READ_RESP:
		op = tcp_op_dequeue(&ep->waitq);
		tcp_ep_complete(ep, op, op->revoked ? -ECANCELED : h->status);
		break;
	default:
		break;
	}
	tcp_rx_reset(ep);
}

static void tcp_rx_expect(struct tcp_ep *ep, void *dst, uint32_t len)
{
	ep->rx_big = len >= TCP_DIRECT_MIN;
	if (len == 0) {
		tcp_rx_done(ep);
		return;
	}
	ep->rx = dst ? TCP_RX_PAYLOAD : TCP_RX_DISCARD;
	ep->rx_dst = dst;
	ep->rx_left = len;
}

/*
 * The peer acknowledged n of our writes in a frame's flags: the first n
 * writes waiting for an answer, in order (reads waiting among them answer
 * with their own frames). -EPROTO when we have fewer.
 */
static int tcp_rx_wacks(struct tcp_ep *ep, unsigned int n)
{
	struct tcp_op **pp = &ep->waitq.head, *prev = NULL;

	while (n > 0 && *pp) {
		struct tcp_op *op = *pp;

		if (op->kind != TCP_OP_WRITE) {
			prev = op;
			pp = &op->next;
			continue;
		}
		*pp = op->next;
		if (ep->waitq.tail == op)
			ep->waitq.tail = prev;
		ep->waitq.count--;
		op->next = NULL;
		tcp_ep_complete(ep, op, 0);
		n--;
	}
	return n == 0 ? 0 : -EPROTO;
}

static bool tcp_rx_status_ok(int32_t status)
{
	return status <= 0 && status > -4096 - 4096;
}

/* A whole header arrived: check it and decide where its payload goes. */
static void tcp_rx_header(struct tcp_ep *ep)
{
	struct tcp_hdr *h = &ep->rh;
	struct fab_mr *mr = NULL;
	struct tcp_op *op;
	uint32_t in_use;
	int rc;

	tcp_hdr_decode(ep->rx_hdrbuf, h);
	ep->base.stats.rx_frames++;
	if (h->type == TCP_F_CREDIT || h->type == TCP_F_WRITE_ACK)
		ep->base.stats.rx_ctrl_frames++;
	ep->rx_big = false; /* tcp_rx_expect sets it for a large payload */
	if (ep->state == TCP_EP_HANDSHAKE && h->type != TCP_F_HELLO) {
		tcp_rx_proto_error(ep, "frame before handshake");
		return;
	}
	/*
	 * Every WRITE and READ_REQ costs us a queued answer; a peer may have at
	 * most its sq_depth of them in flight, so more is abuse, not load.
	 */
	if ((h->type == TCP_F_WRITE || h->type == TCP_F_WRITE_IMM || h->type == TCP_F_READ_REQ) &&
	    ep->answers_queued >= ep->peer_sq_depth) {
		tcp_rx_proto_error(ep, "more one-sided requests in flight than its sq_depth");
		return;
	}
	if (h->credits) {
		if ((uint64_t)ep->tx_credits + h->credits > ep->peer_window) {
			tcp_rx_proto_error(ep, "returned more credits than it was given");
			return;
		}
		ep->tx_credits += h->credits;
		if (ep->txq.head)
			tcp_txlist_add(ep);
	}
	if (h->flags && h->type != TCP_F_HELLO) {
		if (!ep->wacks || (h->flags & ~TCP_WACKS_MAX)) {
			tcp_rx_proto_error(ep, "frame flags it did not negotiate");
			return;
		}
		if (tcp_rx_wacks(ep, h->flags) != 0) {
			tcp_rx_proto_error(ep, "acknowledged writes we did not send");
			return;
		}
	}
	switch (h->type) {
	case TCP_F_HELLO:
		if (ep->state != TCP_EP_HANDSHAKE || h->len != TCP_HELLO_LEN) {
			tcp_rx_proto_error(ep, "unexpected handshake");
			return;
		}
		tcp_rx_expect(ep, ep->rx_small, h->len);
		return;
	case TCP_F_MSG:
		if (h->len > ep->tdom->base.attr.msg_size) {
			tcp_rx_proto_error(ep, "message larger than ms_msg_size");
			return;
		}
		in_use = ep->tdom->base.attr.recv_credits - ep->nfree + ep->imm_held;
		if (ep->nfree == 0 || in_use >= ep->tdom->base.attr.recv_credits) {
			tcp_rx_proto_error(ep, "sent without credit");
			return;
		}
		ep->rx_slot = &ep->slots[ep->free_slots[--ep->nfree]];
		tcp_rx_expect(ep, ep->rx_slot->buf, h->len);
		return;
	case TCP_F_WRITE_IMM:
		in_use = ep->tdom->base.attr.recv_credits - ep->nfree + ep->imm_held;
		if (in_use >= ep->tdom->base.attr.recv_credits) {
			tcp_rx_proto_error(ep, "write with immediate without credit");
			return;
		}
		ep->imm_held++;
		/* fall through */
	case TCP_F_WRITE:
		rc = tcp_rx_check_access(ep, h->key, h->addr, h->len, FAB_ACCESS_REMOTE_WRITE, &mr);
		ep->rx_status = rc;
		ep->rx_mr = mr;
		tcp_rx_expect(ep, rc ? NULL : (void *)(uintptr_t)h->addr, h->len);
		return;
	case TCP_F_READ_REQ:
		if (h->len != 0) {
			tcp_rx_proto_error(ep, "read request with payload");
			return;
		}
		rc = tcp_rx_check_access(ep, h->key, h->addr, h->imm, FAB_ACCESS_REMOTE_READ, &mr);
		if (rc == 0)
			ep->base.stats.remote_reads++;
		tcp_rx_answer(ep, TCP_F_READ_RESP, rc, rc ? 0 : h->imm,
			      rc ? NULL : (const void *)(uintptr_t)h->addr, mr);
		tcp_rx_reset(ep);
		return;
	case TCP_F_WRITE_ACK:
	case TCP_F_READ_RESP:
		op = ep->waitq.head;
		if (!op || op->h.id != h->id ||
		    (op->kind == TCP_OP_WRITE) != (h->type == TCP_F_WRITE_ACK)) {
			tcp_rx_proto_error(ep, "answer to an operation we did not send");
			return;
		}
		if (!tcp_rx_status_ok(h->status)) {
			tcp_rx_proto_error(ep, "bad status");
			return;
		}
		if (h->type == TCP_F_WRITE_ACK) {
			if (h->len) {
				tcp_rx_proto_error(ep, "write ack with payload");
				return;
			}
			tcp_ep_complete(ep, tcp_op_dequeue(&ep->waitq), h->status);
			tcp_rx_reset(ep);
			return;
		}
		if (h->len != (h->status ? 0 : op->h.imm)) {
			tcp_rx_proto_error(ep, "read answer of the wrong length");
			return;
		}
		ep->rx_op = op;
		tcp_rx_expect(ep, op->revoked ? NULL : op->dst, h->len);
		return;
	case TCP_F_CREDIT:
		if (h->len) {
			tcp_rx_proto_error(ep, "credit frame with payload");
			return;
		}
		tcp_rx_reset(ep);
		return;
	default:
		tcp_rx_proto_error(ep, "unknown frame type");
		return;
	}
}

#define TCP_CLOSE_LOG_WINDOW_MS 10000
#define TCP_CLOSE_LOG_MAX	10 /* lines per window and domain */

/*
 * "peer closed the connection", at most TCP_CLOSE_LOG_MAX lines per 10 s
 * per domain: a thousand connections of a flood closing at once would
 * otherwise be a thousand lines. The ones not logged are counted and said
 * with the next line.
 */
static void tcp_rx_log_close(struct tcp_ep *ep)
{
	struct tcp_domain *td = ep->tdom;
	uint64_t now = clock_now_ns() / 1000000u;

	if (now - td->close_log_ms >= TCP_CLOSE_LOG_WINDOW_MS) {
		td->close_log_ms = now;
		td->close_log_n = 0;
	}
	if (td->close_log_n >= TCP_CLOSE_LOG_MAX) {
		td->close_quiet++;
		return;
	}
	td->close_log_n++;
	if (td->close_quiet > 0)
		fab_log_info(&td->base,
			     "peer %s closed the connection (and %llu more peers since the last "
			     "such line, not logged)",
			     ep->base.peer_addr, (unsigned long long)td->close_quiet);
	else
		fab_log_info(&td->base, "peer %s closed the connection", ep->base.peer_addr);
	td->close_quiet = 0;
}

/* Receive into the stage (or straight into dst). >0 bytes, 0 would block, <0 failed. */
static int tcp_rx_recv(struct tcp_ep *ep, void *dst, size_t len)
{
	ssize_t n;

	for (;;) {
		n = recv(ep->fd, dst, len, MSG_DONTWAIT);
		if (n > 0) {
			ep->base.stats.rx_bytes += (uint64_t)n;
			return (int)n;
		}
		if (n == 0) {
			/* An orderly close is news, not an error: the owner decides. */
			if (ep->state == TCP_EP_CONNECTED)
				tcp_rx_log_close(ep);
			tcp_ep_fail(ep, -ECONNRESET,
				    ep->state == TCP_EP_CONNECTED ? NULL
								  : "closed during handshake");
			return -ECONNRESET;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		tcp_ep_fail(ep, -errno, "receive");
		return -ECONNRESET;
	}
}

int tcp_ep_rx(struct tcp_ep *ep, unsigned int budget)
{
	unsigned int frames = 0;
	bool drained = false;
	int n;

	if (ep->state == TCP_EP_CONNECTING)
		tcp_ep_on_out(ep);
	while (frames < budget && ep->fd >= 0) {
		uint32_t avail = ep->stage_len - ep->stage_pos;
		uint8_t *src = ep->stage + ep->stage_pos;
		uint32_t take, want;

		if (avail == 0) {
			ep->stage_pos = ep->stage_len = 0;
			/*
			 * A recv that returned less than it asked for emptied the socket:
			 * another would only say EAGAIN (issue 16: a syscall per event on
			 * the hot path). Level-triggered epoll reports what comes later.
			 */
			if (drained)
				break;
			if (ep->rx == TCP_RX_PAYLOAD && ep->rx_left >= TCP_DIRECT_MIN) {
				n = tcp_rx_recv(ep, ep->rx_dst, ep->rx_left);
				if (n <= 0)
					break;
				drained = (uint32_t)n < ep->rx_left;
				ep->rx_dst += n;
				ep->rx_left -= (uint32_t)n;
				if (ep->rx_left == 0) {
					tcp_rx_done(ep);
					frames++;
				}
				continue;
			}
			/*
			 * After a large payload the next frame is likely large too:
			 * take just its header so the payload can land directly in
			 * its destination instead of being copied from the stage.
			 */
			want = ep->rx == TCP_RX_HDR && ep->rx_big ? TCP_HDR_LEN - ep->rx_have
								  : TCP_STAGE_SIZE;
			n = tcp_rx_recv(ep, ep->stage, want);
			if (n <= 0)
				break;
			drained = (uint32_t)n < want;
			ep->stage_len = (uint32_t)n;
			continue;
		}
		switch (ep->rx) {
		case TCP_RX_HDR:
			take = TCP_HDR_LEN - ep->rx_have;
			take = take < avail ? take : avail;
			memcpy(ep->rx_hdrbuf + ep->rx_have, src, take);
			ep->stage_pos += take;
			ep->rx_have += take;
			if (ep->rx_have == TCP_HDR_LEN) {
				tcp_rx_header(ep);
				if (ep->rx == TCP_RX_HDR)
					frames++;
			}
			break;
		case TCP_RX_PAYLOAD:
		case TCP_RX_DISCARD:
			take = ep->rx_left < avail ? ep->rx_left : avail;
			if (ep->rx == TCP_RX_PAYLOAD) {
				memcpy(ep->rx_dst, src, take);
				ep->rx_dst += take;
			}
			ep->stage_pos += take;
			ep->rx_left -= take;
			if (ep->rx_left == 0) {
				tcp_rx_done(ep);
				frames++;
			}
			break;
		}
	}
	if (ep->fd >= 0 && ep->stage_pos < ep->stage_len)
		tcp_ready_add(ep);
	return (int)frames;
}
