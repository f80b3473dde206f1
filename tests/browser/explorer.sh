#!/bin/bash
# explorer.sh ROOFLINE WORKDIR: the report's explorer in headless Chromium
# (explorer_test.js, then explorer_pixels.js on its screenshot).
# puppeteer-core, pinned, comes from the npm registry into WORKDIR/node_modules
# (in the build folder: nothing is written into the sources) the first time.
# Exit 77 (skipped, with the reason) where Chromium, Node.js or npm is
# missing, where the binary has no explorer (built without emcc), or where
# the package cannot be fetched (no network).
set -u
bin=$1 work=$2
here=$(cd "$(dirname "$0")" && pwd)
PUPPETEER=puppeteer-core@24.9.0 # works with Node.js >= 18
chrome=$(command -v chromium || command -v chromium-browser || true)
[ -n "$chrome" ] || { echo "SKIP: Chromium not found (Debian: apt-get install chromium)"; exit 77; }
command -v node >/dev/null || { echo "SKIP: Node.js not found (Debian: apt-get install nodejs)"; exit 77; }
mkdir -p "$work"
if [ ! -f "$work/node_modules/puppeteer-core/package.json" ] ||
   ! grep -q '"version": "24.9.0"' "$work/node_modules/puppeteer-core/package.json"; then
  command -v npm >/dev/null || { echo "SKIP: npm not found (Debian: apt-get install npm)"; exit 77; }
  [ -f "$work/package.json" ] || echo '{"private": true}' >"$work/package.json"
  (cd "$work" && timeout 300 npm install --no-save --no-audit --no-fund --ignore-scripts --loglevel=error \
     "$PUPPETEER" >npm.log 2>&1) ||
    { echo "SKIP: could not install $PUPPETEER from the npm registry:"; tail -3 "$work/npm.log"; exit 77; }
fi
export NODE_PATH=$work/node_modules
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" report llama-3-8b -o "$tmp/report.html" || { echo "FAIL: roofline report: exit $?"; exit 1; }
grep -q 'id="rf-explorer-state"' "$tmp/report.html" ||
  { echo "SKIP: this roofline was built without the explorer (emcc not found)"; exit 77; }
timeout 120 node "$here/explorer_test.js" "$bin" "$chrome" "$tmp/report.html" "$work/explorer.png" ||
  exit 1
timeout 60 node "$here/explorer_pixels.js" "$chrome" "$work/explorer.png" || exit 1
echo "explorer: all good"
