/* SPDX-License-Identifier: Apache-2.0 */
#include <arpa/inet.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/conf.h"
#include "common/log.h"

#ifndef WEFT_SOURCE_DIR
#error "WEFT_SOURCE_DIR must name the source tree (tests/common.cmake sets it)"
#endif

/* ---- log capture: every conf message goes to a file we read back ---- */

static char cap_path[] = "/tmp/weft-test-conf-XXXXXX";

static int group_setup(void **state)
{
	int fd = mkstemp(cap_path);

	(void)state;
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	weft_log_close();
	unlink(cap_path);
	return 0;
}

static void cap_begin(void)
{
	assert_int_equal(truncate(cap_path, 0), 0);
	assert_int_equal(weft_log_open("test", WEFT_LOG_DEBUG, cap_path), 0);
}

/* The captured text (caller frees); logging goes back to stderr. */
static char *cap_end(void)
{
	FILE *f;
	char *buf;
	long len;

	weft_log_close();
	f = fopen(cap_path, "r");
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

static unsigned int count_lines(const char *s)
{
	unsigned int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static struct conf *new_conf(const char *entity)
{
	struct conf *conf = NULL;

	assert_int_equal(conf_create(entity, &conf), 0);
	assert_non_null(conf);
	return conf;
}

/*
 * Load text as "test.conf" for entity and expect -EINVAL with exactly one
 * error line containing want.
 */
static void expect_bad_lines(const char *entity, const char *text, const char *want,
			     unsigned int lines)
{
	struct conf *conf = new_conf(entity);
	char *log;
	int rc;

	cap_begin();
	rc = conf_load_string(conf, text, "test.conf");
	log = cap_end();
	if (rc != -EINVAL || strstr(log, want) == NULL || count_lines(log) != lines)
		fail_msg("conf:\n%s\nrc %d, log:\n%s\nwanted one line with: %s", text, rc, log,
			 want);
	free(log);
	conf_destroy(conf);
}

static void expect_bad(const char *entity, const char *text, const char *want)
{
	expect_bad_lines(entity, text, want, 1);
}

/* Load text for entity, expect rc 0 and no log output at all. */
static struct conf *load_ok(const char *entity, const char *text)
{
	struct conf *conf = new_conf(entity);
	char *log;
	int rc;

	cap_begin();
	rc = conf_load_string(conf, text, "test.conf");
	log = cap_end();
	if (rc != 0 || log[0] != '\0')
		fail_msg("conf:\n%s\nrc %d, log:\n%s", text, rc, log);
	free(log);
	assert_int_equal(conf_warning_count(conf), 0);
	return conf;
}

/* ---- defaults and entities ---- */

static void test_defaults(void **state)
{
	struct conf *conf = new_conf("osd.3");
	unsigned int n = 9;

	(void)state;
	assert_string_equal(conf_entity(conf), "osd.3");
	assert_string_equal(conf_get_str(conf, CONF_MS_TYPE), "auto");
	assert_string_equal(conf_get_str(conf, CONF_LOG_LEVEL), "info");
	assert_string_equal(conf_get_str(conf, CONF_LOG_FILE), "");
	assert_string_equal(conf_get_str(conf, CONF_KEYRING), "/etc/weft/keyring");
	assert_int_equal(conf_get_size(conf, CONF_MS_MSG_SIZE), 8192);
	assert_int_equal(conf_get_int(conf, CONF_MS_RECV_CREDITS), 64);
	assert_int_equal(conf_get_int(conf, CONF_MS_SQ_DEPTH), 256);
	assert_int_equal(conf_get_duration_us(conf, CONF_MS_BUSY_POLL), 0);
	assert_int_equal(conf_get_duration_us(conf, CONF_MS_PEER_TIMEOUT), 10000000);
	assert_int_equal(conf_get_duration_us(conf, CONF_MS_CONNECT_TIMEOUT), 5000000);
	assert_int_equal(conf_get_int(conf, CONF_RDMA_PORT), 1);
	assert_int_equal(conf_get_int(conf, CONF_RDMA_GID_INDEX), -1);
	assert_false(conf_get_bool(conf, CONF_MS_HUGEPAGES));
	assert_int_equal(conf_get_duration_us(conf, CONF_MON_OSD_DOWN_OUT_INTERVAL), 600000000ull);
	assert_int_equal(conf_get_int(conf, CONF_MON_OSD_MIN_DOWN_REPORTERS), 2);
	assert_int_equal(conf_get_duration_us(conf, CONF_OSD_HEARTBEAT_GRACE), 20000000);
	assert_int_equal(conf_get_duration_us(conf, CONF_OSD_HEARTBEAT_INTERVAL), 6000000);
	assert_int_equal(conf_get_int(conf, CONF_OSD_POOL_DEFAULT_SIZE), 3);
	assert_int_equal(conf_get_int(conf, CONF_OSD_POOL_DEFAULT_MIN_SIZE), 2);
	assert_int_equal(conf_get_int(conf, CONF_OSD_POOL_DEFAULT_PG_NUM), 128);
	assert_string_equal(conf_get_str(conf, CONF_OSD_DATA), "/var/lib/weft/osd/osd.3/block");
	assert_string_equal(conf_get_str(conf, CONF_MON_DATA), "/var/lib/weft/mon/osd.3");
	assert_null(conf_get_addrs(conf, CONF_MON_HOST, &n));
	assert_int_equal(n, 0);
	n = 9;
	conf_get_nets(conf, CONF_PUBLIC_NETWORK, &n);
	assert_int_equal(n, 0);
	for (unsigned int i = 0; i < CONF_KEY_COUNT; i++)
		assert_string_equal(conf_get_origin(conf, (enum conf_key)i), "default");
	conf_destroy(conf);
}

static void test_entities(void **state)
{
	static const char *const good[] = {"mon.a", "osd.0", "client.admin", "client", "osd"};
	static const char *const bad[] = {"foo.1", "osd.", "", "global", "monitor.a"};
	struct conf *conf = NULL;
	char *log;

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(conf_create(good[i], &conf), 0);
		conf_destroy(conf);
	}
	for (size_t i = 0; i < 5; i++) {
		conf = NULL;
		cap_begin();
		assert_int_equal(conf_create(bad[i], &conf), -EINVAL);
		log = cap_end();
		assert_null(conf);
		assert_int_equal(count_lines(log), 1);
		assert_non_null(strstr(log, "entity name"));
		free(log);
	}
	conf = new_conf("client");
	assert_string_equal(conf_get_str(conf, CONF_MON_DATA), "/var/lib/weft/mon/client");
	conf_destroy(conf);
}

/* Every row: default in range and valid, name normalised, help a sentence. */
static void test_table(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < CONF_KEY_COUNT; i++) {
		const struct conf_opt_def *d = &conf_opt_table[i];
		enum conf_key k;
		size_t hl = strlen(d->help);

		assert_int_equal(conf_key_lookup(d->name, &k), 0);
		assert_int_equal(k, i);
		assert_true(d->who != 0 && (d->who & ~CONF_WHO_ALL) == 0);
		assert_true(hl > 10 && d->help[hl - 1] == '.');
		if (d->type == CONF_INT || d->type == CONF_SIZE || d->type == CONF_DURATION)
			assert_true(d->min <= d->max);
		assert_true(d->choices == NULL || d->type == CONF_STR);
	}
}

/* ---- precedence ---- */

static const char prec_text[] = "[global]\n"
				"ms_sq_depth = 1\n"	/* 2 */
				"ms_recv_credits = 2\n" /* 3 */
				"rdma_port = 3\n"	/* 4 */
				"osd_pool_default_pg_num = 4\n"
				"mon_osd_min_down_reporters = 5\n"
				"[osd]\n"
				"ms_recv_credits = 20\n" /* 8 */
				"rdma_port = 30\n"
				"osd_pool_default_pg_num = 40\n"
				"mon_osd_min_down_reporters = 50\n"
				"[osd.3]\n"
				"rdma_port = 33\n" /* 13 */
				"osd_pool_default_pg_num = 44\n"
				"mon_osd_min_down_reporters = 55\n"
				"[mon]\n"
				"rdma_port = 99\n"
				"[osd.4]\n"
				"rdma_port = 98\n";

static void check_prec(struct conf *conf)
{
	assert_int_equal(conf_get_int(conf, CONF_MS_SQ_DEPTH), 1);
	assert_string_equal(conf_get_origin(conf, CONF_MS_SQ_DEPTH), "test.conf:2");
	assert_int_equal(conf_get_int(conf, CONF_MS_RECV_CREDITS), 20);
	assert_string_equal(conf_get_origin(conf, CONF_MS_RECV_CREDITS), "test.conf:8");
	assert_int_equal(conf_get_int(conf, CONF_RDMA_PORT), 33);
	assert_string_equal(conf_get_origin(conf, CONF_RDMA_PORT), "test.conf:13");
	assert_int_equal(conf_get_int(conf, CONF_OSD_POOL_DEFAULT_PG_NUM), 444);
	assert_string_equal(conf_get_origin(conf, CONF_OSD_POOL_DEFAULT_PG_NUM),
			    "env WEFT_OSD_POOL_DEFAULT_PG_NUM");
	assert_int_equal(conf_get_int(conf, CONF_MON_OSD_MIN_DOWN_REPORTERS), 555);
	assert_string_equal(conf_get_origin(conf, CONF_MON_OSD_MIN_DOWN_REPORTERS),
			    "--mon-osd-min-down-reporters");
	assert_int_equal(conf_get_int(conf, CONF_MS_SQ_DEPTH), 1);
	assert_int_equal(conf_get_int(conf, CONF_RDMA_GID_INDEX), -1);
	assert_string_equal(conf_get_origin(conf, CONF_RDMA_GID_INDEX), "default");
}

static void apply_args(struct conf *conf)
{
	char a0[] = "prog", a1[] = "--mon-osd-min-down-reporters=555";
	char *argv[] = {a0, a1, NULL};
	int argc = 2;

	assert_int_equal(conf_apply_args(conf, &argc, argv), 0);
	assert_int_equal(argc, 1);
}

static void test_precedence_file_env_args(void **state)
{
	struct conf *conf = new_conf("osd.3");

	(void)state;
	setenv("WEFT_OSD_POOL_DEFAULT_PG_NUM", "444", 1);
	setenv("WEFT_MON_OSD_MIN_DOWN_REPORTERS", "556", 1);
	assert_int_equal(conf_load_string(conf, prec_text, "test.conf"), 0);
	assert_int_equal(conf_apply_env(conf), 0);
	apply_args(conf);
	check_prec(conf);
	conf_destroy(conf);
	unsetenv("WEFT_OSD_POOL_DEFAULT_PG_NUM");
	unsetenv("WEFT_MON_OSD_MIN_DOWN_REPORTERS");
}

/* Same result with the calls in the opposite order. */
static void test_precedence_args_env_file(void **state)
{
	struct conf *conf = new_conf("osd.3");

	(void)state;
	setenv("WEFT_OSD_POOL_DEFAULT_PG_NUM", "444", 1);
	setenv("WEFT_MON_OSD_MIN_DOWN_REPORTERS", "556", 1);
	apply_args(conf);
	assert_int_equal(conf_apply_env(conf), 0);
	assert_int_equal(conf_load_string(conf, prec_text, "test.conf"), 0);
	check_prec(conf);
	/* conf_set is at argument level: it beats everything before it. */
	assert_int_equal(conf_set(conf, "rdma port", "7", "admin socket"), 0);
	assert_int_equal(conf_get_int(conf, CONF_RDMA_PORT), 7);
	assert_string_equal(conf_get_origin(conf, CONF_RDMA_PORT), "admin socket");
	/* and a later file does not undo it */
	assert_int_equal(conf_load_string(conf, "[osd.3]\nrdma_port = 8\n", "late.conf"), 0);
	assert_int_equal(conf_get_int(conf, CONF_RDMA_PORT), 7);
	conf_destroy(conf);
	unsetenv("WEFT_OSD_POOL_DEFAULT_PG_NUM");
	unsetenv("WEFT_MON_OSD_MIN_DOWN_REPORTERS");
}

/* Other entities see their own sections only. */
static void test_precedence_other_entities(void **state)
{
	struct conf *conf;

	(void)state;
	conf = load_ok("osd.4", prec_text);
	assert_int_equal(conf_get_int(conf, CONF_RDMA_PORT), 98);
	assert_int_equal(conf_get_int(conf, CONF_OSD_POOL_DEFAULT_PG_NUM), 40);
	conf_destroy(conf);
	conf = load_ok("mon.a", prec_text);
	assert_int_equal(conf_get_int(conf, CONF_RDMA_PORT), 99);
	assert_int_equal(conf_get_int(conf, CONF_MS_RECV_CREDITS), 2);
	assert_int_equal(conf_get_int(conf, CONF_OSD_POOL_DEFAULT_PG_NUM), 4);
	conf_destroy(conf);
	conf = load_ok("osd", prec_text); /* bare type: [osd] but no [osd.N] */
	assert_int_equal(conf_get_int(conf, CONF_RDMA_PORT), 30);
	conf_destroy(conf);
	conf = load_ok("client.admin", prec_text);
	assert_int_equal(conf_get_int(conf, CONF_RDMA_PORT), 3);
	conf_destroy(conf);
}

static void test_same_level_last_wins(void **state)
{
	struct conf *conf;

	(void)state;
	conf = load_ok("osd.1", "[osd]\nms_sq_depth = 10\n[global]\nms_sq_depth = 1\n"
				"[osd]\nms_sq_depth = 11\n");
	assert_int_equal(conf_get_int(conf, CONF_MS_SQ_DEPTH), 11);
	assert_string_equal(conf_get_origin(conf, CONF_MS_SQ_DEPTH), "test.conf:6");
	/* a second file at the same level overrides the first */
	assert_int_equal(conf_load_string(conf, "[osd]\nms_sq_depth = 12\n", "b.conf"), 0);
	assert_int_equal(conf_get_int(conf, CONF_MS_SQ_DEPTH), 12);
	assert_string_equal(conf_get_origin(conf, CONF_MS_SQ_DEPTH), "b.conf:2");
	conf_destroy(conf);
}

/* ---- syntax ---- */

static void test_key_spellings(void **state)
{
	struct conf *conf;
	enum conf_key k;

	(void)state;
	conf = load_ok("osd.0", "[GLOBAL]\n"
				"OSD Heartbeat-Grace = 30s\n"
				"ms-type = tcp\n"
				"MS_SQ_DEPTH = 100\n"
				"  rdma  port   =   2  \n"
				"[OSD.0]\n"
				"osd__pool--default_size=4\n");
	assert_int_equal(conf_get_duration_us(conf, CONF_OSD_HEARTBEAT_GRACE), 30000000);
	assert_string_equal(conf_get_str(conf, CONF_MS_TYPE), "tcp");
	assert_int_equal(conf_get_int(conf, CONF_MS_SQ_DEPTH), 100);
	assert_int_equal(conf_get_int(conf, CONF_RDMA_PORT), 2);
	assert_int_equal(conf_get_int(conf, CONF_OSD_POOL_DEFAULT_SIZE), 4);
	conf_destroy(conf);
	assert_int_equal(conf_key_lookup("Ms Recv-Credits", &k), 0);
	assert_int_equal(k, CONF_MS_RECV_CREDITS);
	assert_int_equal(conf_key_lookup("ms_recv", &k), -ENOENT);
	assert_int_equal(conf_key_lookup("", &k), -ENOENT);
}

/* ceph.conf style: indented keys, comments, quotes, CRLF, blank lines. */
static void test_file_syntax(void **state)
{
	struct conf *conf;

	(void)state;
	conf = load_ok("mon.a", "# comment\n"
				"; another\n"
				"\n"
				"[global]\r\n"
				"\tfsid = abc   # trailing comment\n"
				"\tms type = ucx ; inline\r\n"
				"    keyring = \"/etc/weft/my #1 keyring\"  # real comment\n"
				"\tlog_file=\n"
				"[mon.a]\n"
				"    mon addr = 10.0.0.1:6789\n"
				"    mon data = /data/$type/$id/${name}x$nothing\n");
	assert_string_equal(conf_get_str(conf, CONF_FSID), "abc");
	assert_string_equal(conf_get_str(conf, CONF_MS_TYPE), "ucx");
	assert_string_equal(conf_get_str(conf, CONF_KEYRING), "/etc/weft/my #1 keyring");
	assert_string_equal(conf_get_str(conf, CONF_LOG_FILE), "");
	assert_string_equal(conf_get_origin(conf, CONF_LOG_FILE), "test.conf:8");
	assert_string_equal(conf_get_str(conf, CONF_MON_DATA), "/data/mon/a/mon.ax$nothing");
	assert_string_equal(conf_get_str(conf, CONF_MON_ADDR), "10.0.0.1:6789");
	conf_destroy(conf);
}

static void test_syntax_errors(void **state)
{
	char long_line[400];

	(void)state;
	expect_bad("osd.0", "[global]\nms_type = tcp\nthis is not a key value\n",
		   "test.conf:3: syntax error in \"this is not a key value\"");
	expect_bad("osd.0", "[global\nms_type = tcp\n", "test.conf:1: section header");
	expect_bad("osd.0", "[global]\n= tcp\n", "test.conf:2: missing key");
	snprintf(long_line, sizeof(long_line), "[global]\nfsid = %0300d\n", 0);
	expect_bad("osd.0", long_line, "test.conf:2: line is longer than");
}

/* ---- values of every type ---- */

static void test_bool(void **state)
{
	static const char *const yes[] = {"true", "YES", "on", "1", "True"};
	static const char *const no[] = {"false", "no", "OFF", "0"};
	char text[128];
	struct conf *conf;

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		snprintf(text, sizeof(text), "[global]\nms_hugepages = %s\n", yes[i]);
		conf = load_ok("osd.0", text);
		assert_true(conf_get_bool(conf, CONF_MS_HUGEPAGES));
		conf_destroy(conf);
	}
	for (size_t i = 0; i < 4; i++) {
		snprintf(text, sizeof(text),
			 "[global]\nms_hugepages = true\n[osd]\nms_hugepages = %s\n", no[i]);
		conf = load_ok("osd.0", text);
		assert_false(conf_get_bool(conf, CONF_MS_HUGEPAGES));
		conf_destroy(conf);
	}
	expect_bad("osd.0", "[global]\nms_hugepages = maybe\n",
		   "test.conf:2: ms_hugepages = \"maybe\": expected a boolean");
	expect_bad("osd.0", "[global]\nms_hugepages = \n",
		   "ms_hugepages = \"\": expected a boolean");
}

static void test_int(void **state)
{
	struct conf *conf;

	(void)state;
	conf = load_ok("osd.0", "[global]\nrdma_gid_index = -1\nms_sq_depth = 65536\n"
				"ms_recv_credits = +2\n");
	assert_int_equal(conf_get_int(conf, CONF_RDMA_GID_INDEX), -1);
	assert_int_equal(conf_get_int(conf, CONF_MS_SQ_DEPTH), 65536);
	assert_int_equal(conf_get_int(conf, CONF_MS_RECV_CREDITS), 2);
	conf_destroy(conf);
	conf = load_ok("osd.0", "[global]\nrdma_gid_index = 255\n");
	assert_int_equal(conf_get_int(conf, CONF_RDMA_GID_INDEX), 255);
	conf_destroy(conf);

	expect_bad("osd.0", "[global]\nrdma_gid_index = -2\n",
		   "test.conf:2: rdma_gid_index = \"-2\": expected an integer in -1..255");
	expect_bad("osd.0", "[global]\nosd_pool_default_size = 11\n",
		   "test.conf:2: osd_pool_default_size = \"11\": expected an integer in 1..10");
	expect_bad("osd.0", "[global]\nms_sq_depth = 12abc\n",
		   "ms_sq_depth = \"12abc\": expected an integer in 1..65536");
	expect_bad("osd.0", "[global]\nms_sq_depth = abc\n", "ms_sq_depth = \"abc\": expected");
	expect_bad("osd.0", "[global]\nms_sq_depth =\n", "ms_sq_depth = \"\": expected");
	expect_bad("osd.0", "[global]\nms_sq_depth = 1.5\n", "ms_sq_depth = \"1.5\": expected");
	expect_bad("osd.0", "[global]\nms_sq_depth = 99999999999999999999\n",
		   "ms_sq_depth = \"99999999999999999999\": integer overflow");
	expect_bad("osd.0", "[global]\nrdma_gid_index = -99999999999999999999\n",
		   "integer overflow; expected an integer in -1..255");
}

static void test_size(void **state)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} ok[] = {
		{"4096", 4096},	   {"8K", 8192},     {"8k", 8192},
		{"16KiB", 16384},  {"32 KB", 32768}, {"1M", 1048576},
		{"1MiB", 1048576}, {"256", 256},     {"512B", 512},
	};
	char text[128];
	struct conf *conf;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(text, sizeof(text), "[global]\nms_msg_size = %s\n", ok[i].text);
		conf = load_ok("client.admin", text);
		assert_int_equal(conf_get_size(conf, CONF_MS_MSG_SIZE), ok[i].bytes);
		assert_string_equal(conf_get_str(conf, CONF_MS_MSG_SIZE), ok[i].text);
		conf_destroy(conf);
	}
	expect_bad("osd.0", "[global]\nms_msg_size = 0M\n",
		   "ms_msg_size = \"0M\": expected a size like 4096, 8K, 1M, 2GiB (range 256..1M)");
	expect_bad("osd.0", "[global]\nms_msg_size = 2M\n", "(range 256..1M)");
	expect_bad("osd.0", "[global]\nms_msg_size = 255\n", "ms_msg_size = \"255\"");
	expect_bad("osd.0", "[global]\nms_msg_size = 8Q\n",
		   "ms_msg_size = \"8Q\": expected a size");
	expect_bad("osd.0", "[global]\nms_msg_size = 8KiBx\n", "\"8KiBx\": expected a size");
	expect_bad("osd.0", "[global]\nms_msg_size = K\n", "\"K\": expected a size");
	expect_bad("osd.0", "[global]\nms_msg_size = -1K\n", "\"-1K\": expected a size");
	expect_bad("osd.0", "[global]\nms_msg_size = 1.5K\n", "\"1.5K\": expected a size");
	expect_bad("osd.0", "[global]\nms_msg_size = 99999999999999999999T\n",
		   "test.conf:2: ms_msg_size = \"99999999999999999999T\": value too large");
	expect_bad("osd.0", "[global]\nms_msg_size = 16777216T\n",
		   "\"16777216T\": value too large");
}

static void test_duration(void **state)
{
	static const struct {
		const char *text;
		uint64_t us;
	} ok[] = {
		{"20s", 20000000}, {"20", 20000000},	  {"1500ms", 1500000},
		{"2m", 120000000}, {"1h", 3600000000ull}, {"1000000us", 1000000},
		{"5 s", 5000000},  {"3 min", 180000000},  {"7sec", 7000000},
	};
	char text[128];
	struct conf *conf;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		snprintf(text, sizeof(text), "[osd]\nosd_heartbeat_grace = %s\n", ok[i].text);
		conf = load_ok("osd.7", text);
		assert_int_equal(conf_get_duration_us(conf, CONF_OSD_HEARTBEAT_GRACE), ok[i].us);
		conf_destroy(conf);
	}
	conf = load_ok("osd.7", "[global]\nms_busy_poll = 100us\n");
	assert_int_equal(conf_get_duration_us(conf, CONF_MS_BUSY_POLL), 100);
	conf_destroy(conf);

	expect_bad("osd.0", "[global]\nosd_heartbeat_grace = abc\n",
		   "test.conf:2: osd_heartbeat_grace = \"abc\": expected a duration like 20s, "
		   "500ms, 50us, 10m, 1h (range 1s..1h)");
	expect_bad("osd.0", "[global]\nosd_heartbeat_grace = 999ms\n",
		   "osd_heartbeat_grace = \"999ms\": expected a duration");
	expect_bad("osd.0", "[global]\nosd_heartbeat_grace = 2h\n", "\"2h\": expected a duration");
	expect_bad("osd.0", "[global]\nosd_heartbeat_grace = 10x\n",
		   "\"10x\": expected a duration");
	expect_bad("osd.0", "[global]\nosd_heartbeat_grace = 10 days\n", "\"10 days\"");
	expect_bad("osd.0", "[global]\nosd_heartbeat_grace = -5s\n",
		   "\"-5s\": expected a duration");
	expect_bad("osd.0", "[global]\nosd_heartbeat_grace = 9999999999999999h\n",
		   "\"9999999999999999h\": value too large");
	expect_bad("osd.0", "[global]\nms_busy_poll = 2s\n",
		   "ms_busy_poll = \"2s\": expected a duration like 20s, 500ms, 50us, 10m, 1h "
		   "(range 0..1s)");
}

static void test_string_choices(void **state)
{
	struct conf *conf;

	(void)state;
	conf = load_ok("osd.0", "[global]\nms_type = VERBS\nlog_level = debug\n");
	assert_string_equal(conf_get_str(conf, CONF_MS_TYPE), "verbs");
	assert_string_equal(conf_get_str(conf, CONF_LOG_LEVEL), "debug");
	conf_destroy(conf);
	expect_bad("osd.0", "[global]\nms_type = rdma\n",
		   "test.conf:2: ms_type = \"rdma\": expected one of auto|tcp|ucx|verbs");
	expect_bad("osd.0", "[global]\nms_type = tc\n", "ms_type = \"tc\": expected one of");
	expect_bad("osd.0", "[global]\nms_type = tcpx\n", "ms_type = \"tcpx\": expected one of");
	expect_bad("osd.0", "[global]\nlog_level = verbose\n",
		   "log_level = \"verbose\": expected one of error|warn|info|debug");
}

static void test_addrs(void **state)
{
	const struct conf_addr *a;
	struct conf *conf;
	unsigned int n;

	(void)state;
	conf = load_ok(
		"client.admin",
		"[global]\nmon_host = 10.0.0.1:6789, 10.0.0.2 [fd00::1]:3300,fe80::2  [::1]\n");
	a = conf_get_addrs(conf, CONF_MON_HOST, &n);
	assert_int_equal(n, 5);
	assert_string_equal(a[0].ip, "10.0.0.1");
	assert_int_equal(a[0].port, 6789);
	assert_int_equal(a[0].family, AF_INET);
	assert_string_equal(a[1].ip, "10.0.0.2");
	assert_int_equal(a[1].port, 0);
	assert_string_equal(a[2].ip, "fd00::1");
	assert_int_equal(a[2].port, 3300);
	assert_int_equal(a[2].family, AF_INET6);
	assert_string_equal(a[3].ip, "fe80::2");
	assert_int_equal(a[3].port, 0);
	assert_int_equal(a[3].family, AF_INET6);
	assert_string_equal(a[4].ip, "::1");
	conf_destroy(conf);

	expect_bad("osd.0", "[global]\nmon_host = 10.0.0.1:6789, 10.0.0.256\n",
		   "test.conf:2: mon_host = \"10.0.0.1:6789, 10.0.0.256\": \"10.0.0.256\" is not a "
		   "numeric IPv4 address; expected IP[:port] addresses");
	expect_bad("osd.0", "[global]\nmon_host = mon1.example.com:6789\n",
		   "\"mon1.example.com:6789\" is not a numeric IPv4 address");
	expect_bad("osd.0", "[global]\nmon_host = 10.0.0.1:0\n",
		   "bad port \"0\" in \"10.0.0.1:0\" (expected 1..65535)");
	expect_bad("osd.0", "[global]\nmon_host = 10.0.0.1:65536\n", "bad port \"65536\"");
	expect_bad("osd.0", "[global]\nmon_host = 10.0.0.1:\n", "bad port \"\"");
	expect_bad("osd.0", "[global]\nmon_host = 10.0.0.1:99999999999999999999999\n",
		   "bad port \"99999999999999999999999\"");
	expect_bad("osd.0", "[global]\npublic_addr = [fd00::1\n", "has no closing ']'");
	expect_bad("osd.0", "[global]\npublic_addr = [fd00::zz]:1\n",
		   "\"[fd00::zz]:1\" is not a numeric IPv6 address");
	expect_bad("osd.0", "[global]\npublic_addr = [10.0.0.1]:1\n", "not a numeric IPv6");
	expect_bad("osd.0", "[global]\ncluster_addr = 1.2.3\n", "\"1.2.3\" is not a numeric IPv4");
}

static void test_nets(void **state)
{
	const struct conf_net *nw;
	struct conf *conf;
	unsigned int n;

	(void)state;
	conf = load_ok("osd.0", "[global]\npublic_network = 10.1.0.0/16, fd00:1::/64\n"
				"cluster_network = 192.168.0.0/24\n");
	nw = conf_get_nets(conf, CONF_PUBLIC_NETWORK, &n);
	assert_int_equal(n, 2);
	assert_string_equal(nw[0].ip, "10.1.0.0");
	assert_int_equal(nw[0].prefix, 16);
	assert_int_equal(nw[0].family, AF_INET);
	assert_string_equal(nw[1].ip, "fd00:1::");
	assert_int_equal(nw[1].prefix, 64);
	assert_int_equal(nw[1].family, AF_INET6);
	nw = conf_get_nets(conf, CONF_CLUSTER_NETWORK, &n);
	assert_int_equal(n, 1);
	assert_int_equal(nw[0].prefix, 24);
	conf_destroy(conf);

	expect_bad("osd.0", "[global]\npublic_network = 10.0.0.0/33\n",
		   "test.conf:2: public_network = \"10.0.0.0/33\": bad prefix length \"33\" in "
		   "\"10.0.0.0/33\" (expected 0..32); expected CIDR networks");
	expect_bad("osd.0", "[global]\npublic_network = fd00::/129\n", "(expected 0..128)");
	expect_bad("osd.0", "[global]\npublic_network = 10.0.0.0/\n", "bad prefix length \"\"");
	expect_bad("osd.0", "[global]\npublic_network = 10.0.0.0/x\n", "bad prefix length \"x\"");
	expect_bad("osd.0", "[global]\ncluster_network = 10.0.0.0\n",
		   "\"10.0.0.0\" has no /prefix");
	expect_bad("osd.0", "[global]\ncluster_network = 10.0.0/24\n",
		   "\"10.0.0/24\" is not a numeric IPv4 network");
}

/* ---- warnings, other entities, files ---- */

static void test_unknown_key_and_section(void **state)
{
	struct conf *conf = new_conf("osd.2");
	char *log;

	(void)state;
	cap_begin();
	assert_int_equal(conf_load_string(conf,
					  "[global]\n"
					  "ms_type = tcp\n"
					  "osd_heartbeat_gracee = 5s\n"
					  "[osdd]\n"
					  "ms_sq_depth = 10\n"
					  "[osd]\n"
					  "ms_recv_credits = 10\n",
					  "test.conf"),
			 0);
	log = cap_end();
	assert_int_equal(conf_warning_count(conf), 2);
	assert_int_equal(count_lines(log), 2);
	assert_non_null(strstr(log, "WARN: test.conf:3: unknown option \"osd_heartbeat_gracee\""));
	assert_non_null(strstr(log, "WARN: test.conf:4: unknown section [osdd]"));
	assert_string_equal(conf_get_str(conf, CONF_MS_TYPE), "tcp");
	assert_int_equal(conf_get_int(conf, CONF_MS_SQ_DEPTH), 256); /* not applied */
	assert_int_equal(conf_get_int(conf, CONF_MS_RECV_CREDITS), 10);
	free(log);
	conf_destroy(conf);
	/* values in an unknown section are still validated */
	expect_bad_lines("osd.0", "[osdd]\nms_sq_depth = 0\n", "test.conf:2: ms_sq_depth = \"0\"",
			 2);
}

static void test_other_entity_validated(void **state)
{
	struct conf *conf;

	(void)state;
	expect_bad("osd.3", "[osd.3]\nms_sq_depth = 5\n[osd.4]\nms_sq_depth = 0\n",
		   "test.conf:4: ms_sq_depth = \"0\": expected an integer in 1..65536");
	expect_bad("osd.3", "[mon.a]\nmon_addr = 1.2.3.4:70000\n", "test.conf:2: mon_addr");
	conf = load_ok("osd.3", "[osd.4]\nms_sq_depth = 7\n[mon]\nms_sq_depth = 8\n");
	assert_int_equal(conf_get_int(conf, CONF_MS_SQ_DEPTH), 256);
	assert_string_equal(conf_get_origin(conf, CONF_MS_SQ_DEPTH), "default");
	conf_destroy(conf);
}

/* Several errors: each is logged, the load fails, nothing half-bad is kept. */
static void test_multiple_errors(void **state)
{
	struct conf *conf = new_conf("osd.0");
	char *log;

	(void)state;
	cap_begin();
	assert_int_equal(conf_load_string(conf,
					  "[global]\nms_type = x\nms_sq_depth = 0\n"
					  "rdma_port = 5\n",
					  "test.conf"),
			 -EINVAL);
	log = cap_end();
	assert_int_equal(count_lines(log), 2);
	assert_non_null(strstr(log, "test.conf:2: ms_type"));
	assert_non_null(strstr(log, "test.conf:3: ms_sq_depth"));
	assert_string_equal(conf_get_str(conf, CONF_MS_TYPE), "auto");
	free(log);
	conf_destroy(conf);
}

static void test_missing_file(void **state)
{
	struct conf *conf = new_conf("osd.0");
	char *log;

	(void)state;
	cap_begin();
	assert_int_equal(conf_load_file(conf, "/nonexistent/weft.conf"), -ENOENT);
	log = cap_end();
	assert_int_equal(count_lines(log), 1);
	assert_non_null(strstr(log, "/nonexistent/weft.conf: cannot open conf file"));
	free(log);
	conf_destroy(conf);
}

static void test_load_file(void **state)
{
	char path[] = "/tmp/weft-test-conf-file-XXXXXX";
	int fd = mkstemp(path);
	struct conf *conf = new_conf("osd.5");
	static const char text[] = "[global]\n  ms_type = tcp\n[osd.5]\n  osd_data = /d/$id\n";

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)sizeof(text) - 1);
	close(fd);
	assert_int_equal(conf_load_file(conf, path), 0);
	assert_string_equal(conf_get_str(conf, CONF_MS_TYPE), "tcp");
	assert_string_equal(conf_get_str(conf, CONF_OSD_DATA), "/d/5");
	assert_true(strstr(conf_get_origin(conf, CONF_OSD_DATA), ":4") != NULL);
	assert_true(strncmp(conf_get_origin(conf, CONF_OSD_DATA), path, strlen(path)) == 0);
	unlink(path);
	conf_destroy(conf);
}

/* ---- environment and arguments ---- */

static void test_env(void **state)
{
	struct conf *conf = new_conf("osd.1");
	char *log;

	(void)state;
	setenv("WEFT_MS_TYPE", "tcp", 1);
	setenv("WEFT_OSD_HEARTBEAT_GRACE", "45s", 1);
	assert_int_equal(conf_apply_env(conf), 0);
	assert_string_equal(conf_get_str(conf, CONF_MS_TYPE), "tcp");
	assert_string_equal(conf_get_origin(conf, CONF_MS_TYPE), "env WEFT_MS_TYPE");
	assert_int_equal(conf_get_duration_us(conf, CONF_OSD_HEARTBEAT_GRACE), 45000000);

	setenv("WEFT_MS_TYPE", "carrier-pigeon", 1);
	cap_begin();
	assert_int_equal(conf_apply_env(conf), -EINVAL);
	log = cap_end();
	assert_non_null(strstr(log, "env WEFT_MS_TYPE: ms_type = \"carrier-pigeon\": expected one "
				    "of auto|tcp|ucx|verbs"));
	assert_int_equal(count_lines(log), 1);
	assert_string_equal(conf_get_str(conf, CONF_MS_TYPE), "tcp");
	free(log);
	unsetenv("WEFT_MS_TYPE");
	unsetenv("WEFT_OSD_HEARTBEAT_GRACE");
	conf_destroy(conf);
}

static void test_args(void **state)
{
	char *in[] = {"prog",	     "--ms-type=tcp",  "pos1",	    "--rdma-gid-index",
		      "-1",	     "--unknown=3",    "-x",	    "--MS_SQ_DEPTH",
		      "12",	     "--ms-hugepages", "--verbose", "pos2",
		      "--log level", "debug",	       "--",	    "--ms-type=ucx"};
	static const char *const want[] = {"prog",	"pos1", "--unknown=3", "-x",
					   "--verbose", "pos2", "--",	       "--ms-type=ucx"};
	char *argv[17];
	int argc = 16;
	struct conf *conf = new_conf("client.admin");

	(void)state;
	memcpy(argv, in, sizeof(in));
	argv[16] = NULL;
	assert_int_equal(conf_apply_args(conf, &argc, argv), 0);
	assert_int_equal(argc, 8);
	for (int i = 0; i < argc; i++)
		assert_string_equal(argv[i], want[i]);
	assert_null(argv[argc]);
	assert_string_equal(conf_get_str(conf, CONF_MS_TYPE), "tcp");
	assert_string_equal(conf_get_origin(conf, CONF_MS_TYPE), "--ms-type");
	assert_int_equal(conf_get_int(conf, CONF_RDMA_GID_INDEX), -1);
	assert_string_equal(conf_get_origin(conf, CONF_RDMA_GID_INDEX), "--rdma-gid-index");
	assert_int_equal(conf_get_int(conf, CONF_MS_SQ_DEPTH), 12);
	assert_true(conf_get_bool(conf, CONF_MS_HUGEPAGES));
	assert_string_equal(conf_get_str(conf, CONF_LOG_LEVEL), "debug");
	conf_destroy(conf);
}

static void test_args_errors(void **state)
{
	char *in[] = {"prog", "pos", "--ms-sq-depth=0", "--ms-type=tcp"};
	char *argv[5];
	int argc = 4;
	struct conf *conf = new_conf("client.admin");
	char *log;

	(void)state;
	memcpy(argv, in, sizeof(in));
	argv[4] = NULL;
	cap_begin();
	assert_int_equal(conf_apply_args(conf, &argc, argv), -EINVAL);
	log = cap_end();
	assert_int_equal(count_lines(log), 1);
	assert_non_null(strstr(log, "--ms-sq-depth: ms_sq_depth = \"0\": expected an integer in "
				    "1..65536"));
	free(log);
	/* argv untouched on error */
	assert_int_equal(argc, 4);
	assert_string_equal(argv[2], "--ms-sq-depth=0");
	assert_int_equal(conf_get_int(conf, CONF_MS_SQ_DEPTH), 256);

	char *in2[] = {"prog", "--ms-type"};
	argc = 2;
	memcpy(argv, in2, sizeof(in2));
	cap_begin();
	assert_int_equal(conf_apply_args(conf, &argc, argv), -EINVAL);
	log = cap_end();
	assert_non_null(strstr(log, "--ms-type: missing value"));
	free(log);

	cap_begin();
	assert_int_equal(conf_set(conf, "no_such_option", "1", NULL), -ENOENT);
	assert_int_equal(conf_set(conf, "ms_sq_depth", "x", "test"), -EINVAL);
	log = cap_end();
	assert_int_equal(count_lines(log), 2);
	assert_non_null(strstr(log, "unknown option \"no_such_option\""));
	assert_non_null(strstr(log, "test: ms_sq_depth = \"x\""));
	free(log);
	conf_destroy(conf);
}

/* ---- output ---- */

static char *capture_stream(void (*fn)(void *), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	*(FILE **)arg = f;
	fn(arg);
	fclose(f);
	return buf;
}

struct dump_arg {
	FILE *out; /* first: capture_stream stores the stream here */
	struct conf *conf;
	bool flag;
};

static void dump_fn(void *p)
{
	struct dump_arg *a = p;

	conf_dump(a->conf, a->out, a->flag);
}

static void help_fn(void *p)
{
	struct dump_arg *a = p;

	conf_help_print(a->out, a->flag);
}

static void test_dump_and_help(void **state)
{
	struct dump_arg arg = {0};
	char *text;

	(void)state;
	arg.conf = load_ok("osd.3", "[osd]\nms_type = tcp\n");
	text = capture_stream(dump_fn, &arg);
	assert_true(strncmp(text, "[osd.3]\n", 8) == 0);
	assert_non_null(strstr(text, "ms_type"));
	assert_non_null(strstr(text, "= tcp"));
	assert_non_null(strstr(text, "; test.conf:2\n"));
	assert_null(strstr(text, "ms_sq_depth"));
	assert_int_equal(count_lines(text), 2);
	free(text);
	arg.flag = true;
	text = capture_stream(dump_fn, &arg);
	assert_int_equal(count_lines(text), CONF_KEY_COUNT + 1);
	assert_non_null(strstr(text, "/var/lib/weft/osd/osd.3/block"));
	free(text);
	/* The dump is itself a valid conf file. */
	{
		struct conf *again = load_ok("osd.3", text = capture_stream(dump_fn, &arg));

		assert_string_equal(conf_get_str(again, CONF_MS_TYPE), "tcp");
		conf_destroy(again);
		free(text);
	}
	conf_destroy(arg.conf);

	for (int md = 0; md < 2; md++) {
		arg.flag = md;
		text = capture_stream(help_fn, &arg);
		for (unsigned int i = 0; i < CONF_KEY_COUNT; i++)
			assert_non_null(strstr(text, conf_opt_table[i].name));
		if (md) {
			assert_non_null(
				strstr(text, "| `ms_msg_size` | size | `8K` | 256..1M | all |"));
			assert_non_null(strstr(text, "`auto`, `tcp`, `ucx`, `verbs`"));
		}
		free(text);
	}
}

/* ---- the shipped example files ---- */

static void test_example_files(void **state)
{
	static const char *const files[] = {WEFT_SOURCE_DIR "/conf/weft.conf.example",
					    WEFT_SOURCE_DIR "/conf/local.conf"};
	static const char *const entities[] = {"mon.a",	       "mon.b", "mon.c",  "osd.0",
					       "osd.1",	       "osd.2", "osd.11", "osd",
					       "client.admin", "client"};

	(void)state;
	for (size_t f = 0; f < 2; f++) {
		for (size_t e = 0; e < sizeof(entities) / sizeof(entities[0]); e++) {
			struct conf *conf = new_conf(entities[e]);
			unsigned int n;
			char *log;
			int rc;

			cap_begin();
			rc = conf_load_file(conf, files[f]);
			log = cap_end();
			if (rc != 0 || log[0] != '\0' || conf_warning_count(conf) != 0)
				fail_msg("%s as %s: rc %d, log:\n%s", files[f], entities[e], rc,
					 log);
			free(log);
			conf_get_addrs(conf, CONF_MON_HOST, &n);
			assert_int_equal(n, 3);
			conf_get_nets(conf, CONF_CLUSTER_NETWORK, &n);
			assert_int_equal(n, 1);
			assert_string_equal(conf_get_str(conf, CONF_MS_TYPE), f ? "tcp" : "verbs");
			assert_int_equal(conf_get_int(conf, CONF_OSD_POOL_DEFAULT_SIZE), 2);
			assert_int_equal(conf_get_int(conf, CONF_OSD_POOL_DEFAULT_MIN_SIZE), 1);
			if (!strcmp(entities[e], "mon.b")) {
				const struct conf_addr *a = conf_get_addrs(conf, CONF_MON_ADDR, &n);

				assert_int_equal(n, 1);
				assert_string_equal(a[0].ip, f ? "127.1.0.2" : "10.10.0.2");
				assert_int_equal(a[0].port, 6789);
			}
			if (f == 1 && !strcmp(entities[e], "osd.1")) {
				const struct conf_addr *a =
					conf_get_addrs(conf, CONF_CLUSTER_ADDR, &n);

				assert_int_equal(n, 1);
				assert_string_equal(a[0].ip, "127.2.0.11");
				assert_string_equal(conf_get_str(conf, CONF_OSD_DATA),
						    "dev-cluster/osd.1/block");
			}
			if (f == 0 && !strcmp(entities[e], "osd.11")) {
				assert_string_equal(conf_get_str(conf, CONF_HOST), "stor6");
				assert_string_equal(conf_get_str(conf, CONF_RDMA_DEVICE), "mlx4_0");
			}
			conf_destroy(conf);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_entities),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_precedence_file_env_args),
		cmocka_unit_test(test_precedence_args_env_file),
		cmocka_unit_test(test_precedence_other_entities),
		cmocka_unit_test(test_same_level_last_wins),
		cmocka_unit_test(test_key_spellings),
		cmocka_unit_test(test_file_syntax),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_bool),
		cmocka_unit_test(test_int),
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_string_choices),
		cmocka_unit_test(test_addrs),
		cmocka_unit_test(test_nets),
		cmocka_unit_test(test_unknown_key_and_section),
		cmocka_unit_test(test_other_entity_validated),
		cmocka_unit_test(test_multiple_errors),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_load_file),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_args_errors),
		cmocka_unit_test(test_dump_and_help),
		cmocka_unit_test(test_example_files),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
