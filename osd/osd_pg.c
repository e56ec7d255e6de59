/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PG state machine in the OSD (osd_pg.h, docs/recovery.md): each
 * struct osd_pg gets its machine (osd/pg/) the first time it is used, loaded
 * from the store (the info attribute, then the log); every map goes to every
 * PG this OSD is in or holds a copy of; PG messages go to their PG, and when
 * a message comes from a map newer than ours it is held, with everything
 * after it from that connection (ring records too), until our map catches
 * up; a 100 ms tick drives the timers of the machines that have any
 * (osd_pgtick.c); once a second the PGs we
 * lead are reported to the mons, whose answer carries scrub requests. The
 * map we processed last is saved, so a restart replays the epochs it missed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd_pg.h"
#include "placement/plc_map.h"
#include "proto/codec.h"
#include "proto/hello.h"

/* ------------------------------------------------------------ log entries */

int osd_pglog_entry_encode(uint32_t pool, uint32_t pg, uint64_t v, uint16_t op, const char *name,
			   void *buf, size_t cap, size_t *len_out)
{
	struct proto_enc enc;

	/* the layout of a ring record's header (no prev, no data): older stores read as is */
	proto_enc_init(&enc, buf, cap);
	proto_enc_put_u32(&enc, OSD_REC_MAGIC);
	proto_enc_put_u16(&enc, op);
	proto_enc_put_u32(&enc, pool);
	proto_enc_put_u32(&enc, pg);
	proto_enc_put_u32(&enc, (uint32_t)(v >> 32));
	proto_enc_put_u64(&enc, v);
	proto_enc_put_u64(&enc, 0);
	proto_enc_put_u64(&enc, 0);
	proto_enc_put_str16(&enc, name, strlen(name));
	return proto_enc_finish(&enc, len_out);
}

int osd_pglog_entry_decode(const void *buf, size_t len, struct proto_pg_log_entry *e_out)
{
	struct proto_pg_log_entry e;
	struct proto_dec dec;
	uint32_t magic = 0, pool, pg, epoch;
	uint64_t off, l;

	proto_dec_init(&dec, buf, len, "pglog", NULL);
	proto_dec_get_u32(&dec, "magic", &magic);
	proto_dec_get_u16(&dec, "op", &e.op);
	proto_dec_get_u32(&dec, "pool", &pool);
	proto_dec_get_u32(&dec, "pg", &pg);
	proto_dec_get_u32(&dec, "epoch", &epoch);
	proto_dec_get_u64(&dec, "version", &e.version);
	proto_dec_get_u64(&dec, "offset", &off);
	proto_dec_get_u64(&dec, "length", &l);
	proto_dec_get_str16(&dec, "name", PROTO_OBJ_NAME_MAX, e.name, sizeof(e.name), &e.name_len);
	if (dec.err != 0 || magic != OSD_REC_MAGIC || e.name_len == 0)
		return -EBADMSG;
	*e_out = e;
	return 0;
}

int osd_pg_obj_version(struct osd *osd, uint64_t pgk, const char *name, uint64_t *v_out)
{
	struct store_stat st;
	uint8_t b[8];
	size_t len;
	uint64_t v = 0;
	int rc = store_stat(osd->store, pgk, name, &st);

	if (rc != 0)
		return rc;
	if (st.uversion != 0) {
		*v_out = st.uversion;
		return 0;
	}
	/* written before the version moved into the record: its attribute */
	rc = store_getattr(osd->store, pgk, name, OSD_ATTR_VERSION, b, sizeof(b), &len);
	if (rc != 0)
		return rc;
	if (len != 8)
		return -EBADMSG;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	*v_out = v;
	return 0;
}

/* ---------------------------------------------------------------- loading */

static void osd_pg_info_key(uint32_t pool, uint32_t pg, char *key, size_t cap)
{
	snprintf(key, cap, "%u.%x", pool, pg);
}

bool osd_pgm_stored(struct osd *osd, uint32_t pool, uint32_t pgid)
{
	static __thread uint8_t buf[PG_INFO_ENC_MAX];
	char key[32];
	size_t len;

	osd_pg_info_key(pool, pgid, key, sizeof(key));
	return store_getattr(osd->store, OSD_META_PG, OSD_PGINFO_OBJ, key, buf, sizeof(buf),
			     &len) == 0;
}

struct osd_pg_load_ctx {
	struct pg *m;
	int bad;
	int rc;
};

static int osd_pg_load_one(void *arg, uint64_t seq, const void *entry, size_t len)
{
	struct osd_pg_load_ctx *c = arg;
	static __thread struct proto_pg_log_entry e;

	if (osd_pglog_entry_decode(entry, len, &e) != 0 || e.version != seq) {
		c->bad++;
		return 0;
	}
	c->rc = pg_load_entry(c->m, seq, e.op, e.name);
	return c->rc != 0;
}

/* The info attribute, then the whole log after its tail. */
static int osd_pg_load(struct osd *osd, struct osd_pg *pg, struct pg *m)
{
	static __thread uint8_t buf[PG_INFO_ENC_MAX];
	struct osd_pg_load_ctx c = {m, 0, 0};
	struct pg_info info;
	char key[32];
	size_t len = 0;
	int rc;

	memset(&info, 0, sizeof(info));
	osd_pg_info_key(pg->pool, pg->pg, key, sizeof(key));
	rc = store_getattr(osd->store, OSD_META_PG, OSD_PGINFO_OBJ, key, buf, sizeof(buf), &len);
	if (rc == 0 && pg_info_decode(buf, len, &info) != 0) {
		/* what it held is unknown: rebuilt by a scan, never the history */
		log_error("osd", "%s pg %u.%x: unreadable PG info; the copy is rebuilt by backfill",
			  osd->name, pg->pool, pg->pg);
		memset(&info, 0, sizeof(info));
		info.backfill = true;
	} else if (rc != 0 && rc != -ENOENT) {
		log_error("osd", "%s pg %u.%x: reading PG info: %s", osd->name, pg->pool, pg->pg,
			  weft_strerror(rc));
		return rc;
	}
	pg_load(m, &info);
	rc = store_pglog_read(osd->store, osd_pg_key(pg->pool, pg->pg), 1, osd_pg_load_one, &c);
	if (rc < 0 || c.rc != 0) {
		log_error("osd", "%s pg %u.%x: reading the PG log: %s", osd->name, pg->pool, pg->pg,
			  weft_strerror(rc < 0 ? rc : c.rc));
		return rc < 0 ? rc : c.rc;
	}
	if (c.bad)
		log_warn("osd", "%s pg %u.%x: %d unreadable PG log entries skipped", osd->name,
			 pg->pool, pg->pg, c.bad);
	pg_loaded(m);
	return 0;
}

static void osd_pg_map_one(struct osd *osd, struct osd_pg *opg, const struct mon_pool *pool,
			   uint32_t gap_from);
static uint32_t osd_pg_gap_from; /* the gap of the map being processed (osd_pg_map_changed) */

struct pg *osd_pgm_get(struct osd *osd, uint32_t pool, uint32_t pgid)
{
	struct osd_pg *pg = osd_pg_get(osd, pool, pgid);
	struct pg *m;

	if (pg == NULL || pg->purged)
		return NULL;
	if (pg->m != NULL)
		return pg->m;
	m = pg_create(&osd->pgenv, pool, pgid);
	if (m == NULL)
		return NULL;
	if (osd_pg_load(osd, pg, m) != 0) {
		pg_free(m);
		return NULL;
	}
	pg->m = m;
	/* a machine made for a message (a stray's copy, a new PG) follows the map we have */
	if (osd->map.epoch != 0)
		osd_pg_map_one(osd, pg, mon_map_pool(&osd->map, pool), osd_pg_gap_from);
	return m;
}

/* ------------------------------------------------------------------ hooks */

#define OSD_PG_FENCE_HOLD_MS 5000u

bool osd_pg_io_ready(struct osd *osd, struct osd_pg *pg)
{
	if (pg->fenced_epoch != 0 && pg->fenced_epoch == osd->map.epoch &&
	    clock_now_ms() - pg->fenced_ms < OSD_PG_FENCE_HOLD_MS)
		return false; /* fenced: ordering more would only fail them again */
	/* only a primary gates I/O; READ_LOCAL on any OSD is a debug read of its copy */
	return pg->m == NULL || pg_io_ready(pg->m);
}

/*
 * A replica refused a record with -ESTALE: a primary of a newer interval
 * queried it, so a newer map exists that we have not seen. Writes are held
 * (not ordered) until our map moves, or OSD_PG_FENCE_HOLD_MS at most, instead
 * of ordering each resend into the same refusal. Logged once per epoch.
 */
void osd_pg_fenced(struct osd *osd, struct osd_pg *pg, uint32_t peer)
{
	if (pg->fenced_epoch == osd->map.epoch)
		return;
	pg->fenced_epoch = osd->map.epoch;
	pg->fenced_ms = clock_now_ms();
	osd_pg_tick_want(osd, pg); /* the tick lifts it when our map moves, or after the hold */
	log_info("osd",
		 "%s pg %u.%x: osd.%u is in a newer interval than our map (epoch %u): "
		 "writes wait for the new map",
		 osd->name, pg->pool, pg->pg, peer, osd->map.epoch);
}

bool osd_pg_obj_ready(struct osd *osd, struct osd_pg *pg, const char *name)
{
	(void)osd;
	return pg->m == NULL || pg_obj_ready(pg->m, name);
}

bool osd_pg_scrub_holds(struct osd_pg *pg, const char *name)
{
	return pg->m != NULL && pg_scrub_holds(pg->m, name);
}

uint64_t osd_pg_op_version(struct osd *osd, struct osd_pg *pg)
{
	struct pg *m = osd_pgm_get(osd, pg->pool, pg->pg);

	return m ? pg_op_version(m, osd->map.epoch) : 0;
}

void osd_pg_busy(struct osd_pg *pg, const char *name, int delta)
{
	struct pg_set_ent *e = pg_set_find(&pg->busy, name);

	if (delta > 0) {
		if (e != NULL)
			e->version++;
		else if (pg_set_add(&pg->busy, name, 1, 0) != 0)
			log_warn("osd", "pg %u.%x: no memory to track a write to %s", pg->pool,
				 pg->pg, name);
		return;
	}
	if (e != NULL && --e->version == 0)
		pg_set_del(&pg->busy, name);
}

void osd_pg_repl_failed(struct osd *osd, struct osd_pg *pg, uint32_t peer, uint64_t v, int rc)
{
	(void)osd;
	if (pg->m != NULL)
		pg_repl_failed(pg->m, (int32_t)peer, v, rc);
}

void osd_pg_kick_later(struct osd *osd, struct osd_pg *pg)
{
	if (pg->kick_wanted)
		return;
	pg->kick_wanted = true;
	pg->knext = osd->kicks;
	osd->kicks = pg;
}

void osd_pg_kick_pending(struct osd *osd)
{
	/* the PGs kicked so far; kicks raised meanwhile wait for the next round */
	struct osd_pg *list = osd->kicks;

	osd->kicks = NULL;
	while (list) {
		struct osd_pg *pg = list;

		list = pg->knext;
		pg->knext = NULL;
		pg->kick_wanted = false;
		osd_pg_kick(pg);
		if (pg->m != NULL)
			pg_recovery_kicked(pg->m); /* a push or pull that ended frees budget now */
	}
}

/* ------------------------------------------------------------ held frames */

struct osd_hold {
	struct osd_hold *next;
	uint64_t since_ms; /* held since (osd_map_wait_max) */
	bool rec;	   /* a ring record (imm, len) rather than a copied message */
	uint32_t imm, len;
	uint8_t buf[];
};

void osd_pg_hold_free(struct osd_conn *conn)
{
	while (conn->hold) {
		struct osd_hold *h = conn->hold;

		conn->hold = h->next;
		free(h);
	}
	conn->hold_tail = NULL;
}

static int osd_pg_hold_add(struct osd_conn *conn, bool rec, const struct proto_msg *msg,
			   uint32_t len, uint32_t imm)
{
	struct osd_hold *h;
	size_t flen = 0;

	/* a message is kept encoded: its views point into a receive buffer that goes back */
	if (!rec && proto_frame_encode(msg, 0, NULL, 0, &flen) != 0)
		goto err_close;
	h = malloc(sizeof(*h) + flen);
	if (h == NULL)
		goto err_close;
	h->next = NULL;
	h->since_ms = clock_now_ms();
	h->rec = rec;
	h->imm = imm;
	h->len = rec ? len : (uint32_t)flen;
	if (!rec && proto_frame_encode(msg, 0, h->buf, flen, &flen) != 0) {
		free(h);
		goto err_close;
	}
	if (conn->hold_tail)
		conn->hold_tail->next = h;
	else
		conn->hold = h;
	conn->hold_tail = h;
	return 0;
err_close:
	/* without it the order is lost: the connection goes, the peer resends */
	log_error("osd", "%s: cannot hold a message of %s; closing", conn->osd->name,
		  osd_conn_peer(conn));
	osd_conn_kill(conn);
	return -ENOMEM;
}

bool osd_pg_rec_hold(struct osd_conn *conn, uint32_t imm, uint32_t len)
{
	if (conn->hold == NULL)
		return true;
	osd_pg_hold_add(conn, true, NULL, len, imm);
	return false;
}

/* Hand a PG message to its PG: 0, or -EAGAIN (from a map we do not have yet: hold it). */
static int osd_pg_msg_do(struct osd_conn *conn, const struct proto_msg *msg)
{
	struct osd *osd = conn->osd;
	const struct mon_pool *pool;
	struct pg *m;

	if (msg->pg.epoch > osd->map.epoch)
		return -EAGAIN; /* from a map we do not have yet */
	pool = mon_map_pool(&osd->map, msg->pg.pool);
	if (pool == NULL || msg->pg.pg >= pool->pg_num)
		return 0; /* a pool we do not know (yet, or any more), or no such PG: dropped */
	m = osd_pgm_get(osd, msg->pg.pool, msg->pg.pg);
	if (m == NULL)
		return 0;
	return pg_msg(m, msg->type, &msg->pg) == -EAGAIN ? -EAGAIN : 0;
}

/* A held message, decoded again from the frame osd_pg_hold_add kept. */
static int osd_pg_held_do(struct osd_conn *conn, const struct osd_hold *h)
{
	static __thread struct proto_msg msg;
	struct proto_err err;
	struct proto_hdr hdr;

	if (proto_frame_decode(h->buf, h->len, PROTO_PAYLOAD_MAX, NULL, &err, &hdr, &msg) != 0) {
		log_error("osd", "%s: a held message of %s does not decode (%s); dropped",
			  conn->osd->name, osd_conn_peer(conn), err.msg);
		return 0;
	}
	return osd_pg_msg_do(conn, &msg);
}

/*
 * Whether a peer's PG message can be true: an epoch within
 * osd_epoch_ahead_max of our map (a forged one far ahead would be held,
 * and everything behind it on the connection with it, for a map that
 * never comes), and a PG id its pool can have. A message that fails is
 * dropped, counted and logged (once per 10 s); the connection stays.
 */
static bool osd_pg_msg_sane(struct osd_conn *conn, const struct proto_msg *msg)
{
	struct osd *osd = conn->osd;
	const struct mon_pool *pool = mon_map_pool(&osd->map, msg->pg.pool);

	if (osd_epoch_insane(osd, msg->pg.epoch)) {
		osd->ctr.bad_epoch_refused++;
		osd_dos_log(osd,
			    "dropped %s for pg %u.%x from %s: its map epoch %u is more than %u "
			    "past ours (%u, osd_epoch_ahead_max)",
			    proto_type_name(msg->type), msg->pg.pool, msg->pg.pg,
			    osd_conn_peer(conn), msg->pg.epoch, osd->epoch_ahead_max,
			    osd->map.epoch);
		return false;
	}
	/* a newer map may have more PGs (a split): the id is checked when it is ours */
	if (msg->pg.pg >= OSD_PG_ID_MAX ||
	    (msg->pg.epoch <= osd->map.epoch && pool != NULL && msg->pg.pg >= pool->pg_num)) {
		osd->ctr.bad_pg_refused++;
		osd_dos_log(osd, "dropped %s for pg %u.%x from %s: pool %u has pg_num %u",
			    proto_type_name(msg->type), msg->pg.pool, msg->pg.pg,
			    osd_conn_peer(conn), msg->pg.pool, pool != NULL ? pool->pg_num : 0);
		return false;
	}
	return true;
}

void osd_pg_msg_recv(struct osd_conn *conn, const struct proto_msg *msg)
{
	if (!osd_pg_msg_sane(conn, msg))
		return;
	if (conn->hold != NULL || osd_pg_msg_do(conn, msg) == -EAGAIN)
		osd_pg_hold_add(conn, false, msg, 0, 0);
}

void osd_pg_hold_check(struct osd *osd, uint64_t now_ms)
{
	for (struct osd_conn *c = osd->conns; c; c = c->next) {
		if (c->hold == NULL || c->failed || now_ms - c->hold->since_ms < osd->map_wait_ms)
			continue;
		/*
		 * The map it waits for did not come: a peer that lied about its
		 * epoch, or mons that cannot publish. Either way the frames behind
		 * it must not wait forever; an honest peer reconnects and peers again.
		 */
		osd->ctr.map_wait_dropped++;
		osd_dos_log(osd,
			    "%s: a message held %llu ms for a map newer than ours (%u) never "
			    "came (osd_map_wait_max); closing the connection",
			    osd_conn_peer(c), (unsigned long long)(now_ms - c->hold->since_ms),
			    osd->map.epoch);
		osd_conn_kill(c);
	}
}

/* Our map moved: what connections held goes, in order, as far as it can now. */
void osd_pg_hold_release(struct osd *osd)
{
	for (struct osd_conn *c = osd->conns; c; c = c->next) {
		while (c->hold != NULL && !c->failed) {
			struct osd_hold *h = c->hold;

			if (!h->rec && osd_pg_held_do(c, h) == -EAGAIN)
				break;
			c->hold = h->next;
			if (c->hold == NULL)
				c->hold_tail = NULL;
			if (h->rec)
				osd_repl_write_imm_now(c, h->imm, h->len);
			free(h);
		}
	}
}

/* ------------------------------------------------------------------- maps */

static bool osd_pg_loaded_held;	   /* the PGs held on disk are loaded (first map) */
static uint32_t osd_pg_prev_epoch; /* the last map epoch seen (the saved map at start) */

/*
 * The pools (id, pg_num) of the map seen last, so that a PG new in the next
 * epoch, seen without a gap, is known to be born there: a copy that
 * followed it from then knows its whole history (pg_info.born).
 */
struct osd_pg_prev_pool {
	uint32_t id, pg_num;
};
static struct osd_pg_prev_pool *osd_pg_prev_pools;
static uint32_t osd_pg_prev_npools;

static void osd_pg_prev_remember(const struct mon_map *map)
{
	struct osd_pg_prev_pool *n = NULL;

	if (map->npools > 0) {
		n = calloc(map->npools, sizeof(*n));
		if (n == NULL)
			map =
			    NULL; /* nothing remembered: PGs born next are "unknown", never wrong */
	}
	free(osd_pg_prev_pools);
	osd_pg_prev_pools = n;
	osd_pg_prev_npools = map ? map->npools : 0;
	for (uint32_t p = 0; p < osd_pg_prev_npools; p++) {
		n[p].id = map->pools[p].id;
		n[p].pg_num = map->pools[p].pg_num;
	}
}

/* The epoch PG (pool, pg) was created if this map is where it appears, else 0. */
static uint32_t osd_pg_created(const struct mon_map *map, uint32_t pool, uint32_t pg)
{
	if (osd_pg_prev_epoch == 0 || map->epoch != osd_pg_prev_epoch + 1)
		return 0; /* a first map or a gap: it may have been there all along */
	for (uint32_t p = 0; p < osd_pg_prev_npools; p++)
		if (osd_pg_prev_pools[p].id == pool)
			return pg >= osd_pg_prev_pools[p].pg_num ? map->epoch : 0;
	return map->epoch;
}

void osd_pg_map_loaded(struct osd *osd, const struct mon_map *map)
{
	(void)osd;
	osd_pg_prev_epoch = map->epoch;
	osd_pg_prev_remember(map);
}

/*
 * Once, at the first map: every PG this OSD holds state of gets its machine
 * loaded, so it follows every map, also while this OSD is not a member (a
 * stray now may be needed later, and it tells the primary it is there).
 */
static void osd_pg_load_held(struct osd *osd)
{
	const struct mon_map *map = &osd->map;

	osd_pg_loaded_held = true;
	for (uint32_t p = 0; p < map->npools; p++)
		for (uint32_t g = 0; g < map->pools[p].pg_num; g++)
			if (osd_pgm_stored(osd, map->pools[p].id, g))
				(void)osd_pgm_get(osd, map->pools[p].id, g);
}

static void osd_pg_map_one(struct osd *osd, struct osd_pg *opg, const struct mon_pool *pool,
			   uint32_t gap_from)
{
	const struct mon_map *map = &osd->map;
	int32_t acting[PLC_MAX_REPLICAS];
	uint32_t up_from[PLC_MAX_REPLICAS];
	struct pg_map pm = {.epoch = map->epoch,
			    .gap_from = gap_from,
			    .acting = acting,
			    .up_from = up_from,
			    .primary = -1};
	int n = pool ? plc_map_acting(map, pool, opg->pg, acting) : 0;

	if (n < 0)
		n = 0;
	for (int i = 0; i < n; i++) {
		const struct mon_osd *o = mon_map_osd(map, (uint32_t)acting[i]);

		up_from[i] = o ? o->up_from : 0;
	}
	pm.n = (unsigned int)n;
	pm.created = pool ? osd_pg_created(map, pool->id, opg->pg) : 0;
	pm.size = pool ? pool->size : 0;
	pm.min_size = pool ? pool->min_size : 0;
	if (n > 0) {
		pm.primary = acting[0];
		pm.primary_up_from = up_from[0];
	}
	pg_map(opg->m, &pm);
}

void osd_pg_map_changed(struct osd *osd)
{
	struct osd_pg *pg;
	const struct mon_map *map = &osd->map;
	uint32_t gap_from = osd_pg_prev_epoch + 1 < map->epoch ? osd_pg_prev_epoch : 0;

	osd_pg_gap_from = gap_from;
	if (!osd_pg_loaded_held)
		osd_pg_load_held(osd);
	if (gap_from)
		log_warn("osd",
			 "%s: map epochs %u..%u were never seen (the mons no longer hold "
			 "them): PGs learn their history in between from their peers",
			 osd->name, gap_from + 1, map->epoch - 1);
	/* PGs we are in get their machine first */
	for (uint32_t p = 0; p < map->npools; p++) {
		for (uint32_t g = 0; g < map->pools[p].pg_num; g++) {
			int32_t acting[PLC_MAX_REPLICAS];
			int n = plc_map_acting(map, &map->pools[p], g, acting);

			for (int i = 0; i < n; i++)
				if (acting[i] == (int32_t)osd->id &&
				    osd_pgm_get(osd, map->pools[p].id, g) == NULL)
					log_error("osd", "%s pg %u.%x: cannot load PG state",
						  osd->name, map->pools[p].id, g);
		}
	}
	/* then the map goes to every PG with a machine: members, and copies we hold */
	osd_pg_foreach(osd, pg)
		if (pg->m != NULL && pg->m->map_epoch < map->epoch)
			osd_pg_map_one(osd, pg, mon_map_pool(map, pg->pool), gap_from);
	/* pools of the previous map gone from this one (ids are never reused): purged */
	for (uint32_t p = 0; p < osd_pg_prev_npools; p++)
		if (mon_map_pool(map, osd_pg_prev_pools[p].id) == NULL &&
		    osd_pg_prev_pools[p].id < map->next_pool_id)
			osd_purge_pool(osd, osd_pg_prev_pools[p].id, osd_pg_prev_pools[p].pg_num);
	osd_pg_prev_epoch = map->epoch;
	osd_pg_prev_remember(map);
	osd_pg_gap_from = 0;
	osd_pg_map_save(osd);
	osd_pg_hold_release(osd);
}

/*
 * The map this OSD processed last is kept in its store (attribute "osdmap"
 * of the "pginfo" metadata object, beside the PG infos), so after a restart
 * it asks the mons for the increments since then and replays them in order:
 * the PGs' past intervals then cover the epochs it was down. One write per
 * map epoch; maps change rarely.
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

void osd_pg_map_save(struct osd *osd)
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
		osd_pg_map_loaded(osd, map_out);
	return rc;
}

/* ------------------------------------------------------------------ stats */

static bool osd_stats_inflight;

/*
 * The answer to PG_STATS carries what operators asked of our PGs:
 * {"cmds": [{"pool": 1, "pg": 3, "op": "scrub|deep-scrub|repair|verify", "token": T}]}
 * (the token: of a verify only).
 */
static void osd_pg_stats_cb(struct monc *mc, int status, const char *out, size_t out_len,
			    const char *errmsg, void *arg)
{
	struct osd *osd = arg;
	json_t *root, *cmds, *c;
	size_t i;

	(void)mc;
	(void)errmsg;
	osd_stats_inflight = false;
	if (status != 0 || out == NULL || out_len == 0)
		return;
	root = json_loadb(out, out_len, 0, NULL);
	cmds = json_object_get(root, "cmds");
	json_array_foreach(cmds, i, c)
	{
		json_t *pool = json_object_get(c, "pool"), *pg = json_object_get(c, "pg");
		const char *op = json_string_value(json_object_get(c, "op"));
		struct pg *m;

		if (!json_is_integer(pool) || !json_is_integer(pg) || op == NULL ||
		    mon_map_pool(&osd->map, (uint32_t)json_integer_value(pool)) == NULL) {
			log_warn("osd", "%s: malformed PG command from the mons ignored",
				 osd->name);
			continue;
		}
		m = osd_pgm_get(osd, (uint32_t)json_integer_value(pool),
				(uint32_t)json_integer_value(pg));
		if (m == NULL || !m->primary)
			continue;
		if (!strcmp(op, "verify"))
			pg_verify_request(
			    m, (uint32_t)json_integer_value(json_object_get(c, "token")));
		else
			pg_scrub_request(m, !strcmp(op, "deep-scrub"), !strcmp(op, "repair"));
	}
	json_decref(root);
}

static int osd_missing_bytes_one(void *arg, const char *name)
{
	void **a = arg;
	struct osd *osd = a[0];
	struct pg *m = a[1];
	uint64_t *bytes = a[2], *n = a[3];
	struct store_stat st;

	if (store_stat(osd->store, osd_pg_key(m->pool, m->id), name, &st) == 0)
		*bytes += st.size;
	return ++*n >= 4096; /* sampled beyond that */
}

/* Bytes still to move: the size of our copy of each object missing somewhere (sampled). */
static uint64_t osd_pg_missing_bytes(struct osd *osd, struct pg *m, uint64_t missing)
{
	uint64_t bytes = 0, n = 0;
	void *a[4] = {osd, m, &bytes, &n};

	pg_missing_each(m, osd_missing_bytes_one, a);
	if (n > 0 && missing > n)
		bytes += bytes / n * (missing - n);
	return bytes;
}

/* Every second: the state of each PG this OSD leads, to the monitors. */
static int osd_pg_stats_send(struct osd *osd)
{
	struct osd_pg *pg;
	struct proto_msg msg = {.type = PROTO_PG_STATS};
	struct proto_enc enc;
	struct store_usage u;
	uint8_t *buf = NULL;
	size_t cap = 0, len;
	uint32_t n = 0, held = 0;
	int rc;

	if (osd_stats_inflight)
		return 0; /* one report at a time; monc fails it after 5 s */
	for (int pass = 0; pass < 2; pass++) {
		proto_enc_init(&enc, buf, cap);
		n = 0;
		osd_pg_foreach(osd, pg) {
			struct pg *m = pg->m;
			struct proto_pg_stat s = {0};
			struct store_pg_usage pu;

			held += pass == 0 && m != NULL;
			if (m == NULL || !m->primary || n == PROTO_PG_ENTRIES_MAX)
				continue;
			/* live counts of our copy (the store keeps them), not the last
			 * scrub's */
			store_pg_usage_get(osd->store, osd_pg_key(pg->pool, pg->pg), &pu);
			s.pool = pg->pool;
			s.pg = pg->pg;
			s.state = m->state;
			s.same_since = m->same_since;
			s.last_update = m->info.lu;
			s.objects = pu.objects;
			s.bytes = pu.bytes;
			s.missing = pg_missing_count(m);
			s.missing_bytes =
			    s.missing && pass == 1 ? osd_pg_missing_bytes(osd, m, s.missing) : 0;
			s.inconsistent = m->inconsistent;
			s.last_scrub = m->last_scrub;
			s.unfound = m->missing.n > 0 ? m->unfound : 0;
			s.verify_token = m->verify_token;
			s.verify_inconsistent = m->verify_inconsistent;
			if (m->phase == PG_PH_DOWN) {
				s.nblocked = m->nblocked;
				for (unsigned int i = 0; i < m->nblocked; i++)
					s.blocked[i] = (uint32_t)m->blocked[i];
			}
			s.recovered_objects = osd->rec_objects;
			s.recovered_bytes = osd->rec_bytes;
			proto_pg_stat_put(&enc, &s);
			n++;
		}
		if (proto_enc_finish(&enc, &len) != 0)
			return -ENOBUFS;
		if (pass == 0) {
			cap = len ? len : 1;
			buf = malloc(cap);
			if (buf == NULL)
				return -ENOMEM;
		}
	}
	msg.pg_stats.osd = osd->id;
	msg.pg_stats.epoch = osd->map.epoch;
	if (store_usage_get(osd->store, &u) == 0) {
		msg.pg_stats.osd_stat.total = u.total;
		msg.pg_stats.osd_stat.used = u.used;
		msg.pg_stats.osd_stat.avail = u.avail;
		msg.pg_stats.osd_stat.data_used = u.data_used;
		msg.pg_stats.osd_stat.wal_bytes = u.wal_bytes;
		msg.pg_stats.osd_stat.kv_bytes = u.kv_bytes;
	}
	msg.pg_stats.osd_stat.purging_objects = osd->purging_objects;
	msg.pg_stats.osd_stat.num_pgs = held;
	msg.pg_stats.count = n;
	/* an older mon would refuse the trailing counters (docs/protocol.md, feature bits) */
	if (monc_mon_features(osd->monc) & PROTO_FEAT_IO_STATS) {
		msg.pg_stats.has_io = true;
		msg.pg_stats.io.rd_ops = osd->ctr.reads;
		msg.pg_stats.io.rd_bytes = osd->ctr.read_bytes;
		msg.pg_stats.io.wr_ops = osd->ctr.writes;
		msg.pg_stats.io.wr_bytes = osd->ctr.write_bytes;
	}
	msg.pg_stats.entries = buf;
	msg.pg_stats.entries_len = (uint32_t)len;
	rc = monc_request(osd->monc, &msg, 5000, osd_pg_stats_cb, osd);
	if (rc == 0)
		osd_stats_inflight = true;
	free(buf);
	return rc;
}

/* ----------------------------------------------------------------- ticks */

void osd_pg_tick(struct osd *osd)
{
	static uint64_t next_stats;
	uint64_t now = clock_now_ms();

	osd_pgtick_round(osd, now, OSD_PG_FENCE_HOLD_MS);
	osd_pg_hold_check(osd, now);
	osd_push_tick(osd);
	osd_purge_tick(osd);
	/* units freed by removes are reusable soon, not when the WAL next fills */
	if (store_checkpoint_idle(osd->store, 2000) != 0)
		log_warn("osd", "%s: checkpoint for freed space failed", osd->name);
	osd_pg_kick_pending(osd);
	if (osd->booted && now >= next_stats) {
		next_stats = now + 1000;
		osd_pg_stats_send(osd);
	}
}

int osd_pg_init(struct osd *osd)
{
	osd->pgenv = (struct pg_env){
	    .ops = &osd_pg_env_ops,
	    .arg = osd,
	    .self = (int32_t)osd->id,
	    .log_max = (uint32_t)conf_get_int(osd->conf, CONF_OSD_PG_LOG_MAX),
	    .max_chunk = PROTO_PG_ENTRIES_MAX,
	    .msg_bytes = osd->msg_size > 256 ? osd->msg_size - 256 : osd->msg_size,
	    .scrub_ms = conf_get_duration_us(osd->conf, CONF_OSD_SCRUB_INTERVAL) / 1000,
	    .deep_scrub_ms = conf_get_duration_us(osd->conf, CONF_OSD_DEEP_SCRUB_INTERVAL) / 1000,
	    .scrub_sleep_ms = conf_get_duration_us(osd->conf, CONF_OSD_SCRUB_SLEEP) / 1000,
	};
	return osd_push_init(osd);
}

void osd_pg_fini(struct osd *osd)
{
	struct osd_pg *pg;
	osd_push_fini(osd);
	osd_crc_fini(osd);
	osd_pg_foreach(osd, pg) {
		pg_free(pg->m);
		pg->m = NULL;
		pg_set_clear(&pg->busy);
	}
}
