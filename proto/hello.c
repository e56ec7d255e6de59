/* SPDX-License-Identifier: Apache-2.0 */
/* Hello: this side's versions and features, and the verdict on a peer's. See hello.h. */
#include "proto/hello.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/version.h"

static uint64_t proto_hello_nonce(void)
{
	static uint64_t nonce;

	if (nonce == 0) {
		if (getrandom(&nonce, sizeof(nonce), 0) != (ssize_t)sizeof(nonce))
			nonce = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
		nonce |= 1; /* never 0: 0 means "not drawn yet" */
	}
	return nonce;
}

void proto_hello_init(struct proto_hello *h, const char *name)
{
	size_t n = strnlen(name, PROTO_NAME_MAX);
	const char *v = weft_version_full();

	memset(h, 0, sizeof(*h));
	if (!strncmp(name, "osd.", 4))
		h->entity_type = PROTO_ENTITY_OSD;
	else if (!strncmp(name, "mon.", 4))
		h->entity_type = PROTO_ENTITY_MON;
	else
		h->entity_type = PROTO_ENTITY_CLIENT;
	if (n == 0) {
		name = "client.unknown";
		n = strlen(name);
	}
	memcpy(h->name, name, n);
	h->name_len = n;
	h->proto_version = PROTO_VERSION;
	h->version_len = strnlen(v, PROTO_VERSTR_MAX);
	memcpy(h->version, v, h->version_len);
	h->features = PROTO_FEATS_SUPPORTED;
	h->required = PROTO_FEATS_REQUIRED;
	h->nonce = proto_hello_nonce();
}

int proto_hello_check(const struct proto_hello *local, const struct proto_hello *peer,
		      const char *peer_addr, char *why, size_t cap)
{
	uint64_t unknown = peer->required & ~local->features;
	uint64_t lacking = local->required & ~peer->features;
	/* room for the longest name, address and version: the version must survive */
	char who[PROTO_NAME_MAX + PROTO_ADDR_MAX + PROTO_VERSTR_MAX + 48];

	snprintf(who, sizeof(who), "%s%s%s (weft %s, protocol %u)", peer->name,
		 peer_addr && peer_addr[0] ? " at " : "", peer_addr ? peer_addr : "", peer->version,
		 peer->proto_version);
	if (peer->proto_version < PROTO_VERSION_MIN) {
		snprintf(why, cap,
			 "refusing %s: this weft %s speaks protocol %u..%u; upgrade the peer "
			 "(docs/upgrade.md)",
			 who, local->version, PROTO_VERSION_MIN, local->proto_version);
		return -EPROTONOSUPPORT;
	}
	if (unknown != 0) {
		snprintf(why, cap,
			 "refusing %s: it requires feature bits 0x%" PRIx64
			 " that this weft %s does not have; upgrade this side (docs/upgrade.md)",
			 who, unknown, local->version);
		return -EPROTONOSUPPORT;
	}
	if (lacking != 0) {
		snprintf(why, cap,
			 "refusing %s: it lacks feature bits 0x%" PRIx64
			 " that this weft %s requires; upgrade the peer (docs/upgrade.md)",
			 who, lacking, local->version);
		return -EPROTONOSUPPORT;
	}
	return 0;
}

void proto_hello_unexpected(uint16_t type, const char *peer_addr, char *why, size_t cap)
{
	snprintf(why, cap,
		 "refusing peer %s: its first message is %s, not hello (a weft older than "
		 "this %s, or not weft); upgrade the peer (docs/upgrade.md)",
		 peer_addr && peer_addr[0] ? peer_addr : "(unknown address)", proto_type_name(type),
		 weft_version_full());
}

int proto_hello_frame(const struct proto_hello *h, void *buf, size_t cap, size_t *len_out)
{
	struct proto_msg m = {.type = PROTO_HELLO};

	m.hello = *h;
	return proto_frame_encode(&m, 0, buf, cap, len_out);
}
