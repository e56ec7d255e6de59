/* SPDX-License-Identifier: Apache-2.0 */
#include "common/name.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

int weft_name_check(const char *kind, const char *name, size_t max, char *err, size_t errcap)
{
	size_t n = name != NULL ? strlen(name) : 0;
	char why[48] = "";
	int len;

	if (n == 0)
		snprintf(why, sizeof(why), " (it is empty)");
	else if (n > max)
		snprintf(why, sizeof(why), " (it has %zu)", n);
	else if (name[0] == '.' || name[0] == '-')
		snprintf(why, sizeof(why), " (it starts with '%c')", name[0]);
	for (size_t i = 0; why[0] == '\0' && i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (name_char_ok((char)c))
			continue;
		if (c >= 0x20 && c < 0x7f)
			snprintf(why, sizeof(why), " ('%c' is not allowed)", c);
		else
			snprintf(why, sizeof(why), " (byte 0x%02x is not allowed)", c);
	}
	if (why[0] == '\0')
		return 0;
	len = snprintf(err, errcap, "%s name '%.*s%s': a name is ", kind, 64, name ? name : "",
		       n > 64 ? "..." : "");
	if (len >= 0 && (size_t)len < errcap)
		len += snprintf(err + len, errcap - (size_t)len, WEFT_NAME_RULE, max);
	if (len >= 0 && (size_t)len < errcap)
		snprintf(err + len, errcap - (size_t)len, "%s", why);
	return -EINVAL;
}
