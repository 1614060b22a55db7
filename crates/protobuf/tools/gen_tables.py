#!/usr/bin/env python3
"""Writes kcr-protobuf's field tables (`src/tables.rs`) from the Go API types.

Every field of a Go API struct carries its protobuf number and wire type in its `protobuf:"..."`
tag and its JSON name in its `json:"..."` tag; its Go type says whether it is a pointer (written
only when set, its zero kept in JSON) or a value (always written, its zero left out of JSON when
`omitempty`). This script reads those three facts from the `types.go` files and writes one table
per struct that a kind reaches.

Usage: gen_tables.py K8S_DIR > src/tables.rs && cargo fmt
       gen_tables.py --check src/tables.rs PROTO...

  --check compares the written tables with the `generated.proto` files of the same packages
  (named after their package, `core_v1.proto`, `meta_v1.proto`): every field's number must be
  in its message, as repeated or not as the table has it, and every field of a message must
  be in its table (each one that is not is printed).

  K8S_DIR: a directory holding checkouts, at the Kubernetes version the tables follow
  (v0.36.2), of k8s.io/api (`api/`), k8s.io/apimachinery (`apimachinery/`),
  k8s.io/kube-aggregator (`kube-aggregator/`) and k8s.io/apiextensions-apiserver
  (`apiextensions-apiserver/`).

A struct field that is not a pointer (Go always writes it, its zero value included) has its kind
wrapped in `Always`. Where a field's zero is `null` in JSON but absent in protobuf (a slice, map or pointer without
`omitempty`, a `metav1.Time` without `omitzero`), its kind is wrapped in `Nullable`. Types whose
JSON form is one of their fields (`JSONSchemaPropsOrBool`, `...OrArray`, `...OrStringArray`,
`certificates/v1` `ExtraValue`, a `[]string` sent as a message) are `Either` tables. A type that
reaches itself (`JSONSchemaProps`), and every type that reaches it, is written as a `static`
array, referenced as `&NAME`.

A kind that reaches a field of a type the tables have no kind for is written with that field
left out and marked incomplete; clients and kcr-testenv use protobuf only for complete kinds.
"""

import os
import re
import sys

# The packages whose kinds are written: package key, directory under K8S_DIR, the files read,
# API group ("" for core), import path.
PACKAGES = [
    ("core/v1", ""),
    ("apps/v1", "apps"),
    ("batch/v1", "batch"),
    ("coordination/v1", "coordination.k8s.io"),
    ("discovery/v1", "discovery.k8s.io"),
    ("networking/v1", "networking.k8s.io"),
    ("policy/v1", "policy"),
    ("rbac/v1", "rbac.authorization.k8s.io"),
    ("scheduling/v1", "scheduling.k8s.io"),
    ("storage/v1", "storage.k8s.io"),
    ("events/v1", "events.k8s.io"),
    ("autoscaling/v1", "autoscaling"),
    ("autoscaling/v2", "autoscaling"),
    ("certificates/v1", "certificates.k8s.io"),
    ("node/v1", "node.k8s.io"),
    ("flowcontrol/v1", "flowcontrol.apiserver.k8s.io"),
    ("admissionregistration/v1", "admissionregistration.k8s.io"),
    ("resource/v1", "resource.k8s.io"),
    ("apiregistration/v1", "apiregistration.k8s.io"),
    ("apiextensions/v1", "apiextensions.k8s.io"),
]

# Where a package's files are, under K8S_DIR (default: api/<key>/types.go).
SOURCES = {
    "apiregistration/v1": (
        "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1",
        ["kube-aggregator/pkg/apis/apiregistration/v1/types.go"],
    ),
    "apiextensions/v1": (
        "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
        [
            "apiextensions-apiserver/pkg/apis/apiextensions/v1/types.go",
            "apiextensions-apiserver/pkg/apis/apiextensions/v1/types_jsonschema.go",
        ],
    ),
}


def sources(key):
    """The import path and files (under K8S_DIR) of a package."""
    return SOURCES.get(key, ("k8s.io/api/" + key, [f"api/{key}/types.go"]))


META = "meta/v1"

# Import paths to package keys.
IMPORTS = {
    "k8s.io/apimachinery/pkg/apis/meta/v1": META,
    "k8s.io/apimachinery/pkg/api/resource": "resource",
    "k8s.io/apimachinery/pkg/util/intstr": "intstr",
    "k8s.io/apimachinery/pkg/types": "types",
    "k8s.io/apimachinery/pkg/runtime": "runtime",
}
for _key, _ in PACKAGES:
    IMPORTS[sources(_key)[0]] = _key

# Types with a kind of their own.
SPECIAL = {
    (META, "Time"): "Time",
    (META, "MicroTime"): "MicroTime",
    (META, "FieldsV1"): "FieldsV1",
    ("resource", "Quantity"): "Quantity",
    ("intstr", "IntOrString"): "IntOrString",
    ("runtime", "RawExtension"): "Raw",
    ("apiextensions/v1", "JSON"): "Raw",
}
# Types whose JSON form is one of their fields: the last one set (see `Kind::Either`).
EITHER = {
    ("apiextensions/v1", "JSONSchemaPropsOrBool"),
    ("apiextensions/v1", "JSONSchemaPropsOrArray"),
    ("apiextensions/v1", "JSONSchemaPropsOrStringArray"),
    ("certificates/v1", "ExtraValue"),
}
# Tables of types that are not Go structs: `ExtraValue` is a `[]string`, sent as a message.
SYNTHETIC = {("certificates/v1", "ExtraValue"): [(1, "items", "RepStr")]}
# Kinds of Go structs (their zero value is a message Go writes when the field is not a pointer).
STRUCT_KINDS = {"Time", "MicroTime", "FieldsV1", "Quantity", "IntOrString", "Raw"}
STRING_TYPES = {("types", "UID"), ("types", "NodeName")}
INTS = {"int", "int32", "int64", "uint", "uint32", "uint64", "uint16", "int16", "int8", "uint8"}


class Unsupported(Exception):
    pass


def read_package(paths, key):
    """The structs (name -> fields) and named non-struct types (name -> Go type) of a package's
    files."""
    src = "\n".join(open(p, encoding="utf-8").read() for p in paths)
    imports = {}
    lines = []
    for block in re.finditer(r"^import \((.*?)^\)", src, re.S | re.M):
        lines += block.group(1).splitlines()
    single = re.findall(r'^import\s+(\w+\s+)?"([^"]+)"', src, re.M)
    for alias, p in single:
        lines.append(f'{alias or ""}"{p}"')
    for line in lines:
        m = re.match(r'\s*(\w+)?\s*"([^"]+)"', line)
        if not m:
            continue
        alias = m.group(1) or m.group(2).rsplit("/", 1)[-1]
        imports[alias] = IMPORTS.get(m.group(2), m.group(2))
    structs, named = {}, {}
    for m in re.finditer(r"^type (\w+) struct \{\n(.*?)^\}", src, re.S | re.M):
        fields = []
        for line in m.group(2).splitlines():
            line = line.strip()
            if not line or line.startswith("//"):
                continue
            tag = re.search(r"`(.*)`", line)
            decl = line[: tag.start()].strip() if tag else line
            tags = dict(re.findall(r'(\w+):"([^"]*)"', tag.group(1))) if tag else {}
            parts = decl.split(None, 1)
            embedded = len(parts) == 1
            go_type = parts[0] if embedded else parts[1]
            fields.append((go_type, embedded, tags))
        structs[m.group(1)] = fields
    for m in re.finditer(r"^type (\w+) struct\s*\{\}", src, re.M):
        structs[m.group(1)] = []
    for m in re.finditer(r"^type (\w+) ([^{\s][^\n]*)$", src, re.M):
        if not m.group(2).startswith("struct"):
            named[m.group(1)] = m.group(2).strip()
    return {"key": key, "imports": imports, "structs": structs, "named": named}


def const_name(pkg, name):
    prefix = pkg.replace("/", "_").upper()
    snake = re.sub(r"(?<=[a-z0-9])([A-Z])|(?<=[A-Z])([A-Z])(?=[a-z])", r"_\1\2", name).upper()
    return f"{prefix}_{snake}"


class Generator:
    def __init__(self, packages):
        self.packages = packages
        self.tables = {}  # (pkg, struct) -> list of (number, json, kind) or None while in progress
        self.incomplete = {}  # (pkg, struct) -> reasons
        self.order = []
        self.recursive = set()  # tables that reach themselves

    def qualify(self, pkg, name):
        if "." in name:
            alias, n = name.split(".", 1)
            return self.packages[pkg]["imports"].get(alias, alias), n
        return pkg, name

    def underlying(self, pkg, name):
        """Follows named non-struct types to what they are made of; returns (pkg, type expr)."""
        p, n = self.qualify(pkg, name)
        if (p, n) in STRING_TYPES:
            return p, "string"
        seen = 0
        while p in self.packages and n in self.packages[p]["named"] and seen < 8:
            expr = self.packages[p]["named"][n]
            if re.fullmatch(r"[\w.]+", expr) and expr not in INTS and expr not in ("string", "bool", "float64", "float32"):
                p, n = self.qualify(p, expr)
                seen += 1
                continue
            return p, expr
        return p, n

    def scalar(self, pkg, expr):
        """The scalar name of a type expression, or None for a message or a container."""
        p, e = self.underlying(pkg, expr) if re.fullmatch(r"[\w.]+", expr) else (pkg, expr)
        if e == "string":
            return "str"
        if e in INTS:
            return "int"
        if e == "bool":
            return "bool"
        if e in ("float64", "float32"):
            return "float"
        return None

    def kind(self, pkg, go_type, omit=True, zero_omit=False):
        """A field's kind. `omit`: its JSON tag has `omitempty` or `omitzero`; `zero_omit`: it
        has `omitzero` (the only option that leaves out a zero struct)."""
        k = self.base_kind(pkg, go_type, omit)
        ptr = go_type.startswith("*")
        t = go_type.lstrip("*")
        container = t.startswith(("[]", "map[")) or k.startswith(("Rep", "Map", "Bytes"))
        # JSON writes `null` where protobuf writes nothing: a nil slice, map or pointer without
        # `omitempty`, and a zero `metav1.Time` (a struct: `omitempty` does not leave it out).
        base = k
        if (not omit and (container or ptr)) or (
            not ptr and not zero_omit and k in ("Time", "MicroTime")
        ):
            k = f"Nullable(&Kind::{k})"
        # Go writes a struct that is not a pointer always, its zero value included.
        if not ptr and (
            base.startswith(("Msg(", "Either(")) or base in STRUCT_KINDS
        ):
            k = f"Always(&Kind::{k})"
        return k

    def base_kind(self, pkg, go_type, omit=True):
        ptr = go_type.startswith("*")
        t = go_type.lstrip("*")
        if t.startswith("[]"):
            item = t[2:]
            if item == "byte":
                return "Bytes"
            s = self.scalar(pkg, item) if not item.startswith(("[]", "map[")) else None
            if s == "str":
                return "RepStr"
            if s == "int":
                return "RepInt"
            if s == "bool":
                return "RepBool"
            if self.qualify(pkg, item) == ("resource", "Quantity"):
                return "RepQuantity"
            if item.startswith(("[]", "map[", "*")):
                raise Unsupported(f"slice of {item}")
            if s == "float":
                raise Unsupported(f"slice of {item}")
            if SPECIAL.get(self.qualify(pkg, item)) == "Raw":
                return "RepRaw"
            return f"RepMsg({self.table(pkg, item)})"
        if t.startswith("map["):
            m = re.fullmatch(r"map\[([\w.]+)\](.+)", t)
            key, value = m.group(1), m.group(2)
            if self.scalar(pkg, key) != "str":
                raise Unsupported(f"map key {key}")
            if value == "[]byte":
                return "MapBytes"
            vp, vn = self.qualify(pkg, value)
            if (vp, vn) == ("resource", "Quantity"):
                return "MapQuantity"
            if (vp, vn) == (META, "Time"):
                return "MapTime"
            if (vp, vn) in EITHER:
                return f"MapEither({self.table(pkg, value)})"
            if re.fullmatch(r"[\w.]+", value) and self.scalar(pkg, value) == "str":
                return "MapStr"
            if re.fullmatch(r"[\w.]+", value) and self.scalar(pkg, value) is None:
                up, un = self.underlying(pkg, value)
                if not un.startswith(("[]", "map[")):
                    return f"MapMsg({self.table(pkg, value)})"
            raise Unsupported(f"map of {value}")
        p, n = self.qualify(pkg, t)
        if (p, n) in SPECIAL:
            return SPECIAL[(p, n)]
        if (p, n) in EITHER:
            return f"Either({self.table(pkg, t)})"
        up, un = self.underlying(pkg, t)
        if un.startswith(("[]", "map[")):
            return self.base_kind(up, un)
        s = self.scalar(pkg, t)
        if s == "float":
            if not ptr:
                raise Unsupported(f"float {t} that is not a pointer")
            return "Float"
        if s is not None:
            # JSON keeps the zero of a pointer, and of a value without `omitempty`.
            keep = ptr or not omit
            return {"str": "OptStr", "int": "OptInt", "bool": "OptBool"}[s] if keep else {
                "str": "Str", "int": "Int", "bool": "Bool"}[s]
        return f"Msg({self.table(pkg, t)})"

    def table(self, pkg, name):
        p, n = self.qualify(pkg, name)
        key = (p, n)
        if key in self.tables:
            if self.tables[key] is None:
                # A type that reaches itself: written as a static, referenced by address.
                self.recursive.add(key)
            return const_name(p, n)
        if key in SYNTHETIC:
            self.tables[key] = list(SYNTHETIC[key])
            self.incomplete[key] = []
            self.order.append(key)
            return const_name(p, n)
        if p not in self.packages or n not in self.packages[p]["structs"]:
            raise Unsupported(f"unknown type {p}.{n}")
        self.tables[key] = None
        either = key in EITHER
        rows, reasons = [], []
        for go_type, embedded, tags in self.packages[p]["structs"][n]:
            pb = tags.get("protobuf")
            js = tags.get("json")
            if either and pb:
                # No JSON names: the JSON form is one field's value, named as in the proto.
                js = re.search(r"name=(\w+)", pb).group(1) + ",omitempty"
            if not pb or js is None or js == "-":
                continue
            number = int(pb.split(",")[1])
            json_name, *options = js.split(",")
            inline = "inline" in options and json_name == ""
            omit = "omitempty" in options or "omitzero" in options
            try:
                k = self.kind(p, go_type, omit, "omitzero" in options)
            except Unsupported as e:
                reasons.append(f"{n}.{json_name or go_type}: {e}")
                continue
            if either:
                # Each field is written when set: its zero counts.
                k = {"Str": "OptStr", "Int": "OptInt", "Bool": "OptBool"}.get(k, k)
            if inline:
                k = re.sub(r"^Always\(&Kind::(Msg\(\w+\))\)$", r"\1", k)
                if not k.startswith("Msg("):
                    reasons.append(f"{n}: inline {go_type}")
                    continue
                k = "Inline(" + k[4:]
            elif embedded and not json_name:
                continue
            if number >= 128:
                reasons.append(f"{n}.{json_name}: field number {number}")
                continue
            rows.append((number, json_name, k))
        rows.sort()
        self.tables[key] = rows
        self.incomplete[key] = reasons
        self.order.append(key)
        return const_name(p, n)

    def reasons_of(self, key, seen=None):
        """Every reason a table or a table it reaches is incomplete."""
        seen = seen if seen is not None else set()
        if key in seen:
            return []
        seen.add(key)
        out = list(self.incomplete.get(key, []))
        for _, _, k in self.tables.get(key) or []:
            for name in re.findall(r"\((\w+)\)", k):
                for other in self.tables:
                    if const_name(*other) == name:
                        out += self.reasons_of(other, seen)
        return out


def main():
    k8s_dir = sys.argv[1]
    meta_types = os.path.join(k8s_dir, "apimachinery/pkg/apis/meta/v1/types.go")
    packages = {META: read_package([meta_types], META)}
    for key, _ in PACKAGES:
        packages[key] = read_package([os.path.join(k8s_dir, f) for f in sources(key)[1]], key)
    gen = Generator(packages)
    kinds = []
    for d, group in PACKAGES:
        version = d.rsplit("/", 1)[1]
        api_version = f"{group}/{version}" if group else version
        for name, fields in packages[d]["structs"].items():
            types = [f[0] for f in fields]
            if "metav1.TypeMeta" not in types or name.endswith("List"):
                continue
            if not any(f[2].get("json", "").startswith("metadata") for f in fields):
                continue
            kinds.append((api_version, name, d))
    kinds.append(("v1", "Status", META))
    # What a metadata-only list or watch (`Accept: ...;as=PartialObjectMetadataList`) carries.
    kinds.append(("meta.k8s.io/v1", "PartialObjectMetadata", META))
    out = [
        "// @generated by tools/gen_tables.py from the Go types of k8s.io/api and",
        "// k8s.io/apimachinery v0.36.2 (their `protobuf` and `json` struct tags); do not edit.",
        "//! Field tables of the built-in kinds, one per Go struct a kind reaches.",
        "",
        "use crate::schema::{Field, Kind, Schema, schema};",
        "",
    ]
    schemas = []
    for api_version, name, d in kinds:
        gen.table(d, name)
        reasons = gen.reasons_of((d, name))
        schemas.append((api_version, name, const_name(d, name), not reasons, reasons))
    # A table that reaches a recursive one is a static too (a const may not take part in a
    # cycle of constants).
    changed = True
    while changed:
        changed = False
        for key in gen.order:
            if key in gen.recursive:
                continue
            names = {n for _, _, k in gen.tables[key] for n in re.findall(r"\((\w+)\)", k)}
            if any(const_name(*r) in names for r in gen.recursive):
                gen.recursive.add(key)
                changed = True

    def ref(k):
        # A recursive table is a static array: referenced by address.
        k = re.sub(
            r"(Msg|Inline|RepMsg|MapMsg|Either|MapEither)\((\w+)\)",
            lambda m: f"{m.group(1)}(&{m.group(2)})"
            if any(const_name(*r) == m.group(2) for r in gen.recursive)
            else m.group(0),
            k,
        )
        return k

    for key in gen.order:
        rows = gen.tables[key]
        out.append(f"/// `{key[0]}` `{key[1]}`.")
        if key in gen.recursive:
            out.append(f"pub(crate) static {const_name(*key)}: [Field; {len(rows)}] = [")
        elif not rows:
            out.append(f"pub(crate) const {const_name(*key)}: &[Field] = &[];")
            continue
        else:
            out.append(f"pub(crate) const {const_name(*key)}: &[Field] = &[")
        for number, json_name, k in rows:
            out.append(f'    ({number}, "{json_name}", Kind::{ref(k)}),')
        out.append("];")
    out.append("")
    out.append("/// Every kind with a table, and whether its table is complete.")
    out.append("pub(crate) static SCHEMAS: &[Schema] = &[")
    for api_version, name, const, complete, reasons in schemas:
        for r in sorted(set(reasons)):
            out.append(f"    // {name} incomplete: {r}")
        const = f"&{const}" if any(const_name(*r) == const for r in gen.recursive) else const
        out.append(f'    schema("{api_version}", "{name}", {const}, {str(complete).lower()}),')
    out.append("];")
    print("\n".join(out))
    done = sum(1 for s in schemas if s[3])
    print(f"{len(schemas)} kinds, {done} complete, {len(gen.order)} tables", file=sys.stderr)


# Scalar proto types by the wire type they are sent with.
VARINT_TYPES = {"int32", "int64", "uint32", "uint64", "sint32", "sint64", "bool"}


def wire_matches(kind, proto_type):
    """Whether a table kind is sent with the wire type of the message field's proto type."""
    varint = kind in ("Int", "OptInt", "Bool", "OptBool", "RepInt")
    if proto_type in VARINT_TYPES:
        return varint and (("bool" == proto_type) == (kind in ("Bool", "OptBool")))
    if proto_type in ("string", "bytes"):
        return kind in ("Str", "OptStr", "RepStr", "Bytes")
    if proto_type in ("double", "float", "fixed64", "fixed32", "sfixed64", "sfixed32"):
        return False
    # A message or a map: length-delimited.
    return not varint and kind not in ("Str", "OptStr", "RepStr", "Bytes")


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
        r"^/// `([\w/]+)` `(\w+)`\.\npub\(crate\) const \w+: &\[Field\] =\s*&\[(.*?)\];",
        src,
        re.S | re.M,
    ):
        key = (m.group(1).replace("/", "_").upper(), m.group(2))
        proto = messages.get(key)
        if proto is None:
            print(f"no message {key}")
            bad += 1
            continue
        rows = re.findall(r"\(\s*(\d+),\s*\"(\w*)\",\s*Kind::(\w+)", m.group(3))
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
    if sys.argv[1:2] == ["--check"]:
        sys.exit(1 if check(sys.argv[2], sys.argv[3:]) else 0)
    main()
