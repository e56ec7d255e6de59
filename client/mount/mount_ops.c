/* SPDX-License-Identifier: Apache-2.0 */
/*
 * FUSE low-level handlers. They run on libfuse's worker threads and never
 * touch libweft: each turns the request into a struct mount_req and queues
 * it for the I/O thread (mount_io.c), which answers it. The only work done
 * here is what cannot wait: a write's payload lives in the worker's receive
 * buffer, reused as soon as the handler returns, so it is copied into a
 * registered chunk first (the one copy on the write path; the OSDs pull the
 * data from that chunk).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <string.h>

#include "client/mount/mount.h"

struct mount_req *mount_req_new(enum mount_req_kind kind, fuse_req_t req, fuse_ino_t ino,
				const char *name)
{
	size_t nlen = name ? strlen(name) + 1 : 1;
	struct mount_req *r = calloc(1, sizeof(*r) + nlen);

	if (r == NULL)
		return NULL;
	r->kind = kind;
	r->req = req;
	r->ino = ino;
	if (name)
		memcpy(r->name, name, nlen);
	return r;
}

void mount_req_free(struct mount *m, struct mount_req *r)
{
	mount_buf_put(m->bufs, r->chunk);
	free(r);
}

static struct mount *mount_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* Queue a request with no payload; ENOMEM answers at once. */
static struct mount_req *mount_ops_queue(fuse_req_t req, enum mount_req_kind kind, fuse_ino_t ino,
					 const char *name, const struct fuse_file_info *fi)
{
	struct mount_req *r = mount_req_new(kind, req, ino, name);

	if (r == NULL) {
		fuse_reply_err(req, ENOMEM);
		return NULL;
	}
	if (fi != NULL) {
		r->fh = fi->fh;
		r->fi = *fi;
	}
	mount_io_submit(mount_of(req), r);
	return r;
}

static void mount_ops_init(void *userdata, struct fuse_conn_info *conn)
{
	/* 1 MiB requests (FUSE_MAX_PAGES) instead of 128 KiB; reads follow max_pages too */
	conn->max_write = MOUNT_MAX_IO;
	/*
	 * Async direct I/O (libaio, io_uring) becomes background requests;
	 * the default of 12 in flight would cap an iodepth=32 job at 12.
	 */
	conn->max_background = 128;
	conn->congestion_threshold = 96;
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO;
	conn->want &= ~(unsigned int)FUSE_CAP_WRITEBACK_CACHE;
}

static void mount_ops_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	if (parent != MOUNT_ROOT_INO) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	mount_ops_queue(req, MOUNT_REQ_LOOKUP, parent, name, NULL);
}

static void mount_ops_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	mount_ops_queue(req, MOUNT_REQ_GETATTR, ino, NULL, NULL);
}

static void mount_ops_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
			      struct fuse_file_info *fi)
{
	struct mount_req *r = mount_req_new(MOUNT_REQ_SETATTR, req, ino, NULL);

	if (r == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	r->attr = *attr;
	r->to_set = to_set;
	mount_io_submit(mount_of(req), r);
}

static void mount_ops_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	mount_ops_queue(req, MOUNT_REQ_OPENDIR, ino, NULL, fi);
}

static void mount_ops_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			      struct fuse_file_info *fi)
{
	struct mount_req *r = mount_req_new(MOUNT_REQ_READDIR, req, ino, NULL);

	if (r == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	r->fh = fi->fh;
	r->size = size;
	r->off = (uint64_t)off;
	mount_io_submit(mount_of(req), r);
}

static void mount_ops_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	mount_ops_queue(req, MOUNT_REQ_RELEASEDIR, ino, NULL, fi);
}

static void mount_ops_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	mount_ops_queue(req, MOUNT_REQ_OPEN, ino, NULL, fi);
}

static void mount_ops_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	mount_ops_queue(req, MOUNT_REQ_RELEASE, ino, NULL, fi);
}

static void mount_ops_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	struct mount *m = mount_of(req);
	struct mount_req *r = mount_req_new(MOUNT_REQ_READ, req, ino, NULL);

	if (size > MOUNT_MAX_IO)
		size = MOUNT_MAX_IO; /* a short read; the kernel asks again */
	if (r != NULL)
		r->chunk = mount_buf_get(m->bufs, size ? size : 1);
	if (r == NULL || r->chunk == NULL) {
		free(r);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	r->fh = fi->fh;
	r->off = (uint64_t)off;
	r->size = size;
	mount_io_submit(m, r);
}

static void mount_ops_write_buf(fuse_req_t req, fuse_ino_t ino, struct fuse_bufvec *in, off_t off,
				struct fuse_file_info *fi)
{
	struct mount *m = mount_of(req);
	size_t size = fuse_buf_size(in);
	struct mount_req *r = mount_req_new(MOUNT_REQ_WRITE, req, ino, NULL);
	struct fuse_bufvec dst = FUSE_BUFVEC_INIT(size);
	ssize_t n;

	if (r != NULL)
		r->chunk = mount_buf_get(m->bufs, size ? size : 1);
	if (r == NULL || r->chunk == NULL) {
		free(r);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	dst.buf[0].mem = r->chunk->data;
	n = fuse_buf_copy(&dst, in, 0);
	if (n < 0 || (size_t)n != size) {
		mount_req_free(m, r);
		fuse_reply_err(req, n < 0 ? (int)-n : EIO);
		return;
	}
	r->fh = fi->fh;
	r->off = (uint64_t)off;
	r->size = size;
	mount_io_submit(m, r);
}

static void mount_ops_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	mount_ops_queue(req, MOUNT_REQ_FLUSH, ino, NULL, fi);
}

static void mount_ops_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	mount_ops_queue(req, MOUNT_REQ_FLUSH, ino, NULL, fi);
}

static void mount_ops_statfs(fuse_req_t req, fuse_ino_t ino)
{
	mount_ops_queue(req, MOUNT_REQ_STATFS, ino, NULL, NULL);
}

/*
 * Discard: a loop device turns discards (fstrim, mkfs, blkdiscard) into
 * punch-hole; zero-range is the same for a volume (discard writes zeros).
 * Allocating is refused: a volume cannot reserve space in the cluster.
 */
static void mount_ops_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t off, off_t len,
				struct fuse_file_info *fi)
{
	struct mount_req *r;

	if (mode != (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE) &&
	    mode != (FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE) && mode != FALLOC_FL_ZERO_RANGE) {
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	r = mount_req_new(MOUNT_REQ_DISCARD, req, ino, NULL);
	if (r == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	r->fh = fi->fh;
	r->off = (uint64_t)off;
	r->size = (size_t)len;
	mount_io_submit(mount_of(req), r);
}

/* Volumes are created and removed with 'weft vol', not through the mount. */
static void mount_ops_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			     struct fuse_file_info *fi)
{
	fuse_reply_err(req, EPERM);
}

static void mount_ops_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			    dev_t rdev)
{
	fuse_reply_err(req, EPERM);
}

static void mount_ops_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	fuse_reply_err(req, EPERM);
}

static void mount_ops_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EPERM);
}

static void mount_ops_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
			     fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	fuse_reply_err(req, EPERM);
}

const struct fuse_lowlevel_ops mount_fuse_ops = {
    .init = mount_ops_init,
    .lookup = mount_ops_lookup,
    .getattr = mount_ops_getattr,
    .setattr = mount_ops_setattr,
    .opendir = mount_ops_opendir,
    .readdir = mount_ops_readdir,
    .releasedir = mount_ops_releasedir,
    .open = mount_ops_open,
    .release = mount_ops_release,
    .read = mount_ops_read,
    .write_buf = mount_ops_write_buf,
    .flush = mount_ops_flush,
    .fsync = mount_ops_fsync,
    .statfs = mount_ops_statfs,
    .fallocate = mount_ops_fallocate,
    .create = mount_ops_create,
    .mknod = mount_ops_mknod,
    .mkdir = mount_ops_mkdir,
    .unlink = mount_ops_unlink,
    .rmdir = mount_ops_unlink,
    .rename = mount_ops_rename,
};
