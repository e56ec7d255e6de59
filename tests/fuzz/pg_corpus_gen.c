/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pg-corpus-gen DIR: seeds for fuzz_pg (committed as tests/corpus/pg/): a
 * frame and a bare payload of every PG message type, with entries where
 * the type carries them. Deterministic.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "proto/proto.h"

static uint8_t gen_buf[16384], gen_ent[8192];

static int gen_write(const char *dir, const char *name, const void *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(p, 1, len, f) != len || fclose(f) != 0) {
		fprintf(stderr, "pg-corpus-gen: %s: %s\n", path, strerror(errno));
		if (f)
			fclose(f);
		return -1;
	}
	return 0;
}

static int gen_msg(const char *dir, const char *name, const struct proto_msg *m)
{
	char fname[128];
	size_t len;

	if (proto_frame_encode(m, 0x300 + m->type, gen_buf, sizeof(gen_buf), &len) != 0)
		return -1;
	snprintf(fname, sizeof(fname), "frame-%s", name);
	if (gen_write(dir, fname, gen_buf, len) != 0)
		return -1;
	if (proto_msg_encode(m, gen_buf, sizeof(gen_buf), &len) != 0)
		return -1;
	snprintf(fname, sizeof(fname), "payload-%s", name);
	return gen_write(dir, fname, gen_buf, len);
}

static void gen_pg(struct proto_msg *m, uint16_t type)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
	m->pg.pool = 1;
	m->pg.pg = 0x1f;
	m->pg.epoch = 42;
	m->pg.from = 2;
}

int main(int argc, char **argv)
{
	static struct proto_msg m;
	static struct proto_pg_log_entry le;
	static struct proto_pg_scan_entry se;
	struct proto_pg_stat st;
	struct proto_enc enc;
	size_t len;
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: pg-corpus-gen DIR\n");
		return 2;
	}
	if (mkdir(argv[1], 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "pg-corpus-gen: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	gen_pg(&m, PROTO_PG_QUERY);
	rc |= gen_msg(argv[1], "pg_query", &m);
	gen_pg(&m, PROTO_PG_DELETE);
	rc |= gen_msg(argv[1], "pg_delete", &m);
	gen_pg(&m, PROTO_PG_INFO);
	m.pg.flags = PROTO_PG_INFO_F_BACKFILL;
	m.pg.last_update = (42ull << 32) | 7;
	m.pg.tail = (40ull << 32) | 1;
	m.pg.last_complete = (41ull << 32) | 3;
	m.pg.les = 41;
	{
		/* two past intervals: {0,1,2} may have gone active, {2} could not */
		struct proto_pg_interval iv = {.first = 38, .last = 39, .flags = PROTO_PG_IV_F_ACTIVE,
					       .n = 3, .osd = {0, 1, 2}};

		proto_enc_init(&enc, gen_ent, sizeof(gen_ent));
		proto_pg_interval_put(&enc, &iv);
		iv = (struct proto_pg_interval){.first = 40, .last = 41, .n = 1, .osd = {2}};
		proto_pg_interval_put(&enc, &iv);
		proto_enc_finish(&enc, &len);
		m.pg.count = 2;
		m.pg.entries = gen_ent;
		m.pg.entries_len = (uint32_t)len;
	}
	rc |= gen_msg(argv[1], "pg_info", &m);
	gen_pg(&m, PROTO_PG_LOG_REQ);
	m.pg.after = (40ull << 32) | 1;
	m.pg.max = 4096;
	rc |= gen_msg(argv[1], "pg_log_req", &m);
	gen_pg(&m, PROTO_PG_LOG);
	proto_enc_init(&enc, gen_ent, sizeof(gen_ent));
	for (unsigned int i = 0; i < 3; i++) {
		le.version = (42ull << 32) | (i + 1);
		le.op = i == 2 ? PROTO_PG_LOG_ROLLBACK : PROTO_OP_WRITE_FULL;
		le.name_len = (size_t)snprintf(le.name, sizeof(le.name), "rbd_data.%u", i);
		proto_pg_log_entry_put(&enc, &le);
	}
	proto_enc_finish(&enc, &len);
	m.pg.flags = PROTO_PG_F_LAST;
	m.pg.count = 3;
	m.pg.entries = gen_ent;
	m.pg.entries_len = (uint32_t)len;
	rc |= gen_msg(argv[1], "pg_log", &m);
	gen_pg(&m, PROTO_PG_ACTIVATE);
	m.pg.flags = PROTO_PG_ACT_F_BACKFILL;
	m.pg.last_update = (42ull << 32) | 7;
	m.pg.tail = (42ull << 32) | 1;
	m.pg.les = 42;
	rc |= gen_msg(argv[1], "pg_activate", &m);
	m.pg.flags = PROTO_PG_ACT_F_APPLIED; /* the member's answer */
	m.pg.count = 0;
	rc |= gen_msg(argv[1], "pg_activate_applied", &m);
	gen_pg(&m, PROTO_PG_PULL);
	m.pg.name_len = (size_t)snprintf(m.pg.name, sizeof(m.pg.name), "obj-1");
	rc |= gen_msg(argv[1], "pg_pull", &m);
	gen_pg(&m, PROTO_PG_RECOVERED);
	m.pg.last_complete = (42ull << 32) | 9;
	rc |= gen_msg(argv[1], "pg_recovered", &m);
	gen_pg(&m, PROTO_PG_SCAN_REQ);
	m.pg.flags = PROTO_PG_SCAN_F_DEEP;
	m.pg.max = 128;
	m.pg.name_len = (size_t)snprintf(m.pg.name, sizeof(m.pg.name), "obj-0");
	rc |= gen_msg(argv[1], "pg_scan_req", &m);
	gen_pg(&m, PROTO_PG_SCAN);
	proto_enc_init(&enc, gen_ent, sizeof(gen_ent));
	for (unsigned int i = 0; i < 2; i++) {
		se.name_len = (size_t)snprintf(se.name, sizeof(se.name), "obj-%u", i + 1);
		se.version = (42ull << 32) | (i + 1);
		se.size = 4096u << i;
		se.crc = 0xe3069283u + i;
		proto_pg_scan_entry_put(&enc, &se);
	}
	proto_enc_finish(&enc, &len);
	m.pg.count = 2;
	m.pg.entries = gen_ent;
	m.pg.entries_len = (uint32_t)len;
	rc |= gen_msg(argv[1], "pg_scan", &m);
	memset(&m, 0, sizeof(m));
	m.type = PROTO_PG_STATS;
	proto_enc_init(&enc, gen_ent, sizeof(gen_ent));
	memset(&st, 0, sizeof(st));
	st.pool = 1;
	st.pg = 3;
	st.state = PROTO_PGS_ACTIVE | PROTO_PGS_RECOVERING | PROTO_PGS_DEGRADED;
	st.same_since = 40;
	st.last_update = (42ull << 32) | 7;
	st.objects = 100;
	st.bytes = 100u << 16;
	st.missing = 12;
	st.unfound = 2;
	st.recovered_objects = 5;
	st.recovered_bytes = 5u << 20;
	proto_pg_stat_put(&enc, &st);
	st.pg = 4;
	st.state = PROTO_PGS_ACTIVE | PROTO_PGS_CLEAN | PROTO_PGS_INCONSISTENT;
	st.missing = 0;
	st.unfound = 0;
	st.inconsistent = 1;
	st.last_scrub = 1700000000u;
	proto_pg_stat_put(&enc, &st);
	st.pg = 5; /* down, waiting for the OSDs of a past interval */
	st.state = PROTO_PGS_DOWN | PROTO_PGS_UNDERSIZED | PROTO_PGS_DEGRADED;
	st.inconsistent = 0;
	st.nblocked = 2;
	st.blocked[0] = 0;
	st.blocked[1] = 2;
	proto_pg_stat_put(&enc, &st);
	proto_enc_finish(&enc, &len);
	m.pg_stats.osd = 2;
	m.pg_stats.epoch = 42;
	m.pg_stats.osd_stat = (struct proto_osd_stat){
		.total = 1ull << 30, .used = 900ull << 20, .avail = 124ull << 20,
		.data_used = 880ull << 20, .wal_bytes = 4ull << 20, .kv_bytes = 16ull << 20,
		.purging_objects = 7, .num_pgs = 96,
	};
	m.pg_stats.count = 3;
	m.pg_stats.entries = gen_ent;
	m.pg_stats.entries_len = (uint32_t)len;
	rc |= gen_msg(argv[1], "pg_stats", &m);
	if (rc != 0) {
		fprintf(stderr, "pg-corpus-gen: failed\n");
		return 1;
	}
	return 0;
}
