#!/bin/bash
# Sweep throughput: `roofline sweep` over 1,048,576 (batch x context) points
# of one model, CSV to /dev/null; CPU seconds (user + sys) as the median of
# several runs, and points per second. Issue target: under one CPU second.
# usage: bench/sweep.sh [ROOFLINE] [MODEL] [RUNS]
set -eu
bin=${1:-build/cli/roofline}
model=${2:-llama-3-8b}
runs=${3:-5}
points=$((1024 * 1024))
TIMEFORMAT='%U %S'
secs=()
for _ in $(seq "$runs"); do
  t=$( { time "$bin" sweep "$model" --batch 1..1024:1 --context 1..1024:1 --csv >/dev/null; } 2>&1 )
  secs+=("$(echo "$t" | awk '{printf "%.3f", $1 + $2}')")
done
median=$(printf '%s\n' "${secs[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "sweep $model: $points points, CPU seconds per run: ${secs[*]}"
awk -v m="$median" -v p="$points" 'BEGIN {
  printf "median %.3f CPU s, %.2f M points/s, %.2fx under the 1 s budget\n", m, p / m / 1e6, 1 / m }'
