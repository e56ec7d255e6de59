/* SPDX-License-Identifier: Apache-2.0 */
/*
 * WAL damage: a child commits transactions and exits without unmounting, so
 * they live only in the WAL; the parent then flips bytes in the tail record,
 * in the middle of the log, or truncates the WAL file mid-record, and mounts.
 * Then a large write whose record reached the WAL without its data.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/weft/weft.h"
#include "store_test_util.h"

#define NTX 8

/* Mount, commit NTX one-record transactions, die without a checkpoint. */
static void make_wal(struct stu *u)
{
	pid_t pid;
	int status;

	stu_init(u, true);
	assert_int_equal(store_mkfs(&u->o), 0);
	pid = fork();
	if (pid == 0) {
		struct store *st;
		char name[16], data[100];

		if (store_mount(&u->o, &st) != 0)
			_exit(1);
		for (int i = 0; i < NTX; i++) {
			struct store_tx *tx;

			snprintf(name, sizeof(name), "obj%d", i);
			memset(data, 'a' + i, sizeof(data));
			if (store_tx_create(&tx) || store_tx_write(tx, 1, name, 0, 100, data) ||
			    stu_commit(st, tx))
				_exit(2);
		}
		_exit(0); /* no umount: the WAL holds all of it */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Record i (one 100-byte write: a 4 KiB image + header = 8 KiB) is at 4096 + i * 8192. */
static void flip(const struct stu *u, uint64_t off)
{
	int fd = open(u->wal, O_RDWR);
	uint8_t b;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &b, 1, (off_t)off), 1);
	b ^= 0x40;
	assert_int_equal(pwrite(fd, &b, 1, (off_t)off), 1);
	close(fd);
}

static int present(struct store *st, int i)
{
	struct store_stat s;
	char name[16];

	snprintf(name, sizeof(name), "obj%d", i);
	return store_stat(st, 1, name, &s) == 0;
}

static void test_intact(void **state)
{
	struct stu u;
	struct store *st;
	struct store_info info;

	make_wal(&u);
	assert_int_equal(store_mount(&u.o, &st), 0);
	store_info_get(st, &info);
	assert_int_equal(info.replayed_tx, NTX);
	for (int i = 0; i < NTX; i++)
		assert_true(present(st, i));
	assert_int_equal(store_umount(st), 0);
	stu_cleanup(&u);
}

static void test_tail_flip(void **state)
{
	struct stu u;
	struct store *st;
	struct store_info info;
	struct store_fsck_report r;

	make_wal(&u);
	flip(&u, 4096 + (NTX - 1) * 8192 + 200); /* payload of the last record */
	assert_int_equal(store_mount(&u.o, &st), 0);
	store_info_get(st, &info);
	assert_int_equal(info.replayed_tx, NTX - 1);
	assert_int_equal(info.replay_dropped_bytes, 8192);
	/* RocksDB got the last one at commit (the process died, not the machine),
	 * so it may still be visible; everything before it must be. */
	for (int i = 0; i < NTX - 1; i++)
		assert_true(present(st, i));
	/*
	 * Its data-area write was deferred (store_defer.c) and its record, the
	 * only copy, is the damaged one: if RocksDB shows the object, reading it
	 * fails its crcs rather than return anything but its bytes, and deep
	 * fsck counts exactly that block.
	 */
	assert_int_equal(store_fsck(st, false, &r), 0);
	if (present(st, NTX - 1)) {
		uint8_t got[100], want[100];
		uint64_t n = 0;
		int rc = store_read(st, 1, "obj7", 0, sizeof(got), got, &n);

		memset(want, 'a' + NTX - 1, sizeof(want));
		assert_true(rc == -WEFT_E_CORRUPT ||
			    (rc == 0 && n == sizeof(got) && !memcmp(got, want, sizeof(got))));
		rc = store_fsck(st, true, &r);
		assert_true(rc == 0 || (rc == -WEFT_E_CORRUPT && r.bad_blocks == 1));
	} else {
		assert_int_equal(store_fsck(st, true, &r), 0);
	}
	assert_int_equal(store_umount(st), 0);
	stu_cleanup(&u);
}

static void test_middle_flip(void **state)
{
	struct stu u;
	struct store *st;
	struct store_info info;

	make_wal(&u);
	flip(&u, 4096 + 2 * 8192 + 60); /* record 2 of 8 */
	assert_int_equal(store_mount(&u.o, &st), -WEFT_E_CORRUPT);
	u.o.wal_salvage = true;
	assert_int_equal(store_mount(&u.o, &st), 0);
	store_info_get(st, &info);
	assert_int_equal(info.replayed_tx, 2);
	assert_int_equal(store_umount(st), 0);
	stu_cleanup(&u);
}

static void test_truncated(void **state)
{
	struct stu u;
	struct store *st;
	struct store_info info;
	struct store_fsck_report r;

	make_wal(&u);
	assert_int_equal(truncate(u.wal, 4096 + (NTX - 1) * 8192 + 1000), 0);
	assert_int_equal(store_mount(&u.o, &st), 0);
	store_info_get(st, &info);
	assert_int_equal(info.replayed_tx, NTX - 1);
	assert_int_equal(store_fsck(st, false, &r), 0);
	/* and the store keeps working past the damage */
	{
		struct store_tx *tx;

		assert_int_equal(store_tx_create(&tx), 0);
		assert_int_equal(store_tx_write(tx, 1, "after", 0, 5, "hello"), 0);
		assert_int_equal(stu_commit(st, tx), 0);
	}
	assert_int_equal(store_umount(st), 0);
	assert_int_equal(store_mount(&u.o, &st), 0);
	assert_int_equal(store_umount(st), 0);
	stu_cleanup(&u);
}

static bool die_armed;

static void die_cb(void *arg)
{
	(void)arg;
	if (die_armed)
		_exit(0); /* crash: the record is written, the large write's data never was */
}

/*
 * A large write's record reaches the WAL but its data does not (the batch's
 * barrier never ran): replay must find the data missing, drop the record as
 * the torn tail, and keep everything acknowledged before it.
 */
static void torn_large_write(bool sep_wal)
{
	enum { BIG = 256 << 10 };
	struct stu u;
	struct store *st;
	struct store_info info;
	struct store_fsck_report r;
	struct store_stat sst;
	uint8_t *buf = malloc(BIG), *got = malloc(BIG);
	uint64_t n;
	pid_t pid;
	int status;

	assert_non_null(buf);
	assert_non_null(got);
	stu_init(&u, sep_wal);
	assert_int_equal(store_mkfs(&u.o), 0);
	pid = fork();
	if (pid == 0) {
		struct store_tx *tx;
		int done = 1;

		u.o.test_wal_written_cb = die_cb;
		if (store_mount(&u.o, &st) != 0)
			_exit(1);
		memset(buf, 'a', BIG);
		if (store_tx_create(&tx) || store_tx_write(tx, 1, "big", 0, BIG, buf) ||
		    stu_commit(st, tx))
			_exit(2);
		if (store_tx_create(&tx) || store_tx_write(tx, 1, "small", 0, 100, buf) ||
		    stu_commit(st, tx))
			_exit(3);
		die_armed = true;
		memset(buf, 'b', BIG);
		if (store_tx_create(&tx) || store_tx_write(tx, 1, "big", 0, BIG, buf) ||
		    store_tx_write(tx, 1, "big2", 0, BIG, buf) ||
		    store_tx_submit(st, tx, stu_cb, &done))
			_exit(4);
		while (done == 1)
			if (store_wait(st) < 0)
				_exit(5);
		_exit(6); /* acknowledged: the hook did not fire */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(store_mount(&u.o, &st), 0);
	store_info_get(st, &info);
	assert_int_equal(info.replay_dropped_data, 1);
	assert_int_equal(info.replayed_tx, 2);
	assert_int_equal(store_stat(st, 1, "big2", &sst), -ENOENT);
	assert_int_equal(store_read(st, 1, "big", 0, BIG, got, &n), 0);
	assert_int_equal(n, BIG);
	memset(buf, 'a', BIG);
	assert_memory_equal(got, buf, BIG);
	assert_int_equal(store_stat(st, 1, "small", &sst), 0);
	assert_int_equal(store_fsck(st, true, &r), 0);
	/* The store goes on from there, and the next mount replays nothing stale. */
	{
		struct store_tx *tx;

		memset(buf, 'c', BIG);
		assert_int_equal(store_tx_create(&tx), 0);
		assert_int_equal(store_tx_write(tx, 1, "big2", 0, BIG, buf), 0);
		assert_int_equal(stu_commit(st, tx), 0);
	}
	assert_int_equal(store_umount(st), 0);
	assert_int_equal(store_mount(&u.o, &st), 0);
	store_info_get(st, &info);
	assert_int_equal(info.replay_dropped_data, 0);
	assert_int_equal(store_read(st, 1, "big2", 0, BIG, got, &n), 0);
	assert_memory_equal(got, buf, BIG);
	assert_int_equal(store_fsck(st, true, &r), 0);
	assert_int_equal(store_umount(st), 0);
	stu_cleanup(&u);
	free(buf);
	free(got);
}

static void test_torn_large_write_shared(void **state)
{
	torn_large_write(false);
}

static void test_torn_large_write_separate(void **state)
{
	torn_large_write(true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intact),
		cmocka_unit_test(test_tail_flip),
		cmocka_unit_test(test_middle_flip),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_torn_large_write_shared),
		cmocka_unit_test(test_torn_large_write_separate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
