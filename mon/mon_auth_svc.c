/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The service keys in the monitors' replicated state (mon_auth.h): the
 * rotating secrets that seal tickets (auth/ticket.h), their log entry's
 * codec, its application and the rotation schedule. No I/O, no clock:
 * the leader picks the key and the time, every replica applies the same.
 *
 *   svc op = u8 version (1) | u8 kind (1 ROTATE) | u32 new_id | bytes[32] key |
 *            u64 stamp_us | u64 grace_us
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "mon/mon_auth.h"

#define MON_SVC_OP_VERSION 1

static void mon_svc_op_fill(struct proto_enc *enc, const struct mon_svc_op *op)
{
	proto_enc_put_u8(enc, MON_SVC_OP_VERSION);
	proto_enc_put_u8(enc, op->kind);
	proto_enc_put_u32(enc, op->new_id);
	proto_enc_put_bytes(enc, op->key.b, sizeof(op->key.b));
	proto_enc_put_u64(enc, op->stamp_us);
	proto_enc_put_u64(enc, op->grace_us);
}

int mon_svc_op_encode(const struct mon_svc_op *op, void **buf_out, size_t *len_out)
{
	struct proto_enc enc;
	size_t len;
	void *buf;
	int rc;

	proto_enc_init(&enc, NULL, 0);
	mon_svc_op_fill(&enc, op);
	rc = proto_enc_finish(&enc, &len);
	if (rc != 0)
		return rc;
	buf = malloc(len);
	if (buf == NULL)
		return -ENOMEM;
	proto_enc_init(&enc, buf, len);
	mon_svc_op_fill(&enc, op);
	rc = proto_enc_finish(&enc, &len);
	if (rc != 0) {
		OPENSSL_cleanse(buf, len);
		free(buf);
		return rc;
	}
	*buf_out = buf;
	*len_out = len;
	return 0;
}

int mon_svc_op_decode(const void *buf, size_t len, struct proto_err *err, struct mon_svc_op *op_out)
{
	struct mon_svc_op op = {0};
	struct proto_dec dec;
	uint8_t version;
	int rc = -EBADMSG;

	proto_dec_init(&dec, buf, len, "svc_op", err);
	proto_dec_get_u8(&dec, "version", &version);
	if (dec.err == 0 && version != MON_SVC_OP_VERSION)
		return proto_dec_fail(&dec, "version: %u is not supported", version);
	proto_dec_get_u8(&dec, "kind", &op.kind);
	if (dec.err == 0 && op.kind != MON_SVC_OP_ROTATE)
		return proto_dec_fail(&dec, "kind: %u is unknown", op.kind);
	proto_dec_get_u32(&dec, "new_id", &op.new_id);
	proto_dec_get_bytes(&dec, "key", op.key.b, sizeof(op.key.b));
	proto_dec_get_u64(&dec, "stamp_us", &op.stamp_us);
	proto_dec_get_u64(&dec, "grace_us", &op.grace_us);
	if (dec.err == 0 && op.new_id == 0)
		proto_dec_fail(&dec, "new_id: 0 (ids start at 1)");
	if (dec.err == 0 && (op.stamp_us == 0 || op.grace_us == 0))
		proto_dec_fail(&dec, "stamp_us and grace_us must not be 0");
	if (proto_dec_finish(&dec) != 0)
		goto out;
	*op_out = op;
	rc = 0;
out:
	auth_key_wipe(&op.key);
	return rc;
}

int mon_svc_apply(struct mon_auth *db, const struct mon_svc_op *op)
{
	if (op->kind != MON_SVC_OP_ROTATE)
		return -EINVAL;
	return auth_svc_advance(&db->svc, op->new_id, &op->key, op->stamp_us, op->grace_us);
}

uint64_t mon_svc_rotate_every(uint64_t ttl_us)
{
	return ttl_us / 2;
}

uint64_t mon_svc_grace(uint64_t ttl_us)
{
	return ttl_us + ttl_us / 4;
}

bool mon_svc_rotate_due(const struct auth_svc_keys *sk, uint64_t now_us, uint64_t ttl_us)
{
	const struct auth_svc_key *cur = auth_svc_current(sk);

	if (cur == NULL || auth_svc_pending(sk) == NULL)
		return true;
	/* a wall clock that went back never rotates early */
	return now_us >= cur->activated_us &&
	       now_us - cur->activated_us >= mon_svc_rotate_every(ttl_us);
}

/* ---------------------------------------------------------------- tickets */

int mon_ticket_build(const struct mon_auth *db, const char *entity,
		     const struct auth_key *conn_session, uint64_t now_us, uint64_t ttl_us,
		     void *out, size_t cap, size_t *len_out, char *why, size_t whycap)
{
	uint8_t sealed[AUTH_TICKET_PLAIN_MAX + AUTH_SEALED_OVERHEAD];
	const struct mon_auth_ent *e = mon_auth_find(db, entity);
	struct auth_ticket t;
	size_t slen;
	int rc;

	if (e == NULL) {
		snprintf(why, whycap, "%s: no such entity (removed?)", entity);
		return -ENOENT;
	}
	if (!e->caps.set[AUTH_SVC_OSD] || e->caps.count[AUTH_SVC_OSD] == 0) {
		snprintf(why, whycap, "%s has no osd caps: a ticket would allow nothing", entity);
		return -EACCES;
	}
	if (auth_svc_current(&db->svc) == NULL) {
		snprintf(why, whycap,
			 "no service key yet (the leader makes the first ones); retry");
		return -EAGAIN;
	}
	rc = auth_ticket_issue(entity, &e->caps, now_us, ttl_us, &t);
	if (rc == 0)
		rc = auth_ticket_seal(&db->svc, &t, sealed, sizeof(sealed), &slen);
	if (rc == 0)
		rc = auth_grant_build(conn_session, &t, sealed, slen, out, cap, len_out);
	auth_key_wipe(&t.session);
	OPENSSL_cleanse(sealed, sizeof(sealed));
	if (rc != 0)
		snprintf(why, whycap, "%s: cannot build the ticket: %s", entity, strerror(-rc));
	return rc;
}

int mon_svc_keys_build(const struct mon_auth *db, const char *entity,
		       const struct auth_key *conn_session, uint32_t have_id, void *out, size_t cap,
		       size_t *len_out, char *why, size_t whycap)
{
	const struct mon_auth_ent *e = mon_auth_find(db, entity);
	struct auth_entity ent;
	char err[200];
	int rc;

	if (auth_entity_parse(entity, &ent, err, sizeof(err)) != 0 || ent.type != AUTH_ETYPE_OSD) {
		snprintf(why, whycap, "%s is not an OSD: only osd.N gets the service keys", entity);
		return -EACCES;
	}
	if (e == NULL ||
	    !auth_caps_allow(&e->caps, AUTH_SVC_MON, NULL, AUTH_PERM_R | AUTH_PERM_W)) {
		snprintf(why, whycap, "%s %s", entity,
			 e == NULL ? "is not in the auth database"
				   : "lacks mon caps 'profile osd' (allow rw)");
		return -EACCES;
	}
	if (db->svc.count == 0) {
		snprintf(why, whycap,
			 "no service key yet (the leader makes the first ones); retry");
		return -EAGAIN;
	}
	if (have_id == db->svc.keys[db->svc.count - 1].id) {
		*len_out = 0;
		return 0;
	}
	rc = auth_svc_keys_seal(conn_session, &db->svc, out, cap, len_out);
	if (rc != 0)
		snprintf(why, whycap, "cannot seal the service keys: %s", strerror(-rc));
	return rc;
}
