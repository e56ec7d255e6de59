/* SPDX-License-Identifier: Apache-2.0 */
/* Store lifecycle: mkfs, mount (with WAL replay), umount, checkpoints. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/conf.h"
#include "common/crc32c.h"
#include "common/log.h"
#include "osd/store/store_int.h"

void store_opts_init(struct store_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->data_size = 10ull << 30;
	o->preallocate = true;
	o->wal_size = 256ull << 20;
	o->alloc_unit = 4096;
	o->large_write = 64 * 1024;
	o->sync = STORE_SYNC_AUTO;
	o->wal_depth = STORE_WAL_DEPTH_DEFAULT;
	o->direct_io = true;
	o->onode_cache_bytes = STORE_ONODE_CACHE_DEFAULT;
	o->batch_data = 64ull << 20;
	o->defer_batch = 1ull << 20;
	o->reserve_pct = 2;
}

int store_opts_from_conf(const struct conf *conf, struct store_opts *o)
{
	const char *entity = conf_entity(conf);
	const char *sync;

	store_opts_init(o);
	o->data_path = conf_get_str(conf, CONF_OSD_DATA);
	o->wal_path = conf_get_str(conf, CONF_OSD_WAL);
	o->db_path = conf_get_str(conf, CONF_OSD_DB);
	o->data_size = conf_get_size(conf, CONF_OSD_STORE_DATA_SIZE);
	o->preallocate = conf_get_bool(conf, CONF_OSD_STORE_PREALLOCATE);
	o->wal_size = conf_get_size(conf, CONF_OSD_STORE_WAL_SIZE);
	o->alloc_unit = (uint32_t)conf_get_size(conf, CONF_OSD_STORE_ALLOC_UNIT);
	o->large_write = (uint32_t)conf_get_size(conf, CONF_OSD_STORE_LARGE_WRITE);
	o->direct_io = conf_get_bool(conf, CONF_OSD_STORE_DIRECT_IO);
	o->batch_data = conf_get_size(conf, CONF_OSD_STORE_BATCH_DATA);
	o->defer_batch = conf_get_size(conf, CONF_OSD_STORE_DEFER_BATCH);
	o->reserve_pct = (uint32_t)conf_get_int(conf, CONF_OSD_STORE_RESERVE_PCT);
	o->wal_depth = (uint32_t)conf_get_int(conf, CONF_OSD_STORE_WAL_DEPTH);
	sync = conf_get_str(conf, CONF_OSD_STORE_WAL_SYNC);
	if (store_sync_parse(sync, &o->sync) != 0) {
		log_error("store",
			  "osd_store_wal_sync = %s: expected auto, uring, dsync, thread or "
			  "inline",
			  sync);
		return -EINVAL;
	}
	o->fsid = conf_get_str(conf, CONF_FSID);
	if (entity && strncmp(entity, "osd.", 4) == 0)
		o->osd_id = (uint32_t)strtoul(entity + 4, NULL, 10);
	return 0;
}

static bool store_wal_separate(const struct store_opts *o)
{
	return o->wal_path && o->wal_path[0];
}

/* Open a device or file; O_DIRECT unless unsupported there (then a warning). */
static int store_dev_open(const char *path, int flags, bool want_direct, bool *direct_out)
{
	int fd = -1;

	if (want_direct)
		fd = open(path, flags | O_DIRECT | O_CLOEXEC, 0644);
	if (fd < 0 && want_direct && errno == EINVAL) {
		log_warn("store",
			 "%s: O_DIRECT not supported by this filesystem; using buffered "
			 "I/O (durability still comes from fdatasync)",
			 path);
		want_direct = false;
	}
	if (fd < 0 && !want_direct)
		fd = open(path, flags | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	*direct_out = want_direct;
	return fd;
}

static int store_dev_size(int fd, uint64_t *size_out)
{
	struct stat sb;

	if (fstat(fd, &sb) != 0)
		return -errno;
	if (S_ISBLK(sb.st_mode)) {
		uint64_t sz;

		if (ioctl(fd, BLKGETSIZE64, &sz) != 0)
			return -errno;
		*size_out = sz;
		return 0;
	}
	*size_out = (uint64_t)sb.st_size;
	return 0;
}

int store_pwrite(struct store *st, int fd, const void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n =
		    pwrite(fd, (const uint8_t *)buf + done, len - done, (off_t)(off + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)n;
	}
	(void)st;
	return 0;
}

int store_pread(struct store *st, void *buf, size_t len, uint64_t off)
{
	uint64_t t0 = clock_now_ns();
	size_t done = 0;
	bool all, any;

	/* small writes not yet on the device are read from memory (store_defer.c) */
	any = store_defer_overlay(st, buf, len, off, &all);
	if (any && all)
		return 0;

	while (done < len) {
		ssize_t n =
		    pread(st->data_fd, (uint8_t *)buf + done, len - done, (off_t)(off + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	if (any)
		store_defer_overlay(st, buf, len, off, &all);
	st->info.data_read_bytes += len;
	st->info.read_busy_ns += clock_now_ns() - t0;
	return 0;
}

static uint32_t store_sb_crc(const struct store_sb *sb)
{
	struct store_sb c = *sb;

	c.crc = 0;
	return crc32c(0, &c, sizeof(c));
}

/* Zero a region with large aligned writes (also turns file extents into written ones,
 * so later fdatasyncs do not have to journal extent conversions). */
static bool store_is_blk(int fd)
{
	struct stat sb;

	return fstat(fd, &sb) == 0 && S_ISBLK(sb.st_mode);
}

/*
 * mkfs on a block device: tell it the data area is free (like mkfs.ext4),
 * so an SSD starts with every block erased. Only a hint: a device without
 * discard is fine. The superblock and the WAL region are written, not
 * discarded, so nothing mkfs writes depends on what discard leaves behind.
 */
static void store_discard(int fd, uint64_t off, uint64_t len, const char *path)
{
	uint64_t range[2] = {off, len};

	if (len == 0)
		return;
	if (ioctl(fd, BLKDISCARD, range) != 0 && errno != EOPNOTSUPP)
		log_warn("store", "mkfs %s: discard of %llu MiB failed: %s (continuing)", path,
			 (unsigned long long)(len >> 20), strerror(errno));
}

static int store_zero_region(int fd, uint64_t off, uint64_t len)
{
	const size_t chunk = 1u << 20;
	void *z;
	int rc = 0;

	if (posix_memalign(&z, WAL_BLOCK, chunk) != 0)
		return -ENOMEM;
	memset(z, 0, chunk);
	for (uint64_t o = 0; o < len && rc == 0; o += chunk) {
		size_t n = len - o < chunk ? (size_t)(len - o) : chunk;

		if (pwrite(fd, z, n, (off_t)(off + o)) != (ssize_t)n)
			rc = errno ? -errno : -EIO;
	}
	free(z);
	return rc;
}

static void store_random_fsid(char *out)
{
	uint8_t r[16];

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		memset(r, 0x5a, sizeof(r));
	r[6] = (r[6] & 0x0f) | 0x40;
	r[8] = (r[8] & 0x3f) | 0x80;
	snprintf(out, STORE_FSID_LEN,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", r[0], r[1],
		 r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14],
		 r[15]);
}

/* Block-sized, aligned image of a small on-disk header. */
static int store_write_block(int fd, const void *hdr, size_t len, uint64_t off)
{
	void *blk;
	int rc = 0;

	if (posix_memalign(&blk, WAL_BLOCK, WAL_BLOCK) != 0)
		return -ENOMEM;
	memset(blk, 0, WAL_BLOCK);
	memcpy(blk, hdr, len);
	if (pwrite(fd, blk, WAL_BLOCK, (off_t)off) != WAL_BLOCK)
		rc = errno ? -errno : -EIO;
	free(blk);
	return rc;
}

struct store_walhdr {
	uint64_t magic;
	char fsid[STORE_FSID_LEN];
	uint32_t osd_id;
	uint32_t nonce;
};

int store_mkfs(const struct store_opts *o)
{
	struct store_sb sb = {.magic = STORE_SB_MAGIC, .version = STORE_LAYOUT_VERSION};
	struct store_ckpt ck = {.pos = 0, .lsn = 1, .seq = 0};
	int data_fd = -1, wal_fd = -1, rc;
	uint64_t zero = 0, size = 0;
	struct kv *kv = NULL;
	rocksdb_writebatch_t *wb;
	bool direct, is_blk = false;

	if (!o->data_path || !o->data_path[0] || !o->db_path || !o->db_path[0]) {
		log_error("store", "mkfs osd.%u: osd_data and osd_db must be set", o->osd_id);
		return -EINVAL;
	}
	if (o->alloc_unit < STORE_CSUM_BLOCK || (o->alloc_unit & (o->alloc_unit - 1)) ||
	    o->wal_size < 16 * WAL_BLOCK || o->wal_size % WAL_BLOCK) {
		log_error("store",
			  "mkfs osd.%u: alloc unit %u must be a power of two >= 4 KiB, "
			  "wal size %llu a multiple of 4 KiB >= 64 KiB",
			  o->osd_id, o->alloc_unit, (unsigned long long)o->wal_size);
		return -EINVAL;
	}
	rc = store_dev_open(o->data_path, O_RDWR | O_CREAT, o->direct_io, &direct);
	if (rc < 0) {
		log_error("store", "mkfs osd.%u: open data %s: %s", o->osd_id, o->data_path,
			  strerror(-rc));
		return rc;
	}
	data_fd = rc;
	rc = store_dev_size(data_fd, &size);
	is_blk = rc == 0 && store_is_blk(data_fd);
	if (rc == 0 && !is_blk && size < o->data_size) {
		/*
		 * A file smaller than asked for is grown; a block device is what it
		 * is. Reserving the space up front means a full filesystem is seen
		 * here, not as a write error later; a filesystem without fallocate
		 * gets a sparse file either way.
		 */
		if ((!o->preallocate || fallocate(data_fd, 0, 0, (off_t)o->data_size) != 0) &&
		    ftruncate(data_fd, (off_t)o->data_size) != 0)
			rc = -errno;
		size = o->data_size;
	}
	if (rc != 0) {
		log_error("store", "mkfs osd.%u: size data %s: %s", o->osd_id, o->data_path,
			  strerror(-rc));
		goto out;
	}
	sb.osd_id = o->osd_id;
	if (o->fsid && o->fsid[0])
		snprintf(sb.fsid, sizeof(sb.fsid), "%s", o->fsid);
	else
		store_random_fsid(sb.fsid);
	sb.dev_size = size;
	sb.unit = o->alloc_unit;
	sb.wal_size = o->wal_size;
	sb.wal_separate = store_wal_separate(o);
	if (getrandom(&sb.wal_nonce, sizeof(sb.wal_nonce), 0) != sizeof(sb.wal_nonce))
		sb.wal_nonce = 0x9e3779b9u;
	if (sb.wal_separate) {
		struct store_walhdr wh = {
		    .magic = STORE_WALHDR_MAGIC, .osd_id = o->osd_id, .nonce = sb.wal_nonce};

		sb.wal_base = WAL_BLOCK;
		sb.data_base = STORE_REGION_ALIGN;
		memcpy(wh.fsid, sb.fsid, sizeof(wh.fsid));
		rc = store_dev_open(o->wal_path, O_RDWR | O_CREAT, o->direct_io, &direct);
		if (rc < 0) {
			log_error("store", "mkfs osd.%u: open wal %s: %s", o->osd_id, o->wal_path,
				  strerror(-rc));
			goto out;
		}
		wal_fd = rc;
		rc = store_dev_size(wal_fd, &size);
		if (rc == 0 && size < sb.wal_base + sb.wal_size &&
		    ftruncate(wal_fd, (off_t)(sb.wal_base + sb.wal_size)) != 0)
			rc = -errno;
		if (rc == 0)
			rc = store_write_block(wal_fd, &wh, sizeof(wh), 0);
		if (rc == 0)
			rc = store_zero_region(wal_fd, sb.wal_base, sb.wal_size);
		if (rc == 0 && fdatasync(wal_fd) != 0)
			rc = -errno;
	} else {
		sb.wal_base = STORE_REGION_ALIGN;
		sb.data_base = (sb.wal_base + sb.wal_size + STORE_REGION_ALIGN - 1) /
			       STORE_REGION_ALIGN * STORE_REGION_ALIGN;
		rc = store_zero_region(data_fd, sb.wal_base, sb.wal_size);
	}
	if (rc != 0) {
		log_error("store", "mkfs osd.%u: prepare wal: %s", o->osd_id, strerror(-rc));
		goto out;
	}
	if (sb.dev_size < sb.data_base + 16ull * sb.unit) {
		log_error("store", "mkfs osd.%u: data device %s too small (%llu bytes)", o->osd_id,
			  o->data_path, (unsigned long long)sb.dev_size);
		rc = -ENOSPC;
		goto out;
	}
	sb.nunits = (sb.dev_size - sb.data_base) / sb.unit;
	sb.crc = store_sb_crc(&sb);
	if (is_blk)
		store_discard(data_fd, sb.data_base, sb.nunits * sb.unit, o->data_path);
	rc = kv_open(o->db_path, true, &kv);
	if (rc != 0) {
		log_error("store", "mkfs osd.%u: create db %s: %s (already a store?)", o->osd_id,
			  o->db_path, strerror(-rc));
		goto out;
	}
	wb = rocksdb_writebatch_create();
	rocksdb_writebatch_put(wb, "S", 1, (const char *)&sb, sizeof(sb));
	rocksdb_writebatch_put(wb, "C", 1, (const char *)&ck, sizeof(ck));
	rocksdb_writebatch_put(wb, "M", 1, (const char *)&zero, sizeof(zero));
	rc = kv_write(kv, wb, true);
	rocksdb_writebatch_destroy(wb);
	if (rc == 0)
		rc = store_write_block(data_fd, &sb, sizeof(sb), 0);
	if (rc == 0 && fdatasync(data_fd) != 0)
		rc = -errno;
	if (rc == 0)
		log_info("store", "mkfs osd.%u: fsid %s, %llu units of %u bytes, wal %s %llu MiB",
			 o->osd_id, sb.fsid, (unsigned long long)sb.nunits, sb.unit,
			 sb.wal_separate ? o->wal_path : "in data device",
			 (unsigned long long)(sb.wal_size >> 20));
out:
	kv_close(kv);
	if (wal_fd >= 0)
		close(wal_fd);
	close(data_fd);
	return rc;
}

void store_fail(struct store *st, int rc, const char *what)
{
	if (st->failed)
		return;
	st->failed = rc < 0 ? rc : -EIO;
	store_err(st, "%s: %s; store now refuses writes", what, strerror(-st->failed));
}

/*
 * The checkpoint record: frees of transactions <= seq marked free in the
 * persisted bitmap, every dirty bitmap chunk, and C. The chunks' images are
 * copied into the batch, so later commits may mark them dirty again.
 */
static rocksdb_writebatch_t *store_ckpt_batch(struct store *st, uint64_t seq, uint64_t vend,
					      uint64_t lsn)
{
	struct store_ckpt ck = {.pos = vend % st->sb.wal_size, .lsn = lsn, .seq = seq};
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();

	/* Frees of transactions now durable elsewhere become reusable. */
	for (uint64_t i = 0; i < st->nfrees; i++) {
		struct store_free *f = &st->frees[i];

		if (f->seq <= seq)
			store_alloc_persist_mark(st, f->start, f->len, false);
	}
	for (uint64_t c = 0; c < st->nchunks; c++) {
		uint8_t key[16];
		uint64_t first = c * KV_CHUNK_UNITS / 64;
		uint64_t words = (st->sb.nunits + 63) / 64 - first;

		if (!st->chunk_dirty[c])
			continue;
		if (words > KV_CHUNK_UNITS / 64)
			words = KV_CHUNK_UNITS / 64;
		rocksdb_writebatch_put(wb, (const char *)key, kv_key_chunk(key, c),
				       (const char *)&st->persisted.bits[first], words * 8);
	}
	memset(st->chunk_dirty, 0, st->nchunks);
	rocksdb_writebatch_put(wb, "C", 1, (const char *)&ck, sizeof(ck));
	return wb;
}

/* The checkpoint is durable: its frees go back to the allocator and the WAL is trimmed. */
static void store_ckpt_done(struct store *st, uint64_t seq, uint64_t vend, uint64_t lsn)
{
	uint64_t released = 0, kept = 0;

	for (uint64_t i = 0; i < st->nfrees; i++) {
		struct store_free *f = &st->frees[i];

		if (f->seq <= seq) {
			alloc_mark(&st->live, f->start, f->len, false);
			released += f->len;
		} else {
			st->frees[kept++] = *f;
		}
	}
	st->nfrees = kept;
	st->vtail = vend;
	st->ckpt_seq = seq;
	st->ckpt_ms = clock_now_ms();
	st->info.checkpoints++;
	log_debug("store", "osd.%u: checkpoint seq %llu lsn %llu, released %llu units", st->osd_id,
		  (unsigned long long)seq, (unsigned long long)lsn, (unsigned long long)released);
}

int store_ckpt_write(struct store *st, uint64_t seq, uint64_t vend, uint64_t lsn)
{
	rocksdb_writebatch_t *wb = store_ckpt_batch(st, seq, vend, lsn);
	int rc = kv_write(st->kv, wb, true);

	rocksdb_writebatch_destroy(wb);
	if (rc == 0)
		store_ckpt_done(st, seq, vend, lsn);
	return rc;
}

/*
 * The asynchronous checkpoint (docs/store.md, rule 3), in steps the pipeline
 * drives from the reactor:
 *   start: cover what is committed now (seq, end of its last record, next
 *          LSN); issue every deferred small-write image still queued;
 *   DRAIN: wait for the deferred writes issued up to then (the committed
 *          transactions' out-of-line data is already durable: their barrier
 *          covered it);
 *   SYNC:  fdatasync the data device in the helper thread, through a file
 *          descriptor of its own (ck_fd): the kernel reports a writeback
 *          error once per open file, and a batch's barrier on data_fd may
 *          have taken it; a failure any batch reports fails the store at
 *          once (store_batch_op_result), and every step checks st->failed;
 *   KV:    write the bitmap chunks and C and push RocksDB's WAL buffer to
 *          its file (on the reactor: write(), no sync; after the data sync,
 *          so C can never be durable before the data), then fdatasync the
 *          WAL files in the helper (kv_sync_files: why not RocksDB's own
 *          sync is there);
 *   then:  trim the WAL and hand the frees back.
 */
static int store_ck_sync_run(struct store_job *job)
{
	struct store_ck *ck = (struct store_ck *)((uint8_t *)job - offsetof(struct store_ck, job));

	if (ck->state == STORE_CK_SYNC)
		return fdatasync(ck->st->ck_fd) == 0 ? 0 : -errno;
	return kv_sync_files(ck->st->kv);
}

static void store_ck_end(struct store *st, int rc, const char *what)
{
	st->ck.state = STORE_CK_IDLE;
	st->ck.rc = rc;
	if (rc != 0 && what)
		store_fail(st, rc, what);
}

static void store_ck_job_done(struct store *st, struct store_job *job)
{
	struct store_ck *ck = &st->ck;
	rocksdb_writebatch_t *wb;
	int rc = job->rc;

	if (ck->state == STORE_CK_SYNC) {
		if (rc == 0 && st->failed)
			rc = st->failed;
		if (rc != 0) {
			store_ck_end(st, rc, "checkpoint: data device sync");
			return;
		}
		wb = store_ckpt_batch(st, ck->seq, ck->vend, ck->lsn);
		rc = kv_write(st->kv, wb, false);
		rocksdb_writebatch_destroy(wb);
		if (rc == 0)
			rc = kv_flush_wal(
			    st->kv); /* a write() here, errors seen here; the sync there */
		ck->state = STORE_CK_KV;
		if (rc == 0)
			rc = store_worker_submit(&st->sync_worker, &ck->job);
		if (rc != 0)
			store_ck_end(st, rc, "checkpoint: rocksdb write");
		return;
	}
	if (rc != 0) {
		st->kv->write_failed = true; /* kv_write's rule: nothing after a failed write */
		store_ck_end(st, rc, "checkpoint: rocksdb wal sync");
		return;
	}
	if (st->failed) {
		/*
		 * A write or barrier failed while C was being written: C may be
		 * durable already (it covers only what was committed and synced
		 * before), but nothing of the failed store is trimmed or freed.
		 */
		store_ck_end(st, st->failed, NULL);
		return;
	}
	store_ckpt_done(st, ck->seq, ck->vend, ck->lsn);
	store_ck_end(st, 0, NULL);
}

int store_ckpt_start(struct store *st)
{
	struct store_ck *ck = &st->ck;
	uint64_t seq = st->committed_seq;

	if (st->failed)
		return st->failed;
	if (ck->state != STORE_CK_IDLE)
		return 0;
	if (seq == st->ckpt_seq && (st->nfrees == 0 || st->frees[0].seq > seq))
		return 0; /* nothing committed since the last one, no free waiting for one */
	ck->seq = seq;
	ck->vend = st->commit_vend;
	/* The LSN after the last committed record: the oldest written batch in flight, if any. */
	ck->lsn = st->next_lsn;
	for (struct store_batch *b = st->b_head; b; b = b->next) {
		if (!b->open) {
			ck->lsn = b->lsn;
			break;
		}
	}
	/* Small writes' images go to the data device first (rule 3). */
	if (st->defer_q)
		store_defer_issue(st);
	ck->fence_id = st->defer_ids;
	ck->fence = st->defer_inflight;
	ck->st = st;
	ck->job = (struct store_job){store_ck_sync_run, store_ck_job_done, 0};
	ck->state = STORE_CK_DRAIN;
	store_ckpt_advance(st);
	return 1;
}

void store_ckpt_defer_done(struct store *st, uint64_t id)
{
	if (st->ck.state == STORE_CK_DRAIN && id <= st->ck.fence_id && st->ck.fence > 0)
		st->ck.fence--;
}

void store_ckpt_advance(struct store *st)
{
	int rc;

	if (st->ck.state != STORE_CK_DRAIN)
		return; /* idle, or a helper job is out: its completion moves it on */
	if (st->failed) {
		store_ck_end(st, st->failed, NULL);
		return;
	}
	if (st->ck.fence > 0)
		return;
	st->ck.state = STORE_CK_SYNC;
	rc = store_worker_submit(&st->sync_worker, &st->ck.job);
	if (rc != 0)
		store_ck_end(st, rc, "checkpoint: helper thread");
}

int store_checkpoint_idle(struct store *st, uint64_t age_ms)
{
	int rc;

	/* move a running checkpoint on (no commits, no callbacks here) */
	rc = store_reap(st, false);
	if (rc < 0)
		return rc;
	store_ckpt_advance(st);
	/* frees are queued in transaction order: the first is the oldest */
	if (st->failed || st->nfrees == 0 || st->frees[0].seq > st->committed_seq ||
	    clock_now_ms() - st->ckpt_ms < age_ms)
		return st->failed;
	rc = store_ckpt_start(st);
	return rc < 0 ? rc : 0;
}

/* Wait until no checkpoint runs; completions are only accounted, no callback fires. */
static int store_ck_wait(struct store *st)
{
	while (st->ck.state != STORE_CK_IDLE) {
		int rc = store_reap(st, false);

		if (rc < 0)
			return rc;
		store_ckpt_advance(st);
		if (st->ck.state == STORE_CK_IDLE)
			break;
		if (rc == 0) {
			rc = store_sleep(st);
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

int store_checkpoint(struct store *st)
{
	int rc;

	if (st->failed)
		return st->failed;
	/* one that runs covers less than what is committed now: let it end first */
	rc = store_ck_wait(st);
	if (rc == 0)
		rc = store_ckpt_start(st);
	if (rc > 0) {
		rc = store_ck_wait(st);
		if (rc == 0)
			rc = st->ck.rc;
	}
	return rc < 0 ? rc : st->failed;
}

void store_info_get(const struct store *st, struct store_info *info_out)
{
	struct store_info i = st->info;

	i.units_total = st->sb.nunits;
	i.units_free = st->live.nfree;
	i.units_reserved = st->reserve_units;
	i.unit = st->sb.unit;
	i.wal_size = st->sb.wal_size;
	i.wal_used = st->vhead - st->vtail;
	i.committed_seq = st->committed_seq;
	i.next_lsn = st->next_lsn;
	i.direct_io = st->direct;
	i.onodes_cached = st->hcount;
	i.onode_cache_bytes = st->cache_bytes;
	i.defer_bytes = st->defer_bytes;
	*info_out = i;
}
