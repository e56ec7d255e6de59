# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Prometheus (docs/operations.md): sourced by tests/test_ops.sh (metrics) on
# 1 mon + 1 OSD, each serving /metrics on its metrics_addr. A real Prometheus
# server (Debian's package), started here on loopback with a config written
# here (scrape interval 1 s), scrapes them; its HTTP API must show an OSD op
# counter that moved after writes, and the mon's quorum and map epoch.
PROM=$(command -v prometheus) || { echo "SKIP: prometheus not installed (apt-get install prometheus)"; exit 77; }
MON_M=127.1.0.1:$((PORT + 60)) OSD_M=127.1.0.10:$((PORT + 70)) PROM_A=127.1.0.1:$((PORT + 90))
CL_CONF_EXTRA="[mon.a]
	metrics_addr = $MON_M
[osd.0]
	metrics_addr = $OSD_M"
cluster_up
wait_for 60 "cluster ready" cl_ready

# get URL: the body on stdout; exit 1 unless HTTP 200
get() {
	python3 - "$1" << 'PY'
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=5) as r:
        sys.stdout.write(r.read().decode())
except Exception as e:
    sys.stderr.write("%s: %s\n" % (sys.argv[1], e))
    sys.exit(1)
PY
}
# q EXPR: the value of the first series of an instant query ("" when none)
q() {
	python3 - "http://$PROM_A/api/v1/query" "$1" << 'PY'
import json, sys, urllib.parse, urllib.request
url = sys.argv[1] + "?" + urllib.parse.urlencode({"query": sys.argv[2]})
with urllib.request.urlopen(url, timeout=5) as r:
    d = json.load(r)
if d.get("status") != "success":
    sys.exit("query failed: %s" % d)
res = d["data"]["result"]
print(res[0]["value"][1] if res else "")
PY
}

# the endpoints themselves: Prometheus text, what promtool accepts
get "http://$OSD_M/metrics" > "$DIR/osd.metrics" || fail "GET osd.0 /metrics"
get "http://$MON_M/metrics" > "$DIR/mon.metrics" || fail "GET mon.a /metrics"
for f in osd mon; do
	if command -v promtool > /dev/null; then
		promtool check metrics < "$DIR/$f.metrics" > "$DIR/$f.promtool" 2>&1 ||
			{ cat "$DIR/$f.promtool"; fail "promtool rejects the $f metrics"; }
	fi
done
grep -q '^weft_osd_op_latency_seconds_bucket{osd="0",stage="op_write",le="+Inf"} ' "$DIR/osd.metrics" ||
	fail "no op_write latency histogram in osd.0's /metrics"
grep -q '^weft_osd_network_bytes_total{osd="0",network="cluster",direction="tx"} ' "$DIR/osd.metrics" ||
	fail "no per-network bytes in osd.0's /metrics"
grep -q '^weft_mon_have_quorum{mon="mon.a"} 1$' "$DIR/mon.metrics" || fail "mon.a /metrics: no quorum"
get "http://$OSD_M/nope" > /dev/null 2>&1 && fail "/nope answered 200"
log "ok: /metrics on osd.0 and mon.a (Prometheus text format)"

# a real Prometheus server scraping both every second
mkdir -p "$DIR/prom"
cat > "$DIR/prometheus.yml" << EOC
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: weft
    static_configs:
      - targets: ['$MON_M', '$OSD_M']
EOC
cl_spawn prometheus "$PROM" --config.file="$DIR/prometheus.yml" --storage.tsdb.path="$DIR/prom" \
	--web.listen-address="$PROM_A" --log.level=warn
scraped() { [ "$(q 'sum(up{job="weft"})')" = 2 ]; }
wait_for 60 "Prometheus scrapes mon.a and osd.0" scraped
v0=$(q 'weft_osd_writes_total{osd="0"}')
[ -n "$v0" ] || fail "no weft_osd_writes_total in Prometheus"
log "weft_osd_writes_total before the writes: $v0"

# writes through the cluster, then the counter Prometheus scraped must move by at least them
"$WEFT" bench "$POOL" 2 write -b 4K -t 4 --no-explain -c "$CONF" --format json > "$DIR/bench.json" 2> "$DIR/bench.err" ||
	fail "bench write: $(tail -n 1 "$DIR/bench.err")"
n=$(jq '.ops // .total_ops // .writes // 0' "$DIR/bench.json")
[ "$n" -gt 0 ] 2> /dev/null || n=1
moved() { python3 -c "import sys; sys.exit(0 if float('${1:-0}' or 0) >= $v0 + $n else 1)" 2> /dev/null; }
counter_moved() { moved "$(q 'weft_osd_writes_total{osd="0"}')"; }
wait_for 30 "Prometheus sees weft_osd_writes_total grow by $n writes" counter_moved
log "ok: weft_osd_writes_total $v0 -> $(q 'weft_osd_writes_total{osd="0"}') after $n writes"
c=$(q 'weft_osd_op_latency_seconds_count{osd="0",stage="op_write"}')
python3 -c "import sys; sys.exit(0 if float('$c') >= $n else 1)" || fail "op_write latency count $c < $n"
p99=$(q 'histogram_quantile(0.99, sum by (le) (weft_osd_op_latency_seconds_bucket{stage="op_write"}))')
python3 -c "import sys; v = float('$p99'); sys.exit(0 if 0 < v < 10 else 1)" || fail "p99 from the histogram: '$p99'"
[ "$(q 'weft_mon_have_quorum')" = 1 ] || fail "Prometheus: weft_mon_have_quorum is not 1"
[ "$(q 'weft_osdmap_epoch')" -ge 1 ] 2> /dev/null || fail "Prometheus: no weft_osdmap_epoch"
log "ok: latency histogram (p99 ${p99}s), quorum and map epoch through Prometheus's API"
# the sample Grafana dashboard (docs/grafana-weft.json): every query it makes is one
# this Prometheus accepts, and the stat panels have data
jq -r '.panels[].targets[].expr' "$here/../docs/grafana-weft.json" > "$DIR/dash.exprs" ||
	fail "docs/grafana-weft.json: no panel queries"
while read -r e; do
	v=$(q "$e") || fail "dashboard query refused by Prometheus: $e"
	case $e in max\(*) [ -n "$v" ] || fail "dashboard stat has no data: $e" ;; esac
done < "$DIR/dash.exprs"
log "ok: the $(wc -l < "$DIR/dash.exprs") queries of docs/grafana-weft.json run on Prometheus"
cl_stop prometheus TERM
