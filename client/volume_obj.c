/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Small-object helpers for volume metadata (header, lock, directory) and
 * the batched object removal behind remove and shrink. Synchronous: they
 * run the event loop, so never call them from a completion callback.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "client/volume_int.h"
#include "common/clock.h"
#include "common/log.h"

int vol_wait(struct weft_cluster *cl, const bool *done)
{
	uint64_t hard = clock_now_ms() + cl->op_timeout_ms + 5000;
	int rc;

	while (!*done) {
		if (clock_now_ms() > hard)
			return -ETIMEDOUT; /* only if the loop itself is wedged */
		rc = weft_poll(cl, 5);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int vol_defer(struct weft_cluster *cl, int rc, uint64_t length, weft_op_cb cb, void *arg)
{
	struct weft_result res = {.rc = rc, .length = length};

	return client_op_defer(cl, &res, cb, arg);
}

struct vol_sync {
	bool done;
	struct weft_result res;
};

static void vol_sync_cb(const struct weft_result *res, void *arg)
{
	struct vol_sync *s = arg;

	s->res = *res;
	s->done = true;
}

int vol_obj_read_all(struct weft_cluster *cl, uint32_t pool, const char *obj, size_t cap,
		     uint8_t **buf_out, size_t *len_out)
{
	size_t got = 0;
	/* one byte more than allowed tells "too big" from "exactly cap" */
	uint8_t *buf = malloc(cap + 1);
	int rc;

	if (buf == NULL)
		return -ENOMEM;
	rc = weft_read(cl, pool, obj, buf, cap + 1, 0, &got);
	if (rc == -ENOENT) {
		rc = 0;
		got = 0;
	}
	if (rc == 0 && got > cap) {
		log_error("vol", "%s: object is larger than %zu bytes: not volume metadata", obj,
			  cap);
		rc = -WEFT_E_CORRUPT;
	}
	if (rc != 0) {
		free(buf);
		return rc;
	}
	*buf_out = buf;
	*len_out = got;
	return 0;
}

int vol_obj_cas(struct weft_cluster *cl, uint32_t pool, const char *obj, const void *cur,
		size_t cur_len, const void *nw, size_t nw_len)
{
	struct vol_sync s = {0};
	uint8_t *buf = malloc(cur_len + nw_len + 1);
	int rc;

	if (buf == NULL)
		return -ENOMEM;
	if (cur_len)
		memcpy(buf, cur, cur_len);
	memcpy(buf + cur_len, nw, nw_len);
	rc = client_aio_cmp_write_full(cl, pool, obj, buf, cur_len, cur_len + nw_len, vol_sync_cb,
				       &s);
	if (rc == 0)
		rc = vol_wait(cl, &s.done);
	if (rc == 0)
		rc = s.res.rc;
	/* a wedged loop leaves the op queued with buf: leak it rather than free it under the op */
	if (s.done)
		free(buf);
	return rc;
}

struct vol_batch {
	unsigned int inflight;
	int rc;
};

static void vol_batch_cb(const struct weft_result *res, void *arg)
{
	struct vol_batch *b = arg;

	b->inflight--;
	if (res->rc != 0 && res->rc != -ENOENT && b->rc == 0)
		b->rc = res->rc;
}

int vol_objs_remove(struct weft_cluster *cl, uint32_t pool, uint64_t id, uint64_t from, uint64_t to)
{
	struct vol_batch *b = calloc(1, sizeof(*b));
	char obj[VOL_OBJ_NAME_MAX];
	uint64_t hard;
	int rc = 0;

	if (b == NULL)
		return -ENOMEM;
	uint64_t next_note = clock_now_ms() + 2000;

	for (uint64_t o = from; o < to && b->rc == 0 && rc == 0; o++) {
		while (b->inflight >= VOL_BATCH_WINDOW && rc >= 0)
			rc = weft_poll(cl, 5);
		/* one remove per object number, written or not: long for big volumes, so say so */
		if (clock_now_ms() >= next_note) {
			log_info("vol",
				 "removing data objects %016" PRIx64 ": %" PRIu64 " of %" PRIu64
				 " (%.1f%%)",
				 id, o - from, to - from,
				 100.0 * (double)(o - from) / (double)(to - from));
			next_note = clock_now_ms() + 2000;
		}
		if (rc < 0)
			break;
		vol_data_obj_name(id, o, obj, sizeof(obj));
		rc = weft_aio_remove(cl, pool, obj, vol_batch_cb, b);
		if (rc == 0)
			b->inflight++;
	}
	/* every op ends by its deadline; the hard bound only guards a wedged loop */
	hard = clock_now_ms() + cl->op_timeout_ms + 5000;
	while (b->inflight > 0 && clock_now_ms() < hard)
		weft_poll(cl, 5);
	if (rc >= 0)
		rc = b->rc;
	if (b->inflight == 0)
		free(b);
	else
		rc = -ETIMEDOUT; /* callbacks still point at b: leak it */
	return rc < 0 ? rc : 0;
}
