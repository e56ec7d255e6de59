/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft sim: a cluster of N OSDs in a topology, built as the monitors build
 * it (increments applied with mon_map_apply), placed with the placement
 * library the daemons use (plc_map_acting, plc_tree_balance), measured.
 * docs/scale.md has the full-size numbers and the model of each report.
 */
#ifndef WEFT_TOOLS_SIM_H
#define WEFT_TOOLS_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mon/map.h"

struct json_t;

struct sim_args {
	unsigned int racks, hosts, per_host; /* per rack, per host */
	unsigned int pg_num, size, min_size;
	uint8_t domain;	     /* MON_CT_HOST or MON_CT_RACK */
	double osd_gb, fill; /* capacity per OSD and used share, for recovery */
	double recovery_mbs; /* per-OSD recovery bandwidth (MB/s) */
	double max_dev;	     /* balancer target */
	const char *out_dir; /* CSV and plots; NULL = none */
	bool check, plot, quiet;
	unsigned int fanout;   /* --fanout N: measure the mons' fan-out instead */
	const char *conf_file; /* the cluster's conf for --fanout */
	bool json;	       /* --format json: the metrics as one object, no text */
};

struct sim {
	struct sim_args a;
	struct mon_map map;	 /* the cluster at rest (raw placement, no items) */
	struct mon_map balanced; /* the same with the balancer's upmap items */
	int32_t *sets0;		 /* raw acting sets of map, pg_num x size (-1 = none) */
	int32_t *sets_bal;	 /* acting sets of balanced */
	uint32_t nosd;
	FILE *summary; /* summary.csv, or NULL */
	struct json_t *metrics; /* --format json: name -> {value, unit} */
	unsigned int failures;
};

/* sim_map.c: maps built through increments */
int sim_map_build(struct sim *s);
/* Apply one increment of ops to map (epoch + 1); ops are consumed. */
int sim_map_commit(struct mon_map *map, struct mon_inc *inc, const char *reason);
int sim_op_add(struct mon_inc *inc, struct mon_map *map, const struct mon_op *op,
	       const char *reason);
void sim_osd_make(struct mon_osd *o, uint32_t id, const char *host);
/* Mark OSDs [first, first + n) out in a copy of map. */
int sim_map_out(const struct mon_map *map, uint32_t first, uint32_t n, struct mon_map *out);
/*
 * Add OSDs in a copy of map: per_host of them under the existing host
 * `host` (new_hosts 0), or under new_hosts new hosts "host-NNN" in rack
 * (made when new_rack).
 */
int sim_map_add(const struct mon_map *map, const char *rack, bool new_rack, const char *host,
		unsigned int new_hosts, uint32_t per_host, struct mon_map *out);

/* sim_run.c: the reports */
int sim_run_placement(struct sim *s);
int sim_run_balance(struct sim *s);
int sim_run_mapsize(struct sim *s);
int sim_run_movement(struct sim *s);

/* sim_fanout.c: n real subscribers of the cluster of conf_file; a line per round into csv */
int sim_fanout(const char *conf_file, unsigned int n, FILE *csv);

/* sim_main.c */
void sim_metric(struct sim *s, const char *name, double value, const char *unit);
void sim_expect(struct sim *s, bool ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
FILE *sim_csv(struct sim *s, const char *name, const char *header);
double sim_now(void);

#endif
