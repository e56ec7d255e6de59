/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The version-7 part of the cluster map: the client blocklist (docs/volumes.md,
 * "Exclusive lock"; docs/operations.md, "Blocklist"). An entry names one
 * client instance and when the leader removes it; the map holds at most
 * MON_BLOCKLIST_MAX, sorted by instance, so one map has one encoding and an
 * OSD finds an instance with a binary search on its op path.
 */
#include <errno.h>
#include <string.h>

#include "mon/map_priv.h"

#define MON_BLOCKLIST_WIRE_MIN (8 + 8 + 8)

const struct mon_blocklist *mon_map_blocklist_find(const struct mon_map *map, uint64_t instance)
{
	uint32_t lo = 0, hi = map->nblocklist;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t v = map->blocklist[mid].instance;

		if (v == instance)
			return &map->blocklist[mid];
		if (v < instance)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void mon_blocklist_put(struct proto_enc *enc, const struct mon_blocklist *b)
{
	proto_enc_put_u64(enc, b->instance);
	proto_enc_put_u64(enc, b->until_ms);
	proto_enc_put_u64(enc, b->added_ms);
}

int mon_blocklist_get(struct proto_dec *dec, struct mon_blocklist *b)
{
	memset(b, 0, sizeof(*b));
	proto_dec_get_u64(dec, "blocklist.instance", &b->instance);
	proto_dec_get_u64(dec, "blocklist.until_ms", &b->until_ms);
	proto_dec_get_u64(dec, "blocklist.added_ms", &b->added_ms);
	if (dec->err != 0)
		return dec->err;
	if (b->instance == 0)
		return proto_dec_fail(dec, "blocklist.instance: 0 is not a client instance");
	if (b->until_ms == 0)
		return proto_dec_fail(dec, "blocklist.until_ms: an entry must expire");
	return 0;
}

void mon_map_blocklist_put(struct proto_enc *enc, const struct mon_map *map)
{
	proto_enc_put_u32(enc, map->nblocklist);
	for (uint32_t i = 0; i < map->nblocklist; i++)
		mon_blocklist_put(enc, &map->blocklist[i]);
}

int mon_map_blocklist_get(struct proto_dec *dec, struct mon_map *m)
{
	proto_dec_get_count(dec, "blocklist", MON_BLOCKLIST_MAX, MON_BLOCKLIST_WIRE_MIN,
			    &m->nblocklist);
	for (uint32_t i = 0; i < m->nblocklist && dec->err == 0; i++) {
		if (mon_blocklist_get(dec, &m->blocklist[i]) != 0)
			break;
		if (i > 0 && m->blocklist[i - 1].instance >= m->blocklist[i].instance)
			proto_dec_fail(dec, "blocklist: instance %016llx out of order",
				       (unsigned long long)m->blocklist[i].instance);
	}
	if (dec->err != 0)
		m->nblocklist = 0;
	return dec->err;
}

int mon_map_blocklist_check(const struct mon_op *op)
{
	if (op->bl.instance == 0)
		return -EINVAL;
	if (op->kind == MON_OP_BLOCKLIST_ADD && op->bl.until_ms == 0)
		return -EINVAL;
	return 0;
}

/* Checked by mon_map_blocklist_check; a full list refuses a new instance (the job says so first).
 */
void mon_map_blocklist_apply(struct mon_map *map, const struct mon_op *op)
{
	uint32_t i;

	for (i = 0; i < map->nblocklist; i++) {
		uint64_t v = map->blocklist[i].instance;

		if (v == op->bl.instance) {
			if (op->kind == MON_OP_BLOCKLIST_ADD) {
				map->blocklist[i] = op->bl;
			} else {
				memmove(&map->blocklist[i], &map->blocklist[i + 1],
					sizeof(map->blocklist[0]) * (map->nblocklist - i - 1));
				map->nblocklist--;
			}
			return;
		}
		if (v > op->bl.instance)
			break;
	}
	if (op->kind != MON_OP_BLOCKLIST_ADD || map->nblocklist >= MON_BLOCKLIST_MAX)
		return;
	memmove(&map->blocklist[i + 1], &map->blocklist[i],
		sizeof(map->blocklist[0]) * (map->nblocklist - i));
	map->blocklist[i] = op->bl;
	map->nblocklist++;
}

int mon_instance_parse(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	size_t n = s != NULL ? strlen(s) : 0;

	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	}
	if (n == 0 || n > 16)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		unsigned int d;

		if (c >= '0' && c <= '9')
			d = (unsigned int)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned int)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned int)(c - 'A' + 10);
		else
			return -EINVAL;
		v = v << 4 | d;
	}
	if (v == 0)
		return -EINVAL;
	*out = v;
	return 0;
}

const char *mon_instance_str(uint64_t instance, char out[MON_INSTANCE_STR])
{
	static const char hex[] = "0123456789abcdef";

	for (int i = 15; i >= 0; i--) {
		out[i] = hex[instance & 0xf];
		instance >>= 4;
	}
	out[16] = '\0';
	return out;
}
