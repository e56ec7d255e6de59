/* SPDX-License-Identifier: Apache-2.0 */
/* Store internals shared by store*.c; not for other modules. */
#ifndef WEFT_OSD_STORE_STORE_INT_H
#define WEFT_OSD_STORE_STORE_INT_H

#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "osd/store/alloc.h"
#include "osd/store/extmap.h"
#include "osd/store/kv.h"
#include "osd/store/store.h"
#include "osd/store/wal.h"

#define STORE_SB_MAGIC	     0x524f545354464557ull /* "WEFTSTOR" */
#define STORE_WALHDR_MAGIC   0x314c415754464557ull /* "WEFTWAL1" */
#define STORE_LAYOUT_VERSION 1u
#define STORE_CSUM_BLOCK     4096u
#define STORE_REGION_ALIGN   (1ull << 20)
#define STORE_FSID_LEN	     40

#define store_err(st, fmt, ...)	 log_error("store", "osd.%u: " fmt, (st)->osd_id, ##__VA_ARGS__)
#define store_warn(st, fmt, ...) log_warn("store", "osd.%u: " fmt, (st)->osd_id, ##__VA_ARGS__)
#define store_info(st, fmt, ...) log_info("store", "osd.%u: " fmt, (st)->osd_id, ##__VA_ARGS__)

/* Superblock: block 0 of the data device, and a copy under "S" in RocksDB. */
struct store_sb {
	uint64_t magic;
	uint32_t version;
	uint32_t osd_id;
	char fsid[STORE_FSID_LEN];
	uint64_t dev_size;
	uint64_t data_base; /* byte offset of unit 0 */
	uint64_t nunits;
	uint32_t unit;
	uint32_t wal_separate;
	uint64_t wal_base;
	uint64_t wal_size;
	uint32_t wal_nonce;
	uint32_t crc; /* crc32c of the struct with crc = 0 */
};

/* Checkpoint ("C"): replay starts at WAL offset pos expecting lsn; seq <= tx are durable. */
struct store_ckpt {
	uint64_t pos;
	uint64_t lsn;
	uint64_t seq;
};

/* Physical ops: the body of a transaction in the WAL (see docs/store.md). */
enum store_pop {
	POP_WRITE = 1,	/* pg name size lblk nblk flags nruns runs[] crcs[] [image] */
	POP_FREE,	/* pblk len: released at the next checkpoint */
	POP_PUNCH,	/* pg name lblk nblk */
	POP_SETSIZE,	/* pg name size */
	POP_REMOVE,	/* pg name */
	POP_ATTR_SET,	/* pg name key value */
	POP_ATTR_RM,	/* pg name key */
	POP_LOG_APPEND, /* pg seq entry */
	POP_LOG_TRIM,	/* pg upto */
	POP_TOUCH,	/* pg name: create if absent */
	POP_UVER,	/* pg name uversion: the owner's version, in the record */
};
#define POP_WRITE_INLINE 1u

struct onode {
	struct onode *next; /* hash chain */
	uint64_t pg;
	char *name;
	bool exists;
	uint64_t seq; /* last transaction that changed it: clean once committed_seq >= seq */
	size_t bytes; /* memory it holds, as counted in st->cache_bytes */
	struct onode_rec rec;
	/* its record in RocksDB (extmap.h): head + shards of STORE_SHARD_BYTES */
	bool whole;	 /* stored another way (an old whole record): next put writes it all */
	bool shards;	 /* RocksDB may hold shard keys ("E") of it */
	uint64_t *dirty; /* shards (k >= 1) changed since the last put, unsorted */
	uint32_t ndirty, dcap;
	/* changed by the body being applied: its record is put once, at the body's end */
	bool put_pending, put_listed;
	struct onode *put_next;
};

/* Extent-map shard size on disk: a small write rewrites at most this much map per shard. */
#define STORE_SHARD_BYTES (256u << 10)

struct store_dreq {
	struct store_dreq *next;	    /* held list */
	struct store_dreq *lnext, **lpprev; /* st->dreq_live */
	struct store_txc *txc;
	const void *buf;
	size_t len;
	uint64_t off;
};

struct store_buf {
	struct store_buf *next;
	void *p;
	size_t len; /* for bufcache_put */
};

/* A submitted transaction. */
struct store_txc {
	struct store_txc *next;
	uint64_t seq;
	uint8_t *body;
	size_t blen, bcap;
	rocksdb_writebatch_t *wb;
	struct alloc_run *allocs; /* units this tx took (for the persisted bitmap at commit) */
	unsigned int nallocs, acap;
	unsigned int data_pending;   /* data-device writes in flight (or held, see below) */
	unsigned int data_held;	     /* test hook: out-of-line writes held until the WAL write */
	bool has_ool;		     /* out-of-line data: the batch's barrier must also cover it */
	uint64_t data_bytes;	     /* data-device bytes this tx writes */
	struct store_batch *awaited; /* the batch that waits for its data writes, if any */
	bool committed;
	struct store_buf *bufs;
	struct store_defer *defer; /* its small writes' images, until its WAL record is built */
	store_commit_cb cb;
	void *arg;
};

struct store_free {
	uint64_t seq;
	uint64_t start, len;
};

/* ---- helper threads (store_worker.c) ---- */

struct store;
struct store_job {
	int (*fn)(struct store_job *job);		       /* runs in the helper thread */
	void (*done)(struct store *st, struct store_job *job); /* then in the owner's, on reap */
	int rc;						       /* fn's result */
};

#define STORE_JQ_SLOTS 64u
/* Single-producer single-consumer ring of jobs. */
struct store_jq {
	_Atomic uint32_t head;
	_Alignas(64) _Atomic uint32_t tail;
	struct store_job *slot[STORE_JQ_SLOTS];
};

struct store_worker {
	char name[16];
	pthread_t th;
	int wake_fd; /* owner -> thread */
	int done_fd; /* thread -> owner: the store's event_fd */
	bool running;
	unsigned int outstanding; /* owner side: submitted, not yet reaped */
	struct store_jq req, done;
};

int store_worker_start(struct store_worker *w, const char *name, int done_fd);
/*
 * -EBUSY if the thread is not running or STORE_JQ_SLOTS jobs are out (the
 * job was not taken); 0 once it was: it will run and come back from reap.
 */
int store_worker_submit(struct store_worker *w, struct store_job *job);
/* A finished job, or NULL. */
struct store_job *store_worker_reap(struct store_worker *w);
/* Every submitted job must have been reaped. */
void store_worker_stop(struct store_worker *w);

/* ---- the commit pipeline (store_commit.c) ---- */

/* A write and/or an fdatasync run by the WAL helper (osd_store_wal_sync = thread). */
struct store_iojob {
	struct store_job job;
	struct store_batch *b;
	int wfd, rwf; /* pwritev2(wfd, buf, len, off, rwf) if len > 0 */
	const void *buf;
	size_t len;
	uint64_t off;
	int sfd; /* then fdatasync(sfd) if >= 0 */
};

/*
 * One group-commit batch: one WAL record, one barrier. Batches are kept in
 * LSN order (st->b_head .. st->b_tail); only the newest may still be open
 * (record not written: waiting for its large writes' data or for WAL room),
 * and they complete strictly in that order (docs/store.md, rule 1).
 */
struct store_batch {
	struct store_batch *next;
	struct store_txc *head, *tail;
	unsigned int ntx;
	bool open;		/* record not written yet */
	bool ool;		/* out-of-line data: the barrier must also cover it */
	bool sync_data;		/* the data-device fdatasync is still to be issued */
	bool room_wait;		/* closed, but the WAL has no room for its record yet */
	unsigned int data_wait; /* members whose out-of-line writes are outstanding */
	size_t payload;		/* WAL payload bytes of its members */
	uint64_t data;		/* data-device bytes of its members */
	int ops;		/* its writes and barriers outstanding (io_uring or helper) */
	int rc;
	uint8_t *buf;
	size_t len;
	uint64_t lsn, vend;
	struct store_iojob jrec, jsync; /* osd_store_wal_sync = thread */
};

/* Checkpoint state (store.c): run step by step from the reactor, never blocking it. */
enum store_ck_state {
	STORE_CK_IDLE,
	STORE_CK_DRAIN, /* deferred small-write images issued before it still being written */
	STORE_CK_SYNC,	/* fdatasync of the data device in the helper */
	STORE_CK_KV,	/* checkpoint batch written; RocksDB's WAL being synced in the helper */
};

struct store_ck {
	enum store_ck_state state;
	uint64_t seq, vend, lsn; /* what the checkpoint in progress covers */
	uint64_t fence_id;	 /* deferred write requests with id <= this must complete */
	unsigned int fence;	 /* ... and this many of them still have not */
	struct store_job job;
	struct store *st;
	int rc; /* result of the last checkpoint that ended */
};

struct store {
	uint32_t osd_id;
	struct store_opts opts;
	struct store_sb sb;
	int data_fd, wal_fd;
	int ck_fd; /* the data device again, for the checkpoint's fdatasync only (store.c) */
	bool direct;
	uint32_t cpb;  /* crcs per unit */
	uint32_t span; /* units per extent-map shard (STORE_SHARD_BYTES, at least 1) */
	struct kv *kv;
	struct alloc live;	 /* allocations as of the last submit */
	struct alloc persisted;	 /* what the "B" chunks say as of the last commit */
	uint64_t reserve_units;	 /* opts.reserve_pct of the units: not for data writes */
	uint64_t reserve_log_ms; /* last "reserve reached" warning (one per 10 s) */
	uint64_t ckpt_ms;	 /* when the last checkpoint was written (store_checkpoint_idle) */
	uint8_t *chunk_dirty;
	uint64_t nchunks;
	struct io_uring ring;
	bool ring_ok;
	int event_fd; /* signalled by the ring on each completion; -1 if none */

	struct onode **htab;
	uint64_t hsize, hcount;
	uint64_t cache_bytes; /* sum of onode->bytes */
	uint64_t trim_cursor; /* bucket where the next eviction scan starts */
	struct onode *put_list; /* records with a put pending (store_onode_puts) */

	/* commit pipeline (store_commit.c) */
	struct store_txc *q_head, *q_tail;   /* submitted, not yet in a batch */
	struct store_batch *b_head, *b_tail; /* batches in flight, oldest first */
	unsigned int nbatches;
	struct store_txc *lg_head; /* committed, data writes still in flight */
	unsigned int plugged;	   /* store_plug() depth: submissions only queue */
	struct store_dreq *held;   /* test hook: out-of-line data writes not yet issued */
	uint64_t busy_t0_ns; /* when the pipeline last went from idle to busy (commit_busy_ns) */
	struct store_dreq *dreq_live;	/* out-of-line data writes in flight (or held) */
	struct store_rd *rd_done;	/* asynchronous reads finished, callbacks not yet run */
	unsigned int rd_inflight;	/* asynchronous reads started, callbacks not yet run */
	uint64_t rd_t0_ns;		/* when rd_inflight last went from 0 to 1 (read_busy_ns) */
	int failed;
	struct store_worker wal_worker;	 /* osd_store_wal_sync = thread */
	struct store_worker sync_worker; /* checkpoints: data fdatasync, RocksDB WAL sync */
	struct store_ck ck;
	uint64_t defer_ids; /* id of the last deferred write request issued */

	/* deferred small writes (store_defer.c) */
	struct defer_unit **defer_hash;		    /* by physical unit; NULL until first use */
	struct store_defer *defer_q, *defer_q_tail; /* published, not yet issued, oldest first */
	struct store_defer *defer_dead;		    /* kept readable after a failed write */
	uint64_t defer_q_bytes;			    /* images in defer_q */
	uint64_t defer_bytes;			    /* images held (queued and in flight) */
	unsigned int defer_inflight;		    /* merged writes in flight */

	uint64_t next_seq, committed_seq, next_lsn;
	uint64_t vhead, vtail; /* WAL virtual positions: head = next write, tail = ckpt */
	uint64_t commit_vend;  /* end of the last committed record */
	uint64_t ckpt_seq;
	struct store_free *frees;
	uint64_t nfrees, fcap;

	uint8_t *bounce; /* aligned, STORE_BOUNCE bytes, for reads */
	struct store_info info;

	/* objects and bytes by PG key (store_pgstat.c), open addressing */
	struct store_pgstat *pgstat;
	uint64_t pgstat_cap, pgstat_n;
};

struct store_pgstat {
	uint64_t pg;
	bool used;
	int64_t objects, bytes;
};

#define STORE_BOUNCE		  (4u << 20)
#define STORE_ONODE_CACHE_DEFAULT (32ull << 20)
#define STORE_MAX_RUNS		  4096u

/* store.c */
int store_pread(struct store *st, void *buf, size_t len, uint64_t off);
int store_pwrite(struct store *st, int fd, const void *buf, size_t len, uint64_t off);
/* Synchronous checkpoint record (mount only: the data device was just synced). */
int store_ckpt_write(struct store *st, uint64_t seq, uint64_t vend, uint64_t lsn);
void store_fail(struct store *st, int rc, const char *what);
/*
 * Start a checkpoint of what is committed now, unless one runs or nothing
 * is to be gained: 1 started, 0 not needed, -errno. It proceeds from
 * store_ckpt_advance() (called by the pipeline on every poll) and never
 * blocks the caller.
 */
int store_ckpt_start(struct store *st);
void store_ckpt_advance(struct store *st);
/* A deferred write request with this id completed (store_defer.c). */
void store_ckpt_defer_done(struct store *st, uint64_t id);

/* store_onode.c */
/* How store_body_apply treats a body (flags). */
#define STORE_BODY_META	  1u /* apply to the object records and the RocksDB batch */
#define STORE_BODY_REPLAY 2u /* re-mark allocations, re-write inline data, re-queue frees */
#define STORE_BODY_VERIFY 4u /* only check out-of-line data on the device against its crcs */
#define STORE_BODY_NOPUT  8u /* leave the changed records for the caller's store_onode_puts */

int store_onode_get(struct store *st, uint64_t pg, const char *name, bool create,
		    struct onode **on_out);
void store_onode_cache_fini(struct store *st);
/* on's memory changed (its map): count it again in st->cache_bytes. */
void store_onode_account(struct store *st, struct onode *on);
/*
 * Evict clean object records (committed to RocksDB) until the cache is back
 * under opts.onode_cache_bytes. Only where no onode pointer is held: at the
 * start of the public entry points that look objects up.
 */
void store_onode_trim(struct store *st);
/* Shards of on covering [lblk, lblk + n) changed (written out by the next put). */
int store_onode_dirty(struct store *st, struct onode *on, uint64_t lblk, uint64_t n);
/* The record's head and every changed shard into wb (empty shards deleted). */
int store_onode_put(struct store *st, struct onode *on, rocksdb_writebatch_t *wb);
/*
 * The records the bodies applied since the last call changed, each put into
 * wb once (a write and the version it sets are one key, not two); wb NULL
 * forgets them (a failed transaction).
 */
int store_onode_puts(struct store *st, rocksdb_writebatch_t *wb);
/* An object record from RocksDB: its head (val) and, if it has any, its shards. */
int store_onode_load(struct store *st, uint64_t pg, const char *name, const void *val, size_t vlen,
		     struct onode *on);
/*
 * Apply one transaction body (flags STORE_BODY_*). VERIFY alone changes nothing and
 * returns -WEFT_E_CORRUPT if a block of an out-of-line write does not match its crc.
 */
int store_body_apply(struct store *st, uint64_t seq, const uint8_t *body, size_t blen,
		     rocksdb_writebatch_t *wb, unsigned int flags);
int store_free_add(struct store *st, uint64_t seq, uint64_t start, uint64_t len);
void store_alloc_persist_mark(struct store *st, uint64_t start, uint64_t len, bool used);

/* store_pgstat.c */
/* Count every object record in RocksDB (mount, after replay). */
int store_pgstat_load(struct store *st);
/* One object of pg went from (had, old_size) to (has, new_size). */
void store_pgstat_delta(struct store *st, uint64_t pg, bool had, uint64_t old_size, bool has,
			uint64_t new_size);
void store_pgstat_fini(struct store *st);

/* store_defer.c: small writes' data-area writes, batched (see there) */
struct store_defer;
/* io_uring tags: a malloc'd pointer (16-byte aligned) | its kind in the low bits */
#define STORE_TAG_MASK	   15ull
#define STORE_TAG_DREQ	   0ull /* struct store_dreq: an out-of-line data write */
#define STORE_TAG_DEFER	   1ull /* struct defer_req: deferred small-write images */
#define STORE_TAG_WALWRITE 2ull /* struct store_batch: its record write */
#define STORE_TAG_BARRIER  3ull /* struct store_batch: an fdatasync it waits for */
#define STORE_TAG_READ	   4ull /* struct store_rd: one segment of an asynchronous read */
/*
 * Hold a small write's unit images (buf, bufcache, now the store's) for runs;
 * readable at once. body_off: where the images belong in txc's body (left
 * unwritten there: store_defer_splice fills them in the WAL record).
 */
int store_defer_add(struct store *st, struct store_txc *txc, void *buf, size_t buflen,
		    const struct alloc_run *runs, unsigned int nruns, size_t body_off);
void store_defer_cancel(struct store *st, struct store_txc *txc); /* the submit failed */
/* txc's body with its images in place, into dst (txc->blen bytes): its WAL record. */
void store_defer_splice(const struct store *st, const struct store_txc *txc, uint8_t *dst);
/* Its record is built (or it failed without one): the images may go to the data area. */
void store_defer_publish(struct store *st, struct store_txc *txc);
void store_defer_issue(struct store *st);
void store_defer_done(struct store *st, uint64_t tag, int res);
void store_defer_fini(struct store *st);
/* Copy deferred units' images over buf = data area [off, off+len); *all_out: it covered all. */
bool store_defer_overlay(struct store *st, void *buf, size_t len, uint64_t off, bool *all_out);
const uint8_t *store_defer_image(const struct store *st, uint64_t u);

/* store_aread.c: reads that do not block the caller */
void store_aread_done(struct store *st, void *rd, int res); /* a read SQE completed */
int store_aread_poll(struct store *st);			  /* callbacks of finished reads */

/* store_commit.c */
void store_pipeline_kick(struct store *st);
/*
 * Take completions (io_uring and the helpers) and update the pipeline's
 * accounting; commits and callbacks happen only in store_poll(). wait: block
 * until at least one arrives (only while some I/O of the ring is in flight).
 */
int store_reap(struct store *st, bool wait);
/* Block on the store's eventfd until a completion of the ring or a helper arrives. */
int store_sleep(struct store *st);
/* Every data write in flight lands (store_data_settle over the whole device). */
int store_drain_data(struct store *st);
/* An out-of-line data write in flight (or held) into device bytes [off, off + len)? */
bool store_data_busy(const struct store *st, uint64_t off, uint64_t len);
/* Wait for those only: a device read of the range then sees what was submitted. */
int store_data_settle(struct store *st, uint64_t off, uint64_t len);
/* Helper threads for the WAL (thread mode) and checkpoints; mount / umount. */
int store_pipeline_init(struct store *st);
void store_pipeline_fini(struct store *st);
/* out_of_line: data the WAL does not carry (held back while the test hook is set). */
int store_data_write(struct store *st, struct store_txc *txc, const void *buf, size_t len,
		     uint64_t unit, bool out_of_line);
void store_txc_destroy(struct store_txc *txc);

#endif
