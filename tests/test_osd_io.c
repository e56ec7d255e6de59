/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_osd_io: the client side of tests/test_osd_cluster.sh, on libweft.
 *
 *   test_osd_io -c CONF -p POOL verify N SEED   write N objects (1 B - osd_max_op_size,
 *                                               log-uniform), read back, compare, then
 *                                               compare every OSD's own copy
 *   test_osd_io -c CONF -p POOL readback N SEED  the read and compare half of verify, on
 *                                               what an earlier verify N SEED wrote
 *   test_osd_io -c CONF -p POOL writer SECS SEED write+read-verify in a loop for SECS
 *   test_osd_io -c CONF -p POOL write NAME      one 4 KiB write; prints rc
 *   test_osd_io -c CONF -p POOL ops             every op and its effect on all replicas,
 *                                               async ordering on one object via weft_fd
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
#include <poll.h>

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

/* got[0..len) is what o's last write wrote (want: scratch) */
static bool copy_equal(const struct obj *o, const uint8_t *got, size_t len, uint8_t *want)
{
	if (len != o->size)
		return false;
	fill(want, o->size, o->seed);
	return memcmp(got, want, o->size) == 0;
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

/* how long verify waits for strays to remove their copies (exact WEFT_TEST_COPIES) */
#define VERIFY_STRAY_WAIT_MS 60000u

/*
 * Compare o's copies on OSDs 0..osds-1 (got, want: scratch). Exact mode
 * (want_copies without "+"): the holders must be exactly want_copies and
 * identical; more holders than that is a stray that has not removed its
 * copy yet (it does so once the PG is clean, asynchronously): 1, look
 * again later. At-least mode: at least want_copies copies equal to the
 * write, others (strays' older copies) counted in *stale. 0: ok, *have
 * and *stale added to; 1: extra holders; -1: failed (printed).
 */
static int verify_copies(struct weft_cluster *cl, uint32_t pool, const struct obj *o,
			 unsigned int osds, unsigned int want_copies, bool at_least, uint8_t *got,
			 uint8_t *want, unsigned int *have_io, unsigned int *stale_io)
{
	unsigned int holders = 0, equal = 0, stale = 0, first_bad = osds;
	bool every = want_copies == osds && !at_least;

	for (unsigned int k = 0; k < osds; k++) {
		size_t len = 0;
		int rc = weft_debug_read_local(cl, k, pool, o->name, got, max_op, 0, &len);

		if (rc == -ENOENT && !every)
			continue; /* not in this object's acting set */
		if (rc != 0) {
			fprintf(stderr, "FAIL: osd.%u copy of %s: %s\n", k, o->name,
				weft_strerror(rc));
			return -1;
		}
		holders++;
		if (copy_equal(o, got, len, want)) {
			equal++;
		} else if (at_least) {
			stale++; /* a stray's older copy */
		} else if (first_bad == osds) {
			first_bad = k;
		}
	}
	if (at_least) {
		if (equal < want_copies) {
			fprintf(
			    stderr,
			    "FAIL: %s has %u copies equal to the write on the %u OSDs, want %u+\n",
			    o->name, equal, osds, want_copies);
			return -1;
		}
	} else if (holders > want_copies) {
		return 1;
	} else if (holders < want_copies) {
		fprintf(stderr, "FAIL: %s has %u copies on the %u OSDs, want %u\n", o->name,
			holders, osds, want_copies);
		return -1;
	} else if (first_bad != osds) {
		char what[32];
		size_t len = 0;

		snprintf(what, sizeof(what), "osd.%u copy of", first_bad);
		if (weft_debug_read_local(cl, first_bad, pool, o->name, got, max_op, 0, &len) == 0)
			check_copy(what, o, got, len, want);
		else
			fprintf(stderr, "FAIL: %s %s: differs\n", what, o->name);
		return -1;
	}
	*have_io += equal;
	*stale_io += stale;
	return 0;
}

static int cmd_verify(struct weft_cluster *cl, uint32_t pool, unsigned int n, uint64_t seed,
		      const char *prefix, bool write)
{
	struct obj *objs = calloc(n, sizeof(*objs));
	uint8_t *want = malloc(max_op), *got = malloc(max_op);
	uint64_t bytes = 0, t0 = clock_now_ms();
	unsigned int osds = 0, copies = 0, stale = 0, stray_wait_ms = 0, want_copies;
	bool at_least;
	char perf[256];
	int rc, ret = 1;

	if (objs == NULL || want == NULL || got == NULL) {
		fprintf(stderr, "FAIL: out of memory\n");
		goto out;
	}
	rng_state = seed | 1;
	for (unsigned int i = 0; i < n; i++) {
		snprintf(objs[i].name, sizeof(objs[i].name), "%s-%u", prefix, i);
		objs[i].size = pick_size(i, n);
		objs[i].seed = seed * 1000003 + i;
		bytes += objs[i].size;
	}
	if (write) {
		printf("writing %u objects, %.1f MiB, bytes %llu\n", n, bytes / 1048576.0,
		       (unsigned long long)bytes);
		fflush(stdout);
		rc = write_all(cl, pool, objs, n, 16, NULL);
		if (rc != 0)
			goto out;
		printf("written in %.1f s; ", (clock_now_ms() - t0) / 1000.0);
	}
	printf("reading back %u objects\n", n);
	fflush(stdout);
	for (unsigned int i = 0; i < n; i++) {
		size_t len = 0;

		rc = weft_read(cl, pool, objs[i].name, got, max_op, 0, &len);
		if (rc != 0) {
			fprintf(stderr, "FAIL: read %s: %s\n", objs[i].name, weft_strerror(rc));
			goto out;
		}
		if (check_copy("read", &objs[i], got, len, want) != 0)
			goto out;
	}
	/*
	 * Every OSD that answers perf is a member. With WEFT_TEST_COPIES=N
	 * (more OSDs than the pool's size: tests/test_multihost.sh) each object
	 * must have exactly N identical copies among them and no other; without
	 * it every member must hold one. OSDs that left a PG's acting set keep
	 * their copies (strays, docs/recovery.md) until the PG is clean and its
	 * primary tells them to remove them, a moment later: an object with
	 * more than N copies is looked at again, for at most
	 * VERIFY_STRAY_WAIT_MS over the whole run. "N+" (a host down) asks for
	 * at least N copies equal to what was written and lets other copies
	 * differ: those PGs are not clean, and their strays miss the writes
	 * made since.
	 */
	while (osds < 64 && weft_debug_osd_perf(cl, osds, perf, sizeof(perf)) == 0)
		osds++;
	want_copies =
	    getenv("WEFT_TEST_COPIES") ? (unsigned int)atoi(getenv("WEFT_TEST_COPIES")) : osds;
	/* "N+": at least N (a host down: PGs may have taken a stand-in member) */
	at_least = getenv("WEFT_TEST_COPIES") && strchr(getenv("WEFT_TEST_COPIES"), '+');
	printf("read back ok; comparing the copies on %u OSDs (%u per object)\n", osds,
	       want_copies);
	fflush(stdout);
	for (unsigned int i = 0; i < n; i++) {
		for (;;) {
			rc = verify_copies(cl, pool, &objs[i], osds, want_copies, at_least, got,
					   want, &copies, &stale);
			if (rc <= 0)
				break;
			if (stray_wait_ms >= VERIFY_STRAY_WAIT_MS) {
				fprintf(stderr,
					"FAIL: %s has more than %u copies on the %u OSDs %u s "
					"after the PGs were clean\n",
					objs[i].name, want_copies, osds,
					VERIFY_STRAY_WAIT_MS / 1000);
				goto out;
			}
			poll(NULL, 0, 250); /* a stray not done removing its copy */
			stray_wait_ms += 250;
		}
		if (rc < 0)
			goto out;
	}
	printf("ok: %u objects, %u copies identical, %.1f s, %llu resends", n, copies,
	       (clock_now_ms() - t0) / 1000.0, (unsigned long long)weft_debug_resends(cl));
	if (at_least)
		printf(", %u older copies (strays) ignored", stale);
	if (stray_wait_ms > 0)
		printf(", %.2f s waited for strays to remove their copies", stray_wait_ms / 1000.0);
	printf("\n");
	ret = 0;
out:
	free(objs);
	free(want);
	free(got);
	return ret;
}

#define OPS_CHECK(cond, ...)                                                                       \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "FAIL: ops: " __VA_ARGS__);                                \
			fputc('\n', stderr);                                                       \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

/* Every OSD answering perf holds a copy equal to want[0..len) (len 0 + gone: -ENOENT). */
static int ops_copies(struct weft_cluster *cl, uint32_t pool, const char *name, const uint8_t *want,
		      size_t len, bool gone, uint8_t *got)
{
	char perf[256];
	unsigned int k = 0;

	for (; k < 64 && weft_debug_osd_perf(cl, k, perf, sizeof(perf)) == 0; k++) {
		size_t n = 0;
		int rc = weft_debug_read_local(cl, k, pool, name, got, max_op, 0, &n);

		if (gone ? rc != -ENOENT : rc != 0 || n != len || memcmp(got, want, len) != 0) {
			fprintf(stderr,
				"FAIL: ops: osd.%u copy of %s: rc %d, %zu bytes, want %s%zu\n", k,
				name, rc, n, gone ? "gone " : "", len);
			return -EIO;
		}
	}
	return k >= 3 ? 0 : -ENODEV;
}

struct ops_slot {
	int rc;
	bool done;
	uint64_t length;
};

static void ops_cb(const struct weft_result *res, void *arg)
{
	struct ops_slot *s = arg;

	s->rc = res->rc;
	s->length = res->length;
	s->done = true;
}

/*
 * Every client op and its effect on all replicas: partial writes (bounced
 * and zero-copy), write_full, stat, truncate down and up, remove; then 64
 * async writes to overlapping ranges of one object with a read queued
 * behind them, completed by polling weft_fd(): the read sees them applied
 * in submission order.
 */
static int cmd_ops(struct weft_cluster *cl, uint32_t pool)
{
	const size_t big = 2u << 20, sz = 100000;
	uint8_t *want = calloc(1, max_op), *got = malloc(max_op), *reg = weft_buf_alloc(cl, big);
	struct ops_slot slots[65] = {0};
	uint8_t wbuf[64][4096];
	uint64_t size = 0, ver = 0, ver2 = 0;
	unsigned int done = 0;
	size_t n = 0;
	int rc = -EIO;

	OPS_CHECK(want && got && reg, "out of memory / no registered buffer");
	/* write_full, then a bounced partial write inside it and a zero-copy one past its end */
	fill(want, sz, 11);
	OPS_CHECK(weft_write_full(cl, pool, "ops-a", want, sz) == 0, "write_full");
	fill(want + 50001, 20000, 12);
	OPS_CHECK(weft_write(cl, pool, "ops-a", want + 50001, 20000, 50001) == 0, "write at 50001");
	fill(reg, big, 13);
	memcpy(want + (1u << 20) + 3, reg, big); /* the gap before it reads as zeros */
	OPS_CHECK(weft_write(cl, pool, "ops-a", reg, big, (1u << 20) + 3) == 0, "zero-copy write");
	size = 0;
	OPS_CHECK(weft_stat(cl, pool, "ops-a", &size, &ver) == 0 && size == (1u << 20) + 3 + big,
		  "stat after writes: size %llu", (unsigned long long)size);
	OPS_CHECK(weft_read(cl, pool, "ops-a", got, max_op, 0, &n) == 0 && n == size &&
		      memcmp(got, want, n) == 0,
		  "read after writes: %zu bytes", n);
	OPS_CHECK(weft_read(cl, pool, "ops-a", got, 1000, 50000, &n) == 0 && n == 1000 &&
		      memcmp(got, want + 50000, 1000) == 0,
		  "read at an offset");
	OPS_CHECK(ops_copies(cl, pool, "ops-a", want, size, false, got) == 0,
		  "copies after writes");
	/* sent to each OSD: only the primary serves it, the others refuse naming it */
	{
		unsigned int served = 0, k;
		uint64_t prim = UINT64_MAX, named, sz2;

		for (k = 0; k < 3; k++) {
			named = UINT64_MAX;
			rc = weft_debug_stat_at(cl, k, pool, "ops-a", &sz2, &named);
			if (rc == 0) {
				OPS_CHECK(sz2 == size, "osd.%u stat: %llu", k,
					  (unsigned long long)sz2);
				OPS_CHECK(prim == UINT64_MAX || prim == k,
					  "osd.%u served, not %llu", k, (unsigned long long)prim);
				prim = k;
				served++;
			} else {
				OPS_CHECK(rc == -ENXIO && named < 3, "osd.%u: %s, names %llu", k,
					  weft_strerror(rc), (unsigned long long)named);
				OPS_CHECK(prim == UINT64_MAX || prim == named,
					  "osd.%u names osd.%llu", k, (unsigned long long)named);
				prim = named;
			}
		}
		OPS_CHECK(served == 1, "%u OSDs served a stat as primary", served);
		rc = -EIO;
	}
	/* truncate down, then up (the tail reads as zeros), each on every replica */
	OPS_CHECK(weft_truncate(cl, pool, "ops-a", 60000) == 0, "truncate to 60000");
	OPS_CHECK(weft_stat(cl, pool, "ops-a", &size, &ver2) == 0 && size == 60000 && ver2 > ver,
		  "stat after truncate: size %llu, version %llx after %llx",
		  (unsigned long long)size, (unsigned long long)ver2, (unsigned long long)ver);
	OPS_CHECK(ops_copies(cl, pool, "ops-a", want, 60000, false, got) == 0,
		  "copies after truncate");
	OPS_CHECK(weft_truncate(cl, pool, "ops-a", 70000) == 0, "truncate to 70000");
	memset(want + 60000, 0, 10000);
	OPS_CHECK(weft_read(cl, pool, "ops-a", got, max_op, 0, &n) == 0 && n == 70000 &&
		      memcmp(got, want, n) == 0,
		  "read after truncate up: %zu bytes", n);
	OPS_CHECK(ops_copies(cl, pool, "ops-a", want, 70000, false, got) == 0,
		  "copies after truncate up");
	/* remove: gone for the client and from every replica; removing again is -ENOENT */
	OPS_CHECK(weft_remove(cl, pool, "ops-a") == 0, "remove");
	OPS_CHECK(weft_stat(cl, pool, "ops-a", &size, &ver2) == -ENOENT, "stat after remove");
	OPS_CHECK(weft_read(cl, pool, "ops-a", got, 10, 0, &n) == -ENOENT, "read after remove");
	OPS_CHECK(ops_copies(cl, pool, "ops-a", want, 0, true, got) == 0, "copies after remove");
	OPS_CHECK(weft_remove(cl, pool, "ops-a") == -ENOENT, "second remove");
	/* ordering: overlapping async writes, then a read, driven through weft_fd() */
	memset(want, 0, 8 * 4096);
	for (unsigned int i = 0; i < 64; i++) {
		memset(wbuf[i], (int)(i + 1), sizeof(wbuf[i]));
		memset(want + (i % 8) * 4096, (int)(i + 1), 4096); /* the last one wins */
		OPS_CHECK(weft_aio_write(cl, pool, "ops-order", wbuf[i], 4096, (i % 8) * 4096,
					 ops_cb, &slots[i]) == 0,
			  "queue write %u", i);
	}
	OPS_CHECK(weft_aio_read(cl, pool, "ops-order", got, 8 * 4096, 0, ops_cb, &slots[64]) == 0,
		  "queue read");
	for (uint64_t deadline = clock_now_ms() + 120000; done < 65 && clock_now_ms() < deadline;) {
		struct pollfd pfd = {.fd = weft_fd(cl), .events = POLLIN};

		OPS_CHECK(pfd.fd >= 0, "weft_fd");
		if (poll(&pfd, 1, 100) < 0)
			continue;
		OPS_CHECK(weft_poll(cl, 0) >= 0, "weft_poll");
		done = 0;
		for (unsigned int i = 0; i < 65; i++)
			done += slots[i].done;
	}
	OPS_CHECK(done == 65, "only %u of 65 async ops completed", done);
	for (unsigned int i = 0; i < 65; i++)
		OPS_CHECK(slots[i].rc == 0, "async op %u: %s", i, weft_strerror(slots[i].rc));
	OPS_CHECK(slots[64].length == 8 * 4096 && memcmp(got, want, 8 * 4096) == 0,
		  "the read queued last did not see the writes in order");
	OPS_CHECK(ops_copies(cl, pool, "ops-order", want, 8 * 4096, false, got) == 0,
		  "copies after ordered writes");
	printf("ok: ops: write/write_full/read/stat/truncate/remove on every replica, "
	       "64 async writes in order\n");
	rc = 0;
out:
	weft_buf_free(cl, reg);
	free(want);
	free(got);
	return rc == 0 ? 0 : 1;
}

/*
 * Objects a writer cycles through: at most 512 MiB of them on each OSD, so a
 * fast machine cannot fill the test's 2 GiB stores before secs pass (each
 * write_full replaces the object; the store frees the old units).
 */
#define WRITER_NAMES 512u

/* Write and verify small objects until secs pass; any error reaching us fails. */
static int cmd_writer(struct weft_cluster *cl, uint32_t pool, double secs, uint64_t seed)
{
	uint64_t end = clock_now_ms() + (uint64_t)(secs * 1000);
	uint8_t *want = malloc(1 << 20), *got = malloc(1 << 20);
	unsigned int i = 0;
	int ret = 1;

	if (want == NULL || got == NULL)
		goto out;
	rng_state = seed | 1;
	while (clock_now_ms() < end) {
		struct obj o = {.size = 1 + rnd() % (1 << 20), .seed = seed + i};
		size_t len = 0;
		int rc;

		snprintf(o.name, sizeof(o.name), "w%llu-%u", (unsigned long long)seed,
			 i++ % WRITER_NAMES);
		fill(want, o.size, o.seed);
		rc = weft_write_full(cl, pool, o.name, want, o.size);
		if (rc == 0)
			rc = weft_read(cl, pool, o.name, got, 1 << 20, 0, &len);
		if (rc != 0) {
			fprintf(stderr, "FAIL: writer %s: %s\n", o.name, weft_strerror(rc));
			goto out;
		}
		if (check_copy("writer read", &o, got, len, want) != 0)
			goto out;
	}
	printf("ok: writer %u objects, %llu resends, epoch %u\n", i,
	       (unsigned long long)weft_debug_resends(cl), weft_map_epoch(cl));
	ret = 0;
out:
	free(want);
	free(got);
	return ret;
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
		fprintf(stderr, "usage: test_osd_io -c CONF [-p POOL] "
				"verify|readback|writer|write|ops|perf|bench ...\n");
		return 2;
	}
	rc = weft_connect(conf, "client.admin", &cl);
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
				strtoull(argv[i + 2], NULL, 10), "obj", true);
	} else if (!strcmp(argv[i], "readback") && i + 2 < argc) {
		rc = cmd_verify(cl, pool, (unsigned int)atoi(argv[i + 1]),
				strtoull(argv[i + 2], NULL, 10), "obj", false);
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
	} else if (!strcmp(argv[i], "ops")) {
		rc = cmd_ops(cl, pool);
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
