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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "include/weft/weft.h"
#include "osd/store/kv.h"
#include "osd/store/wal.h"
#include "store_test_util.h"

#define NTX 8

static struct store_tx *small_tx(const char *name, char c)
{
	struct store_tx *tx;
	char data[100];

	memset(data, c, sizeof(data));
	if (store_tx_create(&tx) || store_tx_write(tx, 1, name, 0, 100, data))
		_exit(9);
	return tx;
}

/*
 * Mount, commit NTX one-record transactions, die without a checkpoint. tail:
 * then two more, "tailA" and "tailB", submitted together (overlap: B's
 * record is written while A's barrier runs, depth 1) or one after the other
 * (B written after A was durable, depth 0).
 */
static void make_wal_tail(struct stu *u, int tail, bool overlap)
{
	pid_t pid;
	int status;

	stu_init(u, true);
	u->o.wal_depth = 2;
	assert_int_equal(store_mkfs(&u->o), 0);
	pid = fork();
	if (pid == 0) {
		struct store *st;
		char name[16];
		int done[2] = {1, 1};

		if (store_mount(&u->o, &st) != 0)
			_exit(1);
		for (int i = 0; i < NTX; i++) {
			snprintf(name, sizeof(name), "obj%d", i);
			if (stu_commit(st, small_tx(name, (char)('a' + i))))
				_exit(2);
		}
		if (tail && !overlap &&
		    (stu_commit(st, small_tx("tailA", 'A')) ||
		     stu_commit(st, small_tx("tailB", 'B'))))
			_exit(3);
		if (tail && overlap) {
			if (store_tx_submit(st, small_tx("tailA", 'A'), stu_cb, &done[0]) ||
			    store_tx_submit(st, small_tx("tailB", 'B'), stu_cb, &done[1]) ||
			    store_flush(st) || done[0] || done[1])
				_exit(4);
		}
		_exit(0); /* no umount: the WAL holds all of it */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void make_wal(struct stu *u)
{
	make_wal_tail(u, 0, false);
}

/*
 * The header of the WAL record with this LSN, found by scanning every block
 * of the WAL region (a separate file from 4 KiB, or 1 MiB into the data file).
 */
static bool find_record(const struct stu *u, uint64_t lsn, struct wal_hdr *h_out, off_t *off_out)
{
	bool sep = u->o.wal_path && u->o.wal_path[0];
	int fd = open(sep ? u->wal : u->data, O_RDONLY);
	off_t base = sep ? 4096 : 1 << 20, end = base + (off_t)u->o.wal_size;
	struct wal_hdr h;
	bool found = false;

	assert_true(fd >= 0);
	for (off_t off = base; off < end && pread(fd, &h, sizeof(h), off) == sizeof(h);
	     off += 4096) {
		if (h.magic == WAL_MAGIC && h.lsn == lsn) {
			*h_out = h;
			*off_out = off;
			found = true;
			break;
		}
	}
	close(fd);
	return found;
}

/* A record that never reached the device: its first block is zeros. */
static void unwrite(const struct stu *u, off_t off)
{
	int fd = open(u->wal, O_RDWR);
	char z[4096] = {0};

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, z, sizeof(z), off), (ssize_t)sizeof(z));
	close(fd);
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

/*
 * Two batches in flight at a crash: the second's record reached the device,
 * the first's did not (a device may complete writes in any order). Neither
 * was acknowledged (completion in LSN order), and the second record says so
 * (depth 1): mount drops it as debris instead of calling the log damaged in
 * the middle, and invalidates it so no later scan finds it.
 */
static void test_inflight_debris(void **state)
{
	struct stu u;
	struct store *st;
	struct store_info info;
	struct wal_hdr ha, hb;
	off_t oa = 0, ob = 0;

	make_wal_tail(&u, 2, true);
	/* mount replays obj*, checkpoints: lsn 1 was the mount's empty log, obj0 is lsn 1 */
	assert_true(find_record(&u, NTX + 1, &ha, &oa));
	assert_true(find_record(&u, NTX + 2, &hb, &ob));
	assert_int_equal(ha.depth, 0);
	assert_int_equal(hb.depth, 1);
	unwrite(&u, oa);
	assert_int_equal(store_mount(&u.o, &st), 0);
	store_info_get(st, &info);
	assert_int_equal(info.replayed_tx, NTX);
	assert_int_equal(info.replay_dropped_bytes, 8192); /* tailB's record */
	for (int i = 0; i < NTX; i++)
		assert_true(present(st, i));
	assert_int_equal(store_umount(st), 0);
	assert_false(find_record(&u, NTX + 2, &hb, &ob)); /* invalidated */
	assert_int_equal(store_mount(&u.o, &st), 0);
	assert_int_equal(store_umount(st), 0);
	stu_cleanup(&u);
}

/*
 * The same hole, but the later record was written after the earlier one's
 * barrier completed (depth 0): the missing record was durable, so this is
 * damage in the middle of the log, and mount refuses (salvage drops it).
 */
static void test_inflight_proof(void **state)
{
	struct stu u;
	struct store *st;
	struct store_info info;
	struct wal_hdr ha, hb;
	off_t oa = 0, ob = 0;

	make_wal_tail(&u, 2, false);
	assert_true(find_record(&u, NTX + 1, &ha, &oa));
	assert_true(find_record(&u, NTX + 2, &hb, &ob));
	assert_int_equal(hb.depth, 0);
	unwrite(&u, oa);
	assert_int_equal(store_mount(&u.o, &st), -WEFT_E_CORRUPT);
	u.o.wal_salvage = true;
	assert_int_equal(store_mount(&u.o, &st), 0);
	store_info_get(st, &info);
	assert_int_equal(info.replayed_tx, NTX);
	assert_int_equal(store_umount(st), 0);
	u.o.wal_salvage = false; /* salvage invalidated the orphan: the log is clean again */
	assert_int_equal(store_mount(&u.o, &st), 0);
	assert_int_equal(store_umount(st), 0);
	stu_cleanup(&u);
}

static bool die_armed;

static bool die_after_next;

static void die_cb(void *arg)
{
	(void)arg;
	if (!die_armed)
		return;
	/* give the next batch's record, already issued, time to reach the file */
	if (die_after_next)
		usleep(300 * 1000);
	_exit(0); /* crash: the record is written, the large write's data never was */
}

/*
 * A large write's record reaches the WAL but its data does not (the batch's
 * barrier never ran): replay must find the data missing, drop the record as
 * the torn tail, and keep everything acknowledged before it.
 */
static void torn_large_write(bool sep_wal, bool next)
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
	u.o.wal_depth = next ? 2 : 1;
	assert_int_equal(store_mkfs(&u.o), 0);
	pid = fork();
	if (pid == 0) {
		struct store_tx *tx;
		int done = 1, done2 = 1;

		u.o.test_wal_written_cb = die_cb;
		die_after_next = next;
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
		/* with depth 2, a second batch goes out while the first waits for its data */
		if (next && store_tx_submit(st, small_tx("after", 'z'), stu_cb, &done2))
			_exit(7);
		while (done == 1)
			if (store_wait(st) < 0)
				_exit(5);
		_exit(6); /* acknowledged: the hook did not fire */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	if (next) {
		struct wal_hdr h;
		off_t off = 0;

		/* lsn 3 is the held batch; lsn 4 the one written while it waited */
		assert_true(find_record(&u, 4, &h, &off));
		assert_int_equal(h.depth, 1);
	}
	assert_int_equal(store_mount(&u.o, &st), 0);
	store_info_get(st, &info);
	assert_int_equal(info.replay_dropped_data, 1);
	assert_int_equal(info.replayed_tx, 2);
	assert_int_equal(store_stat(st, 1, "big2", &sst), -ENOENT);
	assert_int_equal(store_stat(st, 1, "after", &sst), -ENOENT);
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
	torn_large_write(false, false);
}

static void test_torn_large_write_separate(void **state)
{
	torn_large_write(true, false);
}

/* The held batch is not the last record: one written after it must go with it. */
static void test_torn_large_write_inflight(void **state)
{
	torn_large_write(false, true);
	torn_large_write(true, true);
}

/* RocksDB's "M" (last transaction whose metadata it has), as if it had got that far. */
static void set_meta(const struct stu *u, uint64_t seq)
{
	struct kv *kv;
	rocksdb_writebatch_t *wb;

	assert_int_equal(kv_open(u->db, false, &kv), 0);
	wb = rocksdb_writebatch_create();
	rocksdb_writebatch_put(wb, "M", 1, (const char *)&seq, 8);
	assert_int_equal(kv_write(kv, wb, true), 0);
	rocksdb_writebatch_destroy(wb);
	kv_close(kv);
}

/*
 * Review finding 3: the same hole as test_inflight_debris (tailB written
 * while tailA's barrier ran, tailA not on the device), but RocksDB has
 * tailB's transaction. RocksDB gets a transaction only when its batch
 * commits, in LSN order, so tailA was acknowledged and then lost on the
 * media: mid-log damage, not debris. Mount refuses; salvage drops it. The
 * child's RocksDB writes die with it (its WAL buffer is pushed only at
 * checkpoints), so the test forges M.
 */
static void test_debris_acked(void **state)
{
	struct stu u;
	struct store *st;
	struct wal_hdr ha, hb;
	off_t oa = 0, ob = 0;

	make_wal_tail(&u, 2, true);
	assert_true(find_record(&u, NTX + 1, &ha, &oa));
	assert_true(find_record(&u, NTX + 2, &hb, &ob));
	assert_int_equal(hb.depth, 1);
	unwrite(&u, oa);
	set_meta(&u, hb.first_seq);
	assert_int_equal(store_mount(&u.o, &st), -WEFT_E_CORRUPT);
	assert_true(find_record(&u, NTX + 2, &hb, &ob)); /* left as it was */
	/* (M is forged: RocksDB lacks those objects, so only the mount decision is checked) */
	u.o.wal_salvage = true;
	assert_int_equal(store_mount(&u.o, &st), 0);
	assert_int_equal(store_umount(st), 0);
	assert_false(find_record(&u, NTX + 2, &hb, &ob)); /* salvage invalidated it */
	u.o.wal_salvage = false;
	assert_int_equal(store_mount(&u.o, &st), 0);
	assert_int_equal(store_umount(st), 0);
	stu_cleanup(&u);
}

/* Every block of the WAL region whose header carries this LSN. */
static int count_records(const struct stu *u, uint64_t lsn)
{
	bool sep = u->o.wal_path && u->o.wal_path[0];
	int fd = open(sep ? u->wal : u->data, O_RDONLY);
	off_t base = sep ? 4096 : 1 << 20, end = base + (off_t)u->o.wal_size;
	struct wal_hdr h;
	int n = 0;

	assert_true(fd >= 0);
	for (off_t off = base; off < end && pread(fd, &h, sizeof(h), off) == sizeof(h); off += 4096)
		n += h.magic == WAL_MAGIC && h.lsn == lsn;
	close(fd);
	return n;
}

/*
 * Review finding 1 (data loss): two batches in flight at a crash, A and B
 * (depth 1), at the last 16 KiB of a 2 MiB WAL. A never reached the device,
 * B landed torn (header block intact, payload not). Mount stops at A's LSN
 * and drops B; then X takes A's LSN at A's place and Y (12 KiB, does not fit
 * in the 8 KiB left) takes B's LSN at offset 0. Y is acknowledged. The next
 * mount must find Y at 0 and not stop at B's old torn header, which carries
 * the same LSN at the place the scan looks first. Fixed twice over: the
 * first mount clears B's torn header (outside the replayed range), and the
 * scan takes a valid record at the second place when the first holds a bad
 * one with the expected LSN (test_wal_format covers that alone).
 */
static void test_torn_debris_then_wrap(void **state)
{
	struct stu u;
	struct store *st;
	struct store_stat sst;
	struct wal_hdr ha, hb;
	off_t oa = 0, ob = 0;
	pid_t pid;
	int status;
	const int K = 254; /* records of 8 KiB before tailA: tailA at S-16K, tailB at S-8K */

	stu_init(&u, true);
	u.o.wal_depth = 2;
	assert_int_equal(store_mkfs(&u.o), 0);
	pid = fork();
	if (pid == 0) {
		char name[16];
		int done[2] = {1, 1};

		if (store_mount(&u.o, &st) != 0)
			_exit(1);
		for (int i = 0; i < K; i++) {
			snprintf(name, sizeof(name), "obj%d", i);
			if (stu_commit(st, small_tx(name, 'a')))
				_exit(2);
		}
		if (store_tx_submit(st, small_tx("tailA", 'A'), stu_cb, &done[0]) ||
		    store_tx_submit(st, small_tx("tailB", 'B'), stu_cb, &done[1]) ||
		    store_flush(st) || done[0] || done[1])
			_exit(4);
		_exit(0); /* no umount */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(find_record(&u, K + 1, &ha, &oa));
	assert_true(find_record(&u, K + 2, &hb, &ob));
	/* the layout the scenario needs: A and B in the last 16 KiB, B written over A */
	assert_int_equal(oa, 4096 + (off_t)u.o.wal_size - 16384);
	assert_int_equal(ob, 4096 + (off_t)u.o.wal_size - 8192);
	assert_int_equal(hb.depth, 1);
	unwrite(&u, oa);	      /* A never reached the device */
	flip(&u, (uint64_t)ob + 200); /* B torn: header intact, payload not */
	pid = fork();
	if (pid == 0) {
		struct store_tx *tx;
		char big[8000];

		if (store_mount(&u.o, &st) != 0)
			_exit(1);
		if (stu_commit(st, small_tx("X", 'X')))
			_exit(2);
		memset(big, 'Y', sizeof(big));
		if (store_tx_create(&tx) || store_tx_write(tx, 1, "Y", 0, sizeof(big), big))
			_exit(3);
		if (stu_commit(st, tx)) /* acknowledged */
			_exit(4);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(find_record(&u, K + 2, &hb, &ob));
	assert_int_equal(ob, 4096); /* Y wrapped to offset 0 */
	assert_int_equal(store_mount(&u.o, &st), 0);
	assert_int_equal(store_stat(st, 1, "X", &sst), 0);
	assert_int_equal(store_stat(st, 1, "Y", &sst), 0);
	assert_int_equal(sst.size, 8000);
	{
		char got[8000], want[8000];
		uint64_t n = 0;

		memset(want, 'Y', sizeof(want));
		assert_int_equal(store_read(st, 1, "Y", 0, sizeof(got), got, &n), 0);
		assert_int_equal(n, sizeof(got));
		assert_memory_equal(got, want, sizeof(got));
	}
	assert_int_equal(store_umount(st), 0);
	assert_int_equal(count_records(&u, K + 2), 1); /* Y only: B's torn header was cleared */
	stu_cleanup(&u);
}

/* Byte i of object k's pattern (test_images_replay). */
static uint8_t pat(int k, size_t i)
{
	return (uint8_t)(k * 37 + i * 11 + (i >> 12));
}

/*
 * Transactions of several small writes each, two of them in one batch,
 * one rewriting part of a unit written before: every image reaches the
 * WAL record in its place (store_defer_splice), so replay alone (the
 * deferred data-area writes never went out) brings back every byte.
 */
static void test_images_replay(void **state)
{
	static const struct {
		int obj;
		uint64_t off, len;
	} w[] = {{0, 0, 4096}, {1, 100, 300}, {2, 5000, 9000}, {0, 4000, 200}, {3, 0, 10}};
	uint8_t *buf = malloc(32768), *want = malloc(32768);
	struct store_info info;
	struct stu u;
	struct store *st;
	pid_t pid;
	int status;

	(void)state;
	stu_init(&u, false);
	assert_int_equal(store_mkfs(&u.o), 0);
	pid = fork();
	if (pid == 0) {
		int done[2] = {1, 1};
		struct store_tx *tx[2];
		char name[16];

		if (store_mount(&u.o, &st) != 0)
			_exit(1);
		store_plug(st);
		for (int t = 0; t < 2; t++) {
			if (store_tx_create(&tx[t]) != 0)
				_exit(2);
			for (size_t i = t == 0 ? 0 : 3; i < (t == 0 ? 3u : 5u); i++) {
				for (size_t b = 0; b < w[i].len; b++)
					buf[b] = pat((int)i, b);
				snprintf(name, sizeof(name), "img%d", w[i].obj);
				if (store_tx_write(tx[t], 1, name, w[i].off, w[i].len, buf) != 0)
					_exit(3);
			}
			if (store_tx_submit(st, tx[t], stu_cb, &done[t]) != 0)
				_exit(4);
		}
		store_unplug(st);
		if (store_flush(st) != 0 || done[0] != 0 || done[1] != 0)
			_exit(5);
		_exit(0); /* no umount, no checkpoint: the images are in the WAL alone */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(store_mount(&u.o, &st), 0);
	store_info_get(st, &info);
	assert_int_equal(info.replayed_tx, 2);
	for (int k = 0; k < 4; k++) {
		char name[16];
		uint64_t size = 0, n;

		memset(want, 0, 32768);
		for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
			if (w[i].obj != k)
				continue;
			for (size_t b = 0; b < w[i].len; b++)
				want[w[i].off + b] = pat((int)i, b);
			if (w[i].off + w[i].len > size)
				size = w[i].off + w[i].len;
		}
		snprintf(name, sizeof(name), "img%d", k);
		assert_int_equal(store_read(st, 1, name, 0, size, buf, &n), 0);
		assert_int_equal(n, size);
		assert_memory_equal(buf, want, size);
	}
	assert_int_equal(store_umount(st), 0);
	stu_cleanup(&u);
	free(buf);
	free(want);
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
	    cmocka_unit_test(test_torn_large_write_inflight),
	    cmocka_unit_test(test_inflight_debris),
	    cmocka_unit_test(test_inflight_proof),
	    cmocka_unit_test(test_torn_debris_then_wrap),
	    cmocka_unit_test(test_debris_acked),
	    cmocka_unit_test(test_images_replay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
