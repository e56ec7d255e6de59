/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Options a running daemon takes without a restart ('weft daemon osd.3
 * config set KEY VALUE'): the log thresholds, and options the daemons read
 * each time they use them. Every other option is read once at start, so
 * changing it in a running daemon would show a value that is not in force.
 */
#ifndef WEFT_COMMON_CONF_RUNTIME_H
#define WEFT_COMMON_CONF_RUNTIME_H

#include <stdbool.h>

#include "common/conf.h"

bool conf_is_runtime(enum conf_key key);
/* log_level and every debug_* option of conf into the logger's thresholds. */
void weft_log_conf_apply(const struct conf *conf);

#endif
