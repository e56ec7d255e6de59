/* SPDX-License-Identifier: Apache-2.0 */
/* weft fabric-bench: control messages on the wire and data patterns. */
#include <errno.h>
#include <string.h>

#include "common/clock.h"
#include "common/le.h"
#include "tools/fabric_bench.h"

char fb_ctrl_ctx;

/*
 * Layout (little-endian): 0 magic u64, 8 type u32, 12 status i32, 16 op u32,
 * 20 mode u32, 24 flags u32, 28 outstanding u32, 32 size u64, 40 iters u64,
 * 48 total u64, 56 check u64, 64 rkey.addr u64, 72 rkey.len u64, 80 rkey.key u64.
 */
void fb_ctrl_encode(const struct fb_ctrl *m, uint8_t out[FB_CTRL_LEN])
{
	le_put64(out + 0, FB_MAGIC);
	le_put32(out + 8, m->type);
	le_put32(out + 12, (uint32_t)m->status);
	le_put32(out + 16, m->op);
	le_put32(out + 20, m->mode);
	le_put32(out + 24, m->flags);
	le_put32(out + 28, m->outstanding);
	le_put64(out + 32, m->size);
	le_put64(out + 40, m->iters);
	le_put64(out + 48, m->total);
	le_put64(out + 56, m->check);
	le_put64(out + 64, m->rkey.addr);
	le_put64(out + 72, m->rkey.len);
	le_put64(out + 80, m->rkey.key);
}

bool fb_ctrl_is_ctrl(const void *buf, size_t len)
{
	return len == FB_CTRL_LEN && le_get64(buf) == FB_MAGIC;
}

int fb_ctrl_decode(const void *buf, size_t len, struct fb_ctrl *m_out, const char **why_out)
{
	const uint8_t *p = buf;
	struct fb_ctrl m;

	if (len != FB_CTRL_LEN) {
		*why_out = "control message of the wrong length";
		return -EPROTO;
	}
	if (le_get64(p) != FB_MAGIC) {
		*why_out = "bad magic (not a weft fabric-bench peer?)";
		return -EPROTO;
	}
	m.type = le_get32(p + 8);
	m.status = (int32_t)le_get32(p + 12);
	m.op = le_get32(p + 16);
	m.mode = le_get32(p + 20);
	m.flags = le_get32(p + 24);
	m.outstanding = le_get32(p + 28);
	m.size = le_get64(p + 32);
	m.iters = le_get64(p + 40);
	m.total = le_get64(p + 48);
	m.check = le_get64(p + 56);
	m.rkey.addr = le_get64(p + 64);
	m.rkey.len = le_get64(p + 72);
	m.rkey.key = le_get64(p + 80);
	if (m.type < FB_MSG_HELLO || m.type > FB_MSG_RESULT) {
		*why_out = "unknown control message type";
		return -EPROTO;
	}
	if (m.status > 0 || m.status < -4095) {
		*why_out = "status out of range";
		return -EPROTO;
	}
	if (m.type == FB_MSG_HELLO) {
		if (m.op < FB_OP_WRITE || m.op > FB_OP_SEND) {
			*why_out = "unknown op";
			return -EPROTO;
		}
		if (m.mode != FB_MODE_BW && m.mode != FB_MODE_LAT) {
			*why_out = "unknown mode";
			return -EPROTO;
		}
		if (m.flags & ~FB_FLAG_VERIFY) {
			*why_out = "unknown flags";
			return -EPROTO;
		}
		if (m.size == 0 || m.size > FB_MAX_SIZE) {
			*why_out = "message size out of range";
			return -EPROTO;
		}
		if (m.outstanding == 0 || m.outstanding > FB_MAX_OUTSTANDING ||
		    m.size * m.outstanding > FB_MAX_BUF) {
			*why_out = "outstanding count out of range";
			return -EPROTO;
		}
		if (m.mode == FB_MODE_LAT && m.outstanding != 1) {
			*why_out = "latency mode with more than one op in flight";
			return -EPROTO;
		}
	}
	*m_out = m;
	return 0;
}

const char *fb_op_name(enum fb_op op)
{
	switch (op) {
	case FB_OP_WRITE:
		return "write";
	case FB_OP_READ:
		return "read";
	case FB_OP_SEND:
		return "send";
	}
	return "?";
}

const char *fb_mode_name(enum fb_mode mode)
{
	return mode == FB_MODE_LAT ? "lat" : "bw";
}

const char *fb_msg_name(uint32_t type)
{
	static const char *const names[] = {"?", "HELLO", "RKEY", "KEEPALIVE", "DONE", "RESULT"};

	return type <= FB_MSG_RESULT ? names[type] : "?";
}

/* splitmix64 of (seed, word index): cheap, and every word differs. */
static uint64_t fb_pattern_word(uint64_t seed, uint64_t j)
{
	uint64_t z;

	if (j == 0)
		return seed;
	z = seed * 0x9E3779B97F4A7C15ull + j;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

void fb_pattern_fill(void *buf, size_t len, uint64_t seed)
{
	uint8_t *p = buf;
	size_t words = len / 8, j;
	uint8_t tail[8];

	for (j = 0; j < words; j++)
		le_put64(p + 8 * j, fb_pattern_word(seed, j));
	if (len % 8) {
		le_put64(tail, fb_pattern_word(seed, j));
		memcpy(p + 8 * j, tail, len % 8);
	}
}

int64_t fb_pattern_check(const void *buf, size_t len, uint64_t seed)
{
	const uint8_t *p = buf;
	size_t words = len / 8, j;
	uint8_t tail[8];

	for (j = 0; j < words; j++) {
		uint8_t want[8];

		le_put64(want, fb_pattern_word(seed, j));
		if (memcmp(p + 8 * j, want, 8)) {
			for (size_t b = 0; b < 8; b++) {
				if (p[8 * j + b] != want[b])
					return (int64_t)(8 * j + b);
			}
		}
	}
	if (len % 8) {
		le_put64(tail, fb_pattern_word(seed, j));
		for (size_t b = 0; b < len % 8; b++) {
			if (p[8 * j + b] != tail[b])
				return (int64_t)(8 * j + b);
		}
	}
	return -1;
}

int fb_ctrl_send(struct fab_domain *dom, struct fab_ep *ep, const struct fb_ctrl *m)
{
	uint64_t deadline = clock_now_ns() + FB_WATCHDOG_NS;
	uint8_t msg[FB_CTRL_LEN];
	int rc;

	fb_ctrl_encode(m, msg);
	for (;;) {
		rc = fab_send(ep, msg, sizeof(msg), &fb_ctrl_ctx);
		if (rc != -EAGAIN)
			return rc;
		if (clock_now_ns() > deadline)
			return -ETIMEDOUT;
		/* Completions it frees stay in the CQ for the caller's loop. */
		rc = fab_progress(dom, 0);
		if (rc < 0)
			return rc;
	}
}
