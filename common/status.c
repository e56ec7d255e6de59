/* SPDX-License-Identifier: Apache-2.0 */
/* weft_strerror: names 0, -errno and -WEFT_E_* codes. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "weft/weft.h"

#define STATUS_BUF_LEN 128

static _Thread_local char status_buf[STATUS_BUF_LEN];

static const char *status_weft_name(int code)
{
	switch (code) {
	case WEFT_E_BADCONF:
		return "invalid configuration";
	case WEFT_E_NOQUORUM:
		return "monitors have no quorum";
	case WEFT_E_NOBACKEND:
		return "no usable fabric backend";
	case WEFT_E_AUTH:
		return "authentication failed";
	case WEFT_E_BADKEY:
		return "remote key unknown or revoked";
	case WEFT_E_CORRUPT:
		return "checksum mismatch on stored data";
	case WEFT_E_BLOCKLISTED:
		return "this client instance is blocklisted (fenced)";
	default:
		return NULL;
	}
}

const char *weft_strerror(int rc)
{
	const char *s;

	if (rc == 0)
		return "success";
	if (rc < 0 && rc > -WEFT_ERRNO_BASE) {
		/* strerrorname_np() is NULL for numbers glibc does not know. */
		if (strerrorname_np(-rc) != NULL)
			return strerror_r(-rc, status_buf, sizeof(status_buf));
	} else if (rc < 0 && rc > -WEFT_ERRNO_MAX) {
		s = status_weft_name(-rc);
		if (s != NULL)
			return s;
	}
	snprintf(status_buf, sizeof(status_buf), "unknown error %d", rc);
	return status_buf;
}
