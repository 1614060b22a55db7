//! Controllers over real HTTP against kcr-testenv, under a paused clock:
//! outcome rules, panics, timeouts, owner mapping, predicates, concurrency,
//! the retry schedule, metrics, readiness and graceful shutdown.
//!
//! With `KCR_TEST_KUBECONFIG` set, they run against that cluster in a namespace of their own,
//! on the wall clock: the durations asserted exactly under the paused clock are checked there
//! within a window ([`common::Timing`]). Those that need fault injection skip there, saying so.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kcr_controller_manager::controller::{
    ReconcileContext, TerminalError, predicate, reconciler_fn,
};
use kcr_controller_manager::manager::InformerOptions;
use kcr_controller_manager::{Action, Controller, Request};
use kcr_controller_manager::{BoxError, Error, Manager, Options};
use kcr_metrics::controller::ControllerMetrics;
use kcr_metrics::prometheus::IntCounterVec;
use kcr_testenv::{Failure, TestCluster, TestEnv};
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use parking_lot::Mutex;
use tokio::time::Instant;

mod common;
use common::{Timing, get, start};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const MS: Duration = Duration::from_millis(1);

fn quiet() -> Options {
    Options::default()
        .metrics_bind_address("0")
        .health_probe_bind_address("0")
}

/// The options of a manager whose cache is limited to the test's namespace.
fn scoped(ns: &str) -> Options {
    quiet().informers(InformerOptions::default().default_namespaces([ns]))
}

/// Waits (in 10 ms steps, up to 60 s of the test's clock) until `cond` holds.
async fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..6000 {
        if cond() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cond()
}

/// Every call a reconciler received, with the time of the call (on the test's clock).
#[derive(Clone, Default)]
struct Calls(Arc<Mutex<Vec<(Request, Instant)>>>);

impl Calls {
    fn record(&self, req: &Request) -> usize {
        let mut calls = self.0.lock();
        calls.push((req.clone(), Instant::now()));
        calls.iter().filter(|(r, _)| r == req).count()
    }

    fn count(&self, name: &str) -> usize {
        self.0
            .lock()
            .iter()
            .filter(|(r, _)| &*r.name == name)
            .count()
    }

    fn times(&self, name: &str) -> Vec<Instant> {
        self.0
            .lock()
            .iter()
            .filter(|(r, _)| &*r.name == name)
            .map(|(_, t)| *t)
            .collect()
    }

    fn names(&self) -> Vec<String> {
        self.0
            .lock()
            .iter()
            .map(|(r, _)| r.name.to_string())
            .collect()
    }
}

fn gaps(times: &[Instant]) -> Vec<Duration> {
    times.windows(2).map(|w| w[1] - w[0]).collect()
}

fn total(controller: &str, result: &str) -> u64 {
    ControllerMetrics::global()
        .reconcile_total()
        .with_label_values(&[controller, result])
        .get()
}

fn counter(family: fn(&ControllerMetrics) -> &IntCounterVec, controller: &str) -> u64 {
    family(ControllerMetrics::global())
        .with_label_values(&[controller])
        .get()
}

#[derive(Debug, thiserror::Error)]
#[error("failed on purpose")]
struct Failed;

#[tokio::test(start_paused = true)]
async fn outcomes_should_follow_controller_runtimes_rules() -> TestResult {
    let env = TestCluster::start_paused("outcomes-should-follow-control").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let calls = Calls::default();
    let log = calls.clone();
    let controller =
        Controller::builder(&manager, "outcomes").build(reconciler_fn(move |req: Request| {
            let n = log.record(&req);
            async move {
                match (&*req.name, n) {
                    ("requeue", 1 | 2) => Ok(Action::requeue()),
                    ("after", 1) => Ok(Action::requeue_after(Duration::from_secs(3))),
                    ("error", 1) => Err(BoxError::from(Failed)),
                    // Fails, then asks for a requeue after 1 s (which forgets
                    // the failure), then fails again: the backoff restarts.
                    ("forget", 1 | 3) => Err(BoxError::from(Failed)),
                    ("forget", 2) => Ok(Action::requeue_after(Duration::from_secs(1))),
                    ("terminal", _) => Err(TerminalError::new("cannot be fixed").into()),
                    _ => Ok(Action::done()),
                }
            }
        }))?;
    let (stop, task) = start(&manager);
    for name in ["done", "requeue", "after", "error", "forget", "terminal"] {
        controller
            .queue()
            .add(Request::namespaced(ns.as_str(), name));
    }
    tokio::time::sleep(Duration::from_secs(10)).await;

    // Exact under the paused clock; on a real cluster's wall clock, within Timing's window
    // (there the 5 ms and 10 ms delays pass for each other: only the paused clock tells that
    // requeue_after restarts the backoff).
    let timing = Timing::of(&env);
    // Success: reconciled once.
    assert_eq!(calls.count("done"), 1);
    // requeue(): through the rate limiter (5 ms, then 10 ms), then done.
    timing.assert_all_about(
        &gaps(&calls.times("requeue")),
        &[5 * MS, 10 * MS],
        "requeue",
    );
    // requeue_after(3 s): exactly 3 s later.
    timing.assert_all_about(
        &gaps(&calls.times("after")),
        &[Duration::from_secs(3)],
        "requeue_after",
    );
    // An error: retried after the rate limiter's first delay.
    timing.assert_all_about(&gaps(&calls.times("error")), &[5 * MS], "error");
    // requeue_after forgets: the failure after it waits 5 ms again, not 10 ms.
    timing.assert_all_about(
        &gaps(&calls.times("forget")),
        &[5 * MS, Duration::from_secs(1), 5 * MS],
        "forget",
    );
    // A terminal error: counted, never retried.
    assert_eq!(calls.count("terminal"), 1);
    let queue = controller.queue();
    for name in ["done", "requeue", "after", "error", "forget", "terminal"] {
        assert_eq!(
            queue.num_requeues(&Request::namespaced(ns.as_str(), name)),
            0,
            "{name}"
        );
    }

    assert_eq!(total("outcomes", "success"), 5);
    assert_eq!(total("outcomes", "requeue"), 2);
    assert_eq!(total("outcomes", "requeue_after"), 2);
    assert_eq!(total("outcomes", "error"), 4);
    assert_eq!(counter(ControllerMetrics::reconcile_errors, "outcomes"), 4);
    assert_eq!(
        counter(ControllerMetrics::terminal_reconcile_errors, "outcomes"),
        1
    );

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn an_always_failing_reconcile_should_follow_the_rate_limiters_schedule_exactly() -> TestResult
{
    let env = TestCluster::start_paused("an-always-failing-reconcile-sh").await?;
    let ns = env.namespace().to_owned();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("broken".into());
    api.create(&PostParams::default(), &cm).await?;

    let manager = Manager::new(env.client(), scoped(&ns))?;
    let calls = Calls::default();
    let log = calls.clone();
    Controller::builder(&manager, "always-failing")
        .for_::<ConfigMap>()
        .build(reconciler_fn(move |req: Request| {
            log.record(&req);
            async move { Err::<Action, _>(Failed) }
        }))?;
    let (stop, task) = start(&manager);
    assert!(eventually(|| calls.count("broken") >= 12).await);

    // client-go's default controller rate limiter: 5 ms · 2^n, with no
    // worker stall in between (controller-runtime once waited a second).
    let expected: Vec<Duration> = (0..11).map(|n| 5 * MS * (1 << n)).collect();
    Timing::of(&env).assert_all_about(
        &gaps(&calls.times("broken"))[..11],
        &expected,
        "the retries of an always failing reconcile",
    );

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_panicking_reconcile_should_be_caught_counted_and_retried() -> TestResult {
    let env = TestCluster::start_paused("a-panicking-reconcile-should-b").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let calls = Calls::default();
    let log = calls.clone();
    let controller =
        Controller::builder(&manager, "panicking").build(reconciler_fn(move |req: Request| {
            let n = log.record(&req);
            async move {
                if n <= 2 {
                    panic!("reconcile {n} panicked");
                }
                Ok::<_, BoxError>(Action::done())
            }
        }))?;
    let (stop, task) = start(&manager);
    controller
        .queue()
        .add(Request::namespaced(ns.as_str(), "fragile"));
    assert!(eventually(|| calls.count("fragile") == 3).await);

    // Treated as errors: retried through the rate limiter. On the wall clock the retry comes
    // after the panic hook's report too (with RUST_BACKTRACE, resolving the first backtrace
    // takes a while).
    Timing::of(&env)
        .late_by(Duration::from_secs(5))
        .assert_all_about(
            &gaps(&calls.times("fragile")),
            &[5 * MS, 10 * MS],
            "the retries of a panicking reconcile",
        );
    assert_eq!(counter(ControllerMetrics::reconcile_panics, "panicking"), 2);
    assert_eq!(counter(ControllerMetrics::reconcile_errors, "panicking"), 2);
    assert_eq!(total("panicking", "error"), 2);
    assert_eq!(total("panicking", "success"), 1);

    // The manager kept running and stops cleanly.
    assert!(!task.is_finished());
    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

/// Sets its flag when dropped before `finish`: the reconcile was cancelled.
struct CancelProbe(Arc<AtomicBool>, bool);

impl Drop for CancelProbe {
    fn drop(&mut self) {
        if !self.1 {
            self.0.store(true, Ordering::SeqCst);
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_reconcile_past_its_timeout_should_be_cancelled_and_retried() -> TestResult {
    let env = TestCluster::start_paused("a-reconcile-past-its-timeout-s").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let calls = Calls::default();
    let log = calls.clone();
    let cancelled = Arc::new(AtomicBool::new(false));
    let flag = cancelled.clone();
    let controller = Controller::builder(&manager, "slow")
        .reconcile_timeout(Duration::from_secs(1))
        .build(reconciler_fn(move |req: Request| {
            let n = log.record(&req);
            let flag = flag.clone();
            async move {
                if n == 1 {
                    let mut probe = CancelProbe(flag, false);
                    tokio::time::sleep(Duration::from_secs(10)).await;
                    probe.1 = true;
                }
                Ok::<_, BoxError>(Action::done())
            }
        }))?;
    let (stop, task) = start(&manager);
    controller
        .queue()
        .add(Request::namespaced(ns.as_str(), "stuck"));
    assert!(eventually(|| calls.count("stuck") == 2).await);

    assert!(
        cancelled.load(Ordering::SeqCst),
        "the slow reconcile was not dropped"
    );
    // Cancelled at the 1 s timeout, retried 5 ms later as an error.
    Timing::of(&env).assert_all_about(
        &gaps(&calls.times("stuck")),
        &[Duration::from_secs(1) + 5 * MS],
        "a reconcile past its timeout",
    );
    assert_eq!(counter(ControllerMetrics::reconcile_timeouts, "slow"), 1);
    assert_eq!(counter(ControllerMetrics::reconcile_errors, "slow"), 1);
    assert_eq!(total("slow", "success"), 1);

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

fn config_map_owned_by(
    name: &str,
    kind: &str,
    owner: &str,
    uid: &str,
    controller: bool,
) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            owner_references: Some(vec![OwnerReference {
                api_version: "apps/v1".into(),
                kind: kind.into(),
                name: owner.into(),
                uid: uid.into(),
                controller: Some(controller),
                ..OwnerReference::default()
            }]),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

/// A valid Deployment (kcr-testenv validates as kube-apiserver does: a selector that matches
/// the template's labels, and a container with an image).
fn deployment(name: &str) -> Deployment {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}
            }
        }
    }))
    .expect("a valid Deployment")
}

#[tokio::test(start_paused = true)]
async fn an_owned_object_should_reconcile_the_owner_that_controls_it() -> TestResult {
    let env = TestCluster::start_paused("an-owned-object-should-reconci").await?;
    let ns = env.namespace().to_owned();
    let deployments: Api<Deployment> = Api::namespaced(env.client(), &ns);
    let config_maps: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    let web = deployments
        .create(&PostParams::default(), &deployment("web"))
        .await?;
    let uid = web.metadata.uid.clone().unwrap_or_default();

    let manager = Manager::new(env.client(), scoped(&ns))?;
    let calls = Calls::default();
    let log = calls.clone();
    Controller::builder(&manager, "owner-mapping")
        .for_::<Deployment>()
        .owns::<ConfigMap>()
        .build(reconciler_fn(move |req: Request| {
            log.record(&req);
            async move { Ok::<_, BoxError>(Action::done()) }
        }))?;
    let (stop, task) = start(&manager);
    assert!(eventually(|| calls.count("web") == 1).await);

    // Created, then deleted: each reconciles the controlling owner.
    config_maps
        .create(
            &PostParams::default(),
            &config_map_owned_by("web-config", "Deployment", "web", &uid, true),
        )
        .await?;
    assert!(eventually(|| calls.count("web") == 2).await);
    config_maps
        .delete("web-config", &DeleteParams::default())
        .await?;
    assert!(eventually(|| calls.count("web") == 3).await);
    assert!(
        calls
            .0
            .lock()
            .iter()
            .all(|(r, _)| r.namespace.as_deref() == Some(ns.as_str()))
    );

    // Not the controller, or another kind: nothing. The sentinel comes
    // through the same informer after them, into the same FIFO queue.
    for cm in [
        config_map_owned_by("merely-owned", "Deployment", "api", "u1", false),
        config_map_owned_by("foreign", "StatefulSet", "db", "u2", true),
        config_map_owned_by("sentinel-config", "Deployment", "sentinel", "u3", true),
    ] {
        config_maps.create(&PostParams::default(), &cm).await?;
    }
    assert!(eventually(|| calls.count("sentinel") == 1).await);
    let names = calls.names();
    assert!(
        !names
            .iter()
            .any(|n| n == "api" || n == "db" || n.ends_with("-config")),
        "{names:?}"
    );

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn an_event_filter_should_drop_the_updates_it_refuses() -> TestResult {
    let env = TestCluster::start_paused("an-event-filter-should-drop-th").await?;
    let ns = env.namespace().to_owned();
    let deployments: Api<Deployment> = Api::namespaced(env.client(), &ns);
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let calls = Calls::default();
    let log = calls.clone();
    Controller::builder(&manager, "generation-filter")
        .for_::<Deployment>()
        .event_filter(predicate::generation_changed())
        .build(reconciler_fn(move |req: Request| {
            log.record(&req);
            async move { Ok::<_, BoxError>(Action::done()) }
        }))?;
    let (stop, task) = start(&manager);
    for name in ["labelled", "scaled"] {
        deployments
            .create(&PostParams::default(), &deployment(name))
            .await?;
    }
    // Creates pass.
    assert!(eventually(|| calls.count("labelled") == 1 && calls.count("scaled") == 1).await);

    // A label change keeps the generation: filtered. A spec change bumps it:
    // passes. Same informer and one worker, so had the label change passed,
    // "labelled" would be reconciled before "scaled".
    let labels = serde_json::json!({ "metadata": { "labels": { "tier": "web" } } });
    deployments
        .patch("labelled", &PatchParams::default(), &Patch::Merge(&labels))
        .await?;
    let spec = serde_json::json!({ "spec": { "replicas": 3 } });
    let scaled = deployments
        .patch("scaled", &PatchParams::default(), &Patch::Merge(&spec))
        .await?;
    assert_eq!(scaled.metadata.generation, Some(2));
    assert!(eventually(|| calls.count("scaled") == 2).await);
    assert_eq!(calls.count("labelled"), 1, "{:?}", calls.names());

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

/// Watches every reconcile: how many run at once (at most), and whether a
/// key ever runs twice at once.
#[derive(Default)]
struct Checker {
    state: Mutex<(usize, HashSet<String>)>,
    max: AtomicUsize,
    overlaps: AtomicUsize,
    done: AtomicUsize,
}

impl Checker {
    fn enter(&self, key: &str) {
        let mut state = self.state.lock();
        state.0 += 1;
        self.max.fetch_max(state.0, Ordering::SeqCst);
        if !state.1.insert(key.to_owned()) {
            self.overlaps.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn exit(&self, key: &str) {
        let mut state = self.state.lock();
        state.0 -= 1;
        state.1.remove(key);
        self.done.fetch_add(1, Ordering::SeqCst);
    }
}

async fn hammer(controller: &Controller, ns: &str, keys: usize, adds: usize) {
    for i in 0..adds {
        controller
            .queue()
            .add(Request::namespaced(ns, format!("k{}", (i * 7) % keys)));
        if i % 8 == 0 {
            tokio::time::sleep(MS).await;
        }
    }
}

#[tokio::test(start_paused = true)]
async fn workers_should_never_exceed_max_concurrent_reconciles_nor_share_a_key() -> TestResult {
    let env = TestCluster::start_paused("workers-should-never-exceed-ma").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let checker = Arc::new(Checker::default());
    let c = checker.clone();
    let controller = Controller::builder(&manager, "concurrency")
        .max_concurrent_reconciles(4)
        .build(reconciler_fn(move |req: Request| {
            let c = c.clone();
            async move {
                c.enter(&req.name);
                let pause = 1 + (req.name.len() as u64 * 13) % 7;
                tokio::time::sleep(Duration::from_millis(pause)).await;
                c.exit(&req.name);
                Ok::<_, BoxError>(Action::done())
            }
        }))?;
    let (stop, task) = start(&manager);
    hammer(&controller, &ns, 10, 2000).await;
    let queue = controller.queue().clone();
    assert!(eventually(|| queue.is_empty() && checker.state.lock().0 == 0).await);

    assert_eq!(checker.overlaps.load(Ordering::SeqCst), 0);
    assert_eq!(
        checker.max.load(Ordering::SeqCst),
        4,
        "four workers were never all busy"
    );
    assert!(checker.done.load(Ordering::SeqCst) >= 10);

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workers_on_many_threads_should_never_exceed_the_limit_nor_share_a_key() -> TestResult {
    let env = TestCluster::start("workers-on-many-threads-should").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let checker = Arc::new(Checker::default());
    let c = checker.clone();
    let controller = Controller::builder(&manager, "concurrency-threads")
        .max_concurrent_reconciles(3)
        .build(reconciler_fn(move |req: Request| {
            let c = c.clone();
            async move {
                c.enter(&req.name);
                for _ in 0..10 {
                    tokio::task::yield_now().await;
                }
                c.exit(&req.name);
                Ok::<_, BoxError>(Action::done())
            }
        }))?;
    let (stop, task) = start(&manager);
    for round in 0..200 {
        for key in 0..10 {
            controller
                .queue()
                .add(Request::namespaced(ns.as_str(), format!("k{key}")));
        }
        if round % 10 == 0 {
            tokio::task::yield_now().await;
        }
    }
    let queue = controller.queue().clone();
    while !(queue.is_empty() && checker.state.lock().0 == 0) {
        tokio::task::yield_now().await;
    }
    assert_eq!(checker.overlaps.load(Ordering::SeqCst), 0);
    assert!(checker.max.load(Ordering::SeqCst) <= 3);

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn metrics_should_hold_the_controller_and_workqueue_families_after_reconciles() -> TestResult
{
    let env = TestCluster::start_paused("metrics-should-hold-the-contro").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(
        env.client(),
        scoped(&ns).metrics_bind_address("127.0.0.1:0"),
    )?;
    let calls = Calls::default();
    let log = calls.clone();
    let controller = Controller::builder(&manager, "metered")
        .max_concurrent_reconciles(2)
        .build(reconciler_fn(move |req: Request| {
            let n = log.record(&req);
            async move {
                match &*req.name {
                    "bad" => Err(TerminalError::new("no").into()),
                    "later" if n == 1 => Ok(Action::requeue_after(Duration::from_secs(1))),
                    _ => Ok::<_, BoxError>(Action::done()),
                }
            }
        }))?;
    let (stop, task) = start(&manager);
    for name in ["ok", "bad", "later"] {
        controller
            .queue()
            .add(Request::namespaced(ns.as_str(), name));
    }
    assert!(eventually(|| calls.count("later") == 2 && calls.count("bad") == 1).await);
    let addr = manager.metrics_addr().await.ok_or("metrics disabled")?;
    let mut lines = vec![
        r#"controller_runtime_reconcile_total{controller="metered",result="success"} 2"#,
        r#"controller_runtime_reconcile_total{controller="metered",result="error"} 1"#,
        r#"controller_runtime_reconcile_total{controller="metered",result="requeue"} 0"#,
        r#"controller_runtime_reconcile_total{controller="metered",result="requeue_after"} 1"#,
        r#"controller_runtime_reconcile_errors_total{controller="metered"} 1"#,
        r#"controller_runtime_terminal_reconcile_errors_total{controller="metered"} 1"#,
        r#"controller_runtime_reconcile_panics_total{controller="metered"} 0"#,
        r#"controller_runtime_reconcile_timeouts_total{controller="metered"} 0"#,
        r#"controller_runtime_reconcile_time_seconds_count{controller="metered"} 4"#,
        r#"controller_runtime_max_concurrent_reconciles{controller="metered"} 2"#,
        r#"controller_runtime_active_workers{controller="metered"} 0"#,
        r#"workqueue_adds_total{controller="metered",name="metered"} 4"#,
        r#"workqueue_retries_total{controller="metered",name="metered"} 1"#,
        r#"workqueue_depth{controller="metered",name="metered""#,
        r#"workqueue_work_duration_seconds_count{controller="metered",name="metered"} 4"#,
    ];
    if !Timing::of(&env).is_real() {
        // Under the paused clock a reconcile that never waits takes no time at all.
        lines.push(
            r#"controller_runtime_reconcile_time_seconds_bucket{controller="metered",le="0.005"} 4"#,
        );
    }
    // The last reconcile was seen starting, and its worker may not have counted it yet (on a
    // real clock): scraped again until the figures are all there, for up to 5 s.
    let mut body = String::new();
    for _ in 0..100 {
        let (status, scraped) = get(addr, "/metrics").await?;
        assert_eq!(status, 200);
        body = scraped;
        if lines.iter().all(|line| body.contains(line)) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    for line in lines {
        assert!(body.contains(line), "{line} missing from\n{body}");
    }
    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn readiness_should_fail_and_controllers_wait_until_the_caches_have_synced() -> TestResult {
    if TestCluster::skip_on_real_cluster(
        "readiness_should_fail_and_controllers_wait_until_the_caches_have_synced",
        "fault injection (failing lists, a stopped server)",
    ) {
        return Ok(());
    }
    let env = TestEnv::start().await?;
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("existing".into());
    api.create(&PostParams::default(), &cm).await?;

    let manager = Manager::new(
        env.client(),
        quiet().health_probe_bind_address("127.0.0.1:0"),
    )?;
    let calls = Calls::default();
    let log = calls.clone();
    Controller::builder(&manager, "waits-for-sync")
        .for_::<ConfigMap>()
        .build(reconciler_fn(move |req: Request| {
            log.record(&req);
            async move { Ok::<_, BoxError>(Action::done()) }
        }))?;
    // The API server is away: the informer cannot list.
    env.faults().stop_serving().await;
    let (stop, task) = start(&manager);
    let probes = manager.health_probe_addr().await.ok_or("probes disabled")?;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let (status, body) = get(probes, "/readyz/informer-sync").await?;
    assert_eq!(status, 500, "{body}");
    assert_eq!(get(probes, "/readyz").await?.0, 500);
    assert!(calls.names().is_empty());

    env.faults().restart_serving().await?;
    assert!(eventually(|| calls.count("existing") == 1).await);
    assert_eq!(get(probes, "/readyz/informer-sync").await?.0, 200);
    assert_eq!(get(probes, "/readyz").await?.0, 200);

    let _ = stop.send(());
    task.await??;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn graceful_shutdown_should_drain_reconciles_in_flight_and_start_no_more() -> TestResult {
    let env = TestCluster::start_paused("graceful-shutdown-should-drain").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let calls = Calls::default();
    let finished = Arc::new(Mutex::new(Vec::new()));
    let (log, fin) = (calls.clone(), finished.clone());
    let controller = Controller::builder(&manager, "draining")
        .max_concurrent_reconciles(2)
        .build(reconciler_fn(move |req: Request| {
            log.record(&req);
            let fin = fin.clone();
            async move {
                tokio::time::sleep(Duration::from_secs(5)).await;
                fin.lock().push(req.name.to_string());
                Ok::<_, BoxError>(Action::done())
            }
        }))?;
    let (stop, task) = start(&manager);
    for name in ["a", "b", "c"] {
        controller
            .queue()
            .add(Request::namespaced(ns.as_str(), name));
    }
    assert!(eventually(|| calls.names().len() == 2).await);
    let stopped_at = Instant::now();
    let _ = stop.send(());
    task.await??;

    // Both reconciles in flight ran to their end; the queued one never began.
    let mut done = finished.lock().clone();
    done.sort();
    assert_eq!(done, ["a", "b"]);
    assert_eq!(calls.names(), ["a", "b"]);
    assert!(stopped_at.elapsed() < Duration::from_secs(6));
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn graceful_shutdown_should_give_up_on_reconciles_past_its_timeout() -> TestResult {
    let env = TestCluster::start_paused("graceful-shutdown-should-give-").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(
        env.client(),
        quiet().graceful_shutdown_timeout(Some(Duration::from_secs(1))),
    )?;
    let calls = Calls::default();
    let log = calls.clone();
    let controller = Controller::builder(&manager, "stuck-on-shutdown").build(reconciler_fn(
        move |req: Request| {
            log.record(&req);
            async move {
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok::<_, BoxError>(Action::done())
            }
        },
    ))?;
    let (stop, task) = start(&manager);
    controller
        .queue()
        .add(Request::namespaced(ns.as_str(), "forever"));
    assert!(eventually(|| calls.count("forever") == 1).await);
    let stopped_at = Instant::now();
    let _ = stop.send(());
    let result = task.await?;
    assert!(
        matches!(result, Err(Error::GracefulShutdownTimeout(_))),
        "{result:?}"
    );
    assert!(stopped_at.elapsed() < Duration::from_secs(10));
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn controllers_of_one_manager_should_share_one_informer_per_type() -> TestResult {
    let env = TestCluster::start_paused("controllers-of-one-manager-sho").await?;
    let ns = env.namespace().to_owned();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("shared".into());
    api.create(&PostParams::default(), &cm).await?;

    let manager = Manager::new(env.client(), scoped(&ns))?;
    let seen: Arc<Mutex<HashMap<&'static str, usize>>> = Arc::default();
    for name in ["first-reader", "second-reader"] {
        let seen = seen.clone();
        Controller::builder(&manager, name)
            .for_::<ConfigMap>()
            .build(reconciler_fn(move |_req: Request| {
                *seen.lock().entry(name).or_default() += 1;
                async move { Ok::<_, BoxError>(Action::done()) }
            }))?;
    }
    // A third, built after start, reads the same cache.
    let (stop, task) = start(&manager);
    assert!(eventually(|| seen.lock().len() == 2).await);
    let late = seen.clone();
    Controller::builder(&manager, "late-reader")
        .for_::<ConfigMap>()
        .build(reconciler_fn(move |_req: Request| {
            *late.lock().entry("late-reader").or_default() += 1;
            async move { Ok::<_, BoxError>(Action::done()) }
        }))?;
    assert!(eventually(|| seen.lock().len() == 3).await);

    let factory = format!("{:?}", manager.informer_factory());
    assert_eq!(factory.matches("configmaps").count(), 1, "{factory}");

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_builder_should_refuse_bad_settings() -> TestResult {
    let env = TestCluster::start_paused("a-builder-should-refuse-bad-se").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let noop = || reconciler_fn(|_req: Request| async { Ok::<_, BoxError>(Action::done()) });
    let invalid = |r: kcr_controller_manager::Result<Controller>| {
        matches!(r, Err(Error::InvalidController { .. }))
    };
    assert!(invalid(Controller::builder(&manager, "").build(noop())));
    assert!(invalid(
        Controller::builder(&manager, "owns-alone")
            .owns::<ConfigMap>()
            .build(noop())
    ));
    assert!(invalid(
        Controller::builder(&manager, "two-fors")
            .for_::<ConfigMap>()
            .for_::<Deployment>()
            .build(noop())
    ));
    Controller::builder(&manager, "unique").build(noop())?;
    assert!(matches!(
        Controller::builder(&manager, "unique").build(noop()),
        Err(Error::ControllerNameTaken(_))
    ));
    Controller::builder(&manager, "unique")
        .skip_name_validation(true)
        .build(noop())?;
    // A refused name is free again.
    Controller::builder(&manager, "two-fors").build(noop())?;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_terminal_error_should_keep_the_requests_failure_count() -> TestResult {
    let env = TestCluster::start_paused("a-terminal-error-should-keep-t").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let calls = Calls::default();
    let log = calls.clone();
    let controller = Controller::builder(&manager, "terminal-keeps-count").build(reconciler_fn(
        move |req: Request| {
            let n = log.record(&req);
            async move {
                match n {
                    1 | 2 => Err(BoxError::from(Failed)),
                    _ => Err(TerminalError::new("cannot be fixed").into()),
                }
            }
        },
    ))?;
    let (stop, task) = start(&manager);
    let req = Request::namespaced(ns.as_str(), "doomed");
    controller.queue().add(req.clone());
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(calls.count("doomed"), 3);
    // controller-runtime does not call Forget on a terminal error.
    assert_eq!(controller.queue().num_requeues(&req), 2);
    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_zero_reconcile_timeout_should_mean_no_deadline() -> TestResult {
    let env = TestCluster::start_paused("a-zero-reconcile-timeout-shoul").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let calls = Calls::default();
    let log = calls.clone();
    let controller = Controller::builder(&manager, "zero-timeout")
        .reconcile_timeout(Duration::ZERO)
        .build(reconciler_fn(move |req: Request| {
            log.record(&req);
            async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Ok::<_, BoxError>(Action::done())
            }
        }))?;
    let (stop, task) = start(&manager);
    controller
        .queue()
        .add(Request::namespaced(ns.as_str(), "slow"));
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(calls.count("slow"), 1);
    assert_eq!(total("zero-timeout", "success"), 1);
    assert_eq!(
        counter(ControllerMetrics::reconcile_timeouts, "zero-timeout"),
        0
    );
    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn zero_max_concurrent_reconciles_should_mean_the_default_of_one() -> TestResult {
    let env = TestCluster::start_paused("zero-max-concurrent-reconciles").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let calls = Calls::default();
    let log = calls.clone();
    let busy = Arc::new(AtomicUsize::new(0));
    let most = Arc::new(AtomicUsize::new(0));
    let (b, m) = (busy.clone(), most.clone());
    let controller = Controller::builder(&manager, "zero-workers")
        .max_concurrent_reconciles(0)
        .build(reconciler_fn(move |req: Request| {
            log.record(&req);
            let (b, m) = (b.clone(), m.clone());
            async move {
                m.fetch_max(b.fetch_add(1, Ordering::SeqCst) + 1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(10)).await;
                b.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, BoxError>(Action::done())
            }
        }))?;
    let (stop, task) = start(&manager);
    for i in 0..5 {
        controller
            .queue()
            .add(Request::namespaced(ns.as_str(), format!("r{i}")));
    }
    assert!(eventually(|| calls.names().len() == 5).await);
    assert_eq!(most.load(Ordering::SeqCst), 1);
    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

/// controller-runtime's default with the priority queue is the per-item
/// exponential limiter alone: 150 requests failing at once are all retried
/// 5 ms later (client-go's overall bucket of 100 would hold back the last
/// 50 by 100 ms each).
#[tokio::test(start_paused = true)]
async fn the_default_rate_limiter_should_be_per_item_exponential_alone() -> TestResult {
    let env = TestCluster::start_paused("the-default-rate-limiter-shoul").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let calls = Calls::default();
    let log = calls.clone();
    let controller = Controller::builder(&manager, "per-item-limiter").build(reconciler_fn(
        move |req: Request| {
            let n = log.record(&req);
            async move {
                if n == 1 {
                    Err(BoxError::from(Failed))
                } else {
                    Ok(Action::done())
                }
            }
        },
    ))?;
    let (stop, task) = start(&manager);
    tokio::time::sleep(Duration::from_millis(100)).await;
    for i in 0..150 {
        controller
            .queue()
            .add(Request::namespaced(ns.as_str(), format!("r{i}")));
    }
    let names: Vec<String> = (0..150).map(|i| format!("r{i}")).collect();
    assert!(eventually(|| names.iter().all(|name| calls.count(name) == 2)).await);
    let timing = Timing::of(&env);
    for name in &names {
        timing.assert_all_about(&gaps(&calls.times(name)), &[5 * MS], name);
    }
    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

/// The reconcile sees its deadline from the start, and its token is
/// cancelled at the deadline before its future is dropped: a task it
/// spawned to clean up runs at that moment.
#[tokio::test(start_paused = true)]
async fn a_reconcile_should_see_its_deadline_and_be_told_before_it_is_dropped() -> TestResult {
    let env = TestCluster::start_paused("a-reconcile-should-see-its-dea").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let calls = Calls::default();
    let log = calls.clone();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let cleaned = Arc::new(Mutex::new(None));
    let (s, c) = (seen.clone(), cleaned.clone());
    let controller = Controller::builder(&manager, "sees-deadline")
        .reconcile_timeout(Duration::from_secs(1))
        .build(reconciler_fn(move |req: Request| {
            let n = log.record(&req);
            let (s, c) = (s.clone(), c.clone());
            async move {
                let context = ReconcileContext::current().ok_or("no reconcile context")?;
                s.lock().push((Instant::now(), context.deadline()));
                match &*req.name {
                    // Stops its own work before the deadline: a success.
                    "careful" => {
                        let deadline = context.deadline().ok_or("no deadline")?;
                        let work = tokio::time::sleep(Duration::from_secs(10));
                        let cut = tokio::time::timeout_at(deadline - 100 * MS, work).await;
                        assert!(cut.is_err());
                        Ok::<_, BoxError>(Action::done())
                    }
                    // Ignores it, but leaves a clean-up task behind.
                    _ if n == 1 => {
                        let token = context.cancellation_token().clone();
                        tokio::spawn(async move {
                            token.cancelled().await;
                            *c.lock() = Some(Instant::now());
                        });
                        tokio::time::sleep(Duration::from_secs(10)).await;
                        Ok(Action::done())
                    }
                    _ => Ok(Action::done()),
                }
            }
        }))?;
    assert!(ReconcileContext::current().is_none());
    let (stop, task) = start(&manager);
    tokio::time::sleep(Duration::from_millis(100)).await;
    controller
        .queue()
        .add(Request::namespaced(ns.as_str(), "careful"));
    tokio::time::sleep(Duration::from_secs(2)).await;
    controller
        .queue()
        .add(Request::namespaced(ns.as_str(), "careless"));
    assert!(eventually(|| calls.count("careless") == 2).await);

    // Exact under the paused clock; on a real clock the reconcile reads the time a moment
    // after its deadline was set.
    let timing = Timing::of(&env);
    let seen = seen.lock().clone();
    for (called, deadline) in &seen {
        let deadline = deadline.ok_or("no deadline")?;
        timing.assert_about(
            deadline.duration_since(*called),
            Duration::from_secs(1),
            "the deadline, after the call",
        );
    }
    assert_eq!(calls.count("careful"), 1);
    assert_eq!(total("sees-deadline", "success"), 2);
    assert_eq!(
        counter(ControllerMetrics::reconcile_timeouts, "sees-deadline"),
        1
    );
    let careless = calls.times("careless");
    let cleaned = cleaned.lock().ok_or("the clean-up task never ran")?;
    timing.assert_about(
        cleaned.duration_since(careless[0]),
        Duration::from_secs(1),
        "the clean-up, after the call",
    );

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

/// Every list of `resource` fails: its informer never syncs.
/// Makes every list of `resource` fail, and every watch too: informers start with a
/// streaming list (a watch with `sendInitialEvents`) and fall back to a list.
fn lists_always_fail(env: &TestEnv, resource: &str) {
    for verb in ["list", "watch"] {
        env.faults().fail_next(
            usize::MAX,
            Failure::internal_error().verb(verb).resource(resource),
        );
    }
}

fn is_cache_sync_timeout(e: &Error, name: &str, resource: &str) -> bool {
    match e {
        Error::CacheSyncTimeout {
            controller,
            resources,
            ..
        } => controller == name && resources.iter().any(|r| r.starts_with(resource)),
        Error::Runnable(inner) => inner
            .downcast_ref::<Error>()
            .is_some_and(|e| is_cache_sync_timeout(e, name, resource)),
        _ => false,
    }
}

#[tokio::test(start_paused = true)]
async fn a_manager_should_fail_to_start_when_a_controllers_caches_do_not_sync_in_time() -> TestResult
{
    if TestCluster::skip_on_real_cluster(
        "a_manager_should_fail_to_start_when_a_controllers_caches_do_not_sync_in_time",
        "fault injection (failing lists, a stopped server)",
    ) {
        return Ok(());
    }
    let env = TestEnv::start().await?;
    lists_always_fail(&env, "configmaps");
    let manager = Manager::new(env.client(), quiet())?;
    Controller::builder(&manager, "never-synced")
        .for_::<ConfigMap>()
        .cache_sync_timeout(Duration::from_secs(10))
        .build(reconciler_fn(|_req: Request| async {
            Ok::<_, BoxError>(Action::done())
        }))?;
    let started = Instant::now();
    let (_stop, task) = start(&manager);
    let result = tokio::time::timeout(Duration::from_secs(60), task).await??;
    let elapsed = started.elapsed();
    let error = result.err().ok_or("the manager started")?;
    assert!(
        is_cache_sync_timeout(&error, "never-synced", "configmaps/v1"),
        "{error}"
    );
    assert!(error.to_string().contains("configmaps/v1"), "{error}");
    assert!(
        elapsed >= Duration::from_secs(10) && elapsed < Duration::from_secs(11),
        "{elapsed:?}"
    );
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn the_default_cache_sync_timeout_should_be_two_minutes() -> TestResult {
    if TestCluster::skip_on_real_cluster(
        "the_default_cache_sync_timeout_should_be_two_minutes",
        "fault injection (failing lists, a stopped server)",
    ) {
        return Ok(());
    }
    let env = TestEnv::start().await?;
    lists_always_fail(&env, "configmaps");
    let manager = Manager::new(env.client(), quiet())?;
    Controller::builder(&manager, "never-synced-default")
        .for_::<ConfigMap>()
        .build(reconciler_fn(|_req: Request| async {
            Ok::<_, BoxError>(Action::done())
        }))?;
    let started = Instant::now();
    let (_stop, task) = start(&manager);
    let result = tokio::time::timeout(Duration::from_secs(600), task).await??;
    let elapsed = started.elapsed();
    let error = result.err().ok_or("the manager started")?;
    assert!(
        is_cache_sync_timeout(&error, "never-synced-default", "configmaps/v1"),
        "{error}"
    );
    assert!(
        elapsed >= Duration::from_secs(120) && elapsed < Duration::from_secs(121),
        "{elapsed:?}"
    );
    Ok(())
}

/// A controller added to a running manager waits for its own informers
/// with its own timeout; its failed start stops the manager with the error.
#[tokio::test(start_paused = true)]
async fn a_controller_added_later_should_fail_its_start_when_its_caches_do_not_sync() -> TestResult
{
    if TestCluster::skip_on_real_cluster(
        "a_controller_added_later_should_fail_its_start_when_its_caches_do_not_sync",
        "fault injection (failing lists, a stopped server)",
    ) {
        return Ok(());
    }
    let env = TestEnv::start().await?;
    let manager = Manager::new(env.client(), quiet())?;
    let (_stop, task) = start(&manager);
    tokio::time::sleep(Duration::from_secs(1)).await;
    lists_always_fail(&env, "secrets");
    let added = Instant::now();
    Controller::builder(&manager, "late-never-synced")
        .for_::<k8s_openapi::api::core::v1::Secret>()
        .cache_sync_timeout(Duration::from_secs(5))
        .build(reconciler_fn(|_req: Request| async {
            Ok::<_, BoxError>(Action::done())
        }))?;
    let result = tokio::time::timeout(Duration::from_secs(60), task).await??;
    let elapsed = added.elapsed();
    let error = result.err().ok_or("the manager kept running")?;
    assert!(
        is_cache_sync_timeout(&error, "late-never-synced", "secrets/v1"),
        "{error}"
    );
    assert!(
        elapsed >= Duration::from_secs(5) && elapsed < Duration::from_secs(6),
        "{elapsed:?}"
    );
    Ok(())
}

/// controller-runtime's `controller.NewUnmanaged` + `Start`: no manager,
/// informers of its own, stopped by its token.
#[tokio::test(start_paused = true)]
async fn a_controller_should_run_without_a_manager() -> TestResult {
    let env = TestCluster::start_paused("a-controller-should-run-withou").await?;
    let ns = env.namespace().to_owned();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("alone".into());
    api.create(&PostParams::default(), &cm).await?;

    let calls = Calls::default();
    let log = calls.clone();
    let controller = Controller::unmanaged(env.client(), "unmanaged")
        .for_::<ConfigMap>()
        .build(reconciler_fn(move |req: Request| {
            log.record(&req);
            async { Ok::<_, BoxError>(Action::done()) }
        }))?;
    let stop = tokio_util::sync::CancellationToken::new();
    let running = tokio::spawn({
        let (controller, stop) = (controller.clone(), stop.clone());
        async move { controller.start(stop).await }
    });
    assert!(eventually(|| calls.count("alone") == 1).await);
    // A change made now reaches it through its own informer.
    let mut cm = api.get("alone").await?;
    cm.data = Some([("k".to_owned(), "v".to_owned())].into());
    api.replace("alone", &PostParams::default(), &cm).await?;
    assert!(eventually(|| calls.count("alone") == 2).await);
    assert!(matches!(
        controller
            .start(tokio_util::sync::CancellationToken::new())
            .await,
        Err(Error::ControllerAlreadyStarted(_))
    ));
    stop.cancel();
    running.await??;

    // A managed controller starts only with its manager.
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let managed = Controller::builder(&manager, "managed-not-alone").build(reconciler_fn(
        |_req: Request| async { Ok::<_, BoxError>(Action::done()) },
    ))?;
    assert!(matches!(
        managed
            .start(tokio_util::sync::CancellationToken::new())
            .await,
        Err(Error::InvalidController { .. })
    ));
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn an_unmanaged_controller_should_fail_its_start_when_its_caches_do_not_sync() -> TestResult {
    if TestCluster::skip_on_real_cluster(
        "an_unmanaged_controller_should_fail_its_start_when_its_caches_do_not_sync",
        "fault injection (failing lists, a stopped server)",
    ) {
        return Ok(());
    }
    let env = TestEnv::start().await?;
    lists_always_fail(&env, "configmaps");
    let controller = Controller::unmanaged(env.client(), "unmanaged-never-synced")
        .for_::<ConfigMap>()
        .cache_sync_timeout(Duration::from_secs(3))
        .build(reconciler_fn(|_req: Request| async {
            Ok::<_, BoxError>(Action::done())
        }))?;
    let started = Instant::now();
    let result = controller
        .start(tokio_util::sync::CancellationToken::new())
        .await;
    assert_eq!(started.elapsed(), Duration::from_secs(3));
    let error = result.err().ok_or("the controller started")?;
    assert!(
        is_cache_sync_timeout(&error, "unmanaged-never-synced", "configmaps/v1"),
        "{error}"
    );
    Ok(())
}
