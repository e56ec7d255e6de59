/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft-osd admin socket: perf dump, ops in flight, config show, help.
 * Polled from the reactor (osd_main.c): its fd joins the idle poll and
 * osd_admin_poll also runs from the 100 ms tick, so a reactor busy with
 * I/O (which never sleeps in poll) still answers within a tick.
 */
#include <inttypes.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd.h"
#include "osd/osd_perf.h"

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
	case OSD_OP_SENDING:
		return "sending";
	case OSD_OP_DONE:
		return "done";
	}
	return "?";
}

static int osd_admin_perf_cb(void *arg, struct asok_out *out)
{
	return osd_perf_dump(arg, out);
}

#define OSD_ADMIN_OPS_MAX 1000 /* listed; the count covers all */

static int osd_admin_ops_cb(void *arg, struct asok_out *out)
{
	struct osd *osd = arg;
	uint64_t now = clock_now_ms();
	unsigned int n = 0;

	asok_printf(out, "{\"ops\": [");
	for (unsigned int b = 0; b < OSD_PG_BUCKETS; b++) {
		for (struct osd_pg *pg = osd->pgs[b]; pg; pg = pg->hnext) {
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
	}
	asok_printf(out, "], \"count\": %u}", n);
	return 0;
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
	    (rc = asok_register_conf(osd->asok, osd->conf)) != 0) {
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
