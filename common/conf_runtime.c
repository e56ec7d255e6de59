/* SPDX-License-Identifier: Apache-2.0 */
#include "common/conf_runtime.h"

#include <string.h>

#include "common/log.h"

static const enum conf_key conf_runtime_keys[] = {
	CONF_LOG_LEVEL,	   CONF_DEBUG_OSD,	      CONF_DEBUG_MON,	     CONF_DEBUG_FABRIC,
	CONF_DEBUG_MSGR,   CONF_DEBUG_STORE,	      CONF_DEBUG_CLIENT,     CONF_DEBUG_ADMIN,
	/* read by the mons at each use */
	CONF_MON_ALLOW_POOL_DELETE, CONF_MON_BALANCER_ENABLE,
};

/* Which subsystem tags (the first argument of log_*) each debug_* option sets. */
static const struct {
	enum conf_key key;
	const char *subsys[3];
} log_conf_subsys[] = {
	{ CONF_DEBUG_OSD, { "osd" } },		{ CONF_DEBUG_MON, { "mon" } },
	{ CONF_DEBUG_FABRIC, { "fab" } },	{ CONF_DEBUG_MSGR, { "msgr", "monc", "proto" } },
	{ CONF_DEBUG_STORE, { "store" } },	{ CONF_DEBUG_CLIENT, { "client", "vol" } },
	{ CONF_DEBUG_ADMIN, { "admin", "metrics" } },
};

bool conf_is_runtime(enum conf_key key)
{
	for (size_t i = 0; i < sizeof(conf_runtime_keys) / sizeof(conf_runtime_keys[0]); i++)
		if (conf_runtime_keys[i] == key)
			return true;
	return false;
}

void weft_log_conf_apply(const struct conf *conf)
{
	enum weft_log_level level;

	if (weft_log_level_parse(conf_get_str(conf, CONF_LOG_LEVEL), &level) == 0)
		weft_log_set_level(level);
	for (size_t i = 0; i < sizeof(log_conf_subsys) / sizeof(log_conf_subsys[0]); i++) {
		const char *v = conf_get_str(conf, log_conf_subsys[i].key);
		int l = -1;

		if (v != NULL && strcmp(v, "default") != 0 && weft_log_level_parse(v, &level) == 0)
			l = (int)level;
		for (size_t k = 0; k < 3 && log_conf_subsys[i].subsys[k] != NULL; k++)
			weft_log_set_subsys_level(log_conf_subsys[i].subsys[k], l);
	}
}
