/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The group-commit pipeline. Run-to-completion in the owner's thread, which
 * it never blocks on a barrier: a submit starts a batch at once when fewer
 * than osd_store_wal_depth batches are in flight; everything submitted
 * meanwhile becomes the next batch (one record, one barrier). The record
 * and its barrier go through io_uring (write linked to an fdatasync, or a
 * write with RWF_DSYNC) or a helper thread (pwritev2 RWF_DSYNC), as
 * osd_store_wal_sync says; store_poll() reaps the completions, applies the
 * metadata of the oldest batch once it is durable to RocksDB and only then
 * fires its callbacks. Batches complete strictly in LSN order, and once one
 * fails every later one fails too.
 *
 * A batch with out-of-line (large-write) data does not wait for that data
 * before writing its record: record and data are written side by side, and
 * the barrier is issued once both completed (one fdatasync when the WAL is a
 * region of the data file; on a separate WAL, the WAL's barrier and the data
 * device's fdatasync run in parallel). With more than one batch in flight a
 * crash can leave several of the last records on the device without their
 * barrier; each record carries how many before it were not yet durable
 * (its depth), and replay checks the out-of-line data of exactly those
 * (docs/store.md, rule 5).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/store/bufcache.h"
#include "osd/store/store_int.h"

static struct io_uring_sqe *store_sqe(struct store *st)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&st->ring);

	if (!sqe) {
		io_uring_submit(&st->ring);
		sqe = io_uring_get_sqe(&st->ring);
	}
	return sqe;
}

/*
 * Room for n submission entries, submitting what is queued first if need
 * be: 0, or -EBUSY. The caller takes them with io_uring_get_sqe() at once:
 * nothing submits in between, so a write and the fdatasync linked to it
 * (IOSQE_IO_LINK) reach the kernel together.
 */
static int store_sqe_reserve(struct store *st, unsigned int n)
{
	if (io_uring_sq_space_left(&st->ring) >= n)
		return 0;
	io_uring_submit(&st->ring);
	return io_uring_sq_space_left(&st->ring) >= n ? 0 : -EBUSY;
}

const char *store_sync_name(enum store_sync s)
{
	switch (s) {
	case STORE_SYNC_URING:
		return "uring";
	case STORE_SYNC_INLINE:
		return "inline";
	case STORE_SYNC_DSYNC:
		return "dsync";
	case STORE_SYNC_THREAD:
		return "thread";
	case STORE_SYNC_AUTO:
		break;
	}
	return "auto";
}

int store_sync_parse(const char *name, enum store_sync *sync_out)
{
	static const enum store_sync all[] = {STORE_SYNC_AUTO, STORE_SYNC_URING, STORE_SYNC_DSYNC,
					      STORE_SYNC_THREAD, STORE_SYNC_INLINE};

	for (unsigned int i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (strcmp(name, store_sync_name(all[i])) == 0) {
			*sync_out = all[i];
			return 0;
		}
	}
	return -EINVAL;
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
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)d | STORE_TAG_DREQ);
	return 0;
}

static void store_dreq_done(struct store *st, struct store_dreq *d, int res);

int store_data_write(struct store *st, struct store_txc *txc, const void *buf, size_t len,
		     uint64_t unit, bool out_of_line)
{
	struct store_dreq *d = malloc(sizeof(*d));

	if (!d)
		return -ENOMEM;
	*d = (struct store_dreq){
	    .txc = txc, .buf = buf, .len = len, .off = st->sb.data_base + unit * st->sb.unit};
	if (out_of_line && st->opts.test_wal_written_cb && st->opts.sync != STORE_SYNC_INLINE) {
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
	d->lnext = st->dreq_live;
	if (d->lnext)
		d->lnext->lpprev = &d->lnext;
	d->lpprev = &st->dreq_live;
	st->dreq_live = d;
	txc->data_pending++;
	txc->data_bytes += len;
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
	*d->lpprev = d->lnext;
	if (d->lnext)
		d->lnext->lpprev = d->lpprev;
	free(d);
	if (--txc->data_pending > 0)
		return;
	if (txc->awaited) {
		txc->awaited->data_wait--;
		txc->awaited = NULL;
	}
	if (txc->committed) {
		store_lg_remove(st, txc);
		store_txc_destroy(txc);
	}
}

/* ---- record writes and barriers: io_uring, the helper thread, or inline ---- */

/*
 * A write or barrier of batch b ended with res. A failure fails the store at
 * once, not when b reaches the head: a checkpoint running meanwhile must see
 * it before it writes C and trims the WAL (store.c, store_ck_job_done). On
 * an EIO the kernel may report a data device's writeback error to one
 * fdatasync only, and this may be the one. Batches still fail in LSN order:
 * each commit checks st->failed.
 */
static void store_batch_op_result(struct store *st, struct store_batch *b, int res)
{
	if (st->opts.test_batch_io_cb)
		res = st->opts.test_batch_io_cb(st->opts.test_arg, b->lsn, res);
	if (res >= 0)
		return;
	if (b->rc == 0)
		b->rc = res;
	store_fail(st, res, "wal record write or barrier");
}

static void store_batch_op_done(struct store *st, struct store_batch *b, int res)
{
	assert(b->ops > 0);
	b->ops--;
	store_batch_op_result(st, b, res);
}

static int store_iojob_run(struct store_job *job)
{
	struct store_iojob *io = (struct store_iojob *)job;

	if (io->len > 0) {
		struct iovec iov = {(void *)io->buf, io->len};
		ssize_t n;

		do
			n = pwritev2(io->wfd, &iov, 1, (off_t)io->off, io->rwf);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
		if ((size_t)n != io->len)
			return -EIO;
	}
	if (io->sfd >= 0 && fdatasync(io->sfd) != 0)
		return -errno;
	return 0;
}

static void store_iojob_done(struct store *st, struct store_job *job)
{
	store_batch_op_done(st, ((struct store_iojob *)job)->b, job->rc);
}

/*
 * Write the batch's record at phys of the WAL, then (sync_fd >= 0) an
 * fdatasync of sync_fd linked to it; dsync: the write itself carries the
 * barrier (RWF_DSYNC). Completion is counted in b->ops; inline mode does it
 * all now.
 */
static void store_rec_issue(struct store *st, struct store_batch *b, uint64_t phys, bool dsync,
			    int sync_fd)
{
	enum store_sync mode = st->opts.sync;
	int rwf = dsync ? RWF_DSYNC : 0;

	if (mode == STORE_SYNC_INLINE || mode == STORE_SYNC_THREAD) {
		struct store_iojob *io = &b->jrec;

		*io = (struct store_iojob){.job = {store_iojob_run, store_iojob_done, 0},
					   .b = b,
					   .wfd = st->wal_fd,
					   .rwf = rwf,
					   .buf = b->buf,
					   .len = b->len,
					   .off = phys,
					   .sfd = sync_fd};
		if (mode == STORE_SYNC_INLINE) {
			store_batch_op_result(st, b, store_iojob_run(&io->job));
			return;
		}
		if (store_worker_submit(&st->wal_worker, &io->job) != 0) {
			/* cannot happen: depth <= 16 < the ring's 64 slots */
			store_batch_op_result(st, b, -EBUSY);
			return;
		}
		b->ops++;
		return;
	}
	{
		struct io_uring_sqe *s;
		int rc = store_sqe_reserve(st, sync_fd >= 0 ? 2 : 1);

		if (rc != 0) {
			store_batch_op_result(st, b, rc);
			return;
		}
		s = io_uring_get_sqe(&st->ring);
		io_uring_prep_write(s, st->wal_fd, b->buf, (unsigned int)b->len, phys);
		s->rw_flags = rwf;
		io_uring_sqe_set_data64(s, (uint64_t)(uintptr_t)b | STORE_TAG_WALWRITE);
		b->ops++;
		if (sync_fd >= 0) {
			s->flags |= IOSQE_IO_LINK;
			s = io_uring_get_sqe(&st->ring);
			io_uring_prep_fsync(s, sync_fd, IORING_FSYNC_DATASYNC);
			io_uring_sqe_set_data64(s, (uint64_t)(uintptr_t)b | STORE_TAG_BARRIER);
			b->ops++;
		}
	}
	io_uring_submit(&st->ring);
}

/* An fdatasync of fd the batch waits for. */
static void store_sync_issue(struct store *st, struct store_batch *b, int fd)
{
	enum store_sync mode = st->opts.sync;

	if (mode == STORE_SYNC_INLINE || mode == STORE_SYNC_THREAD) {
		struct store_iojob *io = &b->jsync;

		*io = (struct store_iojob){
		    .job = {store_iojob_run, store_iojob_done, 0}, .b = b, .wfd = -1, .sfd = fd};
		if (mode == STORE_SYNC_INLINE) {
			store_batch_op_result(st, b, store_iojob_run(&io->job));
			return;
		}
		if (store_worker_submit(&st->wal_worker, &io->job) != 0) {
			store_batch_op_result(st, b, -EBUSY);
			return;
		}
		b->ops++;
		return;
	}
	{
		struct io_uring_sqe *s = store_sqe(st);

		if (!s) {
			store_batch_op_result(st, b, -EBUSY);
			return;
		}
		io_uring_prep_fsync(s, fd, IORING_FSYNC_DATASYNC);
		io_uring_sqe_set_data64(s, (uint64_t)(uintptr_t)b | STORE_TAG_BARRIER);
		b->ops++;
	}
	io_uring_submit(&st->ring);
}

/* ---- completions ---- */

/* Accounting only: commits happen in store_advance(), never in here. */
int store_reap(struct store *st, bool wait)
{
	struct io_uring_cqe *cqe;
	struct store_job *job;
	int n = 0;

	if (wait) {
		int rc = io_uring_wait_cqe(&st->ring, &cqe);

		if (rc < 0 && rc != -EINTR && rc != -EAGAIN)
			return rc;
	}
	while (io_uring_peek_cqe(&st->ring, &cqe) == 0) {
		uint64_t tag = io_uring_cqe_get_data64(cqe);
		void *p = (void *)(uintptr_t)(tag & ~STORE_TAG_MASK);
		int res = cqe->res;

		io_uring_cqe_seen(&st->ring, cqe);
		n++;
		switch (tag & STORE_TAG_MASK) {
		case STORE_TAG_WALWRITE: {
			struct store_batch *b = p;

			if (res >= 0 && (size_t)res != b->len)
				res = -EIO;
			store_batch_op_done(st, b, res);
			break;
		}
		case STORE_TAG_BARRIER:
			store_batch_op_done(st, p, res);
			break;
		case STORE_TAG_DEFER:
			store_defer_done(st, tag, res);
			break;
		case STORE_TAG_READ:
			store_aread_done(st, p, res);
			break;
		default:
			store_dreq_done(st, p, res);
			break;
		}
	}
	while ((job = store_worker_reap(&st->wal_worker)) != NULL ||
	       (job = store_worker_reap(&st->sync_worker)) != NULL) {
		job->done(st, job);
		n++;
	}
	return n;
}

int store_sleep(struct store *st)
{
	struct pollfd pfd = {.fd = st->event_fd, .events = POLLIN};
	uint64_t v;

	/*
	 * The ring and the helpers signal the eventfd after posting; the caller
	 * looks again after this returns, so a signal that came after its last
	 * look is never lost. The timeout is a safety net, not a poll interval.
	 */
	if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
		return -errno;
	if (read(st->event_fd, &v, sizeof(v)) < 0 && errno != EAGAIN && errno != EINTR)
		return -errno;
	return 0;
}

bool store_data_busy(const struct store *st, uint64_t off, uint64_t len)
{
	for (const struct store_dreq *d = st->dreq_live; d; d = d->lnext) {
		if (d->off < off + len && off < d->off + d->len)
			return true;
	}
	return false;
}

/*
 * Why not store_drain_data: a read-modify-write or a blocking read on the
 * reactor waited for every data write in flight (16 x 4 MiB: 64 MiB to land
 * first); units are copy-on-write, so only a write into the units read can
 * matter, and that is rare (the transaction that wrote them still in flight).
 */
int store_data_settle(struct store *st, uint64_t off, uint64_t len)
{
	while (store_data_busy(st, off, len)) {
		int rc;

		store_release_held(st);
		rc = store_reap(st, true);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int store_drain_data(struct store *st)
{
	return store_data_settle(st, 0, UINT64_MAX);
}

/* ---- batches ---- */

static void store_txc_retire(struct store *st, struct store_txc *txc)
{
	/* failed without a record: its images stay readable, as every published one */
	if (txc->defer)
		store_defer_publish(st, txc);
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

static size_t store_rec_max(const struct store *st)
{
	size_t max = st->sb.wal_size / 4;

	return max > (64u << 20) ? 64u << 20 : max;
}

/* A transaction becomes a member of batch b. */
static void store_batch_join(struct store *st, struct store_batch *b, struct store_txc *t)
{
	(void)st;
	t->next = NULL;
	if (b->tail)
		b->tail->next = t;
	else
		b->head = t;
	b->tail = t;
	if (t->has_ool && t->data_pending) {
		t->awaited = b;
		b->data_wait++;
	}
	b->ool |= t->has_ool;
	b->payload += wal_tx_size(t->blen);
	b->data += t->data_bytes;
	b->ntx++;
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
	struct store_batch *b = st->b_tail;
	size_t max = store_rec_max(st);

	while (b && b->open && !b->room_wait && st->q_head && b->data < st->opts.batch_data) {
		struct store_txc *t = st->q_head;

		if (wal_rec_size(b->payload + wal_tx_size(t->blen)) > max)
			break;
		st->q_head = t->next;
		if (!st->q_head)
			st->q_tail = NULL;
		store_batch_join(st, b, t);
	}
}

/* The batch fails without a record: its commit fails its members. */
static void store_batch_abandon(struct store_batch *b)
{
	b->open = false;
	b->room_wait = false;
	b->sync_data = false;
	if (b->rc == 0)
		b->rc = -EIO;
}

/*
 * No WAL room for b's record: wait for a checkpoint. It can only trim what
 * is committed, so with earlier batches in flight it may take two; with
 * nothing in flight and an empty log there is no hope (cannot happen: a
 * record is at most a quarter of the WAL).
 */
static void store_batch_room(struct store *st, struct store_batch *b)
{
	int rc;

	b->room_wait = true;
	if (st->ck.state != STORE_CK_IDLE)
		return;
	rc = store_ckpt_start(st);
	if (rc > 0)
		return;
	if (rc == 0 && b != st->b_head)
		return; /* earlier batches must commit first; then another checkpoint */
	if (rc == 0)
		store_fail(st, -ENOSPC, "wal has no room after a checkpoint");
	store_batch_abandon(b);
}

/* Write the closed batch's record and issue its barrier(s). */
static void store_batch_write(struct store *st, struct store_batch *b)
{
	size_t rec = wal_rec_size(b->payload), off = 0;
	bool same = st->wal_fd == st->data_fd, link_sync;
	uint32_t depth = 0;
	uint64_t v, phys;
	struct store_txc *t;

	if (st->failed) {
		store_batch_abandon(b);
		return;
	}
	v = st->vhead;
	if (v % st->sb.wal_size + rec > st->sb.wal_size)
		v = (v / st->sb.wal_size + 1) * st->sb.wal_size;
	if (v + rec - st->vtail > st->sb.wal_size) {
		/* WAL full: back-pressure, not failure */
		store_batch_room(st, b);
		return;
	}
	b->buf = bufcache_get(rec);
	if (!b->buf) {
		store_fail(st, -ENOMEM, "wal batch buffer");
		store_batch_abandon(b);
		return;
	}
	for (t = b->head; t; t = t->next)
		store_defer_splice(st, t,
				   wal_payload_tx(b->buf + WAL_HDR_SIZE, &off, t->seq, t->blen));
	/* the images are in the record now: their data-area writes may go */
	for (t = b->head; t; t = t->next)
		store_defer_publish(st, t);
	/* every batch ahead of this one is written and not yet known durable */
	for (struct store_batch *e = st->b_head; e != b; e = e->next)
		depth++;
	if (depth > 0)
		st->info.batch_overlap++;
	wal_rec_seal(b->buf, st->next_lsn, b->ntx, b->head->seq, b->payload, depth,
		     st->sb.wal_nonce);
	b->open = false;
	b->room_wait = false;
	b->lsn = st->next_lsn++;
	st->vhead = v + rec;
	b->vend = st->vhead;
	st->info.wal_write_bytes += rec;
	b->len = rec;
	phys = st->sb.wal_base + v % st->sb.wal_size;
	if (!b->ool) {
		/* the record is the whole batch: RWF_DSYNC, or a linked fdatasync (uring) */
		if (st->opts.sync == STORE_SYNC_URING)
			store_rec_issue(st, b, phys, false, st->wal_fd);
		else
			store_rec_issue(st, b, phys, true, -1);
		return;
	}
	/*
	 * The record goes out now: after its out-of-line data when the batch was
	 * open, else (test hook, osd_store_batch_data = 0) before or beside it.
	 * Either way the acknowledgement waits for a barrier issued after both
	 * completed, and replay checks the data of every record that may lack
	 * its barrier (docs/store.md, commit rule 1). Same file: one fdatasync,
	 * linked to the record if the data is already written, else issued by
	 * store_batch_sync() once it is. Separate WAL: record + its barrier now,
	 * the data device's fdatasync in parallel.
	 */
	link_sync = !same || b->data_wait == 0;
	b->sync_data = !(same && link_sync);
	if (!link_sync)
		store_rec_issue(st, b, phys, false, -1);
	else if (same || st->opts.sync == STORE_SYNC_URING)
		store_rec_issue(st, b, phys, false, st->wal_fd);
	else
		store_rec_issue(st, b, phys, true, -1);
}

/*
 * The tail batch stays open while it waits for out-of-line data and may
 * grow; the test hook (record before data) and osd_store_batch_data = 0
 * close it at once. A batch waiting for WAL room tries again.
 */
static void store_batch_close(struct store *st, struct store_batch *b)
{
	if (!b || !b->open)
		return;
	if (!b->room_wait && b->data_wait > 0 && st->opts.batch_data > 0 &&
	    !st->opts.test_wal_written_cb && !st->failed)
		return;
	if (b->room_wait && st->ck.state != STORE_CK_IDLE && !st->failed)
		return; /* the checkpoint it waits for still runs */
	store_batch_write(st, b);
}

/* The batch's data-device barrier, once its data (on a shared file: and its record) is written. */
static void store_batch_sync(struct store *st, struct store_batch *b)
{
	if (b->open || !b->sync_data || b->data_wait > 0)
		return;
	if (st->wal_fd == st->data_fd && b->ops > 0)
		return;
	b->sync_data = false;
	if (b->rc != 0 || st->failed)
		return; /* the batch fails; nothing to make durable */
	store_sync_issue(st, b, st->data_fd);
}

/* Test hook: a batch's record is written, its held data is not; then issue the data. */
static void store_batch_hold_point(struct store *st)
{
	if (!st->held)
		return;
	for (struct store_batch *b = st->b_head; b; b = b->next) {
		bool any = false;

		if (b->open || b->ops > 0 || !b->sync_data)
			continue;
		for (struct store_txc *t = b->head; t; t = t->next)
			any |= t->data_held > 0;
		if (!any)
			continue;
		if (!st->failed)
			st->opts.test_wal_written_cb(st->opts.test_arg);
		store_release_held(st);
		return;
	}
}

static bool store_batch_done(const struct store_batch *b)
{
	return !b->open && b->ops == 0 && !b->sync_data;
}

static void store_busy_end(struct store *st)
{
	if (st->nbatches == 0)
		st->info.commit_busy_ns += clock_now_ns() - st->busy_t0_ns;
}

/*
 * RocksDB's serialised write batch (its rep, the form of its own WAL
 * records; db/write_batch.cc): sequence fixed64, count fixed32, then the
 * records. Two batches' records concatenate under one header whose count
 * is the sum, as RocksDB's own WriteBatchInternal::Append does.
 */
#define STORE_KV_REP_HDR 12

/*
 * The metadata of a batch's transactions as one RocksDB write, with the
 * store's sequence key M (the last transaction's) once: one memtable insert
 * for M and one write per batch, not per transaction (docs/store.md). The
 * write is atomic, so after a crash RocksDB has all of the batch or none,
 * and replay starts after M either way.
 */
static int store_batch_kv(struct store *st, struct store_txc *list)
{
	rocksdb_writebatch_t *wb = list->wb, *merged = NULL;
	struct store_txc *last = list;
	size_t wbytes = 0;
	int rc;

	if (list->next != NULL) {
		size_t total = STORE_KV_REP_HDR, len, off = STORE_KV_REP_HDR;
		uint32_t count = 0;
		uint8_t *buf;

		for (struct store_txc *t = list; t; t = t->next) {
			rocksdb_writebatch_data(t->wb, &len);
			total += len - STORE_KV_REP_HDR;
			count += (uint32_t)rocksdb_writebatch_count(t->wb);
			last = t;
		}
		buf = malloc(total);
		if (buf == NULL)
			return -ENOMEM;
		memset(buf, 0, 8); /* the sequence: RocksDB assigns it at the write */
		for (int i = 0; i < 4; i++)
			buf[8 + i] = (uint8_t)(count >> (8 * i));
		for (struct store_txc *t = list; t; t = t->next) {
			const char *rep = rocksdb_writebatch_data(t->wb, &len);

			memcpy(buf + off, rep + STORE_KV_REP_HDR, len - STORE_KV_REP_HDR);
			off += len - STORE_KV_REP_HDR;
		}
		merged = rocksdb_writebatch_create_from((const char *)buf, total);
		free(buf);
		if (merged == NULL)
			return -ENOMEM;
		wb = merged;
	}
	rocksdb_writebatch_put(wb, "M", 1, (const char *)&last->seq, 8);
	rocksdb_writebatch_data(wb, &wbytes);
	st->info.kv_write_bytes += wbytes;
	st->info.kv_write_keys += (uint64_t)rocksdb_writebatch_count(wb);
	rc = kv_write(st->kv, wb, false);
	if (merged != NULL)
		rocksdb_writebatch_destroy(merged);
	return rc;
}

/* The oldest batch is durable (or failed): metadata to RocksDB, then callbacks. */
static int store_batch_commit(struct store *st)
{
	struct store_batch *b = st->b_head;
	struct store_txc *list = b->head;
	uint64_t vend = b->vend;
	int n = 0, rc;

	st->b_head = b->next;
	if (!st->b_head)
		st->b_tail = NULL;
	st->nbatches--;
	store_busy_end(st);
	/* A failed batch can end with data still in flight: it must not count against it. */
	for (struct store_txc *t = list; t; t = t->next)
		t->awaited = NULL;
	bufcache_put(b->buf, b->len);
	if (b->rc != 0)
		store_fail(st, b->rc, "wal write");
	free(b);
	if (st->failed)
		return store_fail_pending(st, list);
	/* Metadata first, so a callback that reads or lists sees its transaction. */
	rc = list ? store_batch_kv(st, list) : 0;
	if (rc != 0)
		store_fail(st, rc, "rocksdb apply");
	for (struct store_txc *t = list; t && rc == 0; t = t->next) {
		for (unsigned int i = 0; i < t->nallocs; i++)
			store_alloc_persist_mark(st, t->allocs[i].start, t->allocs[i].len, true);
		st->committed_seq = t->seq;
		st->info.batched_tx++;
	}
	if (!st->failed)
		st->commit_vend = vend;
	st->info.batches++;
	while (list) {
		struct store_txc *t = list;

		list = t->next;
		if (t->cb)
			t->cb(t->arg, st->failed);
		store_txc_retire(st, t);
		n++;
	}
	if (!st->failed && (st->vhead - st->vtail > st->sb.wal_size / 2 || st->nfrees > 65536))
		store_ckpt_start(st);
	return n;
}

/* Queued transactions become new batches while fewer than the depth are in flight. */
static void store_batch_start(struct store *st)
{
	size_t max = store_rec_max(st);

	while (st->q_head && (!st->b_tail || !st->b_tail->open) &&
	       st->nbatches < st->opts.wal_depth) {
		struct store_batch *b;
		struct store_txc *t;
		size_t payload = 0;

		if (st->failed) {
			/* after the batches ahead, which fail first: callbacks stay in order */
			if (st->b_head)
				return;
			t = st->q_head;
			st->q_head = st->q_tail = NULL;
			store_fail_pending(st, t);
			return;
		}
		/* Inline sync writes the record after the data; the others overlap them. */
		t = st->q_head;
		if (st->opts.sync == STORE_SYNC_INLINE && t->has_ool && t->data_pending)
			return;
		b = calloc(1, sizeof(*b));
		if (!b) {
			store_fail(st, -ENOMEM, "wal batch");
			continue; /* fails the queue above */
		}
		b->open = true;
		while ((t = st->q_head) != NULL) {
			size_t sz = wal_tx_size(t->blen);

			if (st->opts.sync == STORE_SYNC_INLINE && t->has_ool && t->data_pending)
				break;
			if (b->ntx > 0 && wal_rec_size(payload + sz) > max)
				break;
			payload += sz;
			st->q_head = t->next;
			if (!st->q_head)
				st->q_tail = NULL;
			store_batch_join(st, b, t);
		}
		if (st->nbatches++ == 0)
			st->busy_t0_ns = clock_now_ns();
		if (st->b_tail)
			st->b_tail->next = b;
		else
			st->b_head = b;
		st->b_tail = b;
		store_batch_close(st, b);
	}
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
	bool again;

	do {
		again = false;
		store_batch_hold_point(st);
		store_batch_absorb(st);
		store_batch_close(st, st->b_tail);
		for (struct store_batch *b = st->b_head; b; b = b->next)
			store_batch_sync(st, b);
		while (st->b_head && store_batch_done(st->b_head)) {
			n += store_batch_commit(st);
			again = true;
		}
		store_batch_start(st);
		/* inline mode: a new batch may be done already */
		if (st->b_head && store_batch_done(st->b_head))
			again = true;
	} while (again);
	store_ckpt_advance(st);
	/* Held data of transactions no batch will wait for (store failed). */
	if (st->held && (!st->b_head || st->failed))
		store_release_held(st);
	return n;
}

/* Completions and commits, but no read callbacks: what the blocking waits below use. */
static int store_poll_io(struct store *st)
{
	int rc = store_reap(st, false);

	if (rc < 0)
		return rc;
	return store_advance(st);
}

int store_poll(struct store *st)
{
	int n = store_poll_io(st);

	if (n < 0)
		return n;
	/* read callbacks only from here: never inside a caller's own store_flush() */
	return n + store_aread_poll(st);
}

int store_event_fd(const struct store *st)
{
	return st->event_fd;
}

static bool store_idle(const struct store *st)
{
	return !st->b_head && !st->q_head && st->dreq_live == NULL;
}

int store_wait(struct store *st)
{
	for (;;) {
		int n = store_poll_io(st);

		if (n != 0)
			return n;
		if (store_idle(st))
			return 0;
		n = store_sleep(st);
		if (n < 0)
			return n;
	}
}

int store_flush(struct store *st)
{
	while (st->q_head || st->b_head) {
		int rc = store_wait(st);

		if (rc < 0)
			return rc;
	}
	return st->failed;
}

/*
 * Which mode "auto" stands for: the helper thread. Measured (docs/store.md,
 * "Threading decision"): it takes the least of the owner's time per
 * transaction and gives the best throughput at depth; io_uring's linked
 * fsync costs the same hand-offs and more of the owner's time, and an
 * io_uring RWF_DSYNC write took ~4 ms on ext4 whenever the record's sync had
 * a journal commit to wait for.
 */
static enum store_sync store_sync_auto(void)
{
	return STORE_SYNC_THREAD;
}

int store_pipeline_init(struct store *st)
{
	int rc;

	if (st->opts.sync == STORE_SYNC_AUTO)
		st->opts.sync = store_sync_auto();
	if (st->opts.wal_depth == 0)
		st->opts.wal_depth = 1;
	if (st->opts.wal_depth > STORE_WAL_DEPTH_MAX)
		st->opts.wal_depth = STORE_WAL_DEPTH_MAX;
	if (st->opts.sync == STORE_SYNC_INLINE)
		st->opts.wal_depth = 1; /* each batch blocks the caller anyway */
	/*
	 * The checkpoint's own open file of the data device: it sees every
	 * writeback error from now on, even one a batch's fdatasync on data_fd
	 * was told of first (errors before now: mount's fdatasync saw them).
	 */
	st->ck_fd = open(st->opts.data_path, O_RDONLY | O_CLOEXEC);
	if (st->ck_fd < 0) {
		rc = -errno;
		store_err(st, "open %s for checkpoints: %s", st->opts.data_path, strerror(-rc));
		return rc;
	}
	rc = store_worker_start(&st->sync_worker, "weft-store-ckpt", st->event_fd);
	if (rc == 0 && st->opts.sync == STORE_SYNC_THREAD)
		rc = store_worker_start(&st->wal_worker, "weft-store-wal", st->event_fd);
	if (rc != 0) {
		store_err(st, "store helper thread: %s", strerror(-rc));
		store_worker_stop(&st->sync_worker);
		close(st->ck_fd);
		st->ck_fd = -1;
	}
	return rc;
}

void store_pipeline_fini(struct store *st)
{
	/* Jobs still out (a checkpoint or batch of a failed store) use buffers and fds. */
	while (st->wal_worker.outstanding > 0 || st->sync_worker.outstanding > 0) {
		if (store_reap(st, false) > 0)
			continue;
		if (store_sleep(st) < 0)
			break;
	}
	store_worker_stop(&st->wal_worker);
	store_worker_stop(&st->sync_worker);
	if (st->ck_fd >= 0)
		close(st->ck_fd);
	st->ck_fd = -1;
}
