/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Capacity commands of the weft CLI (docs/capacity.md): df, osd df,
 * osd set-nearfull-ratio|set-backfillfull-ratio|set-full-ratio R,
 * pool set-quota POOL max_bytes|max_objects N. The monitors compute; this
 * file parses arguments and renders their JSON as tables.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli.h"
#include "tools/cli_mon.h"
#include "tools/cli_vol.h"

static long long cli_df_int(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static double cli_df_num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

/* "1.5 GiB" into buf (powers of 1024, like ceph df). */
const char *cli_bytes_str(unsigned long long v, char *buf, size_t cap)
{
	static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double d = (double)v;
	int i = 0;

	while (d >= 1024 && i < 6) {
		d /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, cap, "%llu B", v);
	else
		snprintf(buf, cap, "%.3g %s", d, u[i]);
	return buf;
}

static void cli_render_df(json_t *df)
{
	json_t *st = json_object_get(df, "stats"), *p;
	char a[32], b[32], c[32], d[32];
	size_t i;

	printf("--- RAW STORAGE ---\n%-10s %10s %10s %10s %9s %5s\n", "", "SIZE", "AVAIL", "USED",
	       "%RAW USED", "OSDS");
	printf("%-10s %10s %10s %10s %9.2f %5lld\n", "TOTAL",
	       cli_bytes_str((unsigned long long)cli_df_int(st, "total_bytes"), a, sizeof(a)),
	       cli_bytes_str((unsigned long long)cli_df_int(st, "total_avail_bytes"), b, sizeof(b)),
	       cli_bytes_str((unsigned long long)cli_df_int(st, "total_used_bytes"), c, sizeof(c)),
	       cli_df_num(st, "percent_used"), cli_df_int(st, "num_osds"));
	if (cli_df_int(st, "purging_objects") > 0)
		printf("%lld objects of removed pools still being deleted\n",
		       cli_df_int(st, "purging_objects"));
	printf("\n--- POOLS ---\n%-16s %5s %10s %10s %10s %6s %10s %s\n", "POOL", "ID", "STORED",
	       "OBJECTS", "USED", "%USED", "MAX AVAIL", "QUOTA");
	json_array_foreach(json_object_get(df, "pools"), i, p)
	{
		json_t *s = json_object_get(p, "stats");
		char q[96] = "";

		if (cli_df_int(s, "quota_max_bytes") > 0)
			snprintf(q, sizeof(q), "%s bytes",
				 cli_bytes_str((unsigned long long)cli_df_int(s, "quota_max_bytes"),
					       d, sizeof(d)));
		if (cli_df_int(s, "quota_max_objects") > 0)
			snprintf(q + strlen(q), sizeof(q) - strlen(q), "%s%lld objects",
				 q[0] ? ", " : "", cli_df_int(s, "quota_max_objects"));
		if (json_is_true(json_object_get(s, "full")))
			snprintf(q + strlen(q), sizeof(q) - strlen(q), " (FULL)");
		printf("%-16s %5lld %10s %10lld %10s %6.2f %10s %s\n",
		       json_string_value(json_object_get(p, "name")), cli_df_int(p, "id"),
		       cli_bytes_str((unsigned long long)cli_df_int(s, "stored"), a, sizeof(a)),
		       cli_df_int(s, "objects"),
		       cli_bytes_str((unsigned long long)cli_df_int(s, "used"), b, sizeof(b)),
		       cli_df_num(s, "percent_used"),
		       cli_bytes_str((unsigned long long)cli_df_int(s, "max_avail"), c, sizeof(c)),
		       q[0] ? q : "-");
	}
}

static void cli_render_osd_df(json_t *df)
{
	json_t *sum = json_object_get(df, "summary"), *n;
	char a[32], b[32], c[32], d[32], e[32], f[32];
	size_t i;

	printf("%4s %-12s %9s %9s %9s %9s %9s %9s %6s %5s %4s %s\n", "ID", "HOST", "SIZE",
	       "RAW USE", "DATA", "WAL", "KV", "AVAIL", "%USE", "VAR", "PGS", "STATUS");
	json_array_foreach(json_object_get(df, "nodes"), i, n)
	{
		const char *full = json_string_value(json_object_get(n, "fullness"));
		char status[48];

		snprintf(status, sizeof(status), "%s%s%s%s",
			 json_is_true(json_object_get(n, "up")) ? "up" : "down",
			 json_is_true(json_object_get(n, "in")) ? "" : ",out",
			 full != NULL && full[0] ? "," : "", full != NULL ? full : "");
		if (!json_is_true(json_object_get(n, "reported"))) {
			printf("%4lld %-12s %9s %9s %9s %9s %9s %9s %6s %5s %4s %s (no recent "
			       "report)\n",
			       cli_df_int(n, "id"), json_string_value(json_object_get(n, "host")),
			       "-", "-", "-", "-", "-", "-", "-", "-", "-", status);
			continue;
		}
		printf("%4lld %-12s %9s %9s %9s %9s %9s %9s %6.2f %5.2f %4lld %s\n",
		       cli_df_int(n, "id"), json_string_value(json_object_get(n, "host")),
		       cli_bytes_str((unsigned long long)cli_df_int(n, "size"), a, sizeof(a)),
		       cli_bytes_str((unsigned long long)cli_df_int(n, "used"), b, sizeof(b)),
		       cli_bytes_str((unsigned long long)cli_df_int(n, "data"), c, sizeof(c)),
		       cli_bytes_str((unsigned long long)cli_df_int(n, "wal"), d, sizeof(d)),
		       cli_bytes_str((unsigned long long)cli_df_int(n, "kv"), e, sizeof(e)),
		       cli_bytes_str((unsigned long long)cli_df_int(n, "avail"), f, sizeof(f)),
		       cli_df_num(n, "utilization"), cli_df_num(n, "var"), cli_df_int(n, "pgs"),
		       status);
	}
	printf("%4s %-12s %9s %9s %9s %9s %9s %9s %6.2f\n", "", "TOTAL",
	       cli_bytes_str((unsigned long long)cli_df_int(sum, "total_size"), a, sizeof(a)),
	       cli_bytes_str((unsigned long long)cli_df_int(sum, "total_used"), b, sizeof(b)), "",
	       "", "",
	       cli_bytes_str((unsigned long long)cli_df_int(sum, "total_avail"), c, sizeof(c)),
	       cli_df_num(sum, "average_utilization"));
	printf("MIN/MAX VAR: %.2f/%.2f  STDDEV: %.2f\n", cli_df_num(sum, "min_var"),
	       cli_df_num(sum, "max_var"), cli_df_num(sum, "dev"));
}

int cli_df_main(int argc, char **argv)
{
	struct cli_mon_args a;
	int rc = cli_mon_parse(argc - 1, argv + 1, &a);

	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (a.nwords != 0) {
		fprintf(stderr, "weft df: unexpected argument '%s'\n", a.words[0]);
		return 2;
	}
	return cli_cmd_simple(&a, "df", json_pack("{s:s}", "prefix", "df"), cli_render_df);
}

/* osd df | osd set-nearfull-ratio|set-backfillfull-ratio|set-full-ratio R; -1: not one of them. */
int cli_osd_cap(struct cli_mon_args *a)
{
	const char *sub = a->words[0];
	char prefix[48], *end;
	double r;
	int rc;

	if (!strcmp(sub, "df")) {
		if (a->nwords != 1) {
			fprintf(stderr, "weft osd df: unexpected argument '%s'\n", a->words[1]);
			return 2;
		}
		return cli_cmd_simple(a, "osd df", json_pack("{s:s}", "prefix", "osd df"),
				      cli_render_osd_df);
	}
	if (strcmp(sub, "set-nearfull-ratio") && strcmp(sub, "set-backfillfull-ratio") &&
	    strcmp(sub, "set-full-ratio"))
		return -1;
	snprintf(prefix, sizeof(prefix), "osd %s", sub);
	if (a->nwords != 2) {
		fprintf(stderr, "weft %s: want one ratio (weft %s 0.9)\n", prefix, prefix);
		return 2;
	}
	r = strtod(a->words[1], &end);
	if (end == a->words[1] || *end != '\0') {
		fprintf(stderr, "weft %s: '%s' is not a number (a ratio like 0.9)\n", prefix,
			a->words[1]);
		return 2;
	}
	/* range and order are the monitors' to check: they know the other two ratios */
	rc = cli_cmd_simple(a, prefix, json_pack("{s:s, s:f}", "prefix", prefix, "ratio", r),
			    cli_render_none);
	if (rc == 0 && !a->json)
		printf("%s %g\n", sub + 4, r);
	return rc;
}

/* pool set-quota POOL max_bytes|max_objects N (sizes take K/M/G/T; 0 removes the quota). */
int cli_pool_quota(struct cli_mon_args *a)
{
	uint64_t v = 0;
	int rc;

	if (a->nwords != 4 ||
	    (strcmp(a->words[2], "max_bytes") && strcmp(a->words[2], "max_objects"))) {
		fprintf(stderr, "weft pool set-quota: want POOL max_bytes|max_objects N\n");
		return 2;
	}
	if (strcmp(a->words[3], "0") != 0 &&
	    (cli_vol_parse_size(a->words[3], &v) != 0 || v > (uint64_t)INT64_MAX ||
	     (!strcmp(a->words[2], "max_objects") &&
	      strspn(a->words[3], "0123456789") != strlen(a->words[3])))) {
		fprintf(stderr, "weft pool set-quota: '%s' is not %s\n", a->words[3],
			!strcmp(a->words[2], "max_bytes") ? "a size (10G, 512M, 4096)"
							  : "a whole number of objects");
		return 2;
	}
	rc = cli_cmd_simple(a, "pool set-quota",
			    json_pack("{s:s, s:s, s:s, s:I}", "prefix", "pool set-quota", "name",
				      a->words[1], "field", a->words[2], "value", (json_int_t)v),
			    cli_render_none);
	if (rc == 0 && !a->json && v != 0)
		printf("pool '%s' %s quota %llu\n", a->words[1], a->words[2],
		       (unsigned long long)v);
	else if (rc == 0 && !a->json)
		printf("pool '%s' %s quota removed\n", a->words[1], a->words[2]);
	return rc;
}
