/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Object records in memory (a cache in front of RocksDB that also holds the
 * effects of submitted, not yet committed transactions) and the interpreter
 * of transaction bodies, shared by submit and replay so both do the same thing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"
#include "common/log.h"
#include "include/weft/weft.h"
#include "osd/store/store_int.h"

static uint64_t store_onode_hash(uint64_t pg, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ pg;

	for (const char *p = name; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	return h;
}

static void store_onode_free(struct onode *on)
{
	extmap_fini(&on->rec.map);
	free(on->dirty);
	free(on->name);
	free(on);
}

/* What an object record holds in memory: struct, name, extent array, crcs. */
void store_onode_account(struct store *st, struct onode *on)
{
	size_t b = sizeof(*on) + strlen(on->name) + 1 +
		   (size_t)on->rec.map.cap * sizeof(struct ext) + on->dcap * sizeof(uint64_t);

	for (uint32_t i = 0; i < on->rec.map.n; i++)
		b += (size_t)on->rec.map.v[i].len * on->rec.map.cpb * sizeof(uint32_t);
	st->cache_bytes = st->cache_bytes - on->bytes + b;
	on->bytes = b;
}

/*
 * The cache holds every object touched since mount, and the effects of
 * transactions not yet committed. Unbounded, it grows with the number of
 * objects an OSD has ever served (a few hundred bytes each, more for large
 * objects' crcs) and would outgrow osd_memory_target under sustained load.
 * A clean record (its last change is in RocksDB) can be dropped and read
 * back on the next lookup; a dirty one never is. The scan walks the hash
 * buckets from where the last one stopped (a clock without reference bits)
 * and stops at 90% of the budget so it does not run on every call.
 */
void store_onode_trim(struct store *st)
{
	uint64_t max = st->opts.onode_cache_bytes, goal = max / 10 * 9, scanned = 0;

	if (max == 0 || st->cache_bytes <= max)
		return;
	while (st->cache_bytes > goal && scanned++ < st->hsize) {
		struct onode **pp = &st->htab[st->trim_cursor++ % st->hsize];

		while (*pp) {
			struct onode *on = *pp;

			if (on->seq > st->committed_seq) {
				pp = &on->next;
				continue;
			}
			*pp = on->next;
			st->cache_bytes -= on->bytes;
			st->hcount--;
			st->info.onode_evictions++;
			store_onode_free(on);
		}
	}
}

void store_onode_cache_fini(struct store *st)
{
	st->put_list = NULL; /* a failed replay may leave some: the records go below */
	for (uint64_t i = 0; st->htab && i < st->hsize; i++) {
		while (st->htab[i]) {
			struct onode *on = st->htab[i];

			st->htab[i] = on->next;
			store_onode_free(on);
		}
	}
	st->hcount = 0;
	st->cache_bytes = 0;
}

static void store_onode_rehash(struct store *st)
{
	uint64_t nsize = st->hsize * 2;
	struct onode **nt = calloc(nsize, sizeof(*nt));

	if (!nt)
		return; /* keep the longer chains */
	for (uint64_t i = 0; i < st->hsize; i++) {
		while (st->htab[i]) {
			struct onode *on = st->htab[i];
			uint64_t b = store_onode_hash(on->pg, on->name) % nsize;

			st->htab[i] = on->next;
			on->next = nt[b];
			nt[b] = on;
		}
	}
	free(st->htab);
	st->htab = nt;
	st->hsize = nsize;
}

int store_onode_get(struct store *st, uint64_t pg, const char *name, bool create,
		    struct onode **on_out)
{
	uint64_t b = store_onode_hash(pg, name) % st->hsize;
	uint8_t key[KV_KEY_MAX];
	struct onode *on;
	void *v = NULL;
	size_t vlen;
	int rc;

	for (on = st->htab[b]; on; on = on->next) {
		if (on->pg == pg && strcmp(on->name, name) == 0) {
			if (!on->exists && !create)
				return -ENOENT;
			*on_out = on;
			return 0;
		}
	}
	rc = kv_get(st->kv, key, kv_key_onode(key, pg, name), &v, &vlen);
	if (rc != 0 && rc != -ENOENT)
		return rc;
	if (rc == -ENOENT && !create)
		return -ENOENT;
	on = calloc(1, sizeof(*on));
	if (!on || !(on->name = strdup(name))) {
		free(on);
		free(v);
		return -ENOMEM;
	}
	on->pg = pg;
	extmap_init(&on->rec.map, st->cpb);
	if (rc == 0) {
		rc = store_onode_load(st, pg, name, v, vlen, on);
		free(v);
		if (rc != 0) {
			store_onode_free(on);
			return rc;
		}
		on->exists = true;
	}
	on->next = st->htab[b];
	st->htab[b] = on;
	store_onode_account(st, on);
	if (++st->hcount > st->hsize * 2)
		store_onode_rehash(st);
	*on_out = on;
	return 0;
}

struct shard_load {
	struct store *st;
	struct onode *on;
	uint32_t span;
	size_t plen; /* the object's shard key prefix */
	int rc;
};

static int store_shard_load_one(void *arg, const uint8_t *key, size_t klen, const uint8_t *val,
				size_t vlen)
{
	struct shard_load *l = arg;

	if (klen != l->plen + 8 ||
	    onode_shard_decode(&l->on->rec, l->span, kv_get_be64(key + l->plen), val, vlen) != 0) {
		l->rc = -WEFT_E_CORRUPT;
		return 1;
	}
	return 0;
}

int store_onode_load(struct store *st, uint64_t pg, const char *name, const void *val, size_t vlen,
		     struct onode *on)
{
	uint8_t lo[KV_KEY_MAX], hi[KV_KEY_MAX];
	struct shard_load l = {.st = st, .on = on};
	uint32_t flags;
	size_t hlen;
	int rc;

	rc = onode_head_decode(&on->rec, val, vlen, &l.span, &flags);
	if (rc == 0 && (flags & ONODE_F_SHARDS)) {
		kv_key_shard_range(lo, &l.plen, hi, &hlen, pg, name);
		rc = kv_iter(st->kv, lo, l.plen, NULL, 0, store_shard_load_one, &l);
		if (rc == 0)
			rc = l.rc;
	}
	if (rc == -EINVAL || rc == -WEFT_E_CORRUPT) {
		store_err(st, "pg %llx object %s: object record malformed", (unsigned long long)pg,
			  name);
		return -WEFT_E_CORRUPT;
	}
	if (rc != 0)
		return rc;
	/* an old whole record, or shards of another size: the next change rewrites it all */
	on->whole = l.span != st->span;
	on->shards = (flags & ONODE_F_SHARDS) != 0;
	return 0;
}

int store_onode_dirty(struct store *st, struct onode *on, uint64_t lblk, uint64_t n)
{
	uint64_t k0, k1;

	if (n == 0 || on->whole)
		return 0;
	k0 = onode_shard_of(lblk, st->span);
	k1 = onode_shard_of(lblk + n - 1, st->span);
	for (uint64_t k = k0; k <= k1; k++) {
		bool seen = false;

		for (uint32_t i = 0; i < on->ndirty && !seen; i++)
			seen = on->dirty[i] == k;
		if (seen)
			continue;
		if (on->ndirty == on->dcap) {
			uint32_t cap = on->dcap ? on->dcap * 2 : 4;
			uint64_t *nd = realloc(on->dirty, cap * sizeof(*nd));

			if (!nd)
				return -ENOMEM;
			on->dirty = nd;
			on->dcap = cap;
		}
		on->dirty[on->ndirty++] = k;
	}
	return 0;
}

/*
 * Shard k of on into wb: its pieces, or a delete when it holds none or (shard
 * 0 of a map without other shards) rides in the head. has: the map has shards.
 */
static int store_shard_put(struct store *st, struct onode *on, uint64_t k, bool has,
			   rocksdb_writebatch_t *wb)
{
	uint8_t key[KV_KEY_MAX];
	size_t klen = kv_key_shard(key, on->pg, on->name, k);
	size_t n = k == 0 && !has ? 0 : onode_shard_size(&on->rec, st->span, k);
	uint8_t *v;

	if (n == 0) {
		if (k > 0 || on->shards) /* a shard 0 key exists only while others do */
			rocksdb_writebatch_delete(wb, (const char *)key, klen);
		return 0;
	}
	v = malloc(n);
	if (!v)
		return -ENOMEM;
	onode_shard_encode(&on->rec, st->span, k, v);
	rocksdb_writebatch_put(wb, (const char *)key, klen, (const char *)v, n);
	free(v);
	return 0;
}

int store_onode_put(struct store *st, struct onode *on, rocksdb_writebatch_t *wb)
{
	uint8_t key[KV_KEY_MAX];
	size_t n = onode_head_size(&on->rec, st->span);
	bool has = onode_has_shards(&on->rec, st->span);
	uint8_t *v = malloc(n);
	int rc = 0;

	if (!v)
		return -ENOMEM;
	/* shard 0 moves between the head and its own key when the map crosses shard 0's end */
	if (has != on->shards && !on->whole)
		rc = store_onode_dirty(st, on, 0, 1);
	onode_head_encode(&on->rec, st->span, v);
	rocksdb_writebatch_put(wb, (const char *)key, kv_key_onode(key, on->pg, on->name),
			       (const char *)v, n);
	free(v);
	if (on->whole) {
		/* every shard, after dropping what another shard size may have left */
		const struct extmap *m = &on->rec.map;
		uint64_t last = UINT64_MAX;

		if (on->shards) {
			uint8_t lo[KV_KEY_MAX], hi[KV_KEY_MAX];
			size_t l1, l2;

			kv_key_shard_range(lo, &l1, hi, &l2, on->pg, on->name);
			rocksdb_writebatch_delete_range(wb, (const char *)lo, l1, (const char *)hi,
							l2);
		}
		for (uint32_t i = 0; i < m->n && rc == 0 && has; i++) {
			uint64_t k0 = onode_shard_of(m->v[i].lblk, st->span);
			uint64_t k1 = onode_shard_of(m->v[i].lblk + m->v[i].len - 1, st->span);

			for (uint64_t k = k0; k <= k1 && rc == 0; k++)
				if (k != last)
					rc = store_shard_put(st, on, last = k, true, wb);
		}
		on->whole = false;
	} else {
		for (uint32_t i = 0; i < on->ndirty && rc == 0; i++)
			rc = store_shard_put(st, on, on->dirty[i], has, wb);
	}
	on->ndirty = 0;
	on->shards = has;
	return rc;
}

/* on changed: its record goes into the batch when the body (or transaction) ends. */
static void store_onode_mark(struct store *st, struct onode *on)
{
	on->put_pending = true;
	if (on->put_listed)
		return;
	on->put_listed = true;
	on->put_next = st->put_list;
	st->put_list = on;
}

int store_onode_puts(struct store *st, rocksdb_writebatch_t *wb)
{
	int rc = 0;

	while (st->put_list) {
		struct onode *on = st->put_list;

		st->put_list = on->put_next;
		if (on->put_pending && wb && rc == 0)
			rc = store_onode_put(st, on, wb);
		on->put_pending = false;
		on->put_listed = false;
		on->put_next = NULL;
	}
	return rc;
}

void store_alloc_persist_mark(struct store *st, uint64_t start, uint64_t len, bool used)
{
	alloc_mark(&st->persisted, start, len, used);
	for (uint64_t c = start / KV_CHUNK_UNITS; c <= (start + len - 1) / KV_CHUNK_UNITS; c++)
		st->chunk_dirty[c] = 1;
}

int store_free_add(struct store *st, uint64_t seq, uint64_t start, uint64_t len)
{
	if (st->nfrees == st->fcap) {
		uint64_t cap = st->fcap ? st->fcap * 2 : 256;
		struct store_free *nf = realloc(st->frees, cap * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		st->frees = nf;
		st->fcap = cap;
	}
	st->frees[st->nfrees++] = (struct store_free){seq, start, len};
	return 0;
}

/* Bounds-checked reader over a body (which came from disk on replay). */
struct rd {
	const uint8_t *p, *end;
	bool bad;
};

static const void *rd_take(struct rd *r, size_t n)
{
	const uint8_t *p = r->p;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return NULL;
	}
	r->p += n;
	return p;
}

static uint64_t rd_u64(struct rd *r)
{
	const void *p = rd_take(r, 8);
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return v;
}

static uint32_t rd_u32(struct rd *r)
{
	const void *p = rd_take(r, 4);
	uint32_t v = 0;

	if (p)
		memcpy(&v, p, 4);
	return v;
}

/* A u16-length string into buf (max+1 bytes). */
static void rd_str(struct rd *r, char *buf, size_t max)
{
	uint16_t n = 0;
	const void *p = rd_take(r, 2);

	if (p)
		memcpy(&n, p, 2);
	if (n > max) {
		r->bad = true;
		n = 0;
	}
	p = rd_take(r, n);
	if (p)
		memcpy(buf, p, n);
	buf[r->bad ? 0 : n] = 0;
}

static int store_replay_data(struct store *st, const uint8_t *img, const struct alloc_run *run)
{
	uint64_t bytes = run->len * st->sb.unit, done = 0;

	/* The body is not aligned for O_DIRECT: stage through the bounce buffer. */
	while (done < bytes) {
		size_t n = bytes - done < STORE_BOUNCE ? (size_t)(bytes - done) : STORE_BOUNCE;
		int rc;

		memcpy(st->bounce, img + done, n);
		rc = store_pwrite(st, st->data_fd, st->bounce, n,
				  st->sb.data_base + run->start * st->sb.unit + done);
		if (rc != 0)
			return rc;
		done += n;
	}
	return 0;
}

/*
 * Replay of the last WAL record: its out-of-line data must be on the device
 * with the crcs the record carries. If not, the record's barrier never
 * completed, so none of its transactions was acknowledged (docs/store.md).
 */
static int store_verify_data(struct store *st, const uint8_t *crcs, const struct alloc_run *run)
{
	uint64_t bytes = run->len * st->sb.unit, done = 0;

	while (done < bytes) {
		size_t n = bytes - done < STORE_BOUNCE ? (size_t)(bytes - done) : STORE_BOUNCE;
		int rc = store_pread(st, st->bounce, n,
				     st->sb.data_base + run->start * st->sb.unit + done);

		if (rc != 0)
			return rc;
		for (size_t i = 0; i < n / STORE_CSUM_BLOCK; i++) {
			uint32_t want;

			memcpy(&want, crcs + (done / STORE_CSUM_BLOCK + i) * 4, 4);
			if (crc32c(0, st->bounce + i * STORE_CSUM_BLOCK, STORE_CSUM_BLOCK) != want)
				return -WEFT_E_CORRUPT;
		}
		done += n;
	}
	return 0;
}

static int store_apply_write(struct store *st, struct rd *r, uint64_t seq, rocksdb_writebatch_t *wb,
			     unsigned int how, struct onode *on)
{
	bool meta = how & STORE_BODY_META, replay = how & STORE_BODY_REPLAY;
	bool verify = how & STORE_BODY_VERIFY;
	uint64_t size = rd_u64(r), lblk = rd_u64(r), nblk = rd_u64(r), total = 0;
	uint32_t flags = rd_u32(r), nruns = rd_u32(r);
	const struct alloc_run *runs;
	const uint32_t *crcs;
	const uint8_t *img = NULL;
	struct alloc_run *rc_runs;
	int rc = 0;

	if (r->bad || nruns == 0 || nruns > STORE_MAX_RUNS || nblk == 0 || nblk > (1ull << 32))
		return -EINVAL;
	runs = rd_take(r, nruns * sizeof(struct alloc_run));
	crcs = rd_take(r, nblk * st->cpb * 4);
	if (flags & POP_WRITE_INLINE)
		img = rd_take(r, nblk * st->sb.unit);
	if (r->bad)
		return -EINVAL;
	/* Copy out: the body is not aligned for the structs. */
	rc_runs = malloc(nruns * sizeof(*rc_runs));
	if (!rc_runs)
		return -ENOMEM;
	memcpy(rc_runs, runs, nruns * sizeof(*rc_runs));
	for (uint32_t i = 0; i < nruns; i++) {
		if (rc_runs[i].len == 0 || rc_runs[i].start >= st->sb.nunits ||
		    rc_runs[i].len > st->sb.nunits - rc_runs[i].start)
			rc = -EINVAL;
		total += rc_runs[i].len;
	}
	if (rc == 0 && total != nblk)
		rc = -EINVAL;
	for (uint32_t i = 0, b = 0; rc == 0 && i < nruns; b += rc_runs[i].len, i++) {
		if (verify && !img)
			rc = store_verify_data(
			    st, (const uint8_t *)crcs + (uint64_t)b * st->cpb * 4, &rc_runs[i]);
		if (replay) {
			alloc_mark(&st->live, rc_runs[i].start, rc_runs[i].len, true);
			store_alloc_persist_mark(st, rc_runs[i].start, rc_runs[i].len, true);
			if (img)
				rc = store_replay_data(st, img + (uint64_t)b * st->sb.unit,
						       &rc_runs[i]);
		}
		if (rc == 0 && meta) {
			uint32_t *c = malloc(rc_runs[i].len * st->cpb * 4);

			if (!c) {
				rc = -ENOMEM;
				break;
			}
			memcpy(c, (const uint8_t *)crcs + (uint64_t)b * st->cpb * 4,
			       rc_runs[i].len * st->cpb * 4);
			if (i == 0)
				rc = extmap_punch(&on->rec.map, lblk, nblk, NULL, NULL);
			if (rc == 0)
				rc = extmap_insert(&on->rec.map, lblk + b, rc_runs[i].start,
						   rc_runs[i].len, c);
			free(c);
		}
	}
	free(rc_runs);
	if (rc == 0 && meta)
		rc = store_onode_dirty(st, on, lblk, nblk);
	if (rc == 0 && meta) {
		on->exists = true;
		on->rec.size = size;
		on->rec.version = seq;
		store_onode_mark(st, on);
	}
	return rc;
}

struct punch_dirty {
	struct store *st;
	struct onode *on;
	int rc;
};

/* A piece a punch removed: its shard must be rewritten (or deleted). */
static void store_punch_dirty_cb(void *arg, uint64_t lblk, uint64_t pblk, uint64_t len,
				 const uint32_t *crcs)
{
	struct punch_dirty *pd = arg;

	if (pd->rc == 0)
		pd->rc = store_onode_dirty(pd->st, pd->on, lblk, len);
}

static int store_body_ops(struct store *st, uint64_t seq, const uint8_t *body, size_t blen,
			  rocksdb_writebatch_t *wb, unsigned int flags)
{
	bool meta = flags & STORE_BODY_META, replay = flags & STORE_BODY_REPLAY;
	struct rd r = {body, body + blen, false};
	char name[STORE_NAME_MAX + 1], key[STORE_ATTR_MAX + 1];
	uint8_t k[KV_KEY_MAX], k2[KV_KEY_MAX];
	int rc = 0;

	while (rc == 0 && r.p < r.end) {
		const uint8_t *opp = rd_take(&r, 1);
		uint8_t op = opp ? *opp : 0;
		struct onode *on = NULL;
		uint64_t pg = 0, a, b;
		size_t l1, l2;

		if (op == POP_WRITE || op == POP_PUNCH || op == POP_SETSIZE || op == POP_REMOVE ||
		    op == POP_ATTR_SET || op == POP_ATTR_RM || op == POP_TOUCH || op == POP_UVER) {
			pg = rd_u64(&r);
			rd_str(&r, name, STORE_NAME_MAX);
			if (r.bad || !name[0])
				return -EINVAL;
			if (meta) {
				rc = store_onode_get(st, pg, name, true, &on);
				if (rc != 0)
					return rc;
			}
		}
		switch (op) {
		case POP_WRITE:
			rc = store_apply_write(st, &r, seq, wb, flags, on);
			break;
		case POP_FREE:
			a = rd_u64(&r);
			b = rd_u64(&r);
			if (r.bad || b == 0 || a >= st->sb.nunits || b > st->sb.nunits - a)
				return -EINVAL;
			if (flags & STORE_BODY_VERIFY)
				break;
			if (replay) /* still allocated until the checkpoint that releases it */
				alloc_mark(&st->live, a, b, true);
			rc = store_free_add(st, seq, a, b);
			break;
		case POP_PUNCH:
			a = rd_u64(&r);
			b = rd_u64(&r);
			if (r.bad)
				return -EINVAL;
			if (meta) {
				struct punch_dirty pd = {st, on, 0};

				rc = extmap_punch(&on->rec.map, a, b, store_punch_dirty_cb, &pd);
				on->rec.version = seq;
				if (rc == 0)
					rc = pd.rc;
				if (rc == 0)
					store_onode_mark(st, on);
			}
			break;
		case POP_SETSIZE:
			a = rd_u64(&r);
			if (r.bad)
				return -EINVAL;
			if (meta) {
				on->exists = true;
				on->rec.size = a;
				on->rec.version = seq;
				store_onode_mark(st, on);
			}
			break;
		case POP_TOUCH:
			if (meta && !on->exists) {
				on->exists = true;
				on->rec.size = 0;
				on->rec.version = seq;
				store_onode_mark(st, on);
			}
			break;
		case POP_UVER:
			a = rd_u64(&r);
			if (r.bad || a == 0)
				return -EINVAL;
			if (meta) {
				on->rec.uversion = a;
				store_onode_mark(st, on);
			}
			break;
		case POP_REMOVE:
			if (meta) {
				extmap_fini(&on->rec.map);
				on->rec.size = 0;
				on->rec.uversion = 0;
				on->exists = false;
				on->put_pending = false; /* the deletes below supersede it */
				rocksdb_writebatch_delete(wb, (const char *)k,
							  kv_key_onode(k, pg, name));
				kv_key_attr_range(k, &l1, k2, &l2, pg, name);
				rocksdb_writebatch_delete_range(wb, (const char *)k, l1,
								(const char *)k2, l2);
				if (on->shards) {
					kv_key_shard_range(k, &l1, k2, &l2, pg, name);
					rocksdb_writebatch_delete_range(wb, (const char *)k, l1,
									(const char *)k2, l2);
				}
				on->shards = false;
				on->whole = false;
				on->ndirty = 0;
			}
			break;
		case POP_ATTR_SET: {
			const void *v;
			uint32_t vlen;

			rd_str(&r, key, STORE_ATTR_MAX);
			vlen = rd_u32(&r);
			v = rd_take(&r, vlen);
			if (r.bad)
				return -EINVAL;
			if (meta)
				rocksdb_writebatch_put(wb, (const char *)k,
						       kv_key_attr(k, pg, name, key), v, vlen);
			break;
		}
		case POP_ATTR_RM:
			rd_str(&r, key, STORE_ATTR_MAX);
			if (r.bad)
				return -EINVAL;
			if (meta)
				rocksdb_writebatch_delete(wb, (const char *)k,
							  kv_key_attr(k, pg, name, key));
			break;
		case POP_LOG_APPEND: {
			const void *v;
			uint32_t vlen;

			pg = rd_u64(&r);
			a = rd_u64(&r);
			vlen = rd_u32(&r);
			v = rd_take(&r, vlen);
			if (r.bad)
				return -EINVAL;
			if (meta)
				rocksdb_writebatch_put(wb, (const char *)k, kv_key_pglog(k, pg, a),
						       v, vlen);
			break;
		}
		case POP_LOG_TRIM:
			pg = rd_u64(&r);
			a = rd_u64(&r);
			if (r.bad)
				return -EINVAL;
			if (meta && a != UINT64_MAX)
				rocksdb_writebatch_delete_range(
				    wb, (const char *)k, kv_key_pglog(k, pg, 0), (const char *)k2,
				    kv_key_pglog(k2, pg, a + 1));
			break;
		default:
			return -EINVAL;
		}
		if (on != NULL) { /* changed by this transaction: dirty until it commits */
			on->seq = seq;
			store_onode_account(st, on);
		}
	}
	return rc;
}

int store_body_apply(struct store *st, uint64_t seq, const uint8_t *body, size_t blen,
		     rocksdb_writebatch_t *wb, unsigned int flags)
{
	int rc = store_body_ops(st, seq, body, blen, wb, flags);

	if (flags & STORE_BODY_NOPUT)
		return rc; /* the caller puts them (or forgets them) */
	if (rc == 0 && (flags & STORE_BODY_META))
		return store_onode_puts(st, wb);
	store_onode_puts(st, NULL);
	return rc;
}
