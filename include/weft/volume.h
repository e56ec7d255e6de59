/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Weft block volumes: a byte-addressable device of a fixed (resizable) size
 * striped over the objects of one pool. docs/volumes.md has the on-cluster
 * format (header, lock and data object names, encodings, limits).
 *
 * Return values follow weft.h: 0 or a negative errno / -WEFT_E_*.
 *
 * THREADING MODEL
 *
 * A volume belongs to the struct weft_cluster it was opened on and shares
 * its threading rule: libweft is single-threaded. One thread at a time may
 * call into a cluster and every volume opened on it (weft_poll(), the
 * weft_aio_* and weft_vol_* calls, weft_buf_alloc/free, close). Completion
 * callbacks run inside weft_poll() or inside a synchronous call, in the
 * calling thread, never from a thread of libweft's own (it has none).
 *
 * Inside a completion callback a caller MAY submit new async ops
 * (weft_vol_aio_*, weft_aio_*) and free its own memory. It MUST NOT call
 * weft_poll(), any synchronous call (weft_vol_read, weft_vol_open, ...),
 * weft_vol_close() or weft_disconnect(): they run the event loop and would
 * re-enter it.
 *
 * A multi-threaded caller (a FUSE daemon with worker threads) therefore
 * does one of:
 *   (a) one I/O thread owns the cluster: worker threads hand requests to it
 *       through a queue and wake it with an eventfd; the I/O thread sleeps
 *       in poll()/epoll on both weft_fd() and that eventfd, calls
 *       weft_poll(cl, 0) when weft_fd() is readable (and at least every
 *       10 ms while weft_inflight() > 0, for resends and timeouts), submits
 *       queued requests with weft_vol_aio_*, and answers from the
 *       callbacks (fuse_reply_* may be called from any thread). This is
 *       the recommended shape: no lock on the I/O path.
 *   (b) one mutex around every libweft call, weft_poll included; sleep on
 *       weft_fd() with the mutex released and call weft_poll(cl, 0) with it
 *       held. Callbacks then run with the mutex held.
 * Opening several clusters (weft_connect per thread) is also valid: each is
 * independent, but each exclusive open is then a different lock holder.
 *
 * DURABILITY
 *
 * A write or discard completes only after every part of it is durable on
 * every replica of the acting set (the OSD acknowledges after the WAL
 * commit of all of them). An acknowledged write is therefore already
 * durable: weft_vol_aio_flush() is a barrier that completes once every
 * write/discard submitted on this handle before it has completed; it sends
 * nothing to the OSDs for the data (see also WEFT_VOL_EXCLUSIVE below).
 * Writes that overlap and are in flight at the same time have no defined
 * order between them (as with a disk); wait for one before the other.
 */
#ifndef WEFT_VOLUME_H
#define WEFT_VOLUME_H

#include <stddef.h>
#include <stdint.h>

#include "weft/weft.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Volume names: 1..WEFT_VOL_NAME_MAX bytes of [A-Za-z0-9._-], not starting with '.'. */
#define WEFT_VOL_NAME_MAX 128
/* Object size: a power of two in [WEFT_VOL_OBJ_MIN, WEFT_VOL_OBJ_MAX]; default 4 MiB. */
#define WEFT_VOL_OBJ_MIN     (4ull << 10)
#define WEFT_VOL_OBJ_MAX     (32ull << 20)
#define WEFT_VOL_OBJ_DEFAULT (4ull << 20)
/* Largest volume size (bytes). */
#define WEFT_VOL_SIZE_MAX (1ull << 60)
/* Largest single read/write/discard (bytes); split it yourself above that. */
#define WEFT_VOL_IO_MAX (1ull << 30)

/*
 * Creation options. Zero-initialise and set what you need: a zero field
 * takes its default. Format 1 stripes with stripe_count 1 only (each
 * object holds one contiguous object_size range of the volume);
 * stripe_unit must then be 0 or object_size and stripe_count 0 or 1, any
 * other value is refused with -ENOTSUP and a log line.
 */
struct weft_vol_opts {
	uint64_t object_size;  /* 0 = WEFT_VOL_OBJ_DEFAULT */
	uint64_t stripe_unit;  /* 0 = object_size */
	uint32_t stripe_count; /* 0 = 1 */
	uint64_t features;     /* WEFT_VOL_FEATURE_* wanted; none defined in format 1: must be 0 */
};

/*
 * Create volume name in pool: claims the name atomically (-EEXIST if it
 * exists), writes the header and adds the name to the pool's volume
 * directory. No data object is written: a new volume reads as zeros.
 * -EINVAL bad name or size (0 or > WEFT_VOL_SIZE_MAX) or object size,
 * -ENOTSUP striping not supported, -ENOENT no such pool.
 */
int weft_vol_create(struct weft_cluster *cl, uint32_t pool, const char *name, uint64_t size,
		    const struct weft_vol_opts *opts);

/*
 * Remove a volume: every data object, the lock, the header, the directory
 * entry. Refused with -EBUSY while an exclusive lock is held (break it
 * first with weft_vol_lock_break()). Interrupted, it can be run again.
 * Must not be called while this process has the volume open.
 */
int weft_vol_remove(struct weft_cluster *cl, uint32_t pool, const char *name);

/*
 * Names in the pool's volume directory, in name order; cb returns 0 to go
 * on, anything else stops the listing and is returned. An empty pool (no
 * directory yet) lists nothing and returns 0.
 */
typedef int (*weft_vol_list_cb)(void *arg, const char *name);
int weft_vol_list(struct weft_cluster *cl, uint32_t pool, weft_vol_list_cb cb, void *arg);

/* weft_vol_open flags */
#define WEFT_VOL_RDONLY 0x1u /* writes, discards and resize fail with -EROFS; takes no lock */
/*
 * One writer at a time, enforced through the cluster: open takes the
 * volume's lock object with an atomic compare-and-write on its primary OSD
 * and fails with -EBUSY while another handle (any client, any host) holds
 * it. close releases it. The lock has no lease: a holder that died keeps
 * it until someone breaks it (weft_vol_lock_break(), `weft vol lock break`,
 * or WEFT_VOL_FORCE). A holder whose lock was broken finds out at its next
 * flush or resize (-ENOLCK) and from then on every write, discard and flush
 * on that handle fails with -ENOLCK. Breaking does not fence a live holder's
 * writes already in flight: break only holders you know are dead.
 */
#define WEFT_VOL_EXCLUSIVE 0x2u
/* With WEFT_VOL_EXCLUSIVE: break a lock held by someone else instead of failing -EBUSY. */
#define WEFT_VOL_FORCE 0x4u

/*
 * A read-write open without WEFT_VOL_EXCLUSIVE is shared: several handles
 * may write (the caller keeps their ranges apart); it fails with -EBUSY if
 * an exclusive lock is held when it opens (checked once, at open).
 */
struct weft_vol;

/*
 * Open: reads and checks the header. -ENOENT no such volume,
 * -WEFT_E_CORRUPT header fails its checksum or does not decode (logged
 * with the object name), -ENOTSUP newer format or unknown incompatible
 * feature, -EBUSY locked (see flags).
 */
int weft_vol_open(struct weft_cluster *cl, uint32_t pool, const char *name, unsigned int flags,
		  struct weft_vol **vol_out);
/*
 * Wait (bounded by the op timeout) for this handle's ops still in flight,
 * release the lock if held, free the handle. Returns the first error of
 * the release (the handle is freed anyway).
 */
int weft_vol_close(struct weft_vol *vol);

struct weft_vol_info {
	char name[WEFT_VOL_NAME_MAX + 1];
	uint64_t id;	       /* random at create; names the data objects */
	uint64_t size;	       /* bytes */
	uint64_t object_size;  /* bytes */
	uint64_t stripe_unit;  /* bytes */
	uint32_t stripe_count;
	uint32_t format;       /* header format version */
	uint64_t features;
	uint64_t num_objects;  /* data objects the size spans (most may not exist) */
	uint64_t create_time;  /* Unix seconds */
	char block_name_prefix[48]; /* data object names: prefix + ".%016llx" object number */
};
/* Re-reads the header, so a resize by another handle shows. */
int weft_vol_stat(struct weft_vol *vol, struct weft_vol_info *info_out);
/* The same without opening: one read of the header (errors as weft_vol_open). */
int weft_vol_info(struct weft_cluster *cl, uint32_t pool, const char *name,
		  struct weft_vol_info *info_out);
/* The size this handle works with (cached; no I/O). */
uint64_t weft_vol_size(const struct weft_vol *vol);

/*
 * Change the size. Growing only rewrites the header (new space reads as
 * zeros). Shrinking removes the data objects wholly past the new end and
 * truncates the one it cuts, then rewrites the header: data past the new
 * size is gone and reads as zeros if the volume grows again. The caller
 * must have no I/O in flight past the new end. Other open handles see the
 * new size after weft_vol_stat(). -EROFS read-only handle, -EBUSY someone
 * else holds the exclusive lock, -ENOLCK this handle lost its lock.
 */
int weft_vol_resize(struct weft_vol *vol, uint64_t size);

/*
 * Async I/O. 0 when queued (cb runs exactly once, later, from weft_poll()
 * or a sync call), or -errno with nothing queued. buf must stay valid
 * until cb. Any byte offset and length: the op is split at object
 * boundaries and completes once every part has; res->rc is the first
 * error of any part (other parts may have been applied).
 *
 * read: [off, off+len) must start inside the volume (off <= size, else
 *   -EINVAL); a range reaching past the end is cut there and res->length
 *   says how many bytes were read. Never-written ranges (object missing or
 *   shorter) read as zeros; missing objects cost no disk I/O.
 * write / discard: the range must lie inside the volume (-EINVAL).
 *   res->length = len on success.
 * discard writes zeros: whole objects in the range are removed, an object's
 *   tail is truncated, other parts are overwritten with zeros. It completes
 *   durable like a write; the range then reads as zeros.
 * flush: see DURABILITY above; on an exclusive handle it also checks the
 *   lock is still ours (-ENOLCK otherwise).
 * len 0 is valid and completes with rc 0. len > WEFT_VOL_IO_MAX: -E2BIG.
 * A buffer from weft_buf_alloc() is used in place (zero-copy); any other
 * buffer is copied through registered bounce buffers.
 */
int weft_vol_aio_read(struct weft_vol *vol, void *buf, size_t len, uint64_t off, weft_op_cb cb,
		      void *arg);
int weft_vol_aio_write(struct weft_vol *vol, const void *buf, size_t len, uint64_t off,
		       weft_op_cb cb, void *arg);
int weft_vol_aio_discard(struct weft_vol *vol, uint64_t off, uint64_t len, weft_op_cb cb,
			 void *arg);
int weft_vol_aio_flush(struct weft_vol *vol, weft_op_cb cb, void *arg);
/*
 * write_zeroes: the range reads as zeros afterwards, like discard, but
 * every object it touches stays (or becomes) allocated: each piece is the
 * OSD's zero op (no payload; the stores free whole 4 KiB units inside the
 * object), never a remove or truncate, so the allocation map below shows
 * the range as data. For callers that were told not to punch holes (NBD's
 * NO_HOLE); otherwise discard frees more. Same rules as discard.
 */
int weft_vol_aio_write_zeroes(struct weft_vol *vol, uint64_t off, uint64_t len, weft_op_cb cb,
			      void *arg);

/*
 * ALLOCATION MAP
 *
 * Which parts of [off, off+len) are backed by data objects, at the
 * granularity the volume format keeps: a data object that does not exist
 * (never written, or removed by a discard) is a hole, and so are the bytes
 * of an object past its stored size (a discard truncated them, or nothing
 * was ever written there). Everything else is data, even where it reads as
 * zeros (a write_zeroes, or the OSD's freed units inside an object): the
 * map never calls a range a hole that could hold data, so a copy that skips
 * holes copies everything. Holes read as zeros.
 *
 * weft_vol_aio_extents stats at most WEFT_VOL_EXTENTS_OBJS objects (all in
 * flight at once) and writes at most max extents to ext, in order,
 * contiguous, the first starting at off, adjacent ones of the same kind
 * merged. The map may stop before off+len (the object limit, max, or the
 * volume end): call again from the end of the last extent. res->length is
 * the number of extents written (at least 1 when rc is 0 and len > 0).
 * off must lie inside the volume (-EINVAL); max 0 is -EINVAL. Like a read,
 * it is not ordered against writes in flight.
 */
#define WEFT_VOL_EXTENT_HOLE  0x1u /* no stored data: reads as zeros, takes no space */
#define WEFT_VOL_EXTENTS_OBJS 64u
struct weft_vol_extent {
	uint64_t off;
	uint64_t len;
	uint32_t flags; /* WEFT_VOL_EXTENT_* */
};
int weft_vol_aio_extents(struct weft_vol *vol, uint64_t off, uint64_t len,
			 struct weft_vol_extent *ext, unsigned int max, weft_op_cb cb, void *arg);

/* Ops of this handle queued or in flight. */
unsigned int weft_vol_inflight(const struct weft_vol *vol);

/* Synchronous forms: run the event loop until the op completes. */
int weft_vol_read(struct weft_vol *vol, void *buf, size_t len, uint64_t off, size_t *read_out);
int weft_vol_write(struct weft_vol *vol, const void *buf, size_t len, uint64_t off);
int weft_vol_discard(struct weft_vol *vol, uint64_t off, uint64_t len);
int weft_vol_flush(struct weft_vol *vol);
int weft_vol_write_zeroes(struct weft_vol *vol, uint64_t off, uint64_t len);
/* *n_out = extents written to ext (see weft_vol_aio_extents). */
int weft_vol_extents(struct weft_vol *vol, uint64_t off, uint64_t len, struct weft_vol_extent *ext,
		     unsigned int max, unsigned int *n_out);

/*
 * The exclusive lock as the cluster sees it, without taking it. holder is
 * "" when free, else "<client name>@<host>:<pid>/<nonce>" (at most
 * WEFT_VOL_HOLDER_MAX bytes). epoch counts acquisitions and breaks.
 */
#define WEFT_VOL_HOLDER_MAX 191
struct weft_vol_lock_info {
	char holder[WEFT_VOL_HOLDER_MAX + 1];
	uint64_t epoch;
	uint64_t since; /* Unix seconds the holder took it; 0 when free */
};
int weft_vol_lock_get(struct weft_cluster *cl, uint32_t pool, const char *name,
		      struct weft_vol_lock_info *info_out);
/*
 * Break the exclusive lock whoever holds it (a dead host's). If holder is
 * non-NULL, only that holder's lock is broken (-ESTALE if someone else
 * holds it now), so a break cannot hit a newer, live holder by accident.
 * 0 also when the lock was already free.
 */
int weft_vol_lock_break(struct weft_cluster *cl, uint32_t pool, const char *name,
			const char *holder);

#ifdef __cplusplus
}
#endif
#endif
