/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What is on a device, read without mounting anything (weft osd create,
 * weft osd activate, docs/deploy.md):
 *
 * - store_probe(): block 0 holds a store superblock (a data device), a WAL
 *   header (a separate WAL device) or neither.
 * - the OSD label: block 1 (byte 4096) of the data device, between the
 *   superblock and the first region (1 MiB), which the store never writes.
 *   It says which OSD the device is (id, uuid, cluster fsid) and where its
 *   db lives, so the OSD's directory can be rebuilt from the device alone.
 *   Versioned, crc32c-protected; a newer label version is refused.
 */
#ifndef WEFT_OSD_STORE_LABEL_H
#define WEFT_OSD_STORE_LABEL_H

#include <stdint.h>

#define STORE_LABEL_OFF	     4096u
#define STORE_LABEL_VERSION  1u
#define STORE_LABEL_PATH_MAX 255

enum store_probe_kind {
	STORE_PROBE_NONE = 0,
	STORE_PROBE_DATA = 1, /* a store superblock */
	STORE_PROBE_WAL = 2,  /* the header of a separate WAL device */
};

struct store_probe {
	enum store_probe_kind kind;
	char fsid[40]; /* the store's (cluster) fsid */
	uint32_t osd_id;
	uint32_t wal_nonce; /* ties a data device to its separate WAL device */
	int wal_separate;   /* DATA: the WAL is on another device */
	uint32_t layout_version;
	uint64_t dev_size;
};

struct store_label {
	uint32_t osd_id;
	uint8_t osd_uuid[16];
	char fsid[40]; /* cluster fsid, as text */
	char db_path[STORE_LABEL_PATH_MAX + 1];
	char wal_path[STORE_LABEL_PATH_MAX + 1]; /* "" = WAL in the data device */
	uint64_t created;			 /* unix seconds */
};

/* 0 (kind NONE included), or -errno reading the device. */
int store_probe(const char *path, struct store_probe *out);
/* 0, -EINVAL (a path too long), or -errno writing (fdatasync'd). */
int store_label_write(const char *path, const struct store_label *l);
/* 0, -ENODATA (no label), -WEFT_E_CORRUPT (bad crc or fields), -ENOTSUP (newer version). */
int store_label_read(const char *path, struct store_label *out);

#endif
