/* SPDX-License-Identifier: Apache-2.0 */
/* Configuration internals shared by conf.c (table, values) and conf_parse.c (sources). */
#ifndef WEFT_COMMON_CONF_PRIV_H
#define WEFT_COMMON_CONF_PRIV_H

#include "common/conf.h"

/* Where a value came from; a value only replaces one from an equal or lower level. */
enum conf_level {
	CONF_LEVEL_DEFAULT = 0,
	CONF_LEVEL_GLOBAL, /* [global] */
	CONF_LEVEL_TYPE,   /* [osd] */
	CONF_LEVEL_ID,	   /* [osd.3] */
	CONF_LEVEL_ENV,	   /* WEFT_<KEY> */
	CONF_LEVEL_ARG,	   /* --key=value, conf_set() */
};

/* A parsed value. text is what was given (strings: after $-expansion). */
struct conf_value {
	char *text;
	union {
		bool b;
		int64_t i;
		uint64_t u;
	} num;
	void *list; /* struct conf_addr[] or struct conf_net[] */
	unsigned int count;
};

struct conf_slot {
	struct conf_value val;
	enum conf_level level;
	char *origin;
};

#define CONF_NAME_MAX 64
#define CONF_KEY_MAX  128

struct conf {
	char name[CONF_NAME_MAX]; /* "osd.3" */
	char type[CONF_NAME_MAX]; /* "osd" */
	char id[CONF_NAME_MAX];	  /* "3", or "" for a bare type */
	unsigned int warnings;
	struct conf_slot slots[CONF_KEY_COUNT];
};

/* "OSD heartbeat-Grace" -> "osd_heartbeat_grace". -ENAMETOOLONG if it does not fit. */
int conf_key_normalize(const char *in, char *out, size_t out_len);

/*
 * Parse text for key into *val_out (strings are $-expanded for conf's entity).
 * On a bad value, logs one error line "ORIGIN: key = "text": expected ..." and
 * returns -EINVAL.
 */
int conf_value_parse(const struct conf *conf, enum conf_key key, const char *text,
		     const char *origin, struct conf_value *val_out);
void conf_value_free(struct conf_value *val);

/* "1K..1G"-style range of def for messages and the help table (conf_help.c). */
void conf_fmt_range(char *buf, size_t len, const struct conf_opt_def *def);
const char *conf_type_name(enum conf_type type);

/*
 * Parse and, when level is at least the current one, store. With apply false
 * the value is only validated (a section for another entity).
 */
int conf_slot_assign(struct conf *conf, enum conf_key key, enum conf_level level, const char *text,
		     const char *origin, bool apply);

#endif
