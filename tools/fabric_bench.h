/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft fabric-bench: internal header shared by the command (cmd_fabric_bench.c),
 * the client (fabric_bench_client.c),
 * the server (fabric_bench_server.c) and the wire/pattern helpers
 * (fabric_bench_proto.c).
 *
 * Control messages are sends of exactly FB_CTRL_LEN bytes that start with the
 * 8-byte FB_MAGIC; every field is little-endian at a fixed offset (see
 * fb_ctrl_encode). Data sends (op send) never start with FB_MAGIC: their
 * first 8 bytes are zero or an iteration seed, far below the magic's value.
 */
#ifndef WEFT_TOOLS_FABRIC_BENCH_H
#define WEFT_TOOLS_FABRIC_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fabric/fabric.h"

#define FB_DEFAULT_ADDR	   "127.0.0.1:18515"
#define FB_MAGIC	   0x3176424654464557ull /* "WEFTFBv1" read as a little-endian u64 */
#define FB_CTRL_LEN	   88u
#define FB_MAX_SIZE	   (64ull << 20) /* largest message: 64 MiB */
#define FB_MAX_BUF	   (1ull << 30)	 /* size * outstanding: 1 GiB */
#define FB_MAX_OUTSTANDING 1024u
#define FB_WATCHDOG_NS	   (10ull * 1000000000ull) /* no progress for this long: give up */
#define FB_FLAG_VERIFY	   0x1u

enum fb_op { FB_OP_WRITE = 1, FB_OP_READ = 2, FB_OP_SEND = 3 };
enum fb_mode { FB_MODE_BW = 1, FB_MODE_LAT = 2 };

enum fb_msg_type {
	FB_MSG_HELLO = 1, /* client -> server: test parameters (+ client rkey) */
	FB_MSG_RKEY,	  /* server -> client: status + server rkey */
	FB_MSG_KEEPALIVE, /* client -> server: once a second during one-sided runs */
	FB_MSG_DONE,	  /* client -> server: run finished, counts, expected checksum */
	FB_MSG_RESULT,	  /* server -> client: verification status */
};

struct fb_ctrl {
	uint32_t type;	      /* enum fb_msg_type */
	int32_t status;	      /* RKEY, RESULT: 0 or -errno */
	uint32_t op;	      /* enum fb_op */
	uint32_t mode;	      /* enum fb_mode */
	uint32_t flags;	      /* FB_FLAG_* */
	uint32_t outstanding; /* slots the server must provide */
	uint64_t size;	      /* message size */
	uint64_t iters;	      /* HELLO: planned (0 = timed); DONE: measured */
	uint64_t total;	      /* DONE: data ops incl. warm-up; RESULT: server's count */
	uint64_t check;	      /* HELLO: read salt; RKEY: server msg_size; DONE: crc32c */
	struct fab_rkey rkey; /* HELLO: client's region (write --lat); RKEY: server's */
};

/* Parsed command line, shared by both roles. */
struct fb_opts {
	bool server;
	bool persist;
	bool lat;
	bool verify;
	bool json;
	bool verbose;
	const char *addr;
	enum fb_op op;
	uint64_t size;
	uint64_t iters;	     /* 0 when timed (-D) */
	uint64_t duration_s; /* 0 when counted (-n) */
	uint32_t outstanding;
	const char *backend; /* --backend, overrides ms_type; NULL = conf's */
	struct fab_domain_attr attr;
};

/* fabric_bench_proto.c */
void fb_ctrl_encode(const struct fb_ctrl *m, uint8_t out[FB_CTRL_LEN]);
/* 0, or -EPROTO with a reason ("bad magic") in *why_out. */
int fb_ctrl_decode(const void *buf, size_t len, struct fb_ctrl *m_out, const char **why_out);
bool fb_ctrl_is_ctrl(const void *buf, size_t len);
const char *fb_op_name(enum fb_op op);
const char *fb_mode_name(enum fb_mode mode);
const char *fb_msg_name(uint32_t type);
/* Fill / check a buffer with the pattern of seed (seed != 0; word 0 = seed). */
void fb_pattern_fill(void *buf, size_t len, uint64_t seed);
/* -1 when buf holds the pattern of seed, else the offset of the first bad byte. */
int64_t fb_pattern_check(const void *buf, size_t len, uint64_t seed);
/* Send one control message; spins on -EAGAIN. */
int fb_ctrl_send(struct fab_domain *dom, struct fab_ep *ep, const struct fb_ctrl *m);
/* The ctx of control sends, so completions can tell them from data sends. */
extern char fb_ctrl_ctx;

/* fabric_bench_server.c: returns the process exit code. */
int fb_server_main(const struct fb_opts *o);
/* fabric_bench_client.c: returns the process exit code. */
int fb_client_main(const struct fb_opts *o);

#endif
