#!/usr/bin/env bash
# bench/gpu-check.sh - the CUDA backend on a machine with an NVIDIA GPU, in
# one go (README, "The CUDA backend"):
#   1. build roofline and test_cuda with the CUDA backend (Release);
#   2. correctness: test_cuda (host part, the no-device CLI path, and the
#      device part: every GEMM dtype and the gemv kernel against a CPU
#      reference, bandwidth kernels checked, a quick measure);
#   3. roofline measure --device cuda -o profile.json (the full profile);
#   4. roofline bench gemm MODEL --device cuda --hw profile.json, as a table
#      and as JSON, and Figure 1 with that sweep drawn over it
#      (figure1-measured.svg);
#   4b. roofline measure --mpi on one rank: the node and its GPU (the CUDA
#      path of a cluster measurement);
#   4c. the calibration: measure --device cuda --calibrate --quick -o
#      cal.json, step MODEL --hw cal.json --predict, bench gemm MODEL --hw
#      cal.json over M = 1 .. 2048, and step --predict --json at each of those
#      M, whose GEMM predictions the last table sets against bench gemm's
#      measured times (median and worst |predicted - measured| / measured);
#   5. a short table last: the issue's targets against what was measured.
# Logs go to one folder (default gpu-check-<UTC time>). About 3-4 minutes on
# an H200 (not yet run with step 4c), most of it the build; every step has a
# time limit.
#
# usage: bench/gpu-check.sh [LOG_DIR]
#   env: BUILD (build-gpu), MODEL (qwen2.5-7b-instruct), DEVICE (cuda:0),
#        RF_CUDA_ARCHS (80;89;90), JOBS (nproc), CAL_TOKENS (the calibrated
#        bench's M list, 1,16,64,256,1024,2048)
# exit: 0 when every step ran and every target was met, 1 otherwise.
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${1:-gpu-check-$(date -u +%Y%m%dT%H%M%SZ)}
BUILD=${BUILD:-build-gpu}
MODEL=${MODEL:-qwen2.5-7b-instruct}
DEVICE=${DEVICE:-cuda:0}
ARCHS=${RF_CUDA_ARCHS:-80;89;90}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
CAL_TOKENS=${CAL_TOKENS:-1,16,64,256,1024,2048}
mkdir -p "$OUT" || exit 1
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
failed=0
T0=$(date +%s)

say() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }
elapsed() { echo $(($(date +%s) - T0))s; }

# step NAME LIMIT_S LOG COMMAND...: run with a time limit, log stdout+stderr.
step() {
    local name=$1 limit=$2 log=$3
    shift 3
    printf '== %-40s ' "$name" | tee -a "$SUMMARY"
    timeout "$limit" "$@" >"$log" 2>&1
    local rc=$?
    case $rc in
    0) say "ok ($(elapsed))" ;;
    77) say "skipped: $(tail -n 1 "$log")" ;;
    124) say "TIMED OUT after ${limit}s (log: $log)"; failed=1 ;;
    *) say "FAILED, exit $rc (log: $log)"; tail -n 5 "$log" | sed 's/^/   | /' | tee -a "$SUMMARY"; failed=1 ;;
    esac
    return $rc
}

say "gpu-check: $(date -u +%Y-%m-%dT%H:%M:%SZ), logs in $OUT"
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
    say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>/dev/null | head -n 1)"
fi
command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] ||
    say "warning: no nvcc on the PATH or at /usr/local/cuda/bin: the build will lack the backend"

# 1. Build. The configure line must say the backend is ON.
step "configure (CUDA archs $ARCHS)" 120 "$OUT/configure.log" \
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release "-DRF_CUDA_ARCHS=$ARCHS" || exit 1
if ! grep -q "CUDA backend ON" "$OUT/configure.log"; then
    say "the CUDA backend is OFF: $(grep 'CUDA backend' "$OUT/configure.log")"
    exit 1
fi
step "build roofline" 300 "$OUT/build.log" cmake --build "$BUILD" -j "$JOBS" --target roofline ||
    exit 1
RF=$BUILD/cli/roofline
TC=$BUILD/tests/test_cuda
have_tests=0
step "build test_cuda" 120 "$OUT/build-tests.log" cmake --build "$BUILD" -j "$JOBS" --target test_cuda &&
    have_tests=1

# 2. Correctness before any figure is trusted.
if [ $have_tests = 1 ]; then
    step "test_cuda (host)" 60 "$OUT/test_cuda_host.log" "$TC"
    step "test_cuda cli (no-device path)" 60 "$OUT/test_cuda_cli.log" "$TC" cli "$RF"
    step "test_cuda device (vs CPU reference)" 180 "$OUT/test_cuda_device.log" "$TC" device
    if [ $? = 77 ]; then
        say "no usable CUDA device: nothing to measure"
        exit 3
    fi
else
    say "test_cuda not built (cmocka missing?): the measure step still checks every GEMM"
fi

# 3. The profile.
step "measure --device $DEVICE" 240 "$OUT/measure.txt" \
    "$RF" measure --device "$DEVICE" -o "$OUT/profile.json"
measured=$?
[ $measured = 0 ] && cat "$OUT/measure.txt"

# 4. The sweep, against the measured profile when there is one.
HW=()
[ -s "$OUT/profile.json" ] && HW=(--hw "$OUT/profile.json")
step "bench gemm $MODEL (table)" 300 "$OUT/bench.txt" \
    "$RF" bench gemm "$MODEL" --device "$DEVICE" "${HW[@]}"
step "bench gemm $MODEL (json)" 300 "$OUT/bench.log" \
    "$RF" bench gemm "$MODEL" --device "$DEVICE" "${HW[@]}" --json -o "$OUT/bench.json"

# Figure 1 with the measured roofs and the sweep drawn over the prediction.
if [ -s "$OUT/bench.json" ] && [ -s "$OUT/profile.json" ]; then
    step "plot with the measured overlay" 60 "$OUT/plot.log" \
        "$RF" plot "$MODEL" --hw "$OUT/profile.json" --measured "$OUT/bench.json" \
        -o "$OUT/figure1-measured.svg"
fi

# 4b. measure --mpi on one rank (outside mpirun, a singleton): the CPU lab
# for the node and this rank's GPU through the CUDA path; the profile's roof
# must be the GPU's and its node must count one device. Skipped (77) when
# the build has no MPI (measure --mpi exits 3: Debian's libopenmpi-dev).
mpi_one_rank() {
    "$RF" measure --mpi --quick -o "$OUT/cluster.json"
    local rc=$?
    [ $rc = 3 ] && { echo "skipped: this build has no MPI (libopenmpi-dev)"; return 77; }
    [ $rc = 0 ] || return $rc
    python3 - "$OUT/cluster.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
c = p["cluster"]
print(f"device {p['device']!r}, nodes {c['nodes']}")
sys.exit(0 if p["device"] and c["ranks"] == 1 and c["nodes"][0]["devices"] == 1 else 1)
EOF
}
export -f mpi_one_rank # timeout runs programs: the function through bash
export RF OUT
step "measure --mpi (1 rank, CUDA path)" 240 "$OUT/measure-mpi.txt" bash -c mpi_one_rank

# 4c. The calibration on the GPU, its predictions, and the GEMMs measured
# against them (the last table's "calibrated GEMMs" row).
step "measure --device $DEVICE --calibrate --quick" 240 "$OUT/calibrate.txt" \
    "$RF" measure --device "$DEVICE" --calibrate --quick -o "$OUT/cal.json"
if [ -s "$OUT/cal.json" ]; then
    step "step $MODEL --hw cal.json --predict" 60 "$OUT/step-predict.txt" \
        "$RF" step "$MODEL" --hw "$OUT/cal.json" --predict
    step "bench gemm $MODEL --hw cal.json (json)" 300 "$OUT/bench-cal.log" \
        "$RF" bench gemm "$MODEL" --device "$DEVICE" --hw "$OUT/cal.json" \
        --tokens "$CAL_TOKENS" --json -o "$OUT/bench-cal.json"
    predict_at_each_m() {
        local m
        for m in ${CAL_TOKENS//,/ }; do
            "$RF" step "$MODEL" --hw "$OUT/cal.json" --predict --batch "$m" --json \
                -o "$OUT/predict-B$m.json" || return 1
        done
    }
    export -f predict_at_each_m # through bash, as timeout runs programs
    export MODEL CAL_TOKENS
    step "step $MODEL --predict at M = $CAL_TOKENS" 60 "$OUT/predict.log" \
        bash -c predict_at_each_m
fi

# 5. Targets against the measurement, last.
summarize() {
    python3 - "$OUT/profile.json" "$OUT/bench.json" "$OUT" <<'EOF'
import glob, json, os, sys

def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

prof, bench = load(sys.argv[1]), load(sys.argv[2])
rows, ok = [], True

def target(what, want, got, passed):
    global ok
    ok = ok and passed is not False
    verdict = "n/a" if passed is None else "PASS" if passed else "FAIL"
    rows.append((what, want, got, verdict))

# The targets for an H200 (its datasheet: 4.8 TB/s HBM3e, 989.4 TFLOP/s
# dense bf16): a copy at >= 4.0 TB/s is 83% of the datasheet bandwidth; a
# cuBLASLt bf16 peak >= 700 TFLOP/s is 71% of the dense peak; a bf16 GEMV at
# M = 1 streams W at 2 FLOPs a 2-byte weight, 1 FLOP/byte, so its memory roof
# is bw x 1.0, and >= 70% of it is asked. K = 3584, N = 18944 is Qwen2.5-7B's
# gate/up projection, so the bench must run that model.
bw = None
if prof:
    kern = {(k["name"], k["level"]): k for k in prof.get("kernels", [])}
    mem = prof["levels"][-1]["name"] if prof.get("levels") else "HBM"
    copy = kern.get(("copy_v16", mem))
    bw = prof.get("bandwidth_bytes_per_s")
    got = copy["best"] / 1e12 if copy else None
    target(f"copy_v16 read+write ({mem})", ">= 4.0 TB/s",
           f"{got:.2f} TB/s" if got else "-", None if got is None else got >= 4.0)
    target("memory roof: read_v16 best", "-", f"{bw / 1e12:.2f} TB/s" if bw else "-", None)
    peaks = prof.get("peak_flops_per_s", {})
    for dt in ("bf16", "fp16", "fp8_e4m3", "tf32", "fp32"):
        p = peaks.get(dt)
        if not p:
            if dt == "bf16":
                target("bf16 cuBLASLt GEMM peak", ">= 700 TFLOP/s", "not measured", False)
            continue
        want = ">= 700 TFLOP/s" if dt == "bf16" else "-"
        target(f"{dt} cuBLASLt GEMM peak", want, f"{p / 1e12:.0f} TFLOP/s (ridge {p / bw:.0f})",
               (p >= 700e12) if dt == "bf16" else None)
else:
    target("profile.json", "written", "missing", False)

sweep = bench.get("gemm", []) if bench else []
if bench is None:
    target("bench.json", "written", "missing", False)
gemv = [r for r in sweep if r["m"] == 1 and r["k"] == 3584 and r["n"] == 18944
        and r["dtype"] == "bf16"]
if gemv and bw:
    best = max(gemv, key=lambda r: r["flops_per_s"])
    frac = best["flops_per_s"] / (bw * 1.0)
    target("M=1 bf16 K=3584 N=18944", ">= 70% of bw x 1 FLOP/B",
           f"{frac * 100:.0f}% ({best['routine']}, {best['bw_bytes_per_s'] / 1e12:.2f} TB/s)",
           frac >= 0.70)
    for r in gemv:
        rows.append((f"  {r['routine']}", "", f"{r['bw_bytes_per_s'] / 1e12:.2f} TB/s, "
                     f"{r['flops_per_s'] / (bw * 1.0) * 100:.0f}%", ""))
elif bench is not None:
    target("M=1 bf16 K=3584 N=18944", ">= 70% of bw x 1 FLOP/B", "not in the sweep", False)

# The calibration's GEMM predictions (step --predict at each M: predicted_s
# is count x one call) against bench gemm's bf16 cuBLASLt times; shapes
# the calibration flags outside its range are counted, not scored.
cal_bench = load(os.path.join(sys.argv[3], "bench-cal.json"))
pred = {}
for path in glob.glob(os.path.join(sys.argv[3], "predict-B*.json")):
    for op in (load(path) or {}).get("ops", []):
        if op.get("predicted_s") and op.get("count"):
            pred[(op["m"], op["k"], op["n"])] = (op["predicted_s"] / op["count"],
                                                 op.get("predicted_in_range") == "yes")
if cal_bench is not None:
    errs, outside, missing = [], 0, 0
    for r in cal_bench.get("gemm", []):
        if r["dtype"] != "bf16" or r["routine"] != "cublasLt" or not r.get("time_s"):
            continue
        p = pred.get((r["m"], r["k"], r["n"]))
        if p is None:
            missing += 1
        elif not p[1]:
            outside += 1
        else:
            errs.append(abs(p[0] - r["time_s"]) / r["time_s"])
    errs.sort()
    if errs:
        n = len(errs)
        med = errs[n // 2] if n % 2 else (errs[n // 2 - 1] + errs[n // 2]) / 2
        target("calibrated GEMMs: |pred - bench| / bench", "median <= 10%",
               f"median {med * 100:.1f}%, worst {errs[-1] * 100:.1f}% ({n} shapes, "
               f"{outside} outside, {missing} unmatched)", med <= 0.10)
    else:
        target("calibrated GEMMs: |pred - bench| / bench", "median <= 10%",
               f"no shape to compare ({outside} outside, {missing} unmatched)", False)
elif os.path.exists(os.path.join(sys.argv[3], "cal.json")):
    target("bench-cal.json", "written", "missing", False)
else:
    target("cal.json (measure --calibrate)", "written", "missing", False)

w = max(len(r[0]) for r in rows) if rows else 10
print(f"\n{'figure':<{w}}  {'target':<26} {'measured':<34} verdict")
for what, want, got, verdict in rows:
    print(f"{what:<{w}}  {want:<26} {got:<34} {verdict}")

q = [r for r in sweep if r["k"] == 3584 and r["n"] == 3584 and r["dtype"] == "bf16"
     and r["routine"] == "cublasLt"]
if q and prof and prof.get("peak_flops_per_s", {}).get("bf16"):
    peak = prof["peak_flops_per_s"]["bf16"]
    print("\nq_proj/o_proj bf16 (K = N = 3584): achieved over M, against the bf16 peak "
          f"{peak / 1e12:.0f} TFLOP/s")
    print(f"{'M':>6} {'TFLOP/s':>9} {'of peak':>8} {'of roof':>8}  regime")
    for r in sorted(q, key=lambda r: r["m"]):
        print(f"{r['m']:>6} {r['flops_per_s'] / 1e12:>9.1f} {r['flops_per_s'] / peak * 100:>7.0f}%"
              f" {r['of_roof'] * 100:>7.0f}%  {r['regime']}")
sys.exit(0 if ok else 1)
EOF
}
if command -v python3 >/dev/null 2>&1; then
    summarize | tee -a "$SUMMARY"
    [ "${PIPESTATUS[0]}" = 0 ] || failed=1
else
    say "no python3: the figures are in $OUT/measure.txt and $OUT/bench.txt"
    cat "$OUT/bench.txt"
fi
say "gpu-check: $( [ $failed = 0 ] && echo "all steps ran, all targets met" || echo "SOMETHING FAILED (see above)"), $(elapsed), logs in $OUT"
exit $failed
