/* SPDX-License-Identifier: Apache-2.0 */
/* The mon client's one-shot deadline timer on an event loop (monc_evl.h). */
#include <stdint.h>

#include "common/clock.h"
#include "common/log.h"
#include "mon/monc/monc_evl.h"
#include "weft/weft.h"

/* At the next deadline; none pending: not armed. */
static int monc_evl_arm(struct monc_evl *me)
{
	uint64_t at = monc_next_deadline_us(me->monc), now;

	if (at == UINT64_MAX) {
		evl_timer_cancel(me->loop, &me->timer);
		return 0;
	}
	now = clock_now_us();
	return evl_timer_arm(me->loop, &me->timer, at > now ? at - now : 0, 0);
}

static void monc_evl_deadline_cb(struct monc *mc, void *arg)
{
	struct monc_evl *me = arg;
	int rc = monc_evl_arm(me);

	(void)mc;
	/* only a heap that cannot grow; the mon client would stall without its timer */
	if (rc != 0)
		log_error(me->module, "%s: cannot arm the mon client's timer: %s", me->who,
			  weft_strerror(rc));
}

/* monc_progress re-arms the timer (monc_evl_deadline_cb). */
static void monc_evl_timer_cb(struct evl *evl, struct evl_timer *t, void *arg)
{
	struct monc_evl *me = arg;

	(void)evl;
	(void)t;
	monc_progress(me->monc);
}

int monc_evl_attach(struct monc_evl *me, struct monc *monc, struct evl *loop, const char *module,
		    const char *who)
{
	me->monc = monc;
	me->loop = loop;
	me->module = module;
	me->who = who;
	evl_timer_init(&me->timer, monc_evl_timer_cb, me);
	monc_deadline_watch(monc, monc_evl_deadline_cb, me);
	return monc_evl_arm(me);
}

void monc_evl_detach(struct monc_evl *me)
{
	if (me->monc == NULL)
		return;
	monc_deadline_watch(me->monc, NULL, NULL);
	evl_timer_cancel(me->loop, &me->timer);
	me->monc = NULL;
}
