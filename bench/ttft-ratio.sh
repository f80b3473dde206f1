#!/bin/bash
# How the measured TTFTs of bench/data/serving-runs/h100_sxm.csv relate to a
# lone prefill (issue 26's TTFT miss, docs/gpu-predict.md "The TTFT of a
# benchmark's closed loop"). For every aggregated run the tool models:
#   t1 = the predicted TTFT of one client alone (`roofline serve --predict
#        --backend ENGINE --concurrency 1`, the run's model, layout, lengths and
#        engine settings: bench/serving_runs.py), a lone prefill on the tables;
#   f  = measured TTFT / t1.
# Prints f by engine, model, precision and concurrency (median and quartiles),
# then what an empirical law would predict: TTFT = f_e(C) x t1, f_e(C) the
# median f of the engine's runs at that concurrency (interpolated in log C,
# held at the ends; concurrencies with fewer than 3 runs left out), fitted
# in-sample on every run and leave-one-model-out (each model predicted from
# the engine's other models; an engine with one model keeps the simulation),
# beside the simulation's own error (bench/predict-gpu.sh's prediction).
# The law is an analysis of these benchmarks' closed loops, not a model the
# tool uses (docs/gpu-predict.md says why). A bench, not a check: exits 0,
# 2 on bad usage. About 3 minutes on 2 cores.
# usage: bench/ttft-ratio.sh [ROOFLINE] [CSV]
set -eu
cd "$(dirname "$0")/.."
bin=${1:-build/cli/roofline}
csv=${2:-bench/data/serving-runs/h100_sxm.csv}
[ -x "$bin" ] || { echo "ttft-ratio: $bin not built" >&2; exit 2; }
[ -r "$csv" ] || { echo "ttft-ratio: $csv not readable" >&2; exit 2; }
exec python3 - "$bin" "$csv" <<'PY'
import math, statistics, sys
sys.path.insert(0, "bench")
import serving_runs as sr

bin_, path = sys.argv[1], sys.argv[2]
rows = sr.load(path)


def lone_argv(r):
    """The run alone: one client (one a DP replica), 8 requests."""
    lay, _ = sr.layout(r)
    a, why = sr.serve_argv(bin_, r, predict=True, concurrency=lay[1] if lay else 1)
    if a:
        a[a.index("--requests") + 1] = "8"
    return a, why


lone, skipped, w1 = sr.run_all(rows, lone_argv)
full, _, w2 = sr.run_all(rows, lambda r: sr.serve_argv(bin_, r, predict=True,
                                                        concurrency=sr.clients(r)))
t1 = {r["id"]: d["predicted"]["ttft_s"] * 1e3 for r, d in lone}
sim = {r["id"]: d["predicted"]["ttft_s"] * 1e3 for r, d in full}
runs = [r for r, _ in lone if r["id"] in sim]


def f_of(r):
    return sr.measured(r)[0] / t1[r["id"]]


def quart(v):
    v = sorted(v)
    q = statistics.quantiles(v, n=4, method="inclusive") if len(v) > 1 else [v[0]] * 3
    return q[0], statistics.median(v), q[2]


print("f = measured TTFT / the predicted TTFT of one client alone, by engine, model, precision "
      "and concurrency")
print("%-7s %-22s %-5s %5s %4s | %7s %7s %7s" % ("engine", "model", "prec", "C", "runs", "q1",
                                                 "median", "q3"))
groups = {}
for r in runs:
    key = (r["backend"], r["model_path"].split("/")[1][:22], r["precision"] or "bf16",
           int(r["batch_size"]))
    groups.setdefault(key, []).append(f_of(r))
for key in sorted(groups):
    print("%-7s %-22s %-5s %5d %4d | %7.2f %7.2f %7.2f" % (key + (len(groups[key]),) +
                                                            quart(groups[key])))


def law(train, engine, c):
    """f_e(C) from the training runs: the median at each concurrency with 3 runs or more,
    interpolated in log C and held at the ends; None where the engine has none."""
    by = {}
    for r in train:
        if r["backend"] == engine:
            by.setdefault(int(r["batch_size"]), []).append(f_of(r))
    pts = sorted((k, statistics.median(v)) for k, v in by.items() if len(v) >= 3)
    if not pts:
        return None
    if c <= pts[0][0]:
        return pts[0][1]
    if c >= pts[-1][0]:
        return pts[-1][1]
    for (c0, f0), (c1, f1) in zip(pts, pts[1:]):
        if c0 <= c <= c1:
            w = (math.log(c) - math.log(c0)) / (math.log(c1) - math.log(c0))
            return math.exp((1 - w) * math.log(f0) + w * math.log(f1))


err = sr.rel_err
res = {"simulation": {}, "law in-sample": {}, "law leave-one-model-out": {}}
for r in runs:
    m = sr.measured(r)[0]
    for name, train in (("law in-sample", runs),
                        ("law leave-one-model-out",
                         [x for x in runs if x["model_path"] != r["model_path"]])):
        f = law(train, r["backend"], int(r["batch_size"]))
        p = f * t1[r["id"]] if f is not None else sim[r["id"]]
        res[name].setdefault(r["backend"], []).append(err(p, m))
    res["simulation"].setdefault(r["backend"], []).append(err(sim[r["id"]], m))

print()
print("TTFT median error by engine (the law: f_e(C) x t1; an engine with no other model keeps "
      "the simulation)")
engines = sorted({r["backend"] for r in runs})
print("%-26s %s %8s" % ("", " ".join("%8s" % e for e in engines), "all"))
for name, by in res.items():
    every = [x for v in by.values() for x in v]
    print("%-26s %s %7.1f%%" % (name, " ".join("%7.1f%%" % (100 * statistics.median(by[e]))
                                               for e in engines),
                                100 * statistics.median(every)))
print()
print("%d aggregated runs, %d with both simulations (%.0f s wall), %d not modelled" % (
    len(rows), len(runs), w1 + w2, sum(skipped.values())))
PY
