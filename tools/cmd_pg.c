/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft pg: PG states as the monitors know them from the OSDs' reports
 * (docs/recovery.md), and scrub / deep-scrub / repair requests, which the
 * monitors hand to the PG's primary with its next report.
 *
 *   weft pg ls [--inconsistent | --state STATE]
 *   weft pg scrub|deep-scrub|repair PGID        (PGID = POOLID.PG, PG in hex)
 *   weft pg verify PGID... | --all [--wait S]  (cmd_pg_verify.c)
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "proto/proto_pg.h"
#include "tools/cli.h"
#include "tools/cli_mon.h"

/*
 * --state S: S is state words joined by '+' ("active+clean"), each one the
 * proto names (every bit set prints them all), "unknown" or "stale". An
 * unknown word is a usage error, not an empty list.
 */
static int cli_pg_state_check(const char *state)
{
	char known[512], want[128], *save = NULL;

	proto_pg_state_str(UINT32_MAX, known, sizeof(known));
	snprintf(known + strlen(known), sizeof(known) - strlen(known), "+unknown+stale");
	if (state[0] == '\0' || strlen(state) >= sizeof(want)) {
		fprintf(stderr, "weft pg ls: --state needs a state (%s)\n", known);
		return -1;
	}
	snprintf(want, sizeof(want), "%s", state);
	for (char *w = strtok_r(want, "+", &save); w != NULL; w = strtok_r(NULL, "+", &save)) {
		char pat[136], list[520];

		snprintf(pat, sizeof(pat), "+%s+", w);
		snprintf(list, sizeof(list), "+%s+", known);
		if (strstr(list, pat) == NULL) {
			for (char *c = known; *c; c++)
				*c = *c == '+' ? ',' : *c;
			fprintf(stderr, "weft pg ls: unknown PG state '%s' (known: %s)\n", w, known);
			return -1;
		}
	}
	return 0;
}

static void cli_pg_usage(FILE *out)
{
	fprintf(out, "usage: weft [OPTIONS] pg ls [--inconsistent | --state STATE]\n"
		     "       weft [OPTIONS] pg scrub|deep-scrub|repair PGID   (PGID: POOLID.PG, PG in hex)\n"
		     "       weft [OPTIONS] pg verify PGID... | --all [--wait SECONDS]\n"
		     "           compare every copy of every object of the PGs (version, size, digest\n"
		     "           of the stored checksums) once they are clean, and wait for the answer\n"
		     "           (default 300 s); exit 1 if a copy differs or a PG was not verified\n"
		     "options as for 'weft status --help' (-c FILE, --format plain|json, --timeout S,\n"
		     "--verbose)\n");
}

static void cli_render_pg_ls(json_t *out)
{
	json_t *list = json_object_get(out, "pg_stats"), *p, *o;
	size_t i, k;

	printf("%-8s %-40s %-12s %-9s %8s %8s %5s %-8s %s\n", "PG", "STATE", "ACTING", "VERSION",
	       "OBJECTS", "MISSING", "INCON", "SCRUBBED", "WAITING_FOR");
	json_array_foreach(list, i, p) {
		char acting[64] = "[", v[24], waiting[96] = "";
		size_t off = 1, woff = 0;
		json_t *lu = json_object_get(p, "last_update");
		long long scrub = json_integer_value(json_object_get(p, "last_scrub"));

		json_array_foreach(json_object_get(p, "acting"), k, o)
			off += (size_t)snprintf(acting + off, off < sizeof(acting) ? sizeof(acting) - off : 0,
						"%s%lld", k ? "," : "", json_integer_value(o));
		if (off < sizeof(acting) - 1)
			strcat(acting, "]");
		snprintf(v, sizeof(v), "%s", lu ? json_string_value(lu) : "-");
		json_array_foreach(json_object_get(p, "waiting_for"), k, o)
			woff += (size_t)snprintf(waiting + woff,
						 woff < sizeof(waiting) ? sizeof(waiting) - woff : 0,
						 "%sosd.%lld", k ? "," : "", json_integer_value(o));
		printf("%-8s %-40s %-12s %-9s %8lld %8lld %5lld %-8s %s\n",
		       json_string_value(json_object_get(p, "pgid")),
		       json_string_value(json_object_get(p, "state")), acting, v,
		       json_integer_value(json_object_get(p, "objects")),
		       json_integer_value(json_object_get(p, "missing")),
		       json_integer_value(json_object_get(p, "inconsistent")),
		       scrub ? "yes" : "never", woff ? waiting : "-");
	}
	printf("%zu pgs\n", json_array_size(list));
}

static void cli_render_pg_req(json_t *out)
{
	printf("instructed osd.%lld to %s pg %s\n",
	       json_integer_value(json_object_get(out, "osd")),
	       json_string_value(json_object_get(out, "op")),
	       json_string_value(json_object_get(out, "pgid")));
}

/* "  pgs: 30 active+clean, 2 active+recovering+degraded" and recovery progress. */
void cli_render_pgmap(json_t *pg)
{
	json_t *states = json_object_get(pg, "states"), *rec = json_object_get(pg, "recovery"), *v;
	json_t *io = json_object_get(pg, "client_io");
	const char *k;
	int n = 0;

	if (json_object_size(states) == 0)
		return;
	printf("    pgs:   ");
	json_object_foreach(states, k, v)
		printf("%s%lld %s", n++ ? ", " : "", json_integer_value(v), k);
	printf("\n");
	/* as ceph -s: client rates always (0 when idle), recovery while there is some */
	if (io != NULL) {
		char rb[32], wb[32];

		printf("\n  io:\n    client:   %s/s rd, %s/s wr, %.0f op/s rd, %.0f op/s wr\n",
		       cli_bytes_str((unsigned long long)json_number_value(
					     json_object_get(io, "read_bytes_per_sec")), rb, sizeof(rb)),
		       cli_bytes_str((unsigned long long)json_number_value(
					     json_object_get(io, "write_bytes_per_sec")), wb, sizeof(wb)),
		       json_number_value(json_object_get(io, "read_ops_per_sec")),
		       json_number_value(json_object_get(io, "write_ops_per_sec")));
	}
	if (json_integer_value(json_object_get(pg, "degraded_objects")) > 0 ||
	    json_real_value(json_object_get(rec, "objects_per_sec")) > 0) {
		json_t *eta = json_object_get(rec, "eta_sec");

		printf("%s    recovery: %lld objects degraded (%.1f MB), %.1f objects/s, "
		       "%.1f MB/s",
		       io != NULL ? "" : "\n  io:\n",
		       json_integer_value(json_object_get(pg, "degraded_objects")),
		       (double)json_integer_value(json_object_get(pg, "degraded_bytes")) / 1e6,
		       json_real_value(json_object_get(rec, "objects_per_sec")),
		       json_real_value(json_object_get(rec, "bytes_per_sec")) / 1e6);
		if (json_is_integer(eta))
			printf(", eta %llds", json_integer_value(eta));
		printf("\n");
	}
}

int cli_pg_main(int argc, char **argv)
{
	char *args[64];
	const char *state = NULL;
	bool all = false;
	long wait_s = 300;
	struct cli_mon_args a;
	int n = 0, rc;

	/* our own flags first; the rest goes to the common parser */
	for (int i = 1; i < argc && n < 63; i++) {
		if (!strcmp(argv[i], "--inconsistent")) {
			state = "inconsistent";
		} else if (!strcmp(argv[i], "--state") && i + 1 < argc) {
			state = argv[++i];
		} else if (!strncmp(argv[i], "--state=", 8)) {
			state = argv[i] + 8;
		} else if (!strcmp(argv[i], "--all")) {
			all = true;
		} else if (!strcmp(argv[i], "--wait") && i + 1 < argc) {
			char *end;

			wait_s = strtol(argv[++i], &end, 10);
			if (*end != '\0' || wait_s < 1 || wait_s > 86400) {
				fprintf(stderr, "weft pg: --wait must be seconds in [1, 86400]\n");
				return 2;
			}
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cli_pg_usage(stdout);
			return 0;
		} else {
			args[n++] = argv[i];
		}
	}
	rc = cli_mon_parse(n, args, &a);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (state != NULL && cli_pg_state_check(state) != 0)
		return 2;
	if (a.nwords == 1 && !strcmp(a.words[0], "ls")) {
		json_t *cmd = json_pack("{s:s}", "prefix", "pg ls");

		if (state)
			json_object_set_new(cmd, "state", json_string(state));
		return cli_cmd_simple(&a, "pg ls", cmd, cli_render_pg_ls);
	}
	if (a.nwords == 2 && (!strcmp(a.words[0], "scrub") || !strcmp(a.words[0], "deep-scrub") ||
			      !strcmp(a.words[0], "repair"))) {
		char prefix[32];

		snprintf(prefix, sizeof(prefix), "pg %s", a.words[0]);
		return cli_cmd_simple(&a, prefix,
				      json_pack("{s:s, s:s}", "prefix", prefix, "pgid", a.words[1]),
				      cli_render_pg_req);
	}
	if (a.nwords >= 1 && !strcmp(a.words[0], "verify"))
		return cli_pg_verify(&a, all, (unsigned int)wait_s);
	fprintf(stderr, "weft pg: bad arguments (try 'weft pg --help')\n");
	return 2;
}
