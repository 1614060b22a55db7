#!/usr/bin/env python3
"""Checks kcr-protobuf's field tables (`src/tables.rs`) against Kubernetes' `generated.proto` files.

The tables are written by `cargo xtask gen` (Rust, from the Go declarations kept in
`xtask/k8s/go-api.txt`); this script is an optional cross-check for the maintainer who moves
to a new Kubernetes version and has the `generated.proto` files of the same tag at hand
(they are not kept in the repository, and CI does not run this script).

Usage: gen_tables.py --check src/tables.rs PROTO...

  Compares the written tables with the `generated.proto` files of the same packages (named
  after their package, `core_v1.proto`, `meta_v1.proto`): every field's number must be in its
  message, as repeated or not as the table has it and with a matching wire type (a kind
  wrapped in `Nullable` or `Always` is compared by the kind it wraps), and every field of a
  message must be in its table (each one that is not is printed; a field left out on purpose,
  such as one with no JSON name, is only printed, not counted).
"""

import os
import re
import sys


# Scalar proto types by the wire type they are sent with.
VARINT_TYPES = {"int32", "int64", "uint32", "uint64", "sint32", "sint64", "bool"}


def wire_matches(kind, proto_type):
    """Whether a table kind is sent with the wire type of the message field's proto type."""
    varint = kind in ("Int", "OptInt", "Bool", "OptBool", "RepInt", "RepBool")
    if proto_type in VARINT_TYPES:
        return varint and (("bool" == proto_type) == (kind in ("Bool", "OptBool", "RepBool")))
    if proto_type in ("string", "bytes"):
        return kind in ("Str", "OptStr", "RepStr", "Bytes")
    if proto_type in ("double", "fixed64", "sfixed64"):
        # `Float`: a `*float64`, sent as a double.
        return kind == "Float"
    if proto_type in ("float", "fixed32", "sfixed32"):
        return False
    # A message or a map: length-delimited.
    return not varint and kind not in ("Str", "OptStr", "RepStr", "Bytes", "Float")


def check(tables_rs, protos):
    """Compares the tables with `generated.proto` files; returns the number of mismatches."""
    messages = {}
    for path in protos:
        pkg = os.path.basename(path)[: -len(".proto")].upper()
        src = open(path, encoding="utf-8").read()
        for m in re.finditer(r"^message (\w+) \{(.*?)^\}", src, re.S | re.M):
            fields = {}
            for f in re.finditer(
                r"^\s*(optional|repeated|required)?\s*(map<[^>]+>|[\w.]+)\s+(\w+)\s*=\s*(\d+)",
                m.group(2),
                re.M,
            ):
                repeated = f.group(1) == "repeated" or f.group(2).startswith("map<")
                fields[int(f.group(4))] = (f.group(3), repeated, f.group(2))
            messages[(pkg, m.group(1))] = fields
    src = open(tables_rs, encoding="utf-8").read()
    bad = checked = 0
    for m in re.finditer(
        r"^/// `([\w/]+)` `(\w+)`\.\npub\(crate\) (?:const \w+: &\[Field\] =\s*&|static \w+: \[Field; \d+\] =\s*)\[(.*?)\];",
        src,
        re.S | re.M,
    ):
        key = (m.group(1).replace("/", "_").upper(), m.group(2))
        proto = messages.get(key)
        if proto is None:
            print(f"no message {key}")
            bad += 1
            continue
        # A row as rustfmt writes it, on one line or several; the kind without its wrappers.
        rows = re.findall(
            r"\(\s*(\d+),\s*\"([^\"]*)\",\s*Kind::(?:(?:Nullable|Always)\(&Kind::)*(\w+)",
            m.group(3),
        )
        for number, _name, kind in rows:
            checked += 1
            number = int(number)
            if number not in proto:
                print(f"{key}: field {number} is not in the message")
                bad += 1
            elif proto[number][1] != kind.startswith(("Rep", "Map")):
                print(f"{key}: field {number} ({kind}) repeated differs")
                bad += 1
            elif not wire_matches(kind, proto[number][2]):
                print(f"{key}: field {number} is {proto[number][2]} in the message, {kind} here")
                bad += 1
        numbers = {int(r[0]) for r in rows}
        for number, (name, _, _) in proto.items():
            if number not in numbers:
                print(f"{key}: message field {number} ({name}) is not in the table")
    print(f"{checked} fields checked, {bad} mismatches", file=sys.stderr)
    return bad


if __name__ == "__main__":
    if sys.argv[1:2] != ["--check"] or len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(1 if check(sys.argv[2], sys.argv[3:]) else 0)
