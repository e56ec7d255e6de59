/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft-osd observability and resources (docs/osd.md "Observability, memory,
 * NUMA"):
 *
 *   osd_perf.c      per-stage latency histograms, the "perf dump" JSON
 *   osd_admin.c     the admin socket commands (perf dump, ops in flight, ...)
 *   osd_perf_mem.c  osd_memory_target (start-up check, RSS watch) and NUMA
 */
#ifndef WEFT_OSD_OSD_PERF_H
#define WEFT_OSD_OSD_PERF_H

#include <stdbool.h>
#include <stdint.h>

#include "admin/asok.h"
#include "common/histogram.h"

struct osd;
struct osd_op;

/* Stages of an op on the primary; each histogram is in nanoseconds. */
enum osd_stage {
	OSD_ST_RECEIVE,	 /* arrival -> payload pull posted (or read started): queueing */
	OSD_ST_PULL,	 /* payload pull posted -> its one-sided read completed */
	OSD_ST_WAL,	 /* local transaction submitted -> committed */
	OSD_ST_REPL,	 /* replica record posted -> that replica's ack (one per replica) */
	OSD_ST_REPLY,	 /* last commit/ack (read: data written) -> reply posted */
	OSD_ST_OP_WRITE, /* whole write, arrival -> reply */
	OSD_ST_OP_READ,	 /* whole read, arrival -> reply */
	OSD_ST_READ,	 /* read started -> the store's device read completed */
	OSD_ST_COUNT,
};

struct osd_perf {
	struct hist h[OSD_ST_COUNT];
	/* memory (osd_perf_mem.c) */
	uint64_t mem_target;
	uint64_t rss_peak;
	bool over_target; /* logged once; re-armed below 90% of the target */
	uint64_t over_events, sheds;
	uint64_t next_mem_ms;
	/* NUMA */
	int numa_node; /* -1: none */
	char numa_why[192];
};

int osd_perf_init(struct osd *osd);
void osd_perf_fini(struct osd *osd);
/* Record now - op's last stage mark in st, and make now the mark. */
void osd_perf_mark(struct osd *osd, enum osd_stage st, struct osd_op *op);
/* Record now - op's submit time in st (WAL commit, replica acks). */
void osd_perf_since_submit(struct osd *osd, enum osd_stage st, struct osd_op *op);
/* The op is answered with status: reply stage and whole-op latency. */
void osd_perf_op_done(struct osd_op *op, int status);
int osd_perf_dump(struct osd *osd, struct asok_out *out);
uint64_t osd_perf_registered_bytes(struct osd *osd);

/* osd_admin.c: the admin socket; failure to open it is logged, not fatal */
void osd_admin_start(struct osd *osd);
void osd_admin_poll(struct osd *osd);
void osd_admin_stop(struct osd *osd);

/* osd_metrics.c: /metrics on metrics_addr, when set; a failure is logged, not fatal */
void osd_metrics_start(struct osd *osd);
int osd_metrics_fd(const struct osd *osd); /* -1 when off */
void osd_metrics_poll(struct osd *osd);
void osd_metrics_stop(struct osd *osd);

/* osd_perf_mem.c */
int osd_numa_setup(struct osd *osd); /* before the registered pools exist */
int osd_mem_check(struct osd *osd);  /* after osd_net_start: refuse if over the target */
void osd_mem_tick(struct osd *osd);
uint64_t osd_mem_rss(void);

#endif
