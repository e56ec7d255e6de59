/* SPDX-License-Identifier: Apache-2.0 */
#include "common/pidfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

static pid_t pidfile_read(int fd)
{
	char buf[24];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (pid_t)strtol(buf, NULL, 10);
}

int weft_pidfile_lock(const char *path, int *fd_out, pid_t *holder_out)
{
	char buf[24];
	int fd, n, rc;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		rc = errno == EWOULDBLOCK ? -EEXIST : -errno;
		if (rc == -EEXIST)
			*holder_out = pidfile_read(fd);
		close(fd);
		return rc;
	}
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
		rc = -errno;
		close(fd);
		return rc;
	}
	*fd_out = fd;
	return 0;
}

void weft_pidfile_unlock(int fd)
{
	if (fd < 0)
		return;
	/*
	 * Emptied, not removed: a starter that opened the file just before an
	 * unlink would lock the removed inode while a third one created and
	 * locked a new file, and two daemons would run on one directory.
	 */
	if (ftruncate(fd, 0) != 0) {
		/* nothing to do: the lock, not the text, is what counts */
	}
	close(fd);
}
