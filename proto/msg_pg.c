/* SPDX-License-Identifier: Apache-2.0 */
/*
 * PG messages (proto_pg.h): peering, recovery and scrub on the cluster
 * network, and PG_STATS to the monitors. Same rules as msg.c: decoders
 * parse into a local, reject trailing bytes, validate, and write the
 * out-parameter only on success.
 */
#include "proto/proto.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define PG_ENC_CHECK(expr)                                                                         \
	do {                                                                                       \
		if ((expr) != 0)                                                                   \
			return -EINVAL;                                                            \
	} while (0)

#define PG_LOG_ENTRY_MIN 13u  /* u64 version, u16 op, u16 len, 1 byte of name */
#define PG_SCAN_ENTRY_MIN 23u /* u16 len, 1 byte, u64 version, u64 size, u32 crc */
#define PG_STAT_MIN 85u	 /* ... u32 unfound, u8 nblocked */
#define PG_INTERVAL_MIN 10u /* u32 first, u32 last, u8 flags, u8 n */

static bool proto_pg_is_log_op(uint16_t op)
{
	return op == PROTO_OP_WRITE || op == PROTO_OP_WRITE_FULL || op == PROTO_OP_REMOVE ||
	       op == PROTO_OP_TRUNCATE || op == PROTO_OP_ZERO || op == PROTO_PG_LOG_ROLLBACK;
}

/* ------------------------------------------------------------ entries */

void proto_pg_log_entry_put(struct proto_enc *enc, const struct proto_pg_log_entry *e)
{
	proto_enc_put_u64(enc, e->version);
	proto_enc_put_u16(enc, e->op);
	proto_enc_put_str16(enc, e->name, e->name_len);
}

static int proto_pg_log_entry_get(struct proto_dec *dec, struct proto_pg_log_entry *e)
{
	proto_dec_get_u64(dec, "entry.version", &e->version);
	proto_dec_get_u16(dec, "entry.op", &e->op);
	proto_dec_get_str16(dec, "entry.name", PROTO_OBJ_NAME_MAX, e->name, sizeof(e->name),
			    &e->name_len);
	if (dec->err != 0)
		return dec->err;
	if (!proto_pg_is_log_op(e->op))
		return proto_dec_fail(dec, "entry.op: unknown op %u", e->op);
	if (e->name_len == 0)
		return proto_dec_fail(dec, "entry.name: empty");
	if (e->version == 0)
		return proto_dec_fail(dec, "entry.version: 0");
	return 0;
}

void proto_pg_scan_entry_put(struct proto_enc *enc, const struct proto_pg_scan_entry *e)
{
	proto_enc_put_str16(enc, e->name, e->name_len);
	proto_enc_put_u64(enc, e->version);
	proto_enc_put_u64(enc, e->size);
	proto_enc_put_u32(enc, e->crc);
}

static int proto_pg_scan_entry_get(struct proto_dec *dec, struct proto_pg_scan_entry *e)
{
	proto_dec_get_str16(dec, "entry.name", PROTO_OBJ_NAME_MAX, e->name, sizeof(e->name),
			    &e->name_len);
	proto_dec_get_u64(dec, "entry.version", &e->version);
	proto_dec_get_u64(dec, "entry.size", &e->size);
	proto_dec_get_u32(dec, "entry.crc", &e->crc);
	if (dec->err != 0)
		return dec->err;
	if (e->name_len == 0)
		return proto_dec_fail(dec, "entry.name: empty");
	return 0;
}

void proto_pg_stat_put(struct proto_enc *enc, const struct proto_pg_stat *s)
{
	proto_enc_put_u32(enc, s->pool);
	proto_enc_put_u32(enc, s->pg);
	proto_enc_put_u32(enc, s->state);
	proto_enc_put_u32(enc, s->same_since);
	proto_enc_put_u64(enc, s->last_update);
	proto_enc_put_u64(enc, s->objects);
	proto_enc_put_u64(enc, s->bytes);
	proto_enc_put_u64(enc, s->missing);
	proto_enc_put_u64(enc, s->missing_bytes);
	proto_enc_put_u64(enc, s->recovered_objects);
	proto_enc_put_u64(enc, s->recovered_bytes);
	proto_enc_put_u32(enc, s->inconsistent);
	proto_enc_put_u32(enc, s->last_scrub);
	proto_enc_put_u32(enc, s->unfound);
	proto_enc_put_u32(enc, s->verify_token);
	proto_enc_put_u32(enc, s->verify_inconsistent);
	proto_enc_put_u8(enc, s->nblocked);
	for (unsigned int i = 0; i < s->nblocked && i < PROTO_PG_BLOCKED_MAX; i++)
		proto_enc_put_u32(enc, s->blocked[i]);
}

void proto_pg_interval_put(struct proto_enc *enc, const struct proto_pg_interval *iv)
{
	proto_enc_put_u32(enc, iv->first);
	proto_enc_put_u32(enc, iv->last);
	proto_enc_put_u8(enc, iv->flags);
	proto_enc_put_u8(enc, iv->n);
	for (unsigned int i = 0; i < iv->n && i < PROTO_PG_IV_OSDS; i++)
		proto_enc_put_u32(enc, (uint32_t)iv->osd[i]);
}

int proto_pg_interval_get(struct proto_dec *dec, struct proto_pg_interval *iv)
{
	memset(iv, 0, sizeof(*iv));
	proto_dec_get_u32(dec, "interval.first", &iv->first);
	proto_dec_get_u32(dec, "interval.last", &iv->last);
	proto_dec_get_u8(dec, "interval.flags", &iv->flags);
	proto_dec_get_u8(dec, "interval.n", &iv->n);
	if (dec->err != 0)
		return dec->err;
	if (iv->n > PROTO_PG_IV_OSDS)
		return proto_dec_fail(dec, "interval.n: %u > %u", iv->n, PROTO_PG_IV_OSDS);
	if (iv->flags & ~PROTO_PG_IV_F_ACTIVE)
		return proto_dec_fail(dec, "interval.flags: unknown bits 0x%x", iv->flags);
	if (iv->first == 0 || iv->last < iv->first)
		return proto_dec_fail(dec, "interval: epochs %u..%u", iv->first, iv->last);
	for (unsigned int i = 0; i < iv->n; i++) {
		uint32_t id = 0;

		proto_dec_get_u32(dec, "interval.osd", &id);
		if (dec->err == 0 && id > INT32_MAX)
			return proto_dec_fail(dec, "interval.osd: %u", id);
		iv->osd[i] = (int32_t)id;
	}
	return dec->err;
}

static int proto_pg_stat_get(struct proto_dec *dec, struct proto_pg_stat *s)
{
	proto_dec_get_u32(dec, "stat.pool", &s->pool);
	proto_dec_get_u32(dec, "stat.pg", &s->pg);
	proto_dec_get_u32(dec, "stat.state", &s->state);
	proto_dec_get_u32(dec, "stat.same_since", &s->same_since);
	proto_dec_get_u64(dec, "stat.last_update", &s->last_update);
	proto_dec_get_u64(dec, "stat.objects", &s->objects);
	proto_dec_get_u64(dec, "stat.bytes", &s->bytes);
	proto_dec_get_u64(dec, "stat.missing", &s->missing);
	proto_dec_get_u64(dec, "stat.missing_bytes", &s->missing_bytes);
	proto_dec_get_u64(dec, "stat.recovered_objects", &s->recovered_objects);
	proto_dec_get_u64(dec, "stat.recovered_bytes", &s->recovered_bytes);
	proto_dec_get_u32(dec, "stat.inconsistent", &s->inconsistent);
	proto_dec_get_u32(dec, "stat.last_scrub", &s->last_scrub);
	proto_dec_get_u32(dec, "stat.unfound", &s->unfound);
	proto_dec_get_u32(dec, "stat.verify_token", &s->verify_token);
	proto_dec_get_u32(dec, "stat.verify_inconsistent", &s->verify_inconsistent);
	proto_dec_get_u8(dec, "stat.nblocked", &s->nblocked);
	if (dec->err != 0)
		return dec->err;
	if (s->nblocked > PROTO_PG_BLOCKED_MAX)
		return proto_dec_fail(dec, "stat.nblocked: %u > %u", s->nblocked,
				      PROTO_PG_BLOCKED_MAX);
	for (unsigned int i = 0; i < s->nblocked; i++)
		proto_dec_get_u32(dec, "stat.blocked", &s->blocked[i]);
	if (dec->err != 0)
		return dec->err;
	if (s->state & ~PROTO_PGS_KNOWN)
		return proto_dec_fail(dec, "stat.state: unknown bits 0x%x",
				      s->state & ~PROTO_PGS_KNOWN);
	return 0;
}

/* Walk count entries of the remaining input with get; they must fill it exactly. */
static int proto_pg_entries_check(struct proto_dec *dec, uint16_t type, uint32_t count)
{
	for (uint32_t i = 0; i < count && dec->err == 0; i++) {
		if (type == PROTO_PG_LOG) {
			struct proto_pg_log_entry e;

			proto_pg_log_entry_get(dec, &e);
		} else if (type == PROTO_PG_SCAN) {
			struct proto_pg_scan_entry e;

			proto_pg_scan_entry_get(dec, &e);
		} else if (type == PROTO_PG_INFO || type == PROTO_PG_NOTIFY) {
			struct proto_pg_interval iv;

			proto_pg_interval_get(dec, &iv);
		} else {
			struct proto_pg_stat s;

			proto_pg_stat_get(dec, &s);
		}
	}
	return dec->err;
}

int proto_pg_log_entry_next(const struct proto_pg *m, size_t *off,
			    struct proto_pg_log_entry *e_out)
{
	struct proto_dec dec;

	if (*off >= m->entries_len)
		return 0;
	proto_dec_init(&dec, (const uint8_t *)m->entries + *off, m->entries_len - *off, NULL,
		       NULL);
	if (proto_pg_log_entry_get(&dec, e_out) != 0)
		return 0;
	*off += dec.off;
	return 1;
}

int proto_pg_scan_entry_next(const struct proto_pg *m, size_t *off,
			     struct proto_pg_scan_entry *e_out)
{
	struct proto_dec dec;

	if (*off >= m->entries_len)
		return 0;
	proto_dec_init(&dec, (const uint8_t *)m->entries + *off, m->entries_len - *off, NULL,
		       NULL);
	if (proto_pg_scan_entry_get(&dec, e_out) != 0)
		return 0;
	*off += dec.off;
	return 1;
}

int proto_pg_stat_next(const struct proto_pg_stats *m, size_t *off, struct proto_pg_stat *s_out)
{
	struct proto_dec dec;

	if (*off >= m->entries_len)
		return 0;
	proto_dec_init(&dec, (const uint8_t *)m->entries + *off, m->entries_len - *off, NULL,
		       NULL);
	if (proto_pg_stat_get(&dec, s_out) != 0)
		return 0;
	*off += dec.off;
	return 1;
}

int proto_pg_interval_next(const struct proto_pg *m, size_t *off,
			   struct proto_pg_interval *iv_out)
{
	struct proto_dec dec;

	if (*off >= m->entries_len)
		return 0;
	proto_dec_init(&dec, (const uint8_t *)m->entries + *off, m->entries_len - *off, NULL,
		       NULL);
	if (proto_pg_interval_get(&dec, iv_out) != 0)
		return 0;
	*off += dec.off;
	return 1;
}

/* ------------------------------------------------------------ messages */

static const char *proto_pg_what(uint16_t type)
{
	return proto_type_name(type);
}

int proto_pg_validate(uint16_t type, const struct proto_pg *m, struct proto_err *err)
{
	const char *w = proto_pg_what(type);

	if (m->epoch == 0)
		return proto_err_set(err, w, "epoch: 0");
	switch (type) {
	case PROTO_PG_QUERY:
	case PROTO_PG_DELETE:
		return 0;
	case PROTO_PG_INFO:
	case PROTO_PG_NOTIFY:
		if (m->flags & ~PROTO_PG_INFO_FLAGS_KNOWN)
			return proto_err_set(err, w, "flags: unknown bits 0x%x", m->flags);
		if (m->last_complete > m->last_update || m->tail > m->last_update)
			return proto_err_set(err, w, "versions: tail/last_complete after last_update");
		if (m->count > PROTO_PG_INTERVALS_MAX)
			return proto_err_set(err, w, "count: %u intervals > %u", m->count,
					     PROTO_PG_INTERVALS_MAX);
		return 0;
	case PROTO_PG_LOG_REQ:
	case PROTO_PG_SCAN_REQ:
		if (m->max == 0 || m->max > PROTO_PG_ENTRIES_MAX)
			return proto_err_set(err, w, "max: %u not in 1..%u", m->max,
					     PROTO_PG_ENTRIES_MAX);
		if (type == PROTO_PG_SCAN_REQ &&
		    (m->flags & ~(PROTO_PG_SCAN_F_DEEP | PROTO_PG_SCAN_F_DIGEST)))
			return proto_err_set(err, w, "flags: unknown bits 0x%x", m->flags);
		return 0;
	case PROTO_PG_LOG:
	case PROTO_PG_SCAN:
		if (m->flags & ~PROTO_PG_F_LAST)
			return proto_err_set(err, w, "flags: unknown bits 0x%x", m->flags);
		if (m->count > PROTO_PG_ENTRIES_MAX)
			return proto_err_set(err, w, "count: %u > %u", m->count,
					     PROTO_PG_ENTRIES_MAX);
		return 0;
	case PROTO_PG_ACTIVATE:
		if (m->flags & ~(PROTO_PG_ACT_F_BACKFILL | PROTO_PG_ACT_F_APPLIED))
			return proto_err_set(err, w, "flags: unknown bits 0x%x", m->flags);
		if (m->tail > m->last_update)
			return proto_err_set(err, w, "tail: after last_update");
		if (m->last_complete > m->last_update)
			return proto_err_set(err, w, "last_complete: after last_update");
		return 0;
	case PROTO_PG_PULL:
		if (m->name_len == 0 || m->name_len > PROTO_OBJ_NAME_MAX)
			return proto_err_set(err, w, "name: length %zu not in 1..%u", m->name_len,
					     PROTO_OBJ_NAME_MAX);
		if (m->flags & ~(PROTO_PG_PULL_F_NAK | PROTO_PG_PULL_F_LOGV))
			return proto_err_set(err, w, "flags: unknown bits 0x%x", m->flags);
		if ((m->flags & PROTO_PG_PULL_F_LOGV) && !(m->flags & PROTO_PG_PULL_F_NAK))
			return proto_err_set(err, w, "flags: LOGV without NAK");
		return 0;
	case PROTO_PG_RECOVERED:
		return 0;
	}
	return proto_err_set(err, "pg", "type: %u is not a PG message", type);
}

int proto_pg_encode(struct proto_enc *enc, uint16_t type, const struct proto_pg *m)
{
	PG_ENC_CHECK(proto_pg_validate(type, m, NULL));
	proto_enc_put_u32(enc, m->pool);
	proto_enc_put_u32(enc, m->pg);
	proto_enc_put_u32(enc, m->epoch);
	proto_enc_put_u32(enc, m->from);
	switch (type) {
	case PROTO_PG_INFO:
	case PROTO_PG_NOTIFY:
		proto_enc_put_u8(enc, m->flags);
		proto_enc_put_u64(enc, m->last_update);
		proto_enc_put_u64(enc, m->tail);
		proto_enc_put_u64(enc, m->last_complete);
		proto_enc_put_u32(enc, m->les);
		proto_enc_put_u32(enc, m->since);
		proto_enc_put_u32(enc, m->born);
		proto_enc_put_u32(enc, m->count);
		proto_enc_put_bytes(enc, m->entries, m->entries_len);
		break;
	case PROTO_PG_LOG_REQ:
		proto_enc_put_u64(enc, m->after);
		proto_enc_put_u32(enc, m->max);
		break;
	case PROTO_PG_LOG:
	case PROTO_PG_SCAN:
		proto_enc_put_u8(enc, m->flags);
		proto_enc_put_u32(enc, m->count);
		proto_enc_put_bytes(enc, m->entries, m->entries_len);
		break;
	case PROTO_PG_ACTIVATE:
		proto_enc_put_u8(enc, m->flags);
		proto_enc_put_u64(enc, m->last_update);
		proto_enc_put_u64(enc, m->tail);
		proto_enc_put_u32(enc, m->les);
		proto_enc_put_u64(enc, m->last_complete);
		proto_enc_put_u32(enc, m->count);
		break;
	case PROTO_PG_PULL:
		proto_enc_put_u8(enc, m->flags);
		proto_enc_put_u64(enc, m->last_update);
		proto_enc_put_str16(enc, m->name, m->name_len);
		break;
	case PROTO_PG_RECOVERED:
		proto_enc_put_u64(enc, m->last_complete);
		break;
	case PROTO_PG_SCAN_REQ:
		proto_enc_put_u8(enc, m->flags);
		proto_enc_put_u32(enc, m->max);
		proto_enc_put_str16(enc, m->name, m->name_len);
		break;
	}
	return 0;
}

int proto_pg_decode(uint16_t type, const void *buf, size_t len, struct proto_err *err,
		    struct proto_pg *m_out)
{
	static __thread struct proto_pg m; /* 1 KiB of name: not on a fuzzer's stack */
	struct proto_dec dec;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, proto_pg_what(type), err);
	proto_dec_get_u32(&dec, "pool", &m.pool);
	proto_dec_get_u32(&dec, "pg", &m.pg);
	proto_dec_get_u32(&dec, "epoch", &m.epoch);
	proto_dec_get_u32(&dec, "from", &m.from);
	switch (type) {
	case PROTO_PG_QUERY:
	case PROTO_PG_DELETE:
		break;
	case PROTO_PG_INFO:
	case PROTO_PG_NOTIFY:
		proto_dec_get_u8(&dec, "flags", &m.flags);
		proto_dec_get_u64(&dec, "last_update", &m.last_update);
		proto_dec_get_u64(&dec, "tail", &m.tail);
		proto_dec_get_u64(&dec, "last_complete", &m.last_complete);
		proto_dec_get_u32(&dec, "les", &m.les);
		proto_dec_get_u32(&dec, "since", &m.since);
		proto_dec_get_u32(&dec, "born", &m.born);
		proto_dec_get_count(&dec, "count", PROTO_PG_INTERVALS_MAX, PG_INTERVAL_MIN,
				    &m.count);
		if (dec.err == 0) {
			m.entries = (const uint8_t *)buf + dec.off;
			m.entries_len = (uint32_t)(len - dec.off);
			proto_pg_entries_check(&dec, type, m.count);
		}
		break;
	case PROTO_PG_LOG_REQ:
		proto_dec_get_u64(&dec, "after", &m.after);
		proto_dec_get_u32(&dec, "max", &m.max);
		break;
	case PROTO_PG_LOG:
	case PROTO_PG_SCAN:
		proto_dec_get_u8(&dec, "flags", &m.flags);
		proto_dec_get_count(&dec, "count", PROTO_PG_ENTRIES_MAX,
				    type == PROTO_PG_LOG ? PG_LOG_ENTRY_MIN : PG_SCAN_ENTRY_MIN,
				    &m.count);
		if (dec.err == 0) {
			m.entries = (const uint8_t *)buf + dec.off;
			m.entries_len = (uint32_t)(len - dec.off);
			proto_pg_entries_check(&dec, type, m.count);
		}
		break;
	case PROTO_PG_ACTIVATE:
		proto_dec_get_u8(&dec, "flags", &m.flags);
		proto_dec_get_u64(&dec, "last_update", &m.last_update);
		proto_dec_get_u64(&dec, "tail", &m.tail);
		proto_dec_get_u32(&dec, "les", &m.les);
		proto_dec_get_u64(&dec, "last_complete", &m.last_complete);
		proto_dec_get_u32(&dec, "count", &m.count);
		break;
	case PROTO_PG_PULL:
		proto_dec_get_u8(&dec, "flags", &m.flags);
		proto_dec_get_u64(&dec, "version", &m.last_update);
		proto_dec_get_str16(&dec, "name", PROTO_OBJ_NAME_MAX, m.name, sizeof(m.name),
				    &m.name_len);
		break;
	case PROTO_PG_RECOVERED:
		proto_dec_get_u64(&dec, "last_complete", &m.last_complete);
		break;
	case PROTO_PG_SCAN_REQ:
		proto_dec_get_u8(&dec, "flags", &m.flags);
		proto_dec_get_u32(&dec, "max", &m.max);
		proto_dec_get_str16(&dec, "after", PROTO_OBJ_NAME_MAX, m.name, sizeof(m.name),
				    &m.name_len);
		break;
	default:
		return proto_err_set(err, "pg", "type: %u is not a PG message", type);
	}
	if (proto_dec_finish(&dec) != 0 || proto_pg_validate(type, &m, err) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

static void proto_osd_stat_put(struct proto_enc *enc, const struct proto_osd_stat *o)
{
	proto_enc_put_u64(enc, o->total);
	proto_enc_put_u64(enc, o->used);
	proto_enc_put_u64(enc, o->avail);
	proto_enc_put_u64(enc, o->data_used);
	proto_enc_put_u64(enc, o->wal_bytes);
	proto_enc_put_u64(enc, o->kv_bytes);
	proto_enc_put_u64(enc, o->purging_objects);
	proto_enc_put_u32(enc, o->num_pgs);
}

static int proto_osd_stat_get(struct proto_dec *dec, struct proto_osd_stat *o)
{
	proto_dec_get_u64(dec, "osd_stat.total", &o->total);
	proto_dec_get_u64(dec, "osd_stat.used", &o->used);
	proto_dec_get_u64(dec, "osd_stat.avail", &o->avail);
	proto_dec_get_u64(dec, "osd_stat.data_used", &o->data_used);
	proto_dec_get_u64(dec, "osd_stat.wal_bytes", &o->wal_bytes);
	proto_dec_get_u64(dec, "osd_stat.kv_bytes", &o->kv_bytes);
	proto_dec_get_u64(dec, "osd_stat.purging_objects", &o->purging_objects);
	proto_dec_get_u32(dec, "osd_stat.num_pgs", &o->num_pgs);
	if (dec->err != 0)
		return dec->err;
	if (o->avail > o->total)
		return proto_dec_fail(dec, "osd_stat: avail %llu > total %llu",
				      (unsigned long long)o->avail, (unsigned long long)o->total);
	return 0;
}

int proto_pg_stats_encode(struct proto_enc *enc, const struct proto_pg_stats *m)
{
	PG_ENC_CHECK(m->count > PROTO_PG_ENTRIES_MAX ? -EINVAL : 0);
	proto_enc_put_u32(enc, m->osd);
	proto_enc_put_u32(enc, m->epoch);
	proto_osd_stat_put(enc, &m->osd_stat);
	/* bit 31 of count: the I/O counters follow (so a cut after the entries is malformed) */
	proto_enc_put_u32(enc, m->count | (m->has_io ? PROTO_PG_STATS_F_IO : 0));
	proto_enc_put_bytes(enc, m->entries, m->entries_len);
	if (m->has_io) {
		proto_enc_put_u64(enc, m->io.rd_ops);
		proto_enc_put_u64(enc, m->io.rd_bytes);
		proto_enc_put_u64(enc, m->io.wr_ops);
		proto_enc_put_u64(enc, m->io.wr_bytes);
	}
	return 0;
}

int proto_pg_stats_decode(const void *buf, size_t len, struct proto_err *err,
			  struct proto_pg_stats *m_out)
{
	struct proto_pg_stats m;
	struct proto_dec dec;

	memset(&m, 0, sizeof(m));
	proto_dec_init(&dec, buf, len, "pg_stats", err);
	proto_dec_get_u32(&dec, "osd", &m.osd);
	proto_dec_get_u32(&dec, "epoch", &m.epoch);
	proto_osd_stat_get(&dec, &m.osd_stat);
	proto_dec_get_u32(&dec, "count", &m.count);
	if (dec.err == 0) {
		m.has_io = (m.count & PROTO_PG_STATS_F_IO) != 0;
		m.count &= ~PROTO_PG_STATS_F_IO;
		if (m.count > PROTO_PG_ENTRIES_MAX)
			proto_dec_fail(&dec, "count: count %u exceeds max %u", m.count,
				       PROTO_PG_ENTRIES_MAX);
		else if (m.count > (len - dec.off) / PG_STAT_MIN)
			proto_dec_fail(&dec, "count: count %u of %d-byte elements past end (%zu bytes left)",
				       m.count, (int)PG_STAT_MIN, len - dec.off);
	}
	if (dec.err == 0) {
		size_t start = dec.off;

		m.entries = (const uint8_t *)buf + start;
		proto_pg_entries_check(&dec, PROTO_PG_STATS, m.count);
		m.entries_len = (uint32_t)(dec.off - start);
	}
	/* the I/O counters, when the sender has PROTO_FEAT_IO_STATS; else nothing follows */
	if (dec.err == 0 && m.has_io) {
		proto_dec_get_u64(&dec, "io.rd_ops", &m.io.rd_ops);
		proto_dec_get_u64(&dec, "io.rd_bytes", &m.io.rd_bytes);
		proto_dec_get_u64(&dec, "io.wr_ops", &m.io.wr_ops);
		proto_dec_get_u64(&dec, "io.wr_bytes", &m.io.wr_bytes);
	}
	if (proto_dec_finish(&dec) != 0)
		return -EBADMSG;
	*m_out = m;
	return 0;
}

const char *proto_pg_state_str(uint32_t state, char *buf, size_t cap)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
	    {PROTO_PGS_DOWN, "down"},
	    {PROTO_PGS_INCOMPLETE, "incomplete"},
	    {PROTO_PGS_PEERING, "peering"},
	    {PROTO_PGS_ACTIVE, "active"},
	    {PROTO_PGS_CLEAN, "clean"},
	    {PROTO_PGS_RECOVERING, "recovering"},
	    {PROTO_PGS_BACKFILLING, "backfilling"},
	    {PROTO_PGS_BACKFILL_TOOFULL, "backfill_toofull"},
	    {PROTO_PGS_DEGRADED, "degraded"},
	    {PROTO_PGS_UNDERSIZED, "undersized"},
	    {PROTO_PGS_SCRUBBING, "scrubbing"},
	    {PROTO_PGS_INCONSISTENT, "inconsistent"},
	};
	size_t off = 0;

	if (cap == 0)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(state & names[i].bit))
			continue;
		int n = snprintf(buf + off, cap - off, "%s%s", off ? "+" : "", names[i].name);

		if (n < 0 || (size_t)n >= cap - off)
			break;
		off += (size_t)n;
	}
	if (off == 0)
		snprintf(buf, cap, "unknown");
	return buf;
}
