/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft-osd internals. One thread runs everything (docs/osd.md): the fabric
 * domain (public and cluster listeners, peer connections), the store and
 * the mon client are driven by one run-to-completion event loop
 * (osd_main.c, evloop/).
 *
 *   osd_main.c   arguments, mkfs/mount, boot, beacons, the reactor loop
 *   osd_net.c    addresses, listeners, connections, frames, events
 *   osd_hb.c     peer failure reports (a broken or refused peer connection)
 *   osd_op.c     client ops on the primary: ordering, pull, commit, reply
 *   osd_repl.c   replication: per-peer rings, records, acks (both sides)
 *   osd_wire.c   the ring record's header codec
 *   osd_perf.c, osd_admin.c, osd_perf_mem.c   perf dump, admin socket,
 *                osd_memory_target and NUMA (osd_perf.h)
 *   osd_pg.c, osd_pgenv.c, osd_push.c (osd_pg.h)
 *                the PG state machine (osd/pg/: log, peering, recovery,
 *                backfill, scrub) in the OSD; the rest calls the hooks below
 */
#ifndef WEFT_OSD_OSD_H
#define WEFT_OSD_OSD_H

#include <stdbool.h>
#include <stdint.h>

#include "common/conf.h"
#include "evloop/evloop.h"
#include "fabric/fabric.h"
#include "mon/map.h"
#include "msgr/msgr.h"
#include "mon/monc/monc.h"
#include "osd/store/store.h"
#include "placement/placement.h"
#include "osd/pg/pg.h"
#include "proto/proto.h"
#include "weft/weft.h"

#define OSD_PG_BUCKETS	1024
#define OSD_REC_ALIGN	64u	   /* ring records start on 64-byte boundaries */
#define OSD_REC_HDR_MAX 2048u	   /* encoded record header, name included */
#define OSD_META_PG	UINT64_MAX /* the store "PG" holding the OSD's own metadata */


struct osd;
struct osd_hold;
struct osd_op;
struct osd_peer;
struct osd_perf;
struct asok;
struct metrics_srv;

/* What a connection is: set from the listener that accepted it or by connect. */
enum osd_conn_kind {
	OSD_CONN_CLIENT = 1, /* public network: client ops */
	OSD_CONN_REPLICA,    /* cluster network, accepted: we are a replica of the peer */
	OSD_CONN_PEER,	     /* cluster network, connected by us: we are the primary */
	OSD_CONN_PROBE,	     /* cluster network, connected by us: is a peer alive (osd_hb.c) */
};

struct osd_conn {
	struct osd *osd;
	struct msgr_conn *mc; /* the messenger's connection (msgr/) */
	struct fab_ep *ep;    /* msgr_conn_ep(mc): one-sided ops and byte counters */
	enum osd_conn_kind kind;
	bool failed;		      /* torn down by osd_net_progress (osd_conn_kill) */
	bool hello_done;	      /* the peer's hello passed (msgr's ready_cb) */
	uint64_t peer_features;	      /* features both sides have */
	uint64_t peer_instance;	      /* CLIENT: the client instance of its hello (0: none) */
	struct osd_conn *next, *prev; /* osd->conns */
	/* REPLICA: the ring the peer writes records into */
	struct fab_mr *ring_mr;
	void *ring;
	uint64_t ring_size;
	uint32_t peer_id;
	bool peer_known; /* peer_id is set (PEER: at connect; REPLICA: at its ring request) */
	bool peer_lost;	 /* the peer broke or refused the connection (not we): osd_hb.c */
	bool probe_ok;	 /* PROBE: connected */
	uint32_t probe_up_from; /* PROBE: the peer's up_from when the probe started */
	uint64_t rx_ms;		/* PEER, REPLICA: last message or record from the peer */
	uint64_t ping_ms;	/* PEER: last PING sent */
	bool hb_silent;		/* PEER, REPLICA: silent past osd_heartbeat_grace (osd_hb.c) */
	uint64_t gen; /* REPLICA: tells a commit callback its connection is still the same */
	struct osd_peer *peer; /* PEER */
	uint32_t ops_inflight; /* CLIENT: ops holding this conn */
	bool auth_logged;      /* an op of it was refused by its caps, and logged */
	bool auth_ok;	       /* REPLICA: its peer proved to be an OSD (osd_auth_cluster) */
	bool paused; /* CLIENT: at osd_max_ops_per_conn, its frames wait (msgr_conn_pause) */
	/* REPLICA: messages and records held until our map is as new as theirs (osd_pg.c) */
	struct osd_hold *hold, *hold_tail;
};

/* One record in flight in a peer's ring (primary side), oldest first. */
struct osd_ring_slot {
	uint64_t off, len;
	bool acked;
};

/* A replica as seen from a primary: one connection and one ring. */
struct osd_peer {
	uint32_t id;
	char addr[PROTO_ADDR_MAX + 1];
	struct osd_conn *conn; /* NULL when not connected */
	bool ring_ready;
	bool blocked; /* a record for it could not be posted: the next ACK flushes every PG */
	struct fab_rkey ring;
	struct osd_ring_slot *slots; /* circular FIFO */
	uint32_t slot_cap, slot_head, slot_count;
	uint64_t next_connect_ms; /* reconnect backoff */
	uint64_t connect_ms;	  /* when the current connection was started */
	struct evl_timer grant_timer; /* no ring granted within ring_grant_ms: reconnect */
	struct osd *osd;
	struct osd_peer *next;
};

enum osd_op_state {
	OSD_OP_NEW = 0,	  /* queued in its PG */
	OSD_OP_PULLING,	  /* payload read from the client in flight */
	OSD_OP_READY,	  /* payload here, waiting for its turn to be ordered */
	OSD_OP_SUBMITTED, /* version assigned, local tx + replica records out */
	OSD_OP_READING,	  /* read: the store's device read in flight (writes of the object wait) */
	OSD_OP_SENDING,	  /* read: RDMA write to the client in flight */
	OSD_OP_DONE,	  /* replied (or abandoned), waiting for stray completions */
};

struct osd_pg {
	uint32_t pool, pg;
	struct osd_op *head, *tail; /* ops in arrival order */
	bool kicking, rekick;
	struct osd_op *dead; /* finished during a kick, freed after it */
	struct osd_pg *hnext; /* osd->pgs[] bucket (osd_pgs.c) */
	struct osd_pg *lnext; /* osd->pg_list: osd_pg_foreach */
	struct pg *m;	       /* the PG state machine (osd/pg/pg.h), NULL until used */
	struct pg_set busy;    /* names with a write between ordering and local commit */
	bool kick_wanted;      /* osd_pg_kick_later */
	struct osd_pg *knext;  /* on osd->kicks */
	uint32_t fenced_epoch; /* a replica fenced us at this map epoch (osd_pg_fenced) */
	uint64_t fenced_ms;
	bool purged; /* its pool was removed: no machine ever again (osd_purge.c) */
	/* the 100 ms tick takes only listed PGs (osd_pg_tick_want); the rest sleep */
	bool tick_listed;      /* on osd->tick_list, or on the list a tick walks now */
	bool tick_again;       /* wanted again while its tick ran */
	struct osd_pg *tnext;
	struct evl_timer tick_timer; /* its next tick when pg_tick_due names a time */
};

/*
 * The ctx of every one-sided operation the OSD posts for an op: its
 * completion names the op and what the operation was (osd_op_event).
 */
enum osd_rma_kind {
	OSD_RMA_PULL = 1, /* read of a write's payload from the client */
	OSD_RMA_SEND,	  /* write of read data into the client's buffer */
	OSD_RMA_REPL,	  /* write_imm of a replication record into acting[idx]'s ring */
};

struct osd_rma {
	struct osd_op *op;
	uint8_t kind; /* enum osd_rma_kind */
	uint8_t idx;  /* REPL: the acting index */
};

/*
 * What happens to an op, all through osd_op_event (osd_op.c has the table
 * of what each does in each state): the one place an op moves.
 */
enum osd_op_ev {
	OSD_OP_EV_PULLED = 1,	   /* the payload pull completed (status) */
	OSD_OP_EV_SENT,		   /* the read data landed in the client's buffer (status) */
	OSD_OP_EV_REPL_WRITTEN,	   /* the record write to acting[idx] completed (status) */
	OSD_OP_EV_LOCAL_COMMIT,	   /* our store transaction is durable (status) */
	OSD_OP_EV_REPL_ACK,	   /* acting[idx] committed the record (status) */
	OSD_OP_EV_INTERVAL_CHANGE, /* the PG's acting set changed; we stay primary */
	OSD_OP_EV_CONN_LOST,	   /* the client's connection went away */
	OSD_OP_EV_TIMEOUT,	   /* osd_op_timeout passed */
	OSD_OP_EV_READ_DONE,	   /* the store read completed (status; result_len set) */
	OSD_OP_EV_CMP_READ,	   /* cmp_write_full: the compared range was read (status) */
};

/* cmp_write_full's read of the range it compares (osd_op_cmp_resolve) */
enum osd_op_cmp {
	OSD_OP_CMP_NONE = 0,
	OSD_OP_CMP_READING, /* store_read_start in flight; the op stays READY */
	OSD_OP_CMP_READ,    /* cmp_buf holds cmp_got bytes (or cmp_rc an error) */
};

struct osd_op {
	struct osd *osd;
	struct osd_pg *pg;
	struct osd_op *next, *prev; /* pg queue */
	struct osd_conn *conn;	    /* client; NULL once it failed */
	uint64_t tid;
	enum osd_op_state state;
	uint16_t op;
	uint16_t flags;
	uint32_t epoch;
	uint64_t offset, length;
	char name[PROTO_OBJ_NAME_MAX + 1];
	size_t name_len;
	struct proto_rkey rkey;
	void *inline_data;    /* inline write payload: its own copy, or the receive buffer's */
	bool inline_borrowed; /* inline_data is the receive buffer's: only inside osd_op_recv */
	bool blocked;	   /* counted once as blocked below min_size */
	bool min_ok;	   /* the acting set still has min_size members */
	uint64_t start_ms;
	uint64_t t_recv_ns, t_last_ns, t_submit_ns; /* stage marks (osd_perf.h) */
	/* payload / read buffer (registered): record header + data for writes */
	struct fab_pool *bpool;
	void *buf;
	struct fab_sge sge;
	uint32_t hdr_len;
	uint64_t version;
	uint64_t log_prev; /* the PG log entry before this op's (its records carry it) */
	/* commit tracking */
	bool local_done;
	int local_rc;
	int32_t acting[PLC_MAX_REPLICAS];
	unsigned int nacting;
	/* placement of the op's PG as of map plc_epoch (0: none yet): computed once per map */
	uint32_t plc_epoch;
	int plc_n; /* plc_map_acting's result */
	int32_t plc_acting[PLC_MAX_REPLICAS];
	uint32_t repl_wait; /* bit i: acting[i] has not acked */
	uint32_t repl_sent; /* bit i: record posted to acting[i] on its current connection */
	struct osd_rma rma;			  /* the pull or the send */
	struct osd_rma rrec[PLC_MAX_REPLICAS]; /* the record write to acting[i] */
	uint32_t refs;	    /* completions still to come (fabric ops, store callback) */
	uint64_t result_len;
	int status;
	bool replied;
	/* an error's detail for the reply (PROTO_REPLY_F_MAYBE / _OSD, reply_osd) */
	uint16_t reply_flags;
	int32_t reply_osd;
	uint8_t cmp; /* enum osd_op_cmp */
	int cmp_rc;
	uint64_t cmp_got;
	void *cmp_buf;
	struct evl_timer timer; /* osd_op_timeout from arrival; cancelled when it finishes */
};

struct osd_counters {
	uint64_t ops, op_errors, writes, reads, write_bytes, read_bytes;
	uint64_t repl_records, repl_bytes, repl_acks, replica_records, replica_bytes;
	uint64_t estale, enxio, blocked;
	uint64_t full_refused, quota_refused; /* writes refused: an OSD full, the pool's quota */
	uint64_t full_log_ms;		      /* last "refusing writes" line (one per 10 s) */
	uint64_t blocklist_refused;	      /* ops refused: their client is blocklisted */
	/* denial-of-service limits (docs/security.md) */
	uint64_t conn_pauses;	    /* a client connection reached osd_max_ops_per_conn */
	uint64_t bad_pg_refused;    /* a message named a PG outside its pool's pg_num */
	uint64_t bad_epoch_refused; /* an epoch past our map + osd_epoch_ahead_max */
	uint64_t map_wait_dropped;  /* a held peer message outwaited osd_map_wait_max */
	uint64_t rings_refused;	    /* a ring request past osd_repl_rings_max_bytes */
	uint64_t dos_log_ms;	    /* last line about a refused message (one per 10 s) */
	uint64_t dos_log_suppressed;
};

struct osd {
	struct conf *conf;
	uint32_t id;
	char name[32];
	uint8_t uuid[PROTO_UUID_LEN];
	struct store *store;
	struct monc *monc;
	struct mon_map map; /* our copy of the current map */
	bool booted;
	bool boot_pending;
	bool boot_held;		/* the last boot was held (noup) or unanswered: asked again */
	bool auth_wait_logged;	/* "boot waits for our ticket" was logged */
	uint64_t boot_retry_ms;	/* when to ask again (0: never) */
	uint32_t boot_epoch;
	bool stopping;
	int fatal; /* the store failed a commit: the OSD stops and exits non-zero */
	struct fab_domain *dom;
	struct msgr *msgr; /* every connection of the OSD, the mon client's too (msgr/) */
	struct msgr_listener *pub_l, *clu_l;
	/* authentication of our connections (osd_auth.c); NULL: not authenticated */
	const struct msgr_auth_cfg *auth_pub, *auth_clu, *auth_peer;
	bool auth_tickets;    /* we check tickets and present ours (auth_cluster_required) */
	uint64_t auth_denied; /* ops and cluster messages refused by caps */
	uint32_t nfailed; /* connections marked failed, torn down after the current batch */
	struct evl *loop; /* the reactor (osd_main.c, docs/evloop.md); NULL outside osd_run */
	char pub_addr[PROTO_ADDR_MAX + 1], clu_addr[PROTO_ADDR_MAX + 1];
	char clu_ip[64];
	struct fab_pool *small_pool, *large_pool;
	struct osd_conn *conns;
	struct osd_peer *peers;
	struct osd_pg *pgs[OSD_PG_BUCKETS]; /* the PG registry (osd_pgs.c) */
	struct osd_pg *pg_list;
	uint32_t npgs;
	uint32_t store_pending;
	uint32_t msg_size;
	uint64_t ring_bytes, rings_max; /* rings granted now; osd_repl_rings_max_bytes */
	uint64_t ring_size;
	uint64_t max_op;
	uint64_t op_timeout_ms;
	uint32_t max_ops_per_conn; /* osd_max_ops_per_conn */
	uint32_t epoch_ahead_max;  /* osd_epoch_ahead_max */
	uint64_t map_wait_ms;	   /* osd_map_wait_max */
	uint64_t ring_grant_ms;	   /* a replica's ring grant, at most: 2 x ms_connect_timeout */
	struct osd_counters ctr;
	struct fab_ep_stats closed_pub, closed_clu; /* of connections already gone */
	struct osd_perf *perf; /* histograms, memory, NUMA (osd_perf.h) */
	struct asok *asok;     /* admin socket; NULL when disabled or unavailable */
	struct metrics_srv *metrics; /* /metrics (osd_metrics.c); NULL when off */
	struct osd_recovery *rec; /* pushes in flight, throttle (osd_push.c) */
	struct osd_crc_read *crc_reads; /* deep-scrub reads in flight (osd_crc.c) */
	struct osd_pg *kicks;	  /* PGs whose ops move once the current event is handled */
	struct osd_pg *tick_list; /* PGs the next tick takes (osd_pg_tick_want) */
	uint64_t pg_ticks;	  /* PGs ticked so far (perf dump: pgs.ticks) */
	uint32_t pgs_listed, pgs_timed; /* at the last tick: PGs it took, PGs on a timer */
	bool scrub_busy;	  /* one scrub at a time (pg_env.scrub_slot) */
	struct pg_env pgenv;	  /* the environment every PG state machine runs in */
	uint64_t rec_objects, rec_bytes; /* objects/bytes this OSD pushed for recovery */
	struct osd_hb_ent *hb;		 /* peer failure reports by OSD id (osd_hb.c) */
	uint32_t nhb;
	uint64_t hb_interval_ms, hb_grace_ms; /* cluster-connection heartbeats (osd_hb.c) */
	uint64_t hb_tick_ms;		      /* last heartbeat tick */
	uint64_t purging_objects; /* objects of removed pools still to delete (PG_STATS) */
	struct osd_purge *purge;  /* removed pools being deleted (osd_purge.c) */
};

/* osd_pgs.c: the PG registry */
/* The PG's struct, or NULL when this OSD has none. */
struct osd_pg *osd_pg_find(struct osd *osd, uint32_t pool, uint32_t pg);
/* Find or create; NULL only without memory. */
struct osd_pg *osd_pg_get(struct osd *osd, uint32_t pool, uint32_t pg);
void osd_pgs_free(struct osd *osd); /* at stop, after every op and machine is gone */
/* Every PG this OSD has, in no particular order; the body must not free PGs. */
#define osd_pg_foreach(osd, pg) for ((pg) = (osd)->pg_list; (pg) != NULL; (pg) = (pg)->lnext)

/* osd_blocklist.c: fencing blocklisted client instances */
/* 0, or -WEFT_E_BLOCKLISTED when the map blocklists conn's client instance. */
int osd_blocklist_check(struct osd_conn *conn);
/* A new map: drop the connections of the instances it blocklists. */
void osd_blocklist_map_changed(struct osd *osd);

/* osd_hb.c: peer failure reports to the monitors */
struct osd_hb_ent;
void osd_hb_peer_lost(struct osd *osd, uint32_t id);
void osd_hb_peer_alive(struct osd *osd, uint32_t id);
void osd_hb_probe_end(struct osd *osd, struct osd_conn *conn);
void osd_hb_tick(struct osd *osd);
void osd_hb_free(struct osd *osd);
void osd_hb_ping_recv(struct osd_conn *conn, uint16_t type, const struct proto_ping *m);
/* A message or record from a cluster peer: it lives. */
static inline void osd_hb_rx(struct osd_conn *conn, uint64_t now_ms)
{
	conn->rx_ms = now_ms;
	if (conn->hb_silent) {
		conn->hb_silent = false;
		osd_hb_peer_alive(conn->osd, conn->peer_id);
	}
}

/* osd_auth.c: who may talk to us (docs/security.md) */
/* The messenger set-ups for our listeners and our connections to peers (after msgr exists). */
int osd_auth_start(struct osd *osd);
/* Once the mon client exists: keep our ticket and the service keys from now on. */
int osd_auth_want(struct osd *osd);
/* Whether we hold them (we do not boot before: peers could not authenticate us). */
bool osd_auth_ready(struct osd *osd);
/* An op on pool by conn's client: 0, or -EACCES (its caps lack r, or w when write). */
int osd_auth_op(struct osd_conn *conn, const char *pool, bool write);
/* A cluster message (what) on an accepted connection: 0, or -EACCES (not an OSD: close). */
int osd_auth_cluster(struct osd_conn *conn, const char *what);

/* osd_net.c */
int osd_net_start(struct osd *osd);
void osd_net_stop(struct osd *osd);
int osd_net_progress(struct osd *osd);
/* One frame to the peer; a full send queue parks it in the messenger (never spins). */
int osd_conn_send(struct osd_conn *conn, const struct proto_msg *m, uint64_t tid);
int osd_conn_send_reply(struct osd_conn *conn, uint64_t tid, const struct proto_osd_op_reply *r);
/* Mark conn failed: nothing more is delivered, and it is torn down after the current batch. */
void osd_conn_kill(struct osd_conn *conn);
/* A cluster connection from our cluster address to addr (kind PEER or PROBE). */
struct osd_conn *osd_conn_connect(struct osd *osd, const char *addr, enum osd_conn_kind kind);
void osd_conn_free(struct osd_conn *conn);
/* "ip:port" of conn's peer. */
const char *osd_conn_peer(const struct osd_conn *conn);
int osd_perf_json(struct osd *osd, char *buf, size_t cap, size_t *len_out);
/* Take a registered buffer for len bytes; NULL when none is free. */
void *osd_buf_get(struct osd *osd, uint64_t len, struct fab_pool **pool_out,
		  struct fab_sge *sge_out);

/* osd_op.c */
void osd_op_recv(struct osd_conn *conn, uint64_t tid, const struct proto_osd_op *m);
/* Move op on an event; op may be freed on return. */
void osd_op_event(struct osd_op *op, enum osd_op_ev ev, unsigned int idx, int status);
/* The completion of a one-sided op posted with ctx r: its event. */
void osd_op_rma_done(const struct osd_rma *r, int status);
void osd_op_conn_failed(struct osd *osd, struct osd_conn *conn);
void osd_op_map_changed(struct osd *osd);
void osd_op_repl_acked(struct osd *osd, uint32_t peer_id, uint32_t pool, uint32_t pg,
		       uint64_t version, int status);
void osd_pg_kick(struct osd_pg *pg);
void osd_op_check_done(struct osd_op *op);
void osd_pg_kick_all(struct osd *osd);
void osd_ops_cleanup(struct osd *osd);

/* osd_purge.c: removed pools' objects deleted in the background (docs/capacity.md) */
int osd_purge_init(struct osd *osd); /* resumes what the last run left */
void osd_purge_fini(struct osd *osd);
/* The map no longer has pool (it had pg_num PGs): queue it. */
void osd_purge_pool(struct osd *osd, uint32_t pool, uint32_t pg_num);
void osd_purge_tick(struct osd *osd);
uint64_t osd_purge_done(const struct osd *osd); /* objects deleted since start */

/* osd_repl.c */
void osd_repl_pg_flush(struct osd *osd, struct osd_pg *pg);
void osd_repl_recv(struct osd_conn *conn, const struct proto_msg *m);
void osd_repl_write_imm(struct osd_conn *conn, uint32_t imm, uint32_t len);
void osd_repl_peer_failed(struct osd *osd, struct osd_peer *peer);
void osd_repl_connected(struct osd_conn *conn);
struct osd_peer *osd_peer_get(struct osd *osd, uint32_t id);
void osd_repl_cleanup(struct osd *osd);

/* osd_wire.c: the header of a ring record (one-sided; its control frames are proto_repl.h) */
#define OSD_REC_MAGIC 0x4c505257u /* "WRPL": ring records, and PG log entries in the store */
struct osd_rec_hdr {
	uint16_t op;
	uint32_t pool, pg, epoch;
	uint64_t version, offset, length;
	uint64_t prev; /* client records: the PG log entry before this one (a hole is refused) */
	char name[PROTO_OBJ_NAME_MAX + 1];
	size_t name_len;
};

int osd_rec_hdr_encode(const struct osd_rec_hdr *h, void *buf, size_t cap, size_t *len_out);
/* Decode a record of len bytes; *hdr_len_out: where the data starts. */
int osd_rec_hdr_decode(const void *buf, size_t len, struct osd_rec_hdr *h_out,
		       uint32_t *hdr_len_out);

/* The PG state machine (osd/pg/) in the OSD: osd_pg.c, osd_pgenv.c, osd_push.c (osd_pg.h) */
int osd_pg_init(struct osd *osd);
void osd_pg_fini(struct osd *osd);
void osd_pg_map_changed(struct osd *osd); /* before osd_op_map_changed */
/* The map epoch this OSD saw last before it stopped (persisted): gaps after it are noticed. */
void osd_pg_map_loaded(struct osd *osd, const struct mon_map *map);
/* The map saved by the last run; -ENOENT on a new OSD. */
int osd_pg_map_load(struct osd *osd, struct mon_map *map_out);
void osd_pg_tick(struct osd *osd);
/* osd_pgtick.c: the next tick takes this PG (its machine ran, ops queued, a fence). */
void osd_pg_tick_want(struct osd *osd, struct osd_pg *pg);
/* The listed PGs: ops kicked, records posted, machines ticked, fences lifted. */
void osd_pgtick_round(struct osd *osd, uint64_t now, uint32_t fence_hold_ms);
/* A primary serves I/O only once the PG is peered (and a complete copy is a member). */
bool osd_pg_io_ready(struct osd *osd, struct osd_pg *pg);
/* false: name is still missing on some copy; its recovery is moved ahead. */
bool osd_pg_obj_ready(struct osd *osd, struct osd_pg *pg, const char *name);
/*
 * Deep scrub: the crc32c of name's data read without blocking (osd_crc.c):
 * as the PG env's obj_crc (1 = *crc_out now, 0 = pg_obj_crc_done later).
 */
int osd_crc_start(struct osd *osd, uint32_t pool, uint32_t pg, const char *name, uint64_t size,
		  uint64_t token, uint32_t *crc_out);
/* At stop, after the store abandoned its reads: frees the ones still in flight. */
void osd_crc_fini(struct osd *osd);
/* A scrub batch of the PG covers name: a write of it is not ordered now (pg_scrub_holds). */
bool osd_pg_scrub_holds(struct osd_pg *pg, const char *name);
/* An ordered write of an object in (after, upto] has not completed on every copy yet. */
bool osd_op_range_busy(const struct osd_pg *pg, const char *after, const char *upto);
/*
 * The store transaction of a primary's op: data, version attribute and the
 * PG log entry. *prev_out: the entry before it (its records carry it),
 * *token_out: for osd_pg_op_submit.
 */
int osd_pg_op_tx(struct osd *osd, struct osd_pg *pg, struct store_tx *tx,
		 const struct osd_rec_hdr *h, const void *data, uint64_t *prev_out,
		 uint64_t *token_out);
/* The op's transaction is not submitted after all: its entry is taken back. */
void osd_pg_op_cancel(struct osd *osd, struct osd_pg *pg, uint64_t version);
/* Submit it (cb as store_tx_submit); on an error the entry is taken back. */
int osd_pg_op_submit(struct osd *osd, struct osd_pg *pg, struct store_tx *tx, uint64_t version,
		     uint64_t token, store_commit_cb cb, void *arg);
/* The next version of an op of pg in the current map epoch. */
uint64_t osd_pg_op_version(struct osd *osd, struct osd_pg *pg);
/* A write to name is between ordering and its local commit (no push may overtake it). */
void osd_pg_busy(struct osd_pg *pg, const char *name, int delta);
/* A replica failed a record (not a fence): the PG peers again. */
void osd_pg_repl_failed(struct osd *osd, struct osd_pg *pg, uint32_t peer, uint64_t v, int rc);
/* The admin socket's "pg query POOL.PG" (osd_pg_query.c). */
int osd_pg_query_register(struct osd *osd);
/* A replica answered -ESTALE (its fence): hold writes until our map moves (osd_pg.c). */
void osd_pg_fenced(struct osd *osd, struct osd_pg *pg, uint32_t peer);
/* Build and submit a ring record's transaction (replica or recovery target). */
int osd_pg_rec_apply(struct osd *osd, const struct osd_rec_hdr *h, const void *data,
		     store_commit_cb cb, void *arg);
/* A PG message on a cluster connection (held while our map is older than its epoch). */
void osd_pg_msg_recv(struct osd_conn *conn, const struct proto_msg *m);

/*
 * Denial-of-service checks on what peers and clients send (docs/security.md,
 * "Denial-of-service limits"). OSD_PG_ID_MAX bounds a PG id whatever the map
 * says (the mons refuse a larger pg_num).
 */
#define OSD_PG_ID_MAX 65536u
/* An epoch further than osd_epoch_ahead_max past our newest map: forged, never waited for. */
bool osd_epoch_insane(const struct osd *osd, uint32_t epoch);
/* One line per 10 s for refused messages (a flood must not fill the log); the rest counted. */
void osd_dos_log(struct osd *osd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Held peer messages older than osd_map_wait_max: their connection goes (osd_pg.c). */
void osd_pg_hold_check(struct osd *osd, uint64_t now_ms);
/* A ring record of conn: handled now, or held behind a held message (false). */
bool osd_pg_rec_hold(struct osd_conn *conn, uint32_t imm, uint32_t len);
/* An ACK for a push: true if it was one. */
bool osd_push_acked(struct osd *osd, uint32_t peer_id, const struct proto_repl_ack *m);
/*
 * A push of the object is reading its chunk: a write of it waits (READY)
 * until the chunk is posted, so the target gets the chunk first; the read's
 * end kicks the PG.
 */
bool osd_push_reading(const struct osd *osd, uint32_t pool, uint32_t pg, const char *name);
/* osd_op.c: answer the ops of a PG whose interval ended (they are resent). */
void osd_op_pg_interval(struct osd *osd, struct osd_pg *pg);
/* osd_repl.c: connect to a peer's cluster address (rate-limited), and post a raw record. */
int osd_peer_connect(struct osd *osd, struct osd_peer *p);
int osd_repl_post_raw(struct osd *osd, uint32_t peer_id, const struct fab_sge *src,
		      uint64_t *ring_off_out);
struct osd_conn *osd_peer_conn_to(struct osd *osd, uint32_t id);

static inline uint64_t osd_pg_key(uint32_t pool, uint32_t pg)
{
	return ((uint64_t)pool << 32) | pg;
}

#endif
