/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Messages of the monitor service and of the messenger's rendezvous for
 * large frames. Included by proto/proto.h (which defines struct proto_rkey
 * first); do not include it alone. Layouts: docs/protocol.md, docs/mon.md.
 */
#ifndef WEFT_PROTO_PROTO_MON_H
#define WEFT_PROTO_PROTO_MON_H

#include <stddef.h>
#include <stdint.h>

#define PROTO_ADDR_MAX 63	    /* "ip:port" strings */
#define PROTO_UUID_LEN 16
#define PROTO_MON_CMD_MAX 65536	    /* JSON command text */
#define PROTO_MON_OUT_MAX (8u << 20) /* command output (JSON) */
#define PROTO_OSD_ID_NONE UINT32_MAX

/*
 * BULK: "read a frame of len bytes from my region rkey, then answer
 * BULK_DONE with the same id". How frames larger than ms_msg_size travel
 * (msgr/): the receiver pulls them with one one-sided read.
 */
struct proto_bulk {
	uint64_t id;
	uint32_t len; /* PROTO_HDR_LEN + 1 .. PROTO_HDR_LEN + PROTO_PAYLOAD_MAX */
	struct proto_rkey rkey;
};

struct proto_bulk_done {
	uint64_t id;
	int32_t status; /* 0 or -errno (<= 0) */
};

/*
 * AUTH: one message of the mutual handshake (auth/handshake.h: HELLO,
 * CHALLENGE, PROOF, DONE), carried opaque: auth/ decodes it, bounded.
 */
#define PROTO_AUTH_MAX 8192
struct proto_auth {
	const void *data; /* view into the input */
	uint32_t len;	  /* 1..PROTO_AUTH_MAX */
};

/* A command to the monitors: a JSON object, {"prefix": "osd tree", ...}. */
struct proto_mon_cmd {
	const char *json; /* view into the input, json_len bytes, no NUL inside */
	uint32_t json_len; /* 2..PROTO_MON_CMD_MAX */
};

struct proto_mon_cmd_reply {
	int32_t status;	 /* 0 or -errno */
	uint32_t epoch;	 /* map epoch the answer reflects (0 = none yet) */
	const void *out; /* JSON output: view into the input */
	uint32_t out_len;
	char msg[PROTO_ERRMSG_MAX + 1]; /* one line for the user when status < 0 */
	size_t msg_len;
};

/* MON_SUB flags */
#define PROTO_SUB_F_ONETIME 0x01u /* send what is missing once, no later epochs */
#define PROTO_SUB_FLAGS_KNOWN PROTO_SUB_F_ONETIME

/* Subscribe to map updates from have_epoch + 1 on (0 = send a full map). */
struct proto_mon_sub {
	uint32_t have_epoch;
	uint8_t flags;
};

/* An OSD registers (boot): given or confirmed an id and marked up. */
struct proto_osd_boot {
	uint8_t uuid[PROTO_UUID_LEN];
	uint32_t want_id; /* PROTO_OSD_ID_NONE: allocate one */
	uint32_t weight;  /* 16.16 fixed point; 0 = default 1.0 */
	char host[PROTO_NAME_MAX + 1];
	size_t host_len; /* 1..PROTO_NAME_MAX */
	char public_addr[PROTO_ADDR_MAX + 1];
	size_t public_addr_len; /* 1..PROTO_ADDR_MAX */
	char cluster_addr[PROTO_ADDR_MAX + 1];
	size_t cluster_addr_len; /* 0..PROTO_ADDR_MAX */
};

/* "I am alive": sent every osd_heartbeat_interval to the mon. */
struct proto_osd_beacon {
	uint32_t id;
	uint32_t epoch; /* the OSD's map epoch */
	uint8_t uuid[PROTO_UUID_LEN];
};

/* OSD_FAILURE flags */
#define PROTO_FAIL_F_ALIVE 0x01u /* retract: the target answers again */
#define PROTO_FAIL_FLAGS_KNOWN PROTO_FAIL_F_ALIVE

/* A peer report: reporter has not heard from target for failed_ms. */
struct proto_osd_failure {
	uint32_t target;
	uint32_t reporter;
	uint32_t epoch;
	uint32_t failed_ms;
	uint8_t flags;
};

/*
 * Tickets (docs/security.md, "Tickets"): an authenticated entity asks the
 * monitor for a ticket to a service; the answer carries auth/ticket.h's
 * grant (the sealed ticket, and its session key sealed under the
 * connection's session) as bytes the proto layer does not open.
 */
#define PROTO_AUTH_SVC_OSD	1    /* the only service with tickets today */
#define PROTO_AUTH_GRANT_MAX	8192 /* a grant: sealed ticket + sealed key */
#define PROTO_AUTH_SVC_KEYS_MAX 1024 /* the sealed set of service keys */

struct proto_auth_ticket {
	uint8_t service; /* PROTO_AUTH_SVC_OSD */
};

/*
 * AUTH_TICKET_REPLY and AUTH_SVC_KEYS_REPLY: status 0 and the blob (a
 * grant; the service keys sealed under the session, auth_svc_keys_seal(),
 * or none when the requester holds the newest already), or status < 0, no
 * blob and one line in msg.
 */
struct proto_auth_ticket_reply {
	int32_t status;
	const void *blob; /* view into the input */
	uint32_t blob_len;
	char msg[PROTO_ERRMSG_MAX + 1];
	size_t msg_len;
};

/* An OSD asks for the service keys; have_id: the newest key id it holds (0 = none). */
struct proto_auth_svc_keys {
	uint32_t have_id;
};

struct proto_enc;
struct proto_err;

int proto_bulk_validate(const struct proto_bulk *m, struct proto_err *err);
int proto_bulk_encode(struct proto_enc *enc, const struct proto_bulk *m);
int proto_bulk_decode(const void *buf, size_t len, struct proto_err *err,
		      struct proto_bulk *m_out);
int proto_auth_validate(const struct proto_auth *m, struct proto_err *err);
int proto_auth_encode(struct proto_enc *enc, const struct proto_auth *m);
int proto_auth_decode(const void *buf, size_t len, struct proto_err *err, struct proto_auth *m_out);
int proto_bulk_done_validate(const struct proto_bulk_done *m, struct proto_err *err);
int proto_bulk_done_encode(struct proto_enc *enc, const struct proto_bulk_done *m);
int proto_bulk_done_decode(const void *buf, size_t len, struct proto_err *err,
			   struct proto_bulk_done *m_out);
int proto_mon_cmd_validate(const struct proto_mon_cmd *m, struct proto_err *err);
int proto_mon_cmd_encode(struct proto_enc *enc, const struct proto_mon_cmd *m);
int proto_mon_cmd_decode(const void *buf, size_t len, struct proto_err *err,
			 struct proto_mon_cmd *m_out);
int proto_mon_cmd_reply_validate(const struct proto_mon_cmd_reply *m, struct proto_err *err);
int proto_mon_cmd_reply_encode(struct proto_enc *enc, const struct proto_mon_cmd_reply *m);
int proto_mon_cmd_reply_decode(const void *buf, size_t len, struct proto_err *err,
			       struct proto_mon_cmd_reply *m_out);
int proto_mon_sub_validate(const struct proto_mon_sub *m, struct proto_err *err);
int proto_mon_sub_encode(struct proto_enc *enc, const struct proto_mon_sub *m);
int proto_mon_sub_decode(const void *buf, size_t len, struct proto_err *err,
			 struct proto_mon_sub *m_out);
int proto_osd_boot_validate(const struct proto_osd_boot *m, struct proto_err *err);
int proto_osd_boot_encode(struct proto_enc *enc, const struct proto_osd_boot *m);
int proto_osd_boot_decode(const void *buf, size_t len, struct proto_err *err,
			  struct proto_osd_boot *m_out);
int proto_osd_beacon_encode(struct proto_enc *enc, const struct proto_osd_beacon *m);
int proto_osd_beacon_decode(const void *buf, size_t len, struct proto_err *err,
			    struct proto_osd_beacon *m_out);
int proto_osd_failure_validate(const struct proto_osd_failure *m, struct proto_err *err);
int proto_osd_failure_encode(struct proto_enc *enc, const struct proto_osd_failure *m);
int proto_osd_failure_decode(const void *buf, size_t len, struct proto_err *err,
			     struct proto_osd_failure *m_out);
int proto_auth_ticket_validate(const struct proto_auth_ticket *m, struct proto_err *err);
int proto_auth_ticket_encode(struct proto_enc *enc, const struct proto_auth_ticket *m);
int proto_auth_ticket_decode(const void *buf, size_t len, struct proto_err *err,
			     struct proto_auth_ticket *m_out);
/* type: PROTO_AUTH_TICKET_REPLY (blob: 1..PROTO_AUTH_GRANT_MAX on success) or
 * PROTO_AUTH_SVC_KEYS_REPLY (blob: 0..PROTO_AUTH_SVC_KEYS_MAX). */
int proto_auth_ticket_reply_validate(uint16_t type, const struct proto_auth_ticket_reply *m,
				     struct proto_err *err);
int proto_auth_ticket_reply_encode(struct proto_enc *enc, uint16_t type,
				   const struct proto_auth_ticket_reply *m);
int proto_auth_ticket_reply_decode(uint16_t type, const void *buf, size_t len,
				   struct proto_err *err, struct proto_auth_ticket_reply *m_out);
int proto_auth_svc_keys_encode(struct proto_enc *enc, const struct proto_auth_svc_keys *m);
int proto_auth_svc_keys_decode(const void *buf, size_t len, struct proto_err *err,
			       struct proto_auth_svc_keys *m_out);

#endif
