/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Per-PG state of recovery (docs/recovery.md, "PG log"): the PG log index
 * and the persisted PG info, the store transactions that carry a client
 * op, a replication record or a recovery push together with their log
 * entry, and the hooks osd_op.c / osd_repl.c / osd_net.c call.
 *
 * The log itself lives in the store (store_tx_pglog_append, keyed by the
 * version); an entry is the op's ring-record header (op, pool, pg, epoch,
 * version, offset, length, name). In memory each PG keeps the versions of
 * its entries in order, enough for "is version v in my log" and trimming.
 * The info (tail, last_complete, les, backfill flag, past intervals) is an attribute of
 * the OSD's metadata object, written in the same transaction as the change
 * it describes.
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

#define OSD_PGINFO_VER 2 /* 2: + past intervals; 1 is still read */
#define OSD_PGINFO_BUF (64 + PG_PI_ENC_MAX)
#define OSD_PGINFO_F_COMPLETE 0x1u
#define OSD_PGINFO_F_BACKFILL 0x2u

struct osd_pgtx {
	struct osd *osd;
	struct osd_pgx *x;
	store_commit_cb cb;
	void *arg;
	bool whole_push; /* a PUSH_LAST: tell recovery the object arrived */
	char name[];
};

struct osd_pgx *osd_pgx_get(struct osd *osd, uint32_t pool, uint32_t pgid)
{
	struct osd_pg *pg = osd_pg_get(osd, pool, pgid);

	if (pg == NULL)
		return NULL;
	if (pg->x == NULL) {
		pg->x = calloc(1, sizeof(*pg->x));
		if (pg->x == NULL)
			return NULL;
		pg->x->pg = pg;
		pg->x->auth = -1;
	}
	if (!pg->x->loaded && osd_pgx_load(osd, pg->x) != 0)
		return NULL;
	return pg->x;
}

bool osd_pgx_log_has(const struct osd_pgx *x, uint64_t v)
{
	uint32_t lo = 0, hi = x->nlog;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (x->logv[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < x->nlog && x->logv[lo] == v;
}

void osd_pgx_log_add(struct osd_pgx *x, uint64_t v)
{
	uint32_t i;

	if (x->nlog == x->caplog) {
		uint32_t cap = x->caplog ? x->caplog * 2 : 256;
		uint64_t *n = realloc(x->logv, cap * sizeof(*n));

		if (n == NULL)
			return; /* the index only loses precision: v is still in the store */
		x->logv = n;
		x->caplog = cap;
	}
	for (i = x->nlog; i > 0 && x->logv[i - 1] >= v; i--)
		if (x->logv[i - 1] == v)
			return;
	memmove(&x->logv[i + 1], &x->logv[i], (x->nlog - i) * sizeof(*x->logv));
	x->logv[i] = v;
	x->nlog++;
	if (v > x->last_update)
		x->last_update = v;
}

void osd_pgx_log_drop(struct osd_pgx *x, uint64_t v)
{
	for (uint32_t i = 0; i < x->nlog; i++) {
		if (x->logv[i] == v) {
			memmove(&x->logv[i], &x->logv[i + 1], (x->nlog - i - 1) * sizeof(*x->logv));
			x->nlog--;
			return;
		}
	}
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
	if (dec.err != 0 || magic != OSD_WIRE_MAGIC || e.name_len == 0)
		return -EBADMSG;
	*e_out = e;
	return 0;
}

static void osd_pgx_key(const struct osd_pgx *x, char *key, size_t cap)
{
	snprintf(key, cap, "%u.%x", x->pg->pool, x->pg->pg);
}

struct osd_pgx_load_ctx {
	struct osd_pgx *x;
	int bad;
};

static int osd_pgx_load_one(void *arg, uint64_t seq, const void *entry, size_t len)
{
	struct osd_pgx_load_ctx *c = arg;
	static __thread struct proto_pg_log_entry e;

	if (osd_pglog_entry_decode(entry, len, &e) != 0 || e.version != seq) {
		c->bad++;
		return 0;
	}
	if (e.op != PROTO_PG_LOG_ROLLBACK)
		osd_pgx_log_add(c->x, seq);
	return 0;
}

bool osd_pgx_stored(struct osd *osd, uint32_t pool, uint32_t pgid)
{
	static __thread uint8_t buf[OSD_PGINFO_BUF];
	char key[32];
	size_t len;

	snprintf(key, sizeof(key), "%u.%x", pool, pgid);
	return store_getattr(osd->store, OSD_META_PG, OSD_PGINFO_OBJ, key, buf, sizeof(buf),
			     &len) == 0;
}

/* Info attribute, then the log after its tail. Missing info = an empty PG. */
int osd_pgx_load(struct osd *osd, struct osd_pgx *x)
{
	uint64_t pgk = osd_pg_key(x->pg->pool, x->pg->pg);
	struct osd_pgx_load_ctx c = {x, 0};
	static __thread uint8_t buf[OSD_PGINFO_BUF];
	uint8_t flags = 0;
	char key[32];
	size_t len = 0;
	int rc;

	osd_pgx_key(x, key, sizeof(key));
	x->nlog = 0;
	x->last_update = x->tail = x->last_complete = 0;
	x->les = 0;
	memset(&x->pi, 0, sizeof(x->pi));
	rc = store_getattr(osd->store, OSD_META_PG, OSD_PGINFO_OBJ, key, buf, sizeof(buf), &len);
	if (rc == 0) {
		struct proto_dec dec;
		uint8_t ver = 0;

		proto_dec_init(&dec, buf, len, "pginfo", NULL);
		proto_dec_get_u8(&dec, "ver", &ver);
		proto_dec_get_u8(&dec, "flags", &flags);
		proto_dec_get_u64(&dec, "last_update", &x->last_update);
		proto_dec_get_u64(&dec, "tail", &x->tail);
		proto_dec_get_u64(&dec, "last_complete", &x->last_complete);
		proto_dec_get_u32(&dec, "les", &x->les);
		if (ver == OSD_PGINFO_VER && dec.err == 0)
			pg_pi_decode(&dec, &x->pi);
		if (proto_dec_finish(&dec) != 0 || ver < 1 || ver > OSD_PGINFO_VER) {
			log_error("osd", "%s pg %u.%x: unreadable PG info; treating the copy as "
					 "needing backfill", osd->name, x->pg->pool, x->pg->pg);
			flags = OSD_PGINFO_F_BACKFILL;
			x->last_update = x->tail = x->last_complete = 0;
			memset(&x->pi, 0, sizeof(x->pi));
		}
	} else if (rc != -ENOENT) {
		log_error("osd", "%s pg %u.%x: reading PG info: %s", osd->name, x->pg->pool,
			  x->pg->pg, weft_strerror(rc));
		return rc;
	}
	rc = store_pglog_read(osd->store, pgk, x->tail + 1, osd_pgx_load_one, &c);
	if (rc < 0) {
		log_error("osd", "%s pg %u.%x: reading the PG log: %s", osd->name, x->pg->pool,
			  x->pg->pg, weft_strerror(rc));
		return rc;
	}
	if (c.bad)
		log_warn("osd", "%s pg %u.%x: %d unreadable PG log entries skipped", osd->name,
			 x->pg->pool, x->pg->pg, c.bad);
	x->backfill_flag = (flags & OSD_PGINFO_F_BACKFILL) != 0;
	if (flags & OSD_PGINFO_F_COMPLETE)
		x->last_complete = x->last_update;
	if (x->last_complete > x->last_update)
		x->last_complete = x->last_update;
	x->loaded = true;
	return 0;
}

int osd_pgx_info_tx(struct osd *osd, struct osd_pgx *x, struct store_tx *tx)
{
	static __thread uint8_t buf[OSD_PGINFO_BUF];
	struct proto_enc enc;
	char key[32];
	size_t len;
	uint8_t flags = 0;

	if (x->last_complete >= x->last_update)
		flags |= OSD_PGINFO_F_COMPLETE;
	if (x->backfill_flag)
		flags |= OSD_PGINFO_F_BACKFILL;
	osd_pgx_key(x, key, sizeof(key));
	proto_enc_init(&enc, buf, sizeof(buf));
	proto_enc_put_u8(&enc, OSD_PGINFO_VER);
	proto_enc_put_u8(&enc, flags);
	proto_enc_put_u64(&enc, x->last_update);
	proto_enc_put_u64(&enc, x->tail);
	proto_enc_put_u64(&enc, x->last_complete);
	proto_enc_put_u32(&enc, x->les);
	pg_pi_encode(&x->pi, &enc);
	if (proto_enc_finish(&enc, &len) != 0)
		return -EINVAL;
	return store_tx_setattr(tx, OSD_META_PG, OSD_PGINFO_OBJ, key, buf, len);
}

/*
 * Append one entry. A complete copy stays complete (last_complete follows
 * last_update). Past osd_pg_log_max entries the oldest are trimmed, never
 * above last_complete: what a copy still misses stays described by its log.
 */
int osd_pgx_log_tx(struct osd *osd, struct osd_pgx *x, struct store_tx *tx, uint16_t op,
		   uint64_t version, const char *name, const void *entry, size_t len)
{
	uint64_t pgk = osd_pg_key(x->pg->pool, x->pg->pg);
	uint32_t max = (uint32_t)conf_get_int(osd->conf, CONF_OSD_PG_LOG_MAX);
	/* entries learnt from another copy name objects this one does not have yet */
	bool complete = x->last_complete >= x->last_update && !x->log_catchup;
	bool info = false;
	int rc;

	(void)name;
	rc = store_tx_pglog_append(tx, pgk, version, entry, len);
	if (rc != 0)
		return rc;
	if (op == PROTO_PG_LOG_ROLLBACK) {
		osd_pgx_log_drop(x, version);
		return 0;
	}
	osd_pgx_log_add(x, version);
	if (complete)
		x->last_complete = x->last_update;
	if (x->nlog > max + max / 8) {
		uint64_t upto = x->logv[x->nlog - max - 1];

		if (upto > x->last_complete)
			upto = x->last_complete;
		if (upto > x->tail) {
			uint32_t k = 0;

			rc = store_tx_pglog_trim(tx, pgk, upto);
			if (rc != 0)
				return rc;
			while (k < x->nlog && x->logv[k] <= upto)
				k++;
			memmove(x->logv, x->logv + k, (x->nlog - k) * sizeof(*x->logv));
			x->nlog -= k;
			x->tail = upto;
			info = true;
		}
	}
	/* the info records "complete" as a flag: a complete copy rewrites it only on trims */
	if (info || !complete)
		rc = osd_pgx_info_tx(osd, x, tx);
	return rc;
}

static void osd_pgx_commit_cb(void *arg, int rc)
{
	struct osd_pgtx *t = arg;
	struct osd *osd = t->osd;
	struct osd_pgx *x = t->x;

	x->tx_inflight--;
	if (t->cb)
		t->cb(t->arg, rc);
	else
		osd->store_pending--; /* our own transaction (peering, recovery) */
	if (rc == 0 && t->whole_push)
		osd_recovery_pushed(osd, x->pg->pool, x->pg->pg, t->name, true);
	if (x->tx_inflight == 0)
		osd_peer_tx_settled(osd, x);
	free(t);
}

static int osd_pgx_submit_ex(struct osd *osd, struct osd_pgx *x, struct store_tx *tx,
			     store_commit_cb cb, void *arg, const char *push_name)
{
	size_t nl = push_name ? strlen(push_name) + 1 : 1;
	struct osd_pgtx *t = calloc(1, sizeof(*t) + nl);
	int rc;

	if (t == NULL)
		return -ENOMEM;
	*t = (struct osd_pgtx){osd, x, cb, arg, push_name != NULL};
	memcpy(t->name, push_name ? push_name : "", nl);
	rc = store_tx_submit(osd->store, tx, osd_pgx_commit_cb, t);
	if (rc != 0) {
		free(t);
		return rc;
	}
	x->tx_inflight++;
	if (cb == NULL)
		osd->store_pending++; /* callers with a callback count their own */
	return 0;
}

int osd_pgx_submit(struct osd *osd, struct osd_pgx *x, struct store_tx *tx, store_commit_cb cb,
		   void *arg)
{
	return osd_pgx_submit_ex(osd, x, tx, cb, arg, NULL);
}

/* ------------------------------------------------------------------ hooks */

static int osd_pg_version_attr(struct store_tx *tx, uint64_t pgk, const char *name, uint64_t v)
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	return store_tx_setattr(tx, pgk, name, OSD_ATTR_VERSION, b, sizeof(b));
}

int osd_pg_obj_version(struct osd *osd, uint64_t pgk, const char *name, uint64_t *v_out)
{
	uint8_t b[8];
	size_t len;
	uint64_t v = 0;
	int rc = store_getattr(osd->store, pgk, name, OSD_ATTR_VERSION, b, sizeof(b), &len);

	if (rc != 0)
		return rc;
	if (len != 8)
		return -EBADMSG;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	*v_out = v;
	return 0;
}

/*
 * The data part of a record's transaction, shared by the primary (its own
 * op), replicas (ring records) and recovery targets (pushes).
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
			rc = store_tx_write(tx, pgk, h->name, h->offset, h->length, data);
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
			rc = store_tx_write(tx, pgk, h->name, h->offset, h->length, data);
		if (rc == 0 && h->op == OSD_REC_PUSH)
			return 0; /* the version is set with the last chunk */
		break;
	default:
		return -EINVAL;
	}
	if (rc == 0)
		rc = osd_pg_version_attr(tx, pgk, h->name, h->version);
	return rc;
}

int osd_pg_op_tx(struct osd *osd, struct osd_pg *pg, struct store_tx *tx,
		 const struct osd_rec_hdr *h, const void *data, const void *entry, size_t len)
{
	struct osd_pgx *x = osd_pgx_get(osd, pg->pool, pg->pg);
	int rc;

	if (x == NULL)
		return -ENOMEM;
	rc = osd_pg_rec_tx(osd, h, data, tx);
	if (rc == 0)
		rc = osd_pgx_log_tx(osd, x, tx, h->op, h->version, h->name, entry, len);
	return rc;
}

int osd_pg_op_submit(struct osd *osd, struct osd_pg *pg, struct store_tx *tx, store_commit_cb cb,
		     void *arg)
{
	struct osd_pgx *x = osd_pgx_get(osd, pg->pool, pg->pg);

	return x == NULL ? -ENOMEM : osd_pgx_submit(osd, x, tx, cb, arg);
}

/*
 * A ring record on a replica or recovery target: refused (-ESTALE, acked
 * as a failure) when it belongs to an interval older than the one this
 * OSD was last queried for, so an old primary's late records cannot
 * change a copy after it reported its state to the new primary.
 */
int osd_pg_rec_apply(struct osd *osd, const struct osd_rec_hdr *h, const void *rec, uint32_t hl,
		     const void *data, store_commit_cb cb, void *arg)
{
	struct osd_pgx *x = osd_pgx_get(osd, h->pool, h->pg);
	bool push = h->op == OSD_REC_PUSH || h->op == OSD_REC_PUSH_LAST || h->op == OSD_REC_PUSH_RM;
	struct store_tx *tx = NULL;
	int rc;

	if (x == NULL)
		return -ENOMEM;
	if (h->epoch < x->fence)
		return -ESTALE;
	rc = store_tx_create(&tx);
	if (rc == 0)
		rc = osd_pg_rec_tx(osd, h, data, tx);
	if (rc == 0 && !push)
		rc = osd_pgx_log_tx(osd, x, tx, h->op, h->version, h->name, rec, hl);
	/* a PUSH_RM of an object we do not have: the store refuses an empty transaction */
	if (rc == 0 && h->op == OSD_REC_PUSH_RM)
		rc = osd_pgx_info_tx(osd, x, tx);
	if (rc == 0)
		rc = osd_pgx_submit_ex(osd, x, tx, cb, arg,
				       h->op == OSD_REC_PUSH_LAST || h->op == OSD_REC_PUSH_RM
					   ? h->name
					   : NULL);
	if (rc != 0 && tx != NULL)
		store_tx_destroy(tx);
	return rc;
}

bool osd_pg_io_ready(struct osd *osd, struct osd_pg *pg)
{
	struct osd_pgx *x = pg->x;

	(void)osd;
	/* only a primary gates I/O; READ_LOCAL on any OSD is a debug read of its copy */
	return x == NULL || !x->primary || x->phase == OSD_PH_ACTIVE;
}

bool osd_pg_msg_recv(struct osd_conn *conn, const void *buf, size_t len)
{
	static __thread struct proto_msg msg;
	struct proto_hdr hdr;
	char who[96];

	const uint8_t *b = buf;

	/* proto frames start with "WEFT"; the replication messages with "WRPL" */
	if (len < 4 || (b[0] | b[1] << 8 | b[2] << 16 | (uint32_t)b[3] << 24) != PROTO_MAGIC)
		return false;
	snprintf(who, sizeof(who), "%s peer %s", conn->osd->name, fab_ep_peer_addr(conn->ep));
	if (proto_frame_decode(buf, len, conn->osd->msg_size, who, NULL, &hdr, &msg) != 0) {
		conn->failed = true;
		return true;
	}
	switch (msg.type) {
	case PROTO_PG_QUERY:
	case PROTO_PG_INFO:
	case PROTO_PG_LOG_REQ:
	case PROTO_PG_LOG:
	case PROTO_PG_ACTIVATE:
	case PROTO_PG_DELETE:
		osd_peer_msg(conn, msg.type, &msg.pg);
		break;
	case PROTO_PG_PULL:
	case PROTO_PG_RECOVERED:
	case PROTO_PG_SCAN_REQ:
	case PROTO_PG_SCAN:
		osd_recovery_msg(conn, msg.type, &msg.pg);
		break;
	default:
		log_warn("osd", "%s: unexpected %s message on the cluster network, closing", who,
			 proto_type_name(msg.type));
		conn->failed = true;
	}
	return true;
}

void osd_pg_map_changed(struct osd *osd)
{
	osd_peer_map_changed(osd);
	osd_peer_pi_map_save(osd);
}

void osd_pg_tick(struct osd *osd)
{
	static uint64_t next_stats;
	uint64_t now = clock_now_ms();

	osd_peer_tick(osd);
	osd_recovery_tick(osd);
	osd_scrub_tick(osd);
	if (osd->booted && now >= next_stats) {
		next_stats = now + 1000;
		osd_pg_stats_send(osd);
	}
}

static bool osd_stats_inflight;

/*
 * The answer to PG_STATS carries what operators asked of our PGs:
 * {"cmds": [{"pool": 1, "pg": 3, "op": "scrub|deep-scrub|repair"}]}.
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
	json_array_foreach(cmds, i, c) {
		json_t *pool = json_object_get(c, "pool"), *pg = json_object_get(c, "pg");
		const char *op = json_string_value(json_object_get(c, "op"));

		if (json_is_integer(pool) && json_is_integer(pg) && op != NULL)
			osd_scrub_want(osd, (uint32_t)json_integer_value(pool),
				       (uint32_t)json_integer_value(pg), op);
		else
			log_warn("osd", "%s: malformed PG command from the mons ignored", osd->name);
	}
	json_decref(root);
}

/* Every second: the state of each PG this OSD leads, to the monitors. */
int osd_pg_stats_send(struct osd *osd)
{
	struct proto_msg m = {.type = PROTO_PG_STATS};
	struct proto_enc enc;
	uint8_t *buf = NULL;
	size_t cap = 0, len;
	uint32_t n = 0;
	int rc;

	if (osd_stats_inflight)
		return 0; /* one report at a time; monc fails it after 5 s */
	for (int pass = 0; pass < 2; pass++) {
		proto_enc_init(&enc, buf, cap);
		n = 0;
		for (unsigned int b = 0; b < OSD_PG_BUCKETS; b++) {
			for (struct osd_pg *pg = osd->pgs[b]; pg; pg = pg->hnext) {
				struct osd_pgx *x = pg->x;
				struct proto_pg_stat s = {0};

				if (x == NULL || !x->primary || n == PROTO_PG_ENTRIES_MAX)
					continue;
				s.pool = pg->pool;
				s.pg = pg->pg;
				s.state = x->state;
				s.same_since = x->same_since;
				s.last_update = x->last_update;
				s.objects = x->objects;
				s.missing = osd_recovery_missing(x);
				s.missing_bytes = s.missing ? osd_recovery_missing_bytes(osd, x) : 0;
				s.inconsistent = x->inconsistent;
				s.last_scrub = x->last_scrub;
				s.unfound = x->missing.n > 0 ? x->unfound : 0;
				if (x->phase == OSD_PH_DOWN) {
					s.nblocked = x->nblocked;
					memcpy(s.blocked, x->blocked, sizeof(s.blocked));
				}
				s.recovered_objects = osd->rec_objects;
				s.recovered_bytes = osd->rec_bytes;
				proto_pg_stat_put(&enc, &s);
				n++;
			}
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
	m.pg_stats.osd = osd->id;
	m.pg_stats.epoch = osd->map.epoch;
	m.pg_stats.count = n;
	m.pg_stats.entries = buf;
	m.pg_stats.entries_len = (uint32_t)len;
	rc = monc_request(osd->monc, &m, 5000, osd_pg_stats_cb, osd);
	if (rc == 0)
		osd_stats_inflight = true;
	free(buf);
	return rc;
}

void osd_pgx_free(struct osd_pgx *x)
{
	for (unsigned int i = 0; i < x->nm; i++) {
		pg_set_clear(&x->m[i].missing);
		free(x->m[i].bf_pos);
		free(x->m[i].bf_remote);
	}
	pg_set_clear(&x->missing);
	free(x->logv);
	free(x);
}
