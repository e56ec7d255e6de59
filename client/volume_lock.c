/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The exclusive lock (docs/volumes.md, "Exclusive lock"): one object per
 * volume, "wvol_lock.<id>", holding {epoch, since, holder}. Every change is
 * a compare-and-write against the bytes last read (PROTO_OP_CMP_WRITE_FULL,
 * decided on the PG's primary in PG order), so two clients racing for a
 * free lock cannot both win: the second one's compare fails, it re-reads
 * and sees the winner. epoch grows on every acquisition and break, so a
 * holder tells "still mine" from "broken and taken again by a namesake".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "client/volume_int.h"
#include "common/log.h"

void vol_holder_make(struct weft_cluster *cl, char *out, size_t cap)
{
	char host[65] = "";
	uint64_t nonce = 0;

	/* the nonce tells two handles of one process apart; a failed getrandom still leaves pid */
	if (getrandom(&nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce))
		nonce = (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)out << 16);
	gethostname(host, sizeof(host) - 1);
	snprintf(out, cap, "%.63s@%.64s:%ld/%016llx/i=%016llx", cl->name, host, (long)getpid(),
		 (unsigned long long)nonce, (unsigned long long)weft_instance(cl));
	for (char *p = out; *p; p++) /* the lock format wants printable ASCII */
		if (*p < 0x20 || *p > 0x7e)
			*p = '?';
}

int vol_holder_instance(const char *holder, uint64_t *instance_out)
{
	const char *p = strstr(holder, "/i="), *q;

	while (p != NULL && (q = strstr(p + 1, "/i=")) != NULL)
		p = q; /* the last one: a host name may hold anything */
	if (p == NULL || strlen(p + 3) != 16)
		return -ENOENT;
	return mon_instance_parse(p + 3, instance_out) == 0 ? 0 : -ENOENT;
}

/*
 * Fence holder before its lock is broken: blocklist its instance and wait
 * for the epoch. A holder without an instance (a libweft older than
 * fencing) or of our own instance (another handle of this cluster handle)
 * cannot be fenced: the break goes on, logged, as before fencing.
 */
static int vol_lock_fence(struct weft_cluster *cl, const char *holder, const char *vol)
{
	uint64_t inst;
	int rc;

	if (vol_holder_instance(holder, &inst) != 0) {
		log_warn("vol", "volume %s: holder %s has no client instance: breaking its lock "
			 "without fencing it", vol, holder);
		return 0;
	}
	rc = client_fence(cl, inst, VOL_FENCE_SECONDS, NULL);
	if (rc == -EDEADLK) {
		log_warn("vol", "volume %s: holder %s is this cluster handle: breaking its lock "
			 "without fencing it", vol, holder);
		return 0;
	}
	if (rc != 0)
		log_error("vol", "volume %s: could not fence holder %s (%s): lock not broken", vol,
			  holder, weft_strerror(rc));
	return rc;
}

void vol_lock_lost_mark(struct weft_vol *vol, const char *why)
{
	if (vol->lock_lost)
		return;
	vol->lock_lost = true;
	log_error("vol", "volume %s: lost the exclusive lock (%s): writes on this handle fail "
		  "from now on", vol->hdr.name, why);
}

int vol_lock_read(struct weft_cluster *cl, uint32_t pool, uint64_t id, struct vol_lock *l_out)
{
	char obj[VOL_OBJ_NAME_MAX];
	uint8_t *buf;
	size_t len;
	int rc;

	vol_lock_obj_name(id, obj, sizeof(obj));
	rc = vol_obj_read_all(cl, pool, obj, VOL_LOCK_MAX, &buf, &len);
	if (rc != 0)
		return rc;
	rc = vol_lock_decode(buf, len, obj, l_out);
	free(buf);
	return rc;
}

/*
 * Compare-and-write the lock from what we read to what change() makes of
 * it, re-reading on a lost race. change returns 0 to write l, 1 when l is
 * already what we want (nothing to write), or a negative errno.
 * A corrupt lock object is replaced only when force is set.
 */
static int vol_lock_update(struct weft_cluster *cl, uint32_t pool, const char *obj, bool force,
			   int (*change)(struct vol_lock *l, void *arg), void *arg,
			   struct vol_lock *l_out)
{
	uint8_t nw[VOL_LOCK_MAX];
	int rc = -EAGAIN;

	for (unsigned int t = 0; t < VOL_CAS_TRIES && rc == -EAGAIN; t++) {
		struct vol_lock l;
		uint8_t *cur;
		size_t cur_len, nw_len;

		rc = vol_obj_read_all(cl, pool, obj, VOL_LOCK_MAX, &cur, &cur_len);
		if (rc != 0)
			return rc;
		rc = vol_lock_decode(cur, cur_len, obj, &l);
		if (rc == -WEFT_E_CORRUPT && force) {
			log_warn("vol", "%s: replacing the corrupt lock", obj);
			memset(&l, 0, sizeof(l));
			rc = 0;
		}
		if (rc == 0)
			rc = change(&l, arg);
		if (rc == 1) {
			*l_out = l;
			rc = 0;
		} else if (rc == 0) {
			rc = vol_lock_encode(&l, nw, sizeof(nw), &nw_len);
			if (rc == 0)
				rc = vol_obj_cas(cl, pool, obj, cur, cur_len, nw, nw_len);
			if (rc == 0)
				*l_out = l;
			else if (rc == -ECANCELED)
				rc = -EAGAIN; /* someone changed it since we read: look again */
		}
		free(cur);
	}
	if (rc == -EAGAIN) {
		log_error("vol", "%s: lock kept changing under us (%u tries)", obj, VOL_CAS_TRIES);
		rc = -EBUSY;
	}
	return rc;
}

struct vol_acquire {
	const char *me;
	bool force;
	const char *fenced; /* force: the holder we fenced, the only one we may break */
};

static int vol_lock_take(struct vol_lock *l, void *arg)
{
	struct vol_acquire *a = arg;

	/* ours already: a resend after a lost reply applied our earlier write */
	if (strcmp(l->holder, a->me) == 0)
		return 1;
	if (l->holder[0] != '\0') {
		if (!a->force)
			return -EBUSY;
		if (a->fenced == NULL || strcmp(l->holder, a->fenced) != 0) {
			log_error("vol", "the exclusive lock went to %s while we fenced %s: not "
				  "breaking a holder we did not fence", l->holder,
				  a->fenced ? a->fenced : "nobody");
			return -EBUSY;
		}
		log_warn("vol", "breaking the exclusive lock of %s (epoch %llu)", l->holder,
			 (unsigned long long)l->epoch);
	}
	l->epoch++;
	l->since = (uint64_t)time(NULL);
	snprintf(l->holder, sizeof(l->holder), "%s", a->me);
	return 0;
}

int vol_lock_acquire(struct weft_vol *vol, bool force)
{
	struct vol_acquire a = {vol->holder, force, NULL};
	struct vol_lock l, cur;
	int rc;

	if (force) {
		/* fence first: from the epoch that lists it, no OSD serves the old holder */
		rc = vol_lock_read(vol->cl, vol->pool, vol->hdr.id, &cur);
		if (rc == -WEFT_E_CORRUPT)
			rc = 0, cur.holder[0] = '\0'; /* replaced below; no holder to fence */
		if (rc != 0)
			return rc;
		if (cur.holder[0] != '\0' && strcmp(cur.holder, vol->holder) != 0) {
			rc = vol_lock_fence(vol->cl, cur.holder, vol->hdr.name);
			if (rc != 0)
				return rc;
			a.fenced = cur.holder;
		}
	}
	rc = vol_lock_update(vol->cl, vol->pool, vol->lock_obj, force, vol_lock_take, &a, &l);

	if (rc == -EBUSY) {
		if (vol_lock_read(vol->cl, vol->pool, vol->hdr.id, &cur) == 0 && cur.holder[0])
			log_error("vol", "volume %s: exclusively locked by %s (epoch %llu)",
				  vol->hdr.name, cur.holder, (unsigned long long)cur.epoch);
		return -EBUSY;
	}
	if (rc != 0)
		return rc;
	vol->lock = l;
	vol->locked = true;
	vol->lock_lost = false;
	return 0;
}

struct vol_release {
	const char *holder; /* NULL: whoever holds it */
	uint64_t epoch;	    /* with holder: must match too (0 = any) */
	bool bump;	    /* a break: grow epoch so the old holder can tell */
};

static int vol_lock_free(struct vol_lock *l, void *arg)
{
	struct vol_release *r = arg;

	if (l->holder[0] == '\0')
		return r->holder && !r->bump ? -ENOLCK : 1;
	if (r->holder && (strcmp(l->holder, r->holder) != 0 || (r->epoch && l->epoch != r->epoch)))
		return r->bump ? -ESTALE : -ENOLCK;
	if (r->bump)
		l->epoch++;
	l->holder[0] = '\0';
	l->since = 0;
	return 0;
}

int vol_lock_release(struct weft_vol *vol)
{
	struct vol_release r = {vol->holder, vol->lock.epoch, false};
	struct vol_lock l;
	int rc;

	if (!vol->locked)
		return 0;
	vol->locked = false;
	rc = vol_lock_update(vol->cl, vol->pool, vol->lock_obj, false, vol_lock_free, &r, &l);
	if (rc == -WEFT_E_BLOCKLISTED)
		rc = -ENOLCK; /* fenced: the lock was broken, and is someone else's now */
	if (rc == -ENOLCK)
		log_warn("vol", "volume %s: the exclusive lock was broken while we held it",
			 vol->hdr.name);
	return rc;
}

int vol_lock_check_buf(struct weft_vol *vol, const void *buf, size_t len)
{
	struct vol_lock l;
	int rc = vol_lock_decode(buf, len, vol->lock_obj, &l);

	if (rc == 0 && (strcmp(l.holder, vol->holder) != 0 || l.epoch != vol->lock.epoch))
		rc = -ENOLCK;
	if (rc == -ENOLCK && !vol->lock_lost) {
		char why[WEFT_VOL_HOLDER_MAX + 48];

		snprintf(why, sizeof(why), "now %s, epoch %llu", l.holder[0] ? l.holder : "free",
			 (unsigned long long)l.epoch);
		vol_lock_lost_mark(vol, why);
	}
	return rc;
}

int vol_lock_check(struct weft_vol *vol)
{
	char obj[VOL_OBJ_NAME_MAX];
	uint8_t *buf;
	size_t len;
	int rc;

	if (vol->lock_lost)
		return -ENOLCK;
	if (weft_blocklisted(vol->cl)) {
		vol_lock_lost_mark(vol, "this client instance is blocklisted");
		return -ENOLCK;
	}
	vol_lock_obj_name(vol->hdr.id, obj, sizeof(obj));
	rc = vol_obj_read_all(vol->cl, vol->pool, obj, VOL_LOCK_MAX, &buf, &len);
	if (rc != 0)
		return rc;
	rc = vol_lock_check_buf(vol, buf, len);
	free(buf);
	return rc;
}

int weft_vol_lock_get(struct weft_cluster *cl, uint32_t pool, const char *name,
		      struct weft_vol_lock_info *info_out)
{
	struct vol_hdr h;
	struct vol_lock l;
	int rc = vol_hdr_load(cl, pool, name, &h, NULL, NULL);

	if (rc == 0)
		rc = vol_lock_read(cl, pool, h.id, &l);
	if (rc != 0)
		return rc;
	memset(info_out, 0, sizeof(*info_out));
	snprintf(info_out->holder, sizeof(info_out->holder), "%s", l.holder);
	info_out->epoch = l.epoch;
	info_out->since = l.since;
	return 0;
}

int weft_vol_lock_break(struct weft_cluster *cl, uint32_t pool, const char *name,
			const char *holder)
{
	struct vol_release r = {holder, 0, true};
	char obj[VOL_OBJ_NAME_MAX];
	struct vol_hdr h;
	struct vol_lock l, cur;
	int rc = vol_hdr_load(cl, pool, name, &h, NULL, NULL);

	if (rc != 0)
		return rc;
	vol_lock_obj_name(h.id, obj, sizeof(obj));
	/* fence the holder first; then break only that holder (not one who came since) */
	rc = vol_lock_read(cl, pool, h.id, &cur);
	if (rc == 0 && cur.holder[0] != '\0' && (holder == NULL || !strcmp(cur.holder, holder))) {
		rc = vol_lock_fence(cl, cur.holder, name);
		if (rc != 0)
			return rc;
		r.holder = cur.holder;
		r.epoch = cur.epoch;
	} else if (rc == -WEFT_E_CORRUPT) {
		rc = 0; /* replaced by the forced update below, as before */
	}
	if (rc != 0)
		return rc;
	rc = vol_lock_update(cl, pool, obj, true, vol_lock_free, &r, &l);
	if (rc == 0)
		log_info("vol", "volume %s: exclusive lock broken (epoch now %llu)", name,
			 (unsigned long long)l.epoch);
	else if (rc == -ESTALE)
		log_error("vol", "volume %s: lock not held by %s any more; nothing broken", name,
			  holder);
	return rc;
}
