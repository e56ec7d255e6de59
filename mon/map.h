/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cluster map: epoch, flags, OSDs, pools. Shared by the monitors (who
 * change it through Raft), the mon client, OSDs and the CLI (who decode it).
 *
 * Every change is an increment (struct mon_inc): a list of "set" operations
 * carrying whole records (never deltas), so applying an increment is
 * deterministic and idempotent in content, and epoch N+1 = apply(epoch N,
 * inc N+1) on every monitor and every subscriber alike. The Raft log holds
 * exactly these increments. docs/mon.md describes the contents.
 *
 * Encodings use the wire codec (proto/codec.h); decoders are bounded and
 * canonical like every proto decoder, and never log.
 */
#ifndef WEFT_MON_MAP_H
#define WEFT_MON_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

/*
 * Version 1: epoch, flags, OSDs, pools. Version 2 adds the topology
 * (buckets, OSD locations), pool rules, upmap items and the balancer mode.
 * Version 3 adds capacity: the full ratios, the OSDs' fullness bits, pool
 * quotas and pool flags. Version 4 adds the OSD lifecycle: the flags
 * noin..nodeep-scrub, an OSD's reweight override (MON_OP_OSD_SET records
 * carry `reject`) and the removal of an OSD (MON_OP_OSD_RM). A map or increment is encoded in the lowest
 * version that can say what it holds (so older decoders still read it and
 * each map has one encoding); an older map decodes with the default ratios.
 * Version 6 adds the health mutes (`weft health mute`, map_mute.c).
 * Version 7 adds the client blocklist (`weft osd blocklist`, map_blocklist.c).
 */
#define MON_MAP_VERSION 7
#define MON_MAP_VERSION_MIN 1
#define MON_BUCKET_MAX 16384 /* buckets in one map */
#define MON_UPMAP_MAX (1u << 20)
#define MON_OSD_MAX 65536   /* ids 0..65535 */
#define MON_POOL_MAX 4096   /* pools in one map */
#define MON_INC_OPS_MAX 8192
#define MON_NAME_MAX 63
#define MON_REASON_MAX 255
#define MON_WEIGHT_ONE 0x10000u /* weights are 16.16 fixed point */

/* map flags (docs/operations.md, "Flags", says where each is honoured) */
#define MON_FLAG_NOOUT 0x1u
#define MON_FLAG_PAUSE 0x2u
#define MON_FLAGS_V1 (MON_FLAG_NOOUT | MON_FLAG_PAUSE)
/* version 4 */
#define MON_FLAG_NOIN 0x4u	     /* a booting OSD that is out (or new) is not marked in */
#define MON_FLAG_NOUP 0x8u	     /* a booting OSD is not marked up */
#define MON_FLAG_NODOWN 0x10u	     /* failure reports and beacon expiry mark nothing down */
#define MON_FLAG_NORECOVER 0x20u     /* primaries start no log-based recovery */
#define MON_FLAG_NOBACKFILL 0x40u    /* primaries start no backfill */
#define MON_FLAG_NOREBALANCE 0x80u   /* no balancer changes; misplaced-only PGs not backfilled */
#define MON_FLAG_NOSCRUB 0x100u	     /* no new light scrubs */
#define MON_FLAG_NODEEP_SCRUB 0x200u /* no new deep scrubs */
#define MON_FLAGS_KNOWN 0x3ffu
#define MON_FLAGS_STR_MAX 128 /* mon_flags_str of every flag */

/* osd state bits */
#define MON_OSD_EXISTS 0x1u
#define MON_OSD_UP 0x2u
#define MON_OSD_IN 0x4u
/* marked out by an operator: a boot does not mark it in (only `osd in` does) */
#define MON_OSD_KEEP_OUT 0x80u
#define MON_OSD_STATE_KNOWN (MON_OSD_EXISTS | MON_OSD_UP | MON_OSD_IN | MON_OSD_KEEP_OUT)
/*
 * Version 3: the OSD's reported use against the map's ratios, set and
 * cleared by the leader (mon_cap.c). FULL implies BACKFILLFULL implies
 * NEARFULL. docs/capacity.md.
 */
#define MON_OSD_NEARFULL 0x8u
#define MON_OSD_BACKFILLFULL 0x10u
#define MON_OSD_FULL 0x20u
#define MON_OSD_FULLNESS (MON_OSD_NEARFULL | MON_OSD_BACKFILLFULL | MON_OSD_FULL)

/* Full ratios, in parts per million of an OSD's size. */
#define MON_RATIO_ONE 1000000u
#define MON_NEARFULL_RATIO_DEFAULT 850000u
#define MON_BACKFILLFULL_RATIO_DEFAULT 900000u
#define MON_FULL_RATIO_DEFAULT 950000u

/* pool flags (version 3) */
#define MON_POOL_F_FULL 0x1u /* a quota is reached: primaries refuse allocating writes (-EDQUOT) */
#define MON_POOL_FLAGS_KNOWN MON_POOL_F_FULL

/*
 * Version 6: a muted health check (`weft health mute CODE [TTL] [--sticky]`).
 * It lives in the map so every mon (and a new leader) knows it. Not sticky:
 * the leader removes it when the check clears or its count grows past the
 * count when muted. until_ms: wall-clock ms it expires at, 0 = never.
 */
#define MON_MUTE_MAX 32
#define MON_MUTE_CODE_MAX 31
struct mon_mute {
	char code[MON_MUTE_CODE_MAX + 1]; /* [A-Z0-9_], sorted in the map */
	uint64_t until_ms;
	uint32_t count; /* the check's count when muted */
	uint8_t sticky;
};

/*
 * Version 7: a blocklisted client instance (`weft osd blocklist add`). An
 * instance is the 64-bit id a libweft cluster handle draws at start and
 * sends in its hello (proto_hello.nonce); OSDs refuse every op from a
 * connection whose peer is listed (-WEFT_E_BLOCKLISTED) and drop those
 * connections when the map arrives. Entries stay until the leader removes
 * them at until_ms (wall-clock ms; never 0), so a reader needs no clock.
 */
#define MON_BLOCKLIST_MAX 256
struct mon_blocklist {
	uint64_t instance; /* never 0; sorted by instance in the map */
	uint64_t until_ms; /* expiry, wall-clock ms */
	uint64_t added_ms; /* when added, wall-clock ms (shown by `ls`) */
};

struct mon_osd {
	uint32_t id;
	uint8_t state; /* MON_OSD_* */
	uint8_t uuid[PROTO_UUID_LEN];
	uint32_t weight;   /* 16.16: the placement (crush) weight */
	uint32_t up_from;  /* epoch it last came up */
	uint32_t down_at;  /* epoch it last went down (0 = never) */
	uint64_t down_stamp; /* wall-clock seconds when marked down (for down -> out) */
	char host[MON_NAME_MAX + 1];
	char public_addr[PROTO_ADDR_MAX + 1];
	char cluster_addr[PROTO_ADDR_MAX + 1];
	/*
	 * Version 4: the reweight override as the share of this OSD's PGs that
	 * placement turns away (16.16; `osd reweight ID W` sets 1 - W), so a
	 * record left zeroed means reweight 1.0. 0x10000 turns every PG away.
	 */
	uint32_t reject;
};

/*
 * Topology levels (bucket types), lowest first. A tree may skip levels; a
 * bucket's parent is always of a higher type, so the tree has no cycles.
 */
enum mon_crush_type {
	MON_CT_NONE = 0, /* in a pool rule: the default, host */
	MON_CT_OSD = 1,
	MON_CT_HOST,
	MON_CT_CHASSIS,
	MON_CT_RACK,
	MON_CT_ROW,
	MON_CT_PDU,
	MON_CT_POD,
	MON_CT_ROOM,
	MON_CT_DATACENTER,
	MON_CT_ZONE,
	MON_CT_REGION,
	MON_CT_ROOT,
	MON_CT_COUNT
};

struct mon_pool {
	uint32_t id;
	uint32_t size, min_size, pg_num;
	char name[MON_NAME_MAX + 1];
	/* rule (version 2): replicas in distinct `domain` buckets under `root` */
	uint8_t domain;	   /* MON_CT_*; MON_CT_NONE = host */
	int32_t root;	   /* bucket id; 0 = the bucket named "default" */
	/* capacity (version 3) */
	uint64_t quota_max_bytes;   /* 0 = none */
	uint64_t quota_max_objects; /* 0 = none */
	uint32_t flags;		    /* MON_POOL_F_* */
};

/* A bucket of the topology (weights are not stored: a bucket weighs its OSDs). */
struct mon_bucket {
	int32_t id;	/* < 0 */
	uint8_t type;	/* MON_CT_HOST .. MON_CT_ROOT */
	int32_t parent; /* bucket id, 0 = none (a root) */
	char name[MON_NAME_MAX + 1];
};

/*
 * Where an OSD sits. An OSD without one goes under the host bucket named
 * by its `host` (made up under root "default" when the map has none).
 */
struct mon_osd_loc {
	uint32_t osd;
	int32_t parent; /* bucket id */
};

/* Upmap item: in PG (pool, pg), OSD `from` is replaced by `to`. */
struct mon_upmap {
	uint32_t pool, pg;
	int32_t from, to;
};

#define MON_BALANCER_DEFAULT 0 /* mon_balancer_enable decides */
#define MON_BALANCER_ON 1
#define MON_BALANCER_OFF 2

/* Derived data a reader builds from one map (placement's tree): freed with it. */
/* A monitor of the cluster (version 5): the membership the operator asked for. */
#define MON_MONS_MAX 7
struct mon_mon {
	uint32_t id;			 /* Raft server id, never reused (next_mon_id) */
	char name[MON_NAME_MAX + 1];	 /* "a" for mon.a; "" until it registered */
	char addr[PROTO_ADDR_MAX + 1];	 /* public (fabric) address; Raft at port + offset */
};

struct mon_map_cache {
	void (*free)(struct mon_map_cache *cache);
};

struct mon_map {
	uint32_t epoch; /* 0 = empty, before the first commit */
	uint32_t flags; /* MON_FLAG_* */
	uint32_t next_pool_id;
	uint32_t max_osd;	/* osds[] slots; ids >= max_osd do not exist */
	struct mon_osd *osds;	/* by id; a slot without MON_OSD_EXISTS is free */
	uint32_t npools;
	struct mon_pool *pools; /* sorted by id */
	/* version 2 */
	uint32_t nbuckets;
	struct mon_bucket *buckets; /* sorted by id, descending (-1, -2, ...) */
	uint32_t nlocs;
	struct mon_osd_loc *locs; /* sorted by osd */
	uint32_t nupmaps;
	struct mon_upmap *upmaps; /* sorted by (pool, pg, from) */
	uint8_t balancer;	  /* MON_BALANCER_* */
	/* version 3: parts per million, 0 < nearfull <= backfillfull <= full < MON_RATIO_ONE */
	uint32_t nearfull_ratio, backfillfull_ratio, full_ratio;
	/* version 5: the monitors, sorted by id; next_mon_id 0 = no list yet */
	uint32_t next_mon_id;
	uint32_t nmons;
	struct mon_mon *mons;
	/* version 6: health mutes, sorted by code */
	uint32_t nmutes;
	struct mon_mute mutes[MON_MUTE_MAX];
	/* version 7: the client blocklist, sorted by instance */
	uint32_t nblocklist;
	struct mon_blocklist blocklist[MON_BLOCKLIST_MAX];
	/*
	 * Not encoded: built on first use by a reader of this exact map (atomic
	 * pointer), dropped by copy/apply/decode/free. Maps change only through
	 * those functions, so the cache cannot go stale.
	 */
	struct mon_map_cache *cache;
};

enum mon_op_kind {
	MON_OP_OSD_SET = 1,  /* add or replace one OSD record */
	MON_OP_POOL_SET = 2, /* add or replace one pool */
	MON_OP_POOL_RM = 3,
	MON_OP_FLAGS = 4,
	/* version 2 */
	MON_OP_BUCKET_SET = 5, /* add or replace one bucket */
	MON_OP_BUCKET_RM = 6,  /* an empty bucket no pool rule names */
	MON_OP_OSD_LOC = 7,    /* set (parent != 0) or clear an OSD's location */
	MON_OP_UPMAP_SET = 8,  /* add or replace (pool, pg, from) */
	MON_OP_UPMAP_RM = 9,   /* remove (pool, pg, from) */
	MON_OP_BALANCER = 10,  /* the balancer mode */
	/* version 3 */
	MON_OP_FULL_RATIOS = 11, /* the three full ratios at once */
	/* version 4 */
	MON_OP_OSD_RM = 12, /* remove one OSD record (osd rm, osd purge) */
	/* version 5 */
	MON_OP_MON_SET = 16, /* add or replace one monitor */
	MON_OP_MON_RM = 17,  /* remove the monitor of that id */
	/* version 6 (kinds 20-23 are the health mutes') */
	MON_OP_MUTE_SET = 20, /* add or replace the mute of one code */
	MON_OP_MUTE_RM = 21,  /* remove it (no-op when absent) */
	/* version 7 (kinds 24-27 are the blocklist's) */
	MON_OP_BLOCKLIST_ADD = 24, /* add or replace the entry of one instance */
	MON_OP_BLOCKLIST_RM = 25,  /* remove it (no-op when absent) */
};

struct mon_ratios {
	uint32_t nearfull, backfillfull, full; /* parts per million */
};

struct mon_op {
	uint8_t kind;
	union {
		struct mon_osd osd;
		struct mon_pool pool;
		uint32_t pool_id;
		uint32_t osd_id; /* MON_OP_OSD_RM */
		uint32_t flags;
		struct mon_bucket bucket;
		int32_t bucket_id;
		struct mon_osd_loc loc;
		struct mon_upmap upmap;
		uint8_t balancer;
		struct mon_ratios ratios;
		struct mon_mon mon;
		uint32_t mon_id;
		struct mon_mute mute;
		struct mon_blocklist bl; /* MON_OP_BLOCKLIST_RM: only instance */
	};
};

struct mon_inc {
	uint32_t epoch; /* the epoch this increment creates */
	uint64_t stamp; /* wall-clock seconds at proposal */
	char reason[MON_REASON_MAX + 1];
	uint32_t nops;
	struct mon_op *ops;
};

void mon_map_init(struct mon_map *map);
void mon_map_free(struct mon_map *map);
/* Deep copy into an initialised dst (its old contents are freed). */
int mon_map_copy(struct mon_map *dst, const struct mon_map *src);

const struct mon_osd *mon_map_osd(const struct mon_map *map, uint32_t id);
const struct mon_pool *mon_map_pool(const struct mon_map *map, uint32_t id);
const struct mon_pool *mon_map_pool_by_name(const struct mon_map *map, const char *name);
void mon_map_osd_counts(const struct mon_map *map, uint32_t *total, uint32_t *up, uint32_t *in);

/* Encode into a new malloc'ed buffer (*len_out bytes). */
int mon_map_encode(const struct mon_map *map, void **buf_out, size_t *len_out);
/* Decode a whole buffer into an initialised map (replaced only on success). */
int mon_map_decode(const void *buf, size_t len, struct proto_err *err, struct mon_map *map);

void mon_inc_init(struct mon_inc *inc);
void mon_inc_free(struct mon_inc *inc);
/* Append an op (copied). -ENOMEM, -E2BIG past MON_INC_OPS_MAX. */
int mon_inc_add(struct mon_inc *inc, const struct mon_op *op);
/* Encode into a new malloc'ed buffer. */
int mon_inc_encode(const struct mon_inc *inc, void **buf_out, size_t *len_out);
int mon_inc_decode(const void *buf, size_t len, struct proto_err *err, struct mon_inc *inc_out);

/*
 * Apply inc to map: inc->epoch must be map->epoch + 1 (-ESTALE otherwise),
 * every op is checked first (-EINVAL) so a refused increment changes
 * nothing. On success map->epoch == inc->epoch.
 */
int mon_map_apply(struct mon_map *map, const struct mon_inc *inc);

/* Topology look-ups. */
const struct mon_bucket *mon_map_bucket(const struct mon_map *map, int32_t id);
const struct mon_bucket *mon_map_bucket_by_name(const struct mon_map *map, const char *name);
/* The explicit location of osd (its parent bucket id), 0 if none. */
int32_t mon_map_osd_loc(const struct mon_map *map, uint32_t osd);
/* "host", "rack", ...; NULL for an unknown type. */
const char *mon_crush_type_str(uint8_t type);
/* Parse a type name; MON_CT_NONE if unknown. */
uint8_t mon_crush_type_parse(const char *name);
/* The cache of map, if built (acquire); set it once (release), false if one is there. */
struct mon_map_cache *mon_map_cache_get(const struct mon_map *map);
bool mon_map_cache_set(const struct mon_map *map, struct mon_map_cache *cache);

/* The monitor of that id / name, or NULL. */
const struct mon_mon *mon_map_mon(const struct mon_map *map, uint32_t id);
const struct mon_mon *mon_map_mon_by_name(const struct mon_map *map, const char *name);
/* Health mutes (map_mute.c): a code is 1..31 of [A-Z0-9_], as the checks' codes. */
bool mon_mute_code_valid(const char *code);
const struct mon_mute *mon_map_mute(const struct mon_map *map, const char *code);

/* The blocklist entry of instance (map_blocklist.c), or NULL: a binary search. */
const struct mon_blocklist *mon_map_blocklist_find(const struct mon_map *map, uint64_t instance);
/* An instance as text: 16 lowercase hex digits (parse also takes fewer, and a 0x). */
#define MON_INSTANCE_STR 17
int mon_instance_parse(const char *s, uint64_t *out);
const char *mon_instance_str(uint64_t instance, char out[MON_INSTANCE_STR]);
static inline bool mon_map_blocklisted(const struct mon_map *map, uint64_t instance)
{
	return map->nblocklist > 0 && mon_map_blocklist_find(map, instance) != NULL;
}

/* 0 < nearfull <= backfillfull <= full < MON_RATIO_ONE */
bool mon_ratios_valid(const struct mon_ratios *r);

/* An OSD's fullness as the map says (false for an OSD the map does not have). */
static inline bool mon_map_osd_state_has(const struct mon_map *map, uint32_t osd, uint8_t bit)
{
	return osd < map->max_osd && (map->osds[osd].state & MON_OSD_EXISTS) &&
	       (map->osds[osd].state & bit);
}

static inline bool mon_map_osd_full(const struct mon_map *map, uint32_t osd)
{
	return mon_map_osd_state_has(map, osd, MON_OSD_FULL);
}

static inline bool mon_map_osd_backfillfull(const struct mon_map *map, uint32_t osd)
{
	return mon_map_osd_state_has(map, osd, MON_OSD_BACKFILLFULL | MON_OSD_FULL);
}

static inline bool mon_map_osd_nearfull(const struct mon_map *map, uint32_t osd)
{
	return mon_map_osd_state_has(map, osd, MON_OSD_FULLNESS);
}

/* The pool reached a quota (MON_POOL_F_FULL); false for an unknown pool. */
static inline bool mon_map_pool_full(const struct mon_map *map, uint32_t pool)
{
	const struct mon_pool *p = mon_map_pool(map, pool);

	return p != NULL && (p->flags & MON_POOL_F_FULL);
}

/* "up,in", "down,out", ...: for logs and the CLI. */
const char *mon_osd_state_str(uint8_t state);
/* "full", "backfillfull", "nearfull" or "" (the highest bit set). */
const char *mon_osd_fullness_str(uint8_t state);
/* "noout,pause" or "" into buf (MON_FLAGS_STR_MAX holds every flag). */
const char *mon_flags_str(uint32_t flags, char *buf, size_t cap);
/* Parse a flag name; 0 if unknown. */
uint32_t mon_flag_parse(const char *name);
/* "noout, pause, noin, ...": every flag name, for errors and help. */
const char *mon_flag_names(void);
/* The reweight override of an OSD record, 0.0 .. 1.0, to 4 decimals (0.3, not 0.300003). */
static inline double mon_osd_reweight(const struct mon_osd *o)
{
	uint32_t w = MON_WEIGHT_ONE - (o->reject > MON_WEIGHT_ONE ? MON_WEIGHT_ONE : o->reject);

	return (double)((w * 10000ull + MON_WEIGHT_ONE / 2) / MON_WEIGHT_ONE) / 10000.0;
}
void mon_uuid_str(const uint8_t uuid[PROTO_UUID_LEN], char out[37]);
int mon_uuid_parse(const char *s, uint8_t uuid_out[PROTO_UUID_LEN]);

#endif
