/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft osd create | activate | list-devices: OSDs on block devices, in the
 * manner of ceph-volume (docs/deploy.md, "OSDs"). The device carries
 * everything (the store superblock in block 0, the OSD label in block 1,
 * osd/store/store_label.h), so an OSD's directory (/var/lib/weft/osd/osd.N:
 * symlinks block, wal, db and the files whoami, fsid, uuid) is derived
 * state that activate rebuilds after a reboot or when it is gone.
 *
 * The directory is dirname(osd_data) of osd.N in the conf, so the [osd]
 * paths decide where it lives; the db defaults to a sibling tree
 * (/var/lib/weft/osd-db/osd.N) that removing the directory does not touch.
 */
#include <blkid/blkid.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "auth/keyring.h"
#include "auth/policy.h"
#include "common/conf.h"
#include "common/log.h"
#include "mon/map.h"
#include "mon/monc/monc.h"
#include "osd/store/store_label.h"
#include "tools/cli.h"

#define DEV_DEFAULT_CONF "/etc/weft/weft.conf"
#define DEV_MAX		 256

struct dev_args {
	const char *conf_file;
	const char *data, *wal, *db;
	long id; /* -1: allocate (create) / every OSD (activate --all) */
	bool all, no_start;
	bool json; /* list-devices --format json */
	unsigned int timeout_ms;
	const char *as; /* who asks the monitors: client.admin, or client.bootstrap-osd */
};

static void dev_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: weft osd create --data DEV [--wal DEV] [--db DIR] [--id N] [--no-start]\n"
	    "                       [--bootstrap] [-c CONF]\n"
	    "       weft osd activate --all | --id N [--no-start] [--bootstrap] [-c CONF]\n"
	    "       weft osd list-devices [-c CONF] [--format plain|json]\n"
	    "create: check DEV is unused (no partition table, filesystem or label, not open),\n"
	    "  pick the lowest free OSD id (or N), make the store (weft-osd --mkfs), write the\n"
	    "  OSD label (id, uuid, cluster fsid, db path) and the OSD's directory, and start\n"
	    "  weft-osd@N when systemd runs. --db defaults to /var/lib/weft/osd-db/osd.N.\n"
	    "activate: find labelled devices of this cluster (fsid), rebuild their OSD\n"
	    "  directories, give the devices to the weft user, start their units.\n"
	    "Both write osd.N's key (made by the monitors; asked as client.admin) to the\n"
	    "  conf's keyring for osd.N when it is not there. --bootstrap: ask as\n"
	    "  client.bootstrap-osd instead (mon 'profile bootstrap-osd': it may make and\n"
	    "  fetch OSD keys and read the map, nothing else), with the conf's keyring for\n"
	    "  that name: an OSD host needs no admin key (docs/deploy.md).\n");
}

static int dev_parse(int argc, char **argv, struct dev_args *a)
{
	static const struct option opts[] = {
	    {"data", required_argument, NULL, 'd'}, {"wal", required_argument, NULL, 'w'},
	    {"db", required_argument, NULL, 'b'},   {"id", required_argument, NULL, 'i'},
	    {"all", no_argument, NULL, 'a'},	    {"no-start", no_argument, NULL, 'n'},
	    {"conf", required_argument, NULL, 'c'}, {"timeout", required_argument, NULL, 't'},
	    {"format", required_argument, NULL, 'f'}, {"bootstrap", no_argument, NULL, 'B'},
	    {"help", no_argument, NULL, 'h'},	    {NULL, 0, NULL, 0},
	};
	char *end;
	int c;

	memset(a, 0, sizeof(*a));
	a->id = -1;
	a->timeout_ms = 10000;
	a->as = "client.admin";
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			a->data = optarg;
			break;
		case 'w':
			a->wal = optarg;
			break;
		case 'b':
			a->db = optarg;
			break;
		case 'i':
			a->id = strtol(optarg, &end, 10);
			if (*end || a->id < 0 || a->id >= MON_OSD_MAX) {
				fprintf(stderr, "weft osd: bad --id '%s'\n", optarg);
				return -1;
			}
			break;
		case 'a':
			a->all = true;
			break;
		case 'f':
			if (cli_format_parse("weft osd", optarg, &a->json) != 0)
				return -1;
			break;
		case 'n':
			a->no_start = true;
			break;
		case 'B':
			a->as = "client.bootstrap-osd";
			break;
		case 'c':
			a->conf_file = optarg;
			break;
		case 't':
			a->timeout_ms = (unsigned int)(strtod(optarg, NULL) * 1000);
			break;
		case 'h':
			dev_usage(stdout);
			return 1;
		default:
			fprintf(stderr, "weft osd: unknown or incomplete option '%s' (see --help)\n",
				argv[optind - 1]);
			return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "weft osd: unexpected argument '%s' (see --help)\n", argv[optind]);
		return -1;
	}
	if (a->conf_file == NULL)
		a->conf_file = DEV_DEFAULT_CONF;
	return 0;
}

static int dev_conf(const char *file, const char *entity, struct conf **conf_out)
{
	struct conf *conf;

	if (conf_create(entity, &conf) != 0)
		return -ENOMEM;
	if (conf_load_file(conf, file) != 0 || conf_apply_env(conf) != 0) {
		conf_destroy(conf);
		return -EINVAL;
	}
	*conf_out = conf;
	return 0;
}

/* /var/lib/weft/osd/osd.N: the directory of osd_data for osd.N. */
static int dev_osd_dir(const char *file, uint32_t id, char *dir, size_t cap, char *dbdef,
		       size_t dbcap, char *fsid, size_t fcap)
{
	char name[32], tmp[PATH_MAX];
	struct conf *conf;
	const char *f;

	snprintf(name, sizeof(name), "osd.%u", id);
	if (dev_conf(file, name, &conf) != 0)
		return -EINVAL;
	snprintf(tmp, sizeof(tmp), "%s", conf_get_str(conf, CONF_OSD_DATA));
	snprintf(dir, cap, "%s", dirname(tmp));
	/* the db tree beside the directories' tree: .../osd -> .../osd-db/osd.N */
	snprintf(tmp, sizeof(tmp), "%s", dir);
	snprintf(dbdef, dbcap, "%s-db/%s", dirname(tmp), name);
	f = conf_get_str(conf, CONF_FSID);
	snprintf(fsid, fcap, "%s", f ? f : "");
	conf_destroy(conf);
	return 0;
}

/* Refuse anything that looks used: a partition table, a filesystem, a label, an opener. */
static int dev_check_unused(const char *path)
{
	struct store_probe p;
	struct stat st;
	blkid_probe pr;
	const char *type = NULL;
	int fd, rc;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "weft osd create: %s: %s\n", path, strerror(errno));
		return -errno;
	}
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode)) {
		fprintf(stderr, "weft osd create: %s is not a block device or a file\n", path);
		return -EINVAL;
	}
	/* O_EXCL on a block device fails with EBUSY while it is mounted or held */
	fd = open(path, O_RDONLY | O_CLOEXEC | (S_ISBLK(st.st_mode) ? O_EXCL : 0));
	if (fd < 0) {
		rc = -errno;
		fprintf(stderr, "weft osd create: %s: %s%s\n", path, strerror(errno),
			errno == EBUSY ? " (mounted, or in use by another program)" : "");
		return rc;
	}
	close(fd);
	rc = store_probe(path, &p);
	if (rc == 0 && p.kind != STORE_PROBE_NONE) {
		fprintf(stderr,
			"weft osd create: %s already holds a weft %s of osd.%u (fsid %s); "
			"wipe it first (wipefs -a and dd over the first MiB) if it is no longer "
			"needed\n",
			path, p.kind == STORE_PROBE_DATA ? "store" : "WAL", p.osd_id, p.fsid);
		return -EEXIST;
	}
	pr = blkid_new_probe_from_filename(path);
	if (pr == NULL) {
		fprintf(stderr, "weft osd create: %s: cannot probe it\n", path);
		return -EIO;
	}
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_enable_partitions(pr, 1);
	rc = blkid_do_safeprobe(pr);
	if (rc == 0 && (blkid_probe_lookup_value(pr, "TYPE", &type, NULL) == 0 ||
			blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL) == 0)) {
		fprintf(stderr, "weft osd create: %s holds %s; wipe it first (wipefs -a %s)\n",
			path, type, path);
		rc = -EEXIST;
	} else if (rc == -2) {
		fprintf(stderr, "weft osd create: %s holds several signatures; wipe it first\n",
			path);
		rc = -EEXIST;
	} else {
		rc = 0;
	}
	blkid_free_probe(pr);
	return rc;
}

/* The lowest id that neither the map nor a directory on this host uses. */
static int dev_pick_id(const struct dev_args *a, long *id_out)
{
	struct conf *conf = NULL;
	struct monc *mc = NULL;
	char errmsg[256] = "", *text = NULL, dir[PATH_MAX], db[PATH_MAX], fsid[64];
	bool used[MON_OSD_MAX] = {false};
	json_t *out = NULL, *o;
	size_t i;
	int rc;

	rc = dev_conf(a->conf_file, a->as, &conf);
	if (rc != 0)
		return rc;
	weft_log_set_level(WEFT_LOG_ERROR);
	rc = monc_create(conf, a->as, &mc);
	if (rc == 0)
		rc = monc_command_sync(mc, "{\"prefix\": \"osd dump\"}", a->timeout_ms, &text,
				       errmsg, sizeof(errmsg));
	if (rc != 0) {
		fprintf(stderr, "weft osd create: asking the mons for the OSD map: %s%s%s\n",
			errmsg, errmsg[0] ? " " : "", strerror(-rc));
		goto out;
	}
	out = json_loads(text, 0, NULL);
	json_array_foreach(json_object_get(out, "osds"), i, o)
	{
		json_int_t id = json_integer_value(json_object_get(o, "id"));

		if (id >= 0 && id < MON_OSD_MAX)
			used[id] = true;
	}
	rc = -ENOSPC;
	for (long id = 0; id < MON_OSD_MAX; id++) {
		struct stat st;

		if (used[id])
			continue;
		if (dev_osd_dir(a->conf_file, (uint32_t)id, dir, sizeof(dir), db, sizeof(db), fsid,
				sizeof(fsid)) == 0 &&
		    stat(dir, &st) == 0)
			continue; /* made here, not booted yet */
		*id_out = id;
		rc = 0;
		break;
	}
out:
	json_decref(out);
	free(text);
	monc_destroy(mc);
	conf_destroy(conf);
	return rc;
}

static int dev_run(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execvp(argv[0], argv);
		fprintf(stderr, "weft osd: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EIO;
}

/* weft-osd next to this weft (an installed tree or a build tree), else from PATH. */
static void dev_osd_binary(char *out, size_t cap)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	snprintf(out, cap, "weft-osd");
	if (n > 0) {
		self[n] = '\0';
		snprintf(out, cap, "%s/weft-osd", dirname(self));
		if (access(out, X_OK) == 0)
			return;
		/* build tree: tools/weft and osd/weft-osd */
		snprintf(out, cap, "%s/../osd/weft-osd", dirname(self));
		if (access(out, X_OK) == 0)
			return;
	}
	snprintf(out, cap, "weft-osd");
}

static int dev_symlink(const char *target, const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	if (symlink(target, path) != 0) {
		fprintf(stderr, "weft osd: symlink %s -> %s: %s\n", path, target, strerror(errno));
		return -errno;
	}
	return 0;
}

static int dev_write_file(const char *dir, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f == NULL || fprintf(f, "%s\n", text) < 0 || fclose(f) != 0) {
		fprintf(stderr, "weft osd: writing %s: %s\n", path, strerror(errno));
		return -EIO;
	}
	return 0;
}

static int dev_mkdirs(const char *path)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0750) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(tmp, 0750) != 0 && errno != EEXIST ? -errno : 0;
}

/* The daemons run as 'weft' (the units' User=): hand it what the OSD opens. */
static void dev_chown(const char *path, bool deref)
{
	struct passwd *pw;

	if (geteuid() != 0 || (pw = getpwnam("weft")) == NULL)
		return;
	if ((deref ? chown(path, pw->pw_uid, pw->pw_gid) : lchown(path, pw->pw_uid, pw->pw_gid)) !=
	    0)
		fprintf(stderr, "weft osd: chown weft %s: %s\n", path, strerror(errno));
}

static void dev_chown_tree(const char *dir)
{
	char cmd[PATH_MAX + 64];

	if (geteuid() != 0 || getpwnam("weft") == NULL)
		return;
	snprintf(cmd, sizeof(cmd), "chown -R weft:weft '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "weft osd: %s failed\n", cmd);
}

/*
 * The OSD's log_file, if it exists: weft-osd --mkfs (run by osd create, as
 * root) made it, and the daemon, as weft, appends to it.
 */
static void dev_chown_log(const char *file, uint32_t id)
{
	char name[32];
	struct conf *conf;
	const char *f;

	snprintf(name, sizeof(name), "osd.%u", id);
	if (geteuid() != 0 || dev_conf(file, name, &conf) != 0)
		return;
	f = conf_get_str(conf, CONF_LOG_FILE);
	if (f != NULL && f[0] && strcmp(f, "-") != 0 && access(f, F_OK) == 0)
		dev_chown(f, true);
	conf_destroy(conf);
}

/* The directory from the label: symlinks, id files, ownership. */
static int dev_build_dir(const char *dir, const char *data, const char *wal,
			 const struct store_label *l)
{
	char text[64];
	int rc = dev_mkdirs(dir);

	if (rc != 0) {
		fprintf(stderr, "weft osd: mkdir %s: %s\n", dir, strerror(-rc));
		return rc;
	}
	rc = dev_symlink(data, dir, "block");
	if (rc == 0 && wal != NULL && wal[0])
		rc = dev_symlink(wal, dir, "wal");
	if (rc == 0)
		rc = dev_symlink(l->db_path, dir, "db");
	snprintf(text, sizeof(text), "%u", l->osd_id);
	if (rc == 0)
		rc = dev_write_file(dir, "whoami", text);
	if (rc == 0)
		rc = dev_write_file(dir, "fsid", l->fsid);
	mon_uuid_str(l->osd_uuid, text);
	if (rc == 0)
		rc = dev_write_file(dir, "uuid", text);
	if (rc == 0)
		rc = dev_write_file(dir, "type", "weft-osd");
	if (rc != 0)
		return rc;
	dev_chown_tree(dir);
	dev_chown(data, true);
	if (wal != NULL && wal[0])
		dev_chown(wal, true);
	dev_chown_tree(l->db_path);
	return 0;
}

/*
 * osd.N's key in its keyring (the conf's keyring for osd.N, mode 0600, the
 * weft user's): made by the monitors with `auth get-or-create` (create),
 * or fetched with `auth get` when activate finds it missing. Asked as
 * client.admin, or with --bootstrap as client.bootstrap-osd (exactly these
 * two commands are what its profile allows). Nothing to do when the conf
 * lets daemons in without keys.
 */
static int dev_osd_key(const struct dev_args *a, uint32_t id, bool create)
{
	char name[32], json[256], errmsg[PROTO_ERRMSG_MAX + 1] = "", why[300], *text = NULL;
	struct auth_keyring_entry e = {0};
	struct conf *conf = NULL, *admin = NULL;
	struct auth_keyring kr;
	struct auth_policy pol;
	struct monc *mc = NULL;
	json_t *out = NULL, *caps, *v;
	const char *path, *svc;
	int rc;

	snprintf(name, sizeof(name), "osd.%u", id);
	rc = dev_conf(a->conf_file, name, &conf);
	if (rc != 0)
		return rc;
	auth_policy_from_conf(conf, &pol);
	path = auth_keyring_path(conf);
	if (!pol.cluster || (!create && access(path, F_OK) == 0))
		goto out;
	snprintf(json, sizeof(json),
		 create ? "{\"prefix\": \"auth get-or-create\", \"entity\": \"%s\", \"caps\": "
			  "[\"mon\", \"profile osd\", \"osd\", \"profile osd\"]}"
			: "{\"prefix\": \"auth get\", \"entity\": \"%s\"}",
		 name);
	rc = dev_conf(a->conf_file, a->as, &admin);
	if (rc == 0)
		rc = monc_create_err(admin, a->as, errmsg, sizeof(errmsg), &mc);
	if (rc == 0)
		rc = monc_command_sync(mc, json, a->timeout_ms, &text, errmsg, sizeof(errmsg));
	if (rc == 0) {
		out = json_loads(text, 0, NULL);
		rc = auth_entity_parse(name, &e.entity, why, sizeof(why));
	}
	if (rc == 0)
		rc = auth_key_decode(json_string_value(json_object_get(out, "key")) ?: "", &e.key,
				     why, sizeof(why));
	caps = json_object_get(out, "caps");
	json_object_foreach(caps, svc, v)
	{
		enum auth_svc s;

		if (rc == 0 && auth_svc_lookup(svc, &s) == 0)
			rc = auth_caps_parse(&e.caps, s, json_string_value(v) ?: "", why,
					     sizeof(why));
	}
	if (rc != 0) {
		fprintf(stderr, "weft osd: the key of %s from the monitors: %s%s%s\n", name,
			errmsg[0] ? errmsg : why, errmsg[0] ? " " : "",
			errmsg[0] ? strerror(-rc) : "");
		goto out;
	}
	auth_keyring_init(&kr);
	rc = auth_keyring_put(&kr, &e);
	if (rc == 0)
		rc = auth_keyring_save(&kr, path, why, sizeof(why));
	auth_keyring_free(&kr);
	if (rc != 0) {
		fprintf(stderr, "weft osd: %s\n", why);
		goto out;
	}
	dev_chown(path, true);
	printf("%s: key in %s\n", name, path);
out:
	auth_key_wipe(&e.key);
	json_decref(out);
	if (text != NULL)
		explicit_bzero(text, strlen(text));
	free(text);
	monc_destroy(mc);
	conf_destroy(admin);
	conf_destroy(conf);
	return rc;
}

static void dev_start(uint32_t id, const struct dev_args *a)
{
	char unit[64];

	snprintf(unit, sizeof(unit), "weft-osd@%u.service", id);
	if (a->no_start)
		return;
	if (access("/run/systemd/system", F_OK) != 0) {
		printf("osd.%u: systemd is not running; start it with: weft-osd -i %u -c %s\n", id,
		       id, a->conf_file);
		return;
	}
	if (dev_run((char *const[]){"systemctl", "enable", "--now", unit, NULL}) != 0)
		fprintf(stderr, "weft osd: systemctl enable --now %s failed\n", unit);
}

static int dev_create(const struct dev_args *a)
{
	char dir[PATH_MAX], dbdef[PATH_MAX], fsid[64], osdbin[PATH_MAX], uuid_s[37];
	char o_data[PATH_MAX + 16], o_wal[PATH_MAX + 16], o_db[PATH_MAX + 16], idtext[16];
	char data_abs[PATH_MAX], wal_abs[PATH_MAX] = "";
	struct store_label l = {0};
	long id = a->id;
	int rc;

	if (a->data == NULL) {
		fprintf(stderr, "weft osd create: --data DEV is required\n");
		return 2;
	}
	if (realpath(a->data, data_abs) == NULL) {
		fprintf(stderr, "weft osd create: %s: %s\n", a->data, strerror(errno));
		return 1;
	}
	if (a->wal != NULL && realpath(a->wal, wal_abs) == NULL) {
		fprintf(stderr, "weft osd create: %s: %s\n", a->wal, strerror(errno));
		return 1;
	}
	if (dev_check_unused(data_abs) != 0 || (wal_abs[0] && dev_check_unused(wal_abs) != 0))
		return 1;
	if (id < 0 && dev_pick_id(a, &id) != 0)
		return 1;
	if (dev_osd_dir(a->conf_file, (uint32_t)id, dir, sizeof(dir), dbdef, sizeof(dbdef), fsid,
			sizeof(fsid)) != 0)
		return 2;
	if (fsid[0] == '\0') {
		fprintf(stderr, "weft osd create: %s sets no fsid: the label needs the cluster's\n",
			a->conf_file);
		return 2;
	}
	if (access(dir, F_OK) == 0) {
		fprintf(stderr, "weft osd create: %s exists: osd.%ld is already on this host\n",
			dir, id);
		return 1;
	}
	l.osd_id = (uint32_t)id;
	{
		const char *db = a->db ? a->db : dbdef;

		if (strlen(fsid) >= sizeof(l.fsid) || strlen(db) >= sizeof(l.db_path) ||
		    strlen(wal_abs) >= sizeof(l.wal_path)) {
			fprintf(stderr,
				"weft osd create: fsid, db or wal path too long for the "
				"label (%u bytes at most)\n",
				STORE_LABEL_PATH_MAX);
			return 2;
		}
		memcpy(l.fsid, fsid, strlen(fsid) + 1);
		memcpy(l.db_path, db, strlen(db) + 1);
		memcpy(l.wal_path, wal_abs, strlen(wal_abs) + 1);
	}
	l.created = (uint64_t)time(NULL);
	if (getrandom(l.osd_uuid, sizeof(l.osd_uuid), 0) != (ssize_t)sizeof(l.osd_uuid))
		return 1;
	l.osd_uuid[6] = (l.osd_uuid[6] & 0x0f) | 0x40;
	l.osd_uuid[8] = (l.osd_uuid[8] & 0x3f) | 0x80;
	mon_uuid_str(l.osd_uuid, uuid_s);
	rc = access(l.db_path, F_OK) == 0 ? -EEXIST : 0;
	if (rc == 0) {
		char parent[PATH_MAX];

		snprintf(parent, sizeof(parent), "%s", l.db_path);
		rc = dev_mkdirs(dirname(parent));
	}
	if (rc != 0) {
		fprintf(stderr, "weft osd create: db %s: %s\n", l.db_path,
			rc == -EEXIST ? "exists (another OSD's?)" : strerror(-rc));
		return 1;
	}
	printf("osd.%ld: data %s%s%s, db %s, uuid %s\n", id, data_abs, wal_abs[0] ? ", wal " : "",
	       wal_abs, l.db_path, uuid_s);
	fflush(stdout);
	/* the store: weft-osd --mkfs on the devices themselves, with our uuid */
	dev_osd_binary(osdbin, sizeof(osdbin));
	snprintf(idtext, sizeof(idtext), "%ld", id);
	snprintf(o_data, sizeof(o_data), "--osd_data=%s", data_abs);
	snprintf(o_wal, sizeof(o_wal), "--osd_wal=%s", wal_abs);
	snprintf(o_db, sizeof(o_db), "--osd_db=%s", l.db_path);
	rc = dev_run((char *const[]){osdbin, "-i", idtext, "-c", (char *)a->conf_file, "--mkfs",
				     "--uuid", uuid_s, o_data, o_wal, o_db, NULL});
	if (rc != 0) {
		fprintf(stderr, "weft osd create: mkfs of osd.%ld failed (see above)\n", id);
		return 1;
	}
	rc = store_label_write(data_abs, &l);
	if (rc != 0) {
		fprintf(stderr, "weft osd create: writing the label on %s: %s\n", data_abs,
			strerror(-rc));
		return 1;
	}
	if (dev_build_dir(dir, data_abs, wal_abs, &l) != 0)
		return 1;
	if (dev_osd_key(a, (uint32_t)id, true) != 0)
		return 1;
	dev_chown_log(a->conf_file, (uint32_t)id);
	printf("osd.%ld: created in %s\n", id, dir);
	dev_start((uint32_t)id, a);
	return 0;
}

struct dev_found {
	char path[PATH_MAX];
	struct store_probe probe;
	struct store_label label;
	bool labelled;
};

/* Every block device of this host (and its partitions) that holds a weft store or WAL. */
static int dev_scan(struct dev_found *out, int cap)
{
	FILE *f = fopen("/proc/partitions", "r");
	char line[256], name[128];
	int n = 0;

	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL && n < cap) {
		unsigned long long blocks;
		unsigned int maj, min;
		struct dev_found *d = &out[n];

		if (sscanf(line, "%u %u %llu %127s", &maj, &min, &blocks, name) != 4 || blocks == 0)
			continue;
		snprintf(d->path, sizeof(d->path), "/dev/%s", name);
		if (store_probe(d->path, &d->probe) != 0 || d->probe.kind == STORE_PROBE_NONE)
			continue;
		d->labelled =
		    d->probe.kind == STORE_PROBE_DATA && store_label_read(d->path, &d->label) == 0;
		n++;
	}
	fclose(f);
	return n;
}

static int dev_activate(const struct dev_args *a, bool list_only)
{
	static struct dev_found found[DEV_MAX];
	char dir[PATH_MAX], dbdef[PATH_MAX], fsid[64];
	json_t *list = list_only && a->json ? json_array() : NULL;
	int n, done = 0, failed = 0;

	if (!list_only && !a->all && a->id < 0) {
		fprintf(stderr, "weft osd activate: --all or --id N\n");
		return 2;
	}
	n = dev_scan(found, DEV_MAX);
	if (n < 0) {
		fprintf(stderr, "weft osd: reading /proc/partitions: %s\n", strerror(-n));
		json_decref(list);
		return 1;
	}
	for (int i = 0; i < n; i++) {
		struct dev_found *d = &found[i];
		const char *wal = NULL;

		if (d->probe.kind != STORE_PROBE_DATA)
			continue;
		if (!d->labelled) {
			fprintf(stderr,
				"weft osd: %s holds the store of osd.%u but no OSD label "
				"(made by hand?); skipped\n",
				d->path, d->probe.osd_id);
			continue;
		}
		if (list_only) {
			char u[37];

			mon_uuid_str(d->label.osd_uuid, u);
			if (list != NULL)
				json_array_append_new(
				    list, json_pack("{s:i, s:s, s:s, s:s, s:s}", "id",
						    (int)d->label.osd_id, "path", d->path, "uuid", u,
						    "fsid", d->label.fsid, "db", d->label.db_path));
			else
				printf("osd.%u %s uuid %s fsid %s db %s\n", d->label.osd_id,
				       d->path, u, d->label.fsid, d->label.db_path);
			continue;
		}
		if (a->id >= 0 && d->label.osd_id != (uint32_t)a->id)
			continue;
		if (dev_osd_dir(a->conf_file, d->label.osd_id, dir, sizeof(dir), dbdef,
				sizeof(dbdef), fsid, sizeof(fsid)) != 0)
			return 2;
		if (strcmp(fsid, d->label.fsid) != 0) {
			if (a->id >= 0)
				fprintf(stderr,
					"weft osd activate: %s (osd.%u) belongs to cluster %s, "
					"not %s\n",
					d->path, d->label.osd_id, d->label.fsid, fsid);
			continue;
		}
		if (d->probe.wal_separate) {
			for (int k = 0; k < n && wal == NULL; k++)
				if (found[k].probe.kind == STORE_PROBE_WAL &&
				    found[k].probe.wal_nonce == d->probe.wal_nonce &&
				    found[k].probe.osd_id == d->probe.osd_id &&
				    !strcmp(found[k].probe.fsid, d->probe.fsid))
					wal = found[k].path;
			if (wal == NULL) {
				fprintf(stderr,
					"weft osd activate: osd.%u on %s: its WAL device "
					"(was %s) is not present\n",
					d->label.osd_id, d->path, d->label.wal_path);
				failed++;
				continue;
			}
		}
		if (access(d->label.db_path, F_OK) != 0) {
			fprintf(stderr, "weft osd activate: osd.%u on %s: its db %s is gone\n",
				d->label.osd_id, d->path, d->label.db_path);
			failed++;
			continue;
		}
		if (dev_build_dir(dir, d->path, wal, &d->label) != 0 ||
		    dev_osd_key(a, d->label.osd_id, false) != 0) {
			failed++;
			continue;
		}
		dev_chown_log(a->conf_file, d->label.osd_id);
		printf("osd.%u: activated %s in %s\n", d->label.osd_id, d->path, dir);
		dev_start(d->label.osd_id, a);
		done++;
	}
	if (list_only) {
		if (list != NULL) {
			char *text = json_dumps(list, JSON_INDENT(2));

			printf("%s\n", text != NULL ? text : "[]");
			free(text);
			json_decref(list);
		}
		return 0;
	}
	if (a->id >= 0 && done == 0 && failed == 0) {
		fprintf(stderr, "weft osd activate: no device labelled osd.%ld of this cluster\n",
			a->id);
		return 1;
	}
	if (done == 0 && failed == 0)
		printf("no labelled devices of this cluster found\n");
	return failed ? 1 : 0;
}

int cli_osd_dev_main(int argc, char **argv)
{
	const char *sub = argv[1];
	struct dev_args a;
	int rc = dev_parse(argc - 1, argv + 1, &a);

	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (!strcmp(sub, "create"))
		return dev_create(&a);
	if (!strcmp(sub, "activate"))
		return dev_activate(&a, false);
	return dev_activate(&a, true);
}
