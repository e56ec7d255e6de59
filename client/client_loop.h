/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The event loop a cluster handle runs (docs/evloop.md, docs/client.md),
 * for in-tree programs that run it themselves: weft-mount's I/O thread adds
 * its submission queue (a poller) to it and runs evl_run() instead of
 * sleeping on weft_fd() in an epoll set of its own. The same single-thread
 * rule as for weft_poll() applies: one thread at a time drives it.
 */
#ifndef WEFT_CLIENT_CLIENT_LOOP_H
#define WEFT_CLIENT_CLIENT_LOOP_H

#include "evloop/evloop.h"
#include "weft/weft.h"

struct evl *client_loop(struct weft_cluster *cl);

#endif
