/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The simulator's world (tests/sim_pg.c), shared with its scripted
 * regression scenarios (tests/sim_pg_scn.c).
 */
#ifndef WEFT_TESTS_SIM_PG_H
#define WEFT_TESTS_SIM_PG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "osd/pg/pg.h"

#define S_OSDS	  6
#define S_PGS	  2
#define S_NAMES	  12
#define S_SIZE	  3
#define S_MINSIZE 2
#define S_MSG	  (256u << 10)

/* ------------------------------------------------------------------ store */

struct s_obj {
	bool exists;
	uint64_t version, content; /* content: the client op's sequence number */
};

struct s_lent {
	uint64_t v;
	uint16_t op;
	char name[16];
};

struct s_spg { /* one PG's persisted state on one OSD */
	bool has_info;
	uint8_t info[PG_INFO_ENC_MAX];
	size_t info_len;
	struct s_lent *log;
	uint32_t nlog, caplog;
	struct s_obj obj[S_NAMES];
};

struct s_store {
	struct s_spg pg[S_PGS];
	uint32_t epoch; /* the map it processed last (committed after the PGs' writes before it) */
};

enum s_txkind { S_TX_PG, S_TX_OP, S_TX_REC, S_TX_PUSH, S_TX_DESTROY, S_TX_MAP };

struct s_tx {
	struct s_tx *next;
	enum s_txkind kind;
	int pgi;
	uint64_t token; /* the PG's transaction token (0: none) */
	/* log part */
	struct s_lent *put;
	uint32_t nput;
	uint64_t trim;
	bool clear, info;
	uint8_t infob[PG_INFO_ENC_MAX];
	size_t info_len;
	/* objects: set (exists, version, content) or remove */
	int oname;
	struct s_obj oval;
	int rmnames[S_NAMES];
	int nrm;
	/* after the commit */
	int ack_to;	    /* REC / PUSH: who to ack */
	uint64_t ack_v;	    /* REC: version; PUSH: version pushed */
	uint64_t op_seq;    /* OP: the client op */
	uint64_t commit_at; /* simulated ms */
	uint32_t map_epoch; /* MAP: the map saved */
};

/* ---------------------------------------------------------------- network */

/* S_M_CRC: a deep-scrub read of oname ends (to itself; v = the token) */
enum s_mkind { S_M_PG, S_M_REC, S_M_ACK, S_M_PUSH, S_M_PUSH_ACK, S_M_CRC };

struct s_msg {
	struct s_msg *next;
	enum s_mkind kind;
	int from, to;
	int pgi;
	uint8_t *frame; /* S_M_PG: an encoded proto frame */
	size_t len;
	uint32_t epoch;
	uint64_t v, prev;
	uint16_t op;
	int oname;
	struct s_obj oval; /* REC / PUSH: the object after it */
	int status;
	uint64_t op_seq;
};

struct s_q {
	struct s_msg *head, *tail;
	uint32_t n;
};

/* ------------------------------------------------------------------ ops */

enum s_opst { S_OP_QUEUED, S_OP_ORDERED, S_OP_DONE };

struct s_op {
	uint64_t seq;
	int oname;
	bool remove;
	int primary, pgi;
	enum s_opst st;
	uint64_t v;
	bool local_done;
	uint32_t wait; /* acting members still to ack (bit = osd) */
	int rc;
	uint64_t start;
	struct s_op *next; /* on the primary's queue */
};

struct s_osd {
	int id;
	bool up, in;
	uint32_t map_epoch;
	uint64_t incarnation;
	struct s_store st;
	struct pg *pg[S_PGS];
	struct pg_env env;
	struct s_tx *txq, *txq_tail;
	struct s_op *ops[S_PGS];
	bool kick[S_PGS];
	uint32_t pending[S_PGS][S_NAMES]; /* local op transactions not committed yet */
	int budget;
	bool scrub_busy;
	uint64_t next_tick;
	/* the OSD's tick rule (osd_pgtick.c): a PG is ticked when an entry point ran or it is due */
	bool tick_want[S_PGS];
	uint64_t tick_at[S_PGS];
	uint32_t boot_epoch; /* 0: not booted yet */
	struct s_q defer[S_OSDS]; /* per sender: held until our map is new enough */
};

/* --------------------------------------------------------------- the world */

struct s_map {
	uint32_t epoch;
	bool up[S_OSDS], in[S_OSDS];
	uint32_t up_from[S_OSDS]; /* the epoch its running process booted in */
};

/* ---------------------------------------------------------------- shared */

extern uint64_t s_rng, s_now, s_step;
extern bool s_verbose, s_failed;
extern char s_why[512];
extern struct s_osd s_osd[S_OSDS];
extern struct s_op *s_opv;
extern uint32_t s_nops;
extern uint32_t s_hold_down;	/* OSDs (bits) the settling steps do not restart */
extern uint64_t s_net_held;	/* links (bit from * S_OSDS + to) whose messages wait */
extern uint32_t s_map_held;	/* OSDs (bits) that get no newer map meanwhile */
extern int s_fail_rec_osd;	/* the next record this OSD gets fails (-ENOSPC); -1: none */
extern uint64_t s_fail_rec_count; /* records failed that way */
extern int s_drop_act_osd;	/* the next ACTIVATE sent to this OSD is lost; -1: none */
extern uint64_t s_drop_act_count; /* ACTIVATEs lost that way */

#define TRACE(...)                                                                                 \
	do {                                                                                       \
		if (s_verbose) {                                                                   \
			printf("[%6llu %6llums] ", (unsigned long long)s_step,                     \
			       (unsigned long long)s_now);                                         \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

unsigned int rn(unsigned int n);
int s_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
unsigned int s_acting(const struct s_map *m, int pgi, int32_t *out);
const struct s_map *s_map_cur(void);
void s_mark(int o, bool up, bool in);
void s_osd_crash(struct s_osd *o);
void s_osd_start(struct s_osd *o);
/* A client op on object k of PG g through its primary: its seq, or 0 (not now). */
uint64_t s_client_issue_at(int g, int k, bool remove);
void s_step_once(bool chaos, bool client);
/* Ring records of PG g from OSD `from` still in the network are lost: their count. */
unsigned int s_net_drop_recs(int from, int g);
/* PG messages of PG g from `from` to `to` still on their way. */
unsigned int s_net_count(int from, int to, int g);
bool s_all_clean(void);
void s_check_durable(void);
void s_check_final(void);
void s_reset(void);
/* Crashed OSD o loses its store (a replaced disk): it comes back empty. */
void s_osd_wipe(struct s_osd *o);
/* A new world: every OSD in and started, the generator seeded. */
void s_world_start(uint64_t seed);
/* Everything back up and in, holds released; then settle and check (0 or -1). */
int s_finish(void);

/* tests/sim_pg_scn.c: the scripted scenarios; 0, or -1 with s_why. */
int s_scenarios_run(uint64_t seed, const char *only, unsigned int *nrun_out);

#endif
