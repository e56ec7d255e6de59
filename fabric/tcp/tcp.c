/* SPDX-License-Identifier: Apache-2.0 */
/* TCP backend: domain, regions, listeners, progress and the ops table. */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/le.h"
#include "fabric/tcp/tcp.h"

#define TCP_EPOLL_BATCH 64

/* epoll data for the wake eventfd (endpoints and listeners point at their own kind). */
static enum tcp_pollable_kind tcp_wake_kind = TCP_POLL_WAKE;

/* ------------------------------------------------------------ wire header */

void tcp_hdr_encode(const struct tcp_hdr *h, uint8_t *out)
{
	out[0] = h->type;
	out[1] = h->flags;
	le_put16(out + 2, h->credits);
	le_put32(out + 4, h->len);
	le_put32(out + 8, (uint32_t)h->status);
	le_put32(out + 12, h->imm);
	le_put64(out + 16, h->id);
	le_put64(out + 24, h->addr);
	le_put64(out + 32, h->key);
}

void tcp_hdr_decode(const uint8_t *in, struct tcp_hdr *h)
{
	h->type = in[0];
	h->flags = in[1];
	h->credits = le_get16(in + 2);
	h->len = le_get32(in + 4);
	h->status = (int32_t)le_get32(in + 8);
	h->imm = le_get32(in + 12);
	h->id = le_get64(in + 16);
	h->addr = le_get64(in + 24);
	h->key = le_get64(in + 32);
}

/* ------------------------------------------------------ queues and caches */

void tcp_op_enqueue(struct tcp_op_queue *q, struct tcp_op *op)
{
	op->next = NULL;
	if (q->tail)
		q->tail->next = op;
	else
		q->head = op;
	q->tail = op;
	q->count++;
}

struct tcp_op *tcp_op_dequeue(struct tcp_op_queue *q)
{
	struct tcp_op *op = q->head;

	if (!op)
		return NULL;
	q->head = op->next;
	if (!q->head)
		q->tail = NULL;
	q->count--;
	op->next = NULL;
	return op;
}

struct tcp_op *tcp_op_alloc(struct tcp_domain *td)
{
	struct tcp_op *op = td->op_free;

	if (op)
		td->op_free = op->next;
	else
		op = malloc(sizeof(*op));
	if (op)
		memset(op, 0, sizeof(*op));
	return op;
}

void tcp_op_free(struct tcp_domain *td, struct tcp_op *op)
{
	if (op->msgbuf) {
		tcp_msgbuf_free(td, op->msgbuf);
		op->msgbuf = NULL;
	}
	op->next = td->op_free;
	td->op_free = op;
}

void *tcp_msgbuf_alloc(struct tcp_domain *td)
{
	if (td->nmsg_free > 0)
		return td->msg_free[--td->nmsg_free];
	return malloc(td->base.attr.msg_size ? td->base.attr.msg_size : 1);
}

void tcp_msgbuf_free(struct tcp_domain *td, void *buf)
{
	if (td->nmsg_free == td->msg_free_cap) {
		uint32_t ncap = td->msg_free_cap ? td->msg_free_cap * 2 : 64;
		void **n = realloc(td->msg_free, ncap * sizeof(*n));

		if (!n) {
			free(buf);
			return;
		}
		td->msg_free = n;
		td->msg_free_cap = ncap;
	}
	td->msg_free[td->nmsg_free++] = buf;
}

/* Endpoints with frames to write: flushed once per progress call, so posts batch. */
void tcp_txlist_add(struct tcp_ep *ep)
{
	if (ep->on_txlist)
		return;
	ep->on_txlist = true;
	ep->tx_next = ep->tdom->txlist;
	ep->tdom->txlist = ep;
}

/* Endpoints whose staged receive bytes were not all parsed (epoll won't say so). */
void tcp_ready_add(struct tcp_ep *ep)
{
	struct tcp_domain *td = ep->tdom;
	uint64_t one = 1;

	if (ep->on_ready)
		return;
	/* Keep fab_domain_fd() readable while staged frames wait. */
	if (!td->ready && write(td->wakefd, &one, sizeof(one)) < 0)
		fab_log_err(&td->base, "eventfd write: %s", strerror(errno));
	ep->on_ready = true;
	ep->ready_next = td->ready;
	td->ready = ep;
}

static void tcp_ready_clear(struct tcp_domain *td)
{
	uint64_t v;

	if (read(td->wakefd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		fab_log_err(&td->base, "eventfd read: %s", strerror(errno));
}

/*
 * Whether the head of the send queue can go as soon as the socket takes it.
 * A message waiting for credits the peer has not returned (or for the
 * peer's hello) cannot: asking for EPOLLOUT then would wake the reactor on
 * every round while the socket is writable, a spin for as long as a slow
 * or malicious peer withholds its credits. Returned credits and the hello
 * put the endpoint on the txlist (tcp_rx.c, tcp_ep_on_hello), which
 * flushes it without EPOLLOUT.
 */
static bool tcp_ep_tx_can_go(const struct tcp_ep *ep)
{
	const struct tcp_op *op = ep->txq.head;

	if (op == NULL)
		return false;
	if (op->encoded || op->h.type == TCP_F_HELLO)
		return true; /* partly written, or the hello: it goes */
	if (ep->state != TCP_EP_CONNECTED)
		return false; /* behind the peer's hello */
	/* the rest needs no credit; owed credits slip in front of a stalled frame */
	if (op->h.type != TCP_F_MSG && op->h.type != TCP_F_WRITE_IMM)
		return true;
	return ep->tx_credits > 0 || ep->rx_owed > 0;
}

void tcp_epoll_update(struct tcp_ep *ep)
{
	bool want = ep->state == TCP_EP_CONNECTING || tcp_ep_tx_can_go(ep);
	struct epoll_event ev = {0};

	if (ep->fd < 0 || want == ep->want_out)
		return;
	ev.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0);
	ev.data.ptr = &ep->pkind;
	if (epoll_ctl(ep->tdom->epfd, EPOLL_CTL_MOD, ep->fd, &ev) == 0)
		ep->want_out = want;
}

#define TCP_LISTEN_PAUSE_NS (100ull * 1000 * 1000)
#define TCP_LISTEN_LOG_NS   (10ull * 1000 * 1000 * 1000)

void tcp_listener_pause(struct tcp_listener *l, int err)
{
	struct tcp_domain *td = tcp_dom(l->base.dom);
	struct epoll_event ev = {.events = 0, .data.ptr = &l->pkind};
	uint64_t now = clock_now_ns();

	if (l->paused_until_ns == 0 && epoll_ctl(td->epfd, EPOLL_CTL_MOD, l->fd, &ev) == 0)
		td->nlisten_paused++;
	l->paused_until_ns = now + TCP_LISTEN_PAUSE_NS;
	if (l->log_ns != 0 && now - l->log_ns < TCP_LISTEN_LOG_NS) {
		l->quiet++;
		return;
	}
	fab_log_warn(&td->base,
		     "accept on port %u: %s: not accepting for 100 ms (raise the process's file "
		     "limit, or lower ms_max_conns; %llu more such pauses since the last line)",
		     l->base.port, strerror(err), (unsigned long long)l->quiet);
	l->log_ns = now;
	l->quiet = 0;
}

/* Paused listeners whose pause is over go back into the poll set. */
static void tcp_listeners_resume(struct tcp_domain *td)
{
	uint64_t now = clock_now_ns();

	for (struct tcp_listener *l = td->listeners; l; l = l->next) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &l->pkind};

		if (l->paused_until_ns == 0 || now < l->paused_until_ns)
			continue;
		if (epoll_ctl(td->epfd, EPOLL_CTL_MOD, l->fd, &ev) != 0)
			continue; /* tried again next round */
		l->paused_until_ns = 0;
		td->nlisten_paused--;
	}
}

/* ---------------------------------------------------------------- regions */

struct fab_mr *tcp_mr_lookup(struct tcp_domain *td, uint64_t key)
{
	uint32_t idx = (uint32_t)key;
	struct fab_mr *mr;

	if (idx >= td->nmrs)
		return NULL;
	mr = td->mrs[idx];
	return (mr && mr->key == key) ? mr : NULL;
}

static int tcp_mr_reg(struct fab_domain *dom, void *addr, size_t len, unsigned int access,
		      struct fab_mr **mr_out)
{
	struct tcp_domain *td = tcp_dom(dom);
	struct fab_mr *mr;
	uint32_t idx, salt;

	for (idx = 0; idx < td->nmrs; idx++)
		if (!td->mrs[idx])
			break;
	if (idx == td->nmrs) {
		if (td->nmrs == td->mrs_cap) {
			uint32_t ncap = td->mrs_cap ? td->mrs_cap * 2 : 16;
			struct fab_mr **n = realloc(td->mrs, ncap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			td->mrs = n;
			td->mrs_cap = ncap;
		}
		td->nmrs++;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	/*
	 * The high half is random so a key is not guessable from the slot and a
	 * stale key never names the region that reuses its slot.
	 */
	if (getrandom(&salt, sizeof(salt), 0) != sizeof(salt))
		salt = (uint32_t)clock_now_ns();
	salt = (salt | 1) & ~(uint32_t)(FAB_KEY_WIN >> 32);
	mr->dom = dom;
	mr->addr = addr;
	mr->len = len;
	mr->access = access;
	mr->key = ((uint64_t)salt << 32) | idx;
	td->mrs[idx] = mr;
	*mr_out = mr;
	return 0;
}

static void tcp_mr_dereg(struct fab_mr *mr)
{
	struct tcp_domain *td = tcp_dom(mr->dom);
	uint32_t idx = (uint32_t)mr->key;

	for (struct tcp_ep *ep = td->eps; ep; ep = ep->next)
		tcp_ep_revoke_mr(ep, mr);
	fab_win_drop(&td->wins, NULL, mr);
	if (idx < td->nmrs && td->mrs[idx] == mr)
		td->mrs[idx] = NULL;
	free(mr);
}

/* ----------------------------------------------------------- scoped keys */

/* A window in the domain's table (fab_win.c), checked by tcp_rx on every access. */
static int tcp_rkey_scope(struct fab_ep *fep, struct fab_mr *mr, uint64_t addr, uint64_t len,
			  unsigned int access, uint64_t *key_out)
{
	return fab_win_add(&tcp_dom(fep->dom)->wins, fep, mr, addr, len, access, key_out);
}

static void tcp_rkey_revoke(struct fab_domain *dom, uint64_t key)
{
	struct tcp_domain *td = tcp_dom(dom);
	struct fab_win *w = fab_win_lookup(&td->wins, key);

	if (w != NULL)
		fab_win_free(&td->wins, w);
}

/* -------------------------------------------------------------- listeners */

static int tcp_listen(struct fab_domain *dom, const char *addr, void *ctx,
		      struct fab_listener **listener_out)
{
	struct tcp_domain *td = tcp_dom(dom);
	struct sockaddr_storage ss;
	struct epoll_event ev = {0};
	struct tcp_listener *l;
	unsigned int slen;
	int one = 1, rc;

	rc = fab_addr_parse(addr, true, &ss, &slen);
	if (rc)
		return rc;
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->pkind = TCP_POLL_LISTENER;
	l->base.dom = dom;
	l->base.ctx = ctx;
	l->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0) {
		rc = -errno;
		fab_log_err(dom, "listen %s: socket: %s", addr, strerror(errno));
		goto err_free;
	}
	setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(l->fd, (struct sockaddr *)&ss, slen) < 0) {
		rc = -errno;
		/* a port in use is the caller's to report: the OSD tries the next one */
		if (errno != EADDRINUSE)
			fab_log_err(dom, "listen %s: bind: %s", addr, strerror(errno));
		goto err_close;
	}
	if (listen(l->fd, 1024) < 0) {
		rc = -errno;
		fab_log_err(dom, "listen %s: %s", addr, strerror(errno));
		goto err_close;
	}
	slen = sizeof(ss);
	if (getsockname(l->fd, (struct sockaddr *)&ss, (socklen_t *)&slen) == 0)
		l->base.port =
		    ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
						  : ((struct sockaddr_in6 *)&ss)->sin6_port);
	ev.events = EPOLLIN;
	ev.data.ptr = &l->pkind;
	if (epoll_ctl(td->epfd, EPOLL_CTL_ADD, l->fd, &ev) < 0) {
		rc = -errno;
		fab_log_err(dom, "listen %s: epoll_ctl: %s", addr, strerror(errno));
		goto err_close;
	}
	l->next = td->listeners;
	td->listeners = l;
	*listener_out = &l->base;
	return 0;
err_close:
	close(l->fd);
err_free:
	free(l);
	return rc;
}

static void tcp_listener_close(struct fab_listener *fl)
{
	struct tcp_listener *l = (struct tcp_listener *)fl;
	struct tcp_domain *td = tcp_dom(fl->dom);

	/*
	 * Endpoints still in handshake from this listener are dropped silently
	 * (the user never saw them); established ones live on without it.
	 */
	for (struct tcp_ep *ep = td->eps; ep; ep = ep->next) {
		if (ep->from != l)
			continue;
		if (ep->state != TCP_EP_CONNECTED && ep->state != TCP_EP_FAILED)
			tcp_ep_fail(ep, -ECONNABORTED, "listener closed");
		ep->from = NULL;
	}
	fab_cq_forget_listener(fl->dom, fl);
	for (struct tcp_listener **pp = &td->listeners; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	if (l->paused_until_ns != 0)
		td->nlisten_paused--;
	epoll_ctl(td->epfd, EPOLL_CTL_DEL, l->fd, NULL);
	close(l->fd);
	free(l);
}

/* ----------------------------------------------------------------- domain */

static int tcp_domain_open(const struct fab_domain_attr *attr, struct fab_domain **dom_out)
{
	struct tcp_domain *td = calloc(1, sizeof(*td));
	struct epoll_event ev = {0};
	int rc;

	if (!td)
		return -ENOMEM;
	rc = fab_cq_init(&td->base.cq);
	if (rc)
		goto err_free;
	td->base.attr = *attr;
	td->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (td->epfd < 0) {
		rc = -errno;
		log_error("fab", "tcp: epoll_create1: %s", strerror(errno));
		goto err_cq;
	}
	td->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (td->wakefd < 0) {
		rc = -errno;
		log_error("fab", "tcp: eventfd: %s", strerror(errno));
		goto err_epoll;
	}
	ev.events = EPOLLIN;
	ev.data.ptr = &tcp_wake_kind;
	if (epoll_ctl(td->epfd, EPOLL_CTL_ADD, td->wakefd, &ev) < 0) {
		rc = -errno;
		log_error("fab", "tcp: epoll_ctl: %s", strerror(errno));
		goto err_wake;
	}
	*dom_out = &td->base;
	return 0;
err_wake:
	close(td->wakefd);
err_epoll:
	close(td->epfd);
err_cq:
	fab_cq_fini(&td->base.cq);
err_free:
	free(td);
	return rc;
}

static void tcp_domain_close(struct fab_domain *dom)
{
	struct tcp_domain *td = tcp_dom(dom);

	while (td->listeners)
		tcp_listener_close(&td->listeners->base);
	/*
	 * Completions nobody will poll, and receive buffers the user still
	 * holds, die with the domain.
	 */
	dom->cq.count = 0;
	while (td->eps) {
		td->eps->user_closed = true;
		tcp_ep_destroy(td->eps);
	}
	for (uint32_t i = 0; i < td->nmrs; i++)
		free(td->mrs[i]);
	free(td->mrs);
	fab_wintab_fini(&td->wins);
	while (td->op_free) {
		struct tcp_op *op = td->op_free;

		td->op_free = op->next;
		free(op);
	}
	for (uint32_t i = 0; i < td->nmsg_free; i++)
		free(td->msg_free[i]);
	free(td->msg_free);
	close(td->wakefd);
	close(td->epfd);
	fab_cq_fini(&dom->cq);
	free(td);
}

static void tcp_check_deadlines(struct tcp_domain *td)
{
	uint64_t now;

	if (td->nconnecting == 0)
		return;
	now = clock_now_ns();
	if (now < td->next_deadline_check)
		return;
	td->next_deadline_check = now + 10 * 1000 * 1000;
	for (struct tcp_ep *ep = td->eps; ep; ep = ep->next)
		tcp_ep_check_deadline(ep, now);
}

/* Free accepted endpoints that failed before the user ever saw them. */
static void tcp_reap_zombies(struct tcp_domain *td)
{
	struct tcp_ep *ep = td->eps;

	while (ep) {
		struct tcp_ep *next = ep->next;

		if (ep->zombie)
			tcp_ep_destroy(ep);
		ep = next;
	}
}

static int tcp_flush_all(struct tcp_domain *td)
{
	struct tcp_ep *list = td->txlist;
	int n = 0;

	td->txlist = NULL;
	while (list) {
		struct tcp_ep *ep = list;

		list = ep->tx_next;
		ep->on_txlist = false;
		if (ep->state == TCP_EP_CONNECTED || ep->state == TCP_EP_HANDSHAKE)
			n += tcp_ep_flush(ep) > 0;
	}
	return n;
}

static unsigned int tcp_rx_budget(unsigned int handled, unsigned int limit)
{
	unsigned int left = handled < limit ? limit - handled : 0;

	return left < TCP_EP_FRAME_BUDGET ? left : TCP_EP_FRAME_BUDGET;
}

static int tcp_progress(struct fab_domain *dom, unsigned int budget)
{
	struct tcp_domain *td = tcp_dom(dom);
	struct epoll_event evs[TCP_EPOLL_BATCH];
	unsigned int limit = budget ? budget : UINT32_MAX, handled = 0;
	struct tcp_ep *ready = td->ready;
	int nev;

	handled += (unsigned int)tcp_flush_all(td);

	/* Bytes already staged first: epoll cannot report them. */
	if (ready) {
		td->ready = NULL;
		tcp_ready_clear(td);
	}
	while (ready) {
		struct tcp_ep *ep = ready;

		ready = ep->ready_next;
		ep->on_ready = false;
		if (ep->state != TCP_EP_CONNECTED && ep->state != TCP_EP_HANDSHAKE)
			continue;
		if (handled < limit)
			handled += (unsigned int)tcp_ep_rx(ep, tcp_rx_budget(handled, limit));
		else
			tcp_ready_add(ep); /* over budget: next call */
	}

	nev = handled < limit ? epoll_wait(td->epfd, evs, TCP_EPOLL_BATCH, 0) : 0;
	if (nev < 0 && errno != EINTR) {
		fab_log_err(dom, "epoll_wait: %s", strerror(errno));
		return -errno;
	}
	/* Level-triggered: what is left over the budget is reported again next call. */
	for (int i = 0; i < nev && handled < limit; i++) {
		enum tcp_pollable_kind *k = evs[i].data.ptr;

		if (*k == TCP_POLL_WAKE)
			continue;
		if (*k == TCP_POLL_LISTENER) {
			struct tcp_listener *l =
			    (struct tcp_listener *)((char *)k -
						    offsetof(struct tcp_listener, pkind));

			handled += (unsigned int)tcp_ep_accept(l);
			continue;
		}
		struct tcp_ep *ep = (struct tcp_ep *)((char *)k - offsetof(struct tcp_ep, pkind));

		if (ep->state == TCP_EP_FAILED || ep->fd < 0)
			continue;
		if (evs[i].events & EPOLLOUT) {
			handled += (unsigned int)tcp_ep_on_out(ep);
			if (ep->state == TCP_EP_FAILED)
				continue;
		}
		if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			handled += (unsigned int)tcp_ep_rx(ep, tcp_rx_budget(handled, limit));
	}
	/* Answers queued while receiving (ACKs, read data, credits) go out now. */
	handled += (unsigned int)tcp_flush_all(td);
	/* write acks that waited long enough for a frame to ride on go alone */
	if (td->wacklist) {
		tcp_wacks_check(td, clock_now_ns());
		if (td->txlist)
			handled += (unsigned int)tcp_flush_all(td);
	}
	tcp_check_deadlines(td);
	tcp_reap_zombies(td);
	if (td->nlisten_paused)
		tcp_listeners_resume(td);
	return (int)handled;
}

static int tcp_flush(struct fab_domain *dom)
{
	tcp_flush_all(tcp_dom(dom));
	return 0;
}

static int tcp_wait(struct fab_domain *dom, int timeout_ms)
{
	struct tcp_domain *td = tcp_dom(dom);
	struct epoll_event ev;
	uint64_t until;
	int rc;

	if (td->ready || td->txlist)
		return 0;
	until = clock_now_ns() + (uint64_t)dom->attr.busy_poll_us * 1000u;
	while (dom->attr.busy_poll_us) {
		rc = tcp_progress(dom, 0);
		if (rc != 0 || !fab_cq_empty(dom))
			return rc < 0 ? rc : 0;
		if (clock_now_ns() >= until)
			break;
	}
	/* Wake up in time to enforce connect deadlines, and to send owed write acks. */
	if (td->nconnecting && (timeout_ms < 0 || timeout_ms > 10))
		timeout_ms = 10;
	/* a paused listener (out of descriptors) listens again after its pause */
	if (td->nlisten_paused && (timeout_ms < 0 || timeout_ms > 100))
		timeout_ms = 100;
	if (td->wacklist && (timeout_ms < 0 || timeout_ms > 1))
		timeout_ms = 1;
	rc = epoll_wait(td->epfd, &ev, 1, timeout_ms);
	if (rc < 0 && errno != EINTR)
		return -errno;
	return 0;
}

static void tcp_ep_stats(const struct fab_ep *fep, struct fab_ep_stats *st)
{
	const struct tcp_ep *ep = (const struct tcp_ep *)fep;

	st->credits = ep->tx_credits;
	st->sq_inflight = ep->user_ops;
}

static int tcp_domain_fd(const struct fab_domain *dom)
{
	return ((const struct tcp_domain *)dom)->epfd;
}

const struct fab_ops fab_tcp_ops = {
    .name = "tcp",
    .probe = NULL, /* sockets are always there */
    .domain_open = tcp_domain_open,
    .domain_close = tcp_domain_close,
    .progress = tcp_progress,
    .flush = tcp_flush,
    .wait = tcp_wait,
    .domain_fd = tcp_domain_fd,
    .mr_reg = tcp_mr_reg,
    .mr_dereg = tcp_mr_dereg,
    .rkey_scope = tcp_rkey_scope,
    .rkey_revoke = tcp_rkey_revoke,
    .listen = tcp_listen,
    .listener_close = tcp_listener_close,
    .ep_connect = tcp_ep_connect,
    .ep_close = tcp_ep_close,
    .post_send = tcp_post_send,
    .post_write = tcp_post_write,
    .post_read = tcp_post_read,
    .ep_stats = tcp_ep_stats,
    .recv_release = tcp_recv_release,
};
