/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Connection hello (proto/hello.h): the verdict on two hellos, and the
 * messenger refusing a peer on both sides. Two messengers in one thread
 * over TCP on 127.0.0.1 (ephemeral ports); every wait is bounded.
 *
 * - compatible hellos pass both ways and frames flow;
 * - a peer that requires a feature bit this build does not know is refused
 *   by us, and it refuses us for lacking it: both fail_cb(-EPROTONOSUPPORT),
 *   no frame of either reaches recv_cb, and both refusal lines name both
 *   versions;
 * - a peer whose first frame is not a hello (a build older than hellos) is
 *   refused with a line saying what it sent.
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
#include "common/version.h"
#include "fabric/fabric.h"
#include "msgr/msgr.h"
#include "proto/hello.h"

#define FEAT_FUTURE (1ull << 40)

struct side {
	struct msgr *m;
	int recvs, fails, last_status;
	char refusal[PROTO_HELLO_WHY_MAX];
};

static void recv_cb(struct msgr_conn *conn, const struct proto_hdr *hdr,
		    const struct proto_msg *msg, void *arg)
{
	struct side *s = arg;

	s->recvs++;
	if (msg->type == PROTO_PING) {
		struct proto_msg pong = *msg;

		pong.type = PROTO_PONG;
		msgr_send(conn, &pong, hdr->tid);
	}
}

static void fail_cb(struct msgr_conn *conn, int status, void *arg)
{
	struct side *s = arg;
	const char *why = msgr_conn_refusal(conn);

	s->fails++;
	s->last_status = status;
	snprintf(s->refusal, sizeof(s->refusal), "%s", why ? why : "");
	msgr_conn_close(conn);
}

static const struct msgr_ops ops = {.recv_cb = recv_cb, .fail_cb = fail_cb};

static void future_hello(struct proto_hello *h, const char *name)
{
	proto_hello_init(h, name);
	h->features |= FEAT_FUTURE;
	h->required |= FEAT_FUTURE;
	snprintf(h->version, sizeof(h->version), "9.0.0 (git 0123456789ab)");
	h->version_len = strlen(h->version);
}

static void test_check_rules(void **state)
{
	struct proto_hello a, b, f;
	char why[PROTO_HELLO_WHY_MAX];

	proto_hello_init(&a, "osd.1");
	proto_hello_init(&b, "client.admin");
	assert_int_equal(a.entity_type, PROTO_ENTITY_OSD);
	assert_int_equal(b.entity_type, PROTO_ENTITY_CLIENT);
	assert_string_equal(a.version, weft_version_full());
	assert_true(a.nonce != 0 && a.nonce == b.nonce); /* one per process */
	assert_int_equal(proto_hello_check(&a, &b, "127.0.0.1:1", why, sizeof(why)), 0);
	assert_int_equal(proto_hello_check(&b, &a, NULL, why, sizeof(why)), 0);
	assert_true(proto_hello_common(&a, &b) == PROTO_FEATS_SUPPORTED);

	/* the future peer requires what we lack: refused, both versions named */
	future_hello(&f, "osd.7");
	assert_int_equal(proto_hello_check(&a, &f, "198.19.0.7:6800", why, sizeof(why)),
			 -EPROTONOSUPPORT);
	assert_non_null(strstr(why, "osd.7 at 198.19.0.7:6800 (weft 9.0.0 (git 0123456789ab)"));
	assert_non_null(strstr(why, "requires feature bits 0x10000000000"));
	assert_non_null(strstr(why, weft_version_full()));
	/* and it refuses us for lacking that bit */
	assert_int_equal(proto_hello_check(&f, &a, NULL, why, sizeof(why)), -EPROTONOSUPPORT);
	assert_non_null(strstr(why, "lacks feature bits 0x10000000000"));
	assert_non_null(strstr(why, "9.0.0"));
	assert_non_null(strstr(why, weft_version_full()));

	/* knowing the bit without requiring it is fine both ways */
	f.required &= ~FEAT_FUTURE;
	assert_int_equal(proto_hello_check(&a, &f, NULL, why, sizeof(why)), 0);
	assert_int_equal(proto_hello_check(&f, &a, NULL, why, sizeof(why)), 0);
	assert_true(proto_hello_common(&a, &f) == PROTO_FEATS_SUPPORTED);

	/* a peer without a feature we require */
	f = b;
	f.features &= ~PROTO_FEAT_BULK;
	f.required &= ~PROTO_FEAT_BULK;
	assert_int_equal(proto_hello_check(&a, &f, NULL, why, sizeof(why)), -EPROTONOSUPPORT);
	assert_non_null(strstr(why, "lacks feature bits 0x2"));

	/* an old first frame */
	proto_hello_unexpected(PROTO_OSD_OP, "127.0.0.1:9", why, sizeof(why));
	assert_non_null(strstr(why, "first message is osd_op, not hello"));
}

static void pump(struct side *a, struct side *b, int want_fails_a, int want_fails_b,
		 int want_recvs_a)
{
	uint64_t deadline = clock_now_ms() + 20000;

	while (a->fails < want_fails_a || b->fails < want_fails_b || a->recvs < want_recvs_a) {
		assert_true(clock_now_ms() < deadline);
		msgr_progress(a->m);
		msgr_progress(b->m);
	}
}

static void pair(struct side *srv, struct side *cli, struct msgr_conn **conn_out)
{
	struct fab_domain_attr attr;
	char addr[64];

	fab_domain_attr_init(&attr);
	attr.backend = "tcp";
	attr.msg_size = 4096;
	attr.name = "mon.a";
	assert_int_equal(msgr_create(&attr, &ops, srv, &srv->m), 0);
	attr.name = "client.admin";
	assert_int_equal(msgr_create(&attr, &ops, cli, &cli->m), 0);
	assert_int_equal(msgr_listen(srv->m, "127.0.0.1:0"), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", msgr_listen_port(srv->m));
	assert_int_equal(msgr_connect(cli->m, addr, NULL, conn_out), 0);
}

static void test_msgr_compatible(void **state)
{
	struct side srv = {0}, cli = {0};
	struct proto_msg ping = {.type = PROTO_PING};
	struct msgr_conn *c;

	pair(&srv, &cli, &c);
	/* sent before the server's hello arrived: queued behind ours, delivered after */
	assert_int_equal(msgr_send(c, &ping, 1), 0);
	pump(&cli, &srv, 0, 0, 1);
	assert_int_equal(srv.recvs, 1);
	assert_int_equal(cli.recvs, 1);
	assert_non_null(msgr_conn_peer_hello(c));
	assert_string_equal(msgr_conn_peer_hello(c)->name, "mon.a");
	assert_int_equal(srv.fails + cli.fails, 0);
	msgr_destroy(cli.m);
	msgr_destroy(srv.m);
}

static void test_msgr_refuses_both_sides(void **state)
{
	struct side srv = {0}, cli = {0};
	struct proto_msg ping = {.type = PROTO_PING};
	struct proto_hello fut;
	struct msgr_conn *c;

	pair(&srv, &cli, &c);
	/* too late for the connection made by pair(): a second one carries it */
	msgr_conn_close(c);
	future_hello(&fut, "client.future");
	msgr_hello_set(cli.m, &fut);
	{
		char addr[64];

		snprintf(addr, sizeof(addr), "127.0.0.1:%u", msgr_listen_port(srv.m));
		assert_int_equal(msgr_connect(cli.m, addr, NULL, &c), 0);
	}
	assert_int_equal(msgr_send(c, &ping, 1), 0);
	/* the first (closed) connection may or may not have reached the server */
	pump(&cli, &srv, 1, 1, 0);
	assert_int_equal(cli.last_status, -EPROTONOSUPPORT);
	assert_int_equal(srv.last_status, -EPROTONOSUPPORT);
	assert_int_equal(srv.recvs, 0); /* the ping was never delivered */
	assert_int_equal(cli.recvs, 0);
	/* the server: the peer requires what it lacks; both versions in the line */
	assert_non_null(strstr(srv.refusal, "client.future"));
	assert_non_null(strstr(srv.refusal, "9.0.0"));
	assert_non_null(strstr(srv.refusal, "requires feature bits 0x10000000000"));
	assert_non_null(strstr(srv.refusal, weft_version_full()));
	/* the future client: the server lacks what it requires */
	assert_non_null(strstr(cli.refusal, "mon.a"));
	assert_non_null(strstr(cli.refusal, "lacks feature bits 0x10000000000"));
	assert_non_null(strstr(cli.refusal, weft_version_full()));
	msgr_destroy(cli.m);
	msgr_destroy(srv.m);
}

/* A raw fabric peer that skips the hello: its first frame is a ping. */
static void test_msgr_refuses_no_hello(void **state)
{
	struct fab_domain_attr attr;
	struct side srv = {0};
	struct fab_domain *dom;
	struct fab_ep *ep;
	struct proto_msg ping = {.type = PROTO_PING};
	uint8_t buf[256];
	char addr[64];
	size_t len;
	uint64_t deadline = clock_now_ms() + 20000;

	fab_domain_attr_init(&attr);
	attr.backend = "tcp";
	attr.msg_size = 4096;
	attr.name = "mon.a";
	assert_int_equal(msgr_create(&attr, &ops, &srv, &srv.m), 0);
	assert_int_equal(msgr_listen(srv.m, "127.0.0.1:0"), 0);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", msgr_listen_port(srv.m));
	attr.name = "old";
	assert_int_equal(fab_domain_open(&attr, &dom), 0);
	assert_int_equal(fab_connect(dom, addr, NULL, NULL, &ep), 0);
	assert_int_equal(proto_frame_encode(&ping, 1, buf, sizeof(buf), &len), 0);
	assert_int_equal(fab_send(ep, buf, len, NULL), 0);
	while (srv.fails == 0) {
		struct fab_cqe cqe;

		assert_true(clock_now_ms() < deadline);
		msgr_progress(srv.m);
		fab_progress(dom, 0);
		while (fab_cq_poll(dom, &cqe, 1) == 1)
			if (cqe.kind == FAB_EV_RECV)
				fab_recv_release(&cqe);
	}
	assert_int_equal(srv.last_status, -EPROTONOSUPPORT);
	assert_int_equal(srv.recvs, 0);
	assert_non_null(strstr(srv.refusal, "first message is ping, not hello"));
	fab_ep_close(ep);
	fab_domain_close(dom);
	msgr_destroy(srv.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_check_rules),
	    cmocka_unit_test(test_msgr_compatible),
	    cmocka_unit_test(test_msgr_refuses_both_sides),
	    cmocka_unit_test(test_msgr_refuses_no_hello),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
