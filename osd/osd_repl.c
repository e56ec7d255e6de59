/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Replication over the cluster network (docs/osd.md, "Replication ring").
 *
 * Primary side: one connection and one ring per replica. The connection
 * leaves from our cluster address; the replica answers RING_REQ with the
 * key of a ring it registered for us. A record (header + payload, already
 * contiguous in the op's registered buffer) goes into the ring with one
 * write_imm whose immediate is the record's offset / 64. Ring space is
 * reused only after the replica's ACK for that record (the credit).
 *
 * Replica side: the write_imm completion names the record; it is decoded,
 * turned into a store transaction (which copies the data) and acked with a
 * small send once that transaction is durable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd_pg.h"

#define OSD_RING_SLOTS	 1024u
#define OSD_RECONNECT_MS 500u

struct osd_replica_ctx {
	struct osd *osd;
	struct osd_conn *conn; /* checked against osd->conns before use */
	uint64_t conn_gen;
	uint64_t ring_off;
	uint32_t pool, pg;
	uint64_t version;
};

static uint64_t osd_conn_gen_next = 1;

struct osd_conn *osd_peer_conn_to(struct osd *osd, uint32_t id)
{
	struct osd_peer *p = osd_peer_get(osd, id);

	if (p == NULL)
		return NULL;
	if (p->conn == NULL)
		osd_peer_connect(osd, p); /* rate-limited; sends RING_REQ first */
	return p->conn != NULL && !p->conn->failed ? p->conn : NULL;
}

static void osd_peer_grant_late(struct evl *evl, struct evl_timer *t, void *arg);

struct osd_peer *osd_peer_get(struct osd *osd, uint32_t id)
{
	struct osd_peer *p;

	for (p = osd->peers; p; p = p->next)
		if (p->id == id)
			return p;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return NULL;
	p->slots = calloc(OSD_RING_SLOTS, sizeof(*p->slots));
	if (p->slots == NULL) {
		free(p);
		return NULL;
	}
	p->id = id;
	p->osd = osd;
	p->slot_cap = OSD_RING_SLOTS;
	evl_timer_init(&p->grant_timer, osd_peer_grant_late, p);
	p->next = osd->peers;
	osd->peers = p;
	return p;
}

/*
 * The peer's timer, ring_grant_ms (twice ms_connect_timeout) after a
 * connection was started. A replica that accepted but never granted its
 * ring (a lost RING_REQ, a replica stuck in start-up) would stall every
 * write of the PGs it is in without an error anywhere: give up on that
 * connection, say so, and let osd_net_progress connect again. A timer of
 * an earlier connection finds the newer one (which moved it) or none.
 */
static void osd_peer_grant_late(struct evl *evl, struct evl_timer *t, void *arg)
{
	struct osd_peer *p = arg;
	struct osd *osd = p->osd;

	(void)evl;
	(void)t;
	if (p->conn == NULL || p->ring_ready || p->conn->failed ||
	    clock_now_ms() - p->connect_ms < osd->ring_grant_ms)
		return;
	log_warn("osd", "%s: osd.%u (%s) granted no replication ring within %llu ms; reconnecting",
		 osd->name, p->id, p->addr, (unsigned long long)osd->ring_grant_ms);
	osd_conn_kill(p->conn); /* torn down and retried by osd_net_progress */
}

static void osd_peer_reset(struct osd_peer *p)
{
	p->conn = NULL;
	p->ring_ready = false;
	p->slot_head = p->slot_count = 0;
}

/* Connect to a replica from our cluster address (rate-limited after a failure). */
int osd_peer_connect(struct osd *osd, struct osd_peer *p)
{
	const struct mon_osd *o = mon_map_osd(&osd->map, p->id);
	struct proto_msg m = {.type = PROTO_REPL_RING_REQ};
	const char *addr;
	uint64_t now = clock_now_ms();
	int rc;

	if (o == NULL || !(o->state & MON_OSD_UP) || now < p->next_connect_ms)
		return -EAGAIN;
	p->next_connect_ms = now + OSD_RECONNECT_MS;
	addr = o->cluster_addr[0] ? o->cluster_addr : o->public_addr;
	snprintf(p->addr, sizeof(p->addr), "%s", addr);
	p->conn = osd_conn_connect(osd, addr, OSD_CONN_PEER);
	if (p->conn == NULL)
		return -ENOTCONN; /* logged; tried again after the backoff */
	p->conn->peer = p;
	p->conn->peer_id = p->id;
	p->conn->peer_known = true;
	p->connect_ms = now;
	if (evl_timer_arm(osd->loop, &p->grant_timer, osd->ring_grant_ms * 1000u, 0) != 0)
		log_warn("osd", "%s: no timer for osd.%u's ring grant: a peer that never "
				"grants one is not reconnected", osd->name, p->id);
	log_info("osd", "%s: connecting to osd.%u at %s for replication (map epoch %u)", osd->name,
		 p->id, addr, osd->map.epoch);
	/* queued until the connection is up, behind the hello: the messenger keeps order */
	m.repl_ring_req.osd_id = osd->id;
	rc = osd_conn_send(p->conn, &m, 0);
	if (rc != 0)
		osd_conn_kill(p->conn);
	return rc != 0 ? rc : -EAGAIN;
}

/* Room for len bytes in the ring, after the newest record or wrapped to 0. */
static int osd_ring_alloc(struct osd_peer *p, uint64_t len, uint64_t *off_out)
{
	const struct osd_ring_slot *first, *last;
	uint64_t head, tail;

	if (len > p->ring.len)
		return -E2BIG;
	if (p->slot_count == 0) {
		*off_out = 0;
		return 0;
	}
	if (p->slot_count == p->slot_cap)
		return -EAGAIN;
	first = &p->slots[p->slot_head];
	last = &p->slots[(p->slot_head + p->slot_count - 1) % p->slot_cap];
	tail = first->off;
	head = last->off + last->len;
	if (head > tail) { /* not wrapped: [head, end) then [0, tail) */
		if (p->ring.len - head >= len) {
			*off_out = head;
			return 0;
		}
		if (tail >= len) {
			*off_out = 0;
			return 0;
		}
		return -EAGAIN;
	}
	if (tail - head >= len) { /* wrapped: only [head, tail) */
		*off_out = head;
		return 0;
	}
	return -EAGAIN;
}

static int osd_repl_post(struct osd *osd, struct osd_op *op, unsigned int idx)
{
	struct osd_peer *p = osd_peer_get(osd, (uint32_t)op->acting[idx]);
	uint64_t rec_len =
	    op->hdr_len +
	    (op->op == PROTO_OP_WRITE || op->op == PROTO_OP_WRITE_FULL ? op->length : 0);
	uint64_t slot_len = (rec_len + OSD_REC_ALIGN - 1) & ~(uint64_t)(OSD_REC_ALIGN - 1);
	struct fab_sge src = {op->buf, (uint32_t)rec_len, op->sge.mr};
	struct osd_rma *ctx = &op->rrec[idx];
	struct osd_ring_slot *s;
	uint64_t off;
	int rc;

	if (p == NULL)
		return -ENOMEM;
	if (p->conn == NULL)
		return osd_peer_connect(osd, p);
	if (!p->ring_ready || p->conn->failed)
		return -EAGAIN;
	rc = osd_ring_alloc(p, slot_len, &off);
	if (rc != 0)
		return rc;
	/* the op's own slot for this replica: no allocation per record */
	*ctx = (struct osd_rma){op, OSD_RMA_REPL, (uint8_t)idx};
	rc = fab_write_imm(p->conn->ep, &src, &p->ring, off, (uint32_t)(off / OSD_REC_ALIGN), ctx);
	if (rc != 0)
		return rc;
	s = &p->slots[(p->slot_head + p->slot_count) % p->slot_cap];
	s->off = off;
	s->len = slot_len;
	s->acked = false;
	p->slot_count++;
	op->refs++;
	op->repl_sent |= 1u << idx;
	osd->ctr.repl_records++;
	osd->ctr.repl_bytes += rec_len;
	return 0;
}

/*
 * A recovery push (osd_push.c): a record already built in a registered
 * buffer goes into the peer's ring like a replication record; its ACK is
 * matched by ring offset. -EAGAIN while not connected or the ring is full.
 */
int osd_repl_post_raw(struct osd *osd, uint32_t peer_id, const struct fab_sge *src,
		      uint64_t *ring_off_out)
{
	struct osd_peer *p = osd_peer_get(osd, peer_id);
	uint64_t slot_len = (src->len + OSD_REC_ALIGN - 1) & ~(uint64_t)(OSD_REC_ALIGN - 1);
	struct osd_ring_slot *s;
	uint64_t off;
	int rc;

	if (p == NULL)
		return -ENOMEM;
	if (p->conn == NULL)
		return osd_peer_connect(osd, p);
	if (!p->ring_ready || p->conn->failed)
		return -EAGAIN;
	rc = osd_ring_alloc(p, slot_len, &off);
	if (rc != 0)
		return rc;
	/* no completion context: the ACK, not the write completion, ends a push */
	rc = fab_write_imm(p->conn->ep, src, &p->ring, off, (uint32_t)(off / OSD_REC_ALIGN), NULL);
	if (rc != 0)
		return rc;
	s = &p->slots[(p->slot_head + p->slot_count) % p->slot_cap];
	s->off = off;
	s->len = slot_len;
	s->acked = false;
	p->slot_count++;
	*ring_off_out = off;
	return 0;
}

/*
 * Post every record of the PG that a replica still lacks, in version
 * order: once a post to a peer fails (no ring yet, ring full) later
 * records for that peer wait too, so a replica applies them in order.
 */
void osd_repl_pg_flush(struct osd *osd, struct osd_pg *pg)
{
	int32_t stuck[PLC_MAX_REPLICAS * 2];
	unsigned int nstuck = 0;

	for (struct osd_op *op = pg->head; op; op = op->next) {
		uint32_t todo;

		if (op->state != OSD_OP_SUBMITTED)
			continue;
		todo = op->repl_wait & ~op->repl_sent;
		for (unsigned int i = 1; i < op->nacting && todo; i++) {
			bool skip = false;

			if (!(todo & (1u << i)))
				continue;
			for (unsigned int k = 0; k < nstuck; k++)
				skip |= stuck[k] == op->acting[i];
			if (skip)
				continue;
			if (osd_repl_post(osd, op, i) != 0) {
				struct osd_peer *p = osd_peer_get(osd, (uint32_t)op->acting[i]);

				if (p != NULL)
					p->blocked = true;
				if (nstuck < PLC_MAX_REPLICAS * 2)
					stuck[nstuck++] = op->acting[i];
			}
		}
	}
}

static void osd_repl_flush_all(struct osd *osd)
{
	struct osd_pg *pg;

	osd_pg_foreach(osd, pg)
		if (pg->head)
			osd_repl_pg_flush(osd, pg);
}

void osd_repl_peer_failed(struct osd *osd, struct osd_peer *p)
{
	struct osd_pg *pg;

	log_warn("osd", "%s: connection to osd.%u (%s) failed; records will be resent", osd->name,
		 p->id, p->addr);
	osd_peer_reset(p);
	/* whatever was in that ring is gone: every unacked record goes again */
	osd_pg_foreach(osd, pg)
		for (struct osd_op *op = pg->head; op; op = op->next)
			for (unsigned int i = 1; i < op->nacting; i++)
				if (op->acting[i] == (int32_t)p->id)
					op->repl_sent &= ~(1u << i);
}

static void osd_peer_acked(struct osd *osd, struct osd_peer *p, const struct proto_repl_ack *m)
{
	for (uint32_t i = 0; i < p->slot_count; i++) {
		struct osd_ring_slot *s = &p->slots[(p->slot_head + i) % p->slot_cap];

		if (s->off == m->ring_off && !s->acked) {
			s->acked = true;
			break;
		}
	}
	while (p->slot_count > 0 && p->slots[p->slot_head].acked) {
		p->slot_head = (p->slot_head + 1) % p->slot_cap;
		p->slot_count--;
	}
	osd->ctr.repl_acks++;
	if (!osd_push_acked(osd, p->id, m))
		osd_op_repl_acked(osd, p->id, m->pool, m->pg, m->version, m->status);
	/*
	 * Ring space came back: records that found the ring full go now. Only
	 * then: walking every PG on every ACK was a hot-path cost (issue 16), and
	 * the 100 ms tick flushes anyway.
	 */
	if (p->blocked) {
		p->blocked = false;
		osd_repl_flush_all(osd);
	}
}

/* ------------------------------------------------------------- replica side */

static void osd_replica_ring_req(struct osd_conn *conn, const struct proto_repl_ring_req *m)
{
	struct osd *osd = conn->osd;
	struct proto_msg g = {.type = PROTO_REPL_RING_GRANT};
	struct fab_rkey rk;
	int rc;

	if (conn->ring != NULL) {
		log_warn("osd", "%s: second ring request from %s, closing", osd->name,
			 osd_conn_peer(conn));
		osd_conn_kill(conn);
		return;
	}
	/* registered memory is what a peer costs us: bounded in all (docs/security.md) */
	if (osd->ring_bytes + osd->ring_size > osd->rings_max) {
		osd->ctr.rings_refused++;
		log_warn("osd",
			 "%s: refused a ring for osd.%u (%s): %llu MiB granted, "
			 "osd_repl_rings_max_bytes is %llu MiB; closing",
			 osd->name, m->osd_id, osd_conn_peer(conn),
			 (unsigned long long)(osd->ring_bytes >> 20),
			 (unsigned long long)(osd->rings_max >> 20));
		osd_conn_kill(conn);
		return;
	}
	conn->ring_size = osd->ring_size;
	conn->ring = aligned_alloc(4096, conn->ring_size);
	if (conn->ring == NULL) {
		osd_conn_kill(conn);
		return;
	}
	osd->ring_bytes += conn->ring_size;
	/* resident now on every backend (RDMA registration pins it anyway): RSS counts it */
	memset(conn->ring, 0, conn->ring_size);
	/*
	 * Registered once per primary connection, never per record; the key we
	 * grant reaches it from this connection only (where the fabric scopes
	 * keys), so no other peer can write into it.
	 */
	rc = fab_mr_reg(osd->dom, conn->ring, conn->ring_size,
			FAB_ACCESS_REMOTE_WRITE | FAB_ACCESS_SCOPED, &conn->ring_mr);
	if (rc == 0)
		rc = fab_rkey_scope(conn->ep, conn->ring_mr, conn->ring, conn->ring_size,
				    FAB_ACCESS_REMOTE_WRITE | FAB_SCOPE_LONG, &rk);
	if (rc != 0) {
		log_error("osd", "%s: ring for osd.%u: %s", osd->name, m->osd_id,
			  weft_strerror(rc));
		osd_conn_kill(conn);
		return;
	}
	conn->peer_id = m->osd_id;
	conn->peer_known = true;
	osd_hb_peer_alive(osd, m->osd_id);
	conn->gen = osd_conn_gen_next++;
	g.repl_ring_grant.ring = (struct proto_rkey){rk.addr, rk.len, rk.key};
	log_info("osd", "%s: replica ring of %llu MiB for osd.%u (%s)", osd->name,
		 (unsigned long long)(conn->ring_size >> 20), m->osd_id, osd_conn_peer(conn));
	if (osd_conn_send(conn, &g, 0) != 0)
		osd_conn_kill(conn);
}

void osd_repl_recv(struct osd_conn *conn, const struct proto_msg *m)
{
	struct osd_peer *p = conn->peer;

	if (conn->kind == OSD_CONN_REPLICA && m->type == PROTO_REPL_RING_REQ)
		return osd_replica_ring_req(conn, &m->repl_ring_req);
	if (conn->kind == OSD_CONN_PEER && p && m->type == PROTO_REPL_RING_GRANT) {
		const struct proto_rkey *r = &m->repl_ring_grant.ring;

		log_info("osd", "%s: osd.%u granted a ring of %llu MiB, %llu ms after connecting",
			 conn->osd->name, p->id, (unsigned long long)(r->len >> 20),
			 (unsigned long long)(clock_now_ms() - p->connect_ms));
		p->ring = (struct fab_rkey){r->addr, r->len, r->key};
		p->ring_ready = true;
		evl_timer_cancel(conn->osd->loop, &p->grant_timer);
		p->slot_head = p->slot_count = 0;
		osd_repl_flush_all(conn->osd);
		return;
	}
	if (conn->kind == OSD_CONN_PEER && p && m->type == PROTO_REPL_ACK)
		return osd_peer_acked(conn->osd, p, &m->repl_ack);
	if ((conn->kind == OSD_CONN_REPLICA && m->type == PROTO_PING) ||
	    (conn->kind == OSD_CONN_PEER && m->type == PROTO_PONG))
		return osd_hb_ping_recv(conn, m->type, &m->ping);
	log_warn("osd", "%s: unexpected %s message from %s, closing", conn->osd->name,
		 proto_type_name(m->type), osd_conn_peer(conn));
	osd_conn_kill(conn);
}

static void osd_replica_ack(struct osd_conn *conn, uint64_t ring_off, uint32_t pool, uint32_t pg,
			    uint64_t version, int status)
{
	struct proto_msg a = {.type = PROTO_REPL_ACK};

	a.repl_ack = (struct proto_repl_ack){ring_off, pool, pg, version, status};
	osd_conn_send(conn, &a, 0);
}

static void osd_replica_commit_cb(void *arg, int rc)
{
	struct osd_replica_ctx *c = arg;
	struct osd *osd = c->osd;

	osd->store_pending--;
	for (struct osd_conn *k = osd->conns; k; k = k->next) {
		if (k == c->conn && k->gen == c->conn_gen && !k->failed) {
			osd_replica_ack(k, c->ring_off, c->pool, c->pg, c->version, rc);
			break;
		}
	}
	free(c);
}

void osd_repl_write_imm(struct osd_conn *conn, uint32_t imm, uint32_t len)
{
	/* behind a message held for a newer map: in order, once our map catches up */
	if (osd_pg_rec_hold(conn, imm, len))
		osd_repl_write_imm_now(conn, imm, len);
}

/*
 * A record's PG and epoch, before anything is made for them: a PG id its
 * pool cannot have would create a PG here, and an epoch far past our map
 * is forged (osd_epoch_insane): 0, or -EINVAL (counted, logged). A PG our
 * newer map no longer has (merged away) is an ended interval's record:
 * -ESTALE, quietly, as the PG machine answers those.
 */
static int osd_repl_rec_check(struct osd_conn *conn, const struct osd_rec_hdr *h)
{
	struct osd *osd = conn->osd;
	const struct mon_pool *pool = mon_map_pool(&osd->map, h->pool);

	if (osd_epoch_insane(osd, h->epoch)) {
		osd->ctr.bad_epoch_refused++;
		osd_dos_log(osd,
			    "refused a record for pg %u.%x from %s: its map epoch %u is more than "
			    "%u past ours (%u, osd_epoch_ahead_max)",
			    h->pool, h->pg, osd_conn_peer(conn), h->epoch, osd->epoch_ahead_max,
			    osd->map.epoch);
		return -EINVAL;
	}
	if (h->pg < OSD_PG_ID_MAX && h->epoch < osd->map.epoch && pool != NULL &&
	    h->pg >= pool->pg_num)
		return -ESTALE;
	if (h->pg >= OSD_PG_ID_MAX ||
	    (h->epoch <= osd->map.epoch && pool != NULL && h->pg >= pool->pg_num)) {
		osd->ctr.bad_pg_refused++;
		osd_dos_log(osd, "refused a record for pg %u.%x from %s: pool %u has pg_num %u",
			    h->pool, h->pg, osd_conn_peer(conn), h->pool,
			    pool != NULL ? pool->pg_num : 0);
		return -EINVAL;
	}
	return 0;
}

void osd_repl_write_imm_now(struct osd_conn *conn, uint32_t imm, uint32_t len)
{
	struct osd *osd = conn->osd;
	uint64_t off = (uint64_t)imm * OSD_REC_ALIGN;
	struct osd_replica_ctx *c = NULL;
	struct osd_rec_hdr h;
	const char *rec, *data;
	uint32_t hl;
	int rc;

	if (conn->ring == NULL || off > conn->ring_size || len > conn->ring_size - off ||
	    osd_rec_hdr_decode((const char *)conn->ring + off, len, &h, &hl) != 0) {
		log_warn("osd", "%s: bad replication record (off %llu len %u) from %s, closing",
			 osd->name, (unsigned long long)off, len, osd_conn_peer(conn));
		osd_conn_kill(conn);
		return;
	}
	rc = osd_repl_rec_check(conn, &h);
	if (rc != 0) {
		osd_replica_ack(conn, off, h.pool, h.pg, h.version, rc);
		return;
	}
	rec = (const char *)conn->ring + off;
	data = rec + hl;
	c = calloc(1, sizeof(*c));
	rc = c == NULL ? -ENOMEM : 0;
	if (rc == 0) {
		*c = (struct osd_replica_ctx){osd, conn, conn->gen, off, h.pool, h.pg, h.version};
		/* data + PG log entry, or a recovery push (osd_pg.c) */
		rc = osd_pg_rec_apply(osd, &h, data, osd_replica_commit_cb, c);
	}
	if (rc != 0) {
		if (rc != -ESTALE) /* a record of an ended interval is refused quietly */
			log_error("osd", "%s pg %u.%x: replica write of %s v%llx: %s", osd->name,
				  h.pool, h.pg, h.name, (unsigned long long)h.version,
				  weft_strerror(rc));
		free(c);
		osd_replica_ack(conn, off, h.pool, h.pg, h.version, rc);
		return;
	}
	osd->store_pending++;
	osd->ctr.replica_records++;
	osd->ctr.replica_bytes += len;
}

void osd_repl_cleanup(struct osd *osd)
{
	while (osd->peers) {
		struct osd_peer *p = osd->peers;

		osd->peers = p->next;
		if (osd->loop != NULL)
			evl_timer_cancel(osd->loop, &p->grant_timer);
		free(p->slots);
		free(p);
	}
}
