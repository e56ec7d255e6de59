/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft pg verify PGID... | --all: every member's copy of every object of the
 * PGs compared by version, size and a digest of the stored block checksums
 * (docs/recovery.md, "Scrub"), and the answer awaited.
 *
 * The request goes through the mons to each PG's primary with a token this
 * run draws; a PG is verified when its stats report that token. A PG that
 * is not clean verifies once it is (verify compares settled copies); a
 * request lost to a mon election or a new primary is sent again every
 * CLI_VERIFY_RESEND_MS. Exit: 0 all verified and consistent, 1 an object
 * differs or the wait ran out (--wait), 2 bad usage.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "common/clock.h"
#include "proto/proto.h"
#include "tools/cli_mon.h"

#define CLI_VERIFY_RESEND_MS 15000

struct cli_verify_pg {
	char id[32];
	bool done;
	uint64_t sent_ms;
	long long primary; /* the primary the request went to */
	long long objects, inconsistent;
};

static int cli_verify_request(struct cli_mon_sess *s, struct cli_mon_args *a,
			      struct cli_verify_pg *p, uint32_t token)
{
	char err[PROTO_ERRMSG_MAX + 1];
	json_t *out = NULL;
	int rc = cli_mon_call(s, a->timeout_ms,
			      json_pack("{s:s, s:s, s:I}", "prefix", "pg verify", "pgid", p->id,
					"token", (json_int_t)token),
			      &out, err, sizeof(err));

	if (rc == 0)
		p->primary = json_integer_value(json_object_get(out, "osd"));
	json_decref(out);
	if (rc == -ENOENT) {
		fprintf(stderr, "weft pg verify: %s\n", err);
		return rc;
	}
	/* no OSD up, queue full, mon election: asked again later */
	p->sent_ms = clock_now_ms();
	return 0;
}

/* The PGs of `pg ls`: all of them, or those named. */
static int cli_verify_list(struct cli_mon_sess *s, struct cli_mon_args *a, json_t **ls_out)
{
	char err[PROTO_ERRMSG_MAX + 1];
	int rc = cli_mon_call(s, a->timeout_ms, json_pack("{s:s}", "prefix", "pg ls"), ls_out, err,
			      sizeof(err));

	if (rc != 0)
		fprintf(stderr, "weft pg verify: pg ls: %s%s(%s)\n", err, err[0] ? " " : "",
			rc == -ETIMEDOUT ? "timed out" : strerror(-rc));
	return rc;
}

/* One pass over `pg ls`: PGs that report our token are done. */
static void cli_verify_poll(json_t *ls, struct cli_verify_pg *pgs, size_t n, uint32_t token)
{
	json_t *list = json_object_get(ls, "pg_stats"), *e;
	size_t i;

	json_array_foreach(list, i, e) {
		const char *id = json_string_value(json_object_get(e, "pgid"));

		for (size_t k = 0; id != NULL && k < n; k++) {
			struct cli_verify_pg *p = &pgs[k];

			if (p->done || strcmp(p->id, id) != 0)
				continue;
			if ((uint32_t)json_integer_value(json_object_get(e, "verify_token")) == token) {
				p->done = true;
				p->objects = json_integer_value(json_object_get(e, "objects"));
				p->inconsistent =
				    json_integer_value(json_object_get(e, "verify_inconsistent"));
			} else if (json_integer_value(json_object_get(e, "primary")) != p->primary) {
				p->sent_ms = 0; /* a new primary: it never got the request */
			}
		}
	}
}

static void cli_verify_report(const struct cli_mon_args *a, const struct cli_verify_pg *pgs,
			      size_t n, uint32_t token, double secs)
{
	long long objects = 0, bad = 0;
	size_t done = 0;
	json_t *incon = json_array(), *pending = json_array(), *out;

	for (size_t i = 0; i < n; i++) {
		if (!pgs[i].done) {
			json_array_append_new(pending, json_string(pgs[i].id));
			continue;
		}
		done++;
		objects += pgs[i].objects;
		bad += pgs[i].inconsistent;
		if (pgs[i].inconsistent)
			json_array_append_new(incon, json_pack("{s:s, s:I}", "pgid", pgs[i].id,
							       "inconsistent",
							       (json_int_t)pgs[i].inconsistent));
	}
	if (a->json) {
		out = json_pack("{s:I, s:I, s:I, s:I, s:o, s:o, s:f}", "token", (json_int_t)token,
				"pgs", (json_int_t)done, "objects", (json_int_t)objects,
				"inconsistent", (json_int_t)bad, "inconsistent_pgs", incon,
				"pending", pending, "seconds", secs);
		cli_print_json(out);
		json_decref(out);
		return;
	}
	printf("verified %zu of %zu pgs in %.1f s: %lld objects, %lld inconsistent\n", done, n,
	       secs, objects, bad);
	for (size_t i = 0; i < n; i++)
		if (pgs[i].done && pgs[i].inconsistent)
			printf("  pg %s: %lld inconsistent (weft pg repair %s)\n", pgs[i].id,
			       pgs[i].inconsistent, pgs[i].id);
		else if (!pgs[i].done)
			printf("  pg %s: not verified (not clean, or no primary up)\n", pgs[i].id);
	json_decref(incon);
	json_decref(pending);
}

int cli_pg_verify(struct cli_mon_args *a, bool all, unsigned int wait_s)
{
	struct cli_mon_sess s;
	struct cli_verify_pg *pgs = NULL;
	json_t *ls = NULL, *e;
	uint32_t token = 0;
	uint64_t t0 = clock_now_ms(), deadline = t0 + (uint64_t)wait_s * 1000;
	size_t n = 0, i, left;
	int rc, ret = 1;

	if ((all && a->nwords != 1) || (!all && a->nwords < 2)) {
		fprintf(stderr, "weft pg verify: give PGIDs or --all (try 'weft pg --help')\n");
		return 2;
	}
	rc = cli_mon_open(a, "pg verify", &s);
	if (rc != 0)
		return rc;
	while (token == 0)
		if (getrandom(&token, sizeof(token), 0) != sizeof(token))
			token = (uint32_t)(clock_now_ms() ^ (uint64_t)getpid() << 16);
	if (cli_verify_list(&s, a, &ls) != 0)
		goto out;
	pgs = calloc(json_array_size(json_object_get(ls, "pg_stats")) + (size_t)a->nwords,
		     sizeof(*pgs));
	if (pgs == NULL)
		goto out;
	if (all) {
		json_array_foreach(json_object_get(ls, "pg_stats"), i, e)
			snprintf(pgs[n++].id, sizeof(pgs[0].id), "%s",
				 json_string_value(json_object_get(e, "pgid")));
	} else {
		for (int w = 1; w < a->nwords; w++)
			snprintf(pgs[n++].id, sizeof(pgs[0].id), "%s", a->words[w]);
	}
	if (n == 0) {
		fprintf(stderr, "weft pg verify: the cluster has no PGs\n");
		goto out;
	}
	for (;;) {
		uint64_t now = clock_now_ms();

		left = 0;
		for (i = 0; i < n; i++) {
			if (pgs[i].done)
				continue;
			left++;
			if ((pgs[i].sent_ms == 0 || now - pgs[i].sent_ms >= CLI_VERIFY_RESEND_MS) &&
			    cli_verify_request(&s, a, &pgs[i], token) != 0)
				goto out;
		}
		if (left == 0 || now >= deadline)
			break;
		usleep(500 * 1000);
		json_decref(ls);
		ls = NULL;
		if (cli_verify_list(&s, a, &ls) == 0)
			cli_verify_poll(ls, pgs, n, token);
	}
	cli_verify_report(a, pgs, n, token, (double)(clock_now_ms() - t0) / 1000.0);
	ret = 0;
	for (i = 0; i < n; i++)
		if (!pgs[i].done || pgs[i].inconsistent)
			ret = 1;
	if (left)
		fprintf(stderr, "weft pg verify: %zu pgs not verified within %u s\n", left, wait_s);
out:
	free(pgs);
	json_decref(ls);
	cli_mon_close(&s);
	return ret;
}
