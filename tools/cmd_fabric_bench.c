/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft fabric-bench: point-to-point transport benchmark, like perftest's
 * ib_write_bw / ib_read_bw / ib_send_lat. One server, one client:
 *
 *   weft fabric-bench --server [--addr IP:PORT]
 *   weft fabric-bench --connect IP:PORT --op write|read|send [-s SIZE] [-n N | -D S] [-q Q] [--lat]
 *
 * This file is the command: conf, command line, checks against the fabric's
 * limits. The client is fabric_bench_client.c, the server
 * fabric_bench_server.c and the wire format fabric_bench_proto.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/conf.h"
#include "common/log.h"
#include "tools/cli.h"
#include "tools/fabric_bench.h"

static const char fb_usage[] =
	"usage: weft fabric-bench --server [--addr IP:PORT] [--persist] [OPTIONS]\n"
	"       weft fabric-bench --connect IP:PORT [--op write|read|send] [-s SIZE]\n"
	"                         [-n ITERS | -D SECONDS] [-q OUTSTANDING] [--lat] [--verify]\n"
	"                         [--format plain|json] [OPTIONS]\n"
	"\n"
	"Point-to-point fabric benchmark, like perftest's ib_write_bw / ib_read_bw /\n"
	"ib_send_lat. Start the server, then the client; the client prints the result.\n"
	"\n"
	"  --server             wait for one client (--persist: for one client after another)\n"
	"  --addr IP:PORT       server address to listen on (default " FB_DEFAULT_ADDR ";\n"
	"                       port 0 picks a free port, shown in the ready line)\n"
	"  --connect IP:PORT    run the client against this server\n"
	"  --op OP              write (default), read or send\n"
	"  -s, --size SIZE      bytes per operation, K/M suffixes (default 64K, at most 64M)\n"
	"  -n, --iters N        operations to time (default 5000)\n"
	"  -D, --duration S     time the run for S seconds instead (progress each second)\n"
	"  -q, --outstanding Q  operations in flight in bandwidth mode (default 16)\n"
	"  --lat                latency mode: one operation in flight, round trip timed\n"
	"                       (send: echoed by a send; write: write_imm answered by a\n"
	"                       write_imm, like ib_write_lat; read: one read at a time)\n"
	"  --verify             fill every operation with a pattern and check it at the end\n"
	"  --backend B          tcp, ucx, verbs or auto (overrides ms_type)\n"
	"  --format F           plain (default) or json\n"
	"  -c, --conf PATH      conf file ([client] section); --ms_* / WEFT_MS_* also apply\n"
	"  -v, --verbose        keep the fabric's info logs\n"
	"  -h, --help           this text\n"
	"\n"
	"MB/s is 10^6 bytes per second. Latencies are per operation from post to completion\n"
	"(round trip in --lat mode; perftest's *_lat tools print half of it).\n"
	"Exit: 0 ok, 1 run-time failure, 2 bad usage.\n";

/* Options that belong to one role only, to reject them in the other. */
#define FB_GIVEN_CLIENT 0x1u
#define FB_GIVEN_SERVER 0x2u

static int fb_usage_err(const char *fmt, const char *arg)
{
	fprintf(stderr, "fabric-bench: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (try 'weft fabric-bench --help')\n");
	return 2;
}

/* "64", "64K", "1M", "2G" (powers of 1024) -> bytes; -EINVAL on anything else. */
static int fb_parse_u64(const char *s, bool suffix, uint64_t *v_out)
{
	unsigned long long v;
	uint64_t mul = 1;
	char *end;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	if (suffix && *end) {
		switch (*end) {
		case 'k':
		case 'K':
			mul = 1ull << 10;
			break;
		case 'm':
		case 'M':
			mul = 1ull << 20;
			break;
		case 'g':
		case 'G':
			mul = 1ull << 30;
			break;
		default:
			return -EINVAL;
		}
		end++;
		if (*end == 'i' && end[1] == 'B')
			end += 2;
		else if (*end == 'B')
			end++;
	}
	if (*end)
		return -EINVAL;
	if (v > UINT64_MAX / mul)
		return -ERANGE;
	*v_out = v * mul;
	return 0;
}

/* "IPv4:port" or "[IPv6]:port"; port 0 only where allowed. */
static bool fb_addr_valid(const char *s, bool port0_ok)
{
	const char *colon = strrchr(s, ':');
	char host[64];
	uint64_t port;
	unsigned char tmp[16];
	size_t hlen;

	if (!colon || colon == s)
		return false;
	hlen = (size_t)(colon - s);
	if (hlen >= sizeof(host))
		return false;
	memcpy(host, s, hlen);
	host[hlen] = '\0';
	if (fb_parse_u64(colon + 1, false, &port) < 0 || port > 65535 || (!port && !port0_ok))
		return false;
	if (host[0] == '[' && host[hlen - 1] == ']') {
		host[hlen - 1] = '\0';
		return inet_pton(AF_INET6, host + 1, tmp) == 1;
	}
	return inet_pton(AF_INET, host, tmp) == 1;
}

/* 1: go on; 0: --help was printed; 2: usage error (one line printed). */
static int fb_parse_args(int argc, char **argv, struct fb_opts *o)
{
	enum {
		OPT_SERVER = 256,
		OPT_PERSIST,
		OPT_ADDR,
		OPT_CONNECT,
		OPT_OP,
		OPT_LAT,
		OPT_VERIFY,
		OPT_BACKEND,
		OPT_FORMAT
	};
	static const struct option longopts[] = {
		{"server", no_argument, NULL, OPT_SERVER},
		{"persist", no_argument, NULL, OPT_PERSIST},
		{"addr", required_argument, NULL, OPT_ADDR},
		{"connect", required_argument, NULL, OPT_CONNECT},
		{"op", required_argument, NULL, OPT_OP},
		{"size", required_argument, NULL, 's'},
		{"iters", required_argument, NULL, 'n'},
		{"duration", required_argument, NULL, 'D'},
		{"outstanding", required_argument, NULL, 'q'},
		{"lat", no_argument, NULL, OPT_LAT},
		{"verify", no_argument, NULL, OPT_VERIFY},
		{"backend", required_argument, NULL, OPT_BACKEND},
		{"format", required_argument, NULL, OPT_FORMAT},
		{"conf", required_argument, NULL, 'c'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *backend = NULL, *connect = NULL, *listen = NULL;
	unsigned int given = 0;
	bool q_given = false;
	uint64_t v;
	int c;

	o->op = FB_OP_WRITE;
	o->size = 64 * 1024;
	o->outstanding = 16;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":s:n:D:q:c:vh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SERVER:
			o->server = true;
			break;
		case OPT_PERSIST:
			o->persist = true;
			given |= FB_GIVEN_SERVER;
			break;
		case OPT_ADDR:
			listen = optarg;
			given |= FB_GIVEN_SERVER;
			break;
		case OPT_CONNECT:
			connect = optarg;
			break;
		case OPT_OP:
			given |= FB_GIVEN_CLIENT;
			if (!strcmp(optarg, "write"))
				o->op = FB_OP_WRITE;
			else if (!strcmp(optarg, "read"))
				o->op = FB_OP_READ;
			else if (!strcmp(optarg, "send"))
				o->op = FB_OP_SEND;
			else
				return fb_usage_err("unknown --op '%s' (write, read or send)",
						    optarg);
			break;
		case 's':
			given |= FB_GIVEN_CLIENT;
			if (fb_parse_u64(optarg, true, &v) < 0)
				return fb_usage_err("bad size '%s' (bytes, K/M suffixes)", optarg);
			if (v == 0 || v > FB_MAX_SIZE)
				return fb_usage_err("size '%s' out of range (1 to 64M)", optarg);
			o->size = v;
			break;
		case 'n':
			given |= FB_GIVEN_CLIENT;
			if (fb_parse_u64(optarg, false, &v) < 0 || v == 0 || v > (1ull << 40))
				return fb_usage_err("bad iteration count '%s' (a positive number)",
						    optarg);
			o->iters = v;
			break;
		case 'D':
			given |= FB_GIVEN_CLIENT;
			if (fb_parse_u64(optarg, false, &v) < 0 || v == 0 || v > 86400)
				return fb_usage_err("bad duration '%s' (1 to 86400 seconds)",
						    optarg);
			o->duration_s = v;
			break;
		case 'q':
			given |= FB_GIVEN_CLIENT;
			if (fb_parse_u64(optarg, false, &v) < 0 || v == 0 || v > FB_MAX_OUTSTANDING)
				return fb_usage_err("bad outstanding count '%s' (1 to 1024)",
						    optarg);
			o->outstanding = (uint32_t)v;
			q_given = true;
			break;
		case OPT_LAT:
			given |= FB_GIVEN_CLIENT;
			o->lat = true;
			break;
		case OPT_VERIFY:
			given |= FB_GIVEN_CLIENT;
			o->verify = true;
			break;
		case OPT_BACKEND:
			if (strcmp(optarg, "tcp") && strcmp(optarg, "ucx") &&
			    strcmp(optarg, "verbs") && strcmp(optarg, "auto"))
				return fb_usage_err(
					"unknown --backend '%s' (tcp, ucx, verbs or auto)", optarg);
			backend = optarg;
			break;
		case OPT_FORMAT:
			if (cli_format_parse("weft fabric-bench", optarg, &o->json) != 0)
				return 2;
			break;
		case 'c':
			break; /* loaded before getopt: fb_find_conf_arg */
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			fputs(fb_usage, stdout);
			return 0;
		case ':':
			return fb_usage_err("option '%s' needs a value", argv[optind - 1]);
		default:
			return fb_usage_err("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return fb_usage_err("unexpected argument '%s'", argv[optind]);
	if (o->server && connect)
		return fb_usage_err("%s", "--server and --connect exclude each other");
	if (!o->server && !connect)
		return fb_usage_err("%s", "say --server or --connect IP:PORT");
	if (o->server && (given & FB_GIVEN_CLIENT))
		return fb_usage_err("%s", "--op, -s, -n, -D, -q, --lat and --verify are client "
					  "options (the client tells the server)");
	if (!o->server && (given & FB_GIVEN_SERVER))
		return fb_usage_err("%s", "--addr and --persist are server options "
					  "(the client takes --connect IP:PORT)");
	o->addr = o->server ? (listen ? listen : FB_DEFAULT_ADDR) : connect;
	if (!fb_addr_valid(o->addr, o->server))
		return fb_usage_err("bad address '%s' (IP:PORT)", o->addr);
	if (o->iters && o->duration_s)
		return fb_usage_err("%s", "-n and -D exclude each other");
	if (!o->iters && !o->duration_s)
		o->iters = 5000;
	if (o->lat && q_given && o->outstanding != 1)
		return fb_usage_err("%s", "--lat keeps one operation in flight: drop -q");
	if (o->lat)
		o->outstanding = 1;
	if (o->size * o->outstanding > FB_MAX_BUF)
		return fb_usage_err("%s", "size x outstanding exceeds 1G: lower -s or -q");
	o->backend = backend;
	return 1; /* go on */
}

/* A backend asked for by name must be compiled in: that is a usage error. */
static bool fb_backend_built(const char *want)
{
	const char *const *names = fab_backend_names();
	char built[64] = "";

	if (!want || !*want || !strcmp(want, "auto"))
		return true;
	for (size_t i = 0; names[i]; i++) {
		if (!strcmp(names[i], want))
			return true;
		snprintf(built + strlen(built), sizeof(built) - strlen(built), "%s%s",
			 i ? ", " : "", names[i]);
	}
	fprintf(stderr, "fabric-bench: backend '%s' is not built into this weft (built: %s)\n",
		want, built);
	return false;
}

/* -c/--conf must be loaded before env and flags, so find it before getopt runs. */
static const char *fb_find_conf_arg(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if ((!strcmp(argv[i], "-c") || !strcmp(argv[i], "--conf")) && i + 1 < argc)
			return argv[i + 1];
		if (!strncmp(argv[i], "--conf=", 7))
			return argv[i] + 7;
	}
	return NULL;
}

int cli_fabric_bench_main(int argc, char **argv)
{
	struct fb_opts o = {0};
	struct conf *conf = NULL;
	const char *conf_path;
	int rc, ret = 2;

	signal(SIGPIPE, SIG_IGN);
	rc = conf_create("client", &conf);
	if (rc < 0) {
		fprintf(stderr, "fabric-bench: conf: %s\n", strerror(-rc));
		return 1;
	}
	conf_path = fb_find_conf_arg(argc, argv);
	if (conf_path) {
		if (conf_load_file(conf, conf_path) < 0)
			goto out; /* conf named the file (and line and key) */
	}
	/* --ms_*=... flags are consumed here, so getopt only sees ours. */
	if (conf_apply_env(conf) < 0 || conf_apply_args(conf, &argc, argv) < 0)
		goto out;
	rc = fb_parse_args(argc, argv, &o);
	if (rc != 1) {
		ret = rc; /* 0 after --help, 2 after a usage error */
		goto out;
	}
	fab_domain_attr_init(&o.attr);
	fab_domain_attr_from_conf(&o.attr, conf);
	if (o.backend)
		o.attr.backend = o.backend;
	if (!o.verbose)
		weft_log_set_level(WEFT_LOG_ERROR);
	if (!fb_backend_built(o.attr.backend))
		goto out; /* said which */
	if (o.attr.msg_size < FB_CTRL_LEN) {
		fprintf(stderr,
			"fabric-bench: ms_msg_size %u is below the %u bytes the control "
			"messages need (raise --ms_msg_size)\n",
			o.attr.msg_size, FB_CTRL_LEN);
		goto out;
	}
	if (!o.server && o.op == FB_OP_SEND && o.size > o.attr.msg_size) {
		fprintf(stderr,
			"fabric-bench: -s %" PRIu64 " exceeds ms_msg_size %u, the largest send "
			"(raise it with --ms_msg_size=%" PRIu64 " on both sides)\n",
			o.size, o.attr.msg_size, o.size);
		goto out;
	}
	if (o.outstanding + 2 > o.attr.sq_depth) {
		fprintf(stderr,
			"fabric-bench: -q %u needs a send queue of %u (raise --ms_sq_depth)\n",
			o.outstanding, o.outstanding + 2);
		goto out;
	}
	ret = o.server ? fb_server_main(&o) : fb_client_main(&o);
out:
	conf_destroy(conf);
	return ret;
}
