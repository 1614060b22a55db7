//! `cargo xtask release [major|minor|patch|X.Y.Z] [--no-verify] [--execute]`.
//!
//! Refuses a dirty tree or a failing `cargo xtask ci` (skipped with `--no-verify`); computes the new
//! version (the current one when no level is given: a first release) and the publish order from
//! the manifests; packages every publishable crate (`cargo package --workspace`, in dependency
//! order), checks each `.crate` ([`crate::package`]: size, files included from outside,
//! targets and their features), reports name, version, size and file count, and dry-runs
//! `cargo publish --workspace`, which builds each crate from its package alone (workspace
//! crates not yet on crates.io resolve through cargo's local overlay). Without `--execute`
//! that is all: the tree is not changed. With it, the versions and `CHANGELOG.md` are rewritten
//! first, then `release vX.Y.Z` is committed and tagged and the crates are published one by one.
//!
//! A library crate chooses no k8s-openapi Kubernetes version (the kube ecosystem's rule); the
//! workspace's `.cargo/config.toml` sets `K8S_OPENAPI_ENABLED_VERSION`, so the verification
//! builds of `cargo publish` find one. `cargo publish` waits until each crate is visible in the
//! index before returning, so the next crate in order finds it.

use crate::cmd::{output, run};
use crate::{changelog, order, package, version};
use std::path::{Path, PathBuf};

/// `cargo xtask release --help`.
pub const USAGE: &str = "\
usage: cargo xtask release [major|minor|patch|X.Y.Z] [--no-verify] [--execute]

Without a level the current version is released (a first release). Without --execute, a dry
run: prints the new version, the manifests it rewrites, the publish order and the new
CHANGELOG.md; packages every publishable crate (cargo package --workspace), checks each .crate
(at most 10 MiB, no include_str!/include_bytes! of a file outside the package or left out of
it, every target's source packaged and its required features present), reports name, version,
size and file count, and runs cargo publish --workspace --dry-run (each crate built from its
package alone: several minutes); the tree is not changed.
With --execute: rewrites the versions and CHANGELOG.md, does the same, commits
`release vX.Y.Z`, tags it and publishes crate by crate.

Either way the tree must be clean and `cargo xtask ci` must pass first (about 25 minutes
cold); --no-verify skips that check: a dry run then takes seconds.";
/// What a release run is asked to do.
#[derive(Debug, Clone)]
pub struct Options {
    /// `major`, `minor`, `patch` or an explicit `X.Y.Z`; `None` releases the current version.
    pub level: Option<String>,
    /// Really release (write, commit, tag, publish) instead of a dry run.
    pub execute: bool,
    /// Run `ci_command` first and refuse to release when it fails (default); `--no-verify`
    /// turns it off.
    pub verify: bool,
    /// The shell command that must pass first (`cargo xtask ci`).
    pub ci_command: String,
    /// The release date written to the changelog.
    pub date: String,
    /// Package, check and dry-run publish every crate (`cargo xtask release` always does; the
    /// planning tests, which run offline, do not).
    pub package: bool,
}

/// Parses the command line and releases the workspace it runs in.
pub fn release_from_args(args: &[String]) -> Result<(), String> {
    let mut level = None;
    let mut execute = false;
    let mut verify = true;
    for a in args {
        match a.as_str() {
            "--execute" => execute = true,
            "--no-verify" => verify = false,
            flag if flag.starts_with('-') => return Err(format!("unknown option {flag}\n{USAGE}")),
            l if level.is_none() => level = Some(l.to_string()),
            extra => return Err(format!("unexpected argument {extra}\n{USAGE}")),
        }
    }
    let root = workspace_root()?;
    let options = Options {
        level,
        execute,
        verify,
        ci_command: "cargo xtask ci".to_string(),
        date: changelog::today(),
        package: true,
    };
    release(&root, &options).map(|_| ())
}

fn workspace_root() -> Result<PathBuf, String> {
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    let manifest = output(
        &cwd,
        "cargo",
        &["locate-project", "--workspace", "--message-format", "plain"],
    )?;
    Path::new(manifest.trim())
        .parent()
        .map(Path::to_path_buf)
        .ok_or_else(|| "cannot find the workspace root".to_string())
}

/// The release worked out before anything is written.
#[derive(Debug, Clone)]
pub struct Plan {
    pub old: version::Version,
    pub new: version::Version,
    pub order: Vec<String>,
    /// Manifests (relative paths) whose versions change.
    pub manifests: Vec<String>,
    pub changelog: String,
    /// What would be published, in order (empty when packaging was not asked for).
    pub packages: Vec<Published>,
}

/// One crate as it would be published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    pub name: String,
    pub version: String,
    /// The size of its `.crate`.
    pub bytes: u64,
    /// The files in it.
    pub files: usize,
}

/// Runs a release (or its dry run) of the workspace at `root`.
pub fn release(root: &Path, options: &Options) -> Result<Plan, String> {
    let dirty = output(root, "git", &["status", "--porcelain"])?;
    if !dirty.trim().is_empty() {
        return Err(format!(
            "refusing to release: the working tree is not clean:\n{dirty}"
        ));
    }
    if options.verify {
        run(Some(root), "sh", &["-c", &options.ci_command], &[])
            .map_err(|e| format!("refusing to release: `{}` fails: {e}", options.ci_command))?;
    } else {
        eprintln!("--no-verify: `{}` is not run", options.ci_command);
    }

    let root_manifest = read(root, "Cargo.toml")?;
    let old = version::workspace_version(&root_manifest)?;
    let new = match &options.level {
        Some(level) => old.bumped(level)?,
        None => old,
    };
    let metadata = output(
        root,
        "cargo",
        &["metadata", "--no-deps", "--format-version", "1"],
    )?;
    let metadata: serde_json::Value =
        serde_json::from_str(&metadata).map_err(|e| format!("cargo metadata: {e}"))?;
    let packages = order::packages(&metadata)?;
    let order = order::publish_order(&packages, &order::members(&root_manifest))?;
    let names: Vec<String> = packages.iter().map(|p| p.name.clone()).collect();

    let mut manifests = vec!["Cargo.toml".to_string()];
    manifests.extend(packages.iter().map(|p| format!("{}/Cargo.toml", p.dir)));
    let mut rewritten = Vec::new();
    for m in &manifests {
        let text = read(root, m)?;
        let bumped = version::bump_manifest(&text, &names, old, new);
        if bumped != text {
            rewritten.push((m.clone(), bumped));
        }
    }
    let subjects = commit_subjects_since_last_tag(root)?;
    let log = changelog::release(
        &read(root, "CHANGELOG.md")?,
        &new.to_string(),
        &options.date,
        &subjects,
    )?;
    let unpublished: Vec<String> = packages
        .iter()
        .filter(|p| !p.publish)
        .map(|p| p.name.clone())
        .collect();
    let mut plan = Plan {
        old,
        new,
        order: order.clone(),
        manifests: rewritten.iter().map(|(m, _)| m.clone()).collect(),
        changelog: log.clone(),
        packages: Vec::new(),
    };
    print_plan(&plan, options.execute);
    if !options.execute {
        if options.package {
            plan.packages = package_and_check(root, &order, &unpublished, false)?;
        }
        eprintln!("dry run: nothing was changed (pass --execute to release)");
        return Ok(plan);
    }

    for (m, text) in &rewritten {
        write(root, m, text)?;
    }
    write(root, "CHANGELOG.md", &log)?;
    run(Some(root), "cargo", &["update", "--workspace"], &[])?;
    plan.packages = package_and_check(root, &order, &unpublished, true)?;
    let tag = format!("v{new}");
    run(
        Some(root),
        "git",
        &[
            "commit",
            "--all",
            "--quiet",
            "--message",
            &format!("release {tag}"),
        ],
        &[],
    )?;
    run(Some(root), "git", &["tag", &tag], &[])?;
    // Verified by the dry run just made.
    for name in &order {
        run(
            Some(root),
            "cargo",
            &["publish", "--no-verify", "-p", name],
            &[],
        )?;
    }
    eprintln!("released {tag}: {}", order.join(", "));
    Ok(plan)
}

/// The `--exclude` arguments that leave the unpublished packages out of a `--workspace` run.
fn excluded(unpublished: &[String]) -> Vec<&str> {
    unpublished
        .iter()
        .flat_map(|name| ["--exclude", name.as_str()])
        .collect()
}

/// Packages every publishable crate (`cargo package --workspace`, without building: the
/// publish dry run builds), checks each `.crate`, prints what would be published, then runs
/// `cargo publish --workspace --dry-run`. `dirty`: the versions were just rewritten.
fn package_and_check(
    root: &Path,
    order: &[String],
    unpublished: &[String],
    dirty: bool,
) -> Result<Vec<Published>, String> {
    let exclude = excluded(unpublished);
    let allow_dirty: &[&str] = if dirty { &["--allow-dirty"] } else { &[] };
    let package_args = [
        &["package", "--workspace", "--no-verify"][..],
        allow_dirty,
        &exclude,
    ]
    .concat();
    run(Some(root), "cargo", &package_args, &[])?;
    let metadata = output(
        root,
        "cargo",
        &["metadata", "--no-deps", "--format-version", "1"],
    )?;
    let metadata: serde_json::Value =
        serde_json::from_str(&metadata).map_err(|e| format!("cargo metadata: {e}"))?;
    let target = metadata["target_directory"]
        .as_str()
        .ok_or("metadata lacks target_directory")?;
    let dirs = order::packages(&metadata)?;
    let mut published = Vec::new();
    let mut problems = Vec::new();
    println!("would publish, in order:");
    println!(
        "  {:<24} {:>8} {:>11} {:>6}",
        "crate", "version", "size", "files"
    );
    for name in order {
        let manifest = package::manifest(&metadata, name)?;
        let file = Path::new(target)
            .join("package")
            .join(format!("{name}-{}.crate", manifest.version));
        let bytes = std::fs::metadata(&file)
            .map_err(|e| format!("{}: {e}", file.display()))?
            .len();
        let listing = output(root, "tar", &["-tzf", &file.to_string_lossy()])?;
        let files = package::crate_files(&listing);
        let dir = dirs
            .iter()
            .find(|p| p.name == *name)
            .map(|p| root.join(&p.dir))
            .ok_or_else(|| format!("no directory for {name}"))?;
        let packaged = package::Packaged {
            manifest,
            bytes,
            files,
        };
        for problem in package::check(&packaged, |f| std::fs::read_to_string(dir.join(f)).ok()) {
            problems.push(format!("{name}: {problem}"));
        }
        println!(
            "  {:<24} {:>8} {:>11} {:>6}",
            name,
            packaged.manifest.version,
            package::size(bytes),
            packaged.files.len()
        );
        published.push(Published {
            name: name.clone(),
            version: packaged.manifest.version.clone(),
            bytes,
            files: packaged.files.len(),
        });
    }
    if !problems.is_empty() {
        return Err(format!(
            "{} packaging problem(s):\n  {}",
            problems.len(),
            problems.join("\n  ")
        ));
    }
    println!(
        "every .crate is within crates.io's {} and includes nothing from outside",
        package::size(package::MAX_CRATE_BYTES)
    );
    let publish_args = [
        &["publish", "--workspace", "--dry-run"][..],
        allow_dirty,
        &exclude,
    ]
    .concat();
    run(Some(root), "cargo", &publish_args, &[])?;
    Ok(published)
}

fn print_plan(plan: &Plan, execute: bool) {
    let mode = if execute {
        "release"
    } else {
        "dry run of the release"
    };
    println!("{mode} v{} (from v{})", plan.new, plan.old);
    println!("versions rewritten in: {}", plan.manifests.join(", "));
    println!("publish order: {}", plan.order.join(" -> "));
    println!(
        "steps: package and publish --dry-run in that order, commit `release v{0}`, tag `v{0}`, publish each crate",
        plan.new
    );
    println!("CHANGELOG.md becomes:\n{}", plan.changelog);
}

fn commit_subjects_since_last_tag(root: &Path) -> Result<Vec<String>, String> {
    let range = match output(root, "git", &["describe", "--tags", "--abbrev=0"]) {
        Ok(tag) => format!("{}..HEAD", tag.trim()),
        Err(_) => "HEAD".to_string(),
    };
    let log = output(root, "git", &["log", "--format=%s", &range])?;
    Ok(log
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect())
}

fn read(root: &Path, rel: &str) -> Result<String, String> {
    std::fs::read_to_string(root.join(rel)).map_err(|e| format!("cannot read {rel}: {e}"))
}

fn write(root: &Path, rel: &str, text: &str) -> Result<(), String> {
    std::fs::write(root.join(rel), text).map_err(|e| format!("cannot write {rel}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A temporary clone of this repository's committed state.
    struct Clone(PathBuf);

    impl Clone {
        fn new(tag: &str) -> Clone {
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos();
            let dir = std::env::temp_dir()
                .join(format!("kcr-release-{tag}-{}-{nanos}", std::process::id()));
            let status = std::process::Command::new("git")
                .args(["clone", "--quiet", "--no-hardlinks"])
                .arg(src)
                .arg(&dir)
                .status()
                .unwrap();
            assert!(status.success());
            Clone(dir)
        }
    }

    impl Drop for Clone {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn options(ci: &str) -> Options {
        Options {
            level: Some("minor".into()),
            execute: false,
            verify: true,
            ci_command: ci.into(),
            date: "2026-11-22".into(),
            package: false,
        }
    }

    #[test]
    fn a_dry_run_in_a_clone_prints_the_plan_and_changes_nothing() {
        let clone = Clone::new("dry");
        let before = read(&clone.0, "Cargo.toml").unwrap();
        let plan = release(&clone.0, &options("true")).unwrap();
        assert_eq!(plan.new, plan.old.bumped("minor").unwrap());
        assert!(plan.manifests.contains(&"Cargo.toml".to_string()));
        assert_eq!(plan.order.first().map(String::as_str), Some("kcr-metrics"));
        assert!(
            !plan
                .order
                .iter()
                .any(|n| n == "xtask" || n == "kcr-examples"),
            "unpublished crates stay out"
        );
        let pos = |n: &str| plan.order.iter().position(|o| o == n);
        if let (Some(w), Some(m)) = (pos("kcr-workqueue"), pos("kcr-metrics")) {
            assert!(m < w, "metrics is published before workqueue");
        }
        assert!(
            plan.changelog
                .contains(&format!("## [{}] - 2026-11-22", plan.new))
        );
        assert_eq!(read(&clone.0, "Cargo.toml").unwrap(), before);
        assert_eq!(
            output(&clone.0, "git", &["status", "--porcelain"]).unwrap(),
            ""
        );
    }

    #[test]
    fn the_workspace_runs_should_leave_out_every_unpublished_package() {
        let unpublished = vec!["kcr-examples".to_string(), "xtask".to_string()];
        assert_eq!(
            excluded(&unpublished),
            ["--exclude", "kcr-examples", "--exclude", "xtask"]
        );
        assert!(excluded(&[]).is_empty());
    }

    #[test]
    fn without_a_level_the_current_version_is_planned_for_release() {
        let clone = Clone::new("first");
        let options = Options {
            level: None,
            ..options("true")
        };
        let plan = release(&clone.0, &options).unwrap();
        assert_eq!(plan.new, plan.old);
        assert!(plan.manifests.is_empty(), "no version is rewritten");
        assert!(
            plan.changelog
                .contains(&format!("## [{}] - 2026-11-22", plan.old))
        );
        assert!(plan.packages.is_empty(), "packaging was not asked for");
    }

    #[test]
    fn a_dirty_tree_is_refused() {
        let clone = Clone::new("dirty");
        write(&clone.0, "CHANGELOG.md", "edited\n").unwrap();
        let err = release(&clone.0, &options("true")).unwrap_err();
        assert!(err.contains("not clean"), "{err}");
    }

    #[test]
    fn no_verify_skips_the_ci_and_still_prints_the_plan() {
        let clone = Clone::new("noverify");
        let options = Options {
            verify: false,
            ..options("false")
        };
        let plan = release(&clone.0, &options).unwrap();
        assert_eq!(plan.new, plan.old.bumped("minor").unwrap());
        assert_eq!(
            output(&clone.0, "git", &["status", "--porcelain"]).unwrap(),
            ""
        );
    }

    #[test]
    fn a_failing_ci_is_refused() {
        let clone = Clone::new("ci");
        let err = release(&clone.0, &options("false")).unwrap_err();
        assert!(err.contains("fails"), "{err}");
    }
}
