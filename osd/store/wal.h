/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Write-ahead log format and replay scan. The log is a circular region
 * [base, base+size) of a device. Each record is one group-commit batch:
 *
 *   header (40 bytes): magic u32, crc u32, lsn u64, type u32, len u32,
 *                      ntx u32, depth u32, first_seq u64
 *   payload (len bytes): ntx x { seq u64, blen u32, rsvd u32, body[blen], pad to 8 }
 *   zero padding to WAL_BLOCK
 *
 * crc = crc32c(seed = the store's WAL nonce) over the header (crc field 0),
 * the payload and the padding. LSNs are consecutive. A record never straddles
 * the end of the region: when it does not fit, the writer starts it at offset
 * 0, and replay looks for the next LSN at the current position, then at 0.
 *
 * depth: how many records before this one were written but not yet known
 * durable (their barrier had not completed) when this one was written. The
 * records lsn-depth .. lsn-1 may therefore be missing or lack their data
 * after a crash although this one is on the device; every record before
 * lsn-depth is proven durable by this one. 0 in logs of stores that kept one
 * batch in flight (the field was reserved and zero), which means the same.
 */
#ifndef WEFT_OSD_STORE_WAL_H
#define WEFT_OSD_STORE_WAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WAL_BLOCK      4096u
#define WAL_MAGIC      0x4c415757u /* "WWAL" */
#define WAL_HDR_SIZE   40u
#define WAL_TYPE_BATCH 1u
#define WAL_TX_HDR     16u

struct wal_hdr {
	uint32_t magic;
	uint32_t crc;
	uint64_t lsn;
	uint32_t type;
	uint32_t len;
	uint32_t ntx;
	uint32_t depth; /* records before this one whose barrier had not completed */
	uint64_t first_seq;
};

/* Largest depth a reader accepts (the writer's osd_store_wal_depth is at most 16). */
#define WAL_DEPTH_MAX 64u

_Static_assert(sizeof(struct wal_hdr) == WAL_HDR_SIZE, "wal header layout");

static inline size_t wal_rec_size(size_t payload)
{
	return (WAL_HDR_SIZE + payload + WAL_BLOCK - 1) / WAL_BLOCK * WAL_BLOCK;
}

static inline size_t wal_tx_size(size_t blen)
{
	return WAL_TX_HDR + ((blen + 7) & ~(size_t)7);
}

/* Append one transaction to a payload at *off (caller sized the buffer with wal_tx_size). */
void wal_payload_add(uint8_t *payload, size_t *off, uint64_t seq, const void *body, size_t blen);
/* The same, but the caller writes the blen body bytes at the pointer returned. */
uint8_t *wal_payload_tx(uint8_t *payload, size_t *off, uint64_t seq, size_t blen);
/* Fill the header and padding of rec (wal_rec_size(len) bytes, payload already at +40). */
void wal_rec_seal(uint8_t *rec, uint64_t lsn, uint32_t ntx, uint64_t first_seq, size_t len,
		  uint32_t depth, uint32_t nonce);

/* Iterate the transactions of a verified payload. 1 = one returned, 0 = end, -EINVAL = malformed.
 */
struct wal_tx_iter {
	const uint8_t *p, *end;
	unsigned int left;
};
void wal_tx_iter_init(struct wal_tx_iter *it, const uint8_t *payload, size_t len, uint32_t ntx);
int wal_tx_iter_next(struct wal_tx_iter *it, uint64_t *seq_out, const uint8_t **body_out,
		     size_t *blen_out);

enum wal_stop {
	WAL_STOP_NONE = 0,
	WAL_STOP_EMPTY,	  /* no record with the expected LSN: clean end of log */
	WAL_STOP_BADCRC,  /* header for the expected LSN, payload fails its crc: torn */
	WAL_STOP_BADHDR,  /* expected LSN with an impossible length or type */
	WAL_STOP_BADDATA, /* a record of the unproven tail is valid, its out-of-line data is
			   * not: never acknowledged, dropped with everything after it */
};

struct wal_scan {
	int fd;
	uint64_t base, size;
	uint32_t nonce;
	uint64_t vpos; /* virtual position: phys = vpos % size */
	uint64_t lsn;  /* next expected */
	uint8_t *buf;  /* aligned, holds the current record */
	size_t cap;
	enum wal_stop stop;
	uint64_t dropped;   /* bytes of the record that failed */
	uint64_t stop_vpos; /* where the failed record starts (BADCRC, BADHDR, BADDATA) */
	/* BADCRC, BADHDR: the other place for that LSN holds a damaged one too */
	bool stop_alt;
	uint64_t stop_vpos_alt;
	uint64_t records;
	uint64_t passed_bad; /* damaged records passed over for a valid one at the other place */
};

int wal_scan_init(struct wal_scan *s, int fd, uint64_t base, uint64_t size, uint32_t nonce,
		  uint64_t pos, uint64_t lsn);
void wal_scan_fini(struct wal_scan *s);
/*
 * Next valid record: 1 with *hdr_out and *payload_out (valid until the next
 * call), 0 at the end of the valid log (s->stop says why), -errno on I/O error.
 * After 1, s->vpos is the end of the returned record.
 */
int wal_scan_next(struct wal_scan *s, struct wal_hdr *hdr_out, const uint8_t **payload_out);
/*
 * After the scan stopped: look through the whole region for records with an
 * LSN above the stop point and call cb for each (its header, its byte offset
 * in the region, and whether its crc holds). A valid one is either damage
 * in the middle of the log (it proves the stop LSN durable: lsn - depth >
 * stop LSN, so acknowledged records would be lost) or debris of batches
 * that were in flight at the crash (lsn - depth <= stop LSN: never
 * acknowledged); the caller decides. One that fails its crc (or has an
 * impossible length) proves nothing, but its header carries an LSN the
 * store will write again: the caller invalidates it unless it lies inside
 * the records just replayed, where a header-like block is a record's
 * payload. cb returns 0 to go on, <0 to stop with that error.
 * Returns 0 or -errno on I/O error.
 */
typedef int (*wal_beyond_cb)(void *arg, const struct wal_hdr *h, uint64_t phys, bool intact);
int wal_scan_probe_beyond(struct wal_scan *s, wal_beyond_cb cb, void *arg);
/*
 * Un-read the record last returned (it started at vstart), and stop there as
 * WAL_STOP_BADDATA: the caller found it was never acknowledged.
 */
void wal_scan_drop_last(struct wal_scan *s, uint64_t vstart, const struct wal_hdr *h);
const char *wal_stop_name(enum wal_stop stop);

#endif
