//! kcr-testenv's Go field facts (`crates/testenv/src/wire/go_fields/table.rs`, read by
//! `wire/go_fields.rs`, whose module docs give the format): for every struct of the packages
//! below, its fields by JSON name in declaration order, each with how Go's `encoding/json`
//! writes its zero (pointer, `omitempty`, `omitzero`) and, where its type is or is made of a
//! named string, slice or map, that type as Go's `reflect.Type.String` writes it.

use std::collections::BTreeMap;

use super::go::{Api, GoField};
use super::protobuf::{Generator, INTS, STRING_TYPES};

/// The packages whose structs the table holds.
const PACKAGES: &[&str] = &[
    "admissionregistration/v1",
    "apiregistration/v1",
    "apps/v1",
    "autoscaling/v1",
    "autoscaling/v2",
    "batch/v1",
    "certificates/v1",
    "coordination/v1",
    "core/v1",
    "discovery/v1",
    "events/v1",
    "flowcontrol/v1",
    "meta/v1",
    "networking/v1",
    "node/v1",
    "policy/v1",
    "rbac/v1",
    "scheduling/v1",
    "storage/v1",
];

/// Go's predeclared types.
fn predeclared(t: &str) -> bool {
    INTS.contains(&t)
        || [
            "string",
            "bool",
            "byte",
            "rune",
            "float32",
            "float64",
            "interface{}",
            "any",
        ]
        .contains(&t)
}

struct Table<'a> {
    generator: Generator<'a>,
    /// Named slice and map types met, by their name as Go writes it.
    named: BTreeMap<String, String>,
}

impl Table<'_> {
    /// The last element of a package key or import path (`core/v1` -> `v1`).
    fn package_name(key: &str) -> &str {
        key.rsplit('/').next().unwrap_or(key)
    }

    /// Whether `t` (in package `pkg`) is, or is made of, a named string, slice or map.
    fn made_of_named(&self, pkg: &str, t: &str) -> bool {
        if let Some(item) = t.strip_prefix("[]").or_else(|| t.strip_prefix('*')) {
            return self.made_of_named(pkg, item);
        }
        if let Some((k, v)) = map_parts(t) {
            return self.made_of_named(pkg, k) || self.made_of_named(pkg, v);
        }
        if predeclared(t) {
            return false;
        }
        let (p, n) = self.generator.qualify(pkg, t);
        if STRING_TYPES.contains(&(p.as_str(), n.as_str())) {
            return true;
        }
        let (_, under) = self.generator.underlying(pkg, t);
        under == "string" || under.starts_with("[]") || under.starts_with("map[")
    }

    /// `t` (in package `pkg`) as Go's `reflect.Type.String` writes it; records the named
    /// slices and maps it is made of.
    fn display(&mut self, pkg: &str, t: &str) -> String {
        if let Some(item) = t.strip_prefix("[]") {
            return format!("[]{}", self.display(pkg, item));
        }
        if let Some(item) = t.strip_prefix('*') {
            return format!("*{}", self.display(pkg, item));
        }
        if let Some((k, v)) = map_parts(t) {
            let (k, v) = (k.to_owned(), v.to_owned());
            return format!("map[{}]{}", self.display(pkg, &k), self.display(pkg, &v));
        }
        if t == "interface{}" || t == "any" {
            return "interface {}".into();
        }
        if predeclared(t) {
            return t.into();
        }
        let (p, n) = self.generator.qualify(pkg, t);
        let name = format!("{}.{n}", Self::package_name(&p));
        let (up, under) = self.generator.underlying(pkg, t);
        if (under.starts_with("[]") || under.starts_with("map[")) && !self.named.contains_key(&name)
        {
            let made_of = self.display(&up, &under);
            self.named.insert(name.clone(), made_of);
        }
        name
    }

    /// The words of a struct's fields (the fields of an embedded struct of the same package
    /// tagged `json:",inline"` as its own).
    fn fields(&mut self, pkg: &str, fields: &[GoField]) -> Vec<String> {
        let mut words = Vec::new();
        for f in fields {
            let Some(json) = f.json.as_deref().filter(|j| *j != "-") else {
                continue;
            };
            let mut parts = json.split(',');
            let name = parts.next().unwrap_or_default();
            let options: Vec<&str> = parts.collect();
            if name.is_empty() {
                if f.embedded && options.contains(&"inline") && !f.go_type.contains(['.', '*']) {
                    let inner = self
                        .generator
                        .strukt(pkg, &f.go_type)
                        .map(<[GoField]>::to_vec)
                        .unwrap_or_default();
                    words.extend(self.fields(pkg, &inner));
                }
                continue;
            }
            let ptr = f.go_type.starts_with('*');
            let t = f.go_type.trim_start_matches('*');
            let plain = ptr || t.starts_with("[]") || t.starts_with("map[") || predeclared(t);
            let mut word = if options.contains(&"omitzero") {
                format!("{name}!")
            } else if options.contains(&"omitempty") {
                if plain {
                    name.to_owned()
                } else {
                    format!("{name}?")
                }
            } else if ptr {
                format!("*{name}")
            } else {
                format!("{name}=")
            };
            if self.made_of_named(pkg, t) {
                word.push(':');
                word.push_str(&self.display(pkg, t));
            }
            words.push(word);
        }
        words
    }
}

/// `map[K]V` -> (`K`, `V`), the key being a plain name.
fn map_parts(t: &str) -> Option<(&str, &str)> {
    let rest = t.strip_prefix("map[")?;
    let end = rest.find(']')?;
    Some((&rest[..end], &rest[end + 1..]))
}

/// Writes `go_fields/table.rs` (before `rustfmt`) from the declarations.
pub fn generate(api: &Api) -> Result<String, String> {
    let mut table = Table {
        generator: Generator::new(api),
        named: BTreeMap::new(),
    };
    let mut lines = Vec::new();
    for key in PACKAGES {
        let pkg = api
            .package(key)
            .ok_or_else(|| format!("the declarations lack the package {key}"))?;
        let prefix = key.replace('/', ".");
        for (name, fields) in &pkg.structs {
            let words = table.fields(key, fields);
            if words.is_empty() {
                // Nothing to say of a struct without JSON fields (`meta/v1` `Patch`).
                continue;
            }
            let mut line = format!("{prefix}.{name}");
            for w in words {
                line.push(' ');
                line.push_str(&w);
            }
            lines.push(line);
        }
    }
    lines.sort();
    let mut out = String::new();
    out.push_str(&format!(
        "// @generated by `cargo xtask gen` from the Go types of k8s.io/api, k8s.io/apimachinery and\n\
         // k8s.io/kube-aggregator {} (their fields' types and `json` tags); do not edit.\n\
         //! The table of [`super`] (whose module docs give its format).\n\n",
        api.version
    ));
    out.push_str(
        "/// The named slice and map types the table's fields use, with what they are made of: the\n\
         /// `type X []...` and `type X map[...]...` declarations of the same sources.\n\
         pub(in crate::wire) const NAMED_TYPES: &[(&str, &str)] = &[\n",
    );
    for (name, made_of) in &table.named {
        out.push_str(&format!("    ({name:?}, {made_of:?}),\n"));
    }
    out.push_str("];\n\n/// The table (see the module docs of [`super`] for its format).\n");
    out.push_str("pub(super) const GO_FIELDS: &str = \"\\\n");
    for line in &lines {
        out.push_str(line);
        out.push_str("\\n\\\n");
    }
    out.push_str("\";\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::go::read_go;
    use super::*;

    const CORE: &str = r#"package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

type PullPolicy string

type Capability string

type ResourceList map[ResourceName]resource.Quantity

type ResourceName string

type Thing struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Inner `json:",inline"`
	Name string `json:"name"`
	Replicas *int32 `json:"replicas"`
	Labels map[string]string `json:"labels,omitempty"`
	Policy PullPolicy `json:"policy,omitempty"`
	Owner *types.UID `json:"owner,omitempty"`
	Add []Capability `json:"add,omitempty"`
	Limits ResourceList `json:"limits,omitempty"`
	Since metav1.Time `json:"since,omitzero"`
	Cells []interface{} `json:"cells"`
	Hidden string `json:"-"`
}

type Inner struct {
	Extra string `json:"extra,omitempty"`
}

type Patch struct{}
"#;

    fn api() -> Api {
        let meta = read_go(
            "meta/v1",
            "k8s.io/apimachinery/pkg/apis/meta/v1",
            "package v1\n\ntype TypeMeta struct {\n\tKind string `json:\"kind,omitempty\"`\n}\n",
        );
        let mut api = Api {
            version: "v0.0.0".into(),
            packages: vec![meta, read_go("core/v1", "k8s.io/api/core/v1", CORE)],
        };
        for key in PACKAGES {
            if api.package(key).is_none() {
                api.packages.push(read_go(key, key, ""));
            }
        }
        api
    }

    #[test]
    fn each_field_should_say_how_go_writes_its_zero_and_name_its_named_type() {
        let out = generate(&api()).unwrap();
        let line = out
            .lines()
            .find(|l| l.starts_with("core.v1.Thing "))
            .unwrap();
        assert_eq!(
            line,
            "core.v1.Thing metadata? extra name= *replicas labels policy?:v1.PullPolicy \
             owner:types.UID add:[]v1.Capability limits?:v1.ResourceList since! cells=\\n\\"
        );
        // A struct without JSON fields has no line; the inline struct of the same package is
        // written in its place, another package's (`TypeMeta`) is not.
        assert!(!out.contains("core.v1.Patch"), "{out}");
        assert!(out.contains("core.v1.Inner extra\\n\\"), "{out}");
        assert!(
            out.contains(r#"("v1.ResourceList", "map[v1.ResourceName]resource.Quantity"),"#),
            "{out}"
        );
    }

    #[test]
    fn an_interface_slice_should_have_no_named_type() {
        // Go's reflect writes `[]interface {}`, a type made of no named string, slice or map:
        // the field has no type of its own (the table once had `[]v1.interface{}`).
        let t = Table {
            generator: Generator::new(Box::leak(Box::new(api()))),
            named: BTreeMap::new(),
        };
        assert!(!t.made_of_named("core/v1", "[]interface{}"));
        let mut t = t;
        assert_eq!(t.display("core/v1", "[]interface{}"), "[]interface {}");
        assert_eq!(
            t.display("core/v1", "map[ResourceName][]Capability"),
            "map[v1.ResourceName][]v1.Capability"
        );
    }
}
