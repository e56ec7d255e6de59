/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sim_pg: a deterministic simulation of the PG state machine (osd/pg/) in a
 * cluster of OSDs, in the spirit of FoundationDB's simulator. Everything
 * but the state machine is simulated in memory and driven by one seeded
 * random generator: a monitor with a map history (OSDs up/down, in/out;
 * placement by a hash rank of the up+in OSDs), maps reaching each OSD at
 * its own time, a network of per-connection FIFO queues (PG messages go
 * through the real wire codec), stores whose transactions commit in order
 * after a random delay and vanish with a crash, the op path of a primary
 * (order, replicate, ack on every member's commit) and a client writing and
 * removing objects, one op per object at a time, remembering what was
 * acknowledged. Crashes (single and double), restarts (replaying the maps
 * missed, booting in a new epoch), out/in and map delays happen at random.
 * Then everything comes back and the run must settle:
 *
 *   - every PG active+clean within a bound;
 *   - on every member, every object as the client last had it
 *     acknowledged (or as a later op left it, which may have happened);
 *   - every member holds exactly what the primary holds; no stray copy left;
 *   - at any moment, every acknowledged write is durable on some OSD.
 *
 *   sim_pg [--seed N] [--runs N] [--seconds S] [--steps N] [-v]
 *   sim_pg --scenarios all|NAME [--seed N] [--runs N] [-v]   (sim_pg_scn.c)
 *
 * Prints the seed of each failing run (replay it with --seed N --runs 1 -v).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "osd/pg/pg.h"
#include "proto/codec.h"
#include "proto/proto.h"

#include "tests/sim_pg.h"

uint64_t s_rng;
uint32_t s_hold_down;
uint64_t s_net_held;
uint32_t s_map_held;
int s_fail_rec_osd = -1;
uint64_t s_fail_rec_count;
int s_drop_act_osd = -1;
uint64_t s_drop_act_count;
/*
 * --map-saved-at-once: the model before 1c3c77f, where a map was saved the
 * moment it was processed, ahead of the PGs' transactions still queued. A
 * real OSD cannot do that (seed 102761 lost a write in that model only), but
 * it is the model the seeds pinned in tests/osd.cmake were found in: with
 * it they replay the runs that failed, so undoing a fix fails them again.
 */
static bool s_map_saved_at_once;
bool s_verbose;
uint64_t s_now; /* simulated ms */
uint64_t s_step;

static uint64_t rnd(void)
{
	s_rng ^= s_rng << 13;
	s_rng ^= s_rng >> 7;
	s_rng ^= s_rng << 17;
	return s_rng;
}

unsigned int rn(unsigned int n)
{
	return n ? (unsigned int)(rnd() % n) : 0;
}

bool s_failed;
char s_why[512];

int s_fail(const char *fmt, ...)
{
	va_list ap;

	if (s_failed)
		return -1;
	s_failed = true;
	va_start(ap, fmt);
	vsnprintf(s_why, sizeof(s_why), fmt, ap);
	va_end(ap);
	return -1;
}



struct s_osd s_osd[S_OSDS];
static struct s_q s_net[S_OSDS][S_OSDS];
static struct s_map *s_maps;
static uint32_t s_nmaps, s_capmaps;
#define S_OPS_MAX (1u << 16)
struct s_op *s_opv;
uint32_t s_nops;
static int s_busy_name[S_PGS][S_NAMES]; /* op index + 1 of the name's op in flight */
static uint64_t s_acked_writes, s_events, s_msgs;
/* PG ticks run, and PG ticks a walk of every PG would have run (osd_pgtick.c's saving) */
static uint64_t s_pg_ticks, s_pg_tick_slots;
/* env calls that do something (a send, a transaction, a push, a log line...) */
static uint64_t s_effects;

/* Placement: the up+in OSDs ranked by a hash of (pg, osd); the first S_SIZE. */
unsigned int s_acting(const struct s_map *m, int pgi, int32_t *out)
{
	uint32_t key[S_OSDS];
	int idx[S_OSDS];
	unsigned int n = 0;

	for (int o = 0; o < S_OSDS; o++) {
		uint32_t h = 2166136261u;

		h = (h ^ (uint32_t)(pgi + 1)) * 16777619u;
		h = (h ^ (uint32_t)(o + 7)) * 16777619u;
		h ^= h >> 13;
		h *= 0x5bd1e995u;
		key[o] = h;
		idx[o] = o;
	}
	for (int i = 0; i < S_OSDS; i++)
		for (int j = i + 1; j < S_OSDS; j++)
			if (key[idx[j]] > key[idx[i]]) {
				int t = idx[i];

				idx[i] = idx[j];
				idx[j] = t;
			}
	for (int i = 0; i < S_OSDS && n < S_SIZE; i++)
		if (m->up[idx[i]] && m->in[idx[i]])
			out[n++] = idx[i];
	return n;
}

static const struct s_map *s_map_at(uint32_t epoch)
{
	return epoch >= 1 && epoch <= s_nmaps ? &s_maps[epoch - 1] : NULL;
}

const struct s_map *s_map_cur(void)
{
	return &s_maps[s_nmaps - 1];
}

static void s_map_push(const struct s_map *m)
{
	if (s_nmaps == s_capmaps) {
		s_capmaps = s_capmaps ? s_capmaps * 2 : 64;
		s_maps = realloc(s_maps, s_capmaps * sizeof(*s_maps));
	}
	s_maps[s_nmaps] = *m;
	s_maps[s_nmaps].epoch = s_nmaps + 1;
	s_nmaps++;
	TRACE("map epoch %u", s_nmaps);
}

void s_mark(int o, bool up, bool in)
{
	struct s_map m = *s_map_cur();

	if (m.up[o] == up && m.in[o] == in)
		return;
	m.up[o] = up;
	m.in[o] = in;
	s_map_push(&m);
}

/* ----------------------------------------------------------------- network */

static void s_q_push(struct s_msg *m)
{
	struct s_q *q = &s_net[m->from][m->to];

	m->next = NULL;
	if (q->tail)
		q->tail->next = m;
	else
		q->head = m;
	q->tail = m;
	q->n++;
	s_msgs++;
}

static void s_q_drop(int a, int b)
{
	struct s_q *q = &s_net[a][b];

	while (q->head) {
		struct s_msg *m = q->head;

		q->head = m->next;
		free(m->frame);
		free(m);
	}
	q->tail = NULL;
	q->n = 0;
}

/* Ring records of PG g from `from` still on their way are lost (refused, as by a fence). */
unsigned int s_net_drop_recs(int from, int g)
{
	unsigned int n = 0;

	for (int b = 0; b < S_OSDS; b++) {
		struct s_q *q = &s_net[from][b];
		struct s_msg **pp = &q->head;

		q->tail = NULL;
		while (*pp) {
			struct s_msg *m = *pp;

			if (m->kind == S_M_REC && m->pgi == g) {
				*pp = m->next;
				q->n--;
				free(m->frame);
				free(m);
				n++;
				continue;
			}
			q->tail = m;
			pp = &m->next;
		}
	}
	return n;
}

/* PG messages of PG g from `from` to `to` still on their way. */
unsigned int s_net_count(int from, int to, int g)
{
	unsigned int n = 0;

	for (const struct s_msg *m = s_net[from][to].head; m; m = m->next)
		n += m->kind == S_M_PG && m->pgi == g;
	return n;
}

static struct s_msg *s_msg_new(enum s_mkind k, int from, int to, int pgi)
{
	struct s_msg *m = calloc(1, sizeof(*m));

	m->kind = k;
	m->from = from;
	m->to = to;
	m->pgi = pgi;
	return m;
}

/* ------------------------------------------------------------------ stores */

static int s_name_idx(const char *name)
{
	int i;

	if (sscanf(name, "o%d", &i) != 1 || i < 0 || i >= S_NAMES)
		return -1;
	return i;
}

static void s_name(int i, char *buf, size_t cap)
{
	snprintf(buf, cap, "o%d", i);
}

static void s_tx_queue(struct s_osd *o, struct s_tx *t)
{
	/* now and then a slow store (a checkpoint, a busy disk): all behind it wait */
	t->commit_at = s_now + (rn(64) == 0 ? 200 + rn(800) : rn(40));
	t->next = NULL;
	if (o->txq_tail)
		o->txq_tail->next = t;
	else
		o->txq = t;
	o->txq_tail = t;
}

static void s_tx_free(struct s_tx *t)
{
	free(t->put);
	free(t);
}

static struct s_tx *s_tx_from(struct pg *pg, const struct pg_txn *pt, enum s_txkind k, int pgi)
{
	struct s_tx *t = calloc(1, sizeof(*t));

	t->kind = k;
	t->pgi = pgi;
	t->token = pt ? pt->token : 0;
	t->oname = -1;
	if (pt == NULL)
		return t;
	t->put = calloc(pt->nput ? pt->nput : 1, sizeof(*t->put));
	for (uint32_t i = 0; i < pt->nput; i++) {
		t->put[i].v = pt->put[i].v;
		t->put[i].op = pt->put[i].op;
		snprintf(t->put[i].name, sizeof(t->put[i].name), "%s", pt->put[i].name);
	}
	t->nput = pt->nput;
	t->trim = pt->trim;
	t->clear = pt->clear;
	t->info = pt->info;
	if (pt->info) {
		struct proto_enc enc;

		proto_enc_init(&enc, t->infob, sizeof(t->infob));
		pg_info_encode(pg, &enc);
		proto_enc_finish(&enc, &t->info_len);
	}
	for (uint32_t i = 0; i < pt->nremove && t->nrm < S_NAMES; i++)
		t->rmnames[t->nrm++] = s_name_idx(pt->remove[i]);
	return t;
}

static void s_spg_put(struct s_spg *sp, const struct s_lent *e)
{
	uint32_t i;

	for (i = 0; i < sp->nlog && sp->log[i].v < e->v; i++)
		;
	if (i < sp->nlog && sp->log[i].v == e->v) {
		sp->log[i] = *e;
		return;
	}
	if (sp->nlog == sp->caplog) {
		sp->caplog = sp->caplog ? sp->caplog * 2 : 64;
		sp->log = realloc(sp->log, sp->caplog * sizeof(*sp->log));
	}
	memmove(&sp->log[i + 1], &sp->log[i], (sp->nlog - i) * sizeof(*sp->log));
	sp->log[i] = *e;
	sp->nlog++;
}

/* Apply a committed transaction to the persisted state. */
static void s_tx_apply(struct s_osd *o, struct s_tx *t)
{
	struct s_spg *sp = &o->st.pg[t->pgi];

	if (t->kind == S_TX_MAP) {
		if (t->map_epoch > o->st.epoch)
			o->st.epoch = t->map_epoch;
		return;
	}
	if (t->kind == S_TX_DESTROY) {
		struct s_obj keep[S_NAMES];

		memcpy(keep, sp->obj, sizeof(keep));
		for (int i = 0; i < t->nrm; i++)
			memset(&keep[t->rmnames[i]], 0, sizeof(keep[0]));
		free(sp->log);
		memset(sp, 0, sizeof(*sp));
		memcpy(sp->obj, keep, sizeof(keep));
		return;
	}
	if (t->clear)
		sp->nlog = 0;
	for (uint32_t i = 0; i < t->nput; i++)
		s_spg_put(sp, &t->put[i]);
	if (t->trim) {
		uint32_t k = 0;

		while (k < sp->nlog && sp->log[k].v <= t->trim)
			k++;
		memmove(sp->log, sp->log + k, (sp->nlog - k) * sizeof(*sp->log));
		sp->nlog -= k;
	}
	if (t->info) {
		memcpy(sp->info, t->infob, t->info_len);
		sp->info_len = t->info_len;
		sp->has_info = true;
	}
	if (t->oname >= 0)
		sp->obj[t->oname] = t->oval;
	for (int i = 0; i < t->nrm; i++)
		if (t->rmnames[i] >= 0)
			memset(&sp->obj[t->rmnames[i]], 0, sizeof(sp->obj[0]));
}

/* --------------------------------------------------------------- env ops */

static void e_send(void *arg, struct pg *pg, int32_t to, uint16_t type, const struct proto_pg *m)
{
	struct s_osd *o = arg;
	struct proto_msg msg;
	struct s_msg *sm;
	uint8_t *buf;
	size_t len;
	int pgi = (int)pg->id;

	s_effects++; /* what a tick did (s_step_once) */
	if (to < 0 || to >= S_OSDS || !o->up)
		return;
	if (type == PROTO_PG_ACTIVATE && !(m->flags & PROTO_PG_ACT_F_APPLIED) &&
	    to == s_drop_act_osd) {
		/* as a connection that failed right after the send would lose it */
		TRACE("osd.%d -> osd.%d pg %d ACTIVATE e%u: lost", o->id, to, pgi, m->epoch);
		s_drop_act_osd = -1;
		s_drop_act_count++;
		return;
	}
	memset(&msg, 0, sizeof(msg));
	msg.type = type;
	msg.pg = *m;
	msg.pg.from = (uint32_t)o->id;
	buf = malloc(S_MSG);
	if (proto_frame_encode(&msg, 0, buf, S_MSG, &len) != 0) {
		s_fail("osd.%d pg %d: %s does not encode", o->id, pgi, proto_type_name(type));
		free(buf);
		return;
	}
	sm = s_msg_new(S_M_PG, o->id, to, pgi);
	sm->frame = buf;
	sm->len = len;
	TRACE("osd.%d -> osd.%d pg %d %s e%u", o->id, to, pgi, proto_type_name(type), m->epoch);
	s_q_push(sm);
}

static int e_persist(void *arg, struct pg *pg, const struct pg_txn *t)
{
	struct s_osd *o = arg;

	s_effects++; /* what a tick did (s_step_once) */
	s_tx_queue(o, s_tx_from(pg, t, S_TX_PG, (int)pg->id));
	return 0;
}

static int e_obj_stat(void *arg, struct pg *pg, const char *name, unsigned int what,
		      struct pg_obj *out)
{
	struct s_osd *o = arg;
	int i = s_name_idx(name);
	const struct s_obj *so;

	if (i < 0)
		return -ENOENT;
	so = &o->st.pg[pg->id].obj[i];
	if (!so->exists)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "%s", name);
	out->version = so->version;
	out->size = 4096;
	if (what & (PG_OBJ_DEEP | PG_OBJ_DIGEST))
		out->crc = out->digest = (uint32_t)(so->content * 2654435761u);
	return 0;
}

/* What reading object i back gives now: its content's crc, as e_obj_stat's digest. */
static uint32_t s_obj_crc(const struct s_osd *o, int g, int i)
{
	const struct s_obj *so = &o->st.pg[g].obj[i];

	return so->exists ? (uint32_t)(so->content * 2654435761u) : PG_OBJ_CRC_BAD;
}

/*
 * Half the reads end at once, half later (a message to ourselves): the
 * crc is taken when the read ends, so an object that changed meanwhile
 * (a fence that let a write through) shows up as inconsistent.
 */
static int e_obj_crc(void *arg, struct pg *pg, const char *name, uint64_t size, uint64_t token,
		     uint32_t *crc_out)
{
	struct s_osd *o = arg;
	int i = s_name_idx(name);
	struct s_msg *m;

	s_effects++; /* what a tick did (s_step_once) */
	(void)size;
	if (i < 0)
		return -ENOENT;
	if (rn(2) == 0) {
		*crc_out = s_obj_crc(o, (int)pg->id, i);
		return 1;
	}
	m = s_msg_new(S_M_CRC, o->id, o->id, (int)pg->id);
	m->v = token;
	m->oname = i;
	s_q_push(m);
	return 0;
}

static int e_obj_list(void *arg, struct pg *pg, const char *after, uint32_t max,
		      unsigned int what, struct pg_obj *out, uint32_t *n_out, bool *last_out)
{
	uint32_t n = 0;
	char name[16];
	int start = 0;

	/* name order: o0 < o1 < o10 < o11 < o2 ... as strcmp says */
	(void)start;
	for (int pass = 0; pass < 1; pass++) {
		const char *order[S_NAMES];
		char names[S_NAMES][16];
		int cnt = 0;

		for (int i = 0; i < S_NAMES; i++) {
			s_name(i, names[i], sizeof(names[i]));
			order[cnt++] = names[i];
		}
		for (int i = 0; i < cnt; i++)
			for (int j = i + 1; j < cnt; j++)
				if (strcmp(order[j], order[i]) < 0) {
					const char *t = order[i];

					order[i] = order[j];
					order[j] = t;
				}
		*last_out = true;
		for (int i = 0; i < cnt; i++) {
			if (after && after[0] && strcmp(order[i], after) <= 0)
				continue;
			struct pg_obj tmp;

			snprintf(name, sizeof(name), "%s", order[i]);
			/* one more than max only tells "not the last": never written to out */
			if (e_obj_stat(arg, pg, name, what, n < max ? &out[n] : &tmp) != 0)
				continue;
			if (n == max) {
				*last_out = false;
				break;
			}
			n++;
		}
	}
	*n_out = n;
	return 0;
}

static int e_push(void *arg, struct pg *pg, int32_t to, const char *name, uint64_t version,
		  uint32_t epoch)
{
	struct s_osd *o = arg;
	int i = s_name_idx(name);
	struct s_msg *m;

	s_effects++; /* what a tick did (s_step_once) */
	if (i < 0 || to < 0 || to >= S_OSDS || to == o->id)
		return -EINVAL;
	m = s_msg_new(S_M_PUSH, o->id, to, (int)pg->id);
	m->oname = i;
	m->oval = o->st.pg[pg->id].obj[i];
	if (m->oval.exists ? m->oval.version != version : version != 0) {
		s_fail("osd.%d pg %u: push of %s asked at v%llx, the store holds v%llx", o->id,
		       pg->id, name, (unsigned long long)version,
		       (unsigned long long)m->oval.version);
		free(m);
		return -EIO;
	}
	m->v = version;
	m->epoch = epoch;
	TRACE("osd.%d -> osd.%d pg %u push %s v%llx", o->id, to, pg->id, name,
	      (unsigned long long)version);
	s_q_push(m);
	return 0;
}

/*
 * Like the OSD's: the objects to remove are listed when the removal is
 * submitted, from what is committed then; one whose transaction is still
 * queued outlives the removal (a stray object after clean, if the machine
 * let that happen).
 */
static int e_destroy(void *arg, struct pg *pg)
{
	struct s_osd *o = arg;
	struct s_tx *t = s_tx_from(pg, NULL, S_TX_DESTROY, (int)pg->id);

	s_effects++; /* what a tick did (s_step_once) */
	for (int k = 0; k < S_NAMES; k++)
		if (o->st.pg[pg->id].obj[k].exists)
			t->rmnames[t->nrm++] = k;
	s_tx_queue(o, t);
	return 0;
}

static void e_kick(void *arg, struct pg *pg)
{
	s_effects++; /* what a tick did (s_step_once) */
	((struct s_osd *)arg)->kick[pg->id] = true;
}

static void s_op_finish(struct s_osd *o, struct s_op *op, int rc);

static void e_interval(void *arg, struct pg *pg)
{
	struct s_osd *o = arg;

	s_effects++; /* what a tick did (s_step_once) */
	for (struct s_op *op = o->ops[pg->id]; op; op = op->next)
		if (op->st == S_OP_ORDERED)
			s_op_finish(o, op, -EAGAIN);
}

static bool e_budget(void *arg, int take)
{
	struct s_osd *o = arg;

	if (take > 0)
		s_effects++; /* a tick that would take one did something */
	if (take < 0) {
		o->budget++;
		return true;
	}
	if (o->budget <= 0)
		return false;
	o->budget--;
	return true;
}

static bool e_scrub_slot(void *arg, int take)
{
	struct s_osd *o = arg;

	if (take > 0)
		s_effects++; /* a tick that would take one did something */
	if (take < 0) {
		o->scrub_busy = false;
		return true;
	}
	if (o->scrub_busy)
		return false;
	o->scrub_busy = true;
	return true;
}

static bool e_range_busy(void *arg, struct pg *pg, const char *after, const char *upto)
{
	struct s_osd *o = arg;

	for (const struct s_op *op = o->ops[pg->id]; op; op = op->next) {
		char name[16];

		if (op->st != S_OP_ORDERED)
			continue;
		s_name(op->oname, name, sizeof(name));
		if ((after == NULL || strcmp(name, after) > 0) &&
		    (upto == NULL || strcmp(name, upto) <= 0))
			return true;
	}
	return false;
}

static bool e_obj_busy(void *arg, struct pg *pg, const char *name)
{
	struct s_osd *o = arg;
	int i = s_name_idx(name);

	return i >= 0 && o->pending[pg->id][i] > 0;
}

/* During the chaos an OSD is "too full" for recovery now and then; never while settling. */
static bool s_space_chaos;

static bool e_space_ok(void *arg, struct pg *pg, int32_t osd, bool urgent)
{
	(void)arg;
	(void)pg;
	if (!s_space_chaos || urgent || getenv("SIM_NO_SPACE"))
		return true;
	return ((s_now / 500) + (uint64_t)osd) % 5 != 0; /* each OSD 1/5 of the time */
}

static bool e_osd_up(void *arg, int32_t id)
{
	struct s_osd *o = arg;
	const struct s_map *m = s_map_at(o->map_epoch);

	return m != NULL && id >= 0 && id < S_OSDS && m->up[id];
}

static bool e_osd_exists(void *arg, int32_t id)
{
	(void)arg;
	return id >= 0 && id < S_OSDS;
}

static uint32_t e_max_osd(void *arg)
{
	(void)arg;
	return S_OSDS;
}

static uint64_t e_now(void *arg)
{
	(void)arg;
	return s_now;
}

static void e_tick_wanted(void *arg, struct pg *pg)
{
	struct s_osd *o = arg;

	o->tick_want[pg->id] = true;
}

static void e_log(void *arg, struct pg *pg, enum pg_log_level lv, const char *msg)
{
	struct s_osd *o = arg;

	s_effects++; /* what a tick did (s_step_once) */
	(void)pg;
	if (s_verbose)
		printf("[%6llu %6llums]   osd.%d %s%s\n", (unsigned long long)s_step,
		       (unsigned long long)s_now, o->id, lv >= PG_LOG_WARN ? "WARN " : "", msg);
}

static const struct pg_env_ops s_env_ops = {
	.send = e_send,
	.persist = e_persist,
	.obj_stat = e_obj_stat,
	.obj_list = e_obj_list,
	.push = e_push,
	.destroy = e_destroy,
	.kick = e_kick,
	.interval = e_interval,
	.budget = e_budget,
	.scrub_slot = e_scrub_slot,
	.obj_busy = e_obj_busy,
	.range_busy = e_range_busy,
	.obj_crc = e_obj_crc,
	.space_ok = e_space_ok,
	.osd_up = e_osd_up,
	.osd_exists = e_osd_exists,
	.max_osd = e_max_osd,
	.now_ms = e_now,
	.tick_wanted = e_tick_wanted,
	.log = e_log,
};

/* --------------------------------------------------------------- OSD life */

static void s_osd_load(struct s_osd *o)
{
	for (int g = 0; g < S_PGS; g++) {
		struct s_spg *sp = &o->st.pg[g];
		struct pg_info info;
		struct pg *pg = pg_create(&o->env, 1, (uint32_t)g);

		memset(&info, 0, sizeof(info));
		if (sp->has_info && pg_info_decode(sp->info, sp->info_len, &info) != 0)
			s_fail("osd.%d pg %d: persisted info does not decode", o->id, g);
		pg_load(pg, &info);
		for (uint32_t i = 0; i < sp->nlog; i++)
			pg_load_entry(pg, sp->log[i].v, sp->log[i].op, sp->log[i].name);
		pg_loaded(pg);
		o->pg[g] = pg;
		o->tick_at[g] = 0; /* a new machine: its first tick at once (pg_create wanted one) */
	}
}

/* This OSD processes map `epoch` (in order). */
static void s_osd_map(struct s_osd *o, uint32_t epoch)
{
	const struct s_map *m = s_map_at(epoch);

	o->map_epoch = epoch;
	if (o->boot_epoch == 0 && m->up[o->id] && epoch > o->incarnation)
		o->boot_epoch = epoch; /* the map of our boot: ops are served from here */
	for (int g = 0; g < S_PGS; g++) {
		int32_t acting[S_SIZE];
		unsigned int n = s_acting(m, g, acting);
		uint32_t upf[S_SIZE];
		struct pg_map pm = {.epoch = epoch, .acting = acting, .n = n, .size = S_SIZE,
				    .min_size = S_MINSIZE, .primary = n ? acting[0] : -1,
				    .primary_up_from = n ? m->up_from[acting[0]] : 0, .up_from = upf};

		for (unsigned int i = 0; i < n; i++)
			upf[i] = m->up_from[acting[i]];

		pg_map(o->pg[g], &pm);
		/* ops of a PG we no longer lead: -ESTALE, the client resends to the new one */
		for (struct s_op *op = o->ops[g]; op; op = op->next)
			if (op->st != S_OP_DONE && (n == 0 || acting[0] != o->id))
				s_op_finish(o, op, -ESTALE);
		o->kick[g] = true;
	}
	/*
	 * The map is saved as weft-osd saves it: a store transaction queued
	 * after the PGs' own (osd_pg_map_save), so a crash never keeps a map
	 * newer than the past intervals its PGs persisted. Saved at once, it
	 * let a restarted OSD take the epochs its PGs never recorded for a
	 * continuation of their last interval (seed 102761: an acknowledged
	 * write LOST, a history the real OSD cannot have).
	 */
	if (o->txq == NULL || s_map_saved_at_once) {
		o->st.epoch = epoch; /* nothing ahead of it (or the old model) */
	} else {
		/* behind the rest, with no random draw of its own (only crashes play otherwise) */
		struct s_tx *t = s_tx_from(NULL, NULL, S_TX_MAP, 0);

		t->map_epoch = epoch;
		o->txq_tail->next = t;
		o->txq_tail = t;
	}
}

static bool s_deliver(struct s_msg *m);

/* Messages held for a newer map, in order per sender, as far as they go now. */
static void s_osd_undefer(struct s_osd *o)
{
	for (int k = 0; k < S_OSDS; k++) {
		struct s_q *d = &o->defer[k];

		while (d->head != NULL && o->up) {
			struct s_msg *m = d->head;

			if (!s_deliver(m))
				break;
			d->head = m->next;
			if (d->head == NULL)
				d->tail = NULL;
			d->n--;
			free(m->frame);
			free(m);
		}
	}
}

void s_osd_crash(struct s_osd *o)
{
	TRACE("CRASH osd.%d", o->id);
	o->up = false;
	for (int g = 0; g < S_PGS; g++) {
		for (struct s_op *op = o->ops[g], *next; op; op = next) {
			next = op->next;
			if (op->st != S_OP_DONE) {
				op->st = S_OP_DONE;
				op->rc = -ETIMEDOUT;
				s_busy_name[op->pgi][op->oname] = 0;
			}
		}
		o->ops[g] = NULL;
		pg_free(o->pg[g]);
		o->pg[g] = NULL;
		o->kick[g] = false;
	}
	while (o->txq) {
		struct s_tx *t = o->txq;

		o->txq = t->next;
		s_tx_free(t);
	}
	memset(o->pending, 0, sizeof(o->pending));
	o->txq_tail = NULL;
	for (int k = 0; k < S_OSDS; k++) {
		s_q_drop(o->id, k);
		s_q_drop(k, o->id);
		{
			struct s_q *d = &o->defer[k];

			while (d->head) {
				struct s_msg *m = d->head;

				d->head = m->next;
				free(m->frame);
				free(m);
			}
			d->tail = NULL;
			d->n = 0;
		}
		{
			struct s_q *d = &s_osd[k].defer[o->id];

			while (d->head) {
				struct s_msg *m = d->head;

				d->head = m->next;
				free(m->frame);
				free(m);
			}
			d->tail = NULL;
			d->n = 0;
		}
	}
}

void s_osd_wipe(struct s_osd *o)
{
	for (int g = 0; g < S_PGS; g++)
		free(o->st.pg[g].log);
	memset(&o->st, 0, sizeof(o->st));
}

void s_osd_start(struct s_osd *o)
{
	uint32_t saved = o->st.epoch;

	TRACE("START osd.%d (saved map epoch %u)", o->id, saved);
	o->up = true;
	o->budget = 2;
	o->scrub_busy = false;
	o->boot_epoch = 0;
	o->incarnation = s_nmaps; /* booting marks it up in a newer epoch */
	o->env = (struct pg_env){.ops = &s_env_ops, .arg = o, .self = o->id, .log_max = 24,
				 .max_chunk = 8, .msg_bytes = 4096, .scrub_ms = 0,
				 .deep_scrub_ms = 0,
				 /* osd_scrub_sleep: batches back to back, or 100-200 ms apart */
				 .scrub_sleep_ms = rn(3) * 100u};
	s_osd_load(o);
	o->map_epoch = 0;
	/* the saved map first, as weft-osd does; the rest arrives like any new map */
	if (saved > 0)
		s_osd_map(o, saved);
	/* boot: the mons mark it up in a new epoch, always */
	{
		struct s_map m = *s_map_cur();

		m.up[o->id] = true;
		m.up_from[o->id] = s_nmaps + 1;
		s_map_push(&m);
	}
}

/* ----------------------------------------------------------------- op path */

static void s_client_done(struct s_op *op, int rc);

static void s_op_finish(struct s_osd *o, struct s_op *op, int rc)
{
	(void)o;
	if (op->st == S_OP_DONE)
		return;
	op->st = S_OP_DONE;
	op->rc = rc;
	s_client_done(op, rc);
}

static void s_op_check(struct s_osd *o, struct s_op *op)
{
	if (op->st == S_OP_ORDERED && op->local_done && op->wait == 0)
		s_op_finish(o, op, 0);
}

static void s_op_order(struct s_osd *o, struct s_op *op)
{
	struct pg *pg = o->pg[op->pgi];
	const struct s_map *m = s_map_at(o->map_epoch);
	int32_t acting[S_SIZE];
	unsigned int n = s_acting(m, op->pgi, acting);
	char name[16];
	struct pg_txn *pt;
	struct s_tx *t;

	if (n < S_MINSIZE || acting[0] != o->id)
		return;
	s_name(op->oname, name, sizeof(name));
	op->v = pg_op_version(pg, o->map_epoch);
	if (pg_op_prepare(pg, op->v, op->remove ? PROTO_OP_REMOVE : PROTO_OP_WRITE_FULL, name,
			  &pt) != 0) {
		s_op_finish(o, op, -ENOMEM);
		return;
	}
	t = s_tx_from(pg, pt, S_TX_OP, op->pgi);
	t->oname = op->oname;
	t->oval = (struct s_obj){!op->remove, op->remove ? 0 : op->v, op->remove ? 0 : op->seq};
	t->op_seq = op->seq;
	s_tx_queue(o, t);
	o->pending[op->pgi][op->oname]++;
	op->st = S_OP_ORDERED;
	op->wait = 0;
	for (unsigned int i = 1; i < n; i++) {
		struct s_msg *r = s_msg_new(S_M_REC, o->id, acting[i], op->pgi);

		r->epoch = o->map_epoch;
		r->v = op->v;
		r->prev = pt->prev;
		r->op = op->remove ? PROTO_OP_REMOVE : PROTO_OP_WRITE_FULL;
		r->oname = op->oname;
		r->oval = t->oval;
		r->op_seq = op->seq;
		s_q_push(r);
		op->wait |= 1u << acting[i];
	}
	TRACE("osd.%d pg %d orders op #%llu %s %s v%llx", o->id, op->pgi,
	      (unsigned long long)op->seq, op->remove ? "remove" : "write", name,
	      (unsigned long long)op->v);
}

/* The PG's queue in arrival order: writes ordered as they become ready. */
static void s_osd_kick(struct s_osd *o, int g)
{
	struct pg *pg = o->pg[g];
	struct s_op **pp;

	o->kick[g] = false;
	if (pg == NULL)
		return;
	/* osd_op_timeout: the client hears of a failure; a write may still happen */
	for (struct s_op *op = o->ops[g]; op; op = op->next)
		if (op->st != S_OP_DONE && s_now - op->start > 5000)
			s_op_finish(o, op, -ETIMEDOUT);
	if (!pg_io_ready(pg) || !pg->primary)
		goto out;
	for (struct s_op *op = o->ops[g]; op; op = op->next) {
		char name[16];

		if (op->st != S_OP_QUEUED)
			continue;
		s_name(op->oname, name, sizeof(name));
		if (!pg_obj_ready(pg, name) || pg_scrub_holds(pg, name))
			break; /* writes keep their order: the rest wait behind it */
		s_op_order(o, op);
		if (op->st != S_OP_ORDERED)
			break;
	}
out:
	/* done ones leave the queue */
	for (pp = &o->ops[g]; *pp;) {
		if ((*pp)->st == S_OP_DONE)
			*pp = (*pp)->next;
		else
			pp = &(*pp)->next;
	}
	/* as osd_pg_kick_pending: budget a push or pull gave back goes on at once */
	if (o->pg[g] != NULL)
		pg_recovery_kicked(o->pg[g]);
}

/* ---------------------------------------------------------------- client */

static void s_client_done(struct s_op *op, int rc)
{
	s_busy_name[op->pgi][op->oname] = 0;
	if (rc == 0) {
		s_acked_writes++;
		TRACE("ACK op #%llu", (unsigned long long)op->seq);
	}
}

uint64_t s_client_issue_at(int g, int k, bool remove)
{
	const struct s_map *m = s_map_cur();
	int32_t acting[S_SIZE];
	unsigned int n = s_acting(m, g, acting);
	struct s_op *op;
	struct s_osd *o;

	if (s_busy_name[g][k] || n == 0)
		return 0;
	o = &s_osd[acting[0]];
	if (!o->up || o->pg[g] == NULL || o->boot_epoch == 0 || o->map_epoch < o->boot_epoch)
		return 0; /* the client would get EAGAIN and come back */
	if (s_nops == S_OPS_MAX)
		return 0;
	op = &s_opv[s_nops];
	memset(op, 0, sizeof(*op));
	op->seq = ++s_nops;
	op->oname = k;
	op->remove = remove;
	op->primary = o->id;
	op->pgi = g;
	op->st = S_OP_QUEUED;
	op->start = s_now;
	s_busy_name[g][k] = (int)op->seq;
	{
		struct s_op **pp = &o->ops[g];

		while (*pp)
			pp = &(*pp)->next;
		*pp = op;
	}
	o->kick[g] = true;
	TRACE("client op #%llu %s o%d to osd.%d pg %d", (unsigned long long)op->seq,
	      op->remove ? "remove" : "write", k, o->id, g);
	return op->seq;
}

static void s_client_issue(void)
{
	int g = (int)rn(S_PGS), k = (int)rn(S_NAMES);

	(void)s_client_issue_at(g, k, rn(8) == 0);
}

static struct s_op *s_op_by_seq(uint64_t seq)
{
	return seq >= 1 && seq <= s_nops ? &s_opv[seq - 1] : NULL;
}

/* --------------------------------------------------------------- delivery */

/* Deliver m: false when it must wait for a newer map (it is kept). */
static bool s_deliver(struct s_msg *m)
{
	struct s_osd *o = &s_osd[m->to];
	struct pg *pg = o->pg[m->pgi];
	struct pg_txn *pt;
	int rc;

	if (!o->up || pg == NULL)
		return true;
	s_events++;
	switch (m->kind) {
	case S_M_PG: {
		struct proto_hdr hdr;
		struct proto_msg msg;

		if (proto_frame_decode(m->frame, m->len, S_MSG, "sim", NULL, &hdr, &msg) != 0) {
			s_fail("osd.%d: a PG message from osd.%d does not decode", o->id, m->from);
			return true;
		}
		TRACE("osd.%d <- osd.%d pg %d %s e%u", o->id, m->from, m->pgi,
		      proto_type_name(msg.type), msg.pg.epoch);
		if (pg_msg(pg, msg.type, &msg.pg) == -EAGAIN) {
			TRACE("osd.%d holds it: its map is %u", o->id, o->map_epoch);
			return false;
		}
		return true;
	}
	case S_M_REC: {
		char name[16];
		struct s_msg *a;

		s_name(m->oname, name, sizeof(name));
		rc = pg_rec_prepare(pg, m->epoch, m->v, m->prev, m->op, name, &pt);
		if (rc == 0 && s_fail_rec_osd == o->id) {
			s_fail_rec_osd = -1; /* a scenario's one failure */
			s_fail_rec_count++;
			pg_rec_cancel(pg, m->v, -ENOSPC);
			rc = -ENOSPC;
		} else if (rc == 0 && rn(200) == 0) {
			/* a store that refuses now and then (ENOSPC): the record fails here */
			pg_rec_cancel(pg, m->v, -ENOSPC);
			rc = -ENOSPC;
		}
		if (rc != 0) {
			a = s_msg_new(S_M_ACK, o->id, m->from, m->pgi);
			a->v = m->v;
			a->status = rc;
			a->op_seq = m->op_seq;
			s_q_push(a);
			TRACE("osd.%d refuses v%llx: %d", o->id, (unsigned long long)m->v, rc);
			return true;
		}
		{
			struct s_tx *t = s_tx_from(pg, pt, S_TX_REC, m->pgi);

			t->oname = m->oname;
			t->oval = m->oval;
			t->ack_to = m->from;
			t->ack_v = m->v;
			t->op_seq = m->op_seq;
			s_tx_queue(o, t);
		}
		return true;
	}
	case S_M_ACK: {
		struct s_op *op = s_op_by_seq(m->op_seq);

		if (op == NULL || op->st != S_OP_ORDERED || op->primary != o->id || op->v != m->v)
			return true;
		if (m->status != 0) {
			if (m->status != -ESTALE)
				pg_repl_failed(pg, m->from, m->v, m->status);
			s_op_finish(o, op, m->status);
			o->kick[m->pgi] = true;
			return true;
		}
		op->wait &= ~(1u << m->from);
		s_op_check(o, op);
		o->kick[m->pgi] = true;
		return true;
	}
	case S_M_PUSH: {
		struct s_msg *a;
		char name[16];

		s_name(m->oname, name, sizeof(name));
		rc = pg_push_accept(pg, m->epoch, name, m->v);
		TRACE("osd.%d <- osd.%d pg %d push %s v%llx e%u: %s", o->id, m->from, m->pgi, name,
		      (unsigned long long)m->v, m->epoch, rc ? strerror(-rc) : "accepted");
		if (rc != 0) {
			a = s_msg_new(S_M_PUSH_ACK, o->id, m->from, m->pgi);
			a->oname = m->oname;
			a->status = rc;
			s_q_push(a);
			return true;
		}
		{
			struct s_tx *t = s_tx_from(pg, NULL, S_TX_PUSH, m->pgi);

			t->oname = m->oname;
			t->oval = m->oval;
			t->ack_to = m->from;
			t->ack_v = m->v;
			s_tx_queue(o, t);
		}
		return true;
	}
	case S_M_PUSH_ACK: {
		char name[16];

		s_name(m->oname, name, sizeof(name));
		pg_push_done(pg, m->from, name, m->status);
		return true;
	}
	case S_M_CRC:
		pg_obj_crc_done(pg, m->v, s_obj_crc(o, m->pgi, m->oname));
		return true;
	}
	return true;
}

static void s_commit(struct s_osd *o)
{
	struct s_tx *t = o->txq;
	struct pg *pg;
	char name[16];

	o->txq = t->next;
	if (o->txq == NULL)
		o->txq_tail = NULL;
	s_tx_apply(o, t);
	pg = o->pg[t->pgi];
	s_events++;
	switch (t->kind) {
	case S_TX_PG:
		pg_committed(pg, t->token);
		break;
	case S_TX_OP: {
		struct s_op *op = s_op_by_seq(t->op_seq);

		o->pending[t->pgi][t->oname]--;
		pg_committed(pg, t->token);
		if (op && op->primary == o->id && op->st == S_OP_ORDERED) {
			op->local_done = true;
			s_op_check(o, op);
		}
		o->kick[t->pgi] = true;
		break;
	}
	case S_TX_REC: {
		struct s_msg *a = s_msg_new(S_M_ACK, o->id, t->ack_to, t->pgi);

		pg_committed(pg, t->token);
		a->v = t->ack_v;
		a->op_seq = t->op_seq;
		s_q_push(a);
		break;
	}
	case S_TX_PUSH: {
		struct s_msg *a = s_msg_new(S_M_PUSH_ACK, o->id, t->ack_to, t->pgi);

		a->oname = t->oname;
		s_q_push(a);
		s_name(t->oname, name, sizeof(name));
		pg_obj_arrived(pg, name, t->ack_v);
		pg_push_finished(pg);
		break;
	}
	case S_TX_DESTROY:
		pg_destroyed(pg, 0);
		break;
	case S_TX_MAP:
		break;
	}
	s_tx_free(t);
	/* saved maps next in line commit with it (not an event: the draws stay) */
	while (o->txq != NULL && o->txq->kind == S_TX_MAP) {
		t = o->txq;
		o->txq = t->next;
		if (o->txq == NULL)
			o->txq_tail = NULL;
		s_tx_apply(o, t);
		s_tx_free(t);
	}
}

/* ------------------------------------------------------------- invariants */

/* The states an object may be in: the last acked op's result or a later op's. */
static bool s_acceptable(int g, int k, const struct s_obj *ob)
{
	int last = -1;

	for (uint32_t i = 0; i < s_nops; i++)
		if (s_opv[i].pgi == g && s_opv[i].oname == k && s_opv[i].st == S_OP_DONE &&
		    s_opv[i].rc == 0)
			last = (int)i;
	if (last < 0 && !ob->exists)
		return true;
	for (uint32_t i = last < 0 ? 0 : (uint32_t)last; i < s_nops; i++) {
		const struct s_op *op = &s_opv[i];

		if (op->pgi != g || op->oname != k)
			continue;
		if (i != (uint32_t)last && op->v == 0)
			continue; /* never ordered: it cannot have happened */
		if (op->remove ? !ob->exists : (ob->exists && ob->content == op->seq))
			return true;
	}
	return false;
}

/* -v with SIM_WATCH=PG:NAME: every change of that object on any OSD's store. */
static int s_watch_pg = -1, s_watch_name = -1;
static struct s_obj s_watch_last[S_OSDS];

static void s_watch(void)
{
	if (s_watch_pg < 0)
		return;
	for (int o = 0; o < S_OSDS; o++) {
		const struct s_obj *ob = &s_osd[o].st.pg[s_watch_pg].obj[s_watch_name];

		if (memcmp(ob, &s_watch_last[o], sizeof(*ob)) != 0) {
			TRACE("WATCH osd.%d o%d pg %d: %s#%llu v%llx -> %s#%llu v%llx", o, s_watch_name,
			      s_watch_pg, s_watch_last[o].exists ? "" : "none ",
			      (unsigned long long)s_watch_last[o].content,
			      (unsigned long long)s_watch_last[o].version, ob->exists ? "" : "none ",
			      (unsigned long long)ob->content, (unsigned long long)ob->version);
			s_watch_last[o] = *ob;
		}
	}
}

/* Every acknowledged write is durable somewhere (any OSD's store, up or down). */
void s_check_durable(void)
{
	for (int g = 0; g < S_PGS && !s_failed; g++) {
		for (int k = 0; k < S_NAMES && !s_failed; k++) {
			bool ok = false;
			int last = -1;

			for (uint32_t i = 0; i < s_nops; i++)
				if (s_opv[i].pgi == g && s_opv[i].oname == k &&
				    s_opv[i].st == S_OP_DONE && s_opv[i].rc == 0)
					last = (int)i;
			if (last < 0 || s_opv[last].remove)
				continue;
			for (int o = 0; o < S_OSDS && !ok; o++) {
				const struct s_obj *ob = &s_osd[o].st.pg[g].obj[k];

				ok = s_acceptable(g, k, ob);
			}
			if (!ok)
				s_fail("acknowledged op #%llu (o%d in pg %d) is on no OSD any more",
				       (unsigned long long)s_opv[last].seq, k, g);
		}
	}
}

/* An object on an up OSD outside its PG's acting set: a stray copy not removed yet. */
static bool s_strays_left(void)
{
	const struct s_map *m = s_map_cur();

	for (int g = 0; g < S_PGS; g++) {
		int32_t acting[S_SIZE];
		unsigned int n = s_acting(m, g, acting);

		for (int o = 0; o < S_OSDS; o++) {
			bool member = false;

			for (unsigned int i = 0; i < n; i++)
				member |= acting[i] == o;
			for (int k = 0; !member && s_osd[o].up && k < S_NAMES; k++)
				if (s_osd[o].st.pg[g].obj[k].exists)
					return true;
		}
	}
	return false;
}

bool s_all_clean(void)
{
	const struct s_map *m = s_map_cur();

	for (int g = 0; g < S_PGS; g++) {
		int32_t acting[S_SIZE];
		unsigned int n = s_acting(m, g, acting);
		struct s_osd *p;

		if (n == 0)
			return false;
		p = &s_osd[acting[0]];
		if (!p->up || p->pg[g] == NULL || p->map_epoch != s_nmaps ||
		    !(p->pg[g]->state & PROTO_PGS_CLEAN))
			return false;
		for (int o = 0; o < S_OSDS; o++)
			if (s_osd[o].up && s_osd[o].pg[g] && s_osd[o].pg[g]->destroying)
				return false;
	}
	for (int o = 0; o < S_OSDS; o++) {
		if (s_osd[o].txq != NULL)
			return false;
		for (int k = 0; k < S_OSDS; k++)
			if (s_net[o][k].head != NULL || s_osd[o].defer[k].head != NULL)
				return false; /* a DELETE, an ack or a push still on its way */
	}
	return true;
}

/*
 * Clean means every member applied this interval's ACTIVATE: one that did
 * not refuses the interval's records, and its older les would keep the PG
 * down once the others die (a lost ACTIVATE, scale_func_30osd_full).
 */
static void s_check_activated(int g, const int32_t *acting, unsigned int n)
{
	const struct pg *pm = s_osd[acting[0]].pg[g];

	for (unsigned int i = 1; i < n && pm != NULL && !s_failed; i++) {
		const struct pg *q = s_osd[acting[i]].pg[g];

		if (q != NULL && q->info.les != pm->same_since)
			s_fail("UNACTIVATED: pg %d: member osd.%d holds les %u, the primary osd.%d's "
			       "interval began at %u, after clean",
			       g, acting[i], q->info.les, acting[0], pm->same_since);
	}
}

void s_check_final(void)
{
	const struct s_map *m = s_map_cur();

	for (int g = 0; g < S_PGS && !s_failed; g++) {
		int32_t acting[S_SIZE];
		unsigned int n = s_acting(m, g, acting);
		const struct s_spg *pp = &s_osd[acting[0]].st.pg[g];

		for (int k = 0; k < S_NAMES && !s_failed; k++) {
			const struct s_obj *po = &pp->obj[k];

			if (!s_acceptable(g, k, po)) {
				s_fail("LOST: o%d in pg %d: the primary osd.%d holds %s#%llu, not the "
				       "last acknowledged op or a later one",
				       k, g, acting[0], po->exists ? "" : "nothing ",
				       (unsigned long long)po->content);
				return;
			}
			for (int o = 0; o < S_OSDS; o++) {
				const struct s_obj *ob = &s_osd[o].st.pg[g].obj[k];
				bool member = false;

				for (unsigned int i = 0; i < n; i++)
					member |= acting[i] == o;
				if (member && (ob->exists != po->exists || ob->version != po->version ||
					       ob->content != po->content)) {
					s_fail("DIVERGENT: o%d in pg %d: osd.%d holds #%llu v%llx, the "
					       "primary osd.%d #%llu v%llx after clean",
					       k, g, o, (unsigned long long)ob->content,
					       (unsigned long long)ob->version, acting[0],
					       (unsigned long long)po->content,
					       (unsigned long long)po->version);
					return;
				}
				if (!member && ob->exists) {
					const struct pg *q = s_osd[o].pg[g];

					s_fail("STRAY: o%d in pg %d still on osd.%d (not a member) "
					       "after clean (its PG: lu %llx tail %llx log %u nacting %u "
					       "fence %u map %u)",
					       k, g, o, q ? (unsigned long long)q->info.lu : 0,
					       q ? (unsigned long long)q->info.tail : 0, q ? q->log.n : 0,
					       q ? q->nacting : 0, q ? q->fence : 0, s_osd[o].map_epoch);
					return;
				}
			}
		}
		s_check_activated(g, acting, n);
	}
}

/*
 * After clean: one replica copy per PG gets other content (same version),
 * `verify` must count exactly those, a repair must bring them back to the
 * primary's content, and a second verify must find nothing.
 */

static bool s_verify_done(uint32_t token)
{
	const struct s_map *m = s_map_cur();

	for (int g = 0; g < S_PGS; g++) {
		int32_t acting[S_SIZE];
		unsigned int n = s_acting(m, g, acting);

		if (n == 0 || s_osd[acting[0]].pg[g]->verify_token != token + (uint32_t)g)
			return false;
	}
	return true;
}

static void s_verify_run(uint32_t token, const unsigned int *want, const char *when)
{
	const struct s_map *m = s_map_cur();
	uint64_t k;

	for (int g = 0; g < S_PGS; g++) {
		int32_t acting[S_SIZE];

		if (s_acting(m, g, acting) > 0)
			pg_verify_request(s_osd[acting[0]].pg[g], token + (uint32_t)g);
	}
	for (k = 0; k < 200000 && !s_verify_done(token); k++)
		s_step_once(false, false);
	if (!s_verify_done(token)) {
		s_fail("verify %s: not done %llu steps after the request", when,
		       (unsigned long long)k);
		return;
	}
	for (int g = 0; g < S_PGS; g++) {
		int32_t acting[S_SIZE];
		const struct pg *q;

		s_acting(m, g, acting);
		q = s_osd[acting[0]].pg[g];
		if (q->verify_inconsistent != want[g]) {
			s_fail("verify %s: pg %d (primary osd.%d) found %u inconsistent, want %u",
			       when, g, acting[0], q->verify_inconsistent, want[g]);
			return;
		}
	}
}

static void s_check_verify(void)
{
	const struct s_map *m = s_map_cur();
	unsigned int want[S_PGS] = {0}, none[S_PGS] = {0};

	for (int g = 0; g < S_PGS; g++) {
		int32_t acting[S_SIZE];
		unsigned int n = s_acting(m, g, acting);

		for (int k = 0; n > 1 && k < S_NAMES; k++) {
			struct s_obj *ob = &s_osd[acting[1 + rn(n - 1)]].st.pg[g].obj[k];

			if (ob->exists) {
				ob->content ^= 0x5a5a5a5aull; /* a copy that differs: same version */
				want[g] = 1;
				break;
			}
		}
	}
	s_verify_run(1000, want, "after the corruption");
	for (int g = 0; g < S_PGS && !s_failed; g++) {
		int32_t acting[S_SIZE];

		s_acting(m, g, acting);
		if (want[g])
			pg_scrub_request(s_osd[acting[0]].pg[g], true, true);
	}
	for (uint64_t k = 0; k < 400000 && !s_failed; k++) {
		s_step_once(false, false);
		if ((k & 1023) == 1023 && s_all_clean())
			break;
	}
	if (!s_failed && !s_all_clean())
		s_fail("not active+clean after the repair");
	if (!s_failed)
		s_check_final();
	if (!s_failed)
		s_verify_run(2000, none, "after the repair");
}

/* ------------------------------------------------------------------ a run */

void s_reset(void)
{
	for (int o = 0; o < S_OSDS; o++) {
		if (s_osd[o].up)
			s_osd_crash(&s_osd[o]);
		for (int g = 0; g < S_PGS; g++)
			free(s_osd[o].st.pg[g].log);
		memset(&s_osd[o], 0, sizeof(s_osd[o]));
		s_osd[o].id = o;
		s_osd[o].in = true;
	}
	for (int a = 0; a < S_OSDS; a++)
		for (int b = 0; b < S_OSDS; b++)
			s_q_drop(a, b);
	free(s_maps);
	s_maps = NULL;
	s_nmaps = s_capmaps = 0;
	if (s_opv == NULL)
		s_opv = calloc(S_OPS_MAX, sizeof(*s_opv));
	s_nops = 0;
	memset(s_busy_name, 0, sizeof(s_busy_name));
	s_now = 0;
	s_step = 0;
	s_failed = false;
	s_why[0] = '\0';
	s_hold_down = 0;
	s_net_held = 0;
	s_map_held = 0;
	s_fail_rec_osd = -1;
	s_fail_rec_count = 0;
	s_drop_act_osd = -1;
	s_drop_act_count = 0;
}

static unsigned int s_ndown(void)
{
	unsigned int n = 0;

	for (int o = 0; o < S_OSDS; o++)
		n += !s_osd[o].up;
	return n;
}

/* One step of the world: a random event. chaos: crashes, out/in may happen. */
void s_step_once(bool chaos, bool client)
{
	unsigned int r = rn(1000);

	s_step++;
	s_now += rn(3);
	/* timers */
	for (int o = 0; o < S_OSDS; o++) {
		struct s_osd *d = &s_osd[o];

		if (!d->up || s_now < d->next_tick)
			continue;
		d->next_tick = s_now + 100;
		for (int g = 0; g < S_PGS; g++) {
			struct pg *pg = d->pg[g];
			uint64_t e0 = s_effects;
			uint32_t st = pg->state;
			enum pg_phase ph = pg->phase;

			/*
			 * As weft-osd does (osd_pgtick.c): a real tick only for a PG an
			 * entry point touched, or one due. Every other PG is ticked too,
			 * and that tick must do nothing at all: no message, transaction,
			 * push or log line, no change of state. So each run checks
			 * pg_tick_due against what a tick of every PG would have done.
			 */
			if (d->tick_want[g] || s_now >= d->tick_at[g]) {
				d->tick_want[g] = false;
				pg_tick(pg);
				d->tick_at[g] = pg_tick_due(pg);
				s_pg_ticks++;
			} else {
				pg_tick(pg);
				if (s_effects != e0 || pg->state != st || pg->phase != ph)
					s_fail("osd.%d pg %d: a tick skipped as idle (due %llu, now %llu) "
					       "did something", o, g, (unsigned long long)d->tick_at[g],
					       (unsigned long long)s_now);
			}
			s_pg_tick_slots++;
			d->kick[g] = true;
		}
	}
	if (r < 550) { /* a message */
		int a = (int)rn(S_OSDS), b = (int)rn(S_OSDS);

		for (int i = 0; i < S_OSDS * S_OSDS; i++) {
			struct s_q *q = &s_net[a][b];

			if (q->head && !((s_net_held >> (a * S_OSDS + b)) & 1)) {
				struct s_msg *m = q->head;
				struct s_q *d = &s_osd[m->to].defer[m->from];

				q->head = m->next;
				if (q->head == NULL)
					q->tail = NULL;
				q->n--;
				/* behind a held one from the same sender, or held itself: kept in order */
				if (d->head != NULL || !s_deliver(m)) {
					m->next = NULL;
					if (d->tail)
						d->tail->next = m;
					else
						d->head = m;
					d->tail = m;
					d->n++;
				} else {
					free(m->frame);
					free(m);
				}
				break;
			}
			b = (b + 1) % S_OSDS;
			if (b == 0)
				a = (a + 1) % S_OSDS;
		}
	} else if (r < 800) { /* a commit */
		int o = (int)rn(S_OSDS);

		for (int i = 0; i < S_OSDS; i++, o = (o + 1) % S_OSDS)
			if (s_osd[o].up && s_osd[o].txq && s_osd[o].txq->commit_at <= s_now) {
				s_commit(&s_osd[o]);
				break;
			}
	} else if (r < 880) { /* a map reaches an OSD */
		int o = (int)rn(S_OSDS);

		for (int i = 0; i < S_OSDS; i++, o = (o + 1) % S_OSDS)
			if (s_osd[o].up && s_osd[o].map_epoch < s_nmaps &&
			    !(s_map_held & (1u << o))) {
				/* a new store gets the newest map alone, as from the mons */
				s_osd_map(&s_osd[o], s_osd[o].map_epoch == 0 ? s_nmaps
									     : s_osd[o].map_epoch + 1);
				s_osd_undefer(&s_osd[o]);
				break;
			}
	} else if (r < 940) {
		if (client)
			s_client_issue();
	} else if (r < 970) { /* the mons notice a dead OSD */
		for (int o = 0; o < S_OSDS; o++)
			if (!s_osd[o].up && s_map_cur()->up[o] && rn(2)) {
				s_mark(o, false, s_map_cur()->in[o]);
				break;
			}
	} else if (chaos && r < 978) { /* a crash: at most two OSDs down */
		int o = (int)rn(S_OSDS);

		if (s_osd[o].up && s_ndown() < 2) {
			s_osd_crash(&s_osd[o]);
			if (rn(3) == 0) /* two at once */
				for (int k = 0; k < S_OSDS; k++)
					if (k != o && s_osd[k].up && s_ndown() < 2 && rn(2)) {
						s_osd_crash(&s_osd[k]);
						break;
					}
		}
	} else if (r < 990) { /* a restart */
		int o = (int)rn(S_OSDS);

		if (!s_osd[o].up && !(s_hold_down & (1u << o)) && (!chaos || rn(2)))
			s_osd_start(&s_osd[o]);
	} else if (chaos && r < 995) { /* out / in */
		int o = (int)rn(S_OSDS);
		const struct s_map *m = s_map_cur();
		unsigned int nin = 0;

		for (int k = 0; k < S_OSDS; k++)
			nin += m->in[k];
		if (m->in[o] && nin > S_SIZE + 1)
			s_mark(o, m->up[o], false);
		else if (!m->in[o])
			s_mark(o, m->up[o], true);
	}
	for (int o = 0; o < S_OSDS; o++)
		for (int g = 0; g < S_PGS; g++)
			if (s_osd[o].up && s_osd[o].kick[g])
				s_osd_kick(&s_osd[o], g);
	s_watch();
}

void s_world_start(uint64_t seed)
{
	struct s_map m0;

	s_reset();
	s_rng = seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
	memset(&m0, 0, sizeof(m0));
	for (int o = 0; o < S_OSDS; o++)
		m0.in[o] = true;
	s_map_push(&m0);
	for (int o = 0; o < S_OSDS; o++)
		s_osd_start(&s_osd[o]);
}

static int s_run(uint64_t seed, uint64_t steps)
{
	s_world_start(seed);
	for (s_step = 0; s_step < steps && !s_failed;) {
		s_space_chaos = true;
		s_step_once(true, true);
		if ((s_step & 255) == 0)
			s_check_durable();
	}
	return s_finish();
}

int s_finish(void)
{
	uint64_t settle, clean_at;

	s_space_chaos = false;
	s_hold_down = 0;
	s_net_held = 0;
	s_map_held = 0;
	s_fail_rec_osd = -1;
	s_drop_act_osd = -1;
	/* everything back, in, no more chaos, no more client ops: it must settle */
	for (int o = 0; o < S_OSDS && !s_failed; o++) {
		if (!s_osd[o].up)
			s_osd_start(&s_osd[o]);
		if (!s_map_cur()->in[o])
			s_mark(o, true, true);
	}
	/*
	 * Clean, and the strays removed: a stray's copy goes when its primary
	 * hears of it, within PG_RENOTIFY_MS (the 60,000 steps after clean are
	 * about 60 s); one still there then is reported (STRAY).
	 */
	for (settle = 0, clean_at = 0; !s_failed && settle < 400000; settle++) {
		s_step_once(false, false);
		if ((settle & 1023) != 0 || !s_all_clean()) {
			clean_at = (settle & 1023) == 0 ? 0 : clean_at;
			continue;
		}
		if (clean_at == 0)
			clean_at = settle;
		if (!s_strays_left() || settle - clean_at > 60000)
			break;
	}
	if (!s_failed && !s_all_clean()) {
		for (int g = 0; g < S_PGS; g++) {
			int32_t acting[S_SIZE];
			unsigned int n = s_acting(s_map_cur(), g, acting);
			struct s_osd *p = n ? &s_osd[acting[0]] : NULL;
			char st[96];

			if (p && p->pg[g]) {
				struct pg *q = p->pg[g];
				struct pg_set_ent *e;
				uint32_t it = 0;

				printf("  pg %d on osd.%d: %s, missing %llu, unfound %u, phase %d, auth %d, "
				       "budget %d\n",
				       g, p->id, proto_pg_state_str(q->state, st, sizeof(st)),
				       (unsigned long long)pg_missing_count(q), q->unfound, q->phase,
				       q->auth >= 0 ? q->p[q->auth].osd : -1, p->budget);
				printf("    own les %u, %u past intervals:", q->info.les, q->info.pi.n);
				for (uint32_t k = 0; k < q->info.pi.n; k++) {
					printf(" [%u-%u%s:", q->info.pi.e[k].first, q->info.pi.e[k].last,
					       (q->info.pi.e[k].flags & PG_PI_F_ACTIVE) ? " A" : "");
					for (unsigned int j = 0; j < q->info.pi.e[k].n; j++)
						printf("%s%d", j ? "," : "", q->info.pi.e[k].osd[j]);
					printf("]");
				}
				printf("\n");
				while ((e = pg_set_next(&q->missing, &it)) != NULL)
					printf("    own missing %s want %llx flags %x tries %u\n", e->name,
					       (unsigned long long)e->version, e->flags, e->tries);
				for (unsigned int i = 0; i < q->np; i++) {
					it = 0;
					printf("    peer osd.%d%s heard %d les %u lu %llx lc %llx flags %x "
					       "missing %u%s\n", q->p[i].osd,
					       q->p[i].acting ? " acting" : "", q->p[i].heard,
					       q->p[i].info.les,
					       (unsigned long long)q->p[i].info.last_update,
					       (unsigned long long)q->p[i].info.last_complete,
					       q->p[i].info.flags, q->p[i].missing.n,
					       q->p[i].backfill ? (q->p[i].bf_done ? " bf-done" : " bf")
								: "");
					while ((e = pg_set_next(&q->p[i].missing, &it)) != NULL)
						printf("      missing %s flags %x pending %u\n", e->name,
						       e->flags,
						       p->pending[g][s_name_idx(e->name) < 0
									 ? 0
									 : s_name_idx(e->name)]);
				}
			}
		}
		for (int o = 0; o < S_OSDS; o++)
			for (int g = 0; g < S_PGS; g++) {
				const struct pg *q = s_osd[o].pg[g];

				if (q)
					printf("  osd.%d pg %d: lu %llx lc %llx tail %llx les %u%s log %u "
					       "fence %u same_since %u\n",
					       o, g, (unsigned long long)q->info.lu,
					       (unsigned long long)q->info.lc,
					       (unsigned long long)q->info.tail, q->info.les,
					       q->info.backfill ? " BACKFILL" : "", q->log.n, q->fence,
					       q->same_since);
			}
		s_fail("not active+clean %llu steps after the chaos ended",
		       (unsigned long long)settle);
	}
	if (!s_failed)
		s_check_final();
	if (!s_failed)
		s_check_verify();
	return s_failed ? -1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t seed = (uint64_t)time(NULL), steps = 20000, runs = 0;
	double seconds = 10;
	uint64_t t0 = (uint64_t)time(NULL), failed = 0, done = 0;
	bool seed_given = false;
	const char *scenarios = NULL;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("SIM_WATCH") && sscanf(getenv("SIM_WATCH"), "%d:o%d", &s_watch_pg,
					  &s_watch_name) != 2)
		s_watch_pg = -1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
			seed_given = true;
		} else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
			runs = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			seconds = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--steps") && i + 1 < argc) {
			steps = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--scenarios") && i + 1 < argc) {
			scenarios = argv[++i];
		} else if (!strcmp(argv[i], "--map-saved-at-once")) {
			s_map_saved_at_once = true;
		} else if (!strcmp(argv[i], "-v")) {
			s_verbose = true;
		} else if (!strcmp(argv[i], "--help")) {
			printf(
			    "usage: sim_pg [--seed N] [--runs N] [--seconds S] [--steps N] "
			    "[--map-saved-at-once] [-v]\n"
			    "       sim_pg --scenarios all|double-kill|replica-error|quick-restart|"
			    "out-in|new-disks|lost-activate|scrub-writes|blind-primary|\n"
			    "                    fenced-notify|stale-notify|stale-log\n"
			    "                    [--seed N] [--runs N] [-v]\n");
			return 0;
		} else {
			fprintf(stderr, "sim_pg: unknown argument '%s' (try --help)\n", argv[i]);
			return 2;
		}
	}
	(void)seed_given;
	if (scenarios != NULL) {
		unsigned int n = 0, total = 0;

		if (runs == 0)
			runs = 20;
		for (uint64_t r = 0; r < runs; r++) {
			if (s_scenarios_run(seed + r, scenarios, &n) != 0) {
				s_reset();
				return 1;
			}
			total += n;
		}
		printf("sim_pg: %u scenario runs (%s, seeds %llu..%llu), 0 failed\n", total,
		       scenarios, (unsigned long long)seed, (unsigned long long)(seed + runs - 1));
		s_reset();
		return 0;
	}
	printf("sim_pg: first seed %llu, %llu steps per run, %s\n", (unsigned long long)seed,
	       (unsigned long long)steps, runs ? "a fixed number of runs" : "bounded by time");
	for (uint64_t r = 0; runs ? r < runs : (double)((uint64_t)time(NULL) - t0) < seconds; r++) {
		uint64_t s = seed + r;

		if (s_run(s, steps) != 0) {
			if (s_watch_pg >= 0) {
				char wn[16];

				s_name(s_watch_name, wn, sizeof(wn));
				for (int o = 0; o < S_OSDS; o++) {
					const struct pg *q = s_osd[o].pg[s_watch_pg];

					if (q == NULL)
						continue;
					printf("  osd.%d log of %s (lu %llx lc %llx tail %llx):", o, wn,
					       (unsigned long long)q->info.lu,
					       (unsigned long long)q->info.lc,
					       (unsigned long long)q->info.tail);
					for (uint32_t i = 0; i < q->log.n; i++) {
						const struct pg_entry *e = &q->log.e[q->log.head + i];

						if (!strcmp(e->name, wn))
							printf(" %llx/%u", (unsigned long long)e->v, e->op);
					}
					printf("\n");
				}
			}
			failed++;
			printf("FAIL seed %llu at step %llu: %s\n", (unsigned long long)s,
			       (unsigned long long)s_step, s_why);
			if (failed >= 5)
				break;
		}
		done++;
	}
	printf("sim_pg: %llu runs, %llu failed; %llu events, %llu messages, %llu acknowledged "
	       "writes, %llu maps in the last run\n",
	       (unsigned long long)done, (unsigned long long)failed, (unsigned long long)s_events,
	       (unsigned long long)s_msgs, (unsigned long long)s_acked_writes,
	       (unsigned long long)s_nmaps);
	printf("sim_pg: PGs ticked %llu times of %llu tick rounds (%.0f%%; the rest were idle)\n",
	       (unsigned long long)s_pg_ticks, (unsigned long long)s_pg_tick_slots,
	       s_pg_tick_slots ? 100.0 * (double)s_pg_ticks / (double)s_pg_tick_slots : 0.0);
	s_reset();
	return failed ? 1 : 0;
}
