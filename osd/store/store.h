/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The per-OSD object store: objects (pg, name) with data, attributes and a
 * per-PG log, kept on a data device, a write-ahead log and RocksDB.
 *
 * Threading: a store is owned by one thread (the OSD reactor). Every call,
 * including the commit callbacks, runs in that thread. The store never
 * blocks it on a barrier: WAL barriers go through io_uring or a helper
 * thread, checkpoints run step by step with their fdatasync and RocksDB
 * sync in a helper thread. Only store_wait(), store_flush(),
 * store_checkpoint(), mount/umount and reads block. See docs/store.md.
 *
 * A transaction's callback fires once, from store_poll()/store_wait(), after
 * the transaction is durable in the WAL (rc 0), or with a negative errno if
 * the WAL device failed (the store then refuses further writes).
 */
#ifndef WEFT_OSD_STORE_STORE_H
#define WEFT_OSD_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conf;
struct store;
struct store_tx;

#define STORE_NAME_MAX	 255
#define STORE_ATTR_MAX	 255
#define STORE_OBJECT_MAX (1ull << 40) /* largest object size */

/* How a WAL record is made durable (osd_store_wal_sync; docs/store.md "Threading"). */
enum store_sync {
	STORE_SYNC_URING,  /* io_uring write linked to an fdatasync */
	STORE_SYNC_INLINE, /* pwritev2(RWF_DSYNC) in the caller's thread: blocks it (measuring) */
	STORE_SYNC_AUTO,   /* the mode docs/store.md measured best (store_sync_name tells) */
	STORE_SYNC_DSYNC,  /* io_uring write with RWF_DSYNC: one request per record */
	STORE_SYNC_THREAD, /* pwritev2(RWF_DSYNC) in a helper thread, message passing */
};
/* "uring", "inline", ...; AUTO as what it stands for. */
const char *store_sync_name(enum store_sync s);
/* Parse a mode name; -EINVAL if unknown. */
int store_sync_parse(const char *name, enum store_sync *sync_out);

#define STORE_WAL_DEPTH_MAX	16u
#define STORE_WAL_DEPTH_DEFAULT 1u

struct store_opts {
	const char *data_path;
	const char *wal_path; /* NULL or "" = a region of the data device */
	const char *db_path;
	uint64_t data_size;   /* mkfs: size of a data file it creates or extends */
	bool preallocate;     /* mkfs: fallocate that size (false: a sparse file) */
	uint64_t wal_size;    /* mkfs: WAL region size */
	uint32_t alloc_unit;  /* mkfs: allocation unit, power of two >= 4 KiB */
	uint32_t large_write; /* writes >= this go out of line (not in the WAL) */
	uint32_t osd_id;
	const char *fsid; /* mkfs: cluster fsid text; NULL = random */
	enum store_sync sync;
	/*
	 * Batches in flight at most (osd_store_wal_depth, 1..16): the next
	 * batch's record may be written while earlier barriers run; they
	 * complete in LSN order. 1 = one at a time. Inline mode uses 1.
	 */
	uint32_t wal_depth;
	bool direct_io;	      /* O_DIRECT on data and WAL (falls back with a warning) */
	uint64_t batch_data;  /* an open batch takes in txs up to this many data bytes */
	uint64_t defer_batch; /* small writes' data-area writes gather up to this (store_defer.c) */
	bool wal_salvage;     /* mount even if the WAL is damaged mid-log (drops records) */
	uint64_t onode_cache_bytes; /* object records kept in memory (clean ones evicted above) */
	/*
	 * Tests only (no conf option): bytes of object covered by one shard of
	 * its extent map in RocksDB (0 = 256 KiB). Records stored with another
	 * shard size are read and rewritten whole on their next change.
	 */
	uint64_t onode_shard_bytes;
	/*
	 * Percent of the data units a transaction that writes data may not take
	 * (osd_store_reserve_pct): removes, truncates, zeroing, attributes and PG
	 * log entries may, so an OSD whose store is "full" can still free space and
	 * record recovery state. The writer gets -ENOSPC while units remain.
	 */
	uint32_t reserve_pct;
	/*
	 * Tests only (no conf option): when set, out-of-line data writes are held
	 * back until the WAL record of their batch has been written, and this is
	 * called at that point, before they are issued, so a crash test can die
	 * with the record on disk and the data not.
	 */
	void (*test_wal_written_cb)(void *arg);
	/*
	 * Tests only (no conf option): called in the owner's thread with the
	 * result of each WAL record write or barrier of the batch with this
	 * LSN (bytes written or 0, or -errno); what it returns replaces that
	 * result, so a test can inject an I/O error.
	 */
	int (*test_batch_io_cb)(void *arg, uint64_t lsn, int res);
	void *test_arg;
};

void store_opts_init(struct store_opts *o);
/* Fill from the osd_data/osd_wal/osd_db/osd_store_* options; strings stay owned by conf. */
int store_opts_from_conf(const struct conf *conf, struct store_opts *o);

int store_mkfs(const struct store_opts *o);
int store_mount(const struct store_opts *o, struct store **st_out);
/* Waits for every submitted transaction, checkpoints, frees everything. */
int store_umount(struct store *st);

/* Transactions: build, then submit. Data and strings are copied. */
int store_tx_create(struct store_tx **tx_out);
void store_tx_destroy(struct store_tx *tx);
int store_tx_write(struct store_tx *tx, uint64_t pg, const char *name, uint64_t off, uint64_t len,
		   const void *data);
/*
 * The same write without copying data: it is read when the transaction is
 * submitted (the block images and the WAL record are made then) and never
 * after, so data must stay valid and unchanged until store_tx_submit
 * returns or store_tx_destroy is called, whichever comes first.
 */
int store_tx_write_ref(struct store_tx *tx, uint64_t pg, const char *name, uint64_t off,
		       uint64_t len, const void *data);
int store_tx_zero(struct store_tx *tx, uint64_t pg, const char *name, uint64_t off, uint64_t len);
int store_tx_truncate(struct store_tx *tx, uint64_t pg, const char *name, uint64_t size);
int store_tx_remove(struct store_tx *tx, uint64_t pg, const char *name);
int store_tx_setattr(struct store_tx *tx, uint64_t pg, const char *name, const char *key,
		     const void *val, size_t vlen);
int store_tx_rmattr(struct store_tx *tx, uint64_t pg, const char *name, const char *key);
/*
 * The owner's version of the object (the OSD's PG version of its last
 * change; non-zero), kept in the object's record: unlike an attribute it
 * costs no RocksDB key of its own. Creates the object like a setattr;
 * store_stat() returns it; a remove forgets it.
 */
int store_tx_set_version(struct store_tx *tx, uint64_t pg, const char *name, uint64_t uversion);
int store_tx_pglog_append(struct store_tx *tx, uint64_t pg, uint64_t seq, const void *entry,
			  size_t len);
/* Drop PG log entries with seq <= upto. */
int store_tx_pglog_trim(struct store_tx *tx, uint64_t pg, uint64_t upto);
/*
 * Let tx use the reserve (store_opts.reserve_pct) although it writes data:
 * for data that must land for the store to stay consistent with what its
 * owner already recorded elsewhere. Transactions without writes always may.
 */
void store_tx_reserve_allow(struct store_tx *tx);
/*
 * When tx finds no room but units freed by earlier transactions come back
 * at the next checkpoint, store_tx_submit returns -EAGAIN (nothing changed,
 * tx still the caller's) having started that checkpoint, instead of running
 * it on the caller's thread: submit again later (the OSD's client writes
 * do, from their PG's tick). Without it the submit waits for the
 * checkpoint. Once nothing freed is left, -ENOSPC as always.
 */
void store_tx_nowait(struct store_tx *tx);

typedef void (*store_commit_cb)(void *arg, int rc);
/*
 * Apply tx atomically. On 0 the store owns tx and calls cb(arg, rc) later; on
 * error (-EINVAL bad op, -ENOSPC, -E2BIG, -EIO store failed) nothing changed
 * and tx still belongs to the caller.
 */
int store_tx_submit(struct store *st, struct store_tx *tx, store_commit_cb cb, void *arg);
/*
 * Hold commits: while plugged, store_tx_submit() only queues (the
 * transaction is checked and its space taken, so it can no longer be
 * refused) and store_unplug() starts the write. An OSD plugs around a
 * batch of received messages so its replica records are on the wire
 * before its own commit starts, and the transactions of one batch of
 * messages share one WAL record (docs/data-path.md). Nests; store_poll(),
 * store_wait() and store_flush() still start queued work.
 */
void store_plug(struct store *st);
void store_unplug(struct store *st);
/* Run completions without blocking; returns the number of callbacks fired or -errno. */
int store_poll(struct store *st);
/*
 * An fd that turns readable when an I/O of the store (io_uring or a helper
 * thread's) completes: an owner whose store_poll() returned 0 may sleep in
 * poll() on it, then read() it to re-arm and call store_poll() again.
 */
int store_event_fd(const struct store *st);
/* Block until at least one callback fired (or nothing is pending); returns as store_poll. */
int store_wait(struct store *st);
/* Block until every submitted transaction has called back. */
int store_flush(struct store *st);
/*
 * Make the data device and RocksDB durable up to the last commit and trim
 * the WAL; blocks until done (umount, fsck, tests). The pipeline starts its
 * own checkpoints without blocking (WAL half full, many frees).
 */
int store_checkpoint(struct store *st);
/*
 * Start a checkpoint if units freed by committed transactions wait for one
 * and the last checkpoint is at least age_ms old, and move a running one
 * on; never blocks and fires no callback (the checkpoint ends in a later
 * call or store_poll()). Returns 0 or the store's error. Otherwise a
 * remove's space comes back only when the WAL is half full, which on an
 * idle store is never (the OSD calls it from its tick: docs/store.md).
 */
int store_checkpoint_idle(struct store *st, uint64_t age_ms);

struct store_stat {
	uint64_t size;
	uint64_t version;  /* seq of the last transaction that changed the object */
	uint64_t uversion; /* the last store_tx_set_version; 0 if never set */
	uint64_t blocks;   /* allocation units mapped */
};

/* Sees every submitted transaction. -ENOENT if the object does not exist. */
int store_stat(struct store *st, uint64_t pg, const char *name, struct store_stat *stat_out);
/*
 * Read [off, off+len) into buf; *read_out = bytes up to the object's end.
 * Every 4 KiB block is verified: a mismatch is -WEFT_E_CORRUPT, logged with
 * object and offset, and no data is returned.
 */
int store_read(struct store *st, uint64_t pg, const char *name, uint64_t off, uint64_t len,
	       void *buf, uint64_t *read_out);
/*
 * The same read without blocking the caller (docs/store.md, "Reads").
 * buf holds cap bytes (cap >= len); an aligned buf with room for the last
 * whole unit and an off on a unit boundary is read into directly, any
 * other through a bounce buffer. Returns 1 with *read_out set when no
 * device read was needed (an empty range, holes, units still in memory),
 * 0 when started: cb then runs from a later store_poll() with the same
 * result store_read() would have given, -errno when it could not start.
 * The object's data must not change until cb (the caller orders its
 * writes after the read); a block that changed anyway fails its crc and
 * the read ends -WEFT_E_CORRUPT, never with wrong data. buf must stay
 * valid until cb, even if the caller lost interest.
 */
typedef void (*store_read_cb)(void *arg, int rc, uint64_t read);
int store_read_start(struct store *st, uint64_t pg, const char *name, uint64_t off, uint64_t len,
		     void *buf, size_t cap, store_read_cb cb, void *arg, uint64_t *read_out);
/* Wait for every started read's device requests; no callback runs (shutdown). */
void store_reads_abandon(struct store *st);
/*
 * A digest of the object's data without reading it: crc32c over its size,
 * the stored checksum of every whole 4 KiB block (a hole counts as zeros)
 * and the bytes of a last partial block (that one block is read, so what
 * lies beyond the end does not count). Equal data gives equal digests
 * however it was written; -WEFT_E_CORRUPT if that last block is damaged.
 */
int store_digest(struct store *st, uint64_t pg, const char *name, uint32_t *digest_out);
/* Committed attribute value (at most cap bytes copied); -ENOENT, or -ERANGE if cap is short. */
int store_getattr(struct store *st, uint64_t pg, const char *name, const char *key, void *buf,
		  size_t cap, size_t *len_out);
/* Committed objects of a PG in name order, after `after` ("" = from the start). cb: 0 go on. */
typedef int (*store_list_cb)(void *arg, const char *name);
int store_list(struct store *st, uint64_t pg, const char *after, store_list_cb cb, void *arg);
/* Committed PG log entries with seq >= from, in order. cb: 0 go on. */
typedef int (*store_pglog_cb)(void *arg, uint64_t seq, const void *entry, size_t len);
int store_pglog_read(struct store *st, uint64_t pg, uint64_t from, store_pglog_cb cb, void *arg);

struct store_fsck_report {
	uint64_t objects;
	uint64_t extents;
	uint64_t units_used;
	uint64_t errors;       /* overlaps, unallocated or out-of-range extents, bad records */
	uint64_t leaked;       /* allocated units no object references */
	uint64_t bad_blocks;   /* deep: 4 KiB blocks failing their crc */
	uint64_t stray_shards; /* extent-map shard keys no object record owns */
};
/* Flushes and checkpoints, then checks. 0 if clean, -WEFT_E_CORRUPT if not. */
int store_fsck(struct store *st, bool deep, struct store_fsck_report *report_out);

struct store_info {
	uint64_t units_total, units_free, unit;
	uint64_t units_reserved;  /* of units_free, kept for removes and metadata */
	uint64_t reserve_refused; /* data-writing transactions refused by the reserve */
	uint64_t space_waits;	  /* nowait submits told -EAGAIN: freed units awaited a checkpoint */
	uint64_t wal_size, wal_used;
	uint64_t committed_seq, next_lsn;
	uint64_t batches, batched_tx, checkpoints;
	uint64_t replayed_records, replayed_tx, replay_dropped_bytes;
	uint64_t replay_dropped_data; /* 1 if the last record's out-of-line data failed its crc */
	uint64_t onodes_cached, onode_cache_bytes, onode_evictions;
	bool direct_io;
	/* I/O the store issued since mount (weft bench's explainer, "perf dump") */
	uint64_t data_write_bytes; /* unit images written to the data device */
	uint64_t defer_requests;   /* merged writes of deferred small-write images */
	uint64_t defer_bytes;	   /* small-write images held in memory, not yet on the device */
	uint64_t wal_write_bytes;  /* WAL records written */
	uint64_t kv_write_bytes;   /* RocksDB write batches of committed transactions (metadata) */
	uint64_t kv_write_keys;	   /* keys (puts and deletes) in those batches */
	uint64_t data_read_bytes;  /* read back from the data device (reads, RMW, replay checks) */
	uint64_t commit_busy_ns;   /* time at least one WAL batch was in flight */
	uint64_t batch_overlap;	   /* batches whose record was written while an earlier one's
				    * barrier was still running (osd_store_wal_depth > 1) */
	uint64_t read_busy_ns;	   /* time spent reading the data device (reads block the caller) */
};
void store_info_get(const struct store *st, struct store_info *info_out);

/*
 * Space, for the OSD's reports to the monitors (docs/capacity.md). total is
 * the data area (units * unit size); used = data_used + kv_bytes: the
 * allocated units and RocksDB's files and memtables (which grow on the same
 * disk in a default deployment), so it can exceed what the data area alone
 * holds; avail = total - used (0 when used is past total). The WAL is not
 * in used: its region was set aside at mkfs, outside the data area, and its
 * fill swings by up to half its size between checkpoints (wal_bytes shows
 * it). Units freed by committed transactions (removes, truncates,
 * overwrites) are not in used although the allocator hands them out only
 * after the checkpoint that releases them: counted, used would fall by a
 * checkpoint's frees with nothing removed, and an OSD the monitors just
 * marked full would drop back below the ratio while writes stay refused
 * (a submit short of space starts that checkpoint itself: store_tx_nowait).
 * free_pending shows them. Cheap: no I/O, one pass over the pending frees.
 */
struct store_usage {
	uint64_t total, used, avail;
	uint64_t data_used;    /* allocated units, less free_pending, * unit size */
	uint64_t free_pending; /* units freed, back to the allocator at the next checkpoint */
	uint64_t wal_bytes; /* WAL written since the last checkpoint (not in used) */
	uint64_t kv_bytes;  /* RocksDB: SST files + memtables */
};
int store_usage_get(struct store *st, struct store_usage *u_out);

/*
 * Objects and logical bytes (sum of object sizes) of one PG key, as of every
 * submitted transaction: counted from the object records at mount, then kept
 * by each submit. Zeros for a PG the store holds nothing of.
 */
struct store_pg_usage {
	uint64_t objects, bytes;
};
void store_pg_usage_get(const struct store *st, uint64_t pg, struct store_pg_usage *u_out);

/* One run of an object's data on the data device. */
struct store_extent {
	uint64_t offset;     /* byte offset in the object */
	uint64_t length;     /* bytes */
	uint64_t dev_offset; /* byte offset in the data device (osd_data) */
};
/*
 * Where an object's data lives (debugging, and the tests that damage a copy
 * on purpose): its mapped runs in offset order, at most cap of them in
 * ext_out, the total count in *n_out. Sees every submitted transaction, but
 * out-of-line writes may still be in flight: store_flush() first for a
 * stable answer. -ENOENT if the object does not exist.
 */
int store_locate(struct store *st, uint64_t pg, const char *name, struct store_extent *ext_out,
		 unsigned int cap, unsigned int *n_out);

#endif
