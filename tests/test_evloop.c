/* SPDX-License-Identifier: Apache-2.0 */
/*
 * evloop unit tests: timer order, cancel, periodic drift, fd readiness,
 * pollers busy/idle, spin then sleep. Time is a fake clock the tests move,
 * so nothing here asserts on wall-clock durations.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cmocka.h>

#include "evloop/evloop.h"

static uint64_t fake_ns;

static uint64_t fake_clock(void *arg)
{
	return fake_ns;
}

static struct evl *loop_new(uint32_t busy_poll_us, bool fake)
{
	struct evl_opts o;
	struct evl *evl;

	evl_opts_init(&o);
	o.name = "test";
	o.busy_poll_us = busy_poll_us;
	if (fake) {
		fake_ns = 1000000000ull; /* not 0: the loop's first fd check is due at once */
		o.clock_ns = fake_clock;
	}
	assert_int_equal(evl_create(&o, &evl), 0);
	return evl;
}

/* ------------------------------------------------------------------ timers */

#define MAX_FIRED 4096

struct fired {
	int ids[MAX_FIRED];
	uint64_t at[MAX_FIRED]; /* the loop's clock when it fired */
	int n;
};

struct tmr {
	struct evl_timer t;
	int id;
	struct fired *log;
	struct tmr *cancel_other; /* cancel this one when fired */
	bool rearm_now;		  /* re-arm with no delay when fired */
};

static void tmr_cb(struct evl *evl, struct evl_timer *t, void *arg)
{
	struct tmr *m = arg;

	assert_ptr_equal(&m->t, t);
	assert_true(m->log->n < MAX_FIRED);
	m->log->ids[m->log->n] = m->id;
	m->log->at[m->log->n] = evl_now_ns(evl);
	m->log->n++;
	if (m->cancel_other != NULL)
		evl_timer_cancel(evl, &m->cancel_other->t);
	if (m->rearm_now)
		assert_int_equal(evl_timer_arm(evl, t, 0, 0), 0);
}

static void tmr_init(struct tmr *m, int id, struct fired *log)
{
	memset(m, 0, sizeof(*m));
	m->id = id;
	m->log = log;
	evl_timer_init(&m->t, tmr_cb, m);
}

static void test_timers_fire_in_order(void **state)
{
	struct evl *evl = loop_new(0, true);
	struct fired log = {0};
	struct tmr m[4];
	static const uint64_t delay_us[4] = {30, 10, 20, 10};

	for (int i = 0; i < 4; i++) {
		tmr_init(&m[i], i, &log);
		assert_int_equal(evl_timer_arm(evl, &m[i].t, delay_us[i], 0), 0);
		assert_true(evl_timer_armed(&m[i].t));
	}
	assert_int_equal(evl_run_once(evl, 0), 0);
	assert_int_equal(log.n, 0);
	{
		struct evl_stats st;

		evl_stats_get(evl, &st);
		assert_int_equal(st.timers_armed, 4);
		assert_int_equal(st.fds, 2); /* the wake eventfd and the timerfd */
		assert_int_equal(st.pollers, 0);
	}
	fake_ns += 15000;
	assert_int_equal(evl_run_once(evl, 0), 2);
	/* equal due times fire in the order they were armed */
	assert_int_equal(log.n, 2);
	assert_int_equal(log.ids[0], 1);
	assert_int_equal(log.ids[1], 3);
	assert_false(evl_timer_armed(&m[1].t));
	fake_ns += 100000;
	assert_int_equal(evl_run_once(evl, 0), 2);
	assert_int_equal(log.n, 4);
	assert_int_equal(log.ids[2], 2);
	assert_int_equal(log.ids[3], 0);
	assert_int_equal(evl_run_once(evl, 0), 0);
	evl_destroy(evl);
}

/* Many timers, random delays, a third cancelled, some moved: the heap fires them sorted. */
static void test_timers_heap_random(void **state)
{
	enum { N = 3000 };
	struct evl *evl = loop_new(0, true);
	uint64_t start = fake_ns;
	struct fired *log = calloc(1, sizeof(*log));
	struct tmr *m = calloc(N, sizeof(*m));
	uint64_t *due = calloc(N, sizeof(*due));
	bool *cancelled = calloc(N, sizeof(*cancelled));
	int live = 0;

	assert_non_null(log);
	assert_non_null(m);
	srand(16);
	for (int i = 0; i < N; i++) {
		uint64_t d = (uint64_t)(rand() % 500); /* many equal due times too */

		tmr_init(&m[i], i, log);
		assert_int_equal(evl_timer_arm(evl, &m[i].t, d, 0), 0);
		due[i] = start + d * 1000u;
	}
	for (int i = 0; i < N; i++) {
		int r = rand() % 6;

		if (r < 2) {
			evl_timer_cancel(evl, &m[i].t);
			evl_timer_cancel(evl, &m[i].t); /* twice: harmless */
			cancelled[i] = true;
		} else if (r == 2) {
			uint64_t d = (uint64_t)(rand() % 500);

			assert_int_equal(evl_timer_arm(evl, &m[i].t, d, 0), 0); /* moved */
			due[i] = start + d * 1000u;
		}
		if (!cancelled[i])
			live++;
	}
	fake_ns += 1000000;
	assert_int_equal(evl_run_once(evl, 0), live);
	assert_int_equal(log->n, live);
	for (int k = 0; k < log->n; k++) {
		int id = log->ids[k];

		assert_false(cancelled[id]);
		if (k > 0)
			assert_true(due[log->ids[k - 1]] <= due[id]);
	}
	evl_destroy(evl);
	free(cancelled);
	free(due);
	free(m);
	free(log);
}

static void test_timer_cancel_and_rearm_in_callback(void **state)
{
	struct evl *evl = loop_new(0, true);
	struct fired log = {0};
	struct tmr a, b, c;

	tmr_init(&a, 1, &log);
	tmr_init(&b, 2, &log);
	tmr_init(&c, 3, &log);
	a.cancel_other = &b; /* a and b are due together; a cancels b */
	c.rearm_now = true;  /* re-arms itself with no delay: once per round, never a busy loop */
	assert_int_equal(evl_timer_arm(evl, &a.t, 10, 0), 0);
	assert_int_equal(evl_timer_arm(evl, &b.t, 10, 0), 0);
	assert_int_equal(evl_timer_arm(evl, &c.t, 10, 0), 0);
	fake_ns += 10000;
	assert_int_equal(evl_run_once(evl, 0), 2);
	assert_int_equal(log.n, 2);
	assert_int_equal(log.ids[0], 1);
	assert_int_equal(log.ids[1], 3);
	assert_false(evl_timer_armed(&b.t));
	assert_true(evl_timer_armed(&c.t));
	assert_int_equal(evl_run_once(evl, 0), 1);
	assert_int_equal(log.n, 3);
	assert_int_equal(log.ids[2], 3);
	evl_timer_cancel(evl, &c.t);
	assert_int_equal(evl_run_once(evl, 0), 0);
	evl_destroy(evl);
}

/* A periodic timer keeps its phase however late the rounds come, and skips what it missed. */
static void test_timer_periodic_no_drift(void **state)
{
	struct evl *evl = loop_new(0, true);
	struct fired log = {0};
	uint64_t t0 = fake_ns;
	struct tmr p;

	tmr_init(&p, 7, &log);
	assert_int_equal(evl_timer_arm(evl, &p.t, 100, 100), 0);
	for (int step = 0; step < 100; step++) {
		fake_ns += 37000; /* rounds come at an unrelated pace */
		evl_run_once(evl, 0);
	}
	/* 3.7 ms: fires at 100, 200, ..., 3700 us, each in the first round at or after it */
	assert_int_equal(log.n, 37);
	for (int k = 0; k < log.n; k++) {
		uint64_t want = t0 + (uint64_t)(k + 1) * 100000u;

		assert_true(log.at[k] >= want);
		assert_true(log.at[k] < want + 37000u);
	}
	assert_int_equal(p.t.due_ns, t0 + 3800000u); /* still on the 100 us grid */
	/* a stall of 1 ms: one late firing, the missed ones are skipped, the grid kept */
	fake_ns = t0 + 3800000u + 1000000u + 50000u;
	assert_int_equal(evl_run_once(evl, 0), 1);
	assert_int_equal(log.n, 38);
	assert_int_equal(p.t.due_ns, t0 + 4900000u);
	evl_timer_cancel(evl, &p.t);
	evl_destroy(evl);
}

/* -------------------------------------------------------------------- fds */

struct fdrec {
	int calls;
	unsigned int events;
	struct evl_fd *self, *victim; /* delete these when called */
};

static void fd_cb(struct evl *evl, int fd, unsigned int events, void *arg)
{
	struct fdrec *r = arg;

	r->calls++;
	r->events = events;
	if (r->victim != NULL)
		evl_fd_del(evl, r->victim);
	if (r->self != NULL)
		evl_fd_del(evl, r->self);
}

static void test_fd_readiness(void **state)
{
	struct evl *evl = loop_new(0, true);
	struct fdrec rd = {0}, wr = {0};
	struct evl_fd *hr, *hw;
	int p[2];
	char c = 'x';

	assert_int_equal(pipe(p), 0);
	assert_int_equal(evl_fd_add(evl, p[0], EVL_READ, fd_cb, &rd, &hr), 0);
	assert_int_equal(evl_fd_add(evl, p[0], EVL_READ, fd_cb, &rd, NULL), -EEXIST);
	assert_int_equal(evl_run_once(evl, 0), 0);
	assert_int_equal(rd.calls, 0);
	assert_int_equal(write(p[1], &c, 1), 1);
	assert_int_equal(evl_run_once(evl, 0), 1);
	assert_int_equal(rd.calls, 1);
	assert_int_equal(rd.events, EVL_READ);
	/* level-triggered: still readable until read */
	assert_int_equal(evl_run_once(evl, 0), 1);
	assert_int_equal(read(p[0], &c, 1), 1);
	assert_int_equal(evl_run_once(evl, 0), 0);
	assert_int_equal(rd.calls, 2);

	/* write interest on the write end: ready at once; switched off with mod */
	assert_int_equal(evl_fd_add(evl, p[1], EVL_WRITE, fd_cb, &wr, &hw), 0);
	assert_int_equal(evl_run_once(evl, 0), 1);
	assert_int_equal(wr.events, EVL_WRITE);
	assert_int_equal(evl_fd_mod(evl, hw, 0), 0);
	assert_int_equal(evl_run_once(evl, 0), 0);
	assert_int_equal(wr.calls, 1);

	/* a reader sees the writer's close as EVL_ERROR (EPOLLHUP) */
	evl_fd_del(evl, hw);
	close(p[1]);
	assert_int_equal(evl_run_once(evl, 0), 1);
	assert_true(rd.events & EVL_ERROR);
	evl_fd_del(evl, hr);
	close(p[0]);
	assert_int_equal(evl_fd_add(evl, -1, EVL_READ, fd_cb, &rd, NULL), -EBADF);
	evl_destroy(evl);
}

/* Both fds ready in one batch; the first callback deletes the second's handle and its own. */
static void test_fd_delete_in_callback(void **state)
{
	struct evl *evl = loop_new(0, true);
	struct fdrec a = {0}, b = {0};
	struct evl_fd *ha, *hb;
	int e1 = eventfd(1, EFD_NONBLOCK), e2 = eventfd(1, EFD_NONBLOCK);

	assert_true(e1 >= 0 && e2 >= 0);
	assert_int_equal(evl_fd_add(evl, e1, EVL_READ, fd_cb, &a, &ha), 0);
	assert_int_equal(evl_fd_add(evl, e2, EVL_READ, fd_cb, &b, &hb), 0);
	a.self = ha;
	a.victim = hb;
	b.self = hb;
	b.victim = ha;
	assert_int_equal(evl_run_once(evl, 0), 1); /* whichever ran first removed both */
	assert_int_equal(a.calls + b.calls, 1);
	assert_int_equal(evl_run_once(evl, 0), 0);
	close(e1);
	close(e2);
	evl_destroy(evl);
}

/* ---------------------------------------------------------------- pollers */

struct pol {
	int calls;
	int busy_left;	  /* report busy this many more times */
	int fail_at;	  /* return -EIO on this call (0: never) */
	int stop_at;	  /* evl_stop on this call (0: never) */
	uint64_t tick_ns; /* advance the fake clock this much per call */
	int *order, *norder;
	int id;
};

static int pol_cb(struct evl *evl, void *arg)
{
	struct pol *p = arg;

	p->calls++;
	fake_ns += p->tick_ns;
	if (p->order != NULL)
		p->order[(*p->norder)++ % 64] = p->id;
	if (p->fail_at != 0 && p->calls == p->fail_at)
		return -EIO;
	if (p->stop_at != 0 && p->calls == p->stop_at)
		evl_stop(evl);
	if (p->busy_left > 0) {
		p->busy_left--;
		return 1;
	}
	return 0;
}

static void test_pollers_busy_idle(void **state)
{
	struct evl *evl = loop_new(0, true);
	int order[64], norder = 0;
	struct pol a = {.busy_left = 3, .order = order, .norder = &norder, .id = 1};
	struct pol b = {.order = order, .norder = &norder, .id = 2};
	struct evl_poller *pa, *pb;

	assert_int_equal(evl_poller_add(evl, pol_cb, &a, &pa), 0);
	assert_int_equal(evl_poller_add(evl, pol_cb, &b, &pb), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(evl_run_once(evl, 0), 1);
	assert_int_equal(evl_run_once(evl, 0), 0);
	assert_int_equal(a.calls, 4);
	assert_int_equal(b.calls, 4);
	for (int i = 0; i < norder; i++)
		assert_int_equal(order[i], i % 2 == 0 ? 1 : 2); /* every round, in order */
	/* a poller's error stops evl_run with it */
	b.fail_at = 6;
	evl_wake(evl); /* the idle round before it sleeps; the wake-up runs the failing one */
	assert_int_equal(evl_run(evl), -EIO);
	assert_int_equal(b.calls, 6);
	/* removed: no longer called */
	evl_poller_del(evl, pb);
	assert_int_equal(evl_run_once(evl, 0), 0);
	assert_int_equal(b.calls, 6);
	/* evl_stop from inside a round: evl_run returns 0 after it */
	a.stop_at = a.calls + 5;
	a.busy_left = 1000;
	assert_int_equal(evl_run(evl), 0);
	assert_int_equal(a.calls, a.stop_at);
	assert_false(evl_stopped(evl)); /* cleared: the loop can run again */
	evl_destroy(evl);
}

/* ----------------------------------------------------------- spin, sleep */

/*
 * busy_poll 100 us, every round 10 us of fake time: after the last busy
 * round the loop polls for 100 us — the idle round, 9 spin rounds — then
 * sleeps once (an fd already readable makes the sleep return at once).
 */
static void test_spin_then_sleep(void **state)
{
	struct evl *evl = loop_new(100, true);
	struct pol p = {.busy_left = 1, .tick_ns = 10000};
	struct evl_stats st;
	int efd = eventfd(1, EFD_NONBLOCK);

	assert_true(efd >= 0);
	assert_int_equal(evl_fd_add(evl, efd, EVL_READ, NULL, NULL, NULL), 0);
	assert_int_equal(evl_poller_add(evl, pol_cb, &p, NULL), 0);
	assert_int_equal(evl_run_once(evl, -1), 1); /* busy: back at once */
	evl_stats_get(evl, &st);
	assert_int_equal(st.sleeps, 0);
	assert_int_equal(st.spin_rounds, 0);
	assert_int_equal(evl_run_once(evl, -1), 0); /* idle: spin, sleep, one round */
	evl_stats_get(evl, &st);
	assert_int_equal(st.spin_rounds, 9);
	assert_int_equal(st.sleeps, 1);
	assert_int_equal(p.calls, 1 + 10 + 1);

	/* no spin: the first idle round sleeps */
	evl_busy_poll_set(evl, 0);
	assert_int_equal(evl_busy_poll_us(evl), 0);
	assert_int_equal(evl_run_once(evl, -1), 0);
	evl_stats_get(evl, &st);
	assert_int_equal(st.spin_rounds, 9);
	assert_int_equal(st.sleeps, 2);
	assert_int_equal(p.calls, 12 + 2);

	/* timeout 0 never spins nor sleeps */
	evl_busy_poll_set(evl, 1000);
	p.busy_left = 1;
	assert_int_equal(evl_run_once(evl, 0), 1);
	assert_int_equal(evl_run_once(evl, 0), 0);
	evl_stats_get(evl, &st);
	assert_int_equal(st.spin_rounds, 9);
	assert_int_equal(st.sleeps, 2);
	close(efd);
	evl_destroy(evl);
}

/* While spinning or busy, the fds are checked every EVL_FD_CHECK_US, not every round. */
static void test_fd_check_cadence(void **state)
{
	struct evl *evl = loop_new(10000, true);
	struct pol p = {.busy_left = 1000, .tick_ns = 100000}; /* 100 us per round */
	struct fdrec r = {0};
	struct evl_stats st;
	int efd = eventfd(1, EFD_NONBLOCK);

	assert_int_equal(evl_fd_add(evl, efd, EVL_READ, fd_cb, &r, NULL), 0);
	assert_int_equal(evl_poller_add(evl, pol_cb, &p, NULL), 0);
	for (int i = 0; i < 100; i++)
		assert_true(evl_run_once(evl, -1) > 0);
	/* 100 rounds over 10 ms: about one check per ms */
	evl_stats_get(evl, &st);
	assert_int_equal(st.sleeps, 0);
	assert_true(st.fd_checks >= 9 && st.fd_checks <= 11);
	assert_int_equal(r.calls, (int)st.fd_checks);
	close(efd);
	evl_destroy(evl);
}

/* Real clock: the loop sleeps until its timer is due, and evl_fd() wakes an outside sleeper. */
static void test_sleep_until_timer(void **state)
{
	struct evl *evl = loop_new(0, false);
	struct fired log = {0};
	struct evl_stats st;
	struct pollfd pfd;
	struct tmr m;

	tmr_init(&m, 1, &log);
	assert_int_equal(evl_timer_arm(evl, &m.t, 2000, 0), 0);
	assert_int_equal(evl_run_once(evl, -1), 1); /* woken by the timerfd, the timer ran */
	assert_int_equal(log.n, 1);
	evl_stats_get(evl, &st);
	assert_int_equal(st.sleeps, 1);

	/* an outside loop polls evl_fd(): readable once the timer is due */
	assert_int_equal(evl_timer_arm(evl, &m.t, 1000, 0), 0);
	pfd = (struct pollfd){.fd = evl_fd(evl), .events = POLLIN};
	assert_int_equal(poll(&pfd, 1, 10000), 1);
	assert_int_equal(evl_run_once(evl, 0), 1);
	assert_int_equal(log.n, 2);

	/* a timeout with nothing to do: returns 0 */
	assert_int_equal(evl_run_once(evl, 1), 0);
	evl_destroy(evl);
}

struct waker {
	struct evl *evl;
	volatile int woke, done;
};

/* Wakes the loop until it says it woke: a wake-up that lands before the sleep is a round too. */
static void *waker_main(void *arg)
{
	struct waker *w = arg;
	struct timespec ts = {0, 5 * 1000 * 1000};

	while (!w->done) {
		nanosleep(&ts, NULL);
		w->woke = 1;
		evl_wake(w->evl);
	}
	return NULL;
}

static void test_wake_from_thread(void **state)
{
	struct evl *evl = loop_new(0, false);
	struct waker w = {.evl = evl};
	struct evl_stats st;
	struct pollfd pfd;
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, waker_main, &w), 0);
	/* sleeps with no limit: only the other thread's evl_wake can end it (no work: 0) */
	assert_int_equal(evl_run_once(evl, -1), 0);
	assert_int_equal(w.woke, 1);
	w.done = 1;
	pthread_join(th, NULL);
	evl_stats_get(evl, &st);
	assert_true(st.sleeps >= 1);
	/* a wake-up with nobody asleep: evl_fd() says so until a round ran */
	evl_wake(evl);
	pfd = (struct pollfd){.fd = evl_fd(evl), .events = POLLIN};
	assert_int_equal(poll(&pfd, 1, 0), 1);
	assert_int_equal(evl_run_once(evl, 0), 0);
	assert_int_equal(poll(&pfd, 1, 0), 0);
	evl_destroy(evl);
}

/* A poller that runs the loop again and removes handles meanwhile (libweft's sync calls). */
struct reent {
	struct evl_fd *h;
	struct evl_poller *self;
	int calls, inner;
	unsigned int depth[2]; /* evl_depth seen by the outer and the inner call */
};

static int reent_cb(struct evl *evl, void *arg)
{
	struct reent *r = arg;

	r->depth[r->calls < 2 ? r->calls : 1] = evl_depth(evl);
	if (++r->calls > 1)
		return 0;
	r->inner = evl_run_once(evl, 0);
	evl_fd_del(evl, r->h);
	evl_poller_del(evl, r->self);
	return 1;
}

static void test_reentrant(void **state)
{
	struct evl *evl = loop_new(0, true);
	struct reent r = {0};
	struct fdrec f = {0};
	int efd = eventfd(1, EFD_NONBLOCK);

	assert_int_equal(evl_fd_add(evl, efd, EVL_READ, fd_cb, &f, &r.h), 0);
	assert_int_equal(evl_poller_add(evl, reent_cb, &r, &r.self), 0);
	assert_int_equal(evl_run_once(evl, 0), 2); /* fd callback once, then the poller */
	assert_int_equal(r.calls, 2);		   /* the inner round called it too */
	assert_int_equal(r.inner, 1);		   /* ... and the fd again */
	assert_int_equal(f.calls, 2);
	assert_int_equal(r.depth[0], 1);
	assert_int_equal(r.depth[1], 2);
	assert_int_equal(evl_depth(evl), 0);
	assert_int_equal(evl_run_once(evl, 0), 0); /* both gone */
	assert_int_equal(r.calls, 2);
	close(efd);
	evl_destroy(evl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_timers_fire_in_order),
	    cmocka_unit_test(test_timers_heap_random),
	    cmocka_unit_test(test_timer_cancel_and_rearm_in_callback),
	    cmocka_unit_test(test_timer_periodic_no_drift),
	    cmocka_unit_test(test_fd_readiness),
	    cmocka_unit_test(test_fd_delete_in_callback),
	    cmocka_unit_test(test_pollers_busy_idle),
	    cmocka_unit_test(test_spin_then_sleep),
	    cmocka_unit_test(test_fd_check_cadence),
	    cmocka_unit_test(test_sleep_until_timer),
	    cmocka_unit_test(test_wake_from_thread),
	    cmocka_unit_test(test_reentrant),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
