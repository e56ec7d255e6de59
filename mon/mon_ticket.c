/* SPDX-License-Identifier: Apache-2.0 */
/*
 * AUTH_TICKET and AUTH_SVC_KEYS (docs/security.md, "Tickets"): any monitor
 * answers from its applied state (the service keys are replicated; a
 * follower a rotation behind seals with a key the OSDs hold as well).
 *
 * Both need who the peer proved to be and a key of the session its
 * handshake opened: mon_ticket_peer() is the one place that asks the
 * messenger (msgr_conn_entity, msgr_conn_seal_key). A connection let in
 * without a key (auth_*_required = none) has no session, and both
 * requests are refused with -EACCES "this connection is not authenticated".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/crypto.h>

#include "common/log.h"
#include "mon/mon_priv.h"

/*
 * The peer's authenticated entity and the key its session seals with: 0,
 * or -ENOTCONN when the connection did not authenticate. The join point
 * with the messenger's sessions. Accepted sessions only (they have caps):
 * on a connection this monitor opened, the entity is the server's.
 */
static int mon_ticket_peer(struct msgr_conn *conn, char entity[AUTH_ENTITY_MAX],
			   struct auth_key *session_out)
{
	const char *ent = msgr_conn_entity(conn);
	int rc;

	if (ent == NULL || msgr_conn_caps(conn) == NULL)
		return -ENOTCONN;
	rc = msgr_conn_seal_key(conn, session_out);
	if (rc == 0)
		snprintf(entity, AUTH_ENTITY_MAX, "%s", ent);
	return rc;
}

static uint64_t mon_ticket_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void mon_ticket_reply(struct msgr_conn *conn, uint16_t type, uint64_t tid, int status,
			     const void *blob, size_t len, const char *why)
{
	struct proto_msg m = {.type = type};

	m.auth_ticket_reply.status = status;
	m.auth_ticket_reply.blob = status == 0 ? blob : NULL;
	m.auth_ticket_reply.blob_len = status == 0 ? (uint32_t)len : 0;
	if (status != 0) {
		snprintf(m.auth_ticket_reply.msg, sizeof(m.auth_ticket_reply.msg), "%s", why);
		m.auth_ticket_reply.msg_len = strlen(m.auth_ticket_reply.msg);
	}
	msgr_send(conn, &m, tid);
}

void mon_ticket_handle(struct mon *mon, struct msgr_conn *conn, const struct proto_hdr *hdr,
		       const struct proto_msg *msg)
{
	uint8_t out[PROTO_AUTH_GRANT_MAX];
	uint16_t reply =
	    msg->type == PROTO_AUTH_TICKET ? PROTO_AUTH_TICKET_REPLY : PROTO_AUTH_SVC_KEYS_REPLY;
	char entity[AUTH_ENTITY_MAX] = "", why[PROTO_ERRMSG_MAX + 1] = "";
	struct auth_key session;
	size_t len = 0;
	int rc;

	rc = mon_ticket_peer(conn, entity, &session);
	if (rc != 0) {
		snprintf(why, sizeof(why), "this connection is not authenticated: no %s",
			 msg->type == PROTO_AUTH_TICKET ? "ticket" : "service keys");
		mon_ticket_reply(conn, reply, hdr->tid, -EACCES, NULL, 0, why);
		return;
	}
	if (msg->type == PROTO_AUTH_TICKET)
		rc = mon_ticket_build(&mon->auth, entity, &session, mon_ticket_now_us(),
				      mon_auth_svc_ttl_us(mon), out, sizeof(out), &len, why,
				      sizeof(why));
	else
		rc = mon_svc_keys_build(&mon->auth, entity, &session, msg->auth_svc_keys.have_id,
					out, sizeof(out), &len, why, sizeof(why));
	auth_key_wipe(&session);
	if (rc != 0 && rc != -EAGAIN)
		log_info("mon", "%s: %s from %s (%s) refused: %s", mon->name,
			 proto_type_name(msg->type), entity, msgr_conn_peer(conn), why);
	mon_ticket_reply(conn, reply, hdr->tid, rc, out, len, why);
	OPENSSL_cleanse(out, sizeof(out));
}
