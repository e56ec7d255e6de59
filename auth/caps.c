/* SPDX-License-Identifier: Apache-2.0 */
#include "auth/caps.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/name.h"
#include "proto/codec.h"

static const char *const auth_svc_names[AUTH_SVC_COUNT] = {"mon", "osd"};
static const char *const auth_profile_names[] = {"", "osd", "client", "mount", "bootstrap-osd"};

int auth_svc_lookup(const char *name, enum auth_svc *svc_out)
{
	for (int i = 0; i < AUTH_SVC_COUNT; i++) {
		if (strcmp(name, auth_svc_names[i]) == 0) {
			*svc_out = (enum auth_svc)i;
			return 0;
		}
	}
	return -ENOENT;
}

const char *auth_svc_name(enum auth_svc svc)
{
	return (unsigned)svc < AUTH_SVC_COUNT ? auth_svc_names[svc] : "?";
}

static unsigned int auth_profile_perm(enum auth_svc svc, enum auth_profile p)
{
	if (svc == AUTH_SVC_MON)
		return p == AUTH_PROFILE_OSD ? AUTH_PERM_R | AUTH_PERM_W : AUTH_PERM_R;
	/* bootstrap-osd exists on mon caps only (auth_grant_parse refuses it on osd) */
	return p == AUTH_PROFILE_OSD ? AUTH_PERM_ALL : AUTH_PERM_R | AUTH_PERM_W;
}

/* Next blank-separated word of [*p, end) into word; false when none is left. */
static bool auth_caps_word(const char **p, const char *end, char *word, size_t cap, bool *long_out)
{
	const char *s = *p;
	size_t n;

	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == end)
		return false;
	n = 0;
	while (s + n < end && s[n] != ' ' && s[n] != '\t')
		n++;
	*long_out = n >= cap;
	if (n >= cap)
		n = cap - 1;
	memcpy(word, s, n);
	word[n] = '\0';
	*p = s + n;
	while (*p < end && **p != ' ' && **p != '\t')
		(*p)++;
	return true;
}

#define CAPS_FAIL(...)                                                                             \
	do {                                                                                       \
		int n_ = snprintf(err, errcap, "%s cap '%s': ", auth_svc_names[svc], text);        \
		if (n_ >= 0 && (size_t)n_ < errcap)                                                \
			snprintf(err + n_, errcap - (size_t)n_, __VA_ARGS__);                      \
		return -EINVAL;                                                                    \
	} while (0)

/* One grant in [s, end). */
static int auth_grant_parse(enum auth_svc svc, const char *text, const char *s, const char *end,
			    struct auth_grant *g_out, char *err, size_t errcap)
{
	struct auth_grant g = {0};
	char word[AUTH_POOL_MAX + 8], why[200];
	bool too_long;

	if (!auth_caps_word(&s, end, word, sizeof(word), &too_long))
		CAPS_FAIL("empty grant (expected 'allow ...' or 'profile ...')");
	if (strcmp(word, "allow") == 0) {
		if (!auth_caps_word(&s, end, word, sizeof(word), &too_long))
			CAPS_FAIL("'allow' needs a permission (r, w, rw or *)");
		if (strcmp(word, "r") == 0)
			g.perm = AUTH_PERM_R;
		else if (strcmp(word, "w") == 0)
			g.perm = AUTH_PERM_W;
		else if (strcmp(word, "rw") == 0 || strcmp(word, "wr") == 0)
			g.perm = AUTH_PERM_R | AUTH_PERM_W;
		else if (strcmp(word, "*") == 0)
			g.perm = AUTH_PERM_ALL;
		else
			CAPS_FAIL("'%s' is not a permission (expected r, w, rw or *)", word);
	} else if (strcmp(word, "profile") == 0) {
		if (!auth_caps_word(&s, end, word, sizeof(word), &too_long))
			CAPS_FAIL("'profile' needs a name (osd, client, mount or bootstrap-osd)");
		for (size_t i = 1; i < sizeof(auth_profile_names) / sizeof(auth_profile_names[0]);
		     i++)
			if (strcmp(word, auth_profile_names[i]) == 0)
				g.profile = (uint8_t)i;
		if (g.profile == AUTH_PROFILE_NONE)
			CAPS_FAIL("unknown profile '%s' (expected osd, client, mount or "
				  "bootstrap-osd)",
				  word);
		if (g.profile == AUTH_PROFILE_BOOTSTRAP_OSD && svc != AUTH_SVC_MON)
			CAPS_FAIL("profile bootstrap-osd applies to mon caps only");
		g.perm = (uint8_t)auth_profile_perm(svc, g.profile);
	} else {
		CAPS_FAIL("'%s': a grant starts with 'allow' or 'profile'", word);
	}
	if (auth_caps_word(&s, end, word, sizeof(word), &too_long)) {
		if (strncmp(word, "pool=", 5) != 0)
			CAPS_FAIL("unexpected '%s' (only pool=NAME may follow)", word);
		if (svc != AUTH_SVC_OSD)
			CAPS_FAIL("pool= applies to osd caps only");
		if (g.profile == AUTH_PROFILE_OSD || g.perm == AUTH_PERM_ALL)
			CAPS_FAIL("pool= does not go with '%s'",
				  g.profile ? "profile osd" : "allow *");
		if (too_long ||
		    weft_name_check("pool", word + 5, AUTH_POOL_MAX - 1, why, sizeof(why)) != 0)
			CAPS_FAIL("%s", too_long ? "pool name too long" : why);
		g.has_pool = true;
		/* Checked above: at most AUTH_POOL_MAX - 1 characters. */
		memcpy(g.pool, word + 5, strlen(word + 5) + 1);
		if (auth_caps_word(&s, end, word, sizeof(word), &too_long))
			CAPS_FAIL("unexpected '%s' after pool=", word);
	}
	*g_out = g;
	return 0;
}

int auth_caps_parse(struct auth_caps *caps, enum auth_svc svc, const char *text, char *err,
		    size_t errcap)
{
	struct auth_grant grants[AUTH_GRANTS_MAX];
	const char *s = text, *end;
	unsigned int n = 0;
	int rc;

	/* Checked first: the other messages quote the text, which must stay one line. */
	for (size_t i = 0; text[i]; i++) {
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f) {
			snprintf(err, errcap, "%s cap: byte 0x%02x at offset %zu is not allowed",
				 auth_svc_names[svc], (unsigned char)text[i], i);
			return -EINVAL;
		}
	}
	if (strlen(text) >= AUTH_CAPS_TEXT_MAX) {
		snprintf(err, errcap, "%s cap: longer than %d characters", auth_svc_names[svc],
			 AUTH_CAPS_TEXT_MAX - 1);
		return -EINVAL;
	}
	for (;;) {
		end = s + strcspn(s, ",;");
		if (n == AUTH_GRANTS_MAX)
			CAPS_FAIL("more than %d grants", AUTH_GRANTS_MAX);
		rc = auth_grant_parse(svc, text, s, end, &grants[n], err, errcap);
		if (rc != 0)
			return rc;
		n++;
		if (*end == '\0')
			break;
		s = end + 1;
	}
	memcpy(caps->grant[svc], grants, n * sizeof(grants[0]));
	caps->count[svc] = (uint8_t)n;
	caps->set[svc] = true;
	return 0;
}

int auth_caps_parse_args(struct auth_caps *caps_out, int argc, char *const *argv, char *err,
			 size_t errcap)
{
	struct auth_caps caps = {0};
	enum auth_svc svc;
	int rc;

	if (argc % 2 != 0) {
		snprintf(err, errcap, "caps come in pairs: SERVICE 'CAPS' (mon 'allow r')");
		return -EINVAL;
	}
	for (int i = 0; i < argc; i += 2) {
		if (auth_svc_lookup(argv[i], &svc) != 0) {
			snprintf(err, errcap, "unknown service '%s' (expected mon or osd)",
				 argv[i]);
			return -EINVAL;
		}
		if (caps.set[svc]) {
			snprintf(err, errcap, "%s caps given twice", argv[i]);
			return -EINVAL;
		}
		rc = auth_caps_parse(&caps, svc, argv[i + 1], err, errcap);
		if (rc != 0)
			return rc;
	}
	*caps_out = caps;
	return 0;
}

bool auth_caps_has_profile(const struct auth_caps *caps, enum auth_svc svc, enum auth_profile p)
{
	if ((unsigned)svc >= AUTH_SVC_COUNT)
		return false;
	for (unsigned int i = 0; i < caps->count[svc]; i++)
		if (caps->grant[svc][i].profile == p)
			return true;
	return false;
}

int auth_caps_format(const struct auth_caps *caps, enum auth_svc svc, char *buf, size_t cap)
{
	size_t off = 0;
	int n;

	buf[0] = '\0';
	for (unsigned int i = 0; i < caps->count[svc]; i++) {
		const struct auth_grant *g = &caps->grant[svc][i];
		const char *perm = g->perm == AUTH_PERM_ALL		    ? "*"
				   : g->perm == (AUTH_PERM_R | AUTH_PERM_W) ? "rw"
				   : g->perm == AUTH_PERM_R		    ? "r"
									    : "w";

		if (g->profile != AUTH_PROFILE_NONE)
			n = snprintf(buf + off, cap - off, "%sprofile %s", i ? ", " : "",
				     auth_profile_names[g->profile]);
		else
			n = snprintf(buf + off, cap - off, "%sallow %s", i ? ", " : "", perm);
		if (n < 0 || (size_t)n >= cap - off)
			return -ENOBUFS;
		off += (size_t)n;
		if (g->has_pool) {
			n = snprintf(buf + off, cap - off, " pool=%s", g->pool);
			if (n < 0 || (size_t)n >= cap - off)
				return -ENOBUFS;
			off += (size_t)n;
		}
	}
	return 0;
}

bool auth_caps_allow(const struct auth_caps *caps, enum auth_svc svc, const char *pool,
		     unsigned int need)
{
	unsigned int have = 0;

	if ((unsigned)svc >= AUTH_SVC_COUNT || need == 0)
		return false;
	for (unsigned int i = 0; i < caps->count[svc]; i++) {
		const struct auth_grant *g = &caps->grant[svc][i];

		if (g->has_pool && (pool == NULL || strcmp(pool, g->pool) != 0))
			continue;
		have |= g->perm;
	}
	return (have & need) == need;
}

void auth_caps_encode(struct proto_enc *enc, const struct auth_caps *caps)
{
	char text[AUTH_CAPS_TEXT_MAX * 2];

	for (int s = 0; s < AUTH_SVC_COUNT; s++) {
		if (auth_caps_format(caps, (enum auth_svc)s, text, sizeof(text)) != 0) {
			/* Cannot happen for parsed caps; make the encoder fail, not lie. */
			enc->err = enc->err ? enc->err : -EINVAL;
			return;
		}
		proto_enc_put_u8(enc, caps->set[s] ? 1 : 0);
		proto_enc_put_str16(enc, text, strlen(text));
	}
}

int auth_caps_decode(struct proto_dec *dec, struct auth_caps *caps_out)
{
	struct auth_caps caps = {0};
	char text[AUTH_CAPS_TEXT_MAX], canon[AUTH_CAPS_TEXT_MAX], why[PROTO_ERR_LEN];
	size_t len;
	uint8_t set;

	for (int s = 0; s < AUTH_SVC_COUNT; s++) {
		proto_dec_get_u8(dec, "caps.set", &set);
		proto_dec_get_str16(dec, "caps.text", AUTH_CAPS_TEXT_MAX - 1, text, sizeof(text),
				    &len);
		if (dec->err != 0)
			return -EBADMSG;
		if (set > 1)
			return proto_dec_fail(dec, "caps.set: %u is not 0 or 1", set);
		if (set == 0) {
			if (text[0] != '\0')
				return proto_dec_fail(dec, "caps: %s text without a cap",
						      auth_svc_name((enum auth_svc)s));
			continue;
		}
		if (auth_caps_parse(&caps, (enum auth_svc)s, text, why, sizeof(why)) != 0)
			return proto_dec_fail(dec, "caps: %s", why);
		/* One spelling per value on the wire, as everywhere in proto/. */
		if (auth_caps_format(&caps, (enum auth_svc)s, canon, sizeof(canon)) != 0 ||
		    strcmp(canon, text) != 0)
			return proto_dec_fail(dec, "caps: %s cap '%s' is not in canonical form",
					      auth_svc_name((enum auth_svc)s), text);
	}
	*caps_out = caps;
	return 0;
}
