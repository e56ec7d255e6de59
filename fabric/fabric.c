/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fabric core: the backend registry, argument checks shared by every
 * backend, and dispatch through the ops table.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/conf.h"
#include "weft/weft.h"
#include "fabric/fab_backend.h"

/*
 * Preference order for ms_type=auto: the RDMA backends that were built
 * (minus those marked explicit_only), then TCP, which is always there so
 * auto falls back to it.
 */
static const struct fab_ops *const fab_registry[] = {
#ifdef WEFT_HAVE_VERBS
	&fab_verbs_ops,
#endif
#ifdef WEFT_HAVE_UCX
	&fab_ucx_ops,
#endif
	&fab_tcp_ops,
};
#define FAB_NBACKENDS (sizeof(fab_registry) / sizeof(fab_registry[0]))

const char *const *fab_backend_names(void)
{
	static const char *names[FAB_NBACKENDS + 1];

	for (size_t i = 0; i < FAB_NBACKENDS; i++)
		names[i] = fab_registry[i]->name;
	names[FAB_NBACKENDS] = NULL;
	return names;
}

void fab_domain_attr_init(struct fab_domain_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->backend = "auto";
	attr->msg_size = 8192;
	attr->recv_credits = 64;
	attr->sq_depth = 256;
	attr->busy_poll_us = 50;
	attr->peer_timeout_ms = 10000;
	attr->connect_timeout_ms = 5000;
	attr->rdma_port = 1;
	attr->rdma_gid_index = -1;
}

static uint32_t fab_us_to_ms(uint64_t us)
{
	uint64_t ms = (us + 999) / 1000;

	return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

void fab_domain_attr_from_conf(struct fab_domain_attr *attr, const struct conf *conf)
{
	const char *dev;

	fab_domain_attr_init(attr);
	attr->backend = conf_get_str(conf, CONF_MS_TYPE);
	attr->name = conf_entity(conf);
	attr->msg_size = (uint32_t)conf_get_size(conf, CONF_MS_MSG_SIZE);
	attr->recv_credits = (uint32_t)conf_get_int(conf, CONF_MS_RECV_CREDITS);
	attr->sq_depth = (uint32_t)conf_get_int(conf, CONF_MS_SQ_DEPTH);
	attr->busy_poll_us = (uint32_t)conf_get_duration_us(conf, CONF_MS_BUSY_POLL);
	attr->peer_timeout_ms = fab_us_to_ms(conf_get_duration_us(conf, CONF_MS_PEER_TIMEOUT));
	attr->connect_timeout_ms =
		fab_us_to_ms(conf_get_duration_us(conf, CONF_MS_CONNECT_TIMEOUT));
	dev = conf_get_str(conf, CONF_RDMA_DEVICE);
	attr->rdma_device = (dev && dev[0]) ? dev : NULL;
	attr->rdma_port = (int)conf_get_int(conf, CONF_RDMA_PORT);
	attr->rdma_gid_index = (int)conf_get_int(conf, CONF_RDMA_GID_INDEX);
}

/* Attributes come from conf (already range-checked) or from code: check again. */
static int fab_attr_check(const struct fab_domain_attr *attr)
{
	if (attr->msg_size < 64 || attr->msg_size > (1u << 24)) {
		log_error("fab", "msg_size %u out of range [64, 16M]", attr->msg_size);
		return -EINVAL;
	}
	if (attr->recv_credits < 2 || attr->recv_credits > 65535) {
		log_error("fab", "recv_credits %u out of range [2, 65535]", attr->recv_credits);
		return -EINVAL;
	}
	if (attr->sq_depth < 1 || attr->sq_depth > (1u << 20)) {
		log_error("fab", "sq_depth %u out of range [1, 1M]", attr->sq_depth);
		return -EINVAL;
	}
	return 0;
}

int fab_domain_open(const struct fab_domain_attr *attr_in, struct fab_domain **dom_out)
{
	struct fab_domain_attr attr;
	const char *want;
	int rc;

	if (attr_in)
		attr = *attr_in;
	else
		fab_domain_attr_init(&attr);
	rc = fab_attr_check(&attr);
	if (rc)
		return rc;
	want = (attr.backend && attr.backend[0]) ? attr.backend : "auto";

	for (size_t i = 0; i < FAB_NBACKENDS; i++) {
		const struct fab_ops *ops = fab_registry[i];
		struct fab_domain *dom;
		bool is_auto = !strcmp(want, "auto");

		if (!is_auto && strcmp(want, ops->name))
			continue;
		if (is_auto && ops->explicit_only)
			continue;
		if (ops->probe) {
			rc = ops->probe(&attr);
			if (rc) {
				if (is_auto)
					continue;
				return rc; /* the probe logged why */
			}
		}
		if (!ops->domain_open)
			return -ENOTSUP;
		rc = ops->domain_open(&attr, &dom);
		if (rc) {
			if (is_auto)
				continue;
			return rc;
		}
		dom->ops = ops;
		dom->attr = attr;
		dom->attr.backend = ops->name;
		dom->attr.name = NULL; /* the caller's string may not outlive us */
		snprintf(dom->name, sizeof(dom->name), "%s/%s", attr.name ? attr.name : "fab",
			 ops->name);
		*dom_out = dom;
		return 0;
	}
	if (strcmp(want, "auto")) {
		bool known = !strcmp(want, "verbs") || !strcmp(want, "ucx") || !strcmp(want, "tcp");

		log_error("fab", "backend '%s' %s", want,
			  known ? "is not built in this binary (see WEFT_WITH_VERBS/WEFT_WITH_UCX)"
				: "is unknown (use auto, tcp, ucx or verbs)");
		return known ? -ENOTSUP : -EINVAL;
	}
	log_error("fab", "no usable fabric backend");
	return -WEFT_E_NOBACKEND;
}

void fab_domain_close(struct fab_domain *dom)
{
	if (!dom)
		return;
	dom->ops->domain_close(dom);
}

const char *fab_domain_backend(const struct fab_domain *dom)
{
	return dom->ops->name;
}

uint32_t fab_domain_msg_size(const struct fab_domain *dom)
{
	return dom->attr.msg_size;
}

uint64_t fab_domain_registered_bytes(const struct fab_domain *dom)
{
	return dom->reg_bytes;
}

int fab_progress(struct fab_domain *dom, unsigned int budget)
{
	return dom->ops->progress ? dom->ops->progress(dom, budget) : -ENOTSUP;
}

int fab_flush(struct fab_domain *dom)
{
	return dom->ops->flush ? dom->ops->flush(dom) : 0;
}

int fab_wait(struct fab_domain *dom, int timeout_ms)
{
	if (!fab_cq_empty(dom))
		return 0;
	return dom->ops->wait ? dom->ops->wait(dom, timeout_ms) : -ENOTSUP;
}

int fab_domain_fd(const struct fab_domain *dom)
{
	return dom->ops->domain_fd ? dom->ops->domain_fd(dom) : -ENOTSUP;
}

/* ---------------------------------------------------------------- regions */

int fab_mr_reg(struct fab_domain *dom, void *addr, size_t len, unsigned int access,
	       struct fab_mr **mr_out)
{
	int rc;

	if (!addr || len == 0 || (uintptr_t)addr + len < (uintptr_t)addr) {
		fab_log_err(dom, "mr_reg: bad range %p+%zu", addr, len);
		return -EINVAL;
	}
	if (access & ~(FAB_ACCESS_REMOTE_READ | FAB_ACCESS_REMOTE_WRITE | FAB_ACCESS_SCOPED)) {
		fab_log_err(dom, "mr_reg: unknown access bits 0x%x", access);
		return -EINVAL;
	}
	if (!fab_domain_scoped_rkeys(dom))
		access &= ~FAB_ACCESS_SCOPED; /* no scoping here: its REMOTE_* bits apply as ever */
	rc = dom->ops->mr_reg ? dom->ops->mr_reg(dom, addr, len, access, mr_out) : -ENOTSUP;
	if (rc == 0)
		dom->reg_bytes += len;
	return rc;
}

void fab_mr_dereg(struct fab_mr *mr)
{
	if (mr && mr->dom->ops->mr_dereg) {
		mr->dom->reg_bytes -= mr->len;
		mr->dom->ops->mr_dereg(mr);
	}
}

bool fab_domain_scoped_rkeys(const struct fab_domain *dom)
{
	return dom->ops->rkey_scope != NULL && !dom->rkeys_unscoped;
}

int fab_rkey_scope(struct fab_ep *ep, struct fab_mr *mr, const void *addr, size_t len,
		   unsigned int access, struct fab_rkey *rkey_out)
{
	struct fab_domain *dom = mr->dom;
	uint64_t a = (uint64_t)(uintptr_t)addr, base = (uint64_t)(uintptr_t)mr->addr, key;
	int rc;

	if (ep->dom != dom || a < base || a - base > mr->len || len > mr->len - (a - base) ||
	    len == 0 || (access & ~FAB_SCOPE_LONG) == 0 ||
	    (access & ~(FAB_ACCESS_REMOTE_READ | FAB_ACCESS_REMOTE_WRITE | FAB_SCOPE_LONG)) ||
	    (access & ~FAB_SCOPE_LONG & ~mr->access)) {
		fab_log_err(dom, "rkey_scope: bad range %p+%zu or access 0x%x for region %p+%zu "
				 "(access 0x%x)",
			    addr, len, access, mr->addr, mr->len, mr->access);
		return -EINVAL;
	}
	if (!fab_domain_scoped_rkeys(dom)) {
		key = mr->key; /* no scoping here: the region's key, documented */
	} else {
		rc = dom->ops->rkey_scope(ep, mr, a, len, access, &key);
		if (rc != 0)
			return rc;
	}
	*rkey_out = (struct fab_rkey){a, len, key};
	return 0;
}

void fab_rkey_revoke(struct fab_domain *dom, const struct fab_rkey *rkey)
{
	if (dom->ops->rkey_revoke != NULL && !dom->rkeys_unscoped && rkey->len != 0)
		dom->ops->rkey_revoke(dom, rkey->key);
}

void fab_mr_rkey(const struct fab_mr *mr, struct fab_rkey *rkey_out)
{
	rkey_out->addr = (uint64_t)(uintptr_t)mr->addr;
	rkey_out->len = mr->len;
	rkey_out->key = mr->key;
}

void *fab_mr_addr(const struct fab_mr *mr)
{
	return mr->addr;
}

size_t fab_mr_len(const struct fab_mr *mr)
{
	return mr->len;
}

/* -------------------------------------------------------------- endpoints */

int fab_listen(struct fab_domain *dom, const char *addr, void *ctx,
	       struct fab_listener **listener_out)
{
	if (!addr)
		return -EINVAL;
	return dom->ops->listen ? dom->ops->listen(dom, addr, ctx, listener_out) : -ENOTSUP;
}

uint16_t fab_listener_port(const struct fab_listener *l)
{
	return l->port;
}

void fab_listener_close(struct fab_listener *l)
{
	if (l && l->dom->ops->listener_close)
		l->dom->ops->listener_close(l);
}

int fab_connect(struct fab_domain *dom, const char *addr, const char *local_addr, void *ctx,
		struct fab_ep **ep_out)
{
	if (!addr)
		return -EINVAL;
	return dom->ops->ep_connect ? dom->ops->ep_connect(dom, addr, local_addr, ctx, ep_out)
				    : -ENOTSUP;
}

void fab_ep_close(struct fab_ep *ep)
{
	if (ep && ep->dom->ops->ep_close)
		ep->dom->ops->ep_close(ep);
}

void fab_ep_set_ctx(struct fab_ep *ep, void *ctx)
{
	ep->ctx = ctx;
}

void *fab_ep_ctx(const struct fab_ep *ep)
{
	return ep->ctx;
}

bool fab_ep_is_connected(const struct fab_ep *ep)
{
	return ep->connected;
}

const char *fab_ep_peer_addr(const struct fab_ep *ep)
{
	return ep->peer_addr;
}

const char *fab_ep_local_addr(const struct fab_ep *ep)
{
	return ep->local_addr;
}

void fab_ep_stats(const struct fab_ep *ep, struct fab_ep_stats *stats_out)
{
	*stats_out = ep->stats;
	if (ep->dom->ops->ep_stats)
		ep->dom->ops->ep_stats(ep, stats_out);
}

/* ------------------------------------------------------------- operations */

/* The local piece must lie inside its registered region. */
static int fab_sge_check(struct fab_ep *ep, const struct fab_sge *sge, const char *op)
{
	uintptr_t a, base;

	if (!sge || !sge->mr || !sge->addr) {
		fab_log_err(ep->dom, "%s to %s: local buffer is not registered", op, ep->peer_addr);
		return -EINVAL;
	}
	a = (uintptr_t)sge->addr;
	base = (uintptr_t)sge->mr->addr;
	if (a < base || a - base > sge->mr->len || sge->len > sge->mr->len - (a - base)) {
		fab_log_err(ep->dom, "%s to %s: local buffer %p+%u outside its region %p+%zu", op,
			    ep->peer_addr, sge->addr, sge->len, sge->mr->addr, sge->mr->len);
		return -ERANGE;
	}
	return 0;
}

/* The remote piece must lie inside the descriptor the peer gave us. */
static int fab_remote_check(struct fab_ep *ep, const struct fab_rkey *rk, uint64_t off,
			    uint32_t len, const char *op, uint64_t *raddr_out)
{
	if (!rk) {
		fab_log_err(ep->dom, "%s to %s: no remote key", op, ep->peer_addr);
		return -EINVAL;
	}
	if (off > rk->len || len > rk->len - off || rk->addr + off < rk->addr) {
		fab_log_err(ep->dom, "%s to %s: remote offset %lu+%u outside region of %lu bytes",
			    op, ep->peer_addr, (unsigned long)off, len, (unsigned long)rk->len);
		return -ERANGE;
	}
	*raddr_out = rk->addr + off;
	return 0;
}

int fab_send(struct fab_ep *ep, const void *buf, size_t len, void *ctx)
{
	if (!buf && len) {
		fab_log_err(ep->dom, "send to %s: no buffer for %zu bytes", ep->peer_addr, len);
		return -EINVAL;
	}
	if (len > ep->dom->attr.msg_size) {
		fab_log_err(ep->dom, "send to %s: %zu bytes exceeds ms_msg_size %u", ep->peer_addr,
			    len, ep->dom->attr.msg_size);
		return -EMSGSIZE;
	}
	return ep->dom->ops->post_send ? ep->dom->ops->post_send(ep, buf, len, ctx) : -ENOTSUP;
}

static int fab_post_write(struct fab_ep *ep, const struct fab_sge *src, const struct fab_rkey *dst,
			  uint64_t dst_offset, bool with_imm, uint32_t imm, void *ctx)
{
	uint64_t raddr;
	int rc;

	rc = fab_sge_check(ep, src, "write");
	if (rc)
		return rc;
	rc = fab_remote_check(ep, dst, dst_offset, src->len, "write", &raddr);
	if (rc)
		return rc;
	if (!ep->dom->ops->post_write)
		return -ENOTSUP;
	return ep->dom->ops->post_write(ep, src, raddr, dst->key, with_imm, imm, ctx);
}

int fab_write(struct fab_ep *ep, const struct fab_sge *src, const struct fab_rkey *dst,
	      uint64_t dst_offset, void *ctx)
{
	return fab_post_write(ep, src, dst, dst_offset, false, 0, ctx);
}

int fab_write_imm(struct fab_ep *ep, const struct fab_sge *src, const struct fab_rkey *dst,
		  uint64_t dst_offset, uint32_t imm, void *ctx)
{
	return fab_post_write(ep, src, dst, dst_offset, true, imm, ctx);
}

int fab_read(struct fab_ep *ep, const struct fab_sge *dst, const struct fab_rkey *src,
	     uint64_t src_offset, void *ctx)
{
	uint64_t raddr;
	int rc;

	rc = fab_sge_check(ep, dst, "read");
	if (rc)
		return rc;
	rc = fab_remote_check(ep, src, src_offset, dst->len, "read", &raddr);
	if (rc)
		return rc;
	if (!ep->dom->ops->post_read)
		return -ENOTSUP;
	return ep->dom->ops->post_read(ep, dst, raddr, src->key, ctx);
}

void fab_recv_release(const struct fab_cqe *cqe)
{
	/*
	 * The endpoint outlives the receive buffers it lent out, even after
	 * fab_ep_close(), so cqe->ep is still valid here.
	 */
	if (cqe->kind != FAB_EV_RECV || !cqe->ep)
		return;
	if (cqe->ep->dom->ops->recv_release)
		cqe->ep->dom->ops->recv_release(cqe);
}

const char *fab_ev_name(enum fab_ev_kind kind)
{
	switch (kind) {
	case FAB_EV_SEND:
		return "send";
	case FAB_EV_WRITE:
		return "write";
	case FAB_EV_READ:
		return "read";
	case FAB_EV_RECV:
		return "recv";
	case FAB_EV_WRITE_IMM:
		return "write_imm";
	case FAB_EV_CONNECTED:
		return "connected";
	case FAB_EV_ACCEPTED:
		return "accepted";
	case FAB_EV_PEER_FAILED:
		return "peer_failed";
	}
	return "unknown";
}

/* -------------------------------------------------------------- addresses */

int fab_addr_parse(const char *addr, bool port_required, struct sockaddr_storage *ss_out,
		   unsigned int *len_out)
{
	char host[64];
	const char *port_s = NULL;
	char *end;
	unsigned long port = 0;
	size_t hlen;

	memset(ss_out, 0, sizeof(*ss_out));
	if (addr[0] == '[') {
		const char *rb = strchr(addr, ']');

		if (!rb)
			goto bad;
		hlen = (size_t)(rb - addr - 1);
		if (hlen >= sizeof(host))
			goto bad;
		memcpy(host, addr + 1, hlen);
		host[hlen] = '\0';
		if (rb[1] == ':')
			port_s = rb + 2;
		else if (rb[1] != '\0')
			goto bad;
	} else {
		const char *colon = strrchr(addr, ':');

		hlen = colon ? (size_t)(colon - addr) : strlen(addr);
		if (hlen >= sizeof(host))
			goto bad;
		memcpy(host, addr, hlen);
		host[hlen] = '\0';
		if (colon)
			port_s = colon + 1;
	}
	if (port_s) {
		errno = 0;
		port = strtoul(port_s, &end, 10);
		if (errno || end == port_s || *end || port > 65535)
			goto bad;
	} else if (port_required) {
		goto bad;
	}

	struct sockaddr_in *sin = (struct sockaddr_in *)ss_out;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss_out;

	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)port);
		*len_out = sizeof(*sin);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)port);
		*len_out = sizeof(*sin6);
		return 0;
	}
bad:
	log_error("fab", "bad address '%s': expected ip:port or [ipv6]:port", addr);
	return -EINVAL;
}

void fab_addr_format(const void *sa_v, char *buf, size_t len)
{
	const struct sockaddr *sa = sa_v;
	char ip[INET6_ADDRSTRLEN];

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *sin = sa_v;

		inet_ntop(AF_INET, &sin->sin_addr, ip, sizeof(ip));
		snprintf(buf, len, "%s:%u", ip, ntohs(sin->sin_port));
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *sin6 = sa_v;

		inet_ntop(AF_INET6, &sin6->sin6_addr, ip, sizeof(ip));
		snprintf(buf, len, "[%s]:%u", ip, ntohs(sin6->sin6_port));
	} else {
		snprintf(buf, len, "?");
	}
}
