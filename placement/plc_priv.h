/* SPDX-License-Identifier: Apache-2.0 */
/* Shared inside placement/: the hash every draw uses. */
#ifndef WEFT_PLACEMENT_PLC_PRIV_H
#define WEFT_PLACEMENT_PLC_PRIV_H

#include <stdint.h>

/* A 64-bit finalizer (splitmix64): crc32c alone is linear, this is not. */
static inline uint64_t plc_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

#endif
