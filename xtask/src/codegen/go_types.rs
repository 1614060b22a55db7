//! kcr-testenv's Go type table for the pod-template-hash (`crates/testenv/src/controllers/
//! go_types.rs`, read by `controllers/pod_template_hash.rs`): every Go type reachable from
//! `core/v1` `PodTemplateSpec`, as go-spew's `%#v` prints a value of it: its name as
//! `reflect.Type.String` writes it (`v1.PodSpec`, `[]v1.Container`, `*int64`,
//! `map[string]string`, `resource.Quantity`), its kind, and for a struct every field in
//! declaration order, unexported ones too (`resource.Quantity`'s `i`, `d`, `s` and embedded
//! `Format`; `time.Time`'s `wall`, `ext`, `loc`), each with its Go name and the JSON key it is
//! read from (the `json` tag's name; the Go name where there is none; empty for an embedded
//! struct tagged `json:",inline"`, read from the same object).
//!
//! The Go standard-library and `gopkg.in/inf.v0` types a Kubernetes type holds are declared
//! in `xtask/k8s/go-std.txt` (see there for their sources).

use std::collections::HashMap;
use std::fmt::Write as _;

use super::go::{Api, GoField};
use super::protobuf::{Generator, INTS};

/// The root type: what `controller.ComputeHash` prints.
const ROOT: (&str, &str) = ("core/v1", "PodTemplateSpec");

/// A type's kind, as the table writes it.
#[derive(Clone)]
enum Kind {
    Bool,
    Int,
    Uint,
    Float32,
    Float64,
    String,
    Ptr(usize),
    Slice(usize),
    Map(usize, usize),
    Struct(Vec<(String, String, usize)>),
}

struct Table<'a> {
    generator: Generator<'a>,
    api: &'a Api,
    /// (name as Go writes it, kind); `None` while its struct is being read.
    types: Vec<(String, Option<Kind>)>,
    /// A type's key (`*core/v1.PodSpec`) -> its index.
    index: HashMap<String, usize>,
}

/// A predeclared type's kind and reflect name (`byte` is `uint8`).
fn predeclared(t: &str) -> Option<(Kind, &str)> {
    Some(match t {
        "bool" => (Kind::Bool, "bool"),
        "string" => (Kind::String, "string"),
        "float32" => (Kind::Float32, "float32"),
        "float64" => (Kind::Float64, "float64"),
        "byte" => (Kind::Uint, "uint8"),
        "rune" => (Kind::Int, "int32"),
        t if INTS.contains(&t) && t.starts_with('u') => (Kind::Uint, t),
        t if INTS.contains(&t) => (Kind::Int, t),
        _ => return None,
    })
}

/// `map[K]V` -> (`K`, `V`).
fn map_parts(t: &str) -> Option<(&str, &str)> {
    let rest = t.strip_prefix("map[")?;
    let mut depth = 1;
    for (i, c) in rest.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&rest[..i], &rest[i + 1..]));
                }
            }
            _ => {}
        }
    }
    None
}

impl<'a> Table<'a> {
    /// The index of the type `t` written in package `pkg`, its kind read (recursively) on
    /// first sight.
    fn resolve(&mut self, pkg: &str, t: &str) -> Result<usize, String> {
        if let Some(elem) = t.strip_prefix('*') {
            let e = self.resolve(pkg, elem)?;
            let name = format!("*{}", self.types[e].0);
            return Ok(self.add(format!("*{}", self.key(pkg, elem)), name, Kind::Ptr(e)));
        }
        if let Some(elem) = t.strip_prefix("[]") {
            let e = self.resolve(pkg, elem)?;
            let name = format!("[]{}", self.types[e].0);
            return Ok(self.add(format!("[]{}", self.key(pkg, elem)), name, Kind::Slice(e)));
        }
        if let Some((k, v)) = map_parts(t) {
            let (ki, vi) = (self.resolve(pkg, k)?, self.resolve(pkg, v)?);
            let name = format!("map[{}]{}", self.types[ki].0, self.types[vi].0);
            let key = format!("map[{}]{}", self.key(pkg, k), self.key(pkg, v));
            return Ok(self.add(key, name, Kind::Map(ki, vi)));
        }
        if let Some((kind, name)) = predeclared(t) {
            return Ok(self.add(t.to_owned(), name.to_owned(), kind));
        }
        let (p, n) = self.generator.qualify(pkg, t);
        let key = format!("{p}.{n}");
        if let Some(&i) = self.index.get(&key) {
            return Ok(i);
        }
        let package = self
            .api
            .package(&p)
            .ok_or_else(|| format!("{t} (in {pkg}): the declarations lack the package {p}"))?;
        let name = format!("{}.{n}", p.rsplit('/').next().unwrap_or(&p));
        if let Some(fields) = package.strukt(&n) {
            let fields: Vec<GoField> = fields.to_vec();
            let i = self.types.len();
            self.types.push((name, None));
            self.index.insert(key, i);
            let mut out = Vec::new();
            for f in &fields {
                let go_name = match &f.name {
                    Some(name) => name.clone(),
                    None => f
                        .go_type
                        .trim_start_matches('*')
                        .rsplit('.')
                        .next()
                        .unwrap_or_default()
                        .to_owned(),
                };
                let json = match f.json.as_deref().map(|j| j.split(',').next().unwrap_or("")) {
                    Some("") if f.embedded => String::new(),
                    Some(j) if !j.is_empty() && j != "-" => j.to_owned(),
                    _ => go_name.clone(),
                };
                let ty = self
                    .resolve(&p, &f.go_type)
                    .map_err(|e| format!("{n}.{go_name}: {e}"))?;
                out.push((go_name, json, ty));
            }
            self.types[i].1 = Some(Kind::Struct(out));
            return Ok(i);
        }
        let Some(under) = package.named(&n).map(str::to_owned) else {
            return Err(format!("{t} (in {pkg}): no such type in {p}"));
        };
        // A named type has its underlying type's kind (a chain `type A B` ends at one).
        let u = self.resolve(&p, &under)?;
        let kind = match &self.types[u].1 {
            Some(Kind::Bool) => Kind::Bool,
            Some(Kind::Int) => Kind::Int,
            Some(Kind::Uint) => Kind::Uint,
            Some(Kind::Float32) => Kind::Float32,
            Some(Kind::Float64) => Kind::Float64,
            Some(Kind::String) => Kind::String,
            Some(Kind::Ptr(e)) => Kind::Ptr(*e),
            Some(Kind::Slice(e)) => Kind::Slice(*e),
            Some(Kind::Map(k, v)) => Kind::Map(*k, *v),
            Some(Kind::Struct(f)) => Kind::Struct(f.clone()),
            None => return Err(format!("{t}: a named type of a struct being read")),
        };
        Ok(self.add(key, name, kind))
    }

    /// A key naming the type `t` of package `pkg` wherever it is written.
    fn key(&self, pkg: &str, t: &str) -> String {
        if let Some(e) = t.strip_prefix('*') {
            return format!("*{}", self.key(pkg, e));
        }
        if let Some(e) = t.strip_prefix("[]") {
            return format!("[]{}", self.key(pkg, e));
        }
        if let Some((k, v)) = map_parts(t) {
            return format!("map[{}]{}", self.key(pkg, k), self.key(pkg, v));
        }
        if predeclared(t).is_some() {
            return t.to_owned();
        }
        let (p, n) = self.generator.qualify(pkg, t);
        format!("{p}.{n}")
    }

    fn add(&mut self, key: String, name: String, kind: Kind) -> usize {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        self.types.push((name, Some(kind)));
        self.index.insert(key, self.types.len() - 1);
        self.types.len() - 1
    }
}

/// Writes the table.
pub fn generate(api: &Api) -> Result<String, String> {
    let mut table = Table {
        generator: Generator::new(api),
        api,
        types: Vec::new(),
        index: HashMap::new(),
    };
    let root = table.resolve(ROOT.0, ROOT.1)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "// @generated by `cargo xtask gen` from the Go types of k8s.io/api and k8s.io/apimachinery {}",
        api.version
    );
    out.push_str(
        "// (xtask/k8s/go-api.txt) and of the Go standard library (xtask/k8s/go-std.txt); do not edit.\n\
         //! The Go types a `core/v1` `PodTemplateSpec` is made of, as go-spew prints them: each with\n\
         //! its `reflect.Type.String` name and kind; a struct's fields in declaration order (unexported\n\
         //! ones too) with their Go names, the JSON keys they are read from (empty: an embedded\n\
         //! struct inlined in the same JSON object) and their types (indices into [`TYPES`]).\n\n\
         use super::pod_template_hash::{Field, GoType, Kind};\n\n",
    );
    let _ = writeln!(
        out,
        "/// The index of `v1.PodTemplateSpec` in [`TYPES`].\npub(super) const ROOT: u16 = {root};\n"
    );
    let _ = writeln!(
        out,
        "/// Every type reachable from `v1.PodTemplateSpec`.\npub(super) static TYPES: [GoType; {}] = [",
        table.types.len()
    );
    for (i, (name, kind)) in table.types.iter().enumerate() {
        let kind = match kind.as_ref().ok_or("a type left unread")? {
            Kind::Bool => "Kind::Bool".to_owned(),
            Kind::Int => "Kind::Int".to_owned(),
            Kind::Uint => "Kind::Uint".to_owned(),
            Kind::Float32 => "Kind::Float32".to_owned(),
            Kind::Float64 => "Kind::Float64".to_owned(),
            Kind::String => "Kind::String".to_owned(),
            Kind::Ptr(e) => format!("Kind::Ptr({e})"),
            Kind::Slice(e) => format!("Kind::Slice({e})"),
            Kind::Map(k, v) => format!("Kind::Map({k}, {v})"),
            Kind::Struct(fields) => {
                let mut s = "Kind::Struct(&[".to_owned();
                for (name, json, ty) in fields {
                    let _ = write!(s, "Field::new({name:?}, {json:?}, {ty}),");
                }
                s.push_str("])");
                s
            }
        };
        let _ = writeln!(out, "    // {i}\n    GoType::new({name:?}, {kind}),");
    }
    out.push_str("];\n");
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codegen::go::{parse, read_go};

    #[test]
    fn a_struct_should_list_every_field_with_its_go_name_json_key_and_type() {
        let core = read_go(
            "core/v1",
            "k8s.io/api/core/v1",
            r#"package v1
import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)
type PodTemplateSpec struct {
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec PodSpec `json:"spec,omitempty"`
}
type PodSpec struct {
	Policy RestartPolicy `json:"restartPolicy,omitempty"`
	Grace *int64 `json:"terminationGracePeriodSeconds,omitempty"`
	Overhead ResourceList `json:"overhead,omitempty"`
	Handler `json:",inline"`
	Names []string `json:"names"`
}
type Handler struct {
	Raw []byte `json:"-"`
}
type RestartPolicy string
type ResourceList map[ResourceName]resource.Quantity
type ResourceName string
"#,
        );
        let meta = read_go(
            "meta/v1",
            "k8s.io/apimachinery/pkg/apis/meta/v1",
            "package v1\ntype ObjectMeta struct {\n\tName string `json:\"name\"`\n}\n",
        );
        let resource = read_go(
            "resource",
            "k8s.io/apimachinery/pkg/api/resource",
            "package resource\ntype Quantity struct {\n\ti int64Amount\n\tFormat\n}\ntype int64Amount struct {\n\tvalue int64\n}\ntype Format string\n",
        );
        let api = Api {
            version: "v0.36.2".into(),
            packages: vec![meta, core, resource],
        };
        let text = generate(&api).unwrap();
        for expected in [
            r#"GoType::new("v1.PodTemplateSpec", Kind::Struct(&[Field::new("ObjectMeta", "metadata", 1),Field::new("Spec", "spec", 3),]))"#,
            r#"GoType::new("v1.RestartPolicy", Kind::String)"#,
            r#"GoType::new("*int64", Kind::Ptr("#,
            r#"GoType::new("v1.ResourceList", Kind::Map("#,
            r#"GoType::new("resource.Quantity", Kind::Struct(&[Field::new("i", "i", "#,
            r#"Field::new("Format", "Format", "#,
            r#"Field::new("Handler", "", "#,
            r#"GoType::new("[]uint8", Kind::Slice("#,
            r#"Field::new("Raw", "Raw", "#,
            r#"GoType::new("[]string", Kind::Slice("#,
        ] {
            assert!(text.contains(expected), "{expected} not in\n{text}");
        }
    }

    #[test]
    fn an_unknown_type_should_be_an_error_naming_its_field() {
        let core = read_go(
            "core/v1",
            "k8s.io/api/core/v1",
            "package v1\ntype PodTemplateSpec struct {\n\tSpec PodSpec `json:\"spec\"`\n}\n",
        );
        let api = Api {
            version: "v1".into(),
            packages: vec![core],
        };
        let err = generate(&api).unwrap_err();
        assert!(
            err.contains("PodTemplateSpec.Spec") && err.contains("PodSpec"),
            "{err}"
        );
    }

    #[test]
    fn the_standard_library_facts_should_parse() {
        let text =
            std::fs::read_to_string(crate::codegen::root().join(crate::codegen::STD_DECLARATIONS))
                .unwrap();
        let api = parse(&text).unwrap();
        let time = api.package("time").unwrap();
        let fields: Vec<_> = time
            .strukt("Time")
            .unwrap()
            .iter()
            .map(|f| f.name.clone().unwrap())
            .collect();
        assert_eq!(fields, ["wall", "ext", "loc"]);
    }
}
