#!/bin/bash
# GPU predictions against the measured H100 serving runs (issue 26's
# acceptance): every aggregated run of bench/data/serving-runs/h100_sxm.csv
# whose model, precision and layout the tool models, simulated by `roofline
# serve --predict --backend ENGINE` (the run's own engine's kernel tables,
# data/gpu/h100_sxm/ENGINE) in the closed loop at the run's concurrency and
# ISL/OSL, each step's time predicted from the tables (docs/gpu-predict.md).
# Another GPU's runs in the same format (aiconfigurator's silicon_sample.csv
# rows of h200_sxm, b200_sxm or b300_sxm, given as CSV) are predicted on that
# GPU's preset and tables (bench/serving_runs.py, HW): the held-out test,
# since nothing was fitted to them.
#
# Prints each run's measured and predicted TTFT and TPOT (means) with the
# floor's ratio beside (flr/m: the same simulation with each step on its
# floor, serve's own ttft_s and tpot_s means, over the measured), then the
# errors |predicted - measured| / measured by model, engine, precision and
# concurrency (median and p90, TTFT and TPOT, and the floor's median error
# beside), the overall medians against the targets
# (TPOT 15%, TTFT 25%), and the runs not modelled and why. Reports the
# medians whatever they are; exits 0 (a bench, not a check), 2 on bad usage.
# Each run is simulated on its engine's schedule (serve --schedule's default
# for --backend: vLLM mixed, TensorRT-LLM unchunked, SGLang prefill-first).
# The predicted TTFT of TensorRT-LLM's and vLLM's runs is the closed-loop
# factor times t1, a lone client's simulated TTFT (data/gpu/closed_loop_ttft.json,
# fitted on these runs by tools/closed-loop/fit.py; rf_closed_loop.h): its
# error here is in-sample, and the bench prints beside it the error held
# out by model that the fit published, and the simulation's own TTFT error
# (nothing fitted). SGLang's TTFT and every TPOT are the simulation's.
# No front-end latency (--frontend-latency 0; docs/gpu-predict.md says why
# the fitted one was not adopted), and the library's idle_first (serve
# --idle-first) is not set.
# Each run's lengths are those its benchmark driver sent (fixed for
# aiconfigurator's evaluations, uniform in [0.8 L, L] for InferenceX's:
# bench/serving_runs.py, lengths()).
# The mapping of a run to a command line is bench/serving_runs.py's
# serve_argv(..., predict=True) (shared with bench/serving-h100.sh's floors),
# with these differences, each a prediction's assumption rather than a
# floor's: the KV cache in the engines' default dtype (bf16), fp8 runs as
# --quant with the run's gemm_quant_mode (fp8 or fp8_block: the tables'
# rows), gpt-oss's fp4 as its checkpoint's mxfp4 experts (w4a16_mxfp4 rows).
# ENGINE_SETTINGS=aiconfigurator simulates aiconfigurator's own evaluations
# with the step budgets its generator writes into their engines' configs
# (bench/serving_runs.py, step_budget; tried for issue 26, not the default:
# docs/gpu-predict.md says what it did).
# WRITE_ERROR=FILE also writes each engine's errors (runs, TTFT and TPOT
# median and p90; and by concurrency, 1-8, 9-32, 33-128 and above, where 5
# runs or more) as the serving-error file `serve --predict` prints beside
# its figures (data/gpu/h100_sxm/serving_error.json; rf_gpu_io.h), with
# this commit, the date and the runs as its source; only with the default
# settings, and replaced atomically.
# usage: [ENGINE_SETTINGS=defaults|aiconfigurator] [WRITE_ERROR=FILE] bench/predict-gpu.sh [ROOFLINE] [CSV]
set -eu
cd "$(dirname "$0")/.."
bin=${1:-build/cli/roofline}
csv=${2:-bench/data/serving-runs/h100_sxm.csv}
[ -x "$bin" ] || { echo "predict-gpu: $bin not built" >&2; exit 2; }
exec python3 - "$bin" "$csv" <<'PY'
import datetime, json, os, statistics, subprocess, sys
sys.path.insert(0, "bench")
import serving_runs as sr

bin_, path = sys.argv[1], sys.argv[2]


settings = os.environ.get("ENGINE_SETTINGS", "defaults")
if settings not in ("defaults", "aiconfigurator"):
    print("predict-gpu: ENGINE_SETTINGS=%s: defaults or aiconfigurator" % settings,
          file=sys.stderr)
    sys.exit(2)
write = os.environ.get("WRITE_ERROR")
if write and settings != "defaults":
    print("predict-gpu: WRITE_ERROR needs the default engine settings", file=sys.stderr)
    sys.exit(2)
rows = sr.load(path)
out, skipped, wall = sr.run_all(
    rows, lambda r: sr.serve_argv(bin_, r, predict=True, concurrency=sr.clients(r),
                                  settings=settings))
print("engine settings: %s (bench/serving_runs.py, step_budget)" % settings)


err = sr.rel_err
print("%-22s %-6s %-4s %-11s %4s %10s | %8s %8s %6s %6s | %7s %7s %6s %6s | %5s" % (
    "model", "engine", "prec", "layout", "C", "ISL/OSL", "TTFT prd", "measured", "err",
    "flr/m", "TPOT prd", "meas", "err", "flr/m", "band"))
groups, engines, buckets = {}, {}, {}
# the serving-error file's concurrency buckets (WRITE_ERROR), each written with 5 runs or more
BUCKETS = ((1, 8), (9, 32), (33, 128), (129, 1000000))
et, ep, ft, fp = [], [], [], []
simulated = {}  # the simulation's TTFT error, an engine
for r, d in out:
    pt, pp = d["predicted"]["ttft_s"] * 1e3, d["predicted"]["tpot_s"] * 1e3
    mt, mp = sr.measured(r)
    # the same simulation on the floors (serve's own means): the floor's error under this load
    flt, flp = d["ttft_s"]["mean"] * 1e3, d["tpot_s"]["mean"] * 1e3
    e = (err(pt, mt), err(pp, mp), err(flt, mt), err(flp, mp))  # TTFT, TPOT, their floors'
    sim_t = err(d["predicted"].get("ttft_simulated_s", pt / 1e3) * 1e3, mt)
    simulated.setdefault(r["backend"], []).append(sim_t)
    print("%-22s %-6s %-4s %-11s %4s %10s | %8.1f %8.1f %5.0f%% %6.3f | %7.2f %7.2f %5.0f%% %6.3f "
          "| %4.0f%%" % (
              r["model_path"].split("/")[1][:22], r["backend"], r["precision"] or "bf16",
              sr.layout_label(r), r["batch_size"], r["isl"] + "/" + r["osl"], pt, mt,
              100 * e[0], flt / mt, pp, mp, 100 * e[1], flp / mp,
              100 * d["predicted"]["band"]))
    c = int(r["batch_size"])
    key = (r["model_path"].split("/")[1][:22], r["backend"], r["precision"] or "bf16", c)
    b = next(k for k in BUCKETS if k[0] <= c <= k[1])
    # each set keeps the first of e its lists hold (zip stops at the shorter)
    for lists in (groups.setdefault(key, ([], [], [], [])),
                  buckets.setdefault((r["backend"], b), ([], [])),
                  engines.setdefault(r["backend"], ([], [])), (et, ep, ft, fp)):
        for lst, v in zip(lists, e):
            lst.append(v)


print()
print("errors by model, engine, precision and concurrency (|pred - measured| / measured; "
      "floor: |floor - measured| / measured)")
print("%-22s %-6s %-4s %5s %4s | %8s %8s %8s | %8s %8s %8s" % (
    "model", "engine", "prec", "C", "runs", "TTFT med", "p90", "floor", "TPOT med", "p90",
    "floor"))
for key in sorted(groups):
    t, p, f1, f2 = groups[key]
    print("%-22s %-6s %-4s %5d %4d | %7.0f%% %7.0f%% %7.0f%% | %7.0f%% %7.0f%% %7.0f%%" % (
        key + (len(t), 100 * statistics.median(t), 100 * sr.p90(t), 100 * statistics.median(f1),
               100 * statistics.median(p), 100 * sr.p90(p), 100 * statistics.median(f2))))
print()
law_path = os.path.join("data", "gpu", "closed_loop_ttft.json")
law = json.load(open(law_path)) if os.path.exists(law_path) else {"engines": {}}
print("by engine: median (p90) error; TTFT held out by model (the closed-loop factor's fit, "
      "%s) and the simulation's beside" % law_path)
for eng in sorted(engines):
    t, p = engines[eng]
    held = law["engines"].get(eng)
    print("  %-7s %4d runs  TTFT %5.1f%% (%5.1f%%)  TPOT %5.1f%% (%5.1f%%)  TTFT held out %s  "
          "simulated %5.1f%%" % (
              eng, len(t), 100 * statistics.median(t), 100 * sr.p90(t), 100 * statistics.median(p),
              100 * sr.p90(p), "%5.1f%%" % (100 * held["held_out_median"]) if held else
              " (none: the simulation's)", 100 * statistics.median(simulated[eng])))
print()
print("%d aggregated runs, %d predicted (%.0f s wall, 2 at a time), %d not modelled:" % (
    len(rows), len(out), wall, sum(skipped.values())))
for why, n in sorted(skipped.items(), key=lambda x: -x[1]):
    print("  %4d  %s" % (n, why))
def figures(t, p):
    """The serving-error file's figures of a set of runs."""
    return {"runs": len(t), "ttft_median": round(statistics.median(t), 6),
            "ttft_p90": round(sr.p90(t), 6), "tpot_median": round(statistics.median(p), 6),
            "tpot_p90": round(sr.p90(p), 6)}


if write and out:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    doc = {
        "what": "the measured error of roofline serve --predict on these tables: "
                "|predicted - measured| / measured of each run's mean TTFT and TPOT, as fractions",
        "source": "bench/predict-gpu.sh at commit %s on %s: %d aggregated H100 SXM runs of "
                  "bench/data/serving-runs/h100_sxm.csv (ai-dynamo/aiconfigurator's "
                  "silicon_sample.csv at 095f58a5), each in a closed loop at its concurrency on "
                  "its own engine's tables; the TTFT of trtllm and vllm is the closed-loop "
                  "factor fitted on these runs (in-sample; held out by model in "
                  "closed_loop_ttft.json)" % (commit, datetime.date.today().isoformat(),
                                               len(out)),
        "engines": {eng: dict(figures(t, p), by_concurrency=[
            dict({"min": b[0], "max": b[1]}, **figures(*buckets[(eng, b)]))
            for b in BUCKETS if len(buckets.get((eng, b), ((),))[0]) >= 5])
            for eng, (t, p) in sorted(engines.items())},
    }
    tmp = write + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    os.replace(tmp, write)
    print("wrote %s" % write)
if out:
    print("median error: TTFT %.1f%% (target 25%%; p90 %.1f%%; the floor's %.1f%%), "
          "TPOT %.1f%% (target 15%%; p90 %.1f%%; the floor's %.1f%%)" % (
              100 * statistics.median(et), 100 * sr.p90(et), 100 * statistics.median(ft),
              100 * statistics.median(ep), 100 * sr.p90(ep), 100 * statistics.median(fp)))
    every = law.get("every_engine")
    print("TTFT held out by model, on the runs the closed-loop factor was fitted on: %s; "
          "the simulation's alone on these runs: %.1f%%" % (
        "%.1f%% over %d runs (p90 %.1f%%; %s)" % (
            100 * every["held_out_median"], every["runs"], 100 * every["held_out_p90"], law_path)
        if every else "none (no closed-loop factor)",
        100 * statistics.median([x for v in simulated.values() for x in v])))
PY
