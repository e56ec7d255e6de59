/* SPDX-License-Identifier: Apache-2.0 */
/*
 * TCP backend internals. One nonblocking socket per endpoint, driven by an
 * epoll set; every operation travels as a frame (fixed header + payload).
 * One-sided operations are emulated by the target's progress engine, which
 * checks key, access and bounds before it copies into or out of a region.
 */
#ifndef WEFT_FABRIC_TCP_H
#define WEFT_FABRIC_TCP_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric/fab_backend.h"

#define TCP_MAGIC      0x57465442u /* "WFTB" */
#define TCP_VERSION    1u
#define TCP_HDR_LEN    40u
#define TCP_HELLO_LEN  20u
#define TCP_STAGE_SIZE (64u * 1024u)
/* Payloads at least this large are received straight into their destination. */
#define TCP_DIRECT_MIN (16u * 1024u)
/* Frames handled per endpoint per progress call, so one busy peer cannot starve others. */
#define TCP_EP_FRAME_BUDGET 256u
/* Target-side refusals logged per endpoint before going quiet (counted after). */
#define TCP_EP_LOG_LIMIT 8u
/*
 * Write acks ride in other frames (docs/fabric.md, "Write acks"): a HELLO
 * with TCP_HELLO_F_WACKS in its flags says "I send and take them"; between
 * two such peers every later frame's flags byte is the number of the
 * reader's writes it acknowledges (at most TCP_WACKS_MAX), and a placed
 * write gets no WRITE_ACK frame of its own. A write_imm's ack waits at most
 * TCP_WACK_DELAY_NS for a frame to ride on (the target's application
 * usually answers it); a plain write's goes with the next flush.
 */
#define TCP_HELLO_F_WACKS 0x01u
#define TCP_WACKS_MAX	  0x7fu
#define TCP_WACK_DELAY_NS (1000u * 1000u)

enum tcp_frame_type {
	TCP_F_HELLO = 1,
	TCP_F_MSG,
	TCP_F_WRITE,
	TCP_F_WRITE_IMM,
	TCP_F_WRITE_ACK,
	TCP_F_READ_REQ,
	TCP_F_READ_RESP,
	TCP_F_CREDIT,
	TCP_F_MAX
};

/* Wire header, little-endian, TCP_HDR_LEN bytes (see tcp_hdr_encode). */
struct tcp_hdr {
	uint8_t type;
	uint8_t flags;
	uint16_t credits; /* receive credits returned to the reader of this frame */
	uint32_t len;	  /* payload bytes that follow */
	int32_t status;	  /* ACK / READ_RESP: 0 or -errno */
	uint32_t imm;
	uint64_t id;   /* initiator's op id, echoed in ACK / READ_RESP */
	uint64_t addr; /* WRITE / READ_REQ: target address */
	uint64_t key;  /* WRITE / READ_REQ: region key */
};

enum tcp_op_kind {
	TCP_OP_SEND,
	TCP_OP_WRITE,
	TCP_OP_READ,
	TCP_OP_CTRL, /* HELLO, ACK, READ_RESP, CREDIT: no completion */
};

struct tcp_op {
	struct tcp_op *next;
	enum tcp_op_kind kind;
	bool encoded;	  /* header bytes built (credits and credit use committed) */
	bool revoked;	  /* its local region was deregistered */
	bool stalled;	  /* counted once in credit_stalls */
	bool wacks_fixed; /* an answer: its write acks were taken when it was queued */
	struct tcp_hdr h;
	uint8_t hdr[TCP_HDR_LEN];
	const void *payload; /* what follows the header on the wire */
	uint32_t payload_len;
	uint32_t tx_off;	    /* bytes of header + payload written */
	void *msgbuf;		    /* SEND: our copy of the message */
	uint8_t inl[TCP_HELLO_LEN]; /* HELLO payload */
	struct fab_mr *mr;	    /* WRITE source / READ destination / READ_RESP source */
	void *dst;		    /* READ: where the data lands */
	void *ctx;
};

struct tcp_op_queue {
	struct tcp_op *head, *tail;
	uint32_t count;
};

struct tcp_slot {
	struct tcp_ep *ep;
	void *buf;
	bool held;
};

enum tcp_ep_state {
	TCP_EP_CONNECTING, /* nonblocking connect in progress */
	TCP_EP_HANDSHAKE,  /* socket up, HELLO not yet received */
	TCP_EP_CONNECTED,
	TCP_EP_FAILED, /* socket closed; events delivered */
};

enum tcp_rx_state {
	TCP_RX_HDR,
	TCP_RX_PAYLOAD,
	TCP_RX_DISCARD,
};

enum tcp_pollable_kind {
	TCP_POLL_EP = 1,
	TCP_POLL_LISTENER,
	TCP_POLL_WAKE,
};

struct tcp_domain;

struct tcp_ep {
	struct fab_ep base;
	enum tcp_pollable_kind pkind; /* epoll data points here */
	struct tcp_domain *tdom;
	struct tcp_ep *prev, *next; /* domain list */
	struct tcp_ep *ready_next;  /* domain's rx-ready list */
	struct tcp_ep *tx_next;	    /* domain's tx-pending list */
	bool on_ready, on_txlist;
	struct tcp_listener *from; /* the listener, while it is open */
	bool accepted;		   /* came from a listener (else fab_connect) */
	int fd;
	enum tcp_ep_state state;
	bool user_closed;     /* fab_ep_close called; freed when slots come back */
	bool zombie;	      /* accepted, never reported, to be freed */
	bool want_out;	      /* EPOLLOUT armed */
	uint64_t deadline_ns; /* connect / handshake deadline */
	uint32_t log_budget;

	/* send side */
	struct tcp_op_queue txq;   /* not yet fully on the wire */
	struct tcp_op_queue waitq; /* WRITE/READ sent, waiting for ACK/RESP */
	uint32_t user_ops;	   /* user ops posted and not completed (sq depth) */
	uint32_t tx_credits;
	uint32_t peer_window;
	uint32_t peer_msg_size;
	uint32_t peer_sq_depth;
	uint32_t answers_queued; /* ACK / READ_RESP owed to the peer, bounded by its sq_depth */
	uint64_t next_id;
	bool wacks;		/* both HELLOs had TCP_HELLO_F_WACKS */
	uint32_t wack_owed;	/* the peer's writes placed here, not yet acknowledged */
	bool wack_urgent;	/* owed acks go with the next flush, alone if need be */
	uint64_t wack_since_ns; /* when the oldest owed ack was owed */
	bool on_wacklist;
	struct tcp_ep *wack_next; /* domain's list of endpoints owing write acks */

	/* receive side */
	uint32_t rx_owed;    /* credits released here, not yet returned */
	uint32_t imm_held;   /* WRITE_IMM completions not yet polled */
	uint32_t slots_held; /* RECV buffers lent to the user */
	struct tcp_slot *slots;
	uint32_t *free_slots;
	uint32_t nfree;
	uint8_t *slot_mem;

	enum tcp_rx_state rx;
	uint8_t rx_hdrbuf[TCP_HDR_LEN];
	uint32_t rx_have;
	struct tcp_hdr rh;
	uint8_t *rx_dst;
	uint32_t rx_left;
	int rx_status;	      /* refusal status while discarding */
	struct fab_mr *rx_mr; /* region being written by the peer */
	struct tcp_slot *rx_slot;
	struct tcp_op *rx_op; /* our READ whose data is arriving */
	uint8_t rx_small[TCP_HELLO_LEN];
	uint8_t *stage;
	uint32_t stage_pos, stage_len;
	bool rx_big; /* the last payload was large: receive the next header alone */
};

struct tcp_listener {
	struct fab_listener base;
	enum tcp_pollable_kind pkind;
	struct tcp_listener *next; /* domain list */
	int fd;
	/*
	 * accept() ran out of descriptors (or memory): the listener is out of
	 * the poll set until then, or the still-readable socket would wake
	 * every round and fail again (a spin, a line per round).
	 */
	uint64_t paused_until_ns; /* 0: listening */
	uint64_t log_ns;	  /* the last line about it */
	uint64_t quiet;		  /* failures not logged since */
};

struct tcp_domain {
	struct fab_domain base;
	int epfd;
	int wakefd;	    /* eventfd in the epoll set: readable while ready != NULL */
	struct tcp_ep *eps; /* every endpoint, for close and revocation scans */
	struct tcp_listener *listeners;
	struct tcp_ep *ready;	 /* endpoints with staged bytes left to parse */
	struct tcp_ep *txlist;	 /* endpoints with frames to flush */
	struct tcp_ep *wacklist; /* endpoints owing write acks, checked for their delay */
	uint32_t nconnecting;	 /* endpoints with a deadline */
	uint32_t nlisten_paused; /* listeners out of the poll set (tcp_ep_accept) */
	uint64_t next_deadline_check;
	struct fab_mr **mrs; /* key -> region table */
	uint32_t nmrs, mrs_cap;
	struct fab_wintab wins; /* scoped keys (fab_rkey_scope): key -> window */
	struct tcp_op *op_free; /* recycled ops */
	void **msg_free;	/* recycled send copies (msg_size bytes each) */
	uint32_t nmsg_free, msg_free_cap;
	/* "peer closed" lines: a burst of closes (a flood ending) must not flood the log */
	uint64_t close_log_ms; /* the current window's start */
	uint32_t close_log_n;  /* lines logged in it */
	uint64_t close_quiet;  /* closes not logged since the last line */
};

static inline struct tcp_domain *tcp_dom(struct fab_domain *d)
{
	return (struct tcp_domain *)d;
}

static inline struct tcp_ep *tcp_ep_of(struct fab_ep *e)
{
	return (struct tcp_ep *)e;
}

/* tcp.c */
void tcp_hdr_encode(const struct tcp_hdr *h, uint8_t *out);
void tcp_hdr_decode(const uint8_t *in, struct tcp_hdr *h);
struct tcp_op *tcp_op_alloc(struct tcp_domain *td);
void tcp_op_free(struct tcp_domain *td, struct tcp_op *op);
void *tcp_msgbuf_alloc(struct tcp_domain *td);
void tcp_msgbuf_free(struct tcp_domain *td, void *buf);
struct fab_mr *tcp_mr_lookup(struct tcp_domain *td, uint64_t key);
void tcp_op_enqueue(struct tcp_op_queue *q, struct tcp_op *op);
struct tcp_op *tcp_op_dequeue(struct tcp_op_queue *q);
void tcp_epoll_update(struct tcp_ep *ep);
/* Take a listener out of the poll set for a while (accept has no descriptors), or back. */
void tcp_listener_pause(struct tcp_listener *l, int err);
void tcp_txlist_add(struct tcp_ep *ep);
void tcp_ready_add(struct tcp_ep *ep);

/* tcp_ep.c (endpoint life cycle, send side) */
int tcp_ep_connect(struct fab_domain *dom, const char *addr, const char *local_addr, void *ctx,
		   struct fab_ep **ep_out);
int tcp_ep_accept(struct tcp_listener *l);
void tcp_ep_close(struct fab_ep *ep);
void tcp_ep_fail(struct tcp_ep *ep, int status, const char *why);
void tcp_ep_destroy(struct tcp_ep *ep);
int tcp_ep_flush(struct tcp_ep *ep);
int tcp_ep_on_out(struct tcp_ep *ep);
/* tcp_post.c (posting, credit return, revocation) */
int tcp_post_send(struct fab_ep *ep, const void *buf, size_t len, void *ctx);
int tcp_post_write(struct fab_ep *ep, const struct fab_sge *src, uint64_t raddr, uint64_t rkey,
		   bool with_imm, uint32_t imm, void *ctx);
int tcp_post_read(struct fab_ep *ep, const struct fab_sge *dst, uint64_t raddr, uint64_t rkey,
		  void *ctx);
void tcp_recv_release(const struct fab_cqe *cqe);
void tcp_ep_complete(struct tcp_ep *ep, struct tcp_op *op, int status);
void tcp_ep_on_hello(struct tcp_ep *ep);
int tcp_ep_queue_ctrl(struct tcp_ep *ep, const struct tcp_hdr *h, const void *payload,
		      struct fab_mr *mr);
/* A write of the peer was placed here: its ack is owed (urgent: a plain write). */
void tcp_ep_wack_owe(struct tcp_ep *ep, bool urgent);
/* Owed acks past their delay become urgent (the domain's check). */
void tcp_wacks_check(struct tcp_domain *td, uint64_t now);
void tcp_ep_check_deadline(struct tcp_ep *ep, uint64_t now);
void tcp_ep_revoke_mr(struct tcp_ep *ep, struct fab_mr *mr);

/* tcp_rx.c */
int tcp_ep_rx(struct tcp_ep *ep, unsigned int budget);

#endif
