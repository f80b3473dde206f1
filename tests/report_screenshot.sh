#!/bin/bash
# report_screenshot.sh ROOFLINE: render the HTML report in headless Chromium
# and look at the pixels. The screenshot must be a PNG of exactly the window
# size, not blank (ink on more than 2% of it, many colours); at a phone's
# width the page must not scroll sideways (tables and figures scroll inside
# their own boxes). Exit 77 (skipped) only where Chromium is not installed.
set -u
bin=$1
chrome=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$chrome" ]; then
  echo "SKIP: Chromium not found (Debian: apt-get install chromium; scripts/deps.sh tries)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
flags=(--headless --no-sandbox --disable-gpu --disable-background-networking --no-first-run
       --disable-component-update --disable-sync --hide-scrollbars --force-device-scale-factor=1)
run() { # a fresh profile each time, nothing from the network
  timeout 120 "$chrome" "${flags[@]}" --user-data-dir="$(mktemp -d -p "$tmp")" "$@" 2>>"$tmp/chrome.log"
}

"$bin" report qwen2.5-7b-instruct --hw rtx4090 --batch 1 --context 2048 --tokens 256 \
  -o "$tmp/report.html" || { echo "FAIL: roofline report: exit $?"; exit 1; }

W=1000 H=1400
run --screenshot="$tmp/shot.png" --window-size=$W,$H "file://$tmp/report.html" >/dev/null
[ -s "$tmp/shot.png" ] || { echo "FAIL: no screenshot"; tail -5 "$tmp/chrome.log"; exit 1; }
# PNG signature, then IHDR width and height (big-endian) at bytes 16..23
sig=$(od -A n -t x1 -N 8 "$tmp/shot.png" | tr -d ' \n')
[ "$sig" = 89504e470d0a1a0a ] || bad "not a PNG (signature $sig)"
w=$((16#$(od -A n -t x1 -j 16 -N 4 "$tmp/shot.png" | tr -d ' \n')))
h=$((16#$(od -A n -t x1 -j 20 -N 4 "$tmp/shot.png" | tr -d ' \n')))
[ "$w" = $W ] && [ "$h" = $H ] || bad "screenshot is ${w}x$h, expected ${W}x$H"

# Count the pixels: a page that decodes the PNG onto a canvas (this script
# is the test's, the report has none) and prints what it finds.
{
  echo '<!DOCTYPE html><html><body><pre id="out">pending</pre><script>'
  echo 'const img = new Image();'
  echo 'img.onload = () => { const c = document.createElement("canvas");'
  echo '  c.width = img.width; c.height = img.height; const g = c.getContext("2d");'
  echo '  g.drawImage(img, 0, 0); const d = g.getImageData(0, 0, c.width, c.height).data;'
  echo '  let ink = 0; const colours = new Set();'
  echo '  for (let i = 0; i < d.length; i += 4) {'
  echo '    if (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240) ink++;'
  echo '    colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]); }'
  echo '  document.getElementById("out").textContent = "pixels " + img.width + " " + img.height'
  echo '    + " " + Math.round(1e4 * ink / (d.length / 4)) + " " + colours.size; };'
  echo 'img.onerror = () => { document.getElementById("out").textContent = "undecodable"; };'
  printf 'img.src = "data:image/png;base64,%s";\n' "$(base64 -w0 "$tmp/shot.png")"
  echo '</script></body></html>'
} >"$tmp/pixels.html"
read -r tag pw ph ink colours < <(run --virtual-time-budget=10000 --dump-dom "file://$tmp/pixels.html" |
  grep -o 'pixels [0-9]* [0-9]* [0-9]* [0-9]*')
echo "screenshot ${w}x$h: ink on $((ink / 100)).$((ink % 100))% of pixels, $colours colours"
[ "${tag:-}" = pixels ] || bad "could not decode the screenshot"
[ "${ink:-0}" -gt 200 ] || bad "the page looks blank (ink ${ink:-0}/10000)"
[ "${colours:-0}" -gt 50 ] || bad "the page has only ${colours:-0} colours"

# On a 390 px wide screen the page itself must not scroll sideways.
cat >"$tmp/narrow.html" <<HTML
<!DOCTYPE html><html><body style="margin:0"><pre id="out">pending</pre>
<iframe id="f" src="report.html" style="width:390px;height:800px;border:0"></iframe>
<script>document.getElementById("f").onload = () => {
  const d = document.getElementById("f").contentDocument.documentElement;
  document.getElementById("out").textContent = "narrow " + d.scrollWidth + " " + d.clientWidth; };
</script></body></html>
HTML
read -r tag sw cw < <(run --allow-file-access-from-files --virtual-time-budget=10000 --dump-dom \
  "file://$tmp/narrow.html" | grep -o 'narrow [0-9]* [0-9]*')
echo "at 390 px: page width $sw, window $cw"
[ "${tag:-}" = narrow ] || bad "could not measure the narrow page"
[ "${sw:-1}" -le "${cw:-0}" ] || bad "at 390 px the page scrolls sideways ($sw > $cw)"

[ $fail = 0 ] && echo "report screenshot: all good"
exit $fail
