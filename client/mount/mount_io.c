/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The I/O thread: the only thread that calls libweft (mount.h). It runs
 * libweft's own event loop (client/client_loop.h, docs/evloop.md) with one
 * more poller, the submission queue: each round it takes what the FUSE
 * workers queued, starts each request (metadata in mount_meta.c, data
 * here), and libweft's pollers then run the callbacks, which answer the
 * kernel. A worker that queues into an empty queue wakes the loop
 * (evl_wake); a loop that is spinning sees the queue without one. One
 * epoll set for everything: the fabric, the mon client, libweft's timers
 * and the queue's wake-ups.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/client_loop.h"
#include "client/mount/mount.h"
#include "common/log.h"

/* After unmount, how long in-flight ops may take before the cluster handle is closed anyway. */
#define MOUNT_IO_DRAIN_MS 60000

void mount_io_submit(struct mount *m, struct mount_req *r)
{
	bool wake;

	r->next = NULL;
	pthread_mutex_lock(&m->q_lock);
	wake = m->q_head == NULL; /* a non-empty queue has a wake-up pending already */
	if (m->q_tail)
		m->q_tail->next = r;
	else
		__atomic_store_n(&m->q_head, r, __ATOMIC_RELEASE); /* the poller peeks unlocked */
	m->q_tail = r;
	pthread_mutex_unlock(&m->q_lock);
	if (wake)
		evl_wake(client_loop(m->cl));
}

static const char *mount_io_kind_name(enum mount_req_kind kind)
{
	switch (kind) {
	case MOUNT_REQ_READ:
		return "read";
	case MOUNT_REQ_WRITE:
		return "write";
	case MOUNT_REQ_DISCARD:
		return "discard";
	default:
		return "flush";
	}
}

/*
 * libweft's codes above 4096 mean nothing to the kernel: EIO, after one log
 * line that says what the cluster said (a full OSD named, "may have been
 * applied").
 */
static int mount_io_errno(struct mount *m, struct mount_req *r, const struct weft_result *res)
{
	char why[256];

	m->io_errors++;
	if (m->io_errors <= 10 || m->io_errors % 1000 == 0)
		log_warn(
		    "mount", "%s/%s: %s at offset %llu, %zu bytes: %s (%llu I/O errors so far)",
		    m->pool_name, mount_meta_name(m, r->ino), mount_io_kind_name(r->kind),
		    (unsigned long long)r->off, r->size,
		    weft_result_describe(res, why, sizeof(why)), (unsigned long long)m->io_errors);
	return mount_meta_errno(res->rc);
}

/* Answer the kernel with rc's errno and free the request. */
static void mount_io_fail(struct mount *m, struct mount_req *r, int rc)
{
	struct weft_result res = {.rc = rc};

	fuse_reply_err(r->req, mount_io_errno(m, r, &res));
	mount_req_free(m, r);
}

static void mount_io_read_cb(const struct weft_result *res, void *arg)
{
	struct mount_req *r = arg;
	struct mount *m = r->m;
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(res->length < r->size ? res->length : r->size);

	m->inflight--;
	if (res->rc < 0) {
		fuse_reply_err(r->req, mount_io_errno(m, r, res));
	} else {
		/* a writev from the chunk the OSD wrote into; a splice with -o splice_write */
		bv.buf[0].mem = r->chunk->data;
		fuse_reply_data(r->req, &bv, 0);
	}
	mount_req_free(m, r); /* the kernel has its copy once the reply returns */
}

static void mount_io_write_cb(const struct weft_result *res, void *arg)
{
	struct mount_req *r = arg;
	struct mount *m = r->m;

	m->inflight--;
	if (res->rc < 0)
		fuse_reply_err(r->req, mount_io_errno(m, r, res));
	else
		fuse_reply_write(r->req, r->size);
	mount_req_free(m, r);
}

static void mount_io_status_cb(const struct weft_result *res, void *arg)
{
	struct mount_req *r = arg;
	struct mount *m = r->m;

	m->inflight--;
	fuse_reply_err(r->req, res->rc < 0 ? mount_io_errno(m, r, res) : 0);
	mount_req_free(m, r);
}

/*
 * A read or write: past the end is an empty read or ENOSPC (as on a block
 * device), across the end a short one.
 */
static void mount_io_data(struct mount *m, struct mount_req *r)
{
	struct weft_vol *vol = mount_meta_volume(m, r->fh);
	uint64_t vsize;
	int rc;

	if (vol == NULL) {
		rc = -EBADF;
		goto err;
	}
	vsize = weft_vol_size(vol);
	if (r->size == 0 || (r->off >= vsize && r->kind == MOUNT_REQ_READ)) {
		if (r->kind == MOUNT_REQ_READ)
			fuse_reply_buf(r->req, NULL, 0);
		else if (r->kind == MOUNT_REQ_WRITE)
			fuse_reply_write(r->req, 0);
		else
			fuse_reply_err(r->req, 0);
		mount_req_free(m, r);
		return;
	}
	if (r->off >= vsize) {
		rc = -ENOSPC;
		goto err;
	}
	if (r->size > vsize - r->off)
		r->size = (size_t)(vsize - r->off);
	if (r->kind == MOUNT_REQ_READ)
		rc = weft_vol_aio_read(vol, r->chunk->data, r->size, r->off, mount_io_read_cb, r);
	else if (r->kind == MOUNT_REQ_WRITE)
		rc = weft_vol_aio_write(vol, r->chunk->data, r->size, r->off, mount_io_write_cb, r);
	else
		rc = weft_vol_aio_discard(vol, r->off, r->size, mount_io_status_cb, r);
	if (rc != 0)
		goto err;
	m->inflight++;
	return;
err:
	mount_io_fail(m, r, rc);
}

static void mount_io_flush(struct mount *m, struct mount_req *r)
{
	struct weft_vol *vol = mount_meta_volume(m, r->fh);
	int rc;

	if (vol == NULL) {
		rc = -EBADF;
		goto err;
	}
	rc = weft_vol_aio_flush(vol, mount_io_status_cb, r);
	if (rc != 0)
		goto err;
	m->inflight++;
	return;
err:
	mount_io_fail(m, r, rc);
}

static void mount_io_open(struct mount *m, struct mount_req *r)
{
	uint64_t fh;
	int rc = mount_meta_open(m, r->ino, r->fi.flags, &fh);

	if (rc != 0) {
		fuse_reply_err(r->req, mount_meta_errno(rc));
	} else {
		r->fi.fh = fh;
		r->fi.direct_io = 1; /* no page cache: every read and write reaches the volume */
		r->fi.keep_cache = 0;
		if (fuse_reply_open(r->req, &r->fi) != 0)
			mount_meta_release(m, fh); /* the opener was interrupted */
	}
	mount_req_free(m, r);
}

static void mount_io_dispatch(struct mount *m, struct mount_req *r)
{
	r->m = m;
	switch (r->kind) {
	case MOUNT_REQ_READ:
	case MOUNT_REQ_WRITE:
	case MOUNT_REQ_DISCARD:
		mount_io_data(m, r);
		return;
	case MOUNT_REQ_FLUSH:
		mount_io_flush(m, r);
		return;
	case MOUNT_REQ_OPEN:
		mount_io_open(m, r);
		return;
	case MOUNT_REQ_RELEASE:
		mount_meta_release(m, r->fh);
		fuse_reply_err(r->req, 0);
		break;
	case MOUNT_REQ_LOOKUP:
		mount_meta_lookup(m, r);
		break;
	case MOUNT_REQ_GETATTR:
		mount_meta_getattr(m, r);
		break;
	case MOUNT_REQ_SETATTR:
		mount_meta_setattr(m, r);
		break;
	case MOUNT_REQ_OPENDIR:
		mount_meta_opendir(m, r);
		break;
	case MOUNT_REQ_READDIR:
		mount_meta_readdir(m, r);
		break;
	case MOUNT_REQ_RELEASEDIR:
		mount_meta_releasedir(m, r);
		break;
	case MOUNT_REQ_STATFS:
		mount_meta_statfs(m, r);
		break;
	}
	mount_req_free(m, r);
}

/*
 * Pop the whole queue at once: one lock round trip per batch, not per
 * request. The unlocked peek keeps an empty queue free for a spinning loop;
 * a push that lands after it finds the queue empty and wakes the loop.
 */
static struct mount_req *mount_io_take(struct mount *m, bool *stop_out)
{
	struct mount_req *head;

	if (__atomic_load_n(&m->q_head, __ATOMIC_ACQUIRE) == NULL &&
	    !__atomic_load_n(&m->q_stop, __ATOMIC_ACQUIRE)) {
		*stop_out = false;
		return NULL;
	}
	pthread_mutex_lock(&m->q_lock);
	head = m->q_head;
	__atomic_store_n(&m->q_head, NULL, __ATOMIC_RELAXED);
	m->q_tail = NULL;
	*stop_out = m->q_stop;
	pthread_mutex_unlock(&m->q_lock);
	return head;
}

static void mount_io_drain_cb(struct evl *evl, struct evl_timer *t, void *arg)
{
	struct mount *m = arg;

	log_warn("mount", "%u ops still in flight %u s after unmount: giving up", m->inflight,
		 MOUNT_IO_DRAIN_MS / 1000);
	evl_stop(evl);
}

/* The loop's poller: start what the workers queued; after unmount, stop once ops drained. */
static int mount_io_queue_poll(struct evl *evl, void *arg)
{
	struct mount *m = arg;
	struct mount_req *r;
	bool stop;
	int n = 0;

	/*
	 * A request's synchronous libweft calls (opening a volume) run the loop
	 * again, and with it this poller: the next requests wait for the outer
	 * round, so one request never starts inside another.
	 */
	if (m->dispatching)
		return 0;
	r = mount_io_take(m, &stop);
	m->dispatching = true;
	while (r != NULL) {
		struct mount_req *next = r->next;

		mount_io_dispatch(m, r);
		r = next;
		n++;
	}
	m->dispatching = false;
	if (stop && !m->draining) {
		m->draining = true;
		evl_timer_init(&m->drain_timer, mount_io_drain_cb, m);
		if (evl_timer_arm(evl, &m->drain_timer, MOUNT_IO_DRAIN_MS * 1000ull, 0) != 0)
			log_warn("mount", "no drain deadline after unmount: out of memory");
	}
	if (m->draining && m->inflight == 0)
		evl_stop(evl);
	return n;
}

static void *mount_io_main(void *arg)
{
	struct mount *m = arg;
	struct evl *evl = client_loop(m->cl);
	int rc;

	/* libweft's fabric poller failing is not the end of the mount: log, go on */
	while ((rc = evl_run(evl)) < 0) {
		struct timespec ts = {0, 1000000};

		log_warn("mount", "event loop: %s", weft_strerror(rc));
		nanosleep(&ts, NULL);
	}
	evl_timer_cancel(evl, &m->drain_timer);
	return NULL;
}

int mount_io_start(struct mount *m)
{
	sigset_t all, old;
	int rc;

	pthread_mutex_init(&m->q_lock, NULL);
	rc = evl_poller_add(client_loop(m->cl), mount_io_queue_poll, m, &m->q_poller);
	if (rc != 0) {
		log_error("mount", "I/O thread set-up: %s", strerror(-rc));
		goto err;
	}
	/* SIGTERM/SIGINT must reach a FUSE thread (libfuse's handler wakes the loop), not this one
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = -pthread_create(&m->io_thread, NULL, mount_io_main, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		log_error("mount", "I/O thread: %s", strerror(-rc));
		goto err_poller;
	}
	return 0;
err_poller:
	evl_poller_del(client_loop(m->cl), m->q_poller);
	m->q_poller = NULL;
err:
	pthread_mutex_destroy(&m->q_lock);
	return rc;
}

void mount_io_stop(struct mount *m)
{
	pthread_mutex_lock(&m->q_lock);
	__atomic_store_n(&m->q_stop, true, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&m->q_lock);
	evl_wake(client_loop(m->cl));
	pthread_join(m->io_thread, NULL);
	/* the thread is gone: this one owns the cluster now, and no queue is left to poll */
	evl_poller_del(client_loop(m->cl), m->q_poller);
	m->q_poller = NULL;
	mount_meta_close_all(m);
	pthread_mutex_destroy(&m->q_lock);
}
