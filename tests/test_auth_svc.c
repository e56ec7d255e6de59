/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The service keys that seal tickets (auth/ticket.h, mon/mon_auth_svc.c):
 * the monitors' rotation (pending -> current -> retired), its schedule
 * from auth_service_ticket_ttl, the grace of retired keys, ticket expiry,
 * an OSD's copy of the set opening tickets sealed after it was taken, the
 * set's codec, the rotation's log entry and the database's version 2;
 * the monitor's ticket and service-key answers end to end (a client opens
 * its grant, an OSD that fetched the keys opens the ticket, and the two run
 * the ticket handshake), their refusals, and the four messages' codecs.
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
#include "common/log.h"
#include "mon/mon_auth.h"
#include "proto/proto.h"

#define S   1000000ull
#define T0  (1800000000ull * S)
#define TTL (3600 * S)

/* One rotation as the leader makes it and every replica applies it. */
static void rotate(struct auth_svc_keys *sk, uint64_t now)
{
	struct auth_key k;

	assert_int_equal(auth_key_generate(&k), 0);
	assert_int_equal(auth_svc_advance(sk, auth_svc_next_id(sk), &k, now, mon_svc_grace(TTL)),
			 0);
}

static void ticket_for(const char *entity, uint64_t now, struct auth_ticket *t)
{
	struct auth_caps caps = {0};
	char err[200];

	assert_int_equal(
	    auth_caps_parse(&caps, AUTH_SVC_OSD, "allow rw pool=rbd", err, sizeof(err)), 0);
	assert_int_equal(auth_ticket_issue(entity, &caps, now, TTL, t), 0);
}

static void test_advance(void **state)
{
	struct auth_svc_keys sk;
	struct auth_key k;

	(void)state;
	auth_svc_keys_init(&sk, 0);
	assert_null(auth_svc_current(&sk));
	assert_int_equal(auth_svc_next_id(&sk), 1);
	assert_int_equal(auth_key_generate(&k), 0);
	/* not the next id: nothing changes, the same on every replica */
	assert_int_equal(auth_svc_advance(&sk, 2, &k, T0, mon_svc_grace(TTL)), -ESTALE);
	assert_int_equal(sk.count, 0);
	/* first: a pending key, nothing seals yet */
	rotate(&sk, T0);
	assert_int_equal(sk.count, 1);
	assert_null(auth_svc_current(&sk));
	assert_int_equal(auth_svc_pending(&sk)->id, 1);
	assert_true(mon_svc_rotate_due(&sk, T0, TTL));
	/* second: 1 current, 2 pending */
	rotate(&sk, T0 + 1);
	assert_int_equal(auth_svc_current(&sk)->id, 1);
	assert_int_equal(auth_svc_current(&sk)->activated_us, T0 + 1);
	assert_int_equal(auth_svc_pending(&sk)->id, 2);
	assert_int_equal(sk.grace_us, mon_svc_grace(TTL));
	/* third: 1 retired, 2 current, 3 pending */
	rotate(&sk, T0 + 2);
	assert_int_equal(sk.count, 3);
	assert_int_equal(sk.keys[0].state, AUTH_SVC_RETIRED);
	assert_int_equal(sk.keys[0].retired_us, T0 + 2);
	assert_int_equal(auth_svc_current(&sk)->id, 2);
	assert_int_equal(auth_svc_pending(&sk)->id, 3);
	assert_int_equal(auth_svc_advance(&sk, 3, &k, T0 + 3, mon_svc_grace(TTL)), -ESTALE);
	auth_key_wipe(&k);
	auth_svc_keys_clear(&sk);
}

/* Rotate at half the lifetime; not before; never because the wall clock went back. */
static void test_schedule(void **state)
{
	struct auth_svc_keys sk;

	(void)state;
	assert_int_equal(mon_svc_rotate_every(TTL), TTL / 2);
	assert_true(mon_svc_grace(TTL) > TTL);
	auth_svc_keys_init(&sk, 0);
	assert_true(mon_svc_rotate_due(&sk, T0, TTL)); /* empty */
	rotate(&sk, T0);
	assert_true(mon_svc_rotate_due(&sk, T0, TTL)); /* no current yet */
	rotate(&sk, T0);
	assert_false(mon_svc_rotate_due(&sk, T0, TTL));
	assert_false(mon_svc_rotate_due(&sk, T0 + TTL / 2 - 1, TTL));
	assert_true(mon_svc_rotate_due(&sk, T0 + TTL / 2, TTL));
	assert_false(mon_svc_rotate_due(&sk, T0 - 3600 * S, TTL)); /* clock went back */
	/* a shorter ttl rotates sooner */
	assert_true(mon_svc_rotate_due(&sk, T0 + 60 * S, 120 * S));
	auth_svc_keys_clear(&sk);
}

/*
 * Rotating on schedule for a day: the set never exceeds its bound, keys go
 * a grace after they retired, and every ticket sealed at any time opens
 * until the moment it expires, never after (no valid ticket dies with its key).
 */
static void test_grace(void **state)
{
	static uint8_t sealed[64][4096];
	static size_t slen[64];
	static uint64_t sealed_at[64];
	struct auth_svc_keys sk;
	struct proto_err err;
	struct auth_ticket t, back;
	uint64_t now = T0;
	unsigned int n = 0;

	(void)state;
	auth_svc_keys_init(&sk, 0);
	rotate(&sk, now);
	rotate(&sk, now);
	for (uint64_t step = 0; step < 48; step++) {
		/* seal one ticket at a random point of the period, then move to the next rotation
		 */
		uint64_t at = now + (uint64_t)(rand() % (int)(TTL / 2 / S)) * S;

		ticket_for("client.vol", at, &t);
		assert_int_equal(auth_ticket_seal(&sk, &t, sealed[n], sizeof(sealed[n]), &slen[n]),
				 0);
		sealed_at[n++] = at;
		auth_key_wipe(&t.session);
		now += TTL / 2;
		rotate(&sk, now);
		assert_true(sk.count <= AUTH_SVC_KEYS_MAX);
		for (unsigned int i = 0; i < sk.count; i++)
			assert_true(sk.keys[i].state != AUTH_SVC_RETIRED ||
				    now - sk.keys[i].retired_us < sk.grace_us);
		/* every ticket sealed so far: opens while valid, refused once expired */
		for (unsigned int i = 0; i < n; i++) {
			uint64_t exp = sealed_at[i] + TTL;
			int rc = auth_ticket_unseal(&sk, sealed[i], slen[i], now, &err, &back);

			if (now < exp) {
				assert_int_equal(rc, 0);
				assert_int_equal(back.expires_us, exp);
				auth_key_wipe(&back.session);
			} else {
				assert_true(rc == -EKEYEXPIRED || rc == -ENOKEY);
			}
			/* the last microsecond of its life, while the set is as it is */
			if (exp - 1 >= now && exp - 1 < now + TTL / 2) {
				assert_int_equal(auth_ticket_unseal(&sk, sealed[i], slen[i],
								    exp - 1, &err, &back),
						 0);
				auth_key_wipe(&back.session);
			}
		}
	}
	auth_svc_keys_clear(&sk);
}

/* Expiry of a ticket, a key past its grace, a key this side does not hold: each refused, one line.
 */
static void test_expiry(void **state)
{
	struct auth_svc_keys sk, old;
	struct proto_err err;
	struct auth_ticket t, back;
	uint8_t sealed[4096];
	size_t len;

	(void)state;
	auth_svc_keys_init(&sk, 0);
	rotate(&sk, T0);
	rotate(&sk, T0);
	ticket_for("client.a", T0, &t);
	assert_int_equal(auth_ticket_seal(&sk, &t, sealed, sizeof(sealed), &len), 0);
	auth_key_wipe(&t.session);
	assert_int_equal(auth_ticket_unseal(&sk, sealed, len, T0 + TTL - 1, &err, &back), 0);
	auth_key_wipe(&back.session);
	assert_int_equal(auth_ticket_unseal(&sk, sealed, len, T0 + TTL, &err, &back), -EKEYEXPIRED);
	assert_non_null(strstr(err.msg, "ticket for client.a expired"));
	/* key 1 retires at T0+TTL/2; past its grace, even a ticket not yet expired by its own
	 * clock would be refused (the grace covers every ticket it sealed) */
	rotate(&sk, T0 + TTL / 2);
	assert_int_equal(
	    auth_ticket_unseal(&sk, sealed, len, T0 + TTL / 2 + mon_svc_grace(TTL), &err, &back),
	    -EKEYEXPIRED);
	assert_string_equal(err.msg, "sealed_ticket: service key 1 retired past its grace");
	/* a copy of the set that lacks the key: an OSD that never fetched it */
	auth_svc_keys_init(&old, 0);
	assert_int_equal(auth_ticket_unseal(&old, sealed, len, T0, &err, &back), -ENOKEY);
	assert_string_equal(err.msg, "sealed_ticket: service key 1 is unknown here");
	auth_svc_keys_clear(&sk);
}

/*
 * Why there is a pending key: an OSD's copy taken before a rotation opens
 * tickets the monitor seals after it. A copy two rotations old does not.
 */
static void test_pending(void **state)
{
	struct auth_svc_keys mon, osd, stale;
	struct proto_err err;
	struct auth_ticket t, back;
	uint8_t sealed[4096];
	size_t len;

	(void)state;
	auth_svc_keys_init(&mon, 0);
	rotate(&mon, T0);
	rotate(&mon, T0);
	stale = mon;
	rotate(&mon, T0 + TTL / 2);
	osd = mon; /* fetched now: 1 retired, 2 current, 3 pending */
	rotate(&mon, T0 + TTL);
	/* the monitor now seals with key 3, which the OSD holds as pending */
	ticket_for("client.b", T0 + TTL, &t);
	assert_int_equal(auth_ticket_seal(&mon, &t, sealed, sizeof(sealed), &len), 0);
	auth_key_wipe(&t.session);
	assert_int_equal(auth_svc_current(&mon)->id, 3);
	assert_int_equal(auth_svc_pending(&osd)->id, 3);
	assert_int_equal(auth_ticket_unseal(&osd, sealed, len, T0 + TTL + 1, &err, &back), 0);
	assert_string_equal(back.entity, "client.b");
	auth_key_wipe(&back.session);
	assert_int_equal(auth_ticket_unseal(&stale, sealed, len, T0 + TTL + 1, &err, &back),
			 -ENOKEY);
	auth_svc_keys_clear(&mon);
	auth_svc_keys_clear(&osd);
	auth_svc_keys_clear(&stale);
}

static void test_keys_codec(void **state)
{
	struct auth_svc_keys sk, back;
	struct proto_enc enc;
	struct proto_dec dec;
	struct proto_err err;
	uint8_t buf[2048];
	size_t len;

	(void)state;
	auth_svc_keys_init(&sk, 0);
	for (int i = 0; i < 5; i++)
		rotate(&sk, T0 + (uint64_t)i * TTL / 2);
	proto_enc_init(&enc, buf, sizeof(buf));
	auth_svc_keys_encode(&enc, &sk);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	proto_dec_init(&dec, buf, len, "svc", &err);
	assert_int_equal(auth_svc_keys_decode(&dec, &back), 0);
	assert_int_equal(proto_dec_finish(&dec), 0);
	assert_int_equal(back.count, sk.count);
	assert_int_equal(back.grace_us, sk.grace_us);
	assert_memory_equal(back.keys, sk.keys, sk.count * sizeof(sk.keys[0]));
	/* every truncation refused */
	for (size_t n = 0; n < len; n++) {
		proto_dec_init(&dec, buf, n, "svc", &err);
		assert_true(auth_svc_keys_decode(&dec, &back) != 0 || proto_dec_finish(&dec) != 0);
	}
	/* two current keys, ids not ascending, a pending key not the newest, times out of order */
	{
		struct auth_svc_keys bad[4];
		const char *want[4] = {"current after current", "ids must ascend", "after pending",
				       "times out of order"};

		for (int i = 0; i < 4; i++)
			bad[i] = sk;
		bad[0].keys[bad[0].count - 1].state = AUTH_SVC_CURRENT;
		bad[0].keys[bad[0].count - 1].activated_us = T0 + 3 * TTL;
		bad[1].keys[1].id = bad[1].keys[0].id;
		bad[2].keys[bad[2].count - 2].state = AUTH_SVC_PENDING;
		bad[2].keys[bad[2].count - 2].activated_us = 0;
		bad[3].keys[0].retired_us = bad[3].keys[0].activated_us - 1;
		for (int i = 0; i < 4; i++) {
			proto_enc_init(&enc, buf, sizeof(buf));
			auth_svc_keys_encode(&enc, &bad[i]);
			assert_int_equal(proto_enc_finish(&enc, &len), 0);
			proto_dec_init(&dec, buf, len, "svc", &err);
			assert_int_equal(auth_svc_keys_decode(&dec, &back), -EBADMSG);
			assert_non_null(strstr(err.msg, want[i]));
			auth_svc_keys_clear(&bad[i]);
		}
	}
	auth_svc_keys_clear(&sk);
}

/* The rotation's log entry: round trip, truncations, and two replicas ending the same. */
static void test_op_replicas(void **state)
{
	struct mon_auth a, b;
	struct mon_svc_op op = {.kind = MON_SVC_OP_ROTATE}, back;
	struct proto_err err;
	void *buf, *ea, *eb;
	size_t len, la, lb;

	(void)state;
	mon_auth_init(&a);
	mon_auth_init(&b);
	for (int i = 0; i < 7; i++) {
		op.new_id = auth_svc_next_id(&a.svc);
		assert_int_equal(auth_key_generate(&op.key), 0);
		op.stamp_us = T0 + (uint64_t)i * TTL / 2;
		op.grace_us = mon_svc_grace(TTL);
		assert_int_equal(mon_svc_op_encode(&op, &buf, &len), 0);
		for (size_t n = 0; n < len; n++)
			assert_int_equal(mon_svc_op_decode(buf, n, &err, &back), -EBADMSG);
		assert_int_equal(mon_svc_op_decode(buf, len, &err, &back), 0);
		assert_memory_equal(&back, &op, sizeof(op));
		/* each replica applies what came out of the log */
		assert_int_equal(mon_svc_apply(&a, &back), 0);
		assert_int_equal(mon_svc_apply(&b, &back), 0);
		/* the same entry again (a retry): refused identically, nothing changes */
		assert_int_equal(mon_svc_apply(&a, &back), -ESTALE);
		assert_int_equal(mon_svc_apply(&b, &back), -ESTALE);
		free(buf);
	}
	assert_int_equal(mon_auth_db_encode(&a, &ea, &la), 0);
	assert_int_equal(mon_auth_db_encode(&b, &eb, &lb), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(ea, eb, la);
	free(ea);
	free(eb);
	/* a zero id or stamp is refused */
	op.new_id = 0;
	assert_int_equal(mon_svc_op_encode(&op, &buf, &len), 0);
	assert_int_equal(mon_svc_op_decode(buf, len, &err, &back), -EBADMSG);
	assert_non_null(strstr(err.msg, "new_id"));
	free(buf);
	mon_auth_free(&a);
	mon_auth_free(&b);
}

/* The database: version 1 without service keys (as before), 2 with them; both round trip. */
static void test_db_versions(void **state)
{
	struct mon_auth db, back;
	struct mon_auth_op add = {.kind = MON_AUTH_OP_ADD};
	struct proto_err err;
	uint8_t *p;
	size_t len;

	(void)state;
	mon_auth_init(&db);
	mon_auth_init(&back);
	strcpy(add.entity, "client.admin");
	assert_int_equal(auth_key_generate(&add.key), 0);
	assert_int_equal(mon_auth_apply(&db, &add), 0);
	assert_int_equal(mon_auth_db_encode(&db, (void **)&p, &len), 0);
	assert_int_equal(p[0], 1);
	free(p);
	rotate(&db.svc, T0);
	rotate(&db.svc, T0);
	assert_int_equal(mon_auth_db_encode(&db, (void **)&p, &len), 0);
	assert_int_equal(p[0], 2);
	assert_int_equal(mon_auth_db_decode(p, len, &err, &back), 0);
	assert_int_equal(back.count, 1);
	assert_int_equal(back.svc.count, 2);
	assert_memory_equal(back.svc.keys, db.svc.keys, 2 * sizeof(db.svc.keys[0]));
	for (size_t n = 0; n < len; n++)
		assert_int_equal(mon_auth_db_decode(p, n, &err, &back), -EBADMSG);
	/* version 2 with no keys is not canonical */
	p[len - 1 - 2 * (4 + 1 + 32 + 24)] = 0; /* the count */
	assert_int_equal(mon_auth_db_decode(p, len - 2 * (4 + 1 + 32 + 24), &err, &back), -EBADMSG);
	assert_non_null(strstr(err.msg, "version 2 without service keys"));
	free(p);
	mon_auth_free(&db);
	mon_auth_free(&back);
}

static void db_add(struct mon_auth *db, const char *entity, const char *mon_caps,
		   const char *osd_caps)
{
	struct mon_auth_op op = {.kind = MON_AUTH_OP_ADD};
	char err[200];

	snprintf(op.entity, sizeof(op.entity), "%s", entity);
	assert_int_equal(auth_key_generate(&op.key), 0);
	if (mon_caps != NULL)
		assert_int_equal(
		    auth_caps_parse(&op.caps, AUTH_SVC_MON, mon_caps, err, sizeof(err)), 0);
	if (osd_caps != NULL)
		assert_int_equal(
		    auth_caps_parse(&op.caps, AUTH_SVC_OSD, osd_caps, err, sizeof(err)), 0);
	assert_int_equal(mon_auth_apply(db, &op), 0);
	auth_key_wipe(&op.key);
}

/*
 * The whole path: the monitor grants client.vol a ticket over its session,
 * osd.3 fetches the service keys over its own, and client and OSD run the
 * ticket handshake: both derive the same session key; the OSD sees the
 * client's entity and caps without ever knowing client.vol's key.
 */
static void test_ticket_path(void **state)
{
	static uint8_t grant[PROTO_AUTH_GRANT_MAX], keys[PROTO_AUTH_SVC_KEYS_MAX];
	struct auth_key client_sess, osd_sess, tkey;
	struct auth_svc_keys osd_keys;
	struct auth_grant_msg g;
	struct auth_ticket seen;
	struct proto_err err;
	struct mon_auth db;
	char why[256];
	size_t glen, klen;

	(void)state;
	mon_auth_init(&db);
	db_add(&db, "client.vol", "profile client", "allow rw pool=rbd");
	db_add(&db, "osd.3", "profile osd", "profile osd");
	rotate(&db.svc, T0);
	rotate(&db.svc, T0);
	assert_int_equal(auth_key_generate(&client_sess), 0);
	assert_int_equal(auth_key_generate(&osd_sess), 0);
	assert_int_equal(mon_ticket_build(&db, "client.vol", &client_sess, T0 + S, TTL, grant,
					  sizeof(grant), &glen, why, sizeof(why)),
			 0);
	assert_int_equal(mon_svc_keys_build(&db, "osd.3", &osd_sess, 0, keys, sizeof(keys), &klen,
					    why, sizeof(why)),
			 0);
	assert_true(klen > 0);
	/* the client: the grant opens under its session only */
	assert_int_equal(auth_grant_decode(grant, glen, &err, &g), 0);
	assert_int_equal(g.expires_us, T0 + S + TTL);
	assert_int_equal(auth_grant_open(&osd_sess, &g, &tkey), -EBADMSG);
	assert_int_equal(auth_grant_open(&client_sess, &g, &tkey), 0);
	/* the OSD: the keys open under its session only; then the ticket opens */
	assert_int_equal(auth_svc_keys_open(&client_sess, keys, klen, &err, &osd_keys), -EBADMSG);
	assert_int_equal(auth_svc_keys_open(&osd_sess, keys, klen, &err, &osd_keys), 0);
	assert_int_equal(osd_keys.count, db.svc.count);
	assert_int_equal(
	    auth_ticket_unseal(&osd_keys, g.ticket, g.ticket_len, T0 + 2 * S, &err, &seen), 0);
	assert_string_equal(seen.entity, "client.vol");
	assert_true(auth_caps_allow(&seen.caps, AUTH_SVC_OSD, "rbd", AUTH_PERM_R | AUTH_PERM_W));
	assert_false(auth_caps_allow(&seen.caps, AUTH_SVC_OSD, "other", AUTH_PERM_R));
	assert_true(auth_key_equal(&seen.session, &tkey));
	/* the ticket handshake (method TICKET): both sides end with one session key */
	{
		struct auth_hs c, o;
		struct auth_hs_bind cb = {.method = AUTH_METHOD_TICKET}, ob = {0};
		struct auth_hs_hello hello;
		uint8_t m1[8192], m2[512], m3[512], m4[512];
		size_t l1, l2, l3, l4;

		snprintf(cb.client, sizeof(cb.client), "client.vol");
		snprintf(cb.server, sizeof(cb.server), "osd.3");
		snprintf(cb.client_addr, sizeof(cb.client_addr), "127.1.0.50:40000");
		snprintf(cb.server_addr, sizeof(cb.server_addr), "127.1.0.13:6813");
		ob = cb;
		assert_int_equal(auth_hs_client_start(&c, &cb, &tkey, g.ticket, g.ticket_len, m1,
						      sizeof(m1), &l1),
				 0);
		assert_int_equal(auth_hs_hello_decode(m1, l1, &err, &hello), 0);
		assert_int_equal(auth_ticket_unseal(&osd_keys, hello.ticket, hello.ticket_len,
						    T0 + 2 * S, &err, &seen),
				 0);
		assert_int_equal(
		    auth_hs_server_start(&o, &ob, &hello, &seen.session, &err, m2, sizeof(m2), &l2),
		    0);
		assert_int_equal(auth_hs_client_on_challenge(&c, m2, l2, &err, m3, sizeof(m3), &l3),
				 0);
		assert_int_equal(auth_hs_server_on_proof(&o, m3, l3, &err, m4, sizeof(m4), &l4), 0);
		assert_int_equal(auth_hs_client_on_done(&c, m4, l4, &err), 0);
		assert_true(auth_key_equal(&c.session, &o.session));
		auth_hs_clear(&c);
		auth_hs_clear(&o);
	}
	/* nothing new since: an empty answer */
	assert_int_equal(mon_svc_keys_build(&db, "osd.3", &osd_sess, auth_svc_pending(&db.svc)->id,
					    keys, sizeof(keys), &klen, why, sizeof(why)),
			 0);
	assert_int_equal(klen, 0);
	auth_key_wipe(&seen.session);
	auth_key_wipe(&tkey);
	auth_svc_keys_clear(&osd_keys);
	mon_auth_free(&db);
}

static void test_ticket_refusals(void **state)
{
	uint8_t out[PROTO_AUTH_GRANT_MAX];
	struct mon_auth db;
	struct auth_key sess;
	char why[256];
	size_t len;

	(void)state;
	mon_auth_init(&db);
	assert_int_equal(auth_key_generate(&sess), 0);
	db_add(&db, "client.ro", "allow r", "allow r");
	db_add(&db, "client.monly", "allow r", NULL);
	db_add(&db, "osd.3", "profile osd", "profile osd");
	db_add(&db, "osd.4", NULL, "profile osd");
	/* before the first rotation */
	assert_int_equal(mon_ticket_build(&db, "client.ro", &sess, T0, TTL, out, sizeof(out), &len,
					  why, sizeof(why)),
			 -EAGAIN);
	assert_non_null(strstr(why, "no service key yet"));
	assert_int_equal(
	    mon_svc_keys_build(&db, "osd.3", &sess, 0, out, sizeof(out), &len, why, sizeof(why)),
	    -EAGAIN);
	rotate(&db.svc, T0);
	rotate(&db.svc, T0);
	assert_int_equal(mon_ticket_build(&db, "client.gone", &sess, T0, TTL, out, sizeof(out),
					  &len, why, sizeof(why)),
			 -ENOENT);
	assert_string_equal(why, "client.gone: no such entity (removed?)");
	assert_int_equal(mon_ticket_build(&db, "client.monly", &sess, T0, TTL, out, sizeof(out),
					  &len, why, sizeof(why)),
			 -EACCES);
	assert_non_null(strstr(why, "has no osd caps"));
	/* the service keys: osd.N with 'profile osd' mon caps only */
	assert_int_equal(mon_svc_keys_build(&db, "client.ro", &sess, 0, out, sizeof(out), &len, why,
					    sizeof(why)),
			 -EACCES);
	assert_non_null(strstr(why, "is not an OSD"));
	assert_int_equal(
	    mon_svc_keys_build(&db, "osd.9", &sess, 0, out, sizeof(out), &len, why, sizeof(why)),
	    -EACCES);
	assert_non_null(strstr(why, "not in the auth database"));
	assert_int_equal(
	    mon_svc_keys_build(&db, "osd.4", &sess, 0, out, sizeof(out), &len, why, sizeof(why)),
	    -EACCES);
	assert_non_null(strstr(why, "lacks mon caps"));
	/* the read-only client's ticket says read-only */
	{
		struct auth_grant_msg g;
		struct auth_ticket t;
		struct proto_err err;

		assert_int_equal(mon_ticket_build(&db, "client.ro", &sess, T0, TTL, out,
						  sizeof(out), &len, why, sizeof(why)),
				 0);
		assert_int_equal(auth_grant_decode(out, len, &err, &g), 0);
		assert_int_equal(
		    auth_ticket_unseal(&db.svc, g.ticket, g.ticket_len, T0 + 1, &err, &t), 0);
		assert_true(auth_caps_allow(&t.caps, AUTH_SVC_OSD, "rbd", AUTH_PERM_R));
		assert_false(auth_caps_allow(&t.caps, AUTH_SVC_OSD, "rbd", AUTH_PERM_W));
		auth_key_wipe(&t.session);
	}
	auth_key_wipe(&sess);
	mon_auth_free(&db);
}

/* The four messages: round trips, every truncation, and the rules. */
static void test_messages(void **state)
{
	static const char blob[] = "opaque grant bytes";
	struct proto_msg ok[5], bad[6], back;
	struct proto_err err;
	uint8_t buf[4096];
	size_t len;

	(void)state;
	memset(ok, 0, sizeof(ok));
	memset(bad, 0, sizeof(bad));
	ok[0].type = PROTO_AUTH_TICKET;
	ok[0].auth_ticket.service = PROTO_AUTH_SVC_OSD;
	ok[1].type = PROTO_AUTH_TICKET_REPLY;
	ok[1].auth_ticket_reply.blob = blob;
	ok[1].auth_ticket_reply.blob_len = sizeof(blob);
	ok[2].type = PROTO_AUTH_TICKET_REPLY;
	ok[2].auth_ticket_reply.status = -EACCES;
	strcpy(ok[2].auth_ticket_reply.msg, "not authenticated");
	ok[2].auth_ticket_reply.msg_len = strlen(ok[2].auth_ticket_reply.msg);
	ok[3].type = PROTO_AUTH_SVC_KEYS;
	ok[3].auth_svc_keys.have_id = 12;
	ok[4].type = PROTO_AUTH_SVC_KEYS_REPLY; /* status 0, no blob: nothing new */
	for (int i = 0; i < 5; i++) {
		assert_true(proto_type_known(ok[i].type));
		assert_int_equal(proto_msg_encode(&ok[i], buf, sizeof(buf), &len), 0);
		assert_int_equal(proto_msg_decode(ok[i].type, buf, len, &err, &back), 0);
		assert_int_equal(back.type, ok[i].type);
		for (size_t n = 0; n < len; n++)
			assert_int_equal(proto_msg_decode(ok[i].type, buf, n, &err, &back),
					 -EBADMSG);
	}
	/* refused: another service; a ticket reply without grant; an error with a blob; a msg
	 * with status 0; a positive status; a grant too long for a service-key reply */
	bad[0].type = PROTO_AUTH_TICKET;
	bad[0].auth_ticket.service = 2;
	bad[1].type = PROTO_AUTH_TICKET_REPLY;
	bad[2] = ok[2];
	bad[2].auth_ticket_reply.blob = blob;
	bad[2].auth_ticket_reply.blob_len = 3;
	bad[3] = ok[1];
	strcpy(bad[3].auth_ticket_reply.msg, "x");
	bad[3].auth_ticket_reply.msg_len = 1;
	bad[4] = ok[2];
	bad[4].auth_ticket_reply.status = 1;
	bad[5].type = PROTO_AUTH_SVC_KEYS_REPLY;
	bad[5].auth_ticket_reply.blob = buf;
	bad[5].auth_ticket_reply.blob_len = PROTO_AUTH_SVC_KEYS_MAX + 1;
	for (int i = 0; i < 6; i++) {
		assert_int_equal(proto_msg_validate(&bad[i], &err), -EBADMSG);
		assert_true(err.msg[0] != '\0');
		assert_int_equal(proto_msg_encode(&bad[i], buf + 2048, 2048, &len), -EINVAL);
	}
}

/*
 * The holder: renews from three quarters of the lifetime on, keeps the
 * ticket it has until the new one arrives (no gap for I/O), and never
 * swaps a good ticket for a grant that does not open or has expired.
 */
static void test_holder(void **state)
{
	static uint8_t g1[PROTO_AUTH_GRANT_MAX], g2[PROTO_AUTH_GRANT_MAX];
	struct auth_ticket_holder h = {0};
	struct auth_key sess, other;
	struct auth_ticket seen;
	struct proto_err err;
	struct mon_auth db;
	uint8_t first[sizeof(h.ticket)];
	char why[256];
	size_t l1, l2;
	uint64_t t;

	(void)state;
	mon_auth_init(&db);
	db_add(&db, "client.vol", "profile client", "allow rw pool=rbd");
	rotate(&db.svc, T0);
	rotate(&db.svc, T0);
	assert_int_equal(auth_key_generate(&sess), 0);
	assert_int_equal(auth_key_generate(&other), 0);
	assert_true(auth_ticket_holder_renew_due(&h, T0));
	assert_false(auth_ticket_holder_valid(&h, T0));
	assert_int_equal(mon_ticket_build(&db, "client.vol", &sess, T0, TTL, g1, sizeof(g1), &l1,
					  why, sizeof(why)),
			 0);
	/* under another session: refused, nothing taken */
	assert_int_equal(auth_ticket_holder_take(&h, &other, g1, l1, T0, &err), -EBADMSG);
	assert_false(h.have);
	assert_int_equal(auth_ticket_holder_take(&h, &sess, g1, l1, T0, &err), 0);
	assert_true(auth_ticket_holder_valid(&h, T0));
	assert_false(auth_ticket_holder_renew_due(&h, T0 + TTL / 4 * 3 - 1));
	assert_true(auth_ticket_holder_renew_due(&h, T0 + TTL / 4 * 3));
	memcpy(first, h.ticket, h.ticket_len);
	/* renewal is due, but until the answer comes, the ticket in hand still works */
	for (t = T0 + TTL / 4 * 3; t < T0 + TTL; t += TTL / 16) {
		assert_true(auth_ticket_holder_valid(&h, t));
		assert_int_equal(
		    auth_ticket_unseal(&db.svc, h.ticket, h.ticket_len, t, &err, &seen), 0);
		auth_key_wipe(&seen.session);
	}
	/* a stale grant (expired by the time it arrived) never replaces it */
	assert_int_equal(auth_ticket_holder_take(&h, &sess, g1, l1, T0 + TTL, &err), -EBADMSG);
	assert_non_null(strstr(err.msg, "expired"));
	assert_memory_equal(h.ticket, first, h.ticket_len);
	/* the renewal arrives: a new ticket and key, due again at 3/4 of its own life */
	t = T0 + TTL / 4 * 3 + S;
	assert_int_equal(mon_ticket_build(&db, "client.vol", &sess, t, TTL, g2, sizeof(g2), &l2,
					  why, sizeof(why)),
			 0);
	assert_int_equal(auth_ticket_holder_take(&h, &sess, g2, l2, t, &err), 0);
	assert_true(memcmp(h.ticket, first, h.ticket_len) != 0);
	assert_false(auth_ticket_holder_renew_due(&h, t + TTL / 2));
	assert_true(auth_ticket_holder_valid(&h, T0 + TTL + S));
	assert_int_equal(
	    auth_ticket_unseal(&db.svc, h.ticket, h.ticket_len, T0 + TTL + S, &err, &seen), 0);
	assert_true(auth_key_equal(&seen.session, &h.key));
	auth_key_wipe(&seen.session);
	assert_false(auth_ticket_holder_valid(&h, t + TTL));
	auth_ticket_holder_clear(&h);
	assert_false(h.have);
	mon_auth_free(&db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_advance),	cmocka_unit_test(test_schedule),
	    cmocka_unit_test(test_grace),	cmocka_unit_test(test_expiry),
	    cmocka_unit_test(test_pending),	cmocka_unit_test(test_keys_codec),
	    cmocka_unit_test(test_op_replicas), cmocka_unit_test(test_db_versions),
	    cmocka_unit_test(test_ticket_path), cmocka_unit_test(test_ticket_refusals),
	    cmocka_unit_test(test_messages),	cmocka_unit_test(test_holder),
	};

	srand(17);
	weft_log_mute(true);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
