#!/bin/bash
# test_explorer_json.sh JANSSON_TOOL LITE_TOOL DIR...: both JSON readers
# (test_explorer_json.c built against jansson and against json_lite) over
# every file under the folders must print the same bytes: the same values,
# the same refusals with the same line, column and message.
set -u
jansson=$1 lite=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
find "$@" -type f | LC_ALL=C sort >"$tmp/files"
n=$(wc -l <"$tmp/files")
[ "$n" -ge 100 ] || { echo "FAIL: only $n files found under $*"; exit 1; }
xargs -d '\n' "$jansson" <"$tmp/files" >"$tmp/jansson.out" || { echo "FAIL: $jansson"; exit 1; }
xargs -d '\n' "$lite" <"$tmp/files" >"$tmp/lite.out" || { echo "FAIL: $lite"; exit 1; }
refused=$(grep -c ': line -\?[0-9]* column' "$tmp/jansson.out")
if ! diff -u "$tmp/jansson.out" "$tmp/lite.out" >"$tmp/diff"; then
  head -40 "$tmp/diff"
  echo "FAIL: json_lite reads $n files differently from jansson"
  exit 1
fi
echo "json_lite = jansson on $n files ($refused refused, the rest written back alike)"
