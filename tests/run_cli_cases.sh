#!/bin/bash
# CLI behaviour as a table: each line of a case file is
#     args | exit | expected text
# run as `roofline args` (split like a shell would, so quotes work); the exit
# code must match and the expected text must occur in stdout or stderr
# (fixed string). An exit of 2, 3 or 4 must print exactly one line on stderr
# and nothing on stdout. Lines starting with # and blank lines are skipped.
# {DATA} in args becomes the test data folder, {MODELS} the model configs,
# {TMP} a fresh temporary folder.
# usage: run_cli_cases.sh ROOFLINE CASES DATA_DIR MODELS_DIR
set -u
bin=$1 cases=$2 data=$3 models=$4
if [ ! -f "$cases" ] || [ ! -r "$cases" ]; then
  echo "no case file $cases"
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 n=0
# Everything but the command itself is a bash builtin: a fork costs more
# here than most rows' runs (the fields are split on " | " with parameter
# expansion, the outputs read with read -d '').
while IFS= read -r line || [ -n "$line" ]; do
  n=$((n + 1))
  case "$line" in ''|'#'*) continue ;; esac
  args=${line%% | *} rest=${line#* | } want="" text=""
  if [ "$rest" != "$line" ]; then
    want=${rest%% | *}
    more=${rest#* | }
    [ "$more" = "$rest" ] || text=${more%% | *}
  fi
  args=${args//\{DATA\}/$data}
  args=${args//\{MODELS\}/$models}
  args=${args//\{TMP\}/$tmp}
  text=${text//\{TMP\}/$tmp}
  eval "set -- $args"
  "$bin" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
  got=$?
  out="" err=""
  IFS= read -r -d '' out <"$tmp/out"
  IFS= read -r -d '' err <"$tmp/err"
  why=""
  [ "$got" = "$want" ] || why="exit $got, expected $want"
  if [ -z "$why" ] && [ -n "$text" ] &&
     [[ $out != *"$text"* && $err != *"$text"* ]]; then
    why="output lacks '$text'"
  fi
  if [ -z "$why" ] && [ "$want" -ge 2 ]; then
    newlines=${err//[!$'\n']/}
    lines=${#newlines}
    [ "$lines" = 1 ] || why="stderr has $lines lines, expected one"
    [ -s "$tmp/out" ] && why="stdout not empty on error"
  fi
  if [ -n "$why" ]; then
    fail=$((fail + 1))
    echo "FAIL line $n: roofline $args: $why"
    sed 's/^/    stderr: /' "$tmp/err" | head -5
    head -c 400 "$tmp/out" | sed 's/^/    stdout: /'
  else
    pass=$((pass + 1))
  fi
done <"$cases"
echo "$pass passed, $fail failed"
# a table that ran no case asserts nothing: an empty or all-comment file fails
if [ $((pass + fail)) = 0 ]; then
  echo "no case in $cases"
  exit 1
fi
[ "$fail" = 0 ]
