/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft fabric-bench: point-to-point transport benchmark, like perftest's
 * ib_write_bw / ib_read_bw / ib_send_lat. One server, one client:
 *
 *   weft fabric-bench --server [--addr IP:PORT]
 *   weft fabric-bench --connect IP:PORT --op write|read|send [-s SIZE] [-n N | -D S] [-q Q] [--lat]
 *
 * This file is the client: it connects, runs the timed loop and reports; the
 * command line is parsed in cmd_fabric_bench.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/conf.h"
#include "common/crc32c.h"
#include "common/histogram.h"
#include "common/log.h"
#include "tools/cli.h"
#include "tools/fabric_bench.h"

#define FB_LAT_WARMUP 1000u /* un-timed round trips before a latency run */

struct fb_slot {
	uint32_t idx;
	uint32_t wait; /* events still due before the slot is free again */
	uint64_t seq;  /* data op number, from 0, warm-up included */
	uint64_t post_ns;
	uint64_t echo_ns;
	bool busy;
};

struct fb_client {
	const struct fb_opts *o;
	enum fb_mode mode;
	struct fab_domain *dom;
	struct fab_ep *ep;
	struct fab_mr *mr;
	uint8_t *buf; /* outstanding slots of size bytes, then the echo slot */
	size_t buf_len;
	uint8_t *echo;	      /* write --lat: the server writes its answer here */
	struct fab_rkey rkey; /* the server's region */
	uint64_t salt;	      /* read --verify: the server's pattern seed base */
	struct fb_slot *slots;
	struct hist hist;
	bool record;
	uint64_t seq; /* next data op number */
	uint64_t posted, completed;
	uint32_t inflight;
	uint64_t t_first_post, t_last_done, t_last_event;
	bool connected;
	bool have_ctrl;
	struct fb_ctrl ctrl;
	bool peer_failed;
	int err;
	char err_msg[256];
};

/* ---------------------------------------------------------------- client */

/* Keep the first error only: later ones are usually its consequences. */
__attribute__((format(printf, 3, 4))) static void fb_client_fail(struct fb_client *c, int err,
								 const char *fmt, ...)
{
	va_list ap;

	if (c->err)
		return;
	c->err = err ? err : -EIO;
	va_start(ap, fmt);
	vsnprintf(c->err_msg, sizeof(c->err_msg), fmt, ap);
	va_end(ap);
}

static void fb_client_slot_done(struct fb_client *c, struct fb_slot *s)
{
	uint64_t now = clock_now_ns();
	uint64_t end = s->echo_ns ? s->echo_ns : now;
	int64_t off;

	if (--s->wait)
		return;
	if (c->o->verify && c->o->op == FB_OP_READ) {
		off = fb_pattern_check(c->buf + (size_t)s->idx * c->o->size, c->o->size,
				       c->salt + s->idx + 1);
		if (off >= 0)
			fb_client_fail(c, -EILSEQ,
				       "verify: read %" PRIu64 " differs at byte %" PRId64, s->seq,
				       off);
	}
	if (c->record)
		hist_record(&c->hist, end - s->post_ns);
	s->busy = false;
	c->inflight--;
	c->completed++;
	c->t_last_done = now;
}

static void fb_client_on_echo(struct fb_client *c, const void *data, uint32_t len)
{
	struct fb_slot *s = &c->slots[0];
	int64_t off;

	if (!s->busy || len != c->o->size) {
		fb_client_fail(c, -EPROTO, "unexpected echo from the server");
		return;
	}
	s->echo_ns = clock_now_ns();
	if (c->o->verify) {
		off = fb_pattern_check(data, len, s->seq + 1);
		if (off >= 0)
			fb_client_fail(c, -EILSEQ,
				       "verify: echo %" PRIu64 " differs at byte %" PRId64, s->seq,
				       off);
	}
	fb_client_slot_done(c, s);
}

static void fb_client_handle(struct fb_client *c, struct fab_cqe *e)
{
	const char *why;
	int rc;

	switch (e->kind) {
	case FAB_EV_CONNECTED:
		if (e->status < 0)
			fb_client_fail(c, e->status, "connect to %s failed: %s", c->o->addr,
				       strerror(-e->status));
		else
			c->connected = true;
		c->t_last_event = clock_now_ns();
		break;
	case FAB_EV_PEER_FAILED:
		c->peer_failed = true;
		/* This explains the op errors seen before it: it wins. */
		c->err = 0;
		fb_client_fail(c, e->status < 0 ? e->status : -ECONNRESET,
			       "peer failed: connection to server %s lost: %s", c->o->addr,
			       strerror(e->status < 0 ? -e->status : ECONNRESET));
		break;
	case FAB_EV_RECV:
		if (fb_ctrl_is_ctrl(e->data, e->len)) {
			rc = fb_ctrl_decode(e->data, e->len, &c->ctrl, &why);
			if (rc < 0)
				fb_client_fail(c, rc, "bad message from the server: %s", why);
			else
				c->have_ctrl = true;
			c->t_last_event = clock_now_ns();
		} else if (c->o->op == FB_OP_SEND && c->mode == FB_MODE_LAT) {
			fb_client_on_echo(c, e->data, e->len);
		} else {
			fb_client_fail(c, -EPROTO, "unexpected message from the server");
		}
		fab_recv_release(e);
		break;
	case FAB_EV_WRITE_IMM:
		if (c->o->op == FB_OP_WRITE && c->mode == FB_MODE_LAT && e->len == c->o->size &&
		    e->imm == (uint32_t)c->slots[0].seq)
			fb_client_on_echo(c, c->echo, e->len);
		else
			fb_client_fail(c, -EPROTO, "unexpected write_imm from the server");
		fab_recv_release(e);
		break;
	case FAB_EV_SEND:
	case FAB_EV_WRITE:
	case FAB_EV_READ:
		if (e->status < 0) {
			fb_client_fail(c, e->status, "%s failed: %s", fab_ev_name(e->kind),
				       strerror(-e->status));
			break;
		}
		if (e->ctx != &fb_ctrl_ctx && e->ctx)
			fb_client_slot_done(c, e->ctx);
		break;
	default:
		break;
	}
}

/*
 * Drive the fabric once. spin: never sleep (latency runs and ops in flight);
 * otherwise fab_wait spins briefly and then sleeps up to 10 ms.
 */
static int fb_client_pump(struct fb_client *c, bool spin)
{
	struct fab_cqe cqes[64];
	int rc, n;

	rc = fab_progress(c->dom, 0);
	if (rc < 0) {
		fb_client_fail(c, rc, "fabric progress failed: %s", strerror(-rc));
		return rc;
	}
	n = fab_cq_poll(c->dom, cqes, 64);
	for (int i = 0; i < n; i++)
		fb_client_handle(c, &cqes[i]);
	if (n > 0) {
		/*
		 * Only the peer's doing counts as progress: our own control sends
		 * complete locally even when the server is frozen.
		 */
		if (c->t_last_done > c->t_last_event)
			c->t_last_event = c->t_last_done;
		return n;
	}
	if (!spin && rc == 0)
		fab_wait(c->dom, 10);
	if (!c->err && clock_now_ns() - c->t_last_event > FB_WATCHDOG_NS)
		fb_client_fail(c, -ETIMEDOUT, "no progress for 10 s: server stuck? giving up");
	return n;
}

/* Wait for the server's next control message of the given type. */
static int fb_client_wait_ctrl(struct fb_client *c, uint32_t type)
{

	c->t_last_event = clock_now_ns();
	while (!c->have_ctrl && !c->err)
		fb_client_pump(c, false);
	if (c->err)
		return c->err;
	c->have_ctrl = false;
	if (c->ctrl.type != type) {
		fb_client_fail(c, -EPROTO, "expected %s from the server, got %s", fb_msg_name(type),
			       fb_msg_name(c->ctrl.type));
		return c->err;
	}
	return 0;
}

static int fb_client_post(struct fb_client *c, struct fb_slot *s)
{
	const struct fb_opts *o = c->o;
	size_t off = (size_t)s->idx * o->size;
	struct fab_sge sge = {.addr = c->buf + off, .len = (uint32_t)o->size, .mr = c->mr};
	bool lat = c->mode == FB_MODE_LAT;
	uint64_t seq = c->seq;
	int rc;

	if (o->verify && o->op != FB_OP_READ)
		fb_pattern_fill(sge.addr, o->size, seq + 1);
	else if (o->verify)
		memset(sge.addr, 0xa5, o->size); /* a read that moves nothing shows */
	s->post_ns = clock_now_ns();
	switch (o->op) {
	case FB_OP_WRITE:
		if (lat)
			rc = fab_write_imm(c->ep, &sge, &c->rkey, 0, (uint32_t)seq, s);
		else
			rc = fab_write(c->ep, &sge, &c->rkey, off, s);
		break;
	case FB_OP_READ:
		rc = fab_read(c->ep, &sge, &c->rkey, lat ? 0 : off, s);
		break;
	default:
		rc = fab_send(c->ep, sge.addr, o->size, s);
		break;
	}
	if (rc < 0)
		return rc;
	s->seq = seq;
	s->busy = true;
	s->echo_ns = 0;
	s->wait = lat && o->op != FB_OP_READ ? 2 : 1;
	c->seq++;
	c->posted++;
	c->inflight++;
	if (!c->t_first_post)
		c->t_first_post = s->post_ns;
	return 0;
}

/* Post and complete iters ops (or for duration_ns). */
static int fb_client_run(struct fb_client *c, uint64_t iters, uint64_t duration_ns)
{
	const struct fb_opts *o = c->o;
	uint64_t start = clock_now_ns(), next_tick = start + 1000000000ull, tick_done = 0;
	uint64_t next_keepalive = start + 1000000000ull, now;
	bool stop = false;
	struct fb_ctrl ka = {.type = FB_MSG_KEEPALIVE};
	int rc;

	c->posted = c->completed = 0;
	c->t_first_post = c->t_last_done = 0;
	c->t_last_event = start;
	while (!c->err) {
		for (uint32_t i = 0; !stop && c->inflight < o->outstanding && i < o->outstanding;
		     i++) {
			struct fb_slot *s = &c->slots[i];

			if (s->busy)
				continue;
			if (iters && c->posted >= iters) {
				stop = true;
				break;
			}
			rc = fb_client_post(c, s);
			if (rc == -EAGAIN)
				break;
			if (rc < 0) {
				fb_client_fail(c, rc, "posting a %s failed: %s", fb_op_name(o->op),
					       strerror(-rc));
				break;
			}
		}
		if (stop && !c->inflight)
			break;
		fb_client_pump(c, true);
		now = clock_now_ns();
		if (duration_ns && now - start >= duration_ns)
			stop = true;
		if (now >= next_keepalive && o->op != FB_OP_SEND && c->mode == FB_MODE_BW) {
			/* One-sided runs are silent at the server: tell it we are alive. */
			rc = fb_ctrl_send(c->dom, c->ep, &ka);
			if (rc < 0)
				fb_client_fail(c, rc, "sending a keepalive failed: %s",
					       strerror(-rc));
			next_keepalive = now + 1000000000ull;
		}
		if (duration_ns && c->record && !o->json && now >= next_tick) {
			fprintf(stderr, "fabric-bench: %3" PRIu64 " s  %10.1f MB/s  %8.4f Mpps\n",
				(uint64_t)((now - start) / 1000000000u),
				(double)(c->completed - tick_done) * (double)o->size / 1e6,
				(double)(c->completed - tick_done) / 1e6);
			tick_done = c->completed;
			next_tick += 1000000000ull;
		}
	}
	return c->err;
}

static void fb_client_report(struct fb_client *c, const char *backend)
{
	const struct fb_opts *o = c->o;
	uint64_t ns = c->t_last_done - c->t_first_post;
	double secs = ns ? (double)ns / 1e9 : 1e-9;
	double bw = (double)c->completed * (double)o->size / secs / 1e6;
	double mpps = (double)c->completed / secs / 1e6;
	double p50 = (double)hist_quantile(&c->hist, 0.5) / 1e3;
	double p99 = (double)hist_quantile(&c->hist, 0.99) / 1e3;
	double p999 = (double)hist_quantile(&c->hist, 0.999) / 1e3;
	double max = (double)c->hist.max / 1e3;
	json_t *j;
	char *s;

	if (o->json) {
		j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:i, s:b, s:f, s:f, s:f, s:f, s:f, s:f, "
			      "s:f}",
			      "backend", backend, "op", fb_op_name(o->op), "mode",
			      fb_mode_name(c->mode), "bytes", (json_int_t)o->size, "iterations",
			      (json_int_t)c->completed, "outstanding", (int)o->outstanding,
			      "verified", o->verify, "seconds", secs, "bw_mb_s", bw,
			      "msg_rate_mpps", mpps, "lat_p50_us", p50, "lat_p99_us", p99,
			      "lat_p999_us", p999, "lat_max_us", max);
		s = j ? json_dumps(j, JSON_COMPACT) : NULL;
		if (s)
			printf("%s\n", s);
		free(s);
		json_decref(j);
		return;
	}
	printf("---------------------------------------------------------------------------\n");
	printf(" weft fabric-bench: %s %s\n", fb_op_name(o->op),
	       c->mode == FB_MODE_LAT ? "latency (one in flight, round trip)" : "bandwidth");
	printf(" backend          : %s\n", backend);
	printf(" server           : %s\n", o->addr);
	printf(" message size     : %" PRIu64 " bytes\n", o->size);
	printf(" outstanding      : %u\n", o->outstanding);
	printf(" verify           : %s\n", o->verify ? "on, data ok" : "off");
	printf(" MB/s = 10^6 bytes/s; latency = post to completion%s\n",
	       c->mode == FB_MODE_LAT ? " (round trip)" : "");
	printf("---------------------------------------------------------------------------\n");
	printf(" %-8s %-12s %-17s %-14s %-12s %-12s %-12s\n", "#bytes", "#iterations",
	       "BW average[MB/s]", "MsgRate[Mpps]", "lat p50[us]", "lat p99[us]", "lat max[us]");
	printf(" %-8" PRIu64 " %-12" PRIu64 " %-17.2f %-14.6f %-12.2f %-12.2f %-12.2f\n", o->size,
	       c->completed, bw, mpps, p50, p99, max);
	printf("---------------------------------------------------------------------------\n");
}

static int fb_client_setup(struct fb_client *c)
{
	const struct fb_opts *o = c->o;
	struct fb_ctrl hello = {.type = FB_MSG_HELLO};
	size_t len;
	int rc;

	c->slots = calloc(o->outstanding, sizeof(*c->slots));
	len = o->size * o->outstanding + (c->mode == FB_MODE_LAT ? o->size : 0);
	c->buf = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!c->slots || !c->buf) {
		fb_client_fail(c, -ENOMEM, "out of memory for %zu bytes of buffers", len);
		return -ENOMEM;
	}
	memset(c->buf, 0, len);
	c->buf_len = len;
	c->echo = c->buf + o->size * o->outstanding;
	for (uint32_t i = 0; i < o->outstanding; i++)
		c->slots[i].idx = i;
	rc = fab_mr_reg(c->dom, c->buf, len, FAB_ACCESS_REMOTE_WRITE, &c->mr);
	if (rc < 0) {
		fb_client_fail(c, rc, "registering %zu bytes failed: %s", len, strerror(-rc));
		return rc;
	}
	rc = fab_connect(c->dom, o->addr, NULL, NULL, &c->ep);
	if (rc < 0) {
		fb_client_fail(c, rc, "connect to %s failed: %s", o->addr, strerror(-rc));
		return rc;
	}
	c->t_last_event = clock_now_ns();
	while (!c->connected && !c->err)
		fb_client_pump(c, false);
	if (c->err)
		return c->err;

	c->salt = clock_now_ns() & 0xffffffffffull;
	hello.op = o->op;
	hello.mode = c->mode;
	hello.flags = o->verify ? FB_FLAG_VERIFY : 0;
	hello.outstanding = o->outstanding;
	hello.size = o->size;
	hello.iters = o->iters;
	hello.check = c->salt;
	fab_mr_rkey(c->mr, &hello.rkey);
	hello.rkey.addr += o->size * o->outstanding; /* the echo slot */
	hello.rkey.len = c->mode == FB_MODE_LAT ? o->size : 0;
	rc = fb_ctrl_send(c->dom, c->ep, &hello);
	if (rc < 0) {
		fb_client_fail(c, rc, "sending the test parameters failed: %s", strerror(-rc));
		return rc;
	}
	rc = fb_client_wait_ctrl(c, FB_MSG_RKEY);
	if (rc < 0)
		return rc;
	if (c->ctrl.status == -EMSGSIZE) {
		fb_client_fail(c, -EMSGSIZE,
			       "server refused: -s %" PRIu64
			       " exceeds the server's ms_msg_size %" PRIu64
			       " (restart it with --ms_msg_size=%" PRIu64 ")",
			       o->size, c->ctrl.check, o->size);
		return c->err;
	}
	if (c->ctrl.status < 0) {
		fb_client_fail(c, c->ctrl.status, "server refused the test: %s",
			       strerror(-c->ctrl.status));
		return c->err;
	}
	c->rkey = c->ctrl.rkey;
	if (o->op != FB_OP_SEND &&
	    c->rkey.len < o->size * (c->mode == FB_MODE_LAT ? 1 : o->outstanding)) {
		fb_client_fail(c, -EPROTO, "server's region is smaller than the test needs");
		return c->err;
	}
	return 0;
}

static int fb_client_finish(struct fb_client *c)
{
	const struct fb_opts *o = c->o;
	struct fb_ctrl done = {.type = FB_MSG_DONE};
	int rc;

	done.iters = c->completed;
	done.total = c->seq;
	if (o->verify && o->op == FB_OP_WRITE && c->mode == FB_MODE_BW)
		done.check = crc32c(0, c->buf, o->size * o->outstanding);
	rc = fb_ctrl_send(c->dom, c->ep, &done);
	if (rc < 0) {
		fb_client_fail(c, rc, "sending DONE failed: %s", strerror(-rc));
		return rc;
	}
	rc = fb_client_wait_ctrl(c, FB_MSG_RESULT);
	if (rc < 0)
		return rc;
	if (c->ctrl.status == -EILSEQ)
		fb_client_fail(c, -EILSEQ,
			       "verify failed: the server saw bad data at byte %" PRIu64,
			       c->ctrl.check);
	else if (c->ctrl.status < 0)
		fb_client_fail(c, c->ctrl.status,
			       "server: %" PRIu64 " of %" PRIu64 " messages arrived (%s)",
			       c->ctrl.total, c->seq, strerror(-c->ctrl.status));
	return c->err;
}

int fb_client_main(const struct fb_opts *o)
{
	struct fb_client c = {.o = o, .mode = o->lat ? FB_MODE_LAT : FB_MODE_BW};
	uint64_t warmup;
	int rc, ret = 1;

	rc = fab_domain_open(&o->attr, &c.dom);
	if (rc < 0) {
		fprintf(stderr, "fabric-bench: opening a %s fabric domain failed: %s\n",
			o->attr.backend ? o->attr.backend : "auto", strerror(-rc));
		return 1;
	}
	hist_init(&c.hist);
	if (fb_client_setup(&c) < 0)
		goto out;
	if (c.mode == FB_MODE_LAT) {
		warmup = o->iters ? (o->iters < FB_LAT_WARMUP ? o->iters : FB_LAT_WARMUP)
				  : FB_LAT_WARMUP;
		if (fb_client_run(&c, warmup, 0) < 0)
			goto out;
	}
	c.record = true;
	if (fb_client_run(&c, o->iters, o->duration_s * 1000000000ull) < 0)
		goto out;
	if (fb_client_finish(&c) < 0)
		goto out;
	fb_client_report(&c, fab_domain_backend(c.dom));
	ret = 0;
out:
	if (c.err)
		fprintf(stderr, "fabric-bench: %s\n", c.err_msg);
	if (c.ep)
		fab_ep_close(c.ep);
	if (c.mr)
		fab_mr_dereg(c.mr);
	fab_domain_close(c.dom);
	free(c.buf);
	free(c.slots);
	return ret;
}
