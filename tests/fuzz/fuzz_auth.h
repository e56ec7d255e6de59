/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by fuzz_auth.c and auth_corpus_gen.c: the selector byte and the fixed keys. */
#ifndef WEFT_TESTS_FUZZ_AUTH_H
#define WEFT_TESTS_FUZZ_AUTH_H

#include "auth/ticket.h"

enum {
	FUZZ_AUTH_HELLO = 0,
	FUZZ_AUTH_CHALLENGE,
	FUZZ_AUTH_PROOF,
	FUZZ_AUTH_DONE,
	FUZZ_AUTH_TICKET,
	FUZZ_AUTH_SEALED,
	FUZZ_AUTH_GRANT,
	FUZZ_AUTH_MON_OP,     /* mon/mon_auth.c: a Raft entry's op */
	FUZZ_AUTH_MON_DB,     /* mon/mon_auth.c: the snapshot's database */
	FUZZ_AUTH_SESS_HELLO, /* auth/session.c: a server session given this HELLO */
	FUZZ_AUTH_SESS_PROOF, /* a server session past its CHALLENGE given this PROOF */
	FUZZ_AUTH_SESS_FRAME, /* an open session given this frame (MAC trailer at its end) */
	FUZZ_AUTH_SVC_KEYS,   /* auth/ticket.c: a set of service keys (snapshot, OSDs' copy) */
	FUZZ_AUTH_SVC_OP,     /* mon/mon_auth_svc.c: a rotation's Raft entry */
	FUZZ_AUTH_RAFT_HDR,   /* mon/mon_raft_wire.c: a Raft-port frame header */
	FUZZ_AUTH_RAFT_IDENT, /* mon/mon_raft_wire.c: IDENT, under a fixed session key */
	FUZZ_AUTH_KINDS,
};

/* The fuzzer's "now": fixed, so a seed's verdict never depends on the date. */
#define FUZZ_AUTH_NOW (1800000000ull * 1000000)

void fuzz_auth_svc_keys(struct auth_svc_keys *sk);
/* The session key IDENT seeds are MAC'd with. */
#define FUZZ_AUTH_SESSION_BYTE 0x5a

#endif
