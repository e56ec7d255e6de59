/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A helper thread for the blocking calls the reactor must not make:
 * fdatasync, pwritev2(RWF_DSYNC), RocksDB's WAL sync (docs/store.md,
 * "Threading"). Message passing only: the owner pushes a job on a
 * single-producer single-consumer ring and wakes the thread with an
 * eventfd; the thread runs the job's function, pushes the job on a second
 * ring and signals the store's eventfd, the one the OSD reactor already
 * sleeps on for io_uring completions. No lock, and nothing the job touches
 * is shared with the reactor until it comes back.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/log.h"
#include "osd/store/store_int.h"

#define STORE_JOB_STOP ((struct store_job *)(uintptr_t)1)

static bool store_jq_push(struct store_jq *q, struct store_job *job)
{
	uint32_t tail = atomic_load_explicit(&q->tail, memory_order_relaxed);

	if (tail - atomic_load_explicit(&q->head, memory_order_acquire) == STORE_JQ_SLOTS)
		return false;
	q->slot[tail % STORE_JQ_SLOTS] = job;
	atomic_store_explicit(&q->tail, tail + 1, memory_order_release);
	return true;
}

static struct store_job *store_jq_pop(struct store_jq *q)
{
	uint32_t head = atomic_load_explicit(&q->head, memory_order_relaxed);
	struct store_job *job;

	if (head == atomic_load_explicit(&q->tail, memory_order_acquire))
		return NULL;
	job = q->slot[head % STORE_JQ_SLOTS];
	atomic_store_explicit(&q->head, head + 1, memory_order_release);
	return job;
}

static void *store_worker_main(void *arg)
{
	struct store_worker *w = arg;
	uint64_t one = 1, v;

	for (;;) {
		struct store_job *job = store_jq_pop(&w->req);

		if (job == STORE_JOB_STOP)
			return NULL;
		if (job) {
			job->rc = job->fn(job);
			/* cannot fail: the owner never has more than STORE_JQ_SLOTS jobs out */
			while (!store_jq_push(&w->done, job))
				sched_yield();
			if (write(w->done_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
				log_warn("store", "%s: eventfd write: %s", w->name,
					 strerror(errno));
			continue;
		}
		/* A push after the empty pop above left the counter non-zero: no lost wake-up. */
		if (read(w->wake_fd, &v, sizeof(v)) < 0 && errno != EINTR)
			log_warn("store", "%s: eventfd read: %s", w->name, strerror(errno));
	}
}

int store_worker_start(struct store_worker *w, const char *name, int done_fd)
{
	sigset_t all, old;
	int rc;

	memset(w, 0, sizeof(*w));
	snprintf(w->name, sizeof(w->name), "%s", name);
	w->done_fd = done_fd;
	w->wake_fd = eventfd(0, EFD_CLOEXEC);
	if (w->wake_fd < 0)
		return -errno;
	/* Signals are the OSD main thread's business: the helper blocks them all. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = -pthread_create(&w->th, NULL, store_worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		close(w->wake_fd);
		w->wake_fd = -1;
		return rc;
	}
	pthread_setname_np(w->th, w->name);
	w->running = true;
	return 0;
}

int store_worker_submit(struct store_worker *w, struct store_job *job)
{
	uint64_t one = 1;

	if (!w->running || w->outstanding >= STORE_JQ_SLOTS || !store_jq_push(&w->req, job))
		return -EBUSY;
	/*
	 * Pushed: the job runs and is reaped whatever happens next, so the
	 * caller must count it as issued and this returns 0. The wake-up can
	 * only fail on a counter overflow (EAGAIN), and then the counter is not
	 * zero: the thread wakes anyway.
	 */
	w->outstanding++;
	if (write(w->wake_fd, &one, sizeof(one)) < 0)
		log_warn("store", "%s: eventfd write: %s", w->name, strerror(errno));
	return 0;
}

struct store_job *store_worker_reap(struct store_worker *w)
{
	struct store_job *job;

	if (!w->running)
		return NULL;
	job = store_jq_pop(&w->done);
	if (job)
		w->outstanding--;
	return job;
}

void store_worker_stop(struct store_worker *w)
{
	uint64_t one = 1;

	if (!w->running)
		return;
	/* The owner reaped every job before (store_umount); the stop mark is the last one. */
	while (!store_jq_push(&w->req, STORE_JOB_STOP))
		sched_yield();
	if (write(w->wake_fd, &one, sizeof(one)) < 0)
		log_warn("store", "%s: eventfd write: %s", w->name, strerror(errno));
	pthread_join(w->th, NULL);
	close(w->wake_fd);
	w->wake_fd = -1;
	w->running = false;
}
