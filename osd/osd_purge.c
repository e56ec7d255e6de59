/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Removed pools' objects go in the background (docs/capacity.md, "Space
 * given back"). When a map no longer has a pool the previous one had (pool
 * ids are never reused), every PG of it this OSD holds is queued: its
 * machine is dropped at once (nobody serves the pool any more), then its
 * objects are removed at most osd_pool_purge_rate per second, one store
 * transaction in flight at a time, and last its PG log and info. The queue
 * is kept in the store (attribute "purging" of the pginfo object: "pool:pg_num"
 * pairs), so a restart resumes where the objects left off. The objects still
 * to delete are osd->purging_objects (PG_STATS, perf dump).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "osd/osd_pg.h"

#define OSD_PURGE_ATTR	    "purging"
#define OSD_PURGE_MAX	    256u /* pools queued at once */
#define OSD_PURGE_TX_MAX    256u /* removes per transaction */
#define OSD_PURGE_EMPTY_MAX 64u	 /* empty PGs finished per tick */

struct osd_purge_pool {
	uint32_t pool, pg_num;
	uint32_t cur;	   /* the PG being emptied */
	uint64_t removed;  /* objects removed by this run */
	uint64_t t0_ms;
};

struct osd_purge {
	struct osd_purge_pool q[OSD_PURGE_MAX];
	unsigned int n;
	bool inflight;	   /* one transaction at a time */
	double tokens;	   /* removes we may submit now (osd_pool_purge_rate) */
	uint64_t last_ms;
	uint64_t rate;
	uint64_t purged;   /* objects removed since start (perf dump) */
};

static bool osd_purge_attr_stored(struct osd *osd)
{
	char c;
	size_t len;
	int rc = store_getattr(osd->store, OSD_META_PG, OSD_PGINFO_OBJ, OSD_PURGE_ATTR, &c, 1,
			       &len);

	return rc == 0 || rc == -ERANGE;
}

/* The queue as the attribute's text: "pool:pg_num ..." ("" = empty). */
static int osd_purge_persist(struct osd *osd, struct store_tx *tx)
{
	struct osd_purge *p = osd->purge;
	char buf[OSD_PURGE_MAX * 24];
	size_t len = 0;

	for (unsigned int i = 0; i < p->n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%u:%u", i ? " " : "",
					p->q[i].pool, p->q[i].pg_num);
	if (len == 0)
		return osd_purge_attr_stored(osd)
			       ? store_tx_rmattr(tx, OSD_META_PG, OSD_PGINFO_OBJ, OSD_PURGE_ATTR)
			       : 0;
	return store_tx_setattr(tx, OSD_META_PG, OSD_PGINFO_OBJ, OSD_PURGE_ATTR, buf, len);
}

static void osd_purge_cb(void *arg, int rc)
{
	struct osd *osd = arg;

	osd->store_pending--;
	if (osd->purge != NULL)
		osd->purge->inflight = false;
	if (rc != 0)
		log_warn("osd", "%s: deleting a removed pool's objects: %s", osd->name,
			 weft_strerror(rc));
}

static int osd_purge_submit(struct osd *osd, struct store_tx *tx)
{
	int rc = store_tx_submit(osd->store, tx, osd_purge_cb, osd);

	if (rc != 0) {
		store_tx_destroy(tx);
		return rc;
	}
	osd->store_pending++;
	osd->purge->inflight = true;
	return 0;
}

static void osd_purge_queue_save(struct osd *osd)
{
	struct store_tx *tx;

	if (store_tx_create(&tx) != 0)
		return;
	if (osd_purge_persist(osd, tx) != 0 || osd_purge_submit(osd, tx) != 0)
		log_warn("osd", "%s: saving the pool purge queue failed: a restart may leave a "
				"removed pool's objects behind", osd->name);
}

static bool osd_purge_queued(const struct osd_purge *p, uint32_t pool)
{
	for (unsigned int i = 0; i < p->n; i++)
		if (p->q[i].pool == pool)
			return true;
	return false;
}

static void osd_purge_add(struct osd_purge *p, uint32_t pool, uint32_t pg_num)
{
	p->q[p->n++] = (struct osd_purge_pool){pool, pg_num, 0, 0, clock_now_ms()};
}

int osd_purge_init(struct osd *osd)
{
	struct osd_purge *p = calloc(1, sizeof(*p));
	char buf[OSD_PURGE_MAX * 24 + 1];
	size_t len = 0;
	int rc;

	if (p == NULL)
		return -ENOMEM;
	osd->purge = p;
	p->rate = (uint64_t)conf_get_int(osd->conf, CONF_OSD_POOL_PURGE_RATE);
	p->last_ms = clock_now_ms();
	rc = store_getattr(osd->store, OSD_META_PG, OSD_PGINFO_OBJ, OSD_PURGE_ATTR, buf,
			   sizeof(buf) - 1, &len);
	if (rc == -ENOENT)
		return 0;
	if (rc != 0) {
		log_warn("osd", "%s: reading the pool purge queue: %s", osd->name,
			 weft_strerror(rc));
		return 0;
	}
	buf[len] = '\0';
	for (char *s = buf, *end; *s && p->n < OSD_PURGE_MAX; s = end) {
		unsigned long pool, pg_num;

		while (*s == ' ')
			s++;
		if (!*s)
			break;
		pool = strtoul(s, &end, 10);
		if (*end != ':' || pool > UINT32_MAX) {
			log_warn("osd", "%s: pool purge queue \"%s\" is damaged; ignored from \"%s\"",
				 osd->name, buf, s);
			break;
		}
		pg_num = strtoul(end + 1, &end, 10);
		if ((*end != ' ' && *end != '\0') || pg_num == 0 || pg_num > (1u << 20)) {
			log_warn("osd", "%s: pool purge queue \"%s\" is damaged; ignored from \"%s\"",
				 osd->name, buf, s);
			break;
		}
		if (!osd_purge_queued(p, (uint32_t)pool))
			osd_purge_add(p, (uint32_t)pool, (uint32_t)pg_num);
	}
	if (p->n > 0)
		log_info("osd", "%s: resuming the deletion of %u removed pools' objects", osd->name,
			 p->n);
	return 0;
}

void osd_purge_fini(struct osd *osd)
{
	free(osd->purge);
	osd->purge = NULL;
}

void osd_purge_pool(struct osd *osd, uint32_t pool, uint32_t pg_num)
{
	struct osd_purge *p = osd->purge;

	if (p == NULL || pg_num == 0 || osd_purge_queued(p, pool))
		return;
	if (p->n == OSD_PURGE_MAX) {
		log_warn("osd", "%s: pool %u removed, but %u pools are already being purged: its "
				"objects stay until a restart after those finish", osd->name, pool,
			 OSD_PURGE_MAX);
		return;
	}
	osd_purge_add(p, pool, pg_num);
	log_info("osd", "%s: pool %u removed: deleting its objects here in the background "
			"(%u PGs, at most %" PRIu64 " objects/s)", osd->name, pool, pg_num, p->rate);
	osd_purge_queue_save(osd);
}

/* Forget the PG in memory: no machine, no pushes; it never comes back (ids are not reused). */
static void osd_purge_pg_forget(struct osd *osd, uint32_t pool, uint32_t pgid)
{
	struct osd_pg *pg = osd_pg_get(osd, pool, pgid);

	if (pg == NULL || pg->purged)
		return;
	pg->purged = true;
	if (pg->m != NULL) {
		osd_push_interval(osd, pg->m);
		pg_free(pg->m);
		pg->m = NULL;
	}
}

struct osd_purge_list {
	char **names;
	uint32_t n, max;
};

static int osd_purge_list_one(void *arg, const char *name)
{
	struct osd_purge_list *l = arg;

	if (l->n == l->max)
		return 1; /* enough for this transaction */
	l->names[l->n] = strdup(name);
	return l->names[l->n] ? (l->n++, 0) : -ENOMEM;
}

/*
 * The next transaction of the first queued pool: up to max removes of its
 * current PG, or, once that PG is empty, its log and info (and, after its
 * last PG, the pool leaves the queue). 1: a transaction went out, 0: an
 * empty PG was finished without one, <0: an error.
 */
static int osd_purge_step(struct osd *osd, struct osd_purge_pool *q, uint32_t max)
{
	uint64_t pgk = osd_pg_key(q->pool, q->cur);
	struct osd_purge_list l = {.max = max};
	struct store_tx *tx = NULL;
	char key[32];
	int rc;

	osd_purge_pg_forget(osd, q->pool, q->cur);
	l.names = calloc(max, sizeof(*l.names));
	if (l.names == NULL)
		return -ENOMEM;
	rc = store_list(osd->store, pgk, "", osd_purge_list_one, &l);
	if (rc >= 0)
		rc = store_tx_create(&tx);
	for (uint32_t i = 0; rc >= 0 && i < l.n; i++)
		rc = store_tx_remove(tx, pgk, l.names[i]);
	q->removed += rc >= 0 ? l.n : 0;
	if (rc >= 0 && l.n == 0 && !osd_pgm_stored(osd, q->pool, q->cur) &&
	    q->cur + 1 < q->pg_num) {
		q->cur++; /* nothing of this PG here: the next one, no transaction */
		store_tx_destroy(tx);
		free(l.names);
		return 0;
	}
	if (rc >= 0 && l.n == 0) {
		/* the PG is empty: its log and info go, and the pool when it was the last */
		rc = store_tx_pglog_trim(tx, pgk, UINT64_MAX - 1);
		snprintf(key, sizeof(key), "%u.%x", q->pool, q->cur);
		if (rc == 0 && osd_pgm_stored(osd, q->pool, q->cur))
			rc = store_tx_rmattr(tx, OSD_META_PG, OSD_PGINFO_OBJ, key);
		if (rc == 0 && ++q->cur == q->pg_num) {
			struct osd_purge *p = osd->purge;

			log_info("osd", "%s: pool %u purged: %" PRIu64 " objects deleted here in %.1f s",
				 osd->name, q->pool, q->removed,
				 (double)(clock_now_ms() - q->t0_ms) / 1000.0);
			memmove(q, q + 1, (size_t)(p->n - (unsigned int)(q - p->q) - 1) * sizeof(*q));
			p->n--;
			rc = osd_purge_persist(osd, tx);
		}
	}
	for (uint32_t i = 0; i < l.n; i++)
		free(l.names[i]);
	free(l.names);
	if (rc < 0) {
		store_tx_destroy(tx);
		return rc;
	}
	rc = osd_purge_submit(osd, tx);
	if (rc != 0)
		return rc;
	osd->purge->tokens -= l.n;
	osd->purge->purged += l.n;
	return 1;
}

/* Objects of the queued pools still stored here (PG_STATS purging_objects). */
static uint64_t osd_purge_left(struct osd *osd)
{
	const struct osd_purge *p = osd->purge;
	uint64_t left = 0;

	for (unsigned int i = 0; i < p->n; i++) {
		for (uint32_t g = p->q[i].cur; g < p->q[i].pg_num; g++) {
			struct store_pg_usage u;

			store_pg_usage_get(osd->store, osd_pg_key(p->q[i].pool, g), &u);
			left += u.objects;
		}
	}
	return left;
}

void osd_purge_tick(struct osd *osd)
{
	struct osd_purge *p = osd->purge;
	uint64_t now = clock_now_ms();
	int rc = 0;

	if (p == NULL)
		return;
	/* a token bucket of one second's worth */
	p->tokens += (double)p->rate * (double)(now - p->last_ms) / 1000.0;
	if (p->tokens > (double)p->rate)
		p->tokens = (double)p->rate;
	p->last_ms = now;
	for (unsigned int k = 0; k < OSD_PURGE_EMPTY_MAX && p->n > 0 && !p->inflight; k++) {
		uint32_t max = p->tokens >= OSD_PURGE_TX_MAX ? OSD_PURGE_TX_MAX : (uint32_t)p->tokens;

		if (max == 0)
			break;
		rc = osd_purge_step(osd, &p->q[0], max);
		if (rc != 0)
			break;
	}
	if (rc < 0 && rc != -ENOSPC)
		log_warn("osd", "%s: deleting pool %u's objects: %s (again later)", osd->name,
			 p->n ? p->q[0].pool : 0, weft_strerror(rc));
	osd->purging_objects = osd_purge_left(osd);
}

uint64_t osd_purge_done(const struct osd *osd)
{
	return osd->purge ? osd->purge->purged : 0;
}
