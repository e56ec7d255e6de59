/* SPDX-License-Identifier: Apache-2.0 */
/* TCP backend: endpoint life cycle, posting and the send side. */
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "common/clock.h"
#include <unistd.h>

#include "common/clock.h"
#include "fabric/tcp/tcp.h"

#define TCP_IOV_MAX	 64
#define TCP_FLUSH_ROUNDS 16

static void tcp_sock_tune(struct tcp_domain *td, int fd)
{
	const struct fab_domain_attr *a = &td->base.attr;
	int one = 1;
	unsigned int ut = a->peer_timeout_ms;
	int idle = (int)(a->peer_timeout_ms / 3000u), intvl, cnt = 3;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	/*
	 * A peer host that vanishes sends no RST: keepalive plus a user timeout
	 * turn silence into a failure event within peer_timeout.
	 */
	if (idle < 1)
		idle = 1;
	intvl = idle / 3 > 0 ? idle / 3 : 1;
	setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
	setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ut, sizeof(ut));
}

/*
 * A socket closed with unread bytes sends a RST, which can destroy data the
 * peer has not read yet (our last message). Send FIN first and swallow what
 * already arrived; bounded, never blocks.
 */
static void tcp_sock_close_gently(int fd)
{
	char sink[4096];

	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 256; i++)
		if (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) <= 0)
			break;
}

static struct tcp_ep *tcp_ep_new(struct tcp_domain *td, int fd, enum tcp_ep_state state)
{
	const struct fab_domain_attr *a = &td->base.attr;
	struct tcp_ep *ep = calloc(1, sizeof(*ep));

	if (!ep)
		return NULL;
	ep->slots = calloc(a->recv_credits, sizeof(*ep->slots));
	ep->free_slots = calloc(a->recv_credits, sizeof(*ep->free_slots));
	ep->slot_mem = malloc((size_t)a->recv_credits * a->msg_size);
	ep->stage = malloc(TCP_STAGE_SIZE);
	if (!ep->slots || !ep->free_slots || !ep->slot_mem || !ep->stage) {
		free(ep->slots);
		free(ep->free_slots);
		free(ep->slot_mem);
		free(ep->stage);
		free(ep);
		return NULL;
	}
	for (uint32_t i = 0; i < a->recv_credits; i++) {
		ep->slots[i].ep = ep;
		ep->slots[i].buf = ep->slot_mem + (size_t)i * a->msg_size;
		ep->free_slots[i] = a->recv_credits - 1 - i;
	}
	ep->nfree = a->recv_credits;
	ep->pkind = TCP_POLL_EP;
	ep->tdom = td;
	ep->base.dom = &td->base;
	ep->fd = fd;
	ep->state = state;
	ep->log_budget = TCP_EP_LOG_LIMIT;
	ep->deadline_ns = clock_now_ns() + (uint64_t)a->connect_timeout_ms * 1000000u;
	td->nconnecting++;
	ep->next = td->eps;
	if (td->eps)
		td->eps->prev = ep;
	td->eps = ep;
	return ep;
}

static int tcp_ep_queue_hello(struct tcp_ep *ep)
{
	const struct fab_domain_attr *a = &ep->tdom->base.attr;
	struct tcp_op *op = tcp_op_alloc(ep->tdom);
	uint32_t v;

	if (!op)
		return -ENOMEM;
	op->kind = TCP_OP_CTRL;
	op->h.type = TCP_F_HELLO;
	op->h.flags = TCP_HELLO_F_WACKS; /* capabilities; a 0.1 peer sends 0 and ignores ours */
	op->h.len = TCP_HELLO_LEN;
	v = htole32(TCP_MAGIC);
	memcpy(op->inl, &v, 4);
	v = htole32(TCP_VERSION);
	memcpy(op->inl + 4, &v, 4);
	v = htole32(a->recv_credits);
	memcpy(op->inl + 8, &v, 4);
	v = htole32(a->msg_size);
	memcpy(op->inl + 12, &v, 4);
	v = htole32(a->sq_depth);
	memcpy(op->inl + 16, &v, 4);
	op->payload = op->inl;
	op->payload_len = TCP_HELLO_LEN;
	tcp_op_enqueue(&ep->txq, op);
	tcp_txlist_add(ep);
	return 0;
}

static int tcp_ep_poll_add(struct tcp_ep *ep)
{
	struct epoll_event ev = {0};

	ep->want_out = ep->state == TCP_EP_CONNECTING;
	ev.events = EPOLLIN | EPOLLRDHUP | (ep->want_out ? EPOLLOUT : 0);
	ev.data.ptr = &ep->pkind;
	if (epoll_ctl(ep->tdom->epfd, EPOLL_CTL_ADD, ep->fd, &ev) < 0)
		return -errno;
	return 0;
}

static void tcp_ep_names(struct tcp_ep *ep)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(ep->fd, (struct sockaddr *)&ss, &len) == 0)
		fab_addr_format(&ss, ep->base.local_addr, sizeof(ep->base.local_addr));
	len = sizeof(ss);
	if (getpeername(ep->fd, (struct sockaddr *)&ss, &len) == 0)
		fab_addr_format(&ss, ep->base.peer_addr, sizeof(ep->base.peer_addr));
}

/*
 * An outgoing connection bound to this node's cluster address takes an
 * ephemeral port on that address. Without these two options it holds the port
 * the way a bind() does: a daemon on the same address that starts later and
 * listens on that port fails with EADDRINUSE (seen in CI: an OSD could not
 * listen on its cluster port because another OSD's connection held it).
 * IP_BIND_ADDRESS_NO_PORT leaves the port to connect(), which skips ports
 * that listeners hold; SO_REUSEADDR lets a listener bind a port that only a
 * connected socket uses. Best effort: without them we are as before.
 */
static void tcp_ep_bind_shared(int fd)
{
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one));
}

int tcp_ep_connect(struct fab_domain *dom, const char *addr, const char *local_addr, void *ctx,
		   struct fab_ep **ep_out)
{
	struct tcp_domain *td = tcp_dom(dom);
	struct sockaddr_storage ss, ls;
	unsigned int slen, llen;
	struct tcp_ep *ep;
	int fd, rc;

	rc = fab_addr_parse(addr, true, &ss, &slen);
	if (rc)
		return rc;
	if (local_addr && local_addr[0]) {
		rc = fab_addr_parse(local_addr, false, &ls, &llen);
		if (rc)
			return rc;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		fab_log_err(dom, "connect %s: socket: %s", addr, strerror(errno));
		return rc;
	}
	tcp_sock_tune(td, fd);
	if (local_addr && local_addr[0])
		tcp_ep_bind_shared(fd);
	if (local_addr && local_addr[0] && bind(fd, (struct sockaddr *)&ls, llen) < 0) {
		rc = -errno;
		fab_log_err(dom, "connect %s: bind to %s: %s", addr, local_addr, strerror(errno));
		close(fd);
		return rc;
	}
	ep = tcp_ep_new(td, fd, TCP_EP_CONNECTING);
	if (!ep) {
		close(fd);
		return -ENOMEM;
	}
	ep->base.ctx = ctx;
	snprintf(ep->base.peer_addr, sizeof(ep->base.peer_addr), "%s", addr);
	rc = tcp_ep_queue_hello(ep);
	if (rc == 0)
		rc = tcp_ep_poll_add(ep);
	if (rc) {
		tcp_ep_destroy(ep);
		return rc;
	}
	/* Even an immediate refusal is reported as an event, like every other outcome. */
	if (connect(fd, (struct sockaddr *)&ss, slen) == 0) {
		ep->state = TCP_EP_HANDSHAKE;
		tcp_ep_names(ep);
		tcp_epoll_update(ep);
	} else if (errno != EINPROGRESS) {
		tcp_ep_fail(ep, -errno, "connect");
	}
	*ep_out = &ep->base;
	return 0;
}

int tcp_ep_accept(struct tcp_listener *l)
{
	struct tcp_domain *td = tcp_dom(l->base.dom);
	int n = 0;

	for (int i = 0; i < 64; i++) {
		struct tcp_ep *ep;
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				tcp_listener_pause(l, errno); /* else it spins: still readable */
			else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
				 errno != ECONNABORTED)
				fab_log_warn(&td->base, "accept on port %u: %s", l->base.port,
					     strerror(errno));
			break;
		}
		tcp_sock_tune(td, fd);
		ep = tcp_ep_new(td, fd, TCP_EP_HANDSHAKE);
		if (!ep) {
			close(fd);
			break;
		}
		ep->from = l;
		ep->accepted = true;
		ep->base.ctx = l->base.ctx;
		tcp_ep_names(ep);
		if (tcp_ep_queue_hello(ep) || tcp_ep_poll_add(ep)) {
			tcp_ep_destroy(ep);
			break;
		}
		n++;
	}
	return n;
}

/* Send the HELLO answer, report the endpoint, and release what waited for it. */
void tcp_ep_on_hello(struct tcp_ep *ep)
{
	struct tcp_domain *td = ep->tdom;
	uint32_t magic, version, credits, msg_size, sq_depth;
	struct fab_cqe cqe = {0};

	memcpy(&magic, ep->rx_small, 4);
	memcpy(&version, ep->rx_small + 4, 4);
	memcpy(&credits, ep->rx_small + 8, 4);
	memcpy(&msg_size, ep->rx_small + 12, 4);
	memcpy(&sq_depth, ep->rx_small + 16, 4);
	magic = le32toh(magic);
	version = le32toh(version);
	credits = le32toh(credits);
	msg_size = le32toh(msg_size);
	sq_depth = le32toh(sq_depth);
	if (magic != TCP_MAGIC || version != TCP_VERSION || credits < 1 || credits > 65535 ||
	    msg_size < 64 || sq_depth < 1 || sq_depth > (1u << 20)) {
		fab_log_warn(&td->base,
			     "peer %s: bad handshake (magic 0x%x version %u credits %u msg_size %u "
			     "sq_depth %u)",
			     ep->base.peer_addr, magic, version, credits, msg_size, sq_depth);
		tcp_ep_fail(ep, -EPROTO, NULL);
		return;
	}
	ep->peer_window = credits;
	ep->tx_credits = credits;
	ep->wacks = (ep->rh.flags & TCP_HELLO_F_WACKS) != 0;
	ep->peer_msg_size = msg_size;
	ep->peer_sq_depth = sq_depth;
	ep->state = TCP_EP_CONNECTED;
	ep->base.connected = true;
	td->nconnecting--;

	/* Messages queued before we knew the peer's limit and too big for it fail now. */
	struct tcp_op_queue keep = {0};
	struct tcp_op *op;

	while ((op = tcp_op_dequeue(&ep->txq))) {
		if (op->kind == TCP_OP_SEND && op->payload_len > msg_size && !op->encoded) {
			fab_log_err(&td->base,
				    "send to %s: %u bytes exceeds the peer's msg_size %u",
				    ep->base.peer_addr, op->payload_len, msg_size);
			tcp_ep_complete(ep, op, -EMSGSIZE);
		} else {
			tcp_op_enqueue(&keep, op);
		}
	}
	ep->txq = keep;

	cqe.ep = &ep->base;
	cqe.ctx = ep->base.ctx;
	if (ep->accepted) {
		cqe.kind = FAB_EV_ACCEPTED;
		cqe.listener = ep->from ? &ep->from->base : NULL;
	} else {
		cqe.kind = FAB_EV_CONNECTED;
	}
	fab_cq_push(&td->base, &cqe);
	if (ep->txq.head)
		tcp_txlist_add(ep);
}

void tcp_ep_complete(struct tcp_ep *ep, struct tcp_op *op, int status)
{
	struct fab_cqe cqe = {0};

	if (op->kind == TCP_OP_CTRL) {
		tcp_op_free(ep->tdom, op);
		return;
	}
	switch (op->kind) {
	case TCP_OP_SEND:
		cqe.kind = FAB_EV_SEND;
		cqe.len = op->payload_len;
		if (!status)
			ep->base.stats.sends++;
		break;
	case TCP_OP_WRITE:
		cqe.kind = FAB_EV_WRITE;
		cqe.len = op->payload_len;
		if (!status) {
			ep->base.stats.writes++;
			ep->base.stats.write_bytes += op->payload_len;
		}
		break;
	default:
		cqe.kind = FAB_EV_READ;
		cqe.len = op->h.imm;
		if (!status) {
			ep->base.stats.reads++;
			ep->base.stats.read_bytes += op->h.imm;
		}
		break;
	}
	cqe.status = status;
	cqe.ctx = op->ctx;
	cqe.ep = ep->user_closed ? NULL : &ep->base;
	ep->user_ops--;
	fab_cq_push(&ep->tdom->base, &cqe);
	tcp_op_free(ep->tdom, op);
}

static void tcp_ep_flush_ops(struct tcp_ep *ep, struct tcp_op_queue *q, int status)
{
	struct tcp_op *op;

	while ((op = tcp_op_dequeue(q)))
		tcp_ep_complete(ep, op, status);
}

/* Close the socket and complete everything posted, once. */
static void tcp_ep_teardown(struct tcp_ep *ep, int status)
{
	struct tcp_domain *td = ep->tdom;

	if (ep->state == TCP_EP_CONNECTING || ep->state == TCP_EP_HANDSHAKE)
		td->nconnecting--;
	ep->state = TCP_EP_FAILED;
	ep->base.connected = false;
	if (ep->fd >= 0) {
		epoll_ctl(td->epfd, EPOLL_CTL_DEL, ep->fd, NULL);
		if (status == -ECANCELED)
			tcp_sock_close_gently(ep->fd);
		close(ep->fd);
		ep->fd = -1;
	}
	tcp_ep_flush_ops(ep, &ep->txq, status);
	tcp_ep_flush_ops(ep, &ep->waitq, status);
	ep->answers_queued = 0;
	ep->rx = TCP_RX_HDR;
	ep->rx_have = 0;
	ep->stage_pos = ep->stage_len = 0;
	ep->rx_op = NULL;
	ep->rx_mr = NULL;
}

void tcp_ep_fail(struct tcp_ep *ep, int status, const char *why)
{
	enum tcp_ep_state was = ep->state;
	struct fab_cqe cqe = {0};

	if (was == TCP_EP_FAILED)
		return;
	if (why)
		fab_log_warn(&ep->tdom->base, "%s %s: %s: %s",
			     was == TCP_EP_CONNECTED ? "peer"
			     : ep->accepted	     ? "handshake with"
						     : "connecting to",
			     ep->base.peer_addr, why, strerror(-status));
	tcp_ep_teardown(ep, status);
	if (ep->user_closed)
		return;
	if (was != TCP_EP_CONNECTED && ep->accepted) {
		/* Accepted but never reported: nobody else will free it. */
		ep->zombie = true;
		return;
	}
	cqe.kind = was == TCP_EP_CONNECTED ? FAB_EV_PEER_FAILED : FAB_EV_CONNECTED;
	cqe.status = status;
	cqe.ep = &ep->base;
	cqe.ctx = ep->base.ctx;
	fab_cq_push(&ep->tdom->base, &cqe);
}

void tcp_ep_destroy(struct tcp_ep *ep)
{
	struct tcp_domain *td = ep->tdom;
	struct tcp_ep **pp;

	if (ep->state != TCP_EP_FAILED)
		tcp_ep_teardown(ep, -ECANCELED);
	for (pp = &td->ready; *pp; pp = &(*pp)->ready_next) {
		if (*pp == ep) {
			*pp = ep->ready_next;
			break;
		}
	}
	for (pp = &td->txlist; *pp; pp = &(*pp)->tx_next) {
		if (*pp == ep) {
			*pp = ep->tx_next;
			break;
		}
	}
	for (pp = &td->wacklist; *pp; pp = &(*pp)->wack_next) {
		if (*pp == ep) {
			*pp = ep->wack_next;
			break;
		}
	}
	if (ep->prev)
		ep->prev->next = ep->next;
	else
		td->eps = ep->next;
	if (ep->next)
		ep->next->prev = ep->prev;
	free(ep->slots);
	free(ep->free_slots);
	free(ep->slot_mem);
	free(ep->stage);
	free(ep);
}

void tcp_ep_close(struct fab_ep *fep)
{
	struct tcp_ep *ep = tcp_ep_of(fep);

	if (ep->state != TCP_EP_FAILED)
		tcp_ep_teardown(ep, -ECANCELED);
	/*
	 * Receives still queued go back before the endpoint counts as closed:
	 * releasing the last buffer of a closed endpoint frees it
	 * (tcp_recv_release), and it is freed once, below. (A connection
	 * refused as soon as it was accepted has its peer's first frame
	 * queued: msgr's limits.)
	 */
	fab_cq_forget_ep(fep->dom, fep);
	fab_win_drop(&ep->tdom->wins, &ep->base, NULL); /* its keys die with it */
	ep->user_closed = true;
	if (ep->slots_held == 0 && ep->imm_held == 0)
		tcp_ep_destroy(ep);
}

void tcp_ep_check_deadline(struct tcp_ep *ep, uint64_t now)
{
	if ((ep->state == TCP_EP_CONNECTING || ep->state == TCP_EP_HANDSHAKE) &&
	    now > ep->deadline_ns)
		tcp_ep_fail(ep, -ETIMEDOUT, "no handshake before ms_connect_timeout");
}

/* ------------------------------------------------------------ send side */

static struct tcp_op *tcp_credit_op(struct tcp_ep *ep)
{
	struct tcp_op *op = tcp_op_alloc(ep->tdom);

	if (op) {
		op->kind = TCP_OP_CTRL;
		op->h.type = TCP_F_CREDIT;
	}
	return op;
}

/* Up to TCP_WACKS_MAX of the owed write acks, now taken (0 between legacy peers). */
static uint8_t tcp_ep_wacks_take(struct tcp_ep *ep)
{
	uint32_t n = ep->wack_owed < TCP_WACKS_MAX ? ep->wack_owed : TCP_WACKS_MAX;

	if (!ep->wacks)
		return 0;
	ep->wack_owed -= n;
	if (ep->wack_owed == 0)
		ep->wack_urgent = false;
	return (uint8_t)n;
}

void tcp_ep_wack_owe(struct tcp_ep *ep, bool urgent)
{
	struct tcp_domain *td = ep->tdom;
	uint32_t quarter = ep->peer_sq_depth / 4 ? ep->peer_sq_depth / 4 : 1;

	if (ep->wack_owed++ == 0)
		ep->wack_since_ns = clock_now_ns();
	/* a plain write has nobody here to answer it; a full count stops the peer's queue */
	if (urgent || ep->wack_owed >= quarter || ep->wack_owed >= TCP_WACKS_MAX)
		ep->wack_urgent = true;
	if (ep->wack_urgent) {
		tcp_txlist_add(ep);
	} else if (!ep->on_wacklist) {
		ep->on_wacklist = true;
		ep->wack_next = td->wacklist;
		td->wacklist = ep;
	}
}

void tcp_wacks_check(struct tcp_domain *td, uint64_t now)
{
	struct tcp_ep **pp = &td->wacklist;

	while (*pp) {
		struct tcp_ep *ep = *pp;

		if (ep->wack_owed && ep->state == TCP_EP_CONNECTED && !ep->wack_urgent &&
		    now - ep->wack_since_ns < TCP_WACK_DELAY_NS) {
			pp = &ep->wack_next;
			continue;
		}
		/* past its delay: alone if no frame takes it (tcp_ep_flush) */
		if (ep->wack_owed && ep->state == TCP_EP_CONNECTED) {
			ep->wack_urgent = true;
			tcp_txlist_add(ep);
		}
		*pp = ep->wack_next;
		ep->on_wacklist = false;
	}
}

/* Build the header (committing credits and write acks) for an op about to go on the wire. */
static bool tcp_op_encode(struct tcp_ep *ep, struct tcp_op *op)
{
	uint32_t give;

	if (op->h.type == TCP_F_MSG || op->h.type == TCP_F_WRITE_IMM) {
		if (ep->tx_credits == 0) {
			if (!op->stalled) {
				op->stalled = true;
				ep->base.stats.credit_stalls++;
			}
			return false;
		}
		ep->tx_credits--;
	}
	give = ep->rx_owed > 65535 ? 65535 : ep->rx_owed;
	ep->rx_owed -= give;
	op->h.credits = (uint16_t)give;
	/*
	 * Write acks ride here unless an answer is queued and not yet sent:
	 * that answer took the acks of the writes before it, and acks taken now
	 * (of later writes) must not reach the peer before it (docs/fabric.md).
	 */
	if (op->h.type != TCP_F_HELLO && !op->wacks_fixed && ep->answers_queued == 0)
		op->h.flags = tcp_ep_wacks_take(ep);
	tcp_hdr_encode(&op->h, op->hdr);
	op->encoded = true;
	return true;
}

static void tcp_ep_sent(struct tcp_ep *ep, struct tcp_op *op)
{
	if (op->kind == TCP_OP_SEND) {
		tcp_ep_complete(ep, op, 0);
	} else if (op->kind == TCP_OP_CTRL) {
		if (op->h.type == TCP_F_WRITE_ACK || op->h.type == TCP_F_READ_RESP)
			ep->answers_queued--;
		tcp_op_free(ep->tdom, op);
	} else {
		tcp_op_enqueue(&ep->waitq, op); /* WRITE/READ: the answer completes it */
	}
}

/*
 * The peer holds at most window - in_use - owed credits (in_use: our
 * receive slots the user has not released yet). Below a quarter of the
 * window owed, and while that bound stays above a quarter, owed credits
 * wait for the next frame we send, which carries them in its header: in a
 * request/answer exchange the answer comes anyway, and a lone CREDIT frame
 * would only wake the peer (issue 16: 6 of the 12 frames of a replicated
 * write were such). Past either mark they go alone, so a peer that keeps
 * sending is never kept waiting for credit we hold.
 */
static bool tcp_ep_credits_urgent(const struct tcp_ep *ep)
{
	uint32_t window = ep->tdom->base.attr.recv_credits;
	uint32_t mark = window / 4 ? window / 4 : 1;
	uint32_t in_use = window - ep->nfree + ep->imm_held;

	return ep->rx_owed >= mark || in_use + ep->rx_owed + mark > window;
}

/* Returns bytes written (>0), 0 if nothing could go, or -errno (endpoint failed). */
int tcp_ep_flush(struct tcp_ep *ep)
{
	int total = 0;

	if (ep->fd < 0 || ep->state == TCP_EP_CONNECTING)
		return 0;
	/*
	 * Credits and write acks owed with nothing else to carry them travel
	 * alone only when the peer needs them.
	 */
	if (ep->state == TCP_EP_CONNECTED && !ep->txq.head &&
	    ((ep->rx_owed && tcp_ep_credits_urgent(ep)) || (ep->wack_owed && ep->wack_urgent))) {
		struct tcp_op *c = tcp_credit_op(ep);

		if (!c)
			return -ENOMEM;
		tcp_op_enqueue(&ep->txq, c);
	}
	for (int round = 0; round < TCP_FLUSH_ROUNDS && ep->txq.head; round++) {
		struct iovec iov[TCP_IOV_MAX];
		struct msghdr mh = {0};
		struct tcp_op *op;
		size_t want = 0;
		ssize_t w;
		int n = 0;

		struct tcp_op *prev = NULL;

		for (op = ep->txq.head; op && n < TCP_IOV_MAX - 1; prev = op, op = op->next) {
			uint32_t off = op->tx_off;

			if (!op->encoded) {
				if (ep->state != TCP_EP_CONNECTED && op->h.type != TCP_F_HELLO)
					break;
				if (!tcp_op_encode(ep, op)) {
					/*
					 * Out of credit. Credits we owe must not wait
					 * behind this frame, or two peers that both
					 * wait would wait forever: slip them in front.
					 */
					struct tcp_op *c;

					if (!ep->rx_owed || !(c = tcp_credit_op(ep)))
						break;
					c->next = op;
					if (prev)
						prev->next = c;
					else
						ep->txq.head = c;
					ep->txq.count++;
					tcp_op_encode(ep, c);
					op = c;
				}
			}
			if (off < TCP_HDR_LEN) {
				iov[n].iov_base = op->hdr + off;
				iov[n].iov_len = TCP_HDR_LEN - off;
				want += iov[n++].iov_len;
				off = 0;
			} else {
				off -= TCP_HDR_LEN;
			}
			if (op->payload_len > off) {
				iov[n].iov_base = (uint8_t *)op->payload + off;
				iov[n].iov_len = op->payload_len - off;
				want += iov[n++].iov_len;
			}
		}
		if (n == 0)
			break;
		mh.msg_iov = iov;
		mh.msg_iovlen = (size_t)n;
		w = sendmsg(ep->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				break;
			tcp_ep_fail(ep, -errno, "send");
			return -ECONNRESET;
		}
		ep->base.stats.tx_bytes += (uint64_t)w;
		total += (int)w;
		size_t wrote = (size_t)w;

		while (w > 0) {
			op = ep->txq.head;
			uint32_t left = TCP_HDR_LEN + op->payload_len - op->tx_off;
			uint32_t take = (size_t)w < left ? (uint32_t)w : left;

			op->tx_off += take;
			w -= take;
			if (op->tx_off == TCP_HDR_LEN + op->payload_len)
				tcp_ep_sent(ep, tcp_op_dequeue(&ep->txq));
		}
		if (wrote < want)
			break; /* socket buffer full: EPOLLOUT will call us back */
	}
	tcp_epoll_update(ep);
	return total;
}

int tcp_ep_on_out(struct tcp_ep *ep)
{
	if (ep->state == TCP_EP_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (getsockopt(ep->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
			err = errno;
		if (err) {
			tcp_ep_fail(ep, -err, "connect");
			return 1;
		}
		ep->state = TCP_EP_HANDSHAKE;
		tcp_ep_names(ep);
	}
	return tcp_ep_flush(ep) > 0;
}

int tcp_ep_queue_ctrl(struct tcp_ep *ep, const struct tcp_hdr *h, const void *payload,
		      struct fab_mr *mr)
{
	struct tcp_op *op = tcp_op_alloc(ep->tdom);

	if (!op)
		return -ENOMEM;
	op->kind = TCP_OP_CTRL;
	op->h = *h;
	if (h->type == TCP_F_WRITE_ACK || h->type == TCP_F_READ_RESP) {
		/*
		 * An answer takes the acks of the writes placed before the request
		 * it answers, now: the peer completes its writes in order and then
		 * this answer's op (more than fit go first in CREDIT frames).
		 */
		while (ep->wacks && ep->wack_owed > TCP_WACKS_MAX) {
			struct tcp_op *c = tcp_credit_op(ep);

			if (!c) {
				tcp_op_free(ep->tdom, op);
				return -ENOMEM;
			}
			c->h.flags = tcp_ep_wacks_take(ep);
			c->wacks_fixed = true;
			tcp_op_enqueue(&ep->txq, c);
		}
		op->h.flags = tcp_ep_wacks_take(ep);
		op->wacks_fixed = true;
		ep->answers_queued++;
	}
	op->payload = payload;
	op->payload_len = payload ? h->len : 0;
	op->mr = mr;
	tcp_op_enqueue(&ep->txq, op);
	tcp_txlist_add(ep);
	return 0;
}
