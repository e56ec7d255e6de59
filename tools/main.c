/* SPDX-License-Identifier: Apache-2.0 */
/* weft: the command-line tool. */
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/version.h"
#include "tools/cli.h"

struct cli_cmd {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *summary;
};

static const struct cli_cmd cli_cmds[] = {
	{ "bench", cli_bench_main,
	  "bench POOL SECONDS write|seq|rand, bench POOL cleanup: cluster benchmark (like rados bench)" },
	{ "config", cli_config_main, "config help [--markdown] | config show: the option table" },
	{ "doctor", cli_doctor_main, "check this node: RDMA devices, ports, GIDs, memlock, NUMA" },
	{ "fabric-bench", cli_fabric_bench_main,
	  "point-to-point transport benchmark (like perftest ib_write_bw)" },
	{ "auth", cli_auth_main,
	  "auth ls | get | print-key | get-or-create | caps | rm | rotate: keys and caps" },
	{ "status", cli_status_main, "cluster health, monitor quorum, map epoch, OSDs, pools" },
	{ "health", cli_status_main, "HEALTH_OK / HEALTH_WARN / HEALTH_ERR and why" },
	{ "mon", cli_mon_main, "mon stat | add NAME ADDR | remove NAME: monitors, leader, quorum" },
	{ "perf", cli_perf_main, "perf dump TYPE.ID: a daemon's counters from its admin socket" },
	{ "daemon", cli_perf_main, "daemon TYPE.ID COMMAND: any admin socket command (help)" },
	{ "osd", cli_osd_main,
	  "osd tree | dump | down|out|in ID | set|unset noout|pause | crush ... | create | activate | "
	  "list-devices" },
	{ "df", cli_df_main, "df: raw space and each pool's stored bytes, objects, max avail" },
	{ "balancer", cli_balancer_main, "balancer status | eval | on | off: the upmap balancer" },
	{ "pg", cli_pg_main,
	  "pg ls [--inconsistent | --state S] | scrub | deep-scrub | repair PGID | verify PGID... | --all" },
	{ "pool", cli_pool_main, "pool ls | create NAME [--size N --min-size M --pg-num P] | rm | set" },
	{ "sim", cli_sim_main,
	  "sim [--racks R --hosts H --osds-per-host O ...]: placement at scale (docs/scale.md)" },
	{ "vol", cli_vol_main,
	  "vol create|ls|info|resize|rm|lock|bench: block volumes (like rbd)" },
	{ "store-bench", cli_store_bench_main,
	  "OSD object store vs. raw device limits (WAL group commit, 4K/4M writes)" },
};

static void cli_usage(FILE *out)
{
	fprintf(out, "usage: weft COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cli_cmds) / sizeof(cli_cmds[0]); i++)
		fprintf(out, "  %-14s %s\n", cli_cmds[i].name, cli_cmds[i].summary);
	fprintf(out, "\n'weft COMMAND --help' describes one command; 'weft --version' prints\n"
		     "the version and the git commit of this build. Every command that prints\n"
		     "takes --format plain|json; --verbose shows the libraries' log lines.\n");
}

const char *cli_cmd_name = "";
bool cli_verbose;

int cli_format_parse(const char *what, const char *value, bool *json_out)
{
	if (!strcmp(value, "plain") || !strcmp(value, "text")) {
		*json_out = false;
		return 0;
	}
	if (!strcmp(value, "json") || !strcmp(value, "json-pretty")) {
		*json_out = true;
		return 0;
	}
	fprintf(stderr, "%s: --format must be plain or json, not '%s'\n", what, value);
	return -1;
}

/*
 * --verbose, anywhere: taken out of argv (fabric-bench keeps it: it has its
 * own) and without it every log line is dropped, so a failing command says
 * one line of its own on stderr, not the libraries' log lines before it.
 */
static void cli_verbose_take(int *argc, char **argv)
{
	bool keep = *argc > 1 && !strcmp(argv[1], "fabric-bench");
	int n = 1;

	for (int i = 1; i < *argc; i++) {
		if (!strcmp(argv[i], "--")) {
			while (i < *argc)
				argv[n++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "--verbose")) {
			cli_verbose = true;
			if (!keep)
				continue;
		}
		argv[n++] = argv[i];
	}
	*argc = n;
	argv[n] = NULL;
	weft_log_mute(!cli_verbose);
}

int main(int argc, char **argv)
{
	cli_verbose_take(&argc, argv);
	if (argc < 2) {
		fprintf(stderr, "weft: no command given (try 'weft --help')\n");
		return 2;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("weft %s\n", weft_version_full());
		return 0;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		cli_usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cli_cmds) / sizeof(cli_cmds[0]); i++) {
		if (!strcmp(argv[1], cli_cmds[i].name)) {
			cli_cmd_name = cli_cmds[i].name;
			return cli_cmds[i].main(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "weft: unknown command '%s' (try 'weft --help')\n", argv[1]);
	return 2;
}
