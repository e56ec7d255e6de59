/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client-facing service: proto messages on the fabric (msgr), driven
 * from the libuv loop by a uv_poll on the fabric's fd and a short timer
 * (the fd only signals once the completion queue was found empty, and
 * parked sends need progress too). Reads are answered here from the
 * applied map; changes go to the leader: proposed here if we lead,
 * forwarded over a msgr connection to the leader otherwise.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "mon/mon_priv.h"
#include "proto/hello.h"

void mon_reply(struct mon *mon, uint64_t conn_id, uint64_t tid, int status, const char *out,
	       const char *fmt, ...)
{
	struct msgr_conn *conn = msgr_conn_find(mon->msgr, conn_id);
	struct proto_msg msg = { .type = PROTO_MON_CMD_REPLY };
	struct proto_mon_cmd_reply *r = &msg.mon_cmd_reply;
	va_list ap;
	int n;

	if (conn == NULL)
		return; /* the asker went away */
	r->status = status > 0 ? -status : status;
	r->epoch = mon->map.epoch;
	r->out = out;
	r->out_len = out != NULL ? (uint32_t)strlen(out) : 0;
	va_start(ap, fmt);
	n = vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->msg_len = n < 0 ? 0 : (size_t)n >= sizeof(r->msg) ? sizeof(r->msg) - 1 : (size_t)n;
	if (msgr_send(conn, &msg, tid) != 0)
		log_warn("mon", "%s: reply to %s lost", mon->name, msgr_conn_peer(conn));
}

/* ----------------------------------------------------------- forwarding */

static void mon_fwd_fail_all(struct mon *mon, const char *why)
{
	while (mon->fwds != NULL) {
		struct mon_fwd *f = mon->fwds;

		mon->fwds = f->next;
		mon_reply(mon, f->conn_id, f->orig_tid, -EAGAIN, NULL, "%s", why);
		free(f);
	}
}

static struct msgr_conn *mon_leader_conn(struct mon *mon)
{
	raft_id lid = mon_raft_leader(mon);

	if (mon->leader_conn != NULL && mon->leader_conn_id != lid) {
		msgr_conn_close(mon->leader_conn);
		mon->leader_conn = NULL;
		mon_fwd_fail_all(mon, "the leader changed; retry");
	}
	const struct mon_peer *lp = mon_peer_by_id(mon, lid);

	if (lid == 0 || lp == NULL || lid == mon->self_id)
		return NULL;
	if (mon->leader_conn == NULL) {
		if (msgr_connect(mon->msgr, lp->addr, mon, &mon->leader_conn) != 0)
			return NULL;
		mon->leader_conn_id = lid;
	}
	return mon->leader_conn;
}

/* Relay a request to the leader. Requests that need no answer pass conn NULL. */
static void mon_forward(struct mon *mon, struct msgr_conn *conn, uint64_t tid,
			const struct proto_msg *msg)
{
	struct msgr_conn *lc = mon_leader_conn(mon);
	struct mon_fwd *f;
	uint64_t ftid;

	if (lc == NULL) {
		if (conn != NULL)
			mon_reply(mon, msgr_conn_id(conn), tid, -EAGAIN, NULL,
				  "no monitor quorum: no leader elected (is a majority of the "
				  "monitors down?)");
		return;
	}
	ftid = ++mon->next_tid;
	if (msgr_send(lc, msg, conn != NULL ? ftid : 0) != 0) {
		if (conn != NULL)
			mon_reply(mon, msgr_conn_id(conn), tid, -EAGAIN, NULL,
				  "cannot reach the leader; retry");
		return;
	}
	if (conn == NULL)
		return;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return;
	f->tid = ftid;
	f->conn_id = msgr_conn_id(conn);
	f->orig_tid = tid;
	f->deadline_ms = clock_now_ms() + MON_FWD_TIMEOUT_MS;
	f->next = mon->fwds;
	mon->fwds = f;
}

void mon_svc_send_leader(struct mon *mon, const struct proto_msg *msg)
{
	if (mon_is_leader(mon)) {
		if (msg->type == PROTO_MON_CMD)
			mon_cmd_submit_internal(mon, msg->mon_cmd.json, msg->mon_cmd.json_len);
		return;
	}
	mon_forward(mon, NULL, 0, msg);
}

static void mon_fwd_reply(struct mon *mon, uint64_t tid, const struct proto_msg *msg)
{
	for (struct mon_fwd **pp = &mon->fwds; *pp != NULL; pp = &(*pp)->next) {
		struct mon_fwd *f = *pp;
		struct msgr_conn *conn;

		if (f->tid != tid)
			continue;
		*pp = f->next;
		conn = msgr_conn_find(mon->msgr, f->conn_id);
		if (conn != NULL)
			msgr_send(conn, msg, f->orig_tid);
		free(f);
		return;
	}
}

/* --------------------------------------------------------------- dispatch */

static void mon_recv_cb(struct msgr_conn *conn, const struct proto_hdr *hdr,
			const struct proto_msg *msg, void *arg)
{
	struct mon *mon = arg;

	if (conn == mon->probe_conn) {
		if (msg->type == PROTO_MON_CMD_REPLY)
			mon_member_probe_reply(mon, &msg->mon_cmd_reply);
		return;
	}
	if (conn == mon->leader_conn) {
		/* Answers to what we forwarded; maps are not subscribed on this link. */
		if (msg->type == PROTO_MON_CMD_REPLY)
			mon_fwd_reply(mon, hdr->tid, msg);
		return;
	}
	/*
	 * Caps, here where the message arrives: what a follower forwards, the
	 * leader takes from mon. as already checked.
	 */
	if (!mon_auth_allowed(mon, conn, hdr->tid, msg))
		return;
	switch (msg->type) {
	case PROTO_PING: {
		struct proto_msg pong = *msg;

		pong.type = PROTO_PONG;
		msgr_send(conn, &pong, hdr->tid);
		break;
	}
	case PROTO_MON_SUB:
		if (mon_sub_add(mon, conn, &msg->mon_sub) != 0)
			log_warn("mon", "%s: subscription from %s dropped", mon->name,
				 msgr_conn_peer(conn));
		break;
	case PROTO_MAP_GET: {
		struct proto_mon_sub s = { .have_epoch = msg->map_get.have_epoch,
					   .flags = PROTO_SUB_F_ONETIME };

		mon_sub_add(mon, conn, &s);
		break;
	}
	case PROTO_MON_CMD: {
		const char *j = msg->mon_cmd.json;
		size_t n = msg->mon_cmd.json_len;

		/*
		 * Reads go to the leader too while there is one: it has applied every
		 * change it acknowledged, so a client reads its own writes whichever
		 * mon it asks. Without a leader any mon answers reads from its map.
		 */
		if (mon_is_leader(mon) || (!mon_cmd_is_write(j, n) && mon_leader_conn(mon) == NULL))
			mon_cmd_handle(mon, conn, hdr->tid, j, n);
		else
			mon_forward(mon, conn, hdr->tid, msg);
		break;
	}
	case PROTO_OSD_BOOT:
		if (mon_is_leader(mon))
			mon_osd_boot(mon, conn, hdr->tid, &msg->osd_boot);
		else
			mon_forward(mon, conn, hdr->tid, msg);
		break;
	case PROTO_OSD_BEACON:
		if (mon_is_leader(mon))
			mon_osd_beacon(mon, &msg->osd_beacon);
		else
			mon_forward(mon, NULL, 0, msg);
		break;
	case PROTO_OSD_FAILURE:
		if (mon_is_leader(mon))
			mon_osd_failure(mon, &msg->osd_failure);
		else
			mon_forward(mon, NULL, 0, msg);
		break;
	case PROTO_PG_STATS:
		if (mon_is_leader(mon)) {
			mon_pg_report(mon, conn, hdr->tid, &msg->pg_stats);
		} else {
			/* a leader without the feature would refuse the I/O counters: drop them */
			struct msgr_conn *lc = mon_leader_conn(mon);
			const struct proto_hello *lh = lc != NULL ? msgr_conn_peer_hello(lc) : NULL;
			struct proto_msg m = *msg;

			if (lh == NULL || !(lh->features & PROTO_FEAT_IO_STATS))
				m.pg_stats.has_io = false;
			mon_forward(mon, conn, hdr->tid, &m);
		}
		break;
	case PROTO_AUTH_TICKET:
	case PROTO_AUTH_SVC_KEYS:
		mon_ticket_handle(mon, conn, hdr, msg); /* mon_ticket.c: from our own state */
		break;
	default:
		log_warn("mon", "%s: unexpected %s from %s", mon->name,
			 proto_type_name(msg->type), msgr_conn_peer(conn));
		break;
	}
}

static void mon_fail_cb(struct msgr_conn *conn, int status, void *arg)
{
	struct mon *mon = arg;

	if (conn == mon->leader_conn) {
		mon->leader_conn = NULL;
		mon_fwd_fail_all(mon, "lost the connection to the leader; retry");
	}
	if (conn == mon->probe_conn)
		mon->probe_conn = NULL;
	msgr_conn_close(conn);
}

static void mon_poll_cb(uv_poll_t *h, int status, int events)
{
	struct mon *mon = h->data;

	for (int i = 0; i < 64 && msgr_progress(mon->msgr) > 0; i++)
		;
}

void mon_svc_tick(struct mon *mon)
{
	uint64_t now = clock_now_ms();

	for (int i = 0; i < 64 && msgr_progress(mon->msgr) > 0; i++)
		;
	for (struct mon_fwd **pp = &mon->fwds; *pp != NULL;) {
		struct mon_fwd *f = *pp;

		if (f->deadline_ms > now) {
			pp = &f->next;
			continue;
		}
		*pp = f->next;
		mon_reply(mon, f->conn_id, f->orig_tid, -ETIMEDOUT, NULL,
			  "the leader did not answer within %d s", MON_FWD_TIMEOUT_MS / 1000);
		free(f);
	}
	/* Drop the link to a leader that is no longer one. */
	if (mon->leader_conn != NULL)
		mon_leader_conn(mon);
}

int mon_svc_start(struct mon *mon)
{
	static const struct msgr_ops ops = {
		.recv_cb = mon_recv_cb,
		.fail_cb = mon_fail_cb,
	};
	struct fab_domain_attr attr;
	int rc;

	fab_domain_attr_from_conf(&attr, mon->conf);
	attr.name = mon->name;
	rc = msgr_create(&attr, &ops, mon, &mon->msgr);
	if (rc != 0) {
		log_error("mon", "%s: fabric: %s", mon->name, strerror(-rc));
		return rc;
	}
	rc = mon_auth_svc_setup(mon);
	if (rc != 0)
		goto err_destroy;
	{
		struct msgr_limits lim;

		msgr_limits_from_conf(mon->conf, &lim); /* ms_max_conns & co. (docs/security.md) */
		msgr_limits_set(mon->msgr, &lim);
	}
	rc = msgr_listen(mon->msgr, mon->peers[mon->self].addr);
	if (rc != 0) {
		log_error("mon", "%s: listen on %s: %s", mon->name, mon->peers[mon->self].addr,
			  strerror(-rc));
		goto err_destroy;
	}
	rc = uv_poll_init(&mon->loop, &mon->poll, msgr_fd(mon->msgr));
	if (rc != 0)
		goto err_destroy;
	mon->poll.data = mon;
	uv_poll_start(&mon->poll, UV_READABLE, mon_poll_cb);
	log_info("mon", "%s: serving on %s (fabric %s), raft on %s", mon->name,
		 mon->peers[mon->self].addr, attr.backend != NULL ? attr.backend : "auto",
		 mon->peers[mon->self].raft_addr);
	return 0;
err_destroy:
	msgr_destroy(mon->msgr);
	mon->msgr = NULL;
	mon_auth_svc_stop(mon);
	return rc;
}

void mon_svc_stop(struct mon *mon)
{
	while (mon->fwds != NULL) {
		struct mon_fwd *f = mon->fwds;

		mon->fwds = f->next;
		free(f);
	}
	while (mon->subs != NULL) {
		struct mon_sub *s = mon->subs;

		mon->subs = s->next;
		free(s);
	}
	msgr_destroy(mon->msgr);
	mon->msgr = NULL;
	mon->leader_conn = NULL;
	mon->probe_conn = NULL;
	mon_auth_svc_stop(mon);
}
