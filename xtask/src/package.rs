//! What `cargo xtask release` checks in each `.crate` before anything is published: its size
//! against crates.io's limit, and that everything the package names is inside it (files that
//! `include_str!` / `include_bytes!` read, target sources, the features a target requires). A
//! crate that passes builds from its package alone, as crates.io users will build it.

use serde_json::Value;
use std::fmt;

/// crates.io refuses a `.crate` larger than this (10 MiB).
pub const MAX_CRATE_BYTES: u64 = 10 * 1024 * 1024;

/// One target of a package (`lib`, `bin`, `test`, `bench`, `example`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Its first kind, as `cargo metadata` names it.
    pub kind: String,
    pub name: String,
    /// Its source file, relative to the package directory.
    pub path: String,
    pub required_features: Vec<String>,
}

/// A publishable package as the checks need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    pub targets: Vec<Target>,
    /// The package's feature names (including `default`).
    pub features: Vec<String>,
}

/// A package as `cargo package` wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packaged {
    pub manifest: Manifest,
    /// The size of the `.crate` file.
    pub bytes: u64,
    /// The files in it, relative to the package directory.
    pub files: Vec<String>,
}

/// Something that would make a published crate fail to build or be refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// The `.crate` is over [`MAX_CRATE_BYTES`].
    TooLarge { bytes: u64 },
    /// `file` includes `included`, which lies outside the package directory.
    OutsidePackage { file: String, included: String },
    /// `file` includes `included`, which the package leaves out.
    NotPackaged { file: String, included: String },
    /// A target whose source file the package leaves out.
    TargetNotPackaged { target: String, path: String },
    /// A target requires a feature the package does not have.
    UnknownFeature { target: String, feature: String },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::TooLarge { bytes } => write!(
                f,
                "the .crate is {} (crates.io takes at most {})",
                size(*bytes),
                size(MAX_CRATE_BYTES)
            ),
            Problem::OutsidePackage { file, included } => {
                write!(f, "{file} includes {included}, outside the package")
            }
            Problem::NotPackaged { file, included } => {
                write!(f, "{file} includes {included}, which is not in the package")
            }
            Problem::TargetNotPackaged { target, path } => {
                write!(f, "target {target}: {path} is not in the package")
            }
            Problem::UnknownFeature { target, feature } => write!(
                f,
                "target {target} requires feature {feature:?}, which the package does not have"
            ),
        }
    }
}

/// `bytes` in KiB or MiB, one decimal.
pub fn size(bytes: u64) -> String {
    let kib = bytes as f64 / 1024.0;
    if kib >= 1024.0 {
        format!("{:.1} MiB", kib / 1024.0)
    } else {
        format!("{kib:.1} KiB")
    }
}

/// Reads the manifest of package `name` out of `cargo metadata --no-deps` JSON.
pub fn manifest(metadata: &Value, name: &str) -> Result<Manifest, String> {
    let package = metadata["packages"]
        .as_array()
        .ok_or("metadata lacks packages")?
        .iter()
        .find(|p| p["name"] == name)
        .ok_or_else(|| format!("no package {name} in the metadata"))?;
    let manifest_path = package["manifest_path"]
        .as_str()
        .ok_or("package without manifest_path")?;
    let dir = manifest_path.trim_end_matches("Cargo.toml");
    let targets = package["targets"]
        .as_array()
        .ok_or("package without targets")?
        .iter()
        .map(|t| Target {
            kind: t["kind"][0].as_str().unwrap_or_default().to_owned(),
            name: t["name"].as_str().unwrap_or_default().to_owned(),
            path: t["src_path"]
                .as_str()
                .unwrap_or_default()
                .strip_prefix(dir)
                .unwrap_or_default()
                .to_owned(),
            required_features: strings(&t["required-features"]),
        })
        .collect();
    let features = package["features"]
        .as_object()
        .map(|f| f.keys().cloned().collect())
        .unwrap_or_default();
    Ok(Manifest {
        name: name.to_owned(),
        version: package["version"].as_str().unwrap_or_default().to_owned(),
        targets,
        features,
    })
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

/// Where an `include_str!` / `include_bytes!` reads from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Included {
    /// A literal path, relative to the including file's directory.
    Relative(String),
    /// `concat!(env!("CARGO_MANIFEST_DIR"), "...")`: relative to the package directory.
    FromManifest(String),
}

/// The files `source` includes with a literal path (other arguments are not followed).
pub fn included_paths(source: &str) -> Vec<Included> {
    let mut found = Vec::new();
    for (at, _) in source.match_indices("include_") {
        let rest = &source[at + "include_".len()..];
        let Some(args) = rest
            .strip_prefix("str!(")
            .or_else(|| rest.strip_prefix("bytes!("))
        else {
            continue;
        };
        let args = args.trim_start();
        if let Some(path) = string_literal(args) {
            found.push(Included::Relative(path));
        } else if let Some(after) = args
            .strip_prefix("concat!(")
            .map(str::trim_start)
            .and_then(|a| a.strip_prefix("env!(\"CARGO_MANIFEST_DIR\")"))
            .map(|a| a.trim_start().trim_start_matches(',').trim_start())
            && let Some(path) = string_literal(after)
        {
            found.push(Included::FromManifest(
                path.trim_start_matches('/').to_owned(),
            ));
        }
    }
    found
}

/// The contents of the plain string literal `text` starts with.
fn string_literal(text: &str) -> Option<String> {
    let body = text.strip_prefix('"')?;
    let end = body.find('"')?;
    let path = &body[..end];
    (!path.contains('\\')).then(|| path.to_owned())
}

/// `rel` resolved against the directory `base` (both relative to the package directory, `/`
/// separated); `None` when it leaves the package.
pub fn resolve(base: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
    for part in rel.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The problems of one packaged crate; `read` gives the text of one of its files (by path
/// relative to the package directory).
pub fn check(packaged: &Packaged, read: impl Fn(&str) -> Option<String>) -> Vec<Problem> {
    let mut problems = Vec::new();
    if packaged.bytes > MAX_CRATE_BYTES {
        problems.push(Problem::TooLarge {
            bytes: packaged.bytes,
        });
    }
    let has = |path: &str| packaged.files.iter().any(|f| f == path);
    for file in packaged.files.iter().filter(|f| f.ends_with(".rs")) {
        let Some(text) = read(file) else { continue };
        let dir = file.rsplit_once('/').map_or("", |(d, _)| d);
        for included in included_paths(&text) {
            let (base, rel) = match &included {
                Included::Relative(rel) => (dir, rel),
                Included::FromManifest(rel) => ("", rel),
            };
            match resolve(base, rel) {
                None => problems.push(Problem::OutsidePackage {
                    file: file.clone(),
                    included: rel.clone(),
                }),
                Some(path) if !has(&path) => problems.push(Problem::NotPackaged {
                    file: file.clone(),
                    included: path,
                }),
                Some(_) => {}
            }
        }
    }
    for target in &packaged.manifest.targets {
        let name = format!("{} {}", target.kind, target.name);
        if !has(&target.path) {
            problems.push(Problem::TargetNotPackaged {
                target: name.clone(),
                path: target.path.clone(),
            });
        }
        for feature in &target.required_features {
            if !packaged.manifest.features.contains(feature) {
                problems.push(Problem::UnknownFeature {
                    target: name.clone(),
                    feature: feature.clone(),
                });
            }
        }
    }
    problems
}

/// The files of a `.crate` as `tar -tzf` lists them (`<name>-<version>/<path>`), relative to
/// the package directory.
pub fn crate_files(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter_map(|l| l.split_once('/').map(|(_, path)| path.to_owned()))
        .filter(|p| !p.is_empty() && !p.ends_with('/'))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packaged(files: &[&str], targets: Vec<Target>, features: &[&str]) -> Packaged {
        Packaged {
            manifest: Manifest {
                name: "kcr-x".into(),
                version: "0.1.0".into(),
                targets,
                features: features.iter().map(|f| f.to_string()).collect(),
            },
            bytes: 1000,
            files: files.iter().map(|f| f.to_string()).collect(),
        }
    }

    fn target(kind: &str, name: &str, path: &str, required: &[&str]) -> Target {
        Target {
            kind: kind.into(),
            name: name.into(),
            path: path.into(),
            required_features: required.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn include_macros_with_literal_paths_should_be_found() {
        let source = r#"
            const A: &str = include_str!("../tests/data/a.json");
            let b = include_bytes!( "data/b.pb");
            let c = include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/benches/data/c.json"));
            let d = include_str!(some_macro!());
        "#;
        assert_eq!(
            included_paths(source),
            [
                Included::Relative("../tests/data/a.json".into()),
                Included::Relative("data/b.pb".into()),
                Included::FromManifest("benches/data/c.json".into()),
            ]
        );
    }

    #[test]
    fn paths_should_resolve_inside_the_package_or_not_at_all() {
        assert_eq!(
            resolve("src", "../tests/data/a.pb").as_deref(),
            Some("tests/data/a.pb")
        );
        assert_eq!(
            resolve("benches", "./data/x.json").as_deref(),
            Some("benches/data/x.json")
        );
        assert_eq!(resolve("benches", "../../informer/data.json"), None);
        assert_eq!(resolve("", "../README.md"), None);
    }

    #[test]
    fn an_include_outside_the_package_or_left_out_of_it_should_be_a_problem() {
        let p = packaged(
            &[
                "Cargo.toml",
                "src/lib.rs",
                "benches/decode.rs",
                "tests/data/a.pb",
            ],
            vec![target("lib", "kcr_x", "src/lib.rs", &[])],
            &[],
        );
        let read = |file: &str| {
            match file {
            "src/lib.rs" => Some(
                "include_bytes!(\"../tests/data/a.pb\"); include_str!(\"../tests/data/gone.json\");"
                    .to_owned(),
            ),
            "benches/decode.rs" => {
                Some("include_bytes!(\"../../informer/benches/data/page.json\");".to_owned())
            }
            _ => None,
        }
        };
        assert_eq!(
            check(&p, read),
            [
                Problem::NotPackaged {
                    file: "src/lib.rs".into(),
                    included: "tests/data/gone.json".into()
                },
                Problem::OutsidePackage {
                    file: "benches/decode.rs".into(),
                    included: "../../informer/benches/data/page.json".into()
                },
            ]
        );
    }

    #[test]
    fn targets_should_be_packaged_and_require_only_features_the_package_has() {
        let p = packaged(
            &["Cargo.toml", "src/lib.rs", "src/bin/server.rs"],
            vec![
                target("lib", "kcr_x", "src/lib.rs", &[]),
                target("bin", "server", "src/bin/server.rs", &["latest"]),
                target("bench", "speed", "benches/speed.rs", &["metrics"]),
            ],
            &["default", "metrics"],
        );
        let problems: Vec<String> = check(&p, |_| None).iter().map(|p| p.to_string()).collect();
        assert_eq!(
            problems,
            [
                "target bin server requires feature \"latest\", which the package does not have",
                "target bench speed: benches/speed.rs is not in the package",
            ]
        );
    }

    #[test]
    fn a_crate_over_ten_mib_should_be_refused() {
        let mut p = packaged(&["Cargo.toml"], Vec::new(), &[]);
        p.bytes = MAX_CRATE_BYTES;
        assert!(
            check(&p, |_| None).is_empty(),
            "exactly the limit is accepted"
        );
        p.bytes = MAX_CRATE_BYTES + 1;
        let problems = check(&p, |_| None);
        assert_eq!(
            problems,
            [Problem::TooLarge {
                bytes: MAX_CRATE_BYTES + 1
            }]
        );
        assert_eq!(
            problems[0].to_string(),
            "the .crate is 10.0 MiB (crates.io takes at most 10.0 MiB)"
        );
        assert_eq!(size(21_700), "21.2 KiB");
    }

    #[test]
    fn the_files_of_a_crate_should_be_read_from_its_tar_listing() {
        let listing = "kcr-x-0.1.0/.cargo_vcs_info.json\nkcr-x-0.1.0/Cargo.toml\nkcr-x-0.1.0/src/\nkcr-x-0.1.0/src/lib.rs\n";
        assert_eq!(
            crate_files(listing),
            [".cargo_vcs_info.json", "Cargo.toml", "src/lib.rs"]
        );
    }

    #[test]
    fn a_manifest_should_be_read_from_cargo_metadata() {
        let metadata = serde_json::json!({"packages": [{
            "name": "kcr-x", "version": "0.1.0",
            "manifest_path": "/w/crates/x/Cargo.toml",
            "features": {"default": ["metrics"], "metrics": []},
            "targets": [
                {"kind": ["lib"], "name": "kcr_x", "src_path": "/w/crates/x/src/lib.rs"},
                {"kind": ["bench"], "name": "speed", "src_path": "/w/crates/x/benches/speed.rs",
                 "required-features": ["metrics"]}
            ]
        }]});
        let m = manifest(&metadata, "kcr-x").unwrap();
        assert_eq!(m.version, "0.1.0");
        assert_eq!(m.features, ["default", "metrics"]);
        assert_eq!(
            m.targets[1],
            target("bench", "speed", "benches/speed.rs", &["metrics"])
        );
        assert!(manifest(&metadata, "nope").is_err());
    }
}
