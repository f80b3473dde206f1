#!/bin/bash
# plot_files.sh ROOFLINE: the files `plot` and `report` write are whole and
# valid. Every SVG passes `xmllint --noout` and stays small; every SVG and
# HTML file holds finite numbers only (no nan, no inf); the HTML holds its
# figures inline and fetches nothing; a measured overlay draws; measured
# figures at the ends of a double neither hang the tool nor write a
# non-finite coordinate; a run leaves no temporary (PATH.tmp.XXXXXX)
# behind, and one that fails leaves the old file as it was; a character
# device is written in place and stays one.
set -u
bin=$1
data=$(cd "$(dirname "$0")" && pwd)/data # the test data beside this script
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# finite FILE: no non-finite number printed anywhere in it
finite() {
  grep -Eiwo -- '-?(nan|inf|infinity)' "$1" | head -3 | grep -q . &&
    bad "$1: non-finite numbers: $(grep -Eiwo -- '-?(nan|inf|infinity)' "$1" | head -3 | tr '\n' ' ')"
}
# no_temporary: the atomic writes leave no PATH.tmp.XXXXXX in the folder
no_temporary() {
  local left; left=$(ls -A "$tmp" | grep -E '\.tmp\.' | head -3)
  [ -z "$left" ] || bad "$*: temporary files left behind: $left"
}
command -v xmllint >/dev/null || { echo "FAIL: xmllint not found (Debian: libxml2-utils)"; exit 1; }

svg() { # name args...: write $tmp/name.svg and check it
  local name=$1; shift
  "$bin" plot "$@" -o "$tmp/$name.svg" || { bad "plot $*: exit $?"; return; }
  xmllint --noout "$tmp/$name.svg" || bad "plot $*: xmllint rejects the SVG"
  local size; size=$(wc -c <"$tmp/$name.svg")
  [ "$size" -lt 40000 ] || bad "plot $*: $size bytes, expected a small file"
  grep -q '<image\|href=\|@font-face' "$tmp/$name.svg" && bad "plot $*: external or raster content"
  finite "$tmp/$name.svg"
  no_temporary "plot $*"
}
svg qwen qwen2.5-7b-instruct --hw rtx4090 --batch 1 --context 2048 --tokens 256
svg llama llama-3-8b --hw h100-sxm --batch 64 --context 8192 --tokens 1024
svg mixtral mixtral-8x7b --hw h200 --batch 32
svg mla deepseek-v2-lite --hw a100-80gb --naive
svg fp8 llama-3-8b --hw l40s --weight-dtype fp8 --act-dtype fp8 --fused
svg ridge qwen2.5-3b-instruct --ridge 50 --bw 0.5
svg dsv3 "$data/models/deepseek-v3.json" --hw h100-sxm
svg int8 llama-3-8b --hw h100-sxm --weight-dtype int8 --act-dtype int8

# measured figures at the ends of a double: refused by the reader (exit 2,
# one line) or drawn, finite and small, in bounded time; never a hang
n=0
for ops in '"flops": 1e-323, "bytes": 1, "measured_s": 1' '"flops": 1e300, "bytes": 1, "measured_s": 1' \
           '"flops": 1, "bytes": 5e-324, "measured_s": 1' '"flops": 1e10, "bytes": 1, "measured_s": 5e-324'; do
  for roofs in '' '"bandwidth_bytes_per_s": 5e-324, ' '"peak_flops_per_s": {"bf16": 1e300}, '; do
    n=$((n + 1))
    printf '{%s"ops": [{"name": "q", %s}]}\n' "$roofs" "$ops" >"$tmp/x$n.json"
    for cmd in plot report; do
      out="$tmp/x$n.$cmd"
      timeout 30 "$bin" $cmd qwen2.5-7b-instruct --hw rtx4090 --measured "$tmp/x$n.json" \
        -o "$out" 2>"$tmp/err"
      rc=$?
      case $rc in
      0) finite "$out"
         [ "$(wc -c <"$out")" -lt 400000 ] || bad "$cmd x$n.json: $(wc -c <"$out") bytes"
         [ $cmd = plot ] && { xmllint --noout "$out" || bad "$cmd x$n.json: xmllint rejects it"; } ;;
      2) [ "$(wc -l <"$tmp/err")" = 1 ] || bad "$cmd x$n.json: exit 2 without one line" ;;
      *) bad "$cmd $(cat "$tmp/x$n.json"): exit $rc (124: it hung)" ;;
      esac
    done
  done
done
no_temporary "extreme measured files"
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
# (Figure 1, the batch chart, the frontier, the curve under load)
[ "$(grep -c '<svg xmlns' "$tmp/r.html")" = 4 ] || bad "report: expected 4 inline figures"
# (the page itself, up to its </main>: the explorer's inline module and
# script follow it, checked in a browser for requests by explorer_browser)
sed '/^<\/main>$/q' "$tmp/r.html" | grep -q '<script\|<link\|src=\|@import\|url(' &&
  bad "report: external reference or script"
for want in 'decode operators' 'prefill operators' 'sum-of-max floor' 'tokens/s ceiling' \
            'crossing points' 'KV capacity' 'batch sweep' '@media print' 'measured operators'; do
  grep -q "$want" "$tmp/r.html" || bad "report lacks '$want'"
done
# written as polyglot markup, so the XML parser checks every tag and escape
xmllint --noout "$tmp/r.html" || bad "report: not well-formed"
finite "$tmp/r.html"
"$bin" report "$data/models/deepseek-v3.json" --hw h100-sxm -o "$tmp/r2.html" || bad "report dsv3: exit $?"
finite "$tmp/r2.html"
xmllint --noout "$tmp/r2.html" || bad "report dsv3: not well-formed"
no_temporary "report"

# a character device is written in place and stays one; nothing on stdout
[ -c /dev/null ] && {
  "$bin" plot qwen2.5-7b-instruct -o /dev/null >"$tmp/stdout" || bad "plot -o /dev/null: exit $?"
  [ -c /dev/null ] || bad "/dev/null is no longer a character device"
  [ -s "$tmp/stdout" ] && bad "plot -o /dev/null printed on stdout"
}

# a failed run leaves the old file untouched and no temporary behind
echo old >"$tmp/keep.svg"
"$bin" plot nosuchmodel -o "$tmp/keep.svg" 2>/dev/null
[ "$(cat "$tmp/keep.svg")" = old ] || bad "a failed run changed the output file"
no_temporary "a failed run"

[ $fail = 0 ] && echo "plot files: all good"
exit $fail
