#!/bin/sh
# The main job on built-in defaults: the course lesson's operator table for
# Qwen2.5-7B-Instruct on an RTX 4090, then the book chapter's decode floors
# for Llama-3-8B on an H100 SXM (docs/accounting.md: the figures both print).
# usage: scripts/demo.sh ROOFLINE [OUT_DIR]
set -eu
rf=$1
out=${2:-demo-out}
mkdir -p "$out"

say() { printf '\n==> %s\n    $ roofline %s\n\n' "$1" "$2"; }

say "The course lesson: every operator of Qwen2.5-7B-Instruct on an RTX 4090 (its rounded ridge of 165)" \
    "ops qwen2.5-7b-instruct --hw rtx4090 --ridge 165"
"$rf" ops qwen2.5-7b-instruct --hw rtx4090 --ridge 165

say "The book chapter: a batch-1 decode step of Llama-3-8B on an H100 SXM, at context 1024" \
    "step llama-3-8b --hw h100-sxm --batch 1 --context 1024"
"$rf" step llama-3-8b --hw h100-sxm --batch 1 --context 1024

say "Batching: the same step at batch 64 (weights read once, KV per sequence)" \
    "sweep llama-3-8b --hw h100-sxm --batch 1,64 --context 1024,8192"
"$rf" sweep llama-3-8b --hw h100-sxm --batch 1,64 --context 1024,8192

say "Where each projection crosses the ridge" "crossover llama-3-8b --hw h100-sxm"
"$rf" crossover llama-3-8b --hw h100-sxm

say "How many sequences fit: the book chapter's KV budget, at its 8k context" \
    "capacity llama-3-8b --hw h100-sxm --context 8192"
"$rf" capacity llama-3-8b --hw h100-sxm --context 8192

say "Figure 1 and the report: Qwen2.5-7B-Instruct on an RTX 4090, decode B = 1 at s = 2048, prefill T = 256" \
    "plot qwen2.5-7b-instruct --hw rtx4090 --batch 1 --context 2048 --tokens 256 -o $out/figure1.svg  (and: report ... -o $out/report.html)"
"$rf" plot qwen2.5-7b-instruct --hw rtx4090 --batch 1 --context 2048 --tokens 256 -o "$out/figure1.svg"
"$rf" report qwen2.5-7b-instruct --hw rtx4090 --batch 1 --context 2048 --tokens 256 \
    -o "$out/report.html"
echo "    wrote $out/figure1.svg and $out/report.html"

cat <<TEXT

Where to go next:
  roofline step MODEL --phase prefill --tokens 1024    a prefill step
  roofline sweep MODEL --batch 1..1024 --context 1..32768 --csv > points.csv
  roofline models / roofline hw                        the built-in presets
  roofline <command> --help                            every option
TEXT

echo "The figure and the report are in $out/: figure1.svg and report.html (open them in a browser)."
