/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verbs backend: domain (device, PD, CQ, SRQ, event channels), registered
 * slabs, regions, progress, wait and the ops table.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/clock.h"
#include "fabric/verbs/verbs.h"

/* ------------------------------------------------------------ small pieces */

struct verbs_op *verbs_op_alloc(struct verbs_domain *vd)
{
	struct verbs_op *op = vd->op_free;

	if (op)
		vd->op_free = op->next;
	else
		op = malloc(sizeof(*op));
	if (op) {
		memset(op, 0, offsetof(struct verbs_op, inl));
		op->sbuf = -1;
	}
	return op;
}

void verbs_op_free(struct verbs_domain *vd, struct verbs_op *op)
{
	if (op->sbuf >= 0) {
		vd->sfree[vd->nsfree++] = op->sbuf;
		op->sbuf = -1;
	}
	op->next = vd->op_free;
	vd->op_free = op;
}

void verbs_opq_push(struct verbs_opq *q, struct verbs_op *op)
{
	op->next = NULL;
	if (q->tail)
		q->tail->next = op;
	else
		q->head = op;
	q->tail = op;
	q->count++;
}

struct verbs_op *verbs_opq_pop(struct verbs_opq *q)
{
	struct verbs_op *op = q->head;

	if (!op)
		return NULL;
	q->head = op->next;
	if (!q->head)
		q->tail = NULL;
	q->count--;
	op->next = NULL;
	return op;
}

/* Make fab_domain_fd readable: progress has work that no completion will announce. */
static void verbs_kick(struct verbs_domain *vd)
{
	uint64_t one = 1;

	if (!vd->fd_exported || vd->ev_signaled)
		return;
	if (write(vd->evfd, &one, sizeof(one)) == sizeof(one))
		vd->ev_signaled = true;
}

void verbs_txlist_add(struct verbs_ep *ep)
{
	if (ep->on_tx)
		return;
	ep->on_tx = true;
	ep->tx_next = ep->vd->txlist;
	ep->vd->txlist = ep;
	if (!ep->vd->in_progress)
		verbs_kick(ep->vd);
}

struct verbs_ep *verbs_ep_by_id(struct verbs_domain *vd, uint32_t ep_id)
{
	struct verbs_ep *ep = vd->by_id[ep_id % VERBS_HASH];

	while (ep && ep->ep_id != ep_id)
		ep = ep->id_next;
	return ep;
}

struct verbs_ep *verbs_ep_by_qpn(struct verbs_domain *vd, uint32_t qpn)
{
	struct verbs_ep *ep = vd->by_qpn[qpn % VERBS_HASH];

	while (ep && ep->qp->qp_num != qpn)
		ep = ep->qpn_next;
	return ep;
}

/* ----------------------------------------------------------------- domain */

static int verbs_probe(const struct fab_domain_attr *attr)
{
	struct ibv_context *ctx;
	uint8_t port;
	bool quiet = !attr->backend || strcmp(attr->backend, "verbs");

	return verbs_dev_select(attr, quiet, &ctx, &port);
}

static int verbs_fd_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

static void verbs_domain_free(struct verbs_domain *vd)
{
	verbs_wins_close(vd);
	verbs_slabs_close(vd);
	if (vd->srq)
		ibv_destroy_srq(vd->srq);
	if (vd->cq) {
		if (vd->cq_unacked)
			ibv_ack_cq_events(vd->cq, vd->cq_unacked);
		ibv_destroy_cq(vd->cq);
	}
	if (vd->chan)
		ibv_destroy_comp_channel(vd->chan);
	if (vd->pd)
		ibv_dealloc_pd(vd->pd);
	if (vd->cm)
		rdma_destroy_event_channel(vd->cm);
	if (vd->epfd >= 0)
		close(vd->epfd);
	if (vd->evfd >= 0)
		close(vd->evfd);
	while (vd->op_free) {
		struct verbs_op *op = vd->op_free;

		vd->op_free = op->next;
		free(op);
	}
	fab_cq_fini(&vd->base.cq);
	free(vd);
}

static int verbs_domain_open(const struct fab_domain_attr *attr, struct fab_domain **dom_out)
{
	struct verbs_domain *vd = calloc(1, sizeof(*vd));
	struct ibv_srq_init_attr sa = { 0 };
	struct epoll_event ev = { 0 };
	int rc;

	if (!vd)
		return -ENOMEM;
	vd->epfd = -1;
	vd->evfd = -1;
	vd->base.attr = *attr;
	snprintf(vd->base.name, sizeof(vd->base.name), "%s/verbs", attr->name ? attr->name : "fab");
	snprintf(vd->ident, sizeof(vd->ident), "?");
	vd->next_ep_id = 1;
	rc = fab_cq_init(&vd->base.cq);
	if (rc) {
		free(vd);
		return rc;
	}
	rc = verbs_dev_select(attr, false, &vd->ctx, &vd->port);
	if (rc)
		goto err;
	snprintf(vd->ident, sizeof(vd->ident), "%s:%u", ibv_get_device_name(vd->ctx->device),
		 vd->port);
	rc = ibv_query_device(vd->ctx, &vd->dattr);
	if (!rc)
		rc = ibv_query_port(vd->ctx, vd->port, &vd->pattr);
	if (rc) {
		verbs_log_err(vd, "query device/port: %s", strerror(rc));
		rc = -rc;
		goto err;
	}
	rc = -ENOMEM;
	vd->pd = ibv_alloc_pd(vd->ctx);
	if (!vd->pd) {
		rc = -errno;
		verbs_log_err(vd, "alloc_pd: %s", strerror(errno));
		goto err;
	}
	vd->chan = ibv_create_comp_channel(vd->ctx);
	vd->cm = rdma_create_event_channel();
	if (!vd->chan || !vd->cm) {
		rc = -errno;
		verbs_log_err(vd, "creating the completion / rdma_cm channels: %s",
			      strerror(errno));
		goto err;
	}
	vd->cq_cap = vd->dattr.max_cqe < 4096 ? (uint32_t)vd->dattr.max_cqe : 4096;
	vd->cq = ibv_create_cq(vd->ctx, (int)vd->cq_cap, vd, vd->chan, 0);
	if (!vd->cq) {
		rc = -errno;
		verbs_log_err(vd, "create_cq(%u): %s", vd->cq_cap, strerror(errno));
		goto err;
	}
	vd->cq_cap = (uint32_t)vd->cq->cqe;
	vd->srq_max = vd->dattr.max_srq_wr < (int)VERBS_SRQ_MAX ? (uint32_t)vd->dattr.max_srq_wr
								 : VERBS_SRQ_MAX;
	sa.attr.max_wr = vd->srq_max;
	sa.attr.max_sge = 1;
	vd->srq = ibv_create_srq(vd->pd, &sa);
	if (!vd->srq) {
		rc = -errno;
		verbs_log_err(vd, "create_srq(%u): %s", vd->srq_max, strerror(errno));
		goto err;
	}
	rc = verbs_wins_open(vd);
	if (!rc)
		rc = verbs_slabs_open(vd);
	if (rc)
		goto err;
	/* the SRQ's buffers can all complete at once */
	rc = verbs_cq_reserve(vd, vd->srq_max);
	if (rc)
		goto err;
	vd->epfd = epoll_create1(EPOLL_CLOEXEC);
	vd->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (vd->epfd < 0 || vd->evfd < 0 || verbs_fd_nonblock(vd->chan->fd) ||
	    verbs_fd_nonblock(vd->cm->fd)) {
		rc = -errno;
		verbs_log_err(vd, "epoll set-up: %s", strerror(errno));
		goto err;
	}
	ev.events = EPOLLIN;
	if (epoll_ctl(vd->epfd, EPOLL_CTL_ADD, vd->chan->fd, &ev) ||
	    epoll_ctl(vd->epfd, EPOLL_CTL_ADD, vd->cm->fd, &ev) ||
	    epoll_ctl(vd->epfd, EPOLL_CTL_ADD, vd->evfd, &ev)) {
		rc = -errno;
		verbs_log_err(vd, "epoll_ctl: %s", strerror(errno));
		goto err;
	}
	verbs_log_info(vd, "domain open: %s link, active MTU %s, max_inline %u",
		       vd->pattr.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet (RoCE)" : "IB",
		       verbs_mtu_str(vd->pattr.active_mtu), VERBS_INLINE_MAX);
	*dom_out = &vd->base;
	return 0;
err:
	verbs_domain_free(vd);
	return rc;
}

static void verbs_domain_close(struct fab_domain *dom)
{
	struct verbs_domain *vd = verbs_dom(dom);

	while (vd->listeners)
		verbs_listener_close(&vd->listeners->base);
	dom->cq.count = 0;
	while (vd->eps) {
		vd->eps->user_closed = true;
		verbs_ep_destroy(vd->eps);
	}
	for (uint32_t i = 0; i < VERBS_MAX_MRS; i++)
		if (vd->mrs[i])
			verbs_mr_dereg(vd->mrs[i]);
	verbs_domain_free(vd);
}

/* --------------------------------------------------------------- progress */

static int verbs_cq_drain(struct verbs_domain *vd, unsigned int limit)
{
	struct ibv_wc wc[VERBS_CQ_BATCH];
	int total = 0, n;

	do {
		unsigned int want = limit - (unsigned int)total;

		n = ibv_poll_cq(vd->cq, want < VERBS_CQ_BATCH ? (int)want : VERBS_CQ_BATCH, wc);
		if (n < 0) {
			verbs_log_err(vd, "poll_cq failed: %d", n);
			return -EIO;
		}
		for (int i = 0; i < n; i++)
			verbs_cq_handle(vd, &wc[i]);
		total += n;
	} while (n > 0 && (unsigned int)total < limit);
	vd->cq_seen += (uint32_t)total;
	return total;
}

static void verbs_check_deadlines(struct verbs_domain *vd)
{
	uint64_t now;

	if (vd->ndeadlines == 0)
		return;
	now = clock_now_ns();
	if (now < vd->next_deadline_check)
		return;
	vd->next_deadline_check = now + 10 * 1000 * 1000;
	for (struct verbs_ep *ep = vd->eps, *next; ep; ep = next) {
		next = ep->next;
		verbs_ep_check_deadline(ep, now);
	}
}

/*
 * The fabric's promise is that nothing hangs: an op on a QP completes, in
 * error if the peer is gone (the device's retries end within about
 * ms_peer_timeout / 2). A connection with work posted and no completion
 * for twice ms_peer_timeout (at least 5 s) is stuck below us (a provider
 * that lost a work request): it is logged with what it holds and failed,
 * so its ops complete in error and the layers above reconnect and resend
 * instead of waiting forever. Checked every VERBS_STALL_CHECK_MS: a
 * completion clears the mark, the next check sets it again.
 */
static void verbs_check_stalls(struct verbs_domain *vd, uint64_t now)
{
	uint64_t limit = 2ull * vd->base.attr.peer_timeout_ms;

	if (limit < 5000)
		limit = 5000;
	limit *= 1000000ull;
	for (struct verbs_ep *ep = vd->eps, *next; ep; ep = next) {
		struct ibv_qp_attr qa = { 0 };
		struct ibv_qp_init_attr ia;
		const struct verbs_op *head = ep->ring.head;

		next = ep->next;
		if (ep->state != VERBS_EP_CONNECTED || ep->hw_inflight == 0 || !ep->qp) {
			ep->hw_quiet_ns = 0;
			continue;
		}
		if (ep->hw_quiet_ns == 0) {
			ep->hw_quiet_ns = now;
			continue;
		}
		if (now - ep->hw_quiet_ns < limit)
			continue;
		if (ibv_query_qp(ep->qp, &qa, IBV_QP_STATE, &ia) != 0)
			qa.qp_state = IBV_QPS_UNKNOWN;
		verbs_log_err(vd,
			      "qp 0x%x to %s: %u work requests posted and no completion for %llu "
			      "ms (QP state %d, oldest: %s, %u more queued): failing the connection",
			      ep->qp->qp_num, ep->base.peer_addr, ep->hw_inflight,
			      (unsigned long long)((now - ep->hw_quiet_ns) / 1000000ull),
			      (int)qa.qp_state, head ? verbs_op_kind_name(head->kind) : "none",
			      ep->pending.count);
		verbs_ep_fail(ep, -ETIMEDOUT, NULL);
	}
}

/*
 * The peer refuses its own bad one-sided ops to us (its check of our
 * region table; the device refuses the rest, and then the connection
 * ends) and reports the count in our mailbox: log them here, where the
 * memory is, as TCP logs its refusals at the target.
 */
static void verbs_ep_refusals(struct verbs_ep *ep)
{
	uint64_t n = __atomic_load_n(&ep->vd->mbox[ep->slot].errors, __ATOMIC_RELAXED);

	if (n <= ep->refusals_seen)
		return;
	if (ep->refusal_logs) {
		ep->refusal_logs--;
		verbs_log_warn(ep->vd,
			       "peer %s: refused %llu one-sided op(s) to us (its check of our keys: "
			       "revoked, another connection's, out of range or without the right)%s",
			       ep->base.peer_addr, (unsigned long long)(n - ep->refusals_seen),
			       ep->refusal_logs ? ""
						: "; further refusals on this connection are only "
						  "counted");
	}
	ep->refusals_seen = n;
}

static void verbs_reap(struct verbs_domain *vd)
{
	for (struct verbs_ep *ep = vd->eps, *next; ep; ep = next) {
		next = ep->next;
		if (ep->zombie)
			verbs_ep_destroy(ep);
		else if (ep->state == VERBS_EP_CONNECTED)
			verbs_ep_refusals(ep);
	}
}

/*
 * Nothing to do: make sure the next completion wakes the channel. An event
 * that fired since the last arming is consumed first (only then can it be
 * re-armed), so syscalls happen once per burst of completions, not per poll.
 */
static int verbs_cq_arm(struct verbs_domain *vd, unsigned int limit)
{
	struct ibv_cq *cq;
	void *cq_ctx;
	int rc;

	if (vd->cq_armed && vd->cq_seen) {
		/*
		 * A CQE can be visible before its event reaches the channel (the
		 * provider writes the CQ, then notifies): on EAGAIN keep cq_seen
		 * and try again next time. Forgetting it left the late event
		 * unread, its fd readable, and a sleeping loop spinning on it
		 * until the next completion.
		 */
		if (ibv_get_cq_event(vd->chan, &cq, &cq_ctx) == 0) {
			vd->cq_armed = false;
			vd->cq_seen = 0;
			if (++vd->cq_unacked >= 64) {
				ibv_ack_cq_events(vd->cq, vd->cq_unacked);
				vd->cq_unacked = 0;
			}
		}
	}
	if (vd->cq_armed)
		return 0;
	rc = ibv_req_notify_cq(vd->cq, 0);
	if (rc) {
		verbs_log_err(vd, "req_notify_cq: %s", strerror(rc));
		return -rc;
	}
	vd->cq_armed = true;
	vd->cq_seen = 0;
	return verbs_cq_drain(vd, limit); /* completions that raced with arming */
}

static bool verbs_work_left(struct verbs_domain *vd)
{
	return vd->txlist != NULL;
}

/* Every ep on the tx list moves what it can onto its QP: how many posted. */
static int verbs_tx_walk(struct verbs_domain *vd)
{
	struct verbs_ep *list = vd->txlist;
	int posted = 0;

	vd->txlist = NULL;
	while (list) {
		struct verbs_ep *ep = list;

		list = ep->tx_next;
		ep->on_tx = false;
		posted += verbs_ep_tx(ep) > 0;
	}
	return posted;
}

static int verbs_progress(struct fab_domain *dom, unsigned int budget)
{
	struct verbs_domain *vd = verbs_dom(dom);
	unsigned int limit = budget ? budget : UINT32_MAX;
	int handled = 0, rc;
	bool full;

	if (vd->ev_signaled) {
		uint64_t v;

		if (read(vd->evfd, &v, sizeof(v)) == sizeof(v) || errno == EAGAIN)
			vd->ev_signaled = false;
	}
	vd->in_progress = true;
	rc = verbs_cq_drain(vd, limit);
	if (rc < 0)
		goto out;
	handled += rc;
	full = (unsigned int)handled >= limit;
	if (!full && (vd->ndeadlines || ++vd->cm_tick >= VERBS_CM_EVERY)) {
		rc = verbs_cm_progress(vd, limit - (unsigned int)handled < 16
						   ? limit - (unsigned int)handled : 16);
		handled += rc;
		vd->cm_tick = rc ? VERBS_CM_EVERY : 0;
	}
	handled += verbs_tx_walk(vd);
	/*
	 * Idle with the fd exported: the event loop may sleep next, and credits
	 * we owe raise no event at the peer. Push them now, as fab_wait does,
	 * instead of keeping the ep on the tx list, which kicks our own eventfd
	 * and keeps the loop awake until the lazy rule sends them 1 ms later.
	 */
	if (handled == 0 && vd->fd_exported && !vd->in_wait && vd->txlist) {
		vd->in_wait = true;
		handled += verbs_tx_walk(vd);
		vd->in_wait = false;
	}
	verbs_check_deadlines(vd);
	if (vd->cm_tick == 0) { /* rdma_cm was just polled: a clock read is cheap beside it */
		uint64_t now = clock_now_ns();

		if (now >= vd->next_stall_check_ns) {
			vd->next_stall_check_ns = now + VERBS_STALL_CHECK_MS * 1000000ull;
			verbs_check_stalls(vd, now);
		}
	}
	verbs_reap(vd);
	vd->in_progress = false;
	if (full || verbs_work_left(vd))
		verbs_kick(vd);
	if (full)
		return handled;
	/* a spinning caller needs no interrupts: arm only for fab_wait or fd users */
	if (handled == 0 && (vd->fd_exported || vd->in_wait)) {
		rc = verbs_cq_arm(vd, limit);
		if (rc < 0)
			goto out;
		handled += rc;
	}
	rc = handled;
out:
	vd->in_progress = false;
	return rc;
}

/* A sender stalled on credit, or a receiver holding credits back: do not sleep long. */
static bool verbs_stalled(struct verbs_domain *vd)
{
	for (struct verbs_ep *ep = vd->txlist; ep; ep = ep->tx_next)
		if (verbs_ep_credit_stalled(ep) || verbs_ep_owes(ep))
			return true;
	return false;
}

static int verbs_wait(struct fab_domain *dom, int timeout_ms)
{
	struct verbs_domain *vd = verbs_dom(dom);
	struct epoll_event ev;
	uint64_t until;
	int rc;

	until = clock_now_ns() + (uint64_t)dom->attr.busy_poll_us * 1000u;
	do {
		rc = verbs_progress(dom, 0);
		if (rc != 0 || !fab_cq_empty(dom))
			return rc < 0 ? rc : 0;
	} while (clock_now_ns() < until);
	/* an idle progress in wait leaves the CQ armed, so the channel wakes us */
	vd->in_wait = true;
	rc = verbs_progress(dom, 0);
	vd->in_wait = false;
	if (rc != 0 || !fab_cq_empty(dom))
		return rc < 0 ? rc : 0;
	/*
	 * Credits come back by RDMA write, which raises no event here: a sender
	 * stalled on credit naps briefly instead. Connect deadlines need a tick.
	 */
	if (verbs_stalled(vd) && (timeout_ms < 0 || timeout_ms > 1))
		timeout_ms = 1;
	if (vd->ndeadlines && (timeout_ms < 0 || timeout_ms > 10))
		timeout_ms = 10;
	if (!vd->cq_armed)
		timeout_ms = 0;
	rc = epoll_wait(vd->epfd, &ev, 1, timeout_ms);
	if (rc < 0 && errno != EINTR)
		return -errno;
	vd->cm_tick = VERBS_CM_EVERY; /* it may have been a connection event */
	return 0;
}

static int verbs_domain_fd(const struct fab_domain *dom)
{
	struct verbs_domain *vd = (struct verbs_domain *)dom;

	/* from now on, work left between progress calls is announced on evfd */
	vd->fd_exported = true;
	if (vd->txlist)
		verbs_kick(vd);
	return vd->epfd;
}

const struct fab_ops fab_verbs_ops = {
	.name = "verbs",
	.probe = verbs_probe,
	.domain_open = verbs_domain_open,
	.domain_close = verbs_domain_close,
	.progress = verbs_progress,
	.wait = verbs_wait,
	.domain_fd = verbs_domain_fd,
	.mr_reg = verbs_mr_reg,
	.mr_dereg = verbs_mr_dereg,
	.rkey_scope = verbs_rkey_scope,
	.rkey_revoke = verbs_rkey_revoke,
	.listen = verbs_listen,
	.listener_close = verbs_listener_close,
	.ep_connect = verbs_ep_connect,
	.ep_close = verbs_ep_close,
	.post_send = verbs_post_send,
	.post_write = verbs_post_write,
	.post_read = verbs_post_read,
	.ep_stats = verbs_ep_stats,
	.recv_release = verbs_recv_release,
};
