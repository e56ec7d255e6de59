/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cluster map and increments: encode, decode (bounded, canonical), apply.
 * Layouts are in docs/mon.md; every record is written by one function and
 * read by its mirror so the two cannot drift.
 */
#include "mon/map.h"
#include "mon/map_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Smallest wire sizes, for proto_dec_get_count's bound. */
#define MON_OSD_WIRE_MIN (4 + 1 + PROTO_UUID_LEN + 4 + 4 + 4 + 8 + 2 + 2 + 2)
#define MON_POOL_WIRE_MIN (4 + 4 + 4 + 4 + 2)
#define MON_OP_WIRE_MIN 2

void mon_map_init(struct mon_map *map)
{
	memset(map, 0, sizeof(*map));
	map->next_pool_id = 1;
	map->nearfull_ratio = MON_NEARFULL_RATIO_DEFAULT;
	map->backfillfull_ratio = MON_BACKFILLFULL_RATIO_DEFAULT;
	map->full_ratio = MON_FULL_RATIO_DEFAULT;
}

static void mon_map_cache_drop(struct mon_map *map)
{
	struct mon_map_cache *c = mon_map_cache_get(map);

	if (c != NULL)
		c->free(c);
	map->cache = NULL;
}

void mon_map_free(struct mon_map *map)
{
	mon_map_cache_drop(map);
	free(map->osds);
	free(map->pools);
	mon_map_topo_free(map);
	mon_map_mons_free(map);
	mon_map_init(map);
}

int mon_map_copy(struct mon_map *dst, const struct mon_map *src)
{
	struct mon_map m = *src;

	m.osds = NULL;
	m.pools = NULL;
	m.cache = NULL;
	m.mons = NULL;
	if (mon_map_topo_copy(&m, src) != 0)
		return -ENOMEM;
	if (mon_map_mons_copy(&m, src) != 0) {
		mon_map_topo_free(&m);
		return -ENOMEM;
	}
	if (src->max_osd > 0) {
		m.osds = malloc(sizeof(*m.osds) * src->max_osd);
		if (m.osds == NULL) {
			mon_map_topo_free(&m);
			mon_map_mons_free(&m);
			return -ENOMEM;
		}
		memcpy(m.osds, src->osds, sizeof(*m.osds) * src->max_osd);
	}
	if (src->npools > 0) {
		m.pools = malloc(sizeof(*m.pools) * src->npools);
		if (m.pools == NULL) {
			free(m.osds);
			mon_map_topo_free(&m);
			mon_map_mons_free(&m);
			return -ENOMEM;
		}
		memcpy(m.pools, src->pools, sizeof(*m.pools) * src->npools);
	}
	mon_map_free(dst);
	*dst = m;
	return 0;
}

const struct mon_osd *mon_map_osd(const struct mon_map *map, uint32_t id)
{
	if (id >= map->max_osd || !(map->osds[id].state & MON_OSD_EXISTS))
		return NULL;
	return &map->osds[id];
}

const struct mon_pool *mon_map_pool(const struct mon_map *map, uint32_t id)
{
	for (uint32_t i = 0; i < map->npools; i++)
		if (map->pools[i].id == id)
			return &map->pools[i];
	return NULL;
}

const struct mon_pool *mon_map_pool_by_name(const struct mon_map *map, const char *name)
{
	for (uint32_t i = 0; i < map->npools; i++)
		if (!strcmp(map->pools[i].name, name))
			return &map->pools[i];
	return NULL;
}

void mon_map_osd_counts(const struct mon_map *map, uint32_t *total, uint32_t *up, uint32_t *in)
{
	*total = *up = *in = 0;
	for (uint32_t i = 0; i < map->max_osd; i++) {
		uint8_t s = map->osds[i].state;

		if (!(s & MON_OSD_EXISTS))
			continue;
		(*total)++;
		*up += (s & MON_OSD_UP) ? 1 : 0;
		*in += (s & MON_OSD_IN) ? 1 : 0;
	}
}

/* ---------------------------------------------------------------- records */

static void mon_osd_put(struct proto_enc *enc, const struct mon_osd *o, uint8_t version)
{
	proto_enc_put_u32(enc, o->id);
	proto_enc_put_u8(enc, o->state);
	proto_enc_put_bytes(enc, o->uuid, sizeof(o->uuid));
	proto_enc_put_u32(enc, o->weight);
	proto_enc_put_u32(enc, o->up_from);
	proto_enc_put_u32(enc, o->down_at);
	proto_enc_put_u64(enc, o->down_stamp);
	proto_enc_put_str16(enc, o->host, strlen(o->host));
	proto_enc_put_str16(enc, o->public_addr, strlen(o->public_addr));
	proto_enc_put_str16(enc, o->cluster_addr, strlen(o->cluster_addr));
	if (version >= 4)
		proto_enc_put_u32(enc, o->reject);
}

static int mon_osd_get(struct proto_dec *dec, struct mon_osd *o, uint8_t version)
{
	uint8_t known = MON_OSD_STATE_KNOWN | (version >= 3 ? MON_OSD_FULLNESS : 0);
	size_t n;

	memset(o, 0, sizeof(*o));
	proto_dec_get_u32(dec, "osd.id", &o->id);
	proto_dec_get_u8(dec, "osd.state", &o->state);
	proto_dec_get_bytes(dec, "osd.uuid", o->uuid, sizeof(o->uuid));
	proto_dec_get_u32(dec, "osd.weight", &o->weight);
	proto_dec_get_u32(dec, "osd.up_from", &o->up_from);
	proto_dec_get_u32(dec, "osd.down_at", &o->down_at);
	proto_dec_get_u64(dec, "osd.down_stamp", &o->down_stamp);
	proto_dec_get_str16(dec, "osd.host", MON_NAME_MAX, o->host, sizeof(o->host), &n);
	proto_dec_get_str16(dec, "osd.public_addr", PROTO_ADDR_MAX, o->public_addr,
			    sizeof(o->public_addr), &n);
	proto_dec_get_str16(dec, "osd.cluster_addr", PROTO_ADDR_MAX, o->cluster_addr,
			    sizeof(o->cluster_addr), &n);
	if (version >= 4)
		proto_dec_get_u32(dec, "osd.reject", &o->reject);
	if (dec->err != 0)
		return dec->err;
	if (o->reject > MON_WEIGHT_ONE)
		return proto_dec_fail(dec, "osd.reject: 0x%x above 0x%x", o->reject, MON_WEIGHT_ONE);
	if (o->id >= MON_OSD_MAX)
		return proto_dec_fail(dec, "osd.id: %u exceeds max %u", o->id, MON_OSD_MAX - 1);
	if ((o->state & ~known) != 0 || !(o->state & MON_OSD_EXISTS))
		return proto_dec_fail(dec, "osd.state: bad bits 0x%02x", o->state);
	return 0;
}

static void mon_pool_put(struct proto_enc *enc, const struct mon_pool *p, uint8_t version)
{
	proto_enc_put_u32(enc, p->id);
	proto_enc_put_u32(enc, p->size);
	proto_enc_put_u32(enc, p->min_size);
	proto_enc_put_u32(enc, p->pg_num);
	proto_enc_put_str16(enc, p->name, strlen(p->name));
	if (version >= 2) {
		proto_enc_put_u8(enc, p->domain);
		proto_enc_put_u32(enc, (uint32_t)p->root);
	}
	if (version >= 3) {
		proto_enc_put_u64(enc, p->quota_max_bytes);
		proto_enc_put_u64(enc, p->quota_max_objects);
		proto_enc_put_u32(enc, p->flags);
	}
}

static int mon_pool_get(struct proto_dec *dec, struct mon_pool *p, uint8_t version)
{
	uint32_t root = 0;
	size_t n = 0;

	memset(p, 0, sizeof(*p));
	proto_dec_get_u32(dec, "pool.id", &p->id);
	proto_dec_get_u32(dec, "pool.size", &p->size);
	proto_dec_get_u32(dec, "pool.min_size", &p->min_size);
	proto_dec_get_u32(dec, "pool.pg_num", &p->pg_num);
	proto_dec_get_str16(dec, "pool.name", MON_NAME_MAX, p->name, sizeof(p->name), &n);
	if (version >= 2) {
		proto_dec_get_u8(dec, "pool.domain", &p->domain);
		proto_dec_get_u32(dec, "pool.root", &root);
		p->root = (int32_t)root;
	}
	if (version >= 3) {
		proto_dec_get_u64(dec, "pool.quota_max_bytes", &p->quota_max_bytes);
		proto_dec_get_u64(dec, "pool.quota_max_objects", &p->quota_max_objects);
		proto_dec_get_u32(dec, "pool.flags", &p->flags);
	}
	if (dec->err != 0)
		return dec->err;
	if (p->flags & ~MON_POOL_FLAGS_KNOWN)
		return proto_dec_fail(dec, "pool %u: unknown flags 0x%x", p->id, p->flags);
	if (p->domain >= MON_CT_ROOT || p->root > 0)
		return proto_dec_fail(dec, "pool %u: domain %u root %d", p->id, p->domain, p->root);
	if (n == 0 || p->id == 0)
		return proto_dec_fail(dec, "pool: id %u, name of %zu bytes", p->id, n);
	if (p->size < 1 || p->min_size < 1 || p->min_size > p->size || p->pg_num < 1)
		return proto_dec_fail(dec, "pool %u: size %u min_size %u pg_num %u", p->id,
				      p->size, p->min_size, p->pg_num);
	return 0;
}

/* -------------------------------------------------------------- versions */

bool mon_ratios_valid(const struct mon_ratios *r)
{
	return r->nearfull > 0 && r->nearfull <= r->backfillfull && r->backfillfull <= r->full &&
	       r->full < MON_RATIO_ONE;
}

static bool mon_pool_needs_v3(const struct mon_pool *p)
{
	return p->quota_max_bytes != 0 || p->quota_max_objects != 0 || p->flags != 0;
}

/* The lowest encoding version that can carry op. */
static uint8_t mon_op_version(const struct mon_op *op)
{
	if (op->kind == MON_OP_MON_SET || op->kind == MON_OP_MON_RM)
		return 5;
	if (op->kind == MON_OP_BLOCKLIST_ADD || op->kind == MON_OP_BLOCKLIST_RM)
		return 7;
	if (op->kind == MON_OP_MUTE_SET || op->kind == MON_OP_MUTE_RM)
		return 6;
	if (op->kind == MON_OP_OSD_RM || (op->kind == MON_OP_OSD_SET && op->osd.reject != 0) ||
	    (op->kind == MON_OP_FLAGS && (op->flags & ~MON_FLAGS_V1)))
		return 4;
	if (op->kind == MON_OP_FULL_RATIOS ||
	    (op->kind == MON_OP_OSD_SET && (op->osd.state & MON_OSD_FULLNESS)) ||
	    (op->kind == MON_OP_POOL_SET && mon_pool_needs_v3(&op->pool)))
		return 3;
	return mon_op_needs_v2(op) ? 2 : 1;
}

/* The lowest encoding version that can carry map. */
static uint8_t mon_map_version(const struct mon_map *map)
{
	bool v3 = map->nearfull_ratio != MON_NEARFULL_RATIO_DEFAULT ||
		  map->backfillfull_ratio != MON_BACKFILLFULL_RATIO_DEFAULT ||
		  map->full_ratio != MON_FULL_RATIO_DEFAULT;

	bool v4 = (map->flags & ~MON_FLAGS_V1) != 0;

	if (map->nblocklist > 0)
		return 7;
	if (map->nmutes > 0)
		return 6;
	if (map->next_mon_id != 0 || map->nmons != 0)
		return 5;
	for (uint32_t i = 0; i < map->max_osd && !v4; i++)
		v4 = (map->osds[i].state & MON_OSD_EXISTS) && map->osds[i].reject != 0;
	if (v4)
		return 4;
	for (uint32_t i = 0; i < map->max_osd && !v3; i++)
		v3 = (map->osds[i].state & MON_OSD_EXISTS) && (map->osds[i].state & MON_OSD_FULLNESS);
	for (uint32_t i = 0; i < map->npools && !v3; i++)
		v3 = mon_pool_needs_v3(&map->pools[i]);
	if (v3)
		return 3;
	return mon_map_needs_v2(map) ? 2 : 1;
}

/* -------------------------------------------------------------------- map */

static void mon_map_put(struct proto_enc *enc, const struct mon_map *map)
{
	uint8_t version = mon_map_version(map);
	uint32_t n = 0;

	for (uint32_t i = 0; i < map->max_osd; i++)
		n += (map->osds[i].state & MON_OSD_EXISTS) ? 1 : 0;
	proto_enc_put_u8(enc, version);
	proto_enc_put_u32(enc, map->epoch);
	proto_enc_put_u32(enc, map->flags);
	proto_enc_put_u32(enc, map->next_pool_id);
	proto_enc_put_u32(enc, n);
	for (uint32_t i = 0; i < map->max_osd; i++)
		if (map->osds[i].state & MON_OSD_EXISTS)
			mon_osd_put(enc, &map->osds[i], version);
	proto_enc_put_u32(enc, map->npools);
	for (uint32_t i = 0; i < map->npools; i++)
		mon_pool_put(enc, &map->pools[i], version);
	if (version >= 2)
		mon_map_topo_put(enc, map);
	if (version >= 3) {
		proto_enc_put_u32(enc, map->nearfull_ratio);
		proto_enc_put_u32(enc, map->backfillfull_ratio);
		proto_enc_put_u32(enc, map->full_ratio);
	}
	if (version >= 5)
		mon_map_mons_put(enc, map);
	/* version 4 is another part's (its fields come before these) */
	if (version >= 6)
		mon_map_mutes_put(enc, map);
	if (version >= 7)
		mon_map_blocklist_put(enc, map);
}

static int mon_encode_alloc(void (*put)(struct proto_enc *, const void *), const void *obj,
			    void **buf_out, size_t *len_out)
{
	struct proto_enc enc;
	size_t len;
	void *buf;
	int rc;

	proto_enc_init(&enc, NULL, 0);
	put(&enc, obj);
	rc = proto_enc_finish(&enc, &len);
	if (rc != 0)
		return rc;
	buf = malloc(len > 0 ? len : 1);
	if (buf == NULL)
		return -ENOMEM;
	proto_enc_init(&enc, buf, len);
	put(&enc, obj);
	rc = proto_enc_finish(&enc, &len);
	if (rc != 0) {
		free(buf);
		return rc;
	}
	*buf_out = buf;
	*len_out = len;
	return 0;
}

static void mon_map_put_cb(struct proto_enc *enc, const void *obj)
{
	mon_map_put(enc, obj);
}

int mon_map_encode(const struct mon_map *map, void **buf_out, size_t *len_out)
{
	return mon_encode_alloc(mon_map_put_cb, map, buf_out, len_out);
}

int mon_map_decode(const void *buf, size_t len, struct proto_err *err, struct mon_map *map)
{
	struct mon_map m;
	struct proto_dec dec;
	struct mon_osd o;
	uint32_t nosd = 0, i;
	uint8_t version = 0;
	int rc = -EBADMSG;

	mon_map_init(&m);
	proto_dec_init(&dec, buf, len, "osdmap", err);
	proto_dec_get_u8(&dec, "version", &version);
	if (dec.err == 0 && (version < MON_MAP_VERSION_MIN || version > MON_MAP_VERSION))
		proto_dec_fail(&dec, "version: %u not supported", version);
	proto_dec_get_u32(&dec, "epoch", &m.epoch);
	proto_dec_get_u32(&dec, "flags", &m.flags);
	proto_dec_get_u32(&dec, "next_pool_id", &m.next_pool_id);
	if (dec.err == 0 && (m.flags & ~(version >= 4 ? MON_FLAGS_KNOWN : MON_FLAGS_V1)) != 0)
		proto_dec_fail(&dec, "flags: unknown bits 0x%x", m.flags & ~MON_FLAGS_KNOWN);
	proto_dec_get_count(&dec, "osds", MON_OSD_MAX, MON_OSD_WIRE_MIN, &nosd);
	for (i = 0; i < nosd && dec.err == 0; i++) {
		if (mon_osd_get(&dec, &o, version) != 0)
			break;
		/* canonical: ascending ids, so one map has one encoding */
		if (o.id < m.max_osd) {
			proto_dec_fail(&dec, "osds: id %u out of order", o.id);
			break;
		}
		m.osds = realloc(m.osds, sizeof(*m.osds) * (o.id + 1));
		if (m.osds == NULL) {
			rc = -ENOMEM;
			goto out;
		}
		memset(&m.osds[m.max_osd], 0, sizeof(*m.osds) * (o.id + 1 - m.max_osd));
		m.osds[o.id] = o;
		m.max_osd = o.id + 1;
	}
	proto_dec_get_count(&dec, "pools", MON_POOL_MAX, MON_POOL_WIRE_MIN, &m.npools);
	if (dec.err == 0 && m.npools > 0) {
		m.pools = calloc(m.npools, sizeof(*m.pools));
		if (m.pools == NULL) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (i = 0; i < m.npools && dec.err == 0; i++) {
		if (mon_pool_get(&dec, &m.pools[i], version) != 0)
			break;
		if (i > 0 && m.pools[i].id <= m.pools[i - 1].id)
			proto_dec_fail(&dec, "pools: id %u out of order", m.pools[i].id);
		else if (m.pools[i].id >= m.next_pool_id)
			proto_dec_fail(&dec, "pools: id %u >= next_pool_id %u", m.pools[i].id,
				       m.next_pool_id);
	}
	if (version >= 2 && dec.err == 0) {
		rc = mon_map_topo_get(&dec, &m);
		if (rc == -ENOMEM)
			goto out;
		rc = -EBADMSG;
		for (i = 0; i < m.npools && dec.err == 0; i++)
			if (m.pools[i].root != 0 && mon_map_bucket(&m, m.pools[i].root) == NULL)
				proto_dec_fail(&dec, "pool %u: root %d unknown", m.pools[i].id,
					       m.pools[i].root);
	}
	if (version >= 3 && dec.err == 0) {
		struct mon_ratios r = {0};

		proto_dec_get_u32(&dec, "nearfull_ratio", &r.nearfull);
		proto_dec_get_u32(&dec, "backfillfull_ratio", &r.backfillfull);
		proto_dec_get_u32(&dec, "full_ratio", &r.full);
		if (dec.err == 0 && !mon_ratios_valid(&r))
			proto_dec_fail(&dec, "ratios: %u/%u/%u not ordered in (0, %u)", r.nearfull,
				       r.backfillfull, r.full, MON_RATIO_ONE);
		m.nearfull_ratio = r.nearfull;
		m.backfillfull_ratio = r.backfillfull;
		m.full_ratio = r.full;
	}
	if (version >= 5 && dec.err == 0) {
		rc = mon_map_mons_get(&dec, &m);
		if (rc == -ENOMEM)
			goto out;
		rc = -EBADMSG;
	}
	if (version >= 6 && dec.err == 0)
		mon_map_mutes_get(&dec, &m);
	if (version >= 7 && dec.err == 0)
		mon_map_blocklist_get(&dec, &m);
	/* canonical: what a lower version can say is said in it */
	if (dec.err == 0 && version > 1 && mon_map_version(&m) != version)
		proto_dec_fail(&dec, "version: %u for a map that needs version %u", version,
			       mon_map_version(&m));
	if (proto_dec_finish(&dec) != 0)
		goto out;
	mon_map_free(map);
	*map = m;
	return 0;
out:
	mon_map_free(&m);
	return rc;
}

/* -------------------------------------------------------------- increment */

void mon_inc_init(struct mon_inc *inc)
{
	memset(inc, 0, sizeof(*inc));
}

void mon_inc_free(struct mon_inc *inc)
{
	free(inc->ops);
	mon_inc_init(inc);
}

int mon_inc_add(struct mon_inc *inc, const struct mon_op *op)
{
	struct mon_op *ops;

	if (inc->nops >= MON_INC_OPS_MAX)
		return -E2BIG;
	ops = realloc(inc->ops, sizeof(*ops) * (inc->nops + 1));
	if (ops == NULL)
		return -ENOMEM;
	ops[inc->nops++] = *op;
	inc->ops = ops;
	return 0;
}

static void mon_inc_put(struct proto_enc *enc, const void *obj)
{
	const struct mon_inc *inc = obj;
	uint8_t version = 1;

	for (uint32_t i = 0; i < inc->nops; i++)
		if (mon_op_version(&inc->ops[i]) > version)
			version = mon_op_version(&inc->ops[i]);
	proto_enc_put_u8(enc, version);
	proto_enc_put_u32(enc, inc->epoch);
	proto_enc_put_u64(enc, inc->stamp);
	proto_enc_put_str16(enc, inc->reason, strlen(inc->reason));
	proto_enc_put_u32(enc, inc->nops);
	for (uint32_t i = 0; i < inc->nops; i++) {
		const struct mon_op *op = &inc->ops[i];

		proto_enc_put_u8(enc, op->kind);
		switch (op->kind) {
		case MON_OP_OSD_SET:
			mon_osd_put(enc, &op->osd, version);
			break;
		case MON_OP_POOL_SET:
			mon_pool_put(enc, &op->pool, version);
			break;
		case MON_OP_POOL_RM:
			proto_enc_put_u32(enc, op->pool_id);
			break;
		case MON_OP_FLAGS:
			proto_enc_put_u32(enc, op->flags);
			break;
		case MON_OP_BUCKET_SET:
			mon_bucket_put(enc, &op->bucket);
			break;
		case MON_OP_BUCKET_RM:
			proto_enc_put_u32(enc, (uint32_t)op->bucket_id);
			break;
		case MON_OP_OSD_LOC:
			mon_loc_put(enc, &op->loc);
			break;
		case MON_OP_UPMAP_SET:
		case MON_OP_UPMAP_RM:
			mon_upmap_put(enc, &op->upmap);
			break;
		case MON_OP_BALANCER:
			proto_enc_put_u8(enc, op->balancer);
			break;
		case MON_OP_FULL_RATIOS:
			proto_enc_put_u32(enc, op->ratios.nearfull);
			proto_enc_put_u32(enc, op->ratios.backfillfull);
			proto_enc_put_u32(enc, op->ratios.full);
			break;
		case MON_OP_OSD_RM:
			proto_enc_put_u32(enc, op->osd_id);
			break;
		case MON_OP_MON_SET:
			mon_mon_put(enc, &op->mon);
			break;
		case MON_OP_MON_RM:
			proto_enc_put_u32(enc, op->mon_id);
			break;
		case MON_OP_MUTE_SET:
			mon_mute_put(enc, &op->mute);
			break;
		case MON_OP_MUTE_RM:
			proto_enc_put_str16(enc, op->mute.code, strlen(op->mute.code));
			break;
		case MON_OP_BLOCKLIST_ADD:
			mon_blocklist_put(enc, &op->bl);
			break;
		case MON_OP_BLOCKLIST_RM:
			proto_enc_put_u64(enc, op->bl.instance);
			break;
		}
	}
}

int mon_inc_encode(const struct mon_inc *inc, void **buf_out, size_t *len_out)
{
	return mon_encode_alloc(mon_inc_put, inc, buf_out, len_out);
}

int mon_inc_decode(const void *buf, size_t len, struct proto_err *err, struct mon_inc *inc_out)
{
	struct mon_inc inc;
	struct proto_dec dec;
	uint8_t version = 0;
	size_t n;

	mon_inc_init(&inc);
	proto_dec_init(&dec, buf, len, "osdmap_inc", err);
	proto_dec_get_u8(&dec, "version", &version);
	if (dec.err == 0 && (version < MON_MAP_VERSION_MIN || version > MON_MAP_VERSION))
		proto_dec_fail(&dec, "version: %u not supported", version);
	proto_dec_get_u32(&dec, "epoch", &inc.epoch);
	proto_dec_get_u64(&dec, "stamp", &inc.stamp);
	proto_dec_get_str16(&dec, "reason", MON_REASON_MAX, inc.reason, sizeof(inc.reason), &n);
	proto_dec_get_count(&dec, "ops", MON_INC_OPS_MAX, MON_OP_WIRE_MIN, &inc.nops);
	if (dec.err == 0 && inc.epoch == 0)
		proto_dec_fail(&dec, "epoch: 0 is not a map epoch");
	if (dec.err == 0 && inc.nops > 0) {
		inc.ops = calloc(inc.nops, sizeof(*inc.ops));
		if (inc.ops == NULL)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < inc.nops && dec.err == 0; i++) {
		struct mon_op *op = &inc.ops[i];

		proto_dec_get_u8(&dec, "op.kind", &op->kind);
		if (dec.err != 0)
			break;
		switch (op->kind) {
		case MON_OP_OSD_SET:
			mon_osd_get(&dec, &op->osd, version);
			break;
		case MON_OP_POOL_SET:
			mon_pool_get(&dec, &op->pool, version);
			break;
		case MON_OP_POOL_RM:
			proto_dec_get_u32(&dec, "op.pool_id", &op->pool_id);
			break;
		case MON_OP_FLAGS:
			proto_dec_get_u32(&dec, "op.flags", &op->flags);
			if (dec.err == 0 && (op->flags & ~MON_FLAGS_KNOWN) != 0)
				proto_dec_fail(&dec, "op.flags: unknown bits 0x%x", op->flags);
			break;
		case MON_OP_BUCKET_SET:
			mon_bucket_get(&dec, &op->bucket);
			break;
		case MON_OP_BUCKET_RM: {
			uint32_t id = 0;

			proto_dec_get_u32(&dec, "op.bucket_id", &id);
			op->bucket_id = (int32_t)id;
			break;
		}
		case MON_OP_OSD_LOC:
			mon_loc_get(&dec, &op->loc);
			break;
		case MON_OP_UPMAP_SET:
		case MON_OP_UPMAP_RM:
			mon_upmap_get(&dec, &op->upmap);
			break;
		case MON_OP_BALANCER:
			proto_dec_get_u8(&dec, "op.balancer", &op->balancer);
			break;
		case MON_OP_FULL_RATIOS:
			proto_dec_get_u32(&dec, "op.nearfull_ratio", &op->ratios.nearfull);
			proto_dec_get_u32(&dec, "op.backfillfull_ratio", &op->ratios.backfillfull);
			proto_dec_get_u32(&dec, "op.full_ratio", &op->ratios.full);
			if (dec.err == 0 && !mon_ratios_valid(&op->ratios))
				proto_dec_fail(&dec, "op.ratios: %u/%u/%u not ordered in (0, %u)",
					       op->ratios.nearfull, op->ratios.backfillfull,
					       op->ratios.full, MON_RATIO_ONE);
			break;
		case MON_OP_OSD_RM:
			proto_dec_get_u32(&dec, "op.osd_id", &op->osd_id);
			if (dec.err == 0 && op->osd_id >= MON_OSD_MAX)
				proto_dec_fail(&dec, "op.osd_id: %u exceeds max %u", op->osd_id,
					       MON_OSD_MAX - 1);
			break;
		case MON_OP_MON_SET:
			mon_mon_get(&dec, &op->mon);
			break;
		case MON_OP_MON_RM:
			proto_dec_get_u32(&dec, "op.mon_id", &op->mon_id);
			if (dec.err == 0 && op->mon_id == 0)
				proto_dec_fail(&dec, "op.mon_id: 0 is not a monitor id");
			break;
		case MON_OP_MUTE_SET:
			mon_mute_get(&dec, &op->mute);
			break;
		case MON_OP_MUTE_RM: {
			size_t cn;

			proto_dec_get_str16(&dec, "op.code", MON_MUTE_CODE_MAX, op->mute.code,
					    sizeof(op->mute.code), &cn);
			if (dec.err == 0 && !mon_mute_code_valid(op->mute.code))
				proto_dec_fail(&dec, "op.code: '%s' is not a check code",
					       op->mute.code);
			break;
		}
		case MON_OP_BLOCKLIST_ADD:
			mon_blocklist_get(&dec, &op->bl);
			break;
		case MON_OP_BLOCKLIST_RM:
			proto_dec_get_u64(&dec, "op.instance", &op->bl.instance);
			if (dec.err == 0 && op->bl.instance == 0)
				proto_dec_fail(&dec, "op.instance: 0 is not a client instance");
			break;
		default:
			proto_dec_fail(&dec, "op.kind: unknown %u", op->kind);
			break;
		}
		if (dec.err == 0 && mon_op_version(op) > version)
			proto_dec_fail(&dec, "op.kind: %u needs version %u", op->kind,
				       mon_op_version(op));
	}
	if (dec.err == 0 && version >= 2) {
		uint8_t need = 1;

		for (uint32_t i = 0; i < inc.nops; i++)
			if (mon_op_version(&inc.ops[i]) > need)
				need = mon_op_version(&inc.ops[i]);
		if (need != version)
			proto_dec_fail(&dec, "version: %u for an increment that needs version %u",
				       version, need);
	}
	if (proto_dec_finish(&dec) != 0) {
		mon_inc_free(&inc);
		return -EBADMSG;
	}
	*inc_out = inc;
	return 0;
}

/* ------------------------------------------------------------------ apply */

static int mon_map_pool_set(struct mon_map *map, const struct mon_pool *p)
{
	struct mon_pool *pools;
	uint32_t i;

	for (i = 0; i < map->npools; i++) {
		if (map->pools[i].id == p->id) {
			map->pools[i] = *p;
			return 0;
		}
		if (map->pools[i].id > p->id)
			break;
	}
	pools = realloc(map->pools, sizeof(*pools) * (map->npools + 1));
	if (pools == NULL)
		return -ENOMEM;
	memmove(&pools[i + 1], &pools[i], sizeof(*pools) * (map->npools - i));
	pools[i] = *p;
	map->pools = pools;
	map->npools++;
	if (p->id >= map->next_pool_id)
		map->next_pool_id = p->id + 1;
	return 0;
}

static void mon_map_pool_rm(struct mon_map *map, uint32_t id)
{
	for (uint32_t i = 0; i < map->npools; i++) {
		if (map->pools[i].id == id) {
			memmove(&map->pools[i], &map->pools[i + 1],
				sizeof(*map->pools) * (map->npools - i - 1));
			map->npools--;
			return;
		}
	}
}

/*
 * Free an OSD's slot and drop the upmap items that name it; max_osd shrinks
 * past trailing free slots, as a decoder of the same map would have it. Its
 * location (where a new OSD of that id would go) is left to the topology ops.
 */
static void mon_map_osd_rm(struct mon_map *map, uint32_t id)
{
	if (id >= map->max_osd)
		return;
	memset(&map->osds[id], 0, sizeof(map->osds[id]));
	for (uint32_t i = 0; i < map->nupmaps;) {
		if (map->upmaps[i].from == (int32_t)id || map->upmaps[i].to == (int32_t)id) {
			memmove(&map->upmaps[i], &map->upmaps[i + 1],
				sizeof(*map->upmaps) * (map->nupmaps - i - 1));
			map->nupmaps--;
		} else {
			i++;
		}
	}
	while (map->max_osd > 0 && !(map->osds[map->max_osd - 1].state & MON_OSD_EXISTS))
		map->max_osd--;
}

int mon_map_apply(struct mon_map *map, const struct mon_inc *inc)
{
	struct mon_map next;
	uint32_t max_osd = map->max_osd;
	int rc;

	if (inc->epoch != map->epoch + 1)
		return -ESTALE;
	for (uint32_t i = 0; i < inc->nops; i++) {
		const struct mon_op *op = &inc->ops[i];

		if (op->kind == MON_OP_OSD_SET) {
			if (op->osd.id >= MON_OSD_MAX || !(op->osd.state & MON_OSD_EXISTS) ||
			    (op->osd.state & ~(MON_OSD_STATE_KNOWN | MON_OSD_FULLNESS)) ||
			    op->osd.reject > MON_WEIGHT_ONE)
				return -EINVAL;
			if (op->osd.id >= max_osd)
				max_osd = op->osd.id + 1;
		} else if (op->kind == MON_OP_POOL_SET) {
			if (op->pool.id == 0 || map->npools >= MON_POOL_MAX ||
			    op->pool.domain >= MON_CT_ROOT || op->pool.root > 0 ||
			    (op->pool.flags & ~MON_POOL_FLAGS_KNOWN))
				return -EINVAL;
		} else if (op->kind == MON_OP_FULL_RATIOS) {
			if (!mon_ratios_valid(&op->ratios))
				return -EINVAL;
		} else if (op->kind == MON_OP_FLAGS) {
			if (op->flags & ~MON_FLAGS_KNOWN)
				return -EINVAL;
		} else if (op->kind == MON_OP_OSD_RM) {
			if (op->osd_id >= MON_OSD_MAX)
				return -EINVAL;
		} else if (op->kind == MON_OP_MON_SET || op->kind == MON_OP_MON_RM) {
			/* checked against the map as it is then (map_mons.c) */
		} else if (op->kind == MON_OP_MUTE_SET || op->kind == MON_OP_MUTE_RM) {
			if (mon_map_mute_check(op) != 0)
				return -EINVAL;
		} else if (op->kind == MON_OP_BLOCKLIST_ADD || op->kind == MON_OP_BLOCKLIST_RM) {
			if (mon_map_blocklist_check(op) != 0)
				return -EINVAL;
		} else if (op->kind < MON_OP_POOL_SET || op->kind > MON_OP_FULL_RATIOS) {
			return -EINVAL;
		}
	}
	/* Work on a copy so a failure (ENOMEM) leaves the map as it was. */
	mon_map_init(&next);
	rc = mon_map_copy(&next, map);
	if (rc != 0)
		return rc;
	if (max_osd > next.max_osd) {
		struct mon_osd *osds = realloc(next.osds, sizeof(*osds) * max_osd);

		if (osds == NULL) {
			mon_map_free(&next);
			return -ENOMEM;
		}
		memset(&osds[next.max_osd], 0, sizeof(*osds) * (max_osd - next.max_osd));
		next.osds = osds;
		next.max_osd = max_osd;
	}
	for (uint32_t i = 0; i < inc->nops; i++) {
		const struct mon_op *op = &inc->ops[i];

		switch (op->kind) {
		case MON_OP_OSD_SET:
			next.osds[op->osd.id] = op->osd;
			break;
		case MON_OP_POOL_SET:
			rc = op->pool.root != 0 && mon_map_bucket(&next, op->pool.root) == NULL
				     ? -EINVAL
				     : mon_map_pool_set(&next, &op->pool);
			break;
		case MON_OP_POOL_RM:
			mon_map_pool_rm(&next, op->pool_id);
			mon_map_topo_pool_rm(&next, op->pool_id);
			break;
		case MON_OP_FLAGS:
			next.flags = op->flags;
			break;
		case MON_OP_FULL_RATIOS:
			next.nearfull_ratio = op->ratios.nearfull;
			next.backfillfull_ratio = op->ratios.backfillfull;
			next.full_ratio = op->ratios.full;
			break;
		case MON_OP_OSD_RM:
			mon_map_osd_rm(&next, op->osd_id);
			break;
		case MON_OP_MON_SET:
		case MON_OP_MON_RM:
			rc = mon_map_mons_apply(&next, op);
			break;
		case MON_OP_MUTE_SET:
		case MON_OP_MUTE_RM:
			mon_map_mute_apply(&next, op);
			break;
		case MON_OP_BLOCKLIST_ADD:
		case MON_OP_BLOCKLIST_RM:
			mon_map_blocklist_apply(&next, op);
			break;
		default:
			/* ops in order: a bucket made by one op can hold the next */
			rc = mon_map_topo_apply(&next, op);
			break;
		}
		if (rc != 0) {
			mon_map_free(&next);
			return rc == -ENOMEM ? rc : -EINVAL;
		}
	}
	next.epoch = inc->epoch;
	mon_map_free(map);
	*map = next;
	return 0;
}

/* ---------------------------------------------------------------- strings */

const char *mon_osd_state_str(uint8_t state)
{
	static const char *const names[4] = { "down,out", "up,out", "down,in", "up,in" };

	if (!(state & MON_OSD_EXISTS))
		return "dne";
	return names[((state & MON_OSD_UP) ? 1 : 0) | ((state & MON_OSD_IN) ? 2 : 0)];
}

const char *mon_osd_fullness_str(uint8_t state)
{
	if (state & MON_OSD_FULL)
		return "full";
	if (state & MON_OSD_BACKFILLFULL)
		return "backfillfull";
	return (state & MON_OSD_NEARFULL) ? "nearfull" : "";
}

/* By bit, lowest first: the order status and health print them in. */
static const char *const mon_flag_tab[] = {
	"noout", "pause", "noin", "noup", "nodown", "norecover", "nobackfill", "norebalance",
	"noscrub", "nodeep-scrub",
};

const char *mon_flags_str(uint32_t flags, char *buf, size_t cap)
{
	size_t n = 0;

	if (cap > 0)
		buf[0] = '\0';
	for (unsigned int i = 0; i < sizeof(mon_flag_tab) / sizeof(mon_flag_tab[0]); i++) {
		if (!(flags & (1u << i)) || n >= cap)
			continue;
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", n > 0 ? "," : "", mon_flag_tab[i]);
	}
	return buf;
}

uint32_t mon_flag_parse(const char *name)
{
	for (unsigned int i = 0; i < sizeof(mon_flag_tab) / sizeof(mon_flag_tab[0]); i++)
		if (!strcmp(name, mon_flag_tab[i]))
			return 1u << i;
	return 0;
}

const char *mon_flag_names(void)
{
	return "noout, pause, noin, noup, nodown, norecover, nobackfill, norebalance, noscrub, "
	       "nodeep-scrub";
}

void mon_uuid_str(const uint8_t uuid[PROTO_UUID_LEN], char out[37])
{
	const uint8_t *u = uuid;

	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
}

int mon_uuid_parse(const char *s, uint8_t uuid_out[PROTO_UUID_LEN])
{
	uint8_t u[PROTO_UUID_LEN];
	unsigned int n = 0;

	for (const char *p = s; *p != '\0'; p++) {
		int hi, lo;

		if (*p == '-')
			continue;
		if (n >= PROTO_UUID_LEN || p[1] == '\0')
			return -EINVAL;
		hi = (*p >= '0' && *p <= '9') ? *p - '0' : (*p | 0x20) - 'a' + 10;
		lo = (p[1] >= '0' && p[1] <= '9') ? p[1] - '0' : (p[1] | 0x20) - 'a' + 10;
		if (hi < 0 || hi > 15 || lo < 0 || lo > 15)
			return -EINVAL;
		u[n++] = (uint8_t)(hi << 4 | lo);
		p++;
	}
	if (n != PROTO_UUID_LEN)
		return -EINVAL;
	memcpy(uuid_out, u, sizeof(u));
	return 0;
}
