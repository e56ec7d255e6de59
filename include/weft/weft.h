/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Weft public client API.
 *
 * Every function returns 0 or a negative errno; a few Weft-specific
 * conditions use codes above WEFT_ERRNO_BASE. weft_strerror() names both.
 * The object and volume API arrives with libweft (client/).
 */
#ifndef WEFT_WEFT_H
#define WEFT_WEFT_H

#ifdef __cplusplus
extern "C" {
#endif

#define WEFT_VERSION_MAJOR 0
#define WEFT_VERSION_MINOR 1

/* Project status codes, returned negated like errno values. */
enum weft_status {
	WEFT_ERRNO_BASE = 4096,
	WEFT_E_BADCONF = 4097,	/* invalid configuration */
	WEFT_E_NOQUORUM = 4098, /* monitors have no quorum */
	WEFT_E_NOBACKEND = 4099, /* no usable fabric backend */
	WEFT_E_AUTH = 4100,	/* authentication failed */
	WEFT_E_BADKEY = 4101,	/* remote key unknown or revoked */
	WEFT_E_CORRUPT = 4102,	/* checksum mismatch on stored data */
	WEFT_ERRNO_MAX
};

/*
 * A human-readable string for rc (0, -errno or -WEFT_E_*). The result is
 * static or thread-local storage; never NULL.
 */
const char *weft_strerror(int rc);

#ifdef __cplusplus
}
#endif
#endif
