/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Monitor-service messages (MON_CMD, MON_CMD_REPLY, MON_SUB, OSD_BOOT,
 * OSD_BEACON, OSD_FAILURE, AUTH_TICKET[_REPLY], AUTH_SVC_KEYS[_REPLY]), the
 * messenger's rendezvous (BULK, BULK_DONE) and its authentication handshake
 * (AUTH). Same rules as msg.c: decoders parse into a local, reject trailing
 * bytes, validate, and write the out-parameter only on success.
 */
#include "proto/proto.h"

#include <errno.h>
#include <string.h>

#define PROTO_ENC_CHECK(expr)                                                                      \
	do {                                                                                       \
		if ((expr) != 0)                                                                   \
			return -EINVAL;                                                            \
	} while (0)

/* ------------------------------------------------------------------- bulk */

int proto_bulk_validate(const struct proto_bulk *m, struct proto_err *err)
{
	if (m->len <= PROTO_HDR_LEN || m->len > PROTO_HDR_LEN + PROTO_PAYLOAD_MAX)
		return proto_err_set(err, "bulk", "len: %u not in %u..%u", m->len,
				     PROTO_HDR_LEN + 1, PROTO_HDR_LEN + PROTO_PAYLOAD_MAX);
	if (m->rkey.len < m->len)
		return proto_err_set(err, "bulk", "rkey: region of %llu bytes < len %u",
				     (unsigned long long)m->rkey.len, m->len);
	if (m->rkey.len > UINT64_MAX - m->rkey.addr)
		return proto_err_set(err, "bulk", "rkey: addr 0x%llx + len %llu overflows",
				     (unsigned long long)m->rkey.addr,
				     (unsigned long long)m->rkey.len);
	return 0;
}

int proto_bulk_encode(struct proto_enc *enc, const struct proto_bulk *m)
{
	PROTO_ENC_CHECK(proto_bulk_validate(m, NULL));
	proto_enc_put_u64(enc, m->id);
	proto_enc_put_u32(enc, m->len);
	proto_enc_put_u64(enc, m->rkey.addr);
	proto_enc_put_u64(enc, m->rkey.len);
	proto_enc_put_u64(enc, m->rkey.key);
	return 0;
}

int proto_bulk_decode(const void *buf, size_t len, struct proto_err *err, struct proto_bulk *m_out)
{
	struct proto_bulk m;
	struct proto_dec dec;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "bulk", err);
	proto_dec_get_u64(&dec, "id", &m.id);
	proto_dec_get_u32(&dec, "len", &m.len);
	proto_dec_get_u64(&dec, "rkey.addr", &m.rkey.addr);
	proto_dec_get_u64(&dec, "rkey.len", &m.rkey.len);
	proto_dec_get_u64(&dec, "rkey.key", &m.rkey.key);
	if (proto_dec_finish(&dec) != 0 || proto_bulk_validate(&m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

int proto_bulk_done_validate(const struct proto_bulk_done *m, struct proto_err *err)
{
	if (m->status > 0)
		return proto_err_set(err, "bulk_done", "status: %d is positive", m->status);
	return 0;
}

int proto_bulk_done_encode(struct proto_enc *enc, const struct proto_bulk_done *m)
{
	PROTO_ENC_CHECK(proto_bulk_done_validate(m, NULL));
	proto_enc_put_u64(enc, m->id);
	proto_enc_put_u32(enc, (uint32_t)m->status);
	return 0;
}

int proto_bulk_done_decode(const void *buf, size_t len, struct proto_err *err,
			   struct proto_bulk_done *m_out)
{
	struct proto_bulk_done m;
	struct proto_dec dec;
	uint32_t status = 0;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "bulk_done", err);
	proto_dec_get_u64(&dec, "id", &m.id);
	proto_dec_get_u32(&dec, "status", &status);
	m.status = (int32_t)status;
	if (proto_dec_finish(&dec) != 0 || proto_bulk_done_validate(&m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

/* ------------------------------------------------------------------- auth */

int proto_auth_validate(const struct proto_auth *m, struct proto_err *err)
{
	if (m->len == 0 || m->len > PROTO_AUTH_MAX)
		return proto_err_set(err, "auth", "data: %u bytes, not in 1..%u", m->len,
				     PROTO_AUTH_MAX);
	return 0;
}

int proto_auth_encode(struct proto_enc *enc, const struct proto_auth *m)
{
	PROTO_ENC_CHECK(proto_auth_validate(m, NULL));
	proto_enc_put_blob32(enc, m->data, m->len);
	return 0;
}

int proto_auth_decode(const void *buf, size_t len, struct proto_err *err, struct proto_auth *m_out)
{
	struct proto_auth m = {0};
	struct proto_dec dec;

	proto_dec_init(&dec, buf, len, "auth", err);
	proto_dec_get_blob32(&dec, "data", PROTO_AUTH_MAX, &m.data, &m.len);
	if (proto_dec_finish(&dec) != 0 || proto_auth_validate(&m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

/* ---------------------------------------------------------------- mon_cmd */

int proto_mon_cmd_validate(const struct proto_mon_cmd *m, struct proto_err *err)
{
	if (m->json_len < 2 || m->json_len > PROTO_MON_CMD_MAX)
		return proto_err_set(err, "mon_cmd", "json: length %u not in 2..%u", m->json_len,
				     PROTO_MON_CMD_MAX);
	if (m->json == NULL)
		return proto_err_set(err, "mon_cmd", "json: no buffer");
	if (memchr(m->json, '\0', m->json_len) != NULL)
		return proto_err_set(err, "mon_cmd", "json: holds a NUL byte");
	return 0;
}

int proto_mon_cmd_encode(struct proto_enc *enc, const struct proto_mon_cmd *m)
{
	PROTO_ENC_CHECK(proto_mon_cmd_validate(m, NULL));
	proto_enc_put_blob32(enc, m->json, m->json_len);
	return 0;
}

int proto_mon_cmd_decode(const void *buf, size_t len, struct proto_err *err,
			 struct proto_mon_cmd *m_out)
{
	struct proto_mon_cmd m;
	struct proto_dec dec;
	const void *p = NULL;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "mon_cmd", err);
	proto_dec_get_blob32(&dec, "json", PROTO_MON_CMD_MAX, &p, &m.json_len);
	m.json = p;
	if (proto_dec_finish(&dec) != 0 || proto_mon_cmd_validate(&m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

int proto_mon_cmd_reply_validate(const struct proto_mon_cmd_reply *m, struct proto_err *err)
{
	if (m->status > 0)
		return proto_err_set(err, "mon_cmd_reply", "status: %d is positive", m->status);
	if (m->out_len > PROTO_MON_OUT_MAX)
		return proto_err_set(err, "mon_cmd_reply", "out: length %u exceeds max %u",
				     m->out_len, PROTO_MON_OUT_MAX);
	if (m->out_len > 0 && m->out == NULL)
		return proto_err_set(err, "mon_cmd_reply", "out: %u bytes but no buffer",
				     m->out_len);
	if (m->msg_len > PROTO_ERRMSG_MAX)
		return proto_err_set(err, "mon_cmd_reply", "msg: length %zu exceeds max %u",
				     m->msg_len, PROTO_ERRMSG_MAX);
	if (memchr(m->msg, '\0', m->msg_len) != NULL)
		return proto_err_set(err, "mon_cmd_reply", "msg: holds a NUL byte");
	return 0;
}

int proto_mon_cmd_reply_encode(struct proto_enc *enc, const struct proto_mon_cmd_reply *m)
{
	PROTO_ENC_CHECK(proto_mon_cmd_reply_validate(m, NULL));
	proto_enc_put_u32(enc, (uint32_t)m->status);
	proto_enc_put_u32(enc, m->epoch);
	proto_enc_put_blob32(enc, m->out, m->out_len);
	proto_enc_put_str16(enc, m->msg, m->msg_len);
	return 0;
}

int proto_mon_cmd_reply_decode(const void *buf, size_t len, struct proto_err *err,
			       struct proto_mon_cmd_reply *m_out)
{
	struct proto_mon_cmd_reply m;
	struct proto_dec dec;
	uint32_t status = 0;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "mon_cmd_reply", err);
	proto_dec_get_u32(&dec, "status", &status);
	proto_dec_get_u32(&dec, "epoch", &m.epoch);
	proto_dec_get_blob32(&dec, "out", PROTO_MON_OUT_MAX, &m.out, &m.out_len);
	proto_dec_get_str16(&dec, "msg", PROTO_ERRMSG_MAX, m.msg, sizeof(m.msg), &m.msg_len);
	m.status = (int32_t)status;
	if (proto_dec_finish(&dec) != 0 || proto_mon_cmd_reply_validate(&m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

/* ---------------------------------------------------------------- mon_sub */

int proto_mon_sub_validate(const struct proto_mon_sub *m, struct proto_err *err)
{
	if ((m->flags & ~PROTO_SUB_FLAGS_KNOWN) != 0)
		return proto_err_set(err, "mon_sub", "flags: unknown bits 0x%02x",
				     m->flags & ~PROTO_SUB_FLAGS_KNOWN);
	return 0;
}

int proto_mon_sub_encode(struct proto_enc *enc, const struct proto_mon_sub *m)
{
	PROTO_ENC_CHECK(proto_mon_sub_validate(m, NULL));
	proto_enc_put_u32(enc, m->have_epoch);
	proto_enc_put_u8(enc, m->flags);
	return 0;
}

int proto_mon_sub_decode(const void *buf, size_t len, struct proto_err *err,
			 struct proto_mon_sub *m_out)
{
	struct proto_mon_sub m;
	struct proto_dec dec;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "mon_sub", err);
	proto_dec_get_u32(&dec, "have_epoch", &m.have_epoch);
	proto_dec_get_u8(&dec, "flags", &m.flags);
	if (proto_dec_finish(&dec) != 0 || proto_mon_sub_validate(&m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

/* --------------------------------------------------------------- osd_boot */

static int proto_str_check(struct proto_err *err, const char *field, const char *s, size_t len,
			   size_t min, size_t max)
{
	if (len < min || len > max)
		return proto_err_set(err, "osd_boot", "%s: length %zu not in %zu..%zu", field, len,
				     min, max);
	if (memchr(s, '\0', len) != NULL)
		return proto_err_set(err, "osd_boot", "%s: holds a NUL byte", field);
	return 0;
}

int proto_osd_boot_validate(const struct proto_osd_boot *m, struct proto_err *err)
{
	static const uint8_t zero[PROTO_UUID_LEN];

	if (memcmp(m->uuid, zero, sizeof(zero)) == 0)
		return proto_err_set(err, "osd_boot", "uuid: all zero");
	if (proto_str_check(err, "host", m->host, m->host_len, 1, PROTO_NAME_MAX) != 0 ||
	    proto_str_check(err, "public_addr", m->public_addr, m->public_addr_len, 1,
			    PROTO_ADDR_MAX) != 0 ||
	    proto_str_check(err, "cluster_addr", m->cluster_addr, m->cluster_addr_len, 0,
			    PROTO_ADDR_MAX) != 0)
		return -EBADMSG;
	return 0;
}

int proto_osd_boot_encode(struct proto_enc *enc, const struct proto_osd_boot *m)
{
	PROTO_ENC_CHECK(proto_osd_boot_validate(m, NULL));
	proto_enc_put_bytes(enc, m->uuid, sizeof(m->uuid));
	proto_enc_put_u32(enc, m->want_id);
	proto_enc_put_u32(enc, m->weight);
	proto_enc_put_str16(enc, m->host, m->host_len);
	proto_enc_put_str16(enc, m->public_addr, m->public_addr_len);
	proto_enc_put_str16(enc, m->cluster_addr, m->cluster_addr_len);
	return 0;
}

int proto_osd_boot_decode(const void *buf, size_t len, struct proto_err *err,
			  struct proto_osd_boot *m_out)
{
	struct proto_osd_boot m;
	struct proto_dec dec;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "osd_boot", err);
	proto_dec_get_bytes(&dec, "uuid", m.uuid, sizeof(m.uuid));
	proto_dec_get_u32(&dec, "want_id", &m.want_id);
	proto_dec_get_u32(&dec, "weight", &m.weight);
	proto_dec_get_str16(&dec, "host", PROTO_NAME_MAX, m.host, sizeof(m.host), &m.host_len);
	proto_dec_get_str16(&dec, "public_addr", PROTO_ADDR_MAX, m.public_addr,
			    sizeof(m.public_addr), &m.public_addr_len);
	proto_dec_get_str16(&dec, "cluster_addr", PROTO_ADDR_MAX, m.cluster_addr,
			    sizeof(m.cluster_addr), &m.cluster_addr_len);
	if (proto_dec_finish(&dec) != 0 || proto_osd_boot_validate(&m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

/* ------------------------------------------------------------- osd_beacon */

int proto_osd_beacon_encode(struct proto_enc *enc, const struct proto_osd_beacon *m)
{
	proto_enc_put_u32(enc, m->id);
	proto_enc_put_u32(enc, m->epoch);
	proto_enc_put_bytes(enc, m->uuid, sizeof(m->uuid));
	return 0;
}

int proto_osd_beacon_decode(const void *buf, size_t len, struct proto_err *err,
			    struct proto_osd_beacon *m_out)
{
	struct proto_osd_beacon m;
	struct proto_dec dec;

	proto_dec_init(&dec, buf, len, "osd_beacon", err);
	proto_dec_get_u32(&dec, "id", &m.id);
	proto_dec_get_u32(&dec, "epoch", &m.epoch);
	proto_dec_get_bytes(&dec, "uuid", m.uuid, sizeof(m.uuid));
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

/* ------------------------------------------------------------ osd_failure */

int proto_osd_failure_validate(const struct proto_osd_failure *m, struct proto_err *err)
{
	if ((m->flags & ~PROTO_FAIL_FLAGS_KNOWN) != 0)
		return proto_err_set(err, "osd_failure", "flags: unknown bits 0x%02x",
				     m->flags & ~PROTO_FAIL_FLAGS_KNOWN);
	if (m->target == m->reporter)
		return proto_err_set(err, "osd_failure", "target: osd.%u reports itself",
				     m->target);
	return 0;
}

int proto_osd_failure_encode(struct proto_enc *enc, const struct proto_osd_failure *m)
{
	PROTO_ENC_CHECK(proto_osd_failure_validate(m, NULL));
	proto_enc_put_u32(enc, m->target);
	proto_enc_put_u32(enc, m->reporter);
	proto_enc_put_u32(enc, m->epoch);
	proto_enc_put_u32(enc, m->failed_ms);
	proto_enc_put_u8(enc, m->flags);
	return 0;
}

int proto_osd_failure_decode(const void *buf, size_t len, struct proto_err *err,
			     struct proto_osd_failure *m_out)
{
	struct proto_osd_failure m;
	struct proto_dec dec;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "osd_failure", err);
	proto_dec_get_u32(&dec, "target", &m.target);
	proto_dec_get_u32(&dec, "reporter", &m.reporter);
	proto_dec_get_u32(&dec, "epoch", &m.epoch);
	proto_dec_get_u32(&dec, "failed_ms", &m.failed_ms);
	proto_dec_get_u8(&dec, "flags", &m.flags);
	if (proto_dec_finish(&dec) != 0 || proto_osd_failure_validate(&m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

/* ------------------------------------------------------------ auth_ticket */

int proto_auth_ticket_validate(const struct proto_auth_ticket *m, struct proto_err *err)
{
	if (m->service != PROTO_AUTH_SVC_OSD)
		return proto_err_set(err, "auth_ticket", "service: %u is not osd (%u)", m->service,
				     PROTO_AUTH_SVC_OSD);
	return 0;
}

int proto_auth_ticket_encode(struct proto_enc *enc, const struct proto_auth_ticket *m)
{
	PROTO_ENC_CHECK(proto_auth_ticket_validate(m, NULL));
	proto_enc_put_u8(enc, m->service);
	return 0;
}

int proto_auth_ticket_decode(const void *buf, size_t len, struct proto_err *err,
			     struct proto_auth_ticket *m_out)
{
	struct proto_auth_ticket m;
	struct proto_dec dec;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "auth_ticket", err);
	proto_dec_get_u8(&dec, "service", &m.service);
	if (proto_dec_finish(&dec) != 0 || proto_auth_ticket_validate(&m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

static const char *proto_auth_reply_name(uint16_t type)
{
	return type == PROTO_AUTH_TICKET_REPLY ? "auth_ticket_reply" : "auth_svc_keys_reply";
}

int proto_auth_ticket_reply_validate(uint16_t type, const struct proto_auth_ticket_reply *m,
				     struct proto_err *err)
{
	const char *what = proto_auth_reply_name(type);
	uint32_t max =
	    type == PROTO_AUTH_TICKET_REPLY ? PROTO_AUTH_GRANT_MAX : PROTO_AUTH_SVC_KEYS_MAX;

	if (m->status > 0)
		return proto_err_set(err, what, "status: %d is positive", m->status);
	if (m->blob_len > max)
		return proto_err_set(err, what, "blob: length %u exceeds max %u", m->blob_len, max);
	if (m->blob_len > 0 && m->blob == NULL)
		return proto_err_set(err, what, "blob: %u bytes but no buffer", m->blob_len);
	if (m->status < 0 && m->blob_len != 0)
		return proto_err_set(err, what, "blob: %u bytes with status %d", m->blob_len,
				     m->status);
	if (m->status == 0 && type == PROTO_AUTH_TICKET_REPLY && m->blob_len == 0)
		return proto_err_set(err, what, "blob: no grant with status 0");
	if (m->status == 0 && m->msg_len != 0)
		return proto_err_set(err, what, "msg: %zu bytes with status 0", m->msg_len);
	if (m->msg_len > PROTO_ERRMSG_MAX)
		return proto_err_set(err, what, "msg: length %zu exceeds max %u", m->msg_len,
				     PROTO_ERRMSG_MAX);
	if (memchr(m->msg, '\0', m->msg_len) != NULL)
		return proto_err_set(err, what, "msg: holds a NUL byte");
	return 0;
}

int proto_auth_ticket_reply_encode(struct proto_enc *enc, uint16_t type,
				   const struct proto_auth_ticket_reply *m)
{
	PROTO_ENC_CHECK(proto_auth_ticket_reply_validate(type, m, NULL));
	proto_enc_put_u32(enc, (uint32_t)m->status);
	proto_enc_put_blob32(enc, m->blob, m->blob_len);
	proto_enc_put_str16(enc, m->msg, m->msg_len);
	return 0;
}

int proto_auth_ticket_reply_decode(uint16_t type, const void *buf, size_t len,
				   struct proto_err *err, struct proto_auth_ticket_reply *m_out)
{
	struct proto_auth_ticket_reply m;
	struct proto_dec dec;
	uint32_t status = 0;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, proto_auth_reply_name(type), err);
	proto_dec_get_u32(&dec, "status", &status);
	proto_dec_get_blob32(&dec, "blob",
			     type == PROTO_AUTH_TICKET_REPLY ? PROTO_AUTH_GRANT_MAX
							     : PROTO_AUTH_SVC_KEYS_MAX,
			     &m.blob, &m.blob_len);
	proto_dec_get_str16(&dec, "msg", PROTO_ERRMSG_MAX, m.msg, sizeof(m.msg), &m.msg_len);
	m.status = (int32_t)status;
	if (proto_dec_finish(&dec) != 0 || proto_auth_ticket_reply_validate(type, &m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

int proto_auth_svc_keys_encode(struct proto_enc *enc, const struct proto_auth_svc_keys *m)
{
	proto_enc_put_u32(enc, m->have_id);
	return 0;
}

int proto_auth_svc_keys_decode(const void *buf, size_t len, struct proto_err *err,
			       struct proto_auth_svc_keys *m_out)
{
	struct proto_auth_svc_keys m;
	struct proto_dec dec;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "auth_svc_keys", err);
	proto_dec_get_u32(&dec, "have_id", &m.have_id);
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}
