/* SPDX-License-Identifier: Apache-2.0 */
/*
 * verbs backend internals (libibverbs + librdmacm). See docs/verbs.md.
 *
 *  - One protection domain, one CQ (with a completion channel), one shared
 *    receive queue and one rdma_cm event channel per domain.
 *  - RC QPs set up with librdmacm; the connection private data carries the
 *    receive window, msg_size, the MTU, the key of the peer's mailbox slot
 *    and of its region table.
 *  - Sends are SEND_WITH_IMM: the payload lands at offset 0 of an SRQ buffer
 *    and the immediate returns credits (cumulative count of released
 *    buffers). A receiver with nothing to send returns credits by RDMA-writing
 *    the same counter, plus what we did to it (writes, reads, refusals), into
 *    the peer's mailbox slot: no receive buffer is ever spent on control.
 *  - Posting only queues the op; fab_progress posts each endpoint's queue as
 *    one chain (one doorbell) and signals the last WR and every
 *    VERBS_SIGNAL_EVERY-th: a signaled completion retires every op before it.
 *  - One-sided ops are checked before posting against the target's region
 *    table (read once per key with an RDMA READ and cached), so a bad key,
 *    a missing right or a lie about bounds is refused with the same errors
 *    as TCP and the connection lives on.
 *  - Scoped keys (fab_rkey_scope) are type 2 memory windows bound to the
 *    endpoint's QP (verbs_win.c): the hardware refuses them on any other QP,
 *    outside their range and after their invalidation. They sit in the same
 *    table, after the regions, with the QP they are for; an initiator reads
 *    a window's entry before every use, so a revoked key is refused in
 *    software and the connection lives on.
 */
#ifndef WEFT_FABRIC_VERBS_H
#define WEFT_FABRIC_VERBS_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "fabric/fab_backend.h"

#define VERBS_PD_MAGIC 0x56544657u /* "WFTV" */
#define VERBS_PD_VERSION 1u
#define VERBS_PD_LEN 40u
#define VERBS_INLINE_MAX 128u	   /* sends up to this size are copied into the op */
#define VERBS_SIGNAL_EVERY 32u	   /* at least one signaled WR per this many */
#define VERBS_POST_BATCH 64u	   /* WRs per ibv_post_send chain */
#define VERBS_MAX_EPS 4096u	   /* endpoints per domain (mailbox slots) */
#define VERBS_MAX_MRS 4096u	   /* regions per domain (region table entries) */
#define VERBS_MAX_WINS 8192u	   /* live scoped keys per domain (table entries after the regions) */
#define VERBS_TBL_N (VERBS_MAX_MRS + VERBS_MAX_WINS)
#define VERBS_TBL_WINDOW 0x80000000u /* table access bit: read before every use (not FAB_SCOPE_LONG) */
#define VERBS_KEY_CACHE 16u	   /* validated peer keys cached per endpoint */
#define VERBS_RBUF_CHUNK 64u	   /* receive buffers registered at a time */
#define VERBS_SRQ_MAX 16384u
#define VERBS_CQ_BATCH 32
#define VERBS_DRAIN_MS 500u	   /* wait for flushed WRs after a failure */
#define VERBS_SLOT_LEN 128u	   /* outbox (0..63) + key landing (64..95) */
#define VERBS_CM_EVERY 128u	   /* progress calls between rdma_cm polls when idle */
#define VERBS_STALL_CHECK_MS 500u  /* how often connections with work posted are looked at */
#define VERBS_CREDIT_LAZY_NS 1000000ull /* owed credits go alone after this */

enum verbs_obj_kind {
	VERBS_OBJ_EP = 1,
	VERBS_OBJ_LISTENER,
};

/* What the peer writes into our mailbox slot: cumulative, monotonic. */
struct verbs_mbox {
	uint64_t released; /* credits it gave back to us */
	uint64_t writes;   /* one-sided ops it did to us */
	uint64_t reads;
	uint64_t errors;   /* its ops to us that were refused */
};

/* One entry of the region table a peer reads to check its one-sided ops. */
struct verbs_tbl_ent {
	uint64_t key; /* 0: free */
	uint64_t addr;
	uint64_t len;
	uint32_t access;
	uint32_t qpn; /* a window: the QP number of the peer it is for (its initiator's QP) */
};

struct verbs_keyent {
	uint64_t key;
	uint64_t addr;
	uint64_t len;
	uint32_t access;
	uint32_t qpn;
};

enum verbs_win_state {
	VERBS_WIN_FREE,
	VERBS_WIN_BOUND,	/* live: in the table, bound (or about to be) to its endpoint's QP */
	VERBS_WIN_INVALIDATING, /* revoked: out of the table, its LOCAL_INV queued or in flight */
};

/* A scoped key: a type 2 memory window, kept allocated and rebound with a new key. */
struct verbs_win {
	struct ibv_mw *mw;	/* NULL until first used, or after a teardown */
	struct verbs_ep *ep;	/* the endpoint whose QP it is bound to */
	struct fab_mr *mr;
	uint64_t key;		/* fab key of the current binding (kept while invalidating) */
	uint64_t addr;
	uint64_t len;
	uint32_t hwkey;		/* the rkey of the current binding */
	uint32_t next_free;	/* free list, 1-based */
	unsigned int access;
	enum verbs_win_state state;
};

enum verbs_op_kind {
	VERBS_OP_SEND,
	VERBS_OP_WRITE,
	VERBS_OP_READ,
	VERBS_OP_MBOX,	  /* credits + counters into the peer's mailbox */
	VERBS_OP_KEYREAD, /* one region-table entry of the peer */
	VERBS_OP_BIND,	  /* bind a window (raddr: its slot, rkey64: its fab key) */
	VERBS_OP_INV,	  /* invalidate a window (same) */
};

struct verbs_op {
	struct verbs_op *next;
	enum verbs_op_kind kind;
	bool with_imm;
	bool hw;	/* handed to the QP (else completed in software) */
	int status;	/* software refusal */
	uint32_t seq;
	uint32_t len;
	uint32_t imm;
	uint64_t raddr;
	uint64_t rkey64; /* the peer's fab key */
	void *laddr;
	struct fab_mr *mr;
	int32_t sbuf;	 /* send slab buffer, -1 = inline copy */
	void *ctx;
	uint8_t inl[VERBS_INLINE_MAX];
};

struct verbs_opq {
	struct verbs_op *head, *tail;
	uint32_t count;
};

struct verbs_rbuf {
	uint8_t *addr;
	uint32_t lkey;
	uint32_t idx;
	struct verbs_ep *ep; /* holder while lent to the user */
	bool held;
};

enum verbs_ep_state {
	VERBS_EP_RESOLVING, /* address / route */
	VERBS_EP_CONNECTING,
	VERBS_EP_ACCEPTING,
	VERBS_EP_CONNECTED,
	VERBS_EP_DRAINING,  /* failed; waiting for flushed WRs */
	VERBS_EP_FAILED,
};

struct verbs_domain;

struct verbs_ep {
	struct fab_ep base;
	enum verbs_obj_kind okind; /* cm_id->context points here */
	struct verbs_domain *vd;
	struct verbs_ep *prev, *next;	/* domain list */
	struct verbs_ep *id_next, *qpn_next; /* hash chains */
	struct verbs_ep *tx_next;
	bool on_tx;
	struct verbs_listener *from;	/* accepted: the listener */
	struct rdma_cm_id *id;
	struct ibv_qp *qp;
	uint32_t ep_id;
	uint32_t slot;
	uint32_t hw_sq;
	bool in_qpn_hash;
	enum verbs_ep_state state;
	bool was_connected;
	bool user_closed;
	bool zombie;
	bool mbox_inflight;
	bool key_wait;
	bool stalled;	/* head send waits for credit (counted once) */
	bool has_deadline;
	int fail_status;
	uint64_t deadline_ns;

	/* the peer */
	uint32_t peer_credits, peer_msg_size, peer_mbox_rkey, peer_tbl_rkey, peer_tbl_n;
	uint32_t peer_qpn; /* the peer's QP number (0: not asked yet) */
	uint32_t nwins;	   /* windows bound to our QP, in any state but FREE */
	uint64_t refusals_seen; /* the peer's refused ops to us, as its mailbox said last */
	uint32_t refusal_logs;	/* lines left to log about them on this connection */
	uint64_t peer_mbox_addr, peer_tbl_addr;
	struct verbs_keyent keys[VERBS_KEY_CACHE];
	uint64_t key_checked; /* last key looked up (refused if still unknown) */

	/* send side */
	struct verbs_opq pending; /* posted by the user, not yet on the QP */
	struct verbs_opq ring;	  /* on the QP (or refused), in posting order */
	uint32_t user_ops;
	uint32_t hw_inflight;
	uint64_t hw_quiet_ns; /* first seen busy with no completion since (0: not yet) */
	uint32_t next_seq;
	uint32_t unsignaled;
	uint64_t sent_total;	  /* credits used */
	uint64_t peer_released;	  /* credits the peer gave back */
	uint64_t out_writes, out_reads, out_errors;
	uint64_t pushed_writes, pushed_reads, pushed_errors;

	/* receive side */
	uint64_t received_total;  /* RECV + WRITE_IMM that arrived */
	uint64_t released_total;  /* ... and were given back */
	uint64_t released_pushed;
	uint64_t owed_since_ns;	  /* oldest credit owed and not yet pushed */
	uint32_t owed_checks;	  /* clock reads are costly (HPET in VMs): every 64th */
	uint32_t rx_held;	  /* RECV buffers lent to the user */
	uint32_t imm_held;	  /* WRITE_IMM completions not yet polled */
};

struct verbs_listener {
	struct fab_listener base;
	enum verbs_obj_kind okind;
	struct verbs_listener *next;
	struct rdma_cm_id *id;
};

#define VERBS_HASH 256u

struct verbs_domain {
	struct fab_domain base;
	char ident[48]; /* "rxe0:1" */
	struct ibv_context *ctx; /* librdmacm's context for the device */
	struct ibv_device_attr dattr;
	struct ibv_port_attr pattr;
	uint8_t port;
	struct ibv_pd *pd;
	struct ibv_comp_channel *chan;
	struct ibv_cq *cq;
	uint32_t cq_cap, cq_need;
	unsigned int cq_unacked;
	bool cq_armed;
	uint32_t cq_seen; /* CQEs polled since the CQ was armed */
	int evfd;	  /* in epfd: "progress has work left" for callers polling the fd */
	bool ev_signaled;
	bool fd_exported; /* fab_domain_fd was asked for: keep evfd accurate */
	bool in_progress;
	bool in_wait;
	uint32_t cm_tick; /* rdma_cm's channel costs a syscall: polled every VERBS_CM_EVERY calls */
	uint64_t next_stall_check_ns; /* verbs_check_stalls: at most once per VERBS_STALL_CHECK_MS */
	struct ibv_srq *srq;
	uint32_t srq_max;
	struct rdma_event_channel *cm;
	int epfd;

	/* receive buffers: chunks of VERBS_RBUF_CHUNK, one registration each */
	struct verbs_rbuf **rchunks;
	struct ibv_mr **rmrs;
	uint32_t nrchunks, nrbufs, rneed;
	uint8_t **rmem;

	/* send copies too large to go inline */
	uint8_t *smem;
	struct ibv_mr *smr;
	uint32_t nsbufs, nsfree;
	int32_t *sfree;
	uint32_t max_inline;

	/* mailbox slots (peers write) and outbox slots (we write from) */
	struct verbs_mbox *mbox;
	struct ibv_mr *mbox_mr;
	uint8_t *outbox;
	struct ibv_mr *outbox_mr;
	uint32_t *slot_free;
	uint32_t nslot_free;

	/* region table (peers read) */
	struct verbs_tbl_ent *tbl;
	struct ibv_mr *tbl_mr;
	struct fab_mr **mrs;

	/* scoped keys: type 2 memory windows, when the device has them */
	bool mw_ok;
	struct verbs_win *wins;
	uint32_t win_free; /* free list head, 1-based */
	uint64_t win_rng;  /* salts of window keys (splitmix64, seeded once) */
	bool wins_full_logged;

	struct verbs_ep *eps;
	struct verbs_ep *by_id[VERBS_HASH];
	struct verbs_ep *by_qpn[VERBS_HASH];
	uint32_t next_ep_id;
	struct verbs_listener *listeners;
	struct verbs_ep *txlist;
	uint32_t ndeadlines;
	uint64_t next_deadline_check;
	struct verbs_op *op_free;
};

struct verbs_mr {
	struct fab_mr base;
	struct ibv_mr *ibmr;
	uint32_t idx;
};

static inline struct verbs_domain *verbs_dom(struct fab_domain *d)
{
	return (struct verbs_domain *)d;
}

static inline struct verbs_ep *verbs_ep_of(struct fab_ep *e)
{
	return (struct verbs_ep *)e;
}

#define verbs_log_err(vd, fmt, ...) \
	log_error("fab", "%s %s: " fmt, (vd)->base.name, (vd)->ident, ##__VA_ARGS__)
#define verbs_log_warn(vd, fmt, ...) \
	log_warn("fab", "%s %s: " fmt, (vd)->base.name, (vd)->ident, ##__VA_ARGS__)
#define verbs_log_info(vd, fmt, ...) \
	log_info("fab", "%s %s: " fmt, (vd)->base.name, (vd)->ident, ##__VA_ARGS__)

/* verbs_dev.c: device, port and GID selection; resource limits */
int verbs_dev_select(const struct fab_domain_attr *attr, bool quiet, struct ibv_context **ctx_out,
		     uint8_t *port_out);
void verbs_memlock_advice(struct verbs_domain *vd, size_t want, int err);
const char *verbs_mtu_str(enum ibv_mtu mtu);
void verbs_qp_path_str(struct ibv_qp *qp, char *buf, size_t cap);

/* verbs_mem.c: registered slabs and regions */
int verbs_slabs_open(struct verbs_domain *vd);
void verbs_slabs_close(struct verbs_domain *vd);
int verbs_mr_reg(struct fab_domain *dom, void *addr, size_t len, unsigned int access,
		 struct fab_mr **mr_out);
void verbs_mr_dereg(struct fab_mr *mr);

/* verbs_win.c: scoped keys (type 2 memory windows) */
int verbs_wins_open(struct verbs_domain *vd);
void verbs_wins_close(struct verbs_domain *vd);
int verbs_rkey_scope(struct fab_ep *ep, struct fab_mr *mr, uint64_t addr, uint64_t len,
		     unsigned int access, uint64_t *key_out);
void verbs_rkey_revoke(struct fab_domain *dom, uint64_t key);
void verbs_win_teardown(struct verbs_domain *vd, const struct verbs_ep *ep,
			const struct fab_mr *mr);
struct verbs_win *verbs_win_of_op(struct verbs_ep *ep, const struct verbs_op *op);
void verbs_win_done(struct verbs_ep *ep, const struct verbs_op *op, int status);

/* verbs.c */
struct verbs_op *verbs_op_alloc(struct verbs_domain *vd);
void verbs_op_free(struct verbs_domain *vd, struct verbs_op *op);
void verbs_opq_push(struct verbs_opq *q, struct verbs_op *op);
struct verbs_op *verbs_opq_pop(struct verbs_opq *q);
int verbs_rbufs_reserve(struct verbs_domain *vd, uint32_t n);
void verbs_rbuf_repost(struct verbs_domain *vd, struct verbs_rbuf *rb);
struct verbs_rbuf *verbs_rbuf_get(struct verbs_domain *vd, uint32_t idx);
int verbs_cq_reserve(struct verbs_domain *vd, uint32_t n);
void verbs_txlist_add(struct verbs_ep *ep);
struct verbs_ep *verbs_ep_by_id(struct verbs_domain *vd, uint32_t ep_id);
struct verbs_ep *verbs_ep_by_qpn(struct verbs_domain *vd, uint32_t qpn);

/* verbs_cm.c: connections */
int verbs_listen(struct fab_domain *dom, const char *addr, void *ctx,
		 struct fab_listener **listener_out);
void verbs_listener_close(struct fab_listener *l);
int verbs_ep_connect(struct fab_domain *dom, const char *addr, const char *local_addr, void *ctx,
		     struct fab_ep **ep_out);
void verbs_ep_close(struct fab_ep *ep);
void verbs_ep_fail(struct verbs_ep *ep, int status, const char *why);
/* "send", "window bind", ...: for logs. */
const char *verbs_op_kind_name(enum verbs_op_kind k);
void verbs_ep_destroy(struct verbs_ep *ep);
int verbs_cm_progress(struct verbs_domain *vd, unsigned int budget);
void verbs_ep_check_deadline(struct verbs_ep *ep, uint64_t now);
void verbs_ep_drained(struct verbs_ep *ep);
void verbs_ep_comm_est(struct verbs_ep *ep);

/* verbs_tx.c: posting, completions, credits */
int verbs_post_send(struct fab_ep *ep, const void *buf, size_t len, void *ctx);
int verbs_post_write(struct fab_ep *ep, const struct fab_sge *src, uint64_t raddr, uint64_t rkey,
		     bool with_imm, uint32_t imm, void *ctx);
int verbs_post_read(struct fab_ep *ep, const struct fab_sge *dst, uint64_t raddr, uint64_t rkey,
		    void *ctx);
void verbs_recv_release(const struct fab_cqe *cqe);
int verbs_ep_tx(struct verbs_ep *ep);
void verbs_cq_handle(struct verbs_domain *vd, const struct ibv_wc *wc);
void verbs_ep_flush_all(struct verbs_ep *ep, int status);
void verbs_ep_stats(const struct fab_ep *ep, struct fab_ep_stats *st);
bool verbs_ep_credit_stalled(const struct verbs_ep *ep);
bool verbs_ep_owes(const struct verbs_ep *ep);

#endif
