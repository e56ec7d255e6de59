/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Deep-scrub reads (the PG machine's env obj_crc, docs/recovery.md "Scrub
 * and verify"): the crc32c of an object's data, read back chunk by chunk
 * with store_read_start so the reactor goes on serving ops meanwhile (a
 * deep-scrub batch reads up to 8 objects of up to 4 MiB on every copy). The store
 * checks every block's crc on the way; a copy that cannot be read gets
 * PG_OBJ_CRC_BAD, never equal to a good copy's. The scrub fence keeps the
 * object unchanged until the last chunk is in.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"
#include "common/log.h"
#include "osd/osd_pg.h"
#include "weft/weft.h"

#define OSD_CRC_CHUNK (1u << 20)

struct osd_crc_read {
	struct osd *osd;
	struct osd_crc_read *next, *prev; /* osd->crc_reads: freed at stop if still reading */
	uint32_t pool, pg;
	uint64_t token, size, off;
	uint32_t crc;
	size_t cap;
	void *buf; /* 4 KiB aligned: read into directly */
	char name[PROTO_OBJ_NAME_MAX + 1];
};

static void osd_crc_free(struct osd_crc_read *r)
{
	free(r->buf);
	free(r);
}

static void osd_crc_unlink(struct osd_crc_read *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		r->osd->crc_reads = r->next;
	if (r->next)
		r->next->prev = r->prev;
}

/* Read chunks until one has to wait for the device (0), all are in (1) or one failed (<0). */
static int osd_crc_run(struct osd_crc_read *r);

static void osd_crc_end(struct osd_crc_read *r, int rc)
{
	struct osd_pg *pg = osd_pg_find(r->osd, r->pool, r->pg);

	if (rc < 0)
		log_warn("osd", "%s pg %u.%x: deep scrub of %s: %s", r->osd->name, r->pool, r->pg,
			 r->name, weft_strerror(rc));
	if (pg != NULL && pg->m != NULL)
		pg_obj_crc_done(pg->m, r->token, rc < 0 ? PG_OBJ_CRC_BAD : r->crc);
	osd_crc_unlink(r);
	osd_crc_free(r);
}

static void osd_crc_cb(void *arg, int rc, uint64_t got)
{
	struct osd_crc_read *r = arg;

	r->osd->store_pending--;
	if (rc == 0 && got == 0 && r->off < r->size)
		rc = -EIO; /* shorter than its size said */
	if (rc == 0) {
		r->crc = crc32c(r->crc, r->buf, got);
		r->off += got;
		rc = osd_crc_run(r);
	}
	if (rc != 0)
		osd_crc_end(r, rc == 1 ? 0 : rc);
}

static int osd_crc_run(struct osd_crc_read *r)
{
	uint64_t pgk = osd_pg_key(r->pool, r->pg);

	while (r->off < r->size) {
		uint64_t len = r->size - r->off < r->cap ? r->size - r->off : r->cap, got = 0;
		int rc = store_read_start(r->osd->store, pgk, r->name, r->off, len, r->buf, r->cap,
					  osd_crc_cb, r, &got);

		if (rc < 0)
			return rc;
		if (rc == 0) {
			r->osd->store_pending++;
			return 0;
		}
		if (got == 0)
			return -EIO;
		r->crc = crc32c(r->crc, r->buf, got);
		r->off += got;
	}
	return 1;
}

int osd_crc_start(struct osd *osd, uint32_t pool, uint32_t pg, const char *name, uint64_t size,
		  uint64_t token, uint32_t *crc_out)
{
	struct osd_crc_read *r = calloc(1, sizeof(*r));
	int rc;

	if (r == NULL)
		return -ENOMEM;
	r->osd = osd;
	r->pool = pool;
	r->pg = pg;
	r->token = token;
	r->size = size;
	r->cap = size < OSD_CRC_CHUNK ? (size + 4095) & ~(size_t)4095 : OSD_CRC_CHUNK;
	r->buf = aligned_alloc(4096, r->cap ? r->cap : 4096);
	snprintf(r->name, sizeof(r->name), "%s", name);
	if (r->buf == NULL) {
		osd_crc_free(r);
		return -ENOMEM;
	}
	rc = osd_crc_run(r);
	if (rc == 0) {
		r->next = osd->crc_reads;
		if (r->next)
			r->next->prev = r;
		osd->crc_reads = r;
		return 0; /* pg_obj_crc_done from the read's callback */
	}
	if (rc < 0)
		log_warn("osd", "%s pg %u.%x: deep scrub of %s: %s", osd->name, pool, pg, name,
			 weft_strerror(rc));
	*crc_out = rc < 0 ? PG_OBJ_CRC_BAD : r->crc;
	osd_crc_free(r);
	return 1;
}

void osd_crc_fini(struct osd *osd)
{
	/* reads were abandoned (store_reads_abandon): no callback frees them */
	while (osd->crc_reads) {
		struct osd_crc_read *r = osd->crc_reads;

		osd->crc_reads = r->next;
		osd_crc_free(r);
	}
}
