//! Timing and state-machine tests of the reflector, under paused time, with
//! a small scripted in-process [`ListerWatcher`]. (The HTTP behaviour is
//! tested against kcr-testenv in `tests/`.)

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::core::{ObjectMeta, Status};
use parking_lot::Mutex;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use std::sync::atomic::Ordering;

use super::*;
use crate::listwatch::{Bookmark, ObjectList};
use kcr_cache::BoxError;

fn cm(name: &str, rv: u64) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some("ns".to_owned()),
            resource_version: Some(rv.to_string()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    }
}

fn page(
    items: Vec<ConfigMap>,
    rv: u64,
    continue_token: Option<&str>,
) -> Result<ObjectList<ConfigMap>> {
    Ok(ObjectList {
        items,
        resource_version: rv.to_string(),
        continue_token: continue_token.map(str::to_owned),
        remaining_item_count: None,
    })
}

fn status(code: u16, reason: &str) -> Error {
    Error::from_status(Status::failure("scripted", reason).with_code(code))
}

enum Call {
    List(ListOptions),
    Watch(WatchOptions),
}

/// A watch script: its events, then whether the stream stays open.
struct WatchScript {
    events: Vec<Result<WatchEvent<ConfigMap>>>,
    then: Then,
}

/// What a scripted watch does after its events.
enum Then {
    Close,
    StayOpen,
    CloseAfter(Duration),
}

fn watch_closing(events: Vec<Result<WatchEvent<ConfigMap>>>) -> Result<WatchScript> {
    Ok(WatchScript {
        events,
        then: Then::Close,
    })
}

fn watch_open(events: Vec<Result<WatchEvent<ConfigMap>>>) -> Result<WatchScript> {
    Ok(WatchScript {
        events,
        then: Then::StayOpen,
    })
}

/// Answers lists and watches from scripts, recording every call and when it
/// came. An exhausted script leaves the call pending forever.
#[derive(Default)]
struct Scripted {
    lists: Mutex<VecDeque<Result<ObjectList<ConfigMap>>>>,
    watches: Mutex<VecDeque<Result<WatchScript>>>,
    calls: Mutex<Vec<(Instant, Call)>>,
}

impl Scripted {
    fn on_list(&self, r: Result<ObjectList<ConfigMap>>) -> &Self {
        self.lists.lock().push_back(r);
        self
    }
    fn on_watch(&self, r: Result<WatchScript>) -> &Self {
        self.watches.lock().push_back(r);
        self
    }
    fn list_calls(&self) -> Vec<(Instant, ListOptions)> {
        self.calls
            .lock()
            .iter()
            .filter_map(|(at, c)| match c {
                Call::List(o) => Some((*at, o.clone())),
                Call::Watch(_) => None,
            })
            .collect()
    }
    fn watch_calls(&self) -> Vec<(Instant, WatchOptions)> {
        self.calls
            .lock()
            .iter()
            .filter_map(|(at, c)| match c {
                Call::Watch(o) => Some((*at, o.clone())),
                Call::List(_) => None,
            })
            .collect()
    }
}

#[async_trait]
impl ListerWatcher<ConfigMap> for Scripted {
    async fn list(&self, options: &ListOptions) -> Result<ObjectList<ConfigMap>> {
        self.calls
            .lock()
            .push((Instant::now(), Call::List(options.clone())));
        let next = self.lists.lock().pop_front();
        match next {
            Some(r) => r,
            None => futures::future::pending().await,
        }
    }

    async fn watch(&self, options: &WatchOptions) -> Result<WatchStream<ConfigMap>> {
        self.calls
            .lock()
            .push((Instant::now(), Call::Watch(options.clone())));
        let next = self.watches.lock().pop_front();
        match next {
            Some(Ok(script)) => {
                let events = futures::stream::iter(script.events);
                Ok(match script.then {
                    Then::Close => events.boxed(),
                    Then::StayOpen => events.chain(futures::stream::pending()).boxed(),
                    Then::CloseAfter(d) => events
                        .chain(
                            futures::stream::once(tokio::time::sleep(d))
                                .filter_map(|()| async { None }),
                        )
                        .boxed(),
                })
            }
            Some(Err(e)) => Err(e),
            None => futures::future::pending().await,
        }
    }
}

/// A store that records what it is told.
#[derive(Default)]
struct Recording {
    items: Mutex<BTreeMap<String, Arc<ConfigMap>>>,
    ops: Mutex<Vec<String>>,
    /// The versions `update_resource_version` was told.
    versions: Mutex<Vec<String>>,
    /// The versions `bookmark` was told.
    bookmarks: Mutex<Vec<String>>,
    /// Refuse every `add`.
    fail_add: bool,
    /// Refuse every `resync`.
    fail_resync: bool,
    transform: Option<kcr_cache::TransformFunc<ConfigMap>>,
}

impl Recording {
    fn ops(&self) -> Vec<String> {
        self.ops.lock().clone()
    }
    fn names(&self) -> Vec<String> {
        self.items.lock().keys().cloned().collect()
    }
}

impl ReflectorStore<ConfigMap> for Recording {
    fn add(&self, obj: Arc<ConfigMap>) -> Result<(), BoxError> {
        let name = obj.metadata.name.clone().unwrap_or_default();
        self.ops.lock().push(format!("add {name}"));
        if self.fail_add {
            return Err("add refused".into());
        }
        self.items.lock().insert(name, obj);
        Ok(())
    }
    fn update(&self, obj: Arc<ConfigMap>) -> Result<(), BoxError> {
        let name = obj.metadata.name.clone().unwrap_or_default();
        self.ops.lock().push(format!("update {name}"));
        self.items.lock().insert(name, obj);
        Ok(())
    }
    fn delete(&self, obj: Arc<ConfigMap>) -> Result<(), BoxError> {
        let name = obj.metadata.name.clone().unwrap_or_default();
        self.ops.lock().push(format!("delete {name}"));
        self.items.lock().remove(&name);
        Ok(())
    }
    fn replace(&self, list: Vec<Arc<ConfigMap>>, resource_version: &str) -> Result<(), BoxError> {
        self.ops
            .lock()
            .push(format!("replace {} @{resource_version}", list.len()));
        let mut items = self.items.lock();
        items.clear();
        for obj in list {
            items.insert(obj.metadata.name.clone().unwrap_or_default(), obj);
        }
        Ok(())
    }
    fn resync(&self) -> Result<(), BoxError> {
        self.ops.lock().push("resync".to_owned());
        if self.fail_resync {
            return Err("resync refused".into());
        }
        Ok(())
    }
    fn bookmark(&self, resource_version: &str) -> Result<(), BoxError> {
        self.bookmarks.lock().push(resource_version.to_owned());
        Ok(())
    }
    fn update_resource_version(&self, resource_version: &str) {
        self.versions.lock().push(resource_version.to_owned());
    }
    fn transformer(&self) -> Option<kcr_cache::TransformFunc<ConfigMap>> {
        self.transform.clone()
    }
}

struct Running {
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Running {
    async fn stop(self) {
        self.cancel.cancel();
        let _ = self.task.await;
    }
}

fn start(reflector: Reflector<ConfigMap>) -> (Arc<Reflector<ConfigMap>>, Running) {
    let reflector = Arc::new(reflector);
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let reflector = reflector.clone();
        let cancel = cancel.clone();
        async move { reflector.run(cancel).await }
    });
    (reflector, Running { cancel, task })
}

/// Lets every ready task run without moving the clock.
async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
}

/// A reflector that lists and watches (streaming lists off).
fn reflector(lw: &Arc<Scripted>, store: &Arc<Recording>) -> Reflector<ConfigMap> {
    Reflector::new(lw.clone(), store.clone())
        .name("test")
        .use_watch_list(false)
}

/// A reflector with client-go 1.36's defaults (streaming lists on).
fn streaming(lw: &Arc<Scripted>, store: &Arc<Recording>) -> Reflector<ConfigMap> {
    Reflector::new(lw.clone(), store.clone()).name("test")
}

#[tokio::test(start_paused = true)]
async fn reflector_should_list_at_version_zero_in_pages_then_replace_once_and_watch_from_the_list_version()
 {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("a", 1)], 10, Some("p2")))
        .on_list(page(vec![cm("b", 2)], 10, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (r, running) = start(reflector(&lw, &store));
    settle().await;
    let lists = lw.list_calls();
    assert_eq!(lists.len(), 2);
    assert_eq!(lists[0].1.resource_version.as_deref(), Some("0"));
    assert_eq!(lists[0].1.limit, Some(500));
    assert_eq!(lists[1].1.continue_token.as_deref(), Some("p2"));
    assert_eq!(store.ops(), vec!["replace 2 @10"]);
    let watches = lw.watch_calls();
    assert_eq!(watches.len(), 1);
    assert_eq!(watches[0].1.resource_version, "10");
    assert!(watches[0].1.allow_watch_bookmarks);
    assert_eq!(r.last_sync_resource_version(), "10");
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_ask_for_a_random_watch_timeout_between_300_and_600_seconds() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![], 1, None));
    // Each watch delivers a bookmark (so it is not "very short") and closes.
    for i in 0..40 {
        lw.on_watch(watch_closing(vec![Ok(WatchEvent::Bookmark(Bookmark {
            resource_version: (2 + i).to_string(),
            annotations: BTreeMap::new(),
        }))]));
    }
    let store = Arc::new(Recording::default());
    let (_r, running) = start(reflector(&lw, &store));
    settle().await;
    let timeouts: Vec<u32> = lw
        .watch_calls()
        .iter()
        .filter_map(|(_, o)| o.timeout_seconds)
        .collect();
    assert!(timeouts.len() > 30);
    assert!(
        timeouts.iter().all(|t| (300..600).contains(t)),
        "{timeouts:?}"
    );
    assert!(
        timeouts.iter().any(|t| *t != timeouts[0]),
        "not random: {timeouts:?}"
    );
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_apply_events_move_the_version_on_bookmarks_and_rewatch_without_relisting()
{
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("a", 1)], 5, None))
        .on_watch(watch_closing(vec![
            Ok(WatchEvent::Added(cm("b", 6))),
            Ok(WatchEvent::Modified(cm("a", 7))),
            Ok(WatchEvent::Bookmark(Bookmark {
                resource_version: "9".into(),
                annotations: BTreeMap::new(),
            })),
        ]))
        .on_watch(watch_open(vec![Ok(WatchEvent::Deleted(cm("b", 11)))]));
    let store = Arc::new(Recording::default());
    let (r, running) = start(reflector(&lw, &store));
    settle().await;
    assert_eq!(
        store.ops(),
        vec!["replace 1 @5", "add b", "update a", "delete b"]
    );
    assert_eq!(
        lw.list_calls().len(),
        1,
        "a normal watch end must not relist"
    );
    let watches = lw.watch_calls();
    assert_eq!(watches.len(), 2);
    assert_eq!(
        watches[1].1.resource_version, "9",
        "the bookmark moves the version"
    );
    assert_eq!(r.last_sync_resource_version(), "11");
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_wait_its_backoff_after_an_expired_watch_then_relist_from_the_last_version()
 {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("a", 1), cm("b", 2)], 5, None))
        .on_watch(watch_closing(vec![
            Ok(WatchEvent::Modified(cm("a", 6))),
            Ok(WatchEvent::Error(Box::new(
                Status::failure("too old", "Expired").with_code(410),
            ))),
        ]))
        .on_list(page(vec![cm("a", 6)], 20, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let reported = Arc::new(Mutex::new(0u32));
    let r = reflector(&lw, &store).watch_error_handler({
        let reported = reported.clone();
        move |_| *reported.lock() += 1
    });
    let (r, running) = start(r);
    settle().await;
    assert_eq!(lw.list_calls().len(), 1, "no relist before the backoff");
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let lists = lw.list_calls();
    assert_eq!(lists.len(), 2);
    let gap = lists[1].0 - lists[0].0;
    assert!(
        gap >= Duration::from_millis(800) && gap <= Duration::from_millis(1600),
        "{gap:?}"
    );
    assert_eq!(lists[1].1.resource_version.as_deref(), Some("6"));
    assert_eq!(
        lists[1].1.limit, None,
        "a list at a given version is not paged"
    );
    assert_eq!(
        store.names(),
        vec!["a"],
        "b, missing from the relist, is gone"
    );
    assert_eq!(r.last_sync_resource_version(), "20");
    assert_eq!(*reported.lock(), 0, "an expired watch is no handler error");
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_redo_a_paged_list_whole_at_the_same_version_when_a_continue_token_expires()
 {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("a", 1)], 10, Some("p2")))
        .on_list(Err(status(410, "Expired")))
        .on_list(page(vec![cm("a", 1), cm("b", 3)], 12, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (r, running) = start(reflector(&lw, &store));
    settle().await;
    let lists = lw.list_calls();
    assert_eq!(lists.len(), 3);
    assert_eq!(lists[1].1.continue_token.as_deref(), Some("p2"));
    assert_eq!(lists[1].1.resource_version, None, "the token carries it");
    assert_eq!(
        lists[2].1.resource_version.as_deref(),
        Some("0"),
        "redone at the same version"
    );
    assert_eq!(lists[2].1.continue_token, None);
    assert_eq!(lists[2].1.limit, None, "whole, unpaged");
    assert_eq!(
        store.ops(),
        vec!["replace 2 @12"],
        "one replace, only with the complete list"
    );
    assert_eq!(r.last_sync_resource_version(), "12");
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_list_from_the_latest_version_when_the_whole_list_expires_too() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("a", 1)], 10, Some("p2")))
        .on_list(Err(status(410, "Expired")))
        .on_list(Err(status(410, "Expired")))
        .on_list(page(vec![cm("a", 1)], 12, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (_r, running) = start(reflector(&lw, &store));
    settle().await;
    let lists = lw.list_calls();
    assert_eq!(lists.len(), 4);
    assert_eq!(lists[3].1.resource_version, None, "from the latest version");
    assert_eq!(lists[3].1.limit, Some(500));
    assert_eq!(store.ops(), vec!["replace 1 @12"]);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_back_off_exponentially_with_jitter_on_list_errors() {
    let lw = Arc::new(Scripted::default());
    for _ in 0..5 {
        lw.on_list(Err(status(500, "InternalError")));
    }
    lw.on_list(page(vec![], 3, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (_r, running) = start(reflector(&lw, &store));
    tokio::time::sleep(Duration::from_secs(120)).await;
    let at: Vec<Instant> = lw.list_calls().iter().map(|(at, _)| *at).collect();
    assert_eq!(at.len(), 6);
    let mut base = Duration::from_millis(800);
    for pair in at.windows(2) {
        let gap = pair[1] - pair[0];
        assert!(
            // `<=`: tokio's timer rounds deadlines up to the millisecond.
            gap >= base && gap <= base * 2,
            "gap {gap:?} not in [{base:?}, {:?}]",
            base * 2
        );
        base *= 2;
    }
    assert_eq!(store.ops(), vec!["replace 0 @3"]);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_cap_the_backoff_at_thirty_seconds_and_reset_it_after_two_healthy_minutes()
{
    let lw = Arc::new(Scripted::default());
    for _ in 0..8 {
        lw.on_list(Err(status(500, "InternalError")));
    }
    lw.on_list(page(vec![], 3, None));
    // Healthy for three minutes, then the watch ends and the re-watch fails
    // with a 500 (which needs a relist after a backoff).
    lw.on_watch(Ok(WatchScript {
        events: vec![Ok(WatchEvent::Bookmark(Bookmark {
            resource_version: "4".into(),
            annotations: BTreeMap::new(),
        }))],
        then: Then::CloseAfter(Duration::from_secs(180)),
    }));
    lw.on_watch(Err(status(500, "InternalError")));
    lw.on_list(page(vec![], 5, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let backoff = BackoffConfig::default().jitter(0.0);
    let (_r, running) = start(reflector(&lw, &store).backoff(backoff));
    tokio::time::sleep(Duration::from_secs(400)).await;
    let at: Vec<Instant> = lw.list_calls().iter().map(|(at, _)| *at).collect();
    assert_eq!(at.len(), 10);
    let gaps: Vec<Duration> = at.windows(2).map(|p| p[1] - p[0]).take(8).collect();
    let ms = |v: u64| Duration::from_millis(v);
    assert_eq!(
        gaps,
        vec![
            ms(800),
            ms(1600),
            ms(3200),
            ms(6400),
            ms(12800),
            ms(25600),
            ms(30000),
            ms(30000)
        ]
    );
    let failed_watch = lw.watch_calls()[1].0;
    assert_eq!(
        at[9] - failed_watch,
        ms(800),
        "reset after two minutes without a backoff"
    );
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_wait_retry_after_on_429() {
    let lw = Arc::new(Scripted::default());
    let mut throttled = status(429, "TooManyRequests");
    if let Error::Api { retry_after, .. } = &mut throttled {
        *retry_after = Some(Duration::from_secs(7));
    }
    lw.on_list(Err(throttled))
        .on_list(page(vec![], 3, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (_r, running) = start(reflector(&lw, &store));
    tokio::time::sleep(Duration::from_secs(30)).await;
    let at: Vec<Instant> = lw.list_calls().iter().map(|(at, _)| *at).collect();
    assert_eq!(at.len(), 2);
    assert_eq!(at[1] - at[0], Duration::from_secs(7));
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_rewatch_without_relisting_when_the_watch_connection_is_refused() {
    let refused = || {
        Error::Request(kube::Error::Service(Box::new(std::io::Error::new(
            std::io::ErrorKind::ConnectionRefused,
            "refused",
        ))))
    };
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("a", 1)], 5, None))
        .on_watch(Err(refused()))
        .on_watch(Err(refused()))
        .on_watch(watch_open(vec![Ok(WatchEvent::Added(cm("b", 6)))]));
    let store = Arc::new(Recording::default());
    let (_r, running) = start(reflector(&lw, &store));
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(lw.list_calls().len(), 1);
    let watches = lw.watch_calls();
    assert_eq!(watches.len(), 3);
    assert!(watches.iter().all(|(_, o)| o.resource_version == "5"));
    let gap = watches[1].0 - watches[0].0;
    // The jittered backoff is in [800 ms, 1600 ms); tokio's timer rounds a
    // deadline up to the millisecond, so the upper bound itself can be seen.
    assert!(
        gap >= Duration::from_millis(800) && gap <= Duration::from_millis(1600),
        "{gap:?}"
    );
    assert_eq!(store.names(), vec!["a", "b"]);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_relist_after_an_undecodable_event_keeping_its_state_without_the_watch_error_handler()
 {
    let lw = Arc::new(Scripted::default());
    let bad = Error::Decode {
        kind: "ConfigMap".into(),
        name: "ns/bad".into(),
        source: serde_json::from_str::<u8>("x")
            .err()
            .unwrap_or_else(|| unreachable!()),
    };
    lw.on_list(page(vec![cm("a", 1)], 5, None))
        .on_watch(watch_closing(vec![
            Ok(WatchEvent::Added(cm("b", 6))),
            Err(bad),
        ]))
        .on_list(page(vec![cm("a", 1), cm("b", 6), cm("c", 7)], 7, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let reported = Arc::new(Mutex::new(Vec::new()));
    let r = reflector(&lw, &store).watch_error_handler({
        let reported = reported.clone();
        move |e| reported.lock().push(e.to_string())
    });
    let (r, running) = start(r);
    // Before the backoff ends the store still holds what it had.
    settle().await;
    assert_eq!(store.names(), vec!["a", "b"]);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(lw.list_calls().len(), 2);
    assert_eq!(lw.list_calls()[1].1.resource_version.as_deref(), Some("6"));
    assert_eq!(store.names(), vec!["a", "b", "c"]);
    assert_eq!(r.last_sync_resource_version(), "7");
    assert!(
        reported.lock().is_empty(),
        "client-go hands a watch's decode error to no handler: {:?}",
        reported.lock()
    );
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_survive_a_panicking_watch_error_handler() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(Err(status(500, "InternalError")))
        .on_list(page(vec![cm("a", 1)], 2, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let r = reflector(&lw, &store).watch_error_handler(|_| panic!("handler bug"));
    let (_r, running) = start(r);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(store.names(), vec!["a"]);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_resync_every_period_only_when_should_resync_says_so() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("a", 1)], 2, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let ticks = Arc::new(Mutex::new(0u32));
    let r = reflector(&lw, &store)
        .resync_period(Duration::from_secs(10))
        .should_resync({
            let ticks = ticks.clone();
            move || {
                let mut t = ticks.lock();
                *t += 1;
                *t % 2 == 1
            }
        });
    let (_r, running) = start(r);
    tokio::time::sleep(Duration::from_secs(45)).await;
    assert_eq!(*ticks.lock(), 4, "asked at 10, 20, 30 and 40 s");
    let resyncs = store.ops().iter().filter(|o| *o == "resync").count();
    assert_eq!(resyncs, 2, "resynced when the hook said yes");
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_stream_the_initial_state_by_default() {
    let end = Bookmark {
        resource_version: "30".into(),
        annotations: [(
            crate::INITIAL_EVENTS_END_ANNOTATION.to_owned(),
            "true".to_owned(),
        )]
        .into(),
    };
    let lw = Arc::new(Scripted::default());
    lw.on_watch(watch_open(vec![
        Ok(WatchEvent::Added(cm("a", 10))),
        Ok(WatchEvent::Added(cm("b", 20))),
        Ok(WatchEvent::Bookmark(end)),
        Ok(WatchEvent::Modified(cm("a", 31))),
    ]));
    let store = Arc::new(Recording::default());
    let (r, running) = start(streaming(&lw, &store));
    settle().await;
    assert!(lw.list_calls().is_empty(), "a streaming list needs no list");
    let watches = lw.watch_calls();
    assert_eq!(watches.len(), 1);
    assert!(watches[0].1.send_initial_events);
    assert_eq!(
        watches[0].1.resource_version_match,
        Some(VersionMatch::NotOlderThan)
    );
    assert_eq!(store.ops(), vec!["replace 2 @30", "update a"]);
    assert_eq!(r.last_sync_resource_version(), "31");
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_fall_back_to_list_and_watch_when_the_server_refuses_watch_list() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(Err(status(422, "Invalid")))
        .on_list(page(vec![cm("a", 1)], 5, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (_r, running) = start(streaming(&lw, &store));
    settle().await;
    assert_eq!(lw.list_calls().len(), 1);
    let watches = lw.watch_calls();
    assert_eq!(watches.len(), 2);
    assert!(!watches[1].1.send_initial_events);
    assert_eq!(store.ops(), vec!["replace 1 @5"]);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_stop_promptly_when_cancelled_mid_request() {
    let lw = Arc::new(Scripted::default());
    // No script: the list hangs forever.
    let store = Arc::new(Recording::default());
    let (_r, running) = start(reflector(&lw, &store));
    settle().await;
    assert_eq!(lw.list_calls().len(), 1);
    let before = Instant::now();
    running.stop().await;
    assert_eq!(
        Instant::now(),
        before,
        "no time passes between cancel and return"
    );
    assert!(store.ops().is_empty());
}

fn initial_events_end(rv: u64) -> WatchEvent<ConfigMap> {
    WatchEvent::Bookmark(Bookmark {
        resource_version: rv.to_string(),
        annotations: [(
            crate::INITIAL_EVENTS_END_ANNOTATION.to_owned(),
            "true".to_owned(),
        )]
        .into(),
    })
}

fn bookmark(rv: u64) -> WatchEvent<ConfigMap> {
    WatchEvent::Bookmark(Bookmark {
        resource_version: rv.to_string(),
        annotations: BTreeMap::new(),
    })
}

fn expired_event() -> Result<WatchEvent<ConfigMap>> {
    Ok(WatchEvent::Error(Box::new(
        Status::failure("too old", "Expired").with_code(410),
    )))
}

fn handler_log(r: Reflector<ConfigMap>) -> (Reflector<ConfigMap>, Arc<Mutex<Vec<String>>>) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let r = r.watch_error_handler({
        let log = log.clone();
        move |e| log.lock().push(e.reason().to_owned())
    });
    (r, log)
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_be_tried_again_in_the_next_cycle_after_a_fallback() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(Err(status(422, "Invalid")))
        .on_list(page(vec![cm("a", 1)], 5, None))
        .on_watch(watch_closing(vec![expired_event()]))
        .on_watch(watch_open(vec![
            Ok(WatchEvent::Added(cm("a", 1))),
            Ok(initial_events_end(9)),
        ]));
    let store = Arc::new(Recording::default());
    let (r, log) = handler_log(streaming(&lw, &store));
    let (r, running) = start(r);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(lw.list_calls().len(), 1);
    let watches = lw.watch_calls();
    assert_eq!(watches.len(), 3);
    assert!(watches[0].1.send_initial_events);
    assert!(!watches[1].1.send_initial_events);
    assert!(
        watches[2].1.send_initial_events,
        "client-go falls back for one cycle only"
    );
    assert_eq!(watches[2].1.resource_version, "5");
    assert_eq!(store.ops(), vec!["replace 1 @5", "replace 1 @9"]);
    assert_eq!(r.last_sync_resource_version(), "9");
    assert!(log.lock().is_empty(), "a fallback is no handler error");
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_be_retried_after_the_backoff_on_429_without_a_list() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(Err(status(429, "TooManyRequests")))
        .on_watch(watch_open(vec![
            Ok(WatchEvent::Added(cm("a", 1))),
            Ok(initial_events_end(3)),
        ]));
    let store = Arc::new(Recording::default());
    let (_r, running) = start(streaming(&lw, &store));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        lw.list_calls().is_empty(),
        "a 429 is no reason to fall back"
    );
    let watches = lw.watch_calls();
    assert_eq!(watches.len(), 2);
    let gap = watches[1].0 - watches[0].0;
    assert!(gap >= Duration::from_millis(800), "{gap:?}");
    assert!(watches[1].1.send_initial_events);
    assert_eq!(store.ops(), vec!["replace 1 @3"]);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_be_reopened_when_its_stream_closes_before_the_initial_events_end() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(watch_closing(vec![Ok(WatchEvent::Added(cm("a", 1)))]))
        .on_watch(watch_open(vec![
            Ok(WatchEvent::Added(cm("b", 2))),
            Ok(initial_events_end(4)),
        ]));
    let store = Arc::new(Recording::default());
    let (_r, running) = start(streaming(&lw, &store));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(lw.list_calls().is_empty());
    let watches = lw.watch_calls();
    assert_eq!(watches.len(), 2);
    assert!(watches[1].1.send_initial_events);
    assert_eq!(watches[1].0, watches[0].0, "re-opened with no backoff");
    assert_eq!(
        store.names(),
        vec!["b"],
        "the first stream's partial state is dropped"
    );
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_fall_back_when_its_stream_closes_at_once_without_an_event() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(watch_closing(vec![]))
        .on_list(page(vec![cm("a", 1)], 5, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (_r, running) = start(streaming(&lw, &store));
    settle().await;
    assert_eq!(lw.list_calls().len(), 1, "a very short watch falls back");
    assert_eq!(store.ops(), vec!["replace 1 @5"]);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_restart_from_the_latest_version_when_its_version_expired() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("a", 1)], 5, None))
        .on_watch(watch_closing(vec![expired_event()]))
        .on_watch(Err(status(410, "Expired")))
        .on_watch(watch_open(vec![Ok(initial_events_end(30))]));
    let store = Arc::new(Recording::default());
    // The first cycle lists: the lister-watcher says it cannot stream...
    let first = reflector(&lw, &store);
    let (r, running) = start(first);
    tokio::time::sleep(Duration::from_millis(100)).await;
    running.stop().await;
    assert_eq!(r.last_sync_resource_version(), "5");
    // ...then a streaming reflector over the same state.
    let r = Arc::into_inner(r).unwrap_or_else(|| unreachable!());
    let (r, running) = start(r.use_watch_list(true));
    settle().await;
    let watches = lw.watch_calls();
    assert_eq!(watches.len(), 3);
    assert_eq!(watches[1].1.resource_version, "5");
    assert_eq!(watches[2].1.resource_version, "", "the latest state");
    assert!(lw.list_calls().len() == 1, "no fallback to a list");
    assert_eq!(r.last_sync_resource_version(), "30");
    running.stop().await;
}

/// A scripted lister-watcher that cannot stream lists.
struct Unable(Arc<Scripted>);

#[async_trait]
impl ListerWatcher<ConfigMap> for Unable {
    async fn list(&self, options: &ListOptions) -> Result<ObjectList<ConfigMap>> {
        self.0.list(options).await
    }
    async fn watch(&self, options: &WatchOptions) -> Result<WatchStream<ConfigMap>> {
        self.0.watch(options).await
    }
    fn is_watch_list_semantics_unsupported(&self) -> bool {
        true
    }
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_not_be_tried_over_a_lister_watcher_that_cannot_stream() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("a", 1)], 5, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (_r, running) = start(Reflector::new(Unable(lw.clone()), store.clone()));
    settle().await;
    assert_eq!(lw.list_calls().len(), 1);
    let watches = lw.watch_calls();
    assert_eq!(watches.len(), 1);
    assert!(!watches[0].1.send_initial_events);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_paged_list_should_be_transformed_page_by_page_as_each_page_arrives() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("a", 1)], 10, Some("p2")))
        .on_list(page(vec![cm("b", 2)], 10, None))
        .on_watch(watch_open(vec![]));
    // For each object transformed: how many pages had been asked for then.
    let seen: Arc<Mutex<Vec<(String, usize)>>> = Arc::default();
    let store = Arc::new(Recording {
        transform: Some(Arc::new({
            let (seen, lw) = (seen.clone(), lw.clone());
            move |obj: Arc<ConfigMap>| {
                let name = obj.metadata.name.clone().unwrap_or_default();
                seen.lock().push((name, lw.list_calls().len()));
                let mut obj = (*obj).clone();
                obj.metadata.labels = Some([("t".to_owned(), "1".to_owned())].into());
                Ok(Arc::new(obj))
            }
        })),
        ..Recording::default()
    });
    let (_r, running) = start(reflector(&lw, &store));
    settle().await;
    assert_eq!(
        *seen.lock(),
        [("a".to_owned(), 1), ("b".to_owned(), 2)],
        "each page is transformed before the next is asked for"
    );
    assert_eq!(store.ops(), vec!["replace 2 @10"]);
    assert!(
        store
            .items
            .lock()
            .values()
            .all(|o| o.metadata.labels.is_some())
    );
    running.stop().await;

    // A failing transform fails the list, as it would fail the replace.
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("a", 1)], 10, None));
    let store = Arc::new(Recording {
        transform: Some(Arc::new(|_| Err("bad object".into()))),
        ..Recording::default()
    });
    let r = reflector(&lw, &store);
    let error = r.list_and_watch(&CancellationToken::new()).await;
    assert!(
        matches!(
            error,
            Err(Error::Store {
                op: "transform",
                ..
            })
        ),
        "{error:?}"
    );
    assert!(store.ops().is_empty());
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_hold_its_objects_transformed_by_the_store_transform() {
    let lw = Arc::new(Scripted::default());
    let mut labelled = cm("a", 1);
    labelled.metadata.labels = Some([("big".to_owned(), "x".repeat(100))].into());
    lw.on_watch(watch_open(vec![
        Ok(WatchEvent::Added(labelled)),
        Ok(WatchEvent::Added(cm("b", 2))),
        Ok(initial_events_end(3)),
    ]));
    let seen = Arc::new(Mutex::new(0u32));
    let store = Arc::new(Recording {
        transform: Some(Arc::new({
            let seen = seen.clone();
            move |obj: Arc<ConfigMap>| {
                *seen.lock() += 1;
                let mut obj = (*obj).clone();
                obj.metadata.labels = None;
                Ok(Arc::new(obj))
            }
        })),
        ..Recording::default()
    });
    let (_r, running) = start(streaming(&lw, &store));
    settle().await;
    assert_eq!(*seen.lock(), 2, "each streamed object is transformed once");
    let items = store.items.lock().clone();
    assert_eq!(items.len(), 2);
    assert!(items.values().all(|o| o.metadata.labels.is_none()));
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_warn_every_ten_seconds_while_the_initial_events_end_is_late() {
    let lw = Arc::new(Scripted::default());
    // Nothing at all for 25 s: warnings at 10 and 20 s.
    lw.on_watch(Ok(WatchScript {
        events: vec![],
        then: Then::CloseAfter(Duration::from_secs(25)),
    }));
    let store = Arc::new(Recording::default());
    let (r, running) = start(streaming(&lw, &store));
    tokio::time::sleep(Duration::from_secs(21)).await;
    let warnings = || r.shared.initial_events_end_warnings.load(Ordering::Relaxed);
    assert_eq!(warnings(), 2);
    running.stop().await;

    let now = Instant::now();
    assert!(initial_events_end_warning("r", now, None, now).is_some());
    assert!(
        initial_events_end_warning(
            "r",
            now,
            Some(now + Duration::from_secs(5)),
            now + Duration::from_secs(10)
        )
        .is_none(),
        "an event 5 s ago: no warning"
    );
    assert!(
        initial_events_end_warning(
            "r",
            now,
            Some(now + Duration::from_secs(5)),
            now + Duration::from_secs(15)
        )
        .is_some()
    );
}

#[tokio::test(start_paused = true)]
async fn reflector_should_page_every_list_by_an_explicit_page_size_whatever_its_version() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("a", 1)], 5, None))
        .on_watch(watch_closing(vec![expired_event()]))
        .on_list(page(vec![cm("a", 1)], 8, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (_r, running) = start(reflector(&lw, &store).page_size(100));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let lists = lw.list_calls();
    assert_eq!(lists.len(), 2);
    assert_eq!(lists[1].1.resource_version.as_deref(), Some("5"));
    assert_eq!(lists[1].1.limit, Some(100));
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_keep_paging_relists_once_a_list_at_version_zero_came_in_pages() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("a", 1)], 5, Some("p2")))
        .on_list(page(vec![cm("b", 2)], 5, None))
        .on_watch(watch_closing(vec![expired_event()]))
        .on_list(page(vec![cm("a", 1)], 8, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (_r, running) = start(reflector(&lw, &store));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let lists = lw.list_calls();
    assert_eq!(lists.len(), 3);
    assert_eq!(lists[2].1.resource_version.as_deref(), Some("5"));
    assert_eq!(lists[2].1.limit, Some(500), "this server pages");
    running.stop().await;
}

fn too_large_forms() -> Vec<Error> {
    use kube::core::response::{StatusCause, StatusDetails};
    let with_causes = |reason: &str, code: u16, causes: Vec<StatusCause>, message: &str| {
        let mut s = Status::failure(message, reason).with_code(code);
        s.details = Some(StatusDetails {
            name: String::new(),
            group: String::new(),
            kind: String::new(),
            uid: String::new(),
            causes,
            retry_after_seconds: 1,
        });
        Error::from_status(s)
    };
    let cause = |reason: &str, message: &str| StatusCause {
        reason: reason.to_owned(),
        message: message.to_owned(),
        field: String::new(),
    };
    vec![
        // 1.18.6 and later (what a 1.36 server sends).
        with_causes(
            "Timeout",
            504,
            vec![cause(
                "ResourceVersionTooLarge",
                "Too large resource version",
            )],
            "Too large resource version: 100, current: 7",
        ),
        // 1.17.0–1.18.5: only the cause's message.
        with_causes(
            "Timeout",
            504,
            vec![cause("", "Too large resource version")],
            "timed out",
        ),
        // Before 1.17: only the status message.
        with_causes(
            "Timeout",
            504,
            vec![],
            "Too large resource version: 100, current: 7",
        ),
    ]
}

#[test]
fn too_large_resource_version_should_be_recognised_in_each_form_the_server_sends() {
    for (i, e) in too_large_forms().iter().enumerate() {
        assert!(e.is_too_large_resource_version(), "form {i}: {e}");
    }
    let not_a_timeout = Error::from_status(
        Status::failure("Too large resource version", "BadRequest").with_code(400),
    );
    assert!(!not_a_timeout.is_too_large_resource_version());
}

#[tokio::test(start_paused = true)]
async fn reflector_should_relist_from_the_latest_version_on_a_too_large_version_in_any_form() {
    for form in too_large_forms() {
        let lw = Arc::new(Scripted::default());
        lw.on_list(page(vec![cm("a", 1)], 5, None))
            .on_watch(watch_closing(vec![expired_event()]))
            .on_list(Err(form))
            .on_list(page(vec![cm("a", 1)], 9, None))
            .on_watch(watch_open(vec![]));
        let store = Arc::new(Recording::default());
        let (r, running) = start(reflector(&lw, &store));
        tokio::time::sleep(Duration::from_secs(2)).await;
        let lists = lw.list_calls();
        assert_eq!(lists.len(), 3);
        assert_eq!(lists[1].1.resource_version.as_deref(), Some("5"));
        assert_eq!(lists[2].1.resource_version, None, "relisted from \"\"");
        assert_eq!(r.last_sync_resource_version(), "9");
        running.stop().await;
    }
}

#[tokio::test(start_paused = true)]
async fn reflector_should_not_honour_a_watch_timeout_below_five_minutes() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![], 1, None));
    for i in 0..10 {
        lw.on_watch(watch_closing(vec![Ok(bookmark(2 + i))]));
    }
    let store = Arc::new(Recording::default());
    let r = reflector(&lw, &store).min_watch_timeout(Duration::from_secs(10));
    let (_r, running) = start(r);
    settle().await;
    let timeouts: Vec<u32> = lw
        .watch_calls()
        .iter()
        .filter_map(|(_, o)| o.timeout_seconds)
        .collect();
    assert!(timeouts.len() >= 10);
    assert!(
        timeouts.iter().all(|t| (300..600).contains(t)),
        "{timeouts:?}"
    );
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn synthetic_added_events_of_a_watch_from_an_empty_version_should_not_move_the_version() {
    let lw = Arc::new(Scripted::default());
    // A list without a version: the watch starts from "" and the server
    // replays the state as ADDED events in no version order.
    lw.on_list(Ok(ObjectList {
        items: vec![],
        resource_version: String::new(),
        continue_token: None,
        remaining_item_count: None,
    }))
    .on_watch(watch_open(vec![
        Ok(WatchEvent::Added(cm("a", 50))),
        Ok(WatchEvent::Added(cm("b", 40))),
    ]));
    let store = Arc::new(Recording::default());
    let (r, running) = start(reflector(&lw, &store));
    settle().await;
    assert_eq!(store.names(), vec!["a", "b"]);
    assert_eq!(r.last_sync_resource_version(), "");
    assert!(store.versions.lock().is_empty());
    running.stop().await;

    let lw = Arc::new(Scripted::default());
    lw.on_list(Ok(ObjectList {
        items: vec![],
        resource_version: String::new(),
        continue_token: None,
        remaining_item_count: None,
    }))
    .on_watch(watch_open(vec![
        Ok(WatchEvent::Added(cm("a", 50))),
        Ok(WatchEvent::Added(cm("b", 40))),
        Ok(WatchEvent::Modified(cm("a", 60))),
        Ok(WatchEvent::Added(cm("c", 61))),
    ]));
    let store = Arc::new(Recording::default());
    let (r, running) = start(reflector(&lw, &store));
    settle().await;
    assert_eq!(r.last_sync_resource_version(), "61");
    assert_eq!(*store.versions.lock(), vec!["60", "61"]);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn the_store_should_be_told_each_version_and_bookmark_the_watch_reaches() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![], 5, None)).on_watch(watch_open(vec![
        Ok(WatchEvent::Added(cm("a", 6))),
        Ok(bookmark(8)),
    ]));
    let store = Arc::new(Recording::default());
    let (_r, running) = start(reflector(&lw, &store));
    settle().await;
    assert_eq!(*store.versions.lock(), vec!["6", "8"]);
    assert_eq!(*store.bookmarks.lock(), vec!["8"], "and each bookmark");
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn a_failed_resync_should_end_the_cycle_and_relist_after_the_backoff() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("a", 1)], 5, None))
        .on_watch(watch_open(vec![]))
        .on_list(page(vec![cm("a", 1)], 6, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording {
        fail_resync: true,
        ..Recording::default()
    });
    let (r, log) = handler_log(reflector(&lw, &store).resync_period(Duration::from_secs(10)));
    let (_r, running) = start(r);
    tokio::time::sleep(Duration::from_millis(10_500)).await;
    assert_eq!(lw.list_calls().len(), 1, "the backoff comes first");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let lists = lw.list_calls();
    assert_eq!(lists.len(), 2);
    assert!(lists[1].0 - lists[0].0 >= Duration::from_millis(10_800));
    assert!(log.lock().is_empty(), "{:?}", log.lock());
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn internal_errors_should_rewatch_without_relisting_only_within_max_internal_error_retry_duration()
 {
    let internal = || {
        Ok(WatchEvent::Error(Box::new(
            Status::failure("etcd hiccup", "InternalError").with_code(500),
        )))
    };
    // Default (zero): the watch ends the cycle, which relists.
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![], 5, None))
        .on_watch(watch_closing(vec![Ok(bookmark(6)), internal()]))
        .on_list(page(vec![], 7, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (_r, running) = start(reflector(&lw, &store));
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(lw.list_calls().len(), 2);
    running.stop().await;

    // Within the duration: re-watched at once from the last version.
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![], 5, None))
        .on_watch(watch_closing(vec![Ok(bookmark(6)), internal()]))
        .on_watch(watch_closing(vec![Ok(bookmark(7)), internal()]))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let r = reflector(&lw, &store).max_internal_error_retry_duration(Duration::from_secs(30));
    let (_r, running) = start(r);
    settle().await;
    assert_eq!(lw.list_calls().len(), 1);
    let watches = lw.watch_calls();
    assert_eq!(watches.len(), 3);
    assert_eq!(watches[2].1.resource_version, "7");
    assert_eq!(watches[2].0, watches[0].0, "no backoff");
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn list_and_watch_should_run_one_cycle_and_return_its_error() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(Err(status(500, "InternalError")))
        .on_list(page(vec![cm("a", 1)], 5, None))
        .on_watch(Err(status(403, "Forbidden")))
        .on_list(page(vec![cm("a", 1)], 6, None))
        .on_watch(watch_closing(vec![expired_event()]));
    let store = Arc::new(Recording::default());
    let r = reflector(&lw, &store);
    let cancel = CancellationToken::new();
    let first = r.list_and_watch(&cancel).await;
    assert!(first.is_err_and(|e| e.status().is_some_and(|s| s.code == 500)));
    let second = r.list_and_watch(&cancel).await;
    assert!(second.is_err_and(|e| e.status().is_some_and(|s| s.code == 403)));
    assert!(
        r.list_and_watch(&cancel).await.is_ok(),
        "a watch that ended"
    );
    assert_eq!(lw.list_calls().len(), 3);
    cancel.cancel();
    assert!(r.list_and_watch(&cancel).await.is_ok());
}

#[tokio::test(start_paused = true)]
async fn only_the_errors_that_end_a_cycle_should_reach_the_watch_error_handler() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![], 5, None))
        // A store error, then a very short watch: neither is handed over.
        .on_watch(watch_closing(vec![Ok(WatchEvent::Added(cm("a", 6)))]))
        .on_watch(watch_closing(vec![]))
        .on_list(Err(status(500, "InternalError")))
        .on_list(page(vec![], 7, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording {
        fail_add: true,
        ..Recording::default()
    });
    let (r, log) = handler_log(reflector(&lw, &store));
    let (_r, running) = start(r);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(lw.list_calls().len(), 3, "the very short watch relisted");
    assert_eq!(*log.lock(), vec!["api"], "only the failed list");
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn retry_after_should_be_capped_at_the_maximum_backoff() {
    let lw = Arc::new(Scripted::default());
    let mut throttled = status(429, "TooManyRequests");
    if let Error::Api { retry_after, .. } = &mut throttled {
        *retry_after = Some(Duration::from_secs(3600));
    }
    lw.on_list(Err(throttled))
        .on_list(page(vec![], 3, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (_r, running) = start(reflector(&lw, &store));
    tokio::time::sleep(Duration::from_secs(60)).await;
    let at: Vec<Instant> = lw.list_calls().iter().map(|(at, _)| *at).collect();
    assert_eq!(at.len(), 2);
    assert_eq!(at[1] - at[0], Duration::from_secs(30));
    running.stop().await;
}

// client-go 1.36's watch-list scenarios (`reflector_watchlist_test.go`'s
// `TestWatchList`, and the retry rules of `watchList`), each as one
// `list_and_watch` cycle over a scripted lister-watcher. Every request the
// reflector sends is checked, with when it was sent (the backoff has no
// jitter here, so its waits are exact: 800 ms, then 1.6 s...).

/// A request as sent, its watch timeout left out (checked apart: it is random).
#[derive(Debug, PartialEq)]
enum Sent {
    List(ListOptions),
    Watch(WatchOptions),
}

/// A streaming list from `rv`.
fn watch_list_at(rv: &str) -> Sent {
    Sent::Watch(WatchOptions {
        resource_version: rv.to_owned(),
        resource_version_match: Some(VersionMatch::NotOlderThan),
        allow_watch_bookmarks: true,
        send_initial_events: true,
        ..WatchOptions::default()
    })
}

/// A watch from `rv`.
fn watch_at(rv: &str) -> Sent {
    Sent::Watch(WatchOptions {
        resource_version: rv.to_owned(),
        allow_watch_bookmarks: true,
        ..WatchOptions::default()
    })
}

/// A list at `rv` in pages of `limit`.
fn list_at(rv: &str, limit: Option<u32>) -> Sent {
    Sent::List(ListOptions {
        resource_version: Some(rv.to_owned()),
        limit,
        ..ListOptions::default()
    })
}

/// Every request sent so far, with its time since `t0`.
fn sent(lw: &Scripted, t0: Instant) -> Vec<(Duration, Sent)> {
    lw.calls
        .lock()
        .iter()
        .map(|(at, call)| {
            let sent = match call {
                Call::List(o) => Sent::List(o.clone()),
                Call::Watch(o) => {
                    assert!(
                        o.timeout_seconds.is_some_and(|s| (300..600).contains(&s)),
                        "{o:?}"
                    );
                    Sent::Watch(WatchOptions {
                        timeout_seconds: None,
                        ..o.clone()
                    })
                }
            };
            (*at - t0, sent)
        })
        .collect()
}

fn added(name: &str, rv: u64) -> Result<WatchEvent<ConfigMap>> {
    Ok(WatchEvent::Added(cm(name, rv)))
}

/// One cycle of a reflector with client-go's defaults (streaming lists on)
/// and a backoff without jitter, run for `run_for` of paused time: the
/// requests it sent, and its result if it ended by itself.
async fn one_cycle(
    lw: &Arc<Scripted>,
    store: &Arc<Recording>,
    configure: impl FnOnce(&Reflector<ConfigMap>),
    run_for: Duration,
) -> (Vec<(Duration, Sent)>, Option<Result<()>>) {
    let r = Arc::new(streaming(lw, store).backoff(
        BackoffConfig::new(Duration::from_millis(800), Duration::from_secs(30)).jitter(0.0),
    ));
    configure(&r);
    let cancel = CancellationToken::new();
    let t0 = Instant::now();
    let task = tokio::spawn({
        let (r, cancel) = (r.clone(), cancel.clone());
        async move { r.list_and_watch(&cancel).await }
    });
    tokio::time::sleep(run_for).await;
    settle().await;
    let ended = task.is_finished();
    cancel.cancel();
    let result = task.await.expect("the cycle does not panic");
    (sent(lw, t0), ended.then_some(result))
}

const NOW: Duration = Duration::ZERO;

#[tokio::test(start_paused = true)]
async fn watch_list_should_not_sync_before_the_initial_events_end_bookmark() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(watch_open(vec![added("p1", 1)]));
    let store = Arc::new(Recording::default());
    // Just short of the minute after which the reflector gives up on the bookmark.
    let (requests, ended) = one_cycle(&lw, &store, |_| {}, Duration::from_secs(59)).await;
    assert_eq!(requests, vec![(NOW, watch_list_at(""))]);
    assert!(ended.is_none(), "still streaming");
    assert!(store.ops().is_empty());
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_not_sync_on_a_bookmark_whose_initial_events_end_is_not_true() {
    let lw = Arc::new(Scripted::default());
    let not_the_end = WatchEvent::Bookmark(Bookmark {
        resource_version: "2".into(),
        annotations: [(
            crate::INITIAL_EVENTS_END_ANNOTATION.to_owned(),
            "false".to_owned(),
        )]
        .into(),
    });
    lw.on_watch(watch_open(vec![
        added("p1", 1),
        added("p2", 2),
        Ok(not_the_end),
    ]));
    let store = Arc::new(Recording::default());
    let (requests, ended) = one_cycle(&lw, &store, |_| {}, Duration::from_secs(59)).await;
    assert_eq!(requests, vec![(NOW, watch_list_at(""))]);
    assert!(ended.is_none());
    assert!(store.ops().is_empty());
}

#[tokio::test(start_paused = true)]
async fn watch_list_off_should_list_at_version_zero_by_pages_of_500_then_watch() {
    let lw = Arc::new(Scripted::default());
    lw.on_list(page(vec![cm("p1", 1)], 1, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let r = reflector(&lw, &store);
    let t0 = Instant::now();
    let (_r, running) = start(r);
    settle().await;
    assert_eq!(
        sent(&lw, t0),
        vec![(NOW, list_at("0", Some(500))), (NOW, watch_at("1"))]
    );
    assert_eq!(store.names(), vec!["p1"]);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_fall_back_to_list_and_watch_on_invalid_and_on_any_other_error() {
    let refusals: Vec<Error> = vec![
        status(422, "Invalid"),
        status(500, "InternalError"),
        status(403, "Forbidden"),
        Error::Decode {
            kind: "ConfigMap".into(),
            name: "ns/bad".into(),
            source: serde_json::from_str::<u8>("x").expect_err("not json"),
        },
    ];
    for refusal in refusals {
        let what = format!("{refusal}");
        let lw = Arc::new(Scripted::default());
        lw.on_watch(Err(refusal))
            .on_list(page(vec![cm("p1", 1)], 1, None))
            .on_watch(watch_open(vec![added("p2", 2)]));
        let store = Arc::new(Recording::default());
        let (requests, ended) = one_cycle(&lw, &store, |_| {}, Duration::from_secs(60)).await;
        assert_eq!(
            requests,
            vec![
                (NOW, watch_list_at("")),
                (NOW, list_at("0", Some(500))),
                (NOW, watch_at("1")),
            ],
            "{what}"
        );
        assert!(ended.is_none(), "{what}");
        assert_eq!(store.names(), vec!["p1", "p2"], "{what}");
    }
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_sync_at_the_initial_events_end_bookmark_and_keep_its_stream() {
    let lw = Arc::new(Scripted::default());
    let mut p1 = cm("p1", 3);
    p1.data = Some([("k".to_owned(), "v".to_owned())].into());
    lw.on_watch(watch_open(vec![
        added("p1", 1),
        added("p2", 2),
        Ok(WatchEvent::Modified(p1)),
        added("p3", 4),
        Ok(WatchEvent::Deleted(cm("p3", 5))),
        Ok(initial_events_end(5)),
        added("p4", 6),
    ]));
    let store = Arc::new(Recording::default());
    let (requests, ended) = one_cycle(&lw, &store, |_| {}, Duration::from_secs(60)).await;
    assert_eq!(requests, vec![(NOW, watch_list_at(""))]);
    assert!(ended.is_none());
    // Updates and deletions during the stream shape the state it hands over.
    assert_eq!(store.ops(), vec!["replace 2 @5", "add p4"]);
    assert_eq!(store.names(), vec!["p1", "p2", "p4"]);
    assert!(store.items.lock()["p1"].data.is_some());
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_retry_a_429_after_the_backoff_without_falling_back() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(Err(status(429, "TooManyRequests")))
        .on_watch(Err(status(429, "TooManyRequests")))
        .on_watch(watch_open(vec![added("p1", 1), Ok(initial_events_end(2))]));
    let store = Arc::new(Recording::default());
    let (requests, ended) = one_cycle(&lw, &store, |_| {}, Duration::from_secs(60)).await;
    assert_eq!(
        requests,
        vec![
            (NOW, watch_list_at("")),
            (Duration::from_millis(800), watch_list_at("")),
            (Duration::from_millis(2400), watch_list_at("")),
        ]
    );
    assert!(ended.is_none());
    assert_eq!(store.ops(), vec!["replace 1 @2"]);
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_retry_a_429_inside_its_stream_after_the_backoff() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(watch_closing(vec![
        added("p1", 1),
        Ok(WatchEvent::Error(Box::new(
            Status::failure("busy", "TooManyRequests").with_code(429),
        ))),
    ]))
    .on_watch(watch_open(vec![added("p2", 2), Ok(initial_events_end(2))]));
    let store = Arc::new(Recording::default());
    let (requests, _) = one_cycle(&lw, &store, |_| {}, Duration::from_secs(60)).await;
    assert_eq!(
        requests,
        vec![
            (NOW, watch_list_at("")),
            (Duration::from_millis(800), watch_list_at("")),
        ]
    );
    assert_eq!(store.names(), vec!["p2"]);
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_retry_a_refused_connection_after_the_backoff_without_falling_back() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(Err(Error::Request(kube::Error::Service(Box::new(
        std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused"),
    )))))
    .on_watch(watch_open(vec![added("p1", 1), Ok(initial_events_end(2))]));
    let store = Arc::new(Recording::default());
    let (requests, _) = one_cycle(&lw, &store, |_| {}, Duration::from_secs(60)).await;
    assert_eq!(
        requests,
        vec![
            (NOW, watch_list_at("")),
            (Duration::from_millis(800), watch_list_at("")),
        ]
    );
    assert_eq!(store.ops(), vec!["replace 1 @2"]);
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_be_reopened_at_once_when_its_stream_closes_after_events_before_the_end()
{
    let lw = Arc::new(Scripted::default());
    lw.on_watch(watch_closing(vec![added("p1", 1)]))
        .on_watch(watch_open(vec![added("p1", 1), Ok(initial_events_end(1))]));
    let store = Arc::new(Recording::default());
    let (requests, ended) = one_cycle(&lw, &store, |_| {}, Duration::from_secs(60)).await;
    // client-go's watchList loops again with no wait, from the same version.
    assert_eq!(
        requests,
        vec![(NOW, watch_list_at("")), (NOW, watch_list_at(""))]
    );
    assert!(ended.is_none());
    assert_eq!(store.ops(), vec!["replace 1 @1"]);
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_be_reopened_at_once_when_its_stream_closes_empty_after_a_second() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(Ok(WatchScript {
        events: vec![],
        then: Then::CloseAfter(Duration::from_secs(2)),
    }))
    .on_watch(watch_open(vec![added("p1", 1), Ok(initial_events_end(1))]));
    let store = Arc::new(Recording::default());
    let (requests, _) = one_cycle(&lw, &store, |_| {}, Duration::from_secs(60)).await;
    // Not a very short watch: no fallback and no backoff.
    assert_eq!(
        requests,
        vec![
            (NOW, watch_list_at("")),
            (Duration::from_secs(2), watch_list_at("")),
        ]
    );
    assert_eq!(store.ops(), vec!["replace 1 @1"]);
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_fall_back_at_once_when_its_stream_closes_at_once_without_an_event() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(watch_closing(vec![]))
        .on_list(page(vec![cm("p1", 1)], 1, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (requests, _) = one_cycle(&lw, &store, |_| {}, Duration::from_secs(60)).await;
    assert_eq!(
        requests,
        vec![
            (NOW, watch_list_at("")),
            (NOW, list_at("0", Some(500))),
            (NOW, watch_at("1")),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_restart_at_once_from_the_latest_state_when_its_version_is_unavailable() {
    let mut refusals = too_large_forms();
    refusals.push(status(410, "Expired"));
    refusals.push(status(410, "Gone"));
    for refusal in refusals {
        let what = format!("{refusal}");
        let lw = Arc::new(Scripted::default());
        lw.on_watch(Err(refusal))
            .on_watch(watch_open(vec![added("p1", 9), Ok(initial_events_end(9))]));
        let store = Arc::new(Recording::default());
        let (requests, _) = one_cycle(
            &lw,
            &store,
            |r| r.set_last_sync_resource_version("5"),
            Duration::from_secs(60),
        )
        .await;
        assert_eq!(
            requests,
            vec![(NOW, watch_list_at("5")), (NOW, watch_list_at(""))],
            "{what}"
        );
        assert_eq!(store.ops(), vec!["replace 1 @9"], "{what}");
    }
}

#[tokio::test(start_paused = true)]
async fn watch_list_should_restart_at_once_from_the_latest_state_on_an_expired_event() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(watch_closing(vec![added("p1", 6), expired_event()]))
        .on_watch(watch_open(vec![added("p1", 9), Ok(initial_events_end(9))]));
    let store = Arc::new(Recording::default());
    let (requests, _) = one_cycle(
        &lw,
        &store,
        |r| r.set_last_sync_resource_version("5"),
        Duration::from_secs(60),
    )
    .await;
    assert_eq!(
        requests,
        vec![(NOW, watch_list_at("5")), (NOW, watch_list_at(""))]
    );
    assert_eq!(store.ops(), vec!["replace 1 @9"]);
}

#[tokio::test(start_paused = true)]
async fn a_watch_ended_after_a_watch_list_should_be_reopened_from_the_last_event_version() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(watch_closing(vec![
        added("p1", 1),
        added("p2", 2),
        Ok(initial_events_end(2)),
        added("p3", 3),
    ]))
    .on_watch(watch_open(vec![added("p4", 4)]));
    let store = Arc::new(Recording::default());
    let (requests, ended) = one_cycle(&lw, &store, |_| {}, Duration::from_secs(60)).await;
    assert_eq!(
        requests,
        vec![(NOW, watch_list_at("")), (NOW, watch_at("3"))]
    );
    assert!(ended.is_none());
    assert_eq!(store.names(), vec!["p1", "p2", "p3", "p4"]);
}

#[tokio::test(start_paused = true)]
async fn a_watch_refused_as_expired_after_a_watch_list_should_end_the_cycle_with_its_error() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(watch_closing(vec![
        added("p1", 1),
        Ok(initial_events_end(2)),
        added("p3", 3),
    ]))
    .on_watch(Err(status(410, "Expired")));
    let store = Arc::new(Recording::default());
    let (requests, ended) = one_cycle(&lw, &store, |_| {}, Duration::from_secs(60)).await;
    assert_eq!(
        requests,
        vec![(NOW, watch_list_at("")), (NOW, watch_at("3"))]
    );
    let error = ended.expect("the cycle ended").expect_err("with the error");
    assert!(error.is_expired(), "{error}");
    assert_eq!(store.names(), vec!["p1", "p3"]);
}

// The bounded wait for the initial-events-end bookmark (kubernetes#140890): a server that
// never ends a streaming list makes the reflector list instead, and keep listing.

#[tokio::test(start_paused = true)]
async fn watch_list_should_give_up_on_the_initial_events_end_after_a_minute_and_list() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(watch_open(vec![added("p1", 1)]))
        .on_list(page(vec![cm("p1", 1)], 1, None))
        .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (requests, ended) = one_cycle(&lw, &store, |_| {}, Duration::from_secs(120)).await;
    assert_eq!(
        requests,
        vec![
            (NOW, watch_list_at("")),
            (Duration::from_secs(60), list_at("0", Some(500))),
            (Duration::from_secs(60), watch_at("1")),
        ]
    );
    assert!(ended.is_none(), "watching after the list");
    assert_eq!(store.ops(), vec!["replace 1 @1"]);
}

#[tokio::test(start_paused = true)]
async fn the_initial_events_end_wait_should_span_reopened_streams_but_not_backoffs() {
    let lw = Arc::new(Scripted::default());
    // A stream that closes after 20 s without the bookmark, a 429 (backoff 800 ms, not
    // counted), then a stream that never ends its initial events.
    lw.on_watch(Ok(WatchScript {
        events: vec![added("p1", 1)],
        then: Then::CloseAfter(Duration::from_secs(20)),
    }))
    .on_watch(Err(status(429, "TooManyRequests")))
    .on_watch(watch_open(vec![added("p1", 1)]))
    .on_list(page(vec![cm("p1", 1)], 1, None))
    .on_watch(watch_open(vec![]));
    let store = Arc::new(Recording::default());
    let (requests, _) = one_cycle(&lw, &store, |_| {}, Duration::from_secs(120)).await;
    let after = |ms: u64| Duration::from_millis(ms);
    assert_eq!(
        requests,
        vec![
            (NOW, watch_list_at("")),
            (after(20_000), watch_list_at("")),
            (after(20_800), watch_list_at("")),
            (after(60_800), list_at("0", Some(500))),
            (after(60_800), watch_at("1")),
        ]
    );
    assert_eq!(store.ops(), vec!["replace 1 @1"]);
}

#[tokio::test(start_paused = true)]
async fn a_zero_initial_events_end_timeout_should_wait_for_ever_as_client_go_did() {
    let lw = Arc::new(Scripted::default());
    lw.on_watch(watch_open(vec![added("p1", 1)]));
    let store = Arc::new(Recording::default());
    let r = streaming(&lw, &store).initial_events_end_timeout(Duration::ZERO);
    let cancel = CancellationToken::new();
    let t0 = Instant::now();
    let cycle = tokio::time::timeout(Duration::from_secs(3600), r.list_and_watch(&cancel)).await;
    assert!(
        cycle.is_err(),
        "still waiting for the bookmark after an hour"
    );
    assert_eq!(sent(&lw, t0), vec![(NOW, watch_list_at(""))]);
    assert!(store.ops().is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_reflector_that_gave_up_on_watch_list_should_list_in_later_cycles_until_the_reprobe() {
    let lw = Arc::new(Scripted::default());
    let store = Arc::new(Recording::default());
    let r = streaming(&lw, &store)
        .initial_events_end_timeout(Duration::from_secs(10))
        .watch_list_reprobe_interval(Duration::from_secs(600));
    let cancel = CancellationToken::new();
    let t0 = Instant::now();
    // Cycle 1: the bookmark never comes; list, then a watch that expires.
    lw.on_watch(watch_open(vec![added("p1", 1)]))
        .on_list(page(vec![cm("p1", 1)], 1, None))
        .on_watch(watch_closing(vec![expired_event()]));
    assert!(!r.watch_list_given_up());
    assert!(r.list_and_watch(&cancel).await.is_ok());
    assert!(r.watch_list_given_up());
    // Cycle 2, a minute later: straight to a list.
    tokio::time::sleep(Duration::from_secs(60)).await;
    lw.on_list(page(vec![cm("p1", 1)], 2, None))
        .on_watch(watch_closing(vec![expired_event()]));
    assert!(r.list_and_watch(&cancel).await.is_ok());
    // Cycle 3, once the interval has passed: a streaming list again, which now completes.
    tokio::time::sleep(Duration::from_secs(600)).await;
    lw.on_watch(watch_closing(vec![
        added("p1", 3),
        Ok(initial_events_end(3)),
        expired_event(),
    ]));
    assert!(r.list_and_watch(&cancel).await.is_ok());
    assert!(!r.watch_list_given_up());
    let s = Duration::from_secs;
    assert_eq!(
        sent(&lw, t0),
        vec![
            (NOW, watch_list_at("")),
            (s(10), list_at("0", Some(500))),
            (s(10), watch_at("1")),
            (s(70), list_at("1", None)),
            (s(70), watch_at("2")),
            (s(670), watch_list_at("2")),
        ]
    );
}
