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

# No two texts of a figure overlap, and none runs off its figure's canvas,
# as rendered: the golden report, a crowded one (MLA and MoE operators, a
# measured overlay), and DeepSeek-V3 in its fp8 checkpoint (the longest
# subtitle, 256 experts).
cat >"$tmp/lab.json" <<'JSON'
{"name": "lab", "bandwidth_bytes_per_s": 1.8e12, "peak_flops_per_s": {"bf16": 2.6e14},
 "ops": [{"name": "q_proj", "phase": "decode", "flops": 8.4e6, "bytes": 8.4e6, "measured_s": 6e-6},
         {"name": "rmsnorm", "phase": "decode", "flops": 1e4, "bytes": 8e3, "measured_s": 2e-6}]}
JSON
"$bin" report deepseek-v2-lite --hw a100-80gb --batch 8 --measured "$tmp/lab.json" \
  -o "$tmp/crowded.html" || bad "roofline report deepseek-v2-lite: exit $?"
"$bin" report "$(cd "$(dirname "$0")" && pwd)/data/models/deepseek-v3.json" --hw h100-sxm \
  -o "$tmp/large.html" || bad "roofline report deepseek-v3: exit $?"
for page in report crowded large; do
  cat >"$tmp/overlap-$page.html" <<HTML
<!DOCTYPE html><html><body style="margin:0"><pre id="out">pending</pre>
<iframe id="f" src="$page.html" style="width:1000px;height:800px;border:0"></iframe>
<script>
// Each text as the quadrilateral it covers (its box through its transform),
// and two convex quadrilaterals overlap unless an edge normal separates them.
const quad = e => { const b = e.getBBox(), m = e.getCTM();
  return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
    .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]); };
const apart = (p, q) => [p, q].some(poly => poly.some(([x1, y1], i) => {
  const [x2, y2] = poly[(i + 1) % 4], nx = y2 - y1, ny = x1 - x2, slack = 0.5 * Math.hypot(nx, ny);
  const a = p.map(([x, y]) => x * nx + y * ny), b = q.map(([x, y]) => x * nx + y * ny);
  return Math.max(...a) <= Math.min(...b) + slack || Math.max(...b) <= Math.min(...a) + slack; }));
document.getElementById("f").onload = () => {
  const doc = document.getElementById("f").contentDocument; const bad = []; let n = 0;
  for (const svg of doc.querySelectorAll("svg")) {
    const t = [...svg.querySelectorAll("text")].map(e => [e.textContent, quad(e)]);
    n += t.length;
    const s = svg.getBoundingClientRect();
    for (const e of svg.querySelectorAll("text")) {
      const r = e.getBoundingClientRect();
      if (r.left < s.left - 0.5 || r.right > s.right + 0.5)
        bad.push("'" + e.textContent + "' off the canvas (" + Math.round(r.left - s.left) + ".."
                 + Math.round(r.right - s.left) + " of " + Math.round(s.width) + " px)");
    }
    for (let i = 0; i < t.length; i++) for (let j = 0; j < i; j++)
      if (!apart(t[i][1], t[j][1])) bad.push("'" + t[i][0] + "' on '" + t[j][0] + "'");
  }
  document.getElementById("out").textContent = "texts " + n + " overlapping " + bad.length + " " + bad.join(", "); };
// (a text off the canvas counts as overlapping: either is unreadable)
</script></body></html>
HTML
  line=$(run --allow-file-access-from-files --virtual-time-budget=10000 --dump-dom \
    "file://$tmp/overlap-$page.html" | grep -o 'texts [0-9]* overlapping [^<]*')
  echo "$page: ${line:-no answer}"
  case "$line" in
    'texts '*' overlapping 0 '*) ;;
    *) bad "$page: texts overlap as rendered (${line:-no answer})" ;;
  esac
done

[ $fail = 0 ] && echo "report screenshot: all good"
exit $fail
