#!/bin/sh
# The installed command line library: `cmake --install` into a temporary
# prefix, then a program that knows it only through <roofline/rf_cli.h> and
# `pkg-config --cflags --libs roofline-cli` runs `roofline gemm 1 4096 4096
# --json` with rf_cli_run and must print the binary's bytes and exit code;
# the shared library must export rf_cli_main, rf_cli_run and
# rf_cli_result_free and nothing else (the layers' archives stay inside).
# The two binaries: roofline in bin, roofline-lab out of PATH (libexec),
# and the installed roofline's measure --help runs the installed lab (the
# same bytes as the build's roofline-lab).
# usage: test_entry_install.sh BUILD_DIR LIBDIR CC ROOFLINE
set -eu
build=$1 libdir=$2 cc=$3 bin=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log" ||
  { cat "$tmp/install.log"; echo "FAIL: cmake --install"; exit 1; }
lib=$tmp/prefix/$libdir
for f in "$lib/libroofline-cli.so.0" "$lib/libroofline-cli.a" \
         "$tmp/prefix/include/roofline/rf_cli.h" "$lib/pkgconfig/roofline-cli.pc"; do
  [ -e "$f" ] || { echo "FAIL: ${f#"$tmp/prefix/"} not installed"; exit 1; }
done
inst_bin=$(find "$tmp/prefix" -type f -name roofline)
inst_lab=$(find "$tmp/prefix" -type f -name roofline-lab)
[ -n "$inst_bin" ] && [ -x "$inst_bin" ] || { echo "FAIL: roofline not installed"; exit 1; }
[ -n "$inst_lab" ] && [ -x "$inst_lab" ] || { echo "FAIL: roofline-lab not installed"; exit 1; }
[ "$(dirname "$inst_lab")" != "$(dirname "$inst_bin")" ] ||
  { echo "FAIL: roofline-lab installed beside roofline (on PATH)"; exit 1; }
echo "installed: ${inst_bin#"$tmp/prefix/"}, ${inst_lab#"$tmp/prefix/"}"
"$inst_bin" measure --help >"$tmp/help" 2>&1 ||
  { echo "FAIL: the installed roofline measure --help exited $?"; cat "$tmp/help"; exit 1; }
"$(dirname "$bin")/roofline-lab" measure --help >"$tmp/lab_help" 2>&1
cmp -s "$tmp/help" "$tmp/lab_help" ||
  { echo "FAIL: the installed roofline measure --help is not roofline-lab's"; exit 1; }
echo "installed roofline measure --help: $(wc -l <"$tmp/help") lines, roofline-lab's"
exports=$(nm -D --defined-only "$lib/libroofline-cli.so.0" | awk '$2 == "T" {print $3}' | sort | tr '\n' ' ')
[ "$exports" = "rf_cli_main rf_cli_result_free rf_cli_run " ] ||
  { echo "FAIL: libroofline-cli.so exports: $exports"; exit 1; }
flags=$(PKG_CONFIG_PATH=$lib/pkgconfig pkg-config --cflags --libs roofline-cli) ||
  { echo "FAIL: pkg-config --cflags --libs roofline-cli"; exit 1; }
echo "pkg-config --cflags --libs roofline-cli: $flags"
cat >"$tmp/consumer.c" <<'C'
#include <stdio.h>
#include "roofline/rf_cli.h"
int main(void)
{
    const char *argv[] = {"roofline", "gemm", "1", "4096", "4096", "--json"};
    rf_cli_result r;
    int code = rf_cli_run(6, argv, &r);
    fwrite(r.out, 1, r.out_len, stdout);
    fwrite(r.err, 1, r.err_len, stderr);
    rf_cli_result_free(&r);
    return code;
}
C
# shellcheck disable=SC2086 # the flags are words
"$cc" -std=c11 -o "$tmp/consumer" "$tmp/consumer.c" $flags ||
  { echo "FAIL: a program does not build with these flags"; exit 1; }
LD_LIBRARY_PATH=$lib "$tmp/consumer" >"$tmp/got" 2>&1 || { echo "FAIL: the program exited $?"; exit 1; }
"$bin" gemm 1 4096 4096 --json >"$tmp/want" 2>&1
cmp "$tmp/got" "$tmp/want" || { echo "FAIL: rf_cli_run's output differs from the binary's"; exit 1; }
echo "rf_cli_run through the installed library: $(wc -c <"$tmp/got") bytes, the binary's"
