/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Admin socket (admin/asok.c) over a real UNIX socket: every built-in and
 * registered command, malformed requests, a failing command, a client that
 * never writes, a stale socket file, a live one. The server side is
 * progressed by a forked child so the client calls can block.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "admin/asok.h"
#include "common/conf.h"

static char dir[64], path[128];
static pid_t child = -1; /* the serving child, killed even when an assert fails */

static int perf_cb(void *arg, struct asok_out *out)
{
	asok_printf(out, "{\"ops\": %d, \"name\": ", *(int *)arg);
	asok_put_str(out, "a \"quoted\"\n name");
	asok_printf(out, "}");
	return 0;
}

static int fail_cb(void *arg, struct asok_out *out)
{
	asok_printf(out, "{\"partial\": ");
	return -EIO;
}

static int big_cb(void *arg, struct asok_out *out)
{
	asok_printf(out, "[");
	for (int i = 0; i < 50000; i++)
		asok_printf(out, "%s%d", i ? "," : "", i);
	asok_printf(out, "]");
	return 0;
}

/* Echoes the words after its prefix; "bad" is refused as bad input. */
static int echo_cb(void *arg, const char *args, struct asok_out *out)
{
	(void)arg;
	if (!strcmp(args, "bad"))
		return -EINVAL;
	asok_printf(out, "{\"args\": ");
	asok_put_str(out, args);
	asok_printf(out, "}");
	return 0;
}

/* Serve in a child until killed; the parent is the client. */
static pid_t serve(struct asok *a)
{
	pid_t pid = fork();

	if (pid == 0) {
		for (;;) {
			struct timespec ts = {0, 1000000};

			asok_progress(a);
			nanosleep(&ts, NULL);
		}
	}
	child = pid;
	return pid;
}

static void stop(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	child = -1;
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/weft-asok.XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/osd.7.asok", dir);
	return 0;
}

static int teardown(void **state)
{
	stop(child);
	unlink(path);
	rmdir(dir);
	return 0;
}

static void test_commands(void **state)
{
	struct conf *conf;
	struct asok *a;
	char *r = NULL;
	int ops = 42;
	pid_t pid;

	assert_int_equal(conf_create("osd.7", &conf), 0);
	assert_int_equal(conf_set(conf, "admin_socket", path, "test"), 0);
	assert_int_equal(asok_create(path, "osd.7", &a), 0);
	assert_string_equal(asok_path(a), path);
	assert_true(asok_fd(a) >= 0);
	assert_int_equal(asok_register(a, "perf dump", "counters", perf_cb, &ops), 0);
	assert_int_equal(asok_register(a, "perf dump", "again", perf_cb, &ops), -EEXIST);
	assert_int_equal(asok_register(a, "fail", "always fails", fail_cb, NULL), 0);
	assert_int_equal(asok_register(a, "big", "a large reply", big_cb, NULL), 0);
	assert_int_equal(asok_register_args(a, "object echo", "echo the words", echo_cb, NULL), 0);
	assert_int_equal(asok_register_args(a, "perf dump", "clash", echo_cb, NULL), -EEXIST);
	assert_int_equal(asok_register_conf(a, conf), 0);
	/* nothing pending: progress returns at once */
	assert_int_equal(asok_progress(a), 0);
	pid = serve(a);

	assert_int_equal(asok_request(path, "perf dump", NULL, 5000, &r), 0);
	assert_string_equal(r, "{\"ops\": 42, \"name\": \"a \\\"quoted\\\"\\n name\"}");
	free(r);
	assert_int_equal(asok_request(path, "help", NULL, 5000, &r), 0);
	assert_non_null(strstr(r, "\"help\": \"list the commands\""));
	assert_non_null(strstr(r, "\"perf dump\": \"counters\""));
	assert_non_null(strstr(r, "\"config show\""));
	free(r);
	assert_int_equal(asok_request(path, "config show", NULL, 5000, &r), 0);
	assert_non_null(strstr(r, "\"entity\": \"osd.7\""));
	assert_non_null(strstr(r, "\"admin_socket\": {\"value\": \""));
	assert_non_null(strstr(r, "\"origin\": \"test\""));
	assert_non_null(strstr(r, "\"log_level\": {\"value\": \"info\", \"origin\": \"default\"}"));
	free(r);
	assert_int_equal(asok_request(path, "big", NULL, 5000, &r), 0);
	assert_true(strlen(r) > 200000);
	assert_non_null(strstr(r, ",49999]"));
	free(r);
	/* a command with words: what follows the prefix, and nothing else, reaches it */
	assert_int_equal(asok_request(path, "object echo rbd obj 1", NULL, 5000, &r), 0);
	assert_string_equal(r, "{\"args\": \"rbd obj 1\"}");
	free(r);
	assert_int_equal(asok_request(path, "object echo", NULL, 5000, &r), 0);
	assert_string_equal(r, "{\"args\": \"\"}");
	free(r);
	assert_int_equal(asok_request(path, "object echoes x", NULL, 5000, &r), 0);
	assert_non_null(strstr(r, "unknown command"));
	free(r);
	assert_int_equal(asok_request(path, "object echo bad", NULL, 5000, &r), 0);
	assert_non_null(strstr(r, "\"status\": -22"));
	free(r);
	assert_int_equal(asok_request(path, "perf dump x", NULL, 5000, &r), 0);
	assert_non_null(strstr(r, "unknown command")); /* a plain command takes no words */
	free(r);
	assert_int_equal(asok_request(path, "help", NULL, 5000, &r), 0);
	assert_non_null(strstr(r, "\"object echo\": \"echo the words\""));
	free(r);
	/* a failing command: an error reply with its status, the partial output dropped */
	assert_int_equal(asok_request(path, "fail", NULL, 5000, &r), 0);
	assert_non_null(strstr(r, "\"status\": -5"));
	assert_null(strstr(r, "partial"));
	free(r);

	/* malformed input: error replies, and the server keeps serving */
	static const char *const bad[] = {
	    "perf dump",	      /* not JSON */
	    "{\"prefix\": 3}",	      /* wrong type */
	    "[\"perf dump\"]",	      /* not an object */
	    "{\"prefix\": \"nope\"}", /* unknown command */
	    "{\"prefix\": \"help\"",  /* truncated */
	    "{\"prefix\": \"a\", \"prefix\": \"b\"}",
	    "\xff\xfe\x01",
	    "",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(asok_request(path, NULL, bad[i], 5000, &r), 0);
		assert_non_null(strstr(r, "\"error\": "));
		assert_non_null(strstr(r, "\"status\": -22"));
		free(r);
	}
	/* a line longer than the request buffer */
	{
		size_t n = 10000;
		char *line = malloc(n + 1);

		memset(line, 'x', n);
		line[n] = '\0';
		assert_int_equal(asok_request(path, NULL, line, 5000, &r), 0);
		assert_non_null(strstr(r, "request too long"));
		free(r);
		free(line);
	}
	/* a request without newline, then EOF (echo -n | socat) */
	{
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);
		char buf[256];
		ssize_t n, got = 0;

		strcpy(sa.sun_path, path);
		assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		assert_int_equal(write(fd, "{\"prefix\":\"perf dump\"}", 22), 22);
		shutdown(fd, SHUT_WR);
		while ((n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
			got += n;
		buf[got] = '\0';
		assert_non_null(strstr(buf, "\"ops\": 42"));
		close(fd);
	}
	/* a silent client does not block others */
	{
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		strcpy(sa.sun_path, path);
		assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		assert_int_equal(asok_request(path, "perf dump", NULL, 5000, &r), 0);
		free(r);
		close(fd);
	}
	/* a live socket is not replaced */
	{
		struct asok *b;

		assert_int_equal(asok_create(path, "osd.7", &b), -EADDRINUSE);
	}
	stop(pid);
	asok_destroy(a);
	assert_int_equal(access(path, F_OK), -1);
	/* nobody listening */
	assert_int_equal(asok_request(path, "help", NULL, 1000, &r), -ENOENT);
	conf_destroy(conf);
}

static void test_stale_and_bad_paths(void **state)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct asok *a;
	char longp[200];
	int fd;

	/* a socket file left by a crash is replaced */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	strcpy(sa.sun_path, path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	assert_int_equal(asok_create(path, "osd.7", &a), 0);
	asok_destroy(a);

	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	assert_int_equal(asok_create(longp, "osd.7", &a), -ENAMETOOLONG);
	assert_int_equal(asok_create("", "osd.7", &a), -EINVAL);
	assert_int_equal(asok_create("/nonexistent-dir/x.asok", "osd.7", &a), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_commands, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_stale_and_bad_paths, setup, teardown),
	};

	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
