/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Logging: one line per event, "TIMESTAMP ENTITY SUBSYS LEVEL: message".
 * Goes to stderr unless weft_log_open() names a file. Thread-safe: each line
 * is written with one write(2). Debug logs on the data path compile out
 * unless the build sets WEFT_DEBUG_LOG.
 */
#ifndef WEFT_COMMON_LOG_H
#define WEFT_COMMON_LOG_H

#include <stdarg.h>
#include <stdbool.h>

enum weft_log_level {
	WEFT_LOG_ERROR = 0,
	WEFT_LOG_WARN = 1,
	WEFT_LOG_INFO = 2,
	WEFT_LOG_DEBUG = 3,
};

/*
 * Set the entity name printed on every line ("osd.3", "client.admin"),
 * the threshold and the destination (path NULL or "" or "-" = stderr).
 * Returns 0 or -errno if the file cannot be opened (logging stays on stderr).
 */
int weft_log_open(const char *entity, enum weft_log_level level, const char *path);
void weft_log_close(void);
/*
 * Open the log file again by the path weft_log_open() was given (SIGHUP
 * after logrotate moved it): 0, or -errno with logging left on the old file.
 * No-op when logging to stderr.
 */
int weft_log_reopen(void);
/*
 * Drop every line but the conf parser's, which name the bad file, line and
 * value (the CLI without --verbose: its errors are its own one-liners).
 */
void weft_log_mute(bool mute);
/*
 * A threshold for one subsystem ("osd", "fab", ...) above or below the
 * global one; level -1 follows the global level again. -ENOSPC past 16.
 */
int weft_log_set_subsys_level(const char *subsys, int level);
void weft_log_set_level(enum weft_log_level level);
enum weft_log_level weft_log_get_level(void);
/* "error", "warn", "info", "debug" (or 0..3) -> level; -EINVAL otherwise. */
int weft_log_level_parse(const char *s, enum weft_log_level *level_out);
const char *weft_log_level_name(enum weft_log_level level);

void weft_log(enum weft_log_level level, const char *subsys, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void weft_vlog(enum weft_log_level level, const char *subsys, const char *fmt, va_list ap);

#define log_error(subsys, ...) weft_log(WEFT_LOG_ERROR, subsys, __VA_ARGS__)
#define log_warn(subsys, ...) weft_log(WEFT_LOG_WARN, subsys, __VA_ARGS__)
#define log_info(subsys, ...) weft_log(WEFT_LOG_INFO, subsys, __VA_ARGS__)
#ifdef WEFT_DEBUG_LOG
#define log_debug(subsys, ...) weft_log(WEFT_LOG_DEBUG, subsys, __VA_ARGS__)
#else
#define log_debug(subsys, ...)                                                                    \
	do {                                                                                       \
		if (0)                                                                             \
			weft_log(WEFT_LOG_DEBUG, subsys, __VA_ARGS__);                            \
	} while (0)
#endif

#endif
