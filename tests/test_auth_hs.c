/* SPDX-License-Identifier: Apache-2.0 */
/*
 * auth/ step two: the handshake (transcript, replay, reflection) and
 * tickets (sealing, expiry, renewal, service-key rotation and grace).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth/handshake.h"
#include "auth/ticket.h"
#include "common/log.h"

#define S 1000000ull

static struct auth_key key_admin, key_other;

static int setup(void **state)
{
	(void)state;
	if (auth_key_generate(&key_admin) != 0 || auth_key_generate(&key_other) != 0)
		return -1;
	return 0;
}

static void bind_init(struct auth_hs_bind *b, const char *client, const char *server)
{
	memset(b, 0, sizeof(*b));
	b->method = AUTH_METHOD_KEY;
	for (int i = 0; i < AUTH_FSID_LEN; i++)
		b->fsid[i] = (uint8_t)(0xf0 + i);
	snprintf(b->client, sizeof(b->client), "%s", client);
	snprintf(b->server, sizeof(b->server), "%s", server);
	snprintf(b->client_addr, sizeof(b->client_addr), "127.1.0.9:41000");
	snprintf(b->server_addr, sizeof(b->server_addr), "127.1.0.1:38500");
}

/* Messages of one run, so tests can replay and tamper with them. */
struct run {
	struct auth_hs c, s;
	uint8_t hello[256], chal[256], proof[64], done[64];
	size_t hello_len, chal_len, proof_len, done_len;
	struct proto_err err;
};

static void run_start(struct run *r, const struct auth_key *ck, const struct auth_key *sk)
{
	struct auth_hs_bind cb, sb;
	struct auth_hs_hello hello;

	bind_init(&cb, "client.admin", "mon.");
	bind_init(&sb, "", "mon.");
	sb.client[0] = '\0';
	assert_int_equal(auth_hs_client_start(&r->c, &cb, ck, NULL, 0, r->hello, sizeof(r->hello),
					      &r->hello_len),
			 0);
	assert_int_equal(auth_hs_hello_decode(r->hello, r->hello_len, &r->err, &hello), 0);
	assert_string_equal(hello.client, "client.admin");
	assert_int_equal(auth_hs_server_start(&r->s, &sb, &hello, sk, &r->err, r->chal,
					      sizeof(r->chal), &r->chal_len),
			 0);
	assert_int_equal(auth_hs_client_on_challenge(&r->c, r->chal, r->chal_len, &r->err,
						     r->proof, sizeof(r->proof), &r->proof_len),
			 0);
}

static void test_hs_ok(void **state)
{
	struct run r;

	(void)state;
	run_start(&r, &key_admin, &key_admin);
	assert_int_equal(auth_hs_server_on_proof(&r.s, r.proof, r.proof_len, &r.err, r.done,
						 sizeof(r.done), &r.done_len),
			 0);
	assert_int_equal(auth_hs_client_on_done(&r.c, r.done, r.done_len, &r.err), 0);
	assert_int_equal(r.c.state, AUTH_HS_S_DONE);
	assert_int_equal(r.s.state, AUTH_HS_S_DONE);
	/* Both derived the same session key, and it is not the long-term key. */
	assert_true(auth_key_equal(&r.c.session, &r.s.session));
	assert_false(auth_key_equal(&r.c.session, &key_admin));
	/* A second run with the same key derives another session key. */
	struct run r2;

	run_start(&r2, &key_admin, &key_admin);
	assert_int_equal(auth_hs_server_on_proof(&r2.s, r2.proof, r2.proof_len, &r2.err, r2.done,
						 sizeof(r2.done), &r2.done_len),
			 0);
	assert_false(auth_key_equal(&r.s.session, &r2.s.session));
}

static void test_hs_wrong_key(void **state)
{
	struct run r;

	(void)state;
	run_start(&r, &key_other, &key_admin);
	assert_int_equal(auth_hs_server_on_proof(&r.s, r.proof, r.proof_len, &r.err, r.done,
						 sizeof(r.done), &r.done_len),
			 -EACCES);
	assert_string_equal(r.err.msg, "auth_proof: client.admin's proof does not verify");
	assert_int_equal(r.s.state, AUTH_HS_S_FAILED);
	/* Nothing more happens on a failed handshake. */
	assert_int_equal(auth_hs_server_on_proof(&r.s, r.proof, r.proof_len, &r.err, r.done,
						 sizeof(r.done), &r.done_len),
			 -EPROTO);
}

/* Any changed byte of the transcript makes both proofs fail. */
static void test_hs_transcript_bytes(void **state)
{
	struct auth_hs_bind b;
	uint8_t t[AUTH_TRANSCRIPT_MAX], mc[AUTH_MAC_LEN], ms[AUTH_MAC_LEN];
	size_t len;

	(void)state;
	bind_init(&b, "client.admin", "mon.");
	memset(b.nonce_c, 0x11, sizeof(b.nonce_c));
	memset(b.nonce_s, 0x22, sizeof(b.nonce_s));
	b.version = AUTH_HS_VERSION;
	assert_int_equal(auth_hs_transcript(&b, t, sizeof(t), &len), 0);
	assert_int_equal(auth_hs_mac(&key_admin, AUTH_ROLE_CLIENT, t, len, mc), 0);
	assert_int_equal(auth_hs_mac(&key_admin, AUTH_ROLE_SERVER, t, len, ms), 0);
	assert_int_equal(auth_hs_mac_verify(&key_admin, AUTH_ROLE_CLIENT, t, len, mc), 0);
	for (size_t i = 0; i < len; i++) {
		for (int bit = 0; bit < 8; bit += 7) {
			t[i] ^= (uint8_t)(1u << bit);
			assert_int_equal(
				auth_hs_mac_verify(&key_admin, AUTH_ROLE_CLIENT, t, len, mc), -EACCES);
			assert_int_equal(
				auth_hs_mac_verify(&key_admin, AUTH_ROLE_SERVER, t, len, ms), -EACCES);
			t[i] ^= (uint8_t)(1u << bit);
		}
	}
	/* A truncated or extended transcript fails too. */
	assert_int_equal(auth_hs_mac_verify(&key_admin, AUTH_ROLE_CLIENT, t, len - 1, mc), -EACCES);
	t[len] = 0;
	assert_int_equal(auth_hs_mac_verify(&key_admin, AUTH_ROLE_CLIENT, t, len + 1, mc), -EACCES);
}

/* Each bound field, changed on the server's side only, fails the client's proof. */
static void test_hs_transcript_fields(void **state)
{
	static const char *const fields[] = {"fsid", "method", "client", "server", "client_addr",
					     "server_addr", "nonce_c", "nonce_s", "prelude"};

	(void)state;
	for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
		struct run r;

		run_start(&r, &key_admin, &key_admin);
		struct auth_hs_bind *b = &r.s.bind;

		switch (f) {
		case 0: b->fsid[7] ^= 1; break;
		case 1: b->method = AUTH_METHOD_TICKET; break;
		case 2: snprintf(b->client, sizeof(b->client), "client.admim"); break;
		case 3: snprintf(b->server, sizeof(b->server), "mon.a"); break;
		case 4: snprintf(b->client_addr, sizeof(b->client_addr), "127.1.0.9:41001"); break;
		case 5: snprintf(b->server_addr, sizeof(b->server_addr), "127.1.0.2:38500"); break;
		case 6: b->nonce_c[31] ^= 0x80; break;
		case 7: b->nonce_s[0] ^= 1; break;
		case 8: b->prelude[31] ^= 4; break;
		}
		if (auth_hs_server_on_proof(&r.s, r.proof, r.proof_len, &r.err, r.done,
					    sizeof(r.done), &r.done_len) != -EACCES)
			fail_msg("changing %s did not fail the proof", fields[f]);
	}
}

/* A recorded PROOF replayed against a new challenge fails. */
static void test_hs_replay(void **state)
{
	struct run rec, r;

	(void)state;
	run_start(&rec, &key_admin, &key_admin);
	assert_int_equal(auth_hs_server_on_proof(&rec.s, rec.proof, rec.proof_len, &rec.err,
						 rec.done, sizeof(rec.done), &rec.done_len),
			 0);
	/* The attacker replays the recorded HELLO and, after a new challenge, the recorded PROOF. */
	struct auth_hs_bind sb;
	struct auth_hs_hello hello;

	bind_init(&sb, "", "mon.");
	assert_int_equal(auth_hs_hello_decode(rec.hello, rec.hello_len, &r.err, &hello), 0);
	assert_int_equal(auth_hs_server_start(&r.s, &sb, &hello, &key_admin, &r.err, r.chal,
					      sizeof(r.chal), &r.chal_len),
			 0);
	assert_int_equal(auth_hs_server_on_proof(&r.s, rec.proof, rec.proof_len, &r.err, r.done,
						 sizeof(r.done), &r.done_len),
			 -EACCES);
	/* Replaying the PROOF on the connection that already finished is out of order. */
	assert_int_equal(auth_hs_server_on_proof(&rec.s, rec.proof, rec.proof_len, &rec.err,
						 rec.done, sizeof(rec.done), &rec.done_len),
			 -EPROTO);
	/* A recorded DONE given to a new client fails too. */
	struct run c2;

	run_start(&c2, &key_admin, &key_admin);
	assert_int_equal(auth_hs_client_on_done(&c2.c, rec.done, rec.done_len, &c2.err), -EACCES);
	assert_non_null(strstr(c2.err.msg, "mon.'s proof does not verify"));
}

/* Reflection: the server's own proof, or our own nonce, sent back. */
static void test_hs_reflect(void **state)
{
	struct run r, r2;
	uint8_t fake[64];
	size_t fake_len;
	struct proto_enc enc;
	struct auth_hs_proof p;
	struct auth_hs_challenge ch;

	(void)state;
	/* The server's DONE turned into a PROOF (same nonces, same names) fails. */
	run_start(&r, &key_admin, &key_admin);
	assert_int_equal(auth_hs_proof_decode(r.proof, r.proof_len, AUTH_HS_PROOF, &r.err, &p), 0);
	uint8_t t[AUTH_TRANSCRIPT_MAX];
	size_t tlen;

	assert_int_equal(auth_hs_transcript(&r.s.bind, t, sizeof(t), &tlen), 0);
	assert_int_equal(auth_hs_mac(&key_admin, AUTH_ROLE_SERVER, t, tlen, p.mac), 0);
	proto_enc_init(&enc, fake, sizeof(fake));
	auth_hs_proof_encode(&enc, AUTH_HS_PROOF, &p);
	assert_int_equal(proto_enc_finish(&enc, &fake_len), 0);
	assert_int_equal(auth_hs_server_on_proof(&r.s, fake, fake_len, &r.err, r.done,
						 sizeof(r.done), &r.done_len),
			 -EACCES);

	/* A "server" echoing the client's nonce as its challenge is refused by the client. */
	struct auth_hs_bind cb;
	uint8_t hello[256];
	size_t hello_len;

	bind_init(&cb, "client.admin", "mon.");
	assert_int_equal(auth_hs_client_start(&r2.c, &cb, &key_admin, NULL, 0, hello,
					      sizeof(hello), &hello_len),
			 0);
	snprintf(ch.server, sizeof(ch.server), "mon.");
	memcpy(ch.nonce_s, r2.c.bind.nonce_c, AUTH_NONCE_LEN);
	proto_enc_init(&enc, fake, sizeof(fake));
	auth_hs_challenge_encode(&enc, &ch);
	assert_int_equal(proto_enc_finish(&enc, &fake_len), 0);
	assert_int_equal(auth_hs_client_on_challenge(&r2.c, fake, fake_len, &r2.err, r2.proof,
						     sizeof(r2.proof), &r2.proof_len),
			 -EACCES);
	assert_non_null(strstr(r2.err.msg, "reflected"));

	/* A challenge from another entity than the one asked for is refused. */
	assert_int_equal(auth_hs_client_start(&r2.c, &cb, &key_admin, NULL, 0, hello,
					      sizeof(hello), &hello_len),
			 0);
	snprintf(ch.server, sizeof(ch.server), "osd.1");
	memset(ch.nonce_s, 7, AUTH_NONCE_LEN);
	proto_enc_init(&enc, fake, sizeof(fake));
	auth_hs_challenge_encode(&enc, &ch);
	assert_int_equal(proto_enc_finish(&enc, &fake_len), 0);
	assert_int_equal(auth_hs_client_on_challenge(&r2.c, fake, fake_len, &r2.err, r2.proof,
						     sizeof(r2.proof), &r2.proof_len),
			 -EACCES);
	assert_string_equal(r2.err.msg, "auth_challenge: server is osd.1, expected mon.");
}

static void test_hs_decode_bad(void **state)
{
	struct run r;
	struct auth_hs_hello h;
	struct auth_hs_challenge ch;
	struct auth_hs_proof p;
	uint8_t buf[256];

	(void)state;
	run_start(&r, &key_admin, &key_admin);
	/* Every truncation of every message is refused with one line. */
	for (size_t n = 0; n < r.hello_len; n++) {
		assert_int_equal(auth_hs_hello_decode(r.hello, n, &r.err, &h), -EBADMSG);
		assert_true(r.err.msg[0] != '\0');
	}
	for (size_t n = 0; n < r.chal_len; n++)
		assert_int_equal(auth_hs_challenge_decode(r.chal, n, &r.err, &ch), -EBADMSG);
	for (size_t n = 0; n < r.proof_len; n++)
		assert_int_equal(auth_hs_proof_decode(r.proof, n, AUTH_HS_PROOF, &r.err, &p),
				 -EBADMSG);
	/* A PROOF is not a DONE; trailing bytes are refused. */
	assert_int_equal(auth_hs_proof_decode(r.proof, r.proof_len, AUTH_HS_DONE, &r.err, &p),
			 -EBADMSG);
	assert_non_null(strstr(r.err.msg, "kind: 3, expected 4"));
	memcpy(buf, r.hello, r.hello_len);
	buf[r.hello_len] = 0;
	assert_int_equal(auth_hs_hello_decode(buf, r.hello_len + 1, &r.err, &h), -EBADMSG);
	/* Bad version, method and entity. */
	memcpy(buf, r.hello, r.hello_len);
	buf[1] = 9;
	assert_int_equal(auth_hs_hello_decode(buf, r.hello_len, &r.err, &h), -EBADMSG);
	assert_non_null(strstr(r.err.msg, "version: 9 is not supported"));
	memcpy(buf, r.hello, r.hello_len);
	buf[2] = 7;
	assert_int_equal(auth_hs_hello_decode(buf, r.hello_len, &r.err, &h), -EBADMSG);
	assert_non_null(strstr(r.err.msg, "method: 7"));
	memcpy(buf, r.hello, r.hello_len);
	buf[5] = 'X'; /* "client.admin" -> "Xlient.admin" */
	assert_int_equal(auth_hs_hello_decode(buf, r.hello_len, &r.err, &h), -EBADMSG);
	assert_non_null(strstr(r.err.msg, "unknown type 'Xlient'"));
	/* A hello for another server is refused by the server. */
	struct auth_hs_bind sb;

	bind_init(&sb, "", "mon.");
	assert_int_equal(auth_hs_hello_decode(r.hello, r.hello_len, &r.err, &h), 0);
	snprintf(sb.server, sizeof(sb.server), "osd.3");
	assert_int_equal(auth_hs_server_start(&r.s, &sb, &h, &key_admin, &r.err, r.chal,
					      sizeof(r.chal), &r.chal_len),
			 -EACCES);
	assert_string_equal(r.err.msg, "auth_hello: asks for mon., this is osd.3");
}

/* ---------------------------------------------------------------- tickets */

static void caps_rw(struct auth_caps *c)
{
	char err[256];

	memset(c, 0, sizeof(*c));
	assert_int_equal(auth_caps_parse(c, AUTH_SVC_MON, "allow r", err, sizeof(err)), 0);
	assert_int_equal(auth_caps_parse(c, AUTH_SVC_OSD, "allow rw pool=rbd", err, sizeof(err)),
			 0);
}

static void test_ticket_roundtrip(void **state)
{
	struct auth_svc_keys sk;
	struct auth_ticket t, back;
	struct auth_caps caps;
	struct proto_err err;
	uint8_t sealed[4096];
	size_t len;
	uint64_t now = 1800000000ull * S;

	(void)state;
	caps_rw(&caps);
	auth_svc_keys_init(&sk, 3600 * S);
	assert_int_equal(auth_ticket_issue("client.a", &caps, now, 3600 * S, &t), 0);
	/* No service key yet: nothing to seal with. */
	assert_int_equal(auth_ticket_seal(&sk, &t, sealed, sizeof(sealed), &len), -ENOKEY);
	assert_int_equal(auth_svc_rotate(&sk, now), 0);
	assert_int_equal(auth_svc_current(&sk)->id, 1);
	assert_int_equal(auth_ticket_seal(&sk, &t, sealed, sizeof(sealed), &len), 0);
	/* The entity name is not readable in the sealed form. */
	assert_null(memmem(sealed, len, "client.a", 8));
	assert_int_equal(auth_ticket_unseal(&sk, sealed, len, now + S, &err, &back), 0);
	assert_string_equal(back.entity, "client.a");
	assert_true(auth_key_equal(&back.session, &t.session));
	assert_int_equal(back.expires_us, now + 3600 * S);
	assert_true(auth_caps_allow(&back.caps, AUTH_SVC_OSD, "rbd", AUTH_PERM_W));
	assert_false(auth_caps_allow(&back.caps, AUTH_SVC_OSD, "other", AUTH_PERM_R));

	/* Every changed byte of the sealed form is refused, never decoded. */
	for (size_t i = 0; i < len; i++) {
		sealed[i] ^= 0x01;
		int rc = auth_ticket_unseal(&sk, sealed, len, now + S, &err, &back);

		if (rc != -EBADMSG && rc != -ENOKEY)
			fail_msg("byte %zu changed: unseal gave %d", i, rc);
		assert_true(err.msg[0] != '\0');
		sealed[i] ^= 0x01;
	}
	/* Another cluster's service key (same id) does not open it. */
	struct auth_svc_keys other;

	auth_svc_keys_init(&other, 3600 * S);
	assert_int_equal(auth_svc_rotate(&other, now), 0);
	assert_int_equal(auth_ticket_unseal(&other, sealed, len, now + S, &err, &back), -EBADMSG);
	assert_non_null(strstr(err.msg, "does not authenticate under service key 1"));
}

static void test_ticket_expiry_renewal(void **state)
{
	struct auth_svc_keys sk;
	struct auth_ticket t, renewed, back;
	struct auth_caps caps;
	struct proto_err err;
	uint8_t sealed[4096], sealed2[4096];
	size_t len, len2;
	uint64_t now = 1800000000ull * S, ttl = 600 * S;

	(void)state;
	caps_rw(&caps);
	auth_svc_keys_init(&sk, ttl);
	assert_int_equal(auth_svc_rotate(&sk, now), 0);
	assert_int_equal(auth_ticket_issue("client.a", &caps, now, ttl, &t), 0);
	assert_int_equal(auth_ticket_seal(&sk, &t, sealed, sizeof(sealed), &len), 0);
	assert_false(auth_ticket_renew_due(&t, now + ttl / 2));
	assert_true(auth_ticket_renew_due(&t, now + ttl / 4 * 3));
	assert_int_equal(auth_ticket_unseal(&sk, sealed, len, now + ttl - 1, &err, &back), 0);
	assert_int_equal(auth_ticket_unseal(&sk, sealed, len, now + ttl, &err, &back),
			 -EKEYEXPIRED);
	assert_string_equal(err.msg, "ticket for client.a expired 0 s ago");
	/* Renewal before expiry: a new ticket, a new session key, a later expiry. */
	assert_int_equal(auth_ticket_issue("client.a", &caps, now + ttl / 4 * 3, ttl, &renewed), 0);
	assert_int_equal(auth_ticket_seal(&sk, &renewed, sealed2, sizeof(sealed2), &len2), 0);
	assert_false(auth_key_equal(&renewed.session, &t.session));
	assert_int_equal(auth_ticket_unseal(&sk, sealed2, len2, now + ttl + 60 * S, &err, &back),
			 0);
	assert_true(auth_key_equal(&back.session, &renewed.session));
	/* The old one is still expired. */
	assert_int_equal(auth_ticket_unseal(&sk, sealed, len, now + ttl + 60 * S, &err, &back),
			 -EKEYEXPIRED);
}

static void test_ticket_rotation(void **state)
{
	struct auth_svc_keys sk;
	struct auth_ticket t, back;
	struct auth_caps caps;
	struct proto_err err;
	uint8_t sealed[4096], sealed2[4096];
	size_t len, len2;
	uint64_t now = 1800000000ull * S, grace = 600 * S, ttl = 3600 * S;

	(void)state;
	caps_rw(&caps);
	auth_svc_keys_init(&sk, grace);
	assert_int_equal(auth_svc_rotate(&sk, now), 0);
	/* A ticket living longer than the grace, to see the key's end, not the ticket's. */
	assert_int_equal(auth_ticket_issue("client.a", &caps, now, ttl, &t), 0);
	assert_int_equal(auth_ticket_seal(&sk, &t, sealed, sizeof(sealed), &len), 0);
	assert_int_equal(auth_svc_rotate(&sk, now + 10 * S), 0);
	assert_int_equal(auth_svc_current(&sk)->id, 2);
	assert_int_equal(sk.count, 2);
	/* New tickets are sealed under key 2; key 1's still open inside the grace. */
	assert_int_equal(auth_ticket_seal(&sk, &t, sealed2, sizeof(sealed2), &len2), 0);
	assert_int_equal(sealed2[1], 2);
	assert_int_equal(auth_ticket_unseal(&sk, sealed, len, now + 10 * S + grace - 1, &err, &back),
			 0);
	/* After the grace, key 1's ticket fails even though the ticket has not expired. */
	assert_int_equal(auth_ticket_unseal(&sk, sealed, len, now + 10 * S + grace, &err, &back),
			 -EKEYEXPIRED);
	assert_string_equal(err.msg, "sealed_ticket: service key 1 retired past its grace");
	assert_int_equal(auth_ticket_unseal(&sk, sealed2, len2, now + 10 * S + grace, &err, &back),
			 0);
	/* The next rotation after the grace drops key 1 entirely. */
	assert_int_equal(auth_svc_rotate(&sk, now + 10 * S + grace), 0);
	assert_int_equal(sk.count, 2);
	assert_int_equal(sk.keys[0].id, 2);
	assert_int_equal(auth_ticket_unseal(&sk, sealed, len, now + 10 * S + grace, &err, &back),
			 -ENOKEY);
	assert_string_equal(err.msg, "sealed_ticket: service key 1 is unknown here");
	/* Rotating faster than the grace keeps at most AUTH_SVC_KEYS_MAX keys. */
	for (int i = 0; i < 10; i++)
		assert_int_equal(auth_svc_rotate(&sk, now + 20 * S + grace + (uint64_t)i), 0);
	assert_int_equal(sk.count, AUTH_SVC_KEYS_MAX);
	assert_int_equal(auth_svc_current(&sk)->id, 13);
}

static void test_grant_and_ticket_handshake(void **state)
{
	struct auth_svc_keys sk;
	struct auth_ticket t, at_osd;
	struct auth_caps caps;
	struct proto_err err;
	struct auth_grant_msg g;
	struct auth_key conn, tkey, wrong;
	uint8_t sealed[4096], grant[8192], hello[8192], chal[256], proof[64], done[64];
	size_t len, glen, hlen, clen, plen, dlen;
	uint64_t now = 1800000000ull * S;
	struct auth_hs c, s;
	struct auth_hs_bind cb, sb;
	struct auth_hs_hello h;

	(void)state;
	caps_rw(&caps);
	auth_svc_keys_init(&sk, 3600 * S);
	assert_int_equal(auth_svc_rotate(&sk, now), 0);
	assert_int_equal(auth_ticket_issue("client.a", &caps, now, 3600 * S, &t), 0);
	assert_int_equal(auth_ticket_seal(&sk, &t, sealed, sizeof(sealed), &len), 0);
	/* The mon grants it over the client's session. */
	assert_int_equal(auth_key_generate(&conn), 0);
	assert_int_equal(auth_grant_build(&conn, &t, sealed, len, grant, sizeof(grant), &glen), 0);
	assert_int_equal(auth_grant_decode(grant, glen, &err, &g), 0);
	assert_int_equal(auth_grant_open(&conn, &g, &tkey), 0);
	assert_true(auth_key_equal(&tkey, &t.session));
	/* Someone without the connection's session key learns nothing. */
	assert_int_equal(auth_key_generate(&wrong), 0);
	assert_int_equal(auth_grant_open(&wrong, &g, &wrong), -EBADMSG);
	/* A grant whose ticket was swapped does not open. */
	grant[10] ^= 1;
	assert_int_equal(auth_grant_decode(grant, glen, &err, &g), 0);
	assert_int_equal(auth_grant_open(&conn, &g, &wrong), -EBADMSG);
	grant[10] ^= 1;
	assert_int_equal(auth_grant_decode(grant, glen, &err, &g), 0);

	/* The client presents the ticket to an OSD: method TICKET, K = the ticket key. */
	bind_init(&cb, "client.a", "osd.3");
	cb.method = AUTH_METHOD_TICKET;
	bind_init(&sb, "", "osd.3");
	assert_int_equal(auth_hs_client_start(&c, &cb, &tkey, g.ticket, g.ticket_len, hello,
					      sizeof(hello), &hlen),
			 0);
	assert_int_equal(auth_hs_hello_decode(hello, hlen, &err, &h), 0);
	assert_int_equal(h.method, AUTH_METHOD_TICKET);
	assert_int_equal(auth_ticket_unseal(&sk, h.ticket, h.ticket_len, now + S, &err, &at_osd), 0);
	/* The OSD checks the hello's entity against the ticket's. */
	assert_string_equal(at_osd.entity, h.client);
	assert_int_equal(auth_hs_server_start(&s, &sb, &h, &at_osd.session, &err, chal,
					      sizeof(chal), &clen),
			 0);
	assert_int_equal(auth_hs_client_on_challenge(&c, chal, clen, &err, proof, sizeof(proof),
						     &plen),
			 0);
	assert_int_equal(auth_hs_server_on_proof(&s, proof, plen, &err, done, sizeof(done), &dlen),
			 0);
	assert_int_equal(auth_hs_client_on_done(&c, done, dlen, &err), 0);
	assert_true(auth_key_equal(&c.session, &s.session));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hs_ok),
		cmocka_unit_test(test_hs_wrong_key),
		cmocka_unit_test(test_hs_transcript_bytes),
		cmocka_unit_test(test_hs_transcript_fields),
		cmocka_unit_test(test_hs_replay),
		cmocka_unit_test(test_hs_reflect),
		cmocka_unit_test(test_hs_decode_bad),
		cmocka_unit_test(test_ticket_roundtrip),
		cmocka_unit_test(test_ticket_expiry_renewal),
		cmocka_unit_test(test_ticket_rotation),
		cmocka_unit_test(test_grant_and_ticket_handshake),
	};

	weft_log_mute(true);
	return cmocka_run_group_tests(tests, setup, NULL);
}
