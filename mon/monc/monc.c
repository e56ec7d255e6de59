/* SPDX-License-Identifier: Apache-2.0 */
/* Mon client: hunting, requests with deadlines and retries, map subscription. See monc.h. */
#include "mon/monc/monc.h"
#include "mon/monc/monc_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "auth/keyring.h"
#include "auth/policy.h"
#include "common/clock.h"
#include "common/log.h"
#include "msgr/msgr.h"

#define MONC_MONS_MAX	 16
#define MONC_RETRY_MS	 300 /* resend after -EAGAIN (no leader yet) */
#define MONC_HUNT_MS	 200 /* pause before trying the next monitor */
#define MONC_EAGAIN_HUNT 5   /* consecutive -EAGAIN answers before trying another mon */
/*
 * Consecutive monitors (at least this many, and every one of mon_host)
 * that refused our key before requests fail with -EACCES: a key just made
 * may not have reached the monitor we asked yet.
 */
#define MONC_AUTH_REFUSALS 3

struct monc_req {
	struct monc_req *next;
	uint64_t tid;
	struct proto_msg msg; /* json points at json_copy */
	char *json_copy;
	uint64_t deadline_ms;
	uint64_t resend_ms; /* 0 = sent on the current connection */
	monc_reply_cb cb;
	void *arg;
	char lasterr[PROTO_ERRMSG_MAX + 1];
};

struct monc {
	char name[64];
	char mons[MONC_MONS_MAX][PROTO_ADDR_MAX + 1];
	unsigned int nmons, cur;
	struct msgr *msgr;
	bool own_msgr; /* monc_create's; else the process's (monc_create_on), driven by its owner */
	const struct msgr_auth_cfg *auth; /* how our connections authenticate (msgr_auth_add) */
	struct msgr_conn *conn;
	bool connected;
	uint64_t hunt_at_ms;
	unsigned int eagains;
	struct monc_req *reqs;
	uint64_t next_tid;
	bool subscribed;
	monc_map_cb map_cb;
	void *map_arg;
	struct mon_map map;
	unsigned int auth_refusals; /* consecutive monitors that refused our key */
	char auth_why[PROTO_ERRMSG_MAX + 1];
	struct monc_tickets *tickets; /* monc_ticket_want; NULL: none kept */
	monc_deadline_cb deadline_cb; /* monc_deadline_watch: the owner's timer */
	void *deadline_arg;
	unsigned int progressing; /* monc_progress calls running: they tell the owner at the end */
};

static void monc_hunt(struct monc *mc, uint64_t delay_ms);
static const struct msgr_ops monc_ops;

/*
 * Something may have moved our next deadline earlier (a request queued, a
 * resend or a hunt scheduled, a connection up, so tickets fall due): the
 * owner re-reads monc_next_deadline_us. Inside monc_progress it waits for
 * the end, which tells the owner once for everything done meanwhile.
 */
static void monc_deadline_moved(struct monc *mc)
{
	if (mc->deadline_cb != NULL && mc->progressing == 0)
		mc->deadline_cb(mc, mc->deadline_arg);
}

static unsigned int monc_auth_refusals_max(const struct monc *mc)
{
	return mc->nmons > MONC_AUTH_REFUSALS ? mc->nmons : MONC_AUTH_REFUSALS;
}

static void monc_req_done(struct monc *mc, struct monc_req *r, int status, const char *out,
			  size_t out_len, const char *msg)
{
	for (struct monc_req **pp = &mc->reqs; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	}
	if (r->cb != NULL)
		r->cb(mc, status, out, out_len, msg, r->arg);
	free(r->json_copy);
	free(r);
}

static void monc_req_send(struct monc *mc, struct monc_req *r)
{
	if (mc->conn == NULL || msgr_send(mc->conn, &r->msg, r->tid) != 0) {
		r->resend_ms = clock_now_ms() + MONC_RETRY_MS;
		return;
	}
	r->resend_ms = 0;
}

static void monc_sub_send(struct monc *mc)
{
	struct proto_msg m = {.type = PROTO_MON_SUB};

	if (mc->conn == NULL || !mc->subscribed)
		return;
	m.mon_sub.have_epoch = mc->map.epoch;
	msgr_send(mc->conn, &m, 0);
}

/* ----------------------------------------------------------------- maps */

/*
 * The map lists the monitors (version 5): follow it, so a client that
 * started with an old mon_host still finds the cluster once the monitors
 * it knew are removed. The monitor we talk to stays current if listed.
 */
static void monc_mons_learn(struct monc *mc)
{
	const char *cur = mc->nmons > 0 ? mc->mons[mc->cur] : "";
	char mons[MONC_MONS_MAX][PROTO_ADDR_MAX + 1];
	unsigned int n = 0, at = 0;
	bool same = mc->map.nmons == mc->nmons;

	if (mc->map.nmons == 0)
		return;
	for (uint32_t i = 0; i < mc->map.nmons && n < MONC_MONS_MAX; i++) {
		snprintf(mons[n], sizeof(mons[n]), "%s", mc->map.mons[i].addr);
		if (!strcmp(mons[n], cur))
			at = n;
		same = same && !strcmp(mons[n], mc->mons[n]);
		n++;
	}
	if (same)
		return;
	log_info("monc", "%s: the map lists %u monitors (had %u): following it", mc->name, n,
		 mc->nmons);
	memcpy(mc->mons, mons, sizeof(mons[0]) * n);
	mc->nmons = n;
	mc->cur = at;
}

static void monc_map_changed(struct monc *mc)
{
	monc_mons_learn(mc);
	if (mc->map_cb != NULL)
		mc->map_cb(mc, &mc->map, mc->map_arg);
}

static void monc_map_recv(struct monc *mc, uint16_t type, const struct proto_map *pm)
{
	struct proto_err err;
	struct mon_inc inc;

	if (pm->epoch <= mc->map.epoch)
		return;
	if (type == PROTO_MAP) {
		if (mon_map_decode(pm->blob, pm->blob_len, &err, &mc->map) != 0) {
			log_warn("monc", "%s: bad map from %s: %s", mc->name, monc_mon_addr(mc),
				 err.msg);
			return;
		}
		monc_map_changed(mc);
		return;
	}
	if (pm->epoch != mc->map.epoch + 1) {
		/* A gap: ask again from what we have; the mon sends what is missing. */
		monc_sub_send(mc);
		return;
	}
	if (mon_inc_decode(pm->blob, pm->blob_len, &err, &inc) != 0) {
		log_warn("monc", "%s: bad map increment from %s: %s", mc->name, monc_mon_addr(mc),
			 err.msg);
		return;
	}
	if (inc.epoch == pm->epoch && mon_map_apply(&mc->map, &inc) == 0)
		monc_map_changed(mc);
	mon_inc_free(&inc);
}

/* ------------------------------------------------------------ messenger */

static void monc_recv(struct monc *mc, const struct proto_hdr *hdr, const struct proto_msg *msg)
{
	const struct proto_mon_cmd_reply *r = &msg->mon_cmd_reply;
	struct monc_req *req;

	mc->auth_refusals = 0; /* it let us in */
	switch (msg->type) {
	case PROTO_MAP:
	case PROTO_MAP_INC:
		monc_map_recv(mc, msg->type, &msg->map);
		return;
	case PROTO_MON_CMD_REPLY:
		break;
	case PROTO_AUTH_TICKET_REPLY:
	case PROTO_AUTH_SVC_KEYS_REPLY:
		/* the blob goes to the callback as out; monc_ticket.c opens it */
		for (req = mc->reqs; req != NULL && req->tid != hdr->tid; req = req->next)
			;
		if (req == NULL)
			return;
		if (msg->auth_ticket_reply.status == -EAGAIN) {
			snprintf(req->lasterr, sizeof(req->lasterr), "%s", msg->auth_ticket_reply.msg);
			req->resend_ms = clock_now_ms() + MONC_RETRY_MS;
			return;
		}
		monc_req_done(mc, req, msg->auth_ticket_reply.status,
			      (const char *)msg->auth_ticket_reply.blob,
			      msg->auth_ticket_reply.blob_len, msg->auth_ticket_reply.msg);
		return;
	default:
		return;
	}
	for (req = mc->reqs; req != NULL && req->tid != hdr->tid; req = req->next)
		;
	if (req == NULL)
		return; /* an answer to a request that timed out */
	if (r->status == -EAGAIN) {
		snprintf(req->lasterr, sizeof(req->lasterr), "%s", r->msg);
		req->resend_ms = clock_now_ms() + MONC_RETRY_MS;
		if (++mc->eagains >= MONC_EAGAIN_HUNT) {
			mc->eagains = 0;
			monc_hunt(mc, 0);
		}
		return;
	}
	mc->eagains = 0;
	monc_req_done(mc, req, r->status, r->out, r->out_len, r->msg);
}

static void monc_recv_cb(struct msgr_conn *conn, const struct proto_hdr *hdr,
			 const struct proto_msg *msg, void *arg)
{
	struct monc *mc = arg;

	if (conn != mc->conn)
		return;
	monc_recv(mc, hdr, msg);
	/* a resend after -EAGAIN, a hunt, a ticket asked again later */
	monc_deadline_moved(mc);
}

static void monc_connect_cb(struct msgr_conn *conn, int status, void *arg)
{
	struct monc *mc = arg;

	if (conn != mc->conn || status != 0)
		return;
	/* The subscription and requests were posted with the connect (monc_try_connect). */
	mc->connected = true;
	log_debug("monc", "%s: connected to mon %s", mc->name, monc_mon_addr(mc));
	monc_deadline_moved(mc); /* tickets and service keys wait for a connection */
}

static void monc_fail_cb(struct msgr_conn *conn, int status, void *arg)
{
	struct monc *mc = arg;

	if (conn == mc->conn && status == -EPROTONOSUPPORT) {
		/*
		 * The hello check refused this mon (logged by msgr): requests fail
		 * now with that line rather than time out; hunting goes on, since
		 * another mon may already run a compatible version.
		 */
		const char *why = msgr_conn_refusal(conn);

		while (mc->reqs != NULL)
			monc_req_done(mc, mc->reqs, status, NULL, 0, why ? why : "");
	}
	if (conn == mc->conn && status == -EACCES) {
		/*
		 * Authentication failed (logged by msgr): after enough monitors said
		 * so, requests fail with the reason rather than time out. Hunting
		 * goes on: the key may be added, or a monitor may not have applied
		 * it yet.
		 */
		const char *why = msgr_conn_refusal(conn);

		snprintf(mc->auth_why, sizeof(mc->auth_why), "%s", why ? why : "permission denied");
		if (++mc->auth_refusals >= monc_auth_refusals_max(mc))
			while (mc->reqs != NULL)
				monc_req_done(mc, mc->reqs, status, NULL, 0, mc->auth_why);
	}
	if (conn == mc->conn) {
		if (mc->connected)
			log_info("monc", "%s: lost mon %s: %s; hunting", mc->name,
				 monc_mon_addr(mc), strerror(-status));
		mc->conn = NULL;
		mc->connected = false;
		monc_hunt(mc, MONC_HUNT_MS);
		monc_deadline_moved(mc);
	}
	msgr_conn_close(conn);
}

/* Drop the current monitor and try the next one after delay_ms. */
static void monc_hunt(struct monc *mc, uint64_t delay_ms)
{
	if (mc->conn != NULL) {
		msgr_conn_close(mc->conn);
		mc->conn = NULL;
		mc->connected = false;
	}
	mc->cur = (mc->cur + 1) % mc->nmons;
	mc->hunt_at_ms = clock_now_ms() + delay_ms;
}

static void monc_try_connect(struct monc *mc)
{
	if (mc->conn != NULL || clock_now_ms() < mc->hunt_at_ms)
		return;
	if (msgr_connect_ops(mc->msgr, mc->mons[mc->cur], NULL, &monc_ops, mc, mc->auth, mc,
			     &mc->conn) != 0) {
		mc->conn = NULL;
		monc_hunt(mc, MONC_HUNT_MS);
		return;
	}
	/* Requests go out with the connection; they wait for it in the fabric. */
	monc_sub_send(mc);
	for (struct monc_req *r = mc->reqs; r != NULL; r = r->next)
		monc_req_send(mc, r);
}

static const struct msgr_ops monc_ops = {
    .recv_cb = monc_recv_cb,
    .connect_cb = monc_connect_cb,
    .fail_cb = monc_fail_cb,
};

/*
 * The entity a process authenticates as: its name, except that every
 * monitor ("mon.a") holds the one key of "mon.". -EINVAL for a name that
 * is no entity.
 */
static int monc_entity(const char *name, char *entity, size_t cap, char *err, size_t errcap)
{
	struct auth_entity ent;
	char why[200];

	if (auth_entity_parse(name, &ent, why, sizeof(why)) != 0) {
		snprintf(err, errcap, "%s: cannot authenticate: %s", name, why);
		return -EINVAL;
	}
	snprintf(entity, cap, "%s", ent.type == AUTH_ETYPE_MON ? "mon." : ent.name);
	return 0;
}

/* Authenticate to the monitors as name, with the key of the conf's keyring. */
static int monc_auth_setup(struct monc *mc, const struct conf *conf, const char *name, char *why,
			   size_t whycap)
{
	struct msgr_auth a = {0};
	const struct auth_keyring_entry *e;
	struct auth_keyring kr;
	struct auth_policy pol;
	char entity[AUTH_ENTITY_MAX], err[512];
	const char *path = auth_keyring_path(conf);
	bool daemon = !strncmp(name, "osd.", 4) || !strncmp(name, "mon.", 4);
	int rc;

	auth_policy_from_conf(conf, &pol);
	auth_policy_warn(&pol, name,
			 !daemon	  ? CONF_WHO_CLIENT
			 : name[0] == 'o' ? CONF_WHO_OSD
					  : CONF_WHO_MON);
	if (!auth_policy_connect(&pol, daemon)) {
		/*
		 * No key sent; the link still reads a monitor's refusal (an ERROR
		 * first thing: "requires authentication") as one.
		 */
		a.fsid = conf_get_str(conf, CONF_FSID);
		rc = msgr_auth_add(mc->msgr, &a, &mc->auth);
		if (rc != 0)
			snprintf(why, whycap, "%s: cannot set up the connection: %s", name,
				 strerror(-rc));
		return rc;
	}
	rc = monc_entity(name, entity, sizeof(entity), why, whycap);
	if (rc != 0)
		return rc;
	auth_keyring_init(&kr);
	rc = auth_keyring_load(&kr, path, err, sizeof(err));
	if (rc != 0) {
		if (rc == -ENOENT)
			snprintf(why, whycap,
				 "%s: no key to authenticate with: keyring %s: %s (give "
				 "it with --keyring=PATH or the conf's keyring)",
				 name, path, strerror(ENOENT));
		else
			snprintf(why, whycap, "%s: no key to authenticate with: %s", name, err);
		auth_keyring_free(&kr);
		return -ENOKEY;
	}
	e = auth_keyring_find(&kr, entity);
	if (e == NULL) {
		snprintf(why, whycap, "%s: keyring %s has no key for %s", name, path, entity);
		auth_keyring_free(&kr);
		return -ENOKEY;
	}
	a.entity = entity;
	a.key = &e->key;
	a.server = "mon.";
	a.fsid = conf_get_str(conf, CONF_FSID);
	rc = msgr_auth_add(mc->msgr, &a, &mc->auth);
	if (rc != 0)
		snprintf(why, whycap, "%s: cannot set up authentication: %s", name, strerror(-rc));
	auth_keyring_free(&kr);
	return rc;
}

static int monc_init(const struct conf *conf, const char *name, char *why, size_t whycap,
		     struct monc **monc_out)
{
	unsigned int n;
	const struct conf_addr *hosts = conf_get_addrs(conf, CONF_MON_HOST, &n);
	uint16_t defport = (uint16_t)conf_get_int(conf, CONF_MON_PORT);
	struct monc *mc;

	if (n == 0) {
		snprintf(why, whycap, "%s: mon_host is empty: no monitor to talk to", name);
		return -EINVAL;
	}
	mc = calloc(1, sizeof(*mc));
	if (mc == NULL) {
		snprintf(why, whycap, "%s: out of memory", name);
		return -ENOMEM;
	}
	snprintf(mc->name, sizeof(mc->name), "%s", name);
	for (unsigned int i = 0; i < n && i < MONC_MONS_MAX; i++) {
		snprintf(mc->mons[i], sizeof(mc->mons[i]),
			 hosts[i].family == AF_INET6 ? "[%s]:%u" : "%s:%u", hosts[i].ip,
			 hosts[i].port != 0 ? hosts[i].port : defport);
		mc->nmons++;
	}
	mc->cur = (unsigned int)((uint64_t)clock_now_ns() % mc->nmons);
	mc->next_tid = 1;
	mon_map_init(&mc->map);
	*monc_out = mc;
	return 0;
}

int monc_create(const struct conf *conf, const char *name, struct monc **monc_out)
{
	char why[PROTO_ERRMSG_MAX + 1];
	int rc = monc_create_err(conf, name, why, sizeof(why), monc_out);

	if (rc != 0)
		log_error("monc", "%s", why);
	return rc;
}

int monc_create_err(const struct conf *conf, const char *name, char *why, size_t whycap,
		    struct monc **monc_out)
{
	struct fab_domain_attr attr;
	struct monc *mc;
	int rc;

	rc = monc_init(conf, name, why, whycap, &mc);
	if (rc != 0)
		return rc;
	fab_domain_attr_from_conf(&attr, conf);
	attr.name = mc->name;
	rc = msgr_create(&attr, &monc_ops, mc, &mc->msgr);
	if (rc != 0) {
		snprintf(why, whycap, "%s: fabric: %s", name, strerror(-rc));
		mon_map_free(&mc->map);
		free(mc);
		return rc;
	}
	rc = monc_auth_setup(mc, conf, name, why, whycap);
	if (rc != 0) {
		msgr_destroy(mc->msgr);
		mon_map_free(&mc->map);
		free(mc);
		return rc;
	}
	mc->own_msgr = true;
	monc_try_connect(mc);
	*monc_out = mc;
	return 0;
}

int monc_create_on(struct msgr *msgr, const struct conf *conf, const char *name,
		   struct monc **monc_out)
{
	char why[PROTO_ERRMSG_MAX + 1];
	struct monc *mc;
	int rc;

	rc = monc_init(conf, name, why, sizeof(why), &mc);
	if (rc == 0) {
		mc->msgr = msgr;
		/* its own set-up on the shared messenger: the other owners' connections keep theirs
		 */
		rc = monc_auth_setup(mc, conf, name, why, sizeof(why));
		if (rc != 0) {
			mon_map_free(&mc->map);
			free(mc);
		}
	}
	if (rc != 0) {
		log_error("monc", "%s", why);
		return rc;
	}
	monc_try_connect(mc);
	*monc_out = mc;
	return 0;
}

void monc_destroy(struct monc *mc)
{
	if (mc == NULL)
		return;
	/* the owner's loop may be gone already; the callbacks below must not reach it */
	mc->deadline_cb = NULL;
	while (mc->reqs != NULL)
		monc_req_done(mc, mc->reqs, -ECANCELED, NULL, 0, "mon client closed");
	if (mc->own_msgr)
		msgr_destroy(mc->msgr);
	else if (mc->conn != NULL)
		msgr_conn_close(mc->conn);
	mon_map_free(&mc->map);
	monc_ticket_free(mc->tickets);
	free(mc);
}

void monc_subscribe(struct monc *mc, monc_map_cb cb, void *arg)
{
	mc->map_cb = cb;
	mc->map_arg = arg;
	if (!mc->subscribed) {
		mc->subscribed = true;
		monc_sub_send(mc);
	}
}

int monc_seed_map(struct monc *mc, const struct mon_map *map)
{
	if (mc->subscribed || map->epoch <= mc->map.epoch)
		return 0;
	return mon_map_copy(&mc->map, map);
}

const struct mon_map *monc_map(const struct monc *mc)
{
	return &mc->map;
}

int monc_request(struct monc *mc, const struct proto_msg *msg, unsigned int timeout_ms,
		 monc_reply_cb cb, void *arg)
{
	struct monc_req *r = calloc(1, sizeof(*r));

	if (r == NULL)
		return -ENOMEM;
	r->msg = *msg;
	if (msg->type == PROTO_MON_CMD) {
		r->json_copy = malloc(msg->mon_cmd.json_len);
		if (r->json_copy == NULL) {
			free(r);
			return -ENOMEM;
		}
		memcpy(r->json_copy, msg->mon_cmd.json, msg->mon_cmd.json_len);
		r->msg.mon_cmd.json = r->json_copy;
	} else if (msg->type == PROTO_PG_STATS && msg->pg_stats.entries_len > 0) {
		/* the entries are a view too: kept for resends after a failover */
		r->json_copy = malloc(msg->pg_stats.entries_len);
		if (r->json_copy == NULL) {
			free(r);
			return -ENOMEM;
		}
		memcpy(r->json_copy, msg->pg_stats.entries, msg->pg_stats.entries_len);
		r->msg.pg_stats.entries = r->json_copy;
	}
	r->tid = mc->next_tid++;
	r->deadline_ms = clock_now_ms() + timeout_ms;
	r->cb = cb;
	r->arg = arg;
	snprintf(r->lasterr, sizeof(r->lasterr), "no monitor answered (tried %s)",
		 mc->mons[mc->cur]);
	r->next = mc->reqs;
	mc->reqs = r;
	monc_req_send(mc, r);
	monc_deadline_moved(mc);
	return 0;
}

int monc_command(struct monc *mc, const char *json, unsigned int timeout_ms, monc_reply_cb cb,
		 void *arg)
{
	struct proto_msg m = {.type = PROTO_MON_CMD};

	m.mon_cmd.json = json;
	m.mon_cmd.json_len = (uint32_t)strlen(json);
	if (proto_mon_cmd_validate(&m.mon_cmd, NULL) != 0)
		return -EINVAL;
	return monc_request(mc, &m, timeout_ms, cb, arg);
}

int monc_send(struct monc *mc, const struct proto_msg *msg)
{
	if (mc->conn == NULL || !mc->connected)
		return -ENOTCONN;
	return msgr_send(mc->conn, msg, 0);
}

int monc_progress(struct monc *mc)
{
	uint64_t now = clock_now_ms();
	int n = 0, rc;

	mc->progressing++;
	monc_try_connect(mc);
	if (mc->tickets != NULL)
		monc_ticket_tick(mc->tickets);
	/* a shared messenger is driven by its owner's loop, which calls us for the timers */
	for (int i = 0; mc->own_msgr && i < 64 && (rc = msgr_progress(mc->msgr)) > 0; i++)
		n += rc;
	for (struct monc_req *r = mc->reqs, *next; r != NULL; r = next) {
		next = r->next;
		if (now >= r->deadline_ms) {
			monc_req_done(mc, r, -ETIMEDOUT, NULL, 0, r->lasterr);
			n++;
			next = mc->reqs; /* a callback may have changed the list */
			continue;
		}
		if (r->resend_ms != 0 && now >= r->resend_ms && mc->conn != NULL)
			monc_req_send(mc, r);
	}
	mc->progressing--;
	monc_deadline_moved(mc);
	return n;
}

static uint64_t monc_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/*
 * Mirrors monc_progress: a resend waits for a connection (hunting sends
 * every request with the next one), and the messenger's frames are not
 * ours to time (monc_fd, or the shared messenger's owner).
 */
uint64_t monc_next_deadline_us(const struct monc *mc)
{
	uint64_t at = UINT64_MAX;

	if (mc->conn == NULL)
		at = mc->hunt_at_ms;
	for (const struct monc_req *r = mc->reqs; r != NULL; r = r->next) {
		at = monc_min(at, r->deadline_ms);
		if (r->resend_ms != 0 && mc->conn != NULL)
			at = monc_min(at, r->resend_ms);
	}
	if (mc->tickets != NULL)
		at = monc_min(at, monc_ticket_next_ms(mc->tickets, clock_now_ms()));
	return at == UINT64_MAX ? UINT64_MAX : at * 1000u;
}

void monc_deadline_watch(struct monc *mc, monc_deadline_cb cb, void *arg)
{
	mc->deadline_cb = cb;
	mc->deadline_arg = arg;
}

int monc_wait(struct monc *mc, int timeout_ms)
{
	int n = 0;

	/* Short sleeps: deadlines, retries and hunting are timers of our own. */
	msgr_wait(mc->msgr, timeout_ms < 0 || timeout_ms > 20 ? 20 : timeout_ms);
	if (!mc->own_msgr) /* a sync call on a shared messenger: everyone's frames move */
		n = msgr_progress(mc->msgr);
	return n + monc_progress(mc);
}

int monc_fd(const struct monc *mc)
{
	return mc->own_msgr ? msgr_fd(mc->msgr) : -1;
}

bool monc_connected(const struct monc *mc)
{
	return mc->connected;
}

const char *monc_name(const struct monc *mc)
{
	return mc->name;
}

int monc_seal_key(const struct monc *mc, struct auth_key *key_out)
{
	if (mc->conn == NULL)
		return -ENOTCONN;
	return msgr_conn_seal_key(mc->conn, key_out);
}

struct monc_tickets *monc_tickets_of(struct monc *mc)
{
	return mc->tickets;
}

void monc_tickets_set(struct monc *mc, struct monc_tickets *t)
{
	mc->tickets = t;
}

const char *monc_mon_addr(const struct monc *mc)
{
	return mc->conn != NULL ? mc->mons[mc->cur] : "";
}

uint64_t monc_mon_features(const struct monc *mc)
{
	const struct proto_hello *h;

	if (mc->conn == NULL || !mc->connected)
		return 0;
	h = msgr_conn_peer_hello(mc->conn);
	return h != NULL ? h->features : 0;
}

/* -------------------------------------------------------------- sync */

struct monc_sync {
	bool done;
	int status;
	char *out;
	char *errmsg;
	size_t errcap;
};

static void monc_sync_cb(struct monc *mc, int status, const char *out, size_t out_len,
			 const char *errmsg, void *arg)
{
	struct monc_sync *s = arg;

	s->done = true;
	s->status = status;
	if (status == 0 && out != NULL && out_len > 0)
		s->out = strndup(out, out_len);
	if (s->errmsg != NULL)
		snprintf(s->errmsg, s->errcap, "%s", errmsg != NULL ? errmsg : "");
}

int monc_command_sync(struct monc *mc, const char *json, unsigned int timeout_ms, char **out_out,
		      char *errmsg, size_t errcap)
{
	struct monc_sync s = {.errmsg = errmsg, .errcap = errcap};
	int rc;

	rc = monc_command(mc, json, timeout_ms, monc_sync_cb, &s);
	if (rc != 0)
		return rc;
	/* Bounded: the request's own deadline completes it. */
	while (!s.done)
		monc_wait(mc, 20);
	if (s.status == 0 && out_out != NULL)
		*out_out = s.out;
	else
		free(s.out);
	return s.status;
}

int monc_wait_map_sync(struct monc *mc, uint32_t epoch, unsigned int timeout_ms)
{
	uint64_t deadline = clock_now_ms() + timeout_ms;

	if (!mc->subscribed)
		monc_subscribe(mc, mc->map_cb, mc->map_arg);
	while (mc->map.epoch == 0 || mc->map.epoch < epoch) {
		if (clock_now_ms() >= deadline)
			return -ETIMEDOUT;
		if (mc->auth_refusals >= monc_auth_refusals_max(mc))
			return -EACCES;
		monc_wait(mc, 20);
	}
	return 0;
}
