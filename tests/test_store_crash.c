/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Crash consistency. A child process (fork + exec of this binary, so ASan
 * starts clean) runs random transactions against the real store on real
 * files and writes the id of every acknowledged one to a pipe. The parent
 * SIGKILLs it at a random moment, remounts, and checks that the store equals
 * the model after some prefix of the submitted transactions that contains
 * every acknowledged one (data, sizes, attributes, PG log), then fsck --deep.
 * In half the cycles the child holds large writes' data until their WAL
 * record is written (the store's test hook) and may kill itself right there.
 * Each cycle picks a WAL sync mode and a depth (batches in flight) at random.
 *
 *   test_store_crash [--cycles N] [--seed S]     (WEFT_STORE_CRASH_CYCLES overrides)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "store_test_util.h"

#define NOBJ   6
#define MAXOBJ (640u << 10) /* three shards of the extent map (256 KiB each) */
#define QD     8
#define LOGPG  9

static const char *names[NOBJ] = {"alpha", "beta", "gamma", "delta", "eps", "zeta"};

struct mobj {
	bool exists, has_attr;
	uint64_t size, attr;
	uint8_t *data;
};

struct model {
	struct mobj o[NOBJ];
};

enum { OP_WRITE, OP_ZERO, OP_TRUNC, OP_REMOVE };

struct gop {
	int kind, obj;
	uint64_t off, len;
};

struct gtx {
	int nops;
	struct gop ops[2];
};

static uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Transaction id -> ops, the same in child and parent. */
static void gen(uint64_t seed, uint64_t id, struct gtx *t)
{
	uint64_t s = (seed * 0x9e3779b97f4a7c15ull) ^ (id * 0xbf58476d1ce4e5b9ull) ^ 1;

	for (int i = 0; i < 4; i++)
		rnd_next(&s);
	t->nops = 1 + (int)(rnd_next(&s) % 2);
	for (int i = 0; i < t->nops; i++) {
		struct gop *g = &t->ops[i];
		unsigned int r = (unsigned int)(rnd_next(&s) % 100);

		g->obj = (int)(rnd_next(&s) % NOBJ);
		if (r < 60) {
			g->kind = OP_WRITE;
			g->len = r < 45 ? 1 + rnd_next(&s) % 16384 : 65536 + rnd_next(&s) % 131072;
			g->off = rnd_next(&s) % (MAXOBJ - g->len);
			if (r % 3 == 0)
				g->off &= ~4095ull;
		} else if (r < 75) {
			g->kind = OP_ZERO;
			g->len = 1 + rnd_next(&s) % 40000;
			g->off = rnd_next(&s) % (MAXOBJ - g->len);
		} else if (r < 92) {
			g->kind = OP_TRUNC;
			g->off = rnd_next(&s) % MAXOBJ;
		} else {
			g->kind = OP_REMOVE;
		}
	}
}

static void pattern(uint8_t *b, uint64_t len, uint64_t id, uint64_t off)
{
	for (uint64_t i = 0; i < len; i++)
		b[i] = (uint8_t)((id * 251) ^ ((off + i) * 13) ^ ((off + i) >> 8));
}

static void model_apply(struct model *m, uint64_t seed, uint64_t id)
{
	struct gtx t;
	int last = -1;

	gen(seed, id, &t);
	for (int i = 0; i < t.nops; i++) {
		struct gop *g = &t.ops[i];
		struct mobj *o = &m->o[g->obj];

		switch (g->kind) {
		case OP_WRITE:
		case OP_ZERO:
			if (!o->exists) {
				o->exists = true;
				o->size = 0;
				memset(o->data, 0, MAXOBJ);
			}
			if (g->kind == OP_WRITE)
				pattern(o->data + g->off, g->len, id, g->off);
			else
				memset(o->data + g->off, 0, g->len);
			if (g->off + g->len > o->size)
				o->size = g->off + g->len;
			last = g->obj;
			break;
		case OP_TRUNC:
			if (!o->exists) {
				o->exists = true;
				o->size = 0;
				memset(o->data, 0, MAXOBJ);
			}
			if (g->off < o->size)
				memset(o->data + g->off, 0, o->size - g->off);
			o->size = g->off;
			last = g->obj;
			break;
		case OP_REMOVE:
			o->exists = false;
			o->has_attr = false;
			o->size = 0;
			if (last == g->obj)
				last = -1;
			break;
		}
	}
	if (last >= 0) {
		m->o[last].has_attr = true;
		m->o[last].attr = id;
	}
}

static struct store_tx *build_tx(uint64_t seed, uint64_t id)
{
	struct store_tx *tx;
	uint8_t *buf = malloc(MAXOBJ);
	struct gtx t;
	int last = -1;

	gen(seed, id, &t);
	if (store_tx_create(&tx) != 0)
		abort();
	for (int i = 0; i < t.nops; i++) {
		struct gop *g = &t.ops[i];
		int rc = 0;

		if (g->kind == OP_WRITE) {
			pattern(buf, g->len, id, g->off);
			rc = store_tx_write(tx, 1 + g->obj % 2, names[g->obj], g->off, g->len, buf);
		} else if (g->kind == OP_ZERO) {
			rc = store_tx_zero(tx, 1 + g->obj % 2, names[g->obj], g->off, g->len);
		} else if (g->kind == OP_TRUNC) {
			rc = store_tx_truncate(tx, 1 + g->obj % 2, names[g->obj], g->off);
		} else {
			rc = store_tx_remove(tx, 1 + g->obj % 2, names[g->obj]);
		}
		if (rc)
			abort();
		last = g->kind == OP_REMOVE ? (last == g->obj ? -1 : last) : g->obj;
	}
	/* the version in the record follows the attribute: both say id */
	if (last >= 0 && (store_tx_setattr(tx, 1 + last % 2, names[last], "v", &id, 8) != 0 ||
			  store_tx_set_version(tx, 1 + last % 2, names[last], id) != 0))
		abort();
	if (store_tx_pglog_append(tx, LOGPG, id, &id, 8) != 0)
		abort();
	free(buf);
	return tx;
}

/* ---- child ---- */

#define HOOK_MARK UINT64_MAX /* on the ack pipe: the child killed itself at the hook */

static int ack_fd;
static int inflight;
static uint64_t hook_countdown;

/*
 * Test hook of the store: a batch's WAL record is written, the out-of-line
 * data of its large writes is not (held back). Die here on the N-th such batch.
 */
static void child_wal_written_cb(void *arg)
{
	uint64_t mark = HOOK_MARK;

	(void)arg;
	if (--hook_countdown > 0)
		return;
	if (write(ack_fd, &mark, 8) != 8)
		_exit(5);
	kill(getpid(), SIGKILL);
}

static void child_cb(void *arg, int rc)
{
	uint64_t id = (uint64_t)(uintptr_t)arg;

	if (rc != 0) {
		fprintf(stderr, "child: tx %llu failed: %d\n", (unsigned long long)id, rc);
		_exit(4);
	}
	if (write(ack_fd, &id, 8) != 8)
		_exit(5);
	inflight--;
}

static int child_main(const char *dir, uint64_t seed, uint64_t base, uint64_t hook, uint64_t mode)
{
	static const enum store_sync syncs[] = {STORE_SYNC_THREAD, STORE_SYNC_URING,
						STORE_SYNC_DSYNC, STORE_SYNC_INLINE};
	struct stu u;
	struct store *st;

	stu_init(&u, (seed & 1) != 0);
	u.o.sync = syncs[mode % 4];
	u.o.wal_depth = 1 + (uint32_t)(mode / 4) % 4;
	if (hook) {
		hook_countdown = hook;
		u.o.test_wal_written_cb = child_wal_written_cb;
	}
	rmdir(u.dir);
	snprintf(u.dir, sizeof(u.dir), "%s", dir);
	snprintf(u.data, sizeof(u.data), "%s/data", dir);
	snprintf(u.wal, sizeof(u.wal), "%s/wal", dir);
	snprintf(u.db, sizeof(u.db), "%s/db", dir);
	weft_log_open("crash-child", WEFT_LOG_WARN, NULL);
	if (store_mount(&u.o, &st) != 0)
		return 3;
	for (uint64_t id = base;; id++) {
		struct store_tx *tx = build_tx(seed, id);

		while (inflight >= QD)
			if (store_wait(st) < 0)
				return 6;
		if (store_tx_submit(st, tx, child_cb, (void *)(uintptr_t)id) != 0)
			return 7;
		inflight++;
		store_poll(st);
	}
}

/* ---- parent ---- */

static int model_matches(const struct model *m, uint8_t *const got[NOBJ],
			 const struct store_stat *stats, const int *srcs, const uint64_t *attrs,
			 const int *arcs)
{
	for (int i = 0; i < NOBJ; i++) {
		const struct mobj *o = &m->o[i];

		if (!o->exists) {
			if (srcs[i] != -ENOENT)
				return 0;
			continue;
		}
		if (srcs[i] != 0 || stats[i].size != o->size ||
		    memcmp(got[i], o->data, o->size) != 0)
			return 0;
		if (o->has_attr != (arcs[i] == 0) || (o->has_attr && attrs[i] != o->attr))
			return 0;
		/* set with the attribute, forgotten by a remove like it */
		if (stats[i].uversion != (o->has_attr ? o->attr : 0))
			return 0;
	}
	return 1;
}

struct logscan {
	uint64_t n, max;
	bool bad;
};

static int log_cb(void *arg, uint64_t seq, const void *e, size_t len)
{
	struct logscan *l = arg;
	uint64_t v;

	memcpy(&v, e, 8);
	if (len != 8 || v != seq)
		l->bad = true;
	l->n++;
	l->max = seq;
	return 0;
}

static void model_copy(struct model *d, const struct model *s)
{
	for (int i = 0; i < NOBJ; i++) {
		uint8_t *keep = d->o[i].data;

		d->o[i] = s->o[i];
		d->o[i].data = keep;
		memcpy(keep, s->o[i].data, MAXOBJ);
	}
}

int main(int argc, char **argv)
{
	uint64_t seed = (uint64_t)time(NULL), base = 1, cycles = 200, total_acked = 0, replayed = 0;
	uint64_t hook_cycles = 0, hook_kills = 0, torn_data = 0;
	struct model m, cand;
	struct stu u;
	uint8_t *got[NOBJ];
	uint64_t t0 = (uint64_t)time(NULL);

	if (argc == 7 && strcmp(argv[1], "--child") == 0) {
		ack_fd = 3;
		return child_main(argv[2], strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0),
				  strtoull(argv[5], NULL, 0), strtoull(argv[6], NULL, 0));
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cycles") && i + 1 < argc)
			cycles = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: %s [--cycles N] [--seed S]\n", argv[0]);
			return 2;
		}
	}
	if (getenv("WEFT_STORE_CRASH_CYCLES"))
		cycles = strtoull(getenv("WEFT_STORE_CRASH_CYCLES"), NULL, 0);
	weft_log_open("crash-parent", WEFT_LOG_WARN, NULL);
	printf("crash test: seed %llu, %llu cycles (WAL sync mode and depth drawn per cycle)\n",
	       (unsigned long long)seed, (unsigned long long)cycles);
	stu_init(&u, (seed & 1) != 0);
	if (store_mkfs(&u.o) != 0)
		return 1;
	for (int i = 0; i < NOBJ; i++) {
		m.o[i] = (struct mobj){0};
		cand.o[i] = (struct mobj){0};
		m.o[i].data = calloc(1, MAXOBJ);
		cand.o[i].data = calloc(1, MAXOBJ);
		got[i] = malloc(MAXOBJ);
	}
	srand((unsigned int)seed);
	for (uint64_t c = 0; c < cycles; c++) {
		int p[2], status;
		pid_t pid;
		uint64_t acked = base - 1, id, k, matched = 0;
		struct store *st;
		struct store_stat stats[NOBJ];
		struct store_fsck_report rep;
		struct logscan ls = {0};
		int srcs[NOBJ], arcs[NOBJ];
		uint64_t attrs[NOBJ];
		char a1[32], a2[32], a3[32], a4[32];
		/* Half the cycles hold large writes' data until their record is written and
		 * may die right there, on the 1st..6th such batch. */
		uint64_t hook = rand() % 2 ? 1 + (uint64_t)(rand() % 6) : 0;
		/* WAL sync mode (mode % 4: thread, uring, dsync, inline) and depth 1 + mode / 4 */
		uint64_t mode = (uint64_t)(rand() % 16);
		bool hooked = false;

		if (hook && mode % 4 == 3)
			mode -= 3; /* inline sync holds no data back: the hook never fires */

		if (pipe(p) != 0)
			return 1;
		pid = fork();
		if (pid == 0) {
			dup2(p[1], 3);
			snprintf(a1, sizeof(a1), "%llu", (unsigned long long)seed);
			snprintf(a2, sizeof(a2), "%llu", (unsigned long long)base);
			snprintf(a3, sizeof(a3), "%llu", (unsigned long long)hook);
			snprintf(a4, sizeof(a4), "%llu", (unsigned long long)mode);
			execl("/proc/self/exe", argv[0], "--child", u.dir, a1, a2, a3, a4,
			      (char *)NULL);
			_exit(127);
		}
		close(p[1]);
		if (hook) {
			/* Give it up to 2 s to reach its hook (it dies there, or is killed). */
			pid_t w = 0;

			for (int t = 0; t < 200 && (w = waitpid(pid, &status, WNOHANG)) == 0; t++)
				usleep(10000);
			if (w == 0) {
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
			}
		} else {
			usleep((useconds_t)(rand() % 400000));
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
		if (!WIFSIGNALED(status)) {
			fprintf(stderr, "cycle %llu: child exited with %d before the kill\n",
				(unsigned long long)c, WEXITSTATUS(status));
			return 1;
		}
		while (read(p[0], &id, 8) == 8) {
			if (id == HOOK_MARK) {
				hooked = true;
				continue;
			}
			if (id != acked + 1) {
				fprintf(stderr, "acks out of order: %llu after %llu\n",
					(unsigned long long)id, (unsigned long long)acked);
				return 1;
			}
			acked = id;
		}
		close(p[0]);
		total_acked += acked - (base - 1);
		if (store_mount(&u.o, &st) != 0) {
			fprintf(stderr, "cycle %llu: remount failed\n", (unsigned long long)c);
			return 1;
		}
		{
			struct store_info info;

			store_info_get(st, &info);
			replayed += info.replayed_tx;
			hook_cycles += hook != 0;
			hook_kills += hooked;
			torn_data += info.replay_dropped_data;
		}
		for (int i = 0; i < NOBJ; i++) {
			uint64_t n;
			size_t al;

			srcs[i] = store_stat(st, 1 + i % 2, names[i], &stats[i]);
			if (srcs[i] == 0)
				srcs[i] =
				    store_read(st, 1 + i % 2, names[i], 0, MAXOBJ, got[i], &n);
			arcs[i] = store_getattr(st, 1 + i % 2, names[i], "v", &attrs[i], 8, &al);
		}
		if (store_pglog_read(st, LOGPG, 0, log_cb, &ls) != 0 || ls.bad)
			return 1;
		/* The state must be the model after some k in [acked, acked + QD]. */
		model_copy(&cand, &m);
		for (id = base; id <= acked; id++)
			model_apply(&cand, seed, id);
		for (k = acked; k <= acked + QD; k++) {
			if (k > acked)
				model_apply(&cand, seed, k);
			if (ls.n == k && ls.max == k &&
			    model_matches(&cand, got, stats, srcs, attrs, arcs)) {
				matched = 1;
				break;
			}
		}
		if (!matched) {
			fprintf(
			    stderr,
			    "cycle %llu (seed %llu): store matches no prefix of "
			    "transactions %llu..%llu (acked up to %llu; pglog has %llu entries, "
			    "max %llu)\n",
			    (unsigned long long)c, (unsigned long long)seed,
			    (unsigned long long)base, (unsigned long long)acked + QD,
			    (unsigned long long)acked, (unsigned long long)ls.n,
			    (unsigned long long)ls.max);
			for (int i = 0; i < NOBJ; i++)
				fprintf(stderr, "  %s: rc %d size %llu\n", names[i], srcs[i],
					(unsigned long long)(srcs[i] == 0 ? stats[i].size : 0));
			return 1;
		}
		if (store_fsck(st, true, &rep) != 0) {
			fprintf(stderr, "cycle %llu: fsck not clean\n", (unsigned long long)c);
			return 1;
		}
		store_umount(st);
		model_copy(&m, &cand);
		base = k + 1;
		if ((c + 1) % 50 == 0)
			printf("  %llu cycles, %llu transactions acknowledged and verified, %llu "
			       "replayed from the WAL, %llu deaths between a large write's record "
			       "and its data, %llu torn tails dropped for missing data, %llus\n",
			       (unsigned long long)c + 1, (unsigned long long)total_acked,
			       (unsigned long long)replayed, (unsigned long long)hook_kills,
			       (unsigned long long)torn_data,
			       (unsigned long long)((uint64_t)time(NULL) - t0));
	}
	/* Every such death leaves a record without its data; replay must drop it (old
	 * unit content that happens to equal the new data is legal, hence not 100%). */
	if (torn_data * 10 < hook_kills * 9) {
		fprintf(stderr,
			"%llu deaths with a large write's record written and its data not, "
			"but replay dropped only %llu tails for missing data\n",
			(unsigned long long)hook_kills, (unsigned long long)torn_data);
		return 1;
	}
	printf("crash test passed: %llu cycles, %llu acknowledged transactions verified, %llu "
	       "replayed from the WAL; %llu cycles held large-write data until the record, %llu "
	       "died there, %llu torn tails dropped for missing data\n",
	       (unsigned long long)cycles, (unsigned long long)total_acked,
	       (unsigned long long)replayed, (unsigned long long)hook_cycles,
	       (unsigned long long)hook_kills, (unsigned long long)torn_data);
	for (int i = 0; i < NOBJ; i++) {
		free(m.o[i].data);
		free(cand.o[i].data);
		free(got[i]);
	}
	stu_cleanup(&u);
	return 0;
}
