/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft-mount: every volume of a pool as a regular file (docs/mount.md).
 *
 *   weft-mount -c CONF [--name client.x] POOL MOUNTPOINT [-f] [-o opts]
 *
 * Order matters: arguments and FUSE options are checked before anything
 * touches the cluster (bad ones exit 2); the process detaches before
 * libweft starts (a fork must not split a fabric's threads) but the parent
 * waits until the mount works, so every start-up error reaches the
 * terminal and the exit status; the cluster, the pool and the mountpoint
 * are checked before the file system is mounted, so a failure leaves no
 * mount behind.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "client/mount/mount.h"
#include "common/conf.h"
#include "common/conf_runtime.h"
#include "common/log.h"
#include "common/version.h"

#define MOUNT_DEFAULT_THREADS 16
#define MOUNT_MAX_FUSE_ARGS   64

struct mount_args {
	const char *conf;
	const char *name;
	const char *pool;
	const char *mountpoint;
	bool foreground;
	unsigned int threads;
	const char *timeout; /* connect bound, as a conf duration ("10s") */
	bool shared;
	char *fuse_argv[MOUNT_MAX_FUSE_ARGS];
	int fuse_argc;
};

static void mount_usage(FILE *out)
{
	fprintf(out,
		"usage: weft-mount -c CONF [--name client.NAME] POOL MOUNTPOINT [-f] [-o OPTS]\n"
		"Show every volume of POOL as a regular file under MOUNTPOINT (FUSE).\n"
		"  -c, --conf FILE     conf file (default /etc/weft/weft.conf)\n"
		"  -n, --name NAME     client identity (default client.admin)\n"
		"  -k, --keyring FILE  where its key is (default: the conf's keyring)\n"
		"  -f, --foreground    stay in the foreground (default: detach once mounted)\n"
		"  -o OPTS             FUSE mount options, comma separated (allow_other, ro, "
		"debug...)\n"
		"  -t, --threads N     FUSE worker threads (default %d)\n"
		"      --shared        open volumes for writing without the exclusive lock\n"
		"                      (default: one writer per volume across the cluster)\n"
		"      --timeout SECS  give up reaching the cluster after SECS (default:\n"
		"                      client_op_timeout)\n"
		"  -h, --help          this text\n"
		"  --version           version and git commit of this build\n"
		"Unmount with 'fusermount3 -u MOUNTPOINT' or SIGTERM. Options of 'weft config\n"
		"help' can be set as WEFT_<KEY> environment variables. docs/mount.md has more.\n",
		MOUNT_DEFAULT_THREADS);
}

__attribute__((format(printf, 1, 0))) static int mount_bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "weft-mount: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see --help)\n");
	return 2;
}

/* 0, 1 (--help printed) or 2 (bad usage, printed). */
static int mount_args_parse(int argc, char **argv, struct mount_args *a)
{
	static const struct option longopts[] = {
	    {"conf", required_argument, NULL, 'c'},    {"name", required_argument, NULL, 'n'},
	    {"keyring", required_argument, NULL, 'k'},
	    {"foreground", no_argument, NULL, 'f'},    {"threads", required_argument, NULL, 't'},
	    {"timeout", required_argument, NULL, 'T'}, {"help", no_argument, NULL, 'h'},
	    {"shared", no_argument, NULL, 'S'},	       {NULL, 0, NULL, 0},
	};
	char *end;
	long v;
	int c;

	a->name = "client.admin";
	a->threads = MOUNT_DEFAULT_THREADS;
	a->fuse_argv[a->fuse_argc++] = argv[0];
	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:n:k:fo:t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			a->conf = optarg;
			break;
		case 'k':
			/* libweft reads the conf, then WEFT_<KEY>: this overrides its keyring */
			if (setenv("WEFT_KEYRING", optarg, 1) != 0)
				return mount_bad_usage("--keyring '%s': cannot set it", optarg);
			break;
		case 'n':
			if (strncmp(optarg, "client.", 7) != 0 || optarg[7] == '\0')
				return mount_bad_usage("--name must be client.NAME, not '%s'",
						       optarg);
			a->name = optarg;
			break;
		case 'f':
			a->foreground = true;
			break;
		case 'o':
			/* room for these two, the fsname option and the NULL */
			if (a->fuse_argc + 4 > MOUNT_MAX_FUSE_ARGS)
				return mount_bad_usage("too many -o options%s", "");
			a->fuse_argv[a->fuse_argc++] = "-o";
			a->fuse_argv[a->fuse_argc++] = optarg;
			break;
		case 't':
			v = strtol(optarg, &end, 10);
			if (*end != '\0' || v < 1 || v > 256)
				return mount_bad_usage("--threads wants 1..256, not '%s'", optarg);
			a->threads = (unsigned int)v;
			break;
		case 'T':
			v = strtol(optarg, &end, 10);
			if (*end != '\0' || v < 1 || v > 3600)
				return mount_bad_usage("--timeout wants seconds 1..3600, not '%s'",
						       optarg);
			a->timeout = optarg;
			break;
		case 'S':
			a->shared = true;
			break;
		case 'h':
			mount_usage(stdout);
			return 1;
		default:
			return mount_bad_usage("unknown or incomplete option '%s'",
					       argv[optind - 1]);
		}
	}
	/* GNU getopt moved the positionals to the end, so "-f" may follow them (mount(8) habit) */
	if (argc - optind != 2)
		return mount_bad_usage("%s", argc - optind < 2 ? "POOL and MOUNTPOINT are required"
							       : "too many arguments");
	a->pool = argv[optind];
	a->mountpoint = argv[optind + 1];
	a->fuse_argv[a->fuse_argc] = NULL;
	return 0;
}

static void mount_fuse_log(enum fuse_log_level level, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	weft_log(level <= FUSE_LOG_ERR	     ? WEFT_LOG_ERROR
		 : level <= FUSE_LOG_WARNING ? WEFT_LOG_WARN
		 : level <= FUSE_LOG_INFO    ? WEFT_LOG_INFO
					     : WEFT_LOG_DEBUG,
		 "fuse", "%s", line);
}

/*
 * Our own read of the conf: the log settings, and client_op_timeout to
 * restore after a --timeout connect. libweft reads the same file again.
 */
static int mount_conf_load(const struct mount_args *a, uint64_t *op_timeout_us_out)
{
	const char *path = a->conf;
	enum weft_log_level level = WEFT_LOG_INFO;
	struct conf *conf;
	int rc;

	rc = conf_create(a->name, &conf);
	if (rc != 0)
		return rc;
	if (path == NULL && access("/etc/weft/weft.conf", F_OK) == 0)
		path = "/etc/weft/weft.conf";
	if (path != NULL)
		rc = conf_load_file(conf, path);
	if (rc == 0)
		rc = conf_apply_env(conf);
	if (rc != 0) {
		fprintf(stderr, "weft-mount: conf %s: %s\n", path ? path : "(none)",
			weft_strerror(rc));
		conf_destroy(conf);
		return rc;
	}
	weft_log_level_parse(conf_get_str(conf, CONF_LOG_LEVEL), &level);
	if (weft_log_open(a->name, level, conf_get_str(conf, CONF_LOG_FILE)) != 0)
		fprintf(stderr, "weft-mount: cannot open log_file %s: logging to stderr\n",
			conf_get_str(conf, CONF_LOG_FILE));
	weft_log_conf_apply(conf); /* debug_client, debug_fabric, ... */
	*op_timeout_us_out = conf_get_duration_us(conf, CONF_CLIENT_OP_TIMEOUT);
	conf_destroy(conf);
	return 0;
}

/*
 * Detach: the child carries on and writes one status byte once mounted (or
 * failed); the parent exits with it. Returns the pipe's write end in the
 * child, -1 in the foreground.
 */
static int mount_detach(void)
{
	int p[2];
	unsigned char status = 1;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0) {
		fprintf(stderr, "weft-mount: pipe: %s\n", strerror(errno));
		exit(1);
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "weft-mount: fork: %s\n", strerror(errno));
		exit(1);
	}
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &status, 1) != 1) /* the child died before reporting */
			waitpid(pid, NULL, 0);
		exit(status);
	}
	close(p[0]);
	setsid();
	return p[1];
}

static void mount_detach_done(int fd, unsigned char status)
{
	int null;

	if (fd < 0)
		return;
	if (write(fd, &status, 1) != 1) {
		/* the parent is gone; nothing to tell */
	}
	close(fd);
	if (status != 0)
		return;
	if (chdir("/") != 0) {
		/* keep the old cwd */
	}
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO); /* log_file keeps the log of a detached mount */
		close(null);
	}
}

static int mount_connect(struct mount *m, const struct mount_args *a, uint64_t op_timeout_us)
{
	char orig[32];
	int rc;

	if (a->timeout != NULL)
		setenv("WEFT_CLIENT_OP_TIMEOUT", a->timeout, 1); /* bounds weft_connect's wait */
	rc = weft_connect(a->conf, a->name, &m->cl);
	if (rc != 0) {
		log_error("mount", "cannot reach the cluster as %s: %s", a->name,
			  weft_strerror(rc));
		return rc;
	}
	if (a->timeout != NULL) {
		snprintf(orig, sizeof(orig), "%lluus", (unsigned long long)op_timeout_us);
		weft_conf_set(m->cl, "client_op_timeout", orig);
	}
	rc = weft_pool_lookup(m->cl, a->pool, &m->pool);
	if (rc != 0) {
		log_error("mount", "pool '%s': %s", a->pool,
			  rc == -ENOENT ? "no such pool ('weft pool ls' lists them)"
					: weft_strerror(rc));
		return rc;
	}
	return mount_bufs_create(m->cl, &m->bufs);
}

static int mount_check_mountpoint(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		log_error("mount", "mountpoint %s: %s", path, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_error("mount", "mountpoint %s: not a directory", path);
		return -ENOTDIR;
	}
	if (access(path, R_OK | X_OK) != 0) {
		log_error("mount", "mountpoint %s: %s", path, strerror(errno));
		return -errno;
	}
	return 0;
}

static int mount_run(struct mount *m, const struct mount_args *a)
{
	struct fuse_loop_config *lc = fuse_loop_cfg_create();
	int rc;

	if (lc == NULL)
		return -ENOMEM;
	fuse_loop_cfg_set_max_threads(lc, a->threads);
	/* keep the workers alive instead of a thread per burst */
	fuse_loop_cfg_set_idle_threads(lc, a->threads);
	rc = fuse_session_loop_mt(m->se, lc);
	fuse_loop_cfg_destroy(lc);
	if (rc > 0)
		log_info("mount", "signal %d: unmounting %s", rc, a->mountpoint);
	else if (rc < 0)
		log_error("mount", "FUSE loop: %s", strerror(-rc));
	else
		log_info("mount", "%s was unmounted", a->mountpoint);
	return rc < 0 ? rc : 0;
}

int main(int argc, char **argv)
{
	struct mount m = {.next_ino = MOUNT_ROOT_INO + 1};
	struct mount_args a = {0};
	struct fuse_args fargs;
	uint64_t op_timeout_us = 0;
	char fsname[160];
	int rc, detach_fd = -1;

	if (weft_version_arg(argc, argv, "weft-mount"))
		return 0;
	rc = mount_args_parse(argc, argv, &a);
	if (rc != 0)
		return rc == 1 ? 0 : rc;
	if (mount_conf_load(&a, &op_timeout_us) != 0)
		return 1;
	m.pool_name = a.pool;
	m.vol_flags = a.shared ? 0 : WEFT_VOL_EXCLUSIVE;
	m.client_name = a.name;
	m.uid = getuid();
	m.gid = getgid();
	clock_gettime(CLOCK_REALTIME, &m.mounted_at);

	/* FUSE options first: a typo in -o is a usage error, found before any network I/O */
	snprintf(fsname, sizeof(fsname), "-ofsname=weft:%s,subtype=weft", a.pool);
	a.fuse_argv[a.fuse_argc++] = fsname;
	a.fuse_argv[a.fuse_argc] = NULL;
	fargs = (struct fuse_args)FUSE_ARGS_INIT(a.fuse_argc, a.fuse_argv);
	m.se = fuse_session_new(&fargs, &mount_fuse_ops, sizeof(mount_fuse_ops), &m);
	fuse_opt_free_args(&fargs);
	if (m.se == NULL) {
		/*
		 * libfuse said which option, on one line of its own to stderr
		 * ("fuse: unknown option(s): ..."): its log goes to ours only
		 * from here on, as ours would split that line in three.
		 */
		return 2;
	}
	fuse_set_log_func(mount_fuse_log);
	if (mount_check_mountpoint(a.mountpoint) != 0) {
		rc = 1;
		goto out_session;
	}
	if (!a.foreground)
		detach_fd = mount_detach();
	if (mount_connect(&m, &a, op_timeout_us) != 0) {
		rc = 1;
		goto out_cluster;
	}
	if (fuse_set_signal_handlers(m.se) != 0 || fuse_session_mount(m.se, a.mountpoint) != 0) {
		log_error("mount", "cannot mount on %s (see the fuse line above)", a.mountpoint);
		rc = 1;
		goto out_cluster;
	}
	if (mount_io_start(&m) != 0) {
		rc = 1;
		goto out_unmount;
	}
	log_info("mount", "pool %s mounted on %s as %s", a.pool, a.mountpoint, a.name);
	mount_detach_done(detach_fd, 0);
	detach_fd = -1;
	rc = mount_run(&m, &a) != 0;
	mount_io_stop(&m);
out_unmount:
	fuse_session_unmount(m.se);
out_cluster:
	fuse_remove_signal_handlers(m.se);
	weft_disconnect(m.cl); /* ops still in flight complete (cancelled) and free their chunks */
	mount_bufs_destroy(m.bufs);
out_session:
	fuse_session_destroy(m.se);
	mount_detach_done(detach_fd, (unsigned char)rc);
	weft_log_close();
	return rc;
}
