/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/log.h"

static char log_path[] = "/tmp/weft-test-log-XXXXXX";

static int setup(void **state)
{
	int fd = mkstemp(log_path);

	(void)state;
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	weft_log_close();
	unlink(log_path);
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long len;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	return buf;
}

static void test_format_and_filter(void **state)
{
	regex_t re;
	char *text, *line2;

	(void)state;
	assert_int_equal(truncate(log_path, 0), 0);
	assert_int_equal(weft_log_open("osd.3", WEFT_LOG_WARN, log_path), 0);
	assert_int_equal(weft_log_get_level(), WEFT_LOG_WARN);
	log_error("fab", "qp 0x%x to RTS: %s", 0x2a, "Invalid argument");
	log_warn("conf", "two\nlines\n");
	log_info("osd", "filtered out");
	log_debug("osd", "compiled out");
	weft_log_close();

	text = slurp(log_path);
	assert_int_equal(
		regcomp(&re,
			"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z "
			"osd\\.3 fab ERROR: qp 0x2a to RTS: Invalid argument\n",
			REG_EXTENDED),
		0);
	assert_int_equal(regexec(&re, text, 0, NULL, 0), 0);
	regfree(&re);
	line2 = strchr(text, '\n') + 1;
	assert_non_null(strstr(line2, " osd.3 conf WARN: two lines\n"));
	assert_null(strstr(text, "filtered"));
	assert_null(strstr(text, "compiled"));
	/* exactly two lines */
	assert_null(strchr(strchr(line2, '\n') + 1, '\n'));
	free(text);
}

static void test_levels(void **state)
{
	enum weft_log_level l;

	(void)state;
	assert_int_equal(weft_log_level_parse("debug", &l), 0);
	assert_int_equal(l, WEFT_LOG_DEBUG);
	assert_int_equal(weft_log_level_parse("WARN", &l), 0);
	assert_int_equal(l, WEFT_LOG_WARN);
	assert_int_equal(weft_log_level_parse("0", &l), 0);
	assert_int_equal(l, WEFT_LOG_ERROR);
	assert_int_equal(weft_log_level_parse("info", &l), 0);
	assert_int_equal(l, WEFT_LOG_INFO);
	assert_int_equal(weft_log_level_parse("verbose", &l), -EINVAL);
	assert_int_equal(weft_log_level_parse("4", &l), -EINVAL);
	assert_string_equal(weft_log_level_name(WEFT_LOG_ERROR), "error");
	assert_string_equal(weft_log_level_name(WEFT_LOG_DEBUG), "debug");

	weft_log_set_level(WEFT_LOG_DEBUG);
	assert_int_equal(weft_log_get_level(), WEFT_LOG_DEBUG);
}

static void test_open_fails(void **state)
{
	(void)state;
	assert_int_equal(weft_log_open("mon.a", WEFT_LOG_INFO, "/nonexistent/dir/x.log"), -ENOENT);
	/* still usable, on stderr */
	log_info("test", "this line goes to stderr");
	assert_int_equal(weft_log_open("mon.a", WEFT_LOG_INFO, "-"), 0);
}

#define THREADS 4
#define LINES	2000

static void *log_thread(void *arg)
{
	char pad[200];

	memset(pad, 'a' + (int)(intptr_t)arg, sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = '\0';
	for (int i = 0; i < LINES; i++)
		log_info("t", "thread %d line %d %s end", (int)(intptr_t)arg, i, pad);
	return NULL;
}

/* Lines from concurrent threads never interleave. */
static void test_threads(void **state)
{
	pthread_t t[THREADS];
	unsigned int lines = 0;
	char *text, *p;

	(void)state;
	assert_int_equal(truncate(log_path, 0), 0);
	assert_int_equal(weft_log_open("client.admin", WEFT_LOG_INFO, log_path), 0);
	for (intptr_t i = 0; i < THREADS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, log_thread, (void *)i), 0);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	weft_log_close();

	text = slurp(log_path);
	for (p = text; *p; lines++) {
		char *nl = strchr(p, '\n');

		assert_non_null(nl);
		*nl = '\0';
		assert_non_null(strstr(p, " client.admin t INFO: thread "));
		assert_int_equal(strlen(strstr(p, "end")), 3);
		p = nl + 1;
	}
	assert_int_equal(lines, THREADS * LINES);
	free(text);
}

static void test_long_line(void **state)
{
	char *big = malloc(10000), *text;

	(void)state;
	memset(big, 'x', 9999);
	big[9999] = '\0';
	assert_int_equal(truncate(log_path, 0), 0);
	assert_int_equal(weft_log_open("osd.1", WEFT_LOG_INFO, log_path), 0);
	log_error("x", "%s", big);
	weft_log_close();
	text = slurp(log_path);
	assert_true(strlen(text) <= 4096);
	assert_non_null(strstr(text, "xxx...\n"));
	free(text);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_and_filter), cmocka_unit_test(test_levels),
		cmocka_unit_test(test_open_fails),	  cmocka_unit_test(test_threads),
		cmocka_unit_test(test_long_line),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
