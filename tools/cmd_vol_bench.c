/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft vol bench: the `rbd bench` of Weft volumes. io-threads ops stay in
 * flight (async ops on one libweft connection, so "threads" are slots, not
 * OS threads); each completion submits the next op until io-total bytes are
 * done. One line per second, then a summary with ops/s, MB/s (10^6) and
 * latency percentiles. Buffers come from weft_buf_alloc (zero-copy) when
 * the registered pools have room, else plain memory copied through bounce
 * buffers (the summary says which).
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/histogram.h"
#include "tools/cli_vol.h"
#include "weft/volume.h"

#define BENCH_THREADS_MAX 1024

enum bench_type { BENCH_WRITE, BENCH_READ, BENCH_RW };

struct bench;

struct bench_slot {
	struct bench *b;
	void *buf;
	bool registered;
	uint64_t t0;
};

struct bench {
	struct weft_cluster *cl;
	struct weft_vol *vol;
	enum bench_type type;
	bool rand;
	unsigned int mix_read; /* percent of reads for rw */
	uint64_t io_size, vol_size, total_ops, issued, done, seq_off, rng;
	uint64_t reads, writes;
	int err;
	uint64_t sec_ops, sec_bytes; /* since the last per-second line */
	struct hist lat;	     /* microseconds */
};

static uint64_t bench_rnd(struct bench *b)
{
	b->rng ^= b->rng << 13;
	b->rng ^= b->rng >> 7;
	b->rng ^= b->rng << 17;
	return b->rng;
}

static void bench_op_cb(const struct weft_result *res, void *arg);

static int bench_submit(struct bench_slot *s)
{
	struct bench *b = s->b;
	uint64_t off;
	bool read;
	int rc;

	if (b->rand) {
		off = (bench_rnd(b) % (b->vol_size / b->io_size)) * b->io_size;
	} else {
		if (b->seq_off + b->io_size > b->vol_size)
			b->seq_off = 0;
		off = b->seq_off;
		b->seq_off += b->io_size;
	}
	read = b->type == BENCH_READ || (b->type == BENCH_RW && bench_rnd(b) % 100 < b->mix_read);
	s->t0 = clock_now_us();
	if (read)
		rc = weft_vol_aio_read(b->vol, s->buf, b->io_size, off, bench_op_cb, s);
	else
		rc = weft_vol_aio_write(b->vol, s->buf, b->io_size, off, bench_op_cb, s);
	if (rc == 0) {
		b->issued++;
		read ? b->reads++ : b->writes++;
	}
	return rc;
}

static void bench_op_cb(const struct weft_result *res, void *arg)
{
	struct bench_slot *s = arg;
	struct bench *b = s->b;
	int rc;

	b->done++;
	if (res->rc != 0) {
		if (b->err == 0)
			fprintf(stderr, "weft vol bench: op failed: %s\n", weft_strerror(res->rc));
		b->err = b->err ? b->err : res->rc;
		return;
	}
	hist_record(&b->lat, clock_now_us() - s->t0);
	b->sec_ops++;
	b->sec_bytes += b->io_size;
	if (b->err == 0 && b->issued < b->total_ops) {
		rc = bench_submit(s);
		if (rc != 0) {
			fprintf(stderr, "weft vol bench: submit failed: %s\n", weft_strerror(rc));
			b->err = rc;
		}
	}
}

static int bench_parse(const struct cli_vol_args *a, struct bench *b, uint64_t *threads_out,
		       uint64_t *total_out)
{
	uint64_t threads = 16, total = 1ull << 30, mix = 50;

	b->io_size = 4096;
	if (a->io_type == NULL)
		return cli_vol_usage_err("bench needs --io-type write|read|rw%s", "");
	if (!strcmp(a->io_type, "write"))
		b->type = BENCH_WRITE;
	else if (!strcmp(a->io_type, "read"))
		b->type = BENCH_READ;
	else if (!strcmp(a->io_type, "rw") || !strcmp(a->io_type, "readwrite"))
		b->type = BENCH_RW;
	else
		return cli_vol_usage_err("--io-type must be write, read or rw, not '%s'",
					 a->io_type);
	if (a->io_size &&
	    (cli_vol_parse_size(a->io_size, &b->io_size) != 0 || b->io_size > WEFT_VOL_IO_MAX))
		return cli_vol_usage_err("bad --io-size '%s'", a->io_size);
	if (a->io_threads &&
	    (cli_vol_parse_size(a->io_threads, &threads) != 0 || threads > BENCH_THREADS_MAX))
		return cli_vol_usage_err("--io-threads must be 1..1024, not '%s'", a->io_threads);
	if (a->io_total && cli_vol_parse_size(a->io_total, &total) != 0)
		return cli_vol_usage_err("bad --io-total '%s'", a->io_total);
	if (a->io_pattern && strcmp(a->io_pattern, "rand") && strcmp(a->io_pattern, "seq") &&
	    strcmp(a->io_pattern, "random") && strcmp(a->io_pattern, "sequential"))
		return cli_vol_usage_err("--io-pattern must be rand or seq, not '%s'",
					 a->io_pattern);
	b->rand = a->io_pattern != NULL && !strncmp(a->io_pattern, "rand", 4); /* rbd: seq */
	if (a->rw_mix_read) {
		char *end;

		mix = strtoull(a->rw_mix_read, &end, 10);
		if (*end || end == a->rw_mix_read || a->rw_mix_read[0] == '-' || mix > 100)
			return cli_vol_usage_err("--rw-mix-read must be 0..100, not '%s'",
						 a->rw_mix_read);
	}
	b->mix_read = (unsigned int)mix;
	if (total < b->io_size)
		return cli_vol_usage_err("--io-total is smaller than --io-size%s", "");
	*threads_out = threads;
	*total_out = total;
	return 0;
}

static void bench_summary(const struct cli_vol_args *a, struct bench *b, double secs,
			  unsigned int nreg, unsigned int threads)
{
	double ops = (double)b->lat.count, iops = secs > 0 ? ops / secs : 0;
	double mbs = secs > 0 ? ops * (double)b->io_size / secs / 1e6 : 0;
	double p50 = (double)hist_quantile(&b->lat, 0.5) / 1000;
	double p99 = (double)hist_quantile(&b->lat, 0.99) / 1000;
	double p999 = (double)hist_quantile(&b->lat, 0.999) / 1000;

	if (a->json) {
		json_t *o = json_pack(
		    "{s:s, s:s, s:I, s:i, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:i}",
		    "io_type", a->io_type, "io_pattern", b->rand ? "rand" : "seq", "io_size",
		    (json_int_t)b->io_size, "io_threads", (int)threads, "ops",
		    (json_int_t)b->lat.count, "reads", (json_int_t)b->reads, "writes",
		    (json_int_t)b->writes, "seconds", secs, "ops_per_sec", iops, "mb_per_sec", mbs,
		    "lat_avg_ms", hist_mean(&b->lat) / 1000, "lat_p50_ms", p50, "lat_p99_ms", p99,
		    "lat_p999_ms", p999, "registered_buffers", (int)nreg);
		json_dumpf(o, stdout, JSON_INDENT(2));
		printf("\n");
		json_decref(o);
		return;
	}
	printf("elapsed: %.2f s  ops: %" PRIu64 "  ops/sec: %.1f  MB/sec: %.2f\n", secs,
	       b->lat.count, iops, mbs);
	printf("latency ms: avg %.3f  p50 %.3f  p99 %.3f  p99.9 %.3f  max %.3f\n",
	       hist_mean(&b->lat) / 1000, p50, p99, p999, (double)b->lat.max / 1000);
	printf("buffers: %u of %u registered (zero-copy)%s\n", nreg, threads,
	       nreg < threads ? ", the rest bounced" : "");
}

int cli_vol_bench(const struct cli_vol_args *a)
{
	struct bench b = {.rng = 0x9e3779b97f4a7c15ull};
	struct bench_slot *slots = NULL;
	const char *name;
	char pool[128];
	uint32_t pool_id;
	uint64_t threads = 0, total = 0, t0, last;
	unsigned int nreg = 0, i, sec = 0;
	int rc;

	if (a->nwords != 2 || cli_vol_split(a->words[1], pool, sizeof(pool), &name) != 0)
		return cli_vol_usage_err("bench needs POOL/NAME%s", "");
	rc = bench_parse(a, &b, &threads, &total);
	if (rc != 0)
		return rc;
	rc = cli_vol_connect(a, pool, &b.cl, &pool_id);
	if (rc != 0)
		return rc;
	rc = weft_vol_open(b.cl, pool_id, name, a->exclusive ? WEFT_VOL_EXCLUSIVE : 0, &b.vol);
	if (rc != 0) {
		fprintf(stderr, "weft vol bench %s: %s\n", a->words[1], weft_strerror(rc));
		weft_disconnect(b.cl);
		return 1;
	}
	b.vol_size = weft_vol_size(b.vol);
	b.total_ops = total / b.io_size;
	if (b.io_size > b.vol_size) {
		fprintf(stderr, "weft vol bench: --io-size is larger than the volume\n");
		rc = 1;
		goto out;
	}
	hist_init(&b.lat);
	slots = calloc(threads, sizeof(*slots));
	if (slots == NULL) {
		rc = 1;
		goto out;
	}
	for (i = 0; i < threads; i++) {
		slots[i].b = &b;
		slots[i].buf = weft_buf_alloc(b.cl, b.io_size);
		slots[i].registered = slots[i].buf != NULL;
		if (slots[i].buf == NULL)
			slots[i].buf = malloc(b.io_size);
		if (slots[i].buf == NULL) {
			rc = 1;
			goto out;
		}
		nreg += slots[i].registered;
		for (uint64_t k = 0; k < b.io_size; k += 8) /* incompressible-ish content */
			((uint8_t *)slots[i].buf)[k] = (uint8_t)bench_rnd(&b);
	}
	if (!a->json)
		printf("bench type %s io_size %" PRIu64 " io_threads %" PRIu64 " bytes %" PRIu64
		       " pattern %s\n  SEC       OPS   OPS/SEC   MB/SEC\n",
		       a->io_type, b.io_size, threads, b.total_ops * b.io_size,
		       b.rand ? "random" : "sequential");
	t0 = last = clock_now_us();
	for (i = 0; i < threads && b.issued < b.total_ops; i++) {
		rc = bench_submit(&slots[i]);
		if (rc != 0) {
			fprintf(stderr, "weft vol bench: submit failed: %s\n", weft_strerror(rc));
			b.err = rc;
			break;
		}
	}
	/* every op ends by its deadline (client_op_timeout), so this loop ends */
	while (b.done < b.issued) {
		uint64_t now;

		weft_poll(b.cl, 1);
		now = clock_now_us();
		if (now - last >= 1000000 && !a->json) {
			double d = (double)(now - last) / 1e6;

			printf("%5u %9" PRIu64 " %9.1f %8.2f\n", ++sec, b.lat.count,
			       (double)b.sec_ops / d, (double)b.sec_bytes / d / 1e6);
			b.sec_ops = b.sec_bytes = 0;
			last = now;
		}
	}
	bench_summary(a, &b, (double)(clock_now_us() - t0) / 1e6, nreg, (unsigned int)threads);
	rc = b.err ? 1 : 0;
out:
	for (i = 0; slots && i < threads; i++) {
		if (slots[i].registered)
			weft_buf_free(b.cl, slots[i].buf);
		else
			free(slots[i].buf);
	}
	free(slots);
	if (weft_vol_close(b.vol) != 0 && rc == 0)
		rc = 1;
	weft_disconnect(b.cl);
	return rc;
}
