#!/usr/bin/env bash
# recuse: what the RECUSE halt check costs `callus guard` per call. The check is one open()
# of `$CALLUS_HOME/halted/<session>`; this shows that neither other sessions' markers nor the
# check itself move the guard's figures, and what a halted session's block costs.
#
# Cases, each timed RUNS times in the same run (p50/p95, ms), `/bin/true` fed the same stdin
# as the floor: no marker at all; 500 other sessions halted; this session halted (exit 2).
#
# Env: RUNS (default 300), CALLUS_BIN (skip the build, use this binary).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${RUNS:-300}
if [[ -n ${CALLUS_BIN:-} ]]; then
    bin=$CALLUS_BIN
else
    cargo build --release --quiet --manifest-path "$root/Cargo.toml"
    bin=$root/target/release/callus
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/repo/.git" "$tmp/clean" "$tmp/others/halted" "$tmp/self/halted"
for i in $(seq 1 500); do echo "RECUSE halt; reason=bench" >"$tmp/others/halted/other-$i"; done
echo "RECUSE halt; reason=operator-request; id=bench" >"$tmp/self/halted/bench"
printf '{"session_id":"bench","transcript_path":"/dev/null","cwd":"%s","prompt_id":"p1","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la"},"tool_use_id":"toolu_bench"}' \
    "$tmp/repo" >"$tmp/payload.json"

# time_case HOME CMD… → "p50 p95" in ms
time_case() {
    local home=$1 i t0 t1
    shift
    local -a samples=()
    for ((i = 0; i < runs; i++)); do
        t0=$EPOCHREALTIME
        CALLUS_HOME=$home "$@" <"$tmp/payload.json" >/dev/null 2>&1 || true
        t1=$EPOCHREALTIME
        samples+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) * 1000 }')")
    done
    printf '%s\n' "${samples[@]}" | sort -n | awk '{ v[NR] = $1 } END {
        printf "%.2f %.2f", v[int(NR * 0.5) + 1], v[int(NR * 0.95) + 1] }'
}

floor=$(time_case "$tmp/clean" /bin/true)
clean=$(time_case "$tmp/clean" "$bin" guard)
others=$(time_case "$tmp/others" "$bin" guard)
self=$(time_case "$tmp/self" "$bin" guard)
CALLUS_HOME=$tmp/self "$bin" guard <"$tmp/payload.json" >/dev/null 2>&1 && {
    echo "recuse: the halted session was not blocked" >&2
    exit 1
}

row() { # row LABEL "p50 p95"
    local p50 p95 f50
    read -r p50 p95 <<<"$2"
    read -r f50 _ <<<"$floor"
    printf '  %-40s %8s %8s %10s\n' "$1" "$p50" "$p95" "$(awk -v a="$p50" -v b="$f50" 'BEGIN { printf "%+.2f", a - b }')"
}
printf 'recuse: halt check on the guard hot path, %s calls per case, %s cores\n' "$runs" "$(nproc)"
printf '  %-40s %8s %8s %10s\n' "case" "p50 ms" "p95 ms" "vs floor"
row "/bin/true (floor)" "$floor"
row "guard, no session halted" "$clean"
row "guard, 500 other sessions halted" "$others"
row "guard, this session halted (blocks)" "$self"
