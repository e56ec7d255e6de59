/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The monitors' Raft port, authenticated: a struct raft_uv_transport (raft's
 * public transport interface) of Weft's own, over libuv TCP, that runs the
 * mutual handshake of auth/handshake.h before canonical raft gets a stream.
 *
 * Both sides prove they hold the monitors' shared mon. key: HMAC-SHA256
 * over a transcript binding the cluster fsid, both entity names (the
 * connecting monitor is mon.<name>, the listening side answers as mon.,
 * the holder of the shared key) and both TCP addresses of this connection,
 * with a fresh nonce from each side. Then the connecting side sends IDENT
 * (mon_raft_wire.h: its raft id and address, and the id it meant to reach)
 * under the session key. Only then is the stream handed to raft's accept
 * callback (inbound) or connect callback (outbound): a peer without the
 * key never gets one byte to raft's decoder, let alone into the log.
 *
 * Every stage reads exactly one frame (the read buffer is the frame's
 * remaining bytes), so no byte of raft's own stream is ever consumed here.
 *
 * Limits: a handshake has timeout_ms to finish (inbound and outbound); at
 * most unauth_max inbound handshakes run at once, and at most a quarter of
 * them (at least 4) from one IP. A refusal is logged once per peer IP and
 * reason per minute (with the count of the ones not logged) and closes the
 * connection. Outbound, the connection binds to our own Raft IP, so the
 * peer sees (and the transcript binds) the address it knows us by.
 */
#ifndef WEFT_MON_RAFT_AUTH_H
#define WEFT_MON_RAFT_AUTH_H

#include <raft.h>
#include <raft/uv.h>
#include <stdbool.h>
#include <stdint.h>
#include <uv.h>

#include "auth/handshake.h"
#include "auth/key.h"

struct mon_raft_auth_conf {
	const char *name;	     /* "mon.a": log lines and our entity in the transcript */
	struct auth_key key;	     /* mon. */
	bool have_key;		     /* false (mkfs): listen and connect are refused */
	uint8_t fsid[AUTH_FSID_LEN]; /* the conf's fsid, zeros when it sets none */
	uint64_t timeout_ms;	     /* mon_raft_handshake_timeout */
	unsigned int unauth_max;     /* mon_raft_unauth_max */
};

struct mon_raft_auth_stats {
	uint64_t accepted;	 /* inbound handshakes that passed (streams given to raft) */
	uint64_t refused;	 /* inbound: bad frame, bad proof, bad IDENT, closed early */
	uint64_t timed_out;	 /* inbound: no complete handshake within the timeout */
	uint64_t over_limit;	 /* inbound: closed at once, too many handshakes running */
	uint64_t connected;	 /* outbound handshakes that passed */
	uint64_t connect_failed; /* outbound: the peer refused or did not prove the key */
	unsigned int in_handshake;
};

/* Set up t (like raft_uv_tcp_init); conf is copied. 0 or -ENOMEM. */
int mon_raft_auth_init(struct raft_uv_transport *t, uv_loop_t *loop,
		       const struct mon_raft_auth_conf *conf);
/* Release t's memory, once raft closed it (like raft_uv_tcp_close). */
void mon_raft_auth_close(struct raft_uv_transport *t);
void mon_raft_auth_stats(const struct raft_uv_transport *t, struct mon_raft_auth_stats *out);

#endif
