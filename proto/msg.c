/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Typed messages: encode, decode, validate, and the dispatch by type.
 * Wire layouts and rules: docs/protocol.md. Each decoder parses into a local
 * struct, then checks for trailing bytes and validates, and copies to the
 * out-parameter only on success.
 */
#include "proto/proto.h"

#include <errno.h>
#include <string.h>

#include "common/crc32c.h"
#include "common/log.h"

/* An encoder refuses what its decoder would reject: the sender has a bug. */
#define PROTO_ENC_CHECK(expr)                                                                      \
	do {                                                                                       \
		if ((expr) != 0)                                                                   \
			return -EINVAL;                                                            \
	} while (0)

/* ------------------------------------------------------------------ hello */

/* Printable ASCII only: a peer's name and version end up in one-line log messages. */
static bool proto_str_printable(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return false;
	return true;
}

int proto_hello_validate(const struct proto_hello *m, struct proto_err *err)
{
	if (m->entity_type < PROTO_ENTITY_CLIENT || m->entity_type > PROTO_ENTITY_MON)
		return proto_err_set(err, "hello", "entity_type: unknown type %u",
				     m->entity_type);
	if (m->name_len == 0 || m->name_len > PROTO_NAME_MAX)
		return proto_err_set(err, "hello", "name: length %zu not in 1..%u", m->name_len,
				     PROTO_NAME_MAX);
	if (!proto_str_printable(m->name, m->name_len))
		return proto_err_set(err, "hello", "name: holds a byte that is not printable ASCII");
	if (m->proto_version == 0)
		return proto_err_set(err, "hello", "proto_version: 0");
	if (m->version_len == 0 || m->version_len > PROTO_VERSTR_MAX)
		return proto_err_set(err, "hello", "version: length %zu not in 1..%u",
				     m->version_len, PROTO_VERSTR_MAX);
	if (!proto_str_printable(m->version, m->version_len))
		return proto_err_set(err, "hello", "version: holds a byte that is not printable ASCII");
	if (m->required & ~m->features)
		return proto_err_set(err, "hello",
				     "required: bits 0x%llx the sender does not support itself",
				     (unsigned long long)(m->required & ~m->features));
	return 0;
}

int proto_hello_encode(struct proto_enc *enc, const struct proto_hello *m)
{
	PROTO_ENC_CHECK(proto_hello_validate(m, NULL));
	proto_enc_put_u8(enc, m->entity_type);
	proto_enc_put_str16(enc, m->name, m->name_len);
	proto_enc_put_u16(enc, m->proto_version);
	proto_enc_put_str16(enc, m->version, m->version_len);
	proto_enc_put_u64(enc, m->features);
	proto_enc_put_u64(enc, m->required);
	proto_enc_put_u64(enc, m->nonce);
	return 0;
}

int proto_hello_decode(const void *buf, size_t len, struct proto_err *err,
		       struct proto_hello *m_out)
{
	struct proto_hello m;
	struct proto_dec dec;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "hello", err);
	proto_dec_get_u8(&dec, "entity_type", &m.entity_type);
	proto_dec_get_str16(&dec, "name", PROTO_NAME_MAX, m.name, sizeof(m.name), &m.name_len);
	proto_dec_get_u16(&dec, "proto_version", &m.proto_version);
	proto_dec_get_str16(&dec, "version", PROTO_VERSTR_MAX, m.version, sizeof(m.version),
			    &m.version_len);
	proto_dec_get_u64(&dec, "features", &m.features);
	proto_dec_get_u64(&dec, "required", &m.required);
	proto_dec_get_u64(&dec, "nonce", &m.nonce);
	if (proto_dec_finish(&dec) != 0 || proto_hello_validate(&m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

/* ------------------------------------------------------------------- auth */

int proto_auth_challenge_encode(struct proto_enc *enc, const struct proto_auth_challenge *m)
{
	proto_enc_put_bytes(enc, m->nonce, sizeof(m->nonce));
	return 0;
}

int proto_auth_challenge_decode(const void *buf, size_t len, struct proto_err *err,
				struct proto_auth_challenge *m_out)
{
	struct proto_auth_challenge m;
	struct proto_dec dec;

	proto_dec_init(&dec, buf, len, "auth_challenge", err);
	proto_dec_get_bytes(&dec, "nonce", m.nonce, sizeof(m.nonce));
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

int proto_auth_response_encode(struct proto_enc *enc, const struct proto_auth_response *m)
{
	proto_enc_put_bytes(enc, m->hmac, sizeof(m->hmac));
	return 0;
}

int proto_auth_response_decode(const void *buf, size_t len, struct proto_err *err,
			       struct proto_auth_response *m_out)
{
	struct proto_auth_response m;
	struct proto_dec dec;

	proto_dec_init(&dec, buf, len, "auth_response", err);
	proto_dec_get_bytes(&dec, "hmac", m.hmac, sizeof(m.hmac));
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

/* -------------------------------------------------------------- ping/pong */

int proto_ping_encode(struct proto_enc *enc, const struct proto_ping *m)
{
	proto_enc_put_u64(enc, m->seq);
	proto_enc_put_u64(enc, m->stamp_ns);
	return 0;
}

static int proto_ping_decode_as(const char *what, const void *buf, size_t len,
				struct proto_err *err, struct proto_ping *m_out)
{
	struct proto_ping m;
	struct proto_dec dec;

	proto_dec_init(&dec, buf, len, what, err);
	proto_dec_get_u64(&dec, "seq", &m.seq);
	proto_dec_get_u64(&dec, "stamp_ns", &m.stamp_ns);
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

int proto_ping_decode(const void *buf, size_t len, struct proto_err *err,
		      struct proto_ping *m_out)
{
	return proto_ping_decode_as("ping", buf, len, err, m_out);
}

/* ------------------------------------------------------------------ error */

int proto_error_validate(const struct proto_error *m, struct proto_err *err)
{
	if (m->status >= 0)
		return proto_err_set(err, "error", "status: %d is not negative", m->status);
	if (m->msg_len > PROTO_ERRMSG_MAX)
		return proto_err_set(err, "error", "msg: length %zu exceeds max %u", m->msg_len,
				     PROTO_ERRMSG_MAX);
	if (memchr(m->msg, '\0', m->msg_len) != NULL)
		return proto_err_set(err, "error", "msg: holds a NUL byte");
	return 0;
}

int proto_error_encode(struct proto_enc *enc, const struct proto_error *m)
{
	PROTO_ENC_CHECK(proto_error_validate(m, NULL));
	proto_enc_put_u32(enc, (uint32_t)m->status);
	proto_enc_put_str16(enc, m->msg, m->msg_len);
	return 0;
}

int proto_error_decode(const void *buf, size_t len, struct proto_err *err,
		       struct proto_error *m_out)
{
	struct proto_error m;
	struct proto_dec dec;
	uint32_t status = 0;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "error", err);
	proto_dec_get_u32(&dec, "status", &status);
	proto_dec_get_str16(&dec, "msg", PROTO_ERRMSG_MAX, m.msg, sizeof(m.msg), &m.msg_len);
	m.status = (int32_t)status;
	if (proto_dec_finish(&dec) != 0 || proto_error_validate(&m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

/* -------------------------------------------------------------------- map */

int proto_map_get_encode(struct proto_enc *enc, const struct proto_map_get *m)
{
	proto_enc_put_u32(enc, m->have_epoch);
	return 0;
}

int proto_map_get_decode(const void *buf, size_t len, struct proto_err *err,
			 struct proto_map_get *m_out)
{
	struct proto_map_get m;
	struct proto_dec dec;

	proto_dec_init(&dec, buf, len, "map_get", err);
	proto_dec_get_u32(&dec, "have_epoch", &m.have_epoch);
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

int proto_map_validate(const struct proto_map *m, struct proto_err *err)
{
	if (m->epoch == 0)
		return proto_err_set(err, "map", "epoch: 0 is not a map epoch");
	if (m->blob_len > PROTO_MAP_BLOB_MAX)
		return proto_err_set(err, "map", "blob: length %u exceeds max %u", m->blob_len,
				     PROTO_MAP_BLOB_MAX);
	if (m->blob_len > 0 && m->blob == NULL)
		return proto_err_set(err, "map", "blob: %u bytes but no buffer", m->blob_len);
	return 0;
}

int proto_map_encode(struct proto_enc *enc, const struct proto_map *m)
{
	PROTO_ENC_CHECK(proto_map_validate(m, NULL));
	proto_enc_put_u32(enc, m->epoch);
	proto_enc_put_blob32(enc, m->blob, m->blob_len);
	return 0;
}

int proto_map_decode(const void *buf, size_t len, struct proto_err *err, struct proto_map *m_out)
{
	struct proto_map m;
	struct proto_dec dec;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "map", err);
	proto_dec_get_u32(&dec, "epoch", &m.epoch);
	proto_dec_get_blob32(&dec, "blob", PROTO_MAP_BLOB_MAX, &m.blob, &m.blob_len);
	if (proto_dec_finish(&dec) != 0 || proto_map_validate(&m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

/* ----------------------------------------------------------------- osd_op */

static const char *proto_osd_opcode_name(uint16_t op)
{
	switch (op) {
	case PROTO_OP_READ:
		return "read";
	case PROTO_OP_WRITE:
		return "write";
	case PROTO_OP_WRITE_FULL:
		return "write_full";
	case PROTO_OP_STAT:
		return "stat";
	case PROTO_OP_REMOVE:
		return "remove";
	case PROTO_OP_TRUNCATE:
		return "truncate";
	case PROTO_OP_CMP_WRITE_FULL:
		return "cmp_write_full";
	case PROTO_OP_ZERO:
		return "zero";
	case PROTO_OP_READ_LOCAL:
		return "read_local";
	case PROTO_OP_PERF:
		return "perf";
	}
	return NULL;
}

int proto_osd_op_validate(const struct proto_osd_op *m, struct proto_err *err)
{
	const char *opname = proto_osd_opcode_name(m->op);
	bool rkey = (m->flags & PROTO_OP_F_RKEY) != 0;
	bool inl = (m->flags & PROTO_OP_F_INLINE) != 0;
	bool fua = (m->flags & PROTO_OP_F_FUA) != 0;

	if (opname == NULL)
		return proto_err_set(err, "osd_op", "op: unknown op code %u", m->op);
	if ((m->flags & ~PROTO_OP_FLAGS_KNOWN) != 0)
		return proto_err_set(err, "osd_op", "flags: unknown bits 0x%04x",
				     m->flags & ~PROTO_OP_FLAGS_KNOWN);
	if (m->name_len == 0 || m->name_len > PROTO_OBJ_NAME_MAX)
		return proto_err_set(err, "osd_op", "name: length %zu not in 1..%u", m->name_len,
				     PROTO_OBJ_NAME_MAX);
	if (memchr(m->name, '\0', m->name_len) != NULL)
		return proto_err_set(err, "osd_op", "name: holds a NUL byte");
	if (m->length > UINT64_MAX - m->offset)
		return proto_err_set(err, "osd_op", "length: offset %llu + length %llu overflows",
				     (unsigned long long)m->offset,
				     (unsigned long long)m->length);
	if (rkey && inl)
		return proto_err_set(err, "osd_op", "flags: both rkey and inline data");
	if (rkey && m->rkey.len < m->length)
		return proto_err_set(err, "osd_op", "rkey: region of %llu bytes < length %llu",
				     (unsigned long long)m->rkey.len,
				     (unsigned long long)m->length);
	if (rkey && m->rkey.len > UINT64_MAX - m->rkey.addr)
		return proto_err_set(err, "osd_op", "rkey: addr 0x%llx + len %llu overflows",
				     (unsigned long long)m->rkey.addr,
				     (unsigned long long)m->rkey.len);
	if (inl && m->data_len != m->length)
		return proto_err_set(err, "osd_op", "data: inline length %u != length %llu",
				     m->data_len, (unsigned long long)m->length);
	if (inl && m->data_len > 0 && m->data == NULL)
		return proto_err_set(err, "osd_op", "data: %u bytes but no buffer", m->data_len);

	switch (m->op) {
	case PROTO_OP_READ:
	case PROTO_OP_READ_LOCAL:
		if (inl || fua)
			return proto_err_set(err, "osd_op", "flags: read with %s",
					     inl ? "inline data" : "fua");
		break;
	case PROTO_OP_WRITE_FULL:
		if (m->offset != 0)
			return proto_err_set(err, "osd_op", "offset: write_full at %llu, not 0",
					     (unsigned long long)m->offset);
		/* fall through */
	case PROTO_OP_WRITE:
	case PROTO_OP_CMP_WRITE_FULL:
		/* cmp_write_full: offset is the length of the expected-content prefix */
		if (m->op == PROTO_OP_CMP_WRITE_FULL && m->offset > m->length)
			return proto_err_set(err, "osd_op",
					     "offset: compare length %llu > length %llu",
					     (unsigned long long)m->offset,
					     (unsigned long long)m->length);
		if (m->length > 0 && !rkey && !inl)
			return proto_err_set(err, "osd_op",
					     "flags: %s of %llu bytes without rkey or inline data",
					     opname, (unsigned long long)m->length);
		break;
	case PROTO_OP_ZERO:
		if (rkey || inl || fua)
			return proto_err_set(err, "osd_op", "flags: zero carries no data (0x%04x)",
					     m->flags);
		break;
	case PROTO_OP_STAT:
	case PROTO_OP_REMOVE:
	case PROTO_OP_TRUNCATE:
	case PROTO_OP_PERF:
		/* truncate's new size travels in offset */
		if (m->op != PROTO_OP_TRUNCATE && m->offset != 0)
			return proto_err_set(err, "osd_op", "offset: %s with offset %llu", opname,
					     (unsigned long long)m->offset);
		if (m->length != 0)
			return proto_err_set(err, "osd_op", "length: %s with length %llu", opname,
					     (unsigned long long)m->length);
		if (rkey || inl || fua)
			return proto_err_set(err, "osd_op", "flags: %s takes no flags (0x%04x)",
					     opname, m->flags);
		break;
	}
	return 0;
}

int proto_osd_op_encode(struct proto_enc *enc, const struct proto_osd_op *m)
{
	PROTO_ENC_CHECK(proto_osd_op_validate(m, NULL));
	proto_enc_put_u16(enc, m->op);
	proto_enc_put_u16(enc, m->flags);
	proto_enc_put_u32(enc, m->pool);
	proto_enc_put_u32(enc, m->pg);
	proto_enc_put_u32(enc, m->epoch);
	proto_enc_put_u64(enc, m->offset);
	proto_enc_put_u64(enc, m->length);
	proto_enc_put_str16(enc, m->name, m->name_len);
	if (m->flags & PROTO_OP_F_RKEY) {
		proto_enc_put_u64(enc, m->rkey.addr);
		proto_enc_put_u64(enc, m->rkey.len);
		proto_enc_put_u64(enc, m->rkey.key);
	}
	if (m->flags & PROTO_OP_F_INLINE)
		proto_enc_put_blob32(enc, m->data, m->data_len);
	return 0;
}

int proto_osd_op_decode(const void *buf, size_t len, struct proto_err *err,
			struct proto_osd_op *m_out)
{
	struct proto_osd_op m;
	struct proto_dec dec;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "osd_op", err);
	proto_dec_get_u16(&dec, "op", &m.op);
	proto_dec_get_u16(&dec, "flags", &m.flags);
	proto_dec_get_u32(&dec, "pool", &m.pool);
	proto_dec_get_u32(&dec, "pg", &m.pg);
	proto_dec_get_u32(&dec, "epoch", &m.epoch);
	proto_dec_get_u64(&dec, "offset", &m.offset);
	proto_dec_get_u64(&dec, "length", &m.length);
	proto_dec_get_str16(&dec, "name", PROTO_OBJ_NAME_MAX, m.name, sizeof(m.name),
			    &m.name_len);
	if (dec.err == 0 && (m.flags & PROTO_OP_F_RKEY)) {
		proto_dec_get_u64(&dec, "rkey.addr", &m.rkey.addr);
		proto_dec_get_u64(&dec, "rkey.len", &m.rkey.len);
		proto_dec_get_u64(&dec, "rkey.key", &m.rkey.key);
	}
	if (dec.err == 0 && (m.flags & PROTO_OP_F_INLINE))
		proto_dec_get_blob32(&dec, "data", PROTO_PAYLOAD_MAX, &m.data, &m.data_len);
	if (proto_dec_finish(&dec) != 0 || proto_osd_op_validate(&m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

/* ----------------------------------------------------------- osd_op_reply */

int proto_osd_op_reply_validate(const struct proto_osd_op_reply *m, struct proto_err *err)
{
	bool inl = (m->flags & PROTO_REPLY_F_INLINE) != 0;

	if (m->status > 0)
		return proto_err_set(err, "osd_op_reply", "status: %d is positive", m->status);
	if ((m->flags & ~PROTO_REPLY_FLAGS_KNOWN) != 0)
		return proto_err_set(err, "osd_op_reply", "flags: unknown bits 0x%04x",
				     m->flags & ~PROTO_REPLY_FLAGS_KNOWN);
	if (inl && m->status != 0)
		return proto_err_set(err, "osd_op_reply", "data: inline data with status %d",
				     m->status);
	if ((m->flags & (PROTO_REPLY_F_MAYBE | PROTO_REPLY_F_OSD)) && m->status == 0)
		return proto_err_set(err, "osd_op_reply", "flags: 0x%04x on a success", m->flags);
	if ((m->flags & PROTO_REPLY_F_OSD) && m->version > INT32_MAX)
		return proto_err_set(err, "osd_op_reply", "version: osd %llu out of range",
				     (unsigned long long)m->version);
	if (inl && m->data_len != m->length)
		return proto_err_set(err, "osd_op_reply",
				     "data: inline length %u != length %llu", m->data_len,
				     (unsigned long long)m->length);
	if (inl && m->data_len > 0 && m->data == NULL)
		return proto_err_set(err, "osd_op_reply", "data: %u bytes but no buffer",
				     m->data_len);
	return 0;
}

int proto_osd_op_reply_encode(struct proto_enc *enc, const struct proto_osd_op_reply *m)
{
	PROTO_ENC_CHECK(proto_osd_op_reply_validate(m, NULL));
	proto_enc_put_u32(enc, (uint32_t)m->status);
	proto_enc_put_u16(enc, m->flags);
	proto_enc_put_u32(enc, m->epoch);
	proto_enc_put_u64(enc, m->version);
	proto_enc_put_u64(enc, m->length);
	if (m->flags & PROTO_REPLY_F_INLINE)
		proto_enc_put_blob32(enc, m->data, m->data_len);
	return 0;
}

int proto_osd_op_reply_decode(const void *buf, size_t len, struct proto_err *err,
			      struct proto_osd_op_reply *m_out)
{
	struct proto_osd_op_reply m;
	struct proto_dec dec;
	uint32_t status = 0;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "osd_op_reply", err);
	proto_dec_get_u32(&dec, "status", &status);
	proto_dec_get_u16(&dec, "flags", &m.flags);
	proto_dec_get_u32(&dec, "epoch", &m.epoch);
	proto_dec_get_u64(&dec, "version", &m.version);
	proto_dec_get_u64(&dec, "length", &m.length);
	if (dec.err == 0 && (m.flags & PROTO_REPLY_F_INLINE))
		proto_dec_get_blob32(&dec, "data", PROTO_PAYLOAD_MAX, &m.data, &m.data_len);
	m.status = (int32_t)status;
	if (proto_dec_finish(&dec) != 0 || proto_osd_op_reply_validate(&m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

/* --------------------------------------------------------------- dispatch */

int proto_msg_validate(const struct proto_msg *msg, struct proto_err *err)
{
	switch (msg->type) {
	case PROTO_REPL_RING_REQ:
	case PROTO_REPL_RING_GRANT:
	case PROTO_REPL_ACK:
		return proto_repl_validate(msg->type, msg, err);
	case PROTO_HELLO:
		return proto_hello_validate(&msg->hello, err);
	case PROTO_AUTH_CHALLENGE:
	case PROTO_AUTH_RESPONSE:
	case PROTO_PING:
	case PROTO_PONG:
	case PROTO_MAP_GET:
		return 0;
	case PROTO_ERROR:
		return proto_error_validate(&msg->error, err);
	case PROTO_MAP:
		return proto_map_validate(&msg->map, err);
	case PROTO_OSD_OP:
		return proto_osd_op_validate(&msg->osd_op, err);
	case PROTO_OSD_OP_REPLY:
		return proto_osd_op_reply_validate(&msg->osd_op_reply, err);
	case PROTO_BULK:
		return proto_bulk_validate(&msg->bulk, err);
	case PROTO_BULK_DONE:
		return proto_bulk_done_validate(&msg->bulk_done, err);
	case PROTO_AUTH:
		return proto_auth_validate(&msg->auth, err);
	case PROTO_MON_CMD:
		return proto_mon_cmd_validate(&msg->mon_cmd, err);
	case PROTO_MON_CMD_REPLY:
		return proto_mon_cmd_reply_validate(&msg->mon_cmd_reply, err);
	case PROTO_MON_SUB:
		return proto_mon_sub_validate(&msg->mon_sub, err);
	case PROTO_AUTH_TICKET:
		return proto_auth_ticket_validate(&msg->auth_ticket, err);
	case PROTO_AUTH_TICKET_REPLY:
	case PROTO_AUTH_SVC_KEYS_REPLY:
		return proto_auth_ticket_reply_validate(msg->type, &msg->auth_ticket_reply, err);
	case PROTO_AUTH_SVC_KEYS:
		return 0;
	case PROTO_MAP_INC:
		return proto_map_validate(&msg->map, err);
	case PROTO_OSD_BOOT:
		return proto_osd_boot_validate(&msg->osd_boot, err);
	case PROTO_OSD_BEACON:
		return 0;
	case PROTO_OSD_FAILURE:
		return proto_osd_failure_validate(&msg->osd_failure, err);
	case PROTO_PG_STATS:
		return 0;
	case PROTO_PG_QUERY:
	case PROTO_PG_INFO:
	case PROTO_PG_LOG_REQ:
	case PROTO_PG_LOG:
	case PROTO_PG_ACTIVATE:
	case PROTO_PG_PULL:
	case PROTO_PG_RECOVERED:
	case PROTO_PG_SCAN_REQ:
	case PROTO_PG_SCAN:
	case PROTO_PG_DELETE:
	case PROTO_PG_NOTIFY:
		return proto_pg_validate(msg->type, &msg->pg, err);
	}
	return proto_err_set(err, "msg", "type: unknown message type %u", msg->type);
}

static int proto_msg_put(struct proto_enc *enc, const struct proto_msg *msg)
{
	switch (msg->type) {
	case PROTO_HELLO:
		return proto_hello_encode(enc, &msg->hello);
	case PROTO_AUTH_CHALLENGE:
		return proto_auth_challenge_encode(enc, &msg->auth_challenge);
	case PROTO_AUTH_RESPONSE:
		return proto_auth_response_encode(enc, &msg->auth_response);
	case PROTO_PING:
	case PROTO_PONG:
		return proto_ping_encode(enc, &msg->ping);
	case PROTO_ERROR:
		return proto_error_encode(enc, &msg->error);
	case PROTO_MAP_GET:
		return proto_map_get_encode(enc, &msg->map_get);
	case PROTO_MAP:
		return proto_map_encode(enc, &msg->map);
	case PROTO_OSD_OP:
		return proto_osd_op_encode(enc, &msg->osd_op);
	case PROTO_OSD_OP_REPLY:
		return proto_osd_op_reply_encode(enc, &msg->osd_op_reply);
	case PROTO_BULK:
		return proto_bulk_encode(enc, &msg->bulk);
	case PROTO_BULK_DONE:
		return proto_bulk_done_encode(enc, &msg->bulk_done);
	case PROTO_AUTH:
		return proto_auth_encode(enc, &msg->auth);
	case PROTO_MON_CMD:
		return proto_mon_cmd_encode(enc, &msg->mon_cmd);
	case PROTO_MON_CMD_REPLY:
		return proto_mon_cmd_reply_encode(enc, &msg->mon_cmd_reply);
	case PROTO_MON_SUB:
		return proto_mon_sub_encode(enc, &msg->mon_sub);
	case PROTO_AUTH_TICKET:
		return proto_auth_ticket_encode(enc, &msg->auth_ticket);
	case PROTO_AUTH_TICKET_REPLY:
	case PROTO_AUTH_SVC_KEYS_REPLY:
		return proto_auth_ticket_reply_encode(enc, msg->type, &msg->auth_ticket_reply);
	case PROTO_AUTH_SVC_KEYS:
		return proto_auth_svc_keys_encode(enc, &msg->auth_svc_keys);
	case PROTO_MAP_INC:
		return proto_map_encode(enc, &msg->map);
	case PROTO_OSD_BOOT:
		return proto_osd_boot_encode(enc, &msg->osd_boot);
	case PROTO_OSD_BEACON:
		return proto_osd_beacon_encode(enc, &msg->osd_beacon);
	case PROTO_OSD_FAILURE:
		return proto_osd_failure_encode(enc, &msg->osd_failure);
	case PROTO_PG_STATS:
		return proto_pg_stats_encode(enc, &msg->pg_stats);
	case PROTO_PG_QUERY:
	case PROTO_PG_INFO:
	case PROTO_PG_LOG_REQ:
	case PROTO_PG_LOG:
	case PROTO_PG_ACTIVATE:
	case PROTO_PG_PULL:
	case PROTO_PG_RECOVERED:
	case PROTO_PG_SCAN_REQ:
	case PROTO_PG_SCAN:
	case PROTO_PG_DELETE:
	case PROTO_PG_NOTIFY:
		return proto_pg_encode(enc, msg->type, &msg->pg);
	case PROTO_REPL_RING_REQ:
	case PROTO_REPL_RING_GRANT:
	case PROTO_REPL_ACK:
		return proto_repl_encode(enc, msg);
	}
	return -EINVAL;
}

/* Encode msg's payload through enc; logs the one line an invalid message gets. */
static int proto_msg_put_checked(struct proto_enc *enc, const struct proto_msg *msg)
{
	struct proto_err err;
	int rc;

	rc = proto_msg_put(enc, msg);
	if (rc == -EINVAL) {
		proto_msg_validate(msg, &err);
		log_error("proto", "refusing to encode invalid %s message: %s",
			  proto_type_name(msg->type), err.msg);
	}
	return rc;
}

int proto_msg_encode(const struct proto_msg *msg, void *buf, size_t cap, size_t *len_out)
{
	struct proto_enc enc;
	int rc;

	proto_enc_init(&enc, buf, cap);
	rc = proto_msg_put_checked(&enc, msg);
	if (rc != 0)
		return rc;
	return proto_enc_finish(&enc, len_out);
}

int proto_msg_decode(uint16_t type, const void *payload, size_t len, struct proto_err *err,
		     struct proto_msg *msg_out)
{
	int rc = -EBADMSG;

	/* Decoders write their member only on success; type only then too. */
	switch (type) {
	case PROTO_HELLO:
		rc = proto_hello_decode(payload, len, err, &msg_out->hello);
		break;
	case PROTO_AUTH_CHALLENGE:
		rc = proto_auth_challenge_decode(payload, len, err, &msg_out->auth_challenge);
		break;
	case PROTO_AUTH_RESPONSE:
		rc = proto_auth_response_decode(payload, len, err, &msg_out->auth_response);
		break;
	case PROTO_PING:
		rc = proto_ping_decode_as("ping", payload, len, err, &msg_out->ping);
		break;
	case PROTO_PONG:
		rc = proto_ping_decode_as("pong", payload, len, err, &msg_out->ping);
		break;
	case PROTO_ERROR:
		rc = proto_error_decode(payload, len, err, &msg_out->error);
		break;
	case PROTO_MAP_GET:
		rc = proto_map_get_decode(payload, len, err, &msg_out->map_get);
		break;
	case PROTO_MAP:
		rc = proto_map_decode(payload, len, err, &msg_out->map);
		break;
	case PROTO_OSD_OP:
		rc = proto_osd_op_decode(payload, len, err, &msg_out->osd_op);
		break;
	case PROTO_OSD_OP_REPLY:
		rc = proto_osd_op_reply_decode(payload, len, err, &msg_out->osd_op_reply);
		break;
	case PROTO_BULK:
		rc = proto_bulk_decode(payload, len, err, &msg_out->bulk);
		break;
	case PROTO_BULK_DONE:
		rc = proto_bulk_done_decode(payload, len, err, &msg_out->bulk_done);
		break;
	case PROTO_AUTH:
		rc = proto_auth_decode(payload, len, err, &msg_out->auth);
		break;
	case PROTO_MON_CMD:
		rc = proto_mon_cmd_decode(payload, len, err, &msg_out->mon_cmd);
		break;
	case PROTO_MON_CMD_REPLY:
		rc = proto_mon_cmd_reply_decode(payload, len, err, &msg_out->mon_cmd_reply);
		break;
	case PROTO_MON_SUB:
		rc = proto_mon_sub_decode(payload, len, err, &msg_out->mon_sub);
		break;
	case PROTO_AUTH_TICKET:
		rc = proto_auth_ticket_decode(payload, len, err, &msg_out->auth_ticket);
		break;
	case PROTO_AUTH_TICKET_REPLY:
	case PROTO_AUTH_SVC_KEYS_REPLY:
		rc = proto_auth_ticket_reply_decode(type, payload, len, err,
						    &msg_out->auth_ticket_reply);
		break;
	case PROTO_AUTH_SVC_KEYS:
		rc = proto_auth_svc_keys_decode(payload, len, err, &msg_out->auth_svc_keys);
		break;
	case PROTO_MAP_INC:
		rc = proto_map_decode(payload, len, err, &msg_out->map);
		break;
	case PROTO_OSD_BOOT:
		rc = proto_osd_boot_decode(payload, len, err, &msg_out->osd_boot);
		break;
	case PROTO_OSD_BEACON:
		rc = proto_osd_beacon_decode(payload, len, err, &msg_out->osd_beacon);
		break;
	case PROTO_OSD_FAILURE:
		rc = proto_osd_failure_decode(payload, len, err, &msg_out->osd_failure);
		break;
	case PROTO_PG_STATS:
		rc = proto_pg_stats_decode(payload, len, err, &msg_out->pg_stats);
		break;
	case PROTO_PG_QUERY:
	case PROTO_PG_INFO:
	case PROTO_PG_LOG_REQ:
	case PROTO_PG_LOG:
	case PROTO_PG_ACTIVATE:
	case PROTO_PG_PULL:
	case PROTO_PG_RECOVERED:
	case PROTO_PG_SCAN_REQ:
	case PROTO_PG_SCAN:
	case PROTO_PG_DELETE:
	case PROTO_PG_NOTIFY:
		rc = proto_pg_decode(type, payload, len, err, &msg_out->pg);
		break;
	case PROTO_REPL_RING_REQ:
	case PROTO_REPL_RING_GRANT:
	case PROTO_REPL_ACK:
		rc = proto_repl_decode(type, payload, len, err, msg_out);
		break;
	default:
		return proto_err_set(err, "msg", "type: unknown message type %u", type);
	}
	if (rc == 0)
		msg_out->type = type;
	return rc;
}

int proto_frame_encode(const struct proto_msg *msg, uint64_t tid, void *buf, size_t cap,
		       size_t *len_out)
{
	struct proto_hdr hdr = { .type = msg->type, .tid = tid };
	struct proto_enc enc;
	size_t plen;
	uint8_t *p = buf;
	int rc;

	if (buf != NULL && cap < PROTO_HDR_LEN)
		return -ENOBUFS;
	proto_enc_init(&enc, buf != NULL ? p + PROTO_HDR_LEN : NULL,
		       buf != NULL ? cap - PROTO_HDR_LEN : 0);
	rc = proto_msg_put_checked(&enc, msg);
	if (rc != 0)
		return rc;
	rc = proto_enc_finish(&enc, &plen);
	if (rc != 0)
		return rc;
	if (plen > PROTO_PAYLOAD_MAX) {
		log_error("proto", "refusing to encode %s message: payload %zu exceeds max %u",
			  proto_type_name(msg->type), plen, PROTO_PAYLOAD_MAX);
		return -EINVAL;
	}
	if (buf != NULL) {
		hdr.payload_len = (uint32_t)plen;
		hdr.payload_crc = crc32c(0, p + PROTO_HDR_LEN, plen);
		proto_hdr_encode(&hdr, p);
	}
	*len_out = PROTO_HDR_LEN + plen;
	return 0;
}

int proto_frame_decode(const void *buf, size_t len, uint32_t max_payload, const char *who,
		       struct proto_err *err, struct proto_hdr *hdr_out, struct proto_msg *msg_out)
{
	struct proto_err local;
	struct proto_hdr hdr;
	const uint8_t *payload;
	int rc;

	if (err == NULL)
		err = &local;
	rc = proto_hdr_decode(buf, len, max_payload, err, &hdr);
	if (rc != 0)
		goto err_log;
	payload = (const uint8_t *)buf + PROTO_HDR_LEN;
	rc = proto_payload_check(&hdr, payload, len - PROTO_HDR_LEN, err);
	if (rc != 0)
		goto err_log;
	rc = proto_msg_decode(hdr.type, payload, hdr.payload_len, err, msg_out);
	if (rc != 0)
		goto err_log;
	*hdr_out = hdr;
	return 0;
err_log:
	if (who != NULL)
		log_warn("proto", "%s: dropping malformed message: %s", who, err->msg);
	return rc;
}
