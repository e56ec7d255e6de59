/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UCX backend: endpoint life cycle. Client-server ucp endpoints (ucp_listener
 * / ucp_ep_create with a sockaddr) with UCP_ERR_HANDLING_MODE_PEER; a HELLO
 * active message from each side carries credits and msg_size, and the
 * endpoint is reported (CONNECTED / ACCEPTED) only when the peer's HELLO
 * arrived, so both ends are ready and a peer that is not Weft never becomes
 * an endpoint.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "common/clock.h"
#include "fabric/ucx/ucx.h"

/* -------------------------------------------------------------- ids */

static int ucx_ep_id_assign(struct ucx_domain *ud, struct ucx_ep *ep)
{
	uint32_t idx, salt;

	for (idx = 0; idx < ud->nep_ids; idx++)
		if (!ud->ep_ids[idx])
			break;
	if (idx == ud->nep_ids) {
		if (ud->nep_ids == ud->ep_ids_cap) {
			uint32_t ncap = ud->ep_ids_cap ? ud->ep_ids_cap * 2 : 64;
			struct ucx_ep **n = realloc(ud->ep_ids, ncap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			ud->ep_ids = n;
			ud->ep_ids_cap = ncap;
		}
		ud->nep_ids++;
	}
	if (getrandom(&salt, sizeof(salt), 0) != sizeof(salt))
		salt = (uint32_t)clock_now_ns();
	ep->cookie = ((uint64_t)(salt | 1) << 32) | idx;
	ud->ep_ids[idx] = ep;
	return 0;
}

struct ucx_ep *ucx_ep_by_cookie(struct ucx_domain *ud, uint64_t cookie)
{
	uint32_t idx = (uint32_t)cookie;
	struct ucx_ep *ep;

	if (idx >= ud->nep_ids)
		return NULL;
	ep = ud->ep_ids[idx];
	return (ep && ep->cookie == cookie) ? ep : NULL;
}

/* ------------------------------------------------------- create, destroy */

static struct ucx_ep *ucx_ep_new(struct ucx_domain *ud)
{
	const struct fab_domain_attr *a = &ud->base.attr;
	struct ucx_ep *ep = calloc(1, sizeof(*ep));

	if (!ep)
		return NULL;
	ep->slots = calloc(a->recv_credits, sizeof(*ep->slots));
	ep->free_slots = calloc(a->recv_credits, sizeof(*ep->free_slots));
	ep->slot_mem = malloc((size_t)a->recv_credits * a->msg_size);
	if (!ep->slots || !ep->free_slots || !ep->slot_mem || ucx_ep_id_assign(ud, ep)) {
		free(ep->slots);
		free(ep->free_slots);
		free(ep->slot_mem);
		free(ep);
		return NULL;
	}
	for (uint32_t i = 0; i < a->recv_credits; i++) {
		ep->slots[i].ep = ep;
		ep->slots[i].buf = ep->slot_mem + (size_t)i * a->msg_size;
		ep->free_slots[i] = a->recv_credits - 1 - i;
	}
	ep->nfree = a->recv_credits;
	ep->ud = ud;
	ep->base.dom = &ud->base;
	ep->state = UCX_EP_CONNECTING;
	ep->log_budget = UCX_EP_LOG_LIMIT;
	ep->deadline_ns = clock_now_ns() + (uint64_t)a->connect_timeout_ms * 1000000u;
	ud->nconnecting++;
	ep->next = ud->eps;
	if (ud->eps)
		ud->eps->prev = ep;
	ud->eps = ep;
	return ep;
}

void ucx_ep_destroy(struct ucx_ep *ep)
{
	struct ucx_domain *ud = ep->ud;
	struct ucx_op *op;
	uint32_t idx = (uint32_t)ep->cookie;

	if (ep->state != UCX_EP_FAILED) {
		ep->user_closed = true;
		ucx_ep_fail(ep, -ECANCELED, NULL);
	}
	while ((op = ucx_op_dequeue(&ep->ctlq)))
		ucx_op_put(ud, op);
	ucx_rkeys_free(ep);
	if (idx < ud->nep_ids && ud->ep_ids[idx] == ep)
		ud->ep_ids[idx] = NULL;
	if (ep->prev)
		ep->prev->next = ep->next;
	else
		ud->eps = ep->next;
	if (ep->next)
		ep->next->prev = ep->prev;
	free(ep->slots);
	free(ep->free_slots);
	free(ep->slot_mem);
	free(ep);
}

static void ucx_err_cb(void *arg, ucp_ep_h uep, ucs_status_t status)
{
	struct ucx_ep *ep = arg;

	(void)uep;
	/* A reset is the peer closing: news, not an error (logged at info by ucx_ep_fail). */
	ucx_ep_set_failing(ep, ucx_status_errno(status),
			   status == UCS_ERR_CONNECTION_RESET ? NULL : ucs_status_string(status));
}

/* Called from UCX callbacks: the progress loop fails the endpoint afterwards. */
void ucx_ep_set_failing(struct ucx_ep *ep, int rc, const char *why)
{
	if (ep->fail_rc || ep->state == UCX_EP_FAILED)
		return;
	ep->fail_rc = rc ? rc : -EIO;
	ep->fail_why = why;
	ep->ud->nfailing++;
}

static int ucx_ep_send_hello(struct ucx_ep *ep)
{
	const struct fab_domain_attr *a = &ep->ud->base.attr;
	struct ucx_hdr h = { 0 };
	struct ucx_op *op = ucx_op_alloc(ep->ud);

	if (!op)
		return -ENOMEM;
	h.type = UCX_M_HELLO;
	h.id = ep->cookie;
	h.a = UCX_MAGIC;
	h.b = UCX_VERSION;
	h.c = a->recv_credits;
	h.d = a->msg_size;
	/* REPLY: the peer finds its endpoint by reply_ep, it has no cookie of ours yet. */
	return ucx_ctrl_send(ep, op, &h, NULL, 0, UCP_AM_SEND_FLAG_REPLY);
}

static void ucx_ep_params_common(struct ucx_ep *ep, ucp_ep_params_t *p)
{
	p->field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
	p->err_mode = UCP_ERR_HANDLING_MODE_PEER;
	p->err_handler.cb = ucx_err_cb;
	p->err_handler.arg = ep;
}

int ucx_ep_connect(struct fab_domain *dom, const char *addr, const char *local_addr, void *ctx,
		   struct fab_ep **ep_out)
{
	struct ucx_domain *ud = ucx_dom(dom);
	struct sockaddr_storage ss, ls;
	unsigned int slen, llen = 0;
	ucp_ep_params_t p = { 0 };
	struct ucx_ep *ep;
	ucs_status_t st;
	int rc;

	rc = fab_addr_parse(addr, true, &ss, &slen);
	if (rc)
		return rc;
	if (local_addr && local_addr[0]) {
		rc = fab_addr_parse(local_addr, false, &ls, &llen);
		if (rc)
			return rc;
		rc = ucx_addr_check(dom, "connect from", local_addr, &ls);
		if (rc)
			return rc;
	}
	ep = ucx_ep_new(ud);
	if (!ep)
		return -ENOMEM;
	ep->base.ctx = ctx;
	snprintf(ep->base.peer_addr, sizeof(ep->base.peer_addr), "%s", addr);
	p.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR;
	p.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
	p.sockaddr.addr = (const struct sockaddr *)&ss;
	p.sockaddr.addrlen = slen;
	if (llen) {
		p.field_mask |= UCP_EP_PARAM_FIELD_LOCAL_SOCK_ADDR;
		p.local_sockaddr.addr = (const struct sockaddr *)&ls;
		p.local_sockaddr.addrlen = llen;
	}
	ucx_ep_params_common(ep, &p);
	st = ucp_ep_create(ud->worker, &p, &ep->uep);
	if (st != UCS_OK) {
		fab_log_err(dom, "connect %s: ucp_ep_create: %s", addr, ucs_status_string(st));
		ep->uep = NULL;
		ep->user_closed = true;
		ucx_ep_destroy(ep);
		return ucx_status_errno(st);
	}
	/* Even a refusal is reported as an event, like every other outcome. */
	rc = ucx_ep_send_hello(ep);
	if (rc)
		ucx_ep_set_failing(ep, rc, "cannot send the handshake");
	*ep_out = &ep->base;
	return 0;
}

int ucx_ep_accept(struct ucx_domain *ud, struct ucx_conn_req *cr)
{
	ucp_conn_request_attr_t ca = { .field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR };
	ucp_ep_params_t p = { 0 };
	struct ucx_ep *ep;
	ucs_status_t st;

	ep = ucx_ep_new(ud);
	if (!ep) {
		ucp_listener_reject(cr->l->ul, cr->req);
		return 0;
	}
	if (ucp_conn_request_query(cr->req, &ca) == UCS_OK)
		fab_addr_format(&ca.client_address, ep->base.peer_addr,
				sizeof(ep->base.peer_addr));
	ep->from = cr->l;
	ep->base.ctx = cr->l->base.ctx;
	p.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST;
	p.conn_request = cr->req;
	ucx_ep_params_common(ep, &p);
	st = ucp_ep_create(ud->worker, &p, &ep->uep);
	if (st != UCS_OK) {
		fab_log_warn(&ud->base, "accept from %s: ucp_ep_create: %s", ep->base.peer_addr,
			     ucs_status_string(st));
		ep->uep = NULL;
		ep->zombie = true;
		ucx_ep_fail(ep, ucx_status_errno(st), NULL);
		return 1;
	}
	if (ucx_ep_send_hello(ep))
		ucx_ep_set_failing(ep, -ENOMEM, "cannot send the handshake");
	return 1;
}

static void ucx_ep_names(struct ucx_ep *ep)
{
	ucp_ep_attr_t at = { 0 };

	at.field_mask = UCP_EP_ATTR_FIELD_LOCAL_SOCKADDR | UCP_EP_ATTR_FIELD_REMOTE_SOCKADDR;
	if (ucp_ep_query(ep->uep, &at) != UCS_OK)
		return;
	fab_addr_format(&at.local_sockaddr, ep->base.local_addr, sizeof(ep->base.local_addr));
	fab_addr_format(&at.remote_sockaddr, ep->base.peer_addr, sizeof(ep->base.peer_addr));
}

/* The peer's HELLO (in the AM handler): check it, take its limits, report the endpoint. */
void ucx_ep_on_hello(struct ucx_ep *ep, const struct ucx_hdr *h)
{
	struct ucx_domain *ud = ep->ud;
	struct fab_cqe cqe = { 0 };

	if (h->a != UCX_MAGIC || h->b != UCX_VERSION || h->c < 1 || h->c > 65535 || h->d < 64 ||
	    h->d > (1u << 24) || h->id == 0) {
		fab_log_warn(&ud->base, "peer %s: bad handshake (magic 0x%lx version %lu credits "
			     "%lu msg_size %lu)", ep->base.peer_addr, (unsigned long)h->a,
			     (unsigned long)h->b, (unsigned long)h->c, (unsigned long)h->d);
		ucx_ep_set_failing(ep, -EPROTO, NULL);
		return;
	}
	ep->peer_cookie = h->id;
	ep->peer_window = (uint32_t)h->c;
	ep->tx_credits = (uint32_t)h->c;
	ep->peer_msg_size = (uint32_t)h->d;
	ep->state = UCX_EP_CONNECTED;
	ep->base.connected = true;
	ud->nconnecting--;
	ucx_ep_names(ep);
	cqe.ep = &ep->base;
	cqe.ctx = ep->base.ctx;
	if (ep->from) {
		cqe.kind = FAB_EV_ACCEPTED;
		cqe.listener = &ep->from->base;
	} else {
		cqe.kind = FAB_EV_CONNECTED;
	}
	fab_cq_push(&ud->base, &cqe);
}

/* Close a ucp endpoint (forced: UCX cancels what it still holds). */
static void ucx_uep_close(struct ucx_ep *ep, ucp_ep_h uep)
{
	ucp_request_param_t rp = { 0 };
	struct ucx_op *op;
	ucs_status_ptr_t sp;

	op = ucx_op_alloc(ep->ud);
	rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
	rp.flags = UCP_EP_CLOSE_FLAG_FORCE;
	if (op) {
		op->kind = UCX_OP_CLOSE;
		op->ep = ep;
		op->reported = true;
		rp.op_attr_mask |= UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
		rp.cb.send = ucx_req_cb;
		rp.user_data = op;
	}
	sp = ucp_ep_close_nbx(uep, &rp);
	if (op && ucx_op_track(op, sp) <= 0)
		ucx_op_put(ep->ud, op);
}

static void ucx_ep_close_uep(struct ucx_ep *ep)
{
	if (ep->uep)
		ucx_uep_close(ep, ep->uep);
	ep->uep = NULL;
}

void ucx_ep_fail(struct ucx_ep *ep, int status, const char *why)
{
	enum ucx_ep_state was = ep->state;
	struct fab_cqe cqe = { 0 };

	if (was == UCX_EP_FAILED)
		return;
	/* A connect that died before the handshake was refused or unreachable. */
	if (was == UCX_EP_CONNECTING && !ep->from &&
	    (status == -ECONNRESET || status == -ENOTCONN || status == -EIO))
		status = -ECONNREFUSED;
	if (!why && status == -ECONNRESET && was == UCX_EP_CONNECTED && !ep->user_closed)
		fab_log_info(&ep->ud->base, "peer %s closed the connection", ep->base.peer_addr);
	if (why)
		fab_log_warn(&ep->ud->base, "%s %s: %s: %s",
			     was == UCX_EP_CONNECTED ? "peer"
			     : ep->from		     ? "handshake with"
						     : "connecting to",
			     ep->base.peer_addr, why, strerror(-status));
	if (was == UCX_EP_CONNECTING)
		ep->ud->nconnecting--;
	ep->state = UCX_EP_FAILED;
	ep->base.connected = false;
	fab_win_drop(&ep->ud->wins, &ep->base, NULL); /* its scoped keys die with it */
	/* Every posted op completes with the error, then one event. */
	ucx_ep_flush_ops(ep, status);
	ucx_ep_close_uep(ep);
	if (ep->user_closed)
		return;
	if (was != UCX_EP_CONNECTED && ep->from) {
		ep->zombie = true; /* accepted, never reported: nobody else frees it */
		return;
	}
	cqe.kind = was == UCX_EP_CONNECTED ? FAB_EV_PEER_FAILED : FAB_EV_CONNECTED;
	cqe.status = status;
	cqe.ep = &ep->base;
	cqe.ctx = ep->base.ctx;
	fab_cq_push(&ep->ud->base, &cqe);
}

void ucx_ep_close(struct fab_ep *fep)
{
	struct ucx_ep *ep = ucx_ep_of(fep);

	ep->user_closed = true;
	if (ep->state == UCX_EP_CONNECTED) {
		/* Best effort: the peer also learns it from the connection manager. */
		struct ucx_hdr h = { .type = UCX_M_BYE };
		struct ucx_op *op = ucx_op_alloc(ep->ud);

		if (op)
			ucx_ctrl_send(ep, op, &h, NULL, 0, 0);
		ucp_worker_progress(ep->ud->worker);
	}
	if (ep->state != UCX_EP_FAILED)
		ucx_ep_fail(ep, -ECANCELED, NULL);
	fab_cq_forget_ep(fep->dom, fep);
	if (ep->slots_held == 0 && ep->imm_held == 0 && ep->refs == 0)
		ucx_ep_destroy(ep);
}

void ucx_ep_check_deadline(struct ucx_ep *ep, uint64_t now)
{
	if (ep->state == UCX_EP_CONNECTING && now > ep->deadline_ns)
		ucx_ep_fail(ep, -ETIMEDOUT, "no handshake before ms_connect_timeout");
}

void ucx_recv_release(const struct fab_cqe *cqe)
{
	struct ucx_ep *ep = ucx_ep_of(cqe->ep);

	if (cqe->kind == FAB_EV_RECV) {
		struct ucx_slot *slot = cqe->priv;

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
	/* A closed endpoint is freed by the next progress once nothing is lent out. */
	if (ep->state == UCX_EP_CONNECTED) {
		ep->rx_owed++;
		ep->ud->dirty = true;
	}
}
