#!/bin/sh
# lab_binary.sh - the two binaries (cli/CMakeLists.txt, cli/lab_exec.c):
#   1. `roofline` needs none of the lab's libraries (readelf -d: no
#      libopenblas, libmpi, libcuda, libcudart, libcublas), while
#      `roofline-lab` does need OpenBLAS (so the check can see one);
#   2. measure, bench and profile through `roofline` are roofline-lab's:
#      the same bytes on stdout and stderr and the same exit code, for
#      --help and for a bad option (exit 2);
#   3. `roofline` alone in a folder, without roofline-lab: measure --help
#      exits 3 with one line on stderr naming the paths it tried, and
#      nothing on stdout.
# usage: lab_binary.sh ROOFLINE ROOFLINE_LAB
set -u
bin=$1
lab=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

needed=$(readelf -d "$bin" | awk '/NEEDED/ {print $NF}' | tr -d '[]' | tr '\n' ' ')
echo "roofline needs: $needed"
for lib in libopenblas libmpi libcuda libcudart libcublas; do
  case " $needed" in *" $lib"*) bad "roofline needs $lib" ;; esac
done
readelf -d "$lab" | grep NEEDED | grep -q libopenblas || bad "roofline-lab does not need libopenblas"

for args in "measure --help" "bench --help" "profile --help" "measure --no-such-option" \
            "bench gemm --no-such-option" "profile --no-such-option"; do
  # shellcheck disable=SC2086 # the arguments are words
  "$bin" $args >"$tmp/out" 2>"$tmp/err"
  got=$?
  # shellcheck disable=SC2086
  "$lab" $args >"$tmp/lab_out" 2>"$tmp/lab_err"
  want=$?
  [ "$got" = "$want" ] || bad "roofline $args: exit $got, roofline-lab's $want"
  cmp -s "$tmp/out" "$tmp/lab_out" || bad "roofline $args: stdout differs from roofline-lab's"
  cmp -s "$tmp/err" "$tmp/lab_err" || bad "roofline $args: stderr differs from roofline-lab's"
done
"$bin" measure --help >"$tmp/out" 2>&1 && grep -q "measure" "$tmp/out" ||
  bad "roofline measure --help: exit non-zero or no help"

mkdir "$tmp/alone"
cp "$bin" "$tmp/alone/roofline"
"$tmp/alone/roofline" measure --help >"$tmp/out" 2>"$tmp/err"
code=$?
[ "$code" = 3 ] || bad "roofline alone: measure --help exit $code, want 3"
[ -s "$tmp/out" ] && bad "roofline alone: measure --help wrote to stdout"
[ "$(wc -l <"$tmp/err")" = 1 ] || bad "roofline alone: stderr is not one line: $(cat "$tmp/err")"
grep -q "$tmp/alone/roofline-lab" "$tmp/err" || bad "roofline alone: the line names no path tried"
echo "roofline alone: exit $code: $(cat "$tmp/err")"
"$tmp/alone/roofline" generate llama-3-8b --prompt 1024 --output-tokens 10 >/dev/null 2>&1 ||
  bad "roofline alone: generate fails"

[ "$fail" = 0 ] && echo "lab_binary: OK"
exit "$fail"
