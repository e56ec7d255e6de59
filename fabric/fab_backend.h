/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Provider-facing half of the fabric: the objects every backend embeds as
 * their first member, the ops table, and the completion-queue helpers.
 * Upper layers include fabric.h only.
 */
#ifndef WEFT_FABRIC_FAB_BACKEND_H
#define WEFT_FABRIC_FAB_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/log.h"
#include "fabric/fabric.h"

#define FAB_ADDR_STRLEN 64

/* A growable ring of completions; the domain's only queue. */
struct fab_cq {
	struct fab_cqe *ring;
	uint32_t cap; /* power of two */
	uint32_t head;
	uint32_t count;
};

struct fab_domain {
	const struct fab_ops *ops;
	struct fab_domain_attr attr;
	char name[64];
	struct fab_cq cq;
	uint64_t reg_bytes; /* registered now: user regions and the backend's own buffers */
	bool rkeys_unscoped; /* the backend scopes keys, but not on this device */
};

struct fab_ep {
	struct fab_domain *dom;
	void *ctx;
	bool connected;
	char peer_addr[FAB_ADDR_STRLEN];
	char local_addr[FAB_ADDR_STRLEN];
	struct fab_ep_stats stats;
};

struct fab_listener {
	struct fab_domain *dom;
	void *ctx;
	uint16_t port;
};

struct fab_mr {
	struct fab_domain *dom;
	void *addr;
	size_t len;
	unsigned int access;
	uint64_t key;
};

/*
 * Scoped keys kept in software (fab_win.c): the TCP backend checks every
 * access against them, the UCX backend answers key requests from them.
 * Bit 63 marks a scoped key; such backends keep it clear in region keys.
 */
#define FAB_KEY_WIN (1ull << 63)

struct fab_win {
	uint64_t key; /* 0: a free slot */
	struct fab_mr *mr;
	struct fab_ep *ep; /* the one connection it is good on */
	uint64_t addr, len;
	unsigned int access; /* FAB_ACCESS_REMOTE_READ / _WRITE */
	bool long_lived;     /* FAB_SCOPE_LONG */
	uint32_t next_free;  /* free slots: the next free slot + 1 */
};

struct fab_wintab {
	struct fab_win *w;
	uint32_t n;
	uint32_t free; /* first free slot + 1 (0: none) */
	uint64_t rng;  /* the salts' generator (0: not seeded yet) */
};

/* A nonzero 32-bit salt from a generator seeded once from getrandom. */
uint32_t fab_salt(uint64_t *rng);
int fab_win_add(struct fab_wintab *t, struct fab_ep *ep, struct fab_mr *mr, uint64_t addr,
		uint64_t len, unsigned int access, uint64_t *key_out);
struct fab_win *fab_win_lookup(struct fab_wintab *t, uint64_t key);
void fab_win_free(struct fab_wintab *t, struct fab_win *w);
/* Free every window of ep (if not NULL) and every window on mr (if not NULL). */
void fab_win_drop(struct fab_wintab *t, const struct fab_ep *ep, const struct fab_mr *mr);
void fab_wintab_fini(struct fab_wintab *t);

/*
 * A backend. Every slot may be NULL; the core then answers -ENOTSUP, so
 * callers never test for NULL. Arguments are validated by the core
 * (lengths against msg_size, local sges inside their region, remote offsets
 * inside the rkey) before a post_* slot is called.
 */
struct fab_ops {
	const char *name;
	/*
	 * Only when asked for by name, never by ms_type=auto: UCX over TCP is
	 * slower than the TCP backend, and auto means "verbs if a device is
	 * usable, else tcp" (DESIGN.md).
	 */
	bool explicit_only;
	/* 0 if this backend can run here with attr; -errno (and one log line) if not. */
	int (*probe)(const struct fab_domain_attr *attr);
	int (*domain_open)(const struct fab_domain_attr *attr, struct fab_domain **dom_out);
	void (*domain_close)(struct fab_domain *dom);
	int (*progress)(struct fab_domain *dom, unsigned int budget);
	int (*flush)(struct fab_domain *dom); /* optional: NULL when posts go out at once */
	int (*wait)(struct fab_domain *dom, int timeout_ms);
	int (*domain_fd)(const struct fab_domain *dom);

	int (*mr_reg)(struct fab_domain *dom, void *addr, size_t len, unsigned int access,
		      struct fab_mr **mr_out);
	void (*mr_dereg)(struct fab_mr *mr);
	/*
	 * Scoped keys (fabric.h); both NULL where the backend cannot scope (a
	 * domain whose device cannot sets rkeys_unscoped).
	 */
	int (*rkey_scope)(struct fab_ep *ep, struct fab_mr *mr, uint64_t addr, uint64_t len,
			  unsigned int access, uint64_t *key_out);
	void (*rkey_revoke)(struct fab_domain *dom, uint64_t key);

	int (*listen)(struct fab_domain *dom, const char *addr, void *ctx,
		      struct fab_listener **listener_out);
	void (*listener_close)(struct fab_listener *l);
	int (*ep_connect)(struct fab_domain *dom, const char *addr, const char *local_addr,
			  void *ctx, struct fab_ep **ep_out);
	void (*ep_close)(struct fab_ep *ep);

	int (*post_send)(struct fab_ep *ep, const void *buf, size_t len, void *ctx);
	int (*post_write)(struct fab_ep *ep, const struct fab_sge *src, uint64_t raddr,
			  uint64_t rkey, bool with_imm, uint32_t imm, void *ctx);
	int (*post_read)(struct fab_ep *ep, const struct fab_sge *dst, uint64_t raddr,
			 uint64_t rkey, void *ctx);
	/* Fill the live parts of the stats (credits, sq_inflight). */
	void (*ep_stats)(const struct fab_ep *ep, struct fab_ep_stats *stats);
	/* Give back the receive resource behind a RECV or WRITE_IMM completion. */
	void (*recv_release)(const struct fab_cqe *cqe);
};

/* Backends, in preference order for ms_type=auto (fabric.c). */
extern const struct fab_ops fab_tcp_ops;
#ifdef WEFT_HAVE_VERBS
extern const struct fab_ops fab_verbs_ops;
#endif
#ifdef WEFT_HAVE_UCX
extern const struct fab_ops fab_ucx_ops;
#endif

/* Queue a completion. -ENOMEM only if the ring cannot grow. */
int fab_cq_push(struct fab_domain *dom, const struct fab_cqe *cqe);
bool fab_cq_empty(const struct fab_domain *dom);
/*
 * Before an endpoint is freed: completions still queued for it lose their
 * ep pointer, and queued RECV/WRITE_IMM completions are released through
 * the backend and dropped (nobody can consume them any more).
 */
void fab_cq_forget_ep(struct fab_domain *dom, struct fab_ep *ep);
/* Before a listener is freed: queued ACCEPTED completions lose their listener pointer. */
void fab_cq_forget_listener(struct fab_domain *dom, struct fab_listener *l);
int fab_cq_init(struct fab_cq *cq);
void fab_cq_fini(struct fab_cq *cq);

/* Parse "ip:port" / "[v6]:port" into a sockaddr; -EINVAL with a log line if bad. */
struct sockaddr_storage;
int fab_addr_parse(const char *addr, bool port_required, struct sockaddr_storage *ss_out,
		   unsigned int *len_out);
void fab_addr_format(const void *sa, char *buf, size_t len);

#define fab_log_err(dom, fmt, ...) log_error("fab", "%s: " fmt, (dom)->name, ##__VA_ARGS__)
#define fab_log_warn(dom, fmt, ...) log_warn("fab", "%s: " fmt, (dom)->name, ##__VA_ARGS__)
#define fab_log_info(dom, fmt, ...) log_info("fab", "%s: " fmt, (dom)->name, ##__VA_ARGS__)
#define fab_log_debug(dom, fmt, ...) log_debug("fab", "%s: " fmt, (dom)->name, ##__VA_ARGS__)

#endif
