/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The version of this build: the project version from CMakeLists.txt and
 * the git commit it was built from (generated/weft_version.h, rewritten at
 * build time by cmake/WeftVersionGen.cmake). Every binary prints it for
 * --version and daemons log it at start; the connection hello carries it
 * (proto/hello.h) so a refusal can name both sides' versions.
 */
#ifndef WEFT_COMMON_VERSION_H
#define WEFT_COMMON_VERSION_H

#include <stdbool.h>

/* "0.1.0" */
const char *weft_version_number(void);
/* "c9582dd4a1b2" or "c9582dd4a1b2-dirty" or "unknown" */
const char *weft_version_commit(void);
/* "0.1.0 (git c9582dd4a1b2)": what --version prints after the program name */
const char *weft_version_full(void);
/*
 * If any argument is --version, print "PROG 0.1.0 (git ...)" on stdout and
 * return true: the caller exits 0. Checked before other parsing so it works
 * without the arguments a binary otherwise requires.
 */
bool weft_version_arg(int argc, char **argv, const char *prog);

#endif
