/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Past intervals in the OSD (docs/recovery.md, "Past intervals"): every
 * map epoch goes into the intervals of every PG this OSD holds; the map is
 * saved so a restarted OSD replays the epochs it missed; peering's
 * prior-set rule (a PG stays down until a member of every interval since
 * les that may have gone active answered). The interval logic itself is
 * osd_pi.c; peering calls in from osd_peer.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "osd/osd_pg.h"
#include "placement/plc_map.h"

static bool pg_pi_loaded;	   /* the PGs held on disk are loaded (first map) */
static uint32_t pg_pi_prev_epoch; /* the last map epoch seen (persisted map at start) */

void osd_pg_map_loaded(struct osd *osd, uint32_t epoch)
{
	(void)osd;
	pg_pi_prev_epoch = epoch;
}

/*
 * Once, at the first map: every PG this OSD holds info for gets its state
 * loaded, so its past intervals follow every map, also while this OSD is
 * not a member (a stray now may be a needed witness later).
 */
static void osd_peer_load_held(struct osd *osd)
{
	const struct mon_map *map = &osd->map;

	pg_pi_loaded = true;
	for (uint32_t p = 0; p < map->npools; p++)
		for (uint32_t g = 0; g < map->pools[p].pg_num; g++)
			if (osd_pgx_stored(osd, map->pools[p].id, g))
				(void)osd_pgx_get(osd, map->pools[p].id, g);
}

/* This map epoch's acting set goes into the past intervals of every PG we hold. */
void osd_peer_pi_track(struct osd *osd)
{
	const struct mon_map *map = &osd->map;
	uint32_t gap_from = pg_pi_prev_epoch + 1 < map->epoch ? pg_pi_prev_epoch : 0;
	unsigned int gaps = 0;

	if (!pg_pi_loaded)
		osd_peer_load_held(osd);
	for (unsigned int b = 0; b < OSD_PG_BUCKETS; b++) {
		for (struct osd_pg *pg = osd->pgs[b]; pg; pg = pg->hnext) {
			struct osd_pgx *x = pg->x;
			const struct mon_pool *pool;
			int32_t acting[PLC_MAX_REPLICAS];
			uint32_t dropped;
			struct store_tx *tx;
			int n, rc;

			if (x == NULL || !x->loaded)
				continue;
			pool = mon_map_pool(map, pg->pool);
			n = pool ? plc_map_acting(map, pool, pg->pg, acting) : 0;
			if (n < 0)
				n = 0;
			dropped = x->pi.dropped;
			rc = pg_pi_advance(&x->pi, map->epoch, gap_from, acting, (unsigned int)n,
					    pool ? pool->min_size : 0);
			if (rc == 0)
				continue;
			gaps += rc == 2;
			if (x->pi.dropped != dropped)
				log_warn("osd",
					 "%s pg %u.%x: more than %u past intervals since it was "
					 "last active; the oldest is forgotten",
					 osd->name, pg->pool, pg->pg, PG_PI_MAX);
			if (store_tx_create(&tx) != 0)
				continue; /* the map is replayed after a restart: nothing lost */
			if (osd_pgx_info_tx(osd, x, tx) != 0 ||
			    osd_pgx_submit(osd, x, tx, NULL, NULL) != 0)
				store_tx_destroy(tx);
		}
	}
	if (gaps > 0)
		log_warn("osd",
			 "%s: map epochs %u..%u were never seen (the mons no longer hold "
			 "them): %u PGs learn their intervals in between from their peers",
			 osd->name, gap_from + 1, map->epoch - 1, gaps);
	pg_pi_prev_epoch = map->epoch;
}

/*
 * The map this OSD processed last is kept in its store (attribute "osdmap"
 * of the "pginfo" metadata object, beside the PG infos), so after a restart it asks the mons for
 * the increments since then and replays them in order: past intervals (osd_pi.h) are then known for
 * the epochs it was down. One write per map epoch; maps change rarely.
 */
#define OSD_MAP_ATTR "osdmap"
#define OSD_MAP_MAX  (64u << 20)

static void osd_pg_map_saved_cb(void *arg, int rc)
{
	struct osd *osd = arg;

	osd->store_pending--;
	if (rc != 0)
		log_warn("osd", "%s: saving the map: %s", osd->name, weft_strerror(rc));
}

void osd_peer_pi_map_save(struct osd *osd)
{
	struct store_tx *tx = NULL;
	void *buf = NULL;
	size_t len;
	int rc;

	rc = mon_map_encode(&osd->map, &buf, &len);
	if (rc == 0)
		rc = store_tx_create(&tx);
	if (rc == 0)
		rc = store_tx_setattr(tx, OSD_META_PG, OSD_PGINFO_OBJ, OSD_MAP_ATTR, buf, len);
	if (rc == 0)
		rc = store_tx_submit(osd->store, tx, osd_pg_map_saved_cb, osd);
	if (rc == 0)
		osd->store_pending++;
	else if (tx != NULL)
		store_tx_destroy(tx);
	free(buf);
	if (rc != 0)
		log_warn("osd", "%s: saving map epoch %u: %s", osd->name, osd->map.epoch,
			 weft_strerror(rc));
}

int osd_pg_map_load(struct osd *osd, struct mon_map *map_out)
{
	size_t cap = 64u << 10, len = 0;
	struct proto_err err;
	void *buf = NULL;
	int rc;

	for (;;) {
		void *n = realloc(buf, cap);

		if (n == NULL) {
			rc = -ENOMEM;
			break;
		}
		buf = n;
		rc = store_getattr(osd->store, OSD_META_PG, OSD_PGINFO_OBJ, OSD_MAP_ATTR, buf, cap,
				   &len);
		if (rc != -ERANGE || cap >= OSD_MAP_MAX)
			break;
		cap *= 4;
	}
	if (rc == 0 && mon_map_decode(buf, len, &err, map_out) != 0) {
		log_warn("osd",
			 "%s: the saved map is unreadable (%s); starting from the mons' "
			 "newest",
			 osd->name, err.msg);
		rc = -EBADMSG;
	}
	free(buf);
	if (rc == 0)
		osd_pg_map_loaded(osd, map_out->epoch);
	return rc;
}

struct osd_prior_ctx {
	struct osd *osd;
	struct osd_pgx *x;
};

static int osd_prior_heard(void *arg, int32_t id)
{
	struct osd_prior_ctx *c = arg;
	int i;

	if (id == (int32_t)c->osd->id)
		return PG_PI_HEARD_FULL;
	i = osd_peer_member_index(c->x, (uint32_t)id);
	return i >= 0 && c->x->m[i].heard ? PG_PI_HEARD_FULL : 0;
}

static bool osd_prior_up(void *arg, int32_t id)
{
	const struct mon_osd *o =
	    mon_map_osd(&((struct osd_prior_ctx *)arg)->osd->map, (uint32_t)id);

	return o != NULL && (o->state & MON_OSD_EXISTS) && (o->state & MON_OSD_UP);
}

/* The newest epoch any copy we heard from went active in. */
static uint32_t osd_peer_les(const struct osd_pgx *x)
{
	uint32_t les = x->les;

	for (unsigned int i = 0; i < x->nm; i++)
		if (x->m[i].heard && x->m[i].info.les > les)
			les = x->m[i].info.les;
	return les;
}

/*
 * Past intervals (docs/recovery.md): every interval since les that may
 * have gone active could have acknowledged writes only its members hold,
 * so one of them must have answered. If every member of one is down the
 * PG stays down, waiting for them (PG_STATS names them); a map that
 * brings one back up peers again.
 */
bool osd_peer_prior_ok(struct osd *osd, struct osd_pgx *x)
{
	struct osd_prior_ctx c = {osd, x};
	struct pg_pi_probe probe = {osd_prior_heard, osd_prior_up, &c};
	int32_t blocked[PROTO_PG_BLOCKED_MAX];
	unsigned int nb = 0;
	uint32_t les = osd_peer_les(x);
	enum pg_pi_verdict v;
	char who[PROTO_PG_BLOCKED_MAX * 12] = "";

	v = pg_pi_check(&x->pi, les, &probe, blocked, PROTO_PG_BLOCKED_MAX, &nb);
	if (v == PG_PI_OK)
		return true;
	for (unsigned int i = 0; i < nb; i++) {
		x->blocked[i] = (uint32_t)blocked[i];
		snprintf(who + strlen(who), sizeof(who) - strlen(who), "%sosd.%d", i ? ", " : "",
			 blocked[i]);
	}
	x->nblocked = (uint8_t)nb;
	if (v == PG_PI_WAIT) /* up but not among those asked (more than the probe limit) */
		log_warn("osd",
			 "%s pg %u.%x: an OSD of a past interval is up but was not asked; "
			 "PG down until the next map",
			 osd->name, x->pg->pool, x->pg->pg);
	else
		log_warn("osd",
			 "%s pg %u.%x: down: an interval since epoch %u may have "
			 "acknowledged writes and none of its OSDs is up; waiting for %s",
			 osd->name, x->pg->pool, x->pg->pg, les, who);
	x->phase = OSD_PH_DOWN;
	osd_peer_update_state(osd, x);
	return false;
}

/* Is id a member of a past interval since les that may have gone active? */
bool osd_peer_pi_witness(const struct osd_pgx *x, int32_t id)
{
	for (uint32_t i = 0; i < x->pi.n; i++) {
		const struct proto_pg_interval *e = &x->pi.e[i];

		if (e->last < x->les || !(e->flags & PG_PI_F_ACTIVE))
			continue;
		for (unsigned int k = 0; k < e->n; k++)
			if (e->osd[k] == id)
				return true;
	}
	return false;
}
