/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Little-endian loads and stores at any alignment, for wire formats that
 * are built by hand (fabric backends' frames, bench handshakes). The proto
 * codec (proto/codec.h) is the bounded reader/writer for messages.
 */
#ifndef WEFT_COMMON_LE_H
#define WEFT_COMMON_LE_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline void le_put16(uint8_t *p, uint16_t v)
{
	v = htole16(v);
	memcpy(p, &v, sizeof(v));
}

static inline void le_put32(uint8_t *p, uint32_t v)
{
	v = htole32(v);
	memcpy(p, &v, sizeof(v));
}

static inline void le_put64(uint8_t *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static inline uint16_t le_get16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return le16toh(v);
}

static inline uint32_t le_get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return le32toh(v);
}

static inline uint64_t le_get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

#endif
