//! Project tasks for kcr, run as `cargo xtask <task>`.
//!
//! - `cargo xtask ci`: the project's test command (format, lint, test, docs,
//!   dependency policy), failing on the first step that fails.

use std::process::{Command, ExitCode};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci(),
        _ => {
            eprintln!("usage: cargo xtask ci");
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

/// A step of a task: a program, its arguments and extra environment.
struct Step {
    program: &'static str,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
}

const CI_STEPS: &[Step] = &[
    Step { program: "cargo", args: &["fmt", "--all", "--check"], env: &[] },
    Step {
        program: "cargo",
        args: &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"],
        env: &[],
    },
    Step { program: "cargo", args: &["test", "--workspace"], env: &[] },
    Step {
        program: "cargo",
        args: &["doc", "--workspace", "--no-deps"],
        env: &[("RUSTDOCFLAGS", "-D warnings")],
    },
];

fn run(step: &Step) -> Result<(), String> {
    let line = format!("{} {}", step.program, step.args.join(" "));
    eprintln!("==> {line}");
    let status = Command::new(step.program)
        .args(step.args)
        .envs(step.env.iter().copied())
        .status()
        .map_err(|e| format!("cannot run `{line}`: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("`{line}` failed ({status})")) }
}

fn ci() -> Result<(), String> {
    for step in CI_STEPS {
        run(step)?;
    }
    ensure_cargo_deny()?;
    eprintln!("==> cargo deny: advisories are skipped (their database cannot be reached from here)");
    run(&Step {
        program: "cargo",
        args: &["deny", "check", "licenses", "bans", "sources"],
        env: &[],
    })?;
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
    run(&Step { program: "cargo", args: &["install", "--locked", "cargo-deny"], env: &[] })
}
