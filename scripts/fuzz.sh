#!/usr/bin/env bash
# Runs every cargo-fuzz target (fuzz/) for SECONDS each, one after another, with a 1-second
# per-input timeout (a hang is a failure) and a 2 GiB memory limit.
#
# Usage: scripts/fuzz.sh [SECONDS]        (default 600 per target)
#        FUZZ_TARGETS="wire_decode manifest" scripts/fuzz.sh 60   (a subset)
# Installs cargo-fuzz when missing, builds the seed corpora (fuzz/seed.sh), and stops with a
# non-zero exit at the first crash, leak, timeout or out-of-memory, printing the input libFuzzer
# saved (fuzz/artifacts/<target>/...). Needs the nightly toolchain (rustup toolchain install
# nightly). See fuzz/README.md for turning a crash into a regression test.
set -euo pipefail

cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${1:-600}
TOOLCHAIN=${FUZZ_TOOLCHAIN:-nightly}

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz.sh: installing cargo-fuzz" >&2
    cargo install cargo-fuzz --locked
fi

fuzz/seed.sh

cd fuzz
TARGETS=${FUZZ_TARGETS:-$(cargo +"$TOOLCHAIN" fuzz list)}
# Built once, then run directly: `cargo fuzz run` would rebuild before every target whenever
# src/ changed meanwhile.
cargo +"$TOOLCHAIN" fuzz build
BINS=target/$(rustc +"$TOOLCHAIN" -vV | sed -n 's/^host: //p')/release

for t in $TARGETS; do
    echo "=== $t: ${SECONDS_PER_TARGET}s" >&2
    mkdir -p "corpus/$t" "artifacts/$t"
    before=$(ls "artifacts/$t" | wc -l)
    log=$(mktemp)
    set +e
    "$BINS/$t" -artifact_prefix="artifacts/$t/" "corpus/$t" \
        -max_total_time="$SECONDS_PER_TARGET" -timeout=1 -rss_limit_mb=2048 -print_final_stats=1 \
        2>&1 | tee "$log" | grep -aE '^#[0-9]+ *(INITED|DONE)|^(==|SUMMARY|Done |artifact_prefix)|panicked' >&2
    rc=${PIPESTATUS[0]}
    set -e
    after=$(ls "artifacts/$t" | wc -l)
    if [ "$rc" -ne 0 ] || [ "$after" -gt "$before" ]; then
        echo "fuzz.sh: $t FAILED (exit $rc); the input:" >&2
        grep -aE 'Test unit written to' "$log" >&2 || ls -t "artifacts/$t" | head -n 1 | sed "s|^|fuzz/artifacts/$t/|" >&2
        echo "reproduce: (cd fuzz && cargo +$TOOLCHAIN fuzz run $t <artifact>)" >&2
        rm -f "$log"
        exit 1
    fi
    rm -f "$log"
done
echo "fuzz.sh: every target ran ${SECONDS_PER_TARGET}s without a crash" >&2
