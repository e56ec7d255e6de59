/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Idle buffers are kept in one LIFO list per capacity (capacities are len
 * rounded up to BUFCACHE_MIN, so the few sizes a workload uses get exact
 * reuse); the most recently used buffer is the warmest in the CPU cache.
 * Past the limit, a returned buffer is freed rather than cached.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "osd/store/bufcache.h"

struct bufcache_ent {
	struct bufcache_ent *next;
	size_t cap;
};

static pthread_mutex_t bufcache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct bufcache_ent *bufcache_head;
static size_t bufcache_idle;
static size_t bufcache_limit = 128u << 20;

static size_t bufcache_cap(size_t len)
{
	return (len + BUFCACHE_MIN - 1) / BUFCACHE_MIN * BUFCACHE_MIN;
}

void *bufcache_get(size_t len)
{
	struct bufcache_ent **pp, *e = NULL;
	size_t cap;
	void *p;

	if (len < BUFCACHE_MIN)
		return posix_memalign(&p, BUFCACHE_ALIGN, len ? len : 1) == 0 ? p : NULL;
	cap = bufcache_cap(len);
	pthread_mutex_lock(&bufcache_mu);
	for (pp = &bufcache_head; *pp; pp = &(*pp)->next) {
		if ((*pp)->cap == cap) {
			e = *pp;
			*pp = e->next;
			bufcache_idle -= cap;
			break;
		}
	}
	pthread_mutex_unlock(&bufcache_mu);
	if (e)
		return e;
	return posix_memalign(&p, BUFCACHE_ALIGN, cap) == 0 ? p : NULL;
}

void bufcache_put(void *p, size_t len)
{
	struct bufcache_ent *e = p;
	size_t cap;

	if (!p)
		return;
	if (len < BUFCACHE_MIN) {
		free(p);
		return;
	}
	cap = bufcache_cap(len);
	pthread_mutex_lock(&bufcache_mu);
	if (bufcache_idle + cap <= bufcache_limit) {
		e->cap = cap;
		e->next = bufcache_head;
		bufcache_head = e;
		bufcache_idle += cap;
		e = NULL;
	}
	pthread_mutex_unlock(&bufcache_mu);
	free(e);
}

static struct bufcache_ent *bufcache_take_over(size_t keep)
{
	struct bufcache_ent *out = NULL;

	while (bufcache_head && bufcache_idle > keep) {
		struct bufcache_ent *e = bufcache_head;

		bufcache_head = e->next;
		bufcache_idle -= e->cap;
		e->next = out;
		out = e;
	}
	return out;
}

static size_t bufcache_free_list(struct bufcache_ent *l)
{
	size_t n = 0;

	while (l) {
		struct bufcache_ent *e = l;

		l = e->next;
		n += e->cap;
		free(e);
	}
	return n;
}

void bufcache_set_limit(size_t bytes)
{
	struct bufcache_ent *l;

	pthread_mutex_lock(&bufcache_mu);
	bufcache_limit = bytes;
	l = bufcache_take_over(bytes);
	pthread_mutex_unlock(&bufcache_mu);
	bufcache_free_list(l);
}

size_t bufcache_trim(void)
{
	struct bufcache_ent *l;

	pthread_mutex_lock(&bufcache_mu);
	l = bufcache_take_over(0);
	pthread_mutex_unlock(&bufcache_mu);
	return bufcache_free_list(l);
}

size_t bufcache_idle_bytes(void)
{
	size_t n;

	pthread_mutex_lock(&bufcache_mu);
	n = bufcache_idle;
	pthread_mutex_unlock(&bufcache_mu);
	return n;
}
