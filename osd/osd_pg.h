/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Placement-group state beyond the op queue: the PG log and its persisted
 * info, peering, recovery, backfill, scrub (docs/recovery.md).
 *
 *   osd_pg.c        per-PG state, PG log index, info persistence, the store
 *                   transactions of records and pushes, PG stats to the mons
 *   osd_pgset.c     a small set of object names (missing sets)
 *   osd_peer.c      peering: interval changes, QUERY/INFO, choice, activation
 *   osd_peer_log.c  peering: log fetch and merge, entries sent to members
 *   osd_peer_member.c  peering on a member or stray: answers, appends, deletion
 *   osd_peer_pi.c   past intervals: tracked per map, the saved map, the prior-set rule
 *   osd_pi.c        past intervals: the pure logic (osd_pi.h)
 *   osd_rthrottle.c recovery throttled by client p99: the pure logic
 *   osd_recovery.c  log-based recovery: pushes, pulls, recover on access, throttle
 *   osd_backfill.c  backfill by comparing listings; the SCAN answer (also scrub's)
 *   osd_scrub.c     scrub, deep scrub and repair
 *
 * The op path (osd_op.c) and replication (osd_repl.c) call in through the
 * few hooks declared at the end; everything else stays in these files.
 */
#ifndef WEFT_OSD_OSD_PG_H
#define WEFT_OSD_OSD_PG_H

#include "osd/osd.h"
#include "osd/pg/pg.h"

#define OSD_PG_PROBE_MAX 16 /* OSDs a primary asks about one PG (acting + strays) */
#define OSD_PGINFO_OBJ "pginfo"
#define OSD_ATTR_VERSION "v" /* object attribute: PG version of its last change */

/* ring record ops beyond the client ops (osd_wire.c) */
#define OSD_REC_PUSH 7	    /* a chunk of an object being recovered */
#define OSD_REC_PUSH_LAST 8 /* its last chunk: the object is whole */
#define OSD_REC_PUSH_RM 9   /* the object must not exist */

enum osd_pg_phase {
	OSD_PH_NONE = 0, /* not primary, or no map yet */
	OSD_PH_WAIT_TX,	 /* new interval: own transactions of the old one still committing */
	OSD_PH_GETINFO,	 /* QUERY sent to every probe target, waiting for INFO */
	OSD_PH_GETLOG,	 /* fetching the authoritative log (or a divergent member's) */
	OSD_PH_ACTIVE,	 /* serving I/O; recovery/backfill may still run */
	OSD_PH_DOWN,	 /* cannot peer (fewer than min_size members, or no history) */
};

/* What a primary knows about one other OSD during an interval. */
struct osd_pg_member {
	int32_t osd;
	bool acting;
	bool answered;
	bool heard;	    /* answered itself (not skipped as a silent stray) */
	uint64_t query_ms;
	struct proto_pg info;
	bool divergent;	    /* its newest entries are not in the authoritative log */
	bool backfill;	    /* rebuilt by a scan, not from the log */
	bool log_fetched;   /* divergent: its log was read to find the entries */
	bool activated;
	bool recovered_sent;
	uint32_t pushed; /* objects recovered to it this interval */
	struct pg_set missing; /* objects to push to it (or remove on it) */
	/* backfill: objects up to bf_pos (name order) are done */
	char *bf_pos;
	bool bf_scan_inflight, bf_done;
	uint64_t bf_scan_ms;
	struct proto_pg_scan_entry *bf_remote; /* last scan answer, name order */
	uint32_t bf_nremote, bf_iremote;
	bool bf_remote_last;
};

/* One pending QUERY a member answers once its own transactions committed. */
struct osd_pg_query {
	struct osd_conn *conn;
	uint32_t from, epoch;
};

struct osd_pgx {
	struct osd_pg *pg;
	bool loaded;
	/* persisted info (OSD_PGINFO_OBJ attr "<pool>.<pg>") */
	uint64_t last_update, tail, last_complete;
	uint32_t les;
	struct pg_pi pi;   /* past intervals since les (persisted with the info) */
	bool backfill_flag; /* this copy is being rebuilt by backfill */
	bool log_catchup;   /* appending entries of another copy: last_complete stays */
	/* the log's versions in order (rolled-back entries left out) */
	uint64_t *logv;
	uint32_t nlog, caplog;
	uint32_t tx_inflight; /* store transactions of this PG not yet committed */
	/* the current interval as this OSD sees it */
	uint32_t same_since;
	uint32_t fence; /* ring records of intervals before this epoch are refused */
	int32_t acting[PLC_MAX_REPLICAS];
	unsigned int nacting;
	bool primary;
	unsigned int pool_size, min_size;
	enum osd_pg_phase phase;
	uint32_t state; /* PROTO_PGS_* */
	/* primary: members and probed strays, and what it misses itself */
	struct osd_pg_member m[OSD_PG_PROBE_MAX];
	unsigned int nm;
	int auth;	      /* index in m[], -1 = ourselves */
	uint64_t auth_lu;     /* the authoritative last_update */
	uint64_t getlog_after;/* GETLOG: next entry wanted */
	struct pg_set missing; /* objects to pull (primary) */
	bool self_backfill;	  /* the primary rebuilds itself by scanning the auth */
	/* down: OSDs of a past interval peering must hear from (one of them) */
	uint32_t blocked[PROTO_PG_BLOCKED_MAX];
	uint8_t nblocked;
	/* member: queries waiting for tx_inflight == 0 */
	struct osd_pg_query q[4];
	unsigned int nq;
	/* stats */
	uint64_t objects;
	uint32_t inconsistent, last_scrub;
	uint32_t unfound; /* objects it misses that no complete copy up holds */
	bool scrub_wanted, deep_wanted, repair_wanted;
};

/* osd_pg.c */
struct osd_pgx *osd_pgx_get(struct osd *osd, uint32_t pool, uint32_t pg);
int osd_pgx_load(struct osd *osd, struct osd_pgx *x);
/* This OSD has persisted info of the PG (holds a copy, or its history). */
bool osd_pgx_stored(struct osd *osd, uint32_t pool, uint32_t pg);
bool osd_pgx_log_has(const struct osd_pgx *x, uint64_t version);
void osd_pgx_log_add(struct osd_pgx *x, uint64_t version);
void osd_pgx_log_drop(struct osd_pgx *x, uint64_t version);
/* Add "persist info" to tx (the info fields of x as they are now). */
int osd_pgx_info_tx(struct osd *osd, struct osd_pgx *x, struct store_tx *tx);
/* Append a log entry in the record-header format; trims past osd_pg_log_max. */
int osd_pgx_log_tx(struct osd *osd, struct osd_pgx *x, struct store_tx *tx, uint16_t op,
		   uint64_t version, const char *name, const void *entry, size_t len);
/* Submit tx for PG x, counting it in tx_inflight; cb as store_tx_submit. */
int osd_pgx_submit(struct osd *osd, struct osd_pgx *x, struct store_tx *tx, store_commit_cb cb,
		   void *arg);
int osd_pg_stats_send(struct osd *osd);
void osd_pgx_free(struct osd_pgx *x);
/* The PG version an object was last changed at (attribute "v"). */
int osd_pg_obj_version(struct osd *osd, uint64_t pgk, const char *name, uint64_t *v_out);
/* Decode a stored log entry (a record header without its data). */
int osd_pglog_entry_decode(const void *buf, size_t len, struct proto_pg_log_entry *e_out);

/* osd_peer.c */
void osd_peer_map_changed(struct osd *osd);
void osd_peer_tick(struct osd *osd);
void osd_peer_msg(struct osd_conn *conn, uint16_t type, const struct proto_pg *m);
int osd_peer_send(struct osd *osd, struct osd_conn *conn, uint16_t type, const struct proto_pg *m);
struct osd_conn *osd_peer_conn_to(struct osd *osd, uint32_t id);
void osd_peer_tx_settled(struct osd *osd, struct osd_pgx *x);
void osd_peer_update_state(struct osd *osd, struct osd_pgx *x);

/* internal to peering (osd_peer.c, osd_peer_log.c, osd_peer_member.c) */
struct proto_pg osd_peer_hdr(const struct osd_pgx *x);
void osd_peer_own_info(const struct osd_pgx *x, struct proto_pg *m);
void osd_peer_info_msg(const struct osd_pgx *x, struct proto_pg *m);
void osd_peer_start(struct osd *osd, struct osd_pgx *x);
void osd_peer_activate(struct osd *osd, struct osd_pgx *x);
int osd_peer_member_index(const struct osd_pgx *x, uint32_t osd_id);
void osd_fetch_reset(void);
struct osd_pgx *osd_fetch_pg(void);
int osd_fetch_from(void);
void osd_fetch_begin(struct osd_pgx *x, int from);
void osd_peer_next_fetch(struct osd *osd, struct osd_pgx *x);
int osd_peer_own_missing(struct osd *osd, struct osd_pgx *x);

/* osd_peer_pi.c */
void osd_peer_pi_track(struct osd *osd);
void osd_peer_pi_map_save(struct osd *osd);
bool osd_peer_prior_ok(struct osd *osd, struct osd_pgx *x);
bool osd_peer_pi_witness(const struct osd_pgx *x, int32_t id);
void osd_primary_log(struct osd *osd, struct osd_pgx *x, int from, const struct proto_pg *m);
void osd_peer_activate_member(struct osd *osd, struct osd_pgx *x, struct osd_pg_member *mb);
void osd_member_query(struct osd_conn *conn, struct osd_pgx *x, const struct proto_pg *m);
void osd_member_logreq(struct osd_conn *conn, struct osd_pgx *x, const struct proto_pg *m);
void osd_member_log(struct osd *osd, struct osd_pgx *x, const struct proto_pg *m);
void osd_member_activate(struct osd *osd, struct osd_pgx *x, const struct proto_pg *m);
void osd_stray_delete(struct osd *osd, struct osd_pgx *x, const struct proto_pg *m);

/* osd_recovery.c */
void osd_recovery_start(struct osd *osd, struct osd_pgx *x);
void osd_recovery_tick(struct osd *osd);
void osd_recovery_msg(struct osd_conn *conn, uint16_t type, const struct proto_pg *m);
void osd_recovery_pushed(struct osd *osd, uint32_t pool, uint32_t pg, const char *name,
			 bool whole);
void osd_recovery_interval(struct osd *osd, struct osd_pgx *x);
uint64_t osd_recovery_missing(const struct osd_pgx *x);
/* Their bytes, from this OSD's copies (sampled beyond 4096 objects). */
uint64_t osd_recovery_missing_bytes(struct osd *osd, const struct osd_pgx *x);
struct asok_out;
void osd_recovery_perf(struct osd *osd, struct asok_out *out);

/* osd_backfill.c */
void osd_backfill_step(struct osd *osd, struct osd_pgx *x, struct osd_pg_member *mb);
void osd_backfill_msg(struct osd_conn *conn, struct osd_pgx *x, uint16_t type,
		      const struct proto_pg *m);
int osd_scan_entry(struct osd *osd, uint64_t pgk, const char *name, bool deep,
		   struct proto_pg_scan_entry *e);
int osd_scan_local(struct osd *osd, struct osd_pgx *x, const char *after, const char *upto,
		   bool deep, struct proto_pg_scan_entry **out, uint32_t *n_out);

/* osd_scrub.c */
bool osd_scrub_scanned(struct osd *osd, struct osd_pgx *x, const struct proto_pg *m);
void osd_scrub_tick(struct osd *osd);
void osd_scrub_want(struct osd *osd, uint32_t pool, uint32_t pg, const char *what);

#endif
