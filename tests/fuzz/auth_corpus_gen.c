/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Writes the seed corpus of fuzz_auth into DIR: one valid input per
 * decoder (selector byte + message), made with this build's encoders and
 * sealed under the fuzzer's fixed service keys. tests/corpus/auth/ is its
 * committed output.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "auth/handshake.h"
#include "auth/ticket.h"
#include "fuzz_auth.h"
#include "mon/mon_auth.h"
#include "mon/mon_raft_wire.h"

static int put(const char *dir, const char *name, uint8_t kind, const uint8_t *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fputc(kind, f) == EOF || fwrite(p, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "auth-corpus-gen: %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int main(int argc, char **argv)
{
	static uint8_t buf[8192], sealed[4096];
	struct auth_hs_hello hello = {0};
	struct auth_hs_challenge ch = {0};
	struct auth_hs_proof pr;
	struct auth_svc_keys sk;
	struct auth_ticket t = {0};
	struct auth_key conn;
	struct proto_enc enc;
	char err[256];
	size_t len, slen;
	int bad = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: auth-corpus-gen DIR\n");
		return 2;
	}
	if (mkdir(argv[1], 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "auth-corpus-gen: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	hello.version = AUTH_HS_VERSION;
	hello.method = AUTH_METHOD_KEY;
	snprintf(hello.client, sizeof(hello.client), "client.admin");
	snprintf(hello.server, sizeof(hello.server), "mon.");
	memset(hello.nonce_c, 0xc1, sizeof(hello.nonce_c));
	proto_enc_init(&enc, buf, sizeof(buf));
	auth_hs_hello_encode(&enc, &hello);
	bad |= proto_enc_finish(&enc, &len) != 0 ||
	       put(argv[1], "hello-key", FUZZ_AUTH_HELLO, buf, len);
	bad |= put(argv[1], "sess-hello", FUZZ_AUTH_SESS_HELLO, buf, len);

	snprintf(ch.server, sizeof(ch.server), "osd.12");
	memset(ch.nonce_s, 0x5e, sizeof(ch.nonce_s));
	proto_enc_init(&enc, buf, sizeof(buf));
	auth_hs_challenge_encode(&enc, &ch);
	bad |= proto_enc_finish(&enc, &len) != 0 ||
	       put(argv[1], "challenge", FUZZ_AUTH_CHALLENGE, buf, len);

	memset(pr.mac, 0xab, sizeof(pr.mac));
	proto_enc_init(&enc, buf, sizeof(buf));
	auth_hs_proof_encode(&enc, AUTH_HS_PROOF, &pr);
	bad |= proto_enc_finish(&enc, &len) != 0 || put(argv[1], "proof", FUZZ_AUTH_PROOF, buf, len);
	/* the session kinds: a proof nobody can forge, and a frame with a MAC trailer */
	bad |= put(argv[1], "sess-proof", FUZZ_AUTH_SESS_PROOF, buf, len);
	memset(buf, 0x33, 96);
	bad |= put(argv[1], "sess-frame", FUZZ_AUTH_SESS_FRAME, buf, 96);
	proto_enc_init(&enc, buf, sizeof(buf));
	auth_hs_proof_encode(&enc, AUTH_HS_DONE, &pr);
	bad |= proto_enc_finish(&enc, &len) != 0 || put(argv[1], "done", FUZZ_AUTH_DONE, buf, len);

	snprintf(t.entity, sizeof(t.entity), "client.vols");
	bad |= auth_caps_parse(&t.caps, AUTH_SVC_MON, "profile client", err, sizeof(err)) != 0;
	bad |= auth_caps_parse(&t.caps, AUTH_SVC_OSD, "allow r, allow rw pool=vols", err,
			       sizeof(err)) != 0;
	t.issued_us = FUZZ_AUTH_NOW - 10ull * 1000000;
	t.expires_us = FUZZ_AUTH_NOW + 3600ull * 1000000;
	memset(t.session.b, 0x33, sizeof(t.session.b));
	proto_enc_init(&enc, buf, sizeof(buf));
	auth_ticket_encode(&enc, &t);
	bad |= proto_enc_finish(&enc, &len) != 0 ||
	       put(argv[1], "ticket-body", FUZZ_AUTH_TICKET, buf, len);

	/* Under the current key (2) and under the retired one still in its grace (1). */
	fuzz_auth_svc_keys(&sk);
	bad |= auth_ticket_seal(&sk, &t, sealed, sizeof(sealed), &slen) != 0 ||
	       put(argv[1], "sealed-current", FUZZ_AUTH_SEALED, sealed, slen);
	{
		/* The seeds must reach the decoder's success path, not just its refusals. */
		struct proto_err perr;
		struct auth_ticket back;

		if (auth_ticket_unseal(&sk, sealed, slen, FUZZ_AUTH_NOW, &perr, &back) != 0) {
			fprintf(stderr, "auth-corpus-gen: own sealed ticket: %s\n", perr.msg);
			bad = 1;
		}
	}
	sk.count = 1;
	sk.keys[0].state = AUTH_SVC_CURRENT;
	sk.keys[0].retired_us = 0;
	bad |= auth_ticket_seal(&sk, &t, buf, sizeof(buf), &len) != 0 ||
	       put(argv[1], "sealed-retired", FUZZ_AUTH_SEALED, buf, len);

	memset(conn.b, 0x44, sizeof(conn.b));
	bad |= auth_grant_build(&conn, &t, sealed, slen, buf, sizeof(buf), &len) != 0 ||
	       put(argv[1], "grant", FUZZ_AUTH_GRANT, buf, len);

	hello.method = AUTH_METHOD_TICKET;
	hello.ticket = sealed;
	hello.ticket_len = (uint32_t)slen;
	proto_enc_init(&enc, buf, sizeof(buf));
	auth_hs_hello_encode(&enc, &hello);
	bad |= proto_enc_finish(&enc, &len) != 0 ||
	       put(argv[1], "hello-ticket", FUZZ_AUTH_HELLO, buf, len);

	{
		struct mon_auth_op op = {0};
		struct mon_auth db;
		void *p;

		op.kind = MON_AUTH_OP_ADD;
		snprintf(op.entity, sizeof(op.entity), "client.vols");
		op.key = t.session;
		op.caps = t.caps;
		op.stamp_us = FUZZ_AUTH_NOW;
		bad |= mon_auth_op_encode(&op, &p, &len) != 0 ||
		       put(argv[1], "mon-op", FUZZ_AUTH_MON_OP, p, len);
		free(p);
		mon_auth_init(&db);
		bad |= mon_auth_apply(&db, &op) != 0;
		snprintf(op.entity, sizeof(op.entity), "osd.3");
		bad |= mon_auth_apply(&db, &op) != 0;
		bad |= mon_auth_db_encode(&db, &p, &len) != 0 ||
		       put(argv[1], "mon-db", FUZZ_AUTH_MON_DB, p, len);
		free(p);
		mon_auth_free(&db);
	}
	{
		/* service keys: a set as the monitors hold it, and one rotation's entry */
		struct mon_svc_op op = {.kind = MON_SVC_OP_ROTATE, .new_id = 1};
		struct auth_svc_keys set;
		void *p;

		memset(op.key.b, 0x66, sizeof(op.key.b));
		op.stamp_us = FUZZ_AUTH_NOW;
		op.grace_us = 4500ull * 1000000;
		bad |= mon_svc_op_encode(&op, &p, &len) != 0 ||
		       put(argv[1], "svc-op", FUZZ_AUTH_SVC_OP, p, len);
		free(p);
		auth_svc_keys_init(&set, 0);
		for (uint32_t id = 1; id <= 4; id++) {
			memset(op.key.b, (int)id, sizeof(op.key.b));
			bad |=
			    auth_svc_advance(&set, id, &op.key, FUZZ_AUTH_NOW + id * 1800000000ull,
					     op.grace_us) != 0;
		}
		proto_enc_init(&enc, buf, sizeof(buf));
		auth_svc_keys_encode(&enc, &set);
		bad |= proto_enc_finish(&enc, &len) != 0 ||
		       put(argv[1], "svc-keys", FUZZ_AUTH_SVC_KEYS, buf, len);
		auth_svc_keys_clear(&set);
	}
	{
		/* the Raft port: a frame header and an IDENT under the fixed session key */
		struct mon_raft_ident id = {.from_id = 2, .to_id = 1};
		struct auth_key session;

		memset(session.b, FUZZ_AUTH_SESSION_BYTE, sizeof(session.b));
		snprintf(id.from_addr, sizeof(id.from_addr), "127.1.0.2:6794");
		mon_raft_frame_hdr(buf, 123);
		bad |= put(argv[1], "raft-hdr", FUZZ_AUTH_RAFT_HDR, buf, MON_RAFT_HDR_LEN);
		bad |= mon_raft_ident_encode(&session, &id, buf, sizeof(buf), &len) != 0 ||
		       put(argv[1], "raft-ident", FUZZ_AUTH_RAFT_IDENT, buf, len);
	}
	return bad ? 1 : 0;
}
