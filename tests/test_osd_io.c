/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_osd_io: the client side of tests/test_osd_cluster.sh, on libweft.
 *
 *   test_osd_io -c CONF -p POOL verify N SEED   write N objects (1 B - osd_max_op_size,
 *                                               log-uniform), read back, compare, then
 *                                               compare every OSD's own copy
 *   test_osd_io -c CONF -p POOL writer SECS SEED write+read-verify in a loop for SECS
 *   test_osd_io -c CONF -p POOL write NAME      one 4 KiB write; prints rc
 *   test_osd_io -c CONF perf OSD                the OSD's counters (JSON)
 *   test_osd_io -c CONF -p POOL bench SIZE N QD write N objects of SIZE, QD in flight
 *
 * Prints one line per failure and exits 1 on any; every wait is bounded by
 * client_op_timeout.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "client/client_debug.h"
#include "common/clock.h"
#include "common/histogram.h"
#include "weft/weft.h"

/* the outcome lines must survive a sanitizer exit, which skips stdio flushing */
__attribute__((constructor)) static void io_unbuffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill(uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;

	for (size_t i = 0; i < len; i++) {
		if ((i & 7) == 0) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
		}
		p[i] = (uint8_t)(s >> ((i & 7) * 8));
	}
}

struct obj {
	char name[64];
	size_t size;
	uint64_t seed;
	int rc;
	bool done;
	uint8_t *buf;
	uint64_t t0;
};

static uint64_t max_op = 8u << 20;

static size_t pick_size(unsigned int i, unsigned int n)
{
	double lo = 0, hi = log((double)max_op);

	if (i == 0)
		return 1;
	if (i == 1)
		return max_op; /* the edges: 1 byte and the largest op */
	size_t s = (size_t)exp(lo + (hi - lo) * (double)(rnd() % 1000000) / 1e6);

	return s < 1 ? 1 : s > max_op ? max_op : s;
}

static void obj_cb(const struct weft_result *res, void *arg)
{
	struct obj *o = arg;

	o->rc = res->rc;
	o->done = true;
}

/* Write objs[] with up to qd in flight through registered buffers; 0 or first error. */
static int write_all(struct weft_cluster *cl, uint32_t pool, struct obj *objs, unsigned int n,
		     unsigned int qd, struct hist *lat)
{
	unsigned int next = 0, done = 0, inflight = 0;
	int err = 0;

	while (done < n) {
		while (next < n && inflight < qd) {
			struct obj *o = &objs[next];

			o->buf = weft_buf_alloc(cl, o->size);
			if (o->buf == NULL)
				break;
			fill(o->buf, o->size, o->seed);
			o->done = false;
			o->t0 = clock_now_us();
			if (weft_aio_write_full(cl, pool, o->name, o->buf, o->size, obj_cb, o) !=
			    0) {
				fprintf(stderr, "FAIL: queue write %s\n", o->name);
				return -EIO;
			}
			next++;
			inflight++;
		}
		if (weft_poll(cl, 5) < 0)
			return -EIO;
		for (unsigned int i = done; i < next; i++) {
			struct obj *o = &objs[i];

			if (!o->done || o->buf == NULL)
				continue;
			if (lat)
				hist_record(lat, clock_now_us() - o->t0);
			if (o->rc != 0 && err == 0) {
				fprintf(stderr, "FAIL: write %s (%zu B): %s\n", o->name, o->size,
					weft_strerror(o->rc));
				err = o->rc;
			}
			weft_buf_free(cl, o->buf);
			o->buf = NULL;
			inflight--;
		}
		while (done < next && objs[done].buf == NULL && objs[done].done)
			done++;
	}
	return err;
}

static int check_copy(const char *what, const struct obj *o, const uint8_t *got, size_t len,
		      uint8_t *want)
{
	if (len != o->size) {
		fprintf(stderr, "FAIL: %s %s: %zu bytes, want %zu\n", what, o->name, len, o->size);
		return -EIO;
	}
	fill(want, o->size, o->seed);
	if (memcmp(got, want, o->size) != 0) {
		fprintf(stderr, "FAIL: %s %s: content differs\n", what, o->name);
		return -EIO;
	}
	return 0;
}

static int cmd_verify(struct weft_cluster *cl, uint32_t pool, unsigned int n, uint64_t seed,
		      const char *prefix)
{
	struct obj *objs = calloc(n, sizeof(*objs));
	uint8_t *want = malloc(max_op), *got = malloc(max_op);
	uint64_t bytes = 0, t0 = clock_now_ms();
	unsigned int osds = 0, copies = 0;
	char perf[256];
	int rc;

	rng_state = seed | 1;
	for (unsigned int i = 0; i < n; i++) {
		snprintf(objs[i].name, sizeof(objs[i].name), "%s-%u", prefix, i);
		objs[i].size = pick_size(i, n);
		objs[i].seed = seed * 1000003 + i;
		bytes += objs[i].size;
	}
	printf("writing %u objects, %.1f MiB, bytes %llu\n", n, bytes / 1048576.0,
	       (unsigned long long)bytes);
	fflush(stdout);
	rc = write_all(cl, pool, objs, n, 16, NULL);
	if (rc != 0)
		goto fail;
	printf("written in %.1f s; reading back\n", (clock_now_ms() - t0) / 1000.0);
	fflush(stdout);
	for (unsigned int i = 0; i < n; i++) {
		size_t len = 0;

		rc = weft_read(cl, pool, objs[i].name, got, max_op, 0, &len);
		if (rc != 0) {
			fprintf(stderr, "FAIL: read %s: %s\n", objs[i].name, weft_strerror(rc));
			goto fail;
		}
		if (check_copy("read", &objs[i], got, len, want) != 0)
			goto fail;
	}
	/* every OSD that answers perf is a member; each must hold an identical copy */
	while (osds < 64 && weft_debug_osd_perf(cl, osds, perf, sizeof(perf)) == 0)
		osds++;
	printf("read back ok; comparing the copies on %u OSDs\n", osds);
	fflush(stdout);
	for (unsigned int i = 0; i < n; i++) {
		for (unsigned int k = 0; k < osds; k++) {
			size_t len = 0;
			char what[32];

			rc = weft_debug_read_local(cl, k, pool, objs[i].name, got, max_op, 0, &len);
			snprintf(what, sizeof(what), "osd.%u copy of", k);
			if (rc != 0) {
				fprintf(stderr, "FAIL: %s %s: %s\n", what, objs[i].name,
					weft_strerror(rc));
				goto fail;
			}
			if (check_copy(what, &objs[i], got, len, want) != 0)
				goto fail;
			copies++;
		}
	}
	free(objs);
	objs = NULL;
	printf("ok: %u objects, %u copies identical, %.1f s, %llu resends\n", n, copies,
	       (clock_now_ms() - t0) / 1000.0, (unsigned long long)weft_debug_resends(cl));
	free(want);
	free(got);
	return 0;
fail:
	free(objs);
	free(want);
	free(got);
	return 1;
}

/* Write and verify small objects until secs pass; any error reaching us fails. */
static int cmd_writer(struct weft_cluster *cl, uint32_t pool, double secs, uint64_t seed)
{
	uint64_t end = clock_now_ms() + (uint64_t)(secs * 1000);
	uint8_t *want = malloc(1 << 20), *got = malloc(1 << 20);
	unsigned int i = 0;

	rng_state = seed | 1;
	while (clock_now_ms() < end) {
		struct obj o = {.size = 1 + rnd() % (1 << 20), .seed = seed + i};
		size_t len = 0;
		int rc;

		snprintf(o.name, sizeof(o.name), "w%llu-%u", (unsigned long long)seed, i++);
		fill(want, o.size, o.seed);
		rc = weft_write_full(cl, pool, o.name, want, o.size);
		if (rc == 0)
			rc = weft_read(cl, pool, o.name, got, 1 << 20, 0, &len);
		if (rc != 0) {
			fprintf(stderr, "FAIL: writer %s: %s\n", o.name, weft_strerror(rc));
			return 1;
		}
		if (check_copy("writer read", &o, got, len, want) != 0)
			return 1;
	}
	printf("ok: writer %u objects, %llu resends, epoch %u\n", i,
	       (unsigned long long)weft_debug_resends(cl), weft_map_epoch(cl));
	free(want);
	free(got);
	return 0;
}

static int cmd_bench(struct weft_cluster *cl, uint32_t pool, size_t size, unsigned int n,
		     unsigned int qd)
{
	struct obj *objs = calloc(n, sizeof(*objs));
	struct hist lat;
	uint64_t t0;
	double s;

	hist_init(&lat);
	for (unsigned int i = 0; i < n; i++) {
		snprintf(objs[i].name, sizeof(objs[i].name), "bench-%zu-%u", size, i);
		objs[i].size = size;
		objs[i].seed = i;
	}
	t0 = clock_now_us();
	if (write_all(cl, pool, objs, n, qd, &lat) != 0) {
		free(objs);
		return 1;
	}
	s = (clock_now_us() - t0) / 1e6;
	printf("bench write %zu B x %u, %u in flight: %.0f IOPS, %.1f MB/s, p50 %.0f us, "
	       "p99 %.0f us\n",
	       size, n, qd, n / s, n * (double)size / s / 1e6, (double)hist_quantile(&lat, 0.5),
	       (double)hist_quantile(&lat, 0.99));
	free(objs);
	return 0;
}

int main(int argc, char **argv)
{
	const char *conf = NULL, *poolname = "rbd";
	struct weft_cluster *cl;
	uint32_t pool = 0;
	int i = 1, rc;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-c"))
			conf = argv[i + 1];
		else if (!strcmp(argv[i], "-p"))
			poolname = argv[i + 1];
	}
	if (i >= argc) {
		fprintf(
		    stderr,
		    "usage: test_osd_io -c CONF [-p POOL] verify|writer|write|perf|bench ...\n");
		return 2;
	}
	rc = weft_connect(conf, "client.test", &cl);
	if (rc != 0) {
		fprintf(stderr, "FAIL: connect: %s\n", weft_strerror(rc));
		return 1;
	}
	if (getenv("WEFT_OSD_MAX_OP_SIZE") == NULL)
		max_op = 8u << 20;
	if (strcmp(argv[i], "perf") != 0 && weft_pool_lookup(cl, poolname, &pool) != 0) {
		fprintf(stderr, "FAIL: no pool %s\n", poolname);
		return 1;
	}
	if (!strcmp(argv[i], "verify") && i + 2 < argc) {
		rc = cmd_verify(cl, pool, (unsigned int)atoi(argv[i + 1]),
				strtoull(argv[i + 2], NULL, 10), "obj");
	} else if (!strcmp(argv[i], "writer") && i + 2 < argc) {
		rc = cmd_writer(cl, pool, atof(argv[i + 1]), strtoull(argv[i + 2], NULL, 10));
	} else if (!strcmp(argv[i], "write") && i + 1 < argc) {
		uint8_t b[4096];
		uint64_t t0 = clock_now_ms();

		fill(b, sizeof(b), 7);
		rc = weft_write_full(cl, pool, argv[i + 1], b, sizeof(b));
		printf("write %s: %s after %.1f s\n", argv[i + 1], rc ? weft_strerror(rc) : "ok",
		       (clock_now_ms() - t0) / 1000.0);
		rc = rc == 0 ? 0 : rc == -ETIMEDOUT ? 3 : 1;
	} else if (!strcmp(argv[i], "perf") && i + 1 < argc) {
		static char buf[16384];

		rc = weft_debug_osd_perf(cl, (uint32_t)atoi(argv[i + 1]), buf, sizeof(buf));
		if (rc == 0) {
			printf("%s\n", buf);
			weft_debug_conns_json(cl, buf, sizeof(buf));
			fprintf(stderr, "client %s\n", buf);
		}
		rc = rc != 0;
	} else if (!strcmp(argv[i], "bench") && i + 3 < argc) {
		rc = cmd_bench(cl, pool, strtoull(argv[i + 1], NULL, 10),
			       (unsigned int)atoi(argv[i + 2]), (unsigned int)atoi(argv[i + 3]));
	} else {
		fprintf(stderr, "test_osd_io: bad command\n");
		rc = 2;
	}
	weft_disconnect(cl);
	return rc;
}
