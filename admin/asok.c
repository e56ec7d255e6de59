/* SPDX-License-Identifier: Apache-2.0 */
/* Admin socket: see asok.h. One request per connection, bounded buffers. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "admin/asok.h"
#include "common/clock.h"
#include "common/conf.h"
#include "common/conf_runtime.h"
#include "common/log.h"
#include "weft/weft.h"

#define ASOK_CMDS_MAX	  32
#define ASOK_CONNS_MAX	  16
#define ASOK_REQ_MAX	  4096 /* one request line */
#define ASOK_CONN_IDLE_MS 5000 /* a client that sends nothing is dropped */

struct asok_cmd {
	char *prefix;
	char *help;
	asok_cmd_cb cb;
	asok_args_cb args_cb; /* instead of cb: takes the words after the prefix */
	void *arg;
};

struct asok_conn {
	int fd; /* -1: slot free */
	uint64_t deadline_ms;
	char in[ASOK_REQ_MAX];
	size_t in_len;
	bool too_long;	     /* over ASOK_REQ_MAX: discarding up to the newline */
	struct asok_out out; /* reply being written; out.buf != NULL once answered */
	size_t out_off;
};

struct asok_conf_set;

struct asok {
	struct asok_conf_set *conf_set; /* "config set", when registered */
	int fd;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char who[32];
	struct asok_cmd cmds[ASOK_CMDS_MAX];
	unsigned int ncmds;
	struct asok_conn conns[ASOK_CONNS_MAX];
	unsigned int nconns;
};

static int asok_out_reserve(struct asok_out *out, size_t more)
{
	size_t cap;
	char *p;

	if (out->oom)
		return -ENOMEM;
	if (out->len + more + 1 <= out->cap)
		return 0;
	cap = out->cap ? out->cap : 1024;
	while (cap < out->len + more + 1)
		cap *= 2;
	p = realloc(out->buf, cap);
	if (p == NULL) {
		out->oom = true;
		return -ENOMEM;
	}
	out->buf = p;
	out->cap = cap;
	return 0;
}

void asok_printf(struct asok_out *out, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || asok_out_reserve(out, (size_t)n) != 0)
		return;
	va_start(ap, fmt);
	vsnprintf(out->buf + out->len, out->cap - out->len, fmt, ap);
	va_end(ap);
	out->len += (size_t)n;
}

void asok_put_str(struct asok_out *out, const char *s)
{
	json_t *v = json_string(s ? s : "");
	/* json_string of invalid UTF-8 is NULL and json_dumps(NULL) too */
	char *j = v ? json_dumps(v, JSON_ENCODE_ANY) : NULL;

	asok_printf(out, "%s", j ? j : "\"\"");
	free(j);
	json_decref(v);
}

const char *asok_path(const struct asok *asok)
{
	return asok->path;
}

int asok_fd(const struct asok *asok)
{
	return asok->fd;
}

static int asok_help_cb(void *arg, struct asok_out *out)
{
	struct asok *asok = arg;

	asok_printf(out, "{");
	for (unsigned int i = 0; i < asok->ncmds; i++) {
		asok_printf(out, "%s", i ? ", " : "");
		asok_put_str(out, asok->cmds[i].prefix);
		asok_printf(out, ": ");
		asok_put_str(out, asok->cmds[i].help);
	}
	asok_printf(out, "}");
	return 0;
}

static int asok_cmd_add(struct asok *asok, const char *prefix, const char *help, asok_cmd_cb cb,
			asok_args_cb args_cb, void *arg)
{
	struct asok_cmd *c;

	if (asok->ncmds == ASOK_CMDS_MAX)
		return -ENOSPC;
	for (unsigned int i = 0; i < asok->ncmds; i++)
		if (!strcmp(asok->cmds[i].prefix, prefix))
			return -EEXIST;
	c = &asok->cmds[asok->ncmds];
	c->prefix = strdup(prefix);
	c->help = strdup(help);
	if (c->prefix == NULL || c->help == NULL) {
		free(c->prefix);
		free(c->help);
		return -ENOMEM;
	}
	c->cb = cb;
	c->args_cb = args_cb;
	c->arg = arg;
	asok->ncmds++;
	return 0;
}

int asok_register(struct asok *asok, const char *prefix, const char *help, asok_cmd_cb cb,
		  void *arg)
{
	return asok_cmd_add(asok, prefix, help, cb, NULL, arg);
}

int asok_register_args(struct asok *asok, const char *prefix, const char *help, asok_args_cb cb,
		       void *arg)
{
	return asok_cmd_add(asok, prefix, help, NULL, cb, arg);
}

static int asok_conf_cb(void *arg, struct asok_out *out)
{
	const struct conf *conf = arg;

	asok_printf(out, "{\"entity\": ");
	asok_put_str(out, conf_entity(conf));
	asok_printf(out, ", \"options\": {");
	for (unsigned int i = 0; i < CONF_KEY_COUNT; i++) {
		asok_printf(out, "%s", i ? ", " : "");
		asok_put_str(out, conf_opt_table[i].name);
		asok_printf(out, ": {\"value\": ");
		asok_put_str(out, conf_get_str(conf, (enum conf_key)i));
		asok_printf(out, ", \"origin\": ");
		asok_put_str(out, conf_get_origin(conf, (enum conf_key)i));
		asok_printf(out, "}");
	}
	asok_printf(out, "}}");
	return 0;
}

int asok_register_conf(struct asok *asok, const struct conf *conf)
{
	return asok_register(asok, "config show", "every option: value and where it came from",
			     asok_conf_cb, (void *)conf);
}

struct asok_conf_set {
	struct conf *conf;
	asok_conf_applied_cb applied_cb;
	void *arg;
};

/* An error reply with our own words; the callback then returns 0. */
static void asok_fail(struct asok_out *out, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void asok_fail(struct asok_out *out, int status, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	free(out->buf);
	memset(out, 0, sizeof(*out));
	asok_printf(out, "{\"error\": ");
	asok_put_str(out, msg);
	asok_printf(out, ", \"status\": %d}", status);
}

static int asok_conf_set_cb(void *arg, const char *args, struct asok_out *out)
{
	struct asok_conf_set *cs = arg;
	char key[96];
	const char *value;
	enum conf_key k;
	size_t klen;

	while (*args == ' ')
		args++;
	klen = strcspn(args, " ");
	value = args + klen;
	while (*value == ' ')
		value++;
	if (klen == 0 || *value == '\0' || klen >= sizeof(key)) {
		asok_fail(out, -EINVAL, "usage: config set KEY VALUE");
		return 0;
	}
	memcpy(key, args, klen);
	key[klen] = '\0';
	if (conf_key_lookup(key, &k) != 0) {
		asok_fail(out, -ENOENT, "unknown option '%s' (see 'weft config help')", key);
		return 0;
	}
	if (!conf_is_runtime(k)) {
		asok_fail(out, -EPERM, "%s is read at start only: set it in the conf file and restart "
			  "the daemon", conf_opt_table[k].name);
		return 0;
	}
	if (conf_set(cs->conf, key, value, "admin socket") != 0) {
		asok_fail(out, -EINVAL, "bad value '%s' for %s (see 'weft config help')", value,
			  conf_opt_table[k].name);
		return 0;
	}
	if (cs->applied_cb != NULL)
		cs->applied_cb(cs->arg, (int)k);
	log_info("admin", "config set %s = %s", conf_opt_table[k].name, conf_get_str(cs->conf, k));
	asok_printf(out, "{\"set\": ");
	asok_put_str(out, conf_opt_table[k].name);
	asok_printf(out, ", \"value\": ");
	asok_put_str(out, conf_get_str(cs->conf, k));
	asok_printf(out, "}");
	return 0;
}

int asok_register_conf_set(struct asok *asok, struct conf *conf, asok_conf_applied_cb applied_cb,
			   void *arg)
{
	struct asok_conf_set *cs;

	if (asok->conf_set != NULL)
		return -EEXIST;
	cs = calloc(1, sizeof(*cs));
	if (cs == NULL)
		return -ENOMEM;
	cs->conf = conf;
	cs->applied_cb = applied_cb;
	cs->arg = arg;
	asok->conf_set = cs;
	return asok_register_args(asok, "config set",
				  "KEY VALUE: change an option marked runtime-changeable", asok_conf_set_cb,
				  cs);
}

/* Is something answering at path? Then it is not ours to replace. */
static bool asok_live(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool live;

	if (fd < 0)
		return false;
	live = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0;
	close(fd);
	return live;
}

int asok_create(const char *path, const char *who, struct asok **asok_out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct asok *asok;
	int rc;

	if (path == NULL || path[0] == '\0')
		return -EINVAL;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_error("admin", "%s: admin socket path too long (max %zu): %s", who,
			  sizeof(sa.sun_path) - 1, path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	asok = calloc(1, sizeof(*asok));
	if (asok == NULL)
		return -ENOMEM;
	snprintf(asok->who, sizeof(asok->who), "%s", who);
	strcpy(asok->path, path);
	for (unsigned int i = 0; i < ASOK_CONNS_MAX; i++)
		asok->conns[i].fd = -1;
	asok->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (asok->fd < 0) {
		rc = -errno;
		goto err_free;
	}
	if (access(path, F_OK) == 0) {
		if (asok_live(&sa)) {
			log_error("admin", "%s: %s is in use by a live daemon", who, path);
			rc = -EADDRINUSE;
			goto err_close;
		}
		unlink(path); /* stale, left by a crash */
	}
	if (bind(asok->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(asok->fd, 16) != 0) {
		rc = -errno;
		log_error("admin", "%s: admin socket %s: %s", who, path, strerror(-rc));
		goto err_close;
	}
	rc = asok_register(asok, "help", "list the commands", asok_help_cb, asok);
	if (rc != 0)
		goto err_unlink;
	*asok_out = asok;
	return 0;
err_unlink:
	unlink(path);
err_close:
	close(asok->fd);
err_free:
	free(asok);
	return rc;
}

static void asok_conn_close(struct asok *asok, struct asok_conn *c)
{
	close(c->fd);
	c->fd = -1;
	free(c->out.buf);
	memset(&c->out, 0, sizeof(c->out));
	c->out_off = 0;
	c->in_len = 0;
	c->too_long = false;
	asok->nconns--;
}

static void asok_error(struct asok_out *out, int status, const char *msg)
{
	free(out->buf);
	memset(out, 0, sizeof(*out));
	asok_printf(out, "{\"error\": ");
	asok_put_str(out, msg);
	asok_printf(out, ", \"status\": %d}", status);
}

/* Parse one request line and fill c->out with the reply. */
static void asok_handle(struct asok *asok, struct asok_conn *c)
{
	json_error_t jerr;
	json_t *req, *p;
	const char *prefix;
	char msg[160];
	int rc;

	c->in[c->in_len] = '\0';
	req = json_loads(c->in, JSON_REJECT_DUPLICATES, &jerr);
	p = json_is_object(req) ? json_object_get(req, "prefix") : NULL;
	if (!json_is_string(p)) {
		snprintf(msg, sizeof(msg), "bad request: %.120s",
			 req == NULL ? jerr.text : "expected {\"prefix\": \"COMMAND\"}");
		log_warn("admin", "%s: admin socket: %s", asok->who, msg);
		asok_error(&c->out, -EINVAL, msg);
		goto out;
	}
	prefix = json_string_value(p);
	for (unsigned int i = 0; i < asok->ncmds; i++) {
		const struct asok_cmd *cmd = &asok->cmds[i];
		size_t plen = strlen(cmd->prefix);

		if (cmd->args_cb != NULL && !strncmp(cmd->prefix, prefix, plen) &&
		    (prefix[plen] == '\0' || prefix[plen] == ' ')) {
			rc = cmd->args_cb(cmd->arg, prefix + plen + (prefix[plen] == ' '), &c->out);
		} else if (cmd->cb != NULL && !strcmp(cmd->prefix, prefix)) {
			rc = cmd->cb(cmd->arg, &c->out);
		} else {
			continue;
		}
		if (rc == 0 && c->out.oom)
			rc = -ENOMEM;
		if (rc != 0) {
			snprintf(msg, sizeof(msg), "%s: %s", prefix, weft_strerror(rc));
			log_warn("admin", "%s: admin socket: %s", asok->who, msg);
			asok_error(&c->out, rc, msg);
		}
		goto out;
	}
	snprintf(msg, sizeof(msg), "unknown command '%.64s' (try help)", prefix);
	log_warn("admin", "%s: admin socket: %s", asok->who, msg);
	asok_error(&c->out, -EINVAL, msg);
out:
	json_decref(req);
	asok_printf(&c->out, "\n");
	if (c->out.buf == NULL) { /* out of memory even for the error */
		c->out.buf = strdup("");
	}
}

/* 1 when the connection answered a request and is done or still writing. */
static int asok_conn_progress(struct asok *asok, struct asok_conn *c, uint64_t now)
{
	int served = 0;

	if (c->out.buf == NULL) {
		for (;;) {
			ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - 1 - c->in_len,
					 MSG_DONTWAIT);
			char *nl;

			if (n < 0 && (errno == EAGAIN || errno == EINTR))
				break;
			if (n <= 0 || (c->too_long && memchr(c->in, '\n', c->in_len + (size_t)n))) {
				/* EOF (a request without newline still counts) or the end of an
				 * over-long line: answer only once all of it is read, else the
				 * close would reset the connection before the reply is read */
				if (c->too_long) {
					log_warn("admin", "%s: admin socket: request over %d bytes",
						 asok->who, ASOK_REQ_MAX - 1);
					asok_error(&c->out, -E2BIG, "request too long");
					asok_printf(&c->out, "\n");
					break;
				}
				if (c->in_len == 0) {
					asok_conn_close(asok, c);
					return 0;
				}
				asok_handle(asok, c);
				served = 1;
				break;
			}
			if (c->too_long) {
				c->in_len = 0;
				continue;
			}
			c->in_len += (size_t)n;
			nl = memchr(c->in, '\n', c->in_len);
			if (nl != NULL) {
				c->in_len = (size_t)(nl - c->in);
				asok_handle(asok, c);
				served = 1;
				break;
			}
			if (c->in_len == sizeof(c->in) - 1) {
				c->too_long = true;
				c->in_len = 0;
			}
		}
		if (c->out.buf == NULL) {
			if (now >= c->deadline_ms)
				asok_conn_close(asok, c);
			return served;
		}
	}
	while (c->out_off < c->out.len) {
		ssize_t n = send(c->fd, c->out.buf + c->out_off, c->out.len - c->out_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			if (now >= c->deadline_ms)
				break; /* a reader that never reads */
			return served;
		}
		if (n <= 0)
			break;
		c->out_off += (size_t)n;
	}
	asok_conn_close(asok, c);
	return served;
}

int asok_progress(struct asok *asok)
{
	uint64_t now = clock_now_ms();
	int served = 0;

	for (;;) {
		int fd = accept4(asok->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		unsigned int i;

		if (fd < 0)
			break; /* EAGAIN, or a transient error: the next call tries again */
		if (asok->nconns == ASOK_CONNS_MAX) {
			static const char busy[] = "{\"error\": \"busy\", \"status\": -16}\n";

			(void)!send(fd, busy, sizeof(busy) - 1, MSG_DONTWAIT | MSG_NOSIGNAL);
			close(fd);
			continue;
		}
		for (i = 0; asok->conns[i].fd >= 0; i++)
			;
		asok->conns[i].fd = fd;
		asok->conns[i].deadline_ms = now + ASOK_CONN_IDLE_MS;
		asok->nconns++;
	}
	for (unsigned int i = 0; i < ASOK_CONNS_MAX && asok->nconns > 0; i++)
		if (asok->conns[i].fd >= 0)
			served += asok_conn_progress(asok, &asok->conns[i], now);
	return served;
}

void asok_destroy(struct asok *asok)
{
	if (asok == NULL)
		return;
	for (unsigned int i = 0; i < ASOK_CONNS_MAX; i++)
		if (asok->conns[i].fd >= 0)
			asok_conn_close(asok, &asok->conns[i]);
	close(asok->fd);
	unlink(asok->path);
	for (unsigned int i = 0; i < asok->ncmds; i++) {
		free(asok->cmds[i].prefix);
		free(asok->cmds[i].help);
	}
	free(asok->conf_set);
	free(asok);
}

int asok_request(const char *path, const char *prefix, const char *raw_line, int timeout_ms,
		 char **reply_out)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	uint64_t deadline = clock_now_ms() + (uint64_t)timeout_ms;
	struct asok_out req = {0}, rep = {0};
	size_t off = 0;
	int fd, rc;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	if (prefix != NULL) {
		asok_printf(&req, "{\"prefix\": ");
		asok_put_str(&req, prefix);
		asok_printf(&req, "}\n");
	} else {
		asok_printf(&req, "%s\n", raw_line);
	}
	if (req.oom)
		return -ENOMEM;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		rc = -errno;
		goto out;
	}
	while (off < req.len) {
		ssize_t n = send(fd, req.buf + off, req.len - off, MSG_NOSIGNAL);

		if (n < 0) {
			rc = -errno;
			goto out;
		}
		off += (size_t)n;
	}
	for (;;) {
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		uint64_t now = clock_now_ms();
		ssize_t n;

		if (now >= deadline) {
			rc = -ETIMEDOUT;
			goto out;
		}
		if (poll(&pfd, 1, (int)(deadline - now)) < 0 && errno != EINTR) {
			rc = -errno;
			goto out;
		}
		if (asok_out_reserve(&rep, 4096) != 0) {
			rc = -ENOMEM;
			goto out;
		}
		n = recv(fd, rep.buf + rep.len, rep.cap - rep.len - 1, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		rep.len += (size_t)n;
	}
	if (rep.buf == NULL || rep.len == 0) {
		rc = -ECONNRESET;
		goto out;
	}
	while (rep.len > 0 && rep.buf[rep.len - 1] == '\n')
		rep.len--;
	rep.buf[rep.len] = '\0';
	*reply_out = rep.buf;
	rep.buf = NULL;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(req.buf);
	free(rep.buf);
	return rc;
}
