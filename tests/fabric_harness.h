/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Test harness for the fabric suite: two domains in one process (or a
 * child process), every completion captured into a per-domain list so a
 * test can wait for a given event while both sides keep progressing.
 * Waits are bounded: a test that would hang fails instead.
 */
#ifndef WEFT_TESTS_FABRIC_HARNESS_H
#define WEFT_TESTS_FABRIC_HARNESS_H

#include <stdbool.h>
#include <stdint.h>

#include "fabric/fabric.h"

#define FH_MAX_EVENTS 65536
#define FH_TIMEOUT_MS 15000

struct fh_side {
	struct fab_domain *dom;
	struct fab_cqe *evs; /* captured, not yet taken */
	unsigned int nevs;
};

struct fh_pair {
	struct fh_side a, b;
	struct fab_listener *l;
	struct fab_ep *ea; /* a's end (connector) */
	struct fab_ep *eb; /* b's end (acceptor) */
};

extern const char *fh_backend;
/* The IP the suite listens on and connects to: $WEFT_TEST_ADDR, default 127.0.0.1. */
const char *fh_ip(void);

/* ms_peer_timeout of the domains opened below; 0 = the default. */
extern uint32_t fh_peer_timeout_ms;
/* Verbs-only programs: fh_backend = "verbs", logs at WARN; 0 if a domain opens, else 77 (skip). */
int fh_verbs_probe(uint32_t msg_size, uint32_t credits, uint32_t sq_depth);
/* Open a domain on fh_backend with small, test-friendly limits. */
struct fab_domain *fh_domain_open(uint32_t msg_size, uint32_t credits, uint32_t sq_depth);
void fh_side_init(struct fh_side *s, struct fab_domain *dom);
void fh_side_fini(struct fh_side *s);
/* Progress every side once and capture completions. */
void fh_pump(struct fh_side **sides, unsigned int n);
/*
 * Pump until side s has an event of kind (and ep, unless NULL) queued; take
 * it into out. Returns false after FH_TIMEOUT_MS.
 */
bool fh_wait(struct fh_side **sides, unsigned int n, struct fh_side *s, enum fab_ev_kind kind,
	     struct fab_ep *ep, struct fab_cqe *out);
/* Count captured events of kind on s (without taking them). */
unsigned int fh_count(const struct fh_side *s, enum fab_ev_kind kind);
/* Connected pair over 127.0.0.1. Returns 0 or -errno. */
int fh_pair_open(struct fh_pair *p, uint32_t msg_size, uint32_t credits, uint32_t sq_depth);
void fh_pair_close(struct fh_pair *p);
/* One more connection from a to b's listener: a's end in *ea_out, b's in *eb_out. */
int fh_pair_connect_more(struct fh_pair *p, struct fab_ep **ea_out, struct fab_ep **eb_out);
/* Pump a and b for ms milliseconds. */
void fh_pair_pump_for(struct fh_pair *p, unsigned int ms);
bool fh_pair_wait(struct fh_pair *p, struct fh_side *s, enum fab_ev_kind kind,
		  struct fab_cqe *out);

#endif
