/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Replication control between a primary and its replicas on the cluster
 * network (docs/osd.md, "Replication ring"). The records themselves travel
 * one-sided (write_imm into the replica's ring, their header in
 * osd/osd_wire.c); these frames set the ring up and return its space.
 * Included by proto/proto.h (after struct proto_rkey); do not include it
 * alone. Layouts: docs/protocol.md.
 */
#ifndef WEFT_PROTO_PROTO_REPL_H
#define WEFT_PROTO_PROTO_REPL_H

#include <stdint.h>

/* REPL_RING_REQ, primary -> replica: "I am osd.N; give me a ring". */
struct proto_repl_ring_req {
	uint32_t osd_id;
};

/* REPL_RING_GRANT, replica -> primary: the ring registered for that primary. */
struct proto_repl_ring_grant {
	struct proto_rkey ring; /* len > 0; addr + len does not overflow */
};

/* REPL_ACK, replica -> primary: the record at ring_off is durable (or refused). */
struct proto_repl_ack {
	uint64_t ring_off;
	uint32_t pool, pg;
	uint64_t version;
	int32_t status; /* 0 or -errno (<= 0) */
};

#endif
