/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OSD's network side: pick the public and cluster addresses, listen on
 * both with the process's one messenger (msgr/: one fabric domain, shared
 * with the mon client), own the connections, hand each frame to the module
 * it is for (osd_op.c, osd_repl.c, osd_pg.c, osd_hb.c) and count bytes per
 * network (the proof that replication stays on the cluster network). This
 * file knows the kinds of connection and of message, not what an op does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdarg.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd_pg.h"
#include "proto/hello.h"

#define OSD_SMALL_BUF	(64u << 10)
#define OSD_SMALL_COUNT 128u

static const struct msgr_ops osd_client_ops, osd_cluster_ops;
static void osd_rma_cb(struct msgr_conn *mc, const struct fab_cqe *cqe, void *arg);

static bool osd_ip_in_net(const char *ip, const struct conf_net *net)
{
	struct in_addr a, n;
	uint32_t mask;

	if (net->family != AF_INET || inet_pton(AF_INET, ip, &a) != 1 ||
	    inet_pton(AF_INET, net->ip, &n) != 1)
		return false;
	mask = net->prefix == 0 ? 0 : htonl(~0u << (32 - net->prefix));
	return (a.s_addr & mask) == (n.s_addr & mask);
}

/* ip (and port, 0 = any) from an address option, else from a network option. */
static int osd_addr_pick(struct osd *osd, enum conf_key addr_key, enum conf_key net_key,
			 char *ip_out, size_t cap, uint16_t *port_out)
{
	const struct conf_addr *a;
	const struct conf_net *nets;
	struct ifaddrs *ifs, *i;
	unsigned int n, nn;
	int rc = -EADDRNOTAVAIL;

	a = conf_get_addrs(osd->conf, addr_key, &n);
	if (n > 0) {
		snprintf(ip_out, cap, "%s", a[0].ip);
		*port_out = a[0].port;
		return 0;
	}
	nets = conf_get_nets(osd->conf, net_key, &nn);
	if (nn == 0)
		return -ENOENT;
	if (getifaddrs(&ifs) != 0)
		return -errno;
	for (i = ifs; i != NULL && rc != 0; i = i->ifa_next) {
		char ip[INET_ADDRSTRLEN];

		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET)
			continue;
		inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, ip, sizeof(ip));
		for (unsigned int k = 0; k < nn; k++) {
			if (osd_ip_in_net(ip, &nets[k])) {
				snprintf(ip_out, cap, "%s", ip);
				*port_out = 0;
				rc = 0;
				break;
			}
		}
	}
	freeifaddrs(ifs);
	if (rc != 0)
		log_error("osd", "%s: no local interface address in %s", osd->name,
			  conf_get_str(osd->conf, net_key));
	return rc;
}

/* Listen on ip:port, or on the first free port of ms_bind_port_min..max when port is 0. */
static int osd_listen(struct osd *osd, const char *ip, uint16_t port, const struct msgr_ops *ops,
		      struct msgr_listener **l_out, char *addr_out)
{
	int lo = port ? port : (int)conf_get_int(osd->conf, CONF_MS_BIND_PORT_MIN);
	int hi = port ? port : (int)conf_get_int(osd->conf, CONF_MS_BIND_PORT_MAX);
	char addr[PROTO_ADDR_MAX + 1];
	int rc = -EADDRINUSE;

	for (int p = lo; p <= hi; p++) {
		snprintf(addr, sizeof(addr), "%s:%d", ip, p);
		rc = msgr_listen_ops(osd->msgr, addr, ops, osd,
				     ops == &osd_client_ops ? osd->auth_pub : osd->auth_clu, l_out);
		if (rc == 0) {
			snprintf(addr_out, PROTO_ADDR_MAX + 1, "%s", addr);
			return 0;
		}
		if (rc != -EADDRINUSE)
			break;
	}
	log_error("osd", "%s: cannot listen on %s port %d..%d: %s", osd->name, ip, lo, hi,
		  strerror(-rc));
	return rc;
}

int osd_net_start(struct osd *osd)
{
	struct fab_domain_attr attr;
	char pub_ip[64], clu_ip[64];
	uint16_t pub_port = 0, clu_port = 0;
	uint64_t large;
	int rc;

	rc = osd_addr_pick(osd, CONF_PUBLIC_ADDR, CONF_PUBLIC_NETWORK, pub_ip, sizeof(pub_ip),
			   &pub_port);
	if (rc == -ENOENT) {
		log_error("osd", "%s: set public_addr or public_network", osd->name);
		return -WEFT_E_BADCONF;
	}
	if (rc != 0)
		return rc;
	rc = osd_addr_pick(osd, CONF_CLUSTER_ADDR, CONF_CLUSTER_NETWORK, clu_ip, sizeof(clu_ip),
			   &clu_port);
	if (rc == -ENOENT) {
		log_warn("osd", "%s: no cluster_addr/cluster_network: replication shares %s",
			 osd->name, pub_ip);
		snprintf(clu_ip, sizeof(clu_ip), "%s", pub_ip);
	} else if (rc != 0) {
		return rc;
	}
	fab_domain_attr_from_conf(&attr, osd->conf);
	attr.name = osd->name;
	rc = fab_domain_open(&attr, &osd->dom);
	if (rc != 0) {
		log_error("osd", "%s: fabric domain (%s): %s", osd->name,
			  attr.backend ? attr.backend : "auto", weft_strerror(rc));
		return rc;
	}
	osd->msg_size = attr.msg_size;
	rc = msgr_create_on(osd->dom, osd->name, &osd->msgr);
	if (rc != 0)
		goto err_dom;
	msgr_rma_handler(osd->msgr, osd_rma_cb, osd);
	rc = osd_auth_start(osd);
	if (rc != 0)
		goto err_msgr;
	rc = osd_listen(osd, pub_ip, pub_port, &osd_client_ops, &osd->pub_l, osd->pub_addr);
	if (rc != 0)
		goto err_msgr;
	rc = osd_listen(osd, clu_ip, clu_port, &osd_cluster_ops, &osd->clu_l, osd->clu_addr);
	if (rc != 0)
		goto err_msgr;
	snprintf(osd->clu_ip, sizeof(osd->clu_ip), "%s", clu_ip);
	/* registered once here: the I/O path never registers memory */
	/* resident from the start on every backend: osd_memory_target counts them whole */
	rc = fab_pool_create(osd->dom, OSD_SMALL_BUF + OSD_REC_HDR_MAX, OSD_SMALL_COUNT,
			     FAB_ACCESS_LOCAL, FAB_POOL_POPULATE, &osd->small_pool);
	if (rc != 0)
		goto err_msgr;
	large = osd->max_op + OSD_REC_HDR_MAX;
	rc =
	    fab_pool_create(osd->dom, large, (uint32_t)conf_get_int(osd->conf, CONF_OSD_OP_BUFFERS),
			    FAB_ACCESS_LOCAL, FAB_POOL_POPULATE, &osd->large_pool);
	if (rc != 0)
		goto err_small;
	log_info("osd", "%s: public %s, cluster %s, fabric %s, %u MiB registered for payloads",
		 osd->name, osd->pub_addr, osd->clu_addr, fab_domain_backend(osd->dom),
		 (unsigned int)((OSD_SMALL_BUF * (uint64_t)OSD_SMALL_COUNT +
				 large * conf_get_int(osd->conf, CONF_OSD_OP_BUFFERS)) >>
				20));
	return 0;
err_small:
	fab_pool_destroy(osd->small_pool);
	osd->small_pool = NULL;
err_msgr:
	msgr_destroy(osd->msgr); /* the listeners with it */
	osd->msgr = NULL;
	osd->pub_l = osd->clu_l = NULL;
err_dom:
	if (rc != 0 && rc != -EADDRINUSE)
		log_error("osd", "%s: network start failed: %s", osd->name, weft_strerror(rc));
	fab_domain_close(osd->dom);
	osd->dom = NULL;
	return rc;
}

void osd_net_stop(struct osd *osd)
{
	while (osd->conns != NULL)
		osd_conn_free(osd->conns);
	msgr_destroy(osd->msgr); /* the mon client's connections are gone by now */
	osd->msgr = NULL;
	if (osd->large_pool)
		fab_pool_destroy(osd->large_pool);
	if (osd->small_pool)
		fab_pool_destroy(osd->small_pool);
	if (osd->dom)
		fab_domain_close(osd->dom);
	osd->dom = NULL;
}

void *osd_buf_get(struct osd *osd, uint64_t len, struct fab_pool **pool_out,
		  struct fab_sge *sge_out)
{
	struct fab_pool *p =
	    len <= OSD_SMALL_BUF + OSD_REC_HDR_MAX ? osd->small_pool : osd->large_pool;
	void *b = fab_pool_get(p, sge_out);

	if (b == NULL && p == osd->small_pool) {
		p = osd->large_pool;
		b = fab_pool_get(p, sge_out);
	}
	if (b != NULL)
		*pool_out = p;
	return b;
}

static struct osd_conn *osd_conn_new(struct osd *osd, struct msgr_conn *mc, enum osd_conn_kind kind)
{
	struct osd_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->osd = osd;
	c->mc = mc;
	c->ep = msgr_conn_ep(mc);
	c->kind = kind;
	c->next = osd->conns;
	if (osd->conns)
		osd->conns->prev = c;
	osd->conns = c;
	msgr_conn_set_ctx(mc, c);
	return c;
}

struct osd_conn *osd_conn_connect(struct osd *osd, const char *addr, enum osd_conn_kind kind)
{
	struct msgr_conn *mc;
	struct osd_conn *c;
	int rc;

	rc = msgr_connect_ops(osd->msgr, addr, osd->clu_ip, &osd_cluster_ops, osd, osd->auth_peer,
			      NULL, &mc);
	if (rc != 0) {
		log_warn("osd", "%s: connect to %s: %s", osd->name, addr, weft_strerror(rc));
		return NULL;
	}
	c = osd_conn_new(osd, mc, kind);
	if (c == NULL)
		msgr_conn_close(mc);
	return c;
}

const char *osd_conn_peer(const struct osd_conn *conn)
{
	return msgr_conn_peer(conn->mc);
}

void osd_conn_kill(struct osd_conn *conn)
{
	if (conn->failed)
		return;
	conn->failed = true;
	conn->osd->nfailed++;
}

static void osd_stats_add(struct fab_ep_stats *acc, const struct fab_ep_stats *s)
{
	acc->tx_bytes += s->tx_bytes;
	acc->rx_bytes += s->rx_bytes;
	acc->sends += s->sends;
	acc->recvs += s->recvs;
	acc->writes += s->writes;
	acc->reads += s->reads;
	acc->write_bytes += s->write_bytes;
	acc->read_bytes += s->read_bytes;
	acc->remote_writes += s->remote_writes;
	acc->remote_reads += s->remote_reads;
	acc->rx_frames += s->rx_frames;
	acc->rx_ctrl_frames += s->rx_ctrl_frames;
}

void osd_conn_free(struct osd_conn *c)
{
	struct osd *osd = c->osd;
	struct fab_ep_stats s;

	fab_ep_stats(c->ep, &s);
	osd_stats_add(c->kind == OSD_CONN_CLIENT ? &osd->closed_pub : &osd->closed_clu, &s);
	if (c->prev)
		c->prev->next = c->next;
	else
		osd->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (c->failed)
		osd->nfailed--;
	msgr_conn_close(c->mc);
	osd_pg_hold_free(c);
	if (c->ring_mr)
		fab_mr_dereg(c->ring_mr);
	if (c->ring != NULL)
		osd->ring_bytes -= c->ring_size;
	free(c->ring);
	free(c);
}

int osd_conn_send(struct osd_conn *conn, const struct proto_msg *m, uint64_t tid)
{
	int rc;

	if (conn == NULL || conn->failed)
		return -ENOTCONN;
	rc = msgr_send(conn->mc, m, tid);
	if (rc != 0)
		log_warn("osd", "%s: send of %s to %s failed: %s", conn->osd->name,
			 proto_type_name(m->type), osd_conn_peer(conn), weft_strerror(rc));
	return rc;
}

int osd_conn_send_reply(struct osd_conn *conn, uint64_t tid, const struct proto_osd_op_reply *r)
{
	struct proto_msg m = {.type = PROTO_OSD_OP_REPLY};

	m.osd_op_reply = *r;
	return osd_conn_send(conn, &m, tid);
}

static void osd_jsonf(char *buf, size_t cap, size_t *off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void osd_jsonf(char *buf, size_t cap, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= cap)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, cap - *off, fmt, ap);
	va_end(ap);
	*off += n > 0 ? (size_t)n : 0;
}

static const char *osd_kind_name(enum osd_conn_kind k)
{
	return k == OSD_CONN_CLIENT    ? "client"
	       : k == OSD_CONN_REPLICA ? "replica"
	       : k == OSD_CONN_PROBE   ? "probe"
				       : "peer";
}

/*
 * Counters as JSON: ops and bytes, then bytes per network (public =
 * client connections, cluster = replication both ways, closed ones
 * included) and the live connections with their local and peer addresses.
 */
int osd_perf_json(struct osd *osd, char *buf, size_t cap, size_t *len_out)
{
	struct fab_ep_stats pub = osd->closed_pub, clu = osd->closed_clu, s;
	const struct osd_counters *c = &osd->ctr;
	size_t off = 0;
	int n = 0;

	for (struct osd_conn *k = osd->conns; k; k = k->next) {
		fab_ep_stats(k->ep, &s);
		osd_stats_add(k->kind == OSD_CONN_CLIENT ? &pub : &clu, &s);
	}
	osd_jsonf(buf, cap, &off,
		  "{\"osd\": %u, \"map_epoch\": %u, \"public_addr\": \"%s\", "
		  "\"cluster_addr\": \"%s\", "
		  "\"ops\": %" PRIu64 ", \"op_errors\": %" PRIu64 ", \"writes\": %" PRIu64
		  ", \"reads\": %" PRIu64 ", \"write_bytes\": %" PRIu64 ", \"read_bytes\": %" PRIu64
		  ", \"repl_records\": %" PRIu64 ", \"repl_bytes\": %" PRIu64
		  ", \"replica_records\": %" PRIu64 ", \"replica_bytes\": %" PRIu64
		  ", \"estale\": %" PRIu64 ", \"enxio\": %" PRIu64 ", \"blocked\": %" PRIu64 ", ",
		  osd->id, osd->map.epoch, osd->pub_addr, osd->clu_addr, c->ops, c->op_errors,
		  c->writes, c->reads, c->write_bytes, c->read_bytes, c->repl_records,
		  c->repl_bytes, c->replica_records, c->replica_bytes, c->estale, c->enxio,
		  c->blocked);
	osd_jsonf(buf, cap, &off,
		  "\"public\": {\"tx_bytes\": %" PRIu64 ", \"rx_bytes\": %" PRIu64 "}, "
		  "\"cluster\": {\"tx_bytes\": %" PRIu64 ", \"rx_bytes\": %" PRIu64
		  "}, \"conns\": [",
		  pub.tx_bytes, pub.rx_bytes, clu.tx_bytes, clu.rx_bytes);
	for (struct osd_conn *k = osd->conns; k && n < 24; k = k->next, n++) {
		fab_ep_stats(k->ep, &s);
		osd_jsonf(buf, cap, &off,
			  "%s{\"kind\": \"%s\", \"local\": \"%s\", \"peer\": \"%s\", "
			  "\"tx_bytes\": %" PRIu64 ", \"rx_bytes\": %" PRIu64 "}",
			  n ? ", " : "", osd_kind_name(k->kind), fab_ep_local_addr(k->ep),
			  fab_ep_peer_addr(k->ep), s.tx_bytes, s.rx_bytes);
	}
	osd_jsonf(buf, cap, &off, "]}");
	if (off >= cap)
		return -ENOBUFS;
	*len_out = off;
	return 0;
}

/* ------------------------------------------------------- messenger events */

static struct osd_conn *osd_conn_of(struct msgr_conn *mc)
{
	struct osd_conn *c = msgr_conn_ctx(mc);

	return c != NULL && !c->failed ? c : NULL;
}

static void osd_accept(struct osd *osd, struct msgr_conn *mc, enum osd_conn_kind kind)
{
	if (osd_conn_new(osd, mc, kind) == NULL)
		msgr_conn_close(mc);
}

static void osd_client_accept_cb(struct msgr_conn *mc, void *arg)
{
	osd_accept(arg, mc, OSD_CONN_CLIENT);
}

static void osd_cluster_accept_cb(struct msgr_conn *mc, void *arg)
{
	osd_accept(arg, mc, OSD_CONN_REPLICA); /* we are a replica of whoever connects */
}

static void osd_connect_cb(struct msgr_conn *mc, int status, void *arg)
{
	struct osd_conn *conn = osd_conn_of(mc);

	if (conn == NULL || status != 0)
		return; /* a failed connect raises fail_cb next */
	if (conn->kind == OSD_CONN_PROBE) {
		conn->probe_ok = true; /* it lives: closed at once (osd_hb_probe_end) */
		osd_conn_kill(conn);
	} else if (conn->kind == OSD_CONN_PEER && conn->peer_known) {
		osd_hb_peer_alive(arg, conn->peer_id);
	}
}

static void osd_fail_cb(struct msgr_conn *mc, int status, void *arg)
{
	struct osd_conn *conn = msgr_conn_ctx(mc);

	(void)arg;
	if (conn == NULL) {
		msgr_conn_close(mc);
		return;
	}
	/* the peer closed, reset, refused or timed out (not we, not its bad frames): osd_hb.c */
	if (status != -EPROTO && status != -EPROTONOSUPPORT && status != -ENOMEM)
		conn->peer_lost = true;
	osd_conn_kill(conn); /* torn down after the batch (osd_net_progress) */
}

/* The peer's hello passed: what both sides support, and a client's instance. */
static void osd_ready_cb(struct msgr_conn *mc, void *arg)
{
	struct osd *osd = arg;
	struct osd_conn *conn = osd_conn_of(mc);
	const struct proto_hello *h = msgr_conn_peer_hello(mc);

	if (conn == NULL || h == NULL)
		return;
	conn->hello_done = true;
	conn->peer_features = proto_hello_common(msgr_hello(osd->msgr), h);
	/* a client's nonce is its instance (client.c draws one per cluster handle) */
	if (conn->kind == OSD_CONN_CLIENT && h->entity_type == PROTO_ENTITY_CLIENT)
		conn->peer_instance = h->nonce;
	if (conn->kind != OSD_CONN_CLIENT && !(conn->peer_features & PROTO_FEAT_REPL_MSG)) {
		/* its replication control is the framing before 0.2 (docs/upgrade.md) */
		log_error("osd",
			  "%s: %s at %s runs weft %s, whose cluster messages this OSD no "
			  "longer speaks: upgrade it (docs/upgrade.md); closing",
			  osd->name, h->name, osd_conn_peer(conn), h->version);
		osd_conn_kill(conn);
	}
}

static void osd_client_recv_cb(struct msgr_conn *mc, const struct proto_hdr *hdr,
			       const struct proto_msg *msg, void *arg)
{
	struct osd *osd = arg;
	struct osd_conn *conn = osd_conn_of(mc);

	if (conn == NULL)
		return;
	if (msg->type != PROTO_OSD_OP) {
		log_warn("osd", "%s: unexpected %s message from client %s, closing", osd->name,
			 proto_type_name(msg->type), osd_conn_peer(conn));
		osd_conn_kill(conn);
		return;
	}
	osd_op_recv(conn, hdr->tid, &msg->osd_op);
}

static void osd_cluster_recv_cb(struct msgr_conn *mc, const struct proto_hdr *hdr,
				const struct proto_msg *msg, void *arg)
{
	struct osd *osd = arg;
	struct osd_conn *conn = osd_conn_of(mc);

	(void)hdr;
	if (conn == NULL)
		return;
	if (osd_auth_cluster(conn, proto_type_name(msg->type)) != 0) {
		osd_conn_kill(conn);
		return;
	}
	osd_hb_rx(conn, clock_now_ms());
	switch (msg->type) {
	case PROTO_REPL_RING_REQ:
	case PROTO_REPL_RING_GRANT:
	case PROTO_REPL_ACK:
	case PROTO_PING:
	case PROTO_PONG:
		osd_repl_recv(conn, msg);
		return;
	case PROTO_PG_QUERY:
	case PROTO_PG_INFO:
	case PROTO_PG_NOTIFY:
	case PROTO_PG_LOG_REQ:
	case PROTO_PG_LOG:
	case PROTO_PG_ACTIVATE:
	case PROTO_PG_DELETE:
	case PROTO_PG_PULL:
	case PROTO_PG_RECOVERED:
	case PROTO_PG_SCAN_REQ:
	case PROTO_PG_SCAN:
		osd_pg_msg_recv(conn, msg); /* peering, recovery */
		return;
	}
	log_warn("osd", "%s: unexpected %s message on the cluster network from %s, closing",
		 osd->name, proto_type_name(msg->type), osd_conn_peer(conn));
	osd_conn_kill(conn);
}

/* A primary wrote a replication record into the ring we granted it. */
static void osd_write_imm_cb(struct msgr_conn *mc, uint32_t imm, uint32_t len, void *arg)
{
	struct osd *osd = arg;
	struct osd_conn *conn = osd_conn_of(mc);

	if (conn == NULL)
		return;
	if (conn->kind != OSD_CONN_REPLICA) {
		log_warn("osd", "%s: %s wrote into our memory on a connection we opened; closing",
			 osd->name, osd_conn_peer(conn));
		osd_conn_kill(conn);
		return;
	}
	if (osd_auth_cluster(conn, "a replication record") != 0) {
		osd_conn_kill(conn);
		return;
	}
	osd_hb_rx(conn, clock_now_ms());
	osd_repl_write_imm(conn, imm, len);
}

/* Our one-sided ops for client ops: payload pulls, read data, replication records. */
static void osd_rma_cb(struct msgr_conn *mc, const struct fab_cqe *cqe, void *arg)
{
	(void)mc;
	(void)arg;
	/* every ctx the OSD posts is a struct osd_rma (push writes post none) */
	osd_op_rma_done(cqe->ctx, cqe->status);
}

static const struct msgr_ops osd_client_ops = {
    .recv_cb = osd_client_recv_cb,
    .accept_cb = osd_client_accept_cb,
    .fail_cb = osd_fail_cb,
    .ready_cb = osd_ready_cb,
    /* no write_imm_cb: a client never writes into OSD memory */
};

static const struct msgr_ops osd_cluster_ops = {
    .recv_cb = osd_cluster_recv_cb,
    .accept_cb = osd_cluster_accept_cb,
    .connect_cb = osd_connect_cb,
    .fail_cb = osd_fail_cb,
    .ready_cb = osd_ready_cb,
    .write_imm_cb = osd_write_imm_cb,
};

static void osd_conn_fail(struct osd *osd, struct osd_conn *conn)
{
	if (conn->kind == OSD_CONN_PROBE)
		osd_hb_probe_end(osd, conn);
	else if (conn->kind != OSD_CONN_CLIENT && conn->peer_known && conn->peer_lost)
		osd_hb_peer_lost(osd, conn->peer_id);
	if (conn->kind == OSD_CONN_CLIENT)
		osd_op_conn_failed(osd, conn);
	else if (conn->kind == OSD_CONN_PEER && conn->peer)
		osd_repl_peer_failed(osd, conn->peer);
	osd_conn_free(conn);
}

int osd_net_progress(struct osd *osd)
{
	int rc;

	/*
	 * Writes received in this batch queue in the store; their replica
	 * records are posted as they arrive. Flush the posts, then start the
	 * commit, so the records are on their way before the local barrier
	 * starts (with osd_store_wal_sync = inline it runs in this thread and
	 * replicas that waited for it would add it to every write;
	 * docs/data-path.md).
	 */
	store_plug(osd->store);
	rc = msgr_progress_budget(osd->msgr, 4096);
	if (rc > 0)
		fab_flush(osd->dom);
	store_unplug(osd->store);
	/* failed connections are torn down outside the completion loop */
	for (struct osd_conn *c = osd->conns, *next; c && osd->nfailed > 0; c = next) {
		next = c->next;
		if (c->failed)
			osd_conn_fail(osd, c);
	}
	return rc;
}
