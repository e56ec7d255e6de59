/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verbs backend: scoped keys as type 2 memory windows (docs/verbs.md,
 * "Scoped keys").
 *
 * A window is bound with IBV_WR_BIND_MW on the QP of the endpoint it is
 * for, so the device itself refuses its key on any other QP, outside its
 * range, for another access and once it is invalidated (IBV_WR_LOCAL_INV,
 * posted when the key is revoked). Both go through the endpoint's send
 * queue: the bind executes before anything posted after it, the message
 * that carries the key to the peer included.
 *
 * Windows are allocated once and rebound with a new key (ibv_inc_rkey),
 * because allocating one is a kernel (often firmware) command. Each live
 * window has an entry in the region table, after the regions, naming the
 * peer's QP: an honest initiator reads it before every use, so a revoked,
 * stolen or misused key is refused in software and its connection lives
 * on, as on TCP. An initiator that skips the check meets the device's
 * refusal, which on RC ends its connection.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/verbs/verbs.h"

int verbs_wins_open(struct verbs_domain *vd)
{
	unsigned int cap = (unsigned int)vd->dattr.device_cap_flags;

	vd->mw_ok = (cap & (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)) != 0;
	if (!vd->mw_ok) {
		/* documented fallback: keys name whole regions (docs/security.md) */
		verbs_log_info(vd, "the device has no type 2 memory windows: remote keys are per "
				   "region, not scoped to one peer and one op");
		vd->base.rkeys_unscoped = true;
		return 0;
	}
	vd->wins = calloc(VERBS_MAX_WINS, sizeof(*vd->wins));
	if (!vd->wins)
		return -ENOMEM;
	for (uint32_t i = VERBS_MAX_WINS; i > 0; i--) {
		vd->wins[i - 1].next_free = vd->win_free;
		vd->win_free = i;
	}
	return 0;
}

void verbs_wins_close(struct verbs_domain *vd)
{
	if (!vd->wins)
		return;
	for (uint32_t i = 0; i < VERBS_MAX_WINS; i++)
		if (vd->wins[i].mw)
			ibv_dealloc_mw(vd->wins[i].mw);
	free(vd->wins);
	vd->wins = NULL;
}

static uint32_t verbs_win_slot(const struct verbs_domain *vd, const struct verbs_win *w)
{
	return (uint32_t)(w - vd->wins);
}

static void verbs_win_put(struct verbs_domain *vd, struct verbs_win *w)
{
	if (w->ep)
		w->ep->nwins--;
	w->ep = NULL;
	w->mr = NULL;
	w->key = 0;
	w->state = VERBS_WIN_FREE;
	w->next_free = vd->win_free;
	vd->win_free = verbs_win_slot(vd, w) + 1;
}

/* Out of the table and off the device now: a synchronous dealloc, for the rare paths. */
static void verbs_win_kill(struct verbs_domain *vd, struct verbs_win *w)
{
	int rc;

	__atomic_store_n(&vd->tbl[VERBS_MAX_MRS + verbs_win_slot(vd, w)].key, 0, __ATOMIC_RELEASE);
	if (w->mw) {
		rc = ibv_dealloc_mw(w->mw);
		if (rc)
			verbs_log_err(vd, "dealloc_mw: %s", strerror(rc));
		w->mw = NULL;
	}
	verbs_win_put(vd, w);
}

/* Post what was queued now: the bind must precede the message carrying its key. */
static void verbs_win_kick(struct verbs_ep *ep)
{
	if (ep->vd->in_progress)
		verbs_txlist_add(ep);
	else
		verbs_ep_tx(ep);
}

int verbs_rkey_scope(struct fab_ep *fep, struct fab_mr *mr, uint64_t addr, uint64_t len,
		     unsigned int access, uint64_t *key_out)
{
	struct verbs_ep *ep = verbs_ep_of(fep);
	struct verbs_domain *vd = ep->vd;
	struct verbs_tbl_ent *e;
	struct verbs_win *w;
	struct verbs_op *op;
	uint32_t slot;
	uint64_t key;

	if (ep->state != VERBS_EP_CONNECTED || !ep->qp)
		return -ENOTCONN;
	if (vd->win_free == 0) {
		if (!vd->wins_full_logged)
			verbs_log_err(vd, "rkey_scope: all %u scoped keys are in use",
				      VERBS_MAX_WINS);
		vd->wins_full_logged = true;
		return -ENOSPC;
	}
	if (ep->peer_qpn == 0) {
		struct ibv_qp_attr qa;
		struct ibv_qp_init_attr ia;
		int rc = ibv_query_qp(ep->qp, &qa, IBV_QP_DEST_QPN, &ia);

		if (rc) {
			verbs_log_err(vd, "qp 0x%x: query_qp: %s", ep->qp->qp_num, strerror(rc));
			return -rc;
		}
		ep->peer_qpn = qa.dest_qp_num;
	}
	slot = vd->win_free - 1;
	w = &vd->wins[slot];
	if (!w->mw) {
		w->mw = ibv_alloc_mw(vd->pd, IBV_MW_TYPE_2);
		if (!w->mw) {
			int err = errno;

			verbs_log_err(vd, "alloc_mw: %s", strerror(err));
			return -err;
		}
		w->hwkey = w->mw->rkey;
	}
	op = verbs_op_alloc(vd);
	if (!op)
		return -ENOMEM;
	vd->win_free = w->next_free;
	w->hwkey = ibv_inc_rkey(w->hwkey); /* a new key for every binding */
	key = ((uint64_t)(uint16_t)fab_salt(&vd->win_rng) << 48) |
	      ((uint64_t)(VERBS_MAX_MRS + slot) << 32) | w->hwkey;
	w->ep = ep;
	w->mr = mr;
	w->key = key;
	w->addr = addr;
	w->len = len;
	w->access = access & (FAB_ACCESS_REMOTE_READ | FAB_ACCESS_REMOTE_WRITE);
	w->state = VERBS_WIN_BOUND;
	ep->nwins++;
	e = &vd->tbl[VERBS_MAX_MRS + slot];
	e->addr = addr;
	e->len = len;
	e->access = w->access | ((access & FAB_SCOPE_LONG) ? 0 : VERBS_TBL_WINDOW);
	e->qpn = ep->peer_qpn;
	__atomic_store_n(&e->key, key, __ATOMIC_RELEASE);
	op->kind = VERBS_OP_BIND;
	op->raddr = slot;
	op->rkey64 = key;
	verbs_opq_push(&ep->pending, op);
	verbs_win_kick(ep);
	*key_out = key;
	return 0;
}

void verbs_rkey_revoke(struct fab_domain *dom, uint64_t key)
{
	struct verbs_domain *vd = verbs_dom(dom);
	uint32_t idx = (uint32_t)(key >> 32) & 0xffffu;
	struct verbs_win *w;
	struct verbs_op *op;

	if (!vd->wins || idx < VERBS_MAX_MRS || idx >= VERBS_TBL_N)
		return;
	w = &vd->wins[idx - VERBS_MAX_MRS];
	if (w->state != VERBS_WIN_BOUND || w->key != key)
		return; /* unknown or already revoked */
	__atomic_store_n(&vd->tbl[idx].key, 0, __ATOMIC_RELEASE);
	op = w->ep->state == VERBS_EP_CONNECTED ? verbs_op_alloc(vd) : NULL;
	if (!op) {
		/* a failed QP reaches nothing; its window goes now, as one we cannot queue for */
		verbs_win_kill(vd, w);
		return;
	}
	w->state = VERBS_WIN_INVALIDATING;
	op->kind = VERBS_OP_INV;
	op->raddr = idx - VERBS_MAX_MRS;
	op->rkey64 = key;
	verbs_opq_push(&w->ep->pending, op);
	verbs_win_kick(w->ep);
}

void verbs_win_teardown(struct verbs_domain *vd, const struct verbs_ep *ep, const struct fab_mr *mr)
{
	if (!vd->wins)
		return;
	for (uint32_t i = 0; i < VERBS_MAX_WINS; i++) {
		struct verbs_win *w = &vd->wins[i];

		if (w->state != VERBS_WIN_FREE && ((ep && w->ep == ep) || (mr && w->mr == mr)))
			verbs_win_kill(vd, w);
	}
}

/* The window a queued bind or invalidation is for, if it is still that one. */
struct verbs_win *verbs_win_of_op(struct verbs_ep *ep, const struct verbs_op *op)
{
	struct verbs_win *w;

	if (!ep->vd->wins || op->raddr >= VERBS_MAX_WINS)
		return NULL;
	w = &ep->vd->wins[op->raddr];
	if (w->ep != ep || w->key != op->rkey64 || !w->mw || w->state == VERBS_WIN_FREE)
		return NULL;
	if (op->kind == VERBS_OP_INV && w->state != VERBS_WIN_INVALIDATING)
		return NULL;
	return w;
}

/* A bind or an invalidation completed (or was flushed, or refused before posting). */
void verbs_win_done(struct verbs_ep *ep, const struct verbs_op *op, int status)
{
	struct verbs_win *w = verbs_win_of_op(ep, op);

	if (!w)
		return;
	if (op->kind == VERBS_OP_BIND) {
		/*
		 * The provider names the window to the device by the rkey in
		 * struct ibv_mw, which only ibv_bind_mw (type 1) updates: the
		 * next bind must present this one. A failed bind fails the QP,
		 * and its windows go with it.
		 */
		if (status == 0)
			w->mw->rkey = w->hwkey;
		return;
	}
	if (status == 0)
		verbs_win_put(ep->vd, w); /* invalidated: ready for its next binding */
	else
		verbs_win_kill(ep->vd, w);
}
