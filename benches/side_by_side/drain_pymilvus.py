#!/usr/bin/env python3
"""Drain one pchannel's salvage with the official SDK, as its docstring shows: get_replicate_info,
then dump_messages from the salvage checkpoint to END_TIMETICK, each message written to OUT
(payload length, payload). Prints the message count.

    drain_pymilvus.py URI SOURCE_CLUSTER_ID PCHANNEL END_TIMETICK OUT
"""
import struct
import sys

from pymilvus import MilvusClient

uri, cluster, pchannel, end, out = sys.argv[1:6]
client = MilvusClient(uri=uri)
ckpt = client.get_replicate_info(source_cluster_id=cluster, target_pchannel=pchannel)["salvage_checkpoint"]
n = 0
with open(out, "wb") as f:
    for msg in client.dump_messages(
        pchannel=pchannel,
        start_message_id=ckpt["message_id"],
        start_timetick=ckpt["time_tick"],
        end_timetick=int(end),
    ):
        f.write(struct.pack("<I", len(msg["payload"])))
        f.write(msg["payload"])
        n += 1
print(n)
