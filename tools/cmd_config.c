/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft config help [--markdown]
 * weft config show [-c FILE] [--name ENTITY] [--all] [--key=value...]
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/log.h"
#include "tools/cli.h"

#define CLI_CONFIG_DEFAULT_FILE "/etc/weft/weft.conf"

static void cli_config_usage(FILE *out)
{
	fprintf(out,
		"usage: weft config help [--markdown]\n"
		"       weft config show [-c FILE] [--name ENTITY] [--all] [--KEY=VALUE...]\n"
		"\n"
		"help    print every option: name, type, default, range or choices, who reads it\n"
		"        (--markdown: the reference page docs/configuration.md)\n"
		"show    load FILE (default " CLI_CONFIG_DEFAULT_FILE " if it exists), WEFT_<KEY>\n"
		"        variables and --KEY=VALUE flags as ENTITY (default client.admin) would,\n"
		"        and print each value with its origin; only non-defaults unless --all\n");
}

static int cli_config_help(int argc, char **argv)
{
	bool markdown = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--markdown")) {
			markdown = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			cli_config_usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "weft config help: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	conf_help_print(stdout, markdown);
	return fflush(stdout) == 0 ? 0 : 1;
}

static int cli_config_show(int argc, char **argv)
{
	const char *file = NULL, *name = "client.admin";
	bool all = false, file_given = false;
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
	conf_dump(conf, stdout, all);
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
