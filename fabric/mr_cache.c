/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Registration cache for user buffers that do not come from a pool: the
 * first use of a buffer registers its pages, later uses find the region.
 * Bounded in entries and bytes; least recently used idle entries are
 * deregistered to make room, and entries in use are never evicted. The
 * owner must invalidate a range before freeing or unmapping it: there is
 * no memory hook, by design (hooks that intercept free/munmap are what
 * make other RDMA stacks fragile).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fabric/fab_backend.h"

struct fab_mr_cache_ent {
	uintptr_t base;
	size_t len;
	unsigned int access;
	struct fab_mr *mr;
	uint32_t refs;
	uint64_t used; /* tick of the last get, for LRU */
};

struct fab_mr_cache {
	struct fab_domain *dom;
	struct fab_mr_cache_ent *ents;
	uint32_t nents, max_ents;
	size_t bytes, max_bytes;
	uint64_t tick;
	struct fab_mr_cache_stats stats;
};

int fab_mr_cache_create(struct fab_domain *dom, size_t max_bytes, uint32_t max_entries,
			struct fab_mr_cache **cache_out)
{
	struct fab_mr_cache *c;

	if (max_bytes == 0 || max_entries == 0) {
		fab_log_err(dom, "mr cache: bounds must be > 0");
		return -EINVAL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ents = calloc(max_entries, sizeof(*c->ents));
	if (!c->ents) {
		free(c);
		return -ENOMEM;
	}
	c->dom = dom;
	c->max_ents = max_entries;
	c->max_bytes = max_bytes;
	*cache_out = c;
	return 0;
}

static void fab_mr_cache_drop(struct fab_mr_cache *c, uint32_t i)
{
	fab_mr_dereg(c->ents[i].mr);
	c->bytes -= c->ents[i].len;
	c->ents[i] = c->ents[--c->nents];
}

void fab_mr_cache_destroy(struct fab_mr_cache *c)
{
	if (!c)
		return;
	while (c->nents)
		fab_mr_cache_drop(c, c->nents - 1);
	free(c->ents);
	free(c);
}

/* Make room for len more bytes and one entry; -ENOBUFS if only busy entries stand in the way. */
static int fab_mr_cache_room(struct fab_mr_cache *c, size_t len)
{
	while (c->nents == c->max_ents || c->bytes + len > c->max_bytes) {
		uint32_t victim = UINT32_MAX;

		for (uint32_t i = 0; i < c->nents; i++)
			if (!c->ents[i].refs &&
			    (victim == UINT32_MAX || c->ents[i].used < c->ents[victim].used))
				victim = i;
		if (victim == UINT32_MAX)
			return -ENOBUFS;
		fab_mr_cache_drop(c, victim);
		c->stats.evictions++;
	}
	return 0;
}

int fab_mr_cache_get(struct fab_mr_cache *c, void *addr, size_t len, unsigned int access,
		     struct fab_mr **mr_out)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), a = (uintptr_t)addr, base, end;
	struct fab_mr_cache_ent *e;
	int rc;

	if (!addr || len == 0 || a + len < a) {
		fab_log_err(c->dom, "mr cache: bad range %p+%zu", addr, len);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < c->nents; i++) {
		e = &c->ents[i];
		if (a >= e->base && a + len <= e->base + e->len && (e->access & access) == access) {
			e->refs++;
			e->used = ++c->tick;
			c->stats.hits++;
			*mr_out = e->mr;
			return 0;
		}
	}
	/* Whole pages: neighbours in the same pages hit next time. */
	base = a & ~(page - 1);
	end = (a + len + page - 1) & ~(page - 1);
	if (end - base > c->max_bytes) {
		fab_log_err(c->dom, "mr cache: %zu bytes exceed the cache's %zu", len, c->max_bytes);
		return -E2BIG;
	}
	rc = fab_mr_cache_room(c, end - base);
	if (rc) {
		fab_log_warn(c->dom, "mr cache: full of regions in use (%u entries, %zu bytes)",
			     c->nents, c->bytes);
		return rc;
	}
	e = &c->ents[c->nents];
	rc = fab_mr_reg(c->dom, (void *)base, end - base, access, &e->mr);
	if (rc)
		return rc;
	e->base = base;
	e->len = end - base;
	e->access = access;
	e->refs = 1;
	e->used = ++c->tick;
	c->nents++;
	c->bytes += e->len;
	c->stats.misses++;
	*mr_out = e->mr;
	return 0;
}

void fab_mr_cache_put(struct fab_mr_cache *c, struct fab_mr *mr)
{
	for (uint32_t i = 0; i < c->nents; i++) {
		if (c->ents[i].mr == mr && c->ents[i].refs) {
			c->ents[i].refs--;
			return;
		}
	}
	fab_log_err(c->dom, "mr cache: put of a region the cache did not lend");
}

int fab_mr_cache_invalidate(struct fab_mr_cache *c, void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr;
	int busy = 0;

	for (uint32_t i = 0; i < c->nents;) {
		struct fab_mr_cache_ent *e = &c->ents[i];

		if (e->base < a + len && a < e->base + e->len) {
			if (e->refs) {
				busy = -EBUSY; /* the caller frees memory still in use: refuse */
				i++;
				continue;
			}
			fab_mr_cache_drop(c, i);
			c->stats.invalidations++;
			continue;
		}
		i++;
	}
	if (busy)
		fab_log_err(c->dom, "mr cache: invalidating %p+%zu while a region in it is in use",
			    addr, len);
	return busy;
}

void fab_mr_cache_stats(const struct fab_mr_cache *c, struct fab_mr_cache_stats *stats_out)
{
	*stats_out = c->stats;
	stats_out->entries = c->nents;
	stats_out->bytes = c->bytes;
}
