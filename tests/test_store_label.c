/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What weft osd create/activate read off a device (osd/store/store_label.h):
 * the probe of block 0 (store superblock, WAL header, nothing), the OSD
 * label in block 1 (round trip, the store leaves it alone while in use,
 * corrupt / newer / missing labels refused), and a store superblock of a
 * newer layout version refused at mount with -ENOTSUP.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/crc32c.h"
#include "include/weft/weft.h"
#include "osd/store/store_int.h"
#include "osd/store/store_label.h"
#include "tests/store_test_util.h"

static void test_probe_and_label(void **state)
{
	struct store_probe pd, pw, pn;
	struct store_label l = {.osd_id = 7, .created = 1700000000}, r;
	struct store *st;
	struct store_tx *tx;
	struct stu u;
	char empty[320];
	uint8_t buf[8192], back[8192];
	size_t n;
	int fd;

	stu_init(&u, true);
	u.o.fsid = "8d5a4c1e-3b7f-4e2a-9c61-0e4f2a7b9d30";
	assert_int_equal(store_mkfs(&u.o), 0);
	assert_int_equal(store_probe(u.data, &pd), 0);
	assert_int_equal(pd.kind, STORE_PROBE_DATA);
	assert_int_equal(pd.osd_id, 7);
	assert_true(pd.wal_separate);
	assert_string_equal(pd.fsid, u.o.fsid);
	assert_int_equal(pd.layout_version, STORE_LAYOUT_VERSION);
	assert_int_equal(store_probe(u.wal, &pw), 0);
	assert_int_equal(pw.kind, STORE_PROBE_WAL);
	assert_int_equal(pw.wal_nonce, pd.wal_nonce);
	assert_string_equal(pw.fsid, u.o.fsid);
	snprintf(empty, sizeof(empty), "%s/empty", u.dir);
	fd = open(empty, O_CREAT | O_RDWR, 0644);
	assert_true(fd >= 0 && ftruncate(fd, 1 << 20) == 0);
	close(fd);
	assert_int_equal(store_probe(empty, &pn), 0);
	assert_int_equal(pn.kind, STORE_PROBE_NONE);
	assert_int_equal(store_label_read(u.data, &r), -ENODATA);

	for (int i = 0; i < 16; i++)
		l.osd_uuid[i] = (uint8_t)(i * 17);
	snprintf(l.fsid, sizeof(l.fsid), "%s", u.o.fsid);
	snprintf(l.db_path, sizeof(l.db_path), "/var/lib/weft/osd-db/osd.7");
	snprintf(l.wal_path, sizeof(l.wal_path), "/dev/loop9");
	assert_int_equal(store_label_write(u.data, &l), 0);

	/* a store in use never touches block 1 */
	assert_int_equal(store_mount(&u.o, &st), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i * 31 + 5);
	for (int k = 0; k < 40; k++) {
		char name[32];

		snprintf(name, sizeof(name), "obj%d", k);
		assert_int_equal(store_tx_create(&tx), 0);
		assert_int_equal(store_tx_write(tx, 1, name, 0, sizeof(buf), buf), 0);
		assert_int_equal(stu_commit(st, tx), 0);
	}
	assert_int_equal(store_read(st, 1, "obj39", 0, sizeof(back), back, &n), 0);
	assert_int_equal(n, sizeof(back));
	assert_memory_equal(buf, back, sizeof(buf));
	assert_int_equal(store_umount(st), 0);

	memset(&r, 0, sizeof(r));
	assert_int_equal(store_label_read(u.data, &r), 0);
	assert_int_equal(r.osd_id, 7);
	assert_memory_equal(r.osd_uuid, l.osd_uuid, 16);
	assert_string_equal(r.fsid, l.fsid);
	assert_string_equal(r.db_path, l.db_path);
	assert_string_equal(r.wal_path, l.wal_path);
	assert_true(r.created == l.created);

	/* a flipped byte: corrupt; a newer label version: refused */
	fd = open(u.data, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, 64, STORE_LABEL_OFF), 64);
	buf[30] ^= 0x40;
	assert_int_equal(pwrite(fd, buf, 64, STORE_LABEL_OFF), 64);
	assert_int_equal(store_label_read(u.data, &r), -WEFT_E_CORRUPT);
	buf[30] ^= 0x40;
	buf[8] = 2; /* version */
	assert_int_equal(pwrite(fd, buf, 64, STORE_LABEL_OFF), 64);
	assert_int_equal(store_label_read(u.data, &r), -ENOTSUP);
	close(fd);
	stu_cleanup(&u);
}

static void test_newer_layout_refused(void **state)
{
	struct store_sb sb;
	struct store *st = NULL;
	struct stu u;
	int fd;

	stu_init(&u, false);
	assert_int_equal(store_mkfs(&u.o), 0);
	fd = open(u.data, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &sb, sizeof(sb), 0), (ssize_t)sizeof(sb));
	sb.version = STORE_LAYOUT_VERSION + 1;
	sb.crc = 0;
	sb.crc = crc32c(0, &sb, sizeof(sb));
	assert_int_equal(pwrite(fd, &sb, sizeof(sb), 0), (ssize_t)sizeof(sb));
	close(fd);
	assert_int_equal(store_mount(&u.o, &st), -ENOTSUP);
	assert_null(st);
	stu_cleanup(&u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_probe_and_label),
	    cmocka_unit_test(test_newer_layout_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
