/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The simulator's maps: every change is an increment applied with
 * mon_map_apply, as a monitor applies what Raft committed, so the maps are
 * the ones a real cluster of that shape would have.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/sim/sim.h"

void sim_osd_make(struct mon_osd *o, uint32_t id, const char *host)
{
	memset(o, 0, sizeof(*o));
	o->id = id;
	o->state = MON_OSD_EXISTS | MON_OSD_UP | MON_OSD_IN;
	o->uuid[0] = (uint8_t)id;
	o->uuid[1] = (uint8_t)(id >> 8);
	o->uuid[15] = 0x51;
	o->weight = MON_WEIGHT_ONE;
	o->up_from = 1;
	snprintf(o->host, sizeof(o->host), "%s", host);
	snprintf(o->public_addr, sizeof(o->public_addr), "10.%u.%u.%u:6800", id >> 16,
		 (id >> 8) & 255, id & 255);
	snprintf(o->cluster_addr, sizeof(o->cluster_addr), "10.%u.%u.%u:6801", 128 + (id >> 16),
		 (id >> 8) & 255, id & 255);
}

int sim_map_commit(struct mon_map *map, struct mon_inc *inc, const char *reason)
{
	int rc;

	inc->epoch = map->epoch + 1;
	snprintf(inc->reason, sizeof(inc->reason), "%s", reason);
	rc = mon_map_apply(map, inc);
	mon_inc_free(inc);
	return rc;
}

/* Add op, committing first when the increment is full. */
int sim_op_add(struct mon_inc *inc, struct mon_map *map, const struct mon_op *op,
	       const char *reason)
{
	int rc = 0;

	if (inc->nops == MON_INC_OPS_MAX)
		rc = sim_map_commit(map, inc, reason);
	return rc != 0 ? rc : mon_inc_add(inc, op);
}

static int sim_bucket_add(struct mon_inc *inc, struct mon_map *map, const char *name, uint8_t type,
			  const char *parent)
{
	struct mon_op op = {.kind = MON_OP_BUCKET_SET};
	const struct mon_bucket *p = parent ? mon_map_bucket_by_name(map, parent) : NULL;
	int32_t id = map->nbuckets ? map->buckets[map->nbuckets - 1].id - 1 : -1;
	int rc;

	/* the bucket's parent must be in the map when the op applies: commit what is pending */
	if (inc->nops > 0 && (rc = sim_map_commit(map, inc, "topology")) != 0)
		return rc;
	if (parent != NULL && p == NULL)
		return -ENOENT;
	op.bucket.id = id;
	op.bucket.type = type;
	op.bucket.parent = p ? p->id : 0;
	snprintf(op.bucket.name, sizeof(op.bucket.name), "%s", name);
	rc = mon_inc_add(inc, &op);
	return rc != 0 ? rc : sim_map_commit(map, inc, "topology");
}

int sim_map_build(struct sim *s)
{
	struct mon_inc inc;
	struct mon_op op = {0};
	char rack[64], host[64];
	uint32_t id = 0;
	int rc;

	mon_map_init(&s->map);
	mon_inc_init(&inc);
	rc = sim_map_commit(&s->map, &inc, "create");
	if (rc == 0)
		rc = sim_bucket_add(&inc, &s->map, "default", MON_CT_ROOT, NULL);
	/* buckets first, while the map is small (each one is an increment), then the OSDs */
	for (unsigned int r = 0; r < s->a.racks && rc == 0; r++) {
		snprintf(rack, sizeof(rack), "rack%03u", r);
		rc = sim_bucket_add(&inc, &s->map, rack, MON_CT_RACK, "default");
		for (unsigned int h = 0; h < s->a.hosts && rc == 0; h++) {
			snprintf(host, sizeof(host), "r%03u-h%03u", r, h);
			rc = sim_bucket_add(&inc, &s->map, host, MON_CT_HOST, rack);
		}
	}
	for (unsigned int r = 0; r < s->a.racks && rc == 0; r++) {
		for (unsigned int h = 0; h < s->a.hosts && rc == 0; h++) {
			snprintf(host, sizeof(host), "r%03u-h%03u", r, h);
			/* OSDs find their host bucket by their host name: no location needed */
			for (unsigned int o = 0; o < s->a.per_host && rc == 0; o++) {
				op.kind = MON_OP_OSD_SET;
				sim_osd_make(&op.osd, id++, host);
				rc = sim_op_add(&inc, &s->map, &op, "osds boot");
			}
		}
	}
	if (rc == 0) {
		memset(&op, 0, sizeof(op));
		op.kind = MON_OP_POOL_SET;
		op.pool.id = 1;
		op.pool.size = s->a.size;
		op.pool.min_size = s->a.min_size;
		op.pool.pg_num = s->a.pg_num;
		op.pool.domain = s->a.domain == MON_CT_HOST ? MON_CT_NONE : s->a.domain;
		snprintf(op.pool.name, sizeof(op.pool.name), "sim");
		rc = sim_op_add(&inc, &s->map, &op, "pool create");
	}
	if (rc == 0)
		rc = sim_map_commit(&s->map, &inc, "osds boot, pool create");
	mon_inc_free(&inc);
	s->nosd = id;
	return rc;
}

int sim_map_out(const struct mon_map *map, uint32_t first, uint32_t n, struct mon_map *out)
{
	struct mon_inc inc;
	struct mon_op op = {.kind = MON_OP_OSD_SET};
	int rc;

	mon_map_init(out);
	rc = mon_map_copy(out, map);
	mon_inc_init(&inc);
	for (uint32_t i = first; i < first + n && rc == 0; i++) {
		op.osd = *mon_map_osd(out, i);
		op.osd.state =
		    MON_OSD_EXISTS; /* down and out: a failure after the down-out interval */
		op.osd.down_at = out->epoch + 1;
		rc = sim_op_add(&inc, out, &op, "osds fail");
	}
	if (rc == 0)
		rc = sim_map_commit(out, &inc, "osds fail");
	mon_inc_free(&inc);
	return rc;
}

int sim_map_add(const struct mon_map *map, const char *rack, bool new_rack, const char *host,
		unsigned int new_hosts, uint32_t per_host, struct mon_map *out)
{
	struct mon_inc inc;
	struct mon_op op = {.kind = MON_OP_OSD_SET};
	char name[64];
	int rc;

	mon_map_init(out);
	mon_inc_init(&inc);
	rc = mon_map_copy(out, map);
	if (rc == 0 && new_rack)
		rc = sim_bucket_add(&inc, out, rack, MON_CT_RACK, "default");
	for (unsigned int h = 0; h < (new_hosts ? new_hosts : 1) && rc == 0; h++) {
		snprintf(name, sizeof(name), new_hosts ? "%s-%03u" : "%s", host, h);
		if (new_hosts)
			rc = sim_bucket_add(&inc, out, name, MON_CT_HOST, rack);
		for (uint32_t i = 0; i < per_host && rc == 0; i++) {
			sim_osd_make(&op.osd, out->max_osd + (uint32_t)inc.nops, name);
			rc = sim_op_add(&inc, out, &op, "osds boot");
		}
		if (rc == 0)
			rc = sim_map_commit(out, &inc, "osds boot");
	}
	mon_inc_free(&inc);
	return rc;
}
