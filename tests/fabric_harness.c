/* SPDX-License-Identifier: Apache-2.0 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "tests/fabric_harness.h"

const char *fh_backend = "tcp";

/* RDMA CM cannot route 127.0.0.1 over a RoCE device: the VM run sets 198.18.0.1. */
const char *fh_ip(void)
{
	const char *ip = getenv("WEFT_TEST_ADDR");

	return ip && ip[0] ? ip : "127.0.0.1";
}

uint32_t fh_peer_timeout_ms;

struct fab_domain *fh_domain_open(uint32_t msg_size, uint32_t credits, uint32_t sq_depth)
{
	struct fab_domain_attr attr;
	struct fab_domain *dom = NULL;

	fab_domain_attr_init(&attr);
	attr.backend = fh_backend;
	attr.name = "test";
	attr.msg_size = msg_size;
	attr.recv_credits = credits;
	attr.sq_depth = sq_depth;
	attr.busy_poll_us = 0;
	attr.connect_timeout_ms = 3000;
	if (fh_peer_timeout_ms != 0)
		attr.peer_timeout_ms = fh_peer_timeout_ms;
	if (fab_domain_open(&attr, &dom))
		return NULL;
	return dom;
}

int fh_verbs_probe(uint32_t msg_size, uint32_t credits, uint32_t sq_depth)
{
	struct fab_domain *d;

	fh_backend = "verbs";
	weft_log_open("test", WEFT_LOG_WARN, NULL);
	d = fh_domain_open(msg_size, credits, sq_depth);
	if (!d) {
		printf("SKIP: no usable verbs device here\n");
		return 77;
	}
	fab_domain_close(d);
	return 0;
}

void fh_side_init(struct fh_side *s, struct fab_domain *dom)
{
	s->dom = dom;
	s->evs = calloc(FH_MAX_EVENTS, sizeof(*s->evs));
	s->nevs = 0;
}

void fh_side_fini(struct fh_side *s)
{
	/* Give back receive buffers nobody took, then the domain. */
	for (unsigned int i = 0; i < s->nevs; i++)
		if (s->evs[i].kind == FAB_EV_RECV)
			fab_recv_release(&s->evs[i]);
	if (s->dom)
		fab_domain_close(s->dom);
	free(s->evs);
	memset(s, 0, sizeof(*s));
}

void fh_pump(struct fh_side **sides, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct fh_side *s = sides[i];
		int got;

		fab_progress(s->dom, 0);
		do {
			unsigned int room = FH_MAX_EVENTS - s->nevs;

			if (room == 0) {
				fprintf(stderr, "harness: event list full\n");
				abort();
			}
			got = fab_cq_poll(s->dom, s->evs + s->nevs, room > 64 ? 64 : room);
			if (got > 0)
				s->nevs += (unsigned int)got;
		} while (got > 0);
	}
}

static int fh_find(const struct fh_side *s, enum fab_ev_kind kind, struct fab_ep *ep)
{
	for (unsigned int i = 0; i < s->nevs; i++)
		if (s->evs[i].kind == kind && (!ep || s->evs[i].ep == ep))
			return (int)i;
	return -1;
}

unsigned int fh_count(const struct fh_side *s, enum fab_ev_kind kind)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < s->nevs; i++)
		n += s->evs[i].kind == kind;
	return n;
}

bool fh_wait(struct fh_side **sides, unsigned int n, struct fh_side *s, enum fab_ev_kind kind,
	     struct fab_ep *ep, struct fab_cqe *out)
{
	uint64_t deadline = clock_now_ms() + FH_TIMEOUT_MS;
	int i;

	for (;;) {
		i = fh_find(s, kind, ep);
		if (i >= 0)
			break;
		if (clock_now_ms() > deadline) {
			fprintf(stderr, "harness: timed out waiting for %s\n", fab_ev_name(kind));
			return false;
		}
		fh_pump(sides, n);
	}
	*out = s->evs[i];
	memmove(s->evs + i, s->evs + i + 1, (s->nevs - (unsigned int)i - 1) * sizeof(*s->evs));
	s->nevs--;
	return true;
}

bool fh_pair_wait(struct fh_pair *p, struct fh_side *s, enum fab_ev_kind kind,
		  struct fab_cqe *out)
{
	struct fh_side *sides[2] = { &p->a, &p->b };

	return fh_wait(sides, 2, s, kind, NULL, out);
}

void fh_pair_pump_for(struct fh_pair *p, unsigned int ms)
{
	struct fh_side *sides[2] = { &p->a, &p->b };
	uint64_t until = clock_now_ms() + ms;

	while (clock_now_ms() < until)
		fh_pump(sides, 2);
}

int fh_pair_open(struct fh_pair *p, uint32_t msg_size, uint32_t credits, uint32_t sq_depth)
{
	struct fab_domain *da, *db;
	struct fab_cqe cqe;
	char addr[64];
	int rc;

	memset(p, 0, sizeof(*p));
	da = fh_domain_open(msg_size, credits, sq_depth);
	db = fh_domain_open(msg_size, credits, sq_depth);
	if (!da || !db) {
		fab_domain_close(da);
		fab_domain_close(db);
		return -ENODEV;
	}
	fh_side_init(&p->a, da);
	fh_side_init(&p->b, db);
	snprintf(addr, sizeof(addr), "%s:0", fh_ip());
	rc = fab_listen(db, addr, (void *)0xb0b, &p->l);
	if (rc)
		return rc;
	snprintf(addr, sizeof(addr), "%s:%u", fh_ip(), fab_listener_port(p->l));
	rc = fab_connect(da, addr, NULL, (void *)0xa11ce, &p->ea);
	if (rc)
		return rc;
	if (!fh_pair_wait(p, &p->a, FAB_EV_CONNECTED, &cqe) || cqe.status)
		return cqe.status ? cqe.status : -ETIMEDOUT;
	if (!fh_pair_wait(p, &p->b, FAB_EV_ACCEPTED, &cqe))
		return -ETIMEDOUT;
	p->eb = cqe.ep;
	return 0;
}

int fh_pair_connect_more(struct fh_pair *p, struct fab_ep **ea_out, struct fab_ep **eb_out)
{
	struct fh_side *sides[2] = {&p->a, &p->b};
	struct fab_ep *ea;
	struct fab_cqe cqe;
	char addr[64];
	int rc;

	snprintf(addr, sizeof(addr), "%s:%u", fh_ip(), fab_listener_port(p->l));
	rc = fab_connect(p->a.dom, addr, NULL, NULL, &ea);
	if (rc)
		return rc;
	if (!fh_wait(sides, 2, &p->a, FAB_EV_CONNECTED, ea, &cqe) || cqe.status)
		return cqe.status ? cqe.status : -ETIMEDOUT;
	if (!fh_wait(sides, 2, &p->b, FAB_EV_ACCEPTED, NULL, &cqe))
		return -ETIMEDOUT;
	*ea_out = ea;
	*eb_out = cqe.ep;
	return 0;
}

void fh_pair_close(struct fh_pair *p)
{
	fh_side_fini(&p->a);
	fh_side_fini(&p->b);
}
