/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tcp-pingpong: the raw-TCP latency baseline for weft fabric-bench --lat.
 * Plain blocking sockets with TCP_NODELAY, no Weft code. The client sends
 * SIZE bytes, the server echoes them, the client times each round trip.
 *
 *   tcp-pingpong --server IP:PORT            (port 0: any; printed in the ready line)
 *   tcp-pingpong --connect IP:PORT [-s SIZE] [-n ITERS] [-w WARMUP] [--format json]
 *
 * Wire: the client first sends "TPP1" + SIZE (u32, little-endian); then
 * ITERS+WARMUP echoes of SIZE bytes; then it closes.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define TPP_MAX_SIZE (16u << 20)

static uint64_t tpp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int tpp_usage_err(const char *msg, const char *arg)
{
	fprintf(stderr, "tcp-pingpong: %s%s%s (try --help)\n", msg, arg ? " " : "", arg ? arg : "");
	return 2;
}

/* "a.b.c.d:port" -> sockaddr; false on anything else. */
static bool tpp_addr_parse(const char *s, bool port0_ok, struct sockaddr_in *sa)
{
	const char *colon = strrchr(s, ':');
	char host[INET_ADDRSTRLEN];
	char *end;
	unsigned long port;

	if (!colon || (size_t)(colon - s) >= sizeof(host))
		return false;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end || port > 65535 || (!port && !port0_ok))
		return false;
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons((uint16_t)port);
	return inet_pton(AF_INET, host, &sa->sin_addr) == 1;
}

static int tpp_io_full(int fd, void *buf, size_t len, bool wr)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void tpp_nodelay(int fd)
{
	int one = 1;

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int tpp_server(const struct sockaddr_in *sa, bool persist)
{
	struct sockaddr_in bound;
	socklen_t blen = sizeof(bound);
	char ip[INET_ADDRSTRLEN];
	uint8_t hdr[8], *buf = NULL;
	int lfd, fd, one = 1, ret = 1;
	uint32_t size;

	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(lfd, (const struct sockaddr *)sa, sizeof(*sa)) < 0 || listen(lfd, 4) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&bound, &blen) < 0) {
		fprintf(stderr, "tcp-pingpong: cannot listen: %s\n", strerror(errno));
		return 1;
	}
	inet_ntop(AF_INET, &bound.sin_addr, ip, sizeof(ip));
	printf("tcp-pingpong: listening on %s:%u\n", ip, ntohs(bound.sin_port));
	fflush(stdout);
	do {
		fd = accept(lfd, NULL, NULL);
		if (fd < 0) {
			fprintf(stderr, "tcp-pingpong: accept: %s\n", strerror(errno));
			break;
		}
		tpp_nodelay(fd);
		if (tpp_io_full(fd, hdr, sizeof(hdr), false) < 0 || memcmp(hdr, "TPP1", 4)) {
			fprintf(stderr, "tcp-pingpong: bad hello from the client\n");
			close(fd);
			continue;
		}
		size = (uint32_t)hdr[4] | (uint32_t)hdr[5] << 8 | (uint32_t)hdr[6] << 16 |
		       (uint32_t)hdr[7] << 24;
		if (size == 0 || size > TPP_MAX_SIZE) {
			fprintf(stderr, "tcp-pingpong: client asked for size %u\n", size);
			close(fd);
			continue;
		}
		free(buf);
		buf = malloc(size);
		if (!buf) {
			close(fd);
			break;
		}
		/* Echo until the client closes: that is the normal end. */
		while (tpp_io_full(fd, buf, size, false) == 0 &&
		       tpp_io_full(fd, buf, size, true) == 0)
			;
		close(fd);
		ret = 0;
	} while (persist);
	free(buf);
	close(lfd);
	return ret;
}

static int tpp_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank quantile of a sorted array. */
static double tpp_quantile_us(const uint64_t *v, uint64_t n, double q)
{
	uint64_t rank = (uint64_t)(q * (double)n + 0.999999);

	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return (double)v[rank - 1] / 1e3;
}

static int tpp_client(const struct sockaddr_in *sa, const char *addr, uint32_t size, uint64_t iters,
		      uint64_t warmup, bool json)
{
	uint8_t hdr[8] = {'T',
			  'P',
			  'P',
			  '1',
			  (uint8_t)size,
			  (uint8_t)(size >> 8),
			  (uint8_t)(size >> 16),
			  (uint8_t)(size >> 24)};
	uint64_t *lat = calloc(iters, sizeof(*lat)), t0, t_start, sum = 0;
	uint8_t *buf = malloc(size);
	double secs;
	int fd, rc = 0, ret = 1;

	if (!lat || !buf) {
		fprintf(stderr, "tcp-pingpong: out of memory\n");
		goto out_free;
	}
	memset(buf, 0x5a, size);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
		fprintf(stderr, "tcp-pingpong: connect to %s failed: %s\n", addr, strerror(errno));
		goto out_close;
	}
	tpp_nodelay(fd);
	rc = tpp_io_full(fd, hdr, sizeof(hdr), true);
	for (uint64_t i = 0; !rc && i < warmup; i++) {
		rc = tpp_io_full(fd, buf, size, true);
		if (!rc)
			rc = tpp_io_full(fd, buf, size, false);
	}
	t_start = tpp_now_ns();
	for (uint64_t i = 0; !rc && i < iters; i++) {
		t0 = tpp_now_ns();
		rc = tpp_io_full(fd, buf, size, true);
		if (!rc)
			rc = tpp_io_full(fd, buf, size, false);
		lat[i] = tpp_now_ns() - t0;
		sum += lat[i];
	}
	secs = (double)(tpp_now_ns() - t_start) / 1e9;
	if (rc) {
		fprintf(stderr, "tcp-pingpong: connection to %s lost: %s\n", addr, strerror(-rc));
		goto out_close;
	}
	qsort(lat, iters, sizeof(*lat), tpp_cmp_u64);
	if (json) {
		printf("{\"tool\":\"tcp-pingpong\",\"bytes\":%u,\"iterations\":%" PRIu64
		       ",\"seconds\":%.6f,\"lat_p50_us\":%.3f,\"lat_p99_us\":%.3f,"
		       "\"lat_max_us\":%.3f,\"lat_mean_us\":%.3f}\n",
		       size, iters, secs, tpp_quantile_us(lat, iters, 0.5),
		       tpp_quantile_us(lat, iters, 0.99), (double)lat[iters - 1] / 1e3,
		       (double)sum / (double)iters / 1e3);
	} else {
		printf("tcp-pingpong: %u bytes, %" PRIu64 " round trips (after %" PRIu64
		       " warm-up), TCP_NODELAY\n",
		       size, iters, warmup);
		printf(" %-8s %-12s %-12s %-12s %-12s %-12s\n", "#bytes", "#iterations",
		       "RTT p50[us]", "RTT p99[us]", "RTT max[us]", "RTT mean[us]");
		printf(" %-8u %-12" PRIu64 " %-12.2f %-12.2f %-12.2f %-12.2f\n", size, iters,
		       tpp_quantile_us(lat, iters, 0.5), tpp_quantile_us(lat, iters, 0.99),
		       (double)lat[iters - 1] / 1e3, (double)sum / (double)iters / 1e3);
	}
	ret = 0;
out_close:
	if (fd >= 0)
		close(fd);
out_free:
	free(buf);
	free(lat);
	return ret;
}

static const char tpp_help[] =
	"usage: tcp-pingpong --server IP:PORT [--persist]\n"
	"       tcp-pingpong --connect IP:PORT [-s SIZE] [-n ITERS] [-w WARMUP] [--format json]\n"
	"Round-trip latency of a SIZE-byte ping-pong over one TCP connection (TCP_NODELAY,\n"
	"blocking sockets). Defaults: -s 64, -n 20000, -w 1000. Prints RTT p50/p99 in us.\n";

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"server", required_argument, NULL, 'S'},
		{"connect", required_argument, NULL, 'C'},
		{"persist", no_argument, NULL, 'P'},
		{"size", required_argument, NULL, 's'},
		{"iters", required_argument, NULL, 'n'},
		{"warmup", required_argument, NULL, 'w'},
		{"format", required_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *server = NULL, *connect_to = NULL;
	unsigned long long v, size = 64, iters = 20000, warmup = 1000;
	bool json = false, persist = false;
	struct sockaddr_in sa;
	char *end;
	int c;

	signal(SIGPIPE, SIG_IGN);
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:n:w:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'S':
			server = optarg;
			break;
		case 'C':
			connect_to = optarg;
			break;
		case 'P':
			persist = true;
			break;
		case 's':
		case 'n':
		case 'w':
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || optarg[0] == '-' ||
			    (c != 'w' && v == 0) || (c == 's' && v > TPP_MAX_SIZE) ||
			    v > (1ull << 32))
				return tpp_usage_err("bad number", optarg);
			if (c == 's')
				size = v;
			else if (c == 'n')
				iters = v;
			else
				warmup = v;
			break;
		case 'f':
			if (!strcmp(optarg, "json"))
				json = true;
			else if (strcmp(optarg, "text"))
				return tpp_usage_err("unknown --format", optarg);
			break;
		case 'h':
			fputs(tpp_help, stdout);
			return 0;
		case ':':
			return tpp_usage_err("missing value for", argv[optind - 1]);
		default:
			return tpp_usage_err("unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return tpp_usage_err("unexpected argument", argv[optind]);
	if (!server == !connect_to)
		return tpp_usage_err("say --server IP:PORT or --connect IP:PORT", NULL);
	if (!tpp_addr_parse(server ? server : connect_to, server != NULL, &sa))
		return tpp_usage_err("bad address (IPv4:PORT)", server ? server : connect_to);
	if (server)
		return tpp_server(&sa, persist);
	return tpp_client(&sa, connect_to, (uint32_t)size, iters, warmup, json);
}
