/* SPDX-License-Identifier: Apache-2.0 */
/* Internal to the PG state machine (osd/pg/): shared helpers of its files. */
#ifndef WEFT_OSD_PG_PG_INT_H
#define WEFT_OSD_PG_PG_INT_H

#include "osd/pg/pg.h"

#define PG_QUERY_RESEND_MS  2000u
#define PG_LOG_RESEND_MS    3000u
#define PG_PULL_RETRY_MS    10000u
#define PG_PUSH_RETRY_MS    30000u
#define PG_UNFOUND_RETRY_MS 5000u
#define PG_DELETE_RESEND_MS 5000u
#define PG_NOTIFY_MS	    2000u  /* a stray tells the primary it holds a copy, until asked */
/*
 * ... and, asked, again this often while the copy is there: a primary that
 * heard us while we were down in its map, then peered again, forgot us, and
 * with the same acting set nothing makes it look again (sim_pg seed 5827).
 */
#define PG_RENOTIFY_MS 10000u
#define PG_ACT_ACK_MS	    5000u  /* a member's answer to ACTIVATE, before peering again */
#define PG_RESTART_MS	    1000u  /* after a replica failed a record */
#define PG_BF_BATCH	    128u
#define PG_BF_QUEUE	    256u   /* copies queued before the next batch is scanned */
#define PG_BF_RESEND_MS	    5000u

/* pull of an object whose newest change is older than every log: the auth's copy */
#define PG_V_ANY UINT64_MAX

void pg_logf(struct pg *pg, enum pg_log_level lv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
uint64_t pg_now(const struct pg *pg);

/* First thing in every public entry point but pg_tick (pg.h, env tick_wanted). */
static inline void pg_tick_want(struct pg *pg)
{
	if (!pg->in_tick && pg->env->ops->tick_wanted != NULL)
		pg->env->ops->tick_wanted(pg->env->arg, pg);
}
bool pg_osd_up(const struct pg *pg, int32_t osd);

/* A message header of this PG and interval (from is set by the environment). */
struct proto_pg pg_hdr(const struct pg *pg);
void pg_send(struct pg *pg, int32_t to, uint16_t type, const struct proto_pg *m);
/* The sender's INFO/NOTIFY body: our info and past intervals (valid until the next call). */
void pg_info_msg(struct pg *pg, struct proto_pg *m);

/* ----- pg_log.c: the log */
void pg_log_free(struct pg_log *l);
struct pg_entry *pg_log_at(const struct pg_log *l, uint32_t i);
/* Index of the entry with version v (markers too), or -1. */
int pg_log_find(const struct pg_log *l, uint64_t v);
/* Insert in version order (an entry of the same version is replaced); the entry is returned. */
struct pg_entry *pg_log_put(struct pg_log *l, uint64_t v, uint16_t op, const char *name);
/* Drop entries <= upto (names freed). */
void pg_log_trim(struct pg_log *l, uint64_t upto);
void pg_log_clear(struct pg_log *l);
/* The newest entry that is not a marker, or NULL. */
const struct pg_entry *pg_log_newest(const struct pg_log *l);
/* The newest non-marker entry naming `name` with version <= upto, or NULL. */
const struct pg_entry *pg_log_newest_of(const struct pg_log *l, const char *name, uint64_t upto);
/* The entry v is ours and names `name` (not a marker). */
bool pg_log_has(const struct pg_log *l, uint64_t v, const char *name);
/* Our entry v of `name` was rolled back (a marker). */
bool pg_log_has_rollback(const struct pg_log *l, uint64_t v, const char *name);
/*
 * The most last_complete may say once our entry v of `name` is rolled
 * back: just below the newest write of name that stays, 0 when the log
 * names none (pg_log.c says why).
 */
uint64_t pg_log_rollback_lc(const struct pg_log *l, const char *name, uint64_t v);

/* The PG's scratch transaction, reset. */
struct pg_txn *pg_txn_begin(struct pg *pg);
int pg_txn_put(struct pg_txn *t, const struct pg_entry *e);
int pg_txn_remove(struct pg_txn *t, const char *name);
/* Hand t to env->persist, counting it in tx_inflight. */
int pg_persist(struct pg *pg, struct pg_txn *t);
/* Persist only the info. */
int pg_persist_info(struct pg *pg);
/*
 * Append one entry of an op or a record (in memory and into t): lu moves,
 * a complete copy stays complete, the oldest entries are trimmed past
 * log_max but never above lc.
 */
int pg_log_append_tx(struct pg *pg, uint64_t v, uint16_t op, const char *name,
		     struct pg_txn *t);

/* ----- pg_peer.c: primary */
void pg_peer_start(struct pg *pg);
void pg_peer_check(struct pg *pg);
void pg_peer_info(struct pg *pg, const struct proto_pg *m, bool notify);
void pg_peer_log(struct pg *pg, const struct proto_pg *m);
void pg_peer_next(struct pg *pg);
void pg_peer_activate(struct pg *pg);
void pg_peer_reset(struct pg *pg);
int pg_peer_index(const struct pg *pg, int32_t osd);
struct pg_peer *pg_peer_add(struct pg *pg, int32_t osd, bool acting);
void pg_update_state(struct pg *pg);
bool pg_complete_member(const struct pg *pg);

/* ----- pg_merge.c: primary */
/* Choose the authoritative copy: 0, or -EAGAIN (state set: DOWN / INCOMPLETE). */
int pg_merge_choose(struct pg *pg);
/* The auth's log is in pg->fe: merge it into ours (persisted). */
int pg_merge_auth(struct pg *pg);
/* Active: choose the base again when ours is missing, down or incomplete. */
void pg_merge_base_again(struct pg *pg);
/* A member's log is in pg->fe: its fork point and divergent entries. */
void pg_merge_member_log(struct pg *pg, struct pg_peer *p);
/* Does member p need its log read (divergence, or misses below our tail)? */
bool pg_merge_member_needs_log(const struct pg *pg, const struct pg_peer *p);
uint32_t pg_fetched_find(const struct pg *pg, uint64_t v);
/* Decide p's fork point when its log is not needed. */
void pg_merge_member_plain(struct pg *pg, struct pg_peer *p);
/* Send p what it lacks and ACTIVATE; fill its missing set. */
void pg_merge_activate_member(struct pg *pg, struct pg_peer *p);
/* Our own missing set from our log after lc. */
int pg_merge_own_missing(struct pg *pg, uint64_t from);
/* The version a copy of `name` must have (newest entry; 0 = absent; PG_V_ANY: as at the tail). */
uint64_t pg_merge_want(const struct pg *pg, const char *name);
/* The newest tail our log may trim to (UINT64_MAX: no bound from the base). */
uint64_t pg_merge_trim_floor(const struct pg *pg);
void pg_fetch_reset(struct pg *pg);

/* ----- pg_member.c */
void pg_member_query(struct pg *pg, const struct proto_pg *m);
void pg_member_settled(struct pg *pg);
void pg_member_logreq(struct pg *pg, const struct proto_pg *m);
void pg_member_log(struct pg *pg, const struct proto_pg *m);
void pg_member_activate(struct pg *pg, const struct proto_pg *m);
void pg_member_recovered(struct pg *pg, const struct proto_pg *m);
void pg_member_delete(struct pg *pg, const struct proto_pg *m);
void pg_member_delete_waiting(struct pg *pg);
void pg_member_pull(struct pg *pg, const struct proto_pg *m);
void pg_member_scan_req(struct pg *pg, const struct proto_pg *m);
void pg_stray_notify(struct pg *pg, int32_t primary);
void pg_act_reset(struct pg *pg);

/* ----- pg_recovery.c: primary */
void pg_recovery_start(struct pg *pg);
void pg_recovery_tick(struct pg *pg);
void pg_recovery_pull_answer(struct pg *pg, const struct proto_pg *m);
void pg_recovery_scan(struct pg *pg, const struct proto_pg *m);
bool pg_recovery_done(const struct pg *pg);
void pg_recovery_strays(struct pg *pg);
/* The base changed: pulls of objects wanted as the base holds them start over. */
void pg_recovery_base_changed(struct pg *pg);
void pg_recovery_release(struct pg *pg);
/* Our objects after pos (NULL: from the start) up to hi (NULL: all), in name order. */
int pg_obj_range(struct pg *pg, const char *pos, const char *hi, unsigned int what,
		 struct pg_obj **out,
		 uint32_t *n_out);

/* ----- pg_scrub.c */
/*
 * The deep crcs of a listed batch, one object at a time through env
 * obj_crc; done() runs when every objs[i].crc is in (the job is freed
 * after it; done may take objs and set it NULL). One job per PG: a new
 * one replaces the old (a SCAN_REQ sent again).
 */
struct pg_crc_job {
	struct pg_obj *objs;
	uint32_t n, next;
	uint64_t token; /* of the crc in flight for objs[next] */
	bool waiting;
	void (*done)(struct pg *pg, struct pg_crc_job *j);
	int32_t to; /* a member's SCAN answer: to whom, for which interval, last? */
	uint32_t epoch;
	bool last;
	char after[PROTO_OBJ_NAME_MAX + 1]; /* ... and the request's start (a resend is ignored) */
};
void pg_crc_start(struct pg *pg, struct pg_obj *objs, uint32_t n,
		  void (*done)(struct pg *pg, struct pg_crc_job *j), int32_t to, uint32_t epoch,
		  bool last);
void pg_crc_cancel(struct pg *pg);
void pg_scrub_tick(struct pg *pg);
/* pg_tick_due's share for a running scrub (PG_TICK_NOW unless it sleeps). */
uint64_t pg_scrub_due(const struct pg *pg);
bool pg_scrub_scan(struct pg *pg, const struct proto_pg *m);
void pg_scrub_stop(struct pg *pg);

#endif
