/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PG log and info (docs/recovery.md, "PG log"). The log lives in
 * memory, whole: every entry after the tail, in version order, each
 * {version, op, object name}, rollback markers included (a marker keeps
 * the name: the object must be made equal to the authoritative copy
 * again, also after a restart). The store holds the same entries (keyed by
 * version, written in the transaction of the change they describe) and the
 * info; the OSD loads both at start (pg_load, pg_load_entry, pg_loaded).
 * Every change goes out as a `struct pg_txn` the environment persists.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osd/pg/pg_int.h"
#include "proto/codec.h"

#define PG_INFO_VER	   3 /* 3: + since, born; 2: + past intervals; 1 and 2 are still read */
#define PG_INFO_F_COMPLETE 0x1u
#define PG_INFO_F_BACKFILL 0x2u

void pg_logf(struct pg *pg, enum pg_log_level lv, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	n = snprintf(msg, sizeof(msg), "pg %u.%x: ", pg->pool, pg->id);
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	pg->env->ops->log(pg->env->arg, pg, lv, msg);
}

uint64_t pg_now(const struct pg *pg)
{
	return pg->env->ops->now_ms(pg->env->arg);
}

bool pg_osd_up(const struct pg *pg, int32_t osd)
{
	return osd >= 0 && pg->env->ops->osd_up(pg->env->arg, osd);
}

struct pg *pg_create(const struct pg_env *env, uint32_t pool, uint32_t id)
{
	struct pg *pg = calloc(1, sizeof(*pg));

	if (pg == NULL)
		return NULL;
	pg->env = env;
	pg->pool = pool;
	pg->id = id;
	pg->auth = -1;
	pg->base = -1;
	pg->fetch = -1;
	pg->stray_primary = -1;
	pg_tick_want(pg);
	return pg;
}

void pg_log_free(struct pg_log *l)
{
	pg_log_clear(l);
	free(l->e);
	memset(l, 0, sizeof(*l));
}

void pg_free(struct pg *pg)
{
	if (pg == NULL)
		return;
	pg_peer_reset(pg);
	free(pg->p);
	pg_scrub_stop(pg);
	pg_crc_cancel(pg); /* a member's deep SCAN answer */
	pg_act_reset(pg);
	pg_log_free(&pg->log);
	free(pg->act_ent);
	free(pg->fe);
	pg_set_clear(&pg->missing);
	free(pg->txn.put);
	free(pg->txn.remove);
	free(pg);
}

/* ------------------------------------------------------------------ log */

struct pg_entry *pg_log_at(const struct pg_log *l, uint32_t i)
{
	return &l->e[l->head + i];
}

/* Index of the first entry with version >= v. */
static uint32_t pg_log_lower(const struct pg_log *l, uint64_t v)
{
	uint32_t lo = 0, hi = l->n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (pg_log_at(l, mid)->v < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int pg_log_find(const struct pg_log *l, uint64_t v)
{
	uint32_t i = pg_log_lower(l, v);

	return i < l->n && pg_log_at(l, i)->v == v ? (int)i : -1;
}

/* The entry of version v that names `name` (any when NULL), rollback markers too. */
static const struct pg_entry *pg_log_get(const struct pg_log *l, uint64_t v, const char *name)
{
	int i = pg_log_find(l, v);
	const struct pg_entry *e = i >= 0 ? pg_log_at(l, (uint32_t)i) : NULL;

	return e != NULL && (name == NULL || !strcmp(e->name, name)) ? e : NULL;
}

bool pg_log_has(const struct pg_log *l, uint64_t v, const char *name)
{
	const struct pg_entry *e = pg_log_get(l, v, name);

	return e != NULL && e->op != PG_OP_ROLLBACK;
}

bool pg_log_has_rollback(const struct pg_log *l, uint64_t v, const char *name)
{
	const struct pg_entry *e = pg_log_get(l, v, name);

	return e != NULL && e->op == PG_OP_ROLLBACK;
}

static int pg_log_room(struct pg_log *l)
{
	if (l->head + l->n < l->cap)
		return 0;
	if (l->head > l->cap / 4) {
		memmove(l->e, l->e + l->head, l->n * sizeof(*l->e));
		l->head = 0;
		return 0;
	}
	{
		uint32_t cap = l->cap ? l->cap * 2 : 64;
		struct pg_entry *n = realloc(l->e, cap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		l->e = n;
		l->cap = cap;
	}
	return 0;
}

struct pg_entry *pg_log_put(struct pg_log *l, uint64_t v, uint16_t op, const char *name)
{
	uint32_t i = pg_log_lower(l, v);
	struct pg_entry *e;
	char *nm;

	if (i < l->n && pg_log_at(l, i)->v == v) {
		e = pg_log_at(l, i);
		if (strcmp(e->name, name) != 0) {
			nm = strdup(name);
			if (nm == NULL)
				return NULL;
			free(e->name);
			e->name = nm;
		}
		e->op = op;
		return e;
	}
	nm = strdup(name);
	if (nm == NULL || pg_log_room(l) != 0) {
		free(nm);
		return NULL;
	}
	e = pg_log_at(l, i);
	memmove(e + 1, e, (l->n - i) * sizeof(*e));
	l->n++;
	*e = (struct pg_entry){v, op, nm};
	return e;
}

void pg_log_trim(struct pg_log *l, uint64_t upto)
{
	while (l->n > 0 && l->e[l->head].v <= upto) {
		free(l->e[l->head].name);
		l->head++;
		l->n--;
	}
	if (l->n == 0)
		l->head = 0;
}

void pg_log_clear(struct pg_log *l)
{
	pg_log_trim(l, UINT64_MAX);
}

const struct pg_entry *pg_log_newest(const struct pg_log *l)
{
	for (uint32_t i = l->n; i > 0; i--)
		if (pg_log_at(l, i - 1)->op != PG_OP_ROLLBACK)
			return pg_log_at(l, i - 1);
	return NULL;
}

const struct pg_entry *pg_log_newest_of(const struct pg_log *l, const char *name, uint64_t upto)
{
	for (uint32_t i = pg_log_lower(l, upto == UINT64_MAX ? upto : upto + 1); i > 0; i--) {
		const struct pg_entry *e = pg_log_at(l, i - 1);

		if (e->op != PG_OP_ROLLBACK && !strcmp(e->name, name))
			return e;
	}
	return NULL;
}

/*
 * A copy that rolled back its entry v of name still holds v's content
 * until the object is recovered, so it is not complete at any version
 * from name's last write that stays: last_complete must be below it. Else
 * a copy complete "up to" an authoritative tail that no longer names the
 * object would pass as the base of a backfill scan (pg_merge_base), whose
 * listing then made the rolled-back content the object's truth on every
 * copy rebuilt from it while the others kept the real one (sim_pg seed
 * 37, drawn with osd_scrub_sleep: "DIVERGENT ... after clean"). When the
 * log names no earlier write (it is behind the tail, or the rolled-back
 * one created the object), 0: the copy is then rebuilt by a scan if it
 * restarts before its recovery ends (pg_loaded), and is never a base.
 */
uint64_t pg_log_rollback_lc(const struct pg_log *l, const char *name, uint64_t v)
{
	const struct pg_entry *p = pg_log_newest_of(l, name, v - 1);

	return p != NULL ? p->v - 1 : 0;
}

/* ------------------------------------------------------------------ txn */

struct pg_txn *pg_txn_begin(struct pg *pg)
{
	struct pg_txn *t = &pg->txn;

	t->nput = 0;
	t->nremove = 0;
	t->trim = 0;
	t->clear = false;
	t->info = false;
	t->token = 0;
	return t;
}

int pg_txn_put(struct pg_txn *t, const struct pg_entry *e)
{
	if (t->nput == t->capput) {
		uint32_t cap = t->capput ? t->capput * 2 : 16;
		struct pg_entry *n = realloc(t->put, cap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		t->put = n;
		t->capput = cap;
	}
	t->put[t->nput++] = *e; /* the name stays the log's */
	return 0;
}

int pg_txn_remove(struct pg_txn *t, const char *name)
{
	if (t->nremove == t->capremove) {
		uint32_t cap = t->capremove ? t->capremove * 2 : 16;
		const char **n = realloc(t->remove, cap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		t->remove = n;
		t->capremove = cap;
	}
	t->remove[t->nremove++] = name;
	return 0;
}

int pg_persist(struct pg *pg, struct pg_txn *t)
{
	int rc;

	t->token = ++pg->tx_token;
	rc = pg->env->ops->persist(pg->env->arg, pg, t);
	if (rc != 0) {
		pg_logf(pg, PG_LOG_ERROR, "persisting the PG state: %s", strerror(-rc));
		return rc;
	}
	pg->tx_inflight++;
	return 0;
}

int pg_persist_info(struct pg *pg)
{
	struct pg_txn *t = pg_txn_begin(pg);

	t->info = true;
	return pg_persist(pg, t);
}

/*
 * Trim past log_max, never above lc: what a copy still misses stays
 * described. A backfill copy is made whole by a scan, not by its log, so its
 * log trims like the primary's (else it grows for the whole backfill), but
 * keeps what a copy that could rebuild it may still miss: a primary's, what
 * its base misses (pg_merge_trim_floor); a member's, the floor its ACTIVATE
 * named (pg_merge_member_floor). Up to PG_TRIM_FLOOR_MAX times log_max.
 */
#define PG_TRIM_FLOOR_MAX 8u
static void pg_log_maybe_trim(struct pg *pg, struct pg_txn *t)
{
	uint32_t max = pg->env->log_max ? pg->env->log_max : 3000;
	uint64_t upto;

	if (pg->log.n <= max + max / 8)
		return;
	upto = pg_log_at(&pg->log, pg->log.n - max - 1)->v;
	if (upto > pg->info.lc && !pg->info.backfill)
		upto = pg->info.lc;
	if (pg->info.backfill && pg->log.n <= (uint64_t)max * PG_TRIM_FLOOR_MAX) {
		uint64_t floor = pg->trim_floor ? pg->trim_floor : UINT64_MAX;

		if (pg->primary)
			floor = pg_merge_trim_floor(pg);
		if (upto > floor)
			upto = floor;
	}
	if (upto <= pg->info.tail)
		return;
	pg_log_trim(&pg->log, upto);
	pg->info.tail = upto;
	t->trim = upto;
	t->info = true;
}

int pg_log_append_tx(struct pg *pg, uint64_t v, uint16_t op, const char *name,
		     struct pg_txn *t)
{
	bool complete = pg->info.lc >= pg->info.lu && !pg->info.backfill;
	const struct pg_entry *e = pg_log_put(&pg->log, v, op, name);

	if (e == NULL)
		return -ENOMEM;
	if (v > pg->info.lu)
		pg->info.lu = v;
	if (complete)
		pg->info.lc = pg->info.lu;
	else
		t->info = true; /* an incomplete copy keeps its lc: the info says so */
	pg_log_maybe_trim(pg, t);
	return pg_txn_put(t, pg_log_at(&pg->log, (uint32_t)pg_log_find(&pg->log, v)));
}

/* ----------------------------------------------------------------- info */

void pg_info_encode(const struct pg *pg, struct proto_enc *enc)
{
	uint8_t flags = 0;

	if (pg->info.lc >= pg->info.lu)
		flags |= PG_INFO_F_COMPLETE;
	if (pg->info.backfill)
		flags |= PG_INFO_F_BACKFILL;
	proto_enc_put_u8(enc, PG_INFO_VER);
	proto_enc_put_u8(enc, flags);
	proto_enc_put_u64(enc, pg->info.lu);
	proto_enc_put_u64(enc, pg->info.tail);
	proto_enc_put_u64(enc, pg->info.lc);
	proto_enc_put_u32(enc, pg->info.les);
	proto_enc_put_u32(enc, pg->info.since);
	proto_enc_put_u32(enc, pg->info.born);
	pg_pi_encode(&pg->info.pi, enc);
}

int pg_info_decode(const void *buf, size_t len, struct pg_info *out)
{
	struct pg_info in;
	struct proto_dec dec;
	uint8_t ver = 0, flags = 0;

	memset(&in, 0, sizeof(in));
	proto_dec_init(&dec, buf, len, "pginfo", NULL);
	proto_dec_get_u8(&dec, "ver", &ver);
	proto_dec_get_u8(&dec, "flags", &flags);
	proto_dec_get_u64(&dec, "last_update", &in.lu);
	proto_dec_get_u64(&dec, "tail", &in.tail);
	proto_dec_get_u64(&dec, "last_complete", &in.lc);
	proto_dec_get_u32(&dec, "les", &in.les);
	if (ver >= 3) {
		proto_dec_get_u32(&dec, "since", &in.since);
		proto_dec_get_u32(&dec, "born", &in.born);
	} else {
		in.since = in.les; /* active then: it has followed the PG since at least */
	}
	if (ver >= 2 && dec.err == 0)
		pg_pi_decode(&dec, &in.pi);
	if (proto_dec_finish(&dec) != 0 || ver < 1 || ver > PG_INFO_VER)
		return -EBADMSG;
	in.backfill = (flags & PG_INFO_F_BACKFILL) != 0;
	if (flags & PG_INFO_F_COMPLETE)
		in.lc = in.lu;
	*out = in;
	return 0;
}

void pg_load(struct pg *pg, const struct pg_info *info)
{
	pg_log_clear(&pg->log);
	pg->info = *info;
}

int pg_load_entry(struct pg *pg, uint64_t v, uint16_t op, const char *name)
{
	if (v <= pg->info.tail)
		return 0; /* trimmed in the same transaction that wrote the info */
	return pg_log_put(&pg->log, v, op, name) == NULL ? -ENOMEM : 0;
}

void pg_loaded(struct pg *pg)
{
	const struct pg_entry *e = pg_log_newest(&pg->log);
	bool complete = pg->info.lc >= pg->info.lu;

	pg_tick_want(pg);
	/* a complete copy writes its info only on trims: the log has the newest entry */
	if (e != NULL && e->v > pg->info.lu) {
		pg->info.lu = e->v;
		if (complete)
			pg->info.lc = e->v;
	}
	if (pg->info.lu < pg->info.tail)
		pg->info.lu = pg->info.tail;
	if (pg->info.lc > pg->info.lu)
		pg->info.lc = pg->info.lu;
	if (pg->info.lc < pg->info.tail && !pg->info.backfill) {
		/* the log no longer names what this copy misses: only a scan can tell */
		pg_logf(pg, PG_LOG_WARN, "last_complete %llx is behind the log's tail %llx: the "
					 "copy is rebuilt by backfill",
			(unsigned long long)pg->info.lc, (unsigned long long)pg->info.tail);
		pg->info.backfill = true;
	}
}

bool pg_has_copy(const struct pg *pg)
{
	return pg->info.lu != 0 || pg->info.tail != 0 || pg->log.n != 0 || pg->info.backfill;
}

/* --------------------------------------------------------------- messages */

struct proto_pg pg_hdr(const struct pg *pg)
{
	struct proto_pg m;

	memset(&m, 0, sizeof(m));
	m.pool = pg->pool;
	m.pg = pg->id;
	m.epoch = pg->same_since ? pg->same_since : 1;
	return m;
}

void pg_send(struct pg *pg, int32_t to, uint16_t type, const struct proto_pg *m)
{
	if (to < 0 || to == pg->env->self)
		return;
	pg->env->ops->send(pg->env->arg, pg, to, type, m);
}

void pg_info_msg(struct pg *pg, struct proto_pg *m)
{
	static __thread uint8_t buf[PG_PI_MAX * PROTO_PG_IV_ENC_MAX];
	struct proto_enc enc;
	size_t len = 0;

	*m = pg_hdr(pg);
	m->last_update = pg->info.lu;
	m->tail = pg->info.tail < pg->info.lu ? pg->info.tail : pg->info.lu;
	m->last_complete = pg->info.lc;
	m->les = pg->info.les;
	m->since = pg->info.since;
	m->born = pg->info.born;
	if (!pg_has_copy(pg))
		m->flags |= PROTO_PG_INFO_F_EMPTY;
	if (pg->info.backfill)
		m->flags |= PROTO_PG_INFO_F_BACKFILL;
	proto_enc_init(&enc, buf, sizeof(buf));
	for (uint32_t i = 0; i < pg->info.pi.n; i++)
		proto_pg_interval_put(&enc, &pg->info.pi.e[i]);
	if (proto_enc_finish(&enc, &len) != 0)
		return; /* sized for PG_PI_MAX */
	m->count = pg->info.pi.n;
	m->entries = buf;
	m->entries_len = (uint32_t)len;
}
