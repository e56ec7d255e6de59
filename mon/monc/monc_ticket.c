/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the mon client keeps for the OSDs' connections (docs/security.md,
 * "Tickets"): a ticket to present to OSDs (every authenticated client and
 * OSD), and the service keys that open the tickets others present (OSDs).
 *
 * Both are asked of whichever monitor we talk to, over its authenticated
 * session; what comes back is sealed under that session's seal key, so
 * the reply is opened with the key of the connection it arrived on (the
 * reply callback runs while that connection is current). A request that
 * fails is asked again later; a ticket in hand stays in use until its
 * successor arrives, so renewal never interrupts I/O.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "auth/session.h"
#include "auth/ticket.h"
#include "common/clock.h"
#include "common/log.h"
#include "mon/monc/monc_priv.h"

#define MONC_TICKET_TIMEOUT_MS 10000
#define MONC_TICKET_RETRY_MS   1000  /* after a failed request */
#define MONC_KEYS_EVERY_MAX_MS 60000 /* service keys: at most this apart */
#define MONC_KEYS_PROMPT_MS    1000  /* an unknown key id asks again at most this often */
/*
 * The ticket's renewal time is on the wall clock (the holder counts its
 * lifetime there), which can step: monc_ticket_next_ms converts it to the
 * monotonic clock but looks again at least this often, so a step forward
 * delays the renewal by at most this much.
 */
#define MONC_TICKET_WALL_RECHECK_MS 1000

struct monc_tickets {
	struct monc *mc;
	bool want_ticket, want_keys;
	struct auth_ticket_holder holder;
	bool ticket_asking;
	uint64_t ticket_next_ms;
	int ticket_last_rc; /* the last failure logged, so a repeat is not */
	struct auth_svc_keys keys;
	bool have_keys, keys_asking;
	uint64_t keys_next_ms, keys_every_ms, keys_prompt_ms;
	int keys_last_rc;
};

static uint64_t monc_ticket_wall_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Log a failure once per distinct status, at warning level (an operator must fix it). */
static void monc_ticket_log_fail(struct monc *mc, int *last, int rc, const char *what,
				 const char *msg)
{
	if (*last == rc)
		return;
	*last = rc;
	log_warn("monc", "%s: cannot get %s from the monitors: %s%s%s", monc_name(mc), what,
		 strerror(-rc), msg && msg[0] ? ": " : "", msg ? msg : "");
}

static void monc_ticket_reply_cb(struct monc *mc, int status, const char *out, size_t out_len,
				 const char *msg, void *arg)
{
	struct monc_tickets *t = arg;
	struct auth_key session;
	struct proto_err err = {0};
	int rc = status;

	t->ticket_asking = false;
	if (rc == 0 && (out == NULL || out_len == 0))
		rc = -EBADMSG;
	if (rc == 0)
		rc = monc_seal_key(mc, &session);
	if (rc == 0) {
		bool first = !t->holder.have;

		rc = auth_ticket_holder_take(&t->holder, &session, out, out_len,
					     monc_ticket_wall_us(), &err);
		auth_key_wipe(&session);
		msg = err.msg;
		if (rc == 0) {
			t->ticket_last_rc = 0;
			weft_log(first ? WEFT_LOG_INFO : WEFT_LOG_DEBUG, "monc",
				 "%s: %s ticket for the OSDs, valid %llu s", monc_name(mc),
				 first ? "got a" : "renewed its",
				 (unsigned long long)((t->holder.expires_us - t->holder.got_us) /
						      1000000));
			return;
		}
	}
	if (rc == -ECANCELED)
		return; /* monc_destroy */
	monc_ticket_log_fail(mc, &t->ticket_last_rc, rc, "a ticket", msg);
	t->ticket_next_ms = clock_now_ms() + MONC_TICKET_RETRY_MS;
}

static uint32_t monc_ticket_keys_newest(const struct monc_tickets *t)
{
	return t->have_keys && t->keys.count > 0 ? t->keys.keys[t->keys.count - 1].id : 0;
}

static void monc_ticket_keys_cb(struct monc *mc, int status, const char *out, size_t out_len,
				const char *msg, void *arg)
{
	struct monc_tickets *t = arg;
	struct auth_svc_keys fresh;
	struct auth_key session;
	struct proto_err err = {0};
	int rc = status;

	t->keys_asking = false;
	if (rc == 0 && (out == NULL || out_len == 0)) {
		/* we hold the newest already */
		t->keys_next_ms = clock_now_ms() + t->keys_every_ms;
		return;
	}
	if (rc == 0)
		rc = monc_seal_key(mc, &session);
	if (rc == 0) {
		rc = auth_svc_keys_open(&session, out, out_len, &err, &fresh);
		auth_key_wipe(&session);
		msg = err.msg;
		if (rc == 0) {
			bool first = !t->have_keys;

			auth_svc_keys_clear(&t->keys);
			t->keys = fresh;
			t->have_keys = true;
			t->keys_last_rc = 0;
			t->keys_next_ms = clock_now_ms() + t->keys_every_ms;
			weft_log(first ? WEFT_LOG_INFO : WEFT_LOG_DEBUG, "monc",
				 "%s: service keys up to id %u", monc_name(mc),
				 monc_ticket_keys_newest(t));
			OPENSSL_cleanse(&fresh, sizeof(fresh));
			return;
		}
	}
	if (rc == -ECANCELED)
		return;
	monc_ticket_log_fail(mc, &t->keys_last_rc, rc, "the service keys", msg);
	t->keys_next_ms = clock_now_ms() + MONC_TICKET_RETRY_MS;
}

void monc_ticket_tick(struct monc_tickets *t)
{
	uint64_t now = clock_now_ms();
	struct proto_msg m;

	if (!monc_connected(t->mc))
		return;
	if (t->want_ticket && !t->ticket_asking && now >= t->ticket_next_ms &&
	    auth_ticket_holder_renew_due(&t->holder, monc_ticket_wall_us())) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_AUTH_TICKET;
		m.auth_ticket.service = PROTO_AUTH_SVC_OSD;
		if (monc_request(t->mc, &m, MONC_TICKET_TIMEOUT_MS, monc_ticket_reply_cb, t) == 0)
			t->ticket_asking = true;
		else /* out of memory: later, not on every wake-up */
			t->ticket_next_ms = now + MONC_TICKET_RETRY_MS;
	}
	if (t->want_keys && !t->keys_asking && now >= t->keys_next_ms) {
		memset(&m, 0, sizeof(m));
		m.type = PROTO_AUTH_SVC_KEYS;
		m.auth_svc_keys.have_id = monc_ticket_keys_newest(t);
		if (monc_request(t->mc, &m, MONC_TICKET_TIMEOUT_MS, monc_ticket_keys_cb, t) == 0)
			t->keys_asking = true;
		else
			t->keys_next_ms = now + MONC_TICKET_RETRY_MS;
	}
}

/*
 * When monc_ticket_tick next has something to ask (UINT64_MAX: nothing).
 * A request in flight has its own deadline in monc's list; without a
 * connection nothing is asked, and the connection's arrival tells the
 * owner (monc_connect_cb).
 */
uint64_t monc_ticket_next_ms(const struct monc_tickets *t, uint64_t now_ms)
{
	uint64_t at = UINT64_MAX;

	if (!monc_connected(t->mc))
		return UINT64_MAX;
	if (t->want_ticket && !t->ticket_asking) {
		uint64_t wall = monc_ticket_wall_us(), renew_ms = now_ms;

		if (t->holder.have && wall < t->holder.renew_us)
			renew_ms = now_ms + (t->holder.renew_us - wall + 999) / 1000;
		if (renew_ms > now_ms + MONC_TICKET_WALL_RECHECK_MS)
			renew_ms = now_ms + MONC_TICKET_WALL_RECHECK_MS;
		at = renew_ms > t->ticket_next_ms ? renew_ms : t->ticket_next_ms;
	}
	if (t->want_keys && !t->keys_asking && t->keys_next_ms < at)
		at = t->keys_next_ms;
	return at;
}

int monc_ticket_want(struct monc *mc, const struct conf *conf, bool ticket, bool svc_keys)
{
	struct monc_tickets *t = monc_tickets_of(mc);
	uint64_t ttl_ms = conf_get_duration_us(conf, CONF_AUTH_SERVICE_TICKET_TTL) / 1000;

	if (t == NULL) {
		t = calloc(1, sizeof(*t));
		if (t == NULL)
			return -ENOMEM;
		t->mc = mc;
		monc_tickets_set(mc, t);
	}
	t->want_ticket |= ticket;
	t->want_keys |= svc_keys;
	/* a key is pending a whole rotation (half a lifetime) before it seals: a quarter is ample */
	t->keys_every_ms = ttl_ms / 4 < MONC_KEYS_EVERY_MAX_MS ? ttl_ms / 4 : MONC_KEYS_EVERY_MAX_MS;
	if (t->keys_every_ms == 0)
		t->keys_every_ms = 1;
	monc_ticket_tick(t);
	return 0;
}

void monc_ticket_free(struct monc_tickets *t)
{
	if (t == NULL)
		return;
	auth_ticket_holder_clear(&t->holder);
	auth_svc_keys_clear(&t->keys);
	OPENSSL_cleanse(t, sizeof(*t));
	free(t);
}

bool monc_ticket_ready(const struct monc *mc)
{
	const struct monc_tickets *t = monc_tickets_of((struct monc *)mc);

	if (t == NULL)
		return true;
	return (!t->want_ticket || auth_ticket_holder_valid(&t->holder, monc_ticket_wall_us())) &&
	       (!t->want_keys || t->have_keys);
}

int monc_ticket_error(const struct monc *mc)
{
	const struct monc_tickets *t = monc_tickets_of((struct monc *)mc);

	if (t == NULL || (t->ticket_last_rc != -EACCES && t->ticket_last_rc != -ENOENT))
		return 0;
	return t->ticket_last_rc;
}

int monc_ticket_get(void *arg, const uint8_t **sealed, uint32_t *len, struct auth_key *key_out)
{
	struct monc_tickets *t = monc_tickets_of(arg);

	if (t == NULL || !auth_ticket_holder_valid(&t->holder, monc_ticket_wall_us()))
		return -EAGAIN;
	*sealed = t->holder.ticket;
	*len = t->holder.ticket_len;
	*key_out = t->holder.key;
	return 0;
}

int monc_ticket_open(void *arg, const void *sealed, size_t len, const char *claimed,
		     struct auth_sess_keys *keys_out, uint64_t *expires_us, char *why,
		     size_t whycap)
{
	struct monc_tickets *t = monc_tickets_of(arg);
	uint64_t now = clock_now_ms();
	int rc;

	if (t == NULL || !t->have_keys) {
		snprintf(why, whycap, "no service keys from the monitors yet");
		return -EAGAIN;
	}
	rc = auth_ticket_accept(&t->keys, sealed, len, claimed, monc_ticket_wall_us(), keys_out,
				expires_us, why, whycap);
	if (rc == -ENOKEY) {
		/* sealed under a key we have not fetched: ask now, the peer waits a little */
		if (!t->keys_asking && now >= t->keys_prompt_ms + MONC_KEYS_PROMPT_MS) {
			t->keys_prompt_ms = now;
			t->keys_next_ms = 0;
			monc_ticket_tick(t);
		}
		return -EAGAIN;
	}
	return rc;
}
