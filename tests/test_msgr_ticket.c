/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The messenger's TICKET handshake (an OSD's connections, docs/security.md):
 * two messengers on 127.0.0.1, the server opening tickets with a set of
 * service keys through auth_ticket_accept (what an OSD's mon client runs),
 * the client presenting a ticket sealed under them.
 *
 * - a good ticket: frames flow both ways, the server sees the ticket's
 *   entity and its caps (osd 'allow r pool=a': reads of a, nothing else);
 * - refused, with the reason and nothing delivered: another entity's
 *   ticket, a ticket with one changed byte, a ticket sealed under a key
 *   the server does not hold (-EAGAIN after the lookup wait), a ticket to a
 *   server that serves keys only (a monitor), a key to a server that
 *   serves tickets only;
 * - no ticket in hand: the connect fails at once with -EAGAIN;
 * - a session ends when its ticket expires (-EKEYEXPIRED at the server).
 * Every wait is bounded.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "auth/session.h"
#include "auth/ticket.h"
#include "common/clock.h"
#include "common/log.h"
#include "fabric/fabric.h"
#include "msgr/msgr.h"

#define TTL_US (3600ull * 1000000)

struct side {
	struct msgr *m;
	struct msgr_conn *conn;
	int pongs, fails, fail_status;
	char why[512];
};

/* What the server holds, and what the client presents. */
static struct auth_svc_keys srv_keys;
static uint8_t sealed[AUTH_TICKET_PLAIN_MAX + AUTH_SEALED_OVERHEAD];
static size_t sealed_len;
static struct auth_key ticket_key;
static bool have_ticket;

static uint64_t wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void recv_cb(struct msgr_conn *conn, const struct proto_hdr *hdr,
		    const struct proto_msg *msg, void *arg)
{
	struct side *s = arg;

	if (s->conn == NULL)
		s->conn = conn;
	if (msg->type == PROTO_PING) {
		struct proto_msg pong = *msg;

		pong.type = PROTO_PONG;
		assert_int_equal(msgr_send(conn, &pong, hdr->tid), 0);
	} else if (msg->type == PROTO_PONG) {
		s->pongs++;
	}
}

static void fail_cb(struct msgr_conn *conn, int status, void *arg)
{
	struct side *s = arg;

	s->fails++;
	s->fail_status = status;
	snprintf(s->why, sizeof(s->why), "%s",
		 msgr_conn_refusal(conn) ? msgr_conn_refusal(conn) : "");
	if (conn == s->conn)
		s->conn = NULL;
	msgr_conn_close(conn);
}

static const struct msgr_ops ops = {.recv_cb = recv_cb, .fail_cb = fail_cb};

static int ticket_cb(void *arg, const uint8_t **t, uint32_t *len, struct auth_key *key_out)
{
	(void)arg;
	if (!have_ticket)
		return -EAGAIN;
	*t = sealed;
	*len = (uint32_t)sealed_len;
	*key_out = ticket_key;
	return 0;
}

static int ticket_open_cb(void *arg, const void *t, size_t len, const char *claimed,
			  struct auth_sess_keys *keys_out, uint64_t *expires_us, char *why,
			  size_t whycap)
{
	int rc = auth_ticket_accept(&srv_keys, t, len, claimed, wall_us(), keys_out, expires_us,
				    why, whycap);

	(void)arg;
	return rc == -ENOKEY ? -EAGAIN : rc; /* as monc_ticket_open: the keys may come */
}

static int lookup_cb(const char *entity, struct auth_sess_keys *keys_out, void *arg)
{
	(void)entity;
	(void)keys_out;
	(void)arg;
	return -ENOENT;
}

/* Keys that seal, and a ticket for entity (caps osd 'allow r pool=a') sealed under them. */
static void make_ticket_with(const struct auth_svc_keys *sk, const char *entity,
			     uint64_t issued_us, uint64_t ttl_us)
{
	struct auth_ticket t;
	struct auth_caps caps;

	memset(&caps, 0, sizeof(caps));
	assert_int_equal(auth_caps_parse(&caps, AUTH_SVC_OSD, "allow r pool=a", NULL, 0), 0);
	assert_int_equal(auth_ticket_issue(entity, &caps, issued_us, ttl_us, &t), 0);
	assert_int_equal(auth_ticket_seal(sk, &t, sealed, sizeof(sealed), &sealed_len), 0);
	ticket_key = t.session;
	have_ticket = true;
}

static void make_ticket(const char *entity, uint64_t issued_us, uint64_t ttl_us)
{
	make_ticket_with(&srv_keys, entity, issued_us, ttl_us);
}

enum srv_kind { SRV_TICKETS, SRV_KEYS_ONLY };

static void pair(struct side *srv, struct side *cli, enum srv_kind kind, bool cli_ticket,
		 char *addr, size_t cap)
{
	static struct auth_key some_key;
	struct msgr_auth sa = {0}, ca = {0};
	struct fab_domain_attr attr;

	fab_domain_attr_init(&attr);
	attr.backend = "tcp";
	attr.msg_size = 4096;
	attr.name = "osd.0";
	assert_int_equal(msgr_create(&attr, &ops, srv, &srv->m), 0);
	attr.name = "client.t";
	assert_int_equal(msgr_create(&attr, &ops, cli, &cli->m), 0);
	sa.fsid = "8d5a4c1e-3b7f-4e2a-9c61-0e4f2a7b9d30";
	sa.require_clients = sa.require_daemons = true;
	if (kind == SRV_TICKETS) {
		sa.self = AUTH_OSD_SERVICE;
		sa.ticket_open = ticket_open_cb;
		sa.ticket_expire = true;
	} else {
		sa.self = "mon.";
		sa.lookup = lookup_cb;
	}
	assert_int_equal(msgr_auth_set(srv->m, &sa), 0);
	ca.fsid = sa.fsid;
	ca.entity = "client.t";
	ca.server = kind == SRV_TICKETS ? AUTH_OSD_SERVICE : "mon.";
	if (cli_ticket) {
		ca.ticket = ticket_cb;
	} else {
		assert_int_equal(auth_key_generate(&some_key), 0);
		ca.key = &some_key;
		ca.server = AUTH_OSD_SERVICE;
	}
	assert_int_equal(msgr_auth_set(cli->m, &ca), 0);
	assert_int_equal(msgr_listen(srv->m, "127.0.0.1:0"), 0);
	snprintf(addr, cap, "127.0.0.1:%u", msgr_listen_port(srv->m));
}

static void pump_until(struct side *a, struct side *b, bool (*done)(struct side *, struct side *))
{
	uint64_t deadline = clock_now_ms() + 20000;

	while (!done(a, b)) {
		assert_true(clock_now_ms() < deadline);
		msgr_progress(a->m);
		msgr_progress(b->m);
	}
}

static bool pongs_done(struct side *cli, struct side *srv)
{
	return cli->pongs == 10 || cli->fails > 0;
}

static bool cli_failed(struct side *cli, struct side *srv)
{
	return cli->fails > 0;
}

static bool srv_failed(struct side *cli, struct side *srv)
{
	return srv->fails > 0 && cli->fails > 0;
}

static void keys_fresh(void)
{
	auth_svc_keys_clear(&srv_keys);
	auth_svc_keys_init(&srv_keys, TTL_US);
	assert_int_equal(auth_svc_rotate(&srv_keys, wall_us()), 0);
}

static void send_pings(struct side *cli, const char *addr)
{
	assert_int_equal(msgr_connect(cli->m, addr, NULL, &cli->conn), 0);
	for (int i = 0; i < 10; i++) {
		struct proto_msg ping = {.type = PROTO_PING};

		ping.ping.seq = (uint64_t)i;
		assert_int_equal(msgr_send(cli->conn, &ping, (uint64_t)i + 1), 0);
	}
}

static void test_ticket_ok(void **state)
{
	struct side srv = {0}, cli = {0};
	const struct auth_caps *caps;
	char addr[64];

	(void)state;
	keys_fresh();
	make_ticket("client.t", wall_us(), TTL_US);
	pair(&srv, &cli, SRV_TICKETS, true, addr, sizeof(addr));
	send_pings(&cli, addr);
	pump_until(&cli, &srv, pongs_done);
	assert_int_equal(cli.pongs, 10);
	assert_non_null(srv.conn);
	assert_string_equal(msgr_conn_entity(srv.conn), "client.t");
	assert_string_equal(msgr_conn_entity(cli.conn), AUTH_OSD_SERVICE);
	caps = msgr_conn_caps(srv.conn);
	assert_non_null(caps);
	assert_true(auth_caps_allow(caps, AUTH_SVC_OSD, "a", AUTH_PERM_R));
	assert_false(auth_caps_allow(caps, AUTH_SVC_OSD, "a", AUTH_PERM_W));
	assert_false(auth_caps_allow(caps, AUTH_SVC_OSD, "b", AUTH_PERM_R));
	assert_int_equal(cli.fails + srv.fails, 0);
	msgr_destroy(cli.m);
	msgr_destroy(srv.m);
}

/* One refusal: the client fails with status and a reason holding want; the server got nothing. */
static void refused(enum srv_kind kind, bool cli_ticket, int status, const char *want)
{
	struct side srv = {0}, cli = {0};
	char addr[64];

	pair(&srv, &cli, kind, cli_ticket, addr, sizeof(addr));
	send_pings(&cli, addr);
	pump_until(&cli, &srv, cli_failed);
	assert_int_equal(cli.fail_status, status);
	if (strstr(cli.why, want) == NULL)
		fail_msg("refusal: '%s', expected '%s' in it", cli.why, want);
	assert_int_equal(cli.pongs, 0);
	assert_null(srv.conn); /* nothing reached the server's owner */
	msgr_destroy(cli.m);
	msgr_destroy(srv.m);
}

static void test_ticket_refused(void **state)
{
	struct auth_svc_keys other;

	(void)state;
	/* another entity's ticket */
	keys_fresh();
	make_ticket("client.other", wall_us(), TTL_US);
	refused(SRV_TICKETS, true, -EACCES, "authentication of client.t failed");
	/* one changed byte anywhere in the sealed ticket */
	make_ticket("client.t", wall_us(), TTL_US);
	sealed[sealed_len / 2] ^= 0x10;
	refused(SRV_TICKETS, true, -EACCES, "authentication of client.t failed");
	/* already expired */
	make_ticket("client.t", wall_us() - TTL_US - 1000000, TTL_US);
	refused(SRV_TICKETS, true, -EACCES, "authentication of client.t failed");
	/* sealed under a key the server does not hold: it cannot tell yet, then gives up */
	auth_svc_keys_init(&other, TTL_US);
	assert_int_equal(auth_svc_rotate(&other, wall_us()), 0);
	assert_int_equal(auth_svc_rotate(&other, wall_us()), 0); /* seals with key 2 */
	make_ticket_with(&other, "client.t", wall_us(), TTL_US); /* the server holds key 1 only */
	auth_svc_keys_clear(&other);
	refused(SRV_TICKETS, true, -EAGAIN, "ticket");
	make_ticket("client.t", wall_us(), TTL_US);
	/* a monitor serves keys, not tickets */
	refused(SRV_KEYS_ONLY, true, -EPROTONOSUPPORT, "method 2 (ticket) is not served");
	/* an OSD serves tickets, not keys */
	refused(SRV_TICKETS, false, -EPROTONOSUPPORT, "only tickets are served here");
}

static void test_ticket_none(void **state)
{
	struct side srv = {0}, cli = {0};
	struct msgr_conn *c = NULL;
	char addr[64];

	(void)state;
	have_ticket = false;
	pair(&srv, &cli, SRV_TICKETS, true, addr, sizeof(addr));
	assert_int_equal(msgr_connect(cli.m, addr, NULL, &c), -EAGAIN);
	msgr_destroy(cli.m);
	msgr_destroy(srv.m);
}

static void test_ticket_expiry_ends_session(void **state)
{
	struct side srv = {0}, cli = {0};
	char addr[64];

	(void)state;
	keys_fresh();
	/* valid for 1.5 s more */
	make_ticket("client.t", wall_us() - TTL_US + 1500000, TTL_US);
	pair(&srv, &cli, SRV_TICKETS, true, addr, sizeof(addr));
	send_pings(&cli, addr);
	pump_until(&cli, &srv, pongs_done);
	assert_int_equal(cli.pongs, 10);
	pump_until(&cli, &srv, srv_failed);
	assert_int_equal(srv.fail_status, -EKEYEXPIRED);
	if (strstr(srv.why, "its ticket expired") == NULL)
		fail_msg("server's reason: '%s'", srv.why);
	msgr_destroy(cli.m);
	msgr_destroy(srv.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ticket_ok),
	    cmocka_unit_test(test_ticket_refused),
	    cmocka_unit_test(test_ticket_none),
	    cmocka_unit_test(test_ticket_expiry_ends_session),
	};
	int rc;

	weft_log_open("test", WEFT_LOG_WARN, NULL);
	rc = cmocka_run_group_tests_name("msgr_ticket", tests, NULL, NULL);
	auth_svc_keys_clear(&srv_keys);
	return rc;
}
