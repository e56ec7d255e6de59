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

#define MON_MAP_VERSION 1
#define MON_OSD_MAX 65536   /* ids 0..65535 */
#define MON_POOL_MAX 4096   /* pools in one map */
#define MON_INC_OPS_MAX 8192
#define MON_NAME_MAX 63
#define MON_REASON_MAX 255
#define MON_WEIGHT_ONE 0x10000u /* weights are 16.16 fixed point */

/* map flags */
#define MON_FLAG_NOOUT 0x1u
#define MON_FLAG_PAUSE 0x2u
#define MON_FLAGS_KNOWN (MON_FLAG_NOOUT | MON_FLAG_PAUSE)

/* osd state bits */
#define MON_OSD_EXISTS 0x1u
#define MON_OSD_UP 0x2u
#define MON_OSD_IN 0x4u
#define MON_OSD_STATE_KNOWN (MON_OSD_EXISTS | MON_OSD_UP | MON_OSD_IN)

struct mon_osd {
	uint32_t id;
	uint8_t state; /* MON_OSD_* */
	uint8_t uuid[PROTO_UUID_LEN];
	uint32_t weight;   /* 16.16 */
	uint32_t up_from;  /* epoch it last came up */
	uint32_t down_at;  /* epoch it last went down (0 = never) */
	uint64_t down_stamp; /* wall-clock seconds when marked down (for down -> out) */
	char host[MON_NAME_MAX + 1];
	char public_addr[PROTO_ADDR_MAX + 1];
	char cluster_addr[PROTO_ADDR_MAX + 1];
};

struct mon_pool {
	uint32_t id;
	uint32_t size, min_size, pg_num;
	char name[MON_NAME_MAX + 1];
};

struct mon_map {
	uint32_t epoch; /* 0 = empty, before the first commit */
	uint32_t flags; /* MON_FLAG_* */
	uint32_t next_pool_id;
	uint32_t max_osd;	/* osds[] slots; ids >= max_osd do not exist */
	struct mon_osd *osds;	/* by id; a slot without MON_OSD_EXISTS is free */
	uint32_t npools;
	struct mon_pool *pools; /* sorted by id */
};

enum mon_op_kind {
	MON_OP_OSD_SET = 1,  /* add or replace one OSD record */
	MON_OP_POOL_SET = 2, /* add or replace one pool */
	MON_OP_POOL_RM = 3,
	MON_OP_FLAGS = 4,
};

struct mon_op {
	uint8_t kind;
	union {
		struct mon_osd osd;
		struct mon_pool pool;
		uint32_t pool_id;
		uint32_t flags;
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

/* "up,in", "down,out", ...: for logs and the CLI. */
const char *mon_osd_state_str(uint8_t state);
/* "noout,pause" or "" into buf. */
const char *mon_flags_str(uint32_t flags, char *buf, size_t cap);
/* Parse a flag name; 0 if unknown. */
uint32_t mon_flag_parse(const char *name);
void mon_uuid_str(const uint8_t uuid[PROTO_UUID_LEN], char out[37]);
int mon_uuid_parse(const char *s, uint8_t uuid_out[PROTO_UUID_LEN]);

#endif
