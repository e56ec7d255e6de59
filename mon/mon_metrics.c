/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The monitor's /metrics (metrics/metrics.h, docs/operations.md
 * "Prometheus"): quorum, map epoch, OSD counts, health and PG states, from
 * the same reads 'weft status' answers. Polled from the mon's libuv loop.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "metrics/metrics.h"
#include "mon/mon_priv.h"

static void mon_metrics_gauge(struct metrics_out *out, const char *labels, const char *name,
			      const char *help, double v)
{
	metrics_family(out, name, "gauge", help);
	metrics_sample(out, name, labels, v);
}

static void mon_metrics_fill_cb(void *arg, struct metrics_out *out)
{
	struct mon *mon = arg;
	json_t *st = mon_cmd_status_json(mon, "status"), *v, *c;
	json_t *mon_stat = json_object_get(st, "monmap"), *osdmap = json_object_get(st, "osdmap");
	json_t *health = json_object_get(st, "health"), *pg = json_object_get(st, "pgmap");
	const char *hs = json_string_value(json_object_get(health, "status")), *k;
	char l[96], l2[256], esc[128];
	size_t i;

	snprintf(l, sizeof(l), "mon=\"%s\"", metrics_label_escape(mon->name, esc, sizeof(esc)));
	mon_metrics_gauge(out, l, "weft_mon_have_quorum", "1 when this monitor sees a Raft leader.",
			  json_is_true(json_object_get(mon_stat, "have_quorum")));
	mon_metrics_gauge(out, l, "weft_mon_quorum_members",
			  "Monitors in the quorum as the leader sees it (0 on a peon).",
			  (double)json_array_size(json_object_get(mon_stat, "quorum")));
	mon_metrics_gauge(out, l, "weft_mon_members",
			  "Monitors of the cluster (Raft configuration and the map's list).",
			  (double)json_array_size(json_object_get(mon_stat, "members")));
	mon_metrics_gauge(out, l, "weft_mon_is_leader", "1 on the Raft leader.",
			  mon_is_leader(mon) ? 1 : 0);
	mon_metrics_gauge(out, l, "weft_mon_raft_term", "Raft term.",
			  (double)json_integer_value(json_object_get(mon_stat, "term")));
	mon_metrics_gauge(out, l, "weft_osdmap_epoch", "Cluster map epoch this monitor has applied.",
			  (double)json_integer_value(json_object_get(osdmap, "epoch")));
	metrics_family(out, "weft_osds", "gauge", "OSDs in the map: all, up, in.");
	snprintf(l2, sizeof(l2), "%s,state=\"total\"", l);
	metrics_sample(out, "weft_osds", l2,
		       (double)json_integer_value(json_object_get(osdmap, "num_osds")));
	snprintf(l2, sizeof(l2), "%s,state=\"up\"", l);
	metrics_sample(out, "weft_osds", l2,
		       (double)json_integer_value(json_object_get(osdmap, "num_up_osds")));
	snprintf(l2, sizeof(l2), "%s,state=\"in\"", l);
	metrics_sample(out, "weft_osds", l2,
		       (double)json_integer_value(json_object_get(osdmap, "num_in_osds")));
	mon_metrics_gauge(out, l, "weft_pools", "Pools in the map.",
			  (double)json_array_size(json_object_get(st, "pools")));
	mon_metrics_gauge(out, l, "weft_health_status", "0 HEALTH_OK, 1 HEALTH_WARN, 2 HEALTH_ERR.",
			  hs == NULL ? 2 : !strcmp(hs, "HEALTH_OK") ? 0 : !strcmp(hs, "HEALTH_WARN") ? 1 : 2);
	/* checks that carry a stable code (objects {"code": ...}); free text has none to key on */
	metrics_family(out, "weft_health_check", "gauge", "1 for each failing health check, by code.");
	json_array_foreach(json_object_get(health, "checks"), i, c) {
		const char *code = json_string_value(json_object_get(c, "code"));

		if (code == NULL)
			continue;
		snprintf(l2, sizeof(l2), "%s,code=\"%s\"", l, metrics_label_escape(code, esc, sizeof(esc)));
		metrics_sample(out, "weft_health_check", l2, 1);
	}
	metrics_family(out, "weft_pgs", "gauge", "PGs by state, as the OSDs last reported them.");
	json_object_foreach(json_object_get(pg, "states"), k, v) {
		snprintf(l2, sizeof(l2), "%s,state=\"%s\"", l, metrics_label_escape(k, esc, sizeof(esc)));
		metrics_sample(out, "weft_pgs", l2, (double)json_integer_value(v));
	}
	json_decref(st);
}

static void mon_metrics_poll_cb(uv_poll_t *h, int status, int events)
{
	struct mon *mon = h->data;

	metrics_srv_poll(mon->metrics);
}

void mon_metrics_start(struct mon *mon)
{
	unsigned int n;
	const struct conf_addr *a = conf_get_addrs(mon->conf, CONF_METRICS_ADDR, &n);

	if (n == 0)
		return; /* off, the default */
	if (metrics_srv_start(&a[0], mon->name, mon_metrics_fill_cb, mon, &mon->metrics) != 0) {
		mon->metrics = NULL; /* logged; the monitor runs without it */
		return;
	}
	if (uv_poll_init(&mon->loop, &mon->metrics_poll, metrics_srv_fd(mon->metrics)) != 0) {
		log_error("mon", "%s: cannot poll the metrics server", mon->name);
		metrics_srv_stop(mon->metrics);
		mon->metrics = NULL;
		return;
	}
	mon->metrics_poll.data = mon;
	uv_poll_start(&mon->metrics_poll, UV_READABLE, mon_metrics_poll_cb);
}

/* From the tick: connection timeouts even when no fd wakes us. */
void mon_metrics_tick(struct mon *mon)
{
	if (mon->metrics != NULL && mon->asok_ticks % MON_ADMIN_TICKS == 0)
		metrics_srv_poll(mon->metrics);
}

static void mon_metrics_close_cb(uv_handle_t *h)
{
	struct mon *mon = h->data;

	metrics_srv_stop(mon->metrics);
	mon->metrics = NULL;
}

void mon_metrics_stop(struct mon *mon)
{
	if (mon->metrics == NULL)
		return;
	uv_poll_stop(&mon->metrics_poll);
	uv_close((uv_handle_t *)&mon->metrics_poll, mon_metrics_close_cb);
}
