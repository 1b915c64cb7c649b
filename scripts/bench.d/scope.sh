#!/usr/bin/env bash
# scope: how long `callus scope declare` takes to fingerprint a 50,000-file tree (budget 5 s),
# against `find DIR -type f | wc -l` over the same tree in the same run as the floor (a walk
# with no reads and no hashing). Release build; median of 3 runs each; the page cache is warm
# for both. `verify` (rescan + diff against the stored baseline) is shown too. Exits 1 when
# the declare median is over budget.
#
# Env: SCOPE_BENCH_FILES (default 50000), CALLUS_BIN (skip the build, use this binary).
set -euo pipefail

files=${SCOPE_BENCH_FILES:-50000}
budget_ms=5000
root=$(cd "$(dirname "$0")/../.." && pwd)
if [[ -n ${CALLUS_BIN:-} ]]; then
    bin=$CALLUS_BIN
else
    cargo build --release --quiet --manifest-path "$root/Cargo.toml"
    bin=$root/target/release/callus
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tree=$tmp/tree
mkdir -p "$tree/.git" "$tmp/home"
# 100 files per directory, 64 B to ~2.5 KiB each, every file's bytes distinct.
awk -v n="$files" -v dir="$tree" 'BEGIN {
    for (i = 0; i < n; i++) {
        d = sprintf("%s/pkg%03d/mod%02d", dir, int(i / 1000), int(i / 100) % 10);
        if (d != last) { system("mkdir -p " d); last = d }
        f = sprintf("%s/file%05d.txt", d, i);
        reps = i % 40 + 1;
        for (r = 0; r < reps; r++) printf "line %d of file %d: the quick brown fox\n", r, i > f;
        close(f);
    }
}'

now_ms() { date +%s%3N; }
median3() { printf '%s\n' "$@" | sort -n | sed -n 2p; }

find_runs=() declare_runs=() verify_runs=()
for i in 1 2 3; do
    t0=$(now_ms); count=$(find "$tree" -type f | wc -l); t1=$(now_ms)
    find_runs+=($((t1 - t0)))
    t0=$(now_ms)
    CALLUS_HOME=$tmp/home "$bin" scope declare --run-id "bench$i" --root "$tree" \
        --modify '**' >"$tmp/out" 2>&1
    t1=$(now_ms)
    declare_runs+=($((t1 - t0)))
    t0=$(now_ms)
    CALLUS_HOME=$tmp/home "$bin" scope verify --run-id "bench$i" >/dev/null
    t1=$(now_ms)
    verify_runs+=($((t1 - t0)))
done
fingerprinted=$(sed -n 's/.*fingerprinted \([0-9]*\) file.*/\1/p' "$tmp/out")
find_ms=$(median3 "${find_runs[@]}")
declare_ms=$(median3 "${declare_runs[@]}")
verify_ms=$(median3 "${verify_runs[@]}")
verdict=PASS
((declare_ms <= budget_ms)) || verdict=FAIL

printf 'scope: fingerprint of a %s-file tree (%s fingerprinted, %s found), median of 3, %s cores\n' \
    "$files" "$fingerprinted" "$count" "$(nproc)"
printf '  %-34s %10s\n' "command" "ms"
printf '  %-34s %10s\n' "find DIR -type f | wc -l (floor)" "$find_ms"
printf '  %-34s %10s\n' "callus scope declare" "$declare_ms"
printf '  %-34s %10s\n' "callus scope verify (no changes)" "$verify_ms"
printf '  %-34s %10s   %s\n' "budget" "$budget_ms" "$verdict"
[[ $verdict == PASS ]]
