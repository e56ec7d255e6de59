/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft-mon internals. One thread, one libuv loop: Raft (canonical raft with
 * its libuv I/O and TCP transport) and the client-facing service (msgr on
 * the fabric, polled through uv_poll + a short uv_timer) share it, so no
 * state here is locked.
 *
 *   mon_main.c  conf, --mkfs, the loop, start and stop
 *   mon_raft.c  the FSM (applies map increments), the proposal queue (one
 *               increment in flight), map history and subscriptions
 *   mon_svc.c   messages from clients/OSDs/mons, forwarding to the leader
 *   mon_cmd.c   commands (JSON), OSD boot/beacon/failure, liveness rules
 */
#ifndef WEFT_MON_MON_PRIV_H
#define WEFT_MON_MON_PRIV_H

#include <limits.h>
#include <raft.h>
#include <raft/uv.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "auth/keyring.h"
#include "auth/policy.h"
#include "common/conf.h"
#include "mon/map.h"
#include "mon/mon_auth.h"
#include "mon/mon_raft_auth.h"
#include "msgr/msgr.h"

#define MON_PEERS_MAX 7
#define MON_HIST 128		/* increments kept for subscribers that are behind */
#define MON_FWD_TIMEOUT_MS 10000
#define MON_QUEUE_MAX 1024	/* proposals waiting on the leader */
#define MON_REPORTERS_MAX 16
#define MON_MARKDOWNS_MAX 32 /* mon_osd_report_markdown_max is capped here */

/* A monitor of raft's configuration (or ourselves): mon_member.c rebuilds the table. */
struct mon_peer {
	raft_id id;			    /* raft server id (the map's monitor id) */
	char name[MON_NAME_MAX + 1];	    /* from the map; "" while unknown */
	char addr[PROTO_ADDR_MAX + 1];	    /* fabric (clients, OSDs, forwarding) */
	char raft_addr[PROTO_ADDR_MAX + 1]; /* raft's own TCP transport */
	int role;			    /* RAFT_VOTER, RAFT_STANDBY, RAFT_SPARE */
	bool in_raft;			    /* false: only ourselves, not (yet) configured */
	uint64_t seen_ms;		    /* leader: last time raft heard from it */
};

struct mon;
struct mon_job;

/* Build the increment of a job against the current map: 0 = propose inc,
 * 1 = nothing to change (done at once, status 0), < 0 = refuse. */
typedef int (*mon_job_build_fn)(struct mon *mon, struct mon_job *job, struct mon_inc *inc);

/* A change waiting to be proposed (leader only). */
struct mon_job {
	struct mon_job *next;
	mon_job_build_fn build;
	uint64_t conn_id; /* where the reply goes; 0 = nobody (internal job) */
	uint64_t tid;
	int retries;
	char *json;	/* command text (MON_CMD) */
	struct proto_osd_boot boot;
	uint32_t result_id; /* osd id given by a boot */
	char out[1024];	    /* JSON answer of a command, "" = none */
	bool reply_epoch;   /* answer {"epoch": the map's after the commit, out's members} */
	/* auth jobs (mon_auth_cmd.c): build an auth op instead of a map increment */
	int (*build_auth)(struct mon *mon, struct mon_job *job, struct mon_auth_op *op);
	/* other entries (the service keys): build the whole Raft buffer; 1 = nothing to do */
	int (*build_entry)(struct mon *mon, struct mon_job *job, struct raft_buffer *rb);
	bool purge_key;	    /* osd purge: remove osd.purge_id's key once applied */
	uint32_t purge_id;
	char errmsg[PROTO_ERRMSG_MAX + 1];
};

/* A request relayed to the leader (followers). */
struct mon_fwd {
	struct mon_fwd *next;
	uint64_t tid; /* ours, towards the leader */
	uint64_t conn_id, orig_tid;
	uint64_t deadline_ms;
};

struct mon_sub {
	struct mon_sub *next;
	uint64_t conn_id;
	uint32_t have;
	bool onetime;
};

struct mon_hist {
	uint32_t epoch;
	void *buf;
	size_t len;
};

/* Leader-only liveness state, by OSD id; rebuilt when leadership starts. */
struct mon_live {
	uint64_t last_beacon_ms;
	uint32_t reporters[MON_REPORTERS_MAX];
	uint64_t report_ms[MON_REPORTERS_MAX]; /* newest report of each, for expiry */
	uint8_t nreporters;
	/* flap damping: when peer reports marked it down, newest first */
	uint64_t markdown_ms[MON_MARKDOWNS_MAX];
	bool damped; /* reports ignored (logged once per damping) */
};

struct metrics_srv;

struct mon {
	struct conf *conf;
	const char *name; /* "mon.a" */
	char data_dir[PATH_MAX];
	unsigned int npeers, self; /* peers[self] is us */
	struct mon_peer peers[MON_PEERS_MAX];
	raft_id self_id; /* from mon_data's marker file */
	char self_addr[PROTO_ADDR_MAX + 1], self_raft_addr[PROTO_ADDR_MAX + 1];
	/* membership (mon_member.c) */
	bool change_busy, transfer_busy, seed_queued;
	struct raft_change change_req;
	struct raft_transfer transfer_req;
	raft_id change_id;
	char change_what[32];
	uint64_t change_retry_ms, register_next_ms, remove_wait_ms;
	raft_index remove_wait_index;
	bool removed; /* the map no longer lists us: stop */
	uint64_t removed_ms;
	uint64_t start_s; /* wall clock at start: a removal proposed before it happened while down */
	int exit_rc;
	uint64_t no_leader_ms, probe_next_ms;
	unsigned int probe_idx;
	struct msgr_conn *probe_conn;
	uint64_t grace_ms, down_out_s;
	unsigned int min_reporters;
	unsigned int markdown_max;
	uint64_t markdown_period_ms;
	unsigned int election_ms;
	struct mon_ratios conf_ratios; /* mon_osd_*_ratio: the first map's full ratios */

	uv_loop_t loop;
	uv_timer_t tick;
	uv_poll_t poll;
	uv_signal_t sigterm, sigint, sighup;
	bool stopping;
	struct asok *asok; /* admin socket (mon_admin.c); NULL when off */
	uv_poll_t asok_poll;
	unsigned int asok_ticks;
	struct metrics_srv *metrics; /* /metrics (mon_metrics.c); NULL when off */
	uv_poll_t metrics_poll;

	struct raft raft;
	struct raft_io io;
	struct raft_uv_transport transport; /* mon_raft_auth.h: the mon. key before raft's bytes */
	struct raft_fsm fsm;

	struct mon_map map;
	struct mon_auth auth; /* keys and caps: replicated, never in the map (mon_auth.h) */
	bool auth_seed_queued;
	uint64_t svc_check_ms;		/* leader: next look at the service keys' schedule */
	struct auth_policy auth_pol;	/* auth_*_required */
	struct auth_keyring auth_local; /* mon_data/keyring: mon. and the seed (mon_auth_cmd.c) */
	uint64_t auth_rotate_grace_us;	/* mon_auth_rotate_grace */
	struct mon_hist hist[MON_HIST];
	struct mon_sub *subs;

	/* leader */
	bool leader_ready;
	raft_term ready_term;
	bool barrier_inflight;
	struct raft_barrier barrier;
	struct mon_job *q_head, *q_tail;
	unsigned int q_len;
	struct mon_job *inflight;
	struct raft_apply apply_req;
	bool live_job_queued;
	bool cap_job_queued; /* mon_cap.c: an automatic capacity job waits */
	bool mute_job_queued; /* mon_mute.c: ending mutes */
	bool blocklist_job_queued; /* mon_blocklist.c: expiring entries */
	uint64_t blocklist_tick_ms;
	uint64_t mute_tick_ms;
	uint64_t ready_ms;	 /* when leader_ready last became true */
	uint64_t leader_seen_ms; /* last time this mon knew a ready leader (itself or a peer) */
	struct mon_live *live;
	uint32_t nlive;
	uint64_t last_check_ms;
	/* the balancer (leader, mon_crush.c) */
	bool bal_queued;
	uint64_t bal_tick_ms, bal_last_ms;
	char bal_last[256];

	/* service */
	struct msgr *msgr;
	struct msgr_conn *leader_conn;
	raft_id leader_conn_id;
	struct mon_fwd *fwds;
	uint64_t next_tid;
};

/* mon_auth_cmd.c: the auth database's commands, seeding, FSM entry */
struct json_t;
int mon_auth_fsm_apply(struct mon *mon, const uint8_t *entry, size_t len);
int mon_auth_job_entry(struct mon *mon, struct mon_job *job, struct raft_buffer *rb);
bool mon_auth_is_write(const char *prefix);
int mon_auth_job(struct mon *mon, struct mon_job *job, struct mon_auth_op *op);
struct json_t *mon_auth_read(struct mon *mon, const char *prefix, struct json_t *root, int *rc_out,
			     char *err, size_t errcap);
void mon_auth_seed(struct mon *mon);
void mon_auth_purged(struct mon *mon, uint32_t osd_id);
int mon_auth_seed_write(struct mon *mon, char *where, size_t cap);
/* The service's authentication: our key (mon.), the peers' keys, the options. */
int mon_auth_svc_setup(struct mon *mon);
void mon_auth_svc_stop(struct mon *mon);
/*
 * May the authenticated peer on conn send msg? true; or false after a log
 * line and -EACCES with the reason to a request, or the connection closed
 * for a report nobody answers.
 */
bool mon_auth_allowed(struct mon *mon, struct msgr_conn *conn, uint64_t tid,
		      const struct proto_msg *msg);
void mon_auth_health(struct mon *mon, struct json_t *checks, const char **status);
/* --mkfs --join: keep the conf keyring's mon. (and client.admin) in mon_data/keyring. */
int mon_auth_join_keyring(struct mon *mon);

/* mon_auth_svc_cmd.c: the service keys (rotation, FSM entry, `auth service-keys`) */
int mon_auth_svc_fsm_apply(struct mon *mon, const uint8_t *entry, size_t len);
void mon_auth_svc_tick(struct mon *mon);
uint64_t mon_auth_svc_ttl_us(struct mon *mon);
struct json_t *mon_auth_svc_json(struct mon *mon);

/* mon_ticket.c: AUTH_TICKET, AUTH_SVC_KEYS */
void mon_ticket_handle(struct mon *mon, struct msgr_conn *conn, const struct proto_hdr *hdr,
		       const struct proto_msg *msg);

/* mon_raft_key.c: what the Raft port proves (mon.) and binds (fsid) */
int mon_fsid_get(struct mon *mon, uint8_t fsid_out[AUTH_FSID_LEN]);
int mon_raft_key_load(struct mon *mon, struct auth_key *key_out);

/* mon_raft.c */
int mon_raft_setup(struct mon *mon);
raft_id mon_raft_leader(struct mon *mon);
bool mon_is_leader(struct mon *mon);
void mon_raft_tick(struct mon *mon);
int mon_job_submit(struct mon *mon, struct mon_job *job);
void mon_job_free(struct mon_job *job);
void mon_jobs_fail(struct mon *mon, int status, const char *msg);
void mon_subs_push(struct mon *mon);
int mon_sub_add(struct mon *mon, struct msgr_conn *conn, const struct proto_mon_sub *sub);
void mon_hist_free(struct mon *mon);

/* mon_member.c: monitor membership */
struct json_t;
void mon_member_sync(struct mon *mon);
struct mon_peer *mon_peer_by_id(struct mon *mon, raft_id id);
void mon_member_seen_reset(struct mon *mon);
int mon_member_raft_addr(struct mon *mon, const char *addr, char *out, size_t cap);
struct json_t *mon_member_quorum_json(struct mon *mon, bool *have_out, unsigned int *nq_out);
void mon_member_health(struct mon *mon, struct json_t *checks, const char **status);
int mon_member_job(struct mon *mon, struct mon_job *job, struct json_t *root, const char *prefix,
		   struct mon_inc *inc);
void mon_member_applied(struct mon *mon, const struct mon_map *old, const struct mon_inc *inc);
int mon_member_check_start(struct mon *mon);
#define MON_REMOVED_FILE "weft-mon.removed"
int mon_member_check_removed(struct mon *mon);
void mon_member_probe_reply(struct mon *mon, const struct proto_mon_cmd_reply *r);
void mon_member_tick(struct mon *mon);

/* mon_svc.c */
int mon_svc_start(struct mon *mon);
/* A request that needs no answer, to the leader (proposed here if we lead). */
void mon_svc_send_leader(struct mon *mon, const struct proto_msg *msg);
void mon_svc_stop(struct mon *mon);
void mon_svc_tick(struct mon *mon);

/* mon_admin.c: the admin socket; failing to open it is logged, not fatal */
#define MON_ADMIN_TICKS 20 /* progress accepted connections every 20 ticks */
void mon_admin_start(struct mon *mon);
void mon_admin_tick(struct mon *mon);
void mon_admin_stop(struct mon *mon);
/* mon_metrics.c: /metrics on metrics_addr, when set; failing to open it is logged */
void mon_metrics_start(struct mon *mon);
void mon_metrics_tick(struct mon *mon);
void mon_metrics_stop(struct mon *mon);
/* mon_cmd.c: the answer to a read ("status", "health", "mon stat"), as the CLI gets it */
struct json_t *mon_cmd_status_json(struct mon *mon, const char *prefix);
void mon_reply(struct mon *mon, uint64_t conn_id, uint64_t tid, int status, const char *out,
	       const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* mon_osd.c */
struct mon_job *mon_job_alloc(struct msgr_conn *conn, uint64_t tid, mon_job_build_fn fn);
void mon_job_refuse(struct mon_job *job, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* mon_pg.c: PG states reported by the OSDs (leader memory) */
struct json_t;
void mon_pg_report(struct mon *mon, struct msgr_conn *conn, uint64_t tid,
		   const struct proto_pg_stats *m);
struct json_t *mon_pg_json_summary(struct mon *mon);
void mon_pg_health(struct mon *mon, struct json_t *checks, const char **status);
void mon_pg_tick(struct mon *mon);

/* mon_io.c: client I/O rates from the OSDs' counters (leader memory) */
void mon_io_report(uint32_t osd, const struct proto_osd_io *io, uint64_t now);
/* {read_ops_per_sec, read_bytes_per_sec, write_ops_per_sec, write_bytes_per_sec, osds_reporting} */
struct json_t *mon_io_json(struct mon *mon);
struct json_t *mon_pg_cmd(struct mon *mon, const char *prefix, struct json_t *root, int *rc_out,
			  char *err, size_t errcap);
/* A pool's objects and bytes from its PGs' newest reports; complete: every PG reported lately. */
void mon_pg_pool_usage(struct mon *mon, const struct mon_pool *pool, uint64_t *objects_out,
		       uint64_t *bytes_out, bool *complete_out);

/*
 * The state of (pool, pg) as its current primary reported it at this map
 * epoch, lately (PROTO_PGS_*); 0 when unknown or stale. Its acting set
 * (placement's, from the map) goes to acting[0..*n_out).
 */
uint32_t mon_pg_state_now(struct mon *mon, const struct mon_pool *pool, uint32_t pg,
			  int32_t *acting, int *n_out);

/* mon_osdlife.c: osd reweight, crush reweight, rm, purge, safe-to-destroy, ok-to-stop */
bool mon_life_is_write(const char *prefix);
int mon_life_job(struct mon *mon, struct mon_job *job, struct json_t *root, const char *prefix,
		 struct mon_inc *inc);
/* A read: the answer, or NULL with *rc_out and err set (NULL, 0: not one of these). */
struct json_t *mon_life_read(struct mon *mon, const char *prefix, struct json_t *root,
			     int *rc_out, char *err, size_t errcap);

/* mon_cap.c: capacity (docs/capacity.md) */
/* The mon_osd_*_ratio options: 0, or -EINVAL with one line in err. */
int mon_cap_conf_ratios(const struct conf *conf, struct mon_ratios *out, char *err, size_t cap);
void mon_cap_report(struct mon *mon, uint32_t osd, const struct proto_osd_stat *s);
void mon_cap_tick(struct mon *mon);
int mon_cap_job(struct mon *mon, struct mon_job *job, struct json_t *root, const char *prefix,
		struct mon_inc *inc);
struct json_t *mon_cap_df(struct mon *mon);
struct json_t *mon_cap_osd_df(struct mon *mon);
struct json_t *mon_cap_status(struct mon *mon);
void mon_cap_health(struct mon *mon, struct json_t *checks, const char **status);

/* mon_health.c: checks with stable codes */
/* Add a check (detail: a JSON array of lines, consumed; NULL = none); raise *status. */
void mon_health_add(struct json_t *checks, const char **status, const char *code, bool error,
		    struct json_t *detail, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/* The same with the check's count given (-1: the number of detail lines, or 1). */
void mon_health_add_n(struct json_t *checks, const char **status, const char *code, bool error,
		      long long count, struct json_t *detail, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
struct json_t *mon_json_health(struct mon *mon, bool have_quorum, unsigned int nq);

/* mon_mute.c: `health mute|unmute` (mutes live in the map, version 6) */
/* Mark the muted checks of a health answer, set its status from the others (consumed). */
struct json_t *mon_mute_health(struct mon *mon, struct json_t *health);
int mon_mute_job(struct mon *mon, struct mon_job *job, struct json_t *root, const char *prefix,
		 struct mon_inc *inc);
/* mon_blocklist.c: `osd blocklist add|rm|ls` (entries live in the map, version 7) */
int mon_blocklist_job(struct mon *mon, struct mon_job *job, struct json_t *root,
		      const char *prefix, struct mon_inc *inc);
struct json_t *mon_blocklist_ls(struct mon *mon);
/* Leader: remove the entries whose time has come. */
void mon_blocklist_tick(struct mon *mon);
/* Leader: end mutes that expired, whose check cleared or got worse (not sticky). */
void mon_mute_tick(struct mon *mon);

/* mon_crush.c: topology commands, osd tree, the balancer */
struct json_t *mon_crush_tree_json(struct mon *mon);
void mon_crush_health(struct mon *mon, struct json_t *checks, const char **status);
struct json_t *mon_crush_read(struct mon *mon, const char *prefix);
int mon_crush_job(struct mon *mon, struct mon_job *job, struct json_t *root, const char *prefix,
		  struct mon_inc *inc);
void mon_balancer_tick(struct mon *mon);
/* inc (built, not applied) adds capacity: pin replicas that would move between old OSDs. */
int mon_crush_pin(struct mon *mon, struct mon_inc *inc);

/* mon_cmd.c */
void mon_cmd_handle(struct mon *mon, struct msgr_conn *conn, uint64_t tid, const char *json,
		    size_t len);
bool mon_cmd_is_write(const char *json, size_t len);
/* A write command of our own (no answer), as a job on this leader. */
int mon_cmd_submit_internal(struct mon *mon, const char *json, size_t len);
void mon_osd_boot(struct mon *mon, struct msgr_conn *conn, uint64_t tid,
		  const struct proto_osd_boot *boot);
/* Append "; " and a formatted reason to an increment's reason (mon_osd.c). */
void mon_reason_add(struct mon_inc *inc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mon_osd_beacon(struct mon *mon, const struct proto_osd_beacon *b);
void mon_osd_failure(struct mon *mon, const struct proto_osd_failure *f);
void mon_live_reset(struct mon *mon);
void mon_live_check(struct mon *mon);
void mon_map_log_changes(struct mon *mon, const struct mon_map *old, const struct mon_inc *inc);

#endif
