/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Peer failure reports (docs/osd.md, "Failure detection"). A killed OSD
 * shows on the cluster network long before the monitors' beacon grace
 * (osd_heartbeat_grace): its connections break and connecting to it is
 * refused. When a connection to a peer the map has up breaks from the
 * peer's side, this OSD probes it: a fresh connection to its cluster
 * address. Refused, unreachable or without the fabric's handshake within
 * ms_connect_timeout (a hung process): the peer is reported at once
 * (OSD_FAILURE) and the monitors mark it down on reports from
 * mon_osd_min_down_reporters distinct hosts (mon/mon_osd.c), so one peer
 * with a private problem cannot take an OSD down alone. A probe that
 * connects says the peer lives (it closed that connection on purpose):
 * nothing is reported, and an earlier report is retracted
 * (PROTO_FAIL_F_ALIVE). A break this OSD caused itself (a protocol error,
 * a refused hello) starts nothing.
 *
 * A peer can also fail without breaking anything: a hung process, or a
 * cluster network that drops packets while the public one (and the
 * beacons) still works. So a primary sends a PING on each replica
 * connection every osd_heartbeat_interval and the replica answers PONG;
 * a connection on which nothing at all arrived (PONG, PING, ACK, ring
 * record) for osd_heartbeat_grace starts the same probe. Both ends watch:
 * the replica hears the primary's PINGs. A peer that only answers slowly
 * but still accepts the probe's handshake is not reported. Peers without
 * PROTO_FEAT_OSD_PING (an older build) are neither pinged nor watched.
 *
 * While a report stands the peer is probed again every OSD_HB_REPEAT_MS and
 * the report repeated, because the monitors keep reports in memory only (a
 * new leader forgets them) and expire them after the grace. A peer that
 * came back with a new up_from is a new process: the old report is void.
 */
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd.h"
#include "proto/hello.h"

#define OSD_HB_REPEAT_MS 1000u

struct osd_hb_ent {
	uint64_t failed_ms; /* != 0: reported, since then */
	uint64_t sent_ms;   /* last report or probe */
	uint32_t up_from;   /* of the process reported */
	bool probing;	    /* a probe connection is in flight */
};

static struct osd_hb_ent *osd_hb_ent(struct osd *osd, uint32_t id)
{
	struct osd_hb_ent *t;
	uint32_t n;

	if (id < osd->nhb)
		return &osd->hb[id];
	if (id >= osd->map.max_osd)
		return NULL;
	n = osd->map.max_osd;
	t = realloc(osd->hb, n * sizeof(*t));
	if (t == NULL)
		return NULL;
	memset(t + osd->nhb, 0, (n - osd->nhb) * sizeof(*t));
	osd->hb = t;
	osd->nhb = n;
	return &osd->hb[id];
}

static void osd_hb_send(struct osd *osd, uint32_t id, const struct osd_hb_ent *e, bool alive)
{
	struct proto_msg m = {.type = PROTO_OSD_FAILURE};

	m.osd_failure.target = id;
	m.osd_failure.reporter = osd->id;
	m.osd_failure.epoch = osd->map.epoch;
	m.osd_failure.failed_ms = (uint32_t)(clock_now_ms() - e->failed_ms);
	m.osd_failure.flags = alive ? PROTO_FAIL_F_ALIVE : 0;
	/* -ENOTCONN without a monitor: the tick sends it again */
	monc_send(osd->monc, &m);
}

/* An up peer of the current map, other than us, while we are booted. */
static const struct mon_osd *osd_hb_target(struct osd *osd, uint32_t id)
{
	const struct mon_osd *o = mon_map_osd(&osd->map, id);

	if (id == osd->id || !osd->booted || osd->stopping || o == NULL || !(o->state & MON_OSD_UP))
		return NULL;
	return o;
}

static void osd_hb_probe(struct osd *osd, uint32_t id, const struct mon_osd *o,
			 struct osd_hb_ent *e)
{
	const char *addr = o->cluster_addr[0] ? o->cluster_addr : o->public_addr;
	struct osd_conn *c;

	e->sent_ms = clock_now_ms();
	c = osd_conn_connect(osd, addr, OSD_CONN_PROBE);
	if (c == NULL)
		return; /* logged; the tick probes again */
	c->peer_id = id;
	c->peer_known = true;
	c->probe_up_from = o->up_from;
	e->probing = true;
}

void osd_hb_peer_lost(struct osd *osd, uint32_t id)
{
	const struct mon_osd *o = osd_hb_target(osd, id);
	struct osd_hb_ent *e = o != NULL ? osd_hb_ent(osd, id) : NULL;

	if (e == NULL || e->probing)
		return;
	if (e->failed_ms != 0 && e->up_from == o->up_from)
		return; /* reported already; the tick probes again */
	log_info("osd", "%s: connection to osd.%u broke: probing it", osd->name, id);
	osd_hb_probe(osd, id, o, e);
}

/* conn carried nothing for the grace: is its peer there at all? */
static void osd_hb_peer_silent(struct osd *osd, struct osd_conn *conn, uint64_t now)
{
	const struct mon_osd *o = osd_hb_target(osd, conn->peer_id);
	struct osd_hb_ent *e = o != NULL ? osd_hb_ent(osd, conn->peer_id) : NULL;

	conn->hb_silent = true;
	if (e == NULL || e->probing || (e->failed_ms != 0 && e->up_from == o->up_from))
		return;
	log_warn("osd",
		 "%s: nothing from osd.%u for %.1f s on its cluster connection "
		 "(osd_heartbeat_grace %.1f s): probing it",
		 osd->name, conn->peer_id, (double)(now - conn->rx_ms) / 1000.0,
		 (double)osd->hb_grace_ms / 1000.0);
	osd_hb_probe(osd, conn->peer_id, o, e);
}

static void osd_hb_ping_send(struct osd_conn *conn, uint16_t type, uint64_t seq, uint64_t stamp)
{
	struct proto_msg m = {.type = type};

	m.ping.seq = seq;
	m.ping.stamp_ns = stamp;
	/* a send that fails is logged; the next interval sends another */
	(void)osd_conn_send(conn, &m, 0);
}

void osd_hb_ping_recv(struct osd_conn *conn, uint16_t type, const struct proto_ping *m)
{
	if (type == PROTO_PING)
		osd_hb_ping_send(conn, PROTO_PONG, m->seq, m->stamp_ns);
	/* a PONG only says the peer lives: osd_hb_rx saw it already */
}

/* PINGs out on our replica connections; silent connections either way probed. */
static void osd_hb_ping_tick(struct osd *osd, uint64_t now)
{
	/* we stalled ourselves (a long store call, a stopped process): the
	 * silence we would see is ours, so every watch starts again */
	bool stalled = osd->hb_tick_ms != 0 && now - osd->hb_tick_ms > osd->hb_grace_ms / 2;

	osd->hb_tick_ms = now;
	if (osd->hb_interval_ms == 0 || osd->hb_grace_ms == 0)
		return;
	for (struct osd_conn *c = osd->conns; c != NULL; c = c->next) {
		if ((c->kind != OSD_CONN_PEER && c->kind != OSD_CONN_REPLICA) || c->failed ||
		    !c->hello_done || !c->peer_known || !(c->peer_features & PROTO_FEAT_OSD_PING))
			continue;
		if (c->rx_ms == 0 || stalled)
			c->rx_ms = now; /* watched from now on */
		if (c->kind == OSD_CONN_PEER && now - c->ping_ms >= osd->hb_interval_ms) {
			c->ping_ms = now;
			osd_hb_ping_send(c, PROTO_PING, 0, clock_now_ns());
		}
		if (!c->hb_silent && now - c->rx_ms > osd->hb_grace_ms)
			osd_hb_peer_silent(osd, c, now);
	}
}

void osd_hb_peer_alive(struct osd *osd, uint32_t id)
{
	struct osd_hb_ent *e = id < osd->nhb ? &osd->hb[id] : NULL;

	if (e == NULL || e->failed_ms == 0)
		return;
	log_info("osd", "%s: osd.%u answers again: report retracted", osd->name, id);
	osd_hb_send(osd, id, e, true);
	e->failed_ms = 0;
}

void osd_hb_probe_end(struct osd *osd, struct osd_conn *c)
{
	const struct mon_osd *o = osd_hb_target(osd, c->peer_id);
	struct osd_hb_ent *e = c->peer_id < osd->nhb ? &osd->hb[c->peer_id] : NULL;

	if (e == NULL)
		return;
	e->probing = false;
	if (c->probe_ok) {
		osd_hb_peer_alive(osd, c->peer_id);
		return;
	}
	if (o == NULL || o->up_from != c->probe_up_from)
		return; /* marked down meanwhile, or a new process */
	if (e->failed_ms == 0 || e->up_from != o->up_from) {
		e->failed_ms = clock_now_ms();
		e->up_from = o->up_from;
		log_warn("osd",
			 "%s: osd.%u (up since epoch %u) does not answer at %s: "
			 "reporting it to the monitors",
			 osd->name, c->peer_id, o->up_from, osd_conn_peer(c));
	}
	osd_hb_send(osd, c->peer_id, e, false);
}

void osd_hb_tick(struct osd *osd)
{
	uint64_t now = clock_now_ms();

	osd_hb_ping_tick(osd, now);
	for (uint32_t id = 0; id < osd->nhb; id++) {
		struct osd_hb_ent *e = &osd->hb[id];
		const struct mon_osd *o;

		if (e->failed_ms == 0 || e->probing)
			continue;
		o = osd_hb_target(osd, id);
		if (o == NULL || o->up_from != e->up_from) {
			e->failed_ms = 0; /* marked down, a new process, or we re-boot: done */
			continue;
		}
		if (now - e->sent_ms >= OSD_HB_REPEAT_MS)
			osd_hb_probe(osd, id, o, e);
	}
}

void osd_hb_free(struct osd *osd)
{
	free(osd->hb);
	osd->hb = NULL;
	osd->nhb = 0;
}
