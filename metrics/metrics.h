/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /metrics in the Prometheus text format (version 0.0.4), served by
 * libmicrohttpd on a daemon's metrics_addr (off when empty). The server
 * runs in the daemon's own loop, not in a thread of its own: the daemon
 * polls metrics_srv_fd() and calls metrics_srv_poll(), so the fill
 * callback reads the daemon's state from the thread that owns it.
 *
 * The daemon's fill callback writes families with metrics_family() then
 * their samples; metrics_hist() writes a whole Prometheus histogram.
 */
#ifndef WEFT_METRICS_METRICS_H
#define WEFT_METRICS_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct conf_addr;
struct hist;
struct metrics_srv;

/* A growing text buffer; on allocation failure oom is set and output dropped. */
struct metrics_out {
	char *buf;
	size_t len, cap;
	bool oom;
};

typedef void (*metrics_fill_cb)(void *arg, struct metrics_out *out);

/*
 * Listen on addr (metrics_addr: an ip and a port). who names the daemon in
 * log lines. 0 and *srv_out, or a negative errno (logged).
 */
int metrics_srv_start(const struct conf_addr *addr, const char *who, metrics_fill_cb fill, void *arg,
		      struct metrics_srv **srv_out);
void metrics_srv_stop(struct metrics_srv *srv);
/* An fd that is readable when the server has work (epoll), for poll(2) or uv_poll. */
int metrics_srv_fd(const struct metrics_srv *srv);
/* Accept, read, answer what is ready, without blocking; also from a tick (timeouts). */
void metrics_srv_poll(struct metrics_srv *srv);
/* Requests answered so far. */
uint64_t metrics_srv_served(const struct metrics_srv *srv);

void metrics_printf(struct metrics_out *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* "# HELP name help" and "# TYPE name type" (counter, gauge, histogram). */
void metrics_family(struct metrics_out *out, const char *name, const char *type,
		    const char *help);
/* One sample: name{labels} value; labels is "" or 'k="v",k2="v2"' (already escaped). */
void metrics_sample(struct metrics_out *out, const char *name, const char *labels, double value);
/* A label value with \, " and newline escaped, into buf. */
const char *metrics_label_escape(const char *value, char *buf, size_t cap);
/*
 * A histogram of h (values in units of 1/scale seconds: 1e9 for ns) as
 * name_bucket{labels,le=...}, name_sum and name_count. The family line is
 * the caller's. A bucket counts the histogram's buckets whose range starts
 * at or below its bound (common/histogram.h: within 1/16 of the value).
 */
void metrics_hist(struct metrics_out *out, const char *name, const char *labels,
		  const struct hist *h, double scale);

#endif
