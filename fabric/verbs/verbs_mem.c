/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verbs backend: memory. Everything the backend owns is registered once, from
 * bounded slabs: receive buffers (in chunks, when endpoints are set up),
 * send copies, the mailbox / outbox slots and the region table peers read to
 * check their one-sided ops. User regions get a table entry and a key that
 * names it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>

#include "common/clock.h"
#include "fabric/verbs/verbs.h"

/* ------------------------------------------------- registered memory slabs */

static void *verbs_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static struct ibv_mr *verbs_reg(struct verbs_domain *vd, void *addr, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(vd->pd, addr, len, access);

	if (!mr)
		verbs_memlock_advice(vd, len, errno);
	else
		vd->base.reg_bytes += len; /* kept until the domain closes */
	return mr;
}

struct verbs_rbuf *verbs_rbuf_get(struct verbs_domain *vd, uint32_t idx)
{
	if (idx >= vd->nrbufs)
		return NULL;
	return &vd->rchunks[idx / VERBS_RBUF_CHUNK][idx % VERBS_RBUF_CHUNK];
}

void verbs_rbuf_repost(struct verbs_domain *vd, struct verbs_rbuf *rb)
{
	struct ibv_sge sge = { (uintptr_t)rb->addr, vd->base.attr.msg_size, rb->lkey };
	struct ibv_recv_wr wr = { 0 }, *bad;
	int rc;

	rb->held = false;
	rb->ep = NULL;
	wr.wr_id = (1ull << 63) | rb->idx;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	rc = ibv_post_srq_recv(vd->srq, &wr, &bad);
	if (rc)
		verbs_log_err(vd, "post_srq_recv: %s (receive buffer %u lost)", strerror(rc),
			      rb->idx);
}

/*
 * Make sure at least n receive buffers exist, registering whole chunks.
 * Called when an endpoint is set up (never on the data path).
 */
int verbs_rbufs_reserve(struct verbs_domain *vd, uint32_t n)
{
	const size_t msz = vd->base.attr.msg_size;
	const size_t len = msz * VERBS_RBUF_CHUNK;
	uint32_t c = 0;

	if (n > vd->srq_max) {
		verbs_log_err(vd, "%u receive buffers needed but the SRQ holds %u: lower "
			      "ms_recv_credits or spread endpoints over more domains", n, vd->srq_max);
		return -ENOSPC;
	}
	while (vd->nrbufs < n) {
		struct verbs_rbuf **nc = realloc(vd->rchunks, (vd->nrchunks + 1) * sizeof(*nc));
		struct ibv_mr **nm;
		uint8_t **nmem;

		c = vd->nrchunks;
		if (!nc)
			return -ENOMEM;
		vd->rchunks = nc;
		nm = realloc(vd->rmrs, (c + 1) * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		vd->rmrs = nm;
		nmem = realloc(vd->rmem, (c + 1) * sizeof(*nmem));
		if (!nmem)
			return -ENOMEM;
		vd->rmem = nmem;
		vd->rchunks[c] = calloc(VERBS_RBUF_CHUNK, sizeof(struct verbs_rbuf));
		vd->rmem[c] = verbs_map(len);
		if (!vd->rchunks[c] || !vd->rmem[c])
			goto err_chunk;
		vd->rmrs[c] = verbs_reg(vd, vd->rmem[c], len, IBV_ACCESS_LOCAL_WRITE);
		if (!vd->rmrs[c])
			goto err_chunk;
		vd->nrchunks++;
		for (uint32_t i = 0; i < VERBS_RBUF_CHUNK; i++) {
			struct verbs_rbuf *rb = &vd->rchunks[c][i];

			rb->addr = vd->rmem[c] + i * msz;
			rb->lkey = vd->rmrs[c]->lkey;
			rb->idx = vd->nrbufs++;
			verbs_rbuf_repost(vd, rb);
		}
	}
	return 0;
err_chunk:
	if (vd->rmem[c])
		munmap(vd->rmem[c], len);
	free(vd->rchunks[c]);
	return -ENOMEM;
}

/* The CQ must hold every WR that can complete at once: grow it with the endpoints. */
int verbs_cq_reserve(struct verbs_domain *vd, uint32_t n)
{
	uint32_t want;
	int rc;

	if (vd->cq_need + n <= vd->cq_cap) {
		vd->cq_need += n;
		return 0;
	}
	want = vd->cq_cap * 2 > vd->cq_need + n ? vd->cq_cap * 2 : vd->cq_need + n;
	if (want > (uint32_t)vd->dattr.max_cqe)
		want = (uint32_t)vd->dattr.max_cqe;
	if (want < vd->cq_need + n) {
		verbs_log_err(vd, "completion queue would need %u entries, device max %d: fewer "
			      "endpoints per domain or a smaller ms_sq_depth", vd->cq_need + n,
			      vd->dattr.max_cqe);
		return -ENOSPC;
	}
	rc = ibv_resize_cq(vd->cq, (int)want);
	if (rc) {
		verbs_log_err(vd, "resize CQ to %u: %s", want, strerror(rc));
		return -rc;
	}
	vd->cq_cap = (uint32_t)vd->cq->cqe;
	vd->cq_need += n;
	return 0;
}

int verbs_slabs_open(struct verbs_domain *vd)
{
	const struct fab_domain_attr *a = &vd->base.attr;
	size_t len;

	/* send copies: bounded; past it fab_send answers -EAGAIN */
	vd->nsbufs = a->sq_depth * 4 < 256 ? 256 : a->sq_depth * 4;
	if (vd->nsbufs > 4096)
		vd->nsbufs = 4096;
	len = (size_t)vd->nsbufs * a->msg_size;
	vd->sfree = malloc(vd->nsbufs * sizeof(*vd->sfree));
	vd->smem = verbs_map(len);
	if (!vd->sfree || !vd->smem)
		return -ENOMEM;
	vd->smr = verbs_reg(vd, vd->smem, len, IBV_ACCESS_LOCAL_WRITE);
	if (!vd->smr)
		return -ENOMEM;
	for (uint32_t i = 0; i < vd->nsbufs; i++)
		vd->sfree[i] = (int32_t)(vd->nsbufs - 1 - i);
	vd->nsfree = vd->nsbufs;

	len = VERBS_MAX_EPS * sizeof(struct verbs_mbox);
	vd->mbox = verbs_map(len);
	if (!vd->mbox)
		return -ENOMEM;
	vd->mbox_mr = verbs_reg(vd, vd->mbox, len, IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE);
	if (!vd->mbox_mr)
		return -ENOMEM;
	len = (size_t)VERBS_MAX_EPS * VERBS_SLOT_LEN;
	vd->outbox = verbs_map(len);
	if (!vd->outbox)
		return -ENOMEM;
	vd->outbox_mr = verbs_reg(vd, vd->outbox, len, IBV_ACCESS_LOCAL_WRITE);
	if (!vd->outbox_mr)
		return -ENOMEM;
	vd->slot_free = malloc(VERBS_MAX_EPS * sizeof(*vd->slot_free));
	if (!vd->slot_free)
		return -ENOMEM;
	for (uint32_t i = 0; i < VERBS_MAX_EPS; i++)
		vd->slot_free[i] = VERBS_MAX_EPS - 1 - i;
	vd->nslot_free = VERBS_MAX_EPS;

	len = VERBS_TBL_N * sizeof(struct verbs_tbl_ent);
	vd->tbl = verbs_map(len);
	vd->mrs = calloc(VERBS_MAX_MRS, sizeof(*vd->mrs));
	if (!vd->tbl || !vd->mrs)
		return -ENOMEM;
	vd->tbl_mr = verbs_reg(vd, vd->tbl, len, IBV_ACCESS_REMOTE_READ);
	if (!vd->tbl_mr)
		return -ENOMEM;
	return 0;
}

void verbs_slabs_close(struct verbs_domain *vd)
{
	const size_t msz = vd->base.attr.msg_size;

	for (uint32_t c = 0; c < vd->nrchunks; c++) {
		ibv_dereg_mr(vd->rmrs[c]);
		munmap(vd->rmem[c], msz * VERBS_RBUF_CHUNK);
		free(vd->rchunks[c]);
	}
	free(vd->rchunks);
	free(vd->rmrs);
	free(vd->rmem);
	if (vd->smr)
		ibv_dereg_mr(vd->smr);
	if (vd->smem)
		munmap(vd->smem, (size_t)vd->nsbufs * msz);
	free(vd->sfree);
	if (vd->mbox_mr)
		ibv_dereg_mr(vd->mbox_mr);
	if (vd->mbox)
		munmap(vd->mbox, VERBS_MAX_EPS * sizeof(struct verbs_mbox));
	if (vd->outbox_mr)
		ibv_dereg_mr(vd->outbox_mr);
	if (vd->outbox)
		munmap(vd->outbox, (size_t)VERBS_MAX_EPS * VERBS_SLOT_LEN);
	free(vd->slot_free);
	if (vd->tbl_mr)
		ibv_dereg_mr(vd->tbl_mr);
	if (vd->tbl)
		munmap(vd->tbl, VERBS_TBL_N * sizeof(struct verbs_tbl_ent));
	free(vd->mrs);
}

/* ---------------------------------------------------------------- regions */

int verbs_mr_reg(struct fab_domain *dom, void *addr, size_t len, unsigned int access,
		 struct fab_mr **mr_out)
{
	struct verbs_domain *vd = verbs_dom(dom);
	int flags = IBV_ACCESS_LOCAL_WRITE;
	struct verbs_mr *m;
	uint16_t salt;
	uint32_t idx;

	for (idx = 0; idx < VERBS_MAX_MRS; idx++)
		if (!vd->mrs[idx])
			break;
	if (idx == VERBS_MAX_MRS) {
		verbs_log_err(vd, "more than %u registered regions: use pools", VERBS_MAX_MRS);
		return -ENOSPC;
	}
	/*
	 * A SCOPED region (only asked for when windows exist) is reachable
	 * through its windows alone: no remote right on its own key, and an
	 * empty right in its table entry.
	 */
	if ((access & FAB_ACCESS_REMOTE_READ) && !(access & FAB_ACCESS_SCOPED))
		flags |= IBV_ACCESS_REMOTE_READ;
	if ((access & FAB_ACCESS_REMOTE_WRITE) && !(access & FAB_ACCESS_SCOPED))
		flags |= IBV_ACCESS_REMOTE_WRITE;
	if (vd->mw_ok && (access & (FAB_ACCESS_REMOTE_READ | FAB_ACCESS_REMOTE_WRITE)))
		flags |= IBV_ACCESS_MW_BIND;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->ibmr = ibv_reg_mr(vd->pd, addr, len, flags);
	if (!m->ibmr) {
		int err = errno;

		verbs_memlock_advice(vd, len, err);
		free(m);
		return -err;
	}
	if (getrandom(&salt, sizeof(salt), 0) != sizeof(salt))
		salt = (uint16_t)clock_now_ns();
	salt |= 1;
	m->idx = idx;
	m->base.dom = dom;
	m->base.addr = addr;
	m->base.len = len;
	m->base.access = access;
	/* salt | table index | hardware rkey: a peer finds the entry from the key */
	m->base.key = ((uint64_t)salt << 48) | ((uint64_t)idx << 32) | m->ibmr->rkey;
	vd->mrs[idx] = &m->base;
	vd->tbl[idx].addr = (uintptr_t)addr;
	vd->tbl[idx].len = len;
	vd->tbl[idx].access = (access & FAB_ACCESS_SCOPED) ? 0 : access;
	vd->tbl[idx].qpn = 0;
	__atomic_store_n(&vd->tbl[idx].key, m->base.key, __ATOMIC_RELEASE);
	*mr_out = &m->base;
	return 0;
}

void verbs_mr_dereg(struct fab_mr *fmr)
{
	struct verbs_domain *vd = verbs_dom(fmr->dom);
	struct verbs_mr *m = (struct verbs_mr *)fmr;
	int rc;

	__atomic_store_n(&vd->tbl[m->idx].key, 0, __ATOMIC_RELEASE);
	vd->mrs[m->idx] = NULL;
	/* Local ops still queued on it fail instead of touching freed memory. */
	for (struct verbs_ep *ep = vd->eps; ep; ep = ep->next)
		for (struct verbs_op *op = ep->pending.head; op; op = op->next)
			if (op->mr == fmr && !op->status)
				op->status = -ECANCELED;
	verbs_win_teardown(vd, NULL, fmr); /* the device refuses to deregister under a window */
	rc = ibv_dereg_mr(m->ibmr);
	if (rc)
		verbs_log_err(vd, "dereg_mr of %zu bytes: %s", fmr->len, strerror(rc));
	free(m);
}
