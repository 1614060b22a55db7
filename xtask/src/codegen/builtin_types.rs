//! kcr-testenv's structure table for field management and strategic merge patch
//! (`crates/testenv/src/managed_fields/builtin_types.rs`, whose module docs give the format):
//! every struct a served built-in kind reaches, with each JSON field's type as the Kubernetes
//! OpenAPI spec gives it to structured-merge-diff.
//!
//! The spec's extensions come from the Go declarations as openapi-gen writes them:
//! `+listType`/`+listMapKey` (`x-kubernetes-list-type`/`-list-map-keys`), `+mapType`
//! (`x-kubernetes-map-type`), a struct's `+structType=atomic`, the `patchStrategy` and
//! `patchMergeKey` tags (`x-kubernetes-patch-strategy`/`-merge-key`), and the defaults:
//! `+default=` where declared, else the zero value openapi-gen gives a field that is neither a
//! pointer nor `omitempty`. A list without `+listType` is what kube-openapi's schema
//! conversion makes of it: a map keyed by its merge key when its patch strategy merges, a set
//! when it merges without a key, else atomic. Types with an OpenAPI form of their own (a
//! string: `Time`, `Quantity`, `IntOrString`; untyped: `FieldsV1`, the apiextensions `JSON`
//! and `JSONSchemaPropsOr*`) are written as such; `RawExtension` is untyped and atomic, as
//! kube-openapi's conversion special-cases it.
//!
//! The roots are the kinds of the resources (not subresources) kube-apiserver serves (`crates/testenv/data/api-resources-*.txt`)
//! of the packages read; the structs follow in the order a breadth-first walk from the roots
//! (sorted by name, fields by JSON name) first reaches them.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use super::go::{Api, GoField};
use super::protobuf::{Generator, INTS, Key, PACKAGES};

/// The served-resources list the roots are read from, relative to the workspace root.
pub const SERVED: &str = "crates/testenv/data/api-resources-v1.36.2.txt";

/// Types whose OpenAPI form is their own (`OpenAPISchemaType`, or kube-openapi's special case
/// for `RawExtension`), not their Go struct's: package key or import alias, name, table type.
const OWN_FORM: &[((&str, &str), &str)] = &[
    (("meta/v1", "Time"), "s"),
    (("meta/v1", "MicroTime"), "s"),
    (("meta/v1", "Duration"), "s"),
    (("meta/v1", "FieldsV1"), "?"),
    (("resource", "Quantity"), "s"),
    (("intstr", "IntOrString"), "s"),
    (("types", "UID"), "s"),
    (("types", "NodeName"), "s"),
    (("runtime", "RawExtension"), "?a"),
    (("apiextensions/v1", "JSON"), "?"),
    (("apiextensions/v1", "JSONSchemaPropsOrArray"), "?"),
    (("apiextensions/v1", "JSONSchemaPropsOrBool"), "?"),
    (("apiextensions/v1", "JSONSchemaPropsOrStringArray"), "?"),
];

/// A field of a struct as the table writes it.
struct Row {
    ty: String,
    patch: Option<String>,
    /// The field's `+default=` marker, or its zero value (`None`: a pointer or `omitempty`).
    default: Option<String>,
    zero: Option<char>,
}

struct Walk<'a> {
    api: &'a Api,
    generator: Generator<'a>,
    queue: VecDeque<Key>,
    seen: BTreeSet<Key>,
}

fn table_name((pkg, name): &Key) -> String {
    format!("{}.{name}", pkg.replace('/', "."))
}

/// The options of a `json` tag after its name.
fn json_parts(f: &GoField) -> Option<(&str, Vec<&str>)> {
    let j = f.json.as_deref()?;
    let mut parts = j.split(',');
    let name = parts.next().unwrap_or_default();
    Some((name, parts.collect()))
}

impl<'a> Walk<'a> {
    fn own_form(&self, key: &Key) -> Option<&'static str> {
        OWN_FORM
            .iter()
            .find(|((p, n), _)| *p == key.0 && *n == key.1)
            .map(|(_, t)| *t)
    }

    /// The JSON fields of a struct, embedded inline structs flattened, by JSON name.
    fn fields(
        &self,
        key: &Key,
        out: &mut BTreeMap<String, (String, &'a GoField)>,
    ) -> Result<(), String> {
        let fields = self
            .generator
            .strukt(&key.0, &key.1)
            .ok_or_else(|| format!("no struct {}", table_name(key)))?;
        for f in fields {
            match json_parts(f) {
                Some(("-", _)) => {}
                Some((name, _)) if !name.is_empty() => {
                    out.insert(name.to_owned(), (key.0.clone(), f));
                }
                _ if f.embedded => {
                    let inner = self
                        .generator
                        .qualify(&key.0, f.go_type.trim_start_matches('*'));
                    self.fields(&inner, out)?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The table type of a Go type expression of package `pkg`, with the markers of its field.
    fn ty(&mut self, pkg: &str, go_type: &str, f: Option<&GoField>) -> Result<String, String> {
        let t = go_type.trim_start_matches('*');
        if t == "[]byte" {
            return Ok("s".into());
        }
        let marker = |name: &str| f.and_then(|f| f.marker(name).next().map(str::to_owned));
        if let Some(elem) = t.strip_prefix("[]") {
            let elem = self.ty(pkg, elem, None)?;
            let strategy = f
                .and_then(|f| f.patch_strategy.as_deref())
                .unwrap_or_default();
            let merges = strategy.split(',').any(|s| s == "merge");
            let key = f.and_then(|f| f.patch_merge_key.clone());
            let kind = match (marker("listType").as_deref(), merges, key) {
                (Some("map"), ..) => {
                    let keys: Vec<&str> = f
                        .map(|f| f.marker("listMapKey").collect())
                        .unwrap_or_default();
                    if keys.is_empty() {
                        return Err(format!("a list map without keys: {go_type}"));
                    }
                    format!("[m:{}]", keys.join(","))
                }
                (Some("set"), ..) => "[s]".into(),
                (Some("atomic"), ..) => "[a]".into(),
                (Some(other), ..) => return Err(format!("unknown listType {other}")),
                (None, true, Some(key)) => format!("[m:{key}]"),
                (None, true, None) => "[s]".into(),
                (None, false, _) => "[a]".into(),
            };
            return Ok(format!("{kind}{elem}"));
        }
        if let Some(rest) = t.strip_prefix("map[") {
            let close = rest
                .find(']')
                .ok_or_else(|| format!("bad map type {go_type}"))?;
            let elem = self.ty(pkg, &rest[close + 1..], None)?;
            let atomic = marker("mapType").as_deref() == Some("atomic");
            return Ok(format!("{}{elem}", if atomic { "{a}" } else { "{}" }));
        }
        if t.starts_with("map") || t.contains(['[', ' ']) {
            return Err(format!("unsupported Go type {go_type}"));
        }
        if t == "string" || t == "bool" || t == "float64" || t == "float32" || INTS.contains(&t) {
            return Ok("s".into());
        }
        let key = self.generator.qualify(pkg, t);
        if let Some(own) = self.own_form(&key) {
            return Ok(own.into());
        }
        if self.generator.strukt(&key.0, &key.1).is_some() {
            let mut fields = BTreeMap::new();
            self.fields(&key, &mut fields)?;
            if fields.is_empty() {
                // An object without properties: untyped.
                return Ok("?".into());
            }
            if self.seen.insert(key.clone()) {
                self.queue.push_back(key.clone());
            }
            return Ok(format!("@{}", table_name(&key)));
        }
        let named = self
            .api
            .package(&key.0)
            .and_then(|p| p.named(&key.1))
            .ok_or_else(|| format!("unknown type {t} (in {pkg})"))?
            .to_owned();
        self.ty(&key.0, &named, f)
    }

    /// The zero value openapi-gen declares as the default of a field that is neither a pointer
    /// nor `omitempty`, if it is a scalar.
    fn zero_default(&self, pkg: &str, go_type: &str) -> Option<&'static str> {
        if go_type.starts_with(['*', '[']) || go_type.starts_with("map[") {
            return None;
        }
        let (_, under) = self.generator.underlying(pkg, go_type);
        match under.as_str() {
            "string" => Some("\"\""),
            "bool" => Some("false"),
            u if INTS.contains(&u) || u == "float64" || u == "float32" => Some("0"),
            _ => None,
        }
    }

    fn row(&mut self, pkg: &str, f: &GoField) -> Result<Row, String> {
        let (_, options) = json_parts(f).unwrap_or_default();
        let ty = self.ty(pkg, &f.go_type, Some(f))?;
        let ptr = f.go_type.starts_with('*');
        let omitempty = options.contains(&"omitempty");
        let omitzero = options.contains(&"omitzero");
        let patch = match (&f.patch_strategy, &f.patch_merge_key) {
            (None, None) => None,
            (s, k) => Some(format!(
                "p:{}{}",
                s.as_deref().unwrap_or("-"),
                k.as_deref().map(|k| format!(":{k}")).unwrap_or_default()
            )),
        };
        let default = match f.marker("default").next() {
            // A Go constant (`ref(AzureDataDiskCachingReadWrite)`): no list-map key has one.
            Some(d) if d.starts_with("ref(") => None,
            Some(d) => Some(d.to_owned()),
            None if !ptr && !omitempty && !omitzero => {
                self.zero_default(pkg, &f.go_type).map(str::to_owned)
            }
            None => None,
        };
        let zero = if ptr || omitzero {
            None
        } else if ty.starts_with('@') {
            Some('=')
        } else if ty.starts_with(['[', '{']) && !omitempty {
            Some('~')
        } else {
            None
        };
        Ok(Row {
            ty,
            patch,
            default,
            zero,
        })
    }
}

/// The roots: every served kind whose package is read, by table name.
fn roots(api: &Api, served: &str) -> Result<BTreeMap<String, Key>, String> {
    let mut roots = BTreeMap::new();
    for line in served
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        let mut words = line.split_whitespace();
        let (Some(gv), Some(resource), Some(kind)) = (words.next(), words.next(), words.next())
        else {
            return Err(format!("{SERVED}: bad line {line:?}"));
        };
        if resource.contains('/') {
            // A subresource's kind (`Scale`, `Eviction`, `PodExecOptions`) is not stored.
            continue;
        }
        let (group, version) = gv.rsplit_once('/').unwrap_or(("", gv));
        let Some((pkg, _)) = PACKAGES
            .iter()
            .find(|(p, g)| *g == group && p.rsplit_once('/').is_some_and(|(_, v)| v == version))
        else {
            continue;
        };
        let Some(p) = api.package(pkg) else { continue };
        if p.strukt(kind).is_some() {
            let key = (pkg.to_string(), kind.to_owned());
            roots.insert(table_name(&key), key);
        }
    }
    Ok(roots)
}

/// Writes the table from the declarations and the served-resources list.
pub fn generate_from(api: &Api, served: &str) -> Result<String, String> {
    let mut walk = Walk {
        api,
        generator: Generator::new(api),
        queue: VecDeque::new(),
        seen: BTreeSet::new(),
    };
    for key in roots(api, served)?.into_values() {
        walk.seen.insert(key.clone());
        walk.queue.push_back(key);
    }
    let mut structs: Vec<(Key, Vec<(String, Row)>)> = Vec::new();
    while let Some(key) = walk.queue.pop_front() {
        let mut fields = BTreeMap::new();
        walk.fields(&key, &mut fields)?;
        let mut rows = Vec::new();
        for (name, (pkg, f)) in fields {
            let row = walk
                .row(&pkg, f)
                .map_err(|e| format!("{}.{name}: {e}", table_name(&key)))?;
            rows.push((name, row));
        }
        structs.push((key, rows));
    }
    // The keys of the list maps of each struct: their defaults are written.
    let mut keys: HashMap<String, BTreeSet<String>> = HashMap::new();
    for (_, rows) in &structs {
        for (_, row) in rows {
            if let Some(rest) = row.ty.strip_prefix("[m:")
                && let Some((ks, elem)) = rest.split_once(']')
                && let Some(elem) = elem.strip_prefix('@')
            {
                keys.entry(elem.to_owned())
                    .or_default()
                    .extend(ks.split(',').map(str::to_owned));
            }
        }
    }
    let mut lines = Vec::new();
    for (key, rows) in &structs {
        let name = table_name(key);
        let atomic = api.package(&key.0).is_some_and(|p| {
            p.struct_marker(&key.1, "structType").any(|m| m == "atomic")
                || p.struct_marker(&key.1, "mapType").any(|m| m == "atomic")
        });
        lines.push(if atomic {
            format!("{name} atomic")
        } else {
            name.clone()
        });
        for (field, row) in rows {
            let mut line = format!(" {field} {}", row.ty);
            if let Some(p) = &row.patch {
                line.push(' ');
                line.push_str(p);
            }
            if keys.get(&name).is_some_and(|k| k.contains(field))
                && let Some(d) = &row.default
            {
                line.push_str(" d:");
                line.push_str(d);
            }
            if let Some(z) = row.zero {
                line.push(' ');
                line.push(z);
            }
            lines.push(line);
        }
    }
    let mut out = format!(
        "// @generated by `cargo xtask gen` from the Go types of k8s.io/api, k8s.io/apimachinery,\n\
         // k8s.io/kube-aggregator and k8s.io/apiextensions-apiserver {} (their fields' types, tags\n\
         // and OpenAPI markers) and {SERVED}; do not edit.\n",
        api.version
    );
    out.push_str(DOCS);
    out.push_str("\n/// The table (see the module docs for its format).\npub(super) const BUILTIN_TYPES: &str = \"\\\n");
    for line in &lines {
        out.push_str(&line.replace('\\', "\\\\").replace('"', "\\\""));
        out.push('\n');
    }
    out.push_str("\";\n");
    Ok(out)
}

/// Writes the table (a [`super::Table`]): reads the served-resources list of the workspace.
pub fn generate(api: &Api) -> Result<String, String> {
    let path = super::root().join(SERVED);
    let served = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    generate_from(api, &served)
}

/// The table's module docs.
const DOCS: &str = "\
//! The structure of the built-in types that field management and strategic merge patch need:
//! for each type its fields, and for each field whether it is a scalar, a named type, a list
//! (atomic, set, or map keyed by `x-kubernetes-list-map-keys`) or a map (granular or atomic),
//! plus the strategic-merge-patch strategy and merge key (`x-kubernetes-patch-strategy`,
//! `x-kubernetes-patch-merge-key`) where the type declares one.
//!
//! Generated (`cargo xtask gen`, see `xtask/src/codegen/builtin_types.rs`) from the Go
//! declarations' OpenAPI markers (`+listType`, `+listMapKey`, `+mapType`, `+structType`,
//! `+default`) and `patchStrategy`/`patchMergeKey` tags, for every struct reachable from a
//! served built-in kind. Format, one type a block:
//!
//! ```text
//! <type name>[ atomic]            a struct; `atomic` when the whole struct is one value
//!  <field> <type> [p:<strategy>[:<merge key>]] [d:<default>] [=|~]
//! ```
//!
//! where `<type>` is `s` (scalar), `?` (untyped, deduced), `?a` (untyped, atomic), `@<type
//! name>`, `[a]<type>` (atomic list), `[s]<type>` (set), `[m:<key>,...]<type>` (list map),
//! `{}<type>` (granular map) or `{a}<type>` (atomic map); `=` marks a struct-valued field that
//! a typed zero object always carries (`{}`), as a Go struct value does, and `~` a list or map
//! field it carries as `null` (a Go field without `omitempty`); `d:` is the JSON
//! default of a list-map key field (used when an item omits it).
";

#[cfg(test)]
mod tests {
    use super::super::go::read_go;
    use super::*;

    const META: &str = r#"package v1

type TypeMeta struct {
	Kind string `json:"kind,omitempty"`
	APIVersion string `json:"apiVersion,omitempty"`
}

type ObjectMeta struct {
	Name string `json:"name,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
	CreationTimestamp Time `json:"creationTimestamp,omitempty,omitzero"`
}

type FieldsV1 struct {
	Raw []byte `json:"-"`
}
"#;

    const CORE: &str = r#"package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
)

type Thing struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec ThingSpec `json:"spec,omitempty"`
	Status *ThingStatus `json:"status,omitempty"`
}

type ThingSpec struct {
	// +listType=map
	// +listMapKey=port
	// +listMapKey=protocol
	Ports []Port `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"port"`
	Finalizers []string `json:"finalizers,omitempty" patchStrategy:"merge"`
	Env []Env `json:"env" patchStrategy:"merge" patchMergeKey:"name"`
	// +mapType=atomic
	Selector map[string]string `json:"selector"`
	Limits ResourceList `json:"limits,omitempty"`
	Raw runtime.RawExtension `json:"raw"`
	Fields *metav1.FieldsV1 `json:"fields,omitempty"`
	// +listType=set
	Names []Name `json:"names,omitempty"`
	Ref *Ref `json:"ref,omitempty"`
	Data []byte `json:"data"`
}

type ResourceList map[string]resource.Quantity

type Name string

type Port struct {
	Port int32 `json:"port"`
	// +default="TCP"
	Protocol string `json:"protocol,omitempty"`
	HostIP string `json:"hostIP"`
}

type Env struct {
	Name string `json:"name"`
}

// +structType=atomic
type Ref struct {
	Name string `json:"name"`
}

type ThingStatus struct{}
"#;

    fn api() -> Api {
        Api {
            version: "v0.0.0".into(),
            packages: vec![
                read_go("meta/v1", "k8s.io/apimachinery/pkg/apis/meta/v1", META),
                read_go("core/v1", "k8s.io/api/core/v1", CORE),
            ],
        }
    }

    fn table(text: &str) -> &str {
        let start = text.find("&str = \"\\\n").expect("the table") + 10;
        &text[start..text.rfind("\";").expect("its end")]
    }

    #[test]
    fn the_table_should_carry_the_openapi_markers_tags_and_defaults_of_the_declarations() {
        let text = generate_from(&api(), "v1 things Thing namespaced=true verbs=get\n").unwrap();
        assert_eq!(
            table(&text),
            "\
core.v1.Thing
 apiVersion s
 kind s
 metadata @meta.v1.ObjectMeta =
 spec @core.v1.ThingSpec =
 status ?
meta.v1.ObjectMeta
 creationTimestamp s
 labels {}s
 name s
core.v1.ThingSpec
 data s
 env [m:name]@core.v1.Env p:merge:name ~
 fields ?
 finalizers [s]s p:merge
 limits {}s
 names [s]s
 ports [m:port,protocol]@core.v1.Port p:merge:port
 raw ?a
 ref @core.v1.Ref
 selector {a}s ~
core.v1.Env
 name s d:\\\"\\\"
core.v1.Port
 hostIP s
 port s d:0
 protocol s d:\\\"TCP\\\"
core.v1.Ref atomic
 name s
"
        );
    }

    #[test]
    fn the_roots_should_be_the_served_resources_of_the_packages_read() {
        let served = "v1 things Thing namespaced=true verbs=get\n\
                      v1 things/status Thing namespaced=true verbs=get\n\
                      v1 things/scale Scale namespaced=true verbs=get\n\
                      v1 others Other namespaced=true verbs=get\n\
                      apps/v1 deployments Deployment namespaced=true verbs=get\n";
        let found = roots(&api(), served).unwrap();
        assert_eq!(found.keys().collect::<Vec<_>>(), ["core.v1.Thing"]);
        assert!(roots(&api(), "v1\n").unwrap_err().contains("bad line"));
    }

    #[test]
    fn an_unknown_type_or_list_map_without_keys_should_be_an_error_naming_the_field() {
        let bad = CORE.replace("// +listMapKey=port\n\t// +listMapKey=protocol\n", "");
        let mut api = api();
        api.packages[1] = read_go("core/v1", "k8s.io/api/core/v1", &bad);
        let err = generate_from(&api, "v1 things Thing namespaced=true verbs=get\n").unwrap_err();
        assert!(err.contains("core.v1.ThingSpec.ports"), "{err}");
        assert!(err.contains("without keys"), "{err}");
        let bad = CORE.replace(
            "Name string `json:\"name\"`\n}",
            "Name Missing `json:\"name\"`\n}",
        );
        api.packages[1] = read_go("core/v1", "k8s.io/api/core/v1", &bad);
        let err = generate_from(&api, "v1 things Thing namespaced=true verbs=get\n").unwrap_err();
        assert!(err.contains("unknown type Missing"), "{err}");
    }
}
