/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft auth: the monitors' auth database, in the style of `ceph auth`.
 * Entity names and caps are checked here first (exit 2 with one line), and
 * again by the monitor. Plain output of get, get-or-create and rotate is a
 * keyring section, so `weft auth get client.x > x.keyring` makes a keyring.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "auth/caps.h"
#include "auth/key.h"
#include "tools/cli.h"
#include "tools/cli_mon.h"

static void cli_auth_render_ent(json_t *e)
{
	json_t *caps = json_object_get(e, "caps");
	const char *svc;
	json_t *v;

	printf("[%s]\n\tkey = %s\n", json_string_value(json_object_get(e, "entity")),
	       json_string_value(json_object_get(e, "key")));
	json_object_foreach(caps, svc, v)
		printf("\tcaps %s = \"%s\"\n", svc, json_string_value(v));
}

static void cli_auth_render_ls(json_t *out)
{
	json_t *a = json_object_get(out, "auth"), *e;
	size_t i;

	json_array_foreach(a, i, e) {
		if (i > 0)
			printf("\n");
		cli_auth_render_ent(e);
	}
}

static void cli_auth_render_key(json_t *out)
{
	printf("%s\n", json_string_value(json_object_get(out, "key")));
}

static void cli_auth_render_caps(json_t *out)
{
	printf("updated caps for %s\n", json_string_value(json_object_get(out, "entity")));
}

static void cli_auth_render_rm(json_t *out)
{
	printf("removed %s\n", json_string_value(json_object_get(out, "entity")));
}

/* The service keys that seal tickets: ids, states, times and fingerprints (never a key). */
static void cli_auth_render_svc(json_t *out)
{
	json_t *a = json_object_get(out, "keys"), *e;
	size_t i;

	printf("ticket ttl %llds, rotate every %llds, retired keys open tickets for %llds\n",
	       (long long)json_integer_value(json_object_get(out, "ticket_ttl_sec")),
	       (long long)json_integer_value(json_object_get(out, "rotate_every_sec")),
	       (long long)json_integer_value(json_object_get(out, "grace_sec")));
	printf("%-6s %-8s %-17s %s\n", "ID", "STATE", "FINGERPRINT", "SINCE");
	json_array_foreach(a, i, e) {
		const char *state = json_string_value(json_object_get(e, "state"));
		json_t *since = json_object_get(e, !strcmp(state, "retired")   ? "retired"
						   : !strcmp(state, "current") ? "activated"
									       : "created");
		char when[32] = "-";
		time_t t = (time_t)json_integer_value(since);
		struct tm tm;

		if (json_is_integer(since) && gmtime_r(&t, &tm) != NULL)
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		printf("%-6lld %-8s %-17s %s\n",
		       (long long)json_integer_value(json_object_get(e, "id")), state,
		       json_string_value(json_object_get(e, "fingerprint")), when);
	}
}

static int cli_auth_usage_err(const char *fmt, const char *arg)
{
	fprintf(stderr, "weft auth: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	return 2;
}

int cli_auth_main(int argc, char **argv)
{
	static const struct {
		const char *sub;
		int min, max; /* words after the subcommand */
		bool caps;
		void (*render)(json_t *);
	} subs[] = {
		{"ls", 0, 0, false, cli_auth_render_ls},
		{"get", 1, 1, false, cli_auth_render_ent},
		{"print-key", 1, 1, false, cli_auth_render_key},
		{"get-or-create", 1, 1 + 2 * AUTH_SVC_COUNT, true, cli_auth_render_ent},
		{"caps", 3, 1 + 2 * AUTH_SVC_COUNT, true, cli_auth_render_caps},
		{"rm", 1, 1, false, cli_auth_render_rm},
		{"del", 1, 1, false, cli_auth_render_rm},
		{"rotate", 1, 1, false, cli_auth_render_ent},
		{"service-keys", 0, 0, false, cli_auth_render_svc},
	};
	struct cli_mon_args a;
	struct auth_entity ent;
	struct auth_caps caps;
	char why[400], prefix[64];
	json_t *cmd, *arr;
	size_t s;
	int rc = cli_mon_parse(argc - 1, argv + 1, &a), n;

	if (rc != 0)
		return rc > 0 ? 0 : 2;
	if (a.nwords == 0)
		return cli_auth_usage_err(
		    "%s", "a subcommand is needed: ls, get, print-key, "
			  "get-or-create, caps, rm, rotate, service-keys (weft auth --help)");
	for (s = 0; s < sizeof(subs) / sizeof(subs[0]); s++)
		if (!strcmp(a.words[0], subs[s].sub))
			break;
	if (s == sizeof(subs) / sizeof(subs[0]))
		return cli_auth_usage_err("unknown subcommand '%s' (ls, get, print-key, "
					  "get-or-create, caps, rm, rotate, service-keys)",
					  a.words[0]);
	n = a.nwords - 1;
	if (n < subs[s].min || n > subs[s].max) {
		fprintf(stderr, "weft auth %s: usage: weft auth %s%s\n", subs[s].sub, subs[s].sub,
			subs[s].min == 0 ? ""
			: subs[s].caps	 ? " ENTITY SERVICE 'CAPS' [SERVICE 'CAPS']"
					 : " ENTITY");
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "auth %s", subs[s].sub);
	cmd = json_pack("{s:s}", "prefix", prefix);
	if (n >= 1) {
		if (auth_entity_parse(a.words[1], &ent, why, sizeof(why)) != 0) {
			json_decref(cmd);
			return cli_auth_usage_err("%s", why);
		}
		json_object_set_new(cmd, "entity", json_string(ent.name));
	}
	if (subs[s].caps) {
		if (auth_caps_parse_args(&caps, n - 1, (char *const *)&a.words[2], why,
					 sizeof(why)) != 0) {
			json_decref(cmd);
			return cli_auth_usage_err("%s", why);
		}
		arr = json_array();
		for (int i = 2; i < a.nwords; i++)
			json_array_append_new(arr, json_string(a.words[i]));
		json_object_set_new(cmd, "caps", arr);
	}
	return cli_cmd_simple(&a, prefix, cmd, subs[s].render);
}
