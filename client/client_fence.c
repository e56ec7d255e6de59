/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The client instance and fencing (docs/volumes.md, "Exclusive lock").
 *
 * Every cluster handle draws a random 64-bit instance at weft_connect() and
 * sends it as the nonce of its hello, so every OSD knows which instance
 * each client connection belongs to. `weft osd blocklist add INSTANCE`
 * puts one into the map; OSDs then refuse its ops with -WEFT_E_BLOCKLISTED.
 * A handle learns it is fenced from that refusal or from a map that lists
 * it, and stays fenced (sticky: an entry that expires must not revive a
 * handle that missed the moment).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "client/client_int.h"
#include "common/log.h"
#include "proto/hello.h"

void client_instance_init(struct weft_cluster *cl)
{
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		v = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)cl;
	v |= 1; /* never 0: 0 is "no instance" */
	proto_hello_init(&cl->hello, cl->name);
	cl->hello.nonce = v; /* per handle, not per process: two handles are two instances */
	cl->instance = v;
}

uint64_t weft_instance(const struct weft_cluster *cl)
{
	return cl->instance;
}

void client_blocklisted_mark(struct weft_cluster *cl, const char *how)
{
	char inst[MON_INSTANCE_STR];

	if (cl->blocklisted)
		return;
	cl->blocklisted = true;
	log_error("client",
		  "%s: this client instance %s is blocklisted (%s): its writes are "
		  "fenced",
		  cl->name, mon_instance_str(cl->instance, inst), how);
}

bool weft_blocklisted(struct weft_cluster *cl)
{
	if (!cl->blocklisted && mon_map_blocklisted(monc_map(cl->monc), cl->instance))
		client_blocklisted_mark(cl, "the map lists it");
	return cl->blocklisted;
}

int client_fence(struct weft_cluster *cl, uint64_t instance, unsigned int seconds,
		 uint32_t *epoch_out)
{
	char json[160], err[PROTO_ERRMSG_MAX + 1] = "", inst[MON_INSTANCE_STR];
	char *out = NULL, *p;
	unsigned long epoch = 0;
	int rc;

	if (instance == cl->instance)
		return -EDEADLK; /* fencing another handle's instance only */
	mon_instance_str(instance, inst);
	snprintf(json, sizeof(json),
		 "{\"prefix\": \"osd blocklist add\", \"instance\": \"%s\", \"seconds\": %u}", inst,
		 seconds);
	rc = monc_command_sync(cl->monc, json, (unsigned int)cl->op_timeout_ms, &out, err,
			       sizeof(err));
	if (rc != 0) {
		log_error("client", "%s: blocklisting instance %s failed: %s%s%s", cl->name, inst,
			  weft_strerror(rc), err[0] ? ": " : "", err);
		free(out);
		return rc;
	}
	p = out != NULL ? strstr(out, "\"epoch\":") : NULL;
	if (p != NULL)
		epoch = strtoul(p + 8, NULL, 10);
	free(out);
	if (epoch == 0 || epoch > UINT32_MAX) {
		log_error("client", "%s: the monitors' answer to blocklisting %s has no epoch",
			  cl->name, inst);
		return -EPROTO;
	}
	/*
	 * Our ops carry our map's epoch and an OSD serves only ops of its own
	 * epoch (older: -ESTALE, newer: -EAGAIN until it has it). Once we hold
	 * this epoch, no OSD serves us without knowing the blocklist.
	 */
	rc = weft_wait_epoch(cl, (uint32_t)epoch, (unsigned int)cl->op_timeout_ms);
	if (rc != 0) {
		log_error("client", "%s: map epoch %lu (blocklisting %s) did not come: %s",
			  cl->name, epoch, inst, weft_strerror(rc));
		return rc;
	}
	log_info("client", "%s: blocklisted instance %s for %u s (map epoch %lu)", cl->name, inst,
		 seconds, epoch);
	if (epoch_out)
		*epoch_out = (uint32_t)epoch;
	return 0;
}
