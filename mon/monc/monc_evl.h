/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The mon client on an event loop (evloop/): what it does on its own clock
 * (request deadlines, resends, hunting, ticket and key renewals) runs on
 * one one-shot timer at its next deadline (monc_next_deadline_us), moved
 * whenever the mon client says that deadline may have come nearer
 * (monc_deadline_watch: a request sent, a frame, a failed connection) and
 * after every monc_progress. Idle and connected, with nothing to renew, it
 * does not fire at all. Its frames come through the owner's messenger.
 */
#ifndef WEFT_MON_MONC_MONC_EVL_H
#define WEFT_MON_MONC_MONC_EVL_H

#include "evloop/evloop.h"
#include "mon/monc/monc.h"

struct monc_evl {
	struct monc *monc;
	struct evl *loop;
	struct evl_timer timer;
	const char *who; /* names the owner in the log ("osd.3", the client's name) */
	const char *module;
};

/* Start: the watch set, the timer armed for what is due. 0 or -ENOMEM. */
int monc_evl_attach(struct monc_evl *me, struct monc *monc, struct evl *loop, const char *module,
		    const char *who);
/* Stop before the loop or the monc goes: the watch off, the timer cancelled. */
void monc_evl_detach(struct monc_evl *me);

#endif
