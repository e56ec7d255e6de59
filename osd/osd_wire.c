/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The header of a replication record written into a replica's ring
 * (docs/osd.md, "Replication ring"); the ring's control frames are proto
 * messages (proto/proto_repl.h). Built on the proto codec, so every field is
 * bounds-checked and decoding is canonical.
 */
#include <errno.h>
#include <string.h>

#include "osd/osd.h"
#include "proto/codec.h"

int osd_rec_hdr_encode(const struct osd_rec_hdr *h, void *buf, size_t cap, size_t *len_out)
{
	struct proto_enc enc;
	size_t len;
	int rc;

	proto_enc_init(&enc, buf, cap);
	proto_enc_put_u32(&enc, OSD_REC_MAGIC);
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
	if (dec.err != 0 || magic != OSD_REC_MAGIC || h.name_len == 0)
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
