/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers for the store tests: a temp dir with data/wal files and a db dir. */
#ifndef WEFT_TESTS_STORE_TEST_UTIL_H
#define WEFT_TESTS_STORE_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osd/store/store.h"

struct stu {
	char dir[256], data[300], wal[300], db[300];
	struct store_opts o;
};

static inline void stu_init(struct stu *u, bool sep_wal)
{
	snprintf(u->dir, sizeof(u->dir), "%s/weft-store-XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(u->dir))
		abort();
	snprintf(u->data, sizeof(u->data), "%s/data", u->dir);
	snprintf(u->wal, sizeof(u->wal), "%s/wal", u->dir);
	snprintf(u->db, sizeof(u->db), "%s/db", u->dir);
	store_opts_init(&u->o);
	u->o.data_path = u->data;
	u->o.wal_path = sep_wal ? u->wal : "";
	u->o.db_path = u->db;
	u->o.data_size = 64ull << 20;
	u->o.wal_size = 2ull << 20;
	u->o.osd_id = 7;
}

static inline void stu_cleanup(struct stu *u)
{
	char cmd[400];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", u->dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", u->dir);
}

/* Submit and wait for the commit callback; returns the callback's rc or a submit error. */
static inline void stu_cb(void *arg, int rc)
{
	int *p = arg;

	*p = rc;
}

static inline int stu_commit(struct store *st, struct store_tx *tx)
{
	int done = 1, rc = store_tx_submit(st, tx, stu_cb, &done);

	if (rc != 0) {
		store_tx_destroy(tx);
		return rc;
	}
	while (done == 1) {
		rc = store_wait(st);
		if (rc < 0)
			return rc;
	}
	return done;
}

#endif
