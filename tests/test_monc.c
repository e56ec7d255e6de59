/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mon client's own clock (mon/monc/monc.h): monc_next_deadline_us()
 * is the earliest of what is pending, and none when idle, and an owner that
 * runs monc_progress() only when that deadline comes (re-armed from
 * monc_deadline_watch, as weft-osd and libweft do with a one-shot timer)
 * still sees every request finish: a timeout, a resend after -EAGAIN, a
 * hunt after a lost connection.
 *
 * The monitor is a fake on a messenger of its own (127.0.0.1, tcp) that
 * answers MON_CMD as a case says; the mon client sits on a shared
 * messenger (monc_create_on) that the test drives itself, so frames reach
 * it without monc_progress, as in the daemons. Every wait is bounded.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/clock.h"
#include "common/conf.h"
#include "common/log.h"
#include "fabric/fabric.h"
#include "mon/monc/monc.h"
#include "msgr/msgr.h"

#define PUMP_MAX_MS 8000

/* A monitor that answers each MON_CMD with status, or not at all, or drops the connection. */
struct fake_mon {
	struct msgr *m;
	struct msgr_conn *conn;
	int cmds;
	bool silent;
	int32_t status;
	bool drop_next; /* close the connection instead of answering, once */
};

/* What weft-osd and libweft do: a one-shot timer at the deadline, moved when monc says. */
struct owner {
	struct fab_domain *dom;
	struct msgr *m;
	struct monc *mc;
	struct conf *conf;
	uint64_t armed_us; /* UINT64_MAX: not armed */
	int notified;
	int progresses;
};

struct reply {
	bool done;
	int status;
	uint64_t at_ms;
};

static void fake_recv_cb(struct msgr_conn *conn, const struct proto_hdr *hdr,
			 const struct proto_msg *msg, void *arg)
{
	struct fake_mon *f = arg;
	struct proto_msg r = {.type = PROTO_MON_CMD_REPLY};

	if (msg->type != PROTO_MON_CMD)
		return;
	f->cmds++;
	if (f->drop_next) {
		f->drop_next = false;
		msgr_conn_close(conn);
		if (f->conn == conn)
			f->conn = NULL;
		return;
	}
	if (f->silent)
		return;
	r.mon_cmd_reply.status = f->status;
	if (f->status != 0) {
		snprintf(r.mon_cmd_reply.msg, sizeof(r.mon_cmd_reply.msg), "no leader yet");
		r.mon_cmd_reply.msg_len = strlen(r.mon_cmd_reply.msg);
	}
	assert_int_equal(msgr_send(conn, &r, hdr->tid), 0);
}

static void fake_accept_cb(struct msgr_conn *conn, void *arg)
{
	((struct fake_mon *)arg)->conn = conn;
}

static void fake_fail_cb(struct msgr_conn *conn, int status, void *arg)
{
	struct fake_mon *f = arg;

	(void)status;
	if (f->conn == conn)
		f->conn = NULL;
	msgr_conn_close(conn);
}

static const struct msgr_ops fake_ops = {
    .recv_cb = fake_recv_cb,
    .accept_cb = fake_accept_cb,
    .fail_cb = fake_fail_cb,
};

static void owner_deadline_cb(struct monc *mc, void *arg)
{
	struct owner *o = arg;

	o->notified++;
	o->armed_us = monc_next_deadline_us(mc);
}

static void reply_cb(struct monc *mc, int status, const char *out, size_t out_len,
		     const char *errmsg, void *arg)
{
	struct reply *r = arg;

	(void)mc;
	(void)out;
	(void)out_len;
	(void)errmsg;
	assert_false(r->done); /* exactly once */
	r->done = true;
	r->status = status;
	r->at_ms = clock_now_ms();
}

static void setup(struct fake_mon *f, struct owner *o)
{
	struct fab_domain_attr attr;
	char addr[64];

	memset(f, 0, sizeof(*f));
	memset(o, 0, sizeof(*o));
	fab_domain_attr_init(&attr);
	attr.backend = "tcp";
	assert_int_equal(msgr_create(&attr, &fake_ops, f, &f->m), 0);
	assert_int_equal(msgr_listen(f->m, "127.0.0.1:0"), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", msgr_listen_port(f->m));

	assert_int_equal(conf_create("client.t", &o->conf), 0);
	assert_int_equal(conf_set(o->conf, "mon_host", addr, "test"), 0);
	assert_int_equal(conf_set(o->conf, "ms_type", "tcp", "test"), 0);
	assert_int_equal(conf_set(o->conf, "auth_client_required", "none", "test"), 0);
	fab_domain_attr_from_conf(&attr, o->conf);
	attr.name = "client.t";
	assert_int_equal(fab_domain_open(&attr, &o->dom), 0);
	assert_int_equal(msgr_create_on(o->dom, "client.t", &o->m), 0);
	assert_int_equal(monc_create_on(o->m, o->conf, "client.t", &o->mc), 0);
	monc_deadline_watch(o->mc, owner_deadline_cb, o);
	o->armed_us = monc_next_deadline_us(o->mc);
}

static void teardown(struct fake_mon *f, struct owner *o)
{
	monc_destroy(o->mc);
	msgr_destroy(o->m);
	fab_domain_close(o->dom);
	conf_destroy(o->conf);
	msgr_destroy(f->m);
}

/*
 * One round of the owner's loop: both messengers' frames, and
 * monc_progress only when the armed deadline has come.
 */
static void owner_round(struct fake_mon *f, struct owner *o)
{
	msgr_progress(f->m);
	msgr_progress(o->m);
	if (o->armed_us != UINT64_MAX && clock_now_us() >= o->armed_us) {
		o->armed_us = UINT64_MAX; /* one-shot: monc_progress re-arms it */
		o->progresses++;
		monc_progress(o->mc);
	}
	usleep(200);
}

static void pump(struct fake_mon *f, struct owner *o,
		 bool (*done)(struct fake_mon *, struct owner *, void *), void *arg)
{
	uint64_t end = clock_now_ms() + PUMP_MAX_MS;

	while (!done(f, o, arg)) {
		assert_true(clock_now_ms() < end);
		owner_round(f, o);
	}
}

static bool connected_done(struct fake_mon *f, struct owner *o, void *arg)
{
	(void)arg;
	return monc_connected(o->mc) && f->conn != NULL;
}

static bool reply_done(struct fake_mon *f, struct owner *o, void *arg)
{
	(void)f;
	(void)o;
	return ((struct reply *)arg)->done;
}

static bool cmds_done(struct fake_mon *f, struct owner *o, void *arg)
{
	(void)o;
	return f->cmds >= *(int *)arg;
}

static void test_deadline_idle_and_earliest(void **state)
{
	struct fake_mon f;
	struct owner o;
	struct reply r5 = {0}, r1 = {0}, r3 = {0};
	uint64_t t0, t1, lo3, hi3, d1;
	int notified, three = 3;

	(void)state;
	setup(&f, &o);
	pump(&f, &o, connected_done, NULL);
	/* connected, nothing asked: nothing to wake up for */
	assert_int_equal(monc_next_deadline_us(o.mc), UINT64_MAX);
	assert_int_equal(o.armed_us, UINT64_MAX);

	f.silent = true;
	t0 = clock_now_ms();
	notified = o.notified;
	assert_int_equal(monc_command(o.mc, "{\"prefix\": \"a\"}", 5000, reply_cb, &r5), 0);
	t1 = clock_now_ms();
	assert_true(o.notified > notified); /* the owner was told, without a monc_progress */
	assert_true(o.armed_us >= (t0 + 5000) * 1000 && o.armed_us <= (t1 + 5000) * 1000);

	t0 = clock_now_ms();
	assert_int_equal(monc_command(o.mc, "{\"prefix\": \"b\"}", 1000, reply_cb, &r1), 0);
	t1 = clock_now_ms();
	d1 = monc_next_deadline_us(o.mc);
	assert_true(d1 >= (t0 + 1000) * 1000 && d1 <= (t1 + 1000) * 1000);
	assert_int_equal(o.armed_us, d1);

	lo3 = clock_now_ms() + 3000;
	assert_int_equal(monc_command(o.mc, "{\"prefix\": \"c\"}", 3000, reply_cb, &r3), 0);
	hi3 = clock_now_ms() + 3000;
	/* a later request does not move the earliest */
	assert_int_equal(monc_next_deadline_us(o.mc), d1);
	assert_int_equal(o.armed_us, d1);

	/* the mon saw all three and says nothing: the 1 s one times out on the owner's timer */
	pump(&f, &o, cmds_done, &three);
	pump(&f, &o, reply_done, &r1);
	assert_int_equal(r1.status, -ETIMEDOUT);
	assert_true(r1.at_ms * 1000 >= d1);
	assert_true(r1.at_ms * 1000 < d1 + 1000000); /* within a second: the deadline woke it */
	assert_false(r3.done);
	assert_false(r5.done);
	/* then the next earliest: the 3 s one */
	assert_true(monc_next_deadline_us(o.mc) >= lo3 * 1000 &&
		    monc_next_deadline_us(o.mc) <= hi3 * 1000);
	assert_int_equal(o.armed_us, monc_next_deadline_us(o.mc));

	pump(&f, &o, reply_done, &r3);
	assert_int_equal(r3.status, -ETIMEDOUT);
	pump(&f, &o, reply_done, &r5);
	assert_int_equal(r5.status, -ETIMEDOUT);
	/* idle again */
	assert_int_equal(monc_next_deadline_us(o.mc), UINT64_MAX);
	assert_int_equal(o.armed_us, UINT64_MAX);
	teardown(&f, &o);
}

static bool resend_armed_done(struct fake_mon *f, struct owner *o, void *arg)
{
	return f->cmds >= 1 && o->armed_us < *(uint64_t *)arg;
}

/* -EAGAIN: the reply arriving through the messenger brings the resend forward. */
static void test_deadline_resend(void **state)
{
	struct fake_mon f;
	struct owner o;
	struct reply r = {0};
	uint64_t deadline, start;

	(void)state;
	setup(&f, &o);
	pump(&f, &o, connected_done, NULL);
	f.status = -EAGAIN;
	start = clock_now_ms();
	assert_int_equal(monc_command(o.mc, "{\"prefix\": \"a\"}", 5000, reply_cb, &r), 0);
	deadline = monc_next_deadline_us(o.mc);
	assert_true(deadline >= (start + 5000) * 1000);
	pump(&f, &o, resend_armed_done, &deadline);
	/* the resend is due within the retry pause (300 ms), long before the deadline */
	assert_true(o.armed_us <= clock_now_us() + 300000);
	assert_int_equal(o.armed_us, monc_next_deadline_us(o.mc));

	f.status = 0;
	pump(&f, &o, reply_done, &r);
	assert_int_equal(r.status, 0);
	assert_true(f.cmds >= 2);
	assert_true(r.at_ms < start + 2500); /* resent on the owner's timer, not at the deadline */
	teardown(&f, &o);
}

static bool hunt_armed_done(struct fake_mon *f, struct owner *o, void *arg)
{
	return f->cmds >= 1 && !monc_connected(o->mc) && o->armed_us < *(uint64_t *)arg;
}

/* A lost connection: the hunt for the next monitor is a deadline the owner is told of. */
static void test_deadline_hunt(void **state)
{
	struct fake_mon f;
	struct owner o;
	struct reply r = {0};
	uint64_t deadline, start;

	(void)state;
	setup(&f, &o);
	pump(&f, &o, connected_done, NULL);
	f.drop_next = true;
	start = clock_now_ms();
	assert_int_equal(monc_command(o.mc, "{\"prefix\": \"a\"}", 5000, reply_cb, &r), 0);
	deadline = monc_next_deadline_us(o.mc);
	pump(&f, &o, hunt_armed_done, &deadline);
	/* the next try is due within the hunt pause (200 ms) */
	assert_true(o.armed_us <= clock_now_us() + 200000);

	pump(&f, &o, reply_done, &r);
	assert_int_equal(r.status, 0);
	assert_int_equal(f.cmds, 2); /* sent again on the new connection */
	assert_true(r.at_ms < start + 2500);
	teardown(&f, &o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_deadline_idle_and_earliest),
	    cmocka_unit_test(test_deadline_resend),
	    cmocka_unit_test(test_deadline_hunt),
	};
	struct fab_domain_attr attr;
	struct fab_domain *dom;

	fab_domain_attr_init(&attr);
	attr.backend = "tcp";
	if (fab_domain_open(&attr, &dom) != 0) {
		printf("SKIP: the tcp fabric cannot open here\n");
		return 77;
	}
	fab_domain_close(dom);
	weft_log_set_level(WEFT_LOG_ERROR); /* auth_client_required = none warns */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
