/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft bench output: the per-second lines and the summary, laid out like
 * rados bench's so its readers feel at home. MB is 2^20 bytes there and
 * here (docs/bench.md); latencies are in seconds.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "tools/bench.h"

#define MIB 1048576.0

const char *const bench_mode_names[] = {
    [BENCH_WRITE] = "write",
    [BENCH_SEQ] = "seq",
    [BENCH_RAND] = "rand",
};

void bench_report_header(const struct bench_args *a, const char *run, uint64_t objects, FILE *out)
{
	if (a->mode == BENCH_WRITE) {
		/* rados bench's line; "0 objects" is its "no object limit" */
		fprintf(out,
			"Maintaining %u concurrent writes of %" PRIu64
			" bytes to objects of size %" PRIu64 " for up to %g seconds or %" PRIu64
			" objects\n",
			a->inflight, a->bsize, a->bsize, a->seconds,
			a->max_bytes ? (a->max_bytes + a->bsize - 1) / a->bsize : 0);
		fprintf(out, "Object prefix: %s\n", run);
	} else {
		fprintf(out,
			"Reading %s %" PRIu64 " objects of %" PRIu64
			" bytes (run %s), %u in flight, for up to %g seconds; verifying each\n",
			a->mode == BENCH_SEQ ? "in order" : "at random from", objects, a->bsize,
			run, a->inflight, a->seconds);
	}
}

static void bench_report_columns(FILE *out)
{
	fprintf(out, "%5s %7s %9s %9s %9s %9s %11s %11s\n", "sec", "Cur ops", "started", "finished",
		"avg MB/s", "cur MB/s", "last lat(s)", "avg lat(s)");
}

void bench_report_tick(const struct bench_tick *t, FILE *out)
{
	if (t->sec % 20 == 0)
		bench_report_columns(out);
	fprintf(out, "%5u %7u %9" PRIu64 " %9" PRIu64 " %9.4g %9.4g ", t->sec, t->cur_ops,
		t->started, t->finished, t->avg_mbs, t->cur_mbs);
	if (t->last_lat_s > 0)
		fprintf(out, "%11.6f %11.6f\n", t->last_lat_s, t->avg_lat_s);
	else
		fprintf(out, "%11s %11.6f\n", "-", t->avg_lat_s);
	fflush(out);
}

int bench_stats_tick(struct bench_stats *s, const struct bench_tick *t)
{
	if (s->nticks == s->cap_ticks) {
		unsigned int cap = s->cap_ticks ? s->cap_ticks * 2 : 64;
		struct bench_tick *v = realloc(s->ticks, cap * sizeof(*v));

		if (v == NULL)
			return -ENOMEM;
		s->ticks = v;
		s->cap_ticks = cap;
	}
	s->ticks[s->nticks++] = *t;
	return 0;
}

struct bench_dist {
	double avg, stddev, max, min;
};

/*
 * Bandwidth / IOPS spread over the per-second samples (second 0 excluded,
 * as rados does); a run shorter than a second has only its average.
 */
static struct bench_dist bench_spread(const struct bench_stats *s, bool iops, double avg)
{
	struct bench_dist d = {.avg = avg, .max = avg, .min = avg};
	double sum = 0, sumsq = 0;
	unsigned int n = 0;

	for (unsigned int i = 0; i < s->nticks; i++) {
		double v = iops ? s->ticks[i].cur_iops : s->ticks[i].cur_mbs;

		if (s->ticks[i].sec == 0)
			continue;
		if (n == 0 || v > d.max)
			d.max = v;
		if (n == 0 || v < d.min)
			d.min = v;
		sum += v;
		sumsq += v * v;
		n++;
	}
	if (n > 1) {
		double mean = sum / n, var = (sumsq - n * mean * mean) / (n - 1);

		d.stddev = var > 0 ? sqrt(var) : 0;
	}
	return d;
}

static double bench_elapsed(const struct bench_stats *s)
{
	double t = (double)(s->t_end_ns - s->t0_ns) / 1e9;

	return t > 0 ? t : 1e-9;
}

void bench_report_summary(const struct bench_args *a, const struct bench_stats *s, FILE *out)
{
	double t = bench_elapsed(s);
	double mbs = (double)s->bytes / MIB / t, iops = (double)(s->finished - s->errors) / t;
	struct bench_dist bw = bench_spread(s, false, mbs), io = bench_spread(s, true, iops);
	const char *w = a->mode == BENCH_WRITE ? "write" : "read";
	char label[32];

	if (s->interrupted)
		fprintf(out, "Interrupted: the summary covers the run up to the signal\n");
	fprintf(out, "%-24s%.4g\n", "Total time run:", t);
	snprintf(label, sizeof(label), "Total %ss made:", w);
	fprintf(out, "%-24s%" PRIu64 "\n", label, s->finished - s->errors);
	snprintf(label, sizeof(label), "%c%s size:", w[0] - 32, w + 1);
	fprintf(out, "%-24s%" PRIu64 "\n", label, a->bsize);
	fprintf(out, "%-24s%" PRIu64 "\n", "Object size:", a->bsize);
	fprintf(out, "%-24s%.4g\n", "Bandwidth (MB/sec):", bw.avg);
	fprintf(out, "%-24s%.4g\n", "Stddev Bandwidth:", bw.stddev);
	fprintf(out, "%-24s%.4g\n", "Max bandwidth (MB/sec):", bw.max);
	fprintf(out, "%-24s%.4g\n", "Min bandwidth (MB/sec):", bw.min);
	fprintf(out, "%-24s%.0f\n", "Average IOPS:", io.avg);
	fprintf(out, "%-24s%.4g\n", "Stddev IOPS:", io.stddev);
	fprintf(out, "%-24s%.0f\n", "Max IOPS:", io.max);
	fprintf(out, "%-24s%.0f\n", "Min IOPS:", io.min);
	fprintf(out, "%-24s%.6f\n", "Average Latency(s):", hist_mean(&s->lat) / 1e9);
	fprintf(out, "%-24s%.6f\n", "Stddev Latency(s):", hist_stddev(&s->lat) / 1e9);
	fprintf(out, "%-24s%.6f\n", "Max latency(s):", s->lat.count ? s->lat.max / 1e9 : 0.0);
	fprintf(out, "%-24s%.6f\n", "Min latency(s):", s->lat.count ? s->lat.min / 1e9 : 0.0);
	fprintf(out, "%-24s%.6f\n", "Latency p50(s):", hist_quantile(&s->lat, 0.5) / 1e9);
	fprintf(out, "%-24s%.6f\n", "Latency p99(s):", hist_quantile(&s->lat, 0.99) / 1e9);
	fprintf(out, "%-24s%.6f\n", "Latency p99.9(s):", hist_quantile(&s->lat, 0.999) / 1e9);
	if (a->mode != BENCH_WRITE)
		fprintf(out, "%-24s%" PRIu64 "\n", "Objects verified:", s->finished - s->errors);
	fprintf(out, "%-24s%" PRIu64 "%s\n", "Errors:", s->errors,
		s->aborted ? " (stopped early: too many)" : "");
	if (s->full[0])
		fprintf(out, "Stopped early: %s; %" PRIu64 " writes refused for space\n", s->full,
			s->full_refused);
	else if (s->capped)
		fprintf(out, "Stopped early: --max-bytes reached\n");
}

static json_t *bench_dist_json(struct bench_dist d)
{
	return json_pack("{s:f, s:f, s:f, s:f}", "avg", d.avg, "stddev", d.stddev, "max", d.max,
			 "min", d.min);
}

json_t *bench_report_json(const struct bench_args *a, const char *run, const struct bench_stats *s)
{
	double t = bench_elapsed(s);
	double mbs = (double)s->bytes / MIB / t, iops = (double)(s->finished - s->errors) / t;
	json_t *ticks = json_array(), *o;

	for (unsigned int i = 0; i < s->nticks; i++) {
		const struct bench_tick *k = &s->ticks[i];

		json_array_append_new(
		    ticks, json_pack("{s:i, s:i, s:I, s:I, s:f, s:f, s:f, s:f}", "sec", (int)k->sec,
				     "cur_ops", (int)k->cur_ops, "started", (json_int_t)k->started,
				     "finished", (json_int_t)k->finished, "avg_mb_s", k->avg_mbs,
				     "cur_mb_s", k->cur_mbs, "last_lat_s", k->last_lat_s,
				     "avg_lat_s", k->avg_lat_s));
	}
	o = json_pack("{s:s, s:s, s:s, s:i, s:I, s:I, s:f, s:f, s:I, s:I, s:I, s:b, s:b, s:o, s:o,"
		      " s:o}",
		      "mode", bench_mode_names[a->mode], "pool", a->pool, "run_name", run,
		      "concurrent_ops", (int)a->inflight, "op_size", (json_int_t)a->bsize,
		      "object_size", (json_int_t)a->bsize, "seconds_requested", a->seconds,
		      "total_time_s", t, "ops", (json_int_t)(s->finished - s->errors), "bytes",
		      (json_int_t)s->bytes, "errors", (json_int_t)s->errors, "interrupted",
		      s->interrupted, "aborted", s->aborted, "bandwidth_mb_s",
		      bench_dist_json(bench_spread(s, false, mbs)), "iops",
		      bench_dist_json(bench_spread(s, true, iops)), "per_second", ticks);
	if (o == NULL)
		return NULL;
	json_object_set_new(
	    o, "latency_s",
	    json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "avg", hist_mean(&s->lat) / 1e9,
		      "stddev", hist_stddev(&s->lat) / 1e9, "max",
		      s->lat.count ? s->lat.max / 1e9 : 0.0, "min",
		      s->lat.count ? s->lat.min / 1e9 : 0.0, "p50",
		      hist_quantile(&s->lat, 0.5) / 1e9, "p99", hist_quantile(&s->lat, 0.99) / 1e9,
		      "p99.9", hist_quantile(&s->lat, 0.999) / 1e9));
	if (a->mode != BENCH_WRITE)
		json_object_set_new(o, "verified",
				    json_integer((json_int_t)(s->finished - s->errors)));
	if (s->capped)
		json_object_set_new(o, "max_bytes_reached", json_true());
	if (s->full[0])
		json_object_set_new(o, "full", json_pack("{s:s, s:I}", "why", s->full, "refused",
							 (json_int_t)s->full_refused));
	return o;
}
