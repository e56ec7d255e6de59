/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where values come from: INI files (libinih), WEFT_<KEY> variables and
 * --key=value arguments. Each source assigns at its own precedence level
 * (conf_priv.h), so the order of the calls does not matter.
 *
 * libinih is driven through ini_parse_stream() with our own line reader:
 * Debian builds it without line numbers in the handler, so the reader counts
 * lines. The reader also strips leading whitespace (ceph.conf files indent
 * keys, which inih would otherwise take as continuation lines), drops
 * "  # comments" after a value, checks section headers and flags lines that
 * are neither a section nor "key = value".
 */
#include "common/conf_priv.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"

#define CONF_ORIGIN_MAX 512

struct conf_ini {
	struct conf *conf;
	const char *name; /* file path or the name given to conf_load_string */
	FILE *file;	  /* or: */
	const char *text;
	unsigned int lineno;
	unsigned int errors;
	/* Classification of the section the handler saw last. */
	char section[CONF_KEY_MAX];
	bool section_valid;
	enum conf_level level;
	bool apply;
};

/* Read one physical line into line (without the newline); false at end of input. */
static bool conf_ini_getline(struct conf_ini *ini, char *line, size_t len, bool *too_long)
{
	size_t n = 0;
	int c;

	*too_long = false;
	if (ini->file != NULL) {
		c = getc(ini->file);
		if (c == EOF)
			return false;
		for (; c != EOF && c != '\n'; c = getc(ini->file)) {
			if (n + 1 < len)
				line[n++] = (char)c;
			else
				*too_long = true;
		}
	} else {
		if (*ini->text == '\0')
			return false;
		for (; *ini->text && *ini->text != '\n'; ini->text++) {
			if (n + 1 < len)
				line[n++] = *ini->text;
			else
				*too_long = true;
		}
		if (*ini->text == '\n')
			ini->text++;
	}
	if (n > 0 && line[n - 1] == '\r')
		n--;
	line[n] = '\0';
	return true;
}

/* Warns about unknown sections; false (logged error) if the header is not closed. */
static bool conf_ini_check_section(struct conf_ini *ini, const char *line)
{
	static const char *const types[] = {"mon", "osd", "client"};
	const char *end = strchr(line, ']');
	size_t len, tlen;
	const char *dot;
	bool ok = false;

	if (end == NULL) {
		log_error("conf", "%s:%u: section header \"%s\" has no closing ']'", ini->name,
			  ini->lineno, line);
		ini->errors++;
		return false;
	}
	len = (size_t)(end - line - 1);
	dot = memchr(line + 1, '.', len);
	tlen = dot ? (size_t)(dot - line - 1) : len;
	if (tlen == 6 && !strncasecmp(line + 1, "global", 6) && dot == NULL)
		ok = true;
	for (size_t i = 0; i < 3 && !ok; i++) {
		if (tlen == strlen(types[i]) && !strncasecmp(line + 1, types[i], tlen) &&
		    (dot == NULL || dot + 1 < end))
			ok = true;
	}
	if (!ok) {
		log_warn("conf",
			 "%s:%u: unknown section [%.*s] ignored: expected [global], "
			 "[mon], [osd], [client] or [TYPE.ID] like [osd.3]",
			 ini->name, ini->lineno, (int)len, line + 1);
		ini->conf->warnings++;
	}
	return true;
}

/* ini_reader: one physical line per call, so ini->lineno is the handler's line. */
static char *conf_ini_reader(char *str, int num, void *stream)
{
	struct conf_ini *ini = stream;
	char line[4096];
	bool too_long;
	char *p, *q;

	if (!conf_ini_getline(ini, line, sizeof(line), &too_long))
		return NULL;
	ini->lineno++;
	p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	if (ini->lineno == 1 && !strncmp(p, "\xEF\xBB\xBF", 3))
		p += 3;
	/*
	 * "key = value   # comment": '#' after whitespace starts a comment,
	 * except inside a "quoted value".
	 */
	bool quoted = *p == '"';

	for (q = p + 1; *p && *q; q++) {
		if (*q == '"')
			quoted = !quoted;
		if (!quoted && *q == '#' && (q[-1] == ' ' || q[-1] == '\t')) {
			*q = '\0';
			break;
		}
	}
	if (too_long || strlen(p) + 3 > (size_t)num) {
		log_error("conf", "%s:%u: line is longer than %d characters", ini->name,
			  ini->lineno, num - 3);
		ini->errors++;
		p = "";
	} else if (*p == '[') {
		if (!conf_ini_check_section(ini, p)) {
			/* Close it so the keys below are not reported as outside a section. */
			snprintf(str, (size_t)num, "%s]\n", p);
			return str;
		}
	} else if (*p != '\0' && *p != '#' && *p != ';' && strpbrk(p, "=:") == NULL) {
		log_error("conf",
			  "%s:%u: syntax error in \"%s\": expected \"key = value\" or "
			  "\"[section]\"",
			  ini->name, ini->lineno, p);
		ini->errors++;
		p = "";
	}
	snprintf(str, (size_t)num, "%s\n", p);
	return str;
}

/* Which level a section applies at for this entity, or apply false. */
static void conf_ini_classify(struct conf_ini *ini, const char *section)
{
	struct conf *conf = ini->conf;
	const char *dot = strchr(section, '.');
	size_t tlen = dot ? (size_t)(dot - section) : strlen(section);

	snprintf(ini->section, sizeof(ini->section), "%s", section);
	ini->section_valid = true;
	ini->apply = false;
	if (!strcasecmp(section, "global")) {
		ini->level = CONF_LEVEL_GLOBAL;
		ini->apply = true;
	} else if (tlen == strlen(conf->type) && !strncasecmp(section, conf->type, tlen)) {
		if (dot == NULL) {
			ini->level = CONF_LEVEL_TYPE;
			ini->apply = true;
		} else if (conf->id[0] && !strcasecmp(dot + 1, conf->id)) {
			ini->level = CONF_LEVEL_ID;
			ini->apply = true;
		}
	}
}

static int conf_ini_handler(void *user, const char *section, const char *name, const char *value)
{
	struct conf_ini *ini = user;
	char origin[CONF_ORIGIN_MAX], buf[4096];
	enum conf_key key;
	size_t vlen;
	int rc;

	if (!ini->section_valid || strcmp(section, ini->section) != 0)
		conf_ini_classify(ini, section);
	if (name[0] == '\0') {
		log_error("conf", "%s:%u: missing key before '=' (value \"%s\")", ini->name,
			  ini->lineno, value);
		ini->errors++;
		return 1;
	}
	if (conf_key_lookup(name, &key) != 0) {
		log_warn("conf", "%s:%u: unknown option \"%s\" ignored (see 'weft config help')",
			 ini->name, ini->lineno, name);
		ini->conf->warnings++;
		return 1;
	}
	/* Allow "quoted values". */
	vlen = strlen(value);
	if (vlen >= 2 && vlen < sizeof(buf) && value[0] == '"' && value[vlen - 1] == '"') {
		memcpy(buf, value + 1, vlen - 2);
		buf[vlen - 2] = '\0';
		value = buf;
	}
	snprintf(origin, sizeof(origin), "%s:%u", ini->name, ini->lineno);
	if (section[0] == '\0') {
		log_warn("conf", "%s: %s is outside any section and ignored; put it under [global]",
			 origin, conf_opt_table[key].name);
		ini->conf->warnings++;
	}
	rc = conf_slot_assign(ini->conf, key, ini->level, value, origin,
			      ini->apply && section[0] != '\0');
	if (rc == -ENOMEM)
		return 0;
	if (rc != 0)
		ini->errors++;
	return 1;
}

static int conf_ini_run(struct conf_ini *ini)
{
	int rc;

	rc = ini_parse_stream(conf_ini_reader, ini, conf_ini_handler, ini);
	if (rc == -2) {
		log_error("conf", "%s: out of memory while parsing", ini->name);
		return -ENOMEM;
	}
	if (ini->errors > 0)
		return -EINVAL;
	if (rc != 0) {
		/* A syntax error inih found that the reader did not flag. */
		log_error("conf", "%s:%d: syntax error: expected \"key = value\" or \"[section]\"",
			  ini->name, rc);
		return -EINVAL;
	}
	return 0;
}

int conf_load_file(struct conf *conf, const char *path)
{
	struct conf_ini ini = {.conf = conf, .name = path};
	int rc;

	ini.file = fopen(path, "r");
	if (ini.file == NULL) {
		rc = -errno;
		log_error("conf", "%s: cannot open conf file: %s", path, strerror(-rc));
		return rc;
	}
	rc = conf_ini_run(&ini);
	if (rc == 0 && ferror(ini.file)) {
		log_error("conf", "%s: read error", path);
		rc = -EIO;
	}
	fclose(ini.file);
	return rc;
}

int conf_load_string(struct conf *conf, const char *text, const char *name)
{
	struct conf_ini ini = {.conf = conf, .name = name ? name : "(string)", .text = text};

	return conf_ini_run(&ini);
}

int conf_apply_env(struct conf *conf)
{
	int rc = 0;

	for (unsigned int i = 0; i < CONF_KEY_COUNT; i++) {
		char var[CONF_KEY_MAX + 8], origin[CONF_KEY_MAX + 16];
		const char *value;
		size_t n;
		int r;

		n = (size_t)snprintf(var, sizeof(var), "WEFT_%s", conf_opt_table[i].name);
		for (size_t j = 5; j < n; j++)
			var[j] = (char)toupper((unsigned char)var[j]);
		value = getenv(var);
		if (value == NULL)
			continue;
		snprintf(origin, sizeof(origin), "env %s", var);
		r = conf_slot_assign(conf, (enum conf_key)i, CONF_LEVEL_ENV, value, origin, true);
		if (r != 0 && rc == 0)
			rc = r; /* keep going: report every bad variable */
	}
	return rc;
}

int conf_set(struct conf *conf, const char *key, const char *value, const char *origin)
{
	enum conf_key k;

	if (origin == NULL)
		origin = "conf_set";
	if (conf_key_lookup(key, &k) != 0) {
		log_error("conf", "%s: unknown option \"%s\" (see 'weft config help')", origin,
			  key);
		return -ENOENT;
	}
	return conf_slot_assign(conf, k, CONF_LEVEL_ARG, value, origin, true);
}

int conf_apply_args(struct conf *conf, int *argc, char **argv)
{
	int n = *argc, kept = 0, rc = 0;
	char **keep;

	keep = calloc((size_t)n + 1, sizeof(*keep));
	if (keep == NULL)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		const char *arg = argv[i], *eq, *value;
		char name[CONF_KEY_MAX], origin[CONF_KEY_MAX + 4];
		enum conf_key key;
		size_t nlen;

		if (!strcmp(arg, "--")) {
			while (i < n)
				keep[kept++] = argv[i++];
			break;
		}
		if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
			keep[kept++] = argv[i];
			continue;
		}
		eq = strchr(arg + 2, '=');
		nlen = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
		if (nlen >= sizeof(name)) {
			keep[kept++] = argv[i];
			continue;
		}
		memcpy(name, arg + 2, nlen);
		name[nlen] = '\0';
		if (conf_key_lookup(name, &key) != 0) {
			keep[kept++] = argv[i];
			continue;
		}
		snprintf(origin, sizeof(origin), "--%s", name);
		if (eq != NULL) {
			value = eq + 1;
		} else if (conf_opt_table[key].type == CONF_BOOL &&
			   (i + 1 >= n || argv[i + 1][0] == '-')) {
			value = "true"; /* a bare --flag */
		} else if (i + 1 >= n) {
			log_error("conf", "%s: missing value (use --%s=VALUE)", origin, name);
			rc = -EINVAL;
			goto out;
		} else {
			value = argv[++i];
		}
		rc = conf_slot_assign(conf, key, CONF_LEVEL_ARG, value, origin, true);
		if (rc != 0)
			goto out;
	}
	memcpy(argv, keep, (size_t)kept * sizeof(*argv));
	if (kept < n)
		argv[kept] = NULL;
	*argc = kept;
out:
	free(keep);
	return rc;
}
