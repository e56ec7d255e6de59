/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Wire codec primitives: a bounded writer and a bounded reader. Every
 * integer is little-endian. Every message of the protocol is built from
 * these; no message code touches a raw buffer.
 *
 * Writer (struct proto_enc): put_* append to [buf, buf+cap). The first put
 * that does not fit sets a sticky -ENOBUFS and nothing more is written;
 * proto_enc_finish() reports it. With buf == NULL the writer only measures
 * (off counts the bytes that would be written, cap is ignored).
 *
 * Reader (struct proto_dec): get_* consume from [buf, buf+len). The first
 * get that fails (not enough bytes, a length or count over its bound, an
 * embedded NUL in a string) sets a sticky -EBADMSG, formats one line naming
 * the field into the caller's struct proto_err (if any), and writes nothing
 * to its out-parameter; every later get fails without reading. Lengths and
 * counts are checked against the remaining bytes before anything is copied
 * or allocated. proto_dec_finish() also rejects trailing bytes, so one
 * byte string decodes to one value only (the codec is canonical).
 *
 * The reader never logs: it only fills struct proto_err. Whoever knows the
 * peer logs that one line (see proto_frame_decode()).
 */
#ifndef WEFT_PROTO_CODEC_H
#define WEFT_PROTO_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The reason of the first decode failure, one line without a newline. */
#define PROTO_ERR_LEN 160
struct proto_err {
	char msg[PROTO_ERR_LEN];
};

/*
 * Describe a failure as "<what>.<formatted>" (what may be NULL) in err (may
 * be NULL) and return -EBADMSG. For checks outside a struct proto_dec.
 */
int proto_err_set(struct proto_err *err, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct proto_enc {
	uint8_t *buf; /* NULL = measure only */
	size_t cap;
	size_t off;
	int err; /* 0, -ENOBUFS (no room) or -EINVAL (length too big), sticky */
};

struct proto_dec {
	const uint8_t *buf;
	size_t len;
	size_t off;
	int err;		 /* 0 or -EBADMSG, sticky */
	const char *what;	 /* prefix of error lines ("osd_op"); may be NULL */
	struct proto_err *errp; /* where the first failure is described; may be NULL */
};

/* ------------------------------------------------------------------ writer */

void proto_enc_init(struct proto_enc *enc, void *buf, size_t cap);
void proto_enc_put_u8(struct proto_enc *enc, uint8_t v);
void proto_enc_put_u16(struct proto_enc *enc, uint16_t v);
void proto_enc_put_u32(struct proto_enc *enc, uint32_t v);
void proto_enc_put_u64(struct proto_enc *enc, uint64_t v);
/* n raw bytes, no length prefix (fixed-size fields). */
void proto_enc_put_bytes(struct proto_enc *enc, const void *p, size_t n);
/* u16 length + bytes; len > UINT16_MAX sets -EINVAL. */
void proto_enc_put_str16(struct proto_enc *enc, const char *s, size_t len);
/* u32 length + bytes; len > UINT32_MAX sets -EINVAL. */
void proto_enc_put_blob32(struct proto_enc *enc, const void *p, size_t len);
/* 0 and *len_out = bytes written (or measured), or the sticky error. */
int proto_enc_finish(const struct proto_enc *enc, size_t *len_out);

/* ------------------------------------------------------------------ reader */

/* what prefixes error lines; err (may be NULL) receives the first failure. */
void proto_dec_init(struct proto_dec *dec, const void *buf, size_t len, const char *what,
		    struct proto_err *err);
static inline size_t proto_dec_remaining(const struct proto_dec *dec)
{
	return dec->err != 0 ? 0 : dec->len - dec->off;
}

/*
 * Record a failure (first one wins) and return -EBADMSG. Message code uses
 * it for semantic checks so they read like the codec's own errors.
 */
int proto_dec_fail(struct proto_dec *dec, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Each returns 0 or -EBADMSG; field names the field in the error line. */
int proto_dec_get_u8(struct proto_dec *dec, const char *field, uint8_t *v_out);
int proto_dec_get_u16(struct proto_dec *dec, const char *field, uint16_t *v_out);
int proto_dec_get_u32(struct proto_dec *dec, const char *field, uint32_t *v_out);
int proto_dec_get_u64(struct proto_dec *dec, const char *field, uint64_t *v_out);
/* n raw bytes copied to dst. */
int proto_dec_get_bytes(struct proto_dec *dec, const char *field, void *dst, size_t n);
/*
 * u16 length + bytes, copied into dst and NUL-terminated. Fails when the
 * length exceeds max or the remaining bytes, or the bytes hold a NUL.
 * max must be < dst_cap (a programming error otherwise).
 */
int proto_dec_get_str16(struct proto_dec *dec, const char *field, size_t max, char *dst,
			size_t dst_cap, size_t *len_out);
/*
 * u32 length + bytes, returned as a view into the input (zero-copy; valid
 * as long as the input buffer). Fails when the length exceeds max or the
 * remaining bytes.
 */
int proto_dec_get_blob32(struct proto_dec *dec, const char *field, size_t max,
			 const void **p_out, uint32_t *len_out);
/*
 * A u32 element count for an array that follows, each element at least
 * elem_min bytes on the wire (> 0). Fails when count > max or when
 * count * elem_min exceeds the remaining bytes, so a caller can allocate
 * count elements knowing the input can fill them.
 */
int proto_dec_get_count(struct proto_dec *dec, const char *field, uint32_t max, size_t elem_min,
			uint32_t *count_out);
/* 0 when no error happened and every byte was consumed; -EBADMSG otherwise. */
int proto_dec_finish(struct proto_dec *dec);

#endif
