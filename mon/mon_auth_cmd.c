/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The auth database in the monitor (mon_auth.h): its Raft entries, the
 * `weft auth ...` commands (reads from this mon's applied state, writes as
 * leader jobs that propose an auth entry), the seed of mon. and
 * client.admin written by --mkfs and proposed by the first leader, and the
 * removal of osd.N's key after `osd purge`.
 */
#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>

#include "auth/keyring.h"
#include "common/log.h"
#include "mon/mon_priv.h"

static const char *const mon_auth_writes[] = {
	"auth get-or-create", "auth caps", "auth rm", "auth del", "auth rotate", NULL,
};

static uint64_t mon_auth_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

bool mon_auth_is_write(const char *prefix)
{
	for (unsigned int i = 0; prefix != NULL && mon_auth_writes[i] != NULL; i++)
		if (!strcmp(prefix, mon_auth_writes[i]))
			return true;
	return false;
}

/* ------------------------------------------------------------ raft entry */

int mon_auth_fsm_apply(struct mon *mon, const uint8_t *p, size_t len)
{
	static const char *const what[] = {"", "added", "caps changed for", "removed",
					   "rotated the key of"};
	struct mon_auth_op op;
	struct proto_err err;
	size_t plen;
	int rc;

	plen = len >= 8 ? (size_t)p[4] | (size_t)p[5] << 8 | (size_t)p[6] << 16 |
				  (size_t)p[7] << 24
			: SIZE_MAX;
	if (plen > len - 8) {
		log_error("mon", "%s: refusing an auth log entry of %zu bytes: bad length",
			  mon->name, len);
		return -EBADMSG;
	}
	rc = mon_auth_op_decode(p + 8, plen, &err, &op);
	if (rc != 0) {
		log_error("mon", "%s: refusing undecodable auth log entry: %s", mon->name, err.msg);
		return rc;
	}
	rc = mon_auth_apply(&mon->auth, &op);
	if (rc == 0)
		log_info("mon", "%s: auth: %s %s (%u entities)", mon->name, what[op.kind], op.entity,
			 mon->auth.count);
	else
		log_info("mon", "%s: auth: %s %s refused: %s", mon->name, what[op.kind] ,
			 op.entity, strerror(-rc));
	auth_key_wipe(&op.key);
	return rc;
}

int mon_auth_job_entry(struct mon *mon, struct mon_job *job, struct raft_buffer *rb)
{
	struct mon_auth_op op = {0};
	void *buf;
	size_t len;
	int rc;

	op.stamp_us = mon_auth_now_us();
	rc = job->build_auth(mon, job, &op);
	if (rc != 0)
		goto out;
	rc = mon_auth_op_encode(&op, &buf, &len);
	if (rc != 0)
		goto out;
	/* [tag][u32 len][op][zero padding to 8] (raft's batches want 8-byte multiples). */
	rb->len = (8 + len + 7) & ~(size_t)7;
	rb->base = raft_calloc(1, rb->len);
	if (rb->base == NULL) {
		rc = -ENOMEM;
	} else {
		uint8_t *p = rb->base;

		for (int i = 0; i < 4; i++) {
			p[i] = (uint8_t)(MON_ENTRY_TAG_AUTH >> (8 * i));
			p[4 + i] = (uint8_t)(len >> (8 * i));
		}
		memcpy(p + 8, buf, len);
	}
	OPENSSL_cleanse(buf, len);
	free(buf);
out:
	auth_key_wipe(&op.key);
	return rc;
}

/* ---------------------------------------------------------------- output */

static json_t *mon_auth_caps_json(const struct auth_caps *caps)
{
	char text[AUTH_CAPS_TEXT_MAX * 2];
	json_t *o = json_object();

	for (int s = 0; s < AUTH_SVC_COUNT; s++) {
		if (!caps->set[s] || auth_caps_format(caps, (enum auth_svc)s, text, sizeof(text)) != 0)
			continue;
		json_object_set_new(o, auth_svc_name((enum auth_svc)s), json_string(text));
	}
	return o;
}

static json_t *mon_auth_ent_json(const char *entity, const struct auth_key *key,
				 const struct auth_caps *caps, uint64_t old_until_us)
{
	char b64[AUTH_KEY_B64_LEN + 1];
	json_t *o;

	auth_key_encode(key, b64);
	o = json_pack("{s:s, s:s, s:o}", "entity", entity, "key", b64, "caps",
		      mon_auth_caps_json(caps));
	OPENSSL_cleanse(b64, sizeof(b64));
	if (old_until_us > mon_auth_now_us())
		json_object_set_new(o, "previous_key_valid_until",
				    json_integer((json_int_t)(old_until_us / 1000000)));
	return o;
}

static void mon_auth_job_out(struct mon_job *job, json_t *o)
{
	char *text = json_dumps(o, JSON_COMPACT);

	if (text != NULL && strlen(text) < sizeof(job->out))
		snprintf(job->out, sizeof(job->out), "%s", text);
	if (text != NULL) {
		OPENSSL_cleanse(text, strlen(text));
		free(text);
	}
	json_decref(o);
}

/* ------------------------------------------------------------------ args */

static int mon_auth_entity_arg(struct mon_job *job, json_t *root, char *entity)
{
	const char *e = json_string_value(json_object_get(root, "entity"));
	struct auth_entity ent;
	char why[200];

	if (e == NULL) {
		mon_job_refuse(job, "no entity given");
		return -EINVAL;
	}
	if (auth_entity_parse(e, &ent, why, sizeof(why)) != 0) {
		mon_job_refuse(job, "%s", why);
		return -EINVAL;
	}
	memcpy(entity, ent.name, AUTH_ENTITY_MAX);
	return 0;
}

/* caps: a JSON array of strings, SERVICE CAPS pairs (the CLI's words). */
static int mon_auth_caps_arg(struct mon_job *job, json_t *root, struct auth_caps *caps_out)
{
	json_t *a = json_object_get(root, "caps");
	char *argv[2 * AUTH_SVC_COUNT];
	char why[300];
	size_t n;

	if (a == NULL) {
		memset(caps_out, 0, sizeof(*caps_out));
		return 0;
	}
	n = json_is_array(a) ? json_array_size(a) : SIZE_MAX;
	if (n > 2 * AUTH_SVC_COUNT) {
		mon_job_refuse(job, "caps: expected at most %d SERVICE 'CAPS' pairs",
			       AUTH_SVC_COUNT);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		argv[i] = (char *)json_string_value(json_array_get(a, i));
		if (argv[i] == NULL) {
			mon_job_refuse(job, "caps: element %zu is not a string", i);
			return -EINVAL;
		}
	}
	if (auth_caps_parse_args(caps_out, (int)n, argv, why, sizeof(why)) != 0) {
		mon_job_refuse(job, "%s", why);
		return -EINVAL;
	}
	return 0;
}

static bool mon_auth_caps_same(const struct auth_caps *a, const struct auth_caps *b)
{
	char ta[AUTH_CAPS_TEXT_MAX * 2], tb[AUTH_CAPS_TEXT_MAX * 2];

	for (int s = 0; s < AUTH_SVC_COUNT; s++) {
		if (a->set[s] != b->set[s])
			return false;
		if (auth_caps_format(a, (enum auth_svc)s, ta, sizeof(ta)) != 0 ||
		    auth_caps_format(b, (enum auth_svc)s, tb, sizeof(tb)) != 0 || strcmp(ta, tb))
			return false;
	}
	return true;
}

/* ------------------------------------------------------------------ jobs */

int mon_auth_job(struct mon *mon, struct mon_job *job, struct mon_auth_op *op)
{
	json_t *root = json_loads(job->json, 0, NULL);
	const char *prefix = json_string_value(json_object_get(root, "prefix"));
	const struct mon_auth_ent *e;
	int rc;

	rc = mon_auth_entity_arg(job, root, op->entity);
	if (rc != 0)
		goto out;
	e = mon_auth_find(&mon->auth, op->entity);
	if (!strcmp(prefix, "auth get-or-create") || !strcmp(prefix, "auth caps")) {
		rc = mon_auth_caps_arg(job, root, &op->caps);
		if (rc != 0)
			goto out;
	}
	if (e == NULL && strcmp(prefix, "auth get-or-create") != 0) {
		mon_job_refuse(job, "entity %s does not exist", op->entity);
		rc = -ENOENT;
		goto out;
	}
	if (!strcmp(prefix, "auth get-or-create")) {
		if (e != NULL) {
			if (!mon_auth_caps_same(&e->caps, &op->caps)) {
				mon_job_refuse(job, "entity %s exists with other caps; change them "
					       "with 'weft auth caps'", op->entity);
				rc = -EEXIST;
				goto out;
			}
			mon_auth_job_out(job, mon_auth_ent_json(e->entity, &e->key, &e->caps,
								e->old_until_us));
			rc = 1; /* nothing to change: answer with what is there */
			goto out;
		}
		op->kind = MON_AUTH_OP_ADD;
		rc = auth_key_generate(&op->key);
		if (rc == 0)
			mon_auth_job_out(job, mon_auth_ent_json(op->entity, &op->key, &op->caps, 0));
	} else if (!strcmp(prefix, "auth caps")) {
		op->kind = MON_AUTH_OP_CAPS;
		if (mon_auth_caps_same(&e->caps, &op->caps))
			rc = 1;
		mon_auth_job_out(job, json_pack("{s:s, s:o}", "entity", op->entity, "caps",
						mon_auth_caps_json(&op->caps)));
	} else if (!strcmp(prefix, "auth rm") || !strcmp(prefix, "auth del")) {
		op->kind = MON_AUTH_OP_RM;
		mon_auth_job_out(job, json_pack("{s:s, s:b}", "entity", op->entity, "removed", 1));
	} else { /* auth rotate */
		op->kind = MON_AUTH_OP_ROTATE;
		op->grace_us = MON_AUTH_ROTATE_GRACE_US;
		rc = auth_key_generate(&op->key);
		if (rc == 0)
			mon_auth_job_out(job, mon_auth_ent_json(op->entity, &op->key, &e->caps,
								op->stamp_us + op->grace_us));
	}
out:
	json_decref(root);
	return rc;
}

/* ------------------------------------------------------------------ reads */

static int mon_auth_cmp(const void *a, const void *b)
{
	const struct mon_auth_ent *const *x = a, *const *y = b;

	return strcmp((*x)->entity, (*y)->entity);
}

json_t *mon_auth_read(struct mon *mon, const char *prefix, json_t *root, int *rc_out, char *err,
		      size_t errcap)
{
	const char *name = json_string_value(json_object_get(root, "entity"));
	const struct mon_auth_ent *e;
	char b64[AUTH_KEY_B64_LEN + 1];
	json_t *out;

	*rc_out = 0;
	if (!strcmp(prefix, "auth ls")) {
		const struct mon_auth_ent **v = calloc(mon->auth.count + 1, sizeof(*v));
		json_t *a = json_array();

		if (v == NULL) {
			*rc_out = -ENOMEM;
			snprintf(err, errcap, "out of memory");
			json_decref(a);
			return NULL;
		}
		for (uint32_t i = 0; i < mon->auth.count; i++)
			v[i] = &mon->auth.ents[i];
		qsort(v, mon->auth.count, sizeof(*v), mon_auth_cmp);
		for (uint32_t i = 0; i < mon->auth.count; i++)
			json_array_append_new(a, mon_auth_ent_json(v[i]->entity, &v[i]->key,
								   &v[i]->caps, v[i]->old_until_us));
		free(v);
		return json_pack("{s:o}", "auth", a);
	}
	if (!strcmp(prefix, "auth service-keys"))
		return mon_auth_svc_json(mon); /* mon_auth_svc_cmd.c: no key, ids and times */
	if (strcmp(prefix, "auth get") != 0 && strcmp(prefix, "auth print-key") != 0)
		return NULL; /* unknown command */
	if (name == NULL) {
		*rc_out = -EINVAL;
		snprintf(err, errcap, "no entity given");
		return NULL;
	}
	e = mon_auth_find(&mon->auth, name);
	if (e == NULL) {
		*rc_out = -ENOENT;
		snprintf(err, errcap, "entity %.*s does not exist", AUTH_ENTITY_MAX, name);
		return NULL;
	}
	if (!strcmp(prefix, "auth get"))
		return mon_auth_ent_json(e->entity, &e->key, &e->caps, e->old_until_us);
	auth_key_encode(&e->key, b64);
	out = json_pack("{s:s, s:s}", "entity", e->entity, "key", b64);
	OPENSSL_cleanse(b64, sizeof(b64));
	return out;
}

/* ------------------------------------------------------------- the seed */

/* <mon_data>/keyring: the copy of mon. and client.admin that --mkfs leaves for the first leader. */
static void mon_auth_seed_path(struct mon *mon, char *path, size_t cap)
{
	snprintf(path, cap, "%s/keyring", mon->data_dir);
}

/* Build: job->json is the entity to add from the seed keyring. */
static int mon_auth_seed_build(struct mon *mon, struct mon_job *job, struct mon_auth_op *op)
{
	const struct auth_keyring_entry *ke;
	struct auth_keyring kr;
	char path[PATH_MAX + 16], err[512];
	int rc;

	if (mon_auth_find(&mon->auth, job->json) != NULL)
		return 1;
	mon_auth_seed_path(mon, path, sizeof(path));
	auth_keyring_init(&kr);
	rc = auth_keyring_load(&kr, path, err, sizeof(err));
	if (rc != 0)
		return rc;
	ke = auth_keyring_find(&kr, job->json);
	if (ke == NULL) {
		log_error("mon", "%s: seed keyring %s has no %s", mon->name, path, job->json);
		auth_keyring_free(&kr);
		return -ENOENT;
	}
	op->kind = MON_AUTH_OP_ADD;
	memcpy(op->entity, ke->entity.name, sizeof(op->entity));
	op->key = ke->key;
	op->caps = ke->caps;
	auth_keyring_free(&kr);
	log_info("mon", "%s: seeding the auth database with %s from %s", mon->name, op->entity,
		 path);
	return 0;
}

static void mon_auth_submit_internal(struct mon *mon, const char *entity,
				     int (*fn)(struct mon *, struct mon_job *,
					       struct mon_auth_op *))
{
	struct mon_job *job = mon_job_alloc(NULL, 0, NULL);

	if (job == NULL)
		return;
	job->build_auth = fn;
	job->json = strdup(entity);
	if (job->json == NULL) {
		mon_job_free(job);
		return;
	}
	mon_job_submit(mon, job);
}

void mon_auth_seed(struct mon *mon)
{
	char path[PATH_MAX + 16];

	if (mon->auth.count > 0 || mon->auth_seed_queued)
		return;
	mon_auth_seed_path(mon, path, sizeof(path));
	if (access(path, F_OK) != 0) {
		log_warn("mon", "%s: the auth database is empty and %s is missing: no mon. or "
			 "client.admin key (weft auth get-or-create adds entities)", mon->name, path);
		mon->auth_seed_queued = true;
		return;
	}
	mon->auth_seed_queued = true;
	mon_auth_submit_internal(mon, "mon.", mon_auth_seed_build);
	mon_auth_submit_internal(mon, "client.admin", mon_auth_seed_build);
}

static int mon_auth_purge_build(struct mon *mon, struct mon_job *job, struct mon_auth_op *op)
{
	if (mon_auth_find(&mon->auth, job->json) == NULL)
		return 1;
	op->kind = MON_AUTH_OP_RM;
	snprintf(op->entity, sizeof(op->entity), "%s", job->json);
	return 0;
}

void mon_auth_purged(struct mon *mon, uint32_t osd_id)
{
	char entity[AUTH_ENTITY_MAX];

	snprintf(entity, sizeof(entity), "osd.%u", osd_id);
	if (mon_auth_find(&mon->auth, entity) != NULL)
		mon_auth_submit_internal(mon, entity, mon_auth_purge_build);
}

/* ------------------------------------------------------------------ mkfs */

/* Whether kr holds both bootstrap entities. */
static bool mon_auth_kr_complete(const struct auth_keyring *kr)
{
	return auth_keyring_find(kr, "mon.") != NULL && auth_keyring_find(kr, "client.admin");
}

static int mon_auth_kr_fresh(struct auth_keyring *kr)
{
	static const struct {
		const char *entity, *mon, *osd;
	} boot[] = {{"mon.", "allow *", NULL}, {"client.admin", "allow *", "allow *"}};
	char err[256];
	int rc;

	for (size_t i = 0; i < 2; i++) {
		struct auth_keyring_entry e = {0};

		rc = auth_entity_parse(boot[i].entity, &e.entity, err, sizeof(err));
		if (rc == 0)
			rc = auth_key_generate(&e.key);
		if (rc == 0)
			rc = auth_caps_parse(&e.caps, AUTH_SVC_MON, boot[i].mon, err, sizeof(err));
		if (rc == 0 && boot[i].osd != NULL)
			rc = auth_caps_parse(&e.caps, AUTH_SVC_OSD, boot[i].osd, err, sizeof(err));
		if (rc == 0)
			rc = auth_keyring_put(kr, &e);
		auth_key_wipe(&e.key);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/*
 * --mkfs (bootstrap): the keys of mon. and client.admin. Taken from the
 * conf's keyring if it holds both, else from the shared keyring beside the
 * mon data (dirname(mon_data)/keyring: the one the first monitor of a
 * local cluster wrote), else made fresh and written there. Then a copy
 * goes into mon_data/keyring for the first leader to seed from. where
 * gets the path of the admin keyring.
 */
int mon_auth_seed_write(struct mon *mon, char *where, size_t cap)
{
	char shared[PATH_MAX + 16], seed[PATH_MAX + 16], dir[PATH_MAX], err[512];
	const char *conf_kr = auth_keyring_path(mon->conf);
	struct auth_keyring kr;
	bool found = false;
	int rc;

	snprintf(dir, sizeof(dir), "%s", mon->data_dir);
	snprintf(shared, sizeof(shared), "%s/keyring", dirname(dir));
	mon_auth_seed_path(mon, seed, sizeof(seed));
	auth_keyring_init(&kr);
	if (conf_kr != NULL && conf_kr[0] != '\0' && access(conf_kr, F_OK) == 0) {
		rc = auth_keyring_load(&kr, conf_kr, err, sizeof(err));
		if (rc != 0) {
			fprintf(stderr, "weft-mon: %s\n", err);
			goto out;
		}
		found = mon_auth_kr_complete(&kr);
		if (found)
			snprintf(where, cap, "%s", conf_kr);
	}
	if (!found && access(shared, F_OK) == 0) {
		rc = auth_keyring_load(&kr, shared, err, sizeof(err));
		if (rc != 0) {
			fprintf(stderr, "weft-mon: %s\n", err);
			goto out;
		}
		found = mon_auth_kr_complete(&kr);
		if (!found) {
			fprintf(stderr, "weft-mon: %s exists without mon. and client.admin; move it "
				"away or add them\n", shared);
			rc = -EINVAL;
			goto out;
		}
		snprintf(where, cap, "%s", shared);
	}
	if (!found) {
		auth_keyring_free(&kr);
		rc = mon_auth_kr_fresh(&kr);
		if (rc == 0)
			rc = auth_keyring_save(&kr, shared, err, sizeof(err));
		if (rc != 0) {
			fprintf(stderr, "weft-mon: cannot write the admin keyring: %s\n", err);
			goto out;
		}
		snprintf(where, cap, "%s", shared);
	}
	rc = auth_keyring_save(&kr, seed, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "weft-mon: %s\n", err);
out:
	auth_keyring_free(&kr);
	return rc;
}
