#!/bin/bash
# Serving: `roofline generate` with N = 1,000,000 output tokens against
# N = 10 (the closed-form sum must not grow with N), on a model without a
# sliding window and on one with (gemma-2, whose window's cap is found by
# halving, O(log N)); CPU seconds (user + sys), the median of several runs.
# Issue targets: under 10 ms for N = 1,000,000; the frontier over 1,024
# batch sizes x 4,096 output tokens under 1 CPU second. The same two on a
# layout (TP 2: the closed form on a device's shard plus its collectives).
# The whole process is timed, start-up included, as a user would see it.
# usage: bench/serving.sh [ROOFLINE] [RUNS]   (roofline-lab: beside ROOFLINE)
set -eu
bin=${1:-build/cli/roofline}
lab=$(dirname "$bin")/roofline-lab
runs=${2:-5}
TIMEFORMAT='%U %S'
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
cpu() { # the median CPU seconds of a command line, as ms
  local secs=() t
  for _ in $(seq "$runs"); do
    t=$( { time "$@" >/dev/null; } 2>&1 )
    secs+=("$(echo "$t" | awk '{printf "%.4f", $1 + $2}')")
  done
  printf '%s\n' "${secs[@]}" | median | awk '{printf "%.1f", $1 * 1e3}'
}
# the process's start-up alone, which every line below includes: roofline
# (the analytic commands: no MPI, OpenBLAS or CUDA to load and initialise)
# beside roofline-lab (the whole command line, the lab's libraries too)
echo "roofline --version (start-up alone)      median $(cpu "$bin" --version) ms CPU"
if [ -x "$lab" ]; then
  echo "roofline-lab --version (start-up alone)  median $(cpu "$lab" --version) ms CPU"
fi
for model in llama-3-8b gemma-2-9b-it; do
  for n in 10 1000000; do
    secs=()
    for _ in $(seq "$runs"); do
      t=$( { time "$bin" generate "$model" --prompt 1024 --output-tokens "$n" --batch 64 --json \
               >/dev/null; } 2>&1 )
      secs+=("$(echo "$t" | awk '{printf "%.4f", $1 + $2}')")
    done
    m=$(printf '%s\n' "${secs[@]}" | median)
    awk -v model="$model" -v n="$n" -v m="$m" 'BEGIN {
      printf "generate %-14s N = %-8d median %.1f ms CPU (the whole process)\n", model, n, m * 1e3 }'
  done
done
echo "generate llama-3-8b --batch 1  N = 1000000  median $(cpu "$bin" generate llama-3-8b \
  --prompt 1024 --output-tokens 1000000) ms CPU (the whole process)"
# the frontier over 1,024 batch sizes x 4,096 output tokens (target: under 1 s)
secs=()
for _ in $(seq "$runs"); do
  t=$( { time "$bin" frontier llama-3-8b --prompt 1024 --output-tokens 4096 --max-batch 1024 --csv \
           >/dev/null; } 2>&1 )
  secs+=("$(echo "$t" | awk '{printf "%.4f", $1 + $2}')")
done
m=$(printf '%s\n' "${secs[@]}" | median)
awk -v m="$m" 'BEGIN {
  printf "frontier llama-3-8b  1,024 batches x N = 4,096  median %.1f ms CPU\n", m * 1e3 }'
# on a layout: TP 2, the closed form on a device's shard
echo "generate llama-3-8b --tp 2  N = 1000000  median $(cpu "$bin" generate llama-3-8b \
  --prompt 1024 --output-tokens 1000000 --batch 64 --tp 2 --json) ms CPU"
echo "frontier llama-3-8b --tp 2  1,024 batches x N = 4,096  median $(cpu "$bin" frontier \
  llama-3-8b --prompt 1024 --output-tokens 4096 --max-batch 1024 --tp 2 --csv) ms CPU"
