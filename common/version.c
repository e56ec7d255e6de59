/* SPDX-License-Identifier: Apache-2.0 */
#include "common/version.h"

#include <stdio.h>
#include <string.h>

#include "weft_version.h"

const char *weft_version_number(void)
{
	return WEFT_VERSION;
}

const char *weft_version_commit(void)
{
	return WEFT_GIT_COMMIT;
}

const char *weft_version_full(void)
{
	return WEFT_VERSION " (git " WEFT_GIT_COMMIT ")";
}

bool weft_version_arg(int argc, char **argv, const char *prog)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--version")) {
			printf("%s %s\n", prog, weft_version_full());
			return true;
		}
	}
	return false;
}
