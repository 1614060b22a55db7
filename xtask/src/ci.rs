//! `cargo xtask ci`: the project's test command.

// The task reports the wall-clock time of the processes it runs: no tokio clock here.
#![allow(clippy::disallowed_methods)]

use crate::cmd::{output, run};
use crate::order;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// `cargo xtask ci --help`.
pub const USAGE: &str = "\
usage: cargo xtask ci

Runs, failing on the first step that fails:
  0. cargo-deny is looked for (and installed with `cargo install --locked cargo-deny`
     when missing) before anything else, so a machine that cannot get it fails at once
  1. cargo fmt --all --check
  1b. cargo xtask gen --check: every generated table (kcr-protobuf's field tables, kcr-testenv's
     Go field facts) equals a fresh generation from xtask/k8s/go-api.txt (a few seconds)
  2. cargo clippy --workspace --all-targets -- -D warnings
  3. cargo test --workspace
  3b. the networked test targets once more with KCR_TEST_REALISTIC=1: each test's kcr-testenv
     runs as `kcr-apiserver --realistic` does (a `default` ServiceAccount and the
     `kube-root-ca.crt` ConfigMap in every namespace), so a test that assumes an empty
     namespace fails here (about 25 s: the binaries of step 3, run again)
  4. cargo doc --workspace --no-deps (RUSTDOCFLAGS=-D warnings)
  5. cargo check --lib of every library crate with K8S_OPENAPI_ENABLED_VERSION set to the
     oldest and the newest Kubernetes version k8s-openapi supports (in target/k8s-versions)
  6. cargo deny check licenses bans sources (advisories need a database download)

How long: about 25 minutes from a cold build on 2 cores, 3 to 6 minutes when the build
is warm (the tests take most of it). Each step prints its time, the run its total.";

/// The oldest and the newest Kubernetes version of k8s-openapi 0.29 (its `v1_33` to
/// `v1_37` features); every library crate must build with each.
pub const KUBERNETES_VERSIONS: [&str; 2] = ["1.33", "1.37"];

/// The k8s-openapi minor release [`KUBERNETES_VERSIONS`] describes (a test compares it with
/// Cargo.lock).
#[cfg(test)]
const K8S_OPENAPI_RELEASE: &str = "0.29.";

/// The integration-test targets whose tests run on a `TestCluster` (kcr-testenv, or the real
/// cluster of `KCR_TEST_KUBECONFIG`): the ones the realistic step runs again.
pub const REALISTIC_TESTS: [&str; 13] = [
    "reflector",
    "shared_informer",
    "factory",
    "metadata_informer",
    "cache",
    "controller",
    "controller_v025",
    "metadata_controller",
    "read_your_writes",
    "leaderelection",
    "manager",
    "record",
    "sample_controller",
];

/// Test targets that mention a `TestCluster` but start none on kcr-testenv (only on a real
/// cluster): the realistic step would run them unchanged.
#[cfg(test)]
const NOT_REALISTIC: [&str; 2] = [
    // Starts `kcr-apiserver` processes; a TestCluster only with KCR_TEST_KUBECONFIG.
    "examples/tests/examples.rs",
    // Starts its own kcr-testenv with the `ShardedListAndWatch` gate; uses only
    // `TestCluster::bound`.
    "crates/controller-manager/tests/sharding.rs",
];

/// The `cargo` arguments of the realistic step: the workspace's build of step 3 (the same
/// features, so nothing is rebuilt), only [`REALISTIC_TESTS`].
fn realistic_args() -> Vec<&'static str> {
    let mut args = vec!["test", "--workspace"];
    for t in REALISTIC_TESTS {
        args.extend(["--test", t]);
    }
    args
}

type Step = (&'static str, fn() -> Result<(), String>);

/// The steps of `cargo xtask ci`, in order: the tool that could be missing first.
fn steps() -> [Step; 9] {
    [
        ("cargo-deny present", ensure_cargo_deny),
        ("format", || {
            run(None, "cargo", &["fmt", "--all", "--check"], &[])
        }),
        ("generated tables", || {
            eprintln!("==> cargo xtask gen --check");
            crate::codegen::run(&crate::codegen::Args::Check)
        }),
        ("clippy", || {
            run(
                None,
                "cargo",
                &[
                    "clippy",
                    "--workspace",
                    "--all-targets",
                    "--",
                    "-D",
                    "warnings",
                ],
                &[],
            )
        }),
        ("tests", || {
            run(None, "cargo", &["test", "--workspace"], &[])
        }),
        ("networked tests, realistic kcr-testenv", || {
            run(
                None,
                "cargo",
                &realistic_args(),
                &[("KCR_TEST_REALISTIC", "1")],
            )
        }),
        ("docs", || {
            run(
                None,
                "cargo",
                &["doc", "--workspace", "--no-deps"],
                &[("RUSTDOCFLAGS", "-D warnings")],
            )
        }),
        ("Kubernetes versions", check_kubernetes_versions),
        ("dependency policy", || {
            eprintln!(
                "==> cargo deny: advisories are skipped (their database cannot be reached from here)"
            );
            run(
                None,
                "cargo",
                &["deny", "check", "licenses", "bans", "sources"],
                &[],
            )
        }),
    ]
}

/// Runs every check in order and fails on the first failure.
pub fn ci() -> Result<(), String> {
    let started = Instant::now();
    let steps = steps();
    eprintln!(
        "xtask ci: {} steps; about 25 minutes from a cold build on 2 cores, a few minutes warm",
        steps.len()
    );
    for (name, f) in steps {
        step(name, f)?;
    }
    eprintln!(
        "xtask ci: all steps passed in {}",
        minutes(started.elapsed())
    );
    Ok(())
}

/// Runs one step, printing how long it took.
fn step(name: &str, f: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    let started = Instant::now();
    let result = f();
    let took = minutes(started.elapsed());
    match &result {
        Ok(()) => eprintln!("xtask ci: {name}: ok in {took}"),
        Err(_) => eprintln!("xtask ci: {name}: FAILED after {took}"),
    }
    result
}

fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// The publishable crates with a library target: the ones whose users choose the Kubernetes
/// version.
pub fn library_crates(metadata: &serde_json::Value) -> Result<Vec<String>, String> {
    let publishable: Vec<String> = order::packages(metadata)?
        .into_iter()
        .filter(|p| p.publish)
        .map(|p| p.name)
        .collect();
    let list = metadata["packages"]
        .as_array()
        .ok_or("metadata lacks packages")?;
    Ok(list
        .iter()
        .filter(|p| {
            p["targets"].as_array().is_some_and(|targets| {
                targets.iter().any(|t| {
                    t["kind"]
                        .as_array()
                        .is_some_and(|k| k.iter().any(|k| k == "lib"))
                })
            })
        })
        .filter_map(|p| p["name"].as_str())
        .filter(|name| publishable.iter().any(|p| p == name))
        .map(str::to_owned)
        .collect())
}

/// `cargo check --lib` of every library crate with each of [`KUBERNETES_VERSIONS`] (a library
/// enables no version feature, so the variable chooses it), in a target directory of its own
/// so the main build stays warm.
fn check_kubernetes_versions() -> Result<(), String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let metadata = output(
        &cwd,
        "cargo",
        &["metadata", "--no-deps", "--format-version", "1"],
    )?;
    let metadata: serde_json::Value =
        serde_json::from_str(&metadata).map_err(|e| format!("cargo metadata: {e}"))?;
    let crates = library_crates(&metadata)?;
    let target = metadata["target_directory"]
        .as_str()
        .ok_or("metadata lacks target_directory")?;
    let target = Path::new(target).join("k8s-versions");
    let target = target.to_string_lossy();
    for version in KUBERNETES_VERSIONS {
        let mut args = vec!["check", "--lib", "--target-dir", &target];
        for c in &crates {
            args.extend(["-p", c.as_str()]);
        }
        run(
            None,
            "cargo",
            &args,
            &[("K8S_OPENAPI_ENABLED_VERSION", version)],
        )
        .map_err(|e| format!("the library crates do not build for Kubernetes {version}: {e}"))?;
    }
    Ok(())
}

fn cargo_deny_present() -> bool {
    Command::new("cargo")
        .args(["deny", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn ensure_cargo_deny() -> Result<(), String> {
    ensure_tool(cargo_deny_present, || {
        eprintln!("==> cargo-deny is missing: installing it before the other steps");
        run(None, "cargo", &["install", "--locked", "cargo-deny"], &[])
    })
}

/// Looks for cargo-deny, installs it when missing, and explains what to do when that fails.
fn ensure_tool(
    present: impl FnOnce() -> bool,
    install: impl FnOnce() -> Result<(), String>,
) -> Result<(), String> {
    if present() {
        return Ok(());
    }
    install().map_err(|e| {
        format!(
            "cargo-deny is needed by the last step (cargo deny check licenses bans sources) and could not be installed ({e}). \
             Install it where crates.io can be reached (`cargo install --locked cargo-deny`) or put a cargo-deny binary on PATH, then run `cargo xtask ci` again; nothing else was run."
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_range_should_be_that_of_the_locked_k8s_openapi() {
        let lock = include_str!("../../Cargo.lock");
        let locked = lock
            .split("[[package]]")
            .find(|p| p.contains("name = \"k8s-openapi\""))
            .and_then(|p| p.lines().find(|l| l.starts_with("version = ")))
            .unwrap_or_default();
        assert!(
            locked.contains(&format!("\"{K8S_OPENAPI_RELEASE}")),
            "k8s-openapi changed ({locked}): update KUBERNETES_VERSIONS to its oldest and newest"
        );
        assert_eq!(KUBERNETES_VERSIONS, ["1.33", "1.37"]);
        // The workspace's default version (.cargo/config.toml) is the newest one, which the
        // `latest` feature of the dev-dependencies also selects.
        let config = include_str!("../../.cargo/config.toml");
        assert!(
            config.contains(&format!(
                "K8S_OPENAPI_ENABLED_VERSION = \"{}\"",
                KUBERNETES_VERSIONS[1]
            )),
            "{config}"
        );
    }

    #[test]
    fn the_version_check_should_cover_every_publishable_library_and_nothing_else() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let metadata = output(
            &root,
            "cargo",
            &["metadata", "--no-deps", "--format-version", "1"],
        )
        .unwrap();
        let metadata: serde_json::Value = serde_json::from_str(&metadata).unwrap();
        let mut crates = library_crates(&metadata).unwrap();
        crates.sort();
        assert_eq!(
            crates,
            [
                "kcr",
                "kcr-cache",
                "kcr-controller-manager",
                "kcr-informer",
                "kcr-metrics",
                "kcr-protobuf",
                "kcr-reflector",
                "kcr-testenv",
                "kcr-workqueue"
            ]
        );
    }

    #[test]
    fn the_realistic_step_should_run_every_test_target_that_starts_a_test_cluster() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut starting = Vec::new();
        for dir in crate::e2e::TEST_DIRS {
            let entries = std::fs::read_dir(root.join(dir)).unwrap();
            for entry in entries {
                let path = entry.unwrap().path();
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                let starts = ["TestCluster::start", "start_cluster("]
                    .iter()
                    .any(|needle| text.contains(needle));
                let name = format!("{dir}/{}", path.file_name().unwrap().to_string_lossy());
                if path.extension().is_some_and(|e| e == "rs")
                    && starts
                    && !NOT_REALISTIC.contains(&name.as_str())
                {
                    starting.push(path.file_stem().unwrap().to_string_lossy().into_owned());
                }
            }
        }
        starting.sort();
        let mut listed = REALISTIC_TESTS.map(str::to_owned).to_vec();
        listed.sort();
        assert_eq!(starting, listed);
        let args = realistic_args().join(" ");
        assert!(
            args.starts_with("test --workspace --test reflector"),
            "{args}"
        );
        assert!(args.ends_with("--test sample_controller"), "{args}");
        let names: Vec<&str> = steps().iter().map(|(name, _)| *name).collect();
        let tests = names.iter().position(|n| *n == "tests");
        let realistic = names
            .iter()
            .position(|n| *n == "networked tests, realistic kcr-testenv");
        assert_eq!(realistic, tests.map(|t| t + 1), "{names:?}");
    }

    #[test]
    fn cargo_deny_should_be_looked_for_before_any_other_step() {
        let names: Vec<&str> = steps().iter().map(|(name, _)| *name).collect();
        assert_eq!(names[0], "cargo-deny present");
        assert_eq!(names.last(), Some(&"dependency policy"));
        assert!(names.contains(&"Kubernetes versions"));
        // The generated tables are compared before anything is built.
        let generated = names.iter().position(|n| *n == "generated tables");
        let clippy = names.iter().position(|n| *n == "clippy");
        assert!(generated.is_some() && generated < clippy, "{names:?}");
    }

    #[test]
    fn a_cargo_deny_that_cannot_be_installed_should_fail_with_what_to_do() {
        let err = ensure_tool(
            || false,
            || Err("`cargo install` failed (exit status: 101)".into()),
        )
        .unwrap_err();
        assert!(err.contains("could not be installed"), "{err}");
        assert!(err.contains("cargo install --locked cargo-deny"), "{err}");
        assert!(err.contains("exit status: 101"), "{err}");
        let mut installed = false;
        ensure_tool(
            || true,
            || {
                installed = true;
                Ok(())
            },
        )
        .unwrap();
        assert!(!installed, "a present cargo-deny is not reinstalled");
    }

    #[test]
    fn durations_should_read_in_minutes_and_seconds() {
        assert_eq!(minutes(Duration::from_secs(42)), "42s");
        assert_eq!(minutes(Duration::from_secs(24 * 60 + 5)), "24m05s");
    }
}
