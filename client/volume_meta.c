/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Volume metadata operations (docs/volumes.md): create, remove, list, open,
 * close, stat, resize. The header "wvol_header.<name>" is the volume's
 * existence: create claims it with a compare-and-write against "missing",
 * resize rewrites it against the bytes it read. The pool's directory
 * "wvol_directory" (sorted names) is only for listing, updated the same way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "client/volume_int.h"
#include "common/clock.h"
#include "common/log.h"

int vol_hdr_load(struct weft_cluster *cl, uint32_t pool, const char *name, struct vol_hdr *h_out,
		 uint8_t *raw, size_t *raw_len_out)
{
	char obj[PROTO_OBJ_NAME_MAX + 1];
	uint8_t *buf;
	size_t len;
	int rc = vol_name_check(name);

	if (rc != 0)
		return rc;
	vol_hdr_obj_name(name, obj, sizeof(obj));
	rc = vol_obj_read_all(cl, pool, obj, VOL_HDR_MAX, &buf, &len);
	if (rc != 0)
		return rc;
	rc = len == 0 ? -ENOENT : vol_hdr_decode(buf, len, obj, h_out);
	if (rc == 0 && strcmp(h_out->name, name) != 0) {
		log_error("vol", "%s: header is corrupt: it names volume '%s'", obj, h_out->name);
		rc = -WEFT_E_CORRUPT;
	}
	if (rc == 0 && raw) {
		memcpy(raw, buf, len);
		*raw_len_out = len;
	}
	free(buf);
	return rc;
}

/* Add (add = true) or drop name in the pool's directory, racing other clients by compare-and-write.
 */
static int vol_dir_update(struct weft_cluster *cl, uint32_t pool, const char *name, bool add)
{
	int rc = -EAGAIN;

	for (unsigned int t = 0; t < VOL_CAS_TRIES && rc == -EAGAIN; t++) {
		uint8_t *cur = NULL, *nw = NULL;
		size_t cur_len = 0, nw_len = 0;
		char **names = NULL, **v = NULL;
		uint32_t n = 0, i = 0;
		int cmp = 1;

		rc = vol_obj_read_all(cl, pool, VOL_DIR_OBJ, VOL_DIR_MAX, &cur, &cur_len);
		if (rc == 0)
			rc = vol_dir_decode(cur, cur_len, &names, &n);
		if (rc != 0) {
			free(cur);
			return rc;
		}
		while (i < n && (cmp = strcmp(names[i], name)) < 0)
			i++;
		if ((add && i < n && cmp == 0) || (!add && (i == n || cmp != 0))) {
			rc = 0; /* already as wanted */
			goto next;
		}
		v = malloc((n + 1) * sizeof(*v));
		nw = malloc(VOL_DIR_MAX);
		if (v == NULL || nw == NULL) {
			rc = -ENOMEM;
			goto next;
		}
		/* names is NULL for an empty directory: copy element by element */
		for (uint32_t k = 0, j = 0; k < n; k++)
			if (add || k != i)
				v[j++ + (add && k >= i)] = names[k];
		if (add)
			v[i] = (char *)name;
		rc = vol_dir_encode(v, add ? n + 1 : n - 1, nw, VOL_DIR_MAX, &nw_len);
		if (rc == -ENOBUFS) {
			log_error("vol", "pool %u: volume directory is full (%u names, %u bytes)",
				  pool, n, VOL_DIR_MAX);
			rc = -ENOSPC;
		}
		if (rc == 0)
			rc = vol_obj_cas(cl, pool, VOL_DIR_OBJ, cur, cur_len, nw, nw_len);
		if (rc == -ECANCELED)
			rc = -EAGAIN;
	next:
		free(v);
		free(nw);
		free(cur);
		vol_dir_free(names, n);
	}
	if (rc == -EAGAIN) {
		log_error("vol", "pool %u: volume directory kept changing (%u tries)", pool,
			  VOL_CAS_TRIES);
		rc = -EBUSY;
	}
	return rc;
}

int weft_vol_create(struct weft_cluster *cl, uint32_t pool, const char *name, uint64_t size,
		    const struct weft_vol_opts *opts)
{
	char obj[PROTO_OBJ_NAME_MAX + 1];
	uint8_t raw[VOL_HDR_MAX];
	struct vol_hdr h, got;
	size_t len;
	int rc = vol_hdr_init(&h, name, size, opts);

	if (rc != 0)
		return rc;
	while (h.id == 0)
		if (getrandom(&h.id, sizeof(h.id), 0) != (ssize_t)sizeof(h.id))
			h.id = clock_now_ns() * 0x9e3779b97f4a7c15ull;
	h.create_time = (uint64_t)time(NULL);
	rc = vol_hdr_encode(&h, raw, sizeof(raw), &len);
	if (rc != 0)
		return rc;
	vol_hdr_obj_name(name, obj, sizeof(obj));
	rc = vol_obj_cas(cl, pool, obj, NULL, 0, raw, len);
	if (rc == -ECANCELED) {
		/* exists, unless our own write landed and only its reply was lost */
		rc = vol_hdr_load(cl, pool, name, &got, NULL, NULL);
		if (rc == 0 && got.id != h.id) {
			log_error("vol", "volume %s already exists in pool %u", name, pool);
			return -EEXIST;
		}
		if (rc != 0)
			return rc == -WEFT_E_CORRUPT ? -EEXIST : rc;
	}
	if (rc != 0) {
		log_error("vol", "volume %s: writing the header failed: %s", name,
			  weft_strerror(rc));
		return rc;
	}
	rc = vol_dir_update(cl, pool, name, true);
	if (rc != 0) {
		log_error("vol", "volume %s: adding it to the directory failed: %s; undoing", name,
			  weft_strerror(rc));
		weft_remove(cl, pool, obj);
	}
	return rc;
}

int weft_vol_remove(struct weft_cluster *cl, uint32_t pool, const char *name)
{
	char obj[PROTO_OBJ_NAME_MAX + 1];
	struct vol_hdr h;
	struct vol_lock l;
	int rc = vol_hdr_load(cl, pool, name, &h, NULL, NULL);

	if (rc == -ENOENT) /* a create or remove cut short leaves the name listed: tidy it */
		return vol_dir_update(cl, pool, name, false) == 0 ? -ENOENT : rc;
	if (rc == 0)
		rc = vol_lock_read(cl, pool, h.id, &l);
	if (rc != 0)
		return rc;
	if (l.holder[0]) {
		log_error("vol", "volume %s: exclusively locked by %s; break the lock first", name,
			  l.holder);
		return -EBUSY;
	}
	/* data first, header last: an interrupted remove can run again */
	rc = vol_objs_remove(cl, pool, h.id, 0, (h.size + h.object_size - 1) / h.object_size);
	if (rc == 0) {
		vol_lock_obj_name(h.id, obj, sizeof(obj));
		rc = weft_remove(cl, pool, obj);
		rc = rc == -ENOENT ? 0 : rc;
	}
	if (rc == 0) {
		vol_hdr_obj_name(name, obj, sizeof(obj));
		rc = weft_remove(cl, pool, obj);
		rc = rc == -ENOENT ? 0 : rc;
	}
	if (rc == 0)
		rc = vol_dir_update(cl, pool, name, false);
	if (rc != 0)
		log_error("vol", "volume %s: remove failed: %s (run it again)", name,
			  weft_strerror(rc));
	return rc;
}

int weft_vol_list(struct weft_cluster *cl, uint32_t pool, weft_vol_list_cb cb, void *arg)
{
	uint8_t *buf;
	size_t len;
	char **names = NULL;
	uint32_t n = 0;
	int rc = vol_obj_read_all(cl, pool, VOL_DIR_OBJ, VOL_DIR_MAX, &buf, &len);

	if (rc != 0)
		return rc;
	rc = vol_dir_decode(buf, len, &names, &n);
	free(buf);
	for (uint32_t i = 0; i < n && rc == 0; i++)
		rc = cb(arg, names[i]);
	vol_dir_free(names, n);
	return rc;
}

static void vol_set_hdr(struct weft_vol *vol, const struct vol_hdr *h)
{
	vol->hdr = *h;
	vol->piece_max = h->object_size < vol->cl->max_op ? h->object_size : vol->cl->max_op;
}

int weft_vol_open(struct weft_cluster *cl, uint32_t pool, const char *name, unsigned int flags,
		  struct weft_vol **vol_out)
{
	struct weft_vol *vol;
	struct vol_hdr h;
	struct vol_lock l;
	int rc;

	if (flags & ~(WEFT_VOL_RDONLY | WEFT_VOL_EXCLUSIVE | WEFT_VOL_FORCE) ||
	    ((flags & WEFT_VOL_RDONLY) && (flags & WEFT_VOL_EXCLUSIVE)) ||
	    ((flags & WEFT_VOL_FORCE) && !(flags & WEFT_VOL_EXCLUSIVE)))
		return -EINVAL;
	vol = calloc(1, sizeof(*vol));
	if (vol == NULL)
		return -ENOMEM;
	vol->cl = cl;
	vol->pool = pool;
	vol->flags = flags;
	rc = vol_hdr_load(cl, pool, name, &h, vol->hdr_raw, &vol->hdr_len);
	if (rc != 0)
		goto err_free;
	vol_set_hdr(vol, &h);
	vol_hdr_obj_name(name, vol->hdr_obj, sizeof(vol->hdr_obj));
	vol_lock_obj_name(h.id, vol->lock_obj, sizeof(vol->lock_obj));
	vol_holder_make(cl, vol->holder, sizeof(vol->holder));
	if (flags & WEFT_VOL_EXCLUSIVE) {
		rc = vol_lock_acquire(vol, (flags & WEFT_VOL_FORCE) != 0);
	} else if (!(flags & WEFT_VOL_RDONLY)) {
		rc = vol_lock_read(cl, pool, h.id, &l);
		if (rc == 0 && l.holder[0]) {
			log_error("vol",
				  "volume %s: exclusively locked by %s; not opening for write",
				  name, l.holder);
			rc = -EBUSY;
		}
	}
	if (rc != 0)
		goto err_free;
	*vol_out = vol;
	return 0;
err_free:
	free(vol);
	return rc;
}

int weft_vol_close(struct weft_vol *vol)
{
	uint64_t hard = clock_now_ms() + vol->cl->op_timeout_ms + 5000;
	int rc;

	while (vol->inflight > 0 && clock_now_ms() < hard)
		weft_poll(vol->cl, 5);
	if (vol->inflight > 0) {
		/* callbacks would touch freed memory: keep the handle (a leak, logged) */
		log_error("vol", "volume %s: %u ops still in flight at close; handle leaked",
			  vol->hdr.name, vol->inflight);
		return -EBUSY;
	}
	rc = vol_lock_release(vol);
	free(vol);
	return rc;
}

static void vol_info_fill(const struct vol_hdr *hp, struct weft_vol_info *info_out);

uint64_t weft_vol_size(const struct weft_vol *vol)
{
	return vol->hdr.size;
}

int weft_vol_stat(struct weft_vol *vol, struct weft_vol_info *info_out)
{
	struct vol_hdr h;
	uint8_t raw[VOL_HDR_MAX];
	size_t len;
	int rc = vol_hdr_load(vol->cl, vol->pool, vol->hdr.name, &h, raw, &len);

	if (rc != 0)
		return rc;
	if (h.id != vol->hdr.id) {
		log_error("vol", "volume %s was removed and created again since it was opened",
			  h.name);
		return -ESTALE;
	}
	vol_set_hdr(vol, &h);
	memcpy(vol->hdr_raw, raw, len);
	vol->hdr_len = len;
	vol_info_fill(&h, info_out);
	return 0;
}

int weft_vol_info(struct weft_cluster *cl, uint32_t pool, const char *name,
		  struct weft_vol_info *info_out)
{
	struct vol_hdr h;
	int rc = vol_hdr_load(cl, pool, name, &h, NULL, NULL);

	if (rc == 0)
		vol_info_fill(&h, info_out);
	return rc;
}

static void vol_info_fill(const struct vol_hdr *hp, struct weft_vol_info *info_out)
{
	const struct vol_hdr h = *hp;

	memset(info_out, 0, sizeof(*info_out));
	memcpy(info_out->name, h.name, sizeof(info_out->name));
	info_out->id = h.id;
	info_out->size = h.size;
	info_out->object_size = h.object_size;
	info_out->stripe_unit = h.stripe_unit;
	info_out->stripe_count = h.stripe_count;
	info_out->format = h.format;
	info_out->features = h.features;
	info_out->num_objects = (h.size + h.object_size - 1) / h.object_size;
	info_out->create_time = h.create_time;
	vol_data_prefix(h.id, info_out->block_name_prefix, sizeof(info_out->block_name_prefix));
}

/* Shrinking: drop the objects past the new end, cut the one it falls in. */
static int vol_shrink_data(struct weft_vol *vol, uint64_t old_size, uint64_t size)
{
	uint64_t os = vol->hdr.object_size, keep = (size + os - 1) / os;
	char obj[VOL_OBJ_NAME_MAX];
	int rc = vol_objs_remove(vol->cl, vol->pool, vol->hdr.id, keep, (old_size + os - 1) / os);

	if (rc == 0 && size % os != 0) {
		vol_data_obj_name(vol->hdr.id, size / os, obj, sizeof(obj));
		rc = weft_truncate(vol->cl, vol->pool, obj, size % os);
		rc = rc == -ENOENT ? 0 : rc;
	}
	return rc;
}

int weft_vol_resize(struct weft_vol *vol, uint64_t size)
{
	int rc = -EAGAIN;

	if (vol->flags & WEFT_VOL_RDONLY)
		return -EROFS;
	if (size == 0 || size > WEFT_VOL_SIZE_MAX) {
		log_error("vol", "volume %s: size %llu not in 1..2^60 bytes", vol->hdr.name,
			  (unsigned long long)size);
		return -EINVAL;
	}
	if (vol->locked || vol->lock_lost) {
		rc = vol_lock_check(vol);
	} else {
		struct vol_lock l;

		rc = vol_lock_read(vol->cl, vol->pool, vol->hdr.id, &l);
		if (rc == 0 && l.holder[0]) {
			log_error("vol", "volume %s: exclusively locked by %s; not resizing",
				  vol->hdr.name, l.holder);
			rc = -EBUSY;
		}
	}
	for (unsigned int t = 0; rc == 0 && t < VOL_CAS_TRIES; t++) {
		struct weft_vol_info info;
		struct vol_hdr h;
		uint8_t raw[VOL_HDR_MAX];
		size_t len;

		rc = weft_vol_stat(vol, &info); /* the header as it is now */
		if (rc != 0)
			break;
		if (size < info.size)
			rc = vol_shrink_data(vol, info.size, size);
		if (rc != 0)
			break;
		h = vol->hdr;
		h.size = size;
		rc = vol_hdr_encode(&h, raw, sizeof(raw), &len);
		if (rc == 0)
			rc = vol_obj_cas(vol->cl, vol->pool, vol->hdr_obj, vol->hdr_raw,
					 vol->hdr_len, raw, len);
		if (rc == 0) {
			vol_set_hdr(vol, &h);
			memcpy(vol->hdr_raw, raw, len);
			vol->hdr_len = len;
			return 0;
		}
		if (rc == -ECANCELED)
			rc = 0; /* resized by someone else meanwhile: look again */
	}
	if (rc == 0)
		rc = -EBUSY;
	log_error("vol", "volume %s: resize to %llu failed: %s", vol->hdr.name,
		  (unsigned long long)size, weft_strerror(rc));
	return rc;
}
