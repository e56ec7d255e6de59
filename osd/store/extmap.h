/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Extent map of one object: sorted, non-overlapping runs of logical blocks
 * (allocation units) mapped to physical units, each carrying one crc32c per
 * 4 KiB of data (cpb = crcs per block). Also the object's on-disk (RocksDB)
 * encoding, which is decoded with bounds checks: it is disk input.
 */
#ifndef WEFT_OSD_STORE_EXTMAP_H
#define WEFT_OSD_STORE_EXTMAP_H

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

/* Object record: size, version, map. */
struct onode_rec {
	uint64_t size;
	uint64_t version;
	struct extmap map;
};

/* Encoded size and encoding (buf must hold onode_rec_size bytes). */
size_t onode_rec_size(const struct onode_rec *r);
void onode_rec_encode(const struct onode_rec *r, uint8_t *buf);
/* -EINVAL (nothing allocated) on any malformed input; r->map must be initialised. */
int onode_rec_decode(struct onode_rec *r, const uint8_t *buf, size_t len);

#endif
