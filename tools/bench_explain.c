/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The explainer of weft bench: how close the run came to the limits it can
 * know (docs/bench.md, "The explainer"). Two snapshots, before the first op
 * and after the last: every up OSD's "perf dump" through its admin socket
 * (process CPU, store I/O and commit busy time, bytes per network), this
 * process's getrusage, /proc/stat of this machine, and the client's bytes
 * per endpoint. The differences over the run become cores, busy fractions
 * and MB/s; fixed rules turn them into one verdict. Nothing here can fail
 * the bench: what cannot be read is said, and left out of the sums.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "admin/asok.h"
#include "client/client_debug.h"
#include "common/conf.h"
#include "mon/monc/monc.h"
#include "tools/bench.h"
#include "weft/weft.h"

#define BX_OSDS_MAX	   64
#define BX_EPS_MAX	   64
#define BX_ASOK_TIMEOUT_MS 3000
#define BX_MON_TIMEOUT_MS  10000
#define BX_HOST_CPU	   0.85 /* a machine this busy is CPU-bound */
#define BX_THREAD_CPU	   0.90 /* one thread this busy is saturated */
#define BX_STORE_BUSY	   0.90 /* a commit pipeline in flight this much of the run */
#define MIB		   1048576.0

struct bx_osd_snap {
	bool ok;
	double cpu, reactor, commit_busy, read_busy;
	uint64_t data_w, wal_w, data_r, pub, clu;
	uint64_t frames, ctrl_frames; /* received on both networks (fabric counters) */
};

struct bx_osd {
	uint32_t id;
	char asok[256];
	char host[65];
	long cpus;
	char why[400]; /* why it was not reached; "" when it was */
	struct bx_osd_snap s0, s1;
	double cores, reactor, busy, rbusy, store_w, store_r, pub, clu; /* per second of the run */
};

struct bx_ep {
	uint32_t osd;
	char peer[64];
	uint64_t b0, b1; /* tx + rx bytes */
	uint64_t f0, f1, c0, c1; /* frames received, of them CREDIT/WRITE_ACK */
};

struct bench_explain {
	struct weft_cluster *cl;
	double elapsed;
	char host[65];
	long cpus;
	double cpu0, cpu1;			       /* this process, user + system seconds */
	uint64_t st_busy0, st_all0, st_busy1, st_all1; /* /proc/stat jiffies */
	bool st_ok;
	uint32_t epoch0, epoch1;     /* the client's map epoch */
	uint64_t resends0, resends1; /* ops libweft sent again (map change, OSD failure) */
	struct bx_osd osds[BX_OSDS_MAX];
	unsigned int nosd;
	char osd_list_why[400];
	struct bx_ep eps[BX_EPS_MAX];
	unsigned int neps;
	/* results */
	double client_cores, machine_cores, our_cores_here;
	double store_w, store_r, pub, clu;
	double client_bw; /* the bench's own bytes per second */
	unsigned int reached;
	char full[192]; /* bench_explain_full: the run ended on a full pool */
	char verdict[320];
	char limit[32]; /* cpu, osd-reactor, client, store, none */
};

static double bx_rusage_self(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Busy and total jiffies of the whole machine (first line of /proc/stat). */
static bool bx_proc_stat(uint64_t *busy, uint64_t *all)
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (f == NULL)
		return false;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 5)
		return false;
	*all = 0;
	for (int i = 0; i < 8; i++)
		*all += v[i];
	*busy = *all - v[3] - v[4]; /* minus idle and iowait */
	return true;
}

static uint64_t bx_u64(json_t *o, const char *path)
{
	char key[64];
	const char *dot;

	while ((dot = strchr(path, '.')) != NULL && o != NULL) {
		snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
		o = json_object_get(o, key);
		path = dot + 1;
	}
	o = o ? json_object_get(o, path) : NULL;
	return json_is_integer(o) ? (uint64_t)json_integer_value(o)
	       : json_is_real(o)  ? (uint64_t)json_real_value(o)
				  : 0;
}

static double bx_real(json_t *o, const char *obj, const char *key)
{
	json_t *v = json_object_get(json_object_get(o, obj), key);

	return json_is_number(v) ? json_number_value(v) : 0;
}

static void bx_osd_snap(struct bx_osd *o, struct bx_osd_snap *s)
{
	char *reply = NULL;
	json_error_t jerr;
	json_t *j;
	int rc = asok_request(o->asok, "perf dump", NULL, BX_ASOK_TIMEOUT_MS, &reply);

	s->ok = false;
	if (rc != 0) {
		snprintf(o->why, sizeof(o->why), "admin socket %s: %s (on another host?)", o->asok,
			 weft_strerror(rc));
		return;
	}
	j = json_loads(reply, 0, &jerr);
	free(reply);
	if (j == NULL || json_object_get(j, "process") == NULL ||
	    json_object_get(j, "store") == NULL) {
		snprintf(o->why, sizeof(o->why), "perf dump without process/store sections");
		json_decref(j);
		return;
	}
	snprintf(o->host, sizeof(o->host), "%s",
		 json_string_value(json_object_get(json_object_get(j, "process"), "host")) ?: "?");
	o->cpus = (long)bx_u64(j, "process.cpus_online");
	s->cpu = bx_real(j, "process", "cpu_seconds");
	s->reactor = bx_real(j, "process", "reactor_cpu_seconds");
	s->commit_busy = bx_real(j, "store", "commit_busy_seconds");
	s->read_busy = bx_real(j, "store", "read_busy_seconds");
	s->data_w = bx_u64(j, "store.data_write_bytes");
	s->wal_w = bx_u64(j, "store.wal_write_bytes");
	s->data_r = bx_u64(j, "store.data_read_bytes");
	/* each byte once: public connections have an OSD at one end only; on the
	 * cluster network count the sender's side */
	s->pub = bx_u64(j, "network.public.rx_bytes") + bx_u64(j, "network.public.tx_bytes");
	s->clu = bx_u64(j, "network.cluster.tx_bytes");
	/* each frame once, by its receiver: with the client's, every data-path frame */
	s->frames = bx_u64(j, "network.public.rx_frames") + bx_u64(j, "network.cluster.rx_frames");
	s->ctrl_frames =
	    bx_u64(j, "network.public.rx_ctrl_frames") + bx_u64(j, "network.cluster.rx_ctrl_frames");
	s->ok = true;
	json_decref(j);
}

/* The up OSDs from the monitors, and each one's admin socket from the conf. */
static void bx_osd_list(struct bench_explain *ex, const struct conf *conf, const char *file,
			const char *name)
{
	char errmsg[256] = "", *text = NULL, who[32];
	struct monc *mc = NULL;
	json_error_t jerr;
	json_t *j = NULL, *o;
	size_t i;
	int rc = monc_create(conf, name, &mc);

	if (rc == 0)
		rc = monc_command_sync(mc, "{\"prefix\": \"osd dump\"}", BX_MON_TIMEOUT_MS, &text,
				       errmsg, sizeof(errmsg));
	if (rc == 0 && (text == NULL || (j = json_loads(text, 0, &jerr)) == NULL))
		rc = -EPROTO;
	if (rc != 0)
		snprintf(ex->osd_list_why, sizeof(ex->osd_list_why), "osd dump: %s %s",
			 weft_strerror(rc), errmsg);
	json_array_foreach(json_object_get(j, "osds"), i, o)
	{
		struct bx_osd *d = &ex->osds[ex->nosd];
		struct conf *oc = NULL;
		const char *path;

		if (ex->nosd == BX_OSDS_MAX || !json_is_true(json_object_get(o, "up")))
			continue;
		d->id = (uint32_t)json_integer_value(json_object_get(o, "id"));
		snprintf(who, sizeof(who), "osd.%u", d->id);
		if (conf_create(who, &oc) == 0 && (file == NULL || conf_load_file(oc, file) == 0) &&
		    conf_apply_env(oc) == 0 &&
		    (path = conf_get_str(oc, CONF_ADMIN_SOCKET)) != NULL && path[0] != '\0')
			snprintf(d->asok, sizeof(d->asok), "%s", path);
		else
			snprintf(d->why, sizeof(d->why), "no admin_socket for %s in the conf", who);
		conf_destroy(oc);
		ex->nosd++;
	}
	json_decref(j);
	free(text);
	monc_destroy(mc);
}

/* The client's bytes per endpoint (connection to an OSD). */
static void bx_eps(struct bench_explain *ex, bool end)
{
	static char buf[16384];
	json_error_t jerr;
	json_t *j, *c;
	size_t i;

	if (weft_debug_conns_json(ex->cl, buf, sizeof(buf)) != 0 ||
	    (j = json_loads(buf, 0, &jerr)) == NULL)
		return;
	json_array_foreach(json_object_get(j, "conns"), i, c)
	{
		uint32_t osd = (uint32_t)json_integer_value(json_object_get(c, "osd"));
		uint64_t b = bx_u64(c, "tx_bytes") + bx_u64(c, "rx_bytes");
		unsigned int k;

		for (k = 0; k < ex->neps && ex->eps[k].osd != osd; k++)
			;
		if (k == ex->neps) {
			if (k == BX_EPS_MAX)
				continue;
			ex->neps++;
			ex->eps[k].osd = osd;
			snprintf(ex->eps[k].peer, sizeof(ex->eps[k].peer), "%s",
				 json_string_value(json_object_get(c, "peer")) ?: "?");
		}
		if (end) {
			ex->eps[k].b1 = b;
			ex->eps[k].f1 = bx_u64(c, "rx_frames");
			ex->eps[k].c1 = bx_u64(c, "rx_ctrl_frames");
		} else {
			ex->eps[k].b0 = b;
			ex->eps[k].f0 = bx_u64(c, "rx_frames");
			ex->eps[k].c0 = bx_u64(c, "rx_ctrl_frames");
		}
	}
	json_decref(j);
}

struct bench_explain *bench_explain_begin(const struct conf *conf, const char *file,
					  const char *name, struct weft_cluster *cl)
{
	struct bench_explain *ex = calloc(1, sizeof(*ex));
	struct utsname un;

	if (ex == NULL)
		return NULL;
	ex->cl = cl;
	ex->cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (uname(&un) == 0)
		snprintf(ex->host, sizeof(ex->host), "%s", un.nodename);
	bx_osd_list(ex, conf, file, name);
	for (unsigned int i = 0; i < ex->nosd; i++)
		if (ex->osds[i].why[0] == '\0')
			bx_osd_snap(&ex->osds[i], &ex->osds[i].s0);
	bx_eps(ex, false);
	ex->epoch0 = weft_map_epoch(cl);
	ex->resends0 = weft_debug_resends(cl);
	ex->st_ok = bx_proc_stat(&ex->st_busy0, &ex->st_all0);
	ex->cpu0 = bx_rusage_self();
	return ex;
}

static void bx_verdict(struct bench_explain *ex)
{
	const struct bx_osd *top_reactor = NULL, *top_busy = NULL, *top_read = NULL;
	double ours = ex->our_cores_here,
	       here = ours > ex->machine_cores ? ours : ex->machine_cores;

	for (unsigned int i = 0; i < ex->nosd; i++) {
		const struct bx_osd *o = &ex->osds[i];

		if (!o->s1.ok || !o->s0.ok)
			continue;
		if (top_reactor == NULL || o->reactor > top_reactor->reactor)
			top_reactor = o;
		if (top_busy == NULL || o->busy > top_busy->busy)
			top_busy = o;
		if (top_read == NULL || o->rbusy > top_read->rbusy)
			top_read = o;
	}
	if (ex->full[0]) {
		/* nothing else limited the run: it ended on the first write refused for space */
		snprintf(ex->limit, sizeof(ex->limit), "full");
		snprintf(ex->verdict, sizeof(ex->verdict),
			 "space-bound: %s; writes were refused from then on (weft osd df, weft "
			 "health detail)", ex->full);
	} else if (ex->cpus > 0 && here >= BX_HOST_CPU * (double)ex->cpus) {
		snprintf(ex->limit, sizeof(ex->limit), "cpu");
		snprintf(ex->verdict, sizeof(ex->verdict),
			 "CPU-bound: %s had %.2f of %ld cores busy (this bench and its OSDs "
			 "%.2f%s)",
			 ex->host, here, ex->cpus, ours,
			 ex->machine_cores > ours + 0.25 ? ", the rest other processes" : "");
	} else if (top_reactor != NULL && top_reactor->reactor >= BX_THREAD_CPU) {
		snprintf(ex->limit, sizeof(ex->limit), "osd-reactor");
		snprintf(ex->verdict, sizeof(ex->verdict),
			 "OSD-reactor-bound: osd.%u's reactor thread used %.2f of its 1 core "
			 "(one thread serves each OSD)",
			 top_reactor->id, top_reactor->reactor);
	} else if (ex->client_cores >= BX_THREAD_CPU) {
		snprintf(ex->limit, sizeof(ex->limit), "client");
		snprintf(ex->verdict, sizeof(ex->verdict),
			 "client-bound: weft bench (one thread) used %.2f of 1 core",
			 ex->client_cores);
	} else if (top_busy != NULL && top_busy->busy >= BX_STORE_BUSY) {
		snprintf(ex->limit, sizeof(ex->limit), "store");
		snprintf(ex->verdict, sizeof(ex->verdict),
			 "store-bound: osd.%u had a WAL commit (write + fdatasync) in flight "
			 "%.0f%% of the run; commits go one batch at a time",
			 top_busy->id, top_busy->busy * 100);
	} else if (top_read != NULL && top_read->rbusy >= BX_STORE_BUSY) {
		snprintf(ex->limit, sizeof(ex->limit), "store");
		snprintf(ex->verdict, sizeof(ex->verdict),
			 "store-bound: osd.%u had reads of its data device in flight %.0f%% "
			 "of the run (its reactor does not wait for them: the device is busy)",
			 top_read->id, top_read->rbusy * 100);
	} else {
		snprintf(ex->limit, sizeof(ex->limit), "none");
		snprintf(ex->verdict, sizeof(ex->verdict),
			 "no limit weft bench can see was reached: the run was latency-bound "
			 "(more ops in flight, -t, may go faster)%s",
			 ex->reached < ex->nosd || ex->nosd == 0
			     ? "; not every OSD could be measured"
			     : "");
	}
}

void bench_explain_full(struct bench_explain *ex, const char *why)
{
	if (ex != NULL)
		snprintf(ex->full, sizeof(ex->full), "%s", why);
}

void bench_explain_end(struct bench_explain *ex, double elapsed_s, uint64_t client_bytes)
{
	uint64_t busy, all;

	if (ex == NULL)
		return;
	ex->cpu1 = bx_rusage_self();
	if (ex->st_ok && bx_proc_stat(&ex->st_busy1, &ex->st_all1) && ex->st_all1 > ex->st_all0) {
		busy = ex->st_busy1 - ex->st_busy0;
		all = ex->st_all1 - ex->st_all0;
		ex->machine_cores = (double)busy / (double)all * (double)ex->cpus;
	}
	bx_eps(ex, true);
	ex->epoch1 = weft_map_epoch(ex->cl);
	ex->resends1 = weft_debug_resends(ex->cl);
	for (unsigned int i = 0; i < ex->nosd; i++)
		if (ex->osds[i].s0.ok)
			bx_osd_snap(&ex->osds[i], &ex->osds[i].s1);
	ex->elapsed = elapsed_s > 0.001 ? elapsed_s : 0.001;
	ex->client_cores = (ex->cpu1 - ex->cpu0) / ex->elapsed;
	ex->client_bw = (double)client_bytes / ex->elapsed;
	ex->our_cores_here = ex->client_cores;
	for (unsigned int i = 0; i < ex->nosd; i++) {
		struct bx_osd *o = &ex->osds[i];
		double t = ex->elapsed;

		if (!o->s0.ok || !o->s1.ok)
			continue;
		ex->reached++;
		o->cores = (o->s1.cpu - o->s0.cpu) / t;
		o->reactor = (o->s1.reactor - o->s0.reactor) / t;
		o->busy = (o->s1.commit_busy - o->s0.commit_busy) / t;
		o->rbusy = (o->s1.read_busy - o->s0.read_busy) / t;
		o->store_w = (double)(o->s1.data_w + o->s1.wal_w - o->s0.data_w - o->s0.wal_w) / t;
		o->store_r = (double)(o->s1.data_r - o->s0.data_r) / t;
		o->pub = (double)(o->s1.pub - o->s0.pub) / t;
		o->clu = (double)(o->s1.clu - o->s0.clu) / t;
		ex->store_w += o->store_w;
		ex->store_r += o->store_r;
		ex->pub += o->pub;
		ex->clu += o->clu;
		if (!strcmp(o->host, ex->host))
			ex->our_cores_here += o->cores;
	}
	bx_verdict(ex);
}

void bench_explain_print(const struct bench_explain *ex, FILE *out)
{
	double osd_cores = 0, reactors = 0;

	fprintf(out, "Explainer (over %.2f s; docs/bench.md):\n", ex->elapsed);
	fprintf(out, "  client: %.2f cores (one thread) on %s, %ld cores online", ex->client_cores,
		ex->host, ex->cpus);
	if (ex->machine_cores > 0)
		fprintf(out, "; the machine was %.2f cores busy in all", ex->machine_cores);
	fprintf(out, "\n");
	if (ex->osd_list_why[0])
		fprintf(out, "  OSDs: not listed (%s)\n", ex->osd_list_why);
	for (unsigned int i = 0; i < ex->nosd; i++) {
		const struct bx_osd *o = &ex->osds[i];

		if (!o->s0.ok || !o->s1.ok) {
			fprintf(out, "  osd.%u: not counted: %s\n", o->id, o->why);
			continue;
		}
		osd_cores += o->cores;
		reactors += o->reactor;
		fprintf(
		    out,
		    "  osd.%u: CPU %.2f cores (reactor %.2f) on %s; store wrote %.1f MB/s, "
		    "read %.1f MB/s, commit in flight %.0f%%, reading %.0f%%; public %.1f MB/s, "
		    "cluster tx %.1f MB/s\n",
		    o->id, o->cores, o->reactor, o->host, o->store_w / MIB, o->store_r / MIB,
		    o->busy * 100, o->rbusy * 100, o->pub / MIB, o->clu / MIB);
	}
	if (ex->reached > 0) {
		fprintf(out,
			"  OSDs (%u measured): CPU %.2f cores (reactors %.2f); store %.1f MB/s "
			"written, %.1f MB/s read",
			ex->reached, osd_cores, reactors, ex->store_w / MIB, ex->store_r / MIB);
		/* replicas x (data + WAL): what each client byte costs the devices */
		if (ex->client_bw > 0 && (ex->store_w > 0 || ex->store_r > 0))
			fprintf(out, " = %.2fx the bench's %.1f MB/s",
				(ex->store_w > ex->store_r ? ex->store_w : ex->store_r) /
				    ex->client_bw,
				ex->client_bw / MIB);
		fprintf(out, "\n");
		fprintf(out,
			"  fabric: public %.1f MB/s (client <-> primaries), cluster %.1f MB/s "
			"(replication)\n",
			ex->pub / MIB, ex->clu / MIB);
	}
	if (ex->neps > 0) {
		fprintf(out, "  client endpoints:");
		for (unsigned int i = 0; i < ex->neps; i++)
			fprintf(out, "%s osd.%u %s %.1f MB/s", i ? "," : "", ex->eps[i].osd,
				ex->eps[i].peer,
				(double)(ex->eps[i].b1 >= ex->eps[i].b0
					     ? ex->eps[i].b1 - ex->eps[i].b0
					     : ex->eps[i].b1) /
				    MIB / ex->elapsed);
		fprintf(out, "\n");
	}
	if (ex->epoch1 != ex->epoch0 || ex->resends1 != ex->resends0)
		fprintf(out,
			"  the cluster changed during the run: map epoch %u -> %u, %" PRIu64
			" ops resent (an OSD marked down under load? see weft status)\n",
			ex->epoch0, ex->epoch1, ex->resends1 - ex->resends0);
	fprintf(out, "  limits unknown to weft bench: the devices' (weft store-bench measures "
		     "them) and the fabric's (weft fabric-bench)\n");
	fprintf(out, "  verdict: %s\n", ex->verdict);
}

/* b - a, or b when the counter restarted (a new connection) */
static uint64_t bx_delta(uint64_t a, uint64_t b)
{
	return b >= a ? b - a : b;
}

/* Frames received over the run: by the measured OSDs, by this client. */
static json_t *bx_frames_json(const struct bench_explain *ex)
{
	uint64_t osd = 0, osd_ctrl = 0, cl = 0, cl_ctrl = 0;

	for (unsigned int i = 0; i < ex->nosd; i++) {
		const struct bx_osd *o = &ex->osds[i];

		if (o->s0.ok && o->s1.ok) {
			osd += bx_delta(o->s0.frames, o->s1.frames);
			osd_ctrl += bx_delta(o->s0.ctrl_frames, o->s1.ctrl_frames);
		}
	}
	for (unsigned int i = 0; i < ex->neps; i++) {
		cl += bx_delta(ex->eps[i].f0, ex->eps[i].f1);
		cl_ctrl += bx_delta(ex->eps[i].c0, ex->eps[i].c1);
	}
	return json_pack("{s:I, s:I, s:I, s:I}", "osd_rx", (json_int_t)osd, "osd_rx_ctrl",
			 (json_int_t)osd_ctrl, "client_rx", (json_int_t)cl, "client_rx_ctrl",
			 (json_int_t)cl_ctrl);
}

json_t *bench_explain_json(const struct bench_explain *ex)
{
	json_t *osds = json_array(), *eps = json_array();

	for (unsigned int i = 0; i < ex->nosd; i++) {
		const struct bx_osd *o = &ex->osds[i];

		if (!o->s0.ok || !o->s1.ok) {
			json_array_append_new(osds, json_pack("{s:i, s:b, s:s}", "id", (int)o->id,
							      "measured", 0, "why", o->why));
			continue;
		}
		json_array_append_new(
		    osds,
		    json_pack("{s:i, s:b, s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "id",
			      (int)o->id, "measured", 1, "host", o->host, "cpus_online",
			      (int)o->cpus, "cpu_cores", o->cores, "reactor_cores", o->reactor,
			      "commit_busy", o->busy, "read_busy", o->rbusy, "store_write_mb_s",
			      o->store_w / MIB, "store_read_mb_s", o->store_r / MIB, "public_mb_s",
			      o->pub / MIB, "cluster_mb_s", o->clu / MIB));
	}
	for (unsigned int i = 0; i < ex->neps; i++)
		json_array_append_new(eps,
				      json_pack("{s:i, s:s, s:I}", "osd", (int)ex->eps[i].osd,
						"peer", ex->eps[i].peer, "bytes",
						(json_int_t)(ex->eps[i].b1 >= ex->eps[i].b0
								 ? ex->eps[i].b1 - ex->eps[i].b0
								 : ex->eps[i].b1)));
	return json_pack(
	    "{s:f, s:s, s:i, s:f, s:i, s:i, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:o, s:o, s:s,"
	    " s:s, s:o}",
	    "elapsed_s", ex->elapsed, "host", ex->host, "cpus_online", (int)ex->cpus, "client_mb_s",
	    ex->client_bw / MIB, "map_epoch_before", (int)ex->epoch0, "map_epoch_after",
	    (int)ex->epoch1, "resends", (json_int_t)(ex->resends1 - ex->resends0), "client_cores",
	    ex->client_cores, "machine_busy_cores", ex->machine_cores, "our_cores_on_host",
	    ex->our_cores_here, "store_write_mb_s", ex->store_w / MIB, "store_read_mb_s",
	    ex->store_r / MIB, "public_mb_s", ex->pub / MIB, "cluster_mb_s", ex->clu / MIB, "osds",
	    osds, "client_endpoints", eps, "limit", ex->limit, "verdict", ex->verdict, "frames",
	    bx_frames_json(ex));
}

void bench_explain_free(struct bench_explain *ex)
{
	free(ex);
}
