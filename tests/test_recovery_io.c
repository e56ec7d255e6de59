/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_recovery_io: the client side of tests/test_recovery.sh, on libweft.
 *
 *   test_recovery_io -c CONF -p POOL writer SECS SEED JOURNAL [QD NAMES MAXSIZE [RATE]]
 *       write_full random objects (NAMES names, 1 B - MAXSIZE bytes, QD in
 *       flight, at most RATE bytes per second if given) for SECS seconds;
 *       every completion is appended to JOURNAL
 *       ("A name seed size" acknowledged, "U name seed size rc flags osd"
 *       failed, flags = weft_result.flags: 1 may have been applied, 2 osd
 *       named) and flushed before the next op is queued, so a kill of any OSD
 *       loses no record of an acknowledged write
 *   test_recovery_io -c CONF -p POOL remove JOURNAL EVERY
 *       remove every EVERY-th object the journal names ("D name" first, then
 *       "R name rc"): check then wants it gone unless a later write is there
 *   test_recovery_io -c CONF -p POOL locate NAME PGNUM   the PG of object NAME (POOL.PG)
 *   test_recovery_io -c CONF -p POOL put NAME FILE        write_full FILE's bytes
 *   test_recovery_io findmark FILE MARK                   offsets of MARK in a (sparse) file
 *   test_recovery_io -c CONF -p POOL cmp NAME FILE COPIES reads as FILE; COPIES OSDs hold it
 *   test_recovery_io -c CONF -p POOL check JOURNAL COPIES[+]
 *       every object of the journal reads back with the content of its last
 *       acknowledged write, or of a failed write after it (which may or may
 *       not have happened) - never anything else; then every OSD's own copy
 *       is read: exactly COPIES OSDs (COPIES+: at least) hold the object, all
 *       identical to what the primary returned
 *
 * Exits 1 with one line per problem; every wait is bounded by client_op_timeout.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/client_debug.h"
#include "common/clock.h"
#include "placement/placement.h"
#include "weft/weft.h"

#define MAX_NAMES 100000
#define MAX_CAND 64

__attribute__((constructor)) static void io_unbuffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
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

static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct slot {
	bool busy, done;
	int rc;
	uint32_t flags;
	int32_t osd;
	char name[32];
	uint64_t seed;
	size_t size;
	uint8_t *buf;
};

static void slot_cb(const struct weft_result *res, void *arg)
{
	struct slot *s = arg;

	s->rc = res->rc;
	s->flags = res->flags;
	s->osd = res->osd;
	s->done = true;
}

static int cmd_writer(struct weft_cluster *cl, uint32_t pool, double secs, uint64_t seed,
		      const char *journal, unsigned int qd, unsigned int names, size_t maxsize,
		      uint64_t rate)
{
	uint64_t sent = 0; /* bytes of the writes started, for rate */
	FILE *j = fopen(journal, "a");
	struct slot *slots = calloc(qd, sizeof(*slots));
	uint64_t end = clock_now_ms() + (uint64_t)(secs * 1000), acked = 0, failed = 0, maybe = 0;
	uint64_t t0 = clock_now_ms(), last_report = t0;
	unsigned int inflight = 0;

	if (j == NULL || slots == NULL) {
		fprintf(stderr, "FAIL: cannot open journal %s\n", journal);
		return 1;
	}
	rng ^= seed * 0x2545f4914f6cdd1dull;
	while (clock_now_ms() < end || inflight > 0) {
		for (unsigned int i = 0; i < qd; i++) {
			struct slot *s = &slots[i];

			if (s->busy && s->done) {
				if (s->rc == 0)
					fprintf(j, "A %s %llu %zu\n", s->name,
						(unsigned long long)s->seed, s->size);
				else
					fprintf(j, "U %s %llu %zu %d %u %d\n", s->name,
						(unsigned long long)s->seed, s->size, s->rc, s->flags,
						s->osd);
				fflush(j);
				if (s->rc == 0)
					acked++;
				else
					failed++;
				if (s->rc != 0 && (s->flags & WEFT_RESULT_F_MAYBE))
					maybe++;
				weft_buf_free(cl, s->buf);
				s->busy = false;
				inflight--;
			}
			if (!s->busy && clock_now_ms() < end) {
				bool clash = false;

				/* paced: a write starts once the bytes before it are due */
				if (rate > 0 && sent * 1000 / rate > clock_now_ms() - t0)
					continue;
				snprintf(s->name, sizeof(s->name), "t%u", (unsigned)(rnd() % names));
				/* one op per name in flight: the journal order is the apply order */
				for (unsigned int k = 0; k < qd; k++)
					clash |= k != i && slots[k].busy && !strcmp(slots[k].name, s->name);
				if (clash)
					continue;
				s->seed = rnd();
				s->size = 1 + (size_t)(rnd() % maxsize);
				s->buf = weft_buf_alloc(cl, s->size);
				if (s->buf == NULL)
					continue;
				fill(s->buf, s->size, s->seed);
				/* the intent is logged first: a crash of the writer keeps it "maybe" */
				fprintf(j, "W %s %llu %zu\n", s->name, (unsigned long long)s->seed,
					s->size);
				fflush(j);
				s->done = false;
				if (weft_aio_write_full(cl, pool, s->name, s->buf, s->size, slot_cb, s) !=
				    0) {
					weft_buf_free(cl, s->buf);
					continue;
				}
				s->busy = true;
				inflight++;
				sent += s->size;
			}
		}
		weft_poll(cl, 10);
		if (clock_now_ms() - last_report >= 5000) {
			last_report = clock_now_ms();
			printf("writer: %.0f s, %llu acknowledged, %llu failed\n",
			       (last_report - t0) / 1000.0, (unsigned long long)acked,
			       (unsigned long long)failed);
		}
	}
	fclose(j);
	printf("writer done: %llu acknowledged writes, %llu failed (%llu may have been applied), "
	       "%llu resends\n",
	       (unsigned long long)acked, (unsigned long long)failed, (unsigned long long)maybe,
	       (unsigned long long)weft_debug_resends(cl));
	free(slots);
	return acked > 0 ? 0 : 1;
}

struct cand {
	uint64_t seed;
	size_t size;
};

struct objst {
	char name[32];
	struct cand c[MAX_CAND];
	unsigned int n;
	bool acked;	 /* c[0] is an acknowledged write */
	bool maybe_none; /* never acknowledged: may not exist */
	bool absent_ok;	 /* removed (acknowledged or not) after the last acknowledged write */
};

static struct objst *obj_find(struct objst *o, unsigned int *n, const char *name)
{
	for (unsigned int i = 0; i < *n; i++)
		if (!strcmp(o[i].name, name))
			return &o[i];
	if (*n == MAX_NAMES)
		return NULL;
	memset(&o[*n], 0, sizeof(o[*n]));
	snprintf(o[*n].name, sizeof(o[*n].name), "%s", name);
	o[*n].maybe_none = true;
	return &o[(*n)++];
}

static bool matches(const struct objst *o, const uint8_t *got, size_t len, uint8_t *want)
{
	for (unsigned int i = 0; i < o->n; i++) {
		if (o->c[i].size != len)
			continue;
		fill(want, len, o->c[i].seed);
		if (memcmp(want, got, len) == 0)
			return true;
	}
	return false;
}

static int cmd_check(struct weft_cluster *cl, uint32_t pool, const char *journal,
		     unsigned int copies, bool at_least)
{
	FILE *j = fopen(journal, "r");
	struct objst *objs = calloc(MAX_NAMES, sizeof(*objs));
	size_t max = 8u << 20;
	uint8_t *got = malloc(max), *want = malloc(max), *loc = malloc(max);
	unsigned int n = 0, bad = 0, nosd = 0, acked = 0;
	char line[256], perf[8192];
	uint64_t t0 = clock_now_ms(), ncopies = 0;

	if (j == NULL || objs == NULL || got == NULL || want == NULL || loc == NULL) {
		fprintf(stderr, "FAIL: cannot read journal %s\n", journal);
		return 1;
	}
	/* per name: the last acknowledged write, plus every write issued after it */
	while (fgets(line, sizeof(line), j)) {
		char kind, name[32];
		unsigned long long seed;
		size_t size;
		struct objst *o;

		if (sscanf(line, "%c %31s", &kind, name) == 2 && (kind == 'D' || kind == 'R')) {
			int rrc = 0;

			o = obj_find(objs, &n, name);
			if (o == NULL)
				break;
			o->absent_ok = true; /* a removal issued: gone, or any later write */
			if (kind == 'R' && sscanf(line, "%c %31s %d", &kind, name, &rrc) == 3 &&
			    rrc == 0) {
				o->n = 0; /* acknowledged: only writes issued after it may be there */
				o->acked = true;
			}
			continue;
		}
		if (sscanf(line, "%c %31s %llu %zu", &kind, name, &seed, &size) != 4)
			continue;
		o = obj_find(objs, &n, name);
		if (o == NULL)
			break;
		if (kind == 'A') {
			o->c[0] = (struct cand){seed, size};
			o->n = 1;
			o->acked = true;
			o->maybe_none = false;
			o->absent_ok = false;
			acked++;
		} else if (kind == 'W' && o->n < MAX_CAND) {
			o->c[o->n++] = (struct cand){seed, size};
		}
	}
	fclose(j);
	while (nosd < 64 && weft_debug_osd_perf(cl, nosd, perf, sizeof(perf)) == 0)
		nosd++;
	printf("checking %u objects (%u acknowledged writes in the journal) on %u OSDs\n", n,
	       acked, nosd);
	for (unsigned int i = 0; i < n; i++) {
		struct objst *o = &objs[i];
		size_t len = 0, rmax = 1;
		unsigned int have = 0;
		int rc;

		/* one byte more than the largest candidate shows a longer object; a read
		 * larger than the cluster's osd_max_op_size is refused (-E2BIG): then exactly */
		for (unsigned int c = 0; c < o->n; c++)
			if (o->c[c].size + 1 > rmax)
				rmax = o->c[c].size + 1;
		if (rmax > max)
			rmax = max;
		rc = weft_read(cl, pool, o->name, got, rmax, 0, &len);
		if (rc == -E2BIG && rmax > 1) {
			rmax--;
			rc = weft_read(cl, pool, o->name, got, rmax, 0, &len);
		}

		if (rc == -ENOENT && (o->maybe_none || o->absent_ok)) {
			len = SIZE_MAX;
		} else if (rc != 0) {
			printf("FAIL: read %s: %s\n", o->name, weft_strerror(rc));
			bad++;
			continue;
		} else if (!matches(o, got, len, want)) {
			printf("FAIL: %s reads %zu bytes matching none of its %u candidate writes "
			       "(%s)\n", o->name, len, o->n, o->acked ? "last acknowledged first" :
			       "none acknowledged");
			bad++;
			continue;
		}
		for (unsigned int k = 0; k < nosd; k++) {
			size_t ll = 0;

			rc = weft_debug_read_local(cl, k, pool, o->name, loc, rmax, 0, &ll);
			if (rc == -ENOENT)
				continue;
			if (rc != 0) {
				printf("FAIL: osd.%u copy of %s: %s\n", k, o->name, weft_strerror(rc));
				bad++;
				continue;
			}
			have++;
			if (len == SIZE_MAX || ll != len || memcmp(loc, got, len) != 0) {
				printf("FAIL: osd.%u copy of %s differs from what the primary "
				       "returns (%zu vs %zu bytes)\n", k, o->name, ll,
				       len == SIZE_MAX ? 0 : len);
				bad++;
			}
		}
		ncopies += have;
		if (len != SIZE_MAX && (at_least ? have < copies : have != copies)) {
			printf("FAIL: %s has %u copies, want %s%u\n", o->name, have,
			       at_least ? "at least " : "", copies);
			bad++;
		}
	}
	printf("%s: %u objects, %llu copies compared in %.1f s, %u problems\n",
	       bad ? "FAIL" : "ok", n, (unsigned long long)ncopies,
	       (clock_now_ms() - t0) / 1000.0, bad);
	free(objs);
	free(got);
	free(want);
	free(loc);
	return bad ? 1 : 0;
}

/*
 * Remove every EVERY-th object the journal names (first appearance order),
 * journaled, 32 in flight: a remove of an object a full replica still
 * misses waits for its recovery, which waits for the space the others free.
 */
static int cmd_remove(struct weft_cluster *cl, uint32_t pool, const char *journal,
		      unsigned int every)
{
	FILE *j = fopen(journal, "r+");
	char (*names)[32] = calloc(MAX_NAMES, sizeof(*names));
	struct slot slots[32] = {0};
	unsigned int n = 0, removed = 0, bad = 0, next = 0, inflight = 0;
	char line[256];

	if (j == NULL || names == NULL || every == 0) {
		fprintf(stderr, "FAIL: cannot read journal %s\n", journal);
		return 1;
	}
	while (fgets(line, sizeof(line), j) && n < MAX_NAMES) {
		char kind, name[32];
		unsigned int k;

		if (sscanf(line, "%c %31s", &kind, name) != 2 || kind != 'W')
			continue;
		for (k = 0; k < n && strcmp(names[k], name); k++)
			;
		if (k == n)
			snprintf(names[n++], sizeof(names[0]), "%s", name);
	}
	fseek(j, 0, SEEK_END);
	while (next < n || inflight > 0) {
		for (unsigned int i = 0; i < 32; i++) {
			struct slot *s = &slots[i];

			if (s->busy && s->done) {
				int rc = s->rc == -ENOENT ? 0 : s->rc; /* gone either way */

				fprintf(j, "R %s %d\n", s->name, rc);
				fflush(j);
				if (rc == 0) {
					removed++;
				} else {
					printf("FAIL: remove %s: %s\n", s->name, weft_strerror(rc));
					bad++;
				}
				s->busy = false;
				inflight--;
			}
			if (!s->busy && next < n) {
				snprintf(s->name, sizeof(s->name), "%s", names[next]);
				next += every;
				fprintf(j, "D %s\n", s->name);
				fflush(j);
				s->done = false;
				if (weft_aio_remove(cl, pool, s->name, slot_cb, s) != 0) {
					printf("FAIL: remove %s: not queued\n", s->name);
					bad++;
					continue;
				}
				s->busy = true;
				inflight++;
			}
		}
		weft_poll(cl, 10);
	}
	fclose(j);
	printf("%s: removed %u of %u objects, %u failed\n", bad ? "FAIL" : "ok", removed, n, bad);
	free(names);
	return bad ? 1 : 0;
}

static uint8_t *read_file(const char *path, size_t *len_out)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b = malloc(8u << 20);
	size_t n = 0;

	if (f == NULL || b == NULL) {
		if (f)
			fclose(f);
		free(b);
		return NULL;
	}
	n = fread(b, 1, 8u << 20, f);
	fclose(f);
	*len_out = n;
	return b;
}

/* put NAME FILE: one write_full of the file's bytes (at most 8 MiB). */
static int cmd_put(struct weft_cluster *cl, uint32_t pool, const char *name, const char *path)
{
	size_t len;
	uint8_t *b = read_file(path, &len);
	int rc;

	if (b == NULL) {
		fprintf(stderr, "FAIL: cannot read %s\n", path);
		return 1;
	}
	rc = weft_write_full(cl, pool, name, b, len);
	free(b);
	if (rc != 0)
		fprintf(stderr, "FAIL: write %s: %s\n", name, weft_strerror(rc));
	return rc != 0;
}

/* cmp NAME FILE COPIES: the object reads as FILE, and exactly COPIES OSDs hold FILE's bytes. */
static int cmd_cmp(struct weft_cluster *cl, uint32_t pool, const char *name, const char *path,
		   unsigned int copies)
{
	size_t len, got = 0, max = 8u << 20;
	uint8_t *want = read_file(path, &len), *buf = malloc(max);
	unsigned int have = 0, nosd = 0;
	char perf[8192];
	int rc, bad = 0;

	if (want == NULL || buf == NULL) {
		fprintf(stderr, "FAIL: cannot read %s\n", path);
		return 1;
	}
	rc = weft_read(cl, pool, name, buf, max, 0, &got);
	if (rc != 0 || got != len || memcmp(buf, want, len) != 0) {
		printf("FAIL: %s reads wrong (%s, %zu of %zu bytes)\n", name, weft_strerror(rc), got,
		       len);
		bad++;
	}
	while (nosd < 64 && weft_debug_osd_perf(cl, nosd, perf, sizeof(perf)) == 0)
		nosd++;
	for (unsigned int k = 0; k < nosd; k++) {
		rc = weft_debug_read_local(cl, k, pool, name, buf, max, 0, &got);
		if (rc == -ENOENT)
			continue;
		if (rc != 0 || got != len || memcmp(buf, want, len) != 0) {
			printf("osd.%u copy of %s: %s\n", k, name,
			       rc ? weft_strerror(rc) : "differs");
			continue;
		}
		have++;
	}
	if (have != copies) {
		printf("FAIL: %u good copies of %s, want %u\n", have, name, copies);
		bad++;
	}
	if (!bad)
		printf("ok: %s reads right, %u good copies\n", name, have);
	free(want);
	free(buf);
	return bad != 0;
}

/*
 * findmark FILE MARK: print every offset of MARK in FILE (an OSD's block
 * file), reading only its data (SEEK_DATA skips the holes of a sparse file).
 */
static int cmd_findmark(const char *path, const char *mark)
{
	int fd = open(path, O_RDONLY);
	size_t ml = strlen(mark), chunk = 1u << 20;
	char *buf = malloc(chunk + ml);
	off_t pos = 0, end;
	int found = 0;

	if (fd < 0 || buf == NULL || ml == 0 || ml > 256) {
		fprintf(stderr, "FAIL: cannot scan %s\n", path);
		return 1;
	}
	end = lseek(fd, 0, SEEK_END);
	while (pos < end) {
		off_t data = lseek(fd, pos, SEEK_DATA);
		ssize_t n;

		if (data < 0)
			break;
		n = pread(fd, buf, chunk + ml - 1, data);
		if (n <= 0)
			break;
		for (ssize_t i = 0; i + (ssize_t)ml <= n; i++)
			if (buf[i] == mark[0] && !memcmp(buf + i, mark, ml) && i < (ssize_t)chunk) {
				printf("%lld\n", (long long)(data + i));
				found++;
			}
		pos = data + (off_t)chunk;
	}
	close(fd);
	free(buf);
	return found ? 0 : 1;
}

int main(int argc, char **argv)
{
	const char *conf = NULL, *poolname = "rbd";
	struct weft_cluster *cl;
	uint32_t pool;
	int i = 1, rc;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-c"))
			conf = argv[i + 1];
		else if (!strcmp(argv[i], "-p"))
			poolname = argv[i + 1];
	}
	if (i >= argc || !strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
		printf("usage: test_recovery_io -c CONF -p POOL writer SECS SEED JOURNAL [QD NAMES "
		       "MAXSIZE [RATE]]\n       test_recovery_io -c CONF -p POOL check JOURNAL "
		       "COPIES\n");
		return i >= argc ? 2 : 0;
	}
	if (!strcmp(argv[i], "findmark") && i + 2 < argc)
		return cmd_findmark(argv[i + 1], argv[i + 2]);
	rc = weft_connect(conf, "client.admin", &cl);
	if (rc != 0) {
		fprintf(stderr, "FAIL: connect: %s\n", weft_strerror(rc));
		return 1;
	}
	if (weft_pool_lookup(cl, poolname, &pool) != 0) {
		fprintf(stderr, "FAIL: no pool %s\n", poolname);
		weft_disconnect(cl);
		return 1;
	}
	if (!strcmp(argv[i], "writer") && i + 3 < argc) {
		unsigned int qd = i + 4 < argc ? (unsigned int)atoi(argv[i + 4]) : 8;
		unsigned int names = i + 5 < argc ? (unsigned int)atoi(argv[i + 5]) : 400;
		size_t maxsz = i + 6 < argc ? (size_t)atol(argv[i + 6]) : 65536;
		long long rate = i + 7 < argc ? atoll(argv[i + 7]) : 0;

		if (qd < 1 || qd > 256 || names < 1 || names > MAX_NAMES || maxsz < 1 ||
		    maxsz > (8u << 20) || rate < 0) {
			fprintf(stderr, "FAIL: bad writer arguments\n");
			rc = 2;
		} else {
			rc =
			    cmd_writer(cl, pool, atof(argv[i + 1]), strtoull(argv[i + 2], NULL, 10),
				       argv[i + 3], qd, names, maxsz, (uint64_t)rate);
		}
	} else if (!strcmp(argv[i], "remove") && i + 2 < argc) {
		rc = cmd_remove(cl, pool, argv[i + 1], (unsigned int)atoi(argv[i + 2]));
	} else if (!strcmp(argv[i], "put") && i + 2 < argc) {
		rc = cmd_put(cl, pool, argv[i + 1], argv[i + 2]);
	} else if (!strcmp(argv[i], "cmp") && i + 3 < argc) {
		rc = cmd_cmp(cl, pool, argv[i + 1], argv[i + 2], (unsigned int)atoi(argv[i + 3]));
	} else if (!strcmp(argv[i], "locate") && i + 2 < argc) {
		uint32_t pg_num = (uint32_t)atoi(argv[i + 2]);

		rc = pg_num ? 0 : 2;
		if (rc == 0)
			printf("%u.%x\n", pool, plc_object_pg(argv[i + 1], strlen(argv[i + 1]), pg_num));
	} else if (!strcmp(argv[i], "check") && i + 2 < argc) {
		/* COPIES "N+": at least N (strays of an undersized PG stay until it is clean) */
		rc = cmd_check(cl, pool, argv[i + 1], (unsigned int)atoi(argv[i + 2]),
			       strchr(argv[i + 2], '+') != NULL);
	} else {
		fprintf(stderr, "usage error (see --help)\n");
		rc = 2;
	}
	weft_disconnect(cl);
	return rc;
}
