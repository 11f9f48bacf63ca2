#!/usr/bin/env python3
"""What `walscope inspect FILE --stats` computes, with Python protobuf (upb) and the SDK's
generated classes: every varint-delimited DumpMessagesResponse frame parsed, Insert and Delete
payloads parsed as their msg.* bodies, frames counted per type and vchannel, the timetick range.
Prints the frame count and the backend.

    decode_upb.py FILE
"""
import mmap
import sys

from google.protobuf.internal import api_implementation, decoder
from pymilvus.grpc_gen import milvus_pb2, msg_pb2

BODIES = {"2": msg_pb2.InsertRequest, "3": msg_pb2.DeleteRequest}
DIGITS = {c: i for i, c in enumerate("0123456789abcdefghijklmnopqrstuvwxyz")}


def base36(s):
    v = 0
    for c in s:
        v = v * 36 + DIGITS[c]
    return v


def main(path):
    per_type, per_vchannel = {}, {}
    lo, hi, frames = None, None, 0
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        pos, end = 0, len(buf)
        while pos < end:
            size, pos = decoder._DecodeVarint(buf, pos)
            frame = milvus_pb2.DumpMessagesResponse.FromString(buf[pos : pos + size])
            pos += size
            frames += 1
            props = frame.message.properties
            t = props.get("_t", "")
            body = BODIES.get(t)
            if body is not None and "_ch" not in props:
                body.FromString(frame.message.payload)
            per_type[t] = per_type.get(t, 0) + 1
            vc = props.get("_vc", "")
            per_vchannel[vc] = per_vchannel.get(vc, 0) + 1
            if "_tt" in props:
                tt = base36(props["_tt"])
                lo = tt if lo is None else min(lo, tt)
                hi = tt if hi is None else max(hi, tt)
    print(frames, api_implementation.Type())


main(sys.argv[1])
