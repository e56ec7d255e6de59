/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Volume object names and the three stored encodings (docs/volumes.md,
 * "Format"): header, lock, directory. All little-endian through the bounded
 * proto codec; each ends with a crc32c of every byte before it, so a torn
 * or scribbled object is an error, never a wrong size or a wrong owner.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client/volume_int.h"
#include "common/crc32c.h"
#include "common/le.h"
#include "common/log.h"
#include "common/name.h"
#include "proto/codec.h"

#define VOL_HDR_MAGIC	  0x4c4f5657u /* "WVOL" */
#define VOL_LOCK_MAGIC	  0x4b4c5657u /* "WVLK" */
#define VOL_DIR_MAGIC	  0x52445657u /* "WVDR" */
#define VOL_DIR_COUNT_MAX 65536u

int vol_name_check(const char *name)
{
	char err[256];
	int rc = weft_name_check("volume", name, WEFT_VOL_NAME_MAX, err, sizeof(err));

	if (rc != 0)
		log_error("vol", "%s", err);
	return rc;
}

void vol_hdr_obj_name(const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "wvol_header.%s", name);
}

void vol_lock_obj_name(uint64_t id, char *out, size_t cap)
{
	snprintf(out, cap, "wvol_lock.%016" PRIx64, id);
}

void vol_data_prefix(uint64_t id, char *out, size_t cap)
{
	snprintf(out, cap, "wvol_data.%016" PRIx64, id);
}

void vol_data_obj_name(uint64_t id, uint64_t objno, char *out, size_t cap)
{
	snprintf(out, cap, "wvol_data.%016" PRIx64 ".%016" PRIx64, id, objno);
}

static bool vol_pow2(uint64_t v)
{
	return v != 0 && (v & (v - 1)) == 0;
}

/* The rules a header must keep, at create and at decode. what == NULL: create (log as such). */
static int vol_hdr_check(const struct vol_hdr *h, const char *what)
{
	const char *w = what ? what : h->name;

	if (h->features & ~VOL_FEATURES_KNOWN) {
		log_error(
		    "vol", "%s: unknown feature bits 0x%" PRIx64 " (this libweft knows 0x%llx)", w,
		    h->features & ~VOL_FEATURES_KNOWN, (unsigned long long)VOL_FEATURES_KNOWN);
		return -ENOTSUP;
	}
	if (!vol_pow2(h->object_size) || h->object_size < WEFT_VOL_OBJ_MIN ||
	    h->object_size > WEFT_VOL_OBJ_MAX) {
		log_error("vol",
			  "%s: object size %" PRIu64 " is not a power of two in [%llu, %llu]", w,
			  h->object_size, WEFT_VOL_OBJ_MIN, WEFT_VOL_OBJ_MAX);
		return what ? -WEFT_E_CORRUPT : -EINVAL;
	}
	if (h->size == 0 || h->size > WEFT_VOL_SIZE_MAX) {
		log_error("vol", "%s: size %" PRIu64 " not in 1..2^60 bytes", w, h->size);
		return what ? -WEFT_E_CORRUPT : -EINVAL;
	}
	if (h->stripe_count != 1 || h->stripe_unit != h->object_size) {
		log_error("vol",
			  "%s: stripe unit %" PRIu64 " count %u: format %u stripes with count 1 "
			  "(unit = object size) only",
			  w, h->stripe_unit, h->stripe_count, VOL_FORMAT);
		return -ENOTSUP;
	}
	return 0;
}

int vol_hdr_init(struct vol_hdr *h, const char *name, uint64_t size,
		 const struct weft_vol_opts *opts)
{
	struct weft_vol_opts o = {0};
	int rc = vol_name_check(name);

	if (rc != 0)
		return rc;
	if (opts)
		o = *opts;
	memset(h, 0, sizeof(*h));
	h->format = VOL_FORMAT;
	h->features = o.features;
	h->size = size;
	h->object_size = o.object_size ? o.object_size : WEFT_VOL_OBJ_DEFAULT;
	h->stripe_unit = o.stripe_unit ? o.stripe_unit : h->object_size;
	h->stripe_count = o.stripe_count ? o.stripe_count : 1;
	snprintf(h->name, sizeof(h->name), "%s", name);
	return vol_hdr_check(h, NULL);
}

/* Append the crc32c of [0, off) at off. */
static int vol_crc_finish(struct proto_enc *enc, size_t *len_out)
{
	size_t len;
	int rc = proto_enc_finish(enc, &len);

	if (rc != 0)
		return rc;
	if (enc->buf != NULL)
		proto_enc_put_u32(enc, crc32c(0, enc->buf, len));
	else
		proto_enc_put_u32(enc, 0);
	return proto_enc_finish(enc, len_out);
}

/* The crc at the end of buf covers everything before it. */
static int vol_crc_check(const void *buf, size_t len, uint32_t magic, const char *kind,
			 const char *what)
{
	const uint8_t *p = buf;

	if (len < 8 || le_get32(p) != magic) {
		log_error("vol", "%s: %s is corrupt: %s", what, kind,
			  len < 8 ? "too short" : "bad magic");
		return -WEFT_E_CORRUPT;
	}
	if (crc32c(0, p, len - 4) != le_get32(p + len - 4)) {
		log_error("vol", "%s: %s is corrupt: checksum mismatch", what, kind);
		return -WEFT_E_CORRUPT;
	}
	return 0;
}

int vol_hdr_encode(const struct vol_hdr *h, uint8_t *buf, size_t cap, size_t *len_out)
{
	struct proto_enc enc;

	proto_enc_init(&enc, buf, cap);
	proto_enc_put_u32(&enc, VOL_HDR_MAGIC);
	proto_enc_put_u16(&enc, (uint16_t)h->format);
	proto_enc_put_u16(&enc, 0); /* reserved */
	proto_enc_put_u64(&enc, h->features);
	proto_enc_put_u64(&enc, h->id);
	proto_enc_put_u64(&enc, h->size);
	proto_enc_put_u64(&enc, h->object_size);
	proto_enc_put_u64(&enc, h->stripe_unit);
	proto_enc_put_u32(&enc, h->stripe_count);
	proto_enc_put_u64(&enc, h->create_time);
	proto_enc_put_str16(&enc, h->name, strlen(h->name));
	return vol_crc_finish(&enc, len_out);
}

int vol_hdr_decode(const void *buf, size_t len, const char *what, struct vol_hdr *h_out)
{
	struct vol_hdr h = {0};
	struct proto_err err = {{0}};
	struct proto_dec dec;
	uint16_t format = 0, reserved = 0;
	uint32_t magic = 0, crc = 0;
	size_t nl = 0;
	int rc;

	if (len > VOL_HDR_MAX) {
		log_error("vol", "%s: header is corrupt: %zu bytes > %u", what, len, VOL_HDR_MAX);
		return -WEFT_E_CORRUPT;
	}
	rc = vol_crc_check(buf, len, VOL_HDR_MAGIC, "header", what);
	if (rc != 0)
		return rc;
	proto_dec_init(&dec, buf, len, "header", &err);
	proto_dec_get_u32(&dec, "magic", &magic);
	proto_dec_get_u16(&dec, "format", &format);
	if (dec.err == 0 && format != VOL_FORMAT) {
		log_error("vol", "%s: header format %u; this libweft reads format %u", what, format,
			  VOL_FORMAT);
		return format > VOL_FORMAT ? -ENOTSUP : -WEFT_E_CORRUPT;
	}
	proto_dec_get_u16(&dec, "reserved", &reserved);
	proto_dec_get_u64(&dec, "features", &h.features);
	proto_dec_get_u64(&dec, "id", &h.id);
	proto_dec_get_u64(&dec, "size", &h.size);
	proto_dec_get_u64(&dec, "object_size", &h.object_size);
	proto_dec_get_u64(&dec, "stripe_unit", &h.stripe_unit);
	proto_dec_get_u32(&dec, "stripe_count", &h.stripe_count);
	proto_dec_get_u64(&dec, "create_time", &h.create_time);
	proto_dec_get_str16(&dec, "name", WEFT_VOL_NAME_MAX, h.name, sizeof(h.name), &nl);
	proto_dec_get_u32(&dec, "crc", &crc);
	if (proto_dec_finish(&dec) != 0 || reserved != 0) {
		log_error("vol", "%s: header is corrupt: %s", what,
			  reserved ? "reserved field set" : err.msg);
		return -WEFT_E_CORRUPT;
	}
	h.format = format;
	rc = vol_hdr_check(&h, what);
	if (rc != 0)
		return rc;
	*h_out = h;
	return 0;
}

int vol_lock_encode(const struct vol_lock *l, uint8_t *buf, size_t cap, size_t *len_out)
{
	struct proto_enc enc;

	proto_enc_init(&enc, buf, cap);
	proto_enc_put_u32(&enc, VOL_LOCK_MAGIC);
	proto_enc_put_u16(&enc, VOL_FORMAT);
	proto_enc_put_u64(&enc, l->epoch);
	proto_enc_put_u64(&enc, l->since);
	proto_enc_put_str16(&enc, l->holder, strlen(l->holder));
	return vol_crc_finish(&enc, len_out);
}

int vol_lock_decode(const void *buf, size_t len, const char *what, struct vol_lock *l_out)
{
	struct vol_lock l = {0};
	struct proto_err err = {{0}};
	struct proto_dec dec;
	uint32_t magic = 0, crc = 0;
	uint16_t format = 0;
	size_t hl = 0;
	int rc;

	if (len == 0) {
		*l_out = l;
		return 0;
	}
	if (len > VOL_LOCK_MAX) {
		log_error("vol", "%s: lock is corrupt: %zu bytes > %u", what, len, VOL_LOCK_MAX);
		return -WEFT_E_CORRUPT;
	}
	rc = vol_crc_check(buf, len, VOL_LOCK_MAGIC, "lock", what);
	if (rc != 0)
		return rc;
	proto_dec_init(&dec, buf, len, "lock", &err);
	proto_dec_get_u32(&dec, "magic", &magic);
	proto_dec_get_u16(&dec, "format", &format);
	proto_dec_get_u64(&dec, "epoch", &l.epoch);
	proto_dec_get_u64(&dec, "since", &l.since);
	proto_dec_get_str16(&dec, "holder", WEFT_VOL_HOLDER_MAX, l.holder, sizeof(l.holder), &hl);
	proto_dec_get_u32(&dec, "crc", &crc);
	for (size_t i = 0; i < hl && dec.err == 0; i++)
		if (l.holder[i] < 0x20 || l.holder[i] > 0x7e)
			proto_dec_fail(&dec, "holder: byte %zu is not printable ASCII", i);
	if (proto_dec_finish(&dec) != 0 || format != VOL_FORMAT) {
		log_error("vol", "%s: lock is corrupt: %s", what,
			  dec.err ? err.msg : "unknown format");
		return -WEFT_E_CORRUPT;
	}
	*l_out = l;
	return 0;
}

void vol_dir_free(char **names, uint32_t n)
{
	for (uint32_t i = 0; i < n && names; i++)
		free(names[i]);
	free(names);
}

int vol_dir_decode(const void *buf, size_t len, char ***names_out, uint32_t *n_out)
{
	struct proto_err err = {{0}};
	struct proto_dec dec;
	uint32_t magic = 0, crc = 0, n = 0, i;
	uint16_t format = 0;
	char **names = NULL;
	char name[WEFT_VOL_NAME_MAX + 1];
	size_t nl;
	int rc;

	if (len == 0) {
		*names_out = NULL;
		*n_out = 0;
		return 0;
	}
	rc = vol_crc_check(buf, len, VOL_DIR_MAGIC, "directory", VOL_DIR_OBJ);
	if (rc != 0)
		return rc;
	proto_dec_init(&dec, buf, len, "directory", &err);
	proto_dec_get_u32(&dec, "magic", &magic);
	proto_dec_get_u16(&dec, "format", &format);
	proto_dec_get_count(&dec, "count", VOL_DIR_COUNT_MAX, 3, &n);
	if (dec.err == 0 && n > 0) {
		names = calloc(n, sizeof(*names));
		if (names == NULL)
			return -ENOMEM;
	}
	for (i = 0; i < n && dec.err == 0; i++) {
		if (proto_dec_get_str16(&dec, "name", WEFT_VOL_NAME_MAX, name, sizeof(name), &nl))
			break;
		/* sorted and unique, so lookups and inserts stay simple and the encoding canonical
		 */
		if (i > 0 && strcmp(names[i - 1], name) >= 0) {
			proto_dec_fail(&dec, "name %u out of order", i);
			break;
		}
		names[i] = strdup(name);
		if (names[i] == NULL) {
			vol_dir_free(names, i);
			return -ENOMEM;
		}
	}
	proto_dec_get_u32(&dec, "crc", &crc);
	if (proto_dec_finish(&dec) != 0 || format != VOL_FORMAT) {
		log_error("vol", "%s: directory is corrupt: %s", VOL_DIR_OBJ,
			  dec.err ? err.msg : "unknown format");
		vol_dir_free(names, n);
		return -WEFT_E_CORRUPT;
	}
	*names_out = names;
	*n_out = n;
	return 0;
}

int vol_dir_encode(char *const *names, uint32_t n, uint8_t *buf, size_t cap, size_t *len_out)
{
	struct proto_enc enc;

	proto_enc_init(&enc, buf, cap);
	proto_enc_put_u32(&enc, VOL_DIR_MAGIC);
	proto_enc_put_u16(&enc, VOL_FORMAT);
	proto_enc_put_u32(&enc, n);
	for (uint32_t i = 0; i < n; i++)
		proto_enc_put_str16(&enc, names[i], strlen(names[i]));
	return vol_crc_finish(&enc, len_out);
}
