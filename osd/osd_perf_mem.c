/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft-osd resources: osd_memory_target and osd_numa_node.
 *
 * Memory: at start-up the registered pools (now allocated), the replication
 * rings this OSD will host (one per primary that replicates to it; two are
 * assumed, the minimum for a size-3 pool; more peers add osd_repl_ring_size
 * each) and a fixed allowance for the store (RocksDB, WAL buffers) must fit
 * in the target, else the OSD refuses to start. At run time RSS is sampled
 * once a second; above the target it logs once and sheds what can be shed:
 * the store's idle data buffers are freed (bufcache, capped at a quarter of
 * the store allowance, less for a small target: osd_mem_bufcache_limit)
 * and free heap pages go back to the kernel
 * (malloc_trim). The store's other memory is bounded by itself: its
 * object-record cache (32 MiB, clean records evicted) and RocksDB (2 x 16
 * MiB memtables, an 8 MiB block cache); nothing else is sheddable yet
 * (docs/osd.md).
 *
 * NUMA: "auto" takes the node of the NIC holding the public (else cluster)
 * address from sysfs, or of rdma_device; -1 disables; N forces a node. The
 * reactor thread is pinned to that node's CPUs and its allocations prefer
 * that node (set before the pools are allocated and first touched).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <malloc.h>
#include <net/if.h>
#include <numa.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd.h"
#include "osd/osd_perf.h"
#include "osd/store/bufcache.h"

#define OSD_MEM_STORE_ALLOWANCE (128ull << 20) /* RocksDB, WAL, heap baseline */
#define OSD_MEM_RINGS_ASSUMED	2

uint64_t osd_mem_rss(void)
{
	unsigned long long size, rss;
	FILE *f = fopen("/proc/self/statm", "r");
	int n;

	if (f == NULL)
		return 0;
	n = fscanf(f, "%llu %llu", &size, &rss);
	fclose(f);
	return n == 2 ? rss * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

/*
 * The idle buffer cache is the one elastic term of the store allowance (its
 * record cache and RocksDB are fixed): a quarter of it, 32 MiB, from a 512
 * MiB target up, and a sixteenth of the target below (16 MiB at 256M, where
 * the 32 left the peak RSS within 8 MiB of the target under ASan in the
 * verbs VM). What it does not keep is allocated again per large write.
 */
static size_t osd_mem_bufcache_limit(uint64_t target)
{
	uint64_t lim = OSD_MEM_STORE_ALLOWANCE / 4;

	return (size_t)(target / 16 < lim ? target / 16 : lim);
}

int osd_mem_check(struct osd *osd)
{
	struct osd_perf *p = osd->perf;
	uint64_t pools = osd_perf_registered_bytes(osd); /* pools + the fabric's own buffers */
	uint64_t rings = OSD_MEM_RINGS_ASSUMED * osd->ring_size;
	uint64_t need = pools + rings + OSD_MEM_STORE_ALLOWANCE;

	p->mem_target = conf_get_size(osd->conf, CONF_OSD_MEMORY_TARGET);
	if (need > p->mem_target) {
		log_error(
		    "osd",
		    "%s: osd_memory_target %llu MiB is too small: registered %llu MiB + "
		    "%u replication rings of %llu MiB + %llu MiB for the store need %llu MiB; "
		    "raise osd_memory_target or lower osd_op_buffers/osd_repl_ring_size",
		    osd->name, (unsigned long long)(p->mem_target >> 20),
		    (unsigned long long)(pools >> 20), OSD_MEM_RINGS_ASSUMED,
		    (unsigned long long)(osd->ring_size >> 20),
		    (unsigned long long)(OSD_MEM_STORE_ALLOWANCE >> 20),
		    (unsigned long long)(need >> 20));
		return -ENOMEM;
	}
	bufcache_set_limit(osd_mem_bufcache_limit(p->mem_target));
	log_info("osd", "%s: memory: target %llu MiB, registered %llu MiB, rings %llu MiB each",
		 osd->name, (unsigned long long)(p->mem_target >> 20),
		 (unsigned long long)(pools >> 20), (unsigned long long)(osd->ring_size >> 20));
	return 0;
}

void osd_mem_tick(struct osd *osd)
{
	struct osd_perf *p = osd->perf;
	uint64_t now = clock_now_ms(), rss;

	if (now < p->next_mem_ms)
		return;
	p->next_mem_ms = now + 1000;
	rss = osd_mem_rss();
	if (rss > p->rss_peak)
		p->rss_peak = rss;
	if (p->mem_target == 0)
		return;
	if (rss > p->mem_target) {
		if (!p->over_target) {
			p->over_target = true;
			p->over_events++;
			log_warn("osd",
				 "%s: RSS %llu MiB over osd_memory_target %llu MiB "
				 "(registered %llu MiB): trimming the heap",
				 osd->name, (unsigned long long)(rss >> 20),
				 (unsigned long long)(p->mem_target >> 20),
				 (unsigned long long)(osd_perf_registered_bytes(osd) >> 20));
		}
		bufcache_trim();
		malloc_trim(0);
		p->sheds++;
	} else if (p->over_target && rss < p->mem_target / 10 * 9) {
		p->over_target = false;
		log_info("osd", "%s: RSS %llu MiB back under osd_memory_target", osd->name,
			 (unsigned long long)(rss >> 20));
	}
}

/* Interface holding ip, or "" */
static void osd_numa_ifname(const char *ip, char *name, size_t cap)
{
	struct ifaddrs *ifa, *i;
	char buf[INET6_ADDRSTRLEN];

	name[0] = '\0';
	if (ip[0] == '\0' || getifaddrs(&ifa) != 0)
		return;
	for (i = ifa; i; i = i->ifa_next) {
		const void *a;

		if (i->ifa_addr == NULL)
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			a = &((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		else if (i->ifa_addr->sa_family == AF_INET6)
			a = &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr;
		else
			continue;
		if (inet_ntop(i->ifa_addr->sa_family, a, buf, sizeof(buf)) && !strcmp(buf, ip)) {
			snprintf(name, cap, "%s", i->ifa_name);
			break;
		}
	}
	freeifaddrs(ifa);
}

/* Node from a sysfs numa_node file: >= 0, or -1 (no file, or -1 in it: no NUMA info). */
static int osd_numa_read(const char *path)
{
	FILE *f = fopen(path, "r");
	int node = -1;

	if (f == NULL)
		return -1;
	if (fscanf(f, "%d", &node) != 1)
		node = -1;
	fclose(f);
	return node;
}

static int osd_numa_auto(struct osd *osd, char *why, size_t cap)
{
	const char *dev = conf_get_str(osd->conf, CONF_RDMA_DEVICE);
	static const enum conf_key keys[] = {CONF_PUBLIC_ADDR, CONF_CLUSTER_ADDR};
	char path[256], ifn[IF_NAMESIZE + 1];
	int node;

	if (dev != NULL && dev[0] != '\0') {
		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/numa_node", dev);
		node = osd_numa_read(path);
		/* The reason is for a log line: a truncated path there is fine. */
		if (snprintf(why, cap, "rdma_device %s: %s", dev, node >= 0 ? path : "no NUMA info") >=
		    (int)cap)
			why[cap - 1] = '\0';
		if (node >= 0)
			return node;
	}
	for (unsigned int k = 0; k < 2; k++) {
		unsigned int n = 0;
		const struct conf_addr *a = conf_get_addrs(osd->conf, keys[k], &n);

		if (n == 0)
			continue;
		osd_numa_ifname(a[0].ip, ifn, sizeof(ifn));
		if (ifn[0] == '\0') {
			snprintf(why, cap, "%s: no interface holds it", a[0].ip);
			continue;
		}
		snprintf(path, sizeof(path), "/sys/class/net/%s/device/numa_node", ifn);
		node = osd_numa_read(path);
		snprintf(why, cap, "%s on %s: %s", a[0].ip, ifn,
			 node >= 0 ? "sysfs numa_node" : "no NUMA info (virtual or single node)");
		if (node >= 0)
			return node;
	}
	if (why[0] == '\0')
		snprintf(why, cap, "no public/cluster address or rdma_device to look up");
	return -1;
}

int osd_numa_setup(struct osd *osd)
{
	struct osd_perf *p = osd->perf;
	const char *v = conf_get_str(osd->conf, CONF_OSD_NUMA_NODE);
	char why[128] = "";
	struct bitmask *cpus;
	cpu_set_t set;
	char *end;
	int node, ncpu = 0;

	if (!strcmp(v, "auto")) {
		node = osd_numa_auto(osd, why, sizeof(why));
	} else {
		long n = strtol(v, &end, 10);

		if (*end != '\0' || end == v || n < -1 || n > 1023) {
			log_error("osd",
				  "%s: osd_numa_node '%s': expected auto, -1 or a node number",
				  osd->name, v);
			return -EINVAL;
		}
		node = (int)n;
		snprintf(why, sizeof(why), "osd_numa_node = %s", v);
	}
	if (node < 0) {
		snprintf(p->numa_why, sizeof(p->numa_why), "not pinned: %s", why);
		log_info("osd", "%s: NUMA: %s", osd->name, p->numa_why);
		return 0;
	}
	if (numa_available() < 0 || node > numa_max_node()) {
		snprintf(p->numa_why, sizeof(p->numa_why), "not pinned: node %d unavailable (%s)",
			 node, why);
		log_warn("osd", "%s: NUMA: %s", osd->name, p->numa_why);
		return 0;
	}
	cpus = numa_allocate_cpumask();
	if (cpus == NULL || numa_node_to_cpus(node, cpus) != 0) {
		numa_free_cpumask(cpus);
		snprintf(p->numa_why, sizeof(p->numa_why), "not pinned: no CPU list for node %d",
			 node);
		log_warn("osd", "%s: NUMA: %s", osd->name, p->numa_why);
		return 0;
	}
	CPU_ZERO(&set);
	for (unsigned int c = 0; c < cpus->size && c < CPU_SETSIZE; c++)
		if (numa_bitmask_isbitset(cpus, c)) {
			CPU_SET(c, &set);
			ncpu++;
		}
	numa_free_cpumask(cpus);
	if (ncpu == 0 || sched_setaffinity(0, sizeof(set), &set) != 0) {
		snprintf(p->numa_why, sizeof(p->numa_why), "not pinned: node %d: %s", node,
			 ncpu ? strerror(errno) : "no CPUs");
		log_warn("osd", "%s: NUMA: %s", osd->name, p->numa_why);
		return 0;
	}
	/* registered pools are allocated and first touched by this thread after this */
	numa_set_preferred(node);
	p->numa_node = node;
	snprintf(p->numa_why, sizeof(p->numa_why), "%s", why);
	log_info("osd",
		 "%s: NUMA: reactor pinned to node %d (%d CPUs), memory preferred there (%s)",
		 osd->name, node, ncpu, why);
	return 0;
}
