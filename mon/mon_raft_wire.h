/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What travels on the monitors' Raft port before canonical raft gets the
 * stream (mon/mon_raft_auth.c): framed handshake messages, then one IDENT.
 *
 *   frame = u32 magic "wra1" | u32 length (1..MON_RAFT_FRAME_MAX) | payload
 *
 * The payloads are auth/handshake.h's HELLO, CHALLENGE, PROOF and DONE
 * (method KEY, the monitors' shared mon. key), then from the connecting
 * monitor
 *
 *   IDENT = u8 kind (5) | u64 from_id | str16 from_addr | u64 to_id |
 *           bytes[32] HMAC-SHA256(session key, label || the bytes before it)
 *
 * the raft id and Raft address canonical raft's accept callback wants (its
 * own TCP transport sends them unauthenticated), and the id the connecting
 * side meant to reach. The MAC is under the session key both sides derived
 * from the handshake, so IDENT belongs to this connection and this
 * handshake only. Pure functions, bounded like proto/: fuzzed.
 */
#ifndef WEFT_MON_RAFT_WIRE_H
#define WEFT_MON_RAFT_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "auth/crypto.h"
#include "auth/key.h"
#include "proto/codec.h"
#include "proto/proto.h"

#define MON_RAFT_MAGIC	    0x31617277u /* "wra1" */
#define MON_RAFT_HDR_LEN    8
#define MON_RAFT_FRAME_MAX  1024
#define MON_RAFT_IDENT_KIND 5

/* Write the 8-byte header of a frame of len payload bytes. */
void mon_raft_frame_hdr(uint8_t hdr[MON_RAFT_HDR_LEN], uint32_t len);
/* The payload length of a header: 0, or -EBADMSG and why in err. */
int mon_raft_frame_hdr_decode(const uint8_t hdr[MON_RAFT_HDR_LEN], struct proto_err *err,
			      uint32_t *len_out);

struct mon_raft_ident {
	uint64_t from_id;
	char from_addr[PROTO_ADDR_MAX + 1];
	uint64_t to_id;
};

int mon_raft_ident_encode(const struct auth_key *session, const struct mon_raft_ident *id,
			  void *out, size_t cap, size_t *len_out);
/*
 * Decode and check the MAC under session: 0; -EBADMSG (malformed) or
 * -EACCES (the MAC does not verify), with one line in err.
 */
int mon_raft_ident_decode(const struct auth_key *session, const void *buf, size_t len,
			  struct proto_err *err, struct mon_raft_ident *id_out);

#endif
