/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Monitor commands of the weft CLI: status, health, mon stat, osd ..., pool ...
 * Each builds a JSON command, sends it to any monitor through the mon client
 * (which hunts and retries until --timeout), and prints the JSON answer as
 * text, or as is with --format json.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/log.h"
#include "mon/monc/monc.h"
#include "tools/cli.h"
#include "tools/cli_mon.h"

#define CLI_MON_DEFAULT_FILE "/etc/weft/weft.conf"

/* Usage lines by command: 'weft pool --help' prints the pool lines only. */
static const struct {
	const char *cmd, *line;
} cli_mon_usage_lines[] = {
	{ "status", "status" },
	{ "health", "health [detail]" },
	{ "health", "health mute CODE [TTL] [--sticky]   (TTL: 30s, 10m, 1h, 2d; none: until unmute)" },
	{ "health", "health unmute CODE" },
	{ "df", "df" },
	{ "mon", "mon stat" },
	{ "osd", "osd tree | osd dump | osd down|out|in ID" },
	{ "osd", "osd set|unset noout|noin|noup|nodown|norecover|nobackfill|norebalance|noscrub|nodeep-scrub|pause" },
	{ "osd", "osd reweight ID WEIGHT(0..1) | osd crush reweight osd.ID WEIGHT" },
	{ "osd", "osd safe-to-destroy ID... | osd ok-to-stop ID..." },
	{ "osd", "osd rm ID | osd purge ID [--force] --yes-i-really-mean-it" },
	{ "osd", "osd blocklist add INSTANCE [SECONDS] | osd blocklist rm INSTANCE | osd blocklist ls" },
	{ "osd", "osd df | osd set-nearfull-ratio|set-backfillfull-ratio|set-full-ratio R" },
	{ "osd", "osd crush add-bucket NAME TYPE [TYPE=NAME ...]" },
	{ "osd", "osd crush move NAME TYPE=NAME ... | osd crush rm NAME" },
	{ "osd", "osd crush set-location osd.ID TYPE=NAME ..." },
	{ "osd", "osd create | activate | list-devices   (see 'weft osd create --help')" },
	{ "pool", "pool ls [detail] | pool create NAME [--size N] [--min-size M] [--pg-num P] [--force]" },
	{ "pool", "pool set-quota NAME max_bytes|max_objects N (10G; 0 removes it)" },
	{ "pool", "pool rm NAME NAME --yes-i-really-really-mean-it" },
	{ "pool", "pool set NAME size|min_size|pg_num VALUE [--force]" },
	{ "pool", "pool set NAME failure_domain TYPE | pool set NAME root BUCKET" },
	{ "balancer", "balancer status | eval | on | off" },
	{ "auth", "auth ls | auth get ENTITY | auth print-key ENTITY" },
	{ "auth", "auth get-or-create ENTITY [mon 'CAPS'] [osd 'CAPS']   (client.NAME, osd.N, mon.)" },
	{ "auth", "auth caps ENTITY mon 'CAPS' [osd 'CAPS'] | auth rm ENTITY | auth rotate ENTITY" },
	{ "auth", "auth service-keys   (the keys that seal tickets: ids, states, fingerprints)" },
	{ "auth", "  CAPS: allow r|w|rw|* [pool=NAME], profile osd|client|mount [pool=NAME], profile bootstrap-osd" },
};

static void cli_mon_usage(FILE *out)
{
	const char *cmd = cli_cmd_name;
	bool any = false, first = true;

	for (size_t i = 0; i < sizeof(cli_mon_usage_lines) / sizeof(cli_mon_usage_lines[0]); i++)
		any |= !strcmp(cli_mon_usage_lines[i].cmd, cmd);
	for (size_t i = 0; i < sizeof(cli_mon_usage_lines) / sizeof(cli_mon_usage_lines[0]); i++) {
		if (any && strcmp(cli_mon_usage_lines[i].cmd, cmd) != 0)
			continue;
		fprintf(out, "%s weft [OPTIONS] %s\n", first ? "usage:" : "      ",
			cli_mon_usage_lines[i].line);
		first = false;
	}
	fprintf(out,
		"\n"
		"options (anywhere on the line):\n"
		"  -c, --conf FILE     configuration (default " CLI_MON_DEFAULT_FILE ")\n"
		"  -n, --name ENTITY   who we are (default client.admin)\n"
		"  -k, --keyring FILE  where our key is (default: the conf's keyring)\n"
		"  -f, --format FMT    plain (default) or json\n"
		"  --timeout SECONDS   give up after this long (default 15)\n"
		"  --verbose           show the libraries' log lines on stderr\n"
		"  --KEY=VALUE         any configuration option (--mon_host=...)\n");
}

int cli_mon_parse(int argc, char **argv, struct cli_mon_args *a)
{
	memset(a, 0, sizeof(*a));
	a->name = "client.admin";
	a->timeout_ms = 15000;
	for (int i = 0; i < argc; i++) {
		const char *s = argv[i];
		const char *v = NULL;
		bool takes = !strcmp(s, "-c") || !strcmp(s, "--conf") || !strcmp(s, "-n") ||
			     !strcmp(s, "--name") || !strcmp(s, "-k") || !strcmp(s, "--keyring") ||
			     !strcmp(s, "-f") || !strcmp(s, "--format") ||
			     !strcmp(s, "--timeout") || !strcmp(s, "--size") ||
			     !strcmp(s, "--min-size") || !strcmp(s, "--pg-num");

		if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			cli_mon_usage(stdout);
			return 1;
		}
		if (!strcmp(s, "--sticky")) {
			a->sticky = true;
			continue;
		}
		if (!strcmp(s, "--force") || !strcmp(s, "--yes-i-really-really-mean-it")) {
			*(s[2] == 'f' ? &a->force : &a->sure) = true;
			continue;
		}
		if (!strcmp(s, "--yes-i-really-mean-it")) {
			a->mean_it = true;
			continue;
		}
		if (takes) {
			if (i + 1 >= argc) {
				fprintf(stderr, "weft: %s needs a value\n", s);
				return -1;
			}
			v = argv[++i];
		} else if (!strncmp(s, "--format=", 9)) {
			s = "--format";
			v = argv[i] + 9;
		} else if (!strncmp(s, "--conf=", 7)) {
			s = "--conf";
			v = argv[i] + 7;
		} else if (!strncmp(s, "--timeout=", 10)) {
			s = "--timeout";
			v = argv[i] + 10;
		} else if (!strncmp(s, "--", 2)) {
			a->rest[a->nrest++] = argv[i]; /* a conf option, checked later */
			continue;
		} else {
			if (a->nwords >= CLI_MON_WORDS_MAX) {
				fprintf(stderr, "weft: too many arguments\n");
				return -1;
			}
			a->words[a->nwords++] = argv[i];
			continue;
		}
		if (!strcmp(s, "-c") || !strcmp(s, "--conf")) {
			a->conf_file = v;
		} else if (!strcmp(s, "-n") || !strcmp(s, "--name")) {
			a->name = v;
		} else if (!strcmp(s, "-k") || !strcmp(s, "--keyring")) {
			a->keyring = v;
		} else if (!strcmp(s, "-f") || !strcmp(s, "--format")) {
			if (cli_format_parse("weft", v, &a->json) != 0)
				return -1;
		} else if (!strcmp(s, "--timeout")) {
			char *end;
			double t = strtod(v, &end);

			if (*end != '\0' || t <= 0 || t > 3600) {
				fprintf(stderr, "weft: --timeout must be seconds in (0, 3600]\n");
				return -1;
			}
			a->timeout_ms = (unsigned int)(t * 1000);
		} else {
			char *end;
			long n = strtol(v, &end, 10);

			if (*end != '\0' || n < 1 || n > 65536) {
				fprintf(stderr, "weft: %s must be a positive integer, not '%s'\n", s, v);
				return -1;
			}
			if (!strcmp(s, "--size"))
				a->size = n;
			else if (!strcmp(s, "--min-size"))
				a->min_size = n;
			else
				a->pg_num = n;
		}
	}
	return 0;
}

/* Load conf and connect: 0, or an exit code (2 bad usage or conf, 1 no mon client). */
int cli_mon_open(struct cli_mon_args *a, const char *what, struct cli_mon_sess *s)
{
	const char *file = a->conf_file;
	char why[PROTO_ERRMSG_MAX + 1];
	int argc = a->nrest + 1;
	char *argv[CLI_MON_WORDS_MAX + 2];

	s->conf = NULL;
	s->mc = NULL;
	argv[0] = "weft";
	for (int i = 0; i < a->nrest; i++)
		argv[i + 1] = a->rest[i];
	if (conf_create(a->name, &s->conf) != 0)
		goto fail;
	if (file == NULL && access(CLI_MON_DEFAULT_FILE, F_OK) == 0)
		file = CLI_MON_DEFAULT_FILE;
	if ((file != NULL && conf_load_file(s->conf, file) != 0) || conf_apply_env(s->conf) != 0 ||
	    conf_apply_args(s->conf, &argc, argv) != 0)
		goto fail;
	if (argc > 1) {
		fprintf(stderr, "weft %s: unknown option '%s'\n", what, argv[1]);
		goto fail;
	}
	if (a->keyring != NULL && conf_set(s->conf, "keyring", a->keyring, "--keyring") != 0)
		goto fail;
	weft_log_set_level(cli_verbose ? WEFT_LOG_INFO : WEFT_LOG_ERROR);
	if (monc_create_err(s->conf, a->name, why, sizeof(why), &s->mc) != 0) {
		fprintf(stderr, "weft %s: %s\n", what, why);
		cli_mon_close(s);
		return 1;
	}
	return 0;
fail:
	cli_mon_close(s);
	return 2;
}

void cli_mon_close(struct cli_mon_sess *s)
{
	monc_destroy(s->mc);
	conf_destroy(s->conf);
	s->mc = NULL;
	s->conf = NULL;
}

int cli_mon_call(struct cli_mon_sess *s, unsigned int timeout_ms, json_t *cmd, json_t **out_out,
		 char *errmsg, size_t errcap)
{
	char *text = NULL, *json = json_dumps(cmd, JSON_COMPACT);
	json_error_t jerr;
	int rc;

	*out_out = NULL;
	errmsg[0] = '\0';
	json_decref(cmd);
	if (json == NULL)
		return -ENOMEM;
	rc = monc_command_sync(s->mc, json, timeout_ms, &text, errmsg, errcap);
	free(json);
	if (rc == 0) {
		*out_out = text != NULL ? json_loads(text, 0, &jerr) : json_object();
		if (*out_out == NULL) {
			snprintf(errmsg, errcap, "the monitor answered malformed JSON");
			rc = -EBADMSG;
		}
	}
	free(text);
	return rc;
}

/* Load conf, connect, run one command. 0 and *out_out, or an exit code (1 or 2). */
static int cli_mon_run(struct cli_mon_args *a, const char *what, json_t *cmd, json_t **out_out)
{
	struct cli_mon_sess s;
	char errmsg[PROTO_ERRMSG_MAX + 1];
	int rc = cli_mon_open(a, what, &s);

	if (rc != 0) {
		json_decref(cmd);
		return rc;
	}
	rc = cli_mon_call(&s, a->timeout_ms, cmd, out_out, errmsg, sizeof(errmsg));
	if (rc != 0 && rc != -EBADMSG)
		fprintf(stderr, "weft %s: %s%s(%s)\n", what, errmsg, errmsg[0] ? " " : "",
			rc == -ETIMEDOUT ? "timed out" : strerror(-rc));
	else if (rc != 0)
		fprintf(stderr, "weft %s: %s\n", what, errmsg);
	cli_mon_close(&s);
	return rc != 0 ? 1 : 0;
}

void cli_print_json(json_t *out)
{
	char *s = json_dumps(out, JSON_INDENT(2) | JSON_SORT_KEYS);

	if (s != NULL)
		printf("%s\n", s);
	free(s);
}

int cli_cmd_simple(struct cli_mon_args *a, const char *what, json_t *cmd, void (*render)(json_t *))
{
	json_t *out = NULL;
	int rc = cli_mon_run(a, what, cmd, &out);

	if (rc != 0)
		return rc;
	if (a->json || render == NULL)
		cli_print_json(out);
	else
		render(out);
	json_decref(out);
	return fflush(stdout) == 0 ? 0 : 1;
}

/* "90", "30s", "10m", "1h", "2d" -> seconds; -1 if malformed. */
static long long cli_ttl_parse(const char *s)
{
	char *end;
	long long n = strtoll(s, &end, 10);
	long long mult = 1;

	if (end == s || n <= 0)
		return -1;
	if (*end == 's')
		end++;
	else if (*end == 'm')
		mult = 60, end++;
	else if (*end == 'h')
		mult = 3600, end++;
	else if (*end == 'd')
		mult = 86400, end++;
	if (*end != '\0' || n > 3650LL * 86400 / mult)
		return -1;
	return n * mult;
}

/* health mute CODE [TTL] [--sticky] | health unmute CODE */
static int cli_health_mute(struct cli_mon_args *a)
{
	bool mute = !strcmp(a->words[0], "mute");
	long long ttl = 0;
	json_t *cmd;
	int rc;

	if (a->nwords < 2 || a->nwords > (mute ? 3 : 2)) {
		fprintf(stderr, "weft health: usage: health %s\n",
			mute ? "mute CODE [TTL] [--sticky]" : "unmute CODE");
		return 2;
	}
	if (mute && a->nwords == 3 && (ttl = cli_ttl_parse(a->words[2])) < 0) {
		fprintf(stderr, "weft health: TTL '%s' is not a duration (30s, 10m, 1h, 2d; at most "
			"10 years)\n", a->words[2]);
		return 2;
	}
	if (!mute && a->sticky) {
		fprintf(stderr, "weft health: --sticky is an option of health mute\n");
		return 2;
	}
	cmd = json_pack("{s:s, s:s}", "prefix", mute ? "health mute" : "health unmute", "code",
			a->words[1]);
	if (mute) {
		json_object_set_new(cmd, "ttl", json_integer(ttl));
		json_object_set_new(cmd, "sticky", json_boolean(a->sticky));
	}
	rc = cli_cmd_simple(a, "health", cmd, cli_render_none);
	if (rc == 0 && !a->json) {
		if (!mute)
			printf("%s unmuted\n", a->words[1]);
		else if (ttl > 0)
			printf("%s muted for %s%s\n", a->words[1], a->words[2],
			       a->sticky ? " (sticky)" : "");
		else
			printf("%s muted until unmuted%s\n", a->words[1], a->sticky ? " (sticky)" : "");
	}
	return rc;
}

int cli_status_main(int argc, char **argv)
{
	struct cli_mon_args a;
	int rc = cli_mon_parse(argc - 1, argv + 1, &a);
	const char *prefix = argv[0];

	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (!strcmp(prefix, "health") && a.nwords >= 1 &&
	    (!strcmp(a.words[0], "mute") || !strcmp(a.words[0], "unmute")))
		return cli_health_mute(&a);
	if (a.sticky) {
		fprintf(stderr, "weft %s: --sticky is an option of health mute\n", prefix);
		return 2;
	}
	if (a.nwords != 0 && !(a.nwords == 1 && !strcmp(prefix, "health") &&
				!strcmp(a.words[0], "detail"))) {
		fprintf(stderr, "weft %s: unexpected argument '%s'\n", prefix, a.words[0]);
		return 2;
	}
	/* the answer always has the detail lines; plain text shows them for "health detail" */
	return cli_cmd_simple(&a, prefix, json_pack("{s:s}", "prefix", prefix),
			      !strcmp(prefix, "status") ? cli_render_status
			      : a.nwords == 1		? cli_render_health_detail
							: cli_render_health);
}

int cli_mon_main(int argc, char **argv)
{
	struct cli_mon_args a;
	int rc = cli_mon_parse(argc - 1, argv + 1, &a);

	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (a.nwords >= 1 && !strcmp(a.words[0], "add")) {
		if (a.nwords != 3) {
			fprintf(stderr, "weft mon add: usage: weft mon add NAME IP:PORT\n");
			return 2;
		}
		rc = cli_cmd_simple(&a, "mon add",
				    json_pack("{s:s, s:s, s:s}", "prefix", "mon add", "name",
					      a.words[1], "addr", a.words[2]),
				    cli_render_none);
		if (rc == 0 && !a.json)
			printf("mon.%s added at %s; on its host: weft-mon --mkfs -i %s --join "
			       "EXISTING_MON_ADDR, then start it (weft mon stat: joining, then "
			       "voter)\n",
			       a.words[1], a.words[2], a.words[1]);
		return rc;
	}
	if (a.nwords >= 1 && (!strcmp(a.words[0], "remove") || !strcmp(a.words[0], "rm"))) {
		if (a.nwords != 2) {
			fprintf(stderr, "weft mon remove: usage: weft mon remove NAME\n");
			return 2;
		}
		rc = cli_cmd_simple(&a, "mon remove",
				    json_pack("{s:s, s:s}", "prefix", "mon remove", "name",
					      a.words[1]),
				    cli_render_none);
		if (rc == 0 && !a.json)
			printf("mon.%s removed; it stops itself\n", a.words[1]);
		return rc;
	}
	if (a.nwords != 1 || strcmp(a.words[0], "stat") != 0) {
		fprintf(stderr, "weft mon: unknown subcommand '%s' (stat, add NAME ADDR, remove "
			"NAME)\n", a.nwords > 0 ? a.words[0] : "");
		return 2;
	}
	return cli_cmd_simple(&a, "mon stat", json_pack("{s:s}", "prefix", "mon stat"),
			      cli_render_mon_stat);
}

static int cli_parse_id(const char *what, const char *s, long *id_out)
{
	char *end;
	long id;

	if (!strncmp(s, "osd.", 4))
		s += 4;
	id = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || id < 0 || id > 65535) {
		fprintf(stderr, "weft %s: '%s' is not an osd id\n", what, s);
		return -1;
	}
	*id_out = id;
	return 0;
}

/* TYPE=NAME words from words[first..] into a location object; NULL after a one-line error. */
static json_t *cli_crush_loc(struct cli_mon_args *a, int first)
{
	json_t *loc = json_object();

	for (int i = first; i < a->nwords; i++) {
		const char *eq = strchr(a->words[i], '=');
		char type[32];

		if (eq == NULL || eq == a->words[i] || eq[1] == '\0' ||
		    (size_t)(eq - a->words[i]) >= sizeof(type)) {
			fprintf(stderr, "weft osd crush: '%s' is not TYPE=NAME (rack=r1)\n",
				a->words[i]);
			json_decref(loc);
			return NULL;
		}
		snprintf(type, sizeof(type), "%.*s", (int)(eq - a->words[i]), a->words[i]);
		json_object_set_new(loc, type, json_string(eq + 1));
	}
	return loc;
}

static int cli_osd_crush(struct cli_mon_args *a)
{
	const char *verb = a->words[1];
	char prefix[48];
	json_t *cmd, *loc;
	long id;
	int rc;

	snprintf(prefix, sizeof(prefix), "osd crush %s", verb);
	if (!strcmp(verb, "add-bucket") && a->nwords >= 4) {
		loc = cli_crush_loc(a, 4);
		if (loc == NULL)
			return 2;
		cmd = json_pack("{s:s, s:s, s:s}", "prefix", prefix, "name", a->words[2], "type",
				a->words[3]);
		if (json_object_size(loc) > 0)
			json_object_set(cmd, "loc", loc);
		json_decref(loc);
	} else if (!strcmp(verb, "move") && a->nwords >= 4) {
		loc = cli_crush_loc(a, 3);
		if (loc == NULL)
			return 2;
		cmd = json_pack("{s:s, s:s, s:o}", "prefix", prefix, "name", a->words[2], "loc", loc);
	} else if (!strcmp(verb, "set-location") && a->nwords >= 3) {
		if (cli_parse_id(prefix, a->words[2], &id) != 0 || (loc = cli_crush_loc(a, 3)) == NULL)
			return 2;
		cmd = json_pack("{s:s, s:i, s:o}", "prefix", prefix, "id", id, "loc", loc);
	} else if (!strcmp(verb, "rm") && a->nwords == 3) {
		cmd = json_pack("{s:s, s:s}", "prefix", prefix, "name", a->words[2]);
	} else {
		fprintf(stderr, "weft osd crush: bad arguments (try 'weft osd --help')\n");
		return 2;
	}
	rc = cli_cmd_simple(a, prefix, cmd, cli_render_none);
	if (rc == 0 && !a->json)
		printf("%s: done\n", prefix);
	return rc;
}

int cli_balancer_main(int argc, char **argv)
{
	struct cli_mon_args a;
	int rc = cli_mon_parse(argc - 1, argv + 1, &a);
	char prefix[32];

	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (a.nwords != 1 || (strcmp(a.words[0], "status") && strcmp(a.words[0], "eval") &&
			      strcmp(a.words[0], "on") && strcmp(a.words[0], "off"))) {
		fprintf(stderr, "weft balancer: status, eval, on or off (try 'weft balancer --help')\n");
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "balancer %s", a.words[0]);
	rc = cli_cmd_simple(&a, prefix, json_pack("{s:s}", "prefix", prefix),
			    !strcmp(a.words[0], "status") ? cli_render_balancer_status
			    : !strcmp(a.words[0], "eval") ? cli_render_balancer_eval
							  : cli_render_none);
	if (rc == 0 && !a.json && (!strcmp(a.words[0], "on") || !strcmp(a.words[0], "off")))
		printf("balancer is %s\n", a.words[0]);
	return rc;
}

int cli_osd_main(int argc, char **argv)
{
	struct cli_mon_args a;
	char prefix[32];
	const char *sub;
	long id;
	int rc;

	/* OSDs on devices (cmd_osd_dev.c) have options of their own */
	if (argc >= 2 && (!strcmp(argv[1], "create") || !strcmp(argv[1], "activate") ||
			  !strcmp(argv[1], "list-devices")))
		return cli_osd_dev_main(argc, argv);
	rc = cli_mon_parse(argc - 1, argv + 1, &a);
	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (a.nwords < 1) {
		fprintf(stderr, "weft osd: missing subcommand (try 'weft osd --help')\n");
		return 2;
	}
	sub = a.words[0];
	snprintf(prefix, sizeof(prefix), "osd %s", sub);
	rc = cli_osd_cap(&a); /* osd df, osd set-*-ratio (cmd_df.c) */
	if (rc >= 0)
		return rc;
	rc = cli_osd_blocklist(&a); /* osd blocklist add|rm|ls (cmd_blocklist.c) */
	if (rc >= 0)
		return rc;
	rc = cli_osd_life(&a); /* reweight, rm, purge, ... (cmd_osd_life.c) */
	if (rc >= 0)
		return rc;
	if ((!strcmp(sub, "tree") || !strcmp(sub, "dump")) && a.nwords == 1)
		return cli_cmd_simple(&a, prefix, json_pack("{s:s}", "prefix", prefix),
				      !strcmp(sub, "tree") ? cli_render_osd_tree
							   : cli_render_osd_dump);
	if ((!strcmp(sub, "down") || !strcmp(sub, "out") || !strcmp(sub, "in")) && a.nwords == 2) {
		if (cli_parse_id(prefix, a.words[1], &id) != 0)
			return 2;
		rc = cli_cmd_simple(&a, prefix, json_pack("{s:s, s:i}", "prefix", prefix, "id", id),
				    cli_render_none);
		if (rc == 0 && !a.json)
			printf("marked %s osd.%ld\n", sub, id);
		return rc;
	}
	if ((!strcmp(sub, "set") || !strcmp(sub, "unset")) && a.nwords == 2) {
		rc = cli_cmd_simple(&a, prefix,
				    json_pack("{s:s, s:s}", "prefix", prefix, "key", a.words[1]),
				    cli_render_none);
		if (rc == 0 && !a.json)
			printf("%s is %s\n", a.words[1], !strcmp(sub, "set") ? "set" : "unset");
		return rc;
	}
	if (!strcmp(sub, "crush") && a.nwords >= 3)
		return cli_osd_crush(&a);
	fprintf(stderr, "weft osd: bad arguments for '%s' (try 'weft osd --help')\n", sub);
	return 2;
}

int cli_pool_main(int argc, char **argv)
{
	struct cli_mon_args a;
	int rc = cli_mon_parse(argc - 1, argv + 1, &a);
	char prefix[32];
	const char *sub;
	json_t *cmd;

	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (a.nwords < 1) {
		fprintf(stderr, "weft pool: missing subcommand (try 'weft pool --help')\n");
		return 2;
	}
	sub = a.words[0];
	snprintf(prefix, sizeof(prefix), "pool %s", sub);
	if (!strcmp(sub, "ls") && (a.nwords == 1 || (a.nwords == 2 && !strcmp(a.words[1], "detail"))))
		return cli_cmd_simple(&a, prefix, json_pack("{s:s}", "prefix", prefix),
				      a.nwords == 2 ? cli_render_pool_detail : cli_render_pool_ls);
	if (!strcmp(sub, "set-quota"))
		return cli_pool_quota(&a);
	if (!strcmp(sub, "create") && a.nwords == 2) {
		cmd = json_pack("{s:s, s:s, s:b}", "prefix", prefix, "name", a.words[1], "force",
				a.force);
		if (a.size)
			json_object_set_new(cmd, "size", json_integer(a.size));
		if (a.min_size)
			json_object_set_new(cmd, "min_size", json_integer(a.min_size));
		if (a.pg_num)
			json_object_set_new(cmd, "pg_num", json_integer(a.pg_num));
	} else if (!strcmp(sub, "rm") && a.nwords >= 2) {
		/* as Ceph: the name twice and the long flag; the mons check them again */
		if (a.nwords != 3 || strcmp(a.words[1], a.words[2]) != 0 || !a.sure) {
			fprintf(stderr, "weft pool rm: this deletes pool '%s' and all its data; to "
				"do it, give its name twice and --yes-i-really-really-mean-it\n",
				a.words[1]);
			return 2;
		}
		cmd = json_pack("{s:s, s:s, s:s, s:b}", "prefix", prefix, "name", a.words[1],
				"name2", a.words[2], "yes_i_really_really_mean_it", true);
	} else if (!strcmp(sub, "set") && a.nwords == 4 &&
		   (!strcmp(a.words[2], "failure_domain") || !strcmp(a.words[2], "root"))) {
		cmd = json_pack("{s:s, s:s, s:s, s:s}", "prefix", prefix, "name", a.words[1], "key",
				a.words[2], "value", a.words[3]);
	} else if (!strcmp(sub, "set") && a.nwords == 4 && strcmp(a.words[2], "size") &&
		   strcmp(a.words[2], "min_size") && strcmp(a.words[2], "pg_num")) {
		fprintf(stderr, "weft pool set: unknown pool property '%s' (size, min_size, "
			"pg_num, failure_domain, root)\n", a.words[2]);
		return 2;
	} else if (!strcmp(sub, "set") && a.nwords == 4) {
		char *end;
		long v = strtol(a.words[3], &end, 10);

		if (*end != '\0' || v < 1 || v > 65536) {
			fprintf(stderr, "weft pool set: %s must be a positive integer, not '%s'\n",
				a.words[2], a.words[3]);
			return 2;
		}
		cmd = json_pack("{s:s, s:s, s:s, s:i, s:b}", "prefix", prefix, "name", a.words[1],
				"key", a.words[2], "value", v, "force", a.force);
	} else {
		fprintf(stderr, "weft pool: bad arguments for '%s' (try 'weft pool --help')\n", sub);
		return 2;
	}
	rc = cli_cmd_simple(&a, prefix, cmd, cli_render_none);
	if (rc == 0 && !a.json)
		printf("pool '%s' %s\n", a.words[1],
		       !strcmp(sub, "create") ? "created" : !strcmp(sub, "rm") ? "removed" : "updated");
	return rc;
}
