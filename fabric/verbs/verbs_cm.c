/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verbs backend: connections with librdmacm. Connect: resolve address,
 * resolve route, create the RC QP on the domain's CQ and SRQ, connect with
 * our private data; accept: check the peer's private data, create the QP,
 * accept with ours. Every outcome, including failures, is an event.
 */
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/le.h"
#include "fabric/verbs/verbs.h"

/* ---------------------------------------------------------- private data */

/*
 * magic u32 | version u8 | active mtu u8 | recv credits u16 | msg_size u32 |
 * mailbox rkey u32 | mailbox addr u64 | table rkey u32 | table entries u16 |
 * pad u16 | table addr u64                                  (40 bytes, LE)
 */
static void verbs_pd_encode(struct verbs_ep *ep, uint8_t *p)
{
	struct verbs_domain *vd = ep->vd;

	memset(p, 0, VERBS_PD_LEN);
	le_put32(p, VERBS_PD_MAGIC);
	p[4] = VERBS_PD_VERSION;
	p[5] = (uint8_t)vd->pattr.active_mtu;
	le_put16(p + 6, (uint16_t)vd->base.attr.recv_credits);
	le_put32(p + 8, vd->base.attr.msg_size);
	le_put32(p + 12, vd->mbox_mr->rkey);
	le_put64(p + 16, (uintptr_t)&vd->mbox[ep->slot]);
	le_put32(p + 24, vd->tbl_mr->rkey);
	le_put16(p + 28, (uint16_t)(VERBS_TBL_N - 1));
	le_put64(p + 32, (uintptr_t)vd->tbl);
}

static int verbs_pd_decode(struct verbs_ep *ep, const uint8_t *p, uint8_t len)
{
	struct verbs_domain *vd = ep->vd;
	uint8_t mtu;

	if (!p || len < VERBS_PD_LEN || le_get32(p) != VERBS_PD_MAGIC || p[4] != VERBS_PD_VERSION ||
	    le_get16(p + 6) < 1 || le_get32(p + 8) < 64) {
		verbs_log_warn(vd, "peer %s: bad connection data (not a weft verbs peer, or another "
			       "version)", ep->base.peer_addr);
		return -EPROTO;
	}
	mtu = p[5];
	if (mtu != (uint8_t)vd->pattr.active_mtu)
		verbs_log_warn(vd, "peer %s: MTU mismatch: its active MTU is %s, ours %s; the path "
			       "uses the smaller: set the same MTU on both ends ('ip link set "
			       "DEV mtu N' for RoCE)", ep->base.peer_addr,
			       verbs_mtu_str((enum ibv_mtu)mtu),
			       verbs_mtu_str(vd->pattr.active_mtu));
	ep->peer_credits = le_get16(p + 6);
	ep->peer_msg_size = le_get32(p + 8);
	ep->peer_mbox_rkey = le_get32(p + 12);
	ep->peer_mbox_addr = le_get64(p + 16);
	ep->peer_tbl_rkey = le_get32(p + 24);
	ep->peer_tbl_n = (uint32_t)le_get16(p + 28) + 1;
	ep->peer_tbl_addr = le_get64(p + 32);
	return 0;
}

/* -------------------------------------------------------------- endpoints */

static void verbs_ep_names(struct verbs_ep *ep)
{
	fab_addr_format(rdma_get_local_addr(ep->id), ep->base.local_addr,
			sizeof(ep->base.local_addr));
	fab_addr_format(rdma_get_peer_addr(ep->id), ep->base.peer_addr,
			sizeof(ep->base.peer_addr));
}

/* Arm (ns != 0) or clear the endpoint's connect / drain deadline. */
static void verbs_ep_deadline(struct verbs_ep *ep, uint64_t ns)
{
	if (ns && !ep->has_deadline)
		ep->vd->ndeadlines++;
	else if (!ns && ep->has_deadline)
		ep->vd->ndeadlines--;
	ep->has_deadline = ns != 0;
	ep->deadline_ns = ns;
}

static struct verbs_ep *verbs_ep_new(struct verbs_domain *vd)
{
	const struct fab_domain_attr *a = &vd->base.attr;
	struct verbs_ep *ep;
	uint32_t hw_sq = 2 * a->sq_depth + 8;

	if (vd->nslot_free == 0) {
		verbs_log_err(vd, "more than %u endpoints on one domain", VERBS_MAX_EPS);
		return NULL;
	}
	if (hw_sq > (uint32_t)vd->dattr.max_qp_wr)
		hw_sq = (uint32_t)vd->dattr.max_qp_wr;
	if (verbs_rbufs_reserve(vd, vd->rneed + a->recv_credits) || verbs_cq_reserve(vd, hw_sq))
		return NULL;
	ep = calloc(1, sizeof(*ep));
	if (!ep) {
		vd->cq_need -= hw_sq;
		return NULL;
	}
	vd->rneed += a->recv_credits;
	ep->hw_sq = hw_sq;
	ep->refusal_logs = 8;
	ep->okind = VERBS_OBJ_EP;
	ep->vd = vd;
	ep->base.dom = &vd->base;
	ep->slot = vd->slot_free[--vd->nslot_free];
	memset(&vd->mbox[ep->slot], 0, sizeof(vd->mbox[ep->slot]));
	ep->ep_id = vd->next_ep_id++ & 0x7fffffffu;
	if (ep->ep_id == 0)
		ep->ep_id = vd->next_ep_id++;
	ep->id_next = vd->by_id[ep->ep_id % VERBS_HASH];
	vd->by_id[ep->ep_id % VERBS_HASH] = ep;
	verbs_ep_deadline(ep, clock_now_ns() + (uint64_t)a->connect_timeout_ms * 1000000u);
	ep->next = vd->eps;
	if (vd->eps)
		vd->eps->prev = ep;
	vd->eps = ep;
	return ep;
}

static void verbs_qpn_unhash(struct verbs_ep *ep)
{
	struct verbs_ep **pp;

	if (!ep->in_qpn_hash)
		return;
	for (pp = &ep->vd->by_qpn[ep->qp->qp_num % VERBS_HASH]; *pp; pp = &(*pp)->qpn_next) {
		if (*pp == ep) {
			*pp = ep->qpn_next;
			break;
		}
	}
	ep->in_qpn_hash = false;
}

static void verbs_ep_release_id(struct verbs_ep *ep)
{
	if (ep->qp) {
		verbs_qpn_unhash(ep);
		if (ep->nwins)
			verbs_win_teardown(ep->vd, ep, NULL); /* the QP's windows go first */
		rdma_destroy_qp(ep->id);
		ep->qp = NULL;
	}
	if (ep->id) {
		rdma_destroy_id(ep->id);
		ep->id = NULL;
	}
}

static int verbs_ep_create_qp(struct verbs_ep *ep)
{
	struct verbs_domain *vd = ep->vd;
	struct ibv_qp_init_attr qa = { 0 };
	uint8_t tmo;

	qa.send_cq = vd->cq;
	qa.recv_cq = vd->cq;
	qa.srq = vd->srq;
	qa.qp_type = IBV_QPT_RC;
	qa.cap.max_send_wr = ep->hw_sq;
	qa.cap.max_send_sge = 1;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = VERBS_INLINE_MAX;
	if (rdma_create_qp(ep->id, vd->pd, &qa)) {
		qa.cap.max_inline_data = 0;
		if (rdma_create_qp(ep->id, vd->pd, &qa)) {
			int err = errno;

			verbs_log_err(vd, "create RC QP (%u WRs) for %s: %s", ep->hw_sq,
				      ep->base.peer_addr, strerror(err));
			return -err;
		}
	}
	ep->qp = ep->id->qp;
	vd->max_inline = qa.cap.max_inline_data < VERBS_INLINE_MAX ? qa.cap.max_inline_data
								    : VERBS_INLINE_MAX;
	ep->qpn_next = vd->by_qpn[ep->qp->qp_num % VERBS_HASH];
	vd->by_qpn[ep->qp->qp_num % VERBS_HASH] = ep;
	ep->in_qpn_hash = true;
	/*
	 * Ack timeout 4.096us * 2^t, 7 retries: about ms_peer_timeout / 16 per
	 * try, within t = 14..17 (67..537 ms). Too short, and a stalled
	 * responder (a loaded or emulated host) triggers go-back-N resends of
	 * everything in flight; too long, and one lost packet costs seconds.
	 * With the default 10 s a silent peer with work in flight fails after
	 * ~3.8 s; a dead process usually shows up sooner, as a DREQ from its kernel.
	 */
	for (tmo = 14; tmo < 17; tmo++)
		if ((4096ull << tmo) * 16 / 1000000 >= vd->base.attr.peer_timeout_ms)
			break;
	rdma_set_option(ep->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &tmo, sizeof(tmo));
	return 0;
}

static void verbs_conn_param(struct verbs_ep *ep, struct rdma_conn_param *cp, uint8_t *pd)
{
	struct verbs_domain *vd = ep->vd;
	uint8_t rd = vd->dattr.max_qp_rd_atom < 16 ? (uint8_t)vd->dattr.max_qp_rd_atom : 16;

	memset(cp, 0, sizeof(*cp));
	verbs_pd_encode(ep, pd);
	cp->private_data = pd;
	cp->private_data_len = VERBS_PD_LEN;
	cp->responder_resources = rd;
	cp->initiator_depth = rd;
	cp->retry_count = 7;
	cp->rnr_retry_count = 3; /* credits keep the SRQ stocked; RNR is a bug */
}

int verbs_ep_connect(struct fab_domain *dom, const char *addr, const char *local_addr, void *ctx,
		     struct fab_ep **ep_out)
{
	struct verbs_domain *vd = verbs_dom(dom);
	struct sockaddr_storage ss, ls;
	unsigned int slen, llen;
	struct verbs_ep *ep;
	int rc;

	rc = fab_addr_parse(addr, true, &ss, &slen);
	if (rc)
		return rc;
	if (local_addr && local_addr[0]) {
		rc = fab_addr_parse(local_addr, false, &ls, &llen);
		if (rc)
			return rc;
	}
	ep = verbs_ep_new(vd);
	if (!ep)
		return -ENOMEM;
	ep->base.ctx = ctx;
	snprintf(ep->base.peer_addr, sizeof(ep->base.peer_addr), "%s", addr);
	if (rdma_create_id(vd->cm, &ep->id, &ep->okind, RDMA_PS_TCP)) {
		rc = -errno;
		verbs_log_err(vd, "connect %s: rdma_create_id: %s", addr, strerror(errno));
		ep->user_closed = true;
		verbs_ep_destroy(ep);
		return rc;
	}
	ep->state = VERBS_EP_RESOLVING;
	/* Even an immediate failure is reported as an event, like every other outcome. */
	if (rdma_resolve_addr(ep->id, local_addr && local_addr[0] ? (struct sockaddr *)&ls : NULL,
			      (struct sockaddr *)&ss, (int)vd->base.attr.connect_timeout_ms))
		verbs_ep_fail(ep, -errno, "rdma_resolve_addr");
	*ep_out = &ep->base;
	return 0;
}

static void verbs_ep_established(struct verbs_ep *ep, const uint8_t *pd, uint8_t pdlen)
{
	struct verbs_domain *vd = ep->vd;
	struct fab_cqe cqe = { 0 };
	char path[96];

	if (!ep->from && verbs_pd_decode(ep, pd, pdlen)) {
		verbs_ep_fail(ep, -EPROTO, NULL);
		return;
	}
	verbs_ep_names(ep);
	verbs_qp_path_str(ep->id->qp, path, sizeof(path));
	log_info("fab", "%s %s: connected %s %s (%s)", vd->base.name, vd->ident,
		 ep->from ? "from" : "to", ep->base.peer_addr, path);
	ep->state = VERBS_EP_CONNECTED;
	ep->was_connected = true;
	ep->base.connected = true;
	verbs_ep_deadline(ep, 0);
	/* Messages queued before we knew the peer's limit and too big for it fail now. */
	for (struct verbs_op *op = ep->pending.head; op; op = op->next) {
		if (op->kind == VERBS_OP_SEND && op->len > ep->peer_msg_size && !op->status) {
			verbs_log_err(vd, "send to %s: %u bytes exceeds the peer's msg_size %u",
				      ep->base.peer_addr, op->len, ep->peer_msg_size);
			op->status = -EMSGSIZE;
		}
	}
	cqe.ep = &ep->base;
	cqe.ctx = ep->base.ctx;
	if (ep->from) {
		cqe.kind = FAB_EV_ACCEPTED;
		cqe.listener = &ep->from->base;
	} else {
		cqe.kind = FAB_EV_CONNECTED;
	}
	fab_cq_push(&vd->base, &cqe);
	verbs_txlist_add(ep);
}

/*
 * Data arrived on the QP of an endpoint whose connection we have not seen
 * established. On the passive side that is the normal race of RC: our
 * rdma_accept put the QP in RTS, the peer got our reply, sent its RTU and
 * then its first message, and the message overtook the RTU's way through
 * the kernel's CM and our event channel (under load by whole seconds; we
 * also poll the CQ before the channel). The IB answer is "communication
 * established": tell the CM (so a lost RTU cannot time the connection
 * out) and treat the endpoint as established now. On the active side it
 * cannot happen (librdmacm moves the QP to RTS and sends the RTU inside
 * the call that reports ESTABLISHED, and the peer sends nothing before
 * that), so it is a protocol error there: fail loudly, never drop data.
 */
void verbs_ep_comm_est(struct verbs_ep *ep)
{
	if (ep->state == VERBS_EP_ACCEPTING && ep->from) {
		/*
		 * Best effort: the RTU usually comes anyway, and ESTABLISHED is
		 * ignored then. EISCONN: the kernel already had the RTU, its event
		 * is just still queued for us.
		 */
		if (rdma_notify(ep->id, IBV_EVENT_COMM_EST) && errno != EINVAL && errno != EISCONN)
			verbs_log_warn(ep->vd, "accepting %s: rdma_notify(COMM_EST): %s",
				       ep->base.peer_addr, strerror(errno));
		verbs_ep_established(ep, NULL, 0);
		return;
	}
	if (ep->state == VERBS_EP_CONNECTING)
		verbs_ep_fail(ep, -EPROTO, "message before the connection was established");
}

static void verbs_ep_finish_fail(struct verbs_ep *ep)
{
	struct fab_cqe cqe = { 0 };

	ep->state = VERBS_EP_FAILED;
	if (ep->user_closed)
		return;
	if (!ep->was_connected && ep->from) {
		ep->zombie = true; /* accepted, never reported: nobody else frees it */
		return;
	}
	cqe.kind = ep->was_connected ? FAB_EV_PEER_FAILED : FAB_EV_CONNECTED;
	cqe.status = ep->fail_status;
	cqe.ep = &ep->base;
	cqe.ctx = ep->base.ctx;
	fab_cq_push(&ep->vd->base, &cqe);
}

void verbs_ep_fail(struct verbs_ep *ep, int status, const char *why)
{
	struct verbs_domain *vd = ep->vd;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_ERR };

	if (ep->state == VERBS_EP_DRAINING || ep->state == VERBS_EP_FAILED)
		return;
	if (why)
		verbs_log_warn(vd, "qp 0x%x: %s %s: %s: %s", ep->qp ? ep->qp->qp_num : 0,
			       ep->was_connected ? "peer" : ep->from ? "accepting" : "connecting to",
			       ep->base.peer_addr, why, strerror(-status));
	verbs_ep_deadline(ep, 0);
	ep->fail_status = status;
	ep->base.connected = false;
	if (ep->qp) {
		if (ep->was_connected)
			rdma_disconnect(ep->id);
		ibv_modify_qp(ep->qp, &qa, IBV_QP_STATE);
	}
	/*
	 * What is on the QP comes back flushed; then what never reached it
	 * fails, so completions keep posting order.
	 */
	if (ep->hw_inflight) {
		ep->state = VERBS_EP_DRAINING;
		verbs_ep_deadline(ep, clock_now_ns() + VERBS_DRAIN_MS * 1000000ull);
		return;
	}
	verbs_ep_flush_all(ep, status);
	verbs_ep_finish_fail(ep);
}

/* Called from the completion path when a draining endpoint's ring empties. */
void verbs_ep_drained(struct verbs_ep *ep)
{
	if (ep->state != VERBS_EP_DRAINING)
		return;
	verbs_ep_deadline(ep, 0);
	verbs_ep_flush_all(ep, ep->fail_status);
	verbs_ep_finish_fail(ep);
}

void verbs_ep_check_deadline(struct verbs_ep *ep, uint64_t now)
{
	if (now <= ep->deadline_ns)
		return;
	if (ep->state == VERBS_EP_RESOLVING || ep->state == VERBS_EP_CONNECTING ||
	    ep->state == VERBS_EP_ACCEPTING) {
		verbs_ep_fail(ep, -ETIMEDOUT, "no connection before ms_connect_timeout");
	} else if (ep->state == VERBS_EP_DRAINING) {
		/* flushed completions did not all come back: complete the rest here */
		verbs_ep_drained(ep);
	}
}

void verbs_ep_destroy(struct verbs_ep *ep)
{
	struct verbs_domain *vd = ep->vd;
	struct verbs_ep **pp;

	verbs_ep_deadline(ep, 0);
	ep->state = VERBS_EP_FAILED;
	verbs_ep_release_id(ep);
	while (ep->ring.head || ep->pending.head)
		verbs_ep_flush_all(ep, -ECANCELED);
	for (pp = &vd->txlist; *pp; pp = &(*pp)->tx_next) {
		if (*pp == ep) {
			*pp = ep->tx_next;
			break;
		}
	}
	for (pp = &vd->by_id[ep->ep_id % VERBS_HASH]; *pp; pp = &(*pp)->id_next) {
		if (*pp == ep) {
			*pp = ep->id_next;
			break;
		}
	}
	if (ep->prev)
		ep->prev->next = ep->next;
	else
		vd->eps = ep->next;
	if (ep->next)
		ep->next->prev = ep->prev;
	vd->slot_free[vd->nslot_free++] = ep->slot;
	vd->rneed -= vd->base.attr.recv_credits;
	vd->cq_need -= ep->hw_sq;
	free(ep);
}

void verbs_ep_close(struct fab_ep *fep)
{
	struct verbs_ep *ep = verbs_ep_of(fep);

	ep->user_closed = true;
	verbs_ep_deadline(ep, 0);
	if (ep->state != VERBS_EP_FAILED) {
		if (ep->was_connected && ep->state == VERBS_EP_CONNECTED)
			rdma_disconnect(ep->id);
		ep->state = VERBS_EP_FAILED;
		ep->base.connected = false;
	}
	/* Stop the hardware first, then nothing it held is touched again. */
	verbs_ep_release_id(ep);
	while (ep->ring.head || ep->pending.head)
		verbs_ep_flush_all(ep, -ECANCELED);
	fab_cq_forget_ep(fep->dom, fep);
	if (ep->rx_held == 0 && ep->imm_held == 0)
		verbs_ep_destroy(ep);
}

/* -------------------------------------------------------------- listeners */

int verbs_listen(struct fab_domain *dom, const char *addr, void *ctx,
		 struct fab_listener **listener_out)
{
	struct verbs_domain *vd = verbs_dom(dom);
	struct sockaddr_storage ss;
	struct verbs_listener *l;
	unsigned int slen;
	int rc;

	rc = fab_addr_parse(addr, true, &ss, &slen);
	if (rc)
		return rc;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->okind = VERBS_OBJ_LISTENER;
	l->base.dom = dom;
	l->base.ctx = ctx;
	if (rdma_create_id(vd->cm, &l->id, &l->okind, RDMA_PS_TCP)) {
		rc = -errno;
		verbs_log_err(vd, "listen %s: rdma_create_id: %s", addr, strerror(errno));
		goto err_free;
	}
	if (rdma_bind_addr(l->id, (struct sockaddr *)&ss)) {
		rc = -errno;
		/* a port in use is the caller's to report: the OSD tries the next one */
		if (rc != -EADDRINUSE)
			verbs_log_err(vd, "listen %s: bind: %s%s", addr, strerror(-rc),
				      rc == -EADDRNOTAVAIL || rc == -ENODEV
					      ? " (no RDMA device holds this IP: see 'weft doctor')"
					      : "");
		goto err_id;
	}
	if (l->id->verbs && l->id->verbs != vd->ctx) {
		verbs_log_err(vd, "listen %s: this address belongs to RDMA device %s, the domain "
			      "uses %s: set rdma_device or listen on an address of %s", addr,
			      ibv_get_device_name(l->id->verbs->device),
			      ibv_get_device_name(vd->ctx->device),
			      ibv_get_device_name(vd->ctx->device));
		rc = -ENODEV;
		goto err_id;
	}
	if (rdma_listen(l->id, 1024)) {
		rc = -errno;
		verbs_log_err(vd, "listen %s: %s", addr, strerror(errno));
		goto err_id;
	}
	l->base.port = ntohs(rdma_get_src_port(l->id));
	l->next = vd->listeners;
	vd->listeners = l;
	*listener_out = &l->base;
	return 0;
err_id:
	rdma_destroy_id(l->id);
err_free:
	free(l);
	return rc;
}

void verbs_listener_close(struct fab_listener *fl)
{
	struct verbs_listener *l = (struct verbs_listener *)fl;
	struct verbs_domain *vd = verbs_dom(fl->dom);

	for (struct verbs_ep *ep = vd->eps, *next; ep; ep = next) {
		next = ep->next;
		if (ep->from != l)
			continue;
		ep->from = NULL;
		if (!ep->was_connected) {
			verbs_ep_fail(ep, -ECONNABORTED, NULL);
			ep->zombie = true;
		}
	}
	for (struct verbs_listener **pp = &vd->listeners; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	rdma_destroy_id(l->id);
	fab_cq_forget_listener(fl->dom, fl);
	free(l);
}

static void verbs_accept(struct verbs_listener *l, struct rdma_cm_id *id, const uint8_t *pd,
			 uint8_t pdlen)
{
	struct verbs_domain *vd = verbs_dom(l->base.dom);
	struct rdma_conn_param cp;
	uint8_t mine[VERBS_PD_LEN];
	struct verbs_ep *ep;

	if (id->verbs != vd->ctx) {
		verbs_log_warn(vd, "connection request on device %s refused: the domain uses %s",
			       ibv_get_device_name(id->verbs->device),
			       ibv_get_device_name(vd->ctx->device));
		goto err_reject;
	}
	ep = verbs_ep_new(vd);
	if (!ep)
		goto err_reject;
	ep->id = id;
	id->context = &ep->okind;
	ep->from = l;
	ep->base.ctx = l->base.ctx;
	ep->state = VERBS_EP_ACCEPTING;
	verbs_ep_names(ep);
	if (verbs_pd_decode(ep, pd, pdlen) || verbs_ep_create_qp(ep)) {
		rdma_reject(id, NULL, 0);
		ep->zombie = true;
		ep->state = VERBS_EP_FAILED;
		verbs_ep_deadline(ep, 0);
		return;
	}
	verbs_conn_param(ep, &cp, mine);
	if (rdma_accept(id, &cp))
		verbs_ep_fail(ep, -errno, "rdma_accept");
	return;
err_reject:
	rdma_reject(id, NULL, 0);
	rdma_destroy_id(id);
}

/* ------------------------------------------------------------- cm events */

static int verbs_cm_status(const struct rdma_cm_event *ev)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_UNREACHABLE:
		return ev->status < 0 ? ev->status : -EHOSTUNREACH;
	case RDMA_CM_EVENT_ADDR_ERROR:
		return ev->status < 0 ? ev->status : -EADDRNOTAVAIL;
	case RDMA_CM_EVENT_ROUTE_ERROR:
		return ev->status < 0 ? ev->status : -ENETUNREACH;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return -ENODEV;
	default:
		return ev->status < 0 ? ev->status : -ECONNRESET;
	}
}

static void verbs_cm_ep_event(struct verbs_ep *ep, struct rdma_cm_event *ev, const uint8_t *pd,
			      uint8_t pdlen)
{
	struct verbs_domain *vd = ep->vd;
	struct rdma_conn_param cp;
	uint8_t mine[VERBS_PD_LEN];
	int rc;

	if (ep->state == VERBS_EP_FAILED || ep->state == VERBS_EP_DRAINING)
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (ep->id->verbs != vd->ctx) {
			verbs_log_err(vd, "connect %s: reached through RDMA device %s, but this "
				      "domain uses %s: set rdma_device", ep->base.peer_addr,
				      ibv_get_device_name(ep->id->verbs->device),
				      ibv_get_device_name(vd->ctx->device));
			verbs_ep_fail(ep, -ENODEV, NULL);
			return;
		}
		if (rdma_resolve_route(ep->id, (int)vd->base.attr.connect_timeout_ms))
			verbs_ep_fail(ep, -errno, "rdma_resolve_route");
		return;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		rc = verbs_ep_create_qp(ep);
		if (rc) {
			verbs_ep_fail(ep, rc, NULL);
			return;
		}
		verbs_conn_param(ep, &cp, mine);
		ep->state = VERBS_EP_CONNECTING;
		if (rdma_connect(ep->id, &cp))
			verbs_ep_fail(ep, -errno, "rdma_connect");
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		/* already established by its first message (verbs_ep_comm_est) */
		if (ep->state != VERBS_EP_CONNECTED)
			verbs_ep_established(ep, pd, pdlen);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (ep->state == VERBS_EP_CONNECTED)
			log_info("fab", "%s %s: peer %s closed the connection",
				 vd->base.name, vd->ident, ep->base.peer_addr);
		verbs_ep_fail(ep, -ECONNRESET, NULL);
		return;
	case RDMA_CM_EVENT_REJECTED:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		verbs_ep_fail(ep, verbs_cm_status(ev),
			      ev->event == RDMA_CM_EVENT_REJECTED ? NULL : rdma_event_str(ev->event));
		return;
	default:
		return;
	}
}

int verbs_cm_progress(struct verbs_domain *vd, unsigned int budget)
{
	unsigned int n = 0;

	while (n < budget) {
		struct rdma_cm_event *ev, copy;
		uint8_t pd[VERBS_PD_LEN];
		uint8_t pdlen = 0;
		enum verbs_obj_kind *k;

		if (rdma_get_cm_event(vd->cm, &ev))
			break; /* EAGAIN: nothing queued */
		copy = *ev;
		if ((ev->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
		     ev->event == RDMA_CM_EVENT_ESTABLISHED) && ev->param.conn.private_data) {
			pdlen = ev->param.conn.private_data_len < VERBS_PD_LEN
					? ev->param.conn.private_data_len : VERBS_PD_LEN;
			memcpy(pd, ev->param.conn.private_data, pdlen);
		}
		/* ack before acting: destroying an id waits for its events to be acked */
		rdma_ack_cm_event(ev);
		n++;
		if (copy.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			k = copy.listen_id->context;
			verbs_accept((struct verbs_listener *)((char *)k -
				     offsetof(struct verbs_listener, okind)), copy.id,
				     pdlen ? pd : NULL, pdlen);
			continue;
		}
		k = copy.id->context;
		if (!k || *k != VERBS_OBJ_EP)
			continue;
		verbs_cm_ep_event((struct verbs_ep *)((char *)k - offsetof(struct verbs_ep, okind)),
				  &copy, pdlen ? pd : NULL, pdlen);
	}
	return (int)n;
}
