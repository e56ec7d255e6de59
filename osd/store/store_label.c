/* SPDX-License-Identifier: Apache-2.0 */
/* Device probe and the OSD label. See store_label.h; layout in docs/osd.md. */
#include "osd/store/store_label.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/crc32c.h"
#include "common/log.h"
#include "include/weft/weft.h"
#include "osd/store/store_int.h"
#include "proto/codec.h"

#define STORE_LABEL_MAGIC 0x4c44534f54464557ull /* "WEFTOSDL" */

/* The WAL header of a separate WAL device, as store.c writes it. */
struct store_walhdr_probe {
	uint64_t magic;
	char fsid[STORE_FSID_LEN];
	uint32_t osd_id;
	uint32_t nonce;
};

static int store_read_block(const char *path, uint64_t off, uint8_t *blk)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	int rc = 0;

	if (fd < 0)
		return -errno;
	n = pread(fd, blk, WAL_BLOCK, (off_t)off);
	if (n < 0)
		rc = -errno;
	else if (n < (ssize_t)WAL_BLOCK)
		memset(blk + n, 0, WAL_BLOCK - (size_t)n); /* a tiny file: no header */
	close(fd);
	return rc;
}

int store_probe(const char *path, struct store_probe *out)
{
	uint8_t blk[WAL_BLOCK];
	struct store_probe p = {.kind = STORE_PROBE_NONE};
	struct store_sb sb, c;
	struct store_walhdr_probe wh;
	int rc = store_read_block(path, 0, blk);

	if (rc != 0)
		return rc;
	memcpy(&sb, blk, sizeof(sb));
	memcpy(&wh, blk, sizeof(wh));
	c = sb;
	c.crc = 0;
	if (sb.magic == STORE_SB_MAGIC && crc32c(0, &c, sizeof(c)) == sb.crc) {
		p.kind = STORE_PROBE_DATA;
		memcpy(p.fsid, sb.fsid,
		       sizeof(sb.fsid) < sizeof(p.fsid) ? sizeof(sb.fsid) : sizeof(p.fsid));
		p.fsid[sizeof(p.fsid) - 1] = '\0';
		p.osd_id = sb.osd_id;
		p.wal_nonce = sb.wal_nonce;
		p.wal_separate = (int)sb.wal_separate;
		p.layout_version = sb.version;
		p.dev_size = sb.dev_size;
	} else if (wh.magic == STORE_WALHDR_MAGIC) {
		p.kind = STORE_PROBE_WAL;
		memcpy(p.fsid, wh.fsid,
		       sizeof(wh.fsid) < sizeof(p.fsid) ? sizeof(wh.fsid) : sizeof(p.fsid));
		p.fsid[sizeof(p.fsid) - 1] = '\0';
		p.osd_id = wh.osd_id;
		p.wal_nonce = wh.nonce;
	}
	*out = p;
	return 0;
}

int store_label_write(const char *path, const struct store_label *l)
{
	uint8_t *blk;
	struct proto_enc enc;
	size_t len;
	int fd, rc = 0;

	if (strlen(l->db_path) > STORE_LABEL_PATH_MAX || strlen(l->wal_path) > STORE_LABEL_PATH_MAX)
		return -EINVAL;
	if (posix_memalign((void **)&blk, WAL_BLOCK, WAL_BLOCK) != 0)
		return -ENOMEM;
	memset(blk, 0, WAL_BLOCK);
	proto_enc_init(&enc, blk, WAL_BLOCK - 4);
	proto_enc_put_u64(&enc, STORE_LABEL_MAGIC);
	proto_enc_put_u16(&enc, STORE_LABEL_VERSION);
	proto_enc_put_u16(&enc, 0);
	proto_enc_put_u32(&enc, l->osd_id);
	proto_enc_put_bytes(&enc, l->osd_uuid, sizeof(l->osd_uuid));
	proto_enc_put_str16(&enc, l->fsid, strlen(l->fsid));
	proto_enc_put_str16(&enc, l->db_path, strlen(l->db_path));
	proto_enc_put_str16(&enc, l->wal_path, strlen(l->wal_path));
	proto_enc_put_u64(&enc, l->created);
	if (proto_enc_finish(&enc, &len) != 0) {
		free(blk);
		return -EINVAL;
	}
	/* crc32c of every byte before it, so a torn or scribbled label is refused */
	{
		uint32_t crc = crc32c(0, blk, len);

		memcpy(blk + len, &crc, 4);
	}
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
	} else {
		if (pwrite(fd, blk, WAL_BLOCK, STORE_LABEL_OFF) != (ssize_t)WAL_BLOCK)
			rc = errno ? -errno : -EIO;
		else if (fdatasync(fd) != 0)
			rc = -errno;
		close(fd);
	}
	free(blk);
	return rc;
}

int store_label_read(const char *path, struct store_label *out)
{
	uint8_t blk[WAL_BLOCK];
	struct store_label l = {0};
	struct proto_err err = {{0}};
	struct proto_dec dec;
	uint64_t magic = 0;
	uint16_t version = 0, reserved = 0;
	size_t n, used;
	uint32_t crc;
	int rc = store_read_block(path, STORE_LABEL_OFF, blk);

	if (rc != 0)
		return rc;
	memcpy(&magic, blk, sizeof(magic));
	if (magic != STORE_LABEL_MAGIC)
		return -ENODATA;
	memcpy(&version, blk + 8, sizeof(version));
	if (version > STORE_LABEL_VERSION) {
		log_error("store",
			  "%s: OSD label version %u was written by a newer weft; this one "
			  "reads up to %u (docs/upgrade.md)",
			  path, version, STORE_LABEL_VERSION);
		return -ENOTSUP;
	}
	proto_dec_init(&dec, blk, WAL_BLOCK, "osd label", &err);
	proto_dec_get_u64(&dec, "magic", &magic);
	proto_dec_get_u16(&dec, "version", &version);
	proto_dec_get_u16(&dec, "reserved", &reserved);
	proto_dec_get_u32(&dec, "osd_id", &l.osd_id);
	proto_dec_get_bytes(&dec, "osd_uuid", l.osd_uuid, sizeof(l.osd_uuid));
	proto_dec_get_str16(&dec, "fsid", sizeof(l.fsid) - 1, l.fsid, sizeof(l.fsid), &n);
	proto_dec_get_str16(&dec, "db_path", STORE_LABEL_PATH_MAX, l.db_path, sizeof(l.db_path),
			    &n);
	proto_dec_get_str16(&dec, "wal_path", STORE_LABEL_PATH_MAX, l.wal_path, sizeof(l.wal_path),
			    &n);
	proto_dec_get_u64(&dec, "created", &l.created);
	used = dec.off;
	if (dec.err != 0 || used + 4 > WAL_BLOCK || reserved != 0 || version == 0) {
		log_error("store", "%s: OSD label is corrupt: %s", path,
			  dec.err ? err.msg : "bad version or reserved field");
		return -WEFT_E_CORRUPT;
	}
	memcpy(&crc, blk + used, 4);
	if (crc != crc32c(0, blk, used)) {
		log_error("store", "%s: OSD label crc mismatch", path);
		return -WEFT_E_CORRUPT;
	}
	*out = l;
	return 0;
}
