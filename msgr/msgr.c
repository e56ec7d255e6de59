/* SPDX-License-Identifier: Apache-2.0 */
/* Messenger: frames over fabric endpoints, with a rendezvous for large frames. See msgr.h. */
#include "msgr/msgr.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/conf.h"
#include "common/log.h"
#include "msgr/msgr_auth.h"
#include "proto/hello.h"

#define MSGR_BULK_OUT_MAX 256  /* large frames a peer has not pulled yet, per connection */
#define MSGR_PENDING_MAX  4096 /* frames parked on a full send queue, per connection */
/*
 * A refused connection stays open (delivering nothing) until the peer closes
 * it or this long has passed, so our own hello, still queued, reaches the
 * peer and it can log its side of the refusal too.
 */
#define MSGR_REFUSE_LINGER_MS 2000
/*
 * Refusals for the denial-of-service limits are logged once per peer IP
 * per minute: a flood must not fill the log (nor cost a write per
 * connection). A table of MSGR_SEEN_MAX addresses; when every slot logged
 * within the minute, a new address is counted, not logged, until one
 * frees up, so the lines stay bounded however many addresses attack.
 */
#define MSGR_SEEN_MAX	    32
#define MSGR_SEEN_WINDOW_MS 60000
#define MSGR_IP_MAX	    64

/* A frame that waits in its receive buffer while its connection is paused. */
struct msgr_rx {
	struct msgr_rx *next;
	struct fab_cqe cqe;
};

struct msgr_seen {
	char ip[MSGR_IP_MAX];
	uint64_t first_ms; /* 0: free */
	uint32_t suppressed;
};

struct msgr_frame {
	struct msgr_frame *next;
	size_t len;
	uint8_t data[];
};

/* A large frame we registered for the peer to pull. */
struct msgr_bulk_out {
	struct msgr_bulk_out *next;
	uint64_t id;
	void *buf;
	struct fab_mr *mr;
};

/* A large frame we are pulling. Outlives its connection until the read completes. */
struct msgr_bulk_in {
	struct msgr_bulk_in *next, *prev; /* msgr->bulk_in */
	struct msgr_conn *conn;		  /* NULL once the connection is closed */
	uint64_t id;
	uint32_t len;
	void *buf;
	struct fab_mr *mr;
	bool mac;     /* the content carries a MAC trailer */
	uint64_t seq; /* the sequence number of the BULK that announced it */
};

struct msgr_listener {
	struct msgr *msgr;
	struct msgr_listener *next;
	struct fab_listener *l;
	const struct msgr_ops *ops;
	void *arg;
	const struct msgr_auth_cfg *auth; /* its owner's; NULL: it authenticates nothing */
	unsigned int nconns;		  /* accepted connections open (ms_max_conns) */
};

/* An owner's authentication set-up (msgr_auth_add), freed with the messenger. */
struct msgr_auth_owned {
	struct msgr_auth_owned *next;
	struct msgr_auth_cfg *cfg;
};

struct msgr_conn {
	struct msgr *msgr;
	struct msgr_conn *next, *prev;
	struct fab_ep *ep;
	const struct msgr_ops *ops; /* the owner's */
	void *arg;
	void *ctx;
	uint64_t id;
	bool failed;
	bool hello_done; /* the peer's hello arrived and passed proto_hello_check */
	struct proto_hello peer_hello;
	char *refusal;	   /* why the hello check or authentication refused the peer, or NULL */
	int refuse_status; /* what fail_cb gets when the linger ends */
	uint64_t linger_until_ms; /* refused: fail_cb at this time at the latest */
	struct msgr_frame *pend_head, *pend_tail;
	unsigned int npend;
	bool initiator;		     /* we connected */
	bool ready;		     /* ready_cb ran: hello (and handshake) passed */
	struct msgr_auth_link *auth; /* NULL: the messenger authenticates nothing */
	/* frames the owner sent before the session key existed (encoded, no MAC yet) */
	struct msgr_frame *held_head, *held_tail;
	unsigned int nheld;
	struct msgr_bulk_out *bulk_out;
	unsigned int nbulk_out;
	/* accepted: where from, for the limits (msgr_limits) */
	struct msgr_listener *from; /* NULL once the listener closed, or when we connected */
	bool accepted;
	char ip[MSGR_IP_MAX]; /* the peer's address without the port */
	bool unauth;	      /* accepted, not through hello and handshake yet: counted */
	uint64_t deadline_ms; /* unauth: closed at this time */
	/* paused (msgr_conn_pause): frames wait in their receive buffers */
	bool paused;
	struct msgr_rx *rx_head, *rx_tail;
	bool on_resume;		 /* in msgr->resume: has frames to deliver, no longer paused */
	struct msgr_conn *rnext; /* msgr->resume */
	bool overflow;		 /* MSGR_PENDING_MAX frames parked: failed at the next service */
};

struct msgr {
	struct fab_domain *dom;
	bool owns_dom;
	char name[PROTO_NAME_MAX + 1];
	struct msgr_ops ops; /* the default owner (msgr_create) */
	void *arg;
	uint32_t msg_size;
	struct msgr_listener *listener; /* msgr_listen's */
	struct msgr_listener *listeners;
	struct msgr_conn *conns;
	unsigned int nparked; /* connections with frames parked */
	unsigned int nlinger; /* refused connections lingering */
	msgr_rma_cb rma_cb;
	void *rma_arg;
	struct msgr_bulk_in *bulk_in;
	uint64_t next_conn_id;
	uint64_t next_bulk_id;
	uint8_t *scratch;		    /* msg_size bytes: small frames are encoded here */
	struct proto_hello hello;	    /* ours: the first frame on every connection */
	struct msgr_auth_cfg *auth;	    /* the default owner's (msgr_auth_set); NULL: none */
	struct msgr_auth_owned *owned_auth; /* other owners' (msgr_auth_add) */
	unsigned int nauth;		    /* connections that authenticate: their link ticks */
	uint64_t next_auth_tick_ms;
	struct msgr_limits lim;
	struct msgr_stats st;
	struct msgr_seen seen[MSGR_SEEN_MAX];
	uint64_t seen_overflow;	  /* refusals not logged because every slot was taken */
	struct msgr_conn *resume; /* resumed connections with frames waiting */
};

static int msgr_init(struct msgr *m, struct fab_domain *dom, const char *name)
{
	m->dom = dom;
	m->msg_size = fab_domain_msg_size(dom);
	m->next_conn_id = 1;
	m->next_bulk_id = 1;
	snprintf(m->name, sizeof(m->name), "%s", name ? name : "client.unknown");
	proto_hello_init(&m->hello, m->name);
	m->lim.max_conns = MSGR_MAX_CONNS_DEFAULT;
	m->lim.max_conns_per_ip = MSGR_MAX_CONNS_PER_IP_DEFAULT;
	m->lim.max_unauth = MSGR_MAX_UNAUTH_DEFAULT;
	m->lim.hello_timeout_ms = MSGR_AUTH_TIMEOUT_MS;
	m->scratch = malloc(m->msg_size);
	return m->scratch != NULL ? 0 : -ENOMEM;
}

int msgr_create_on(struct fab_domain *dom, const char *name, struct msgr **msgr_out)
{
	struct msgr *m = calloc(1, sizeof(*m));

	if (m == NULL)
		return -ENOMEM;
	if (msgr_init(m, dom, name) != 0) {
		free(m);
		return -ENOMEM;
	}
	*msgr_out = m;
	return 0;
}

int msgr_create(const struct fab_domain_attr *attr, const struct msgr_ops *ops, void *arg,
		struct msgr **msgr_out)
{
	struct fab_domain *dom;
	struct msgr *m;
	int rc;

	rc = fab_domain_open(attr, &dom);
	if (rc != 0)
		return rc;
	rc = msgr_create_on(dom, attr->name, &m);
	if (rc != 0) {
		fab_domain_close(dom);
		return rc;
	}
	m->owns_dom = true;
	m->ops = *ops;
	m->arg = arg;
	*msgr_out = m;
	return 0;
}

struct fab_domain *msgr_domain(const struct msgr *m)
{
	return m->dom;
}

void msgr_rma_handler(struct msgr *m, msgr_rma_cb cb, void *arg)
{
	m->rma_cb = cb;
	m->rma_arg = arg;
}

static void msgr_frames_free(struct msgr_frame *f)
{
	while (f != NULL) {
		struct msgr_frame *next = f->next;

		free(f);
		f = next;
	}
}

static void msgr_conn_free(struct msgr_conn *c)
{
	struct msgr *m = c->msgr;

	msgr_frames_free(c->pend_head);
	msgr_frames_free(c->held_head);
	m->nauth -= c->auth != NULL;
	msgr_auth_link_free(c->auth);
	while (c->bulk_out != NULL) {
		struct msgr_bulk_out *b = c->bulk_out;

		c->bulk_out = b->next;
		fab_mr_dereg(b->mr);
		free(b->buf);
		free(b);
	}
	for (struct msgr_bulk_in *b = m->bulk_in; b != NULL; b = b->next)
		if (b->conn == c)
			b->conn = NULL;
	if (c->npend > 0)
		m->nparked--;
	if (c->linger_until_ms != 0)
		m->nlinger--;
	if (c->from != NULL)
		c->from->nconns--;
	if (c->accepted)
		m->st.conns--;
	if (c->unauth) {
		m->st.unauth--;
		c->unauth = false;
	}
	if (c->paused)
		m->st.paused--;
	if (c->on_resume) {
		for (struct msgr_conn **pp = &m->resume; *pp != NULL; pp = &(*pp)->rnext) {
			if (*pp == c) {
				*pp = c->rnext;
				break;
			}
		}
	}
	if (c->prev != NULL)
		c->prev->next = c->next;
	else
		m->conns = c->next;
	if (c->next != NULL)
		c->next->prev = c->prev;
	free(c->refusal);
	free(c);
}

static void msgr_bulk_in_free(struct msgr *m, struct msgr_bulk_in *b)
{
	if (b->prev != NULL)
		b->prev->next = b->next;
	else
		m->bulk_in = b->next;
	if (b->next != NULL)
		b->next->prev = b->prev;
	if (b->mr != NULL)
		fab_mr_dereg(b->mr);
	free(b->buf);
	free(b);
}

void msgr_destroy(struct msgr *m)
{
	if (m == NULL)
		return;
	while (m->conns != NULL)
		msgr_conn_close(m->conns);
	while (m->listeners != NULL)
		msgr_listener_close(m->listeners);
	while (m->bulk_in != NULL)
		msgr_bulk_in_free(m, m->bulk_in);
	if (m->owns_dom)
		fab_domain_close(m->dom);
	msgr_auth_cfg_free(m->auth);
	while (m->owned_auth != NULL) {
		struct msgr_auth_owned *o = m->owned_auth;

		m->owned_auth = o->next;
		msgr_auth_cfg_free(o->cfg);
		free(o);
	}
	free(m->scratch);
	free(m);
}

static struct msgr_conn *msgr_conn_new(struct msgr *m, struct fab_ep *ep,
				       const struct msgr_ops *ops, void *arg,
				       const struct msgr_auth_cfg *auth, void *ctx, bool initiator)
{
	struct msgr_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	if (auth != NULL && msgr_auth_link_new(auth, initiator, &c->auth) != 0) {
		free(c);
		return NULL;
	}
	m->nauth += c->auth != NULL;
	c->initiator = initiator;
	c->msgr = m;
	c->ep = ep;
	c->ops = ops;
	c->arg = arg;
	c->ctx = ctx;
	c->id = m->next_conn_id++;
	c->next = m->conns;
	if (m->conns != NULL)
		m->conns->prev = c;
	m->conns = c;
	fab_ep_set_ctx(ep, c);
	return c;
}

int msgr_listen_ops(struct msgr *m, const char *addr, const struct msgr_ops *ops, void *arg,
		    const struct msgr_auth_cfg *auth, struct msgr_listener **l_out)
{
	struct msgr_listener *l = calloc(1, sizeof(*l));
	int rc;

	if (l == NULL)
		return -ENOMEM;
	l->msgr = m;
	l->ops = ops;
	l->arg = arg;
	l->auth = auth;
	/* accepted endpoints are matched to l by cqe->listener (msgr_accepted) */
	rc = fab_listen(m->dom, addr, NULL, &l->l);
	if (rc != 0) {
		free(l);
		return rc;
	}
	l->next = m->listeners;
	m->listeners = l;
	*l_out = l;
	return 0;
}

int msgr_listen(struct msgr *m, const char *addr)
{
	int rc = msgr_listen_ops(m, addr, &m->ops, m->arg, NULL, &m->listener);

	/* the default owner's set-up may come later (msgr_auth_set): looked up per accept */
	return rc;
}

uint16_t msgr_listener_port(const struct msgr_listener *l)
{
	return fab_listener_port(l->l);
}

uint16_t msgr_listen_port(const struct msgr *m)
{
	return m->listener != NULL ? msgr_listener_port(m->listener) : 0;
}

void msgr_listener_close(struct msgr_listener *l)
{
	struct msgr *m = l->msgr;

	for (struct msgr_listener **pp = &m->listeners; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	if (m->listener == l)
		m->listener = NULL;
	for (struct msgr_conn *c = m->conns; c != NULL; c = c->next)
		if (c->from == l)
			c->from = NULL;
	fab_listener_close(l->l);
	free(l);
}

static int msgr_post(struct msgr_conn *c, const void *buf, size_t len);

/* The connection as msgr_auth.c sees it. */
static void msgr_auth_conn_of(const struct msgr_conn *c, struct msgr_auth_conn *ac)
{
	ac->name = c->msgr->hello.name;
	ac->local_addr = fab_ep_local_addr(c->ep);
	ac->peer_addr = fab_ep_peer_addr(c->ep);
}

/*
 * Our hello, the first frame of every connection (proto/hello.h); when we
 * connected and authenticate, our AUTH(HELLO) right behind it.
 */
static int msgr_hello_send(struct msgr_conn *c)
{
	struct msgr *m = c->msgr;
	struct msgr_auth_out out;
	size_t len;
	int rc = proto_hello_frame(&m->hello, m->scratch, m->msg_size, &len);

	if (rc == 0)
		rc = msgr_post(c, m->scratch, len);
	if (rc != 0 || c->auth == NULL)
		return rc;
	rc = msgr_auth_link_start(c->auth, m->scratch, len, &out);
	if (rc == 0 && out.len > 0)
		rc = msgr_post(c, out.frame, out.len);
	return rc;
}

int msgr_auth_set(struct msgr *m, const struct msgr_auth *a)
{
	struct msgr_auth_cfg *cfg;
	int rc = msgr_auth_cfg_new(a, m->hello.name, &cfg);

	if (rc != 0)
		return rc;
	msgr_auth_cfg_free(m->auth);
	m->auth = cfg;
	return 0;
}

int msgr_auth_add(struct msgr *m, const struct msgr_auth *a, const struct msgr_auth_cfg **cfg_out)
{
	struct msgr_auth_owned *o = calloc(1, sizeof(*o));
	int rc;

	if (o == NULL)
		return -ENOMEM;
	rc = msgr_auth_cfg_new(a, m->hello.name, &o->cfg);
	if (rc != 0) {
		free(o);
		return rc;
	}
	o->next = m->owned_auth;
	m->owned_auth = o;
	*cfg_out = o->cfg;
	return 0;
}

const char *msgr_conn_entity(const struct msgr_conn *c)
{
	return c->auth != NULL && c->refusal == NULL ? msgr_auth_link_entity(c->auth) : NULL;
}

int msgr_conn_seal_key(const struct msgr_conn *c, struct auth_key *key_out)
{
	if (c->auth == NULL || c->refusal != NULL)
		return -ENOTCONN;
	return msgr_auth_link_seal_key(c->auth, key_out);
}

const struct auth_caps *msgr_conn_caps(const struct msgr_conn *c)
{
	return c->auth != NULL && c->refusal == NULL ? msgr_auth_link_caps(c->auth) : NULL;
}

void msgr_conn_caps_set(struct msgr_conn *c, const struct auth_caps *caps)
{
	if (c->auth != NULL)
		msgr_auth_link_caps_set(c->auth, caps);
}

void msgr_conn_auth_expire(struct msgr_conn *c, uint64_t ms)
{
	if (c->auth != NULL)
		msgr_auth_link_expire(c->auth, clock_now_ms() + ms);
}

struct msgr_conn *msgr_conn_next(struct msgr *m, struct msgr_conn *prev)
{
	return prev == NULL ? m->conns : prev->next;
}

void msgr_hello_set(struct msgr *m, const struct proto_hello *h)
{
	m->hello = *h;
}

const struct proto_hello *msgr_hello(const struct msgr *m)
{
	return &m->hello;
}

const struct proto_hello *msgr_conn_peer_hello(const struct msgr_conn *c)
{
	return c->hello_done ? &c->peer_hello : NULL;
}

const char *msgr_conn_refusal(const struct msgr_conn *c)
{
	return c->refusal;
}

int msgr_connect_ops(struct msgr *m, const char *addr, const char *local_addr,
		     const struct msgr_ops *ops, void *arg, const struct msgr_auth_cfg *auth,
		     void *ctx, struct msgr_conn **conn_out)
{
	struct msgr_conn *c;
	struct fab_ep *ep;
	int rc;

	rc = fab_connect(m->dom, addr, local_addr, NULL, &ep);
	if (rc != 0)
		return rc;
	c = msgr_conn_new(m, ep, ops, arg, auth, ctx, true);
	if (c == NULL) {
		fab_ep_close(ep);
		return -ENOMEM;
	}
	/* queued behind the connect: the fabric keeps send order */
	rc = msgr_hello_send(c);
	if (rc != 0) {
		msgr_conn_close(c);
		return rc;
	}
	*conn_out = c;
	return 0;
}

int msgr_connect(struct msgr *m, const char *addr, void *ctx, struct msgr_conn **conn_out)
{
	return msgr_connect_ops(m, addr, NULL, &m->ops, m->arg, m->auth, ctx, conn_out);
}

/* Frames that waited for a resume go back unread (their credits with them). */
static void msgr_rx_drop(struct msgr_conn *c)
{
	while (c->rx_head != NULL) {
		struct msgr_rx *r = c->rx_head;

		c->rx_head = r->next;
		fab_recv_release(&r->cqe);
		free(r);
	}
	c->rx_tail = NULL;
}

void msgr_conn_close(struct msgr_conn *c)
{
	if (c == NULL)
		return;
	msgr_rx_drop(c);
	fab_ep_close(c->ep);
	msgr_conn_free(c);
}

void msgr_conn_set_ctx(struct msgr_conn *c, void *ctx)
{
	c->ctx = ctx;
}

void *msgr_conn_ctx(const struct msgr_conn *c)
{
	return c->ctx;
}

struct fab_ep *msgr_conn_ep(const struct msgr_conn *c)
{
	return c->ep;
}

unsigned int msgr_conn_parked(const struct msgr_conn *c)
{
	return c->npend;
}

const char *msgr_conn_peer(const struct msgr_conn *c)
{
	return fab_ep_peer_addr(c->ep);
}

uint64_t msgr_conn_id(const struct msgr_conn *c)
{
	return c->id;
}

struct msgr_conn *msgr_conn_find(struct msgr *m, uint64_t id)
{
	for (struct msgr_conn *c = m->conns; c != NULL; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

int msgr_fd(const struct msgr *m)
{
	return fab_domain_fd(m->dom);
}

uint32_t msgr_msg_size(const struct msgr *m)
{
	return m->msg_size;
}

int msgr_wait(struct msgr *m, int timeout_ms)
{
	if (m->resume != NULL)
		return 0; /* frames of a resumed connection are waiting */
	return fab_wait(m->dom, timeout_ms);
}

/* ------------------------------------------------------------------ send */

/* Post a small frame now, or park it when the send queue is full. */
static int msgr_post(struct msgr_conn *c, const void *buf, size_t len)
{
	struct msgr_frame *f;
	int rc;

	if (c->failed)
		return -ENOTCONN;
	if (c->pend_head == NULL) {
		rc = fab_send(c->ep, buf, len, NULL);
		if (rc != -EAGAIN)
			return rc;
	}
	if (c->npend >= MSGR_PENDING_MAX) {
		/*
		 * The peer takes nothing (it withholds its credits, or is stuck):
		 * dropping frames one by one would lose replies silently and log
		 * a line each. The connection fails instead, once, from the next
		 * progress (not here: the caller may still be using it).
		 */
		if (!c->overflow) {
			c->overflow = true;
			c->msgr->st.send_overflows++;
			log_warn("msgr",
				 "%s: peer %s takes nothing we send: %u frames waiting for its "
				 "credits; closing",
				 c->msgr->name, msgr_conn_peer(c), c->npend);
		}
		return -ENOBUFS;
	}
	f = malloc(sizeof(*f) + len);
	if (f == NULL)
		return -ENOMEM;
	f->next = NULL;
	f->len = len;
	memcpy(f->data, buf, len);
	if (c->pend_tail != NULL)
		c->pend_tail->next = f;
	else
		c->pend_head = f;
	c->pend_tail = f;
	if (c->npend++ == 0)
		c->msgr->nparked++;
	return 0;
}

static void msgr_flush(struct msgr_conn *c)
{
	while (c->pend_head != NULL && !c->failed) {
		struct msgr_frame *f = c->pend_head;

		if (fab_send(c->ep, f->data, f->len, NULL) == -EAGAIN)
			return;
		c->pend_head = f->next;
		if (c->pend_head == NULL)
			c->pend_tail = NULL;
		if (--c->npend == 0)
			c->msgr->nparked--;
		free(f);
	}
}

/* The MAC trailer frames we send carry now: 0 or AUTH_SESS_MAC_LEN. */
static size_t msgr_trailer(const struct msgr_conn *c)
{
	return c->auth != NULL && msgr_auth_link_tx_mac(c->auth) ? AUTH_SESS_MAC_LEN : 0;
}

/* Whether frames must wait for the session key. */
static bool msgr_holding(const struct msgr_conn *c)
{
	return c->auth != NULL && msgr_auth_link_tx_hold(c->auth);
}

/* A small encoded frame at buf, which has room for the trailer after len: seal when due, post. */
static int msgr_out_small(struct msgr_conn *c, uint8_t *buf, size_t len)
{
	int rc;

	if (msgr_trailer(c) != 0) {
		rc = msgr_auth_link_seal(c->auth, buf, len, buf + len);
		if (rc != 0)
			return rc;
		len += AUTH_SESS_MAC_LEN;
	}
	return msgr_post(c, buf, len);
}

/*
 * A large encoded frame: buf (malloc'ed, len bytes and room for a trailer)
 * is taken, registered for the peer to pull, and announced with a BULK.
 * Its MAC binds it to the sequence number of that BULK.
 */
static int msgr_out_bulk(struct msgr_conn *c, uint8_t *buf, size_t len)
{
	struct msgr *m = c->msgr;
	struct proto_msg bm = {.type = PROTO_BULK};
	struct fab_rkey rkey;
	struct msgr_bulk_out *b;
	size_t blen;
	int rc;

	if (c->nbulk_out >= MSGR_BULK_OUT_MAX) {
		rc = -ENOBUFS;
		goto err_free_buf;
	}
	if (msgr_trailer(c) != 0) {
		rc = msgr_auth_link_seal_bulk(c->auth, msgr_auth_link_tx_next(c->auth), buf, len,
					      buf + len);
		if (rc != 0)
			goto err_free_buf;
		len += AUTH_SESS_MAC_LEN;
	}
	b = calloc(1, sizeof(*b));
	if (b == NULL) {
		rc = -ENOMEM;
		goto err_free_buf;
	}
	b->buf = buf;
	/* one message's bytes, read by this connection's peer only (docs/security.md) */
	rc = fab_mr_reg(m->dom, b->buf, len, FAB_ACCESS_REMOTE_READ | FAB_ACCESS_SCOPED, &b->mr);
	if (rc != 0) {
		log_error("msgr", "peer %s: registering a %zu-byte frame: %s", msgr_conn_peer(c),
			  len, strerror(-rc));
		goto err_free;
	}
	rc = fab_rkey_scope(c->ep, b->mr, b->buf, len, FAB_ACCESS_REMOTE_READ, &rkey);
	if (rc != 0)
		goto err_dereg;
	b->id = m->next_bulk_id++;
	bm.bulk.id = b->id;
	bm.bulk.len = (uint32_t)len;
	bm.bulk.rkey.addr = rkey.addr;
	bm.bulk.rkey.len = rkey.len;
	bm.bulk.rkey.key = rkey.key;
	/* The BULK takes the sequence number the content's MAC was bound to. */
	rc = proto_frame_encode(&bm, 0, m->scratch, m->msg_size - msgr_trailer(c), &blen);
	if (rc == 0)
		rc = msgr_out_small(c, m->scratch, blen);
	if (rc != 0)
		goto err_dereg;
	b->next = c->bulk_out;
	c->bulk_out = b;
	c->nbulk_out++;
	return 0;
err_dereg:
	fab_mr_dereg(b->mr);
err_free:
	free(b);
err_free_buf:
	free(buf);
	return rc;
}

/* Keep an encoded frame until the session key exists (its MAC needs it). */
static int msgr_hold(struct msgr_conn *c, const void *frame, size_t len)
{
	struct msgr_frame *f;

	if (c->nheld >= MSGR_PENDING_MAX) {
		log_warn("msgr", "peer %s: %u frames waiting for the handshake, dropping one",
			 msgr_conn_peer(c), c->nheld);
		return -ENOBUFS;
	}
	f = malloc(sizeof(*f) + len);
	if (f == NULL)
		return -ENOMEM;
	f->next = NULL;
	f->len = len;
	memcpy(f->data, frame, len);
	if (c->held_tail != NULL)
		c->held_tail->next = f;
	else
		c->held_head = f;
	c->held_tail = f;
	c->nheld++;
	return 0;
}

/* The session key is there: seal and send what waited for it, in order. */
static void msgr_held_flush(struct msgr_conn *c)
{
	struct msgr *m = c->msgr;

	while (c->held_head != NULL && !c->failed) {
		struct msgr_frame *f = c->held_head;
		uint8_t *buf;
		int rc;

		c->held_head = f->next;
		if (c->held_head == NULL)
			c->held_tail = NULL;
		c->nheld--;
		if (f->len + msgr_trailer(c) <= m->msg_size) {
			memcpy(m->scratch, f->data, f->len);
			rc = msgr_out_small(c, m->scratch, f->len);
		} else {
			buf = malloc(f->len + AUTH_SESS_MAC_LEN);
			rc = buf == NULL ? -ENOMEM : 0;
			if (buf != NULL) {
				memcpy(buf, f->data, f->len);
				rc = msgr_out_bulk(c, buf, f->len);
			}
		}
		if (rc != 0)
			log_warn("msgr",
				 "peer %s: a %zu-byte frame sent before the handshake is "
				 "lost: %s",
				 msgr_conn_peer(c), f->len, strerror(-rc));
		free(f);
	}
}

int msgr_send(struct msgr_conn *c, const struct proto_msg *msg, uint64_t tid)
{
	struct msgr *m = c->msgr;
	bool hold = msgr_holding(c);
	uint8_t *buf;
	size_t len;
	int rc;

	if (c->failed || c->refusal != NULL)
		return -ENOTCONN;
	rc = proto_frame_encode(msg, tid, NULL, 0, &len);
	if (rc != 0)
		return rc;
	if (len + (hold ? 0 : msgr_trailer(c)) <= m->msg_size) {
		rc = proto_frame_encode(msg, tid, m->scratch, m->msg_size, &len);
		if (rc != 0)
			return rc;
		return hold ? msgr_hold(c, m->scratch, len) : msgr_out_small(c, m->scratch, len);
	}
	buf = malloc(len + AUTH_SESS_MAC_LEN);
	if (buf == NULL)
		return -ENOMEM;
	rc = proto_frame_encode(msg, tid, buf, len, &len);
	if (rc != 0 || hold) {
		if (rc == 0)
			rc = msgr_hold(c, buf, len);
		free(buf);
		return rc;
	}
	return msgr_out_bulk(c, buf, len);
}

/* -------------------------------------------------------------- receive */

static void msgr_conn_fail(struct msgr_conn *c, int status)
{
	if (c->failed)
		return;
	c->failed = true;
	c->ops->fail_cb(c, status, c->arg);
}

static void msgr_bulk_start(struct msgr_conn *c, const struct proto_bulk *bk)
{
	struct msgr *m = c->msgr;
	struct fab_rkey rkey = {bk->rkey.addr, bk->rkey.len, bk->rkey.key};
	struct msgr_bulk_in *b;
	struct fab_sge sge;
	int rc;

	b = calloc(1, sizeof(*b));
	if (b == NULL)
		goto err_fail;
	b->buf = malloc(bk->len);
	if (b->buf == NULL)
		goto err_free;
	rc = fab_mr_reg(m->dom, b->buf, bk->len, FAB_ACCESS_LOCAL, &b->mr);
	if (rc != 0)
		goto err_free_buf;
	b->conn = c;
	b->id = bk->id;
	b->len = bk->len;
	if (c->auth != NULL && msgr_auth_link_rx_mac(c->auth)) {
		b->mac = true;
		b->seq = msgr_auth_link_rx_last(c->auth);
	}
	sge.addr = b->buf;
	sge.len = bk->len;
	sge.mr = b->mr;
	rc = fab_read(c->ep, &sge, &rkey, 0, b);
	if (rc != 0) {
		log_warn("msgr", "peer %s: pulling a %u-byte frame: %s", msgr_conn_peer(c), bk->len,
			 strerror(-rc));
		fab_mr_dereg(b->mr);
		goto err_free_buf;
	}
	b->next = m->bulk_in;
	if (m->bulk_in != NULL)
		m->bulk_in->prev = b;
	m->bulk_in = b;
	return;
err_free_buf:
	free(b->buf);
err_free:
	free(b);
err_fail:
	msgr_conn_fail(c, -ENOMEM);
}

static void msgr_bulk_done(struct msgr_conn *c, uint64_t id)
{
	for (struct msgr_bulk_out **pp = &c->bulk_out; *pp != NULL; pp = &(*pp)->next) {
		struct msgr_bulk_out *b = *pp;

		if (b->id == id) {
			*pp = b->next;
			c->nbulk_out--;
			fab_mr_dereg(b->mr);
			free(b->buf);
			free(b);
			return;
		}
	}
	log_warn("msgr", "peer %s: bulk_done for unknown frame %llu", msgr_conn_peer(c),
		 (unsigned long long)id);
}

/* Refuse the peer: deliver nothing more, linger so what we queued reaches it, then fail. */
static void msgr_refuse(struct msgr_conn *c, int status, const char *why)
{
	free(c->refusal);
	c->refusal = strdup(why);
	c->refuse_status = status;
	if (c->linger_until_ms == 0)
		c->msgr->nlinger++;
	c->linger_until_ms = clock_now_ms() + MSGR_REFUSE_LINGER_MS;
	if (c->refusal == NULL)
		msgr_conn_fail(c, status);
}

/* The peer may send frames now (hello passed, and the handshake where there is one). */
static void msgr_ready_check(struct msgr_conn *c)
{
	if (c->ready || !c->hello_done || c->failed || c->refusal != NULL ||
	    (c->auth != NULL && msgr_holding(c)))
		return;
	c->ready = true;
	if (c->unauth) {
		c->unauth = false;
		c->msgr->st.unauth--;
	}
	if (c->ops->ready_cb != NULL)
		c->ops->ready_cb(c, c->arg);
}

/* Act on what the auth link said of a frame: true when the frame goes to the owner. */
static bool msgr_auth_act(struct msgr_conn *c, enum msgr_auth_verdict v,
			  const struct msgr_auth_out *out)
{
	switch (v) {
	case MSGR_AUTH_PASS:
		return true;
	case MSGR_AUTH_TAKEN:
		if (out->len > 0 && msgr_post(c, out->frame, out->len) != 0) {
			msgr_conn_fail(c, -ENOTCONN);
			return false;
		}
		if (!msgr_holding(c)) {
			msgr_held_flush(c);
			msgr_ready_check(c);
		}
		return false;
	case MSGR_AUTH_REFUSE:
		if (out->len > 0)
			msgr_post(c, out->frame, out->len);
		msgr_refuse(c, out->status, out->why);
		return false;
	case MSGR_AUTH_FAIL:
		/* Kept so fail_cb can tell the owner why (msgr_conn_refusal). */
		free(c->refusal);
		c->refusal = strdup(out->why);
		msgr_conn_fail(c, out->status);
		return false;
	}
	return false;
}

/*
 * The peer's first frame: its hello, judged against ours. A refusal is
 * logged once here with both versions, kept for msgr_conn_refusal() and
 * reported as fail_cb(-EPROTONOSUPPORT); nothing more is delivered. Then
 * the auth link sees it (it binds both hellos into the handshake).
 */
static void msgr_hello_recv(struct msgr_conn *c, const struct proto_msg *msg, const void *data,
			    size_t len)
{
	char why[PROTO_HELLO_WHY_MAX];
	struct msgr_auth_conn ac;
	struct msgr_auth_out out;
	int rc;

	if (msg->type != PROTO_HELLO) {
		proto_hello_unexpected(msg->type, msgr_conn_peer(c), why, sizeof(why));
		rc = -EPROTONOSUPPORT;
	} else {
		rc = proto_hello_check(&c->msgr->hello, &msg->hello, msgr_conn_peer(c), why,
				       sizeof(why));
	}
	if (rc != 0) {
		log_error("msgr", "%s: %s", c->msgr->hello.name, why);
		msgr_refuse(c, -EPROTONOSUPPORT, why);
		return;
	}
	c->peer_hello = msg->hello;
	c->hello_done = true;
	log_debug("msgr", "%s: peer %s is %s (weft %s), features 0x%llx", c->msgr->hello.name,
		  msgr_conn_peer(c), msg->hello.name, msg->hello.version,
		  (unsigned long long)proto_hello_common(&c->msgr->hello, &msg->hello));
	if (c->auth != NULL) {
		msgr_auth_conn_of(c, &ac);
		msgr_auth_act(
		    c, msgr_auth_link_peer_hello(c->auth, &ac, data, len, &msg->hello, &out), &out);
	}
	msgr_ready_check(c);
}

/* One whole frame (its MAC already checked and cut); the callback may close conn. */
static void msgr_deliver_frame(struct msgr_conn *c, const void *data, size_t len)
{
	struct msgr *m = c->msgr;
	struct msgr_auth_conn ac;
	struct msgr_auth_out out;
	struct proto_hdr hdr;
	struct proto_msg msg;
	struct proto_err err;

	if (proto_frame_decode(data, len, PROTO_PAYLOAD_MAX, NULL, &err, &hdr, &msg) != 0) {
		/* malformed input closes the connection, with one line naming the peer */
		log_warn("msgr", "%s: dropping a malformed message from %s and closing: %s",
			 c->msgr->name, msgr_conn_peer(c), err.msg);
		msgr_conn_fail(c, -EPROTO);
		return;
	}
	if (c->refusal != NULL)
		return; /* refused: lingering until the peer closes */
	if (!c->hello_done) {
		msgr_hello_recv(c, &msg, data, len);
		return;
	}
	if (c->auth != NULL) {
		msgr_auth_conn_of(c, &ac);
		if (!msgr_auth_act(c, msgr_auth_link_recv(c->auth, &ac, &msg, &out), &out))
			return;
	} else if (msg.type == PROTO_AUTH) {
		log_error("msgr",
			  "%s: peer %s (%s) wants to authenticate, but this side does not "
			  "serve it: closing",
			  m->hello.name, msgr_conn_peer(c), c->peer_hello.name);
		msgr_conn_fail(c, -EPROTONOSUPPORT);
		return;
	}
	switch (msg.type) {
	case PROTO_BULK:
		msgr_bulk_start(c, &msg.bulk);
		return;
	case PROTO_BULK_DONE:
		msgr_bulk_done(c, msg.bulk_done.id);
		return;
	}
	c->ops->recv_cb(c, &hdr, &msg, c->arg);
}

/* One message from the wire: its MAC checked and cut when one is due, then the frame. */
static void msgr_deliver(struct msgr_conn *c, const void *data, size_t len)
{
	struct msgr_auth_conn ac;

	if (c->refusal != NULL)
		return;
	if (c->auth != NULL && msgr_auth_link_rx_mac(c->auth)) {
		msgr_auth_conn_of(c, &ac);
		if (msgr_auth_link_verify(c->auth, &ac, data, len) != 0) {
			msgr_conn_fail(c, -EACCES);
			return;
		}
		len -= AUTH_SESS_MAC_LEN;
	}
	msgr_deliver_frame(c, data, len);
}

static void msgr_read_done(struct msgr *m, const struct fab_cqe *cqe)
{
	struct msgr_bulk_in *b = cqe->ctx;
	struct msgr_conn *c = b->conn;
	struct proto_msg done = {.type = PROTO_BULK_DONE};
	struct msgr_auth_conn ac;
	uint32_t len = b->len;

	if (c != NULL && cqe->status == 0) {
		done.bulk_done.id = b->id;
		/* Acknowledge first: the delivery may close the connection. */
		msgr_send(c, &done, 0);
		fab_mr_dereg(b->mr);
		b->mr = NULL;
		if (b->mac && c->auth != NULL) {
			msgr_auth_conn_of(c, &ac);
			if (msgr_auth_link_verify_bulk(c->auth, &ac, b->seq, b->buf, len) != 0) {
				msgr_conn_fail(c, -EACCES);
				msgr_bulk_in_free(m, b);
				return;
			}
			len -= AUTH_SESS_MAC_LEN;
		}
		if (c->refusal == NULL)
			msgr_deliver_frame(c, b->buf, len);
	} else if (c != NULL) {
		log_warn("msgr", "peer %s: pull of a %u-byte frame failed: %s", msgr_conn_peer(c),
			 b->len, strerror(-cqe->status));
		msgr_conn_fail(c, cqe->status);
	}
	msgr_bulk_in_free(m, b);
}

static bool msgr_bulk_in_ours(const struct msgr *m, const void *ctx)
{
	/* our own pulls are few (large frames only): a short walk, no tagged contexts */
	for (const struct msgr_bulk_in *b = m->bulk_in; b != NULL; b = b->next)
		if (b == ctx)
			return true;
	return false;
}

/* ------------------------------------------------------------ limits */

void msgr_limits_set(struct msgr *m, const struct msgr_limits *lim)
{
	m->lim = *lim;
	if (m->lim.hello_timeout_ms == 0)
		m->lim.hello_timeout_ms = MSGR_AUTH_TIMEOUT_MS;
}

void msgr_limits_from_conf(const struct conf *conf, struct msgr_limits *lim_out)
{
	struct msgr_limits lim = {
	    .max_conns = (unsigned int)conf_get_int(conf, CONF_MS_MAX_CONNS),
	    .max_conns_per_ip = (unsigned int)conf_get_int(conf, CONF_MS_MAX_CONNS_PER_IP),
	    .max_unauth = (unsigned int)conf_get_int(conf, CONF_MS_MAX_UNAUTH),
	    .hello_timeout_ms = MSGR_AUTH_TIMEOUT_MS,
	};

	*lim_out = lim;
}

void msgr_stats_get(const struct msgr *m, struct msgr_stats *st_out)
{
	*st_out = m->st;
}

/* "ip:port" or "[v6]:port" -> the address alone (the key of the per-IP limits). */
static void msgr_addr_ip(const char *addr, char *ip, size_t cap)
{
	const char *colon = strrchr(addr, ':');
	size_t n = colon != NULL ? (size_t)(colon - addr) : strlen(addr);

	if (n >= cap)
		n = cap - 1;
	memcpy(ip, addr, n);
	ip[n] = '\0';
}

/*
 * One line per peer IP per minute for the limits' refusals; the lines not
 * logged are counted and said with the next one for that address.
 */
static void msgr_limit_log(struct msgr *m, const char *ip, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void msgr_limit_log(struct msgr *m, const char *ip, const char *fmt, ...)
{
	uint64_t now = clock_now_ms();
	struct msgr_seen *s = NULL, *slot = NULL;
	char what[256], more[160] = "";
	va_list ap;

	for (unsigned int i = 0; i < MSGR_SEEN_MAX; i++) {
		struct msgr_seen *e = &m->seen[i];

		if (e->first_ms != 0 && strcmp(e->ip, ip) == 0) {
			s = e;
			break;
		}
		if (slot == NULL && (e->first_ms == 0 || now - e->first_ms >= MSGR_SEEN_WINDOW_MS))
			slot = e;
	}
	if (s != NULL && now - s->first_ms < MSGR_SEEN_WINDOW_MS) {
		s->suppressed++;
		m->st.log_suppressed++;
		return;
	}
	if (s == NULL && slot == NULL) {
		/* every slot logged within the minute: many addresses at once */
		m->seen_overflow++;
		m->st.log_suppressed++;
		return;
	}
	if (s != NULL && s->suppressed > 0)
		snprintf(more, sizeof(more),
			 " (and %u more from %s in the last minute, not logged)", s->suppressed,
			 ip);
	else if (m->seen_overflow > 0)
		snprintf(more, sizeof(more),
			 " (and %llu more from other addresses in the last minute, not logged)",
			 (unsigned long long)m->seen_overflow);
	if (s == NULL) {
		s = slot;
		m->seen_overflow = 0;
	}
	snprintf(s->ip, sizeof(s->ip), "%s", ip);
	s->first_ms = now;
	s->suppressed = 0;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	log_warn("msgr", "%s: %s%s", m->name, what, more);
}

/*
 * Whether a new connection from ip on listener l stays within the limits;
 * when not, it is counted and logged here and the caller closes it.
 */
static bool msgr_limits_admit(struct msgr *m, const struct msgr_listener *l, const char *ip,
			      const char *peer)
{
	const struct msgr_limits *lim = &m->lim;
	unsigned int from = 0, unauth_from = 0, unauth_ip_max;
	uint16_t port = msgr_listener_port(l);

	if (lim->max_conns != 0 && l->nconns >= lim->max_conns) {
		m->st.refused_conns++;
		msgr_limit_log(m, ip,
			       "refused %s on port %u: %u connections open on it (ms_max_conns)",
			       peer, port, l->nconns);
		return false;
	}
	for (const struct msgr_conn *c = m->conns; c != NULL; c = c->next) {
		if (!c->accepted || strcmp(c->ip, ip) != 0)
			continue;
		from++;
		unauth_from += c->unauth;
	}
	if (lim->max_conns_per_ip != 0 && from >= lim->max_conns_per_ip) {
		m->st.refused_per_ip++;
		msgr_limit_log(m, ip,
			       "refused %s on port %u: %u connections open from %s "
			       "(ms_max_conns_per_ip)",
			       peer, port, from, ip);
		return false;
	}
	if (lim->max_unauth == 0)
		return true;
	unauth_ip_max = lim->max_unauth / 4 > 4 ? lim->max_unauth / 4 : 4;
	if (m->st.unauth >= lim->max_unauth || unauth_from >= unauth_ip_max) {
		m->st.refused_unauth++;
		msgr_limit_log(m, ip,
			       "refused %s on port %u: %u connections still in their hello or "
			       "handshake, %u of them from %s (ms_max_unauth %u, %u per IP)",
			       peer, port, m->st.unauth, unauth_from, ip, lim->max_unauth,
			       unauth_ip_max);
		return false;
	}
	return true;
}

static void msgr_accepted(struct msgr *m, const struct fab_cqe *cqe)
{
	struct msgr_listener *l = m->listeners;
	const char *peer = fab_ep_peer_addr(cqe->ep);
	char ip[MSGR_IP_MAX];
	struct msgr_conn *c;

	while (l != NULL && l->l != cqe->listener)
		l = l->next;
	if (l == NULL) {
		fab_ep_close(cqe->ep); /* its listener was closed meanwhile */
		return;
	}
	msgr_addr_ip(peer, ip, sizeof(ip));
	if (!msgr_limits_admit(m, l, ip, peer)) {
		/* at once: nothing allocated for it, no hello sent */
		fab_ep_close(cqe->ep);
		return;
	}
	/* the default listener's owner authenticates with msgr_auth_set's set-up */
	c = msgr_conn_new(m, cqe->ep, l->ops, l->arg, l == m->listener ? m->auth : l->auth, NULL,
			  false);
	if (c == NULL) {
		fab_ep_close(cqe->ep);
		return;
	}
	c->accepted = true;
	c->from = l;
	l->nconns++;
	memcpy(c->ip, ip, sizeof(c->ip));
	c->unauth = true;
	c->deadline_ms = clock_now_ms() + m->lim.hello_timeout_ms;
	m->st.conns++;
	m->st.unauth++;
	m->st.accepted++;
	if (msgr_hello_send(c) != 0) {
		msgr_conn_close(c);
		return;
	}
	if (c->ops->accept_cb != NULL)
		c->ops->accept_cb(c, c->arg);
}

/* ------------------------------------------------------------ pausing */

void msgr_conn_pause(struct msgr_conn *c, bool pause)
{
	struct msgr *m = c->msgr;

	if (pause == c->paused)
		return;
	c->paused = pause;
	if (pause) {
		m->st.pauses++;
		m->st.paused++;
		return;
	}
	m->st.paused--;
	if (c->rx_head != NULL && !c->on_resume) {
		c->on_resume = true;
		c->rnext = m->resume;
		m->resume = c;
	}
}

bool msgr_conn_paused(const struct msgr_conn *c)
{
	return c->paused;
}

/* Keep a frame in its receive buffer until the connection is resumed. */
static int msgr_rx_keep(struct msgr_conn *c, const struct fab_cqe *cqe)
{
	struct msgr_rx *r = malloc(sizeof(*r));

	if (r == NULL)
		return -ENOMEM;
	r->next = NULL;
	r->cqe = *cqe;
	if (c->rx_tail != NULL)
		c->rx_tail->next = r;
	else
		c->rx_head = r;
	c->rx_tail = r;
	return 0;
}

/* Resumed connections: what waited goes, in order, until one pauses again. */
static unsigned int msgr_resume_run(struct msgr *m, unsigned int budget)
{
	unsigned int n = 0;

	while (m->resume != NULL && n < budget) {
		struct msgr_conn *c = m->resume;
		uint64_t id = c->id;

		m->resume = c->rnext;
		c->on_resume = false;
		while (c->rx_head != NULL && !c->paused && !c->failed && n < budget) {
			struct msgr_rx *r = c->rx_head;

			c->rx_head = r->next;
			if (c->rx_head == NULL)
				c->rx_tail = NULL;
			msgr_deliver(c, r->cqe.data, r->cqe.len);
			fab_recv_release(&r->cqe); /* valid even if the callback closed c */
			free(r);
			n++;
			if (msgr_conn_find(m, id) == NULL)
				break; /* closed by its owner: c is gone */
		}
		c = msgr_conn_find(m, id);
		if (c != NULL && c->rx_head != NULL && !c->paused && !c->on_resume) {
			c->on_resume = true; /* over the budget: next call */
			c->rnext = m->resume;
			m->resume = c;
		}
	}
	return n;
}

/* A peer wrote into our memory: allowed only once it said who it is. */
static void msgr_write_imm(struct msgr_conn *c, const struct fab_cqe *cqe)
{
	if (c->failed || c->refusal != NULL)
		return;
	if (!c->hello_done || c->ops->write_imm_cb == NULL) {
		log_warn("msgr", "%s: peer %s wrote into our memory %s; closing", c->msgr->name,
			 msgr_conn_peer(c),
			 c->hello_done ? "on a connection that takes no writes"
				       : "before its hello");
		msgr_conn_fail(c, -EPROTO);
		return;
	}
	c->ops->write_imm_cb(c, cqe->imm, cqe->len, c->arg);
}

static void msgr_handle(struct msgr *m, const struct fab_cqe *cqe)
{
	struct msgr_conn *c = cqe->ep != NULL ? fab_ep_ctx(cqe->ep) : NULL;
	uint64_t id;

	switch (cqe->kind) {
	case FAB_EV_RECV:
		/* paused, or frames still waiting from before: in order, after them */
		if (c != NULL && !c->failed && (c->paused || c->rx_head != NULL)) {
			if (msgr_rx_keep(c, cqe) == 0)
				break;
			msgr_conn_fail(c, -ENOMEM);
		} else if (c != NULL && !c->failed) {
			msgr_deliver(c, cqe->data, cqe->len);
		}
		fab_recv_release(cqe);
		break;
	case FAB_EV_WRITE_IMM:
		if (c != NULL)
			msgr_write_imm(c, cqe);
		break;
	case FAB_EV_READ:
	case FAB_EV_WRITE:
		if (cqe->kind == FAB_EV_READ && cqe->ctx != NULL && msgr_bulk_in_ours(m, cqe->ctx))
			msgr_read_done(m, cqe);
		else if (cqe->ctx != NULL && m->rma_cb != NULL)
			m->rma_cb(c, cqe, m->rma_arg);
		/* a failed write is followed by PEER_FAILED */
		break;
	case FAB_EV_ACCEPTED:
		msgr_accepted(m, cqe);
		break;
	case FAB_EV_CONNECTED:
		if (c == NULL)
			break;
		id = c->id;
		if (c->ops->connect_cb != NULL)
			c->ops->connect_cb(c, cqe->status, c->arg);
		/* A refused or timed-out connect is a failure like any other. */
		c = msgr_conn_find(m, id);
		if (cqe->status != 0 && c != NULL)
			msgr_conn_fail(c, cqe->status);
		break;
	case FAB_EV_PEER_FAILED:
		if (c != NULL && c->refusal != NULL)
			msgr_conn_fail(c, c->refuse_status);
		else if (c != NULL)
			msgr_conn_fail(c, cqe->status != 0 ? cqe->status : -ECONNRESET);
		break;
	case FAB_EV_SEND:
		break; /* nothing to do; a failure is followed by PEER_FAILED */
	}
}

/* Parked frames go out in order; refused connections past their linger fail. */
static void msgr_conns_service(struct msgr *m)
{
	uint64_t now = clock_now_ms();

	for (struct msgr_conn *c = m->conns, *next; c != NULL; c = next) {
		next = c->next; /* fail_cb may close c, and only c */
		if (c->pend_head != NULL)
			msgr_flush(c);
		if (c->overflow && !c->failed) {
			msgr_conn_fail(c, -ENOBUFS);
			continue; /* fail_cb may have closed c */
		}
		if (c->unauth && !c->failed && c->refusal == NULL && now >= c->deadline_ms) {
			/* before the auth link's own deadline: this line is rate-limited */
			m->st.hello_timeouts++;
			msgr_limit_log(m, c->ip, "closed %s: no hello%s within %u ms of its accept",
				       msgr_conn_peer(c), c->auth != NULL ? " and handshake" : "",
				       m->lim.hello_timeout_ms);
			msgr_conn_fail(c, -ETIMEDOUT);
			continue; /* fail_cb may have closed c */
		}
		if (c->refusal != NULL && !c->failed && now >= c->linger_until_ms) {
			msgr_conn_fail(c, c->refuse_status);
			continue; /* fail_cb may have closed c */
		}
		if (c->auth != NULL && c->refusal == NULL && !c->failed) {
			struct msgr_auth_conn ac;
			struct msgr_auth_out out;

			msgr_auth_conn_of(c, &ac);
			msgr_auth_act(c, msgr_auth_link_tick(c->auth, &ac, now, &out), &out);
		}
	}
}

int msgr_progress_budget(struct msgr *m, unsigned int budget)
{
	struct fab_cqe cqe;
	int rc, n = 0;

	/*
	 * A walk of every connection only while one needs it: frames parked, a
	 * refusal lingering, or (every 100 ms) authenticating links to tick for
	 * their handshake deadline and key expiry, and accepted connections
	 * still in their hello for theirs.
	 */
	if (m->nparked > 0 || m->nlinger > 0) {
		msgr_conns_service(m);
	} else if (m->nauth > 0 || m->st.unauth > 0) {
		uint64_t now = clock_now_ms();

		if (now >= m->next_auth_tick_ms) {
			m->next_auth_tick_ms = now + 100;
			msgr_conns_service(m);
		}
	}
	rc = fab_progress(m->dom, 0);
	if (rc < 0)
		return rc;
	if (budget == 0)
		budget = 256;
	if (m->resume != NULL)
		n = (int)msgr_resume_run(m, budget);
	/* One at a time: a callback may close an endpoint a later completion names. */
	for (unsigned int i = (unsigned int)n; i < budget && fab_cq_poll(m->dom, &cqe, 1) == 1;
	     i++) {
		msgr_handle(m, &cqe);
		n++;
	}
	return n + rc;
}

int msgr_progress(struct msgr *m)
{
	return msgr_progress_budget(m, 0);
}
