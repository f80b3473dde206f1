#!/bin/sh
# `pip install ./python` into a fresh venv, offline (the package's build
# backend needs nothing from an index: pyproject.toml), with the build's
# library bundled (ROOFLINE_CLI_LIB at install time); then, from another
# folder and with ROOFLINE_CLI_LIB unset, the installed package must load
# the library beside it and print the CLI's tokens/s for llama-3-8b at
# batch 64, context 1024 (the book chapter's decode step: 64 / 7.04455 ms).
# Skipped (exit 77) without python3's venv module or its bundled pip.
# usage: venv_install.sh ROOFLINE LIBROOFLINE_CLI
set -u
bin=$1 lib=$2
case "$bin" in /*) ;; *) bin=$PWD/$bin ;; esac
case "$lib" in /*) ;; *) lib=$PWD/$lib ;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
py=
for cand in ${RF_PYTHON:-} python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null 2>&1 && "$cand" -c 'import venv, ensurepip' 2>/dev/null; then
    py=$cand
    break
  fi
done
[ -n "$py" ] || { echo "venv_install: skipped: no python3 with venv and ensurepip (python3-venv)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the source copied, so the build writes nothing into the repository
cp -R "$src" "$tmp/src"
rm -rf "$tmp/src/tests/__pycache__" "$tmp/src/roofline/__pycache__"
"$py" -m venv "$tmp/venv" || { echo "FAIL: $py -m venv"; exit 1; }
ROOFLINE_CLI_LIB=$lib PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
  "$tmp/venv/bin/python" -m pip install -q "$tmp/src" >"$tmp/pip.log" 2>&1 ||
  { cat "$tmp/pip.log"; echo "FAIL: pip install ./python"; exit 1; }
cd "$tmp" || exit 1
got=$(env -u ROOFLINE_CLI_LIB "$tmp/venv/bin/python" -c \
  "import roofline; print(roofline.step('llama-3-8b', batch=64, context=1024)['tokens_per_s'])") ||
  { echo "FAIL: import roofline in the venv"; exit 1; }
want=$("$bin" step llama-3-8b --batch 64 --context 1024 --json |
  sed -n 's/^ *"tokens_per_s": \([^,]*\),*$/\1/p')
where=$(env -u ROOFLINE_CLI_LIB "$tmp/venv/bin/python" -c "import roofline; print(roofline.library_path())")
echo "venv ($("$py" --version 2>&1)): roofline.step(...)['tokens_per_s'] = $got; CLI --json: $want"
echo "library: $where"
case "$where" in "$tmp/venv/"*) ;; *) echo "FAIL: the library is not the one installed beside the package"; exit 1 ;; esac
[ "$got" = "$want" ] && [ "$got" = 9085.03392151 ] || { echo "FAIL: figures differ"; exit 1; }
