/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Known data for tests/test_capacity.sh: objects PREFIX.FIRST .. of SIZE
 * bytes written with write_full, or removed. Stops at the first error and
 * says how far it got and the error's text, so the script can tell a
 * refused write (full, quota) from a failure.
 *
 *   capacity_io -c CONF -p POOL fill PREFIX FIRST COUNT SIZE
 *   capacity_io -c CONF -p POOL rm PREFIX FIRST COUNT
 *   capacity_io -c CONF -p POOL verify PREFIX FIRST COUNT SIZE COPIES
 *
 * verify: each object reads back as fill wrote it, and exactly COPIES OSDs
 * hold a copy, every one of them identical to it (read from each OSD's own
 * store, past the primary): no divergence.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_debug.h"
#include "weft/weft.h"

static void fill_pattern(uint8_t *buf, unsigned long size, unsigned long k)
{
	for (unsigned long b = 0; b < size; b++)
		buf[b] = (uint8_t)(k * 131 + b * 7);
}

/* 0 if name reads right and exactly copies OSDs hold it identically, else 1 (a line said why). */
static int verify_one(struct weft_cluster *cl, uint32_t pool, const char *name, const uint8_t *want,
		      size_t size, unsigned int nosd, unsigned int copies, uint8_t *buf)
{
	unsigned int have = 0;
	size_t got = 0;
	int rc = weft_read(cl, pool, name, buf, size + 1, 0, &got);

	if (rc != 0 || got != size || memcmp(buf, want, size) != 0) {
		printf("FAIL: %s reads wrong (%s, %zu of %zu bytes)\n", name, weft_strerror(rc),
		       got, size);
		return 1;
	}
	for (unsigned int k = 0; k < nosd; k++) {
		rc = weft_debug_read_local(cl, k, pool, name, buf, size + 1, 0, &got);
		if (rc == -ENOENT)
			continue;
		if (rc != 0 || got != size || memcmp(buf, want, size) != 0) {
			printf("FAIL: %s: osd.%u's copy differs (%s, %zu bytes)\n", name, k,
			       weft_strerror(rc), got);
			return 1;
		}
		have++;
	}
	if (have != copies) {
		printf("FAIL: %s: %u copies, want %u\n", name, have, copies);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *conf = NULL, *poolname = "rbd", *cmd, *prefix;
	struct weft_cluster *cl;
	unsigned long first, count, size = 0, done = 0, copies = 0;
	uint8_t *buf = NULL, *rbuf = NULL;
	unsigned int nosd = 0, bad = 0;
	char perf[8192];
	uint32_t pool;
	int i = 1, rc = 0;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-c"))
			conf = argv[i + 1];
		else if (!strcmp(argv[i], "-p"))
			poolname = argv[i + 1];
	}
	if (argc - i < 4 ||
	    (strcmp(argv[i], "fill") && strcmp(argv[i], "rm") && strcmp(argv[i], "verify")) ||
	    (!strcmp(argv[i], "fill") && argc - i < 5) ||
	    (!strcmp(argv[i], "verify") && argc - i < 6)) {
		fprintf(stderr, "usage: capacity_io -c CONF -p POOL fill PREFIX FIRST COUNT SIZE | "
				"rm PREFIX FIRST COUNT | verify PREFIX FIRST COUNT SIZE COPIES\n");
		return 2;
	}
	cmd = argv[i];
	prefix = argv[i + 1];
	first = strtoul(argv[i + 2], NULL, 10);
	count = strtoul(argv[i + 3], NULL, 10);
	if (strcmp(cmd, "rm") != 0) {
		size = strtoul(argv[i + 4], NULL, 10);
		if (size == 0 || size > (8ul << 20) || (buf = malloc(size)) == NULL ||
		    (rbuf = malloc(size + 1)) == NULL) {
			fprintf(stderr, "capacity_io: SIZE must be 1..8 MiB\n");
			free(buf);
			return 2;
		}
		copies = !strcmp(cmd, "verify") ? strtoul(argv[i + 5], NULL, 10) : 0;
	}
	rc = weft_connect(conf, "client.admin", &cl);
	if (rc != 0) {
		fprintf(stderr, "capacity_io: connect: %s\n", weft_strerror(rc));
		free(buf);
		return 1;
	}
	if (weft_pool_lookup(cl, poolname, &pool) != 0) {
		fprintf(stderr, "capacity_io: no pool %s\n", poolname);
		rc = -1;
	}
	while (copies > 0 && nosd < 64 && weft_debug_osd_perf(cl, nosd, perf, sizeof(perf)) == 0)
		nosd++;
	for (unsigned long k = first; rc == 0 && k < first + count; k++) {
		char name[128];

		snprintf(name, sizeof(name), "%s.%lu", prefix, k);
		if (copies > 0) {
			fill_pattern(buf, size, k);
			bad +=
			    verify_one(cl, pool, name, buf, size, nosd, (unsigned int)copies, rbuf);
			done++;
			continue;
		}
		if (buf != NULL) {
			fill_pattern(buf, size, k);
			rc = weft_write_full(cl, pool, name, buf, size);
		} else {
			rc = weft_remove(cl, pool, name);
		}
		if (rc == 0)
			done++;
		else
			printf("error: %s %s: %s (%d)\n", cmd, name, weft_strerror(rc), rc);
	}
	if (copies > 0)
		printf("verify: %lu objects on %u OSDs, %u bad\n", done, nosd, bad);
	else
		printf("%s: %lu of %lu objects\n", cmd, done, count);
	weft_disconnect(cl);
	free(buf);
	free(rbuf);
	return rc == 0 && bad == 0 ? 0 : 1;
}
