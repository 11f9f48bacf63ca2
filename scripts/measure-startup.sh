#!/usr/bin/env bash
# How long the window takes to show its first frame, on the sample data and with --demo.
#
# Runs the release binary under a virtual X server (xvfb-run) RUNS times per case with
# WALSCOPE_STARTUP_PROBE=exit (see src/ui/startup.rs): the app prints when its first frame was
# painted and closes itself. Two numbers per run:
#   launch: from just before exec (a timestamp taken inside xvfb-run, so starting Xvfb is not
#           counted) to the first frame painted; includes exec and dynamic linking;
#   main:   from the first line of main() to the first frame painted.
# Usage: scripts/measure-startup.sh [RUNS]   (WALSCOPE_BIN overrides the binary;
#        default: $CARGO_TARGET_DIR/release/walscope, built with cargo build --release).
# Needs xvfb-run. Not run in CI.
set -euo pipefail

cd "$(dirname "$0")/.."
RUNS=${1:-5}
BIN=${WALSCOPE_BIN:-${CARGO_TARGET_DIR:-target}/release/walscope}
[ -x "$BIN" ] || { echo "no binary at $BIN: cargo build --release first" >&2; exit 1; }
command -v xvfb-run >/dev/null || { echo "xvfb-run not found" >&2; exit 1; }

stats() { # numbers on stdin -> "min median max"
    sort -n | awk '{v[NR]=$1} END {if (NR==0) {print "- - -"; exit} m=(NR%2)?v[(NR+1)/2]:(v[NR/2]+v[NR/2+1])/2; printf "%.0f %.0f %.0f\n", v[1], m, v[NR]}'
}

run_case() { # name, args...
    local name=$1; shift
    local launch=() main=()
    for _ in $(seq "$RUNS"); do
        local out
        out=$(WALSCOPE_STARTUP_PROBE=exit timeout 60 xvfb-run -a -s "-screen 0 1400x900x24" \
            sh -c 'echo "launch_ns=$(date +%s%N)" >&2; exec "$@"' sh "$BIN" "$@" 2>&1 >/dev/null || true)
        local l p u
        l=$(sed -n 's/^launch_ns=\([0-9]*\)$/\1/p' <<<"$out" | head -1)
        p=$(sed -n 's/.*first frame painted after \([0-9.]*\) ms.*/\1/p' <<<"$out" | head -1)
        u=$(sed -n 's/.*unix_ms=\([0-9]*\).*/\1/p' <<<"$out" | head -1)
        if [ -z "$p" ] || [ -z "$l" ] || [ -z "$u" ]; then
            echo "$name: no probe line; output was:" >&2; echo "$out" >&2; continue
        fi
        launch+=("$(( u - l / 1000000 ))")
        main+=("$p")
    done
    printf '%-42s launch->painted ms (min/median/max): %-16s main->painted: %s   [%s]\n' \
        "$name" "$(printf '%s\n' "${launch[@]}" | stats)" "$(printf '%s\n' "${main[@]}" | stats)" \
        "$(echo "${launch[*]}")"
}

echo "binary: $BIN ($RUNS runs per case, Xvfb 1400x900x24, software rendering)"
run_case "walscope assets/samples/milvus-100.dump" assets/samples/milvus-100.dump
run_case "walscope --demo" --demo
