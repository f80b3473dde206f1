#!/usr/bin/env bash
# bench/predict.sh - the calibrated prediction against real runs on this
# machine: `roofline measure --calibrate` once, then `roofline profile`
# (2 real layers and the head, fp32) of three models at three cases each:
#   decode B = 1 at context 1024, decode B = 8 at context 1024,
#   prefill B = 1, T = 128 (no context);
# for each case the measured step, the prediction and the floor (as
# `roofline step`), and |x - measured| / measured for both; then the median
# and the worst of each. The models: Llama-3.2-1B (bench/data, its
# config.json), qwen2.5-3b-instruct and llama-3-8b (presets); 2 layers of
# the 8B are 1.7 GiB of fp32 weights and its head 2.1 GiB.
# Targets (issue): the prediction's median at most 10%, worst at most 20%.
# About 2 minutes on the 2-core development VM when it is quiet (the
# calibration 60 s of it); several times that under load.
#
# usage: bench/predict.sh [ROOFLINE] [CALIBRATED.json] [OUT_DIR]
#   ROOFLINE defaults to build/cli/roofline; with CALIBRATED.json given the
#   calibration is reused, not measured again.
# exit: 0 when both targets are met, 1 otherwise, 2 when a run failed.
set -u
cd "$(dirname "$0")/.." || exit 2
ROOFLINE=${1:-build/cli/roofline}
CAL=${2:-}
OUT=${3:-$(mktemp -d)}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
mkdir -p "$OUT" || exit 2
echo "started $(date -u '+%Y-%m-%d %H:%M:%S') UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -z "$CAL" ]; then
    CAL=$OUT/calibrated.json
    start=$(date +%s)
    "$ROOFLINE" measure --calibrate -o "$CAL" >"$OUT/calibrate.txt" || exit 2
    echo "calibration: $CAL ($(($(date +%s) - start)) s; its fit in $OUT/calibrate.txt)"
    # which roofs its points are set against, and the rounds' spreads that chose them
    grep -o "the GEMM rounds' median spread.*" "$OUT/calibrate.txt"
fi
MODELS="bench/data/llama-3.2-1b.json qwen2.5-3b-instruct llama-3-8b"
CASES=("decode-B1:--phase decode --batch 1 --context 1024"
       "decode-B8:--phase decode --batch 8 --context 1024"
       "prefill-T128:--phase prefill --batch 1 --tokens 128")
for m in $MODELS; do
    for c in "${CASES[@]}"; do
        name=${c%%:*}
        args=${c#*:}
        base=$(basename "$m" .json)
        # shellcheck disable=SC2086
        "$ROOFLINE" profile "$m" $args --hw "$CAL" --predict --json \
            >"$OUT/$base-$name.json" 2>"$OUT/$base-$name.err" || {
            echo "failed: profile $m $args (see $OUT/$base-$name.err)"
            exit 2
        }
    done
done
"$PY" - "$OUT" $MODELS <<'PYEOF'
import json, os, statistics, sys
out, models = sys.argv[1], sys.argv[2:]
cases = ["decode-B1", "decode-B8", "prefill-T128"]
rows, pe, fe = [], [], []
for m in models:
    base = os.path.basename(m).removesuffix(".json")
    for c in cases:
        st = json.load(open(os.path.join(out, f"{base}-{c}.json")))["step"]
        meas, pred, floor = st["measured_s"], st["predicted_s"], st["floor_s"]
        p, f = abs(pred - meas) / meas, abs(floor - meas) / meas
        pe.append(p), fe.append(f)
        rows.append((base, c, meas, pred, floor, p, f, st["predicted_outside"]))
print(f"{'model':<22} {'case':<13} {'measured':>10} {'predicted':>10} {'floor':>10}"
      f" {'pred err':>9} {'floor err':>9} {'outside':>8}")
for r in rows:
    print(f"{r[0]:<22} {r[1]:<13} {r[2]*1e3:>8.1f}ms {r[3]*1e3:>8.1f}ms {r[4]*1e3:>8.1f}ms"
          f" {100*r[5]:>8.1f}% {100*r[6]:>8.1f}% {r[7]:>8d}")
mp, wp = statistics.median(pe), max(pe)
mf, wf = statistics.median(fe), max(fe)
print(f"{'median':<36} {'':>32} {100*mp:>8.1f}% {100*mf:>8.1f}%")
print(f"{'worst':<36} {'':>32} {100*wp:>8.1f}% {100*wf:>8.1f}%")
ok = mp <= 0.10 and wp <= 0.20
print("targets (median <= 10%, worst <= 20%):", "met" if ok else "NOT met")
print("below the floor's error:", "yes" if mp < mf and wp < wf else "NO")
sys.exit(0 if ok else 1)
PYEOF
