#!/bin/sh
# Three promises of the build, each checked by configuring for real:
#   - an in-source build is refused, with a message saying what to do;
#   - cmocka is looked for only when tests are built: with cmocka hidden
#     from pkg-config, -DBUILD_TESTING=OFF configures and -DBUILD_TESTING=ON
#     fails naming it (which shows cmocka really was hidden);
#   - compile_commands.json is written beside the build.
# usage: tests/build_rules.sh SOURCE_DIR
set -u
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# In-source: the refusal comes first, so the top-level file alone shows it
# (a copy: the real tree must not receive CMake's files).
mkdir "$tmp/insrc"
cp "$src/CMakeLists.txt" "$tmp/insrc/"
if cmake -S "$tmp/insrc" -B "$tmp/insrc" > "$tmp/insrc.log" 2>&1; then
    fail "an in-source configure succeeded"
elif ! grep -q "in-source builds are refused" "$tmp/insrc.log"; then
    cat "$tmp/insrc.log"
    fail "an in-source configure failed without saying why"
fi

# pkg-config that sees jansson and openblas but not cmocka.
mkdir "$tmp/pc"
for p in jansson openblas; do
    d=$(pkg-config --variable=pcfiledir "$p") || { fail "pkg-config cannot find $p"; continue; }
    ln -s "$d/$p.pc" "$tmp/pc/$p.pc"
done
if PKG_CONFIG_LIBDIR=$tmp/pc PKG_CONFIG_PATH= cmake -S "$src" -B "$tmp/off" \
       -DBUILD_TESTING=OFF -DRF_WITH_CUDA=OFF > "$tmp/off.log" 2>&1; then
    [ -f "$tmp/off/compile_commands.json" ] ||
        fail "no compile_commands.json in the build folder"
else
    cat "$tmp/off.log"
    fail "-DBUILD_TESTING=OFF does not configure without cmocka"
fi
if PKG_CONFIG_LIBDIR=$tmp/pc PKG_CONFIG_PATH= cmake -S "$src" -B "$tmp/on" \
       -DBUILD_TESTING=ON -DRF_WITH_CUDA=OFF > "$tmp/on.log" 2>&1; then
    fail "-DBUILD_TESTING=ON configured with cmocka hidden: this test hides nothing"
elif ! grep -q cmocka "$tmp/on.log"; then
    cat "$tmp/on.log"
    fail "-DBUILD_TESTING=ON failed, but not for cmocka"
fi

[ "$fails" -eq 0 ] || exit 1
echo "ok: in-source refused; BUILD_TESTING=OFF needs no cmocka, ON asks for it; compile_commands.json written"
