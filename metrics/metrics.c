/* SPDX-License-Identifier: Apache-2.0 */
#include "metrics/metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/conf.h"
#include "common/histogram.h"
#include "common/log.h"

#define METRICS_CONN_TIMEOUT_S 10
#define METRICS_CONN_MAX       16

struct metrics_srv {
	struct MHD_Daemon *mhd;
	metrics_fill_cb fill;
	void *arg;
	uint64_t served;
	char who[32];
};

void metrics_printf(struct metrics_out *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (out->oom)
		return;
	for (;;) {
		size_t room = out->cap - out->len;

		va_start(ap, fmt);
		n = vsnprintf(out->buf ? out->buf + out->len : NULL, out->buf ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			out->oom = true;
			return;
		}
		if (out->buf != NULL && (size_t)n < room) {
			out->len += (size_t)n;
			return;
		}
		{
			size_t cap = out->cap ? out->cap : 4096;
			char *b;

			while (cap < out->len + (size_t)n + 1)
				cap *= 2;
			b = realloc(out->buf, cap);
			if (b == NULL) {
				out->oom = true;
				return;
			}
			out->buf = b;
			out->cap = cap;
		}
	}
}

void metrics_family(struct metrics_out *out, const char *name, const char *type, const char *help)
{
	metrics_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void metrics_sample(struct metrics_out *out, const char *name, const char *labels, double value)
{
	if (labels != NULL && labels[0] != '\0')
		metrics_printf(out, "%s{%s} %.17g\n", name, labels, value);
	else
		metrics_printf(out, "%s %.17g\n", name, value);
}

const char *metrics_label_escape(const char *value, char *buf, size_t cap)
{
	size_t o = 0;

	for (const char *p = value; *p != '\0' && o + 3 < cap; p++) {
		if (*p == '\\' || *p == '"') {
			buf[o++] = '\\';
			buf[o++] = *p;
		} else if (*p == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = *p;
		}
	}
	buf[cap > 0 ? o : 0] = '\0';
	return buf;
}

/* Histogram bounds in seconds: 10 us .. 10 s, the range of a storage op. */
static const double metrics_bounds[] = {
	0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
	0.01,	 0.025,	   0.05,    0.1,    0.25,    0.5,    1,	    2.5,    5,	   10,
};

void metrics_hist(struct metrics_out *out, const char *name, const char *labels,
		  const struct hist *h, double scale)
{
	const char *sep = labels != NULL && labels[0] != '\0' ? "," : "";
	uint64_t cum = 0;
	unsigned int b = 0;

	if (labels == NULL)
		labels = "";
	/*
	 * One pass over the log-linear buckets: each goes into the first bound
	 * at or above its lower end, so the counts only grow with the bound.
	 */
	for (size_t i = 0; i < sizeof(metrics_bounds) / sizeof(metrics_bounds[0]); i++) {
		uint64_t bound = (uint64_t)(metrics_bounds[i] * scale);

		for (; b < HIST_BUCKETS; b++) {
			uint64_t low = hist_bucket_low_value(b);

			if (low > bound)
				break;
			cum += h->buckets[b];
		}
		metrics_printf(out, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep,
			       metrics_bounds[i], (unsigned long long)cum);
	}
	metrics_printf(out, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
		       (unsigned long long)h->count);
	if (labels[0] != '\0') {
		metrics_printf(out, "%s_sum{%s} %.9g\n", name, labels, (double)h->sum / scale);
		metrics_printf(out, "%s_count{%s} %llu\n", name, labels,
			       (unsigned long long)h->count);
	} else {
		metrics_printf(out, "%s_sum %.9g\n", name, (double)h->sum / scale);
		metrics_printf(out, "%s_count %llu\n", name, (unsigned long long)h->count);
	}
}

static enum MHD_Result metrics_answer_cb(void *cls, struct MHD_Connection *conn, const char *url,
					 const char *method, const char *version,
					 const char *upload_data, size_t *upload_data_size,
					 void **req_cls)
{
	static const char not_found[] = "only /metrics is served here\n";
	struct metrics_srv *srv = cls;
	struct metrics_out out = { 0 };
	struct MHD_Response *resp;
	enum MHD_Result ret;
	unsigned int code = MHD_HTTP_OK;

	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
		code = MHD_HTTP_METHOD_NOT_ALLOWED;
		resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	} else if (strcmp(url, "/metrics") != 0) {
		code = MHD_HTTP_NOT_FOUND;
		resp = MHD_create_response_from_buffer(sizeof(not_found) - 1, (void *)not_found,
						       MHD_RESPMEM_PERSISTENT);
	} else {
		srv->fill(srv->arg, &out);
		if (out.oom) {
			free(out.buf);
			return MHD_NO; /* drops the connection; the scraper records a failure */
		}
		/* MHD frees the buffer with free() once sent */
		resp = MHD_create_response_from_buffer(out.len, out.buf ? out.buf : (void *)"",
						       out.buf ? MHD_RESPMEM_MUST_FREE
							       : MHD_RESPMEM_PERSISTENT);
		srv->served++;
	}
	if (resp == NULL)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; version=0.0.4; charset=utf-8");
	ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

int metrics_srv_start(const struct conf_addr *addr, const char *who, metrics_fill_cb fill,
		      void *arg, struct metrics_srv **srv_out)
{
	const struct conf_addr a = *addr;
	struct sockaddr_storage ss = { 0 };
	struct metrics_srv *srv;
	unsigned int flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	char text[64];
	int rc;

	snprintf(text, sizeof(text), a.family == AF_INET6 ? "[%s]:%u" : "%s:%u", a.ip, a.port);
	if (a.port == 0) {
		log_error("metrics", "%s: metrics_addr %s needs a port", who, a.ip);
		return -EINVAL;
	}
	if (a.family == AF_INET6) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(a.port);
		inet_pton(AF_INET6, a.ip, &s6->sin6_addr);
		flags |= MHD_USE_IPv6;
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		s4->sin_port = htons(a.port);
		inet_pton(AF_INET, a.ip, &s4->sin_addr);
	}
	srv = calloc(1, sizeof(*srv));
	if (srv == NULL)
		return -ENOMEM;
	srv->fill = fill;
	srv->arg = arg;
	snprintf(srv->who, sizeof(srv->who), "%s", who);
	srv->mhd = MHD_start_daemon(flags, a.port, NULL, NULL, metrics_answer_cb, srv,
				    MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_CONN_TIMEOUT_S,
				    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_CONN_MAX,
				    MHD_OPTION_END);
	if (srv->mhd == NULL) {
		rc = errno ? -errno : -EADDRINUSE;
		log_error("metrics", "%s: cannot serve /metrics on %s: %s", who, text,
			  strerror(-rc));
		free(srv);
		return rc;
	}
	log_info("metrics", "%s: serving /metrics on http://%s/metrics", who, text);
	*srv_out = srv;
	return 0;
}

void metrics_srv_stop(struct metrics_srv *srv)
{
	if (srv == NULL)
		return;
	MHD_stop_daemon(srv->mhd);
	free(srv);
}

int metrics_srv_fd(const struct metrics_srv *srv)
{
	const union MHD_DaemonInfo *info =
		MHD_get_daemon_info(srv->mhd, MHD_DAEMON_INFO_EPOLL_FD);

	return info != NULL ? info->epoll_fd : -1;
}

void metrics_srv_poll(struct metrics_srv *srv)
{
	if (srv != NULL)
		MHD_run(srv->mhd);
}

uint64_t metrics_srv_served(const struct metrics_srv *srv)
{
	return srv->served;
}
