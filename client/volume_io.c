/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Volume I/O (docs/volumes.md, "I/O"): a byte range is cut at object
 * boundaries (and at osd_max_op_size inside an object) into pieces, one
 * object op each, all in flight at once; the caller's callback runs when
 * the last piece has answered. With stripe_count 1, byte b of the volume
 * lives in object b / object_size at offset b % object_size.
 *
 * Reads of a missing object, or past an object's end, are zero-filled
 * here: the OSD reads nothing it does not have. Discards become removes
 * (whole objects), truncates (an object's tail) or zero ops.
 * Writes and discards are kept in submit order on the handle so a flush
 * knows when everything before it has completed. Every write is durable on
 * all replicas when it completes, so that barrier is the whole flush: an
 * exclusive handle reads no lock (docs/volumes.md, "Exclusive lock"). A
 * fenced handle's ops are refused by the OSDs (-WEFT_E_BLOCKLISTED), which
 * marks the lock lost before any later flush can pass its barrier.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client/volume_int.h"
#include "common/log.h"

enum vol_piece_kind { VOL_P_READ, VOL_P_WRITE, VOL_P_ZERO, VOL_P_TRUNC, VOL_P_REMOVE };

struct vol_piece {
	struct vol_io *io;
	enum vol_piece_kind kind;
	uint64_t objno, off, len; /* object number, offset and length in it */
	char *buf;		  /* read destination / write source */
};

struct vol_io {
	struct weft_vol *vol;
	struct vol_io *next, *prev; /* vol->wr_head list (writes and discards) */
	bool ordered;
	uint64_t seq;
	unsigned int pending;
	int rc;
	uint32_t rflags; /* the first failed piece's WEFT_RESULT_F_* and OSD */
	int32_t rosd;
	uint64_t length;
	weft_op_cb cb;
	void *arg;
	uint32_t npieces;
	struct vol_piece pieces[];
};

struct vol_flush {
	struct weft_vol *vol;
	struct vol_flush *next;
	uint64_t upto; /* completes once every ordered op with seq <= upto has */
	bool started;
	weft_op_cb cb;
	void *arg;
};

static void vol_io_finish(struct vol_io *io)
{
	struct weft_vol *vol = io->vol;
	struct weft_result res = {.rc = io->rc, .length = io->rc ? 0 : io->length,
				  .flags = io->rflags, .osd = io->rosd};

	if (io->ordered) {
		if (io->prev)
			io->prev->next = io->next;
		else
			vol->wr_head = io->next;
		if (io->next)
			io->next->prev = io->prev;
		else
			vol->wr_tail = io->prev;
	}
	vol->inflight--;
	if (io->cb)
		io->cb(&res, io->arg);
	if (io->ordered)
		vol_io_flushes_check(vol);
	free(io);
}

static void vol_piece_cb(const struct weft_result *res, void *arg)
{
	struct vol_piece *p = arg;
	struct vol_io *io = p->io;
	int rc = res->rc;

	if (p->kind == VOL_P_READ) {
		/* never written: no object, or the object ends before this range does */
		if (rc == -ENOENT) {
			memset(p->buf, 0, p->len);
			rc = 0;
		} else if (rc == 0 && res->length < p->len) {
			memset(p->buf + res->length, 0, p->len - res->length);
		}
	} else if ((p->kind == VOL_P_REMOVE || p->kind == VOL_P_TRUNC) && rc == -ENOENT) {
		rc = 0; /* nothing there: already zeros */
	}
	if (rc == -WEFT_E_BLOCKLISTED && (io->vol->locked || io->vol->lock_lost)) {
		/* fenced: our lock was broken (volume_lock.c) */
		vol_lock_lost_mark(io->vol, "the OSDs refuse this client instance: blocklisted");
		rc = -ENOLCK;
	}
	if (rc != 0 && io->rc == 0) {
		io->rc = rc;
		io->rflags = rc == res->rc ? res->flags : 0;
		io->rosd = rc == res->rc ? res->osd : 0;
	} else if (rc != 0 && (res->flags & WEFT_RESULT_F_MAYBE)) {
		io->rflags |= WEFT_RESULT_F_MAYBE; /* some piece may have been applied */
	}
	if (--io->pending == 0)
		vol_io_finish(io);
}

static int vol_piece_submit(struct vol_piece *p)
{
	struct weft_vol *vol = p->io->vol;
	char obj[VOL_OBJ_NAME_MAX];

	vol_data_obj_name(vol->hdr.id, p->objno, obj, sizeof(obj));
	switch (p->kind) {
	case VOL_P_READ:
		return weft_aio_read(vol->cl, vol->pool, obj, p->buf, p->len, p->off, vol_piece_cb,
				     p);
	case VOL_P_WRITE:
		return weft_aio_write(vol->cl, vol->pool, obj, p->buf, p->len, p->off, vol_piece_cb,
				      p);
	case VOL_P_ZERO:
		return weft_aio_zero(vol->cl, vol->pool, obj, p->off, p->len, vol_piece_cb, p);
	case VOL_P_TRUNC:
		return weft_aio_truncate(vol->cl, vol->pool, obj, p->off, vol_piece_cb, p);
	case VOL_P_REMOVE:
		return weft_aio_remove(vol->cl, vol->pool, obj, vol_piece_cb, p);
	}
	return -EINVAL;
}

/*
 * Cut [off, off+len) into pieces. pieces NULL: count only. Reads and writes
 * carry data, so no piece exceeds piece_max; a discard (kind VOL_P_ZERO,
 * may_free) removes an object whose whole used range (up to the volume end)
 * it covers, truncates one whose tail it covers, and zeroes the rest (an
 * OSD zero op: no payload); write_zeroes (!may_free) zeroes everything.
 */
static uint32_t vol_io_plan(const struct weft_vol *vol, enum vol_piece_kind kind, bool may_free,
			    char *buf, uint64_t off, uint64_t len, struct vol_piece *pieces)
{
	uint64_t os = vol->hdr.object_size, end = off + len;
	uint32_t n = 0;

	for (uint64_t o = off; o < end;) {
		uint64_t objno = o / os, oo = o % os;
		uint64_t used = vol->hdr.size - objno * os < os ? vol->hdr.size - objno * os : os;
		uint64_t pl = (end - o < os - oo) ? end - o : os - oo;
		enum vol_piece_kind k = kind;

		if (kind == VOL_P_ZERO && may_free && oo + pl >= used)
			k = oo == 0 ? VOL_P_REMOVE : VOL_P_TRUNC;
		if ((k == VOL_P_READ || k == VOL_P_WRITE) && pl > vol->piece_max)
			pl = vol->piece_max - oo % vol->piece_max;
		if (pieces) {
			struct vol_piece *p = &pieces[n];

			p->kind = k;
			p->objno = objno;
			p->off = oo;
			p->len = pl;
			p->buf = kind == VOL_P_ZERO ? NULL : buf + (o - off);
		}
		n++;
		o += pl;
	}
	return n;
}

static int vol_io_start(struct weft_vol *vol, enum vol_piece_kind kind, bool may_free, char *buf,
			uint64_t off, uint64_t len, weft_op_cb cb, void *arg)
{
	uint32_t n = vol_io_plan(vol, kind, may_free, buf, off, len, NULL), i;
	struct vol_io *io;
	int rc = 0;

	io = calloc(1, sizeof(*io) + n * sizeof(io->pieces[0]));
	if (io == NULL)
		return -ENOMEM;
	io->vol = vol;
	io->length = len;
	io->cb = cb;
	io->arg = arg;
	io->npieces = n;
	vol_io_plan(vol, kind, may_free, buf, off, len, io->pieces);
	/* one extra count so no piece can finish the io while we are still submitting */
	io->pending = n + 1;
	for (i = 0; i < n; i++) {
		io->pieces[i].io = io;
		rc = vol_piece_submit(&io->pieces[i]);
		if (rc != 0)
			break;
	}
	if (i == 0) {
		free(io);
		return rc;
	}
	if (rc != 0) {
		log_error("vol", "volume %s: queueing part %u of %u failed: %s", vol->hdr.name, i,
			  n, weft_strerror(rc));
		io->rc = rc;
		io->pending -= n - i;
	}
	io->pending--;
	vol->inflight++;
	if (kind != VOL_P_READ) {
		io->ordered = true;
		io->seq = ++vol->next_wseq;
		io->prev = vol->wr_tail;
		if (vol->wr_tail)
			vol->wr_tail->next = io;
		else
			vol->wr_head = io;
		vol->wr_tail = io;
	}
	/* pieces only answer from weft_poll(), so pending > 0 here */
	return 0;
}

static void vol_io_done_now(const struct weft_result *res, void *arg)
{
	struct vol_flush *f = arg; /* a zero-length op: only the caller's cb */

	f->vol->inflight--;
	if (f->cb)
		f->cb(res, f->arg);
	free(f);
}

/* Complete on the next weft_poll() (len 0 ops): callbacks never run inside the submit. */
static int vol_io_empty(struct weft_vol *vol, weft_op_cb cb, void *arg)
{
	struct vol_flush *f = calloc(1, sizeof(*f));
	int rc;

	if (f == NULL)
		return -ENOMEM;
	f->vol = vol;
	f->cb = cb;
	f->arg = arg;
	rc = vol_defer(vol->cl, 0, 0, vol_io_done_now, f);
	if (rc != 0) {
		free(f);
		return rc;
	}
	vol->inflight++;
	return 0;
}

static int vol_io_check(struct weft_vol *vol, bool write, uint64_t off, uint64_t len)
{
	if (write && (vol->flags & WEFT_VOL_RDONLY))
		return -EROFS;
	if (write && vol->locked && !vol->lock_lost && weft_blocklisted(vol->cl))
		vol_lock_lost_mark(vol, "the map blocklists this client instance");
	if (write && vol->lock_lost)
		return -ENOLCK;
	if (len > WEFT_VOL_IO_MAX)
		return -E2BIG;
	if (off > vol->hdr.size || (write && len > vol->hdr.size - off))
		return -EINVAL;
	return 0;
}

int weft_vol_aio_read(struct weft_vol *vol, void *buf, size_t len, uint64_t off, weft_op_cb cb,
		      void *arg)
{
	int rc = vol_io_check(vol, false, off, len);

	if (rc != 0)
		return rc;
	if (len > vol->hdr.size - off)
		len = vol->hdr.size - off; /* cut at the end; res->length tells */
	if (len == 0)
		return vol_io_empty(vol, cb, arg);
	return vol_io_start(vol, VOL_P_READ, false, buf, off, len, cb, arg);
}

int weft_vol_aio_write(struct weft_vol *vol, const void *buf, size_t len, uint64_t off,
		       weft_op_cb cb, void *arg)
{
	int rc = vol_io_check(vol, true, off, len);

	if (rc != 0)
		return rc;
	if (len == 0)
		return vol_io_empty(vol, cb, arg);
	/* the pieces only read from buf (weft_aio_write takes a const source) */
	return vol_io_start(vol, VOL_P_WRITE, false, (char *)(uintptr_t)buf, off, len, cb, arg);
}

int weft_vol_aio_discard(struct weft_vol *vol, uint64_t off, uint64_t len, weft_op_cb cb, void *arg)
{
	int rc = vol_io_check(vol, true, off, len);

	if (rc != 0)
		return rc;
	if (len == 0)
		return vol_io_empty(vol, cb, arg);
	return vol_io_start(vol, VOL_P_ZERO, true, NULL, off, len, cb, arg);
}

int weft_vol_aio_write_zeroes(struct weft_vol *vol, uint64_t off, uint64_t len, weft_op_cb cb,
			      void *arg)
{
	int rc = vol_io_check(vol, true, off, len);

	if (rc != 0)
		return rc;
	if (len == 0)
		return vol_io_empty(vol, cb, arg);
	return vol_io_start(vol, VOL_P_ZERO, false, NULL, off, len, cb, arg);
}

/* ------------------------------------------------------------------ flush */

static void vol_flush_complete(struct vol_flush *f, int rc)
{
	struct weft_vol *vol = f->vol;
	struct weft_result res = {.rc = rc};

	for (struct vol_flush **pp = &vol->flushes; *pp; pp = &(*pp)->next) {
		if (*pp == f) {
			*pp = f->next;
			break;
		}
	}
	vol->inflight--;
	if (f->cb)
		f->cb(&res, f->arg);
	free(f);
}

static void vol_flush_deferred_cb(const struct weft_result *res, void *arg)
{
	vol_flush_complete(arg, res->rc);
}

/*
 * The barrier has passed: every write before the flush is durable, and none
 * was refused as fenced (that marks the lock lost). No lock read: an OSD
 * that served those writes did so before it knew of any blocklisting of us,
 * so a new holder (who waits for that epoch) sees them.
 */
static void vol_flush_start(struct vol_flush *f)
{
	struct weft_vol *vol = f->vol;
	int rc;

	f->started = true;
	if (vol->locked && !vol->lock_lost && weft_blocklisted(vol->cl))
		vol_lock_lost_mark(vol, "the map blocklists this client instance");
	rc = vol_defer(vol->cl, vol->lock_lost ? -ENOLCK : 0, 0, vol_flush_deferred_cb, f);
	if (rc != 0) /* could not even queue: complete through a deferred error */
		rc = vol_defer(vol->cl, rc, 0, vol_flush_deferred_cb, f);
	if (rc != 0) {
		log_error("vol", "volume %s: flush could not complete: %s", vol->hdr.name,
			  weft_strerror(rc));
		f->started = false; /* retried at the next write completion or flush */
	}
}

void vol_io_flushes_check(struct weft_vol *vol)
{
	for (struct vol_flush *f = vol->flushes, *next; f; f = next) {
		next = f->next;
		if (!f->started && (vol->wr_head == NULL || vol->wr_head->seq > f->upto))
			vol_flush_start(f);
	}
}

int weft_vol_aio_flush(struct weft_vol *vol, weft_op_cb cb, void *arg)
{
	struct vol_flush *f;

	if (vol->lock_lost)
		return -ENOLCK;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	f->vol = vol;
	f->upto = vol->next_wseq;
	f->cb = cb;
	f->arg = arg;
	f->next = vol->flushes;
	vol->flushes = f;
	vol->inflight++;
	vol_io_flushes_check(vol);
	return 0;
}

unsigned int weft_vol_inflight(const struct weft_vol *vol)
{
	return vol->inflight;
}

/* ------------------------------------------------------------ sync forms */

struct vol_sync_io {
	bool done;
	struct weft_result res;
};

static void vol_sync_io_cb(const struct weft_result *res, void *arg)
{
	struct vol_sync_io *s = arg;

	s->res = *res;
	s->done = true;
}

static int vol_sync_io_wait(struct weft_vol *vol, struct vol_sync_io *s, int rc)
{
	if (rc != 0)
		return rc;
	rc = vol_wait(vol->cl, &s->done);
	return rc != 0 ? rc : s->res.rc;
}

int weft_vol_read(struct weft_vol *vol, void *buf, size_t len, uint64_t off, size_t *read_out)
{
	struct vol_sync_io s = {0};
	int rc =
	    vol_sync_io_wait(vol, &s, weft_vol_aio_read(vol, buf, len, off, vol_sync_io_cb, &s));

	if (rc == 0 && read_out)
		*read_out = s.res.length;
	return rc;
}

int weft_vol_write(struct weft_vol *vol, const void *buf, size_t len, uint64_t off)
{
	struct vol_sync_io s = {0};

	return vol_sync_io_wait(vol, &s,
				weft_vol_aio_write(vol, buf, len, off, vol_sync_io_cb, &s));
}

int weft_vol_discard(struct weft_vol *vol, uint64_t off, uint64_t len)
{
	struct vol_sync_io s = {0};

	return vol_sync_io_wait(vol, &s, weft_vol_aio_discard(vol, off, len, vol_sync_io_cb, &s));
}

int weft_vol_flush(struct weft_vol *vol)
{
	struct vol_sync_io s = {0};

	return vol_sync_io_wait(vol, &s, weft_vol_aio_flush(vol, vol_sync_io_cb, &s));
}

int weft_vol_write_zeroes(struct weft_vol *vol, uint64_t off, uint64_t len)
{
	struct vol_sync_io s = {0};

	return vol_sync_io_wait(vol, &s,
				weft_vol_aio_write_zeroes(vol, off, len, vol_sync_io_cb, &s));
}

int weft_vol_extents(struct weft_vol *vol, uint64_t off, uint64_t len, struct weft_vol_extent *ext,
		     unsigned int max, unsigned int *n_out)
{
	struct vol_sync_io s = {0};
	int rc = vol_sync_io_wait(
	    vol, &s, weft_vol_aio_extents(vol, off, len, ext, max, vol_sync_io_cb, &s));

	if (rc == 0 && n_out)
		*n_out = (unsigned int)s.res.length;
	return rc;
}
