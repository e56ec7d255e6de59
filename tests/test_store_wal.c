/* SPDX-License-Identifier: Apache-2.0 */
/*
 * WAL damage: a child commits transactions and exits without unmounting, so
 * they live only in the WAL; the parent then flips bytes in the tail record,
 * in the middle of the log, or truncates the WAL file mid-record, and mounts.
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
	assert_int_equal(store_fsck(st, true, &r), 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intact),
		cmocka_unit_test(test_tail_flip),
		cmocka_unit_test(test_middle_flip),
		cmocka_unit_test(test_truncated),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
