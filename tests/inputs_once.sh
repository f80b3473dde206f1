#!/bin/sh
# Each input is read once a command (issue 25 item 3): the --hw profile of
# `report --predict` resolves the roof, the calibration and Figure 1's
# sustained memory roof, and a config.json MODEL the model, from one open of
# each file; so do step --predict, plot and the lab's profile --predict. strace counts the opens (openat, and open where it is a system
# call of its own); without strace, or where it may not trace (a container
# without ptrace), the test is skipped (exit 77).
# usage: inputs_once.sh ROOFLINE SOURCE_DIR
set -u
bin=$1
src=$2
command -v strace >/dev/null 2>&1 || { echo "skipped: no strace"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
strace -f -o "$tmp/probe" true >/dev/null 2>&1 || { echo "skipped: strace may not trace here"; exit 77; }
# LeakSanitizer cannot run under ptrace: an ASan build's leak check is
# make asan's other tests' job, not this one's
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS
fails=0
profile=$src/tests/data/profile/calibrated.json
model=$src/tests/data/models/llama-3-70b.json

# once FILE ARGS... runs roofline ARGS under strace and fails unless the
# command exited 0 having opened FILE exactly once. A report whose page
# carries the explorer (a build with emcc) embeds the text of the files its
# command line names for the page's module to read again: one open more,
# the page's copy, allowed and said (cmd_report.c's add_explorer)
once() {
    file=$1
    shift
    allowed=1
    case "$1" in report) [ "$explorer" = yes ] && allowed=2 ;; esac
    if ! strace -f -qq -e trace=open,openat -o "$tmp/trace" "$bin" "$@" >"$tmp/out" 2>&1; then
        echo "FAIL: roofline $* exited non-zero:"
        sed 's/^/    /' "$tmp/out" | tail -5
        fails=$((fails + 1))
        return
    fi
    n=$(grep -c "\"$file\"" "$tmp/trace")
    if [ "$n" -ne "$allowed" ]; then
        echo "FAIL: roofline $*: $file opened $n times, not $allowed"
        fails=$((fails + 1))
    elif [ "$allowed" -eq 2 ]; then
        echo "roofline $*: $file opened once to compute, once for the explorer's copy"
    fi
}

# does this build's report carry the explorer?
"$bin" report llama-3-8b -o "$tmp/probe.html" >/dev/null 2>&1
explorer=no
grep -q 'id="rf-explorer-state"' "$tmp/probe.html" 2>/dev/null && explorer=yes
echo "report's page carries the explorer: $explorer"

once "$profile" report llama-3-8b --hw "$profile" --predict -o "$tmp/report.html"
once "$profile" step llama-3-8b --hw "$profile" --predict
once "$profile" plot llama-3-8b --hw "$profile" -o "$tmp/figure.svg"
once "$model" report "$model" --hw "$profile" --predict -o "$tmp/70b.html"
# the lab's profile takes the calibration before the roof (roofline-lab, by
# exec: strace -f follows it)
once "$profile" profile "$src/tests/data/profile/tiny-llama.json" --layers 1 --context 8 \
    --steps 2 --hw "$profile" --predict

[ "$fails" -eq 0 ] || exit 1
echo "ok: report --predict, step --predict, plot and profile --predict open the --hw profile once; report a config.json once"
