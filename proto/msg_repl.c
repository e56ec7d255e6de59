/* SPDX-License-Identifier: Apache-2.0 */
/* Replication control messages (proto_repl.h). Layouts: docs/protocol.md. */
#include <errno.h>
#include <string.h>

#include "proto/codec.h"
#include "proto/proto.h"

int proto_repl_validate(uint16_t type, const struct proto_msg *m, struct proto_err *err)
{
	const struct proto_rkey *r = &m->repl_ring_grant.ring;

	switch (type) {
	case PROTO_REPL_RING_REQ:
		return 0;
	case PROTO_REPL_RING_GRANT:
		if (r->len == 0)
			return proto_err_set(err, "repl_ring_grant", "ring: empty region");
		if (r->len > UINT64_MAX - r->addr)
			return proto_err_set(
			    err, "repl_ring_grant", "ring: addr 0x%llx + len %llu overflows",
			    (unsigned long long)r->addr, (unsigned long long)r->len);
		return 0;
	case PROTO_REPL_ACK:
		if (m->repl_ack.status > 0)
			return proto_err_set(err, "repl_ack", "status: %d is positive",
					     m->repl_ack.status);
		return 0;
	}
	return proto_err_set(err, "repl", "type: %u is not a replication message", type);
}

int proto_repl_encode(struct proto_enc *enc, const struct proto_msg *m)
{
	/* an encoder refuses what its decoder would reject: the sender has a bug */
	if (proto_repl_validate(m->type, m, NULL) != 0)
		return -EINVAL;
	switch (m->type) {
	case PROTO_REPL_RING_REQ:
		proto_enc_put_u32(enc, m->repl_ring_req.osd_id);
		break;
	case PROTO_REPL_RING_GRANT:
		proto_enc_put_u64(enc, m->repl_ring_grant.ring.addr);
		proto_enc_put_u64(enc, m->repl_ring_grant.ring.len);
		proto_enc_put_u64(enc, m->repl_ring_grant.ring.key);
		break;
	case PROTO_REPL_ACK:
		proto_enc_put_u64(enc, m->repl_ack.ring_off);
		proto_enc_put_u32(enc, m->repl_ack.pool);
		proto_enc_put_u32(enc, m->repl_ack.pg);
		proto_enc_put_u64(enc, m->repl_ack.version);
		proto_enc_put_u32(enc, (uint32_t)m->repl_ack.status);
		break;
	}
	return 0;
}

int proto_repl_decode(uint16_t type, const void *buf, size_t len, struct proto_err *err,
		      struct proto_msg *m_out)
{
	struct proto_msg m;
	struct proto_dec dec;
	uint32_t st = 0;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, proto_type_name(type), err);
	switch (type) {
	case PROTO_REPL_RING_REQ:
		proto_dec_get_u32(&dec, "osd_id", &m.repl_ring_req.osd_id);
		break;
	case PROTO_REPL_RING_GRANT:
		proto_dec_get_u64(&dec, "ring.addr", &m.repl_ring_grant.ring.addr);
		proto_dec_get_u64(&dec, "ring.len", &m.repl_ring_grant.ring.len);
		proto_dec_get_u64(&dec, "ring.key", &m.repl_ring_grant.ring.key);
		break;
	case PROTO_REPL_ACK:
		proto_dec_get_u64(&dec, "ring_off", &m.repl_ack.ring_off);
		proto_dec_get_u32(&dec, "pool", &m.repl_ack.pool);
		proto_dec_get_u32(&dec, "pg", &m.repl_ack.pg);
		proto_dec_get_u64(&dec, "version", &m.repl_ack.version);
		proto_dec_get_u32(&dec, "status", &st);
		m.repl_ack.status = (int32_t)st;
		break;
	default:
		return proto_err_set(err, "repl", "type: %u is not a replication message", type);
	}
	if (proto_dec_finish(&dec) != 0 || proto_repl_validate(type, &m, err) != 0)
		return -EBADMSG;
	/* only the member of this type: the caller's union keeps the rest */
	switch (type) {
	case PROTO_REPL_RING_REQ:
		m_out->repl_ring_req = m.repl_ring_req;
		break;
	case PROTO_REPL_RING_GRANT:
		m_out->repl_ring_grant = m.repl_ring_grant;
		break;
	default:
		m_out->repl_ack = m.repl_ack;
		break;
	}
	return 0;
}
