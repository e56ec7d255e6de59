/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libweft internals (docs/client.md). One struct weft_cluster per
 * connection to a cluster: one fabric domain and one messenger over it,
 * carrying the mon client (maps) and one connection per OSD it talks to
 * (their public addresses), registered buffer pools, and every op that is
 * queued or in flight.
 *
 *   client.c      connect, map, connections, buffers, the event loop (evloop/)
 *   client_op.c   ops: placement, send, replies, resend, per-op timers, sync forms
 */
#ifndef WEFT_CLIENT_CLIENT_INT_H
#define WEFT_CLIENT_CLIENT_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "common/conf.h"
#include "evloop/evloop.h"
#include "fabric/fabric.h"
#include "mon/monc/monc_evl.h"
#include "msgr/msgr.h"
#include "proto/proto.h"
#include "weft/weft.h"

#define CLIENT_SMALL_BUF      (64u << 10)
#define CLIENT_SMALL_COUNT    64u
#define CLIENT_TARGET_PRIMARY (-1)

struct client_conn {
	struct weft_cluster *cl;
	uint32_t osd;
	char addr[PROTO_ADDR_MAX + 1];
	struct msgr_conn *mc;
	bool failed; /* freed by weft_poll after the current batch */
	int refused; /* -EPROTONOSUPPORT: the hello check refused the OSD (resending cannot help) */
	struct client_conn *next;
};

enum client_op_state {
	CLIENT_OP_WAIT = 1, /* to be (re)sent: needs want_epoch, retry_at, or a buffer */
	CLIENT_OP_SENT,	    /* request out, reply awaited on conn */
	CLIENT_OP_ZOMBIE,   /* timed out and reported; may still be touched by an OSD */
	CLIENT_OP_DONE,	    /* result ready, callback pending */
};

#define CLIENT_TID_BUCKETS 1024u /* a power of two: replies find their op in O(1) */

struct client_op {
	struct weft_cluster *cl;
	struct client_op *next, *prev; /* cl->ops */
	struct client_op *tnext;       /* cl->by_tid[tid % CLIENT_TID_BUCKETS], from send to free */
	bool in_tid;
	enum client_op_state state;
	uint16_t opcode;
	uint32_t pool;
	char name[PROTO_OBJ_NAME_MAX + 1];
	size_t name_len;
	uint64_t off, len;
	const void *wbuf;
	void *rbuf;
	int target; /* CLIENT_TARGET_PRIMARY or a fixed OSD id (debug ops) */
	/* registered source/destination: the user's buffer or a bounce buffer */
	bool direct;
	void *bounce;
	struct fab_pool *bpool;
	struct fab_rkey rkey;	/* the buffer; its key is scoped per send */
	struct fab_mr *rkey_mr; /* the buffer's region */
	bool scoped;		/* rkey holds a scoped key, revoked when the op leaves the OSD */
	struct client_conn *conn;
	uint64_t tid;
	uint32_t want_epoch;
	uint64_t retry_at_ms, deadline_ms;
	unsigned int resends;
	struct weft_result res;
	void *inline_out; /* debug perf: where the inline reply goes */
	size_t inline_cap;
	weft_op_cb cb;
	void *arg;
	/* WAIT: the next retry or the deadline, whichever is first; SENT: the deadline */
	struct evl_timer timer;
	struct client_op *done_next; /* cl->done_head: completed, callback to run */
	bool done_queued;
};

struct weft_cluster {
	struct conf *conf;
	char name[PROTO_NAME_MAX + 1];
	struct monc *monc;
	uint32_t epoch; /* last epoch the ops were kicked for */
	struct fab_domain *dom;
	struct msgr *msgr; /* every connection of this handle, the mon client's too */
	struct fab_pool *small_pool, *large_pool;
	struct client_conn *conns;
	struct client_op *ops;
	unsigned int nops;
	struct client_op *by_tid[CLIENT_TID_BUCKETS]; /* ops with a tid on the wire */
	uint64_t next_tid;
	uint32_t msg_size;
	uint64_t max_op, inline_max, op_timeout_ms;
	/* the event loop (docs/evloop.md): weft_poll runs it, weft_fd is its epoll fd */
	struct evl *loop;
	struct monc_evl monc_timer;		 /* the mon client's own deadlines and retries */
	struct client_op *done_head, *done_tail; /* DONE ops whose callbacks run next */
	uint64_t callbacks;			 /* op callbacks run (weft_poll's answer) */
	struct proto_hello hello; /* ours: first frame on each connection (its nonce: our instance) */
	uint64_t resends;	  /* ops sent again (stale epoch, primary change, failure) */
	uint64_t instance; /* this handle's instance (client_fence.c), the hello's nonce */
	bool blocklisted;  /* an OSD refused us as blocklisted, or a map listed us: sticky */
	/* our OSD connections present the monitors' ticket (client_auth_start); NULL: plain */
	const struct msgr_auth_cfg *osd_auth;
	bool ticket_waited; /* "no ticket yet" was logged */
};

/* client.c */
struct client_conn *client_conn_get(struct weft_cluster *cl, uint32_t osd, const char *addr);
void client_conn_free(struct client_conn *c);
/* The registered pool holding [buf, buf+len), or NULL. */
struct fab_pool *client_buf_pool(struct weft_cluster *cl, const void *buf, size_t len);
void *client_bounce_get(struct weft_cluster *cl, uint64_t len, struct fab_pool **pool_out);

/* client_fence.c */
/* Draw this handle's instance and build its hello. */
void client_instance_init(struct weft_cluster *cl);
void client_blocklisted_mark(struct weft_cluster *cl, const char *how);
/*
 * Blocklist another instance for seconds and wait until our map has the
 * epoch that lists it. 0; -EDEADLK for our own instance; the mons' error.
 */
int client_fence(struct weft_cluster *cl, uint64_t instance, unsigned int seconds,
		 uint32_t *epoch_out);

/* client_op.c */
int client_op_submit(struct weft_cluster *cl, struct client_op *op);
void client_op_reply(struct weft_cluster *cl, struct client_conn *conn, uint64_t tid,
		     const struct proto_osd_op_reply *r);
void client_ops_conn_failed(struct weft_cluster *cl, struct client_conn *conn);
/* The loop's poller: runs the callbacks of completed ops. Returns callbacks run. */
int client_ops_done_poll(struct evl *evl, void *arg);
/* The map moved: ops waiting for an epoch or for the pause flag to go are sent now. */
void client_ops_map_changed(struct weft_cluster *cl);
void client_ops_cancel_all(struct weft_cluster *cl);
/* A completion with res that runs from the next weft_poll() (nothing is sent). */
int client_op_defer(struct weft_cluster *cl, const struct weft_result *res, weft_op_cb cb,
		    void *arg);
/*
 * Compare-and-write (PROTO_OP_CMP_WRITE_FULL): buf holds the expected
 * content (cmp_len bytes, 0 = missing or empty) then the new content; the
 * object is replaced only on a match, else the op fails with -ECANCELED.
 */
int client_aio_cmp_write_full(struct weft_cluster *cl, uint32_t pool, const char *name,
			      const void *buf, size_t cmp_len, size_t len, weft_op_cb cb,
			      void *arg);

#endif
