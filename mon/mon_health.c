/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `health`: every check has a stable code (OSD_DOWN, PG_DEGRADED,
 * OSD_FULL, ...), a severity, a one-line summary and detail lines naming
 * the OSDs, PGs or pools concerned (`weft health detail`). Codes are listed
 * in docs/mon.md; scripts match on them, never on the wording.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "mon/mon_priv.h"

static void mon_health_vadd(json_t *checks, const char **status, const char *code, bool error,
			    json_int_t count, json_t *detail, const char *fmt, va_list ap)
{
	char summary[512];

	vsnprintf(summary, sizeof(summary), fmt, ap);
	if (error)
		*status = "HEALTH_ERR";
	else if (strcmp(*status, "HEALTH_ERR") != 0)
		*status = "HEALTH_WARN";
	if (detail == NULL)
		detail = json_array();
	/* count: how bad it is (OSDs down, PGs degraded...); a mute ends when it grows */
	if (count < 0)
		count = json_array_size(detail) > 0 ? (json_int_t)json_array_size(detail) : 1;
	json_array_append_new(checks, json_pack("{s:s, s:s, s:s, s:I, s:o}", "code", code,
						"severity", error ? "HEALTH_ERR" : "HEALTH_WARN",
						"summary", summary, "count", count, "detail",
						detail));
}

void mon_health_add(json_t *checks, const char **status, const char *code, bool error,
		    json_t *detail, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mon_health_vadd(checks, status, code, error, -1, detail, fmt, ap);
	va_end(ap);
}

void mon_health_add_n(json_t *checks, const char **status, const char *code, bool error,
		      long long count, json_t *detail, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mon_health_vadd(checks, status, code, error, count, detail, fmt, ap);
	va_end(ap);
}

json_t *mon_json_health(struct mon *mon, bool have_quorum, unsigned int nq)
{
	json_t *checks = json_array(), *detail;
	const char *status = "HEALTH_OK";
	uint32_t total, up, in;
	char f[MON_FLAGS_STR_MAX];

	mon_map_osd_counts(&mon->map, &total, &up, &in);
	if (!have_quorum) {
		mon_health_add(checks, &status, "MON_NO_QUORUM", true, NULL,
			       "no monitor quorum: %s sees no leader (a majority of monitors is "
			       "down or partitioned); the map cannot change",
			       mon->name);
	} else {
		mon_member_health(mon, checks, &status);
	}
	if (mon->map.epoch == 0 && have_quorum)
		mon_health_add(checks, &status, "MON_NO_MAP", false, NULL, "no cluster map yet");
	if (up < total) {
		detail = json_array();
		for (uint32_t i = 0; i < mon->map.max_osd; i++) {
			const struct mon_osd *o = mon_map_osd(&mon->map, i);

			if (o != NULL && !(o->state & MON_OSD_UP))
				json_array_append_new(
				    detail, json_sprintf("osd.%u (host %s) is down "
							 "since epoch %u%s",
							 i, o->host, o->down_at,
							 (o->state & MON_OSD_IN) ? "" : ", out"));
		}
		mon_health_add(checks, &status, "OSD_DOWN", false, detail, "%u/%u osds down",
			       total - up, total);
	}
	if (mon->map.flags != 0)
		mon_health_add(checks, &status, "OSDMAP_FLAGS", false, NULL, "%s flag(s) set",
			       mon_flags_str(mon->map.flags, f, sizeof(f)));
	mon_pg_health(mon, checks, &status);
	mon_crush_health(mon, checks, &status);
	mon_cap_health(mon, checks, &status);
	mon_auth_health(mon, checks, &status);
	return mon_mute_health(mon, json_pack("{s:s, s:o}", "status", status, "checks", checks));
}
