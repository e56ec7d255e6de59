/* SPDX-License-Identifier: Apache-2.0 */
/* The fixed 32-byte frame header. Layout: docs/protocol.md. */
#include "proto/proto.h"

#include <errno.h>

#include "common/crc32c.h"

const char *proto_type_name(uint16_t type)
{
	switch (type) {
	case PROTO_HELLO:
		return "hello";
	case PROTO_AUTH_CHALLENGE:
		return "auth_challenge";
	case PROTO_AUTH_RESPONSE:
		return "auth_response";
	case PROTO_PING:
		return "ping";
	case PROTO_PONG:
		return "pong";
	case PROTO_ERROR:
		return "error";
	case PROTO_AUTH:
		return "auth";
	case PROTO_MAP_GET:
		return "map_get";
	case PROTO_MAP:
		return "map";
	case PROTO_OSD_OP:
		return "osd_op";
	case PROTO_OSD_OP_REPLY:
		return "osd_op_reply";
	case PROTO_BULK:
		return "bulk";
	case PROTO_BULK_DONE:
		return "bulk_done";
	case PROTO_MON_CMD:
		return "mon_cmd";
	case PROTO_MON_CMD_REPLY:
		return "mon_cmd_reply";
	case PROTO_MON_SUB:
		return "mon_sub";
	case PROTO_AUTH_TICKET:
		return "auth_ticket";
	case PROTO_AUTH_TICKET_REPLY:
		return "auth_ticket_reply";
	case PROTO_AUTH_SVC_KEYS:
		return "auth_svc_keys";
	case PROTO_AUTH_SVC_KEYS_REPLY:
		return "auth_svc_keys_reply";
	case PROTO_MAP_INC:
		return "map_inc";
	case PROTO_OSD_BOOT:
		return "osd_boot";
	case PROTO_OSD_BEACON:
		return "osd_beacon";
	case PROTO_OSD_FAILURE:
		return "osd_failure";
	case PROTO_PG_STATS:
		return "pg_stats";
	case PROTO_PG_QUERY:
		return "pg_query";
	case PROTO_PG_INFO:
		return "pg_info";
	case PROTO_PG_LOG_REQ:
		return "pg_log_req";
	case PROTO_PG_LOG:
		return "pg_log";
	case PROTO_PG_ACTIVATE:
		return "pg_activate";
	case PROTO_PG_PULL:
		return "pg_pull";
	case PROTO_PG_RECOVERED:
		return "pg_recovered";
	case PROTO_PG_SCAN_REQ:
		return "pg_scan_req";
	case PROTO_PG_SCAN:
		return "pg_scan";
	case PROTO_PG_DELETE:
		return "pg_delete";
	case PROTO_PG_NOTIFY:
		return "pg_notify";
	case PROTO_REPL_RING_REQ:
		return "repl_ring_req";
	case PROTO_REPL_RING_GRANT:
		return "repl_ring_grant";
	case PROTO_REPL_ACK:
		return "repl_ack";
	}
	return "unknown";
}

bool proto_type_known(uint16_t type)
{
	switch (type) {
	case PROTO_HELLO:
	case PROTO_AUTH_CHALLENGE:
	case PROTO_AUTH_RESPONSE:
	case PROTO_PING:
	case PROTO_PONG:
	case PROTO_ERROR:
	case PROTO_AUTH:
	case PROTO_MAP_GET:
	case PROTO_MAP:
	case PROTO_OSD_OP:
	case PROTO_OSD_OP_REPLY:
	case PROTO_BULK:
	case PROTO_BULK_DONE:
	case PROTO_MON_CMD:
	case PROTO_MON_CMD_REPLY:
	case PROTO_MON_SUB:
	case PROTO_AUTH_TICKET:
	case PROTO_AUTH_TICKET_REPLY:
	case PROTO_AUTH_SVC_KEYS:
	case PROTO_AUTH_SVC_KEYS_REPLY:
	case PROTO_MAP_INC:
	case PROTO_OSD_BOOT:
	case PROTO_OSD_BEACON:
	case PROTO_PG_STATS:
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
	case PROTO_REPL_RING_REQ:
	case PROTO_REPL_RING_GRANT:
	case PROTO_REPL_ACK:
	case PROTO_PG_NOTIFY:
	case PROTO_OSD_FAILURE:
		return true;
	}
	return false;
}

void proto_hdr_encode(const struct proto_hdr *hdr, uint8_t out[PROTO_HDR_LEN])
{
	struct proto_enc enc;
	size_t len;

	proto_enc_init(&enc, out, PROTO_HDR_LEN);
	proto_enc_put_u32(&enc, PROTO_MAGIC);
	proto_enc_put_u8(&enc, PROTO_VERSION);
	proto_enc_put_u8(&enc, hdr->flags);
	proto_enc_put_u16(&enc, hdr->type);
	proto_enc_put_u32(&enc, hdr->payload_len);
	proto_enc_put_u32(&enc, hdr->payload_crc);
	proto_enc_put_u64(&enc, hdr->tid);
	proto_enc_put_u32(&enc, 0); /* reserved */
	proto_enc_put_u32(&enc, crc32c(0, out, PROTO_HDR_CRC_OFF));
	/* 32 bytes into a 32-byte array cannot fail */
	(void)proto_enc_finish(&enc, &len);
}

int proto_hdr_decode(const void *buf, size_t len, uint32_t max_payload, struct proto_err *err,
		     struct proto_hdr *hdr_out)
{
	struct proto_dec dec;
	struct proto_hdr hdr;
	uint32_t magic, reserved, crc, want_crc;

	if (max_payload > PROTO_PAYLOAD_MAX)
		max_payload = PROTO_PAYLOAD_MAX;
	if (buf == NULL || len < PROTO_HDR_LEN)
		return proto_err_set(err, "header", "truncated: %zu bytes, needs %u",
				     buf == NULL ? 0 : len, PROTO_HDR_LEN);
	proto_dec_init(&dec, buf, PROTO_HDR_LEN, "header", err);
	proto_dec_get_u32(&dec, "magic", &magic);
	proto_dec_get_u8(&dec, "version", &hdr.version);
	proto_dec_get_u8(&dec, "flags", &hdr.flags);
	proto_dec_get_u16(&dec, "type", &hdr.type);
	proto_dec_get_u32(&dec, "payload_len", &hdr.payload_len);
	proto_dec_get_u32(&dec, "payload_crc", &hdr.payload_crc);
	proto_dec_get_u64(&dec, "tid", &hdr.tid);
	proto_dec_get_u32(&dec, "reserved", &reserved);
	proto_dec_get_u32(&dec, "header_crc", &crc);
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;

	/* Magic and version first: past them the bytes may mean something else. */
	if (magic != PROTO_MAGIC)
		return proto_err_set(err, "header", "magic: 0x%08x is not 0x%08x (\"WEFT\")", magic,
				     PROTO_MAGIC);
	if (hdr.version != PROTO_VERSION)
		return proto_err_set(err, "header", "version: %u not supported (speaks %u)",
				     hdr.version, PROTO_VERSION);
	want_crc = crc32c(0, buf, PROTO_HDR_CRC_OFF);
	if (crc != want_crc)
		return proto_err_set(err, "header", "header_crc: 0x%08x does not match 0x%08x",
				     crc, want_crc);
	if (reserved != 0)
		return proto_err_set(err, "header", "reserved: 0x%08x is not zero", reserved);
	if ((hdr.flags & ~PROTO_HDR_FLAGS_KNOWN) != 0)
		return proto_err_set(err, "header", "flags: unknown bits 0x%02x", hdr.flags);
	if (!proto_type_known(hdr.type))
		return proto_err_set(err, "header", "type: unknown message type %u", hdr.type);
	if (hdr.payload_len > max_payload)
		return proto_err_set(err, "header", "payload_len: %u exceeds max %u",
				     hdr.payload_len, max_payload);
	*hdr_out = hdr;
	return 0;
}

int proto_payload_check(const struct proto_hdr *hdr, const void *payload, size_t len,
			struct proto_err *err)
{
	uint32_t crc;

	if (len != hdr->payload_len)
		return proto_err_set(err, proto_type_name(hdr->type),
				     "payload: %zu bytes, header says %u", len, hdr->payload_len);
	if (len > 0 && payload == NULL)
		return proto_err_set(err, proto_type_name(hdr->type), "payload: missing");
	crc = crc32c(0, payload, len);
	if (crc != hdr->payload_crc)
		return proto_err_set(err, proto_type_name(hdr->type),
				     "payload_crc: 0x%08x does not match 0x%08x", hdr->payload_crc,
				     crc);
	return 0;
}
