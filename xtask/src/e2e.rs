//! `cargo xtask e2e --kubeconfig PATH`: the networked tests of kcr-reflector, kcr-informer,
//! kcr-controller-manager and the examples against the real cluster of a kubeconfig.

use std::path::Path;

pub const USAGE: &str = "\
usage: cargo xtask e2e --kubeconfig PATH [-- TEST ARGS]

Runs the networked tests of kcr-reflector, kcr-informer, kcr-controller-manager
(leader election included) and the examples against the cluster (current
context) of PATH: `KCR_TEST_KUBECONFIG=PATH cargo test --no-fail-fast` of
those crates (a failing test binary does not hide the results of the others).
Each test works in a namespace of its own (kcr-e2e-<test>-<unique>), deleted
when it ends. Tests that need kcr-testenv (fault injection, review rules), and
those that need a kubelet (Deployments becoming available) on a cluster without
a Ready Node, print `skipped on the real cluster ... needs ...`; durations asserted exactly under
kcr-testenv's paused clock are checked within a window. Arguments after `--` go
to the test binaries (e.g. `-- --nocapture`). Takes several minutes: the tests
wait out real lease durations, timeouts and the event spam filter's refill.";

/// The crates whose tests make up the e2e suite.
pub const CRATES: [&str; 4] = [
    "kcr-reflector",
    "kcr-informer",
    "kcr-controller-manager",
    "kcr-examples",
];

/// The integration-test folders of [`CRATES`] (relative to the workspace root).
#[cfg(test)]
pub const TEST_DIRS: [&str; 4] = [
    "crates/reflector/tests",
    "crates/informer/tests",
    "crates/controller-manager/tests",
    "examples/tests",
];

/// What `cargo xtask e2e` was asked.
#[derive(Debug, PartialEq)]
pub struct Args {
    /// The kubeconfig of the cluster.
    pub kubeconfig: String,
    /// Arguments for the test binaries.
    pub test_args: Vec<String>,
}

impl Args {
    /// Parses the arguments after `e2e`.
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let mut kubeconfig = None;
        let mut test_args = Vec::new();
        let mut rest = args.iter();
        while let Some(arg) = rest.next() {
            match arg.as_str() {
                "--kubeconfig" => {
                    let path = rest
                        .next()
                        .ok_or_else(|| format!("--kubeconfig needs a path\n{USAGE}"))?;
                    kubeconfig = Some(path.clone());
                }
                "--" => {
                    test_args.extend(rest.by_ref().cloned());
                }
                other => return Err(format!("unknown option {other:?}\n{USAGE}")),
            }
        }
        let kubeconfig = kubeconfig.ok_or_else(|| format!("--kubeconfig is required\n{USAGE}"))?;
        Ok(Self {
            kubeconfig,
            test_args,
        })
    }

    /// The `cargo` arguments of the run.
    pub fn cargo_args(&self) -> Vec<String> {
        let mut args = vec!["test".to_owned(), "--no-fail-fast".to_owned()];
        for krate in CRATES {
            args.extend(["-p".to_owned(), krate.to_owned()]);
        }
        if !self.test_args.is_empty() {
            args.push("--".to_owned());
            args.extend(self.test_args.iter().cloned());
        }
        args
    }
}

/// Runs the suite against the cluster of `args.kubeconfig`.
pub fn e2e(args: &Args) -> Result<(), String> {
    let path = Path::new(&args.kubeconfig);
    if !path.is_file() {
        return Err(format!("no kubeconfig at {}", path.display()));
    }
    let path = path
        .canonicalize()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let path = path.to_string_lossy();
    let cargo_args = args.cargo_args();
    let cargo_args: Vec<&str> = cargo_args.iter().map(String::as_str).collect();
    crate::cmd::run(
        None,
        "cargo",
        &cargo_args,
        &[("KCR_TEST_KUBECONFIG", &path)],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn e2e_should_need_a_kubeconfig_and_pass_test_arguments_on() {
        let parsed = Args::parse(&args("--kubeconfig k.yaml -- --nocapture")).expect("args");
        assert_eq!(parsed.kubeconfig, "k.yaml");
        assert_eq!(
            parsed.cargo_args().join(" "),
            "test --no-fail-fast -p kcr-reflector -p kcr-informer -p kcr-controller-manager -p kcr-examples -- --nocapture"
        );
        assert!(
            Args::parse(&[])
                .unwrap_err()
                .contains("--kubeconfig is required")
        );
        assert!(
            Args::parse(&args("--kubeconfig"))
                .unwrap_err()
                .contains("needs a path")
        );
        assert!(
            Args::parse(&args("--fast"))
                .unwrap_err()
                .contains("unknown option \"--fast\"")
        );
    }
}
