#!/bin/bash
# Serving under load against the measured H100 runs (issue 27's acceptance):
# every aggregated run of bench/data/serving-runs/h100_sxm.csv whose model,
# precision and layout the tool can model, simulated by `roofline serve` in
# the closed loop at the run's concurrency C and ISL/OSL, on the h100-sxm
# preset with the floors (each step's time the floor of its exact batch on
# the layout). The engine: a step of max(8192, C) tokens, C sequences, chunks
# of the step's budget, blocks of 32 tokens (TensorRT-LLM) or 16 (vLLM,
# SGLang), 10 C requests (at least 64). Prints a table by model, engine and
# concurrency (the mean TTFT and TPOT simulated beside the measured, and
# their ratios), the runs not modelled and why, and checks that no floor
# is above a measured TTFT or TPOT (exit 1 if one is).
# The mapping of a run to a command line (model to preset, precision to
# dtypes, the KV dtype a floor assumes, layout, engine) is bench/serving_runs.py,
# shared with bench/predict-gpu.sh; prefill attention causal (--causal).
# usage: bench/serving-h100.sh [ROOFLINE] [CSV]
set -eu
cd "$(dirname "$0")/.."
bin=${1:-build/cli/roofline}
csv=${2:-bench/data/serving-runs/h100_sxm.csv}
[ -x "$bin" ] || { echo "serving-h100: $bin not built" >&2; exit 2; }
exec python3 - "$bin" "$csv" <<'PY'
import json, statistics, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor
sys.path.insert(0, "bench")
import serving_runs as sr

bin_, path = sys.argv[1], sys.argv[2]

def argv_of(r):
    return sr.serve_argv(bin_, r, ["--causal"])

def run(r):
    a, why = argv_of(r)
    if not a:
        return r, None, why
    p = subprocess.run(a, capture_output=True, text=True)
    if p.returncode:
        return r, None, p.stderr.strip().split(": ", 2)[-1][:90]
    return r, json.loads(p.stdout), None

rows = sr.load(path)
t0 = time.time()
with ThreadPoolExecutor(max_workers=2) as ex:
    done = list(ex.map(run, rows))
wall = time.time() - t0
out, skipped = [], {}
for r, doc, why in done:
    if doc is None:
        skipped[why] = skipped.get(why, 0) + 1
        continue
    out.append((r, doc))
out.sort(key=lambda x: sr.sort_key(x[0]))
print("%-28s %-6s %-4s %-12s %5s %11s %9s %9s %6s %9s %9s %6s" % (
    "model", "engine", "prec", "layout", "C", "ISL/OSL", "TTFT sim", "measured", "ratio",
    "TPOT sim", "measured", "ratio"))
above, rt, rp = [], [], []
for r, d in out:
    ttft, tpot = d["ttft_s"]["mean"] * 1e3, d["tpot_s"]["mean"] * 1e3
    mt, mp = sr.measured(r)
    lay = sr.layout_label(r)
    print("%-28s %-6s %-4s %-12s %5s %11s %9.2f %9.2f %6.3f %9.3f %9.3f %6.3f" % (
        r["model_path"].split("/")[1][:28], r["backend"], r["precision"] or "bf16", lay,
        r["batch_size"], r["isl"] + "/" + r["osl"], ttft, mt, ttft / mt, tpot, mp, tpot / mp))
    rt.append(ttft / mt)
    rp.append(tpot / mp)
    if ttft > mt or tpot > mp:
        above.append(r["id"])
print()
print("%d aggregated runs, %d simulated (%.0f s wall, 2 at a time), %d not modelled:" % (
    len(rows), len(out), wall, sum(skipped.values())))
for why, n in sorted(skipped.items(), key=lambda x: -x[1]):
    print("  %4d  %s" % (n, why))
if out:
    print("floor / measured, median: TTFT %.3f, TPOT %.3f; max: TTFT %.3f, TPOT %.3f" % (
        statistics.median(rt), statistics.median(rp), max(rt), max(rp)))
if above:
    print("FAIL: %d runs with a floor above the measured: %s" % (len(above), ", ".join(above[:10])))
    sys.exit(1)
print("ok: no floor above a measured TTFT or TPOT")
PY
