/* SPDX-License-Identifier: Apache-2.0 */
/* Between monc.c and monc_ticket.c: the mon client's internals the ticket keeper needs. */
#ifndef WEFT_MON_MONC_MONC_PRIV_H
#define WEFT_MON_MONC_MONC_PRIV_H

#include "auth/key.h"
#include "mon/monc/monc.h"

struct monc_tickets;

const char *monc_name(const struct monc *monc);
/* The seal key of the session with the monitor we talk to now (msgr_conn_seal_key). */
int monc_seal_key(const struct monc *monc, struct auth_key *key_out);
struct monc_tickets *monc_tickets_of(struct monc *monc);
void monc_tickets_set(struct monc *monc, struct monc_tickets *t);
/* From monc_progress: ask for what is due. */
void monc_ticket_tick(struct monc_tickets *t);
/* When monc_ticket_tick next asks for something, in clock_now_ms() time; UINT64_MAX: never. */
uint64_t monc_ticket_next_ms(const struct monc_tickets *t, uint64_t now_ms);
void monc_ticket_free(struct monc_tickets *t);

#endif
