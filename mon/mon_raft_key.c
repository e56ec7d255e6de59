/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the authenticated Raft port (mon_raft_auth.h) proves and binds: the
 * monitors' shared mon. key and the cluster fsid.
 *
 * The key comes from mon_data/keyring, the monitor's own copy that --mkfs
 * writes (bootstrap: with client.admin, for the first leader's seed;
 * --join: mon. and client.admin from the conf's keyring, by
 * mon_auth_join_keyring), else from the conf's keyring: the same mon. the
 * messenger's handshakes prove (mon_auth_svc_setup). It is read before raft
 * starts, so it cannot come from the replicated auth database: a monitor
 * must prove the key to receive the log that holds it. The Raft port
 * authenticates whatever auth_cluster_required says: it has no
 * unauthenticated mode.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "auth/keyring.h"
#include "common/log.h"
#include "mon/mon_priv.h"

int mon_fsid_get(struct mon *mon, uint8_t fsid_out[AUTH_FSID_LEN])
{
	const char *text = conf_get_str(mon->conf, CONF_FSID);
	uint8_t fsid[PROTO_UUID_LEN];

	_Static_assert(PROTO_UUID_LEN == AUTH_FSID_LEN, "an fsid is a UUID");
	if (text == NULL || text[0] == '\0') {
		log_warn("mon",
			 "%s: no fsid in the conf: the Raft port's handshakes bind an all-zero "
			 "fsid (set fsid to the output of uuidgen, the same on every daemon)",
			 mon->name);
		memset(fsid_out, 0, AUTH_FSID_LEN);
		return 0;
	}
	if (mon_uuid_parse(text, fsid) != 0) {
		log_error("mon", "%s: fsid '%s' is not a UUID", mon->name, text);
		return -EINVAL;
	}
	memcpy(fsid_out, fsid, AUTH_FSID_LEN);
	return 0;
}

/* mon. from the keyring at path: 0, -ENOENT (no file or no mon.), or the load error (logged). */
static int mon_raft_key_from(struct mon *mon, const char *path, struct auth_key *key_out)
{
	const struct auth_keyring_entry *e;
	struct auth_keyring kr;
	char err[512];
	int rc;

	if (path == NULL || path[0] == '\0' || access(path, F_OK) != 0)
		return -ENOENT;
	auth_keyring_init(&kr);
	rc = auth_keyring_load(&kr, path, err, sizeof(err));
	if (rc != 0) {
		log_error("mon", "%s: %s", mon->name, err);
		auth_keyring_free(&kr);
		return rc;
	}
	e = auth_keyring_find(&kr, "mon.");
	if (e != NULL)
		*key_out = e->key;
	auth_keyring_free(&kr);
	return e != NULL ? 0 : -ENOENT;
}

int mon_raft_key_load(struct mon *mon, struct auth_key *key_out)
{
	const char *conf_kr = auth_keyring_path(mon->conf);
	char own[PATH_MAX + 16];
	int rc;

	snprintf(own, sizeof(own), "%s/keyring", mon->data_dir);
	rc = mon_raft_key_from(mon, own, key_out);
	if (rc == -ENOENT)
		rc = mon_raft_key_from(mon, conf_kr, key_out);
	if (rc == -ENOENT)
		log_error("mon",
			  "%s: no mon. key in %s nor in %s: the Raft port proves it to the "
			  "other monitors (copy mon_data/keyring from a running monitor; "
			  "docs/security.md)",
			  mon->name, own, conf_kr != NULL ? conf_kr : "(keyring)");
	return rc;
}
