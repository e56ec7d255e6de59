# SPDX-License-Identifier: Apache-2.0
"""Readers of the raw results bench-lib.sh leaves in RES, shared by the
tables of cluster-bench.sh and small-write.sh."""
import json
import os


def load(res, name):
    """One JSON document from RES/NAME, ignoring anything printed before it."""
    text = open(os.path.join(res, name)).read()
    return json.loads(text[text.index("{"):])


def fio(res, name):
    """fio --output-format=json of RES/fio-NAME.json: MB/s, IOPS, clat in us."""
    j = load(res, "fio-%s.json" % name)["jobs"][0]
    op = "read" if j["read"]["io_bytes"] else "write"
    o = j[op]
    p = o["clat_ns"]["percentile"]
    out = {"mbs": o["bw_bytes"] / 1e6, "iops": o["iops"],
           "p50": p["50.000000"] / 1e3, "p99": p["99.000000"] / 1e3,
           "p999": p["99.900000"] / 1e3}
    # with --fdatasync=1 the durable write is the write plus its fdatasync
    # (fio 3.33 leaves sync.total_ios at 0; lat_ns.N counts the fdatasyncs)
    sync = j.get("sync", {})
    if sync.get("total_ios") or sync.get("lat_ns", {}).get("N"):
        sp = sync.get("lat_ns", {}).get("percentile", {})
        out["sync_p50"] = sp.get("50.000000", 0) / 1e3
        out["sync_p99"] = sp.get("99.000000", 0) / 1e3
        out["sync_mean"] = sync["lat_ns"]["mean"] / 1e3
        out["clat_mean"] = o["clat_ns"]["mean"] / 1e3
    return out


def bench(res, name):
    """weft bench --format json (docs/bench.md): MB/s and IOPS over the whole
    run (what rados bench calls Bandwidth), latencies in us, the explainer."""
    j = load(res, name + ".json")

    def g(*path):
        v = j
        for part in path:
            v = v.get(part) if isinstance(v, dict) else None
        return v
    us = lambda k: None if g("latency_s", k) is None else g("latency_s", k) * 1e6
    mbs = g("bandwidth_mb_s", "avg")
    if g("bytes") is not None and g("total_time_s"):
        mbs = g("bytes") / g("total_time_s") / 1e6
    iops = g("ops") / g("total_time_s") if g("ops") is not None and g("total_time_s") else None
    return {"mbs": mbs, "iops": iops, "ops": g("ops"), "secs": g("total_time_s"),
            "p50": us("p50"), "p99": us("p99"), "p999": us("p99.9"),
            "errors": g("errors") or 0, "explain": g("explain", "verdict"),
            "ex": g("explain") or {}}


def f(v, fmt="%.0f"):
    return "n/a" if v is None else fmt % v
