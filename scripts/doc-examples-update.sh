#!/bin/sh
# Rewrite, from a fresh run of the built binary, the output (and exit=) of
# every example in README.md and docs/*.md that no longer matches, and each
# file= it writes, in place; examples that still pass (masked figures
# included) are left alone. Then review with `git diff README.md docs/`.
# The markers are described at the top of tests/doc_examples.py and in
# docs/testing.md.
# usage: scripts/doc-examples-update.sh [BUILD_DIR] [FILE.md...]   (default: build)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
[ $# -gt 0 ] && shift
bin=$build/cli/roofline
[ -x "$bin" ] || { echo "doc-examples-update: $bin not built (cmake --build $build)" >&2; exit 2; }
exec python3 "$root/tests/doc_examples.py" --update "$bin" "$root" "$@"
