#!/bin/sh
# Run every built harness for SECONDS each, from a corpus seeded with the
# checked-in inputs (fuzz/corpus/<name>/), the model configs the tests read
# (tests/data/models/*.json), the project's own profiles and the bad measured
# files of tests/data/bad. Prints one line a
# harness with its execution count; exits 1 on the first crash, hang, leak
# or sanitizer report, leaving the input under BUILD/artifacts/ and the log
# under BUILD/logs/.
# usage: fuzz/run.sh BUILD SECONDS
set -eu
build=$1 seconds=$2
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
for name in parse config profile measured; do
  bin=$build/fuzz_$name
  [ -x "$bin" ] || { echo "fuzz_$name: not built (its reader is not in the library yet)"; continue; }
  seed "$name" "$here/corpus/$name"/*
  case $name in
    config) seed config "$models"/*.json "$root"/tests/data/bad/*.json ;;
    profile) seed profile "$root"/tests/data/profile/*.json "$root"/tests/data/*profile*.json \
                          "$root"/tests/data/bad/*profile*.json ;;
    measured) seed measured "$root"/tests/data/bad/measured-*.json ;;
  esac
  dict=""
  [ -f "$here/$name.dict" ] && dict="-dict=$here/$name.dict"
  log=$build/logs/$name.log
  if "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
       -artifact_prefix="$build/artifacts/$name-" $dict "$build/corpus/$name" >"$log" 2>&1; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz_$name: ${runs:-?} executions in ${seconds} s, no crash, hang or sanitizer report"
  else
    echo "fuzz_$name: FAILED (log $log, input under $build/artifacts/)"
    tail -n 40 "$log"
    status=1
  fi
done
exit $status
