/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Hierarchical placement: a tree of buckets (root -> ... -> host -> OSD)
 * and a rule (replicas in distinct buckets of a failure-domain type under
 * a root). Each replica descends from the root with straw2 at every level
 * (weighted rendezvous over the children, keyed by the child's name or
 * OSD id), so a PG costs O(depth x fan-out) draws, and changing one
 * bucket's weight moves data only into or out of that bucket. A descent
 * that ends on an OSD that is down or out, already chosen, or in a failure
 * domain already used is retried from the root with a new draw (as CRUSH
 * does), so a failed OSD's PGs spread over the whole cluster and no other
 * PG moves. docs/scale.md describes the design and its numbers.
 *
 * The tree is built once per map (placement/plc_map.c) and shared read-only.
 */
#ifndef WEFT_PLACEMENT_PLC_TREE_H
#define WEFT_PLACEMENT_PLC_TREE_H

#include <stdbool.h>
#include <stdint.h>

#include "placement/placement.h"

#define PLC_TREE_TYPES 16 /* bucket types are 1 (osd) .. 15 */
#define PLC_TREE_TRIES 50 /* descents per replica before giving up on its domain */

/* A child of a bucket: a bucket (ref >= 0, its node index) or an OSD (ref = -1 - id). */
struct plc_child {
	int32_t ref;
	double inv_weight; /* 1 / weight (weight in units of 1.0 = 0x10000) */
	uint64_t key;	   /* straw2 key: hash of the bucket name, or of the OSD id */
};

struct plc_node {
	int32_t id;		/* the map's bucket id; implicit buckets get ids below them */
	uint8_t type;		/* MON_CT_* values */
	bool implicit;		/* made up from OSD host names, not in the map */
	int32_t parent;		/* node index, -1 for a root */
	uint32_t first, nchild; /* children: tree->child[first .. first + nchild) */
	double weight;		/* sum of the OSD weights below, 1.0 = one OSD of weight 1 */
	char name[64];
};

struct plc_tree_osd {
	uint8_t exists, eligible;    /* eligible: up, in, weight > 0 */
	uint32_t reject;	     /* reweight override: share of PGs turned away (16.16) */
	int32_t parent;		     /* node index, -1 when not in the tree */
	int32_t anc[PLC_TREE_TYPES]; /* ancestor node index by type, -1 none */
};

struct plc_tree {
	uint32_t nnodes, nchild, max_osd;
	struct plc_node *nodes;
	struct plc_child *child;
	struct plc_tree_osd *osds; /* by id, max_osd of them */
	/*
	 * ndom_in[node * PLC_TREE_TYPES + type]: buckets of that type (OSDs for
	 * type osd) under node holding an in OSD of weight > 0, up or down.
	 * Replicas share a domain only when these are too few: domains that are
	 * merely down leave their PGs undersized until their OSDs return or are
	 * marked out (a rack's power blip moves no data).
	 */
	uint32_t *ndom_in;
};

/* The rule of one pool, resolved against a tree. */
struct plc_rule {
	uint32_t pool;
	unsigned int size;
	int32_t root;	/* node index */
	uint8_t domain; /* bucket type of the failure domain (1 = osd) */
};

/*
 * Acting set of pg under rule: up to rule->size OSD ids into acting_out;
 * returns how many. *short_out (may be NULL) is set when replicas had to
 * share a failure domain (too few domains with an eligible OSD). items:
 * sorted upmap items (may be NULL), applied when `to` is eligible, under
 * the rule's root, not in the set and in a domain no other member uses.
 */
int plc_tree_acting(const struct plc_tree *t, const struct plc_rule *rule, uint32_t pg,
		    const struct plc_upmap *items, unsigned int nitems, int32_t *acting_out,
		    bool *short_out);

/*
 * Apply the k items of one PG to its raw set (n members) at once; items
 * that do not fit (from not in the set, to not eligible or not under the
 * root, or the result breaking the rule) are left out. applied_out[j]
 * (may be NULL) tells which applied; returns how many.
 */
unsigned int plc_tree_apply(const struct plc_tree *t, const struct plc_rule *rule, int32_t *set,
			    unsigned int n, bool shrt, const struct plc_upmap *it, unsigned int k,
			    bool *applied_out);

/* The raw descent (no items). */
unsigned int plc_tree_choose(const struct plc_tree *t, const struct plc_rule *rule, uint32_t pg,
			     int32_t *acting_out, bool *short_out);

/* Failure domains of the rule that hold an eligible OSD. */
unsigned int plc_tree_domains(const struct plc_tree *t, const struct plc_rule *rule);

/* The failure-domain identity of osd under rule (a node index, or -2 - id for an OSD). */
int32_t plc_tree_domain_of(const struct plc_tree *t, const struct plc_rule *rule, int32_t osd);

/* May `to` hold a replica of a set with these members (other than `from`)? */
bool plc_tree_can_hold(const struct plc_tree *t, const struct plc_rule *rule, const int32_t *set,
		       unsigned int n, int32_t from, int32_t to);

/*
 * The balancer on a tree: when some eligible OSD under the rule's root is
 * further than max_dev (0.05 = 5%, and at least one PG) from its weighted
 * share, add upmap items for one pool of pg_num PGs until every one is
 * within max_dev / 2 (hysteresis), or no move helps, or max_moves replicas
 * moved. items[0..*nitems) are the pool's current items
 * (sorted, kept when still valid, dropped when not); the result is sorted.
 * Returns the number of replicas moved (new items), or -ENOSPC / -ENOMEM /
 * -EINVAL.
 */
struct plc_bal_stats {
	double max_dev_before, max_dev_after; /* largest |load/share - 1| */
	unsigned int dropped;		      /* invalid items dropped */
};
int plc_tree_balance(const struct plc_tree *t, const struct plc_rule *rule, uint32_t pg_num,
		     double max_dev, unsigned int max_moves, struct plc_upmap *items,
		     unsigned int *nitems, unsigned int cap, struct plc_bal_stats *stats_out);

/*
 * After a change that adds capacity (new or heavier OSDs, marked in fresh,
 * by id): hierarchical straw2 moves about one pool share per tree level,
 * most of it between old OSDs. Keep every replica on its old OSD (old_sets:
 * pg_num x size acting sets before the change, -1 padded) unless it goes
 * to a fresh OSD, by adding or retargeting items; the balancer then fills
 * the fresh OSDs from the fullest ones, so the data moved stays near the
 * optimum (docs/scale.md). Same item conventions as plc_tree_balance.
 */
int plc_tree_pin(const struct plc_tree *t, const struct plc_rule *rule, uint32_t pg_num,
		 const int32_t *old_sets, const uint8_t *fresh, struct plc_upmap *items,
		 unsigned int *nitems, unsigned int cap, unsigned int *pinned_out);

/* Replicas per OSD (by id, max_osd entries) of one pool, and their weighted shares. */
int plc_tree_loads(const struct plc_tree *t, const struct plc_rule *rule, uint32_t pg_num,
		   const struct plc_upmap *items, unsigned int nitems, unsigned int *load_out,
		   double *share_out);

void plc_tree_free(struct plc_tree *t);

#endif
