/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Known data for tests/test_capacity.sh: objects PREFIX.FIRST .. of SIZE
 * bytes written with write_full, or removed. Stops at the first error and
 * says how far it got and the error's text, so the script can tell a
 * refused write (full, quota) from a failure.
 *
 *   capacity_io -c CONF -p POOL fill PREFIX FIRST COUNT SIZE
 *   capacity_io -c CONF -p POOL rm PREFIX FIRST COUNT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "weft/weft.h"

int main(int argc, char **argv)
{
	const char *conf = NULL, *poolname = "rbd", *cmd, *prefix;
	struct weft_cluster *cl;
	unsigned long first, count, size = 0, done = 0;
	uint8_t *buf = NULL;
	uint32_t pool;
	int i = 1, rc = 0;

	for (; i + 1 < argc && argv[i][0] == '-'; i += 2) {
		if (!strcmp(argv[i], "-c"))
			conf = argv[i + 1];
		else if (!strcmp(argv[i], "-p"))
			poolname = argv[i + 1];
	}
	if (argc - i < 4 || (strcmp(argv[i], "fill") && strcmp(argv[i], "rm")) ||
	    (!strcmp(argv[i], "fill") && argc - i < 5)) {
		fprintf(stderr, "usage: capacity_io -c CONF -p POOL fill PREFIX FIRST COUNT SIZE | "
				"rm PREFIX FIRST COUNT\n");
		return 2;
	}
	cmd = argv[i];
	prefix = argv[i + 1];
	first = strtoul(argv[i + 2], NULL, 10);
	count = strtoul(argv[i + 3], NULL, 10);
	if (!strcmp(cmd, "fill")) {
		size = strtoul(argv[i + 4], NULL, 10);
		if (size == 0 || size > (8ul << 20) || (buf = malloc(size)) == NULL) {
			fprintf(stderr, "capacity_io: SIZE must be 1..8 MiB\n");
			return 2;
		}
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
	for (unsigned long k = first; rc == 0 && k < first + count; k++) {
		char name[128];

		snprintf(name, sizeof(name), "%s.%lu", prefix, k);
		if (buf != NULL) {
			for (unsigned long b = 0; b < size; b++)
				buf[b] = (uint8_t)(k * 131 + b * 7);
			rc = weft_write_full(cl, pool, name, buf, size);
		} else {
			rc = weft_remove(cl, pool, name);
		}
		if (rc == 0)
			done++;
		else
			printf("error: %s %s: %s (%d)\n", cmd, name, weft_strerror(rc), rc);
	}
	printf("%s: %lu of %lu objects\n", cmd, done, count);
	weft_disconnect(cl);
	free(buf);
	return rc == 0 ? 0 : 1;
}
