/* SPDX-License-Identifier: Apache-2.0 */
/* Text rendering of the monitors' JSON answers (weft status, osd tree, ...). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "tools/cli_mon.h"

static const char *cli_str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s != NULL ? s : "";
}

static long long cli_int(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

void cli_render_none(json_t *out)
{
	(void)out;
}

/* The mute of code in a health answer, or NULL. */
static json_t *cli_mute_of(json_t *h, const char *code)
{
	size_t i;
	json_t *m;

	json_array_foreach(json_object_get(h, "mutes"), i, m)
		if (!strcmp(cli_str(m, "code"), code))
			return m;
	return NULL;
}

/* "(muted)", "(muted, sticky, 9m 58s left)" */
static void cli_mute_str(json_t *m, char *buf, size_t cap)
{
	json_t *left = json_object_get(m, "ttl_left_sec");
	long long s = json_integer_value(left);
	char t[48] = "";

	if (json_is_integer(left))
		snprintf(t, sizeof(t), s >= 3600 ? ", %lldh %lldm left" : ", %lldm %llds left",
			 s >= 3600 ? s / 3600 : s / 60, s >= 3600 ? s % 3600 / 60 : s % 60);
	snprintf(buf, cap, "(muted%s%s)", json_is_true(json_object_get(m, "sticky")) ? ", sticky" : "",
		 t);
}

/* One line per check, "CODE: summary", then its detail lines when asked. */
static void cli_render_checks(json_t *h, const char *indent, bool detail)
{
	size_t i, j;
	json_t *c, *d;

	json_array_foreach(json_object_get(h, "checks"), i, c) {
		char mute[96] = "";

		if (json_is_true(json_object_get(c, "muted"))) {
			mute[0] = ' ';
			cli_mute_str(cli_mute_of(h, cli_str(c, "code")), mute + 1, sizeof(mute) - 1);
		}
		printf("%s%s: %s%s\n", indent, cli_str(c, "code"), cli_str(c, "summary"), mute);
		if (!detail)
			continue;
		json_array_foreach(json_object_get(c, "detail"), j, d)
			printf("%s    %s\n", indent, json_string_value(d));
	}
}

/* "HEALTH_OK (muted: OSD_DOWN PG_DEGRADED)", as ceph -s */
static void cli_render_status_line(json_t *h)
{
	size_t i, n = 0;
	json_t *c;

	printf("%s", cli_str(h, "status"));
	json_array_foreach(json_object_get(h, "checks"), i, c)
		if (json_is_true(json_object_get(c, "muted")))
			printf("%s%s", n++ ? " " : " (muted: ", cli_str(c, "code"));
	printf("%s\n", n ? ")" : "");
}

/* Mutes whose check is not raised (sticky ones, waiting): shown so they are not forgotten. */
static void cli_render_idle_mutes(json_t *h, const char *indent)
{
	size_t i;
	json_t *m;

	json_array_foreach(json_object_get(h, "mutes"), i, m) {
		char buf[96];

		if (json_is_true(json_object_get(m, "active")))
			continue;
		cli_mute_str(m, buf, sizeof(buf));
		printf("%s%s %s, not raised now\n", indent, cli_str(m, "code"), buf);
	}
}

void cli_render_health(json_t *h)
{
	cli_render_status_line(h);
	cli_render_checks(h, "    ", false);
	cli_render_idle_mutes(h, "    ");
}

void cli_render_health_detail(json_t *h)
{
	cli_render_status_line(h);
	cli_render_checks(h, "    ", true);
	cli_render_idle_mutes(h, "    ");
}

static void cli_quorum_line(json_t *m, char *buf, size_t cap)
{
	size_t i, off = 0;
	json_t *r;

	buf[0] = '\0';
	json_array_foreach(json_object_get(m, "quorum_names"), i, r)
		off += (size_t)snprintf(buf + off, off < cap ? cap - off : 0, "%s%s",
					i ? "," : "", json_string_value(r) ? json_string_value(r) : "?");
	if (off == 0)
		json_array_foreach(json_object_get(m, "quorum"), i, r)
			off += (size_t)snprintf(buf + off, off < cap ? cap - off : 0, "%s%lld",
						i ? "," : "", json_integer_value(r));
	if (off == 0)
		snprintf(buf, cap, "none");
}

static void cli_render_usage(json_t *u)
{
	char a[32], b[32], t[32];
	size_t i, n = 0;
	json_t *p;

	if (u == NULL)
		return;
	printf("    usage: %s used, %s / %s avail; %s stored in %lld objects\n",
	       cli_bytes_str((unsigned long long)cli_int(u, "used_bytes"), a, sizeof(a)),
	       cli_bytes_str((unsigned long long)cli_int(u, "avail_bytes"), b, sizeof(b)),
	       cli_bytes_str((unsigned long long)cli_int(u, "total_bytes"), t, sizeof(t)),
	       cli_bytes_str((unsigned long long)cli_int(u, "stored_bytes"), a, sizeof(a)),
	       cli_int(u, "objects"));
	json_array_foreach(json_object_get(u, "pools"), i, p) {
		if (n++ == 8) { /* a short view: weft df has them all */
			printf("           ... %zu more pools (weft df)\n",
			       json_array_size(json_object_get(u, "pools")) - 8);
			break;
		}
		printf("           pool %-16s %s, %lld objects\n", cli_str(p, "name"),
		       cli_bytes_str((unsigned long long)cli_int(p, "stored"), a, sizeof(a)),
		       cli_int(p, "objects"));
	}
	if (cli_int(u, "purging_objects") > 0)
		printf("    purge: %lld objects of removed pools still to delete\n",
		       cli_int(u, "purging_objects"));
}

void cli_render_status(json_t *s)
{
	json_t *h = json_object_get(s, "health"), *m = json_object_get(s, "monmap");
	json_t *o = json_object_get(s, "osdmap"), *pools = json_object_get(s, "pools");
	char q[64];

	cli_quorum_line(m, q, sizeof(q));
	printf("  cluster:\n    health: ");
	cli_render_status_line(h);
	cli_render_checks(h, "            ", false);
	cli_render_idle_mutes(h, "            ");
	printf("\n  services:\n");
	if (json_is_true(json_object_get(m, "have_quorum")))
		printf("    mon: %zu daemons, quorum %s, leader mon.%s rank %lld (%s), term %lld\n",
		       json_array_size(json_object_get(m, "members")), q, cli_str(m, "leader"),
		       cli_int(m, "leader_rank"), cli_str(m, "leader_addr"), cli_int(m, "term"));
	else
		printf("    mon: %zu daemons, NO QUORUM (answered by %s)\n",
		       json_array_size(json_object_get(m, "members")), cli_str(m, "answered_by"));
	printf("    osd: %lld osds: %lld up, %lld in%s%s\n", cli_int(o, "num_osds"),
	       cli_int(o, "num_up_osds"), cli_int(o, "num_in_osds"),
	       cli_str(o, "flags")[0] ? "; flags " : "", cli_str(o, "flags"));
	printf("\n  data:\n    map:   epoch %lld\n    pools: %zu pools, %lld pgs\n",
	       cli_int(o, "epoch"), json_array_size(pools),
	       cli_int(json_object_get(s, "pgmap"), "num_pgs"));
	cli_render_usage(json_object_get(s, "usage"));
	cli_render_pgmap(json_object_get(s, "pgmap"));
}

void cli_render_mon_stat(json_t *m)
{
	char q[64];
	size_t i;
	json_t *p;

	cli_quorum_line(m, q, sizeof(q));
	if (json_is_true(json_object_get(m, "have_quorum")))
		printf("%zu mons, leader mon.%s rank %lld (%s), term %lld, quorum %s, map epoch "
		       "%lld\n",
		       json_array_size(json_object_get(m, "members")), cli_str(m, "leader"),
		       cli_int(m, "leader_rank"), cli_str(m, "leader_addr"), cli_int(m, "term"), q,
		       cli_int(m, "epoch"));
	else
		printf("%zu mons, NO QUORUM (no leader seen by %s), term %lld, map epoch %lld\n",
		       json_array_size(json_object_get(m, "members")), cli_str(m, "answered_by"),
		       cli_int(m, "term"), cli_int(m, "epoch"));
	json_array_foreach(json_object_get(m, "members"), i, p)
		printf("  mon.%-8s id %-3lld %-22s raft %-22s %-8s %s\n", cli_str(p, "name"),
		       cli_int(p, "id"), cli_str(p, "addr"), cli_str(p, "raft_addr"),
		       cli_str(p, "role"), cli_str(p, "state"));
}

/* The placement tree, depth first (bucket ids < 0; "*" marks buckets made up from host names). */
void cli_render_osd_tree(json_t *t)
{
	json_t *n;
	size_t i;

	printf("%-6s %-10s %-30s %-7s %-4s %s\n", "ID", "WEIGHT", "TYPE NAME", "STATUS", "IN",
	       "REWEIGHT");
	json_array_foreach(json_object_get(t, "nodes"), i, n) {
		char name[128];
		int depth = (int)cli_int(n, "depth");
		bool osd = !strcmp(cli_str(n, "type"), "osd");

		if (osd)
			snprintf(name, sizeof(name), "%*sosd.%lld", 4 * depth, "", cli_int(n, "id"));
		else
			snprintf(name, sizeof(name), "%*s%s %s%s", 4 * depth, "", cli_str(n, "type"),
				 cli_str(n, "name"),
				 json_is_true(json_object_get(n, "implicit")) ? " *" : "");
		printf("%-6lld %-10.5f %-30s %-7s %-4s", cli_int(n, "id"),
		       json_real_value(json_object_get(n, "weight")), name,
		       osd ? (json_is_true(json_object_get(n, "up")) ? "up" : "down") : "",
		       osd ? (json_is_true(json_object_get(n, "in")) ? "in" : "out") : "");
		if (osd)
			printf(" %.5f", json_real_value(json_object_get(n, "reweight")));
		printf("\n");
	}
}

void cli_render_balancer_status(json_t *b)
{
	printf("mode %s (%s), %lld upmap items\n", cli_str(b, "mode"),
	       json_is_true(json_object_get(b, "active")) ? "active" : "inactive",
	       cli_int(b, "upmap_items"));
	printf("last round: %s (%lld s ago)\n", cli_str(b, "last_result"),
	       cli_int(b, "last_round_ago_s"));
	printf("every %lld s, at most %lld%% of replicas moving, target +-%lld%% (or 1 PG)\n",
	       cli_int(b, "interval_s"), cli_int(b, "max_misplaced_pct"), cli_int(b, "deviation_pct"));
}

void cli_render_balancer_eval(json_t *b)
{
	json_t *p;
	size_t i;

	printf("epoch %lld, %lld upmap items\n", cli_int(b, "epoch"), cli_int(b, "upmap_items"));
	json_array_foreach(json_object_get(b, "pools"), i, p)
		printf("pool '%s': worst OSD %.1f%% off its share, %lld OSDs outside the bound, a "
		       "round would move %lld replicas, %lld items no longer apply\n",
		       cli_str(p, "pool"), json_real_value(json_object_get(p, "max_deviation_pct")),
		       cli_int(p, "osds_outside"), cli_int(p, "balancer_would_move"),
		       cli_int(p, "invalid_items"));
}

static void cli_render_pools(json_t *pools)
{
	size_t i;
	json_t *p;

	json_array_foreach(pools, i, p)
		printf("pool %lld '%s' size %lld min_size %lld pg_num %lld\n", cli_int(p, "id"),
		       cli_str(p, "name"), cli_int(p, "size"), cli_int(p, "min_size"),
		       cli_int(p, "pg_num"));
}

void cli_render_osd_dump(json_t *d)
{
	size_t i;
	json_t *o;

	printf("epoch %lld\nflags %s\n", cli_int(d, "epoch"), cli_str(d, "flags"));
	printf("full_ratio %g\nbackfillfull_ratio %g\nnearfull_ratio %g\n",
	       json_number_value(json_object_get(d, "full_ratio")),
	       json_number_value(json_object_get(d, "backfillfull_ratio")),
	       json_number_value(json_object_get(d, "nearfull_ratio")));
	cli_render_pools(json_object_get(d, "pools"));
	json_array_foreach(json_object_get(d, "osds"), i, o)
		printf("osd.%lld %s %s%s%s weight %.5f reweight %.5f up_from %lld down_at %lld public "
		       "%s cluster %s host %s uuid %s\n",
		       cli_int(o, "id"), json_is_true(json_object_get(o, "up")) ? "up" : "down",
		       json_is_true(json_object_get(o, "in")) ? "in" : "out",
		       cli_str(o, "fullness")[0] ? " " : "", cli_str(o, "fullness"),
		       json_real_value(json_object_get(o, "weight")),
		       json_real_value(json_object_get(o, "reweight")), cli_int(o, "up_from"),
		       cli_int(o, "down_at"), cli_str(o, "public_addr"), cli_str(o, "cluster_addr"),
		       cli_str(o, "host"), cli_str(o, "uuid"));
}

void cli_render_pool_detail(json_t *l)
{
	char b[32];
	size_t i;
	json_t *p;

	json_array_foreach(json_object_get(l, "pools"), i, p) {
		printf("pool %lld '%s' size %lld min_size %lld pg_num %lld failure_domain %s root %s",
		       cli_int(p, "id"), cli_str(p, "name"), cli_int(p, "size"),
		       cli_int(p, "min_size"), cli_int(p, "pg_num"), cli_str(p, "failure_domain"),
		       cli_str(p, "root"));
		if (cli_int(p, "quota_max_bytes") > 0)
			printf(" max_bytes %s",
			       cli_bytes_str((unsigned long long)cli_int(p, "quota_max_bytes"), b,
					     sizeof(b)));
		if (cli_int(p, "quota_max_objects") > 0)
			printf(" max_objects %lld", cli_int(p, "quota_max_objects"));
		printf("%s\n", json_is_true(json_object_get(p, "full")) ? " full" : "");
	}
}

void cli_render_pool_ls(json_t *l)
{
	size_t i;
	json_t *p;

	json_array_foreach(json_object_get(l, "pools"), i, p)
		printf("%s\n", cli_str(p, "name"));
}
