/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Objects and logical bytes by PG key, for the OSD's PG_STATS (weft df).
 * Counted once from the object records at mount (after replay, so RocksDB
 * is exact), then kept by every successful submit from the snapshots the
 * submit takes of the objects it changes (store_tx.c): a failed submit
 * changes nothing here either.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "osd/store/store_int.h"

static uint64_t store_pgstat_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return k;
}

static struct store_pgstat *store_pgstat_find(const struct store *st, uint64_t pg)
{
	if (st->pgstat_cap == 0)
		return NULL;
	for (uint64_t i = store_pgstat_hash(pg) & (st->pgstat_cap - 1);;
	     i = (i + 1) & (st->pgstat_cap - 1)) {
		struct store_pgstat *e = &st->pgstat[i];

		if (!e->used || e->pg == pg)
			return e;
	}
}

static struct store_pgstat *store_pgstat_slot(struct store *st, uint64_t pg)
{
	struct store_pgstat *e;

	if ((st->pgstat_n + 1) * 2 > st->pgstat_cap) {
		uint64_t cap = st->pgstat_cap ? st->pgstat_cap * 2 : 64;
		struct store_pgstat *old = st->pgstat, *t = calloc(cap, sizeof(*t));
		uint64_t ocap = st->pgstat_cap;

		if (t == NULL)
			return NULL;
		st->pgstat = t;
		st->pgstat_cap = cap;
		for (uint64_t i = 0; i < ocap; i++)
			if (old[i].used)
				*store_pgstat_find(st, old[i].pg) = old[i];
		free(old);
	}
	e = store_pgstat_find(st, pg);
	if (!e->used) {
		e->used = true;
		e->pg = pg;
		st->pgstat_n++;
	}
	return e;
}

void store_pgstat_delta(struct store *st, uint64_t pg, bool had, uint64_t old_size, bool has,
			uint64_t new_size)
{
	struct store_pgstat *e;

	if (had == has && (!has || old_size == new_size))
		return;
	e = store_pgstat_slot(st, pg);
	if (e == NULL)
		return; /* out of memory: the counts of this PG go stale, nothing else */
	e->objects += (int64_t)has - (int64_t)had;
	e->bytes += (has ? (int64_t)new_size : 0) - (had ? (int64_t)old_size : 0);
}

static int store_pgstat_one(void *arg, const uint8_t *key, size_t klen, const uint8_t *val,
			    size_t vlen)
{
	struct store *st = arg;
	uint64_t size;

	/* "O" be64(pg) name -> record: magic u32, cpb u32, size u64, ... */
	if (klen < 10 || vlen < 16)
		return 0;
	memcpy(&size, val + 8, 8);
	store_pgstat_delta(st, kv_get_be64(key + 1), false, 0, true, size);
	return 0;
}

int store_pgstat_load(struct store *st)
{
	return kv_iter(st->kv, (const uint8_t *)"O", 1, NULL, 0, store_pgstat_one, st);
}

void store_pgstat_fini(struct store *st)
{
	free(st->pgstat);
	st->pgstat = NULL;
	st->pgstat_cap = st->pgstat_n = 0;
}

void store_pg_usage_get(const struct store *st, uint64_t pg, struct store_pg_usage *u_out)
{
	const struct store_pgstat *e = store_pgstat_find(st, pg);

	u_out->objects = e != NULL && e->used && e->objects > 0 ? (uint64_t)e->objects : 0;
	u_out->bytes = e != NULL && e->used && e->bytes > 0 ? (uint64_t)e->bytes : 0;
}

int store_usage_get(struct store *st, struct store_usage *u_out)
{
	struct store_usage u = {0};
	uint64_t sst = 0, mem = 0, pending = 0, held = st->sb.nunits - st->live.nfree;

	/* freed units stay allocated in live until their checkpoint: held counts them */
	for (uint64_t i = 0; i < st->nfrees; i++)
		pending += st->frees[i].len;
	if (pending > held)
		pending = held;
	u.total = st->sb.nunits * st->sb.unit;
	u.free_pending = pending * st->sb.unit;
	u.data_used = (held - pending) * st->sb.unit;
	u.wal_bytes = st->vhead - st->vtail;
	/* properties of a live database; a failure leaves the part at 0 */
	rocksdb_property_int(st->kv->db, "rocksdb.total-sst-files-size", &sst);
	rocksdb_property_int(st->kv->db, "rocksdb.size-all-mem-tables", &mem);
	u.kv_bytes = sst + mem;
	u.used = u.data_used + u.kv_bytes; /* the WAL's region is fixed: not in used */
	u.avail = u.used < u.total ? u.total - u.used : 0;
	*u_out = u;
	return 0;
}
