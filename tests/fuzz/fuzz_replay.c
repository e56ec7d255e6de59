/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Replay driver for libFuzzer targets built without libFuzzer: feeds every
 * file named on the command line, or found (not recursively) in a directory
 * named there, to LLVMFuzzerTestOneInput, each from a heap buffer of its
 * exact size so ASan catches overreads. Exits 1 when an input cannot be
 * read or when no input was found (an empty corpus must not pass silently).
 */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	struct stat st;
	uint8_t *buf;
	FILE *f;
	size_t n;

	f = fopen(path, "rb");
	if (f == NULL || fstat(fileno(f), &st) != 0) {
		fprintf(stderr, "fuzz_replay: %s: %s\n", path, strerror(errno));
		if (f != NULL)
			fclose(f);
		return -1;
	}
	buf = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
	if (buf == NULL) {
		fprintf(stderr, "fuzz_replay: %s: out of memory\n", path);
		fclose(f);
		return -1;
	}
	n = fread(buf, 1, (size_t)st.st_size, f);
	fclose(f);
	if (n != (size_t)st.st_size) {
		fprintf(stderr, "fuzz_replay: %s: short read\n", path);
		free(buf);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	char path[4096];
	struct dirent *de;
	struct stat st;
	unsigned long count = 0;
	DIR *dir;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fprintf(stderr, "usage: %s FILE|DIR...\n"
				"Feed each file (or each file of each directory) to the fuzz "
				"target once.\n",
			argv[0]);
		return argc < 2 ? 1 : 0;
	}
	for (int i = 1; i < argc; i++) {
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "fuzz_replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (replay_file(argv[i]) != 0)
				return 1;
			count++;
			continue;
		}
		dir = opendir(argv[i]);
		if (dir == NULL) {
			fprintf(stderr, "fuzz_replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		while ((de = readdir(dir)) != NULL) {
			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
			if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			if (replay_file(path) != 0) {
				closedir(dir);
				return 1;
			}
			count++;
		}
		closedir(dir);
	}
	if (count == 0) {
		fprintf(stderr, "fuzz_replay: no inputs found\n");
		return 1;
	}
	printf("fuzz_replay: %lu inputs replayed, no failure\n", count);
	return 0;
}
