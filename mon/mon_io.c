/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Client I/O rates for `weft status` (as `ceph -s`'s "io: client"): each
 * OSD's PG_STATS carries its counters since it started (ops and bytes read
 * and written as a primary, PROTO_FEAT_IO_STATS); the leader keeps the
 * last few samples of each OSD in memory and a rate is the difference over
 * the newest MON_IO_WINDOW_MS. An OSD that stops reporting drops out of the
 * sum; one that restarts (its counters went back) starts a new series. A
 * new leader shows rates again after two reports.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "mon/mon_priv.h"

#define MON_IO_SAMPLES 8
#define MON_IO_WINDOW_MS 3000u
#define MON_IO_FRESH_MS 5000u /* a series whose newest sample is older is dropped */

struct mon_io_series {
	uint64_t ms[MON_IO_SAMPLES];
	struct proto_osd_io c[MON_IO_SAMPLES];
	unsigned int head, n; /* head: the newest */
};

static struct mon_io_series *mon_io;
static uint32_t mon_nio;

void mon_io_report(uint32_t osd, const struct proto_osd_io *io, uint64_t now)
{
	struct mon_io_series *r;

	if (osd >= MON_OSD_MAX)
		return;
	if (osd >= mon_nio) {
		uint32_t n = osd + 16;
		struct mon_io_series *t = realloc(mon_io, n * sizeof(*t));

		if (t == NULL)
			return;
		memset(t + mon_nio, 0, (n - mon_nio) * sizeof(*t));
		mon_io = t;
		mon_nio = n;
	}
	r = &mon_io[osd];
	if (r->n > 0) {
		const struct proto_osd_io *last = &r->c[r->head];

		if (io->rd_ops < last->rd_ops || io->wr_ops < last->wr_ops ||
		    io->rd_bytes < last->rd_bytes || io->wr_bytes < last->wr_bytes)
			r->n = 0; /* restarted: counters from zero */
	}
	r->head = r->n > 0 ? (r->head + 1) % MON_IO_SAMPLES : 0;
	r->ms[r->head] = now;
	r->c[r->head] = *io;
	if (r->n < MON_IO_SAMPLES)
		r->n++;
}

/* Rates of one series over the window; false without two samples to compare. */
static bool mon_io_rate(const struct mon_io_series *r, uint64_t now, double out[4])
{
	unsigned int base = r->head, k;
	double dt;

	if (r->n < 2 || now - r->ms[r->head] > MON_IO_FRESH_MS)
		return false;
	for (unsigned int i = 1; i < r->n; i++) {
		k = (r->head + MON_IO_SAMPLES - i) % MON_IO_SAMPLES;
		base = k;
		if (r->ms[r->head] - r->ms[k] >= MON_IO_WINDOW_MS)
			break;
	}
	dt = (double)(r->ms[r->head] - r->ms[base]) / 1000.0;
	if (dt <= 0)
		return false;
	out[0] = (double)(r->c[r->head].rd_ops - r->c[base].rd_ops) / dt;
	out[1] = (double)(r->c[r->head].rd_bytes - r->c[base].rd_bytes) / dt;
	out[2] = (double)(r->c[r->head].wr_ops - r->c[base].wr_ops) / dt;
	out[3] = (double)(r->c[r->head].wr_bytes - r->c[base].wr_bytes) / dt;
	return true;
}

json_t *mon_io_json(struct mon *mon)
{
	double sum[4] = {0, 0, 0, 0};
	uint64_t now = clock_now_ms();
	unsigned int osds = 0;

	for (uint32_t i = 0; i < mon_nio; i++) {
		const struct mon_osd *o = mon_map_osd(&mon->map, i);
		double r[4];

		if (o == NULL || !(o->state & MON_OSD_UP) || !mon_io_rate(&mon_io[i], now, r))
			continue;
		for (int k = 0; k < 4; k++)
			sum[k] += r[k];
		osds++;
	}
	return json_pack("{s:f, s:f, s:f, s:f, s:i}", "read_ops_per_sec", sum[0],
			 "read_bytes_per_sec", sum[1], "write_ops_per_sec", sum[2],
			 "write_bytes_per_sec", sum[3], "osds_reporting", osds);
}
