/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The event loop (evloop.h, docs/evloop.md): one epoll set, a timer heap
 * behind one timerfd in that set, pollers, spin then sleep.
 *
 * Re-entrancy: a callback may run the loop again (libweft's synchronous
 * calls do, from inside an op's callback). Each level keeps its own epoll
 * results on its stack; fd handles and pollers removed meanwhile are only
 * marked dead and freed when the outermost level returns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "evloop/evloop.h"

#define EVL_EPOLL_BATCH 32
#define EVL_HEAP_MIN	16u

struct evl_fd {
	int fd;
	unsigned int events;
	evl_fd_cb cb;
	void *arg;
	bool dead;
	struct evl_fd *next; /* evl->fds, or evl->fd_zombies once dead */
};

struct evl_poller {
	evl_poller_cb cb;
	void *arg;
	bool dead;
	struct evl_poller *next;
};

struct evl {
	char name[48];
	int epfd;
	int wakefd; /* evl_wake(): an eventfd */
	int tfd;    /* a timerfd armed no later than the earliest timer */
	struct evl_fd *wake_h, *tfd_h;
	struct evl_fd *fds, *fd_zombies;
	struct evl_poller *pollers, *pollers_tail;
	bool pollers_dead;  /* some poller is marked dead: unlink at depth 0 */
	unsigned int depth; /* nested evl_run_once calls */
	/* timers: binary min-heap on (due_ns, seq) */
	struct evl_timer **heap;
	uint32_t heap_len, heap_cap;
	uint64_t seq;
	uint64_t tfd_due_ns; /* what tfd is set for; 0: not set (or expired and read) */
	/* spin then sleep */
	uint64_t busy_poll_ns;
	uint64_t last_busy_ns;	   /* end of the last round that found work */
	uint64_t last_fd_check_ns; /* last epoll_wait, blocking or not */
	bool stop;
	evl_clock_fn clock;
	void *clock_arg;
	struct evl_stats st;
};

static uint64_t evl_clock_mono(void *arg)
{
	return clock_now_ns();
}

uint64_t evl_now_ns(const struct evl *evl)
{
	return evl->clock(evl->clock_arg);
}

void evl_opts_init(struct evl_opts *opts)
{
	memset(opts, 0, sizeof(*opts)); /* busy_poll_us 0: sleep at once, as ms_busy_poll's default */
}

/* ------------------------------------------------------------------ timers */

static bool evl_timer_before(const struct evl_timer *a, const struct evl_timer *b)
{
	return a->due_ns < b->due_ns || (a->due_ns == b->due_ns && a->seq < b->seq);
}

static void evl_heap_set(struct evl *evl, uint32_t i, struct evl_timer *t)
{
	evl->heap[i] = t;
	t->slot = i + 1;
}

static void evl_heap_up(struct evl *evl, uint32_t i)
{
	struct evl_timer *t = evl->heap[i];

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!evl_timer_before(t, evl->heap[parent]))
			break;
		evl_heap_set(evl, i, evl->heap[parent]);
		i = parent;
	}
	evl_heap_set(evl, i, t);
}

static void evl_heap_down(struct evl *evl, uint32_t i)
{
	struct evl_timer *t = evl->heap[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= evl->heap_len)
			break;
		if (c + 1 < evl->heap_len && evl_timer_before(evl->heap[c + 1], evl->heap[c]))
			c++;
		if (!evl_timer_before(evl->heap[c], t))
			break;
		evl_heap_set(evl, i, evl->heap[c]);
		i = c;
	}
	evl_heap_set(evl, i, t);
}

static void evl_heap_remove(struct evl *evl, struct evl_timer *t)
{
	uint32_t i = t->slot - 1;
	struct evl_timer *last = evl->heap[--evl->heap_len];

	t->slot = 0;
	if (last == t)
		return;
	evl_heap_set(evl, i, last);
	if (i > 0 && evl_timer_before(last, evl->heap[(i - 1) / 2]))
		evl_heap_up(evl, i);
	else
		evl_heap_down(evl, i);
}

static int evl_heap_insert(struct evl *evl, struct evl_timer *t)
{
	if (evl->heap_len == evl->heap_cap) {
		uint32_t cap = evl->heap_cap ? evl->heap_cap * 2 : EVL_HEAP_MIN;
		struct evl_timer **h = realloc(evl->heap, (size_t)cap * sizeof(*h));

		if (h == NULL)
			return -ENOMEM;
		evl->heap = h;
		evl->heap_cap = cap;
	}
	evl->heap[evl->heap_len] = t;
	evl->heap_len++;
	evl_heap_up(evl, evl->heap_len - 1);
	return 0;
}

/* Set the timerfd to due (relative to the loop's clock, so a fake clock works too). */
static void evl_tfd_set(struct evl *evl, uint64_t due_ns)
{
	uint64_t now = evl_now_ns(evl);
	uint64_t d = due_ns > now ? due_ns - now : 1; /* 0 would disarm it */
	struct itimerspec its = {.it_value = {(time_t)(d / 1000000000u), (long)(d % 1000000000u)}};

	if (timerfd_settime(evl->tfd, 0, &its, NULL) != 0) {
		/* cannot happen with a valid fd and value; the loop then wakes by its fds only */
		log_error("evloop", "%s: timerfd_settime: %s", evl->name, strerror(errno));
		return;
	}
	evl->tfd_due_ns = due_ns;
}

/* The timerfd fires no later than the earliest timer (it may fire earlier: harmless). */
static void evl_tfd_sync(struct evl *evl)
{
	if (evl->heap_len > 0 && evl->tfd_due_ns == 0)
		evl_tfd_set(evl, evl->heap[0]->due_ns);
}

void evl_timer_init(struct evl_timer *t, evl_timer_cb cb, void *arg)
{
	memset(t, 0, sizeof(*t));
	t->cb = cb;
	t->arg = arg;
}

static int evl_timer_insert(struct evl *evl, struct evl_timer *t, uint64_t due_ns)
{
	int rc;

	if (t->slot != 0)
		evl_heap_remove(evl, t);
	t->due_ns = due_ns;
	t->seq = evl->seq++;
	rc = evl_heap_insert(evl, t);
	if (rc != 0)
		return rc;
	/* lazily: only a new earliest timer before what the timerfd is set for costs a syscall */
	if (t->slot == 1 && (evl->tfd_due_ns == 0 || due_ns < evl->tfd_due_ns))
		evl_tfd_set(evl, due_ns);
	return 0;
}

int evl_timer_arm_at(struct evl *evl, struct evl_timer *t, uint64_t due_ns)
{
	t->period_ns = 0;
	return evl_timer_insert(evl, t, due_ns);
}

int evl_timer_arm(struct evl *evl, struct evl_timer *t, uint64_t delay_us, uint64_t period_us)
{
	t->period_ns = period_us * 1000u;
	return evl_timer_insert(evl, t, evl_now_ns(evl) + delay_us * 1000u);
}

void evl_timer_cancel(struct evl *evl, struct evl_timer *t)
{
	if (t->slot != 0)
		evl_heap_remove(evl, t);
}

/*
 * Fire what is due at now. Only timers armed before this call: one that
 * re-arms itself with no delay waits for the next round instead of spinning
 * here forever.
 */
static int evl_timers_run(struct evl *evl, uint64_t now)
{
	uint64_t limit = evl->seq;
	int n = 0;

	while (evl->heap_len > 0) {
		struct evl_timer *t = evl->heap[0];

		if (t->due_ns > now || t->seq >= limit)
			break;
		evl_heap_remove(evl, t);
		if (t->period_ns != 0) {
			/* from the due time, not from now: no drift; missed rounds skipped */
			uint64_t next = t->due_ns + t->period_ns;

			if (next <= now)
				next += ((now - next) / t->period_ns + 1) * t->period_ns;
			t->due_ns = next;
			t->seq = evl->seq++;
			if (evl_heap_insert(evl, t) != 0)
				log_error("evloop", "%s: out of memory re-arming a periodic timer",
					  evl->name);
		}
		evl->st.timers_fired++;
		n++;
		t->cb(evl, t, t->arg); /* may cancel or re-arm t or any other */
	}
	return n;
}

/* -------------------------------------------------------------------- fds */

static uint32_t evl_epoll_events(unsigned int events)
{
	return (events & EVL_READ ? EPOLLIN : 0u) | (events & EVL_WRITE ? EPOLLOUT : 0u);
}

int evl_fd_add(struct evl *evl, int fd, unsigned int events, evl_fd_cb cb, void *arg,
	       struct evl_fd **fd_out)
{
	struct epoll_event ev = {.events = evl_epoll_events(events)};
	struct evl_fd *h;

	if (fd < 0)
		return -EBADF;
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return -ENOMEM;
	h->fd = fd;
	h->events = events;
	h->cb = cb;
	h->arg = arg;
	ev.data.ptr = h;
	if (epoll_ctl(evl->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
		int rc = -errno;

		log_error("evloop", "%s: watching fd %d: %s", evl->name, fd, strerror(errno));
		free(h);
		return rc;
	}
	h->next = evl->fds;
	evl->fds = h;
	if (fd_out != NULL)
		*fd_out = h;
	return 0;
}

int evl_fd_mod(struct evl *evl, struct evl_fd *h, unsigned int events)
{
	struct epoll_event ev = {.events = evl_epoll_events(events), .data.ptr = h};

	if (h->events == events)
		return 0;
	if (epoll_ctl(evl->epfd, EPOLL_CTL_MOD, h->fd, &ev) != 0)
		return -errno;
	h->events = events;
	return 0;
}

void evl_fd_del(struct evl *evl, struct evl_fd *h)
{
	if (h == NULL || h->dead)
		return;
	/* the owner may close the fd right after: take it out of the set now */
	epoll_ctl(evl->epfd, EPOLL_CTL_DEL, h->fd, NULL);
	h->dead = true;
	for (struct evl_fd **pp = &evl->fds; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == h) {
			*pp = h->next;
			break;
		}
	}
	/* epoll results of an outer level may still name it: freed at depth 0 */
	h->next = evl->fd_zombies;
	evl->fd_zombies = h;
	if (evl->depth == 0) {
		evl->fd_zombies = h->next;
		free(h);
	}
}

static int evl_fds_dispatch(struct evl *evl, const struct epoll_event *evs, int n)
{
	int ran = 0;

	for (int i = 0; i < n; i++) {
		struct evl_fd *h = evs[i].data.ptr;
		unsigned int e = 0;

		if (h->dead || h->cb == NULL)
			continue;
		/* the loop's own plumbing (wake-ups, the timerfd) is not work */
		if (h != evl->wake_h && h != evl->tfd_h) {
			evl->st.fd_events++;
			ran++;
		}
		if (evs[i].events & EPOLLIN)
			e |= EVL_READ;
		if (evs[i].events & EPOLLOUT)
			e |= EVL_WRITE;
		if (evs[i].events & (EPOLLERR | EPOLLHUP))
			e |= EVL_ERROR;
		h->cb(evl, h->fd, e, h->arg);
	}
	return ran;
}

/* epoll_wait for at most timeout_ms, then the callbacks: their count or -errno. */
static int evl_fds_wait(struct evl *evl, int timeout_ms)
{
	struct epoll_event evs[EVL_EPOLL_BATCH];
	uint64_t t0 = 0;
	int n;

	if (timeout_ms != 0) {
		evl_tfd_sync(evl);
		evl->st.sleeps++;
		t0 = evl_now_ns(evl);
	} else {
		evl->st.fd_checks++;
	}
	n = epoll_wait(evl->epfd, evs, EVL_EPOLL_BATCH, timeout_ms);
	evl->last_fd_check_ns = evl_now_ns(evl);
	if (timeout_ms != 0)
		evl->st.sleep_ns += evl->last_fd_check_ns - t0;
	if (n < 0) {
		if (errno == EINTR)
			return 0; /* a signal: the round after it looks at its flag */
		log_error("evloop", "%s: epoll_wait: %s", evl->name, strerror(errno));
		return -errno;
	}
	return evl_fds_dispatch(evl, evs, n);
}

static void evl_drain_cb(struct evl *evl, int fd, unsigned int events, void *arg)
{
	uint64_t v;

	/* EAGAIN: another level drained it first */
	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN && errno != EINTR)
		log_warn("evloop", "%s: read of fd %d: %s", evl->name, fd, strerror(errno));
}

static void evl_tfd_cb(struct evl *evl, int fd, unsigned int events, void *arg)
{
	evl_drain_cb(evl, fd, events, arg);
	evl->tfd_due_ns = 0; /* expired: set again for the earliest timer once they ran */
}

void evl_wake(struct evl *evl)
{
	uint64_t one = 1;
	int saved = errno; /* async-signal-safe: a handler must not change errno */

	/* a full counter is already a wake-up */
	if (write(evl->wakefd, &one, sizeof(one)) < 0) {
	}
	errno = saved;
}

/* ---------------------------------------------------------------- pollers */

int evl_poller_add(struct evl *evl, evl_poller_cb cb, void *arg, struct evl_poller **p_out)
{
	struct evl_poller *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return -ENOMEM;
	p->cb = cb;
	p->arg = arg;
	if (evl->pollers_tail != NULL)
		evl->pollers_tail->next = p;
	else
		evl->pollers = p;
	evl->pollers_tail = p;
	if (p_out != NULL)
		*p_out = p;
	return 0;
}

static void evl_pollers_reap(struct evl *evl)
{
	struct evl_poller **pp = &evl->pollers;

	evl->pollers_tail = NULL;
	while (*pp != NULL) {
		struct evl_poller *p = *pp;

		if (p->dead) {
			*pp = p->next;
			free(p);
			continue;
		}
		evl->pollers_tail = p;
		pp = &p->next;
	}
	evl->pollers_dead = false;
}

void evl_poller_del(struct evl *evl, struct evl_poller *p)
{
	if (p == NULL)
		return;
	p->dead = true;
	evl->pollers_dead = true;
	if (evl->depth == 0)
		evl_pollers_reap(evl);
}

/* ------------------------------------------------------------------- loop */

/*
 * One round: due timers, ready fds (when check_fds, at most every
 * EVL_FD_CHECK_US unless forced), then every poller. Work done or -errno.
 */
enum evl_fd_check { EVL_FDS_SKIP, EVL_FDS_CADENCE, EVL_FDS_FORCE };

static int evl_round(struct evl *evl, enum evl_fd_check check)
{
	uint64_t now = evl_now_ns(evl);
	int work, rc;

	evl->st.rounds++;
	work = evl_timers_run(evl, now);
	if (check == EVL_FDS_FORCE ||
	    (check == EVL_FDS_CADENCE &&
	     now - evl->last_fd_check_ns >= (uint64_t)EVL_FD_CHECK_US * 1000u)) {
		rc = evl_fds_wait(evl, 0);
		if (rc < 0)
			return rc;
		work += rc;
	}
	for (struct evl_poller *p = evl->pollers; p != NULL; p = p->next) {
		if (p->dead)
			continue;
		rc = p->cb(evl, p->arg);
		if (rc < 0)
			return rc;
		work += rc;
	}
	if (work > 0) {
		evl->st.busy_rounds++;
		evl->last_busy_ns = evl_now_ns(evl);
	}
	return work;
}

static void evl_leave(struct evl *evl)
{
	if (--evl->depth > 0)
		return;
	while (evl->fd_zombies != NULL) {
		struct evl_fd *h = evl->fd_zombies;

		evl->fd_zombies = h->next;
		free(h);
	}
	if (evl->pollers_dead)
		evl_pollers_reap(evl);
	/* an outside loop sleeping on evl_fd() must wake for the next timer */
	evl_tfd_sync(evl);
}

int evl_run_once(struct evl *evl, int timeout_ms)
{
	uint64_t deadline = UINT64_MAX, now;
	int work, rc;

	evl->depth++;
	if (timeout_ms >= 0)
		deadline = evl_now_ns(evl) + (uint64_t)timeout_ms * 1000000u;
	/* driven from outside (timeout 0): the caller may have slept on evl_fd() */
	work = evl_round(evl, timeout_ms == 0 ? EVL_FDS_FORCE : EVL_FDS_CADENCE);
	while (work == 0 && timeout_ms != 0 && !evl->stop) {
		now = evl_now_ns(evl);
		if (now >= deadline)
			break;
		if (now - evl->last_busy_ns < evl->busy_poll_ns) {
			/* spinning: an answer due in a few microseconds costs no wake-up */
			evl->st.spin_rounds++;
			work = evl_round(evl, EVL_FDS_CADENCE);
			continue;
		}
		rc = evl_fds_wait(evl, deadline == UINT64_MAX
					   ? -1
					   : (int)((deadline - now + 999999u) / 1000000u));
		if (rc >= 0) {
			work = rc;
			/* the fds were just collected: this round runs timers and pollers */
			rc = evl_round(evl, EVL_FDS_SKIP);
		}
		if (rc < 0) {
			work = rc;
			break;
		}
		work += rc;
		break;
	}
	evl_leave(evl);
	return work;
}

int evl_run(struct evl *evl)
{
	int rc = 0;

	while (!evl->stop) {
		rc = evl_run_once(evl, -1);
		if (rc < 0)
			break;
		rc = 0;
	}
	evl->stop = false; /* the loop may be run again */
	return rc;
}

void evl_stop(struct evl *evl)
{
	evl->stop = true;
}

bool evl_stopped(const struct evl *evl)
{
	return evl->stop;
}

unsigned int evl_depth(const struct evl *evl)
{
	return evl->depth;
}

int evl_fd(const struct evl *evl)
{
	return evl->epfd;
}

uint32_t evl_busy_poll_us(const struct evl *evl)
{
	return (uint32_t)(evl->busy_poll_ns / 1000u);
}

void evl_busy_poll_set(struct evl *evl, uint32_t us)
{
	evl->busy_poll_ns = (uint64_t)us * 1000u;
}

void evl_stats_get(const struct evl *evl, struct evl_stats *stats_out)
{
	*stats_out = evl->st;
	stats_out->timers_armed = evl->heap_len;
	stats_out->fds = stats_out->pollers = 0;
	for (const struct evl_fd *h = evl->fds; h != NULL; h = h->next)
		stats_out->fds++;
	for (const struct evl_poller *p = evl->pollers; p != NULL; p = p->next)
		stats_out->pollers += !p->dead;
}

const char *evl_name(const struct evl *evl)
{
	return evl->name;
}

int evl_create(const struct evl_opts *opts, struct evl **evl_out)
{
	struct evl *evl = calloc(1, sizeof(*evl));
	int rc;

	if (evl == NULL)
		return -ENOMEM;
	snprintf(evl->name, sizeof(evl->name), "%s", opts->name ? opts->name : "loop");
	evl->clock = opts->clock_ns ? opts->clock_ns : evl_clock_mono;
	evl->clock_arg = opts->clock_arg;
	evl->busy_poll_ns = (uint64_t)opts->busy_poll_us * 1000u;
	evl->wakefd = evl->tfd = -1;
	evl->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (evl->epfd < 0)
		goto err_errno;
	evl->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (evl->wakefd < 0)
		goto err_errno;
	evl->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (evl->tfd < 0)
		goto err_errno;
	rc = evl_fd_add(evl, evl->wakefd, EVL_READ, evl_drain_cb, NULL, &evl->wake_h);
	if (rc == 0)
		rc = evl_fd_add(evl, evl->tfd, EVL_READ, evl_tfd_cb, NULL, &evl->tfd_h);
	if (rc != 0)
		goto err;
	*evl_out = evl;
	return 0;
err_errno:
	rc = -errno;
	log_error("evloop", "%s: cannot create the event loop: %s", evl->name, strerror(errno));
err:
	evl_destroy(evl);
	return rc;
}

void evl_destroy(struct evl *evl)
{
	if (evl == NULL)
		return;
	while (evl->fds != NULL) {
		struct evl_fd *h = evl->fds;

		evl->fds = h->next;
		free(h);
	}
	while (evl->fd_zombies != NULL) {
		struct evl_fd *h = evl->fd_zombies;

		evl->fd_zombies = h->next;
		free(h);
	}
	while (evl->pollers != NULL) {
		struct evl_poller *p = evl->pollers;

		evl->pollers = p->next;
		free(p);
	}
	/* timers belong to their owners: leave them disarmed */
	for (uint32_t i = 0; i < evl->heap_len; i++)
		evl->heap[i]->slot = 0;
	free(evl->heap);
	if (evl->tfd >= 0)
		close(evl->tfd);
	if (evl->wakefd >= 0)
		close(evl->wakefd);
	if (evl->epfd >= 0)
		close(evl->epfd);
	free(evl);
}
