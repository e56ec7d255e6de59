/* SPDX-License-Identifier: Apache-2.0 */
#include "proto/codec.h"

#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ writer */

void proto_enc_init(struct proto_enc *enc, void *buf, size_t cap)
{
	enc->buf = buf;
	enc->cap = buf != NULL ? cap : 0;
	enc->off = 0;
	enc->err = 0;
}

/* Reserve n bytes; NULL when measuring, on error, or when they do not fit. */
static uint8_t *proto_enc_reserve(struct proto_enc *enc, size_t n)
{
	uint8_t *p;

	if (enc->err != 0)
		return NULL;
	if (enc->buf == NULL) {
		enc->off += n;
		return NULL;
	}
	if (n > enc->cap - enc->off) {
		enc->err = -ENOBUFS;
		return NULL;
	}
	p = enc->buf + enc->off;
	enc->off += n;
	return p;
}

void proto_enc_put_u8(struct proto_enc *enc, uint8_t v)
{
	uint8_t *p = proto_enc_reserve(enc, 1);

	if (p != NULL)
		p[0] = v;
}

void proto_enc_put_u16(struct proto_enc *enc, uint16_t v)
{
	uint8_t *p = proto_enc_reserve(enc, 2);

	if (p != NULL) {
		p[0] = (uint8_t)v;
		p[1] = (uint8_t)(v >> 8);
	}
}

void proto_enc_put_u32(struct proto_enc *enc, uint32_t v)
{
	uint8_t *p = proto_enc_reserve(enc, 4);

	if (p != NULL)
		for (int i = 0; i < 4; i++)
			p[i] = (uint8_t)(v >> (8 * i));
}

void proto_enc_put_u64(struct proto_enc *enc, uint64_t v)
{
	uint8_t *p = proto_enc_reserve(enc, 8);

	if (p != NULL)
		for (int i = 0; i < 8; i++)
			p[i] = (uint8_t)(v >> (8 * i));
}

void proto_enc_put_bytes(struct proto_enc *enc, const void *src, size_t n)
{
	uint8_t *p = proto_enc_reserve(enc, n);

	if (p != NULL && n > 0)
		memcpy(p, src, n);
}

void proto_enc_put_str16(struct proto_enc *enc, const char *s, size_t len)
{
	if (len > UINT16_MAX) {
		if (enc->err == 0)
			enc->err = -EINVAL;
		return;
	}
	proto_enc_put_u16(enc, (uint16_t)len);
	proto_enc_put_bytes(enc, s, len);
}

void proto_enc_put_blob32(struct proto_enc *enc, const void *p, size_t len)
{
	if (len > UINT32_MAX) {
		if (enc->err == 0)
			enc->err = -EINVAL;
		return;
	}
	proto_enc_put_u32(enc, (uint32_t)len);
	proto_enc_put_bytes(enc, p, len);
}

int proto_enc_finish(const struct proto_enc *enc, size_t *len_out)
{
	if (enc->err != 0)
		return enc->err;
	*len_out = enc->off;
	return 0;
}

/* ------------------------------------------------------------------ reader */

void proto_dec_init(struct proto_dec *dec, const void *buf, size_t len, const char *what,
		    struct proto_err *err)
{
	dec->buf = buf;
	dec->len = buf != NULL ? len : 0;
	dec->off = 0;
	dec->err = 0;
	dec->what = what;
	dec->errp = err;
	if (err != NULL)
		err->msg[0] = '\0';
}

static void proto_err_vset(struct proto_err *err, const char *what, const char *fmt, va_list ap)
{
	int n = 0;

	if (what != NULL)
		n = snprintf(err->msg, sizeof(err->msg), "%s.", what);
	if (n < 0 || (size_t)n >= sizeof(err->msg))
		n = 0;
	vsnprintf(err->msg + n, sizeof(err->msg) - (size_t)n, fmt, ap);
}

int proto_err_set(struct proto_err *err, const char *what, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return -EBADMSG;
	va_start(ap, fmt);
	proto_err_vset(err, what, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

int proto_dec_fail(struct proto_dec *dec, const char *fmt, ...)
{
	va_list ap;

	if (dec->err != 0)
		return -EBADMSG;
	dec->err = -EBADMSG;
	if (dec->errp == NULL)
		return -EBADMSG;
	va_start(ap, fmt);
	proto_err_vset(dec->errp, dec->what, fmt, ap);
	va_end(ap);
	return -EBADMSG;
}

/* Point at n readable bytes and consume them, or fail naming field. */
static const uint8_t *proto_dec_take(struct proto_dec *dec, const char *field, size_t n)
{
	const uint8_t *p;

	if (dec->err != 0)
		return NULL;
	if (n > dec->len - dec->off) {
		proto_dec_fail(dec, "%s: truncated: needs %zu bytes at offset %zu, %zu left", field,
			       n, dec->off, dec->len - dec->off);
		return NULL;
	}
	p = dec->buf + dec->off;
	dec->off += n;
	return p;
}

int proto_dec_get_u8(struct proto_dec *dec, const char *field, uint8_t *v_out)
{
	const uint8_t *p = proto_dec_take(dec, field, 1);

	if (p == NULL)
		return -EBADMSG;
	*v_out = p[0];
	return 0;
}

int proto_dec_get_u16(struct proto_dec *dec, const char *field, uint16_t *v_out)
{
	const uint8_t *p = proto_dec_take(dec, field, 2);

	if (p == NULL)
		return -EBADMSG;
	*v_out = (uint16_t)(p[0] | (uint16_t)p[1] << 8);
	return 0;
}

int proto_dec_get_u32(struct proto_dec *dec, const char *field, uint32_t *v_out)
{
	const uint8_t *p = proto_dec_take(dec, field, 4);
	uint32_t v = 0;

	if (p == NULL)
		return -EBADMSG;
	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	*v_out = v;
	return 0;
}

int proto_dec_get_u64(struct proto_dec *dec, const char *field, uint64_t *v_out)
{
	const uint8_t *p = proto_dec_take(dec, field, 8);
	uint64_t v = 0;

	if (p == NULL)
		return -EBADMSG;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	*v_out = v;
	return 0;
}

int proto_dec_get_bytes(struct proto_dec *dec, const char *field, void *dst, size_t n)
{
	const uint8_t *p = proto_dec_take(dec, field, n);

	if (p == NULL)
		return -EBADMSG;
	if (n > 0)
		memcpy(dst, p, n);
	return 0;
}

int proto_dec_get_str16(struct proto_dec *dec, const char *field, size_t max, char *dst,
			size_t dst_cap, size_t *len_out)
{
	const uint8_t *p;
	uint16_t len;

	assert(max < dst_cap);
	if (proto_dec_get_u16(dec, field, &len) != 0)
		return -EBADMSG;
	if (len > max)
		return proto_dec_fail(dec, "%s: string length %u exceeds max %zu", field, len, max);
	if (len > dec->len - dec->off)
		return proto_dec_fail(dec, "%s: string length %u past end (%zu bytes left)", field,
				      len, dec->len - dec->off);
	p = dec->buf + dec->off;
	if (len > 0 && memchr(p, '\0', len) != NULL)
		return proto_dec_fail(dec, "%s: string holds a NUL byte", field);
	dec->off += len;
	if (len > 0)
		memcpy(dst, p, len);
	dst[len] = '\0';
	*len_out = len;
	return 0;
}

int proto_dec_get_blob32(struct proto_dec *dec, const char *field, size_t max,
			 const void **p_out, uint32_t *len_out)
{
	uint32_t len;

	if (proto_dec_get_u32(dec, field, &len) != 0)
		return -EBADMSG;
	if (len > max)
		return proto_dec_fail(dec, "%s: length %u exceeds max %zu", field, len, max);
	if (len > dec->len - dec->off)
		return proto_dec_fail(dec, "%s: length %u past end (%zu bytes left)", field, len,
				      dec->len - dec->off);
	*p_out = dec->buf + dec->off;
	*len_out = len;
	dec->off += len;
	return 0;
}

int proto_dec_get_count(struct proto_dec *dec, const char *field, uint32_t max, size_t elem_min,
			uint32_t *count_out)
{
	uint32_t n;

	assert(elem_min > 0);
	if (proto_dec_get_u32(dec, field, &n) != 0)
		return -EBADMSG;
	if (n > max)
		return proto_dec_fail(dec, "%s: count %u exceeds max %u", field, n, max);
	/* n <= UINT32_MAX, so a division avoids the n * elem_min overflow */
	if (n > (dec->len - dec->off) / elem_min)
		return proto_dec_fail(dec,
				      "%s: count %u of %zu-byte elements past end (%zu bytes left)",
				      field, n, elem_min, dec->len - dec->off);
	*count_out = n;
	return 0;
}

int proto_dec_finish(struct proto_dec *dec)
{
	if (dec->err != 0)
		return dec->err;
	if (dec->off != dec->len)
		return proto_dec_fail(dec, "%zu trailing bytes after the last field",
				      dec->len - dec->off);
	return 0;
}
