/* SPDX-License-Identifier: Apache-2.0 */
/* Reads (verified), stat, attributes, listings, PG logs and fsck. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"
#include "common/log.h"
#include "include/weft/weft.h"
#include "osd/store/store_int.h"

int store_stat(struct store *st, uint64_t pg, const char *name, struct store_stat *stat_out)
{
	struct onode *on;
	int rc;

	store_onode_trim(st);
	rc = store_onode_get(st, pg, name, false, &on);

	if (rc != 0)
		return rc;
	stat_out->size = on->rec.size;
	stat_out->version = on->rec.version;
	stat_out->uversion = on->rec.uversion;
	stat_out->blocks = extmap_blocks(&on->rec.map);
	return 0;
}

/* Read n units starting at pblk into the bounce buffer and verify them against crcs. */
static int store_read_verified(struct store *st, const struct onode *on, uint64_t lblk,
			       uint64_t pblk, uint64_t n, const uint32_t *crcs)
{
	uint64_t unit = st->sb.unit;
	/* a data write still in flight into these units lands before the device is read */
	int rc = store_data_settle(st, st->sb.data_base + pblk * unit, n * unit);

	if (rc == 0)
		rc = store_pread(st, st->bounce, n * unit, st->sb.data_base + pblk * unit);

	if (rc != 0) {
		store_err(st, "pg %llx object %s: read at offset %llu: %s",
			  (unsigned long long)on->pg, on->name, (unsigned long long)(lblk * unit),
			  strerror(-rc));
		return rc;
	}
	for (uint64_t i = 0; i < n * st->cpb; i++) {
		if (crc32c(0, st->bounce + i * STORE_CSUM_BLOCK, STORE_CSUM_BLOCK) != crcs[i]) {
			store_err(st,
				  "pg %llx object %s: crc mismatch at offset %llu (device unit "
				  "%llu); returning an error, not the data",
				  (unsigned long long)on->pg, on->name,
				  (unsigned long long)(lblk * unit + i * STORE_CSUM_BLOCK),
				  (unsigned long long)(pblk + i / st->cpb));
			return -WEFT_E_CORRUPT;
		}
	}
	return 0;
}

int store_read(struct store *st, uint64_t pg, const char *name, uint64_t off, uint64_t len,
	       void *buf, uint64_t *read_out)
{
	uint64_t unit = st->sb.unit, end, pos;
	struct onode *on;
	int rc;

	store_onode_trim(st);
	rc = store_onode_get(st, pg, name, false, &on);

	if (rc != 0)
		return rc;
	if (off >= on->rec.size) {
		*read_out = 0;
		return 0;
	}
	end = off + len < on->rec.size && off + len >= off ? off + len : on->rec.size;
	for (pos = off; pos < end;) {
		uint64_t lblk = pos / unit, pblk, run, n, chunk;
		const uint32_t *crcs;

		if (extmap_lookup(&on->rec.map, lblk, &pblk, &crcs, &run) != 0) {
			chunk = run == UINT64_MAX ? end - pos : run * unit - pos % unit;
			if (chunk > end - pos)
				chunk = end - pos;
			memset((uint8_t *)buf + (pos - off), 0, chunk);
			pos += chunk;
			continue;
		}
		n = (end - lblk * unit + unit - 1) / unit;
		if (n > run)
			n = run;
		if (n > STORE_BOUNCE / unit)
			n = STORE_BOUNCE / unit;
		rc = store_read_verified(st, on, lblk, pblk, n, crcs);
		if (rc != 0)
			return rc;
		chunk = n * unit - pos % unit;
		if (chunk > end - pos)
			chunk = end - pos;
		memcpy((uint8_t *)buf + (pos - off), st->bounce + pos % unit, chunk);
		pos += chunk;
	}
	*read_out = end - off;
	return 0;
}

int store_digest(struct store *st, uint64_t pg, const char *name, uint32_t *digest_out)
{
	static uint32_t zero_crc;
	uint64_t unit = st->sb.unit, size, whole;
	uint8_t le[8], tail[STORE_CSUM_BLOCK];
	struct onode *on;
	uint32_t d;
	int rc;

	if (zero_crc == 0) {
		memset(tail, 0, sizeof(tail));
		zero_crc = crc32c(0, tail, sizeof(tail));
	}
	store_onode_trim(st);
	rc = store_onode_get(st, pg, name, false, &on);
	if (rc != 0)
		return rc;
	size = on->rec.size;
	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(size >> (8 * i));
	d = crc32c(0, le, sizeof(le));
	whole = size / STORE_CSUM_BLOCK;
	for (uint64_t b = 0; b < whole;) {
		uint64_t lblk = b * STORE_CSUM_BLOCK / unit, pblk, run, n;
		uint64_t first = b - lblk * (unit / STORE_CSUM_BLOCK);
		const uint32_t *crcs;

		if (extmap_lookup(&on->rec.map, lblk, &pblk, &crcs, &run) != 0) {
			/* a hole: zero blocks up to the next extent */
			n = run == UINT64_MAX ? whole - b : run * st->cpb - first;
			for (uint64_t k = 0; k < n && b < whole; k++, b++)
				d = crc32c(d, &zero_crc, sizeof(zero_crc));
			continue;
		}
		n = run * st->cpb - first;
		for (uint64_t k = 0; k < n && b < whole; k++, b++) {
			uint32_t c = crcs[first + k];

			d = crc32c(d, &c, sizeof(c));
		}
	}
	if (size % STORE_CSUM_BLOCK) {
		uint64_t got = 0;

		rc = store_read(st, pg, name, whole * STORE_CSUM_BLOCK, size % STORE_CSUM_BLOCK,
				tail, &got);
		if (rc != 0)
			return rc;
		d = crc32c(d, tail, got);
	}
	*digest_out = d;
	return 0;
}

struct store_locate_ctx {
	const struct store *st;
	struct store_extent *ext;
	unsigned int cap, n;
};

static void store_locate_piece(void *arg, uint64_t lblk, uint64_t pblk, uint64_t len,
			       const uint32_t *crcs)
{
	struct store_locate_ctx *c = arg;
	uint64_t unit = c->st->sb.unit;

	(void)crcs;
	if (c->n < c->cap)
		c->ext[c->n] =
		    (struct store_extent){.offset = lblk * unit,
					  .length = len * unit,
					  .dev_offset = c->st->sb.data_base + pblk * unit};
	c->n++;
}

int store_locate(struct store *st, uint64_t pg, const char *name, struct store_extent *ext_out,
		 unsigned int cap, unsigned int *n_out)
{
	struct store_locate_ctx c = {.st = st, .ext = ext_out, .cap = cap};
	struct onode *on;
	int rc = store_onode_get(st, pg, name, false, &on);

	if (rc != 0)
		return rc;
	extmap_walk(&on->rec.map, 0, UINT64_MAX / st->sb.unit, store_locate_piece, &c);
	/* the last unit may extend past the object's end: report bytes that exist */
	for (unsigned int i = 0; i < c.n && i < cap; i++) {
		if (ext_out[i].offset + ext_out[i].length > on->rec.size)
			ext_out[i].length =
			    on->rec.size > ext_out[i].offset ? on->rec.size - ext_out[i].offset : 0;
	}
	*n_out = c.n;
	return 0;
}

int store_getattr(struct store *st, uint64_t pg, const char *name, const char *key, void *buf,
		  size_t cap, size_t *len_out)
{
	uint8_t k[KV_KEY_MAX];
	void *v;
	size_t vlen;
	int rc;

	if (strlen(name) > STORE_NAME_MAX || strlen(key) > STORE_ATTR_MAX)
		return -EINVAL;
	rc = kv_get(st->kv, k, kv_key_attr(k, pg, name, key), &v, &vlen);
	if (rc != 0)
		return rc;
	if (vlen > cap) {
		free(v);
		return -ERANGE;
	}
	memcpy(buf, v, vlen);
	free(v);
	*len_out = vlen;
	return 0;
}

struct list_ctx {
	store_list_cb cb;
	void *arg;
	const char *after;
};

static int store_list_one(void *arg, const uint8_t *key, size_t klen, const uint8_t *val,
			  size_t vlen)
{
	struct list_ctx *c = arg;
	char name[STORE_NAME_MAX + 1];

	if (klen - 9 > STORE_NAME_MAX)
		return -EIO;
	memcpy(name, key + 9, klen - 9);
	name[klen - 9] = 0;
	if (c->after[0] && strcmp(name, c->after) <= 0)
		return 0;
	return c->cb(c->arg, name) ? 1 : 0;
}

int store_list(struct store *st, uint64_t pg, const char *after, store_list_cb cb, void *arg)
{
	uint8_t prefix[9], start[KV_KEY_MAX];
	struct list_ctx c = {cb, arg, after ? after : ""};

	if (strlen(c.after) > STORE_NAME_MAX)
		return -EINVAL;
	prefix[0] = 'O';
	kv_be64(prefix + 1, pg);
	return kv_iter(st->kv, prefix, 9, start, kv_key_onode(start, pg, c.after), store_list_one,
		       &c);
}

struct pglog_ctx {
	store_pglog_cb cb;
	void *arg;
};

static int store_pglog_one(void *arg, const uint8_t *key, size_t klen, const uint8_t *val,
			   size_t vlen)
{
	struct pglog_ctx *c = arg;

	if (klen != 17)
		return -EIO;
	return c->cb(c->arg, kv_get_be64(key + 9), val, vlen) ? 1 : 0;
}

int store_pglog_read(struct store *st, uint64_t pg, uint64_t from, store_pglog_cb cb, void *arg)
{
	uint8_t prefix[9], start[17];
	struct pglog_ctx c = {cb, arg};

	prefix[0] = 'L';
	kv_be64(prefix + 1, pg);
	return kv_iter(st->kv, prefix, 9, start, kv_key_pglog(start, pg, from), store_pglog_one,
		       &c);
}

/* ---- fsck ---- */

struct fsck_ctx {
	struct store *st;
	bool deep;
	struct alloc seen;
	struct store_fsck_report r;
	struct onode on;
	/* shard keys: the object of the last one looked at, and whether it owns shards */
	uint8_t okey[KV_KEY_MAX];
	size_t oklen;
	bool owned;
};

static void fsck_extent(void *arg, uint64_t lblk, uint64_t pblk, uint64_t len, const uint32_t *crcs)
{
	struct fsck_ctx *c = arg;
	struct store *st = c->st;

	c->r.extents++;
	if (pblk >= st->sb.nunits || len > st->sb.nunits - pblk) {
		store_err(st, "fsck: pg %llx object %s: extent %llu+%llu beyond the device",
			  (unsigned long long)c->on.pg, c->on.name, (unsigned long long)pblk,
			  (unsigned long long)len);
		c->r.errors++;
		return;
	}
	if (!alloc_range_is(&c->seen, pblk, len, false)) {
		store_err(st, "fsck: pg %llx object %s: extent at unit %llu overlaps another",
			  (unsigned long long)c->on.pg, c->on.name, (unsigned long long)pblk);
		c->r.errors++;
	}
	if (!alloc_range_is(&st->persisted, pblk, len, true)) {
		store_err(st, "fsck: pg %llx object %s: extent at unit %llu is not allocated",
			  (unsigned long long)c->on.pg, c->on.name, (unsigned long long)pblk);
		c->r.errors++;
	}
	alloc_mark(&c->seen, pblk, len, true);
	c->r.units_used += len;
	for (uint64_t done = 0; c->deep && done < len;) {
		uint64_t n = len - done, max = STORE_BOUNCE / st->sb.unit;

		if (n > max)
			n = max;
		if (store_read_verified(st, &c->on, lblk + done, pblk + done, n,
					crcs + done * st->cpb) != 0) {
			/* count every bad 4 KiB block in this piece */
			for (uint64_t i = 0; i < n * st->cpb; i++) {
				if (crc32c(0, st->bounce + i * STORE_CSUM_BLOCK,
					   STORE_CSUM_BLOCK) != crcs[done * st->cpb + i])
					c->r.bad_blocks++;
			}
		}
		done += n;
	}
}

static int fsck_onode(void *arg, const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen)
{
	struct fsck_ctx *c = arg;
	char name[STORE_NAME_MAX + 1];

	c->r.objects++;
	if (klen < 10 || klen - 9 > STORE_NAME_MAX) {
		c->r.errors++;
		return 0;
	}
	memcpy(name, key + 9, klen - 9);
	name[klen - 9] = 0;
	c->on.pg = kv_get_be64(key + 1);
	c->on.name = name;
	extmap_init(&c->on.rec.map, c->st->cpb);
	if (store_onode_load(c->st, c->on.pg, name, val, vlen, &c->on) != 0) {
		extmap_fini(&c->on.rec.map); /* logged with the object by the load */
		c->r.errors++;
		return 0;
	}
	extmap_walk(&c->on.rec.map, 0, UINT64_MAX / 2, fsck_extent, c);
	extmap_fini(&c->on.rec.map);
	return 0;
}

/*
 * A shard key ("E" pg name 0 k) belongs to an object whose head says it has
 * shards. One without (no head, or a head that carries its whole map) is
 * never read, and nothing deletes it: a leak in RocksDB, and wrong extents
 * the day a head of that name says it has shards again. A head fsck_onode
 * already counted as malformed is not counted again here.
 */
static int fsck_shard(void *arg, const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen)
{
	struct fsck_ctx *c = arg;
	struct store *st = c->st;
	size_t olen;
	void *v = NULL;
	size_t hlen;
	int rc;

	(void)val;
	(void)vlen;
	if (klen < 9 + 2 + 8 || klen - 9 > KV_KEY_MAX || key[klen - 9] != 0) {
		store_err(st, "fsck: malformed shard key (%zu bytes)", klen);
		c->r.stray_shards++;
		return 0;
	}
	olen = klen - 9; /* "E" pg name */
	if (olen != c->oklen || memcmp(key + 1, c->okey + 1, olen - 1) != 0) {
		memcpy(c->okey, key, olen);
		c->okey[0] = 'O';
		c->oklen = olen;
		rc = kv_get(st->kv, c->okey, olen, &v, &hlen);
		if (rc == -ENOENT) {
			c->owned = false;
		} else if (rc != 0) {
			c->oklen = 0;
			return rc;
		} else {
			struct onode_rec rec;
			uint32_t span = 0, flags = 0;

			extmap_init(&rec.map, st->cpb);
			rc = onode_head_decode(&rec, v, hlen, &span, &flags);
			extmap_fini(&rec.map);
			c->owned = rc != 0 || (flags & ONODE_F_SHARDS);
			free(v);
		}
		if (!c->owned)
			store_err(st, "fsck: pg %llx object %.*s: shard keys without %s",
				  (unsigned long long)kv_get_be64(key + 1), (int)(olen - 9),
				  (const char *)key + 9,
				  rc == -ENOENT ? "an object record" : "a head that has shards");
	}
	if (!c->owned)
		c->r.stray_shards++;
	return 0;
}

int store_fsck(struct store *st, bool deep, struct store_fsck_report *report_out)
{
	struct fsck_ctx c = {.st = st, .deep = deep};
	int rc;

	/* Quiesce: RocksDB and the persisted bitmap then describe everything. */
	rc = store_flush(st);
	if (rc == 0)
		rc = store_checkpoint(st);
	if (rc == 0)
		rc = store_drain_data(st);
	if (rc != 0)
		return rc;
	if (alloc_init(&c.seen, st->sb.nunits) != 0)
		return -ENOMEM;
	rc = kv_iter(st->kv, (const uint8_t *)"O", 1, NULL, 0, fsck_onode, &c);
	if (rc == 0)
		rc = kv_iter(st->kv, (const uint8_t *)"E", 1, NULL, 0, fsck_shard, &c);
	if (rc == 0) {
		for (uint64_t u = 0; u < st->sb.nunits; u++) {
			if (alloc_is_used(&st->persisted, u) && !alloc_is_used(&c.seen, u))
				c.r.leaked++;
		}
		if (c.r.leaked)
			store_err(st, "fsck: %llu allocated units belong to no object",
				  (unsigned long long)c.r.leaked);
	}
	alloc_fini(&c.seen);
	if (rc != 0)
		return rc;
	log_info("store",
		 "osd.%u: fsck%s: %llu objects, %llu extents, %llu units, %llu errors, "
		 "%llu leaked, %llu bad blocks, %llu stray shard keys",
		 st->osd_id, deep ? " (deep)" : "", (unsigned long long)c.r.objects,
		 (unsigned long long)c.r.extents, (unsigned long long)c.r.units_used,
		 (unsigned long long)c.r.errors, (unsigned long long)c.r.leaked,
		 (unsigned long long)c.r.bad_blocks, (unsigned long long)c.r.stray_shards);
	*report_out = c.r;
	return c.r.errors || c.r.leaked || c.r.bad_blocks || c.r.stray_shards ? -WEFT_E_CORRUPT : 0;
}
