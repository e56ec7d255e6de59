/* SPDX-License-Identifier: Apache-2.0 */
/*
 * UCX backend internals. One ucp_context + one ucp_worker per domain
 * (UCS_THREAD_MODE_SINGLE), client-server endpoints over a ucp_listener,
 * sends as active messages into per-endpoint receive slots with the same
 * credit protocol as TCP, one-sided ops as ucp_put_nbx / ucp_get_nbx with
 * packed rkeys fetched from the owner on first use (docs/ucx.md).
 *
 * Nothing is sent from inside a UCX callback: handlers record what they saw
 * and the progress loop acts on it afterwards (ucx_ep_pump), so the order of
 * everything that leaves an endpoint is decided in one place.
 */
#ifndef WEFT_FABRIC_UCX_H
#define WEFT_FABRIC_UCX_H

#include <stdbool.h>
#include <stdint.h>

#include <ucp/api/ucp.h>

#include "fabric/fab_backend.h"

#define UCX_AM_ID 0x57u		/* one AM id; the header says which message */
#define UCX_MAGIC 0x57465558u	/* "WFUX" */
#define UCX_VERSION 1u
#define UCX_HDR_LEN 64u
#define UCX_EP_LOG_LIMIT 8u
/* Largest control payload (a packed rkey). */
#define UCX_CTRL_MAX 4096u
/* How long fab_mr_dereg progresses so its revocations leave (see docs/ucx.md). */
#define UCX_REVOKE_WAIT_MS 200u
/* How long fab_domain_close waits for UCX to hand back requests and endpoints. */
#define UCX_CLOSE_WAIT_MS 2000u

enum ucx_msg_type {
	UCX_M_HELLO = 1, /* a: magic, b: version, c: credits, d: msg_size, id: sender's cookie */
	UCX_M_MSG,	 /* payload: the message; a: sequence number */
	UCX_M_IMM,	 /* a: imm, b: len — a write_imm's data is already placed */
	UCX_M_CREDIT,	 /* credits only */
	UCX_M_RKEY_REQ,	 /* a: key, id: request id */
	UCX_M_RKEY_RESP, /* a: key, b: base, c: len, d: access, status; payload: packed rkey */
	UCX_M_NOTE,	 /* a: writes, b: reads, c: refusals: one-sided ops done to us */
	UCX_M_REVOKE,	 /* a: key — deregistered, drop the cached rkey */
	UCX_M_BYE,	 /* the sender closed the endpoint */
	UCX_M_MAX
};

/* Wire header, little-endian (ucx_hdr_encode). */
struct ucx_hdr {
	uint8_t type;
	uint32_t credits; /* receive credits returned to the reader */
	int32_t status;
	uint64_t cookie;  /* the reader's endpoint id (0 in HELLO) */
	uint64_t id;
	uint64_t a, b, c, d;
};

enum ucx_op_kind {
	UCX_OP_SEND,
	UCX_OP_WRITE,
	UCX_OP_READ,
	UCX_OP_CTRL,  /* an internal AM: no completion */
	UCX_OP_FLUSH, /* ucp_ep_flush_nbx covering the writes issued before it */
	UCX_OP_CLOSE, /* ucp_ep_close_nbx */
};

struct ucx_rkey;

struct ucx_op {
	struct ucx_op *next;	 /* pendq / inflq / free list */
	struct ucx_op *all_next; /* every op the domain allocated */
	enum ucx_op_kind kind;
	struct ucx_ep *ep;
	void *ctx;
	int status;
	uint32_t refs;	  /* UCX requests still pointing at this op */
	bool reported;	  /* the user's completion was queued (or none is due) */
	bool stalled;	  /* counted once in credit_stalls */
	bool with_imm;
	bool imm_sent;
	bool revoke;	  /* CTRL: a REVOKE that fab_mr_dereg waits for */
	uint32_t imm;
	uint32_t len;
	uint64_t seq;	  /* WRITE: ep write number; FLUSH: writes it covers */
	void *msgbuf;	  /* SEND / CTRL: our copy (header + payload for CTRL) */
	uint8_t hdr[UCX_HDR_LEN];
	void *laddr;	  /* WRITE source / READ destination */
	struct fab_mr *mr;
	uint64_t raddr, rkey;
	struct ucx_rkey *rk; /* the cached rkey the op was issued with */
};

struct ucx_op_queue {
	struct ucx_op *head, *tail;
	uint32_t count;
};

/* A peer's region as learned from its RKEY_RESP. */
struct ucx_rkey {
	struct ucx_rkey *next;
	uint64_t key;
	uint64_t base, len;
	unsigned int access;
	ucp_rkey_h rkey;   /* NULL while fetching or when refused */
	int status;	   /* 0, or why the owner refused */
	bool fetching, dead;
	uint32_t inuse;	   /* issued ops using rkey */
	bool once;	   /* a scoped key's answer: good for the op that asked */
};

struct ucx_slot {
	struct ucx_ep *ep;
	void *buf;
	bool held;
};

enum ucx_ep_state {
	UCX_EP_CONNECTING, /* ucp_ep created, peer's HELLO not yet seen */
	UCX_EP_CONNECTED,
	UCX_EP_FAILED,	   /* ucp_ep closed; events delivered */
};

struct ucx_listener;
struct ucx_domain;

struct ucx_ep {
	struct fab_ep base;
	struct ucx_domain *ud;
	struct ucx_ep *prev, *next; /* domain list */
	ucp_ep_h uep;		    /* client-server endpoint (NULL once closed) */
	uint64_t cookie;	    /* our id, told to the peer in HELLO */
	uint64_t peer_cookie;	    /* the peer's id, in every header we send */
	struct ucx_listener *from;  /* accepted: the listener (NULL = outgoing) */
	enum ucx_ep_state state;
	bool user_closed, zombie;
	int fail_rc;		    /* set in callbacks (error, BYE, bad frame) */
	const char *fail_why;
	uint32_t refs;		    /* UCX requests that name this ep */
	uint64_t deadline_ns;
	uint32_t log_budget;

	/* send side */
	struct ucx_op_queue pendq; /* posted, not yet handed to UCX (posting order) */
	struct ucx_op_queue inflq; /* handed to UCX, completions in posting order */
	struct ucx_op_queue ctlq;  /* internal AMs waiting to go (answers, revocations) */
	struct ucx_op *barrier;	   /* write_imm whose IMM has not left: nothing passes it */
	uint32_t user_ops;	   /* posted and not completed (sq depth) */
	uint32_t tx_credits, peer_window, peer_msg_size;
	uint64_t tx_seq;
	uint64_t write_seq, flush_seq, flushed_seq;
	uint64_t next_req_id;
	uint32_t note_writes, note_reads, note_errors; /* for the next NOTE */
	struct ucx_rkey *rkeys;

	/* receive side */
	uint64_t rx_seq;
	uint32_t rx_owed;     /* credits released here, not yet returned */
	uint32_t imm_held;    /* WRITE_IMM completions not yet polled */
	uint32_t slots_held;
	struct ucx_slot *slots;
	uint32_t *free_slots;
	uint32_t nfree;
	uint8_t *slot_mem;
};

struct ucx_listener {
	struct fab_listener base;
	struct ucx_domain *ud;
	struct ucx_listener *next;
	ucp_listener_h ul;
};

/*
 * A message as the AM handler saw it. The handler only queues (keeping UCX's
 * buffer, UCP_AM_FLAG_PERSISTENT_DATA); progress handles the queue within its
 * budget and releases the buffers.
 */
struct ucx_rx {
	struct ucx_hdr h;
	ucp_ep_h reply_ep; /* HELLO only */
	void *data;	   /* NULL if none */
	size_t len;
	bool held;	   /* ucp_am_data_release when done */
	bool rndv;
};

/* A connection request seen in the listener callback, acted on in progress. */
struct ucx_conn_req {
	struct ucx_conn_req *next;
	struct ucx_listener *l;
	ucp_conn_request_h req;
};

/* RKEY_RESP access bit: a scoped key's answer, good for one use (ucx_am.c) */
#define UCX_RK_ONCE 0x100u

struct ucx_mr {
	struct fab_mr base;
	ucp_mem_h memh;
	void *rkey_buf;
	size_t rkey_len;
};

struct ucx_domain {
	struct fab_domain base;
	ucp_context_h ctx;
	ucp_worker_h worker;
	int efd;	/* UCX's: readable when armed and UCX has events */
	int epfd;	/* fab_domain_fd: epoll over efd and evfd */
	int evfd;	/* eventfd we raise while work is left over (budget, backlog) */
	struct ucx_rx *rxq; /* ring of received messages not yet handled */
	uint32_t rx_head, rx_count, rx_cap;
	struct ucx_ep *eps;
	struct ucx_listener *listeners;
	struct ucx_conn_req *conn_reqs;
	uint32_t nconnecting;
	uint32_t nfailing; /* endpoints with fail_rc set */
	uint32_t revokes_inflight;
	struct ucx_mr **mrs; /* key -> region */
	struct fab_wintab wins; /* scoped keys (fab_win.c): key -> window */
	uint32_t nmrs, mrs_cap;
	struct ucx_ep **ep_ids; /* cookie -> endpoint */
	uint32_t nep_ids, ep_ids_cap;
	struct ucx_op *op_free, *op_all;
	void **msg_free;
	uint32_t nmsg_free, msg_free_cap;
	bool dirty; /* some op finished: look for completions */
};

static inline struct ucx_domain *ucx_dom(struct fab_domain *d)
{
	return (struct ucx_domain *)d;
}

static inline struct ucx_ep *ucx_ep_of(struct fab_ep *e)
{
	return (struct ucx_ep *)e;
}

/* ucx.c */
int ucx_status_errno(ucs_status_t st);
int ucx_addr_check(struct fab_domain *dom, const char *what, const char *addr,
		   const struct sockaddr_storage *ss);
struct ucx_op *ucx_op_alloc(struct ucx_domain *ud);
void ucx_op_put(struct ucx_domain *ud, struct ucx_op *op);
void *ucx_msgbuf_alloc(struct ucx_domain *ud);
struct ucx_mr *ucx_mr_lookup(struct ucx_domain *ud, uint64_t key);
void ucx_op_enqueue(struct ucx_op_queue *q, struct ucx_op *op);
struct ucx_op *ucx_op_dequeue(struct ucx_op_queue *q);

/* ucx_ep.c: life cycle */
int ucx_ep_connect(struct fab_domain *dom, const char *addr, const char *local_addr, void *ctx,
		   struct fab_ep **ep_out);
int ucx_ep_accept(struct ucx_domain *ud, struct ucx_conn_req *cr);
void ucx_ep_close(struct fab_ep *ep);
void ucx_ep_fail(struct ucx_ep *ep, int status, const char *why);
void ucx_ep_destroy(struct ucx_ep *ep);
struct ucx_ep *ucx_ep_by_cookie(struct ucx_domain *ud, uint64_t cookie);
void ucx_ep_on_hello(struct ucx_ep *ep, const struct ucx_hdr *h);
void ucx_ep_check_deadline(struct ucx_ep *ep, uint64_t now);
void ucx_ep_set_failing(struct ucx_ep *ep, int rc, const char *why);

/* ucx_tx.c: posting, issuing, completions */
int ucx_ep_pump(struct ucx_ep *ep);
unsigned int ucx_ep_complete_ready(struct ucx_ep *ep, unsigned int budget);
void ucx_ep_flush_ops(struct ucx_ep *ep, int status);
void ucx_ep_revoke_local(struct ucx_ep *ep, struct fab_mr *mr);
int ucx_ep_queue_ctrl(struct ucx_ep *ep, struct ucx_hdr *h, const void *payload, uint32_t len);
int ucx_ctrl_send(struct ucx_ep *ep, struct ucx_op *op, const struct ucx_hdr *h,
		  const void *payload, uint32_t len, uint32_t flags);
int ucx_op_track(struct ucx_op *op, ucs_status_ptr_t sp);
void ucx_req_cb(void *request, ucs_status_t status, void *user_data);
int ucx_post_send(struct fab_ep *ep, const void *buf, size_t len, void *ctx);
int ucx_post_write(struct fab_ep *ep, const struct fab_sge *src, uint64_t raddr, uint64_t rkey,
		   bool with_imm, uint32_t imm, void *ctx);
int ucx_post_read(struct fab_ep *ep, const struct fab_sge *dst, uint64_t raddr, uint64_t rkey,
		  void *ctx);
void ucx_recv_release(const struct fab_cqe *cqe);

/* ucx_am.c */
void ucx_hdr_encode(const struct ucx_hdr *h, uint8_t *out);
void ucx_hdr_decode(const uint8_t *in, struct ucx_hdr *h);
ucs_status_t ucx_am_recv_cb(void *arg, const void *header, size_t header_length, void *data,
			    size_t length, const ucp_am_recv_param_t *param);
unsigned int ucx_rx_handle(struct ucx_domain *ud, unsigned int budget);
void ucx_rx_drop_all(struct ucx_domain *ud);
struct ucx_rkey *ucx_rkey_find(struct ucx_ep *ep, uint64_t key);
void ucx_rkey_release(struct ucx_ep *ep, struct ucx_rkey *rk);
void ucx_rkey_drop(struct ucx_ep *ep, struct ucx_rkey *rk);
void ucx_rkeys_free(struct ucx_ep *ep);

#endif
