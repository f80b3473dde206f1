#!/bin/bash
# llama.cpp, a real engine no one here wrote, predicted (issue 28, item 4).
# bench/llamacpp/predict.mjs says what is timed and how: the machine
# measured, roofline calibrated on llama.cpp's own steps of three
# calibration shapes (f32, f16, q8_0, q4_0), then Llama-3.2-1B,
# Llama-3.2-3B and Qwen2.5-0.5B timed and predicted. This prints, a row a
# step: measured, floor, predicted, their errors and the load average
# before the run; then the median |error| by phase, and exits 1 if a floor
# is above a measurement.
#
# llama.cpp comes from the npm package node-llama-cpp (its prebuilt CPU
# binaries, never a build from source), installed into bench/llamacpp/
# node_modules (git-ignored) on the first run. About 15 minutes on 2 cores;
# run it on a quiet machine (the load is printed, and llama.cpp's threads
# spin: a busy core slows a step many times over).
# usage: bench/predict-llamacpp.sh [BUILD_DIR] [OUT_DIR] [--quick|--smoke|--reuse]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-bench-llamacpp-$(date -u +%Y%m%dT%H%M%SZ)}
mode=${3:-}
for b in roofline roofline-lab; do
    [ -x "$build/cli/$b" ] || { echo "predict-llamacpp: $build/cli/$b not built" >&2; exit 2; }
done
if [ ! -d bench/llamacpp/node_modules/node-llama-cpp ]; then
    echo "predict-llamacpp: installing node-llama-cpp (bench/llamacpp/package.json)" >&2
    (cd bench/llamacpp && npm install --no-audit --no-fund --ignore-scripts >&2)
fi
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
node bench/llamacpp/predict.mjs "$build/cli/roofline" "$build/cli/roofline-lab" "$out" $mode \
    > "$out.rows.json"
python3 - "$out.rows.json" "$out" <<'PY'
import json, statistics, sys
rows = json.loads(open(sys.argv[1]).read())
cal = json.load(open(sys.argv[2] + "/llamacpp.json"))["engine_calibration"]
print(f"calibration: {sys.argv[2]}/llamacpp.json, {len(cal['steps'])} steps of "
      f"{', '.join(cal['models'])}; roofs {cal['roofs']['bandwidth_bytes_per_s']/1e9:.1f} GB/s")
print(f"{'model':<26} {'dtype':<5} {'step':<14} {'measured':>10} {'floor':>10} "
      f"{'fl/meas':>7} {'predicted':>10} {'error':>7}  load before")
errs = {"prefill": [], "decode": []}
above = 0
for r in rows:
    step = (f"prefill {r['tokens']}" if r["phase"] == "prefill"
            else f"decode @{r['context']}")
    err = r["predicted_s"] / r["measured_s"] - 1
    errs[r["phase"]].append(abs(err))
    ratio = r["floor_s"] / r["measured_s"]
    above += ratio > 1
    print(f"{r['model']:<26} {r['dtype']:<5} {step:<14} {r['measured_s']*1e3:>8.2f}ms "
          f"{r['floor_s']*1e3:>8.2f}ms {ratio:>7.3f} {r['predicted_s']*1e3:>8.2f}ms "
          f"{100*err:>+6.1f}%  {r['load']}")
for ph, v in errs.items():
    if v:
        print(f"{ph}: median |error| {100*statistics.median(v):.1f}% over {len(v)} steps, "
              f"worst {100*max(v):.1f}%")
print(f"floors above a measurement: {above} of {len(rows)}")
sys.exit(1 if above else 0)
PY
