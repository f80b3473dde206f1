#!/bin/bash
# GPU predictions against the measured H100 serving runs (issue 26's
# acceptance): every aggregated run of bench/data/serving-runs/h100_sxm.csv
# whose model, precision and layout the tool models, simulated by `roofline
# serve --predict --backend ENGINE` (the run's own engine's kernel tables,
# data/gpu/h100_sxm/ENGINE) in the closed loop at the run's concurrency and
# ISL/OSL, each step's time predicted from the tables (docs/gpu-predict.md).
#
# Prints each run's measured and predicted TTFT and TPOT (means) with the
# floor's ratio beside (flr/m: the same simulation with each step on its
# floor, serve's own ttft_s and tpot_s means, over the measured), then the
# errors |predicted - measured| / measured by model, engine, precision and
# concurrency (median and p90, TTFT and TPOT, and the floor's median error
# beside), the overall medians against the targets
# (TPOT 15%, TTFT 25%), and the runs not modelled and why. Reports the
# medians whatever they are; exits 0 (a bench, not a check), 2 on bad usage.
# Each run is predicted twice: with its engine's front-end latency fitted on
# every H100 run of that engine (in-sample), and with the one fitted on the
# engine's other models only (held-out: leave-one-model-out; an engine with
# one model gets 0, nothing to fit on), both from
# bench/data/serving-runs/frontend-h100.csv; the errors are printed side by
# side. --fit predicts every run at 0 and prints that file: for each engine
# the latency d on a 0.5 ms grid whose additive TTFT p + d has the least
# median error over the engine's runs (all, then each model left out).
# The mapping of a run to a command line is bench/serving_runs.py's
# serve_argv(..., predict=True) (shared with bench/serving-h100.sh's floors),
# with these differences, each a prediction's assumption rather than a
# floor's: the KV cache in the engines' default dtype (bf16), fp8 runs as
# --quant with the run's gemm_quant_mode (fp8 or fp8_block: the tables'
# rows), gpt-oss's fp4 as its checkpoint's mxfp4 experts (w4a16_mxfp4 rows).
# usage: bench/predict-gpu.sh [--fit] [ROOFLINE] [CSV]
set -eu
cd "$(dirname "$0")/.."
fit=0
[ "${1:-}" = --fit ] && { fit=1; shift; }
bin=${1:-build/cli/roofline}
csv=${2:-bench/data/serving-runs/h100_sxm.csv}
[ -x "$bin" ] || { echo "predict-gpu: $bin not built" >&2; exit 2; }
exec python3 - "$bin" "$csv" "$fit" <<'PY'
import statistics, sys
sys.path.insert(0, "bench")
import serving_runs as sr

bin_, path, fit = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
rows = sr.load(path)


def predict(frontend):
    """Every run predicted, frontend(r) its front-end latency in seconds."""
    return sr.run_all(rows, lambda r: sr.serve_argv(
        bin_, r, extra=["--frontend-latency", "%.6g" % frontend(r)], predict=True,
        concurrency=sr.clients(r)))


def ms(d):
    return d["predicted"]["ttft_s"] * 1e3, d["predicted"]["tpot_s"] * 1e3


if fit:
    out, skipped, wall = predict(lambda r: 0)
    print("engine,held_out_model,frontend_s,runs,fit")
    for eng in sorted({r["backend"] for r, _ in out}):
        mine = [(r, d) for r, d in out if r["backend"] == eng]
        for held in [""] + sorted({r["model_path"] for r, _ in mine}):
            on = [(ms(d)[0], sr.measured(r)[0]) for r, d in mine if r["model_path"] != held]
            print("%s,%s,%.4f,%d,least median |TTFT(0) + d - measured| / measured over the "
                  "%s H100 runs%s (0.5 ms grid)" % (
                      eng, held, sr.frontend_fit(on), len(on), eng,
                      " but " + held if held else ""))
    sys.exit(0)

table = sr.frontend_table()
out, skipped, wall = predict(lambda r: sr.frontend_of(table, r))
held, _, wall2 = predict(lambda r: sr.frontend_of(table, r, held_out=True))
held = {r["id"]: d for r, d in held}


def err(p, m):
    return abs(p - m) / m


def p90(v):
    v = sorted(v)
    return v[max(0, -(-9 * len(v) // 10) - 1)]


print("%-22s %-6s %-4s %-11s %4s %10s | %8s %8s %8s %6s %6s | %7s %7s %6s %6s | %5s" % (
    "model", "engine", "prec", "layout", "C", "ISL/OSL", "TTFT prd", "held-out", "measured",
    "err", "flr/m", "TPOT prd", "meas", "err", "flr/m", "band"))
groups, engines = {}, {}
for r, d in out:
    pt, pp = ms(d)
    ht, hp = ms(held[r["id"]])
    mt, mp = sr.measured(r)
    # the same simulation on the floors (serve's own means): the floor's error under this load
    flt, flp = d["ttft_s"]["mean"] * 1e3, d["tpot_s"]["mean"] * 1e3
    print("%-22s %-6s %-4s %-11s %4s %10s | %8.1f %8.1f %8.1f %5.0f%% %6.3f | %7.2f %7.2f %5.0f%% "
          "%6.3f | %4.0f%%" % (
              r["model_path"].split("/")[1][:22], r["backend"], r["precision"] or "bf16",
              sr.layout_label(r), r["batch_size"], r["isl"] + "/" + r["osl"], pt, ht, mt,
              100 * err(pt, mt), flt / mt, pp, mp, 100 * err(pp, mp), flp / mp,
              100 * d["predicted"]["band"]))
    e = (err(pt, mt), err(pp, mp), err(ht, mt), err(hp, mp), err(flt, mt), err(flp, mp))
    key = (r["model_path"].split("/")[1][:22], r["backend"], r["precision"] or "bf16",
           int(r["batch_size"]))
    for g, k in ((groups, key), (engines, r["backend"]), (engines, "all")):
        lists = g.setdefault(k, tuple([] for _ in e))
        for lst, v in zip(lists, e):
            lst.append(v)

print()
print("errors by model, engine, precision and concurrency (|pred - measured| / measured; "
      "held-out: the front-end latency fitted without the model; floor: |floor - measured| / "
      "measured)")
print("%-22s %-6s %-4s %5s %4s | %8s %8s %8s %8s | %8s %8s %8s" % (
    "model", "engine", "prec", "C", "runs", "TTFT med", "p90", "held-out", "floor", "TPOT med",
    "p90", "floor"))
for key in sorted(groups):
    t, p, ht, hp, f1, f2 = groups[key]
    print("%-22s %-6s %-4s %5d %4d | %7.0f%% %7.0f%% %7.0f%% %7.0f%% | %7.0f%% %7.0f%% %7.0f%%" % (
        key + (len(t), 100 * statistics.median(t), 100 * p90(t), 100 * statistics.median(ht),
               100 * statistics.median(f1), 100 * statistics.median(p), 100 * p90(p),
               100 * statistics.median(f2))))
print()
print("by engine: median (p90) error, in-sample and held-out (leave-one-model-out front end)")
print("%-7s %4s | %15s %15s | %15s %15s" % ("engine", "runs", "TTFT in-sample", "held-out",
                                            "TPOT in-sample", "held-out"))
for eng in sorted(engines, key=lambda k: (k == "all", k)):
    t, p, ht, hp = engines[eng][:4]
    print("%-7s %4d | %6.1f%% (%5.1f%%) %6.1f%% (%5.1f%%) | %6.1f%% (%5.1f%%) %6.1f%% (%5.1f%%)" % (
        eng, len(t), 100 * statistics.median(t), 100 * p90(t), 100 * statistics.median(ht),
        100 * p90(ht), 100 * statistics.median(p), 100 * p90(p), 100 * statistics.median(hp),
        100 * p90(hp)))
print("front-end latency (ms; in-sample, and held-out by model): " + "; ".join(
    "%s %g" % (k[0] + (" w/o " + k[1].split("/")[1] if k[1] else ""), 1e3 * v)
    for k, v in sorted(table.items())))
print()
print("%d aggregated runs, %d predicted (%.0f s wall, 2 at a time, twice), %d not modelled:" % (
    len(rows), len(out), wall + wall2, sum(skipped.values())))
for why, n in sorted(skipped.items(), key=lambda x: -x[1]):
    print("  %4d  %s" % (n, why))
if out:
    t, p, ht, hp, ft, fp = engines["all"]
    print("median error: TTFT %.1f%% in-sample, %.1f%% held-out (target 25%%; p90 %.1f%%, "
          "%.1f%%; the floor's %.1f%%), TPOT %.1f%% in-sample, %.1f%% held-out (target 15%%; "
          "p90 %.1f%%, %.1f%%; the floor's %.1f%%)" % (
              100 * statistics.median(t), 100 * statistics.median(ht), 100 * p90(t),
              100 * p90(ht), 100 * statistics.median(ft), 100 * statistics.median(p),
              100 * statistics.median(hp), 100 * p90(p), 100 * p90(hp),
              100 * statistics.median(fp)))
PY
