#!/bin/sh
# test_threads.py (8 threads at once through rf_cli_run, each result
# against the serial one) on a library built with -fsanitize=address (the
# Asan build, `make asan`). The interpreter is not built with it, so the
# compiler's own libasan is preloaded into it, first of its libraries as
# ASan requires; leaks are not looked for (CPython keeps memory to its end
# by design). Skipped (77) as run_pytest.sh is without pytest.
# usage: run_asan.sh CC ROOFLINE LIBROOFLINE_CLI
set -u
here=$(cd "$(dirname "$0")" && pwd)
asan=$("$1" -print-file-name=libasan.so)
case $asan in
  /*) ;;
  *) echo "python_threads_asan: $1 names no libasan.so"; exit 1 ;;
esac
ASAN_OPTIONS=detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS} RF_PYTEST_PRELOAD=$asan \
  exec sh "$here/run_pytest.sh" "$2" "$3" tests/test_threads.py
