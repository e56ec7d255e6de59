/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Transactions: the caller's logical ops are translated at submit into
 * physical ops (allocations made, block images and crcs computed) that are
 * both applied to the in-memory object records and logged in the WAL, so
 * replay does exactly what submit did. See docs/store.md.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/crc32c.h"
#include "common/log.h"
#include "include/weft/weft.h"
#include "osd/store/bufcache.h"
#include "osd/store/store_int.h"

enum tx_kind {
	TX_WRITE,
	TX_ZERO,
	TX_TRUNC,
	TX_REMOVE,
	TX_SETATTR,
	TX_RMATTR,
	TX_LOG,
	TX_TRIM,
	TX_UVER
};

struct tx_op {
	enum tx_kind kind;
	uint64_t pg;
	char *name;
	char *key;
	uint64_t off, len;
	void *data;
	size_t dlen;
	bool ref; /* data is the caller's (store_tx_write_ref), not a copy */
};

struct store_tx {
	struct tx_op *ops;
	unsigned int n, cap;
	bool reserve_ok; /* store_tx_reserve_allow */
	bool nowait;	 /* store_tx_nowait */
};

int store_tx_create(struct store_tx **tx_out)
{
	struct store_tx *tx = calloc(1, sizeof(*tx));

	if (!tx)
		return -ENOMEM;
	*tx_out = tx;
	return 0;
}

void store_tx_destroy(struct store_tx *tx)
{
	if (!tx)
		return;
	for (unsigned int i = 0; i < tx->n; i++) {
		free(tx->ops[i].name);
		free(tx->ops[i].key);
		if (!tx->ops[i].ref)
			bufcache_put(tx->ops[i].data, tx->ops[i].dlen);
	}
	free(tx->ops);
	free(tx);
}

static int tx_add(struct store_tx *tx, enum tx_kind kind, uint64_t pg, const char *name,
		  const char *key, uint64_t off, uint64_t len, const void *data, size_t dlen)
{
	struct tx_op *op;

	if (name && (!name[0] || strlen(name) > STORE_NAME_MAX))
		return -EINVAL;
	if (key && (!key[0] || strlen(key) > STORE_ATTR_MAX))
		return -EINVAL;
	if (tx->n == tx->cap) {
		unsigned int cap = tx->cap ? tx->cap * 2 : 4;
		struct tx_op *nops = realloc(tx->ops, cap * sizeof(*nops));

		if (!nops)
			return -ENOMEM;
		tx->ops = nops;
		tx->cap = cap;
	}
	op = &tx->ops[tx->n];
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->pg = pg;
	op->off = off;
	op->len = len;
	if ((name && !(op->name = strdup(name))) || (key && !(op->key = strdup(key))) ||
	    (dlen && !(op->data = bufcache_get(dlen)))) {
		free(op->name);
		free(op->key);
		return -ENOMEM;
	}
	if (dlen)
		memcpy(op->data, data, dlen);
	op->dlen = dlen;
	tx->n++;
	return 0;
}

static bool range_ok(uint64_t off, uint64_t len)
{
	return off <= STORE_OBJECT_MAX && len <= STORE_OBJECT_MAX - off;
}

int store_tx_write(struct store_tx *tx, uint64_t pg, const char *name, uint64_t off, uint64_t len,
		   const void *data)
{
	if (!range_ok(off, len) || len == 0 || len > (1u << 30) || !data)
		return -EINVAL;
	return tx_add(tx, TX_WRITE, pg, name, NULL, off, len, data, len);
}

int store_tx_write_ref(struct store_tx *tx, uint64_t pg, const char *name, uint64_t off,
		       uint64_t len, const void *data)
{
	int rc;

	if (!range_ok(off, len) || len == 0 || len > (1u << 30) || !data)
		return -EINVAL;
	rc = tx_add(tx, TX_WRITE, pg, name, NULL, off, len, NULL, 0);
	if (rc == 0) {
		struct tx_op *op = &tx->ops[tx->n - 1];

		op->data = (void *)data;
		op->dlen = len;
		op->ref = true;
	}
	return rc;
}

int store_tx_zero(struct store_tx *tx, uint64_t pg, const char *name, uint64_t off, uint64_t len)
{
	if (!range_ok(off, len) || len == 0)
		return -EINVAL;
	return tx_add(tx, TX_ZERO, pg, name, NULL, off, len, NULL, 0);
}

int store_tx_truncate(struct store_tx *tx, uint64_t pg, const char *name, uint64_t size)
{
	if (size > STORE_OBJECT_MAX)
		return -EINVAL;
	return tx_add(tx, TX_TRUNC, pg, name, NULL, size, 0, NULL, 0);
}

int store_tx_remove(struct store_tx *tx, uint64_t pg, const char *name)
{
	return tx_add(tx, TX_REMOVE, pg, name, NULL, 0, 0, NULL, 0);
}

int store_tx_setattr(struct store_tx *tx, uint64_t pg, const char *name, const char *key,
		     const void *val, size_t vlen)
{
	if (vlen > (1u << 20) || (vlen && !val) || !key)
		return -EINVAL;
	return tx_add(tx, TX_SETATTR, pg, name, key, 0, vlen, val, vlen);
}

int store_tx_rmattr(struct store_tx *tx, uint64_t pg, const char *name, const char *key)
{
	if (!key)
		return -EINVAL;
	return tx_add(tx, TX_RMATTR, pg, name, key, 0, 0, NULL, 0);
}

int store_tx_set_version(struct store_tx *tx, uint64_t pg, const char *name, uint64_t uversion)
{
	if (uversion == 0)
		return -EINVAL; /* 0 means "never set" */
	return tx_add(tx, TX_UVER, pg, name, NULL, uversion, 0, NULL, 0);
}

int store_tx_pglog_append(struct store_tx *tx, uint64_t pg, uint64_t seq, const void *entry,
			  size_t len)
{
	if (len > (1u << 20) || (len && !entry))
		return -EINVAL;
	return tx_add(tx, TX_LOG, pg, NULL, NULL, seq, len, entry, len);
}

int store_tx_pglog_trim(struct store_tx *tx, uint64_t pg, uint64_t upto)
{
	return tx_add(tx, TX_TRIM, pg, NULL, NULL, upto, 0, NULL, 0);
}

void store_tx_reserve_allow(struct store_tx *tx)
{
	tx->reserve_ok = true;
}

void store_tx_nowait(struct store_tx *tx)
{
	tx->nowait = true;
}

/*
 * A nowait transaction found no room while freed units wait for a
 * checkpoint: start one if what was freed is committed (otherwise the
 * commit in flight comes first, and the next submit starts it). Never
 * blocks: -EAGAIN, or the store's error.
 */
static int tx_space_later(struct store *st)
{
	int rc = store_reap(st, false);

	if (rc < 0)
		return rc;
	store_ckpt_advance(st);
	if (st->failed)
		return st->failed;
	if (st->ck.state == STORE_CK_IDLE && st->frees[0].seq <= st->committed_seq) {
		rc = store_ckpt_start(st);
		if (rc < 0)
			return rc;
	}
	st->info.space_waits++;
	return -EAGAIN;
}

/*
 * Units tx must leave free: the reserve, unless tx writes no data (removes,
 * truncates and zeroing free more than the unit or two they may rewrite;
 * attributes and log entries live in RocksDB) or its owner allowed it.
 */
static uint64_t tx_reserve_kept(const struct store *st, const struct store_tx *tx)
{
	if (tx->reserve_ok)
		return 0;
	for (unsigned int i = 0; i < tx->n; i++)
		if (tx->ops[i].kind == TX_WRITE)
			return st->reserve_units;
	return 0;
}

/* ---- translation ---- */

struct snap {
	struct onode *on;
	bool exists, whole, shards;
	uint64_t size; /* before this tx: also the PG counts' delta (store_pgstat.c) */
	uint64_t version, uversion;
};

/*
 * What an op is about to change in an object's map: the pieces in [lo, hi)
 * before it. A failed transaction puts them back, latest first. Only the
 * range an op touches is copied, so a small write into a large object costs
 * what it changes, not the object's whole map.
 */
struct undo {
	struct onode *on;
	uint64_t lo, hi;
	struct ext *v; /* clipped pieces, crcs copied */
	uint32_t n, cap;
	int rc;
};

struct xl {
	struct store *st;
	struct store_txc *txc;
	struct alloc_run *pool; /* reserved units not yet used */
	unsigned int npool;
	struct snap *snaps;
	unsigned int nsnaps;
	struct undo *undos;
	unsigned int nundos;
	size_t applied; /* body bytes already applied */
	/*
	 * Payload buffers of the caller's ops used directly as block images (no
	 * copy): they move to the transaction only once it is submitted, so a
	 * failed submit leaves the caller's tx whole.
	 */
	struct store_buf *borrowed;
	int rc;
};

/* Append n bytes to the body; p NULL leaves them for the WAL record to fill (an image). */
static int body_put(struct store_txc *t, const void *p, size_t n)
{
	if (t->blen + n > t->bcap) {
		size_t cap = t->bcap ? t->bcap * 2 : 256;
		uint8_t *nb;

		while (cap < t->blen + n)
			cap *= 2;
		nb = realloc(t->body, cap);
		if (!nb)
			return -ENOMEM;
		t->body = nb;
		t->bcap = cap;
	}
	if (p)
		memcpy(t->body + t->blen, p, n);
	t->blen += n;
	return 0;
}

static void put8(struct xl *x, uint8_t v)
{
	if (x->rc == 0)
		x->rc = body_put(x->txc, &v, 1);
}

static void put32(struct xl *x, uint32_t v)
{
	if (x->rc == 0)
		x->rc = body_put(x->txc, &v, 4);
}

static void put64(struct xl *x, uint64_t v)
{
	if (x->rc == 0)
		x->rc = body_put(x->txc, &v, 8);
}

static void putbytes(struct xl *x, const void *p, size_t n)
{
	if (x->rc == 0 && n)
		x->rc = body_put(x->txc, p, n);
}

static void putstr(struct xl *x, const char *s)
{
	uint16_t n = (uint16_t)strlen(s);

	if (x->rc == 0)
		x->rc = body_put(x->txc, &n, 2);
	putbytes(x, s, n);
}

static void put_obj(struct xl *x, uint8_t op, uint64_t pg, const char *name)
{
	put8(x, op);
	put64(x, pg);
	putstr(x, name);
}

/* Apply the ops appended since the last call. */
static int xl_apply(struct xl *x)
{
	struct store_txc *t = x->txc;
	int rc;

	if (x->rc)
		return x->rc;
	rc = store_body_apply(x->st, t->seq, t->body + x->applied, t->blen - x->applied, t->wb,
			      STORE_BODY_META | STORE_BODY_NOPUT);
	x->applied = t->blen;
	if (rc)
		x->rc = rc;
	return rc;
}

static int xl_onode(struct xl *x, uint64_t pg, const char *name, struct onode **on_out)
{
	struct onode *on;
	struct snap *ns;
	int rc = store_onode_get(x->st, pg, name, true, &on);

	if (rc)
		return rc;
	for (unsigned int i = 0; i < x->nsnaps; i++) {
		if (x->snaps[i].on == on) {
			*on_out = on;
			return 0;
		}
	}
	ns = realloc(x->snaps, (x->nsnaps + 1) * sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	x->snaps = ns;
	ns = &x->snaps[x->nsnaps];
	*ns = (struct snap){.on = on,
			    .exists = on->exists,
			    .whole = on->whole,
			    .shards = on->shards,
			    .size = on->rec.size,
			    .version = on->rec.version,
			    .uversion = on->rec.uversion};
	x->nsnaps++;
	*on_out = on;
	return 0;
}

static void xl_undo_piece(void *arg, uint64_t lblk, uint64_t pblk, uint64_t len,
			  const uint32_t *crcs)
{
	struct undo *u = arg;
	uint32_t cpb = u->on->rec.map.cpb;
	uint32_t *c;

	if (u->rc)
		return;
	if (u->n == u->cap) {
		uint32_t cap = u->cap ? u->cap * 2 : 4;
		struct ext *nv = realloc(u->v, cap * sizeof(*nv));

		if (!nv) {
			u->rc = -ENOMEM;
			return;
		}
		u->v = nv;
		u->cap = cap;
	}
	c = malloc(len * cpb * sizeof(*c));
	if (!c) {
		u->rc = -ENOMEM;
		return;
	}
	memcpy(c, crcs, len * cpb * sizeof(*c));
	u->v[u->n++] = (struct ext){lblk, pblk, len, c};
}

/* Before an op changes on's map in [lo, lo + len): keep what is there for a rollback. */
static int xl_undo_save(struct xl *x, struct onode *on, uint64_t lo, uint64_t len)
{
	struct undo *nu = realloc(x->undos, (x->nundos + 1) * sizeof(*nu));

	if (!nu)
		return x->rc = -ENOMEM;
	x->undos = nu;
	nu = &x->undos[x->nundos++];
	*nu = (struct undo){.on = on, .lo = lo, .hi = lo + len};
	extmap_walk(&on->rec.map, lo, len, xl_undo_piece, nu);
	if (nu->rc && x->rc == 0)
		x->rc = nu->rc;
	return nu->rc;
}

static void xl_undo_free(struct xl *x)
{
	for (unsigned int i = 0; i < x->nundos; i++) {
		for (uint32_t j = 0; j < x->undos[i].n; j++)
			free(x->undos[i].v[j].crcs);
		free(x->undos[i].v);
	}
	free(x->undos);
	x->undos = NULL;
	x->nundos = 0;
}

/* Take n units from the reservation. */
static int xl_take(struct xl *x, uint64_t n, struct alloc_run *runs, unsigned int *nruns_out)
{
	unsigned int nr = 0;

	while (n > 0) {
		struct alloc_run *p;
		uint64_t k;

		if (x->npool == 0)
			return -ENOSPC; /* reservation estimate was short: a bug */
		p = &x->pool[0];
		k = p->len < n ? p->len : n;
		runs[nr++] = (struct alloc_run){p->start, k};
		p->start += k;
		p->len -= k;
		n -= k;
		if (p->len == 0) {
			memmove(x->pool, x->pool + 1, (x->npool - 1) * sizeof(*p));
			x->npool--;
		}
	}
	*nruns_out = nr;
	return 0;
}

static void xl_free_cb(void *arg, uint64_t lblk, uint64_t pblk, uint64_t len, const uint32_t *crcs)
{
	struct xl *x = arg;

	put8(x, POP_FREE);
	put64(x, pblk);
	put64(x, len);
}

/* Old content of logical unit lblk into dst (one unit), verified; zeros if unmapped. */
static int xl_read_unit(struct xl *x, struct onode *on, uint64_t lblk, uint8_t *dst)
{
	struct store *st = x->st;
	const uint32_t *crcs;
	uint64_t pblk, run;
	int rc;

	if (extmap_lookup(&on->rec.map, lblk, &pblk, &crcs, &run) != 0) {
		memset(dst, 0, st->sb.unit);
		return 0;
	}
	rc = store_data_settle(st, st->sb.data_base + pblk * st->sb.unit, st->sb.unit);
	if (rc == 0)
		rc = store_pread(st, dst, st->sb.unit, st->sb.data_base + pblk * st->sb.unit);
	if (rc != 0) {
		store_err(st, "pg %llx object %s: read for update at offset %llu: %s",
			  (unsigned long long)on->pg, on->name,
			  (unsigned long long)(lblk * st->sb.unit), strerror(-rc));
		return rc;
	}
	for (uint32_t i = 0; i < st->cpb; i++) {
		if (crc32c(0, dst + i * STORE_CSUM_BLOCK, STORE_CSUM_BLOCK) != crcs[i]) {
			store_err(st,
				  "pg %llx object %s: crc mismatch at offset %llu (unit %llu) "
				  "during read-modify-write",
				  (unsigned long long)on->pg, on->name,
				  (unsigned long long)(lblk * st->sb.unit + i * STORE_CSUM_BLOCK),
				  (unsigned long long)pblk);
			return -WEFT_E_CORRUPT;
		}
	}
	return 0;
}

/* Write [off, off+len) (src NULL = zeros) as new units; the object's size becomes size. */
static int xl_write(struct xl *x, struct onode *on, uint64_t off, uint64_t len, const void *src,
		    uint64_t size, struct tx_op *op)
{
	struct store *st = x->st;
	uint64_t unit = st->sb.unit, u0 = off / unit, u1 = (off + len + unit - 1) / unit;
	uint64_t n = u1 - u0;
	bool inline_data = len < st->opts.large_write;
	struct alloc_run *runs = malloc(n * sizeof(*runs));
	unsigned int nruns = 0;
	struct store_buf *sb;
	uint32_t *crcs;
	uint8_t *buf;
	size_t img_off;
	int rc;

	/* A whole-unit out-of-line write is its own block image (aligned by bufcache). */
	bool borrow = op && !op->ref && !inline_data && off % unit == 0 && len % unit == 0 &&
		      op->data == src;

	buf = borrow ? op->data : bufcache_get(n * unit);
	if (!buf)
		return -ENOMEM;
	sb = malloc(sizeof(*sb));
	crcs = malloc(n * st->cpb * 4);
	if (!sb || !crcs || !runs) {
		if (!borrow)
			bufcache_put(buf, n * unit);
		free(sb);
		free(crcs);
		free(runs);
		return -ENOMEM;
	}
	sb->p = buf;
	sb->len = borrow ? op->dlen : n * unit;
	if (borrow) {
		sb->next = x->borrowed;
		x->borrowed = sb;
		src = NULL; /* already in place */
	} else {
		sb->next = x->txc->bufs;
		x->txc->bufs = sb;
	}
	rc = 0;
	if (off % unit)
		rc = xl_read_unit(x, on, u0, buf);
	if (rc == 0 && (off + len) % unit && (u1 - 1 != u0 || off % unit == 0))
		rc = xl_read_unit(x, on, u1 - 1, buf + (n - 1) * unit);
	if (rc != 0)
		goto out;
	if (src)
		memcpy(buf + off % unit, src, len);
	else if (!borrow)
		memset(buf + off % unit, 0, len);
	for (uint64_t i = 0; i < n * st->cpb; i++)
		crcs[i] = crc32c(0, buf + i * STORE_CSUM_BLOCK, STORE_CSUM_BLOCK);
	rc = xl_take(x, n, runs, &nruns);
	if (rc != 0)
		goto out;
	extmap_walk(&on->rec.map, u0, n, xl_free_cb, x);
	xl_undo_save(x, on, u0, n);
	put_obj(x, POP_WRITE, on->pg, on->name);
	put64(x, size);
	put64(x, u0);
	put64(x, n);
	put32(x, inline_data ? POP_WRITE_INLINE : 0);
	put32(x, nruns);
	putbytes(x, runs, nruns * sizeof(runs[0]));
	putbytes(x, crcs, n * st->cpb * 4);
	/*
	 * The image's place in the body stays unwritten: store_batch_write
	 * copies it from buf straight into the WAL record (one copy of the
	 * payload fewer, issue 16 item 6). Applying the body in memory skips
	 * those bytes; only replay reads them, from the record.
	 */
	img_off = x->txc->blen;
	if (inline_data && x->rc == 0)
		x->rc = body_put(x->txc, NULL, n * unit);
	rc = xl_apply(x);
	for (unsigned int i = 0, b = 0; rc == 0 && i < nruns; b += (unsigned int)runs[i].len, i++) {
		struct store_txc *t = x->txc;

		if (t->nallocs == t->acap) {
			unsigned int cap = t->acap ? t->acap * 2 : 4;
			struct alloc_run *na = realloc(t->allocs, cap * sizeof(*na));

			if (!na) {
				rc = -ENOMEM;
				break;
			}
			t->allocs = na;
			t->acap = cap;
		}
		t->allocs[t->nallocs++] = runs[i];
		if (!inline_data)
			rc = store_data_write(st, t, buf + (uint64_t)b * unit, runs[i].len * unit,
					      runs[i].start, true);
	}
	if (rc == 0 && !inline_data)
		x->txc->has_ool = true;
	if (rc == 0 && inline_data) {
		/* durable in the WAL record: the data-area write waits to be batched */
		rc = store_defer_add(st, x->txc, buf, n * unit, runs, nruns, img_off);
		for (struct store_buf **pp = &x->txc->bufs; rc == 0 && *pp; pp = &(*pp)->next) {
			if (*pp == sb) {
				*pp = sb->next; /* buf is the deferred images' now */
				free(sb);
				break;
			}
		}
	}
out:
	free(crcs);
	free(runs);
	return rc;
}

static bool unit_mapped(struct store *st, struct onode *on, uint64_t lblk)
{
	const uint32_t *c;
	uint64_t p, r;

	return extmap_lookup(&on->rec.map, lblk, &p, &c, &r) == 0;
}

static int xl_zero(struct xl *x, struct onode *on, uint64_t off, uint64_t len)
{
	uint64_t unit = x->st->sb.unit, end = off + len;
	uint64_t size = on->exists && on->rec.size > end ? on->rec.size : end;
	uint64_t ua = (off + unit - 1) / unit, ub = end / unit;
	int rc = 0;

	if (ua < ub) {
		extmap_walk(&on->rec.map, ua, ub - ua, xl_free_cb, x);
		xl_undo_save(x, on, ua, ub - ua);
		put_obj(x, POP_PUNCH, on->pg, on->name);
		put64(x, ua);
		put64(x, ub - ua);
	}
	if (off / unit == (end - 1) / unit && (off % unit || end % unit)) {
		if (unit_mapped(x->st, on, off / unit))
			rc = xl_write(x, on, off, len, NULL, size, NULL);
	} else {
		if (off % unit && unit_mapped(x->st, on, off / unit))
			rc = xl_write(x, on, off, ua * unit - off, NULL, size, NULL);
		if (rc == 0 && end % unit && unit_mapped(x->st, on, ub))
			rc = xl_write(x, on, ub * unit, end - ub * unit, NULL, size, NULL);
	}
	put_obj(x, POP_SETSIZE, on->pg, on->name);
	put64(x, size);
	return rc ? rc : xl_apply(x);
}

static int xl_truncate(struct xl *x, struct onode *on, uint64_t size)
{
	uint64_t unit = x->st->sb.unit, old = on->exists ? on->rec.size : 0;
	uint64_t first = (size + unit - 1) / unit, maxb = STORE_OBJECT_MAX / unit + 1;
	int rc = 0;

	if (size < old) {
		if (first < maxb) {
			extmap_walk(&on->rec.map, first, maxb - first, xl_free_cb, x);
			xl_undo_save(x, on, first, maxb - first);
			put_obj(x, POP_PUNCH, on->pg, on->name);
			put64(x, first);
			put64(x, maxb - first);
		}
		/* Zero the tail of the last unit so a later extension reads zeros. */
		if (size % unit && unit_mapped(x->st, on, size / unit))
			rc = xl_write(x, on, size, first * unit - size, NULL, size, NULL);
	}
	put_obj(x, POP_SETSIZE, on->pg, on->name);
	put64(x, size);
	return rc ? rc : xl_apply(x);
}

static int xl_op(struct xl *x, struct tx_op *op)
{
	struct onode *on = NULL;
	int rc = 0;

	if (op->name) {
		rc = xl_onode(x, op->pg, op->name, &on);
		if (rc)
			return rc;
	}
	switch (op->kind) {
	case TX_WRITE: {
		uint64_t end = op->off + op->len;

		return xl_write(x, on, op->off, op->len, op->data,
				on->exists && on->rec.size > end ? on->rec.size : end, op);
	}
	case TX_ZERO:
		return xl_zero(x, on, op->off, op->len);
	case TX_TRUNC:
		return xl_truncate(x, on, op->off);
	case TX_REMOVE:
		if (on->exists)
			extmap_walk(&on->rec.map, 0, UINT64_MAX / 2, xl_free_cb, x);
		xl_undo_save(x, on, 0, UINT64_MAX / 2);
		put_obj(x, POP_REMOVE, op->pg, op->name);
		break;
	case TX_SETATTR:
		put_obj(x, POP_TOUCH, op->pg, op->name);
		put_obj(x, POP_ATTR_SET, op->pg, op->name);
		putstr(x, op->key);
		put32(x, (uint32_t)op->len);
		putbytes(x, op->data, op->len);
		break;
	case TX_RMATTR:
		put_obj(x, POP_ATTR_RM, op->pg, op->name);
		putstr(x, op->key);
		break;
	case TX_UVER:
		put_obj(x, POP_TOUCH, op->pg, op->name);
		put_obj(x, POP_UVER, op->pg, op->name);
		put64(x, op->off);
		break;
	case TX_LOG:
		put8(x, POP_LOG_APPEND);
		put64(x, op->pg);
		put64(x, op->off);
		put32(x, (uint32_t)op->len);
		putbytes(x, op->data, op->len);
		break;
	case TX_TRIM:
		put8(x, POP_LOG_TRIM);
		put64(x, op->pg);
		put64(x, op->off);
		break;
	}
	return xl_apply(x);
}

/* Reserve units for a transaction, keeping `keep` units free; -ENOSPC changes nothing. */
static int tx_take(struct store *st, uint64_t units, uint64_t keep, struct xl *x)
{
	if (units > 0 && st->live.nfree < units + keep)
		return -ENOSPC;
	return alloc_take(
	    &st->live, units, x->pool,
	    units < STORE_MAX_RUNS ? (unsigned int)(units ? units : 1) : STORE_MAX_RUNS, &x->npool);
}

/* Units a transaction may need, and a bound on its WAL body. */
static void tx_estimate(const struct store *st, const struct store_tx *tx, uint64_t *units_out,
			uint64_t *body_out)
{
	uint64_t unit = st->sb.unit, units = 0, body = 0;

	for (unsigned int i = 0; i < tx->n; i++) {
		const struct tx_op *op = &tx->ops[i];
		uint64_t n = 0;

		if (op->kind == TX_WRITE)
			n = (op->off + op->len + unit - 1) / unit - op->off / unit;
		else if (op->kind == TX_ZERO)
			n = 2;
		else if (op->kind == TX_TRUNC)
			n = 1;
		units += n;
		/* metadata ops: exactly what xl_op puts (an activation carries thousands) */
		if (op->kind == TX_LOG || op->kind == TX_TRIM || op->kind == TX_SETATTR ||
		    op->kind == TX_RMATTR || op->kind == TX_UVER) {
			size_t nl = op->name ? strlen(op->name) : 0,
			       kl = op->key ? strlen(op->key) : 0;

			body += op->kind == TX_LOG	 ? 21 + op->len
				: op->kind == TX_TRIM	 ? 17
				: op->kind == TX_SETATTR ? 2 * (11 + nl) + 6 + kl + op->len
				: op->kind == TX_UVER	 ? 2 * (11 + nl) + 8
							 : 13 + nl + kl;
			continue;
		}
		body += 600 + n * (st->cpb * 4 + 40);
		if (op->kind == TX_WRITE && op->len < st->opts.large_write)
			body += n * unit;
		/* zero and truncate may rewrite a partial unit at each end (inline), a remove
		 * lists its extents' frees */
		if (op->kind != TX_WRITE)
			body += 2 * (unit + st->cpb * 4 + 40);
	}
	*units_out = units;
	*body_out = body;
}

static void xl_rollback(struct xl *x)
{
	struct store *st = x->st;
	struct store_txc *t = x->txc;

	/* Data writes into the units being returned must land before anyone reuses them. */
	store_drain_data(st);
	for (unsigned int i = x->nundos; i-- > 0;) {
		struct undo *u = &x->undos[i];
		struct extmap *m = &u->on->rec.map;
		int rc;

		if (u->rc)
			continue; /* its op never ran: xl_apply refuses once x->rc is set */
		rc = extmap_punch(m, u->lo, u->hi - u->lo, NULL, NULL);

		for (uint32_t j = 0; rc == 0 && j < u->n; j++)
			rc =
			    extmap_insert(m, u->v[j].lblk, u->v[j].pblk, u->v[j].len, u->v[j].crcs);
		if (rc != 0)
			store_fail(st, rc, "transaction rollback");
	}
	for (unsigned int i = 0; i < x->nsnaps; i++) {
		struct snap *s = &x->snaps[i];

		s->on->exists = s->exists;
		s->on->whole = s->whole;
		s->on->shards = s->shards;
		s->on->rec.size = s->size;
		s->on->rec.version = s->version;
		s->on->rec.uversion = s->uversion;
		s->on->ndirty = 0;
	}
	/* their maps shrank back: the cache's byte count follows (store_onode_trim) */
	for (unsigned int i = 0; i < x->nundos; i++)
		store_onode_account(st, x->undos[i].on);
	for (unsigned int i = 0; i < x->nsnaps; i++)
		store_onode_account(st, x->snaps[i].on);
	while (st->nfrees > 0 && st->frees[st->nfrees - 1].seq == t->seq)
		st->nfrees--;
	for (unsigned int i = 0; i < t->nallocs; i++)
		alloc_mark(&st->live, t->allocs[i].start, t->allocs[i].len, false);
}

/* The submit succeeded: borrowed payload buffers now belong to the transaction. */
static void xl_adopt_borrowed(struct xl *x, struct store_tx *tx)
{
	while (x->borrowed) {
		struct store_buf *b = x->borrowed;

		x->borrowed = b->next;
		for (unsigned int i = 0; i < tx->n; i++)
			if (tx->ops[i].data == b->p)
				tx->ops[i].data = NULL;
		b->next = x->txc->bufs;
		x->txc->bufs = b;
	}
}

int store_tx_submit(struct store *st, struct store_tx *tx, store_commit_cb cb, void *arg)
{
	struct xl x = {.st = st};
	uint64_t units, body, keep;
	struct store_txc *t;
	int rc;

	if (st->failed)
		return st->failed;
	if (tx->n == 0)
		return -EINVAL;
	store_onode_trim(st); /* before any record is looked up: none is held yet */
	tx_estimate(st, tx, &units, &body);
	if (body > st->sb.wal_size / 4 || body > (64u << 20)) {
		store_err(st, "transaction of %u ops needs ~%llu WAL bytes; the limit is %llu",
			  tx->n, (unsigned long long)body,
			  (unsigned long long)(st->sb.wal_size / 4));
		return -E2BIG;
	}
	x.pool = malloc((units ? units : 1) * sizeof(*x.pool));
	if (!x.pool)
		return -ENOMEM;
	keep = tx_reserve_kept(st, tx);
	rc = tx_take(st, units, keep, &x);
	if (rc == -ENOSPC && st->nfrees > 0 && tx->nowait) {
		free(x.pool);
		return tx_space_later(st);
	}
	if (rc == -ENOSPC && st->nfrees > 0) {
		/* Space freed by committed transactions comes back at a checkpoint. */
		rc = store_flush(st);
		if (rc == 0)
			rc = store_checkpoint(st);
		if (rc == 0)
			rc = tx_take(st, units, keep, &x);
	}
	if (rc != 0) {
		if (rc == -ENOSPC && keep > 0 && st->live.nfree >= units)
			st->info.reserve_refused++;
		if (rc == -ENOSPC && clock_now_ms() - st->reserve_log_ms >= 10000) {
			/* once per 10 s: a full store refuses every write, not just one */
			st->reserve_log_ms = clock_now_ms();
			store_warn(st,
				   "no space for a transaction needing %llu units (%llu free, "
				   "%llu kept for removes and metadata; %llu refused so far)",
				   (unsigned long long)units, (unsigned long long)st->live.nfree,
				   (unsigned long long)keep,
				   (unsigned long long)st->info.reserve_refused);
		}
		free(x.pool);
		return rc;
	}
	t = calloc(1, sizeof(*t));
	if (!t || !(t->wb = rocksdb_writebatch_create())) {
		free(t);
		rc = -ENOMEM;
		goto out_pool;
	}
	/*
	 * The body's bound from tx_estimate, up front: one allocation where
	 * doubling from 256 bytes took five reallocs (and copies) for a small
	 * write's body of about 4.7 KiB. Large bodies still grow as they go.
	 */
	if (body <= (64u << 10)) {
		t->body = malloc(body ? body : 256);
		if (t->body == NULL) {
			store_txc_destroy(t);
			rc = -ENOMEM;
			goto out_pool;
		}
		t->bcap = body ? body : 256;
	}
	t->seq = st->next_seq;
	t->cb = cb;
	t->arg = arg;
	x.txc = t;
	for (unsigned int i = 0; i < tx->n && rc == 0; i++)
		rc = xl_op(&x, &tx->ops[i]);
	/* each changed record once, in its final state: one key per object */
	if (rc == 0)
		rc = store_onode_puts(st, t->wb);
	if (rc != 0) {
		store_onode_puts(st, NULL);
		xl_rollback(&x); /* drains data writes, borrowed buffers included */
		store_defer_cancel(st, t);
		store_txc_destroy(t);
		goto out_pool;
	}
	xl_adopt_borrowed(&x, tx);
	for (unsigned int i = 0; i < x.nsnaps; i++)
		store_pgstat_delta(st, x.snaps[i].on->pg, x.snaps[i].exists, x.snaps[i].size,
				   x.snaps[i].on->exists, x.snaps[i].on->rec.size);
	st->next_seq++; /* M (the last seq RocksDB has) goes in once per batch: store_batch_kv */
	if (st->q_tail)
		st->q_tail->next = t;
	else
		st->q_head = t;
	st->q_tail = t;
	store_tx_destroy(tx);
	store_pipeline_kick(st);
out_pool:
	/* Unused reservation goes straight back: nothing ever pointed at it. */
	for (unsigned int i = 0; i < x.npool; i++)
		alloc_mark(&st->live, x.pool[i].start, x.pool[i].len, false);
	free(x.pool);
	free(x.snaps);
	xl_undo_free(&x);
	while (x.borrowed) { /* failed submit: the buffers stay the caller's */
		struct store_buf *b = x.borrowed;

		x.borrowed = b->next;
		free(b);
	}
	return rc;
}
