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
            let plain = ptr
                || t.starts_with("[]")
                || t.starts_with("map[")
                || predeclared(t);
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
