//! The examples as processes: `controller-manager` and `sample-controller`
//! with no cluster (kcr-testenv in-process), and two `controller-manager`
//! replicas against one `kcr-apiserver` electing a leader and failing over
//! when it is killed (issue 7's multi-process test).
//!
//! With `KCR_TEST_KUBECONFIG` set, the kubeconfig test runs the `controller-manager` example
//! against that cluster (its Foo in a namespace of the test's own); the others start their own
//! servers (in-process or `kcr-apiserver` processes) and run the same either way.

// `foo` names sample-controller's Foo resource here, not a placeholder.
#![allow(clippy::disallowed_names)]

mod support;

use std::collections::BTreeSet;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use kcr_examples::cluster;
use kcr_examples::foo::Foo;
use kube::Client;
use kube::api::Api;
use support::{Process, executables, temp_dir};

/// Bound for starting a process and for a demo to converge.
const STEP: Duration = Duration::from_secs(60);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_manager_example_should_converge_without_a_cluster_and_stop_on_sigterm() {
    let exe = &executables().controller_manager;
    let home = temp_dir("cm-home");
    let mut p = Process::spawn(
        "controller-manager",
        exe,
        &["--status-delay-ms", "100"],
        &home,
    );

    p.wait_for_line("no kubeconfig found: started kcr-testenv", STEP)
        .await;
    let metrics = p.wait_for_line("metrics: http://", STEP).await;
    let probes = p.wait_for_line("probes: http://", STEP).await;
    p.wait_for_line("leading: ", STEP).await;
    p.wait_for_line("converged: 3/3 Foos have their desired replicas", STEP)
        .await;

    // The printed addresses serve what they say.
    let metrics_url = metrics.trim_start_matches("metrics: ").to_owned();
    let body = http_get(&metrics_url).await;
    assert!(
        body.contains("controller_runtime_reconcile_total"),
        "no reconcile metrics in {body}"
    );
    assert!(
        body.contains("workqueue_adds_total"),
        "no workqueue metrics"
    );
    let healthz = probes
        .split_whitespace()
        .nth(1)
        .expect("healthz url")
        .to_owned();
    assert!(http_get(&healthz).await.contains("ok"));

    assert!(p.terminate(STEP).await, "exit status after SIGTERM");
    assert!(p.printed("stopped"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sample_controller_example_should_converge_and_report_the_foreign_deployment() {
    let exe = &executables().sample_controller;
    let home = temp_dir("sc-home");
    let mut p = Process::spawn("sample-controller", exe, &[], &home);

    p.wait_for_line("converged: 1/2 Foos have their desired replicas", STEP)
        .await;
    p.wait_for_line(
        "event: Warning ErrResourceExists foo default/conflicting-foo: resource \"taken\" already exists and is not managed by Foo",
        STEP,
    )
    .await;
    p.wait_for_line(
        "event: Normal Synced foo default/example-foo: Foo synced successfully",
        STEP,
    )
    .await;
    assert!(p.terminate(STEP).await, "exit status after SIGTERM");
}

/// GET over plain HTTP/1.1 with a bare TCP stream (no client dependency).
async fn http_get(url: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.trim_start_matches("http://");
    let (host, path) = rest.split_once('/').expect("url with a path");
    let mut stream = tokio::net::TcpStream::connect(host).await.expect("connect");
    let request = format!("GET /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = String::new();
    tokio::time::timeout(STEP, stream.read_to_string(&mut response))
        .await
        .expect("response in time")
        .expect("read");
    assert!(response.starts_with("HTTP/1.1 200"), "{url}: {response}");
    response
}

fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// One line of a `--reconcile-log` file.
#[derive(Debug)]
struct Entry {
    start: bool,
    at_ms: u128,
    identity: String,
    request: String,
}

fn read_log(path: &std::path::Path) -> Vec<Entry> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let kind = f.next()?;
            let at_ms = f.next()?.parse().ok()?;
            let identity = f.next()?.to_owned();
            let _controller = f.next()?;
            let request = f.next()?.to_owned();
            Some(Entry {
                start: kind == "start",
                at_ms,
                identity,
                request,
            })
        })
        .collect()
}

const LEASE: Duration = Duration::from_millis(2000);
const RENEW: Duration = Duration::from_millis(1500);
const RETRY: Duration = Duration::from_millis(250);

fn replica(name: &str, url: &str, log: &std::path::Path, home: &std::path::Path) -> Process {
    let lease = LEASE.as_millis().to_string();
    let renew = RENEW.as_millis().to_string();
    let retry = RETRY.as_millis().to_string();
    let log = log.to_string_lossy().into_owned();
    Process::spawn(
        name,
        &executables().controller_manager,
        &[
            "--apiserver",
            url,
            "--identity",
            name,
            "--lease-duration-ms",
            &lease,
            "--renew-deadline-ms",
            &renew,
            "--retry-period-ms",
            &retry,
            "--status-delay-ms",
            "100",
            "--reconcile-log",
            &log,
        ],
        home,
    )
}

async fn available(client: &Client, name: &str) -> Option<i32> {
    let foos: Api<Foo> = Api::namespaced(client.clone(), "default");
    foos.get(name).await.ok().map(|f| f.available_replicas())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_should_elect_one_leader_and_the_other_should_lead_when_it_is_killed() {
    let exes = executables();
    let dir = temp_dir("le");
    let mut apiserver = Process::spawn("kcr-apiserver", &exes.apiserver, &[], &dir);
    let listening = apiserver.wait_for_line("listening on ", STEP).await;
    let url = listening
        .trim_start_matches("listening on ")
        .trim()
        .to_owned();
    let client = Client::try_from(kube::Config::new(url.parse().expect("url"))).expect("client");

    // a starts first and leads; b waits.
    let (log_a, log_b) = (dir.join("a.log"), dir.join("b.log"));
    let mut a = replica("replica-a", &url, &log_a, &dir);
    a.wait_for_line("leading: replica-a", STEP).await;
    let b = replica("replica-b", &url, &log_b, &dir);
    b.wait_for_line("waiting to lead", STEP).await;
    let converged = tokio::time::timeout(STEP, async {
        loop {
            if matches!(cluster::converged(&client).await, Ok((3, 3))) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(
        converged.is_ok(),
        "the demo Foos did not converge under replica-a"
    );
    // A few retry periods with both running: b must not lead.
    tokio::time::sleep(RETRY * 4).await;
    assert!(!b.printed("leading:"), "two leaders at once");
    assert!(
        read_log(&log_b).is_empty(),
        "replica-b reconciled while replica-a led"
    );
    assert!(!read_log(&log_a).is_empty(), "replica-a did not reconcile");

    // SIGKILL the leader: it cannot release the lease.
    let killed_at_ms = unix_ms();
    let killed_at = tokio::time::Instant::now();
    a.child.start_kill().expect("SIGKILL replica-a");
    let _ = tokio::time::timeout(STEP, a.child.wait()).await;
    b.wait_for_line("leading: replica-b", LEASE * 3).await;
    let failover = killed_at.elapsed();
    println!("failover took {failover:?} (lease {LEASE:?}, retry period {RETRY:?})");
    // client-go's bound: b notices a's last renewal within a jittered
    // retry period (up to 2.2x) and acquires within another one after the
    // lease duration; plus process and print latency.
    let bound = LEASE + RETRY.mul_f64(2.2) * 2 + Duration::from_millis(500);
    assert!(
        failover <= bound,
        "failover took {failover:?}, more than {bound:?}"
    );

    // The new leader reconciles: a Foo created now converges.
    cluster::create_foo(&client, "default", "after-failover", 2)
        .await
        .expect("foo");
    let converged = tokio::time::timeout(STEP, async {
        while available(&client, "after-failover").await != Some(2) {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(
        converged.is_ok(),
        "after-failover did not converge under replica-b"
    );

    // No Foo was reconciled by both: every reconcile of a happened before
    // the kill, every reconcile of b after it.
    let (entries_a, entries_b) = (read_log(&log_a), read_log(&log_b));
    assert!(
        entries_a
            .iter()
            .all(|e| e.identity == "replica-a" && e.at_ms <= killed_at_ms)
    );
    assert!(
        entries_b
            .iter()
            .all(|e| e.identity == "replica-b" && e.at_ms >= killed_at_ms)
    );
    let first_b = entries_b
        .iter()
        .filter(|e| e.start)
        .map(|e| e.at_ms)
        .min()
        .expect("b reconciled");
    let last_a = entries_a
        .iter()
        .map(|e| e.at_ms)
        .max()
        .expect("a reconciled");
    assert!(last_a < first_b, "reconciles of a and b overlap");
    let foos_b: BTreeSet<_> = entries_b.iter().map(|e| e.request.as_str()).collect();
    assert!(foos_b.contains("default/after-failover"));

    let mut b = b;
    assert!(
        b.terminate(STEP).await,
        "replica-b exit status after SIGTERM"
    );
    assert!(apiserver.terminate(STEP).await, "kcr-apiserver exit status");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The cluster of the kubeconfig test: the real one of `KCR_TEST_KUBECONFIG` (a namespace of
/// the test's own), or a `kcr-apiserver` process started for the test (namespace `default`).
struct KubeconfigCluster {
    kubeconfig: String,
    client: Client,
    namespace: String,
    real: Option<kcr_testenv::TestCluster>,
    apiserver: Option<Process>,
}

async fn kubeconfig_cluster(dir: &std::path::Path) -> KubeconfigCluster {
    if let Some(path) = std::env::var_os(kcr_testenv::KUBECONFIG_VAR).filter(|p| !p.is_empty()) {
        let real = kcr_testenv::TestCluster::start("example-kubeconfig")
            .await
            .expect("cluster");
        return KubeconfigCluster {
            kubeconfig: path.to_string_lossy().into_owned(),
            client: real.client(),
            namespace: real.namespace().to_owned(),
            real: Some(real),
            apiserver: None,
        };
    }
    let kubeconfig = dir.join("kubeconfig").to_string_lossy().into_owned();
    let apiserver = Process::spawn(
        "kcr-apiserver",
        &executables().apiserver,
        &["--kubeconfig-out", &kubeconfig],
        dir,
    );
    let listening = apiserver.wait_for_line("listening on ", STEP).await;
    let url = listening
        .trim_start_matches("listening on ")
        .trim()
        .to_owned();
    let client = Client::try_from(kube::Config::new(url.parse().expect("url"))).expect("client");
    KubeconfigCluster {
        kubeconfig,
        client,
        namespace: "default".to_owned(),
        real: None,
        apiserver: Some(apiserver),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_controller_manager_example_should_run_against_the_cluster_of_a_kubeconfig() {
    let exes = executables();
    let dir = temp_dir("kubeconfig");
    let cluster = kubeconfig_cluster(&dir).await;
    let (client, ns) = (cluster.client.clone(), cluster.namespace.clone());
    // On a real cluster, pods must start: the bound is longer there.
    let step = kcr_testenv::TestCluster::bound(STEP);

    // A "real cluster": no demo Foos, no stand-in Deployment controller.
    let mut p = Process::spawn(
        "controller-manager",
        &exes.controller_manager,
        &[
            "--kubeconfig",
            &cluster.kubeconfig,
            "--install-crd",
            "--no-leader-elect",
        ],
        &dir,
    );
    p.wait_for_line("connected to the cluster of the kubeconfig", step)
        .await;
    p.wait_for_line("leading: ", step).await;
    // The CRD was just applied: a real server serves it a moment later.
    tokio::time::timeout(step, async {
        while cluster::create_foo(&client, &ns, "from-kubeconfig", 2)
            .await
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
    .await
    .expect("foo");

    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(client.clone(), &ns);
    let owned = tokio::time::timeout(step, async {
        loop {
            if let Ok(d) = deployments.get("from-kubeconfig-deployment").await {
                return d;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("the deployment is created");
    assert_eq!(owned.spec.replicas, Some(2));
    assert_eq!(
        kube::ResourceExt::owner_references(&owned)[0].name,
        "from-kubeconfig"
    );
    let foos: Api<Foo> = Api::namespaced(client.clone(), &ns);
    assert_eq!(
        foos.list(&Default::default())
            .await
            .expect("foos")
            .items
            .len(),
        1,
        "no demo Foos on a cluster"
    );

    assert!(p.terminate(step).await, "exit status after SIGTERM");
    if let Some(mut apiserver) = cluster.apiserver {
        assert!(apiserver.terminate(STEP).await, "kcr-apiserver exit status");
    }
    if let Some(real) = cluster.real {
        real.shutdown().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kcr_apiserver_help_should_print_the_usage_and_exit_zero() {
    let exe = &executables().apiserver;
    let out = tokio::process::Command::new(exe)
        .arg("--help")
        .output()
        .await
        .expect("run kcr-apiserver --help");
    assert!(out.status.success(), "exit status {:?}", out.status);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("usage: kcr-apiserver"), "{stdout}");
    assert!(stdout.contains("--tls"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kcr_apiserver_should_warn_that_a_token_without_tls_is_not_sent_by_kubectl() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let exe = &executables().apiserver;
    let mut child = tokio::process::Command::new(exe)
        .args(["--token", "secret"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start kcr-apiserver");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let line = tokio::time::timeout(STEP, lines.next_line())
        .await
        .expect("a line on stderr in time")
        .expect("read stderr")
        .unwrap_or_default();
    assert!(
        line.contains("warning") && line.contains("--tls") && line.contains("plain HTTP"),
        "{line}"
    );
    let _ = child.kill().await;
}
