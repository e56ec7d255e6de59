/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fabric: one transport API over verbs, UCX and TCP.
 *
 * Model (the verbs model, which the other backends emulate):
 *
 *  - A domain is owned by one thread. It holds the backend state, the
 *    registered memory regions and one completion queue. Nothing here takes
 *    a lock; use one domain per thread.
 *  - fab_progress() drives the transport and moves finished work into the
 *    completion queue; fab_cq_poll() pops completions. fab_wait() sleeps
 *    until something may be ready (busy-polls first for attr.busy_poll_us).
 *  - An endpoint is a reliable, ordered connection to one peer. Connect is
 *    asynchronous (FAB_EV_CONNECTED); a listener produces FAB_EV_ACCEPTED
 *    endpoints that are ready to use. Operations posted on an endpoint
 *    complete in posting order per kind of operation.
 *  - send: a two-sided message of at most attr.msg_size bytes, copied at
 *    post time (the caller's buffer is free on return), delivered into one
 *    of the receiver's pre-posted buffers (FAB_EV_RECV). Each endpoint has
 *    attr.recv_credits buffers; a sender holds one credit per buffer and
 *    stops when it has none, so a receiver never runs dry. The receiver
 *    returns a buffer, and with it the credit, with fab_recv_release().
 *  - write / write_imm / read: one-sided, between a local registered region
 *    and a peer's region named by a struct fab_rkey the peer sent us. The
 *    target's CPU is not involved on verbs; TCP emulates it in the target's
 *    progress engine, which checks key, access and bounds. write_imm also
 *    raises FAB_EV_WRITE_IMM at the target with the 32-bit immediate, and
 *    consumes one receive credit like a send; that credit goes back by
 *    itself when the target polls the FAB_EV_WRITE_IMM completion (there is
 *    no buffer to release). A completion at the initiator means the data is
 *    placed at the target (write) or here (read). A send completion only
 *    means the message left: it is no proof that the peer is alive.
 *  - Failure: when a peer dies or the connection breaks, every operation
 *    still posted on the endpoint completes with an error and then one
 *    FAB_EV_PEER_FAILED is raised. Nothing hangs. The endpoint stays
 *    allocated until the owner calls fab_ep_close(). A dead host is caught
 *    within peer_timeout_ms; a live host whose process hangs (SIGSTOP, a
 *    deadlock) keeps its connections up — detecting that is the job of the
 *    heartbeats of the layers above (OSD beacons, mon subscriptions).
 *
 * Errors are negative errno values. Posting returns -EAGAIN when the
 * endpoint's send queue (attr.sq_depth operations) is full: progress and
 * retry.
 */
#ifndef WEFT_FABRIC_FABRIC_H
#define WEFT_FABRIC_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fab_domain;
struct fab_ep;
struct fab_listener;
struct fab_mr;

struct fab_domain_attr {
	const char *backend;	   /* "auto", "tcp", "ucx", "verbs"; NULL = auto */
	const char *name;	   /* for logs ("osd.3 cluster"); may be NULL */
	uint32_t msg_size;	   /* largest send, bytes (default 8192) */
	uint32_t recv_credits;	   /* receive buffers per endpoint (default 64) */
	uint32_t sq_depth;	   /* operations in flight per endpoint (default 256) */
	uint32_t busy_poll_us;	   /* fab_wait spins this long before sleeping (default 50) */
	uint32_t peer_timeout_ms;  /* declare a silent peer dead after this (default 10000) */
	uint32_t connect_timeout_ms; /* fail a connect after this (default 5000) */
	/* verbs only; NULL/-1 = pick automatically */
	const char *rdma_device;
	int rdma_port;
	int rdma_gid_index;
};

/* Fill attr with defaults. */
void fab_domain_attr_init(struct fab_domain_attr *attr);
/*
 * Fill attr from a conf: ms_type, ms_msg_size, ms_recv_credits, ms_sq_depth,
 * ms_busy_poll, ms_peer_timeout, ms_connect_timeout, rdma_device, rdma_port,
 * rdma_gid_index. Strings point into conf.
 */
struct conf;
void fab_domain_attr_from_conf(struct fab_domain_attr *attr, const struct conf *conf);

int fab_domain_open(const struct fab_domain_attr *attr, struct fab_domain **dom_out);
/* Closes every endpoint and listener still open; deregisters every region. */
void fab_domain_close(struct fab_domain *dom);
/* The backend actually chosen ("tcp", ...). */
const char *fab_domain_backend(const struct fab_domain *dom);
/* The largest send of this domain (its attr.msg_size). */
uint32_t fab_domain_msg_size(const struct fab_domain *dom);
/*
 * Bytes registered in the domain now: every region (pools and the
 * registration cache included) plus the backend's own registered buffers
 * (verbs: receive, send, mailbox and region-table slabs). With RDMA these
 * pages are pinned: they are resident and count in the process's RSS.
 */
uint64_t fab_domain_registered_bytes(const struct fab_domain *dom);
/* Names of the backends compiled in, in preference order; NULL-terminated. */
const char *const *fab_backend_names(void);

/*
 * Drive the transport: handle at most budget events (0 = no limit).
 * Returns the number handled (0 when idle) or a negative errno on a fatal
 * domain error.
 */
int fab_progress(struct fab_domain *dom, unsigned int budget);
/*
 * Put on the wire what was posted since the last fab_progress(), without
 * receiving: a caller about to block (a synchronous disk barrier) sends its
 * posts first. Backends whose posts go out at once have nothing to do.
 * Returns 0 or a negative errno (the failed endpoints report on progress).
 */
int fab_flush(struct fab_domain *dom);
/* Sleep until progress may have work, for at most timeout_ms (-1 = forever). */
int fab_wait(struct fab_domain *dom, int timeout_ms);
/* A file descriptor that polls readable when fab_progress may have work. */
int fab_domain_fd(const struct fab_domain *dom);

/* ---------------------------------------------------------------- regions */

#define FAB_ACCESS_LOCAL 0x0u	     /* local use only (sources/targets of our ops) */
#define FAB_ACCESS_REMOTE_READ 0x1u  /* peers may read it */
#define FAB_ACCESS_REMOTE_WRITE 0x2u /* peers may write it */
/*
 * Peers reach the region only through scoped keys (fab_rkey_scope), never
 * through its own key, where the backend scopes keys
 * (fab_domain_scoped_rkeys); elsewhere the REMOTE_* bits apply to the
 * region's own key as without it (docs/security.md "Remote keys").
 */
#define FAB_ACCESS_SCOPED 0x4u

/* What a peer needs to reach a region: sent over the wire as three u64. */
struct fab_rkey {
	uint64_t addr; /* base address in the owner's address space */
	uint64_t len;
	uint64_t key;
};

/* Register [addr, addr+len). Registration is slow: do it at start-up. */
int fab_mr_reg(struct fab_domain *dom, void *addr, size_t len, unsigned int access,
	       struct fab_mr **mr_out);
/* Revoke and unregister. Operations still using it fail, they never touch freed memory. */
void fab_mr_dereg(struct fab_mr *mr);
void fab_mr_rkey(const struct fab_mr *mr, struct fab_rkey *rkey_out);
void *fab_mr_addr(const struct fab_mr *mr);
size_t fab_mr_len(const struct fab_mr *mr);

/*
 * Scoped remote keys: a key naming only [addr, addr+len) of mr, with access
 * (a subset of REMOTE_READ | REMOTE_WRITE), usable only by the peer of ep,
 * until fab_rkey_revoke. A peer that uses it on another connection, outside
 * the range, for another access, or after the revoke gets an access error
 * (and the owner counts it in remote_errors, logged once per connection),
 * never data. Accesses already accepted when the revoke comes finish.
 * Backends that cannot scope (fab_domain_scoped_rkeys false) hand out the
 * region's key for the range and revoke nothing.
 */
int fab_rkey_scope(struct fab_ep *ep, struct fab_mr *mr, const void *addr, size_t len,
		   unsigned int access, struct fab_rkey *rkey_out);
/*
 * With the access of fab_rkey_scope: the key lives as long as its
 * connection (a replica ring's). A peer may then cache its check, where
 * backends check keys at the initiator (verbs); others are checked before
 * every use, because their owner revokes them while the connection lives.
 */
#define FAB_SCOPE_LONG 0x8u
/* Revoke a key from fab_rkey_scope; an unknown or already revoked one is ignored. */
void fab_rkey_revoke(struct fab_domain *dom, const struct fab_rkey *rkey);
bool fab_domain_scoped_rkeys(const struct fab_domain *dom);

/*
 * Pools: fixed-size buffers carved from one region registered at start-up,
 * so the I/O path never registers memory. Buffers of 4 KiB or more are
 * 4 KiB-aligned (usable for O_DIRECT), smaller ones cache-line aligned.
 */
struct fab_pool;
struct fab_sge;

#define FAB_POOL_HUGEPAGE 0x1u /* try 2 MiB pages; fall back to normal pages (logged) */
/*
 * Make every page resident at creation (a server's pools then cost their
 * full size from the start, as RDMA registration pins them anyway, and no
 * page fault lands on the I/O path). Without it, TCP/UCX pools grow into
 * RSS as buffers are first used.
 */
#define FAB_POOL_POPULATE 0x2u

struct fab_pool_stats {
	uint32_t count;	     /* buffers */
	uint32_t in_use;
	uint32_t high_water; /* most ever in use at once */
	uint64_t get_failures; /* fab_pool_get found none free */
	size_t buf_size;
	size_t bytes;	     /* registered */
	bool hugepages;
};

int fab_pool_create(struct fab_domain *dom, size_t buf_size, uint32_t count, unsigned int access,
		    unsigned int flags, struct fab_pool **pool_out);
void fab_pool_destroy(struct fab_pool *pool);
/* A free buffer and its sge (len = buf_size); NULL with errno ENOBUFS when none is free. */
void *fab_pool_get(struct fab_pool *pool, struct fab_sge *sge_out);
/* Give a buffer back; a pointer that is not one of ours is logged and ignored. */
void fab_pool_put(struct fab_pool *pool, void *buf);
struct fab_mr *fab_pool_mr(const struct fab_pool *pool);
void fab_pool_stats(const struct fab_pool *pool, struct fab_pool_stats *stats_out);

/*
 * Registration cache for user buffers that are not from a pool: get returns
 * a region covering [addr, addr+len) (whole pages), registering on a miss
 * and evicting least recently used idle entries to stay within max_bytes
 * and max_entries; -ENOBUFS when only regions in use stand in the way.
 * Every get is paired with a put. Before freeing or unmapping memory,
 * invalidate it (-EBUSY, logged, if a region there is still in use).
 */
struct fab_mr_cache;

struct fab_mr_cache_stats {
	uint64_t hits, misses, evictions, invalidations;
	uint32_t entries;
	size_t bytes; /* registered through the cache now */
};

int fab_mr_cache_create(struct fab_domain *dom, size_t max_bytes, uint32_t max_entries,
			struct fab_mr_cache **cache_out);
void fab_mr_cache_destroy(struct fab_mr_cache *cache);
int fab_mr_cache_get(struct fab_mr_cache *cache, void *addr, size_t len, unsigned int access,
		     struct fab_mr **mr_out);
void fab_mr_cache_put(struct fab_mr_cache *cache, struct fab_mr *mr);
int fab_mr_cache_invalidate(struct fab_mr_cache *cache, void *addr, size_t len);
void fab_mr_cache_stats(const struct fab_mr_cache *cache, struct fab_mr_cache_stats *stats_out);

/* A piece of a local registered region. */
struct fab_sge {
	void *addr;
	uint32_t len;
	struct fab_mr *mr;
};

/* -------------------------------------------------------------- endpoints */

/*
 * Listen on "ip:port" (port 0 = any; see fab_listener_port). Accepted
 * endpoints carry ctx until changed with fab_ep_set_ctx(). A port in use
 * is -EADDRINUSE without a log line (the caller may try the next port);
 * other errors are logged.
 */
int fab_listen(struct fab_domain *dom, const char *addr, void *ctx,
	       struct fab_listener **listener_out);
uint16_t fab_listener_port(const struct fab_listener *l);
void fab_listener_close(struct fab_listener *l);

/*
 * Start connecting to "ip:port". The endpoint can be used at once:
 * operations posted before FAB_EV_CONNECTED wait for the connection, and
 * fail with it. local_addr (NULL = any) binds the source address, so
 * traffic leaves from the public or the cluster network as asked.
 */
int fab_connect(struct fab_domain *dom, const char *addr, const char *local_addr, void *ctx,
		struct fab_ep **ep_out);
/*
 * Close and free. Operations still posted complete with -ECANCELED (their
 * completions carry ep == NULL); receive buffers still held stay valid until
 * released.
 */
void fab_ep_close(struct fab_ep *ep);
void fab_ep_set_ctx(struct fab_ep *ep, void *ctx);
void *fab_ep_ctx(const struct fab_ep *ep);
bool fab_ep_is_connected(const struct fab_ep *ep);
/* "ip:port" strings; "" when unknown. */
const char *fab_ep_peer_addr(const struct fab_ep *ep);
const char *fab_ep_local_addr(const struct fab_ep *ep);

struct fab_ep_stats {
	uint64_t tx_bytes;	/* every byte this endpoint put on the wire */
	uint64_t rx_bytes;	/* every byte it took off the wire */
	uint64_t sends, recvs;	/* two-sided messages */
	uint64_t writes, reads; /* one-sided ops we initiated */
	uint64_t write_bytes, read_bytes;
	uint64_t remote_writes, remote_reads; /* one-sided ops peers did to us */
	uint64_t remote_errors; /* peer ops we refused (bad key, bounds, access) */
	uint64_t credit_stalls; /* sends that waited for credit */
	/* frames taken off the wire (tcp only; 0 elsewhere), each counted once,
	 * by its receiver; ctrl = CREDIT and WRITE_ACK, which carry no message */
	uint64_t rx_frames, rx_ctrl_frames;
	uint32_t credits;	/* send credits held now */
	uint32_t sq_inflight;	/* operations posted and not completed */
};
void fab_ep_stats(const struct fab_ep *ep, struct fab_ep_stats *stats_out);

/* ------------------------------------------------------------- operations */

int fab_send(struct fab_ep *ep, const void *buf, size_t len, void *ctx);
int fab_write(struct fab_ep *ep, const struct fab_sge *src, const struct fab_rkey *dst,
	      uint64_t dst_offset, void *ctx);
int fab_write_imm(struct fab_ep *ep, const struct fab_sge *src, const struct fab_rkey *dst,
		  uint64_t dst_offset, uint32_t imm, void *ctx);
int fab_read(struct fab_ep *ep, const struct fab_sge *dst, const struct fab_rkey *src,
	     uint64_t src_offset, void *ctx);

/* ------------------------------------------------------------ completions */

enum fab_ev_kind {
	FAB_EV_SEND = 1,     /* our send left (status) */
	FAB_EV_WRITE,	     /* our write (or write_imm) is placed at the target */
	FAB_EV_READ,	     /* our read's data is in the local buffer */
	FAB_EV_RECV,	     /* a message arrived: data/len, release it */
	FAB_EV_WRITE_IMM,    /* a peer wrote into our region: imm, len */
	FAB_EV_CONNECTED,    /* fab_connect finished (status 0 or -errno) */
	FAB_EV_ACCEPTED,     /* a new endpoint from a listener: ep, listener */
	FAB_EV_PEER_FAILED,  /* the connection broke (status says why) */
};

struct fab_cqe {
	enum fab_ev_kind kind;
	int status;	  /* 0 or -errno */
	struct fab_ep *ep;
	void *ctx;	  /* the op's ctx; the endpoint's ctx for events */
	void *data;	  /* RECV: the message (valid until released) */
	uint32_t len;	  /* RECV, WRITE_IMM: bytes; SEND/WRITE/READ: bytes moved */
	uint32_t imm;	  /* WRITE_IMM */
	struct fab_listener *listener; /* ACCEPTED */
	void *priv;	  /* backend's; do not touch */
};

/* Pop up to max completions. Returns how many (0 if none). */
int fab_cq_poll(struct fab_domain *dom, struct fab_cqe *cqes, unsigned int max);
/* Give a FAB_EV_RECV buffer back and return its credit to the sender. */
void fab_recv_release(const struct fab_cqe *cqe);

const char *fab_ev_name(enum fab_ev_kind kind);

#endif
