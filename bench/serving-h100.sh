#!/bin/bash
# Serving under load against the measured H100 runs (issue 27's acceptance):
# every aggregated run of bench/data/serving-runs/h100_sxm.csv whose model,
# precision and layout the tool can model, simulated by `roofline serve` in
# the closed loop at the run's concurrency C and ISL/OSL on the h100-sxm
# preset, each step's time the floor of its exact batch on the layout.
#
# The floors checked are those of any schedule (docs/serving.md, "Floors
# of a measured run"): a request's TTFT is at least its prompt's prefill
# alone (ttft_floor_s), its TPOT at least a batch-1 decode step after it
# (tpot_floor_s): no schedule serves a prompt or a decode token faster than
# alone. The simulated means (the closed loop as the simulator schedules it:
# the C clients start together and stay in step) are printed beside them;
# they are one schedule's, not a floor, and no check is made on them.
# Prints a table by model, engine and concurrency, the runs not modelled and
# why, and exits 1 if a floor is above a measured TTFT or TPOT.
# The mapping of a run to a command line (model to preset, precision to
# dtypes, the KV dtype a floor assumes, layout, engine) is bench/serving_runs.py,
# shared with bench/predict-gpu.sh; prefill attention causal (the default).
# usage: bench/serving-h100.sh [ROOFLINE] [CSV]
set -eu
cd "$(dirname "$0")/.."
bin=${1:-build/cli/roofline}
csv=${2:-bench/data/serving-runs/h100_sxm.csv}
[ -x "$bin" ] || { echo "serving-h100: $bin not built" >&2; exit 2; }
exec python3 - "$bin" "$csv" <<'PY'
import statistics, sys
sys.path.insert(0, "bench")
import serving_runs as sr

bin_, path = sys.argv[1], sys.argv[2]

rows = sr.load(path)
out, skipped, wall = sr.run_all(
    rows, lambda r: sr.serve_argv(bin_, r, concurrency=sr.clients(r)))
print("%-24s %-6s %-4s %-12s %4s %10s | %8s %8s %8s %6s | %7s %7s %7s %6s" % (
    "model", "engine", "prec", "layout", "C", "ISL/OSL", "TTFT flr", "sim", "measured",
    "flr/m", "TPOT flr", "sim", "measured", "flr/m"))
above, rt, rp = [], [], []
for r, d in out:
    ft, fp = d["ttft_floor_s"] * 1e3, d["tpot_floor_s"] * 1e3
    st, sp = d["ttft_s"]["mean"] * 1e3, d["tpot_s"]["mean"] * 1e3
    mt, mp = sr.measured(r)
    sim_t = "%8.1f" % st if "sim_at" not in d else "%8s" % ("C=%d" % d["sim_at"])
    sim_p = "%7.2f" % sp if "sim_at" not in d else "%7s" % "-"
    print("%-24s %-6s %-4s %-12s %4s %10s | %8.1f %s %8.1f %6.3f | %7.2f %s %7.2f %6.3f" % (
        r["model_path"].split("/")[1][:24], r["backend"], r["precision"] or "bf16",
        sr.layout_label(r), r["batch_size"], r["isl"] + "/" + r["osl"], ft, sim_t, mt, ft / mt,
        fp, sim_p, mp, fp / mp))
    rt.append(ft / mt)
    rp.append(fp / mp)
    if ft > mt or fp > mp:
        above.append(r["id"])
print()
print("%d aggregated runs, %d simulated (%.0f s wall, 2 at a time), %d not modelled:" % (
    len(rows), len(out), wall, sum(skipped.values())))
for why, n in sorted(skipped.items(), key=lambda x: -x[1]):
    print("  %4d  %s" % (n, why))
if out:
    print("floor / measured (the floors of any schedule), median: TTFT %.3f, TPOT %.3f; "
          "max: TTFT %.3f, TPOT %.3f" % (
        statistics.median(rt), statistics.median(rp), max(rt), max(rp)))
if above:
    print("FAIL: %d runs with a floor above the measured: %s" % (len(above), ", ".join(above[:10])))
    sys.exit(1)
print("ok: no floor above a measured TTFT or TPOT")
PY
