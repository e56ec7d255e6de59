/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "placement/plc_map.h"

int plc_map_acting(const struct mon_map *map, const struct mon_pool *pool, uint32_t pg,
		   int32_t acting_out[PLC_MAX_REPLICAS])
{
	struct plc_osd stack[64] = { 0 }, *osds = stack; /* zeroed: gcc -O2 cannot see n bounds the reads */
	unsigned int n = 0, size;
	int rc;

	if (pool == NULL || pool->size == 0 || pg >= pool->pg_num)
		return -EINVAL;
	size = pool->size > PLC_MAX_REPLICAS ? PLC_MAX_REPLICAS : pool->size;
	if (map->max_osd > sizeof(stack) / sizeof(stack[0])) {
		osds = calloc(map->max_osd, sizeof(*osds));
		if (osds == NULL)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < map->max_osd; i++) {
		const struct mon_osd *o = &map->osds[i];

		if (!(o->state & MON_OSD_EXISTS))
			continue;
		osds[n].id = (int32_t)o->id;
		osds[n].weight = o->weight;
		/* hosts are told apart by name: two OSDs with one host never share a PG */
		osds[n].host = plc_name_hash(o->host, strlen(o->host));
		osds[n].up = (o->state & MON_OSD_UP) != 0;
		osds[n].in = (o->state & MON_OSD_IN) != 0;
		n++;
	}
	rc = plc_pg_acting(osds, n, pool->id, pg, size, NULL, 0, acting_out);
	if (osds != stack)
		free(osds);
	return rc;
}

uint32_t plc_map_object_pg(const struct mon_pool *pool, const char *name, size_t len)
{
	return plc_object_pg(name, len, pool->pg_num);
}
