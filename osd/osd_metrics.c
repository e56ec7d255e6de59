/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OSD's /metrics (metrics/metrics.h, docs/operations.md "Prometheus"):
 * the counters, per-stage latency histograms, network bytes by network and
 * store usage that "perf dump" shows, in the Prometheus text format. Runs
 * in the OSD's loop like the admin socket.
 */
#include <stdio.h>

#include "common/log.h"
#include "metrics/metrics.h"
#include "osd/osd.h"
#include "osd/osd_perf.h"

static const char *const osd_metrics_stages[OSD_ST_COUNT] = {
	[OSD_ST_RECEIVE] = "receive", [OSD_ST_PULL] = "payload_pull",
	[OSD_ST_WAL] = "wal_commit",  [OSD_ST_REPL] = "replica_round_trip",
	[OSD_ST_REPLY] = "reply",     [OSD_ST_OP_WRITE] = "op_write",
	[OSD_ST_OP_READ] = "op_read", [OSD_ST_READ] = "store_read",
};

static void osd_metrics_counter(struct metrics_out *out, const char *labels, const char *name,
				const char *help, uint64_t v)
{
	metrics_family(out, name, "counter", help);
	metrics_sample(out, name, labels, (double)v);
}

static void osd_metrics_fill_cb(void *arg, struct metrics_out *out)
{
	struct osd *osd = arg;
	const struct osd_counters *c = &osd->ctr;
	struct fab_ep_stats net[2] = { osd->closed_pub, osd->closed_clu }, s;
	static const char *const net_names[2] = { "public", "cluster" };
	struct store_info si;
	char l[64], l2[128];

	snprintf(l, sizeof(l), "osd=\"%u\"", osd->id);
	osd_metrics_counter(out, l, "weft_osd_ops_total", "Client ops answered by this OSD.",
			    c->ops);
	osd_metrics_counter(out, l, "weft_osd_op_errors_total", "Client ops answered with an error.",
			    c->op_errors);
	osd_metrics_counter(out, l, "weft_osd_writes_total", "Client writes.", c->writes);
	osd_metrics_counter(out, l, "weft_osd_reads_total", "Client reads.", c->reads);
	osd_metrics_counter(out, l, "weft_osd_write_bytes_total", "Bytes written by clients.",
			    c->write_bytes);
	osd_metrics_counter(out, l, "weft_osd_read_bytes_total", "Bytes read by clients.",
			    c->read_bytes);
	osd_metrics_counter(out, l, "weft_osd_repl_bytes_total",
			    "Bytes this OSD replicated to others as a primary.", c->repl_bytes);
	osd_metrics_counter(out, l, "weft_osd_replica_bytes_total",
			    "Bytes this OSD received as a replica.", c->replica_bytes);

	metrics_family(out, "weft_osd_op_latency_seconds", "histogram",
		       "Latency of each stage of an op on the primary (op_write, op_read: whole ops).");
	for (unsigned int i = 0; i < OSD_ST_COUNT; i++) {
		snprintf(l2, sizeof(l2), "%s,stage=\"%s\"", l, osd_metrics_stages[i]);
		metrics_hist(out, "weft_osd_op_latency_seconds", l2, &osd->perf->h[i], 1e9);
	}

	/* connections still open, plus what the closed ones carried */
	for (struct osd_conn *k = osd->conns; k != NULL; k = k->next) {
		struct fab_ep_stats *n = &net[k->kind == OSD_CONN_CLIENT ? 0 : 1];

		fab_ep_stats(k->ep, &s);
		n->tx_bytes += s.tx_bytes;
		n->rx_bytes += s.rx_bytes;
	}
	metrics_family(out, "weft_osd_network_bytes_total", "counter",
		       "Bytes on the wire by network (public: clients, cluster: replication).");
	for (unsigned int i = 0; i < 2; i++) {
		snprintf(l2, sizeof(l2), "%s,network=\"%s\",direction=\"tx\"", l, net_names[i]);
		metrics_sample(out, "weft_osd_network_bytes_total", l2, (double)net[i].tx_bytes);
		snprintf(l2, sizeof(l2), "%s,network=\"%s\",direction=\"rx\"", l, net_names[i]);
		metrics_sample(out, "weft_osd_network_bytes_total", l2, (double)net[i].rx_bytes);
	}

	store_info_get(osd->store, &si);
	metrics_family(out, "weft_osd_store_bytes", "gauge",
		       "Data device space: total and used (allocated units).");
	snprintf(l2, sizeof(l2), "%s,kind=\"total\"", l);
	metrics_sample(out, "weft_osd_store_bytes", l2, (double)(si.units_total * si.unit));
	snprintf(l2, sizeof(l2), "%s,kind=\"used\"", l);
	metrics_sample(out, "weft_osd_store_bytes", l2,
		       (double)((si.units_total - si.units_free) * si.unit));
	metrics_family(out, "weft_osd_wal_bytes", "gauge", "WAL size and the part not yet trimmed.");
	snprintf(l2, sizeof(l2), "%s,kind=\"total\"", l);
	metrics_sample(out, "weft_osd_wal_bytes", l2, (double)si.wal_size);
	snprintf(l2, sizeof(l2), "%s,kind=\"used\"", l);
	metrics_sample(out, "weft_osd_wal_bytes", l2, (double)si.wal_used);

	metrics_family(out, "weft_osd_map_epoch", "gauge", "Cluster map epoch this OSD has.");
	metrics_sample(out, "weft_osd_map_epoch", l, osd->map.epoch);
	metrics_family(out, "weft_osd_booted", "gauge", "1 when the mons accepted this OSD's boot.");
	metrics_sample(out, "weft_osd_booted", l, osd->booted ? 1 : 0);
	metrics_family(out, "weft_osd_rss_bytes", "gauge", "Resident memory of the process.");
	metrics_sample(out, "weft_osd_rss_bytes", l, (double)osd_mem_rss());
}

void osd_metrics_start(struct osd *osd)
{
	unsigned int n;
	const struct conf_addr *a = conf_get_addrs(osd->conf, CONF_METRICS_ADDR, &n);

	if (n == 0)
		return; /* off, the default */
	if (n > 1)
		log_warn("osd", "%s: metrics_addr lists %u addresses; serving on the first", osd->name,
			 n);
	/* a daemon without metrics still serves I/O: the failure is logged */
	if (metrics_srv_start(&a[0], osd->name, osd_metrics_fill_cb, osd, &osd->metrics) != 0)
		osd->metrics = NULL;
}

int osd_metrics_fd(const struct osd *osd)
{
	return osd->metrics != NULL ? metrics_srv_fd(osd->metrics) : -1;
}

void osd_metrics_poll(struct osd *osd)
{
	metrics_srv_poll(osd->metrics);
}

void osd_metrics_stop(struct osd *osd)
{
	metrics_srv_stop(osd->metrics);
	osd->metrics = NULL;
}
