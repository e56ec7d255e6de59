/* SPDX-License-Identifier: Apache-2.0 */
/*
 * RocksDB glue: one database, default column family, fixed key prefixes:
 *   "S"                          superblock copy
 *   "C"                          checkpoint (WAL position replay starts from)
 *   "M"                          last transaction seq whose metadata is applied
 *   "B" be64(chunk)              allocator bitmap chunk (KV_CHUNK_UNITS bits)
 *   "O" be64(pg) name            object record head (extmap.h: size, version, shard 0)
 *   "E" be64(pg) name 0x00 be64(k)  shard k >= 1 of its extent map
 *   "X" be64(pg) name 0x00 key   object attribute
 *   "L" be64(pg) be64(seq)       PG log entry
 * Big-endian integers keep RocksDB's byte order equal to numeric order.
 */
#ifndef WEFT_OSD_STORE_KV_H
#define WEFT_OSD_STORE_KV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rocksdb/c.h>

#define KV_CHUNK_UNITS 32768u /* bits per "B" value (4 KiB) */
#define KV_KEY_MAX     512

struct kv {
	char *path; /* the database directory */
	rocksdb_t *db;
	rocksdb_options_t *opts;
	rocksdb_block_based_table_options_t *topts;
	rocksdb_cache_t *cache;
	rocksdb_writeoptions_t *wo_async;
	rocksdb_writeoptions_t *wo_sync;
	rocksdb_readoptions_t *ro;
	bool write_failed; /* a write failed: refuse the rest (kv_write) */
};

int kv_open(const char *path, bool create, struct kv **kv_out);
void kv_close(struct kv *kv);
/* Value into a malloc'd buffer; -ENOENT if absent, -EIO on a RocksDB error. */
int kv_get(struct kv *kv, const void *key, size_t klen, void **val_out, size_t *vlen_out);
int kv_write(struct kv *kv, rocksdb_writebatch_t *wb, bool sync);
/*
 * Write RocksDB's buffered WAL (manual_wal_flush) to its file, without a
 * sync: a write() into the page cache, never a device barrier.
 */
int kv_flush_wal(struct kv *kv);
/*
 * Make everything kv_flush_wal() wrote durable: fdatasync every WAL file of
 * the database and fsync its directory (RocksDB creates a new log at each
 * memtable switch). Touches no RocksDB object, only files, so a helper
 * thread runs it while the owner keeps writing: RocksDB's own sync
 * (FlushWAL(true)) would write the log buffer from that thread, and librocksdb
 * 7.8 aborts the process when anyone appends after such a write failed
 * (test_db_full), before the owner could learn of the failure.
 */
int kv_sync_files(const struct kv *kv);

/* Key builders: return the key length written into buf (KV_KEY_MAX bytes). */
size_t kv_key_onode(uint8_t *buf, uint64_t pg, const char *name);
size_t kv_key_shard(uint8_t *buf, uint64_t pg, const char *name, uint64_t k);
/* [lo, hi) covering every shard key of one object; lo alone is their common prefix. */
void kv_key_shard_range(uint8_t *lo, size_t *lolen, uint8_t *hi, size_t *hilen, uint64_t pg,
			const char *name);
size_t kv_key_attr(uint8_t *buf, uint64_t pg, const char *name, const char *attr);
/* [lo, hi) covering every attribute of one object. */
void kv_key_attr_range(uint8_t *lo, size_t *lolen, uint8_t *hi, size_t *hilen, uint64_t pg,
		       const char *name);
size_t kv_key_pglog(uint8_t *buf, uint64_t pg, uint64_t seq);
size_t kv_key_chunk(uint8_t *buf, uint64_t chunk);

/*
 * Visit keys with the given prefix, starting at start (NULL = prefix start),
 * in order. cb returns 0 to continue, 1 to stop, <0 to abort with that error.
 */
typedef int (*kv_iter_cb)(void *arg, const uint8_t *key, size_t klen, const uint8_t *val,
			  size_t vlen);
int kv_iter(struct kv *kv, const uint8_t *prefix, size_t plen, const uint8_t *start, size_t slen,
	    kv_iter_cb cb, void *arg);

static inline void kv_be64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static inline uint64_t kv_get_be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = (v << 8) | p[i];
	return v;
}

#endif
