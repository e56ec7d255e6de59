/* SPDX-License-Identifier: Apache-2.0 */
/*
 * `pg query POOL.PG` on the OSD's admin socket (docs/recovery.md, "PG
 * states"): what this OSD's machine of the PG knows — its phase and state,
 * its own copy (info, past intervals), and as a primary every copy it
 * asked (answered or not, what each said, what each misses). The way to
 * see why a PG stays `peering` or `down`.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "admin/asok.h"
#include "osd/osd.h"
#include "osd/pg/pg.h"

static const char *osd_pg_phase_name(enum pg_phase ph)
{
	static const char *names[] = {"none", "wait_tx", "getinfo", "getlog", "active", "down"};

	return (unsigned int)ph < sizeof(names) / sizeof(names[0]) ? names[ph] : "?";
}

static void osd_pg_query_peer(struct asok_out *out, const struct pg_peer *p, bool first)
{
	asok_printf(out,
		    "%s{\"osd\": %d, \"acting\": %s, \"queried\": %s, \"answered\": %s, "
		    "\"heard\": %s",
		    first ? "" : ", ", p->osd, p->acting ? "true" : "false",
		    p->queried ? "true" : "false", p->answered ? "true" : "false",
		    p->heard ? "true" : "false");
	if (p->heard)
		asok_printf(out,
			    ", \"info\": {\"flags\": %u, \"last_update\": \"%" PRIx64
			    "\", \"last_complete\": \"%" PRIx64 "\", \"tail\": \"%" PRIx64
			    "\", \"les\": %u}",
			    p->info.flags, p->info.last_update, p->info.last_complete,
			    p->info.tail, p->info.les);
	/* act_acked false for a while: the member has not answered ACTIVATE (peers again at 5 s) */
	asok_printf(out,
		    ", \"missing\": %u, \"backfill\": %s, \"activated\": %s, \"act_acked\": %s}",
		    p->missing.n, p->backfill ? "true" : "false", p->activated ? "true" : "false",
		    p->act_acked ? "true" : "false");
}

static int osd_pg_query_cb(void *arg, const char *args, struct asok_out *out)
{
	struct osd *osd = arg;
	unsigned int pool, id;
	char st[128], tail;
	struct pg *m;

	if (sscanf(args, "%u.%x%c", &pool, &id, &tail) != 2)
		return -EINVAL;
	if (mon_map_pool(&osd->map, pool) == NULL || osd_pg_get(osd, pool, id) == NULL)
		return -ENOENT;
	m = osd_pg_get(osd, pool, id)->m;
	if (m == NULL) {
		asok_printf(out, "{\"pg\": \"%u.%x\", \"loaded\": false}", pool, id);
		return 0;
	}
	asok_printf(out,
		    "{\"pg\": \"%u.%x\", \"loaded\": true, \"primary\": %s, \"phase\": \"%s\", "
		    "\"state\": \"%s\", \"map_epoch\": %u, \"same_since\": %u, \"fence\": %u, "
		    "\"stalled\": %s, \"pi_unsure\": %s, \"pi_gap\": %s, \"acting\": [",
		    pool, id, m->primary ? "true" : "false", osd_pg_phase_name(m->phase),
		    proto_pg_state_str(m->state, st, sizeof(st)), m->map_epoch, m->same_since,
		    m->fence, m->stalled ? "true" : "false", m->pi_unsure ? "true" : "false",
		    m->pi_gap ? "true" : "false");
	for (unsigned int i = 0; i < m->nacting; i++)
		asok_printf(out, "%s%d", i ? ", " : "", m->acting[i]);
	asok_printf(out,
		    "], \"info\": {\"last_update\": \"%" PRIx64 "\", \"last_complete\": \"%" PRIx64
		    "\", \"tail\": \"%" PRIx64 "\", \"les\": %u, \"backfill\": %s, \"log\": %u}, "
		    "\"past_intervals\": [",
		    m->info.lu, m->info.lc, m->info.tail, m->info.les,
		    m->info.backfill ? "true" : "false", m->log.n);
	for (uint32_t k = 0; k < m->info.pi.n; k++) {
		const struct pg_pi_ent *iv = &m->info.pi.e[k];

		asok_printf(out, "%s{\"first\": %u, \"last\": %u, \"maybe_active\": %s, \"osds\": [",
			    k ? ", " : "", iv->first, iv->last,
			    (iv->flags & PG_PI_F_ACTIVE) ? "true" : "false");
		for (unsigned int j = 0; j < iv->n; j++)
			asok_printf(out, "%s%d", j ? ", " : "", iv->osd[j]);
		asok_printf(out, "]}");
	}
	asok_printf(out, "], \"peers\": [");
	for (unsigned int i = 0; i < m->np; i++)
		osd_pg_query_peer(out, &m->p[i], i == 0);
	asok_printf(out, "], \"missing\": %u, \"unfound\": %u, \"blocked\": [", m->missing.n,
		    m->unfound);
	for (unsigned int i = 0; i < m->nblocked; i++)
		asok_printf(out, "%s%d", i ? ", " : "", m->blocked[i]);
	asok_printf(out, "]}");
	return 0;
}

int osd_pg_query_register(struct osd *osd)
{
	return asok_register_args(osd->asok, "pg query",
				  "POOL.PG (PG in hex): this OSD's view of the PG: phase, its copy, "
				  "every copy it asked (why a PG stays peering or down)",
				  osd_pg_query_cb, osd);
}
