#!/usr/bin/env python3
"""A large milvus.proto.msg.InsertRequest as JSON on stdout: ROWS rows of an int64 key, a
128-dim float vector and a title."""
import json
import random
import sys

rows = int(sys.argv[1])
rnd = random.Random(7)
doc = {
    "shardName": "by-dev-rootcoord-dml_0_4491v0",
    "db_name": "default",
    "collection_name": "orders",
    "collectionID": "4491",
    "timestamps": [str(470809973883142145 + i) for i in range(rows)],
    "rowIDs": [str(i) for i in range(rows)],
    "fields_data": [
        {"type": "Int64", "field_name": "id", "field_id": "100",
         "scalars": {"long_data": {"data": [str(i) for i in range(rows)]}}},
        {"type": "FloatVector", "field_name": "embedding", "field_id": "101",
         "vectors": {"dim": "128", "float_vector": {"data": [round(rnd.uniform(-1, 1), 6) for _ in range(rows * 128)]}}},
        {"type": "VarChar", "field_name": "title", "field_id": "102",
         "scalars": {"string_data": {"data": [f"title {i}" for i in range(rows)]}}},
    ],
    "num_rows": str(rows),
}
json.dump(doc, sys.stdout)
