/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Weft public client API.
 *
 * Every function returns 0 or a negative errno; a few Weft-specific
 * conditions use codes above WEFT_ERRNO_BASE. weft_strerror() names both.
 * Objects: libweft (client/, docs/client.md); volumes arrive later.
 */
#ifndef WEFT_WEFT_H
#define WEFT_WEFT_H

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 1

#define WEFT_OBJECT_MAX (1ull << 40) /* largest object size an OSD stores */

/* Project status codes, returned negated like errno values. */
enum weft_status {
	WEFT_ERRNO_BASE = 4096,
	WEFT_E_BADCONF = 4097,	/* invalid configuration */
	WEFT_E_NOQUORUM = 4098, /* monitors have no quorum */
	WEFT_E_NOBACKEND = 4099, /* no usable fabric backend */
	WEFT_E_AUTH = 4100,	/* authentication failed */
	WEFT_E_BADKEY = 4101,	/* remote key unknown or revoked */
	WEFT_E_CORRUPT = 4102,	/* checksum mismatch on stored data */
	WEFT_E_BLOCKLISTED = 4103, /* this client instance is blocklisted (weft osd blocklist) */
	WEFT_ERRNO_MAX
};

/*
 * A human-readable string for rc (0, -errno or -WEFT_E_*). The result is
 * static or thread-local storage; never NULL.
 */
const char *weft_strerror(int rc);

/* This libweft's version and the git commit it was built from: "0.1.0 (git c9582dd3d2d4)". */
const char *weft_version(void);

/* ------------------------------------------------------------------ libweft */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A connection to a cluster (monitors + OSDs). Not thread-safe: one thread
 * drives it, either through the synchronous calls (which run the event
 * loop until their op completes) or through weft_poll() / weft_fd() for
 * the asynchronous ones. Callbacks run inside weft_poll() and the sync
 * calls, never from another thread.
 */
struct weft_cluster;

/* What an async op produced. */
struct weft_result {
	int rc;		  /* 0 or -errno / -WEFT_E_* */
	uint64_t length;  /* read: bytes read; stat: object size; write: bytes written */
	uint64_t version; /* object version after the op (write, stat) */
	uint32_t flags;	  /* WEFT_RESULT_F_*, about a failed op */
	int32_t osd;	  /* with WEFT_RESULT_F_OSD: the OSD the error is about */
};
/*
 * The write failed but may have been applied: a replica failed it after the
 * primary committed it, and recovery completes it on every copy. Reading the
 * object returns either the old or the new data, the same from every copy.
 */
#define WEFT_RESULT_F_MAYBE 0x1u
/* osd names the OSD the error is about: the full one (-ENOSPC), the failed replica. */
#define WEFT_RESULT_F_OSD 0x2u
/*
 * One line for a result: weft_strerror(rc) and what the flags add, e.g.
 * "No space left on device (osd.3 is full)" or "Input/output error (osd.2
 * failed it; the write may have been applied and completes by recovery)".
 * Returns buf (always NUL-terminated).
 */
const char *weft_result_describe(const struct weft_result *res, char *buf, size_t cap);
typedef void (*weft_op_cb)(const struct weft_result *res, void *arg);

/*
 * Load conf_path (NULL: /etc/weft/weft.conf if present), connect to the
 * monitors as name ("client.admin") and wait for the first map (bounded
 * by client_op_timeout).
 */
int weft_connect(const char *conf_path, const char *name, struct weft_cluster **cl_out);
/* Ops still in flight complete with -ECANCELED first. */
void weft_disconnect(struct weft_cluster *cl);
/* Set an option before use, as --key=value would ("client_op_timeout", "5s"). */
int weft_conf_set(struct weft_cluster *cl, const char *key, const char *value);

/* Pool id by name; a pool the map lacks waits up to 2 s for a newer map (one
 * just created may not have reached the mon we asked), then -ENOENT. */
int weft_pool_lookup(struct weft_cluster *cl, const char *pool, uint32_t *pool_id_out);
/*
 * This handle's client instance: a random 64-bit id drawn at weft_connect()
 * that OSDs know every connection of this handle by. `weft osd blocklist add`
 * takes it (16 hex digits) to fence the handle.
 */
uint64_t weft_instance(const struct weft_cluster *cl);
/*
 * Has this handle been blocklisted? True once an OSD refused one of its ops
 * with -WEFT_E_BLOCKLISTED or the map listed its instance (then it stays true).
 */
bool weft_blocklisted(struct weft_cluster *cl);
/* The map epoch the client works with. */
uint32_t weft_map_epoch(const struct weft_cluster *cl);
/* Wait (bounded) until the client has at least this map epoch. */
int weft_wait_epoch(struct weft_cluster *cl, uint32_t epoch, unsigned int timeout_ms);

/*
 * Registered buffers for zero-copy I/O: OSDs pull writes from and push
 * reads into them directly. Any other buffer is copied through a
 * registered bounce buffer. NULL when none of that size is free (errno
 * ENOBUFS) or len > osd_max_op_size (E2BIG).
 */
void *weft_buf_alloc(struct weft_cluster *cl, size_t len);
void weft_buf_free(struct weft_cluster *cl, void *buf);

/*
 * Async object ops. 0 when queued (cb runs exactly once, later, from
 * weft_poll or a sync call), or -errno with nothing queued. buf must stay
 * valid until cb. Writes and reads are at most osd_max_op_size bytes.
 */
int weft_aio_write(struct weft_cluster *cl, uint32_t pool, const char *name, const void *buf,
		   size_t len, uint64_t off, weft_op_cb cb, void *arg);
int weft_aio_write_full(struct weft_cluster *cl, uint32_t pool, const char *name,
			const void *buf, size_t len, weft_op_cb cb, void *arg);
int weft_aio_read(struct weft_cluster *cl, uint32_t pool, const char *name, void *buf,
		  size_t len, uint64_t off, weft_op_cb cb, void *arg);
int weft_aio_stat(struct weft_cluster *cl, uint32_t pool, const char *name, weft_op_cb cb,
		  void *arg);
int weft_aio_remove(struct weft_cluster *cl, uint32_t pool, const char *name, weft_op_cb cb,
		    void *arg);
int weft_aio_truncate(struct weft_cluster *cl, uint32_t pool, const char *name, uint64_t size,
		      weft_op_cb cb, void *arg);
/*
 * Zeros over [off, off + len) without sending them (any len up to
 * WEFT_OBJECT_MAX): creates or extends the object like a write; the OSDs
 * free whole 4 KiB units in the range.
 */
int weft_aio_zero(struct weft_cluster *cl, uint32_t pool, const char *name, uint64_t off,
		  uint64_t len, weft_op_cb cb, void *arg);

/* Drive the client for at most timeout_ms (0 = don't sleep); returns callbacks run or -errno. */
int weft_poll(struct weft_cluster *cl, int timeout_ms);
/* Readable when weft_poll has work. */
int weft_fd(const struct weft_cluster *cl);
/* Ops queued or in flight. */
unsigned int weft_inflight(const struct weft_cluster *cl);

/* Synchronous forms: 0 or -errno; out-parameters written only on success. */
int weft_write(struct weft_cluster *cl, uint32_t pool, const char *name, const void *buf,
	       size_t len, uint64_t off);
int weft_write_full(struct weft_cluster *cl, uint32_t pool, const char *name, const void *buf,
		    size_t len);
int weft_read(struct weft_cluster *cl, uint32_t pool, const char *name, void *buf, size_t len,
	      uint64_t off, size_t *read_out);
int weft_stat(struct weft_cluster *cl, uint32_t pool, const char *name, uint64_t *size_out,
	      uint64_t *version_out);
int weft_remove(struct weft_cluster *cl, uint32_t pool, const char *name);
int weft_truncate(struct weft_cluster *cl, uint32_t pool, const char *name, uint64_t size);
int weft_zero(struct weft_cluster *cl, uint32_t pool, const char *name, uint64_t off, uint64_t len);


#ifdef __cplusplus
}
#endif
#endif
