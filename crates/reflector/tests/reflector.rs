//! The reflector over real HTTP with `kube::Client`, against kcr-testenv or the real cluster of
//! `KCR_TEST_KUBECONFIG` (each test in a namespace of its own). Tests that need kcr-testenv's
//! fault injection or its exact resource versions skip on a real cluster, saying so.

mod support;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_cache::{DeltaFifo, DeltaFifoOptions, DeltaType, IndexedStore};
use kcr_metrics::reflector::{NamedReflectorMetrics, ReflectorMetrics};
use kcr_reflector::{BackoffConfig, Reflector};
use kcr_testenv::{Failure, TestCluster, TestEnv};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, PostParams};
use parking_lot::Mutex;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use support::{Checked, OWN, Recorded, Widget, config_map, create_config_maps, eventually};

struct Running<K> {
    reflector: Arc<Reflector<K>>,
    metrics: NamedReflectorMetrics,
    cancel: CancellationToken,
    task: JoinHandle<()>,
}

impl<K> Running<K> {
    async fn stop(self) {
        self.cancel.cancel();
        let _ = self.task.await;
    }
}

/// Runs `reflector` with metrics of its own.
fn run<K>(reflector: Reflector<K>) -> Running<K>
where
    K: kube::Resource + Send + Sync + 'static,
{
    let families = ReflectorMetrics::register(&kcr_metrics::Registry::new())
        .unwrap_or_else(|e| panic!("metrics: {e}"));
    let reflector = Arc::new(reflector.name("test").metrics(&families));
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let reflector = reflector.clone();
        let cancel = cancel.clone();
        async move { reflector.run(cancel).await }
    });
    Running {
        reflector,
        metrics: families.for_reflector("test"),
        cancel,
        task,
    }
}

type ErrorLog = Arc<Mutex<Vec<(Instant, String)>>>;

/// Records the reason of every error the reflector reports, and when.
fn error_log() -> (
    ErrorLog,
    impl Fn(&kcr_reflector::Error) + Send + Sync + 'static,
) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let handler = {
        let log = log.clone();
        move |e: &kcr_reflector::Error| log.lock().push((Instant::now(), e.reason().to_owned()))
    };
    (log, handler)
}

fn has(log: &Mutex<Vec<(Instant, String)>>, reason: &str) -> bool {
    log.lock().iter().any(|(_, r)| r == reason)
}

async fn start_env() -> TestEnv {
    TestEnv::start()
        .await
        .unwrap_or_else(|e| panic!("testenv: {e}"))
}

/// The test's cluster (kcr-testenv, or the real one of `KCR_TEST_KUBECONFIG`) and its namespace.
async fn start_cluster(test: &str) -> (TestCluster, String) {
    let cluster = TestCluster::start(test)
        .await
        .unwrap_or_else(|e| panic!("cluster: {e}"));
    let ns = cluster.namespace().to_owned();
    (cluster, ns)
}

/// Whether a test that needs kcr-testenv skips (printing why) on a real cluster.
fn skip(test: &str, needs: &str) -> bool {
    TestCluster::skip_on_real_cluster(test, needs)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflector_should_list_without_pagination_then_watch_every_change() {
    let (cluster, ns) = start_cluster("reflector-list-watch").await;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client(), &ns);
    create_config_maps(&api, "cm", 5).await;
    let lw = Recorded::new(api.clone());
    let store = Checked::<ConfigMap>::new();
    let r = run(Reflector::new(lw.clone(), store.clone())
        .label_selector(OWN)
        .use_watch_list(false)
        .page_size(0));
    eventually("initial sync", 10, || store.cache.len() == 5).await;

    api.create(&PostParams::default(), &config_map("new", "1"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut cm0 = api.get("cm0").await.unwrap_or_else(|e| panic!("{e}"));
    cm0.data = Some([("v".to_owned(), "changed".to_owned())].into());
    api.replace("cm0", &PostParams::default(), &cm0)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    api.delete("cm1", &DeleteParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let changed = |cm: Option<Arc<ConfigMap>>| {
        cm.and_then(|cm| cm.data.as_ref()?.get("v").cloned())
            .is_some_and(|v| v == "changed")
    };
    eventually("every change applied", 10, || {
        store.cache.get_by_key(&format!("{ns}/cm1")).is_none()
            && store.cache.get_by_key(&format!("{ns}/new")).is_some()
            && changed(store.cache.get_by_key(&format!("{ns}/cm0")))
    })
    .await;

    assert_eq!(store.cache.len(), 5);
    let cm0 = store
        .cache
        .get_by_key(&format!("{ns}/cm0"))
        .unwrap_or_else(|| panic!("cm0 missing"));
    assert_eq!(
        cm0.data
            .as_ref()
            .and_then(|d| d.get("v"))
            .map(String::as_str),
        Some("changed")
    );
    let lists = lw.list_calls();
    assert_eq!(lists.len(), 1);
    assert_eq!(lists[0].1.resource_version.as_deref(), Some("0"));
    assert_eq!(lists[0].1.limit, None);
    let watches = lw.watch_calls();
    assert!(watches[0].1.allow_watch_bookmarks);
    assert!(
        watches[0]
            .1
            .timeout_seconds
            .is_some_and(|t| (300..600).contains(&t))
    );
    store.assert_no_violations();
    r.stop().await;
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflector_should_ask_for_pages_and_replace_the_store_once() {
    let (cluster, ns) = start_cluster("reflector-paged").await;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client(), &ns);
    create_config_maps(&api, "cm", 120).await;
    let lw = Recorded::new(api.clone());
    let store = Checked::<ConfigMap>::new();
    let r = run(Reflector::new(lw.clone(), store.clone())
        .label_selector(OWN)
        .use_watch_list(false)
        .page_size(50));
    eventually("initial sync", 10, || store.cache.len() == 120).await;
    let lists = lw.list_calls();
    assert_eq!(lists[0].1.resource_version.as_deref(), Some("0"));
    assert_eq!(lists[0].1.limit, Some(50));
    // A server may answer a list at resourceVersion "0" from its cache in one piece (as
    // kube-apiserver's watch cache does) or in pages of 50 (3 requests): either way the pages
    // that follow carry the continue token and the store is replaced once, with everything.
    assert!(
        lists.len() == 1 || lists.len() == 3,
        "one list, or 120 objects in pages of 50: {lists:?}"
    );
    assert!(lists[1..].iter().all(|(_, l)| l.continue_token.is_some()));
    assert_eq!(*store.replaces.lock(), 1);
    assert_eq!(r.metrics.lists.get(), 1);
    r.stop().await;
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bookmarks_should_move_the_last_sync_resource_version() {
    // kcr-testenv sends bookmarks every 50 ms here (reached through its kubeconfig, as a real
    // cluster is); a real kube-apiserver about once a minute: bookmarks may come late.
    let fast = match TestCluster::real_cluster_requested() {
        true => None,
        false => Some(
            TestEnv::builder()
                .bookmark_interval(Duration::from_millis(50))
                .start()
                .await
                .unwrap_or_else(|e| panic!("testenv: {e}")),
        ),
    };
    let cluster = match &fast {
        Some(env) => {
            TestCluster::start_with(Some(env.kubeconfig_path()), "reflector-bookmarks").await
        }
        None => TestCluster::start("reflector-bookmarks").await,
    }
    .unwrap_or_else(|e| panic!("cluster: {e}"));
    let elsewhere = format!("{}-other", cluster.namespace());
    support::create_namespace(cluster.client(), &elsewhere).await;
    let watched: Api<ConfigMap> = Api::namespaced(cluster.client(), cluster.namespace());
    let other: Api<ConfigMap> = Api::namespaced(cluster.client(), &elsewhere);
    let store = Checked::<ConfigMap>::new();
    let r = run(Reflector::new(watched, store.clone())
        .label_selector(OWN)
        .use_watch_list(false));
    eventually("initial sync", 10, || {
        !r.reflector.last_sync_resource_version().is_empty()
    })
    .await;
    let synced_at = r.reflector.last_sync_resource_version();
    create_config_maps(&other, "elsewhere", 3).await;
    // Written elsewhere, so only a bookmark can move the watched namespace's version (a real
    // server's versions are opaque: no arithmetic on them).
    eventually("a bookmark", 30, || {
        r.reflector.last_sync_resource_version() != synced_at
    })
    .await;
    if let Some(env) = &fast {
        let server_rv = env.resource_version().to_string();
        eventually("a bookmark at the server's version", 10, || {
            r.reflector.last_sync_resource_version() == server_rv
        })
        .await;
    }
    assert!(store.cache.is_empty(), "bookmarks carry no object");
    assert_eq!(r.metrics.lists.get(), 1);
    r.stop().await;
    support::delete_namespace(cluster.client(), &elsewhere).await;
    cluster.shutdown().await;
    if let Some(env) = fast {
        env.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_closed_by_the_server_should_resume_from_the_last_version_without_relisting() {
    if skip(
        "a_watch_closed_by_the_server_should_resume_from_the_last_version_without_relisting",
        "fault injection (closing watches)",
    ) {
        return;
    }
    let env = start_env().await;
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    create_config_maps(&api, "a", 2).await;
    let lw = Recorded::new(api.clone());
    let store = Checked::<ConfigMap>::new();
    let r = run(Reflector::new(lw.clone(), store.clone()).use_watch_list(false));
    eventually("initial sync", 10, || store.cache.len() == 2).await;
    create_config_maps(&api, "b", 1).await;
    eventually("b0", 10, || store.cache.len() == 3).await;

    env.faults().close_all_watches();
    create_config_maps(&api, "c", 1).await;
    eventually("c0 after the close", 10, || store.cache.len() == 4).await;

    // And watches closed after every 2 events.
    env.faults().close_watches_after_events(Some(2));
    create_config_maps(&api, "d", 10).await;
    eventually("every d", 10, || store.cache.len() == 14).await;

    assert_eq!(lw.list_calls().len(), 1, "no relist");
    let watches = lw.watch_calls();
    assert!(watches.len() >= 6, "re-watched {} times", watches.len());
    for pair in watches.windows(2) {
        let (a, b) = (&pair[0].1.resource_version, &pair[1].1.resource_version);
        let (a, b) = (a.parse::<u64>().unwrap_or(0), b.parse::<u64>().unwrap_or(0));
        assert!(b >= a, "each watch resumes from the last version");
    }
    store.assert_no_violations();
    r.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_should_force_a_relist_that_turns_a_missed_deletion_into_a_tombstone() {
    if skip(
        "compaction_should_force_a_relist_that_turns_a_missed_deletion_into_a_tombstone",
        "fault injection (429 on a watch, compaction)",
    ) {
        return;
    }
    let env = start_env().await;
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    create_config_maps(&api, "cm", 3).await;

    // A small informer: the reflector feeds a DeltaFifo whose known objects
    // are the indexer that the pop loop maintains.
    let indexer = Arc::new(IndexedStore::<ConfigMap>::default());
    let fifo = Arc::new(DeltaFifo::new(
        DeltaFifoOptions::new().known_objects(indexer.clone()),
    ));
    let tombstones = Arc::new(Mutex::new(Vec::<String>::new()));
    let pop_loop = tokio::spawn({
        let (fifo, indexer, tombstones) = (fifo.clone(), indexer.clone(), tombstones.clone());
        async move {
            loop {
                let popped = fifo
                    .pop(|deltas, _| {
                        for delta in deltas {
                            if delta.type_ == DeltaType::Deleted {
                                match &delta.object {
                                    kcr_cache::DeltaObject::DeletedFinalStateUnknown(t) => {
                                        tombstones.lock().push(t.key.to_string());
                                        let _ = indexer.delete_by_key(&t.key);
                                    }
                                    kcr_cache::DeltaObject::Object(obj) => {
                                        let _ = indexer.delete(obj.clone());
                                    }
                                    _ => {}
                                }
                            } else if let Some(obj) = delta.object.object() {
                                let _ = indexer.update(obj.clone());
                            }
                        }
                        Ok(())
                    })
                    .await;
                if popped.is_err() {
                    return;
                }
            }
        }
    });

    let (errors, handler) = error_log();
    let reflected = Recorded::new(Api::<ConfigMap>::namespaced(
        support::client_without_retries(&env),
        "default",
    ));
    let r = run(Reflector::new(reflected.clone(), fifo.clone())
        .use_watch_list(false)
        .watch_error_handler(handler));
    eventually("initial sync", 10, || indexer.len() == 3).await;
    // A watch that delivered an event, so its close is not a "very short watch".
    create_config_maps(&api, "x", 1).await;
    eventually("x0", 10, || indexer.len() == 4).await;

    // Keep the reflector away for 2 s: the next watch is answered 429.
    env.faults()
        .fail_next(1, Failure::too_many_requests(2).verb("watch"));
    env.faults().close_all_watches();
    // A 429 on a watch is retried inside the cycle: no handler error.
    support::eventually_or(
        "the 429",
        10,
        || has(&reflected.errors, "too_many_requests"),
        || format!("{:?}", reflected.errors.lock()),
    )
    .await;
    api.delete("cm1", &DeleteParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    env.faults().compact_history();

    eventually("the tombstone", 20, || !tombstones.lock().is_empty()).await;
    assert_eq!(*tombstones.lock(), vec!["default/cm1".to_owned()]);
    assert!(indexer.get_by_key("default/cm1").is_none());
    assert_eq!(indexer.len(), 3);
    assert!(!has(&errors, "too_many_requests"), "{:?}", errors.lock());
    assert!(r.metrics.relists_expired.get() >= 1);
    assert!(r.metrics.lists.get() >= 2);
    r.stop().await;
    fifo.close();
    let _ = pop_loop.await;
}

#[tokio::test(start_paused = true)]
async fn server_errors_should_be_retried_with_exponential_backoff() {
    if skip(
        "server_errors_should_be_retried_with_exponential_backoff",
        "fault injection (500s) and a paused clock",
    ) {
        return;
    }
    let env = start_env().await;
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    create_config_maps(&api, "cm", 2).await;
    env.faults()
        .fail_next(4, Failure::internal_error().verb("list"));
    let lw = Recorded::new(api.clone());
    let store = Checked::<ConfigMap>::new();
    let (errors, handler) = error_log();
    let r = run(Reflector::new(lw.clone(), store.clone())
        .use_watch_list(false)
        .watch_error_handler(handler));
    eventually("sync after four 500s", 60, || store.cache.len() == 2).await;
    let errors = errors.lock().clone();
    let lists = lw.list_calls();
    assert_eq!(errors.len(), 4, "{errors:?}");
    assert_eq!(lists.len(), 5);
    let mut base = Duration::from_millis(800);
    for (i, (failed_at, reason)) in errors.iter().enumerate() {
        assert_eq!(reason, "api");
        let waited = lists[i + 1].0 - *failed_at;
        assert!(
            waited >= base && waited < base * 2,
            "retry {i}: waited {waited:?}, base {base:?}"
        );
        base *= 2;
    }
    r.stop().await;
}

#[tokio::test(start_paused = true)]
async fn too_many_requests_should_wait_exactly_retry_after_on_list_and_on_watch() {
    if skip(
        "too_many_requests_should_wait_exactly_retry_after_on_list_and_on_watch",
        "fault injection (429s) and a paused clock",
    ) {
        return;
    }
    let env = start_env().await;
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    create_config_maps(&api, "cm", 1).await;
    env.faults()
        .fail_next(1, Failure::too_many_requests(3).verb("list"));
    env.faults()
        .fail_next(1, Failure::too_many_requests(5).verb("watch"));
    let lw = Recorded::new(Api::<ConfigMap>::namespaced(
        support::client_without_retries(&env),
        "default",
    ));
    let store = Checked::<ConfigMap>::new();
    let (errors, handler) = error_log();
    let r = run(Reflector::new(lw.clone(), store.clone())
        .use_watch_list(false)
        .watch_error_handler(handler));
    support::eventually_or(
        "two watches",
        60,
        || lw.watch_calls().len() >= 2,
        || {
            format!(
                "{:?} lists {} watches {}",
                errors.lock(),
                lw.list_calls().len(),
                lw.watch_calls().len()
            )
        },
    )
    .await;
    // The list's 429 ends a cycle (the handler sees it); the watch's is
    // retried inside the cycle, as client-go's.
    let handled = errors.lock().clone();
    assert_eq!(handled.len(), 1, "{handled:?}");
    let errors = lw.errors.lock().clone();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(handled[0], errors[0]);
    let lists = lw.list_calls();
    assert_eq!(
        lists.len(),
        2,
        "the throttled watch is retried without a relist"
    );
    assert_eq!(lists[1].0 - errors[0].0, Duration::from_secs(3));
    let watches = lw.watch_calls();
    assert_eq!(watches[1].0 - errors[1].0, Duration::from_secs(5));
    assert_eq!(store.cache.len(), 1);
    r.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflector_should_recover_when_the_server_stops_and_restarts() {
    if skip(
        "reflector_should_recover_when_the_server_stops_and_restarts",
        "fault injection (stopping the server)",
    ) {
        return;
    }
    let env = start_env().await;
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    create_config_maps(&api, "a", 2).await;
    let store = Checked::<ConfigMap>::new();
    let (errors, handler) = error_log();
    let backoff = BackoffConfig::new(Duration::from_millis(20), Duration::from_millis(200));
    let lw = Recorded::new(api.clone());
    let r = run(Reflector::new(lw.clone(), store.clone())
        .use_watch_list(false)
        .backoff(backoff)
        .watch_error_handler(handler));
    eventually("initial sync", 10, || store.cache.len() == 2).await;
    create_config_maps(&api, "b", 1).await;
    eventually("b0", 10, || store.cache.len() == 3).await;

    env.faults().stop_serving().await;
    eventually("a refused watch", 10, || {
        has(&lw.errors, "connection_refused")
    })
    .await;
    env.faults()
        .restart_serving()
        .await
        .unwrap_or_else(|e| panic!("restart: {e}"));
    create_config_maps(&api, "c", 2).await;
    eventually("the changes made after the restart", 10, || {
        store.cache.len() == 5
    })
    .await;
    assert_eq!(
        r.metrics.lists.get(),
        1,
        "a refused watch is retried without relisting: {:?}",
        errors.lock()
    );
    store.assert_no_violations();
    r.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_list_should_stream_the_initial_state_by_default_without_a_list() {
    let (cluster, ns) = start_cluster("reflector-watch-list").await;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client(), &ns);
    create_config_maps(&api, "cm", 4).await;
    let lw = Recorded::new(api.clone());
    let store = Checked::<ConfigMap>::new();
    let r = run(Reflector::new(lw.clone(), store.clone()).label_selector(OWN));
    eventually("streamed sync", 10, || store.cache.len() == 4).await;
    create_config_maps(&api, "more", 1).await;
    eventually("later events on the same watch", 10, || {
        store.cache.len() == 5
    })
    .await;
    assert!(lw.list_calls().is_empty());
    let watches = lw.watch_calls();
    assert_eq!(watches.len(), 1);
    assert!(watches[0].1.send_initial_events);
    assert_eq!(*store.replaces.lock(), 1);
    if let Some(env) = cluster.test_env() {
        assert_eq!(
            r.reflector.last_sync_resource_version(),
            env.resource_version().to_string()
        );
    }
    r.stop().await;
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_list_should_fall_back_to_list_and_watch_when_the_server_refuses_it() {
    if skip(
        "watch_list_should_fall_back_to_list_and_watch_when_the_server_refuses_it",
        "fault injection (a 422 on the streaming list)",
    ) {
        return;
    }
    let env = start_env().await;
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    create_config_maps(&api, "cm", 4).await;
    // A server without WatchList rejects sendInitialEvents with 422 Invalid.
    env.faults()
        .fail_next(1, Failure::status(422).verb("watch"));
    let lw = Recorded::new(api.clone());
    let store = Checked::<ConfigMap>::new();
    let r = run(Reflector::new(lw.clone(), store.clone()));
    eventually("sync by list", 10, || store.cache.len() == 4).await;
    create_config_maps(&api, "more", 1).await;
    eventually("watch events", 10, || store.cache.len() == 5).await;
    assert_eq!(lw.list_calls().len(), 1);
    let watches = lw.watch_calls();
    assert!(watches[0].1.send_initial_events);
    assert!(!watches[1].1.send_initial_events);
    r.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undecodable_objects_should_be_reported_counted_and_recovered_from_without_losing_state() {
    let (cluster, ns) = start_cluster("reflector-undecodable").await;
    support::install_widget_crd(cluster.client()).await;
    let widgets: Api<Widget> = Api::namespaced(cluster.client(), &ns);
    let dynamic: Api<DynamicObject> =
        Api::namespaced_with(cluster.client(), &ns, &ApiResource::erase::<Widget>(&()));
    let good = |name: &str| Widget {
        api_version: Some("example.com/v1".into()),
        kind: Some("Widget".into()),
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: support::WidgetSpec { size: 1 },
    };
    let bad = |name: &str| -> DynamicObject {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": name}, "spec": {"size": "enormous"}
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    };
    widgets
        .create(&PostParams::default(), &good("good"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let store = Checked::<Widget>::new();
    let messages = Arc::new(Mutex::new(Vec::<String>::new()));
    let backoff = BackoffConfig::new(Duration::from_millis(20), Duration::from_millis(100));
    let r = run(Reflector::new(widgets.clone(), store.clone())
        .backoff(backoff)
        .watch_error_handler({
            let messages = messages.clone();
            move |e| messages.lock().push(e.to_string())
        }));
    eventually("initial sync", 10, || store.cache.len() == 1).await;

    // An object that does not decode arrives on the watch.
    dynamic
        .create(&PostParams::default(), &bad("broken"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eventually("the decode error", 10, || {
        r.metrics.decode_errors.get() >= 1
    })
    .await;
    // The watch's decode error ends its cycle; the next cycle's list fails
    // on the same object, and that error reaches the handler.
    eventually("the failed list, named", 10, || {
        messages
            .lock()
            .iter()
            .any(|m| m.contains("Widget") && m.contains(&format!("{ns}/broken")))
    })
    .await;
    // Relists keep failing on it (each one counted) but the state stays.
    eventually("a failing relist", 10, || {
        r.metrics.decode_errors.get() >= 3
    })
    .await;
    assert!(
        store.cache.get_by_key(&format!("{ns}/good")).is_some(),
        "state kept"
    );

    // Once it is gone, the reflector catches up.
    dynamic
        .delete("broken", &DeleteParams::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    widgets
        .create(&PostParams::default(), &good("later"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eventually("recovered", 10, || store.cache.len() == 2).await;
    assert!(store.cache.get_by_key(&format!("{ns}/later")).is_some());
    r.stop().await;
    if cluster.is_real() {
        support::delete_widget_crd(cluster.client()).await;
    }
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dynamic_objects_and_selectors_should_be_listed_and_watched() {
    let (cluster, ns) = start_cluster("reflector-dynamic").await;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client(), &ns);
    let labelled = |name: &str, app: &str| {
        let mut cm = config_map(name, "0");
        cm.metadata
            .labels
            .get_or_insert_default()
            .insert("app".to_owned(), app.to_owned());
        cm
    };
    for (name, app) in [("a", "web"), ("b", "db"), ("c", "web")] {
        api.create(&PostParams::default(), &labelled(name, app))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }
    // In the test's namespace, and only the test's own: a real cluster has other config maps.
    let dynamic: Api<DynamicObject> =
        Api::namespaced_with(cluster.client(), &ns, &ApiResource::erase::<ConfigMap>(&()));
    let store = Arc::new(IndexedStore::<DynamicObject>::default());
    let r = run(Reflector::new(dynamic, store.clone()).label_selector(format!("app=web,{OWN}")));
    eventually("web only", 10, || store.len() == 2).await;
    api.create(&PostParams::default(), &labelled("d", "web"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    api.create(&PostParams::default(), &labelled("e", "db"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eventually("d", 10, || store.len() == 3).await;
    let mut keys: Vec<String> = store.list_keys().iter().map(|k| k.to_string()).collect();
    keys.sort();
    assert_eq!(keys, ["a", "c", "d"].map(|n| format!("{ns}/{n}")));
    r.stop().await;

    let by_name: Api<ConfigMap> = Api::namespaced(cluster.client(), &ns);
    let store = Arc::new(IndexedStore::<ConfigMap>::default());
    let r = run(Reflector::new(by_name, store.clone()).field_selector("metadata.name=b"));
    eventually("b only", 10, || store.len() == 1).await;
    assert!(store.get_by_key(&format!("{ns}/b")).is_some());
    r.stop().await;
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_should_stop_the_reflector_promptly_and_leave_the_store_consistent() {
    let (cluster, ns) = start_cluster("reflector-cancel").await;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client(), &ns);
    create_config_maps(&api, "cm", 3).await;
    let store = Checked::<ConfigMap>::new();
    let r = run(Reflector::new(api.clone(), store.clone()).label_selector(OWN));
    eventually("initial sync", 10, || store.cache.len() == 3).await;
    // Cancel while the watch is open (and on kcr-testenv, with a slow server, mid-request).
    if let Some(env) = cluster.test_env() {
        env.faults().set_latency(Duration::from_secs(30));
    }
    let Running {
        cancel,
        task,
        reflector,
        ..
    } = r;
    cancel.cancel();
    tokio::time::timeout(Duration::from_secs(2), task)
        .await
        .unwrap_or_else(|_| panic!("the reflector did not stop within 2 s"))
        .unwrap_or_else(|e| panic!("the reflector task failed: {e}"));
    assert_eq!(store.cache.len(), 3);
    assert!(!reflector.last_sync_resource_version().is_empty());
    store.assert_no_violations();
    if let Some(env) = cluster.test_env() {
        env.faults().clear();
    }
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn managed_fields_should_be_skipped_while_decoding_lists_and_watch_events_when_asked() {
    use futures::StreamExt;
    use kcr_reflector::{ApiListerWatcher, ListOptions, ListerWatcher, WatchEvent, WatchOptions};
    let (cluster, ns) = start_cluster("reflector-managed-fields").await;
    let api: Api<ConfigMap> = Api::namespaced(cluster.client(), &ns);
    // The server sets managedFields on every write (its field manager from the client's name).
    let managed = |name: &str| config_map(name, "0");
    api.create(&PostParams::default(), &managed("listed"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));

    let whole = ApiListerWatcher::new(api.clone());
    let lean = ApiListerWatcher::new(api.clone()).drop_managed_fields(true);
    // Only the test's own config maps (a real cluster adds its own to the namespace).
    let list = |lw: ApiListerWatcher<ConfigMap>| async move {
        let mut options = ListOptions::new();
        options.label_selector = Some(OWN.to_owned());
        ListerWatcher::list(&lw, &options)
            .await
            .unwrap_or_else(|e| panic!("list: {e}"))
    };
    let kept = list(whole.clone()).await;
    assert!(
        kept.items[0].metadata.managed_fields.is_some(),
        "the server returns managedFields"
    );
    let dropped = list(lean.clone()).await;
    assert_eq!(dropped.items.len(), 1);
    assert!(dropped.items[0].metadata.managed_fields.is_none());
    assert_eq!(dropped.items[0].data, kept.items[0].data);

    let mut events = ListerWatcher::watch(&lean, &WatchOptions::new(kept.resource_version))
        .await
        .unwrap_or_else(|e| panic!("watch: {e}"));
    api.create(&PostParams::default(), &managed("watched"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let event = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match events.next().await {
                Some(Ok(WatchEvent::Added(cm))) => return cm,
                Some(Ok(_)) => continue,
                other => panic!("expected the added object, got {other:?}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no event"));
    assert_eq!(event.metadata.name.as_deref(), Some("watched"));
    assert!(event.metadata.managed_fields.is_none());
    drop(events);
    cluster.shutdown().await;
}
