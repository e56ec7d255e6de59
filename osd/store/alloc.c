/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdlib.h>

#include "osd/store/alloc.h"

int alloc_init(struct alloc *a, uint64_t nunits)
{
	uint64_t words = (nunits + 63) / 64;

	a->bits = calloc(words ? words : 1, sizeof(uint64_t));
	if (!a->bits)
		return -ENOMEM;
	a->nunits = nunits;
	a->nfree = nunits;
	a->cursor = 0;
	return 0;
}

void alloc_fini(struct alloc *a)
{
	free(a->bits);
	a->bits = NULL;
}

bool alloc_is_used(const struct alloc *a, uint64_t unit)
{
	return (a->bits[unit / 64] >> (unit % 64)) & 1u;
}

bool alloc_range_is(const struct alloc *a, uint64_t start, uint64_t len, bool used)
{
	if (start > a->nunits || len > a->nunits - start)
		return false;
	for (uint64_t u = start; u < start + len; u++) {
		if (alloc_is_used(a, u) != used)
			return false;
	}
	return true;
}

int alloc_mark(struct alloc *a, uint64_t start, uint64_t len, bool used)
{
	if (start > a->nunits || len > a->nunits - start)
		return -ERANGE;
	for (uint64_t u = start; u < start + len; u++) {
		uint64_t bit = 1ull << (u % 64);
		uint64_t *w = &a->bits[u / 64];

		if (!!(*w & bit) == used)
			continue;
		if (used) {
			*w |= bit;
			a->nfree--;
		} else {
			*w &= ~bit;
			a->nfree++;
		}
	}
	return 0;
}

/* Length of the free run starting at u (at most max), skipping whole free words. */
static uint64_t alloc_free_run(const struct alloc *a, uint64_t u, uint64_t max)
{
	uint64_t n = 0;

	while (u + n < a->nunits && n < max) {
		uint64_t v = u + n;

		if (v % 64 == 0 && a->bits[v / 64] == 0 && v + 64 <= a->nunits) {
			n += 64;
			continue;
		}
		if (alloc_is_used(a, v))
			break;
		n++;
	}
	return n < max ? n : max;
}

/* Next free unit at or after u (before limit), or limit. Skips full words. */
static uint64_t alloc_next_free(const struct alloc *a, uint64_t u, uint64_t limit)
{
	while (u < limit) {
		if (u % 64 == 0 && a->bits[u / 64] == ~0ull) {
			u += 64;
			continue;
		}
		if (!alloc_is_used(a, u))
			return u;
		u++;
	}
	return limit;
}

/* First contiguous free run of n units, scanning from the cursor and wrapping. */
static bool alloc_find_contig(const struct alloc *a, uint64_t n, uint64_t *start_out)
{
	for (int pass = 0; pass < 2; pass++) {
		uint64_t u = pass == 0 ? a->cursor : 0;
		uint64_t limit = pass == 0 ? a->nunits : a->cursor;

		while (u < limit) {
			uint64_t run;

			u = alloc_next_free(a, u, limit);
			if (u >= limit)
				break;
			run = alloc_free_run(a, u, n);
			if (run >= n) {
				*start_out = u;
				return true;
			}
			u += run;
		}
	}
	return false;
}

int alloc_take(struct alloc *a, uint64_t n, struct alloc_run *runs, unsigned int max_runs,
	       unsigned int *nruns_out)
{
	uint64_t start, got = 0;
	unsigned int nr = 0;

	if (n == 0) {
		*nruns_out = 0;
		return 0;
	}
	if (n > a->nfree || max_runs == 0)
		return -ENOSPC;
	if (alloc_find_contig(a, n, &start)) {
		alloc_mark(a, start, n, true);
		runs[0] = (struct alloc_run){start, n};
		a->cursor = (start + n) % a->nunits;
		*nruns_out = 1;
		return 0;
	}
	/* Fragmented: gather runs from the cursor; undo everything if they do not suffice. */
	for (uint64_t i = 0, u = a->cursor; i < a->nunits && got < n && nr < max_runs;) {
		uint64_t run;

		if (alloc_is_used(a, u)) {
			u = (u + 1) % a->nunits;
			i++;
			continue;
		}
		run = alloc_free_run(a, u, n - got);
		if (run > a->nunits - u)
			run = a->nunits - u;
		alloc_mark(a, u, run, true);
		runs[nr++] = (struct alloc_run){u, run};
		got += run;
		i += run;
		u = (u + run) % a->nunits;
	}
	if (got < n) {
		for (unsigned int i = 0; i < nr; i++)
			alloc_mark(a, runs[i].start, runs[i].len, false);
		return -ENOSPC;
	}
	a->cursor = (runs[nr - 1].start + runs[nr - 1].len) % a->nunits;
	*nruns_out = nr;
	return 0;
}
