/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A QP that stops completing work (a provider that lost a work request)
 * must not hang its connection for good: the verbs backend fails a
 * connection that holds posted work and saw no completion for twice
 * ms_peer_timeout (at least 5 s; verbs_check_stalls), so its ops complete
 * in error and the layers above reconnect and resend. The stall is made
 * real: the sender's QP is moved to SQD (send queue drained), where the
 * device starts no new work request, and a send is posted. Runs inside
 * the Soft-RoCE VM (verbs-tests/suite-in-vm.sh); exits 77 where no verbs
 * device is usable, and skips its case where the device completes the send
 * anyway (it cannot be stalled this way there).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/clock.h"
#include "common/log.h"
#include "fabric/verbs/verbs.h"
#include "tests/fabric_harness.h"

#define MSG	4096
#define CREDITS 16
#define SQ	64

static void test_stalled_qp_fails(void **state)
{
	struct ibv_qp_attr qa = {.qp_state = IBV_QPS_SQD};
	struct fh_pair p;
	struct fab_cqe cqe;
	static const char msg[] = "stuck";
	uint64_t t0, waited;
	int rc;

	(void)state;
	assert_int_equal(fh_pair_open(&p, MSG, CREDITS, SQ), 0);
	/* the pair works before the stall */
	assert_int_equal(fab_send(p.ea, msg, sizeof(msg), NULL), 0);
	assert_true(fh_pair_wait(&p, &p.b, FAB_EV_RECV, &cqe));
	fab_recv_release(&cqe);
	assert_true(fh_pair_wait(&p, &p.a, FAB_EV_SEND, &cqe));
	rc = ibv_modify_qp(verbs_ep_of(p.ea)->qp, &qa, IBV_QP_STATE);
	if (rc != 0) {
		fh_pair_close(&p);
		printf("SKIP: this device refuses SQD (%s): no way to stall a QP here\n",
		       strerror(rc));
		skip();
	}
	t0 = clock_now_ms();
	assert_int_equal(fab_send(p.ea, msg, sizeof(msg), NULL), 0);
	fh_pair_pump_for(&p, 2000);
	if (fh_count(&p.a, FAB_EV_SEND) > 0 && fh_count(&p.a, FAB_EV_PEER_FAILED) == 0) {
		fh_pair_close(&p);
		printf("SKIP: the device completed a send posted in SQD: no stall to test\n");
		skip();
	}
	assert_int_equal(fh_count(&p.b, FAB_EV_RECV), 0); /* nothing left the stalled QP */
	/* 2 x ms_peer_timeout (1 s) is below the 5 s floor: failed after 5-7 s */
	assert_true(fh_pair_wait(&p, &p.a, FAB_EV_SEND, &cqe));
	waited = clock_now_ms() - t0;
	assert_int_not_equal(cqe.status, 0);
	assert_true(fh_pair_wait(&p, &p.a, FAB_EV_PEER_FAILED, &cqe));
	printf("stalled send failed after %llu ms (status %d)\n", (unsigned long long)waited,
	       cqe.status);
	assert_true(waited >= 4500);
	assert_true(waited <= 9000);
	fh_pair_close(&p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_stalled_qp_fails),
	};
	int rc;

	(void)argc;
	(void)argv;
	fh_peer_timeout_ms = 1000;
	rc = fh_verbs_probe(MSG, CREDITS, SQ);
	if (rc != 0)
		return rc;
	return cmocka_run_group_tests_name("verbs/stall", tests, NULL, NULL);
}
