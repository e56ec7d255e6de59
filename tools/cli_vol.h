/* SPDX-License-Identifier: Apache-2.0 */
/* weft vol: arguments shared by cmd_vol.c (metadata commands) and cmd_vol_bench.c. */
#ifndef WEFT_TOOLS_CLI_VOL_H
#define WEFT_TOOLS_CLI_VOL_H

#include <stdbool.h>
#include <stdint.h>

#include "weft/volume.h"

#define CLI_VOL_WORDS_MAX 8
#define CLI_VOL_SETS_MAX  16

struct cli_vol_args {
	const char *conf_file;
	const char *name; /* entity, client.admin */
	bool json;
	const char *timeout; /* client_op_timeout value, or NULL */
	const char *words[CLI_VOL_WORDS_MAX];
	int nwords;
	/* option values: NULL when not given */
	const char *size, *object_size, *stripe_unit, *stripe_count, *holder;
	const char *io_type, *io_size, *io_threads, *io_total, *io_pattern, *rw_mix_read;
	bool allow_shrink, exclusive;
	const char *sets[CLI_VOL_SETS_MAX]; /* --KEY=VALUE conf options */
	int nsets;
};

/* "10G", "4M", "4096", "1.5T" (powers of 1024; B, iB accepted) -> bytes. 0 or -EINVAL. */
int cli_vol_parse_size(const char *s, uint64_t *v_out);
/* "POOL/NAME": pool into pool (cap bytes), name pointer into spec. 0 or -EINVAL. */
int cli_vol_split(const char *spec, char *pool, size_t cap, const char **name_out);
/* Connect as args say and look the pool up. 0, or an exit code (1) with the reason printed. */
int cli_vol_connect(const struct cli_vol_args *a, const char *pool, struct weft_cluster **cl_out,
		    uint32_t *pool_id_out);
/* One usage line on stderr; returns 2. */
int cli_vol_usage_err(const char *fmt, const char *arg);

/* cmd_vol_bench.c */
int cli_vol_bench(const struct cli_vol_args *a);

#endif
