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
#include "auth/handshake.h"
#include "auth/policy.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/version.h"
#include "proto/hello.h"

static int client_auth_start(struct weft_cluster *cl);

/* The mon client's deadlines on a one-shot timer (mon/monc/monc_evl.h). */
static int client_loop_monc_attach(struct weft_cluster *cl)
{
	return monc_evl_attach(&cl->monc_timer, cl->monc, cl->loop, "client", cl->name);
}

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
	rc = msgr_create_on(cl->dom, cl->name, &cl->msgr);
	if (rc != 0)
		goto err_dom;
	msgr_hello_set(cl->msgr, &cl->hello); /* its nonce is this handle's instance */
	/*
	 * Registered once: OSDs pull payloads from and push reads into these,
	 * each op's buffer through a key scoped to that op's OSD connection,
	 * range and direction, revoked when the op ends (client_op_scope).
	 */
	rc = fab_pool_create(cl->dom, CLIENT_SMALL_BUF, CLIENT_SMALL_COUNT,
			     FAB_ACCESS_REMOTE_READ | FAB_ACCESS_REMOTE_WRITE | FAB_ACCESS_SCOPED, 0,
			     &cl->small_pool);
	if (rc == 0)
		rc = fab_pool_create(
		    cl->dom, cl->max_op, (uint32_t)conf_get_int(cl->conf, CONF_CLIENT_BUFFERS),
		    FAB_ACCESS_REMOTE_READ | FAB_ACCESS_REMOTE_WRITE | FAB_ACCESS_SCOPED, 0,
		    &cl->large_pool);
	if (rc != 0)
		goto err_dom;
	rc = monc_create_on(cl->msgr, cl->conf, cl->name, &cl->monc);
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
	rc = client_auth_start(cl);
	if (rc != 0)
		goto err_monc;
	*cl_out = cl;
	return 0;
err_monc:
	monc_evl_detach(&cl->monc_timer);
	evl_destroy(cl->loop);
	monc_destroy(cl->monc);
err_dom:
	msgr_destroy(cl->msgr);
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
	monc_evl_detach(&cl->monc_timer);
	evl_destroy(cl->loop);
	monc_destroy(cl->monc);
	msgr_destroy(cl->msgr);
	if (cl->large_pool)
		fab_pool_destroy(cl->large_pool);
	if (cl->small_pool)
		fab_pool_destroy(cl->small_pool);
	fab_domain_close(cl->dom);
	conf_destroy(cl->conf);
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

/* ---------------------------------------------------- OSD connections */

static struct client_conn *client_conn_of(struct msgr_conn *mc)
{
	struct client_conn *c = msgr_conn_ctx(mc);

	return c != NULL && !c->failed ? c : NULL;
}

static void client_recv_cb(struct msgr_conn *mc, const struct proto_hdr *hdr,
			   const struct proto_msg *msg, void *arg)
{
	struct weft_cluster *cl = arg;
	struct client_conn *c = client_conn_of(mc);

	if (c == NULL)
		return;
	if (msg->type != PROTO_OSD_OP_REPLY) {
		/* a confused peer is dropped, its ops resent */
		log_warn("client", "%s: unexpected %s message from osd.%u at %s; closing", cl->name,
			 proto_type_name(msg->type), c->osd, c->addr);
		c->failed = true;
		return;
	}
	client_op_reply(cl, c, hdr->tid, &msg->osd_op_reply);
}

/* The connection broke, or the OSD refused our hello or ticket (then its ops fail: client_op.c). */
static void client_fail_cb(struct msgr_conn *mc, int status, void *arg)
{
	struct client_conn *c = msgr_conn_ctx(mc);

	(void)arg;
	if (c == NULL) {
		msgr_conn_close(mc);
		return;
	}
	/* refused by its hello check, or its authentication (our ticket): the ops fail with it */
	if (status == -EPROTONOSUPPORT || status == -EACCES)
		c->refused = status;
	c->failed = true; /* freed by weft_poll after the current batch */
}

static const struct msgr_ops client_conn_ops = {
    .recv_cb = client_recv_cb, .fail_cb = client_fail_cb,
    /* no write_imm_cb: OSDs write read data with plain one-sided writes */
};

/*
 * Where the conf wants clients to authenticate, our OSD connections present
 * a ticket the monitors grant us (docs/security.md); wait for the first one
 * (a client whose key has no osd caps gets none: its OSD ops fail then).
 */
static int client_auth_start(struct weft_cluster *cl)
{
	struct auth_policy pol;
	struct msgr_auth a = {0};
	uint64_t deadline;
	int rc;

	auth_policy_from_conf(cl->conf, &pol);
	if (!pol.client)
		return 0;
	a.entity = cl->name;
	a.server = AUTH_OSD_SERVICE;
	a.ticket = monc_ticket_get;
	a.ticket_arg = cl->monc;
	a.fsid = conf_get_str(cl->conf, CONF_FSID);
	rc = msgr_auth_add(cl->msgr, &a, &cl->osd_auth);
	if (rc == 0)
		rc = monc_ticket_want(cl->monc, cl->conf, true, false);
	if (rc != 0) {
		log_error("client", "%s: cannot set up authentication: %s", cl->name,
			  weft_strerror(rc));
		return rc;
	}
	deadline = clock_now_ms() + cl->op_timeout_ms;
	while (!monc_ticket_ready(cl->monc) && monc_ticket_error(cl->monc) == 0 &&
	       clock_now_ms() < deadline)
		monc_wait(cl->monc, 20);
	if (!monc_ticket_ready(cl->monc))
		log_warn("client", "%s: no ticket for the OSDs from the monitors: %s", cl->name,
			 weft_strerror(monc_ticket_error(cl->monc) ?: -ETIMEDOUT));
	return 0;
}

struct client_conn *client_conn_get(struct weft_cluster *cl, uint32_t osd, const char *addr)
{
	struct client_conn *c;
	int rc;

	for (c = cl->conns; c; c = c->next)
		if (c->osd == osd && !c->failed && !c->refused && !strcmp(c->addr, addr))
			return c;
	if (cl->osd_auth != NULL && !monc_ticket_ready(cl->monc)) {
		/* the op is tried again; the mon client asks for the ticket meanwhile */
		if (!cl->ticket_waited)
			log_warn("client", "%s: no ticket for the OSDs yet: ops wait for it",
				 cl->name);
		cl->ticket_waited = true;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	/* our hello goes first, queued behind the connect (msgr/msgr.h) */
	rc = msgr_connect_ops(cl->msgr, addr, NULL, &client_conn_ops, cl, cl->osd_auth, c, &c->mc);
	if (rc != 0) {
		log_warn("client", "%s: connect to osd.%u at %s: %s", cl->name, osd, addr,
			 weft_strerror(rc));
		free(c);
		return NULL;
	}
	c->cl = cl;
	c->osd = osd;
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
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
	msgr_conn_close(c->mc);
	free(c);
}

/*
 * The messenger: OSD replies and the mon client's frames, then connections
 * that failed meanwhile are freed; a map that came with them lets the ops
 * waiting for it go at once (not at the mon client's next tick).
 */
static int client_fab_poll(struct evl *evl, void *arg)
{
	struct weft_cluster *cl = arg;
	int rc;

	(void)evl;
	rc = msgr_progress_budget(cl->msgr, 4096);
	if (rc < 0)
		return rc;
	for (struct client_conn *c = cl->conns, *next; c; c = next) {
		next = c->next;
		if (c->failed)
			client_conn_free(c);
	}
	if (monc_map(cl->monc)->epoch != cl->epoch) {
		cl->epoch = monc_map(cl->monc)->epoch;
		client_ops_map_changed(cl);
	}
	return rc;
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
		struct fab_ep *ep = msgr_conn_ep(c->mc);
		struct fab_ep_stats s;

		fab_ep_stats(ep, &s);
		off += (size_t)snprintf(
		    buf + off, cap - off,
		    "%s{\"osd\": %u, \"local\": \"%s\", \"peer\": \"%s\", "
		    "\"tx_bytes\": %" PRIu64 ", \"rx_bytes\": %" PRIu64 ", \"rx_frames\": %" PRIu64
		    ", \"rx_ctrl_frames\": %" PRIu64 "}",
		    n ? ", " : "", c->osd, fab_ep_local_addr(ep), fab_ep_peer_addr(ep), s.tx_bytes,
		    s.rx_bytes, s.rx_frames, s.rx_ctrl_frames);
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
