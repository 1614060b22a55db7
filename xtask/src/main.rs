//! Project tasks for kcr, run as `cargo xtask <task>`.
//!
//! - `cargo xtask ci`: the project's test command (format, lint, test, docs,
//!   dependency policy), failing on the first step that fails.
//! - `cargo xtask bench`: every crate's criterion benchmarks, summarised as
//!   one table of medians (also written to `target/kcr-bench.md`).
//! - `cargo xtask release <major|minor|patch|X.Y.Z> [--execute]`: a dry run
//!   that prints the release plan, or with `--execute` the release itself.

mod bench;
mod changelog;
mod ci;
mod cmd;
mod order;
mod release;
mod version;

use std::process::ExitCode;

const USAGE: &str =
    "usage: cargo xtask <ci | bench | release <major|minor|patch|X.Y.Z> [--execute]>";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("ci") => ci::ci(),
        Some("bench") => bench::bench(&args[1..]),
        Some("release") => release::release_from_args(&args[1..]),
        _ => {
            eprintln!("{USAGE}");
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
