/* SPDX-License-Identifier: Apache-2.0 */
/* Monitor commands of the CLI: arguments (cmd_mon.c) and text rendering (cmd_mon_render.c). */
#ifndef WEFT_TOOLS_CLI_MON_H
#define WEFT_TOOLS_CLI_MON_H

#include <jansson.h>
#include <stdbool.h>

#define CLI_MON_WORDS_MAX 16

struct cli_mon_args {
	const char *conf_file;
	const char *name;
	bool json;
	unsigned int timeout_ms;
	long size, min_size, pg_num; /* pool create; 0 = not given */
	const char *words[CLI_MON_WORDS_MAX];
	int nwords;
	char *rest[CLI_MON_WORDS_MAX]; /* --KEY=VALUE conf overrides */
	int nrest;
};

/* 0 ok, 1 --help printed, -1 bad usage (one line printed). */
int cli_mon_parse(int argc, char **argv, struct cli_mon_args *a);

void cli_render_status(json_t *out);
void cli_render_health(json_t *out);
void cli_render_mon_stat(json_t *out);
void cli_render_osd_tree(json_t *out);
void cli_render_osd_dump(json_t *out);
void cli_render_pool_ls(json_t *out);
void cli_render_none(json_t *out);
void cli_render_balancer_status(json_t *out);
void cli_render_balancer_eval(json_t *out);
/* Send cmd (consumed) to the mons and print the answer with render (or as JSON). */
int cli_cmd_simple(struct cli_mon_args *a, const char *what, json_t *cmd, void (*render)(json_t *));
void cli_render_pgmap(json_t *pgmap);

#endif
