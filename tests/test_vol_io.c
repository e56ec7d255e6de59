/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_vol_io: volumes against a real cluster (tests/test_vol_cluster.sh).
 *
 *   test_vol_io -c CONF -p POOL [SEED]
 *
 * Runs every case below in order on fresh volumes and compares what the
 * volume returns with a shadow copy kept in memory. Prints "ok: <case>" per
 * case and one line per failure; exits 1 on the first failing case. Every
 * wait is bounded by client_op_timeout.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/client_debug.h"
#include "client/client_int.h"
#include "client/volume_int.h"
#include "weft/volume.h"

__attribute__((constructor)) static void io_unbuffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                     \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)
#define CHECK_RC(expr, want)                                                                       \
	do {                                                                                       \
		int rc_ = (expr);                                                                  \
		CHECK(rc_ == (want), "got %d (%s), want %d", rc_, weft_strerror(rc_), (want));     \
	} while (0)

static struct weft_cluster *cl, *cl2;
static const char *conf_path; /* for cluster handles a case fences (case_exclusive) */
static uint32_t pool;
static uint64_t rng_state = 42;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(rnd() | 1); /* never 0, so a lost write cannot pass as a hole */
}

/* Read the whole volume and compare with shadow; where names the step. */
static void verify_all(struct weft_vol *v, const uint8_t *shadow, uint64_t size, const char *where)
{
	uint8_t *got = malloc(size + 1);
	size_t n = 0;

	memset(got, 0xAA, size + 1);
	CHECK_RC(weft_vol_read(v, got, size, 0, &n), 0);
	CHECK(n == size, "%s: read %zu of %" PRIu64, where, n, size);
	for (uint64_t i = 0; i < size; i++)
		CHECK(got[i] == shadow[i], "%s: byte %" PRIu64 " is 0x%02x, want 0x%02x", where, i,
		      got[i], shadow[i]);
	CHECK(got[size] == 0xAA, "%s: read wrote past its buffer", where);
	free(got);
}

static bool obj_exists(uint64_t id, uint64_t objno, uint64_t *size_out)
{
	char name[VOL_OBJ_NAME_MAX];
	uint64_t size = 0;
	int rc;

	vol_data_obj_name(id, objno, name, sizeof(name));
	rc = weft_stat(cl, pool, name, &size, NULL);
	CHECK(rc == 0 || rc == -ENOENT, "stat %s: %s", name, weft_strerror(rc));
	if (size_out)
		*size_out = size;
	return rc == 0;
}

struct aio {
	int rc;
	bool done;
	unsigned int order;
};
static unsigned int completions;

static void aio_cb(const struct weft_result *res, void *arg)
{
	struct aio *a = arg;

	a->rc = res->rc;
	a->done = true;
	a->order = ++completions;
}

static void case_create_args(void)
{
	struct weft_vol_opts o = {0};

	CHECK_RC(weft_vol_create(cl, pool, "", 1 << 20, NULL), -EINVAL);
	CHECK_RC(weft_vol_create(cl, pool, "bad/name", 1 << 20, NULL), -EINVAL);
	CHECK_RC(weft_vol_create(cl, pool, ".hidden", 1 << 20, NULL), -EINVAL);
	CHECK_RC(weft_vol_create(cl, pool, "zero", 0, NULL), -EINVAL);
	CHECK_RC(weft_vol_create(cl, pool, "huge", WEFT_VOL_SIZE_MAX + 1, NULL), -EINVAL);
	o.object_size = 3 << 20;
	CHECK_RC(weft_vol_create(cl, pool, "odd", 1 << 20, &o), -EINVAL);
	o.object_size = 1 << 20;
	o.stripe_count = 2;
	CHECK_RC(weft_vol_create(cl, pool, "striped", 1 << 20, &o), -ENOTSUP);
	o.stripe_count = 1;
	o.stripe_unit = 64 << 10;
	CHECK_RC(weft_vol_create(cl, pool, "striped", 1 << 20, &o), -ENOTSUP);
	o.stripe_unit = 0;
	o.features = 1;
	CHECK_RC(weft_vol_create(cl, pool, "feat", 1 << 20, &o), -ENOTSUP);
	CHECK_RC(weft_vol_create(cl, 4242, "nopool", 1 << 20, NULL), -ENOENT);
	printf("ok: create argument checks\n");
}

/* Object size 64 KiB, a size that ends mid-object: boundaries everywhere. */
#define OS   (64u << 10)
#define SIZE (16 * OS + 1234)

static void case_io(void)
{
	struct weft_vol_opts o = {.object_size = OS};
	struct weft_vol_info info;
	struct weft_vol *v;
	uint8_t *shadow = calloc(1, SIZE), *buf = malloc(4 * OS);
	size_t n;

	CHECK_RC(weft_vol_create(cl, pool, "io", SIZE, &o), 0);
	CHECK_RC(weft_vol_create(cl, pool, "io", SIZE, &o), -EEXIST);
	CHECK_RC(weft_vol_open(cl, pool, "nosuch", 0, &v), -ENOENT);
	CHECK_RC(weft_vol_open(cl, pool, "io", 0, &v), 0);
	CHECK_RC(weft_vol_stat(v, &info), 0);
	CHECK(info.size == SIZE && info.object_size == OS && info.stripe_count == 1 &&
		  info.stripe_unit == OS && info.num_objects == 17 && info.format == 1 &&
		  !strcmp(info.name, "io") && info.id != 0,
	      "info: size %" PRIu64 " os %" PRIu64 " objs %" PRIu64, info.size, info.object_size,
	      info.num_objects);
	CHECK(weft_vol_size(v) == SIZE, "cached size");

	/* a new volume reads as zeros and holds no data object */
	verify_all(v, shadow, SIZE, "fresh volume");
	for (uint64_t i = 0; i < 17; i++)
		CHECK(!obj_exists(info.id, i, NULL), "object %" PRIu64 " exists before any write",
		      i);
	printf("ok: sparse reads of a new volume are zeros\n");

	/* edges: across one boundary, unaligned, the last byte, a whole object */
	struct {
		uint64_t off, len;
	} edges[] = {
	    {OS - 3, 7},	 {1, 1}, {SIZE - 1, 1}, {3 * OS, OS}, {5 * OS - 100, 2 * OS + 200},
	    {SIZE - 5000, 5000}, {0, 1}};
	for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]); i++) {
		fill(buf, edges[i].len);
		CHECK_RC(weft_vol_write(v, buf, edges[i].len, edges[i].off), 0);
		memcpy(shadow + edges[i].off, buf, edges[i].len);
	}
	verify_all(v, shadow, SIZE, "edge writes");
	CHECK(!obj_exists(info.id, 10, NULL), "object 10 was never written but exists");
	printf("ok: writes across object boundaries, unaligned, at the end\n");

	/* random writes and reads, 1 B .. 3 objects */
	for (int i = 0; i < 150; i++) {
		uint64_t len = 1 + rnd() % (3 * OS), off = rnd() % (SIZE - len + 1);

		fill(buf, len);
		CHECK_RC(weft_vol_write(v, buf, len, off), 0);
		memcpy(shadow + off, buf, len);
		len = 1 + rnd() % (3 * OS);
		off = rnd() % (SIZE - len + 1);
		CHECK_RC(weft_vol_read(v, buf, len, off, &n), 0);
		CHECK(n == len && !memcmp(buf, shadow + off, len),
		      "random read %" PRIu64 "+%" PRIu64 " differs", off, len);
	}
	verify_all(v, shadow, SIZE, "random writes");
	printf("ok: 150 random unaligned writes and reads\n");

	/* bounds */
	CHECK_RC(weft_vol_write(v, buf, 2, SIZE - 1), -EINVAL);
	CHECK_RC(weft_vol_read(v, buf, 1, SIZE + 1, &n), -EINVAL);
	CHECK_RC(weft_vol_read(v, buf, 100, SIZE - 10, &n), 0);
	CHECK(n == 10 && !memcmp(buf, shadow + SIZE - 10, 10), "read past the end: %zu bytes", n);
	CHECK_RC(weft_vol_read(v, buf, 0, 5, &n), 0);
	CHECK(n == 0, "zero-length read");
	CHECK_RC(weft_vol_write(v, buf, 0, 5), 0);
	CHECK_RC(weft_vol_discard(v, 7, 0), 0);
	CHECK_RC(weft_vol_read(v, buf, 1, 0, NULL), 0);
	{
		/* nothing pending: the flush completes later, and weft_fd() says so */
		static struct aio f;
		struct pollfd pfd = {.fd = weft_fd(cl), .events = POLLIN};

		CHECK_RC(weft_vol_aio_flush(v, aio_cb, &f), 0);
		CHECK(!f.done, "flush completed inside its submit");
		CHECK(poll(&pfd, 1, 5000) == 1, "weft_fd() not readable with a completion queued");
		for (int i = 0; i < 1000 && !f.done; i++)
			weft_poll(cl, 10);
		CHECK(f.done && f.rc == 0, "idle flush: done %d rc %d", f.done, f.rc);
	}
	printf("ok: bounds and zero-length ops\n");

	/* discard: a middle range, a whole object, an object's tail, the volume's tail */
	struct {
		uint64_t off, len;
	} dis[] = {{100, 50},
		   {2 * OS, OS},
		   {5 * OS + 10, OS - 10},
		   {SIZE - 1000, 1000},
		   {7 * OS - 5, 2 * OS + 10}};
	for (size_t i = 0; i < sizeof(dis) / sizeof(dis[0]); i++) {
		CHECK_RC(weft_vol_discard(v, dis[i].off, dis[i].len), 0);
		memset(shadow + dis[i].off, 0, dis[i].len);
	}
	verify_all(v, shadow, SIZE, "discards");
	CHECK(!obj_exists(info.id, 2, NULL), "object 2 survived a whole-object discard");
	CHECK(!obj_exists(info.id, 7, NULL), "object 7 survived a whole-object discard");
	{
		uint64_t osz = 0;

		CHECK(obj_exists(info.id, 5, &osz) && osz == 10, "object 5 tail: size %" PRIu64,
		      osz);
	}
	for (int i = 0; i < 40; i++) {
		uint64_t len = 1 + rnd() % (3 * OS), off = rnd() % (SIZE - len + 1);

		if (i % 2) {
			fill(buf, len);
			CHECK_RC(weft_vol_write(v, buf, len, off), 0);
			memcpy(shadow + off, buf, len);
		} else {
			CHECK_RC(weft_vol_discard(v, off, len), 0);
			memset(shadow + off, 0, len);
		}
	}
	verify_all(v, shadow, SIZE, "random discards");
	printf("ok: discard (remove, truncate, zeros) reads back as zeros\n");

	/* shrink mid-object: data beyond is gone, and stays gone after growing back */
	uint64_t small = 6 * OS + 777;

	fill(shadow, SIZE);
	CHECK_RC(weft_vol_write(v, shadow, SIZE, 0), 0);
	CHECK_RC(weft_vol_resize(v, small), 0);
	CHECK(weft_vol_size(v) == small, "size after shrink");
	for (uint64_t i = 7; i < 17; i++)
		CHECK(!obj_exists(info.id, i, NULL), "object %" PRIu64 " survived the shrink", i);
	{
		uint64_t osz = 0;

		CHECK(obj_exists(info.id, 6, &osz) && osz == 777, "cut object: size %" PRIu64, osz);
	}
	CHECK_RC(weft_vol_write(v, buf, 1, small), -EINVAL);
	verify_all(v, shadow, small, "after shrink");
	CHECK_RC(weft_vol_resize(v, SIZE), 0);
	memset(shadow + small, 0, SIZE - small);
	verify_all(v, shadow, SIZE, "after growing back");
	CHECK_RC(weft_vol_stat(v, &info), 0);
	CHECK(info.size == SIZE, "stat after grow: %" PRIu64, info.size);
	/* another handle sees the new size after stat */
	{
		struct weft_vol *v2;

		CHECK_RC(weft_vol_open(cl2, pool, "io", WEFT_VOL_RDONLY, &v2), 0);
		CHECK_RC(weft_vol_resize(v, 2 * SIZE), 0);
		CHECK(weft_vol_size(v2) == SIZE, "other handle changed without stat");
		CHECK_RC(weft_vol_stat(v2, &info), 0);
		CHECK(weft_vol_size(v2) == 2 * SIZE, "other handle after stat");
		CHECK_RC(weft_vol_resize(v2, SIZE), -EROFS);
		CHECK_RC(weft_vol_write(v2, buf, 1, 0), -EROFS);
		CHECK_RC(weft_vol_close(v2), 0);
	}
	printf("ok: resize shrink (objects removed and cut) and grow (zeros)\n");
	CHECK_RC(weft_vol_close(v), 0);
	free(shadow);
	free(buf);
}

/* Two clients, one volume each handle, interleaved 4 KiB blocks inside the same objects. */
static void case_concurrent(void)
{
	enum { BLK = 4096, NBLK = 96, VS = NBLK * BLK };
	struct weft_vol_opts o = {.object_size = 16 * BLK};
	struct weft_vol *va, *vb;
	static struct aio ops[NBLK], fl;
	static uint8_t data[VS], got[VS];
	bool all;

	CHECK_RC(weft_vol_create(cl, pool, "conc", VS, &o), 0);
	CHECK_RC(weft_vol_open(cl, pool, "conc", 0, &va), 0);
	CHECK_RC(weft_vol_open(cl2, pool, "conc", 0, &vb), 0);
	fill(data, VS);
	/* all in flight at once: even blocks from client A, odd ones from client B */
	for (int i = 0; i < NBLK; i++)
		CHECK_RC(weft_vol_aio_write(i % 2 ? vb : va, data + i * BLK, BLK, (uint64_t)i * BLK,
					    aio_cb, &ops[i]),
			 0);
	CHECK_RC(weft_vol_aio_flush(va, aio_cb, &fl), 0);
	for (int spins = 0; spins < 100000; spins++) {
		all = fl.done;
		for (int i = 0; i < NBLK; i++)
			all &= ops[i].done;
		if (all)
			break;
		weft_poll(cl, 1);
		weft_poll(cl2, 1);
	}
	CHECK(all, "concurrent writes did not complete");
	for (int i = 0; i < NBLK; i++) {
		CHECK(ops[i].rc == 0, "block %d: %s", i, weft_strerror(ops[i].rc));
		/* the flush on A completes after every write A submitted before it */
		if (i % 2 == 0)
			CHECK(ops[i].order < fl.order, "flush completed before write %d", i);
	}
	CHECK(fl.rc == 0, "flush: %s", weft_strerror(fl.rc));
	CHECK_RC(weft_vol_read(vb, got, VS, 0, NULL), 0);
	CHECK(!memcmp(got, data, VS), "interleaved blocks of two clients differ");
	CHECK_RC(weft_vol_close(va), 0);
	CHECK_RC(weft_vol_close(vb), 0);
	CHECK_RC(weft_vol_remove(cl, pool, "conc"), 0);
	printf("ok: two clients writing disjoint blocks of the same objects, flush barrier\n");
}

/* The compare-and-write op itself: two racing swaps from the same old content, one wins. */
static void case_cas(void)
{
	static struct aio a, b;
	const char *obj = "vol_test_cas";
	static uint8_t pa[8] = "old!AAAA", pb[8] = "old!BBBB";
	uint8_t cur[16];
	size_t n = 0;

	weft_remove(cl, pool, obj);
	CHECK_RC(vol_obj_cas(cl, pool, obj, NULL, 0, "old!", 4), 0);
	CHECK_RC(vol_obj_cas(cl, pool, obj, NULL, 0, "new!", 4), -ECANCELED);
	CHECK_RC(client_aio_cmp_write_full(cl, pool, obj, pa, 4, 8, aio_cb, &a), 0);
	CHECK_RC(client_aio_cmp_write_full(cl2, pool, obj, pb, 4, 8, aio_cb, &b), 0);
	for (int spins = 0; spins < 100000 && !(a.done && b.done); spins++) {
		weft_poll(cl, 1);
		weft_poll(cl2, 1);
	}
	CHECK(a.done && b.done, "racing compare-and-writes did not complete");
	CHECK((a.rc == 0) != (b.rc == 0), "a: %d b: %d: exactly one must win", a.rc, b.rc);
	CHECK((a.rc ? a.rc : b.rc) == -ECANCELED, "the loser must see -ECANCELED");
	CHECK_RC(weft_read(cl, pool, obj, cur, sizeof(cur), 0, &n), 0);
	CHECK(n == 4 && !memcmp(cur, a.rc == 0 ? "AAAA" : "BBBB", 4), "content after the race");
	CHECK_RC(weft_remove(cl, pool, obj), 0);
	printf("ok: compare-and-write: one of two racing swaps wins\n");
}

/*
 * Wait (bounded, 20 s) until every OSD of the map has at least epoch: an OSD
 * that has not seen a blocklist yet may still serve the fenced client (a
 * write the new holder will see; docs/volumes.md, "The limits").
 */
static void osds_wait_epoch(uint32_t epoch)
{
	const struct mon_map *map = weft_debug_map(cl2);
	char json[16384];

	for (uint32_t id = 0; id < map->max_osd; id++) {
		int tries = 0;

		if (!(map->osds[id].state & MON_OSD_UP))
			continue;
		for (;; tries++) {
			const char *p = NULL;

			if (weft_debug_osd_perf(cl2, id, json, sizeof(json)) == 0)
				p = strstr(json, "\"map_epoch\": ");
			if (p != NULL && strtoul(p + 13, NULL, 10) >= epoch)
				break;
			CHECK(tries < 200, "osd.%u never reached map epoch %u", id, epoch);
			weft_poll(cl2, 100);
		}
	}
}

/*
 * Breaking a lock blocklists the holder's client instance, which fences its
 * whole cluster handle: the holders here get handles of their own (ha, hb),
 * so cl and cl2 stay usable for the other cases.
 */
static void case_exclusive(void)
{
	struct weft_cluster *ha, *hb;
	struct weft_vol *a, *b, *c;
	struct weft_vol_lock_info li;
	uint8_t buf[4096] = {1};
	char holder_a[sizeof(li.holder)], inst[24];

	CHECK_RC(weft_connect(conf_path, "client.admin", &ha), 0);
	CHECK_RC(weft_connect(conf_path, "client.admin", &hb), 0);
	CHECK(weft_instance(ha) != weft_instance(hb) && weft_instance(ha) != weft_instance(cl),
	      "two cluster handles, one instance %016" PRIx64, weft_instance(ha));
	CHECK_RC(weft_vol_create(cl, pool, "excl", 1 << 20, NULL), 0);
	CHECK_RC(weft_vol_lock_get(cl, pool, "excl", &li), 0);
	CHECK(li.holder[0] == '\0' && li.epoch == 0, "new volume's lock: '%s'", li.holder);
	CHECK_RC(weft_vol_open(ha, pool, "excl", WEFT_VOL_FORCE, &a), -EINVAL);
	CHECK_RC(weft_vol_open(ha, pool, "excl", WEFT_VOL_EXCLUSIVE, &a), 0);
	CHECK_RC(weft_vol_lock_get(cl2, pool, "excl", &li), 0);
	CHECK(li.holder[0] != '\0' && li.epoch == 1 && li.since > 0, "held lock: '%s'", li.holder);
	snprintf(holder_a, sizeof(holder_a), "%s", li.holder);
	CHECK(strstr(holder_a, "client.admin@") == holder_a, "holder names the client: %s",
	      holder_a);
	snprintf(inst, sizeof(inst), "/i=%016" PRIx64, weft_instance(ha));
	CHECK(strstr(holder_a, inst) != NULL, "holder names its instance (%s): %s", inst, holder_a);
	/* another client: exclusive and shared-write opens fail, read-only works */
	CHECK_RC(weft_vol_open(cl2, pool, "excl", WEFT_VOL_EXCLUSIVE, &b), -EBUSY);
	CHECK_RC(weft_vol_open(cl2, pool, "excl", 0, &b), -EBUSY);
	/* a second handle in the same process is another holder */
	CHECK_RC(weft_vol_open(ha, pool, "excl", WEFT_VOL_EXCLUSIVE, &b), -EBUSY);
	CHECK_RC(weft_vol_open(cl2, pool, "excl", WEFT_VOL_RDONLY, &b), 0);
	CHECK_RC(weft_vol_close(b), 0);
	CHECK_RC(weft_vol_remove(cl2, pool, "excl"), -EBUSY);
	CHECK_RC(weft_vol_write(a, buf, sizeof(buf), 0), 0);
	CHECK_RC(weft_vol_flush(a), 0);
	CHECK_RC(weft_vol_resize(a, 2 << 20), 0);
	printf("ok: exclusive open: a second writer gets -EBUSY while the first holds it\n");

	/* the holder "dies": break it (a wrong holder name breaks, and fences, nothing) */
	CHECK_RC(weft_vol_lock_break(cl2, pool, "excl", "client.x@nowhere:1/0"), -ESTALE);
	CHECK(!mon_map_blocklisted(weft_debug_map(cl2), weft_instance(ha)),
	      "a wrong break fenced a");
	CHECK_RC(weft_vol_lock_break(cl2, pool, "excl", holder_a), 0);
	/* the breaker waited for the epoch that fences a */
	CHECK(mon_map_blocklisted(weft_debug_map(cl2), weft_instance(ha)), "break did not fence a");
	osds_wait_epoch(weft_map_epoch(cl2));
	CHECK_RC(weft_vol_lock_get(cl2, pool, "excl", &li), 0);
	CHECK(li.holder[0] == '\0' && li.epoch == 2, "after break: '%s' epoch %" PRIu64, li.holder,
	      li.epoch);
	CHECK_RC(weft_vol_lock_break(cl2, pool, "excl", NULL), 0); /* already free */
	CHECK_RC(weft_vol_open(hb, pool, "excl", WEFT_VOL_EXCLUSIVE, &b), 0);
	/* the old holder is refused at its next op, and cannot write or flush any more */
	CHECK_RC(weft_vol_write(a, buf, sizeof(buf), 0), -ENOLCK);
	CHECK(weft_blocklisted(ha), "a's handle does not know it is fenced");
	CHECK_RC(weft_vol_flush(a), -ENOLCK);
	CHECK_RC(weft_vol_resize(a, 1 << 20), -ENOLCK);
	CHECK_RC(weft_vol_close(a), -ENOLCK); /* and its close leaves the new lock alone */
	CHECK_RC(weft_vol_lock_get(cl, pool, "excl", &li), 0);
	CHECK(li.holder[0] != '\0' && strcmp(li.holder, holder_a) != 0 && li.epoch == 3,
	      "lock after the old holder closed: '%s' epoch %" PRIu64, li.holder, li.epoch);
	/* --force: take it over from a live holder (fencing hb) */
	CHECK_RC(weft_vol_open(cl, pool, "excl", WEFT_VOL_EXCLUSIVE | WEFT_VOL_FORCE, &c), 0);
	osds_wait_epoch(weft_map_epoch(cl));
	CHECK_RC(weft_vol_write(b, buf, sizeof(buf), 0), -ENOLCK);
	CHECK_RC(weft_vol_flush(b), -ENOLCK);
	CHECK_RC(weft_vol_close(b), -ENOLCK);
	CHECK_RC(weft_vol_write(c, buf, sizeof(buf), 0), 0);
	CHECK_RC(weft_vol_flush(c), 0);
	CHECK_RC(weft_vol_close(c), 0);
	CHECK_RC(weft_vol_lock_get(cl, pool, "excl", &li), 0);
	CHECK(li.holder[0] == '\0', "close released the lock: '%s'", li.holder);
	CHECK_RC(weft_vol_remove(cl, pool, "excl"), 0);
	weft_disconnect(ha);
	weft_disconnect(hb);
	printf("ok: lock break: the old holder is fenced (-ENOLCK), the new one keeps the lock\n");
}

static void case_corrupt(void)
{
	char obj[PROTO_OBJ_NAME_MAX + 1];
	uint8_t raw[VOL_HDR_MAX], bad[VOL_HDR_MAX];
	struct vol_hdr h;
	struct weft_vol *v;
	size_t len = 0;

	CHECK_RC(weft_vol_create(cl, pool, "corrupt", 1 << 20, NULL), 0);
	vol_hdr_obj_name("corrupt", obj, sizeof(obj));
	CHECK_RC(weft_read(cl, pool, obj, raw, sizeof(raw), 0, &len), 0);
	/* one flipped bit */
	memcpy(bad, raw, len);
	bad[20] ^= 0x10;
	CHECK_RC(weft_write_full(cl, pool, obj, bad, len), 0);
	CHECK_RC(weft_vol_open(cl, pool, "corrupt", 0, &v), -WEFT_E_CORRUPT);
	/* cut short, and empty-but-present, and garbage */
	CHECK_RC(weft_write_full(cl, pool, obj, raw, len / 2), 0);
	CHECK_RC(weft_vol_open(cl, pool, "corrupt", WEFT_VOL_RDONLY, &v), -WEFT_E_CORRUPT);
	CHECK_RC(weft_write_full(cl, pool, obj, "xyz", 3), 0);
	CHECK_RC(weft_vol_open(cl, pool, "corrupt", 0, &v), -WEFT_E_CORRUPT);
	memset(bad, 0x5a, sizeof(bad));
	CHECK_RC(weft_write_full(cl, pool, obj, bad, sizeof(bad)), 0);
	CHECK_RC(weft_vol_open(cl, pool, "corrupt", 0, &v), -WEFT_E_CORRUPT);
	/* larger than any header */
	{
		static uint8_t big[8192];

		CHECK_RC(weft_write_full(cl, pool, obj, big, sizeof(big)), 0);
		CHECK_RC(weft_vol_open(cl, pool, "corrupt", 0, &v), -WEFT_E_CORRUPT);
	}
	/* a well-formed header of a newer format, and one with an unknown feature */
	CHECK_RC(vol_hdr_decode(raw, len, "test", &h), 0);
	h.format = 2;
	CHECK_RC(vol_hdr_encode(&h, bad, sizeof(bad), &len), 0);
	CHECK_RC(weft_write_full(cl, pool, obj, bad, len), 0);
	CHECK_RC(weft_vol_open(cl, pool, "corrupt", 0, &v), -ENOTSUP);
	h.format = 1;
	h.features = 1ull << 40;
	CHECK_RC(vol_hdr_encode(&h, bad, sizeof(bad), &len), 0);
	CHECK_RC(weft_write_full(cl, pool, obj, bad, len), 0);
	CHECK_RC(weft_vol_open(cl, pool, "corrupt", 0, &v), -ENOTSUP);
	/* another volume's header under this name */
	h.features = 0;
	snprintf(h.name, sizeof(h.name), "other");
	CHECK_RC(vol_hdr_encode(&h, bad, sizeof(bad), &len), 0);
	CHECK_RC(weft_write_full(cl, pool, obj, bad, len), 0);
	CHECK_RC(weft_vol_open(cl, pool, "corrupt", 0, &v), -WEFT_E_CORRUPT);
	/* restored, it opens again */
	snprintf(h.name, sizeof(h.name), "corrupt");
	CHECK_RC(vol_hdr_encode(&h, bad, sizeof(bad), &len), 0);
	CHECK_RC(weft_write_full(cl, pool, obj, bad, len), 0);
	CHECK_RC(weft_vol_open(cl, pool, "corrupt", 0, &v), 0);
	CHECK_RC(weft_vol_close(v), 0);
	/* a corrupt lock: shared opens and the lock calls report it, a forced open replaces it */
	vol_lock_obj_name(h.id, obj, sizeof(obj));
	CHECK_RC(weft_write_full(cl, pool, obj, "garbage!garbage!", 16), 0);
	CHECK_RC(weft_vol_open(cl, pool, "corrupt", 0, &v), -WEFT_E_CORRUPT);
	CHECK_RC(weft_vol_open(cl, pool, "corrupt", WEFT_VOL_EXCLUSIVE, &v), -WEFT_E_CORRUPT);
	CHECK_RC(weft_vol_open(cl, pool, "corrupt", WEFT_VOL_EXCLUSIVE | WEFT_VOL_FORCE, &v), 0);
	CHECK_RC(weft_vol_close(v), 0);
	CHECK_RC(weft_vol_remove(cl, pool, "corrupt"), 0);
	printf("ok: corrupt, short, foreign and newer headers are refused cleanly\n");
}

static int list_cb(void *arg, const char *name)
{
	char *out = arg;

	strcat(out, name);
	strcat(out, " ");
	return 0;
}

static void case_list_remove(void)
{
	char names[512] = "";
	struct weft_vol_opts o = {.object_size = 4096};
	struct weft_vol_info info;
	struct weft_vol *v;
	uint8_t buf[3 * 4096];

	CHECK_RC(weft_vol_create(cl, pool, "b-vol", 1 << 20, NULL), 0);
	CHECK_RC(weft_vol_create(cl, pool, "a-vol", 40960, &o), 0);
	CHECK_RC(weft_vol_list(cl, pool, list_cb, names), 0);
	CHECK(!strcmp(names, "a-vol b-vol io "), "list: '%s'", names);
	CHECK_RC(weft_vol_open(cl, pool, "a-vol", 0, &v), 0);
	fill(buf, sizeof(buf));
	CHECK_RC(weft_vol_write(v, buf, sizeof(buf), 4000), 0);
	CHECK_RC(weft_vol_stat(v, &info), 0);
	CHECK_RC(weft_vol_close(v), 0);
	CHECK(obj_exists(info.id, 0, NULL) && obj_exists(info.id, 3, NULL), "written objects");
	CHECK_RC(weft_vol_remove(cl, pool, "a-vol"), 0);
	for (uint64_t i = 0; i < 10; i++)
		CHECK(!obj_exists(info.id, i, NULL), "object %" PRIu64 " survived remove", i);
	CHECK_RC(weft_vol_open(cl, pool, "a-vol", 0, &v), -ENOENT);
	CHECK_RC(weft_vol_remove(cl, pool, "a-vol"), -ENOENT);
	names[0] = '\0';
	CHECK_RC(weft_vol_list(cl, pool, list_cb, names), 0);
	CHECK(!strcmp(names, "b-vol io "), "list after remove: '%s'", names);
	/* same name again: a new id, none of the old data */
	CHECK_RC(weft_vol_create(cl, pool, "a-vol", 40960, &o), 0);
	CHECK_RC(weft_vol_open(cl, pool, "a-vol", 0, &v), 0);
	CHECK_RC(weft_vol_read(v, buf, sizeof(buf), 4000, NULL), 0);
	for (size_t i = 0; i < sizeof(buf); i++)
		CHECK(buf[i] == 0, "re-created volume shows old data at %zu", i);
	CHECK_RC(weft_vol_close(v), 0);
	CHECK_RC(weft_vol_remove(cl, pool, "a-vol"), 0);
	CHECK_RC(weft_vol_remove(cl, pool, "b-vol"), 0);
	printf("ok: list in name order, remove deletes data and header\n");
}

/* Default 4 MiB objects, ops larger than osd_max_op_size. */
static void case_big(void)
{
	size_t big = (9u << 20) + 333, n = 0;
	uint64_t off = (4u << 20) - 4096 - 17;
	uint8_t *w = malloc(big), *r = malloc(big);
	struct weft_vol *v;

	CHECK_RC(weft_vol_create(cl, pool, "big", 64ull << 30, NULL), 0);
	CHECK_RC(weft_vol_open(cl, pool, "big", WEFT_VOL_EXCLUSIVE, &v), 0);
	fill(w, big);
	CHECK_RC(weft_vol_write(v, w, big, off), 0);
	CHECK_RC(weft_vol_read(v, r, big, off, &n), 0);
	CHECK(n == big && !memcmp(w, r, big), "9 MiB across 4 MiB objects");
	CHECK_RC(weft_vol_read(v, r, 4096, (64ull << 30) - 4096, &n), 0); /* far end: sparse */
	CHECK(n == 4096 && r[0] == 0 && r[4095] == 0, "end of a 64 GiB volume");
	CHECK_RC(weft_vol_close(v), 0);
	CHECK_RC(weft_vol_remove(cl, pool, "big"), 0);
	free(w);
	free(r);
	printf("ok: 9 MiB I/O across default 4 MiB objects, sparse 64 GiB volume\n");
}

/*
 * Every copy of name equals want[0, len): pool size 3 on 3 OSDs, or, with
 * WEFT_TEST_OSDS=N (tests/test_multihost.sh: 6 OSDs), exactly 3 of the N
 * hold it and the others have none.
 */
static void check_copies(const char *name, const uint8_t *want, size_t len)
{
	uint32_t nosd = getenv("WEFT_TEST_OSDS") ? (uint32_t)atoi(getenv("WEFT_TEST_OSDS")) : 3;
	uint8_t *r = malloc(len + 1);
	unsigned int copies = 0;

	for (uint32_t osd = 0; osd < nosd; osd++) {
		size_t n = 0;
		int rc = weft_debug_read_local(cl, osd, pool, name, r, len + 1, 0, &n);

		if (rc == -ENOENT && nosd > 3)
			continue; /* not in this object's acting set */
		CHECK_RC(rc, 0);
		CHECK(n == len && !memcmp(r, want, len), "osd.%u's copy of %s (%zu of %zu bytes)",
		      osd, name, n, len);
		copies++;
	}
	CHECK(copies == 3, "%s: %u copies, want 3", name, copies);
	free(r);
}

/* The object zero op: no payload, any length, replicated, extends like a write. */
static void case_zero(void)
{
	enum { LEN = 256 << 10 };
	uint8_t *w = malloc(LEN + 8192), *r = malloc(LEN + 8192);
	uint64_t size = 0;
	size_t n = 0;

	fill(w, LEN);
	CHECK_RC(weft_write_full(cl, pool, "zobj", w, LEN), 0);
	/* unaligned both ends, covering whole 4 KiB units in between */
	CHECK_RC(weft_zero(cl, pool, "zobj", 4096 + 100, 100000), 0);
	memset(w + 4096 + 100, 0, 100000);
	/* past the end: extends the object, the gap reads as zeros */
	CHECK_RC(weft_zero(cl, pool, "zobj", LEN + 4096, 4096), 0);
	memset(w + LEN, 0, 8192);
	CHECK_RC(weft_stat(cl, pool, "zobj", &size, NULL), 0);
	CHECK(size == LEN + 8192, "size %" PRIu64 " after zero past the end", size);
	CHECK_RC(weft_read(cl, pool, "zobj", r, LEN + 8192, 0, &n), 0);
	CHECK(n == LEN + 8192 && !memcmp(r, w, n), "zeroed object reads back");
	check_copies("zobj", w, LEN + 8192);
	/* a missing object: created, all zeros; far larger than osd_max_op_size */
	CHECK_RC(weft_zero(cl, pool, "zmissing", 0, 1ull << 30), 0);
	CHECK_RC(weft_stat(cl, pool, "zmissing", &size, NULL), 0);
	CHECK(size == 1ull << 30, "size %" PRIu64 " of a zeroed new object", size);
	CHECK_RC(weft_read(cl, pool, "zmissing", r, 8192, (1ull << 30) - 8192, &n), 0);
	CHECK(n == 8192 && r[0] == 0 && r[8191] == 0, "a zeroed new object reads zeros");
	CHECK_RC(weft_zero(cl, pool, "zobj", 0, WEFT_OBJECT_MAX + 1), -E2BIG);
	CHECK_RC(weft_remove(cl, pool, "zobj"), 0);
	CHECK_RC(weft_remove(cl, pool, "zmissing"), 0);
	free(w);
	free(r);
	printf("ok: zero op: ranges inside and past the end, a new 1 GiB object, 3 equal copies\n");
}

/* Extents of v over [off, off+len) as "D:len H:len ..." (max 64 extents, every call's map joined). */
static void map_string(struct weft_vol *v, uint64_t off, uint64_t len, char *out, size_t cap)
{
	struct weft_vol_extent ext[64];
	uint64_t pos = off, end = off + len;
	size_t o = 0;

	out[0] = '\0';
	while (pos < end) {
		unsigned int n = 0;

		CHECK_RC(weft_vol_extents(v, pos, end - pos, ext, 64, &n), 0);
		CHECK(n >= 1 && ext[0].off == pos, "map at %" PRIu64 ": %u extents, first at %" PRIu64,
		      pos, n, n ? ext[0].off : 0);
		for (unsigned int i = 0; i < n && pos < end; i++) {
			uint64_t l = ext[i].len;

			CHECK(ext[i].off == pos && l > 0, "extent %u at %" PRIu64 " (want %" PRIu64 ")", i,
			      ext[i].off, pos);
			if (l > end - pos)
				l = end - pos;
			o += (size_t)snprintf(out + o, cap - o, "%s%c:%" PRIu64, o ? " " : "",
					      (ext[i].flags & WEFT_VOL_EXTENT_HOLE) ? 'H' : 'D', l);
			pos += l;
		}
	}
}

/*
 * write_zeroes keeps objects, discard frees them; the allocation map follows
 * the data objects: missing = hole, past an object's stored size = hole.
 */
static void case_map(void)
{
	enum { MOS = 64 << 10, MSIZE = 16 * MOS + 1000 };
	struct weft_vol_opts o = {.object_size = MOS};
	struct weft_vol_extent ext[4];
	uint8_t *shadow = calloc(1, MSIZE), *w = malloc(MSIZE);
	struct weft_vol_info info;
	char got[512], want[512];
	struct weft_vol *v;
	unsigned int n = 0;
	uint64_t osz = 0;

	CHECK_RC(weft_vol_create(cl, pool, "map", MSIZE, &o), 0);
	CHECK_RC(weft_vol_open(cl, pool, "map", WEFT_VOL_EXCLUSIVE, &v), 0);
	CHECK_RC(weft_vol_stat(v, &info), 0);
	map_string(v, 0, MSIZE, got, sizeof(got));
	snprintf(want, sizeof(want), "H:%d", MSIZE);
	CHECK(!strcmp(got, want), "fresh volume: %s, want %s", got, want);
	/* object 1 written in its first 10,000 bytes; object 3 fully; the last (1000 B) fully */
	fill(w, MSIZE);
	CHECK_RC(weft_vol_write(v, w, 10000, MOS), 0);
	memcpy(shadow + MOS, w, 10000);
	CHECK_RC(weft_vol_write(v, w, MOS, 3 * MOS), 0);
	memcpy(shadow + 3 * MOS, w, MOS);
	CHECK_RC(weft_vol_write(v, w, 1000, 16 * MOS), 0);
	memcpy(shadow + 16 * MOS, w, 1000);
	map_string(v, 0, MSIZE, got, sizeof(got));
	snprintf(want, sizeof(want), "H:%d D:10000 H:%d D:%d H:%d D:1000", MOS, 2 * MOS - 10000, MOS,
		 12 * MOS);
	CHECK(!strcmp(got, want), "after writes: %s, want %s", got, want);
	/* a map from inside an object, and one limited to 2 extents */
	map_string(v, MOS + 5000, 3 * MOS, got, sizeof(got));
	snprintf(want, sizeof(want), "D:5000 H:%d D:%d H:5000", 2 * MOS - 10000, MOS);
	CHECK(!strcmp(got, want), "map from inside object 1: %s, want %s", got, want);
	CHECK_RC(weft_vol_extents(v, 0, MSIZE, ext, 2, &n), 0);
	CHECK(n == 2 && ext[0].off == 0 && ext[0].len == MOS && ext[1].len == 10000,
	      "max 2: %u extents", n);
	/* write_zeroes over object 3's middle and a never-written object 5: both become data */
	CHECK_RC(weft_vol_write_zeroes(v, 3 * MOS + 4096, 8192), 0);
	memset(shadow + 3 * MOS + 4096, 0, 8192);
	CHECK_RC(weft_vol_write_zeroes(v, 5 * MOS, MOS), 0);
	CHECK(obj_exists(info.id, 5, &osz) && osz == MOS, "write_zeroes created object 5 (%" PRIu64 ")",
	      osz);
	map_string(v, 3 * MOS, 3 * MOS, got, sizeof(got));
	snprintf(want, sizeof(want), "D:%d H:%d D:%d", MOS, MOS, MOS);
	CHECK(!strcmp(got, want), "after write_zeroes: %s, want %s", got, want);
	/* discard of object 3 whole and object 1's tail: removed / truncated, holes again */
	CHECK_RC(weft_vol_discard(v, 3 * MOS, MOS), 0);
	memset(shadow + 3 * MOS, 0, MOS);
	CHECK(!obj_exists(info.id, 3, NULL), "discard left object 3");
	CHECK_RC(weft_vol_discard(v, MOS + 4000, MOS - 4000), 0);
	memset(shadow + MOS + 4000, 0, MOS - 4000);
	map_string(v, 0, 6 * MOS, got, sizeof(got));
	snprintf(want, sizeof(want), "H:%d D:4000 H:%d D:%d", MOS, 4 * MOS - 4000, MOS);
	CHECK(!strcmp(got, want), "after discards: %s, want %s", got, want);
	verify_all(v, shadow, MSIZE, "map");
	/* bad arguments */
	CHECK_RC(weft_vol_extents(v, MSIZE, 1, ext, 4, &n), -EINVAL);
	CHECK_RC(weft_vol_extents(v, 0, MSIZE, ext, 0, &n), -EINVAL);
	CHECK_RC(weft_vol_write_zeroes(v, MSIZE - 10, 11), -EINVAL);
	CHECK_RC(weft_vol_close(v), 0);
	/* read-only handles map too, and cannot write zeros */
	CHECK_RC(weft_vol_open(cl, pool, "map", WEFT_VOL_RDONLY, &v), 0);
	CHECK_RC(weft_vol_extents(v, 16 * MOS, 1000, ext, 4, &n), 0);
	CHECK(n == 1 && ext[0].flags == 0 && ext[0].len == 1000, "read-only map of the last object");
	CHECK_RC(weft_vol_write_zeroes(v, 0, 10), -EROFS);
	CHECK_RC(weft_vol_close(v), 0);
	CHECK_RC(weft_vol_remove(cl, pool, "map"), 0);
	free(shadow);
	free(w);
	printf("ok: allocation map: holes, partial objects, write_zeroes keeps, discard frees\n");
}

int main(int argc, char **argv)
{
	const char *conf = NULL, *pname = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "c:p:")) != -1) {
		if (opt == 'c')
			conf = optarg;
		else if (opt == 'p')
			pname = optarg;
		else
			return 2;
	}
	if (!conf || !pname) {
		fprintf(stderr, "usage: test_vol_io -c CONF -p POOL [SEED]\n");
		return 2;
	}
	if (optind < argc)
		rng_state = strtoull(argv[optind], NULL, 0) | 1;
	conf_path = conf;
	CHECK_RC(weft_connect(conf, "client.admin", &cl), 0);
	CHECK_RC(weft_connect(conf, "client.admin", &cl2), 0);
	CHECK_RC(weft_pool_lookup(cl, pname, &pool), 0);
	case_create_args();
	case_cas();
	case_zero();
	case_map();
	case_io();
	case_concurrent();
	case_exclusive();
	case_corrupt();
	case_list_remove();
	case_big();
	CHECK_RC(weft_vol_remove(cl, pool, "io"), 0);
	weft_disconnect(cl2);
	weft_disconnect(cl);
	printf("PASS\n");
	return 0;
}
