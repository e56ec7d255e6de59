/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The TCP backend against a hostile peer: a raw socket that speaks garbage,
 * lies about lengths and credits, or hangs up mid-frame. Each case must end
 * in a closed connection and a log line, never a crash or a hang.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/log.h"
#include "fabric/tcp/tcp.h"
#include "tests/fabric_harness.h"

struct srv {
	struct fh_side s;
	struct fab_listener *l;
	int fd; /* the raw peer */
};

static void srv_open_credits(struct srv *v, uint32_t credits)
{
	struct sockaddr_in sin = {.sin_family = AF_INET};

	fh_side_init(&v->s, fh_domain_open(1024, credits, 16));
	assert_non_null(v->s.dom);
	assert_int_equal(fab_listen(v->s.dom, "127.0.0.1:0", NULL, &v->l), 0);
	sin.sin_port = htons(fab_listener_port(v->l));
	inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
	v->fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(connect(v->fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
}

static void srv_open(struct srv *v)
{
	srv_open_credits(v, 4);
}

static void srv_close(struct srv *v)
{
	if (v->fd >= 0)
		close(v->fd);
	fh_side_fini(&v->s);
}

static void raw_send(int fd, const void *p, size_t n)
{
	assert_int_equal(send(fd, p, n, MSG_NOSIGNAL), (ssize_t)n);
}

static void raw_frame(int fd, uint8_t type, uint16_t credits, uint32_t len, uint64_t id,
		      uint64_t addr, uint64_t key, uint32_t imm)
{
	struct tcp_hdr h = {.type = type,
			    .credits = credits,
			    .len = len,
			    .id = id,
			    .addr = addr,
			    .key = key,
			    .imm = imm};
	uint8_t b[TCP_HDR_LEN];

	tcp_hdr_encode(&h, b);
	raw_send(fd, b, sizeof(b));
}

static void raw_hello_flags(int fd, uint32_t magic, uint32_t credits, uint8_t flags,
			    uint32_t sq_depth)
{
	/* magic, version, receive credits, message size, send-queue depth */
	uint32_t p[5] = {htole32(magic), htole32(TCP_VERSION), htole32(credits), htole32(1024),
			 htole32(sq_depth)};
	struct tcp_hdr h = {.type = TCP_F_HELLO, .flags = flags, .len = TCP_HELLO_LEN};
	uint8_t b[TCP_HDR_LEN];

	tcp_hdr_encode(&h, b);
	raw_send(fd, b, sizeof(b));
	raw_send(fd, p, sizeof(p));
}

/* A peer of 0.1, which knows nothing of write acks in flags. */
static void raw_hello(int fd, uint32_t magic, uint32_t credits)
{
	raw_hello_flags(fd, magic, credits, 0, 4);
}

/* The server's socket to the raw peer is closed: our recv sees EOF or a reset. */
static bool raw_closed(struct srv *v)
{
	struct fh_side *sides[1] = {&v->s};
	char buf[4096];

	for (int i = 0; i < 6000; i++) {
		fh_pump(sides, 1);
		ssize_t n = recv(v->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return true;
		usleep(1000);
	}
	return false;
}

static void test_garbage_before_handshake(void **state)
{
	struct srv v;
	uint8_t junk[64];

	srv_open(&v);
	memset(junk, 0xa5, sizeof(junk));
	raw_send(v.fd, junk, sizeof(junk));
	assert_true(raw_closed(&v));
	/* Never reported: the user never learns of a peer that did not handshake. */
	assert_int_equal(fh_count(&v.s, FAB_EV_ACCEPTED), 0);
	srv_close(&v);
}

static void test_bad_hello(void **state)
{
	struct srv v;

	srv_open(&v);
	raw_hello(v.fd, 0xdeadbeef, 4);
	assert_true(raw_closed(&v));
	assert_int_equal(fh_count(&v.s, FAB_EV_ACCEPTED), 0);
	srv_close(&v);
}

/* Handshake properly, then misbehave with frame f; expect -EPROTO. */
static void expect_proto_error(void (*misbehave)(int fd))
{
	struct srv v;
	struct fh_side *sides[1];
	struct fab_cqe cqe;

	srv_open(&v);
	sides[0] = &v.s;
	raw_hello(v.fd, TCP_MAGIC, 4);
	assert_true(fh_wait(sides, 1, &v.s, FAB_EV_ACCEPTED, NULL, &cqe));
	misbehave(v.fd);
	assert_true(fh_wait(sides, 1, &v.s, FAB_EV_PEER_FAILED, NULL, &cqe));
	assert_int_equal(cqe.status, -EPROTO);
	fab_ep_close(cqe.ep);
	srv_close(&v);
}

static void bad_type(int fd)
{
	raw_frame(fd, 200, 0, 0, 0, 0, 0, 0);
}

static void msg_too_long(int fd)
{
	raw_frame(fd, TCP_F_MSG, 0, 1u << 30, 0, 0, 0, 0);
}

static void beyond_credits(int fd)
{
	/* The server gave 4 credits; the fifth message breaks the contract. */
	for (int i = 0; i < 5; i++) {
		raw_frame(fd, TCP_F_MSG, 0, 1, 0, 0, 0, 0);
		raw_send(fd, "x", 1);
	}
}

static void too_many_credits_back(int fd)
{
	raw_frame(fd, TCP_F_CREDIT, 60000, 0, 0, 0, 0, 0);
}

static void unsolicited_ack(int fd)
{
	raw_frame(fd, TCP_F_WRITE_ACK, 0, 0, 12345, 0, 0, 0);
}

static void read_req_with_payload(int fd)
{
	raw_frame(fd, TCP_F_READ_REQ, 0, 10, 1, 0, 0, 10);
}

static void second_hello(int fd)
{
	raw_hello(fd, TCP_MAGIC, 4);
}

static void test_protocol_violations(void **state)
{
	expect_proto_error(bad_type);
	expect_proto_error(msg_too_long);
	expect_proto_error(beyond_credits);
	expect_proto_error(too_many_credits_back);
	expect_proto_error(unsolicited_ack);
	expect_proto_error(read_req_with_payload);
	expect_proto_error(second_hello);
}

/* A raw write into a made-up address is refused and answered, not obeyed. */
static void test_forged_write(void **state)
{
	struct srv v;
	struct fh_side *sides[1];
	struct fab_cqe cqe;
	uint8_t ans[TCP_HDR_LEN];
	struct tcp_hdr h;
	char payload[100] = {0};

	srv_open(&v);
	sides[0] = &v.s;
	raw_hello(v.fd, TCP_MAGIC, 4);
	assert_true(fh_wait(sides, 1, &v.s, FAB_EV_ACCEPTED, NULL, &cqe));
	raw_frame(v.fd, TCP_F_WRITE, 0, sizeof(payload), 77, (uint64_t)(uintptr_t)&v, 0x1234, 0);
	raw_send(v.fd, payload, sizeof(payload));
	/* Skip the server's HELLO, then read its answer. */
	for (int got = 0, i = 0; i < 2000 && got < 2; i++) {
		fh_pump(sides, 1);
		ssize_t n = recv(v.fd, ans, sizeof(ans), MSG_DONTWAIT | MSG_PEEK);

		if (n == TCP_HDR_LEN) {
			tcp_hdr_decode(ans, &h);
			size_t skip = TCP_HDR_LEN + (h.type == TCP_F_HELLO ? TCP_HELLO_LEN : 0);
			char sink[TCP_HDR_LEN + TCP_HELLO_LEN];

			assert_int_equal(recv(v.fd, sink, skip, MSG_WAITALL), (ssize_t)skip);
			got++;
		} else {
			usleep(1000);
		}
	}
	assert_int_equal(h.type, TCP_F_WRITE_ACK);
	assert_int_equal(h.id, 77);
	assert_int_equal(h.status, -EACCES);
	srv_close(&v);
}

/*
 * A peer that floods read requests and never reads the answers: the answers
 * it is owed may not exceed the sq_depth it announced (4), so the target
 * drops it instead of queueing without bound.
 */
static void test_unread_answers_bounded(void **state)
{
	struct srv v;
	struct fh_side *sides[1];
	struct fab_cqe cqe;
	struct tcp_hdr h = {.type = TCP_F_READ_REQ, .key = 0xdead, .imm = 8};
	static uint8_t b[1638 * TCP_HDR_LEN]; /* 64 KiB of requests per send */
	bool failed = false;

	srv_open(&v);
	sides[0] = &v.s;
	raw_hello(v.fd, TCP_MAGIC, 4);
	assert_true(fh_wait(sides, 1, &v.s, FAB_EV_ACCEPTED, NULL, &cqe));
	struct timeval tv = {.tv_sec = 1};

	/* A send that would block (the server stopped reading) fails instead of hanging. */
	setsockopt(v.fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (size_t i = 0; i < sizeof(b); i += TCP_HDR_LEN)
		tcp_hdr_encode(&h, b + i);
	/* Bounded: 64 MB of requests at most; the socket buffers fill long before. */
	for (int i = 0; i < 1024 && !failed; i++) {
		/* Whole frames only: a partial send would desynchronise the stream. */
		if (send(v.fd, b, sizeof(b), MSG_NOSIGNAL) < 0)
			break; /* the server closed on us */
		fh_pump(sides, 1);
		failed = fh_count(&v.s, FAB_EV_PEER_FAILED) > 0;
	}
	assert_true(fh_wait(sides, 1, &v.s, FAB_EV_PEER_FAILED, NULL, &cqe));
	assert_int_equal(cqe.status, -EPROTO);
	fab_ep_close(cqe.ep);
	srv_close(&v);
}

/* The peer hangs up in the middle of a frame. */
static void test_truncated_frame(void **state)
{
	struct srv v;
	struct fh_side *sides[1];
	struct fab_cqe cqe;

	srv_open(&v);
	sides[0] = &v.s;
	raw_hello(v.fd, TCP_MAGIC, 4);
	assert_true(fh_wait(sides, 1, &v.s, FAB_EV_ACCEPTED, NULL, &cqe));
	raw_frame(v.fd, TCP_F_MSG, 0, 500, 0, 0, 0, 0);
	raw_send(v.fd, "partial", 7);
	close(v.fd);
	v.fd = -1;
	assert_true(fh_wait(sides, 1, &v.s, FAB_EV_PEER_FAILED, NULL, &cqe));
	assert_int_equal(fh_count(&v.s, FAB_EV_RECV), 0);
	fab_ep_close(cqe.ep);
	srv_close(&v);
}

/* The next whole frame header the server sends (HELLO's payload skipped); false if none came. */
static bool raw_next_frame(struct srv *v, struct tcp_hdr *h)
{
	struct fh_side *sides[1] = {&v->s};
	uint8_t b[TCP_HDR_LEN];

	for (int i = 0; i < 3000; i++) {
		fh_pump(sides, 1);
		if (recv(v->fd, b, sizeof(b), MSG_DONTWAIT | MSG_PEEK) == TCP_HDR_LEN) {
			uint8_t sink[TCP_HDR_LEN + TCP_HELLO_LEN];
			size_t skip;

			tcp_hdr_decode(b, h);
			skip = TCP_HDR_LEN + (h->type == TCP_F_HELLO ? TCP_HELLO_LEN : 0);
			assert_int_equal(recv(v->fd, sink, skip, MSG_WAITALL), (ssize_t)skip);
			return true;
		}
		usleep(1000);
	}
	return false;
}

/* Receive n messages from the raw peer, giving each buffer back at once. */
static void recv_release_n(struct srv *v, int n)
{
	struct fh_side *sides[1] = {&v->s};
	struct fab_cqe cqe;

	for (int i = 0; i < n; i++) {
		assert_true(fh_wait(sides, 1, &v->s, FAB_EV_RECV, NULL, &cqe));
		fab_recv_release(&cqe);
	}
	for (int i = 0; i < 20; i++)
		fh_pump(sides, 1); /* whatever the release makes it send, it sends now */
}

/*
 * Released receive buffers are not each answered by a lone CREDIT frame:
 * with a window of 16, credits gather until a quarter of it (4) is owed and
 * then go in one frame (or ride on the next frame sent anyway). One message,
 * released, then three more: the first frame after the HELLO returns 4.
 */
static void test_credits_batched(void **state)
{
	struct srv v;
	struct fh_side *sides[1];
	struct fab_cqe cqe;
	struct tcp_hdr h;
	char payload[10] = "credits";

	srv_open_credits(&v, 16);
	sides[0] = &v.s;
	raw_hello(v.fd, TCP_MAGIC, 4);
	assert_true(fh_wait(sides, 1, &v.s, FAB_EV_ACCEPTED, NULL, &cqe));
	assert_true(raw_next_frame(&v, &h));
	assert_int_equal(h.type, TCP_F_HELLO);
	raw_frame(v.fd, TCP_F_MSG, 0, sizeof(payload), 0, 0, 0, 0);
	raw_send(v.fd, payload, sizeof(payload));
	recv_release_n(&v, 1);
	for (int i = 0; i < 3; i++) {
		raw_frame(v.fd, TCP_F_MSG, 0, sizeof(payload), 0, 0, 0, 0);
		raw_send(v.fd, payload, sizeof(payload));
	}
	recv_release_n(&v, 3);
	assert_true(raw_next_frame(&v, &h));
	assert_int_equal(h.type, TCP_F_CREDIT);
	assert_int_equal(h.credits, 4);
	srv_close(&v);
}

/* The next frame the server sends, its payload read and dropped; false if none came. */
static bool raw_next_any(struct srv *v, struct tcp_hdr *h)
{
	static uint8_t sink[64 * 1024];

	if (!raw_next_frame(v, h))
		return false;
	if (h->type != TCP_F_HELLO && h->len > 0) {
		assert_true(h->len <= sizeof(sink));
		assert_int_equal(recv(v->fd, sink, h->len, MSG_WAITALL), (ssize_t)h->len);
	}
	return true;
}

/*
 * Frames until one of type `until`: the write acks they carry, in total
 * (a lone CREDIT may come first when the machine is slow enough for the
 * ack delay to pass). No WRITE_ACK before it, unless that is `until`.
 */
static unsigned int raw_acks_until(struct srv *v, uint8_t until, struct tcp_hdr *h)
{
	unsigned int acks = 0;

	for (int i = 0; i < 10; i++) {
		assert_true(raw_next_any(v, h));
		acks += h->flags;
		if (h->type == until)
			return acks;
		assert_int_equal(h->type, TCP_F_CREDIT);
	}
	fail_msg("no frame of type %u", until);
	return 0;
}

struct wack_target {
	struct srv v;
	struct fh_side *sides[1];
	struct fab_ep *ep;
	struct fab_mr *mr;
	struct fab_rkey rk;
	uint8_t region[8192];
};

/* The server with a writable region, a raw peer that announced write acks (or not). */
static void wack_open(struct wack_target *t, uint8_t hello_flags)
{
	struct fab_cqe cqe;
	struct tcp_hdr h;

	srv_open_credits(&t->v, 16);
	t->sides[0] = &t->v.s;
	raw_hello_flags(t->v.fd, TCP_MAGIC, 16, hello_flags, 64);
	assert_true(fh_wait(t->sides, 1, &t->v.s, FAB_EV_ACCEPTED, NULL, &cqe));
	t->ep = cqe.ep;
	assert_true(raw_next_frame(&t->v, &h));
	assert_int_equal(h.type, TCP_F_HELLO);
	assert_int_equal(h.flags, TCP_HELLO_F_WACKS); /* this build offers them */
	assert_int_equal(
	    fab_mr_reg(t->v.s.dom, t->region, sizeof(t->region), FAB_ACCESS_REMOTE_WRITE, &t->mr),
	    0);
	fab_mr_rkey(t->mr, &t->rk);
}

static void wack_close(struct wack_target *t)
{
	fab_mr_dereg(t->mr);
	srv_close(&t->v);
}

static void wack_write(struct wack_target *t, uint8_t type, uint64_t id, uint64_t off, uint64_t key)
{
	char payload[64];

	memset(payload, (int)id, sizeof(payload));
	raw_frame(t->v.fd, type, 0, sizeof(payload), id, t->rk.addr + off, key, (uint32_t)id);
	raw_send(t->v.fd, payload, sizeof(payload));
}

/*
 * Between peers that both offer it, placed write_imms get no WRITE_ACK
 * frame: their acks ride in the flags of the next frame the target sends
 * (here the application's answer): three writes, no frame of their own
 * unless the ack delay passed first.
 */
static void test_wacks_ride_on_answers(void **state)
{
	struct wack_target t;
	struct fab_cqe cqe;
	struct tcp_hdr h;
	char answer[16] = "acked";

	(void)state;
	wack_open(&t, TCP_HELLO_F_WACKS);
	for (uint64_t i = 1; i <= 3; i++)
		wack_write(&t, TCP_F_WRITE_IMM, i, i * 64, t.rk.key);
	for (int i = 0; i < 3; i++)
		assert_true(fh_wait(t.sides, 1, &t.v.s, FAB_EV_WRITE_IMM, NULL, &cqe));
	assert_int_equal(t.region[64], 1);
	assert_int_equal(t.region[3 * 64], 3);
	assert_int_equal(fab_send(t.ep, answer, sizeof(answer), NULL), 0);
	assert_int_equal(raw_acks_until(&t.v, TCP_F_MSG, &h), 3);
	wack_close(&t);
}

/* With nothing to ride on, a write_imm's ack goes alone after its delay. */
static void test_wacks_alone_after_delay(void **state)
{
	struct wack_target t;
	struct fab_cqe cqe;
	struct tcp_hdr h;

	(void)state;
	wack_open(&t, TCP_HELLO_F_WACKS);
	wack_write(&t, TCP_F_WRITE_IMM, 9, 0, t.rk.key);
	assert_true(fh_wait(t.sides, 1, &t.v.s, FAB_EV_WRITE_IMM, NULL, &cqe));
	assert_true(raw_next_any(&t.v, &h));
	assert_int_equal(h.type, TCP_F_CREDIT);
	assert_int_equal(h.flags, 1);
	/* a plain write (nobody here answers it) is acked with the next flush */
	wack_write(&t, TCP_F_WRITE, 10, 128, t.rk.key);
	assert_true(raw_next_any(&t.v, &h));
	assert_int_equal(h.type, TCP_F_CREDIT);
	assert_int_equal(h.flags, 1);
	wack_close(&t);
}

/*
 * A refused write among placed ones: its WRITE_ACK carries the acks of the
 * writes before it and names it; the writes after it are acked later. So
 * the initiator completes them in order: ok, refused, ok.
 */
static void test_wacks_refusal_keeps_order(void **state)
{
	struct wack_target t;
	struct fab_cqe cqe;
	struct tcp_hdr h;
	char answer[8] = "x";

	(void)state;
	wack_open(&t, TCP_HELLO_F_WACKS);
	wack_write(&t, TCP_F_WRITE_IMM, 1, 0, t.rk.key);
	wack_write(&t, TCP_F_WRITE_IMM, 2, 64, t.rk.key);
	wack_write(&t, TCP_F_WRITE, 3, 64, 0xbad);
	wack_write(&t, TCP_F_WRITE_IMM, 4, 128, t.rk.key);
	assert_int_equal(raw_acks_until(&t.v, TCP_F_WRITE_ACK, &h), 2);
	assert_int_equal(h.id, 3);
	assert_int_equal(h.status, -EACCES);
	for (int i = 0; i < 3; i++)
		assert_true(fh_wait(t.sides, 1, &t.v.s, FAB_EV_WRITE_IMM, NULL, &cqe));
	assert_int_equal(fab_send(t.ep, answer, sizeof(answer), NULL), 0);
	assert_int_equal(raw_acks_until(&t.v, TCP_F_MSG, &h), 1);
	wack_close(&t);
}

/* A 0.1 peer (no flag in its HELLO) gets a WRITE_ACK per write, flags 0. */
static void test_wacks_legacy_peer(void **state)
{
	struct wack_target t;
	struct fab_cqe cqe;
	struct tcp_hdr h;

	(void)state;
	wack_open(&t, 0);
	wack_write(&t, TCP_F_WRITE_IMM, 5, 0, t.rk.key);
	assert_true(fh_wait(t.sides, 1, &t.v.s, FAB_EV_WRITE_IMM, NULL, &cqe));
	assert_true(raw_next_any(&t.v, &h));
	assert_int_equal(h.type, TCP_F_WRITE_ACK);
	assert_int_equal(h.id, 5);
	assert_int_equal(h.status, 0);
	assert_int_equal(h.flags, 0);
	wack_close(&t);
}

/* Acks of writes never sent, or flags without the offer: the connection goes. */
static void test_wacks_forged(void **state)
{
	for (int legacy = 0; legacy < 2; legacy++) {
		struct srv v;
		struct fh_side *sides[1];
		struct fab_cqe cqe;
		struct tcp_hdr h = {.type = TCP_F_CREDIT, .flags = 5};
		uint8_t b[TCP_HDR_LEN];

		(void)state;
		srv_open(&v);
		sides[0] = &v.s;
		raw_hello_flags(v.fd, TCP_MAGIC, 4, legacy ? 0 : TCP_HELLO_F_WACKS, 4);
		assert_true(fh_wait(sides, 1, &v.s, FAB_EV_ACCEPTED, NULL, &cqe));
		tcp_hdr_encode(&h, b);
		raw_send(v.fd, b, sizeof(b));
		assert_true(fh_wait(sides, 1, &v.s, FAB_EV_PEER_FAILED, NULL, &cqe));
		assert_int_equal(cqe.status, -EPROTO);
		fab_ep_close(cqe.ep);
		srv_close(&v);
	}
}

/* A peer that connects and says nothing is dropped at the connect timeout. */
static void test_silent_peer(void **state)
{
	struct srv v;
	struct fh_side *sides[1];

	srv_open(&v);
	sides[0] = &v.s;
	fh_pump(sides, 1);
	/* The harness sets ms_connect_timeout to 3 s; raw_closed waits up to 6 s. */
	assert_true(raw_closed(&v));
	assert_int_equal(fh_count(&v.s, FAB_EV_ACCEPTED), 0);
	srv_close(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_garbage_before_handshake),
	    cmocka_unit_test(test_bad_hello),
	    cmocka_unit_test(test_protocol_violations),
	    cmocka_unit_test(test_forged_write),
	    cmocka_unit_test(test_truncated_frame),
	    cmocka_unit_test(test_unread_answers_bounded),
	    cmocka_unit_test(test_silent_peer),
	    cmocka_unit_test(test_credits_batched),
	    cmocka_unit_test(test_wacks_ride_on_answers),
	    cmocka_unit_test(test_wacks_alone_after_delay),
	    cmocka_unit_test(test_wacks_refusal_keeps_order),
	    cmocka_unit_test(test_wacks_legacy_peer),
	    cmocka_unit_test(test_wacks_forged),
	};

	fh_backend = "tcp";
	weft_log_open("test", WEFT_LOG_WARN, NULL);
	return cmocka_run_group_tests_name("fabric/tcp-wire", tests, NULL, NULL);
}
