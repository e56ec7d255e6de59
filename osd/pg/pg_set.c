/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A set of object names (the missing sets of recovery, pg.h): open addressing
 * with linear probing and tombstones, grown at 3/4 load. A recovering PG
 * holds at most osd_pg_log_max names per member, so a flat table is
 * enough; lookups happen for every client op of a degraded PG.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "osd/pg/pg.h"

static uint32_t pg_set_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static int pg_set_grow(struct pg_set *s)
{
	struct pg_set old = *s;
	uint32_t cap = old.cap ? old.cap * 2 : 64;

	if (old.cap && old.n * 2 < old.cap)
		cap = old.cap; /* mostly tombstones: rehash in place */
	s->e = calloc(cap, sizeof(*s->e));
	if (s->e == NULL) {
		*s = old;
		return -ENOMEM;
	}
	s->cap = cap;
	s->n = s->used = 0;
	for (uint32_t i = 0; i < old.cap; i++) {
		struct pg_set_ent *o = &old.e[i];

		if (o->name == NULL || (o->flags & PG_SET_TOMB)) {
			free(o->name);
			continue;
		}
		for (uint32_t k = pg_set_hash(o->name) & (cap - 1);; k = (k + 1) & (cap - 1)) {
			if (s->e[k].name == NULL) {
				s->e[k] = *o;
				s->n++;
				s->used++;
				break;
			}
		}
	}
	free(old.e);
	return 0;
}

static struct pg_set_ent *pg_set_slot(const struct pg_set *s, const char *name,
					    struct pg_set_ent **free_out)
{
	struct pg_set_ent *tomb = NULL;

	if (s->cap == 0) {
		*free_out = NULL;
		return NULL;
	}
	for (uint32_t k = pg_set_hash(name) & (s->cap - 1), i = 0; i < s->cap;
	     k = (k + 1) & (s->cap - 1), i++) {
		struct pg_set_ent *e = &s->e[k];

		if (e->name == NULL) {
			*free_out = tomb ? tomb : e;
			return NULL;
		}
		if (e->flags & PG_SET_TOMB) {
			if (tomb == NULL)
				tomb = e;
			continue;
		}
		if (strcmp(e->name, name) == 0)
			return e;
	}
	*free_out = tomb;
	return NULL;
}

struct pg_set_ent *pg_set_find(const struct pg_set *s, const char *name)
{
	struct pg_set_ent *f;

	return pg_set_slot(s, name, &f);
}

/* Add name (or update it: version replaced, flags or'ed in). */
int pg_set_add(struct pg_set *s, const char *name, uint64_t version, uint32_t flags)
{
	struct pg_set_ent *e, *f = NULL;

	e = pg_set_slot(s, name, &f);
	if (e != NULL) {
		if (e->version != version)
			e->flags &= ~PG_SET_CHECKED;
		e->version = version;
		e->flags |= flags;
		return 0;
	}
	if ((s->used + 1) * 4 > s->cap * 3) {
		int rc = pg_set_grow(s);

		if (rc != 0)
			return rc;
		pg_set_slot(s, name, &f);
	}
	if (f == NULL)
		return -ENOMEM;
	if (f->name == NULL)
		s->used++;
	else
		free(f->name);
	f->name = strdup(name);
	if (f->name == NULL) {
		f->flags = PG_SET_TOMB;
		return -ENOMEM;
	}
	f->version = version;
	f->flags = flags;
	f->stamp = 0;
	f->tries = 0;
	f->src = -1;
	s->n++;
	return 0;
}

void pg_set_del(struct pg_set *s, const char *name)
{
	struct pg_set_ent *e = pg_set_find(s, name);

	if (e == NULL)
		return;
	e->flags = PG_SET_TOMB; /* the name stays allocated until reused or cleared */
	s->n--;
}

void pg_set_clear(struct pg_set *s)
{
	for (uint32_t i = 0; i < s->cap; i++)
		free(s->e[i].name);
	free(s->e);
	memset(s, 0, sizeof(*s));
}

struct pg_set_ent *pg_set_next(const struct pg_set *s, uint32_t *i)
{
	while (*i < s->cap) {
		struct pg_set_ent *e = &s->e[(*i)++];

		if (e->name != NULL && !(e->flags & PG_SET_TOMB))
			return e;
	}
	return NULL;
}
