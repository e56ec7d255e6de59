/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UCX backend: the receive side (one active-message handler for every
 * message type) and the per-endpoint cache of the peer's rkeys. Everything a
 * peer sends is checked before use; a malformed message fails the endpoint
 * with one log line. The AM handler runs inside ucp_worker_progress and only
 * queues; ucx_rx_handle, called by progress within its budget, acts and
 * queues answers that the next pump sends.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/ucx/ucx.h"
#include "common/le.h"

/* ------------------------------------------------------------ wire header */

/* type u8, pad[3], credits u32, status i32, pad u32, then cookie id a b c d as u64. */
void ucx_hdr_encode(const struct ucx_hdr *h, uint8_t *out)
{
	memset(out, 0, UCX_HDR_LEN);
	out[0] = h->type;
	le_put32(out + 4, h->credits);
	le_put32(out + 8, (uint32_t)h->status);
	le_put64(out + 16, h->cookie);
	le_put64(out + 24, h->id);
	le_put64(out + 32, h->a);
	le_put64(out + 40, h->b);
	le_put64(out + 48, h->c);
	le_put64(out + 56, h->d);
}

void ucx_hdr_decode(const uint8_t *in, struct ucx_hdr *h)
{
	memset(h, 0, sizeof(*h));
	h->type = in[0];
	h->credits = le_get32(in + 4);
	h->status = (int32_t)le_get32(in + 8);
	h->cookie = le_get64(in + 16);
	h->id = le_get64(in + 24);
	h->a = le_get64(in + 32);
	h->b = le_get64(in + 40);
	h->c = le_get64(in + 48);
	h->d = le_get64(in + 56);
}

/* ------------------------------------------------------------ rkey cache */

static void ucx_rkey_unlink(struct ucx_ep *ep, struct ucx_rkey *rk)
{
	for (struct ucx_rkey **pp = &ep->rkeys; *pp; pp = &(*pp)->next) {
		if (*pp == rk) {
			*pp = rk->next;
			break;
		}
	}
	if (rk->rkey)
		ucp_rkey_destroy(rk->rkey);
	free(rk);
}

/*
 * The live cache entry for key, or NULL. A key we have not seen is fetched
 * from the owner: an entry marked fetching is created and an RKEY_REQ queued.
 */
struct ucx_rkey *ucx_rkey_find(struct ucx_ep *ep, uint64_t key)
{
	struct ucx_rkey *rk;
	struct ucx_hdr h = { .type = UCX_M_RKEY_REQ };

	for (rk = ep->rkeys; rk; rk = rk->next)
		if (rk->key == key && !rk->dead)
			return rk;
	rk = calloc(1, sizeof(*rk));
	if (!rk)
		return NULL;
	rk->key = key;
	rk->fetching = true;
	h.a = key;
	h.id = ++ep->next_req_id;
	if (ucx_ep_queue_ctrl(ep, &h, NULL, 0)) {
		free(rk);
		return NULL;
	}
	rk->next = ep->rkeys;
	ep->rkeys = rk;
	return rk;
}

/* Forget rk now (no op holds it) or when its last issued op is done. */
void ucx_rkey_drop(struct ucx_ep *ep, struct ucx_rkey *rk)
{
	rk->dead = true;
	if (rk->inuse == 0)
		ucx_rkey_unlink(ep, rk);
}

/* An issued op is done with rk; dead entries go with their last user. */
void ucx_rkey_release(struct ucx_ep *ep, struct ucx_rkey *rk)
{
	if (rk->inuse)
		rk->inuse--;
	if (rk->dead && rk->inuse == 0)
		ucx_rkey_unlink(ep, rk);
}

void ucx_rkeys_free(struct ucx_ep *ep)
{
	while (ep->rkeys)
		ucx_rkey_unlink(ep, ep->rkeys);
}

static void ucx_rkey_kill(struct ucx_ep *ep, uint64_t key)
{
	struct ucx_rkey *rk = ep->rkeys;

	while (rk) {
		struct ucx_rkey *next = rk->next;

		if (rk->key == key && !rk->fetching) {
			rk->dead = true;
			if (rk->inuse == 0)
				ucx_rkey_unlink(ep, rk);
		}
		rk = next;
	}
}

/* ---------------------------------------------------------------- receive */

static void ucx_rx_proto_error(struct ucx_ep *ep, const struct ucx_hdr *h, size_t len,
			       const char *what)
{
	fab_log_err(&ep->ud->base, "peer %s broke the protocol: %s (message type %u len %zu)",
		    ep->base.peer_addr, what, h->type, len);
	ucx_ep_set_failing(ep, -EPROTO, NULL);
}

static void ucx_rx_msg(struct ucx_ep *ep, const struct ucx_hdr *h, const void *data, size_t len)
{
	const struct fab_domain_attr *a = &ep->ud->base.attr;
	struct fab_cqe cqe = { 0 };
	struct ucx_slot *slot;

	if (len > a->msg_size) {
		ucx_rx_proto_error(ep, h, len, "message larger than ms_msg_size");
		return;
	}
	if (ep->nfree == 0 || a->recv_credits - ep->nfree + ep->imm_held >= a->recv_credits) {
		ucx_rx_proto_error(ep, h, len, "sent without credit");
		return;
	}
	if (h->a != ep->rx_seq) {
		ucx_rx_proto_error(ep, h, len, "message out of order");
		return;
	}
	ep->rx_seq++;
	slot = &ep->slots[ep->free_slots[--ep->nfree]];
	if (len)
		memcpy(slot->buf, data, len);
	slot->held = true;
	ep->slots_held++;
	ep->base.stats.recvs++;
	cqe.kind = FAB_EV_RECV;
	cqe.ep = &ep->base;
	cqe.ctx = ep->base.ctx;
	cqe.data = slot->buf;
	cqe.len = (uint32_t)len;
	cqe.priv = slot;
	fab_cq_push(&ep->ud->base, &cqe);
}

static void ucx_rx_imm(struct ucx_ep *ep, const struct ucx_hdr *h, size_t len)
{
	const struct fab_domain_attr *a = &ep->ud->base.attr;
	struct fab_cqe cqe = { 0 };

	if (len || h->b > UINT32_MAX || h->a > UINT32_MAX) {
		ucx_rx_proto_error(ep, h, len, "bad immediate");
		return;
	}
	if (a->recv_credits - ep->nfree + ep->imm_held >= a->recv_credits) {
		ucx_rx_proto_error(ep, h, len, "write with immediate without credit");
		return;
	}
	ep->imm_held++;
	cqe.kind = FAB_EV_WRITE_IMM;
	cqe.ep = &ep->base;
	cqe.ctx = ep->base.ctx;
	cqe.len = (uint32_t)h->b;
	cqe.imm = (uint32_t)h->a;
	fab_cq_push(&ep->ud->base, &cqe);
}

/*
 * The peer wants what a key of ours reaches: blob, bounds and rights, or a
 * refusal (logged here, where the memory is; the peer counts it in its
 * NOTE). A scoped key answers with its own range and right, on its own
 * connection only, and "for one use" unless it is connection-long.
 */
static void ucx_rx_rkey_req(struct ucx_ep *ep, const struct ucx_hdr *h)
{
	struct fab_win *w = fab_win_lookup(&ep->ud->wins, h->a);
	struct ucx_mr *mr = w ? (struct ucx_mr *)w->mr : ucx_mr_lookup(ep->ud, h->a);
	struct ucx_hdr r = { .type = UCX_M_RKEY_RESP };
	const char *why = NULL;

	r.id = h->id;
	r.a = h->a;
	if (!mr || !mr->base.access || !mr->rkey_buf)
		why = h->a & FAB_KEY_WIN ? "unknown or revoked scoped key" : "unknown key";
	else if (w && w->ep != &ep->base)
		why = "scoped key of another connection";
	else if (!w && (mr->base.access & FAB_ACCESS_SCOPED))
		why = "region reachable through scoped keys only";
	if (why) {
		if (ep->log_budget) {
			ep->log_budget--;
			fab_log_warn(&ep->ud->base, "peer %s: refused key 0x%lx: %s%s",
				     ep->base.peer_addr, (unsigned long)h->a, why,
				     ep->log_budget ? ""
						    : " (further refusals are only counted)");
		}
		r.status = -EACCES;
		if (ucx_ep_queue_ctrl(ep, &r, NULL, 0))
			ucx_ep_set_failing(ep, -ENOMEM, "cannot queue an answer");
		return;
	}
	r.b = w ? w->addr : (uint64_t)(uintptr_t)mr->base.addr;
	r.c = w ? w->len : mr->base.len;
	r.d = w ? w->access | (w->long_lived ? 0 : UCX_RK_ONCE)
		: mr->base.access & (FAB_ACCESS_REMOTE_READ | FAB_ACCESS_REMOTE_WRITE);
	if (ucx_ep_queue_ctrl(ep, &r, mr->rkey_buf, (uint32_t)mr->rkey_len))
		ucx_ep_set_failing(ep, -ENOMEM, "cannot queue an answer");
}

static void ucx_rx_rkey_resp(struct ucx_ep *ep, const struct ucx_hdr *h, const void *data,
			     size_t len)
{
	struct ucx_rkey *rk;
	ucs_status_t st;

	for (rk = ep->rkeys; rk; rk = rk->next)
		if (rk->key == h->a && rk->fetching)
			break;
	if (!rk) {
		ucx_rx_proto_error(ep, h, len, "rkey answer to no request");
		return;
	}
	rk->fetching = false;
	if (h->status) {
		rk->status = h->status < 0 && h->status > -4096 ? h->status : -EACCES;
		return;
	}
	if (len == 0 || h->b + h->c < h->b ||
	    (h->d & ~(uint64_t)(FAB_ACCESS_REMOTE_READ | FAB_ACCESS_REMOTE_WRITE | UCX_RK_ONCE))) {
		ucx_rx_proto_error(ep, h, len, "bad rkey answer");
		rk->status = -EPROTO;
		return;
	}
	st = ucp_ep_rkey_unpack(ep->uep, data, &rk->rkey);
	if (st != UCS_OK) {
		fab_log_err(&ep->ud->base, "peer %s: ucp_ep_rkey_unpack: %s", ep->base.peer_addr,
			    ucs_status_string(st));
		rk->rkey = NULL;
		rk->status = -EACCES;
		return;
	}
	rk->base = h->b;
	rk->len = h->c;
	rk->access = (unsigned int)h->d & (FAB_ACCESS_REMOTE_READ | FAB_ACCESS_REMOTE_WRITE);
	rk->once = (h->d & UCX_RK_ONCE) != 0;
}

static int ucx_rxq_grow(struct ucx_domain *ud)
{
	uint32_t ncap = ud->rx_cap ? ud->rx_cap * 2 : 256;
	struct ucx_rx *n = malloc(ncap * sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (uint32_t i = 0; i < ud->rx_count; i++)
		n[i] = ud->rxq[(ud->rx_head + i) & (ud->rx_cap - 1)];
	free(ud->rxq);
	ud->rxq = n;
	ud->rx_cap = ncap;
	ud->rx_head = 0;
	return 0;
}

/* Runs inside ucp_worker_progress: queue the message, handle it later. */
ucs_status_t ucx_am_recv_cb(void *arg, const void *header, size_t header_length, void *data,
			    size_t length, const ucp_am_recv_param_t *param)
{
	struct ucx_domain *ud = arg;
	struct ucx_rx *r;

	if (header_length != UCX_HDR_LEN) {
		fab_log_warn(&ud->base, "dropped a message with a %zu-byte header", header_length);
		return UCS_OK;
	}
	if (ud->rx_count == ud->rx_cap && ucx_rxq_grow(ud)) {
		fab_log_err(&ud->base, "receive queue cannot grow past %u messages", ud->rx_cap);
		return UCS_OK; /* the endpoint notices the gap in its sequence */
	}
	r = &ud->rxq[(ud->rx_head + ud->rx_count++) & (ud->rx_cap - 1)];
	ucx_hdr_decode(header, &r->h);
	r->reply_ep = (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) ? param->reply_ep
									      : NULL;
	r->len = length;
	r->rndv = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
	r->held = length && !r->rndv && (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA);
	r->data = r->held ? data : NULL;
	return r->held ? UCS_INPROGRESS : UCS_OK;
}

static void ucx_rx_one(struct ucx_domain *ud, struct ucx_rx *r)
{
	struct ucx_hdr h = r->h;
	void *data = r->data;
	size_t length = r->len;
	struct ucx_ep *ep;

	if (h.type == UCX_M_HELLO) {
		ep = NULL;
		for (struct ucx_ep *e = ud->eps; e && r->reply_ep; e = e->next)
			if (e->uep == r->reply_ep && e->state == UCX_EP_CONNECTING)
				ep = e;
		if (!ep) {
			fab_log_warn(&ud->base, "dropped a handshake from an unknown endpoint");
			return;
		}
	} else {
		ep = ucx_ep_by_cookie(ud, h.cookie);
		/* Late messages for an endpoint that is gone or failed are dropped. */
		if (!ep || ep->state != UCX_EP_CONNECTED || ep->fail_rc == -EPROTO)
			return;
	}
	ep->base.stats.rx_bytes += UCX_HDR_LEN + length;
	if (r->rndv || (length && !data)) {
		ucx_rx_proto_error(ep, &h, length, "rendezvous message (we only take eager)");
		return;
	}
	if (h.credits) {
		if ((uint64_t)ep->tx_credits + h.credits > ep->peer_window) {
			ucx_rx_proto_error(ep, &h, length,
					   "returned more credits than it was given");
			return;
		}
		ep->tx_credits += h.credits;
	}
	switch (h.type) {
	case UCX_M_HELLO:
		ucx_ep_on_hello(ep, &h);
		break;
	case UCX_M_MSG:
		ucx_rx_msg(ep, &h, data, length);
		break;
	case UCX_M_IMM:
		ucx_rx_imm(ep, &h, length);
		break;
	case UCX_M_CREDIT:
		break;
	case UCX_M_RKEY_REQ:
		ucx_rx_rkey_req(ep, &h);
		break;
	case UCX_M_RKEY_RESP:
		ucx_rx_rkey_resp(ep, &h, data, length);
		break;
	case UCX_M_NOTE:
		ep->base.stats.remote_writes += h.a;
		ep->base.stats.remote_reads += h.b;
		ep->base.stats.remote_errors += h.c;
		break;
	case UCX_M_REVOKE:
		ucx_rkey_kill(ep, h.a);
		break;
	case UCX_M_BYE:
		/* The reason UCX gave (often "endpoint timeout") is less precise. */
		ucx_ep_set_failing(ep, -ECONNRESET, NULL);
		ep->fail_rc = -ECONNRESET;
		ep->fail_why = NULL;
		break;
	default:
		ucx_rx_proto_error(ep, &h, length, "unknown message type");
		break;
	}
	ud->dirty = true;
}

/* Handle queued messages, at most budget (0 = all). Returns how many. */
unsigned int ucx_rx_handle(struct ucx_domain *ud, unsigned int budget)
{
	unsigned int n = 0;

	while (ud->rx_count && (!budget || n < budget)) {
		struct ucx_rx r = ud->rxq[ud->rx_head];

		ud->rx_head = (ud->rx_head + 1) & (ud->rx_cap - 1);
		ud->rx_count--;
		ucx_rx_one(ud, &r);
		if (r.held)
			ucp_am_data_release(ud->worker, r.data);
		n++;
	}
	return n;
}

void ucx_rx_drop_all(struct ucx_domain *ud)
{
	while (ud->rx_count) {
		struct ucx_rx *r = &ud->rxq[ud->rx_head];

		if (r->held)
			ucp_am_data_release(ud->worker, r->data);
		ud->rx_head = (ud->rx_head + 1) & (ud->rx_cap - 1);
		ud->rx_count--;
	}
	free(ud->rxq);
	ud->rxq = NULL;
	ud->rx_cap = 0;
}
