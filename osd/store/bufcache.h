/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A bounded cache of large, 4 KiB-aligned data buffers (write payload copies,
 * block images, WAL batch records). Why: glibc serves allocations this large
 * with a fresh mmap and returns them with munmap, so every 4 MiB write paid
 * about a thousand page faults per copy (11 ms per 4 MiB transaction on this
 * VM, a 5x loss of write bandwidth). Buffers below BUFCACHE_MIN go straight to
 * posix_memalign/free. Process-wide and thread-safe (one mutex): a transaction
 * is built in the caller's thread and destroyed in the store's.
 */
#ifndef WEFT_OSD_STORE_BUFCACHE_H
#define WEFT_OSD_STORE_BUFCACHE_H

#include <stddef.h>

#define BUFCACHE_MIN   (128u << 10)
#define BUFCACHE_ALIGN 4096u

/* A buffer of at least len bytes, aligned to BUFCACHE_ALIGN; NULL on ENOMEM. */
void *bufcache_get(size_t len);
/* Return a buffer from bufcache_get(len) (same len); NULL is ignored. */
void bufcache_put(void *p, size_t len);
/* Bytes the cache may keep idle (default 128 MiB); lowering it trims at once. */
void bufcache_set_limit(size_t bytes);
/* Free every idle buffer (memory pressure); returns the bytes released. */
size_t bufcache_trim(void);
/* Idle bytes held now. */
size_t bufcache_idle_bytes(void);

#endif
