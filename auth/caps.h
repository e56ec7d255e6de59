/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Capabilities: what an authenticated entity may do, per service, written
 * as in Ceph: mon 'allow r', osd 'allow rw pool=rbd', 'profile osd'.
 *
 * A cap string is one or more grants separated by ',' or ';':
 *   allow r | w | rw | *  [pool=NAME]     (pool= on osd caps only)
 *   profile osd | client | mount [pool=NAME] (pool= for client and mount)
 *   profile bootstrap-osd                   (mon caps only)
 *
 * What the permission bits mean:
 *   mon  R  read the maps and status, subscribe
 *        W  daemon reports: boot, beacons, failure reports, PG stats (the
 *           monitor also checks that osd.N speaks only for N; no client may)
 *        X  change the cluster map, run auth commands ('allow *' only)
 *        mon 'profile client' and 'profile mount' also let a client fence
 *        another with `osd blocklist add` (exclusive locks need it)
 *   osd  R  read objects       W  write and remove objects
 *        X  cluster-network traffic (replication, peering, recovery)
 * Profiles expand to bits: mon 'profile osd' = R|W (the caller also checks
 * that osd.N only speaks for N); mon 'profile client'/'profile mount' = R;
 * osd 'profile osd' = R|W|X on every pool; osd 'profile client' and
 * 'profile mount' = R|W (on the pool given, or every pool). client and
 * mount grant the same bits today: they are separate names so that what a
 * FUSE mount needs can narrow later without rewriting keyrings.
 *
 * mon 'profile bootstrap-osd' = R, and the monitors let it run exactly
 * what `weft osd create --bootstrap` needs on a new OSD host: `auth
 * get-or-create osd.N mon 'profile osd' osd 'profile osd'` and `auth get
 * osd.N` (mon_auth_cmd.c), nothing else that needs X (Ceph's
 * client.bootstrap-osd).
 *
 * Grants add up: "allow r, allow rw pool=a" is rw on pool a, r elsewhere.
 */
#ifndef WEFT_AUTH_CAPS_H
#define WEFT_AUTH_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct proto_enc;
struct proto_dec;

enum auth_svc {
	AUTH_SVC_MON = 0,
	AUTH_SVC_OSD = 1,
	AUTH_SVC_COUNT = 2,
};

#define AUTH_PERM_R   0x1u
#define AUTH_PERM_W   0x2u
#define AUTH_PERM_X   0x4u
#define AUTH_PERM_ALL (AUTH_PERM_R | AUTH_PERM_W | AUTH_PERM_X)

enum auth_profile {
	AUTH_PROFILE_NONE = 0,
	AUTH_PROFILE_OSD,
	AUTH_PROFILE_CLIENT,
	AUTH_PROFILE_MOUNT,
	AUTH_PROFILE_BOOTSTRAP_OSD,
};

#define AUTH_GRANTS_MAX	   16
#define AUTH_POOL_MAX	   64	/* the map's pool name field, with its NUL */
#define AUTH_CAPS_TEXT_MAX 1024 /* one service's cap string */

struct auth_grant {
	uint8_t perm;	 /* AUTH_PERM_*, profiles already expanded */
	uint8_t profile; /* enum auth_profile, kept for printing */
	bool has_pool;
	char pool[AUTH_POOL_MAX];
};

struct auth_caps {
	struct auth_grant grant[AUTH_SVC_COUNT][AUTH_GRANTS_MAX];
	uint8_t count[AUTH_SVC_COUNT];
	bool set[AUTH_SVC_COUNT]; /* a cap string was given (possibly granting nothing) */
};

/* "mon" / "osd" to enum auth_svc: 0 or -ENOENT. */
int auth_svc_lookup(const char *name, enum auth_svc *svc_out);
const char *auth_svc_name(enum auth_svc svc);

/*
 * Parse one service's cap string into caps (replacing that service's
 * grants). 0, or -EINVAL and one line in err:
 * "osd cap 'allow rx': 'rx' is not a permission (expected r, w, rw or *)".
 */
int auth_caps_parse(struct auth_caps *caps, enum auth_svc svc, const char *text, char *err,
		    size_t errcap);
/*
 * Parse "SVC 'CAPS' SVC 'CAPS' ..." given as separate arguments (the CLI's
 * form: argv = {"mon", "allow r", "osd", "allow rw pool=rbd"}).
 */
int auth_caps_parse_args(struct auth_caps *caps_out, int argc, char *const *argv, char *err,
			 size_t errcap);
/* The canonical string of one service's caps ("" when none), into buf. */
int auth_caps_format(const struct auth_caps *caps, enum auth_svc svc, char *buf, size_t cap);
/*
 * Whether caps give every bit of need on service svc; pool NULL asks about
 * something that is not in a pool (only grants without pool= count).
 */
bool auth_caps_allow(const struct auth_caps *caps, enum auth_svc svc, const char *pool,
		     unsigned int need);

/* Whether caps hold a grant of profile p on service svc (mon 'profile client' may fence). */
bool auth_caps_has_profile(const struct auth_caps *caps, enum auth_svc svc, enum auth_profile p);

/* Wire form: one str16 per service, the canonical strings, reparsed on decode. */
void auth_caps_encode(struct proto_enc *enc, const struct auth_caps *caps);
int auth_caps_decode(struct proto_dec *dec, struct auth_caps *caps_out);

#endif
