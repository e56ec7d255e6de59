/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The option table, value parsing per type and getters. Where values come
 * from (file, env, args) is conf_parse.c; showing options (config show /
 * help, units in messages) is conf_help.c.
 */
#include "common/conf_priv.h"

#include <arpa/inet.h>
#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"

const struct conf_opt_def conf_opt_table[CONF_KEY_COUNT] = {
#define CONF_OPT(id_, name_, type_, def_, min_, max_, choices_, who_, help_)                       \
	[CONF_##id_] = {.name = name_,                                                             \
			.type = type_,                                                             \
			.def = def_,                                                               \
			.min = min_,                                                               \
			.max = max_,                                                               \
			.choices = choices_,                                                       \
			.who = who_,                                                               \
			.help = help_},
#include "common/conf_opts.def"
#undef CONF_OPT
};

/* ---- names ---- */

int conf_key_normalize(const char *in, char *out, size_t out_len)
{
	size_t n = 0;
	bool sep = false;

	while (*in == ' ' || *in == '\t' || *in == '-' || *in == '_')
		in++;
	for (; *in; in++) {
		char c = *in;

		if (c == ' ' || c == '\t' || c == '-' || c == '_') {
			sep = true;
			continue;
		}
		if (sep) {
			if (n + 1 >= out_len)
				return -ENAMETOOLONG;
			out[n++] = '_';
			sep = false;
		}
		if (n + 1 >= out_len)
			return -ENAMETOOLONG;
		out[n++] = (char)tolower((unsigned char)c);
	}
	if (out_len == 0)
		return -ENAMETOOLONG;
	out[n] = '\0';
	return 0;
}

int conf_key_lookup(const char *name, enum conf_key *key_out)
{
	char norm[CONF_KEY_MAX];

	if (name == NULL || conf_key_normalize(name, norm, sizeof(norm)) != 0)
		return -ENOENT;
	for (unsigned int i = 0; i < CONF_KEY_COUNT; i++) {
		if (!strcmp(norm, conf_opt_table[i].name)) {
			*key_out = (enum conf_key)i;
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- value parsing ---- */

static void conf_value_error(const char *origin, const struct conf_opt_def *def, const char *text,
			     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void conf_value_error(const char *origin, const struct conf_opt_def *def, const char *text,
			     const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	log_error("conf", "%s: %s = \"%s\": %s", origin, def->name, text, why);
}

/* What a value of def's type looks like, with its range, for error messages. */
static void conf_expected(char *buf, size_t len, const struct conf_opt_def *def)
{
	char range[80], rr[96] = "";

	conf_fmt_range(range, sizeof(range), def);
	if (range[0])
		snprintf(rr, sizeof(rr), " (range %s)", range);
	switch (def->type) {
	case CONF_BOOL:
		snprintf(buf, len, "expected a boolean: true/false, yes/no, on/off or 1/0");
		break;
	case CONF_INT:
		if (range[0])
			snprintf(buf, len, "expected an integer in %s", range);
		else
			snprintf(buf, len, "expected an integer");
		break;
	case CONF_SIZE:
		snprintf(buf, len, "expected a size like 4096, 8K, 1M, 2GiB%s", rr);
		break;
	case CONF_DURATION:
		snprintf(buf, len, "expected a duration like 20s, 500ms, 50us, 10m, 1h%s", rr);
		break;
	case CONF_STR:
		snprintf(buf, len, "expected one of %s", def->choices ? def->choices : "any text");
		break;
	case CONF_ADDRS:
		snprintf(buf, len,
			 "expected IP[:port] addresses like 10.0.0.1:6789 or [fd00::1]:6789, "
			 "comma separated");
		break;
	case CONF_NETS:
		snprintf(buf, len,
			 "expected CIDR networks like 10.0.0.0/24 or fd00::/64, "
			 "comma separated");
		break;
	}
}

static int conf_parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = {"true", "yes", "on", "1"};
	static const char *const no[] = {"false", "no", "off", "0"};

	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(s, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

/* Decimal digits to uint64; -ERANGE on overflow, -EINVAL if there are none. */
static int conf_parse_digits(const char **sp, uint64_t *out)
{
	const char *s = *sp;
	uint64_t v = 0;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	for (; isdigit((unsigned char)*s); s++) {
		if (__builtin_mul_overflow(v, 10u, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*s - '0'), &v))
			return -ERANGE;
	}
	*sp = s;
	*out = v;
	return 0;
}

static int conf_parse_int(const char *s, int64_t *out)
{
	bool neg = false;
	uint64_t v;
	int rc;

	if (*s == '-' || *s == '+')
		neg = *s++ == '-';
	rc = conf_parse_digits(&s, &v);
	if (rc != 0)
		return rc;
	if (*s != '\0')
		return -EINVAL;
	if (neg) {
		if (v > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	} else {
		if (v > (uint64_t)INT64_MAX)
			return -ERANGE;
		*out = (int64_t)v;
	}
	return 0;
}

struct conf_unit {
	const char *suffix;
	uint64_t mult;
};

static const struct conf_unit conf_size_units[] = {
	{"", 1},
	{"b", 1},
	{"k", 1ull << 10},
	{"kb", 1ull << 10},
	{"kib", 1ull << 10},
	{"m", 1ull << 20},
	{"mb", 1ull << 20},
	{"mib", 1ull << 20},
	{"g", 1ull << 30},
	{"gb", 1ull << 30},
	{"gib", 1ull << 30},
	{"t", 1ull << 40},
	{"tb", 1ull << 40},
	{"tib", 1ull << 40},
	{NULL, 0},
};

static const struct conf_unit conf_duration_units[] = {
	{"", 1000000}, /* bare number: seconds */
	{"us", 1},	 {"ms", 1000},	    {"s", 1000000},	  {"sec", 1000000},
	{"m", 60000000}, {"min", 60000000}, {"h", 3600000000ull}, {NULL, 0},
};

/* number [spaces] unit; -ERANGE on overflow, -EINVAL on anything else. */
static int conf_parse_scaled(const char *s, const struct conf_unit *units, uint64_t *out)
{
	uint64_t v;
	int rc;

	rc = conf_parse_digits(&s, &v);
	if (rc != 0)
		return rc;
	while (*s == ' ' || *s == '\t')
		s++;
	for (; units->suffix; units++) {
		if (!strcasecmp(s, units->suffix)) {
			if (__builtin_mul_overflow(v, units->mult, &v))
				return -ERANGE;
			*out = v;
			return 0;
		}
	}
	return -EINVAL;
}

static bool conf_in_range(const struct conf_opt_def *def, int64_t v)
{
	return v >= def->min && v <= def->max;
}

static bool conf_u_in_range(const struct conf_opt_def *def, uint64_t v)
{
	return v <= (uint64_t)INT64_MAX && conf_in_range(def, (int64_t)v);
}

/* Returns a detail message, or NULL when the token is a good address. */
static const char *conf_parse_addr(const char *tok, struct conf_addr *a, char *why, size_t wlen)
{
	char host[64];
	const char *port = NULL;
	unsigned char bin[16];
	size_t hlen;

	memset(a, 0, sizeof(*a));
	if (tok[0] == '[') {
		const char *end = strchr(tok, ']');

		if (end == NULL) {
			snprintf(why, wlen, "\"%s\" has no closing ']'", tok);
			return why;
		}
		hlen = (size_t)(end - tok - 1);
		if (hlen >= sizeof(host))
			goto bad_ip;
		memcpy(host, tok + 1, hlen);
		host[hlen] = '\0';
		if (end[1] == ':')
			port = end + 2;
		else if (end[1] != '\0')
			goto bad_ip;
		a->family = AF_INET6;
	} else {
		const char *c1 = strchr(tok, ':');

		if (c1 != NULL && strchr(c1 + 1, ':') != NULL) {
			a->family = AF_INET6; /* bare IPv6, no port */
			hlen = strlen(tok);
		} else {
			a->family = AF_INET;
			hlen = c1 ? (size_t)(c1 - tok) : strlen(tok);
			port = c1 ? c1 + 1 : NULL;
		}
		if (hlen >= sizeof(host))
			goto bad_ip;
		memcpy(host, tok, hlen);
		host[hlen] = '\0';
	}
	if (inet_pton(a->family, host, bin) != 1)
		goto bad_ip;
	inet_ntop(a->family, bin, a->ip, sizeof(a->ip));
	if (port != NULL) {
		uint64_t p;
		const char *s = port;

		if (conf_parse_digits(&s, &p) != 0 || *s != '\0' || p < 1 || p > 65535) {
			snprintf(why, wlen, "bad port \"%s\" in \"%s\" (expected 1..65535)", port,
				 tok);
			return why;
		}
		a->port = (uint16_t)p;
	}
	return NULL;
bad_ip:
	snprintf(why, wlen, "\"%s\" is not a numeric %s address", tok,
		 a->family == AF_INET6 ? "IPv6" : "IPv4");
	return why;
}

static const char *conf_parse_net(const char *tok, struct conf_net *n, char *why, size_t wlen)
{
	const char *slash = strchr(tok, '/');
	unsigned char bin[16];
	char host[64];
	size_t hlen;
	uint64_t prefix;
	const char *s;

	memset(n, 0, sizeof(*n));
	if (slash == NULL) {
		snprintf(why, wlen, "\"%s\" has no /prefix", tok);
		return why;
	}
	hlen = (size_t)(slash - tok);
	n->family = memchr(tok, ':', hlen) ? AF_INET6 : AF_INET;
	if (hlen >= sizeof(host) ||
	    (memcpy(host, tok, hlen), host[hlen] = '\0', inet_pton(n->family, host, bin) != 1)) {
		snprintf(why, wlen, "\"%s\" is not a numeric %s network", tok,
			 n->family == AF_INET6 ? "IPv6" : "IPv4");
		return why;
	}
	s = slash + 1;
	if (conf_parse_digits(&s, &prefix) != 0 || *s != '\0' ||
	    prefix > (n->family == AF_INET6 ? 128u : 32u)) {
		snprintf(why, wlen, "bad prefix length \"%s\" in \"%s\" (expected 0..%u)",
			 slash + 1, tok, n->family == AF_INET6 ? 128u : 32u);
		return why;
	}
	inet_ntop(n->family, bin, n->ip, sizeof(n->ip));
	n->prefix = (unsigned int)prefix;
	return NULL;
}

/* Split on commas and whitespace; parse each token into a growing array. */
static int conf_parse_list(const struct conf_opt_def *def, const char *text, const char *origin,
			   struct conf_value *val)
{
	size_t elem = def->type == CONF_ADDRS ? sizeof(struct conf_addr) : sizeof(struct conf_net);
	const char *p = text;
	char *list = NULL;
	unsigned int count = 0;
	char why[256], expected[256];

	while (*p) {
		char tok[128];
		size_t len = strcspn(p, ", \t");
		const char *err;
		char *grown;

		if (len == 0) {
			p++;
			continue;
		}
		if (len >= sizeof(tok)) {
			snprintf(why, sizeof(why), "entry \"%.40s...\" is too long", p);
			err = why;
			goto bad;
		}
		memcpy(tok, p, len);
		tok[len] = '\0';
		p += len;
		grown = realloc(list, (count + 1) * elem);
		if (grown == NULL) {
			free(list);
			return -ENOMEM;
		}
		list = grown;
		if (def->type == CONF_ADDRS)
			err = conf_parse_addr(tok, (struct conf_addr *)(list + count * elem), why,
					      sizeof(why));
		else
			err = conf_parse_net(tok, (struct conf_net *)(list + count * elem), why,
					     sizeof(why));
		if (err != NULL)
			goto bad;
		count++;
	}
	val->list = list;
	val->count = count;
	return 0;
bad:
	free(list);
	conf_expected(expected, sizeof(expected), def);
	conf_value_error(origin, def, text, "%s; %s", why, expected);
	return -EINVAL;
}

/* Expand $type, $id, $name (also ${...}) into a new string. */
static char *conf_expand(const struct conf *conf, const char *text)
{
	static const char *const vars[] = {"type", "id", "name"};
	const char *vals[] = {conf->type, conf->id, conf->name};
	size_t cap = strlen(text) + 1, len = 0;
	char *out = malloc(cap);

	if (out == NULL)
		return NULL;
	for (const char *p = text; *p;) {
		const char *rep = NULL;
		size_t skip = 0;

		if (*p == '$') {
			bool brace = p[1] == '{';

			for (size_t i = 0; i < 3 && rep == NULL; i++) {
				size_t vl = strlen(vars[i]);
				const char *v = p + 1 + brace;

				if (strncmp(v, vars[i], vl) != 0)
					continue;
				if (brace && v[vl] != '}')
					continue;
				if (!brace && (isalnum((unsigned char)v[vl]) || v[vl] == '_'))
					continue;
				rep = vals[i];
				skip = 1 + brace + vl + brace;
			}
		}
		if (rep == NULL) {
			rep = p;
			skip = 1;
		}
		size_t rl = rep == p ? 1 : strlen(rep);

		if (len + rl + 1 > cap) {
			char *grown;

			cap = (len + rl + 1) * 2;
			grown = realloc(out, cap);
			if (grown == NULL) {
				free(out);
				return NULL;
			}
			out = grown;
		}
		memcpy(out + len, rep, rl);
		len += rl;
		p += skip;
	}
	out[len] = '\0';
	return out;
}

int conf_value_parse(const struct conf *conf, enum conf_key key, const char *text,
		     const char *origin, struct conf_value *val_out)
{
	const struct conf_opt_def *def = &conf_opt_table[key];
	struct conf_value val = {0};
	char expected[256];
	uint64_t u;
	int rc;

	assert((unsigned int)key < CONF_KEY_COUNT);
	conf_expected(expected, sizeof(expected), def);
	switch (def->type) {
	case CONF_BOOL:
		if (conf_parse_bool(text, &val.num.b) != 0)
			goto bad;
		break;
	case CONF_INT:
		rc = conf_parse_int(text, &val.num.i);
		if (rc == -ERANGE) {
			conf_value_error(origin, def, text, "integer overflow; %s", expected);
			return -EINVAL;
		}
		if (rc != 0 || !conf_in_range(def, val.num.i))
			goto bad;
		break;
	case CONF_SIZE:
	case CONF_DURATION:
		rc = conf_parse_scaled(
			text, def->type == CONF_SIZE ? conf_size_units : conf_duration_units, &u);
		if (rc == -ERANGE) {
			conf_value_error(origin, def, text, "value too large; %s", expected);
			return -EINVAL;
		}
		if (rc != 0 || !conf_u_in_range(def, u))
			goto bad;
		val.num.u = u;
		break;
	case CONF_STR:
		if (def->choices != NULL) {
			const char *c = def->choices;
			size_t tl = strlen(text);
			bool found = false;

			while (*c && !found) {
				size_t cl = strcspn(c, "|");

				if (cl == tl && !strncasecmp(c, text, tl)) {
					val.text = strndup(c, cl); /* the table's spelling */
					found = true;
				}
				c += cl + (c[cl] == '|');
			}
			if (!found)
				goto bad;
		} else {
			val.text = conf_expand(conf, text);
		}
		if (val.text == NULL)
			return -ENOMEM;
		*val_out = val;
		return 0;
	case CONF_ADDRS:
	case CONF_NETS:
		rc = conf_parse_list(def, text, origin, &val);
		if (rc != 0)
			return rc;
		break;
	}
	val.text = strdup(text);
	if (val.text == NULL) {
		free(val.list);
		return -ENOMEM;
	}
	*val_out = val;
	return 0;
bad:
	conf_value_error(origin, def, text, "%s", expected);
	return -EINVAL;
}

void conf_value_free(struct conf_value *val)
{
	free(val->text);
	free(val->list);
	memset(val, 0, sizeof(*val));
}

int conf_slot_assign(struct conf *conf, enum conf_key key, enum conf_level level, const char *text,
		     const char *origin, bool apply)
{
	struct conf_slot *slot = &conf->slots[key];
	struct conf_value val;
	char *origin_copy;
	int rc;

	rc = conf_value_parse(conf, key, text, origin, &val);
	if (rc != 0)
		return rc;
	if (!apply || level < slot->level) {
		conf_value_free(&val);
		return 0;
	}
	origin_copy = strdup(origin);
	if (origin_copy == NULL) {
		conf_value_free(&val);
		return -ENOMEM;
	}
	conf_value_free(&slot->val);
	free(slot->origin);
	slot->val = val;
	slot->origin = origin_copy;
	slot->level = level;
	return 0;
}

/* ---- life cycle ---- */

int conf_create(const char *entity, struct conf **conf_out)
{
	static const char *const types[] = {"mon", "osd", "client"};
	struct conf *conf;
	const char *dot;
	size_t tlen;
	bool known = false;
	int rc;

	if (entity == NULL || strlen(entity) >= CONF_NAME_MAX) {
		log_error("conf", "entity name \"%s\" is invalid or too long",
			  entity ? entity : "(null)");
		return -EINVAL;
	}
	dot = strchr(entity, '.');
	tlen = dot ? (size_t)(dot - entity) : strlen(entity);
	for (size_t i = 0; i < 3; i++)
		known |= strlen(types[i]) == tlen && !strncmp(types[i], entity, tlen);
	if (!known || (dot != NULL && dot[1] == '\0')) {
		log_error("conf",
			  "entity name \"%s\": expected TYPE or TYPE.ID with TYPE mon, osd "
			  "or client (e.g. osd.3, client.admin)",
			  entity);
		return -EINVAL;
	}
	conf = calloc(1, sizeof(*conf));
	if (conf == NULL)
		return -ENOMEM;
	snprintf(conf->name, sizeof(conf->name), "%s", entity);
	snprintf(conf->type, sizeof(conf->type), "%.*s", (int)tlen, entity);
	snprintf(conf->id, sizeof(conf->id), "%s", dot ? dot + 1 : "");
	for (unsigned int i = 0; i < CONF_KEY_COUNT; i++) {
		rc = conf_slot_assign(conf, (enum conf_key)i, CONF_LEVEL_DEFAULT,
				      conf_opt_table[i].def, "default", true);
		if (rc != 0)
			goto err_destroy; /* a bad default in the table: logged */
	}
	*conf_out = conf;
	return 0;
err_destroy:
	conf_destroy(conf);
	return rc;
}

void conf_destroy(struct conf *conf)
{
	if (conf == NULL)
		return;
	for (unsigned int i = 0; i < CONF_KEY_COUNT; i++) {
		conf_value_free(&conf->slots[i].val);
		free(conf->slots[i].origin);
	}
	free(conf);
}

/* ---- getters ---- */

static const struct conf_slot *conf_slot_get(const struct conf *conf, enum conf_key key,
					     enum conf_type type)
{
	assert((unsigned int)key < CONF_KEY_COUNT);
	assert(conf_opt_table[key].type == type);
	(void)type;
	return &conf->slots[key];
}

bool conf_get_bool(const struct conf *conf, enum conf_key key)
{
	return conf_slot_get(conf, key, CONF_BOOL)->val.num.b;
}

int64_t conf_get_int(const struct conf *conf, enum conf_key key)
{
	return conf_slot_get(conf, key, CONF_INT)->val.num.i;
}

uint64_t conf_get_size(const struct conf *conf, enum conf_key key)
{
	return conf_slot_get(conf, key, CONF_SIZE)->val.num.u;
}

uint64_t conf_get_duration_us(const struct conf *conf, enum conf_key key)
{
	return conf_slot_get(conf, key, CONF_DURATION)->val.num.u;
}

/* For a STR option its value; for any other type the text it was given as. */
const char *conf_get_str(const struct conf *conf, enum conf_key key)
{
	assert((unsigned int)key < CONF_KEY_COUNT);
	return conf->slots[key].val.text;
}

const struct conf_addr *conf_get_addrs(const struct conf *conf, enum conf_key key,
				       unsigned int *count_out)
{
	const struct conf_slot *slot = conf_slot_get(conf, key, CONF_ADDRS);

	*count_out = slot->val.count;
	return slot->val.list;
}

const struct conf_net *conf_get_nets(const struct conf *conf, enum conf_key key,
				     unsigned int *count_out)
{
	const struct conf_slot *slot = conf_slot_get(conf, key, CONF_NETS);

	*count_out = slot->val.count;
	return slot->val.list;
}

const char *conf_get_origin(const struct conf *conf, enum conf_key key)
{
	assert((unsigned int)key < CONF_KEY_COUNT);
	return conf->slots[key].origin;
}

const char *conf_entity(const struct conf *conf)
{
	return conf->name;
}

unsigned int conf_warning_count(const struct conf *conf)
{
	return conf->warnings;
}
