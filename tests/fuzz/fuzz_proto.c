/* SPDX-License-Identifier: Apache-2.0 */
/*
 * libFuzzer target for the wire decoder. Each input is tried as:
 *  1. a whole frame (header + payload) through proto_frame_decode;
 *  2. a header alone (first 32 bytes) through proto_hdr_decode;
 *  3. a payload of every message type, both the whole input and the bytes
 *     after the first 32 (so mutated frames from the corpus reach the typed
 *     decoders without having to forge crcs).
 * Properties checked beyond "no crash, no overread": a failed decode always
 * says why, and whatever decodes re-encodes to exactly the input bytes (the
 * codec is canonical). A violated property aborts, so libFuzzer saves the
 * input. Built with -fsanitize=fuzzer (fuzz_proto) or with
 * fuzz_replay.c's main() (fuzz_proto_replay, a ctest over the corpus).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/hello.h"
#include "proto/proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint16_t fuzz_types[] = {
	PROTO_HELLO,	PROTO_AUTH_CHALLENGE, PROTO_AUTH_RESPONSE, PROTO_PING,
	PROTO_PONG,	PROTO_ERROR,	      PROTO_MAP_GET,	   PROTO_MAP,
	PROTO_OSD_OP,	PROTO_OSD_OP_REPLY,   PROTO_REPL_RING_REQ, PROTO_REPL_RING_GRANT,
	PROTO_REPL_ACK, 0,		      7,
	0xffff, /* unknown types: the dispatch must refuse them */
};

/* Big enough for anything the fuzzer feeds (libFuzzer default max_len 4096). */
static uint8_t fuzz_out[1 << 20];

static void fuzz_die(const char *what, uint16_t type, size_t size)
{
	fprintf(stderr, "fuzz_proto: property violated: %s (type %u, %zu bytes)\n", what, type,
		size);
	abort();
}

static void fuzz_check_failure(int rc, const struct proto_err *err, uint16_t type, size_t size)
{
	if (rc != -EBADMSG)
		fuzz_die("decode failed with something other than -EBADMSG", type, size);
	if (err->msg[0] == '\0' || strchr(err->msg, '\n') != NULL)
		fuzz_die("failure without a one-line reason", type, size);
}

/*
 * A decoded hello is judged like a peer's at connection set-up: any verdict
 * is fine, but it must be the rule of proto/hello.h, and a refusal must be
 * one line that names the peer's version.
 */
static void fuzz_hello(const struct proto_hello *peer, size_t size)
{
	static struct proto_hello local;
	char why[PROTO_HELLO_WHY_MAX];
	bool ok;
	int rc;

	if (local.name_len == 0)
		proto_hello_init(&local, "osd.0");
	why[0] = '\0';
	rc = proto_hello_check(&local, peer, "198.19.0.1:6800", why, sizeof(why));
	ok = peer->proto_version >= PROTO_VERSION_MIN && !(peer->required & ~local.features) &&
	     !(local.required & ~peer->features);
	if ((rc == 0) != ok || (rc != 0 && rc != -EPROTONOSUPPORT))
		fuzz_die("hello verdict breaks the rule", PROTO_HELLO, size);
	if (rc != 0 && (strchr(why, '\n') != NULL || strstr(why, peer->version) == NULL))
		fuzz_die("hello refusal is not one line naming the peer's version", PROTO_HELLO,
			 size);
}

static void fuzz_payload(uint16_t type, const uint8_t *data, size_t size)
{
	struct proto_msg msg;
	struct proto_err err;
	size_t len;
	int rc;

	err.msg[0] = '\0';
	rc = proto_msg_decode(type, data, size, &err, &msg);
	if (rc != 0) {
		fuzz_check_failure(rc, &err, type, size);
		return;
	}
	if (msg.type != type || proto_msg_validate(&msg, NULL) != 0)
		fuzz_die("decoded message does not validate", type, size);
	if (size > sizeof(fuzz_out))
		return;
	rc = proto_msg_encode(&msg, fuzz_out, sizeof(fuzz_out), &len);
	if (rc != 0)
		fuzz_die("decoded message does not encode", type, size);
	if (len != size || memcmp(fuzz_out, data, size) != 0)
		fuzz_die("payload round trip differs", type, size);
	if (type == PROTO_HELLO)
		fuzz_hello(&msg.hello, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_msg msg;
	struct proto_hdr hdr;
	struct proto_err err;
	uint8_t himg[PROTO_HDR_LEN];
	size_t len;
	int rc;

	/* 1. whole frame */
	err.msg[0] = '\0';
	rc = proto_frame_decode(data, size, PROTO_PAYLOAD_MAX, NULL, &err, &hdr, &msg);
	if (rc != 0) {
		fuzz_check_failure(rc, &err, 0, size);
	} else if (size <= sizeof(fuzz_out)) {
		if (proto_frame_encode(&msg, hdr.tid, fuzz_out, sizeof(fuzz_out), &len) != 0)
			fuzz_die("decoded frame does not encode", hdr.type, size);
		if (len != size || memcmp(fuzz_out, data, size) != 0)
			fuzz_die("frame round trip differs", hdr.type, size);
	}

	/* 2. header alone */
	err.msg[0] = '\0';
	rc = proto_hdr_decode(data, size, PROTO_PAYLOAD_MAX, &err, &hdr);
	if (rc != 0) {
		fuzz_check_failure(rc, &err, 0, size);
	} else {
		proto_hdr_encode(&hdr, himg);
		if (memcmp(himg, data, PROTO_HDR_LEN) != 0)
			fuzz_die("header round trip differs", hdr.type, size);
	}

	/* 3. typed payloads */
	for (size_t i = 0; i < sizeof(fuzz_types) / sizeof(fuzz_types[0]); i++) {
		fuzz_payload(fuzz_types[i], data, size);
		if (size >= PROTO_HDR_LEN)
			fuzz_payload(fuzz_types[i], data + PROTO_HDR_LEN, size - PROTO_HDR_LEN);
	}
	return 0;
}
