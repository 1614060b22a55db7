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

use super::*;
use crate::listwatch::{Bookmark, ObjectList};
use crate::store::BoxError;

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
        Ok(())
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

fn reflector(lw: &Arc<Scripted>, store: &Arc<Recording>) -> Reflector<ConfigMap> {
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
async fn reflector_should_relist_from_the_last_version_after_an_expired_watch_event() {
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
    let (r, running) = start(reflector(&lw, &store));
    settle().await;
    let lists = lw.list_calls();
    assert_eq!(lists.len(), 2);
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
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_redo_the_list_at_the_latest_version_when_a_continue_token_expires() {
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
    assert_eq!(
        lists[2].1.resource_version, None,
        "redone at the latest version"
    );
    assert_eq!(lists[2].1.continue_token, None);
    assert_eq!(lists[2].1.limit, Some(500));
    assert_eq!(
        store.ops(),
        vec!["replace 2 @12"],
        "one replace, only with the complete list"
    );
    assert_eq!(r.last_sync_resource_version(), "12");
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
            gap >= base && gap < base * 2,
            "gap {gap:?} not in [{base:?}, {:?})",
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
    assert!(
        gap >= Duration::from_millis(800) && gap < Duration::from_millis(1600),
        "{gap:?}"
    );
    assert_eq!(store.names(), vec!["a", "b"]);
    running.stop().await;
}

#[tokio::test(start_paused = true)]
async fn reflector_should_report_undecodable_events_and_relist_keeping_its_state() {
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
    assert_eq!(reported.lock().len(), 1);
    assert!(
        reported.lock()[0].contains("ns/bad"),
        "{:?}",
        reported.lock()
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(lw.list_calls().len(), 2);
    assert_eq!(lw.list_calls()[1].1.resource_version.as_deref(), Some("6"));
    assert_eq!(store.names(), vec!["a", "b", "c"]);
    assert_eq!(r.last_sync_resource_version(), "7");
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
async fn reflector_should_stream_the_initial_state_when_watch_list_is_enabled() {
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
    let (r, running) = start(reflector(&lw, &store).use_watch_list(true));
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
    let (_r, running) = start(reflector(&lw, &store).use_watch_list(true));
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
