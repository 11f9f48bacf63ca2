#!/usr/bin/env python3
"""Writes the protos pymilvus was generated from as one FileDescriptorSet.

    pymilvus-descriptor-set.py OUT.pb

Every `*_pb2` module under pymilvus's grpc_gen package is imported; each file's descriptor
(`DESCRIPTOR.CopyToProto`) goes into the set after the files it imports, walked through
`dependencies`, so the set loads in order (protoc's --include_imports layout). Prints the
pymilvus version, the number of files and their names on stdout.
Runs with the venv python of scripts/python-env.sh.
"""

import importlib
import pkgutil
import sys

from google.protobuf import descriptor_pb2


def _pb2_modules(package):
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if info.name.endswith("_pb2"):
            yield importlib.import_module(info.name)


def descriptor_set(package):
    """The FileDescriptorSet of every *_pb2 module in `package`, dependencies first."""
    out = descriptor_pb2.FileDescriptorSet()
    done = set()

    def add(file_desc):
        if file_desc.name in done:
            return
        done.add(file_desc.name)
        for dep in file_desc.dependencies:
            add(dep)
        file_desc.CopyToProto(out.file.add())

    for module in sorted(_pb2_modules(package), key=lambda m: m.__name__):
        add(module.DESCRIPTOR)
    return out


def main():
    if len(sys.argv) != 2:
        print("usage: pymilvus-descriptor-set.py OUT.pb", file=sys.stderr)
        return 2
    import pymilvus
    from pymilvus import grpc_gen

    fds = descriptor_set(grpc_gen)
    with open(sys.argv[1], "wb") as f:
        f.write(fds.SerializeToString())
    print(f"pymilvus {pymilvus.__version__}")
    print(f"{len(fds.file)} files")
    for f in fds.file:
        print(f.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
