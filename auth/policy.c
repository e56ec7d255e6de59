/* SPDX-License-Identifier: Apache-2.0 */
/* Who must authenticate (policy.h). */
#include "auth/policy.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/conf.h"
#include "common/log.h"

static bool auth_policy_weft(const struct conf *conf, enum conf_key key)
{
	const char *v = conf_get_str(conf, key);

	/* The conf refuses anything but the two choices; an empty value cannot open the door. */
	return v == NULL || strcmp(v, "none") != 0;
}

void auth_policy_from_conf(const struct conf *conf, struct auth_policy *p_out)
{
	p_out->cluster = auth_policy_weft(conf, CONF_AUTH_CLUSTER_REQUIRED);
	p_out->service = auth_policy_weft(conf, CONF_AUTH_SERVICE_REQUIRED);
	p_out->client = auth_policy_weft(conf, CONF_AUTH_CLIENT_REQUIRED);
}

bool auth_policy_connect(const struct auth_policy *p, bool local_is_daemon)
{
	return local_is_daemon ? p->cluster : p->client;
}

bool auth_policy_accept(const struct auth_policy *p, bool peer_is_daemon)
{
	return peer_is_daemon ? p->cluster : p->service;
}

static const struct {
	size_t off;
	const char *name;
	unsigned int who;
	const char *what;
} auth_policy_opts[] = {
    {offsetof(struct auth_policy, cluster), "auth_cluster_required", CONF_WHO_ALL,
     "any peer claiming to be a daemon is let in with every right"},
    {offsetof(struct auth_policy, service), "auth_service_required", CONF_WHO_MON | CONF_WHO_OSD,
     "any client is served with every right"},
    {offsetof(struct auth_policy, client), "auth_client_required", CONF_WHO_CLIENT,
     "this client sends no key and does not check that the monitors are genuine"},
};

int auth_policy_warn(const struct auth_policy *p, const char *name, unsigned int who)
{
	int n = 0;

	for (size_t i = 0; i < sizeof(auth_policy_opts) / sizeof(auth_policy_opts[0]); i++) {
		bool weft = *(const bool *)((const char *)p + auth_policy_opts[i].off);

		if (weft || !(auth_policy_opts[i].who & who))
			continue;
		log_warn("auth", "%s: %s = none: %s (set it to weft)", name,
			 auth_policy_opts[i].name, auth_policy_opts[i].what);
		n++;
	}
	return n;
}

static int auth_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int auth_fsid_parse(const char *text, uint8_t out[16])
{
	uint8_t b[16];
	size_t n = 0;

	if (text == NULL || text[0] == '\0') {
		memset(out, 0, 16);
		return 0;
	}
	for (const char *p = text; *p != '\0'; p++) {
		int hi, lo;

		/* UUID dashes sit at fixed places: after 8, 12, 16 and 20 digits. */
		if (*p == '-' && (n == 4 || n == 6 || n == 8 || n == 10) && p[1] != '-')
			continue;
		if (n == 16 || (hi = auth_hex(p[0])) < 0 || (lo = auth_hex(p[1])) < 0)
			return -EINVAL;
		b[n++] = (uint8_t)(hi << 4 | lo);
		p++;
	}
	if (n != 16)
		return -EINVAL;
	memcpy(out, b, 16);
	return 0;
}

void auth_policy_insecure(const struct auth_policy *p, unsigned int who, char *buf, size_t cap)
{
	size_t at = 0;

	if (cap > 0)
		buf[0] = '\0';
	for (size_t i = 0; i < sizeof(auth_policy_opts) / sizeof(auth_policy_opts[0]); i++) {
		bool weft = *(const bool *)((const char *)p + auth_policy_opts[i].off);
		int n;

		if (weft || !(auth_policy_opts[i].who & who) || at >= cap)
			continue;
		n = snprintf(buf + at, cap - at, "%s%s", at > 0 ? ", " : "",
			     auth_policy_opts[i].name);
		at += n > 0 ? (size_t)n : 0;
	}
}
