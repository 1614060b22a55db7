//! `kcr-apiserver`: the kcr-testenv API server as a standalone process.
//!
//! ```text
//! kcr-apiserver [--port N] [--host ADDR] [--kubeconfig-out PATH] [--token T]
//!               [--history-size N] [--bookmark-interval-ms N] [--body-limit BYTES] [--tls]
//!               [--rbac] [--realistic] [--namespace-controller=BOOL]
//!               [--feature-gates=NAME=BOOL,...] [--enable-admission-plugins=NAME,...]
//!               [--disable-admission-plugins=NAME,...]
//! ```
//!
//! `--rbac` authorizes every request with RBAC from the stored roles and bindings (the admin
//! token stays all-powerful).
//!
//! `--tls` serves HTTPS with a freshly generated CA and serving certificate; the kubeconfig
//! carries the CA (`certificate-authority-data`), so kubectl works with `--token` too.
//! `--token` without `--tls` prints a warning: kubectl sends no bearer token over plain HTTP.
//! `--realistic` runs the optional controllers of kube-controller-manager too (a `default`
//! ServiceAccount and the `kube-root-ca.crt` ConfigMap in every namespace, the garbage
//! collector, the resource quota and storage protection controllers, the Deployment, ReplicaSet,
//! StatefulSet and Job controllers, the clusterrole-aggregation controller).
//! `--namespace-controller=false` keeps a deleted namespace `Terminating` for ever (until its
//! finalizers are removed through `PUT .../finalize`), as a kube-apiserver without
//! kube-controller-manager does; it is on by default.
//! `--feature-gates` sets feature gates as kube-apiserver's flag does; the one kcr-testenv knows
//! is `ShardedListAndWatch` (default false: `shardSelector` is ignored), any other is refused.
//! `--disable-admission-plugins` switches admission plugins off by kube-apiserver's names
//! (`LimitRanger,ResourceQuota`); `--enable-admission-plugins` switches them on again (all that
//! kcr-testenv runs are on by default). A name kube-apiserver does not know is refused.
//! `--help` prints the usage and exits 0.
//!
//! Prints `listening on http://127.0.0.1:N` (or `https://`) and the kubeconfig path on stdout,
//! then serves
//! until interrupted (Ctrl-C or SIGTERM). The fault-injection admin endpoint is on.

use std::net::Ipv4Addr;
use std::process::ExitCode;
use std::time::Duration;

use kcr_testenv::TestEnv;

const USAGE: &str = "usage: kcr-apiserver [--port N] [--host ADDR] [--kubeconfig-out PATH] [--token T] [--history-size N] [--bookmark-interval-ms N] [--body-limit BYTES] [--tls] [--rbac] [--realistic] [--namespace-controller=BOOL] [--feature-gates=NAME=BOOL,...] [--enable-admission-plugins=NAME,...] [--disable-admission-plugins=NAME,...]";

fn parse<T: std::str::FromStr>(flag: &str, value: Option<String>) -> Result<T, String> {
    let v = value.ok_or_else(|| format!("{flag} needs a value"))?;
    v.parse()
        .map_err(|_| format!("invalid value for {flag}: {v:?}"))
}

/// What the command line asks for.
enum Command {
    /// Serve, with this configuration; `token_without_tls` warns that kubectl will not send the
    /// token over plain HTTP.
    Serve {
        builder: Box<kcr_testenv::TestEnvBuilder>,
        token_without_tls: bool,
    },
    /// Print the usage and exit 0.
    Help,
}

/// Applies `--feature-gates` (`Name=bool` pairs separated by commas, as kube-apiserver's flag).
fn feature_gates(
    mut b: kcr_testenv::TestEnvBuilder,
    value: &str,
) -> Result<kcr_testenv::TestEnvBuilder, String> {
    for pair in value.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (name, enabled) = pair
            .split_once('=')
            .ok_or_else(|| format!("missing bool value for {pair}"))?;
        let enabled: bool = enabled.trim().parse().map_err(|_| {
            format!("invalid value of {name}={enabled}, err: {enabled:?} is not a bool")
        })?;
        b = match name.trim() {
            "ShardedListAndWatch" => b.sharded_list_and_watch(enabled),
            other => return Err(format!("unrecognized feature gate: {other}")),
        };
    }
    Ok(b)
}

/// Applies `--enable-admission-plugins` / `--disable-admission-plugins` (names separated by
/// commas).
fn admission_plugins(
    mut b: kcr_testenv::TestEnvBuilder,
    value: &str,
    enabled: bool,
) -> kcr_testenv::TestEnvBuilder {
    for name in value.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        b = b.admission_plugin(name, enabled);
    }
    b
}

fn command_from_args() -> Result<Command, String> {
    let mut b = TestEnv::builder().admin_endpoint(true);
    let (mut token, mut tls) = (false, false);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if let Some(value) = flag.strip_prefix("--feature-gates=") {
            b = feature_gates(b, value)?;
            continue;
        }
        if let Some(value) = flag.strip_prefix("--enable-admission-plugins=") {
            b = admission_plugins(b, value, true);
            continue;
        }
        if let Some(value) = flag.strip_prefix("--disable-admission-plugins=") {
            b = admission_plugins(b, value, false);
            continue;
        }
        if let Some(value) = flag.strip_prefix("--namespace-controller=") {
            let enabled: bool = value
                .parse()
                .map_err(|_| format!("invalid value for --namespace-controller: {value:?}"))?;
            b = b.finalize_namespaces(enabled);
            continue;
        }
        b = match flag.as_str() {
            "--feature-gates" => feature_gates(b, &parse::<String>(&flag, args.next())?)?,
            "--enable-admission-plugins" => {
                admission_plugins(b, &parse::<String>(&flag, args.next())?, true)
            }
            "--disable-admission-plugins" => {
                admission_plugins(b, &parse::<String>(&flag, args.next())?, false)
            }
            "--port" => b.port(parse(&flag, args.next())?),
            "--host" => b.host(parse::<Ipv4Addr>(&flag, args.next())?),
            "--kubeconfig-out" => b.kubeconfig_path(parse::<String>(&flag, args.next())?),
            "--token" => {
                token = true;
                b.token(parse::<String>(&flag, args.next())?)
            }
            "--history-size" => b.history_size(parse(&flag, args.next())?),
            "--bookmark-interval-ms" => {
                b.bookmark_interval(Duration::from_millis(parse(&flag, args.next())?))
            }
            "--body-limit" => b.body_limit(parse(&flag, args.next())?),
            "--tls" => {
                tls = true;
                b.tls(true)
            }
            "--rbac" => b.rbac(true),
            "--realistic" => b.realistic(),
            "-h" | "--help" => return Ok(Command::Help),
            other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
        };
    }
    Ok(Command::Serve {
        builder: Box::new(b),
        token_without_tls: token && !tls,
    })
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

fn main() -> ExitCode {
    let builder = match command_from_args() {
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Command::Serve {
            builder,
            token_without_tls,
        }) => {
            if token_without_tls {
                eprintln!(
                    "kcr-apiserver: warning: --token without --tls: kubectl will not send the token over plain HTTP (its requests are refused with 401); add --tls"
                );
            }
            *builder
        }
        Err(msg) => {
            eprintln!("{msg}");
            return ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("kcr-apiserver: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async {
        let env = match builder.start().await {
            Ok(env) => env,
            Err(e) => {
                eprintln!("kcr-apiserver: {e}");
                let mut source = std::error::Error::source(&e);
                while let Some(s) = source {
                    eprintln!("  caused by: {s}");
                    source = s.source();
                }
                return ExitCode::FAILURE;
            }
        };
        println!("listening on {}", env.base_url());
        println!("kubeconfig {}", env.kubeconfig_path().display());
        shutdown_signal().await;
        env.shutdown().await;
        ExitCode::SUCCESS
    })
}
