/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft fabric-bench --server: accepts one client at a time, provides the
 * region its one-sided ops target, sinks or echoes its sends, and checks the
 * data when the client asks for --verify. Prints a ready line and one summary
 * line per client on stdout; errors are one line on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/crc32c.h"
#include "tools/fabric_bench.h"

/* ctx of echo sends / write-backs (latency modes). */
static char fb_echo_ctx;

struct fb_srv {
	const struct fb_opts *o;
	struct fab_domain *dom;
	struct fab_listener *l;
	struct fab_ep *ep; /* the client; NULL while waiting for one */
	char peer[64];
	struct fb_ctrl hello;
	bool have_hello;
	struct fab_mr *mr;
	uint8_t *buf;
	size_t buf_len;
	uint32_t msg_size;
	uint64_t rx_count; /* data sends or write_imm received */
	int64_t bad_off;   /* first verification failure, -1 if none */
	uint64_t bad_iter;
	uint64_t last_rx_ns;
	bool result_sent; /* after it, the client may leave at any time */
	bool result_done;
	bool peer_gone;
	bool refused;
	uint64_t result_ns;
	int status; /* of the verification sent in RESULT */
	int err;
	char err_msg[256];
};

static void fb_srv_fail(struct fb_srv *s, int err, const char *fmt, const char *detail)
{
	if (s->err)
		return; /* the first error is the one that matters */
	s->err = err;
	snprintf(s->err_msg, sizeof(s->err_msg), fmt, s->peer, detail);
}

static void fb_srv_session_reset(struct fb_srv *s)
{
	if (s->ep)
		fab_ep_close(s->ep);
	if (s->mr)
		fab_mr_dereg(s->mr);
	free(s->buf);
	s->ep = NULL;
	s->mr = NULL;
	s->buf = NULL;
	s->buf_len = 0;
	s->have_hello = false;
	s->rx_count = 0;
	s->bad_off = -1;
	s->bad_iter = 0;
	s->result_sent = false;
	s->result_done = false;
	s->peer_gone = false;
	s->refused = false;
	s->status = 0;
	s->err = 0;
	s->err_msg[0] = '\0';
	s->peer[0] = '\0';
}

static int fb_srv_reply(struct fb_srv *s, uint32_t type, int status, uint64_t total, uint64_t check)
{
	struct fb_ctrl m = {.type = type, .status = status, .total = total, .check = check};
	int rc;

	if (type == FB_MSG_RKEY && s->mr)
		fab_mr_rkey(s->mr, &m.rkey);
	rc = fb_ctrl_send(s->dom, s->ep, &m);
	if (rc < 0)
		fb_srv_fail(s, rc, "fabric-bench: client %s: sending a reply failed: %s",
			    strerror(-rc));
	return rc;
}

static int fb_srv_on_hello(struct fb_srv *s, const struct fb_ctrl *m)
{
	size_t len;
	int rc;

	if (s->have_hello) {
		fb_srv_fail(s, -EPROTO, "fabric-bench: client %s: %s", "second HELLO");
		return -EPROTO;
	}
	s->hello = *m;
	s->have_hello = true;
	if (m->op == FB_OP_SEND && m->size > s->msg_size) {
		fprintf(stderr,
			"fabric-bench: client %s: refused: -s %llu exceeds our ms_msg_size %u "
			"(restart with --ms_msg_size=%llu)\n",
			s->peer, (unsigned long long)m->size, s->msg_size,
			(unsigned long long)m->size);
		s->status = -EMSGSIZE;
		s->refused = true;
		rc = fb_srv_reply(s, FB_MSG_RKEY, -EMSGSIZE, 0, s->msg_size);
		if (rc == 0)
			s->result_sent = true; /* the last word: linger, then end */
		return rc;
	}
	if (m->op == FB_OP_SEND)
		return fb_srv_reply(s, FB_MSG_RKEY, 0, 0, s->msg_size);

	len = m->size * m->outstanding;
	s->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!s->buf)
		return fb_srv_reply(s, FB_MSG_RKEY, -ENOMEM, 0, s->msg_size);
	memset(s->buf, 0, len);
	s->buf_len = len;
	if (m->op == FB_OP_READ && (m->flags & FB_FLAG_VERIFY)) {
		for (uint32_t i = 0; i < m->outstanding; i++)
			fb_pattern_fill(s->buf + i * m->size, m->size, m->check + i + 1);
	}
	rc = fab_mr_reg(s->dom, s->buf, len, FAB_ACCESS_REMOTE_READ | FAB_ACCESS_REMOTE_WRITE,
			&s->mr);
	if (rc < 0) {
		fprintf(stderr, "fabric-bench: registering %zu bytes failed: %s\n", len,
			strerror(-rc));
		return fb_srv_reply(s, FB_MSG_RKEY, rc, 0, s->msg_size);
	}
	return fb_srv_reply(s, FB_MSG_RKEY, 0, 0, s->msg_size);
}

static void fb_srv_on_done(struct fb_srv *s, const struct fb_ctrl *m)
{
	const struct fb_ctrl *h = &s->hello;
	bool verify = h->flags & FB_FLAG_VERIFY;
	int status = 0;
	uint32_t crc;

	if (!s->have_hello) {
		fb_srv_fail(s, -EPROTO, "fabric-bench: client %s: %s", "DONE before HELLO");
		return;
	}
	if ((h->op == FB_OP_SEND || (h->op == FB_OP_WRITE && h->mode == FB_MODE_LAT)) &&
	    m->total != s->rx_count) {
		fprintf(stderr, "fabric-bench: client %s sent %llu messages, %llu arrived\n",
			s->peer, (unsigned long long)m->total, (unsigned long long)s->rx_count);
		status = -EPROTO;
	}
	if (verify && h->op == FB_OP_WRITE && h->mode == FB_MODE_BW) {
		crc = crc32c(0, s->buf, s->buf_len);
		if (crc != (uint32_t)m->check) {
			fprintf(stderr,
				"fabric-bench: verify: region crc32c 0x%08x, client expected "
				"0x%08x\n",
				crc, (uint32_t)m->check);
			s->bad_off = 0;
		}
	}
	if (s->bad_off >= 0 && !status)
		status = -EILSEQ;
	s->status = status;
	if (fb_srv_reply(s, FB_MSG_RESULT, status, s->rx_count,
			 s->bad_off >= 0 ? (uint64_t)s->bad_off : UINT64_MAX) == 0)
		s->result_sent = true;
}

static void fb_srv_check(struct fb_srv *s, const void *data, size_t len, uint64_t seed)
{
	int64_t off;

	if (!(s->hello.flags & FB_FLAG_VERIFY) || s->bad_off >= 0)
		return;
	off = fb_pattern_check(data, len, seed);
	if (off >= 0) {
		s->bad_off = off;
		s->bad_iter = s->rx_count;
		fprintf(stderr, "fabric-bench: verify: message %llu differs at byte %lld\n",
			(unsigned long long)s->rx_count, (long long)off);
	}
}

/* Post an echo, driving progress while the send queue is full. */
static int fb_srv_echo(struct fb_srv *s, const void *data, uint32_t len, uint32_t imm)
{
	uint64_t deadline = clock_now_ns() + FB_WATCHDOG_NS;
	struct fab_sge sge = {.addr = s->buf, .len = len, .mr = s->mr};
	int rc;

	for (;;) {
		if (s->hello.op == FB_OP_SEND)
			rc = fab_send(s->ep, data, len, &fb_echo_ctx);
		else
			rc = fab_write_imm(s->ep, &sge, &s->hello.rkey, 0, imm, &fb_echo_ctx);
		if (rc != -EAGAIN)
			break;
		if (clock_now_ns() > deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		rc = fab_progress(s->dom, 0);
		if (rc < 0)
			break;
	}
	if (rc < 0)
		fb_srv_fail(s, rc, "fabric-bench: client %s: echo failed: %s", strerror(-rc));
	return rc;
}

static void fb_srv_on_recv(struct fb_srv *s, const struct fab_cqe *c)
{
	struct fb_ctrl m;
	const char *why;
	int rc;

	s->last_rx_ns = clock_now_ns();
	if (fb_ctrl_is_ctrl(c->data, c->len)) {
		rc = fb_ctrl_decode(c->data, c->len, &m, &why);
		if (rc < 0) {
			fb_srv_fail(s, rc, "fabric-bench: client %s: bad control message: %s", why);
			return;
		}
		if (m.type == FB_MSG_HELLO)
			fb_srv_on_hello(s, &m);
		else if (m.type == FB_MSG_DONE)
			fb_srv_on_done(s, &m);
		else if (m.type != FB_MSG_KEEPALIVE)
			fb_srv_fail(s, -EPROTO, "fabric-bench: client %s: unexpected %s message",
				    fb_msg_name(m.type));
		return;
	}
	if (!s->have_hello || s->hello.op != FB_OP_SEND) {
		fb_srv_fail(s, -EPROTO, "fabric-bench: client %s: %s",
			    "unexpected data message (not a weft fabric-bench client?)");
		return;
	}
	if (c->len != s->hello.size) {
		fb_srv_fail(s, -EPROTO, "fabric-bench: client %s: %s",
			    "data message of the wrong size");
		return;
	}
	s->rx_count++;
	fb_srv_check(s, c->data, c->len, s->rx_count);
	if (s->hello.mode == FB_MODE_LAT)
		fb_srv_echo(s, c->data, c->len, 0);
}

static void fb_srv_on_write_imm(struct fb_srv *s, const struct fab_cqe *c)
{
	s->last_rx_ns = clock_now_ns();
	if (!s->have_hello || s->hello.op != FB_OP_WRITE || s->hello.mode != FB_MODE_LAT ||
	    !s->mr) {
		fb_srv_fail(s, -EPROTO, "fabric-bench: client %s: %s", "unexpected write_imm");
		return;
	}
	s->rx_count++;
	fb_srv_check(s, s->buf, s->hello.size, (uint64_t)c->imm + 1);
	fb_srv_echo(s, NULL, (uint32_t)s->hello.size, c->imm);
}

static void fb_srv_handle(struct fb_srv *s, struct fab_cqe *c)
{
	switch (c->kind) {
	case FAB_EV_ACCEPTED:
		if (s->ep) {
			/* One client at a time: a second one would skew both runs. */
			fprintf(stderr, "fabric-bench: busy, refusing client %s\n",
				fab_ep_peer_addr(c->ep));
			fab_ep_close(c->ep);
			break;
		}
		s->ep = c->ep;
		snprintf(s->peer, sizeof(s->peer), "%s", fab_ep_peer_addr(c->ep));
		s->last_rx_ns = clock_now_ns();
		break;
	case FAB_EV_RECV:
		if (c->ep == s->ep && s->ep)
			fb_srv_on_recv(s, c);
		fab_recv_release(c);
		break;
	case FAB_EV_WRITE_IMM:
		if (c->ep == s->ep && s->ep)
			fb_srv_on_write_imm(s, c);
		fab_recv_release(c);
		break;
	case FAB_EV_SEND:
	case FAB_EV_WRITE:
	case FAB_EV_READ:
		if (c->ep != s->ep || !s->ep)
			break;
		if (c->status < 0 && !s->result_sent)
			fb_srv_fail(s, c->status, "fabric-bench: client %s: reply failed: %s",
				    strerror(-c->status));
		else if (c->ctx == &fb_ctrl_ctx && s->result_sent && !s->result_done) {
			s->result_done = true;
			s->result_ns = clock_now_ns();
		}
		break;
	case FAB_EV_PEER_FAILED:
		if (c->ep != s->ep || !s->ep)
			break;
		if (s->result_sent) {
			s->peer_gone = true;
			if (!s->result_done) {
				s->result_done = true;
				s->result_ns = clock_now_ns();
			}
		} else
			fb_srv_fail(s, c->status ? c->status : -ECONNRESET,
				    "fabric-bench: client %s failed during the run: %s",
				    strerror(c->status ? -c->status : ECONNRESET));
		break;
	default:
		break;
	}
}

/* One client, from accept to RESULT. Returns 0, or 1 on a failed run. */
static int fb_srv_session(struct fb_srv *s)
{
	struct fab_cqe cqes[32];
	int n, rc;
	bool busy;

	for (;;) {
		rc = fab_progress(s->dom, 0);
		if (rc < 0) {
			fprintf(stderr, "fabric-bench: fabric progress failed: %s\n",
				strerror(-rc));
			return 1;
		}
		busy = rc > 0;
		n = fab_cq_poll(s->dom, cqes, 32);
		for (int i = 0; i < n; i++)
			fb_srv_handle(s, &cqes[i]);
		if (s->err) {
			fprintf(stderr, "%s\n", s->err_msg);
			return 1;
		}
		/*
		 * Linger until the client, which has RESULT, closes: closing first
		 * could reset the connection before RESULT is read.
		 */
		if (s->result_done &&
		    (s->peer_gone || clock_now_ns() - s->result_ns > 2000000000ull))
			break;
		if (s->ep && clock_now_ns() - s->last_rx_ns > FB_WATCHDOG_NS) {
			fprintf(stderr, "fabric-bench: no message from client %s for %llu s\n",
				s->peer, (unsigned long long)(FB_WATCHDOG_NS / 1000000000ull));
			return 1;
		}
		/* Latency runs spin; otherwise fab_wait spins briefly, then sleeps. */
		if (n == 0 && !busy && !(s->have_hello && s->hello.mode == FB_MODE_LAT))
			fab_wait(s->dom, s->ep ? 100 : 1000);
	}
	if (s->refused)
		return 1;
	printf("fabric-bench: client %s: %s %s, %llu bytes, %u outstanding, %llu messages "
	       "received, %s\n",
	       s->peer, fb_op_name(s->hello.op), fb_mode_name(s->hello.mode),
	       (unsigned long long)s->hello.size, s->hello.outstanding,
	       (unsigned long long)s->rx_count,
	       !(s->hello.flags & FB_FLAG_VERIFY) ? "not verified"
	       : s->status == 0			  ? "verify ok"
						  : "verify FAILED");
	fflush(stdout);
	return s->status == 0 ? 0 : 1;
}

int fb_server_main(const struct fb_opts *o)
{
	struct fb_srv s = {.o = o, .bad_off = -1};
	char host[64];
	const char *colon;
	int rc, ret = 1;

	rc = fab_domain_open(&o->attr, &s.dom);
	if (rc < 0) {
		fprintf(stderr, "fabric-bench: opening a %s fabric domain failed: %s\n",
			o->attr.backend ? o->attr.backend : "auto", strerror(-rc));
		return 1;
	}
	s.msg_size = o->attr.msg_size;
	rc = fab_listen(s.dom, o->addr, NULL, &s.l);
	if (rc < 0) {
		fprintf(stderr, "fabric-bench: cannot listen on %s: %s\n", o->addr, strerror(-rc));
		goto out_close_domain;
	}
	colon = strrchr(o->addr, ':');
	snprintf(host, sizeof(host), "%.*s", (int)(colon - o->addr), o->addr);
	printf("fabric-bench: listening on %s:%u backend %s\n", host, fab_listener_port(s.l),
	       fab_domain_backend(s.dom));
	fflush(stdout);
	do {
		ret = fb_srv_session(&s);
		fb_srv_session_reset(&s);
	} while (o->persist);
	fab_listener_close(s.l);
out_close_domain:
	fab_domain_close(s.dom);
	return ret;
}
