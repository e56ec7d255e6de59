/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft-osd admin socket: perf dump, ops in flight, config show, help.
 * Polled from the reactor (osd_main.c): its fd joins the idle poll and
 * osd_admin_poll also runs from the 100 ms tick, so a reactor busy with
 * I/O (which never sleeps in poll) still answers within a tick.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/conf_runtime.h"
#include "common/log.h"
#include "osd/osd.h"
#include "osd/osd_perf.h"
#include "osd/osd_pg.h"
#include "placement/plc_map.h"

static const char *osd_admin_state(enum osd_op_state s)
{
	switch (s) {
	case OSD_OP_NEW:
		return "queued";
	case OSD_OP_PULLING:
		return "pulling";
	case OSD_OP_READY:
		return "ready";
	case OSD_OP_SUBMITTED:
		return "committing";
	case OSD_OP_READING:
		return "reading";
	case OSD_OP_SENDING:
		return "sending";
	case OSD_OP_DONE:
		return "done";
	}
	return "?";
}

/*
 * perf dump: osd_perf.c's object, plus the recovery throttle's state as
 * its last member "recovery" (osd_push.c owns that state).
 */
static int osd_admin_perf_cb(void *arg, struct asok_out *out)
{
	size_t start = out->len;
	int rc = osd_perf_dump(arg, out);

	if (rc != 0 || out->oom || out->len == start || out->buf[out->len - 1] != '}')
		return rc;
	out->len--; /* reopen the object */
	asok_printf(out, ", \"recovery\": ");
	osd_push_perf(arg, out);
	asok_printf(out, "}");
	return 0;
}

#define OSD_ADMIN_OPS_MAX 1000 /* listed; the count covers all */

static int osd_admin_ops_cb(void *arg, struct asok_out *out)
{
	struct osd_pg *pg;
	struct osd *osd = arg;
	uint64_t now = clock_now_ms();
	unsigned int n = 0;

	asok_printf(out, "{\"ops\": [");
	osd_pg_foreach(osd, pg) {
		for (struct osd_op *op = pg->head; op; op = op->next, n++) {
			if (n >= OSD_ADMIN_OPS_MAX)
				continue;
			asok_printf(out,
				    "%s{\"pg\": \"%u.%x\", \"tid\": %" PRIu64
				    ", \"op\": %u, \"state\": \"%s\", \"offset\": %" PRIu64
				    ", \"length\": %" PRIu64 ", \"age_ms\": %" PRIu64
				    ", \"blocked\": %s, \"repl_wait\": %u, \"name\": ",
				    n ? ", " : "", pg->pool, pg->pg, op->tid, op->op,
				    osd_admin_state(op->state), op->offset, op->length,
				    now - op->start_ms, op->blocked ? "true" : "false",
				    (unsigned int)__builtin_popcount(op->repl_wait));
			asok_put_str(out, op->name);
			asok_printf(out, "}");
		}
	}
	asok_printf(out, "], \"count\": %u}", n);
	return 0;
}

#define OSD_ADMIN_EXTENTS_MAX 256 /* listed; extent_count covers all */

/*
 * "object locate POOL NAME": where this OSD keeps an object (PG, acting
 * set, whether it is the primary, its runs on the data device). For
 * debugging and for the tests that damage one copy on purpose (weft bench
 * must then report the object, docs/bench.md). POOL is a name or an id;
 * NAME is the rest of the line.
 */
static int osd_admin_locate_cb(void *arg, const char *args, struct asok_out *out)
{
	struct osd *osd = arg;
	const struct mon_pool *pool;
	const char *name = strchr(args, ' ');
	struct store_extent *ext = NULL;
	int32_t acting[PLC_MAX_REPLICAS];
	struct store_stat st;
	char pname[MON_NAME_MAX + 1], *end;
	unsigned int n = 0;
	uint32_t pg;
	int na, rc;

	if (name == NULL || name == args || (size_t)(name - args) > MON_NAME_MAX ||
	    name[1] == '\0' || strlen(name + 1) > STORE_NAME_MAX)
		return -EINVAL; /* usage: object locate POOL NAME */
	memcpy(pname, args, (size_t)(name - args));
	pname[name - args] = '\0';
	name++;
	pool = mon_map_pool_by_name(&osd->map, pname);
	if (pool == NULL) {
		unsigned long id = strtoul(pname, &end, 10);

		if (*end != '\0' || id > UINT32_MAX ||
		    (pool = mon_map_pool(&osd->map, (uint32_t)id)) == NULL)
			return -ENOENT;
	}
	pg = plc_map_object_pg(pool, name, strlen(name));
	na = plc_map_acting(&osd->map, pool, pg, acting);
	if (na < 0)
		return na;
	asok_printf(out, "{\"osd\": %u, \"pool\": %u, \"pool_name\": ", osd->id, pool->id);
	asok_put_str(out, pool->name);
	asok_printf(out, ", \"object\": ");
	asok_put_str(out, name);
	asok_printf(out, ", \"pg\": \"%u.%x\", \"epoch\": %u, \"acting\": [", pool->id, pg,
		    osd->map.epoch);
	for (int i = 0; i < na; i++)
		asok_printf(out, "%s%d", i ? ", " : "", acting[i]);
	asok_printf(out, "], \"primary\": %s, \"data_path\": ",
		    na > 0 && acting[0] == (int32_t)osd->id ? "true" : "false");
	asok_put_str(out, conf_get_str(osd->conf, CONF_OSD_DATA));
	rc = store_stat(osd->store, osd_pg_key(pool->id, pg), name, &st);
	if (rc == -ENOENT) {
		asok_printf(out, ", \"exists\": false}");
		return 0;
	}
	if (rc == 0) {
		ext = calloc(OSD_ADMIN_EXTENTS_MAX, sizeof(*ext));
		rc = ext == NULL ? -ENOMEM
				 : store_locate(osd->store, osd_pg_key(pool->id, pg), name, ext,
						OSD_ADMIN_EXTENTS_MAX, &n);
	}
	if (rc != 0) {
		free(ext);
		return rc;
	}
	asok_printf(out,
		    ", \"exists\": true, \"size\": %" PRIu64 ", \"version\": %" PRIu64
		    ", \"extent_count\": %u, \"extents\": [",
		    st.size, st.version, n);
	for (unsigned int i = 0; i < n && i < OSD_ADMIN_EXTENTS_MAX; i++)
		asok_printf(out,
			    "%s{\"offset\": %" PRIu64 ", \"length\": %" PRIu64
			    ", \"dev_offset\": %" PRIu64 "}",
			    i ? ", " : "", ext[i].offset, ext[i].length, ext[i].dev_offset);
	asok_printf(out, "]}");
	free(ext);
	return 0;
}

/* A runtime option changed: the log thresholds are the ones the OSD applies itself. */
static void osd_admin_conf_applied_cb(void *arg, int key)
{
	struct osd *osd = arg;

	weft_log_conf_apply(osd->conf);
}

void osd_admin_start(struct osd *osd)
{
	const char *path = conf_get_str(osd->conf, CONF_ADMIN_SOCKET);
	int rc;

	if (path == NULL || path[0] == '\0')
		return; /* disabled */
	rc = asok_create(path, osd->name, &osd->asok);
	if (rc != 0) {
		/* logged by asok_create; the OSD serves I/O without it */
		log_warn("osd", "%s: running without an admin socket", osd->name);
		return;
	}
	if ((rc = asok_register(osd->asok, "perf dump",
				"counters, per-stage latency (us), network bytes, memory, NUMA",
				osd_admin_perf_cb, osd)) != 0 ||
	    (rc = asok_register(osd->asok, "ops in flight", "ops queued or in progress by PG",
				osd_admin_ops_cb, osd)) != 0 ||
	    (rc = asok_register_args(osd->asok, "object locate",
				     "object locate POOL NAME: PG, acting set, primary?, and the "
				     "object's runs on the data device (debugging)",
				     osd_admin_locate_cb, osd)) != 0 ||
	    (rc = osd_pg_query_register(osd)) != 0 ||
	    (rc = asok_register_conf(osd->asok, osd->conf)) != 0 ||
	    (rc = asok_register_conf_set(osd->asok, osd->conf, osd_admin_conf_applied_cb, osd)) !=
		0) {
		log_error("osd", "%s: admin socket commands: %s", osd->name, weft_strerror(rc));
		asok_destroy(osd->asok);
		osd->asok = NULL;
		return;
	}
	log_info("osd", "%s: admin socket %s", osd->name, path);
}

void osd_admin_poll(struct osd *osd)
{
	if (osd->asok != NULL)
		asok_progress(osd->asok);
}

void osd_admin_stop(struct osd *osd)
{
	asok_destroy(osd->asok);
	osd->asok = NULL;
}
