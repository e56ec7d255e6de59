/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "osd/store/extmap.h"

#define ONODE_REC_MAGIC 0x4f4e4f31u /* "ONO1" */

void extmap_init(struct extmap *m, uint32_t cpb)
{
	m->v = NULL;
	m->n = m->cap = 0;
	m->cpb = cpb;
}

void extmap_fini(struct extmap *m)
{
	for (uint32_t i = 0; i < m->n; i++)
		free(m->v[i].crcs);
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

static int extmap_reserve(struct extmap *m, uint32_t extra)
{
	struct ext *nv;
	uint32_t cap;

	if (m->n + extra <= m->cap)
		return 0;
	cap = m->cap ? m->cap * 2 : 4;
	while (cap < m->n + extra)
		cap *= 2;
	nv = realloc(m->v, cap * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	m->v = nv;
	m->cap = cap;
	return 0;
}

static uint32_t *crcs_dup(const uint32_t *src, uint64_t n)
{
	uint32_t *d = malloc(n ? n * sizeof(uint32_t) : 1);

	if (d && n)
		memcpy(d, src, n * sizeof(uint32_t));
	return d;
}

/* Index of the first extent whose end is beyond lblk. */
static uint32_t extmap_find(const struct extmap *m, uint64_t lblk)
{
	uint32_t lo = 0, hi = m->n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (m->v[mid].lblk + m->v[mid].len <= lblk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int extmap_punch(struct extmap *m, uint64_t lblk, uint64_t len, extmap_piece_cb cb, void *arg)
{
	uint64_t end = lblk + len;
	uint32_t i = extmap_find(m, lblk);

	while (i < m->n && m->v[i].lblk < end) {
		struct ext *e = &m->v[i];
		uint64_t eend = e->lblk + e->len;
		uint64_t cs = e->lblk > lblk ? e->lblk : lblk; /* cut start */
		uint64_t ce = eend < end ? eend : end;
		uint64_t off = cs - e->lblk, cpb = m->cpb;

		if (cb)
			cb(arg, cs, e->pblk + off, ce - cs, e->crcs + off * cpb);
		if (cs == e->lblk && ce == eend) { /* whole extent */
			free(e->crcs);
			memmove(e, e + 1, (m->n - i - 1) * sizeof(*e));
			m->n--;
			continue;
		}
		if (cs == e->lblk) { /* head cut */
			uint32_t *c = crcs_dup(e->crcs + (ce - e->lblk) * cpb, (eend - ce) * cpb);

			if (!c)
				return -ENOMEM;
			free(e->crcs);
			e->crcs = c;
			e->pblk += ce - e->lblk;
			e->len = eend - ce;
			e->lblk = ce;
			i++;
			continue;
		}
		if (ce == eend) { /* tail cut */
			e->len = cs - e->lblk;
			i++;
			continue;
		}
		/* middle: split in two */
		{
			uint32_t *c = crcs_dup(e->crcs + (ce - e->lblk) * cpb, (eend - ce) * cpb);
			struct ext tail;

			if (!c || extmap_reserve(m, 1) != 0) {
				free(c);
				return -ENOMEM;
			}
			e = &m->v[i];
			tail = (struct ext){ce, e->pblk + (ce - e->lblk), eend - ce, c};
			e->len = cs - e->lblk;
			memmove(&m->v[i + 2], &m->v[i + 1], (m->n - i - 1) * sizeof(*e));
			m->v[i + 1] = tail;
			m->n++;
			return 0;
		}
	}
	return 0;
}

int extmap_insert(struct extmap *m, uint64_t lblk, uint64_t pblk, uint64_t len,
		  const uint32_t *crcs)
{
	uint32_t i = extmap_find(m, lblk), cpb = m->cpb;
	struct ext *prev;

	if (len == 0)
		return 0;
	if (i < m->n && m->v[i].lblk < lblk + len)
		return -EEXIST;
	/* Merge with the previous extent when both logically and physically contiguous. */
	prev = i > 0 ? &m->v[i - 1] : NULL;
	if (prev && prev->lblk + prev->len == lblk && prev->pblk + prev->len == pblk) {
		uint32_t *c = realloc(prev->crcs, (prev->len + len) * cpb * sizeof(uint32_t));

		if (!c)
			return -ENOMEM;
		memcpy(c + prev->len * cpb, crcs, len * cpb * sizeof(uint32_t));
		prev->crcs = c;
		prev->len += len;
		return 0;
	}
	if (extmap_reserve(m, 1) != 0)
		return -ENOMEM;
	{
		uint32_t *c = crcs_dup(crcs, len * cpb);

		if (!c)
			return -ENOMEM;
		memmove(&m->v[i + 1], &m->v[i], (m->n - i) * sizeof(struct ext));
		m->v[i] = (struct ext){lblk, pblk, len, c};
		m->n++;
	}
	return 0;
}

void extmap_walk(const struct extmap *m, uint64_t lblk, uint64_t len, extmap_piece_cb cb, void *arg)
{
	uint64_t end = lblk + len;

	for (uint32_t i = extmap_find(m, lblk); i < m->n && m->v[i].lblk < end; i++) {
		const struct ext *e = &m->v[i];
		uint64_t cs = e->lblk > lblk ? e->lblk : lblk;
		uint64_t ce = e->lblk + e->len < end ? e->lblk + e->len : end;
		uint64_t off = cs - e->lblk;

		cb(arg, cs, e->pblk + off, ce - cs, e->crcs + off * m->cpb);
	}
}

int extmap_lookup(const struct extmap *m, uint64_t lblk, uint64_t *pblk_out,
		  const uint32_t **crcs_out, uint64_t *run_out)
{
	uint32_t i = extmap_find(m, lblk);

	if (i >= m->n) {
		*run_out = UINT64_MAX;
		return -ENOENT;
	}
	if (m->v[i].lblk > lblk) {
		*run_out = m->v[i].lblk - lblk;
		return -ENOENT;
	}
	*pblk_out = m->v[i].pblk + (lblk - m->v[i].lblk);
	*crcs_out = m->v[i].crcs + (lblk - m->v[i].lblk) * m->cpb;
	*run_out = m->v[i].lblk + m->v[i].len - lblk;
	return 0;
}

uint64_t extmap_blocks(const struct extmap *m)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < m->n; i++)
		n += m->v[i].len;
	return n;
}

/* ---- the record codec (extmap.h) ---- */

#define ONODE_HEAD_MAGIC  0x324f4e4fu /* "ONO2" */
#define ONODE_SHARD_MAGIC 0x31534e4fu /* "ONS1" */
#define ONODE_HEAD_FIXED  (4 + 4 + 8 + 8 + 4 + 4 + 4)
#define ONODE_OLD_FIXED	  (4 + 4 + 8 + 8 + 4)

static uint8_t *put(uint8_t *p, const void *v, size_t n)
{
	memcpy(p, v, n);
	return p + n;
}

/* Pieces of the map within [lo, hi), clipped: how many and their encoded bytes. */
static size_t range_size(const struct extmap *m, uint64_t lo, uint64_t hi, uint32_t *n_out)
{
	size_t s = 0;
	uint32_t n = 0;

	for (uint32_t i = extmap_find(m, lo); i < m->n && m->v[i].lblk < hi; i++) {
		const struct ext *e = &m->v[i];
		uint64_t cs = e->lblk > lo ? e->lblk : lo;
		uint64_t ce = e->lblk + e->len < hi ? e->lblk + e->len : hi;

		s += 24 + (ce - cs) * m->cpb * 4;
		n++;
	}
	*n_out = n;
	return s;
}

static uint8_t *range_encode(const struct extmap *m, uint64_t lo, uint64_t hi, uint8_t *p)
{
	for (uint32_t i = extmap_find(m, lo); i < m->n && m->v[i].lblk < hi; i++) {
		const struct ext *e = &m->v[i];
		uint64_t cs = e->lblk > lo ? e->lblk : lo;
		uint64_t ce = e->lblk + e->len < hi ? e->lblk + e->len : hi;
		uint64_t pb = e->pblk + (cs - e->lblk), len = ce - cs;

		p = put(p, &cs, 8);
		p = put(p, &pb, 8);
		p = put(p, &len, 8);
		p = put(p, e->crcs + (cs - e->lblk) * m->cpb, len * m->cpb * 4);
	}
	return p;
}

/* n pieces from *pp into m, each within [lo, hi); advances *pp. */
static int range_decode(struct extmap *m, uint64_t lo, uint64_t hi, uint32_t n, const uint8_t **pp,
			const uint8_t *end)
{
	const uint8_t *p = *pp;
	uint32_t cpb = m->cpb;

	for (uint32_t i = 0; i < n; i++) {
		uint64_t lblk, pblk, elen;
		uint32_t *crcs;
		int rc;

		if ((size_t)(end - p) < 24)
			return -EINVAL;
		memcpy(&lblk, p, 8);
		memcpy(&pblk, p + 8, 8);
		memcpy(&elen, p + 16, 8);
		p += 24;
		if (elen == 0 || elen > (size_t)(end - p) / 4 / cpb || lblk + elen < lblk ||
		    lblk < lo || lblk + elen > hi)
			return -EINVAL;
		crcs = malloc(elen * cpb * 4);
		if (!crcs)
			return -EINVAL;
		memcpy(crcs, p, elen * cpb * 4);
		rc = extmap_insert(m, lblk, pblk, elen, crcs);
		free(crcs);
		if (rc != 0)
			return -EINVAL;
		p += elen * cpb * 4;
	}
	*pp = p;
	return 0;
}

bool onode_has_shards(const struct onode_rec *r, uint32_t span)
{
	const struct extmap *m = &r->map;

	return m->n > 0 && m->v[m->n - 1].lblk + m->v[m->n - 1].len > span;
}

/* The head carries shard 0 only while there is no other shard. */
static uint64_t head_end(const struct onode_rec *r, uint32_t span)
{
	return onode_has_shards(r, span) ? 0 : span;
}

size_t onode_head_size(const struct onode_rec *r, uint32_t span)
{
	uint32_t n;

	return ONODE_HEAD_FIXED + (r->uversion ? 8 : 0) +
	       range_size(&r->map, 0, head_end(r, span), &n);
}

void onode_head_encode(const struct onode_rec *r, uint32_t span, uint8_t *p)
{
	uint32_t magic = ONODE_HEAD_MAGIC, n,
		 flags = (onode_has_shards(r, span) ? ONODE_F_SHARDS : 0) |
			 (r->uversion ? ONODE_F_UVER : 0);

	range_size(&r->map, 0, head_end(r, span), &n);
	p = put(p, &magic, 4);
	p = put(p, &r->map.cpb, 4);
	p = put(p, &r->size, 8);
	p = put(p, &r->version, 8);
	p = put(p, &n, 4);
	p = put(p, &flags, 4);
	p = put(p, &span, 4);
	if (r->uversion)
		p = put(p, &r->uversion, 8);
	range_encode(&r->map, 0, head_end(r, span), p);
}

size_t onode_shard_size(const struct onode_rec *r, uint32_t span, uint64_t k)
{
	uint32_t n;
	size_t s = range_size(&r->map, k * span, (k + 1) * span, &n);

	return n ? 8 + s : 0;
}

void onode_shard_encode(const struct onode_rec *r, uint32_t span, uint64_t k, uint8_t *p)
{
	uint32_t magic = ONODE_SHARD_MAGIC, n;

	range_size(&r->map, k * span, (k + 1) * span, &n);
	p = put(p, &magic, 4);
	p = put(p, &n, 4);
	range_encode(&r->map, k * span, (k + 1) * span, p);
}

int onode_head_decode(struct onode_rec *r, const uint8_t *p, size_t len, uint32_t *span_out,
		      uint32_t *flags_out)
{
	const uint8_t *end = p + len;
	uint32_t magic, cpb, n, flags = 0, span = 0;
	uint64_t size, version, uversion = 0;
	struct extmap m;

	if (len < ONODE_OLD_FIXED)
		return -EINVAL;
	memcpy(&magic, p, 4);
	memcpy(&cpb, p + 4, 4);
	if ((magic != ONODE_HEAD_MAGIC && magic != ONODE_REC_MAGIC) || cpb != r->map.cpb)
		return -EINVAL;
	memcpy(&size, p + 8, 8);
	memcpy(&version, p + 16, 8);
	memcpy(&n, p + 24, 4);
	p += ONODE_OLD_FIXED;
	if (magic == ONODE_HEAD_MAGIC) {
		if (len < ONODE_HEAD_FIXED)
			return -EINVAL;
		memcpy(&flags, p, 4);
		memcpy(&span, p + 4, 4);
		p += 8;
		if (span == 0 || (flags & ~(ONODE_F_SHARDS | ONODE_F_UVER)) ||
		    ((flags & ONODE_F_SHARDS) && n))
			return -EINVAL;
		if (flags & ONODE_F_UVER) {
			if ((size_t)(end - p) < 8)
				return -EINVAL;
			memcpy(&uversion, p, 8);
			p += 8;
			if (uversion == 0)
				return -EINVAL; /* the flag says it is set */
		}
	}
	extmap_init(&m, cpb);
	if (range_decode(&m, 0, span ? span : UINT64_MAX, n, &p, end) != 0 || p != end) {
		extmap_fini(&m);
		return -EINVAL;
	}
	extmap_fini(&r->map);
	r->map = m;
	r->size = size;
	r->version = version;
	r->uversion = uversion;
	*span_out = span;
	*flags_out = flags;
	return 0;
}

int onode_shard_decode(struct onode_rec *r, uint32_t span, uint64_t k, const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;
	uint32_t magic, n;

	if (len < 8 || span == 0 || k > UINT64_MAX / span - 1)
		return -EINVAL;
	memcpy(&magic, p, 4);
	memcpy(&n, p + 4, 4);
	p += 8;
	if (magic != ONODE_SHARD_MAGIC)
		return -EINVAL;
	/* on failure the pieces inserted so far stay: the caller discards the whole record */
	if (range_decode(&r->map, k * span, (k + 1) * span, n, &p, end) != 0 || p != end)
		return -EINVAL;
	return 0;
}
