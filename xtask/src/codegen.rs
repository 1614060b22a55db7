//! `cargo xtask gen`: the generated tables, written from inputs kept in the repository.
//!
//! The Kubernetes facts the tables hold (protobuf field numbers, JSON names, Go pointers and
//! `omitempty`) are read from the Go declarations of the API types, kept as a plain declaration
//! file under `xtask/k8s/` (see [`go`]). `cargo xtask gen` needs nothing but that file and
//! `rustfmt`; `cargo xtask gen --import DIR` rewrites the file from checkouts of the Kubernetes
//! Go modules (the one step that needs them, when moving to a new Kubernetes version), and
//! `cargo xtask gen --check` (a step of `cargo xtask ci`) fails when a checked-in table differs
//! from a fresh generation.

mod builtin_types;
mod go;
mod go_fields;
mod go_types;
mod protobuf;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `cargo xtask gen --help`.
pub const USAGE: &str = "\
usage: cargo xtask gen [--check | --import DIR]

Writes every generated table from the declaration file xtask/k8s/go-api.txt (the Go
declarations of the Kubernetes API types at the version the tables follow):
  crates/protobuf/src/tables.rs              kcr-protobuf's field tables
  crates/testenv/src/wire/go_fields/table.rs  kcr-testenv's Go field facts (pointers,
                                             omitempty, named types)
  crates/testenv/src/managed_fields/builtin_types.rs
                                             kcr-testenv's list/map types, patch
                                             strategies and defaults (OpenAPI markers) of
                                             every served kind (roots from
                                             crates/testenv/data/api-resources-*.txt)
  crates/testenv/src/controllers/go_types.rs  kcr-testenv's Go types of a PodTemplateSpec
                                             as go-spew prints them (pod-template-hash;
                                             standard-library types from xtask/k8s/go-std.txt)

  --check       write nothing; fail, naming each table that differs from a fresh
                generation and its first differing line (a step of `cargo xtask ci`)
  --import DIR  first rewrite xtask/k8s/go-api.txt from DIR, a directory holding
                checkouts of k8s.io/api (api/), k8s.io/apimachinery (apimachinery/),
                k8s.io/kube-aggregator (kube-aggregator/) and
                k8s.io/apiextensions-apiserver (apiextensions-apiserver/) at one tag
                (v0.36.2); --version TAG names it in the file (default: the file's)";

/// What `cargo xtask gen` was asked to do.
#[derive(Debug, PartialEq, Eq)]
pub enum Args {
    /// Write the tables.
    Write,
    /// Compare the tables with a fresh generation.
    Check,
    /// Rewrite the declaration file from checkouts, then write the tables.
    Import {
        /// The directory of checkouts.
        dir: PathBuf,
        /// The tag the checkouts are at, if given.
        version: Option<String>,
    },
}

impl Args {
    /// Parses the arguments after `gen`.
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let mut check = false;
        let mut dir = None;
        let mut version = None;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            match a.as_str() {
                "--check" => check = true,
                "--import" => {
                    dir = Some(PathBuf::from(
                        it.next()
                            .ok_or(format!("--import needs a directory\n{USAGE}"))?,
                    ));
                }
                "--version" => {
                    version = Some(
                        it.next()
                            .ok_or(format!("--version needs a tag\n{USAGE}"))?
                            .clone(),
                    );
                }
                other => return Err(format!("unknown option {other:?}\n{USAGE}")),
            }
        }
        match (check, dir) {
            (true, Some(_)) => Err(format!("--check and --import exclude each other\n{USAGE}")),
            (true, None) if version.is_some() => {
                Err(format!("--version goes with --import\n{USAGE}"))
            }
            (true, None) => Ok(Args::Check),
            (false, Some(dir)) => Ok(Args::Import { dir, version }),
            (false, None) if version.is_some() => {
                Err(format!("--version goes with --import\n{USAGE}"))
            }
            (false, None) => Ok(Args::Write),
        }
    }
}

/// The declaration file, relative to the workspace root.
pub const DECLARATIONS: &str = "xtask/k8s/go-api.txt";

/// The declarations of the Go standard-library types the API types hold (`time.Time`), in the
/// same format, written by hand from the sources it names; read with [`DECLARATIONS`].
pub const STD_DECLARATIONS: &str = "xtask/k8s/go-std.txt";

/// A generated file: where it is, relative to the workspace root, and how it is written
/// (before `rustfmt`) from the declarations.
pub struct Table {
    /// Its path, relative to the workspace root.
    pub path: &'static str,
    /// Writes it.
    pub generate: fn(&go::Api) -> Result<String, String>,
}

/// Every generated table.
pub const TABLES: [Table; 4] = [
    Table {
        path: "crates/protobuf/src/tables.rs",
        generate: protobuf::generate,
    },
    Table {
        path: "crates/testenv/src/wire/go_fields/table.rs",
        generate: go_fields::generate,
    },
    Table {
        path: "crates/testenv/src/managed_fields/builtin_types.rs",
        generate: builtin_types::generate,
    },
    Table {
        path: "crates/testenv/src/controllers/go_types.rs",
        generate: go_types::generate,
    },
];

/// The workspace root (xtask's parent directory).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask is in the workspace")
        .to_owned()
}

/// Runs `cargo xtask gen`.
pub fn run(args: &Args) -> Result<(), String> {
    let root = root();
    if let Args::Import { dir, version } = args {
        let version = match version {
            Some(v) => v.clone(),
            None => read_declarations(&root)?.version,
        };
        let api = go::import(dir, &version, protobuf::SOURCES)?;
        let path = root.join(DECLARATIONS);
        std::fs::write(&path, go::write(&api))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        eprintln!("gen: wrote {DECLARATIONS} from {}", dir.display());
    }
    let api = read_declarations(&root)?;
    let mut stale = Vec::new();
    for table in &TABLES {
        let fresh = generate(table, &api)?;
        let path = root.join(table.path);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if *args == Args::Check {
            if let Some(hint) = differs(&current, &fresh) {
                stale.push(format!("{}: {hint}", table.path));
            }
        } else if current != fresh {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
            }
            std::fs::write(&path, fresh)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            eprintln!("gen: wrote {}", table.path);
        } else {
            eprintln!("gen: {} is up to date", table.path);
        }
    }
    if stale.is_empty() {
        if *args == Args::Check {
            eprintln!(
                "gen: every table ({}) equals a fresh generation from {DECLARATIONS} ({})",
                TABLES.len(),
                api.version
            );
        }
        Ok(())
    } else {
        Err(format!(
            "{} generated table(s) differ from a fresh generation (run `cargo xtask gen` and commit the result):\n  {}",
            stale.len(),
            stale.join("\n  ")
        ))
    }
}

/// The declarations of [`DECLARATIONS`], followed by the packages of [`STD_DECLARATIONS`].
fn read_declarations(root: &Path) -> Result<go::Api, String> {
    let read = |file: &str| {
        let path = root.join(file);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        go::parse(&text).map_err(|e| format!("{file}: {e}"))
    };
    let mut api = read(DECLARATIONS)?;
    api.packages.extend(read(STD_DECLARATIONS)?.packages);
    Ok(api)
}

/// One table, written and formatted.
pub fn generate(table: &Table, api: &go::Api) -> Result<String, String> {
    let text = (table.generate)(api).map_err(|e| format!("{}: {e}", table.path))?;
    rustfmt(&text)
}

/// Formats Rust source as `cargo fmt` does in this workspace (edition 2024, default style).
pub fn rustfmt(text: &str) -> Result<String, String> {
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run rustfmt (rustup component add rustfmt): {e}"))?;
    let mut stdin = child.stdin.take().expect("piped");
    let input = text.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    writer
        .join()
        .map_err(|_| "rustfmt input thread panicked".to_owned())?
        .map_err(|e| format!("cannot write to rustfmt: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "rustfmt failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    String::from_utf8(out.stdout).map_err(|e| format!("rustfmt printed non-UTF-8: {e}"))
}

/// `None` when equal, else where the checked-in text first differs from the fresh one.
pub fn differs(current: &str, fresh: &str) -> Option<String> {
    if current == fresh {
        return None;
    }
    if current.is_empty() {
        return Some("missing".into());
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (current.lines().collect(), fresh.lines().collect());
    let at = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let line = |l: Option<&&str>| l.map_or("(end of file)".to_owned(), |l| format!("{l:?}"));
    Some(format!(
        "line {} is {} here, {} when generated ({} lines here, {} generated)",
        at + 1,
        line(a.get(at)),
        line(b.get(at)),
        a.len(),
        b.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_options_should_be_parsed_and_bad_ones_refused_with_the_usage() {
        assert_eq!(Args::parse(&[]), Ok(Args::Write));
        assert_eq!(Args::parse(&args("--check")), Ok(Args::Check));
        assert_eq!(
            Args::parse(&args("--import /tmp/k8s --version v0.37.0")),
            Ok(Args::Import {
                dir: "/tmp/k8s".into(),
                version: Some("v0.37.0".into())
            })
        );
        for bad in ["--import", "--check --import x", "--frob", "--version v1"] {
            let err = Args::parse(&args(bad)).unwrap_err();
            assert!(err.contains("usage: cargo xtask gen"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_difference_should_name_its_first_line_and_both_texts() {
        assert_eq!(differs("a\nb\n", "a\nb\n"), None);
        assert_eq!(differs("", "a\n").as_deref(), Some("missing"));
        let hint = differs("a\nb\nc\n", "a\nB\nc\n").unwrap();
        assert_eq!(
            hint,
            "line 2 is \"b\" here, \"B\" when generated (3 lines here, 3 generated)"
        );
        let hint = differs("a\n", "a\nb\n").unwrap();
        assert!(
            hint.starts_with("line 2 is (end of file) here, \"b\""),
            "{hint}"
        );
    }

    #[test]
    fn every_checked_in_table_should_equal_a_fresh_generation() {
        let root = root();
        let api = read_declarations(&root).unwrap();
        for table in &TABLES {
            let fresh = generate(table, &api).unwrap();
            let current = std::fs::read_to_string(root.join(table.path)).unwrap();
            assert_eq!(
                differs(&current, &fresh),
                None,
                "{} is stale: run `cargo xtask gen`",
                table.path
            );
        }
    }

    #[test]
    fn a_changed_declaration_should_make_the_check_fail_on_its_table() {
        let root = root();
        let mut api = read_declarations(&root).unwrap();
        // The protobuf number of `Pod.spec` (1 in `core/v1`'s `Pod`) moved to 99.
        let core = api
            .packages
            .iter_mut()
            .find(|p| p.key == "core/v1")
            .unwrap();
        let pod = &mut core.structs.iter_mut().find(|(n, _)| n == "Pod").unwrap().1;
        let spec = pod
            .iter_mut()
            .find(|f| f.json.as_deref() == Some("spec,omitempty"))
            .unwrap();
        spec.protobuf = Some("bytes,99,opt,name=spec".into());
        let fresh = generate(&TABLES[0], &api).unwrap();
        let current = std::fs::read_to_string(root.join(TABLES[0].path)).unwrap();
        let hint = differs(&current, &fresh).unwrap();
        assert!(hint.contains("99"), "{hint}");
    }

    #[test]
    fn a_changed_marker_should_make_the_check_fail_on_the_structure_table() {
        let root = root();
        let mut api = read_declarations(&root).unwrap();
        // `PodSpec.containers` loses `+listType=map` (and its key): an atomic list.
        let core = api
            .packages
            .iter_mut()
            .find(|p| p.key == "core/v1")
            .unwrap();
        let spec = &mut core
            .structs
            .iter_mut()
            .find(|(n, _)| n == "PodSpec")
            .unwrap()
            .1;
        let containers = spec
            .iter_mut()
            .find(|f| f.json.as_deref() == Some("containers"))
            .unwrap();
        assert!(containers.markers.iter().any(|m| m == "listType=map"));
        containers.markers.clear();
        containers.patch_strategy = None;
        let table = &TABLES[2];
        assert!(table.path.ends_with("builtin_types.rs"));
        let fresh = generate(table, &api).unwrap();
        let current = std::fs::read_to_string(root.join(table.path)).unwrap();
        let hint = differs(&current, &fresh).unwrap();
        assert!(hint.contains("containers [a]@core.v1.Container"), "{hint}");
    }
}

#[cfg(test)]
mod layout_tests {
    use super::root;
    use std::path::Path;

    fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    #[test]
    fn no_library_code_should_embed_a_file_from_tests() {
        // A crate's own code (before its unit tests) reads its data from beside its sources,
        // never from `tests/`: the served-resources list of kcr-testenv is in `data/`.
        let mut files = Vec::new();
        for krate in std::fs::read_dir(root().join("crates")).unwrap().flatten() {
            rust_files(&krate.path().join("src"), &mut files);
        }
        assert!(files.len() > 50, "{}", files.len());
        let mut found = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for (i, line) in code.lines().enumerate() {
                let embeds = line.contains("include_str!(") || line.contains("include_bytes!(");
                if embeds && line.contains("tests/") {
                    found.push(format!("{}:{}", file.display(), i + 1));
                }
            }
        }
        assert_eq!(found, Vec::<String>::new());
    }
}
