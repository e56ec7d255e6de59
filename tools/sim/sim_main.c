/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft sim: arguments, the table, CSV files and plots. Exit 0 when every
 * check passed (or --check was not given), 1 when a check failed or the
 * simulation could not run, 2 for bad usage.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "placement/plc_map.h"
#include "tools/cli.h"
#include "tools/sim/sim.h"

double sim_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

void sim_metric(struct sim *s, const char *name, double value, const char *unit)
{
	if (!s->a.quiet)
		printf("  %-34s %14.3f %s\n", name, value, unit);
	if (s->summary != NULL)
		fprintf(s->summary, "%s,%.6f,%s\n", name, value, unit);
	if (s->metrics != NULL)
		json_object_set_new(s->metrics, name,
				    json_pack("{s:f, s:s}", "value", value, "unit", unit));
}

void sim_expect(struct sim *s, bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok || !s->a.check)
		return;
	s->failures++;
	fprintf(stderr, "weft sim: check failed: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

FILE *sim_csv(struct sim *s, const char *name, const char *header)
{
	char path[4096];
	FILE *f;

	if (s->a.out_dir == NULL)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", s->a.out_dir, name);
	f = fopen(path, "w");
	if (f == NULL) {
		fprintf(stderr, "weft sim: cannot write %s: %s\n", path, strerror(errno));
		s->failures++;
		return NULL;
	}
	fprintf(f, "%s\n", header);
	return f;
}

static void sim_usage(FILE *out)
{
	fprintf(
	    out,
	    "usage: weft sim [--racks R] [--hosts H] [--osds-per-host O] [--pgs P] [--size N]\n"
	    "                [--min-size M] [--domain host|rack] [--osd-gb G] [--fill F]\n"
	    "                [--recovery-mbs B] [--max-dev D] [--out DIR] [--plot] [--check]\n"
	    "                [--quiet] [--format plain|json]\n"
	    "Builds a map of R racks x H hosts x O OSDs (default 40 x 25 x 10 = 10,000) and one\n"
	    "pool of P PGs (default: a power of two near 100 replicas per OSD) with the mons'\n"
	    "increments, places it with the daemons' placement code and reports: placement cost,\n"
	    "PG spread before/after the balancer, map and increment sizes, data movement when\n"
	    "adding/failing an OSD, host, rack (ratio to the optimum) and recovery parallelism.\n"
	    "  --out DIR   write summary.csv, spread.csv, movement.csv, recovery.csv there\n"
	    "  --plot      also spread.png and movement.png (gnuplot) in DIR\n"
	    "  --check     exit 1 unless the targets hold (spread within --max-dev, default\n"
	    "              0.05, or one PG; movement <= 1.1x optimum; identical placement after\n"
	    "              decode; no PG lost)\n"
	    "  --fanout N --conf FILE   instead: N real mon clients subscribe to the running\n"
	    "              cluster of FILE; the time for a new epoch to reach them all\n");
}

static int sim_parse_uint(const char *opt, const char *v, unsigned int min, unsigned int max,
			  unsigned int *out)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);

	if (*v == '\0' || *end != '\0' || n < min || n > max) {
		fprintf(stderr, "weft sim: --%s must be an integer in %u..%u, not '%s'\n", opt, min,
			max, v);
		return -1;
	}
	*out = (unsigned int)n;
	return 0;
}

static int sim_parse_dbl(const char *opt, const char *v, double min, double max, double *out)
{
	char *end;
	double d = strtod(v, &end);

	if (*v == '\0' || *end != '\0' || !(d >= min && d <= max)) {
		fprintf(stderr, "weft sim: --%s must be a number in %g..%g, not '%s'\n", opt, min,
			max, v);
		return -1;
	}
	*out = d;
	return 0;
}

static int sim_parse(int argc, char **argv, struct sim_args *a)
{
	static const struct option opts[] = {
	    {"racks", 1, NULL, 'r'},
	    {"hosts", 1, NULL, 'H'},
	    {"osds-per-host", 1, NULL, 'o'},
	    {"pgs", 1, NULL, 'p'},
	    {"size", 1, NULL, 's'},
	    {"min-size", 1, NULL, 'm'},
	    {"domain", 1, NULL, 'd'},
	    {"osd-gb", 1, NULL, 'g'},
	    {"fill", 1, NULL, 'f'},
	    {"recovery-mbs", 1, NULL, 'b'},
	    {"max-dev", 1, NULL, 'D'},
	    {"out", 1, NULL, 'O'},
	    {"plot", 0, NULL, 'P'},
	    {"check", 0, NULL, 'c'},
	    {"quiet", 0, NULL, 'q'},
	    {"help", 0, NULL, 'h'},
	    {"fanout", 1, NULL, 'F'},
	    {"conf", 1, NULL, 'C'},
	    {"format", 1, NULL, 'J'},
	    {NULL, 0, NULL, 0},
	};
	int c, rc = 0;

	*a = (struct sim_args){40,  25,	  10,	0,     3,     2,     MON_CT_HOST, 4000, 0.5,
			       100, 0.05, NULL, false, false, false, 0,		  NULL};
	optind = 1;
	while (rc == 0 && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			rc = sim_parse_uint("racks", optarg, 1, 1000, &a->racks);
			break;
		case 'H':
			rc = sim_parse_uint("hosts", optarg, 1, 1000, &a->hosts);
			break;
		case 'o':
			rc = sim_parse_uint("osds-per-host", optarg, 1, 100, &a->per_host);
			break;
		case 'p':
			rc = sim_parse_uint("pgs", optarg, 1, 1u << 22, &a->pg_num);
			break;
		case 's':
			rc = sim_parse_uint("size", optarg, 1, PLC_MAX_REPLICAS, &a->size);
			break;
		case 'm':
			rc = sim_parse_uint("min-size", optarg, 1, PLC_MAX_REPLICAS, &a->min_size);
			break;
		case 'g':
			rc = sim_parse_dbl("osd-gb", optarg, 1, 1e6, &a->osd_gb);
			break;
		case 'f':
			rc = sim_parse_dbl("fill", optarg, 0.01, 1, &a->fill);
			break;
		case 'b':
			rc = sim_parse_dbl("recovery-mbs", optarg, 1, 1e6, &a->recovery_mbs);
			break;
		case 'D':
			rc = sim_parse_dbl("max-dev", optarg, 0.001, 0.5, &a->max_dev);
			break;
		case 'O':
			a->out_dir = optarg;
			break;
		case 'P':
			a->plot = true;
			break;
		case 'c':
			a->check = true;
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'J':
			rc = cli_format_parse("weft sim", optarg, &a->json) != 0 ? -1 : 0;
			a->quiet |= a->json;
			break;
		case 'F':
			rc = sim_parse_uint("fanout", optarg, 1, 100000, &a->fanout);
			break;
		case 'C':
			a->conf_file = optarg;
			break;
		case 'd':
			a->domain = mon_crush_type_parse(optarg);
			if (a->domain != MON_CT_HOST && a->domain != MON_CT_RACK) {
				fprintf(stderr,
					"weft sim: --domain must be host or rack, not '%s'\n",
					optarg);
				rc = -1;
			}
			break;
		case 'h':
			sim_usage(stdout);
			return 1;
		default:
			return -1;
		}
	}
	if (rc == 0 && optind < argc) {
		fprintf(stderr, "weft sim: unexpected argument '%s'\n", argv[optind]);
		rc = -1;
	}
	if (rc == 0 && (uint64_t)a->racks * a->hosts * a->per_host > MON_OSD_MAX) {
		fprintf(stderr, "weft sim: at most %u OSDs\n", MON_OSD_MAX);
		rc = -1;
	}
	if (rc == 0 && a->min_size > a->size) {
		fprintf(stderr, "weft sim: --min-size %u is larger than --size %u\n", a->min_size,
			a->size);
		rc = -1;
	}
	if (rc == 0 && a->fanout > 0 && a->conf_file == NULL) {
		fprintf(stderr, "weft sim: --fanout needs --conf FILE (a running cluster)\n");
		rc = -1;
	}
	if (rc == 0 && a->plot && a->out_dir == NULL) {
		fprintf(stderr, "weft sim: --plot needs --out DIR\n");
		rc = -1;
	}
	if (rc == 0 && a->pg_num == 0) { /* a power of two nearest 100 replicas per OSD */
		double want = 100.0 * a->racks * a->hosts * a->per_host / a->size;

		a->pg_num = 1;
		while (a->pg_num * 2 <= want * 1.41)
			a->pg_num *= 2;
	}
	return rc;
}

static int sim_plot(struct sim *s)
{
	char cmd[8192];
	const char *d = s->a.out_dir;
	int rc;

	/* gnuplot from Debian (scripts/install-deps.sh); the data are the CSV files */
	snprintf(cmd, sizeof(cmd),
		 "gnuplot -e \"set terminal pngcairo size 900,500 noenhanced; set datafile "
		 "separator ','; set key autotitle columnhead; "
		 "set output '%s/spread.png'; set title 'PG replicas per OSD / weighted share'; "
		 "set xlabel 'load / share'; set ylabel 'OSDs'; set style fill solid 0.5; "
		 "bw=0.01; bin(x)=bw*floor(x/bw+0.5); "
		 "plot '%s/spread.csv' using (bin(\\$3/\\$2)):(1.0) smooth freq with boxes "
		 "title 'hashing only', '' using (bin(\\$4/\\$2)):(1.0) smooth freq with boxes "
		 "title 'with the balancer'; "
		 "set output '%s/movement.png'; set title 'data moved / optimum'; set xlabel ''; "
		 "set ylabel 'ratio'; set yrange [0:3.5]; set xtics rotate by -35; "
		 "set bmargin 10; set style fill solid 0.5; set style data histograms; "
		 "set boxwidth 0.6; plot '%s/movement.csv' using 5:xtic(1) title 'moved / "
		 "optimum', 1.1 with lines title 'target 1.1'\" 2>&1",
		 d, d, d, d);
	rc = system(cmd);
	if (rc != 0) {
		fprintf(stderr, "weft sim: gnuplot failed (exit %d); is gnuplot-nox installed?\n",
			rc);
		return -1;
	}
	return 0;
}

int cli_sim_main(int argc, char **argv)
{
	struct sim s;
	int rc = sim_parse(argc, argv, &s.a);
	double t0 = sim_now();

	if (rc != 0)
		return rc > 0 ? 0 : 2;
	s.summary = NULL;
	s.failures = 0;
	s.sets0 = NULL;
	s.sets_bal = NULL;
	mon_map_init(&s.balanced);
	if (s.a.out_dir != NULL && mkdir(s.a.out_dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "weft sim: cannot make %s: %s\n", s.a.out_dir, strerror(errno));
		return 1;
	}
	if (s.a.fanout > 0) {
		FILE *csv = sim_csv(&s, "fanout.csv", "subscribers,round,first_s,last_s");

		rc = sim_fanout(s.a.conf_file, s.a.fanout, csv);
		if (csv != NULL)
			fclose(csv);
		return rc == 0 ? 0 : 1;
	}
	s.summary = sim_csv(&s, "summary.csv", "metric,value,unit");
	s.metrics = s.a.json ? json_object() : NULL;
	if (!s.a.quiet)
		printf("weft sim: %u racks x %u hosts x %u OSDs, pool of %u PGs, size %u, failure "
		       "domain %s\n",
		       s.a.racks, s.a.hosts, s.a.per_host, s.a.pg_num, s.a.size,
		       mon_crush_type_str(s.a.domain));
	rc = sim_map_build(&s);
	if (rc == 0) {
		sim_metric(&s, "osds", s.nosd, "osds");
		sim_metric(&s, "pgs", s.a.pg_num, "pgs");
		sim_metric(&s, "map_build_s", sim_now() - t0, "s");
		if (!s.a.quiet)
			printf("\nplacement\n");
		rc = sim_run_placement(&s);
	}
	if (rc == 0) {
		if (!s.a.quiet)
			printf("\nPG spread and the balancer (+-%.0f%% or one PG)\n",
			       s.a.max_dev * 100);
		rc = sim_run_balance(&s);
	}
	if (rc == 0) {
		if (!s.a.quiet)
			printf("\nmap size (with the balancer's items)\n");
		rc = sim_run_mapsize(&s);
	}
	if (rc == 0)
		rc = sim_run_movement(&s);
	if (s.summary != NULL)
		fclose(s.summary);
	if (rc == 0 && s.a.plot && sim_plot(&s) != 0)
		s.failures++;
	if (rc == 0 && !s.a.quiet)
		printf(
		    "\nrecovery: see recovery.csv (%.0f GB per OSD at %.0f%% full, %.0f MB/s per "
		    "OSD)\nweft sim: done in %.1f s\n",
		    s.a.osd_gb, s.a.fill * 100, s.a.recovery_mbs, sim_now() - t0);
	if (rc == 0 && s.metrics != NULL) {
		json_t *o = json_pack("{s:{s:i, s:i, s:i, s:i, s:i, s:s}, s:O, s:i}", "args",
				      "racks", s.a.racks, "hosts", s.a.hosts, "osds_per_host",
				      s.a.per_host, "pgs", s.a.pg_num, "size", s.a.size, "domain",
				      mon_crush_type_str(s.a.domain), "metrics", s.metrics,
				      "failed_checks", s.failures);
		char *text = json_dumps(o, JSON_INDENT(2) | JSON_SORT_KEYS);

		if (text != NULL)
			printf("%s\n", text);
		free(text);
		json_decref(o);
	}
	json_decref(s.metrics);
	free(s.sets0);
	free(s.sets_bal);
	mon_map_free(&s.map);
	mon_map_free(&s.balanced);
	if (rc != 0) {
		fprintf(stderr, "weft sim: %s\n", strerror(-rc));
		return 1;
	}
	if (s.failures > 0)
		fprintf(stderr, "weft sim: %u check(s) failed\n", s.failures);
	return s.failures > 0 ? 1 : 0;
}
