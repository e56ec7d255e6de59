/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Who must authenticate, from the three options of ceph.conf
 * (auth_cluster_required, auth_service_required, auth_client_required =
 * weft | none; default weft).
 *
 *   cluster  daemons among themselves: an OSD or a monitor connecting to a
 *            monitor authenticates; a monitor requires it of a peer whose
 *            hello says it is a daemon
 *   service  a daemon requires it of a peer whose hello says client
 *   client   a client (weft, libweft, weft-mount, ...) authenticates to the
 *            monitors and requires them to prove their side
 *
 * A peer that does not authenticate where `none` lets it in is served
 * with every right, as before authentication existed: `none` opens the
 * door it names to anyone who can reach the port, so each `none` logs a
 * warning when a process starts and shows in `weft health` (AUTH_INSECURE).
 */
#ifndef WEFT_AUTH_POLICY_H
#define WEFT_AUTH_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conf;

struct auth_policy {
	bool cluster; /* auth_cluster_required = weft */
	bool service; /* auth_service_required = weft */
	bool client;  /* auth_client_required = weft */
};

void auth_policy_from_conf(const struct conf *conf, struct auth_policy *p_out);
/* Must a connection we open authenticate? Daemons follow cluster, clients client. */
bool auth_policy_connect(const struct auth_policy *p, bool local_is_daemon);
/* Must a peer of ours authenticate? By the type its hello claims: daemon (cluster) or client
 * (service). */
bool auth_policy_accept(const struct auth_policy *p, bool peer_is_daemon);
/*
 * Log one warning for each `none` that applies to who (CONF_WHO_MON, _OSD,
 * _CLIENT) in the name of entity name. Returns how many were logged.
 */
int auth_policy_warn(const struct auth_policy *p, const char *name, unsigned int who);
/*
 * The conf's fsid ("8d5a4c1e-3b7f-4e2a-9c61-0e4f2a7b9d30", or 32 hex
 * digits) as the 16 bytes the handshake binds; NULL or "" gives zeros (no
 * fsid set: clusters are then told apart by their keys alone). 0 or -EINVAL.
 */
int auth_fsid_parse(const char *text, uint8_t out[16]);
/* The names of the `none` options that apply to who, "a, b" into buf ("" when none). */
void auth_policy_insecure(const struct auth_policy *p, unsigned int who, char *buf, size_t cap);

#endif
