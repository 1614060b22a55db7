//! The Go declarations of the Kubernetes API types that the tables are generated from: read
//! from checkouts of the Kubernetes Go modules (`cargo xtask gen --import DIR`, the only step
//! that needs the sources) and kept in the repository as a plain declaration file
//! (`xtask/k8s/go-api-<version>.txt`), from which `cargo xtask gen` works offline.
//!
//! Declaration file format, one item a line (`#` starts a comment line):
//!
//! ```text
//! version v0.36.2
//! package <key> <import path>         a package: core/v1, meta/v1, apiextensions/v1 ...
//! import <alias> <import path>        an import of the package's files
//! named <Name> <Go type>              a named type that is not a struct (`string`, `[]string`)
//! struct <Name>                       a struct, its fields on the lines after it:
//! field <Go type>[\t<tag>:<value>]... a field in declaration order; its Go name (`name`,
//!                                     none for an embedded field), the tags it has (`json`,
//!                                     `protobuf`, `patchStrategy`, `patchMergeKey`),
//!                                     `embedded` for an embedded field and the `+` markers of
//!                                     its comment that the OpenAPI spec takes (`+listType=map`,
//!                                     `+listMapKey=name`, `+mapType=atomic`, `+default="TCP"`)
//! marker <Name> <marker>              a `+` marker of a struct's comment (`structType=atomic`)
//! ```

use std::fmt::Write as _;
use std::path::Path;

use regex::Regex;

/// A field of a Go struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoField {
    /// Its Go name (`Replicas`, `i`), `None` for an embedded field (whose Go name is its
    /// type's name without package and `*`).
    pub name: Option<String>,
    /// Its Go type as written (`*int32`, `[]Container`, `metav1.ObjectMeta`).
    pub go_type: String,
    /// An embedded field (a type without a field name).
    pub embedded: bool,
    /// Its `json:"..."` tag, if any.
    pub json: Option<String>,
    /// Its `protobuf:"..."` tag, if any.
    pub protobuf: Option<String>,
    /// Its `patchStrategy:"..."` tag, if any.
    pub patch_strategy: Option<String>,
    /// Its `patchMergeKey:"..."` tag, if any.
    pub patch_merge_key: Option<String>,
    /// The markers of its comment that shape the OpenAPI spec, without their `+`, in order
    /// (`listType=map`, `listMapKey=type`, `mapType=atomic`, `structType=atomic`, `default=..`).
    pub markers: Vec<String>,
}

impl GoField {
    /// The values of the marker `name` (`listMapKey`), in order.
    pub fn marker<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.markers
            .iter()
            .filter_map(move |m| m.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')))
    }
}

/// The comment markers that shape the OpenAPI spec (`+listType=map`), the ones recorded.
pub const MARKERS: &[&str] = &["listType", "listMapKey", "mapType", "structType", "default"];

/// The recorded marker of a comment line (`// +listType=map` -> `listType=map`), if any.
fn marker(line: &str) -> Option<String> {
    let m = line.strip_prefix("//")?.trim().strip_prefix('+')?;
    let (name, _) = m.split_once('=')?;
    MARKERS.contains(&name).then(|| m.trim_end().to_owned())
}

/// The declarations of one Go package (of the files read).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Package {
    /// The package's key (`core/v1`).
    pub key: String,
    /// Its import path.
    pub path: String,
    /// Its files' imports: alias (or last path element) to import path, in file order.
    pub imports: Vec<(String, String)>,
    /// Its structs with their fields, in declaration order.
    pub structs: Vec<(String, Vec<GoField>)>,
    /// Its named types that are not structs, with what they are (`string`, `[]string`).
    pub named: Vec<(String, String)>,
    /// The markers of its structs' comments (struct name, marker without `+`).
    pub markers: Vec<(String, String)>,
}

impl Package {
    /// The fields of the struct `name`.
    pub fn strukt(&self, name: &str) -> Option<&[GoField]> {
        self.structs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| f.as_slice())
    }

    /// What the named (non-struct) type `name` is.
    pub fn named(&self, name: &str) -> Option<&str> {
        self.named
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.as_str())
    }

    /// The values of the marker `name` of the struct `strukt`'s comment.
    pub fn struct_marker<'a>(
        &'a self,
        strukt: &'a str,
        name: &'a str,
    ) -> impl Iterator<Item = &'a str> + 'a {
        self.markers
            .iter()
            .filter(move |(s, _)| s == strukt)
            .filter_map(move |(_, m)| m.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')))
    }

    /// The import path of an alias (the last one wins, as in a map).
    pub fn import(&self, alias: &str) -> Option<&str> {
        self.imports
            .iter()
            .rev()
            .find(|(a, _)| a == alias)
            .map(|(_, p)| p.as_str())
    }
}

/// Every package of a declaration file, and the Kubernetes version it was read at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Api {
    /// The version of the Go modules read (`v0.36.2`).
    pub version: String,
    /// The packages, in the order they were read.
    pub packages: Vec<Package>,
}

impl Api {
    /// The package with key `key`.
    pub fn package(&self, key: &str) -> Option<&Package> {
        self.packages.iter().find(|p| p.key == key)
    }
}

/// Reads the declarations of one package from the text of its Go files (joined).
pub fn read_go(key: &str, path: &str, src: &str) -> Package {
    let mut pkg = Package {
        key: key.to_owned(),
        path: path.to_owned(),
        ..Package::default()
    };
    let mut lines = Vec::new();
    let block = Regex::new(r"(?ms)^import \((.*?)^\)").expect("regex");
    for m in block.captures_iter(src) {
        lines.extend(m[1].lines().map(str::to_owned));
    }
    let single = Regex::new(r#"(?m)^import\s+(\w+\s+)?"([^"]+)""#).expect("regex");
    for m in single.captures_iter(src) {
        let alias = m.get(1).map_or("", |a| a.as_str());
        lines.push(format!("{alias}\"{}\"", &m[2]));
    }
    let import = Regex::new(r#"^\s*(\w+)?\s*"([^"]+)""#).expect("regex");
    for line in &lines {
        let Some(m) = import.captures(line) else {
            continue;
        };
        let path = m[2].to_owned();
        let alias = m.get(1).map_or_else(
            || path.rsplit('/').next().unwrap_or(&path).to_owned(),
            |a| a.as_str().to_owned(),
        );
        pkg.imports.push((alias, path));
    }
    let strukt = Regex::new(r"(?ms)^type (\w+) struct \{\n(.*?)^\}").expect("regex");
    let tag = Regex::new(r"`(.*)`").expect("regex");
    let tags = Regex::new(r#"(\w+):"([^"]*)""#).expect("regex");
    for m in strukt.captures_iter(src) {
        let before = &src[..m.get(0).expect("match").start()];
        let mut comment: Vec<String> = before
            .lines()
            .rev()
            .take_while(|l| l.trim_start().starts_with("//"))
            .filter_map(|l| marker(l.trim()))
            .collect();
        comment.reverse();
        for c in comment {
            pkg.markers.push((m[1].to_owned(), c));
        }
        let mut fields = Vec::new();
        let mut markers = Vec::new();
        let mut in_block = false;
        for line in m[2].lines() {
            let line = line.trim();
            // A `/* ... */` comment (`core/v1` `DaemonEndpoint` has one) declares nothing.
            if in_block || line.starts_with("/*") {
                in_block = !line.ends_with("*/");
                continue;
            }
            if line.starts_with("//") {
                markers.extend(marker(line));
                continue;
            }
            if line.is_empty() {
                continue;
            }
            let t = tag.captures(line);
            let decl = match &t {
                Some(t) => line[..t.get(0).expect("match").start()].trim(),
                None => line,
            };
            let mut json = None;
            let mut protobuf = None;
            let mut patch_strategy = None;
            let mut patch_merge_key = None;
            if let Some(t) = &t {
                for kv in tags.captures_iter(&t[1]) {
                    match &kv[1] {
                        "json" => json = Some(kv[2].to_owned()),
                        "protobuf" => protobuf = Some(kv[2].to_owned()),
                        "patchStrategy" => patch_strategy = Some(kv[2].to_owned()),
                        "patchMergeKey" => patch_merge_key = Some(kv[2].to_owned()),
                        _ => {}
                    }
                }
            }
            let (name, go_type, embedded) = match decl.split_once(char::is_whitespace) {
                Some((name, rest)) => (Some(name.to_owned()), rest.trim_start(), false),
                None => (None, decl, true),
            };
            fields.push(GoField {
                name,
                go_type: go_type.to_owned(),
                embedded,
                json,
                protobuf,
                patch_strategy,
                patch_merge_key,
                markers: std::mem::take(&mut markers),
            });
        }
        pkg.structs.push((m[1].to_owned(), fields));
    }
    let empty = Regex::new(r"(?m)^type (\w+) struct\s*\{\}").expect("regex");
    for m in empty.captures_iter(src) {
        if pkg.strukt(&m[1]).is_none() {
            pkg.structs.push((m[1].to_owned(), Vec::new()));
        }
    }
    let named = Regex::new(r"(?m)^type (\w+) ([^{\s][^\n]*)$").expect("regex");
    for m in named.captures_iter(src) {
        if !m[2].starts_with("struct") && !m[2].starts_with("interface") {
            pkg.named.push((m[1].to_owned(), m[2].trim().to_owned()));
        }
    }
    pkg
}

/// Reads the packages of `sources` (key, import path, files under `dir`) from a directory of
/// checkouts.
pub fn import(dir: &Path, version: &str, sources: &[Source]) -> Result<Api, String> {
    let mut api = Api {
        version: version.to_owned(),
        packages: Vec::new(),
    };
    for s in sources {
        let mut src = Vec::new();
        for file in s.files {
            let path = dir.join(file);
            src.push(
                std::fs::read_to_string(&path)
                    .map_err(|e| format!("cannot read {}: {e}", path.display()))?,
            );
        }
        api.packages.push(read_go(s.key, s.path, &src.join("\n")));
    }
    Ok(api)
}

/// Where a package's files are.
#[derive(Debug, Clone, Copy)]
pub struct Source {
    /// The package's key (`core/v1`).
    pub key: &'static str,
    /// Its import path.
    pub path: &'static str,
    /// Its files, relative to the checkouts' directory.
    pub files: &'static [&'static str],
}

/// Writes a declaration file.
pub fn write(api: &Api) -> String {
    let mut out = String::new();
    out.push_str(
        "# The Go declarations of the Kubernetes API types that kcr's generated tables are made from\n\
         # (struct fields with their Go names, Go types and `json`/`protobuf` tags, named types,\n\
         # imports).\n\
         # Written by `cargo xtask gen --import DIR`; read by `cargo xtask gen`. Do not edit.\n",
    );
    let _ = writeln!(out, "version {}", api.version);
    for p in &api.packages {
        let _ = writeln!(out, "package {} {}", p.key, p.path);
        for (alias, path) in &p.imports {
            let _ = writeln!(out, "import {alias} {path}");
        }
        for (name, t) in &p.named {
            let _ = writeln!(out, "named {name} {t}");
        }
        for (name, m) in &p.markers {
            let _ = writeln!(out, "marker {name} {m}");
        }
        for (name, fields) in &p.structs {
            let _ = writeln!(out, "struct {name}");
            for f in fields {
                out.push_str("field ");
                out.push_str(&f.go_type);
                if let Some(name) = &f.name {
                    let _ = write!(out, "\tname:{name}");
                }
                if f.embedded {
                    out.push_str("\tembedded");
                }
                if let Some(j) = &f.json {
                    let _ = write!(out, "\tjson:{j}");
                }
                if let Some(pb) = &f.protobuf {
                    let _ = write!(out, "\tprotobuf:{pb}");
                }
                if let Some(ps) = &f.patch_strategy {
                    let _ = write!(out, "\tpatchStrategy:{ps}");
                }
                if let Some(pk) = &f.patch_merge_key {
                    let _ = write!(out, "\tpatchMergeKey:{pk}");
                }
                for m in &f.markers {
                    let _ = write!(out, "\t+{m}");
                }
                out.push('\n');
            }
        }
    }
    out
}

/// Reads a declaration file; an unknown or misplaced line is an error naming its number.
pub fn parse(text: &str) -> Result<Api, String> {
    let mut api = Api::default();
    for (i, line) in text.lines().enumerate() {
        let at = || format!("line {}: {line:?}", i + 1);
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (word, rest) = line.split_once(' ').ok_or_else(at)?;
        if word == "version" {
            api.version = rest.to_owned();
            continue;
        }
        if word == "package" {
            let (key, path) = rest.split_once(' ').ok_or_else(at)?;
            api.packages.push(Package {
                key: key.to_owned(),
                path: path.to_owned(),
                ..Package::default()
            });
            continue;
        }
        let pkg = api
            .packages
            .last_mut()
            .ok_or_else(|| format!("{} before any package", at()))?;
        match word {
            "import" => {
                let (alias, path) = rest.split_once(' ').ok_or_else(at)?;
                pkg.imports.push((alias.to_owned(), path.to_owned()));
            }
            "named" => {
                let (name, t) = rest.split_once(' ').ok_or_else(at)?;
                pkg.named.push((name.to_owned(), t.to_owned()));
            }
            "marker" => {
                let (name, m) = rest.split_once(' ').ok_or_else(at)?;
                pkg.markers.push((name.to_owned(), m.to_owned()));
            }
            "struct" => {
                pkg.structs.push((rest.to_owned(), Vec::new()));
            }
            "field" => {
                let (_, fields) = pkg
                    .structs
                    .last_mut()
                    .ok_or_else(|| format!("{}: a field before any struct", at()))?;
                let mut parts = rest.split('\t');
                let mut field = GoField {
                    name: None,
                    go_type: parts.next().unwrap_or_default().to_owned(),
                    embedded: false,
                    json: None,
                    protobuf: None,
                    patch_strategy: None,
                    patch_merge_key: None,
                    markers: Vec::new(),
                };
                for part in parts {
                    match part.split_once(':') {
                        _ if part == "embedded" => field.embedded = true,
                        _ if part.starts_with('+') => field.markers.push(part[1..].to_owned()),
                        Some(("patchStrategy", ps)) => field.patch_strategy = Some(ps.to_owned()),
                        Some(("patchMergeKey", pk)) => field.patch_merge_key = Some(pk.to_owned()),
                        Some(("name", n)) => field.name = Some(n.to_owned()),
                        Some(("json", j)) => field.json = Some(j.to_owned()),
                        Some(("protobuf", pb)) => field.protobuf = Some(pb.to_owned()),
                        _ => return Err(format!("{}: unknown field part {part:?}", at())),
                    }
                }
                fields.push(field);
            }
            _ => return Err(format!("{}: unknown line", at())),
        }
    }
    if api.version.is_empty() {
        return Err("no `version` line".into());
    }
    Ok(api)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GO: &str = r#"package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

import "k8s.io/apimachinery/pkg/types"

// A thing.
type Thing struct {
	metav1.TypeMeta `json:",inline"`
	// Standard object's metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// +optional
	// +listType=map
	// +listMapKey=name
	// +listMapKey=port
	Ports []Port `json:"ports,omitempty" patchStrategy:"merge" patchMergeKey:"name" protobuf:"bytes,4,rep,name=ports"`

	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,2,opt,name=replicas"`
	Limits map[string]resource.Quantity `json:"limits" protobuf:"bytes,3,rep,name=limits,castkey=ResourceName"`
	Untagged string
	/*
		A block comment.
	*/
}

// An atomic struct.
// +structType=atomic
// +k8s:deepcopy-gen=true
type Port struct {
	// +default="TCP"
	Protocol string `json:"protocol,omitempty"`
}

type Empty struct{}

type Policy string

type Stringer interface {
	String() string
}

type Names []string
"#;

    #[test]
    fn a_go_file_should_be_read_into_its_imports_structs_fields_and_named_types() {
        let p = read_go("core/v1", "k8s.io/api/core/v1", GO);
        assert_eq!(
            p.imports,
            [
                (
                    "metav1".into(),
                    "k8s.io/apimachinery/pkg/apis/meta/v1".into()
                ),
                (
                    "resource".into(),
                    "k8s.io/apimachinery/pkg/api/resource".into()
                ),
                ("types".into(), "k8s.io/apimachinery/pkg/types".into()),
            ]
        );
        let thing = p.strukt("Thing").unwrap();
        assert_eq!(thing.len(), 6);
        let ports = &thing[2];
        assert_eq!(ports.go_type, "[]Port");
        assert_eq!(ports.name.as_deref(), Some("Ports"));
        assert_eq!(
            thing[1].name, None,
            "an embedded field has no name of its own"
        );
        assert_eq!(thing[5].name.as_deref(), Some("Untagged"));
        assert_eq!(ports.patch_strategy.as_deref(), Some("merge"));
        assert_eq!(ports.patch_merge_key.as_deref(), Some("name"));
        assert_eq!(
            ports.markers,
            ["listType=map", "listMapKey=name", "listMapKey=port"]
        );
        assert_eq!(
            ports.marker("listMapKey").collect::<Vec<_>>(),
            ["name", "port"]
        );
        assert!(thing[3].markers.is_empty(), "markers stop at their field");
        assert_eq!(
            p.struct_marker("Port", "structType").collect::<Vec<_>>(),
            ["atomic"]
        );
        assert_eq!(
            p.strukt("Port").unwrap()[0]
                .marker("default")
                .collect::<Vec<_>>(),
            ["\"TCP\""]
        );
        let thing: Vec<GoField> = thing
            .iter()
            .filter(|f| f.go_type != "[]Port")
            .cloned()
            .collect();
        assert_eq!(thing[0].go_type, "metav1.TypeMeta");
        assert!(thing[0].embedded);
        assert_eq!(thing[0].json.as_deref(), Some(",inline"));
        assert_eq!(thing[0].protobuf, None);
        assert_eq!(
            thing[1].protobuf.as_deref(),
            Some("bytes,1,opt,name=metadata")
        );
        assert_eq!(thing[2].go_type, "*int32");
        assert!(!thing[2].embedded);
        assert_eq!(thing[3].go_type, "map[string]resource.Quantity");
        assert_eq!(thing[4].json, None);
        assert_eq!(p.strukt("Empty"), Some(&[][..]));
        assert_eq!(p.named("Policy"), Some("string"));
        assert_eq!(p.named("Names"), Some("[]string"));
        assert_eq!(p.named("Stringer"), None, "an interface is no named type");
    }

    #[test]
    fn a_declaration_file_should_read_back_what_was_written() {
        let api = Api {
            version: "v0.36.2".into(),
            packages: vec![read_go("core/v1", "k8s.io/api/core/v1", GO)],
        };
        let text = write(&api);
        assert_eq!(parse(&text), Ok(api));
    }

    #[test]
    fn a_bad_declaration_line_should_be_refused_with_its_number() {
        let err = parse("version v1\npackage a/v1 x\nstruct A\nfield int\tjsn:a\n").unwrap_err();
        assert!(err.starts_with("line 4:"), "{err}");
        assert!(err.contains("unknown field part"), "{err}");
        let err = parse("version v1\nfield int\n").unwrap_err();
        assert!(err.contains("before any package"), "{err}");
        assert!(parse("package a/v1 x\n").unwrap_err().contains("version"));
    }
}
