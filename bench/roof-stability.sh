#!/bin/bash
# Issue 28's check of the headline memory roof: three back-to-back
# `roofline-lab measure --quick` runs, each one's roof (the most a DRAM
# burst read: what every floor uses), its typical best (median of the
# bursts' best) and the interquartile range of the bursts' best it prints.
# The runs agree when the spread of their three roofs, (max - min) /
# median, is within the narrowest relative IQR any of them printed (each
# run's spread holds the others). Prints the
# load before each run; exit 1 when they disagree. Run it on a quiet
# machine: on a shared one the roof moves by tens of percent in minutes
# (docs/measure.md).
# usage: bench/roof-stability.sh [BUILD_DIR] [RUNS]
set -eu
cd "$(dirname "$0")/.."
lab=${1:-build}/cli/roofline-lab
runs=${2:-3}
[ -x "$lab" ] || { echo "roof-stability: $lab not built" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for i in $(seq 1 "$runs"); do
    echo "run $i: load before $(cut -d' ' -f1-3 /proc/loadavg)"
    "$lab" measure --quick -o "$dir/p$i.json" >/dev/null
done
python3 - "$dir" "$runs" <<'PY'
import json, statistics, sys
d, n = sys.argv[1], int(sys.argv[2])
roofs, widths = [], []
print(f"{'run':>3} {'roof GB/s':>10} {'typical':>8} {'IQR (bursts best)':>20} {'IQR/typical':>11}")
for i in range(1, n + 1):
    p = json.load(open(f"{d}/p{i}.json"))
    b = sorted(p["dram_bursts"]["burst_best"])
    q = statistics.quantiles(b, n=4, method="inclusive")
    typ = statistics.median(b)
    roofs.append(p["bandwidth_bytes_per_s"])
    widths.append((q[2] - q[0]) / typ)
    print(f"{i:>3} {roofs[-1]/1e9:>10.2f} {typ/1e9:>8.2f} {q[0]/1e9:>9.2f} - {q[2]/1e9:>6.2f} "
          f"{100*widths[-1]:>10.1f}%")
spread = (max(roofs) - min(roofs)) / statistics.median(roofs)
ok = spread <= min(widths)
print(f"roofs' spread {100*spread:.1f}% against the narrowest printed IQR {100*min(widths):.1f}%: "
      f"{'within' if ok else 'OUTSIDE'}")
sys.exit(0 if ok else 1)
PY
