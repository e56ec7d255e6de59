/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Configuration: one typed table of options (conf_opts.def), values from a
 * ceph.conf-style INI file (parsed with libinih), WEFT_<KEY> environment
 * variables and --key=value flags.
 *
 * Precedence, highest first: --key=value, WEFT_<KEY>, [type.id], [type],
 * [global], the table's default. Keys are case-insensitive and may use
 * spaces, dashes or underscores ("osd heartbeat grace" == "osd_heartbeat_grace").
 * Unknown keys are warnings naming file and line; bad values are errors
 * naming file, line, key and what was expected.
 *
 * String values expand $type, $id and $name ("osd", "3", "osd.3").
 */
#ifndef WEFT_COMMON_CONF_H
#define WEFT_COMMON_CONF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum conf_type {
	CONF_BOOL,     /* true/false/yes/no/on/off/1/0 */
	CONF_INT,      /* signed 64-bit, range-checked */
	CONF_SIZE,     /* bytes; suffixes K M G T (powers of 1024), KiB/KB accepted */
	CONF_DURATION, /* stored in microseconds; suffixes us ms s m h, bare number = seconds */
	CONF_STR,      /* free string, or one of a '|'-separated choice list */
	CONF_ADDRS,    /* list of ip[:port] ("[v6]:port" for IPv6), comma or space separated */
	CONF_NETS,     /* list of CIDR networks (ip/prefix), comma or space separated */
};

/* Which daemons read an option (bit mask). */
#define CONF_WHO_MON 0x1u
#define CONF_WHO_OSD 0x2u
#define CONF_WHO_CLIENT 0x4u
#define CONF_WHO_ALL 0x7u

/* Units for the table's min/max: durations are microseconds, sizes bytes. */
#define CONF_US(x) ((int64_t)(x))
#define CONF_MS(x) ((int64_t)(x) * 1000)
#define CONF_SEC(x) ((int64_t)(x) * 1000000)
#define CONF_MIN(x) (CONF_SEC(x) * 60)
#define CONF_HOUR(x) (CONF_MIN(x) * 60)
#define CONF_KIB(x) ((int64_t)(x) << 10)
#define CONF_MIB(x) ((int64_t)(x) << 20)
#define CONF_GIB(x) ((int64_t)(x) << 30)

struct conf_opt_def {
	const char *name;
	enum conf_type type;
	const char *def;     /* default, in the same text form the file uses */
	int64_t min, max;    /* range for INT/SIZE/DURATION (in the stored unit) */
	const char *choices; /* STR only: "a|b|c" or NULL for free text */
	unsigned int who;
	const char *help;
};

enum conf_key {
#define CONF_OPT(id, name, type, def, min, max, choices, who, help) CONF_##id,
#include "common/conf_opts.def"
#undef CONF_OPT
	CONF_KEY_COUNT
};

extern const struct conf_opt_def conf_opt_table[CONF_KEY_COUNT];

struct conf_addr {
	char ip[46];   /* numeric IPv4 or IPv6 */
	uint16_t port; /* 0 when not given */
	int family;    /* AF_INET or AF_INET6 */
};

struct conf_net {
	char ip[46];
	unsigned int prefix;
	int family;
};

struct conf;

/*
 * entity: "osd.3", "mon.a", "client.admin" or a bare type ("client").
 * Every option starts at its default.
 */
int conf_create(const char *entity, struct conf **conf_out);
void conf_destroy(struct conf *conf);

/* Parse an INI file. -ENOENT/-EACCES if it cannot be read, -EINVAL on any bad value. */
int conf_load_file(struct conf *conf, const char *path);
/* Same, from a string; name is used in messages instead of a path. */
int conf_load_string(struct conf *conf, const char *text, const char *name);
/* Apply every WEFT_<KEY> variable of the environment. -EINVAL on a bad value. */
int conf_apply_env(struct conf *conf);
/*
 * Consume every --key=value (or --key value) whose key is an option; other
 * arguments are left in argv (order kept) and *argc is updated.
 */
int conf_apply_args(struct conf *conf, int *argc, char **argv);
/* Set one option from text at command-line precedence; origin is for messages. */
int conf_set(struct conf *conf, const char *key, const char *value, const char *origin);

/* Normalised lookup by name; -ENOENT if unknown. */
int conf_key_lookup(const char *name, enum conf_key *key_out);

bool conf_get_bool(const struct conf *conf, enum conf_key key);
int64_t conf_get_int(const struct conf *conf, enum conf_key key);
uint64_t conf_get_size(const struct conf *conf, enum conf_key key);
uint64_t conf_get_duration_us(const struct conf *conf, enum conf_key key);
/* A STR option's value ($-expanded); for other types, the text the value was given as. */
const char *conf_get_str(const struct conf *conf, enum conf_key key);
/* Parsed list; *count_out may be 0. Valid until the option changes. */
const struct conf_addr *conf_get_addrs(const struct conf *conf, enum conf_key key,
				       unsigned int *count_out);
const struct conf_net *conf_get_nets(const struct conf *conf, enum conf_key key,
				     unsigned int *count_out);
/* Where the current value came from: "default", "weft.conf:12", "env WEFT_X", "--x". */
const char *conf_get_origin(const struct conf *conf, enum conf_key key);
const char *conf_entity(const struct conf *conf);

/* Warnings (unknown keys or sections) seen by the load functions so far. */
unsigned int conf_warning_count(const struct conf *conf);

/* "config show": every option, value and origin (only non-defaults unless all). */
void conf_dump(const struct conf *conf, FILE *out, bool all);
/* "config help": the option table as text or as a markdown reference. */
void conf_help_print(FILE *out, bool markdown);

#endif
