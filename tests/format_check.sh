#!/bin/sh
# format_check.sh - every C source and header of the tree as .clang-format
# writes it (clang-format --dry-run -Werror): the format was applied to the
# whole tree in one commit, and this keeps it so. The files are git's
# tracked ones where ROOT is a checkout, else every *.c, *.h and *.cu under
# the source folders; tests/data (inputs the tests read as they are) stays
# out. Skipped (77) without clang-format (Debian package clang-format).
# usage: format_check.sh ROOT
set -u
root=${1:?usage: format_check.sh ROOT}
cd "$root" || exit 1
command -v clang-format >/dev/null 2>&1 || {
  echo "format_check: skipped: no clang-format (Debian package clang-format)"
  exit 77
}
if [ -d .git ] && command -v git >/dev/null 2>&1; then
  files=$(git ls-files '*.c' '*.h' '*.cu' | grep -v '^tests/data/')
else
  files=$(find include src cli wasm tests fuzz bench tools python \
    \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) -not -path 'tests/data/*' 2>/dev/null)
fi
n=$(echo "$files" | wc -l)
# shellcheck disable=SC2086 # one file a word: no path has a blank
if out=$(clang-format --dry-run -Werror $files 2>&1); then
  echo "format_check: $n files as .clang-format writes them"
  exit 0
fi
echo "$out" | grep -E '^[^ ].*(warning|error):' | sed 's/: .*//' | sort -u | head -20
echo "format_check: files above differ from .clang-format's layout; run clang-format -i on them"
exit 1
