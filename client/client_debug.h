/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libweft debug calls for tests and tools (not part of the public API):
 * read one OSD's own copy of an object, fetch an OSD's counters, and this
 * client's per-endpoint byte counters.
 */
#ifndef WEFT_CLIENT_CLIENT_DEBUG_H
#define WEFT_CLIENT_CLIENT_DEBUG_H

#include <stddef.h>
#include <stdint.h>

#include "weft/weft.h"

/* Read osd's copy from its store, bypassing the primary (PROTO_OP_READ_LOCAL). */
int weft_debug_read_local(struct weft_cluster *cl, uint32_t osd, uint32_t pool, const char *name,
			  void *buf, size_t len, uint64_t off, size_t *read_out);
/*
 * Stat sent to osd whether or not it is the primary: 0 and the size from
 * the primary; -ENXIO and the primary it names from any other OSD.
 */
int weft_debug_stat_at(struct weft_cluster *cl, uint32_t osd, uint32_t pool, const char *name,
		       uint64_t *size_out, uint64_t *primary_out);
/* osd's counters as JSON (PROTO_OP_PERF), NUL-terminated in buf. */
int weft_debug_osd_perf(struct weft_cluster *cl, uint32_t osd, char *buf, size_t cap);
/* This client's connections as JSON: osd, local and peer address, bytes. */
int weft_debug_conns_json(struct weft_cluster *cl, char *buf, size_t cap);
struct mon_map;
/* The client's current map (valid until the next weft_poll). */
const struct mon_map *weft_debug_map(struct weft_cluster *cl);
/* Ops sent more than once (stale epoch, primary change, OSD failure). */
uint64_t weft_debug_resends(const struct weft_cluster *cl);

#endif
