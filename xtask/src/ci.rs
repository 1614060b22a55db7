//! `cargo xtask ci`: the project's test command.

use crate::cmd::run;
use std::process::Command;

/// Runs every check in order and fails on the first failure.
pub fn ci() -> Result<(), String> {
    run(None, "cargo", &["fmt", "--all", "--check"], &[])?;
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
    )?;
    run(None, "cargo", &["test", "--workspace"], &[])?;
    run(
        None,
        "cargo",
        &["doc", "--workspace", "--no-deps"],
        &[("RUSTDOCFLAGS", "-D warnings")],
    )?;
    ensure_cargo_deny()?;
    eprintln!(
        "==> cargo deny: advisories are skipped (their database cannot be reached from here)"
    );
    run(
        None,
        "cargo",
        &["deny", "check", "licenses", "bans", "sources"],
        &[],
    )?;
    eprintln!("xtask ci: all steps passed");
    Ok(())
}

fn ensure_cargo_deny() -> Result<(), String> {
    let present = Command::new("cargo")
        .args(["deny", "--version"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if present {
        return Ok(());
    }
    eprintln!("==> cargo-deny is missing: installing it");
    run(None, "cargo", &["install", "--locked", "cargo-deny"], &[])
}
