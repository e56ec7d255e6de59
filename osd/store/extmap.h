/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extent map of one object: sorted, non-overlapping runs of logical blocks
 * (allocation units) mapped to physical units, each carrying one crc32c per
 * 4 KiB of data (cpb = crcs per block). Also the object's on-disk (RocksDB)
 * encoding, which is decoded with bounds checks: it is disk input.
 */
#ifndef WEFT_OSD_STORE_EXTMAP_H
#define WEFT_OSD_STORE_EXTMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ext {
	uint64_t lblk;
	uint64_t pblk;
	uint64_t len;
	uint32_t *crcs; /* len * cpb entries */
};

struct extmap {
	struct ext *v;
	uint32_t n, cap;
	uint32_t cpb;
};

/* Called for each physical piece removed by extmap_punch / visited by extmap_walk. */
typedef void (*extmap_piece_cb)(void *arg, uint64_t lblk, uint64_t pblk, uint64_t len,
				const uint32_t *crcs);

void extmap_init(struct extmap *m, uint32_t cpb);
void extmap_fini(struct extmap *m);
/* Unmap [lblk, lblk+len); cb (may be NULL) sees every removed piece. */
int extmap_punch(struct extmap *m, uint64_t lblk, uint64_t len, extmap_piece_cb cb, void *arg);
/* Map [lblk, lblk+len) -> pblk with crcs (copied); the range must be unmapped (punch first). */
int extmap_insert(struct extmap *m, uint64_t lblk, uint64_t pblk, uint64_t len,
		  const uint32_t *crcs);
/* Every mapped piece that intersects [lblk, lblk+len), clipped to it, in order. */
void extmap_walk(const struct extmap *m, uint64_t lblk, uint64_t len, extmap_piece_cb cb,
		 void *arg);
/*
 * Block lblk: 0 and pblk_out, crcs_out, run_out (blocks left in this extent)
 * if mapped; -ENOENT with *run_out = blocks until the next extent (or UINT64_MAX).
 */
int extmap_lookup(const struct extmap *m, uint64_t lblk, uint64_t *pblk_out,
		  const uint32_t **crcs_out, uint64_t *run_out);
uint64_t extmap_blocks(const struct extmap *m);

/* Object record: size, version, the owner's version of it, map. */
struct onode_rec {
	uint64_t size;
	uint64_t version;  /* the store's: seq of the last transaction that changed it */
	uint64_t uversion; /* the owner's (store_tx_set_version); 0: never set */
	struct extmap map;
};

/*
 * On disk (RocksDB) an object's record is split by logical range into
 * shards of `span` blocks, so a small write rewrites the shard it touches
 * and the record's head, not the whole map (which grows with the object:
 * ~28 KiB for a 4 MiB object written 4 KiB at a time):
 *
 *   head  ("O" key): magic "ONO2" u32, cpb u32, size u64, version u64,
 *                    n u32, flags u32, span u32, [uversion u64],
 *                    n pieces of shard 0
 *   shard ("E" key): magic "ONS1" u32, n u32, n pieces of shard k
 *   piece: lblk u64, pblk u64, len u64, crcs u32[len * cpb], clipped to its shard
 *
 * flags bit 0: the map reaches beyond shard 0; then every non-empty shard,
 * 0 included, has its own key and the head has no pieces (so a write into a
 * large object rewrites the small head and one shard). Without it shard 0
 * rides in the head: a small object is one key. Flags bit 1: the head
 * carries the owner's version (the OSD's PG version of the object's last
 * change), so setting it costs no key of its own. Records of earlier stores ("ONO1":
 * the same fields without flags and span, every extent in the one value)
 * are still read; the store rewrites them whole on their next change.
 */
#define ONODE_F_SHARDS 1u
#define ONODE_F_UVER   2u

/* Shard index of block lblk. */
static inline uint64_t onode_shard_of(uint64_t lblk, uint32_t span)
{
	return lblk / span;
}

/* Encoded size of the head, and the head itself (buf holds that many bytes). */
size_t onode_head_size(const struct onode_rec *r, uint32_t span);
void onode_head_encode(const struct onode_rec *r, uint32_t span, uint8_t *buf);
/* Shard k's own value: encoded size (0 when the shard holds nothing) and encoding. */
size_t onode_shard_size(const struct onode_rec *r, uint32_t span, uint64_t k);
void onode_shard_encode(const struct onode_rec *r, uint32_t span, uint64_t k, uint8_t *buf);
/* Does the map reach beyond shard 0 (are there shard keys)? */
bool onode_has_shards(const struct onode_rec *r, uint32_t span);

/*
 * Decode a head (or a whole record of the old format) into r; r->map must
 * be initialised and is replaced. *span_out: the record's shard span (0 for
 * an old whole record); *flags_out its flags. -EINVAL (r untouched) on any
 * malformed input: it is disk input.
 */
int onode_head_decode(struct onode_rec *r, const uint8_t *buf, size_t len, uint32_t *span_out,
		      uint32_t *flags_out);
/* Add the pieces of shard k (k >= 1, of a record with this span) to r's map; -EINVAL if malformed.
 */
int onode_shard_decode(struct onode_rec *r, uint32_t span, uint64_t k, const uint8_t *buf,
		       size_t len);

#endif
