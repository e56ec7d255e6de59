/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A volume client driven line by line from stdin, for tests/test_fence.sh:
 * it opens one volume exclusively (--force: breaking, and so fencing, the
 * holder's lock) and answers each command with one line on stdout.
 *
 *   fence_io -c CONF -p POOL VOLUME [--force]
 *   write OFF LEN BYTE     -> "ok write" | "err write RC TEXT"   (LEN bytes of BYTE)
 *   flush                  -> "ok flush" | "err flush RC TEXT"
 *   flushes N OFF          -> N times: a 4 KiB write at OFF + i*4096, then a flush;
 *                             "ok flushes N" | "err flushes I RC TEXT"
 *   verify OFF LEN BYTE    -> "ok verify" | "err verify AT GOT" (first differing byte)
 *   quit                   -> closes the volume ("ok close" | "err close RC TEXT")
 * After the open: "ready INSTANCE" (this handle's client instance, 16 hex digits).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/volume.h"
#include "weft/weft.h"

static int fence_fill_write(struct weft_vol *vol, uint64_t off, uint64_t len, int byte)
{
	char *buf = malloc(len ? len : 1);
	int rc;

	if (buf == NULL)
		return -ENOMEM;
	memset(buf, byte, len);
	rc = weft_vol_write(vol, buf, len, off);
	free(buf);
	return rc;
}

static void fence_verify(struct weft_vol *vol, uint64_t off, uint64_t len, int byte)
{
	unsigned char *buf = malloc(len ? len : 1);
	size_t got = 0;
	int rc;

	if (buf == NULL) {
		printf("err verify -12 out of memory\n");
		return;
	}
	rc = weft_vol_read(vol, buf, len, off, &got);
	if (rc != 0 || got != len) {
		printf("err verify %d %s (read %zu of %" PRIu64 ")\n", rc, weft_strerror(rc), got,
		       len);
	} else {
		uint64_t i;

		for (i = 0; i < len && buf[i] == (unsigned char)byte; i++)
			;
		if (i == len)
			printf("ok verify\n");
		else
			printf("err verify at %" PRIu64 " got %u\n", off + i, buf[i]);
	}
	free(buf);
}

static void fence_flushes(struct weft_vol *vol, unsigned long n, uint64_t off)
{
	for (unsigned long i = 0; i < n; i++) {
		int rc = fence_fill_write(vol, off + i * 4096, 4096, 'F');

		if (rc == 0)
			rc = weft_vol_flush(vol);
		if (rc != 0) {
			printf("err flushes %lu %d %s\n", i, rc, weft_strerror(rc));
			return;
		}
	}
	printf("ok flushes %lu\n", n);
}

int main(int argc, char **argv)
{
	const char *conf = NULL, *pool = NULL, *name = NULL;
	unsigned int flags = WEFT_VOL_EXCLUSIVE;
	struct weft_cluster *cl;
	struct weft_vol *vol;
	uint32_t pool_id;
	char line[256];
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-c") && i + 1 < argc)
			conf = argv[++i];
		else if (!strcmp(argv[i], "-p") && i + 1 < argc)
			pool = argv[++i];
		else if (!strcmp(argv[i], "--force"))
			flags |= WEFT_VOL_FORCE;
		else if (name == NULL && argv[i][0] != '-')
			name = argv[i];
		else {
			fprintf(stderr, "fence_io: unexpected argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (conf == NULL || pool == NULL || name == NULL) {
		fprintf(stderr, "usage: fence_io -c CONF -p POOL VOLUME [--force]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = weft_connect(conf, "client.admin", &cl);
	if (rc == 0)
		rc = weft_pool_lookup(cl, pool, &pool_id);
	if (rc != 0) {
		fprintf(stderr, "fence_io: connect: %s\n", weft_strerror(rc));
		return 1;
	}
	rc = weft_vol_open(cl, pool_id, name, flags, &vol);
	if (rc != 0) {
		fprintf(stderr, "fence_io: open %s: %s\n", name, weft_strerror(rc));
		weft_disconnect(cl);
		return 1;
	}
	printf("ready %016" PRIx64 "\n", weft_instance(cl));
	while (fgets(line, sizeof(line), stdin) != NULL) {
		unsigned long long a = 0, b = 0;
		int byte = 0;

		if (sscanf(line, "write %llu %llu %d", &a, &b, &byte) == 3) {
			rc = fence_fill_write(vol, a, b, byte);
			if (rc == 0)
				printf("ok write\n");
			else
				printf("err write %d %s\n", rc, weft_strerror(rc));
		} else if (!strncmp(line, "flushes ", 8) &&
			   sscanf(line, "flushes %llu %llu", &a, &b) == 2) {
			fence_flushes(vol, (unsigned long)a, b);
		} else if (!strncmp(line, "flush", 5)) {
			rc = weft_vol_flush(vol);
			if (rc == 0)
				printf("ok flush\n");
			else
				printf("err flush %d %s\n", rc, weft_strerror(rc));
		} else if (sscanf(line, "verify %llu %llu %d", &a, &b, &byte) == 3) {
			fence_verify(vol, a, b, byte);
		} else if (!strncmp(line, "quit", 4)) {
			break;
		} else {
			printf("err unknown command\n");
		}
	}
	rc = weft_vol_close(vol);
	if (rc == 0)
		printf("ok close\n");
	else
		printf("err close %d %s\n", rc, weft_strerror(rc));
	weft_disconnect(cl);
	return 0;
}
