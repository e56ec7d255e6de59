/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft-mount internals (docs/mount.md): a FUSE low-level file system that
 * shows every volume of one pool as a regular file.
 *
 * Threads. libweft is single-threaded (include/weft/weft.h), so one I/O
 * thread owns the cluster handle, the open volumes and the inode table.
 * libfuse's worker threads only turn a FUSE request into a struct
 * mount_req (copying a write's payload into a registered buffer, since the
 * worker's receive buffer is reused once the handler returns) and push it
 * on the submission queue (a mutex-protected list; a push into an empty one
 * wakes libweft's event loop). The I/O thread runs that loop (mount_io.c)
 * and starts the volume op; its completion callback, which libweft runs on
 * the I/O thread, answers the kernel with fuse_reply_*.
 *
 *   mount_main.c  arguments, conf, logging, detaching, session set-up, teardown
 *   mount_ops.c   FUSE handlers (worker threads): requests onto the queue
 *   mount_io.c    the I/O thread: queue, event loop, starting ops, replies
 *   mount_meta.c  inodes, attributes, directory listing (I/O thread)
 *   mount_buf.c   registered bounce chunks shared by workers and the I/O thread
 */
#ifndef WEFT_CLIENT_MOUNT_MOUNT_H
#define WEFT_CLIENT_MOUNT_MOUNT_H

#define FUSE_USE_VERSION 312

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "evloop/evloop.h"
#include "weft/volume.h"
#include "weft/weft.h"

#define MOUNT_MAX_IO	 (1u << 20) /* FUSE max_write / largest read we ask for */
#define MOUNT_ATTR_TTL_S 1.0	    /* kernel caches sizes this long (resize elsewhere) */
#define MOUNT_ROOT_INO	 FUSE_ROOT_ID

/* ---------------------------------------------------------------- buffers */

/*
 * Registered memory cut into chunks, so a write's payload is copied once
 * (kernel -> registered chunk) and the OSDs pull it from there, and a read
 * lands in a chunk the OSDs write into. Two classes: 64 KiB chunks (the
 * library's small pool buffers) and MOUNT_MAX_IO chunks carved out of its
 * large buffers. When none is free the request falls back to malloc and
 * libweft copies through its own bounce buffers: slower, never stuck.
 */
struct mount_bufs;

struct mount_chunk {
	struct mount_chunk *next;     /* free list */
	struct mount_chunk *all_next; /* registered chunks, for destroy */
	void *data;
	size_t cap;
	bool registered; /* false: malloc'd with the struct, freed on put */
};

/* Take libweft's registered buffers; call before any other thread uses cl. */
int mount_bufs_create(struct weft_cluster *cl, struct mount_bufs **bufs_out);
/*
 * Free the chunk lists, after weft_disconnect: the registered memory goes
 * back with the cluster, and ops it cancels still return their chunks.
 */
void mount_bufs_destroy(struct mount_bufs *b);
/* A chunk of at least len bytes (registered if one is free, else malloc'd), or NULL. Any thread. */
struct mount_chunk *mount_buf_get(struct mount_bufs *b, size_t len);
void mount_buf_put(struct mount_bufs *b, struct mount_chunk *c);
/* Requests that found no registered chunk free (the slow path). */
uint64_t mount_bufs_fallbacks(struct mount_bufs *b);

/* ---------------------------------------------------------------- requests */

enum mount_req_kind {
	MOUNT_REQ_LOOKUP = 1,
	MOUNT_REQ_GETATTR,
	MOUNT_REQ_SETATTR,
	MOUNT_REQ_OPENDIR,
	MOUNT_REQ_READDIR,
	MOUNT_REQ_RELEASEDIR,
	MOUNT_REQ_OPEN,
	MOUNT_REQ_RELEASE,
	MOUNT_REQ_READ,
	MOUNT_REQ_WRITE,
	MOUNT_REQ_FLUSH,   /* flush, fsync, fdatasync: a volume flush */
	MOUNT_REQ_DISCARD, /* fallocate punch hole / zero range: writes zeros */
	MOUNT_REQ_STATFS,
};

struct mount;

struct mount_req {
	struct mount_req *next; /* submission queue */
	struct mount *m;
	enum mount_req_kind kind;
	fuse_req_t req;
	fuse_ino_t ino; /* LOOKUP: the parent */
	/* READ/WRITE/FLUSH/DISCARD/RELEASE: mount_meta_open's handle; *DIR: a struct mount_dir */
	uint64_t fh;
	uint64_t off;
	size_t size;
	struct mount_chunk *chunk; /* READ/WRITE payload */
	int to_set;		   /* SETATTR: FUSE_SET_ATTR_* */
	struct stat attr;
	struct fuse_file_info fi; /* OPEN, OPENDIR */
	char name[];		  /* LOOKUP */
};

struct mount_req *mount_req_new(enum mount_req_kind kind, fuse_req_t req, fuse_ino_t ino,
				const char *name);
void mount_req_free(struct mount *m, struct mount_req *r);

/* ---------------------------------------------------------------- the mount */

struct mount_inode;
struct mount_dir;

struct mount {
	/* set up before the threads start, read-only afterwards */
	struct weft_cluster *cl;
	const char *pool_name;
	uint32_t pool;
	unsigned int vol_flags; /* WEFT_VOL_EXCLUSIVE, or 0 with --shared */
	const char *client_name;
	struct fuse_session *se;
	struct mount_bufs *bufs;
	uid_t uid;
	gid_t gid;
	struct timespec mounted_at;

	/* submission queue: FUSE workers -> I/O thread (a poller of libweft's loop) */
	pthread_mutex_t q_lock;
	struct mount_req *q_head, *q_tail; /* q_head also peeked without the lock */
	bool q_stop;

	/* I/O thread only */
	pthread_t io_thread;
	struct evl_poller *q_poller;
	struct evl_timer drain_timer; /* after unmount: how long in-flight ops may take */
	bool draining;
	bool dispatching;	    /* a request is being started: the queue poller does not nest */
	struct mount_inode *inodes; /* every volume seen; never freed before unmount */
	uint64_t next_ino;
	unsigned int inflight; /* volume ops started and not yet completed */
	uint64_t ops_done, io_errors;
};

/* mount_io.c */
int mount_io_start(struct mount *m);
/* Queue a request (any thread). */
void mount_io_submit(struct mount *m, struct mount_req *r);
/* Let queued and in-flight work finish (bounded), close volumes, join the thread. */
void mount_io_stop(struct mount *m);
/* I/O thread: a started op finished; answer it. */
void mount_io_done(struct mount *m, struct mount_req *r);

/* mount_meta.c (I/O thread) */
void mount_meta_lookup(struct mount *m, struct mount_req *r);
void mount_meta_getattr(struct mount *m, struct mount_req *r);
void mount_meta_setattr(struct mount *m, struct mount_req *r);
void mount_meta_opendir(struct mount *m, struct mount_req *r);
void mount_meta_readdir(struct mount *m, struct mount_req *r);
void mount_meta_releasedir(struct mount *m, struct mount_req *r);
void mount_meta_statfs(struct mount *m, struct mount_req *r);
/* The open volume behind a file handle, or NULL. */
struct weft_vol *mount_meta_volume(struct mount *m, uint64_t fh);
int mount_meta_open(struct mount *m, fuse_ino_t ino, int flags, uint64_t *fh_out);
void mount_meta_release(struct mount *m, uint64_t fh);
const char *mount_meta_name(struct mount *m, fuse_ino_t ino);
/* errno for the kernel from a -errno / libweft code (libweft's own codes become EIO). */
int mount_meta_errno(int rc);
void mount_meta_close_all(struct mount *m);

/* mount_ops.c */
extern const struct fuse_lowlevel_ops mount_fuse_ops;

#endif
