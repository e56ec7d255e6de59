/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Registered buffer pools. One mmap, one registration, a stack of free
 * buffers: get and put are O(1) and never touch the kernel or the NIC.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fabric/fab_backend.h"

#define FAB_HUGEPAGE (2u * 1024 * 1024)

struct fab_pool {
	struct fab_domain *dom;
	struct fab_mr *mr;
	uint8_t *base;
	size_t map_len;
	size_t buf_size;
	uint32_t count;
	uint32_t nfree;
	uint32_t *free; /* stack of free buffer indexes */
	uint8_t *used;	/* one byte per buffer: catches double puts */
	uint32_t high_water;
	uint64_t get_failures;
	bool hugepages;
};

static size_t fab_pool_round(size_t size)
{
	size_t a = size >= 4096 ? 4096 : 64;

	return (size + a - 1) & ~(a - 1);
}

/* Fault every page in now (one madvise; a write per page where the kernel lacks it). */
static void fab_pool_populate(uint8_t *base, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	if (madvise(base, len, MADV_POPULATE_WRITE) == 0)
		return;
#endif
	for (size_t off = 0; off < len; off += 4096)
		((volatile uint8_t *)base)[off] = 0;
}

int fab_pool_create(struct fab_domain *dom, size_t buf_size, uint32_t count, unsigned int access,
		    unsigned int flags, struct fab_pool **pool_out)
{
	struct fab_pool *p;
	size_t total;
	int rc;

	/* An sge length is 32 bits: no buffer may be 4 GiB or more. */
	if (buf_size == 0 || count == 0 || buf_size > UINT32_MAX - 4095 ||
	    fab_pool_round(buf_size) > SIZE_MAX / count) {
		fab_log_err(dom, "pool: bad geometry %zu x %u", buf_size, count);
		return -EINVAL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->dom = dom;
	p->buf_size = fab_pool_round(buf_size);
	p->count = count;
	total = p->buf_size * count;
	p->free = malloc(count * sizeof(*p->free));
	p->used = calloc(count, 1);
	if (!p->free || !p->used) {
		rc = -ENOMEM;
		goto err_free;
	}
	if (flags & FAB_POOL_HUGEPAGE) {
		p->map_len = (total + FAB_HUGEPAGE - 1) & ~((size_t)FAB_HUGEPAGE - 1);
		p->base = mmap(NULL, p->map_len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (p->base == MAP_FAILED) {
			fab_log_info(dom, "pool: no hugepages for %zu bytes (%s); using 4 KiB pages "
				     "(set vm.nr_hugepages to use them)", p->map_len, strerror(errno));
			p->base = NULL;
		} else {
			p->hugepages = true;
		}
	}
	if (!p->base) {
		p->map_len = total;
		p->base = mmap(NULL, p->map_len, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p->base == MAP_FAILED) {
			rc = -errno;
			fab_log_err(dom, "pool: mmap %zu bytes: %s", p->map_len, strerror(errno));
			p->base = NULL;
			goto err_free;
		}
	}
	if (flags & FAB_POOL_POPULATE)
		fab_pool_populate(p->base, p->map_len);
	rc = fab_mr_reg(dom, p->base, total, access, &p->mr);
	if (rc) {
		fab_log_err(dom, "pool: registering %zu bytes failed: %s", total, strerror(-rc));
		goto err_unmap;
	}
	for (uint32_t i = 0; i < count; i++)
		p->free[i] = count - 1 - i;
	p->nfree = count;
	*pool_out = p;
	return 0;
err_unmap:
	munmap(p->base, p->map_len);
err_free:
	free(p->free);
	free(p->used);
	free(p);
	return rc;
}

void fab_pool_destroy(struct fab_pool *p)
{
	if (!p)
		return;
	fab_mr_dereg(p->mr);
	munmap(p->base, p->map_len);
	free(p->free);
	free(p->used);
	free(p);
}

void *fab_pool_get(struct fab_pool *p, struct fab_sge *sge_out)
{
	uint32_t idx, in_use;
	void *buf;

	if (p->nfree == 0) {
		p->get_failures++;
		errno = ENOBUFS;
		return NULL;
	}
	idx = p->free[--p->nfree];
	p->used[idx] = 1;
	in_use = p->count - p->nfree;
	if (in_use > p->high_water)
		p->high_water = in_use;
	buf = p->base + (size_t)idx * p->buf_size;
	if (sge_out) {
		sge_out->addr = buf;
		sge_out->len = (uint32_t)p->buf_size;
		sge_out->mr = p->mr;
	}
	return buf;
}

void fab_pool_put(struct fab_pool *p, void *buf)
{
	uintptr_t off = (uintptr_t)buf - (uintptr_t)p->base;
	uint32_t idx;

	if ((uintptr_t)buf < (uintptr_t)p->base || off % p->buf_size ||
	    off / p->buf_size >= p->count) {
		fab_log_err(p->dom, "pool: %p is not a buffer of this pool", buf);
		return;
	}
	idx = (uint32_t)(off / p->buf_size);
	if (!p->used[idx]) {
		fab_log_err(p->dom, "pool: buffer %p returned twice", buf);
		return;
	}
	p->used[idx] = 0;
	p->free[p->nfree++] = idx;
}

struct fab_mr *fab_pool_mr(const struct fab_pool *p)
{
	return p->mr;
}

void fab_pool_stats(const struct fab_pool *p, struct fab_pool_stats *s)
{
	s->count = p->count;
	s->in_use = p->count - p->nfree;
	s->high_water = p->high_water;
	s->get_failures = p->get_failures;
	s->buf_size = p->buf_size;
	s->bytes = p->buf_size * p->count;
	s->hugepages = p->hugepages;
}
