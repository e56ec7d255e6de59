/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the PG messages (proto/msg_pg.c): peering, recovery
 * and scrub between OSDs, and PG_STATS to the monitors. Properties beyond
 * "no crash, no overread": a failure says why in one line; whatever
 * decodes re-encodes to exactly the input (canonical); the entries of a
 * decoded LOG / SCAN / PG_STATS iterate to exactly their count.
 * Replayed over tests/corpus/pg/ by fuzz_pg_replay (a ctest).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint16_t fuzz_pg_types[] = {
	PROTO_PG_STATS,	   PROTO_PG_QUERY,    PROTO_PG_INFO,	 PROTO_PG_LOG_REQ,
	PROTO_PG_LOG,	   PROTO_PG_ACTIVATE, PROTO_PG_PULL,	 PROTO_PG_RECOVERED,
	PROTO_PG_SCAN_REQ, PROTO_PG_SCAN,     PROTO_PG_DELETE,
};

static uint8_t fuzz_out[1 << 20];

static void fuzz_die(const char *what, uint16_t type, size_t size)
{
	fprintf(stderr, "fuzz_pg: property violated: %s (type %u, %zu bytes)\n", what, type, size);
	abort();
}

static void fuzz_entries(const struct proto_msg *msg, size_t size)
{
	static struct proto_pg_log_entry le;
	static struct proto_pg_scan_entry se;
	struct proto_pg_stat st;
	uint32_t n = 0, want;
	size_t off = 0;

	if (msg->type == PROTO_PG_LOG) {
		want = msg->pg.count;
		while (proto_pg_log_entry_next(&msg->pg, &off, &le))
			n++;
	} else if (msg->type == PROTO_PG_SCAN) {
		want = msg->pg.count;
		while (proto_pg_scan_entry_next(&msg->pg, &off, &se))
			n++;
	} else if (msg->type == PROTO_PG_STATS) {
		want = msg->pg_stats.count;
		while (proto_pg_stat_next(&msg->pg_stats, &off, &st))
			n++;
	} else {
		return;
	}
	if (n != want)
		fuzz_die("entries do not iterate to their count", msg->type, size);
}

static void fuzz_payload(uint16_t type, const uint8_t *data, size_t size)
{
	static struct proto_msg msg;
	struct proto_err err = {""};
	size_t len;
	int rc;

	rc = proto_msg_decode(type, data, size, &err, &msg);
	if (rc != 0) {
		if (rc != -EBADMSG)
			fuzz_die("decode failed with something other than -EBADMSG", type, size);
		if (err.msg[0] == '\0' || strchr(err.msg, '\n') != NULL)
			fuzz_die("failure without a one-line reason", type, size);
		return;
	}
	fuzz_entries(&msg, size);
	if (size > sizeof(fuzz_out))
		return;
	if (proto_msg_encode(&msg, fuzz_out, sizeof(fuzz_out), &len) != 0)
		fuzz_die("decoded message does not encode", type, size);
	if (len != size || memcmp(fuzz_out, data, size) != 0)
		fuzz_die("payload round trip differs", type, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < sizeof(fuzz_pg_types) / sizeof(fuzz_pg_types[0]); i++) {
		fuzz_payload(fuzz_pg_types[i], data, size);
		if (size >= PROTO_HDR_LEN)
			fuzz_payload(fuzz_pg_types[i], data + PROTO_HDR_LEN, size - PROTO_HDR_LEN);
	}
	return 0;
}
