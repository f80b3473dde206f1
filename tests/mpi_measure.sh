#!/bin/sh
# mpi_measure.sh - `measure --mpi` end to end on this machine:
#   1. mpirun -np 2 ... measure --mpi --quick -o c.json succeeds in < 60 s;
#   2. the profile has 1 node with 2 ranks and the four collectives (in a
#      node) with their points and fits; every latency fit < 100 us;
#   3. its 64 MiB all-reduce bus bandwidth is within 2x of what the plain
#      MPI_Allreduce loop (mpi_allreduce_loop.c) measures in the same run:
#      at least half the slowest of 3 runs of it and at most twice the
#      fastest (this machine is shared: one run against one run moved by
#      more than 2x under a parallel ctest);
#   4. step llama-3-8b --hw c.json --tp 2 --json costs its collectives on
#      the measured link and says so;
#   5. a rank past --timeout makes every rank exit non-zero, with a line
#      naming the rank and the cause, and no profile is written;
#   6. outside mpirun, --mpi measures a one-rank cluster and says so;
#   7. the 64 MiB all-reduce predicted from the measured table is within
#      25% of the loop's.
# usage: mpi_measure.sh ROOFLINE LOOP MPIRUN PYTHON3
# Exit 77 (skipped) without mpirun. Open MPI keeps some allocations to the
# end of the process, which LeakSanitizer reports in a sanitizer build:
# tests/mpi_lsan.supp names its libraries (LSAN_OPTIONS below); for the
# reports to name them, the stacks are unwound in full (Open MPI is built
# without frame pointers) and its components are not unloaded at
# MPI_Finalize (mca_base_component_disable_dlclose). None of it changes a
# release build's run.
set -u
roofline=$1
loop=$2
mpirun=$3
py=$4
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$mpirun" ]; then
    echo "mpi_measure: skipped: mpirun not found (Debian package openmpi-bin)"
    exit 77
fi
export LSAN_OPTIONS="suppressions=$here/mpi_lsan.supp:print_suppressions=0"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
export OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
# as root mpirun refuses to start without --allow-run-as-root; 2 ranks on a
# machine of fewer cores need --oversubscribe
run="$mpirun --allow-run-as-root --oversubscribe -np 2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# the load before the timed runs: check 7 compares two timings taken
# minutes apart, which only a quiet machine keeps comparable
load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
cores=$(nproc 2>/dev/null || echo 1)
echo "load before the timed runs: $load on $cores cores"
start=$(date +%s)
$run "$roofline" measure --mpi --quick -o "$tmp/c.json" > "$tmp/table.txt" 2> "$tmp/err.txt"
rc=$?
[ $rc = 0 ] || { cat "$tmp/err.txt"; fail "mpirun -np 2 roofline measure --mpi --quick exited $rc"; }
took=$(($(date +%s) - start))
echo "measure --mpi --quick on 2 ranks: $took s"
[ "$took" -lt 60 ] || fail "measure --mpi --quick took $took s (60 s allowed)"

runs=""
for i in 1 2 3; do
    b=$($run "$loop") || fail "mpi_allreduce_loop exited $?"
    runs="$runs $b"
done
echo "MPI_Allreduce loop, 64 MiB, 3 runs: busbw$runs B/s"

"$py" - "$tmp/c.json" $runs <<'EOF' || exit 1
import json, sys
c = json.load(open(sys.argv[1]))["cluster"]
loop = [float(b) for b in sys.argv[2:]]
def check(ok, what):
    if not ok:
        print("FAIL:", what)
        sys.exit(1)
check(c["ranks"] == 2, f"cluster.ranks {c['ranks']}, 2 expected")
check(len(c["nodes"]) == 1 and c["nodes"][0]["ranks"] == 2,
      f"nodes {c['nodes']}: one node of 2 ranks expected")
check(c["nodes"][0]["bandwidth_bytes_per_s"] > 0, "the node has no measured roof")
kinds = sorted(l["collective"] for l in c["links"])
check(kinds == ["all-gather", "all-reduce", "all-to-all", "send"], f"collectives {kinds}")
for l in c["links"]:
    name = f"{l['collective']} ({l['class']})"
    check(l["class"] == "intra-node" and l["ranks"] == 2, f"{name}: 2 ranks in a node expected")
    # --quick: 16 B to 64 MiB by 4 = 16 x 4^0 .. 16 x 4^11, 12 sizes
    check(len(l["points"]) == 12, f"{name}: {len(l['points'])} points, 12 expected")
    check(l["bandwidth_bytes_per_s"] > 0 and l["residual"] >= 0, f"{name}: no fit")
    check(l["latency_s"] < 100e-6, f"{name}: latency fit {l['latency_s']} s, < 100 us expected")
    print(f"{name}: latency {l['latency_s'] * 1e6:.2f} us, bus bandwidth "
          f"{l['bandwidth_bytes_per_s'] / 1e9:.3f} GB/s, rms residual {l['residual']:.1%}")
ar = next(l for l in c["links"] if l["collective"] == "all-reduce")
p = next(p for p in ar["points"] if p["bytes"] == 64 << 20)
r_slow, r_fast = p["busbw_bytes_per_s"] / min(loop), p["busbw_bytes_per_s"] / max(loop)
print(f"all-reduce 64 MiB: busbw {p['busbw_bytes_per_s']:.4g} B/s, {r_fast:.2f} to {r_slow:.2f} x the loop's")
check(r_slow >= 0.5 and r_fast <= 2,
      f"64 MiB all-reduce busbw {r_fast:.2f} to {r_slow:.2f} x the plain loop's runs "
      "(at least 0.5 x the slowest, at most 2 x the fastest)")
EOF

"$roofline" step llama-3-8b --hw "$tmp/c.json" --tp 2 --json > "$tmp/step.json" ||
    fail "step llama-3-8b --hw c.json --tp 2 --json exited $?"
"$py" - "$tmp/step.json" <<'EOF' || exit 1
import json, sys
s = json.load(open(sys.argv[1]))
text = json.dumps(s)
rows = s["collectives"]
if not rows:
    print("FAIL: no collective rows in step --tp 2 --json")
    sys.exit(1)
for r in rows:
    if "measured 16 B-64 MiB" not in r["link"]:
        print(f"FAIL: {r.get('name')} is costed on '{r['link']}', not the measured link")
        sys.exit(1)
if "measured with MPI on 1 node, 2 ranks" not in text:
    print("FAIL: step --tp 2 does not say where its links come from")
    sys.exit(1)
print(f"step --tp 2: {len(rows)} collectives on the measured link")
EOF

# 7. the 64 MiB all-reduce predicted from the measured table (issue 28,
#    item 5) within 25% of the plain loop's (the median of its 3 runs): a
#    prefill of 8192 tokens of llama-3-8b at TP 2 all-reduces 8192 x 4096
#    x 2 bytes (bf16) = 64 MiB a layer; on 2 ranks the bus factor is 1, so
#    the loop's time is 64 MiB / its busbw. The alpha-beta fit's figure is
#    printed beside it (it was 6.45x off on this VM).
check7() { # check7 PROFILE RUNS...: 0 within 25% (or not judged), 3 outside, else 1
    prof=$1
    shift
    "$roofline" step llama-3-8b --hw "$prof" --tp 2 --phase prefill --tokens 8192 --json \
        > "$tmp/prefill.json" || fail "step --tp 2 --phase prefill --tokens 8192 exited $?"
    "$py" - "$tmp/prefill.json" "$prof" "$load" "$cores" "$@" <<'EOF'
import json, statistics, sys
s = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))["cluster"]
load, cores = float(sys.argv[3]), int(sys.argv[4])
loop = statistics.median(float(b) for b in sys.argv[5:])
row = next(r for r in s["collectives"] if r["kind"] == "all-reduce")
n = row["bytes"] / row["count"]
if n != 64 << 20:
    print(f"FAIL: the prefill's all-reduce is {n} bytes, not 64 MiB")
    sys.exit(1)
pred, meas = row["floor_s"] / row["count"], n / loop
ar = next(l for l in c["links"] if l["collective"] == "all-reduce")
fit = ar["latency_s"] + n / ar["bandwidth_bytes_per_s"]
print(f"all-reduce 64 MiB: predicted {pred * 1e3:.2f} ms from the table, measured {meas * 1e3:.2f} ms "
      f"(loop median), ratio {pred / meas:.2f}; the alpha-beta fit alone {fit * 1e3:.2f} ms "
      f"(ratio {fit / meas:.2f}, fit rms residual {ar['residual']:.0%})")
if load > cores:
    # two processes a rank pair spin on 2 cores: timings minutes apart on a
    # busy machine differ by more than the check allows (0.65 at load 8)
    print(f"check 7 not judged: load {load} on {cores} cores before the timed runs "
          "(the 25% comparison needs a quiet machine; CI runs alone)")
elif not 0.75 <= pred / meas <= 1.25:
    print(f"predicted 64 MiB all-reduce {pred / meas:.2f} x the measured (within 25% expected, "
          f"load {load} on {cores} cores)")
    sys.exit(3)
EOF
}
# A VM's shared-memory bandwidth moves between runs seconds apart (the
# table and the loop read 0.41 and 0.27 to 0.30 GB/s in one CI run): once
# outside, the table and the loop are timed again, back to back, and the
# second pair is judged.
check7 "$tmp/c.json" $runs
rc=$?
if [ "$rc" = 3 ]; then
    echo "check 7: outside 25%: the table and the loop timed once more"
    $run "$roofline" measure --mpi --quick -o "$tmp/c2.json" > /dev/null 2>&1 ||
        fail "mpirun -np 2 roofline measure --mpi --quick (again) exited $?"
    runs2=""
    for i in 1 2 3; do
        b=$($run "$loop") || fail "mpi_allreduce_loop exited $?"
        runs2="$runs2 $b"
    done
    check7 "$tmp/c2.json" $runs2
    rc=$?
    [ "$rc" = 3 ] && fail "the predicted 64 MiB all-reduce outside 25% of the loop twice"
fi
[ "$rc" = 0 ] || exit 1

$run "$roofline" measure --mpi --quick --timeout 1 -o "$tmp/t.json" > /dev/null 2> "$tmp/t.err"
rc=$?
[ "$rc" -ne 0 ] || fail "a rank past --timeout 1: mpirun exited 0"
grep -q "roofline measure: rank [01]: timed out after 1 s (measuring the node's roof)" \
    "$tmp/t.err" || { cat "$tmp/t.err"; fail "no line naming the rank that timed out"; }
[ ! -e "$tmp/t.json" ] || fail "a failed run left a profile"
ls "$tmp" | grep -q '^\.' && fail "a failed run left a temporary file"
echo "--timeout 1: exit $rc, $(grep -c 'timed out' "$tmp/t.err") rank(s) named, no profile"

"$roofline" measure --mpi --quick -o "$tmp/one.json" > "$tmp/one.txt" 2> "$tmp/one.err"
rc=$?
[ $rc = 0 ] || { cat "$tmp/one.err"; fail "measure --mpi outside mpirun exited $rc"; }
grep -q "one rank (not started by mpirun -np N): a cluster of one node, its roof only, no links" \
    "$tmp/one.err" || { cat "$tmp/one.err"; fail "outside mpirun --mpi does not say so"; }
"$py" -c 'import json,sys; c=json.load(open(sys.argv[1]))["cluster"]; sys.exit(not (c["ranks"] == 1 and len(c["nodes"]) == 1 and c["links"] == []))' \
    "$tmp/one.json" || fail "outside mpirun: not a one-rank cluster without links"
echo "outside mpirun: a one-rank cluster, roof only"
echo "mpi_measure: ok"
