/* SPDX-License-Identifier: Apache-2.0 */
/*
 * thrash_io: the client of the thrash test (scripts/thrash.sh, docs/reliability.md).
 *
 *   thrash_io -c CONF -p POOL writer SECS SEED JOURNAL [QD NAMES]
 *       Overwrites NAMES objects (4 KiB mostly, 1 MiB one time in six) and
 *       removes one now and then, QD ops in flight, one op per name at a
 *       time, until SECS have passed (or SIGTERM/SIGINT). One op in five
 *       is a read instead, checked at once: it must give the last
 *       acknowledged write of the name or one issued after it that failed
 *       (it may have happened), or nothing where one of those was a remove;
 *       anything older is a stale read, printed and counted, and the writer
 *       then exits 1. Reads are not journalled. Every payload
 *       describes itself (a header with the write's sequence number, name,
 *       size, seed and the body's crc32c), so a copy found anywhere tells
 *       which write it is. Every intent, acknowledgement and failure goes to
 *       JOURNAL before the next op is queued ("W seq name op size seed t",
 *       "A seq t", "U seq rc t"). Ends with one JSON line: acked, failed,
 *       longest_stall_ms (the longest time without an acknowledgement while
 *       ops were in flight), max_latency_ms, reads (checked), read_errors
 *       (reads that failed, as ops do during failures) and stale_reads.
 *   thrash_io -c CONF -p POOL check JOURNAL COPIES
 *       For every name in the journal: the primary must serve the last
 *       acknowledged op's result or that of an op issued after it (which may
 *       or may not have happened); then every OSD's own copy is read: exactly
 *       COPIES hold the object, each identical to what the primary serves
 *       (none when it is absent). One line per problem saying which write
 *       each copy holds, then one JSON line: objects, acked, lost, divergent,
 *       copies.
 *
 * Exit status: 0 ok, 1 a problem found, 2 bad usage or set-up.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_debug.h"
#include "common/clock.h"
#include "common/crc32c.h"
#include "weft/weft.h"

#define TH_MAGIC 0x31485457u /* "WTH1" */
#define TH_HDR	 64u
#define TH_NAME	 24u
#define TH_SMALL 4096u
#define TH_LARGE (1u << 20)
#define TH_MAX_NAMES 100000u

struct th_hdr {
	uint32_t magic;
	uint32_t crc; /* crc32c of the body (everything after the header) */
	uint64_t seq;
	uint64_t size;
	uint64_t seed;
	char name[TH_NAME];
};

static volatile sig_atomic_t th_stop;

static void th_on_signal(int sig)
{
	(void)sig;
	th_stop = 1;
}

static uint64_t th_rng = 88172645463325252ull;

static uint64_t th_rnd(void)
{
	th_rng ^= th_rng << 13;
	th_rng ^= th_rng >> 7;
	th_rng ^= th_rng << 17;
	return th_rng;
}

static void th_fill(uint8_t *p, size_t len, uint64_t seq, uint64_t seed, const char *name)
{
	struct th_hdr h = {.magic = TH_MAGIC, .seq = seq, .size = len, .seed = seed};
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;

	snprintf(h.name, sizeof(h.name), "%s", name);
	for (size_t i = TH_HDR; i < len; i++) {
		if ((i & 7) == 0) {
			s ^= s << 13;
			s ^= s >> 7;
			s ^= s << 17;
		}
		p[i] = (uint8_t)(s >> ((i & 7) * 8));
	}
	h.crc = crc32c(0, p + TH_HDR, len - TH_HDR);
	memset(p, 0, TH_HDR);
	memcpy(p, &h, sizeof(h));
}

/* A payload's header when the payload is whole and intact; else -EBADMSG. */
static int th_decode(const uint8_t *p, size_t len, struct th_hdr *h_out)
{
	struct th_hdr h;

	if (len < TH_HDR)
		return -EBADMSG;
	memcpy(&h, p, sizeof(h));
	if (h.magic != TH_MAGIC || h.size != len || crc32c(0, p + TH_HDR, len - TH_HDR) != h.crc)
		return -EBADMSG;
	h.name[TH_NAME - 1] = '\0';
	*h_out = h;
	return 0;
}

/* ---------------------------------------------------------------- writer */

struct th_slot {
	bool busy, done;
	int rc;
	bool remove, read;
	char name[TH_NAME];
	uint64_t seq, start_ms, len;
	uint8_t *buf;
};

/* What a read of a name may give (one op per name at a time, so nothing races it). */
struct th_name {
	uint64_t acked;	  /* seq of the last acknowledged op, 0 if none */
	bool acked_rm;	  /* that op was a remove */
	bool rm_since;	  /* a remove failed after it: it may have happened */
	uint64_t failed0; /* the first failed write after it (0 if none): from it on, valid */
};

static void th_slot_cb(const struct weft_result *res, void *arg)
{
	struct th_slot *s = arg;

	s->rc = res->rc;
	s->len = res->length;
	s->done = true;
}

/* Op seq on name n ended: acknowledged (rc 0) or not (it may have happened). */
static void th_name_done(struct th_name *n, uint64_t seq, bool remove, int rc)
{
	if (rc == 0) {
		n->acked = seq;
		n->acked_rm = remove;
		n->rm_since = false;
		n->failed0 = 0;
	} else if (remove) {
		n->rm_since = true;
	} else if (n->failed0 == 0) {
		n->failed0 = seq;
	}
}

/*
 * What earlier runs into the same journal left (thrash.sh runs a writer per
 * cycle): per name, replayed in journal order; an op with no answer may
 * have happened, like a failed one.
 */
static void th_names_seed(const char *journal, struct th_name *nm, unsigned int names)
{
	FILE *r = fopen(journal, "r");
	struct {
		uint64_t seq;
		bool remove;
	} *pend = calloc(names, sizeof(*pend));
	unsigned int *of = NULL;
	uint64_t maxseq = 0, s;
	char line[256], name[TH_NAME], op;
	int rc;

	if (r == NULL || pend == NULL)
		goto out;
	while (fgets(line, sizeof(line), r))
		if (sscanf(line, "W %" SCNu64, &s) == 1 && s > maxseq)
			maxseq = s;
	of = calloc(maxseq + 1, sizeof(*of));
	if (of == NULL)
		goto out;
	rewind(r);
	while (fgets(line, sizeof(line), r)) {
		unsigned long idx;

		if (sscanf(line, "W %" SCNu64 " %23s %c", &s, name, &op) == 3 && s <= maxseq) {
			idx = strtoul(name + 2, NULL, 10);
			if (strncmp(name, "th", 2) != 0 || idx >= names)
				continue;
			of[s] = (unsigned int)idx + 1;
			if (pend[idx].seq != 0)
				th_name_done(&nm[idx], pend[idx].seq, pend[idx].remove, -EIO);
			pend[idx].seq = s;
			pend[idx].remove = op == 'r';
		} else if ((sscanf(line, "A %" SCNu64, &s) == 1 && (rc = 0, 1)) ||
			   (sscanf(line, "U %" SCNu64 " %d", &s, &rc) == 2)) {
			if (s > maxseq || of[s] == 0 || pend[of[s] - 1].seq != s)
				continue;
			idx = of[s] - 1;
			th_name_done(&nm[idx], s, pend[idx].remove, rc == 0 ? 0 : -EIO);
			pend[idx].seq = 0;
		}
	}
	for (unsigned int i = 0; i < names; i++)
		if (pend[i].seq != 0)
			th_name_done(&nm[i], pend[i].seq, pend[i].remove, -EIO);
out:
	if (r != NULL)
		fclose(r);
	free(pend);
	free(of);
}

/* A finished read of s->name against what the journal allows; false if stale. */
static bool th_read_ok(const struct th_slot *s, const struct th_name *n)
{
	struct th_hdr h;

	if (s->rc == -ENOENT)
		return n->acked == 0 || n->acked_rm || n->rm_since;
	if (th_decode(s->buf, s->len, &h) != 0 || strcmp(h.name, s->name) != 0) {
		fprintf(stderr, "STALE: read of %s gave %llu bytes that are no write of it\n",
			s->name, (unsigned long long)s->len);
		return false;
	}
	if ((h.seq == n->acked && !n->acked_rm) || (n->failed0 != 0 && h.seq >= n->failed0))
		return true;
	fprintf(stderr,
		"STALE: read of %s gave write %llu; the last acknowledged op is %llu%s\n",
		s->name, (unsigned long long)h.seq, (unsigned long long)n->acked,
		n->acked_rm ? " (a remove)" : "");
	return false;
}

static int th_writer(struct weft_cluster *cl, uint32_t pool, double secs, uint64_t seed,
		     const char *journal, unsigned int qd, unsigned int names)
{
	FILE *j = fopen(journal, "a");
	struct th_slot *slots = calloc(qd, sizeof(*slots));
	uint64_t t0 = clock_now_ms(), end = t0 + (uint64_t)(secs * 1000), seq = 0;
	uint64_t acked = 0, failed = 0, last_ack = t0, stall = 0, max_lat = 0, last_report = t0;
	uint64_t reads = 0, read_errors = 0, stale = 0;
	struct th_name *nm = calloc(names, sizeof(*nm));
	unsigned int inflight = 0;

	if (qd == 0 || names == 0 || names > TH_MAX_NAMES) {
		fprintf(stderr, "thrash_io: QD and NAMES must be 1 or more (NAMES at most %u)\n",
			TH_MAX_NAMES);
		return 2;
	}
	if (j == NULL || slots == NULL || nm == NULL) {
		fprintf(stderr, "thrash_io: cannot open journal %s\n", journal);
		return 2;
	}
	signal(SIGTERM, th_on_signal);
	signal(SIGINT, th_on_signal);
	th_rng ^= seed * 0x2545f4914f6cdd1dull;
	th_names_seed(journal, nm, names);
	/* sequence numbers go on from an earlier run into the same journal */
	{
		FILE *r = fopen(journal, "r");
		char line[256];
		unsigned long long s;

		while (r != NULL && fgets(line, sizeof(line), r))
			if (sscanf(line, "W %llu", &s) == 1 && s > seq)
				seq = s;
		if (r != NULL)
			fclose(r);
	}
	while ((clock_now_ms() < end && !th_stop) || inflight > 0) {
		uint64_t now = clock_now_ms();

		for (unsigned int i = 0; i < qd; i++) {
			struct th_slot *s = &slots[i];
			bool clash = false;
			size_t size;
			uint64_t wseed;

			if (s->busy && s->done && s->read) {
				struct th_name *n = &nm[strtoul(s->name + 2, NULL, 10)];

				if (s->rc != 0 && s->rc != -ENOENT)
					read_errors++;
				else if (th_read_ok(s, n))
					reads++;
				else
					stale++;
				weft_buf_free(cl, s->buf);
				s->buf = NULL;
				s->busy = false;
				inflight--;
			}
			if (s->busy && s->done) {
				uint64_t lat = now - s->start_ms;
				th_name_done(&nm[strtoul(s->name + 2, NULL, 10)], s->seq, s->remove,
					     s->rc);
				if (s->rc == 0)
					fprintf(j, "A %llu %llu\n", (unsigned long long)s->seq,
						(unsigned long long)(now - t0));
				else
					fprintf(j, "U %llu %d %llu\n", (unsigned long long)s->seq,
						s->rc, (unsigned long long)(now - t0));
				fflush(j);
				if (s->rc == 0) {
					acked++;
					if (now - last_ack > stall)
						stall = now - last_ack;
					last_ack = now;
				} else {
					failed++;
				}
				if (lat > max_lat)
					max_lat = lat;
				if (s->buf)
					weft_buf_free(cl, s->buf);
				s->buf = NULL;
				s->busy = false;
				inflight--;
			}
			if (s->busy || now >= end || th_stop)
				continue;
			snprintf(s->name, sizeof(s->name), "th%05u", (unsigned)(th_rnd() % names));
			for (unsigned int k = 0; k < qd; k++)
				clash |= k != i && slots[k].busy && !strcmp(slots[k].name, s->name);
			if (clash)
				continue;
			s->read = th_rnd() % 5 == 0;
			if (s->read) {
				s->buf = weft_buf_alloc(cl, TH_LARGE);
				s->done = false;
				if (s->buf == NULL ||
				    weft_aio_read(cl, pool, s->name, s->buf, TH_LARGE, 0, th_slot_cb,
						  s) != 0) {
					if (s->buf)
						weft_buf_free(cl, s->buf);
					s->buf = NULL;
					continue;
				}
				s->busy = true;
				inflight++;
				continue;
			}
			s->remove = th_rnd() % 12 == 0;
			size = th_rnd() % 6 == 0 ? TH_LARGE : TH_SMALL;
			wseed = th_rnd();
			s->seq = ++seq;
			s->done = false;
			s->start_ms = now;
			if (inflight == 0)
				last_ack = now; /* a stall is time without progress while ops wait */
			fprintf(j, "W %llu %s %c %zu %llu %llu\n", (unsigned long long)s->seq,
				s->name, s->remove ? 'r' : 'w', s->remove ? (size_t)0 : size,
				(unsigned long long)wseed, (unsigned long long)(now - t0));
			fflush(j);
			if (s->remove) {
				if (weft_aio_remove(cl, pool, s->name, th_slot_cb, s) != 0)
					goto refused;
			} else {
				s->buf = weft_buf_alloc(cl, size);
				if (s->buf == NULL)
					goto refused;
				th_fill(s->buf, size, s->seq, wseed, s->name);
				if (weft_aio_write_full(cl, pool, s->name, s->buf, size, th_slot_cb,
							s) != 0)
					goto refused;
			}
			s->busy = true;
			inflight++;
			continue;
refused:
			/* never sent: the journal says so, it can never have happened */
			fprintf(j, "U %llu %d %llu\n", (unsigned long long)s->seq, -ECANCELED,
				(unsigned long long)(now - t0));
			fflush(j);
			if (s->buf)
				weft_buf_free(cl, s->buf);
			s->buf = NULL;
		}
		weft_poll(cl, 5);
		if (clock_now_ms() - last_report >= 10000) {
			last_report = clock_now_ms();
			printf("writer: %.0f s, %llu acknowledged, %llu failed, longest stall %llu ms\n",
			       (last_report - t0) / 1000.0, (unsigned long long)acked,
			       (unsigned long long)failed, (unsigned long long)stall);
		}
	}
	fclose(j);
	printf("{\"acked\": %llu, \"failed\": %llu, \"resends\": %llu, \"longest_stall_ms\": %llu, "
	       "\"max_latency_ms\": %llu, \"seconds\": %.1f, \"reads\": %llu, "
	       "\"read_errors\": %llu, \"stale_reads\": %llu}\n",
	       (unsigned long long)acked, (unsigned long long)failed,
	       (unsigned long long)weft_debug_resends(cl), (unsigned long long)stall,
	       (unsigned long long)max_lat, (clock_now_ms() - t0) / 1000.0,
	       (unsigned long long)reads, (unsigned long long)read_errors,
	       (unsigned long long)stale);
	free(slots);
	free(nm);
	return acked > 0 && stale == 0 ? 0 : 1;
}

/* ---------------------------------------------------------------- checker */

struct th_op {
	uint64_t seq;
	bool remove;
	char state; /* 'A' acknowledged, 'U' failed, 'W' no answer */
};

struct th_obj {
	char name[TH_NAME];
	struct th_op *ops;
	unsigned int n, cap;
};

struct th_journal {
	struct th_obj *objs;
	unsigned int n;
	struct th_op **byseq; /* seq -> op */
	uint64_t maxseq;
	uint64_t acked;
};

static struct th_obj *th_obj_get(struct th_journal *jn, const char *name)
{
	for (unsigned int i = 0; i < jn->n; i++)
		if (!strcmp(jn->objs[i].name, name))
			return &jn->objs[i];
	if (jn->n == TH_MAX_NAMES)
		return NULL;
	snprintf(jn->objs[jn->n].name, TH_NAME, "%s", name);
	return &jn->objs[jn->n++];
}

static void th_journal_free(struct th_journal *jn)
{
	for (unsigned int i = 0; jn->objs != NULL && i < jn->n; i++)
		free(jn->objs[i].ops);
	free(jn->objs);
	free(jn->byseq);
}

static int th_journal_read(const char *path, struct th_journal *jn)
{
	FILE *f = fopen(path, "r");
	char line[256];

	if (f == NULL)
		return -errno;
	jn->objs = calloc(TH_MAX_NAMES, sizeof(*jn->objs));
	if (jn->objs == NULL) {
		fclose(f);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long seq;
		char name[TH_NAME], op;

		if (sscanf(line, "W %llu %23s %c", &seq, name, &op) == 3 && seq > jn->maxseq)
			jn->maxseq = seq;
	}
	jn->byseq = calloc(jn->maxseq + 1, sizeof(*jn->byseq));
	rewind(f);
	while (jn->byseq != NULL && fgets(line, sizeof(line), f)) {
		unsigned long long seq;
		char name[TH_NAME], op;
		struct th_obj *o;

		if (sscanf(line, "W %llu %23s %c", &seq, name, &op) == 3) {
			o = th_obj_get(jn, name);
			if (o == NULL)
				break;
			if (o->n == o->cap) {
				unsigned int cap = o->cap ? o->cap * 2 : 8;
				struct th_op *n = realloc(o->ops, cap * sizeof(*n));

				if (n == NULL)
					break;
				o->ops = n;
				o->cap = cap;
				/* the index points into the array: rebuild it for this object */
				for (unsigned int k = 0; k < o->n; k++)
					jn->byseq[o->ops[k].seq] = &o->ops[k];
			}
			o->ops[o->n] = (struct th_op){seq, op == 'r', 'W'};
			jn->byseq[seq] = &o->ops[o->n++];
		} else if ((line[0] == 'A' || line[0] == 'U') &&
			   sscanf(line + 2, "%llu", &seq) == 1 && seq <= jn->maxseq &&
			   jn->byseq[seq] != NULL) {
			jn->byseq[seq]->state = line[0];
			jn->acked += line[0] == 'A';
		}
	}
	fclose(f);
	return jn->byseq == NULL ? -ENOMEM : 0;
}

/* Index of the object's last acknowledged op, -1 when none was. */
static int th_last_acked(const struct th_obj *o)
{
	for (int i = (int)o->n - 1; i >= 0; i--)
		if (o->ops[i].state == 'A')
			return i;
	return -1;
}

/*
 * May the object be in state `seq` (0 = absent)? The last acknowledged op's
 * result, or any op issued after it; with no acknowledged op, also absent.
 */
static bool th_acceptable(const struct th_obj *o, uint64_t seq)
{
	int a = th_last_acked(o);

	if (a < 0 && seq == 0)
		return true;
	for (unsigned int i = a < 0 ? 0 : (unsigned int)a; i < o->n; i++) {
		if (o->ops[i].remove ? seq == 0 : o->ops[i].seq == seq)
			return true;
	}
	return false;
}

/* "write #123 (acknowledged, 2 ops before the last acknowledged one)" */
static void th_describe(const struct th_obj *o, uint64_t seq, char *buf, size_t cap)
{
	int a = th_last_acked(o);

	if (seq == 0) {
		snprintf(buf, cap, "nothing (absent)");
		return;
	}
	for (unsigned int i = 0; i < o->n; i++) {
		if (o->ops[i].seq != seq)
			continue;
		snprintf(buf, cap, "write #%llu (%s, op %u of %u, last acknowledged op %d)",
			 (unsigned long long)seq,
			 o->ops[i].state == 'A'	  ? "acknowledged"
			 : o->ops[i].state == 'U' ? "failed"
						  : "unanswered",
			 i + 1, o->n, a + 1);
		return;
	}
	snprintf(buf, cap, "write #%llu, which is not an op on this object", (unsigned long long)seq);
}

static int th_check(struct weft_cluster *cl, uint32_t pool, const char *journal,
		    unsigned int copies)
{
	struct th_journal jn = {0};
	uint8_t *got = malloc(TH_LARGE), *loc = malloc(TH_LARGE);
	unsigned int nosd = 0, lost = 0, divergent = 0, unreadable = 0;
	uint64_t ncopies = 0, t0 = clock_now_ms();
	char perf[8192], d1[160], d2[160];
	int rc;

	if (got == NULL || loc == NULL)
		return 2;
	rc = th_journal_read(journal, &jn);
	if (rc != 0) {
		fprintf(stderr, "thrash_io: journal %s: %s\n", journal, strerror(-rc));
		th_journal_free(&jn);
		free(got);
		free(loc);
		return 2;
	}
	while (nosd < 64 && weft_debug_osd_perf(cl, nosd, perf, sizeof(perf)) == 0)
		nosd++;
	printf("checking %u objects (%llu acknowledged ops) on %u OSDs\n", jn.n,
	       (unsigned long long)jn.acked, nosd);
	for (unsigned int i = 0; i < jn.n; i++) {
		struct th_obj *o = &jn.objs[i];
		struct th_hdr h;
		size_t len = 0;
		uint64_t pseq = 0;
		unsigned int have = 0;
		bool bad_copy = false;

		rc = weft_read(cl, pool, o->name, got, TH_LARGE, 0, &len);
		if (rc == 0 && th_decode(got, len, &h) == 0 && !strcmp(h.name, o->name)) {
			pseq = h.seq;
		} else if (rc != -ENOENT) {
			printf("FAIL: %s: the primary's answer is %s\n", o->name,
			       rc ? weft_strerror(rc) : "not an intact payload of this object");
			unreadable++;
			continue;
		}
		if (!th_acceptable(o, pseq)) {
			th_describe(o, pseq, d1, sizeof(d1));
			printf("FAIL: LOST: %s: the primary serves %s\n", o->name, d1);
			lost++;
		}
		for (unsigned int k = 0; k < nosd; k++) {
			size_t ll = 0;

			rc = weft_debug_read_local(cl, k, pool, o->name, loc, TH_LARGE, 0, &ll);
			if (rc == -ENOENT)
				continue;
			if (rc != 0) {
				printf("FAIL: osd.%u's copy of %s: %s\n", k, o->name,
				       weft_strerror(rc));
				bad_copy = true;
				continue;
			}
			have++;
			if (pseq != 0 && ll == len && !memcmp(loc, got, len))
				continue;
			th_describe(o, th_decode(loc, ll, &h) == 0 ? h.seq : UINT64_MAX, d1,
				    sizeof(d1));
			th_describe(o, pseq, d2, sizeof(d2));
			printf("FAIL: osd.%u holds %s of %s, the primary serves %s\n", k, d1,
			       o->name, d2);
			bad_copy = true;
		}
		ncopies += have;
		if (pseq != 0 && have != copies) {
			printf("FAIL: %s has %u copies, want %u\n", o->name, have, copies);
			bad_copy = true;
		}
		divergent += bad_copy;
	}
	printf("{\"objects\": %u, \"acked\": %llu, \"lost\": %u, \"divergent\": %u, "
	       "\"unreadable\": %u, \"copies\": %llu, \"check_seconds\": %.1f}\n",
	       jn.n, (unsigned long long)jn.acked, lost, divergent, unreadable,
	       (unsigned long long)ncopies, (clock_now_ms() - t0) / 1000.0);
	th_journal_free(&jn);
	free(got);
	free(loc);
	return lost || divergent || unreadable ? 1 : 0;
}

static int th_usage(void)
{
	fprintf(stderr, "usage: thrash_io -c CONF -p POOL writer SECS SEED JOURNAL [QD NAMES]\n"
			"       thrash_io -c CONF -p POOL check JOURNAL COPIES\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *conf = NULL, *pool_name = NULL;
	struct weft_cluster *cl;
	uint32_t pool;
	int i = 1, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-c"))
			conf = argv[i + 1];
		else if (!strcmp(argv[i], "-p"))
			pool_name = argv[i + 1];
		else
			return th_usage();
	}
	if (i < argc && !strcmp(argv[i], "--help")) {
		th_usage();
		return 0;
	}
	if (conf == NULL || pool_name == NULL || i >= argc)
		return th_usage();
	rc = weft_connect(conf, "client.admin", &cl);
	if (rc != 0) {
		fprintf(stderr, "thrash_io: connect: %s\n", weft_strerror(rc));
		return 2;
	}
	rc = weft_pool_lookup(cl, pool_name, &pool);
	if (rc != 0) {
		fprintf(stderr, "thrash_io: pool %s: %s\n", pool_name, weft_strerror(rc));
		weft_disconnect(cl);
		return 2;
	}
	if (!strcmp(argv[i], "writer") && argc - i >= 4)
		rc = th_writer(cl, pool, atof(argv[i + 1]), strtoull(argv[i + 2], NULL, 0),
			       argv[i + 3], argc - i > 4 ? (unsigned)atoi(argv[i + 4]) : 8,
			       argc - i > 5 ? (unsigned)atoi(argv[i + 5]) : 900);
	else if (!strcmp(argv[i], "check") && argc - i == 3)
		rc = th_check(cl, pool, argv[i + 1], (unsigned)atoi(argv[i + 2]));
	else
		rc = th_usage();
	weft_disconnect(cl);
	return rc;
}
