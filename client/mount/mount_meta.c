/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inodes and attributes, on the I/O thread (mount.h). The root directory
 * is inode 1; each volume gets the next inode number the first time a
 * lookup or readdir sees its name, and keeps it until unmount (so a name's
 * inode never changes under a cached dentry). Up to two volume handles per
 * inode, each opened on the first open() that needs it and closed on its
 * last release(): a read-only one (takes no lock) and a read-write one
 * (WEFT_VOL_EXCLUSIVE unless --shared, so two mounts on two hosts cannot
 * both write a volume). Several opens of one file (fio jobs, a loop device)
 * share the handle, so an exclusive open never conflicts with ourselves.
 * A file handle (fi->fh) is the inode number shifted left once, plus 1 for
 * the read-write handle.
 *
 * Everything here runs on the I/O thread outside libweft callbacks, so the
 * synchronous libweft calls (open, stat, list) are allowed: they run the
 * event loop, and in-flight data ops complete inside them as usual.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "client/mount/mount.h"
#include "common/log.h"

struct mount_inode {
	struct mount_inode *next;
	fuse_ino_t ino;
	uint64_t size;		 /* last seen; refreshed by lookup, getattr and open */
	struct weft_vol *vol[2]; /* [0] read-only, [1] read-write */
	unsigned int opens[2];
	char name[];
};

/* A directory listing, taken at opendir so offsets stay stable while it is read. */
struct mount_dir {
	size_t n, cap;
	fuse_ino_t *inos;
	char **names;
};

static struct mount_inode *mount_meta_find(struct mount *m, fuse_ino_t ino)
{
	for (struct mount_inode *in = m->inodes; in; in = in->next)
		if (in->ino == ino)
			return in;
	return NULL;
}

static struct mount_inode *mount_meta_by_name(struct mount *m, const char *name)
{
	struct mount_inode *in;
	size_t len = strlen(name);

	for (in = m->inodes; in; in = in->next)
		if (!strcmp(in->name, name))
			return in;
	in = calloc(1, sizeof(*in) + len + 1);
	if (in == NULL)
		return NULL;
	memcpy(in->name, name, len + 1);
	in->ino = m->next_ino++;
	in->next = m->inodes;
	m->inodes = in;
	return in;
}

const char *mount_meta_name(struct mount *m, fuse_ino_t ino)
{
	struct mount_inode *in = mount_meta_find(m, ino);

	return in ? in->name : "?";
}

/* The size in a volume's header (one read, no open). */
static int mount_meta_size_by_name(struct mount *m, const char *name, uint64_t *size_out)
{
	struct weft_vol_info info;
	int rc = weft_vol_info(m->cl, m->pool, name, &info);

	if (rc == 0)
		*size_out = info.size;
	return rc;
}

/* The volume's current size: re-read through an open handle, else a short open. */
static int mount_meta_refresh(struct mount *m, struct mount_inode *in)
{
	struct weft_vol *vol = in->vol[1] ? in->vol[1] : in->vol[0];
	struct weft_vol_info info;
	int rc;

	if (vol == NULL)
		return mount_meta_size_by_name(m, in->name, &in->size);
	rc = weft_vol_stat(vol, &info);
	if (rc == 0)
		in->size = info.size;
	return rc;
}

static void mount_meta_fill(struct mount *m, fuse_ino_t ino, uint64_t size, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = m->uid;
	st->st_gid = m->gid;
	st->st_atim = st->st_mtim = st->st_ctim = m->mounted_at;
	if (ino == MOUNT_ROOT_INO) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return;
	}
	st->st_mode = S_IFREG | 0600;
	st->st_nlink = 1;
	st->st_size = (off_t)size;
	st->st_blksize = 4096; /* what mkfs and fio pick as their block size */
	st->st_blocks = (blkcnt_t)((size + 511) / 512);
}

/* errno for the kernel: libweft's own codes (> 4096) mean nothing to it. */
int mount_meta_errno(int rc)
{
	return -rc > 0 && -rc < WEFT_ERRNO_BASE ? -rc : EIO;
}

void mount_meta_lookup(struct mount *m, struct mount_req *r)
{
	struct fuse_entry_param e = {0};
	struct mount_inode *in;
	uint64_t size;
	int rc;

	/* a name that is no volume gets no inode: failed lookups leave nothing behind */
	rc = mount_meta_size_by_name(m, r->name, &size);
	if (rc != 0) {
		/* not a volume name at all (".Trash", too long): simply not there */
		fuse_reply_err(r->req, rc == -EINVAL ? ENOENT : mount_meta_errno(rc));
		return;
	}
	in = mount_meta_by_name(m, r->name);
	if (in == NULL) {
		fuse_reply_err(r->req, ENOMEM);
		return;
	}
	in->size = size;
	e.ino = in->ino;
	e.attr_timeout = e.entry_timeout = MOUNT_ATTR_TTL_S;
	mount_meta_fill(m, in->ino, in->size, &e.attr);
	fuse_reply_entry(r->req, &e);
}

void mount_meta_getattr(struct mount *m, struct mount_req *r)
{
	struct mount_inode *in = NULL;
	struct stat st;
	int rc;

	if (r->ino != MOUNT_ROOT_INO) {
		in = mount_meta_find(m, r->ino);
		if (in == NULL) {
			fuse_reply_err(r->req, ENOENT);
			return;
		}
		rc = mount_meta_refresh(m, in);
		if (rc != 0) {
			fuse_reply_err(r->req, mount_meta_errno(rc));
			return;
		}
	}
	mount_meta_fill(m, r->ino, in ? in->size : 0, &st);
	fuse_reply_attr(r->req, &st, MOUNT_ATTR_TTL_S);
}

/* Grow through the read-write handle, or a short shared one (a resize takes no lock). */
static int mount_meta_grow(struct mount *m, struct mount_inode *in, uint64_t size)
{
	struct weft_vol *vol = in->vol[1];
	int rc;

	if (vol != NULL)
		return weft_vol_resize(vol, size);
	rc = weft_vol_open(m->cl, m->pool, in->name, 0, &vol);
	if (rc != 0)
		return rc;
	rc = weft_vol_resize(vol, size);
	weft_vol_close(vol);
	return rc;
}

/*
 * Only a size change does something: growing resizes the volume; shrinking
 * is refused (EPERM), so an O_TRUNC open or a stray truncate cannot throw a
 * volume's data away ('weft vol resize' can). Times are not stored and are
 * accepted as no-ops; mode and owner changes are refused.
 */
void mount_meta_setattr(struct mount *m, struct mount_req *r)
{
	struct mount_inode *in = mount_meta_find(m, r->ino);
	struct stat st;
	int rc;

	if (r->to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		fuse_reply_err(r->req, EPERM);
		return;
	}
	if (in == NULL && r->ino != MOUNT_ROOT_INO) {
		fuse_reply_err(r->req, ENOENT);
		return;
	}
	if (in != NULL && (rc = mount_meta_refresh(m, in)) != 0) {
		fuse_reply_err(r->req, mount_meta_errno(rc));
		return;
	}
	if ((r->to_set & FUSE_SET_ATTR_SIZE) && in != NULL &&
	    (uint64_t)r->attr.st_size != in->size) {
		if ((uint64_t)r->attr.st_size < in->size) {
			log_warn("mount",
				 "%s/%s: refused to shrink from %llu to %llu bytes by "
				 "truncate (use 'weft vol resize')",
				 m->pool_name, in->name, (unsigned long long)in->size,
				 (unsigned long long)r->attr.st_size);
			fuse_reply_err(r->req, EPERM);
			return;
		}
		rc = mount_meta_grow(m, in, (uint64_t)r->attr.st_size);
		if (rc != 0) {
			log_warn("mount", "%s/%s: grow to %llu bytes: %s", m->pool_name, in->name,
				 (unsigned long long)r->attr.st_size, weft_strerror(rc));
			fuse_reply_err(r->req, mount_meta_errno(rc));
			return;
		}
		in->size = (uint64_t)r->attr.st_size;
		log_info("mount", "%s/%s: grown to %llu bytes", m->pool_name, in->name,
			 (unsigned long long)in->size);
	} else if ((r->to_set & FUSE_SET_ATTR_SIZE) && in == NULL) {
		fuse_reply_err(r->req, EISDIR);
		return;
	}
	mount_meta_fill(m, r->ino, in ? in->size : 0, &st);
	fuse_reply_attr(r->req, &st, MOUNT_ATTR_TTL_S);
}

static void mount_dir_free(struct mount_dir *d)
{
	if (d == NULL)
		return;
	for (size_t i = 0; i < d->n; i++)
		free(d->names[i]);
	free(d->names);
	free(d->inos);
	free(d);
}

static int mount_dir_add_cb(void *arg, const char *name)
{
	struct mount_dir *d = arg;

	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 64;
		char **names = realloc(d->names, cap * sizeof(*names));

		if (names == NULL)
			return -ENOMEM;
		d->names = names;
		d->cap = cap;
	}
	d->names[d->n] = strdup(name);
	if (d->names[d->n] == NULL)
		return -ENOMEM;
	d->n++;
	return 0;
}

static struct mount_dir *mount_dir_list(struct mount *m, int *rc_out)
{
	struct mount_dir *d = calloc(1, sizeof(*d));
	int rc;

	if (d == NULL) {
		*rc_out = -ENOMEM;
		return NULL;
	}
	rc = weft_vol_list(m->cl, m->pool, mount_dir_add_cb, d);
	if (rc != 0) {
		log_warn("mount", "pool %s: listing volumes: %s", m->pool_name, weft_strerror(rc));
		mount_dir_free(d);
		*rc_out = rc;
		return NULL;
	}
	return d;
}

void mount_meta_opendir(struct mount *m, struct mount_req *r)
{
	struct mount_dir *d;
	int rc;

	if (r->ino != MOUNT_ROOT_INO) {
		fuse_reply_err(r->req, ENOTDIR);
		return;
	}
	d = mount_dir_list(m, &rc);
	if (d == NULL) {
		fuse_reply_err(r->req, mount_meta_errno(rc));
		return;
	}
	d->inos = calloc(d->n ? d->n : 1, sizeof(*d->inos));
	for (size_t i = 0; d->inos && i < d->n; i++) {
		struct mount_inode *in = mount_meta_by_name(m, d->names[i]);

		d->inos[i] = in ? in->ino : 0;
	}
	if (d->inos == NULL) {
		mount_dir_free(d);
		fuse_reply_err(r->req, ENOMEM);
		return;
	}
	r->fi.fh = (uint64_t)(uintptr_t)d;
	if (fuse_reply_open(r->req, &r->fi) != 0)
		mount_dir_free(d); /* interrupted: no releasedir will come */
}

/* Offsets: 0 start, 1 after ".", 2 after "..", 2 + i after volume i. */
void mount_meta_readdir(struct mount *m, struct mount_req *r)
{
	struct mount_dir *d = (struct mount_dir *)(uintptr_t)r->fh;
	char *buf = malloc(r->size);
	size_t used = 0;
	struct stat st = {0};

	if (buf == NULL) {
		fuse_reply_err(r->req, ENOMEM);
		return;
	}
	for (uint64_t off = r->off; off < d->n + 2; off++) {
		const char *name = off == 0 ? "." : off == 1 ? ".." : d->names[off - 2];
		size_t need;

		st.st_ino = off < 2 ? MOUNT_ROOT_INO : d->inos[off - 2];
		st.st_mode = off < 2 ? S_IFDIR : S_IFREG;
		need = fuse_add_direntry(r->req, buf + used, r->size - used, name, &st,
					 (off_t)(off + 1));
		if (need > r->size - used)
			break;
		used += need;
	}
	fuse_reply_buf(r->req, buf, used);
	free(buf);
}

void mount_meta_releasedir(struct mount *m, struct mount_req *r)
{
	mount_dir_free((struct mount_dir *)(uintptr_t)r->fh);
	fuse_reply_err(r->req, 0);
}

/*
 * df: the pool's volumes as the file system's size (what is provisioned),
 * nothing free: a volume file cannot be created through the mount, and
 * the cluster's raw space is 'weft status'.
 */
void mount_meta_statfs(struct mount *m, struct mount_req *r)
{
	struct statvfs sv = {0};
	struct mount_dir *d;
	uint64_t total = 0;
	int rc;

	d = mount_dir_list(m, &rc);
	if (d == NULL) {
		fuse_reply_err(r->req, mount_meta_errno(rc));
		return;
	}
	for (size_t i = 0; i < d->n; i++) {
		uint64_t size;

		if (mount_meta_size_by_name(m, d->names[i], &size) == 0)
			total += size;
	}
	sv.f_bsize = sv.f_frsize = 4096;
	sv.f_blocks = total / 4096;
	sv.f_files = d->n;
	sv.f_namemax = WEFT_VOL_NAME_MAX;
	mount_dir_free(d);
	fuse_reply_statfs(r->req, &sv);
}

struct weft_vol *mount_meta_volume(struct mount *m, uint64_t fh)
{
	struct mount_inode *in = mount_meta_find(m, fh >> 1);

	return in ? in->vol[fh & 1] : NULL;
}

/*
 * Open the handle an open(2) with these flags needs; 0 and the file
 * handle in *fh_out, or -errno (-EBUSY: another client holds the lock).
 */
int mount_meta_open(struct mount *m, fuse_ino_t ino, int flags, uint64_t *fh_out)
{
	struct mount_inode *in = mount_meta_find(m, ino);
	unsigned int rw = (flags & O_ACCMODE) != O_RDONLY;
	struct weft_vol_lock_info li;
	int rc;

	if (in == NULL)
		return ino == MOUNT_ROOT_INO ? -EISDIR : -ENOENT;
	if (in->vol[rw] == NULL) {
		rc = weft_vol_open(m->cl, m->pool, in->name, rw ? m->vol_flags : WEFT_VOL_RDONLY,
				   &in->vol[rw]);
		if (rc == -EBUSY && weft_vol_lock_get(m->cl, m->pool, in->name, &li) == 0) {
			log_warn("mount",
				 "%s/%s: in use: its lock is held by %s (since %llu); "
				 "'weft vol lock break' if that client is dead",
				 m->pool_name, in->name, li.holder[0] ? li.holder : "?",
				 (unsigned long long)li.since);
			return rc;
		}
		if (rc != 0) {
			log_warn("mount", "%s/%s: open: %s", m->pool_name, in->name,
				 weft_strerror(rc));
			return rc;
		}
		in->size = weft_vol_size(in->vol[rw]);
		log_info("mount", "%s/%s: opened %s", m->pool_name, in->name,
			 !rw				       ? "read-only"
			 : (m->vol_flags & WEFT_VOL_EXCLUSIVE) ? "read-write, exclusive"
							       : "read-write, shared");
	}
	in->opens[rw]++;
	*fh_out = (ino << 1) | rw;
	return 0;
}

static void mount_meta_close(struct mount *m, struct mount_inode *in, unsigned int rw)
{
	int rc = weft_vol_close(in->vol[rw]);

	if (rc != 0)
		log_warn("mount", "%s/%s: close: %s", m->pool_name, in->name, weft_strerror(rc));
	else
		log_info("mount", "%s/%s: closed (%s)", m->pool_name, in->name,
			 rw ? "read-write" : "read-only");
	in->vol[rw] = NULL;
	in->opens[rw] = 0;
}

void mount_meta_release(struct mount *m, uint64_t fh)
{
	struct mount_inode *in = mount_meta_find(m, fh >> 1);
	unsigned int rw = fh & 1;

	if (in == NULL || in->opens[rw] == 0)
		return;
	if (--in->opens[rw] == 0)
		mount_meta_close(m, in, rw);
}

void mount_meta_close_all(struct mount *m)
{
	while (m->inodes) {
		struct mount_inode *in = m->inodes;

		m->inodes = in->next;
		for (unsigned int rw = 0; rw < 2; rw++)
			if (in->vol[rw])
				mount_meta_close(m, in, rw);
		free(in);
	}
}
