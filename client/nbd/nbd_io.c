/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The I/O thread: the only thread that calls libweft once serving starts
 * (nbd.h). It sleeps in epoll on the submission queue's eventfd and
 * weft_fd(), starts every queued request as a volume op, and runs
 * weft_poll() until no callback is left; each op's callback stores the
 * answer and posts the waiting worker's semaphore. With ops in flight it
 * wakes at least every 5 ms, because libweft's resends and timeouts are
 * timers, not fds (include/weft/volume.h).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "client/nbd/nbd.h"
#include "common/clock.h"
#include "common/log.h"

#define NBDW_IO_TICK_MS	    5
#define NBDW_IO_IDLE_MS	    200
#define NBDW_IO_POLL_ROUNDS 64
/* At shutdown, how long ops in flight may take (each is bounded by client_op_timeout anyway). */
#define NBDW_IO_DRAIN_MS 60000

int nbdw_io_run(struct nbdw *nb, struct nbdw_req *r)
{
	uint64_t one = 1;
	bool wake;

	r->next = NULL;
	r->nb = nb;
	r->rc = 0;
	r->length = 0;
	if (sem_init(&r->done, 0, 0) != 0)
		return -errno;
	pthread_mutex_lock(&nb->q_lock);
	if (nb->q_stop) {
		pthread_mutex_unlock(&nb->q_lock);
		sem_destroy(&r->done);
		return -ESHUTDOWN;
	}
	wake = nb->q_head == NULL; /* a non-empty queue has a wake-up pending already */
	if (nb->q_tail)
		nb->q_tail->next = r;
	else
		nb->q_head = r;
	nb->q_tail = r;
	pthread_mutex_unlock(&nb->q_lock);
	if (wake && write(nb->q_efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_error("nbd", "eventfd write: %s", strerror(errno));
	while (sem_wait(&r->done) != 0 && errno == EINTR) {
	}
	sem_destroy(&r->done);
	return r->rc;
}

/* The I/O thread is done with r: after the post the worker may return and free its stack. */
static void nbdw_io_answer(struct nbdw_req *r, int rc, uint64_t length)
{
	r->rc = rc;
	r->length = length;
	sem_post(&r->done);
}

static void nbdw_io_cb(const struct weft_result *res, void *arg)
{
	struct nbdw_req *r = arg;

	r->nb->inflight--;
	nbdw_io_answer(r, res->rc, res->length);
}

static void nbdw_io_start_req(struct nbdw *nb, struct nbdw_req *r)
{
	struct weft_vol *vol = nb->vol;
	int rc;

	switch (r->kind) {
	case NBDW_REQ_READ:
		rc = weft_vol_aio_read(vol, r->buf, r->len, r->off, nbdw_io_cb, r);
		break;
	case NBDW_REQ_WRITE:
		rc = weft_vol_aio_write(vol, r->buf, r->len, r->off, nbdw_io_cb, r);
		break;
	case NBDW_REQ_FLUSH:
		rc = weft_vol_aio_flush(vol, nbdw_io_cb, r);
		break;
	case NBDW_REQ_TRIM:
	case NBDW_REQ_ZERO_MAY_TRIM:
		rc = weft_vol_aio_discard(vol, r->off, r->len, nbdw_io_cb, r);
		break;
	case NBDW_REQ_ZERO:
		rc = weft_vol_aio_write_zeroes(vol, r->off, r->len, nbdw_io_cb, r);
		break;
	case NBDW_REQ_EXTENTS:
		rc = weft_vol_aio_extents(vol, r->off, r->len, r->ext, r->max, nbdw_io_cb, r);
		break;
	default:
		rc = -EINVAL;
		break;
	}
	if (rc != 0) {
		nbdw_io_answer(r, rc, 0);
		return;
	}
	nb->inflight++;
}

/*
 * Pop the whole queue at once: one lock round trip per wake-up. The eventfd
 * is drained first (only when epoll saw it): a push that lands after the
 * pop has then written it again, so it is not lost.
 */
static struct nbdw_req *nbdw_io_take(struct nbdw *nb, bool woken, bool *stop_out)
{
	struct nbdw_req *head;
	uint64_t v;

	if (woken && read(nb->q_efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_error("nbd", "eventfd read: %s", strerror(errno));
	pthread_mutex_lock(&nb->q_lock);
	head = nb->q_head;
	nb->q_head = nb->q_tail = NULL;
	*stop_out = nb->q_stop;
	pthread_mutex_unlock(&nb->q_lock);
	return head;
}

static void *nbdw_io_main(void *arg)
{
	struct nbdw *nb = arg;
	struct epoll_event ev[4];
	uint64_t drain_end = 0;
	bool stop = false, woken = true;

	for (;;) {
		struct nbdw_req *r = nbdw_io_take(nb, woken, &stop);
		int n;

		/* FIFO: a flush is started after every write queued before it */
		while (r != NULL) {
			struct nbdw_req *next = r->next;

			nbdw_io_start_req(nb, r);
			r = next;
		}
		for (int i = 0; i < NBDW_IO_POLL_ROUNDS; i++) {
			n = weft_poll(nb->cl, 0);
			if (n < 0)
				log_warn("nbd", "weft_poll: %s", weft_strerror(n));
			if (n <= 0)
				break;
		}
		if (stop) {
			if (drain_end == 0)
				drain_end = clock_now_ms() + NBDW_IO_DRAIN_MS;
			if (nb->inflight == 0)
				break;
			if (clock_now_ms() >= drain_end) {
				log_warn("nbd",
					 "%u ops still in flight %u s after shutdown: giving up",
					 nb->inflight, NBDW_IO_DRAIN_MS / 1000);
				break;
			}
		}
		n = epoll_wait(nb->io_epfd, ev, 4,
			       nb->inflight ? NBDW_IO_TICK_MS : NBDW_IO_IDLE_MS);
		woken = false;
		for (int i = 0; i < n; i++)
			woken |= ev[i].data.fd == nb->q_efd;
	}
	return NULL;
}

static int nbdw_io_watch(int epfd, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

int nbdw_io_start(struct nbdw *nb)
{
	sigset_t all, old;
	int rc;

	pthread_mutex_init(&nb->q_lock, NULL);
	nb->q_efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	nb->io_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (nb->q_efd < 0 || nb->io_epfd < 0 || nbdw_io_watch(nb->io_epfd, nb->q_efd) != 0 ||
	    nbdw_io_watch(nb->io_epfd, weft_fd(nb->cl)) != 0) {
		rc = -errno;
		log_error("nbd", "I/O thread set-up: %s", strerror(errno));
		goto err;
	}
	/* nbdkit's signal handling (SIGTERM, SIGINT: shut down) stays with its own threads */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = -pthread_create(&nb->io_thread, NULL, nbdw_io_main, nb);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		log_error("nbd", "I/O thread: %s", strerror(-rc));
		goto err;
	}
	nb->io_running = true;
	return 0;
err:
	if (nb->q_efd >= 0)
		close(nb->q_efd);
	if (nb->io_epfd >= 0)
		close(nb->io_epfd);
	nb->q_efd = nb->io_epfd = -1;
	pthread_mutex_destroy(&nb->q_lock);
	return rc;
}

void nbdw_io_stop(struct nbdw *nb)
{
	uint64_t one = 1;

	if (!nb->io_running)
		return;
	pthread_mutex_lock(&nb->q_lock);
	nb->q_stop = true;
	pthread_mutex_unlock(&nb->q_lock);
	if (write(nb->q_efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_error("nbd", "eventfd write: %s", strerror(errno));
	pthread_join(nb->io_thread, NULL);
	nb->io_running = false;
	close(nb->q_efd);
	close(nb->io_epfd);
	nb->q_efd = nb->io_epfd = -1;
	pthread_mutex_destroy(&nb->q_lock);
}
