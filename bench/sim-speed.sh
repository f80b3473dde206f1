#!/bin/bash
# The simulator's speed (issue 27: 100,000 requests in at most 1 s on one
# core): builds bench/sim_speed.c against the core library's sources with
# the compiler's -O2 (no CMake target: the bench stays out of the default
# build) and runs it; it prints the median CPU seconds of RUNS runs and the
# load average.
# usage: bench/sim-speed.sh [RUNS]
set -eu
cd "$(dirname "$0")/.."
runs=${1:-5}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
${CC:-cc} -O2 -std=c11 -Iinclude -Isrc/core src/core/*.c bench/sim_speed.c -lm \
  -o "$out/sim_speed"
"$out/sim_speed" "$runs"
