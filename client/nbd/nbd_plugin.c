/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nbdkit-weft-plugin: one Weft volume as an NBD export, served by nbdkit
 * (docs/vm.md).
 *
 *   nbdkit weft pool=rbd volume=img0 [conf=/etc/weft/weft.conf]
 *          [name=client.vm1] [readonly=true] [shared=true] [force=true]
 *
 * Start-up is split the way nbdkit asks: .get_ready (before nbdkit forks,
 * errors reach the terminal) checks the parameters and makes one trial
 * connection — the cluster answers, the pool and volume exist, nobody
 * holds the lock a writable export needs — and disconnects again;
 * .after_fork (libweft must not be split by a fork) connects for real,
 * opens the volume (taking the exclusive lock for a writable export) and
 * starts the I/O thread. .cleanup, once every connection has closed,
 * stops the thread and closes the volume, which releases the lock.
 *
 * Every data callback hands its request to the I/O thread and waits
 * (nbd.h). One volume handle serves every connection, so a flush on any
 * connection is a barrier for the writes of all of them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "client/nbd/nbd.h"
#include "common/conf.h"
#include "common/conf_runtime.h"
#include "common/log.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

#define NBDW_MAX_REQUEST (32u << 20) /* advertised maximum block size (NBD's usual 32 MiB) */
#define NBDW_EXTENTS_MAX (2u * WEFT_VOL_EXTENTS_OBJS) /* a data and a hole part per object */

#define NBDW_STR2(x) #x
#define NBDW_STR(x)  NBDW_STR2(x)

static struct nbdw nbw = {.name = "client.admin", .q_efd = -1, .io_epfd = -1};

/* ---------------------------------------------------------------- parameters */

static int nbdw_bool(const char *key, const char *value, bool *out)
{
	int b = nbdkit_parse_bool(value);

	if (b < 0) {
		/* nbdkit_parse_bool's own line does not name the parameter */
		nbdkit_error("%s=%s: want true or false", key, value);
		return -1;
	}
	*out = b != 0;
	return 0;
}

static int nbdw_config(const char *key, const char *value)
{
	if (strcmp(key, "pool") == 0) {
		if (strlen(value) == 0 || strlen(value) >= sizeof(nbw.pool_name)) {
			nbdkit_error("pool='%s': want 1..%zu bytes", value,
				     sizeof(nbw.pool_name) - 1);
			return -1;
		}
		snprintf(nbw.pool_name, sizeof(nbw.pool_name), "%s", value);
	} else if (strcmp(key, "volume") == 0) {
		/* volume=NAME, or volume=POOL/NAME (also the bare magic parameter) */
		const char *slash = strchr(value, '/');
		const char *vname = slash ? slash + 1 : value;

		if (slash != NULL) {
			if (slash == value || (size_t)(slash - value) >= sizeof(nbw.pool_name)) {
				nbdkit_error("volume='%s': the pool part is empty or too long",
					     value);
				return -1;
			}
			snprintf(nbw.pool_name, sizeof(nbw.pool_name), "%.*s", (int)(slash - value),
				 value);
		}
		if (strlen(vname) == 0 || strlen(vname) > WEFT_VOL_NAME_MAX) {
			nbdkit_error("volume='%s': a volume name is 1..%d bytes", value,
				     WEFT_VOL_NAME_MAX);
			return -1;
		}
		snprintf(nbw.vol_name, sizeof(nbw.vol_name), "%s", vname);
	} else if (strcmp(key, "conf") == 0) {
		nbw.conf = value;
	} else if (strcmp(key, "name") == 0) {
		if (strncmp(value, "client.", 7) != 0 || value[7] == '\0') {
			nbdkit_error("name='%s': want client.NAME", value);
			return -1;
		}
		nbw.name = value;
	} else if (strcmp(key, "keyring") == 0) {
		/*
		 * libweft reads the conf and then WEFT_<KEY>; set before any thread
		 * exists (config runs first), this overrides the conf's keyring.
		 */
		if (access(value, R_OK) != 0) {
			nbdkit_error("keyring=%s: %m", value);
			return -1;
		}
		if (setenv("WEFT_KEYRING", value, 1) != 0) {
			nbdkit_error("keyring=%s: %m", value);
			return -1;
		}
	} else if (strcmp(key, "readonly") == 0) {
		return nbdw_bool(key, value, &nbw.readonly);
	} else if (strcmp(key, "shared") == 0) {
		return nbdw_bool(key, value, &nbw.shared);
	} else if (strcmp(key, "force") == 0) {
		return nbdw_bool(key, value, &nbw.force);
	} else {
		nbdkit_error("unknown parameter '%s' (nbdkit weft --help lists them)", key);
		return -1;
	}
	return 0;
}

static int nbdw_config_complete(void)
{
	if (nbw.pool_name[0] == '\0' || nbw.vol_name[0] == '\0') {
		nbdkit_error("pool= and volume= are required (or volume=POOL/NAME)");
		return -1;
	}
	if (nbw.readonly && (nbw.shared || nbw.force)) {
		nbdkit_error("shared= and force= are about the write lock: not with readonly=true");
		return -1;
	}
	if (nbw.shared && nbw.force) {
		nbdkit_error("shared=true takes no lock, so force=true (break it) makes no sense");
		return -1;
	}
	if (nbw.conf != NULL && access(nbw.conf, R_OK) != 0) {
		nbdkit_error("conf=%s: %m", nbw.conf); /* nbdkit_error keeps errno */
		return -1;
	}
	return 0;
}

#define nbdw_config_help                                                                           \
	"pool=POOL           the pool of the volume (required, or volume=POOL/NAME)\n"             \
	"volume=NAME         the volume to export (required)\n"                                    \
	"conf=FILE           Weft conf file (default /etc/weft/weft.conf)\n"                       \
	"name=client.NAME    client identity (default client.admin)\n"                             \
	"keyring=FILE        its key (default: the conf's keyring)\n"                              \
	"readonly=true       read-only export: no lock taken, writes refused\n"                    \
	"shared=true         writable without the exclusive lock (writers keep apart)\n"           \
	"force=true          break a dead holder's exclusive lock (see docs/vm.md)"

/* ---------------------------------------------------------------- start-up */

/* Log settings from the conf, as the daemons do; libweft reads the same file again. */
static int nbdw_log_setup(void)
{
	enum weft_log_level level = WEFT_LOG_INFO;
	const char *path = nbw.conf;
	struct conf *conf;
	int rc;

	rc = conf_create(nbw.name, &conf);
	if (rc != 0)
		return rc;
	if (path == NULL && access("/etc/weft/weft.conf", F_OK) == 0)
		path = "/etc/weft/weft.conf";
	if (path != NULL)
		rc = conf_load_file(conf, path);
	if (rc == 0)
		rc = conf_apply_env(conf);
	if (rc != 0) {
		nbdkit_error("conf %s: %s", path ? path : "(none)", weft_strerror(rc));
		conf_destroy(conf);
		return rc;
	}
	weft_log_level_parse(conf_get_str(conf, CONF_LOG_LEVEL), &level);
	if (weft_log_open(nbw.name, level, conf_get_str(conf, CONF_LOG_FILE)) != 0)
		nbdkit_error("cannot open log_file %s: libweft logs to stderr",
			     conf_get_str(conf, CONF_LOG_FILE));
	weft_log_conf_apply(conf); /* debug_client, debug_fabric, ... */
	conf_destroy(conf);
	return 0;
}

static unsigned int nbdw_open_flags(void)
{
	if (nbw.readonly)
		return WEFT_VOL_RDONLY;
	if (nbw.shared)
		return 0;
	return WEFT_VOL_EXCLUSIVE | (nbw.force ? WEFT_VOL_FORCE : 0);
}

/* Connect and look the pool up; one error line naming what failed. */
static int nbdw_connect(struct weft_cluster **cl_out, uint32_t *pool_out)
{
	struct weft_cluster *cl;
	int rc = weft_connect(nbw.conf, nbw.name, &cl);

	if (rc != 0) {
		nbdkit_error("cannot reach the cluster as %s: %s", nbw.name, weft_strerror(rc));
		return rc;
	}
	rc = weft_pool_lookup(cl, nbw.pool_name, pool_out);
	if (rc != 0) {
		nbdkit_error("pool '%s': %s", nbw.pool_name,
			     rc == -ENOENT ? "no such pool ('weft pool ls' lists them)"
					   : weft_strerror(rc));
		weft_disconnect(cl);
		return rc;
	}
	*cl_out = cl;
	return 0;
}

/* Before the fork: everything that can be checked without keeping a connection. */
static int nbdw_get_ready(void)
{
	struct weft_vol_lock_info lk;
	struct weft_vol_info info;
	struct weft_cluster *cl;
	uint32_t pool;
	int rc;

	if (nbdw_log_setup() != 0)
		return -1;
	if (nbdw_connect(&cl, &pool) != 0)
		return -1;
	rc = weft_vol_info(cl, pool, nbw.vol_name, &info);
	if (rc != 0) {
		nbdkit_error("volume %s/%s: %s", nbw.pool_name, nbw.vol_name,
			     rc == -ENOENT ? "no such volume ('weft vol ls' lists them)"
					   : weft_strerror(rc));
		goto out;
	}
	if (!nbw.readonly && !nbw.force) {
		rc = weft_vol_lock_get(cl, pool, nbw.vol_name, &lk);
		if (rc != 0) {
			nbdkit_error("volume %s/%s: reading its lock: %s", nbw.pool_name,
				     nbw.vol_name, weft_strerror(rc));
			goto out;
		}
		if (lk.holder[0] != '\0') {
			nbdkit_error("volume %s/%s is locked by %s: export it readonly=true, or "
				     "break a dead holder's lock ('weft vol lock break')",
				     nbw.pool_name, nbw.vol_name, lk.holder);
			rc = -EBUSY;
			goto out;
		}
	}
out:
	weft_disconnect(cl);
	return rc == 0 ? 0 : -1;
}

/* After the fork: the connection, the volume (and its lock) and the I/O thread. */
static int nbdw_after_fork(void)
{
	int rc;

	if (nbdw_connect(&nbw.cl, &nbw.pool) != 0)
		return -1;
	rc = weft_vol_open(nbw.cl, nbw.pool, nbw.vol_name, nbdw_open_flags(), &nbw.vol);
	if (rc != 0) {
		nbdkit_error("volume %s/%s: open: %s%s", nbw.pool_name, nbw.vol_name,
			     weft_strerror(rc),
			     rc == -EBUSY ? " (locked by another client: 'weft vol lock ls')" : "");
		goto err;
	}
	nbw.size = weft_vol_size(nbw.vol);
	rc = nbdw_io_start(&nbw);
	if (rc != 0) {
		nbdkit_error("volume %s/%s: I/O thread: %s", nbw.pool_name, nbw.vol_name,
			     strerror(-rc));
		goto err;
	}
	log_info("nbd", "exporting %s/%s (%" PRIu64 " bytes) as %s, %s", nbw.pool_name,
		 nbw.vol_name, nbw.size, nbw.name,
		 nbw.readonly ? "read-only"
		 : nbw.shared ? "writable, shared (no lock)"
			      : "writable, exclusive lock held");
	return 0;
err:
	if (nbw.vol)
		weft_vol_close(nbw.vol);
	nbw.vol = NULL;
	weft_disconnect(nbw.cl);
	nbw.cl = NULL;
	return -1;
}

static void nbdw_cleanup(void)
{
	int rc;

	nbdw_io_stop(&nbw); /* the thread is gone: this one owns the cluster now */
	if (nbw.vol != NULL) {
		rc = weft_vol_close(nbw.vol); /* releases the exclusive lock (if still ours) */
		if (rc != 0)
			log_warn("nbd", "%s/%s closed, but releasing its lock: %s", nbw.pool_name,
				 nbw.vol_name, weft_strerror(rc));
		else
			log_info("nbd", "%s/%s closed%s", nbw.pool_name, nbw.vol_name,
				 nbdw_open_flags() & WEFT_VOL_EXCLUSIVE ? ", lock released" : "");
		nbw.vol = NULL;
	}
	weft_disconnect(nbw.cl);
	nbw.cl = NULL;
	weft_log_close();
}

/* ---------------------------------------------------------------- connections */

static void *nbdw_open(int readonly)
{
	(void)readonly; /* nbdkit -r: nbdkit itself refuses writes on the connection */
	return NBDKIT_HANDLE_NOT_NEEDED;
}

static int64_t nbdw_get_size(void *handle)
{
	return (int64_t)nbw.size;
}

static const char *nbdw_export_description(void *handle)
{
	return nbdkit_printf_intern("weft volume %s/%s", nbw.pool_name, nbw.vol_name);
}

static int nbdw_block_size(void *handle, uint32_t *minimum, uint32_t *preferred, uint32_t *maximum)
{
	/* any byte range works (no read-modify-write in the client); 4 KiB is the store's unit */
	*minimum = 1;
	*preferred = 4096;
	*maximum = NBDW_MAX_REQUEST;
	return 0;
}

static int nbdw_can_write(void *handle)
{
	return !nbw.readonly;
}

static int nbdw_can_flush(void *handle)
{
	return 1;
}

static int nbdw_is_rotational(void *handle)
{
	return 0;
}

static int nbdw_can_trim(void *handle)
{
	return !nbw.readonly;
}

static int nbdw_can_zero(void *handle)
{
	return !nbw.readonly;
}

/* A zero is an OSD op without payload: never slower than writing the zeros. */
static int nbdw_can_fast_zero(void *handle)
{
	return !nbw.readonly;
}

/* Every write completes durable on every replica: FUA needs nothing more. */
static int nbdw_can_fua(void *handle)
{
	return NBDKIT_FUA_NATIVE;
}

/*
 * Safe: there is no cache in the plugin and every connection uses the one
 * volume handle, so a completed write is durable and visible to every
 * connection's reads, and a flush on any connection covers all of them.
 */
static int nbdw_can_multi_conn(void *handle)
{
	return 1;
}

static int nbdw_can_extents(void *handle)
{
	return 1;
}

/* ---------------------------------------------------------------- data */

static const char *nbdw_kind_name(enum nbdw_req_kind kind)
{
	switch (kind) {
	case NBDW_REQ_READ:
		return "read";
	case NBDW_REQ_WRITE:
		return "write";
	case NBDW_REQ_FLUSH:
		return "flush";
	case NBDW_REQ_TRIM:
		return "trim";
	case NBDW_REQ_ZERO:
	case NBDW_REQ_ZERO_MAY_TRIM:
		return "zero";
	case NBDW_REQ_EXTENTS:
		return "block status";
	}
	return "?";
}

/*
 * The NBD error for a libweft code. NBD has few: EPERM, EIO, ENOMEM,
 * EINVAL, ENOSPC, EOVERFLOW, ENOTSUP, ESHUTDOWN (nbdkit maps errno to
 * them). A lost exclusive lock means this export may no longer write:
 * EPERM. Timeouts, corruption and the cluster's own codes are EIO.
 */
static int nbdw_errno(int rc)
{
	switch (rc) {
	case -EROFS:
	case -EPERM:
	case -ENOLCK:
		return EPERM;
	case -EINVAL:
		return EINVAL;
	case -ENOSPC:
		return ENOSPC;
	case -ENOMEM:
	case -ENOBUFS:
		return ENOMEM;
	case -E2BIG:
		return EOVERFLOW;
	case -ENOTSUP:
		return ENOTSUP;
	case -ESHUTDOWN:
		return ESHUTDOWN;
	default:
		return EIO;
	}
}

/* Run r; on failure log (the first 10 and every 1000th) and set the NBD error. */
static int nbdw_do(struct nbdw_req *r)
{
	uint64_t n;
	int rc = nbdw_io_run(&nbw, r);

	if (rc == 0)
		return 0;
	n = __atomic_add_fetch(&nbw.io_errors, 1, __ATOMIC_RELAXED);
	if (n <= 10 || n % 1000 == 0)
		nbdkit_error("%s/%s: %s at offset %" PRIu64 ", %" PRIu64 " bytes: %s (%" PRIu64
			     " I/O errors so far)",
			     nbw.pool_name, nbw.vol_name, nbdw_kind_name(r->kind), r->off, r->len,
			     weft_strerror(rc), n);
	nbdkit_set_error(nbdw_errno(rc));
	return -1;
}

static int nbdw_pread(void *handle, void *buf, uint32_t count, uint64_t offset, uint32_t flags)
{
	struct nbdw_req r = {.kind = NBDW_REQ_READ, .buf = buf, .off = offset, .len = count};

	if (nbdw_do(&r) != 0)
		return -1;
	if (r.length != count) { /* nbdkit checked the range against the size we gave */
		nbdkit_error("%s/%s: short read at %" PRIu64 ": %" PRIu64 " of %u bytes",
			     nbw.pool_name, nbw.vol_name, offset, r.length, count);
		nbdkit_set_error(EIO);
		return -1;
	}
	return 0;
}

/* FUA: a completed write is already durable on every replica. */
static int nbdw_pwrite(void *handle, const void *buf, uint32_t count, uint64_t offset,
		       uint32_t flags)
{
	struct nbdw_req r = {
	    .kind = NBDW_REQ_WRITE, .buf = (void *)(uintptr_t)buf, .off = offset, .len = count};

	return nbdw_do(&r);
}

/* A barrier: every write submitted before it has completed (durable); the lock is still ours. */
static int nbdw_flush(void *handle, uint32_t flags)
{
	struct nbdw_req r = {.kind = NBDW_REQ_FLUSH};

	return nbdw_do(&r);
}

static int nbdw_trim(void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
	struct nbdw_req r = {.kind = NBDW_REQ_TRIM, .off = offset, .len = count};

	return nbdw_do(&r);
}

static int nbdw_zero(void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
	struct nbdw_req r = {.kind = (flags & NBDKIT_FLAG_MAY_TRIM) ? NBDW_REQ_ZERO_MAY_TRIM
								    : NBDW_REQ_ZERO,
			     .off = offset,
			     .len = count};

	return nbdw_do(&r);
}

static int nbdw_extents(void *handle, uint32_t count, uint64_t offset, uint32_t flags,
			struct nbdkit_extents *extents)
{
	struct weft_vol_extent ext[NBDW_EXTENTS_MAX];
	struct nbdw_req r = {.kind = NBDW_REQ_EXTENTS,
			     .off = offset,
			     .len = count,
			     .ext = ext,
			     .max = (flags & NBDKIT_FLAG_REQ_ONE) ? 1 : NBDW_EXTENTS_MAX};

	if (nbdw_do(&r) != 0)
		return -1;
	for (uint64_t i = 0; i < r.length; i++) {
		uint32_t type = (ext[i].flags & WEFT_VOL_EXTENT_HOLE)
				    ? NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO
				    : 0;

		if (nbdkit_add_extent(extents, ext[i].off, ext[i].len, type) != 0)
			return -1;
	}
	return 0;
}

static struct nbdkit_plugin plugin = {
    .name = "weft",
    .longname = "Weft volume",
    .version = NBDW_STR(WEFT_VERSION_MAJOR) "." NBDW_STR(WEFT_VERSION_MINOR),
    .description = "Export a Weft block volume over NBD (docs/vm.md in the Weft sources).",
    .config = nbdw_config,
    .config_complete = nbdw_config_complete,
    .config_help = nbdw_config_help,
    .magic_config_key = "volume",
    .get_ready = nbdw_get_ready,
    .after_fork = nbdw_after_fork,
    .cleanup = nbdw_cleanup,
    .open = nbdw_open,
    .get_size = nbdw_get_size,
    .export_description = nbdw_export_description,
    .block_size = nbdw_block_size,
    .can_write = nbdw_can_write,
    .can_flush = nbdw_can_flush,
    .is_rotational = nbdw_is_rotational,
    .can_trim = nbdw_can_trim,
    .can_zero = nbdw_can_zero,
    .can_fast_zero = nbdw_can_fast_zero,
    .can_fua = nbdw_can_fua,
    .can_multi_conn = nbdw_can_multi_conn,
    .can_extents = nbdw_can_extents,
    .pread = nbdw_pread,
    .pwrite = nbdw_pwrite,
    .flush = nbdw_flush,
    .trim = nbdw_trim,
    .zero = nbdw_zero,
    .extents = nbdw_extents,
    .errno_is_preserved = 0,
};

NBDKIT_REGISTER_PLUGIN(plugin)
