#!/bin/bash
# The SLO planner's speed (issue 27: plan for Llama-3.1-70B over every
# layout up to 64 H100s in at most 10 s of CPU): builds bench/sim_plan.c
# against the core library's sources with -O2 (no CMake target) and runs
# it, printing each answer, the simulations run, the CPU seconds and the
# load average.
# usage: bench/sim-plan.sh [RATE] [REQUESTS]
set -eu
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
${CC:-cc} -O2 -std=c11 -Iinclude -Isrc/core src/core/*.c bench/sim_plan.c -lm \
  -o "$out/sim_plan"
"$out/sim_plan" "$@"
