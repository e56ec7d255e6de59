/* SPDX-License-Identifier: Apache-2.0 */
/* Between mon_member.c (peer table, raft following the map) and mon_member_cmd.c (commands). */
#ifndef WEFT_MON_MON_MEMBER_H
#define WEFT_MON_MON_MEMBER_H

#include "mon/mon_priv.h"

/* "ip:port" / "[ip6]:port" with the port moved by delta; -EINVAL if it does not parse. */
int mon_addr_shift(const char *addr, long delta, char *out, size_t cap);
bool mon_peer_up(struct mon *mon, const struct mon_peer *p);
/* Voters in raft's configuration, and how many of them the leader hears from. */
void mon_member_voters(struct mon *mon, unsigned int *n_out, unsigned int *up_out);
const char *mon_role_str(int role);
/* The first difference between the map's list and raft's configuration (one line in why). */
bool mon_member_pending(struct mon *mon, char *why, size_t cap, uint32_t *joining_id);
/* Hand leadership to another voter (raft picks one that is caught up). */
int mon_member_step_down(struct mon *mon);
/* The job that writes the first monitor list from raft's configuration. */
int mon_member_build_seed(struct mon *mon, struct mon_job *job, struct mon_inc *inc);

#endif
