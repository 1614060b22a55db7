//! The manager over real HTTP: start order, probes, metrics, failures,
//! graceful shutdown and leader election against kcr-testenv, under a
//! paused clock.
//!
//! With `KCR_TEST_KUBECONFIG` set, the tests run against that cluster (leases in a namespace
//! of the test's own) on the wall clock, so they take the durations they assert (the lease
//! durations, 15 to 35 s; the 30 s graceful-shutdown and probe header timeouts), checked there
//! within a window ([`common::Timing`]); the one that needs fault injection skips there, saying
//! so.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kcr_controller_manager::{BoxError, Error, Manager, Options, runnable_fn};
use kcr_testenv::{TestCluster, TestEnv};
use kube::Api;
use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

mod common;
use common::{Timing, get, start};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn options() -> Options {
    Options::default()
        .metrics_bind_address("127.0.0.1:0")
        .health_probe_bind_address("127.0.0.1:0")
}

/// A runnable that records its start (and whether the probe server
/// answered by then) and runs until cancelled.
fn recording(
    name: &'static str,
    events: &Arc<Mutex<Vec<&'static str>>>,
) -> impl Fn(CancellationToken) -> futures::future::BoxFuture<'static, Result<(), BoxError>>
+ Send
+ Sync
+ 'static {
    let events = events.clone();
    move |ctx: CancellationToken| {
        let events = events.clone();
        Box::pin(async move {
            events.lock().push(name);
            ctx.cancelled().await;
            Ok(())
        })
    }
}

#[tokio::test(start_paused = true)]
async fn the_manager_should_start_servers_then_other_runnables_then_leader_runnables() -> TestResult
{
    let env = TestCluster::start_paused("the-manager-should-start-serve").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(
        env.client(),
        options()
            .leader_election_namespace(ns.as_str())
            .leader_election("order-lock")
            .leader_election_identity("me"),
    )?;
    let events = Arc::new(Mutex::new(Vec::new()));
    let probes_up = Arc::new(AtomicBool::new(false));
    {
        let (events, probes_up, m) = (events.clone(), probes_up.clone(), manager.clone());
        manager.add(
            runnable_fn(move |ctx| {
                let (events, probes_up, m) = (events.clone(), probes_up.clone(), m.clone());
                async move {
                    // The probe server answers before any runnable starts.
                    if let Some(addr) = m.health_probe_addr().await {
                        probes_up.store(
                            get(addr, "/healthz")
                                .await
                                .map(|r| r.0 == 200)
                                .unwrap_or(false),
                            Ordering::SeqCst,
                        );
                    }
                    events.lock().push("other");
                    ctx.cancelled().await;
                    Ok(())
                }
            })
            .without_leader_election(),
        )?;
    }
    let env_client = env.client();
    {
        let events = events.clone();
        let ns = ns.clone();
        manager.add(runnable_fn(move |ctx| {
            let (events, client, ns) = (events.clone(), env_client.clone(), ns.clone());
            async move {
                // Only after the lease is ours.
                let lease = Api::<Lease>::namespaced(client, &ns)
                    .get("order-lock")
                    .await?;
                let holder = lease
                    .spec
                    .and_then(|s| s.holder_identity)
                    .unwrap_or_default();
                events.lock().push(if holder == "me" {
                    "leader"
                } else {
                    "leader-without-lease"
                });
                ctx.cancelled().await;
                Ok(())
            }
        }))?;
    }
    let (stop, task) = start(&manager);
    tokio::time::timeout(Duration::from_secs(10), manager.elected()).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(*events.lock(), vec!["other", "leader"]);
    assert!(probes_up.load(Ordering::SeqCst));

    // Added after start: each starts at once in its group.
    manager.add(runnable_fn(recording("late-leader", &events)))?;
    manager.add(runnable_fn(recording("late-other", &events)).without_leader_election())?;
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(
        *events.lock(),
        vec!["other", "leader", "late-leader", "late-other"]
    );

    let _ = stop.send(());
    task.await??;
    assert!(matches!(
        manager.add(runnable_fn(recording("too-late", &events))),
        Err(Error::Stopping)
    ));
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn leader_runnables_should_wait_for_the_lease() -> TestResult {
    let env = TestCluster::start_paused("leader-runnables-should-wait-f").await?;
    let ns = env.namespace().to_owned();
    // Someone else holds the lease (and keeps it: nobody renews, so it
    // expires 15 s after this manager first sees it).
    let lock =
        kcr_controller_manager::leaderelection::LeaseLock::new(env.client(), &ns, "held", "other");
    let other = kcr_controller_manager::leaderelection::LeaderElector::new(
        kcr_controller_manager::leaderelection::LeaderElectionConfig::new(lock),
    )?;
    let other_stop = CancellationToken::new();
    let other_task = tokio::spawn({
        let (o, s) = (other.clone(), other_stop.clone());
        async move { o.run(s).await }
    });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(other.is_leader());
    other_stop.cancel();
    other_task.await?;

    let manager = Manager::new(
        env.client(),
        options()
            .leader_election_namespace(ns.as_str())
            .leader_election("held"),
    )?;
    let events = Arc::new(Mutex::new(Vec::new()));
    manager.add(runnable_fn(recording("leader", &events)))?;
    manager.add(runnable_fn(recording("other", &events)).without_leader_election())?;
    let (stop, task) = start(&manager);
    let started = Instant::now();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(*events.lock(), vec!["other"]);
    tokio::time::timeout(Duration::from_secs(20), manager.elected()).await?;
    assert!(started.elapsed() >= Duration::from_secs(15));
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(*events.lock(), vec!["other", "leader"]);
    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn probes_and_metrics_should_be_served_over_http() -> TestResult {
    let env = TestCluster::start_paused("probes-and-metrics-should-be-s").await?;
    let ns = env.namespace().to_owned();
    let registry = kcr_metrics::Registry::new();
    let manager = Manager::new(
        env.client(),
        options()
            .leader_election_namespace(ns.as_str())
            .leader_election("metrics-lock")
            .metrics_registry(registry.clone()),
    )?;
    let ready = Arc::new(AtomicBool::new(false));
    let flag = ready.clone();
    manager.add_readyz_check("warm", move || {
        if flag.load(Ordering::SeqCst) {
            Ok(())
        } else {
            Err("still warming up")
        }
    });
    manager.add_healthz_check("alive", || Ok::<(), String>(()));
    let (stop, task) = start(&manager);
    let probes = manager.health_probe_addr().await.ok_or("no probe server")?;
    let metrics = manager.metrics_addr().await.ok_or("no metrics server")?;
    tokio::time::timeout(Duration::from_secs(5), manager.elected()).await?;

    assert_eq!(get(probes, "/healthz").await?, (200, "ok".to_owned()));
    assert_eq!(
        get(probes, "/healthz?verbose").await?,
        (200, "[+]alive ok\nhealthz check passed\n".to_owned())
    );
    let (status, body) = get(probes, "/readyz").await?;
    assert_eq!(status, 500);
    assert_eq!(
        body,
        "[+]informer-sync ok\n[-]warm failed: reason withheld\nreadyz check failed\n"
    );
    assert_eq!(
        get(probes, "/readyz/warm").await?,
        (500, "internal server error: still warming up\n".to_owned())
    );
    assert_eq!(
        get(probes, "/readyz/informer-sync").await?,
        (200, "ok".to_owned())
    );
    assert_eq!(get(probes, "/readyz/nope").await?.0, 404);
    assert_eq!(
        get(probes, "/readyz?exclude=warm").await?,
        (200, "ok".to_owned())
    );
    ready.store(true, Ordering::SeqCst);
    assert_eq!(get(probes, "/readyz").await?, (200, "ok".to_owned()));
    assert_eq!(
        get(probes, "/readyz?verbose").await?,
        (
            200,
            "[+]informer-sync ok\n[+]warm ok\nreadyz check passed\n".to_owned()
        )
    );
    // Checks added while serving are served.
    manager.add_healthz_check("late", || Err::<(), _>("broken"));
    assert_eq!(get(probes, "/healthz").await?.0, 500);
    assert_eq!(get(probes, "/other").await?.0, 404);

    // The manager's registry, lease metric included.
    let (status, body) = get(metrics, "/metrics").await?;
    assert_eq!(status, 200);
    assert!(
        body.contains("# TYPE leader_election_master_status gauge"),
        "{body}"
    );
    assert!(
        body.contains(r#"leader_election_master_status{name="metrics-lock"} 1"#),
        "{body}"
    );
    assert_eq!(get(metrics, "/healthz").await?.0, 404);

    let _ = stop.send(());
    task.await??;
    // The servers are gone after start returns.
    assert!(TcpStream::connect(probes).await.is_err());
    assert!(TcpStream::connect(metrics).await.is_err());
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_failing_runnable_should_stop_the_manager_with_its_error() -> TestResult {
    let env = TestCluster::start_paused("a-failing-runnable-should-stop").await?;
    let manager = Manager::new(env.client(), options())?;
    let cancelled = Arc::new(AtomicUsize::new(0));
    for _ in 0..2 {
        let cancelled = cancelled.clone();
        manager.add(runnable_fn(move |ctx| {
            let cancelled = cancelled.clone();
            async move {
                ctx.cancelled().await;
                cancelled.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
        }))?;
    }
    manager.add(
        runnable_fn(|_ctx| async {
            tokio::time::sleep(Duration::from_secs(3)).await;
            Err::<(), BoxError>("disk on fire".into())
        })
        .without_leader_election(),
    )?;
    let (_stop, task) = start(&manager);
    let result = tokio::time::timeout(Duration::from_secs(10), task).await??;
    match result {
        Err(Error::Runnable(e)) => assert_eq!(e.to_string(), "disk on fire"),
        other => panic!("expected the runnable's error, got {other:?}"),
    }
    assert_eq!(cancelled.load(Ordering::SeqCst), 2);
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_panicking_runnable_should_stop_the_manager_not_the_process() -> TestResult {
    let env = TestCluster::start_paused("a-panicking-runnable-should-st").await?;
    let manager = Manager::new(env.client(), options())?;
    manager.add(runnable_fn(|_ctx| async {
        if Instant::now().elapsed() < Duration::from_secs(1) {
            panic!("reconciler bug");
        }
        Ok::<(), BoxError>(())
    }))?;
    let (_stop, task) = start(&manager);
    match tokio::time::timeout(Duration::from_secs(10), task).await?? {
        Err(Error::RunnablePanicked(message)) => assert_eq!(message, "reconciler bug"),
        other => panic!("expected a panic error, got {other:?}"),
    }
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn graceful_shutdown_should_wait_for_runnables_that_drain_in_time() -> TestResult {
    let env = TestCluster::start_paused("graceful-shutdown-should-wait-").await?;
    let manager = Manager::new(
        env.client(),
        options().graceful_shutdown_timeout(Some(Duration::from_secs(10))),
    )?;
    let drained = Arc::new(AtomicBool::new(false));
    let flag = drained.clone();
    manager.add(runnable_fn(move |ctx| {
        let flag = flag.clone();
        async move {
            ctx.cancelled().await;
            // In-flight work takes 4 s to finish.
            tokio::time::sleep(Duration::from_secs(4)).await;
            flag.store(true, Ordering::SeqCst);
            Ok(())
        }
    }))?;
    let (stop, task) = start(&manager);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let stopping = Instant::now();
    let _ = stop.send(());
    task.await??;
    assert!(drained.load(Ordering::SeqCst));
    Timing::of(&env).assert_about(stopping.elapsed(), Duration::from_secs(4), "the shutdown");
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn graceful_shutdown_should_give_up_after_the_timeout() -> TestResult {
    let env = TestCluster::start_paused("graceful-shutdown-should-give-").await?;
    let manager = Manager::new(env.client(), options())?;
    manager.add(runnable_fn(|_ctx| async {
        // Ignores cancellation.
        tokio::time::sleep(Duration::from_secs(3600)).await;
        Ok::<(), BoxError>(())
    }))?;
    let (stop, task) = start(&manager);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let stopping = Instant::now();
    let _ = stop.send(());
    match task.await? {
        Err(Error::GracefulShutdownTimeout(t)) => assert_eq!(t, Duration::from_secs(30)),
        other => panic!("expected a timeout, got {other:?}"),
    }
    Timing::of(&env).assert_about(stopping.elapsed(), Duration::from_secs(30), "the shutdown");
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn starting_twice_should_fail() -> TestResult {
    let env = TestCluster::start_paused("starting-twice-should-fail").await?;
    let manager = Manager::new(env.client(), options())?;
    let (stop, task) = start(&manager);
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert!(matches!(
        manager.start(async {}).await,
        Err(Error::AlreadyStarted)
    ));
    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn invalid_leader_election_settings_should_be_refused() -> TestResult {
    let env = TestCluster::start_paused("invalid-leader-election-settin").await?;
    let ns = env.namespace().to_owned();
    let no_id = Manager::new(
        env.client(),
        options()
            .leader_election_namespace(ns.as_str())
            .leader_election(""),
    );
    assert!(matches!(no_id, Err(Error::InvalidLeaderElectionConfig(_))));
    let bad = Manager::new(
        env.client(),
        options()
            .leader_election_namespace(ns.as_str())
            .leader_election("x")
            .renew_deadline(Duration::from_secs(20)),
    );
    assert!(matches!(
        bad,
        Err(Error::InvalidLeaderElectionConfig(
            "leaseDuration must be greater than renewDeadline"
        ))
    ));
    let manager = Manager::new(
        env.client(),
        Options::default().metrics_bind_address("nonsense"),
    )?;
    assert!(matches!(
        manager.start(async {}).await,
        Err(Error::InvalidBindAddress(_))
    ));
    env.shutdown().await;
    Ok(())
}

struct Replica {
    manager: Manager,
    stop: oneshot::Sender<()>,
    task: JoinHandle<kcr_controller_manager::Result<()>>,
}

fn leader_replica(
    client: kube::Client,
    namespace: &str,
    who: &str,
    release: bool,
    working: &Arc<AtomicUsize>,
    overlap: &Arc<AtomicBool>,
) -> Result<Replica, Box<dyn std::error::Error>> {
    let manager = Manager::new(
        client,
        Options::default()
            .metrics_bind_address("0")
            .leader_election_namespace(namespace)
            .leader_election("managers-lock")
            .leader_election_identity(who)
            .leader_election_release_on_cancel(release),
    )?;
    let (working, overlap) = (working.clone(), overlap.clone());
    manager.add(runnable_fn(move |ctx| {
        let (working, overlap) = (working.clone(), overlap.clone());
        async move {
            if working.fetch_add(1, Ordering::SeqCst) != 0 {
                overlap.store(true, Ordering::SeqCst);
            }
            ctx.cancelled().await;
            working.fetch_sub(1, Ordering::SeqCst);
            Ok::<(), BoxError>(())
        }
    }))?;
    let (stop, task) = start(&manager);
    Ok(Replica {
        manager,
        stop,
        task,
    })
}

fn is_leading(r: &Replica) -> bool {
    r.manager.leader_elector().is_some_and(|e| e.is_leader())
}

#[tokio::test(start_paused = true)]
async fn two_managers_should_hand_over_at_once_when_the_leader_releases_on_shutdown() -> TestResult
{
    let env = TestCluster::start_paused("two-managers-should-hand-over").await?;
    let ns = env.namespace().to_owned();
    let (working, overlap) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let a = leader_replica(env.client(), &ns, "manager-a", true, &working, &overlap)?;
    tokio::time::timeout(Duration::from_secs(5), a.manager.elected()).await?;
    let b = leader_replica(env.client(), &ns, "manager-b", true, &working, &overlap)?;
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert!(is_leading(&a) && !is_leading(&b));
    assert_eq!(working.load(Ordering::SeqCst), 1);

    let _ = a.stop.send(());
    a.task.await??;
    let released = Instant::now();
    tokio::time::timeout(Duration::from_secs(10), b.manager.elected()).await?;
    // b's next attempt comes within one jittered retry period (2 s × 2.2).
    assert!(
        released.elapsed() <= Duration::from_millis(4_400),
        "took {:?}",
        released.elapsed()
    );
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(working.load(Ordering::SeqCst), 1);
    assert!(!overlap.load(Ordering::SeqCst));
    let _ = b.stop.send(());
    b.task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_manager_that_loses_its_lease_should_stop_leader_work_before_expiry_and_fail()
-> TestResult {
    if TestCluster::skip_on_real_cluster(
        "a_manager_that_loses_its_lease_should_stop_leader_work_before_expiry_and_fail",
        "fault injection (refusing the leader's renewals)",
    ) {
        return Ok(());
    }
    let env = TestEnv::start().await?;
    let (working, overlap) = (
        Arc::new(AtomicUsize::new(0)),
        Arc::new(AtomicBool::new(false)),
    );
    let a = leader_replica(
        env.client_with_user_agent("manager-a")?,
        "default",
        "manager-a",
        false,
        &working,
        &overlap,
    )?;
    tokio::time::timeout(Duration::from_secs(5), a.manager.elected()).await?;
    let b = leader_replica(
        env.client_with_user_agent("manager-b")?,
        "default",
        "manager-b",
        false,
        &working,
        &overlap,
    )?;
    tokio::time::sleep(Duration::from_secs(10)).await;

    let refused = Instant::now();
    env.faults().refuse_updates_from_user_agent("manager-a");
    match tokio::time::timeout(Duration::from_secs(15), a.task).await?? {
        Err(Error::LeaderElectionLost) => {}
        other => panic!("expected a lost lease, got {other:?}"),
    }
    let a_stopped = refused.elapsed();
    assert!(
        a_stopped <= Duration::from_secs(10),
        "a stopped {a_stopped:?} after the refusal"
    );
    assert_eq!(working.load(Ordering::SeqCst), 0);
    tokio::time::timeout(Duration::from_secs(20), b.manager.elected()).await?;
    assert!(
        refused.elapsed() >= Duration::from_secs(13),
        "b led {:?} after the refusal",
        refused.elapsed()
    );
    tokio::time::sleep(Duration::from_millis(10)).await;
    assert_eq!(working.load(Ordering::SeqCst), 1);
    assert!(!overlap.load(Ordering::SeqCst));
    drop(a.stop);
    let _ = b.stop.send(());
    b.task.await??;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_probe_client_that_never_finishes_its_headers_should_be_dropped() -> TestResult {
    let env = TestCluster::start_paused("a-probe-client-that-never-fini").await?;
    let manager = Manager::new(env.client(), options())?;
    let (stop, task) = start(&manager);
    let probes = manager.health_probe_addr().await.ok_or("no probe server")?;
    let mut stream = TcpStream::connect(probes).await?;
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: te")
        .await?;
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut rest)).await;
    // The server closed the connection (after its 30 s header timeout), it
    // did not keep it for ever.
    assert!(read.is_ok(), "connection still open after a minute");
    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}
