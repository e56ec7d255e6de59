/* SPDX-License-Identifier: Apache-2.0 */
/*
 * evloop: the one event loop of every Weft thread that does I/O (weft-osd's
 * reactor, libweft's progress, weft-mount's I/O thread). docs/evloop.md.
 *
 * Three kinds of event source, in the shape of Redis's ae and SPDK's pollers:
 *
 *  - pollers: functions run on every round; each returns how much work it
 *    did (> 0 busy, 0 idle, < 0 a fatal error that stops the loop). The
 *    fabric's progress and the store's completions are pollers.
 *  - file descriptors: read/write interest and a callback, in the loop's one
 *    epoll set. A callback may be NULL: the fd then only wakes a sleeping
 *    loop so that the pollers run (an eventfd a poller drains, a fabric fd).
 *  - timers: one-shot or periodic, embedded in the owner's struct (no
 *    allocation per arm), kept in a binary min-heap (arm/cancel O(log n)),
 *    on the monotonic clock. Equal due times fire in the order armed.
 *
 * Spin, then sleep. A round runs the due timers, the fd callbacks (fds are
 * checked at most every EVL_FD_CHECK_US while the loop does not sleep, so a
 * busy loop pays no epoll_wait per round), then every poller. While a round
 * found work the loop goes on; once every poller reports idle it keeps
 * polling for busy_poll_us (ms_busy_poll), then sleeps in one epoll_wait
 * until an fd is ready, the next timer is due (a timerfd in the same set),
 * evl_wake() is called, or the caller's timeout passes.
 *
 * One loop per thread; nothing here takes a lock. evl_wake() is the only
 * call that may come from another thread (or a signal handler).
 */
#ifndef WEFT_EVLOOP_EVLOOP_H
#define WEFT_EVLOOP_EVLOOP_H

#include <stdbool.h>
#include <stdint.h>

struct evl;
struct evl_fd;
struct evl_poller;
struct evl_timer;

#define EVL_READ  0x1u
#define EVL_WRITE 0x2u
#define EVL_ERROR 0x4u /* reported to callbacks only: EPOLLERR or EPOLLHUP */

/* While the loop does not sleep, its fds are checked (epoll_wait(0)) at most this often. */
#define EVL_FD_CHECK_US 1000u

typedef void (*evl_fd_cb)(struct evl *evl, int fd, unsigned int events, void *arg);
typedef void (*evl_timer_cb)(struct evl *evl, struct evl_timer *t, void *arg);
/* > 0: work done (busy), 0: idle, < 0: fatal, evl_run returns it. */
typedef int (*evl_poller_cb)(struct evl *evl, void *arg);
/* A clock in nanoseconds that never goes backwards. */
typedef uint64_t (*evl_clock_fn)(void *arg);

/* Embedded in its owner; the fields are the loop's. evl_timer_init before first use. */
struct evl_timer {
	uint64_t due_ns;
	uint64_t period_ns; /* 0: one-shot */
	uint64_t seq;	    /* arm order: breaks ties between equal due times */
	uint32_t slot;	    /* heap index + 1; 0 = not armed */
	evl_timer_cb cb;
	void *arg;
};

struct evl_opts {
	const char *name;      /* for log lines ("osd.3", "client.admin") */
	uint32_t busy_poll_us; /* keep polling this long after the last busy round */
	evl_clock_fn clock_ns; /* NULL: CLOCK_MONOTONIC; unit tests pass a fake */
	void *clock_arg;
};

struct evl_stats {
	uint64_t rounds;       /* timer + fd + poller passes */
	uint64_t busy_rounds;  /* rounds that found work */
	uint64_t spin_rounds;  /* idle rounds run while spinning before a sleep */
	uint64_t sleeps;       /* epoll_wait calls that were allowed to block */
	uint64_t sleep_ns;     /* time spent in them */
	uint64_t fd_checks;    /* non-blocking epoll_wait calls */
	uint64_t fd_events;    /* fd callbacks run */
	uint64_t timers_fired; /* timer callbacks run */
	uint32_t timers_armed; /* now */
	uint32_t fds, pollers; /* registered now (the loop's own two fds included) */
};

void evl_opts_init(struct evl_opts *opts);
int evl_create(const struct evl_opts *opts, struct evl **evl_out);
/* Frees the loop: fd handles and pollers still registered go with it; timers are the owners'. */
void evl_destroy(struct evl *evl);

/*
 * Watch fd for events (EVL_READ / EVL_WRITE; 0 = registered, not watched).
 * cb may be NULL (the fd only wakes the loop). The fd stays the caller's.
 */
int evl_fd_add(struct evl *evl, int fd, unsigned int events, evl_fd_cb cb, void *arg,
	       struct evl_fd **fd_out);
int evl_fd_mod(struct evl *evl, struct evl_fd *h, unsigned int events);
/* Safe inside any callback, its own included; h is invalid afterwards. NULL is ignored. */
void evl_fd_del(struct evl *evl, struct evl_fd *h);

void evl_timer_init(struct evl_timer *t, evl_timer_cb cb, void *arg);
/*
 * Fire after delay_us, then every period_us if that is not 0 (the next due
 * time is the last due time + period, so a periodic timer does not drift;
 * rounds it missed entirely are skipped, not run in a burst). Arming an
 * armed timer moves it. 0 or -ENOMEM.
 */
int evl_timer_arm(struct evl *evl, struct evl_timer *t, uint64_t delay_us, uint64_t period_us);
/* Fire at an absolute time of the loop's clock (evl_now_ns). 0 or -ENOMEM. */
int evl_timer_arm_at(struct evl *evl, struct evl_timer *t, uint64_t due_ns);
/* Safe on a timer that is not armed, and inside any callback (its own included). */
void evl_timer_cancel(struct evl *evl, struct evl_timer *t);
static inline bool evl_timer_armed(const struct evl_timer *t)
{
	return t->slot != 0;
}

/* Pollers run every round in the order they were added. */
int evl_poller_add(struct evl *evl, evl_poller_cb cb, void *arg, struct evl_poller **p_out);
/* Safe inside any callback; p is invalid afterwards. NULL is ignored. */
void evl_poller_del(struct evl *evl, struct evl_poller *p);

/*
 * Rounds until one finds work, spinning and then sleeping (at most
 * timeout_ms; -1: no limit, 0: one round, no spin, no sleep) when none
 * does; after a sleep, one more round. Returns the work done (callbacks run
 * plus what the pollers reported), 0, or a poller's negative errno.
 */
int evl_run_once(struct evl *evl, int timeout_ms);
/* Until evl_stop(): 0, or a poller's negative errno. */
int evl_run(struct evl *evl);
/* evl_run returns after the current round; evl_run_once after its next one. */
void evl_stop(struct evl *evl);
bool evl_stopped(const struct evl *evl);
/* Any thread, async-signal-safe: a sleeping loop wakes and runs a round. */
void evl_wake(struct evl *evl);

/*
 * The loop's epoll fd: readable whenever a round has something to do (an fd
 * ready, a timer due, a wake pending), so an outside loop can sleep on it
 * and then call evl_run_once(evl, 0).
 */
int evl_fd(const struct evl *evl);
/* How many evl_run_once calls are running now: 0 outside the loop and its callbacks. */
unsigned int evl_depth(const struct evl *evl);
/* The loop's clock, read now. */
uint64_t evl_now_ns(const struct evl *evl);
uint32_t evl_busy_poll_us(const struct evl *evl);
void evl_busy_poll_set(struct evl *evl, uint32_t us);
void evl_stats_get(const struct evl *evl, struct evl_stats *stats_out);
const char *evl_name(const struct evl *evl);

#endif
