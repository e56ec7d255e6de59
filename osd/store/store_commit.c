/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The group-commit pipeline. Run-to-completion in the owner's thread: a
 * submit starts a WAL write at once when none is in flight; everything
 * submitted while one is in flight becomes the next batch (one record, one
 * barrier). io_uring carries the data writes, the WAL write and its
 * fdatasync (linked); store_poll() reaps them, applies the metadata of a
 * durable batch to RocksDB and only then fires its callbacks.
 *
 * A batch with out-of-line (large-write) data does not wait for that data
 * before writing its record: record and data are written side by side, and
 * the barrier is issued once both completed (one fdatasync when the WAL is a
 * region of the data file; on a separate WAL, the WAL's fdatasync and the
 * data device's run in parallel). A crash can therefore leave the last
 * record without its data; replay checks the last record's data against the
 * crcs it carries and drops it as the torn tail if they do not match. This
 * relies on one batch at a time: a record is only written after the barrier
 * of the one before it completed, so only the last record can be unbarriered.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/store/bufcache.h"
#include "osd/store/store_int.h"

#define STORE_TAG_FLUSH 1ull
#define STORE_TAG_WALWRITE 2ull

static struct io_uring_sqe *store_sqe(struct store *st)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&st->ring);

	if (!sqe) {
		io_uring_submit(&st->ring);
		sqe = io_uring_get_sqe(&st->ring);
	}
	return sqe;
}

void store_txc_destroy(struct store_txc *txc)
{
	while (txc->bufs) {
		struct store_buf *b = txc->bufs;

		txc->bufs = b->next;
		bufcache_put(b->p, b->len);
		free(b);
	}
	if (txc->wb)
		rocksdb_writebatch_destroy(txc->wb);
	free(txc->allocs);
	free(txc->body);
	free(txc);
}

static int store_dreq_issue(struct store *st, struct store_dreq *d)
{
	struct io_uring_sqe *sqe = store_sqe(st);

	if (!sqe)
		return -EBUSY;
	io_uring_prep_write(sqe, st->data_fd, d->buf, (unsigned int)d->len, d->off);
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)d);
	return 0;
}

static void store_dreq_done(struct store *st, struct store_dreq *d, int res);

int store_data_write(struct store *st, struct store_txc *txc, const void *buf, size_t len,
		     uint64_t unit, bool out_of_line)
{
	struct store_dreq *d = malloc(sizeof(*d));

	if (!d)
		return -ENOMEM;
	*d = (struct store_dreq){ .txc = txc, .buf = buf, .len = len,
				  .off = st->sb.data_base + unit * st->sb.unit };
	if (out_of_line && st->opts.test_wal_written_cb &&
	    st->opts.sync != STORE_SYNC_INLINE) {
		d->next = st->held;
		st->held = d;
		txc->data_held++;
	} else {
		int rc = store_dreq_issue(st, d);

		if (rc != 0) {
			free(d);
			return rc;
		}
		io_uring_submit(&st->ring);
	}
	txc->data_pending++;
	txc->data_bytes += len;
	st->inflight_data++;
	st->info.data_write_bytes += len;
	return 0;
}

/* Test hook: issue the out-of-line data writes that were held back. */
static void store_release_held(struct store *st)
{
	if (!st->held)
		return;
	while (st->held) {
		struct store_dreq *d = st->held;

		st->held = d->next;
		d->txc->data_held--;
		if (store_dreq_issue(st, d) != 0)
			store_dreq_done(st, d, -EBUSY);
	}
	io_uring_submit(&st->ring);
}

static void store_lg_remove(struct store *st, struct store_txc *txc)
{
	for (struct store_txc **pp = &st->lg_head; *pp; pp = &(*pp)->next) {
		if (*pp == txc) {
			*pp = txc->next;
			return;
		}
	}
}

static void store_dreq_done(struct store *st, struct store_dreq *d, int res)
{
	struct store_txc *txc = d->txc;

	if (res < 0 || (size_t)res != d->len)
		store_fail(st, res < 0 ? res : -EIO, "data device write");
	free(d);
	st->inflight_data--;
	if (--txc->data_pending > 0)
		return;
	if (txc->awaited) {
		txc->awaited = false;
		st->flush_data_wait--;
	}
	if (txc->committed) {
		store_lg_remove(st, txc);
		store_txc_destroy(txc);
	}
}

/* Accounting only: the commit itself happens in store_advance(), never in here. */
int store_reap(struct store *st, bool wait)
{
	struct io_uring_cqe *cqe;
	int n = 0;

	if (wait) {
		int rc = io_uring_wait_cqe(&st->ring, &cqe);

		if (rc < 0 && rc != -EINTR && rc != -EAGAIN)
			return rc;
	}
	while (io_uring_peek_cqe(&st->ring, &cqe) == 0) {
		uint64_t tag = io_uring_cqe_get_data64(cqe);
		int res = cqe->res;

		io_uring_cqe_seen(&st->ring, cqe);
		n++;
		if (tag == STORE_TAG_WALWRITE && res >= 0 && (size_t)res != st->flush_len)
			res = -EIO;
		if (tag == STORE_TAG_FLUSH || tag == STORE_TAG_WALWRITE) {
			st->flush_cqes--;
			if (res < 0 && st->flush_rc == 0)
				st->flush_rc = res;
			continue;
		}
		if (tag & STORE_TAG_DEFER_BIT)
			store_defer_done(st, tag, res);
		else
			store_dreq_done(st, (struct store_dreq *)(uintptr_t)tag, res);
	}
	return n;
}

int store_drain_data(struct store *st)
{
	store_release_held(st);
	while (st->inflight_data > 0) {
		int rc = store_reap(st, true);

		if (rc < 0)
			return rc;
	}
	return 0;
}

static void store_txc_retire(struct store *st, struct store_txc *txc)
{
	txc->committed = true;
	if (txc->data_pending == 0) {
		store_txc_destroy(txc);
	} else {
		txc->next = st->lg_head;
		st->lg_head = txc;
	}
}

/* Fail everything not yet committed (the WAL can no longer be trusted to take it). */
static int store_fail_pending(struct store *st, struct store_txc *list)
{
	int n = 0;

	while (list) {
		struct store_txc *t = list;

		list = t->next;
		if (t->cb)
			t->cb(t->arg, st->failed);
		store_txc_retire(st, t);
		n++;
	}
	return n;
}

static int store_commit_done(struct store *st)
{
	struct store_txc *list = st->fl_head;
	int n = 0, rc = st->flush_rc;

	st->fl_head = st->fl_tail = NULL;
	st->flushing = false;
	/* A failed batch can end with data still in flight: it must not count against the next. */
	for (struct store_txc *t = list; t; t = t->next)
		t->awaited = false;
	st->flush_data_wait = 0;
	st->info.commit_busy_ns += clock_now_ns() - st->flush_t0_ns;
	st->flush_sync_data = false;
	bufcache_put(st->flush_buf, st->flush_len);
	st->flush_buf = NULL;
	if (rc != 0)
		store_fail(st, rc, "wal write");
	if (st->failed) {
		n = store_fail_pending(st, list);
		list = st->q_head;
		st->q_head = st->q_tail = NULL;
		return n + store_fail_pending(st, list);
	}
	/* Metadata first, so a callback that reads or lists sees its transaction. */
	for (struct store_txc *t = list; t; t = t->next) {
		rc = kv_write(st->kv, t->wb, false);
		if (rc != 0) {
			store_fail(st, rc, "rocksdb apply");
			break;
		}
		for (unsigned int i = 0; i < t->nallocs; i++)
			store_alloc_persist_mark(st, t->allocs[i].start, t->allocs[i].len, true);
		st->committed_seq = t->seq;
		st->info.batched_tx++;
	}
	st->commit_vend = st->flush_vend;
	st->info.batches++;
	while (list) {
		struct store_txc *t = list;

		list = t->next;
		if (t->cb)
			t->cb(t->arg, st->failed);
		store_txc_retire(st, t);
		n++;
	}
	if (!st->failed && (st->vhead - st->vtail > st->sb.wal_size / 2 ||
			    st->nfrees > 65536))
		store_checkpoint(st);
	return n;
}

static void store_batch_sync(struct store *st);

static size_t store_rec_max(const struct store *st)
{
	size_t max = st->sb.wal_size / 4;

	return max > (64u << 20) ? 64u << 20 : max;
}

/* A transaction becomes a member of the batch in flight. */
static void store_batch_join(struct store *st, struct store_txc *t)
{
	if (t->has_ool && t->data_pending) {
		t->awaited = true;
		st->flush_data_wait++;
	}
	st->open_payload += wal_tx_size(t->blen);
	st->open_data += t->data_bytes;
	st->flush_ntx++;
}

/*
 * An open batch (waiting for its large writes' data, record not written)
 * takes in what was submitted since, up to osd_store_batch_data bytes of data
 * and one record: they share its barrier instead of queueing for the next.
 * Why: at 16 x 4 MiB in flight, batches alternated at ~8 transactions, twice
 * the barriers the queue depth needs; what a barrier costs depends on the
 * device (docs/store.md).
 */
static void store_batch_absorb(struct store *st)
{
	size_t max = store_rec_max(st);

	while (st->rec_open && st->q_head && st->open_data < st->opts.batch_data) {
		struct store_txc *t = st->q_head;

		if (wal_rec_size(st->open_payload + wal_tx_size(t->blen)) > max)
			break;
		st->q_head = t->next;
		if (!st->q_head)
			st->q_tail = NULL;
		t->next = NULL;
		st->fl_tail->next = t;
		st->fl_tail = t;
		store_batch_join(st, t);
	}
}

/* The batch fails without a record: store_commit_done() fails its members. */
static void store_batch_abandon(struct store *st)
{
	st->rec_open = false;
	st->flush_len = 0;
	st->flush_cqes = 0;
	st->flush_sync_data = false;
}

/* Write the closed batch's record and issue its barrier(s). */
static void store_batch_write(struct store *st)
{
	size_t rec = wal_rec_size(st->open_payload), off = 0;
	uint64_t v, phys;
	unsigned int ntx = st->flush_ntx;
	bool ool = false, same = st->wal_fd == st->data_fd, link_sync, inl;
	struct store_txc *t;

	if (st->failed) {
		store_batch_abandon(st);
		return;
	}
	for (t = st->fl_head; t; t = t->next)
		ool |= t->has_ool;
	/*
	 * Why auto: on this kind of host an io_uring fdatasync runs in an io-wq
	 * worker and costs about twice a synchronous one (docs/store.md), so a lone
	 * transaction, where nothing could overlap with the barrier anyway, is
	 * committed inline.
	 */
	inl = st->opts.sync == STORE_SYNC_INLINE ||
	      (st->opts.sync == STORE_SYNC_AUTO && ntx == 1 && !ool && !st->opts.test_wal_written_cb);
	for (int attempt = 0; attempt < 2; attempt++) {
		v = st->vhead;
		if (v % st->sb.wal_size + rec > st->sb.wal_size)
			v = (v / st->sb.wal_size + 1) * st->sb.wal_size;
		if (v + rec - st->vtail <= st->sb.wal_size)
			break;
		/* WAL full: back-pressure, not failure. Everything before is committed,
		 * so a checkpoint frees the whole log. */
		if (attempt == 1 || store_checkpoint(st) != 0) {
			store_fail(st, -ENOSPC, "wal has no room after a checkpoint");
			store_batch_abandon(st);
			return;
		}
	}
	st->flush_buf = bufcache_get(rec);
	if (!st->flush_buf) {
		store_fail(st, -ENOMEM, "wal batch buffer");
		store_batch_abandon(st);
		return;
	}
	for (t = st->fl_head; t; t = t->next)
		wal_payload_add(st->flush_buf + WAL_HDR_SIZE, &off, t->seq, t->body, t->blen);
	wal_rec_seal(st->flush_buf, st->next_lsn, ntx, st->fl_head->seq, st->open_payload,
		     st->sb.wal_nonce);
	st->rec_open = false;
	st->flush_lsn = st->next_lsn++;
	st->vhead = v + rec;
	st->flush_vend = st->vhead;
	st->info.wal_write_bytes += rec;
	st->flush_len = rec;
	phys = st->sb.wal_base + v % st->sb.wal_size;
	if (inl) {
		struct iovec iov = { st->flush_buf, rec };
		ssize_t n;

		/* Same file: one fdatasync after the record covers data and record. */
		if (ool && !same && fdatasync(st->data_fd) != 0)
			st->flush_rc = -errno;
		if (st->flush_rc == 0) {
			n = pwritev2(st->wal_fd, &iov, 1, (off_t)phys, ool && same ? 0 : RWF_DSYNC);
			if (n != (ssize_t)rec)
				st->flush_rc = n < 0 ? -errno : -EIO;
		}
		if (st->flush_rc == 0 && ool && same && fdatasync(st->data_fd) != 0)
			st->flush_rc = -errno;
		return;
	}
	/*
	 * The record goes out now: after its out-of-line data when the batch was
	 * open, else (test hook, osd_store_batch_data = 0) before or beside it.
	 * Either way the acknowledgement waits for a barrier issued after both
	 * completed, and replay checks the last record's data (docs/store.md,
	 * commit rule 1). Same file: one fdatasync, linked to the record if the
	 * data is already written, else issued by store_batch_sync() once it is.
	 * Separate WAL: record + its fdatasync now, the data device's fdatasync
	 * in parallel.
	 */
	link_sync = !ool || !same || st->flush_data_wait == 0;
	st->flush_sync_data = ool && !(same && link_sync);
	{
		struct io_uring_sqe *s = store_sqe(st);

		io_uring_prep_write(s, st->wal_fd, st->flush_buf, (unsigned int)rec, phys);
		io_uring_sqe_set_data64(s, STORE_TAG_WALWRITE);
		st->flush_cqes++;
		if (link_sync) {
			s->flags |= IOSQE_IO_LINK;
			s = store_sqe(st);
			io_uring_prep_fsync(s, st->wal_fd, IORING_FSYNC_DATASYNC);
			io_uring_sqe_set_data64(s, STORE_TAG_FLUSH);
			st->flush_cqes++;
		}
	}
	io_uring_submit(&st->ring);
	store_batch_sync(st); /* separate WAL, data already written: its barrier now */
}

/*
 * A batch stays open while it waits for out-of-line data and may grow; the
 * test hook (record before data) and osd_store_batch_data = 0 close it at once.
 */
static void store_batch_close(struct store *st)
{
	if (!st->rec_open)
		return;
	if (st->flush_data_wait > 0 && st->opts.batch_data > 0 && !st->opts.test_wal_written_cb &&
	    !st->failed)
		return;
	store_batch_write(st);
}

static void store_batch_start(struct store *st)
{
	size_t payload = 0, max = store_rec_max(st);
	unsigned int ntx = 0;
	struct store_txc *t, *last = NULL;

	if (st->flushing || !st->q_head)
		return;
	if (st->failed) {
		t = st->q_head;
		st->q_head = st->q_tail = NULL;
		store_fail_pending(st, t);
		return;
	}
	for (t = st->q_head; t; t = t->next) {
		size_t sz = wal_tx_size(t->blen);

		/* Inline sync writes the record after the data; io_uring overlaps them. */
		if (st->opts.sync == STORE_SYNC_INLINE && t->has_ool && t->data_pending)
			break;
		if (ntx > 0 && wal_rec_size(payload + sz) > max)
			break;
		payload += sz;
		ntx++;
		last = t;
	}
	if (ntx == 0)
		return;
	st->fl_head = st->q_head;
	st->fl_tail = last;
	st->q_head = last->next;
	if (!st->q_head)
		st->q_tail = NULL;
	last->next = NULL;
	st->flushing = true;
	st->rec_open = true;
	st->flush_t0_ns = clock_now_ns();
	st->flush_rc = 0;
	st->flush_len = 0;
	st->flush_cqes = 0;
	st->flush_data_wait = 0;
	st->flush_sync_data = false;
	st->flush_ntx = 0;
	st->open_payload = 0;
	st->open_data = 0;
	for (t = st->fl_head; t; t = t->next)
		store_batch_join(st, t);
	store_batch_close(st);
}

/* The batch's data-device barrier, once its data (on a shared file: and its record) is written. */
static void store_batch_sync(struct store *st)
{
	struct io_uring_sqe *s;

	if (!st->flushing || !st->flush_sync_data || st->flush_data_wait > 0)
		return;
	if (st->wal_fd == st->data_fd && st->flush_cqes > 0)
		return;
	st->flush_sync_data = false;
	if (st->flush_rc != 0 || st->failed)
		return; /* the batch fails; nothing to make durable */
	s = store_sqe(st);
	io_uring_prep_fsync(s, st->data_fd, IORING_FSYNC_DATASYNC);
	io_uring_sqe_set_data64(s, STORE_TAG_FLUSH);
	st->flush_cqes++;
	io_uring_submit(&st->ring);
}

/* Test hook: the batch's record is written, its held data is not; then issue the data. */
static void store_batch_hold_point(struct store *st)
{
	bool any = false;

	if (!st->held || !st->flushing || st->flush_cqes > 0 || !st->flush_sync_data)
		return;
	for (struct store_txc *t = st->fl_head; t; t = t->next)
		any |= t->data_held > 0;
	if (any && !st->failed)
		st->opts.test_wal_written_cb(st->opts.test_arg);
	store_release_held(st);
}

static bool store_batch_done(const struct store *st)
{
	return st->flushing && !st->rec_open && st->flush_cqes == 0 && !st->flush_sync_data;
}

void store_pipeline_kick(struct store *st)
{
	if (st->plugged > 0)
		return;
	store_batch_start(st);
	store_batch_absorb(st);
}

void store_plug(struct store *st)
{
	st->plugged++;
}

void store_unplug(struct store *st)
{
	assert(st->plugged > 0);
	if (--st->plugged == 0)
		store_pipeline_kick(st);
}

static int store_advance(struct store *st)
{
	int n = 0;

	store_batch_hold_point(st);
	store_batch_absorb(st);
	store_batch_close(st);
	store_batch_sync(st);
	if (store_batch_done(st))
		n = store_commit_done(st);
	store_batch_start(st);
	/* Held data of transactions no batch will wait for (store failed). */
	if (st->held && (!st->flushing || st->failed))
		store_release_held(st);
	return n;
}

int store_poll(struct store *st)
{
	int rc = store_reap(st, false);

	if (rc < 0)
		return rc;
	return store_advance(st);
}

int store_event_fd(const struct store *st)
{
	return st->event_fd;
}

int store_wait(struct store *st)
{
	for (;;) {
		int n = store_poll(st);

		if (n != 0)
			return n;
		if (!st->flushing && !st->q_head && st->inflight_data == 0)
			return 0;
		if (store_batch_done(st))
			continue;
		n = store_reap(st, true);
		if (n < 0)
			return n;
	}
}

int store_flush(struct store *st)
{
	while (st->q_head || st->flushing) {
		int rc = store_wait(st);

		if (rc < 0)
			return rc;
	}
	return st->failed;
}
