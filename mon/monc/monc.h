/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Mon client: what OSDs, libweft and the CLI use to talk to the monitors.
 *
 * - Connects to one monitor of mon_host at a time and hunts for another
 *   (round robin, starting at a random one) when it fails or refuses.
 * - Requests (commands, OSD boot) carry a deadline; they are resent after
 *   a failover and while the monitors answer -EAGAIN (no leader yet, leader
 *   changed), and complete exactly once: with the reply, or -ETIMEDOUT.
 * - Subscribes to the cluster map: keeps a current struct mon_map, applies
 *   increments, takes full maps when it is too far behind, and resubscribes
 *   from its epoch after a failover.
 * - Single-threaded and poll-driven: call monc_progress() when monc_fd()
 *   polls readable (or the shared messenger's fd, monc_create_on) and when
 *   monc_next_deadline_us() comes (monc_wait() does both), or use the
 *   *_sync helpers, which drive it themselves.
 */
#ifndef WEFT_MON_MONC_MONC_H
#define WEFT_MON_MONC_MONC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/conf.h"
#include "mon/map.h"
#include "proto/proto.h"

struct monc;

/* status 0 or -errno; out (JSON, may be NULL) and errmsg valid during the call only. */
typedef void (*monc_reply_cb)(struct monc *monc, int status, const char *out, size_t out_len,
			      const char *errmsg, void *arg);
/* The map moved to a new epoch; map is monc's (valid until the next monc call). */
typedef void (*monc_map_cb)(struct monc *monc, const struct mon_map *map, void *arg);

/*
 * conf: mon_host, mon_port, ms_*, the auth_* options, keyring; name is the
 * entity ("client.admin", "osd.3"; a monitor "mon.a" authenticates as
 * "mon."). Where the conf wants authentication, the key comes from the
 * keyring (-ENOKEY, logged, when there is none). A monitor that refuses
 * the key is logged; once enough have (every one of mon_host, at least 3
 * tries) requests fail with -EACCES and the reason.
 */
int monc_create(const struct conf *conf, const char *name, struct monc **monc_out);
/* The same, with the reason of a failure in why (one line, not logged). */
int monc_create_err(const struct conf *conf, const char *name, char *why, size_t whycap,
		    struct monc **monc_out);
/*
 * A mon client on the process's messenger (one fabric domain per process):
 * its connections are msgr's like every other, authenticated as monc_create
 * says (with a set-up of their own: the other owners' connections keep
 * theirs). The owner drives msgr in its loop and calls monc_progress() there
 * for the mon client's timers, at monc_next_deadline_us() (a one-shot timer
 * re-armed from monc_deadline_watch); monc_fd() is then -1 (the messenger's
 * fd covers it), and the *_sync helpers drive the messenger themselves, so
 * every owner's callbacks may run inside them. Errors as monc_create.
 */
struct msgr;
int monc_create_on(struct msgr *msgr, const struct conf *conf, const char *name,
		   struct monc **monc_out);
/* Pending requests complete with -ECANCELED. */
void monc_destroy(struct monc *monc);

/* Follow every new epoch (cb may be NULL: monc_map() still tracks it). */
void monc_subscribe(struct monc *monc, monc_map_cb cb, void *arg);
/*
 * Before monc_subscribe: start from this map (one the caller saved), so the
 * mons send the increments after it (or a full map when they no longer
 * hold them) and the callback sees every epoch since. 0 or -ENOMEM.
 */
int monc_seed_map(struct monc *monc, const struct mon_map *map);
const struct mon_map *monc_map(const struct monc *monc);

/* A JSON command ({"prefix": ...}); cb runs once. 0 or -errno (nothing queued). */
int monc_command(struct monc *monc, const char *json, unsigned int timeout_ms, monc_reply_cb cb,
		 void *arg);
/* Any request answered by MON_CMD_REPLY (OSD_BOOT, MON_CMD). */
int monc_request(struct monc *monc, const struct proto_msg *msg, unsigned int timeout_ms,
		 monc_reply_cb cb, void *arg);
/* Fire and forget (beacons, failure reports): -ENOTCONN when no monitor is connected. */
int monc_send(struct monc *monc, const struct proto_msg *msg);

/*
 * Run a command to completion. 0, or the monitors' -errno (message in
 * errmsg), or -ETIMEDOUT. *out_out (malloc'ed JSON, or NULL) on success.
 */
int monc_command_sync(struct monc *monc, const char *json, unsigned int timeout_ms,
		      char **out_out, char *errmsg, size_t errcap);
/* Wait until the map reaches at least epoch (0 = any map). 0 or -ETIMEDOUT. */
int monc_wait_map_sync(struct monc *monc, uint32_t epoch, unsigned int timeout_ms);

/*
 * Tickets for the OSDs' connections (docs/security.md, "Tickets"): from
 * now on keep a ticket to present to OSDs (ticket) and/or the service keys
 * that open the tickets others present (svc_keys, an OSD), asked of the
 * monitors as they fall due (conf: auth_service_ticket_ttl paces the keys).
 * The monitors must have authenticated us. 0 or -ENOMEM.
 */
int monc_ticket_want(struct monc *monc, const struct conf *conf, bool ticket, bool svc_keys);
/* Whether what monc_ticket_want asked for is in hand (true when nothing was asked). */
bool monc_ticket_ready(const struct monc *monc);
/* The monitors refused us a ticket (-EACCES: no osd caps, -ENOENT: no such entity), or 0. */
int monc_ticket_error(const struct monc *monc);
/* struct msgr_auth's ticket callback (arg: the monc): the ticket in hand, or -EAGAIN. */
struct auth_key;
struct auth_sess_keys;
int monc_ticket_get(void *arg, const uint8_t **sealed, uint32_t *len, struct auth_key *key_out);
/*
 * struct msgr_auth's ticket_open callback (arg: the monc): open a peer's
 * ticket with the service keys; -EAGAIN while they have not arrived or the
 * ticket names a key id not fetched yet (fetched now), -EACCES otherwise.
 */
int monc_ticket_open(void *arg, const void *sealed, size_t len, const char *claimed,
		     struct auth_sess_keys *keys_out, uint64_t *expires_us, char *why,
		     size_t whycap);

int monc_progress(struct monc *monc);
/*
 * When monc_progress() next has something to do on monc's own clock: a
 * request's deadline or resend, the next monitor to try while hunting, a
 * ticket or the service keys falling due (a ticket's renewal is on the wall
 * clock, so while one is wanted this is at most a second away). A time of
 * clock_now_us() (common/clock.h), maybe past already; UINT64_MAX when
 * nothing is pending. Frames from the monitors are not in it: they come on
 * monc_fd() or the shared messenger.
 */
uint64_t monc_next_deadline_us(const struct monc *monc);
/*
 * cb runs whenever monc_next_deadline_us() may have moved earlier (a
 * request queued, a frame or a failed connection that schedules a resend
 * or a hunt, a connection up) and at the end of every monc_progress(): the
 * owner re-reads the deadline there and re-arms its timer (it must not
 * destroy the monc). A timer armed for a deadline that has gone since (a
 * request answered) fires, finds nothing due, and is re-armed by the
 * monc_progress() it runs. NULL stops it; monc_destroy does too.
 */
typedef void (*monc_deadline_cb)(struct monc *monc, void *arg);
void monc_deadline_watch(struct monc *monc, monc_deadline_cb cb, void *arg);
int monc_wait(struct monc *monc, int timeout_ms);
int monc_fd(const struct monc *monc);
bool monc_connected(const struct monc *monc);
/* The monitor in use ("ip:port"), "" while hunting. */
const char *monc_mon_addr(const struct monc *monc);
/* The feature bits of the monitor we talk to (its hello); 0 when not connected. */
uint64_t monc_mon_features(const struct monc *monc);

#endif
