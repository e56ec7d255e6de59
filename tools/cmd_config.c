/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft config help [--markdown]
 * weft config show [-c FILE] [--name ENTITY] [--all] [--key=value...]
 */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/log.h"
#include "tools/cli.h"

#define CLI_CONFIG_DEFAULT_FILE "/etc/weft/weft.conf"

static void cli_config_usage(FILE *out)
{
	fprintf(out,
		"usage: weft config help [--markdown | --format plain|json]\n"
		"       weft config show [-c FILE] [--name ENTITY] [--all] [--format plain|json]\n"
		"                        [--KEY=VALUE...]\n"
		"\n"
		"help    print every option: name, type, default, range or choices, who reads it\n"
		"        (--markdown: the reference page docs/configuration.md)\n"
		"show    load FILE (default " CLI_CONFIG_DEFAULT_FILE " if it exists), WEFT_<KEY>\n"
		"        variables and --KEY=VALUE flags as ENTITY (default client.admin) would,\n"
		"        and print each value with its origin; only non-defaults unless --all\n");
}

static const char *const cli_config_types[] = {
	[CONF_BOOL] = "bool", [CONF_INT] = "int",     [CONF_SIZE] = "size", [CONF_DURATION] = "duration",
	[CONF_STR] = "str",   [CONF_ADDRS] = "addrs", [CONF_NETS] = "nets",
};

static void cli_config_print(json_t *o)
{
	char *text = json_dumps(o, JSON_INDENT(2));

	if (text != NULL)
		printf("%s\n", text);
	free(text);
	json_decref(o);
}

/* The option table as a JSON array: what 'config help' prints as text. */
static void cli_config_help_json(void)
{
	json_t *a = json_array();

	for (unsigned int i = 0; i < CONF_KEY_COUNT; i++) {
		const struct conf_opt_def *d = &conf_opt_table[i];
		json_t *who = json_array();

		if (d->who & CONF_WHO_MON)
			json_array_append_new(who, json_string("mon"));
		if (d->who & CONF_WHO_OSD)
			json_array_append_new(who, json_string("osd"));
		if (d->who & CONF_WHO_CLIENT)
			json_array_append_new(who, json_string("client"));
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:o, s:s}", "name", d->name,
						   "type", cli_config_types[d->type], "default",
						   d->def, "who", who, "help", d->help));
		if (d->choices != NULL)
			json_object_set_new(json_array_get(a, i), "choices",
					    json_string(d->choices));
	}
	cli_config_print(a);
}

static int cli_config_help(int argc, char **argv)
{
	bool markdown = false, json = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--format") || !strncmp(argv[i], "--format=", 9)) {
			const char *v = argv[i][8] == '=' ? argv[i] + 9 : i + 1 < argc ? argv[++i] : "";

			if (cli_format_parse("weft config help", v, &json) != 0)
				return 2;
		} else if (!strcmp(argv[i], "--markdown")) {
			markdown = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			cli_config_usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "weft config help: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (json && markdown) {
		fprintf(stderr, "weft config help: --markdown or --format json, not both\n");
		return 2;
	}
	if (json)
		cli_config_help_json();
	else
		conf_help_print(stdout, markdown);
	return fflush(stdout) == 0 ? 0 : 1;
}

static int cli_config_show(int argc, char **argv)
{
	const char *file = NULL, *name = "client.admin";
	bool all = false, file_given = false, json = false;
	struct conf *conf;
	int rc, ret = 1, kept = 1;

	/* Own flags first; the rest (--KEY=VALUE) go to conf_apply_args(). */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			cli_config_usage(stdout);
			return 0;
		} else if (!strcmp(a, "--all")) {
			all = true;
		} else if (!strcmp(a, "--format") || !strncmp(a, "--format=", 9)) {
			const char *v = a[8] == '=' ? a + 9 : i + 1 < argc ? argv[++i] : "";

			if (cli_format_parse("weft config show", v, &json) != 0)
				return 2;
		} else if (!strcmp(a, "-c") || !strcmp(a, "--conf") || !strcmp(a, "-n") ||
			   !strcmp(a, "--name")) {
			bool is_conf = !strcmp(a, "-c") || !strcmp(a, "--conf");

			if (i + 1 >= argc) {
				fprintf(stderr, "weft config show: %s needs a value\n", a);
				return 2;
			}
			if (is_conf) {
				file = argv[++i];
				file_given = true;
			} else {
				name = argv[++i];
			}
		} else if (!strncmp(a, "--conf=", 7)) {
			file = a + 7;
			file_given = true;
		} else if (!strncmp(a, "--name=", 7)) {
			name = a + 7;
		} else {
			argv[kept++] = argv[i];
		}
	}
	argc = kept;

	rc = conf_create(name, &conf);
	if (rc != 0)
		return 2; /* logged: bad entity name */
	rc = conf_apply_args(conf, &argc, argv);
	if (rc != 0) {
		ret = 2;
		goto out_destroy;
	}
	if (argc > 1) {
		fprintf(stderr,
			"weft config show: unknown argument '%s' (see 'weft config help')\n",
			argv[1]);
		ret = 2;
		goto out_destroy;
	}
	if (!file_given && access(CLI_CONFIG_DEFAULT_FILE, F_OK) == 0)
		file = CLI_CONFIG_DEFAULT_FILE;
	if (file != NULL) {
		rc = conf_load_file(conf, file);
		if (rc != 0)
			goto out_destroy;
	}
	rc = conf_apply_env(conf);
	if (rc != 0)
		goto out_destroy;
	if (json) {
		json_t *opts = json_object();

		for (unsigned int i = 0; i < CONF_KEY_COUNT; i++) {
			const char *origin = conf_get_origin(conf, (enum conf_key)i);

			if (!all && !strcmp(origin, "default"))
				continue;
			json_object_set_new(opts, conf_opt_table[i].name,
					    json_pack("{s:s, s:s}", "value",
						      conf_get_str(conf, (enum conf_key)i), "origin",
						      origin));
		}
		cli_config_print(json_pack("{s:s, s:o}", "entity", conf_entity(conf), "options",
					   opts));
	} else {
		conf_dump(conf, stdout, all);
	}
	ret = fflush(stdout) == 0 ? 0 : 1;
out_destroy:
	conf_destroy(conf);
	return ret;
}

int cli_config_main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "weft config: missing subcommand (try 'weft config --help')\n");
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cli_config_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "help"))
		return cli_config_help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "show"))
		return cli_config_show(argc - 1, argv + 1);
	fprintf(stderr, "weft config: unknown subcommand '%s' (try 'weft config --help')\n",
		argv[1]);
	return 2;
}
