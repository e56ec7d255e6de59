/* SPDX-License-Identifier: Apache-2.0 */
/* Monitor commands of the CLI: arguments (cmd_mon.c) and text rendering (cmd_mon_render.c). */
#ifndef WEFT_TOOLS_CLI_MON_H
#define WEFT_TOOLS_CLI_MON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define CLI_MON_WORDS_MAX 16

struct cli_mon_args {
	const char *conf_file;
	const char *name;
	const char *keyring; /* -k: the conf's keyring, overridden */
	bool json;
	unsigned int timeout_ms;
	long size, min_size, pg_num; /* pool create; 0 = not given */
	bool force;		     /* --force: pool size above the failure domains */
	bool sure;		     /* --yes-i-really-really-mean-it: pool rm */
	bool mean_it;		     /* --yes-i-really-mean-it: osd purge */
	bool sticky;		     /* --sticky: health mute */
	const char *words[CLI_MON_WORDS_MAX];
	int nwords;
	char *rest[CLI_MON_WORDS_MAX]; /* --KEY=VALUE conf overrides */
	int nrest;
};

/* 0 ok, 1 --help printed, -1 bad usage (one line printed). */
int cli_mon_parse(int argc, char **argv, struct cli_mon_args *a);

void cli_render_status(json_t *out);
void cli_render_health(json_t *out);
void cli_render_health_detail(json_t *out);
void cli_render_mon_stat(json_t *out);
void cli_render_osd_tree(json_t *out);
void cli_render_osd_dump(json_t *out);
void cli_render_pool_ls(json_t *out);
void cli_render_none(json_t *out);
void cli_render_balancer_status(json_t *out);
void cli_render_balancer_eval(json_t *out);
/* A connection to the mons for several commands (weft pg verify polls). */
struct conf;
struct monc;
struct cli_mon_sess {
	struct conf *conf;
	struct monc *mc;
};
/* Load conf and connect: 0, or an exit code (error printed). */
int cli_mon_open(struct cli_mon_args *a, const char *what, struct cli_mon_sess *s);
/* One command (cmd consumed): 0 and *out_out, or -errno with the mon's message in errmsg. */
int cli_mon_call(struct cli_mon_sess *s, unsigned int timeout_ms, json_t *cmd, json_t **out_out,
		 char *errmsg, size_t errcap);
void cli_mon_close(struct cli_mon_sess *s);
/* Send cmd (consumed) to the mons and print the answer with render (or as JSON). */
int cli_cmd_simple(struct cli_mon_args *a, const char *what, json_t *cmd, void (*render)(json_t *));
void cli_render_pgmap(json_t *pgmap);
void cli_print_json(json_t *out);
/* Capacity (cmd_df.c): osd df and the ratios (-1: words[0] is none of them), pool set-quota. */
int cli_osd_cap(struct cli_mon_args *a);
/* OSD lifecycle (cmd_osd_life.c): reweight, crush reweight, rm, purge, safe-to-destroy, ok-to-stop. */
int cli_osd_life(struct cli_mon_args *a);
int cli_pool_quota(struct cli_mon_args *a);
/* osd blocklist add|rm|ls (cmd_blocklist.c); -1: words[0] is not "blocklist". */
int cli_osd_blocklist(struct cli_mon_args *a);
const char *cli_bytes_str(unsigned long long v, char *buf, size_t cap);
void cli_render_pool_detail(json_t *out);
/* weft pg verify (cmd_pg_verify.c): words[0] = "verify", then PGIDs unless all. */
int cli_pg_verify(struct cli_mon_args *a, bool all, unsigned int wait_s);

#endif
