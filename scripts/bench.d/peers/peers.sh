#!/usr/bin/env bash
# `scripts/bench peers`: per-call latency of callus's hooks next to the guards a user might
# pick instead, all in one interleaved run (docs/benchmarks.md is written from its output).
#
# Cases, each fed a Claude Code PreToolUse payload on stdin (the recorder a PostToolUse one):
#   /bin/true                     the floor: a process start fed the same stdin
#   callus guard, no rule fires   `cargo test … && git status --short`, starter policy
#   callus guard, firing          `rm -rf /`: refused (every guard here refuses it), one
#                                 audit record
#   callus record                 a PostToolUse success (one row written)
#   callusguard 0.5.0 guard       PyPI's callusguard, its runner with its bundled starter
#                                 rules; quiet and firing
#   openmoat guard                crates.io's openmoat, `moat guard --host claude-code` in a
#                                 home set up by `moat init`; quiet and firing
#   dcg                           crates.io's destructive_command_guard, `dcg`; quiet, firing
# One loop runs every case once per iteration (in a shuffled order), so load on this shared
# machine slows them alike; p50/p95/p99 of wall time per call, the p50 over /bin/true and
# the ratio of p50s.
#
# Peers are installed once into $CALLUS_PEERS_DIR (default ~/.cache/callus-bench-peers):
# callusguard into a venv with pip, openmoat and dcg with `cargo install --locked` (minutes
# of compiling each). PEERS_INSTALL=0 skips installing: a peer not there is reported as
# such. A peer that fails to install is reported with its log's last line, not fatal.
#
# Env: RUNS (default 200), CALLUS_BIN (skip the build), CALLUS_PEERS_DIR, PEERS_INSTALL.
set -euo pipefail
cd "$(dirname "$0")/../../.."
ROOT=$PWD
RUNS=${RUNS:-200}
PEERS=${CALLUS_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/callus-bench-peers}
INSTALL=${PEERS_INSTALL:-1}
mkdir -p "$PEERS"

if [[ -z ${CALLUS_BIN:-} ]]; then
    echo "building release binary…" >&2
    cargo build --release --locked --quiet
    CALLUS_BIN=$ROOT/target/release/callus
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/repo/.git"
payload() { # payload FILE COMMAND
    printf '{"session_id":"bench","transcript_path":"/dev/null","cwd":"%s","prompt_id":"p1","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"%s","description":"bench"},"tool_use_id":"toolu_bench"}' \
        "$WORK/repo" "$2" >"$1"
}
payload "$WORK/quiet.json" "cargo test --workspace -- --nocapture && git status --short"
payload "$WORK/fire.json" "rm -rf /"
cp "$ROOT/tests/fixtures/record/claude-posttooluse-success.json" "$WORK/post.json"

note() { printf '%s\n' "$*" >>"$WORK/notes"; }
: >"$WORK/notes"

# callusguard 0.5.0: a venv with the pinned release; its guard is `runner.run` with the
# bundled starter ruleset, as its installed hook entry script calls it.
CG_PY=$PEERS/callusguard-0.5.0/bin/python
if [[ ! -x $CG_PY && $INSTALL == 1 ]]; then
    echo "installing callusguard 0.5.0 (pip)…" >&2
    { python3 -m venv "$PEERS/callusguard-0.5.0" &&
        "$PEERS/callusguard-0.5.0/bin/pip" install --quiet callusguard==0.5.0; } \
        >"$PEERS/callusguard.log" 2>&1 || note "callusguard 0.5.0: pip install failed: $(tail -1 "$PEERS/callusguard.log")"
fi
CG_RULES=""
if [[ -x $CG_PY ]] && CG_RULES=$("$CG_PY" -c 'import callusguard.guard, os; print(os.path.join(os.path.dirname(callusguard.guard.__file__), "rules", "starter.rules.json"))' 2>/dev/null); then
    CG_VERSION=$("$CG_PY" -c 'import callusguard; print(callusguard.__version__)')
    CG_RUN="import sys; from callusguard.guard.runner import run; run(default_ruleset='$CG_RULES')"
else
    CG_RULES=""
    note "callusguard 0.5.0: not installed (PEERS_INSTALL=1 installs it)"
fi

# openmoat and dcg from crates.io, each into its own root.
cargo_peer() { # cargo_peer CRATE BIN → path of BIN, or nothing
    local root=$PEERS/$1
    if [[ ! -x $root/bin/$2 && $INSTALL == 1 ]]; then
        echo "installing $1 (cargo install --locked; this compiles for minutes)…" >&2
        nice -n 10 cargo install --locked --quiet --root "$root" "$1" >"$PEERS/$1.log" 2>&1 ||
            note "$1: cargo install failed: $(grep -m1 '^error' "$PEERS/$1.log" || tail -1 "$PEERS/$1.log")"
    fi
    [[ -x $root/bin/$2 ]] && echo "$root/bin/$2"
    return 0
}
MOAT=$(cargo_peer openmoat moat)
DCG=$(cargo_peer destructive_command_guard dcg)
[[ -n $MOAT ]] || note "openmoat: not installed"
[[ -n $DCG ]] || note "dcg: not installed"

# Each case: LABEL, INPUT, COMMAND (eval'd in this shell, so no extra process). Every case
# has its own home: an audit log or store persists across its calls, as in a session.
LABELS=() INPUTS=() CMDS=()
add() {
    LABELS+=("$1") INPUTS+=("$2") CMDS+=("$3")
}
mkdir -p "$WORK/h-callus" "$WORK/h-cg" "$WORK/h-moat" "$WORK/h-dcg"
add "/bin/true" quiet "/bin/true"
add "callus guard, no rule fires" quiet "CALLUS_HOME=$WORK/h-callus $CALLUS_BIN guard"
add "callus guard, firing (audit append)" fire "CALLUS_HOME=$WORK/h-callus $CALLUS_BIN guard"
add "callus record (PostToolUse)" post "CALLUS_HOME=$WORK/h-callus $CALLUS_BIN record"
if [[ -n $CG_RULES ]]; then
    add "callusguard $CG_VERSION guard, quiet" quiet "HOME=$WORK/h-cg $CG_PY -c \"\$CG_RUN\""
    add "callusguard $CG_VERSION guard, firing" fire "HOME=$WORK/h-cg $CG_PY -c \"\$CG_RUN\""
fi
if [[ -n $MOAT ]]; then
    # Its audit log and default policy come from `init` (which refuses a binary under /tmp,
    # where an agent could replace it: keep CALLUS_PEERS_DIR elsewhere).
    mkdir -p "$WORK/h-moat/.claude"
    if HOME=$WORK/h-moat "$MOAT" init --hosts claude-code --yes </dev/null >"$WORK/moat-init.log" 2>&1; then
        add "openmoat guard, quiet" quiet "HOME=$WORK/h-moat $MOAT guard --host claude-code"
        add "openmoat guard, firing" fire "HOME=$WORK/h-moat $MOAT guard --host claude-code"
    else
        note "openmoat: init failed: $(grep -m1 . "$WORK/moat-init.log")"
    fi
fi
if [[ -n $DCG ]]; then
    add "dcg, quiet" quiet "HOME=$WORK/h-dcg $DCG"
    add "dcg, firing" fire "HOME=$WORK/h-dcg $DCG"
fi

# What each case answers (a quiet case must say nothing; a firing one must refuse), so a
# peer that misreads the payload is not timed as if it had decided.
for i in "${!LABELS[@]}"; do
    out=$(eval "${CMDS[$i]}" <"$WORK/${INPUTS[$i]}.json" 2>&1) && rc=0 || rc=$?
    case ${INPUTS[$i]} in
    fire) [[ $rc == 2 || $out == *deny* || $out == *block* || $out == *BLOCK* ]] ||
        note "${LABELS[$i]}: did not refuse (exit $rc): ${out:0:160}" ;;
    quiet) [[ $rc == 0 && ! $out == *deny* ]] || note "${LABELS[$i]}: not quiet (exit $rc): ${out:0:160}" ;;
    esac
done

# Warm up, then the interleaved loop: one line per iteration, one duration per case.
for ((r = 0; r < 10; r++)); do
    for i in "${!LABELS[@]}"; do eval "${CMDS[$i]}" <"$WORK/${INPUTS[$i]}.json" >/dev/null 2>&1 || true; done
done
# The order of the cases is shuffled in each iteration: a case that always ran right after
# a 100 ms Python start would be measured on a colder machine than the others.
n=${#LABELS[@]}
for ((r = 0; r < RUNS; r++)); do
    order=("${!LABELS[@]}")
    for ((k = n - 1; k > 0; k--)); do
        j=$((RANDOM % (k + 1)))
        tmp=${order[$k]} order[$k]=${order[$j]} order[$j]=$tmp
    done
    T0=() T1=()
    for i in "${order[@]}"; do
        t0=$EPOCHREALTIME
        eval "${CMDS[$i]}" <"$WORK/${INPUTS[$i]}.json" >/dev/null 2>&1 || true
        t1=$EPOCHREALTIME
        T0[$i]=$t0 T1[$i]=$t1
    done
    line=""
    for i in "${!LABELS[@]}"; do line+=" ${T0[$i]} ${T1[$i]}"; done
    echo "$line"
done >"$WORK/samples"

versions() {
    echo "- callus: $("$CALLUS_BIN" --version 2>/dev/null) ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'))"
    [[ -z $CG_RULES ]] || echo "- callusguard: $CG_VERSION ($("$CG_PY" --version 2>&1))"
    [[ -z $MOAT ]] || echo "- openmoat: $("$MOAT" --version 2>&1 | head -1)"
    [[ -z $DCG ]] || echo "- dcg: $("$DCG" --version 2>&1 | head -1)"
}
echo
echo "Peers, per call, wall ms: $RUNS interleaved iterations, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo), $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
versions
echo
echo "| case | p50 | p95 | p99 | p50 over /bin/true | ratio to /bin/true |"
echo "|---|---|---|---|---|---|"
# p50 p95 p99 (ms) of column pair C (1-based) of the samples.
percentiles() {
    awk -v c="$1" '{ printf "%.4f\n", ($(2 * c) - $(2 * c - 1)) * 1000 }' "$WORK/samples" | sort -g |
        awk '{ v[NR] = $1 } END {
            i50 = int(0.50 * NR + 0.5); i95 = int(0.95 * NR + 0.5); i99 = int(0.99 * NR + 0.5)
            if (i50 < 1) i50 = 1; if (i95 < 1) i95 = 1; if (i99 < 1) i99 = 1
            printf "%.2f %.2f %.2f\n", v[i50], v[i95], v[i99] }'
}
read -r base _ < <(percentiles 1)
for i in "${!LABELS[@]}"; do
    read -r p50 p95 p99 < <(percentiles $((i + 1)))
    awk -v l="${LABELS[$i]}" -v a="$p50" -v b="$p95" -v c="$p99" -v t="$base" \
        'BEGIN { printf "| %s | %.2f | %.2f | %.2f | %+.2f | %.1f× |\n", l, a, b, c, a - t, (t > 0 ? a / t : 0) }'
done
if [[ -s $WORK/notes ]]; then
    echo
    sed 's/^/note: /' "$WORK/notes"
fi
