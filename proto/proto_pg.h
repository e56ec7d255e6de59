/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Placement-group messages: peering, recovery and scrub between OSDs on the
 * cluster network, and the PG statistics an OSD reports to the monitors.
 * Included by proto/proto.h (after struct proto_rkey); do not include it
 * alone. Layouts and rules: docs/protocol.md, protocol in docs/recovery.md.
 *
 * Every PG message starts with the PG and the interval it belongs to
 * (pool, pg, epoch = the map epoch the sender's interval started at, from =
 * the sender's OSD id); a receiver drops a message of an older interval.
 * Arrays (log entries, scan entries, stats) travel as a count and the raw
 * entries, kept as a view into the input: the decoder walks and validates
 * every entry once, and proto_pg_*_next() iterate them afterwards.
 */
#ifndef WEFT_PROTO_PROTO_PG_H
#define WEFT_PROTO_PROTO_PG_H

#include <stddef.h>
#include <stdint.h>

#define PROTO_PG_ENTRIES_MAX 4096u /* entries in one LOG / SCAN / STATS message */

/* PG_INFO flags */
#define PROTO_PG_INFO_F_EMPTY 0x01u    /* no log and no objects of this PG */
#define PROTO_PG_INFO_F_BACKFILL 0x02u /* a backfill into this copy has not finished */
#define PROTO_PG_INFO_FLAGS_KNOWN (PROTO_PG_INFO_F_EMPTY | PROTO_PG_INFO_F_BACKFILL)
/* PG_LOG / PG_SCAN flags */
#define PROTO_PG_F_LAST 0x01u /* the last message of the answer */
/* PG_ACTIVATE flags */
#define PROTO_PG_ACT_F_BACKFILL 0x01u /* the member's copy is rebuilt by backfill */
/* member -> primary: "applied" (feature PG_ACT_ACK; les = the interval activated in) */
#define PROTO_PG_ACT_F_APPLIED 0x02u
/* PG_SCAN_REQ flags */
#define PROTO_PG_SCAN_F_DEEP 0x01u   /* compute a crc32c of every object's data */
#define PROTO_PG_SCAN_F_DIGEST 0x02u /* crc = a digest of the stored block checksums */
/* PG_PULL flags */
#define PROTO_PG_PULL_F_NAK 0x01u /* the answer: "I do not hold that version" */
/* with NAK, to a pull of "any": the version is the one our log names, which we miss */
#define PROTO_PG_PULL_F_LOGV 0x02u

/* Log entry op codes: the client ops (enum proto_osd_opcode) plus: */
#define PROTO_PG_LOG_ROLLBACK 0x7fu /* the entry of this version was rolled back */

/*
 * One message type per struct layout would be thirteen near-copies; the
 * PG messages share this struct and each type uses the fields its layout
 * names (docs/protocol.md). Unused fields are zero.
 */
struct proto_pg {
	uint32_t pool, pg;
	uint32_t epoch; /* interval start epoch of the sender's view */
	uint32_t from;	/* sender's OSD id */
	uint8_t flags;
	uint64_t last_update;	/* INFO, ACTIVATE; PULL: the version wanted (NAK: the one held) */
	uint64_t tail;		/* INFO, ACTIVATE: log holds every entry > tail */
	uint64_t last_complete; /* INFO, RECOVERED, ACTIVATE (what the member may keep) */
	uint32_t les;		/* INFO, ACTIVATE: last epoch the PG went active */
	uint32_t since;		/* INFO: the epoch the copy began following the PG's maps (0: ?) */
	uint32_t born;		/* INFO: the epoch the PG was created, as far as known (0: ?) */
	uint64_t after;		/* LOG_REQ: entries with version > after */
	uint32_t max;		/* LOG_REQ, SCAN_REQ: entries wanted (1..ENTRIES_MAX) */
	char name[PROTO_OBJ_NAME_MAX + 1]; /* PULL: object; SCAN_REQ: start after it */
	size_t name_len;
	uint32_t count;	     /* LOG, SCAN: entries; INFO: past intervals; ACTIVATE: entries sent */
	const void *entries; /* LOG, SCAN, INFO: view into the input */
	uint32_t entries_len;
};

struct proto_pg_log_entry {
	uint64_t version;
	uint16_t op; /* PROTO_OP_WRITE/WRITE_FULL/REMOVE/TRUNCATE or PROTO_PG_LOG_ROLLBACK */
	char name[PROTO_OBJ_NAME_MAX + 1];
	size_t name_len;
};

/*
 * A past interval of a PG (PG_INFO, and the PG info an OSD persists):
 * map epochs first..last with one acting set; ACTIVE = it had >= min_size
 * members, so it may have gone active and acknowledged writes.
 */
#define PROTO_PG_IV_OSDS 16u	     /* = PLC_MAX_REPLICAS */
#define PROTO_PG_IV_F_ACTIVE 0x01u /* maybe went active */
#define PROTO_PG_IV_ENC_MAX (4 + 4 + 1 + 1 + 4 * PROTO_PG_IV_OSDS)
#define PROTO_PG_INTERVALS_MAX 64u /* in one PG_INFO */
struct proto_pg_interval {
	uint32_t first, last; /* inclusive */
	uint8_t flags;	      /* PROTO_PG_IV_F_* */
	uint8_t n;	      /* members, 0..PROTO_PG_IV_OSDS */
	int32_t osd[PROTO_PG_IV_OSDS];
};

struct proto_pg_scan_entry {
	char name[PROTO_OBJ_NAME_MAX + 1];
	size_t name_len;
	uint64_t version;
	uint64_t size;
	uint32_t crc; /* deep scan: crc32c of the data, else 0 */
};

/* PG state bits (PG_STATS, weft pg ls) */
#define PROTO_PGS_ACTIVE 0x0001u
#define PROTO_PGS_PEERING 0x0002u
#define PROTO_PGS_RECOVERING 0x0004u
#define PROTO_PGS_BACKFILLING 0x0008u
#define PROTO_PGS_DEGRADED 0x0010u
#define PROTO_PGS_UNDERSIZED 0x0020u
#define PROTO_PGS_INCONSISTENT 0x0040u
#define PROTO_PGS_CLEAN 0x0080u
#define PROTO_PGS_DOWN 0x0100u	    /* cannot peer: too few members answer */
#define PROTO_PGS_SCRUBBING 0x0200u
#define PROTO_PGS_INCOMPLETE 0x0400u /* no member can give a complete history */
#define PROTO_PGS_BACKFILL_TOOFULL 0x0800u /* backfill waits: its target is past backfillfull */
#define PROTO_PGS_KNOWN 0x0fffu

#define PROTO_PG_BLOCKED_MAX 8u
struct proto_pg_stat {
	uint32_t pool, pg;
	uint32_t state;	     /* PROTO_PGS_* */
	uint32_t same_since; /* epoch the acting set started */
	uint64_t last_update;
	uint64_t objects;	    /* objects of the PG on the primary */
	uint64_t bytes;		    /* their logical bytes (sum of object sizes) */
	uint64_t missing;	    /* object copies still to recover (all members) */
	uint64_t missing_bytes;	    /* their bytes, as far as known */
	uint64_t recovered_objects; /* since the OSD started */
	uint64_t recovered_bytes;
	uint32_t inconsistent; /* objects the last scrub found inconsistent */
	uint32_t last_scrub;   /* wall-clock seconds of the last scrub (0 = never) */
	uint32_t unfound;      /* objects to recover that no complete copy up holds */
	uint32_t verify_token; /* the token of the last `weft pg verify` done (0 = none) */
	uint32_t verify_inconsistent; /* objects that verify found differing */
	uint8_t nblocked;      /* down: OSDs peering waits for (one of them must come back) */
	uint32_t blocked[PROTO_PG_BLOCKED_MAX];
};

/*
 * The reporting OSD's own space (docs/capacity.md): its store's usage
 * (store_usage_get), the objects it still has to delete for removed pools,
 * and how many PGs it holds a copy of (primary or not).
 */
struct proto_osd_stat {
	uint64_t total, used, avail;
	uint64_t data_used, wal_bytes, kv_bytes;
	uint64_t purging_objects;
	uint32_t num_pgs;
};

/*
 * The OSD's client I/O since it started (ops and bytes read and written as
 * a primary): the mons derive `weft status`'s client rates from it. Sent
 * after the entries, only to a mon whose hello has PROTO_FEAT_IO_STATS.
 */
struct proto_osd_io {
	uint64_t rd_ops, rd_bytes, wr_ops, wr_bytes;
};

#define PROTO_PG_STATS_F_IO 0x80000000u

/* OSD -> monitor, every second: its space and the PGs it is primary of. */
struct proto_pg_stats {
	uint32_t osd;
	uint32_t epoch; /* the OSD's map epoch */
	struct proto_osd_stat osd_stat;
	uint32_t count;
	const void *entries; /* view into the input */
	uint32_t entries_len;
	bool has_io; /* io follows the entries (PROTO_FEAT_IO_STATS; bit 31 of count on the wire) */
	struct proto_osd_io io;
};

struct proto_enc;
struct proto_err;

int proto_pg_validate(uint16_t type, const struct proto_pg *m, struct proto_err *err);
int proto_pg_encode(struct proto_enc *enc, uint16_t type, const struct proto_pg *m);
int proto_pg_decode(uint16_t type, const void *buf, size_t len, struct proto_err *err,
		    struct proto_pg *m_out);
int proto_pg_stats_encode(struct proto_enc *enc, const struct proto_pg_stats *m);
int proto_pg_stats_decode(const void *buf, size_t len, struct proto_err *err,
			  struct proto_pg_stats *m_out);

/* Entry writers, for building entries into a buffer given as m->entries. */
void proto_pg_log_entry_put(struct proto_enc *enc, const struct proto_pg_log_entry *e);
void proto_pg_scan_entry_put(struct proto_enc *enc, const struct proto_pg_scan_entry *e);
void proto_pg_stat_put(struct proto_enc *enc, const struct proto_pg_stat *s);
void proto_pg_interval_put(struct proto_enc *enc, const struct proto_pg_interval *iv);
/* Read and validate one interval (also for the OSD's persisted PG info). */
struct proto_dec;
int proto_pg_interval_get(struct proto_dec *dec, struct proto_pg_interval *iv_out);

/*
 * Iterate the entries of a decoded message: *off starts at 0; 1 and the
 * entry while there is one, 0 at the end. The decoder validated them.
 */
int proto_pg_log_entry_next(const struct proto_pg *m, size_t *off,
			    struct proto_pg_log_entry *e_out);
int proto_pg_scan_entry_next(const struct proto_pg *m, size_t *off,
			     struct proto_pg_scan_entry *e_out);
int proto_pg_stat_next(const struct proto_pg_stats *m, size_t *off, struct proto_pg_stat *s_out);
int proto_pg_interval_next(const struct proto_pg *m, size_t *off,
			   struct proto_pg_interval *iv_out);

/* "active+clean", "peering", ... into buf. */
const char *proto_pg_state_str(uint32_t state, char *buf, size_t cap);

#endif
