/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The monitor list of the cluster map (version 5): which monitors the
 * operator asked for (`weft mon add/remove`), by Raft id, name and public
 * address. The leader drives Raft's own configuration to follow it
 * (mon/mon_member.c); clients learn the monitors from it (monc).
 *
 *   tail = u32 next_mon_id, u32 n_mons, mon[n] (ascending id)
 *   mon  = u32 id, str16 name, str16 addr
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mon/map_priv.h"

#define MON_MON_WIRE_MIN (4 + 2 + 2)

const struct mon_mon *mon_map_mon(const struct mon_map *map, uint32_t id)
{
	for (uint32_t i = 0; i < map->nmons; i++)
		if (map->mons[i].id == id)
			return &map->mons[i];
	return NULL;
}

const struct mon_mon *mon_map_mon_by_name(const struct mon_map *map, const char *name)
{
	for (uint32_t i = 0; i < map->nmons; i++)
		if (map->mons[i].name[0] != '\0' && !strcmp(map->mons[i].name, name))
			return &map->mons[i];
	return NULL;
}

void mon_mon_put(struct proto_enc *enc, const struct mon_mon *mm)
{
	proto_enc_put_u32(enc, mm->id);
	proto_enc_put_str16(enc, mm->name, strlen(mm->name));
	proto_enc_put_str16(enc, mm->addr, strlen(mm->addr));
}

int mon_mon_get(struct proto_dec *dec, struct mon_mon *mm)
{
	size_t n;

	memset(mm, 0, sizeof(*mm));
	proto_dec_get_u32(dec, "mon.id", &mm->id);
	proto_dec_get_str16(dec, "mon.name", MON_NAME_MAX, mm->name, sizeof(mm->name), &n);
	proto_dec_get_str16(dec, "mon.addr", PROTO_ADDR_MAX, mm->addr, sizeof(mm->addr), &n);
	if (dec->err != 0)
		return dec->err;
	if (mm->id == 0)
		return proto_dec_fail(dec, "mon.id: 0 is not a monitor id");
	if (mm->addr[0] == '\0')
		return proto_dec_fail(dec, "mon.addr: empty");
	return 0;
}

void mon_map_mons_put(struct proto_enc *enc, const struct mon_map *map)
{
	proto_enc_put_u32(enc, map->next_mon_id);
	proto_enc_put_u32(enc, map->nmons);
	for (uint32_t i = 0; i < map->nmons; i++)
		mon_mon_put(enc, &map->mons[i]);
}

int mon_map_mons_get(struct proto_dec *dec, struct mon_map *m)
{
	uint32_t n = 0;

	proto_dec_get_u32(dec, "next_mon_id", &m->next_mon_id);
	proto_dec_get_count(dec, "mons", MON_MONS_MAX, MON_MON_WIRE_MIN, &n);
	if (dec->err != 0)
		return -EBADMSG;
	if (n > 0) {
		m->mons = calloc(n, sizeof(*m->mons));
		if (m->mons == NULL)
			return -ENOMEM;
	}
	m->nmons = n;
	for (uint32_t i = 0; i < n; i++) {
		if (mon_mon_get(dec, &m->mons[i]) != 0)
			return -EBADMSG;
		/* canonical: ascending ids below next_mon_id, one monitor per name */
		if (i > 0 && m->mons[i].id <= m->mons[i - 1].id)
			return proto_dec_fail(dec, "mons: id %u out of order", m->mons[i].id);
		if (m->mons[i].id >= m->next_mon_id)
			return proto_dec_fail(dec, "mons: id %u >= next_mon_id %u", m->mons[i].id,
					      m->next_mon_id);
		for (uint32_t j = 0; j < i && m->mons[i].name[0] != '\0'; j++)
			if (!strcmp(m->mons[j].name, m->mons[i].name))
				return proto_dec_fail(dec, "mons: name '%s' twice",
						      m->mons[i].name);
	}
	return 0;
}

int mon_map_mons_copy(struct mon_map *dst, const struct mon_map *src)
{
	dst->mons = NULL;
	if (src->nmons == 0)
		return 0;
	dst->mons = malloc(sizeof(*dst->mons) * src->nmons);
	if (dst->mons == NULL)
		return -ENOMEM;
	memcpy(dst->mons, src->mons, sizeof(*dst->mons) * src->nmons);
	return 0;
}

void mon_map_mons_free(struct mon_map *map)
{
	free(map->mons);
	map->mons = NULL;
	map->nmons = 0;
}

/* Apply MON_SET / MON_RM to a working copy; -EINVAL leaves it for the caller to drop. */
int mon_map_mons_apply(struct mon_map *map, const struct mon_op *op)
{
	uint32_t i;

	if (op->kind == MON_OP_MON_RM) {
		for (i = 0; i < map->nmons && map->mons[i].id != op->mon_id; i++)
			;
		if (i == map->nmons)
			return -EINVAL;
		memmove(&map->mons[i], &map->mons[i + 1],
			sizeof(*map->mons) * (map->nmons - i - 1));
		map->nmons--;
		return 0;
	}
	if (op->mon.id == 0 || op->mon.addr[0] == '\0')
		return -EINVAL;
	for (i = 0; i < map->nmons; i++) {
		const struct mon_mon *o = &map->mons[i];

		if (o->id != op->mon.id &&
		    ((op->mon.name[0] != '\0' && !strcmp(o->name, op->mon.name)) ||
		     !strcmp(o->addr, op->mon.addr)))
			return -EINVAL;
	}
	for (i = 0; i < map->nmons && map->mons[i].id < op->mon.id; i++)
		;
	if (i < map->nmons && map->mons[i].id == op->mon.id) {
		map->mons[i] = op->mon;
		return 0;
	}
	/* a new id: never one that was used before */
	if (op->mon.id < map->next_mon_id && map->next_mon_id != 0 && map->nmons > 0)
		return -EINVAL;
	if (map->nmons >= MON_MONS_MAX)
		return -EINVAL;
	{
		struct mon_mon *mons = realloc(map->mons, sizeof(*mons) * (map->nmons + 1));

		if (mons == NULL)
			return -ENOMEM;
		map->mons = mons;
	}
	memmove(&map->mons[i + 1], &map->mons[i], sizeof(*map->mons) * (map->nmons - i));
	map->mons[i] = op->mon;
	map->nmons++;
	if (op->mon.id >= map->next_mon_id)
		map->next_mon_id = op->mon.id + 1;
	return 0;
}
