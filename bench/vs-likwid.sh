#!/bin/sh
# vs-likwid.sh - `roofline measure` against likwid-bench on the same thread
# count, in alternating pairs; prints each of our figures over likwid's as
# a ratio, the median over pairs, and how far our best figures moved
# between runs.
#
#   bench/vs-likwid.sh [ROOFLINE] [PAIRS] [THREADS]
#     ROOFLINE  the binary (default build/cli/roofline)
#     PAIRS     measure/likwid pairs, at least 3 (default 3)
#     THREADS   threads for both (default: one per core, as measure uses)
#
# Installs Debian's likwid (and python3, to read the JSON) when missing.
# Pairs:  ours                          likwid-bench
#         DRAM roof (best read, 512 MiB) load_avx            -w N:1GB:T
#         copy at DRAM                   copy_avx            -w N:1GB:T
#         copy_nt at DRAM                copy_mem_avx        -w N:1GB:T
#         triad_nt at DRAM               stream_mem_avx_fma  -w N:1GB:T
#         fp64 FMA peak                  peakflops_avx_fma   -w N:32kB:T (L1)
#         fp32 FMA peak                  peakflops_sp_avx_fma -w N:32kB:T (L1)
# Both count bytes as the algorithm moves them (no write-allocate).
set -eu

ROOFLINE=${1:-build/cli/roofline}
PAIRS=${2:-3}
[ "$PAIRS" -ge 3 ] || { echo "vs-likwid: at least 3 pairs" >&2; exit 2; }
[ -x "$ROOFLINE" ] || { echo "vs-likwid: $ROOFLINE is not built (make build)" >&2; exit 2; }

need() { # need COMMAND PACKAGE
    command -v "$1" >/dev/null 2>&1 && return 0
    echo "vs-likwid: installing $2" >&2
    if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
    $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq "$2" >/dev/null
}
need likwid-bench likwid
need python3 python3-minimal

# Threads: what `roofline measure` chooses (one per core) unless given.
THREADS=${3:-$(python3 -c '
import os
cpus = sorted(os.sched_getaffinity(0)); seen = set()
for c in cpus:
    try:
        core = open(f"/sys/devices/system/cpu/cpu{c}/topology/core_id").read().strip()
        pkg = open(f"/sys/devices/system/cpu/cpu{c}/topology/physical_package_id").read().strip()
    except OSError:
        core, pkg = str(c), "0"
    seen.add((pkg, core))
print(len(seen))')}

OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

likwid() { # likwid TEST SIZE -> MByte/s or MFlops/s as one number (per second units)
    likwid-bench -t "$1" -w "N:$2:$THREADS" 2>/dev/null |
        awk -v flops="$3" '
            flops == 1 && /^MFlops\/s:/ { print $2 * 1e6 }
            flops == 0 && /^MByte\/s:/  { print $2 * 1e6 }'
}

i=1
while [ "$i" -le "$PAIRS" ]; do
    echo "pair $i of $PAIRS: roofline measure --threads $THREADS" >&2
    "$ROOFLINE" measure --threads "$THREADS" --json >"$OUT/ours.$i.json"
    echo "pair $i of $PAIRS: likwid-bench" >&2
    {
        echo "load_avx $(likwid load_avx 1GB 0)"
        echo "copy_avx $(likwid copy_avx 1GB 0)"
        echo "copy_mem_avx $(likwid copy_mem_avx 1GB 0)"
        echo "stream_mem_avx_fma $(likwid stream_mem_avx_fma 1GB 0)"
        echo "peakflops_avx_fma $(likwid peakflops_avx_fma 32kB 1)"
        echo "peakflops_sp_avx_fma $(likwid peakflops_sp_avx_fma 32kB 1)"
    } >"$OUT/likwid.$i.txt"
    i=$((i + 1))
done

python3 - "$OUT" "$PAIRS" "$THREADS" <<'EOF'
import json, statistics, sys
out, pairs, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def ours(p):
    def kernel(op, level):
        name = f"{op}_{p['isa']}_f64"
        best = [k["best"] for k in p["kernels"] if k["name"] == name and k["level"] == level]
        return max(best) if best else float("nan")
    return {
        "DRAM roof (read)": p["bandwidth_bytes_per_s"],
        "copy, DRAM": kernel("copy", "DRAM"),
        "copy_nt, DRAM": kernel("copy_nt", "DRAM"),
        "triad_nt, DRAM": kernel("triad_nt", "DRAM"),
        "fp64 peak": p["peak_flops_per_s"]["fp64"],
        "fp32 peak": p["peak_flops_per_s"]["fp32"],
    }

likwid_of = {
    "DRAM roof (read)": "load_avx", "copy, DRAM": "copy_avx", "copy_nt, DRAM": "copy_mem_avx",
    "triad_nt, DRAM": "stream_mem_avx_fma", "fp64 peak": "peakflops_avx_fma",
    "fp32 peak": "peakflops_sp_avx_fma",
}
rows, theo = {k: [] for k in likwid_of}, []
best = {"DRAM roof (read)": [], "fp32 peak": []}
for i in range(1, pairs + 1):
    p = json.load(open(f"{out}/ours.{i}.json"))
    lk = {}
    for line in open(f"{out}/likwid.{i}.txt"):
        parts = line.split()
        lk[parts[0]] = float(parts[1]) if len(parts) > 1 else float("nan")
    o = ours(p)
    for k, t in likwid_of.items():
        rows[k].append((o[k], lk[t]))
    theo.append(p["peak_flops_per_s"]["fp32"] / p["theoretical_flops_per_s"]["fp32"])
    for k in best:
        best[k].append(o[k])

def fmt(v, k):
    return f"{v / 1e9:8.2f} {'GFLOP/s' if 'peak' in k else 'GB/s   '}"

print(f"roofline measure vs likwid-bench, {threads} threads, median of {pairs} pairs")
print(f"{'figure':18} {'likwid-bench':22} {'ours (median)':>16} {'likwid (median)':>17} {'ratio':>6}")
for k, t in likwid_of.items():
    ratios = [a / b for a, b in rows[k] if b == b and b > 0]
    r = statistics.median(ratios) if ratios else float("nan")
    print(f"{k:18} {t:22} {fmt(statistics.median(a for a, _ in rows[k]), k):>16} "
          f"{fmt(statistics.median(b for _, b in rows[k]), k):>17} {r:6.3f}")
print(f"{'fp32 peak':18} {'theoretical at clock':22} {'':>16} {'':>17} {statistics.median(theo):6.3f}")
for k, v in best.items():
    print(f"{k} over {pairs} runs: {', '.join(fmt(x, k).strip() for x in v)}; "
          f"spread (max - min) / max = {(max(v) - min(v)) / max(v):.1%}")
EOF
