/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft-osd: one object storage daemon per data device.
 *
 *   weft-osd -i ID [-c FILE] [--mkfs] [--KEY=VALUE...]
 *
 * One thread runs a run-to-completion loop (evloop/, docs/evloop.md):
 * pollers for the fabric (public and cluster listeners, replica
 * connections) and the store's completions, fds for the mon client, the
 * admin socket and the metrics server, timers for beacons, heartbeats, the
 * ticks and each op's timeout. docs/osd.md describes it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "admin/asok.h"
#include "common/clock.h"
#include "common/conf_runtime.h"
#include "common/log.h"
#include "common/pidfile.h"
#include "common/version.h"
#include "evloop/evloop.h"
#include "mon/monc/monc_evl.h"
#include "osd/osd.h"
#include "osd/osd_pg.h"
#include "osd/osd_perf.h"

#define OSD_META_OBJ	    "osd_superblock"
#define OSD_BOOT_TIMEOUT_MS 30000u
#define OSD_BOOT_RETRY_MS   2000u /* a boot held by noup, or not answered, asks again */
#define OSD_AUTH_WAIT_MS    200u  /* a boot waiting for our ticket and the service keys */

static volatile sig_atomic_t osd_stop_sig, osd_hup_sig;
static struct evl *osd_sig_loop; /* woken by the handlers: a sleeping loop sees the flag now */

static void osd_sig(int sig)
{
	osd_stop_sig = 1;
	if (osd_sig_loop != NULL)
		evl_wake(osd_sig_loop);
}

/* SIGHUP: logrotate moved log_file; the loop opens it again (not signal-safe here). */
static void osd_hup(int sig)
{
	osd_hup_sig = 1;
	if (osd_sig_loop != NULL)
		evl_wake(osd_sig_loop);
}

/*
 * The reactor's timers and handles (osd_run). Per-op timeouts are timers of
 * the ops themselves (osd_op.c); everything here is per OSD.
 */
#define OSD_TICK_US	  100000u /* the PGs that want a tick, replication retries, memory */
#define OSD_HB_TICK_US	  100000u /* heartbeats: pings, silence, probe repeats (osd_hb.c) */
#define OSD_ADMIN_TICK_US 100000u /* admin socket / metrics connections already accepted */
#define OSD_STORE_NAP_US  50u	  /* store completions pending and no eventfd to sleep on */

static struct osd_reactor {
	struct evl_timer beacon, boot_retry, tick, hb, admin, store_nap;
	struct monc_evl monc; /* the mon client's deadlines */
	int fatal; /* a poller's error: osd_run returns it */
} osd_rx;

static void osd_log_reopen(struct osd *osd)
{
	int rc;

	osd_hup_sig = 0;
	rc = weft_log_reopen();
	if (rc != 0)
		log_error("osd", "%s: SIGHUP: cannot reopen %s: %s", osd->name,
			  conf_get_str(osd->conf, CONF_LOG_FILE), strerror(-rc));
	else
		log_info("osd", "%s: SIGHUP: log file reopened", osd->name);
}

static void osd_usage(FILE *out)
{
	fprintf(out, "usage: weft-osd -i ID [-c FILE] [--mkfs] [--KEY=VALUE...]\n"
		     "  -i ID           OSD id (osd.ID); --mkfs creates its store and exits\n"
		     "  --uuid UUID     with --mkfs: the OSD's uuid (default: a random one)\n"
		     "  -c FILE         conf file (default /etc/weft/weft.conf)\n"
		     "  --KEY=VALUE     any option of 'weft config help'\n"
		     "  -h, --help      this text\n"
		     "  --version       version and git commit of this build\n");
}

/*
 * One OSD per store: a pid file in its RocksDB directory, locked for our
 * lifetime. No directory yet (never formatted) is left to store_mount to
 * explain. 0 (with *fd_out, maybe -1), or an error already printed.
 */
static int osd_lock(struct osd *osd, int *fd_out)
{
	char path[PATH_MAX];
	const char *db = conf_get_str(osd->conf, CONF_OSD_DB);
	pid_t holder = 0;
	int rc;

	*fd_out = -1;
	if (db == NULL || db[0] == '\0')
		return 0;
	snprintf(path, sizeof(path), "%s/weft-osd.pid", db);
	rc = weft_pidfile_lock(path, fd_out, &holder);
	if (rc == -ENOENT || rc == -ENOTDIR)
		return 0;
	if (rc == -EEXIST)
		fprintf(stderr, "weft-osd: %s is already running (pid %ld)\n", osd->name,
			(long)holder);
	else if (rc != 0)
		fprintf(stderr, "weft-osd: %s: cannot lock %s: %s\n", osd->name, path,
			strerror(-rc));
	return rc;
}

static void osd_mkfs_cb(void *arg, int rc)
{
	*(int *)arg = rc;
}

/* uuid_text: the OSD's uuid (weft osd create puts the same in the device label), or NULL. */
static int osd_mkfs(struct osd *osd, const char *uuid_text)
{
	struct store_opts o;
	struct store *st;
	struct store_tx *tx;
	uint8_t uuid[PROTO_UUID_LEN];
	int rc, crc = 0;

	rc = store_opts_from_conf(osd->conf, &o);
	if (rc != 0)
		return rc;
	o.osd_id = osd->id;
	rc = store_mkfs(&o);
	if (rc != 0)
		return rc;
	rc = store_mount(&o, &st);
	if (rc != 0)
		return rc;
	if (uuid_text != NULL) {
		if (mon_uuid_parse(uuid_text, uuid) != 0) {
			store_umount(st);
			return -EINVAL;
		}
	} else if (getrandom(uuid, sizeof(uuid), 0) != (ssize_t)sizeof(uuid)) {
		store_umount(st);
		return -EIO;
	} else {
		uuid[6] = (uuid[6] & 0x0f) | 0x40; /* version 4 */
		uuid[8] = (uuid[8] & 0x3f) | 0x80;
	}
	rc = store_tx_create(&tx);
	if (rc == 0)
		rc = store_tx_setattr(tx, OSD_META_PG, OSD_META_OBJ, "uuid", uuid, sizeof(uuid));
	if (rc == 0)
		rc = store_tx_submit(st, tx, osd_mkfs_cb, &crc);
	if (rc == 0)
		rc = store_flush(st);
	if (rc == 0)
		rc = crc;
	store_umount(st);
	if (rc == 0) {
		char s[37];

		mon_uuid_str(uuid, s);
		log_info("osd", "%s: created store, uuid %s", osd->name, s);
	}
	return rc;
}

static void osd_boot_cb(struct monc *mc, int status, const char *out, size_t out_len,
			const char *errmsg, void *arg);

static int osd_boot(struct osd *osd)
{
	struct proto_msg boot = {.type = PROTO_OSD_BOOT};
	struct proto_osd_boot *b = &boot.osd_boot;
	const char *host = conf_get_str(osd->conf, CONF_HOST);
	char hn[64];

	if (!osd_auth_ready(osd)) {
		/* peers could not check our ticket, nor we theirs: up only once we can */
		if (!osd->auth_wait_logged)
			log_info("osd", "%s: boot waits for our ticket and the service keys",
				 osd->name);
		osd->auth_wait_logged = true; /* not boot_held: that one tells of noup */
		osd->boot_retry_ms = clock_now_ms() + OSD_AUTH_WAIT_MS;
		if (osd->loop != NULL)
			evl_timer_arm(osd->loop, &osd_rx.boot_retry, OSD_AUTH_WAIT_MS * 1000u, 0);
		return 0;
	}

	if (host == NULL || host[0] == '\0') {
		if (gethostname(hn, sizeof(hn)) != 0)
			snprintf(hn, sizeof(hn), "localhost");
		hn[sizeof(hn) - 1] = '\0';
		host = hn;
	}
	memcpy(b->uuid, osd->uuid, PROTO_UUID_LEN);
	b->want_id = osd->id;
	b->host_len = strnlen(host, PROTO_NAME_MAX);
	memcpy(b->host, host, b->host_len);
	b->public_addr_len = strlen(osd->pub_addr);
	memcpy(b->public_addr, osd->pub_addr, b->public_addr_len);
	b->cluster_addr_len = strlen(osd->clu_addr);
	memcpy(b->cluster_addr, osd->clu_addr, b->cluster_addr_len);
	osd->boot_pending = true;
	return monc_request(osd->monc, &boot, OSD_BOOT_TIMEOUT_MS, osd_boot_cb, osd);
}

static void osd_boot_cb(struct monc *mc, int status, const char *out, size_t out_len,
			const char *errmsg, void *arg)
{
	struct osd *osd = arg;
	const char *p = out != NULL ? memmem(out, out_len, "\"osd\": ", 7) : NULL;

	osd->boot_pending = false;
	if (status != 0 || p == NULL || strtoul(p + 7, NULL, 10) != osd->id) {
		/* held (noup) or not answered: ask again; refused: stop */
		bool again = status == -EBUSY || status == -ETIMEDOUT;

		if (!again || !osd->boot_held)
			log_error("osd", "%s: boot %s: %s", osd->name, again ? "waits" : "refused",
				  status != 0
				      ? (errmsg && errmsg[0] ? errmsg : weft_strerror(status))
				      : "reply without our id");
		osd->boot_held = again;
		osd->boot_retry_ms = clock_now_ms() + OSD_BOOT_RETRY_MS;
		if (!again)
			osd->stopping = true;
		else if (osd->loop != NULL)
			evl_timer_arm(osd->loop, &osd_rx.boot_retry, OSD_BOOT_RETRY_MS * 1000u, 0);
		return;
	}
	osd->booted = true;
	osd->boot_held = false;
	if (osd->loop != NULL) /* the first beacon now, then every interval */
		evl_timer_arm(osd->loop, &osd_rx.beacon, 0,
			      osd->hb_interval_ms != 0 ? osd->hb_interval_ms * 1000u : 1000000u);
	/* the epoch our boot made: no op is ordered before we have it (osd_op_recv) */
	p = memmem(out, out_len, "\"epoch\": ", 9);
	osd->boot_epoch = p ? (uint32_t)strtoul(p + 9, NULL, 10) : monc_map(mc)->epoch;
	log_info("osd", "%s: booted in map epoch %u", osd->name, osd->boot_epoch);
}

static void osd_map_cb(struct monc *mc, const struct mon_map *map, void *arg)
{
	struct osd *osd = arg;
	const struct mon_osd *me;

	if (mon_map_copy(&osd->map, map) != 0) {
		log_error("osd", "%s: out of memory copying map epoch %u", osd->name, map->epoch);
		return;
	}
	me = mon_map_osd(&osd->map, osd->id);
	/* removed (osd rm / purge, as Ceph's "map says i do not exist"): stop */
	if (osd->booted && !osd->boot_pending && map->epoch > osd->boot_epoch &&
	    (me == NULL || memcmp(me->uuid, osd->uuid, PROTO_UUID_LEN) != 0)) {
		log_error("osd",
			  "%s: map epoch %u has no osd.%u of our uuid (removed by osd rm or "
			  "purge): stopping",
			  osd->name, map->epoch, osd->id);
		osd->stopping = true;
		return;
	}
	/* marked down while alive (a long stall, a lost beacon): boot again */
	if (osd->booted && !osd->boot_pending && me != NULL && !(me->state & MON_OSD_UP) &&
	    map->epoch > osd->boot_epoch) {
		log_warn("osd", "%s: map epoch %u marks us down; booting again", osd->name,
			 map->epoch);
		osd->booted = false;
		osd_boot(osd);
	}
	osd_pg_map_changed(osd); /* intervals first: ops of a new interval wait for peering */
	osd_op_map_changed(osd);
	osd_blocklist_map_changed(osd);
}

static void osd_beacon(struct osd *osd)
{
	struct proto_msg m = {.type = PROTO_OSD_BEACON};

	m.osd_beacon.id = osd->id;
	m.osd_beacon.epoch = osd->map.epoch;
	memcpy(m.osd_beacon.uuid, osd->uuid, PROTO_UUID_LEN);
	monc_send(osd->monc, &m);
}

/* ------------------------------------------------------------- the reactor */

static int osd_net_poll(struct evl *evl, void *arg)
{
	struct osd *osd = arg;
	int rc = osd_net_progress(osd);

	if (rc < 0) {
		log_error("osd", "%s: fabric failed: %s", osd->name, weft_strerror(rc));
		osd_rx.fatal = rc;
	}
	return rc;
}

static void osd_store_nap_cb(struct evl *evl, struct evl_timer *t, void *arg)
{
	/* nothing: the round this wakes polls the store */
}

/*
 * Store completions while transactions are pending. The store's eventfd
 * (signalled on every io_uring completion) wakes a sleeping loop; without
 * one (the kernel refused it) a 50 us timer bounds the sleep instead.
 */
static int osd_store_poll(struct evl *evl, void *arg)
{
	struct osd *osd = arg;
	int rc;

	if (osd->store_pending == 0)
		return 0;
	rc = store_poll(osd->store);
	if (rc < 0) {
		log_error("osd", "%s: store failed: %s", osd->name, weft_strerror(rc));
		osd_rx.fatal = rc;
		return rc;
	}
	if (rc == 0 && store_event_fd(osd->store) < 0 && !evl_timer_armed(&osd_rx.store_nap))
		evl_timer_arm(evl, &osd_rx.store_nap, OSD_STORE_NAP_US, 0);
	/*
	 * What the commits answered (a replica's ACK, a client's reply) goes
	 * out in this round: it waited for the next round's net poll, one more
	 * pass and epoll_wait(0) on the way of every write.
	 */
	if (rc > 0)
		fab_flush(osd->dom);
	return rc;
}

static void osd_store_fd_cb(struct evl *evl, int fd, unsigned int events, void *arg)
{
	struct osd *osd = arg;
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_warn("osd", "%s: store eventfd read: %s", osd->name, strerror(errno));
}

/* The store in the loop: one poller, and its fd (when it has one) to sleep on. */
static int osd_loop_store_attach(struct osd *osd)
{
	int fd = store_event_fd(osd->store);
	int rc;

	evl_timer_init(&osd_rx.store_nap, osd_store_nap_cb, osd);
	rc = evl_poller_add(osd->loop, osd_store_poll, osd, NULL);
	if (rc == 0 && fd >= 0)
		rc = evl_fd_add(osd->loop, fd, EVL_READ, osd_store_fd_cb, osd, NULL);
	return rc;
}

/* Ops the PG machines let go meanwhile (any callback may have queued kicks), and the
 * recovery pushes they started. */
static int osd_kicks_poll(struct evl *evl, void *arg)
{
	struct osd *osd = arg;

	if (osd->kicks == NULL && !osd_push_due(osd))
		return 0;
	/* replicas first, as in osd_net_progress */
	store_plug(osd->store);
	osd_pg_kick_pending(osd);
	fab_flush(osd->dom);
	store_unplug(osd->store);
	/* pushes the kicks started (their reads leave the store unplugged) */
	if (osd_push_due(osd)) {
		osd_push_run(osd);
		fab_flush(osd->dom);
	}
	return 1;
}

/* Signals and stop requests; cheap flag checks, every round. */
static int osd_flags_poll(struct evl *evl, void *arg)
{
	struct osd *osd = arg;

	if (osd_hup_sig)
		osd_log_reopen(osd);
	if (osd_stop_sig || osd->stopping)
		evl_stop(evl);
	return 0;
}

/* The mon client's deadlines on a one-shot timer (mon/monc/monc_evl.h). */
static int osd_loop_monc_attach(struct osd *osd)
{
	/* the boot request and the connection were made before the loop existed */
	return monc_evl_attach(&osd_rx.monc, osd->monc, osd->loop, "osd", osd->name);
}

static void osd_admin_fd_cb(struct evl *evl, int fd, unsigned int events, void *arg)
{
	osd_admin_poll(arg);
}

static void osd_metrics_fd_cb(struct evl *evl, int fd, unsigned int events, void *arg)
{
	osd_metrics_poll(arg);
}

/* Connections the admin socket and the metrics server already accepted have no fd here. */
static void osd_admin_timer_cb(struct evl *evl, struct evl_timer *t, void *arg)
{
	osd_admin_poll(arg);
	osd_metrics_poll(arg);
}

static void osd_beacon_cb(struct evl *evl, struct evl_timer *t, void *arg)
{
	struct osd *osd = arg;

	if (osd->booted)
		osd_beacon(osd);
}

static void osd_boot_retry_cb(struct evl *evl, struct evl_timer *t, void *arg)
{
	struct osd *osd = arg;

	if (!osd->booted && !osd->boot_pending)
		osd_boot(osd);
}

static void osd_hb_timer_cb(struct evl *evl, struct evl_timer *t, void *arg)
{
	osd_hb_tick(arg);
}

/*
 * Every 100 ms: the PGs that want a tick (queued ops kicked and their
 * records re-posted, a safety net for waits without an event of their own;
 * the PG machines that have timers running: osd_pgtick.c), memory. Op
 * timeouts and ring-grant deadlines are per-op and per-peer timers; an
 * idle PG is not looked at.
 */
static void osd_tick_cb(struct evl *evl, struct evl_timer *t, void *arg)
{
	struct osd *osd = arg;

	osd_pg_tick(osd);
	osd_mem_tick(osd);
}

static int osd_loop_create(struct osd *osd)
{
	uint64_t beacon_us = osd->hb_interval_ms != 0 ? osd->hb_interval_ms * 1000u : 1000000u;
	struct evl_opts o;
	int rc;

	evl_opts_init(&o);
	o.name = osd->name;
	o.busy_poll_us = (uint32_t)conf_get_duration_us(osd->conf, CONF_MS_BUSY_POLL);
	rc = evl_create(&o, &osd->loop);
	if (rc != 0)
		return rc;
	evl_timer_init(&osd_rx.beacon, osd_beacon_cb, osd);
	evl_timer_init(&osd_rx.boot_retry, osd_boot_retry_cb, osd);
	evl_timer_init(&osd_rx.tick, osd_tick_cb, osd);
	evl_timer_init(&osd_rx.hb, osd_hb_timer_cb, osd);
	evl_timer_init(&osd_rx.admin, osd_admin_timer_cb, osd);
	/* pollers run in this order: fabric, store, the kicks they caused, flags */
	rc = evl_poller_add(osd->loop, osd_net_poll, osd, NULL);
	if (rc == 0)
		rc = osd_loop_store_attach(osd);
	if (rc == 0)
		rc = evl_poller_add(osd->loop, osd_kicks_poll, osd, NULL);
	if (rc == 0)
		rc = evl_poller_add(osd->loop, osd_flags_poll, osd, NULL);
	/* the fabric's fd only wakes the loop: its poller does the work */
	if (rc == 0)
		rc = evl_fd_add(osd->loop, fab_domain_fd(osd->dom), EVL_READ, NULL, NULL, NULL);
	if (rc == 0 && osd->asok != NULL)
		rc =
		    evl_fd_add(osd->loop, asok_fd(osd->asok), EVL_READ, osd_admin_fd_cb, osd, NULL);
	if (rc == 0 && osd_metrics_fd(osd) >= 0)
		rc = evl_fd_add(osd->loop, osd_metrics_fd(osd), EVL_READ, osd_metrics_fd_cb, osd,
				NULL);
	if (rc == 0)
		rc = evl_timer_arm(osd->loop, &osd_rx.beacon, 0, beacon_us);
	if (rc == 0)
		rc = evl_timer_arm(osd->loop, &osd_rx.tick, 0, OSD_TICK_US);
	if (rc == 0)
		rc = evl_timer_arm(osd->loop, &osd_rx.hb, 0, OSD_HB_TICK_US);
	if (rc == 0)
		rc = evl_timer_arm(osd->loop, &osd_rx.admin, OSD_ADMIN_TICK_US, OSD_ADMIN_TICK_US);
	if (rc != 0) {
		evl_destroy(osd->loop);
		osd->loop = NULL;
	}
	return rc;
}

/* "loop stats": what the reactor did (docs/evloop.md), to judge ms_busy_poll by. */
static int osd_loop_stats_cb(void *arg, struct asok_out *out)
{
	struct osd *osd = arg;
	struct evl_stats st;

	if (osd->loop == NULL)
		return -EAGAIN;
	evl_stats_get(osd->loop, &st);
	asok_printf(out,
		    "{\"busy_poll_us\": %u, \"rounds\": %" PRIu64 ", \"busy_rounds\": %" PRIu64
		    ", \"spin_rounds\": %" PRIu64 ", \"sleeps\": %" PRIu64
		    ", \"sleep_seconds\": %.6f, \"fd_checks\": %" PRIu64 ", \"fd_events\": %" PRIu64
		    ", \"timers_fired\": %" PRIu64 ", \"timers_armed\": %u, \"fds\": %u"
		    ", \"pollers\": %u}",
		    evl_busy_poll_us(osd->loop), st.rounds, st.busy_rounds, st.spin_rounds,
		    st.sleeps, (double)st.sleep_ns / 1e9, st.fd_checks, st.fd_events,
		    st.timers_fired, st.timers_armed, st.fds, st.pollers);
	return 0;
}

/* The loop with the mon client attached; until a signal, a stop, or a fatal error. */
static int osd_run(struct osd *osd)
{
	int rc;

	osd->hb_interval_ms = conf_get_duration_us(osd->conf, CONF_OSD_HEARTBEAT_INTERVAL) / 1000;
	osd->hb_grace_ms = conf_get_duration_us(osd->conf, CONF_OSD_HEARTBEAT_GRACE) / 1000;
	rc = osd_loop_create(osd);
	if (rc == 0)
		rc = osd_loop_monc_attach(osd);
	if (rc != 0) {
		log_error("osd", "%s: event loop: %s", osd->name, weft_strerror(rc));
		return rc;
	}
	osd_sig_loop = osd->loop;
	if (osd->asok != NULL &&
	    (rc = asok_register(osd->asok, "loop stats",
				"the reactor's event loop: rounds, busy, spinning, sleeps, timers",
				osd_loop_stats_cb, osd)) != 0)
		log_warn("osd", "%s: admin socket command 'loop stats': %s", osd->name,
			 weft_strerror(rc));
	if (osd->boot_retry_ms != 0 && !osd->booted && !osd->boot_pending)
		evl_timer_arm_at(osd->loop, &osd_rx.boot_retry, osd->boot_retry_ms * 1000000u);
	rc = evl_run(osd->loop);
	return rc < 0 ? osd_rx.fatal ? osd_rx.fatal : rc : 0;
}

/* Before the ops and the PGs are freed: the ops' timers live in them. */
static void osd_loop_destroy(struct osd *osd)
{
	osd_sig_loop = NULL;
	monc_evl_detach(&osd_rx.monc);
	evl_destroy(osd->loop); /* leaves every timer still armed disarmed */
	osd->loop = NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"mkfs", no_argument, NULL, 'm'},
	    {"uuid", required_argument, NULL, 'u'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	static struct osd osd;
	const char *file = NULL, *id = NULL, *uuid_text = NULL;
	enum weft_log_level level;
	struct store_opts so;
	int lock_fd = -1;
	bool mkfs = false;
	char *end;
	int c, rc;

	if (weft_version_arg(argc, argv, "weft-osd"))
		return 0;
	signal(SIGPIPE, SIG_IGN);
	for (int i = 1; i + 1 < argc; i++)
		if (!strcmp(argv[i], "-i"))
			id = argv[i + 1];
	if (id == NULL) {
		for (int i = 1; i < argc; i++)
			if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
				osd_usage(stdout);
				return 0;
			}
		fprintf(stderr, "weft-osd: -i ID is required (see --help)\n");
		return 2;
	}
	osd.id = (uint32_t)strtoul(id, &end, 10);
	if (*end != '\0' || end == id || osd.id >= MON_OSD_MAX) {
		fprintf(stderr, "weft-osd: bad id '%s'\n", id);
		return 2;
	}
	snprintf(osd.name, sizeof(osd.name), "osd.%u", osd.id);
	if (conf_create(osd.name, &osd.conf) != 0)
		return 2;
	if (conf_apply_args(osd.conf, &argc, argv) != 0)
		return 2;
	opterr = 0; /* one line of ours instead of getopt's */
	while ((c = getopt_long(argc, argv, "i:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			break;
		case 'c':
			file = optarg;
			break;
		case 'm':
			mkfs = true;
			break;
		case 'u':
			uuid_text = optarg;
			break;
		case 'h':
			osd_usage(stdout);
			return 0;
		default:
			fprintf(stderr,
				"weft-osd: unknown or incomplete option '%s' (see --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "weft-osd: unexpected argument '%s' (see --help)\n", argv[optind]);
		return 2;
	}
	if (file == NULL && access("/etc/weft/weft.conf", F_OK) == 0)
		file = "/etc/weft/weft.conf";
	/* file first, then env; flags were applied above and keep their precedence */
	if ((file != NULL && conf_load_file(osd.conf, file) != 0) || conf_apply_env(osd.conf) != 0)
		return 2;
	/* before the first log line: a second start answers with one line */
	rc = osd_lock(&osd, &lock_fd);
	if (rc != 0) {
		conf_destroy(osd.conf);
		return 1;
	}
	if (weft_log_level_parse(conf_get_str(osd.conf, CONF_LOG_LEVEL), &level) != 0)
		level = WEFT_LOG_INFO;
	weft_log_open(osd.name, level, conf_get_str(osd.conf, CONF_LOG_FILE));
	weft_log_conf_apply(osd.conf); /* debug_osd, debug_fabric, ... */
	log_info("osd", "%s: weft-osd %s", osd.name, weft_version_full());
	if (mkfs) {
		rc = osd_mkfs(&osd, uuid_text);
		if (rc != 0)
			fprintf(stderr, "weft-osd: mkfs of %s failed: %s\n", osd.name,
				weft_strerror(rc));
		weft_pidfile_unlock(lock_fd);
		conf_destroy(osd.conf);
		return rc != 0;
	}
	osd.max_op = conf_get_size(osd.conf, CONF_OSD_MAX_OP_SIZE);
	osd.ring_size = conf_get_size(osd.conf, CONF_OSD_REPL_RING_SIZE);
	osd.rings_max = conf_get_size(osd.conf, CONF_OSD_REPL_RINGS_MAX);
	osd.op_timeout_ms = conf_get_duration_us(osd.conf, CONF_OSD_OP_TIMEOUT) / 1000;
	osd.max_ops_per_conn = (uint32_t)conf_get_int(osd.conf, CONF_OSD_MAX_OPS_PER_CONN);
	osd.epoch_ahead_max = (uint32_t)conf_get_int(osd.conf, CONF_OSD_EPOCH_AHEAD_MAX);
	osd.map_wait_ms = conf_get_duration_us(osd.conf, CONF_OSD_MAP_WAIT_MAX) / 1000;
	osd.ring_grant_ms = 2 * conf_get_duration_us(osd.conf, CONF_MS_CONNECT_TIMEOUT) / 1000;
	if (osd.ring_size < osd.max_op + OSD_REC_HDR_MAX + OSD_REC_ALIGN) {
		fprintf(stderr, "weft-osd: osd_repl_ring_size must exceed osd_max_op_size\n");
		weft_pidfile_unlock(lock_fd);
		return 2;
	}
	mon_map_init(&osd.map);
	rc = store_opts_from_conf(osd.conf, &so);
	if (rc == 0) {
		so.osd_id = osd.id;
		rc = store_mount(&so, &osd.store);
	}
	if (rc != 0) {
		fprintf(stderr, "weft-osd: %s: cannot mount the store: %s\n", osd.name,
			weft_strerror(rc));
		goto out_conf;
	}
	{
		size_t len;

		rc = store_getattr(osd.store, OSD_META_PG, OSD_META_OBJ, "uuid", osd.uuid,
				   sizeof(osd.uuid), &len);
		if (rc != 0 || len != sizeof(osd.uuid)) {
			fprintf(stderr, "weft-osd: %s: store has no OSD uuid (run --mkfs)\n",
				osd.name);
			rc = rc ? rc : -EINVAL;
			goto out_store;
		}
	}
	rc = osd_perf_init(&osd);
	if (rc == 0)
		rc = osd_numa_setup(&osd); /* before the pools: they go to the chosen node */
	if (rc != 0)
		goto out_store;
	rc = osd_net_start(&osd);
	if (rc != 0)
		goto out_store;
	{
		struct msgr_limits lim;

		/* before the reactor runs, so before the first accept is seen */
		msgr_limits_from_conf(osd.conf, &lim);
		msgr_limits_set(osd.msgr, &lim);
	}
	rc = osd_mem_check(&osd);
	if (rc != 0) {
		fprintf(stderr, "weft-osd: %s: osd_memory_target too small (see the log)\n",
			osd.name);
		goto out_net;
	}
	osd_admin_start(&osd);
	osd_metrics_start(&osd);
	rc = osd_pg_init(&osd);
	if (rc == 0)
		rc = osd_purge_init(&osd); /* before the first map: a purge left half-way resumes */
	if (rc != 0)
		goto out_net;
	rc = monc_create_on(osd.msgr, osd.conf, osd.name, &osd.monc);
	if (rc != 0)
		goto out_net;
	{
		/* from the map of our last run on, so every epoch we missed is replayed */
		struct mon_map saved;

		mon_map_init(&saved);
		if (osd_pg_map_load(&osd, &saved) == 0) {
			log_info("osd", "%s: last map seen was epoch %u; asking for what followed",
				 osd.name, saved.epoch);
			monc_seed_map(osd.monc, &saved);
			/*
			 * Processed now: the mons send only epochs after it, and none
			 * at all while theirs is the same (a restart of the cluster).
			 */
			osd_map_cb(osd.monc, &saved, &osd);
		}
		mon_map_free(&saved);
	}
	rc = osd_auth_want(&osd);
	if (rc != 0)
		goto out_monc;
	monc_subscribe(osd.monc, osd_map_cb, &osd);
	signal(SIGTERM, osd_sig);
	signal(SIGINT, osd_sig);
	signal(SIGHUP, osd_hup);
	rc = osd_boot(&osd);
	if (rc == 0)
		rc = osd_run(&osd);
	log_info("osd", "%s: stopping", osd.name);
	osd_loop_destroy(&osd);
	/* reads in flight write into op buffers: they end before the pools go */
	store_reads_abandon(osd.store);
out_monc:
	monc_destroy(osd.monc);
out_net:
	osd_metrics_stop(&osd);
	osd_admin_stop(&osd);
	osd_net_stop(&osd);
	osd_pg_fini(&osd);
	osd_purge_fini(&osd);
	osd_ops_cleanup(&osd);
	osd_repl_cleanup(&osd);
out_store:
	osd_perf_fini(&osd);
	store_umount(osd.store);
out_conf:
	osd_hb_free(&osd);
	mon_map_free(&osd.map);
	conf_destroy(osd.conf);
	weft_pidfile_unlock(lock_fd);
	return rc != 0 || osd.fatal != 0;
}
