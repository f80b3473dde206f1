#!/bin/sh
# Install the Debian packages roofline needs, if any are missing.
# As root: installs them with apt-get. Otherwise: prints the exact command.
set -eu

# Version-free names only: libclang-rt-dev is llvm-defaults' package for
# the default clang's runtime (libFuzzer), whatever version that clang is.
# scdoc renders the man page (man/roofline.1.scd); python3 runs the docs
# examples and the layer check (tests/doc_examples.py, tests/check_layers.py).
# Open MPI measures clusters (measure --mpi); python3-pytest and python3-cffi
# test the Python binding (python/); emscripten compiles the CLI to
# WebAssembly for the report's explorer, dpkg-dev unpacks the jansson source
# it compiles (apt-get source runs dpkg-source), and chromium runs the
# browser tests. clang-format checks the sources' layout (.clang-format,
# tests/format_check.sh).
PKGS="cmake make gcc pkg-config libjansson-dev libopenblas-dev libcmocka-dev \
libxml2-utils clang clang-format libclang-rt-dev valgrind strace scdoc python3 python3-pytest \
python3-cffi python3-venv libopenmpi-dev openmpi-bin chromium emscripten dpkg-dev"
# The ones a build can go without (the tests that need them skip and say so).
OPTIONAL="chromium emscripten dpkg-dev"

# The WebAssembly explorer compiles jansson from Debian's own source
# package with emcc (the native build links libjansson-dev): fetched once
# into .deps/jansson (git-ignored; cmake/RfWasm.cmake looks there), from a
# deb-src line of the suite the machine already uses. Where it cannot be
# had, `roofline report` writes the static page and the build says why.
fetch_jansson_source() {
  here=$(cd "$(dirname "$0")/.." && pwd)
  [ -f "$here/.deps/jansson/src/dump.c" ] && return 0
  command -v emcc >/dev/null 2>&1 || return 0
  if ! command -v dpkg-source >/dev/null 2>&1; then
    echo "roofline: no dpkg-source to unpack jansson's source for the explorer (Debian: dpkg-dev)" >&2
    return 0
  fi
  if [ "$(id -u)" -ne 0 ] && ! apt-get source --print-uris jansson >/dev/null 2>&1; then
    echo "roofline: no jansson source for the explorer; as root: scripts/deps.sh" >&2
    return 0
  fi
  if ! apt-get source --print-uris jansson >/dev/null 2>&1; then
    src=/etc/apt/sources.list.d/roofline-deb-src.sources
    for f in /etc/apt/sources.list.d/*.sources; do
      [ -f "$f" ] && [ "$f" != "$src" ] && grep -q '^Types: deb$' "$f" &&
        sed 's/^Types: deb$/Types: deb-src/' "$f" > "$src" && break
    done
    [ -f "$src" ] || sed -n 's/^deb /deb-src /p' /etc/apt/sources.list > "${src%.sources}.list" 2>/dev/null || true
    apt-get update -qq || true
  fi
  tmp=$(mktemp -d "$here/.deps.XXXXXX")
  if (cd "$tmp" && apt-get source -qq jansson >/dev/null 2>&1) &&
     d=$(find "$tmp" -maxdepth 1 -type d -name 'jansson-*' | head -n 1) && [ -f "$d/src/dump.c" ]; then
    mkdir -p "$here/.deps" && rm -rf "$here/.deps/jansson" && mv "$d" "$here/.deps/jansson"
    echo "roofline: jansson source for the explorer in .deps/jansson ($(basename "$d"))" >&2
  else
    echo "roofline: apt-get source jansson failed; roofline report will write the static page" >&2
  fi
  rm -rf "$tmp"
  return 0
}

missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing="$missing $p"
done
if [ -z "$missing" ]; then
  fetch_jansson_source
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "roofline: missing Debian packages; run as root:" >&2
  echo "  apt-get update && apt-get install -y$missing" >&2
  exit 1
fi
echo "roofline: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# The optional ones must not fail the whole install where they cannot be
# had (the tests that need them then skip and say so).
core=$(echo "$missing" | tr ' ' '\n' | grep -vxF "$(echo "$OPTIONAL" | tr ' ' '\n')" | tr '\n' ' ')
# A release without the version-free runtime package: the one of the
# clang just installed (libclang-rt-N-dev, or libclang-common-N-dev where
# the runtime still lived there), never a hard-coded N.
rt_by_clang=""
if echo "$core" | grep -q 'libclang-rt-dev' && ! apt-cache show libclang-rt-dev >/dev/null 2>&1; then
  core=$(echo "$core" | sed 's/libclang-rt-dev//')
  rt_by_clang=yes
fi
[ -n "$(echo "$core" | tr -d ' ')" ] && apt-get install -y -qq $core
if [ -n "$rt_by_clang" ]; then
  v=$(clang -dumpversion | cut -d. -f1)
  apt-get install -y -qq "libclang-rt-$v-dev" || apt-get install -y -qq "libclang-common-$v-dev"
fi
for p in $OPTIONAL; do
  case " $missing " in *" $p "*) apt-get install -y -qq "$p" ||
    echo "roofline: $p could not be installed; the tests that need it will skip" >&2 ;; esac
done
fetch_jansson_source
exit 0
