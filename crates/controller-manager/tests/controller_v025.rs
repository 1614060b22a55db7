//! controller-runtime v0.25's controller features over real HTTP against kcr-testenv, under a
//! paused clock: warmup before leadership, the priority a reconcile requeues with, reconciles
//! held until the event handlers have synced, the sync period of one type, and the client's
//! request metrics.
//!
//! With `KCR_TEST_KUBECONFIG` set, they run against that cluster in a namespace of their own;
//! the parts that need fault injection skip there, saying so.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcr_controller_manager::controller::{RetryPriority, reconciler_fn};
use kcr_controller_manager::leaderelection::{LeaderElectionConfig, LeaderElector, LeaseLock};
use kcr_controller_manager::manager::{ByObject, InformerOptions};
use kcr_controller_manager::{Action, BoxError, Controller, Manager, Options, Request};
use kcr_testenv::{Failure, TestCluster};
use kcr_workqueue::AddOpts;
use kube::Api;
use kube::api::PostParams;
use parking_lot::Mutex;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

mod common;
use common::start;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The label every object these tests create carries; the caches select on it.
const E2E_OBJECT: &str = "kcr.dev/e2e-object";

fn quiet() -> Options {
    Options::default()
        .metrics_bind_address("0")
        .health_probe_bind_address("0")
}

/// The options of a manager whose cache holds the test's own objects in its namespace.
fn scoped(ns: &str) -> Options {
    quiet().informers(
        InformerOptions::default()
            .default_namespaces([ns])
            .default_label_selector(format!("{E2E_OBJECT}=true")),
    )
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

/// The reconciles a reconciler received, in order, with their time.
#[derive(Clone, Default)]
struct Calls(Arc<Mutex<Vec<(String, Instant)>>>);

impl Calls {
    fn record(&self, req: &Request) -> usize {
        let mut calls = self.0.lock();
        calls.push((req.name.to_string(), Instant::now()));
        calls.iter().filter(|(n, _)| **n == *req.name).count()
    }

    fn count(&self, name: &str) -> usize {
        self.0.lock().iter().filter(|(n, _)| n == name).count()
    }

    fn names(&self) -> Vec<String> {
        self.0.lock().iter().map(|(n, _)| n.clone()).collect()
    }

    fn first(&self, name: &str) -> Option<Instant> {
        self.0
            .lock()
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, t)| *t)
    }
}

async fn create_config_map(client: &kube::Client, ns: &str, name: &str) -> TestResult {
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(ns.into()),
            labels: Some(BTreeMap::from([(E2E_OBJECT.into(), "true".into())])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("k".into(), "v".into())])),
        ..ConfigMap::default()
    };
    Api::<ConfigMap>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &cm)
        .await?;
    Ok(())
}

#[derive(Debug, thiserror::Error)]
#[error("failed on purpose")]
struct Failed;

#[tokio::test(start_paused = true)]
async fn a_requeue_should_go_back_at_the_priority_the_reconcile_asks_for() -> TestResult {
    let env = TestCluster::start_paused("a-requeue-should-go-back-at-th").await?;
    let ns = env.namespace().to_owned();
    let manager = Manager::new(env.client(), scoped(&ns))?;
    let calls = Calls::default();
    let log = calls.clone();
    let gate = Arc::new(Notify::new());
    let held = gate.clone();
    let controller =
        Controller::builder(&manager, "priorities").build(reconciler_fn(move |req: Request| {
            let n = log.record(&req);
            let held = held.clone();
            async move {
                match (&*req.name, n) {
                    // A poll that matters more than fresh work.
                    ("poll", 1) => {
                        Ok(Action::requeue_after(Duration::from_secs(1)).with_priority(2000))
                    }
                    // A failure retried ahead of fresh work, behind the poll.
                    ("fails", 1) => Err(RetryPriority::new(Failed, 1000).into()),
                    ("block", 1) => {
                        held.notified().await;
                        Ok(Action::done())
                    }
                    _ => Ok::<_, BoxError>(Action::done()),
                }
            }
        }))?;
    let (stop, task) = start(&manager);
    let queue = controller.queue();
    // One worker: "poll" asks to come back in 1 s, "fails" is retried 5 ms after it fails, and
    // "block" then holds the worker while both come due and fresh work arrives.
    for name in ["poll", "fails", "block"] {
        queue.add(Request::namespaced(ns.as_str(), name));
    }
    assert!(eventually(|| calls.count("block") == 1).await);
    queue.add_with_opts(
        Request::namespaced(ns.as_str(), "fresh"),
        AddOpts::default().priority(5),
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    gate.notify_one();
    assert!(eventually(|| calls.count("fresh") == 1 && calls.count("poll") == 2).await);
    // Taken at 0, "poll" and "fails" would come back at 0 and go after "fresh" (at 5).
    let after_block: Vec<String> = calls
        .names()
        .into_iter()
        .skip_while(|n| n != "block")
        .skip(1)
        .collect();
    assert_eq!(
        after_block,
        ["poll", "fails", "fresh"],
        "order of reconciles"
    );

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

/// An elector of another replica holding `lease` until `stop` is cancelled, then releasing it.
fn other_replica(
    client: kube::Client,
    ns: &str,
    lease: &str,
    stop: &CancellationToken,
) -> Result<(LeaderElector, tokio::task::JoinHandle<()>), Box<dyn std::error::Error>> {
    let elector = LeaderElector::new(
        LeaderElectionConfig::new(LeaseLock::new(client, ns, lease, "someone-else"))
            .name(format!("{lease}-other"))
            .release_on_cancel(true)
            .on_started_leading(|ctx| async move { ctx.cancelled().await }),
    )?;
    let task = tokio::spawn({
        let (elector, stop) = (elector.clone(), stop.clone());
        async move { elector.run(stop).await }
    });
    Ok((elector, task))
}

#[tokio::test(start_paused = true)]
async fn a_warmed_up_controller_should_sync_before_it_leads_and_reconcile_at_once_when_it_does()
-> TestResult {
    let env = TestCluster::start_paused("a-warmed-up-controller-should").await?;
    let ns = env.namespace().to_owned();
    let client = env.client();
    for name in ["one", "two"] {
        create_config_map(&client, &ns, name).await?;
    }
    let other_stop = CancellationToken::new();
    let (other, other_task) = other_replica(client.clone(), &ns, "warmup-lock", &other_stop)?;
    assert!(
        eventually(|| other.is_leader()).await,
        "the other replica leads"
    );

    let manager = Manager::new(
        client,
        scoped(&ns)
            .leader_election("warmup-lock")
            .leader_election_namespace(ns.as_str())
            .leader_election_identity("me"),
    )?;
    let (warm_calls, cold_calls) = (Calls::default(), Calls::default());
    let build = |name: &str, warmup: bool, calls: &Calls| {
        let log = calls.clone();
        Controller::builder(&manager, name)
            .for_::<ConfigMap>()
            .enable_warmup(warmup)
            .build(reconciler_fn(move |req: Request| {
                log.record(&req);
                async { Ok::<_, BoxError>(Action::done()) }
            }))
    };
    let warm = build("warm-config-maps", true, &warm_calls)?;
    let cold = build("cold-config-maps", false, &cold_calls)?;
    let (stop, task) = start(&manager);

    // While the other replica leads, the warm controller's handlers have seen the cache: its
    // queue holds both requests. Nothing is reconciled; the cold controller has not started.
    assert!(eventually(|| warm.queue().len() == 2).await);
    // One built once the manager runs warms up at once.
    let late_calls = Calls::default();
    let late = build("late-warm-config-maps", true, &late_calls)?;
    assert!(eventually(|| late.queue().len() == 2).await);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let elector = manager.leader_elector().ok_or("no elector")?;
    assert!(!elector.is_leader());
    assert_eq!((warm.queue().len(), cold.queue().len()), (2, 0));
    let reconciled = [&warm_calls, &cold_calls, &late_calls].map(|c| c.names().len());
    assert_eq!(reconciled, [0, 0, 0]);

    // From now on no list of config maps can succeed (on kcr-testenv): leading must need none.
    if let Some(test_env) = env.test_env() {
        for verb in ["list", "watch"] {
            test_env.faults().fail_next(
                usize::MAX,
                Failure::internal_error().verb(verb).resource("configmaps"),
            );
        }
    }
    other_stop.cancel();
    other_task.await?;
    tokio::time::timeout(
        TestCluster::bound(Duration::from_secs(30)),
        manager.elected(),
    )
    .await?;
    let elected = Instant::now();
    assert!(eventually(|| warm_calls.count("one") == 1 && warm_calls.count("two") == 1).await);
    assert!(eventually(|| cold_calls.count("one") == 1 && cold_calls.count("two") == 1).await);
    assert!(eventually(|| late_calls.count("one") == 1 && late_calls.count("two") == 1).await);
    if !env.is_real() {
        // Its workers started with the lease: no wait for a sync.
        let first = warm_calls.first("one").ok_or("no reconcile")?;
        assert!(
            first.min(warm_calls.first("two").ok_or("no reconcile")?) - elected
                < kcr_informer::SYNCED_POLL_PERIOD,
            "the warm controller waited after winning the lease"
        );
    }

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn reconciles_should_wait_until_the_controllers_event_handlers_have_synced() -> TestResult {
    let env = TestCluster::start("reconciles-should-wait-until-t").await?;
    let ns = env.namespace().to_owned();
    let client = env.client();
    create_config_map(&client, &ns, "slow").await?;
    let manager = Manager::new(client, scoped(&ns))?;

    // The held controller's handler blocks in its mapping of the cached object until released:
    // its informer has synced, its handler has not.
    let entered = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    let release_rx = Arc::new(Mutex::new(release_rx));
    let (held_calls, quick_calls) = (Calls::default(), Calls::default());
    let held = {
        let log = held_calls.clone();
        let entered = entered.clone();
        Controller::builder(&manager, "held-handler")
            .watches::<ConfigMap>(move |cm| {
                entered.store(true, std::sync::atomic::Ordering::SeqCst);
                let _ = release_rx.lock().recv_timeout(Duration::from_secs(60));
                Request::from_object(cm).into_iter().collect()
            })
            .build(reconciler_fn(move |req: Request| {
                log.record(&req);
                async { Ok::<_, BoxError>(Action::done()) }
            }))?
    };
    // A request that needs no handler: reconciled as soon as the workers run.
    held.queue().add(Request::namespaced(ns.as_str(), "direct"));
    let log = quick_calls.clone();
    Controller::builder(&manager, "quick-handler")
        .for_::<ConfigMap>()
        .build(reconciler_fn(move |req: Request| {
            log.record(&req);
            async { Ok::<_, BoxError>(Action::done()) }
        }))?;
    let (stop, task) = start(&manager);

    let bound = TestCluster::bound(Duration::from_secs(10));
    let waited = tokio::time::timeout(bound, async {
        while !(entered.load(std::sync::atomic::Ordering::SeqCst) && quick_calls.count("slow") == 1)
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(
        waited.is_ok(),
        "the informer synced and the other controller ran"
    );
    // Several of the controller's sync polls later, still nothing: its handler has not synced.
    tokio::time::sleep(3 * kcr_informer::SYNCED_POLL_PERIOD).await;
    assert_eq!(held_calls.names(), Vec::<String>::new());

    release_tx.send(())?;
    let waited = tokio::time::timeout(bound, async {
        while !(held_calls.count("direct") == 1 && held_calls.count("slow") == 1) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "reconciled once the handler synced");

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_types_own_sync_period_should_replay_its_cache_alone() -> TestResult {
    let env = TestCluster::start_paused("a-types-own-sync-period-should").await?;
    let ns = env.namespace().to_owned();
    let client = env.client();
    create_config_map(&client, &ns, "replayed").await?;
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some("kept".into()),
            namespace: Some(ns.clone()),
            labels: Some(BTreeMap::from([(E2E_OBJECT.into(), "true".into())])),
            ..ObjectMeta::default()
        },
        ..Secret::default()
    };
    Api::<Secret>::namespaced(client.clone(), &ns)
        .create(&PostParams::default(), &secret)
        .await?;
    // Config maps are replayed every 2 s; secrets at the manager's period (10 hours).
    let manager = Manager::new(
        client,
        quiet().informers(
            InformerOptions::default()
                .default_namespaces([ns.as_str()])
                .default_label_selector(format!("{E2E_OBJECT}=true"))
                .by_object::<ConfigMap>(ByObject::new().sync_period(Duration::from_secs(2))),
        ),
    )?;
    let calls = Calls::default();
    let build = |calls: &Calls| {
        let log = calls.clone();
        reconciler_fn(move |req: Request| {
            log.record(&req);
            async { Ok::<_, BoxError>(Action::done()) }
        })
    };
    Controller::builder(&manager, "replayed-config-maps")
        .for_::<ConfigMap>()
        .build(build(&calls))?;
    Controller::builder(&manager, "kept-secrets")
        .for_::<Secret>()
        .build(build(&calls))?;
    let (stop, task) = start(&manager);
    assert!(eventually(|| calls.count("replayed") == 1 && calls.count("kept") == 1).await);
    tokio::time::sleep(Duration::from_millis(6500)).await;
    // As client-go's: the informer checks every 2 s whether a handler is due, so a handler
    // registered just after a check is replayed at the next check but one.
    let replays = calls.count("replayed") - 1;
    assert!((2..=3).contains(&replays), "{replays} replays in 6.5 s");
    assert_eq!(calls.count("kept"), 1, "secrets are not replayed");

    let _ = stop.send(());
    task.await??;
    env.shutdown().await;
    Ok(())
}

/// The `kube::Config` of the test's cluster: kcr-testenv's, or the one `KCR_TEST_KUBECONFIG`
/// names.
async fn config_of(env: &TestCluster) -> Result<kube::Config, Box<dyn std::error::Error>> {
    if let Some(test_env) = env.test_env() {
        return Ok(test_env.config()?);
    }
    let path = std::env::var("KCR_TEST_KUBECONFIG")?;
    let kubeconfig = kube::config::Kubeconfig::read_from(path)?;
    Ok(kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?)
}

/// The value of the sample `series` (the name and its labels, as exposed) in `text`.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
}

#[tokio::test(start_paused = true)]
async fn the_managers_client_should_count_and_time_its_requests_as_controller_runtime() -> TestResult
{
    let env = TestCluster::start_paused("the-managers-client-should-cou").await?;
    let ns = env.namespace().to_owned();
    let config = config_of(&env).await?;
    let url = &config.cluster_url;
    let host = match url.port_u16() {
        Some(port) => format!("{}:{port}", url.host().ok_or("no host")?),
        None => url.host().ok_or("no host")?.to_owned(),
    };
    let registry = kcr_metrics::Registry::new();
    let manager = Manager::from_config(
        config,
        scoped(&ns)
            .metrics_registry(registry.clone())
            .client_latency_metrics(true),
    )?;
    let client = manager.client().clone();
    let api = Api::<ConfigMap>::namespaced(client.clone(), &ns);
    assert!(api.get_opt("missing").await?.is_none());
    create_config_map(&client, &ns, "counted").await?;
    // The manager's informers list and watch through the same client.
    let calls = Calls::default();
    let log = calls.clone();
    Controller::builder(&manager, "client-metrics")
        .for_::<ConfigMap>()
        .build(reconciler_fn(move |req: Request| {
            log.record(&req);
            async { Ok::<_, BoxError>(Action::done()) }
        }))?;
    let (stop, task) = start(&manager);
    assert!(eventually(|| calls.count("counted") == 1).await);
    let _ = stop.send(());
    task.await??;

    let text = kcr_metrics::encode_text(&registry)?;
    let requests = |code: &str, method: &str| {
        sample(
            &text,
            &format!(
                r#"rest_client_requests_total{{code="{code}",host="{host}",method="{method}"}}"#
            ),
        )
    };
    assert_eq!(requests("404", "GET"), Some(1.0), "{text}");
    assert_eq!(requests("201", "POST"), Some(1.0), "{text}");
    assert!(requests("200", "GET").is_some_and(|n| n >= 1.0), "{text}");
    let latency = |verb: &str, le: &str| {
        sample(
            &text,
            &format!(
                r#"rest_client_request_duration_seconds_bucket{{host="{host}",verb="{verb}",le="{le}"}}"#
            ),
        )
    };
    assert_eq!(latency("POST", "+Inf"), Some(1.0), "{text}");

    let Some(test_env) = env.test_env() else {
        TestCluster::skip_on_real_cluster(
            "the_managers_client_should_count_and_time_its_requests",
            "kcr-testenv's injected latency and a stopped server",
        );
        env.shutdown().await;
        return Ok(());
    };
    // 300 ms on the server: between the 0.25 s and the 0.5 s bucket.
    test_env.faults().set_latency(Duration::from_millis(300));
    create_config_map(&client, &ns, "slow").await?;
    test_env.faults().set_latency(Duration::ZERO);
    // No response at all.
    test_env.faults().stop_serving().await;
    assert!(api.get_opt("unreachable").await.is_err());
    test_env.faults().restart_serving().await?;

    let text = kcr_metrics::encode_text(&registry)?;
    let latency = |verb: &str, le: &str| {
        sample(
            &text,
            &format!(
                r#"rest_client_request_duration_seconds_bucket{{host="{host}",verb="{verb}",le="{le}"}}"#
            ),
        )
    };
    assert_eq!(latency("POST", "0.25"), Some(1.0), "{text}");
    assert_eq!(latency("POST", "0.5"), Some(2.0), "{text}");
    assert_eq!(
        sample(
            &text,
            &format!(r#"rest_client_requests_total{{code="<error>",host="{host}",method="GET"}}"#)
        ),
        Some(1.0),
        "{text}"
    );
    env.shutdown().await;
    Ok(())
}
