//! Runs the examples and `kcr-apiserver` as processes: builds them once
//! with the cargo running the tests, reads their stdout line by line, and
//! bounds every wait.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::Notify;

/// The executables the process tests run.
#[derive(Debug)]
pub struct Executables {
    /// kcr-testenv's `kcr-apiserver`.
    pub apiserver: PathBuf,
    /// The `controller-manager` example.
    pub controller_manager: PathBuf,
    /// The `sample-controller` example.
    pub sample_controller: PathBuf,
}

/// Builds `kcr-apiserver` and the examples (once per test binary) with the
/// same cargo and target directory as the tests, so only the example
/// targets themselves are compiled.
pub fn executables() -> &'static Executables {
    static BUILT: OnceLock<Executables> = OnceLock::new();
    BUILT.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut command = std::process::Command::new(cargo);
        // The variables cargo sets for this test process describe this
        // package; build scripts (ring's) track some of them, and seeing
        // them change would rebuild those crates on every run.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy();
            let per_package = ["CARGO_PKG_", "CARGO_MANIFEST_", "CARGO_CFG_", "CARGO_BIN_"]
                .iter()
                .any(|prefix| name.starts_with(prefix));
            let per_target = [
                "CARGO_CRATE_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
                "OUT_DIR",
            ]
            .contains(&name.as_ref());
            if per_package || per_target {
                command.env_remove(name.as_ref());
            }
        }
        let output = command
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "build",
                "-p",
                "kcr-testenv",
                "-p",
                "kcr-examples",
                "--bin",
                "kcr-apiserver",
                "--example",
                "controller-manager",
                "--example",
                "sample-controller",
                "--message-format=json",
            ])
            .stderr(Stdio::inherit())
            .output()
            .expect("run cargo build");
        assert!(output.status.success(), "cargo build failed");
        let mut found = std::collections::HashMap::new();
        for line in String::from_utf8_lossy(&output.stdout).lines() {
            let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            if let (Some(name), Some(exe)) =
                (msg["target"]["name"].as_str(), msg["executable"].as_str())
            {
                found.insert(name.to_owned(), PathBuf::from(exe));
            }
        }
        let mut take = |name: &str| {
            found
                .remove(name)
                .unwrap_or_else(|| panic!("cargo built no {name}"))
        };
        Executables {
            apiserver: take("kcr-apiserver"),
            controller_manager: take("controller-manager"),
            sample_controller: take("sample-controller"),
        }
    })
}

/// A child process whose stdout lines are collected; killed when dropped.
pub struct Process {
    pub name: String,
    pub child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    more: Arc<Notify>,
}

impl Process {
    /// Starts `exe` with `args`, with no kubeconfig in sight (`HOME` is a
    /// directory without `.kube`, `KUBECONFIG` unset).
    pub fn spawn(name: &str, exe: &PathBuf, args: &[&str], home: &std::path::Path) -> Process {
        let mut child = Command::new(exe)
            .args(args)
            .env("HOME", home)
            .env_remove("KUBECONFIG")
            .env_remove("KUBERNETES_SERVICE_HOST")
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("start {name}: {e}"));
        let lines = Arc::new(Mutex::new(Vec::new()));
        let more = Arc::new(Notify::new());
        if let Some(stdout) = child.stdout.take() {
            let (lines, more, name) = (lines.clone(), more.clone(), name.to_owned());
            tokio::spawn(async move {
                let mut reader = BufReader::new(stdout).lines();
                while let Ok(Some(line)) = reader.next_line().await {
                    println!("[{name}] {line}");
                    lines.lock().unwrap().push(line);
                    more.notify_waiters();
                }
                more.notify_waiters();
            });
        }
        if let Some(stderr) = child.stderr.take() {
            let name = name.to_owned();
            tokio::spawn(async move {
                let mut reader = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = reader.next_line().await {
                    eprintln!("[{name}] {line}");
                }
            });
        }
        Process {
            name: name.to_owned(),
            child,
            lines,
            more,
        }
    }

    /// The stdout lines so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    /// Whether a stdout line so far contains `needle`.
    pub fn printed(&self, needle: &str) -> bool {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains(needle))
    }

    /// Waits (at most `within`) for a stdout line containing `needle`, and
    /// returns it.
    pub async fn wait_for_line(&self, needle: &str, within: Duration) -> String {
        let found = tokio::time::timeout(within, async {
            loop {
                let notified = self.more.notified();
                if let Some(line) = self
                    .lines
                    .lock()
                    .unwrap()
                    .iter()
                    .find(|l| l.contains(needle))
                {
                    return line.clone();
                }
                // Re-check now and then in case the process exited.
                let _ = tokio::time::timeout(Duration::from_millis(200), notified).await;
            }
        })
        .await;
        match found {
            Ok(line) => line,
            Err(_) => panic!(
                "{}: no line with {needle:?} within {within:?}; got {:?}",
                self.name,
                self.lines()
            ),
        }
    }

    /// Sends SIGTERM and waits (at most `within`) for the exit; returns
    /// whether it exited successfully.
    pub async fn terminate(&mut self, within: Duration) -> bool {
        let pid = self.child.id().expect("running process").to_string();
        let sent = std::process::Command::new("kill")
            .args(["-TERM", &pid])
            .status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -TERM {pid}");
        match tokio::time::timeout(within, self.child.wait()).await {
            Ok(Ok(status)) => status.success(),
            _ => panic!("{} did not exit within {within:?} of SIGTERM", self.name),
        }
    }
}

/// A fresh temporary directory (no `.kube` inside).
pub fn temp_dir(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("kcr-examples-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}
