//! Project tasks for kcr, run as `cargo xtask <task>`.
//!
//! - `cargo xtask ci`: the project's test command (format, lint, test, docs,
//!   the library crates against the oldest and newest Kubernetes version,
//!   dependency policy), failing on the first step that fails. cargo-deny is
//!   looked for (and installed) first, so a missing tool fails at once.
//! - `cargo xtask bench [-p CRATE]... [FILTER] [-- CRITERION ARGS]`: criterion
//!   benchmarks, summarised as one table of medians (also written to
//!   `target/kcr-bench.md`).
//! - `cargo xtask e2e --kubeconfig PATH [-- TEST ARGS]`: the networked tests of
//!   kcr-reflector, kcr-informer, kcr-controller-manager and the examples against
//!   the real cluster of a kubeconfig (`KCR_TEST_KUBECONFIG`).
//! - `cargo xtask gen [--check | --import DIR]`: writes the generated tables
//!   (kcr-protobuf's field tables, kcr-testenv's Go field facts) from the Go
//!   declarations kept in `xtask/k8s/go-api.txt`; `--check` fails when a
//!   checked-in table differs from a fresh generation (a step of `ci`).
//! - `cargo xtask fuzz [--seconds N] [TARGET...]`: kcr-testenv's cargo-fuzz
//!   targets (libFuzzer), each for a bounded time, with one line per target.
//! - `cargo xtask release [major|minor|patch|X.Y.Z] [--no-verify] [--execute]`:
//!   a dry run that prints the release plan, packages and checks every
//!   publishable crate and dry-runs `cargo publish`, or with `--execute` the
//!   release itself; `cargo xtask ci` runs first unless `--no-verify`.
//!
//! Every task takes `--help`.

mod bench;
mod changelog;
mod ci;
mod cmd;
mod codegen;
mod e2e;
mod fuzz;
mod order;
mod package;
mod release;
mod version;

use std::process::ExitCode;

const USAGE: &str = "\
usage: cargo xtask <task> [options]

tasks:
  ci        format, lint, test, docs, Kubernetes versions, dependency policy
            (about 25 minutes from a cold build on 2 cores, a few minutes warm)
  bench     criterion benchmarks, summarised as a table of medians
  e2e       the networked tests against the real cluster of a kubeconfig
  gen       write the generated tables (--check: compare them with a fresh generation)
  fuzz      kcr-testenv's fuzz targets (libFuzzer), 30 s each by default
  release   package, check and dry-run publish every crate (dry run), or release with --execute

`cargo xtask <task> --help` describes a task.";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
enum Task {
    Help(&'static str),
    Ci,
    Bench(bench::Args),
    E2e(e2e::Args),
    Fuzz(fuzz::Args),
    Gen(codegen::Args),
    Release(Vec<String>),
}

fn is_help(arg: &str) -> bool {
    matches!(arg, "-h" | "--help" | "help")
}

/// Parses `cargo xtask ...` (the arguments after `xtask`).
fn parse(args: &[String]) -> Result<Task, String> {
    let Some(task) = args.first() else {
        return Err(USAGE.to_owned());
    };
    let rest = &args[1..];
    let wants_help = rest.first().is_some_and(|a| is_help(a));
    match task.as_str() {
        t if is_help(t) => Ok(Task::Help(USAGE)),
        "ci" if wants_help => Ok(Task::Help(ci::USAGE)),
        "ci" => match rest.first() {
            None => Ok(Task::Ci),
            Some(extra) => Err(format!(
                "ci takes no arguments (got {extra:?})\n{}",
                ci::USAGE
            )),
        },
        "bench" if wants_help => Ok(Task::Help(bench::USAGE)),
        "bench" => bench::Args::parse(rest).map(Task::Bench),
        "e2e" if wants_help => Ok(Task::Help(e2e::USAGE)),
        "e2e" => e2e::Args::parse(rest).map(Task::E2e),
        "fuzz" if wants_help => Ok(Task::Help(fuzz::USAGE)),
        "fuzz" => fuzz::Args::parse(rest).map(Task::Fuzz),
        "gen" if wants_help => Ok(Task::Help(codegen::USAGE)),
        "gen" => codegen::Args::parse(rest).map(Task::Gen),
        "release" if wants_help => Ok(Task::Help(release::USAGE)),
        "release" => Ok(Task::Release(rest.to_vec())),
        other => Err(format!("unknown task {other:?}\n{USAGE}")),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let task = match parse(&args) {
        Ok(task) => task,
        Err(usage) => {
            eprintln!("{usage}");
            return ExitCode::from(2);
        }
    };
    let result = match task {
        Task::Help(text) => {
            println!("{text}");
            return ExitCode::SUCCESS;
        }
        Task::Ci => ci::ci(),
        Task::Bench(args) => bench::bench(&args),
        Task::E2e(args) => e2e::e2e(&args),
        Task::Fuzz(args) => fuzz::fuzz(&args),
        Task::Gen(args) => codegen::run(&args),
        Task::Release(args) => release::release_from_args(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn every_task_should_have_its_help() {
        assert_eq!(parse(&args("--help")), Ok(Task::Help(USAGE)));
        assert_eq!(parse(&args("help")), Ok(Task::Help(USAGE)));
        assert_eq!(parse(&args("ci --help")), Ok(Task::Help(ci::USAGE)));
        assert_eq!(parse(&args("bench --help")), Ok(Task::Help(bench::USAGE)));
        assert_eq!(parse(&args("bench -h")), Ok(Task::Help(bench::USAGE)));
        assert_eq!(
            parse(&args("release --help")),
            Ok(Task::Help(release::USAGE))
        );
        assert_eq!(parse(&args("e2e --help")), Ok(Task::Help(e2e::USAGE)));
        assert_eq!(parse(&args("fuzz --help")), Ok(Task::Help(fuzz::USAGE)));
        assert_eq!(parse(&args("gen --help")), Ok(Task::Help(codegen::USAGE)));
        assert_eq!(
            parse(&args("gen --check")),
            Ok(Task::Gen(codegen::Args::Check))
        );
        assert_eq!(
            parse(&args("fuzz --seconds 5 json_patch")),
            Ok(Task::Fuzz(fuzz::Args {
                seconds: 5,
                targets: vec!["json_patch".into()],
            }))
        );
        for text in [
            USAGE,
            ci::USAGE,
            bench::USAGE,
            e2e::USAGE,
            fuzz::USAGE,
            codegen::USAGE,
            release::USAGE,
        ] {
            assert!(text.starts_with("usage: cargo xtask"), "{text}");
        }
        assert!(release::USAGE.contains("--no-verify"));
        assert!(ci::USAGE.contains("minutes"));
    }

    #[test]
    fn no_task_an_unknown_task_or_extra_ci_arguments_should_be_refused_with_the_usage() {
        assert_eq!(parse(&[]), Err(USAGE.to_owned()));
        let unknown = parse(&args("deploy")).unwrap_err();
        assert!(unknown.contains("unknown task \"deploy\""), "{unknown}");
        let extra = parse(&args("ci --fast")).unwrap_err();
        assert!(extra.contains("ci takes no arguments"), "{extra}");
    }

    #[test]
    fn bench_should_refuse_an_unknown_flag() {
        let err = parse(&args("bench --measurment-time 2")).unwrap_err();
        assert!(
            err.contains("unknown option \"--measurment-time\""),
            "{err}"
        );
        assert!(err.contains("usage: cargo xtask bench"), "{err}");
    }
}
