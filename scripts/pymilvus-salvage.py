#!/usr/bin/env python3
"""A salvage through the official Python SDK, pymilvus, as an operator would run it.

    pymilvus-salvage.py URI SOURCE_CLUSTER_ID PCHANNEL END_TIMETICK OUT [UNSERVED_CALL]

`MilvusClient(uri=URI)`, then `get_replicate_info(SOURCE_CLUSTER_ID, PCHANNEL)` and
`dump_messages(...)` from its salvage checkpoint (start_timetick = the checkpoint's time_tick,
as pymilvus's own docstring example does) up to END_TIMETICK. OUT receives every
DumpMessagesResponse frame exactly as it came off the wire, varint-length-delimited: the
framing of a `walscope salvage` dump, so the two files can be compared byte for byte.

To keep the wire bytes, the response deserializer of DumpMessages is wrapped before the client
builds its stub (the SDK itself only hands out dicts); every frame is checked against the dict
the SDK made of it. With UNSERVED_CALL (a MilvusClient method name, called without
arguments), that call is made last and its error recorded.

Prints one JSON object on stdout: pymilvus version, the RPCs the SDK made in order, the
session identifiers it sent, the checkpoint, the message count, and the unserved call's gRPC
code and details.
Runs with the venv python of scripts/python-env.sh. Talks only to URI.
"""

import json
import sys

import grpc
from pymilvus.grpc_gen import common_pb2, milvus_pb2

RPCS = []
IDENTIFIERS = set()


class _RpcLog(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):
    """Records the method of every call the SDK makes on its channel, and the session
    `identifier` header it sends (the one Connect returned)."""

    def _log(self, details):
        RPCS.append(details.method.rsplit("/", 1)[-1])
        IDENTIFIERS.update(v for k, v in (details.metadata or []) if k == "identifier")

    def intercept_unary_unary(self, continuation, details, request):
        self._log(details)
        return continuation(details, request)

    def intercept_unary_stream(self, continuation, details, request):
        self._log(details)
        return continuation(details, request)


def _install_hooks(frames):
    plain_channel = grpc.insecure_channel

    def logged_channel(*args, **kwargs):
        return grpc.intercept_channel(plain_channel(*args, **kwargs), _RpcLog())

    grpc.insecure_channel = logged_channel

    parse = milvus_pb2.DumpMessagesResponse.FromString

    def keep_bytes(raw):
        frames.append(bytes(raw))
        return parse(raw)

    # The generated stub reads this attribute when the client builds it (after Connect).
    milvus_pb2.DumpMessagesResponse.FromString = keep_bytes


def _varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _check_frame(raw, msg):
    """The dict the SDK yielded must be exactly what the kept frame holds."""
    resp = milvus_pb2.DumpMessagesResponse.FromString(raw)
    if resp.WhichOneof("response") != "message":
        raise SystemExit(f"frame is not a message: {resp.WhichOneof('response')}")
    m = resp.message
    want_id = (
        {"id": m.id.id, "wal_name": common_pb2.WALName.Name(m.id.WAL_name)} if m.HasField("id") else None
    )
    if msg["message_id"] != want_id or msg["payload"] != m.payload or msg["properties"] != dict(m.properties):
        raise SystemExit(f"the SDK's dict differs from the frame it came from: {msg['message_id']}")


def main():
    if len(sys.argv) not in (6, 7):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    uri, cluster, pchannel, end, out = sys.argv[1:6]
    unserved = sys.argv[6] if len(sys.argv) == 7 else None
    frames = []
    _install_hooks(frames)

    import pymilvus
    from pymilvus import MilvusClient

    client = MilvusClient(uri=uri, timeout=10)
    info = client.get_replicate_info(source_cluster_id=cluster, target_pchannel=pchannel, timeout=10)
    ckpt = info["salvage_checkpoint"]
    if not ckpt or not ckpt.get("message_id"):
        raise SystemExit(f"no salvage checkpoint for {cluster} on {pchannel}: {info}")
    messages = list(
        client.dump_messages(
            pchannel=ckpt["pchannel"],
            start_message_id=ckpt["message_id"],
            start_timetick=ckpt["time_tick"],
            end_timetick=int(end),
            timeout=60,
        )
    )
    if len(frames) != len(messages):
        raise SystemExit(f"{len(frames)} frames but the SDK yielded {len(messages)} messages")
    with open(out, "wb") as f:
        for raw, msg in zip(frames, messages):
            _check_frame(raw, msg)
            f.write(_varint(len(raw)))
            f.write(raw)

    unserved_result = None
    if unserved:
        try:
            getattr(client, unserved)()
            unserved_result = {"code": "OK", "details": ""}
        except grpc.RpcError as e:
            unserved_result = {"code": e.code().name, "details": e.details()}
    client.close()

    print(
        json.dumps(
            {
                "pymilvus": pymilvus.__version__,
                "rpcs": RPCS,
                "identifiers": sorted(IDENTIFIERS),
                "checkpoint": ckpt,
                "messages": len(messages),
                "unserved": unserved_result,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
