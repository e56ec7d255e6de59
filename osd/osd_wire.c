/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Cluster-network codec (docs/osd.md, "Replication ring"): the small
 * two-sided messages between a primary and a replica, and the header of a
 * replication record written into a replica's ring. Built on the proto
 * codec, so every field is bounds-checked and decoding is canonical.
 */
#include <errno.h>
#include <string.h>

#include "osd/osd.h"
#include "proto/codec.h"

int osd_wire_encode(const struct osd_wire_msg *m, void *buf, size_t cap, size_t *len_out)
{
	struct proto_enc enc;

	proto_enc_init(&enc, buf, cap);
	proto_enc_put_u32(&enc, OSD_WIRE_MAGIC);
	proto_enc_put_u32(&enc, m->type);
	switch (m->type) {
	case OSD_WIRE_RING_REQ:
		proto_enc_put_u32(&enc, m->osd_id);
		break;
	case OSD_WIRE_RING_GRANT:
		proto_enc_put_u64(&enc, m->ring.addr);
		proto_enc_put_u64(&enc, m->ring.len);
		proto_enc_put_u64(&enc, m->ring.key);
		break;
	case OSD_WIRE_ACK:
		proto_enc_put_u64(&enc, m->ring_off);
		proto_enc_put_u32(&enc, m->pool);
		proto_enc_put_u32(&enc, m->pg);
		proto_enc_put_u64(&enc, m->version);
		proto_enc_put_u32(&enc, (uint32_t)m->status);
		break;
	case OSD_WIRE_PING:
	case OSD_WIRE_PONG:
		proto_enc_put_u64(&enc, m->stamp);
		break;
	default:
		return -EINVAL;
	}
	return proto_enc_finish(&enc, len_out);
}

int osd_wire_decode(const void *buf, size_t len, struct osd_wire_msg *m_out)
{
	struct osd_wire_msg m = {0};
	struct proto_dec dec;
	uint32_t magic = 0, st = 0;

	proto_dec_init(&dec, buf, len, "osd_wire", NULL);
	proto_dec_get_u32(&dec, "magic", &magic);
	proto_dec_get_u32(&dec, "type", &m.type);
	if (dec.err == 0 && magic != OSD_WIRE_MAGIC)
		return -EBADMSG;
	switch (m.type) {
	case OSD_WIRE_RING_REQ:
		proto_dec_get_u32(&dec, "osd_id", &m.osd_id);
		break;
	case OSD_WIRE_RING_GRANT:
		proto_dec_get_u64(&dec, "addr", &m.ring.addr);
		proto_dec_get_u64(&dec, "len", &m.ring.len);
		proto_dec_get_u64(&dec, "key", &m.ring.key);
		break;
	case OSD_WIRE_ACK:
		proto_dec_get_u64(&dec, "ring_off", &m.ring_off);
		proto_dec_get_u32(&dec, "pool", &m.pool);
		proto_dec_get_u32(&dec, "pg", &m.pg);
		proto_dec_get_u64(&dec, "version", &m.version);
		proto_dec_get_u32(&dec, "status", &st);
		m.status = (int32_t)st;
		if (dec.err == 0 && m.status > 0)
			return -EBADMSG;
		break;
	case OSD_WIRE_PING:
	case OSD_WIRE_PONG:
		proto_dec_get_u64(&dec, "stamp", &m.stamp);
		break;
	default:
		return -EBADMSG;
	}
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

int osd_rec_hdr_encode(const struct osd_rec_hdr *h, void *buf, size_t cap, size_t *len_out)
{
	struct proto_enc enc;
	size_t len;
	int rc;

	proto_enc_init(&enc, buf, cap);
	proto_enc_put_u32(&enc, OSD_WIRE_MAGIC);
	proto_enc_put_u16(&enc, h->op);
	proto_enc_put_u32(&enc, h->pool);
	proto_enc_put_u32(&enc, h->pg);
	proto_enc_put_u32(&enc, h->epoch);
	proto_enc_put_u64(&enc, h->version);
	proto_enc_put_u64(&enc, h->prev);
	proto_enc_put_u64(&enc, h->offset);
	proto_enc_put_u64(&enc, h->length);
	proto_enc_put_str16(&enc, h->name, h->name_len);
	rc = proto_enc_finish(&enc, &len);
	if (rc != 0)
		return rc;
	/* the data starts aligned, so a replica's store gets a well-aligned source */
	len = (len + 63) & ~(size_t)63;
	if (buf != NULL && len > cap)
		return -ENOBUFS;
	*len_out = len;
	return 0;
}

int osd_rec_hdr_decode(const void *buf, size_t len, struct osd_rec_hdr *h_out,
		       uint32_t *hdr_len_out)
{
	struct osd_rec_hdr h = {0};
	struct proto_dec dec;
	uint32_t magic = 0;
	size_t hl;

	proto_dec_init(&dec, buf, len < OSD_REC_HDR_MAX ? len : OSD_REC_HDR_MAX, "osd_rec", NULL);
	proto_dec_get_u32(&dec, "magic", &magic);
	proto_dec_get_u16(&dec, "op", &h.op);
	proto_dec_get_u32(&dec, "pool", &h.pool);
	proto_dec_get_u32(&dec, "pg", &h.pg);
	proto_dec_get_u32(&dec, "epoch", &h.epoch);
	proto_dec_get_u64(&dec, "version", &h.version);
	proto_dec_get_u64(&dec, "prev", &h.prev);
	proto_dec_get_u64(&dec, "offset", &h.offset);
	proto_dec_get_u64(&dec, "length", &h.length);
	proto_dec_get_str16(&dec, "name", PROTO_OBJ_NAME_MAX, h.name, sizeof(h.name), &h.name_len);
	if (dec.err != 0 || magic != OSD_WIRE_MAGIC || h.name_len == 0)
		return -EBADMSG;
	hl = (dec.off + 63) & ~(size_t)63;
	/* length is the payload's, except for zero: its range, with no payload */
	if (hl > len || h.length != (h.op == PROTO_OP_ZERO ? h.length : len - hl) ||
	    (h.op == PROTO_OP_ZERO && len != hl) || h.length > UINT64_MAX - h.offset)
		return -EBADMSG;
	switch (h.op) {
	case PROTO_OP_WRITE:
	case PROTO_OP_WRITE_FULL:
	case 7: /* recovery push chunk (OSD_REC_PUSH, osd_pg.h) */
	case 8: /* its last chunk (OSD_REC_PUSH_LAST) */
		break;
	case PROTO_OP_ZERO:
		break;
	case PROTO_OP_REMOVE:
	case PROTO_OP_TRUNCATE:
	case 9: /* recovery: the object must not exist (OSD_REC_PUSH_RM) */
		if (h.length != 0)
			return -EBADMSG;
		break;
	default:
		return -EBADMSG;
	}
	*h_out = h;
	*hdr_len_out = (uint32_t)hl;
	return 0;
}
