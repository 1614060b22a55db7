//! `cargo xtask fuzz`: runs kcr-testenv's and kcr-protobuf's cargo-fuzz targets (libFuzzer)
//! for a bounded time each and reports per target.

// The task reports the wall-clock time of the fuzzer runs: no tokio clock here.
#![allow(clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::cmd::run;

/// `cargo xtask fuzz --help`.
pub const USAGE: &str = "\
usage: cargo xtask fuzz [--seconds N] [TARGET...]

Builds the cargo-fuzz targets (libFuzzer, with the nightly toolchain and
AddressSanitizer) of kcr-testenv (crates/testenv/fuzz: its request parsers) and
kcr-protobuf (crates/protobuf/fuzz: its decoders), runs each TARGET (default:
every target) for N seconds (default 30) and prints one line per target:
seconds, executions, coverage, corpus size and result. Fails if a target finds
a crash (a panic, a broken contract of the parser, a stack overflow, or an
input slower than 10 s), whose input is kept under <fuzz dir>/artifacts/TARGET/.

  --seconds N   how long each target runs (default 30)
  TARGET        label_selector, field_selector, json_patch, merge_patch,
                strategic_merge_patch, apply_body, protobuf_body (kcr-testenv);
                protobuf_decoder (kcr-protobuf)

Needs the nightly toolchain (fails at once without it) and cargo-fuzz
(installed with `cargo install --locked cargo-fuzz` when missing). The first
build takes several minutes. Each run starts from the committed seeds
(crates/testenv/fuzz/seeds/TARGET; for protobuf_decoder, the bytes kcr-protobuf's
differential oracle recorded from kube-apiserver, crates/protobuf/tests/data/wire)
and the inputs earlier runs found (target/fuzz/corpus/TARGET). Not part of
`cargo xtask ci`.";

/// The fuzz targets, as their fuzz packages' `Cargo.toml` declare them.
pub const TARGETS: [&str; 8] = [
    "label_selector",
    "field_selector",
    "json_patch",
    "merge_patch",
    "strategic_merge_patch",
    "apply_body",
    "protobuf_body",
    "protobuf_decoder",
];

const DEFAULT_SECONDS: u64 = 30;

/// kcr-testenv's fuzz package, relative to the repository.
const FUZZ_DIR: &str = "crates/testenv/fuzz";

/// kcr-protobuf's fuzz package, relative to the repository.
const PROTOBUF_FUZZ_DIR: &str = "crates/protobuf/fuzz";

/// The fuzz package a target belongs to.
fn fuzz_dir(target: &str) -> &'static str {
    if target == "protobuf_decoder" {
        PROTOBUF_FUZZ_DIR
    } else {
        FUZZ_DIR
    }
}

/// The committed seeds of a target: the oracle's recorded bytes for kcr-protobuf's decoder.
fn seeds(target: &str) -> String {
    if target == "protobuf_decoder" {
        "crates/protobuf/tests/data/wire".to_owned()
    } else {
        format!("{FUZZ_DIR}/seeds/{target}")
    }
}

/// What `cargo xtask fuzz` was asked.
#[derive(Debug, PartialEq, Eq)]
pub struct Args {
    /// How long each target runs.
    pub seconds: u64,
    /// The targets to run, in order.
    pub targets: Vec<String>,
}

impl Args {
    /// Parses the arguments after `fuzz`, refusing unknown options and targets.
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let mut seconds = DEFAULT_SECONDS;
        let mut targets = Vec::new();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            match arg.as_str() {
                "--seconds" => {
                    let n = it
                        .next()
                        .ok_or_else(|| format!("--seconds needs a number\n{USAGE}"))?;
                    seconds = n.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        format!("--seconds takes a whole number above 0 (got {n:?})\n{USAGE}")
                    })?;
                }
                flag if flag.starts_with('-') => {
                    return Err(format!("unknown option {flag:?}\n{USAGE}"));
                }
                target if TARGETS.contains(&target) => {
                    if !targets.iter().any(|t| t == target) {
                        targets.push(target.to_owned());
                    }
                }
                other => return Err(format!("unknown fuzz target {other:?}\n{USAGE}")),
            }
        }
        if targets.is_empty() {
            targets = TARGETS.iter().map(|t| (*t).to_owned()).collect();
        }
        Ok(Self { seconds, targets })
    }
}

/// What one target's run came to, read from libFuzzer's output.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Inputs executed.
    pub execs: Option<u64>,
    /// Coverage points reached (`cov:`).
    pub coverage: Option<u64>,
    /// Inputs in the corpus at the end (`corp:`).
    pub corpus: Option<u64>,
    /// Where libFuzzer wrote the crashing input, if it crashed.
    pub artifact: Option<String>,
    /// The panic message, if a panic made it crash.
    pub panic: Option<String>,
}

/// The number that follows `key` in `line` (`cov: 1234 ft: ...`).
fn number_after(line: &str, key: &str) -> Option<u64> {
    let (_, rest) = line.split_once(key)?;
    let digits: String = rest
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

impl Report {
    /// Reads libFuzzer's output (its standard error, with `-print_final_stats=1`).
    pub fn parse(log: &str) -> Self {
        let mut report = Report::default();
        let mut lines = log.lines();
        while let Some(line) = lines.next() {
            if let Some(n) = number_after(line, "stat::number_of_executed_units:") {
                report.execs = Some(n);
            } else if line.starts_with('#') && line.contains("cov: ") {
                report.coverage = number_after(line, "cov: ").or(report.coverage);
                report.corpus = number_after(line, "corp: ").or(report.corpus);
            } else if let Some((_, path)) = line.split_once("Test unit written to ") {
                report.artifact = Some(path.trim().to_owned());
            } else if line.contains(" panicked at ") && report.panic.is_none() {
                let mut message = line.trim().to_owned();
                if let Some(next) = lines.next() {
                    message.push_str(": ");
                    message.push_str(next.trim());
                }
                report.panic = Some(message);
            }
        }
        report
    }
}

fn present(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Checks for the nightly toolchain and cargo-fuzz (installing cargo-fuzz when missing).
fn ensure_tools(
    nightly: impl FnOnce() -> bool,
    cargo_fuzz: impl FnOnce() -> bool,
    install: impl FnOnce() -> Result<(), String>,
) -> Result<(), String> {
    if !nightly() {
        return Err(
            "the nightly toolchain is needed (cargo-fuzz builds with -Zsanitizer) and `cargo +nightly --version` failed: \
             install it with `rustup toolchain install nightly`, then run `cargo xtask fuzz` again; nothing was run."
                .to_owned(),
        );
    }
    if cargo_fuzz() {
        return Ok(());
    }
    eprintln!("==> cargo-fuzz is missing: installing it");
    install().map_err(|e| {
        format!(
            "cargo-fuzz is needed and could not be installed ({e}). Install it where crates.io can be reached \
             (`cargo install --locked cargo-fuzz`) or put a cargo-fuzz binary on PATH, then run `cargo xtask fuzz` again; nothing was run."
        )
    })
}

/// The repository's root (xtask's parent directory).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The `cargo` arguments shared by `fuzz build` and `fuzz run` of one fuzz package.
fn common_args(fuzz_dir: &str, target_dir: &Path) -> Vec<String> {
    vec![
        "--fuzz-dir".to_owned(),
        fuzz_dir.to_owned(),
        "--target-dir".to_owned(),
        target_dir.display().to_string(),
        // Faster builds; the runs are short.
        "--codegen-units".to_owned(),
        "16".to_owned(),
    ]
}

/// The `cargo` arguments that run `target` for `seconds`.
pub fn run_args(target: &str, seconds: u64, target_dir: &Path) -> Vec<String> {
    let mut args = vec!["+nightly".to_owned(), "fuzz".to_owned(), "run".to_owned()];
    args.extend(common_args(fuzz_dir(target), target_dir));
    args.extend([
        target.to_owned(),
        target_dir.join("corpus").join(target).display().to_string(),
        seeds(target),
        "--".to_owned(),
        format!("-max_total_time={seconds}"),
        "-timeout=10".to_owned(),
        "-print_final_stats=1".to_owned(),
    ]);
    args
}

fn show(n: Option<u64>) -> String {
    n.map_or_else(|| "?".to_owned(), |n| n.to_string())
}

/// Builds the targets, runs each for `args.seconds` and reports.
pub fn fuzz(args: &Args) -> Result<(), String> {
    ensure_tools(
        || present("cargo", &["+nightly", "--version"]),
        || present("cargo", &["fuzz", "--version"]),
        || run(None, "cargo", &["install", "--locked", "cargo-fuzz"], &[]),
    )?;
    let root = root();
    std::env::set_current_dir(&root).map_err(|e| format!("{}: {e}", root.display()))?;
    let target_dir = PathBuf::from("target/fuzz");
    // Each fuzz package the targets come from is built once.
    let mut dirs: Vec<&str> = args.targets.iter().map(|t| fuzz_dir(t)).collect();
    dirs.sort_unstable();
    dirs.dedup();
    for dir in dirs {
        let mut build = vec!["+nightly".to_owned(), "fuzz".to_owned(), "build".to_owned()];
        build.extend(common_args(dir, &target_dir));
        let build: Vec<&str> = build.iter().map(String::as_str).collect();
        run(None, "cargo", &build, &[])?;
    }

    let logs = target_dir.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let mut lines = Vec::new();
    let mut crashed = Vec::new();
    for target in &args.targets {
        let corpus = target_dir.join("corpus").join(target);
        std::fs::create_dir_all(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
        let log_path = logs.join(format!("{target}.log"));
        let log =
            std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
        let cargo_args = run_args(target, args.seconds, &target_dir);
        eprintln!(
            "==> {target}: {} s (cargo {}; log: {})",
            args.seconds,
            cargo_args.join(" "),
            log_path.display()
        );
        let started = Instant::now();
        let status = Command::new("cargo")
            .args(&cargo_args)
            .stdout(Stdio::null())
            .stderr(log)
            .status()
            .map_err(|e| format!("cannot run cargo fuzz: {e}"))?;
        let elapsed = started.elapsed().as_secs();
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        let report = Report::parse(&text);
        let result = if status.success() {
            "ok".to_owned()
        } else {
            crashed.push(target.clone());
            let mut what = format!("CRASH ({status})");
            if let Some(p) = &report.panic {
                what.push_str(&format!("; {p}"));
            }
            if let Some(a) = &report.artifact {
                what.push_str(&format!("; input: {a}"));
            }
            what
        };
        let line = format!(
            "{target:<22} {elapsed:>5} s {:>12} execs  cov {:>6}  corpus {:>6}  {result}",
            show(report.execs),
            show(report.coverage),
            show(report.corpus),
        );
        eprintln!("{line}");
        lines.push(line);
    }
    println!("\nfuzz results ({} s per target):", args.seconds);
    for line in &lines {
        println!("{line}");
    }
    if crashed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} found a crash: see {}/<target>.log, and reproduce with \
             `cargo +nightly fuzz run --fuzz-dir <fuzz dir> <target> <input>`",
            crashed.join(", "),
            logs.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn fuzz_should_run_every_target_for_30_seconds_by_default() {
        let parsed = Args::parse(&[]).unwrap();
        assert_eq!(parsed.seconds, 30);
        assert_eq!(parsed.targets, TARGETS);
    }

    #[test]
    fn fuzz_should_take_seconds_and_targets_and_refuse_the_rest() {
        let parsed = Args::parse(&args("--seconds 5 json_patch apply_body json_patch")).unwrap();
        assert_eq!(
            parsed,
            Args {
                seconds: 5,
                targets: vec!["json_patch".into(), "apply_body".into()],
            }
        );
        let unknown = Args::parse(&args("json_patches")).unwrap_err();
        assert!(
            unknown.contains("unknown fuzz target \"json_patches\""),
            "{unknown}"
        );
        for bad in ["--seconds", "--seconds 0", "--seconds ten"] {
            let err = Args::parse(&args(bad)).unwrap_err();
            assert!(err.contains("--seconds"), "{bad}: {err}");
        }
        let flag = Args::parse(&args("--runs 3")).unwrap_err();
        assert!(flag.contains("unknown option \"--runs\""), "{flag}");
    }

    #[test]
    fn the_targets_should_be_those_of_the_fuzz_packages_each_with_seeds() {
        let root = root();
        let mut declared = Vec::new();
        for dir in [FUZZ_DIR, PROTOBUF_FUZZ_DIR] {
            let manifest = std::fs::read_to_string(root.join(dir).join("Cargo.toml")).unwrap();
            declared.extend(
                manifest
                    .lines()
                    .filter_map(|l| l.strip_prefix("name = \""))
                    .filter_map(|l| l.strip_suffix('"'))
                    .filter(|name| !name.ends_with("-fuzz"))
                    .map(str::to_owned),
            );
        }
        assert_eq!(declared, TARGETS);
        for target in TARGETS {
            let seeds = root.join(seeds(target));
            let count = std::fs::read_dir(&seeds).map_or(0, Iterator::count);
            assert!(count > 0, "{} has no seed", seeds.display());
            assert!(
                root.join(fuzz_dir(target))
                    .join(format!("fuzz_targets/{target}.rs"))
                    .is_file()
            );
        }
    }

    #[test]
    fn a_run_should_be_given_its_time_seeds_and_corpus() {
        let args = run_args("json_patch", 60, Path::new("target/fuzz"));
        let line = args.join(" ");
        assert!(line.starts_with("+nightly fuzz run --fuzz-dir crates/testenv/fuzz"));
        assert!(
            line.contains(
                "json_patch target/fuzz/corpus/json_patch crates/testenv/fuzz/seeds/json_patch -- -max_total_time=60 "
            ),
            "{line}"
        );
        let line = run_args("protobuf_decoder", 60, Path::new("target/fuzz")).join(" ");
        assert!(line.starts_with("+nightly fuzz run --fuzz-dir crates/protobuf/fuzz"));
        assert!(
            line.contains(
                "protobuf_decoder target/fuzz/corpus/protobuf_decoder crates/protobuf/tests/data/wire -- "
            ),
            "{line}"
        );
    }

    #[test]
    fn a_report_should_read_executions_coverage_and_corpus_from_libfuzzer() {
        // The end of a 60 s run of apply_body.
        let log = "#4848\tDONE   cov: 2786 ft: 8489 corp: 299/47Kb lim: 341 exec/s: 79 rss: 196Mb\n\
                   Done 4848 runs in 61 second(s)\n\
                   stat::number_of_executed_units: 4848\n";
        assert_eq!(
            Report::parse(log),
            Report {
                execs: Some(4848),
                coverage: Some(2786),
                corpus: Some(299),
                artifact: None,
                panic: None,
            }
        );
    }

    #[test]
    fn missing_tools_should_fail_at_once_with_what_to_do() {
        let err = ensure_tools(|| false, || true, || Ok(())).unwrap_err();
        assert!(err.contains("rustup toolchain install nightly"), "{err}");
        let err = ensure_tools(
            || true,
            || false,
            || Err("`cargo install` failed (exit status: 101)".into()),
        )
        .unwrap_err();
        assert!(err.contains("cargo install --locked cargo-fuzz"), "{err}");
        assert!(err.contains("exit status: 101"), "{err}");
        let mut installed = false;
        ensure_tools(
            || true,
            || true,
            || {
                installed = true;
                Ok(())
            },
        )
        .unwrap();
        assert!(!installed, "a present cargo-fuzz is not reinstalled");
    }
}
