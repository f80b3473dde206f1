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
# Model mapping: Llama-3.1-8B-Instruct -> llama-3-8b and Llama-3.1-70B ->
# llama-3.3-70b (the same shapes), Qwen3-32B, Qwen3-235B-A22B, MiniMax-M2.5,
# gpt-oss-120b -> their presets; precision fp8 -> --weight-dtype fp8
# --act-dtype fp8, fp4 -> the checkpoint's own (mxfp4); layouts: TP =
# tp_size, EP = moe_ep_size (experts over the TP group, or with attention
# DP over TP x DP devices), DP = attention_dp_size.
# usage: bench/serving-h100.sh [ROOFLINE] [CSV]
set -eu
cd "$(dirname "$0")/.."
bin=${1:-build/cli/roofline}
csv=${2:-bench/data/serving-runs/h100_sxm.csv}
[ -x "$bin" ] || { echo "serving-h100: $bin not built" >&2; exit 2; }
exec python3 - "$bin" "$csv" <<'PY'
import csv, json, statistics, subprocess, sys, time
from concurrent.futures import ThreadPoolExecutor

bin_, path = sys.argv[1], sys.argv[2]
PRESET = {
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3-8b",
    "meta-llama/Llama-3.1-70B": "llama-3.3-70b",
    "Qwen/Qwen3-32B": "qwen3-32b",
    "Qwen/Qwen3-235B-A22B-FP8": "qwen3-235b-a22b",
    "MiniMaxAI/MiniMax-M2.5": "minimax-m2.5",
    "openai/gpt-oss-120b": "gpt-oss-120b",
}

def num(v, default):
    return int(v) if v not in ("", None) else default

def argv_of(r):
    model = PRESET.get(r["model_path"])
    if not model:
        return None, "no preset for " + r["model_path"]
    c, isl, osl = int(r["batch_size"]), int(r["isl"]), int(r["osl"])
    tp, pp = num(r["tp_size"], 1), num(r["pp_size"], 1)
    dp = max(num(r["attention_dp_size"], 1), 1)
    ep = max(num(r["moe_ep_size"], 1), 1)
    if pp != 1:
        return None, "pipeline runs"
    if ep > 1 and ep != tp * dp:
        return None, "experts over %d of %d x %d GPUs (EP x moe-TP)" % (ep, tp, dp)
    a = [bin_, "serve", model, "--hw", "h100-sxm", "--prompt", str(isl), "--output", str(osl),
         "--concurrency", str(c), "--requests", str(max(10 * c, 64)),
         "--max-seqs", str(c), "--max-batched-tokens", str(max(8192, c)),
         "--block", "32" if r["backend"] == "trtllm" else "16", "--json"]
    if r["precision"] == "fp8":
        a += ["--weight-dtype", "fp8", "--act-dtype", "fp8"]
    if tp > 1 or ep > 1 or dp > 1:
        a += ["--tp", str(tp), "--ep", str(ep), "--dp", str(dp)]
    return a, None

def run(r):
    a, why = argv_of(r)
    if not a:
        return r, None, why
    p = subprocess.run(a, capture_output=True, text=True)
    if p.returncode:
        return r, None, p.stderr.strip().split(": ", 2)[-1][:90]
    return r, json.loads(p.stdout), None

rows = [r for r in csv.DictReader(open(path)) if r["mode"] == "agg"]
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
out.sort(key=lambda x: (x[0]["model_path"], x[0]["backend"], x[0]["precision"],
                        int(x[0]["tp_size"] or 1), int(x[0]["batch_size"]), int(x[0]["isl"]),
                        int(x[0]["osl"])))
print("%-28s %-6s %-4s %-12s %5s %11s %9s %9s %6s %9s %9s %6s" % (
    "model", "engine", "prec", "layout", "C", "ISL/OSL", "TTFT sim", "measured", "ratio",
    "TPOT sim", "measured", "ratio"))
above, rt, rp = [], [], []
for r, d in out:
    ttft, tpot = d["ttft_s"]["mean"] * 1e3, d["tpot_s"]["mean"] * 1e3
    mt, mp = float(r["silicon_ttft_ms"]), float(r["silicon_tpot_ms"])
    lay = "tp%s" % (r["tp_size"] or 1)
    if int(r["moe_ep_size"] or 1) > 1:
        lay += " ep%s" % r["moe_ep_size"]
    if int(r["attention_dp_size"] or 1) > 1:
        lay += " dp%s" % r["attention_dp_size"]
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
