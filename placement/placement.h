/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Placement: object -> PG -> ordered acting set, computed the same way by
 * clients and OSDs from the map alone (no lookup on the data path).
 *
 *  - object -> PG: a stable 32-bit hash of the name, folded onto pg_num
 *    with Ceph's "stable mod", so growing pg_num from n to 2n splits each PG
 *    in two and moves no object between PGs that are not splitting.
 *  - PG -> OSDs: straw2 (weighted rendezvous) ranking of every up+in OSD
 *    with weight > 0; the acting set is the top `size`, skipping OSDs on a
 *    host already chosen while enough hosts remain. Each OSD's rank depends
 *    only on (pool, pg, osd), so losing one OSD moves only the PGs that had
 *    it.
 *  - Exceptions ("upmap" items, as in Ceph): (pool, pg, from -> to) replaces
 *    `from` by `to` wherever straw2 puts `from`. Hashing alone leaves
 *    multinomial noise (about +-6% per OSD at 256 PGs each, so some OSD is
 *    usually >10% off); plc_balance() computes a few items that bring every
 *    OSD within a bound, and the map carries them.
 */
#ifndef WEFT_PLACEMENT_H
#define WEFT_PLACEMENT_H

#include <stddef.h>
#include <stdint.h>

#define PLC_MAX_REPLICAS 16

struct plc_osd {
	int32_t id;
	uint32_t weight;   /* 0x10000 = 1.0; 0 = never chosen */
	uint32_t host;	   /* host identity (e.g. a hash of the host name) */
	uint8_t up;
	uint8_t in;
};

struct plc_upmap {
	uint32_t pool;
	uint32_t pg;
	int32_t from;
	int32_t to;
};

/* Stable 32-bit hash of an object name. */
uint32_t plc_name_hash(const void *name, size_t len);
/* Fold a hash onto pg_num PGs (pg_num >= 1), stable under power-of-two splits. */
uint32_t plc_hash_to_pg(uint32_t hash, uint32_t pg_num);
/* Object name -> PG in a pool of pg_num PGs. */
uint32_t plc_object_pg(const void *name, size_t len, uint32_t pg_num);

/* Sort items by (pool, pg, from) as plc_pg_acting expects. */
void plc_upmap_sort(struct plc_upmap *items, unsigned int n);

/*
 * Acting set of PG (pool, pg): up to size OSD ids, best first, written to
 * acting_out[0..n-1]; returns n (< size when too few OSDs qualify) or
 * -EINVAL for bad arguments. items (sorted, may be NULL) are applied when
 * their `to` is up, in, weighted and would not break host separation.
 */
int plc_pg_acting(const struct plc_osd *osds, unsigned int nosds, uint32_t pool, uint32_t pg,
		  unsigned int size, const struct plc_upmap *items, unsigned int nitems,
		  int32_t *acting_out);

/*
 * Add items (to items[*nitems..cap)) until every eligible OSD's load in
 * the pool is within max_dev (e.g. 0.05) of its weighted share, or no move
 * helps. Keeps items sorted. Returns how many were added, or -ENOSPC when
 * cap is reached first, -EINVAL for bad arguments.
 */
int plc_balance(const struct plc_osd *osds, unsigned int nosds, uint32_t pool, uint32_t pg_num,
		unsigned int size, double max_dev, struct plc_upmap *items, unsigned int *nitems,
		unsigned int cap);

#endif
