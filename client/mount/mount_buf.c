/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Registered chunks for the FUSE data path (mount.h). libweft's large
 * registered buffers are taken once, on the thread that owns the cluster,
 * before any other thread runs, and cut into chunks: the first into 64 KiB
 * chunks (small I/O), the others into MOUNT_MAX_IO chunks. A chunk is a
 * slice of a registered buffer, so libweft uses it in place (docs/client.md:
 * any address inside its pools is zero-copy). Afterwards workers and the
 * I/O thread share the chunks through two mutex-protected free lists and
 * never call libweft from a worker.
 */
#include <errno.h>
#include <stdlib.h>

#include "client/mount/mount.h"
#include "common/log.h"

#define MOUNT_SMALL_CHUNK (64u << 10)
/* Large buffers left to libweft for its own bounce copies (the malloc'd fallbacks). */
#define MOUNT_LEAVE_LARGE 2u
#define MOUNT_MAX_BASES	  1024u

struct mount_chunk_list {
	struct mount_chunk *free;
	unsigned int total, nfree;
};

struct mount_bufs {
	pthread_mutex_t lock;
	struct mount_chunk_list small, large;
	struct mount_chunk *all;      /* every registered chunk, for destroy */
	void *bases[MOUNT_MAX_BASES]; /* what weft_buf_alloc returned */
	unsigned int nbases;
	uint64_t fallbacks;
};

static int mount_bufs_carve(struct mount_bufs *b, char *base, size_t len, size_t chunk,
			    struct mount_chunk_list *list)
{
	for (size_t off = 0; off + chunk <= len; off += chunk) {
		struct mount_chunk *c = calloc(1, sizeof(*c));

		if (c == NULL)
			return -ENOMEM;
		c->data = base + off;
		c->cap = chunk;
		c->registered = true;
		c->next = list->free;
		list->free = c;
		list->total++;
		list->nfree++;
		c->all_next = b->all;
		b->all = c;
	}
	return 0;
}

/* A large libweft buffer and its size: probe down from 8 MiB (E2BIG above osd_max_op_size). */
static void *mount_bufs_alloc_large(struct weft_cluster *cl, size_t *len_out)
{
	for (size_t len = 8u << 20; len >= MOUNT_MAX_IO; len >>= 1) {
		void *p = weft_buf_alloc(cl, len);

		if (p != NULL) {
			*len_out = len;
			return p;
		}
		if (errno != E2BIG)
			return NULL;
	}
	return NULL;
}

int mount_bufs_create(struct weft_cluster *cl, struct mount_bufs **bufs_out)
{
	struct mount_bufs *b = calloc(1, sizeof(*b));
	size_t len = 0, l;
	unsigned int keep;
	void *p;
	int rc = 0;

	if (b == NULL)
		return -ENOMEM;
	pthread_mutex_init(&b->lock, NULL);
	/* take every large buffer (all are the same size), then hand some back */
	while (b->nbases < MOUNT_MAX_BASES && (p = mount_bufs_alloc_large(cl, &l)) != NULL) {
		b->bases[b->nbases++] = p;
		len = l;
	}
	keep = b->nbases > MOUNT_LEAVE_LARGE ? b->nbases - MOUNT_LEAVE_LARGE : 0;
	while (b->nbases > keep)
		weft_buf_free(cl, b->bases[--b->nbases]);
	for (unsigned int i = 0; i < b->nbases && rc == 0; i++) {
		char *base = b->bases[i];

		if (i == 0 && b->nbases == 1) { /* one buffer: half small, half large */
			rc = mount_bufs_carve(b, base, len / 2, MOUNT_SMALL_CHUNK, &b->small);
			if (rc == 0)
				rc = mount_bufs_carve(b, base + len / 2, len / 2, MOUNT_MAX_IO,
						      &b->large);
		} else if (i == 0) {
			rc = mount_bufs_carve(b, base, len, MOUNT_SMALL_CHUNK, &b->small);
		} else {
			rc = mount_bufs_carve(b, base, len, MOUNT_MAX_IO, &b->large);
		}
	}
	if (rc != 0) {
		mount_bufs_destroy(b); /* the buffers go back with weft_disconnect */
		return rc;
	}
	if (b->large.total == 0)
		log_warn("mount",
			 "no registered buffer left for the mount (raise client_buffers "
			 "above %u): every I/O is copied through libweft's bounce buffers",
			 MOUNT_LEAVE_LARGE);
	else
		log_info("mount", "zero-copy chunks: %u x 64 KiB, %u x %u KiB", b->small.total,
			 b->large.total, MOUNT_MAX_IO >> 10);
	*bufs_out = b;
	return 0;
}

void mount_bufs_destroy(struct mount_bufs *b)
{
	if (b == NULL)
		return;
	while (b->all) {
		struct mount_chunk *c = b->all;

		b->all = c->all_next;
		free(c);
	}
	pthread_mutex_destroy(&b->lock);
	free(b);
}

struct mount_chunk *mount_buf_get(struct mount_bufs *b, size_t len)
{
	struct mount_chunk_list *list = len <= MOUNT_SMALL_CHUNK ? &b->small : &b->large;
	struct mount_chunk *c = NULL;

	if (len <= MOUNT_MAX_IO) {
		pthread_mutex_lock(&b->lock);
		c = list->free;
		if (c == NULL && list == &b->small) /* a large chunk beats a copy */
			c = (list = &b->large)->free;
		if (c != NULL) {
			list->free = c->next;
			list->nfree--;
		} else {
			b->fallbacks++;
		}
		pthread_mutex_unlock(&b->lock);
	}
	if (c != NULL)
		return c;
	c = malloc(sizeof(*c) + len);
	if (c == NULL)
		return NULL;
	c->data = c + 1;
	c->cap = len;
	c->registered = false;
	return c;
}

void mount_buf_put(struct mount_bufs *b, struct mount_chunk *c)
{
	struct mount_chunk_list *list;

	if (c == NULL)
		return;
	if (!c->registered) {
		free(c);
		return;
	}
	list = c->cap == MOUNT_SMALL_CHUNK ? &b->small : &b->large;
	pthread_mutex_lock(&b->lock);
	c->next = list->free;
	list->free = c;
	list->nfree++;
	pthread_mutex_unlock(&b->lock);
}

uint64_t mount_bufs_fallbacks(struct mount_bufs *b)
{
	uint64_t n;

	pthread_mutex_lock(&b->lock);
	n = b->fallbacks;
	pthread_mutex_unlock(&b->lock);
	return n;
}
