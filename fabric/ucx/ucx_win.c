/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UCX backend: scoped keys (fab_rkey_scope; docs/ucx.md "Scoped keys").
 *
 * A peer learns what a key reaches only from us, in the answer to its
 * RKEY_REQ on its own connection (ucx_am.c). For a scoped key that answer
 * carries the key's range and right, not the region's, and is refused on
 * any other connection, after the revoke and once the connection is gone.
 * A key that is not connection-long (FAB_SCOPE_LONG) is answered "for one
 * use": the peer asks again before its next op, so a revoked key meets our
 * refusal, not stale bounds in its cache.
 *
 * What the transport itself enforces is UCX's, not ours: the packed rkey
 * of the region goes with the answer, and UCX's tcp and shared-memory
 * transports write wherever a put names (docs/security.md). So this
 * protects against honest mistakes and stale keys, not against a hostile
 * peer speaking UCX itself.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

#include "common/clock.h"
#include "fabric/ucx/ucx.h"

struct ucx_win *ucx_win_lookup(struct ucx_domain *ud, uint64_t key)
{
	uint32_t idx = (uint32_t)key;

	if (!(key & UCX_KEY_WIN) || idx >= ud->nwins || ud->wins[idx].key != key)
		return NULL;
	return &ud->wins[idx];
}

static void ucx_win_free(struct ucx_domain *ud, struct ucx_win *w)
{
	w->key = 0;
	w->mr = NULL;
	w->ep = NULL;
	w->next_free = ud->win_free;
	ud->win_free = (uint32_t)(w - ud->wins) + 1;
}

void ucx_wins_drop(struct ucx_domain *ud, const struct ucx_ep *ep, const struct ucx_mr *mr)
{
	for (uint32_t i = 0; i < ud->nwins; i++) {
		struct ucx_win *w = &ud->wins[i];

		if (w->key != 0 && ((ep && w->ep == ep) || (mr && w->mr == mr)))
			ucx_win_free(ud, w);
	}
}

static uint32_t ucx_win_salt(struct ucx_domain *ud)
{
	uint64_t z;

	/* seeded once: a salt only has to differ from the slot's earlier keys */
	if (ud->win_rng == 0 &&
	    getrandom(&ud->win_rng, sizeof(ud->win_rng), 0) != sizeof(ud->win_rng))
		ud->win_rng = clock_now_ns();
	z = (ud->win_rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((z ^ (z >> 31)) >> 32) | 1;
}

int ucx_rkey_scope(struct fab_ep *fep, struct fab_mr *fmr, uint64_t addr, uint64_t len,
		   unsigned int access, uint64_t *key_out)
{
	struct ucx_domain *ud = ucx_dom(fep->dom);
	struct ucx_win *w;
	uint32_t idx;

	if (ud->win_free == 0) {
		uint32_t ncap = ud->nwins ? ud->nwins * 2 : 64;
		struct ucx_win *n;

		if (ncap > (1u << 30))
			return -ENOSPC;
		n = realloc(ud->wins, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		ud->wins = n;
		for (uint32_t i = ncap; i > ud->nwins; i--) {
			ud->wins[i - 1] = (struct ucx_win){.next_free = ud->win_free};
			ud->win_free = i;
		}
		ud->nwins = ncap;
	}
	idx = ud->win_free - 1;
	w = &ud->wins[idx];
	ud->win_free = w->next_free;
	*w = (struct ucx_win){((uint64_t)ucx_win_salt(ud) << 32 | UCX_KEY_WIN) | idx,
			      (struct ucx_mr *)fmr,
			      ucx_ep_of(fep),
			      addr,
			      len,
			      access & (FAB_ACCESS_REMOTE_READ | FAB_ACCESS_REMOTE_WRITE),
			      (access & FAB_SCOPE_LONG) != 0,
			      0};
	*key_out = w->key;
	return 0;
}

void ucx_rkey_revoke(struct fab_domain *dom, uint64_t key)
{
	struct ucx_domain *ud = ucx_dom(dom);
	struct ucx_win *w = ucx_win_lookup(ud, key);

	if (w == NULL)
		return;
	/* a connection-long key may sit in the peer's cache: tell it */
	if (w->long_lived && w->ep->state == UCX_EP_CONNECTED) {
		struct ucx_hdr h = {.type = UCX_M_REVOKE, .a = key};

		if (ucx_ep_queue_ctrl(w->ep, &h, NULL, 0) == 0)
			ucx_ep_pump(w->ep);
	}
	ucx_win_free(ud, w);
}
