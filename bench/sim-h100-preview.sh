#!/bin/bash
# The simulator's floors against the measured single-GPU Llama-3.1-8B runs
# of bench/data/serving-runs/h100_sxm.csv (aggregated, TP 1, bf16): the
# closed loop at each run's concurrency and ISL/OSL (bench/sim_h100_preview.c
# says the engine). A preview of issue 27's acceptance ahead of the CLI.
# usage: bench/sim-h100-preview.sh [CSV]
set -eu
cd "$(dirname "$0")/.."
csv=${1:-bench/data/serving-runs/h100_sxm.csv}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
${CC:-cc} -O2 -std=c11 -Iinclude -Isrc/core src/core/*.c bench/sim_h100_preview.c -lm \
  -o "$out/preview"
python3 - "$csv" <<'PY' | "$out/preview"
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if (r['mode'] == 'agg' and r['tp_size'] == '1' and r['pp_size'] == '1'
            and r['model_path'] == 'meta-llama/Llama-3.1-8B-Instruct'):
        print(r['isl'], r['osl'], r['batch_size'], r['silicon_ttft_ms'], r['silicon_tpot_ms'])
PY
