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
#include "auth/session.h"
#include "common/log.h"
#include "mon/mon_priv.h"

static const char *const mon_auth_writes[] = {
	"auth get-or-create", "auth caps", "auth rm", "auth del", "auth rotate", NULL,
};

static void mon_auth_sessions_update(struct mon *mon, const struct mon_auth_op *op);

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
	if (rc == 0) {
		log_info("mon", "%s: auth: %s %s (%u entities)", mon->name, what[op.kind], op.entity,
			 mon->auth.count);
		mon_auth_sessions_update(mon, &op);
	} else
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
		op->grace_us = mon->auth_rotate_grace_us;
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

/* ------------------------------------------------------------ the service */

/*
 * Whether this monitor's copy of the database is current: it knows a
 * leader and has applied what the leader committed. A monitor that just
 * started has not: an entity it does not know yet may exist.
 */
static bool mon_auth_caught_up(struct mon *mon)
{
	if (mon_is_leader(mon))
		return mon->leader_ready;
	return mon_raft_leader(mon) != 0 && raft_last_applied(&mon->raft) >= mon->raft.commit_index;
}

/*
 * msgr's lookup: the keys and caps of an entity a peer claims to be;
 * -ENOENT when there is no such entity, -EAGAIN when this monitor cannot
 * tell yet (the peer tries another).
 */
static int mon_auth_lookup_cb(const char *entity, struct auth_sess_keys *keys_out, void *arg)
{
	struct mon *mon = arg;
	const struct mon_auth_ent *e = mon_auth_find(&mon->auth, entity);
	const struct auth_keyring_entry *ke;

	if (e != NULL) {
		keys_out->key[0] = e->key;
		keys_out->nkeys = 1;
		if (e->old_until_us > mon_auth_now_us()) {
			keys_out->key[1] = e->old_key;
			keys_out->old_until_us = e->old_until_us;
			keys_out->nkeys = 2;
		}
		keys_out->caps = e->caps;
		return 0;
	}
	/*
	 * Until the first leader has seeded the database, the bootstrap keys
	 * of mon_data/keyring stand in for it (the monitors must reach each
	 * other, and the admin its cluster, before there is a leader).
	 */
	ke = mon->auth.count == 0 ? auth_keyring_find(&mon->auth_local, entity) : NULL;
	if (ke == NULL)
		return mon_auth_caught_up(mon) ? -ENOENT : -EAGAIN;
	keys_out->key[0] = ke->key;
	keys_out->nkeys = 1;
	keys_out->caps = ke->caps;
	return 0;
}

/* Add what path holds for entity to mon->auth_local; 0 or -ENOENT (file or entry). */
static int mon_auth_local_take(struct mon *mon, const char *path, const char *entity)
{
	const struct auth_keyring_entry *e;
	struct auth_keyring kr;
	char err[512];
	int rc;

	if (path == NULL || path[0] == '\0' || access(path, F_OK) != 0)
		return -ENOENT;
	auth_keyring_init(&kr);
	rc = auth_keyring_load(&kr, path, err, sizeof(err));
	if (rc != 0) {
		log_error("mon", "%s: %s", mon->name, err);
		auth_keyring_free(&kr);
		return rc;
	}
	e = auth_keyring_find(&kr, entity);
	rc = e != NULL ? auth_keyring_put(&mon->auth_local, e) : -ENOENT;
	auth_keyring_free(&kr);
	return rc;
}

int mon_auth_svc_setup(struct mon *mon)
{
	char path[PATH_MAX + 16], err[512];
	const struct auth_keyring_entry *self;
	const char *conf_kr = auth_keyring_path(mon->conf);
	struct msgr_auth a = {0};
	int rc;

	auth_policy_from_conf(mon->conf, &mon->auth_pol);
	auth_policy_warn(&mon->auth_pol, mon->name, CONF_WHO_MON);
	mon->auth_rotate_grace_us = conf_get_duration_us(mon->conf, CONF_MON_AUTH_ROTATE_GRACE);
	auth_keyring_init(&mon->auth_local);
	mon_auth_seed_path(mon, path, sizeof(path));
	if (access(path, F_OK) == 0) {
		rc = auth_keyring_load(&mon->auth_local, path, err, sizeof(err));
		if (rc != 0) {
			log_error("mon", "%s: %s", mon->name, err);
			return rc;
		}
	}
	/* A monitor made before its mon_data kept mon.: the conf's keyring may hold it. */
	if (auth_keyring_find(&mon->auth_local, "mon.") == NULL) {
		rc = mon_auth_local_take(mon, conf_kr, "mon.");
		if (rc != 0 && rc != -ENOENT)
			return rc;
	}
	self = auth_keyring_find(&mon->auth_local, "mon.");
	if (self == NULL && mon->auth_pol.cluster) {
		log_error("mon",
			  "%s: no key for mon. in %s or %s: the monitors cannot "
			  "authenticate to each other (copy another monitor's mon_data/keyring, or "
			  "set auth_cluster_required = none)",
			  mon->name, path, conf_kr != NULL ? conf_kr : "(no keyring)");
		return -ENOKEY;
	}
	if (mon->auth_pol.cluster) {
		a.entity = "mon.";
		a.key = &self->key;
		a.server = "mon.";
	}
	a.self = "mon.";
	a.lookup = mon_auth_lookup_cb;
	a.lookup_arg = mon;
	a.require_daemons = mon->auth_pol.cluster;
	a.require_clients = mon->auth_pol.service;
	a.fsid = conf_get_str(mon->conf, CONF_FSID);
	rc = msgr_auth_set(mon->msgr, &a);
	if (rc != 0)
		log_error("mon", "%s: cannot set up authentication: %s", mon->name, strerror(-rc));
	return rc;
}

void mon_auth_svc_stop(struct mon *mon)
{
	auth_keyring_free(&mon->auth_local);
}

int mon_auth_join_keyring(struct mon *mon)
{
	char path[PATH_MAX + 16], err[512];
	const char *conf_kr = auth_keyring_path(mon->conf);
	int rc;

	auth_keyring_init(&mon->auth_local);
	rc = mon_auth_local_take(mon, conf_kr, "mon.");
	if (rc == 0)
		mon_auth_local_take(mon, conf_kr, "client.admin");
	if (rc != 0) {
		fprintf(stderr,
			"weft-mon: %s: keyring %s has no mon. key: copy the cluster's "
			"admin keyring there first\n",
			mon->name, conf_kr != NULL ? conf_kr : "(none)");
		auth_keyring_free(&mon->auth_local);
		return rc == -ENOENT ? -ENOKEY : rc;
	}
	mon_auth_seed_path(mon, path, sizeof(path));
	rc = auth_keyring_save(&mon->auth_local, path, err, sizeof(err));
	if (rc != 0)
		fprintf(stderr, "weft-mon: %s\n", err);
	auth_keyring_free(&mon->auth_local);
	return rc;
}

/* ----------------------------------------------------- caps on messages */

/* The mon permission a command needs: R for reads, X for changes and every auth command. */
static unsigned int mon_auth_cmd_need(const struct proto_mon_cmd *c, char *prefix, size_t cap)
{
	json_t *root = json_loadb(c->json, c->json_len, 0, NULL);
	const char *p = json_string_value(json_object_get(root, "prefix"));
	unsigned int need = AUTH_PERM_R; /* no prefix: refused as malformed by mon_cmd_handle */

	snprintf(prefix, cap, "%s", p != NULL ? p : "?");
	if (p != NULL && (!strncmp(p, "auth ", 5) || mon_cmd_is_write(c->json, c->json_len)))
		need = AUTH_PERM_X;
	json_decref(root);
	return need;
}

/*
 * Beyond reads, mon 'profile bootstrap-osd' runs only what a new OSD host
 * needs (weft osd create --bootstrap): osd.N's key made with exactly the
 * caps an OSD has, or fetched again. Any other entity, any other caps, any
 * other command needs mon 'allow *' as before.
 */
static bool mon_auth_bootstrap_ok(const struct proto_mon_cmd *c)
{
	json_t *root = json_loadb(c->json, c->json_len, 0, NULL);
	const char *p = json_string_value(json_object_get(root, "prefix"));
	const char *e = json_string_value(json_object_get(root, "entity"));
	json_t *caps = json_object_get(root, "caps");
	bool ok = false;

	if (p == NULL || e == NULL || strncmp(e, "osd.", 4) != 0 || e[4] == '\0' ||
	    strspn(e + 4, "0123456789") != strlen(e + 4) || strlen(e + 4) > 9)
		goto out;
	if (!strcmp(p, "auth get")) {
		ok = json_object_size(root) == 2;
	} else if (!strcmp(p, "auth get-or-create") && json_is_array(caps) &&
		   json_array_size(caps) == 4 && json_object_size(root) == 3) {
		struct auth_caps want = {0};
		char *argv[4], err[256];

		for (size_t i = 0; i < 4; i++)
			argv[i] = (char *)(json_string_value(json_array_get(caps, i)) ?: "");
		ok = auth_caps_parse_args(&want, 4, argv, err, sizeof(err)) == 0 &&
		     want.count[AUTH_SVC_MON] == 1 && want.count[AUTH_SVC_OSD] == 1 &&
		     auth_caps_has_profile(&want, AUTH_SVC_MON, AUTH_PROFILE_OSD) &&
		     auth_caps_has_profile(&want, AUTH_SVC_OSD, AUTH_PROFILE_OSD);
	}
out:
	json_decref(root);
	return ok;
}

static const char *mon_auth_need_str(unsigned int need)
{
	return need == AUTH_PERM_X   ? "mon 'allow *'"
	       : need == AUTH_PERM_W ? "mon 'allow rw'"
				     : "mon 'allow r'";
}

/* The osd.N a report speaks for must be the peer itself. */
static bool mon_auth_is_osd(const char *entity, uint32_t id)
{
	char want[AUTH_ENTITY_MAX];

	snprintf(want, sizeof(want), "osd.%u", id);
	return !strcmp(entity, want);
}

bool mon_auth_allowed(struct mon *mon, struct msgr_conn *conn, uint64_t tid,
		      const struct proto_msg *msg)
{
	const char *ent = msgr_conn_entity(conn);
	const struct auth_caps *caps = msgr_conn_caps(conn);
	char have[AUTH_CAPS_TEXT_MAX], why[PROTO_ERRMSG_MAX + 1], prefix[64];
	const char *what = proto_type_name(msg->type);
	unsigned int need = 0;
	bool reply = false, ok = true;
	uint32_t osd = 0;

	if (ent == NULL || !strcmp(ent, "mon."))
		return true; /* let in without a key by a `none` option; or another monitor */
	switch (msg->type) {
	case PROTO_PING:
	case PROTO_PONG:
		return true;
	case PROTO_MON_SUB:
	case PROTO_MAP_GET:
		need = AUTH_PERM_R;
		break;
	case PROTO_MON_CMD:
		need = mon_auth_cmd_need(&msg->mon_cmd, prefix, sizeof(prefix));
		what = prefix;
		reply = true;
		/* Fencing a lock holder is part of a client's I/O (exclusive locks). */
		if (!strcmp(what, "osd blocklist add") && caps != NULL &&
		    (auth_caps_has_profile(caps, AUTH_SVC_MON, AUTH_PROFILE_CLIENT) ||
		     auth_caps_has_profile(caps, AUTH_SVC_MON, AUTH_PROFILE_MOUNT)))
			return true;
		if (need == AUTH_PERM_X && caps != NULL &&
		    auth_caps_has_profile(caps, AUTH_SVC_MON, AUTH_PROFILE_BOOTSTRAP_OSD) &&
		    mon_auth_bootstrap_ok(&msg->mon_cmd))
			return true;
		break;
	case PROTO_OSD_BOOT:
		osd = msg->osd_boot.want_id;
		reply = true;
		need = AUTH_PERM_W;
		break;
	case PROTO_OSD_BEACON:
		osd = msg->osd_beacon.id;
		need = AUTH_PERM_W;
		break;
	case PROTO_OSD_FAILURE:
		osd = msg->osd_failure.reporter;
		need = AUTH_PERM_W;
		break;
	case PROTO_PG_STATS:
		osd = msg->pg_stats.osd;
		reply = true;
		need = AUTH_PERM_W;
		break;
	default:
		return true; /* logged as unexpected by the dispatcher */
	}
	if (caps == NULL || !auth_caps_allow(caps, AUTH_SVC_MON, NULL, need)) {
		if (caps == NULL || auth_caps_format(caps, AUTH_SVC_MON, have, sizeof(have)) != 0)
			snprintf(have, sizeof(have), "?");
		snprintf(why, sizeof(why),
			 "permission denied: %s (mon '%.100s') may not %s %s (needs %s)", ent, have,
			 need == AUTH_PERM_W ? "send" : "run", what, mon_auth_need_str(need));
		ok = false;
	} else if (need == AUTH_PERM_W && !mon_auth_is_osd(ent, osd)) {
		if (osd == PROTO_OSD_ID_NONE)
			snprintf(why, sizeof(why),
				 "permission denied: %s may not send %s for a new "
				 "OSD id (create osd.N's key first, then boot as osd.N)",
				 ent, what);
		else
			snprintf(why, sizeof(why),
				 "permission denied: %s may not send %s for osd.%u "
				 "(only osd.%u speaks for itself)",
				 ent, what, osd, osd);
		ok = false;
	}
	if (ok)
		return true;
	log_warn("mon", "%s: peer %s (%s): refused %s: %s", mon->name, msgr_conn_peer(conn), ent,
		 what, why);
	if (reply) {
		mon_reply(mon, msgr_conn_id(conn), tid, -EACCES, NULL, "%s", why);
	} else {
		/* Nobody waits for an answer: a forged report closes the connection. */
		msgr_conn_close(conn);
	}
	return false;
}

/* ----------------------------------------------------------------- health */

void mon_auth_health(struct mon *mon, json_t *checks, const char **status)
{
	char none[128];
	unsigned int plain = 0;

	auth_policy_insecure(&mon->auth_pol, CONF_WHO_MON, none, sizeof(none));
	if (none[0] == '\0')
		return;
	if (mon->msgr != NULL)
		for (struct msgr_conn *c = msgr_conn_next(mon->msgr, NULL); c != NULL;
		     c = msgr_conn_next(mon->msgr, c))
			if (c != mon->leader_conn && c != mon->probe_conn &&
			    msgr_conn_entity(c) == NULL)
				plain++;
	mon_health_add(checks, status, "AUTH_INSECURE", false, NULL,
		       "%s = none on %s: peers get in without a key (%u connections without "
		       "authentication)",
		       none, mon->name, plain);
}

/* The auth database changed for entity: the sessions it has follow. */
static void mon_auth_sessions_update(struct mon *mon, const struct mon_auth_op *op)
{
	const struct mon_auth_ent *e = mon_auth_find(&mon->auth, op->entity);
	struct msgr_conn *c, *next;

	if (mon->msgr == NULL)
		return;
	for (c = msgr_conn_next(mon->msgr, NULL); c != NULL; c = next) {
		const char *ent = msgr_conn_entity(c);

		next = msgr_conn_next(mon->msgr, c);
		/* Accepted sessions only: the ones we opened have no caps. */
		if (ent == NULL || msgr_conn_caps(c) == NULL || strcmp(ent, op->entity) != 0)
			continue;
		if (op->kind == MON_AUTH_OP_RM || e == NULL) {
			log_info("mon",
				 "%s: closing the session of %s at %s: the entity was removed",
				 mon->name, op->entity, msgr_conn_peer(c));
			msgr_conn_close(c);
		} else if (op->kind == MON_AUTH_OP_CAPS) {
			msgr_conn_caps_set(c, &e->caps);
		} else if (op->kind == MON_AUTH_OP_ROTATE) {
			uint64_t now = mon_auth_now_us();

			msgr_conn_auth_expire(
			    c, e->old_until_us > now ? (e->old_until_us - now) / 1000 : 0);
		}
	}
}
