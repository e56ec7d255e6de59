/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libweft: connecting, the map, OSD connections, registered buffers and
 * the event loop (docs/client.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/client_debug.h"
#include "client/client_int.h"
#include "client/client_loop.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/version.h"
#include "proto/hello.h"

/* How often the mon client runs without traffic: its request deadlines, resends and hunting. */
#define CLIENT_MONC_TICK_US 20000u

static void client_monc_progress(struct weft_cluster *cl)
{
	monc_progress(cl->monc);
	if (monc_map(cl->monc)->epoch != cl->epoch) {
		cl->epoch = monc_map(cl->monc)->epoch;
		client_ops_map_changed(cl);
	}
}

static void client_monc_fd_cb(struct evl *evl, int fd, unsigned int events, void *arg)
{
	client_monc_progress(arg);
}

static void client_monc_timer_cb(struct evl *evl, struct evl_timer *t, void *arg)
{
	client_monc_progress(arg);
}

/*
 * The mon client in the loop: its fd and a periodic timer for what it does
 * on its own clock. The one place that knows the mon client has an fd of
 * its own (it will share the fabric domain, and then only the timer stays).
 */
static int client_loop_monc_attach(struct weft_cluster *cl)
{
	int rc;

	evl_timer_init(&cl->monc_timer, client_monc_timer_cb, cl);
	rc = evl_timer_arm(cl->loop, &cl->monc_timer, CLIENT_MONC_TICK_US, CLIENT_MONC_TICK_US);
	if (rc == 0 && monc_fd(cl->monc) >= 0)
		rc = evl_fd_add(cl->loop, monc_fd(cl->monc), EVL_READ, client_monc_fd_cb, cl,
				&cl->monc_h);
	return rc;
}

/* The fabric: progress, completions, then connections that failed meanwhile are freed. */
static int client_fab_poll(struct evl *evl, void *arg);

/*
 * One loop per cluster handle (docs/evloop.md): the fabric and the finished
 * ops' callbacks are pollers, the fabric's fd wakes it, the mon client is
 * an fd and a timer, each op's deadline and retry is a timer of its own.
 */
static int client_loop_create(struct weft_cluster *cl)
{
	struct evl_opts o;
	int rc;

	evl_opts_init(&o);
	o.name = cl->name;
	o.busy_poll_us = (uint32_t)conf_get_duration_us(cl->conf, CONF_MS_BUSY_POLL);
	rc = evl_create(&o, &cl->loop);
	if (rc != 0)
		return rc;
	rc = evl_poller_add(cl->loop, client_fab_poll, cl, NULL);
	if (rc == 0)
		rc = evl_poller_add(cl->loop, client_ops_done_poll, cl, NULL);
	if (rc == 0)
		rc = evl_fd_add(cl->loop, fab_domain_fd(cl->dom), EVL_READ, NULL, NULL, NULL);
	if (rc == 0)
		rc = client_loop_monc_attach(cl);
	return rc;
}

struct evl *client_loop(struct weft_cluster *cl)
{
	return cl->loop;
}

int weft_connect(const char *conf_path, const char *name, struct weft_cluster **cl_out)
{
	struct weft_cluster *cl;
	struct fab_domain_attr attr;
	int rc;

	if (name == NULL || strncmp(name, "client.", 7) != 0 || strlen(name) > PROTO_NAME_MAX)
		return -EINVAL;
	cl = calloc(1, sizeof(*cl));
	if (cl == NULL)
		return -ENOMEM;
	snprintf(cl->name, sizeof(cl->name), "%s", name);
	client_instance_init(cl);
	cl->next_tid = 1;
	rc = conf_create(name, &cl->conf);
	if (rc != 0)
		goto err_free;
	if (conf_path == NULL && access("/etc/weft/weft.conf", F_OK) == 0)
		conf_path = "/etc/weft/weft.conf";
	if (conf_path != NULL)
		rc = conf_load_file(cl->conf, conf_path);
	if (rc == 0)
		rc = conf_apply_env(cl->conf);
	if (rc != 0) {
		rc = -WEFT_E_BADCONF;
		goto err_conf;
	}
	cl->max_op = conf_get_size(cl->conf, CONF_OSD_MAX_OP_SIZE);
	cl->inline_max = conf_get_size(cl->conf, CONF_CLIENT_INLINE_MAX);
	cl->op_timeout_ms = conf_get_duration_us(cl->conf, CONF_CLIENT_OP_TIMEOUT) / 1000;
	fab_domain_attr_from_conf(&attr, cl->conf);
	attr.name = cl->name;
	rc = fab_domain_open(&attr, &cl->dom);
	if (rc != 0)
		goto err_conf;
	cl->msg_size = attr.msg_size;
	cl->txbuf = malloc(cl->msg_size);
	if (cl->txbuf == NULL) {
		rc = -ENOMEM;
		goto err_dom;
	}
	/* registered once: OSDs pull payloads from and push reads into these */
	rc = fab_pool_create(cl->dom, CLIENT_SMALL_BUF, CLIENT_SMALL_COUNT,
			     FAB_ACCESS_REMOTE_READ | FAB_ACCESS_REMOTE_WRITE, 0, &cl->small_pool);
	if (rc == 0)
		rc = fab_pool_create(
		    cl->dom, cl->max_op, (uint32_t)conf_get_int(cl->conf, CONF_CLIENT_BUFFERS),
		    FAB_ACCESS_REMOTE_READ | FAB_ACCESS_REMOTE_WRITE, 0, &cl->large_pool);
	if (rc != 0)
		goto err_dom;
	rc = monc_create(cl->conf, cl->name, &cl->monc);
	if (rc != 0)
		goto err_dom;
	monc_subscribe(cl->monc, NULL, NULL);
	rc = client_loop_create(cl);
	if (rc != 0)
		goto err_monc;
	rc = monc_wait_map_sync(cl->monc, 0, (unsigned int)cl->op_timeout_ms);
	if (rc != 0) {
		log_error("client", "%s: no cluster map from the monitors: %s", cl->name,
			  weft_strerror(rc));
		goto err_monc;
	}
	cl->epoch = monc_map(cl->monc)->epoch;
	*cl_out = cl;
	return 0;
err_monc:
	evl_destroy(cl->loop);
	monc_destroy(cl->monc);
err_dom:
	free(cl->txbuf);
	if (cl->large_pool)
		fab_pool_destroy(cl->large_pool);
	if (cl->small_pool)
		fab_pool_destroy(cl->small_pool);
	fab_domain_close(cl->dom);
err_conf:
	conf_destroy(cl->conf);
err_free:
	free(cl);
	return rc;
}

void weft_disconnect(struct weft_cluster *cl)
{
	if (cl == NULL)
		return;
	client_ops_cancel_all(cl);
	while (cl->conns)
		client_conn_free(cl->conns);
	evl_timer_cancel(cl->loop, &cl->monc_timer);
	evl_destroy(cl->loop);
	monc_destroy(cl->monc);
	if (cl->large_pool)
		fab_pool_destroy(cl->large_pool);
	if (cl->small_pool)
		fab_pool_destroy(cl->small_pool);
	fab_domain_close(cl->dom);
	conf_destroy(cl->conf);
	free(cl->txbuf);
	free(cl);
}

int weft_conf_set(struct weft_cluster *cl, const char *key, const char *value)
{
	int rc = conf_set(cl->conf, key, value, "weft_conf_set");

	if (rc == 0) {
		cl->inline_max = conf_get_size(cl->conf, CONF_CLIENT_INLINE_MAX);
		cl->op_timeout_ms = conf_get_duration_us(cl->conf, CONF_CLIENT_OP_TIMEOUT) / 1000;
		evl_busy_poll_set(cl->loop,
				  (uint32_t)conf_get_duration_us(cl->conf, CONF_MS_BUSY_POLL));
	}
	return rc;
}

/* How long a lookup of a pool the map lacks waits for a newer map. */
#define CLIENT_POOL_WAIT_MS 2000u

int weft_pool_lookup(struct weft_cluster *cl, const char *pool, uint32_t *pool_id_out)
{
	const struct mon_pool *p = mon_map_pool_by_name(monc_map(cl->monc), pool);
	uint64_t end = clock_now_ms() + CLIENT_POOL_WAIT_MS;

	/*
	 * A pool created a moment ago may not be in the map of the mon we
	 * asked yet (a follower applies the leader's commit a little later):
	 * wait briefly for the next map before calling it missing.
	 */
	while (p == NULL && clock_now_ms() < end) {
		weft_poll(cl, 10);
		p = mon_map_pool_by_name(monc_map(cl->monc), pool);
	}
	if (p == NULL)
		return -ENOENT;
	*pool_id_out = p->id;
	return 0;
}

const struct mon_map *weft_debug_map(struct weft_cluster *cl)
{
	return monc_map(cl->monc);
}

uint32_t weft_map_epoch(const struct weft_cluster *cl)
{
	return monc_map(cl->monc)->epoch;
}

int weft_wait_epoch(struct weft_cluster *cl, uint32_t epoch, unsigned int timeout_ms)
{
	uint64_t end = clock_now_ms() + timeout_ms;

	while (monc_map(cl->monc)->epoch < epoch) {
		if (clock_now_ms() >= end)
			return -ETIMEDOUT;
		weft_poll(cl, 10);
	}
	return 0;
}

struct fab_pool *client_buf_pool(struct weft_cluster *cl, const void *buf, size_t len)
{
	struct fab_pool *pools[2] = {cl->small_pool, cl->large_pool};

	for (int i = 0; i < 2; i++) {
		const char *base = fab_mr_addr(fab_pool_mr(pools[i]));
		size_t mlen = fab_mr_len(fab_pool_mr(pools[i]));

		if ((const char *)buf >= base && (const char *)buf < base + mlen &&
		    len <= (size_t)(base + mlen - (const char *)buf))
			return pools[i];
	}
	return NULL;
}

void *client_bounce_get(struct weft_cluster *cl, uint64_t len, struct fab_pool **pool_out)
{
	struct fab_sge sge;
	void *b = NULL;

	if (len <= CLIENT_SMALL_BUF) {
		b = fab_pool_get(cl->small_pool, &sge);
		if (b != NULL)
			*pool_out = cl->small_pool;
	}
	if (b == NULL && len <= cl->max_op) {
		b = fab_pool_get(cl->large_pool, &sge);
		if (b != NULL)
			*pool_out = cl->large_pool;
	}
	return b;
}

void *weft_buf_alloc(struct weft_cluster *cl, size_t len)
{
	struct fab_pool *p;
	void *b;

	if (len > cl->max_op) {
		errno = E2BIG;
		return NULL;
	}
	b = client_bounce_get(cl, len, &p);
	if (b == NULL)
		errno = ENOBUFS;
	return b;
}

void weft_buf_free(struct weft_cluster *cl, void *buf)
{
	struct fab_pool *p;

	if (buf == NULL)
		return;
	p = client_buf_pool(cl, buf, 1);
	if (p != NULL)
		fab_pool_put(p, buf);
}

#define CLIENT_HELLO_LINGER_MS 2000

static int client_hello_send(struct weft_cluster *cl, struct client_conn *c)
{
	uint8_t buf[512];
	size_t len;
	int rc;

	rc = proto_hello_frame(&cl->hello, buf, sizeof(buf), &len);
	return rc != 0 ? rc : fab_send(c->ep, buf, len, NULL);
}

/* The OSD's first frame: its hello. A refusal fails the ops sent to it (client_op.c). */
static void client_hello_recv(struct weft_cluster *cl, struct client_conn *c, const void *data,
			      size_t len)
{
	char why[PROTO_HELLO_WHY_MAX], who[96];
	struct proto_hdr hdr;
	struct proto_msg msg;
	int rc;

	snprintf(who, sizeof(who), "%s osd.%u", cl->name, c->osd);
	if (proto_frame_decode(data, len, cl->msg_size, who, NULL, &hdr, &msg) != 0) {
		c->failed = true;
		return;
	}
	if (msg.type != PROTO_HELLO) {
		proto_hello_unexpected(msg.type, c->addr, why, sizeof(why));
		rc = -EPROTONOSUPPORT;
	} else {
		rc = proto_hello_check(&cl->hello, &msg.hello, c->addr, why, sizeof(why));
	}
	if (rc != 0) {
		/*
		 * The ops sent here fail now; the connection lingers a little,
		 * delivering nothing, so our queued hello reaches the OSD too.
		 */
		log_error("client", "%s: %s", cl->name, why);
		c->refused = rc;
		c->refused_until_ms = clock_now_ms() + CLIENT_HELLO_LINGER_MS;
		client_ops_conn_failed(cl, c);
		return;
	}
	c->hello_done = true;
}

struct client_conn *client_conn_get(struct weft_cluster *cl, uint32_t osd, const char *addr)
{
	struct client_conn *c;
	int rc;

	for (c = cl->conns; c; c = c->next)
		if (c->osd == osd && !c->failed && !c->refused && !strcmp(c->addr, addr))
			return c;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	rc = fab_connect(cl->dom, addr, NULL, c, &c->ep);
	if (rc != 0) {
		log_warn("client", "%s: connect to osd.%u at %s: %s", cl->name, osd, addr,
			 weft_strerror(rc));
		free(c);
		return NULL;
	}
	c->cl = cl;
	c->osd = osd;
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
	/* our hello goes first, queued behind the connect (proto/hello.h) */
	rc = client_hello_send(cl, c);
	if (rc != 0) {
		log_warn("client", "%s: hello to osd.%u at %s: %s", cl->name, osd, addr,
			 weft_strerror(rc));
		fab_ep_close(c->ep);
		free(c);
		return NULL;
	}
	c->next = cl->conns;
	cl->conns = c;
	return c;
}

void client_conn_free(struct client_conn *c)
{
	struct weft_cluster *cl = c->cl;

	for (struct client_conn **pp = &cl->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	client_ops_conn_failed(cl, c);
	fab_ep_close(c->ep);
	free(c);
}

static void client_cqe_handle(struct weft_cluster *cl, const struct fab_cqe *cqe)
{
	struct client_conn *c = cqe->ep ? fab_ep_ctx(cqe->ep) : NULL;

	switch (cqe->kind) {
	case FAB_EV_RECV:
		if (c != NULL && c->refused)
			; /* refused by the hello check: lingering until closed */
		else if (c != NULL && !c->failed && !c->hello_done)
			client_hello_recv(cl, c, cqe->data, cqe->len);
		else if (c != NULL && !c->failed)
			client_op_reply(cl, c, cqe->data, cqe->len);
		fab_recv_release(cqe);
		break;
	case FAB_EV_CONNECTED:
		if (cqe->status != 0 && c != NULL)
			c->failed = true;
		break;
	case FAB_EV_PEER_FAILED:
		if (c != NULL)
			c->failed = true;
		break;
	default:
		break;
	}
}

static int client_fab_poll(struct evl *evl, void *arg)
{
	struct weft_cluster *cl = arg;
	struct fab_cqe cqes[32];
	int n, total, rc;

	rc = fab_progress(cl->dom, 0);
	if (rc < 0)
		return rc;
	total = rc;
	while ((n = fab_cq_poll(cl->dom, cqes, 32)) > 0) {
		for (int i = 0; i < n; i++)
			client_cqe_handle(cl, &cqes[i]);
		total += n;
	}
	for (struct client_conn *c = cl->conns, *next; c; c = next) {
		next = c->next;
		if (c->refused && clock_now_ms() >= c->refused_until_ms)
			c->failed = true;
		if (c->failed)
			client_conn_free(c);
	}
	return total;
}

int weft_poll(struct weft_cluster *cl, int timeout_ms)
{
	uint64_t before = cl->callbacks;
	int rc = evl_run_once(cl->loop, timeout_ms);

	if (rc < 0)
		return rc;
	return (int)(cl->callbacks - before);
}

int weft_fd(const struct weft_cluster *cl)
{
	return evl_fd(cl->loop);
}

unsigned int weft_inflight(const struct weft_cluster *cl)
{
	return cl->nops;
}

int weft_debug_conns_json(struct weft_cluster *cl, char *buf, size_t cap)
{
	size_t off = 0;
	int n = 0;

	off += (size_t)snprintf(buf, cap, "{\"conns\": [");
	for (struct client_conn *c = cl->conns; c && off < cap; c = c->next, n++) {
		struct fab_ep_stats s;

		fab_ep_stats(c->ep, &s);
		off += (size_t)snprintf(buf + off, cap - off,
					"%s{\"osd\": %u, \"local\": \"%s\", \"peer\": \"%s\", "
					"\"tx_bytes\": %" PRIu64 ", \"rx_bytes\": %" PRIu64
					", \"rx_frames\": %" PRIu64 ", \"rx_ctrl_frames\": %" PRIu64
					"}",
					n ? ", " : "", c->osd, fab_ep_local_addr(c->ep),
					fab_ep_peer_addr(c->ep), s.tx_bytes, s.rx_bytes, s.rx_frames,
					s.rx_ctrl_frames);
	}
	if (off < cap)
		off += (size_t)snprintf(buf + off, cap - off, "]}");
	return off < cap ? 0 : -ENOBUFS;
}

uint64_t weft_debug_resends(const struct weft_cluster *cl)
{
	return cl->resends;
}

const char *weft_version(void)
{
	return weft_version_full();
}
