/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The version-6 part of the cluster map: health mutes (docs/mon.md,
 * "Muting a check"). A mute is a small record keyed by its check's code;
 * the map holds at most MON_MUTE_MAX, sorted by code so one map has one
 * encoding.
 */
#include <errno.h>
#include <string.h>

#include "mon/map_priv.h"

#define MON_MUTE_WIRE_MIN (2 + 1 + 8 + 4 + 1)

bool mon_mute_code_valid(const char *code)
{
	size_t n = code != NULL ? strlen(code) : 0;

	if (n == 0 || n > MON_MUTE_CODE_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((code[i] >= 'A' && code[i] <= 'Z') || (code[i] >= '0' && code[i] <= '9') ||
		      code[i] == '_'))
			return false;
	return true;
}

const struct mon_mute *mon_map_mute(const struct mon_map *map, const char *code)
{
	for (uint32_t i = 0; i < map->nmutes; i++)
		if (!strcmp(map->mutes[i].code, code))
			return &map->mutes[i];
	return NULL;
}

void mon_mute_put(struct proto_enc *enc, const struct mon_mute *m)
{
	proto_enc_put_str16(enc, m->code, strlen(m->code));
	proto_enc_put_u64(enc, m->until_ms);
	proto_enc_put_u32(enc, m->count);
	proto_enc_put_u8(enc, m->sticky);
}

int mon_mute_get(struct proto_dec *dec, struct mon_mute *m)
{
	size_t n;

	memset(m, 0, sizeof(*m));
	proto_dec_get_str16(dec, "mute.code", MON_MUTE_CODE_MAX, m->code, sizeof(m->code), &n);
	proto_dec_get_u64(dec, "mute.until_ms", &m->until_ms);
	proto_dec_get_u32(dec, "mute.count", &m->count);
	proto_dec_get_u8(dec, "mute.sticky", &m->sticky);
	if (dec->err != 0)
		return dec->err;
	if (!mon_mute_code_valid(m->code))
		return proto_dec_fail(dec, "mute.code: '%s' is not a check code", m->code);
	if (m->sticky > 1)
		return proto_dec_fail(dec, "mute.sticky: %u is not 0 or 1", m->sticky);
	return 0;
}

void mon_map_mutes_put(struct proto_enc *enc, const struct mon_map *map)
{
	proto_enc_put_u32(enc, map->nmutes);
	for (uint32_t i = 0; i < map->nmutes; i++)
		mon_mute_put(enc, &map->mutes[i]);
}

int mon_map_mutes_get(struct proto_dec *dec, struct mon_map *m)
{
	proto_dec_get_count(dec, "mutes", MON_MUTE_MAX, MON_MUTE_WIRE_MIN, &m->nmutes);
	for (uint32_t i = 0; i < m->nmutes && dec->err == 0; i++) {
		if (mon_mute_get(dec, &m->mutes[i]) != 0)
			break;
		if (i > 0 && strcmp(m->mutes[i - 1].code, m->mutes[i].code) >= 0)
			proto_dec_fail(dec, "mutes: '%s' out of order", m->mutes[i].code);
	}
	if (dec->err != 0)
		m->nmutes = 0;
	return dec->err;
}

int mon_map_mute_check(const struct mon_op *op)
{
	if (!mon_mute_code_valid(op->mute.code) || op->mute.sticky > 1)
		return -EINVAL;
	return 0;
}

/* Checked by mon_map_mute_check; a full table refuses a new code (the job says so first). */
void mon_map_mute_apply(struct mon_map *map, const struct mon_op *op)
{
	uint32_t i;

	for (i = 0; i < map->nmutes; i++) {
		int c = strcmp(map->mutes[i].code, op->mute.code);

		if (c == 0) {
			if (op->kind == MON_OP_MUTE_SET) {
				map->mutes[i] = op->mute;
			} else {
				memmove(&map->mutes[i], &map->mutes[i + 1],
					sizeof(map->mutes[0]) * (map->nmutes - i - 1));
				map->nmutes--;
			}
			return;
		}
		if (c > 0)
			break;
	}
	if (op->kind != MON_OP_MUTE_SET || map->nmutes >= MON_MUTE_MAX)
		return;
	memmove(&map->mutes[i + 1], &map->mutes[i], sizeof(map->mutes[0]) * (map->nmutes - i));
	map->mutes[i] = op->mute;
	map->mutes[i].code[MON_MUTE_CODE_MAX] = '\0';
	map->nmutes++;
}
