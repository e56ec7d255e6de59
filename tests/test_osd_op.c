/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The primary's op pipeline and its replication bookkeeping (osd/osd_op.c,
 * osd/osd_repl.c, osd/osd_pgs.c) against a fake fabric, store, network and
 * PG machine: the real placement and map, every other boundary recorded
 * here so a test can see what the OSD did and when, and drive the events.
 *
 * - a write starts its replica records and its local transaction in the
 *   same step, before either completes; it is answered exactly once, after
 *   the local commit and every replica's ACK, whatever their order;
 * - payload pulls that finish out of order still give versions, records and
 *   commits in arrival order;
 * - a replica's refusal answers MAYBE naming it; -ESTALE is a fence; an
 *   interval change answers -EAGAIN; a lost client gets no reply; a timeout
 *   answers -ETIMEDOUT; below min_size nothing is posted;
 * - ring space: records wait while a peer's ring is full or not granted and
 *   go, in version order, when an ACK frees space; a broken peer connection
 *   sends every unacked record again into the new ring;
 * - every op and buffer is released once its last completion arrived;
 * - a write of an object whose push is reading its chunk waits until the
 *   chunk is posted (the replica gets it first);
 * - a write of an object a scrub batch covers waits, and the PG's writes
 *   behind it; the batch sees an ordered write in its range as busy until
 *   every copy acknowledged it;
 * - cmp_write_full reads what it compares without blocking (the op and
 *   the PG's later writes wait for the read), answers a mismatch
 *   -ECANCELED, and keeps its buffer until a read it outlived is back;
 * - denial-of-service limits: a connection at osd_max_ops_per_conn is
 *   paused and resumed when an op completes; a PG id past pg_num and an
 *   epoch past osd_epoch_ahead_max are refused -EINVAL and counted, from a
 *   client and in a replica's ring record, with nothing created for them.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "osd/osd_perf.h"
#include "osd/osd_pg.h"
#include "placement/plc_map.h"
#include "proto/hello.h"

/* ------------------------------------------------------------ the fakes */

#define MAX_REC 256

enum post_kind { POST_READ = 1, POST_WRITE, POST_WRITE_IMM };

struct post {
	enum post_kind kind;
	struct fab_ep *ep;
	const struct osd_rma *ctx;
	uint32_t len;
	uint64_t off;
	uint64_t version; /* of the op, at post time (the op may be gone later) */
	bool done;
};

struct reply {
	uint64_t tid;
	struct proto_osd_op_reply r;
};

struct commit {
	store_commit_cb cb;
	void *arg;
	uint64_t version;
	uint8_t first_byte; /* of the payload the transaction got */
	bool done;
};

static struct {
	struct post posts[MAX_REC];
	unsigned int nposts;
	struct reply replies[MAX_REC];
	unsigned int nreplies;
	struct commit commits[MAX_REC];
	unsigned int ncommits;
	struct proto_msg sent[MAX_REC]; /* cluster messages (RING_REQ) */
	struct osd_conn *sent_to[MAX_REC];
	unsigned int nsent;
	struct osd_conn *conns[16]; /* the peer connections the OSD opened */
	unsigned int nconns;
	uint64_t next_version;
	int bufs; /* payload buffers out */
	int busy; /* objects between ordering and local commit */
	int repl_failed, fenced;
	bool pg_ready;
	bool paused;		/* msgr_conn_pause's last word */
	unsigned int rec_apply; /* records that reached osd_pg_rec_apply */
	struct {
		store_read_cb cb;
		void *arg;
		uint64_t len;
		bool done;
	} reads[MAX_REC]; /* store_read_start: device reads the test completes */
	unsigned int nreads;
	const char *push_reading; /* osd_push_reading: a push of this object reads its chunk */
	uint64_t stat_size; /* store_stat: every object exists with this size (0: none exists) */
	const char *scrub_held; /* osd_pg_scrub_holds: a scrub batch covers this object */
	unsigned int space_waits; /* osd_pg_op_submit: -EAGAIN this often (store_tx_nowait) */
	unsigned int nowait;	  /* transactions marked store_tx_nowait */
} F;

static struct fab_ep *const client_ep = (struct fab_ep *)&F.posts[0];

static int fake_post(enum post_kind kind, struct fab_ep *ep, const struct fab_sge *sge,
		     uint64_t off, void *ctx)
{
	struct post *p;

	assert_true(F.nposts < MAX_REC);
	p = &F.posts[F.nposts++];
	*p = (struct post){kind, ep, ctx, sge->len, off, 0, false};
	if (ctx != NULL)
		p->version = ((const struct osd_rma *)ctx)->op->version;
	return 0;
}

int fab_read(struct fab_ep *ep, const struct fab_sge *dst, const struct fab_rkey *src,
	     uint64_t src_offset, void *ctx)
{
	(void)src;
	return fake_post(POST_READ, ep, dst, src_offset, ctx);
}

int fab_write(struct fab_ep *ep, const struct fab_sge *src, const struct fab_rkey *dst,
	      uint64_t dst_offset, void *ctx)
{
	(void)dst;
	return fake_post(POST_WRITE, ep, src, dst_offset, ctx);
}

int fab_write_imm(struct fab_ep *ep, const struct fab_sge *src, const struct fab_rkey *dst,
		  uint64_t dst_offset, uint32_t imm, void *ctx)
{
	(void)dst;
	(void)imm;
	return fake_post(POST_WRITE_IMM, ep, src, dst_offset, ctx);
}

int fab_mr_reg(struct fab_domain *dom, void *addr, size_t len, unsigned int access,
	       struct fab_mr **mr_out)
{
	(void)dom, (void)addr, (void)len, (void)access, (void)mr_out;
	return -ENOTSUP; /* the replica side is not under test here */
}

void fab_mr_rkey(const struct fab_mr *mr, struct fab_rkey *rkey_out)
{
	(void)mr;
	memset(rkey_out, 0, sizeof(*rkey_out));
}

int fab_rkey_scope(struct fab_ep *ep, struct fab_mr *mr, const void *addr, size_t len,
		   unsigned int access, struct fab_rkey *rkey_out)
{
	(void)ep, (void)mr, (void)addr, (void)len, (void)access, (void)rkey_out;
	return -ENOTSUP; /* never reached: fab_mr_reg fails first */
}

void fab_pool_put(struct fab_pool *pool, void *buf)
{
	(void)pool;
	F.bufs--;
	free(buf);
}

void *osd_buf_get(struct osd *osd, uint64_t len, struct fab_pool **pool_out,
		  struct fab_sge *sge_out)
{
	void *b = malloc(len);

	(void)osd;
	assert_non_null(b);
	F.bufs++;
	*pool_out = (struct fab_pool *)&F.bufs;
	*sge_out = (struct fab_sge){b, (uint32_t)len, NULL};
	return b;
}

int osd_conn_send(struct osd_conn *conn, const struct proto_msg *m, uint64_t tid)
{
	(void)tid;
	assert_true(F.nsent < MAX_REC);
	F.sent_to[F.nsent] = conn;
	F.sent[F.nsent++] = *m;
	return 0;
}

int osd_conn_send_reply(struct osd_conn *conn, uint64_t tid, const struct proto_osd_op_reply *r)
{
	(void)conn;
	assert_true(F.nreplies < MAX_REC);
	F.replies[F.nreplies++] = (struct reply){tid, *r};
	return 0;
}

struct osd_conn *osd_conn_connect(struct osd *osd, const char *addr, enum osd_conn_kind kind)
{
	struct osd_conn *c = calloc(1, sizeof(*c));

	(void)addr;
	assert_non_null(c);
	assert_true(F.nconns < 16);
	c->osd = osd;
	c->kind = kind;
	c->ep = (struct fab_ep *)c; /* any pointer: the posts record it */
	c->hello_done = true;
	F.conns[F.nconns++] = c;
	return c;
}

void osd_conn_kill(struct osd_conn *conn)
{
	conn->failed = true;
}

const char *osd_conn_peer(const struct osd_conn *conn)
{
	(void)conn;
	return "127.2.0.1:6800";
}

int osd_blocklist_check(struct osd_conn *conn)
{
	(void)conn;
	return 0;
}

/* caps are osd_auth.c's, tested with real tickets in the security suite */
int osd_auth_op(struct osd_conn *conn, const char *pool, bool write)
{
	(void)conn;
	(void)pool;
	(void)write;
	return 0;
}

void osd_hb_peer_alive(struct osd *osd, uint32_t id)
{
	(void)osd, (void)id;
}

void osd_hb_ping_recv(struct osd_conn *conn, uint16_t type, const struct proto_ping *m)
{
	(void)conn, (void)type, (void)m;
}

void osd_perf_mark(struct osd *osd, enum osd_stage st, struct osd_op *op)
{
	(void)osd, (void)st, (void)op;
}

void osd_perf_since_submit(struct osd *osd, enum osd_stage st, struct osd_op *op)
{
	(void)osd, (void)st, (void)op;
}

void osd_perf_op_done(struct osd_op *op, int status)
{
	(void)op, (void)status;
}

int osd_perf_json(struct osd *osd, char *buf, size_t cap, size_t *len_out)
{
	(void)osd, (void)buf, (void)cap;
	*len_out = 0;
	return 0;
}

bool osd_pg_io_ready(struct osd *osd, struct osd_pg *pg)
{
	(void)osd, (void)pg;
	return F.pg_ready;
}

bool osd_pg_obj_ready(struct osd *osd, struct osd_pg *pg, const char *name)
{
	(void)osd, (void)pg, (void)name;
	return true;
}

bool osd_pg_scrub_holds(struct osd_pg *pg, const char *name)
{
	(void)pg;
	return F.scrub_held != NULL && !strcmp(name, F.scrub_held);
}

uint64_t osd_pg_op_version(struct osd *osd, struct osd_pg *pg)
{
	(void)osd, (void)pg;
	return ++F.next_version;
}

int osd_pg_op_tx(struct osd *osd, struct osd_pg *pg, struct store_tx *tx,
		 const struct osd_rec_hdr *h, const void *data, uint64_t *prev_out,
		 uint64_t *token_out)
{
	(void)osd, (void)pg, (void)tx;
	assert_true(F.ncommits < MAX_REC);
	F.commits[F.ncommits].version = h->version;
	F.commits[F.ncommits].first_byte = h->length > 0 ? *(const uint8_t *)data : 0;
	*prev_out = h->version - 1;
	*token_out = h->version;
	return 0;
}

int osd_pg_op_submit(struct osd *osd, struct osd_pg *pg, struct store_tx *tx, uint64_t version,
		     uint64_t token, store_commit_cb cb, void *arg)
{
	struct commit *c;

	(void)osd, (void)pg, (void)token;
	if (F.space_waits > 0) {
		/* the store's answer while freed units wait for its checkpoint */
		F.space_waits--;
		return -EAGAIN;
	}
	c = &F.commits[F.ncommits++];
	assert_true(c->version == version);
	c->cb = cb;
	c->arg = arg;
	store_tx_destroy(tx); /* the store owns a submitted transaction */
	return 0;
}

void osd_pg_op_cancel(struct osd *osd, struct osd_pg *pg, uint64_t version)
{
	(void)osd, (void)pg, (void)version;
	fail_msg("no transaction is cancelled in these tests");
}

void osd_pg_busy(struct osd_pg *pg, const char *name, int delta)
{
	(void)pg, (void)name;
	F.busy += delta;
}

void osd_pg_tick_want(struct osd *osd, struct osd_pg *pg)
{
	(void)osd;
	pg->tick_listed = true; /* the tick (osd_pgtick.c) is not part of this test */
}

void osd_pg_fenced(struct osd *osd, struct osd_pg *pg, uint32_t peer)
{
	(void)osd, (void)pg, (void)peer;
	F.fenced++;
}

void osd_pg_repl_failed(struct osd *osd, struct osd_pg *pg, uint32_t peer, uint64_t v, int rc)
{
	(void)osd, (void)pg, (void)peer, (void)v, (void)rc;
	F.repl_failed++;
}

int osd_pg_rec_apply(struct osd *osd, const struct osd_rec_hdr *h, const void *data,
		     store_commit_cb cb, void *arg)
{
	(void)osd, (void)h, (void)data, (void)cb, (void)arg;
	F.rec_apply++;
	return -ENOTSUP;
}

void msgr_conn_pause(struct msgr_conn *conn, bool pause)
{
	(void)conn;
	assert_true(pause != F.paused); /* the OSD says it once each way */
	F.paused = pause;
}

bool osd_pg_rec_hold(struct osd_conn *conn, uint32_t imm, uint32_t len)
{
	(void)conn, (void)imm, (void)len;
	return true;
}

bool osd_push_acked(struct osd *osd, uint32_t peer_id, const struct proto_repl_ack *m)
{
	(void)osd, (void)peer_id, (void)m;
	return false;
}

bool osd_push_reading(const struct osd *osd, uint32_t pool, uint32_t pg, const char *name)
{
	(void)osd, (void)pool, (void)pg;
	return F.push_reading != NULL && strcmp(F.push_reading, name) == 0;
}

int store_tx_create(struct store_tx **tx_out)
{
	*tx_out = malloc(16);
	return *tx_out != NULL ? 0 : -ENOMEM;
}

void store_tx_destroy(struct store_tx *tx)
{
	free(tx);
}

void store_tx_nowait(struct store_tx *tx)
{
	(void)tx;
	F.nowait++;
}

int store_stat(struct store *st, uint64_t pg, const char *name, struct store_stat *stat_out)
{
	(void)st, (void)pg, (void)name;
	if (F.stat_size == 0)
		return -ENOENT;
	memset(stat_out, 0, sizeof(*stat_out));
	stat_out->size = F.stat_size;
	return 0;
}

int store_read(struct store *st, uint64_t pg, const char *name, uint64_t off, uint64_t len,
	       void *buf, uint64_t *got_out)
{
	(void)st, (void)pg, (void)name, (void)off, (void)len, (void)buf;
	*got_out = 0;
	return 0;
}

/* A read of an object the test never wrote: a device read it completes with read_done(). */
int store_read_start(struct store *st, uint64_t pg, const char *name, uint64_t off, uint64_t len,
		     void *buf, size_t cap, store_read_cb cb, void *arg, uint64_t *read_out)
{
	(void)st, (void)pg, (void)name, (void)off, (void)read_out;
	assert_true(cap >= len && F.nreads < MAX_REC);
	memset(buf, 0x5a, len);
	F.reads[F.nreads].cb = cb;
	F.reads[F.nreads].arg = arg;
	F.reads[F.nreads++].len = len;
	return 0;
}

static void read_done(unsigned int i, int rc)
{
	assert_true(i < F.nreads && !F.reads[i].done);
	F.reads[i].done = true;
	F.reads[i].cb(F.reads[i].arg, rc, rc == 0 ? F.reads[i].len : 0);
}

/* ------------------------------------------------------ the OSD under test */

static struct osd osd;
static struct osd_conn client;
static const struct mon_pool *pool;
static int32_t acting[PLC_MAX_REPLICAS];
static uint32_t the_pg;

static struct mon_osd mk_osd(uint32_t id)
{
	struct mon_osd o = {.id = id, .state = MON_OSD_EXISTS | MON_OSD_UP | MON_OSD_IN};

	o.uuid[0] = (uint8_t)(id + 1);
	o.weight = MON_WEIGHT_ONE;
	o.up_from = 2;
	snprintf(o.host, sizeof(o.host), "node%u", id);
	snprintf(o.public_addr, sizeof(o.public_addr), "127.1.0.%u:6800", 10 + id);
	snprintf(o.cluster_addr, sizeof(o.cluster_addr), "127.2.0.%u:6800", 10 + id);
	return o;
}

/* epoch 2: osds (all up and in unless down), pool 1 of size 3, min_size 2, 8 PGs */
static void map_build(struct mon_map *map, unsigned int nosds, uint32_t epoch)
{
	struct mon_inc inc;
	struct mon_op op;

	mon_map_init(map);
	mon_inc_init(&inc);
	inc.epoch = 1;
	assert_int_equal(mon_map_apply(map, &inc), 0);
	mon_inc_free(&inc);
	for (uint32_t e = 2; e <= epoch; e++) {
		mon_inc_init(&inc);
		inc.epoch = e;
		if (e == 2) {
			for (uint32_t i = 0; i < nosds; i++) {
				op.kind = MON_OP_OSD_SET;
				op.osd = mk_osd(i);
				assert_int_equal(mon_inc_add(&inc, &op), 0);
			}
			memset(&op, 0, sizeof(op));
			op.kind = MON_OP_POOL_SET;
			op.pool.id = 1;
			op.pool.size = 3;
			op.pool.min_size = 2;
			op.pool.pg_num = 8;
			strcpy(op.pool.name, "rbd");
			assert_int_equal(mon_inc_add(&inc, &op), 0);
		}
		assert_int_equal(mon_map_apply(map, &inc), 0);
		mon_inc_free(&inc);
	}
}

static const char *obj_name(unsigned int i)
{
	static char name[8][32];

	snprintf(name[i % 8], sizeof(name[0]), "obj.%u", i);
	return name[i % 8];
}

/* The i-th name (from 0) that maps to the PG under test. */
static const char *name_in_pg(unsigned int nth)
{
	unsigned int found = 0;

	for (unsigned int i = 0; i < 100000; i++) {
		const char *n = obj_name(i);

		if (plc_map_object_pg(pool, n, strlen(n)) == the_pg && found++ == nth)
			return n;
	}
	fail_msg("no object name for pg %u", the_pg);
	return NULL;
}

static int setup(void **state)
{
	int n;

	(void)state;
	memset(&F, 0, sizeof(F));
	memset(&osd, 0, sizeof(osd));
	F.pg_ready = true;
	map_build(&osd.map, 3, 2);
	pool = mon_map_pool(&osd.map, 1);
	assert_non_null(pool);
	the_pg = plc_map_object_pg(pool, "obj.0", 5);
	n = plc_map_acting(&osd.map, pool, the_pg, acting);
	assert_int_equal(n, 3);
	osd.id = (uint32_t)acting[0]; /* we are the primary of the PG under test */
	snprintf(osd.name, sizeof(osd.name), "osd.%u", osd.id);
	osd.booted = true;
	osd.boot_epoch = 2;
	{
		struct evl_opts o;

		evl_opts_init(&o);
		o.name = "test_osd_op";
		assert_int_equal(evl_create(&o, &osd.loop), 0); /* the ops' timeout timers */
	}
	osd.max_op = 4u << 20;
	osd.op_timeout_ms = 30000;
	osd.max_ops_per_conn = 1024;
	osd.epoch_ahead_max = 1000;
	osd.ring_grant_ms = 60000;
	memset(&client, 0, sizeof(client));
	client.osd = &osd;
	client.kind = OSD_CONN_CLIENT;
	client.ep = client_ep;
	client.hello_done = true;
	client.peer_features = PROTO_FEAT_REPLY_OSD; /* as the hello would give */
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	osd_ops_cleanup(&osd);
	osd_repl_cleanup(&osd);
	for (unsigned int i = 0; i < F.nconns; i++)
		free(F.conns[i]);
	mon_map_free(&osd.map);
	evl_destroy(osd.loop);
	return 0;
}

/* A write of len bytes of byte b, inline or pulled. */
static void client_write(uint64_t tid, const char *name, uint8_t b, uint32_t len, bool inline_data)
{
	static uint8_t data[4096];
	struct proto_osd_op m = {.op = PROTO_OP_WRITE, .pool = 1, .epoch = osd.map.epoch};

	memset(data, b, sizeof(data));
	m.pg = the_pg;
	m.length = len;
	m.name_len = strlen(name);
	memcpy(m.name, name, m.name_len + 1);
	if (inline_data) {
		m.flags = PROTO_OP_F_INLINE;
		m.data = data;
		m.data_len = len;
	} else {
		m.flags = PROTO_OP_F_RKEY;
		m.rkey = (struct proto_rkey){0x10000, len, 0x77};
	}
	osd_op_recv(&client, tid, &m);
}

static void client_read_on(struct osd_conn *conn, uint64_t tid, const char *name, uint32_t len)
{
	struct proto_osd_op m = {.op = PROTO_OP_READ, .pool = 1, .epoch = osd.map.epoch};

	m.pg = the_pg;
	m.length = len;
	m.name_len = strlen(name);
	memcpy(m.name, name, m.name_len + 1);
	m.flags = PROTO_OP_F_RKEY;
	m.rkey = (struct proto_rkey){0x20000, len, 0x78};
	osd_op_recv(conn, tid, &m);
}

static void client_read(uint64_t tid, const char *name, uint32_t len)
{
	client_read_on(&client, tid, name, len);
}

static unsigned int posts_of(enum post_kind kind)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < F.nposts; i++)
		n += F.posts[i].kind == kind;
	return n;
}

static void post_done(unsigned int i, int status)
{
	assert_true(i < F.nposts && !F.posts[i].done);
	F.posts[i].done = true;
	if (F.posts[i].ctx != NULL)
		osd_op_rma_done(F.posts[i].ctx, status);
}

static void commit_done(unsigned int i, int rc)
{
	assert_true(i < F.ncommits && !F.commits[i].done);
	F.commits[i].done = true;
	F.commits[i].cb(F.commits[i].arg, rc);
}

static struct osd_peer *peer_of(unsigned int idx)
{
	return osd_peer_get(&osd, (uint32_t)acting[idx]);
}

/* The replica answers the primary's RING_REQ with a ring of ring_len bytes. */
static void grant_ring(unsigned int idx, uint64_t ring_len)
{
	struct osd_peer *p = peer_of(idx);
	struct proto_msg g = {.type = PROTO_REPL_RING_GRANT};

	assert_non_null(p->conn);
	g.repl_ring_grant.ring =
	    (struct proto_rkey){0x7f0000000000ull + idx * (1ull << 32), ring_len, 100 + idx};
	osd_repl_recv(p->conn, &g);
}

static void ack(unsigned int idx, uint64_t version, int status)
{
	struct osd_peer *p = peer_of(idx);
	struct proto_msg a = {.type = PROTO_REPL_ACK};
	uint64_t off = UINT64_MAX;

	/* the ring offset of the record of this version: from the posts to that peer */
	for (unsigned int i = 0; i < F.nposts; i++)
		if (F.posts[i].kind == POST_WRITE_IMM && F.posts[i].ep == p->conn->ep &&
		    F.posts[i].version == version)
			off = F.posts[i].off;
	assert_true(off != UINT64_MAX);
	a.repl_ack = (struct proto_repl_ack){off, 1, the_pg, version, status};
	osd_repl_recv(p->conn, &a);
}

/* Peers connected and their rings granted before the first write. */
static void peers_up(uint64_t ring_len)
{
	for (unsigned int i = 1; i < 3; i++) {
		assert_int_equal(osd_peer_connect(&osd, peer_of(i)), -EAGAIN);
		assert_int_equal(F.sent[F.nsent - 1].type, PROTO_REPL_RING_REQ);
		assert_int_equal(F.sent[F.nsent - 1].repl_ring_req.osd_id, osd.id);
		grant_ring(i, ring_len);
	}
}

static struct osd_pg *the_osd_pg(void)
{
	return osd_pg_find(&osd, 1, the_pg);
}

/* --------------------------------------------------------------- tests */

static void test_write_replicates_with_local_commit(void **state)
{
	(void)state;
	peers_up(1u << 20);
	client_write(7, name_in_pg(0), 0xa5, 4096, true);
	/* one step: both records out and the local transaction submitted, nothing done yet */
	assert_int_equal(posts_of(POST_WRITE_IMM), 2);
	assert_int_equal(F.ncommits, 1);
	assert_int_equal(F.commits[0].first_byte, 0xa5);
	assert_int_equal(F.busy, 1);
	assert_int_equal(F.nreplies, 0);
	/* records placed, one replica acks, then our commit: still waiting for the other */
	post_done(0, 0);
	post_done(1, 0);
	ack(2, 1, 0);
	commit_done(0, 0);
	assert_int_equal(F.nreplies, 0);
	assert_int_equal(F.busy, 0);
	ack(1, 1, 0);
	assert_int_equal(F.nreplies, 1);
	assert_true(F.replies[0].tid == 7);
	assert_int_equal(F.replies[0].r.status, 0);
	assert_true(F.replies[0].r.version == 1);
	assert_true(F.replies[0].r.length == 4096);
	assert_null(the_osd_pg()->head);
	assert_int_equal(F.bufs, 0); /* the payload buffer went back */
	assert_int_equal(client.ops_inflight, 0);
	/* a late duplicate ACK finds nothing and changes nothing */
	ack(1, 1, 0);
	assert_int_equal(F.nreplies, 1);
}

static void test_commit_last_and_ring_slots(void **state)
{
	struct osd_peer *p1;

	(void)state;
	peers_up(1u << 20);
	p1 = peer_of(1);
	for (unsigned int i = 0; i < 3; i++)
		client_write(10 + i, name_in_pg(i), (uint8_t)i, 512, true);
	assert_int_equal(posts_of(POST_WRITE_IMM), 6);
	assert_int_equal(p1->slot_count, 3);
	/* every ACK before any local commit: no reply */
	for (unsigned int v = 1; v <= 3; v++) {
		ack(1, v, 0);
		ack(2, v, 0);
	}
	assert_int_equal(p1->slot_count, 0); /* acked in order: every slot free */
	assert_int_equal(F.nreplies, 0);
	/* commits out of order: each answers its own op */
	commit_done(2, 0);
	commit_done(0, 0);
	commit_done(1, 0);
	assert_int_equal(F.nreplies, 3);
	assert_true(F.replies[0].tid == 12 && F.replies[0].r.version == 3);
	assert_true(F.replies[1].tid == 10 && F.replies[1].r.version == 1);
	assert_true(F.replies[2].tid == 11 && F.replies[2].r.version == 2);
	for (unsigned int i = 0; i < F.nposts; i++)
		post_done(i, 0);
	assert_null(the_osd_pg()->head);
	assert_int_equal(F.bufs, 0);
}

static void test_pulls_out_of_order_keep_arrival_order(void **state)
{
	(void)state;
	peers_up(1u << 20);
	client_write(1, name_in_pg(0), 0x11, 4096, false);
	client_write(2, name_in_pg(1), 0x22, 4096, false);
	assert_int_equal(posts_of(POST_READ), 2);
	assert_int_equal(F.ncommits, 0);
	/* the second pull lands first: it waits for the first to be ordered */
	post_done(1, 0);
	assert_int_equal(F.ncommits, 0);
	assert_int_equal(posts_of(POST_WRITE_IMM), 0);
	post_done(0, 0);
	assert_int_equal(F.ncommits, 2);
	assert_true(F.commits[0].version == 1 && F.commits[1].version == 2);
	assert_true(((struct osd_op *)F.commits[0].arg)->tid == 1);
	/* records to each peer in version order */
	assert_int_equal(posts_of(POST_WRITE_IMM), 4);
	assert_true(F.posts[2].version == 1 && F.posts[3].version == 1);
	assert_true(F.posts[4].version == 2 && F.posts[5].version == 2);
	for (unsigned int v = 1; v <= 2; v++) {
		ack(1, v, 0);
		ack(2, v, 0);
		commit_done(v - 1, 0);
	}
	assert_int_equal(F.nreplies, 2);
	assert_true(F.replies[0].tid == 1 && F.replies[1].tid == 2);
	for (unsigned int i = 2; i < F.nposts; i++)
		post_done(i, 0);
	assert_int_equal(F.bufs, 0);
}

static void test_pull_failure_answers_it(void **state)
{
	(void)state;
	peers_up(1u << 20);
	client_write(3, name_in_pg(0), 0x33, 4096, false);
	post_done(0, -ECONNRESET);
	assert_int_equal(F.nreplies, 1);
	assert_int_equal(F.replies[0].r.status, -ECONNRESET);
	assert_int_equal(F.ncommits, 0);
	assert_int_equal(posts_of(POST_WRITE_IMM), 0);
	assert_int_equal(F.bufs, 0);
}

static void test_replica_failure_is_maybe(void **state)
{
	(void)state;
	peers_up(1u << 20);
	client_write(4, name_in_pg(0), 0x44, 1024, true);
	commit_done(0, 0);
	ack(1, 1, 0);
	ack(2, 1, -EIO);
	assert_int_equal(F.nreplies, 1);
	assert_int_equal(F.replies[0].r.status, -EIO);
	assert_int_equal(F.replies[0].r.flags, PROTO_REPLY_F_MAYBE | PROTO_REPLY_F_OSD);
	assert_true(F.replies[0].r.version == (uint64_t)acting[2]);
	assert_int_equal(F.repl_failed, 1);
	post_done(0, 0);
	post_done(1, 0);
	assert_int_equal(F.bufs, 0);
}

static void test_replica_fence_is_estale(void **state)
{
	(void)state;
	peers_up(1u << 20);
	client_write(5, name_in_pg(0), 0x55, 1024, true);
	ack(1, 1, -ESTALE);
	assert_int_equal(F.nreplies, 1);
	assert_int_equal(F.replies[0].r.status, -ESTALE);
	assert_int_equal(F.fenced, 1);
	/* the local commit still arrives later and only drops its reference */
	commit_done(0, 0);
	assert_int_equal(F.nreplies, 1);
	assert_int_equal(F.busy, 0);
	post_done(0, 0);
	post_done(1, 0);
	assert_int_equal(F.bufs, 0);
}

static void test_interval_change_and_lost_client(void **state)
{
	(void)state;
	peers_up(1u << 20);
	client_write(6, name_in_pg(0), 0x66, 1024, true);
	client_write(8, name_in_pg(1), 0x67, 1024, true);
	/* the client goes away: op 8 gets no answer, op 6 neither */
	osd_op_conn_failed(&osd, &client);
	osd_op_pg_interval(&osd, the_osd_pg());
	assert_int_equal(F.nreplies, 0);
	assert_null(the_osd_pg()->head);
	/* late completions free everything */
	commit_done(0, 0);
	commit_done(1, 0);
	for (unsigned int i = 0; i < F.nposts; i++)
		post_done(i, 0);
	assert_int_equal(F.bufs, 0);
	assert_int_equal(F.busy, 0);
}

static void test_interval_change_answers_eagain(void **state)
{
	(void)state;
	peers_up(1u << 20);
	client_write(9, name_in_pg(0), 0x69, 1024, true);
	osd_op_pg_interval(&osd, the_osd_pg());
	assert_int_equal(F.nreplies, 1);
	assert_int_equal(F.replies[0].r.status, -EAGAIN);
	commit_done(0, 0);
	post_done(0, 0);
	post_done(1, 0);
	assert_int_equal(F.bufs, 0);
}

static void test_ring_full_then_freed(void **state)
{
	struct osd_peer *p1;

	(void)state;
	/* a ring of two 64-byte-aligned 4 KiB records */
	peers_up(2 * (4096 + 256));
	p1 = peer_of(1);
	for (unsigned int i = 0; i < 3; i++)
		client_write(20 + i, name_in_pg(i), (uint8_t)(0x70 + i), 4096, true);
	/* the third record finds both rings full: it waits, ordered behind the others */
	assert_int_equal(posts_of(POST_WRITE_IMM), 4);
	assert_true(p1->blocked);
	ack(1, 1, 0);
	ack(2, 1, 0);
	/* space came back: the waiting record goes, to both peers */
	assert_int_equal(posts_of(POST_WRITE_IMM), 6);
	assert_true(F.posts[4].version == 3 && F.posts[5].version == 3);
	for (unsigned int v = 1; v <= 3; v++) {
		if (v > 1) {
			ack(1, v, 0);
			ack(2, v, 0);
		}
		commit_done(v - 1, 0);
	}
	assert_int_equal(F.nreplies, 3);
	for (unsigned int i = 0; i < F.nposts; i++)
		post_done(i, 0);
	assert_int_equal(F.bufs, 0);
}

static void test_peer_failure_resends_unacked(void **state)
{
	struct osd_peer *p1;
	struct osd_conn *old;

	(void)state;
	peers_up(1u << 20);
	p1 = peer_of(1);
	client_write(30, name_in_pg(0), 0x81, 1024, true);
	client_write(31, name_in_pg(1), 0x82, 1024, true);
	ack(1, 1, 0);
	ack(2, 1, 0);
	ack(2, 2, 0);
	/* osd 1's connection breaks: its posted write completes with an error first */
	old = p1->conn;
	post_done(0, 0);
	post_done(2, -ECONNRESET);
	osd_repl_peer_failed(&osd, p1);
	assert_null(p1->conn);
	/* a new connection, a new ring: the unacked record (v2) goes again */
	p1->next_connect_ms = 0;
	assert_int_equal(osd_peer_connect(&osd, p1), -EAGAIN);
	assert_true(p1->conn != old);
	grant_ring(1, 1u << 20);
	assert_true(F.posts[F.nposts - 1].ep == p1->conn->ep);
	assert_true(F.posts[F.nposts - 1].version == 2);
	commit_done(0, 0);
	commit_done(1, 0);
	assert_int_equal(F.nreplies, 1); /* v1 done; v2 waits for osd 1's new ACK */
	ack(1, 2, 0);
	assert_int_equal(F.nreplies, 2);
	assert_true(F.replies[1].tid == 31);
	for (unsigned int i = 0; i < F.nposts; i++)
		if (!F.posts[i].done)
			post_done(i, 0);
	assert_int_equal(F.bufs, 0);
}

static void test_below_min_size_posts_nothing(void **state)
{
	struct mon_inc inc;
	struct mon_op op;
	struct mon_osd o1, o2;

	(void)state;
	/* the two replicas down: the acting set is us alone, under min_size 2 */
	mon_inc_init(&inc);
	inc.epoch = 3;
	o1 = mk_osd((uint32_t)acting[1]);
	o2 = mk_osd((uint32_t)acting[2]);
	o1.state = o2.state = MON_OSD_EXISTS | MON_OSD_IN;
	op.kind = MON_OP_OSD_SET;
	op.osd = o1;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	op.osd = o2;
	assert_int_equal(mon_inc_add(&inc, &op), 0);
	assert_int_equal(mon_map_apply(&osd.map, &inc), 0);
	mon_inc_free(&inc);
	pool = mon_map_pool(&osd.map, 1); /* the map's arrays moved */
	client_write(40, name_in_pg(0), 0x90, 1024, true);
	assert_int_equal(F.nposts, 0);
	assert_int_equal(F.ncommits, 0);
	assert_int_equal(F.nreplies, 0);
	assert_true(the_osd_pg()->head->blocked);
	/* a PG with a queued op is on the tick's list (its safety net, osd_pgtick.c) */
	assert_true(the_osd_pg()->tick_listed);
	/* its timer fires: answered once, -ETIMEDOUT (the 30 s of setup cut to 1 ms) */
	evl_timer_cancel(osd.loop, &the_osd_pg()->head->timer);
	assert_int_equal(evl_timer_arm(osd.loop, &the_osd_pg()->head->timer, 1000, 0), 0);
	for (int i = 0; i < 2000 && F.nreplies == 0; i++)
		evl_run_once(osd.loop, 5);
	assert_int_equal(F.nreplies, 1);
	assert_int_equal(F.replies[0].r.status, -ETIMEDOUT);
	assert_null(the_osd_pg()->head);
	assert_int_equal(F.bufs, 0);
}

static void test_not_primary_and_stale(void **state)
{
	struct proto_osd_op m = {.op = PROTO_OP_WRITE, .pool = 1, .flags = PROTO_OP_F_INLINE};
	uint8_t d[16] = {0};

	(void)state;
	m.pg = the_pg;
	m.epoch = 1; /* older than ours */
	m.length = m.data_len = sizeof(d);
	m.data = d;
	strcpy(m.name, name_in_pg(0));
	m.name_len = strlen(m.name);
	osd_op_recv(&client, 50, &m);
	assert_int_equal(F.replies[0].r.status, -ESTALE);
	m.epoch = osd.map.epoch;
	m.pg = (the_pg + 1) % pool->pg_num; /* the name is not in that PG */
	osd_op_recv(&client, 51, &m);
	assert_int_equal(F.replies[1].r.status, -EINVAL);
	assert_int_equal(F.nposts, 0);
	assert_null(osd_pg_find(&osd, 1, the_pg));
}

/* At osd_max_ops_per_conn the client's connection is paused; a completion resumes it. */
static void test_ops_per_conn_pause(void **state)
{
	(void)state;
	osd.max_ops_per_conn = 2;
	peers_up(1u << 20);
	client_write(1, name_in_pg(0), 0x11, 4096, true);
	assert_false(F.paused);
	client_write(2, name_in_pg(1), 0x22, 4096, true);
	assert_true(F.paused);
	assert_true(client.paused);
	assert_int_equal(osd.ctr.conn_pauses, 1);
	assert_int_equal(client.ops_inflight, 2);
	/* the first write completes: room for one, the connection reads again */
	for (unsigned int i = 0; i < F.nposts; i++)
		if (F.posts[i].version == 1)
			post_done(i, 0);
	ack(1, 1, 0);
	ack(2, 1, 0);
	commit_done(0, 0);
	assert_int_equal(F.nreplies, 1);
	assert_int_equal(F.replies[0].r.status, 0);
	assert_false(F.paused);
	assert_false(client.paused);
	assert_int_equal(client.ops_inflight, 1);
	for (unsigned int i = 0; i < F.nposts; i++)
		if (F.posts[i].version == 2)
			post_done(i, 0);
	ack(1, 2, 0);
	ack(2, 2, 0);
	commit_done(1, 0);
	assert_int_equal(F.nreplies, 2);
	assert_int_equal(client.ops_inflight, 0);
}

/*
 * A read does not block the reactor: while the device reads, a write of the
 * same object waits (it would change what is read), a write of another
 * object goes, and the data goes to the client once the read completed.
 */
static void test_read_async_orders_writes(void **state)
{
	(void)state;
	peers_up(1u << 20);
	client_read(1, name_in_pg(0), 8192);
	assert_int_equal(F.nreads, 1);
	assert_int_equal(F.nposts, 0);
	client_write(2, name_in_pg(0), 0x22, 4096, true); /* the same object */
	client_write(3, name_in_pg(1), 0x33, 4096, true); /* another one */
	assert_int_equal(F.ncommits, 0); /* version order: 3 waits behind 2 */
	assert_int_equal(posts_of(POST_WRITE_IMM), 0);
	read_done(0, 0);
	/* the data to the client's buffer, and both writes ordered now */
	assert_int_equal(posts_of(POST_WRITE), 1);
	assert_true(F.posts[0].kind == POST_WRITE && F.posts[0].ep == client_ep &&
		    F.posts[0].len == 8192);
	assert_int_equal(F.ncommits, 2);
	assert_int_equal(F.commits[0].first_byte, 0x22);
	assert_int_equal(F.nreplies, 0);
	post_done(0, 0); /* the data landed: the read's reply */
	assert_int_equal(F.nreplies, 1);
	assert_true(F.replies[0].tid == 1 && F.replies[0].r.status == 0 &&
		    F.replies[0].r.length == 8192);
	for (unsigned int i = 1; i < F.nposts; i++)
		post_done(i, 0);
	for (unsigned int v = 1; v <= 2; v++) {
		ack(1, v, 0);
		ack(2, v, 0);
		commit_done(v - 1, 0);
	}
	assert_int_equal(F.nreplies, 3);
	assert_int_equal(F.bufs, 0);
	assert_null(the_osd_pg()->head);
}

/*
 * A push of an object reads its chunk (store_read_start): a write of that
 * object stays READY, and the PG's later writes behind it, until the chunk
 * was posted and the PG kicked, so the replica gets the chunk first.
 */
static void test_write_waits_for_push_read(void **state)
{
	char held[64];

	(void)state;
	peers_up(1u << 20);
	snprintf(held, sizeof(held), "%s", name_in_pg(0));
	F.push_reading = held;
	client_write(2, name_in_pg(0), 0x22, 4096, true); /* the object being pushed */
	client_write(3, name_in_pg(1), 0x33, 4096, true); /* another: version order */
	assert_int_equal(F.ncommits, 0);
	assert_int_equal(posts_of(POST_WRITE_IMM), 0);
	assert_int_equal(F.busy, 0);
	osd_pg_kick(the_osd_pg()); /* a kick while the read still runs changes nothing */
	assert_int_equal(F.ncommits, 0);
	F.push_reading = NULL; /* the chunk is posted; the read's callback kicks the PG */
	osd_pg_kick(the_osd_pg());
	assert_int_equal(F.ncommits, 2);
	assert_int_equal(F.commits[0].first_byte, 0x22);
	assert_int_equal(F.commits[1].first_byte, 0x33);
	assert_int_equal(posts_of(POST_WRITE_IMM), 4);
	for (unsigned int i = 0; i < F.nposts; i++)
		post_done(i, 0);
	for (unsigned int v = 1; v <= 2; v++) {
		ack(1, v, 0);
		ack(2, v, 0);
		commit_done(v - 1, 0);
	}
	assert_int_equal(F.nreplies, 2);
	assert_int_equal(F.bufs, 0);
	assert_null(the_osd_pg()->head);
}

/*
 * An op answered while its device read runs (its primary moved, its client
 * went) keeps its buffer until the read completed: the device writes into
 * it. A failed read (a block's crc) is the client's answer.
 */
static void test_read_answered_while_reading(void **state)
{
	struct osd_conn other = client;
	struct mon_map next;

	(void)state;
	other.ep = (struct fab_ep *)&F.posts[1];
	client_read_on(&client, 1, name_in_pg(0), 4096);
	client_read_on(&client, 2, name_in_pg(1), 4096);
	client_read_on(&client, 3, name_in_pg(2), 4096);
	client_read_on(&other, 4, name_in_pg(3), 4096);
	assert_int_equal(F.nreads, 4);
	assert_int_equal(F.bufs, 4);
	read_done(2, -WEFT_E_CORRUPT);
	assert_int_equal(F.nreplies, 1);
	assert_true(F.replies[0].tid == 3 && F.replies[0].r.status == -WEFT_E_CORRUPT);
	assert_int_equal(F.bufs, 3);
	/* the other client goes: no reply for its read ever, the buffer after the read */
	osd_op_conn_failed(&osd, &other);
	assert_int_equal(F.bufs, 3);
	read_done(3, 0);
	assert_int_equal(F.bufs, 2);
	/* not the primary any more: reads 1 and 2 answered -ESTALE at once, freed later */
	map_build(&next, 3, 3);
	next.osds[acting[0]].state &= ~MON_OSD_UP;
	mon_map_free(&osd.map);
	osd.map = next;
	osd_op_map_changed(&osd);
	assert_int_equal(F.nreplies, 3);
	assert_int_equal(F.replies[1].r.status, -ESTALE);
	assert_int_equal(F.replies[2].r.status, -ESTALE);
	assert_int_equal(F.bufs, 2);
	read_done(0, 0);
	read_done(1, 0);
	assert_int_equal(F.bufs, 0);
	assert_int_equal(F.nreplies, 3);
	assert_int_equal(posts_of(POST_WRITE), 0);
	assert_null(the_osd_pg()->head);
	assert_int_equal(client.ops_inflight, 0);
}

static void settle_writes(unsigned int first_commit, unsigned int n);

static void test_scrub_fence(void **state)
{
	char held[64], other[64];

	(void)state;
	peers_up(1u << 20);
	snprintf(held, sizeof(held), "%s", name_in_pg(0));
	snprintf(other, sizeof(other), "%s", name_in_pg(1));
	client_write(1, other, 0x11, 4096, true); /* ordered before the batch */
	assert_int_equal(F.ncommits, 1);
	assert_true(osd_op_range_busy(the_osd_pg(), NULL, NULL));
	assert_true(osd_op_range_busy(the_osd_pg(), NULL, other));
	assert_false(osd_op_range_busy(the_osd_pg(), other, NULL)); /* (other, end] */
	F.scrub_held = held;
	client_write(2, held, 0x22, 4096, true);
	client_write(3, other, 0x33, 4096, true); /* behind it: version order */
	assert_int_equal(F.ncommits, 1);
	settle_writes(0, 1);
	assert_int_equal(F.nreplies, 1);
	assert_false(osd_op_range_busy(the_osd_pg(), NULL, NULL)); /* held ones are not ordered */
	F.scrub_held = NULL; /* the batch ended: its kick */
	osd_pg_kick(the_osd_pg());
	assert_int_equal(F.ncommits, 3);
	assert_int_equal(F.commits[1].first_byte, 0x22);
	assert_int_equal(F.commits[2].first_byte, 0x33);
	settle_writes(1, 2);
	assert_int_equal(F.nreplies, 3);
	assert_int_equal(F.bufs, 0);
	assert_null(the_osd_pg()->head);
}

static void client_cmp_write(uint64_t tid, const char *name, uint8_t cmp_b, uint8_t b,
			     uint32_t cmp_len, uint32_t len)
{
	static uint8_t data[8192];
	struct proto_osd_op m = {.op = PROTO_OP_CMP_WRITE_FULL, .pool = 1, .epoch = osd.map.epoch};

	assert_true(cmp_len <= len && len <= sizeof(data));
	memset(data, cmp_b, cmp_len);
	memset(data + cmp_len, b, len - cmp_len);
	m.pg = the_pg;
	m.offset = cmp_len;
	m.length = len;
	m.name_len = strlen(name);
	memcpy(m.name, name, m.name_len + 1);
	m.flags = PROTO_OP_F_INLINE;
	m.data = data;
	m.data_len = len;
	osd_op_recv(&client, tid, &m);
}

/* Every posted record written, every replica acked and commit i done, for versions 1..n. */
static void settle_writes(unsigned int first_commit, unsigned int n)
{
	for (unsigned int i = 0; i < F.nposts; i++)
		if (!F.posts[i].done)
			post_done(i, 0);
	for (unsigned int k = 0; k < n; k++) {
		ack(1, first_commit + k + 1, 0);
		ack(2, first_commit + k + 1, 0);
		commit_done(first_commit + k, 0);
	}
}

/*
 * cmp_write_full compares what the store holds through store_read_start:
 * the loop goes on while the device reads, the op and the PG's writes
 * behind it wait (a kick meanwhile reads nothing twice), the compare runs
 * when the read is back. A match becomes a write_full of the rest of the
 * payload; a mismatch answers -ECANCELED and commits nothing; an op
 * answered while its read runs keeps the read's buffer until it is back.
 */
static void test_cmp_write_reads_async(void **state)
{
	struct mon_map next;

	(void)state;
	peers_up(1u << 20);
	F.stat_size = 64; /* the fake device holds 0x5a bytes */
	client_cmp_write(1, name_in_pg(0), 0x5a, 0x11, 64, 64 + 4096);
	client_write(2, name_in_pg(1), 0x22, 4096, true);
	assert_int_equal(F.nreads, 1);
	assert_int_equal(F.ncommits, 0);
	assert_int_equal(posts_of(POST_WRITE_IMM), 0);
	osd_pg_kick(the_osd_pg());
	assert_int_equal(F.nreads, 1);
	assert_int_equal(F.ncommits, 0);
	read_done(0, 0);
	assert_int_equal(F.ncommits, 2);
	assert_int_equal(F.commits[0].first_byte, 0x11); /* the compared prefix is gone */
	assert_int_equal(F.commits[1].first_byte, 0x22);
	settle_writes(0, 2);
	assert_int_equal(F.nreplies, 2);
	assert_true(F.replies[0].tid == 1 && F.replies[0].r.status == 0);
	assert_true(F.replies[1].tid == 2 && F.replies[1].r.status == 0);
	/* a mismatch: answered, nothing committed */
	client_cmp_write(3, name_in_pg(0), 0x01, 0x33, 64, 64 + 4096);
	assert_int_equal(F.nreads, 2);
	read_done(1, 0);
	assert_int_equal(F.nreplies, 3);
	assert_true(F.replies[2].tid == 3 && F.replies[2].r.status == -ECANCELED);
	assert_int_equal(F.ncommits, 2);
	/* a failed read is the answer too */
	client_cmp_write(4, name_in_pg(0), 0x5a, 0x44, 64, 64 + 4096);
	read_done(2, -EIO);
	assert_int_equal(F.nreplies, 4);
	assert_true(F.replies[3].tid == 4 && F.replies[3].r.status == -EIO);
	/* answered -ESTALE while reading (not the primary any more): freed after the read */
	client_cmp_write(5, name_in_pg(0), 0x5a, 0x55, 64, 64 + 4096);
	assert_int_equal(F.nreads, 4);
	map_build(&next, 3, 3);
	next.osds[acting[0]].state &= ~MON_OSD_UP;
	mon_map_free(&osd.map);
	osd.map = next;
	osd_op_map_changed(&osd);
	assert_int_equal(F.nreplies, 5);
	assert_int_equal(F.replies[4].r.status, -ESTALE);
	read_done(3, 0);
	assert_int_equal(F.ncommits, 2);
	assert_int_equal(F.nreplies, 5);
	assert_int_equal(F.bufs, 0);
	assert_null(the_osd_pg()->head);
}

/* A PG id past pg_num and a forged far-future epoch: refused at once, counted, nothing made. */
/*
 * The store has no room until a checkpoint gives freed units back
 * (store_tx_nowait: -EAGAIN, the checkpoint runs off the reactor): the
 * write stays READY with nothing logged, replicated or answered, the next
 * write of the PG waits behind it, and the PG's tick submits both, in
 * order.
 */
static void test_store_space_wait(void **state)
{
	(void)state;
	peers_up(1u << 20);
	F.space_waits = 3;
	client_write(1, name_in_pg(0), 0x11, 4096, true);
	client_write(2, name_in_pg(1), 0x22, 4096, true);
	/* each arrival kicked the PG: the first write was tried twice, the second never */
	assert_int_equal(F.space_waits, 1);
	assert_int_equal(F.nowait, 2);
	assert_int_equal(F.ncommits, 0);
	assert_int_equal(posts_of(POST_WRITE_IMM), 0);
	assert_int_equal(F.nreplies, 0);
	assert_int_equal(F.busy, 0);
	assert_true(the_osd_pg()->tick_listed);
	/* the first tick: the store still waits */
	osd_pg_kick(the_osd_pg());
	assert_int_equal(F.ncommits, 0);
	assert_int_equal(F.space_waits, 0);
	/* the next: both go, the first first */
	osd_pg_kick(the_osd_pg());
	assert_int_equal(F.ncommits, 2);
	assert_true(((struct osd_op *)F.commits[0].arg)->tid == 1);
	assert_true(((struct osd_op *)F.commits[1].arg)->tid == 2);
	assert_int_equal(posts_of(POST_WRITE_IMM), 4);
	for (unsigned int i = 0; i < 2; i++) {
		uint64_t v = F.commits[i].version;

		commit_done(i, 0);
		ack(1, v, 0);
		ack(2, v, 0);
	}
	assert_int_equal(F.nreplies, 2);
	assert_true(F.replies[0].tid == 1 && F.replies[0].r.status == 0);
	assert_true(F.replies[1].tid == 2 && F.replies[1].r.status == 0);
	for (unsigned int i = 0; i < F.nposts; i++)
		post_done(i, 0);
	assert_null(the_osd_pg()->head);
	assert_int_equal(F.bufs, 0);
}

/*
 * A replica that accepts the connection and never grants a ring: its
 * peer's own timer tears the connection down after ring_grant_ms (2 x
 * ms_connect_timeout) so it is made again; one that granted is left alone.
 */
static void test_ring_grant_late(void **state)
{
	(void)state;
	osd.ring_grant_ms = 20;
	assert_int_equal(osd_peer_connect(&osd, peer_of(1)), -EAGAIN);
	assert_int_equal(osd_peer_connect(&osd, peer_of(2)), -EAGAIN);
	grant_ring(2, 1u << 20);
	assert_false(peer_of(1)->conn->failed);
	for (int i = 0; i < 400 && !peer_of(1)->conn->failed; i++)
		evl_run_once(osd.loop, 5);
	assert_true(peer_of(1)->conn->failed);
	assert_false(peer_of(2)->conn->failed);
	assert_true(peer_of(2)->ring_ready);
}

static void test_bad_pg_and_insane_epoch(void **state)
{
	struct proto_osd_op m = {.op = PROTO_OP_READ, .pool = 1, .length = 16};

	(void)state;
	strcpy(m.name, name_in_pg(0));
	m.name_len = strlen(m.name);
	m.pg = pool->pg_num; /* one past the last */
	m.epoch = osd.map.epoch;
	osd_op_recv(&client, 60, &m);
	assert_int_equal(F.replies[0].r.status, -EINVAL);
	assert_int_equal(osd.ctr.bad_pg_refused, 1);
	m.pg = 0xffffffffu;
	osd_op_recv(&client, 61, &m);
	assert_int_equal(F.replies[1].r.status, -EINVAL);
	assert_int_equal(osd.ctr.bad_pg_refused, 2);
	/* a little ahead of our map: we may be behind, the client retries */
	m.pg = the_pg;
	m.epoch = osd.map.epoch + osd.epoch_ahead_max;
	osd_op_recv(&client, 62, &m);
	assert_int_equal(F.replies[2].r.status, -EAGAIN);
	assert_int_equal(osd.ctr.bad_epoch_refused, 0);
	/* far ahead: forged, refused rather than retried forever */
	m.epoch = osd.map.epoch + osd.epoch_ahead_max + 1;
	osd_op_recv(&client, 63, &m);
	assert_int_equal(F.replies[3].r.status, -EINVAL);
	m.epoch = UINT32_MAX;
	osd_op_recv(&client, 64, &m);
	assert_int_equal(F.replies[4].r.status, -EINVAL);
	assert_int_equal(osd.ctr.bad_epoch_refused, 2);
	assert_int_equal(F.nposts, 0);
	assert_null(osd_pg_find(&osd, 1, the_pg));
	assert_null(osd_pg_find(&osd, 1, pool->pg_num));
	assert_int_equal(client.ops_inflight, 0);
}

/* A replica's ring record for a PG its pool cannot have, or from a forged epoch. */
/* Ring requests past osd_repl_rings_max_bytes are refused, counted, the connection closed. */
static void test_rings_bounded(void **state)
{
	struct osd_conn rc = {.osd = &osd, .kind = OSD_CONN_REPLICA, .hello_done = true};
	struct proto_msg m = {.type = PROTO_REPL_RING_REQ};
	uint64_t saved_size = osd.ring_size;

	(void)state;
	rc.ep = (struct fab_ep *)&rc;
	m.repl_ring_req.osd_id = 7;
	osd.ring_size = 1 << 20;
	osd.rings_max = 2 << 20;
	osd.ring_bytes = 2 << 20; /* two rings granted already */
	osd_repl_recv(&rc, &m);
	assert_int_equal(osd.ctr.rings_refused, 1);
	assert_true(rc.failed);
	assert_null(rc.ring);
	assert_int_equal(F.nsent, 0); /* no grant */
	assert_int_equal(osd.ring_bytes, 2 << 20);
	/* room for one: it is counted from its allocation (the fake fabric fails the rest) */
	osd.ring_bytes = 1 << 20;
	rc.failed = false;
	osd_repl_recv(&rc, &m);
	assert_int_equal(osd.ctr.rings_refused, 1);
	assert_non_null(rc.ring);
	assert_int_equal(osd.ring_bytes, 2 << 20); /* until osd_conn_free */
	assert_true(rc.failed);
	free(rc.ring);
	osd.ring_bytes = 0;
	osd.ring_size = saved_size;
}

static void test_replica_record_checked(void **state)
{
	static uint8_t ring[4096] __attribute__((aligned(64)));
	struct osd_rec_hdr h = {.op = PROTO_OP_WRITE, .pool = 1, .version = 1, .length = 0};
	struct osd_conn rc = {.osd = &osd, .kind = OSD_CONN_REPLICA, .hello_done = true};
	size_t len;

	(void)state;
	rc.ep = (struct fab_ep *)&rc;
	rc.ring = ring;
	rc.ring_size = sizeof(ring);
	strcpy(h.name, "obj");
	h.name_len = 3;
	h.epoch = osd.map.epoch;
	h.pg = pool->pg_num + 5;
	assert_int_equal(osd_rec_hdr_encode(&h, ring, sizeof(ring), &len), 0);
	osd_repl_write_imm_now(&rc, 0, (uint32_t)len);
	assert_int_equal(osd.ctr.bad_pg_refused, 1);
	assert_int_equal(F.nsent, 1);
	assert_int_equal(F.sent[0].type, PROTO_REPL_ACK);
	assert_int_equal(F.sent[0].repl_ack.status, -EINVAL);
	h.pg = the_pg;
	h.epoch = osd.map.epoch + osd.epoch_ahead_max + 1;
	assert_int_equal(osd_rec_hdr_encode(&h, ring, sizeof(ring), &len), 0);
	osd_repl_write_imm_now(&rc, 0, (uint32_t)len);
	assert_int_equal(osd.ctr.bad_epoch_refused, 1);
	assert_int_equal(F.sent[1].repl_ack.status, -EINVAL);
	assert_int_equal(F.rec_apply, 0);
	assert_false(rc.failed); /* refused, not a reason to drop an honest-looking link */
	/* from an older map, a PG our map no longer has (merged away): an ended interval */
	h.epoch = osd.map.epoch - 1;
	h.pg = pool->pg_num + 1;
	assert_int_equal(osd_rec_hdr_encode(&h, ring, sizeof(ring), &len), 0);
	osd_repl_write_imm_now(&rc, 0, (uint32_t)len);
	assert_int_equal(F.sent[2].repl_ack.status, -ESTALE);
	assert_int_equal(osd.ctr.bad_pg_refused, 1);
	h.pg = the_pg;
	/* a sane record goes on to the PG (the fake refuses it: not our subject) */
	h.epoch = osd.map.epoch;
	assert_int_equal(osd_rec_hdr_encode(&h, ring, sizeof(ring), &len), 0);
	osd_repl_write_imm_now(&rc, 0, (uint32_t)len);
	assert_int_equal(F.rec_apply, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_write_replicates_with_local_commit, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_commit_last_and_ring_slots, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pulls_out_of_order_keep_arrival_order, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_pull_failure_answers_it, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_replica_failure_is_maybe, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_replica_fence_is_estale, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_interval_change_and_lost_client, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_interval_change_answers_eagain, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ring_full_then_freed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_peer_failure_resends_unacked, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_below_min_size_posts_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_primary_and_stale, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ops_per_conn_pause, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bad_pg_and_insane_epoch, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_space_wait, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ring_grant_late, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_replica_record_checked, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_rings_bounded, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_async_orders_writes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_answered_while_reading, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_waits_for_push_read, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cmp_write_reads_async, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_scrub_fence, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
