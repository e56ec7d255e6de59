/* SPDX-License-Identifier: Apache-2.0 */
/* weft bench: the command line (docs/bench.md, "Usage"). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bench.h"

void bench_usage(FILE *out)
{
	fprintf(out,
		"usage: weft bench POOL SECONDS write|seq|rand [options]\n"
		"       weft bench POOL cleanup [--run-name NAME] [-t N] [-c FILE] [-n ENTITY]\n"
		"  write                 write objects for SECONDS (removed at the end unless\n"
		"                        --no-cleanup, which keeps them for seq/rand)\n"
		"  seq | rand            read back what the last 'write --no-cleanup' left, in\n"
		"                        order or at random, verifying every object\n"
		"  cleanup               remove a kept run: its objects and metadata (default:\n"
		"                        the last kept run)\n"
		"options:\n"
		"  -t N                  ops in flight (default 16, at most %u)\n"
		"  -b SIZE               op and object size, K/M/G suffixes (default 4M; seq and\n"
		"                        rand use the run's size)\n"
		"  --no-cleanup          write: keep the objects and the run's metadata\n"
		"  --max-bytes SIZE      write: stop issuing once SIZE bytes were written (K/M/G),\n"
		"                        before SECONDS if that comes first\n"
		"  --run-name NAME       write: name the run (default benchmark_data_HOST_PID);\n"
		"                        seq/rand/cleanup: that run (default: the last one)\n"
		"  -f, --format FMT      plain (default) or json (progress then goes to stderr)\n"
		"  --no-explain          skip the explainer (no admin socket queries)\n"
		"  -c, --conf FILE       configuration (default " BENCH_DEFAULT_CONF ")\n"
		"  -n, --name ENTITY     who we are (default client.admin)\n"
		"  -k, --keyring FILE    where our key is (default: the conf's keyring)\n"
		"exit status: 0 ok, 1 an op failed or an object did not verify, 2 bad usage\n",
		BENCH_INFLIGHT_MAX);
}

static int bench_bad(const char *fmt, const char *what)
{
	fprintf(stderr, "weft bench: ");
	fprintf(stderr, fmt, what);
	fprintf(stderr, "\n");
	bench_usage(stderr);
	return 2;
}

/* "4M", "4096", "64K": bytes, binary suffixes. */
static int bench_parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return -EINVAL;
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		end++;
		break;
	case 'm':
	case 'M':
		shift = 20;
		end++;
		break;
	case 'g':
	case 'G':
		shift = 30;
		end++;
		break;
	default:
		break;
	}
	if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
		end += strlen(end);
	if (*end != '\0' || v > (1ull << 40) >> shift)
		return -EINVAL;
	*out = v << shift;
	return 0;
}

static bool bench_name_ok(const char *s)
{
	if (s[0] == '\0' || strlen(s) > BENCH_NAME_MAX)
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

/* 0 ok, 1 --help printed, 2 bad usage (printed). */
int bench_args_parse(int argc, char **argv, struct bench_args *a)
{
	static const struct option opts[] = {
	    {"conf", required_argument, NULL, 'c'},   {"name", required_argument, NULL, 'n'},
	    {"keyring", required_argument, NULL, 'k'},
	    {"format", required_argument, NULL, 'f'}, {"run-name", required_argument, NULL, 'r'},
	    {"no-cleanup", no_argument, NULL, 'N'},   {"no-explain", no_argument, NULL, 'E'},
	    {"max-bytes", required_argument, NULL, 'M'},
	    {"help", no_argument, NULL, 'h'},	      {NULL, 0, NULL, 0},
	};
	char *end;
	long n;
	int c;

	memset(a, 0, sizeof(*a));
	a->name = "client.admin";
	a->inflight = 16;
	a->bsize = 4u << 20;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:n:k:f:t:b:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			a->conf_file = optarg;
			break;
		case 'k':
			/* libweft reads the conf, then WEFT_<KEY>: this overrides its keyring */
			if (setenv("WEFT_KEYRING", optarg, 1) != 0)
				return bench_bad("--keyring '%s': cannot set it", optarg);
			break;
		case 'n':
			a->name = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "plain") != 0)
				return bench_bad("--format must be plain or json, not '%s'",
						 optarg);
			a->json = !strcmp(optarg, "json");
			break;
		case 'r':
			if (!bench_name_ok(optarg))
				return bench_bad("--run-name '%s': 1-200 characters, no spaces",
						 optarg);
			a->run_name = optarg;
			break;
		case 'N':
			a->no_cleanup = true;
			break;
		case 'E':
			a->no_explain = true;
			break;
		case 'M':
			if (bench_parse_size(optarg, &a->max_bytes) != 0 || a->max_bytes == 0)
				return bench_bad("--max-bytes '%s': a size above 0 (512M, 2G)", optarg);
			break;
		case 't':
			n = strtol(optarg, &end, 10);
			if (optarg[0] == '\0' || *end != '\0' || n < 1 || n > BENCH_INFLIGHT_MAX)
				return bench_bad("-t '%s': ops in flight must be 1-1024", optarg);
			a->inflight = (unsigned int)n;
			break;
		case 'b':
			if (bench_parse_size(optarg, &a->bsize) != 0 || a->bsize < BENCH_MIN_SIZE ||
			    a->bsize > (1u << 30))
				return bench_bad(
				    "-b '%s': a size from 48 bytes to 1G (4096, 64K, 4M)", optarg);
			a->bsize_given = true;
			break;
		case 'h':
			bench_usage(stdout);
			return 1;
		default:
			return bench_bad("unknown or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind == 2 && !strcmp(argv[optind + 1], "cleanup")) {
		a->pool = argv[optind];
		a->mode = BENCH_CLEANUP;
		return 0;
	}
	if (argc - optind != 3)
		return bench_bad("%s", argc - optind < 3 ? "expected POOL SECONDS write|seq|rand "
							   "or POOL cleanup"
							 : "too many arguments");
	a->pool = argv[optind];
	a->seconds = strtod(argv[optind + 1], &end);
	if (*end != '\0' || !(a->seconds > 0) || a->seconds > 86400)
		return bench_bad("SECONDS '%s' must be a number in (0, 86400]", argv[optind + 1]);
	if (!strcmp(argv[optind + 2], "write"))
		a->mode = BENCH_WRITE;
	else if (!strcmp(argv[optind + 2], "seq"))
		a->mode = BENCH_SEQ;
	else if (!strcmp(argv[optind + 2], "rand"))
		a->mode = BENCH_RAND;
	else
		return bench_bad("unknown mode '%s' (write, seq or rand)", argv[optind + 2]);
	if (a->max_bytes && a->mode != BENCH_WRITE)
		return bench_bad("--max-bytes is for write, not %s", argv[optind + 2]);
	return 0;
}
