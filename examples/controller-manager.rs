//! The Foo controller of kubernetes/sample-controller run by kcr's
//! `Manager`: leader election, `/metrics`, `/healthz`, `/readyz`, graceful
//! shutdown on SIGINT/SIGTERM, `tracing` logs.
//!
//! ```text
//! cargo run --example controller-manager                      # no cluster needed
//! cargo run --example controller-manager -- --apiserver http://127.0.0.1:6443
//! cargo run --example controller-manager -- --kubeconfig ~/.kube/config
//! ```
//!
//! - With `--apiserver URL` it connects to a running `kcr-apiserver`; with
//!   `--kubeconfig PATH`, `KUBECONFIG`, `~/.kube/config` or in a pod, to
//!   that cluster (apply the CRD first: `--print-crd | kubectl apply -f -`,
//!   or pass `--install-crd`). With none of them it starts kcr-testenv in
//!   this process.
//! - On a test server (in-process or `kcr-apiserver`) it installs the Foo
//!   CRD, creates three Foos, and runs a stand-in for the Deployment
//!   controller that reports a Deployment's replicas available after
//!   `--status-delay-ms`, so that the Foos converge.
//! - Replicas started against the same server elect one leader (the Lease
//!   `kcr-sample-controller` in `default`); only the leader reconciles.
//!   On SIGINT/SIGTERM the leader releases the lease at once.
//!
//! Flags: `--identity ID`, `--no-leader-elect`, `--lease-duration-ms`,
//! `--renew-deadline-ms`, `--retry-period-ms`, `--metrics-bind-address`
//! (default `127.0.0.1:0`, a free port; `0` turns it off),
//! `--health-probe-bind-address` (same), `--workers N`, `--reconcile-log
//! PATH` (append each reconcile's start and end), `--no-demo`,
//! `--status-delay-ms N`, `--token T`, `--print-crd`, `--install-crd`.

// `foo` names sample-controller's Foo resource here, not a placeholder.
#![allow(clippy::disallowed_names)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use kcr_controller_manager::{Manager, Options, healthz};
use kcr_examples::cluster::{self, Connect, Target};
use kcr_examples::foo::Foo;
use kcr_examples::{demo, deployment_status, sample_controller};

const USAGE: &str = "usage: controller-manager [--apiserver URL [--token T] | --kubeconfig PATH] \
[--identity ID] [--no-leader-elect] [--lease-duration-ms N] [--renew-deadline-ms N] [--retry-period-ms N] \
[--metrics-bind-address ADDR] [--health-probe-bind-address ADDR] [--workers N] [--reconcile-log PATH] \
[--no-demo] [--status-delay-ms N] [--install-crd] [--print-crd]";

/// The lease the replicas compete for.
const LEASE_NAME: &str = "kcr-sample-controller";

struct Args {
    connect: Connect,
    identity: Option<String>,
    leader_elect: bool,
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
    metrics: String,
    probes: String,
    workers: usize,
    reconcile_log: Option<PathBuf>,
    demo: bool,
    status_delay: Duration,
    install_crd: bool,
    print_crd: bool,
}

fn value<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
    let v = v.ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
    v.parse()
        .map_err(|_| format!("invalid value for {flag}: {v:?}\n{USAGE}"))
}

fn millis(flag: &str, v: Option<String>) -> Result<Duration, String> {
    value::<u64>(flag, v).map(Duration::from_millis)
}

impl Args {
    fn parse() -> Result<Self, String> {
        let mut a = Args {
            connect: Connect::default(),
            identity: None,
            leader_elect: true,
            lease_duration: Duration::from_secs(15),
            renew_deadline: Duration::from_secs(10),
            retry_period: Duration::from_secs(2),
            metrics: "127.0.0.1:0".into(),
            probes: "127.0.0.1:0".into(),
            workers: 2,
            reconcile_log: None,
            demo: true,
            status_delay: Duration::from_secs(1),
            install_crd: false,
            print_crd: false,
        };
        let mut args = std::env::args().skip(1);
        while let Some(flag) = args.next() {
            match flag.as_str() {
                "--apiserver" => a.connect.apiserver = Some(value(&flag, args.next())?),
                "--token" => a.connect.token = Some(value(&flag, args.next())?),
                "--kubeconfig" => a.connect.kubeconfig = Some(value(&flag, args.next())?),
                "--identity" => a.identity = Some(value(&flag, args.next())?),
                "--no-leader-elect" => a.leader_elect = false,
                "--lease-duration-ms" => a.lease_duration = millis(&flag, args.next())?,
                "--renew-deadline-ms" => a.renew_deadline = millis(&flag, args.next())?,
                "--retry-period-ms" => a.retry_period = millis(&flag, args.next())?,
                "--metrics-bind-address" => a.metrics = value(&flag, args.next())?,
                "--health-probe-bind-address" => a.probes = value(&flag, args.next())?,
                "--workers" => a.workers = value(&flag, args.next())?,
                "--reconcile-log" => a.reconcile_log = Some(value(&flag, args.next())?),
                "--no-demo" => a.demo = false,
                "--status-delay-ms" => a.status_delay = millis(&flag, args.next())?,
                "--install-crd" => a.install_crd = true,
                "--print-crd" => a.print_crd = true,
                "-h" | "--help" => return Err(USAGE.to_owned()),
                other => return Err(format!("unknown argument {other:?}\n{USAGE}")),
            }
        }
        Ok(a)
    }
}

async fn run(args: Args) -> Result<(), Box<dyn std::error::Error>> {
    let target = cluster::connect(&args.connect).await?;
    let client = target.client();
    match &target {
        Target::InProcess(env) => {
            println!(
                "no kubeconfig found: started kcr-testenv in this process at {}",
                env.base_url()
            );
            println!(
                "  kubectl --kubeconfig {} get foos,deployments,leases",
                env.kubeconfig_path().display()
            );
        }
        Target::ApiServer(_) => {
            println!("connected to kcr-apiserver {}", client.default_namespace())
        }
        Target::Cluster(_) => println!("connected to the cluster of the kubeconfig"),
    }
    if target.is_test_server() {
        if args.demo {
            cluster::install_demo(&client).await?;
        } else {
            cluster::install_foo_crd(&client).await?;
        }
    } else if args.install_crd {
        cluster::install_foo_crd(&client).await?;
    }

    let mut options = Options::default()
        .metrics_bind_address(args.metrics.as_str())
        .health_probe_bind_address(args.probes.as_str())
        .graceful_shutdown_timeout(Some(Duration::from_secs(10)));
    if args.leader_elect {
        options = options
            .leader_election(LEASE_NAME)
            .leader_election_release_on_cancel(true)
            .lease_duration(args.lease_duration)
            .renew_deadline(args.renew_deadline)
            .retry_period(args.retry_period);
    }
    if let Some(identity) = &args.identity {
        options = options.leader_election_identity(identity.as_str());
    }
    let manager = Manager::new(client.clone(), options)?;
    manager.add_healthz_check("ping", healthz::ping);
    manager.add_readyz_check("ping", healthz::ping);
    let mut settings = sample_controller::Settings::default().workers(args.workers);
    if let Some(path) = &args.reconcile_log {
        settings = settings.reconcile_log(path);
    }
    sample_controller::add_to_manager(&manager, settings).await?;
    if target.is_test_server() {
        deployment_status::add_to_manager(&manager, args.status_delay)?;
    }

    let announce = tokio::spawn({
        let manager = manager.clone();
        let leader_elect = args.leader_elect;
        async move {
            let identity = manager.identity().to_owned();
            println!("identity: {identity}");
            match manager.metrics_addr().await {
                Some(addr) => println!("metrics: http://{addr}/metrics"),
                None => println!("metrics: off"),
            }
            match manager.health_probe_addr().await {
                Some(addr) => println!("probes: http://{addr}/healthz http://{addr}/readyz"),
                None => println!("probes: off"),
            }
            if leader_elect {
                println!("waiting to lead (lease default/{LEASE_NAME})");
            }
            manager.elected().await;
            println!("leading: {identity}");
        }
    });
    let progress = (target.is_test_server() && args.demo).then(|| {
        tokio::spawn(demo::print_convergence(
            client.clone(),
            Duration::from_millis(500),
        ))
    });

    let result = manager.start(demo::shutdown_signal()).await;
    announce.abort();
    if let Some(progress) = progress {
        progress.abort();
    }
    if let Target::InProcess(env) = target {
        env.shutdown().await;
    }
    result?;
    println!("stopped");
    Ok(())
}

fn main() -> ExitCode {
    let args = match Args::parse() {
        Ok(args) => args,
        Err(msg) => {
            eprintln!("{msg}");
            return ExitCode::from(2);
        }
    };
    if args.print_crd {
        return match Foo::crd_json() {
            Ok(crd) => {
                println!("{crd}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("controller-manager: {e}");
                ExitCode::FAILURE
            }
        };
    }
    demo::init_tracing();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("controller-manager: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("controller-manager: {e}");
            ExitCode::FAILURE
        }
    }
}
