//! Read-your-own-writes over HTTP (`CachedClient`): a reconciler that writes and reads back
//! through the cache never sees its old state, also while kcr-testenv holds watch events back;
//! the wait ends when the watch delivers the write; writes by others never hold a read back.
//! Against kcr-testenv, or the real cluster of `KCR_TEST_KUBECONFIG` (without the injected
//! delay there, whose watch latency is real).

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::time::Duration;

use common::start;
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{ConfigMap, Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kcr_controller_manager::client::{CachedClient, ReadOptions};
use kcr_controller_manager::controller::reconciler_fn;
use kcr_controller_manager::manager::InformerOptions;
use kcr_controller_manager::{Action, BoxError, Controller, Error, Manager, Options, Request};
use kcr_testenv::TestCluster;
use kube::api::{Api, DeleteParams, ObjectMeta, Patch, PatchParams, PostParams};
use tokio::time::Instant;

type TestResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

/// The label of every object a test creates (a real cluster adds config maps of its own).
const OWN_LABEL: (&str, &str) = ("kcr.dev/e2e-object", "true");
const OWN: &str = "kcr.dev/e2e-object=true";

/// How long kcr-testenv holds each watch event back in these tests.
const DELAY: Duration = Duration::from_millis(500);

fn options(ns: &str, read_your_own_writes: bool) -> Options {
    Options::default()
        .metrics_bind_address("0")
        .informers(
            InformerOptions::default()
                .default_namespaces([ns])
                .default_label_selector(OWN),
        )
        .read_your_own_writes(read_your_own_writes)
}

fn config_map(name: &str, value: i64) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(BTreeMap::from([(
                OWN_LABEL.0.to_owned(),
                OWN_LABEL.1.to_owned(),
            )])),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("v".to_owned(), value.to_string())])),
        ..ConfigMap::default()
    }
}

fn value(cm: &ConfigMap) -> i64 {
    cm.data
        .as_ref()
        .and_then(|d| d.get("v"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(-1)
}

fn with_value(cm: &ConfigMap, v: i64) -> ConfigMap {
    let mut next = cm.clone();
    next.data = Some(BTreeMap::from([("v".to_owned(), v.to_string())]));
    next
}

/// Starts the manager and waits until its caches of config maps have synced.
async fn started(
    manager: &Manager,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<kcr_controller_manager::Result<()>>,
    CachedClient<ConfigMap>,
) {
    let client = manager.cached_client::<ConfigMap>();
    let (stop, task) = start(manager);
    let bound = Instant::now() + TestCluster::bound(Duration::from_secs(20));
    while !client.informers().iter().all(|i| i.has_synced()) {
        assert!(Instant::now() < bound, "the caches did not sync");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    (stop, task, client)
}

#[tokio::test(start_paused = true)]
async fn a_reconciler_that_writes_then_reads_should_never_see_its_old_state() -> TestResult {
    let cluster = TestCluster::start_paused("ryow-reconciler-never-stale").await?;
    let ns = cluster.namespace().to_owned();
    if let Some(env) = cluster.test_env() {
        env.faults().delay_watch_events(DELAY);
    }
    Api::<ConfigMap>::namespaced(cluster.client(), &ns)
        .create(&PostParams::default(), &config_map("counter", 0))
        .await?;
    let manager = Manager::new(cluster.client(), options(&ns, true))?;
    let client = manager.cached_client::<ConfigMap>();
    let stale = Arc::new(AtomicUsize::new(0));
    let last_written = Arc::new(AtomicI64::new(0));
    let waits = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let (done_tx, mut done_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    Controller::builder(&manager, "ryow-counter")
        .for_::<ConfigMap>()
        .build(reconciler_fn({
            let (client, stale, last_written, waits) = (
                client.clone(),
                stale.clone(),
                last_written.clone(),
                waits.clone(),
            );
            move |req: Request| {
                let (client, stale, last_written, waits, done_tx) = (
                    client.clone(),
                    stale.clone(),
                    last_written.clone(),
                    waits.clone(),
                    done_tx.clone(),
                );
                async move {
                    let ns = req.namespace.as_deref();
                    // Three increments in a row, each read back at once from the cache.
                    for _ in 0..3 {
                        let Some(current) = client.get(ns, &req.name).await? else {
                            return Ok::<_, BoxError>(Action::done());
                        };
                        let n = value(&current);
                        if n < last_written.load(Ordering::SeqCst) {
                            stale.fetch_add(1, Ordering::SeqCst);
                        }
                        if n >= 6 {
                            let _ = done_tx.send(());
                            return Ok(Action::done());
                        }
                        // A stale read would make this a 409 Conflict.
                        let written = client
                            .replace(
                                ns,
                                &req.name,
                                &PostParams::default(),
                                &with_value(&current, n + 1),
                            )
                            .await?;
                        last_written.store(value(&written), Ordering::SeqCst);
                        let at = Instant::now();
                        let back = client.get(ns, &req.name).await?;
                        waits.lock().push(at.elapsed());
                        if back.as_deref().map(value) != Some(n + 1) {
                            stale.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                    Ok(Action::done())
                }
            }
        }))?;
    let (stop, task) = start(&manager);
    tokio::time::timeout(TestCluster::bound(Duration::from_secs(60)), done_rx.recv()).await?;
    let _ = stop.send(());
    task.await??;
    assert_eq!(
        stale.load(Ordering::SeqCst),
        0,
        "a read showed an older state"
    );
    let waits = waits.lock().clone();
    assert_eq!(waits.len(), 6, "six writes read back");
    if !cluster.is_real() {
        // Each read waited for its write's watch event, held DELAY: no less (else it read
        // the cache before the event) and not much more (it ended on the event, not a timer).
        for w in &waits {
            assert!(
                *w >= DELAY && *w < DELAY + Duration::from_millis(100),
                "waited {w:?} for an event held {DELAY:?}: {waits:?}"
            );
        }
    }
    cluster.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn without_read_your_own_writes_the_read_after_a_write_should_be_stale() -> TestResult {
    // The control of the test above: the same write and read back, with the option off.
    let cluster = TestCluster::start_paused("ryow-off-is-stale").await?;
    let Some(env) = cluster.test_env() else {
        TestCluster::skip_on_real_cluster(
            "without_read_your_own_writes_the_read_after_a_write_should_be_stale",
            "kcr-testenv's watch event delay",
        );
        return Ok(());
    };
    let ns = cluster.namespace().to_owned();
    Api::<ConfigMap>::namespaced(cluster.client(), &ns)
        .create(&PostParams::default(), &config_map("counter", 0))
        .await?;
    let manager = Manager::new(cluster.client(), options(&ns, false))?;
    let (stop, task, client) = started(&manager).await;
    assert!(!client.reads_own_writes());
    env.faults().delay_watch_events(DELAY);
    let current = client
        .get(Some(&ns), "counter")
        .await?
        .ok_or("not cached")?;
    client
        .replace(
            Some(&ns),
            "counter",
            &PostParams::default(),
            &with_value(&current, 1),
        )
        .await?;
    let back = client
        .get(Some(&ns), "counter")
        .await?
        .ok_or("not cached")?;
    assert_eq!(
        value(&back),
        0,
        "without the option the cache is read as it is"
    );
    let _ = stop.send(());
    task.await??;
    cluster.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn writes_by_others_and_to_other_objects_should_not_hold_a_get_back() -> TestResult {
    let cluster = TestCluster::start_paused("ryow-others-do-not-block").await?;
    let Some(env) = cluster.test_env() else {
        TestCluster::skip_on_real_cluster(
            "writes_by_others_and_to_other_objects_should_not_hold_a_get_back",
            "kcr-testenv's watch event delay",
        );
        return Ok(());
    };
    let ns = cluster.namespace().to_owned();
    let plain = Api::<ConfigMap>::namespaced(cluster.client(), &ns);
    plain
        .create(&PostParams::default(), &config_map("theirs", 0))
        .await?;
    plain
        .create(&PostParams::default(), &config_map("other", 0))
        .await?;
    let manager = Manager::new(cluster.client(), options(&ns, true))?;
    let (stop, task, client) = started(&manager).await;
    let long = Duration::from_secs(2);
    env.faults().delay_watch_events(long);

    // Someone else's write: the read does not wait for it (and shows the cache as it is).
    let theirs = plain.get("theirs").await?;
    plain
        .replace("theirs", &PostParams::default(), &with_value(&theirs, 1))
        .await?;
    let at = Instant::now();
    let read = client.get(Some(&ns), "theirs").await?.ok_or("not cached")?;
    assert_eq!(
        at.elapsed(),
        Duration::ZERO,
        "a foreign write held the read"
    );
    assert_eq!(value(&read), 0);

    // Our write of `mine` holds a get of `mine` and a list, not a get of `other`.
    client
        .create(Some(&ns), &PostParams::default(), &config_map("mine", 7))
        .await?;
    let at = Instant::now();
    assert!(client.get(Some(&ns), "other").await?.is_some());
    assert_eq!(
        at.elapsed(),
        Duration::ZERO,
        "a write of another object held the get"
    );
    let mine = client.get(Some(&ns), "mine").await?.ok_or("not cached")?;
    assert_eq!(value(&mine), 7);
    assert!(
        at.elapsed() >= long,
        "the get of our object waited for its event"
    );
    let _ = stop.send(());
    task.await??;
    cluster.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_list_should_wait_for_every_own_write_and_a_delete_for_its_event() -> TestResult {
    let cluster = TestCluster::start_paused("ryow-list-and-delete").await?;
    let ns = cluster.namespace().to_owned();
    if let Some(env) = cluster.test_env() {
        env.faults().delay_watch_events(DELAY);
    }
    let manager = Manager::new(cluster.client(), options(&ns, true))?;
    let (stop, task, client) = started(&manager).await;
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        client
            .create(
                Some(&ns),
                &PostParams::default(),
                &config_map(name, i as i64),
            )
            .await?;
    }
    let mut names: Vec<String> = client
        .list()
        .await?
        .iter()
        .filter_map(|cm| cm.metadata.name.clone())
        .collect();
    names.sort();
    assert_eq!(names, ["a", "b", "c"], "the list shows every own create");

    // A delete (kube-apiserver answers it with a Status: the UID is awaited).
    client
        .delete(Some(&ns), "b", &DeleteParams::default())
        .await?;
    assert!(
        client.get(Some(&ns), "b").await?.is_none(),
        "the get waited for the delete"
    );
    // Recreated at once: the old UID's delete and the new version are both awaited.
    let recreated = client
        .create(Some(&ns), &PostParams::default(), &config_map("b", 9))
        .await?;
    let b = client.get(Some(&ns), "b").await?.ok_or("not cached")?;
    assert_eq!(b.metadata.uid, recreated.metadata.uid);
    assert_eq!(value(&b), 9);
    // Patch and server-side apply, read back at once.
    client
        .patch(
            Some(&ns),
            "a",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"data": {"v": "40"}})),
        )
        .await?;
    assert_eq!(value(&*client.get(Some(&ns), "a").await?.ok_or("a")?), 40);
    let mut applied = config_map("c", 50);
    applied.metadata.namespace = Some(ns.clone());
    client
        .patch(
            Some(&ns),
            "c",
            &PatchParams::apply("ryow-test").force(),
            &Patch::Apply(&applied),
        )
        .await?;
    let values: BTreeMap<String, i64> = client
        .list()
        .await?
        .iter()
        .map(|cm| (cm.metadata.name.clone().unwrap_or_default(), value(cm)))
        .collect();
    assert_eq!(
        values,
        BTreeMap::from([("a".into(), 40), ("b".into(), 9), ("c".into(), 50)])
    );
    let _ = stop.send(());
    task.await??;
    cluster.shutdown().await;
    Ok(())
}

#[tokio::test(start_paused = true)]
async fn a_wait_should_end_at_its_deadline_with_a_typed_error_or_not_at_all() -> TestResult {
    let cluster = TestCluster::start_paused("ryow-deadline").await?;
    let Some(env) = cluster.test_env() else {
        TestCluster::skip_on_real_cluster(
            "a_wait_should_end_at_its_deadline_with_a_typed_error_or_not_at_all",
            "kcr-testenv's watch event delay",
        );
        return Ok(());
    };
    let ns = cluster.namespace().to_owned();
    let manager = Manager::new(cluster.client(), options(&ns, true))?;
    let (stop, task, client) = started(&manager).await;
    env.faults().delay_watch_events(Duration::from_secs(30));
    client
        .create(Some(&ns), &PostParams::default(), &config_map("slow", 1))
        .await?;
    // The per-call opt-out: the cache as it is, at once.
    let at = Instant::now();
    let as_is = client
        .get_with(Some(&ns), "slow", &ReadOptions::new().wait(false))
        .await?;
    assert!(as_is.is_none());
    assert_eq!(at.elapsed(), Duration::ZERO);
    // A deadline: the typed error, exactly then.
    let r = client
        .get_with(
            Some(&ns),
            "slow",
            &ReadOptions::new().timeout(Duration::from_secs(2)),
        )
        .await;
    assert!(
        matches!(&r, Err(Error::CacheNotCaughtUp { object: Some(o), wanted, reached, .. })
            if *o == format!("{ns}/slow") && wanted > reached),
        "{r:?}"
    );
    assert_eq!(at.elapsed(), Duration::from_secs(2));
    let r = client
        .list_with(&ReadOptions::new().timeout(Duration::from_secs(1)))
        .await;
    assert!(
        matches!(&r, Err(Error::CacheNotCaughtUp { object: None, .. })),
        "{r:?}"
    );
    // Without a deadline of the call's or a reconcile's: the default bound.
    let r = client.get(Some(&ns), "slow").await;
    assert!(matches!(r, Err(Error::CacheNotCaughtUp { .. })), "{r:?}");
    assert_eq!(
        at.elapsed(),
        Duration::from_secs(3) + kcr_controller_manager::client::DEFAULT_READ_TIMEOUT
    );
    let _ = stop.send(());
    task.await??;
    cluster.shutdown().await;
    Ok(())
}

fn deployment(name: &str) -> Deployment {
    let labels = BTreeMap::from([
        ("app".to_owned(), name.to_owned()),
        (OWN_LABEL.0.to_owned(), OWN_LABEL.1.to_owned()),
    ]);
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(labels.clone()),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(BTreeMap::from([("app".to_owned(), name.to_owned())])),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "c".into(),
                        image: Some("nginx".into()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

#[tokio::test(start_paused = true)]
async fn scale_and_status_writes_should_be_read_back() -> TestResult {
    let cluster = TestCluster::start_paused("ryow-scale-and-status").await?;
    let ns = cluster.namespace().to_owned();
    if let Some(env) = cluster.test_env() {
        env.faults().delay_watch_events(DELAY);
    }
    let manager = Manager::new(cluster.client(), options(&ns, true))?;
    let client = manager.cached_client::<Deployment>();
    let (stop, task) = start(&manager);
    let bound = Instant::now() + TestCluster::bound(Duration::from_secs(20));
    while !client.informers().iter().all(|i| i.has_synced()) {
        assert!(Instant::now() < bound, "the caches did not sync");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    client
        .create(Some(&ns), &PostParams::default(), &deployment("web"))
        .await?;
    client
        .patch_scale(
            Some(&ns),
            "web",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"replicas": 3}})),
        )
        .await?;
    let web = client.get(Some(&ns), "web").await?.ok_or("not cached")?;
    assert_eq!(web.spec.replicas, Some(3));
    if !cluster.is_real() {
        // A status write (on a real cluster the Deployment controller writes status too).
        client
            .patch_status(
                Some(&ns),
                "web",
                &PatchParams::default(),
                &Patch::Merge(serde_json::json!({"status": {"observedGeneration": 42}})),
            )
            .await?;
        let web = client.get(Some(&ns), "web").await?.ok_or("not cached")?;
        assert_eq!(
            web.status.as_ref().and_then(|s| s.observed_generation),
            Some(42)
        );
    }
    let _ = stop.send(());
    task.await??;
    cluster.shutdown().await;
    Ok(())
}
