/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the monitor decoders: the cluster map, map
 * increments, and the payloads of the mon and messenger message types.
 * Properties beyond "no crash, no overread": a failure says why in one
 * line, and whatever decodes re-encodes to exactly the input (canonical).
 * A decoded increment is also applied to a small map, which must either
 * succeed with epoch + 1 or refuse without changing it.
 * Replayed over tests/corpus/mon/ by fuzz_mon_replay (a ctest).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mon/map.h"
#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint16_t fuzz_mon_types[] = {
	PROTO_BULK,	PROTO_BULK_DONE,  PROTO_MON_CMD,    PROTO_MON_CMD_REPLY, PROTO_MON_SUB,
	PROTO_MAP_INC,	PROTO_OSD_BOOT,	  PROTO_OSD_BEACON, PROTO_OSD_FAILURE,
	PROTO_AUTH_TICKET, PROTO_AUTH_TICKET_REPLY, PROTO_AUTH_SVC_KEYS,
	PROTO_AUTH_SVC_KEYS_REPLY, PROTO_AUTH,
};

static uint8_t fuzz_out[1 << 20];

static void fuzz_die(const char *what, size_t size)
{
	fprintf(stderr, "fuzz_mon: property violated: %s (%zu bytes)\n", what, size);
	abort();
}

static void fuzz_check_err(int rc, const struct proto_err *err, size_t size)
{
	if (rc == -ENOMEM)
		return;
	if (rc != -EBADMSG)
		fuzz_die("decode failed with something other than -EBADMSG", size);
	if (err->msg[0] == '\0' || strchr(err->msg, '\n') != NULL)
		fuzz_die("failure without a one-line reason", size);
}

static void fuzz_map(const uint8_t *data, size_t size)
{
	struct mon_map map;
	struct proto_err err = { "" };
	void *buf;
	size_t len;
	int rc;

	mon_map_init(&map);
	rc = mon_map_decode(data, size, &err, &map);
	if (rc != 0) {
		fuzz_check_err(rc, &err, size);
		return;
	}
	if (mon_map_encode(&map, &buf, &len) != 0)
		fuzz_die("decoded map does not encode", size);
	if (len != size || memcmp(buf, data, size) != 0)
		fuzz_die("map round trip differs", size);
	free(buf);
	mon_map_free(&map);
}

static void fuzz_inc(const uint8_t *data, size_t size)
{
	struct mon_inc inc;
	struct mon_map map;
	struct proto_err err = { "" };
	void *buf;
	size_t len;
	int rc;

	rc = mon_inc_decode(data, size, &err, &inc);
	if (rc != 0) {
		fuzz_check_err(rc, &err, size);
		return;
	}
	if (mon_inc_encode(&inc, &buf, &len) != 0)
		fuzz_die("decoded increment does not encode", size);
	if (len != size || memcmp(buf, data, size) != 0)
		fuzz_die("increment round trip differs", size);
	free(buf);
	mon_map_init(&map);
	map.epoch = inc.epoch - 1;
	rc = mon_map_apply(&map, &inc);
	if (rc == 0 && map.epoch != inc.epoch)
		fuzz_die("applied increment did not move the epoch", size);
	if (rc != 0 && map.epoch != inc.epoch - 1)
		fuzz_die("refused increment changed the map", size);
	mon_map_free(&map);
	mon_inc_free(&inc);
}

static void fuzz_payload(uint16_t type, const uint8_t *data, size_t size)
{
	struct proto_msg msg;
	struct proto_err err = { "" };
	size_t len;
	int rc;

	rc = proto_msg_decode(type, data, size, &err, &msg);
	if (rc != 0) {
		fuzz_check_err(rc, &err, size);
		return;
	}
	if (size > sizeof(fuzz_out))
		return;
	if (proto_msg_encode(&msg, fuzz_out, sizeof(fuzz_out), &len) != 0)
		fuzz_die("decoded message does not encode", size);
	if (len != size || memcmp(fuzz_out, data, size) != 0)
		fuzz_die("payload round trip differs", size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_map(data, size);
	fuzz_inc(data, size);
	for (size_t i = 0; i < sizeof(fuzz_mon_types) / sizeof(fuzz_mon_types[0]); i++) {
		fuzz_payload(fuzz_mon_types[i], data, size);
		if (size >= PROTO_HDR_LEN)
			fuzz_payload(fuzz_mon_types[i], data + PROTO_HDR_LEN, size - PROTO_HDR_LEN);
	}
	return 0;
}
