/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Admin socket: a UNIX stream socket per daemon (option admin_socket)
 * serving one-line JSON commands, one per connection:
 *
 *   -> {"prefix": "perf dump"}\n
 *   <- {...}\n            (the command's JSON value, then the server closes)
 *   <- {"error": "...", "status": -22}\n   on a bad request or a failed command
 *
 * Non-blocking and thread-free: the daemon's reactor polls asok_fd() and
 * calls asok_progress() (cheap when idle; it also runs from a periodic
 * tick so a busy reactor that never sleeps in poll still answers).
 * "help" is built in; "config show" is registered by asok_register_conf().
 */
#ifndef WEFT_ADMIN_ASOK_H
#define WEFT_ADMIN_ASOK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct asok;
struct conf;

/* A growing reply buffer; on allocation failure it sets oom and drops output. */
struct asok_out {
	char *buf;
	size_t len, cap;
	bool oom;
};

/* Append one JSON value to out; 0 or a negative errno (reported as an error reply). */
typedef int (*asok_cmd_cb)(void *arg, struct asok_out *out);

/* Bind and listen at path (replacing a stale socket, refusing a live one). */
int asok_create(const char *path, const char *who, struct asok **asok_out);
void asok_destroy(struct asok *asok);
int asok_register(struct asok *asok, const char *prefix, const char *help, asok_cmd_cb cb,
		  void *arg);
/*
 * A command that takes words after its prefix ("object locate rbd obj1"):
 * the request matches when it is the prefix followed by a space, and cb
 * gets what follows it (never NULL; "" when the prefix came alone). The
 * words are client input: check them and answer -EINVAL on bad ones.
 */
typedef int (*asok_args_cb)(void *arg, const char *args, struct asok_out *out);
int asok_register_args(struct asok *asok, const char *prefix, const char *help, asok_args_cb cb,
		       void *arg);
/* "config show": every option with its value and origin. */
int asok_register_conf(struct asok *asok, const struct conf *conf);
/*
 * "config set KEY VALUE": options marked runtime-changeable (conf_runtime.h)
 * only; applied_cb (may be NULL) runs after each change so the daemon puts
 * the new value in force. Single-threaded like the rest of the socket.
 */
typedef void (*asok_conf_applied_cb)(void *arg, int key);
int asok_register_conf_set(struct asok *asok, struct conf *conf, asok_conf_applied_cb applied_cb,
			   void *arg);
/* The listening fd, for poll(POLLIN) or uv_poll. */
int asok_fd(const struct asok *asok);
/* Accept, read, answer and write what can be done without blocking: >= 0 requests served. */
int asok_progress(struct asok *asok);
const char *asok_path(const struct asok *asok);

void asok_printf(struct asok_out *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as a JSON string literal (quoted, escaped). */
void asok_put_str(struct asok_out *out, const char *s);

/*
 * Client side (CLI, tests): send prefix as {"prefix": ...}, or raw_line
 * verbatim when prefix is NULL; wait at most timeout_ms for the whole reply.
 * *reply_out is malloc'd, NUL-terminated, without the trailing newline.
 */
int asok_request(const char *path, const char *prefix, const char *raw_line, int timeout_ms,
		 char **reply_out);

#endif
