/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The one naming rule for what an operator names: pools, volumes and
 * (when they come) snapshots. A name is 1 to MAX characters of A-Z a-z 0-9
 * '.' '_' '-', and does not start with '.' or '-': it can always be written
 * in "POOL/VOLUME" and "VOLUME@SNAP", on a command line and in an object name,
 * without quoting. MAX is 63 for pools (the map's field), 128 for volumes.
 */
#ifndef WEFT_COMMON_NAME_H
#define WEFT_COMMON_NAME_H

#include <stddef.h>

#define WEFT_NAME_RULE "1 to %zu characters of A-Z a-z 0-9 . _ -, not starting with . or -"

/*
 * 0, or -EINVAL and the reason in err: "pool name 'a b': a name is 1 to 63
 * characters of ... (' ' is not allowed)". kind: "pool", "volume", "snapshot".
 */
int weft_name_check(const char *kind, const char *name, size_t max, char *err, size_t errcap);

#endif
