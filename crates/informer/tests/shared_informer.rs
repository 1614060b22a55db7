//! The shared informer over real HTTP with `kube::Client`, against kcr-testenv or the real
//! cluster of `KCR_TEST_KUBECONFIG` (each test in a namespace of its own); a test that needs
//! kcr-testenv's fault injection skips there, saying so.

mod support;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_cache::{Indexers, NAMESPACE_INDEX, Selector, index_func, meta_namespace_index_func};
use kcr_informer::{
    Error, FilteringResourceEventHandler, Registration, ResourceEventHandlerFuncs,
    SharedIndexInformer, wait_for_cache_sync,
};
use kcr_metrics::informer::InformerMetrics;
use kcr_testenv::{Failure, TestCluster};
use kube::api::{Api, PostParams};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use support::{Call, Gate, Gated, Recorder, create, delete, eventually, start_cluster, update};

struct Running {
    cancel: CancellationToken,
    task: JoinHandle<kcr_informer::Result<()>>,
}

impl Running {
    async fn stop(self) {
        self.cancel.cancel();
        let _ = self.task.await;
    }
}

fn run<K>(informer: &SharedIndexInformer<K>) -> Running
where
    K: kube::Resource + Clone + Send + Sync + 'static,
{
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let informer = informer.clone();
        let cancel = cancel.clone();
        async move { informer.run(cancel).await }
    });
    Running { cancel, task }
}

/// An informer of the config maps the test creates in its namespace (only those: a real
/// cluster adds its own, [`support::OWN`]).
fn informer(cluster: &TestCluster) -> SharedIndexInformer<ConfigMap> {
    let mut indexers = Indexers::default();
    indexers.insert(NAMESPACE_INDEX.to_owned(), meta_namespace_index_func());
    SharedIndexInformer::new(
        Api::<ConfigMap>::namespaced(cluster.client(), cluster.namespace()),
        Duration::ZERO,
        indexers,
    )
    .name("test")
    .label_selector(support::OWN)
}

async fn synced(informer: &SharedIndexInformer<ConfigMap>) {
    let cancel = CancellationToken::new();
    let synced: [&dyn kcr_informer::HasSynced; 1] = [informer];
    tokio::select! {
        ok = wait_for_cache_sync(&cancel, &synced) => assert!(ok),
        () = tokio::time::sleep(TestCluster::bound(Duration::from_secs(20))) => panic!("the informer did not sync"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_handler_should_receive_every_change_in_order_per_object() {
    let env = start_cluster("every_handler_should_receive_every_chang").await;
    let ns = env.namespace().to_owned();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    for i in 0..5 {
        create(&api, &format!("cm{i}"), "0").await;
    }
    let informer = informer(&env);
    let recorders: Vec<Arc<Recorder>> = (0..3).map(|_| Recorder::new()).collect();
    for r in &recorders {
        informer
            .add_event_handler(r.clone())
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let running = run(&informer);
    synced(&informer).await;
    for round in 1..=3 {
        for i in 0..5 {
            update(&api, &format!("cm{i}"), &round.to_string()).await;
        }
    }
    for i in 0..5 {
        delete(&api, &format!("cm{i}")).await;
    }
    // 5 adds, 15 updates, 5 deletes for each handler.
    eventually("every call", 20, || recorders.iter().all(|r| r.len() == 25)).await;
    for i in 0..5 {
        let key = format!("{ns}/cm{i}");
        let calls = recorders[0].calls_for(&key);
        let Call::Add {
            rv: mut last,
            initial: true,
            ..
        } = calls[0]
        else {
            panic!("{key}: first call {:?}", calls[0]);
        };
        for call in &calls[1..4] {
            let Call::Update {
                old_rv,
                new_rv,
                resync: false,
                ..
            } = call
            else {
                panic!("{key}: {call:?}")
            };
            assert_eq!(
                *old_rv, last,
                "{key}: an update's old object is the previous state"
            );
            assert!(new_rv > old_rv);
            last = *new_rv;
        }
        assert_eq!(
            calls[4],
            Call::Delete {
                key: key.clone(),
                rv: Some(calls_last_rv(&calls[4])),
                tombstone: false
            }
        );
        for other in &recorders[1..] {
            assert_eq!(
                other.calls_for(&key),
                calls,
                "{key}: every handler sees the same sequence"
            );
        }
    }
    assert!(informer.get_indexer().is_empty());
    running.stop().await;
    assert!(informer.is_stopped());
}

fn calls_last_rv(call: &Call) -> u64 {
    match call {
        Call::Delete { rv: Some(rv), .. } => *rv,
        other => panic!("not a delete with its object: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stuck_handler_should_delay_neither_the_informer_nor_the_other_handlers() {
    let env = start_cluster("a_stuck_handler_should_delay_neither_the").await;
    let ns = env.namespace().to_owned();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    create(&api, "first", "0").await;
    let informer = informer(&env);
    let gate = Gate::new();
    let stuck = Recorder::new();
    let stuck_reg = informer
        .add_event_handler(Gated {
            gate: gate.clone(),
            recorder: stuck.clone(),
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let fast = Recorder::new();
    let fast_reg = informer
        .add_event_handler(fast.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    let running = run(&informer);
    // The informer syncs although one handler has not returned from its first call.
    synced(&informer).await;
    eventually("the stuck handler is in its first call", 10, || {
        *gate.waiting.lock() == 1
    })
    .await;
    for i in 0..20 {
        create(&api, &format!("cm{i}"), "0").await;
    }
    eventually("the fast handler gets everything", 20, || fast.len() == 21).await;
    eventually("the cache has everything", 20, || {
        informer.get_indexer().len() == 21
    })
    .await;
    assert!(fast_reg.has_synced());
    assert!(
        !stuck_reg.has_synced(),
        "the stuck handler has not handled the initial list"
    );
    assert_eq!(stuck.len(), 0);
    assert_eq!(
        stuck_reg.pending(),
        20,
        "buffered for the stuck handler (one is in its call)"
    );
    gate.open();
    eventually("the stuck handler catches up", 20, || stuck.len() == 21).await;
    assert_eq!(stuck.calls(), fast.calls(), "same calls in the same order");
    assert!(stuck_reg.has_synced());
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_handler_should_get_the_cache_as_initial_adds_then_live_events() {
    let env = start_cluster("a_late_handler_should_get_the_cache_as_i").await;
    let ns = env.namespace().to_owned();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    for i in 0..3 {
        create(&api, &format!("cm{i}"), "0").await;
    }
    let informer = informer(&env);
    let running = run(&informer);
    synced(&informer).await;
    let late = Recorder::new();
    let registration = informer
        .add_event_handler(late.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    eventually("the cache replayed", 10, || registration.has_synced()).await;
    let mut replayed: Vec<String> = late
        .calls()
        .into_iter()
        .map(|c| match c {
            Call::Add {
                key, initial: true, ..
            } => key,
            other => panic!("not an initial add: {other:?}"),
        })
        .collect();
    replayed.sort();
    assert_eq!(replayed, ["cm0", "cm1", "cm2"].map(|n| format!("{ns}/{n}")));
    create(&api, "new", "0").await;
    update(&api, "cm0", "1").await;
    eventually("live events", 10, || late.len() == 5).await;
    let calls = late.calls();
    assert!(
        matches!(&calls[3], Call::Add { key, initial: false, .. } if *key == format!("{ns}/new")),
        "{calls:?}"
    );
    assert!(
        matches!(&calls[4], Call::Update { key, resync: false, .. } if *key == format!("{ns}/cm0")),
        "{calls:?}"
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removed_handler_should_receive_nothing_more() {
    let env = start_cluster("a_removed_handler_should_receive_nothing").await;
    let ns = env.namespace().to_owned();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    let informer = informer(&env);
    let removed = Recorder::new();
    let kept = Recorder::new();
    let registration = informer
        .add_event_handler(removed.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    informer
        .add_event_handler(kept.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    let running = run(&informer);
    synced(&informer).await;
    create(&api, "a", "0").await;
    eventually("both see a", 10, || removed.len() == 1 && kept.len() == 1).await;
    informer
        .remove_event_handler(&registration)
        .unwrap_or_else(|e| panic!("{e}"));
    create(&api, "b", "0").await;
    update(&api, "a", "1").await;
    delete(&api, "a").await;
    eventually("the kept handler sees the rest", 10, || kept.len() == 4).await;
    assert_eq!(
        removed.len(),
        1,
        "nothing after removal: {:?}",
        removed.calls()
    );
    // Removing twice is fine; removing a registration of another informer
    // is a no-op (client-go), and leaves this one's handlers alone.
    informer
        .remove_event_handler(&registration)
        .unwrap_or_else(|e| panic!("{e}"));
    let other = self::informer(&env);
    let other_handler = other
        .add_event_handler(Recorder::new())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(other.remove_event_handler(&registration).is_ok());
    assert_eq!(other.listener_count(), 1);
    assert!(informer.remove_event_handler(&other_handler).is_ok());
    assert_eq!(informer.listener_count(), 1, "only the kept handler");
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn resync_should_deliver_updates_with_old_equal_to_new_at_each_handlers_period() {
    // The handlers' resync periods are driven by the clock: paused on kcr-testenv, real (35 s)
    // on a real cluster.
    let env = support::start_cluster_paused("informer-resync").await;
    let ns = env.namespace().to_owned();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    for i in 0..4 {
        create(&api, &format!("cm{i}"), "0").await;
    }
    // An informer made without resync never resyncs (client-go), so this
    // one resyncs every 30 s by default; a 10 s handler lowers the check
    // period before start.
    let informer = SharedIndexInformer::new(
        Api::<ConfigMap>::namespaced(env.client(), &ns),
        Duration::from_secs(30),
        Indexers::default(),
    )
    .name("test")
    .label_selector(support::OWN);
    let every_10s = Recorder::new();
    let every_30s = Recorder::new();
    let never = Recorder::new();
    informer
        .add_event_handler_with_resync_period(every_10s.clone(), Duration::from_secs(10))
        .unwrap_or_else(|e| panic!("{e}"));
    informer
        .add_event_handler(every_30s.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    informer
        .add_event_handler_with_resync_period(never.clone(), Duration::ZERO)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(informer.resync_check_period(), Duration::from_secs(10));
    let running = run(&informer);
    synced(&informer).await;
    tokio::time::sleep(Duration::from_secs(35)).await;
    // Let the handlers' tasks drain what the last resync queued.
    eventually("resyncs delivered", 5, || every_10s.resyncs() == 12).await;
    assert_eq!(
        every_10s.resyncs(),
        12,
        "3 rounds of 4 objects: {:?}",
        every_10s.calls()
    );
    assert_eq!(
        every_30s.resyncs(),
        4,
        "1 round of 4 objects: {:?}",
        every_30s.calls()
    );
    assert_eq!(never.resyncs(), 0);
    assert_eq!(never.len(), 4, "only the initial adds");
    for call in every_10s
        .calls()
        .iter()
        .filter(|c| matches!(c, Call::Update { .. }))
    {
        assert!(
            matches!(call, Call::Update { old_rv, new_rv, resync: true, .. } if old_rv == new_rv),
            "{call:?}"
        );
    }
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relist_should_deliver_missed_deletions_as_tombstones_and_missed_updates_as_updates() {
    if TestCluster::skip_on_real_cluster(
        "a_relist_should_deliver_missed_deletions_as_tombstones_and_missed_updates_as_updates",
        "fault injection (429 on a watch, compaction)",
    ) {
        return;
    }
    let env = start_cluster("a_relist_should_deliver_missed_deletions").await;
    let ns = env.namespace().to_owned();
    let faults = env
        .test_env()
        .map(kcr_testenv::TestEnv::faults)
        .expect("kcr-testenv");
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    for i in 0..3 {
        create(&api, &format!("cm{i}"), "0").await;
    }
    let informer = informer(&env);
    let recorder = Recorder::new();
    informer
        .add_event_handler(recorder.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    let errors = Arc::new(parking_lot::Mutex::new(Vec::<String>::new()));
    informer
        .set_watch_error_handler({
            let errors = errors.clone();
            move |e| errors.lock().push(e.reason().to_owned())
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let running = run(&informer);
    synced(&informer).await;
    // A watch that delivered an event, so closing it is not a "very short watch".
    create(&api, "x", "0").await;
    eventually("x", 10, || recorder.len() == 4).await;
    let before = informer.last_sync_resource_version();

    // Keep the informer away: its watches get a 429 that the client retries
    // after `Retry-After`, until things have changed and the history is
    // compacted (however slow the machine), so the watch that follows gets
    // 410 and it relists.
    faults.fail_next(usize::MAX, Failure::too_many_requests(1).verb("watch"));
    faults.close_all_watches();
    delete(&api, "cm1").await;
    let updated = update(&api, "cm2", "1").await;
    faults.compact_history();
    faults.clear();

    eventually("the relist's changes", 20, || recorder.len() == 6).await;
    let calls = recorder.calls();
    assert!(
        calls.contains(&Call::Delete {
            key: format!("{ns}/cm1"),
            rv: Some(calls_rv_for(&calls, &format!("{ns}/cm1"))),
            tombstone: true
        }),
        "{calls:?}"
    );
    let new_rv = support::rv_of(&updated);
    assert!(
        calls.iter().any(|c| matches!(c, Call::Update { key, new_rv: n, resync: false, .. } if *key == format!("{ns}/cm2") && *n == new_rv)),
        "{calls:?}"
    );
    // As client-go's reflector: a watch that ends with 410 Expired (or is
    // throttled with 429) ends the cycle quietly and relists; neither error
    // reaches the watch error handler.
    assert!(errors.lock().is_empty(), "{:?}", errors.lock());
    assert!(
        informer
            .get_indexer()
            .get_by_key(&format!("{ns}/cm1"))
            .is_none()
    );
    assert_ne!(informer.last_sync_resource_version(), before);
    running.stop().await;
}

/// The resource version of the initial add of `key`.
fn calls_rv_for(calls: &[Call], key: &str) -> u64 {
    calls
        .iter()
        .find_map(|c| match c {
            Call::Add { key: k, rv, .. } if k == key => Some(*rv),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no add of {key}"))
}

/// A config map whose managedFields the server sets as it creates it.
fn with_managed_fields(name: &str) -> ConfigMap {
    support::config_map(name, "0")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_transform_should_apply_before_the_cache_and_the_handlers_see_the_object() {
    let env = start_cluster("the_transform_should_apply_before_the_ca").await;
    let ns = env.namespace().to_owned();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    let created = api
        .create(&PostParams::default(), &with_managed_fields("a"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        created.metadata.managed_fields.is_some(),
        "the server keeps managedFields"
    );

    let informer = informer(&env);
    informer
        .set_transform(|cm: Arc<ConfigMap>| {
            let mut cm = (*cm).clone();
            cm.data = None;
            cm.metadata.labels = Some([("transformed".to_owned(), "yes".to_owned())].into());
            Ok(Arc::new(cm))
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let seen = Arc::new(parking_lot::Mutex::new(Vec::<Arc<ConfigMap>>::new()));
    informer
        .add_event_handler(
            ResourceEventHandlerFuncs::new()
                .add_func({
                    let seen = seen.clone();
                    move |cm: &Arc<ConfigMap>, _| seen.lock().push(cm.clone())
                })
                .update_func({
                    let seen = seen.clone();
                    move |_, cm: &Arc<ConfigMap>| seen.lock().push(cm.clone())
                }),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let running = run(&informer);
    synced(&informer).await;
    api.create(&PostParams::default(), &with_managed_fields("b"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    eventually("both objects", 10, || seen.lock().len() == 2).await;
    let cached = informer.lister().list(
        &"transformed=yes"
            .parse::<Selector>()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    assert_eq!(cached.len(), 2);
    for cm in seen.lock().iter().chain(cached.iter()) {
        assert!(cm.data.is_none(), "transformed");
        assert!(
            cm.metadata.managed_fields.is_none(),
            "managedFields dropped by default"
        );
    }
    // The handlers get the very objects the cache holds.
    let a = informer
        .get_indexer()
        .get_by_key(&format!("{ns}/a"))
        .unwrap_or_else(|| panic!("a"));
    assert!(seen.lock().iter().any(|cm| Arc::ptr_eq(cm, &a)));
    assert!(matches!(
        informer.set_transform(Ok),
        Err(Error::AlreadyStarted)
    ));
    assert!(matches!(
        informer.set_watch_error_handler(|_| {}),
        Err(Error::AlreadyStarted)
    ));
    running.stop().await;

    // Asked to, the informer keeps them.
    let keeping = self::informer(&env).keep_managed_fields(true);
    let running = run(&keeping);
    synced(&keeping).await;
    let a = keeping
        .get_indexer()
        .get_by_key(&format!("{ns}/a"))
        .unwrap_or_else(|| panic!("a"));
    assert!(a.metadata.managed_fields.is_some());
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_should_sync_only_once_its_handler_has_handled_the_initial_list() {
    let env = start_cluster("a_registration_should_sync_only_once_its").await;
    let ns = env.namespace().to_owned();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    for i in 0..3 {
        create(&api, &format!("cm{i}"), "0").await;
    }
    let informer = informer(&env);
    let gate = Gate::new();
    let recorder = Recorder::new();
    let registration: Registration = informer
        .add_event_handler(Gated {
            gate: gate.clone(),
            recorder: recorder.clone(),
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!registration.has_synced(), "not before start");
    let running = run(&informer);
    synced(&informer).await;
    eventually("the handler is in its first call", 10, || {
        *gate.waiting.lock() == 1
    })
    .await;
    assert!(informer.has_synced());
    assert!(
        !registration.has_synced(),
        "the informer synced, the handler has not"
    );
    gate.open();
    let cancel = CancellationToken::new();
    assert!(wait_for_cache_sync(&cancel, &[&registration]).await);
    assert_eq!(recorder.len(), 3);
    assert!(
        recorder
            .calls()
            .iter()
            .all(|c| matches!(c, Call::Add { initial: true, .. }))
    );
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_handler_should_be_caught_counted_and_keep_receiving_events() {
    let env = start_cluster("a_panicking_handler_should_be_caught_cou").await;
    let ns = env.namespace().to_owned();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    let metrics =
        InformerMetrics::register(&kcr_metrics::Registry::new()).unwrap_or_else(|e| panic!("{e}"));
    let informer = informer(&env).metrics(&metrics);
    let recorder = Recorder::new();
    let registration = informer
        .add_event_handler(ResourceEventHandlerFuncs::new().add_func({
            let recorder = recorder.clone();
            move |cm: &Arc<ConfigMap>, initial| {
                assert_ne!(
                    cm.metadata.name.as_deref(),
                    Some("boom"),
                    "this handler panics on boom"
                );
                kcr_informer::ResourceEventHandler::on_add(&*recorder, cm, initial);
            }
        }))
        .unwrap_or_else(|e| panic!("{e}"));
    let calm = Recorder::new();
    informer
        .add_event_handler(calm.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    let running = run(&informer);
    synced(&informer).await;
    create(&api, "before", "0").await;
    create(&api, "boom", "0").await;
    create(&api, "after", "0").await;
    eventually("the calm handler sees all", 10, || calm.len() == 3).await;
    eventually("the panicking handler goes on", 10, || recorder.len() == 2).await;
    let names: Vec<String> = recorder
        .calls()
        .iter()
        .map(|c| c.key().to_owned())
        .collect();
    assert_eq!(names, ["before", "after"].map(|n| format!("{ns}/{n}")));
    assert_eq!(registration.panics(), 1);
    assert_eq!(metrics.for_informer("test").handler_panics.get(), 1);
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_filtering_handler_should_turn_leaving_the_filter_into_a_delete_and_entering_it_into_an_add()
 {
    let env = start_cluster("a_filtering_handler_should_turn_leaving_").await;
    let ns = env.namespace().to_owned();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    create(&api, "a", "off").await;
    let informer = informer(&env);
    let recorder = Recorder::new();
    informer
        .add_event_handler(FilteringResourceEventHandler::new(
            |cm: &ConfigMap| {
                cm.data
                    .as_ref()
                    .and_then(|d| d.get("v"))
                    .is_some_and(|v| v.starts_with("on"))
            },
            recorder.clone(),
        ))
        .unwrap_or_else(|e| panic!("{e}"));
    let running = run(&informer);
    synced(&informer).await;
    assert_eq!(recorder.len(), 0, "a does not pass");
    let on = update(&api, "a", "on").await;
    let on2 = update(&api, "a", "on2").await;
    let off = update(&api, "a", "off").await;
    update(&api, "a", "off2").await;
    eventually("three calls", 10, || recorder.len() == 3).await;
    let key = format!("{ns}/a");
    assert_eq!(
        recorder.calls(),
        [
            Call::Add {
                key: key.clone(),
                rv: support::rv_of(&on),
                initial: false
            },
            Call::Update {
                key: key.clone(),
                old_rv: support::rv_of(&on),
                new_rv: support::rv_of(&on2),
                resync: false
            },
            Call::Delete {
                key,
                rv: Some(support::rv_of(&on2)),
                tombstone: false
            },
        ]
    );
    assert!(support::rv_of(&off) > support::rv_of(&on2));
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_informer_should_run_once_and_refuse_handlers_after_it_stopped() {
    let env = start_cluster("an_informer_should_run_once_and_refuse_h").await;
    let informer = informer(&env);
    let running = run(&informer);
    synced(&informer).await;
    assert!(matches!(
        informer.run(CancellationToken::new()).await,
        Err(Error::AlreadyStarted)
    ));
    let mut by_value = Indexers::default();
    by_value.insert(
        "by-v".to_owned(),
        index_func(|cm: &ConfigMap| cm.data.iter().flat_map(|d| d.values().cloned()).collect()),
    );
    informer
        .add_indexers(by_value)
        .unwrap_or_else(|e| panic!("indexers can be added while running: {e}"));
    running.stop().await;
    assert!(informer.is_stopped());
    assert!(matches!(
        informer.add_event_handler(Recorder::new()),
        Err(Error::Stopped)
    ));
    assert!(matches!(
        informer.run(CancellationToken::new()).await,
        Err(Error::Stopped)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compact_cache_should_serve_the_same_objects_to_listers_and_handlers() {
    let env = start_cluster("a_compact_cache_should_serve_the_same_ob").await;
    let ns = env.namespace().to_owned();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    for i in 0..3 {
        create(&api, &format!("cm{i}"), "0").await;
    }
    // Asked once it is shared, the informer keeps its default cache.
    let shared = informer(&env);
    let _other_handle = shared.clone();
    assert!(!shared.compact_cache().get_indexer().is_compact());

    let informer = informer(&env).compact_cache();
    assert!(informer.get_indexer().is_compact());
    let updates = Arc::new(parking_lot::Mutex::new(Vec::<(String, String)>::new()));
    informer
        .add_event_handler(ResourceEventHandlerFuncs::new().update_func({
            let updates = updates.clone();
            move |old: &Arc<ConfigMap>, new: &Arc<ConfigMap>| {
                let v = |cm: &ConfigMap| cm.data.as_ref().and_then(|d| d.get("v")).cloned();
                updates
                    .lock()
                    .push((v(old).unwrap_or_default(), v(new).unwrap_or_default()));
            }
        }))
        .unwrap_or_else(|e| panic!("{e}"));
    let running = run(&informer);
    synced(&informer).await;
    let lister = informer.lister();
    assert_eq!(
        lister.namespaced(&ns).list(&Selector::everything()).len(),
        3
    );
    let served = lister
        .namespaced(&ns)
        .get("cm1")
        .unwrap_or_else(|| panic!("cm1"));
    let from_server = api.get("cm1").await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(served.data, from_server.data);
    assert_eq!(
        served.metadata.resource_version,
        from_server.metadata.resource_version
    );
    assert!(served.metadata.managed_fields.is_none());

    update(&api, "cm1", "1").await;
    eventually("the update", 10, || {
        lister.namespaced(&ns).get("cm1").is_some_and(|cm| {
            cm.data
                .as_ref()
                .and_then(|d| d.get("v"))
                .map(String::as_str)
                == Some("1")
        })
    })
    .await;
    eventually("the update's handler call", 10, || {
        !updates.lock().is_empty()
    })
    .await;
    assert_eq!(updates.lock()[0], ("0".to_owned(), "1".to_owned()));
    running.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutation_cache_should_give_ones_own_write_until_the_informer_has_it_and_refuse_it_once_deleted()
 {
    use kcr_cache::{MutationCache, MutationCacheOptions};
    let env = start_cluster("a_mutation_cache_should_give_ones_own_w").await;
    let ns = env.namespace().to_owned();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), &ns);
    create(&api, "cm", "0").await;
    let informer = informer(&env);
    let writes = Arc::new(MutationCache::new(
        informer.get_indexer(),
        MutationCacheOptions::new()
            .indexer(informer.get_indexer())
            .include_adds(true),
    ));
    // Registered as a handler, it learns what the informer stores.
    informer
        .add_event_handler(writes.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    let running = run(&informer);
    synced(&informer).await;

    let key = format!("{ns}/cm");
    let rv = |cm: &ConfigMap| cm.metadata.resource_version.clone();
    let written = Arc::new(update(&api, "cm", "1").await);
    writes.mutation(written.clone());
    // Whether or not the informer has seen the update yet, the read is our write.
    let read = writes
        .get_by_key(&key)
        .unwrap_or_else(|| panic!("{key} missing"));
    assert_eq!(rv(&read), rv(&written));
    let by_namespace = writes
        .by_index(NAMESPACE_INDEX, &ns)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        by_namespace.iter().map(|o| rv(o)).collect::<Vec<_>>(),
        [rv(&written)]
    );
    eventually("the informer catches up and the entry goes", 20, || {
        writes.is_empty()
    })
    .await;
    assert_eq!(
        informer.get_indexer().get_by_key(&key).map(|o| rv(&o)),
        Some(rv(&written))
    );

    delete(&api, "cm").await;
    eventually("the deletion leaves a tombstone", 20, || writes.len() == 1).await;
    // A late result of a write of the deleted object is not recorded again.
    writes.mutation(written);
    assert!(writes.get_by_key(&key).is_none());
    running.stop().await;
}
