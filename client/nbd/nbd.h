/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nbdkit-weft-plugin internals (docs/vm.md): one Weft volume exported over
 * NBD by the real nbdkit server.
 *
 * Threads. nbdkit runs the plugin's data callbacks (pread, pwrite, flush,
 * trim, zero, extents) on its worker threads, in parallel (thread model
 * PARALLEL), and each callback must return only when its request is done.
 * libweft is single-threaded (include/weft/volume.h), so one I/O thread
 * owns the cluster handle and the one volume handle every connection
 * shares. A worker turns its request into a struct nbdw_req on its own
 * stack, pushes it on the submission queue (mutex + eventfd), and sleeps
 * on the request's semaphore; the I/O thread starts the volume op, and the
 * op's completion callback (run by weft_poll() on the I/O thread) posts
 * the semaphore. Nothing on the data path takes a lock but the queue's.
 *
 *   nbd_plugin.c  nbdkit callbacks: parameters, start-up, capabilities, data
 *   nbd_io.c      the I/O thread: queue, event loop, starting ops, completions
 */
#ifndef WEFT_CLIENT_NBD_NBD_H
#define WEFT_CLIENT_NBD_NBD_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>

#include "weft/volume.h"
#include "weft/weft.h"

enum nbdw_req_kind {
	NBDW_REQ_READ = 1,
	NBDW_REQ_WRITE,
	NBDW_REQ_FLUSH,
	NBDW_REQ_TRIM,		/* weft_vol_aio_discard: objects removed, range reads zeros */
	NBDW_REQ_ZERO,		/* weft_vol_aio_write_zeroes: zero op, objects stay */
	NBDW_REQ_ZERO_MAY_TRIM, /* the client allows a hole: discard */
	NBDW_REQ_EXTENTS,
};

struct nbdw;

struct nbdw_req {
	struct nbdw_req *next; /* submission queue */
	struct nbdw *nb;
	enum nbdw_req_kind kind;
	void *buf; /* READ destination, WRITE source (nbdkit's buffer) */
	uint64_t off, len;
	struct weft_vol_extent *ext; /* EXTENTS: room for max */
	unsigned int max;
	/* answer, written by the I/O thread before it posts done */
	int rc;
	uint64_t length; /* READ: bytes read; EXTENTS: extents written */
	sem_t done;
};

/* The plugin's one export: set up in .after_fork, torn down in .cleanup. */
struct nbdw {
	/* parameters (.config), read-only once serving */
	const char *conf;
	const char *name;
	char pool_name[128];
	char vol_name[WEFT_VOL_NAME_MAX + 1];
	bool readonly, shared, force;

	/* set in .after_fork before the I/O thread starts, then owned by it */
	struct weft_cluster *cl;
	uint32_t pool;
	struct weft_vol *vol;
	uint64_t size; /* the volume's size when opened: the export size */

	/* submission queue: nbdkit workers -> I/O thread */
	pthread_mutex_t q_lock;
	struct nbdw_req *q_head, *q_tail;
	int q_efd;
	bool q_stop;

	/* I/O thread */
	pthread_t io_thread;
	bool io_running;
	int io_epfd;
	unsigned int inflight;
	uint64_t io_errors; /* atomic: counted by the workers when they log */
};

/* nbd_io.c */
/* Start the I/O thread; nb->cl and nb->vol are its from then on. */
int nbdw_io_start(struct nbdw *nb);
/* Run r on the I/O thread and wait for its answer (any nbdkit worker). Returns r->rc. */
int nbdw_io_run(struct nbdw *nb, struct nbdw_req *r);
/* Let work in flight finish (bounded), join the thread; the caller owns cl and vol again. */
void nbdw_io_stop(struct nbdw *nb);

#endif
