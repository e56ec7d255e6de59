/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The allocation map of a volume (include/weft/volume.h, "ALLOCATION
 * MAP"): one stat per data object in the range, all in flight at once. A
 * missing object is a hole; an existing one is data up to its stored size
 * and a hole past it. Nothing finer is known on the client: zeroed units
 * inside an object are the store's business and show as data, which is
 * the safe side (a hole must read as zeros; data may).
 */
#include <errno.h>
#include <stdlib.h>

#include "client/volume_int.h"
#include "common/log.h"

struct vol_map;

struct vol_map_obj {
	struct vol_map *m;
	uint64_t size; /* stored size; 0 when missing */
};

struct vol_map {
	struct weft_vol *vol;
	uint64_t off, end; /* the range mapped, cut at the volume end */
	uint64_t first;	   /* first object number */
	uint32_t nobj;
	unsigned int pending;
	int rc;
	struct weft_vol_extent *ext;
	unsigned int max;
	weft_op_cb cb;
	void *arg;
	struct vol_map_obj objs[];
};

/* Append [off, off+len) of kind flags, merged into the last extent when alike. */
static bool vol_map_add(struct weft_vol_extent *ext, unsigned int max, unsigned int *n,
			uint64_t off, uint64_t len, uint32_t flags)
{
	if (len == 0)
		return true;
	if (*n > 0 && ext[*n - 1].flags == flags && ext[*n - 1].off + ext[*n - 1].len == off) {
		ext[*n - 1].len += len;
		return true;
	}
	if (*n == max)
		return false;
	ext[*n] = (struct weft_vol_extent){.off = off, .len = len, .flags = flags};
	(*n)++;
	return true;
}

static unsigned int vol_map_build(const struct vol_map *m)
{
	uint64_t os = m->vol->hdr.object_size;
	unsigned int n = 0;

	for (uint32_t i = 0; i < m->nobj; i++) {
		uint64_t start = (m->first + i) * os;
		uint64_t lo = start > m->off ? start : m->off;
		uint64_t hi = start + os < m->end ? start + os : m->end;
		uint64_t data_end = start + m->objs[i].size;

		if (data_end > hi)
			data_end = hi;
		if (data_end < lo)
			data_end = lo;
		if (!vol_map_add(m->ext, m->max, &n, lo, data_end - lo, 0) ||
		    !vol_map_add(m->ext, m->max, &n, data_end, hi - data_end, WEFT_VOL_EXTENT_HOLE))
			break;
	}
	return n;
}

static void vol_map_stat_cb(const struct weft_result *res, void *arg)
{
	struct vol_map_obj *o = arg;
	struct vol_map *m = o->m;
	struct weft_result done = {0};

	if (res->rc == 0)
		o->size = res->length;
	else if (res->rc != -ENOENT && m->rc == 0)
		m->rc = res->rc;
	if (--m->pending > 0)
		return;
	done.rc = m->rc;
	if (m->rc == 0)
		done.length = vol_map_build(m);
	m->vol->inflight--;
	if (m->cb)
		m->cb(&done, m->arg);
	free(m);
}

int weft_vol_aio_extents(struct weft_vol *vol, uint64_t off, uint64_t len,
			 struct weft_vol_extent *ext, unsigned int max, weft_op_cb cb, void *arg)
{
	uint64_t os = vol->hdr.object_size, end, first, last;
	char obj[VOL_OBJ_NAME_MAX];
	struct vol_map *m;
	uint32_t nobj, i;
	int rc = 0;

	if (ext == NULL || max == 0 || off >= vol->hdr.size || len == 0)
		return -EINVAL;
	end = len > vol->hdr.size - off ? vol->hdr.size : off + len;
	first = off / os;
	last = (end - 1) / os;
	if (last - first >= WEFT_VOL_EXTENTS_OBJS)
		last = first + WEFT_VOL_EXTENTS_OBJS - 1;
	if ((last + 1) * os < end)
		end = (last + 1) * os;
	nobj = (uint32_t)(last - first + 1);
	m = calloc(1, sizeof(*m) + nobj * sizeof(m->objs[0]));
	if (m == NULL)
		return -ENOMEM;
	*m = (struct vol_map){.vol = vol,
			      .off = off,
			      .end = end,
			      .first = first,
			      .nobj = nobj,
			      .ext = ext,
			      .max = max,
			      .cb = cb,
			      .arg = arg};
	/* one extra count: no stat can finish the map while we are still submitting */
	m->pending = nobj + 1;
	for (i = 0; i < nobj; i++) {
		m->objs[i].m = m;
		vol_data_obj_name(vol->hdr.id, first + i, obj, sizeof(obj));
		rc = weft_aio_stat(vol->cl, vol->pool, obj, vol_map_stat_cb, &m->objs[i]);
		if (rc != 0)
			break;
	}
	if (i == 0) {
		free(m);
		return rc;
	}
	if (rc != 0) {
		log_error("vol", "volume %s: queueing stat %u of %u for the map failed: %s",
			  vol->hdr.name, i, nobj, weft_strerror(rc));
		m->rc = rc;
		m->pending -= nobj - i;
	}
	m->pending--; /* stats only answer from weft_poll(), so pending > 0 here */
	vol->inflight++;
	return 0;
}
