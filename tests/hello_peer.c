/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A peer from the future for the version-mismatch case of
 * tests/test_multihost.sh: it requires a feature bit no weft has
 * (FEAT_FUTURE) and connects to a real daemon.
 *
 *   hello_peer mon ADDR    through msgr, as a client of the monitor
 *   hello_peer osd ADDR    raw fabric to an OSD's public address
 *
 * Passes (exit 0) when this side refuses the daemon for lacking the bit,
 * naming the daemon and its version, and the daemon closes the connection
 * without sending anything but its hello (its own refusal line is in its
 * log, which the script checks). Bounded: 15 s.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "fabric/fabric.h"
#include "msgr/msgr.h"
#include "proto/hello.h"

#define FEAT_FUTURE (1ull << 40)

static struct proto_hello future;
static int fails, fail_status, recvs;
static char refusal[PROTO_HELLO_WHY_MAX];

static void recv_cb(struct msgr_conn *conn, const struct proto_hdr *hdr,
		    const struct proto_msg *msg, void *arg)
{
	recvs++;
}

static void fail_cb(struct msgr_conn *conn, int status, void *arg)
{
	const char *why = msgr_conn_refusal(conn);

	fails++;
	fail_status = status;
	snprintf(refusal, sizeof(refusal), "%s", why ? why : "");
	msgr_conn_close(conn);
}

static int peer_mon(const char *addr)
{
	static const struct msgr_ops ops = {.recv_cb = recv_cb, .fail_cb = fail_cb};
	struct proto_msg ping = {.type = PROTO_PING};
	struct fab_domain_attr attr;
	struct msgr_conn *c;
	struct msgr *m;
	uint64_t deadline = clock_now_ms() + 15000;

	fab_domain_attr_init(&attr);
	attr.backend = "tcp";
	attr.name = "client.future";
	if (msgr_create(&attr, &ops, NULL, &m) != 0)
		return 1;
	msgr_hello_set(m, &future);
	if (msgr_connect(m, addr, NULL, &c) != 0)
		return 1;
	msgr_send(c, &ping, 1);
	while (fails == 0 && clock_now_ms() < deadline) {
		msgr_progress(m);
		msgr_wait(m, 10);
	}
	msgr_destroy(m);
	printf("mon %s: status %d, frames delivered %d, refusal: %s\n", addr, fail_status, recvs,
	       refusal);
	return fail_status == -EPROTONOSUPPORT && recvs == 0 && strstr(refusal, "lacks") &&
		       strstr(refusal, "mon.")
		   ? 0
		   : 1;
}

static int peer_osd(const char *addr)
{
	struct fab_domain_attr attr;
	struct fab_domain *dom;
	struct fab_ep *ep;
	uint8_t buf[512];
	size_t len;
	int frames = 0, rc = -1, closed = 0;
	uint64_t deadline = clock_now_ms() + 15000;

	fab_domain_attr_init(&attr);
	attr.backend = "tcp";
	attr.name = "client.future";
	if (fab_domain_open(&attr, &dom) != 0 || fab_connect(dom, addr, NULL, NULL, &ep) != 0)
		return 1;
	if (proto_hello_frame(&future, buf, sizeof(buf), &len) != 0 ||
	    fab_send(ep, buf, len, NULL) != 0)
		return 1;
	while (!closed && clock_now_ms() < deadline) {
		struct fab_cqe cqe;

		fab_progress(dom, 0);
		while (fab_cq_poll(dom, &cqe, 1) == 1) {
			if (cqe.kind == FAB_EV_RECV) {
				struct proto_hdr hdr;
				struct proto_msg msg;

				if (frames++ == 0 &&
				    proto_frame_decode(cqe.data, cqe.len, PROTO_PAYLOAD_MAX, "osd",
						       NULL, &hdr, &msg) == 0 &&
				    msg.type == PROTO_HELLO)
					rc = proto_hello_check(&future, &msg.hello, addr, refusal,
							       sizeof(refusal));
				fab_recv_release(&cqe);
			} else if (cqe.kind == FAB_EV_PEER_FAILED ||
				   (cqe.kind == FAB_EV_CONNECTED && cqe.status != 0)) {
				closed = 1;
			}
		}
		fab_wait(dom, 10);
	}
	fab_ep_close(ep);
	fab_domain_close(dom);
	printf("osd %s: frames %d, closed by the osd %d, refusal: %s\n", addr, frames, closed,
	       refusal);
	return rc == -EPROTONOSUPPORT && frames == 1 && closed && strstr(refusal, "lacks") &&
		       strstr(refusal, "osd.")
		   ? 0
		   : 1;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: hello_peer mon|osd ADDR\n");
		return 2;
	}
	proto_hello_init(&future, "client.future");
	future.features |= FEAT_FUTURE;
	future.required |= FEAT_FUTURE;
	snprintf(future.version, sizeof(future.version), "9.0.0 (git 0123456789ab)");
	future.version_len = strlen(future.version);
	return !strcmp(argv[1], "mon") ? peer_mon(argv[2]) : peer_osd(argv[2]);
}
