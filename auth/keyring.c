/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Keyring files. libinih is driven through ini_parse_stream() with our own
 * line reader, as in common/conf_parse.c: it counts lines (Debian builds
 * inih without line numbers in the handler), strips the indentation that
 * keyrings use (inih would take indented lines as continuations) and sees
 * every [section] header first, so a bad or repeated entity is reported on
 * its own line. inih strips "  ; comment" after a value: separate the
 * grants of a cap string with ',' in a keyring (the formatter does).
 */
#include "auth/keyring.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/conf.h"
#include "common/log.h"

struct auth_kr_parse {
	struct auth_keyring *kr;
	const char *name;
	const char *text;
	unsigned int lineno;
	char *err;
	size_t errcap;
	int rc;		 /* first error */
	bool *has_key;	 /* per entry, parallel to kr->ents */
	size_t has_cap;
};

void auth_keyring_init(struct auth_keyring *kr)
{
	kr->ents = NULL;
	kr->count = 0;
	kr->cap = 0;
}

void auth_keyring_free(struct auth_keyring *kr)
{
	for (size_t i = 0; i < kr->count; i++)
		auth_key_wipe(&kr->ents[i].key);
	free(kr->ents);
	auth_keyring_init(kr);
}

const struct auth_keyring_entry *auth_keyring_find(const struct auth_keyring *kr,
						   const char *entity)
{
	for (size_t i = 0; i < kr->count; i++)
		if (strcmp(kr->ents[i].entity.name, entity) == 0)
			return &kr->ents[i];
	return NULL;
}

int auth_keyring_put(struct auth_keyring *kr, const struct auth_keyring_entry *ent)
{
	for (size_t i = 0; i < kr->count; i++) {
		if (strcmp(kr->ents[i].entity.name, ent->entity.name) == 0) {
			kr->ents[i] = *ent;
			return 0;
		}
	}
	if (kr->count == AUTH_KEYRING_MAX)
		return -ENOSPC;
	if (kr->count == kr->cap) {
		size_t ncap = kr->cap ? kr->cap * 2 : 8;
		struct auth_keyring_entry *n = realloc(kr->ents, ncap * sizeof(*n));

		if (n == NULL)
			return -ENOMEM;
		kr->ents = n;
		kr->cap = ncap;
	}
	kr->ents[kr->count++] = *ent;
	return 0;
}

static int auth_kr_fail(struct auth_kr_parse *p, int rc, const char *fmt, const char *what)
{
	if (p->rc == 0) {
		int n = snprintf(p->err, p->errcap, "keyring %s: line %u: ", p->name, p->lineno);

		if (n >= 0 && (size_t)n < p->errcap)
			snprintf(p->err + n, p->errcap - (size_t)n, fmt, what);
		p->rc = rc;
	}
	return 0;
}

/* A "[entity]" line: a new entry, checked here where its line number is known. */
static void auth_kr_section(struct auth_kr_parse *p, const char *line)
{
	struct auth_keyring_entry ent = {0};
	const char *close = strchr(line, ']');
	char name[AUTH_ENTITY_MAX + 8], why[240];
	size_t len;
	int rc;

	if (close == NULL || close[1] != '\0') {
		auth_kr_fail(p, -EINVAL, "section header '%s' is not [ENTITY]", line);
		return;
	}
	len = (size_t)(close - line - 1);
	if (len >= AUTH_ENTITY_MAX) {
		auth_kr_fail(p, -EINVAL, "entity name '%s' is too long", line);
		return;
	}
	memcpy(name, line + 1, len);
	name[len] = '\0';
	if (auth_entity_parse(name, &ent.entity, why, sizeof(why)) != 0) {
		auth_kr_fail(p, -EINVAL, "%s", why);
		return;
	}
	if (auth_keyring_find(p->kr, name) != NULL) {
		auth_kr_fail(p, -EINVAL, "entity %s appears twice", name);
		return;
	}
	if (p->kr->count >= p->has_cap) {
		size_t ncap = p->has_cap ? p->has_cap * 2 : 8;
		bool *n = realloc(p->has_key, ncap * sizeof(*n));

		if (n == NULL) {
			auth_kr_fail(p, -ENOMEM, "%s", "out of memory");
			return;
		}
		p->has_key = n;
		p->has_cap = ncap;
	}
	rc = auth_keyring_put(p->kr, &ent);
	if (rc != 0) {
		auth_kr_fail(p, rc, "%s", rc == -ENOSPC ? "too many entities" : "out of memory");
		return;
	}
	p->has_key[p->kr->count - 1] = false;
}

static char *auth_kr_reader(char *str, int num, void *stream)
{
	struct auth_kr_parse *p = stream;
	char line[4096];
	size_t n = 0;
	char *s;

	if (*p->text == '\0')
		return NULL;
	for (; *p->text && *p->text != '\n'; p->text++)
		if (n + 1 < sizeof(line))
			line[n++] = *p->text;
	if (*p->text == '\n')
		p->text++;
	p->lineno++;
	if (n > 0 && line[n - 1] == '\r')
		n--;
	while (n > 0 && (line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	line[n] = '\0';
	s = line;
	while (*s == ' ' || *s == '\t')
		s++;
	if (strlen(s) + 3 > (size_t)num) {
		auth_kr_fail(p, -EINVAL, "line is longer than %s characters", "the parser's");
		s = "";
	} else if (*s == '[') {
		auth_kr_section(p, s);
	} else if (*s != '\0' && *s != '#' && *s != ';' && strchr(s, '=') == NULL) {
		auth_kr_fail(p, -EINVAL, "'%s': expected 'key = value' or '[ENTITY]'", s);
		s = "";
	}
	snprintf(str, (size_t)num, "%s\n", s);
	return str;
}

static int auth_kr_handler(void *user, const char *section, const char *name, const char *value)
{
	struct auth_kr_parse *p = user;
	struct auth_keyring_entry *ent;
	char buf[AUTH_CAPS_TEXT_MAX + 2], why[240];
	enum auth_svc svc;
	size_t vlen;

	if (p->rc != 0)
		return 1;
	if (section[0] == '\0' || p->kr->count == 0 ||
	    strcmp(p->kr->ents[p->kr->count - 1].entity.name, section) != 0)
		return auth_kr_fail(p, -EINVAL, "'%s' is outside an [ENTITY] section", name);
	ent = &p->kr->ents[p->kr->count - 1];
	vlen = strlen(value);
	if (vlen >= 2 && value[0] == '"' && value[vlen - 1] == '"') {
		if (vlen - 2 >= sizeof(buf))
			return auth_kr_fail(p, -EINVAL, "value of '%s' is too long", name);
		memcpy(buf, value + 1, vlen - 2);
		buf[vlen - 2] = '\0';
		value = buf;
	}
	if (strcmp(name, "key") == 0) {
		if (p->has_key[p->kr->count - 1])
			return auth_kr_fail(p, -EINVAL, "%s has two keys", section);
		if (auth_key_decode(value, &ent->key, why, sizeof(why)) != 0)
			return auth_kr_fail(p, -EINVAL, "%s", why);
		p->has_key[p->kr->count - 1] = true;
		return 1;
	}
	if (strncmp(name, "caps ", 5) == 0) {
		const char *sname = name + 5;

		while (*sname == ' ')
			sname++;
		if (auth_svc_lookup(sname, &svc) != 0) {
			/* Ignoring a grant can only take rights away (mgr/mds caps from Ceph). */
			log_warn("auth", "keyring %s: line %u: caps for unknown service '%s' ignored",
				 p->name, p->lineno, sname);
			return 1;
		}
		if (ent->caps.set[svc])
			return auth_kr_fail(p, -EINVAL, "%s caps given twice", sname);
		if (auth_caps_parse(&ent->caps, svc, value, why, sizeof(why)) != 0)
			return auth_kr_fail(p, -EINVAL, "%s", why);
		return 1;
	}
	return auth_kr_fail(p, -EINVAL, "unknown key '%s' (expected key, caps mon, caps osd)", name);
}

int auth_keyring_parse(struct auth_keyring *kr, const char *text, const char *name, char *err,
		       size_t errcap)
{
	struct auth_keyring out;
	struct auth_kr_parse p = {
		.kr = &out, .name = name, .text = text, .err = err, .errcap = errcap};
	int rc;

	auth_keyring_init(&out);
	err[0] = '\0';
	rc = ini_parse_stream(auth_kr_reader, &p, auth_kr_handler, &p);
	if (p.rc == 0 && rc == -2)
		auth_kr_fail(&p, -ENOMEM, "%s", "out of memory");
	else if (p.rc == 0 && rc != 0)
		auth_kr_fail(&p, -EINVAL, "%s", "syntax error");
	for (size_t i = 0; p.rc == 0 && i < out.count; i++) {
		if (!p.has_key[i]) {
			p.lineno = 0;
			snprintf(err, errcap, "keyring %s: %s has no key", name,
				 out.ents[i].entity.name);
			p.rc = -EINVAL;
		}
	}
	free(p.has_key);
	if (p.rc != 0) {
		auth_keyring_free(&out);
		return p.rc;
	}
	auth_keyring_free(kr);
	*kr = out;
	return 0;
}

int auth_keyring_load(struct auth_keyring *kr, const char *path, char *err, size_t errcap)
{
	struct stat st;
	char *text = NULL;
	ssize_t got;
	size_t len = 0;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errcap, "keyring %s: cannot open: %s", path, strerror(-rc));
		goto out_log;
	}
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		snprintf(err, errcap, "keyring %s: cannot stat: %s", path, strerror(-rc));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		snprintf(err, errcap, "keyring %s: not a regular file", path);
		goto out_close;
	}
	if ((st.st_mode & 077) != 0) {
		rc = -EACCES;
		snprintf(err, errcap,
			 "keyring %s: mode %04o lets group or other access the secret; "
			 "run chmod 600 %s",
			 path, (unsigned)(st.st_mode & 07777), path);
		goto out_close;
	}
	if (st.st_size > 16 << 20) {
		rc = -EINVAL;
		snprintf(err, errcap, "keyring %s: larger than 16 MiB", path);
		goto out_close;
	}
	text = malloc((size_t)st.st_size + 1);
	if (text == NULL) {
		rc = -ENOMEM;
		snprintf(err, errcap, "keyring %s: out of memory", path);
		goto out_close;
	}
	while (len < (size_t)st.st_size) {
		got = read(fd, text + len, (size_t)st.st_size - len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			rc = got < 0 ? -errno : -EIO;
			snprintf(err, errcap, "keyring %s: read failed: %s", path,
				 got < 0 ? strerror(-rc) : "file shrank");
			goto out_free;
		}
		len += (size_t)got;
	}
	text[len] = '\0';
	if (strlen(text) != len) {
		rc = -EINVAL;
		snprintf(err, errcap, "keyring %s: contains a NUL byte", path);
		goto out_free;
	}
	rc = auth_keyring_parse(kr, text, path, err, errcap);
out_free:
	explicit_bzero(text, len);
	free(text);
out_close:
	close(fd);
out_log:
	if (rc != 0)
		log_error("auth", "%s", err);
	return rc;
}

char *auth_keyring_format(const struct auth_keyring *kr)
{
	char b64[AUTH_KEY_B64_LEN + 1], caps[AUTH_CAPS_TEXT_MAX * 2];
	size_t cap = 256 + kr->count * (AUTH_ENTITY_MAX + 96 + 2 * sizeof(caps)), off = 0;
	char *out = malloc(cap);

	if (out == NULL)
		return NULL;
	out[0] = '\0';
	for (size_t i = 0; i < kr->count; i++) {
		const struct auth_keyring_entry *e = &kr->ents[i];

		auth_key_encode(&e->key, b64);
		off += (size_t)snprintf(out + off, cap - off, "[%s]\n\tkey = %s\n", e->entity.name,
					b64);
		for (int s = 0; s < AUTH_SVC_COUNT; s++) {
			if (!e->caps.set[s] ||
			    auth_caps_format(&e->caps, (enum auth_svc)s, caps, sizeof(caps)) != 0)
				continue;
			off += (size_t)snprintf(out + off, cap - off, "\tcaps %s = \"%s\"\n",
						auth_svc_name((enum auth_svc)s), caps);
		}
	}
	explicit_bzero(b64, sizeof(b64));
	return out;
}

int auth_keyring_save(const struct auth_keyring *kr, const char *path, char *err, size_t errcap)
{
	char tmp[4096];
	char *text;
	size_t len, off = 0;
	int fd, rc = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		snprintf(err, errcap, "keyring %s: path too long", path);
		return -ENAMETOOLONG;
	}
	text = auth_keyring_format(kr);
	if (text == NULL) {
		snprintf(err, errcap, "keyring %s: out of memory", path);
		return -ENOMEM;
	}
	len = strlen(text);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errcap, "keyring %s: cannot create: %s", tmp, strerror(-rc));
		goto out_free;
	}
	/* The umask can only remove bits; this makes 0600 exact whatever it is. */
	if (fchmod(fd, 0600) != 0) {
		rc = -errno;
		goto out_io;
	}
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out_io;
		}
		off += (size_t)n;
	}
	if (fsync(fd) != 0) {
		rc = -errno;
		goto out_io;
	}
	if (close(fd) != 0) {
		fd = -1;
		rc = -errno;
		goto out_io;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		rc = -errno;
		goto out_io;
	}
	goto out_free;
out_io:
	snprintf(err, errcap, "keyring %s: write failed: %s", tmp, strerror(-rc));
	if (fd >= 0)
		close(fd);
	unlink(tmp);
out_free:
	explicit_bzero(text, len);
	free(text);
	if (rc != 0)
		log_error("auth", "%s", err);
	return rc;
}

const char *auth_keyring_path(const struct conf *conf)
{
	return conf_get_str(conf, CONF_KEYRING);
}
