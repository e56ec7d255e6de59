/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Inodes and attributes, on the I/O thread (mount.h). The root directory
 * is inode 1; each volume gets the next inode number the first time a
 * lookup or readdir sees its name, and keeps it until unmount (so a name's
 * inode never changes under a cached dentry). One volume handle per inode,
 * opened on the first open() and closed on the last release(): several
 * opens of one file (fio jobs, a loop device) share it, which also keeps an
 * exclusive open from conflicting with ourselves.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "client/mount/mount.h"
#include "common/log.h"

struct mount_inode {
	struct mount_inode *next;
	fuse_ino_t ino;
	uint64_t size; /* last seen; refreshed by lookup, getattr and open */
	struct weft_volume *vol;
	unsigned int opens;
	char name[];
};

/* A directory listing, taken at opendir so offsets stay stable while it is read. */
struct mount_dir {
	size_t n;
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

/* The volume's current size: from the open handle, else from its header. */
static int mount_meta_refresh(struct mount *m, struct mount_inode *in)
{
	struct weft_vol_info info;
	int rc;

	if (in->vol != NULL)
		rc = weft_vol_stat(in->vol, &info);
	else
		rc = weft_vol_info(m->cl, m->pool, in->name, &info);
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

/* -errno for the kernel: libweft's own codes (> 4096) mean nothing to it. */
static int mount_meta_errno(int rc)
{
	return -rc > 0 && -rc < WEFT_ERRNO_BASE ? -rc : EIO;
}

void mount_meta_lookup(struct mount *m, struct mount_req *r)
{
	struct fuse_entry_param e = {0};
	struct weft_vol_info info;
	struct mount_inode *in;
	int rc;

	/* a name that is no volume gets no inode: failed lookups leave nothing behind */
	rc = weft_vol_info(m->cl, m->pool, r->name, &info);
	if (rc != 0) {
		fuse_reply_err(r->req, mount_meta_errno(rc));
		return;
	}
	in = mount_meta_by_name(m, r->name);
	if (in == NULL) {
		fuse_reply_err(r->req, ENOMEM);
		return;
	}
	if (in->vol == NULL || mount_meta_refresh(m, in) != 0)
		in->size = info.size;
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
	if ((r->to_set & FUSE_SET_ATTR_SIZE) && in != NULL && (uint64_t)r->attr.st_size != in->size) {
		if ((uint64_t)r->attr.st_size < in->size) {
			log_warn("mount", "%s/%s: refused to shrink from %llu to %llu bytes by "
					  "truncate (use 'weft vol resize')",
				 m->pool_name, in->name, (unsigned long long)in->size,
				 (unsigned long long)r->attr.st_size);
			fuse_reply_err(r->req, EPERM);
			return;
		}
		rc = weft_vol_resize_by_name(m->cl, m->pool, in->name, (uint64_t)r->attr.st_size);
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

void mount_meta_opendir(struct mount *m, struct mount_req *r)
{
	struct mount_dir *d = calloc(1, sizeof(*d));
	int rc;

	if (d == NULL) {
		fuse_reply_err(r->req, ENOMEM);
		return;
	}
	rc = weft_vol_list(m->cl, m->pool, &d->names, &d->n);
	if (rc != 0) {
		log_warn("mount", "pool %s: listing volumes: %s", m->pool_name, weft_strerror(rc));
		free(d);
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
	uint64_t total = 0;
	char **names = NULL;
	size_t n = 0;
	int rc;

	rc = weft_vol_list(m->cl, m->pool, &names, &n);
	if (rc != 0) {
		fuse_reply_err(r->req, mount_meta_errno(rc));
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct weft_vol_info info;

		if (weft_vol_info(m->cl, m->pool, names[i], &info) == 0)
			total += info.size;
		free(names[i]);
	}
	free(names);
	sv.f_bsize = sv.f_frsize = 4096;
	sv.f_blocks = total / 4096;
	sv.f_files = n;
	sv.f_namemax = 255;
	fuse_reply_statfs(r->req, &sv);
}

struct weft_volume *mount_meta_volume(struct mount *m, fuse_ino_t ino, int *rc_out)
{
	struct mount_inode *in = mount_meta_find(m, ino);

	if (in == NULL || in->vol == NULL) {
		*rc_out = -EBADF;
		return NULL;
	}
	return in->vol;
}

uint64_t mount_meta_size(struct mount *m, fuse_ino_t ino)
{
	struct mount_inode *in = mount_meta_find(m, ino);

	return in ? in->size : 0;
}

int mount_meta_open(struct mount *m, fuse_ino_t ino)
{
	struct mount_inode *in = mount_meta_find(m, ino);
	int rc;

	if (in == NULL)
		return ino == MOUNT_ROOT_INO ? -EISDIR : -ENOENT;
	if (in->vol == NULL) {
		rc = weft_vol_open(m->cl, m->pool, in->name, 0, &in->vol);
		if (rc != 0) {
			log_warn("mount", "%s/%s: open: %s", m->pool_name, in->name,
				 weft_strerror(rc));
			return rc;
		}
		log_info("mount", "%s/%s: opened", m->pool_name, in->name);
	}
	in->opens++;
	mount_meta_refresh(m, in);
	return 0;
}

static void mount_meta_close(struct mount *m, struct mount_inode *in)
{
	int rc = weft_vol_close(in->vol);

	if (rc != 0)
		log_warn("mount", "%s/%s: close: %s", m->pool_name, in->name, weft_strerror(rc));
	else
		log_info("mount", "%s/%s: closed", m->pool_name, in->name);
	in->vol = NULL;
	in->opens = 0;
}

void mount_meta_release(struct mount *m, fuse_ino_t ino)
{
	struct mount_inode *in = mount_meta_find(m, ino);

	if (in == NULL || in->opens == 0)
		return;
	if (--in->opens == 0)
		mount_meta_close(m, in);
}

void mount_meta_close_all(struct mount *m)
{
	while (m->inodes) {
		struct mount_inode *in = m->inodes;

		m->inodes = in->next;
		if (in->vol)
			mount_meta_close(m, in);
		free(in);
	}
}
