/* SPDX-License-Identifier: Apache-2.0 */
/* Between map.c (records, map, increments) and map_topo.c (the version-2 parts). */
#ifndef WEFT_MON_MAP_PRIV_H
#define WEFT_MON_MAP_PRIV_H

#include "mon/map.h"
#include "proto/codec.h"

#define MON_BUCKET_WIRE_MIN (4 + 1 + 4 + 2)
#define MON_LOC_WIRE_MIN    (4 + 4)
#define MON_UPMAP_WIRE_MIN  (4 + 4 + 4 + 4)

/* Does the map (or op) use anything of version 2? */
bool mon_map_needs_v2(const struct mon_map *map);
bool mon_op_needs_v2(const struct mon_op *op);

void mon_bucket_put(struct proto_enc *enc, const struct mon_bucket *b);
int mon_bucket_get(struct proto_dec *dec, struct mon_bucket *b);
void mon_loc_put(struct proto_enc *enc, const struct mon_osd_loc *l);
int mon_loc_get(struct proto_dec *dec, struct mon_osd_loc *l);
void mon_upmap_put(struct proto_enc *enc, const struct mon_upmap *u);
int mon_upmap_get(struct proto_dec *dec, struct mon_upmap *u);

/* The version-2 tail of a map: buckets, locations, upmap items, balancer. */
void mon_map_topo_put(struct proto_enc *enc, const struct mon_map *map);
int mon_map_topo_get(struct proto_dec *dec, struct mon_map *m);

/* Deep copy of the version-2 arrays (dst's are not freed: it is a fresh shallow copy). */
int mon_map_topo_copy(struct mon_map *dst, const struct mon_map *src);
void mon_map_topo_free(struct mon_map *map);

/* Check one version-2 op against the map as it will be when the op applies. */
int mon_map_topo_check(const struct mon_map *map, const struct mon_op *op);
/* Apply one version-2 op (checked). */
int mon_map_topo_apply(struct mon_map *map, const struct mon_op *op);
/* A pool is gone: drop its upmap items. */
void mon_map_topo_pool_rm(struct mon_map *map, uint32_t pool);

/* map_mons.c: the version-5 monitor list */
void mon_map_mons_put(struct proto_enc *enc, const struct mon_map *map);
int mon_map_mons_get(struct proto_dec *dec, struct mon_map *m);
int mon_map_mons_copy(struct mon_map *dst, const struct mon_map *src);
void mon_map_mons_free(struct mon_map *map);
void mon_mon_put(struct proto_enc *enc, const struct mon_mon *mm);
int mon_mon_get(struct proto_dec *dec, struct mon_mon *mm);
int mon_map_mons_apply(struct mon_map *map, const struct mon_op *op);
/* Version 6: health mutes (map_mute.c). */
void mon_mute_put(struct proto_enc *enc, const struct mon_mute *m);
int mon_mute_get(struct proto_dec *dec, struct mon_mute *m);
void mon_map_mutes_put(struct proto_enc *enc, const struct mon_map *map);
int mon_map_mutes_get(struct proto_dec *dec, struct mon_map *m);
int mon_map_mute_check(const struct mon_op *op);
void mon_map_mute_apply(struct mon_map *map, const struct mon_op *op);

/* Version 7: the client blocklist (map_blocklist.c). */
void mon_blocklist_put(struct proto_enc *enc, const struct mon_blocklist *b);
int mon_blocklist_get(struct proto_dec *dec, struct mon_blocklist *b);
void mon_map_blocklist_put(struct proto_enc *enc, const struct mon_map *map);
int mon_map_blocklist_get(struct proto_dec *dec, struct mon_map *m);
int mon_map_blocklist_check(const struct mon_op *op);
void mon_map_blocklist_apply(struct mon_map *map, const struct mon_op *op);

#endif
