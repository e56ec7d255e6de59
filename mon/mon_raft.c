/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Raft glue. The FSM applies map increments (struct mon_inc, encoded),
 * auth database ops and service-key rotations (mon_auth.h: tagged entry
 * kinds, so older logs read as before). The leader proposes one increment at a time: a
 * job's increment is built against the map it will apply to, so "set"
 * records never overwrite a change still in flight. The FSM refuses an
 * increment whose epoch is not map.epoch + 1 (the same way on every
 * replica), and the proposer rebuilds and retries it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "common/clock.h"
#include "common/log.h"
#include "mon/mon_priv.h"

#define MON_JOB_RETRIES 3

/* -------------------------------------------------------------- history */

static void mon_hist_put(struct mon *mon, uint32_t epoch, const void *buf, size_t len)
{
	struct mon_hist *h = &mon->hist[epoch % MON_HIST];
	void *copy = malloc(len);

	free(h->buf);
	h->buf = copy;
	h->len = copy != NULL ? len : 0;
	h->epoch = copy != NULL ? epoch : 0;
	if (copy != NULL)
		memcpy(copy, buf, len);
}

void mon_hist_free(struct mon *mon)
{
	for (unsigned int i = 0; i < MON_HIST; i++) {
		free(mon->hist[i].buf);
		memset(&mon->hist[i], 0, sizeof(mon->hist[i]));
	}
}

/* -------------------------------------------------------- subscriptions */

/* Bring one subscriber to the current epoch: increments if we hold them all, else a full map. */
static int mon_sub_send(struct mon *mon, struct msgr_conn *conn, struct mon_sub *s)
{
	struct proto_msg msg = { 0 };
	uint32_t e = mon->map.epoch;
	bool incs = s->have > 0 && e - s->have <= MON_HIST;
	void *buf;
	size_t len;
	int rc;

	for (uint32_t ep = s->have + 1; incs && ep <= e; ep++)
		incs = mon->hist[ep % MON_HIST].epoch == ep;
	if (incs) {
		for (uint32_t ep = s->have + 1; ep <= e; ep++) {
			msg.type = PROTO_MAP_INC;
			msg.map.epoch = ep;
			msg.map.blob = mon->hist[ep % MON_HIST].buf;
			msg.map.blob_len = (uint32_t)mon->hist[ep % MON_HIST].len;
			rc = msgr_send(conn, &msg, 0);
			if (rc != 0)
				return rc;
		}
	} else {
		rc = mon_map_encode(&mon->map, &buf, &len);
		if (rc != 0)
			return rc;
		msg.type = PROTO_MAP;
		msg.map.epoch = e;
		msg.map.blob = buf;
		msg.map.blob_len = (uint32_t)len;
		rc = msgr_send(conn, &msg, 0);
		free(buf);
		if (rc != 0)
			return rc;
	}
	s->have = e;
	return 0;
}

void mon_subs_push(struct mon *mon)
{
	struct mon_sub **pp = &mon->subs;

	while (*pp != NULL) {
		struct mon_sub *s = *pp;
		struct msgr_conn *conn = msgr_conn_find(mon->msgr, s->conn_id);
		bool drop = conn == NULL;

		if (conn != NULL && mon->map.epoch > 0 && s->have < mon->map.epoch) {
			if (mon_sub_send(mon, conn, s) != 0)
				drop = true;
			else if (s->onetime)
				drop = true;
		}
		if (drop) {
			*pp = s->next;
			free(s);
		} else {
			pp = &s->next;
		}
	}
}

int mon_sub_add(struct mon *mon, struct msgr_conn *conn, const struct proto_mon_sub *req)
{
	uint64_t id = msgr_conn_id(conn);
	struct mon_sub *s;

	for (s = mon->subs; s != NULL; s = s->next)
		if (s->conn_id == id)
			break;
	if (s == NULL) {
		s = calloc(1, sizeof(*s));
		if (s == NULL)
			return -ENOMEM;
		s->conn_id = id;
		s->next = mon->subs;
		mon->subs = s;
	}
	/* A subscriber claiming an epoch we do not have yet gets a full map later. */
	s->have = req->have_epoch > mon->map.epoch ? 0 : req->have_epoch;
	s->onetime = (req->flags & PROTO_SUB_F_ONETIME) != 0;
	mon_subs_push(mon);
	return 0;
}

/* ------------------------------------------------------------------ FSM */

static int mon_fsm_apply(struct raft_fsm *fsm, const struct raft_buffer *buf, void **result)
{
	struct mon *mon = fsm->data;
	struct proto_err err;
	struct mon_inc inc;
	struct mon_map old;
	int rc;

	const uint8_t *p = buf->base;
	size_t len = buf->len >= 4 ? (size_t)p[0] | (size_t)p[1] << 8 | (size_t)p[2] << 16 |
					     (size_t)p[3] << 24
				   : SIZE_MAX;

	if (len == MON_ENTRY_TAG_AUTH) {
		*result = (void *)(intptr_t)mon_auth_fsm_apply(mon, p, buf->len);
		return 0;
	}
	if (len == MON_ENTRY_TAG_SVC) {
		*result = (void *)(intptr_t)mon_auth_svc_fsm_apply(mon, p, buf->len);
		return 0;
	}
	if (len > buf->len - 4) {
		log_error("mon", "%s: refusing a log entry of %zu bytes: bad length", mon->name,
			  buf->len);
		*result = (void *)(intptr_t)-EBADMSG;
		return 0;
	}
	rc = mon_inc_decode(p + 4, len, &err, &inc);
	if (rc != 0) {
		/* Our own leader wrote it: corrupt log or a version mismatch. Refuse, stay up. */
		log_error("mon", "%s: refusing undecodable log entry: %s", mon->name, err.msg);
		*result = (void *)(intptr_t)rc;
		return 0;
	}
	mon_map_init(&old);
	rc = mon_map_copy(&old, &mon->map);
	if (rc == 0)
		rc = mon_map_apply(&mon->map, &inc);
	if (rc == 0) {
		mon_hist_put(mon, inc.epoch, p + 4, len);
		mon_map_log_changes(mon, &old, &inc);
		mon_member_applied(mon, &old, &inc);
		mon_subs_push(mon);
	} else if (rc == -ESTALE) {
		log_info("mon", "%s: increment for epoch %u skipped at epoch %u (stale proposal)",
			 mon->name, inc.epoch, mon->map.epoch);
	}
	mon_map_free(&old);
	mon_inc_free(&inc);
	*result = (void *)(intptr_t)rc;
	return 0;
}

static int mon_fsm_snapshot(struct raft_fsm *fsm, struct raft_buffer *bufs[], unsigned *n_bufs)
{
	struct mon *mon = fsm->data;
	struct raft_buffer *b;
	void *enc, *aenc = NULL;
	size_t len, alen;
	int rc;

	rc = mon_map_encode(&mon->map, &enc, &len);
	if (rc != 0)
		return RAFT_NOMEM;
	/* The auth database goes in a second buffer, never in the map. */
	rc = mon_auth_db_encode(&mon->auth, &aenc, &alen);
	if (rc != 0 || alen > UINT32_MAX - 8)
		goto err_free;
	b = raft_calloc(2, sizeof(*b));
	if (b == NULL)
		goto err_free;
	b[0].base = raft_malloc(len);
	b[1].base = raft_malloc(alen + 8);
	if (b[0].base == NULL || b[1].base == NULL)
		goto err_free_b;
	memcpy(b[0].base, enc, len);
	b[0].len = len;
	memcpy(b[1].base, aenc, alen);
	for (int i = 0; i < 4; i++) {
		((uint8_t *)b[1].base)[alen + i] = (uint8_t)(alen >> (8 * i));
		((uint8_t *)b[1].base)[alen + 4 + i] = (uint8_t)(MON_SNAP_AUTH_MAGIC >> (8 * i));
	}
	b[1].len = alen + 8;
	OPENSSL_cleanse(aenc, alen);
	free(aenc);
	free(enc);
	*bufs = b;
	*n_bufs = 2;
	log_info("mon",
		 "%s: snapshot of the map at epoch %u (%zu bytes), of %u auth entities and "
		 "%u service keys",
		 mon->name, mon->map.epoch, len, mon->auth.count, mon->auth.svc.count);
	return 0;
err_free_b:
	raft_free(b[0].base);
	if (b[1].base != NULL)
		OPENSSL_cleanse(b[1].base, alen + 8);
	raft_free(b[1].base);
	raft_free(b);
err_free:
	if (aenc != NULL)
		OPENSSL_cleanse(aenc, alen);
	free(aenc);
	free(enc);
	return RAFT_NOMEM;
}

static int mon_fsm_snapshot_finalize(struct raft_fsm *fsm, struct raft_buffer *bufs[],
				     unsigned *n_bufs)
{
	for (unsigned int i = 0; i < *n_bufs; i++) {
		OPENSSL_cleanse((*bufs)[i].base, (*bufs)[i].len); /* keys in the second */
		raft_free((*bufs)[i].base);
	}
	raft_free(*bufs);
	*bufs = NULL;
	*n_bufs = 0;
	return 0;
}

static int mon_fsm_restore(struct raft_fsm *fsm, struct raft_buffer *buf)
{
	struct mon *mon = fsm->data;
	struct mon_auth db;
	struct proto_err err;
	const uint8_t *auth;
	size_t map_len, auth_len;
	int rc;

	/* A snapshot from before the auth database is the map alone. */
	mon_auth_snap_split(buf->base, buf->len, &map_len, &auth, &auth_len);
	mon_auth_init(&db);
	if (auth != NULL && (mon_map_decode(buf->base, map_len, &err, &mon->map) != 0 ||
			     mon_auth_db_decode(auth, auth_len, &err, &db) != 0)) {
		/* An old map that happens to end like a trailer: read it whole. */
		mon_auth_free(&db);
		auth = NULL;
	}
	if (auth == NULL) {
		rc = mon_map_decode(buf->base, buf->len, &err, &mon->map);
		if (rc != 0) {
			log_error("mon", "%s: snapshot does not decode: %s", mon->name, err.msg);
			return RAFT_CORRUPT;
		}
	}
	mon_auth_free(&mon->auth);
	mon->auth = db;
	OPENSSL_cleanse(buf->base, buf->len);
	/* On success the FSM owns the buffer. */
	raft_free(buf->base);
	mon_hist_free(mon);
	log_info("mon",
		 "%s: restored the map at epoch %u, %u auth entities and %u service keys "
		 "from a snapshot",
		 mon->name, mon->map.epoch, mon->auth.count, mon->auth.svc.count);
	mon_subs_push(mon);
	return 0;
}

int mon_raft_setup(struct mon *mon)
{
	mon->fsm.version = 2;
	mon->fsm.data = mon;
	mon->fsm.apply = mon_fsm_apply;
	mon->fsm.snapshot = mon_fsm_snapshot;
	mon->fsm.restore = mon_fsm_restore;
	mon->fsm.snapshot_finalize = mon_fsm_snapshot_finalize;
	return 0;
}

/* ------------------------------------------------------------ leadership */

raft_id mon_raft_leader(struct mon *mon)
{
	const char *addr = NULL;
	raft_id id = 0;

	raft_leader(&mon->raft, &id, &addr);
	return id;
}

bool mon_is_leader(struct mon *mon)
{
	return raft_state(&mon->raft) == RAFT_LEADER;
}

void mon_job_free(struct mon_job *job)
{
	if (job == NULL)
		return;
	free(job->json);
	free(job);
}

static void mon_job_finish(struct mon *mon, struct mon_job *job, int status)
{
	char out[64];

	if (job->conn_id != 0) {
		if (status == 0 && job->reply_epoch) {
			char o[sizeof(job->out) + 32];

			snprintf(o, sizeof(o), "{\"epoch\": %u%s%s}", mon->map.epoch,
				 job->out[0] ? ", " : "", job->out);
			mon_reply(mon, job->conn_id, job->tid, 0, o, "%s", "");
		} else if (status == 0 && job->out[0] != '\0') {
			mon_reply(mon, job->conn_id, job->tid, 0, job->out, "%s", "");
		} else if (status == 0 && job->result_id != PROTO_OSD_ID_NONE) {
			snprintf(out, sizeof(out), "{\"osd\": %u, \"epoch\": %u}", job->result_id,
				 mon->map.epoch);
			mon_reply(mon, job->conn_id, job->tid, 0, out, "%s", "");
		} else {
			mon_reply(mon, job->conn_id, job->tid, status, NULL, "%s",
				  status == 0 ? "" : job->errmsg);
		}
	}
	mon_job_free(job);
}

void mon_jobs_fail(struct mon *mon, int status, const char *msg)
{
	while (mon->q_head != NULL) {
		struct mon_job *job = mon->q_head;

		mon->q_head = job->next;
		snprintf(job->errmsg, sizeof(job->errmsg), "%s", msg);
		mon_job_finish(mon, job, status);
	}
	mon->q_tail = NULL;
	mon->q_len = 0;
	/* the automatic jobs were dropped unbuilt: their next check queues them again */
	mon->live_job_queued = false;
	mon->cap_job_queued = false;
	mon->bal_queued = false;
	mon->auth_seed_queued = false;
}

static void mon_propose_next(struct mon *mon);

static void mon_apply_cb(struct raft_apply *req, int status, void *result)
{
	struct mon *mon = req->data;
	struct mon_job *job = mon->inflight;
	int rc = status != 0 ? -EAGAIN : (int)(intptr_t)result;

	mon->inflight = NULL;
	if (job == NULL)
		return;
	if (status != 0)
		snprintf(job->errmsg, sizeof(job->errmsg), "leader lost its quorum or stepped "
			 "down (%s); retry", raft_strerror(status));
	if (rc == -ESTALE && job->retries++ < MON_JOB_RETRIES && mon_is_leader(mon)) {
		/* Rebuild against the map as it is now. */
		job->next = mon->q_head;
		mon->q_head = job;
		if (mon->q_tail == NULL)
			mon->q_tail = job;
		mon->q_len++;
	} else {
		/* osd purge: the OSD's key goes too, in an auth entry of its own */
		if (rc == 0 && job->purge_key)
			mon_auth_purged(mon, job->purge_id);
		if (rc != 0 && job->errmsg[0] == '\0')
			snprintf(job->errmsg, sizeof(job->errmsg), "map update refused: %s",
				 strerror(-rc));
		mon_job_finish(mon, job, rc);
	}
	if (!mon->stopping)
		mon_propose_next(mon);
}

/* Build a job's increment into a log entry: 0, 1 (nothing to change) or -errno. */
static int mon_raft_inc_entry(struct mon *mon, struct mon_job *job, struct raft_buffer *rb)
{
	struct mon_inc inc;
	void *buf;
	size_t len;
	int rc;

	mon_inc_init(&inc);
	inc.epoch = mon->map.epoch + 1;
	inc.stamp = (uint64_t)clock_wall_s();
	rc = job->build(mon, job, &inc);
	if (rc != 0 || (inc.nops == 0 && mon->map.epoch > 0)) {
		mon_inc_free(&inc);
		return rc < 0 ? rc : 1;
	}
	rc = mon_inc_encode(&inc, &buf, &len);
	mon_inc_free(&inc);
	if (rc != 0)
		return rc;
	/*
	 * raft's on-disk batches assume 8-byte multiples (a shorter entry
	 * corrupts the closed segment): [u32 len][inc][zero padding].
	 */
	rb->len = (4 + len + 7) & ~(size_t)7;
	rb->base = raft_calloc(1, rb->len); /* raft_apply takes ownership */
	if (rb->base == NULL) {
		free(buf);
		return -ENOMEM;
	}
	uint8_t *p = rb->base;

	p[0] = (uint8_t)len;
	p[1] = (uint8_t)(len >> 8);
	p[2] = (uint8_t)(len >> 16);
	p[3] = (uint8_t)(len >> 24);
	memcpy(p + 4, buf, len);
	free(buf);
	return 0;
}

static void mon_propose_next(struct mon *mon)
{
	struct raft_buffer rb;
	int rc;

	while (mon->inflight == NULL && mon->q_head != NULL && mon->leader_ready) {
		struct mon_job *job = mon->q_head;

		mon->q_head = job->next;
		if (mon->q_head == NULL)
			mon->q_tail = NULL;
		mon->q_len--;
		/* An auth job proposes an auth entry, a service-key job its own, every other job a
		 * map increment. */
		rc = job->build_entry != NULL  ? job->build_entry(mon, job, &rb)
		     : job->build_auth != NULL ? mon_auth_job_entry(mon, job, &rb)
					       : mon_raft_inc_entry(mon, job, &rb);
		if (rc != 0) {
			mon_job_finish(mon, job, rc < 0 ? rc : 0);
			continue;
		}
		{
			mon->apply_req.data = mon;
			mon->inflight = job;
			rc = raft_apply(&mon->raft, &mon->apply_req, &rb, 1, mon_apply_cb);
			if (rc != 0) {
				mon->inflight = NULL;
				raft_free(rb.base);
				snprintf(job->errmsg, sizeof(job->errmsg), "not the leader (%s)",
					 raft_strerror(rc));
				rc = -EAGAIN;
			}
		}
		if (rc != 0)
			mon_job_finish(mon, job, rc);
	}
}

int mon_job_submit(struct mon *mon, struct mon_job *job)
{
	if (!mon_is_leader(mon) || mon->q_len >= MON_QUEUE_MAX) {
		mon_job_free(job);
		return mon_is_leader(mon) ? -EBUSY : -EAGAIN;
	}
	job->next = NULL;
	if (mon->q_tail != NULL)
		mon->q_tail->next = job;
	else
		mon->q_head = job;
	mon->q_tail = job;
	mon->q_len++;
	mon_propose_next(mon);
	return 0;
}

static int mon_job_build_init(struct mon *mon, struct mon_job *job, struct mon_inc *inc)
{
	const struct mon_ratios *r = &mon->conf_ratios;
	struct mon_op op = { .kind = MON_OP_FULL_RATIOS, .ratios = *r };

	snprintf(inc->reason, sizeof(inc->reason), "cluster map created");
	if (mon->map.epoch != 0)
		return 1;
	/* the mon_osd_*_ratio options count once, here; later `weft osd set-*-ratio` */
	if (r->nearfull != mon->map.nearfull_ratio || r->backfillfull != mon->map.backfillfull_ratio ||
	    r->full != mon->map.full_ratio)
		return mon_inc_add(inc, &op);
	return 0;
}

static void mon_barrier_cb(struct raft_barrier *req, int status)
{
	struct mon *mon = req->data;
	struct mon_job *job;

	mon->barrier_inflight = false;
	if (status != 0 || !mon_is_leader(mon) || mon->stopping)
		return;
	/* Every committed increment is applied: safe to decide from the map. */
	mon->leader_ready = true;
	mon->ready_term = mon->raft.current_term;
	mon->ready_ms = clock_now_ms();
	log_info("mon", "%s: leader for term %llu, map epoch %u", mon->name,
		 (unsigned long long)mon->raft.current_term, mon->map.epoch);
	mon_live_reset(mon);
	if (mon->map.epoch == 0) {
		job = calloc(1, sizeof(*job));
		if (job != NULL) {
			job->build = mon_job_build_init;
			job->result_id = PROTO_OSD_ID_NONE;
			mon_job_submit(mon, job);
		}
	}
	/* The first leader puts --mkfs's mon. and client.admin into the replicated state. */
	mon_auth_seed(mon);
	mon_propose_next(mon);
}

void mon_raft_tick(struct mon *mon)
{
	bool leader = mon_is_leader(mon);

	/* a mon that just started counts as having seen a leader (no HEALTH_ERR at start) */
	if (mon->leader_seen_ms == 0 || (leader && mon->leader_ready) ||
	    (!leader && mon_raft_leader(mon) != 0))
		mon->leader_seen_ms = clock_now_ms();
	if (leader && (!mon->leader_ready || mon->ready_term != mon->raft.current_term) &&
	    !mon->barrier_inflight) {
		mon->leader_ready = false;
		mon->barrier.data = mon;
		if (raft_barrier(&mon->raft, &mon->barrier, mon_barrier_cb) == 0)
			mon->barrier_inflight = true;
	}
	if (!leader && mon->leader_ready) {
		log_info("mon", "%s: no longer the leader", mon->name);
		mon->leader_ready = false;
	}
	if (!leader && mon->q_head != NULL)
		mon_jobs_fail(mon, -EAGAIN, "the monitor lost its leadership; retry");
	if (leader && mon->leader_ready) {
		mon_live_check(mon);
		mon_balancer_tick(mon);
		mon_cap_tick(mon);
		mon_pg_tick(mon);
		mon_mute_tick(mon);
		mon_blocklist_tick(mon);
		mon_auth_svc_tick(mon);
	}
}
