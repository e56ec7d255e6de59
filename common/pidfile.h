/* SPDX-License-Identifier: Apache-2.0 */
/*
 * One daemon per data directory: a pid file held with flock(2) for the
 * daemon's lifetime. A second start of the same OSD or monitor finds the
 * lock taken and says "osd.0 is already running (pid N)" instead of failing
 * later on a RocksDB lock or a bound port. The kernel drops the lock when
 * the process dies, so a crash never leaves a stale lock behind.
 */
#ifndef WEFT_COMMON_PIDFILE_H
#define WEFT_COMMON_PIDFILE_H

#include <sys/types.h>

/*
 * Lock path and write our pid into it. 0 and *fd_out (keep it open; close
 * it, or exit, to release), -EEXIST with *holder_out set to the running
 * daemon's pid (0 if it wrote none yet), or another negative errno.
 */
int weft_pidfile_lock(const char *path, int *fd_out, pid_t *holder_out);
/* Release: empty the file and close it (fd < 0: nothing). */
void weft_pidfile_unlock(int fd);

#endif
