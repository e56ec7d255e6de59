/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "osd/store/kv.h"

/*
 * RocksDB holds only metadata here, and its defaults (two 64 MiB memtables
 * and a 32 MiB block cache) alone would exceed the store's share of
 * osd_memory_target (docs/osd.md): at most 2 x 16 MiB of memtables and an
 * 8 MiB block cache, about 40 MiB in all.
 */
#define KV_MEMTABLE_BYTES    (16u << 20)
#define KV_MEMTABLES	     2
#define KV_BLOCK_CACHE_BYTES (8u << 20)

int kv_open(const char *path, bool create, struct kv **kv_out)
{
	struct kv *kv = calloc(1, sizeof(*kv));
	char *err = NULL;
	int rc = -EIO;

	if (!kv)
		return -ENOMEM;
	kv->opts = rocksdb_options_create();
	rocksdb_options_set_create_if_missing(kv->opts, create);
	rocksdb_options_set_error_if_exists(kv->opts, create);
	/* Recover the longest consistent prefix of RocksDB's own WAL after a crash: our
	 * batches are ordered and replay re-applies what is missing. */
	rocksdb_options_set_wal_recovery_mode(kv->opts, 2 /* kPointInTimeRecovery */);
	rocksdb_options_set_max_open_files(kv->opts, 256);
	/*
	 * Only fatal messages in RocksDB's own LOG file. librocksdb 7.8 (Debian)
	 * is built with asserts, and its LOG writer aborts the process on the
	 * first line it writes after one of its writes failed: on a full file
	 * system the error handler's own report of the failed WAL write does
	 * exactly that (test_db_full; the same assert stopped an OSD in the verbs
	 * VM on a tmpfs), so a full disk was a crash instead of an error. Every
	 * error RocksDB returns is logged by this file instead, in our log.
	 */
	rocksdb_options_set_info_log_level(kv->opts, 4 /* FATAL */);
	rocksdb_options_set_write_buffer_size(kv->opts, KV_MEMTABLE_BYTES);
	rocksdb_options_set_max_write_buffer_number(kv->opts, KV_MEMTABLES);
	kv->cache = rocksdb_cache_create_lru(KV_BLOCK_CACHE_BYTES);
	kv->topts = rocksdb_block_based_options_create();
	rocksdb_block_based_options_set_block_cache(kv->topts, kv->cache);
	/*
	 * A bloom filter per SST (10 bits a key, ~1 % false positives): every
	 * new object name is first looked up and not found, which without one
	 * read the index and a data block of every level (issue 16: 9.5 % of a
	 * small write's CPU). The table options own the policy.
	 */
	rocksdb_block_based_options_set_filter_policy(kv->topts,
						      rocksdb_filterpolicy_create_bloom_full(10));
	/*
	 * And one over the memtables' whole keys (2 % of their size): the same
	 * lookup of a new name otherwise searches every memtable's skip list
	 * (FindGreaterOrEqual and its key comparisons, ~4 % of a small write's
	 * CPU at QD32, docs/performance.md) to find nothing.
	 */
	rocksdb_options_set_memtable_prefix_bloom_size_ratio(kv->opts, 0.02);
	rocksdb_options_set_memtable_whole_key_filtering(kv->opts, 1);
	/*
	 * RocksDB's own WAL is kept in its buffer and written when the buffer
	 * fills or a checkpoint pushes it (kv_flush_wal, docs/store.md rule 3),
	 * not once per transaction: the store's WAL already holds every
	 * transaction since the last checkpoint and replay re-applies those
	 * past RocksDB's M, and point-in-time recovery still gives a prefix.
	 */
	rocksdb_options_set_manual_wal_flush(kv->opts, 1);
	rocksdb_options_set_block_based_table_factory(kv->opts, kv->topts);
	kv->db = rocksdb_open(kv->opts, path, &err);
	if (!kv->db) {
		log_error("store", "rocksdb open %s: %s", path, err ? err : "?");
		if (err && (strstr(err, "No such file") || strstr(err, "does not exist")))
			rc = -ENOENT;
		else if (err && strstr(err, "exists"))
			rc = -EEXIST;
		else if (err && (strstr(err, "Permission") || strstr(err, "Read-only")))
			rc = -EACCES;
		rocksdb_free(err);
		rocksdb_options_destroy(kv->opts);
		rocksdb_block_based_options_destroy(kv->topts);
		rocksdb_cache_destroy(kv->cache);
		free(kv);
		return rc;
	}
	kv->path = strdup(path);
	if (!kv->path) {
		kv_close(kv);
		return -ENOMEM;
	}
	kv->wo_async = rocksdb_writeoptions_create();
	kv->wo_sync = rocksdb_writeoptions_create();
	rocksdb_writeoptions_set_sync(kv->wo_sync, 1);
	kv->ro = rocksdb_readoptions_create();
	*kv_out = kv;
	return 0;
}

void kv_close(struct kv *kv)
{
	char *err = NULL;

	if (!kv)
		return;
	/* what the buffer still holds (manual_wal_flush); a failed store writes nothing more */
	if (!kv->write_failed) {
		rocksdb_flush_wal(kv->db, 1, &err);
		if (err) {
			log_error("store", "rocksdb wal flush at close: %s", err);
			rocksdb_free(err);
		}
	}
	rocksdb_close(kv->db);
	if (kv->wo_async)
		rocksdb_writeoptions_destroy(kv->wo_async);
	if (kv->wo_sync)
		rocksdb_writeoptions_destroy(kv->wo_sync);
	if (kv->ro)
		rocksdb_readoptions_destroy(kv->ro);
	free(kv->path);
	rocksdb_options_destroy(kv->opts);
	rocksdb_block_based_options_destroy(kv->topts);
	rocksdb_cache_destroy(kv->cache);
	free(kv);
}

int kv_get(struct kv *kv, const void *key, size_t klen, void **val_out, size_t *vlen_out)
{
	char *err = NULL;
	size_t vlen = 0;
	char *v = rocksdb_get(kv->db, kv->ro, key, klen, &vlen, &err);
	void *copy;

	if (err) {
		log_error("store", "rocksdb get: %s", err);
		rocksdb_free(err);
		return -EIO;
	}
	if (!v)
		return -ENOENT;
	copy = malloc(vlen ? vlen : 1);
	if (!copy) {
		rocksdb_free(v);
		return -ENOMEM;
	}
	memcpy(copy, v, vlen);
	rocksdb_free(v);
	*val_out = copy;
	*vlen_out = vlen;
	return 0;
}

int kv_write(struct kv *kv, rocksdb_writebatch_t *wb, bool sync)
{
	char *err = NULL;

	/*
	 * RocksDB 7.8's WAL writer asserts when appended to after a failed
	 * append, and a retryable error can let a later write reach it (fixed
	 * upstream in 2024): nothing more is written once one write failed. The
	 * store has failed by then anyway (store_fail) and refuses writes.
	 */
	if (kv->write_failed)
		return -EIO;
	rocksdb_write(kv->db, sync ? kv->wo_sync : kv->wo_async, wb, &err);
	/* manual_wal_flush: a sync write must also push out the buffered ones before it */
	if (!err && sync)
		rocksdb_flush_wal(kv->db, 1, &err);
	if (err) {
		log_error("store", "rocksdb write: %s%s", err,
			  strstr(err, "No space") ? " (the file system holding osd_db is full)"
						  : "");
		rocksdb_free(err);
		kv->write_failed = true;
		return -EIO;
	}
	return 0;
}

int kv_flush_wal(struct kv *kv)
{
	char *err = NULL;

	if (kv->write_failed)
		return -EIO;
	rocksdb_flush_wal(kv->db, 0, &err);
	if (err) {
		log_error("store", "rocksdb wal write: %s%s", err,
			  strstr(err, "No space") ? " (the file system holding osd_db is full)"
						  : "");
		rocksdb_free(err);
		kv->write_failed = true;
		return -EIO;
	}
	return 0;
}

int kv_sync_files(const struct kv *kv)
{
	int dfd = open(kv->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;
	struct dirent *e;
	DIR *d;

	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		rc = -errno;
		close(dfd);
		return rc;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		int fd;

		if (n < 5 || strcmp(e->d_name + n - 4, ".log") != 0)
			continue;
		fd = openat(dfd, e->d_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			if (errno != ENOENT) /* deleted meanwhile: its memtable is in an SST */
				rc = -errno;
			continue;
		}
		if (fdatasync(fd) != 0)
			rc = -errno;
		close(fd);
	}
	/* a log RocksDB created since the last sync must not vanish with its directory entry */
	if (rc == 0 && fsync(dfd) != 0)
		rc = -errno;
	if (rc != 0)
		log_error("store", "rocksdb wal sync in %s: %s", kv->path, strerror(-rc));
	closedir(d);
	return rc;
}

static size_t kv_key_obj(uint8_t *buf, char type, uint64_t pg, const char *name)
{
	size_t n = strlen(name);

	buf[0] = (uint8_t)type;
	kv_be64(buf + 1, pg);
	memcpy(buf + 9, name, n);
	return 9 + n;
}

size_t kv_key_onode(uint8_t *buf, uint64_t pg, const char *name)
{
	return kv_key_obj(buf, 'O', pg, name);
}

size_t kv_key_shard(uint8_t *buf, uint64_t pg, const char *name, uint64_t k)
{
	size_t n = kv_key_obj(buf, 'E', pg, name);

	buf[n++] = 0;
	kv_be64(buf + n, k);
	return n + 8;
}

void kv_key_shard_range(uint8_t *lo, size_t *lolen, uint8_t *hi, size_t *hilen, uint64_t pg,
			const char *name)
{
	size_t n = kv_key_obj(lo, 'E', pg, name);

	memcpy(hi, lo, n);
	lo[n] = 0;
	hi[n] = 1;
	*lolen = *hilen = n + 1;
}

size_t kv_key_attr(uint8_t *buf, uint64_t pg, const char *name, const char *attr)
{
	size_t n = kv_key_obj(buf, 'X', pg, name), a = strlen(attr);

	buf[n++] = 0;
	memcpy(buf + n, attr, a);
	return n + a;
}

void kv_key_attr_range(uint8_t *lo, size_t *lolen, uint8_t *hi, size_t *hilen, uint64_t pg,
		       const char *name)
{
	size_t n = kv_key_obj(lo, 'X', pg, name);

	memcpy(hi, lo, n);
	lo[n] = 0;
	hi[n] = 1;
	*lolen = *hilen = n + 1;
}

size_t kv_key_pglog(uint8_t *buf, uint64_t pg, uint64_t seq)
{
	buf[0] = 'L';
	kv_be64(buf + 1, pg);
	kv_be64(buf + 9, seq);
	return 17;
}

size_t kv_key_chunk(uint8_t *buf, uint64_t chunk)
{
	buf[0] = 'B';
	kv_be64(buf + 1, chunk);
	return 9;
}

int kv_iter(struct kv *kv, const uint8_t *prefix, size_t plen, const uint8_t *start, size_t slen,
	    kv_iter_cb cb, void *arg)
{
	rocksdb_iterator_t *it = rocksdb_create_iterator(kv->db, kv->ro);
	char *err = NULL;
	int rc = 0;

	if (start)
		rocksdb_iter_seek(it, (const char *)start, slen);
	else
		rocksdb_iter_seek(it, (const char *)prefix, plen);
	for (; rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		size_t klen, vlen;
		const char *k = rocksdb_iter_key(it, &klen);
		const char *v = rocksdb_iter_value(it, &vlen);

		if (klen < plen || memcmp(k, prefix, plen) != 0)
			break;
		rc = cb(arg, (const uint8_t *)k, klen, (const uint8_t *)v, vlen);
		if (rc != 0)
			break;
	}
	rocksdb_iter_get_error(it, &err);
	if (err) {
		log_error("store", "rocksdb iterate: %s", err);
		rocksdb_free(err);
		rc = -EIO;
	}
	rocksdb_iter_destroy(it);
	return rc < 0 ? rc : 0;
}
