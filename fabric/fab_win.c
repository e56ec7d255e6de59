/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Scoped keys kept in software (fab_backend.h): the table the TCP backend
 * checks every one-sided access against, and the one the UCX backend
 * answers its peers' key requests from. A key is a random 31-bit salt, bit
 * 63 and the slot: a revoked key's slot gets a new salt, so a stale key
 * never names the window that reuses the slot.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

#include "common/clock.h"
#include "fabric/fab_backend.h"

uint32_t fab_salt(uint64_t *rng)
{
	uint64_t z;

	/*
	 * A generator seeded once, not a syscall per key: a salt only has to
	 * differ from its slot's earlier keys, and a scoped key is good on its
	 * own connection only, so predicting the next one gains a peer nothing.
	 */
	if (*rng == 0 && getrandom(rng, sizeof(*rng), 0) != sizeof(*rng))
		*rng = clock_now_ns();
	z = (*rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)((z ^ (z >> 31)) >> 32) | 1;
}

int fab_win_add(struct fab_wintab *t, struct fab_ep *ep, struct fab_mr *mr, uint64_t addr,
		uint64_t len, unsigned int access, uint64_t *key_out)
{
	struct fab_win *w;
	uint32_t idx;

	if (t->free == 0) {
		uint32_t ncap = t->n ? t->n * 2 : 64;
		struct fab_win *nw;

		if (ncap > (1u << 30))
			return -ENOSPC;
		nw = realloc(t->w, ncap * sizeof(*nw));
		if (!nw)
			return -ENOMEM;
		t->w = nw;
		for (uint32_t i = ncap; i > t->n; i--) {
			t->w[i - 1] = (struct fab_win){.next_free = t->free};
			t->free = i;
		}
		t->n = ncap;
	}
	idx = t->free - 1;
	w = &t->w[idx];
	t->free = w->next_free;
	*w = (struct fab_win){.key = ((uint64_t)(fab_salt(&t->rng) & 0x7fffffffu) << 32) |
				     FAB_KEY_WIN | idx,
			      .mr = mr,
			      .ep = ep,
			      .addr = addr,
			      .len = len,
			      .access = access & (FAB_ACCESS_REMOTE_READ | FAB_ACCESS_REMOTE_WRITE),
			      .long_lived = (access & FAB_SCOPE_LONG) != 0};
	*key_out = w->key;
	return 0;
}

struct fab_win *fab_win_lookup(struct fab_wintab *t, uint64_t key)
{
	uint32_t idx = (uint32_t)key;

	if (!(key & FAB_KEY_WIN) || idx >= t->n || t->w[idx].key != key)
		return NULL;
	return &t->w[idx];
}

void fab_win_free(struct fab_wintab *t, struct fab_win *w)
{
	*w = (struct fab_win){.next_free = t->free};
	t->free = (uint32_t)(w - t->w) + 1;
}

void fab_win_drop(struct fab_wintab *t, const struct fab_ep *ep, const struct fab_mr *mr)
{
	for (uint32_t i = 0; i < t->n; i++) {
		struct fab_win *w = &t->w[i];

		if (w->key != 0 && ((ep && w->ep == ep) || (mr && w->mr == mr)))
			fab_win_free(t, w);
	}
}

void fab_wintab_fini(struct fab_wintab *t)
{
	free(t->w);
	*t = (struct fab_wintab){0};
}
