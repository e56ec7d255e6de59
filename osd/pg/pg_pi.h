/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Past intervals of one PG (docs/recovery.md, "Past intervals"): the runs
 * of map epochs with one acting set since the PG last went active, each
 * with whether it may have gone active (had >= min_size members), and the
 * rule peering applies to them: hear from at least one member of every
 * interval that may have gone active since `les`, else the PG is down.
 *
 * Pure logic on plain structs (no OSD, no store, no network), so the unit
 * test (tests/test_osd_pi.c) drives it on data. The OSD feeds it every map
 * epoch (osd_peer.c), persists it with the PG info (osd_pg.c) and sends it
 * in PG_INFO so a primary that missed maps learns them from its peers.
 */
#ifndef WEFT_OSD_PG_PI_H
#define WEFT_OSD_PG_PI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto.h" /* struct proto_pg_interval: the entry, on disk and on the wire */

#define PG_PI_MAX	64 /* closed intervals kept per PG (distinct member sets) */
#define PG_PI_F_ACTIVE PROTO_PG_IV_F_ACTIVE

#define pg_pi_ent proto_pg_interval

struct pg_pi {
	uint32_t epoch;	       /* newest map epoch applied (0 = none yet) */
	struct pg_pi_ent cur; /* the open interval (cur.last unused) */
	uint32_t n;
	struct pg_pi_ent e[PG_PI_MAX]; /* closed ones, oldest first */
	uint32_t dropped;		 /* maybe-active intervals lost to the bound (logged) */
};

/*
 * The PG's acting set at map epoch `epoch` (a later one than pi->epoch;
 * older or equal epochs are ignored, so replaying maps is harmless). A
 * change closes the open interval as [first, epoch - 1]. gap_from: 0 when
 * the OSD saw every epoch before this one, else the last one it saw (a
 * full map came instead of the increments): the open interval is closed
 * there and the epochs in between stay unknown (peers may fill them in).
 * Returns 1 when an interval was closed, 2 when closed at a gap, else 0.
 */
int pg_pi_advance(struct pg_pi *pi, uint32_t epoch, uint32_t gap_from, const int32_t *acting,
		   unsigned int n, unsigned int min_size);

/* Forget closed intervals that ended before les (the PG went active after them). */
void pg_pi_trim(struct pg_pi *pi, uint32_t les);

/*
 * Add a closed interval a peer knows of (PG_INFO). Intervals this PG
 * already has (same first epoch) are kept; others are inserted in order.
 * Returns 1 when added, 0 when known, -EINVAL for a malformed one.
 */
int pg_pi_merge(struct pg_pi *pi, const struct pg_pi_ent *e);

/*
 * Callbacks of pg_pi_check. heard: PG_PI_HEARD_FULL (it answered and its
 * copy can be trusted), PG_PI_HEARD_PART (it answered, but its copy is
 * being rebuilt by backfill), 0 (not heard); up: is it up now (and may
 * still answer).
 */
#define PG_PI_HEARD_PART 1
#define PG_PI_HEARD_FULL 2
struct pg_pi_probe {
	int (*heard)(void *arg, int32_t osd);
	bool (*up)(void *arg, int32_t osd);
	void *arg;
};

enum pg_pi_verdict {
	PG_PI_OK = 0,	 /* every maybe-active interval since les has a member heard from */
	PG_PI_WAIT = 1, /* some have a member that is up but has not answered yet */
	PG_PI_DOWN = 2, /* some have every member down: blocked_out names them */
};

/*
 * The prior-set rule. For each closed interval with last >= les that may
 * have gone active: fine if one of its members was heard from with a
 * copy that can be trusted, or if every member was heard from (then
 * whatever it acknowledged was carried into a later interval: a member
 * being backfilled acknowledges nothing alone); else WAIT
 * if one is up; else DOWN, and its members go into blocked_out (distinct
 * ids, at most max; *nblocked_out counts them).
 */
enum pg_pi_verdict pg_pi_check(const struct pg_pi *pi, uint32_t les,
				 const struct pg_pi_probe *probe, int32_t *blocked_out,
				 unsigned int max, unsigned int *nblocked_out);

/*
 * Persisted form (the tail of the PG info attribute): u32 epoch, the open
 * interval, u8 count, the closed ones (proto_pg_interval_put each).
 */
struct proto_enc;
struct proto_dec;
void pg_pi_encode(const struct pg_pi *pi, struct proto_enc *enc);
int pg_pi_decode(struct proto_dec *dec, struct pg_pi *pi_out);
#define PG_PI_ENC_MAX (4 + (PG_PI_MAX + 1) * PROTO_PG_IV_ENC_MAX + 1)

#endif
