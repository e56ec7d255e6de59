/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dos_peer: the attacker of tests/test_security_dos.sh (docs/security.md,
 * "Denial-of-service limits"). Raw fabric endpoints, frames built by hand,
 * every loop bounded.
 *
 *   dos_peer flood ADDR N HOLD_S BIND_IP silent|hello
 *       Opens N connections to ADDR from BIND_IP and holds them HOLD_S
 *       seconds: silent ones send nothing after the transport's own
 *       handshake; hello ones send a client's version hello and then
 *       nothing. Prints one JSON line: opened, connected (the transport
 *       handshake passed), closed (by the daemon, or never connected) and
 *       open (still open at the end).
 *   dos_peer op ADDR POOL PG EPOCH BIND_IP
 *       As a client, one read of object "dos" in (POOL, PG) claiming map
 *       EPOCH; prints "status N" (the OSD's answer, -errno) or "no reply".
 *   dos_peer pgmsg ADDR POOL PG EPOCH BIND_IP
 *       As osd.0 on a cluster port, a PG_QUERY for (POOL, PG) at EPOCH;
 *       prints "sent" and whether the OSD kept the connection after a second.
 *   dos_peer withhold ADDR N BIND_IP
 *       As a client that never gives a receive buffer back (so the OSD never
 *       gets a send credit after the first two), up to N ops as fast as the
 *       OSD reads them; prints how many went and whether the OSD closed the
 *       connection within 10 s of the last.
 *
 * Exit status: 0 done (whatever the daemon answered), 2 bad usage or set-up.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "fabric/fabric.h"
#include "proto/hello.h"
#include "proto/proto.h"

#define DOS_MAX_CONNS 4096
#define DOS_MSG_SIZE  8192

struct conn {
	struct fab_ep *ep;
	bool connected, closed;
	bool got_hello; /* the daemon's hello arrived */
	bool reply;	/* op: the answer arrived */
	int32_t status;
};

static struct fab_domain *dom;
static bool hold_recvs; /* withhold: never give a receive buffer back */
static struct fab_cqe held[64];
static unsigned int nheld;
static struct conn conns[DOS_MAX_CONNS];
static uint8_t frame[DOS_MSG_SIZE];

static void usage(void)
{
	fprintf(stderr, "usage: dos_peer flood ADDR N HOLD_S BIND_IP silent|hello\n"
			"       dos_peer op ADDR POOL PG EPOCH BIND_IP\n"
			"       dos_peer pgmsg ADDR POOL PG EPOCH BIND_IP\n"
			"       dos_peer withhold ADDR N BIND_IP\n");
	exit(2);
}

static int send_hello(struct conn *c, const char *name)
{
	struct proto_hello h;
	size_t len;
	int rc;

	proto_hello_init(&h, name);
	rc = proto_hello_frame(&h, frame, sizeof(frame), &len);
	return rc != 0 ? rc : fab_send(c->ep, frame, len, NULL);
}

static void on_event(const struct fab_cqe *cqe)
{
	struct conn *c = cqe->ep != NULL ? fab_ep_ctx(cqe->ep) : NULL;
	struct proto_hdr hdr;
	struct proto_msg msg;

	if (c == NULL) {
		fab_recv_release(cqe);
		return;
	}
	switch (cqe->kind) {
	case FAB_EV_CONNECTED:
		if (cqe->status == 0)
			c->connected = true;
		else
			c->closed = true;
		break;
	case FAB_EV_PEER_FAILED:
		c->closed = true;
		break;
	case FAB_EV_RECV:
		if (proto_frame_decode(cqe->data, cqe->len, PROTO_PAYLOAD_MAX, NULL, NULL, &hdr,
				       &msg) == 0) {
			if (msg.type == PROTO_HELLO)
				c->got_hello = true;
			else if (msg.type == PROTO_OSD_OP_REPLY) {
				c->reply = true;
				c->status = msg.osd_op_reply.status;
			}
		}
		if (!hold_recvs || nheld == 64)
			fab_recv_release(cqe);
		else
			held[nheld++] = *cqe;
		break;
	default:
		break;
	}
}

static void pump(int wait_ms)
{
	struct fab_cqe cqe;

	fab_progress(dom, 0);
	while (fab_cq_poll(dom, &cqe, 1) == 1)
		on_event(&cqe);
	if (wait_ms > 0)
		fab_wait(dom, wait_ms);
}

static int dos_flood(const char *addr, unsigned int n, unsigned int hold_s, const char *bind_ip,
		     bool hello)
{
	unsigned int opened = 0, connected = 0, closed = 0, open = 0;
	bool *helloed = calloc(n, sizeof(*helloed));
	uint64_t end;

	if (helloed == NULL)
		return 2;
	for (unsigned int i = 0; i < n; i++) {
		conns[i].ep = NULL;
		if (fab_connect(dom, addr, bind_ip, &conns[i], &conns[i].ep) != 0) {
			conns[i].closed = true;
			continue;
		}
		opened++;
		if (i % 32 == 31)
			pump(0); /* the daemon's answers flow while we open more */
	}
	end = clock_now_ms() + (uint64_t)hold_s * 1000;
	while (clock_now_ms() < end) {
		pump(50);
		for (unsigned int i = 0; hello && i < n; i++) {
			if (conns[i].connected && !conns[i].closed && !helloed[i]) {
				helloed[i] = true;
				send_hello(&conns[i], "client.dos");
			}
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		connected += conns[i].connected;
		closed += conns[i].closed;
		open += conns[i].connected && !conns[i].closed;
	}
	printf("{\"opened\": %u, \"connected\": %u, \"closed\": %u, \"open\": %u}\n", opened,
	       connected, closed, open);
	for (unsigned int i = 0; i < n; i++)
		if (conns[i].ep != NULL)
			fab_ep_close(conns[i].ep);
	free(helloed);
	return 0;
}

/* One connection through the hellos: 0, or -ETIMEDOUT / -ECONNRESET. */
static int dos_open(const char *addr, const char *bind_ip, const char *name, struct conn *c)
{
	uint64_t end = clock_now_ms() + 10000;
	int rc = fab_connect(dom, addr, bind_ip, c, &c->ep);

	if (rc != 0)
		return rc;
	while (!c->connected && !c->closed && clock_now_ms() < end)
		pump(10);
	if (!c->connected || c->closed)
		return -ECONNRESET;
	rc = send_hello(c, name);
	if (rc != 0)
		return rc;
	while (!c->got_hello && !c->closed && clock_now_ms() < end)
		pump(10);
	return c->got_hello && !c->closed ? 0 : -ETIMEDOUT;
}

static int dos_send(struct conn *c, const struct proto_msg *m)
{
	size_t len;
	int rc = proto_frame_encode(m, 1, frame, sizeof(frame), &len);

	return rc != 0 ? rc : fab_send(c->ep, frame, len, NULL);
}

static int dos_op(const char *addr, uint32_t pool, uint32_t pg, uint32_t epoch, const char *bind_ip)
{
	struct proto_msg m = {.type = PROTO_OSD_OP};
	struct conn *c = &conns[0];
	uint64_t end;
	int rc = dos_open(addr, bind_ip, "client.dos", c);

	if (rc != 0) {
		printf("cannot connect: %s\n", strerror(-rc));
		return 2;
	}
	m.osd_op.op = PROTO_OP_STAT;
	m.osd_op.pool = pool;
	m.osd_op.pg = pg;
	m.osd_op.epoch = epoch;
	strcpy(m.osd_op.name, "dos");
	m.osd_op.name_len = 3;
	rc = dos_send(c, &m);
	if (rc != 0) {
		printf("send: %s\n", strerror(-rc));
		return 2;
	}
	end = clock_now_ms() + 10000;
	while (!c->reply && !c->closed && clock_now_ms() < end)
		pump(10);
	if (c->reply)
		printf("status %d\n", c->status);
	else
		printf("no reply%s\n", c->closed ? " (closed)" : "");
	fab_ep_close(c->ep);
	return 0;
}

static int dos_pgmsg(const char *addr, uint32_t pool, uint32_t pg, uint32_t epoch,
		     const char *bind_ip)
{
	struct proto_msg m = {.type = PROTO_PG_QUERY};
	struct conn *c = &conns[0];
	uint64_t end;
	int rc = dos_open(addr, bind_ip, "osd.0", c);

	if (rc != 0) {
		printf("cannot connect: %s\n", strerror(-rc));
		return 2;
	}
	m.pg.pool = pool;
	m.pg.pg = pg;
	m.pg.epoch = epoch;
	m.pg.from = 0;
	rc = dos_send(c, &m);
	if (rc != 0) {
		printf("send: %s\n", strerror(-rc));
		return 2;
	}
	end = clock_now_ms() + 1000;
	while (!c->closed && clock_now_ms() < end)
		pump(10);
	printf("sent; connection %s\n", c->closed ? "closed by the OSD" : "kept");
	fab_ep_close(c->ep);
	return 0;
}

static int dos_withhold(const char *addr, unsigned int n, const char *bind_ip)
{
	struct proto_msg m = {.type = PROTO_OSD_OP};
	struct conn *c = &conns[0];
	unsigned int sent = 0;
	uint64_t end = clock_now_ms() + 60000;
	int rc;

	hold_recvs = true;
	rc = dos_open(addr, bind_ip, "client.dos", c);
	if (rc != 0) {
		printf("cannot connect: %s\n", strerror(-rc));
		return 2;
	}
	/* an op from an old map: answered at once (-ESTALE), each answer a frame to us */
	m.osd_op.op = PROTO_OP_STAT;
	m.osd_op.pool = 1;
	m.osd_op.pg = 0;
	m.osd_op.epoch = 1;
	strcpy(m.osd_op.name, "dos");
	m.osd_op.name_len = 3;
	while (sent < n && !c->closed && clock_now_ms() < end) {
		rc = dos_send(c, &m);
		if (rc == -EAGAIN) {
			pump(1); /* our send queue is full: the OSD reads on */
			continue;
		}
		if (rc != 0)
			break;
		if (++sent % 64 == 0)
			pump(0);
	}
	end = clock_now_ms() + 10000;
	while (!c->closed && clock_now_ms() < end)
		pump(10);
	printf("sent %u; connection %s\n", sent, c->closed ? "closed by the OSD" : "kept");
	while (nheld > 0)
		fab_recv_release(&held[--nheld]);
	fab_ep_close(c->ep);
	return 0;
}

int main(int argc, char **argv)
{
	struct fab_domain_attr attr;
	int rc;

	if (argc < 2)
		usage();
	fab_domain_attr_init(&attr);
	attr.backend = "tcp";
	attr.msg_size = DOS_MSG_SIZE;
	attr.recv_credits = argc > 1 && !strcmp(argv[1], "withhold") ? 2 : 8;
	attr.name = "dos_peer";
	if (fab_domain_open(&attr, &dom) != 0) {
		fprintf(stderr, "dos_peer: cannot open a tcp domain\n");
		return 2;
	}
	if (!strcmp(argv[1], "flood") && argc == 7) {
		unsigned int n = (unsigned int)strtoul(argv[3], NULL, 10);

		if (n == 0 || n > DOS_MAX_CONNS)
			usage();
		rc = dos_flood(argv[2], n, (unsigned int)strtoul(argv[4], NULL, 10), argv[5],
			       !strcmp(argv[6], "hello"));
	} else if (!strcmp(argv[1], "op") && argc == 7) {
		rc = dos_op(argv[2], (uint32_t)strtoul(argv[3], NULL, 0),
			    (uint32_t)strtoul(argv[4], NULL, 0),
			    (uint32_t)strtoul(argv[5], NULL, 0), argv[6]);
	} else if (!strcmp(argv[1], "withhold") && argc == 5) {
		rc = dos_withhold(argv[2], (unsigned int)strtoul(argv[3], NULL, 10), argv[4]);
	} else if (!strcmp(argv[1], "pgmsg") && argc == 7) {
		rc = dos_pgmsg(argv[2], (uint32_t)strtoul(argv[3], NULL, 0),
			       (uint32_t)strtoul(argv[4], NULL, 0),
			       (uint32_t)strtoul(argv[5], NULL, 0), argv[6]);
	} else {
		usage();
		rc = 2;
	}
	fab_domain_close(dom);
	return rc;
}
