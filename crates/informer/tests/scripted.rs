//! Exact event sequences through a scripted `ListerWatcher` (no server),
//! under a paused clock: the 1.36 relist order on the RealFifo, the old
//! order on the DeltaFifo, resync rules, the pause after a handler panic,
//! bookmarks through the atomic RealFifo, a streaming list transformed as it
//! arrives.

mod support;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ManagedFieldsEntry;
use kcr_cache::Indexers;
use kcr_informer::{InformerQueue, ResourceEventHandlerFuncs, SharedIndexInformer};
use kcr_reflector::{
    Bookmark, Error as ReflectorError, INITIAL_EVENTS_END_ANNOTATION, ListOptions, ListerWatcher,
    ObjectList, WatchEvent, WatchOptions, WatchStream,
};
use kube::core::Status;
use parking_lot::Mutex;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use support::{Call, Recorder};

fn cm(name: &str, rv: u64) -> ConfigMap {
    let mut cm = ConfigMap::default();
    cm.metadata.namespace = Some("ns".to_owned());
    cm.metadata.name = Some(name.to_owned());
    cm.metadata.resource_version = Some(rv.to_string());
    cm
}

type Events = mpsc::UnboundedSender<kcr_reflector::Result<WatchEvent<ConfigMap>>>;

/// Lists come from a script; each watch is a channel the test feeds. Once
/// the script is used up, lists repeat the last one and watches stay open.
struct Scripted {
    lists: Mutex<VecDeque<ObjectList<ConfigMap>>>,
    last_list: Mutex<Option<ObjectList<ConfigMap>>>,
    watches: Mutex<VecDeque<mpsc::UnboundedReceiver<kcr_reflector::Result<WatchEvent<ConfigMap>>>>>,
}

impl Scripted {
    /// A script of `lists`, and one fed watch per list.
    fn new(lists: Vec<(Vec<ConfigMap>, u64)>) -> (Arc<Self>, Vec<Events>) {
        let mut senders = Vec::new();
        let mut receivers = VecDeque::new();
        for _ in &lists {
            let (tx, rx) = mpsc::unbounded_channel();
            senders.push(tx);
            receivers.push_back(rx);
        }
        let lists = lists
            .into_iter()
            .map(|(items, rv)| ObjectList {
                items,
                resource_version: rv.to_string(),
                continue_token: None,
                remaining_item_count: None,
            })
            .collect();
        let scripted = Arc::new(Self {
            lists: Mutex::new(lists),
            last_list: Mutex::new(None),
            watches: Mutex::new(receivers),
        });
        (scripted, senders)
    }
}

#[async_trait]
impl ListerWatcher<ConfigMap> for Scripted {
    async fn list(&self, _: &ListOptions) -> kcr_reflector::Result<ObjectList<ConfigMap>> {
        let next = self.lists.lock().pop_front();
        let list = match next {
            Some(list) => {
                *self.last_list.lock() = Some(list.clone());
                list
            }
            None => self.last_list.lock().clone().ok_or_else(|| {
                ReflectorError::from_status(Status::failure("no list", "NotFound").with_code(404))
            })?,
        };
        Ok(list)
    }

    async fn watch(&self, _: &WatchOptions) -> kcr_reflector::Result<WatchStream<ConfigMap>> {
        let next = self.watches.lock().pop_front();
        Ok(match next {
            Some(rx) => futures::stream::unfold(rx, |mut rx| async move {
                rx.recv().await.map(|event| (event, rx))
            })
            .boxed(),
            None => futures::stream::pending().boxed(),
        })
    }
}

fn gone() -> kcr_reflector::Result<WatchEvent<ConfigMap>> {
    Ok(WatchEvent::Error(Box::new(
        Status::failure("too old resource version", "Expired").with_code(410),
    )))
}

fn informer(
    lw: Arc<Scripted>,
    resync: Duration,
    queue: InformerQueue,
) -> SharedIndexInformer<ConfigMap> {
    SharedIndexInformer::new(lw, resync, Indexers::default())
        .name("scripted")
        .queue(queue)
        .reflector_options(|r| r.use_watch_list(false))
}

fn run(
    informer: &SharedIndexInformer<ConfigMap>,
) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let informer = informer.clone();
        let cancel = cancel.clone();
        async move {
            informer.run(cancel).await.unwrap_or_else(|e| panic!("{e}"));
        }
    });
    (cancel, task)
}

/// Waits (in paused time) until `f` holds.
async fn until(what: &str, f: impl Fn() -> bool) {
    for _ in 0..600 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

fn add(key: &str, rv: u64, initial: bool) -> Call {
    Call::Add {
        key: key.to_owned(),
        rv,
        initial,
    }
}

fn update(key: &str, old_rv: u64, new_rv: u64) -> Call {
    Call::Update {
        key: key.to_owned(),
        old_rv,
        new_rv,
        resync: false,
    }
}

fn tombstone(key: &str, rv: u64) -> Call {
    Call::Delete {
        key: key.to_owned(),
        rv: Some(rv),
        tombstone: true,
    }
}

/// The calls a handler gets across a relist that drops `a`, changes `b`
/// and adds `c`.
async fn relist_calls(queue: InformerQueue) -> Vec<Call> {
    let (lw, watches) = Scripted::new(vec![
        (vec![cm("a", 1), cm("b", 1)], 1),
        (vec![cm("b", 4), cm("c", 4)], 5),
    ]);
    let informer = informer(lw, Duration::ZERO, queue);
    let recorder = Recorder::new();
    informer
        .add_event_handler(recorder.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    let (cancel, task) = run(&informer);
    until("the first list", || recorder.len() == 2).await;
    watches[0]
        .send(gone())
        .unwrap_or_else(|_| panic!("watch dropped"));
    until("the relist", || recorder.len() == 5).await;
    assert_eq!(informer.last_sync_resource_version(), "5");
    cancel.cancel();
    let _ = task.await;
    assert!(informer.is_stopped());
    recorder.calls()
}

#[tokio::test(start_paused = true)]
async fn a_relist_should_reach_handlers_as_its_deletions_first_then_the_listed_objects() {
    let expected = [
        add("ns/a", 1, true),
        add("ns/b", 1, true),
        tombstone("ns/a", 1),
        update("ns/b", 1, 4),
        add("ns/c", 4, false),
    ];
    assert_eq!(relist_calls(InformerQueue::RealFifo).await, expected);
    assert_eq!(
        relist_calls(InformerQueue::RealFifoWithKnownObjects).await,
        expected
    );
}

#[tokio::test(start_paused = true)]
async fn the_delta_fifo_informer_should_keep_the_old_order_listed_objects_first() {
    assert_eq!(
        relist_calls(InformerQueue::DeltaFifo).await,
        [
            add("ns/a", 1, true),
            add("ns/b", 1, true),
            update("ns/b", 1, 4),
            add("ns/c", 4, false),
            tombstone("ns/a", 1),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn watch_events_should_reach_handlers_in_order_through_batches() {
    let (lw, watches) = Scripted::new(vec![(vec![cm("a", 1)], 1)]);
    let informer = informer(lw, Duration::ZERO, InformerQueue::RealFifo);
    let recorder = Recorder::new();
    let registration = informer
        .add_event_handler(recorder.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    let (cancel, task) = run(&informer);
    until("the first list", || registration.has_synced()).await;
    for event in [
        WatchEvent::Added(cm("b", 2)),
        WatchEvent::Modified(cm("a", 3)),
        WatchEvent::Added(cm("c", 4)),
        WatchEvent::Modified(cm("a", 5)),
        WatchEvent::Deleted(cm("b", 6)),
    ] {
        watches[0]
            .send(Ok(event))
            .unwrap_or_else(|_| panic!("watch dropped"));
    }
    until("the events", || recorder.len() == 6).await;
    assert_eq!(
        recorder.calls(),
        [
            add("ns/a", 1, true),
            add("ns/b", 2, false),
            update("ns/a", 1, 3),
            add("ns/c", 4, false),
            update("ns/a", 3, 5),
            Call::Delete {
                key: "ns/b".to_owned(),
                rv: Some(6),
                tombstone: false
            },
        ]
    );
    let keys: Vec<String> = informer
        .get_indexer()
        .list_keys()
        .iter()
        .map(|k| k.to_string())
        .collect();
    assert_eq!(keys.len(), 2);
    assert_eq!(
        informer.get_indexer().last_store_sync_resource_version(),
        "6"
    );
    cancel.cancel();
    let _ = task.await;
}

#[tokio::test(start_paused = true)]
async fn an_informer_without_resync_should_never_resync_whatever_a_handler_asks() {
    let (lw, _watches) = Scripted::new(vec![(vec![cm("a", 1)], 1)]);
    let informer = informer(lw, Duration::ZERO, InformerQueue::RealFifo);
    let recorder = Recorder::new();
    informer
        .add_event_handler_with_resync_period(recorder.clone(), Duration::from_secs(1))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(informer.resync_check_period(), Duration::ZERO);
    assert_eq!(informer.listener_count(), 1);
    let (cancel, task) = run(&informer);
    until("the first list", || recorder.len() == 1).await;
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert_eq!(recorder.calls(), [add("ns/a", 1, true)], "no resync");
    cancel.cancel();
    let _ = task.await;
}

#[tokio::test(start_paused = true)]
async fn a_resync_should_replay_the_cache_only_to_handlers_due_for_one() {
    let (lw, _watches) = Scripted::new(vec![(vec![cm("a", 1)], 1)]);
    let informer = informer(lw, Duration::from_secs(10), InformerQueue::RealFifo);
    let due = Recorder::new();
    let never = Recorder::new();
    informer
        .add_event_handler(due.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    informer
        .add_event_handler_with_resync_period(never.clone(), Duration::ZERO)
        .unwrap_or_else(|e| panic!("{e}"));
    let (cancel, task) = run(&informer);
    until("a resync", || due.resyncs() >= 1).await;
    assert_eq!(never.calls(), [add("ns/a", 1, true)]);
    cancel.cancel();
    let _ = task.await;
}

#[tokio::test(start_paused = true)]
async fn after_a_handler_panics_its_next_call_should_wait_a_second() {
    let (lw, _watches) = Scripted::new(vec![(vec![cm("a", 1), cm("b", 1)], 1)]);
    let informer = informer(lw, Duration::ZERO, InformerQueue::RealFifo);
    let calls: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let registration = informer
        .add_event_handler(ResourceEventHandlerFuncs::new().add_func({
            let calls = calls.clone();
            move |cm: &Arc<ConfigMap>, _| {
                let name = cm.metadata.name.clone().unwrap_or_default();
                calls.lock().push((name.clone(), Instant::now()));
                if name == "a" {
                    panic!("handler bug");
                }
            }
        }))
        .unwrap_or_else(|e| panic!("{e}"));
    let (cancel, task) = run(&informer);
    until("both calls", || calls.lock().len() == 2).await;
    let calls = calls.lock().clone();
    assert_eq!(calls[0].0, "a");
    assert_eq!(calls[1].0, "b");
    let pause = calls[1].1 - calls[0].1;
    assert!(pause >= Duration::from_secs(1), "paused {pause:?}");
    assert_eq!(registration.panics(), 1);
    until("the registration syncs", || registration.has_synced()).await;
    cancel.cancel();
    let _ = task.await;
}

fn send(watch: &Events, event: WatchEvent<ConfigMap>) {
    watch
        .send(Ok(event))
        .unwrap_or_else(|_| panic!("watch dropped"));
}

fn bookmark(rv: u64, initial_events_end: bool) -> WatchEvent<ConfigMap> {
    let mut bookmark = Bookmark {
        resource_version: rv.to_string(),
        ..Bookmark::default()
    };
    if initial_events_end {
        bookmark
            .annotations
            .insert(INITIAL_EVENTS_END_ANNOTATION.to_owned(), "true".to_owned());
    }
    WatchEvent::Bookmark(bookmark)
}

#[tokio::test(start_paused = true)]
async fn a_watch_bookmark_should_reach_the_cache_through_the_atomic_real_fifo() {
    let (lw, watches) = Scripted::new(vec![(vec![cm("a", 1)], 1)]);
    let informer = informer(lw, Duration::ZERO, InformerQueue::RealFifo);
    let (cancel, task) = run(&informer);
    until("the first list", || informer.has_synced()).await;
    assert_eq!(
        informer.get_indexer().last_store_sync_resource_version(),
        "1"
    );
    send(&watches[0], bookmark(9, false));
    // Only a `Bookmark` delta popped from the FIFO moves the cache's version:
    // the reflector hands bookmarks to the FIFO, not to the cache.
    until("the bookmark", || {
        informer.get_indexer().last_store_sync_resource_version() == "9"
    })
    .await;
    assert_eq!(informer.last_sync_resource_version(), "9");
    assert_eq!(informer.get_indexer().list_keys().len(), 1);
    cancel.cancel();
    let _ = task.await;
}

#[tokio::test(start_paused = true)]
async fn bookmarks_of_a_streaming_list_should_reach_the_cache_only_after_the_initial_events() {
    let (lw, watches) = Scripted::new(vec![(Vec::new(), 1)]);
    let informer = SharedIndexInformer::new(lw, Duration::ZERO, Indexers::default())
        .name("streaming-bookmarks")
        .reflector_options(|r| r.use_watch_list(true));
    let (cancel, task) = run(&informer);
    let cache_version = || informer.get_indexer().last_store_sync_resource_version();
    send(&watches[0], WatchEvent::Added(cm("a", 2)));
    // A bookmark among the initial events moves only the streamed state's
    // version: neither the FIFO nor the reflector sees it yet.
    send(&watches[0], bookmark(3, false));
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(!informer.has_synced());
    assert_eq!(cache_version(), "");
    assert_eq!(informer.last_sync_resource_version(), "");
    send(&watches[0], bookmark(4, true));
    until("the streaming list is stored", || informer.has_synced()).await;
    // The initial-events-end bookmark's version comes with the replace.
    assert_eq!(cache_version(), "4");
    assert_eq!(informer.last_sync_resource_version(), "4");
    // Later bookmarks of the same stream are `Bookmark` events of the FIFO.
    send(&watches[0], bookmark(9, false));
    until("the bookmark", || cache_version() == "9").await;
    assert_eq!(informer.last_sync_resource_version(), "9");
    assert_eq!(
        informer.get_indexer().list_keys(),
        vec![Arc::<str>::from("ns/a")]
    );
    cancel.cancel();
    let _ = task.await;
}

#[tokio::test(start_paused = true)]
async fn a_streaming_list_should_be_transformed_as_it_arrives_before_it_reaches_the_cache() {
    let (lw, watches) = Scripted::new(vec![(Vec::new(), 1)]);
    let informer = SharedIndexInformer::new(lw, Duration::ZERO, Indexers::default())
        .name("streaming")
        .reflector_options(|r| r.use_watch_list(true));
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    informer
        .set_transform({
            let seen = seen.clone();
            move |obj: Arc<ConfigMap>| {
                // The informer drops managedFields before the user's transform.
                assert!(obj.metadata.managed_fields.is_none());
                seen.lock()
                    .push(obj.metadata.name.clone().unwrap_or_default());
                let mut obj = Arc::unwrap_or_clone(obj);
                obj.metadata
                    .labels
                    .get_or_insert_default()
                    .insert("transformed".to_owned(), "yes".to_owned());
                Ok(Arc::new(obj))
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let (cancel, task) = run(&informer);
    let with_managed_fields = |name: &str, rv: u64| {
        let mut obj = cm(name, rv);
        obj.metadata.managed_fields = Some(vec![ManagedFieldsEntry {
            manager: Some("kubectl".to_owned()),
            operation: Some("Update".to_owned()),
            ..ManagedFieldsEntry::default()
        }]);
        obj
    };
    send(&watches[0], WatchEvent::Added(with_managed_fields("a", 2)));
    send(&watches[0], WatchEvent::Added(with_managed_fields("b", 3)));
    // The temporary store of the streaming list holds them transformed.
    until("the streamed objects are transformed", || {
        seen.lock().len() == 2
    })
    .await;
    assert!(!informer.has_synced());
    assert!(informer.get_indexer().list_keys().is_empty());
    send(&watches[0], bookmark(3, true));
    until("the streaming list is stored", || informer.has_synced()).await;
    let mut cached = informer.get_indexer().list().to_vec();
    cached.sort_by_key(|o| o.metadata.name.clone());
    assert_eq!(cached.len(), 2);
    for obj in &cached {
        assert!(obj.metadata.managed_fields.is_none());
        assert_eq!(
            obj.metadata
                .labels
                .as_ref()
                .and_then(|l| l.get("transformed")),
            Some(&"yes".to_owned())
        );
    }
    assert_eq!(informer.last_sync_resource_version(), "3");
    cancel.cancel();
    let _ = task.await;
}

/// Runs an informer on `queue` with a transform that counts its calls and
/// notes the object it returns; lists `a` and `b` (streamed or paged) and
/// returns, once synced, how many calls there were and whether every cached
/// object is an object the transform returned (the same `Arc`).
async fn transform_calls(queue: InformerQueue, streaming: bool) -> (usize, bool) {
    let lists = if streaming {
        vec![(Vec::new(), 1)]
    } else {
        vec![(vec![cm("a", 1), cm("b", 1)], 1)]
    };
    let (lw, watches) = Scripted::new(lists);
    let informer = SharedIndexInformer::new(lw, Duration::ZERO, Indexers::default())
        .name("transformed-once")
        .queue(queue)
        .reflector_options(move |r| r.use_watch_list(streaming));
    let returned: Arc<Mutex<Vec<usize>>> = Arc::default();
    informer
        .set_transform({
            let returned = returned.clone();
            move |obj: Arc<ConfigMap>| {
                let mut obj = Arc::unwrap_or_clone(obj);
                obj.metadata
                    .labels
                    .get_or_insert_default()
                    .insert("transformed".to_owned(), "yes".to_owned());
                let obj = Arc::new(obj);
                returned.lock().push(Arc::as_ptr(&obj) as usize);
                Ok(obj)
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let (cancel, task) = run(&informer);
    if streaming {
        send(&watches[0], WatchEvent::Added(cm("a", 1)));
        send(&watches[0], WatchEvent::Added(cm("b", 1)));
        send(&watches[0], bookmark(1, true));
    }
    until("the list is cached", || informer.has_synced()).await;
    let cached = informer.get_indexer().list();
    assert_eq!(cached.len(), 2);
    let returned = returned.lock().clone();
    let same = cached
        .iter()
        .all(|o| returned.contains(&(Arc::as_ptr(o) as usize)));
    cancel.cancel();
    let _ = task.await;
    (returned.len(), same)
}

#[tokio::test(start_paused = true)]
async fn every_listed_object_should_be_transformed_once_and_cached_as_the_transform_returned_it() {
    for queue in [
        InformerQueue::RealFifo,
        InformerQueue::RealFifoWithKnownObjects,
        InformerQueue::DeltaFifo,
    ] {
        for streaming in [true, false] {
            assert_eq!(
                transform_calls(queue, streaming).await,
                (2, true),
                "{queue:?}, streaming {streaming}: one transform per object, its Arc cached"
            );
        }
    }
}

/// Waits until `f` holds, on a clock that runs: a paused clock does not
/// advance while a handler call (a blocking task) is held at a gate.
async fn until_running(what: &str, f: impl Fn() -> bool) {
    for _ in 0..10_000 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutting_a_handler_down_should_wait_for_its_call_in_progress_and_stop_every_later_call() {
    let (lw, watches) = Scripted::new(vec![(vec![cm("a", 1)], 1)]);
    let informer = informer(lw, Duration::ZERO, InformerQueue::RealFifo);
    let gate = support::Gate::new();
    let gated = Recorder::new();
    let registration = informer
        .add_event_handler(support::Gated {
            gate: gate.clone(),
            recorder: gated.clone(),
        })
        .unwrap_or_else(|e| panic!("{e}"));
    let witness = Recorder::new();
    informer
        .add_event_handler(witness.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    let (cancel, task) = run(&informer);
    until_running("the gated handler's first call", || {
        *gate.waiting.lock() == 1
    })
    .await;

    let shut_down = tokio::spawn({
        let informer = informer.clone();
        let registration = registration.clone();
        async move { informer.shut_down_event_handler(&registration).await }
    });
    until_running("the removal", || informer.listener_count() == 1).await;
    send(&watches[0], WatchEvent::Added(cm("b", 2)));
    until_running("the other handler sees b", || witness.len() == 2).await;
    // The informer has gone on (b was distributed after the removal began);
    // the gated call is still held, so the shut-down cannot have returned.
    assert!(
        !shut_down.is_finished(),
        "the shut-down returned while a call was in progress"
    );
    assert!(!registration.is_stopped());

    gate.open();
    shut_down
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(registration.is_stopped());
    assert_eq!(
        gated.calls(),
        [add("ns/a", 1, true)],
        "only the call in progress"
    );
    send(&watches[0], WatchEvent::Added(cm("c", 3)));
    until_running("the other handler sees c", || witness.len() == 3).await;
    assert_eq!(gated.len(), 1, "a call after the shut-down returned");
    // Again: it has stopped, so this returns at once.
    informer
        .shut_down_event_handler(&registration)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    cancel.cancel();
    let _ = task.await;
}

#[tokio::test(start_paused = true)]
async fn a_handler_shutting_itself_down_from_its_own_callback_should_get_an_error_not_a_deadlock() {
    let (lw, _watches) = Scripted::new(vec![(vec![cm("a", 1), cm("b", 1)], 1)]);
    let informer = informer(lw, Duration::ZERO, InformerQueue::RealFifo);
    let slot: Arc<std::sync::OnceLock<kcr_informer::Registration>> = Arc::default();
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let registration = informer
        .add_event_handler(ResourceEventHandlerFuncs::new().add_func({
            let (informer, slot, outcomes) = (informer.clone(), slot.clone(), outcomes.clone());
            move |_, _| {
                let Some(registration) = slot.get() else {
                    return;
                };
                // A synchronous callback waiting on the runtime, on its own thread.
                let waited = tokio::runtime::Handle::current()
                    .block_on(informer.shut_down_event_handler(registration));
                outcomes.lock().push(format!("{waited:?}"));
                // The asynchronous removal is allowed here.
                informer
                    .remove_event_handler(registration)
                    .unwrap_or_else(|e| panic!("{e}"));
            }
        }))
        .unwrap_or_else(|e| panic!("{e}"));
    slot.set(registration.clone())
        .unwrap_or_else(|_| panic!("set twice"));
    let (cancel, task) = run(&informer);
    until("the handler stops", || registration.is_stopped()).await;
    assert_eq!(*outcomes.lock(), ["Err(ShutDownFromOwnHandler)"]);
    informer
        .shut_down_event_handler(&registration)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    cancel.cancel();
    let _ = task.await;
}

#[tokio::test(start_paused = true)]
async fn shutting_down_a_handler_of_an_informer_never_started_should_return_at_once_and_another_informers_should_fail()
 {
    let (lw, _) = Scripted::new(vec![(vec![cm("a", 1)], 1)]);
    let (other_lw, _) = Scripted::new(vec![(vec![cm("a", 1)], 1)]);
    let informer = informer(lw, Duration::ZERO, InformerQueue::RealFifo);
    let other = self::informer(other_lw, Duration::ZERO, InformerQueue::RealFifo);
    let registration = informer
        .add_event_handler(Recorder::new())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(
        other.shut_down_event_handler(&registration).await,
        Err(kcr_informer::Error::ForeignRegistration)
    ));
    assert_eq!(informer.listener_count(), 1);
    informer
        .shut_down_event_handler(&registration)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(registration.is_stopped());
    assert_eq!(informer.listener_count(), 0);
}
