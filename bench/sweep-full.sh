#!/bin/bash
# Sweep throughput under the full traffic model: bench/sweep.sh (1,048,576
# batch x context points, CSV to /dev/null, median CPU seconds and points
# per second) with `--traffic full --naive` on every run, so each layer has
# its three attention rows, each affine in the keys. Target:
# above 1 M points/s, O(1) a point as under the compulsory model.
# usage: bench/sweep-full.sh [ROOFLINE] [MODEL] [RUNS]
set -eu
bin=$(realpath "${1:-build/cli/roofline}")
wrap=$(mktemp)
trap 'rm -f "$wrap"' EXIT
printf '#!/bin/sh\nexec "%s" "$@" --traffic full --naive\n' "$bin" >"$wrap"
chmod +x "$wrap"
echo "under --traffic full --naive:"
"$(dirname "$0")/sweep.sh" "$wrap" "${2:-llama-3-8b}" "${3:-5}"
