/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The domain's completion queue: a ring that grows instead of overflowing.
 * Growth is bounded in practice by credits and send-queue depth, which cap
 * what any peer can make us queue.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/fab_backend.h"

#define FAB_CQ_INIT 256

int fab_cq_init(struct fab_cq *cq)
{
	cq->ring = calloc(FAB_CQ_INIT, sizeof(*cq->ring));
	if (!cq->ring)
		return -ENOMEM;
	cq->cap = FAB_CQ_INIT;
	cq->head = 0;
	cq->count = 0;
	return 0;
}

void fab_cq_fini(struct fab_cq *cq)
{
	free(cq->ring);
	cq->ring = NULL;
	cq->cap = cq->count = cq->head = 0;
}

static int fab_cq_grow(struct fab_cq *cq)
{
	uint32_t ncap = cq->cap * 2;
	struct fab_cqe *n;

	if (ncap < cq->cap)
		return -ENOMEM;
	n = calloc(ncap, sizeof(*n));
	if (!n)
		return -ENOMEM;
	for (uint32_t i = 0; i < cq->count; i++)
		n[i] = cq->ring[(cq->head + i) & (cq->cap - 1)];
	free(cq->ring);
	cq->ring = n;
	cq->cap = ncap;
	cq->head = 0;
	return 0;
}

int fab_cq_push(struct fab_domain *dom, const struct fab_cqe *cqe)
{
	struct fab_cq *cq = &dom->cq;
	int rc;

	if (cq->count == cq->cap) {
		rc = fab_cq_grow(cq);
		if (rc) {
			fab_log_err(dom, "completion queue cannot grow past %u entries", cq->cap);
			return rc;
		}
	}
	cq->ring[(cq->head + cq->count) & (cq->cap - 1)] = *cqe;
	cq->count++;
	return 0;
}

bool fab_cq_empty(const struct fab_domain *dom)
{
	return dom->cq.count == 0;
}

/* A tombstone left by fab_cq_forget_ep; skipped by fab_cq_poll. */
#define FAB_EV_NONE 0

int fab_cq_poll(struct fab_domain *dom, struct fab_cqe *cqes, unsigned int max)
{
	struct fab_cq *cq = &dom->cq;
	unsigned int n = 0;

	while (n < max && cq->count > 0) {
		struct fab_cqe *e = &cq->ring[cq->head];

		cq->head = (cq->head + 1) & (cq->cap - 1);
		cq->count--;
		if ((int)e->kind == FAB_EV_NONE)
			continue;
		cqes[n] = *e;
		/*
		 * A write_imm holds a receive credit like a message, but has no
		 * buffer for the caller to release: give it back once seen.
		 */
		if (e->kind == FAB_EV_WRITE_IMM && e->ep && dom->ops->recv_release)
			dom->ops->recv_release(e);
		n++;
	}
	return (int)n;
}

void fab_cq_forget_ep(struct fab_domain *dom, struct fab_ep *ep)
{
	struct fab_cq *cq = &dom->cq;

	for (uint32_t i = 0; i < cq->count; i++) {
		struct fab_cqe *e = &cq->ring[(cq->head + i) & (cq->cap - 1)];

		if (e->ep != ep || (int)e->kind == FAB_EV_NONE)
			continue;
		if (e->kind == FAB_EV_RECV || e->kind == FAB_EV_WRITE_IMM) {
			if (dom->ops->recv_release)
				dom->ops->recv_release(e);
			e->kind = (enum fab_ev_kind)FAB_EV_NONE;
			continue;
		}
		e->ep = NULL;
	}
}

void fab_cq_forget_listener(struct fab_domain *dom, struct fab_listener *l)
{
	struct fab_cq *cq = &dom->cq;

	for (uint32_t i = 0; i < cq->count; i++) {
		struct fab_cqe *e = &cq->ring[(cq->head + i) & (cq->cap - 1)];

		if (e->listener == l)
			e->listener = NULL;
	}
}
