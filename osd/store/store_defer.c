/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Deferred small writes (docs/store.md, "Data path"). A write below
 * osd_store_large_write is durable once its WAL record is: the record
 * carries the unit images, and replay writes them again. Its data-area
 * write is not part of the commit, so it waits here, in memory, and goes
 * out with others as one batch of io_uring writes (physically adjacent
 * units merged into one request) once osd_store_defer_batch bytes have
 * gathered, and at every checkpoint, which must find all of them on the
 * device before it syncs the data device and trims the WAL (rule 3).
 *
 * Why: writing each small write's units at submit cost one more block
 * request per write and, on a fallocated file, an unwritten-extent
 * conversion that the next WAL barrier then had to journal (issue 16).
 *
 * The images are copied into their transaction's WAL record straight from
 * here (the body leaves their place unwritten: one copy of each small
 * write fewer), so a transaction's images join the queue only once its
 * record is built (store_batch_write), or when it fails without one.
 *
 * Until a unit's write has completed, store_pread() serves it from here,
 * so no read waits for a deferred write. A unit is never rewritten while
 * its image waits: writes are copy-on-write into new units and freed units
 * come back only at a checkpoint, after this queue was written out.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "osd/store/bufcache.h"
#include "osd/store/store_int.h"

#define DEFER_HASH    (1u << 14)
#define DEFER_IOV_MAX 64u
#define DEFER_REQ_MAX (1u << 20) /* bytes per merged request */

struct defer_unit {
	struct defer_unit *hnext;
	uint64_t unit; /* physical unit */
	struct store_defer *d;
	uint64_t boff; /* its image in d->buf */
};

struct store_defer {
	struct store_defer *next; /* txc->defer while its tx is built, then st->defer_q */
	uint8_t *buf;		  /* bufcache, nunits * unit: the unit images */
	size_t buflen;
	size_t body_off; /* where the images go in its transaction's body (WAL record) */
	uint64_t nunits;
	unsigned int pending; /* its requests in flight */
	struct defer_unit units[];
};

/* One merged write: up to DEFER_IOV_MAX runs, adjacent on the device. */
struct defer_req {
	uint64_t id; /* issue order: a checkpoint waits for the ones issued before it */
	unsigned int n;
	size_t len;
	struct store_defer *ds[DEFER_IOV_MAX];
	struct iovec iov[DEFER_IOV_MAX];
};

static unsigned int defer_slot(uint64_t unit)
{
	return (unsigned int)((unit * 0x9e3779b97f4a7c15ull) >> 50) & (DEFER_HASH - 1);
}

static void defer_unhash(struct store *st, struct store_defer *d)
{
	for (uint64_t i = 0; i < d->nunits; i++) {
		struct defer_unit **pp = &st->defer_hash[defer_slot(d->units[i].unit)];

		while (*pp && *pp != &d->units[i])
			pp = &(*pp)->hnext;
		if (*pp)
			*pp = d->units[i].hnext;
	}
}

static void defer_free(struct store *st, struct store_defer *d)
{
	defer_unhash(st, d);
	st->defer_bytes -= d->buflen;
	bufcache_put(d->buf, d->buflen);
	free(d);
}

int store_defer_add(struct store *st, struct store_txc *txc, void *buf, size_t buflen,
		    const struct alloc_run *runs, unsigned int nruns, size_t body_off)
{
	uint64_t n = buflen / st->sb.unit, k = 0;
	struct store_defer *d;

	if (!st->defer_hash) {
		st->defer_hash = calloc(DEFER_HASH, sizeof(*st->defer_hash));
		if (!st->defer_hash)
			return -ENOMEM;
	}
	d = malloc(sizeof(*d) + n * sizeof(d->units[0]));
	if (!d)
		return -ENOMEM;
	*d = (struct store_defer){.buf = buf, .buflen = buflen, .body_off = body_off, .nunits = n};
	for (unsigned int i = 0; i < nruns; i++) {
		for (uint64_t u = 0; u < runs[i].len && k < n; u++, k++) {
			struct defer_unit *du = &d->units[k];
			unsigned int s = defer_slot(runs[i].start + u);

			*du = (struct defer_unit){st->defer_hash[s], runs[i].start + u, d,
						  k * st->sb.unit};
			st->defer_hash[s] = du;
		}
	}
	d->nunits = k;
	st->defer_bytes += buflen;
	d->next = txc->defer;
	txc->defer = d;
	return 0;
}

void store_defer_cancel(struct store *st, struct store_txc *txc)
{
	while (txc->defer) {
		struct store_defer *d = txc->defer;

		txc->defer = d->next;
		defer_free(st, d);
	}
}

void store_defer_splice(const struct store *st, const struct store_txc *txc, uint8_t *dst)
{
	size_t end = txc->blen;

	(void)st;
	/* txc->defer is newest first: the images from the body's end backwards */
	for (const struct store_defer *d = txc->defer; d; d = d->next) {
		size_t img_end = d->body_off + d->buflen;

		assert(img_end <= end);
		memcpy(dst + img_end, txc->body + img_end, end - img_end);
		memcpy(dst + d->body_off, d->buf, d->buflen);
		end = d->body_off;
	}
	memcpy(dst, txc->body, end);
}

void store_defer_publish(struct store *st, struct store_txc *txc)
{
	/* txc->defer is newest first: append oldest first, so the queue follows submit order */
	struct store_defer *rev = NULL;

	while (txc->defer) {
		struct store_defer *d = txc->defer;

		txc->defer = d->next;
		d->next = rev;
		rev = d;
	}
	while (rev) {
		struct store_defer *d = rev;

		rev = d->next;
		d->next = NULL;
		if (st->defer_q_tail)
			st->defer_q_tail->next = d;
		else
			st->defer_q = d;
		st->defer_q_tail = d;
		st->defer_q_bytes += d->buflen;
	}
	if (st->defer_q_bytes >= st->opts.defer_batch)
		store_defer_issue(st);
}

/* r's members already count it in their pending; on failure they give it back. */
static int defer_req_submit(struct store *st, struct defer_req *r, uint64_t unit0)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&st->ring);

	if (!sqe) {
		io_uring_submit(&st->ring);
		sqe = io_uring_get_sqe(&st->ring);
	}
	if (!sqe)
		return -EBUSY;
	io_uring_prep_writev(sqe, st->data_fd, r->iov, r->n,
			     st->sb.data_base + unit0 * st->sb.unit);
	r->id = ++st->defer_ids;
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)r | STORE_TAG_DEFER);
	st->defer_inflight++;
	st->info.data_write_bytes += r->len;
	st->info.defer_requests++;
	return 0;
}

/* A request that never went out: its members stay readable (the store has failed). */
static void defer_req_drop(struct store *st, struct defer_req *r)
{
	for (unsigned int i = 0; r && i < r->n; i++) {
		struct store_defer *d = r->ds[i];

		if (--d->pending == 0) {
			d->next = st->defer_dead;
			st->defer_dead = d;
		}
	}
	free(r);
}

/* Write every queued image: runs that continue the previous one on the device share a request. */
void store_defer_issue(struct store *st)
{
	struct defer_req *r = NULL;
	uint64_t unit0 = 0, next = 0;
	int rc = 0;

	while (st->defer_q && rc == 0) {
		struct store_defer *d = st->defer_q;

		st->defer_q = d->next;
		if (!st->defer_q)
			st->defer_q_tail = NULL;
		d->next = NULL;
		st->defer_q_bytes -= d->buflen;
		assert(d->nunits > 0);
		for (uint64_t k = 0; k < d->nunits && rc == 0;) {
			uint64_t u = d->units[k].unit, n = 1;

			while (k + n < d->nunits && d->units[k + n].unit == u + n)
				n++;
			if (r && (u != next || r->n == DEFER_IOV_MAX ||
				  r->len + n * st->sb.unit > DEFER_REQ_MAX)) {
				rc = defer_req_submit(st, r, unit0);
				if (rc != 0)
					break;
				r = NULL;
			}
			if (!r) {
				r = calloc(1, sizeof(*r));
				if (!r) {
					rc = -ENOMEM;
					break;
				}
				unit0 = u;
			}
			r->ds[r->n] = d;
			r->iov[r->n].iov_base = d->buf + d->units[k].boff;
			r->iov[r->n].iov_len = n * st->sb.unit;
			r->len += n * st->sb.unit;
			r->n++;
			d->pending++;
			next = u + n;
			k += n;
		}
		if (d->pending == 0) { /* failed before any of it was queued */
			d->next = st->defer_dead;
			st->defer_dead = d;
		}
	}
	if (rc == 0 && r) {
		rc = defer_req_submit(st, r, unit0);
		if (rc == 0)
			r = NULL;
	}
	if (rc != 0) {
		defer_req_drop(st, r);
		store_fail(st, rc, "deferred data write");
	}
	io_uring_submit(&st->ring);
}

void store_defer_done(struct store *st, uint64_t tag, int res)
{
	struct defer_req *r = (struct defer_req *)(uintptr_t)(tag & ~STORE_TAG_MASK);

	if (res < 0 || (size_t)res != r->len)
		store_fail(st, res < 0 ? res : -EIO, "deferred data write");
	st->defer_inflight--;
	store_ckpt_defer_done(st, r->id);
	/* on failure the images stay: reads keep getting the data, nothing more is written */
	for (unsigned int i = 0; i < r->n; i++) {
		struct store_defer *d = r->ds[i];

		if (--d->pending > 0)
			continue;
		if (!st->failed) {
			defer_free(st, d);
		} else {
			d->next = st->defer_dead;
			st->defer_dead = d;
		}
	}
	free(r);
}

void store_defer_fini(struct store *st)
{
	while (st->defer_inflight > 0 && store_reap(st, true) >= 0)
		;
	while (st->defer_q) {
		struct store_defer *d = st->defer_q;

		st->defer_q = d->next;
		defer_free(st, d);
	}
	while (st->defer_dead) {
		struct store_defer *d = st->defer_dead;

		st->defer_dead = d->next;
		defer_free(st, d);
	}
	st->defer_q_tail = NULL;
	st->defer_q_bytes = 0;
	free(st->defer_hash);
	st->defer_hash = NULL;
}

/* The image of physical unit u while its deferred write has not completed, or NULL. */
const uint8_t *store_defer_image(const struct store *st, uint64_t u)
{
	struct defer_unit *du;

	if (!st->defer_hash || st->defer_bytes == 0)
		return NULL;
	for (du = st->defer_hash[defer_slot(u)]; du; du = du->hnext)
		if (du->unit == u)
			return du->d->buf + du->boff;
	return NULL;
}

/* Lay the images of deferred units over [off, off+len) of the data area just read (or not). */
bool store_defer_overlay(struct store *st, void *buf, size_t len, uint64_t off, bool *all_out)
{
	uint64_t unit = st->sb.unit, u0, u1;
	bool any = false, all = true;

	*all_out = false;
	if (!st->defer_hash || st->defer_bytes == 0 || off < st->sb.data_base)
		return false;
	u0 = (off - st->sb.data_base) / unit;
	u1 = (off - st->sb.data_base + len + unit - 1) / unit;
	for (uint64_t u = u0; u < u1; u++) {
		struct defer_unit *du = st->defer_hash[defer_slot(u)];
		uint64_t ustart = st->sb.data_base + u * unit, a, b;

		while (du && du->unit != u)
			du = du->hnext;
		if (!du) {
			all = false;
			continue;
		}
		a = ustart > off ? ustart : off;
		b = ustart + unit < off + len ? ustart + unit : off + len;
		memcpy((uint8_t *)buf + (a - off), du->d->buf + du->boff + (a - ustart), b - a);
		any = true;
	}
	*all_out = all;
	return any;
}
