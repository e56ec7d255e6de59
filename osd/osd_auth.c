/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Authentication of the OSD's own connections (docs/security.md, "The
 * OSDs' connections"): who may talk to this OSD, and with what rights.
 *
 * - Public network: a client presents the ticket a monitor granted it
 *   (method TICKET); the OSD opens it with the service keys its mon client
 *   fetched and learns the entity and its caps without holding the
 *   client's key. Each op is then checked against those caps (osd_auth_op).
 *   A session ends when its ticket expires; the client reconnects with the
 *   ticket it renewed at three quarters of the lifetime.
 * - Cluster network: every peer is an OSD presenting its own ticket, and
 *   must hold osd 'profile osd' (or 'allow *': the X bit) to send cluster
 *   messages or write into our memory. These sessions do not end with the
 *   ticket (a closed replication connection would look like a failure).
 * - Connections we open to other OSDs present our ticket as osd.N.
 *
 * The callbacks find the mon client through the OSD at call time: the
 * listeners exist before the mon client does.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "auth/caps.h"
#include "auth/key.h"
#include "auth/handshake.h"
#include "auth/policy.h"
#include "common/log.h"
#include "osd/osd.h"

static int osd_auth_ticket_get(void *arg, const uint8_t **sealed, uint32_t *len,
			       struct auth_key *key_out)
{
	struct osd *osd = arg;

	if (osd->monc == NULL)
		return -EAGAIN;
	return monc_ticket_get(osd->monc, sealed, len, key_out);
}

static int osd_auth_ticket_open(void *arg, const void *sealed, size_t len, const char *claimed,
				struct auth_sess_keys *keys_out, uint64_t *expires_us, char *why,
				size_t whycap)
{
	struct osd *osd = arg;

	if (osd->monc == NULL) {
		snprintf(why, whycap, "no service keys from the monitors yet");
		return -EAGAIN;
	}
	return monc_ticket_open(osd->monc, sealed, len, claimed, keys_out, expires_us, why,
				whycap);
}

int osd_auth_start(struct osd *osd)
{
	struct auth_policy pol;
	struct msgr_auth a;
	char entity[AUTH_ENTITY_MAX];
	const char *fsid = conf_get_str(osd->conf, CONF_FSID);
	int rc;

	auth_policy_from_conf(osd->conf, &pol);
	osd->auth_tickets = pol.cluster; /* the OSD proves itself to the mons: it can fetch keys */
	if (!osd->auth_tickets) {
		/* no session with the monitors, so no service keys: nothing to check tickets with */
		if (pol.service)
			log_warn("osd",
				 "%s: auth_cluster_required = none: this OSD cannot check tickets, "
				 "so it serves clients without authenticating them",
				 osd->name);
		return 0;
	}
	/* public network: clients with tickets; a daemon there is an OSD of ours */
	memset(&a, 0, sizeof(a));
	a.self = AUTH_OSD_SERVICE;
	a.ticket_open = osd_auth_ticket_open;
	a.ticket_open_arg = osd;
	a.ticket_expire = true;
	a.require_clients = pol.service;
	a.require_daemons = pol.cluster;
	a.fsid = fsid;
	rc = msgr_auth_add(osd->msgr, &a, &osd->auth_pub);
	if (rc != 0)
		goto err;
	/* cluster network: OSDs only, sessions that outlive the ticket */
	a.ticket_expire = false;
	a.require_clients = true;
	rc = msgr_auth_add(osd->msgr, &a, &osd->auth_clu);
	if (rc != 0)
		goto err;
	/* the connections we open: our own ticket, to whoever holds the service keys */
	memset(&a, 0, sizeof(a));
	snprintf(entity, sizeof(entity), "osd.%u", osd->id);
	a.entity = entity;
	a.server = AUTH_OSD_SERVICE;
	a.ticket = osd_auth_ticket_get;
	a.ticket_arg = osd;
	a.fsid = fsid;
	rc = msgr_auth_add(osd->msgr, &a, &osd->auth_peer);
	if (rc != 0)
		goto err;
	return 0;
err:
	log_error("osd", "%s: cannot set up authentication: %s", osd->name, weft_strerror(rc));
	return rc;
}

int osd_auth_want(struct osd *osd)
{
	if (!osd->auth_tickets)
		return 0;
	return monc_ticket_want(osd->monc, osd->conf, true, true);
}

bool osd_auth_ready(struct osd *osd)
{
	return !osd->auth_tickets || monc_ticket_ready(osd->monc);
}

/* The peer's caps, or NULL when it did not authenticate (a `none` option let it in). */
static const struct auth_caps *osd_auth_caps(const struct osd_conn *conn)
{
	return msgr_conn_caps(conn->mc);
}

int osd_auth_op(struct osd_conn *conn, const char *pool, bool write)
{
	const struct auth_caps *caps = osd_auth_caps(conn);
	const char *who;

	if (caps == NULL || auth_caps_allow(caps, AUTH_SVC_OSD, pool,
					    write ? AUTH_PERM_W : AUTH_PERM_R))
		return 0;
	who = msgr_conn_entity(conn->mc);
	conn->osd->auth_denied++;
	/* once per connection: a client retrying the same refused op must not flood the log */
	if (!conn->auth_logged) {
		conn->auth_logged = true;
		log_warn("osd", "%s: %s at %s may not %s pool %s: refused", conn->osd->name,
			 who ? who : "?", osd_conn_peer(conn), write ? "write to" : "read from",
			 pool ? pool : "?");
	}
	return -EACCES;
}

int osd_auth_cluster(struct osd_conn *conn, const char *what)
{
	const struct auth_caps *caps = osd_auth_caps(conn);
	const char *who;

	/* connections we opened: the server proved it holds the service keys (an OSD) */
	if (conn->auth_ok || caps == NULL || conn->kind != OSD_CONN_REPLICA)
		return 0;
	who = msgr_conn_entity(conn->mc);
	if (who != NULL && strncmp(who, "osd.", 4) == 0 &&
	    auth_caps_allow(caps, AUTH_SVC_OSD, NULL, AUTH_PERM_X)) {
		conn->auth_ok = true; /* caps of a ticket do not change: once per connection */
		return 0;
	}
	conn->osd->auth_denied++;
	log_warn("osd", "%s: %s at %s sent %s on the cluster network without osd 'profile osd': "
		 "closing",
		 conn->osd->name, who ? who : "?", osd_conn_peer(conn), what);
	return -EACCES;
}
