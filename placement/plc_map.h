/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Placement over the cluster map: the one place where struct mon_map is
 * turned into a placement tree, so libweft and weft-osd compute the same
 * acting sets from the same epoch. The tree is built once per map (on
 * first use) and kept with it; a map without a topology gets a root
 * "default" holding one host bucket per OSD host name.
 */
#ifndef WEFT_PLACEMENT_PLC_MAP_H
#define WEFT_PLACEMENT_PLC_MAP_H

#include <stdbool.h>
#include <stdint.h>

#include "mon/map.h"
#include "placement/placement.h"
#include "placement/plc_tree.h"

/*
 * Acting set of (pool, pg) in map: up to pool->size OSD ids, primary
 * first, into acting_out[0..n-1]; returns n (0 when no OSD qualifies) or
 * -EINVAL (-ENOMEM if the tree cannot be built). Only up+in OSDs with
 * weight > 0 are chosen; the map's upmap items apply.
 */
int plc_map_acting(const struct mon_map *map, const struct mon_pool *pool, uint32_t pg,
		   int32_t acting_out[PLC_MAX_REPLICAS]);

/* The same, and whether replicas had to share a failure domain. */
int plc_map_acting_ex(const struct mon_map *map, const struct mon_pool *pool, uint32_t pg,
		      int32_t acting_out[PLC_MAX_REPLICAS], bool *short_out);

/* The PG of an object name in pool. */
uint32_t plc_map_object_pg(const struct mon_pool *pool, const char *name, size_t len);

/* The map's placement tree (built on first use); NULL and errno on failure. */
const struct plc_tree *plc_map_tree(const struct mon_map *map);

/* The map's upmap items as placement reads them (sorted). */
const struct plc_upmap *plc_map_items(const struct mon_map *map, unsigned int *n_out);

/* The rule of pool resolved against tree: -ENOENT when its root is not in it. */
int plc_map_rule(const struct plc_tree *tree, const struct mon_map *map,
		 const struct mon_pool *pool, struct plc_rule *rule_out);

/* Build a tree from map (the cache does this; the simulator and tests may too). */
int plc_map_build_tree(const struct mon_map *map, struct plc_tree *tree_out);

#endif
