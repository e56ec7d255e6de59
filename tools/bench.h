/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft bench: the rados bench of Weft (docs/bench.md).
 *
 *   cmd_bench.c         connection, the write/seq/rand loop, cleanup
 *   bench_args.c        the command line
 *   bench_obj.c         object content (header + crc32c) and the run's metadata object
 *   cmd_bench_report.c  the per-second lines and the summary (text or JSON)
 *   bench_explain.c     the explainer: CPU, store and fabric use over the run
 */
#ifndef WEFT_TOOLS_BENCH_H
#define WEFT_TOOLS_BENCH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/histogram.h"

struct conf;
struct weft_cluster;

enum bench_mode { BENCH_WRITE, BENCH_SEQ, BENCH_RAND, BENCH_CLEANUP };

#define BENCH_NAME_MAX	   200 /* run name / object prefix */
#define BENCH_OBJ_NAME_MAX 240
#define BENCH_LAST_META	   "benchmark_last_metadata"

/* ---- object content (bench_obj.c) ---- */

/*
 * Every object starts with this header; the rest is a pattern derived
 * from the run name, with the object index and block number stamped into
 * the first 16 bytes of every further 4 KiB block, so each object's
 * content is a function of (run name, index, size) alone.
 */
#define BENCH_HDR_SIZE 48u
#define BENCH_MIN_SIZE BENCH_HDR_SIZE

uint32_t bench_run_key(const char *run);
void bench_obj_name(char *buf, size_t cap, const char *run, uint64_t index);
/* Fill buf[0, size) with the run's pattern: once per buffer. */
void bench_obj_pattern(uint8_t *buf, uint64_t size, uint32_t run_key);
/* Make a pattern-filled buffer object index: stamps, data crc, header. */
void bench_obj_stamp(uint8_t *buf, uint64_t size, uint32_t run_key, uint64_t index);
/*
 * Check what a read returned (len bytes) against object index of size
 * bytes: 0, or -WEFT_E_CORRUPT with the first thing wrong in why.
 */
int bench_obj_verify(const uint8_t *buf, uint64_t len, uint64_t size, uint32_t run_key,
		     uint64_t index, char *why, size_t cap);

/* The metadata object a `write --no-cleanup` leaves for seq/rand. */
struct bench_meta {
	char run[BENCH_NAME_MAX + 1];
	uint64_t objects;
	uint64_t object_size;
};
/* Text "weft-bench-meta 1\nrun R\nobjects N\nobject_size B\n"; -ENOBUFS if cap is short. */
int bench_meta_encode(const struct bench_meta *m, char *buf, size_t cap, size_t *len_out);
/* -EINVAL on anything malformed (it is read from the cluster). */
int bench_meta_decode(const char *buf, size_t len, struct bench_meta *m_out);

/* ---- options and results ---- */

#define BENCH_DEFAULT_CONF "/etc/weft/weft.conf"
#define BENCH_INFLIGHT_MAX 1024u

struct bench_args {
	const char *conf_file;
	const char *name; /* client.admin */
	const char *pool;
	double seconds;
	enum bench_mode mode;
	unsigned int inflight; /* -t */
	uint64_t bsize;	       /* -b */
	bool bsize_given;
	bool no_cleanup;
	bool json;
	bool no_explain;
	uint64_t max_bytes;   /* write: stop issuing at this many bytes (0: no cap) */
	const char *run_name; /* NULL: default (write) / last run (seq, rand) */
};

/* bench_args.c: 0 ok, 1 --help printed, 2 bad usage (reason and usage on stderr). */
int bench_args_parse(int argc, char **argv, struct bench_args *a);
void bench_usage(FILE *out);

/* What one second of the run did (a progress line and a sample). */
struct bench_tick {
	unsigned int sec;
	unsigned int cur_ops;
	uint64_t started, finished;
	double avg_mbs, cur_mbs, cur_iops;
	double last_lat_s, avg_lat_s;
};

struct bench_stats {
	uint64_t started, finished, errors, bytes;
	struct hist lat; /* ns, successful ops */
	uint64_t last_lat_ns;
	uint64_t t0_ns, t_end_ns;
	struct bench_tick *ticks;
	unsigned int nticks, cap_ticks;
	bool interrupted;
	bool aborted; /* stopped early on errors */
	/* stopped at the first write refused for space: "the pool is full (osd.2 at 95%)" */
	char full[192];
	uint64_t full_refused; /* writes refused with -ENOSPC / -EDQUOT (in errors too) */
	bool capped;	       /* write: --max-bytes reached before SECONDS */
};

/* ---- the explainer (bench_explain.c) ---- */

struct bench_explain;
/* Snapshot the OSDs' perf dumps and our CPU before the run; never fails the bench. */
struct bench_explain *bench_explain_begin(const struct conf *conf, const char *conf_file,
					  const char *name, struct weft_cluster *cl);
/* Snapshot again and work out the verdict over elapsed_s seconds that moved client_bytes. */
void bench_explain_end(struct bench_explain *ex, double elapsed_s, uint64_t client_bytes);
/* The run stopped because the pool filled (why: "the pool is full (osd.2 at 95%)"): the verdict. */
void bench_explain_full(struct bench_explain *ex, const char *why);
void bench_explain_print(const struct bench_explain *ex, FILE *out);
json_t *bench_explain_json(const struct bench_explain *ex);
void bench_explain_free(struct bench_explain *ex);

/* ---- report (cmd_bench_report.c) ---- */

extern const char *const bench_mode_names[];
void bench_report_header(const struct bench_args *a, const char *run, uint64_t objects, FILE *out);
void bench_report_tick(const struct bench_tick *t, FILE *out);
int bench_stats_tick(struct bench_stats *s, const struct bench_tick *t);
void bench_report_summary(const struct bench_args *a, const struct bench_stats *s, FILE *out);
json_t *bench_report_json(const struct bench_args *a, const char *run, const struct bench_stats *s);

#endif
