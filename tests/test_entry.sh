#!/bin/bash
# The in-process entry (rf_cli_run) against the binary over every CLI table:
# each tests/cli_*.txt (a glob: a table added later is picked up) is read
# as tests/run_cli_cases.sh reads it (`args | exit | expected text`, # and
# blank lines skipped, {DATA} {MODELS} {TMP} substituted, the args split as
# a shell would), here with bash builtins alone so that reading ~700 rows
# costs no process each; test_entry.c then runs every command line through
# the binary and twice through rf_cli_run in one process, and compares.
# Whether a row passes its own table is that table's test.
# With RF_ENTRY_SAVE=DIR (the release build's test_entry), the rows, the
# tables' {TMP} folders and the binary's results (test_entry.c, SAVE) are
# kept in DIR for test_explorer_cli.js, which holds the WebAssembly module
# to the same results: the binary runs every row once in a build.
# RF_ENTRY_ONLY="cli_a.txt ..." runs those tables alone, RF_ENTRY_SKIP="..."
# every table but those: the sanitizer build runs the tables in two such
# processes side by side (tests/CMakeLists.txt).
# usage: test_entry.sh ROOFLINE TEST_ENTRY TESTS_DIR DATA_DIR MODELS_DIR
set -u
bin=$1 driver=$2 tests=$3 data=$4 models=$5
save=()
if [ -n "${RF_ENTRY_SAVE:-}" ]; then
  log=$RF_ENTRY_SAVE
  rm -rf "$log" && mkdir -p "$log" || { echo "FAIL: cannot make $log"; exit 1; }
  save=("$log/binary-results")
else
  log=$(mktemp -d)
  trap 'rm -rf "$log"' EXIT
fi
tables=() n=0
# A table's command lines, appended to $log/rows as NUL-terminated fields:
# "R", the table's {TMP} folder, the argument count, the arguments.
record() {
  local cases=$1 tmp=$2 line args
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in ''|'#'*) continue ;; esac
    args=${line%% | *}
    args=${args//\{DATA\}/$data}
    args=${args//\{MODELS\}/$models}
    args=${args//\{TMP\}/$tmp}
    eval "set -- $args"
    printf 'R\0%s\0%s\0' "$tmp" "$#"
    [ $# = 0 ] || printf '%s\0' "$@"
    n=$((n + 1))
  done <"$cases" >>"$log/rows"
}
only=" ${RF_ENTRY_ONLY:-} " skip=" ${RF_ENTRY_SKIP:-} "
for t in "$tests"/cli_*.txt; do
  [ -f "$t" ] || continue
  case "$skip" in *" ${t##*/} "*) continue ;; esac
  [ -z "${RF_ENTRY_ONLY:-}" ] || case "$only" in *" ${t##*/} "*) ;; *) continue ;; esac
  tables+=("$(basename "$t")")
  record "$t" "$log/tmp.${#tables[@]}"
done
[ ${#tables[@]} -gt 0 ] || { echo "FAIL: no tests/cli_*.txt in $tests"; exit 1; }
[ "$n" -gt 0 ] || { echo "FAIL: the tables hold no command line"; exit 1; }
echo "tables: ${tables[*]}"
"$driver" "$bin" "$log/rows" "$log" "${save[@]}" </dev/null
