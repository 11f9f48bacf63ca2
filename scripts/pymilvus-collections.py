#!/usr/bin/env python3
"""Collections through the official Python SDK, pymilvus, against the demo Milvus.

    pymilvus-collections.py URI

`MilvusClient(uri=URI)`, then: create a collection from an explicit schema (id Int64 key,
embedding FloatVector dim 4, title VarChar 32), describe it, insert 3 rows and the key 3 again,
query by key, count(*), delete by ids and by filter, upsert, count again, and one refused insert
(a vector of the wrong dim). Records the RPCs the SDK made.

Prints one JSON object on stdout. Runs with the venv python of scripts/python-env.sh. Talks only
to URI.
"""

import json
import sys

import grpc

RPCS = []


class _RpcLog(grpc.UnaryUnaryClientInterceptor):
    def intercept_unary_unary(self, continuation, details, request):
        RPCS.append(details.method.rsplit("/", 1)[-1])
        return continuation(details, request)


def main():
    plain_channel = grpc.insecure_channel
    grpc.insecure_channel = lambda *a, **k: grpc.intercept_channel(plain_channel(*a, **k), _RpcLog())
    import pymilvus
    from pymilvus import DataType, MilvusClient, MilvusException

    client = MilvusClient(uri=sys.argv[1])
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("embedding", DataType.FLOAT_VECTOR, dim=4)
    schema.add_field("title", DataType.VARCHAR, max_length=32)
    client.create_collection("sdk_books", schema=schema)
    out = {"pymilvus": pymilvus.__version__, "has": client.has_collection("sdk_books")}
    desc = client.describe_collection("sdk_books")
    out["fields"] = [(f["name"], str(f["type"])) for f in desc["fields"]]
    vec = [0.1, 0.2, 0.3, 0.4]
    rows = [{"id": i, "embedding": vec, "title": f"book {i}"} for i in (1, 2, 3)]
    out["insert"] = client.insert("sdk_books", rows)["insert_count"]
    client.insert("sdk_books", [{"id": 3, "embedding": vec, "title": "book 3 again"}])
    got = client.query("sdk_books", filter="id in [3, 1]", output_fields=["title"])
    out["query"] = sorted([r["id"], r["title"]] for r in got)
    out["count"] = client.query("sdk_books", filter="", output_fields=["count(*)"])[0]["count(*)"]
    out["delete_ids"] = client.delete("sdk_books", ids=[3])["delete_count"]
    client.delete("sdk_books", filter="id == 2")
    client.upsert("sdk_books", [{"id": 1, "embedding": vec, "title": "upserted"}])
    out["after"] = client.query("sdk_books", filter="id in [1, 2, 3]", output_fields=["title"])
    out["count_after"] = client.query("sdk_books", filter="", output_fields=["count(*)"])[0]["count(*)"]
    try:
        client.insert("sdk_books", [{"id": 9, "embedding": [0.1, 0.2, 0.3], "title": "x"}])
        out["refused"] = None
    except MilvusException as e:
        out["refused"] = str(e)
    client.drop_collection("sdk_books")
    out["has_after_drop"] = client.has_collection("sdk_books")
    out["rpcs"] = RPCS
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
