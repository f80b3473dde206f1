#!/bin/sh
# Install the build into a temporary prefix, then build and run
# tests/pkgconfig/consumer.c against it with nothing but
# `pkg-config --cflags --libs roofline`; with MAN_PAGE=yes the man page
# must be installed under share/man/man1 too.
# usage: tests/pkgconfig/run.sh BUILD_DIR LIBDIR CC MAN_PAGE(yes|no)
set -eu
build=$1
libdir=$2
cc=$3
man=$4
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log" ||
    { cat "$tmp/install.log"; echo "FAIL: cmake --install"; exit 1; }
pc=$tmp/prefix/$libdir/pkgconfig
[ -f "$pc/roofline.pc" ] || { echo "FAIL: no $libdir/pkgconfig/roofline.pc installed"; exit 1; }
if [ "$man" = yes ] && [ ! -f "$tmp/prefix/share/man/man1/roofline.1" ]; then
    echo "FAIL: share/man/man1/roofline.1 not installed"
    exit 1
fi

flags=$(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs roofline) ||
    { echo "FAIL: pkg-config --cflags --libs roofline"; exit 1; }
echo "pkg-config --cflags --libs roofline: $flags"
case "$flags" in *"$tmp/prefix"*) ;; *)
    echo "FAIL: the flags do not point into the prefix installed to ($tmp/prefix)"; exit 1 ;;
esac
# shellcheck disable=SC2086 # the flags are words
"$cc" -std=c11 -o "$tmp/consumer" "$here/consumer.c" $flags ||
    { echo "FAIL: consumer.c does not link with these flags"; exit 1; }
out=$("$tmp/consumer") || { echo "FAIL: consumer exited $?"; exit 1; }
echo "$out"
