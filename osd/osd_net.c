/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OSD's network side: pick the public and cluster addresses, listen on
 * both with one fabric domain, own the connections, turn fabric
 * completions into calls of osd_op.c / osd_repl.c, and count bytes per
 * network (the proof that replication stays on the cluster network).
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

#define OSD_SMALL_BUF	 (64u << 10)
#define OSD_SMALL_COUNT	 128u
#define OSD_SEND_RETRIES 10000

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
static int osd_listen(struct osd *osd, const char *ip, uint16_t port, void *ctx,
		      struct fab_listener **l_out, char *addr_out)
{
	int lo = port ? port : (int)conf_get_int(osd->conf, CONF_MS_BIND_PORT_MIN);
	int hi = port ? port : (int)conf_get_int(osd->conf, CONF_MS_BIND_PORT_MAX);
	char addr[PROTO_ADDR_MAX + 1];
	int rc = -EADDRINUSE;

	for (int p = lo; p <= hi; p++) {
		snprintf(addr, sizeof(addr), "%s:%d", ip, p);
		rc = fab_listen(osd->dom, addr, ctx, l_out);
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
	rc = osd_listen(osd, pub_ip, pub_port, (void *)(uintptr_t)OSD_CONN_CLIENT, &osd->pub_l,
			osd->pub_addr);
	if (rc != 0)
		goto err_dom;
	rc = osd_listen(osd, clu_ip, clu_port, (void *)(uintptr_t)OSD_CONN_REPLICA, &osd->clu_l,
			osd->clu_addr);
	if (rc != 0)
		goto err_dom;
	snprintf(osd->clu_ip, sizeof(osd->clu_ip), "%s", clu_ip);
	/* registered once here: the I/O path never registers memory */
	/* resident from the start on every backend: osd_memory_target counts them whole */
	rc = fab_pool_create(osd->dom, OSD_SMALL_BUF + OSD_REC_HDR_MAX, OSD_SMALL_COUNT,
			     FAB_ACCESS_LOCAL, FAB_POOL_POPULATE, &osd->small_pool);
	if (rc != 0)
		goto err_dom;
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

struct osd_conn *osd_conn_new(struct osd *osd, struct fab_ep *ep, enum osd_conn_kind kind)
{
	struct osd_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->osd = osd;
	c->ep = ep;
	c->kind = kind;
	c->next = osd->conns;
	if (osd->conns)
		osd->conns->prev = c;
	osd->conns = c;
	fab_ep_set_ctx(ep, c);
	/* first on the wire, before anything the caller sends (fabric keeps order) */
	if (osd_hello_send(c) != 0)
		c->failed = true;
	return c;
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
	fab_ep_close(c->ep);
	osd_pg_hold_free(c);
	if (c->ring_mr)
		fab_mr_dereg(c->ring_mr);
	free(c->ring);
	free(c);
}

/*
 * fab_send copies and queues behind credits; -EAGAIN only means the send
 * queue (ms_sq_depth) is full, which our own in-flight limits keep rare:
 * drive progress and retry, a bounded number of times.
 */
int osd_conn_send(struct osd_conn *conn, const void *buf, size_t len)
{
	int rc = -ENOTCONN;

	if (conn == NULL || conn->failed)
		return -ENOTCONN;
	for (int i = 0; i < OSD_SEND_RETRIES; i++) {
		rc = fab_send(conn->ep, buf, len, NULL);
		if (rc != -EAGAIN)
			break;
		fab_progress(conn->osd->dom, 64);
	}
	if (rc != 0)
		log_warn("osd", "%s: send to %s failed: %s", conn->osd->name,
			 fab_ep_peer_addr(conn->ep), strerror(-rc));
	return rc;
}

int osd_conn_send_reply(struct osd_conn *conn, uint64_t tid, const struct proto_osd_op_reply *r)
{
	struct proto_msg m = {.type = PROTO_OSD_OP_REPLY};
	uint8_t buf[conn != NULL ? conn->osd->msg_size : 64];
	size_t len;
	int rc;

	if (conn == NULL || conn->failed)
		return -ENOTCONN;
	m.osd_op_reply = *r;
	rc = proto_frame_encode(&m, tid, buf, sizeof(buf), &len);
	if (rc != 0)
		return rc;
	return osd_conn_send(conn, buf, len);
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
	return k == OSD_CONN_CLIENT	 ? "client"
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
		  osd->id, osd->map.epoch, osd->pub_addr, osd->clu_addr, c->ops, c->op_errors, c->writes, c->reads,
		  c->write_bytes, c->read_bytes, c->repl_records, c->repl_bytes, c->replica_records,
		  c->replica_bytes, c->estale, c->enxio, c->blocked);
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

static void osd_client_recv(struct osd_conn *conn, const struct fab_cqe *cqe)
{
	struct proto_hdr hdr;
	struct proto_msg msg;
	char who[96];

	snprintf(who, sizeof(who), "%s client %s", conn->osd->name, fab_ep_peer_addr(conn->ep));
	if (proto_frame_decode(cqe->data, cqe->len, conn->osd->msg_size, who, NULL, &hdr, &msg) !=
	    0) {
		/* malformed input closes the connection (logged by the decoder) */
		conn->failed = true;
		return;
	}
	if (msg.type != PROTO_OSD_OP) {
		log_warn("osd", "%s: unexpected %s message, closing", who,
			 proto_type_name(msg.type));
		conn->failed = true;
		return;
	}
	osd_op_recv(conn, hdr.tid, &msg.osd_op);
}

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

/*
 * An accepted endpoint carries its listener's ctx (the connection kind, a
 * small integer) until FAB_EV_ACCEPTED adopts it into an osd_conn.
 */
static struct osd_conn *osd_conn_of(struct fab_ep *ep)
{
	void *c = ep != NULL ? fab_ep_ctx(ep) : NULL;

	return (uintptr_t)c <= OSD_CONN_PEER ? NULL : c;
}

static void osd_cqe_handle(struct osd *osd, struct fab_cqe *cqe)
{
	struct osd_conn *conn = osd_conn_of(cqe->ep);
	uint32_t *tag;

	switch (cqe->kind) {
	case FAB_EV_ACCEPTED:
		conn = osd_conn_new(
		    osd, cqe->ep, cqe->listener == osd->pub_l ? OSD_CONN_CLIENT : OSD_CONN_REPLICA);
		if (conn == NULL)
			fab_ep_close(cqe->ep);
		break;
	case FAB_EV_CONNECTED:
		if (cqe->status != 0 && conn != NULL) {
			conn->failed = true;
			conn->peer_lost = true; /* refused or unreachable */
		} else if (conn != NULL && conn->kind == OSD_CONN_PROBE) {
			conn->probe_ok = true; /* it lives: closed at once (osd_hb_probe_end) */
			conn->failed = true;
		} else if (conn != NULL && conn->kind == OSD_CONN_PEER && conn->peer_known) {
			osd_hb_peer_alive(osd, conn->peer_id);
		}
		break;
	case FAB_EV_RECV:
		if (conn == NULL && cqe->ep != NULL)
			/* a fabric announces an endpoint before its messages: a backend bug */
			log_warn("osd", "%s: message from %s before its connection; dropped",
				 osd->name, fab_ep_peer_addr(cqe->ep));
		if (conn == NULL || conn->failed) {
			fab_recv_release(cqe);
			break;
		}
		if (conn->kind != OSD_CONN_CLIENT && conn->hello_done)
			osd_hb_rx(conn, clock_now_ms());
		if (conn->refused_until_ms != 0)
			; /* refused by the hello check: nothing more is looked at */
		else if (!conn->hello_done)
			osd_hello_recv(conn, cqe->data, cqe->len);
		else if (conn->kind == OSD_CONN_CLIENT)
			osd_client_recv(conn, cqe);
		else if (!osd_pg_msg_recv(conn, cqe->data, cqe->len)) /* peering, recovery */
			osd_repl_recv(conn, cqe->data, cqe->len);
		fab_recv_release(cqe);
		break;
	case FAB_EV_WRITE_IMM:
		if (conn != NULL && !conn->hello_done) {
			/* a ring is granted only after the hello: this peer skipped it */
			log_warn("osd", "%s: ring write from %s before its hello; closing",
				 osd->name, fab_ep_peer_addr(conn->ep));
			conn->failed = true;
		} else if (conn != NULL && !conn->failed && conn->kind == OSD_CONN_REPLICA) {
			osd_hb_rx(conn, clock_now_ms());
			osd_repl_write_imm(conn, cqe->imm, cqe->len);
		}
		break;
	case FAB_EV_SEND:
		break;
	case FAB_EV_WRITE:
	case FAB_EV_READ:
		tag = cqe->ctx;
		if (tag != NULL && (*tag == OSD_TAG_OP || *tag == OSD_TAG_REPL))
			osd_op_fab_done((struct osd_op *)cqe->ctx, cqe);
		break;
	case FAB_EV_PEER_FAILED:
		if (conn != NULL) {
			conn->failed = true;
			conn->peer_lost = true;
		}
		break;
	}
}

int osd_net_progress(struct osd *osd)
{
	struct fab_cqe cqes[32];
	int n, total = 0, rc;

	rc = fab_progress(osd->dom, 0);
	if (rc < 0)
		return rc;
	total += rc;
	/*
	 * Writes received in this batch queue in the store; their replica
	 * records are posted as they arrive. Flush the posts, then start the
	 * commit: a lone transaction's barrier runs inline, and replicas that
	 * waited for it would add it to every write (docs/data-path.md).
	 */
	store_plug(osd->store);
	while ((n = fab_cq_poll(osd->dom, cqes, 32)) > 0) {
		for (int i = 0; i < n; i++)
			osd_cqe_handle(osd, &cqes[i]);
		total += n;
		if (total > 4096)
			break; /* let the store and the mons have a turn */
	}
	if (total > 0)
		fab_flush(osd->dom);
	store_unplug(osd->store);
	/* failed connections are torn down outside the completion loop */
	for (struct osd_conn *c = osd->conns, *next; c; c = next) {
		next = c->next;
		if (c->refused_until_ms != 0 && clock_now_ms() >= c->refused_until_ms)
			c->failed = true;
		if (c->failed)
			osd_conn_fail(osd, c);
	}
	return total;
}
