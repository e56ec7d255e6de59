/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reads that do not block the caller (docs/store.md, "Reads").
 *
 * store_read() stops the OSD's reactor for as long as the device takes:
 * a 4 MiB read is milliseconds in which no frame is received, no commit
 * reaped and no other read started, so the disk and the network take turns
 * instead of working together (issue 16 item 8). Here a read resolves the
 * object's extents at once, takes units whose deferred write has not
 * completed from memory, zero-fills holes, and puts the rest on the store's
 * io_uring as requests of up to STORE_RD_SEG bytes, straight into the
 * caller's buffer when it is aligned (no bounce copy). The crcs of the
 * units are copied at the start, so nothing refers to the object record
 * once the read is under way; every block is verified when the last
 * request completed, and the callback runs from the next store_poll().
 *
 * Why the result is what store_read() would give:
 * - units taken from memory are never read from the device: a deferred
 *   write of the unit completing during the read cannot tear it;
 * - data writes still in flight (a committed transaction's out-of-line
 *   data, store_commit.c) are ordered before the read with IOSQE_IO_DRAIN,
 *   as store_read() drains them;
 * - units are copy-on-write and freed units come back only at a
 *   checkpoint, so a unit of the object is not rewritten while it is read
 *   unless the object itself changed, which the caller excludes; if it
 *   happens anyway (a PG removed under a read), the crc check fails the
 *   read instead of returning the new bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/crc32c.h"
#include "common/log.h"
#include "include/weft/weft.h"
#include "osd/store/store_int.h"
#include "osd/store/wal.h"

#define STORE_RD_SEG (1u << 20) /* bytes per request: a large read keeps several in flight */

struct store_rd {
	struct store_rd *next; /* st->rd_done */
	store_read_cb cb;
	void *arg;
	uint8_t *buf;	 /* the caller's */
	uint8_t *dst;	 /* where the first unit of the range lands: buf, or bounce */
	uint8_t *bounce; /* NULL when read straight into buf */
	uint64_t pg, lblk0, nunits;
	uint64_t skip, len;	      /* the caller's bytes: dst + skip, len of them */
	uint64_t issued, got;	      /* device bytes asked for, and returned */
	unsigned int pending;	      /* requests in flight */
	int rc;			      /* the first request error */
	uint32_t *crcs;		      /* nunits * cpb */
	uint8_t *mapped;	      /* per unit: not a hole */
	char name[STORE_NAME_MAX + 1];
};

static void store_rd_free(struct store_rd *rd)
{
	free(rd->bounce);
	free(rd);
}

/* Every mapped block against its crc, then the caller's bytes into place. */
static int store_rd_finish(struct store *st, struct store_rd *rd)
{
	uint64_t unit = st->sb.unit;

	if (rd->rc == 0 && rd->got != rd->issued)
		rd->rc = -EIO;
	if (rd->rc != 0) {
		store_err(st, "pg %llx object %s: read at offset %llu: %s",
			  (unsigned long long)rd->pg, rd->name,
			  (unsigned long long)(rd->lblk0 * unit), strerror(-rd->rc));
		return rd->rc;
	}
	for (uint64_t u = 0; u < rd->nunits; u++) {
		if (!rd->mapped[u])
			continue;
		for (uint32_t i = 0; i < st->cpb; i++) {
			uint64_t b = u * st->cpb + i;

			if (crc32c(0, rd->dst + b * STORE_CSUM_BLOCK, STORE_CSUM_BLOCK) ==
			    rd->crcs[b])
				continue;
			store_err(st,
				  "pg %llx object %s: crc mismatch at offset %llu; returning an "
				  "error, not the data",
				  (unsigned long long)rd->pg, rd->name,
				  (unsigned long long)(rd->lblk0 * unit + b * STORE_CSUM_BLOCK));
			return -WEFT_E_CORRUPT;
		}
	}
	if (rd->bounce)
		memcpy(rd->buf, rd->bounce + rd->skip, rd->len);
	return 0;
}

/* One request of len device bytes at off into dst: on the ring, or (no room) at once. */
static void store_rd_issue(struct store *st, struct store_rd *rd, uint8_t *dst, size_t len,
			   uint64_t off)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&st->ring);

	if (!sqe) {
		io_uring_submit(&st->ring);
		sqe = io_uring_get_sqe(&st->ring);
	}
	rd->issued += len;
	if (!sqe) {
		/* the ring is full of completions nobody reaped yet: read here (counted there) */
		int rc = store_pread(st, dst, len, off);

		if (rc != 0 && rd->rc == 0)
			rd->rc = rc;
		rd->got += rc == 0 ? len : 0;
		return;
	}
	st->info.data_read_bytes += len;
	io_uring_prep_read(sqe, st->data_fd, dst, (unsigned int)len, off);
	/*
	 * A data write still in flight into these units lands first. Only then:
	 * a drained read waits for everything the ring holds, WAL records and
	 * barriers included.
	 */
	if (store_data_busy(st, off, len))
		io_uring_sqe_set_flags(sqe, IOSQE_IO_DRAIN);
	io_uring_sqe_set_data64(sqe, (uint64_t)(uintptr_t)rd | STORE_TAG_READ);
	rd->pending++;
}

/* Units [i, k) of an extent at device unit pblk, as rd's units from idx on. */
static void store_rd_extent(struct store *st, struct store_rd *rd, uint64_t idx, uint64_t pblk,
			    uint64_t k)
{
	uint64_t unit = st->sb.unit;

	for (uint64_t i = 0, j; i < k; i = j) {
		const uint8_t *img = store_defer_image(st, pblk + i);

		if (img) {
			memcpy(rd->dst + (idx + i) * unit, img, unit);
			j = i + 1;
			continue;
		}
		for (j = i + 1; j < k && (j - i) * unit < STORE_RD_SEG; j++)
			if (store_defer_image(st, pblk + j))
				break;
		store_rd_issue(st, rd, rd->dst + (idx + i) * unit, (j - i) * unit,
			       st->sb.data_base + (pblk + i) * unit);
	}
}

int store_read_start(struct store *st, uint64_t pg, const char *name, uint64_t off, uint64_t len,
		     void *buf, size_t cap, store_read_cb cb, void *arg, uint64_t *read_out)
{
	uint64_t unit = st->sb.unit, end, u0, n;
	struct store_rd *rd;
	struct onode *on;
	int rc;

	if (cap < len)
		return -EINVAL;
	if (!st->ring_ok || st->held) {
		/* no ring, or the test hook holds data writes back: the blocking read */
		rc = store_read(st, pg, name, off, len, buf, read_out);
		return rc == 0 ? 1 : rc;
	}
	store_onode_trim(st);
	rc = store_onode_get(st, pg, name, false, &on);
	if (rc != 0)
		return rc;
	if (off >= on->rec.size || len == 0) {
		*read_out = 0;
		return 1;
	}
	end = off + len < on->rec.size && off + len >= off ? off + len : on->rec.size;
	u0 = off / unit;
	n = (end + unit - 1) / unit - u0;
	/* one allocation: the read, then its crcs, then its per-unit flags */
	rd = calloc(1, sizeof(*rd) + n * st->cpb * sizeof(uint32_t) + n);
	if (!rd)
		return -ENOMEM;
	rd->cb = cb;
	rd->arg = arg;
	rd->buf = buf;
	rd->pg = pg;
	rd->lblk0 = u0;
	rd->nunits = n;
	rd->skip = off - u0 * unit;
	rd->len = end - off;
	rd->crcs = (uint32_t *)(rd + 1);
	rd->mapped = (uint8_t *)(rd->crcs + n * st->cpb);
	snprintf(rd->name, sizeof(rd->name), "%s", name);
	if (rd->skip == 0 && (uintptr_t)buf % WAL_BLOCK == 0 && n * unit <= cap) {
		rd->dst = buf;
	} else if (posix_memalign((void **)&rd->bounce, WAL_BLOCK, n * unit) == 0) {
		rd->dst = rd->bounce;
	} else {
		free(rd);
		return -ENOMEM;
	}
	for (uint64_t u = u0; u < u0 + n;) {
		uint64_t pblk, run, k;
		const uint32_t *crcs;

		k = u0 + n - u;
		if (extmap_lookup(&on->rec.map, u, &pblk, &crcs, &run) != 0) {
			if (run < k) /* a hole: up to the next extent (UINT64_MAX: none) */
				k = run;
			memset(rd->dst + (u - u0) * unit, 0, k * unit);
			u += k;
			continue;
		}
		if (run < k)
			k = run;
		memcpy(rd->crcs + (u - u0) * st->cpb, crcs, k * st->cpb * sizeof(uint32_t));
		memset(rd->mapped + (u - u0), 1, k);
		store_rd_extent(st, rd, u - u0, pblk, k);
		u += k;
	}
	if (rd->pending == 0) {
		/* nothing on the device (holes, units still in memory), or read here */
		rc = store_rd_finish(st, rd);
		*read_out = rd->len;
		store_rd_free(rd);
		return rc == 0 ? 1 : rc;
	}
	io_uring_submit(&st->ring);
	if (st->rd_inflight++ == 0)
		st->rd_t0_ns = clock_now_ns();
	return 0;
}

void store_aread_done(struct store *st, void *p, int res)
{
	struct store_rd *rd = p;

	if (res < 0 && rd->rc == 0)
		rd->rc = res;
	rd->got += res > 0 ? (uint64_t)res : 0;
	if (--rd->pending > 0)
		return;
	rd->next = st->rd_done;
	st->rd_done = rd;
}

int store_aread_poll(struct store *st)
{
	struct store_rd *list = NULL, *rd;
	int n = 0;

	/* oldest first: the done list is pushed at its head */
	while ((rd = st->rd_done) != NULL) {
		st->rd_done = rd->next;
		rd->next = list;
		list = rd;
	}
	while ((rd = list) != NULL) {
		int rc = store_rd_finish(st, rd);

		list = rd->next;
		if (--st->rd_inflight == 0)
			st->info.read_busy_ns += clock_now_ns() - st->rd_t0_ns;
		rd->cb(rd->arg, rc, rc == 0 ? rd->len : 0);
		store_rd_free(rd);
		n++;
	}
	return n;
}

void store_reads_abandon(struct store *st)
{
	/* the callers' buffers may go once this returns: let the device finish with them */
	while (st->rd_inflight > 0) {
		struct store_rd *rd;

		while ((rd = st->rd_done) != NULL) {
			st->rd_done = rd->next;
			st->rd_inflight--;
			store_rd_free(rd);
		}
		if (st->rd_inflight > 0 && store_reap(st, true) < 0)
			break;
	}
}
