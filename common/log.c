/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Logging. Each line is formatted into one buffer and written with one
 * write(2) so lines from threads (and, with O_APPEND, from processes sharing
 * the file) never interleave. The mutex only guards the destination and the
 * entity; the level is read without it.
 */
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define LOG_LINE_MAX   4096
#define LOG_ENTITY_MAX 64

#define LOG_PATH_MAX   4096
#define LOG_SUBSYS_MAX 16

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1; /* -1 = stderr */
static char log_entity[LOG_ENTITY_MAX];
static char log_path[LOG_PATH_MAX]; /* what weft_log_reopen() opens again; "" = stderr */
static atomic_int log_level = WEFT_LOG_INFO;
static atomic_bool log_muted;

/*
 * Per-subsystem thresholds (debug_osd = debug). Set rarely, read on every
 * line: the count is published last, so a reader sees only filled slots.
 */
static struct {
	char name[16];
	atomic_int level; /* -1: the global level */
} log_subsys[LOG_SUBSYS_MAX];
static atomic_uint log_nsubsys;

static const char *const log_level_names[] = {"error", "warn", "info", "debug"};
static const char *const log_level_tags[] = {"ERROR", "WARN", "INFO", "DEBUG"};

const char *weft_log_level_name(enum weft_log_level level)
{
	if ((unsigned int)level > WEFT_LOG_DEBUG)
		return "unknown";
	return log_level_names[level];
}

int weft_log_level_parse(const char *s, enum weft_log_level *level_out)
{
	if (s == NULL)
		return -EINVAL;
	for (unsigned int i = 0; i <= WEFT_LOG_DEBUG; i++) {
		if (!strcasecmp(s, log_level_names[i]) || (s[0] == (char)('0' + i) && !s[1])) {
			*level_out = (enum weft_log_level)i;
			return 0;
		}
	}
	if (!strcasecmp(s, "warning")) {
		*level_out = WEFT_LOG_WARN;
		return 0;
	}
	return -EINVAL;
}

void weft_log_set_level(enum weft_log_level level)
{
	if (level > WEFT_LOG_DEBUG)
		level = WEFT_LOG_DEBUG;
	atomic_store(&log_level, (int)level);
}

enum weft_log_level weft_log_get_level(void)
{
	return (enum weft_log_level)atomic_load(&log_level);
}

void weft_log_mute(bool mute)
{
	atomic_store(&log_muted, mute);
}

int weft_log_set_subsys_level(const char *subsys, int level)
{
	unsigned int n;

	if (subsys == NULL || strlen(subsys) >= sizeof(log_subsys[0].name))
		return -EINVAL;
	if (level > WEFT_LOG_DEBUG)
		level = WEFT_LOG_DEBUG;
	if (level < -1)
		level = -1;
	pthread_mutex_lock(&log_lock);
	n = atomic_load(&log_nsubsys);
	for (unsigned int i = 0; i < n; i++) {
		if (!strcmp(log_subsys[i].name, subsys)) {
			atomic_store(&log_subsys[i].level, level);
			pthread_mutex_unlock(&log_lock);
			return 0;
		}
	}
	if (n == LOG_SUBSYS_MAX) {
		pthread_mutex_unlock(&log_lock);
		return -ENOSPC;
	}
	snprintf(log_subsys[n].name, sizeof(log_subsys[n].name), "%s", subsys);
	atomic_store(&log_subsys[n].level, level);
	atomic_store(&log_nsubsys, n + 1);
	pthread_mutex_unlock(&log_lock);
	return 0;
}

/* The threshold for a line of subsys: its own when set, else the global one. */
static int log_threshold(const char *subsys)
{
	unsigned int n = atomic_load(&log_nsubsys);

	for (unsigned int i = 0; subsys != NULL && i < n; i++) {
		if (!strcmp(log_subsys[i].name, subsys)) {
			int l = atomic_load(&log_subsys[i].level);

			return l >= 0 ? l : atomic_load(&log_level);
		}
	}
	return atomic_load(&log_level);
}

int weft_log_reopen(void)
{
	int fd, old;

	pthread_mutex_lock(&log_lock);
	if (log_path[0] == '\0') {
		pthread_mutex_unlock(&log_lock);
		return 0;
	}
	fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		int rc = -errno;

		/* keep writing to the old file: a log moved away beats no log */
		pthread_mutex_unlock(&log_lock);
		return rc;
	}
	old = log_fd;
	log_fd = fd;
	pthread_mutex_unlock(&log_lock);
	if (old >= 0)
		close(old);
	return 0;
}

int weft_log_open(const char *entity, enum weft_log_level level, const char *path)
{
	int rc = 0;
	int fd = -1;

	if (path != NULL && path[0] != '\0' && strcmp(path, "-") != 0) {
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
		if (fd < 0)
			rc = -errno;
	}
	pthread_mutex_lock(&log_lock);
	if (entity != NULL)
		snprintf(log_entity, sizeof(log_entity), "%s", entity);
	if (log_fd >= 0)
		close(log_fd);
	log_fd = fd;
	snprintf(log_path, sizeof(log_path), "%s", fd >= 0 ? path : "");
	pthread_mutex_unlock(&log_lock);
	weft_log_set_level(level);
	return rc;
}

void weft_log_close(void)
{
	pthread_mutex_lock(&log_lock);
	if (log_fd >= 0)
		close(log_fd);
	log_fd = -1;
	log_path[0] = '\0';
	pthread_mutex_unlock(&log_lock);
}

static void log_write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return; /* nowhere left to report it */
		}
		buf += n;
		len -= (size_t)n;
	}
}

void weft_vlog(enum weft_log_level level, const char *subsys, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX];
	struct timespec ts;
	struct tm tm;
	size_t len, msg_start;
	int n;

	/* muted, a bad conf file still says why: it is the command's own error */
	if ((atomic_load(&log_muted) && (subsys == NULL || strcmp(subsys, "conf") != 0)) ||
	    (int)level > log_threshold(subsys))
		return;
	if ((unsigned int)level > WEFT_LOG_DEBUG)
		level = WEFT_LOG_DEBUG;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	len = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);

	pthread_mutex_lock(&log_lock);
	n = snprintf(line + len, sizeof(line) - len, ".%06ldZ %s %s %s: ", ts.tv_nsec / 1000,
		     log_entity[0] ? log_entity : program_invocation_short_name,
		     subsys ? subsys : "-", log_level_tags[level]);
	len += (size_t)n;
	msg_start = len;
	n = vsnprintf(line + len, sizeof(line) - len, fmt, ap);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(line) - len) {
		/* Truncated: mark it and keep room for the newline. */
		len = sizeof(line) - 5;
		memcpy(line + len, "...", 3);
		len += 3;
	} else {
		len += (size_t)n;
	}
	/* One event, one line: trailing newlines go, embedded ones become spaces. */
	while (len > msg_start && line[len - 1] == '\n')
		len--;
	for (size_t i = msg_start; i < len; i++) {
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	}
	line[len++] = '\n';
	log_write_all(log_fd >= 0 ? log_fd : STDERR_FILENO, line, len);
	pthread_mutex_unlock(&log_lock);
}

void weft_log(enum weft_log_level level, const char *subsys, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	weft_vlog(level, subsys, fmt, ap);
	va_end(ap);
}
