/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft sim --fanout N: the monitors' epoch fan-out, measured with real
 * connections. N mon clients (the library clients and OSDs use) subscribe
 * to the running cluster of --conf; a command makes a new epoch; we time
 * when the first and the last subscriber hold it. Each monitor pushes an
 * epoch to its own subscribers one after the other from its one loop
 * thread, so (last - first) / N is its cost per subscriber, and a cluster
 * of C clients over M monitors gets an epoch to all of them in about
 * commit + C / M x that cost (docs/scale.md states the model).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/log.h"
#include "mon/monc/monc.h"
#include "tools/sim/sim.h"

#define SIM_FANOUT_ROUNDS 5

static uint32_t sim_epoch(struct monc *mc)
{
	const struct mon_map *m = monc_map(mc);

	return m != NULL ? m->epoch : 0;
}

/* Progress every client until all hold epoch e; the times of the first and the last. */
static int sim_fanout_wait(struct monc **mc, unsigned int n, uint32_t e, double t0, double *first,
			   double *last)
{
	unsigned int have = 0;
	uint8_t *got = calloc(n, 1);

	if (got == NULL)
		return -ENOMEM;
	*first = -1;
	while (have < n) {
		if (sim_now() - t0 > 60) {
			free(got);
			return -ETIMEDOUT;
		}
		for (unsigned int i = 0; i < n; i++) {
			monc_progress(mc[i]);
			if (!got[i] && sim_epoch(mc[i]) >= e) {
				got[i] = 1;
				have++;
				*last = sim_now() - t0;
				if (*first < 0)
					*first = *last;
			}
		}
	}
	free(got);
	return 0;
}

int sim_fanout(const char *conf_file, unsigned int n, FILE *csv)
{
	struct conf *conf = NULL;
	struct monc **mc = calloc(n + 1, sizeof(*mc));
	char errmsg[256], name[32];
	double sum_first = 0, sum_span = 0;
	int rc = -ENOMEM;

	if (mc == NULL || conf_create("client.admin", &conf) != 0)
		goto out;
	rc = conf_load_file(conf, conf_file);
	if (rc != 0) {
		fprintf(stderr, "weft sim: cannot load %s\n", conf_file);
		goto out;
	}
	weft_log_set_level(WEFT_LOG_ERROR);
	for (unsigned int i = 0; i <= n; i++) {
		/* all as client.admin: the subscribers need a key, and the admin keyring has one */
		snprintf(name, sizeof(name), "client.admin");
		rc = monc_create(conf, name, &mc[i]);
		if (rc != 0) {
			fprintf(stderr, "weft sim: mon client %u: %s (raise ulimit -n?)\n", i,
				strerror(-rc));
			goto out;
		}
		if (i < n)
			monc_subscribe(mc[i], NULL, NULL);
	}
	/* everybody subscribed and holding the current epoch */
	rc = monc_wait_map_sync(mc[n], 0, 20000);
	for (unsigned int round = 0; rc == 0 && round <= SIM_FANOUT_ROUNDS; round++) {
		uint32_t e = sim_epoch(mc[n]);
		double first, last, t0;
		char *out = NULL;

		rc = sim_fanout_wait(mc, n, e, sim_now(), &first, &last);
		if (rc != 0)
			break;
		/* a new epoch: the noout flag set, then cleared */
		t0 = sim_now();
		rc = monc_command_sync(mc[n],
				       round % 2 ? "{\"prefix\":\"osd unset\",\"key\":\"noout\"}"
						 : "{\"prefix\":\"osd set\",\"key\":\"noout\"}",
				       20000, &out, errmsg, sizeof(errmsg));
		free(out);
		if (rc == 0)
			rc = sim_fanout_wait(mc, n, e + 1, t0, &first, &last);
		if (rc != 0 || round == 0) /* round 0 warms the connections up */
			continue;
		sum_first += first;
		sum_span += last - first;
		if (csv != NULL)
			fprintf(csv, "%u,%u,%.6f,%.6f\n", n, round, first, last);
	}
	if (rc == 0)
		printf("  %6u subscribers: first %.2f ms, last %.2f ms after the command; %.1f us "
		       "per subscriber\n",
		       n, sum_first / SIM_FANOUT_ROUNDS * 1e3,
		       (sum_first + sum_span) / SIM_FANOUT_ROUNDS * 1e3,
		       sum_span / SIM_FANOUT_ROUNDS / n * 1e6);
	else
		fprintf(stderr, "weft sim: fan-out: %s\n", strerror(-rc));
out:
	for (unsigned int i = 0; mc != NULL && i <= n; i++)
		monc_destroy(mc[i]);
	free(mc);
	conf_destroy(conf);
	return rc;
}
