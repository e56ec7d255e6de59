/* SPDX-License-Identifier: Apache-2.0 */
/* UCX backend: domain (context + worker), regions, listeners, progress, ops table. */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/clock.h"
#include "fabric/ucx/ucx.h"

int ucx_status_errno(ucs_status_t st)
{
	switch (st) {
	case UCS_OK:
		return 0;
	case UCS_ERR_NO_MEMORY:
		return -ENOMEM;
	case UCS_ERR_INVALID_PARAM:
		return -EINVAL;
	case UCS_ERR_UNREACHABLE:
	case UCS_ERR_REJECTED:
		return -ECONNREFUSED;
	case UCS_ERR_CONNECTION_RESET:
		return -ECONNRESET;
	case UCS_ERR_NOT_CONNECTED:
		return -ENOTCONN;
	case UCS_ERR_ENDPOINT_TIMEOUT:
	case UCS_ERR_TIMED_OUT:
		return -ETIMEDOUT;
	case UCS_ERR_CANCELED:
		return -ECANCELED;
	case UCS_ERR_BUSY:
		return -EBUSY;
	case UCS_ERR_UNSUPPORTED:
		return -ENOTSUP;
	case UCS_ERR_NO_DEVICE:
	case UCS_ERR_NO_ELEM:
		return -ENODEV;
	case UCS_ERR_BUFFER_TOO_SMALL:
	case UCS_ERR_EXCEEDS_LIMIT:
		return -EMSGSIZE;
	case UCS_ERR_ALREADY_EXISTS:
		return -EADDRINUSE;
	default:
		return -EIO;
	}
}

/* ------------------------------------------------------ queues and caches */

void ucx_op_enqueue(struct ucx_op_queue *q, struct ucx_op *op)
{
	op->next = NULL;
	if (q->tail)
		q->tail->next = op;
	else
		q->head = op;
	q->tail = op;
	q->count++;
}

struct ucx_op *ucx_op_dequeue(struct ucx_op_queue *q)
{
	struct ucx_op *op = q->head;

	if (!op)
		return NULL;
	q->head = op->next;
	if (!q->head)
		q->tail = NULL;
	q->count--;
	op->next = NULL;
	return op;
}

struct ucx_op *ucx_op_alloc(struct ucx_domain *ud)
{
	struct ucx_op *op = ud->op_free;
	struct ucx_op *all_next;

	if (op) {
		ud->op_free = op->next;
		all_next = op->all_next;
	} else {
		op = malloc(sizeof(*op));
		if (!op)
			return NULL;
		all_next = ud->op_all;
		ud->op_all = op;
	}
	memset(op, 0, sizeof(*op));
	op->all_next = all_next;
	return op;
}

/* Back to the free list; UCX must hold no request on it any more. */
void ucx_op_put(struct ucx_domain *ud, struct ucx_op *op)
{
	if (op->msgbuf) {
		if (ud->nmsg_free == ud->msg_free_cap) {
			uint32_t ncap = ud->msg_free_cap ? ud->msg_free_cap * 2 : 64;
			void **n = realloc(ud->msg_free, ncap * sizeof(*n));

			if (n) {
				ud->msg_free = n;
				ud->msg_free_cap = ncap;
			}
		}
		if (ud->nmsg_free < ud->msg_free_cap)
			ud->msg_free[ud->nmsg_free++] = op->msgbuf;
		else
			free(op->msgbuf);
		op->msgbuf = NULL;
	}
	op->next = ud->op_free;
	ud->op_free = op;
}

/* A message copy: big enough for a message or for a control payload (rkey, address). */
void *ucx_msgbuf_alloc(struct ucx_domain *ud)
{
	if (ud->nmsg_free > 0)
		return ud->msg_free[--ud->nmsg_free];
	return malloc((size_t)ud->base.attr.msg_size + UCX_CTRL_MAX);
}

/* ---------------------------------------------------------------- regions */

struct ucx_mr *ucx_mr_lookup(struct ucx_domain *ud, uint64_t key)
{
	uint32_t idx = (uint32_t)key;
	struct ucx_mr *mr;

	if (idx >= ud->nmrs)
		return NULL;
	mr = ud->mrs[idx];
	return (mr && mr->base.key == key) ? mr : NULL;
}

static int ucx_mr_slot(struct ucx_domain *ud, uint32_t *idx_out)
{
	uint32_t idx;

	for (idx = 0; idx < ud->nmrs; idx++)
		if (!ud->mrs[idx])
			break;
	if (idx == ud->nmrs) {
		if (ud->nmrs == ud->mrs_cap) {
			uint32_t ncap = ud->mrs_cap ? ud->mrs_cap * 2 : 16;
			struct ucx_mr **n = realloc(ud->mrs, ncap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			ud->mrs = n;
			ud->mrs_cap = ncap;
		}
		ud->mrs[ud->nmrs++] = NULL;
	}
	*idx_out = idx;
	return 0;
}

static int ucx_mr_reg(struct fab_domain *dom, void *addr, size_t len, unsigned int access,
		      struct fab_mr **mr_out)
{
	struct ucx_domain *ud = ucx_dom(dom);
	ucp_mem_map_params_t mp = { 0 };
	struct ucx_mr *mr;
	ucs_status_t st;
	uint32_t idx, salt;
	int rc;

	rc = ucx_mr_slot(ud, &idx);
	if (rc)
		return rc;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
			UCP_MEM_MAP_PARAM_FIELD_PROT;
	mp.address = addr;
	mp.length = len;
	mp.prot = UCP_MEM_MAP_PROT_LOCAL_READ | UCP_MEM_MAP_PROT_LOCAL_WRITE;
	if (access & FAB_ACCESS_REMOTE_READ)
		mp.prot |= UCP_MEM_MAP_PROT_REMOTE_READ;
	if (access & FAB_ACCESS_REMOTE_WRITE)
		mp.prot |= UCP_MEM_MAP_PROT_REMOTE_WRITE;
	st = ucp_mem_map(ud->ctx, &mp, &mr->memh);
	if (st != UCS_OK) {
		fab_log_err(dom, "mr_reg %p+%zu: ucp_mem_map: %s", addr, len,
			    ucs_status_string(st));
		rc = ucx_status_errno(st);
		goto err_free;
	}
	if (access) {
		st = ucp_rkey_pack(ud->ctx, mr->memh, &mr->rkey_buf, &mr->rkey_len);
		if (st != UCS_OK) {
			fab_log_err(dom, "mr_reg %p+%zu: ucp_rkey_pack: %s", addr, len,
				    ucs_status_string(st));
			rc = ucx_status_errno(st);
			goto err_unmap;
		}
		if (mr->rkey_len > UCX_CTRL_MAX) {
			fab_log_err(dom, "mr_reg: packed rkey of %zu bytes is too large",
				    mr->rkey_len);
			rc = -EMSGSIZE;
			goto err_release;
		}
	}
	/* Random high half: a stale key never names the region that reuses its slot. */
	if (getrandom(&salt, sizeof(salt), 0) != sizeof(salt))
		salt = (uint32_t)clock_now_ns();
	salt = (salt | 1) & ~(uint32_t)(FAB_KEY_WIN >> 32); /* bit 63: scoped keys */
	mr->base.dom = dom;
	mr->base.addr = addr;
	mr->base.len = len;
	mr->base.access = access;
	mr->base.key = ((uint64_t)salt << 32) | idx;
	ud->mrs[idx] = mr;
	*mr_out = &mr->base;
	return 0;
err_release:
	ucp_rkey_buffer_release(mr->rkey_buf);
err_unmap:
	ucp_mem_unmap(ud->ctx, mr->memh);
err_free:
	free(mr);
	return rc;
}

static void ucx_mr_free(struct ucx_domain *ud, struct ucx_mr *mr)
{
	if (mr->rkey_buf)
		ucp_rkey_buffer_release(mr->rkey_buf);
	ucp_mem_unmap(ud->ctx, mr->memh);
	free(mr);
}

/*
 * Peers that may hold the key get a REVOKE, and we progress a little so it
 * leaves before the memory is unmapped; local ops using the region are
 * cancelled (see docs/ucx.md for what this cannot guarantee).
 */
static void ucx_mr_dereg(struct fab_mr *fmr)
{
	struct ucx_domain *ud = ucx_dom(fmr->dom);
	struct ucx_mr *mr = (struct ucx_mr *)fmr;
	uint32_t idx = (uint32_t)fmr->key;
	uint64_t until;

	if (idx < ud->nmrs && ud->mrs[idx] == mr)
		ud->mrs[idx] = NULL;
	fab_win_drop(&ud->wins, NULL, fmr);
	for (struct ucx_ep *ep = ud->eps; ep; ep = ep->next) {
		if (fmr->access && ep->state == UCX_EP_CONNECTED) {
			struct ucx_hdr h = { .type = UCX_M_REVOKE, .a = fmr->key };

			if (ucx_ep_queue_ctrl(ep, &h, NULL, 0) == 0)
				ucx_ep_pump(ep);
		}
		ucx_ep_revoke_local(ep, fmr);
	}
	/* Bounded: a peer that does not read is not waited for (docs/ucx.md). */
	until = clock_now_ms() + UCX_REVOKE_WAIT_MS;
	while (ud->revokes_inflight && clock_now_ms() < until)
		ucp_worker_progress(ud->worker);
	ucx_mr_free(ud, mr);
}

/* -------------------------------------------------------------- listeners */

/*
 * UCX's socket connection manager (tcp_sockcm, UCX 1.13) names the device of
 * every connection by an exact match of the socket's local IP against the
 * interface addresses (ucs_sockaddr_get_ifname). An IP that is routable but
 * assigned to no interface, such as 127.1.0.1 (lo holds 127.0.0.1/8), makes
 * a listener that accepts at the kernel and then drops every connection
 * before any callback, and a connect from such a local address that never
 * starts. Say so once, up front, instead of a silent -ECONNREFUSED later.
 * The wildcard is allowed (the dialled address then decides, per connection).
 */
int ucx_addr_check(struct fab_domain *dom, const char *what, const char *addr,
		   const struct sockaddr_storage *ss)
{
	struct ifaddrs *ifs;
	bool found = false;

	if (ss->ss_family == AF_INET &&
	    ((const struct sockaddr_in *)ss)->sin_addr.s_addr == htonl(INADDR_ANY))
		return 0;
	if (ss->ss_family == AF_INET6 &&
	    IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->sin6_addr))
		return 0;
	if (getifaddrs(&ifs) != 0)
		return 0; /* cannot tell: let UCX decide */
	for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != ss->ss_family)
			continue;
		if (ss->ss_family == AF_INET)
			found = ((const struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr ==
				((const struct sockaddr_in *)ss)->sin_addr.s_addr;
		else
			found = !memcmp(&((const struct sockaddr_in6 *)i->ifa_addr)->sin6_addr,
					&((const struct sockaddr_in6 *)ss)->sin6_addr,
					sizeof(struct in6_addr));
	}
	freeifaddrs(ifs);
	if (found)
		return 0;
	fab_log_err(dom,
		    "%s %s: the IP is on no network interface; UCX's connection manager "
		    "only works with interface addresses (docs/ucx.md)",
		    what, addr);
	return -EADDRNOTAVAIL;
}

static void ucx_conn_cb(ucp_conn_request_h req, void *arg)
{
	struct ucx_listener *l = arg;
	struct ucx_conn_req *cr = malloc(sizeof(*cr));

	if (!cr) {
		ucp_listener_reject(l->ul, req);
		return;
	}
	cr->l = l;
	cr->req = req;
	cr->next = l->ud->conn_reqs;
	l->ud->conn_reqs = cr;
}

static int ucx_listen(struct fab_domain *dom, const char *addr, void *ctx,
		      struct fab_listener **listener_out)
{
	struct ucx_domain *ud = ucx_dom(dom);
	ucp_listener_params_t lp = { 0 };
	ucp_listener_attr_t la = { 0 };
	struct sockaddr_storage ss;
	struct ucx_listener *l;
	unsigned int slen;
	ucs_status_t st;
	int rc;

	rc = fab_addr_parse(addr, true, &ss, &slen);
	if (rc)
		return rc;
	rc = ucx_addr_check(dom, "listen", addr, &ss);
	if (rc)
		return rc;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->ud = ud;
	l->base.dom = dom;
	l->base.ctx = ctx;
	lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
	lp.sockaddr.addr = (const struct sockaddr *)&ss;
	lp.sockaddr.addrlen = slen;
	lp.conn_handler.cb = ucx_conn_cb;
	lp.conn_handler.arg = l;
	st = ucp_listener_create(ud->worker, &lp, &l->ul);
	if (st != UCS_OK) {
		fab_log_err(dom, "listen %s: ucp_listener_create: %s", addr,
			    ucs_status_string(st));
		free(l);
		return ucx_status_errno(st);
	}
	la.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
	if (ucp_listener_query(l->ul, &la) == UCS_OK)
		l->base.port = ntohs(la.sockaddr.ss_family == AF_INET
					     ? ((struct sockaddr_in *)&la.sockaddr)->sin_port
					     : ((struct sockaddr_in6 *)&la.sockaddr)->sin6_port);
	l->next = ud->listeners;
	ud->listeners = l;
	*listener_out = &l->base;
	return 0;
}

static void ucx_listener_close(struct fab_listener *fl)
{
	struct ucx_listener *l = (struct ucx_listener *)fl;
	struct ucx_domain *ud = l->ud;
	struct ucx_conn_req **pp = &ud->conn_reqs;

	/* Requests not yet turned into endpoints are refused. */
	while (*pp) {
		struct ucx_conn_req *cr = *pp;

		if (cr->l == l) {
			*pp = cr->next;
			ucp_listener_reject(l->ul, cr->req);
			free(cr);
		} else {
			pp = &cr->next;
		}
	}
	for (struct ucx_ep *ep = ud->eps; ep; ep = ep->next) {
		if (ep->from == l) {
			ep->from = NULL;
			if (ep->state == UCX_EP_CONNECTING) {
				ep->zombie = true;
				ucx_ep_fail(ep, -ECONNABORTED, NULL);
			}
		}
	}
	for (struct ucx_listener **lp = &ud->listeners; *lp; lp = &(*lp)->next) {
		if (*lp == l) {
			*lp = l->next;
			break;
		}
	}
	ucp_listener_destroy(l->ul);
	free(l);
}

/* ----------------------------------------------------------------- domain */

static int ucx_config_set(struct fab_domain *dom, ucp_config_t *cfg, const char *name,
			  const char *value)
{
	char env[64];
	ucs_status_t st;

	/* The operator's UCX_* environment wins over our defaults. */
	snprintf(env, sizeof(env), "UCX_%s", name);
	if (getenv(env))
		return 0;
	st = ucp_config_modify(cfg, name, value);
	if (st != UCS_OK) {
		fab_log_warn(dom, "ucx config %s=%s: %s", name, value, ucs_status_string(st));
		return ucx_status_errno(st);
	}
	return 0;
}

/* Arm UCX's fd, or raise ours if work is left: the domain fd must not sleep through it. */
static void ucx_rearm(struct ucx_domain *ud)
{
	uint64_t one = 1;
	ucs_status_t st = UCS_ERR_BUSY;

	if (!ud->rx_count && !ud->dirty && !ud->conn_reqs && !ud->nfailing)
		st = ucp_worker_arm(ud->worker);
	if (st != UCS_OK && write(ud->evfd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		fab_log_warn(&ud->base, "eventfd: %s", strerror(errno));
}

/*
 * fab_domain_fd is ours, not UCX's: an epoll set over UCX's event fd (which
 * fires only while armed) and an eventfd raised when progress leaves work
 * behind (budget spent, UCX busy at arm time), so the fd is readable
 * whenever fab_progress has something to do.
 */
static int ucx_domain_fds(struct ucx_domain *ud)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int rc;

	ud->epfd = epoll_create1(EPOLL_CLOEXEC);
	ud->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ud->epfd < 0 || ud->evfd < 0)
		goto err;
	ev.data.fd = ud->efd;
	if (epoll_ctl(ud->epfd, EPOLL_CTL_ADD, ud->efd, &ev) < 0)
		goto err;
	ev.data.fd = ud->evfd;
	if (epoll_ctl(ud->epfd, EPOLL_CTL_ADD, ud->evfd, &ev) < 0)
		goto err;
	return 0;
err:
	rc = -errno;
	log_error("fab", "ucx: event fds: %s", strerror(errno));
	if (ud->epfd >= 0)
		close(ud->epfd);
	if (ud->evfd >= 0)
		close(ud->evfd);
	return rc;
}

static int ucx_domain_open(const struct fab_domain_attr *attr, struct fab_domain **dom_out)
{
	struct ucx_domain *ud = calloc(1, sizeof(*ud));
	ucp_am_handler_param_t ap = { 0 };
	ucp_worker_params_t wp = { 0 };
	ucp_params_t pp = { 0 };
	ucp_config_t *cfg;
	ucs_status_t st;
	char ka[32];
	int rc;

	if (!ud)
		return -ENOMEM;
	ud->base.attr = *attr;
	snprintf(ud->base.name, sizeof(ud->base.name), "%s/ucx", attr->name ? attr->name : "fab");
	rc = fab_cq_init(&ud->base.cq);
	if (rc)
		goto err_free;
	/*
	 * Daemons listen on fixed ports and restart: without SO_REUSEADDR a
	 * listener cannot bind while a connection it accepted lingers in
	 * TIME_WAIT (a minute), which every TCP server allows. A component
	 * (uct) option that UCX 1.13 takes only from the environment
	 * (ucp_config_modify calls it invalid); setenv never overrides the
	 * operator's value. Domains open before the threads that use them.
	 */
	setenv("UCX_TCP_CM_REUSEADDR", "y", 0);
	st = ucp_config_read(NULL, NULL, &cfg);
	if (st != UCS_OK) {
		log_error("fab", "ucx: ucp_config_read: %s", ucs_status_string(st));
		rc = ucx_status_errno(st);
		goto err_cq;
	}
	/*
	 * A peer host that vanishes sends no RST: UCX's keepalive turns silence
	 * into an endpoint error within ~peer_timeout. (UCX 1.13 refuses
	 * TCP_KEEPIDLE/KEEPINTVL through ucp_config_modify; set them in the
	 * environment if needed, docs/ucx.md.)
	 */
	snprintf(ka, sizeof(ka), "%ums", attr->peer_timeout_ms / 3 ? attr->peer_timeout_ms / 3 : 1);
	ucx_config_set(&ud->base, cfg, "KEEPALIVE_INTERVAL", ka);
	pp.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
	pp.features = UCP_FEATURE_RMA | UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
	pp.name = "weft";
	st = ucp_init(&pp, cfg, &ud->ctx);
	ucp_config_release(cfg);
	if (st != UCS_OK) {
		log_error("fab", "ucx: ucp_init: %s", ucs_status_string(st));
		rc = ucx_status_errno(st);
		goto err_cq;
	}
	wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
	wp.thread_mode = UCS_THREAD_MODE_SINGLE;
	st = ucp_worker_create(ud->ctx, &wp, &ud->worker);
	if (st != UCS_OK) {
		log_error("fab", "ucx: ucp_worker_create: %s", ucs_status_string(st));
		rc = ucx_status_errno(st);
		goto err_cleanup;
	}
	st = ucp_worker_get_efd(ud->worker, &ud->efd);
	if (st != UCS_OK) {
		log_error("fab", "ucx: ucp_worker_get_efd: %s", ucs_status_string(st));
		rc = ucx_status_errno(st);
		goto err_worker;
	}
	ap.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
			UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
	ap.id = UCX_AM_ID;
	ap.flags = UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA;
	ap.cb = ucx_am_recv_cb;
	ap.arg = ud;
	st = ucp_worker_set_am_recv_handler(ud->worker, &ap);
	if (st != UCS_OK) {
		log_error("fab", "ucx: ucp_worker_set_am_recv_handler: %s", ucs_status_string(st));
		rc = ucx_status_errno(st);
		goto err_worker;
	}
	rc = ucx_domain_fds(ud);
	if (rc)
		goto err_worker;
	ucx_rearm(ud);
	*dom_out = &ud->base;
	return 0;
err_worker:
	ucp_worker_destroy(ud->worker);
err_cleanup:
	ucp_cleanup(ud->ctx);
err_cq:
	fab_cq_fini(&ud->base.cq);
err_free:
	free(ud);
	return rc;
}

/* Endpoints that are gone for good and hold nothing any more. */
static void ucx_reap(struct ucx_domain *ud)
{
	struct ucx_ep *ep = ud->eps;

	while (ep) {
		struct ucx_ep *next = ep->next;

		if (ep->state == UCX_EP_FAILED && ep->refs == 0 &&
		    (ep->zombie || (ep->user_closed && !ep->slots_held && !ep->imm_held)))
			ucx_ep_destroy(ep);
		ep = next;
	}
}

static void ucx_domain_close(struct fab_domain *dom)
{
	struct ucx_domain *ud = ucx_dom(dom);
	uint64_t until;

	while (ud->listeners)
		ucx_listener_close(&ud->listeners->base);
	dom->cq.count = 0;
	for (struct ucx_ep *ep = ud->eps; ep; ep = ep->next) {
		ep->user_closed = true;
		ep->slots_held = ep->imm_held = 0;
		if (ep->state != UCX_EP_FAILED)
			ucx_ep_fail(ep, -ECANCELED, NULL);
	}
	/* UCX hands back every request (cancelled) before its endpoints close. */
	until = clock_now_ms() + UCX_CLOSE_WAIT_MS;
	while (clock_now_ms() < until) {
		bool busy = false;

		ucp_worker_progress(ud->worker);
		for (struct ucx_ep *ep = ud->eps; ep && !busy; ep = ep->next)
			busy = ep->refs > 0;
		if (!busy)
			break;
	}
	while (ud->eps) {
		if (ud->eps->refs)
			fab_log_warn(dom, "endpoint to %s: %u UCX requests never came back",
				     ud->eps->base.peer_addr, ud->eps->refs);
		ud->eps->refs = 0;
		ucx_ep_destroy(ud->eps);
	}
	for (uint32_t i = 0; i < ud->nmrs; i++)
		if (ud->mrs[i])
			ucx_mr_free(ud, ud->mrs[i]);
	free(ud->mrs);
	fab_wintab_fini(&ud->wins);
	free(ud->ep_ids);
	ucx_rx_drop_all(ud);
	ucp_worker_destroy(ud->worker);
	ucp_cleanup(ud->ctx);
	close(ud->epfd);
	close(ud->evfd);
	while (ud->op_all) {
		struct ucx_op *op = ud->op_all;

		ud->op_all = op->all_next;
		if (op->msgbuf)
			free(op->msgbuf);
		free(op);
	}
	for (uint32_t i = 0; i < ud->nmsg_free; i++)
		free(ud->msg_free[i]);
	free(ud->msg_free);
	fab_cq_fini(&dom->cq);
	free(ud);
}

static int ucx_progress(struct fab_domain *dom, unsigned int budget)
{
	struct ucx_domain *ud = ucx_dom(dom);
	unsigned int handled = 0, limit = budget ? budget : UINT32_MAX;
	uint64_t junk;

	if (read(ud->evfd, &junk, sizeof(junk)) < 0 && errno != EAGAIN)
		fab_log_warn(dom, "eventfd: %s", strerror(errno));
	/* Handlers only queue, so draining UCX is cheap; the budget applies below. */
	while (ud->rx_count < 65536 && ucp_worker_progress(ud->worker) > 0)
		;
	while (ud->conn_reqs && handled < limit) {
		struct ucx_conn_req *cr = ud->conn_reqs;

		ud->conn_reqs = cr->next;
		ucx_ep_accept(ud, cr);
		free(cr);
		handled++;
	}
	/* Incoming first (revocations, credits), then what leaves, then what finished. */
	if (handled < limit)
		handled += ucx_rx_handle(ud, limit - handled);
	/* Failures after what arrived before them (messages, a BYE saying why). */
	if (ud->nfailing && !ud->rx_count) {
		ud->nfailing = 0;
		for (struct ucx_ep *ep = ud->eps; ep; ep = ep->next) {
			if (ep->state == UCX_EP_FAILED || !ep->fail_rc)
				continue;
			ucx_ep_fail(ep, ep->fail_rc, ep->fail_why);
			handled++;
		}
	}
	for (struct ucx_ep *ep = ud->eps; ep; ep = ep->next)
		if (ep->state != UCX_EP_FAILED)
			ucx_ep_pump(ep);
	ucp_worker_progress(ud->worker);
	if (ud->dirty && handled < limit) {
		ud->dirty = false;
		for (struct ucx_ep *ep = ud->eps; ep; ep = ep->next)
			handled += ucx_ep_complete_ready(ep, limit > handled ? limit - handled : 0);
		/* Completions can free credits or lift a barrier: go again. */
		for (struct ucx_ep *ep = ud->eps; ep; ep = ep->next)
			if (ep->state != UCX_EP_FAILED)
				ucx_ep_pump(ep);
	}
	if (ud->nconnecting) {
		uint64_t now = clock_now_ns();

		for (struct ucx_ep *ep = ud->eps; ep; ep = ep->next)
			ucx_ep_check_deadline(ep, now);
	}
	ucx_reap(ud);
	ucx_rearm(ud);
	return (int)handled;
}

static int ucx_wait(struct fab_domain *dom, int timeout_ms)
{
	struct ucx_domain *ud = ucx_dom(dom);
	struct pollfd pfd = { .fd = ud->epfd, .events = POLLIN };
	uint64_t until;
	int rc;

	until = clock_now_ns() + (uint64_t)dom->attr.busy_poll_us * 1000u;
	while (dom->attr.busy_poll_us) {
		rc = ucx_progress(dom, 0);
		if (rc != 0 || !fab_cq_empty(dom))
			return rc < 0 ? rc : 0;
		if (clock_now_ns() >= until)
			break;
	}
	/* Posts and releases since the last progress: no fd says so (they set dirty). */
	if (ud->dirty || ud->rx_count)
		return 0;
	/* Every progress call left UCX armed or our eventfd raised. */
	if (ud->nconnecting && (timeout_ms < 0 || timeout_ms > 10))
		timeout_ms = 10;
	rc = poll(&pfd, 1, timeout_ms);
	if (rc < 0 && errno != EINTR)
		return -errno;
	return 0;
}

static int ucx_domain_fd(const struct fab_domain *dom)
{
	return ((const struct ucx_domain *)dom)->epfd;
}

static void ucx_ep_stats(const struct fab_ep *fep, struct fab_ep_stats *st)
{
	const struct ucx_ep *ep = (const struct ucx_ep *)fep;

	st->credits = ep->tx_credits;
	st->sq_inflight = ep->user_ops;
}

/* ------------------------------------------------------------ scoped keys */

/*
 * A scoped key is a window in the domain's table (fab_win.c). A peer learns
 * what it reaches only from us, in the answer to its RKEY_REQ on its own
 * connection (ucx_am.c): the key's range and right, refused anywhere else,
 * after the revoke and once the connection is gone, and "for one use"
 * unless FAB_SCOPE_LONG, so the peer asks again before its next op and a
 * revoked key meets our refusal, not its cache. What the transport itself
 * enforces is UCX's: the region's packed rkey goes with the answer, and the
 * tcp and shared-memory transports write wherever a put names
 * (docs/ucx.md "Scoped keys").
 */
static int ucx_rkey_scope(struct fab_ep *fep, struct fab_mr *mr, uint64_t addr, uint64_t len,
			  unsigned int access, uint64_t *key_out)
{
	return fab_win_add(&ucx_dom(fep->dom)->wins, fep, mr, addr, len, access, key_out);
}

static void ucx_rkey_revoke(struct fab_domain *dom, uint64_t key)
{
	struct ucx_domain *ud = ucx_dom(dom);
	struct fab_win *w = fab_win_lookup(&ud->wins, key);
	struct ucx_ep *ep;

	if (w == NULL)
		return;
	ep = ucx_ep_of(w->ep);
	/* a connection-long key may sit in the peer's cache: tell it */
	if (w->long_lived && ep->state == UCX_EP_CONNECTED) {
		struct ucx_hdr h = {.type = UCX_M_REVOKE, .a = key};

		if (ucx_ep_queue_ctrl(ep, &h, NULL, 0) == 0)
			ucx_ep_pump(ep);
	}
	fab_win_free(&ud->wins, w);
}

const struct fab_ops fab_ucx_ops = {
	.name = "ucx",
	.explicit_only = true, /* see fab_ops: auto never picks UCX */
	.probe = NULL, /* domain_open is the probe: it fails cleanly without transports */
	.domain_open = ucx_domain_open,
	.domain_close = ucx_domain_close,
	.progress = ucx_progress,
	.wait = ucx_wait,
	.domain_fd = ucx_domain_fd,
	.mr_reg = ucx_mr_reg,
	.mr_dereg = ucx_mr_dereg,
	.rkey_scope = ucx_rkey_scope,
	.rkey_revoke = ucx_rkey_revoke,
	.listen = ucx_listen,
	.listener_close = ucx_listener_close,
	.ep_connect = ucx_ep_connect,
	.ep_close = ucx_ep_close,
	.post_send = ucx_post_send,
	.post_write = ucx_post_write,
	.post_read = ucx_post_read,
	.ep_stats = ucx_ep_stats,
	.recv_release = ucx_recv_release,
};
