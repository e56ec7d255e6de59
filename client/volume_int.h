/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Volumes inside libweft (include/weft/volume.h, docs/volumes.md).
 *
 *   volume_fmt.c    object names; header, lock and directory encodings
 *   volume_obj.c    small-object helpers: read whole, compare-and-write, batches
 *   volume_meta.c   create, remove, list, open, close, stat, resize
 *   volume_lock.c   the exclusive lock: acquire, release, check, get, break
 *   volume_io.c     async read/write/discard/write_zeroes/flush split across objects
 *   volume_map.c    the allocation map (extents) from the data objects' stats
 *
 * Everything runs in the thread that drives the cluster (weft_poll()).
 */
#ifndef WEFT_CLIENT_VOLUME_INT_H
#define WEFT_CLIENT_VOLUME_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "client/client_int.h"
#include "weft/volume.h"

#define VOL_FORMAT	   1u
#define VOL_HDR_MAX	   1024u	 /* encoded header bytes, at most */
#define VOL_LOCK_MAX	   512u		 /* encoded lock bytes, at most */
#define VOL_DIR_MAX	   (1u << 20)	 /* encoded directory bytes, at most */
#define VOL_FEATURES_KNOWN ((uint64_t)0) /* format 1 defines no feature bit */
#define VOL_OBJ_NAME_MAX   64u		 /* data/lock object names */
#define VOL_BATCH_WINDOW   32u		 /* removes in flight while deleting objects */
#define VOL_CAS_TRIES	   16u
/* How long a broken lock's holder stays blocklisted (Ceph's default blocklist expiry). */
#define VOL_FENCE_SECONDS 3600u

#define VOL_DIR_OBJ "wvol_directory"

struct vol_hdr {
	uint32_t format;
	uint64_t features;
	uint64_t id;
	uint64_t size;
	uint64_t object_size;
	uint64_t stripe_unit;
	uint32_t stripe_count;
	uint64_t create_time;
	char name[WEFT_VOL_NAME_MAX + 1];
};

struct vol_lock {
	uint64_t epoch;
	uint64_t since;
	char holder[WEFT_VOL_HOLDER_MAX + 1]; /* "" = free */
};

struct vol_io;
struct vol_flush;

struct weft_vol {
	struct weft_cluster *cl;
	uint32_t pool;
	unsigned int flags;
	struct vol_hdr hdr;
	uint8_t hdr_raw[VOL_HDR_MAX]; /* the header as stored: resize compares against it */
	size_t hdr_len;
	char hdr_obj[PROTO_OBJ_NAME_MAX + 1];
	char lock_obj[VOL_OBJ_NAME_MAX];
	uint64_t piece_max; /* largest single object op: min(object size, osd_max_op_size) */
	/* exclusive lock: what we wrote when we took it */
	bool locked, lock_lost;
	struct vol_lock lock;
	char holder[WEFT_VOL_HOLDER_MAX + 1];
	/* I/O in flight: writes/discards in submit order (flush barriers), reads */
	struct vol_io *wr_head, *wr_tail;
	struct vol_flush *flushes;
	uint64_t next_wseq;
	unsigned int inflight;
};

/* volume_fmt.c */
/* 0 or -EINVAL with a log line naming what is wrong. */
int vol_name_check(const char *name);
void vol_hdr_obj_name(const char *name, char *out, size_t cap);
void vol_lock_obj_name(uint64_t id, char *out, size_t cap);
void vol_data_prefix(uint64_t id, char *out, size_t cap);
void vol_data_obj_name(uint64_t id, uint64_t objno, char *out, size_t cap);
/* Validate creation parameters into h (name, size and opts; id and time filled by caller). */
int vol_hdr_init(struct vol_hdr *h, const char *name, uint64_t size,
		 const struct weft_vol_opts *opts);
int vol_hdr_encode(const struct vol_hdr *h, uint8_t *buf, size_t cap, size_t *len_out);
/*
 * Decode a stored header; what names it in the one log line on failure.
 * -WEFT_E_CORRUPT (short, bad magic, crc, bad field), -ENOTSUP (newer
 * format, unknown feature, striping we cannot do).
 */
int vol_hdr_decode(const void *buf, size_t len, const char *what, struct vol_hdr *h_out);
int vol_lock_encode(const struct vol_lock *l, uint8_t *buf, size_t cap, size_t *len_out);
/* len 0 (missing object) decodes to a free lock of epoch 0. */
int vol_lock_decode(const void *buf, size_t len, const char *what, struct vol_lock *l_out);
/*
 * Directory: a sorted, duplicate-free array of names. decode allocates
 * *names_out (free with vol_dir_free); len 0 is an empty directory.
 */
int vol_dir_decode(const void *buf, size_t len, char ***names_out, uint32_t *n_out);
int vol_dir_encode(char *const *names, uint32_t n, uint8_t *buf, size_t cap, size_t *len_out);
void vol_dir_free(char **names, uint32_t n);

/* volume_obj.c: synchronous helpers (run the event loop) */
/* Whole object into a new buffer (*buf_out, free()); a missing object reads as 0 bytes. */
int vol_obj_read_all(struct weft_cluster *cl, uint32_t pool, const char *obj, size_t cap,
		     uint8_t **buf_out, size_t *len_out);
/* Replace obj by nw only if its content is exactly cur (-ECANCELED otherwise). */
int vol_obj_cas(struct weft_cluster *cl, uint32_t pool, const char *obj, const void *cur,
		size_t cur_len, const void *nw, size_t nw_len);
/* Remove data objects [from, to) of volume id, VOL_BATCH_WINDOW at a time; ENOENT is fine. */
int vol_objs_remove(struct weft_cluster *cl, uint32_t pool, uint64_t id, uint64_t from,
		    uint64_t to);
/* Run the loop until *done (bounded by the op timeout + 5 s). */
int vol_wait(struct weft_cluster *cl, const bool *done);
/* Queue a completion that runs from the next weft_poll(). */
int vol_defer(struct weft_cluster *cl, int rc, uint64_t length, weft_op_cb cb, void *arg);

/* volume_meta.c */
/* Read and decode the header of volume name; raw (VOL_HDR_MAX bytes, may be NULL) gets the bytes.
 */
int vol_hdr_load(struct weft_cluster *cl, uint32_t pool, const char *name, struct vol_hdr *h_out,
		 uint8_t *raw, size_t *raw_len_out);

/* volume_lock.c */
void vol_holder_make(struct weft_cluster *cl, char *out, size_t cap);
/* Take the lock for vol (force: break another holder's). -EBUSY if held. */
int vol_lock_acquire(struct weft_vol *vol, bool force);
/* Give it back if still ours; -ENOLCK if someone broke it. */
int vol_lock_release(struct weft_vol *vol);
/* The client instance at the end of a holder string ("/i=HEX"), or -ENOENT. */
int vol_holder_instance(const char *holder, uint64_t *instance_out);
/* The lock is lost (once, logged): every write, discard and flush fails -ENOLCK from now. */
void vol_lock_lost_mark(struct weft_vol *vol, const char *why);
/* Is the stored lock still ours? 0, -ENOLCK (and marks the handle), or an I/O error. */
int vol_lock_check(struct weft_vol *vol);
/* Decode what a read of the lock object returned and compare with ours. */
int vol_lock_check_buf(struct weft_vol *vol, const void *buf, size_t len);
/* Read the lock of volume id (free if missing). */
int vol_lock_read(struct weft_cluster *cl, uint32_t pool, uint64_t id, struct vol_lock *l_out);

/* volume_io.c */
/* Flushes whose barrier has passed start or complete; called as writes finish. */
void vol_io_flushes_check(struct weft_vol *vol);

#endif
