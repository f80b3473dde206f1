#!/bin/bash
# demo_check.sh ROOFLINE: `make demo`'s script (scripts/demo.sh) run end to
# end, and checked for what it is for: every command it runs exits 0 and
# prints nothing on stderr, the figures it shows are the published ones, and
# the two files it writes exist, are well-formed and hold their figures.
# The expected figures are the ones docs/accounting.md reproduces:
#   ops   q_proj of Qwen2.5-7B-Instruct at M = 256: I = 2 M K N / ((M K + K N
#         + M N) b) = 2*256*3584^2 / ((256*3584 + 3584^2 + 256*3584) * 2) = 224.0
#   step  Llama-3-8B on an H100 SXM: 15.01 GB of weights streamed, 15.14 GB a
#         step at context 1024 (+ 1024 x 131,072 B of KV), floor 4.52 ms
#   sweep batch 64, context 1024: 23.60 GB, 64 / 7.04455 ms = 9,085 tok/s
#   crossover  a square d = 4096 projection crosses at T* = 345.1
#   capacity   0.92 x 79.65 GiB - 14.96 GiB - 6 GiB = 52.32 GiB of KV pool,
#              52.32 GiB / 128 KiB = 428,613 tokens
# usage: demo_check.sh ROOFLINE (run from anywhere; finds scripts/ beside tests/)
set -u
bin=$1
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

"$root/scripts/demo.sh" "$bin" "$tmp/files" >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
if [ "$rc" != 0 ]; then
  bad "scripts/demo.sh exited $rc"
  sed 's/^/    stderr: /' "$tmp/stderr" | head -5
  exit 1
fi
[ -s "$tmp/stderr" ] && bad "stderr not empty: $(head -c 200 "$tmp/stderr")"

# a line of the output matching an extended regex (columns by spaces)
line() { grep -qE -- "$1" "$tmp/stdout" || bad "the demo's output has no line matching '$1'"; }
line '^  q_proj +256 +3,584 +3,584 +6,576,668,672 +29,360,128 +224\.0 +compute-bound$'
line '^  weights streamed +15\.01 GB$'
line '^  step bytes +15\.14 GB$'
line '^  step floor +4\.52 ms$'
line '^ +64 +1,024 +7\.04 ms +9,085 tok/s .* 23\.60 GB '
line '^  square d = 4096 projection, T\* +345\.1$'
line '^  KV pool +52\.32 GiB$'
line '^  tokens +428,613$'
# 428,613 tokens / 8192 a sequence = 52.3: the book chapter's 52 sequences at 8k
line '^  sequences at this context +52\.3$'

svg=$tmp/files/figure1.svg html=$tmp/files/report.html
for f in "$svg" "$html"; do
  [ -s "$f" ] || bad "$(basename "$f") was not written (or is empty)"
done
grep -qF "wrote $tmp/files/figure1.svg and $tmp/files/report.html" "$tmp/stdout" ||
  bad "the demo does not say where it wrote its files"
if command -v xmllint >/dev/null; then
  xmllint --noout "$svg" 2>"$tmp/xml" || bad "figure1.svg is not well-formed: $(head -1 "$tmp/xml")"
fi
# Figure 1 is the model's operators on the RTX 4090's roof, named in its title
[ "$(head -c 200 "$svg" | grep -c '<svg')" = 1 ] || bad "figure1.svg does not start as an SVG"
grep -qF 'qwen2.5-7b-instruct on rtx4090' "$svg" || bad "figure1.svg does not name the model and card"
for op in q_proj gate_proj down_proj lm_head; do
  grep -qF ">$op" "$svg" || grep -qF "<title>$op " "$svg" || bad "figure1.svg has no $op marker"
done
# the report holds its four figures inline, each with its caption
[ "$(grep -o '<svg' "$html" | wc -l)" = 4 ] || bad "report.html does not hold four inline figures"
grep -qF 'Figure 1.' "$html" || bad "report.html has no Figure 1 caption"
grep -qF 'Figure 2.' "$html" || bad "report.html has no Figure 2 caption"
grep -qF 'Figure 3.' "$html" || bad "report.html has no Figure 3 caption"
grep -qF 'Figure 4.' "$html" || bad "report.html has no Figure 4 caption"
grep -qF 'qwen2.5-7b-instruct' "$html" || bad "report.html does not name the model"

[ "$fail" = 0 ] && echo "demo: every command ran, the figures and both files are as expected"
[ "$fail" = 0 ]
