/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The monitors' auth database: every entity's key and caps, kept in the
 * Raft-replicated state beside the cluster map but never in it (the map is
 * pushed to every client and OSD; keys must not be).
 *
 * Changes are their own kind of Raft log entry. A map increment entry is
 * framed [u32 length][increment][zero padding to 8]; an auth entry is
 * [u32 MON_ENTRY_TAG_AUTH][u32 length][op][padding]. The tag is larger
 * than any length a map entry can have (the FSM already refuses a length
 * beyond the entry), so every existing log reads as before.
 *
 * A snapshot is two buffers, the map then the auth database with a
 * trailer [u32 length][u32 MON_SNAP_AUTH_MAGIC]; a snapshot without the
 * trailer (written before this change) restores the map alone.
 *
 * The database holds the service keys too (mon_auth_svc.c): its encoding
 * is version 2 when there are any (version 1 otherwise, as before), and
 * their rotations are a third kind of log entry,
 * [u32 MON_ENTRY_TAG_SVC][u32 length][svc op][padding].
 */
#ifndef WEFT_MON_AUTH_H
#define WEFT_MON_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth/caps.h"
#include "auth/key.h"
#include "auth/ticket.h"
#include "proto/codec.h"

#define MON_ENTRY_TAG_AUTH 0xfffffa01u
#define MON_ENTRY_TAG_SVC 0xfffffa02u
#define MON_SNAP_AUTH_MAGIC 0x48545541u /* "AUTH" */
#define MON_AUTH_MAX 100000		/* entities */

struct mon_auth_ent {
	char entity[AUTH_ENTITY_MAX];
	struct auth_key key;
	struct auth_caps caps;
	/* After auth rotate: the previous key, accepted until old_until_us. */
	struct auth_key old_key;
	uint64_t old_until_us; /* 0 = none */
};

struct mon_auth {
	struct mon_auth_ent *ents;
	uint32_t count, cap;
	/* the rotating service keys that seal tickets (mon_auth_svc.c): never in the map */
	struct auth_svc_keys svc;
};

enum mon_auth_op_kind {
	MON_AUTH_OP_ADD = 1,	/* a new entity; refused when it exists */
	MON_AUTH_OP_CAPS = 2,	/* replace an entity's caps */
	MON_AUTH_OP_RM = 3,	/* remove an entity */
	MON_AUTH_OP_ROTATE = 4, /* a new key; the old one kept for grace_us */
};

struct mon_auth_op {
	uint8_t kind;
	char entity[AUTH_ENTITY_MAX];
	struct auth_key key;   /* ADD, ROTATE: chosen by the leader, so every replica agrees */
	struct auth_caps caps; /* ADD, CAPS */
	uint64_t stamp_us;     /* the leader's wall clock when proposed */
	uint64_t grace_us;     /* ROTATE */
};

void mon_auth_init(struct mon_auth *db);
void mon_auth_free(struct mon_auth *db);
const struct mon_auth_ent *mon_auth_find(const struct mon_auth *db, const char *entity);

int mon_auth_op_encode(const struct mon_auth_op *op, void **buf_out, size_t *len_out);
int mon_auth_op_decode(const void *buf, size_t len, struct proto_err *err,
		       struct mon_auth_op *op_out);
/* Apply one op (the same on every replica): 0, -EEXIST, -ENOENT, -ENOMEM. */
int mon_auth_apply(struct mon_auth *db, const struct mon_auth_op *op);

int mon_auth_db_encode(const struct mon_auth *db, void **buf_out, size_t *len_out);
int mon_auth_db_decode(const void *buf, size_t len, struct proto_err *err,
		       struct mon_auth *db_out);

/* ----------------------------------------- service keys (mon_auth_svc.c) */

enum mon_svc_op_kind {
	MON_SVC_OP_ROTATE = 1, /* auth_svc_advance(): pending -> current, a new pending key */
};

struct mon_svc_op {
	uint8_t kind;
	uint32_t new_id;     /* must be the next id: the FSM refuses it otherwise (-ESTALE) */
	struct auth_key key; /* the new pending key, chosen by the leader */
	uint64_t stamp_us;   /* the leader's wall clock: retire / activate / create time */
	uint64_t grace_us;   /* how long a retired key still opens tickets */
};

int mon_svc_op_encode(const struct mon_svc_op *op, void **buf_out, size_t *len_out);
int mon_svc_op_decode(const void *buf, size_t len, struct proto_err *err,
		      struct mon_svc_op *op_out);
/* The same on every replica: 0, -ESTALE (not the next id), -EINVAL (unknown kind). */
int mon_svc_apply(struct mon_auth *db, const struct mon_svc_op *op);
/*
 * The schedule, from auth_service_ticket_ttl: a key is current for half a
 * ticket's lifetime, and a retired key opens tickets for 1.25 lifetimes
 * (every ticket it sealed, with room for clock skew and late renewals).
 */
uint64_t mon_svc_rotate_every(uint64_t ttl_us);
uint64_t mon_svc_grace(uint64_t ttl_us);
/* Whether the leader should rotate at now_us: no current or pending key yet, or it is time. */
bool mon_svc_rotate_due(const struct auth_svc_keys *sk, uint64_t now_us, uint64_t ttl_us);

/*
 * Tickets (mon_auth_svc.c, pure: the handler in mon_ticket.c gives the
 * peer's authenticated entity and its session's seal key, msgr_conn_seal_key).
 *
 * mon_ticket_build: the grant (auth/ticket.h) for entity's ticket to the
 * OSDs, valid ttl_us from now_us, with the caps the database holds now,
 * sealed under the current service key, its session key sealed under
 * conn_session. 0; -ENOENT (no such entity: removed since it
 * authenticated), -EACCES (it has no osd caps), -EAGAIN (no current
 * service key yet: the first leader has not rotated), with one line in why.
 *
 * mon_svc_keys_build: the service keys, sealed under conn_session, for
 * osd.N only (an OSD entity in the database whose mon caps allow rw,
 * 'profile osd'); *len_out 0 when have_id is already the newest key (the
 * pending one). -EACCES with why otherwise.
 */
int mon_ticket_build(const struct mon_auth *db, const char *entity,
		     const struct auth_key *conn_session, uint64_t now_us, uint64_t ttl_us,
		     void *out, size_t cap, size_t *len_out, char *why, size_t whycap);
int mon_svc_keys_build(const struct mon_auth *db, const char *entity,
		       const struct auth_key *conn_session, uint32_t have_id, void *out, size_t cap,
		       size_t *len_out, char *why, size_t whycap);

/*
 * Split a snapshot into the map part and the auth part (auth_len 0 when
 * the snapshot has no auth trailer).
 */
void mon_auth_snap_split(const uint8_t *buf, size_t len, size_t *map_len_out,
			 const uint8_t **auth_out, size_t *auth_len_out);

#endif
