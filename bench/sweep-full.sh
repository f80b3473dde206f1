#!/bin/bash
# Sweep throughput under the full traffic model: `roofline sweep --traffic
# full` (naive attention, so every layer has its three attention rows, each
# affine in the keys) over 1,048,576 (batch x context) points of one model,
# CSV to /dev/null; CPU seconds (user + sys) as the median of several runs,
# and points per second. Target (issue 14): above 1 M points/s, O(1) a point
# as under the compulsory model (bench/sweep.sh).
# usage: bench/sweep-full.sh [ROOFLINE] [MODEL] [RUNS]
set -eu
bin=${1:-build/cli/roofline}
model=${2:-llama-3-8b}
runs=${3:-5}
points=$((1024 * 1024))
TIMEFORMAT='%U %S'
secs=()
for _ in $(seq "$runs"); do
  t=$( { time "$bin" sweep "$model" --traffic full --naive --batch 1..1024:1 --context 1..1024:1 \
           --csv >/dev/null; } 2>&1 )
  secs+=("$(echo "$t" | awk '{printf "%.3f", $1 + $2}')")
done
median=$(printf '%s\n' "${secs[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "sweep $model --traffic full --naive: $points points, CPU seconds per run: ${secs[*]}"
awk -v m="$median" -v p="$points" 'BEGIN {
  r = p / m / 1e6
  printf "median %.3f CPU s, %.2f M points/s (target above 1 M points/s: %s)\n", m, r,
         (r > 1 ? "met" : "MISSED") }'
