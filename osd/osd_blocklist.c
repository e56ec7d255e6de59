/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fencing client instances the map blocklists (mon/map_blocklist.c; docs/
 * volumes.md, "Exclusive lock"). Each client connection knows its peer's
 * instance from the hello (osd_net.c, osd_ready_cb); an op from a listed instance is
 * refused with -WEFT_E_BLOCKLISTED before it reaches a PG, and when a map
 * lists it, its connections are dropped (what they had queued before that
 * map still runs: it was ordered before any op of a client that waited
 * for the blocklist's epoch). With an empty blocklist the check is one
 * load and compare per op.
 */
#include <errno.h>

#include "common/log.h"
#include "mon/map.h"
#include "osd/osd.h"

int osd_blocklist_check(struct osd_conn *conn)
{
	struct osd *osd = conn->osd;

	if (conn->peer_instance == 0 || !mon_map_blocklisted(&osd->map, conn->peer_instance))
		return 0;
	osd->ctr.blocklist_refused++;
	return -WEFT_E_BLOCKLISTED;
}

void osd_blocklist_map_changed(struct osd *osd)
{
	if (osd->map.nblocklist == 0)
		return;
	for (struct osd_conn *c = osd->conns; c; c = c->next) {
		char inst[MON_INSTANCE_STR];

		if (c->kind != OSD_CONN_CLIENT || c->failed || c->peer_instance == 0 ||
		    !mon_map_blocklisted(&osd->map, c->peer_instance))
			continue;
		log_info("osd",
			 "%s: map epoch %u blocklists client instance %s: dropping its "
			 "connection from %s",
			 osd->name, osd->map.epoch, mon_instance_str(c->peer_instance, inst),
			 osd_conn_peer(c));
		osd_conn_kill(c); /* torn down by the event loop, as any failed connection */
	}
}
