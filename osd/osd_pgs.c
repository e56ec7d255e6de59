/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PG registry: every struct osd_pg this OSD has (a PG it leads, holds a
 * copy of, or got a message about), found in O(1) by (pool, pg) and walked
 * with osd_pg_foreach. Entries live until the OSD stops: a PG's struct is
 * small, and its state machine (pg->m) is what comes and goes.
 */
#include <stdlib.h>

#include "osd/osd.h"

static unsigned int osd_pgs_bucket(uint32_t pool, uint32_t pgid)
{
	return (pool * 2654435761u ^ pgid * 40503u) % OSD_PG_BUCKETS;
}

struct osd_pg *osd_pg_find(struct osd *osd, uint32_t pool, uint32_t pgid)
{
	struct osd_pg *pg;

	for (pg = osd->pgs[osd_pgs_bucket(pool, pgid)]; pg; pg = pg->hnext)
		if (pg->pool == pool && pg->pg == pgid)
			return pg;
	return NULL;
}

struct osd_pg *osd_pg_get(struct osd *osd, uint32_t pool, uint32_t pgid)
{
	unsigned int b = osd_pgs_bucket(pool, pgid);
	struct osd_pg *pg = osd_pg_find(osd, pool, pgid);

	if (pg != NULL)
		return pg;
	pg = calloc(1, sizeof(*pg));
	if (pg == NULL)
		return NULL;
	pg->pool = pool;
	pg->pg = pgid;
	pg->hnext = osd->pgs[b];
	osd->pgs[b] = pg;
	pg->lnext = osd->pg_list;
	osd->pg_list = pg;
	osd->npgs++;
	return pg;
}

void osd_pgs_free(struct osd *osd)
{
	while (osd->pg_list != NULL) {
		struct osd_pg *pg = osd->pg_list;

		osd->pg_list = pg->lnext;
		free(pg);
	}
	for (unsigned int b = 0; b < OSD_PG_BUCKETS; b++)
		osd->pgs[b] = NULL;
	osd->npgs = 0;
}
