//! `cargo xtask bench`: runs criterion benchmarks and prints one table of
//! medians, followed by the tables that benches outside criterion write to
//! the target directory when they ran ([`EXTRA_TABLES`]: kcr-workqueue's
//! `add_after` lateness, kcr-cache's bytes per object, kcr-informer's
//! `initial_sync` and metadata-only caches), also written to `target/kcr-bench.md`.

use crate::cmd::run;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// `cargo xtask bench --help`.
pub const USAGE: &str = "\
usage: cargo xtask bench [-p CRATE]... [FILTER] [-- CRITERION ARGS...]

Runs the criterion benchmarks of every crate (or of each -p CRATE), then prints
one table of medians and the tables some benches write themselves (add_after
lateness, bytes per cached object, initial sync), all also written to
target/kcr-bench.md.

  -p, --package CRATE   only this crate's benchmarks (repeatable)
  FILTER                only benchmarks whose id contains FILTER
  -- ARGS               passed to criterion, e.g. -- --warm-up-time 1 --measurement-time 2

Any other option is refused. On a shared machine pass a FILTER and short times.";

/// What `cargo xtask bench` was asked to run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Args {
    /// `-p` crates; empty: the whole workspace.
    pub packages: Vec<String>,
    /// Criterion's benchmark filter.
    pub filter: Option<String>,
    /// Arguments after `--`, for criterion.
    pub criterion: Vec<String>,
}

impl Args {
    /// Parses the arguments after `bench`, refusing unknown options.
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let mut parsed = Args::default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            match arg.as_str() {
                "--" => {
                    parsed.criterion = it.by_ref().cloned().collect();
                }
                "-p" | "--package" => {
                    let name = it
                        .next()
                        .ok_or_else(|| format!("{arg} needs a crate name\n{USAGE}"))?;
                    parsed.packages.push(name.clone());
                }
                flag if flag.starts_with('-') => {
                    return Err(format!("unknown option {flag:?}\n{USAGE}"));
                }
                filter if parsed.filter.is_none() => parsed.filter = Some(filter.to_owned()),
                extra => return Err(format!("unexpected argument {extra:?}\n{USAGE}")),
            }
        }
        Ok(parsed)
    }

    /// The `cargo` command line.
    pub fn cargo_args(&self) -> Vec<String> {
        let mut out = vec!["bench".to_owned()];
        if self.packages.is_empty() {
            out.push("--workspace".to_owned());
        }
        for p in &self.packages {
            out.extend(["-p".to_owned(), p.clone()]);
        }
        if self.filter.is_some() || !self.criterion.is_empty() {
            out.push("--".to_owned());
            out.extend(self.filter.iter().cloned());
            out.extend(self.criterion.iter().cloned());
        }
        out
    }
}

/// The tables benches write to the target directory themselves (medians of
/// runs they interleave, or figures that are not times), in print order.
pub const EXTRA_TABLES: [&str; 4] = [
    "kcr-add-after.md",
    "kcr-cache-bytes.md",
    "kcr-initial-sync.md",
    "kcr-metadata.md",
];

/// Runs the benchmarks and summarises them.
pub fn bench(args: &Args) -> Result<(), String> {
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| PathBuf::from("target"), PathBuf::from);
    // Only the tables of the benches that run now.
    for name in EXTRA_TABLES {
        let _ = std::fs::remove_file(target.join(name));
    }
    let cargo_args = args.cargo_args();
    let cargo_args: Vec<&str> = cargo_args.iter().map(String::as_str).collect();
    run(None, "cargo", &cargo_args, &[])?;
    let mut rows = Vec::new();
    collect(&target.join("criterion"), &mut rows);
    if let Some(filter) = &args.filter {
        rows.retain(|r| r.id.contains(filter.as_str()));
    }
    let extra_tables: Vec<String> = EXTRA_TABLES
        .iter()
        .filter_map(|name| std::fs::read_to_string(target.join(name)).ok())
        .collect();
    if rows.is_empty() && extra_tables.is_empty() {
        return Err(format!(
            "no criterion results under {}: no benchmark matched",
            target.join("criterion").display()
        ));
    }
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    let mut table = render(&rows);
    for extra in extra_tables {
        table.push('\n');
        table.push_str(&extra);
    }
    print!("{table}");
    let out = target.join("kcr-bench.md");
    std::fs::write(&out, &table).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    eprintln!("written to {}", out.display());
    Ok(())
}

/// One benchmark's summary: id, median time per iteration in ns, and the
/// elements or bytes per iteration when the benchmark declares a throughput.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
pub struct Row {
    pub id: String,
    pub median_ns: f64,
    pub throughput: Option<(String, f64)>,
}

fn collect(dir: &Path, rows: &mut Vec<Row>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.file_name().is_some_and(|n| n == "new") {
            if let Some(row) = read_row(&path) {
                rows.push(row);
            }
        } else if path.is_dir() && path.file_name().is_some_and(|n| n != "report") {
            collect(&path, rows);
        }
    }
}

fn read_row(new_dir: &Path) -> Option<Row> {
    let estimates: Value =
        serde_json::from_str(&std::fs::read_to_string(new_dir.join("estimates.json")).ok()?)
            .ok()?;
    let benchmark: Value =
        serde_json::from_str(&std::fs::read_to_string(new_dir.join("benchmark.json")).ok()?)
            .ok()?;
    parse_row(&estimates, &benchmark)
}

/// Builds a row from criterion's `estimates.json` and `benchmark.json`.
pub fn parse_row(estimates: &Value, benchmark: &Value) -> Option<Row> {
    let id = benchmark["full_id"].as_str()?.to_string();
    let median_ns = estimates["median"]["point_estimate"].as_f64()?;
    let throughput = benchmark["throughput"].as_object().and_then(|t| {
        let (unit, n) = t.iter().next()?;
        Some((unit.clone(), n.as_f64()?))
    });
    Some(Row {
        id,
        median_ns,
        throughput,
    })
}

/// Renders rows as a Markdown table.
pub fn render(rows: &[Row]) -> String {
    let mut s =
        String::from("| benchmark | median | throughput (median) |\n| --- | ---: | ---: |\n");
    for r in rows {
        let rate = r.throughput.as_ref().map_or(String::new(), |(unit, n)| {
            let per_sec = n / (r.median_ns / 1e9);
            format!("{} {}/s", human(per_sec), unit.to_lowercase())
        });
        s.push_str(&format!(
            "| {} | {} | {} |\n",
            r.id,
            duration(r.median_ns),
            rate
        ));
    }
    s
}

fn duration(ns: f64) -> String {
    match ns {
        n if n < 1e3 => format!("{n:.1} ns"),
        n if n < 1e6 => format!("{:.2} µs", n / 1e3),
        n if n < 1e9 => format!("{:.2} ms", n / 1e6),
        n => format!("{:.3} s", n / 1e9),
    }
}

fn human(x: f64) -> String {
    match x {
        x if x >= 1e9 => format!("{:.2} G", x / 1e9),
        x if x >= 1e6 => format!("{:.2} M", x / 1e6),
        x if x >= 1e3 => format!("{:.2} K", x / 1e3),
        x => format!("{x:.1}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_row_takes_the_median_and_the_declared_throughput() {
        let est =
            json!({"median": {"point_estimate": 2_000_000.0}, "mean": {"point_estimate": 9.0}});
        let bench = json!({"full_id": "queue/add_get_done", "throughput": {"Elements": 10000}});
        let row = parse_row(&est, &bench).unwrap();
        assert_eq!(row.id, "queue/add_get_done");
        assert_eq!(row.median_ns, 2_000_000.0);
        let table = render(&[row]);
        assert!(
            table.contains("| queue/add_get_done | 2.00 ms | 5.00 M elements/s |"),
            "{table}"
        );
    }

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn bench_arguments_should_reach_cargo_and_criterion_in_their_places() {
        let parsed = Args::parse(&args("-p kcr-workqueue queue -- --measurement-time 2")).unwrap();
        assert_eq!(
            parsed.cargo_args(),
            args("bench -p kcr-workqueue -- queue --measurement-time 2")
        );
        assert_eq!(
            Args::parse(&[]).unwrap().cargo_args(),
            args("bench --workspace")
        );
    }

    #[test]
    fn bench_should_refuse_unknown_options_and_a_second_filter() {
        let err = Args::parse(&args("--measurement-time 2")).unwrap_err();
        assert!(
            err.starts_with("unknown option \"--measurement-time\""),
            "{err}"
        );
        let err = Args::parse(&args("queue cache")).unwrap_err();
        assert!(err.starts_with("unexpected argument \"cache\""), "{err}");
        let err = Args::parse(&args("-p")).unwrap_err();
        assert!(err.starts_with("-p needs a crate name"), "{err}");
    }

    #[test]
    fn a_row_without_throughput_shows_only_the_time() {
        let est = json!({"median": {"point_estimate": 512.0}});
        let bench = json!({"full_id": "x", "throughput": null});
        let table = render(&[parse_row(&est, &bench).unwrap()]);
        assert!(table.contains("| x | 512.0 ns |  |"), "{table}");
    }
}
