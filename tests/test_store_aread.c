/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Reads that do not block (store_read_start): the bytes store_read gives,
 * from the device, from memory (deferred small writes) and from holes, into
 * aligned and unaligned buffers; several in flight; a damaged block; a
 * shutdown with reads in flight.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/weft/weft.h"
#include "store_test_util.h"

struct rd {
	int rc;
	uint64_t got;
	unsigned int calls;
};

static void rd_cb(void *arg, int rc, uint64_t got)
{
	struct rd *r = arg;

	r->rc = rc;
	r->got = got;
	r->calls++;
}

static void fill(uint8_t *b, size_t n, unsigned int seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(seed * 131 + i * 7 + (i >> 9));
}

static void put(struct store *st, const char *name, uint64_t off, size_t len, unsigned int seed)
{
	struct store_tx *tx;
	uint8_t *b = malloc(len);

	fill(b, len, seed);
	assert_int_equal(store_tx_create(&tx), 0);
	assert_int_equal(store_tx_write(tx, 1, name, off, len, b), 0);
	assert_int_equal(stu_commit(st, tx), 0);
	free(b);
}

/* Poll until every read in rs[0..n) called back once. */
static void wait_reads(struct store *st, struct rd *rs, unsigned int n)
{
	for (int rounds = 0; rounds < 10000; rounds++) {
		struct pollfd p = {.fd = store_event_fd(st), .events = POLLIN};
		unsigned int left = 0;

		assert_true(store_poll(st) >= 0);
		for (unsigned int i = 0; i < n; i++)
			left += rs[i].calls == 0;
		if (left == 0)
			break;
		assert_true(poll(&p, 1, 100) >= 0);
	}
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(rs[i].calls, 1);
}

/* An asynchronous read into buf (cap bytes); returns its rc, *async_out: it went to the device. */
static int aread(struct store *st, const char *name, uint64_t off, uint64_t len, void *buf,
		 size_t cap, uint64_t *got, bool *async_out)
{
	struct rd r = {0};
	int rc = store_read_start(st, 1, name, off, len, buf, cap, rd_cb, &r, got);

	if (rc < 0)
		return rc;
	*async_out = rc == 0;
	if (rc == 1)
		return 0;
	wait_reads(st, &r, 1);
	*got = r.got;
	return r.rc;
}

/* store_read and store_read_start agree on [off, off+len); align: the buffer on 4 KiB. */
static bool same(struct store *st, const char *name, uint64_t off, uint64_t len, bool align)
{
	size_t cap = len + 8192;
	uint8_t *e = malloc(len + 1), *raw = NULL;
	uint64_t ng = 0, na = 0;
	bool async = false;

	assert_int_equal(posix_memalign((void **)&raw, 4096, cap + 1), 0);
	assert_int_equal(store_read(st, 1, name, off, len, e, &ng), 0);
	memset(raw, 0xee, cap + 1);
	assert_int_equal(aread(st, name, off, len, align ? raw : raw + 1, cap, &na, &async), 0);
	assert_true(na == ng);
	assert_memory_equal(align ? raw : raw + 1, e, ng);
	free(e);
	free(raw);
	return async;
}

static void test_aread_same_bytes(void **state)
{
	struct store_info i0, i1;
	struct store_stat s;
	struct store *st;
	struct stu u;
	uint8_t b[16];
	uint64_t got = 1;
	bool async;

	(void)state;
	stu_init(&u, false);
	assert_int_equal(store_mkfs(&u.o), 0);
	assert_int_equal(store_mount(&u.o, &st), 0);
	put(st, "small", 0, 8192, 1);		 /* deferred: in memory only */
	put(st, "big", 5000, (3u << 20) + 5000, 2); /* out of line: on the device, a hole first */
	put(st, "mix", 0, 256 << 10, 3);	 /* on the device ... */
	put(st, "mix", 64 << 10, 4096, 4);	 /* ... and one unit of it in memory */
	store_info_get(st, &i0);
	assert_false(same(st, "small", 0, 8192, true)); /* no device read at all */
	assert_false(same(st, "big", 0, 4096, true));	/* the hole */
	assert_true(same(st, "big", 0, (3u << 20) + 10000, true)); /* 4 requests */
	assert_true(same(st, "big", 5001, 70000, true));	   /* off a unit: bounce */
	assert_true(same(st, "big", 0, 1 << 20, false));	   /* unaligned buffer: bounce */
	assert_true(same(st, "big", (3u << 20), 1 << 20, true));   /* past the end: cut */
	assert_true(same(st, "mix", 0, 256 << 10, true));
	assert_true(same(st, "mix", 60 << 10, 12 << 10, false));
	store_info_get(st, &i1);
	assert_true(i1.data_read_bytes > i0.data_read_bytes);
	assert_true(i1.read_busy_ns > i0.read_busy_ns);
	/* nothing to read: at once */
	assert_int_equal(store_stat(st, 1, "big", &s), 0);
	assert_int_equal(store_read_start(st, 1, "big", s.size, 10, b, sizeof(b), rd_cb, NULL, &got),
			 1);
	assert_int_equal(got, 0);
	assert_int_equal(store_read_start(st, 1, "nope", 0, 10, b, sizeof(b), rd_cb, NULL, &got),
			 -ENOENT);
	assert_int_equal(store_read_start(st, 1, "big", 0, 10, b, 5, rd_cb, NULL, &got), -EINVAL);
	/* written out by the checkpoint: the same bytes, now from the device */
	assert_int_equal(store_checkpoint(st), 0);
	assert_true(same(st, "small", 0, 8192, true));
	assert_true(same(st, "mix", 60 << 10, 12 << 10, true));
	assert_int_equal(aread(st, "small", 4096, 4096, b, sizeof(b), &got, &async), -EINVAL);
	assert_int_equal(store_umount(st), 0);
	stu_cleanup(&u);
}

/* Eight reads in flight at once, each with its own bytes; a poll runs every callback once. */
static void test_aread_many(void **state)
{
	struct rd r[8] = {0};
	uint8_t *buf[8];
	struct store *st;
	struct stu u;

	(void)state;
	stu_init(&u, false);
	assert_int_equal(store_mkfs(&u.o), 0);
	assert_int_equal(store_mount(&u.o, &st), 0);
	for (unsigned int i = 0; i < 8; i++) {
		char name[8];

		snprintf(name, sizeof(name), "o%u", i);
		put(st, name, 0, 256 << 10, 10 + i);
	}
	for (unsigned int i = 0; i < 8; i++) {
		char name[8];
		uint64_t got = 0;

		snprintf(name, sizeof(name), "o%u", i);
		assert_int_equal(posix_memalign((void **)&buf[i], 4096, 256 << 10), 0);
		assert_int_equal(
		    store_read_start(st, 1, name, 0, 256 << 10, buf[i], 256 << 10, rd_cb, &r[i], &got),
		    0);
	}
	wait_reads(st, r, 8);
	for (unsigned int i = 0; i < 8; i++) {
		uint8_t *e = malloc(256 << 10);

		fill(e, 256 << 10, 10 + i);
		assert_int_equal(r[i].rc, 0);
		assert_int_equal(r[i].got, 256 << 10);
		assert_memory_equal(buf[i], e, 256 << 10);
		free(e);
		free(buf[i]);
	}
	/* shutdown with a read in flight: it ends, its callback never runs */
	{
		struct rd late = {0};
		uint64_t got = 0;

		assert_int_equal(posix_memalign((void **)&buf[0], 4096, 256 << 10), 0);
		assert_int_equal(store_read_start(st, 1, "o3", 0, 256 << 10, buf[0], 256 << 10, rd_cb,
						  &late, &got),
				 0);
		store_reads_abandon(st);
		assert_int_equal(store_poll(st) >= 0, 1);
		assert_int_equal(late.calls, 0);
		free(buf[0]);
	}
	assert_int_equal(store_umount(st), 0);
	stu_cleanup(&u);
}

/* A damaged block fails the read with -WEFT_E_CORRUPT; the blocks before it still read. */
static void test_aread_corrupt(void **state)
{
	struct store_extent ext[4];
	unsigned int next = 0;
	struct store *st;
	struct stu u;
	uint8_t *b = NULL;
	uint64_t got = 0;
	bool async = false;
	int fd;

	(void)state;
	stu_init(&u, false);
	assert_int_equal(store_mkfs(&u.o), 0);
	assert_int_equal(store_mount(&u.o, &st), 0);
	put(st, "c", 0, 128 << 10, 7);
	assert_int_equal(store_locate(st, 1, "c", ext, 4, &next), 0);
	assert_int_equal(next, 1);
	assert_int_equal(store_umount(st), 0);
	fd = open(u.data, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "X", 1, (off_t)ext[0].dev_offset + 65536 + 17), 1);
	close(fd);
	assert_int_equal(store_mount(&u.o, &st), 0);
	assert_int_equal(posix_memalign((void **)&b, 4096, 128 << 10), 0);
	assert_int_equal(aread(st, "c", 0, 65536, b, 128 << 10, &got, &async), 0);
	assert_true(async && got == 65536);
	assert_int_equal(aread(st, "c", 0, 128 << 10, b, 128 << 10, &got, &async),
			 -WEFT_E_CORRUPT);
	assert_int_equal(aread(st, "c", 60000, 10000, b, 128 << 10, &got, &async),
			 -WEFT_E_CORRUPT);
	free(b);
	assert_int_equal(store_umount(st), 0);
	stu_cleanup(&u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_aread_same_bytes),
	    cmocka_unit_test(test_aread_many),
	    cmocka_unit_test(test_aread_corrupt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
