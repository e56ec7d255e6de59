/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft store-bench: the OSD store against the raw limits of the same device,
 * in one run. Raw: QD1 4 KiB write+fdatasync, QD32 4 KiB O_DIRECT io_uring
 * writes, sequential 4 MiB O_DIRECT writes (and at QD16 with an fdatasync
 * per 16: the durable ceiling at the store phase's depth). Store: durable 4 KiB transactions
 * at QD1 and QD32 and 4 MiB writes, then the ratios the store is held to.
 *
 * --compare MODE:DEPTH,...: instead, one store and one raw file, and in each
 * of --rounds rounds the raw QD1 durable write, then for every WAL sync mode
 * and depth listed a mount, 4 KiB transactions at QD1 and QD32, umount;
 * medians over the rounds (a shared machine's noise spreads over all modes
 * alike). Also how long the caller spent inside store calls (the reactor's
 * time the store takes) and the 99.9th percentile of one call (what blocks it).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/histogram.h"
#include "common/log.h"
#include "osd/store/store.h"
#include "tools/cli.h"

struct sb_args {
	const char *dir;
	double secs;
	enum store_sync sync;
	uint32_t depth;
	uint64_t file_size;
	const char *compare; /* MODE:DEPTH list, or NULL */
	int rounds;
};

static void sb_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: weft store-bench [--dir DIR] [--seconds S] [--wal-sync MODE] [--wal-depth N]\n"
	    "                        [--compare MODE:DEPTH,... [--rounds R]]\n"
	    "  Measures raw device limits, then the OSD store, on files in DIR (default\n"
	    "  /var/tmp); needs about 5 GiB free. Prints the store/raw ratios.\n"
	    "  MODE: auto, uring, dsync, thread or inline (osd_store_wal_sync); N: 1..16\n"
	    "  (osd_store_wal_depth). --compare: 4 KiB QD1 and QD32 of each MODE:DEPTH,\n"
	    "  interleaved over R rounds (default 3) with the raw durable write; medians.\n");
}

static void *sb_buf(size_t n)
{
	void *p;

	if (posix_memalign(&p, 4096, n) != 0)
		return NULL;
	memset(p, 0xa5, n);
	return p;
}

static int sb_file(const char *dir, const char *name, uint64_t size, char *path, size_t plen)
{
	int fd;

	snprintf(path, plen, "%s/%s", dir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_DIRECT, 0600);
	if (fd < 0) {
		fprintf(stderr, "store-bench: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fallocate(fd, 0, 0, (off_t)size) != 0) {
		fprintf(stderr, "store-bench: fallocate %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Write the whole file once, like a raw device: writes into unwritten
 * (fallocated) file extents make every fdatasync commit the filesystem
 * journal, which is a property of files-as-devices, not of the device.
 */
static int sb_precondition(int fd, uint64_t size)
{
	void *b = sb_buf(4 << 20);
	int rc = 0;

	for (uint64_t off = 0; off < size && rc == 0; off += 4 << 20)
		if (pwrite(fd, b, 4 << 20, (off_t)off) != 4 << 20)
			rc = -errno;
	if (rc == 0 && fdatasync(fd) != 0)
		rc = -errno;
	free(b);
	return rc;
}

/* Raw QD1: 4 KiB pwrite + fdatasync over a pre-written region. */
static int raw_qd1(int fd, double secs, struct hist *h, double *iops)
{
	void *b = sb_buf(4096);
	uint64_t start = clock_now_ns(), end = start + (uint64_t)(secs * 1e9), n = 0;

	for (int i = 0; i < 4096; i++) /* make the extents written, like the store's WAL */
		if (pwrite(fd, b, 4096, (off_t)i * 4096) != 4096)
			return -errno;
	fdatasync(fd);
	start = clock_now_ns();
	while (clock_now_ns() < end || n < 100) {
		uint64_t t = clock_now_ns();

		if (pwrite(fd, b, 4096, (off_t)(n % 4096) * 4096) != 4096 || fdatasync(fd) != 0)
			return -errno;
		hist_record(h, clock_now_ns() - t);
		n++;
	}
	*iops = (double)n / ((double)(clock_now_ns() - start) / 1e9);
	free(b);
	return 0;
}

/* Raw QD32: random 4 KiB O_DIRECT writes through io_uring, busy-polled. */
static int raw_qd32(int fd, double secs, uint64_t span, double *iops)
{
	struct io_uring ring;
	void *b = sb_buf(4096 * 32);
	uint64_t start, end, n = 0, seed = 88172645463325252ull;
	int inflight = 0;

	if (io_uring_queue_init(64, &ring, 0) != 0)
		return -EIO;
	/* Overwrite written space: unwritten-extent conversion is filesystem work, not device. */
	for (uint64_t off = 0; off < span; off += 4096 * 32)
		if (pwrite(fd, b, 4096 * 32, (off_t)off) != 4096 * 32)
			return -errno;
	fdatasync(fd);
	start = clock_now_ns();
	end = start + (uint64_t)(secs * 1e9);
	while (clock_now_ns() < end || inflight) {
		struct io_uring_cqe *cqe;

		while (inflight < 32 && clock_now_ns() < end) {
			struct io_uring_sqe *s = io_uring_get_sqe(&ring);

			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			io_uring_prep_write(s, fd, (char *)b + 4096 * inflight, 4096,
					    (seed % (span / 4096)) * 4096);
			inflight++;
		}
		io_uring_submit(&ring);
		while (io_uring_peek_cqe(&ring, &cqe) == 0) {
			if (cqe->res != 4096)
				return -EIO;
			io_uring_cqe_seen(&ring, cqe);
			inflight--;
			n++;
		}
	}
	*iops = (double)n / ((double)(clock_now_ns() - start) / 1e9);
	io_uring_queue_exit(&ring);
	free(b);
	return 0;
}

/* Raw sequential 4 MiB O_DIRECT writes (QD1) over written space, then one fdatasync. */
static int raw_seq(int fd, double secs, uint64_t span, double *mbs)
{
	void *b = sb_buf(4 << 20);
	uint64_t start = clock_now_ns(), end = start + (uint64_t)(secs * 1e9), n = 0;

	while (clock_now_ns() < end) {
		if (pwrite(fd, b, 4 << 20, (off_t)((n * (4ull << 20)) % span)) != 4 << 20)
			return -errno;
		n++;
	}
	fdatasync(fd);
	*mbs = (double)n * 4.0 * 1048576 / 1e6 / ((double)(clock_now_ns() - start) / 1e9);
	free(b);
	return 0;
}

/*
 * The durable ceiling at the store phase's queue depth: 16 x 4 MiB O_DIRECT
 * writes in flight through io_uring, then one fdatasync once all 16 are done,
 * and again. Each 4 MiB must be durable before it may be acknowledged, and
 * 16 in flight cannot share a barrier with more than 16, so no store can beat
 * this at QD16; it shows how much of the gap to raw sequential is the disk's
 * barrier cost rather than the store (docs/performance.md).
 */
static int raw_seq_durable(int fd, double secs, uint64_t span, double *mbs)
{
	struct io_uring ring;
	void *b = sb_buf(4 << 20);
	uint64_t start = clock_now_ns(), end = start + (uint64_t)(secs * 1e9), n = 0;

	if (io_uring_queue_init(32, &ring, 0) != 0)
		return -EIO;
	while (clock_now_ns() < end) {
		struct io_uring_cqe *cqe;

		for (int i = 0; i < 16; i++) {
			struct io_uring_sqe *s = io_uring_get_sqe(&ring);

			io_uring_prep_write(s, fd, b, 4 << 20, ((n + i) * (4ull << 20)) % span);
		}
		io_uring_submit(&ring);
		for (int i = 0; i < 16; i++) {
			if (io_uring_wait_cqe(&ring, &cqe) != 0 || cqe->res != 4 << 20)
				goto err;
			io_uring_cqe_seen(&ring, cqe);
		}
		if (fdatasync(fd) != 0)
			goto err;
		n += 16;
	}
	*mbs = (double)n * 4.0 * 1048576 / 1e6 / ((double)(clock_now_ns() - start) / 1e9);
	io_uring_queue_exit(&ring);
	free(b);
	return 0;
err:
	io_uring_queue_exit(&ring);
	free(b);
	return -EIO;
}

struct sb_ctx {
	int inflight;
	uint64_t done;
	struct hist lat;
	uint64_t in_store_ns; /* time inside store_tx_submit and polls that completed something */
	uint64_t longest_ns;  /* the longest single call */
	struct hist calls;    /* every such call's duration */
};

static void sb_call_time(struct sb_ctx *c, uint64_t t0)
{
	uint64_t d = clock_now_ns() - t0;

	c->in_store_ns += d;
	hist_record(&c->calls, d);
	if (d > c->longest_ns)
		c->longest_ns = d;
}

struct sb_op {
	struct sb_ctx *c;
	uint64_t t0;
};

static void sb_cb(void *arg, int rc)
{
	struct sb_op *op = arg;

	if (rc != 0) {
		fprintf(stderr, "store-bench: transaction failed: %d\n", rc);
		exit(1);
	}
	hist_record(&op->c->lat, clock_now_ns() - op->t0);
	op->c->inflight--;
	op->c->done++;
	free(op);
}

/* Durable writes of len bytes at queue depth qd; busy-polls like an OSD reactor. */
static int store_phase(struct store *st, int qd, size_t len, int nobj, double secs,
		       struct sb_ctx *c, double *ops_s)
{
	void *b = sb_buf(len);
	uint64_t start = clock_now_ns(), end = start + (uint64_t)(secs * 1e9), i = 0;
	char name[32];

	memset(c, 0, sizeof(*c));
	hist_init(&c->lat);
	hist_init(&c->calls);
	while (clock_now_ns() < end || c->inflight) {
		while (c->inflight < qd && clock_now_ns() < end) {
			struct store_tx *tx;
			struct sb_op *op = malloc(sizeof(*op));
			int rc;

			snprintf(name, sizeof(name), "bench%llu", (unsigned long long)(i++ % nobj));
			if (!op || store_tx_create(&tx) != 0 ||
			    store_tx_write(tx, 1, name, 0, len, b) != 0)
				return -ENOMEM;
			op->c = c;
			op->t0 = clock_now_ns();
			rc = store_tx_submit(st, tx, sb_cb, op);
			sb_call_time(c, op->t0);
			if (rc != 0) {
				fprintf(stderr, "store-bench: submit: %s\n", strerror(-rc));
				return rc;
			}
			c->inflight++;
		}
		{
			uint64_t t0 = clock_now_ns();
			int n = store_poll(st);

			if (n < 0)
				return -EIO;
			if (n >
			    0) /* polls that found nothing are the caller's spin, not the store's */
				sb_call_time(c, t0);
		}
	}
	*ops_s = (double)c->done / ((double)(clock_now_ns() - start) / 1e9);
	free(b);
	return 0;
}

struct sb_spec {
	enum store_sync sync;
	uint32_t depth;
	double qd1_p50[100], qd1_iops[100], qd32_iops[100], qd32_p50[100];
	double qd1_call[100], qd32_call[100], longest[100], batch_tx[100];
};

static int sb_dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double sb_median(const double *v, int n)
{
	double t[100];

	memcpy(t, v, (size_t)n * sizeof(*t));
	qsort(t, (size_t)n, sizeof(*t), sb_dcmp);
	return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* --compare: every MODE:DEPTH on one store, interleaved with the raw durable write. */
static int sb_compare(const struct sb_args *a)
{
	struct sb_spec specs[16];
	double raw_p50[100], raw_iops[100];
	char path[1400], dpath[512], dbpath[600], list[256], *save = NULL;
	int nspec = 0, fd, rc;
	struct store_opts o;

	snprintf(list, sizeof(list), "%s", a->compare);
	for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		unsigned long depth = STORE_WAL_DEPTH_DEFAULT;

		if (colon) {
			*colon = 0;
			depth = strtoul(colon + 1, NULL, 10);
		}
		if (nspec == 16 || store_sync_parse(tok, &specs[nspec].sync) != 0 || depth < 1 ||
		    depth > STORE_WAL_DEPTH_MAX) {
			fprintf(stderr,
				"store-bench: --compare: '%s': want MODE:DEPTH (MODE auto, "
				"uring, dsync, thread, inline; DEPTH 1..%u), at most 16\n",
				tok, STORE_WAL_DEPTH_MAX);
			return 2;
		}
		specs[nspec++].depth = (uint32_t)depth;
	}
	printf("store-bench --compare in %s, %.1f s per phase, %d rounds\n", a->dir, a->secs,
	       a->rounds);
	fd = sb_file(a->dir, "store-bench-raw", 256ull << 20, path, sizeof(path));
	if (fd < 0 || sb_precondition(fd, 256ull << 20) != 0)
		return 1;
	snprintf(dpath, sizeof(dpath), "%s/store-bench-data", a->dir);
	snprintf(dbpath, sizeof(dbpath), "%s/store-bench-db", a->dir);
	{
		char cmd[1200];
		int dfd;

		snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", dpath, dbpath);
		if (system(cmd) != 0)
			return 1;
		dfd = sb_file(a->dir, "store-bench-data", 1ull << 30, dpath, sizeof(dpath));
		if (dfd < 0 || sb_precondition(dfd, 1ull << 30) != 0)
			return 1;
		close(dfd);
	}
	store_opts_init(&o);
	o.data_path = dpath;
	o.wal_path = "";
	o.db_path = dbpath;
	o.data_size = 1ull << 30;
	o.wal_size = 256ull << 20;
	rc = store_mkfs(&o);
	if (rc != 0) {
		fprintf(stderr, "store-bench: mkfs: %s\n", strerror(-rc));
		return 1;
	}
	for (int r = 0; r < a->rounds; r++) {
		struct hist h;

		hist_init(&h);
		if (raw_qd1(fd, a->secs, &h, &raw_iops[r]) != 0) {
			fprintf(stderr, "store-bench: raw write: %s\n", strerror(errno));
			return 1;
		}
		raw_p50[r] = (double)hist_quantile(&h, 0.5) / 1e3;
		printf("round %d: raw QD1 write+fdatasync p50 %.1f us, %.0f/s\n", r + 1, raw_p50[r],
		       raw_iops[r]);
		for (int i = 0; i < nspec; i++) {
			struct sb_spec *sp = &specs[i];
			struct store_info i0, i1;
			struct sb_ctx c1, c32;
			struct store *st;

			o.sync = sp->sync;
			o.wal_depth = sp->depth;
			rc = store_mount(&o, &st);
			if (rc != 0) {
				fprintf(stderr, "store-bench: mount: %s\n", strerror(-rc));
				return 1;
			}
			if (store_phase(st, 1, 4096, 1024, a->secs, &c1, &sp->qd1_iops[r]) != 0)
				return 1;
			store_info_get(st, &i0);
			if (store_phase(st, 32, 4096, 1024, a->secs, &c32, &sp->qd32_iops[r]) != 0)
				return 1;
			store_info_get(st, &i1);
			store_umount(st);
			sp->qd1_p50[r] = (double)hist_quantile(&c1.lat, 0.5) / 1e3;
			sp->qd32_p50[r] = (double)hist_quantile(&c32.lat, 0.5) / 1e3;
			sp->qd1_call[r] = (double)c1.in_store_ns / 1e3 / (double)c1.done;
			sp->qd32_call[r] = (double)c32.in_store_ns / 1e3 / (double)c32.done;
			sp->longest[r] = (double)(c1.longest_ns > c32.longest_ns ? c1.longest_ns
										 : c32.longest_ns) /
					 1e3;
			sp->batch_tx[r] = i1.batches > i0.batches
					      ? (double)(i1.batched_tx - i0.batched_tx) /
						    (double)(i1.batches - i0.batches)
					      : 0;
			printf(
			    "  %-6s depth %2u: QD1 p50 %6.1f us %6.0f/s  QD32 %6.0f/s (%.1f tx a "
			    "batch)  in store %.1f / %.1f us/tx, p99.9 call %.0f us\n",
			    store_sync_name(sp->sync), sp->depth, sp->qd1_p50[r], sp->qd1_iops[r],
			    sp->qd32_iops[r], sp->batch_tx[r], sp->qd1_call[r], sp->qd32_call[r],
			    sp->longest[r]);
		}
	}
	close(fd);
	unlink(path);
	{
		char cmd[1200];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", dpath, dbpath);
		if (system(cmd) != 0)
			return 1;
	}
	printf("\nmedians of %d rounds (raw QD1 durable write p50 %.1f us, %.0f/s):\n", a->rounds,
	       sb_median(raw_p50, a->rounds), sb_median(raw_iops, a->rounds));
	printf(
	    "| mode | depth | QD1 p50 us | QD1 p50 / raw | QD1 tx/s | QD32 tx/s | QD32 / raw QD1 "
	    "| tx a batch (QD32) | in store us/tx QD1, QD32 | p99.9 store call us |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	for (int i = 0; i < nspec; i++) {
		const struct sb_spec *sp = &specs[i];
		double p50 = sb_median(sp->qd1_p50, a->rounds);

		printf(
		    "| %s | %u | %.1f | %.2f | %.0f | %.0f | %.2f | %.1f | %.1f, %.1f | %.0f |\n",
		    store_sync_name(sp->sync), sp->depth, p50, p50 / sb_median(raw_p50, a->rounds),
		    sb_median(sp->qd1_iops, a->rounds), sb_median(sp->qd32_iops, a->rounds),
		    sb_median(sp->qd32_iops, a->rounds) / sb_median(raw_iops, a->rounds),
		    sb_median(sp->batch_tx, a->rounds), sb_median(sp->qd1_call, a->rounds),
		    sb_median(sp->qd32_call, a->rounds), sb_median(sp->longest, a->rounds));
	}
	return 0;
}

int cli_store_bench_main(int argc, char **argv)
{
	static const struct option lo[] = {
	    {"dir", required_argument, NULL, 'd'},	{"seconds", required_argument, NULL, 's'},
	    {"wal-sync", required_argument, NULL, 'w'}, {"wal-depth", required_argument, NULL, 'D'},
	    {"compare", required_argument, NULL, 'c'},	{"rounds", required_argument, NULL, 'r'},
	    {"help", no_argument, NULL, 'h'},		{NULL, 0, NULL, 0},
	};
	struct sb_args a = {"/var/tmp", 3.0, STORE_SYNC_AUTO, STORE_WAL_DEPTH_DEFAULT, 2ull << 30,
			    NULL,	3};
	char *end;
	struct hist raw_lat;
	struct sb_ctx c1, c32, cbig;
	double r_qd1 = 0, r_qd32 = 0, r_seq = 0, r_seq16 = 0, s_qd1 = 0, s_qd32 = 0, s_big = 0;
	char path[1400], dpath[512], dbpath[600];
	struct store_opts o;
	struct store_info info0, info1;
	struct store *st;
	int opt, fd, rc;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "d:s:w:D:c:r:h", lo, NULL)) != -1) {
		switch (opt) {
		case 'd':
			a.dir = optarg;
			break;
		case 's':
			a.secs = atof(optarg);
			break;
		case 'w':
			if (store_sync_parse(optarg, &a.sync) != 0) {
				fprintf(stderr,
					"store-bench: --wal-sync must be auto, uring, dsync, "
					"thread or inline\n");
				return 2;
			}
			break;
		case 'D':
			a.depth = (uint32_t)strtoul(optarg, &end, 10);
			if (*end || a.depth < 1 || a.depth > STORE_WAL_DEPTH_MAX) {
				fprintf(stderr, "store-bench: --wal-depth must be 1..%u\n",
					STORE_WAL_DEPTH_MAX);
				return 2;
			}
			break;
		case 'c':
			a.compare = optarg;
			break;
		case 'r':
			a.rounds = atoi(optarg);
			if (a.rounds < 1 || a.rounds > 100) {
				fprintf(stderr, "store-bench: --rounds must be 1..100\n");
				return 2;
			}
			break;
		case 'h':
			sb_usage(stdout);
			return 0;
		default:
			fprintf(stderr,
				"weft store-bench: unknown or incomplete option '%s' (see "
				"--help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (a.secs <= 0) {
		fprintf(stderr, "store-bench: --seconds must be positive\n");
		return 2;
	}
	weft_log_open("store-bench", WEFT_LOG_WARN, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (a.compare)
		return sb_compare(&a);
	printf("store-bench in %s, %.1f s per phase, wal sync %s, depth %u\n", a.dir, a.secs,
	       store_sync_name(a.sync), a.depth);
	fd = sb_file(a.dir, "store-bench-raw", a.file_size, path, sizeof(path));
	if (fd < 0)
		return 1;
	printf("preconditioning %llu MiB of raw file ...\n",
	       (unsigned long long)(a.file_size >> 20));
	if (sb_precondition(fd, a.file_size) != 0)
		goto io_err;
	hist_init(&raw_lat);
	printf("raw  QD1  4K write+fdatasync ... ");
	fflush(stdout);
	if (raw_qd1(fd, a.secs, &raw_lat, &r_qd1) != 0)
		goto io_err;
	printf("%8.0f IOPS  p50 %6.1f us  p99 %6.1f us\n", r_qd1,
	       hist_quantile(&raw_lat, 0.5) / 1e3, hist_quantile(&raw_lat, 0.99) / 1e3);
	printf("raw  QD32 4K O_DIRECT io_uring ... ");
	fflush(stdout);
	if (raw_qd32(fd, a.secs, 256ull << 20, &r_qd32) != 0)
		goto io_err;
	printf("%8.0f IOPS\n", r_qd32);
	printf("raw  seq 4M O_DIRECT ............. ");
	fflush(stdout);
	if (raw_seq(fd, a.secs, a.file_size, &r_seq) != 0)
		goto io_err;
	printf("%8.0f MB/s\n", r_seq);
	printf("raw  seq 4M QD16, fdatasync per 16 ");
	fflush(stdout);
	if (raw_seq_durable(fd, a.secs, a.file_size, &r_seq16) != 0)
		goto io_err;
	printf("%8.0f MB/s\n", r_seq16);
	close(fd);
	unlink(path);

	snprintf(dpath, sizeof(dpath), "%s/store-bench-data", a.dir);
	snprintf(dbpath, sizeof(dbpath), "%s/store-bench-db", a.dir);
	snprintf(path, sizeof(path), "rm -rf '%s' '%s'", dpath, dbpath);
	if (system(path) != 0)
		return 1;
	fd = sb_file(a.dir, "store-bench-data", a.file_size + (512ull << 20), dpath, sizeof(dpath));
	if (fd < 0 || sb_precondition(fd, a.file_size + (512ull << 20)) != 0) {
		fprintf(stderr, "store-bench: preconditioning %s failed\n", dpath);
		return 1;
	}
	close(fd);
	store_opts_init(&o);
	o.data_path = dpath;
	o.wal_path = "";
	o.db_path = dbpath;
	o.data_size = a.file_size + (512ull << 20);
	o.wal_size = 256ull << 20;
	o.sync = a.sync;
	o.wal_depth = a.depth;
	rc = store_mkfs(&o);
	if (rc == 0)
		rc = store_mount(&o, &st);
	if (rc != 0) {
		fprintf(stderr, "store-bench: store: %s\n", strerror(-rc));
		return 1;
	}
	printf("store QD1  4K durable tx ......... ");
	fflush(stdout);
	if (store_phase(st, 1, 4096, 1024, a.secs, &c1, &s_qd1) != 0)
		return 1;
	printf("%8.0f IOPS  p50 %6.1f us  p99 %6.1f us  (in store calls %.1f us/tx, longest "
	       "call %.0f us)\n",
	       s_qd1, hist_quantile(&c1.lat, 0.5) / 1e3, hist_quantile(&c1.lat, 0.99) / 1e3,
	       (double)c1.in_store_ns / 1e3 / (double)c1.done, (double)c1.longest_ns / 1e3);
	printf("store QD32 4K durable tx ......... ");
	fflush(stdout);
	if (store_phase(st, 32, 4096, 1024, a.secs, &c32, &s_qd32) != 0)
		return 1;
	printf("%8.0f IOPS  p50 %6.1f us  p99 %6.1f us  (in store calls %.1f us/tx, longest "
	       "call %.0f us)\n",
	       s_qd32, hist_quantile(&c32.lat, 0.5) / 1e3, hist_quantile(&c32.lat, 0.99) / 1e3,
	       (double)c32.in_store_ns / 1e3 / (double)c32.done, (double)c32.longest_ns / 1e3);
	/*
	 * 16 in flight, as rados bench's default for 4 MiB objects: a barrier
	 * costs the host's writeback of the batch (docs/performance.md), so a
	 * throughput test must let batches hold more than one or two writes.
	 */
	printf("store QD16 4M durable tx ......... ");
	fflush(stdout);
	store_info_get(st, &info0);
	if (store_phase(st, 16, 4u << 20, 64, a.secs, &cbig, &s_big) != 0)
		return 1;
	store_info_get(st, &info1);
	s_big = s_big * 4.0 * 1048576 / 1e6;
	printf("%8.0f MB/s  p50 %6.1f ms  (%llu tx in %llu batches)\n", s_big,
	       hist_quantile(&cbig.lat, 0.5) / 1e6,
	       (unsigned long long)(info1.batched_tx - info0.batched_tx),
	       (unsigned long long)(info1.batches - info0.batches));
	store_umount(st);
	if (system(path) != 0)
		return 1;
	printf("\nratios (acceptance):\n");
	printf("  store QD32 4K IOPS / raw QD1 fdatasync IOPS  = %5.2fx  (>= 3)   %s\n",
	       s_qd32 / r_qd1, s_qd32 / r_qd1 >= 3 ? "ok" : "MISS");
	printf("  store QD1 p50 / raw fdatasync p50            = %5.2fx  (<= 1.3) %s\n",
	       (double)hist_quantile(&c1.lat, 0.5) / (double)hist_quantile(&raw_lat, 0.5),
	       hist_quantile(&c1.lat, 0.5) <= 1.3 * hist_quantile(&raw_lat, 0.5) ? "ok" : "MISS");
	printf("  store 4M MB/s / raw sequential MB/s          = %5.2f   (>= 0.7) %s\n",
	       s_big / r_seq, s_big / r_seq >= 0.7 ? "ok" : "MISS");
	printf("  store QD32 4K IOPS / raw QD32 IOPS           = %5.2f   (info)\n",
	       s_qd32 / r_qd32);
	printf("  raw QD16 fdatasync per 16 / raw sequential   = %5.2f   (info: the disk's barrier "
	       "cost)\n",
	       r_seq16 / r_seq);
	printf(
	    "  store 4M MB/s / raw QD16 fdatasync per 16    = %5.2f   (info: the store at QD16)\n",
	    s_big / r_seq16);
	return 0;
io_err:
	fprintf(stderr, "store-bench: raw I/O on %s failed: %s\n", path, strerror(errno));
	close(fd);
	unlink(path);
	return 1;
}
