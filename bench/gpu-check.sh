#!/usr/bin/env bash
# bench/gpu-check.sh - the CUDA backend on a machine with an NVIDIA GPU, in
# one go (README, "The CUDA backend"; docs/gpu-predict.md, "A GPU's own
# tables"), sized for about 8 minutes on an H100 or H200:
#   1. build roofline, roofline-lab and the CUDA tests (Release, the GPU's
#      own architecture from nvidia-smi's compute_cap; RF_CUDA_ARCHS sets it);
#   2. correctness: test_cuda (host part, the no-device CLI path, and the
#      device part: every GEMM dtype and the gemv kernel against a CPU
#      reference, bandwidth kernels checked, a quick measure), test_cuda_calib
#      and test_gpu_cal (the tables' writer and comparison, host only);
#   3. roofline measure --device cuda --calibrate --quick -o CAL: the profile
#      (CAL/profile.json), its calibration, and the calibration as kernel
#      tables (CAL/gemm_perf.csv in bf16, fp16, fp32 and fp8,
#      generation_attention_perf.csv, context_attention_perf.csv,
#      mem_copy_perf.csv);
#   4. the comparison: measure --compare-calibration CAL data/gpu/<gpu>/<engine>
#      for vllm, trtllm and sglang, <gpu> the device's own tables (h100_sxm or
#      h200_sxm; the H200's are not committed, so an H200 is set against the
#      H100's tables, and the summary says so), floors on the device's
#      preset; the groups (table and dtype: rows, provenance, A/B median, min,
#      max) printed, every row in compare-<engine>.txt;
#   5. --calibration CAL read back: step MODEL --hw h100-sxm|h200
#      --calibration CAL --predict (the measured tables' own predictions);
#   6. bench gemm MODEL --device cuda --hw CAL/profile.json over M = TOKENS
#      (JSON), step MODEL --hw CAL/profile.json --predict --batch M at each M
#      of CAL_TOKENS, Figure 1 with the sweep drawn over it, and measure --mpi
#      on one rank (the CUDA path of a cluster measurement);
#   7. a short table last: the issue's targets against what was measured.
# Logs go to one folder (default gpu-check-<UTC time>); every step has a time
# limit.
#
# With CAL=DIR (an earlier calibration folder, or the synthetic
# tests/data/gpu/measured/cuda) step 3 is skipped and steps 4-5 run on it; on
# a machine without a GPU that is the dry run of everything but the device:
#   CAL=tests/data/gpu/measured/cuda bench/gpu-check.sh
#
# usage: bench/gpu-check.sh [LOG_DIR]
#   env: BUILD (build-gpu), MODEL (qwen2.5-7b-instruct), DEVICE (cuda:0),
#        RF_CUDA_ARCHS (the device's, else 80;89;90), JOBS (nproc), TOKENS
#        (bench gemm's M list, 1,16,64,256,1024,2048,4096), CAL_TOKENS (the M
#        predicted and scored, 1,16,64,256,1024,2048), CAL (see above), GPU
#        (h100_sxm or h200_sxm: overrides the device name's)
# exit: 0 when every step ran and every target was met, 1 otherwise, 3 when
# there is no device (after the host checks and, with CAL, the comparison).
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${1:-gpu-check-$(date -u +%Y%m%dT%H%M%SZ)}
BUILD=${BUILD:-build-gpu}
MODEL=${MODEL:-qwen2.5-7b-instruct}
DEVICE=${DEVICE:-cuda:0}
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
TOKENS=${TOKENS:-1,16,64,256,1024,2048,4096}
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
    printf '== %-48s ' "$name" | tee -a "$SUMMARY"
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
gpu_name=""
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
    gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
    say "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,compute_cap --format=csv,noheader 2>/dev/null | head -n 1)"
    cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d ' .')
    [ -n "${RF_CUDA_ARCHS:-}" ] || case $cap in [0-9][0-9] | [0-9][0-9][0-9]) RF_CUDA_ARCHS=$cap ;; esac
fi
ARCHS=${RF_CUDA_ARCHS:-80;89;90}
command -v nvcc >/dev/null 2>&1 || [ -x /usr/local/cuda/bin/nvcc ] ||
    say "warning: no nvcc on the PATH or at /usr/local/cuda/bin: the build will lack the backend"
# The published tables of this GPU and its preset (the floors' roof).
case ${GPU:-$gpu_name} in
*H200* | *h200*) GPU=h200_sxm HW=h200 ;;
*B200* | *b200*) GPU=b200_sxm HW=b200 ;;
*B300* | *b300*) GPU=b300_sxm HW=b300 ;;
*) GPU=h100_sxm HW=h100-sxm ;;
esac
TABLES=data/gpu/$GPU
if [ ! -d "$TABLES" ]; then
    say "note: no committed tables for $GPU (data/gpu/README.md): compared with data/gpu/h100_sxm, the H100's, on the $HW roof"
    TABLES=data/gpu/h100_sxm
fi

# 1. Build. The configure line must say the backend is ON; without cmocka the
# tests are left out (BUILD_TESTING=OFF) and the rest still runs.
if ! step "configure (CUDA archs $ARCHS)" 120 "$OUT/configure.log" \
    cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DRF_WASM=OFF -DBUILD_TESTING=ON \
    "-DRF_CUDA_ARCHS=$ARCHS"; then
    step "configure without the tests" 120 "$OUT/configure.log" \
        cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DRF_WASM=OFF -DBUILD_TESTING=OFF \
        "-DRF_CUDA_ARCHS=$ARCHS" || exit 1
    failed=0 # the first configure's failure is not the check's
fi
if ! grep -q "CUDA backend ON" "$OUT/configure.log"; then
    say "the CUDA backend is OFF: $(grep 'CUDA backend' "$OUT/configure.log")"
    exit 1
fi
step "build roofline, roofline-lab" 300 "$OUT/build.log" \
    cmake --build "$BUILD" -j "$JOBS" --target roofline roofline-lab || exit 1
RF=$BUILD/cli/roofline
have_tests=0
grep -q "BUILD_TESTING:BOOL=ON" "$BUILD/CMakeCache.txt" &&
    step "build test_cuda, test_cuda_calib, test_gpu_cal" 180 "$OUT/build-tests.log" \
        cmake --build "$BUILD" -j "$JOBS" --target test_cuda test_cuda_calib test_gpu_cal &&
    have_tests=1

# 2. Correctness before any figure is trusted.
device=1
if [ $have_tests = 1 ]; then
    TC=$BUILD/tests/test_cuda
    step "test_cuda (host)" 60 "$OUT/test_cuda_host.log" "$TC"
    step "test_cuda cli (no-device path)" 60 "$OUT/test_cuda_cli.log" "$TC" cli "$RF"
    step "test_cuda_calib (host)" 60 "$OUT/test_cuda_calib.log" "$BUILD/tests/test_cuda_calib"
    step "test_gpu_cal (tables written, compared)" 60 "$OUT/test_gpu_cal.log" \
        "$BUILD/tests/test_gpu_cal"
    step "test_cuda device (vs CPU reference)" 180 "$OUT/test_cuda_device.log" "$TC" device
    [ $? = 77 ] && device=0
else
    say "the tests were not built (cmocka missing?): the measure step still checks every GEMM"
    "$RF" measure --device "$DEVICE" --quick -o /dev/null >/dev/null 2>&1
    [ $? = 3 ] && device=0
fi
[ $device = 1 ] || say "no usable CUDA device: nothing to measure"

# 3. The profile, its calibration and the calibration's kernel tables.
if [ -n "${CAL:-}" ]; then
    say "CAL=$CAL: the calibration folder given, not measured"
elif [ $device = 1 ]; then
    CAL=$OUT/cal
    step "measure --device $DEVICE --calibrate --quick -o cal" 300 "$OUT/calibrate.txt" \
        "$RF" measure --device "$DEVICE" --calibrate --quick -o "$CAL" &&
        cat "$OUT/calibrate.txt"
fi

# 4. The GPU's own tables against the published ones, row by row.
if [ -n "${CAL:-}" ] && [ -s "$CAL/gemm_perf.csv" ]; then
    for eng in vllm trtllm sglang; do
        [ -d "$TABLES/$eng" ] || continue
        step "compare cal with $TABLES/$eng" 60 "$OUT/compare-$eng.txt" \
            "$RF" measure --compare-calibration "$CAL" "$TABLES/$eng" --hw "$HW" &&
            "$RF" measure --compare-calibration "$CAL" "$TABLES/$eng" --hw "$HW" --json \
                -o "$OUT/compare-$eng.json"
    done
    for eng in vllm trtllm sglang; do
        [ -s "$OUT/compare-$eng.txt" ] || continue
        say ""
        say "measured ($CAL) against $TABLES/$eng, floors on $HW (every row: $OUT/compare-$eng.txt):"
        sed -n '/^by table and dtype/,/^$/p' "$OUT/compare-$eng.txt" | tee -a "$SUMMARY"
    done
    # 5. The measured tables read back by --calibration: the GPU's own predictions.
    step "step $MODEL --calibration cal --predict" 60 "$OUT/step-tables.txt" \
        "$RF" step "$MODEL" --hw "$HW" --calibration "$CAL" --predict
elif [ -n "${CAL:-}" ]; then
    say "no kernel tables in $CAL (measure --calibrate -o failed?)"
    failed=1
fi
if [ $device = 0 ]; then
    say "gpu-check: no device; the host checks $([ $failed = 0 ] && echo passed || echo FAILED), $(elapsed), logs in $OUT"
    exit 3
fi

# 6. The sweep on the measured roof, the calibration's GEMM predictions at
# each M, Figure 1 with the sweep drawn over it, and the CUDA path of a
# cluster measurement.
PROFILE=$CAL/profile.json
HWP=()
[ -s "$PROFILE" ] && HWP=(--hw "$PROFILE")
step "bench gemm $MODEL (json)" 300 "$OUT/bench.log" \
    "$RF" bench gemm "$MODEL" --device "$DEVICE" "${HWP[@]}" --tokens "$TOKENS" --json \
    -o "$OUT/bench.json"
if [ -s "$PROFILE" ]; then
    step "step $MODEL --hw profile.json --predict" 60 "$OUT/step-predict.txt" \
        "$RF" step "$MODEL" --hw "$PROFILE" --predict
    predict_at_each_m() {
        local m
        for m in ${CAL_TOKENS//,/ }; do
            "$RF" step "$MODEL" --hw "$PROFILE" --predict --batch "$m" --json \
                -o "$OUT/predict-B$m.json" || return 1
        done
    }
    export -f predict_at_each_m # through bash, as timeout runs programs
    export RF MODEL CAL_TOKENS PROFILE OUT
    step "step $MODEL --predict at M = $CAL_TOKENS" 60 "$OUT/predict.log" \
        bash -c predict_at_each_m
    [ -s "$OUT/bench.json" ] &&
        step "plot with the measured overlay" 60 "$OUT/plot.log" \
            "$RF" plot "$MODEL" --hw "$PROFILE" --measured "$OUT/bench.json" \
            -o "$OUT/figure1-measured.svg"
fi

# measure --mpi on one rank (outside mpirun, a singleton): the CPU lab for
# the node and this rank's GPU through the CUDA path; the profile's roof must
# be the GPU's and its node must count one device. Skipped (77) when the
# build has no MPI (measure --mpi exits 3: Debian's libopenmpi-dev).
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
export -f mpi_one_rank
export RF OUT
step "measure --mpi (1 rank, CUDA path)" 240 "$OUT/measure-mpi.txt" bash -c mpi_one_rank

# 7. Targets against the measurement, last.
summarize() {
    python3 - "$PROFILE" "$OUT/bench.json" "$OUT" <<'EOF'
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

# The targets from the datasheets (H200: 4.8 TB/s HBM3e, H100 SXM: 3.35 TB/s
# HBM3; both 989.4 TFLOP/s dense bf16): a copy at >= 83% of the datasheet
# bandwidth (4.0 TB/s on an H200, 2.78 on an H100); a
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
    want_copy = 0.83 * (4.8 if os.environ.get("HW") == "h200" else 3.35)
    target(f"copy_v16 read+write ({mem})", f">= {want_copy:.2f} TB/s",
           f"{got:.2f} TB/s" if got else "-", None if got is None else got >= want_copy)
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
cal_bench = bench
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
elif prof is not None:
    target("bench.json", "written", "missing", False)
else:
    target("profile.json (measure --calibrate -o cal)", "written", "missing", False)

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
    export HW
    summarize | tee -a "$SUMMARY"
    [ "${PIPESTATUS[0]}" = 0 ] || failed=1
else
    say "no python3: the figures are in $OUT/calibrate.txt and $OUT/bench.json"
fi
say "gpu-check: $( [ $failed = 0 ] && echo "all steps ran, all targets met" || echo "SOMETHING FAILED (see above)"), $(elapsed), logs in $OUT"
exit $failed
