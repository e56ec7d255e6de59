/* SPDX-License-Identifier: Apache-2.0 */
/* Mount: open devices, check identities, load the allocator, replay the WAL. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "common/log.h"
#include "common/version.h"
#include "include/weft/weft.h"
#include "osd/store/store_int.h"

struct store_walhdr {
	uint64_t magic;
	char fsid[STORE_FSID_LEN];
	uint32_t osd_id;
	uint32_t nonce;
};

static int store_open_dev(struct store *st, const char *path, const char *what, int *fd_out)
{
	int fd = -1;

	if (st->opts.direct_io) {
		fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC);
		if (fd < 0 && errno == EINVAL) {
			store_warn(st, "%s %s: O_DIRECT not supported here; using buffered I/O",
				   what, path);
			st->direct = false;
		}
	}
	if (fd < 0 && (!st->opts.direct_io || errno == EINVAL))
		fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int rc = -errno;

		store_err(st, "open %s %s: %s%s", what, path, strerror(-rc),
			  rc == -ENOENT			  ? " (run mkfs first?)"
			  : rc == -EACCES || rc == -EROFS ? " (device must be writable)"
							  : "");
		return rc;
	}
	*fd_out = fd;
	return 0;
}

static int store_read_hdr(int fd, void *hdr, size_t len, uint64_t off)
{
	void *blk;
	int rc = 0;

	if (posix_memalign(&blk, WAL_BLOCK, WAL_BLOCK) != 0)
		return -ENOMEM;
	if (pread(fd, blk, WAL_BLOCK, (off_t)off) != WAL_BLOCK)
		rc = errno ? -errno : -EIO;
	else
		memcpy(hdr, blk, len);
	free(blk);
	return rc;
}

static int store_check_sb(struct store *st)
{
	struct store_sb c;
	void *v = NULL;
	size_t vlen;
	int rc = store_read_hdr(st->data_fd, &st->sb, sizeof(st->sb), 0);

	if (rc != 0) {
		store_err(st, "read superblock of %s: %s", st->opts.data_path, strerror(-rc));
		return rc;
	}
	c = st->sb;
	c.crc = 0;
	if (st->sb.magic != STORE_SB_MAGIC || crc32c(0, &c, sizeof(c)) != st->sb.crc) {
		store_err(st, "%s has no valid store superblock (not formatted?)",
			  st->opts.data_path);
		return -WEFT_E_CORRUPT;
	}
	if (st->sb.version > STORE_LAYOUT_VERSION) {
		/* an OSD downgraded below the version that made its store (docs/upgrade.md) */
		store_err(st,
			  "%s: store layout version %u was made by a newer weft; this %s reads "
			  "layout %u: run the newer weft-osd",
			  st->opts.data_path, st->sb.version, weft_version_full(),
			  STORE_LAYOUT_VERSION);
		return -ENOTSUP;
	}
	if (st->sb.version != STORE_LAYOUT_VERSION || st->sb.unit < STORE_CSUM_BLOCK ||
	    st->sb.wal_size < 16 * WAL_BLOCK) {
		store_err(st, "%s: unsupported layout version %u", st->opts.data_path,
			  st->sb.version);
		return -EINVAL;
	}
	rc = kv_get(st->kv, "S", 1, &v, &vlen);
	if (rc != 0 || vlen != sizeof(c) || memcmp(v, &st->sb, sizeof(c)) != 0) {
		store_err(st, "db %s does not belong to data device %s (fsid %s)", st->opts.db_path,
			  st->opts.data_path, st->sb.fsid);
		free(v);
		return -EINVAL;
	}
	free(v);
	st->osd_id = st->sb.osd_id;
	return 0;
}

static int store_open_wal(struct store *st)
{
	struct store_walhdr wh;
	int rc;

	if (!st->sb.wal_separate) {
		st->wal_fd = st->data_fd;
		return 0;
	}
	if (!st->opts.wal_path || !st->opts.wal_path[0]) {
		store_err(st, "store was made with a separate WAL; osd_wal is not set");
		return -EINVAL;
	}
	rc = store_open_dev(st, st->opts.wal_path, "wal", &st->wal_fd);
	if (rc != 0)
		return rc;
	rc = store_read_hdr(st->wal_fd, &wh, sizeof(wh), 0);
	if (rc == 0 && (wh.magic != STORE_WALHDR_MAGIC || wh.nonce != st->sb.wal_nonce ||
			memcmp(wh.fsid, st->sb.fsid, STORE_FSID_LEN) != 0)) {
		store_err(st, "wal %s belongs to another store", st->opts.wal_path);
		rc = -EINVAL;
	}
	return rc;
}

static int store_load_chunk(void *arg, const uint8_t *key, size_t klen, const uint8_t *val,
			    size_t vlen)
{
	struct store *st = arg;
	uint64_t c, first, words;

	if (klen != 9)
		return -EIO;
	c = kv_get_be64(key + 1);
	first = c * KV_CHUNK_UNITS / 64;
	words = (st->sb.nunits + 63) / 64;
	if (c >= st->nchunks || vlen % 8 || vlen / 8 > words - first) {
		store_err(st, "allocator chunk %llu malformed", (unsigned long long)c);
		return -WEFT_E_CORRUPT;
	}
	for (uint64_t w = 0; w < vlen / 8; w++) {
		uint64_t bits;

		memcpy(&bits, val + w * 8, 8);
		for (int b = 0; b < 64; b++) {
			uint64_t u = (first + w) * 64 + (uint64_t)b;

			if ((bits >> b) & 1u && u < st->sb.nunits) {
				alloc_mark(&st->live, u, 1, true);
				alloc_mark(&st->persisted, u, 1, true);
			}
		}
	}
	return 0;
}

static int store_load_state(struct store *st, struct store_ckpt *ck, uint64_t *meta_out)
{
	void *v = NULL;
	size_t vlen;
	int rc;

	st->cpb = st->sb.unit / STORE_CSUM_BLOCK;
	{
		uint64_t shard =
		    st->opts.onode_shard_bytes ? st->opts.onode_shard_bytes : STORE_SHARD_BYTES;
		uint64_t span = shard / st->sb.unit;

		st->span = span < 1 ? 1 : span > (1u << 30) ? 1u << 30 : (uint32_t)span;
	}
	st->reserve_units =
	    st->sb.nunits * (st->opts.reserve_pct > 50 ? 50 : st->opts.reserve_pct) / 100;
	st->nchunks = (st->sb.nunits + KV_CHUNK_UNITS - 1) / KV_CHUNK_UNITS;
	st->chunk_dirty = calloc(st->nchunks ? st->nchunks : 1, 1);
	if (!st->chunk_dirty || alloc_init(&st->live, st->sb.nunits) != 0 ||
	    alloc_init(&st->persisted, st->sb.nunits) != 0)
		return -ENOMEM;
	rc = kv_iter(st->kv, (const uint8_t *)"B", 1, NULL, 0, store_load_chunk, st);
	if (rc != 0)
		return rc;
	rc = kv_get(st->kv, "C", 1, &v, &vlen);
	if (rc == 0 && vlen == sizeof(*ck))
		memcpy(ck, v, sizeof(*ck));
	else if (rc == 0)
		rc = -WEFT_E_CORRUPT;
	free(v);
	v = NULL;
	if (rc == 0)
		rc = kv_get(st->kv, "M", 1, &v, &vlen);
	if (rc == 0 && vlen == 8)
		memcpy(meta_out, v, 8);
	else if (rc == 0)
		rc = -WEFT_E_CORRUPT;
	free(v);
	if (rc == 0 && (ck->pos % WAL_BLOCK || ck->pos >= st->sb.wal_size || *meta_out < ck->seq))
		rc = -WEFT_E_CORRUPT;
	if (rc != 0)
		store_err(st, "db %s: checkpoint or meta record unreadable: %s", st->opts.db_path,
			  weft_strerror(rc));
	return rc;
}

static void store_mark_extent(void *arg, uint64_t lblk, uint64_t pblk, uint64_t len,
			      const uint32_t *crcs)
{
	struct store *st = arg;

	if (pblk < st->sb.nunits && len <= st->sb.nunits - pblk) {
		alloc_mark(&st->live, pblk, len, true);
		store_alloc_persist_mark(st, pblk, len, true);
	}
}

static int store_mark_onode(void *arg, const uint8_t *key, size_t klen, const uint8_t *val,
			    size_t vlen)
{
	struct store *st = arg;
	char name[STORE_NAME_MAX + 1];
	struct onode on = {0};

	if (klen < 10 || klen - 9 > STORE_NAME_MAX)
		return 0;
	memcpy(name, key + 9, klen - 9);
	name[klen - 9] = 0;
	on.pg = kv_get_be64(key + 1);
	on.name = name;
	extmap_init(&on.rec.map, st->cpb);
	if (store_onode_load(st, on.pg, name, val, vlen, &on) == 0)
		extmap_walk(&on.rec.map, 0, UINT64_MAX / 2, store_mark_extent, st);
	extmap_fini(&on.rec.map);
	return 0;
}

/*
 * RocksDB holds transactions the WAL no longer has (the log was damaged after
 * they committed): their allocations were never persisted, so take them from
 * the object records themselves.
 */
static int store_alloc_from_objects(struct store *st)
{
	return kv_iter(st->kv, (const uint8_t *)"O", 1, NULL, 0, store_mark_onode, st);
}

/* Apply one valid record: every transaction in it, in seq order. */
static int store_replay_record(struct store *st, const struct wal_hdr *h, const uint8_t *payload,
			       uint64_t meta, uint64_t *last_seq, uint64_t *ntx)
{
	struct wal_tx_iter it;
	const uint8_t *body;
	uint64_t seq;
	size_t blen;
	int rc;

	wal_tx_iter_init(&it, payload, h->len, h->ntx);
	while ((rc = wal_tx_iter_next(&it, &seq, &body, &blen)) == 1) {
		rocksdb_writebatch_t *wb = NULL;
		bool meta_needed = seq > meta;

		if (seq != *last_seq + 1) {
			store_err(st, "wal lsn %llu: transaction seq %llu, expected %llu",
				  (unsigned long long)h->lsn, (unsigned long long)seq,
				  (unsigned long long)*last_seq + 1);
			return -WEFT_E_CORRUPT;
		}
		if (meta_needed)
			wb = rocksdb_writebatch_create();
		rc = store_body_apply(st, seq, body, blen, wb,
				      STORE_BODY_REPLAY | (meta_needed ? STORE_BODY_META : 0));
		if (rc == 0 && wb) {
			rocksdb_writebatch_put(wb, "M", 1, (const char *)&seq, 8);
			rc = kv_write(st->kv, wb, false);
		}
		if (wb)
			rocksdb_writebatch_destroy(wb);
		if (rc != 0) {
			store_err(st, "replay of seq %llu (wal lsn %llu) failed: %s",
				  (unsigned long long)seq, (unsigned long long)h->lsn,
				  weft_strerror(rc));
			return rc == -EINVAL ? -WEFT_E_CORRUPT : rc;
		}
		*last_seq = seq;
		(*ntx)++;
	}
	if (rc == -EINVAL) {
		store_err(st, "wal lsn %llu: malformed payload", (unsigned long long)h->lsn);
		rc = -WEFT_E_CORRUPT;
	}
	return rc;
}

/*
 * The last record may have been written without its batch's barrier having
 * completed (the record and the out-of-line data go out together): check
 * that data against the crcs the record carries. -WEFT_E_CORRUPT = it is
 * not there, so the record was never acknowledged. A malformed body is left
 * for store_replay_record() to report.
 */
static int store_replay_verify(struct store *st, const struct wal_hdr *h, const uint8_t *payload)
{
	struct wal_tx_iter it;
	const uint8_t *body;
	uint64_t seq;
	size_t blen;
	int rc;

	wal_tx_iter_init(&it, payload, h->len, h->ntx);
	while ((rc = wal_tx_iter_next(&it, &seq, &body, &blen)) == 1) {
		rc = store_body_apply(st, seq, body, blen, NULL, STORE_BODY_VERIFY);
		if (rc != 0)
			return rc == -EINVAL ? 0 : rc;
	}
	return rc == -EINVAL ? 0 : rc;
}

/* Invalidate the header of a dropped tail record, so a later scan never takes it for its LSN. */
static int store_wal_zero_block(struct store *st, uint64_t vpos)
{
	void *blk;
	int rc = 0;

	if (posix_memalign(&blk, WAL_BLOCK, WAL_BLOCK) != 0)
		return -ENOMEM;
	memset(blk, 0, WAL_BLOCK);
	if (pwrite(st->wal_fd, blk, WAL_BLOCK, (off_t)(st->sb.wal_base + vpos % st->sb.wal_size)) !=
	    WAL_BLOCK)
		rc = errno ? -errno : -EIO;
	if (rc == 0 && fdatasync(st->wal_fd) != 0)
		rc = -errno;
	free(blk);
	return rc;
}

/* Where each valid record of the log starts, and which ones a later record proves durable. */
struct replay_rec {
	uint64_t lsn;
	uint64_t proof; /* records with an LSN below this are proven durable by this one */
};

struct replay_map {
	struct replay_rec *v;
	uint64_t n, cap;
};

static int replay_map_add(struct replay_map *m, const struct wal_hdr *h)
{
	if (m->n == m->cap) {
		uint64_t cap = m->cap ? m->cap * 2 : 64;
		struct replay_rec *nv = realloc(m->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		m->v = nv;
		m->cap = cap;
	}
	m->v[m->n++] = (struct replay_rec){h->lsn, h->lsn - h->depth};
	return 0;
}

/*
 * The first LSN of the log's unproven tail: a record is proven durable when
 * a later record was written after its barrier completed (lsn < later.lsn -
 * later.depth). With one batch in flight (depth 0) that is every record but
 * the last, as before; with more, the last few may all lack their barrier.
 */
static uint64_t replay_unproven_from(const struct replay_map *m)
{
	uint64_t proof = 0;

	for (uint64_t i = 0; i < m->n; i++)
		if (m->v[i].proof > proof)
			proof = m->v[i].proof;
	return proof;
}

struct replay_beyond {
	struct store *st;
	uint64_t stop_lsn;
	uint64_t meta;	     /* M at mount: RocksDB has every transaction up to it */
	uint64_t damage_lsn; /* highest record that proves the stop LSN durable */
	uint64_t debris;     /* records of batches in flight at the crash, invalidated */
	uint64_t debris_bytes;
	uint64_t from, len; /* the records just replayed: region offset and length */
	uint64_t *torn;	    /* damaged headers past the stop, invalidated if the mount goes on */
	uint64_t ntorn, tcap;
};

/* Inside the records just replayed (and the end of a lap they skipped, if they wrapped)? */
static bool replay_beyond_replayed(const struct replay_beyond *rb, uint64_t phys)
{
	uint64_t size = rb->st->sb.wal_size;

	return (phys + size - rb->from) % size < rb->len;
}

/*
 * A damaged record with an LSN above the stop: a batch in flight at the
 * crash whose header landed and whose rest did not (or any other damage;
 * it proves nothing either way). Its LSN is written again from the stop
 * on, and a scan that found this header where the new record was expected
 * would stop there: remember it, invalidated once mount knows it goes on.
 * Not inside the records just replayed: a header-like block there is their
 * payload (a client's data), and they are needed until the checkpoint.
 */
static int replay_beyond_torn(struct replay_beyond *rb, uint64_t phys)
{
	if (replay_beyond_replayed(rb, phys))
		return 0;
	if (rb->ntorn == rb->tcap) {
		uint64_t cap = rb->tcap ? rb->tcap * 2 : 16;
		uint64_t *nv = realloc(rb->torn, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		rb->torn = nv;
		rb->tcap = cap;
	}
	rb->torn[rb->ntorn++] = phys;
	return 0;
}

/*
 * A valid record past the stop point: if it was written after the stop
 * record's barrier completed, the log is damaged in the middle; otherwise it
 * is a batch that was in flight with the lost one, never acknowledged (the
 * pipeline completes in LSN order). Either way its header goes, so no later
 * scan can take it for the LSN that will be written elsewhere; damage only
 * once the operator asked for salvage.
 */
static int replay_beyond_cb(void *arg, const struct wal_hdr *h, uint64_t phys, bool intact)
{
	struct replay_beyond *rb = arg;
	bool damage = h->depth >= h->lsn || h->lsn - h->depth > rb->stop_lsn;

	if (!intact)
		return replay_beyond_torn(rb, phys);
	if (!damage && h->first_seq <= rb->meta) {
		/*
		 * Written while the stop record was in flight, but RocksDB has
		 * its transactions: it was committed, and batches commit in LSN
		 * order, so the stop record was acknowledged and is damaged on
		 * the media. Dropping this one as debris would lose acknowledged
		 * transactions quietly (docs/store.md, rule 6).
		 */
		store_warn(rb->st,
			   "wal lsn %llu (seq %llu..) follows the end of the log at lsn %llu and "
			   "RocksDB has its transactions (up to seq %llu): the record at the end "
			   "was acknowledged, so this is damage, not a batch in flight",
			   (unsigned long long)h->lsn, (unsigned long long)h->first_seq,
			   (unsigned long long)rb->stop_lsn, (unsigned long long)rb->meta);
		damage = true;
	}
	if (damage) {
		if (h->lsn > rb->damage_lsn)
			rb->damage_lsn = h->lsn;
		if (!rb->st->opts.wal_salvage)
			return 0;
	} else {
		rb->debris++;
		rb->debris_bytes += wal_rec_size(h->len);
		store_warn(rb->st,
			   "wal lsn %llu (seq %llu..%llu) follows the end of the log at "
			   "lsn %llu but was written before its barrier completed: a batch in "
			   "flight at the crash, never acknowledged; dropping it",
			   (unsigned long long)h->lsn, (unsigned long long)h->first_seq,
			   (unsigned long long)(h->first_seq + h->ntx - 1),
			   (unsigned long long)rb->stop_lsn);
	}
	return store_wal_zero_block(rb->st, phys);
}

/*
 * Replay from the checkpoint. Every record re-marks its allocations, re-writes
 * its inline data and re-queues its frees (all idempotent); metadata is applied
 * only for transactions RocksDB does not have yet (seq > meta), because an
 * object record is a whole-object snapshot and replaying an older one would
 * roll it back. A first pass finds the end of the log and which records a
 * later one proves durable; the second applies the proven ones, and each of
 * the unproven tail only if its out-of-line data checks out: at the first one
 * whose data is missing, it and everything after it is dropped (never
 * acknowledged: batches complete in LSN order).
 */
static int store_replay(struct store *st, const struct store_ckpt *ck, uint64_t meta)
{
	struct replay_map map = {0};
	struct replay_beyond rb = {.st = st};
	struct wal_scan s;
	struct wal_hdr h;
	const uint8_t *payload;
	uint64_t last_seq = ck->seq, ntx = 0, unproven, nrec;
	int rc;

	rc = wal_scan_init(&s, st->wal_fd, st->sb.wal_base, st->sb.wal_size, st->sb.wal_nonce,
			   ck->pos, ck->lsn);
	if (rc != 0)
		return rc;
	while (rc == 0 && (rc = wal_scan_next(&s, &h, &payload)) == 1)
		rc = replay_map_add(&map, &h);
	wal_scan_fini(&s);
	if (rc != 0)
		goto out;
	unproven = replay_unproven_from(&map);
	nrec = map.n;
	rc = wal_scan_init(&s, st->wal_fd, st->sb.wal_base, st->sb.wal_size, st->sb.wal_nonce,
			   ck->pos, ck->lsn);
	if (rc != 0)
		goto out;
	for (uint64_t i = 0; i < nrec; i++) {
		uint64_t vstart = s.vpos;

		rc = wal_scan_next(&s, &h, &payload);
		if (rc == 1 && h.lsn != map.v[i].lsn)
			rc = -EIO; /* the log changed under us */
		if (rc != 1) {
			store_err(st,
				  "wal replay: record lsn %llu unreadable on the second pass: %s",
				  (unsigned long long)map.v[i].lsn, weft_strerror(rc ? rc : -EIO));
			rc = rc ? rc : -EIO;
			break;
		}
		vstart = s.vpos - wal_rec_size(h.len); /* at 0 of the next lap if it wrapped */
		rc = 0;
		if (h.lsn >= unproven) {
			rc = store_replay_verify(st, &h, payload);
			if (rc == -WEFT_E_CORRUPT) {
				store_warn(
				    st,
				    "wal lsn %llu (seq %llu..%llu): out-of-line data of a "
				    "record whose barrier may not have completed is not on the "
				    "data device, so none of it was acknowledged: dropping it "
				    "and the %llu record(s) after it",
				    (unsigned long long)h.lsn, (unsigned long long)h.first_seq,
				    (unsigned long long)(h.first_seq + h.ntx - 1),
				    (unsigned long long)(nrec - i - 1));
				wal_scan_drop_last(&s, vstart, &h);
				st->info.replay_dropped_data = 1;
				rc = 0;
				break;
			}
		}
		if (rc == 0)
			rc = store_replay_record(st, &h, payload, meta, &last_seq, &ntx);
		if (rc != 0)
			break;
	}
	if (rc == 0 && s.stop == WAL_STOP_NONE) {
		/* past the last record again: sets the stop reason (and state) the first pass saw
		 */
		rc = wal_scan_next(&s, &h, &payload);
		if (rc == 1) {
			store_err(st, "wal replay: lsn %llu appeared on the second pass",
				  (unsigned long long)h.lsn);
			rc = -EIO;
		}
	}
	rb.stop_lsn = s.lsn;
	rb.meta = meta;
	rb.from = ck->pos;
	rb.len = s.vpos - ck->pos;
	if (rc == 0)
		rc = wal_scan_probe_beyond(&s, replay_beyond_cb, &rb);
	if (rc == 0 && rb.damage_lsn) {
		store_err(st,
			  "wal damaged mid-log: lsn %llu unreadable (%s) but records up to "
			  "lsn %llu follow; acknowledged transactions would be lost%s",
			  (unsigned long long)s.lsn, wal_stop_name(s.stop),
			  (unsigned long long)rb.damage_lsn,
			  st->opts.wal_salvage ? "; salvage requested, dropping them"
					       : "; refusing to mount (salvage drops them)");
		if (!st->opts.wal_salvage)
			rc = -WEFT_E_CORRUPT;
	}
	if (rc == 0 && (s.stop == WAL_STOP_BADCRC || s.stop == WAL_STOP_BADHDR ||
			s.stop == WAL_STOP_BADDATA)) {
		/* The next record is written here with the same LSN, or at 0 if it does
		 * not fit: then a later scan must not find the dropped one here. */
		rc = store_wal_zero_block(st, s.stop_vpos);
		if (rc == 0 && s.stop_alt)
			rc = store_wal_zero_block(st, s.stop_vpos_alt);
		if (rc != 0)
			store_err(st, "wal: invalidating the dropped tail record: %s",
				  strerror(-rc));
	}
	for (uint64_t i = 0; rc == 0 && i < rb.ntorn; i++) {
		store_warn(st,
			   "wal: damaged record header at offset %llu with an lsn above the end "
			   "of the log (lsn %llu): torn batch of a crash, never acknowledged; "
			   "invalidating it",
			   (unsigned long long)rb.torn[i], (unsigned long long)s.lsn);
		rc = store_wal_zero_block(st, rb.torn[i]);
		if (rc != 0)
			store_err(st, "wal: invalidating a damaged record header: %s",
				  strerror(-rc));
	}
	if (rc == 0 && s.passed_bad > 0)
		store_warn(st,
			   "wal: passed over %llu damaged record(s) of an earlier crash whose lsn "
			   "was written again after a wrap",
			   (unsigned long long)s.passed_bad);
	if (rc == 0) {
		store_info(st,
			   "wal replay: %llu records, %llu transactions from lsn %llu; stopped "
			   "at lsn %llu: %s; dropped %llu bytes",
			   (unsigned long long)s.records, (unsigned long long)ntx,
			   (unsigned long long)ck->lsn, (unsigned long long)s.lsn,
			   wal_stop_name(s.stop),
			   (unsigned long long)(s.dropped + rb.debris_bytes));
		st->info.replayed_records = s.records;
		st->info.replayed_tx = ntx;
		st->info.replay_dropped_bytes = s.dropped + rb.debris_bytes;
		st->next_lsn = s.lsn;
		st->next_seq = last_seq + 1;
		st->committed_seq = last_seq;
		st->vtail = ck->pos;
		st->vhead = st->commit_vend = s.vpos;
		if (meta > last_seq) {
			store_warn(st,
				   "db has transactions up to seq %llu but the wal ends at %llu: "
				   "the wal lost committed records; rebuilding allocations from "
				   "object records",
				   (unsigned long long)meta, (unsigned long long)last_seq);
			st->committed_seq = meta; /* never reuse a seq RocksDB has seen */
			rc = store_alloc_from_objects(st);
		}
		st->next_seq = st->committed_seq + 1;
	}
	wal_scan_fini(&s);
out:
	free(rb.torn);
	free(map.v);
	return rc;
}

int store_mount(const struct store_opts *o, struct store **st_out)
{
	struct store *st = calloc(1, sizeof(*st));
	struct store_ckpt ck;
	uint64_t meta = 0;
	int rc;

	if (!st)
		return -ENOMEM;
	st->opts = *o;
	st->osd_id = o->osd_id;
	st->data_fd = st->wal_fd = st->event_fd = -1;
	st->direct = o->direct_io;
	if (!o->data_path || !o->db_path) {
		store_err(st, "osd_data and osd_db must be set");
		free(st);
		return -EINVAL;
	}
	rc = store_open_dev(st, o->data_path, "data", &st->data_fd);
	if (rc != 0)
		goto err;
	rc = kv_open(o->db_path, false, &st->kv);
	if (rc != 0) {
		store_err(st, "open db %s: %s", o->db_path, strerror(-rc));
		goto err;
	}
	rc = store_check_sb(st);
	if (rc == 0)
		rc = store_open_wal(st);
	if (rc == 0)
		rc = store_load_state(st, &ck, &meta);
	if (rc != 0)
		goto err;
	st->hsize = 1024;
	st->htab = calloc(st->hsize, sizeof(*st->htab));
	if (!st->htab || posix_memalign((void **)&st->bounce, WAL_BLOCK, STORE_BOUNCE) != 0) {
		rc = -ENOMEM;
		goto err;
	}
	rc = -io_uring_queue_init(512, &st->ring, 0);
	if (rc != 0) {
		store_err(st, "io_uring setup: %s", strerror(-rc));
		goto err;
	}
	st->ring_ok = true;
	/*
	 * An eventfd the ring signals on every completion, and the helper
	 * threads after every job, so an owner with nothing else to do sleeps
	 * in poll() instead of spinning while commits are pending.
	 */
	st->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	rc = st->event_fd < 0 ? -errno : io_uring_register_eventfd(&st->ring, st->event_fd);
	if (rc != 0) {
		store_err(st, "completion eventfd: %s", strerror(-rc));
		goto err;
	}
	st->ckpt_seq = ck.seq;
	rc = store_replay(st, &ck, meta);
	if (rc == 0)
		rc = store_pgstat_load(st);
	if (rc != 0)
		goto err;
	/* Start clean: the replayed window becomes durable and the WAL empty. */
	if (fdatasync(st->data_fd) != 0)
		rc = -errno;
	if (rc == 0)
		rc = store_ckpt_write(st, st->committed_seq, st->commit_vend, st->next_lsn);
	if (rc != 0) {
		store_err(st, "post-replay checkpoint: %s", weft_strerror(rc));
		goto err;
	}
	rc = store_pipeline_init(st);
	if (rc != 0)
		goto err;
	store_info(
	    st,
	    "mounted fsid %s: %llu/%llu units free, wal %s, %s I/O, wal sync %s, "
	    "depth %u",
	    st->sb.fsid, (unsigned long long)st->live.nfree, (unsigned long long)st->sb.nunits,
	    st->sb.wal_separate ? st->opts.wal_path : "in data device",
	    st->direct ? "direct" : "buffered", store_sync_name(st->opts.sync), st->opts.wal_depth);
	*st_out = st;
	return 0;
err:
	if (st->ring_ok) {
		store_defer_fini(st);
		io_uring_queue_exit(&st->ring);
	}
	if (st->event_fd >= 0)
		close(st->event_fd);
	store_onode_cache_fini(st);
	store_pgstat_fini(st);
	free(st->htab);
	free(st->bounce);
	free(st->frees);
	free(st->chunk_dirty);
	alloc_fini(&st->live);
	alloc_fini(&st->persisted);
	kv_close(st->kv);
	if (st->wal_fd >= 0 && st->wal_fd != st->data_fd)
		close(st->wal_fd);
	if (st->data_fd >= 0)
		close(st->data_fd);
	free(st);
	return rc;
}

int store_umount(struct store *st)
{
	int rc;

	if (st->ring_ok)
		store_reads_abandon(st);
	rc = store_flush(st);

	if (rc == 0)
		rc = store_checkpoint(st);
	store_pipeline_fini(st); /* the helpers' last jobs, then the threads */
	if (st->ring_ok) {
		store_drain_data(st);
		store_defer_fini(st); /* written by the checkpoint unless the store failed */
		io_uring_queue_exit(&st->ring);
	}
	if (st->event_fd >= 0)
		close(st->event_fd);
	while (st->lg_head) {
		struct store_txc *t = st->lg_head;

		st->lg_head = t->next;
		store_txc_destroy(t);
	}
	store_onode_cache_fini(st);
	store_pgstat_fini(st);
	free(st->htab);
	free(st->bounce);
	free(st->frees);
	free(st->chunk_dirty);
	alloc_fini(&st->live);
	alloc_fini(&st->persisted);
	kv_close(st->kv);
	if (st->wal_fd >= 0 && st->wal_fd != st->data_fd)
		close(st->wal_fd);
	close(st->data_fd);
	free(st);
	return rc;
}
