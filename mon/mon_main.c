/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft-mon: a monitor. Keeps the cluster map in a Raft quorum of the
 * monitors listed in mon_host; serves clients, OSDs and the CLI on the
 * fabric at its mon_addr; talks Raft on mon_addr's port +
 * mon_raft_port_offset. docs/mon.md.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/conf_runtime.h"
#include "common/log.h"
#include "common/pidfile.h"
#include "common/version.h"
#include <jansson.h>

#include "mon/mon_priv.h"
#include "mon/monc/monc.h"

#define MON_TICK_MS 5
#define MON_SNAPSHOT_THRESHOLD 256
#define MON_SNAPSHOT_TRAILING 128
#define MON_MARKER "weft-mon"

static void mon_usage(FILE *out)
{
	fprintf(out, "usage: weft-mon -i ID [-c FILE] [--mkfs] [--KEY=VALUE...]\n"
		     "\n"
		     "  -i, --id ID     this monitor's id: its section is [mon.ID] (mon_addr)\n"
		     "  -c, --conf FILE configuration file (default /etc/weft/weft.conf)\n"
		     "  --mkfs          create the data directory (mon_data) and bootstrap Raft\n"
		     "                  with every monitor of mon_host, then exit\n"
		     "  --join ADDR[,ADDR]  with --mkfs: create mon_data for a monitor that\n"
		     "                  `weft mon add` added to the running cluster at ADDR\n"
		     "                  (\"\" = mon_host); it catches up, then votes\n"
		     "  -h, --help      this text\n"
		     "  --version       version and git commit of this build\n");
}

static int mon_addr_fmt(const struct conf_addr *a, uint16_t port, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, a->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a->ip, port);

	return n > 0 && (size_t)n < cap ? 0 : -ENAMETOOLONG;
}

/*
 * Self from mon_addr of [mon.ID]. A bootstrap (--mkfs without --join)
 * also reads mon_host: every monitor there is a voter, rank r = raft id
 * r + 1. Otherwise the peers come from raft's configuration once raft
 * has started (mon_member.c): mon_host then only tells clients where to
 * look first.
 */
static int mon_peers_load(struct mon *mon, bool bootstrap)
{
	unsigned int n, ns;
	const struct conf_addr *hosts = conf_get_addrs(mon->conf, CONF_MON_HOST, &n);
	const struct conf_addr *self = conf_get_addrs(mon->conf, CONF_MON_ADDR, &ns);
	uint16_t defport = (uint16_t)conf_get_int(mon->conf, CONF_MON_PORT);
	int64_t off = conf_get_int(mon->conf, CONF_MON_RAFT_PORT_OFFSET);
	uint16_t sport;

	if (ns == 0) {
		log_error("mon", "%s: no mon_addr for %s (is there a [%s] section?)", mon->name,
			  mon->name, mon->name);
		return -EINVAL;
	}
	if (ns != 1) {
		log_error("mon", "%s: mon_addr must be one address in [%s]", mon->name, mon->name);
		return -EINVAL;
	}
	sport = self[0].port != 0 ? self[0].port : defport;
	if (sport + off > 65535) {
		log_error("mon", "%s: raft port %lld of %s is out of range", mon->name,
			  (long long)(sport + off), self[0].ip);
		return -EINVAL;
	}
	mon_addr_fmt(&self[0], sport, mon->self_addr, sizeof(mon->self_addr));
	mon_addr_fmt(&self[0], (uint16_t)(sport + off), mon->self_raft_addr,
		     sizeof(mon->self_raft_addr));
	if (!bootstrap) {
		mon->npeers = 1;
		mon->self = 0;
		memset(&mon->peers[0], 0, sizeof(mon->peers[0]));
		snprintf(mon->peers[0].addr, sizeof(mon->peers[0].addr), "%s", mon->self_addr);
		snprintf(mon->peers[0].raft_addr, sizeof(mon->peers[0].raft_addr), "%s",
			 mon->self_raft_addr);
		return 0;
	}
	if (n == 0 || n > MON_PEERS_MAX) {
		log_error("mon", "%s: mon_host lists %u monitors; 1..%d needed", mon->name, n,
			  MON_PEERS_MAX);
		return -EINVAL;
	}
	mon->npeers = n;
	mon->self = n;
	for (unsigned int i = 0; i < n; i++) {
		uint16_t port = hosts[i].port != 0 ? hosts[i].port : defport;

		if (port + off > 65535) {
			log_error("mon", "%s: raft port %lld of %s is out of range", mon->name,
				  (long long)(port + off), hosts[i].ip);
			return -EINVAL;
		}
		mon->peers[i].id = i + 1;
		mon_addr_fmt(&hosts[i], port, mon->peers[i].addr, sizeof(mon->peers[i].addr));
		mon_addr_fmt(&hosts[i], (uint16_t)(port + off), mon->peers[i].raft_addr,
			     sizeof(mon->peers[i].raft_addr));
		if (!strcmp(hosts[i].ip, self[0].ip) && port == sport)
			mon->self = i;
	}
	if (mon->self == n) {
		log_error("mon", "%s: mon_addr %s:%u is not in mon_host", mon->name, self[0].ip,
			  self[0].port);
		return -EINVAL;
	}
	mon->self_id = mon->peers[mon->self].id;
	return 0;
}

/* The raft id written by --mkfs into mon_data's marker file. */
static int mon_marker_read(struct mon *mon, const char *path)
{
	unsigned long long id = 0;
	FILE *f = fopen(path, "r");
	int n = f != NULL ? fscanf(f, "raft_id %llu", &id) : 0;

	if (f != NULL)
		fclose(f);
	if (n != 1 || id == 0) {
		log_error("mon", "%s: %s has no raft id (a damaged mon_data?)", mon->name, path);
		return -EINVAL;
	}
	mon->self_id = (raft_id)id;
	mon->peers[0].id = mon->self_id;
	return 0;
}

/*
 * Raft over the authenticated transport (mon_raft_auth.h). need_key: a
 * running monitor (the Raft port opens); --mkfs only writes raft's initial
 * configuration and has no key yet.
 */
static int mon_raft_open(struct mon *mon, bool need_key)
{
	struct mon_raft_auth_conf ac = {
	    .name = mon->name,
	    .timeout_ms = conf_get_duration_us(mon->conf, CONF_MON_RAFT_HANDSHAKE_TIMEOUT) / 1000,
	    .unauth_max = (unsigned int)conf_get_int(mon->conf, CONF_MON_RAFT_UNAUTH_MAX),
	};
	int rc;

	if (need_key) {
		rc = mon_fsid_get(mon, ac.fsid);
		if (rc == 0)
			rc = mon_raft_key_load(mon, &ac.key);
		if (rc != 0)
			return rc;
		ac.have_key = true;
	}
	rc = mon_raft_auth_init(&mon->transport, &mon->loop, &ac);
	auth_key_wipe(&ac.key);
	if (rc != 0)
		return -ENOMEM;
	rc = raft_uv_init(&mon->io, &mon->loop, mon->data_dir, &mon->transport);
	if (rc != 0) {
		log_error("mon", "%s: raft storage in %s: %s", mon->name, mon->data_dir,
			  mon->io.errmsg);
		mon_raft_auth_close(&mon->transport);
		return -EIO;
	}
	mon_raft_setup(mon);
	rc = raft_init(&mon->raft, &mon->io, &mon->fsm, mon->self_id, mon->self_raft_addr);
	if (rc != 0) {
		log_error("mon", "%s: raft init: %s", mon->name, raft_errmsg(&mon->raft));
		raft_uv_close(&mon->io);
		mon_raft_auth_close(&mon->transport);
		return -EIO;
	}
	return 0;
}

/* raft's uv I/O and transport may only go once raft itself is closed. */
static void mon_raft_close_cb(struct raft *r)
{
	struct mon *mon = r->data;

	raft_uv_close(&mon->io);
	mon_raft_auth_close(&mon->transport);
}

/* mkdir -p: a dev cluster's mon_data ("dev-cluster/$name") may not exist yet. */
static int mon_mkdir_p(const char *dir)
{
	char path[PATH_MAX];
	size_t len = strlen(dir);

	if (len == 0 || len >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, len + 1);
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/*
 * --join: the cluster assigned our raft id at `weft mon add`; ask it (the
 * monitors of --join, else mon_host). Raft itself starts empty and gets
 * the log or a snapshot from the leader once it adds us.
 */
static int mon_join_lookup(struct mon *mon, const char *join)
{
	char errmsg[PROTO_ERRMSG_MAX + 1] = "", *out = NULL;
	struct monc *mc = NULL;
	json_t *root = NULL, *m;
	size_t i;
	int rc;

	if (join[0] != '\0' && conf_set(mon->conf, "mon_host", join, "--join") != 0) {
		log_error("mon", "%s: --join %s: not a list of monitor addresses", mon->name, join);
		return -EINVAL;
	}
	rc = monc_create(mon->conf, mon->name, &mc);
	if (rc == 0)
		rc = monc_command_sync(mc, "{\"prefix\": \"mon stat\"}", 15000, &out, errmsg,
				       sizeof(errmsg));
	if (rc != 0) {
		log_error("mon", "%s: --join: cannot ask the monitors (%s): %s", mon->name,
			  conf_get_str(mon->conf, CONF_MON_HOST),
			  errmsg[0] != '\0' ? errmsg : strerror(-rc));
		goto out;
	}
	root = json_loads(out, 0, NULL);
	rc = -ENOENT;
	json_array_foreach(json_object_get(root, "members"), i, m) {
		const char *name = json_string_value(json_object_get(m, "name"));
		const char *addr = json_string_value(json_object_get(m, "addr"));

		if (name == NULL || strcmp(name, mon->name + 4) != 0)
			continue;
		if (addr == NULL || strcmp(addr, mon->self_addr) != 0) {
			log_error("mon", "%s: the cluster has %s at %s, but mon_addr is %s", mon->name,
				  mon->name, addr != NULL ? addr : "?", mon->self_addr);
			rc = -EINVAL;
			goto out;
		}
		mon->self_id = (raft_id)json_integer_value(json_object_get(m, "id"));
		rc = mon->self_id != 0 ? 0 : -EINVAL;
		break;
	}
	if (rc == -ENOENT)
		log_error("mon", "%s: not a monitor of the cluster at %s: run `weft mon add %s %s` "
			  "first", mon->name, conf_get_str(mon->conf, CONF_MON_HOST), mon->name + 4,
			  mon->self_addr);
out:
	json_decref(root);
	free(out);
	monc_destroy(mc);
	return rc;
}

static int mon_mkfs(struct mon *mon, const char *join)
{
	char admin_kr[PATH_MAX + 16];
	struct raft_configuration cfg;
	char path[PATH_MAX + 16];
	FILE *f;
	int rc;

	rc = mon_mkdir_p(mon->data_dir);
	if (rc != 0) {
		log_error("mon", "%s: mkdir %s: %s", mon->name, mon->data_dir, strerror(-rc));
		return rc;
	}
	snprintf(path, sizeof(path), "%s/%s", mon->data_dir, MON_MARKER);
	if (access(path, F_OK) == 0) {
		log_error("mon", "%s: %s is already bootstrapped", mon->name, mon->data_dir);
		return -EEXIST;
	}
	if (join != NULL) {
		rc = mon_join_lookup(mon, join);
		if (rc == 0)
			rc = mon_auth_join_keyring(mon); /* mon. for the Raft port too */
		if (rc != 0)
			return rc;
		goto write_marker;
	}
	rc = mon_raft_open(mon, false);
	if (rc != 0)
		return rc;
	mon->raft.data = mon;
	raft_configuration_init(&cfg);
	for (unsigned int i = 0; i < mon->npeers && rc == 0; i++)
		rc = raft_configuration_add(&cfg, mon->peers[i].id, mon->peers[i].raft_addr,
					    RAFT_VOTER);
	if (rc == 0)
		rc = raft_bootstrap(&mon->raft, &cfg);
	if (rc != 0)
		log_error("mon", "%s: raft bootstrap: %s", mon->name, raft_strerror(rc));
	raft_configuration_close(&cfg);
	raft_close(&mon->raft, mon_raft_close_cb);
	uv_run(&mon->loop, UV_RUN_DEFAULT);
	if (rc != 0)
		return -EIO;
	/* mon. and client.admin: the first leader seeds the replicated auth database with them. */
	rc = mon_auth_seed_write(mon, admin_kr, sizeof(admin_kr));
	if (rc != 0)
		return rc;
	printf("%s: admin keyring (client.admin and mon., mode 0600): %s\n", mon->name, admin_kr);
	log_info("mon", "%s: admin keyring (client.admin and mon.): %s", mon->name, admin_kr);
write_marker:
	f = fopen(path, "w");
	if (f == NULL || fprintf(f, "raft_id %llu\nmons %u\n", (unsigned long long)mon->self_id,
				 mon->npeers) < 0 ||
	    fclose(f) != 0) {
		log_error("mon", "%s: writing %s: %s", mon->name, path, strerror(errno));
		return -EIO;
	}
	if (join != NULL)
		log_info("mon", "%s: created %s to join the cluster as raft id %llu (raft at %s); "
			 "start it: it catches up from the leader and then votes", mon->name,
			 mon->data_dir, (unsigned long long)mon->self_id, mon->self_raft_addr);
	else
		log_info("mon", "%s: bootstrapped %s as rank %u of %u (raft id %llu at %s)",
			 mon->name, mon->data_dir, mon->self, mon->npeers,
			 (unsigned long long)mon->self_id, mon->self_raft_addr);
	return 0;
}

static void mon_stop(struct mon *mon);

static void mon_tick_cb(uv_timer_t *t)
{
	struct mon *mon = t->data;

	if (mon->stopping)
		return;
	mon_svc_tick(mon);
	mon_member_tick(mon);
	mon_raft_tick(mon);
	/* removed: relay the answers still forwarded (the removal's own, often) first */
	if (mon->removed && (mon->fwds == NULL || clock_now_ms() >= mon->removed_ms + 3000)) {
		mon_stop(mon);
		return;
	}
	mon_admin_tick(mon);
	mon_metrics_tick(mon);
}

static void mon_handle_close_cb(uv_handle_t *h)
{
}

static void mon_stop(struct mon *mon)
{
	if (mon->stopping)
		return;
	mon->stopping = true;
	log_info("mon", "%s: stopping", mon->name);
	uv_timer_stop(&mon->tick);
	uv_close((uv_handle_t *)&mon->tick, mon_handle_close_cb);
	uv_close((uv_handle_t *)&mon->poll, mon_handle_close_cb);
	uv_close((uv_handle_t *)&mon->sigterm, mon_handle_close_cb);
	uv_close((uv_handle_t *)&mon->sigint, mon_handle_close_cb);
	uv_close((uv_handle_t *)&mon->sighup, mon_handle_close_cb);
	mon_admin_stop(mon);
	mon_metrics_stop(mon);
	mon_jobs_fail(mon, -ESHUTDOWN, "the monitor is shutting down");
	raft_close(&mon->raft, mon_raft_close_cb);
}

static void mon_signal_cb(uv_signal_t *s, int signum)
{
	struct mon *mon = s->data;
	int rc;

	if (signum != SIGHUP) {
		mon_stop(mon);
		return;
	}
	/* logrotate moved log_file: write on in a new one at the same path */
	rc = weft_log_reopen();
	if (rc != 0)
		log_error("mon", "%s: SIGHUP: cannot reopen %s: %s", mon->name,
			  conf_get_str(mon->conf, CONF_LOG_FILE), strerror(-rc));
	else
		log_info("mon", "%s: SIGHUP: log file reopened", mon->name);
}

/* One monitor per data directory: a second start says who holds it and exits. */
static int mon_lock(struct mon *mon, int *fd_out)
{
	char path[PATH_MAX + 16];
	pid_t holder = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/%s.pid", mon->data_dir, MON_MARKER);
	rc = weft_pidfile_lock(path, fd_out, &holder);
	if (rc == -EEXIST)
		log_error("mon", "%s is already running (pid %ld)", mon->name, (long)holder);
	else if (rc != 0)
		log_error("mon", "%s: cannot lock %s: %s", mon->name, path, strerror(-rc));
	return rc;
}

static int mon_run(struct mon *mon)
{
	char path[PATH_MAX + 16];
	int lock_fd = -1;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", mon->data_dir, MON_MARKER);
	if (access(path, F_OK) != 0) {
		log_error("mon", "%s: %s is not a monitor data directory (run weft-mon --mkfs -i "
			  "ID first)", mon->name, mon->data_dir);
		return -ENOENT;
	}
	rc = mon_marker_read(mon, path);
	if (rc == 0)
		rc = mon_member_check_removed(mon);
	if (rc != 0)
		return rc;
	rc = mon_lock(mon, &lock_fd);
	if (rc != 0)
		return rc;
	rc = mon_svc_start(mon);
	if (rc != 0)
		goto err_lock;
	rc = mon_raft_open(mon, true);
	if (rc != 0)
		goto err_svc;
	mon->start_s = (uint64_t)time(NULL);
	mon->raft.data = mon;
	raft_set_election_timeout(&mon->raft, mon->election_ms);
	raft_set_heartbeat_timeout(&mon->raft, mon->election_ms / 10 > 50 ? mon->election_ms / 10
									   : 50);
	raft_set_snapshot_threshold(&mon->raft, MON_SNAPSHOT_THRESHOLD);
	raft_set_snapshot_trailing(&mon->raft, MON_SNAPSHOT_TRAILING);
	raft_set_pre_vote(&mon->raft, true);
	rc = raft_start(&mon->raft);
	if (rc != 0) {
		log_error("mon", "%s: raft start (raft port %s): %s", mon->name,
			  mon->self_raft_addr, raft_errmsg(&mon->raft));
		raft_close(&mon->raft, mon_raft_close_cb);
		uv_run(&mon->loop, UV_RUN_DEFAULT);
		rc = -EIO;
		goto err_svc;
	}
	mon_member_sync(mon);
	if (mon_member_check_start(mon) != 0) {
		raft_close(&mon->raft, mon_raft_close_cb);
		uv_run(&mon->loop, UV_RUN_DEFAULT);
		rc = -EPERM;
		goto err_svc;
	}
	uv_timer_init(&mon->loop, &mon->tick);
	mon->tick.data = mon;
	uv_timer_start(&mon->tick, mon_tick_cb, MON_TICK_MS, MON_TICK_MS);
	uv_signal_init(&mon->loop, &mon->sigterm);
	uv_signal_init(&mon->loop, &mon->sigint);
	uv_signal_init(&mon->loop, &mon->sighup);
	mon->sigterm.data = mon->sigint.data = mon->sighup.data = mon;
	uv_signal_start(&mon->sigterm, mon_signal_cb, SIGTERM);
	uv_signal_start(&mon->sigint, mon_signal_cb, SIGINT);
	uv_signal_start(&mon->sighup, mon_signal_cb, SIGHUP);
	mon_admin_start(mon);
	mon_metrics_start(mon);
	log_info("mon", "%s: raft id %llu, rank %u of %u, election timeout %u ms, map epoch %u",
		 mon->name, (unsigned long long)mon->self_id, mon->self, mon->npeers,
		 mon->election_ms, mon->map.epoch);
	uv_run(&mon->loop, UV_RUN_DEFAULT);
	rc = mon->exit_rc;
err_svc:
	mon_svc_stop(mon);
err_lock:
	weft_pidfile_unlock(lock_fd);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "id", required_argument, NULL, 'i' },	 { "conf", required_argument, NULL, 'c' },
		{ "mkfs", no_argument, NULL, 'm' },	 { "help", no_argument, NULL, 'h' },
		{ "join", required_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	const char *id = NULL, *file = NULL, *join = NULL;
	static struct mon mon;
	enum weft_log_level level;
	char entity[80];
	bool mkfs = false, loop_open = false;
	static char **flags_argv; /* static: reachable, not a leak, on an early return */
	int c, rc, flags_argc;

	if (weft_version_arg(argc, argv, "weft-mon"))
		return 0;

	signal(SIGPIPE, SIG_IGN);
	/*
	 * The flags are applied twice: once to check them before getopt (which
	 * must not see them), and again to the conf of mon.ID once the id is
	 * known; the second pass needs them back, so it works on a copy.
	 */
	flags_argc = argc;
	flags_argv = calloc((size_t)argc + 1, sizeof(*flags_argv));
	if (flags_argv == NULL)
		return 1;
	memcpy(flags_argv, argv, (size_t)argc * sizeof(*argv));
	rc = conf_create("mon", &mon.conf);
	if (rc != 0)
		return 1;
	/* --KEY=VALUE flags first; then our own options. */
	if (conf_apply_args(mon.conf, &argc, argv) != 0)
		return 2;
	opterr = 0; /* one line of ours instead of getopt's */
	while ((c = getopt_long(argc, argv, "i:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			id = optarg;
			break;
		case 'c':
			file = optarg;
			break;
		case 'm':
			mkfs = true;
			break;
		case 'j':
			join = optarg;
			break;
		case 'h':
			mon_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "weft-mon: unknown or incomplete option '%s' (see --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (id == NULL || optind != argc || (join != NULL && !mkfs)) {
		fprintf(stderr, "weft-mon: %s (see --help)\n",
			id == NULL	  ? "-i ID is required"
			: optind != argc ? "unexpected argument"
					 : "--join goes with --mkfs");
		return 2;
	}
	snprintf(entity, sizeof(entity), "mon.%s", id);
	conf_destroy(mon.conf);
	if (conf_create(entity, &mon.conf) != 0)
		return 2;
	if (file == NULL && access("/etc/weft/weft.conf", F_OK) == 0)
		file = "/etc/weft/weft.conf";
	if ((file != NULL && conf_load_file(mon.conf, file) != 0) ||
	    conf_apply_env(mon.conf) != 0 || conf_apply_args(mon.conf, &flags_argc, flags_argv) != 0)
		return 2;
	free(flags_argv);
	if (weft_log_level_parse(conf_get_str(mon.conf, CONF_LOG_LEVEL), &level) != 0)
		level = WEFT_LOG_INFO;
	weft_log_open(entity, level, conf_get_str(mon.conf, CONF_LOG_FILE));
	weft_log_conf_apply(mon.conf); /* debug_mon, debug_fabric, ... */
	log_info("mon", "%s: weft-mon %s", entity, weft_version_full());
	mon.name = conf_entity(mon.conf);
	snprintf(mon.data_dir, sizeof(mon.data_dir), "%s", conf_get_str(mon.conf, CONF_MON_DATA));
	mon.grace_ms = conf_get_duration_us(mon.conf, CONF_OSD_HEARTBEAT_GRACE) / 1000;
	mon.down_out_s = conf_get_duration_us(mon.conf, CONF_MON_OSD_DOWN_OUT_INTERVAL) / 1000000;
	mon.min_reporters = (unsigned int)conf_get_int(mon.conf, CONF_MON_OSD_MIN_DOWN_REPORTERS);
	mon.markdown_max = (unsigned int)conf_get_int(mon.conf, CONF_MON_OSD_REPORT_MARKDOWN_MAX);
	if (mon.markdown_max > MON_MARKDOWNS_MAX)
		mon.markdown_max = MON_MARKDOWNS_MAX;
	mon.markdown_period_ms =
	    conf_get_duration_us(mon.conf, CONF_MON_OSD_REPORT_MARKDOWN_PERIOD) / 1000;
	mon.election_ms =
		(unsigned int)(conf_get_duration_us(mon.conf, CONF_MON_ELECTION_TIMEOUT) / 1000);
	{
		char err[160];

		if (mon_cap_conf_ratios(mon.conf, &mon.conf_ratios, err, sizeof(err)) != 0) {
			log_error("mon", "%s: %s", entity, err); /* stderr without log_file */
			conf_destroy(mon.conf);
			weft_log_close();
			return 2;
		}
	}
	mon_map_init(&mon.map);
	mon_auth_init(&mon.auth);
	rc = mon_peers_load(&mon, mkfs && join == NULL);
	if (rc == 0) {
		rc = uv_loop_init(&mon.loop) == 0 ? 0 : -ENOMEM;
		loop_open = rc == 0;
	}
	if (rc == 0)
		rc = mkfs ? mon_mkfs(&mon, join) : mon_run(&mon);
	/* only a loop that was opened: mon_peers_load fails before there is one */
	if (loop_open)
		uv_loop_close(&mon.loop);
	mon_hist_free(&mon);
	mon_map_free(&mon.map);
	mon_auth_free(&mon.auth);
	free(mon.live);
	conf_destroy(mon.conf);
	weft_log_close();
	return rc == 0 ? 0 : 1;
}
