/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Connection set-up: the version and feature negotiation every Weft
 * connection starts with (docs/protocol.md, "Hello and negotiation").
 *
 * Both sides send a HELLO as their first frame, without waiting for the
 * other's, and then judge the peer's HELLO against their own with
 * proto_hello_check(). The verdict depends only on the two hellos, so both
 * sides reach the same one: when they cannot talk, each logs one line naming
 * both versions and closes; nothing else is sent or delivered on the
 * connection. The messenger (msgr/), the OSD's connections (osd/osd_hello.c)
 * and libweft's OSD connections (client/) all use this file and nothing
 * else; authentication (issue 17) comes after a successful hello.
 *
 * Rules for feature bits: a bit is added with the code that needs it, never
 * reused; a peer that knows a bit lists it in features; a bit goes into
 * required only once every version the compatibility promise of
 * docs/upgrade.md covers supports it. Until then the code must use the
 * feature only when both hellos have it (proto_hello_common()).
 */
#ifndef WEFT_PROTO_HELLO_H
#define WEFT_PROTO_HELLO_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h"

/* Protocol 1 as docs/protocol.md describes it for 0.1.0: every message type there. */
#define PROTO_FEAT_BASE (1ull << 0)
/* Messenger rendezvous for frames over ms_msg_size (BULK / BULK_DONE). */
#define PROTO_FEAT_BULK (1ull << 1)

/* OSD_OP_REPLY may carry the flags MAYBE and OSD (an error's OSD in version). */
#define PROTO_FEAT_REPLY_OSD (1ull << 2)

/* OSDs heartbeat each other on their cluster connections (PING/PONG, osd/osd_hb.c). */
#define PROTO_FEAT_OSD_PING (1ull << 3)
/* PG_STATS may carry the OSD's client I/O counters after its entries (weft status rates). */
#define PROTO_FEAT_IO_STATS (1ull << 4)
/*
 * OSD <-> OSD: replication control as proto frames (REPL_RING_REQ/GRANT/ACK,
 * PING/PONG) through the messenger. Before it (0.1.x) these were a framing
 * of their own that this build no longer speaks: an OSD refuses a cluster
 * peer without this bit (docs/upgrade.md).
 */
#define PROTO_FEAT_REPL_MSG (1ull << 5)

/*
 * The messenger authenticates (AUTH frames, then a MAC on every frame):
 * a peer without it is an older version that cannot, refused by a side
 * that requires authentication with a line saying so (msgr/msgr_auth.c).
 */
#define PROTO_FEAT_AUTH (1ull << 6)

/*
 * The monitor issues tickets and service keys (AUTH_TICKET, AUTH_SVC_KEYS):
 * ask it only then. Bit 7: bits 5 and 6 are REPL_MSG and AUTH.
 */
#define PROTO_FEAT_TICKETS (1ull << 7)

/*
 * Frame MACs may be AES-256-GMAC instead of HMAC-SHA256 (auth/session.h):
 * used when both hellos offer it; a peer without it keeps HMAC.
 */
#define PROTO_FEAT_GMAC (1ull << 8)

/*
 * A member answers a PG_ACTIVATE it applied with one flagged APPLIED: the
 * primary counts the member activated only then (an ACTIVATE lost with a
 * failed connection is noticed and the PG peers again, osd/pg/pg_peer.c).
 * Sent only to a primary with the bit; awaited only from a member with it.
 */
#define PROTO_FEAT_PG_ACT_ACK (1ull << 9)

#define PROTO_FEATS_SUPPORTED                                                                      \
	(PROTO_FEAT_BASE | PROTO_FEAT_BULK | PROTO_FEAT_REPLY_OSD | PROTO_FEAT_OSD_PING |           \
	 PROTO_FEAT_IO_STATS | PROTO_FEAT_REPL_MSG | PROTO_FEAT_AUTH | PROTO_FEAT_TICKETS |         \
	 PROTO_FEAT_GMAC | PROTO_FEAT_PG_ACT_ACK)
#define PROTO_FEATS_REQUIRED  (PROTO_FEAT_BASE | PROTO_FEAT_BULK)
/* The oldest protocol version this build still talks to. */
#define PROTO_VERSION_MIN 1u

/* Room for a refusal line (proto_hello_check, proto_hello_unexpected). */
#define PROTO_HELLO_WHY_MAX 512

/*
 * This process's hello for entity name ("osd.3", "mon.a", "client.admin"):
 * entity type from the name's prefix, this build's versions and features,
 * a nonce drawn once per process.
 */
void proto_hello_init(struct proto_hello *h, const char *name);

/*
 * Can local talk to peer? 0, or -EPROTONOSUPPORT with a one-line reason in
 * why naming the peer (peer_addr may be NULL) and both versions.
 */
int proto_hello_check(const struct proto_hello *local, const struct proto_hello *peer,
		      const char *peer_addr, char *why, size_t cap);

/* The refusal line for a first frame that is not a HELLO (a peer older than hellos). */
void proto_hello_unexpected(uint16_t type, const char *peer_addr, char *why, size_t cap);

/* Features both sides support: what the connection may use. */
static inline uint64_t proto_hello_common(const struct proto_hello *local,
					  const struct proto_hello *peer)
{
	return local->features & peer->features;
}

/* Encode h as a whole frame (tid 0) into buf. 0 or -ENOBUFS. */
int proto_hello_frame(const struct proto_hello *h, void *buf, size_t cap, size_t *len_out);

#endif
