/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRC32C through ISA-L. crc32_iscsi() neither inverts its seed nor its
 * result (crc32_iscsi("123456789", 9, ~0) == ~0xE3069283), so the standard
 * convention, where a result is also the seed of the next chunk, is
 * ~crc32_iscsi(buf, len, ~seed).
 */
#include "common/crc32c.h"

#include <isa-l/crc.h>
#include <limits.h>

/* crc32_iscsi() takes an int length; feed it chunks well below INT_MAX. */
#define CRC32C_CHUNK (1u << 30)

uint32_t crc32c(uint32_t seed, const void *buf, size_t len)
{
	/* ISA-L's prototype is not const-correct; it only reads the buffer. */
	unsigned char *p = (unsigned char *)(uintptr_t)buf;
	uint32_t crc = ~seed;

	while (len > 0) {
		size_t n = len < CRC32C_CHUNK ? len : CRC32C_CHUNK;

		crc = crc32_iscsi(p, (int)n, crc);
		p += n;
		len -= n;
	}
	return ~crc;
}
