/* SPDX-License-Identifier: Apache-2.0 */
/*
 * CRC32C (Castagnoli), through ISA-L. Standard convention: crc32c(0, "123456789", 9)
 * == 0xE3069283. Chain calls by passing the previous result as seed.
 */
#ifndef WEFT_COMMON_CRC32C_H
#define WEFT_COMMON_CRC32C_H

#include <stddef.h>
#include <stdint.h>

uint32_t crc32c(uint32_t seed, const void *buf, size_t len);

#endif
