/* SPDX-License-Identifier: Apache-2.0 */
/* weft-osd per-stage latency histograms and the "perf dump" JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/clock.h"
#include "osd/osd.h"
#include "osd/osd_perf.h"

static const char *const osd_stage_names[OSD_ST_COUNT] = {
    [OSD_ST_RECEIVE] = "receive", [OSD_ST_PULL] = "payload_pull",
    [OSD_ST_WAL] = "wal_commit",  [OSD_ST_REPL] = "replica_round_trip",
    [OSD_ST_REPLY] = "reply",	  [OSD_ST_OP_WRITE] = "op_write",
    [OSD_ST_OP_READ] = "op_read", [OSD_ST_READ] = "store_read",
};

int osd_perf_init(struct osd *osd)
{
	osd->perf = calloc(1, sizeof(*osd->perf));
	if (osd->perf == NULL)
		return -ENOMEM;
	for (unsigned int i = 0; i < OSD_ST_COUNT; i++)
		hist_init(&osd->perf->h[i]);
	osd->perf->numa_node = -1;
	return 0;
}

void osd_perf_fini(struct osd *osd)
{
	free(osd->perf);
	osd->perf = NULL;
}

void osd_perf_mark(struct osd *osd, enum osd_stage st, struct osd_op *op)
{
	uint64_t now = clock_now_ns();

	if (op->t_last_ns != 0 && now >= op->t_last_ns)
		hist_record(&osd->perf->h[st], now - op->t_last_ns);
	op->t_last_ns = now;
}

void osd_perf_since_submit(struct osd *osd, enum osd_stage st, struct osd_op *op)
{
	uint64_t now = clock_now_ns();

	if (op->t_submit_ns != 0 && now >= op->t_submit_ns)
		hist_record(&osd->perf->h[st], now - op->t_submit_ns);
	if (now > op->t_last_ns)
		op->t_last_ns = now;
}

void osd_perf_op_done(struct osd_op *op, int status)
{
	struct osd_perf *p = op->osd->perf;
	uint64_t now = clock_now_ns();

	if (status != 0 || op->t_recv_ns == 0)
		return;
	if (op->t_last_ns != 0 && now >= op->t_last_ns)
		hist_record(&p->h[OSD_ST_REPLY], now - op->t_last_ns);
	if (op->op == PROTO_OP_READ)
		hist_record(&p->h[OSD_ST_OP_READ], now - op->t_recv_ns);
	else if (op->op == PROTO_OP_WRITE || op->op == PROTO_OP_WRITE_FULL)
		hist_record(&p->h[OSD_ST_OP_WRITE], now - op->t_recv_ns);
}

/*
 * Everything registered in the OSD's domain: both buffer pools, the rings
 * it hosts for its primaries, and the fabric's own buffers (on verbs the
 * receive/send slabs, which grow with the number of connections).
 */
uint64_t osd_perf_registered_bytes(struct osd *osd)
{
	return osd->dom != NULL ? fab_domain_registered_bytes(osd->dom) : 0;
}

static uint64_t osd_perf_ring_bytes(struct osd *osd, unsigned int *n_out)
{
	uint64_t b = 0;

	*n_out = 0;
	for (struct osd_conn *k = osd->conns; k; k = k->next) {
		if (k->ring_mr != NULL) {
			b += k->ring_size;
			(*n_out)++;
		}
	}
	return b;
}

static void osd_perf_ep(struct asok_out *out, const char *name, const struct fab_ep_stats *s)
{
	asok_printf(out,
		    "\"%s\": {\"tx_bytes\": %" PRIu64 ", \"rx_bytes\": %" PRIu64
		    ", \"sends\": %" PRIu64 ", \"recvs\": %" PRIu64 ", \"writes\": %" PRIu64
		    ", \"reads\": %" PRIu64 ", \"write_bytes\": %" PRIu64
		    ", \"read_bytes\": %" PRIu64 ", \"remote_writes\": %" PRIu64
		    ", \"remote_reads\": %" PRIu64 ", \"rx_frames\": %" PRIu64
		    ", \"rx_ctrl_frames\": %" PRIu64 "}",
		    name, s->tx_bytes, s->rx_bytes, s->sends, s->recvs, s->writes, s->reads,
		    s->write_bytes, s->read_bytes, s->remote_writes, s->remote_reads, s->rx_frames,
		    s->rx_ctrl_frames);
}

static void osd_perf_ep_add(struct fab_ep_stats *a, const struct fab_ep_stats *b)
{
	a->tx_bytes += b->tx_bytes;
	a->rx_bytes += b->rx_bytes;
	a->sends += b->sends;
	a->recvs += b->recvs;
	a->writes += b->writes;
	a->reads += b->reads;
	a->write_bytes += b->write_bytes;
	a->read_bytes += b->read_bytes;
	a->remote_writes += b->remote_writes;
	a->remote_reads += b->remote_reads;
	a->rx_frames += b->rx_frames;
	a->rx_ctrl_frames += b->rx_ctrl_frames;
}

static void osd_perf_pool(struct asok_out *out, const char *name, const struct fab_pool *pool)
{
	struct fab_pool_stats ps = {0};

	if (pool != NULL)
		fab_pool_stats(pool, &ps);
	asok_printf(out,
		    "\"%s\": {\"buffers\": %u, \"in_use\": %u, \"high_water\": %u, "
		    "\"get_failures\": %" PRIu64 ", \"buf_size\": %zu, \"bytes\": %zu}",
		    name, ps.count, ps.in_use, ps.high_water, ps.get_failures, ps.buf_size,
		    ps.bytes);
}

/* Latencies in microseconds (3 decimals) from nanosecond histograms. */
static void osd_perf_hist(struct asok_out *out, const char *name, const struct hist *h)
{
	asok_printf(out,
		    "\"%s\": {\"count\": %" PRIu64 ", \"mean\": %.3f, \"p50\": %.3f, "
		    "\"p99\": %.3f, \"p99.9\": %.3f, \"max\": %.3f}",
		    name, h->count, hist_mean(h) / 1e3, hist_quantile(h, 0.5) / 1e3,
		    hist_quantile(h, 0.99) / 1e3, hist_quantile(h, 0.999) / 1e3,
		    h->count ? h->max / 1e3 : 0.0);
}

/*
 * The process (CPU seconds so far, the machine's online CPUs and name) and
 * the store's device I/O: weft bench turns two dumps into cores used and
 * store throughput over its run (docs/bench.md).
 */
static void osd_perf_process_store(struct osd *osd, struct asok_out *out)
{
	struct rusage ru = {0}, rt = {0};
	struct utsname un = {0};
	struct store_info si = {0};
	double user, sys;

	getrusage(RUSAGE_SELF, &ru);
	getrusage(RUSAGE_THREAD, &rt); /* the admin socket is served by the reactor thread */
	uname(&un);
	user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	asok_printf(out, "\"process\": {\"pid\": %d, \"host\": ", (int)getpid());
	asok_put_str(out, un.nodename);
	asok_printf(out,
		    ", \"cpus_online\": %ld, \"cpu_seconds\": %.6f, \"cpu_user_seconds\": %.6f, "
		    "\"cpu_system_seconds\": %.6f, \"reactor_cpu_seconds\": %.6f}, ",
		    sysconf(_SC_NPROCESSORS_ONLN), user + sys, user, sys,
		    (double)rt.ru_utime.tv_sec + (double)rt.ru_utime.tv_usec / 1e6 +
			(double)rt.ru_stime.tv_sec + (double)rt.ru_stime.tv_usec / 1e6);
	if (osd->store != NULL)
		store_info_get(osd->store, &si);
	asok_printf(out,
		    "\"store\": {\"data_write_bytes\": %" PRIu64 ", \"wal_write_bytes\": %" PRIu64
		    ", \"data_read_bytes\": %" PRIu64 ", \"commit_batches\": %" PRIu64
		    ", \"commit_tx\": %" PRIu64 ", \"commit_busy_seconds\": %.6f"
		    ", \"read_busy_seconds\": %.6f"
		    ", \"units_total\": %" PRIu64 ", \"units_free\": %" PRIu64
		    ", \"unit\": %" PRIu64 ", \"defer_requests\": %" PRIu64
		    ", \"defer_bytes\": %" PRIu64 ", \"checkpoints\": %" PRIu64
		    ", \"kv_write_bytes\": %" PRIu64 ", \"kv_write_keys\": %" PRIu64
		    ", \"batch_overlap\": %" PRIu64 "}, ",
		    si.data_write_bytes, si.wal_write_bytes, si.data_read_bytes, si.batches,
		    si.batched_tx, (double)si.commit_busy_ns / 1e9, (double)si.read_busy_ns / 1e9,
		    si.units_total, si.units_free,
		    si.unit, si.defer_requests, si.defer_bytes, si.checkpoints, si.kv_write_bytes,
		    si.kv_write_keys, si.batch_overlap);
}

/*
 * The denial-of-service limits (docs/security.md): the messenger's refusals
 * at accept and its connections in their hello, the OSD's paused client
 * connections and refused messages. Ends with ", ".
 */
static void osd_perf_dos(struct osd *osd, struct asok_out *out)
{
	const struct osd_counters *c = &osd->ctr;
	struct msgr_stats ms;

	msgr_stats_get(osd->msgr, &ms);
	asok_printf(out,
		    "\"dos\": {\"conns\": %u, \"unauth\": %u, \"accepted\": %" PRIu64
		    ", \"refused_conns\": %" PRIu64 ", \"refused_per_ip\": %" PRIu64
		    ", \"refused_unauth\": %" PRIu64 ", \"hello_timeouts\": %" PRIu64
		    ", \"log_suppressed\": %" PRIu64 ", ",
		    ms.conns, ms.unauth, ms.accepted, ms.refused_conns, ms.refused_per_ip,
		    ms.refused_unauth, ms.hello_timeouts, ms.log_suppressed);
	asok_printf(out,
		    "\"send_overflows\": %" PRIu64
		    ", \"conns_paused\": %u, \"conn_pauses\": %" PRIu64
		    ", \"bad_pg_refused\": %" PRIu64 ", \"bad_epoch_refused\": %" PRIu64
		    ", \"map_wait_dropped\": %" PRIu64 ", \"rings_refused\": %" PRIu64
		    ", \"ring_bytes\": %" PRIu64 "}, ",
		    ms.send_overflows, ms.paused, c->conn_pauses, c->bad_pg_refused,
		    c->bad_epoch_refused, c->map_wait_dropped, c->rings_refused,
		    osd->ring_bytes);
}

int osd_perf_dump(struct osd *osd, struct asok_out *out)
{
	struct fab_ep_stats pub = osd->closed_pub, clu = osd->closed_clu, s;
	const struct osd_counters *c = &osd->ctr;
	struct osd_perf *p = osd->perf;
	unsigned int nconn[4] = {0}, nrings;
	struct store_info si;
	struct store_usage su;
	uint64_t rings;

	for (struct osd_conn *k = osd->conns; k; k = k->next) {
		fab_ep_stats(k->ep, &s);
		osd_perf_ep_add(k->kind == OSD_CONN_CLIENT ? &pub : &clu, &s);
		if (k->kind <= OSD_CONN_PEER) /* probes are not counted */
			nconn[k->kind]++;
	}
	asok_printf(out, "{\"osd\": %u, \"map_epoch\": %u, \"booted\": %s, ", osd->id,
		    osd->map.epoch, osd->booted ? "true" : "false");
	asok_printf(out,
		    "\"counters\": {\"ops\": %" PRIu64 ", \"op_errors\": %" PRIu64
		    ", \"writes\": %" PRIu64 ", \"reads\": %" PRIu64 ", \"write_bytes\": %" PRIu64
		    ", \"read_bytes\": %" PRIu64 ", \"repl_records\": %" PRIu64
		    ", \"repl_bytes\": %" PRIu64 ", \"repl_acks\": %" PRIu64
		    ", \"replica_records\": %" PRIu64 ", \"replica_bytes\": %" PRIu64
		    ", \"estale\": %" PRIu64 ", \"enxio\": %" PRIu64 ", \"blocked\": %" PRIu64
		    ", \"blocklist_refused\": %" PRIu64 ", \"store_pending\": %u}, ",
		    c->ops, c->op_errors, c->writes, c->reads, c->write_bytes, c->read_bytes,
		    c->repl_records, c->repl_bytes, c->repl_acks, c->replica_records,
		    c->replica_bytes, c->estale, c->enxio, c->blocked, c->blocklist_refused,
		    osd->store_pending);
	/* docs/security.md: whether we check tickets, and ops or cluster messages caps refused */
	asok_printf(out, "\"auth\": {\"tickets\": %s, \"denied\": %" PRIu64 "}, ",
		    osd->auth_tickets ? "true" : "false", osd->auth_denied);
	/* docs/osd.md "Ticks": PGs held, taken by the last tick, on a timer; ticks so far */
	asok_printf(out,
		    "\"pgs\": {\"count\": %u, \"listed\": %u, \"timed\": %u, \"ticks\": %" PRIu64
		    "}, ",
		    osd->npgs, osd->pgs_listed, osd->pgs_timed, osd->pg_ticks);
	osd_perf_dos(osd, out);
	store_info_get(osd->store, &si);
	if (store_usage_get(osd->store, &su) != 0)
		su = (struct store_usage){0};
	/* docs/capacity.md: the store's space, what the full rules and its reserve refused, purges */
	asok_printf(out,
		    "\"capacity\": {\"total_bytes\": %" PRIu64 ", \"used_bytes\": %" PRIu64
		    ", \"data_used_bytes\": %" PRIu64 ", \"free_pending_bytes\": %" PRIu64 ", ",
		    su.total, su.used, su.data_used, su.free_pending);
	asok_printf(out,
		    "\"full_refused\": %" PRIu64 ", \"quota_refused\": %" PRIu64
		    ", \"store_reserve_refused\": %" PRIu64 ", \"store_space_waits\": %" PRIu64
		    ", \"store_units_reserved\": %" PRIu64
		    ", \"purging_objects\": %" PRIu64 ", \"purged_objects\": %" PRIu64 "}, ",
		    c->full_refused, c->quota_refused, si.reserve_refused, si.space_waits,
		    si.units_reserved,
		    osd->purging_objects, osd_purge_done(osd));
	osd_perf_process_store(osd, out);
	asok_printf(out, "\"network\": {\"public_addr\": ");
	asok_put_str(out, osd->pub_addr);
	asok_printf(out, ", \"cluster_addr\": ");
	asok_put_str(out, osd->clu_addr);
	asok_printf(out, ", \"client_conns\": %u, \"replica_conns\": %u, \"peer_conns\": %u, ",
		    nconn[OSD_CONN_CLIENT], nconn[OSD_CONN_REPLICA], nconn[OSD_CONN_PEER]);
	osd_perf_ep(out, "public", &pub);
	asok_printf(out, ", ");
	osd_perf_ep(out, "cluster", &clu);
	asok_printf(out, "}, \"latency_us\": {");
	for (unsigned int i = 0; i < OSD_ST_COUNT; i++) {
		asok_printf(out, "%s", i ? ", " : "");
		osd_perf_hist(out, osd_stage_names[i], &p->h[i]);
	}
	asok_printf(out,
		    "}, \"memory\": {\"rss_bytes\": %" PRIu64 ", \"rss_peak_bytes\": %" PRIu64
		    ", \"target_bytes\": %" PRIu64 ", \"registered_bytes\": %" PRIu64
		    ", \"over_target\": %s, \"over_target_events\": %" PRIu64
		    ", \"sheds\": %" PRIu64 ", ",
		    osd_mem_rss(), p->rss_peak, p->mem_target, osd_perf_registered_bytes(osd),
		    p->over_target ? "true" : "false", p->over_events, p->sheds);
	osd_perf_pool(out, "small_pool", osd->small_pool);
	asok_printf(out, ", ");
	osd_perf_pool(out, "large_pool", osd->large_pool);
	rings = osd_perf_ring_bytes(osd, &nrings);
	store_info_get(osd->store, &si);
	asok_printf(out,
		    ", \"rings_hosted\": %u, \"ring_bytes\": %" PRIu64 ", \"ring_size\": %" PRIu64
		    ", \"store_onodes_cached\": %" PRIu64 ", \"store_onode_cache_bytes\": %" PRIu64
		    ", \"store_onode_evictions\": %" PRIu64 "}, \"numa\": {\"node\": %d, \"why\": ",
		    nrings, rings, osd->ring_size, si.onodes_cached, si.onode_cache_bytes,
		    si.onode_evictions, p->numa_node);
	asok_put_str(out, p->numa_why);
	asok_printf(out, "}}");
	return 0;
}
