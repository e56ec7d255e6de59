/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A set of object names (the missing sets of recovery): open addressing
 * with linear probing and tombstones, grown at 3/4 load. A recovering PG
 * holds at most osd_pg_log_max names per member, so a flat table is
 * enough; lookups happen for every client op of a degraded PG.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "osd/osd_pg.h"

static uint32_t osd_pgset_hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static int osd_pgset_grow(struct osd_pgset *s)
{
	struct osd_pgset old = *s;
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
		struct osd_pgset_ent *o = &old.e[i];

		if (o->name == NULL || (o->flags & OSD_PGSET_TOMB)) {
			free(o->name);
			continue;
		}
		for (uint32_t k = osd_pgset_hash(o->name) & (cap - 1);; k = (k + 1) & (cap - 1)) {
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

static struct osd_pgset_ent *osd_pgset_slot(const struct osd_pgset *s, const char *name,
					    struct osd_pgset_ent **free_out)
{
	struct osd_pgset_ent *tomb = NULL;

	if (s->cap == 0) {
		*free_out = NULL;
		return NULL;
	}
	for (uint32_t k = osd_pgset_hash(name) & (s->cap - 1), i = 0; i < s->cap;
	     k = (k + 1) & (s->cap - 1), i++) {
		struct osd_pgset_ent *e = &s->e[k];

		if (e->name == NULL) {
			*free_out = tomb ? tomb : e;
			return NULL;
		}
		if (e->flags & OSD_PGSET_TOMB) {
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

struct osd_pgset_ent *osd_pgset_find(const struct osd_pgset *s, const char *name)
{
	struct osd_pgset_ent *f;

	return osd_pgset_slot(s, name, &f);
}

/* Add name (or update it: version replaced, flags or'ed in). */
int osd_pgset_add(struct osd_pgset *s, const char *name, uint64_t version, uint32_t flags)
{
	struct osd_pgset_ent *e, *f = NULL;

	e = osd_pgset_slot(s, name, &f);
	if (e != NULL) {
		e->version = version;
		e->flags |= flags;
		return 0;
	}
	if ((s->used + 1) * 4 > s->cap * 3) {
		int rc = osd_pgset_grow(s);

		if (rc != 0)
			return rc;
		osd_pgset_slot(s, name, &f);
	}
	if (f == NULL)
		return -ENOMEM;
	if (f->name == NULL)
		s->used++;
	else
		free(f->name);
	f->name = strdup(name);
	if (f->name == NULL) {
		f->flags = OSD_PGSET_TOMB;
		return -ENOMEM;
	}
	f->version = version;
	f->flags = flags;
	s->n++;
	return 0;
}

void osd_pgset_del(struct osd_pgset *s, const char *name)
{
	struct osd_pgset_ent *e = osd_pgset_find(s, name);

	if (e == NULL)
		return;
	e->flags = OSD_PGSET_TOMB; /* the name stays allocated until reused or cleared */
	s->n--;
}

void osd_pgset_clear(struct osd_pgset *s)
{
	for (uint32_t i = 0; i < s->cap; i++)
		free(s->e[i].name);
	free(s->e);
	memset(s, 0, sizeof(*s));
}

struct osd_pgset_ent *osd_pgset_next(const struct osd_pgset *s, uint32_t *i)
{
	while (*i < s->cap) {
		struct osd_pgset_ent *e = &s->e[(*i)++];

		if (e->name != NULL && !(e->flags & OSD_PGSET_TOMB))
			return e;
	}
	return NULL;
}
