/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft-fake-osd: a test process that speaks the OSD side of the monitor
 * protocol through the mon client: boots (registers), beacons, reports
 * peers failed, follows the map. It stores nothing. Used by
 * tests/test_mon_cluster.sh; every wait is bounded by --run.
 *
 *   weft-fake-osd -c CONF --uuid UUID [--host H] [--public ADDR] [--cluster ADDR]
 *                 [--want-id N] [--weight W16] [--beacon-ms MS] [--stop-beacon-after S]
 *                 [--report-failed ID]... [--report-when FILE] [--reboot]
 *                 [--usage-file FILE] [--run S]
 *
 * --want-id N: boot as osd.N, authenticating with osd.N's key from the
 * conf's keyring (expanded for osd.N); without it the fake is an OSD
 * without a name (osd.new, no key) that asks for a new id, which monitors
 * that authenticate refuse.
 * --report-when: report only once FILE exists (the test marks the fake out first).
 * --reboot: boot again when a map marks this fake down (as weft-osd does).
 *
 * Prints "booted osd.N epoch E" once registered and "epoch E" for every new map.
 * --usage-file: every second, PG_STATS with no PGs and the space read from
 * FILE ("TOTAL USED" in bytes; the report skipped while FILE is unreadable),
 * for tests/test_capacity.sh.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/conf.h"
#include "common/log.h"
#include "mon/monc/monc.h"

static volatile sig_atomic_t fake_stop;

static void fake_sig(int sig)
{
	fake_stop = 1;
}

struct fake {
	uint32_t id;
	bool booted;
	int boot_status;
	bool boot_done;
	bool reboot;	   /* --reboot: boot again when a map marks us down, as weft-osd does */
	bool boot_pending; /* a boot request is in flight */
	bool want_boot;
};

static void fake_stats_cb(struct monc *mc, int status, const char *out, size_t out_len,
			  const char *errmsg, void *arg)
{
	(void)mc, (void)status, (void)out, (void)out_len, (void)errmsg, (void)arg;
}

/* One PG_STATS with the space FILE holds; nothing if it cannot be read. */
static void fake_report_usage(struct monc *mc, uint32_t id, const char *file)
{
	struct proto_msg m = { .type = PROTO_PG_STATS };
	unsigned long long total, used;
	FILE *f = fopen(file, "r");
	int n;

	if (f == NULL)
		return;
	n = fscanf(f, "%llu %llu", &total, &used);
	fclose(f);
	if (n != 2)
		return;
	m.pg_stats.osd = id;
	m.pg_stats.epoch = monc_map(mc)->epoch;
	m.pg_stats.osd_stat.total = total;
	m.pg_stats.osd_stat.used = used;
	m.pg_stats.osd_stat.avail = used < total ? total - used : 0;
	m.pg_stats.osd_stat.data_used = used;
	monc_request(mc, &m, 2000, fake_stats_cb, NULL);
}

static void fake_map_cb(struct monc *mc, const struct mon_map *map, void *arg)
{
	struct fake *f = arg;
	const struct mon_osd *me = f->booted ? mon_map_osd(map, f->id) : NULL;

	printf("epoch %u\n", map->epoch);
	fflush(stdout);
	if (f->reboot && !f->boot_pending && me != NULL && !(me->state & MON_OSD_UP))
		f->want_boot = true;
}

static void fake_boot_cb(struct monc *mc, int status, const char *out, size_t out_len,
			 const char *errmsg, void *arg)
{
	struct fake *f = arg;
	const char *p;

	f->boot_pending = false;
	f->boot_done = true;
	f->boot_status = status;
	if (status != 0) {
		fprintf(stderr, "weft-fake-osd: boot refused: %s (%s)\n", errmsg, strerror(-status));
		return;
	}
	p = out != NULL ? memmem(out, out_len, "\"osd\": ", 7) : NULL;
	if (p == NULL) {
		f->boot_status = -EBADMSG;
		return;
	}
	f->id = (uint32_t)strtoul(p + 7, NULL, 10);
	f->booted = true;
}

int main(int argc, char **argv)
{
	struct proto_msg boot = { .type = PROTO_OSD_BOOT };
	struct proto_osd_boot *b = &boot.osd_boot;
	const char *file = NULL, *uuid = NULL, *host = "localhost", *pub = "127.1.0.100:6800";
	char name[32] = "osd.new";
	const char *cl = "", *report_when = NULL, *usage = NULL;
	uint32_t reports[16], nreports = 0;
	double run_s = 60, stop_after = -1;
	unsigned int beacon_ms = 500;
	struct fake f = { 0 };
	struct conf *conf;
	struct monc *mc;
	uint64_t start, next_beacon = 0, next_usage = 0;
	int ret = 1;

	b->want_id = PROTO_OSD_ID_NONE;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--reboot")) {
			f.reboot = true;
			continue;
		}
		if (v == NULL) {
			fprintf(stderr, "weft-fake-osd: %s needs a value\n", a);
			return 2;
		}
		i++;
		if (!strcmp(a, "-c"))
			file = v;
		else if (!strcmp(a, "--uuid"))
			uuid = v;
		else if (!strcmp(a, "--host"))
			host = v;
		else if (!strcmp(a, "--public"))
			pub = v;
		else if (!strcmp(a, "--cluster"))
			cl = v;
		else if (!strcmp(a, "--weight")) /* 16.16 fixed point; 1 keeps PGs away */
			b->weight = (uint32_t)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--want-id"))
			b->want_id = (uint32_t)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--beacon-ms"))
			beacon_ms = (unsigned int)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--stop-beacon-after"))
			stop_after = strtod(v, NULL);
		else if (!strcmp(a, "--usage-file"))
			usage = v;
		else if (!strcmp(a, "--run"))
			run_s = strtod(v, NULL);
		else if (!strcmp(a, "--report-when"))
			report_when = v;
		else if (!strcmp(a, "--report-failed") && nreports < 16)
			reports[nreports++] = (uint32_t)strtoul(v, NULL, 10);
		else {
			fprintf(stderr, "weft-fake-osd: unknown argument '%s'\n", a);
			return 2;
		}
	}
	if (file == NULL || uuid == NULL || mon_uuid_parse(uuid, b->uuid) != 0) {
		fprintf(stderr, "weft-fake-osd: -c CONF and a valid --uuid are required\n");
		return 2;
	}
	b->host_len = strlen(host);
	b->public_addr_len = strlen(pub);
	b->cluster_addr_len = strlen(cl);
	if (b->host_len > PROTO_NAME_MAX || b->public_addr_len > PROTO_ADDR_MAX ||
	    b->cluster_addr_len > PROTO_ADDR_MAX) {
		fprintf(stderr, "weft-fake-osd: host or address too long\n");
		return 2;
	}
	memcpy(b->host, host, b->host_len);
	memcpy(b->public_addr, pub, b->public_addr_len);
	memcpy(b->cluster_addr, cl, b->cluster_addr_len);
	signal(SIGTERM, fake_sig);
	signal(SIGINT, fake_sig);
	signal(SIGPIPE, SIG_IGN);
	if (b->want_id != PROTO_OSD_ID_NONE)
		snprintf(name, sizeof(name), "osd.%u", b->want_id);
	if (conf_create(name, &conf) != 0 || conf_load_file(conf, file) != 0 ||
	    conf_apply_env(conf) != 0)
		return 2;
	weft_log_open(name, WEFT_LOG_WARN, NULL);
	if (monc_create(conf, name, &mc) != 0) {
		fprintf(stderr, "weft-fake-osd: %s cannot talk to the monitors\n", name);
		goto out_conf;
	}
	monc_subscribe(mc, fake_map_cb, &f);
	start = clock_now_ms();
	f.boot_pending = true;
	if (monc_request(mc, &boot, (unsigned int)(run_s * 1000), fake_boot_cb, &f) != 0)
		goto out_monc;
	while (!fake_stop && clock_now_ms() - start < run_s * 1000) {
		uint64_t now = clock_now_ms();

		monc_wait(mc, 20);
		if (f.want_boot && !f.boot_pending) {
			f.want_boot = false;
			f.boot_pending = true;
			if (monc_request(mc, &boot, 10000, fake_boot_cb, &f) != 0)
				goto out_monc;
		}
		if (f.boot_done && f.boot_status != 0)
			goto out_monc;
		if (f.booted && f.boot_done) {
			printf("booted osd.%u epoch %u\n", f.id, monc_map(mc)->epoch);
			fflush(stdout);
			f.boot_done = false;
		}
		if (f.booted && usage != NULL && now >= next_usage) {
			next_usage = now + 1000;
			fake_report_usage(mc, f.id, usage);
		}
		if (!f.booted || now < next_beacon)
			continue;
		next_beacon = now + beacon_ms;
		if (stop_after < 0 || now - start < stop_after * 1000) {
			struct proto_msg m = { .type = PROTO_OSD_BEACON };

			m.osd_beacon.id = f.id;
			m.osd_beacon.epoch = monc_map(mc)->epoch;
			memcpy(m.osd_beacon.uuid, b->uuid, PROTO_UUID_LEN);
			monc_send(mc, &m);
		}
		for (uint32_t i = 0; i < nreports && (report_when == NULL || !access(report_when, F_OK));
		     i++) {
			struct proto_msg m = { .type = PROTO_OSD_FAILURE };

			if (reports[i] == f.id)
				continue;
			m.osd_failure.target = reports[i];
			m.osd_failure.reporter = f.id;
			m.osd_failure.epoch = monc_map(mc)->epoch;
			m.osd_failure.failed_ms = 1000;
			monc_send(mc, &m);
		}
	}
	ret = f.booted ? 0 : 1;
	if (!f.booted)
		fprintf(stderr, "weft-fake-osd: never booted\n");
out_monc:
	monc_destroy(mc);
out_conf:
	conf_destroy(conf);
	return ret;
}
