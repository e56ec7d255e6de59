/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Weft wire protocol, version 1: a fixed 32-byte header followed by a typed
 * payload. docs/protocol.md has the byte layouts and the validation rules.
 *
 *   frame   = header (32 bytes) + payload (header.payload_len bytes)
 *   decode  = proto_hdr_decode (header alone) -> proto_payload_check (crc)
 *             -> proto_msg_decode (typed, validated)
 *           or proto_frame_decode, which does all three and logs one line
 *
 * Rules every decoder keeps:
 *  - Every length, count and offset is checked before use; nothing is read
 *    outside [buf, buf+len). Malformed input returns -EBADMSG.
 *  - Decoders never log. They describe the first failure in a struct
 *    proto_err (optional). proto_frame_decode() logs that one line with the
 *    peer's name, or nothing when who is NULL (tests, fuzzer).
 *  - Out-parameters are written only on success.
 *  - Decoding is canonical: a decoded message re-encodes to the same bytes
 *    (trailing bytes, unknown flag bits and non-zero reserved fields are
 *    rejected).
 *  - Strings are copied NUL-terminated into fixed arrays in the message
 *    struct (a NUL inside a wire string is malformed) and carry their
 *    length. Bulk bytes (inline data, map blobs) are views into the input
 *    buffer: they live as long as it does.
 */
#ifndef WEFT_PROTO_PROTO_H
#define WEFT_PROTO_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/codec.h"

/* ------------------------------------------------------------------ header */

#define PROTO_MAGIC 0x54464557u /* bytes 'W' 'E' 'F' 'T' on the wire */
#define PROTO_VERSION 1u
#define PROTO_HDR_LEN 32u
#define PROTO_HDR_CRC_OFF 28u /* header_crc32c covers bytes [0, 28) */
/* No header flag is defined in version 1: every bit must be 0. */
#define PROTO_HDR_FLAGS_KNOWN 0x00u
/* Hard ceiling for any payload; callers pass a smaller limit (fab msg_size). */
#define PROTO_PAYLOAD_MAX (16u << 20)

enum proto_type {
	PROTO_HELLO = 1,
	PROTO_AUTH_CHALLENGE = 2,
	PROTO_AUTH_RESPONSE = 3,
	PROTO_PING = 4,
	PROTO_PONG = 5,
	PROTO_ERROR = 6,
	PROTO_AUTH = 7,	     /* msgr: a message of the authentication handshake (proto_mon.h) */
	PROTO_BULK = 8,	     /* msgr rendezvous: pull a large frame (proto_mon.h) */
	PROTO_BULK_DONE = 9,
	PROTO_MAP_GET = 16,
	PROTO_MAP = 17,
	PROTO_OSD_OP = 32,
	PROTO_OSD_OP_REPLY = 33,
	/* monitor service (proto_mon.h, msg_mon.c) */
	PROTO_MON_CMD = 48,
	PROTO_MON_CMD_REPLY = 49,
	PROTO_MON_SUB = 50,
	PROTO_MAP_INC = 51, /* struct proto_map: blob is one map increment */
	PROTO_OSD_BOOT = 52,
	PROTO_OSD_BEACON = 53,
	PROTO_OSD_FAILURE = 54,
	PROTO_PG_STATS = 55, /* OSD -> mon: state of the PGs it leads (proto_pg.h) */
	/* tickets and service keys (proto_mon.h; docs/security.md, "Tickets") */
	PROTO_AUTH_TICKET = 56,
	PROTO_AUTH_TICKET_REPLY = 57,
	PROTO_AUTH_SVC_KEYS = 58,
	PROTO_AUTH_SVC_KEYS_REPLY = 59,
	/* PG peering, recovery, scrub between OSDs (proto_pg.h, msg_pg.c) */
	PROTO_PG_QUERY = 64,
	PROTO_PG_INFO = 65,
	PROTO_PG_LOG_REQ = 66,
	PROTO_PG_LOG = 67,
	PROTO_PG_ACTIVATE = 68,
	PROTO_PG_PULL = 69,
	PROTO_PG_RECOVERED = 70,
	PROTO_PG_SCAN_REQ = 71,
	PROTO_PG_SCAN = 72,
	PROTO_PG_DELETE = 73,
	PROTO_PG_NOTIFY = 74, /* stray -> primary: "I hold a copy" (INFO's layout) */
	/* replication control between OSDs (proto_repl.h, msg_repl.c); PING/PONG heartbeats */
	PROTO_REPL_RING_REQ = 80,
	PROTO_REPL_RING_GRANT = 81,
	PROTO_REPL_ACK = 82,
};

struct proto_hdr {
	uint8_t version;
	uint8_t flags;
	uint16_t type;	   /* enum proto_type */
	uint32_t payload_len;
	uint32_t payload_crc; /* crc32c(0, payload, payload_len) */
	uint64_t tid;	   /* transaction id; a reply carries its request's */
};

/* "osd_op", ... for known types; "unknown" otherwise. */
const char *proto_type_name(uint16_t type);
bool proto_type_known(uint16_t type);

/*
 * Write the 32-byte header for hdr (version forced to PROTO_VERSION, magic,
 * reserved 0 and header crc filled in) to out.
 */
void proto_hdr_encode(const struct proto_hdr *hdr, uint8_t out[PROTO_HDR_LEN]);
/*
 * Decode and check a header from the first PROTO_HDR_LEN bytes of buf:
 * len >= 32, magic, version, flags, known type, reserved == 0, header crc,
 * payload_len <= max_payload (itself capped at PROTO_PAYLOAD_MAX). The
 * payload is not looked at. 0 or -EBADMSG.
 */
int proto_hdr_decode(const void *buf, size_t len, uint32_t max_payload, struct proto_err *err,
		     struct proto_hdr *hdr_out);
/* len == hdr->payload_len and the payload crc matches. 0 or -EBADMSG. */
int proto_payload_check(const struct proto_hdr *hdr, const void *payload, size_t len,
			struct proto_err *err);

/* ---------------------------------------------------------------- messages */

#define PROTO_NAME_MAX 63	 /* entity names: "client.admin", "osd.12" */
#define PROTO_OBJ_NAME_MAX 1024	 /* object names */
#define PROTO_ERRMSG_MAX 255	 /* ERROR message text */
#define PROTO_NONCE_LEN 32	 /* AUTH_CHALLENGE nonce */
#define PROTO_HMAC_LEN 32	 /* AUTH_RESPONSE HMAC-SHA256 */
#define PROTO_MAP_BLOB_MAX PROTO_PAYLOAD_MAX

enum proto_entity_type {
	PROTO_ENTITY_CLIENT = 1,
	PROTO_ENTITY_OSD = 2,
	PROTO_ENTITY_MON = 3,
};

#define PROTO_VERSTR_MAX 63 /* HELLO software version text: "0.1.0 (git c9582dd3d2d4)" */

/*
 * First message each side sends on a connection, before anything else;
 * proto/hello.h decides from the two hellos whether the peers can talk.
 */
struct proto_hello {
	uint8_t entity_type; /* enum proto_entity_type */
	char name[PROTO_NAME_MAX + 1];
	size_t name_len;	/* 1..PROTO_NAME_MAX */
	uint16_t proto_version; /* the newest protocol version the sender speaks, >= 1 */
	char version[PROTO_VERSTR_MAX + 1];
	size_t version_len; /* 1..PROTO_VERSTR_MAX: the sender's software version */
	uint64_t features;  /* PROTO_FEAT_* the sender supports */
	uint64_t required;  /* PROTO_FEAT_* the peer must support; a subset of features */
	uint64_t nonce;	    /* random per process start: tells incarnations apart */
};

struct proto_auth_challenge {
	uint8_t nonce[PROTO_NONCE_LEN];
};

struct proto_auth_response {
	uint8_t hmac[PROTO_HMAC_LEN];
};

/* PING and PONG share the layout; PONG echoes the PING's values. */
struct proto_ping {
	uint64_t seq;
	uint64_t stamp_ns;
};

struct proto_error {
	int32_t status; /* < 0: -errno or -WEFT_E_* */
	char msg[PROTO_ERRMSG_MAX + 1];
	size_t msg_len; /* 0..PROTO_ERRMSG_MAX */
};

struct proto_map_get {
	uint32_t have_epoch; /* 0 = none yet */
};

struct proto_map {
	uint32_t epoch; /* >= 1 */
	const void *blob; /* view into the input; encoded by the mon module */
	uint32_t blob_len;
};

enum proto_osd_opcode {
	PROTO_OP_READ = 1,
	PROTO_OP_WRITE = 2,
	PROTO_OP_WRITE_FULL = 3,
	PROTO_OP_STAT = 4,
	PROTO_OP_REMOVE = 5,
	PROTO_OP_TRUNCATE = 6,
	/*
	 * Compare-and-write: the payload is the object's expected content
	 * (offset bytes) followed by its new content (length - offset bytes).
	 * The primary replaces the object (as write_full) only if its content
	 * is exactly the expected bytes (offset 0: the object is missing or
	 * empty), else -ECANCELED and nothing changes. Replicas receive a
	 * plain write_full record. Used for volume headers and locks.
	 */
	PROTO_OP_CMP_WRITE_FULL = 7,
	/*
	 * Write zeros over [offset, offset + length) without sending them: no
	 * payload, any length up to the object size limit. The object is
	 * created or extended like a write; the store frees the whole units
	 * in the range (docs/store.md). Replicated as a record without
	 * payload. 8 and 9 are taken by recovery records on the cluster wire.
	 */
	PROTO_OP_ZERO = 10,
	/*
	 * Debug/admin (osd/: any OSD answers from its own store, no primary
	 * check): READ_LOCAL reads its copy like READ; PERF returns its
	 * counters as inline JSON.
	 */
	PROTO_OP_READ_LOCAL = 64,
	PROTO_OP_PERF = 65,
};

/* OSD_OP flags */
#define PROTO_OP_F_RKEY 0x0001u	  /* rkey present */
#define PROTO_OP_F_INLINE 0x0002u /* inline data present */
#define PROTO_OP_F_FUA 0x0004u	  /* write: force unit access (no write-back cache) */
#define PROTO_OP_FLAGS_KNOWN (PROTO_OP_F_RKEY | PROTO_OP_F_INLINE | PROTO_OP_F_FUA)

/* A peer's registered region, as struct fab_rkey: three u64 on the wire. */
struct proto_rkey {
	uint64_t addr;
	uint64_t len;
	uint64_t key;
};

/*
 * A client request to a PG's primary. Presence of rkey and data is told by
 * flags (PROTO_OP_F_RKEY, PROTO_OP_F_INLINE).
 */
struct proto_osd_op {
	uint16_t op;	/* enum proto_osd_opcode */
	uint16_t flags; /* PROTO_OP_F_* */
	uint32_t pool;
	uint32_t pg;
	uint32_t epoch; /* the client's map epoch */
	uint64_t offset; /* truncate: the new size */
	uint64_t length;
	char name[PROTO_OBJ_NAME_MAX + 1];
	size_t name_len; /* 1..PROTO_OBJ_NAME_MAX */
	struct proto_rkey rkey; /* source (write) or destination (read) buffer */
	const void *data; /* inline data: view into the input, data_len == length */
	uint32_t data_len;
};

/* OSD_OP_REPLY flags */
#define PROTO_REPLY_F_INLINE 0x0001u
/* A failed write may have been applied: it completes on every copy by recovery. */
#define PROTO_REPLY_F_MAYBE 0x0002u
/* An error names an OSD (the full one, the replica that failed): its id is in version. */
#define PROTO_REPLY_F_OSD 0x0004u
#define PROTO_REPLY_FLAGS_KNOWN (PROTO_REPLY_F_INLINE | PROTO_REPLY_F_MAYBE | PROTO_REPLY_F_OSD)

struct proto_osd_op_reply {
	int32_t status;	 /* 0 or -errno; -ESTALE: epoch is the newer map epoch */
	uint16_t flags;	 /* PROTO_REPLY_F_* */
	uint32_t epoch;
	uint64_t version; /* object version after the op */
	uint64_t length;  /* bytes read / written, or object size for stat */
	const void *data; /* inline read data: view into the input, data_len == length */
	uint32_t data_len;
};

#include "proto/proto_mon.h"
#include "proto/proto_pg.h"
#include "proto/proto_repl.h"

struct proto_msg {
	uint16_t type; /* enum proto_type: says which member is valid */
	union {
		struct proto_hello hello;
		struct proto_auth_challenge auth_challenge;
		struct proto_auth_response auth_response;
		struct proto_ping ping; /* PING and PONG */
		struct proto_error error;
		struct proto_map_get map_get;
		struct proto_map map;
		struct proto_osd_op osd_op;
		struct proto_osd_op_reply osd_op_reply;
		struct proto_bulk bulk;
		struct proto_bulk_done bulk_done;
		struct proto_auth auth;
		struct proto_mon_cmd mon_cmd;
		struct proto_mon_cmd_reply mon_cmd_reply;
		struct proto_mon_sub mon_sub;
		struct proto_auth_ticket auth_ticket;
		struct proto_auth_ticket_reply auth_ticket_reply; /* also AUTH_SVC_KEYS_REPLY */
		struct proto_auth_svc_keys auth_svc_keys;
		struct proto_osd_boot osd_boot;
		struct proto_osd_beacon osd_beacon;
		struct proto_osd_failure osd_failure;
		struct proto_pg pg; /* PROTO_PG_QUERY .. PROTO_PG_DELETE */
		struct proto_pg_stats pg_stats;
		struct proto_repl_ring_req repl_ring_req;
		struct proto_repl_ring_grant repl_ring_grant;
		struct proto_repl_ack repl_ack;
	};
};

/*
 * Per type: validate (semantic rules, see docs/protocol.md), encode into a
 * writer (validates first: -EINVAL for an invalid message, which is the
 * sender's bug; the writer's -ENOBUFS shows in proto_enc_finish) and decode
 * a whole payload (parse + validate + no trailing bytes; 0 or -EBADMSG).
 */
int proto_hello_validate(const struct proto_hello *m, struct proto_err *err);
int proto_hello_encode(struct proto_enc *enc, const struct proto_hello *m);
int proto_hello_decode(const void *buf, size_t len, struct proto_err *err,
		       struct proto_hello *m_out);

int proto_auth_challenge_encode(struct proto_enc *enc, const struct proto_auth_challenge *m);
int proto_auth_challenge_decode(const void *buf, size_t len, struct proto_err *err,
				struct proto_auth_challenge *m_out);
int proto_auth_response_encode(struct proto_enc *enc, const struct proto_auth_response *m);
int proto_auth_response_decode(const void *buf, size_t len, struct proto_err *err,
			       struct proto_auth_response *m_out);

int proto_repl_validate(uint16_t type, const struct proto_msg *m, struct proto_err *err);
int proto_repl_encode(struct proto_enc *enc, const struct proto_msg *m);
int proto_repl_decode(uint16_t type, const void *buf, size_t len, struct proto_err *err,
		      struct proto_msg *m_out);

int proto_ping_encode(struct proto_enc *enc, const struct proto_ping *m);
int proto_ping_decode(const void *buf, size_t len, struct proto_err *err,
		      struct proto_ping *m_out);

int proto_error_validate(const struct proto_error *m, struct proto_err *err);
int proto_error_encode(struct proto_enc *enc, const struct proto_error *m);
int proto_error_decode(const void *buf, size_t len, struct proto_err *err,
		       struct proto_error *m_out);

int proto_map_get_encode(struct proto_enc *enc, const struct proto_map_get *m);
int proto_map_get_decode(const void *buf, size_t len, struct proto_err *err,
			 struct proto_map_get *m_out);

int proto_map_validate(const struct proto_map *m, struct proto_err *err);
int proto_map_encode(struct proto_enc *enc, const struct proto_map *m);
int proto_map_decode(const void *buf, size_t len, struct proto_err *err,
		     struct proto_map *m_out);

int proto_osd_op_validate(const struct proto_osd_op *m, struct proto_err *err);
int proto_osd_op_encode(struct proto_enc *enc, const struct proto_osd_op *m);
int proto_osd_op_decode(const void *buf, size_t len, struct proto_err *err,
			struct proto_osd_op *m_out);

int proto_osd_op_reply_validate(const struct proto_osd_op_reply *m, struct proto_err *err);
int proto_osd_op_reply_encode(struct proto_enc *enc, const struct proto_osd_op_reply *m);
int proto_osd_op_reply_decode(const void *buf, size_t len, struct proto_err *err,
			      struct proto_osd_op_reply *m_out);

/* ---------------------------------------------------------------- dispatch */

/* msg->type selects the member. 0 or -EBADMSG (unknown type included). */
int proto_msg_validate(const struct proto_msg *msg, struct proto_err *err);
/*
 * Encode msg's payload. 0 and *len_out, -EINVAL (invalid message or unknown
 * type, logged once here: it is a local bug), or -ENOBUFS (cap too small).
 * buf NULL measures.
 */
int proto_msg_encode(const struct proto_msg *msg, void *buf, size_t cap, size_t *len_out);
/* Decode a payload of the given type. 0 or -EBADMSG (unknown type included). */
int proto_msg_decode(uint16_t type, const void *payload, size_t len, struct proto_err *err,
		     struct proto_msg *msg_out);

/*
 * Header + payload in one buffer. Encode: 0 and *len_out (32 + payload),
 * -EINVAL or -ENOBUFS as proto_msg_encode.
 */
int proto_frame_encode(const struct proto_msg *msg, uint64_t tid, void *buf, size_t cap,
		       size_t *len_out);
/*
 * Decode one frame that fills buf exactly: header, payload length and crc,
 * typed message. On failure returns -EBADMSG, describes it in err (may be
 * NULL) and, when who is non-NULL, logs it as one warning
 * "<who>: dropping malformed message: <reason>"; who NULL stays quiet
 * (fuzzer, tests, callers that log themselves). Views in msg_out point
 * into buf.
 */
int proto_frame_decode(const void *buf, size_t len, uint32_t max_payload, const char *who,
		       struct proto_err *err, struct proto_hdr *hdr_out, struct proto_msg *msg_out);

#endif
