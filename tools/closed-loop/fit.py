#!/usr/bin/python3
"""Fit the closed-loop TTFT factor (include/roofline/rf_closed_loop.h) on the measured H100
serving runs, and write it as data/gpu/closed_loop_ttft.json. CI does not run this; its output
is committed with the commit and date it was made at.

What is fitted. In a closed-loop benchmark (C clients, each sending its next request when its
last ends) the measured TTFT is, at each C, a near-constant multiple of t1, the TTFT of one
client alone, whatever the prompt's length (docs/gpu-predict.md, "The closed loop's queueing
factor"). So, for every aggregated run the tool models:

    y = log(measured TTFT / t1),   t1 = `roofline serve --predict`'s ttft_lone_s

(the run's model, layout, engine's tables and the lengths its benchmark driver sent: the
mapping of bench/serving_runs.py), and

    y = a[engine] + b[lengths] + h(c)

with c the clients a replica, h linear in log c between knots and held beyond them, b centred
(its median over the kinds is 0). The knots are the concurrencies that at least two models and
ten runs were measured at: a concurrency one model alone was run at (gpt-oss at 512, where the
engine admitted fewer requests than the clients) says something of that run, not of a load.
Outside the knots (c_min to c_max in the file) the factor is not known and `serve --predict`
gives the simulation's TTFT, as this fit's errors count it.
Each parameter is the median of its runs' residuals, in turn, 50 rounds (a median fit: one run
far off moves it little). SGLang is not fitted: its schedule's simulation (prefill-first) is
its prediction, and with one model measured no held-out error could be given for a factor.

The error published is held out by model: each model's runs predicted by a fit without that
model (the engine keeps no factor when it had no other model). The in-sample error is the
fit's own on its runs. Both are computed on the factors as written (4 significant digits,
interpolated as rf_closed_loop_factor does).

usage: tools/closed-loop/fit.py [ROOFLINE] [CSV] [OUT]
  defaults: build/cli/roofline bench/data/serving-runs/h100_sxm.csv data/gpu/closed_loop_ttft.json
"""
import bisect
import collections
import datetime
import json
import math
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "bench"))
import serving_runs as sr  # noqa: E402

ENGINES = ("trtllm", "vllm")  # fitted; sglang keeps its simulation (above)
ROUNDS = 50
KNOT_MODELS, KNOT_RUNS = 2, 10


def kind(r):
    """The lengths a run's driver sent: "fixed" or "varied" (bench/serving_runs.py lengths())."""
    p, o = sr.lengths(r, driver=True)
    return "fixed" if (p, o) == (r["isl"], r["osl"]) else "varied"


def observations(bin_, rows):
    """One dict a run the tool models: engine, model, lengths kind, c, t1 and measured TTFT."""
    def argv(r):
        return sr.serve_argv(bin_, r, predict=True, concurrency=sr.clients(r))
    done, skipped, wall = sr.run_all(rows, argv)
    obs = []
    for r, doc in done:
        p = doc["predicted"]
        obs.append({"engine": r["backend"], "model": r["model_path"], "kind": kind(r),
                    "c": p["clients_per_replica"], "t1": p["ttft_lone_s"],
                    "sim": p["ttft_simulated_s"], "m": sr.measured(r)[0] / 1e3})
    return obs, skipped, wall


def interp(points, c):
    """rf_closed_loop_factor: log f linear in log c, held beyond the ends."""
    cs = [p[0] for p in points]
    if c <= cs[0]:
        return points[0][1]
    if c >= cs[-1]:
        return points[-1][1]
    i = bisect.bisect_left(cs, c)
    if cs[i] == c:  # a point: its own factor, not a rounded product
        return points[i][1]
    (c0, f0), (c1, f1) = points[i - 1], points[i]
    w = math.log(c / c0) / math.log(c1 / c0)
    return f0 * (f1 / f0) ** w


def fit(obs):
    """(a, b, knots, h) of y = a[engine] + b[kind] + h(c), or None without a knot."""
    per = collections.defaultdict(lambda: (set(), [0]))
    for o in obs:
        per[o["c"]][0].add(o["model"])
        per[o["c"]][1][0] += 1
    knots = sorted(c for c, (m, n) in per.items() if len(m) >= KNOT_MODELS and n[0] >= KNOT_RUNS)
    if not knots:
        return None
    a = {e: 0.0 for e in {o["engine"] for o in obs}}
    b = {k: 0.0 for k in {o["kind"] for o in obs}}
    h = {c: 0.0 for c in knots}

    def hc(c):
        return math.log(interp([(k, math.exp(h[k])) for k in knots], c))

    for _ in range(ROUNDS):
        for c in knots:
            h[c] = statistics.median(
                math.log(o["m"] / o["t1"]) - a[o["engine"]] - b[o["kind"]]
                for o in obs if o["c"] == c)
        for e in a:
            a[e] = statistics.median(math.log(o["m"] / o["t1"]) - b[o["kind"]] - hc(o["c"])
                                     for o in obs if o["engine"] == e)
        for k in b:
            b[k] = statistics.median(math.log(o["m"] / o["t1"]) - a[o["engine"]] - hc(o["c"])
                                     for o in obs if o["kind"] == k)
        mid = statistics.median(b.values())
        b = {k: v - mid for k, v in b.items()}
    return a, b, knots, h


def tables(par):
    """{engine: {kind: [[c, f], ...]}} at the knots, f to 4 significant digits."""
    a, b, knots, h = par
    return {e: {k: [[c, float("%.4g" % math.exp(a[e] + b[k] + h[c]))] for c in knots]
                for k in ("fixed", "varied") if k in b} for e in a}


def predict(tab, o):
    """The tool's TTFT: f x t1 where the engine has a factor and c lies within its points
    (within [c_min, c_max]); None where serve --predict gives the simulation's."""
    t = tab.get(o["engine"], {}).get(o["kind"])
    return interp(t, o["c"]) * o["t1"] if t and t[0][0] <= o["c"] <= t[-1][0] else None


def main():
    bin_ = sys.argv[1] if len(sys.argv) > 1 else "build/cli/roofline"
    csv = sys.argv[2] if len(sys.argv) > 2 else sr.CSV
    out = sys.argv[3] if len(sys.argv) > 3 else os.path.join("data", "gpu", "closed_loop_ttft.json")
    obs, skipped, wall = observations(bin_, sr.load(csv))
    fitted = [o for o in obs if o["engine"] in ENGINES]
    tab = tables(fit(fitted))
    # each run's error three ways: the fit's own (in-sample), held out by model (a fit
    # without the run's model), the simulation's; the tool's simulation where no factor applies
    for model in sorted({o["model"] for o in fitted}):
        par = fit([o for o in fitted if o["model"] != model])
        t = tables(par) if par else {}
        for o in fitted:
            if o["model"] == model:
                o["held"] = sr.rel_err(predict(t, o) or o["sim"], o["m"])
    for o in obs:
        o["sim_err"] = sr.rel_err(o["sim"], o["m"])
        o["in"] = sr.rel_err(predict(tab, o) or o["sim"], o["m"])  # sglang: not in tab
        o.setdefault("held", o["sim_err"])

    doc = {"what": "a closed loop's TTFT over t1, the TTFT of one client a replica alone "
                   "(roofline serve --predict's ttft_lone_s): f(engine, lengths, c) at c clients "
                   "a replica, as [c, f] points (rf_closed_loop.h)",
           "source": "tools/closed-loop/fit.py at commit %s on %s: %d aggregated H100 SXM runs "
                     "of bench/data/serving-runs/h100_sxm.csv (ai-dynamo/aiconfigurator's "
                     "silicon_sample.csv at 095f58a5) on this repository's kernel tables" % (
                         commit(), datetime.date.today().isoformat(), len(fitted)),
           "model": "log f = a[engine] + b[lengths] + h(c), medians of the runs' residuals; h "
                    "at concurrencies measured on 2 models and 10 runs or more",
           "engines": {}}
    print("%-8s %5s %9s %10s %9s  %s" % ("engine", "runs", "in-sample", "held-out", "p90",
                                         "simulation"))
    for e in ENGINES:
        runs = [o for o in fitted if o["engine"] == e]
        ins, held, sim = ([o[k] for o in runs] for k in ("in", "held", "sim_err"))
        points = tab[e]["fixed"]
        doc["engines"][e] = {
            "runs": len(runs), "c_min": points[0][0], "c_max": points[-1][0],
            "in_sample_median": round(statistics.median(ins), 4),
            "held_out_median": round(statistics.median(held), 4),
            "held_out_p90": round(sr.p90(held), 4), "lengths": tab[e]}
        print("%-8s %5d %8.1f%% %9.1f%% %8.1f%%  %9.1f%%" % (
            e, len(runs), 100 * statistics.median(ins), 100 * statistics.median(held),
            100 * sr.p90(held), 100 * statistics.median(sim)))
    every = [o["held"] for o in obs]
    doc["every_engine"] = {
        "runs": len(every), "held_out_median": round(statistics.median(every), 4),
        "held_out_p90": round(sr.p90(every), 4),
        "what": "every run modelled, each engine's as serve --predict gives it (sglang: the "
                "simulation), the fitted engines' held out by model"}
    print("%-8s %5d %9s %9.1f%% %8.1f%%  (sglang: its simulation)" % (
        "every", len(every), "", 100 * statistics.median(every), 100 * sr.p90(every)))
    print("held out by model:")
    for model in sorted({o["model"] for o in fitted}):
        v = [o["held"] for o in fitted if o["model"] == model]
        print("  %-40s %4d runs %6.1f%%" % (model, len(v), 100 * statistics.median(v)))
    tmp = out + ".tmp"
    text = json.dumps(doc, indent=2)
    # a point a line: [c, f]
    text = re.sub(r"\[\s+([0-9.e+-]+),\s+([0-9.e+-]+)\s+\]", r"[\1, \2]", text)
    with open(tmp, "w") as f:
        f.write(text + "\n")
    os.replace(tmp, out)
    print("%s: %d runs fitted (%d modelled, %.0f s), not modelled: %s" % (
        out, len(fitted), len(obs), wall, dict(skipped)))


def commit():
    p = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                       text=True)
    return p.stdout.strip() or "unknown"


if __name__ == "__main__":
    main()
