#!/bin/bash
# plot_files.sh ROOFLINE: the files `plot` and `report` write are whole and
# valid. Every SVG passes `xmllint --noout` and stays small; the HTML holds
# its figures inline and fetches nothing; a measured overlay draws; a run
# that fails leaves no file and no temporary behind.
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
command -v xmllint >/dev/null || { echo "FAIL: xmllint not found (Debian: libxml2-utils)"; exit 1; }

svg() { # name args...: write $tmp/name.svg and check it
  local name=$1; shift
  "$bin" plot "$@" -o "$tmp/$name.svg" || { bad "plot $*: exit $?"; return; }
  xmllint --noout "$tmp/$name.svg" || bad "plot $*: xmllint rejects the SVG"
  local size; size=$(wc -c <"$tmp/$name.svg")
  [ "$size" -lt 40000 ] || bad "plot $*: $size bytes, expected a small file"
  grep -q '<image\|href=\|@font-face' "$tmp/$name.svg" && bad "plot $*: external or raster content"
}
svg qwen qwen2.5-7b-instruct --hw rtx4090 --batch 1 --context 2048 --tokens 256
svg llama llama-3-8b --hw h100-sxm --batch 64 --context 8192 --tokens 1024
svg mixtral mixtral-8x7b --hw h200 --batch 32
svg mla deepseek-v2-lite --hw a100-80gb --naive
svg fp8 llama-3-8b --hw l40s --weight-dtype fp8 --act-dtype fp8 --fused
svg ridge qwen2.5-3b-instruct --ridge 50 --bw 0.5

# a measured overlay: a profile's roofs and a run's operators in one file
cat >"$tmp/lab.json" <<'JSON'
{"name": "lab", "bandwidth_bytes_per_s": 9.1e11, "peak_flops_per_s": {"bf16": 1.52e14},
 "phase": "decode",
 "ops": [{"name": "q_proj", "flops": 2.569e7, "bytes": 2.570e7, "measured_s": 3.1e-5},
         {"name": "attention", "flops": 2.936e7, "bytes": 4.194e6, "measured_s": 9.0e-6},
         {"name": "gate_proj", "phase": "prefill", "flops": 3.476e10, "bytes": 1.473e8,
          "measured_s": 2.6e-4}]}
JSON
svg measured qwen2.5-7b-instruct --hw rtx4090 --measured "$tmp/lab.json"
[ "$(grep -c 'class="pt [a-z]* measured"' "$tmp/measured.svg")" = 3 ] ||
  bad "--measured: expected 3 measured markers"
grep -q 'measured 910.0 GB/s' "$tmp/measured.svg" || bad "--measured: no measured memory roof"
# the tool never overwrites one of its inputs
"$bin" plot qwen2.5-7b-instruct --measured "$tmp/lab.json" -o "$tmp/lab.json" 2>/dev/null
[ $? = 2 ] || bad "-o onto the --measured input: expected exit 2"
grep -q '"name": "lab"' "$tmp/lab.json" || bad "the --measured input was overwritten"

# the report: one page, figures inline, nothing fetched
"$bin" report qwen2.5-7b-instruct --hw rtx4090 --measured "$tmp/lab.json" -o "$tmp/r.html" ||
  bad "report: exit $?"
[ "$(grep -c '<svg xmlns' "$tmp/r.html")" = 2 ] || bad "report: expected 2 inline figures"
grep -q '<script\|<link\|src=\|@import\|url(' "$tmp/r.html" && bad "report: external reference or script"
for want in 'decode operators' 'prefill operators' 'sum-of-max floor' 'tokens/s ceiling' \
            'crossing points' 'KV capacity' 'batch sweep' '@media print' 'measured operators'; do
  grep -q "$want" "$tmp/r.html" || bad "report lacks '$want'"
done
# written as polyglot markup, so the XML parser checks every tag and escape
xmllint --noout "$tmp/r.html" || bad "report: not well-formed"

# a failed run leaves the old file untouched and no temporary behind
echo old >"$tmp/keep.svg"
"$bin" plot nosuchmodel -o "$tmp/keep.svg" 2>/dev/null
[ "$(cat "$tmp/keep.svg")" = old ] || bad "a failed run changed the output file"
ls -A "$tmp" | grep -q '^\.' && bad "temporary files left behind: $(ls -A "$tmp" | grep '^\.')"

[ $fail = 0 ] && echo "plot files: all good"
exit $fail
