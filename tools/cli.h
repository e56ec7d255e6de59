/* SPDX-License-Identifier: Apache-2.0 */
/* The weft CLI: one function per subcommand, dispatched from main.c. */
#ifndef WEFT_TOOLS_CLI_H
#define WEFT_TOOLS_CLI_H

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
