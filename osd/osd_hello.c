/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OSD's side of the connection hello (proto/hello.h) on its own
 * fabric connections (clients on the public network, peers and replicas
 * on the cluster network; the mon connection goes through msgr, which does
 * the same). osd_conn_new() sends ours before anything else; the peer's
 * first frame must be its hello, which osd_hello_recv() judges. Until it
 * is accepted nothing from the peer reaches the op, replication or
 * peering code, and a refusal closes the connection with one log line.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd.h"
#include "proto/hello.h"

#define OSD_HELLO_LINGER_MS 2000

int osd_hello_send(struct osd_conn *c)
{
	uint8_t buf[512];
	size_t len;
	int rc;

	if (c->osd->hello.name_len == 0)
		proto_hello_init(&c->osd->hello, c->osd->name);
	rc = proto_hello_frame(&c->osd->hello, buf, sizeof(buf), &len);
	return rc != 0 ? rc : osd_conn_send(c, buf, len);
}

void osd_hello_recv(struct osd_conn *c, const void *data, size_t len)
{
	const char *peer = fab_ep_peer_addr(c->ep);
	char why[PROTO_HELLO_WHY_MAX], who[96];
	struct proto_hdr hdr;
	struct proto_msg msg;
	int rc;

	snprintf(who, sizeof(who), "%s peer %s", c->osd->name, peer);
	if (proto_frame_decode(data, len, c->osd->msg_size, who, NULL, &hdr, &msg) != 0) {
		c->failed = true; /* logged by the decoder */
		return;
	}
	if (msg.type != PROTO_HELLO) {
		proto_hello_unexpected(msg.type, peer, why, sizeof(why));
		rc = -EPROTONOSUPPORT;
	} else {
		rc = proto_hello_check(&c->osd->hello, &msg.hello, peer, why, sizeof(why));
	}
	if (rc != 0) {
		/*
		 * Open a little longer, delivering nothing (osd_net.c), so our
		 * queued hello reaches the peer and it logs its side too.
		 */
		log_error("osd", "%s: %s", c->osd->name, why);
		c->refused_until_ms = clock_now_ms() + OSD_HELLO_LINGER_MS;
		return;
	}
	c->hello_done = true;
	c->peer_features = proto_hello_common(&c->osd->hello, &msg.hello);
	/* a client's nonce is its instance (client.c draws one per cluster handle) */
	if (c->kind == OSD_CONN_CLIENT && msg.hello.entity_type == PROTO_ENTITY_CLIENT)
		c->peer_instance = msg.hello.nonce;
	log_debug("osd", "%s: peer %s is %s (weft %s)", c->osd->name, peer, msg.hello.name,
		  msg.hello.version);
}
