/* SPDX-License-Identifier: Apache-2.0 */
/* The Raft port's frames and IDENT (mon_raft_wire.h). */
#include "mon/mon_raft_wire.h"

#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>

static const char mon_raft_ident_label[] = "weft-raft-ident-v1";

void mon_raft_frame_hdr(uint8_t hdr[MON_RAFT_HDR_LEN], uint32_t len)
{
	for (int i = 0; i < 4; i++) {
		hdr[i] = (uint8_t)(MON_RAFT_MAGIC >> (8 * i));
		hdr[4 + i] = (uint8_t)(len >> (8 * i));
	}
}

int mon_raft_frame_hdr_decode(const uint8_t hdr[MON_RAFT_HDR_LEN], struct proto_err *err,
			      uint32_t *len_out)
{
	uint32_t magic = 0, len = 0;

	for (int i = 0; i < 4; i++) {
		magic |= (uint32_t)hdr[i] << (8 * i);
		len |= (uint32_t)hdr[4 + i] << (8 * i);
	}
	if (magic != MON_RAFT_MAGIC)
		return proto_err_set(
		    err, NULL,
		    "not a Weft raft handshake (magic 0x%08x; a monitor of an older "
		    "version, canonical raft's own transport, or not a monitor)",
		    magic);
	if (len == 0 || len > MON_RAFT_FRAME_MAX)
		return proto_err_set(err, NULL, "raft handshake frame of %u bytes (1..%u)", len,
				     MON_RAFT_FRAME_MAX);
	*len_out = len;
	return 0;
}

static int mon_raft_ident_mac(const struct auth_key *session, const uint8_t *p, size_t len,
			      uint8_t mac_out[AUTH_MAC_LEN])
{
	struct auth_iov iov[2] = {{mon_raft_ident_label, sizeof(mon_raft_ident_label)}, {p, len}};

	return auth_hmac(session, iov, 2, mac_out);
}

int mon_raft_ident_encode(const struct auth_key *session, const struct mon_raft_ident *id,
			  void *out, size_t cap, size_t *len_out)
{
	uint8_t mac[AUTH_MAC_LEN];
	struct proto_enc enc;
	size_t len;
	int rc;

	proto_enc_init(&enc, out, cap);
	proto_enc_put_u8(&enc, MON_RAFT_IDENT_KIND);
	proto_enc_put_u64(&enc, id->from_id);
	proto_enc_put_str16(&enc, id->from_addr, strnlen(id->from_addr, sizeof(id->from_addr)));
	proto_enc_put_u64(&enc, id->to_id);
	rc = proto_enc_finish(&enc, &len);
	if (rc != 0)
		return rc;
	rc = mon_raft_ident_mac(session, out, len, mac);
	if (rc != 0)
		return rc;
	proto_enc_put_bytes(&enc, mac, sizeof(mac));
	rc = proto_enc_finish(&enc, &len);
	if (rc == 0)
		*len_out = len;
	return rc;
}

int mon_raft_ident_decode(const struct auth_key *session, const void *buf, size_t len,
			  struct proto_err *err, struct mon_raft_ident *id_out)
{
	uint8_t mac[AUTH_MAC_LEN], want[AUTH_MAC_LEN];
	struct mon_raft_ident id = {0};
	struct proto_dec dec;
	size_t alen = 0, signed_len;
	uint8_t kind;
	int rc;

	proto_dec_init(&dec, buf, len, "raft_ident", err);
	proto_dec_get_u8(&dec, "kind", &kind);
	if (dec.err == 0 && kind != MON_RAFT_IDENT_KIND)
		return proto_dec_fail(&dec, "kind: %u, expected %u", kind, MON_RAFT_IDENT_KIND);
	proto_dec_get_u64(&dec, "from_id", &id.from_id);
	proto_dec_get_str16(&dec, "from_addr", PROTO_ADDR_MAX, id.from_addr, sizeof(id.from_addr),
			    &alen);
	proto_dec_get_u64(&dec, "to_id", &id.to_id);
	signed_len = dec.off;
	proto_dec_get_bytes(&dec, "mac", mac, sizeof(mac));
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;
	if (id.from_id == 0 || id.to_id == 0)
		return proto_err_set(err, "raft_ident",
				     "from_id/to_id: raft id 0 (from %llu, to %llu)",
				     (unsigned long long)id.from_id, (unsigned long long)id.to_id);
	if (alen == 0)
		return proto_err_set(err, "raft_ident", "from_addr: empty");
	rc = mon_raft_ident_mac(session, buf, signed_len, want);
	if (rc != 0)
		return rc;
	if (!auth_mac_equal(want, mac)) {
		OPENSSL_cleanse(want, sizeof(want));
		proto_err_set(err, "raft_ident", "mac: does not verify under the session key");
		return -EACCES;
	}
	OPENSSL_cleanse(want, sizeof(want));
	*id_out = id;
	return 0;
}
