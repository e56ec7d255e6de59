/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft doctor: check a node before deployment. RDMA devices and ports
 * (state, link layer, MTU, speed), GIDs (RoCE v1/v2, netdev, IP), the NUMA
 * node of each NIC, the memlock limit, hugepages, and which backend
 * ms_type=auto picks here. With -c CONF, the rdma_device / rdma_port /
 * rdma_gid_index of the conf must exist and be usable.
 *
 * Exit: 0 ok (RDMA usable), 1 problems found, 2 bad usage,
 *       3 no RDMA device, but the TCP fallback works (ms_type auto or tcp).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <jansson.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/log.h"
#include "fabric/fabric.h"
#include "tools/cli.h"

#ifdef WEFT_HAVE_VERBS
#include <infiniband/verbs.h>
#endif

#define DOC_EXIT_OK 0
#define DOC_EXIT_PROBLEMS 1
#define DOC_EXIT_USAGE 2
#define DOC_EXIT_TCP_ONLY 3

static const char doc_usage[] =
	"usage: weft doctor [-c CONF] [--name ENTITY] [--format plain|json]\n"
	"\n"
	"Check this node for Weft: RDMA devices, ports (state, link layer, active MTU,\n"
	"speed), GIDs (RoCE v1/v2, netdev, IP), NUMA node of each NIC, memlock limit,\n"
	"hugepages, and which backend ms_type=auto picks. With -c, the rdma_device,\n"
	"rdma_port and rdma_gid_index of the conf must exist and be usable.\n"
	"\n"
	"  -c, --conf PATH   conf file to check against (section of --name)\n"
	"  --name ENTITY     conf entity (default osd)\n"
	"  --format F        plain (default) or json\n"
	"  -h, --help        this text\n"
	"\n"
	"Exit: 0 ok, 1 problems found, 2 bad usage,\n"
	"      3 no RDMA device here but the TCP fallback works (ms_type auto or tcp).\n";

struct doc {
	json_t *root;
	json_t *checks;
	json_t *devices;
	int problems;
	int rdma_ok; /* usable devices (an ACTIVE port) */
	bool text;
};

/* One verdict: "ok", "warn" or "fail" (a problem), with one line of detail. */
static void doc_check(struct doc *d, const char *name, const char *verdict, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void doc_check(struct doc *d, const char *name, const char *verdict, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!strcmp(verdict, "fail"))
		d->problems++;
	json_array_append_new(d->checks, json_pack("{s:s, s:s, s:s}", "check", name, "result",
						   verdict, "detail", msg));
	if (d->text)
		printf("[%-4s] %-10s %s\n", verdict, name, msg);
}

static long doc_read_long(const char *path, long dflt)
{
	FILE *f = fopen(path, "r");
	long v = dflt;

	if (!f)
		return dflt;
	if (fscanf(f, "%ld", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

#ifdef WEFT_HAVE_VERBS
static const char *doc_port_state(enum ibv_port_state s)
{
	static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE",
					     "ACTIVE_DEFER" };

	return (unsigned int)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static int doc_mtu(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128 << m : 0;
}

/* Link speed in Gb/s from the IB width and speed codes. */
static double doc_speed_gbps(const struct ibv_port_attr *pa)
{
	double lane;
	int width;

	switch (pa->active_width) {
	case 1: width = 1; break;
	case 2: width = 4; break;
	case 4: width = 8; break;
	case 8: width = 12; break;
	case 16: width = 2; break;
	default: width = 0; break;
	}
	switch (pa->active_speed) {
	case 1: lane = 2.5; break;
	case 2: lane = 5.0; break;
	case 4: case 8: lane = 10.0; break;
	case 16: lane = 14.0625; break;
	case 32: lane = 25.78125; break;
	case 64: lane = 53.125; break;
	case 128: lane = 106.25; break;
	default: lane = 0; break;
	}
	return lane * width;
}

static const char *doc_gid_type(enum ibv_gid_type t)
{
	switch (t) {
	case IBV_GID_TYPE_IB:
		return "IB";
	case IBV_GID_TYPE_ROCE_V1:
		return "RoCE v1";
	case IBV_GID_TYPE_ROCE_V2:
		return "RoCE v2";
	}
	return "?";
}

/* The GIDs of one port that are in use. Returns how many are RoCE v2. */
static int doc_gids(struct doc *d, struct ibv_context *ctx, uint8_t port, int tbl_len,
		    json_t *jport)
{
	json_t *jg = json_array();
	int v2 = 0;

	for (int i = 0; i < tbl_len && i < 256; i++) {
		struct ibv_gid_entry e;
		char gid[INET6_ADDRSTRLEN] = "", ip[INET6_ADDRSTRLEN] = "", ifn[IF_NAMESIZE] = "";

		if (ibv_query_gid_ex(ctx, port, (uint32_t)i, &e, 0))
			continue;
		inet_ntop(AF_INET6, e.gid.raw, gid, sizeof(gid));
		/* RoCE GIDs are the netdev's addresses; ::ffff:a.b.c.d is IPv4 */
		if (e.gid_type != IBV_GID_TYPE_IB) {
			static const uint8_t v4pfx[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

			if (!memcmp(e.gid.raw, v4pfx, 12))
				inet_ntop(AF_INET, e.gid.raw + 12, ip, sizeof(ip));
			else
				snprintf(ip, sizeof(ip), "%s", gid);
		}
		if (e.ndev_ifindex)
			if_indextoname(e.ndev_ifindex, ifn);
		v2 += e.gid_type == IBV_GID_TYPE_ROCE_V2;
		json_array_append_new(jg, json_pack("{s:i, s:s, s:s, s:s, s:s}", "index", i, "gid",
						    gid, "type", doc_gid_type(e.gid_type),
						    "netdev", ifn, "ip", ip));
		if (d->text)
			printf("         gid %-3d %-8s %-40s %s %s\n", i, doc_gid_type(e.gid_type),
			       gid, ifn, ip);
	}
	json_object_set_new(jport, "gids", jg);
	return v2;
}

static void doc_device(struct doc *d, struct ibv_device *dev)
{
	const char *name = ibv_get_device_name(dev);
	struct ibv_context *ctx = ibv_open_device(dev);
	struct ibv_device_attr da;
	json_t *jd, *jports;
	char path[256];
	long numa;

	if (!ctx) {
		doc_check(d, "device", "fail", "%s: cannot open: %s", name, strerror(errno));
		return;
	}
	if (ibv_query_device(ctx, &da)) {
		doc_check(d, "device", "fail", "%s: query failed", name);
		ibv_close_device(ctx);
		return;
	}
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/numa_node", name);
	numa = doc_read_long(path, -1);
	jd = json_pack("{s:s, s:s, s:i, s:I}", "name", name, "transport",
		       ibv_node_type_str(dev->node_type), "ports", da.phys_port_cnt, "numa_node",
		       (json_int_t)numa);
	jports = json_array();
	if (d->text)
		printf("         device %s (%s), %u port(s), NUMA node %ld%s\n", name,
		       ibv_node_type_str(dev->node_type), da.phys_port_cnt, numa,
		       numa < 0 ? " (none/unknown)" : "");
	for (uint8_t p = 1; p <= da.phys_port_cnt; p++) {
		struct ibv_port_attr pa;
		json_t *jp;
		const char *ll;
		int v2;

		if (ibv_query_port(ctx, p, &pa))
			continue;
		ll = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand";
		jp = json_pack("{s:i, s:s, s:s, s:i, s:i, s:f, s:i}", "port", p, "state",
			       doc_port_state(pa.state), "link_layer", ll, "active_mtu",
			       doc_mtu(pa.active_mtu), "max_mtu", doc_mtu(pa.max_mtu), "speed_gbps",
			       doc_speed_gbps(&pa), "lid", pa.lid);
		if (d->text)
			printf("         port %u: %s, %s, active MTU %d (max %d), %.1f Gb/s%s\n", p,
			       doc_port_state(pa.state), ll, doc_mtu(pa.active_mtu),
			       doc_mtu(pa.max_mtu), doc_speed_gbps(&pa),
			       pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "" : ", LID in use");
		v2 = doc_gids(d, ctx, p, pa.gid_tbl_len, jp);
		json_array_append_new(jports, jp);
		if (pa.state != IBV_PORT_ACTIVE) {
			doc_check(d, "port", "warn", "%s port %u is %s (not usable until ACTIVE: "
				  "check the link / subnet manager)", name, p,
				  doc_port_state(pa.state));
			continue;
		}
		d->rdma_ok++;
		if (pa.link_layer == IBV_LINK_LAYER_ETHERNET && v2 == 0)
			doc_check(d, "gid", "warn", "%s port %u has no RoCE v2 GID (routable RoCE "
				  "needs one: give the netdev an IP address)", name, p);
		if (pa.active_mtu < pa.max_mtu && pa.link_layer == IBV_LINK_LAYER_ETHERNET)
			doc_check(d, "mtu", "warn", "%s port %u: active MTU %d < max %d (raise the "
				  "netdev MTU: ip link set DEV mtu 9000)", name, p,
				  doc_mtu(pa.active_mtu), doc_mtu(pa.max_mtu));
	}
	json_object_set_new(jd, "port_list", jports);
	json_array_append_new(d->devices, jd);
	ibv_close_device(ctx);
}

/* The conf's device / port / GID must exist and be usable. */
static void doc_conf_rdma(struct doc *d, const struct conf *conf)
{
	const char *want = conf_get_str(conf, CONF_RDMA_DEVICE);
	int port = (int)conf_get_int(conf, CONF_RDMA_PORT);
	int gidx = (int)conf_get_int(conf, CONF_RDMA_GID_INDEX);
	struct ibv_device **list;
	int n = 0, found = 0;

	if (!want || !want[0]) {
		doc_check(d, "conf", "ok", "rdma_device is empty: the first ACTIVE device is used");
		return;
	}
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n; i++) {
		struct ibv_context *ctx;
		struct ibv_port_attr pa;
		union ibv_gid gid;
		static const uint8_t zero[16];

		if (strcmp(ibv_get_device_name(list[i]), want))
			continue;
		found = 1;
		ctx = ibv_open_device(list[i]);
		if (!ctx || ibv_query_port(ctx, (uint8_t)port, &pa)) {
			doc_check(d, "conf", "fail", "rdma_device %s has no port %d (rdma_port)", want,
				  port);
		} else if (pa.state != IBV_PORT_ACTIVE) {
			doc_check(d, "conf", "fail", "rdma_device %s port %d is %s, not ACTIVE", want,
				  port, doc_port_state(pa.state));
		} else if (gidx >= 0 && (gidx >= pa.gid_tbl_len ||
					 ibv_query_gid(ctx, (uint8_t)port, gidx, &gid) ||
					 !memcmp(gid.raw, zero, 16))) {
			doc_check(d, "conf", "fail", "rdma_gid_index %d not found on %s port %d (see "
				  "the GID list above)", gidx, want, port);
		} else {
			doc_check(d, "conf", "ok", "rdma_device %s port %d%s%d: present and ACTIVE",
				  want, port, gidx >= 0 ? " gid " : " gid auto", gidx >= 0 ? gidx : 0);
		}
		if (ctx)
			ibv_close_device(ctx);
	}
	if (list)
		ibv_free_device_list(list);
	if (!found)
		doc_check(d, "conf", "fail", "rdma_device '%s' does not exist on this node", want);
}
#endif

static void doc_memlock(struct doc *d)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl)) {
		doc_check(d, "memlock", "warn", "getrlimit: %s", strerror(errno));
		return;
	}
	json_object_set_new(d->root, "memlock_kib",
			    rl.rlim_cur == RLIM_INFINITY ? json_string("unlimited")
							 : json_integer((json_int_t)(rl.rlim_cur / 1024)));
	if (rl.rlim_cur == RLIM_INFINITY)
		doc_check(d, "memlock", "ok", "unlimited");
	else if (geteuid() == 0)
		doc_check(d, "memlock", "ok", "%llu KiB, but running as root (CAP_IPC_LOCK) "
			  "ignores it; a daemon running as another user needs more",
			  (unsigned long long)(rl.rlim_cur / 1024));
	else if (rl.rlim_cur < 512ull << 20)
		doc_check(d, "memlock", "fail", "%llu KiB is too low for registered pools: raise "
			  "it ('ulimit -l unlimited', LimitMEMLOCK=infinity in the systemd unit, or "
			  "'* - memlock unlimited' in /etc/security/limits.conf)",
			  (unsigned long long)(rl.rlim_cur / 1024));
	else
		doc_check(d, "memlock", "ok", "%llu KiB", (unsigned long long)(rl.rlim_cur / 1024));
}

static void doc_hugepages(struct doc *d, const struct conf *conf)
{
	long total = doc_read_long("/proc/sys/vm/nr_hugepages", 0);
	long freep = doc_read_long("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages", 0);
	bool want = conf && conf_get_bool(conf, CONF_MS_HUGEPAGES);

	json_object_set_new(d->root, "hugepages",
			    json_pack("{s:I, s:I, s:b}", "total_2m", (json_int_t)total, "free_2m",
				      (json_int_t)freep, "ms_hugepages", want));
	if (want && freep == 0)
		doc_check(d, "hugepages", "fail", "ms_hugepages is on but no free 2 MiB pages "
			  "(sysctl vm.nr_hugepages=N)");
	else
		doc_check(d, "hugepages", "ok", "%ld x 2 MiB configured, %ld free%s", total, freep,
			  want ? "" : " (ms_hugepages off)");
}

/* Open a domain the way a daemon would (ms_type=auto) and report what it got. */
static const char *doc_auto_backend(struct doc *d, const struct conf *conf)
{
	struct fab_domain_attr attr;
	struct fab_domain *dom;
	static char got[16];

	if (conf)
		fab_domain_attr_from_conf(&attr, conf);
	else
		fab_domain_attr_init(&attr);
	attr.backend = "auto";
	attr.name = "doctor";
	if (fab_domain_open(&attr, &dom)) {
		doc_check(d, "backend", "fail", "ms_type=auto opens no backend at all");
		return NULL;
	}
	snprintf(got, sizeof(got), "%s", fab_domain_backend(dom));
	fab_domain_close(dom);
	json_object_set_new(d->root, "auto_backend", json_string(got));
	doc_check(d, "backend", "ok", "ms_type=auto picks '%s' here", got);
	return got;
}

static int doc_parse(int argc, char **argv, const char **conf_out, const char **name_out,
		     bool *json_out)
{
	static const struct option opts[] = {
		{ "conf", required_argument, NULL, 'c' },
		{ "name", required_argument, NULL, 'N' },
		{ "format", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			*conf_out = optarg;
			break;
		case 'N':
			*name_out = optarg;
			break;
		case 'F':
			if (cli_format_parse("weft doctor", optarg, json_out) != 0)
				return DOC_EXIT_USAGE;
			break;
		case 'h':
			fputs(doc_usage, stdout);
			return 0;
		default:
			fprintf(stderr, "doctor: bad option '%s' (try 'weft doctor --help')\n",
				argv[optind - 1]);
			return DOC_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "doctor: unexpected argument '%s' (try 'weft doctor --help')\n",
			argv[optind]);
		return DOC_EXIT_USAGE;
	}
	return -1;
}

int cli_doctor_main(int argc, char **argv)
{
	const char *conf_path = NULL, *name = "osd", *ms_type = "auto", *got;
	struct conf *conf = NULL;
	struct doc d = { 0 };
	bool json = false;
	int rc, ndev = 0;

	rc = doc_parse(argc, argv, &conf_path, &name, &json);
	if (rc >= 0)
		return rc;
	weft_log_open("doctor", WEFT_LOG_ERROR, NULL);
	if (conf_create(name, &conf) < 0)
		return DOC_EXIT_USAGE;
	if (conf_path && conf_load_file(conf, conf_path) < 0) {
		conf_destroy(conf);
		return DOC_EXIT_PROBLEMS; /* conf printed which file, line and key */
	}
	ms_type = conf_get_str(conf, CONF_MS_TYPE);
	d.text = !json;
	d.root = json_object();
	d.checks = json_array();
	d.devices = json_array();
	if (d.text)
		printf("weft doctor: %s%s\n", conf_path ? "checking against " : "no conf given",
		       conf_path ? conf_path : "");
#ifdef WEFT_HAVE_VERBS
	struct ibv_device **list = ibv_get_device_list(&ndev);

	for (int i = 0; list && i < ndev; i++)
		doc_device(&d, list[i]);
	if (list)
		ibv_free_device_list(list);
	if (ndev == 0)
		doc_check(&d, "rdma", "warn", "no RDMA device (no driver loaded, or a kernel "
			  "without CONFIG_INFINIBAND; 'rdma link' lists them)");
	else if (d.rdma_ok == 0)
		doc_check(&d, "rdma", "fail", "%d RDMA device(s) but no ACTIVE port", ndev);
	else
		doc_check(&d, "rdma", "ok", "%d ACTIVE port(s) on %d device(s)", d.rdma_ok, ndev);
	if (conf_path)
		doc_conf_rdma(&d, conf);
#else
	doc_check(&d, "rdma", "warn", "this weft is built without the verbs backend "
		  "(WEFT_WITH_VERBS=OFF)");
#endif
	doc_memlock(&d);
	doc_hugepages(&d, conf);
	got = doc_auto_backend(&d, conf);
	if (!strcmp(ms_type, "verbs") && d.rdma_ok == 0)
		doc_check(&d, "ms_type", "fail", "the conf asks for ms_type=verbs but no RDMA port "
			  "is usable here");
	if (d.problems)
		rc = DOC_EXIT_PROBLEMS;
	else if (d.rdma_ok == 0 && got && !strcmp(got, "tcp"))
		rc = DOC_EXIT_TCP_ONLY;
	else
		rc = DOC_EXIT_OK;
	json_object_set_new(d.root, "devices", d.devices);
	json_object_set_new(d.root, "checks", d.checks);
	json_object_set_new(d.root, "problems", json_integer(d.problems));
	json_object_set_new(d.root, "exit_code", json_integer(rc));
	if (json) {
		json_dumpf(d.root, stdout, JSON_INDENT(2));
		printf("\n");
	} else {
		printf("weft doctor: %s\n", rc == DOC_EXIT_OK ? "OK: RDMA ready"
					    : rc == DOC_EXIT_TCP_ONLY
						    ? "no RDMA here; TCP fallback works (exit 3)"
						    : "problems found (exit 1)");
	}
	json_decref(d.root);
	conf_destroy(conf);
	return rc;
}
