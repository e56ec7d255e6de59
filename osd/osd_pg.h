/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OSD's side of the PG state machine (osd/pg/, docs/recovery.md): the
 * environment it runs in — the store, the cluster network, the push
 * engine — and the hooks the rest of the OSD calls.
 *
 *   osd_pg.c      per-PG state: loading, maps, messages (held while our map
 *                 is older than theirs), the tick, PG stats, scrub requests,
 *                 the saved map
 *   osd_pgenv.c   the environment: transactions, local objects, removal of a
 *                 stray copy, the record and push transactions of a replica
 *   osd_push.c    pushes (recovery and pull answers) over the replication
 *                 rings, the recovery budget and throttle
 */
#ifndef WEFT_OSD_OSD_PG_H
#define WEFT_OSD_OSD_PG_H

#include "osd/osd.h"
#include "osd/pg/pg.h"

#define OSD_PGINFO_OBJ	 "pginfo"
/*
 * PG version of an object's last change: kept in its store record
 * (store_tx_set_version); objects written by Weft before 2026-12-07 have it
 * in this attribute instead, which is still read.
 */
#define OSD_ATTR_VERSION "v"

/* ring record ops beyond the client ops (osd_wire.c) */
#define OSD_REC_PUSH	  7 /* a chunk of an object being recovered */
#define OSD_REC_PUSH_LAST 8 /* its last chunk: the object is whole */
#define OSD_REC_PUSH_RM	  9 /* the object must not exist */

/* osd_pg.c */
/* The state machine of (pool, pg), loaded from the store at first use; NULL on an error. */
struct pg *osd_pgm_get(struct osd *osd, uint32_t pool, uint32_t pg);
/* This OSD has persisted state of the PG (holds a copy, or its history). */
bool osd_pgm_stored(struct osd *osd, uint32_t pool, uint32_t pg);
/* Kick the PG's queued ops once the current event is handled (the machine asked). */
void osd_pg_kick_later(struct osd *osd, struct osd_pg *pg);
void osd_pg_kick_pending(struct osd *osd);
/* A held message or record of conn goes now (our map caught up). */
void osd_pg_hold_release(struct osd *osd);
void osd_pg_hold_free(struct osd_conn *conn);
/* The wire form of a log entry (the record-header format, no data). */
int osd_pglog_entry_encode(uint32_t pool, uint32_t pg, uint64_t v, uint16_t op, const char *name,
			   void *buf, size_t cap, size_t *len_out);
int osd_pglog_entry_decode(const void *buf, size_t len, struct proto_pg_log_entry *e_out);
int osd_pg_obj_version(struct osd *osd, uint64_t pgk, const char *name, uint64_t *v_out);
void osd_pg_map_save(struct osd *osd);
/* osd_repl.c: a ring record handled now (osd_pg_rec_hold let it through, or released it). */
void osd_repl_write_imm_now(struct osd_conn *conn, uint32_t imm, uint32_t len);

/* osd_pgenv.c */
extern const struct pg_env_ops osd_pg_env_ops;
/* Add a pg_txn (log entries, trims, info, removes) to a store transaction. */
int osd_pgenv_txn(struct osd *osd, struct pg *m, const struct pg_txn *t, struct store_tx *tx);
/* Submit tx for PG m; cb as store_tx_submit, and pg_committed(m, token) before it. */
int osd_pgenv_submit(struct osd *osd, struct pg *m, struct store_tx *tx, uint64_t token,
		     store_commit_cb cb, void *arg);

/* osd_push.c */
int osd_push_init(struct osd *osd);
void osd_push_fini(struct osd *osd);
int osd_push_start(struct osd *osd, struct pg *m, int32_t to, const char *name, uint64_t version,
		   uint32_t epoch, bool tracked);
void osd_push_interval(struct osd *osd, struct pg *m);
void osd_push_tick(struct osd *osd);
/* Pushes started or with a chunk to send since the last osd_push_run. */
bool osd_push_due(const struct osd *osd);
/* Post them now (from the loop, outside any PG machine call). */
void osd_push_run(struct osd *osd);
bool osd_push_budget(struct osd *osd, int take);
struct asok_out;
void osd_push_perf(struct osd *osd, struct asok_out *out);

#endif
