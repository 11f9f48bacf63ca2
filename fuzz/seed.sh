#!/usr/bin/env bash
# Builds the seed corpora: fuzz/corpus/<target>/, from walscope's own sample data, the .proto
# files of the repository, a descriptor set and hand-written inputs. Generated, never committed
# (fuzz/.gitignore). Safe to run again: the sample-derived seeds are rewritten, corpus entries
# libFuzzer added are kept.
#
# Usage: fuzz/seed.sh   (WALSCOPE_BIN overrides the binary; default target/release/walscope,
#        built with `cargo build --release` when missing). Needs python3.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=${WALSCOPE_BIN:-${CARGO_TARGET_DIR:-target}/release/walscope}
if [ ! -x "$BIN" ]; then
    echo "seed.sh: no $BIN, building it" >&2
    cargo build --release --bin walscope
fi
command -v python3 >/dev/null || { echo "seed.sh: python3 is needed to split frames" >&2; exit 1; }

C=$ROOT/fuzz/corpus
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for t in wire_decode typed_decode lossless_edit dump_reader summary_reader brpc_client brpc_server \
    http_json proto_loader descriptor_set text_input manifest; do
    mkdir -p "$C/$t"
done

# Sample data: a clean dump and damaged ones, and both datasync progress files.
"$BIN" sample --kind milvus-dump --messages 50 --out "$WORK/clean.dump" >/dev/null
for c in truncate garbage huge-length; do
    "$BIN" sample --kind milvus-dump --messages 50 --seed 7 --corrupt "$c" --out "$WORK/$c.dump" >/dev/null
done
"$BIN" sample --kind datasync-progress --out "$WORK/sync.progress" >/dev/null
"$BIN" sample --kind datacollector-progress --out "$WORK/task.progress" >/dev/null
"$BIN" schema export --out "$WORK/builtin.protoset" >/dev/null

# Frames, inner messages, re-framed dumps, brpc packets and HTTP messages.
python3 - "$WORK" "$C" <<'PY'
import os, struct, sys

work, corpus = sys.argv[1], sys.argv[2]

def put(target, name, data):
    with open(os.path.join(corpus, target, name), "wb") as f:
        f.write(data)

def read_varint(b, i):
    v = shift = 0
    while True:
        c = b[i]; i += 1
        v |= (c & 0x7F) << shift; shift += 7
        if c < 0x80:
            return v, i

def varint(v):
    out = bytearray()
    while True:
        c = v & 0x7F; v >>= 7
        if v:
            out.append(c | 0x80)
        else:
            out.append(c)
            return bytes(out)

def ld(num, body):
    return varint(num << 3 | 2) + varint(len(body)) + body

def vf(num, v):
    return varint(num << 3) + varint(v)

def frames(path):
    b = open(path, "rb").read()
    i, out = 0, []
    while i < len(b):
        try:
            n, j = read_varint(b, i)
        except IndexError:
            break
        if j + n > len(b):
            break
        out.append(b[j:j + n]); i = j + n
    return out

def field(msg, number):
    """The first length-delimited field `number` of `msg` (top level), or None."""
    i = 0
    while i < len(msg):
        key, i = read_varint(msg, i)
        wt = key & 7
        if wt == 0:
            _, i = read_varint(msg, i)
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        elif wt == 2:
            n, i = read_varint(msg, i)
            if key >> 3 == number:
                return msg[i:i + n]
            i += n
        else:
            return None
    return None

clean = frames(os.path.join(work, "clean.dump"))
for k, f in enumerate(clean):
    for t in ("wire_decode", "typed_decode", "summary_reader"):
        put(t, "frame-%02d" % k, f)
    inner = field(f, 2)
    if inner is not None:
        put("wire_decode", "immutable-%02d" % k, inner)
        put("typed_decode", "immutable-%02d" % k, inner)
for name in ("sync.progress", "task.progress"):
    data = open(os.path.join(work, name), "rb").read()
    for t in ("wire_decode", "typed_decode", "dump_reader"):
        put(t, name, data)
    for k, f in enumerate(frames(os.path.join(work, name))):
        put("typed_decode", "%s-%d" % (name, k), f)

# Dumps: whole, damaged, cut to a few frames, and the first frames in every other framing.
for name in ("clean", "truncate", "garbage", "huge-length"):
    put("dump_reader", name + ".dump", open(os.path.join(work, name + ".dump"), "rb").read())
few = clean[:4]
put("dump_reader", "varint-4", b"".join(varint(len(f)) + f for f in few))
put("dump_reader", "grpc-4", b"".join(b"\0" + struct.pack(">I", len(f)) + f for f in few))
put("dump_reader", "u32be-4", b"".join(struct.pack(">I", len(f)) + f for f in few))
put("dump_reader", "u32le-4", b"".join(struct.pack("<I", len(f)) + f for f in few))
put("dump_reader", "single", few[0])
put("dump_reader", "hex-4", b"".join(varint(len(f)) + f for f in few).hex().encode())

# brpc packets: requests (as a client sends them) and responses (as a server answers).
def meta(request=None, response=None, cid=1, att=0):
    m = b""
    if request is not None:
        svc, method, log_id = request
        r = ld(1, svc) + ld(2, method)
        if log_id is not None:
            r += vf(3, log_id)
        m += ld(1, r)
    if response is not None:
        code, text = response
        r = (vf(1, code) if code else b"") + (ld(2, text) if text else b"")
        m += ld(2, r)
    m += vf(4, cid)
    if att:
        m += vf(5, att)
    return m

def packet(m, message, attachment=b""):
    body = m + message + attachment
    return b"PRPC" + struct.pack(">II", len(body), len(m)) + body

task = open(os.path.join(work, "task.progress"), "rb").read()
reqs = [
    packet(meta(request=(b"openmldb.datasync.SyncTool", b"TaskStatus", 7), cid=1), b"\x08\x01"),
    packet(meta(request=(b"openmldb.datasync.SyncTool", b"SendData", None), cid=2, att=5), task, b"rows!"),
    packet(meta(request=(b"openmldb.datasync.DataCollector", b"Fail", 1), cid=3), b""),
]
resps = [
    packet(meta(response=(0, b""), cid=1), b"\x0a\x02\x08\x00"),
    packet(meta(response=(1002, b"unknown method"), cid=2), b""),
    packet(meta(response=(0, b""), cid=3, att=3), b"\x08\x01", b"att"),
]
for k, p in enumerate(reqs):
    put("brpc_server", "request-%d" % k, p)
    put("brpc_client", "request-%d" % k, bytes([k * 5]) + p)
put("brpc_server", "requests", b"".join(reqs))
for k, p in enumerate(resps):
    put("brpc_client", "response-%d" % k, bytes([k * 7]) + p)
put("brpc_client", "responses-1-byte-chunks", b"\0" + b"".join(resps))
body = b'{"tid": 1, "pid": 2}'
put("brpc_server", "http-post",
    b"POST /openmldb.datasync.SyncTool/TaskStatus HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
    b"Content-Length: %d\r\n\r\n" % len(body) + body)
put("brpc_server", "http-get", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")

# HTTP answers for the HTTP/JSON client.
ok = b'{"response":{"code":0,"msg":"ok"},"task":[{"status":"RUNNING","count":"5"}],"readableInfo":"x"}'
put("http_json", "ok", b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(ok) + ok)
put("http_json", "ok-until-eof", b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + ok)
put("http_json", "error", b"HTTP/1.1 500 Error\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nboom")
put("http_json", "short-body", b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{}")

# Text: JSON and text format.
for k, s in enumerate([
    b'{"tid": 1, "pid": 2, "mode": "kFull", "syncPoint": {"type": "kSNAPSHOT", "pk": "a", "ts": "5"}}',
    b'{"message": {"id": {"id": "AQ=="}, "payload": "CAE=", "properties": {"_t": "2", "_v": "2"}}}',
    b'{"timestamps": ["1", "2"], "collectionName": "c", "numRows": "3"}',
    b'tid: 1 pid: 2 sync_point { type: kBINLOG offset: 9 }',
    b'message { payload: "\\001" properties { key: "_t" value: "2" } }',
    b'{"task": [{"status": "INIT"}, {"progress": {"tid": 3}}], "readableInfo": "x"}',
]):
    put("text_input", "text-%d" % k, s)

# Edits: [message, operation] + PATH=VALUE (see props::lossless_edit in tests/fuzz_regressions.rs).
for k, (base, op, spec) in enumerate([
    (0, 0, b'properties["_vc"]=by-dev-rootcoord-dml_0'),
    (1, 0, b"message.payload=AQID"),
    (1, 2, b"message.properties[\"_t\"]"),
    (24, 0, b"progress.sync_point.offset=70000"),
    (25, 0, b"task[2].status=RUNNING"),
    (25, 3 | (1 << 2), b"task[0]"),
    (25, 1, b'task={"status": "INIT"}'),
    (26, 0, b"timestamps[1]=300"),
    (26, 1, b"timestamps=4"),
    (26, 0, b'timestamps=["7", "8"]'),
    (27, 0, b"sync_point.type=kSNAPSHOT"),
]):
    put("lossless_edit", "edit-%02d" % k, bytes([base, op]) + spec)
PY

# Schema sources: every .proto of the repository, and descriptor sets.
for f in proto/*/*.proto tests/fixtures/*/*.proto; do
    cp "$f" "$C/proto_loader/$(echo "$f" | tr / _)"
done
cp "$WORK/builtin.protoset" "$C/descriptor_set/builtin.protoset"
if command -v protoc >/dev/null; then
    for f in proto/*/*.proto; do
        protoc -Iproto -o "$C/descriptor_set/$(basename "$f" .proto).pb" --include_imports "${f#proto/}" \
            2>/dev/null || true
    done
fi

# Manifests.
for name in clean truncate; do
    cp "$WORK/$name.dump.manifest.json" "$C/manifest/$name.manifest.json"
done
cat >"$C/manifest/folder.json" <<'EOF'
{"format_version":1,"walscope_version":"0.1.0","created_at":"2026-01-01T00:00:00.000Z","updated_at":"2026-01-01T00:00:00.000Z","new_primary":{},"old_primary":{},"source_cluster_id":"c","end_timetick":null,"skip_replicated":false,"pchannels":[]}
EOF

# Every saved regression input seeds its target too.
for d in tests/fuzz-regressions/*/; do
    t=$(basename "$d")
    [ -d "$C/$t" ] && cp "$d"* "$C/$t/" 2>/dev/null || true
done

for t in "$C"/*/; do
    printf '%-16s %4d seeds\n' "$(basename "$t")" "$(ls "$t" | wc -l)"
done
