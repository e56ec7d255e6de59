/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "osd/store/wal.h"

uint8_t *wal_payload_tx(uint8_t *payload, size_t *off, uint64_t seq, size_t blen)
{
	uint8_t *p = payload + *off;
	uint32_t len = (uint32_t)blen, rsvd = 0;
	size_t padded = (blen + 7) & ~(size_t)7;

	memcpy(p, &seq, 8);
	memcpy(p + 8, &len, 4);
	memcpy(p + 12, &rsvd, 4);
	memset(p + WAL_TX_HDR + blen, 0, padded - blen);
	*off += WAL_TX_HDR + padded;
	return p + WAL_TX_HDR;
}

void wal_payload_add(uint8_t *payload, size_t *off, uint64_t seq, const void *body, size_t blen)
{
	memcpy(wal_payload_tx(payload, off, seq, blen), body, blen);
}

static uint32_t wal_rec_crc(const uint8_t *rec, size_t total, uint32_t nonce)
{
	struct wal_hdr h;
	uint32_t c;

	memcpy(&h, rec, sizeof(h));
	h.crc = 0;
	c = crc32c(nonce, &h, sizeof(h));
	return crc32c(c, rec + WAL_HDR_SIZE, total - WAL_HDR_SIZE);
}

void wal_rec_seal(uint8_t *rec, uint64_t lsn, uint32_t ntx, uint64_t first_seq, size_t len,
		  uint32_t depth, uint32_t nonce)
{
	size_t total = wal_rec_size(len);
	struct wal_hdr h = {
	    .magic = WAL_MAGIC,
	    .lsn = lsn,
	    .type = WAL_TYPE_BATCH,
	    .len = (uint32_t)len,
	    .ntx = ntx,
	    .depth = depth,
	    .first_seq = first_seq,
	};

	memset(rec + WAL_HDR_SIZE + len, 0, total - WAL_HDR_SIZE - len);
	memcpy(rec, &h, sizeof(h));
	h.crc = wal_rec_crc(rec, total, nonce);
	memcpy(rec, &h, sizeof(h));
}

void wal_tx_iter_init(struct wal_tx_iter *it, const uint8_t *payload, size_t len, uint32_t ntx)
{
	it->p = payload;
	it->end = payload + len;
	it->left = ntx;
}

int wal_tx_iter_next(struct wal_tx_iter *it, uint64_t *seq_out, const uint8_t **body_out,
		     size_t *blen_out)
{
	uint32_t blen;
	size_t padded;

	if (it->left == 0)
		return it->p == it->end ? 0 : -EINVAL;
	if ((size_t)(it->end - it->p) < WAL_TX_HDR)
		return -EINVAL;
	memcpy(seq_out, it->p, 8);
	memcpy(&blen, it->p + 8, 4);
	padded = ((size_t)blen + 7) & ~(size_t)7;
	if (padded > (size_t)(it->end - it->p) - WAL_TX_HDR)
		return -EINVAL;
	*body_out = it->p + WAL_TX_HDR;
	*blen_out = blen;
	it->p += WAL_TX_HDR + padded;
	it->left--;
	return 1;
}

int wal_scan_init(struct wal_scan *s, int fd, uint64_t base, uint64_t size, uint32_t nonce,
		  uint64_t pos, uint64_t lsn)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->base = base;
	s->size = size;
	s->nonce = nonce;
	s->vpos = pos;
	s->lsn = lsn;
	s->cap = 1u << 20;
	if (posix_memalign((void **)&s->buf, WAL_BLOCK, s->cap) != 0)
		return -ENOMEM;
	return 0;
}

void wal_scan_fini(struct wal_scan *s)
{
	free(s->buf);
	s->buf = NULL;
}

static int wal_pread(int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENODATA; /* device (file) shorter than the region: truncated */
		done += (size_t)n;
	}
	return 0;
}

static int wal_grow(struct wal_scan *s, size_t need)
{
	uint8_t *nb;

	if (need <= s->cap)
		return 0;
	if (posix_memalign((void **)&nb, WAL_BLOCK, need) != 0)
		return -ENOMEM;
	free(s->buf);
	s->buf = nb;
	s->cap = need;
	return 0;
}

/* Try the record for s->lsn at virtual position v: 1 valid, 0 absent, <0 I/O error. */
static int wal_scan_try(struct wal_scan *s, uint64_t v, struct wal_hdr *h)
{
	uint64_t phys = v % s->size;
	size_t total;
	int rc;

	if (phys + WAL_BLOCK > s->size)
		return 0;
	rc = wal_pread(s->fd, s->buf, WAL_BLOCK, s->base + phys);
	if (rc == -ENODATA)
		return 0; /* nothing was ever written here */
	if (rc != 0)
		return rc;
	memcpy(h, s->buf, sizeof(*h));
	if (h->magic != WAL_MAGIC || h->lsn != s->lsn)
		return 0;
	total = wal_rec_size(h->len);
	if (h->type != WAL_TYPE_BATCH || total > s->size - phys || h->depth > WAL_DEPTH_MAX ||
	    h->depth >= h->lsn) {
		s->stop = WAL_STOP_BADHDR;
		s->stop_vpos = v;
		return -EAGAIN;
	}
	rc = wal_grow(s, total);
	if (rc == 0 && total > WAL_BLOCK)
		rc = wal_pread(s->fd, s->buf + WAL_BLOCK, total - WAL_BLOCK,
			       s->base + phys + WAL_BLOCK);
	if (rc == -ENODATA) { /* the record runs past the end of a truncated file */
		s->stop = WAL_STOP_BADCRC;
		s->stop_vpos = v;
		s->dropped = total;
		return -EAGAIN;
	}
	if (rc != 0)
		return rc;
	if (wal_rec_crc(s->buf, total, s->nonce) != h->crc) {
		s->stop = WAL_STOP_BADCRC;
		s->stop_vpos = v;
		s->dropped = total;
		return -EAGAIN;
	}
	return 1;
}

/*
 * The writer put the record for s->lsn at the current position, or at 0 of
 * the next lap when it did not fit. A damaged record with the expected LSN
 * at the first place is not the end yet: it may be a torn record left past
 * the end of the log by an earlier crash (batches in flight) whose LSN the
 * store reused, and the record that took the LSN wrapped to the second
 * place. A valid record at either place wins; only when neither holds one
 * does the scan stop, at the first damaged one (and s->stop_alt says the
 * second is damaged too, so the caller invalidates both).
 */
int wal_scan_next(struct wal_scan *s, struct wal_hdr *hdr_out, const uint8_t **payload_out)
{
	uint64_t cands[2] = {s->vpos, (s->vpos / s->size + 1) * s->size};
	unsigned int ncand = s->vpos % s->size == 0 ? 1 : 2;
	enum wal_stop bad = WAL_STOP_NONE;
	uint64_t bad_vpos = 0, bad_dropped = 0;

	if (s->stop != WAL_STOP_NONE)
		return 0;
	s->stop_alt = false;
	for (unsigned int i = 0; i < ncand; i++) {
		struct wal_hdr h;
		int rc = wal_scan_try(s, cands[i], &h);

		if (rc == -EAGAIN) {
			/* this LSN, damaged: remember the first, look at the other place */
			if (bad == WAL_STOP_NONE) {
				bad = s->stop;
				bad_vpos = s->stop_vpos;
				bad_dropped = s->dropped;
			} else {
				s->stop_alt = true;
				s->stop_vpos_alt = cands[i];
			}
			s->stop = WAL_STOP_NONE;
			s->dropped = 0;
			continue;
		}
		if (rc < 0)
			return rc;
		if (rc == 1) {
			if (bad != WAL_STOP_NONE)
				s->passed_bad++;
			s->stop_alt = false;
			s->vpos = cands[i] + wal_rec_size(h.len);
			s->lsn++;
			s->records++;
			*hdr_out = h;
			*payload_out = s->buf + WAL_HDR_SIZE;
			return 1;
		}
	}
	if (bad != WAL_STOP_NONE) {
		s->stop = bad;
		s->stop_vpos = bad_vpos;
		s->dropped = bad_dropped;
		return 0;
	}
	s->stop = WAL_STOP_EMPTY;
	return 0;
}

int wal_scan_probe_beyond(struct wal_scan *s, wal_beyond_cb cb, void *arg)
{
	const size_t chunk = 1u << 20;
	uint8_t *area;
	int rc = 0;

	if (posix_memalign((void **)&area, WAL_BLOCK, chunk) != 0)
		return -ENOMEM;
	for (uint64_t off = 0; off < s->size && rc == 0; off += chunk) {
		size_t n = s->size - off < chunk ? (size_t)(s->size - off) : chunk;

		rc = wal_pread(s->fd, area, n, s->base + off);
		if (rc == -ENODATA) { /* truncated device: nothing beyond */
			rc = 0;
			break;
		}
		for (size_t b = 0; rc == 0 && b + WAL_BLOCK <= n; b += WAL_BLOCK) {
			struct wal_hdr h;
			size_t total;

			memcpy(&h, area + b, sizeof(h));
			if (h.magic != WAL_MAGIC || h.lsn <= s->lsn ||
			    h.lsn - s->lsn > (1ull << 40))
				continue;
			total = wal_rec_size(h.len);
			if (total > s->size - (off + b)) {
				rc = cb(arg, &h, off + b, false); /* impossible length */
				continue;
			}
			rc = wal_grow(s, total);
			if (rc == 0)
				rc = wal_pread(s->fd, s->buf, total, s->base + off + b);
			if (rc == -ENODATA) /* runs past the end of a truncated file: torn */
				rc = cb(arg, &h, off + b, false);
			else if (rc == 0)
				rc = cb(arg, &h, off + b,
					wal_rec_crc(s->buf, total, s->nonce) == h.crc);
		}
	}
	free(area);
	return rc;
}

void wal_scan_drop_last(struct wal_scan *s, uint64_t vstart, const struct wal_hdr *h)
{
	s->vpos = vstart;
	s->lsn = h->lsn;
	s->records--;
	s->stop = WAL_STOP_BADDATA;
	s->stop_vpos = vstart;
	s->stop_alt = false;
	s->dropped = wal_rec_size(h->len);
}

const char *wal_stop_name(enum wal_stop stop)
{
	switch (stop) {
	case WAL_STOP_NONE:
		return "not stopped";
	case WAL_STOP_EMPTY:
		return "no further record";
	case WAL_STOP_BADCRC:
		return "bad crc (torn or corrupt record)";
	case WAL_STOP_BADHDR:
		return "bad header";
	case WAL_STOP_BADDATA:
		return "out-of-line data of a record not proven durable failed its crc (never "
		       "acknowledged)";
	}
	return "?";
}
