/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Past intervals (osd_pi.h, docs/recovery.md "Past intervals"). Modelled on
 * Ceph's PastIntervals, cut down: no up_thru in the map, so "maybe went
 * active" is only "had >= min_size members" (conservative: an interval
 * that could not have gone active never blocks; one that could always
 * does until a member is heard from).
 */
#include "osd/pg/pg_pi.h"

#include <errno.h>
#include <string.h>

#include "placement/placement.h"
#include "proto/codec.h"

_Static_assert(PROTO_PG_IV_OSDS == PLC_MAX_REPLICAS, "an interval holds a whole acting set");

static bool pg_pi_same(const struct pg_pi_ent *cur, const int32_t *acting, unsigned int n)
{
	return cur->n == n && !memcmp(cur->osd, acting, n * sizeof(*acting));
}

/* The same members (in any order): the prior-set rule sees no difference between them. */
static bool pg_pi_same_set(const struct pg_pi_ent *a, const struct pg_pi_ent *b)
{
	if (a->n != b->n)
		return false;
	for (unsigned int i = 0; i < a->n; i++) {
		bool found = false;

		for (unsigned int k = 0; k < b->n && !found; k++)
			found = a->osd[i] == b->osd[k];
		if (!found)
			return false;
	}
	return true;
}

/*
 * An interval with the members of one already kept widens that one (its
 * epochs, and "may have gone active" if either may have): many map changes
 * between the same few OSDs then cost one entry. Returns true if absorbed.
 */
static bool pg_pi_absorb(struct pg_pi *pi, const struct pg_pi_ent *c)
{
	for (uint32_t i = 0; i < pi->n; i++) {
		struct pg_pi_ent *e = &pi->e[i];

		if (!pg_pi_same_set(e, c))
			continue;
		if (c->first < e->first)
			e->first = c->first;
		if (c->last > e->last)
			e->last = c->last;
		e->flags |= c->flags;
		return true;
	}
	return false;
}

/*
 * Room for one more closed interval, c (NULL: a peer's, always wanted):
 * drop the oldest one that cannot have gone active; failing that skip c
 * if it could not either; failing that drop the oldest of all (counted in
 * dropped: then the bound costs safety, which the caller logs). Returns
 * false when c is to be skipped.
 */
static bool pg_pi_make_room(struct pg_pi *pi, const struct pg_pi_ent *c)
{
	uint32_t victim = 0;

	if (pi->n < PG_PI_MAX)
		return true;
	for (uint32_t i = 0; i < pi->n; i++) {
		if (!(pi->e[i].flags & PG_PI_F_ACTIVE)) {
			victim = i;
			goto drop;
		}
	}
	if (c != NULL && !(c->flags & PG_PI_F_ACTIVE))
		return false;
	pi->dropped++;
drop:
	memmove(&pi->e[victim], &pi->e[victim + 1], (pi->n - victim - 1) * sizeof(pi->e[0]));
	pi->n--;
	return true;
}

int pg_pi_advance(struct pg_pi *pi, uint32_t epoch, uint32_t gap_from, const int32_t *acting,
		   unsigned int n, unsigned int min_size)
{
	bool gap = gap_from != 0 && gap_from + 1 < epoch && pi->epoch != 0;
	int closed = 0;

	if (epoch <= pi->epoch)
		return 0; /* a map replayed after a restart: already applied */
	if (n > PROTO_PG_IV_OSDS)
		n = PROTO_PG_IV_OSDS;
	if (pi->epoch == 0) {
		/* the first map this copy sees: the open interval starts here */
		pi->cur.first = epoch;
	} else if (gap || !pg_pi_same(&pi->cur, acting, n)) {
		struct pg_pi_ent c = pi->cur;

		/*
		 * After a gap (a full map instead of the increments) we only know
		 * the open interval lasted to the last epoch we saw; what happened
		 * in between can only come from peers (pg_pi_merge).
		 */
		c.last = gap ? (gap_from > c.first ? gap_from : c.first) : epoch - 1;
		if (gap)
			closed = 2;
		/* an empty acting set serves nothing; keep only what matters */
		if (c.n > 0 && pg_pi_absorb(pi, &c)) {
			closed = closed ? closed : 1;
		} else if (c.n > 0 && pg_pi_make_room(pi, &c)) {
			pi->e[pi->n++] = c;
			closed = closed ? closed : 1;
		}
		pi->cur.first = epoch;
	}
	pi->cur.n = (uint8_t)n;
	memcpy(pi->cur.osd, acting, n * sizeof(*acting));
	/* whether the open interval may go active depends on this map's min_size */
	pi->cur.flags = n > 0 && n >= min_size ? PG_PI_F_ACTIVE : 0;
	pi->epoch = epoch;
	return closed;
}

void pg_pi_trim(struct pg_pi *pi, uint32_t les)
{
	uint32_t k = 0;

	while (k < pi->n && pi->e[k].last < les)
		k++;
	memmove(pi->e, pi->e + k, (pi->n - k) * sizeof(pi->e[0]));
	pi->n -= k;
	/* what was forgotten was older than the oldest kept: gone with them */
	if (pi->n == 0)
		pi->dropped = 0;
}

int pg_pi_merge(struct pg_pi *pi, const struct pg_pi_ent *e)
{
	uint32_t i;

	if (e->first == 0 || e->last < e->first || e->n > PROTO_PG_IV_OSDS)
		return -EINVAL;
	for (i = 0; i < pi->n; i++)
		if (pg_pi_same_set(&pi->e[i], e) && pi->e[i].first <= e->first &&
		    pi->e[i].last >= e->last && (pi->e[i].flags & e->flags) == e->flags)
			return 0; /* known (or within one we widened) */
	/* the open interval covers epochs from cur.first: a peer's view of them is ours */
	if (pi->epoch != 0 && e->first >= pi->cur.first)
		return 0;
	if (pg_pi_absorb(pi, e))
		return 1;
	for (i = 0; i < pi->n && pi->e[i].first <= e->first; i++)
		;
	if (pi->n == PG_PI_MAX) {
		if (!pg_pi_make_room(pi, e))
			return 0;
		for (i = 0; i < pi->n && pi->e[i].first < e->first; i++)
			;
	}
	memmove(&pi->e[i + 1], &pi->e[i], (pi->n - i) * sizeof(pi->e[0]));
	pi->e[i] = *e;
	pi->n++;
	return 1;
}

static void pg_pi_block(int32_t id, int32_t *blocked, unsigned int max, unsigned int *nb)
{
	for (unsigned int i = 0; i < *nb; i++)
		if (blocked[i] == id)
			return;
	if (*nb < max)
		blocked[(*nb)++] = id;
}

enum pg_pi_verdict pg_pi_check(const struct pg_pi *pi, uint32_t les,
				 const struct pg_pi_probe *probe, int32_t *blocked_out,
				 unsigned int max, unsigned int *nblocked_out)
{
	enum pg_pi_verdict v = PG_PI_OK;
	unsigned int nb = 0;

	for (uint32_t i = 0; i < pi->n; i++) {
		const struct pg_pi_ent *e = &pi->e[i];
		bool heard = false, up = false, all = true;

		if (e->last < les || !(e->flags & PG_PI_F_ACTIVE))
			continue;
		for (unsigned int k = 0; k < e->n && !heard; k++) {
			int h = probe->heard(probe->arg, e->osd[k]);

			heard = h == PG_PI_HEARD_FULL;
			all &= h != 0;
			up |= h == 0 && probe->up(probe->arg, e->osd[k]);
		}
		if (heard || all)
			continue;
		if (up) {
			if (v == PG_PI_OK)
				v = PG_PI_WAIT;
			continue;
		}
		v = PG_PI_DOWN;
		for (unsigned int k = 0; k < e->n; k++)
			pg_pi_block(e->osd[k], blocked_out, max, &nb);
	}
	*nblocked_out = nb;
	return v;
}

void pg_pi_encode(const struct pg_pi *pi, struct proto_enc *enc)
{
	proto_enc_put_u32(enc, pi->epoch);
	proto_enc_put_u32(enc, pi->cur.first);
	proto_enc_put_u8(enc, pi->cur.flags);
	proto_enc_put_u8(enc, pi->cur.n);
	for (unsigned int i = 0; i < pi->cur.n; i++)
		proto_enc_put_u32(enc, (uint32_t)pi->cur.osd[i]);
	proto_enc_put_u8(enc, (uint8_t)pi->n);
	for (uint32_t i = 0; i < pi->n; i++)
		proto_pg_interval_put(enc, &pi->e[i]);
}

int pg_pi_decode(struct proto_dec *dec, struct pg_pi *pi_out)
{
	static __thread struct pg_pi pi;
	uint8_t n = 0;

	memset(&pi, 0, sizeof(pi));
	proto_dec_get_u32(dec, "pi.epoch", &pi.epoch);
	proto_dec_get_u32(dec, "pi.cur.first", &pi.cur.first);
	proto_dec_get_u8(dec, "pi.cur.flags", &pi.cur.flags);
	proto_dec_get_u8(dec, "pi.cur.n", &pi.cur.n);
	if (dec->err == 0 && pi.cur.n > PROTO_PG_IV_OSDS)
		return proto_dec_fail(dec, "pi.cur.n: %u", pi.cur.n);
	for (unsigned int i = 0; i < pi.cur.n; i++) {
		uint32_t id = 0;

		proto_dec_get_u32(dec, "pi.cur.osd", &id);
		pi.cur.osd[i] = (int32_t)id;
	}
	proto_dec_get_u8(dec, "pi.n", &n);
	if (dec->err == 0 && n > PG_PI_MAX)
		return proto_dec_fail(dec, "pi.n: %u > %u", n, PG_PI_MAX);
	for (unsigned int i = 0; i < n && dec->err == 0; i++)
		proto_pg_interval_get(dec, &pi.e[i]);
	if (dec->err != 0)
		return dec->err;
	pi.n = n;
	*pi_out = pi;
	return 0;
}
