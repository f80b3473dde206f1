#!/bin/bash
# Peak resident memory of the largest sweep, written to stdout and with -o,
# in CSV and JSON: the two must be within 2x of each other, since output is
# streamed (about 1 MiB held at a time) whether it goes to a pipe or to the
# atomic temporary file. Before streaming, -o held the whole output: 5.5 GB
# for this CSV sweep, about 14 GB for its JSON.
# Prints one line a format and exits 1 when a ratio is over 2.
# Needs GNU time (/usr/bin/time; Debian package `time`) and free disk for
# the -o file (about 4 GB CSV, 10 GB JSON; TMPDIR picks the folder).
# usage: bench/rss.sh [ROOFLINE] [MODEL] [BATCH] [CONTEXT]
set -eu
bin=${1:-build/cli/roofline}
model=${2:-llama-3-8b}
batch=${3:-1..1024:1}
context=${4:-1..32768:1}
if [ ! -x /usr/bin/time ]; then
  echo "bench/rss.sh: GNU time is needed (apt-get install time)" >&2
  exit 2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rf_rss.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# peak RSS in KiB of one run, its stdout to $1
peak_kib() {
  local to=$1
  shift
  /usr/bin/time -f %M -o "$tmp/rss" "$@" >"$to"
  tail -1 "$tmp/rss"
}

echo "sweep $model --batch $batch --context $context"
bad=0
for fmt in csv json; do
  a=$(peak_kib /dev/null "$bin" sweep "$model" --batch "$batch" --context "$context" --$fmt)
  b=$(peak_kib /dev/null "$bin" sweep "$model" --batch "$batch" --context "$context" --$fmt \
        -o "$tmp/out.$fmt")
  bytes=$(stat -c %s "$tmp/out.$fmt")
  rm -f "$tmp/out.$fmt"
  awk -v f=$fmt -v a="$a" -v b="$b" -v n="$bytes" 'BEGIN {
    r = a > b ? a / b : b / a
    printf "%-4s %8.1f MB written; peak RSS: stdout %.1f MiB, -o %.1f MiB (ratio %.2f%s)\n",
           f, n / 1e6, a / 1024, b / 1024, r, (r > 2 ? ", OVER 2x" : "")
    exit (r > 2) }' || bad=1
done
[ "$bad" = 0 ]
