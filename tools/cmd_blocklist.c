/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft osd blocklist add INSTANCE [SECONDS] | rm INSTANCE | ls, as Ceph's
 * `ceph osd blocklist`. An INSTANCE is a libweft cluster handle's id (16 hex
 * digits; `weft vol lock ls` shows the holder's). docs/operations.md, "Blocklist".
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mon/map.h"
#include "tools/cli.h"
#include "tools/cli_mon.h"

static void cli_render_blocklist_ls(json_t *out)
{
	json_t *a = json_object_get(out, "blocklist"), *e;
	size_t i;

	json_array_foreach(a, i, e)
	{
		time_t until = (time_t)json_integer_value(json_object_get(e, "until"));
		struct tm tm;
		char when[32] = "?";

		if (gmtime_r(&until, &tm) != NULL)
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		printf("%s until %s (%llds left)\n",
		       json_string_value(json_object_get(e, "instance")), when,
		       (long long)json_integer_value(json_object_get(e, "ttl_left_sec")));
	}
	printf("listed %zu entries\n", json_array_size(a));
}

/* "blocklisting 0123456789abcdef until 2026-12-03T19:00:00Z (map epoch 42)" */
static void cli_render_blocklist_add(json_t *out)
{
	time_t until = (time_t)json_integer_value(json_object_get(out, "until"));
	struct tm tm;
	char when[32] = "?";

	if (gmtime_r(&until, &tm) != NULL)
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	printf("blocklisting %s until %s (map epoch %lld)\n",
	       json_string_value(json_object_get(out, "instance")), when,
	       (long long)json_integer_value(json_object_get(out, "epoch")));
}

static void cli_render_blocklist_rm(json_t *out)
{
	const char *inst = json_string_value(json_object_get(out, "instance"));

	if (json_is_true(json_object_get(out, "removed")))
		printf("un-blocklisting %s (map epoch %lld)\n", inst,
		       (long long)json_integer_value(json_object_get(out, "epoch")));
	else
		printf("%s isn't blocklisted\n", inst);
}

/* -1: words[0] is not "blocklist"; otherwise an exit code. */
int cli_osd_blocklist(struct cli_mon_args *a)
{
	const char *sub = a->nwords >= 2 ? a->words[1] : "";
	uint64_t inst;
	long long secs = 0;
	json_t *cmd;
	int rc;

	if (a->nwords < 1 || strcmp(a->words[0], "blocklist") != 0)
		return -1;
	if (!strcmp(sub, "ls")) {
		if (a->nwords != 2) {
			fprintf(stderr, "weft osd blocklist: usage: osd blocklist ls\n");
			return 2;
		}
		return cli_cmd_simple(a, "osd blocklist ls",
				      json_pack("{s:s}", "prefix", "osd blocklist ls"),
				      cli_render_blocklist_ls);
	}
	if (strcmp(sub, "add") != 0 && strcmp(sub, "rm") != 0) {
		fprintf(stderr,
			"weft osd blocklist: unknown subcommand '%s' (add INSTANCE "
			"[SECONDS], rm INSTANCE, ls)\n",
			sub);
		return 2;
	}
	if (a->nwords < 3 || a->nwords > (sub[0] == 'a' ? 4 : 3)) {
		fprintf(stderr, "weft osd blocklist: usage: osd blocklist %s\n",
			sub[0] == 'a' ? "add INSTANCE [SECONDS]" : "rm INSTANCE");
		return 2;
	}
	if (mon_instance_parse(a->words[2], &inst) != 0) {
		fprintf(stderr,
			"weft osd blocklist: '%s' is not a client instance (1..16 hex "
			"digits, not 0)\n",
			a->words[2]);
		return 2;
	}
	if (a->nwords == 4) {
		char *end;

		secs = strtoll(a->words[3], &end, 10);
		if (*end != '\0' || end == a->words[3] || secs < 1 || secs > 3650LL * 86400) {
			fprintf(stderr, "weft osd blocklist: SECONDS '%s' is not 1..%lld\n",
				a->words[3], 3650LL * 86400);
			return 2;
		}
	}
	cmd = json_pack("{s:s, s:s}", "prefix",
			sub[0] == 'a' ? "osd blocklist add" : "osd blocklist rm", "instance",
			a->words[2]);
	if (secs > 0)
		json_object_set_new(cmd, "seconds", json_integer(secs));
	rc = cli_cmd_simple(a, "osd blocklist", cmd,
			    sub[0] == 'a' ? cli_render_blocklist_add : cli_render_blocklist_rm);
	return rc;
}
