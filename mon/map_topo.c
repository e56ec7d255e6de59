/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The version-2 parts of the cluster map: the topology (buckets and OSD
 * locations), upmap items and the balancer mode; their records, checks
 * and application. docs/mon.md has the layout, docs/scale.md the design.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "mon/map_priv.h"

static const char *const mon_ct_names[MON_CT_COUNT] = {
    [MON_CT_OSD] = "osd",   [MON_CT_HOST] = "host",	[MON_CT_CHASSIS] = "chassis",
    [MON_CT_RACK] = "rack", [MON_CT_ROW] = "row",	[MON_CT_PDU] = "pdu",
    [MON_CT_POD] = "pod",   [MON_CT_ROOM] = "room",	[MON_CT_DATACENTER] = "datacenter",
    [MON_CT_ZONE] = "zone", [MON_CT_REGION] = "region", [MON_CT_ROOT] = "root",
};

const char *mon_crush_type_str(uint8_t type)
{
	return type > MON_CT_NONE && type < MON_CT_COUNT ? mon_ct_names[type] : NULL;
}

uint8_t mon_crush_type_parse(const char *name)
{
	for (uint8_t t = MON_CT_OSD; t < MON_CT_COUNT; t++)
		if (!strcmp(name, mon_ct_names[t]))
			return t;
	return MON_CT_NONE;
}

const struct mon_bucket *mon_map_bucket(const struct mon_map *map, int32_t id)
{
	uint32_t lo = 0, hi = map->nbuckets;

	while (lo < hi) { /* sorted by descending id */
		uint32_t mid = lo + (hi - lo) / 2;

		if (map->buckets[mid].id == id)
			return &map->buckets[mid];
		if (map->buckets[mid].id > id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct mon_bucket *mon_map_bucket_by_name(const struct mon_map *map, const char *name)
{
	for (uint32_t i = 0; i < map->nbuckets; i++)
		if (!strcmp(map->buckets[i].name, name))
			return &map->buckets[i];
	return NULL;
}

static int mon_loc_find(const struct mon_map *map, uint32_t osd, bool *found)
{
	uint32_t lo = 0, hi = map->nlocs;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (map->locs[mid].osd < osd)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < map->nlocs && map->locs[lo].osd == osd;
	return (int)lo;
}

int32_t mon_map_osd_loc(const struct mon_map *map, uint32_t osd)
{
	bool found;
	int i = mon_loc_find(map, osd, &found);

	return found ? map->locs[i].parent : 0;
}

static int mon_upmap_cmp(const struct mon_upmap *a, uint32_t pool, uint32_t pg, int32_t from)
{
	if (a->pool != pool)
		return a->pool < pool ? -1 : 1;
	if (a->pg != pg)
		return a->pg < pg ? -1 : 1;
	return a->from < from ? -1 : a->from > from;
}

static uint32_t mon_upmap_find(const struct mon_map *map, const struct mon_upmap *u, bool *found)
{
	uint32_t lo = 0, hi = map->nupmaps;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (mon_upmap_cmp(&map->upmaps[mid], u->pool, u->pg, u->from) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < map->nupmaps && !mon_upmap_cmp(&map->upmaps[lo], u->pool, u->pg, u->from);
	return lo;
}

struct mon_map_cache *mon_map_cache_get(const struct mon_map *map)
{
	return atomic_load_explicit((_Atomic(struct mon_map_cache *) *)&map->cache,
				    memory_order_acquire);
}

bool mon_map_cache_set(const struct mon_map *map, struct mon_map_cache *cache)
{
	struct mon_map_cache *none = NULL;

	/* Readers share the map read-only; the cache is the one field they may set. */
	return atomic_compare_exchange_strong_explicit(
	    (_Atomic(struct mon_map_cache *) *)&((struct mon_map *)map)->cache, &none, cache,
	    memory_order_acq_rel, memory_order_acquire);
}

bool mon_map_needs_v2(const struct mon_map *map)
{
	for (uint32_t i = 0; i < map->npools; i++)
		if (map->pools[i].domain != MON_CT_NONE || map->pools[i].root != 0)
			return true;
	return map->nbuckets || map->nlocs || map->nupmaps || map->balancer != MON_BALANCER_DEFAULT;
}

bool mon_op_needs_v2(const struct mon_op *op)
{
	if (op->kind == MON_OP_POOL_SET)
		return op->pool.domain != MON_CT_NONE || op->pool.root != 0;
	return op->kind > MON_OP_FLAGS;
}

/* ---------------------------------------------------------------- records */

void mon_bucket_put(struct proto_enc *enc, const struct mon_bucket *b)
{
	proto_enc_put_u32(enc, (uint32_t)b->id);
	proto_enc_put_u8(enc, b->type);
	proto_enc_put_u32(enc, (uint32_t)b->parent);
	proto_enc_put_str16(enc, b->name, strlen(b->name));
}

int mon_bucket_get(struct proto_dec *dec, struct mon_bucket *b)
{
	uint32_t id = 0, parent = 0;
	size_t n = 0;

	memset(b, 0, sizeof(*b));
	proto_dec_get_u32(dec, "bucket.id", &id);
	proto_dec_get_u8(dec, "bucket.type", &b->type);
	proto_dec_get_u32(dec, "bucket.parent", &parent);
	proto_dec_get_str16(dec, "bucket.name", MON_NAME_MAX, b->name, sizeof(b->name), &n);
	if (dec->err != 0)
		return dec->err;
	b->id = (int32_t)id;
	b->parent = (int32_t)parent;
	if (b->id >= 0 || b->id < -(int32_t)MON_BUCKET_MAX || b->parent > 0 || n == 0)
		return proto_dec_fail(dec, "bucket: id %d, parent %d, name of %zu bytes", b->id,
				      b->parent, n);
	if (b->type < MON_CT_HOST || b->type >= MON_CT_COUNT)
		return proto_dec_fail(dec, "bucket %d: type %u unknown", b->id, b->type);
	return 0;
}

void mon_loc_put(struct proto_enc *enc, const struct mon_osd_loc *l)
{
	proto_enc_put_u32(enc, l->osd);
	proto_enc_put_u32(enc, (uint32_t)l->parent);
}

int mon_loc_get(struct proto_dec *dec, struct mon_osd_loc *l)
{
	uint32_t parent = 0;

	proto_dec_get_u32(dec, "loc.osd", &l->osd);
	proto_dec_get_u32(dec, "loc.parent", &parent);
	if (dec->err != 0)
		return dec->err;
	l->parent = (int32_t)parent;
	if (l->osd >= MON_OSD_MAX || l->parent > 0)
		return proto_dec_fail(dec, "loc: osd %u, parent %d", l->osd, l->parent);
	return 0;
}

void mon_upmap_put(struct proto_enc *enc, const struct mon_upmap *u)
{
	proto_enc_put_u32(enc, u->pool);
	proto_enc_put_u32(enc, u->pg);
	proto_enc_put_u32(enc, (uint32_t)u->from);
	proto_enc_put_u32(enc, (uint32_t)u->to);
}

int mon_upmap_get(struct proto_dec *dec, struct mon_upmap *u)
{
	uint32_t from = 0, to = 0;

	proto_dec_get_u32(dec, "upmap.pool", &u->pool);
	proto_dec_get_u32(dec, "upmap.pg", &u->pg);
	proto_dec_get_u32(dec, "upmap.from", &from);
	proto_dec_get_u32(dec, "upmap.to", &to);
	if (dec->err != 0)
		return dec->err;
	u->from = (int32_t)from;
	u->to = (int32_t)to;
	if (u->from < 0 || u->from >= (int32_t)MON_OSD_MAX || u->to < 0 ||
	    u->to >= (int32_t)MON_OSD_MAX || u->from == u->to)
		return proto_dec_fail(dec, "upmap %u.%x: %d -> %d", u->pool, u->pg, u->from, u->to);
	return 0;
}

/* -------------------------------------------------------------- map tail */

void mon_map_topo_put(struct proto_enc *enc, const struct mon_map *map)
{
	proto_enc_put_u32(enc, map->nbuckets);
	for (uint32_t i = 0; i < map->nbuckets; i++)
		mon_bucket_put(enc, &map->buckets[i]);
	proto_enc_put_u32(enc, map->nlocs);
	for (uint32_t i = 0; i < map->nlocs; i++)
		mon_loc_put(enc, &map->locs[i]);
	proto_enc_put_u32(enc, map->nupmaps);
	for (uint32_t i = 0; i < map->nupmaps; i++)
		mon_upmap_put(enc, &map->upmaps[i]);
	proto_enc_put_u8(enc, map->balancer);
}

int mon_map_topo_get(struct proto_dec *dec, struct mon_map *m)
{
	uint32_t i;

	proto_dec_get_count(dec, "buckets", MON_BUCKET_MAX, MON_BUCKET_WIRE_MIN, &m->nbuckets);
	if (dec->err == 0 && m->nbuckets > 0 &&
	    (m->buckets = calloc(m->nbuckets, sizeof(*m->buckets))) == NULL)
		return -ENOMEM;
	for (i = 0; i < m->nbuckets && dec->err == 0; i++) {
		if (mon_bucket_get(dec, &m->buckets[i]) != 0)
			break;
		if (i > 0 && m->buckets[i].id >= m->buckets[i - 1].id)
			proto_dec_fail(dec, "buckets: id %d out of order", m->buckets[i].id);
	}
	/* parents exist and are of a higher type; names are unique */
	for (i = 0; i < m->nbuckets && dec->err == 0; i++) {
		const struct mon_bucket *b = &m->buckets[i], *p = NULL;

		if (b->parent != 0 &&
		    ((p = mon_map_bucket(m, b->parent)) == NULL || p->type <= b->type))
			proto_dec_fail(dec, "bucket %d: bad parent %d", b->id, b->parent);
		for (uint32_t j = 0; j < i && dec->err == 0; j++)
			if (!strcmp(m->buckets[j].name, b->name))
				proto_dec_fail(dec, "bucket %d: name '%s' taken", b->id, b->name);
	}
	proto_dec_get_count(dec, "locs", MON_OSD_MAX, MON_LOC_WIRE_MIN, &m->nlocs);
	if (dec->err == 0 && m->nlocs > 0 && (m->locs = calloc(m->nlocs, sizeof(*m->locs))) == NULL)
		return -ENOMEM;
	for (i = 0; i < m->nlocs && dec->err == 0; i++) {
		if (mon_loc_get(dec, &m->locs[i]) != 0)
			break;
		if (i > 0 && m->locs[i].osd <= m->locs[i - 1].osd)
			proto_dec_fail(dec, "locs: osd %u out of order", m->locs[i].osd);
		else if (m->locs[i].parent == 0 || mon_map_bucket(m, m->locs[i].parent) == NULL)
			proto_dec_fail(dec, "loc: osd %u in unknown bucket %d", m->locs[i].osd,
				       m->locs[i].parent);
	}
	proto_dec_get_count(dec, "upmaps", MON_UPMAP_MAX, MON_UPMAP_WIRE_MIN, &m->nupmaps);
	if (dec->err == 0 && m->nupmaps > 0 &&
	    (m->upmaps = calloc(m->nupmaps, sizeof(*m->upmaps))) == NULL)
		return -ENOMEM;
	for (i = 0; i < m->nupmaps && dec->err == 0; i++) {
		const struct mon_upmap *u = &m->upmaps[i];

		if (mon_upmap_get(dec, &m->upmaps[i]) != 0)
			break;
		if (i > 0 && mon_upmap_cmp(&m->upmaps[i - 1], u->pool, u->pg, u->from) >= 0)
			proto_dec_fail(dec, "upmaps: %u.%x out of order", u->pool, u->pg);
	}
	proto_dec_get_u8(dec, "balancer", &m->balancer);
	if (dec->err == 0 && m->balancer > MON_BALANCER_OFF)
		proto_dec_fail(dec, "balancer: mode %u unknown", m->balancer);
	return dec->err;
}

/* ------------------------------------------------------------ copy, free */

static int mon_dup(void **dst, const void *src, size_t n, size_t size)
{
	*dst = NULL;
	if (n == 0)
		return 0;
	*dst = malloc(n * size);
	if (*dst == NULL)
		return -ENOMEM;
	memcpy(*dst, src, n * size);
	return 0;
}

int mon_map_topo_copy(struct mon_map *dst, const struct mon_map *src)
{
	dst->locs = NULL;
	dst->upmaps = NULL;
	if (mon_dup((void **)&dst->buckets, src->buckets, src->nbuckets, sizeof(*src->buckets)) ||
	    mon_dup((void **)&dst->locs, src->locs, src->nlocs, sizeof(*src->locs)) ||
	    mon_dup((void **)&dst->upmaps, src->upmaps, src->nupmaps, sizeof(*src->upmaps))) {
		mon_map_topo_free(dst);
		return -ENOMEM;
	}
	return 0;
}

void mon_map_topo_free(struct mon_map *map)
{
	free(map->buckets);
	free(map->locs);
	free(map->upmaps);
	map->buckets = NULL;
	map->locs = NULL;
	map->upmaps = NULL;
	map->nbuckets = map->nlocs = map->nupmaps = 0;
}

/* ------------------------------------------------------------------ apply */

static bool mon_bucket_in_use(const struct mon_map *map, int32_t id)
{
	for (uint32_t i = 0; i < map->nbuckets; i++)
		if (map->buckets[i].parent == id)
			return true;
	for (uint32_t i = 0; i < map->nlocs; i++)
		if (map->locs[i].parent == id)
			return true;
	for (uint32_t i = 0; i < map->npools; i++)
		if (map->pools[i].root == id)
			return true;
	return false;
}

int mon_map_topo_check(const struct mon_map *map, const struct mon_op *op)
{
	const struct mon_bucket *b, *p;

	switch (op->kind) {
	case MON_OP_BUCKET_SET:
		b = &op->bucket;
		if (b->id >= 0 || b->id < -(int32_t)MON_BUCKET_MAX || b->name[0] == '\0' ||
		    b->type < MON_CT_HOST || b->type >= MON_CT_COUNT)
			return -EINVAL;
		p = b->parent != 0 ? mon_map_bucket(map, b->parent) : NULL;
		if (b->parent != 0 && (p == NULL || p->type <= b->type))
			return -EINVAL;
		/* a type change must keep the children below it and the parent above */
		for (uint32_t i = 0; i < map->nbuckets; i++) {
			const struct mon_bucket *c = &map->buckets[i];

			if (c->id != b->id && !strcmp(c->name, b->name))
				return -EEXIST;
			if (c->parent == b->id && c->type >= b->type)
				return -EINVAL;
		}
		if (mon_map_bucket(map, b->id) == NULL && map->nbuckets >= MON_BUCKET_MAX)
			return -ENOSPC;
		return 0;
	case MON_OP_BUCKET_RM:
		if (mon_map_bucket(map, op->bucket_id) == NULL)
			return -ENOENT;
		return mon_bucket_in_use(map, op->bucket_id) ? -EBUSY : 0;
	case MON_OP_OSD_LOC:
		if (op->loc.osd >= MON_OSD_MAX || op->loc.parent > 0)
			return -EINVAL;
		return op->loc.parent == 0 || mon_map_bucket(map, op->loc.parent) ? 0 : -ENOENT;
	case MON_OP_UPMAP_SET:
		if (op->upmap.from < 0 || op->upmap.to < 0 || op->upmap.from == op->upmap.to ||
		    op->upmap.from >= (int32_t)MON_OSD_MAX || op->upmap.to >= (int32_t)MON_OSD_MAX)
			return -EINVAL;
		return map->nupmaps < MON_UPMAP_MAX ? 0 : -ENOSPC;
	case MON_OP_UPMAP_RM:
		return 0;
	case MON_OP_BALANCER:
		return op->balancer <= MON_BALANCER_OFF ? 0 : -EINVAL;
	}
	return -EINVAL;
}

static int mon_arr_insert(void **arr, uint32_t *n, uint32_t at, const void *item, size_t size)
{
	uint8_t *a = realloc(*arr, (*n + 1) * size);

	if (a == NULL)
		return -ENOMEM;
	memmove(a + (at + 1) * size, a + at * size, (*n - at) * size);
	memcpy(a + at * size, item, size);
	*arr = a;
	(*n)++;
	return 0;
}

static void mon_arr_remove(void *arr, uint32_t *n, uint32_t at, size_t size)
{
	uint8_t *a = arr;

	memmove(a + at * size, a + (at + 1) * size, (*n - at - 1) * size);
	(*n)--;
}

int mon_map_topo_apply(struct mon_map *map, const struct mon_op *op)
{
	uint32_t i;
	bool found;
	int rc = mon_map_topo_check(map, op);

	if (rc != 0)
		return rc;
	switch (op->kind) {
	case MON_OP_BUCKET_SET:
		for (i = 0; i < map->nbuckets && map->buckets[i].id > op->bucket.id; i++)
			;
		if (i < map->nbuckets && map->buckets[i].id == op->bucket.id) {
			map->buckets[i] = op->bucket;
			return 0;
		}
		return mon_arr_insert((void **)&map->buckets, &map->nbuckets, i, &op->bucket,
				      sizeof(op->bucket));
	case MON_OP_BUCKET_RM:
		for (i = 0; map->buckets[i].id != op->bucket_id; i++)
			;
		mon_arr_remove(map->buckets, &map->nbuckets, i, sizeof(*map->buckets));
		return 0;
	case MON_OP_OSD_LOC:
		i = (uint32_t)mon_loc_find(map, op->loc.osd, &found);
		if (found && op->loc.parent == 0)
			mon_arr_remove(map->locs, &map->nlocs, i, sizeof(*map->locs));
		else if (found)
			map->locs[i] = op->loc;
		else if (op->loc.parent != 0)
			return mon_arr_insert((void **)&map->locs, &map->nlocs, i, &op->loc,
					      sizeof(op->loc));
		return 0;
	case MON_OP_UPMAP_SET:
		i = mon_upmap_find(map, &op->upmap, &found);
		if (found) {
			map->upmaps[i] = op->upmap;
			return 0;
		}
		return mon_arr_insert((void **)&map->upmaps, &map->nupmaps, i, &op->upmap,
				      sizeof(op->upmap));
	case MON_OP_UPMAP_RM:
		i = mon_upmap_find(map, &op->upmap, &found);
		if (found)
			mon_arr_remove(map->upmaps, &map->nupmaps, i, sizeof(*map->upmaps));
		return 0;
	case MON_OP_BALANCER:
		map->balancer = op->balancer;
		return 0;
	}
	return -EINVAL;
}

void mon_map_topo_pool_rm(struct mon_map *map, uint32_t pool)
{
	uint32_t out = 0;

	for (uint32_t i = 0; i < map->nupmaps; i++)
		if (map->upmaps[i].pool != pool)
			map->upmaps[out++] = map->upmaps[i];
	map->nupmaps = out;
}
