#!/bin/sh
# Rewrite the output of every example in README.md and docs/*.md from a fresh
# run of the built binary (the exit= of each marker and each file= it writes
# too), in place; then review the change with `git diff README.md docs/`.
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
