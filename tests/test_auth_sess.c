/* SPDX-License-Identifier: Apache-2.0 */
/*
 * auth/session.c: the handshake as a connection runs it, and the frame
 * MACs after it. Every byte of every handshake message and of every frame
 * matters: changing any one of them must fail.
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

#include "auth/policy.h"
#include "auth/session.h"
#include "common/log.h"

static struct auth_key key_admin, key_old, key_other;
/* The second run of every test: frame MACs by GMAC, as two peers offering it agree */
static bool use_gmac;

static int setup(void **state)
{
	(void)state;
	if (auth_key_generate(&key_admin) != 0 || auth_key_generate(&key_old) != 0 ||
	    auth_key_generate(&key_other) != 0)
		return -1;
	return 0;
}

/* One connection: the facts each side sees, and the messages it carried. */
struct pair {
	struct auth_sess c, s;
	struct auth_sess_conn cf, sf;
	struct auth_sess_keys keys;
	uint8_t hello[AUTH_SESS_MSG_MAX], chal[AUTH_SESS_MSG_MAX], proof[AUTH_SESS_MSG_MAX],
	    done[AUTH_SESS_MSG_MAX];
	size_t hello_len, chal_len, proof_len, done_len;
	struct proto_err err;
	bool cgmac, sgmac; /* each side's choice of frame MAC (use_gmac unless a test says) */
};

static void pair_init(struct pair *p)
{
	static const char hc[] = "client hello frame", hs[] = "server hello frame";

	memset(p, 0, sizeof(*p));
	for (int i = 0; i < AUTH_FSID_LEN; i++)
		p->cf.fsid[i] = p->sf.fsid[i] = (uint8_t)(0xa0 + i);
	snprintf(p->cf.local_addr, sizeof(p->cf.local_addr), "127.1.0.9:41000");
	snprintf(p->cf.peer_addr, sizeof(p->cf.peer_addr), "127.1.0.1:43000");
	snprintf(p->sf.local_addr, sizeof(p->sf.local_addr), "127.1.0.1:43000");
	snprintf(p->sf.peer_addr, sizeof(p->sf.peer_addr), "127.1.0.9:41000");
	assert_int_equal(auth_sess_prelude(hc, sizeof(hc), hs, sizeof(hs), p->cf.prelude), 0);
	memcpy(p->sf.prelude, p->cf.prelude, AUTH_PRELUDE_LEN);
	p->keys.key[0] = key_admin;
	p->keys.nkeys = 1;
	assert_int_equal(auth_caps_parse(&p->keys.caps, AUTH_SVC_MON, "allow r", NULL, 0), 0);
	p->cgmac = p->sgmac = use_gmac;
}

static void pair_fini(struct pair *p)
{
	auth_sess_clear(&p->c);
	auth_sess_clear(&p->s);
}

/* Run the handshake; each step's result, stopping at the first failure. */
static int pair_run(struct pair *p, const struct auth_key *ck)
{
	int rc;

	rc = auth_sess_client_start(&p->c, "client.admin", ck, "mon.", p->hello, sizeof(p->hello),
				    &p->hello_len);
	if (rc == 0)
		rc = auth_sess_server_hello(&p->s, p->hello, p->hello_len, &p->err);
	if (rc == 0)
		rc = auth_sess_server_challenge(&p->s, "mon.", &p->sf, &p->keys, &p->err, p->chal,
						sizeof(p->chal), &p->chal_len);
	p->c.gmac = p->cgmac; /* the owners' choice, before the keys are derived */
	p->s.gmac = p->sgmac;
	if (rc == 0)
		rc = auth_sess_client_challenge(&p->c, &p->cf, p->chal, p->chal_len, &p->err,
						p->proof, sizeof(p->proof), &p->proof_len);
	if (rc == 0)
		rc = auth_sess_server_proof(&p->s, p->proof, p->proof_len, &p->err, p->done,
					    sizeof(p->done), &p->done_len);
	if (rc == 0)
		rc = auth_sess_client_done(&p->c, p->done, p->done_len, &p->err);
	return rc;
}

static void test_sess_ok(void **state)
{
	struct pair p;
	uint8_t frame[64], mac[AUTH_SESS_MAC_LEN];

	(void)state;
	pair_init(&p);
	assert_int_equal(pair_run(&p, &key_admin), 0);
	assert_true(auth_sess_open(&p.c));
	assert_true(auth_sess_open(&p.s));
	assert_string_equal(p.s.peer, "client.admin");
	assert_string_equal(p.c.peer, "mon.");
	assert_true(auth_caps_allow(&p.s.caps, AUTH_SVC_MON, NULL, AUTH_PERM_R));
	assert_false(auth_caps_allow(&p.s.caps, AUTH_SVC_MON, NULL, AUTH_PERM_X));
	assert_int_equal(p.s.valid_until_us, 0);
	/* Both directions, several frames each, in order. */
	for (int i = 0; i < 5; i++) {
		memset(frame, i, sizeof(frame));
		assert_int_equal(auth_sess_seal(&p.c, frame, sizeof(frame), mac), 0);
		assert_int_equal(auth_sess_verify(&p.s, frame, sizeof(frame), mac), 0);
		assert_int_equal(auth_sess_seal(&p.s, frame, sizeof(frame), mac), 0);
		assert_int_equal(auth_sess_verify(&p.c, frame, sizeof(frame), mac), 0);
	}
	pair_fini(&p);
}

static void test_sess_wrong_key(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p);
	assert_int_equal(pair_run(&p, &key_other), -EACCES);
	assert_int_equal(p.s.state, AUTH_SESS_FAILED);
	assert_non_null(strstr(p.err.msg, "does not verify"));
	pair_fini(&p);
}

/* What each side sees must agree: another fsid, address or prelude fails. */
static void test_sess_facts(void **state)
{
	(void)state;
	for (int f = 0; f < 5; f++) {
		struct pair p;

		pair_init(&p);
		switch (f) {
		case 0:
			p.sf.fsid[3] ^= 1;
			break;
		case 1:
			p.sf.peer_addr[10] = '8';
			break; /* a relay: the server sees another client */
		case 2:
			p.cf.peer_addr[8] = '2';
			break; /* the client dialled someone else */
		case 3:
			p.sf.prelude[0] ^= 0x40;
			break; /* a hello edited on the way */
		case 4:
			p.cf.local_addr[15] = '1';
			break;
		}
		if (pair_run(&p, &key_admin) != -EACCES)
			fail_msg("changing fact %d did not fail the handshake", f);
		assert_false(auth_sess_open(&p.s) && auth_sess_open(&p.c));
		pair_fini(&p);
	}
}

/*
 * Any byte of any handshake message changed in flight (every bit position
 * tried on one byte at a time) stops the handshake: a decoder refuses, or
 * a proof fails; never do both sides end open.
 */
static void test_sess_any_byte(void **state)
{
	(void)state;
	for (int msg = 0; msg < 4; msg++) {
		struct pair ref;
		size_t len;

		pair_init(&ref);
		assert_int_equal(pair_run(&ref, &key_admin), 0);
		len = msg == 0	 ? ref.hello_len
		      : msg == 1 ? ref.chal_len
		      : msg == 2 ? ref.proof_len
				 : ref.done_len;
		pair_fini(&ref);
		for (size_t at = 0; at < len; at++) {
			struct pair p;
			uint8_t bit = (uint8_t)(1u << (at % 8));
			int rc;

			pair_init(&p);
			rc = auth_sess_client_start(&p.c, "client.admin", &key_admin, "mon.",
						    p.hello, sizeof(p.hello), &p.hello_len);
			if (msg == 0)
				p.hello[at] ^= bit;
			if (rc == 0)
				rc = auth_sess_server_hello(&p.s, p.hello, p.hello_len, &p.err);
			if (rc == 0)
				rc =
				    auth_sess_server_challenge(&p.s, "mon.", &p.sf, &p.keys, &p.err,
							       p.chal, sizeof(p.chal), &p.chal_len);
			if (msg == 1)
				p.chal[at] ^= bit;
			if (rc == 0)
				rc = auth_sess_client_challenge(&p.c, &p.cf, p.chal, p.chal_len,
								&p.err, p.proof, sizeof(p.proof),
								&p.proof_len);
			if (msg == 2)
				p.proof[at] ^= bit;
			if (rc == 0)
				rc = auth_sess_server_proof(&p.s, p.proof, p.proof_len, &p.err,
							    p.done, sizeof(p.done), &p.done_len);
			if (msg == 3)
				p.done[at] ^= bit;
			if (rc == 0)
				rc = auth_sess_client_done(&p.c, p.done, p.done_len, &p.err);
			if (rc == 0 || (auth_sess_open(&p.c) && auth_sess_open(&p.s)))
				fail_msg("message %d byte %zu changed: the handshake still passed",
					 msg, at);
			pair_fini(&p);
		}
	}
}

/* Any changed byte of a frame or of its MAC fails, and the session stays failed. */
static void test_sess_frame_tamper(void **state)
{
	uint8_t frame[40], mac[AUTH_SESS_MAC_LEN];

	(void)state;
	for (size_t at = 0; at < sizeof(frame) + sizeof(mac); at++) {
		struct pair p;

		pair_init(&p);
		assert_int_equal(pair_run(&p, &key_admin), 0);
		for (size_t i = 0; i < sizeof(frame); i++)
			frame[i] = (uint8_t)(i * 7);
		assert_int_equal(auth_sess_seal(&p.c, frame, sizeof(frame), mac), 0);
		if (at < sizeof(frame))
			frame[at] ^= 0x10;
		else
			mac[at - sizeof(frame)] ^= 0x01;
		assert_int_equal(auth_sess_verify(&p.s, frame, sizeof(frame), mac), -EACCES);
		assert_int_equal(p.s.state, AUTH_SESS_FAILED);
		/* Nothing verifies after a failure, not even the genuine frame. */
		assert_int_equal(auth_sess_verify(&p.s, frame, sizeof(frame), mac), -EPROTO);
		pair_fini(&p);
	}
}

/* A frame replayed, reordered, dropped, reflected back, or taken to another session fails. */
static void test_sess_frame_replay(void **state)
{
	uint8_t f1[16] = "first frame", f2[16] = "second frame";
	uint8_t m1[AUTH_SESS_MAC_LEN], m2[AUTH_SESS_MAC_LEN];
	struct pair p, q;

	(void)state;
	/* replay */
	pair_init(&p);
	assert_int_equal(pair_run(&p, &key_admin), 0);
	assert_int_equal(auth_sess_seal(&p.c, f1, sizeof(f1), m1), 0);
	assert_int_equal(auth_sess_verify(&p.s, f1, sizeof(f1), m1), 0);
	assert_int_equal(auth_sess_verify(&p.s, f1, sizeof(f1), m1), -EACCES);
	pair_fini(&p);
	/* reorder (and a dropped frame: the second arrives where the first should) */
	pair_init(&p);
	assert_int_equal(pair_run(&p, &key_admin), 0);
	assert_int_equal(auth_sess_seal(&p.c, f1, sizeof(f1), m1), 0);
	assert_int_equal(auth_sess_seal(&p.c, f2, sizeof(f2), m2), 0);
	assert_int_equal(auth_sess_verify(&p.s, f2, sizeof(f2), m2), -EACCES);
	pair_fini(&p);
	/* reflection: the server's own frame sent back to it */
	pair_init(&p);
	assert_int_equal(pair_run(&p, &key_admin), 0);
	assert_int_equal(auth_sess_seal(&p.s, f1, sizeof(f1), m1), 0);
	assert_int_equal(auth_sess_verify(&p.s, f1, sizeof(f1), m1), -EACCES);
	pair_fini(&p);
	/* another session of the same key */
	pair_init(&p);
	pair_init(&q);
	assert_int_equal(pair_run(&p, &key_admin), 0);
	assert_int_equal(pair_run(&q, &key_admin), 0);
	assert_int_equal(auth_sess_seal(&p.c, f1, sizeof(f1), m1), 0);
	assert_int_equal(auth_sess_verify(&q.s, f1, sizeof(f1), m1), -EACCES);
	pair_fini(&p);
	pair_fini(&q);
}

/* A large frame's content is bound to the sequence number of its announcement. */
static void test_sess_bulk(void **state)
{
	uint8_t big[3000], ann[24] = "BULK id 7", mac[AUTH_SESS_MAC_LEN], amac[AUTH_SESS_MAC_LEN];
	uint64_t seq;
	struct pair p;

	(void)state;
	memset(big, 0x5a, sizeof(big));
	pair_init(&p);
	assert_int_equal(pair_run(&p, &key_admin), 0);
	seq = auth_sess_tx_next(&p.s);
	assert_int_equal(auth_sess_seal_bulk(&p.s, seq, big, sizeof(big), mac), 0);
	assert_int_equal(auth_sess_seal(&p.s, ann, sizeof(ann), amac), 0);
	assert_int_equal(auth_sess_verify(&p.c, ann, sizeof(ann), amac), 0);
	assert_int_equal(auth_sess_rx_last(&p.c), seq);
	/* as an ordinary frame, or under another sequence number, it fails */
	assert_int_equal(auth_sess_verify_bulk(&p.c, seq + 1, big, sizeof(big), mac), -EACCES);
	pair_fini(&p);
	pair_init(&p);
	assert_int_equal(pair_run(&p, &key_admin), 0);
	assert_int_equal(auth_sess_seal_bulk(&p.s, 0, big, sizeof(big), mac), 0);
	assert_int_equal(auth_sess_verify(&p.c, big, sizeof(big), mac), -EACCES);
	pair_fini(&p);
	pair_init(&p);
	assert_int_equal(pair_run(&p, &key_admin), 0);
	assert_int_equal(auth_sess_seal_bulk(&p.s, 0, big, sizeof(big), mac), 0);
	assert_int_equal(auth_sess_seal(&p.s, ann, sizeof(ann), amac), 0);
	assert_int_equal(auth_sess_verify(&p.c, ann, sizeof(ann), amac), 0);
	assert_int_equal(auth_sess_verify_bulk(&p.c, 0, big, sizeof(big), mac), 0);
	big[2999] ^= 1;
	assert_int_equal(auth_sess_verify_bulk(&p.c, 0, big, sizeof(big), mac), -EACCES);
	pair_fini(&p);
}

/* The client may send right after PROOF; it accepts nothing before DONE verified. */
static void test_sess_pipelining(void **state)
{
	uint8_t f[8] = "request", mac[AUTH_SESS_MAC_LEN];
	struct pair p;

	(void)state;
	pair_init(&p);
	assert_int_equal(auth_sess_client_start(&p.c, "client.admin", &key_admin, "mon.", p.hello,
						sizeof(p.hello), &p.hello_len),
			 0);
	assert_false(auth_sess_tx_ready(&p.c));
	assert_int_equal(auth_sess_seal(&p.c, f, sizeof(f), mac), -EPROTO);
	assert_int_equal(auth_sess_server_hello(&p.s, p.hello, p.hello_len, &p.err), 0);
	assert_int_equal(auth_sess_server_challenge(&p.s, "mon.", &p.sf, &p.keys, &p.err, p.chal,
						    sizeof(p.chal), &p.chal_len),
			 0);
	assert_int_equal(auth_sess_client_challenge(&p.c, &p.cf, p.chal, p.chal_len, &p.err,
						    p.proof, sizeof(p.proof), &p.proof_len),
			 0);
	assert_true(auth_sess_tx_ready(&p.c));
	assert_false(auth_sess_open(&p.c));
	assert_int_equal(auth_sess_seal(&p.c, f, sizeof(f), mac), 0);
	/* The server verifies nothing before the proof... */
	assert_int_equal(auth_sess_verify(&p.s, f, sizeof(f), mac), -EPROTO);
	pair_fini(&p);
	pair_init(&p);
	assert_int_equal(pair_run(&p, &key_admin), 0);
	assert_int_equal(auth_sess_seal(&p.c, f, sizeof(f), mac), 0);
	assert_int_equal(auth_sess_verify(&p.s, f, sizeof(f), mac), 0);
	pair_fini(&p);
}

/* After `auth rotate`: the previous key opens a session that ends with its grace; a third fails. */
static void test_sess_rotation(void **state)
{
	struct pair p;

	(void)state;
	pair_init(&p);
	p.keys.key[1] = key_old;
	p.keys.nkeys = 2;
	p.keys.old_until_us = 1234567;
	assert_int_equal(pair_run(&p, &key_old), 0);
	assert_int_equal(p.s.valid_until_us, 1234567);
	pair_fini(&p);
	pair_init(&p);
	p.keys.key[1] = key_old;
	p.keys.nkeys = 2;
	p.keys.old_until_us = 1234567;
	assert_int_equal(pair_run(&p, &key_admin), 0);
	assert_int_equal(p.s.valid_until_us, 0);
	pair_fini(&p);
	pair_init(&p);
	p.keys.key[1] = key_old;
	p.keys.nkeys = 2;
	assert_int_equal(pair_run(&p, &key_other), -EACCES);
	pair_fini(&p);
}

/* Messages out of order, a ticket where none is served, a reflected nonce. */
static void test_sess_refusals(void **state)
{
	struct pair p, q;

	(void)state;
	pair_init(&p);
	assert_int_equal(pair_run(&p, &key_admin), 0);
	/* the server's CHALLENGE fed back to the server as a HELLO */
	pair_init(&q);
	assert_int_equal(auth_sess_server_hello(&q.s, p.chal, p.chal_len, &q.err), -EBADMSG);
	/* a DONE where the server waits for a PROOF (a reflected server proof) */
	pair_fini(&q);
	pair_init(&q);
	assert_int_equal(auth_sess_client_start(&q.c, "client.admin", &key_admin, "mon.", q.hello,
						sizeof(q.hello), &q.hello_len),
			 0);
	assert_int_equal(auth_sess_server_hello(&q.s, q.hello, q.hello_len, &q.err), 0);
	assert_int_equal(auth_sess_server_challenge(&q.s, "mon.", &q.sf, &q.keys, &q.err, q.chal,
						    sizeof(q.chal), &q.chal_len),
			 0);
	assert_int_equal(auth_sess_server_proof(&q.s, p.done, p.done_len, &q.err, q.done,
						sizeof(q.done), &q.done_len),
			 -EBADMSG);
	pair_fini(&q);
	/* the client's own HELLO reflected to it as a CHALLENGE */
	pair_init(&q);
	assert_int_equal(auth_sess_client_start(&q.c, "client.admin", &key_admin, "mon.", q.hello,
						sizeof(q.hello), &q.hello_len),
			 0);
	assert_int_not_equal(auth_sess_client_challenge(&q.c, &q.cf, q.hello, q.hello_len, &q.err,
							q.proof, sizeof(q.proof), &q.proof_len),
			     0);
	assert_int_equal(q.c.state, AUTH_SESS_FAILED);
	pair_fini(&q);
	/* a second PROOF on an open session */
	assert_int_equal(auth_sess_server_proof(&p.s, p.proof, p.proof_len, &p.err, p.done,
						sizeof(p.done), &p.done_len),
			 -EPROTO);
	pair_fini(&p);
}

/* Both ends derive the same seal key, only once open, and another session another one. */
static void test_sess_seal_key(void **state)
{
	struct auth_key kc, ks, kq;
	struct pair p, q;

	(void)state;
	pair_init(&p);
	assert_int_equal(auth_sess_seal_key(&p.c, &kc), -ENOTCONN);
	assert_int_equal(auth_sess_client_start(&p.c, "client.admin", &key_admin, "mon.", p.hello,
						sizeof(p.hello), &p.hello_len),
			 0);
	assert_int_equal(auth_sess_server_hello(&p.s, p.hello, p.hello_len, &p.err), 0);
	assert_int_equal(auth_sess_server_challenge(&p.s, "mon.", &p.sf, &p.keys, &p.err, p.chal,
						    sizeof(p.chal), &p.chal_len),
			 0);
	assert_int_equal(auth_sess_client_challenge(&p.c, &p.cf, p.chal, p.chal_len, &p.err,
						    p.proof, sizeof(p.proof), &p.proof_len),
			 0);
	/* the client holds the session key now, but nothing is sealed to it before DONE */
	assert_int_equal(auth_sess_seal_key(&p.c, &kc), -ENOTCONN);
	assert_int_equal(auth_sess_seal_key(&p.s, &ks), -ENOTCONN);
	pair_fini(&p);
	pair_init(&p);
	assert_int_equal(pair_run(&p, &key_admin), 0);
	assert_int_equal(auth_sess_seal_key(&p.c, &kc), 0);
	assert_int_equal(auth_sess_seal_key(&p.s, &ks), 0);
	assert_memory_equal(kc.b, ks.b, AUTH_KEY_LEN);
	assert_memory_not_equal(kc.b, p.c.hs.session.b, AUTH_KEY_LEN);
	pair_init(&q);
	assert_int_equal(pair_run(&q, &key_admin), 0);
	assert_int_equal(auth_sess_seal_key(&q.s, &kq), 0);
	assert_memory_not_equal(kq.b, ks.b, AUTH_KEY_LEN);
	pair_fini(&q);
	pair_fini(&p);
}

static void test_fsid_parse(void **state)
{
	uint8_t b[16], z[16] = {0};

	(void)state;
	assert_int_equal(auth_fsid_parse("8d5a4c1e-3b7f-4e2a-9c61-0e4f2a7b9d30", b), 0);
	assert_int_equal(b[0], 0x8d);
	assert_int_equal(b[15], 0x30);
	assert_int_equal(auth_fsid_parse("8d5a4c1e3b7f4e2a9c610e4f2a7b9d30", b), 0);
	assert_int_equal(b[15], 0x30);
	assert_int_equal(auth_fsid_parse("", b), 0);
	assert_memory_equal(b, z, 16);
	assert_int_equal(auth_fsid_parse(NULL, b), 0);
	assert_int_equal(auth_fsid_parse("8d5a4c1e-3b7f-4e2a-9c61-0e4f2a7b9d3", b), -EINVAL);
	assert_int_equal(auth_fsid_parse("8d5a4c1e-3b7f-4e2a-9c61-0e4f2a7b9d300", b), -EINVAL);
	assert_int_equal(auth_fsid_parse("8d5a4c1e--3b7f-4e2a-9c61-0e4f2a7b9d30", b), -EINVAL);
	assert_int_equal(auth_fsid_parse("xyz", b), -EINVAL);
}

/* GMAC is AES-256-GCM's tag over the message as additional data, nothing encrypted. */
static void test_gmac_is_gcm_tag(void **state)
{
	static const char a[] = "a frame's header", b[] = "and its payload";
	struct auth_iov iov[2] = {{a, sizeof(a)}, {b, sizeof(b)}};
	uint8_t nonce[AUTH_MAC_NONCE_LEN] = {1, 0, 0, 0, 9}, mac[AUTH_MAC_LEN], tag[16], aad[64];
	struct auth_mac_ctx *g, *h;
	uint8_t ct[1];

	(void)state;
	assert_int_equal(auth_mac_ctx_new_alg(&key_admin, AUTH_MAC_GMAC, &g), 0);
	assert_int_equal(auth_mac_ctx_run_nonce(g, nonce, iov, 2, mac), 0);
	memcpy(aad, a, sizeof(a));
	memcpy(aad + sizeof(a), b, sizeof(b));
	assert_int_equal(auth_aead_seal(&key_admin, nonce, aad, sizeof(a) + sizeof(b), NULL, 0, ct,
					tag),
			 0);
	assert_memory_equal(mac, tag, 16);
	for (int i = 16; i < AUTH_MAC_LEN; i++)
		assert_int_equal(mac[i], 0);
	/* the same again (the key schedule is kept), and another nonce gives another tag */
	assert_int_equal(auth_mac_ctx_run_nonce(g, nonce, iov, 2, aad), 0);
	assert_memory_equal(mac, aad, AUTH_MAC_LEN);
	nonce[4] = 10;
	assert_int_equal(auth_mac_ctx_run_nonce(g, nonce, iov, 2, aad), 0);
	assert_memory_not_equal(mac, aad, 16);
	/* no nonce, no GMAC; and HMAC is unchanged by one */
	assert_int_equal(auth_mac_ctx_run(g, iov, 2, aad), -EINVAL);
	assert_int_equal(auth_mac_ctx_new_alg(&key_admin, AUTH_MAC_HMAC, &h), 0);
	assert_int_equal(auth_mac_ctx_run_nonce(h, nonce, iov, 2, mac), 0);
	assert_int_equal(auth_hmac(&key_admin, iov, 2, aad), 0);
	assert_memory_equal(mac, aad, AUTH_MAC_LEN);
	auth_mac_ctx_free(g);
	auth_mac_ctx_free(h);
}

/* Peers that disagree on the MAC (a bug, or a hello edited in flight) verify nothing. */
static void test_sess_mac_mismatch(void **state)
{
	uint8_t frame[32] = "hello", mac[AUTH_SESS_MAC_LEN];
	struct pair p;

	(void)state;
	pair_init(&p);
	p.cgmac = !use_gmac;
	assert_int_equal(pair_run(&p, &key_admin), 0); /* the handshake does not depend on it */
	assert_int_equal(auth_sess_seal(&p.c, frame, sizeof(frame), mac), 0);
	assert_int_equal(auth_sess_verify(&p.s, frame, sizeof(frame), mac), -EACCES);
	pair_fini(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sess_ok),	      cmocka_unit_test(test_sess_wrong_key),
	    cmocka_unit_test(test_sess_facts),	      cmocka_unit_test(test_sess_any_byte),
	    cmocka_unit_test(test_sess_frame_tamper), cmocka_unit_test(test_sess_frame_replay),
	    cmocka_unit_test(test_sess_bulk),	      cmocka_unit_test(test_sess_pipelining),
	    cmocka_unit_test(test_sess_rotation),     cmocka_unit_test(test_sess_refusals),
	    cmocka_unit_test(test_sess_seal_key),     cmocka_unit_test(test_fsid_parse),
	    cmocka_unit_test(test_gmac_is_gcm_tag),   cmocka_unit_test(test_sess_mac_mismatch),
	};
	int failed;

	weft_log_set_level(WEFT_LOG_ERROR);
	failed = cmocka_run_group_tests_name("HMAC frame MACs", tests, setup, NULL);
	use_gmac = true;
	return failed + cmocka_run_group_tests_name("GMAC frame MACs", tests, setup, NULL);
}
