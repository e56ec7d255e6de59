/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The OSD lifecycle commands of the CLI (docs/operations.md, "OSD
 * lifecycle"): osd reweight, osd crush reweight, osd rm, osd purge,
 * osd safe-to-destroy and osd ok-to-stop. The monitors check everything
 * again; the CLI checks what it can before it sends anything.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"
#include "tools/cli.h"
#include "tools/cli_mon.h"

static int cli_life_id(const char *what, const char *s, long *id_out)
{
	const char *p = !strncmp(s, "osd.", 4) ? s + 4 : s;
	char *end;
	long id = strtol(p, &end, 10);

	if (*p == '\0' || *end != '\0' || id < 0 || id > 65535) {
		fprintf(stderr, "weft %s: '%s' is not an osd id (N or osd.N)\n", what, s);
		return -1;
	}
	*id_out = id;
	return 0;
}

static int cli_life_weight(const char *what, const char *s, double max, double *w_out)
{
	char *end;
	double w = strtod(s, &end);

	if (end == s || *end != '\0' || !isfinite(w) || w < 0 || w > max) {
		fprintf(stderr, "weft %s: the weight must be a number in 0..%g, not '%s'\n", what,
			max, s);
		return -1;
	}
	*w_out = w;
	return 0;
}

/*
 * safe-to-destroy / ok-to-stop: the answer (JSON with --format json), and
 * exit 1 with the reason on stderr when it is no.
 */
static int cli_life_ask(struct cli_mon_args *a, const char *prefix)
{
	const char *key = !strcmp(prefix, "osd ok-to-stop") ? "ok_to_stop" : "safe_to_destroy";
	char errmsg[PROTO_ERRMSG_MAX + 1], who[256] = "";
	json_t *ids = json_array(), *out = NULL, *v;
	struct cli_mon_sess s;
	size_t len = 0, i;
	bool yes;
	int rc;

	for (int k = 1; k < a->nwords; k++) {
		long id;

		if (cli_life_id(prefix, a->words[k], &id) != 0) {
			json_decref(ids);
			return 2;
		}
		json_array_append_new(ids, json_integer(id));
	}
	rc = cli_mon_open(a, prefix, &s);
	if (rc != 0) {
		json_decref(ids);
		return rc;
	}
	rc = cli_mon_call(&s, a->timeout_ms, json_pack("{s:s, s:o}", "prefix", prefix, "ids", ids),
			  &out, errmsg, sizeof(errmsg));
	cli_mon_close(&s);
	if (rc != 0) {
		fprintf(stderr, "weft %s: %s%s(%s)\n", prefix, errmsg, errmsg[0] ? " " : "",
			rc == -ETIMEDOUT ? "timed out" : strerror(-rc));
		return 1;
	}
	yes = json_is_true(json_object_get(out, key));
	json_array_foreach(json_object_get(out, "osds"), i, v)
		len += (size_t)snprintf(who + len, len < sizeof(who) ? sizeof(who) - len : 0,
					"%sosd.%lld", i ? "," : "", json_integer_value(v));
	if (a->json)
		cli_print_json(out);
	else if (yes && !strcmp(key, "ok_to_stop"))
		printf("%s: ok to stop: every pg they serve (%lld) keeps min_size up replicas and "
		       "is active and not degraded\n",
		       who, json_integer_value(json_object_get(out, "touched_pgs")));
	else if (yes)
		printf("%s: safe to destroy: no pg maps to them and all %lld pgs are "
		       "active+clean\n",
		       who, json_integer_value(json_object_get(out, "num_pgs")));
	if (!yes && !a->json)
		fprintf(stderr, "weft %s: %s: not %s: %s\n", prefix, who,
			!strcmp(key, "ok_to_stop") ? "ok to stop" : "safe to destroy",
			json_string_value(json_object_get(out, "reason")));
	json_decref(out);
	if (fflush(stdout) != 0)
		return 1;
	return yes ? 0 : 1;
}

int cli_osd_life(struct cli_mon_args *a)
{
	const char *sub = a->words[0];
	bool crush = !strcmp(sub, "crush") && a->nwords >= 2 && !strcmp(a->words[1], "reweight");
	char prefix[48];
	json_t *cmd;
	double w;
	long id;
	int rc;

	if (crush) {
		snprintf(prefix, sizeof(prefix), "osd crush reweight");
		if (a->nwords != 4) {
			fprintf(stderr, "weft %s: want osd.N and a weight (weft %s osd.3 1.5)\n",
				prefix, prefix);
			return 2;
		}
		if (cli_life_id(prefix, a->words[2], &id) != 0 ||
		    cli_life_weight(prefix, a->words[3], 65535, &w) != 0)
			return 2;
		rc = cli_cmd_simple(a, prefix,
				    json_pack("{s:s, s:i, s:f}", "prefix", prefix, "id", id, "weight", w),
				    cli_render_none);
		if (rc == 0 && !a->json)
			printf("reweighted item osd.%ld to %g in the placement tree\n", id, w);
		return rc;
	}
	snprintf(prefix, sizeof(prefix), "osd %s", sub);
	if (!strcmp(sub, "safe-to-destroy") || !strcmp(sub, "ok-to-stop")) {
		if (a->nwords < 2) {
			fprintf(stderr, "weft %s: give one or more OSD ids\n", prefix);
			return 2;
		}
		return cli_life_ask(a, prefix);
	}
	if (!strcmp(sub, "reweight")) {
		if (a->nwords != 3) {
			fprintf(stderr, "weft osd reweight: want an id and a weight in 0..1 (weft osd "
				"reweight 3 0.8)\n");
			return 2;
		}
		if (cli_life_id(prefix, a->words[1], &id) != 0 ||
		    cli_life_weight(prefix, a->words[2], 1.0, &w) != 0)
			return 2;
		rc = cli_cmd_simple(a, prefix,
				    json_pack("{s:s, s:i, s:f}", "prefix", prefix, "id", id, "weight", w),
				    cli_render_none);
		if (rc == 0 && !a->json)
			printf("reweighted osd.%ld to %g\n", id, w);
		return rc;
	}
	if (strcmp(sub, "rm") != 0 && strcmp(sub, "purge") != 0)
		return -1;
	if (a->nwords != 2) {
		fprintf(stderr, "weft %s: want one OSD id\n", prefix);
		return 2;
	}
	if (cli_life_id(prefix, a->words[1], &id) != 0)
		return 2;
	if (!strcmp(sub, "purge") && !a->mean_it) {
		fprintf(stderr, "weft osd purge: this removes osd.%ld from the map and the placement "
			"tree for good; pass --yes-i-really-mean-it\n", id);
		return 2;
	}
	cmd = json_pack("{s:s, s:i}", "prefix", prefix, "id", id);
	if (!strcmp(sub, "purge")) {
		json_object_set_new(cmd, "yes_i_really_mean_it", json_true());
		json_object_set_new(cmd, "force", json_boolean(a->force));
	}
	rc = cli_cmd_simple(a, prefix, cmd, cli_render_none);
	if (rc == 0 && !a->json)
		printf("%s osd.%ld\n", !strcmp(sub, "rm") ? "removed" : "purged", id);
	return rc;
}
