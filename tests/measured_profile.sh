#!/bin/bash
# A measured CPU profile feeds every analysis command with no dtype option
# `measure --quick` once, then step, ops, gemm, attn,
# crossover, sweep, capacity, report and plot against it. A CPU profile
# measures fp32 and fp64 peaks, and bf16 where the CPU has AVX-512 BF16: the
# commands run their bf16 math on the bf16 peak, or on the fp32 peak and say
# so; capacity needs no peak. An explicitly requested dtype without a peak
# (bf16 where none was measured, else fp8, which no CPU has) is refused in
# one line.
# usage: measured_profile.sh ROOFLINE
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lab=$tmp/lab.json
fail=0

if ! "$bin" measure --quick -o "$lab" >"$tmp/measure.out" 2>&1; then
  echo "FAIL: measure --quick"; sed 's/^/    /' "$tmp/measure.out" | tail -5; exit 1
fi
if grep -q '"bf16":' "$lab"; then
  note="math bf16" absent="--weight-dtype fp8 --act-dtype fp8" absent_name=fp8_e4m3
else
  note="math fp32: the profile measured no bf16 peak" absent="--act-dtype bf16" absent_name=bf16
fi

# args | what stdout (or the written file) must hold
check() {
  local want=$1 file=$2; shift 2
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  local where=$tmp/out
  [ -n "$file" ] && where=$file
  if [ $rc != 0 ]; then
    echo "FAIL: roofline $*: exit $rc"; sed 's/^/    /' "$tmp/err" | head -3; fail=1
  elif ! grep -qF -- "$want" "$where"; then
    echo "FAIL: roofline $*: output lacks '$want'"; head -5 "$where" | sed 's/^/    /'; fail=1
  fi
}

for cmd in "step llama-3-8b" "step llama-3-8b --phase prefill" "ops llama-3-8b" \
           "gemm 1 4096 4096" "attn --heads 32 --kv-heads 8 --context 1024" \
           "crossover llama-3-8b" "sweep llama-3-8b --batch 1,8" "step llama-3-8b --json" \
           "sweep llama-3-8b --batch 1,8 --json"; do
  # shellcheck disable=SC2086
  check "$note" "" $cmd --hw "$lab"
done
# capacity asks for no compute peak, so it names none
check "KV pool" "" capacity llama-3-8b --hw "$lab" --mem 80GiB
"$bin" capacity llama-3-8b --hw "$lab" --mem 80GiB 2>&1 | grep -q "math" &&
  { echo "FAIL: capacity names a math dtype"; fail=1; }
# the acceptance line: the report with no other option, and the figure
check "$note" "$tmp/r.html" report llama-3-8b --hw "$lab" -o "$tmp/r.html"
check "<svg" "$tmp/f.svg" plot llama-3-8b --hw "$lab" -o "$tmp/f.svg"
# an explicit request for a dtype the profile has no peak for is refused
# shellcheck disable=SC2086
"$bin" step llama-3-8b --hw "$lab" $absent >"$tmp/out" 2>"$tmp/err"
rc=$?
if [ $rc != 3 ] || [ "$(wc -l <"$tmp/err")" != 1 ] ||
   ! grep -q "no $absent_name compute peak" "$tmp/err"; then
  echo "FAIL: $absent on a CPU profile: exit $rc, expected 3 and one line"; fail=1
fi
# the same request with its peak given runs on it
check "25.00 TFLOP/s bf16" "" step llama-3-8b --hw "$lab" --act-dtype bf16 --peak 25 --context 0

[ $fail = 0 ] && echo "measured profile: every command ran"
exit $fail
