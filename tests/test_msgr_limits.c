/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The messenger's denial-of-service limits (msgr_limits, msgr_conn_pause;
 * docs/security.md, "Denial-of-service limits"), on the TCP backend over
 * loopback, every wait bounded:
 *
 * - test_max_conns: a listener at ms_max_conns closes the next connection
 *   as soon as it is accepted; the peer sees it fail; counted once each.
 * - test_per_ip: ms_max_conns_per_ip counts one peer address; another
 *   address (127.0.0.2) still gets in.
 * - test_unauth_and_deadline: peers that connect and never send their
 *   hello (raw fabric endpoints) fill ms_max_unauth; the next is refused,
 *   an honest messenger too while they hold the slots; the hello deadline
 *   closes them, and then the honest one gets in and is served. One line
 *   per address: every refusal after the first is counted as not logged.
 * - test_pause_resume: a paused connection gets nothing more; its peer
 *   runs out of credits instead of flooding us; after the resume every
 *   frame arrives, in order.
 * - test_credit_withholder: a peer that never gives our credits back and
 *   keeps asking: the answers park up to the limit, then the connection
 *   fails once (-ENOBUFS), counted, nothing dropped silently.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/clock.h"
#include "fabric/fabric.h"
#include "msgr/msgr.h"
#include "proto/hello.h"

#define WAIT_MS 20000

struct side {
	struct msgr *m;
	struct msgr_conn *first; /* the first connection that delivered a frame */
	unsigned int frames, fails, ready;
	uint64_t last_seq;
	bool order_ok;
	bool pause_on_first;
	bool echo; /* answer each PING with a PONG */
	int fail_status;
};

static void recv_cb(struct msgr_conn *conn, const struct proto_hdr *hdr,
		    const struct proto_msg *msg, void *arg)
{
	struct side *s = arg;

	(void)hdr;
	if (msg->type != PROTO_PING)
		return;
	if (s->frames > 0 && msg->ping.seq != s->last_seq + 1)
		s->order_ok = false;
	s->last_seq = msg->ping.seq;
	s->frames++;
	if (s->echo) {
		struct proto_msg pong = *msg;

		pong.type = PROTO_PONG;
		msgr_send(conn, &pong, hdr->tid); /* -ENOBUFS once the peer took too little */
	}
	if (s->first == NULL) {
		s->first = conn;
		if (s->pause_on_first)
			msgr_conn_pause(conn, true);
	}
}

static void fail_cb(struct msgr_conn *conn, int status, void *arg)
{
	struct side *s = arg;

	s->fails++;
	s->fail_status = status;
	if (conn == s->first)
		s->first = NULL;
	msgr_conn_close(conn);
}

static void ready_cb(struct msgr_conn *conn, void *arg)
{
	struct side *s = arg;

	(void)conn;
	s->ready++;
}

static const struct msgr_ops ops = {.recv_cb = recv_cb, .fail_cb = fail_cb, .ready_cb = ready_cb};

static void side_open(struct side *s, const char *name, bool listen, char *addr, size_t cap)
{
	struct fab_domain_attr attr;

	fab_domain_attr_init(&attr);
	attr.backend = "tcp";
	attr.msg_size = 4096;
	attr.recv_credits = 4;
	attr.name = name;
	s->order_ok = true;
	assert_int_equal(msgr_create(&attr, &ops, s, &s->m), 0);
	if (listen) {
		assert_int_equal(msgr_listen(s->m, "127.0.0.1:0"), 0);
		snprintf(addr, cap, "127.0.0.1:%u", msgr_listen_port(s->m));
	}
}

/* Progress both messengers (and the raw domain, if any) until done or WAIT_MS. */
static void pump(struct side *a, struct side *b, struct fab_domain *raw,
		 bool (*done)(struct side *, struct side *))
{
	uint64_t deadline = clock_now_ms() + WAIT_MS;

	while (!done(a, b)) {
		assert_true(clock_now_ms() < deadline);
		msgr_progress(a->m);
		msgr_progress(b->m);
		if (raw != NULL) {
			struct fab_cqe cqe;

			fab_progress(raw, 0);
			while (fab_cq_poll(raw, &cqe, 1) == 1)
				if (cqe.kind == FAB_EV_RECV)
					fab_recv_release(&cqe);
		}
	}
}

static struct msgr_stats stats(const struct side *s)
{
	struct msgr_stats st;

	msgr_stats_get(s->m, &st);
	return st;
}

static bool five_settled(struct side *srv, struct side *cli)
{
	struct msgr_stats st = stats(srv);

	return st.accepted == 3 && st.refused_conns == 2 && cli->fails == 2 && cli->ready == 3;
}

static void test_max_conns(void **state)
{
	struct side srv = {0}, cli = {0};
	struct msgr_limits lim = {.max_conns = 3};
	struct msgr_conn *c[5];
	struct msgr_stats st;
	char addr[64];

	(void)state;
	side_open(&srv, "srv", true, addr, sizeof(addr));
	side_open(&cli, "cli", false, NULL, 0);
	msgr_limits_set(srv.m, &lim);
	for (int i = 0; i < 5; i++)
		assert_int_equal(msgr_connect(cli.m, addr, NULL, &c[i]), 0);
	pump(&srv, &cli, NULL, five_settled);
	st = stats(&srv);
	assert_int_equal(st.conns, 3);
	assert_int_equal(st.unauth, 0);
	assert_int_equal(st.refused_per_ip, 0);
	assert_int_equal(st.refused_unauth, 0);
	assert_int_equal(srv.fails, 0);		/* refused before it was a connection of ours */
	assert_int_equal(st.log_suppressed, 1); /* one line for 127.0.0.1, the second counted */
	msgr_destroy(cli.m);
	msgr_destroy(srv.m);
}

static bool per_ip_settled(struct side *srv, struct side *cli)
{
	struct msgr_stats st = stats(srv);

	return st.accepted == 3 && st.refused_per_ip == 1 && cli->fails == 1 && cli->ready == 3;
}

static void test_per_ip(void **state)
{
	struct side srv = {0}, cli = {0};
	struct msgr_limits lim = {.max_conns = 100, .max_conns_per_ip = 2};
	struct msgr_conn *c;
	char addr[64];

	(void)state;
	side_open(&srv, "srv", true, addr, sizeof(addr));
	side_open(&cli, "cli", false, NULL, 0);
	msgr_limits_set(srv.m, &lim);
	for (int i = 0; i < 3; i++)
		assert_int_equal(msgr_connect(cli.m, addr, NULL, &c), 0);
	/* another address on the same host is another peer */
	assert_int_equal(msgr_connect_ops(cli.m, addr, "127.0.0.2", &ops, &cli, NULL, NULL, &c), 0);
	pump(&srv, &cli, NULL, per_ip_settled);
	assert_int_equal(stats(&srv).refused_conns, 0);
	msgr_destroy(cli.m);
	msgr_destroy(srv.m);
}

static struct fab_ep *raw_eps[8];

static bool unauth_full(struct side *srv, struct side *cli)
{
	struct msgr_stats st = stats(srv);

	(void)cli;
	return st.unauth == 4 && st.refused_unauth == 2;
}

static bool honest_refused(struct side *srv, struct side *cli)
{
	return stats(srv).refused_unauth == 3 && cli->fails == 1;
}

static bool deadline_passed(struct side *srv, struct side *cli)
{
	(void)cli;
	return stats(srv).hello_timeouts == 4 && stats(srv).unauth == 0;
}

static bool honest_served(struct side *srv, struct side *cli)
{
	(void)cli;
	return srv->frames == 3;
}

static void test_unauth_and_deadline(void **state)
{
	struct side srv = {0}, cli = {0};
	struct msgr_limits lim = {.max_conns = 100, .max_unauth = 4, .hello_timeout_ms = 500};
	struct fab_domain_attr attr;
	struct fab_domain *raw;
	struct msgr_conn *c;
	struct msgr_stats st;
	char addr[64];

	(void)state;
	side_open(&srv, "srv", true, addr, sizeof(addr));
	side_open(&cli, "cli", false, NULL, 0);
	msgr_limits_set(srv.m, &lim);
	fab_domain_attr_init(&attr);
	attr.backend = "tcp";
	attr.msg_size = 4096;
	assert_int_equal(fab_domain_open(&attr, &raw), 0);
	/* six peers that never say hello: four slots, two refused */
	for (int i = 0; i < 6; i++)
		assert_int_equal(fab_connect(raw, addr, NULL, NULL, &raw_eps[i]), 0);
	pump(&srv, &cli, raw, unauth_full);
	/* while they hold every slot, an honest peer is refused too (from another address) */
	assert_int_equal(msgr_connect_ops(cli.m, addr, "127.0.0.2", &ops, &cli, NULL, NULL, &c), 0);
	pump(&srv, &cli, raw, honest_refused);
	/* the deadline frees the slots: each silent peer closed, none left counted */
	pump(&srv, &cli, raw, deadline_passed);
	st = stats(&srv);
	assert_int_equal(st.conns, 0);
	assert_int_equal(srv.fails, 4); /* the owner heard of each (-ETIMEDOUT) */
	/*
	 * 127.0.0.1: two refusals and four timeouts, one line; 127.0.0.2: one
	 * line. Everything else counted, not logged.
	 */
	assert_int_equal(st.log_suppressed, 5);
	assert_int_equal(msgr_connect_ops(cli.m, addr, "127.0.0.2", &ops, &cli, NULL, NULL, &c), 0);
	for (uint64_t i = 1; i <= 3; i++) {
		struct proto_msg ping = {.type = PROTO_PING};

		ping.ping.seq = i;
		assert_int_equal(msgr_send(c, &ping, i), 0);
	}
	pump(&srv, &cli, raw, honest_served);
	assert_int_equal(stats(&srv).unauth, 0);
	assert_int_equal(stats(&srv).conns, 1);
	for (int i = 0; i < 6; i++)
		fab_ep_close(raw_eps[i]);
	msgr_destroy(cli.m);
	msgr_destroy(srv.m);
	fab_domain_close(raw);
}

static struct msgr_conn *pause_cli_conn;

static bool sender_stalled(struct side *srv, struct side *cli)
{
	struct fab_ep_stats st;

	(void)cli;
	fab_ep_stats(msgr_conn_ep(pause_cli_conn), &st);
	return srv->frames >= 1 && st.credit_stalls > 0;
}

static bool all_in(struct side *srv, struct side *cli)
{
	(void)cli;
	return srv->frames == 50;
}

static void test_pause_resume(void **state)
{
	struct side srv = {.pause_on_first = true}, cli = {0};
	struct fab_ep_stats st;
	char addr[64];

	(void)state;
	side_open(&srv, "srv", true, addr, sizeof(addr));
	srv.pause_on_first = true;
	side_open(&cli, "cli", false, NULL, 0);
	assert_int_equal(msgr_connect(cli.m, addr, NULL, &pause_cli_conn), 0);
	for (uint64_t i = 1; i <= 50; i++) {
		struct proto_msg ping = {.type = PROTO_PING};

		ping.ping.seq = i;
		assert_int_equal(msgr_send(pause_cli_conn, &ping, i), 0);
	}
	/* the sender runs out of credits: the paused side reads nothing more */
	pump(&srv, &cli, NULL, sender_stalled);
	for (int i = 0; i < 200; i++) {
		msgr_progress(srv.m);
		msgr_progress(cli.m);
	}
	assert_int_equal(srv.frames, 1);
	assert_non_null(srv.first);
	assert_true(msgr_conn_paused(srv.first));
	assert_int_equal(stats(&srv).paused, 1);
	assert_int_equal(stats(&srv).pauses, 1);
	fab_ep_stats(msgr_conn_ep(pause_cli_conn), &st);
	assert_true(st.sends < 50);
	msgr_conn_pause(srv.first, false);
	pump(&srv, &cli, NULL, all_in);
	assert_true(srv.order_ok);
	assert_int_equal(stats(&srv).paused, 0);
	/* paused again with frames waiting, then closed: their buffers go back (ASan sees) */
	msgr_conn_pause(srv.first, true);
	msgr_destroy(cli.m);
	msgr_destroy(srv.m);
}

static bool overflowed(struct side *srv, struct side *cli)
{
	(void)cli;
	return srv->fails == 1;
}

/*
 * A peer that takes nothing (it never gives a receive buffer back, so we
 * never get a credit) and keeps asking: our answers park up to the limit,
 * then the connection fails once with -ENOBUFS; no frame is dropped
 * silently and nothing spins meanwhile.
 */
static void test_credit_withholder(void **state)
{
	struct side srv = {0}, cli = {0};
	struct fab_domain_attr attr;
	struct fab_domain *raw;
	struct fab_cqe cqe, kept[4];
	struct fab_ep *ep;
	struct proto_hello h;
	unsigned int nkept = 0, sent = 0;
	uint64_t deadline = clock_now_ms() + WAIT_MS;
	bool connected = false;
	size_t len;
	char addr[64];
	static uint8_t frame[512];

	(void)state;
	side_open(&srv, "srv", true, addr, sizeof(addr));
	srv.echo = true;
	fab_domain_attr_init(&attr);
	attr.backend = "tcp";
	attr.msg_size = 4096;
	attr.recv_credits = 2; /* and none of them ever given back */
	assert_int_equal(fab_domain_open(&attr, &raw), 0);
	assert_int_equal(fab_connect(raw, addr, NULL, NULL, &ep), 0);
	proto_hello_init(&h, "client.greedy");
	assert_int_equal(proto_hello_frame(&h, frame, sizeof(frame), &len), 0);
	assert_int_equal(fab_send(ep, frame, len, NULL), 0);
	/* pings until the server gives up on us: each one it answers parks an answer */
	while (srv.fails == 0) {
		assert_true(clock_now_ms() < deadline);
		msgr_progress(srv.m);
		fab_progress(raw, 0);
		while (fab_cq_poll(raw, &cqe, 1) == 1) {
			if (cqe.kind == FAB_EV_CONNECTED && cqe.status == 0)
				connected = true;
			if (cqe.kind == FAB_EV_RECV) {
				assert_true(nkept < 4);
				kept[nkept++] = cqe; /* held: no credit goes back */
			}
		}
		for (int i = 0; connected && i < 64; i++) {
			struct proto_msg ping = {.type = PROTO_PING};

			ping.ping.seq = sent + 1;
			assert_int_equal(
			    proto_frame_encode(&ping, sent + 1, frame, sizeof(frame), &len), 0);
			if (fab_send(ep, frame, len, NULL) != 0)
				break; /* our queue is full: the server reads on */
			sent++;
		}
	}
	pump(&srv, &cli, NULL, overflowed);
	assert_int_equal(stats(&srv).send_overflows, 1);
	assert_int_equal(srv.fail_status, -ENOBUFS);
	assert_true(srv.frames > 4096); /* every ping was read; the answers were what piled up */
	for (unsigned int i = 0; i < nkept; i++)
		fab_recv_release(&kept[i]);
	fab_ep_close(ep);
	fab_domain_close(raw);
	msgr_destroy(cli.m);
	msgr_destroy(srv.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_max_conns),		cmocka_unit_test(test_per_ip),
	    cmocka_unit_test(test_unauth_and_deadline), cmocka_unit_test(test_pause_resume),
	    cmocka_unit_test(test_credit_withholder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
