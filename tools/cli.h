/* SPDX-License-Identifier: Apache-2.0 */
/* The weft CLI: one function per subcommand, dispatched from main.c. */
#ifndef WEFT_TOOLS_CLI_H
#define WEFT_TOOLS_CLI_H

#include <stdbool.h>

/* The command being run (argv[1] of weft: "pool", "osd"), for per-command --help. */
extern const char *cli_cmd_name;
/* --verbose anywhere on the line: library log lines go to stderr (muted otherwise). */
extern bool cli_verbose;
/*
 * --format VALUE, one word everywhere: "plain" or "json" ("text" is taken
 * for plain, "json-pretty" for json). 0 and *json_out, or -1 after one
 * line on stderr naming what ("weft pool ls").
 */
int cli_format_parse(const char *what, const char *value, bool *json_out);

/*
 * Each command gets argv with argv[0] = its own name ("config",
 * "fabric-bench") and returns the process exit code:
 * 0 success, 1 failure at run time, 2 bad usage (one line on stderr).
 */
int cli_bench_main(int argc, char **argv);
int cli_config_main(int argc, char **argv);
int cli_doctor_main(int argc, char **argv);
int cli_fabric_bench_main(int argc, char **argv);
int cli_store_bench_main(int argc, char **argv);
/* Monitor commands (cmd_mon.c): argv[0] is "status" or "health" for cli_status_main. */
int cli_status_main(int argc, char **argv);
int cli_mon_main(int argc, char **argv);
/* weft auth (cmd_auth.c): the monitors' auth database. */
int cli_auth_main(int argc, char **argv);
int cli_osd_main(int argc, char **argv);
int cli_osd_dev_main(int argc, char **argv); /* osd create | activate | list-devices */
int cli_pool_main(int argc, char **argv);
int cli_pg_main(int argc, char **argv);
int cli_balancer_main(int argc, char **argv);
/* Capacity (cmd_df.c): weft df. */
int cli_df_main(int argc, char **argv);
/* Admin socket (cmd_perf.c): argv[0] is "perf" or "daemon". */
int cli_perf_main(int argc, char **argv);
/* The placement simulator (sim/). */
int cli_sim_main(int argc, char **argv);
/* Volumes (cmd_vol.c, cmd_vol_bench.c). */
int cli_vol_main(int argc, char **argv);

#endif
