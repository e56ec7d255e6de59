/* SPDX-License-Identifier: Apache-2.0 */
/*
 * auth/ step one: keys, entity names, capabilities and keyring files.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "auth/caps.h"
#include "auth/key.h"
#include "auth/keyring.h"
#include "common/conf.h"
#include "common/log.h"
#include "proto/codec.h"

static char err[512];

static void test_key_roundtrip(void **state)
{
	struct auth_key a, b, c;
	char text[AUTH_KEY_B64_LEN + 1];

	(void)state;
	assert_int_equal(auth_key_generate(&a), 0);
	assert_int_equal(auth_key_generate(&b), 0);
	assert_false(auth_key_equal(&a, &b));
	auth_key_encode(&a, text);
	assert_int_equal(strlen(text), AUTH_KEY_B64_LEN);
	assert_int_equal(text[43], '=');
	assert_int_equal(auth_key_decode(text, &c, err, sizeof(err)), 0);
	assert_true(auth_key_equal(&a, &c));
	assert_memory_equal(a.b, c.b, AUTH_KEY_LEN);
}

static void test_key_bad(void **state)
{
	struct auth_key k, ref;
	char text[AUTH_KEY_B64_LEN + 1];

	(void)state;
	memset(&ref, 0x5a, sizeof(ref));
	k = ref;
	assert_int_equal(auth_key_decode("abc", &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "expected 44 base64 characters, got 3"));
	assert_true(auth_key_equal(&k, &ref)); /* out-param untouched */
	auth_key_encode(&ref, text);
	text[5] = '!';
	assert_int_equal(auth_key_decode(text, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "character 6 ('!') is not base64"));
	auth_key_encode(&ref, text);
	text[0] = ' ';
	assert_int_equal(auth_key_decode(text, &k, err, sizeof(err)), -EINVAL);
	/* Same bytes, a non-zero padding bit: not the canonical spelling. */
	auth_key_encode(&ref, text);
	text[42] = text[42] == 'A' ? 'B' : (char)(text[42] ^ 1);
	assert_int_equal(auth_key_decode(text, &k, err, sizeof(err)), -EINVAL);
	/* 44 characters without padding are 33 bytes, not a key. */
	auth_key_encode(&ref, text);
	text[43] = 'A';
	assert_int_equal(auth_key_decode(text, &k, err, sizeof(err)), -EINVAL);
}

static void test_entity(void **state)
{
	static const char *const bad[] = {"admin", "client.", "client.a b", "client..x",
					  "osd.", "osd.01", "osd.-1", "osd.x", "osd.99999999999",
					  "mgr.x", ".x", "client.-x"};
	struct auth_entity e;

	(void)state;
	assert_int_equal(auth_entity_parse("client.admin", &e, err, sizeof(err)), 0);
	assert_int_equal(e.type, AUTH_ETYPE_CLIENT);
	assert_string_equal(e.name, "client.admin");
	assert_int_equal(auth_entity_parse("osd.12", &e, err, sizeof(err)), 0);
	assert_int_equal(e.type, AUTH_ETYPE_OSD);
	assert_int_equal(e.osd_id, 12);
	assert_int_equal(auth_entity_parse("osd.0", &e, err, sizeof(err)), 0);
	assert_int_equal(e.osd_id, 0);
	assert_int_equal(auth_entity_parse("mon.", &e, err, sizeof(err)), 0);
	assert_int_equal(e.type, AUTH_ETYPE_MON);
	assert_int_equal(auth_entity_parse("mon.a", &e, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(auth_entity_parse(bad[i], &e, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, bad[i]));
		assert_null(strchr(err, '\n'));
	}
	assert_int_equal(auth_entity_parse("mgr.x", &e, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown type 'mgr'"));
}

static void test_caps_check(void **state)
{
	struct auth_caps c = {0};

	(void)state;
	assert_int_equal(auth_caps_parse(&c, AUTH_SVC_MON, "allow r", err, sizeof(err)), 0);
	assert_true(auth_caps_allow(&c, AUTH_SVC_MON, NULL, AUTH_PERM_R));
	assert_false(auth_caps_allow(&c, AUTH_SVC_MON, NULL, AUTH_PERM_W));
	assert_false(auth_caps_allow(&c, AUTH_SVC_MON, NULL, AUTH_PERM_X));
	/* No osd caps at all: nothing on the OSDs. */
	assert_false(auth_caps_allow(&c, AUTH_SVC_OSD, "rbd", AUTH_PERM_R));

	assert_int_equal(auth_caps_parse(&c, AUTH_SVC_OSD, "allow rw pool=rbd", err, sizeof(err)),
			 0);
	assert_true(auth_caps_allow(&c, AUTH_SVC_OSD, "rbd", AUTH_PERM_R | AUTH_PERM_W));
	assert_false(auth_caps_allow(&c, AUTH_SVC_OSD, "other", AUTH_PERM_R));
	assert_false(auth_caps_allow(&c, AUTH_SVC_OSD, NULL, AUTH_PERM_R));
	assert_false(auth_caps_allow(&c, AUTH_SVC_OSD, "rbd", AUTH_PERM_X));

	/* Grants add up, and ';' separates too. */
	assert_int_equal(auth_caps_parse(&c, AUTH_SVC_OSD, "allow r, allow w pool=a;allow rw pool=b",
					 err, sizeof(err)),
			 0);
	assert_int_equal(c.count[AUTH_SVC_OSD], 3);
	assert_true(auth_caps_allow(&c, AUTH_SVC_OSD, "a", AUTH_PERM_R | AUTH_PERM_W));
	assert_true(auth_caps_allow(&c, AUTH_SVC_OSD, "zz", AUTH_PERM_R));
	assert_false(auth_caps_allow(&c, AUTH_SVC_OSD, "zz", AUTH_PERM_W));

	assert_int_equal(auth_caps_parse(&c, AUTH_SVC_MON, "allow *", err, sizeof(err)), 0);
	assert_true(auth_caps_allow(&c, AUTH_SVC_MON, NULL, AUTH_PERM_ALL));

	/* Profiles. */
	assert_int_equal(auth_caps_parse(&c, AUTH_SVC_MON, "profile osd", err, sizeof(err)), 0);
	assert_true(auth_caps_allow(&c, AUTH_SVC_MON, NULL, AUTH_PERM_R | AUTH_PERM_W));
	assert_false(auth_caps_allow(&c, AUTH_SVC_MON, NULL, AUTH_PERM_X));
	assert_int_equal(auth_caps_parse(&c, AUTH_SVC_OSD, "profile osd", err, sizeof(err)), 0);
	assert_true(auth_caps_allow(&c, AUTH_SVC_OSD, "any", AUTH_PERM_ALL));
	assert_int_equal(auth_caps_parse(&c, AUTH_SVC_MON, "profile client", err, sizeof(err)), 0);
	assert_true(auth_caps_allow(&c, AUTH_SVC_MON, NULL, AUTH_PERM_R));
	assert_false(auth_caps_allow(&c, AUTH_SVC_MON, NULL, AUTH_PERM_W));
	assert_int_equal(
		auth_caps_parse(&c, AUTH_SVC_OSD, "profile mount pool=vols", err, sizeof(err)), 0);
	assert_true(auth_caps_allow(&c, AUTH_SVC_OSD, "vols", AUTH_PERM_R | AUTH_PERM_W));
	assert_false(auth_caps_allow(&c, AUTH_SVC_OSD, "vols", AUTH_PERM_X));
	assert_false(auth_caps_allow(&c, AUTH_SVC_OSD, "rbd", AUTH_PERM_R));
	/* bootstrap-osd: reads on the mons; the OSD-key commands are the monitor's to allow */
	assert_int_equal(
		auth_caps_parse(&c, AUTH_SVC_MON, "profile bootstrap-osd", err, sizeof(err)), 0);
	assert_true(auth_caps_allow(&c, AUTH_SVC_MON, NULL, AUTH_PERM_R));
	assert_false(auth_caps_allow(&c, AUTH_SVC_MON, NULL, AUTH_PERM_W));
	assert_false(auth_caps_allow(&c, AUTH_SVC_MON, NULL, AUTH_PERM_X));
	assert_true(auth_caps_has_profile(&c, AUTH_SVC_MON, AUTH_PROFILE_BOOTSTRAP_OSD));
	assert_int_equal(auth_caps_format(&c, AUTH_SVC_MON, err, sizeof(err)), 0);
	assert_string_equal(err, "profile bootstrap-osd");
}

static void test_caps_bad(void **state)
{
	static const struct {
		enum auth_svc svc;
		const char *text, *why;
	} bad[] = {
		{AUTH_SVC_OSD, "allow rx pool=rbd", "'rx' is not a permission"},
		{AUTH_SVC_OSD, "allow", "'allow' needs a permission"},
		{AUTH_SVC_OSD, "", "empty grant"},
		{AUTH_SVC_OSD, "allow r,", "empty grant"},
		{AUTH_SVC_OSD, "deny r", "a grant starts with 'allow' or 'profile'"},
		{AUTH_SVC_OSD, "allow r pool=", "pool name ''"},
		{AUTH_SVC_OSD, "allow r pool=a b", "unexpected 'b' after pool="},
		{AUTH_SVC_OSD, "allow r rbd", "unexpected 'rbd'"},
		{AUTH_SVC_OSD, "allow * pool=x", "does not go with 'allow *'"},
		{AUTH_SVC_OSD, "profile osd pool=x", "does not go with 'profile osd'"},
		{AUTH_SVC_MON, "allow r pool=a", "pool= applies to osd caps only"},
		{AUTH_SVC_MON, "profile admin", "unknown profile 'admin'"},
		{AUTH_SVC_OSD, "profile bootstrap-osd", "applies to mon caps only"},
		{AUTH_SVC_MON, "profile bootstrap-osd pool=a", "pool= applies to osd caps only"},
	};
	struct auth_caps c = {0}, before;

	(void)state;
	assert_int_equal(auth_caps_parse(&c, AUTH_SVC_OSD, "allow r", err, sizeof(err)), 0);
	before = c;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(auth_caps_parse(&c, bad[i].svc, bad[i].text, err, sizeof(err)),
				 -EINVAL);
		if (strstr(err, bad[i].why) == NULL)
			fail_msg("'%s': error '%s' lacks '%s'", bad[i].text, err, bad[i].why);
		assert_non_null(strstr(err, bad[i].svc == AUTH_SVC_OSD ? "osd cap '" : "mon cap '"));
		assert_null(strchr(err, '\n'));
		assert_memory_equal(&c, &before, sizeof(c)); /* unchanged on failure */
	}
}

static void test_caps_args_format_codec(void **state)
{
	char *const args[] = {"mon", "allow r", "osd", "allow wr pool=rbd,  profile client pool=x"};
	char *const odd[] = {"mon"};
	char *const dup[] = {"mon", "allow r", "mon", "allow *"};
	char *const svc[] = {"mgr", "allow r"};
	struct auth_caps c, d;
	char text[AUTH_CAPS_TEXT_MAX];
	uint8_t buf[4096];
	struct proto_enc enc;
	struct proto_dec dec;
	struct proto_err perr = {""};
	size_t len;

	(void)state;
	assert_int_equal(auth_caps_parse_args(&c, 4, args, err, sizeof(err)), 0);
	assert_int_equal(auth_caps_format(&c, AUTH_SVC_MON, text, sizeof(text)), 0);
	assert_string_equal(text, "allow r");
	assert_int_equal(auth_caps_format(&c, AUTH_SVC_OSD, text, sizeof(text)), 0);
	assert_string_equal(text, "allow rw pool=rbd, profile client pool=x");
	assert_int_equal(auth_caps_parse_args(&d, 1, odd, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "pairs"));
	assert_int_equal(auth_caps_parse_args(&d, 4, dup, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "mon caps given twice"));
	assert_int_equal(auth_caps_parse_args(&d, 2, svc, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown service 'mgr'"));
	/* A control character is refused without echoing it (the message stays one line). */
	assert_int_equal(auth_caps_parse(&d, AUTH_SVC_OSD, "allow r\npool=x", err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "osd cap: byte 0x0a at offset 7 is not allowed");
	struct auth_entity ent;

	assert_int_equal(auth_entity_parse("client.a\nb", &ent, err, sizeof(err)), -EINVAL);
	assert_null(strchr(err, '\n'));

	proto_enc_init(&enc, buf, sizeof(buf));
	auth_caps_encode(&enc, &c);
	assert_int_equal(proto_enc_finish(&enc, &len), 0);
	proto_dec_init(&dec, buf, len, "caps", &perr);
	assert_int_equal(auth_caps_decode(&dec, &d), 0);
	assert_int_equal(proto_dec_finish(&dec), 0);
	assert_true(auth_caps_allow(&d, AUTH_SVC_OSD, "rbd", AUTH_PERM_W));
	assert_false(auth_caps_allow(&d, AUTH_SVC_MON, NULL, AUTH_PERM_W));
	/* A non-canonical spelling on the wire is refused. */
	assert_memory_equal(buf + 13, "allow rw", 8);
	buf[19] = 'w';
	buf[20] = 'r';
	proto_dec_init(&dec, buf, len, "caps", &perr);
	assert_int_equal(auth_caps_decode(&dec, &d), -EBADMSG);
	assert_non_null(strstr(perr.msg, "canonical"));
}

static const char *const kr_text =
	"# a comment\n"
	"[client.admin]\n"
	"\tkey = %s\n"
	"\tcaps mon = \"allow *\"\n"
	"\tcaps osd = \"allow *\"\n"
	"\n"
	"[osd.3]\n"
	"    key = %s\n"
	"    caps mon = \"profile osd\"\n"
	"    caps osd = \"profile osd\"\n"
	"    caps mgr = \"allow r\"\n"
	"[client.ro]\n"
	"key=%s\n"
	"caps osd = allow r pool=rbd\n";

static void test_keyring_parse(void **state)
{
	struct auth_key k[3];
	char b64[3][AUTH_KEY_B64_LEN + 1], text[2048];
	struct auth_keyring kr;
	const struct auth_keyring_entry *e;

	(void)state;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(auth_key_generate(&k[i]), 0);
		auth_key_encode(&k[i], b64[i]);
	}
	snprintf(text, sizeof(text), kr_text, b64[0], b64[1], b64[2]);
	auth_keyring_init(&kr);
	assert_int_equal(auth_keyring_parse(&kr, text, "t", err, sizeof(err)), 0);
	assert_int_equal(kr.count, 3);
	e = auth_keyring_find(&kr, "client.admin");
	assert_non_null(e);
	assert_true(auth_key_equal(&e->key, &k[0]));
	assert_true(auth_caps_allow(&e->caps, AUTH_SVC_MON, NULL, AUTH_PERM_ALL));
	e = auth_keyring_find(&kr, "osd.3");
	assert_non_null(e);
	assert_int_equal(e->entity.osd_id, 3);
	assert_true(auth_key_equal(&e->key, &k[1]));
	assert_true(auth_caps_allow(&e->caps, AUTH_SVC_OSD, "x", AUTH_PERM_X));
	e = auth_keyring_find(&kr, "client.ro");
	assert_non_null(e);
	assert_true(auth_caps_allow(&e->caps, AUTH_SVC_OSD, "rbd", AUTH_PERM_R));
	assert_false(auth_caps_allow(&e->caps, AUTH_SVC_OSD, "rbd", AUTH_PERM_W));
	assert_false(e->caps.set[AUTH_SVC_MON]);
	assert_null(auth_keyring_find(&kr, "client.nobody"));
	auth_keyring_free(&kr);
}

static void test_keyring_bad(void **state)
{
	char good[AUTH_KEY_B64_LEN + 1], text[1024];
	struct auth_key k;
	struct auth_keyring kr;
	static const struct {
		const char *fmt, *why;
	} bad[] = {
		{"[client.a]\nkey = %s\nkey = %s\n", "line 3: client.a has two keys"},
		{"[client.a]\nkey = %s\n[client.a]\nkey = %s\n", "line 3: entity client.a appears twice"},
		{"[client.a]\n[client.b]\nkey = %s\n", "client.a has no key"},
		{"key = %s\n", "line 1: 'key' is outside an [ENTITY] section"},
		{"[client.a]\nkey = %s\nsecret = x\n", "line 3: unknown key 'secret'"},
		{"[client.a]\nkey = %s\ncaps osd = \"allow q\"\n", "line 3: osd cap 'allow q'"},
		{"[bogus]\nkey = %s\n", "line 1: entity 'bogus'"},
		{"[client.a]\nkey = AAAA\n", "line 2: key: expected 44"},
		{"[client.a]\nkey = %s\njunk line\n", "line 3: 'junk line': expected"},
		{"[client.a\nkey = %s\n", "line 1: section header"},
	};

	(void)state;
	assert_int_equal(auth_key_generate(&k), 0);
	auth_key_encode(&k, good);
	auth_keyring_init(&kr);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), bad[i].fmt, good, good);
		err[0] = '\0';
		assert_int_equal(auth_keyring_parse(&kr, text, "kr", err, sizeof(err)), -EINVAL);
		if (strstr(err, bad[i].why) == NULL)
			fail_msg("case %zu: error '%s' lacks '%s'", i, err, bad[i].why);
		assert_null(strchr(err, '\n'));
		assert_int_equal(kr.count, 0);
	}
}

static void test_keyring_file(void **state)
{
	char dir[] = "/tmp/weft-test-auth-XXXXXX", path[256], *text;
	struct auth_keyring kr, back;
	struct auth_keyring_entry ent = {0};
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/keyring", dir);
	auth_keyring_init(&kr);
	auth_keyring_init(&back);
	assert_int_equal(auth_entity_parse("client.admin", &ent.entity, err, sizeof(err)), 0);
	assert_int_equal(auth_key_generate(&ent.key), 0);
	assert_int_equal(auth_caps_parse(&ent.caps, AUTH_SVC_MON, "allow *", err, sizeof(err)), 0);
	assert_int_equal(auth_caps_parse(&ent.caps, AUTH_SVC_OSD, "allow *", err, sizeof(err)), 0);
	assert_int_equal(auth_keyring_put(&kr, &ent), 0);
	/* Even with a permissive umask the file is 0600. */
	mode_t old = umask(0);
	assert_int_equal(auth_keyring_save(&kr, path, err, sizeof(err)), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	text = auth_keyring_format(&kr);
	assert_non_null(strstr(text, "[client.admin]\n\tkey = "));
	assert_non_null(strstr(text, "\tcaps mon = \"allow *\"\n\tcaps osd = \"allow *\"\n"));
	free(text);
	assert_int_equal(auth_keyring_load(&back, path, err, sizeof(err)), 0);
	assert_int_equal(back.count, 1);
	assert_true(auth_key_equal(&back.ents[0].key, &ent.key));

	/* Group- or other-readable: refused with the mode and the fix. */
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(auth_keyring_load(&back, path, err, sizeof(err)), -EACCES);
	assert_non_null(strstr(err, "mode 0644 lets group or other access the secret"));
	assert_non_null(strstr(err, "chmod 600"));
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(auth_keyring_load(&back, path, err, sizeof(err)), -EACCES);
	assert_int_equal(chmod(path, 0400), 0);
	assert_int_equal(auth_keyring_load(&back, path, err, sizeof(err)), 0);
	assert_int_equal(chmod(path, 0600), 0);

	/* Missing file. */
	snprintf(path, sizeof(path), "%s/none", dir);
	assert_int_equal(auth_keyring_load(&back, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot open"));
	/* A bad file keeps what was loaded before. */
	snprintf(path, sizeof(path), "%s/bad", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("[client.x]\nkey = nope\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(auth_keyring_load(&back, path, err, sizeof(err)), -EINVAL);
	assert_int_equal(back.count, 1);
	unlink(path);
	snprintf(path, sizeof(path), "%s/keyring", dir);
	unlink(path);
	rmdir(dir);
	auth_keyring_free(&kr);
	auth_keyring_free(&back);
}

static void test_keyring_path(void **state)
{
	struct conf *conf;

	(void)state;
	assert_int_equal(conf_create("client.admin", &conf), 0);
	assert_string_equal(auth_keyring_path(conf), "/etc/weft/keyring");
	assert_int_equal(conf_load_string(conf, "[global]\nkeyring = /k/$name.keyring\n", "t"), 0);
	assert_string_equal(auth_keyring_path(conf), "/k/client.admin.keyring");
	conf_destroy(conf);
	assert_int_equal(conf_create("osd.7", &conf), 0);
	assert_int_equal(conf_load_string(conf, "[osd]\nkeyring = /k/${type}-$id\n", "t"), 0);
	assert_string_equal(auth_keyring_path(conf), "/k/osd-7");
	conf_destroy(conf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_roundtrip),
		cmocka_unit_test(test_key_bad),
		cmocka_unit_test(test_entity),
		cmocka_unit_test(test_caps_check),
		cmocka_unit_test(test_caps_bad),
		cmocka_unit_test(test_caps_args_format_codec),
		cmocka_unit_test(test_keyring_parse),
		cmocka_unit_test(test_keyring_bad),
		cmocka_unit_test(test_keyring_file),
		cmocka_unit_test(test_keyring_path),
	};

	weft_log_mute(true);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
