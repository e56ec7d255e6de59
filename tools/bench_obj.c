/* SPDX-License-Identifier: Apache-2.0 */
/*
 * weft bench object content and metadata (docs/bench.md, "Objects").
 *
 * Header (48 bytes, little-endian):
 *   0  magic "WEFTBNCH"      8  version 1 (u32)   12 header size 48 (u32)
 *   16 object index (u64)    24 object size (u64)
 *   32 run key (u32, crc32c of the run name)     36 data crc (u32, crc32c of [48, size))
 *   40 reserved 0 (u32)      44 header crc (u32, crc32c of bytes 0-43)
 * Body: the run's pattern (xorshift64 from the run key), and at the start of
 * every 4 KiB block k >= 1 the stamp {index u64, k | run key << 32 u64}.
 * So the content is a function of (run name, index, size): a block from
 * another object, another offset or another run is caught by the data crc,
 * and a stale or misdirected object by the header.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"
#include "common/le.h"
#include "tools/bench.h"
#include "weft/weft.h"

#define BENCH_MAGIC   "WEFTBNCH"
#define BENCH_VERSION 1u
#define BENCH_BLOCK   4096u
#define BENCH_STAMP   16u

uint32_t bench_run_key(const char *run)
{
	return crc32c(0, run, strlen(run));
}

void bench_obj_name(char *buf, size_t cap, const char *run, uint64_t index)
{
	snprintf(buf, cap, "%s_object%" PRIu64, run, index);
}

void bench_obj_pattern(uint8_t *buf, uint64_t size, uint32_t run_key)
{
	uint64_t s = ((uint64_t)run_key << 1 | 1) * 0x9e3779b97f4a7c15ull;
	uint64_t i = 0;

	for (; i + 8 <= size; i += 8) {
		s ^= s << 13;
		s ^= s >> 7;
		s ^= s << 17;
		le_put64(buf + i, s);
	}
	for (; i < size; i++)
		buf[i] = (uint8_t)(i * 131u + run_key);
}

static void bench_obj_stamps(uint8_t *buf, uint64_t size, uint32_t run_key, uint64_t index)
{
	for (uint64_t k = 1; k * BENCH_BLOCK + BENCH_STAMP <= size; k++) {
		le_put64(buf + k * BENCH_BLOCK, index);
		le_put64(buf + k * BENCH_BLOCK + 8, k | (uint64_t)run_key << 32);
	}
}

void bench_obj_stamp(uint8_t *buf, uint64_t size, uint32_t run_key, uint64_t index)
{
	bench_obj_stamps(buf, size, run_key, index);
	memcpy(buf, BENCH_MAGIC, 8);
	le_put32(buf + 8, BENCH_VERSION);
	le_put32(buf + 12, BENCH_HDR_SIZE);
	le_put64(buf + 16, index);
	le_put64(buf + 24, size);
	le_put32(buf + 32, run_key);
	le_put32(buf + 36, crc32c(0, buf + BENCH_HDR_SIZE, size - BENCH_HDR_SIZE));
	le_put32(buf + 40, 0);
	le_put32(buf + 44, crc32c(0, buf, 44));
}

int bench_obj_verify(const uint8_t *buf, uint64_t len, uint64_t size, uint32_t run_key,
		     uint64_t index, char *why, size_t cap)
{
	uint32_t crc;

	if (len != size) {
		snprintf(why, cap, "read %" PRIu64 " bytes, the object has %" PRIu64, len, size);
		return -WEFT_E_CORRUPT;
	}
	if (memcmp(buf, BENCH_MAGIC, 8) != 0 || le_get32(buf + 8) != BENCH_VERSION ||
	    le_get32(buf + 12) != BENCH_HDR_SIZE) {
		snprintf(why, cap, "no weft bench header");
		return -WEFT_E_CORRUPT;
	}
	crc = crc32c(0, buf, 44);
	if (crc != le_get32(buf + 44)) {
		snprintf(why, cap, "header crc32c 0x%08x, stored 0x%08x", crc, le_get32(buf + 44));
		return -WEFT_E_CORRUPT;
	}
	if (le_get32(buf + 32) != run_key || le_get64(buf + 16) != index ||
	    le_get64(buf + 24) != size) {
		snprintf(why, cap,
			 "header says object %" PRIu64 " of %" PRIu64 " bytes, run key 0x%08x",
			 le_get64(buf + 16), le_get64(buf + 24), le_get32(buf + 32));
		return -WEFT_E_CORRUPT;
	}
	crc = crc32c(0, buf + BENCH_HDR_SIZE, size - BENCH_HDR_SIZE);
	if (crc != le_get32(buf + 36)) {
		snprintf(why, cap, "data crc32c 0x%08x, header says 0x%08x", crc,
			 le_get32(buf + 36));
		return -WEFT_E_CORRUPT;
	}
	return 0;
}

int bench_meta_encode(const struct bench_meta *m, char *buf, size_t cap, size_t *len_out)
{
	int n = snprintf(
	    buf, cap, "weft-bench-meta 1\nrun %s\nobjects %" PRIu64 "\nobject_size %" PRIu64 "\n",
	    m->run, m->objects, m->object_size);

	if (n < 0 || (size_t)n >= cap)
		return -ENOBUFS;
	*len_out = (size_t)n;
	return 0;
}

/* One "key value\n" line at *pos; value copied into val (cap bytes). */
static int bench_meta_line(const char *buf, size_t len, size_t *pos, const char *key, char *val,
			   size_t cap)
{
	size_t klen = strlen(key), p = *pos, e;

	if (len - p < klen + 1 || memcmp(buf + p, key, klen) != 0 || buf[p + klen] != ' ')
		return -EINVAL;
	p += klen + 1;
	for (e = p; e < len && buf[e] != '\n'; e++)
		if (buf[e] == '\0')
			return -EINVAL;
	if (e == len || e == p || e - p >= cap)
		return -EINVAL;
	memcpy(val, buf + p, e - p);
	val[e - p] = '\0';
	*pos = e + 1;
	return 0;
}

static int bench_meta_u64(const char *s, uint64_t max, uint64_t *v_out)
{
	char *end;
	unsigned long long v;

	if (s[0] < '0' || s[0] > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -EINVAL;
	*v_out = v;
	return 0;
}

int bench_meta_decode(const char *buf, size_t len, struct bench_meta *m_out)
{
	static const char head[] = "weft-bench-meta 1\n";
	struct bench_meta m = {0};
	char num[24];
	size_t pos = sizeof(head) - 1;

	if (len < pos || memcmp(buf, head, pos) != 0)
		return -EINVAL;
	if (bench_meta_line(buf, len, &pos, "run", m.run, sizeof(m.run)) != 0 ||
	    bench_meta_line(buf, len, &pos, "objects", num, sizeof(num)) != 0 ||
	    bench_meta_u64(num, UINT32_MAX, &m.objects) != 0 ||
	    bench_meta_line(buf, len, &pos, "object_size", num, sizeof(num)) != 0 ||
	    bench_meta_u64(num, 1ull << 40, &m.object_size) != 0 ||
	    m.object_size < BENCH_MIN_SIZE || pos != len)
		return -EINVAL;
	for (const char *c = m.run; *c; c++)
		if (*c <= ' ' || *c == 0x7f)
			return -EINVAL;
	*m_out = m;
	return 0;
}
