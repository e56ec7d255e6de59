/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The service keys in the monitor (mon_auth.h, mon_auth_svc.c): the
 * leader's rotation job and its Raft entry, the FSM's application, and
 * `auth service-keys` (ids, states and times, a fingerprint: never a key).
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "common/clock.h"
#include "common/log.h"
#include "mon/mon_priv.h"

#define MON_SVC_CHECK_MS 500

static uint64_t mon_svc_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

uint64_t mon_auth_svc_ttl_us(struct mon *mon)
{
	return conf_get_duration_us(mon->conf, CONF_AUTH_SERVICE_TICKET_TTL);
}

/* ------------------------------------------------------------ raft entry */

int mon_auth_svc_fsm_apply(struct mon *mon, const uint8_t *p, size_t len)
{
	const struct auth_svc_key *cur;
	struct mon_svc_op op;
	struct proto_err err;
	size_t plen;
	int rc;

	plen = len >= 8 ? (size_t)p[4] | (size_t)p[5] << 8 | (size_t)p[6] << 16 | (size_t)p[7] << 24
			: SIZE_MAX;
	if (plen > len - 8) {
		log_error("mon", "%s: refusing a service-key log entry of %zu bytes: bad length",
			  mon->name, len);
		return -EBADMSG;
	}
	rc = mon_svc_op_decode(p + 8, plen, &err, &op);
	if (rc != 0) {
		log_error("mon", "%s: refusing undecodable service-key log entry: %s", mon->name,
			  err.msg);
		return rc;
	}
	rc = mon_svc_apply(&mon->auth, &op);
	auth_key_wipe(&op.key);
	if (rc != 0) {
		/* the same on every replica: a second rotation built against an older set */
		log_info("mon", "%s: service key %u skipped: the next id is %u", mon->name,
			 op.new_id, auth_svc_next_id(&mon->auth.svc));
		return rc;
	}
	cur = auth_svc_current(&mon->auth.svc);
	log_info("mon",
		 "%s: service keys rotated: key %u current, key %u pending, %u held "
		 "(retired keys open tickets for %llu s)",
		 mon->name, cur != NULL ? cur->id : 0, op.new_id, mon->auth.svc.count,
		 (unsigned long long)(op.grace_us / 1000000));
	return 0;
}

/* Build: a rotation against the set as it is now (nothing when it is not due any more). */
static int mon_auth_svc_entry(struct mon *mon, struct mon_job *job, struct raft_buffer *rb)
{
	uint64_t ttl = mon_auth_svc_ttl_us(mon), now = mon_svc_now_us();
	struct mon_svc_op op = {.kind = MON_SVC_OP_ROTATE};
	void *buf = NULL;
	size_t len = 0;
	int rc;

	if (!mon_svc_rotate_due(&mon->auth.svc, now, ttl))
		return 1;
	op.new_id = auth_svc_next_id(&mon->auth.svc);
	op.stamp_us = now;
	op.grace_us = mon_svc_grace(ttl);
	rc = auth_key_generate(&op.key);
	if (rc == 0)
		rc = mon_svc_op_encode(&op, &buf, &len);
	auth_key_wipe(&op.key);
	if (rc != 0)
		return rc;
	/* [tag][u32 len][op][zero padding to 8] (raft's batches want 8-byte multiples) */
	rb->len = (8 + len + 7) & ~(size_t)7;
	rb->base = raft_calloc(1, rb->len);
	if (rb->base == NULL) {
		rc = -ENOMEM;
	} else {
		uint8_t *p = rb->base;

		for (int i = 0; i < 4; i++) {
			p[i] = (uint8_t)(MON_ENTRY_TAG_SVC >> (8 * i));
			p[4 + i] = (uint8_t)(len >> (8 * i));
		}
		memcpy(p + 8, buf, len);
	}
	OPENSSL_cleanse(buf, len);
	free(buf);
	return rc;
}

static bool mon_auth_svc_queued(struct mon *mon)
{
	if (mon->inflight != NULL && mon->inflight->build_entry == mon_auth_svc_entry)
		return true;
	for (struct mon_job *j = mon->q_head; j != NULL; j = j->next)
		if (j->build_entry == mon_auth_svc_entry)
			return true;
	return false;
}

/* Leader, ready: rotate when due (two rotations make the first current and pending keys). */
void mon_auth_svc_tick(struct mon *mon)
{
	struct mon_job *job;
	uint64_t now = clock_now_ms();

	if (now < mon->svc_check_ms)
		return;
	mon->svc_check_ms = now + MON_SVC_CHECK_MS;
	if (!mon_svc_rotate_due(&mon->auth.svc, mon_svc_now_us(), mon_auth_svc_ttl_us(mon)) ||
	    mon_auth_svc_queued(mon))
		return;
	job = mon_job_alloc(NULL, 0, NULL);
	if (job == NULL)
		return;
	job->build_entry = mon_auth_svc_entry;
	mon_job_submit(mon, job);
}

/* ---------------------------------------------------------------- output */

static json_t *mon_auth_svc_time(uint64_t us)
{
	return us != 0 ? json_integer((json_int_t)(us / 1000000)) : json_null();
}

json_t *mon_auth_svc_json(struct mon *mon)
{
	static const char *const states[] = {"pending", "current", "retired"};
	const struct auth_svc_keys *sk = &mon->auth.svc;
	uint64_t ttl = mon_auth_svc_ttl_us(mon);
	json_t *keys = json_array();

	for (unsigned int i = 0; i < sk->count; i++) {
		const struct auth_svc_key *k = &sk->keys[i];
		char fp[17] = "";
		json_t *o;

		auth_svc_key_fingerprint(k, fp);
		o = json_pack("{s:i, s:s, s:s, s:o, s:o, s:o}", "id", (json_int_t)k->id, "state",
			      states[k->state <= AUTH_SVC_RETIRED ? k->state : 0], "fingerprint",
			      fp, "created", mon_auth_svc_time(k->created_us), "activated",
			      mon_auth_svc_time(k->activated_us), "retired",
			      mon_auth_svc_time(k->retired_us));
		if (k->state == AUTH_SVC_RETIRED)
			json_object_set_new(o, "opens_tickets_until",
					    mon_auth_svc_time(k->retired_us + sk->grace_us));
		json_array_append_new(keys, o);
	}
	return json_pack("{s:I, s:I, s:I, s:o}", "ticket_ttl_sec", (json_int_t)(ttl / 1000000),
			 "rotate_every_sec", (json_int_t)(mon_svc_rotate_every(ttl) / 1000000),
			 "grace_sec", (json_int_t)(sk->grace_us / 1000000), "keys", keys);
}
