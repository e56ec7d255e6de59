/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The PG state machine: the PG log, peering, recovery, backfill and scrub
 * decisions of one placement group on one OSD, as pure logic
 * (docs/recovery.md). It does no I/O of its own: it is driven by events
 * (a map, a message, a commit, a push that finished, a timer tick) and acts
 * through the callbacks of a `struct pg_env` — send a PG message, persist a
 * transaction, list or stat local objects, push an object, destroy a copy.
 * weft-osd implements them with its store and fabric (osd/osd_pg.c); the
 * simulator (tests/sim_pg.c) implements them in memory and runs the same
 * code under random message orders, crashes and map changes with the
 * invariants asserted.
 *
 *   pg_log.c      the in-memory log, the info and their persisted forms
 *   pg_peer.c     primary: intervals, GetInfo, the authoritative history, activation
 *   pg_merge.c    primary: merging logs, what each copy misses
 *   pg_member.c   member and stray: answers, activation, notify, deletion
 *   pg_recovery.c primary: pushes, pulls, backfill, clean
 *   pg_scrub.c    scrub, deep scrub, repair, verify
 *   pg_set.c      sets of object names (missing sets)
 *   pg_pi.c       past intervals and the prior-set rule (pg_pi.h)
 *
 * Every function runs in the owner's thread; nothing here blocks.
 */
#ifndef WEFT_OSD_PG_PG_H
#define WEFT_OSD_PG_PG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osd/pg/pg_pi.h"
#include "proto/proto.h"

#define PG_MAX_REPLICAS PROTO_PG_IV_OSDS
#define PG_PEERS_MAX	4096 /* copies a primary asks about (acting, past members, strays) */
#define PG_STRAYS_MAX	32   /* strays remembered between intervals */
#define PG_LREQ_MAX	32   /* OSDs owing LOG answers a PG counts at once (pg_lreq) */

/* Log entry ops beyond the client ops (enum proto_osd_opcode). */
#define PG_OP_ROLLBACK PROTO_PG_LOG_ROLLBACK /* a marker: this version never happened */

/* ------------------------------------------------------------------ sets */

struct pg_set_ent {
	char *name;
	uint64_t version; /* the version wanted (0 = the object must not exist) */
	uint64_t stamp;	  /* when the push/pull in flight started */
	uint32_t flags;	  /* PG_SET_* */
	uint32_t tries;	  /* pull: sources already asked */
	int32_t src;	  /* pull: the OSD asked last (-1: none) */
};
#define PG_SET_INFLIGHT 0x1u /* a push or pull of it is under way */
#define PG_SET_REMOVE	0x2u /* rolled back: the copy must be made equal again */
#define PG_SET_URGENT	0x4u /* a client op waits for it */
#define PG_SET_TOMB	0x8u /* deleted slot */
#define PG_SET_CHECKED	0x40u /* pull: our copy was looked at for this version (pg_set_add clears) */

struct pg_set {
	struct pg_set_ent *e;
	uint32_t cap, n, used; /* used = n + tombstones */
};

int pg_set_add(struct pg_set *s, const char *name, uint64_t version, uint32_t flags);
struct pg_set_ent *pg_set_find(const struct pg_set *s, const char *name);
void pg_set_del(struct pg_set *s, const char *name);
void pg_set_clear(struct pg_set *s);
/* Iterate: *i starts at 0; NULL at the end. */
struct pg_set_ent *pg_set_next(const struct pg_set *s, uint32_t *i);

/* ------------------------------------------------------------------- log */

struct pg_entry {
	uint64_t v;   /* version: (map epoch << 32) | seq, unique per PG */
	uint16_t op;  /* PROTO_OP_* of the client op, or PG_OP_ROLLBACK */
	char *name;   /* owned by the log */
};

/* The log: entries in version order (rollback markers included). */
struct pg_log {
	struct pg_entry *e;
	uint32_t head, n, cap; /* entries e[head .. head + n) */
};

/* The persisted info of a copy. */
struct pg_info {
	uint64_t lu;   /* last_update: the newest entry (markers excluded) */
	uint64_t lc;   /* last_complete: every object named up to it is as the log says */
	uint64_t tail; /* the log holds every entry after it */
	uint32_t les;  /* the epoch of the last interval the PG went active in */
	/*
	 * The epoch this copy began following the PG's maps, and the PG's
	 * creation epoch as far as known (0: unknown). Peering needs a copy
	 * that followed the PG since the last activation (or its creation):
	 * copies that all began later cannot know what happened before.
	 */
	uint32_t since, born;
	bool backfill; /* this copy is being rebuilt by backfill: its objects are unreliable */
	struct pg_pi pi; /* past intervals since les */
};

/* What one transaction changes in the PG's persisted state (pg_env.persist). */
struct pg_txn {
	uint64_t token; /* pg_committed(pg, token) when durable */
	uint64_t prev;	/* pg_op_prepare: the entry before this op's (its record carries it) */
	/* entries to write at their version (append, or overwrite with a marker) */
	struct pg_entry *put; /* names borrowed from the log: valid while t is being persisted */
	uint32_t nput, capput;
	uint64_t trim; /* drop entries <= trim (0 = none) */
	bool clear;    /* drop every entry first */
	bool info;     /* write the info (pg_info_encode) */
	const char **remove; /* local objects to remove (backfill of the primary itself) */
	uint32_t nremove, capremove;
};

/* ------------------------------------------------------------ environment */

enum pg_log_level { PG_LOG_DEBUG, PG_LOG_INFO, PG_LOG_WARN, PG_LOG_ERROR };

/* env->paused bits */
#define PG_PAUSE_RECOVERY   0x1u  /* norecover: no log-based recovery */
#define PG_PAUSE_BACKFILL   0x2u  /* nobackfill: no backfill */
#define PG_PAUSE_REBALANCE  0x4u  /* norebalance: no backfill of a PG that is only misplaced */
#define PG_PAUSE_SCRUB	    0x8u  /* noscrub: no periodic light scrub */
#define PG_PAUSE_DEEP_SCRUB 0x10u /* nodeep-scrub: no periodic deep scrub */

/* One local object, as a listing or a scan sees it. */
struct pg_obj {
	char name[PROTO_OBJ_NAME_MAX + 1];
	uint64_t version; /* attribute "v"; 0 when none */
	uint64_t size;
	uint32_t crc;	  /* deep: crc32c of the data (0xffffffff: unreadable) */
	uint32_t digest;  /* crc32c over the object's stored block checksums (0: unknown) */
};

#define PG_OBJ_CRC_BAD 0xffffffffu /* pg_obj.crc of a copy that cannot be read */
#define PG_OBJ_DEEP   0x1u /* read the data back: crc */
#define PG_OBJ_DIGEST 0x2u /* digest of the stored block checksums */

struct pg;

struct pg_env_ops {
	/* A PG message to an OSD (the header's pool/pg/epoch/from are set). Lost on failure. */
	void (*send)(void *arg, struct pg *pg, int32_t to, uint16_t type, const struct proto_pg *m);
	/*
	 * Persist t (log entries, trims, info, removes) in one transaction,
	 * after every transaction submitted before it; pg_committed(pg,
	 * t->token) when durable (a store that fails a commit stops the OSD).
	 * Nonzero: not submitted (nothing changed).
	 */
	int (*persist)(void *arg, struct pg *pg, const struct pg_txn *t);
	/*
	 * Version and size (and the digest with PG_OBJ_DIGEST) of one local
	 * object: 0, -ENOENT, an error. Deep crcs come from obj_crc.
	 */
	int (*obj_stat)(void *arg, struct pg *pg, const char *name, unsigned int what,
			struct pg_obj *out);
	/* Local objects after `after` (name order), at most max; *last: none after these. */
	int (*obj_list)(void *arg, struct pg *pg, const char *after, uint32_t max,
			unsigned int what, struct pg_obj *out, uint32_t *n_out, bool *last_out);
	/*
	 * Send our copy of name to osd `to` (remove there when we have none),
	 * which must be at `version` here (0 = absent); pg_push_done() after.
	 * epoch: the interval it belongs to (ours as primary, a pull's own).
	 * Nonzero: not started now (retried later).
	 */
	int (*push)(void *arg, struct pg *pg, int32_t to, const char *name, uint64_t version,
		    uint32_t epoch);
	/* Drop this whole copy (objects, log, info) in the background; pg_destroyed() after. */
	int (*destroy)(void *arg, struct pg *pg);
	/* Client ops of the PG may move (it went active, an object was recovered). */
	void (*kick)(void *arg, struct pg *pg);
	/* The interval ended: ordered client ops are answered -EAGAIN, pushes stop. */
	void (*interval)(void *arg, struct pg *pg);
	/* May one more (non-urgent) recovery op start? take = 1 to take, -1 to give back. */
	bool (*budget)(void *arg, int take);
	/* The OSD's one scrub at a time: take = 1 to take (false: busy), -1 to give back. */
	bool (*scrub_slot)(void *arg, int take);
	/* A client write to name is between ordering and commit: no push may overtake it. */
	bool (*obj_busy)(void *arg, struct pg *pg, const char *name);
	/*
	 * A client write to an object in (after, upto] (after NULL: from the
	 * start, upto NULL: to the end) was ordered and has not completed on
	 * every copy yet (a scrub batch waits for it). NULL: never.
	 */
	bool (*range_busy)(void *arg, struct pg *pg, const char *after, const char *upto);
	/*
	 * crc32c of name's data (size bytes), read back through the store
	 * (which checks every block's crc) for a deep scrub: 1 = done now
	 * (*crc_out; PG_OBJ_CRC_BAD when unreadable), 0 = started, and
	 * pg_obj_crc_done(pg, token, crc) follows from a later event (the PG
	 * may be gone or busy with other work by then: token tells), <0 = not
	 * started (the scan is given up; the primary asks again). The scrub
	 * fence keeps the object unchanged meanwhile.
	 */
	int (*obj_crc)(void *arg, struct pg *pg, const char *name, uint64_t size, uint64_t token,
		       uint32_t *crc_out);
	/*
	 * May recovery write data into osd's store now (a push to it, a pull into
	 * ours, the next backfill batch for it)? false: it is past its space
	 * limit (the capacity rules, docs/capacity.md); tried again later.
	 * urgent: a client op waits for this object. NULL: always.
	 */
	bool (*space_ok)(void *arg, struct pg *pg, int32_t osd, bool urgent);
	/*
	 * Background work the map's flags hold now (PG_PAUSE_*: norecover,
	 * nobackfill, norebalance, noscrub, nodeep-scrub); what a client op
	 * waits for and what an operator asked for are never held. NULL: none.
	 */
	uint32_t (*paused)(void *arg, struct pg *pg);
	/*
	 * Does osd answer an ACTIVATE it applied (PROTO_FEAT_PG_ACT_ACK)? 1 yes,
	 * 0 no (an older build), -ENOTCONN not known now. NULL: always.
	 */
	int (*acks_activate)(void *arg, int32_t osd);
	/*
	 * An entry point of this PG ran (anything but pg_tick and the const
	 * queries): call pg_tick at the next tick, then pg_tick_due to learn
	 * when the one after is due. NULL: the caller ticks every PG always.
	 */
	void (*tick_wanted)(void *arg, struct pg *pg);
	bool (*osd_up)(void *arg, int32_t osd);
	bool (*osd_exists)(void *arg, int32_t osd);
	uint32_t (*max_osd)(void *arg);
	uint64_t (*now_ms)(void *arg);
	void (*log)(void *arg, struct pg *pg, enum pg_log_level lv, const char *msg);
};

struct pg_env {
	const struct pg_env_ops *ops;
	void *arg;
	int32_t self;	     /* this OSD's id */
	uint32_t log_max;    /* entries kept (osd_pg_log_max) */
	uint32_t max_chunk;  /* entries per LOG / SCAN message */
	size_t msg_bytes;    /* room for the entries of one message */
	uint64_t scrub_ms, deep_scrub_ms; /* periodic light / deep scrub (0 = never) */
	uint64_t scrub_sleep_ms;	  /* between a scrub's batches (osd_scrub_sleep) */
};

/* ------------------------------------------------------------------ the PG */

enum pg_phase {
	PG_PH_NONE = 0, /* not primary */
	PG_PH_WAIT_TX,	/* new interval: our own transactions are still committing */
	PG_PH_GETINFO,	/* QUERY sent, waiting for the answers */
	PG_PH_GETLOG,	/* fetching the authoritative log, or a divergent member's */
	PG_PH_ACTIVE,	/* serving I/O; recovery may still run */
	PG_PH_DOWN,	/* cannot peer: too few members, a past interval unheard, incomplete */
};

/* What a primary knows of one other copy during an interval. */
struct pg_peer {
	int32_t osd;
	bool acting;	/* a member of the interval */
	bool queried, answered, heard; /* heard: answered itself (not skipped) */
	uint64_t query_ms;
	struct proto_pg info; /* its PG_INFO (entries not kept) */
	/* merge */
	bool log_wanted, log_fetched;
	bool missing_done; /* its missing set is decided (from its log, or as the auth) */
	uint64_t fork;	/* the newest entry it shares with the authoritative log */
	bool divergent; /* it has entries after fork */
	struct pg_entry *rb; /* its entries after fork: sent back as rollback markers */
	uint32_t nrb, caprb;
	bool backfill;	/* rebuilt by a scan, not from the log */
	bool activated;	 /* ACTIVATE sent this interval */
	bool act_acked;	 /* ...and the member said it applied it (or cannot say: older) */
	uint64_t act_ms; /* when ACTIVATE was sent */
	bool recovered_sent;
	uint32_t pushed;
	struct pg_set missing; /* objects to push to it (version 0: to remove) */
	/* backfill: objects up to bf_pos (name order) are done */
	char *bf_pos;
	bool bf_scan_inflight, bf_done;
	uint64_t bf_scan_ms;
	struct pg_obj *bf_remote; /* its last scan answer */
	uint32_t bf_nremote;
	bool bf_remote_last;
	/* stray: deletion */
	bool stray_delete_sent;
	uint64_t stray_delete_ms;
};

struct pg_scrub;
struct pg_crc_job;

struct pg {
	const struct pg_env *env;
	uint32_t pool, id;
	/* persisted */
	struct pg_info info;
	struct pg_log log;
	/* transactions submitted, not yet committed (pushes applied here too) */
	uint32_t tx_inflight;
	uint64_t tx_token;
	struct pg_txn txn; /* scratch */
	bool stalled; /* a record failed here: refuse this interval's records until queried */
	bool destroying;
	/* member, backfill copy: our log trims to no newer tail (the ACTIVATE's); 0 = none */
	uint64_t trim_floor;
	/* the interval */
	uint32_t map_epoch; /* the newest map given to pg_map */
	uint32_t same_since;
	uint32_t fence; /* ring records of intervals before this epoch are refused */
	int32_t acting[PG_MAX_REPLICAS];
	uint32_t acting_up_from[PG_MAX_REPLICAS];
	unsigned int nacting;
	unsigned int size, min_size;
	bool primary;
	bool restart_wanted; /* a replica failed a record: peer again */
	uint64_t restart_ms;
	enum pg_phase phase;
	uint32_t state; /* PROTO_PGS_* */
	uint32_t seq_epoch, seq; /* the next version is seq_epoch << 32 | seq + 1 */
	/* member: queries to answer once tx_inflight is 0; activation entries */
	struct { int32_t from; uint32_t epoch; } q[4];
	unsigned int nq;
	struct pg_entry *act_ent; /* entries of PG_LOG before PG_ACTIVATE */
	uint32_t nact, capact;
	uint32_t act_epoch;
	uint64_t notify_ms;
	int32_t stray_primary; /* stray: the primary to notify, -1 = none */
	uint32_t left_epoch;   /* the map epoch we last left the acting set at (0: not seen) */
	bool notify_heard;     /* the primary asked us (QUERY) or told us (DELETE) since */
	uint32_t notify_epoch; /* ... in the interval that began then */
	uint32_t notify_up_from; /* ... and the primary's process that asked */
	bool notify_wait;	 /* a NOTIFY waits for our transactions in flight */
	/* a DELETE that waits for our transactions in flight (pg_tick takes it up) */
	bool delete_wait;
	int32_t delete_from;
	uint32_t delete_epoch;
	bool pi_gap;	       /* map epochs were missed since les: the history may be unknown */
	bool pi_unsure;	       /* we did not follow this PG's maps: our past intervals are blind */
	/* primary */
	struct pg_peer *p; /* grown by pg_peer_add: hold no pointer into it across an add */
	unsigned int np, capp;
	int32_t strays[PG_STRAYS_MAX]; /* copies outside the acting set we heard of: asked again */
	unsigned int nstrays;
	int auth; /* index in p[], -1 = ourselves */
	int base; /* self-backfill: the copy scanned for what the log does not name */
	uint64_t auth_lu;
	bool self_backfill;
	uint32_t paused; /* PG_PAUSE_* holding recovery at the last tick (logged on change) */
	/* recovery waited on space_ok since the last tick began (state backfill_toofull) */
	bool space_wait, toofull;
	int32_t toofull_osd; /* the OSD it waited for last */
	/* a push or pull ended and gave its budget back: pg_recovery_kicked runs the step */
	bool recover_due;
	int fetch; /* the peer whose log is being fetched, -1 = none */
	uint64_t fetch_from, fetch_after, fetch_ms;
	/*
	 * LOG_REQs of interval lreq_epoch not answered yet, per OSD asked
	 * (pg_fetch_stale): an answer to an earlier fetch round must not be
	 * taken for one of the present round. fetch_stale: answers still due
	 * from the fetched OSD to requests sent before this round began.
	 */
	struct {
		int32_t osd;
		uint32_t n;
	} lreq[PG_LREQ_MAX];
	uint32_t nlreq, lreq_epoch, fetch_stale;
	struct pg_entry *fe; /* entries fetched */
	uint32_t nfe, capfe;
	struct pg_set missing; /* objects we miss ourselves (version wanted) */
	uint32_t unfound;
	int32_t blocked[PROTO_PG_BLOCKED_MAX];
	uint8_t nblocked;
	struct pg_scrub *scrub;
	struct pg_crc_job *crc; /* deep crcs being read (a scrub batch or a SCAN answer) */
	uint32_t inconsistent, last_scrub, last_deep_scrub; /* seconds (now_ms / 1000) */
	uint32_t last_verify, verify_inconsistent;
	uint32_t verify_token_wanted; /* the operator's token of the verify asked for */
	uint32_t verify_token;	      /* ... and of the last verify done (pg_verify_request) */
	uint64_t objects;
	bool scrub_wanted, deep_wanted, repair_wanted, verify_wanted;
	uint64_t next_scrub_ms, next_deep_ms;
	bool in_tick; /* pg_tick runs: its own calls do not ask for another tick */
};

/* Create / free the state of one PG (nothing loaded, nothing persisted). */
struct pg *pg_create(const struct pg_env *env, uint32_t pool, uint32_t id);
void pg_free(struct pg *pg);

/* Loading at start: the decoded info, then every persisted entry in order. */
int pg_info_decode(const void *buf, size_t len, struct pg_info *out);
void pg_info_encode(const struct pg *pg, struct proto_enc *enc);
#define PG_INFO_ENC_MAX (64 + PG_PI_ENC_MAX)
void pg_load(struct pg *pg, const struct pg_info *info);
int pg_load_entry(struct pg *pg, uint64_t v, uint16_t op, const char *name);
/* After the last entry: check the loaded state (fixes what cannot be, logs it). */
void pg_loaded(struct pg *pg);
/* This copy holds anything (a log, objects or history). */
bool pg_has_copy(const struct pg *pg);

/* A map epoch: the PG's acting set in it (n = 0: we are not a member). */
struct pg_map {
	uint32_t epoch;
	uint32_t gap_from; /* 0, or the last epoch seen before a gap */
	const int32_t *acting;
	unsigned int n;
	unsigned int size, min_size; /* the pool's */
	int32_t primary;	     /* acting[0], or -1 */
	uint32_t primary_up_from;    /* the epoch the primary's process booted in */
	/*
	 * The epoch each member's running process booted in: a member that
	 * restarted lost what it had not committed, so the interval starts
	 * over even with the same members. NULL: unknown (never a change).
	 */
	const uint32_t *up_from;
	/* The epoch the PG's pool was created, if this OSD saw it happen (0: unknown). */
	uint32_t created;
};
void pg_map(struct pg *pg, const struct pg_map *m);

/*
 * A PG message for this PG: 0, or -EAGAIN when it comes from an interval
 * of a map newer than ours: the caller holds it, and everything after it
 * from the same sender (ring records too), until pg_map reaches that epoch.
 */
int pg_msg(struct pg *pg, uint16_t type, const struct proto_pg *m);
/* Timers: resends, stray timeouts, recovery scheduling, backfill, scrub. */
void pg_tick(struct pg *pg);
/*
 * When this PG's next pg_tick is due (now_ms clock): PG_TICK_NOW (every
 * tick: it peers, recovers, scrubs, waits for an answer or a commit), a
 * time (a scheduled scrub, a stray's next NOTIFY), or PG_TICK_NEVER. Asked
 * after each pg_tick; it stays true until the next entry point runs
 * (env tick_wanted), so a PG that is idle costs nothing between events.
 */
#define PG_TICK_NOW   0u
#define PG_TICK_NEVER UINT64_MAX
uint64_t pg_tick_due(const struct pg *pg);
/*
 * After env->kick, outside any machine call: when a push or pull of this
 * PG has ended since the last recovery step, run the step now, so the
 * budget it gave back goes to the next object at once instead of at the
 * next tick (docs/recovery.md, "Pace").
 */
void pg_recovery_kicked(struct pg *pg);
/* A transaction of this PG (env->persist, pg_op_prepare, pg_rec_prepare) is durable. */
void pg_committed(struct pg *pg, uint64_t token);

/* ----- the op path (primary) */
bool pg_io_ready(const struct pg *pg);
/* false: name is still missing on some copy; its recovery moves ahead. */
bool pg_obj_ready(struct pg *pg, const char *name);
/* The version of the next op, in map epoch `epoch`. */
uint64_t pg_op_version(struct pg *pg, uint32_t epoch);
/* The log part of an op's transaction (entry appended in memory; t is ours until the next call). */
int pg_op_prepare(struct pg *pg, uint64_t v, uint16_t op, const char *name, struct pg_txn **t_out);
/* The op's transaction was not submitted after pg_op_prepare: undo. */
void pg_op_cancel(struct pg *pg, uint64_t v);
/* A replica failed a record (not a fence): the PG peers again. */
void pg_repl_failed(struct pg *pg, int32_t osd, uint64_t v, int rc);

/* ----- ring records (member) */
/*
 * A replication record of interval epoch `epoch`, entry v following entry
 * prev on the primary: 0 = apply it with *t_out in its transaction,
 * -ESTALE = fenced (an older interval's), -EAGAIN = stalled (an earlier
 * record failed here, or one is missing before it: our log must not have
 * a hole, the primary peers again).
 */
int pg_rec_prepare(struct pg *pg, uint32_t epoch, uint64_t v, uint64_t prev, uint16_t op,
		   const char *name, struct pg_txn **t_out);
void pg_rec_cancel(struct pg *pg, uint64_t v, int rc);
/*
 * A push of interval `epoch` bringing name to `version` (0 = absent) may be
 * applied here (0), or is fenced or contradicts our log (-ESTALE). Accepted,
 * it counts as a transaction in flight until pg_push_finished.
 */
int pg_push_accept(struct pg *pg, uint32_t epoch, const char *name, uint64_t version);
/* An accepted push's transaction committed, failed, or was never submitted. */
void pg_push_finished(struct pg *pg);
/* A pushed object committed here (the primary's pull is done). */
void pg_obj_arrived(struct pg *pg, const char *name, uint64_t version);

/* ----- pushes (primary or pull source) */
void pg_push_done(struct pg *pg, int32_t to, const char *name, int rc);
/* env->destroy finished. */
void pg_destroyed(struct pg *pg, int rc);

/* ----- scrub, stats */
void pg_scrub_request(struct pg *pg, bool deep, bool repair);
/*
 * A client write to name must not be ordered now: the scrub batch under
 * way covers it (ordered when the batch ends: env kick). Writes only.
 */
bool pg_scrub_holds(const struct pg *pg, const char *name);
/* The crc env obj_crc started with token is here (PG_OBJ_CRC_BAD: unreadable). */
void pg_obj_crc_done(struct pg *pg, uint64_t token, uint32_t crc);
/*
 * Compare every member's copies by version, size and stored-checksum digest
 * (no data read), once the PG is clean. When done, verify_token = token and
 * verify_inconsistent / objects hold the result: the operator's `weft pg
 * verify` waits for its own token in the PG's stats.
 */
void pg_verify_request(struct pg *pg, uint32_t token);
uint64_t pg_missing_count(const struct pg *pg);
/* Names to recover on every copy (callback per name; stops at nonzero). */
int pg_missing_each(const struct pg *pg, int (*cb)(void *arg, const char *name), void *arg);

#endif
