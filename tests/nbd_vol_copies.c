/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nbd_vol_copies: what the cluster holds behind a volume, for
 * tests/test_nbd.sh (the NBD export is checked against the OSDs' own
 * copies, not only against what the export reads back).
 *
 *   nbd_vol_copies CONF POOL VOLUME primary OFF
 *       the OSD that is primary for the data object holding byte OFF
 *   nbd_vol_copies CONF POOL VOLUME check OFF LEN FILE OSD...
 *       each listed OSD's own copy (PROTO_OP_READ_LOCAL, bypassing the
 *       primary) of volume bytes [OFF, OFF+LEN), inside one object, equals
 *       the first LEN bytes of FILE
 *   nbd_vol_copies CONF POOL VOLUME objects OFF LEN
 *       how many data objects exist for [OFF, OFF+LEN) (removed = no space)
 *
 * Exit 0 and one line on stdout, or 1 and one line on stderr.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_debug.h"
#include "weft/volume.h"

static int fail(const char *what, int rc)
{
	fprintf(stderr, "nbd_vol_copies: %s: %s\n", what, weft_strerror(rc));
	return 1;
}

static uint64_t num(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 0);

	if (*end != '\0') {
		fprintf(stderr, "nbd_vol_copies: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static void obj_name(const struct weft_vol_info *vi, uint64_t objno, char *out, size_t cap)
{
	snprintf(out, cap, "%s.%016" PRIx64, vi->block_name_prefix, objno);
}

static int cmd_primary(struct weft_cluster *cl, uint32_t pool, const struct weft_vol_info *vi,
		       uint64_t off)
{
	char obj[96];
	uint64_t size = 0, primary = 0;
	int rc;

	obj_name(vi, off / vi->object_size, obj, sizeof(obj));
	/* osd.0 answers if it is the primary, else it names the primary (-ENXIO) */
	rc = weft_debug_stat_at(cl, 0, pool, obj, &size, &primary);
	if (rc == 0 || rc == -ENOENT)
		primary = 0;
	else if (rc != -ENXIO)
		return fail(obj, rc);
	printf("%" PRIu64 "\n", primary);
	return 0;
}

static int cmd_check(struct weft_cluster *cl, uint32_t pool, const struct weft_vol_info *vi,
		     uint64_t off, uint64_t len, const char *file, char **osds, int nosd)
{
	uint64_t inobj = off % vi->object_size;
	uint8_t *want = malloc(len), *got = malloc(len + 1);
	char obj[96], what[160];
	FILE *f = fopen(file, "rb");
	int rc = 1;

	if (inobj + len > vi->object_size) {
		fprintf(stderr, "nbd_vol_copies: the range crosses an object boundary\n");
		goto out;
	}
	if (f == NULL || fread(want, 1, len, f) != len) {
		fprintf(stderr, "nbd_vol_copies: %s: cannot read %" PRIu64 " bytes\n", file, len);
		goto out;
	}
	obj_name(vi, off / vi->object_size, obj, sizeof(obj));
	for (int i = 0; i < nosd; i++) {
		uint32_t osd = (uint32_t)num(osds[i]);
		size_t n = 0;
		int r = weft_debug_read_local(cl, osd, pool, obj, got, len, inobj, &n);

		snprintf(what, sizeof(what), "osd.%u's copy of %s", osd, obj);
		if (r != 0) {
			rc = fail(what, r);
			goto out;
		}
		if (n != len || memcmp(got, want, len) != 0) {
			fprintf(stderr,
				"nbd_vol_copies: %s differs (%zu of %" PRIu64 " bytes read)\n",
				what, n, len);
			goto out;
		}
	}
	printf("%d copies of %s [%" PRIu64 ", +%" PRIu64 ") match %s\n", nosd, obj, inobj, len,
	       file);
	rc = 0;
out:
	if (f)
		fclose(f);
	free(want);
	free(got);
	return rc;
}

static int cmd_objects(struct weft_cluster *cl, uint32_t pool, const struct weft_vol_info *vi,
		       uint64_t off, uint64_t len)
{
	uint64_t n = 0;
	char obj[96];

	for (uint64_t o = off / vi->object_size; len > 0 && o <= (off + len - 1) / vi->object_size;
	     o++) {
		int rc;

		obj_name(vi, o, obj, sizeof(obj));
		rc = weft_stat(cl, pool, obj, NULL, NULL);
		if (rc == 0)
			n++;
		else if (rc != -ENOENT)
			return fail(obj, rc);
	}
	printf("%" PRIu64 "\n", n);
	return 0;
}

int main(int argc, char **argv)
{
	struct weft_vol_info vi;
	struct weft_cluster *cl;
	uint32_t pool;
	int rc;

	if (argc < 6) {
		fprintf(stderr,
			"usage: nbd_vol_copies CONF POOL VOLUME primary OFF | check OFF LEN "
			"FILE OSD... | objects OFF LEN\n");
		return 2;
	}
	rc = weft_connect(argv[1], "client.admin", &cl);
	if (rc != 0)
		return fail("connect", rc);
	rc = weft_pool_lookup(cl, argv[2], &pool);
	if (rc == 0)
		rc = weft_vol_info(cl, pool, argv[3], &vi);
	if (rc != 0) {
		weft_disconnect(cl);
		return fail(argv[3], rc);
	}
	if (!strcmp(argv[4], "primary"))
		rc = cmd_primary(cl, pool, &vi, num(argv[5]));
	else if (!strcmp(argv[4], "check") && argc >= 10)
		rc = cmd_check(cl, pool, &vi, num(argv[5]), num(argv[6]), argv[7], argv + 8,
			       argc - 8);
	else if (!strcmp(argv[4], "objects") && argc == 7)
		rc = cmd_objects(cl, pool, &vi, num(argv[5]), num(argv[6]));
	else
		rc = 2;
	if (rc == 2)
		fprintf(stderr, "nbd_vol_copies: bad command\n");
	weft_disconnect(cl);
	return rc;
}
