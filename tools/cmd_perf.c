/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft perf dump TYPE.ID | weft daemon TYPE.ID COMMAND...: ask a daemon's
 * admin socket (admin/asok.h). The socket path is --asok PATH, or the
 * daemon's admin_socket option read from the conf file as the daemon reads
 * it ([global], [osd], [osd.N], then WEFT_* variables).
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "admin/asok.h"
#include "common/conf.h"
#include "tools/cli.h"
#include "weft/weft.h"

#define CLI_PERF_DEFAULT_FILE "/etc/weft/weft.conf"

static void cli_perf_usage(FILE *out)
{
	fprintf(out,
		"usage: weft perf dump TYPE.ID [options]\n"
		"       weft daemon TYPE.ID COMMAND... [options]   (help, perf dump, config show,\n"
		"                                                  ops in flight)\n"
		"  -c, --conf FILE     conf file (default %s) giving admin_socket\n"
		"  --asok PATH         the admin socket itself\n"
		"  --timeout SECS      wait at most this long for the reply (default 10)\n"
		"  --format FMT        json (default: the daemon's reply as it is) or plain\n"
		"                      (one 'key.sub.key value' line per number or string)\n",
		CLI_PERF_DEFAULT_FILE);
}

/* plain: every leaf of the reply on a line of its own, its path dotted. */
static void cli_perf_plain(const char *path, json_t *v)
{
	char sub[512];
	const char *k;
	size_t i;
	json_t *c;

	if (json_is_object(v)) {
		json_object_foreach(v, k, c) {
			snprintf(sub, sizeof(sub), "%s%s%s", path, path[0] ? "." : "", k);
			cli_perf_plain(sub, c);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, c) {
			snprintf(sub, sizeof(sub), "%s%s%zu", path, path[0] ? "." : "", i);
			cli_perf_plain(sub, c);
		}
	} else {
		char *text = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY);

		printf("%s %s\n", path, text != NULL ? text : json_string_value(v));
		free(text);
	}
}

int cli_perf_main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"conf", required_argument, NULL, 'c'},    {"asok", required_argument, NULL, 'a'},
	    {"timeout", required_argument, NULL, 't'}, {"format", required_argument, NULL, 'f'},
	    {"help", no_argument, NULL, 'h'},	       {NULL, 0, NULL, 0},
	};
	bool daemon_cmd = !strcmp(argv[0], "daemon");
	const char *file = NULL, *asok = NULL, *who;
	char cmd[256] = "", *reply = NULL, *end;
	double timeout = 10;
	bool json = true;
	struct conf *conf = NULL;
	int c, rc, first;

	/* GNU getopt permutes: options may follow the words, which end up last */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			file = optarg;
			break;
		case 'a':
			asok = optarg;
			break;
		case 't':
			timeout = strtod(optarg, &end);
			if (*end != '\0' || timeout <= 0 || timeout > 3600) {
				fprintf(stderr, "weft %s: bad --timeout '%s'\n", argv[0], optarg);
				return 2;
			}
			break;
		case 'f':
			if (cli_format_parse(daemon_cmd ? "weft daemon" : "weft perf", optarg,
					     &json) != 0)
				return 2;
			break;
		case 'h':
			cli_perf_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "weft %s: unknown or incomplete option '%s' (see --help)\n",
				argv[0], argv[optind - 1]);
			return 2;
		}
	}
	if (!daemon_cmd) {
		if (optind + 2 != argc || strcmp(argv[optind], "dump") != 0) {
			fprintf(stderr, "weft perf: expected 'perf dump TYPE.ID' (see --help)\n");
			return 2;
		}
		who = argv[optind + 1];
		snprintf(cmd, sizeof(cmd), "perf dump");
	} else {
		if (optind + 2 > argc) {
			fprintf(stderr,
				"weft daemon: expected 'daemon TYPE.ID COMMAND' (see --help)\n");
			return 2;
		}
		who = argv[optind];
		for (int i = optind + 1, n = 0; i < argc; i++) {
			first = n == 0;
			n += snprintf(cmd + n, sizeof(cmd) - n, "%s%s", first ? "" : " ", argv[i]);
			if ((size_t)n >= sizeof(cmd)) {
				fprintf(stderr, "weft daemon: command too long\n");
				return 2;
			}
		}
	}
	if (strchr(who, '.') == NULL) {
		fprintf(stderr, "weft %s: '%s' is not TYPE.ID (osd.0, mon.a)\n", argv[0], who);
		return 2;
	}
	if (asok == NULL) {
		if (file == NULL && access(CLI_PERF_DEFAULT_FILE, F_OK) == 0)
			file = CLI_PERF_DEFAULT_FILE;
		if (conf_create(who, &conf) != 0)
			return 2;
		if ((file != NULL && conf_load_file(conf, file) != 0) ||
		    conf_apply_env(conf) != 0) {
			conf_destroy(conf);
			return 2;
		}
		asok = conf_get_str(conf, CONF_ADMIN_SOCKET);
		if (asok == NULL || asok[0] == '\0') {
			fprintf(stderr, "weft %s: %s has admin_socket disabled\n", argv[0], who);
			conf_destroy(conf);
			return 1;
		}
	}
	rc = asok_request(asok, cmd, NULL, (int)(timeout * 1000), &reply);
	if (rc != 0) {
		fprintf(stderr, "weft %s: %s admin socket %s: %s\n", argv[0], who, asok,
			weft_strerror(rc));
		conf_destroy(conf);
		return 1;
	}
	rc = strncmp(reply, "{\"error\": ", 10) == 0 ? 1 : 0;
	if (rc != 0) {
		/* a failed command is an error: one line on stderr */
		json_t *e = json_loads(reply, 0, NULL);
		const char *msg = json_string_value(json_object_get(e, "error"));

		fprintf(stderr, "weft %s: %s: %s\n", argv[0], who, msg != NULL ? msg : reply);
		json_decref(e);
	} else if (json) {
		printf("%s\n", reply);
	} else {
		json_t *v = json_loads(reply, JSON_DECODE_ANY, NULL);

		if (v != NULL)
			cli_perf_plain("", v);
		else
			printf("%s\n", reply);
		json_decref(v);
	}
	free(reply);
	conf_destroy(conf);
	return rc;
}
