#!/bin/bash
# Sweep throughput on many devices: bench/sweep.sh (1,048,576 batch x context
# points, CSV to /dev/null, median CPU seconds and points per second) with a
# layout on every run, TP 4 x PP 2 by default: each point is each stage's
# O(1) sweep plus its collectives, a constant (under EP also its experts'
# share, a constant too). Target: above 1 M points/s, as on one device.
# usage: bench/sweep-tp.sh [ROOFLINE] [MODEL] [RUNS] [LAYOUT OPTIONS]
#   e.g. bench/sweep-tp.sh build/cli/roofline mixtral-8x7b 5 '--ep 8 --dp 8'
set -eu
bin=$(realpath "${1:-build/cli/roofline}")
layout=${4:---tp 4 --pp 2}
wrap=$(mktemp)
trap 'rm -f "$wrap"' EXIT
printf '#!/bin/sh\nexec "%s" "$@" %s\n' "$bin" "$layout" >"$wrap"
chmod +x "$wrap"
echo "under $layout:"
"$(dirname "$0")/sweep.sh" "$wrap" "${2:-llama-3-8b}" "${3:-5}"
