/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Monitor membership (docs/mon.md, "Membership").
 *
 * Two records, one truth: the cluster map's monitor list (version 5: raft
 * id, name, public address) is what the operator asked for; canonical
 * raft's configuration (in its log and snapshots) is who votes. `weft mon
 * add` and `weft mon remove` commit a map increment; the leader then
 * drives raft's configuration after it, one change at a time:
 *
 *   in the map, not in raft      raft_add (spare)
 *   spare                        raft_assign standby (it gets the log)
 *   standby, caught up           raft_assign voter
 *   in raft, not in the map      raft_remove (the leader hands over first)
 *
 * A command is refused while raft does not match the map yet, so there is
 * one change in flight at a time, and a change that would leave fewer
 * voters up than a majority is refused. A monitor that applies the
 * increment removing it stops; one that restarts after its removal
 * refuses to run. The peer table (names, addresses) follows raft's
 * configuration and the map, not mon_host: mon_host only bootstraps.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "common/log.h"
#include "common/name.h"
#include "mon/mon_member.h"
#include "mon/mon_priv.h"

#define MON_MEMBER_RETRY_MS 1000 /* after a refused raft change */
#define MON_CATCHUP_SLACK 16	 /* a standby this close to the leader's log is caught up */
#define MON_PROBE_MS 1000
#define MON_REMOVE_WAIT_MS 3000 /* for a removed monitor to get its removal */

/* ------------------------------------------------------------ addresses */

/* "ip:port" / "[ip6]:port" with the port moved by delta; -EINVAL if it does not parse. */
int mon_addr_shift(const char *addr, long delta, char *out, size_t cap)
{
	const char *colon = strrchr(addr, ':');
	char *end;
	long port;
	int n;

	if (colon == NULL || colon == addr)
		return -EINVAL;
	port = strtol(colon + 1, &end, 10);
	if (*end != '\0' || end == colon + 1 || port <= 0 || port + delta <= 0 ||
	    port + delta > 65535)
		return -EINVAL;
	n = snprintf(out, cap, "%.*s:%ld", (int)(colon - addr), addr, port + delta);
	return n > 0 && (size_t)n < cap ? 0 : -ENAMETOOLONG;
}

int mon_member_raft_addr(struct mon *mon, const char *addr, char *out, size_t cap)
{
	return mon_addr_shift(addr, (long)conf_get_int(mon->conf, CONF_MON_RAFT_PORT_OFFSET), out,
			      cap);
}

/* ----------------------------------------------------------- peer table */

struct mon_peer *mon_peer_by_id(struct mon *mon, raft_id id)
{
	for (unsigned int i = 0; i < mon->npeers; i++)
		if (mon->peers[i].id == id)
			return &mon->peers[i];
	return NULL;
}

static int mon_peer_cmp(const void *a, const void *b)
{
	const struct mon_peer *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Rebuild the peer table from raft's configuration (+ ourselves) and the map's names. */
void mon_member_sync(struct mon *mon)
{
	const struct raft_configuration *cfg = &mon->raft.configuration;
	long off = (long)conf_get_int(mon->conf, CONF_MON_RAFT_PORT_OFFSET);
	struct mon_peer np[MON_PEERS_MAX];
	unsigned int n = 0;
	bool have_self = false;
	uint64_t now = clock_now_ms();

	for (unsigned int i = 0; i < cfg->n && n < MON_PEERS_MAX; i++) {
		const struct raft_server *s = &cfg->servers[i];
		const struct mon_peer *old = mon_peer_by_id(mon, s->id);
		struct mon_peer *p = &np[n];

		memset(p, 0, sizeof(*p));
		p->id = s->id;
		snprintf(p->raft_addr, sizeof(p->raft_addr), "%s", s->address);
		if (mon_addr_shift(s->address, -off, p->addr, sizeof(p->addr)) != 0)
			snprintf(p->addr, sizeof(p->addr), "%s", s->address);
		p->role = s->role;
		p->in_raft = true;
		p->seen_ms = old != NULL ? old->seen_ms : now;
		have_self |= s->id == mon->self_id;
		n++;
	}
	if (!have_self && n < MON_PEERS_MAX) {
		struct mon_peer *p = &np[n++];

		memset(p, 0, sizeof(*p));
		p->id = mon->self_id;
		snprintf(p->addr, sizeof(p->addr), "%s", mon->self_addr);
		snprintf(p->raft_addr, sizeof(p->raft_addr), "%s", mon->self_raft_addr);
		p->role = -1;
		p->seen_ms = now;
	}
	qsort(np, n, sizeof(np[0]), mon_peer_cmp);
	for (unsigned int i = 0; i < n; i++) {
		const struct mon_mon *mm = mon_map_mon(&mon->map, (uint32_t)np[i].id);

		if (mm != NULL && mm->name[0] != '\0')
			snprintf(np[i].name, sizeof(np[i].name), "%s", mm->name);
		else if (np[i].id == mon->self_id)
			snprintf(np[i].name, sizeof(np[i].name), "%s", mon->name + 4);
		if (np[i].id == mon->self_id)
			mon->self = i;
	}
	memcpy(mon->peers, np, sizeof(np[0]) * n);
	mon->npeers = n;
}

void mon_member_seen_reset(struct mon *mon)
{
	for (unsigned int i = 0; i < mon->npeers; i++)
		mon->peers[i].seen_ms = clock_now_ms();
}

/* The leader heard from a peer lately (raft's progress): it is up. */
static void mon_member_seen_update(struct mon *mon)
{
	const struct raft_configuration *cfg = &mon->raft.configuration;
	uint64_t now = clock_now_ms();

	if (!mon_is_leader(mon) || mon->raft.leader_state.progress == NULL)
		return;
	for (unsigned int i = 0; i < cfg->n; i++) {
		struct mon_peer *p = mon_peer_by_id(mon, cfg->servers[i].id);

		if (p != NULL && (mon->raft.leader_state.progress[i].recent_recv ||
				  cfg->servers[i].id == mon->self_id))
			p->seen_ms = now;
	}
}

bool mon_peer_up(struct mon *mon, const struct mon_peer *p)
{
	return p->id == mon->self_id || clock_now_ms() - p->seen_ms < 2ull * mon->election_ms;
}

/* Voters in raft's configuration, and how many of them the leader hears from. */
void mon_member_voters(struct mon *mon, unsigned int *n_out, unsigned int *up_out)
{
	unsigned int n = 0, up = 0;

	for (unsigned int i = 0; i < mon->npeers; i++) {
		if (!mon->peers[i].in_raft || mon->peers[i].role != RAFT_VOTER)
			continue;
		n++;
		up += mon_peer_up(mon, &mon->peers[i]) ? 1 : 0;
	}
	*n_out = n;
	*up_out = up;
}

/* ------------------------------------------------------------ status */

const char *mon_role_str(int role)
{
	return role == RAFT_VOTER ? "voter" : role == RAFT_STANDBY ? "standby"
				       : role == RAFT_SPARE   ? "spare"
							      : "none";
}

json_t *mon_member_quorum_json(struct mon *mon, bool *have_out, unsigned int *nq_out)
{
	raft_id lid = mon_raft_leader(mon);
	bool leader = mon_is_leader(mon) && mon->leader_ready;
	json_t *members = json_array(), *quorum = json_array(), *names = json_array(), *o;
	const struct mon_peer *lp = mon_peer_by_id(mon, lid);
	unsigned int nq = 0;

	for (unsigned int i = 0; i < mon->npeers; i++) {
		const struct mon_peer *p = &mon->peers[i];
		const char *state = "unknown";
		bool in = false;

		if (!p->in_raft) {
			state = mon_map_mon(&mon->map, (uint32_t)p->id) != NULL ? "joining" : "none";
		} else if (p->id == lid) {
			state = "leader";
			in = true;
		} else if (p->role != RAFT_VOTER) {
			state = "joining";
		} else if (leader && mon_peer_up(mon, p)) {
			state = "peon";
			in = true;
		} else if (leader) {
			state = "down";
		}
		if (p->in_raft && mon->map.next_mon_id != 0 &&
		    mon_map_mon(&mon->map, (uint32_t)p->id) == NULL)
			state = "removing";
		if (in) {
			json_array_append_new(quorum, json_integer(i));
			json_array_append_new(names, json_string(p->name));
			nq++;
		}
		json_array_append_new(members,
				      json_pack("{s:i, s:s, s:I, s:s, s:s, s:s, s:s}", "rank", i,
						"name", p->name, "id", (json_int_t)p->id, "addr",
						p->addr, "raft_addr", p->raft_addr, "role",
						mon_role_str(p->in_raft ? p->role : -1), "state",
						state));
	}
	/* asked for in the map, not yet in raft's configuration */
	for (uint32_t i = 0; i < mon->map.nmons; i++) {
		const struct mon_mon *mm = &mon->map.mons[i];
		char ra[PROTO_ADDR_MAX + 1] = "";

		if (mon_peer_by_id(mon, mm->id) != NULL)
			continue;
		mon_member_raft_addr(mon, mm->addr, ra, sizeof(ra));
		json_array_append_new(members,
				      json_pack("{s:n, s:s, s:I, s:s, s:s, s:s, s:s}", "rank",
						"name", mm->name, "id", (json_int_t)mm->id, "addr",
						mm->addr, "raft_addr", ra, "role", "none", "state",
						"adding"));
	}
	*have_out = lid != 0;
	*nq_out = nq;
	o = json_pack("{s:b, s:I, s:o, s:o, s:o}", "have_quorum", lid != 0, "term",
		      (json_int_t)mon->raft.current_term, "members", members, "quorum", quorum,
		      "quorum_names", names);
	if (lp != NULL) {
		json_object_set_new(o, "leader_rank", json_integer(lp - mon->peers));
		json_object_set_new(o, "leader", json_string(lp->name));
		json_object_set_new(o, "leader_addr", json_string(lp->addr));
	} else {
		json_object_set_new(o, "leader_rank", json_null());
	}
	json_object_set_new(o, "answered_by", json_string(mon->name));
	return o;
}

/* MON_DOWN: voters the leader does not hear from. */
void mon_member_health(struct mon *mon, json_t *checks, const char **status)
{
	json_t *detail;
	unsigned int n, up;

	if (!mon_is_leader(mon))
		return;
	mon_member_voters(mon, &n, &up);
	if (up >= n)
		return;
	detail = json_array();
	for (unsigned int i = 0; i < mon->npeers; i++) {
		const struct mon_peer *p = &mon->peers[i];

		if (p->in_raft && p->role == RAFT_VOTER && !mon_peer_up(mon, p))
			json_array_append_new(detail,
					      json_sprintf("mon.%s (rank %u, %s) is not in quorum",
							   p->name, i, p->addr));
	}
	mon_health_add(checks, status, "MON_DOWN", false, detail, "%u/%u mons down", n - up, n);
}

/* -------------------------------------------- what is still in flight */

/*
 * The first difference between the map's list and raft's configuration, as
 * one line in why; false when they match (no change in flight). *joining_id
 * is set when the difference is a monitor not yet a voter (it may be removed).
 */
bool mon_member_pending(struct mon *mon, char *why, size_t cap, uint32_t *joining_id)
{
	*joining_id = 0;
	if (mon->change_busy) {
		snprintf(why, cap, "a raft configuration change is in flight");
		return true;
	}
	for (unsigned int i = 0; i < mon->npeers; i++) {
		const struct mon_peer *p = &mon->peers[i];

		if (p->in_raft && mon_map_mon(&mon->map, (uint32_t)p->id) == NULL) {
			snprintf(why, cap, "raft id %llu (%s) is being removed",
				 (unsigned long long)p->id, p->addr);
			return true;
		}
	}
	for (uint32_t i = 0; i < mon->map.nmons; i++) {
		const struct mon_mon *mm = &mon->map.mons[i];
		const struct mon_peer *p = mon_peer_by_id(mon, mm->id);

		if (p == NULL || !p->in_raft || p->role != RAFT_VOTER) {
			snprintf(why, cap, "mon.%s is joining (%s); start it with weft-mon --mkfs "
				 "--join, or remove it", mm->name, p == NULL || !p->in_raft
				 ? "not in raft yet" : mon_role_str(p->role));
			*joining_id = mm->id;
			return true;
		}
	}
	return false;
}

static void mon_transfer_cb(struct raft_transfer *req)
{
	struct mon *mon = req->data;

	mon->transfer_busy = false;
	log_info("mon", "%s: leadership transfer done (leader now raft id %llu)", mon->name,
		 (unsigned long long)mon_raft_leader(mon));
}

/* Hand leadership to another voter (0: raft picks one that is caught up). */
int mon_member_step_down(struct mon *mon)
{
	int rc;

	if (mon->transfer_busy)
		return 0;
	mon->transfer_req.data = mon;
	rc = raft_transfer(&mon->raft, &mon->transfer_req, 0, mon_transfer_cb);
	if (rc != 0) {
		log_warn("mon", "%s: leadership transfer: %s", mon->name, raft_strerror(rc));
		return -EAGAIN;
	}
	mon->transfer_busy = true;
	log_info("mon", "%s: handing leadership over", mon->name);
	return 0;
}

/* ------------------------------------------------ raft follows the map */

static void mon_change_cb(struct raft_change *req, int status)
{
	struct mon *mon = req->data;

	mon->change_busy = false;
	if (status != 0) {
		log_warn("mon", "%s: raft configuration change (%s raft id %llu) failed: %s",
			 mon->name, mon->change_what, (unsigned long long)mon->change_id,
			 raft_strerror(status));
		mon->change_retry_ms = clock_now_ms() + MON_MEMBER_RETRY_MS;
		return;
	}
	log_info("mon", "%s: raft configuration: %s raft id %llu done", mon->name,
		 mon->change_what, (unsigned long long)mon->change_id);
	mon_member_sync(mon);
}

static void mon_change_start(struct mon *mon, const char *what, raft_id id, int rc)
{
	if (rc != 0) {
		log_warn("mon", "%s: raft configuration change (%s raft id %llu): %s", mon->name,
			 what, (unsigned long long)id, raft_strerror(rc));
		mon->change_retry_ms = clock_now_ms() + MON_MEMBER_RETRY_MS;
		return;
	}
	mon->change_busy = true;
	mon->change_id = id;
	snprintf(mon->change_what, sizeof(mon->change_what), "%s", what);
	log_info("mon", "%s: raft configuration: %s raft id %llu", mon->name, what,
		 (unsigned long long)id);
}

/*
 * Raft sends nothing to a server once it is out of the configuration, and
 * a follower applies an entry only when a later message tells it the
 * entry is committed: before raft_remove, give the monitor being removed
 * the increment and a few heartbeats, so it applies its removal and stops
 * by itself. Bounded: a removed monitor that is down gets nothing.
 */
static bool mon_member_remove_wait(struct mon *mon, unsigned int i)
{
	const struct raft_progress *pr = mon->raft.leader_state.progress;
	uint64_t now = clock_now_ms(), hb = mon->election_ms / 10 > 50 ? mon->election_ms / 10 : 50;

	if (mon->remove_wait_ms == 0) {
		mon->remove_wait_ms = now;
		mon->remove_wait_index = raft_last_applied(&mon->raft);
	}
	if (now - mon->remove_wait_ms >= MON_REMOVE_WAIT_MS ||
	    (pr != NULL && !pr[i].recent_recv) ||
	    (pr != NULL && pr[i].match_index >= mon->remove_wait_index &&
	     now - mon->remove_wait_ms >= 4 * hb)) {
		mon->remove_wait_ms = 0;
		return false;
	}
	return true;
}

static void mon_member_reconcile(struct mon *mon)
{
	const struct raft_configuration *cfg = &mon->raft.configuration;
	char ra[PROTO_ADDR_MAX + 1];

	if (mon->change_busy || clock_now_ms() < mon->change_retry_ms || mon->map.next_mon_id == 0)
		return;
	mon->change_req.data = mon;
	for (unsigned int i = 0; i < cfg->n; i++) {
		raft_id id = cfg->servers[i].id;

		if (mon_map_mon(&mon->map, (uint32_t)id) != NULL)
			continue;
		if (id == mon->self_id) {
			mon_member_step_down(mon);
			return;
		}
		if (mon_member_remove_wait(mon, i))
			return;
		mon_change_start(mon, "remove", id,
				 raft_remove(&mon->raft, &mon->change_req, id, mon_change_cb));
		return;
	}
	for (uint32_t i = 0; i < mon->map.nmons; i++) {
		const struct mon_mon *mm = &mon->map.mons[i];
		unsigned int k;

		for (k = 0; k < cfg->n && cfg->servers[k].id != mm->id; k++)
			;
		if (k == cfg->n) {
			if (mon_member_raft_addr(mon, mm->addr, ra, sizeof(ra)) != 0)
				continue;
			mon_change_start(mon, "add", mm->id,
					 raft_add(&mon->raft, &mon->change_req, mm->id, ra,
						  mon_change_cb));
			return;
		}
		if (cfg->servers[k].role == RAFT_SPARE) {
			mon_change_start(mon, "assign standby", mm->id,
					 raft_assign(&mon->raft, &mon->change_req, mm->id,
						     RAFT_STANDBY, mon_change_cb));
			return;
		}
		if (cfg->servers[k].role == RAFT_STANDBY && mon->raft.leader_state.progress != NULL) {
			const struct raft_progress *pr = &mon->raft.leader_state.progress[k];

			/* promote only a standby that answers and has the log: it votes at once */
			if (!pr->recent_recv ||
			    pr->match_index + MON_CATCHUP_SLACK < raft_last_index(&mon->raft))
				continue;
			mon_change_start(mon, "assign voter", mm->id,
					 raft_assign(&mon->raft, &mon->change_req, mm->id,
						     RAFT_VOTER, mon_change_cb));
			return;
		}
	}
}

/* ------------------------------------------------ removed: stop, refuse */

/* After the FSM applied an increment: did it remove us? */
void mon_member_applied(struct mon *mon, const struct mon_map *old, const struct mon_inc *inc)
{
	if (mon_map_mon(old, (uint32_t)mon->self_id) == NULL ||
	    mon_map_mon(&mon->map, (uint32_t)mon->self_id) != NULL)
		return;
	if (inc->stamp < mon->start_s) {
		/*
		 * Proposed before we started: removed while down, and told so by
		 * the leader as we caught up (before raft's own configuration
		 * left us out). The same refusal as a restart that finds it in
		 * mon_data, exit status included. A removal in our first second
		 * cannot be told apart and stops like a running monitor's.
		 */
		log_error("mon", "%s: removed from the monitors at epoch %u (%s) while it was "
			  "down; refusing to rejoin. To add it back: weft mon add NAME ADDR, then "
			  "weft-mon --mkfs --join on an empty mon_data", mon->name, inc->epoch,
			  inc->reason);
		mon->exit_rc = 1;
	} else {
		log_error("mon", "%s: removed from the monitors at epoch %u (%s); stopping",
			  mon->name, inc->epoch, inc->reason);
	}
	/* remembered in mon_data: a restart refuses at once (mon_member_check_removed) */
	{
		char path[PATH_MAX + 32];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", mon->data_dir, MON_REMOVED_FILE);
		f = fopen(path, "w");
		if (f == NULL || fprintf(f, "epoch %u: %s\n", inc->epoch, inc->reason) < 0 ||
		    fclose(f) != 0)
			log_warn("mon", "%s: cannot write %s: %s", mon->name, path, strerror(errno));
	}
	mon->removed = true;
	mon->removed_ms = clock_now_ms();
}

/* Before start: a monitor that applied its own removal wrote why in mon_data. */
int mon_member_check_removed(struct mon *mon)
{
	char path[PATH_MAX + 32], why[MON_REASON_MAX + 32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", mon->data_dir, MON_REMOVED_FILE);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	if (fgets(why, sizeof(why), f) != NULL)
		why[strcspn(why, "\n")] = '\0';
	fclose(f);
	log_error("mon", "%s: removed from the monitors (%s); refusing to rejoin. To add it "
		  "back: weft mon add NAME ADDR, then weft-mon --mkfs --join on an empty mon_data",
		  mon->name, why);
	return -EPERM;
}

/* At start, from what raft loaded: 0, or -EPERM with the line logged. */
int mon_member_check_start(struct mon *mon)
{
	const struct raft_configuration *cfg = &mon->raft.configuration;
	bool in_cfg = cfg->n == 0;

	for (unsigned int i = 0; i < cfg->n; i++)
		in_cfg |= cfg->servers[i].id == mon->self_id;
	if (in_cfg && !(mon->map.next_mon_id > mon->self_id &&
			mon_map_mon(&mon->map, (uint32_t)mon->self_id) == NULL))
		return 0;
	log_error("mon", "%s: removed from the monitors (raft id %llu, weft mon remove); "
		  "refusing to rejoin. To add it back: weft mon add NAME ADDR, then weft-mon "
		  "--mkfs --join on an empty mon_data", mon->name,
		  (unsigned long long)mon->self_id);
	return -EPERM;
}

/*
 * No leader for a while: perhaps we were removed while down (raft's
 * removal is never sent to the removed server). Ask a peer who the
 * monitors are.
 */
static void mon_member_probe(struct mon *mon)
{
	uint64_t now = clock_now_ms();
	struct proto_msg msg = { .type = PROTO_MON_CMD };
	static const char json[] = "{\"prefix\": \"mon stat\"}";
	const char *addr = NULL;
	unsigned int tries = mon->npeers + mon->map.nmons;

	if (mon_raft_leader(mon) != 0 || mon->self_id == 0) {
		mon->no_leader_ms = 0;
		return;
	}
	if (mon->no_leader_ms == 0)
		mon->no_leader_ms = now;
	if (now - mon->no_leader_ms < 4ull * mon->election_ms || now < mon->probe_next_ms)
		return;
	mon->probe_next_ms = now + MON_PROBE_MS;
	if (mon->probe_conn != NULL) {
		msgr_conn_close(mon->probe_conn);
		mon->probe_conn = NULL;
	}
	/* round robin over the peers of raft's configuration and the map's monitors */
	for (unsigned int t = 0; t < tries && addr == NULL; t++) {
		unsigned int k = mon->probe_idx++ % (tries > 0 ? tries : 1);

		if (k < mon->npeers)
			addr = mon->peers[k].id != mon->self_id ? mon->peers[k].addr : NULL;
		else
			addr = mon->map.mons[k - mon->npeers].id != mon->self_id
				       ? mon->map.mons[k - mon->npeers].addr
				       : NULL;
	}
	if (addr == NULL || msgr_connect(mon->msgr, addr, mon, &mon->probe_conn) != 0) {
		mon->probe_conn = NULL;
		return;
	}
	msg.mon_cmd.json = json;
	msg.mon_cmd.json_len = sizeof(json) - 1;
	msgr_send(mon->probe_conn, &msg, 1);
}

void mon_member_probe_reply(struct mon *mon, const struct proto_mon_cmd_reply *r)
{
	json_t *root = json_loadb(r->out, r->out_len, 0, NULL), *m;
	bool found = false;
	size_t i;

	if (r->status == 0 && json_is_true(json_object_get(root, "have_quorum")) &&
	    json_integer_value(json_object_get(root, "epoch")) > 0) {
		json_array_foreach(json_object_get(root, "members"), i, m)
			found |= (raft_id)json_integer_value(json_object_get(m, "id")) ==
				 mon->self_id;
		if (!found) {
			log_error("mon", "%s: removed from the monitors (%s answers for a quorum "
				  "without raft id %llu); refusing to rejoin. To add it back: weft "
				  "mon add NAME ADDR, then weft-mon --mkfs --join on an empty "
				  "mon_data", mon->name,
				  json_string_value(json_object_get(root, "answered_by")),
				  (unsigned long long)mon->self_id);
			mon->removed = true;
			mon->removed_ms = clock_now_ms();
			mon->exit_rc = 1;
		}
	}
	json_decref(root);
	if (mon->probe_conn != NULL) {
		msgr_conn_close(mon->probe_conn);
		mon->probe_conn = NULL;
	}
}

/* ------------------------------------------------------------------ tick */

void mon_member_tick(struct mon *mon)
{
	uint64_t now = clock_now_ms();
	const struct mon_mon *me;

	mon_member_sync(mon);
	mon_member_seen_update(mon);
	mon_member_probe(mon);
	if (mon_is_leader(mon) && mon->leader_ready && mon->map.epoch > 0) {
		if (mon->map.next_mon_id == 0 && !mon->seed_queued) {
			struct mon_job *job = mon_job_alloc(NULL, 0, mon_member_build_seed);

			if (job != NULL) {
				mon->seed_queued = true;
				if (mon_job_submit(mon, job) != 0)
					mon->seed_queued = false;
			}
		}
		mon_member_reconcile(mon);
	}
	/* a bootstrap member the map knows by id only: say our name and address */
	me = mon_map_mon(&mon->map, (uint32_t)mon->self_id);
	if (me != NULL && me->name[0] == '\0' &&
	    mon_raft_leader(mon) != 0 && now >= mon->register_next_ms) {
		char json[256];
		struct proto_msg msg = { .type = PROTO_MON_CMD };
		int n = snprintf(json, sizeof(json),
				 "{\"prefix\": \"mon _register\", \"id\": %llu, \"name\": \"%s\", "
				 "\"addr\": \"%s\"}",
				 (unsigned long long)mon->self_id, mon->name + 4, mon->self_addr);

		mon->register_next_ms = now + MON_PROBE_MS;
		msg.mon_cmd.json = json;
		msg.mon_cmd.json_len = (uint32_t)n;
		mon_svc_send_leader(mon, &msg);
	}
}
