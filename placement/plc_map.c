/* SPDX-License-Identifier: Apache-2.0 */
/*
 * struct mon_map -> struct plc_tree, cached with the map. Bucket keys are
 * hashes of their names, so a host bucket made up from OSDs' host names
 * and the same host created explicitly later draw alike: formalising a
 * topology that matches the implicit one moves no data.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crc32c.h"
#include "placement/plc_map.h"
#include "placement/plc_priv.h"

#define PLC_DEFAULT_ROOT "default"

struct plc_map_cache {
	struct mon_map_cache base;
	struct plc_tree tree;
	struct plc_upmap *items;
	unsigned int nitems;
	int32_t def_root;	/* node index of "default" */
	struct plc_rule *rules; /* by the map's pool order (sorted by id) */
	int *rule_rc;		/* 0 or -ENOENT (root not in the tree) */
	uint32_t nrules;
};

static uint64_t plc_name_key(const char *name)
{
	size_t len = strlen(name);

	return plc_mix64((uint64_t)crc32c(0, name, len) << 32 | crc32c(0x5bd1e995u, name, len));
}

static uint64_t plc_osd_key(int32_t id)
{
	return plc_mix64((uint64_t)(uint32_t)id);
}

/* Name -> node index, open addressing over a power-of-two table. */
struct plc_names {
	uint32_t cap;
	int32_t *slot; /* -1 empty */
	uint64_t *key;
};

static int plc_names_init(struct plc_names *h, uint32_t n)
{
	h->cap = 16;
	while (h->cap < 2 * n + 16)
		h->cap <<= 1;
	h->slot = malloc(h->cap * sizeof(*h->slot));
	h->key = malloc(h->cap * sizeof(*h->key));
	if (h->slot == NULL || h->key == NULL)
		return -ENOMEM;
	memset(h->slot, 0xff, h->cap * sizeof(*h->slot));
	return 0;
}

static int32_t plc_names_find(const struct plc_names *h, const struct plc_node *nodes,
			      const char *name, uint64_t key, uint32_t *at_out)
{
	uint32_t i = (uint32_t)key & (h->cap - 1);

	while (h->slot[i] >= 0) {
		if (h->key[i] == key && !strcmp(nodes[h->slot[i]].name, name))
			return h->slot[i];
		i = (i + 1) & (h->cap - 1);
	}
	*at_out = i;
	return -1;
}

static void plc_names_free(struct plc_names *h)
{
	free(h->slot);
	free(h->key);
}

struct plc_build {
	struct plc_tree *t;
	struct plc_names names;
	uint32_t cap_nodes;
	int32_t next_implicit_id;
};

/* The node named name, made up (implicit, under parent) when missing. */
static int32_t plc_build_node(struct plc_build *b, const char *name, uint8_t type, int32_t parent)
{
	uint64_t key = plc_name_key(name);
	uint32_t at = 0;
	int32_t i = plc_names_find(&b->names, b->t->nodes, name, key, &at);
	struct plc_node *n;

	if (i >= 0)
		return i;
	if (b->t->nnodes == b->cap_nodes)
		return -ENOSPC; /* sized for every bucket and host name: cannot happen */
	i = (int32_t)b->t->nnodes++;
	n = &b->t->nodes[i];
	memset(n, 0, sizeof(*n));
	n->id = b->next_implicit_id--;
	n->type = type;
	n->implicit = true;
	n->parent = parent;
	snprintf(n->name, sizeof(n->name), "%s", name);
	b->names.slot[at] = i;
	b->names.key[at] = key;
	return i;
}

static int plc_build_explicit(struct plc_build *b, const struct mon_map *map)
{
	struct plc_tree *t = b->t;

	for (uint32_t i = 0; i < map->nbuckets; i++) {
		const struct mon_bucket *mb = &map->buckets[i];
		struct plc_node *n = &t->nodes[t->nnodes];
		uint32_t at = 0;

		if (plc_names_find(&b->names, t->nodes, mb->name, plc_name_key(mb->name), &at) >= 0)
			return -EINVAL; /* names are unique in a valid map */
		memset(n, 0, sizeof(*n));
		n->id = mb->id;
		n->type = mb->type;
		n->parent = -1;
		snprintf(n->name, sizeof(n->name), "%s", mb->name);
		b->names.slot[at] = (int32_t)t->nnodes;
		b->names.key[at] = plc_name_key(mb->name);
		t->nnodes++;
		if (mb->id <= b->next_implicit_id)
			b->next_implicit_id = mb->id - 1;
	}
	/* parents by id: buckets are sorted by descending id, as nodes 0..nbuckets-1 */
	for (uint32_t i = 0; i < map->nbuckets; i++) {
		const struct mon_bucket *p = map->buckets[i].parent != 0
						 ? mon_map_bucket(map, map->buckets[i].parent)
						 : NULL;

		t->nodes[i].parent = p != NULL ? (int32_t)(p - map->buckets) : -1;
	}
	return 0;
}

/* Children lists (grouped by parent), weights bottom-up, OSD ancestors. */
static int plc_build_links(struct plc_tree *t)
{
	uint32_t *fill = calloc(t->nnodes + 1, sizeof(*fill));
	uint32_t nosd = 0;

	if (fill == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->max_osd; i++)
		if (t->osds[i].exists && t->osds[i].parent >= 0)
			t->nodes[t->osds[i].parent].nchild++, nosd++;
	for (uint32_t i = 0; i < t->nnodes; i++)
		if (t->nodes[i].parent >= 0)
			t->nodes[t->nodes[i].parent].nchild++;
	t->nchild = 0;
	for (uint32_t i = 0; i < t->nnodes; i++) {
		t->nodes[i].first = t->nchild;
		t->nchild += t->nodes[i].nchild;
	}
	t->child = calloc(t->nchild + 1, sizeof(*t->child));
	if (t->child == NULL) {
		free(fill);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->nnodes; i++) {
		int32_t p = t->nodes[i].parent;

		if (p >= 0)
			t->child[t->nodes[p].first + fill[p]++] =
			    (struct plc_child){(int32_t)i, 0, plc_name_key(t->nodes[i].name)};
	}
	for (uint32_t i = 0; i < t->max_osd; i++) {
		int32_t p = t->osds[i].parent;

		if (t->osds[i].exists && p >= 0)
			t->child[t->nodes[p].first + fill[p]++] =
			    (struct plc_child){-1 - (int32_t)i, 0, plc_osd_key((int32_t)i)};
	}
	free(fill);
	(void)nosd;
	return 0;
}

static void plc_build_weights(struct plc_tree *t, const struct mon_map *map)
{
	for (uint32_t i = 0; i < t->max_osd; i++)
		if (t->osds[i].exists && t->osds[i].parent >= 0)
			t->nodes[t->osds[i].parent].weight += map->osds[i].weight / 65536.0;
	/* a parent's type is higher than its children's: sum type by type, lowest first */
	for (uint8_t type = 0; type < PLC_TREE_TYPES; type++)
		for (uint32_t i = 0; i < t->nnodes; i++)
			if (t->nodes[i].type == type && t->nodes[i].parent >= 0)
				t->nodes[t->nodes[i].parent].weight += t->nodes[i].weight;
	for (uint32_t i = 0; i < t->nchild; i++) {
		struct plc_child *c = &t->child[i];
		double w =
		    c->ref >= 0 ? t->nodes[c->ref].weight : map->osds[-1 - c->ref].weight / 65536.0;

		c->inv_weight = w > 0 ? 1.0 / w : 0;
	}
	for (uint32_t i = 0; i < t->max_osd; i++) {
		struct plc_tree_osd *o = &t->osds[i];

		for (unsigned int k = 0; k < PLC_TREE_TYPES; k++)
			o->anc[k] = -1;
		for (int32_t p = o->exists ? o->parent : -1, depth = 0;
		     p >= 0 && depth < PLC_TREE_TYPES; p = t->nodes[p].parent, depth++)
			if (t->nodes[p].type < PLC_TREE_TYPES)
				o->anc[t->nodes[p].type] = p;
	}
}

/* ndom_in: per node and type, the buckets (or OSDs) below holding an in OSD of weight > 0. */
static int plc_build_domains(struct plc_tree *t, const struct mon_map *map)
{
	uint8_t *has_in = calloc(t->nnodes + 1, 1);

	t->ndom_in = calloc((size_t)t->nnodes * PLC_TREE_TYPES + 1, sizeof(*t->ndom_in));
	if (has_in == NULL || t->ndom_in == NULL) {
		free(has_in);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->max_osd; i++) {
		const struct plc_tree_osd *o = &t->osds[i];

		if (!o->exists || !(map->osds[i].state & MON_OSD_IN) || map->osds[i].weight == 0)
			continue;
		/* the OSD counts as a domain of type osd for every ancestor */
		for (int32_t p = o->parent, d = 0; p >= 0 && d < PLC_TREE_TYPES;
		     p = t->nodes[p].parent, d++) {
			t->ndom_in[(uint32_t)p * PLC_TREE_TYPES + MON_CT_OSD]++;
			has_in[p] = 1;
		}
	}
	for (uint32_t n = 0; n < t->nnodes; n++) {
		uint8_t type = t->nodes[n].type;

		if (!has_in[n] || type >= PLC_TREE_TYPES)
			continue;
		for (int32_t p = t->nodes[n].parent, d = 0; p >= 0 && d < PLC_TREE_TYPES;
		     p = t->nodes[p].parent, d++)
			t->ndom_in[(uint32_t)p * PLC_TREE_TYPES + type]++;
	}
	free(has_in);
	return 0;
}

static int plc_map_build(const struct mon_map *map, struct plc_tree *tree_out, int32_t *def_out)
{
	struct plc_tree t = {0};
	struct plc_build b = {&t, {0}, 0, -1};
	int32_t def;
	int rc = -ENOMEM;

	b.cap_nodes = map->nbuckets + map->max_osd + 1;
	t.max_osd = map->max_osd;
	t.nodes = calloc(b.cap_nodes, sizeof(*t.nodes));
	t.osds = calloc(map->max_osd + 1, sizeof(*t.osds));
	if (t.nodes == NULL || t.osds == NULL || plc_names_init(&b.names, b.cap_nodes) != 0)
		goto fail;
	rc = plc_build_explicit(&b, map);
	if (rc != 0)
		goto fail;
	def = plc_build_node(&b, PLC_DEFAULT_ROOT, MON_CT_ROOT, -1);
	if (def < 0) {
		rc = def;
		goto fail;
	}
	for (uint32_t i = 0; i < map->max_osd; i++) {
		const struct mon_osd *o = &map->osds[i];
		int32_t loc, p = -1;

		if (!(o->state & MON_OSD_EXISTS))
			continue;
		t.osds[i].exists = 1;
		/* reweight 0 turns every PG away, upmap items too: as out (Ceph alike) */
		t.osds[i].eligible = (o->state & MON_OSD_UP) && (o->state & MON_OSD_IN) &&
				     o->weight > 0 && o->reject < MON_WEIGHT_ONE;
		t.osds[i].reject = o->reject;
		loc = mon_map_osd_loc(map, i);
		if (loc != 0) {
			const struct mon_bucket *mb = mon_map_bucket(map, loc);

			p = mb != NULL ? (int32_t)(mb - map->buckets) : -1;
		}
		/* no location: the host bucket of its host name, made up under "default" */
		if (p < 0)
			p = plc_build_node(&b, o->host, MON_CT_HOST, def);
		if (p < 0) {
			rc = p;
			goto fail;
		}
		t.osds[i].parent = p;
	}
	rc = plc_build_links(&t);
	if (rc != 0)
		goto fail;
	plc_build_weights(&t, map);
	rc = plc_build_domains(&t, map);
	if (rc != 0)
		goto fail;
	plc_names_free(&b.names);
	*tree_out = t;
	*def_out = def;
	return 0;
fail:
	plc_names_free(&b.names);
	plc_tree_free(&t);
	return rc;
}

int plc_map_build_tree(const struct mon_map *map, struct plc_tree *tree_out)
{
	int32_t def;

	return plc_map_build(map, tree_out, &def);
}

static int plc_map_rule_at(const struct plc_tree *tree, const struct mon_map *map, int32_t def,
			   const struct mon_pool *pool, struct plc_rule *rule_out)
{
	int32_t node = def;

	if (pool->root != 0) {
		const struct mon_bucket *rb = mon_map_bucket(map, pool->root);

		if (rb == NULL)
			return -ENOENT;
		node =
		    (int32_t)(rb - map->buckets); /* explicit buckets are nodes 0.. in map order */
	}
	if (node < 0 || (uint32_t)node >= tree->nnodes)
		return -ENOENT;
	rule_out->pool = pool->id;
	rule_out->size = pool->size > PLC_MAX_REPLICAS ? PLC_MAX_REPLICAS : pool->size;
	rule_out->root = node;
	rule_out->domain = pool->domain != MON_CT_NONE ? pool->domain : MON_CT_HOST;
	return 0;
}

static void plc_map_cache_free(struct mon_map_cache *base)
{
	struct plc_map_cache *c = (struct plc_map_cache *)base;

	plc_tree_free(&c->tree);
	free(c->items);
	free(c->rules);
	free(c->rule_rc);
	free(c);
}

static const struct plc_map_cache *plc_map_cache(const struct mon_map *map)
{
	struct plc_map_cache *c = (struct plc_map_cache *)mon_map_cache_get(map);

	if (c != NULL)
		return c;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->base.free = plc_map_cache_free;
	if (plc_map_build(map, &c->tree, &c->def_root) != 0)
		goto fail;
	c->rules = calloc(map->npools + 1, sizeof(*c->rules));
	c->rule_rc = calloc(map->npools + 1, sizeof(*c->rule_rc));
	if (c->rules == NULL || c->rule_rc == NULL)
		goto fail;
	c->nrules = map->npools;
	for (uint32_t i = 0; i < map->npools; i++)
		c->rule_rc[i] =
		    plc_map_rule_at(&c->tree, map, c->def_root, &map->pools[i], &c->rules[i]);
	if (map->nupmaps > 0) {
		c->items = malloc(map->nupmaps * sizeof(*c->items));
		if (c->items == NULL)
			goto fail;
		for (uint32_t i = 0; i < map->nupmaps; i++)
			c->items[i] = (struct plc_upmap){map->upmaps[i].pool, map->upmaps[i].pg,
							 map->upmaps[i].from, map->upmaps[i].to};
		c->nitems = map->nupmaps; /* the map keeps them sorted the same way */
	}
	if (!mon_map_cache_set(map, &c->base)) { /* another thread was first */
		plc_map_cache_free(&c->base);
		c = (struct plc_map_cache *)mon_map_cache_get(map);
	}
	return c;
fail:
	plc_map_cache_free(&c->base);
	errno = ENOMEM;
	return NULL;
}

const struct plc_tree *plc_map_tree(const struct mon_map *map)
{
	const struct plc_map_cache *c = plc_map_cache(map);

	return c != NULL ? &c->tree : NULL;
}

const struct plc_upmap *plc_map_items(const struct mon_map *map, unsigned int *n_out)
{
	const struct plc_map_cache *c = plc_map_cache(map);

	*n_out = c != NULL ? c->nitems : 0;
	return c != NULL ? c->items : NULL;
}

int plc_map_rule(const struct plc_tree *tree, const struct mon_map *map,
		 const struct mon_pool *pool, struct plc_rule *rule_out)
{
	int32_t def = -1;

	for (uint32_t i = 0; i < tree->nnodes && def < 0; i++)
		if (tree->nodes[i].type == MON_CT_ROOT &&
		    !strcmp(tree->nodes[i].name, PLC_DEFAULT_ROOT))
			def = (int32_t)i;
	return plc_map_rule_at(tree, map, def, pool, rule_out);
}

int plc_map_acting_ex(const struct mon_map *map, const struct mon_pool *pool, uint32_t pg,
		      int32_t acting_out[PLC_MAX_REPLICAS], bool *short_out)
{
	const struct plc_map_cache *c;
	struct plc_rule rule;
	uint32_t lo = 0, hi;
	int rc;

	if (short_out)
		*short_out = false;
	if (pool == NULL || pool->size == 0 || pg >= pool->pg_num)
		return -EINVAL;
	c = plc_map_cache(map);
	if (c == NULL)
		return -ENOMEM;
	/* the pool's rule as cached for this map, unless the caller's pool differs */
	hi = c->nrules;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (map->pools[mid].id < pool->id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->nrules && map->pools[lo].id == pool->id && map->pools[lo].size == pool->size &&
	    map->pools[lo].domain == pool->domain && map->pools[lo].root == pool->root) {
		rc = c->rule_rc[lo];
		rule = c->rules[lo];
	} else {
		rc = plc_map_rule_at(&c->tree, map, c->def_root, pool, &rule);
	}
	if (rc != 0)
		return 0; /* a root the map lost: nothing qualifies */
	return plc_tree_acting(&c->tree, &rule, pg, c->items, c->nitems, acting_out, short_out);
}

int plc_map_acting(const struct mon_map *map, const struct mon_pool *pool, uint32_t pg,
		   int32_t acting_out[PLC_MAX_REPLICAS])
{
	return plc_map_acting_ex(map, pool, pg, acting_out, NULL);
}

uint32_t plc_map_object_pg(const struct mon_pool *pool, const char *name, size_t len)
{
	return plc_object_pg(name, len, pool->pg_num);
}
