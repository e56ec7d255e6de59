/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft bench POOL SECONDS write|seq|rand: the rados bench of Weft
 * (docs/bench.md). One thread drives libweft asynchronously: -t slots,
 * each with a registered buffer (zero copy: the OSDs pull writes from it
 * and write reads into it), refilled as ops complete until the time is up
 * or Ctrl-C; then the in-flight ops are waited for (each completes within
 * client_op_timeout), the summary and the explainer are printed, and a
 * write without --no-cleanup removes its objects. "POOL cleanup" removes a
 * kept run.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/conf.h"
#include "common/log.h"
#include "client/client_debug.h"
#include "mon/map.h"
#include "tools/bench.h"
#include "tools/cli.h"
#include "weft/weft.h"

#define BENCH_ERRORS_SHOWN 20u	       /* lines printed; the count covers all */
#define BENCH_ERRORS_ABORT 1000u       /* stop issuing after this many */
#define BENCH_SMALL_BUF	   (64u << 10) /* libweft's small registered pool: 64 x 64 KiB */

static volatile sig_atomic_t bench_sigint;

static void bench_on_sigint(int sig)
{
	(void)sig;
	bench_sigint++;
}

struct bench;

struct bench_slot {
	struct bench *b;
	uint8_t *buf;
	uint64_t index;
	uint64_t t0_ns;
	bool busy;
};

struct bench {
	struct bench_args a;
	struct weft_cluster *cl;
	uint32_t pool;
	char run[BENCH_NAME_MAX + 1];
	uint32_t run_key;
	uint64_t objects; /* seq/rand: in the run; write: objects written or tried */
	uint64_t next;	  /* next index to issue (write, seq, cleanup) */
	uint64_t rng;
	struct bench_slot *slots;
	unsigned int busy;
	bool cleaning;
	uint64_t removed, remove_errors;
	struct bench_stats s;
	FILE *progress; /* stdout, or stderr with --format json */
};

/* ---- the op loop ---- */

static void bench_op_error(struct bench *b, uint64_t index, const char *what, const char *why)
{
	char name[BENCH_OBJ_NAME_MAX];

	b->s.errors++;
	if (b->s.errors > BENCH_ERRORS_SHOWN)
		return;
	bench_obj_name(name, sizeof(name), b->run, index);
	fprintf(stderr, "weft bench: error: object %s: %s: %s\n", name, what, why);
	if (b->s.errors == BENCH_ERRORS_SHOWN)
		fprintf(stderr, "weft bench: further errors are counted, not shown\n");
}

/*
 * One line for a write refused for space: the pool's quota, or the full OSD
 * (the one the error names, else one the map marks full) at the map's full
 * ratio, which is what marked it.
 */
static void bench_full_reason(struct weft_cluster *cl, uint32_t pool,
			      const struct weft_result *res, char *buf, size_t cap)
{
	const struct mon_map *map = weft_debug_map(cl);
	int32_t osd = res->flags & WEFT_RESULT_F_OSD ? res->osd : -1;

	if (res->rc == -EDQUOT || mon_map_pool_full(map, pool)) {
		snprintf(buf, cap, "the pool is at its quota (weft df)");
		return;
	}
	for (uint32_t i = 0; osd < 0 && i < map->max_osd; i++)
		if (mon_map_osd_full(map, i))
			osd = (int32_t)i;
	if (osd < 0)
		snprintf(buf, cap, "the pool is full (%s)", weft_strerror(res->rc));
	else if (mon_map_osd_full(map, (uint32_t)osd))
		snprintf(buf, cap, "the pool is full (osd.%d at %u%%)", osd,
			 (map->full_ratio + 5000) / 10000);
	else
		snprintf(buf, cap, "the pool is full (osd.%d is full)", osd);
}

/*
 * A write refused for space: the first one stops the run with one line
 * naming the full OSD (from the error, or the map's full bits) instead of
 * an error per op until the time is up; the ops still in flight are counted.
 */
static void bench_full(struct bench *b, const struct weft_result *res)
{
	b->s.full_refused++;
	if (b->s.full[0])
		return;
	bench_full_reason(b->cl, b->pool, res, b->s.full, sizeof(b->s.full));
	fprintf(stderr, "weft bench: %s: stopping\n", b->s.full);
}

static void bench_op_cb(const struct weft_result *res, void *arg)
{
	struct bench_slot *sl = arg;
	struct bench *b = sl->b;
	uint64_t now = clock_now_ns();
	char why[192];
	int rc = res->rc;

	sl->busy = false;
	b->busy--;
	if (b->cleaning) {
		if (rc == 0 || rc == -ENOENT) {
			b->removed++;
		} else {
			b->remove_errors++;
			bench_op_error(b, sl->index, "remove", weft_strerror(rc));
		}
		return;
	}
	b->s.finished++;
	b->s.t_end_ns = now;
	if (rc != 0 && b->a.mode == BENCH_WRITE && (rc == -ENOSPC || rc == -EDQUOT)) {
		b->s.errors++;
		bench_full(b, res);
		return;
	}
	if (rc != 0) {
		bench_op_error(b, sl->index, b->a.mode == BENCH_WRITE ? "write" : "read",
			       weft_result_describe(res, why, sizeof(why)));
		return;
	}
	if (b->a.mode != BENCH_WRITE &&
	    bench_obj_verify(sl->buf, res->length, b->a.bsize, b->run_key, sl->index, why,
			     sizeof(why)) != 0) {
		bench_op_error(b, sl->index, "content check failed", why);
		return;
	}
	hist_record(&b->s.lat, now - sl->t0_ns);
	b->s.last_lat_ns = now - sl->t0_ns;
	b->s.bytes += b->a.bsize;
}

static uint64_t bench_rand(struct bench *b)
{
	b->rng ^= b->rng << 13;
	b->rng ^= b->rng >> 7;
	b->rng ^= b->rng << 17;
	return b->rng;
}

/* Queue one op in slot sl; false when there is nothing more to issue. */
static bool bench_issue(struct bench *b, struct bench_slot *sl)
{
	char name[BENCH_OBJ_NAME_MAX];
	int rc;

	if (b->cleaning) {
		if (b->next >= b->objects)
			return false;
		sl->index = b->next++;
	} else if (b->a.mode == BENCH_WRITE) {
		if (b->next >= UINT32_MAX)
			return false;
		if (b->a.max_bytes && b->next * b->a.bsize >= b->a.max_bytes) {
			b->s.capped = true; /* --max-bytes: the ops in flight finish, no more go */
			return false;
		}
		sl->index = b->next++;
		b->objects = b->next;
		bench_obj_stamp(sl->buf, b->a.bsize, b->run_key, sl->index);
	} else if (b->a.mode == BENCH_SEQ) {
		if (b->next >= b->objects)
			return false;
		sl->index = b->next++;
	} else {
		sl->index = bench_rand(b) % b->objects;
	}
	bench_obj_name(name, sizeof(name), b->run, sl->index);
	sl->t0_ns = clock_now_ns();
	if (b->cleaning)
		rc = weft_aio_remove(b->cl, b->pool, name, bench_op_cb, sl);
	else if (b->a.mode == BENCH_WRITE)
		rc =
		    weft_aio_write_full(b->cl, b->pool, name, sl->buf, b->a.bsize, bench_op_cb, sl);
	else
		rc = weft_aio_read(b->cl, b->pool, name, sl->buf, b->a.bsize, 0, bench_op_cb, sl);
	if (rc != 0) {
		/* nothing was queued: counted as a failed op of this slot */
		if (b->cleaning) {
			b->remove_errors++;
		} else {
			b->s.started++;
			b->s.finished++;
		}
		bench_op_error(b, sl->index, "queue", weft_strerror(rc));
		return true;
	}
	sl->busy = true;
	b->busy++;
	if (!b->cleaning)
		b->s.started++;
	return true;
}

static void bench_tick(struct bench *b, unsigned int sec, uint64_t *prev_fin, uint64_t *prev_bytes,
		       uint64_t *prev_ns)
{
	uint64_t now = clock_now_ns();
	double dt = (double)(now - *prev_ns) / 1e9, el = (double)(now - b->s.t0_ns) / 1e9;
	uint64_t ok = b->s.finished - b->s.errors;
	struct bench_tick t = {
	    .sec = sec,
	    .cur_ops = b->busy,
	    .started = b->s.started,
	    .finished = b->s.finished,
	    .avg_mbs = el > 0 ? (double)b->s.bytes / 1048576.0 / el : 0,
	    .cur_mbs = dt > 0 ? (double)(b->s.bytes - *prev_bytes) / 1048576.0 / dt : 0,
	    .cur_iops = dt > 0 ? (double)(ok - *prev_fin) / dt : 0,
	    .last_lat_s = (double)b->s.last_lat_ns / 1e9,
	    .avg_lat_s = hist_mean(&b->s.lat) / 1e9,
	};

	*prev_fin = ok;
	*prev_bytes = b->s.bytes;
	*prev_ns = now;
	bench_report_tick(&t, b->progress);
	if (sec > 0 && bench_stats_tick(&b->s, &t) != 0)
		fprintf(stderr, "weft bench: out of memory for per-second samples\n");
}

/* Run the timed phase: 0, or a negative errno if the client failed. */
static int bench_run(struct bench *b)
{
	uint64_t end, prev_fin = 0, prev_bytes = 0, prev_ns;
	unsigned int sec = 1;
	bool more = true;
	int rc;

	b->s.t0_ns = b->s.t_end_ns = prev_ns = clock_now_ns();
	end = b->s.t0_ns + (uint64_t)(b->a.seconds * 1e9);
	bench_tick(b, 0, &prev_fin, &prev_bytes, &prev_ns);
	for (;;) {
		uint64_t now = clock_now_ns();

		if (bench_sigint && !b->s.interrupted) {
			b->s.interrupted = true;
			fprintf(stderr, "weft bench: interrupted: waiting for %u ops in flight\n",
				b->busy);
		}
		if (b->s.errors >= BENCH_ERRORS_ABORT && !b->s.aborted) {
			b->s.aborted = true;
			fprintf(stderr, "weft bench: %u errors: stopping\n", BENCH_ERRORS_ABORT);
		}
		if (now >= end || b->s.interrupted || b->s.aborted || b->s.full[0])
			more = false;
		for (unsigned int i = 0; more && i < b->a.inflight; i++)
			if (!b->slots[i].busy)
				more = bench_issue(b, &b->slots[i]);
		if (!more && b->busy == 0)
			break;
		if (now >= b->s.t0_ns + (uint64_t)sec * 1000000000u)
			bench_tick(b, sec++, &prev_fin, &prev_bytes, &prev_ns);
		rc = weft_poll(b->cl, 5);
		if (rc < 0 && rc != -EINTR) {
			fprintf(stderr, "weft bench: the client failed: %s\n", weft_strerror(rc));
			return rc;
		}
	}
	if (b->s.finished == 0)
		b->s.t_end_ns = clock_now_ns();
	return 0;
}

/* Remove objects [0, b->objects) with -t in flight; progress once a second. */
static int bench_cleanup(struct bench *b)
{
	uint64_t t0 = clock_now_ns(), next = t0 + 1000000000u;
	bool more = true;

	b->cleaning = true;
	b->next = 0;
	fprintf(b->progress, "Cleaning up (deleting benchmark objects)\n");
	while (more || b->busy > 0) {
		if (bench_sigint > 1 && more) {
			fprintf(stderr,
				"weft bench: cleanup interrupted: objects from %s_object%" PRIu64
				" on are left\n",
				b->run, b->next);
			more = false;
		}
		for (unsigned int i = 0; more && i < b->a.inflight; i++)
			if (!b->slots[i].busy)
				more = bench_issue(b, &b->slots[i]);
		if (clock_now_ns() >= next) {
			fprintf(b->progress, "  removed %" PRIu64 " of %" PRIu64 " objects\n",
				b->removed, b->objects);
			next += 1000000000u;
		}
		if (weft_poll(b->cl, 5) < 0 && b->busy > 0)
			break; /* logged by libweft; reported below */
	}
	fprintf(b->progress,
		"Removed %" PRIu64 " objects\nClean up completed and total clean up "
		"time :%.6f\n",
		b->removed, (double)(clock_now_ns() - t0) / 1e9);
	return b->remove_errors || b->removed < b->objects ? -EIO : 0;
}

/* ---- set-up ---- */

/* The run's metadata objects: "<run>_metadata" and benchmark_last_metadata. */
static int bench_meta_write(struct bench *b)
{
	struct bench_meta m = {.objects = b->objects, .object_size = b->a.bsize};
	char buf[512], name[BENCH_OBJ_NAME_MAX];
	size_t len;
	int rc;

	snprintf(m.run, sizeof(m.run), "%s", b->run);
	rc = bench_meta_encode(&m, buf, sizeof(buf), &len);
	if (rc != 0)
		return rc;
	snprintf(name, sizeof(name), "%s_metadata", b->run);
	rc = weft_write_full(b->cl, b->pool, name, buf, len);
	if (rc == 0)
		rc = weft_write_full(b->cl, b->pool, BENCH_LAST_META, buf, len);
	if (rc != 0)
		fprintf(stderr, "weft bench: cannot write the run's metadata object: %s\n",
			weft_strerror(rc));
	return rc;
}

static int bench_meta_read(struct bench *b)
{
	char buf[1024], name[BENCH_OBJ_NAME_MAX];
	struct bench_meta m;
	size_t len = 0;
	int rc;

	if (b->a.run_name != NULL)
		snprintf(name, sizeof(name), "%s_metadata", b->a.run_name);
	else
		snprintf(name, sizeof(name), "%s", BENCH_LAST_META);
	rc = weft_read(b->cl, b->pool, name, buf, sizeof(buf), 0, &len);
	if (rc == -ENOENT && b->a.mode == BENCH_CLEANUP) {
		printf("No kept run in pool %s (object %s missing): nothing to clean up\n",
		       b->a.pool, name);
		return rc;
	}
	if (rc == -ENOENT) {
		fprintf(stderr,
			"weft bench: no run to read in pool %s (object %s missing): run "
			"'weft bench %s SECONDS write --no-cleanup%s%s' first\n",
			b->a.pool, name, b->a.pool, b->a.run_name ? " --run-name " : "",
			b->a.run_name ? b->a.run_name : "");
		return rc;
	}
	if (rc == 0 && bench_meta_decode(buf, len, &m) != 0)
		rc = -WEFT_E_CORRUPT;
	if (rc != 0) {
		fprintf(stderr, "weft bench: error: metadata object %s: %s\n", name,
			weft_strerror(rc));
		return rc;
	}
	if (m.objects == 0 && b->a.mode != BENCH_CLEANUP) {
		fprintf(stderr, "weft bench: run %s wrote no objects\n", m.run);
		return -ENOENT;
	}
	if (b->a.bsize_given && b->a.bsize != m.object_size)
		fprintf(stderr, "weft bench: -b ignored: run %s has objects of %" PRIu64 " bytes\n",
			m.run, m.object_size);
	b->a.bsize = m.object_size;
	b->objects = m.objects;
	snprintf(b->run, sizeof(b->run), "%s", m.run);
	return 0;
}

/*
 * Read the conf as libweft will, check -b against osd_max_op_size, and
 * raise client_buffers (through WEFT_CLIENT_BUFFERS, which libweft reads at
 * connect) so that -t registered buffers of -b bytes exist.
 */
static int bench_conf(struct bench_args *a, struct conf **conf_out)
{
	struct conf *conf = NULL;
	uint64_t max_op;
	int64_t have, need;
	char v[32];

	if (a->conf_file == NULL && access(BENCH_DEFAULT_CONF, F_OK) == 0)
		a->conf_file = BENCH_DEFAULT_CONF;
	if (conf_create(a->name, &conf) != 0 ||
	    (a->conf_file != NULL && conf_load_file(conf, a->conf_file) != 0) ||
	    conf_apply_env(conf) != 0) {
		fprintf(stderr, "weft bench: bad configuration (see the lines above)\n");
		conf_destroy(conf);
		return 2;
	}
	max_op = conf_get_size(conf, CONF_OSD_MAX_OP_SIZE);
	if (a->mode == BENCH_WRITE && a->bsize > max_op) {
		fprintf(stderr,
			"weft bench: -b %" PRIu64 " is larger than osd_max_op_size (%" PRIu64 ")\n",
			a->bsize, max_op);
		conf_destroy(conf);
		return 2;
	}
	have = conf_get_int(conf, CONF_CLIENT_BUFFERS);
	need = a->mode != BENCH_WRITE || a->bsize > BENCH_SMALL_BUF ? (int64_t)a->inflight + 2
								    : (int64_t)a->inflight - 56;
	if (need > have) {
		snprintf(v, sizeof(v), "%lld", (long long)need);
		setenv("WEFT_CLIENT_BUFFERS", v, 1);
	}
	*conf_out = conf;
	return 0;
}

static int bench_slots(struct bench *b)
{
	uint8_t *pattern = NULL;

	b->slots = calloc(b->a.inflight, sizeof(*b->slots));
	if (b->slots == NULL)
		return -ENOMEM;
	if (b->a.mode == BENCH_WRITE) {
		pattern = malloc(b->a.bsize);
		if (pattern == NULL)
			return -ENOMEM;
		bench_obj_pattern(pattern, b->a.bsize, b->run_key);
	}
	for (unsigned int i = 0; i < b->a.inflight; i++) {
		b->slots[i].b = b;
		if (b->a.mode == BENCH_CLEANUP)
			continue; /* removes carry no data */
		b->slots[i].buf = weft_buf_alloc(b->cl, b->a.bsize);
		if (b->slots[i].buf == NULL) {
			fprintf(stderr,
				"weft bench: no registered buffer %u of %u (%" PRIu64
				" bytes): %s; raise client_buffers or lower -t\n",
				i + 1, b->a.inflight, b->a.bsize, strerror(errno));
			free(pattern);
			return -ENOBUFS;
		}
		if (pattern != NULL)
			memcpy(b->slots[i].buf, pattern, b->a.bsize);
	}
	free(pattern);
	return 0;
}

/*
 * After weft_disconnect: ops still in flight (a failed client) complete with
 * -ECANCELED into the slots first, and the registered buffers go with the
 * connection's pools, so no buffer is released under a live op.
 */
static void bench_free(struct bench *b)
{
	free(b->slots);
	free(b->s.ticks);
}

static int bench_output(struct bench *b, struct bench_explain *ex, int cleanup_rc)
{
	json_t *o;

	if (!b->a.json) {
		bench_report_summary(&b->a, &b->s, stdout);
		if (ex != NULL)
			bench_explain_print(ex, stdout);
		return fflush(stdout) == 0 ? 0 : -EIO;
	}
	o = bench_report_json(&b->a, b->run, &b->s);
	if (o == NULL)
		return -ENOMEM;
	json_object_set_new(o, "objects", json_integer((json_int_t)b->objects));
	if (b->a.mode == BENCH_WRITE)
		json_object_set_new(o, "cleanup",
				    b->a.no_cleanup
					? json_string("kept")
					: json_pack("{s:I, s:b}", "removed", (json_int_t)b->removed,
						    "ok", cleanup_rc == 0));
	if (ex != NULL)
		json_object_set_new(o, "explain", bench_explain_json(ex));
	json_dumpf(o, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
	printf("\n");
	json_decref(o);
	return fflush(stdout) == 0 ? 0 : -EIO;
}

/*
 * "weft bench POOL cleanup": remove a kept run's objects, then its
 * metadata, then the last-run pointer if it names this run. The metadata
 * goes last, so an interrupted cleanup can be run again.
 */
static int bench_cleanup_kept(struct bench *b)
{
	char buf[1024], name[BENCH_OBJ_NAME_MAX];
	struct bench_meta last;
	size_t len = 0;
	int rc;

	rc = bench_cleanup(b);
	if (rc != 0) {
		fprintf(stderr, "weft bench: %" PRIu64 " of %" PRIu64 " objects of run %s removed; "
			"its metadata is kept, run cleanup again\n", b->removed, b->objects, b->run);
		return rc;
	}
	snprintf(name, sizeof(name), "%s_metadata", b->run);
	rc = weft_remove(b->cl, b->pool, name);
	if (rc == 0 || rc == -ENOENT)
		rc = weft_read(b->cl, b->pool, BENCH_LAST_META, buf, sizeof(buf), 0, &len);
	if (rc == 0 && bench_meta_decode(buf, len, &last) == 0 && !strcmp(last.run, b->run))
		rc = weft_remove(b->cl, b->pool, BENCH_LAST_META);
	if (rc != 0 && rc != -ENOENT) {
		fprintf(stderr, "weft bench: run %s: removing its metadata: %s\n", b->run,
			weft_strerror(rc));
		return rc;
	}
	printf("Run %s removed (%" PRIu64 " objects and its metadata)\n", b->run, b->removed);
	return 0;
}

int cli_bench_main(int argc, char **argv)
{
	struct bench b = {0};
	struct bench_explain *ex = NULL;
	struct conf *conf = NULL;
	struct sigaction sa = {.sa_handler = bench_on_sigint};
	char host[64] = "localhost";
	int rc, ret = 1, cleanup_rc = 0;

	rc = bench_args_parse(argc, argv, &b.a);
	if (rc != 0)
		return rc == 1 ? 0 : 2;
	rc = bench_conf(&b.a, &conf);
	if (rc != 0)
		return rc;
	b.progress = b.a.json ? stderr : stdout;
	hist_init(&b.s.lat);
	weft_log_set_level(WEFT_LOG_ERROR);
	rc = weft_connect(b.a.conf_file, b.a.name, &b.cl);
	if (rc != 0) {
		fprintf(stderr, "weft bench: cannot connect as %s: %s\n", b.a.name,
			weft_strerror(rc));
		goto out;
	}
	rc = weft_pool_lookup(b.cl, b.a.pool, &b.pool);
	if (rc != 0) {
		fprintf(stderr, "weft bench: no pool '%s'%s\n", b.a.pool,
			rc == -ENOENT ? " (weft pool ls)" : "");
		goto out;
	}
	if (b.a.mode == BENCH_WRITE) {
		gethostname(host, sizeof(host) - 1);
		if (b.a.run_name != NULL)
			snprintf(b.run, sizeof(b.run), "%s", b.a.run_name);
		else
			snprintf(b.run, sizeof(b.run), "benchmark_data_%s_%d", host, (int)getpid());
	} else if ((rc = bench_meta_read(&b)) != 0) {
		if (rc == -ENOENT && b.a.mode == BENCH_CLEANUP)
			ret = 0;
		goto out;
	}
	if (b.a.mode == BENCH_CLEANUP) {
		sigaction(SIGINT, &sa, NULL);
		bench_sigint = 1; /* one Ctrl-C stops the cleanup: there is no run to end first */
		if (bench_slots(&b) == 0 && bench_cleanup_kept(&b) == 0)
			ret = 0;
		goto out;
	}
	b.run_key = bench_run_key(b.run);
	b.rng = ((uint64_t)getpid() << 32 | (uint64_t)clock_now_ns()) | 1;
	if (bench_slots(&b) != 0)
		goto out;
	bench_report_header(&b.a, b.run, b.objects, b.progress);
	if (!b.a.no_explain)
		ex = bench_explain_begin(conf, b.a.conf_file, b.a.name, b.cl);
	sigaction(SIGINT, &sa, NULL);
	rc = bench_run(&b);
	if (ex != NULL && b.s.full[0])
		bench_explain_full(ex, b.s.full);
	if (ex != NULL)
		bench_explain_end(ex, (double)(b.s.t_end_ns - b.s.t0_ns) / 1e9, b.s.bytes);
	if (rc == 0 && b.a.mode == BENCH_WRITE && b.a.no_cleanup && bench_meta_write(&b) != 0)
		b.s.errors++;
	/* text: the summary first, as rados bench; JSON carries the cleanup's outcome */
	if (b.a.json && rc == 0 && b.a.mode == BENCH_WRITE && !b.a.no_cleanup)
		cleanup_rc = bench_cleanup(&b);
	if (bench_output(&b, ex, cleanup_rc) != 0)
		goto out;
	if (!b.a.json && rc == 0 && b.a.mode == BENCH_WRITE && !b.a.no_cleanup)
		cleanup_rc = bench_cleanup(&b);
	ret = rc == 0 && b.s.errors == 0 && cleanup_rc == 0 ? 0 : 1;
	if (b.s.errors > 0 && b.a.mode != BENCH_WRITE)
		fprintf(stderr,
			"weft bench: %" PRIu64 " of %" PRIu64
			" reads failed or did not verify (see above)\n",
			b.s.errors, b.s.finished);
out:
	signal(SIGINT, SIG_DFL);
	bench_explain_free(ex);
	weft_disconnect(b.cl);
	bench_free(&b);
	conf_destroy(conf);
	return ret;
}
