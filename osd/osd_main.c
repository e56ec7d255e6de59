/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft-osd: one object storage daemon per data device.
 *
 *   weft-osd -i ID [-c FILE] [--mkfs] [--KEY=VALUE...]
 *
 * One thread runs a run-to-completion loop: fabric progress (public and
 * cluster listeners, replica connections), store completions, the mon
 * client, timers (beacons, op timeouts). docs/osd.md describes it.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/conf_runtime.h"
#include "common/log.h"
#include "common/pidfile.h"
#include "common/version.h"
#include "osd/osd.h"
#include "osd/osd_pg.h"
#include "osd/osd_perf.h"

#define OSD_META_OBJ	    "osd_superblock"
#define OSD_BOOT_TIMEOUT_MS 30000u
#define OSD_BOOT_RETRY_MS 2000u /* a boot held by noup, or not answered, asks again */

static volatile sig_atomic_t osd_stop_sig, osd_hup_sig;

static void osd_sig(int sig)
{
	osd_stop_sig = 1;
}

/* SIGHUP: logrotate moved log_file; the loop opens it again (not signal-safe here). */
static void osd_hup(int sig)
{
	osd_hup_sig = 1;
}

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
			log_error("osd", "%s: boot %s: %s", osd->name,
				  again ? "waits" : "refused",
				  status != 0 ? (errmsg && errmsg[0] ? errmsg : weft_strerror(status))
					      : "reply without our id");
		osd->boot_held = again;
		osd->boot_retry_ms = clock_now_ms() + OSD_BOOT_RETRY_MS;
		if (!again)
			osd->stopping = true;
		return;
	}
	osd->booted = true;
	osd->boot_held = false;
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
		log_error("osd", "%s: map epoch %u has no osd.%u of our uuid (removed by osd rm or "
			  "purge): stopping", osd->name, map->epoch, osd->id);
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

static int osd_run(struct osd *osd)
{
	uint64_t beacon_ms = conf_get_duration_us(osd->conf, CONF_OSD_HEARTBEAT_INTERVAL) / 1000;

	osd->hb_interval_ms = beacon_ms;
	osd->hb_grace_ms = conf_get_duration_us(osd->conf, CONF_OSD_HEARTBEAT_GRACE) / 1000;
	uint64_t next_beacon = 0, next_tick = 0;
	struct pollfd pfd[5];
	int idle = 0;

	pfd[0].fd = fab_domain_fd(osd->dom);
	pfd[1].fd = monc_fd(osd->monc);
	pfd[2].fd = osd->asok ? asok_fd(osd->asok) : -1; /* poll ignores -1 */
	pfd[3].fd = store_event_fd(osd->store);
	pfd[4].fd = osd_metrics_fd(osd);
	for (int i = 0; i < 5; i++) {
		pfd[i].events = POLLIN;
		pfd[i].revents = 0;
	}
	while (!osd_stop_sig && !osd->stopping) {
		uint64_t now;
		int n = 0, rc;

		rc = osd_net_progress(osd);
		if (rc < 0) {
			log_error("osd", "%s: fabric failed: %s", osd->name, weft_strerror(rc));
			return rc;
		}
		n += rc;
		if (osd->store_pending > 0) {
			rc = store_poll(osd->store);
			if (rc < 0) {
				log_error("osd", "%s: store failed: %s", osd->name,
					  weft_strerror(rc));
				return rc;
			}
			n += rc;
		}
		monc_progress(osd->monc);
		/* ops the PG machines let go meanwhile; replicas first, as in osd_net_progress */
		if (osd->kicks != NULL) {
			store_plug(osd->store);
			osd_pg_kick_pending(osd);
			fab_flush(osd->dom);
			store_unplug(osd->store);
		}
		if (osd_hup_sig)
			osd_log_reopen(osd);
		now = clock_now_ms();
		if (!osd->booted && !osd->boot_pending && osd->boot_retry_ms != 0 &&
		    now >= osd->boot_retry_ms)
			osd_boot(osd);
		if (osd->booted && now >= next_beacon) {
			next_beacon = now + beacon_ms;
			osd_beacon(osd);
		}
		if (now >= next_tick) {
			next_tick = now + 100;
			osd_op_tick(osd);
			osd_repl_tick(osd);
			osd_pg_tick(osd);
			osd_hb_tick(osd);
			osd_admin_poll(osd); /* answers even when the loop never sleeps */
			osd_metrics_poll(osd);
			osd_mem_tick(osd);
			pfd[1].fd = monc_fd(osd->monc);
		}
		if (n > 0) {
			idle = 0;
			continue;
		}
		/*
		 * While commits are pending, spin a little (a barrier often completes
		 * within it), then sleep on the fabric, mon and store fds: three OSDs
		 * and their clients share a few cores, and a spinning OSD takes the CPU
		 * the others' commits need. Without a store fd, nap 50 us instead.
		 */
		if (osd->store_pending > 0 && (++idle <= 64 || pfd[3].fd < 0)) {
			if (idle > 64) {
				struct timespec ts = {0, 50000};

				nanosleep(&ts, NULL);
			}
			continue;
		}
		/* every slot is passed: a negative fd is ignored by poll */
		if (poll(pfd, 5, 10) > 0) {
			uint64_t v;

			if (pfd[2].revents)
				osd_admin_poll(osd);
			if (pfd[4].revents)
				osd_metrics_poll(osd);
			if (pfd[3].revents && read(pfd[3].fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				log_warn("osd", "%s: store eventfd read: %s", osd->name,
					 strerror(errno));
		}
	}
	return 0;
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
			fprintf(stderr, "weft-osd: unknown or incomplete option '%s' (see --help)\n",
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
	osd.op_timeout_ms = conf_get_duration_us(osd.conf, CONF_OSD_OP_TIMEOUT) / 1000;
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
	monc_subscribe(osd.monc, osd_map_cb, &osd);
	signal(SIGTERM, osd_sig);
	signal(SIGINT, osd_sig);
	signal(SIGHUP, osd_hup);
	rc = osd_boot(&osd);
	if (rc == 0)
		rc = osd_run(&osd);
	log_info("osd", "%s: stopping", osd.name);
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
