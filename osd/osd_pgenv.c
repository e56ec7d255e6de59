/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The environment of the PG state machine in the OSD (struct pg_env_ops,
 * osd/pg/pg.h): its transactions become store transactions (log entries
 * keyed by version, trims, the info attribute, removes), its messages go
 * to the peer's cluster connection, local objects are listed and stated
 * from the store, pushes go to osd_push.c, a stray copy is removed in the
 * background. The transactions of a primary's op and of a replica's record
 * (data, version attribute and log entry in one) are built here too.
 *
 * A store that fails a commit stops the OSD: what it holds is no longer
 * what the machine believes, and only peering (with this OSD down) can
 * make the copies agree again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd_pg.h"
#include "proto/hello.h"

/* ------------------------------------------------------------- transactions */

int osd_pgenv_txn(struct osd *osd, struct pg *m, const struct pg_txn *t, struct store_tx *tx)
{
	uint64_t pgk = osd_pg_key(m->pool, m->id);
	int rc = 0;

	if (t->clear)
		rc = store_tx_pglog_trim(tx, pgk, UINT64_MAX - 1);
	for (uint32_t i = 0; rc == 0 && i < t->nput; i++) {
		uint8_t buf[OSD_REC_HDR_MAX];
		size_t len;

		rc = osd_pglog_entry_encode(m->pool, m->id, t->put[i].v, t->put[i].op,
					    t->put[i].name, buf, sizeof(buf), &len);
		if (rc == 0)
			rc = store_tx_pglog_append(tx, pgk, t->put[i].v, buf, len);
	}
	if (rc == 0 && t->trim)
		rc = store_tx_pglog_trim(tx, pgk, t->trim);
	for (uint32_t i = 0; rc == 0 && i < t->nremove; i++) {
		struct store_stat st;

		if (store_stat(osd->store, pgk, t->remove[i], &st) == 0)
			rc = store_tx_remove(tx, pgk, t->remove[i]);
	}
	if (rc == 0 && t->info) {
		static __thread uint8_t buf[PG_INFO_ENC_MAX];
		struct proto_enc enc;
		char key[32];
		size_t len;

		proto_enc_init(&enc, buf, sizeof(buf));
		pg_info_encode(m, &enc);
		rc = proto_enc_finish(&enc, &len);
		snprintf(key, sizeof(key), "%u.%x", m->pool, m->id);
		if (rc == 0)
			rc = store_tx_setattr(tx, OSD_META_PG, OSD_PGINFO_OBJ, key, buf, len);
	}
	return rc;
}

struct osd_pgenv_tx {
	struct osd *osd;
	uint32_t pool, pg;
	uint64_t token;
	store_commit_cb cb;
	void *arg;
};

static void osd_pgenv_commit_cb(void *arg, int rc)
{
	struct osd_pgenv_tx *t = arg;
	struct osd *osd = t->osd;
	struct pg *m = osd_pgm_get(osd, t->pool, t->pg);

	if (rc != 0) {
		log_error("osd",
			  "%s pg %u.%x: the store failed a commit: %s; stopping (peering "
			  "without this OSD keeps the copies equal)",
			  osd->name, t->pool, t->pg, weft_strerror(rc));
		osd->fatal = rc;
		osd->stopping = true;
	}
	if (m != NULL && t->token != 0)
		pg_committed(m, t->token);
	if (t->cb)
		t->cb(t->arg, rc);
	else
		osd->store_pending--;
	free(t);
}

int osd_pgenv_submit(struct osd *osd, struct pg *m, struct store_tx *tx, uint64_t token,
		     store_commit_cb cb, void *arg)
{
	struct osd_pgenv_tx *t = malloc(sizeof(*t));
	int rc;

	if (t == NULL)
		return -ENOMEM;
	*t = (struct osd_pgenv_tx){osd, m->pool, m->id, token, cb, arg};
	rc = store_tx_submit(osd->store, tx, osd_pgenv_commit_cb, t);
	if (rc != 0) {
		free(t);
		return rc;
	}
	if (cb == NULL)
		osd->store_pending++; /* callers with a callback count their own */
	return 0;
}

static int e_persist(void *arg, struct pg *m, const struct pg_txn *t)
{
	struct osd *osd = arg;
	struct store_tx *tx;
	int rc = store_tx_create(&tx);

	if (rc != 0)
		return rc;
	rc = osd_pgenv_txn(osd, m, t, tx);
	if (rc == 0)
		rc = osd_pgenv_submit(osd, m, tx, t->token, NULL, NULL);
	if (rc == -EINVAL && t->nput == 0 && !t->info && !t->clear && !t->trim) {
		/* only removes of objects already gone: nothing to do, done at once */
		store_tx_destroy(tx);
		pg_committed(m, t->token);
		return 0;
	}
	if (rc != 0)
		store_tx_destroy(tx);
	return rc;
}

/* ------------------------------------------------------------ local objects */

static int e_obj_stat(void *arg, struct pg *m, const char *name, unsigned int what,
		      struct pg_obj *out)
{
	struct osd *osd = arg;
	uint64_t pgk = osd_pg_key(m->pool, m->id);
	struct store_stat st;
	int rc = store_stat(osd->store, pgk, name, &st);

	if (rc != 0)
		return rc;
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->size = st.size;
	if (osd_pg_obj_version(osd, pgk, name, &out->version) != 0)
		out->version = 1; /* written before versions were kept: any non-zero */
	if (what & PG_OBJ_DIGEST) {
		rc = store_digest(osd->store, pgk, name, &out->digest);
		if (rc == -WEFT_E_CORRUPT || rc == -EIO) {
			out->digest = 0xffffffffu;
			rc = 0;
		}
		if (rc != 0)
			return rc;
	}
	return rc;
}

struct osd_list_ctx {
	char **names;
	uint32_t n, max;
	bool more;
};

static int osd_list_one(void *arg, const char *name)
{
	struct osd_list_ctx *c = arg;

	if (c->n == c->max) {
		c->more = true;
		return 1;
	}
	c->names[c->n] = strdup(name);
	if (c->names[c->n] == NULL)
		return -ENOMEM;
	c->n++;
	return 0;
}

static int e_obj_list(void *arg, struct pg *m, const char *after, uint32_t max, unsigned int what,
		      struct pg_obj *out, uint32_t *n_out, bool *last_out)
{
	struct osd *osd = arg;
	struct osd_list_ctx c = {.max = max};
	uint32_t n = 0;
	int rc;

	c.names = calloc(max ? max : 1, sizeof(*c.names));
	if (c.names == NULL)
		return -ENOMEM;
	rc = store_list(osd->store, osd_pg_key(m->pool, m->id), after ? after : "", osd_list_one,
			&c);
	for (uint32_t i = 0; rc >= 0 && i < c.n; i++)
		if (e_obj_stat(osd, m, c.names[i], what, &out[n]) == 0)
			n++; /* one removed meanwhile is not listed */
	for (uint32_t i = 0; i < c.n; i++)
		free(c.names[i]);
	free(c.names);
	if (rc < 0)
		return rc;
	*n_out = n;
	*last_out = !c.more;
	return 0;
}

/* ------------------------------------------------------------ stray removal */

struct osd_destroy {
	struct osd *osd;
	uint32_t pool, pg;
	uint32_t pending;
	int rc;
	uint32_t objects;
};

static void osd_destroy_cb(void *arg, int rc)
{
	struct osd_destroy *d = arg;
	struct osd *osd = d->osd;

	osd->store_pending--;
	if (rc != 0 && d->rc == 0)
		d->rc = rc;
	if (--d->pending > 0)
		return;
	{
		struct pg *m = osd_pgm_get(osd, d->pool, d->pg);

		if (d->rc == 0)
			log_info("osd", "%s pg %u.%x: stray copy removed (%u objects)", osd->name,
				 d->pool, d->pg, d->objects);
		if (m != NULL)
			pg_destroyed(m, d->rc);
	}
	free(d);
}

static int osd_destroy_list_one(void *arg, const char *name)
{
	struct osd_list_ctx *c = arg;
	char **n;

	if (c->n == c->max) {
		uint32_t cap = c->max ? c->max * 2 : 256;

		n = realloc(c->names, cap * sizeof(*n));
		if (n == NULL)
			return -ENOMEM;
		c->names = n;
		c->max = cap;
	}
	c->names[c->n] = strdup(name);
	return c->names[c->n] ? (c->n++, 0) : -ENOMEM;
}

/* The copy's objects, log and info go, in transactions of 256 objects, in order. */
static int e_destroy(void *arg, struct pg *m)
{
	struct osd *osd = arg;
	uint64_t pgk = osd_pg_key(m->pool, m->id);
	struct osd_list_ctx c = {0};
	struct osd_destroy *d = calloc(1, sizeof(*d));
	struct store_tx *tx = NULL;
	char key[32];
	int rc;

	if (d == NULL)
		return -ENOMEM;
	*d = (struct osd_destroy){osd, m->pool, m->id, 1, 0, 0}; /* 1: until all are out */
	rc = store_list(osd->store, pgk, "", osd_destroy_list_one, &c);
	d->objects = c.n;
	for (uint32_t i = 0; rc >= 0 && i <= c.n; i++) {
		if (tx == NULL && (rc = store_tx_create(&tx)) != 0)
			break;
		if (i < c.n)
			rc = store_tx_remove(tx, pgk, c.names[i]);
		if (rc == 0 && (i == c.n || (i + 1) % 256 == 0)) {
			if (i == c.n) {
				snprintf(key, sizeof(key), "%u.%x", m->pool, m->id);
				rc = store_tx_pglog_trim(tx, pgk, UINT64_MAX - 1);
				if (rc == 0 && osd_pgm_stored(osd, m->pool, m->id))
					rc = store_tx_rmattr(tx, OSD_META_PG, OSD_PGINFO_OBJ, key);
			}
			if (rc == 0)
				rc = store_tx_submit(osd->store, tx, osd_destroy_cb, d);
			if (rc != 0)
				break;
			osd->store_pending++;
			d->pending++;
			tx = NULL;
		}
	}
	if (tx != NULL)
		store_tx_destroy(tx);
	for (uint32_t i = 0; i < c.n; i++)
		free(c.names[i]);
	free(c.names);
	if (rc < 0 && d->pending == 1) {
		free(d);
		return rc; /* nothing submitted */
	}
	if (rc < 0 && d->rc == 0)
		d->rc = rc;
	d->pending--; /* the batches in flight finish it */
	if (d->pending == 0) {
		pg_destroyed(m, d->rc);
		free(d);
	}
	return 0;
}

/* ------------------------------------------------------------------- the rest */

static void e_send(void *arg, struct pg *m, int32_t to, uint16_t type, const struct proto_pg *msg)
{
	struct osd *osd = arg;
	static __thread struct proto_msg pm;
	struct osd_conn *conn = osd_peer_conn_to(osd, (uint32_t)to);

	(void)m;
	if (conn == NULL)
		return; /* not connected now: the machine asks again later */
	pm.type = type;
	pm.pg = *msg;
	pm.pg.from = osd->id;
	/* larger than ms_msg_size (a long log): the messenger's rendezvous carries it */
	osd_conn_send(conn, &pm, 0);
}

/*
 * What osd's hello said, from our connection to it or, while that one is
 * (re)connecting, from its connection to us: a member answers an ACTIVATE
 * that came in on the primary's connection even when its own is not up
 * yet (the answer queues behind its hello). Under a storm of reconnects
 * (30 ASan OSDs starting) our own was often not ready.
 */
static int e_acks_activate(void *arg, int32_t to)
{
	struct osd *osd = arg;
	struct osd_peer *p = osd_peer_get(osd, (uint32_t)to);
	const struct osd_conn *conn = p != NULL ? p->conn : NULL;

	if (conn == NULL || conn->failed || !conn->hello_done) {
		for (conn = osd->conns; conn; conn = conn->next)
			if (conn->kind != OSD_CONN_CLIENT && conn->peer_known &&
			    conn->peer_id == (uint32_t)to && conn->hello_done && !conn->failed)
				break;
	}
	if (conn == NULL)
		return -ENOTCONN;
	return (conn->peer_features & PROTO_FEAT_PG_ACT_ACK) != 0;
}

static int e_push(void *arg, struct pg *m, int32_t to, const char *name, uint64_t version,
		  uint32_t epoch)
{
	return osd_push_start(arg, m, to, name, version, epoch, m->primary);
}

static void e_kick(void *arg, struct pg *m)
{
	struct osd *osd = arg;

	osd_pg_kick_later(osd, osd_pg_get(osd, m->pool, m->id));
}

static void e_tick_wanted(void *arg, struct pg *m)
{
	struct osd *osd = arg;
	struct osd_pg *pg = osd_pg_get(osd, m->pool, m->id);

	if (pg != NULL)
		osd_pg_tick_want(osd, pg);
}

static void e_interval(void *arg, struct pg *m)
{
	struct osd *osd = arg;

	osd_op_pg_interval(osd, osd_pg_get(osd, m->pool, m->id));
	osd_push_interval(osd, m);
}

static bool e_budget(void *arg, int take)
{
	return osd_push_budget(arg, take);
}

static bool e_scrub_slot(void *arg, int take)
{
	struct osd *osd = arg;

	if (take < 0) {
		osd->scrub_busy = false;
		return true;
	}
	if (osd->scrub_busy)
		return false;
	osd->scrub_busy = true;
	return true;
}

static int e_obj_crc(void *arg, struct pg *m, const char *name, uint64_t size, uint64_t token,
		     uint32_t *crc_out)
{
	return osd_crc_start(arg, m->pool, m->id, name, size, token, crc_out);
}

static bool e_range_busy(void *arg, struct pg *m, const char *after, const char *upto)
{
	struct osd_pg *pg = osd_pg_find(arg, m->pool, m->id);

	return pg != NULL && osd_op_range_busy(pg, after, upto);
}

static bool e_obj_busy(void *arg, struct pg *m, const char *name)
{
	struct osd_pg *pg = osd_pg_get(arg, m->pool, m->id);

	return pg != NULL && pg_set_find(&pg->busy, name) != NULL;
}

static bool e_osd_up(void *arg, int32_t id)
{
	const struct mon_osd *o =
	    id >= 0 ? mon_map_osd(&((struct osd *)arg)->map, (uint32_t)id) : NULL;

	return o != NULL && (o->state & MON_OSD_EXISTS) && (o->state & MON_OSD_UP);
}

static bool e_osd_exists(void *arg, int32_t id)
{
	const struct mon_osd *o =
	    id >= 0 ? mon_map_osd(&((struct osd *)arg)->map, (uint32_t)id) : NULL;

	return o != NULL && (o->state & MON_OSD_EXISTS);
}

static uint32_t e_max_osd(void *arg)
{
	return ((struct osd *)arg)->map.max_osd;
}

/*
 * Recovery and backfill write into osd only while the map does not mark it
 * backfillfull (docs/capacity.md): no push to it, no pull into us, no next
 * backfill batch for it; the PG shows backfill_toofull meanwhile. An object
 * a client op waits for still goes (a remove of an object a full replica
 * misses must not wait for space that only removes can free); the store's
 * reserve is the last guard.
 */
static bool e_space_ok(void *arg, struct pg *m, int32_t osd, bool urgent)
{
	struct osd *o = arg;

	(void)m;
	if (urgent || osd < 0)
		return true;
	return !mon_map_osd_backfillfull(&o->map, (uint32_t)osd);
}

/* The map's flags as the PG machines read them (docs/operations.md, "Flags"). */
static uint32_t e_paused(void *arg, struct pg *m)
{
	uint32_t f = ((struct osd *)arg)->map.flags;

	(void)m;
	return ((f & MON_FLAG_NORECOVER) ? PG_PAUSE_RECOVERY : 0) |
	       ((f & MON_FLAG_NOBACKFILL) ? PG_PAUSE_BACKFILL : 0) |
	       ((f & MON_FLAG_NOREBALANCE) ? PG_PAUSE_REBALANCE : 0) |
	       ((f & MON_FLAG_NOSCRUB) ? PG_PAUSE_SCRUB : 0) |
	       ((f & MON_FLAG_NODEEP_SCRUB) ? PG_PAUSE_DEEP_SCRUB : 0);
}

static uint64_t e_now(void *arg)
{
	(void)arg;
	return clock_now_ms();
}

static void e_log(void *arg, struct pg *m, enum pg_log_level lv, const char *msg)
{
	struct osd *osd = arg;

	(void)m;
	switch (lv) {
	case PG_LOG_DEBUG:
		log_debug("osd", "%s %s", osd->name, msg);
		break;
	case PG_LOG_INFO:
		log_info("osd", "%s %s", osd->name, msg);
		break;
	case PG_LOG_WARN:
		log_warn("osd", "%s %s", osd->name, msg);
		break;
	case PG_LOG_ERROR:
		log_error("osd", "%s %s", osd->name, msg);
		break;
	}
}

const struct pg_env_ops osd_pg_env_ops = {
    .send = e_send,
    .acks_activate = e_acks_activate,
    .persist = e_persist,
    .obj_stat = e_obj_stat,
    .obj_list = e_obj_list,
    .push = e_push,
    .destroy = e_destroy,
    .kick = e_kick,
    .tick_wanted = e_tick_wanted,
    .interval = e_interval,
    .budget = e_budget,
    .scrub_slot = e_scrub_slot,
    .obj_busy = e_obj_busy,
    .range_busy = e_range_busy,
    .obj_crc = e_obj_crc,
    .space_ok = e_space_ok,
    .paused = e_paused,
    .osd_up = e_osd_up,
    .osd_exists = e_osd_exists,
    .max_osd = e_max_osd,
    .now_ms = e_now,
    .log = e_log,
};

/* ------------------------------------------------ op and record transactions */

/* In the object's record, not an attribute: one RocksDB key fewer per write. */
static int osd_pg_version_set(struct store_tx *tx, uint64_t pgk, const char *name, uint64_t v)
{
	return store_tx_set_version(tx, pgk, name, v);
}

/*
 * The data part of a record's transaction, shared by the primary (its own
 * op), replicas (ring records) and recovery targets (pushes). The data is
 * not copied (store_tx_write_ref): every caller submits or destroys the
 * transaction before its op buffer, ring record or push buffer goes.
 */
static int osd_pg_rec_tx(struct osd *osd, const struct osd_rec_hdr *h, const void *data,
			 struct store_tx *tx)
{
	uint64_t pgk = osd_pg_key(h->pool, h->pg);
	struct store_stat st;
	int rc = 0;

	switch (h->op) {
	case PROTO_OP_WRITE_FULL:
		rc = store_tx_truncate(tx, pgk, h->name, 0);
		/* fall through */
	case PROTO_OP_WRITE:
		if (rc == 0 && h->length > 0)
			rc = store_tx_write_ref(tx, pgk, h->name, h->offset, h->length, data);
		else if (h->op == PROTO_OP_WRITE && store_stat(osd->store, pgk, h->name, &st) != 0)
			return rc; /* an empty write creates nothing */
		break;
	case PROTO_OP_TRUNCATE:
		rc = store_tx_truncate(tx, pgk, h->name, h->offset);
		break;
	case PROTO_OP_ZERO:
		rc = store_tx_zero(tx, pgk, h->name, h->offset, h->length);
		break;
	case PROTO_OP_REMOVE:
	case OSD_REC_PUSH_RM:
		/* a resent remove may find the object already gone */
		if (store_stat(osd->store, pgk, h->name, &st) == 0)
			rc = store_tx_remove(tx, pgk, h->name);
		return rc;
	case OSD_REC_PUSH:
	case OSD_REC_PUSH_LAST:
		if (h->offset == 0)
			rc = store_tx_truncate(tx, pgk, h->name, 0);
		if (rc == 0 && h->length > 0)
			rc = store_tx_write_ref(tx, pgk, h->name, h->offset, h->length, data);
		if (rc == 0 && h->op == OSD_REC_PUSH)
			return 0; /* the version is set with the last chunk */
		break;
	default:
		return -EINVAL;
	}
	if (rc == 0)
		rc = osd_pg_version_set(tx, pgk, h->name, h->version);
	return rc;
}

int osd_pg_op_tx(struct osd *osd, struct osd_pg *pg, struct store_tx *tx,
		 const struct osd_rec_hdr *h, const void *data, uint64_t *prev_out,
		 uint64_t *token_out)
{
	struct pg *m = osd_pgm_get(osd, pg->pool, pg->pg);
	struct pg_txn *t;
	int rc;

	if (m == NULL)
		return -ENOMEM;
	rc = osd_pg_rec_tx(osd, h, data, tx);
	if (rc != 0)
		return rc;
	rc = pg_op_prepare(m, h->version, h->op, h->name, &t);
	if (rc != 0)
		return rc;
	rc = osd_pgenv_txn(osd, m, t, tx);
	if (rc != 0) {
		pg_op_cancel(m, h->version);
		return rc;
	}
	*prev_out = t->prev;
	*token_out = t->token;
	return 0;
}

void osd_pg_op_cancel(struct osd *osd, struct osd_pg *pg, uint64_t version)
{
	struct pg *m = osd_pgm_get(osd, pg->pool, pg->pg);

	if (m != NULL)
		pg_op_cancel(m, version);
}

int osd_pg_op_submit(struct osd *osd, struct osd_pg *pg, struct store_tx *tx, uint64_t version,
		     uint64_t token, store_commit_cb cb, void *arg)
{
	struct pg *m = osd_pgm_get(osd, pg->pool, pg->pg);
	int rc = m ? osd_pgenv_submit(osd, m, tx, token, cb, arg) : -ENOMEM;

	if (rc != 0 && m != NULL)
		pg_op_cancel(m, version);
	return rc;
}

/* A push committed: the PG's count of transactions in flight drops; the last part of an object may end the primary's pull of it. */
struct osd_push_tx {
	struct osd *osd;
	store_commit_cb cb;
	void *arg;
	uint32_t pool, pg;
	bool arrived; /* the object's last part (or its removal) */
	uint64_t version;
	char name[];
};

static void osd_push_tx_cb(void *arg, int rc)
{
	struct osd_push_tx *p = arg;
	struct pg *m = osd_pgm_get(p->osd, p->pool, p->pg);

	if (rc != 0) {
		log_error("osd", "%s pg %u.%x: the store failed a commit: %s; stopping",
			  p->osd->name, p->pool, p->pg, weft_strerror(rc));
		p->osd->fatal = rc;
		p->osd->stopping = true;
	} else if (m != NULL && p->arrived) {
		pg_obj_arrived(m, p->name, p->version);
	}
	if (m != NULL)
		pg_push_finished(m);
	p->cb(p->arg, rc);
	free(p);
}

/*
 * A ring record on a replica or recovery target. Client records go through
 * the machine (fence, stall, the entry before them) with their log entry in
 * the same transaction; pushes are checked against our log.
 */
int osd_pg_rec_apply(struct osd *osd, const struct osd_rec_hdr *h, const void *data,
		     store_commit_cb cb, void *arg)
{
	struct pg *m = osd_pgm_get(osd, h->pool, h->pg);
	bool push = h->op == OSD_REC_PUSH || h->op == OSD_REC_PUSH_LAST || h->op == OSD_REC_PUSH_RM;
	struct store_tx *tx = NULL;
	struct pg_txn *t = NULL;
	int rc;

	if (m == NULL)
		return -ENOMEM;
	if (push) {
		rc =
		    pg_push_accept(m, h->epoch, h->name, h->op == OSD_REC_PUSH_RM ? 0 : h->version);
		if (rc != 0)
			return rc;
	} else {
		rc = pg_rec_prepare(m, h->epoch, h->version, h->prev, h->op, h->name, &t);
		if (rc != 0)
			return rc;
	}
	rc = store_tx_create(&tx);
	if (rc == 0)
		rc = osd_pg_rec_tx(osd, h, data, tx);
	if (rc == 0 && t != NULL)
		rc = osd_pgenv_txn(osd, m, t, tx);
	if (rc == 0 && push) {
		size_t nl = strlen(h->name) + 1;
		struct osd_push_tx *p = malloc(sizeof(*p) + nl);

		if (p == NULL) {
			rc = -ENOMEM;
		} else {
			*p = (struct osd_push_tx){osd,
						  cb,
						  arg,
						  h->pool,
						  h->pg,
						  h->op != OSD_REC_PUSH,
						  h->op == OSD_REC_PUSH_RM ? 0 : h->version};
			memcpy(p->name, h->name, nl);
			/* a removal of what we do not have: the store refuses an empty one */
			if (h->op == OSD_REC_PUSH_RM) {
				struct pg_txn info = {.info = true};

				rc = osd_pgenv_txn(osd, m, &info, tx);
			}
			if (rc == 0)
				rc = store_tx_submit(osd->store, tx, osd_push_tx_cb, p);
			if (rc == 0)
				return 0; /* osd_push_tx_cb finishes the push */
			free(p);
		}
	} else if (rc == 0) {
		rc = osd_pgenv_submit(osd, m, tx, t ? t->token : 0, cb, arg);
	}
	if (rc != 0) {
		if (tx != NULL)
			store_tx_destroy(tx);
		if (t != NULL)
			pg_rec_cancel(m, h->version, rc);
		if (push)
			pg_push_finished(m);
	}
	return rc;
}
