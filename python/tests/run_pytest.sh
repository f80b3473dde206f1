#!/bin/sh
# The Python package's tests (python/tests/) with the first interpreter
# that has pytest: $RF_PYTHON when set, then Debian's /usr/bin/python3
# (python3-pytest), then python3 on the PATH. None: skipped (exit 77) with
# the reason. The package is imported from the source tree, the library
# is the build's, the binary the one its helpers are compared with. TESTS:
# the test files to run (default all of tests/); $RF_PYTEST_PRELOAD, when
# set, is the interpreter's LD_PRELOAD (a sanitizer's runtime: run_asan.sh).
# usage: run_pytest.sh ROOFLINE LIBROOFLINE_CLI [TESTS...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
py=
for cand in ${RF_PYTHON:-} /usr/bin/python3 python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import pytest' 2>/dev/null; then
    py=$cand
    break
  fi
done
if [ -z "$py" ]; then
  echo "python_pytest: skipped: no python3 with pytest (Debian package python3-pytest)"
  exit 77
fi
echo "python_pytest: $py ($("$py" --version 2>&1))"
cd "$here/.." || exit 1
bin=$1 lib=$2
shift 2
[ $# -gt 0 ] || set -- tests
ROOFLINE_BIN=$bin ROOFLINE_CLI_LIB=$lib PYTHONPATH=$here/.. PYTHONDONTWRITEBYTECODE=1 \
  LD_PRELOAD=${RF_PYTEST_PRELOAD:-${LD_PRELOAD:-}} \
  exec "$py" -m pytest -q -p no:cacheprovider "$@"
