/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Bitmap allocator over fixed-size units of the data device (1 bit per unit,
 * 1 = allocated). Next-fit from a cursor; prefers one contiguous run, falls
 * back to gathering fragments. Single-threaded (the store's reactor owns it).
 */
#ifndef WEFT_OSD_STORE_ALLOC_H
#define WEFT_OSD_STORE_ALLOC_H

#include <stdbool.h>
#include <stdint.h>

struct alloc_run {
	uint64_t start; /* first unit */
	uint64_t len;	/* units */
};

struct alloc {
	uint64_t nunits;
	uint64_t nfree;
	uint64_t cursor;
	uint64_t *bits;
};

int alloc_init(struct alloc *a, uint64_t nunits);
void alloc_fini(struct alloc *a);
/*
 * Take exactly n units as at most max_runs runs (written to runs[]). -ENOSPC
 * leaves the allocator unchanged.
 */
int alloc_take(struct alloc *a, uint64_t n, struct alloc_run *runs, unsigned int max_runs,
	       unsigned int *nruns_out);
/* Set [start, start+len) to used or free; idempotent, keeps nfree exact. -ERANGE if outside. */
int alloc_mark(struct alloc *a, uint64_t start, uint64_t len, bool used);
bool alloc_is_used(const struct alloc *a, uint64_t unit);
/* True when every unit of the range is in state used. */
bool alloc_range_is(const struct alloc *a, uint64_t start, uint64_t len, bool used);

#endif
