//! kcr-protobuf's field tables (`crates/protobuf/src/tables.rs`): one table per Go struct a
//! built-in kind reaches, each field with its protobuf number, JSON name and kind.
//!
//! Every field of a Go API struct carries its protobuf number in its `protobuf` tag and its
//! JSON name in its `json` tag; its Go type says whether it is a pointer (written only when
//! set, its zero kept in JSON) or a value (always written, its zero left out of JSON when
//! `omitempty`). A struct field that is not a pointer has its kind wrapped in `Always`; where a
//! field's zero is `null` in JSON but absent in protobuf (a slice, map or pointer without
//! `omitempty`, a `metav1.Time` without `omitzero`) in `Nullable`. Types whose JSON form is one
//! of their fields are `Either` tables; a type that reaches itself, and every type that reaches
//! it, is a `static` array referenced as `&NAME`. A kind that reaches a field of a type the
//! tables have no kind for is written without that field and marked incomplete.

use std::collections::{BTreeSet, HashMap};

use regex::Regex;

use super::go::{Api, GoField, Package, Source};

/// The packages whose kinds are written: key, API group (`""` for core).
pub(super) const PACKAGES: &[(&str, &str)] = &[
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
];

const META: &str = "meta/v1";

/// A package of `k8s.io/api`, read from its `types.go`.
macro_rules! api {
    ($key:literal) => {
        Source {
            key: $key,
            path: concat!("k8s.io/api/", $key),
            files: &[concat!("api/", $key, "/types.go")],
        }
    };
}

/// The Go packages read (`cargo xtask gen --import`): meta/v1, then [`PACKAGES`].
pub const SOURCES: &[Source] = &[
    Source {
        key: META,
        path: "k8s.io/apimachinery/pkg/apis/meta/v1",
        files: &[
            "apimachinery/pkg/apis/meta/v1/types.go",
            "apimachinery/pkg/apis/meta/v1/time.go",
            // `FieldsV1` as Go builds it by default (without the `fieldsv1string` tag).
            "apimachinery/pkg/apis/meta/v1/fieldsv1_byte.go",
        ],
    },
    api!("core/v1"),
    api!("apps/v1"),
    api!("batch/v1"),
    api!("coordination/v1"),
    api!("discovery/v1"),
    api!("networking/v1"),
    api!("policy/v1"),
    api!("rbac/v1"),
    api!("scheduling/v1"),
    api!("storage/v1"),
    api!("events/v1"),
    api!("autoscaling/v1"),
    api!("autoscaling/v2"),
    api!("certificates/v1"),
    api!("node/v1"),
    api!("flowcontrol/v1"),
    api!("admissionregistration/v1"),
    api!("resource/v1"),
    Source {
        key: "apiregistration/v1",
        path: "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1",
        files: &["kube-aggregator/pkg/apis/apiregistration/v1/types.go"],
    },
    Source {
        key: "apiextensions/v1",
        path: "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1",
        files: &[
            "apiextensions-apiserver/pkg/apis/apiextensions/v1/types.go",
            "apiextensions-apiserver/pkg/apis/apiextensions/v1/types_jsonschema.go",
        ],
    },
    // The Go structs behind the types with a JSON form of their own (their unexported fields
    // too), which the pod-template-hash table (`go_types`) prints as go-spew does.
    Source {
        key: "resource",
        path: "k8s.io/apimachinery/pkg/api/resource",
        files: &[
            "apimachinery/pkg/api/resource/quantity.go",
            "apimachinery/pkg/api/resource/amount.go",
        ],
    },
    Source {
        key: "types",
        path: "k8s.io/apimachinery/pkg/types",
        files: &[
            "apimachinery/pkg/types/uid.go",
            "apimachinery/pkg/types/nodename.go",
        ],
    },
    Source {
        key: "intstr",
        path: "k8s.io/apimachinery/pkg/util/intstr",
        files: &["apimachinery/pkg/util/intstr/intstr.go"],
    },
];

/// Import paths of packages that are not read but whose types have a kind of their own.
const IMPORTS: &[(&str, &str)] = &[
    ("k8s.io/apimachinery/pkg/api/resource", "resource"),
    ("k8s.io/apimachinery/pkg/util/intstr", "intstr"),
    ("k8s.io/apimachinery/pkg/types", "types"),
    ("k8s.io/apimachinery/pkg/runtime", "runtime"),
];

/// Types with a kind of their own.
const SPECIAL: &[((&str, &str), &str)] = &[
    ((META, "Time"), "Time"),
    ((META, "MicroTime"), "MicroTime"),
    ((META, "FieldsV1"), "FieldsV1"),
    (("resource", "Quantity"), "Quantity"),
    (("intstr", "IntOrString"), "IntOrString"),
    (("runtime", "RawExtension"), "Raw"),
    (("apiextensions/v1", "JSON"), "Raw"),
];
/// Types whose JSON form is one of their fields: the last one set (see `Kind::Either`).
const EITHER: &[(&str, &str)] = &[
    ("apiextensions/v1", "JSONSchemaPropsOrBool"),
    ("apiextensions/v1", "JSONSchemaPropsOrArray"),
    ("apiextensions/v1", "JSONSchemaPropsOrStringArray"),
    ("certificates/v1", "ExtraValue"),
];
/// A row of a table: protobuf number, JSON name, kind.
type StaticRow = (u32, &'static str, &'static str);
/// Tables of types that are not Go structs: `ExtraValue` is a `[]string`, sent as a message.
const SYNTHETIC: &[((&str, &str), StaticRow)] =
    &[(("certificates/v1", "ExtraValue"), (1, "items", "RepStr"))];
/// Kinds of Go structs (their zero value is a message Go writes when the field is not a pointer).
const STRUCT_KINDS: &[&str] = &[
    "Time",
    "MicroTime",
    "FieldsV1",
    "Quantity",
    "IntOrString",
    "Raw",
];
/// Named string types of packages that are not read.
pub(super) const STRING_TYPES: &[(&str, &str)] = &[("types", "UID"), ("types", "NodeName")];
pub(super) const INTS: &[&str] = &[
    "int", "int32", "int64", "uint", "uint32", "uint64", "uint16", "int16", "int8", "uint8",
];

pub(super) type Key = (String, String);
type Row = (u32, String, String);

/// Why a field has no kind.
struct Unsupported(String);

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
}

/// `core/v1` `PodSpec` -> `CORE_V1_POD_SPEC`.
pub fn const_name(pkg: &str, name: &str) -> String {
    let mut out = pkg.replace('/', "_").to_uppercase();
    out.push('_');
    let chars: Vec<char> = name.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next = chars.get(i + 1).copied();
            if prev.is_ascii_lowercase()
                || prev.is_ascii_digit()
                || (prev.is_ascii_uppercase() && next.is_some_and(|n| n.is_ascii_lowercase()))
            {
                out.push('_');
            }
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

pub(super) struct Generator<'a> {
    packages: HashMap<&'a str, &'a Package>,
    /// Import path -> package key, for the packages read and [`IMPORTS`].
    keys: HashMap<&'a str, &'a str>,
    /// `None` while a table is being written.
    tables: HashMap<Key, Option<Vec<Row>>>,
    incomplete: HashMap<Key, Vec<String>>,
    order: Vec<Key>,
    recursive: BTreeSet<Key>,
}

impl<'a> Generator<'a> {
    pub(super) fn new(api: &'a Api) -> Self {
        let mut keys: HashMap<&str, &str> = IMPORTS.iter().copied().collect();
        for p in &api.packages {
            keys.insert(&p.path, &p.key);
        }
        Generator {
            packages: api.packages.iter().map(|p| (p.key.as_str(), p)).collect(),
            keys,
            tables: HashMap::new(),
            incomplete: HashMap::new(),
            order: Vec::new(),
            recursive: BTreeSet::new(),
        }
    }

    /// The package key and name of a type named in package `pkg`.
    pub(super) fn qualify(&self, pkg: &str, name: &str) -> Key {
        if let Some((alias, n)) = name.split_once('.') {
            let path = self.packages.get(pkg).and_then(|p| p.import(alias));
            let key = path.map_or(alias, |p| self.keys.get(p).copied().unwrap_or(p));
            (key.to_owned(), n.to_owned())
        } else {
            (pkg.to_owned(), name.to_owned())
        }
    }

    /// Follows named non-struct types to what they are made of: (package, type expression).
    pub(super) fn underlying(&self, pkg: &str, name: &str) -> Key {
        let (mut p, mut n) = self.qualify(pkg, name);
        if STRING_TYPES.contains(&(p.as_str(), n.as_str())) {
            return (p, "string".into());
        }
        let mut seen = 0;
        while let Some(expr) = self.packages.get(p.as_str()).and_then(|k| k.named(&n)) {
            if seen >= 8 {
                break;
            }
            if is_ident(expr)
                && !INTS.contains(&expr)
                && !["string", "bool", "float64", "float32"].contains(&expr)
            {
                (p, n) = self.qualify(&p, expr);
                seen += 1;
                continue;
            }
            return (p, expr.to_owned());
        }
        (p, n)
    }

    /// The fields of the struct `name` of package `pkg`.
    pub(super) fn strukt(&self, pkg: &str, name: &str) -> Option<&'a [GoField]> {
        self.packages.get(pkg).and_then(|p| p.strukt(name))
    }

    /// The scalar a type expression is (`str`, `int`, `bool`, `float`), if any.
    fn scalar(&self, pkg: &str, expr: &str) -> Option<&'static str> {
        let e = if is_ident(expr) {
            self.underlying(pkg, expr).1
        } else {
            expr.to_owned()
        };
        match e.as_str() {
            "string" => Some("str"),
            "bool" => Some("bool"),
            "float64" | "float32" => Some("float"),
            e if INTS.contains(&e) => Some("int"),
            _ => None,
        }
    }

    /// A field's kind. `omit`: its JSON tag has `omitempty` or `omitzero`; `zero_omit`: it has
    /// `omitzero` (the only option that leaves out a zero struct).
    fn kind(
        &mut self,
        pkg: &str,
        go_type: &str,
        omit: bool,
        zero_omit: bool,
    ) -> Result<String, Unsupported> {
        let mut k = self.base_kind(pkg, go_type, omit)?;
        let ptr = go_type.starts_with('*');
        let t = go_type.trim_start_matches('*');
        let container = t.starts_with("[]")
            || t.starts_with("map[")
            || ["Rep", "Map", "Bytes"].iter().any(|p| k.starts_with(p));
        let base = k.clone();
        // JSON writes `null` where protobuf writes nothing: a nil slice, map or pointer without
        // `omitempty`, and a zero `metav1.Time` (a struct: `omitempty` does not leave it out).
        if (!omit && (container || ptr))
            || (!ptr && !zero_omit && (k == "Time" || k == "MicroTime"))
        {
            k = format!("Nullable(&Kind::{k})");
        }
        // Go writes a struct that is not a pointer always, its zero value included.
        if !ptr
            && (base.starts_with("Msg(")
                || base.starts_with("Either(")
                || STRUCT_KINDS.contains(&base.as_str()))
        {
            k = format!("Always(&Kind::{k})");
        }
        Ok(k)
    }

    fn special(key: &Key) -> Option<&'static str> {
        SPECIAL
            .iter()
            .find(|((p, n), _)| *p == key.0 && *n == key.1)
            .map(|(_, k)| *k)
    }

    fn either(key: &Key) -> bool {
        EITHER.iter().any(|(p, n)| *p == key.0 && *n == key.1)
    }

    fn base_kind(&mut self, pkg: &str, go_type: &str, omit: bool) -> Result<String, Unsupported> {
        let ptr = go_type.starts_with('*');
        let t = go_type.trim_start_matches('*');
        if let Some(item) = t.strip_prefix("[]") {
            if item == "byte" {
                return Ok("Bytes".into());
            }
            let s = if item.starts_with("[]") || item.starts_with("map[") {
                None
            } else {
                self.scalar(pkg, item)
            };
            match s {
                Some("str") => return Ok("RepStr".into()),
                Some("int") => return Ok("RepInt".into()),
                Some("bool") => return Ok("RepBool".into()),
                _ => {}
            }
            let q = self.qualify(pkg, item);
            if q == ("resource".into(), "Quantity".into()) {
                return Ok("RepQuantity".into());
            }
            if item.starts_with("[]") || item.starts_with("map[") || item.starts_with('*') {
                return Err(Unsupported(format!("slice of {item}")));
            }
            if s == Some("float") {
                return Err(Unsupported(format!("slice of {item}")));
            }
            if Self::special(&q) == Some("Raw") {
                return Ok("RepRaw".into());
            }
            return Ok(format!("RepMsg({})", self.table(pkg, item)?));
        }
        if t.starts_with("map[") {
            let re = Regex::new(r"^map\[([\w.]+)\](.+)$").expect("regex");
            let m = re
                .captures(t)
                .ok_or_else(|| Unsupported(format!("map {t}")))?;
            let (key, value) = (&m[1], &m[2]);
            if self.scalar(pkg, key) != Some("str") {
                return Err(Unsupported(format!("map key {key}")));
            }
            if value == "[]byte" {
                return Ok("MapBytes".into());
            }
            let v = self.qualify(pkg, value);
            if v == ("resource".into(), "Quantity".into()) {
                return Ok("MapQuantity".into());
            }
            if v == (META.into(), "Time".into()) {
                return Ok("MapTime".into());
            }
            if Self::either(&v) {
                return Ok(format!("MapEither({})", self.table(pkg, value)?));
            }
            if is_ident(value) && self.scalar(pkg, value) == Some("str") {
                return Ok("MapStr".into());
            }
            if is_ident(value) && self.scalar(pkg, value).is_none() {
                let (_, un) = self.underlying(pkg, value);
                if !un.starts_with("[]") && !un.starts_with("map[") {
                    return Ok(format!("MapMsg({})", self.table(pkg, value)?));
                }
            }
            return Err(Unsupported(format!("map of {value}")));
        }
        let q = self.qualify(pkg, t);
        if let Some(k) = Self::special(&q) {
            return Ok(k.into());
        }
        if Self::either(&q) {
            return Ok(format!("Either({})", self.table(pkg, t)?));
        }
        let (up, un) = self.underlying(pkg, t);
        if un.starts_with("[]") || un.starts_with("map[") {
            return self.base_kind(&up, &un, true);
        }
        match self.scalar(pkg, t) {
            Some("float") if !ptr => Err(Unsupported(format!("float {t} that is not a pointer"))),
            Some("float") => Ok("Float".into()),
            Some(s) => {
                // JSON keeps the zero of a pointer, and of a value without `omitempty`.
                let keep = ptr || !omit;
                let k = match (s, keep) {
                    ("str", true) => "OptStr",
                    ("int", true) => "OptInt",
                    ("bool", true) => "OptBool",
                    ("str", false) => "Str",
                    ("int", false) => "Int",
                    _ => "Bool",
                };
                Ok(k.into())
            }
            None => Ok(format!("Msg({})", self.table(pkg, t)?)),
        }
    }

    /// Writes the table of a type (and of the types it reaches) and returns its name.
    fn table(&mut self, pkg: &str, name: &str) -> Result<String, Unsupported> {
        let key = self.qualify(pkg, name);
        let cname = const_name(&key.0, &key.1);
        if let Some(t) = self.tables.get(&key) {
            if t.is_none() {
                // A type that reaches itself: written as a static, referenced by address.
                self.recursive.insert(key);
            }
            return Ok(cname);
        }
        if let Some((_, (n, j, k))) = SYNTHETIC
            .iter()
            .find(|((p, n), _)| *p == key.0 && *n == key.1)
        {
            self.tables
                .insert(key.clone(), Some(vec![(*n, (*j).into(), (*k).into())]));
            self.incomplete.insert(key.clone(), Vec::new());
            self.order.push(key);
            return Ok(cname);
        }
        let Some(fields) = self
            .packages
            .get(key.0.as_str())
            .and_then(|p| p.strukt(&key.1))
        else {
            return Err(Unsupported(format!("unknown type {}.{}", key.0, key.1)));
        };
        self.tables.insert(key.clone(), None);
        let either = Self::either(&key);
        let pb_name = Regex::new(r"name=(\w+)").expect("regex");
        let inline_msg = Regex::new(r"^Always\(&Kind::(Msg\(\w+\))\)$").expect("regex");
        let (mut rows, mut reasons) = (Vec::new(), Vec::new());
        let p = key.0.clone();
        let n = key.1.clone();
        for GoField {
            go_type,
            embedded,
            json,
            protobuf,
            ..
        } in fields
        {
            let Some(pb) = protobuf.as_deref().filter(|pb| !pb.is_empty()) else {
                continue;
            };
            let js = if either {
                // No JSON names: the JSON form is one field's value, named as in the proto.
                pb_name.captures(pb).map(|m| format!("{},omitempty", &m[1]))
            } else {
                json.clone()
            };
            let Some(js) = js.filter(|j| j != "-") else {
                continue;
            };
            let number: u32 = pb
                .split(',')
                .nth(1)
                .and_then(|n| n.parse().ok())
                .ok_or_else(|| Unsupported(format!("{n}: protobuf tag {pb:?}")))?;
            let mut parts = js.split(',');
            let json_name = parts.next().unwrap_or_default().to_owned();
            let options: Vec<&str> = parts.collect();
            let inline = options.contains(&"inline") && json_name.is_empty();
            let omit = options.contains(&"omitempty") || options.contains(&"omitzero");
            let mut k = match self.kind(&p, go_type, omit, options.contains(&"omitzero")) {
                Ok(k) => k,
                Err(Unsupported(e)) => {
                    let what = if json_name.is_empty() {
                        go_type.as_str()
                    } else {
                        json_name.as_str()
                    };
                    reasons.push(format!("{n}.{what}: {e}"));
                    continue;
                }
            };
            if either {
                // Each field is written when set: its zero counts.
                k = match k.as_str() {
                    "Str" => "OptStr".into(),
                    "Int" => "OptInt".into(),
                    "Bool" => "OptBool".into(),
                    _ => k,
                };
            }
            if inline {
                k = inline_msg.replace(&k, "$1").into_owned();
                let Some(rest) = k.strip_prefix("Msg(") else {
                    reasons.push(format!("{n}: inline {go_type}"));
                    continue;
                };
                k = format!("Inline({rest}");
            } else if *embedded && json_name.is_empty() {
                continue;
            }
            if number >= 128 {
                reasons.push(format!("{n}.{json_name}: field number {number}"));
                continue;
            }
            rows.push((number, json_name, k));
        }
        rows.sort();
        self.tables.insert(key.clone(), Some(rows));
        self.incomplete.insert(key.clone(), reasons);
        self.order.push(key);
        Ok(cname)
    }

    /// The names of the tables a kind refers to.
    fn refs(kind: &str) -> Vec<String> {
        let re = Regex::new(r"\((\w+)\)").expect("regex");
        re.captures_iter(kind).map(|m| m[1].to_owned()).collect()
    }

    /// Every reason a table or a table it reaches is incomplete.
    fn reasons_of(&self, key: &Key, seen: &mut BTreeSet<Key>) -> Vec<String> {
        if !seen.insert(key.clone()) {
            return Vec::new();
        }
        let mut out = self.incomplete.get(key).cloned().unwrap_or_default();
        let rows = self.tables.get(key).cloned().flatten().unwrap_or_default();
        for (_, _, k) in rows {
            for name in Self::refs(&k) {
                let others: Vec<Key> = self
                    .tables
                    .keys()
                    .filter(|o| const_name(&o.0, &o.1) == name)
                    .cloned()
                    .collect();
                for other in others {
                    out.extend(self.reasons_of(&other, seen));
                }
            }
        }
        out
    }
}

/// Writes `tables.rs` (before `rustfmt`) from the declarations.
pub fn generate(api: &Api) -> Result<String, String> {
    let mut g = Generator::new(api);
    let mut kinds = Vec::new();
    for (d, group) in PACKAGES {
        let pkg = g
            .packages
            .get(d)
            .ok_or_else(|| format!("the declarations lack the package {d}"))?;
        let version = d.rsplit('/').next().unwrap_or(d);
        let api_version = if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        };
        for (name, fields) in &pkg.structs {
            if !fields.iter().any(|f| f.go_type == "metav1.TypeMeta") || name.ends_with("List") {
                continue;
            }
            if !fields
                .iter()
                .any(|f| f.json.as_deref().unwrap_or("").starts_with("metadata"))
            {
                continue;
            }
            kinds.push((api_version.clone(), name.clone(), (*d).to_owned()));
        }
    }
    kinds.push(("v1".to_owned(), "Status".to_owned(), META.to_owned()));
    // Metadata-only lists and watch events (`as=PartialObjectMetadataList`).
    kinds.push((
        "meta.k8s.io/v1".to_owned(),
        "PartialObjectMetadata".to_owned(),
        META.to_owned(),
    ));
    let mut out = vec![
        "// @generated by `cargo xtask gen` from the Go types of k8s.io/api and".to_owned(),
        format!(
            "// k8s.io/apimachinery {} (their `protobuf` and `json` struct tags); do not edit.",
            api.version
        ),
        "//! Field tables of the built-in kinds, one per Go struct a kind reaches.".into(),
        String::new(),
        "use crate::schema::{Field, Kind, Schema, schema};".into(),
        String::new(),
    ];
    let mut schemas = Vec::new();
    for (api_version, name, d) in &kinds {
        g.table(d, name)
            .map_err(|Unsupported(e)| format!("{api_version} {name}: {e}"))?;
        let mut reasons = g.reasons_of(&(d.clone(), name.clone()), &mut BTreeSet::new());
        let complete = reasons.is_empty();
        reasons.sort();
        reasons.dedup();
        schemas.push((api_version, name, const_name(d, name), complete, reasons));
    }
    // A table that reaches a recursive one is a static too (a const may not take part in a
    // cycle of constants).
    loop {
        let recursive: BTreeSet<String> =
            g.recursive.iter().map(|(p, n)| const_name(p, n)).collect();
        let more: Vec<Key> = g
            .order
            .iter()
            .filter(|key| !g.recursive.contains(*key))
            .filter(|key| {
                g.tables[*key]
                    .iter()
                    .flatten()
                    .flat_map(|(_, _, k)| Generator::refs(k))
                    .any(|n| recursive.contains(&n))
            })
            .cloned()
            .collect();
        if more.is_empty() {
            break;
        }
        g.recursive.extend(more);
    }
    let recursive: BTreeSet<String> = g.recursive.iter().map(|(p, n)| const_name(p, n)).collect();
    let by_address =
        Regex::new(r"(Msg|Inline|RepMsg|MapMsg|Either|MapEither)\((\w+)\)").expect("regex");
    let reference = |k: &str| {
        by_address
            .replace_all(k, |m: &regex::Captures| {
                if recursive.contains(&m[2]) {
                    format!("{}(&{})", &m[1], &m[2])
                } else {
                    m[0].to_owned()
                }
            })
            .into_owned()
    };
    for key in &g.order {
        let rows = g.tables[key].as_deref().unwrap_or_default();
        let cname = const_name(&key.0, &key.1);
        out.push(format!("/// `{}` `{}`.", key.0, key.1));
        if g.recursive.contains(key) {
            out.push(format!(
                "pub(crate) static {cname}: [Field; {}] = [",
                rows.len()
            ));
        } else if rows.is_empty() {
            out.push(format!("pub(crate) const {cname}: &[Field] = &[];"));
            continue;
        } else {
            out.push(format!("pub(crate) const {cname}: &[Field] = &["));
        }
        for (number, json_name, k) in rows {
            out.push(format!(
                "    ({number}, \"{json_name}\", Kind::{}),",
                reference(k)
            ));
        }
        out.push("];".into());
    }
    out.push(String::new());
    out.push("/// Every kind with a table, and whether its table is complete.".into());
    out.push("pub(crate) static SCHEMAS: &[Schema] = &[".into());
    for (api_version, name, cname, complete, reasons) in &schemas {
        for r in reasons {
            out.push(format!("    // {name} incomplete: {r}"));
        }
        let cname = if recursive.contains(cname) {
            format!("&{cname}")
        } else {
            cname.clone()
        };
        out.push(format!(
            "    schema(\"{api_version}\", \"{name}\", {cname}, {complete}),"
        ));
    }
    out.push("];".into());
    Ok(out.join("\n") + "\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn const_names_should_split_words_as_the_tables_spell_them() {
        assert_eq!(const_name("core/v1", "PodSpec"), "CORE_V1_POD_SPEC");
        assert_eq!(
            const_name("core/v1", "GCEPersistentDiskVolumeSource"),
            "CORE_V1_GCE_PERSISTENT_DISK_VOLUME_SOURCE"
        );
        assert_eq!(
            const_name("core/v1", "ISCSIPersistentVolumeSource"),
            "CORE_V1_ISCSI_PERSISTENT_VOLUME_SOURCE"
        );
        assert_eq!(
            const_name("autoscaling/v2", "HPAScalingPolicy"),
            "AUTOSCALING_V2_HPA_SCALING_POLICY"
        );
        assert_eq!(
            const_name("core/v1", "CephFSPersistentVolumeSource"),
            "CORE_V1_CEPH_FS_PERSISTENT_VOLUME_SOURCE"
        );
        assert_eq!(const_name("meta/v1", "Time"), "META_V1_TIME");
    }
}
