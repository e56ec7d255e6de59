/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the auth/ decoders: the four handshake messages,
 * the ticket body, the sealed ticket (opened under fixed service keys) and
 * the grant, the monitors' auth entries and database, a set of service keys
 * and a rotation's entry, the Raft port's frame header and IDENT, and a
 * connection's session (auth/session.c) given a HELLO, a PROOF or a frame:
 * nothing but a genuine proof opens a session, nothing but a genuine MAC
 * verifies. The first byte picks the decoder, the rest is its input.
 * Properties beyond "no crash, no overread": a failure says why in one
 * line, and whatever decodes re-encodes to exactly the input (canonical).
 * Replayed over tests/corpus/auth/ by fuzz_auth_replay (a ctest).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/handshake.h"
#include "auth/session.h"
#include "auth/ticket.h"
#include "fuzz_auth.h"
#include "mon/mon_auth.h"
#include "mon/mon_raft_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint8_t fuzz_out[16384];

static void fuzz_die(const char *what, size_t size)
{
	fprintf(stderr, "fuzz_auth: property violated: %s (%zu bytes)\n", what, size);
	abort();
}

static void fuzz_check_err(int rc, const struct proto_err *err, size_t size)
{
	if (rc == -ENOMEM)
		return;
	if (rc != -EBADMSG && rc != -ENOKEY && rc != -EKEYEXPIRED)
		fuzz_die("decode failed with an unexpected error", size);
	if (err->msg[0] == '\0' || strchr(err->msg, '\n') != NULL)
		fuzz_die("failure without a one-line reason", size);
}

static void fuzz_same(struct proto_enc *enc, const uint8_t *data, size_t size)
{
	size_t len;

	if (proto_enc_finish(enc, &len) != 0)
		fuzz_die("re-encode failed", size);
	if (len != size || memcmp(fuzz_out, data, size) != 0)
		fuzz_die("re-encode differs from the input", size);
}

/* The fixed service keys the corpus generator seals with. */
void fuzz_auth_svc_keys(struct auth_svc_keys *sk)
{
	auth_svc_keys_init(sk, 600ull * 1000000);
	sk->count = 2;
	sk->keys[0].id = 1;
	sk->keys[0].state = AUTH_SVC_RETIRED;
	memset(sk->keys[0].key.b, 0x11, AUTH_KEY_LEN);
	sk->keys[0].created_us = FUZZ_AUTH_NOW - 3600ull * 1000000;
	sk->keys[0].activated_us = sk->keys[0].created_us;
	sk->keys[0].retired_us = FUZZ_AUTH_NOW - 60ull * 1000000;
	sk->keys[1].id = 2;
	sk->keys[1].state = AUTH_SVC_CURRENT;
	memset(sk->keys[1].key.b, 0x22, AUTH_KEY_LEN);
	sk->keys[1].created_us = FUZZ_AUTH_NOW - 60ull * 1000000;
	sk->keys[1].activated_us = sk->keys[1].created_us;
}

/* A server session as the monitors run it, for the session kinds. */
static void fuzz_sess_facts(struct auth_sess_conn *f, struct auth_sess_keys *k, bool server)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->local_addr, sizeof(f->local_addr),
		 server ? "127.1.0.1:6789" : "127.1.0.9:4000");
	snprintf(f->peer_addr, sizeof(f->peer_addr), server ? "127.1.0.9:4000" : "127.1.0.1:6789");
	memset(k, 0, sizeof(*k));
	memset(k->key[0].b, 0x5a, AUTH_KEY_LEN);
	k->nkeys = 1;
}

/* A session: HELLO in, and PROOF (when given) in; it must never open on a forged proof. */
static void fuzz_sess_server(const uint8_t *hello, size_t hlen, const uint8_t *proof, size_t plen,
			     size_t size)
{
	struct auth_sess s;
	struct auth_sess_conn f;
	struct auth_sess_keys k;
	struct proto_err err = {""};
	uint8_t out[AUTH_SESS_MSG_MAX];
	size_t olen;
	int rc;

	fuzz_sess_facts(&f, &k, true);
	rc = auth_sess_server_hello(&s, hello, hlen, &err);
	if (rc != 0) {
		if (rc != -EPROTONOSUPPORT)
			fuzz_check_err(rc, &err, size);
		auth_sess_clear(&s);
		return;
	}
	rc = auth_sess_server_challenge(&s, "mon.", &f, &k, &err, out, sizeof(out), &olen);
	if (rc == 0 && proof != NULL) {
		rc = auth_sess_server_proof(&s, proof, plen, &err, out, sizeof(out), &olen);
		if (rc == 0 || auth_sess_open(&s))
			fuzz_die("a forged proof opened a session", size);
	}
	auth_sess_clear(&s);
}

/* An open session (client and server, in process) given a frame with its trailer. */
static void fuzz_sess_frame(const uint8_t *in, size_t n, size_t size)
{
	struct auth_sess c, s;
	struct auth_sess_conn cf, sf;
	struct auth_sess_keys k;
	struct proto_err err;
	uint8_t a[AUTH_SESS_MSG_MAX], b[AUTH_SESS_MSG_MAX];
	size_t alen, blen;

	fuzz_sess_facts(&sf, &k, true);
	fuzz_sess_facts(&cf, &k, false);
	if (auth_sess_client_start(&c, "client.admin", &k.key[0], "mon.", a, sizeof(a), &alen) ||
	    auth_sess_server_hello(&s, a, alen, &err) ||
	    auth_sess_server_challenge(&s, "mon.", &sf, &k, &err, b, sizeof(b), &blen) ||
	    auth_sess_client_challenge(&c, &cf, b, blen, &err, a, sizeof(a), &alen) ||
	    auth_sess_server_proof(&s, a, alen, &err, b, sizeof(b), &blen) ||
	    auth_sess_client_done(&c, b, blen, &err))
		fuzz_die("the reference handshake failed", size);
	if (n >= AUTH_SESS_MAC_LEN &&
	    (auth_sess_verify(&s, in, n - AUTH_SESS_MAC_LEN, in + n - AUTH_SESS_MAC_LEN) == 0 ||
	     auth_sess_verify_bulk(&c, 0, in, n - AUTH_SESS_MAC_LEN, in + n - AUTH_SESS_MAC_LEN) ==
		 0))
		fuzz_die("a forged frame MAC verified", size);
	auth_sess_clear(&c);
	auth_sess_clear(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_err err = {""};
	struct proto_enc enc;
	const uint8_t *in = data + 1;
	size_t n = size - 1;
	int rc;

	if (size < 1)
		return 0;
	proto_enc_init(&enc, fuzz_out, sizeof(fuzz_out));
	switch (data[0] % FUZZ_AUTH_KINDS) {
	case FUZZ_AUTH_HELLO: {
		struct auth_hs_hello m;

		rc = auth_hs_hello_decode(in, n, &err, &m);
		if (rc != 0)
			break;
		auth_hs_hello_encode(&enc, &m);
		fuzz_same(&enc, in, n);
		return 0;
	}
	case FUZZ_AUTH_CHALLENGE: {
		struct auth_hs_challenge m;

		rc = auth_hs_challenge_decode(in, n, &err, &m);
		if (rc != 0)
			break;
		auth_hs_challenge_encode(&enc, &m);
		fuzz_same(&enc, in, n);
		return 0;
	}
	case FUZZ_AUTH_PROOF:
	case FUZZ_AUTH_DONE: {
		enum auth_hs_kind kind =
		    data[0] % FUZZ_AUTH_KINDS == FUZZ_AUTH_PROOF ? AUTH_HS_PROOF : AUTH_HS_DONE;
		struct auth_hs_proof m;

		rc = auth_hs_proof_decode(in, n, kind, &err, &m);
		if (rc != 0)
			break;
		auth_hs_proof_encode(&enc, kind, &m);
		fuzz_same(&enc, in, n);
		return 0;
	}
	case FUZZ_AUTH_TICKET: {
		struct auth_ticket t;

		rc = auth_ticket_decode(in, n, &err, &t);
		if (rc != 0)
			break;
		auth_ticket_encode(&enc, &t);
		fuzz_same(&enc, in, n);
		return 0;
	}
	case FUZZ_AUTH_SEALED: {
		struct auth_svc_keys sk;
		struct auth_ticket t;

		fuzz_auth_svc_keys(&sk);
		rc = auth_ticket_unseal(&sk, in, n, FUZZ_AUTH_NOW, &err, &t);
		if (rc != 0)
			break;
		if (t.expires_us <= FUZZ_AUTH_NOW)
			fuzz_die("an expired ticket was accepted", size);
		return 0;
	}
	case FUZZ_AUTH_GRANT: {
		struct auth_grant_msg m;

		rc = auth_grant_decode(in, n, &err, &m);
		if (rc != 0)
			break;
		auth_grant_encode(&enc, &m);
		fuzz_same(&enc, in, n);
		return 0;
	}
	case FUZZ_AUTH_MON_OP: {
		struct mon_auth_op op;
		void *buf;
		size_t len;

		rc = mon_auth_op_decode(in, n, &err, &op);
		if (rc != 0)
			break;
		if (mon_auth_op_encode(&op, &buf, &len) != 0)
			fuzz_die("re-encode failed", size);
		if (len != n || memcmp(buf, in, n) != 0)
			fuzz_die("re-encode differs from the input", size);
		free(buf);
		return 0;
	}
	case FUZZ_AUTH_MON_DB: {
		struct mon_auth db;
		void *buf;
		size_t len;

		mon_auth_init(&db);
		rc = mon_auth_db_decode(in, n, &err, &db);
		if (rc != 0)
			break;
		if (mon_auth_db_encode(&db, &buf, &len) != 0)
			fuzz_die("re-encode failed", size);
		if (len != n || memcmp(buf, in, n) != 0)
			fuzz_die("re-encode differs from the input", size);
		free(buf);
		mon_auth_free(&db);
		return 0;
	}
	case FUZZ_AUTH_SESS_HELLO:
		fuzz_sess_server(in, n, NULL, 0, size);
		return 0;
	case FUZZ_AUTH_SESS_PROOF: {
		/* a genuine HELLO, then the input as the PROOF */
		struct auth_sess c;
		struct auth_key key;
		uint8_t h[AUTH_SESS_MSG_MAX];
		size_t hlen;

		memset(key.b, 0x5a, AUTH_KEY_LEN);
		if (auth_sess_client_start(&c, "client.admin", &key, "mon.", h, sizeof(h), &hlen))
			fuzz_die("client start failed", size);
		fuzz_sess_server(h, hlen, in, n, size);
		auth_sess_clear(&c);
		return 0;
	}
	case FUZZ_AUTH_SESS_FRAME:
		fuzz_sess_frame(in, n, size);
		return 0;
	case FUZZ_AUTH_SVC_KEYS: {
		struct auth_svc_keys sk;
		struct proto_dec dec;

		proto_dec_init(&dec, in, n, "svc_keys", &err);
		rc = auth_svc_keys_decode(&dec, &sk);
		if (rc == 0)
			rc = proto_dec_finish(&dec);
		if (rc != 0)
			break;
		if (sk.count > AUTH_SVC_KEYS_MAX)
			fuzz_die("more service keys than the bound", size);
		auth_svc_keys_encode(&enc, &sk);
		fuzz_same(&enc, in, n);
		auth_svc_keys_clear(&sk);
		return 0;
	}
	case FUZZ_AUTH_SVC_OP: {
		struct mon_svc_op op;
		struct mon_auth db;
		void *buf;
		size_t len;

		rc = mon_svc_op_decode(in, n, &err, &op);
		if (rc != 0)
			break;
		if (mon_svc_op_encode(&op, &buf, &len) != 0)
			fuzz_die("re-encode failed", size);
		if (len != n || memcmp(buf, in, n) != 0)
			fuzz_die("re-encode differs from the input", size);
		free(buf);
		/* applying it to an empty database: only id 1 goes in */
		mon_auth_init(&db);
		rc = mon_svc_apply(&db, &op);
		if ((rc == 0) != (op.new_id == 1))
			fuzz_die("a rotation applied out of order", size);
		mon_auth_free(&db);
		return 0;
	}
	case FUZZ_AUTH_RAFT_HDR: {
		uint8_t hdr[MON_RAFT_HDR_LEN];
		uint32_t len;

		if (n != MON_RAFT_HDR_LEN)
			return 0;
		rc = mon_raft_frame_hdr_decode(in, &err, &len);
		if (rc != 0)
			break;
		if (len == 0 || len > MON_RAFT_FRAME_MAX)
			fuzz_die("a frame length out of bounds was accepted", size);
		mon_raft_frame_hdr(hdr, len);
		if (memcmp(hdr, in, sizeof(hdr)) != 0)
			fuzz_die("re-encode differs from the input", size);
		return 0;
	}
	case FUZZ_AUTH_RAFT_IDENT: {
		struct mon_raft_ident id;
		struct auth_key session;
		size_t len;

		memset(session.b, FUZZ_AUTH_SESSION_BYTE, sizeof(session.b));
		rc = mon_raft_ident_decode(&session, in, n, &err, &id);
		if (rc == -EACCES) {
			rc = -EBADMSG; /* a MAC that fails is a refusal with a reason, like a bad field */
			if (err.msg[0] == '\0')
				fuzz_die("a MAC failure without a reason", size);
			return 0;
		}
		if (rc != 0)
			break;
		if (mon_raft_ident_encode(&session, &id, fuzz_out, sizeof(fuzz_out), &len) != 0)
			fuzz_die("re-encode failed", size);
		if (len != n || memcmp(fuzz_out, in, n) != 0)
			fuzz_die("re-encode differs from the input", size);
		return 0;
	}
	default:
		return 0;
	}
	fuzz_check_err(rc, &err, size);
	return 0;
}
