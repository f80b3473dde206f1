#!/bin/sh
# Run every built harness for SECONDS each, from a corpus seeded with the
# checked-in inputs (fuzz/corpus/<name>/), the model configs the tests read
# (tests/data/models/*.json), the project's own profiles (calibrated and
# cluster ones for fuzz_calib and fuzz_cluster) and the bad files of
# tests/data/bad. With MIN_RUNS, each harness runs at least that many
# inputs (its corpus replay counted) whatever SECONDS says, and the run
# fails if libFuzzer executed fewer: the smoke of `make check` fuzzes, it
# does not stop at start-up. Prints one line a harness with its execution
# count; exits 1 on the first crash, hang, leak or sanitizer report,
# leaving the input under BUILD/artifacts/ and the log under BUILD/logs/.
# With JOBS (the environment; default 1), that many harnesses run at once,
# each alone in its own process (a harness is one process, one core), and
# the lines come in the order the harnesses end.
# usage: fuzz/run.sh BUILD SECONDS [MIN_RUNS [HARNESS...]]
set -eu
build=$1 seconds=$2 min_runs=${3:-0}
[ $# -ge 3 ] && shift 3 || shift $#
if [ $# -eq 0 ]; then # every harness, JOBS at a time, each by this script
  jobs=${JOBS:-1}
  printf '%s\n' parse config profile measured calib cluster engine serving |
    xargs -P "$jobs" -I NAME "$0" "$build" "$seconds" "$min_runs" NAME && exit 0
  exit 1
fi
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
models=$root/tests/data/models
mkdir -p "$build/artifacts" "$build/logs"

seed() { # seed NAME FILES...: copy the inputs that exist into the corpus
  dir=$build/corpus/$1
  shift
  mkdir -p "$dir"
  for f in "$@"; do
    [ -f "$f" ] && cp "$f" "$dir/"
  done
  return 0
}

status=0
for name in "$@"; do
  bin=$build/fuzz_$name
  [ -x "$bin" ] || { echo "fuzz_$name: not built (its reader is not in the library yet)"; continue; }
  seed "$name" "$here/corpus/$name"/*
  case $name in
    config) seed config "$models"/*.json "$root"/tests/data/bad/*.json ;;
    profile) seed profile "$root"/tests/data/profile/*.json "$root"/tests/data/*profile*.json \
                          "$root"/tests/data/bad/*profile*.json ;;
    measured) seed measured "$root"/tests/data/bad/measured-*.json ;;
    calib) seed calib "$root"/tests/data/profile/calibrated.json \
                      "$root"/tests/data/bad/profile-calibration-*.json ;;
    engine) seed engine "$root"/tests/data/engine/*.json ;;
    serving) ;; # its seeds carry a selector byte before the file: fuzz/corpus/serving alone
    cluster) seed cluster "$root"/tests/data/profile/cluster-2rank.json \
                          "$root"/tests/data/bad/profile-cluster-*.json ;;
  esac
  dict=""
  [ -f "$here/$name.dict" ] && dict="-dict=$here/$name.dict"
  log=$build/logs/$name.log
  # MIN_RUNS: -runs bounds the run, the time limit only guards a hang
  if [ "$min_runs" -gt 0 ]; then
    limit="-runs=$min_runs -max_total_time=$((seconds * 20))"
  else
    limit="-max_total_time=$seconds"
  fi
  start=$(date +%s)
  if "$bin" $limit -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$build/artifacts/$name-" $dict "$build/corpus/$name" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    took=$(($(date +%s) - start))
    if [ "${runs:-0}" -lt "$min_runs" ]; then
      echo "fuzz_$name: FAILED: ${runs:-0} executions in $took s, fewer than $min_runs"
      status=1
      continue
    fi
    echo "fuzz_$name: ${runs:-?} executions in $took s, no crash, hang or sanitizer report"
  else
    echo "fuzz_$name: FAILED (log $log, input under $build/artifacts/)"
    tail -n 40 "$log"
    status=1
  fi
done
exit $status
