/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Placement over the cluster map: the one place where struct mon_map is
 * turned into plc_osd rows, so libweft and weft-osd compute the same
 * acting sets from the same epoch.
 */
#ifndef WEFT_PLACEMENT_PLC_MAP_H
#define WEFT_PLACEMENT_PLC_MAP_H

#include <stdint.h>

#include "mon/map.h"
#include "placement/placement.h"

/*
 * Acting set of (pool, pg) in map: up to pool->size OSD ids, primary
 * first, into acting_out[0..n-1]; returns n (0 when no OSD qualifies) or
 * -EINVAL. Only up+in OSDs with weight > 0 are chosen.
 */
int plc_map_acting(const struct mon_map *map, const struct mon_pool *pool, uint32_t pg,
		   int32_t acting_out[PLC_MAX_REPLICAS]);

/* The PG of an object name in pool. */
uint32_t plc_map_object_pg(const struct mon_pool *pool, const char *name, size_t len);

#endif
