/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft-mon admin socket (admin/asok.h): help, config show, perf dump.
 * The listening fd is a uv_poll on the monitor's loop; connections already
 * accepted are also progressed from the tick (every MON_ADMIN_TICKS ticks).
 */
#include <inttypes.h>

#include "admin/asok.h"
#include "common/conf_runtime.h"
#include "common/log.h"
#include "mon/mon_priv.h"
#include "weft/weft.h"

/* Raft's log position and the Raft port's handshakes (mon_raft_auth.h); closes the object. */
static void mon_admin_perf_raft(struct mon *mon, struct asok_out *out)
{
	struct mon_raft_auth_stats st;

	mon_raft_auth_stats(&mon->transport, &st);
	asok_printf(out,
		    ", \"raft\": {\"term\": %llu, \"last_index\": %llu, \"commit_index\": %llu, "
		    "\"last_applied\": %llu}, \"raft_port\": {\"handshakes_accepted\": %llu, "
		    "\"refused\": %llu, \"timed_out\": %llu, \"over_limit\": %llu, "
		    "\"in_handshake\": %u, \"connects_ok\": %llu, \"connects_failed\": %llu}}",
		    (unsigned long long)mon->raft.current_term,
		    (unsigned long long)raft_last_index(&mon->raft),
		    (unsigned long long)mon->raft.commit_index,
		    (unsigned long long)raft_last_applied(&mon->raft),
		    (unsigned long long)st.accepted, (unsigned long long)st.refused,
		    (unsigned long long)st.timed_out, (unsigned long long)st.over_limit,
		    st.in_handshake, (unsigned long long)st.connected,
		    (unsigned long long)st.connect_failed);
}

/* The messenger's denial-of-service limits (docs/security.md): refusals at accept, hellos. */
static void mon_admin_perf_msgr(struct mon *mon, struct asok_out *out)
{
	struct msgr_stats ms;

	if (mon->msgr == NULL)
		return;
	msgr_stats_get(mon->msgr, &ms);
	asok_printf(out,
		    ", \"dos\": {\"conns\": %u, \"unauth\": %u, \"accepted\": %" PRIu64
		    ", \"refused_conns\": %" PRIu64 ", \"refused_per_ip\": %" PRIu64
		    ", \"refused_unauth\": %" PRIu64 ", \"hello_timeouts\": %" PRIu64
		    ", \"log_suppressed\": %" PRIu64 ", \"send_overflows\": %" PRIu64 "}",
		    ms.conns, ms.unauth, ms.accepted, ms.refused_conns, ms.refused_per_ip,
		    ms.refused_unauth, ms.hello_timeouts, ms.log_suppressed, ms.send_overflows);
}

static int mon_admin_perf_cb(void *arg, struct asok_out *out)
{
	struct mon *mon = arg;

	asok_printf(out, "{\"mon\": ");
	asok_put_str(out, mon->name);
	asok_printf(out,
		    ", \"rank\": %u, \"monitors\": %u, \"map_epoch\": %u, \"leader\": %s, "
		    "\"queued_jobs\": %u, \"live_sessions\": %u",
		    mon->self, mon->npeers, mon->map.epoch, mon->leader_ready ? "true" : "false",
		    mon->q_len, mon->nlive);
	mon_admin_perf_msgr(mon, out);
	mon_admin_perf_raft(mon, out);
	return 0;
}

static void mon_admin_poll_cb(uv_poll_t *p, int status, int events)
{
	struct mon *mon = p->data;

	if (mon->asok != NULL)
		asok_progress(mon->asok);
}

/* A runtime option changed: the mons read theirs at each use; the log thresholds are set here. */
static void mon_admin_conf_applied_cb(void *arg, int key)
{
	struct mon *mon = arg;

	weft_log_conf_apply(mon->conf);
}

void mon_admin_start(struct mon *mon)
{
	const char *path = conf_get_str(mon->conf, CONF_ADMIN_SOCKET);
	int rc;

	if (path == NULL || path[0] == '\0')
		return;
	rc = asok_create(path, mon->name, &mon->asok);
	if (rc != 0) {
		log_warn("mon", "%s: running without an admin socket", mon->name);
		return;
	}
	if ((rc = asok_register(mon->asok, "perf dump", "rank, map epoch, leader, queue",
				mon_admin_perf_cb, mon)) != 0 ||
	    (rc = asok_register_conf(mon->asok, mon->conf)) != 0 ||
	    (rc = asok_register_conf_set(mon->asok, mon->conf, mon_admin_conf_applied_cb, mon)) !=
		    0 ||
	    (rc = uv_poll_init(&mon->loop, &mon->asok_poll, asok_fd(mon->asok))) != 0) {
		/* libuv errors are negative errno values on Linux */
		log_error("mon", "%s: admin socket: %s", mon->name, weft_strerror(rc));
		asok_destroy(mon->asok);
		mon->asok = NULL;
		return;
	}
	mon->asok_poll.data = mon;
	uv_poll_start(&mon->asok_poll, UV_READABLE, mon_admin_poll_cb);
	log_info("mon", "%s: admin socket %s", mon->name, path);
}

void mon_admin_tick(struct mon *mon)
{
	if (mon->asok != NULL && ++mon->asok_ticks % MON_ADMIN_TICKS == 0)
		asok_progress(mon->asok);
}

static void mon_admin_close_cb(uv_handle_t *h)
{
	struct mon *mon = h->data;

	asok_destroy(mon->asok);
	mon->asok = NULL;
}

void mon_admin_stop(struct mon *mon)
{
	if (mon->asok == NULL)
		return;
	uv_poll_stop(&mon->asok_poll);
	uv_close((uv_handle_t *)&mon->asok_poll, mon_admin_close_cb);
}
