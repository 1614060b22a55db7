//! The streaming list (WatchList) hardened as in client-go v1.37 and beyond, over real HTTP
//! against kcr-testenv's faults: a server that never ends a streaming list
//! (kubernetes#140890), gzip-compressed lists and streaming lists, and a watch cache that
//! answers `429` with `Retry-After` while it initializes. Each needs kcr-testenv's fault
//! injection (or its address, for a byte-counting proxy), so each skips on a real cluster.

mod support;

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kcr_reflector::{ApiListerWatcher, BackoffConfig, Reflector, WireFormat};
use kcr_testenv::{TestCluster, TestEnv};
use kube::api::{Api, ObjectMeta, PostParams};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use support::{Checked, CountingProxy, OWN, Recorded, create_config_maps, eventually};

struct Running<K> {
    reflector: Arc<Reflector<K>>,
    cancel: CancellationToken,
    task: JoinHandle<()>,
}

impl<K> Running<K> {
    async fn stop(self) {
        self.cancel.cancel();
        let _ = self.task.await;
    }
}

fn run<K>(reflector: Reflector<K>) -> Running<K>
where
    K: kube::Resource + Send + Sync + 'static,
{
    let reflector = Arc::new(reflector);
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let reflector = reflector.clone();
        let cancel = cancel.clone();
        async move { reflector.run(cancel).await }
    });
    Running {
        reflector,
        cancel,
        task,
    }
}

async fn start_env() -> TestEnv {
    TestEnv::start()
        .await
        .unwrap_or_else(|e| panic!("testenv: {e}"))
}

fn skip(test: &str, needs: &str) -> bool {
    TestCluster::skip_on_real_cluster(test, needs)
}

fn streaming<O>(calls: &[(Instant, O)], is_streaming: impl Fn(&O) -> bool) -> Vec<Instant> {
    calls
        .iter()
        .filter(|(_, o)| is_streaming(o))
        .map(|(at, _)| *at)
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_server_that_never_ends_streaming_lists_should_be_listed_after_a_minute_and_from_then_on()
{
    if skip(
        "a_server_that_never_ends_streaming_lists_should_be_listed_after_a_minute_and_from_then_on",
        "fault injection (an omitted initial-events-end bookmark) and a paused clock",
    ) {
        return;
    }
    let env = start_env().await;
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    create_config_maps(&api, "cm", 3).await;
    env.faults().omit_initial_events_end("configmaps");
    let lw = Recorded::new(api.clone());
    let store = Checked::<ConfigMap>::new();
    let backoff = BackoffConfig::new(Duration::from_millis(100), Duration::from_secs(1));
    let r = run(Reflector::new(lw.clone(), store.clone()).backoff(backoff));
    eventually("the sync by the fallback list", 300, || {
        store.cache.len() == 3
    })
    .await;
    let watches = lw.watch_calls();
    let lists = lw.list_calls();
    assert!(watches[0].1.send_initial_events);
    assert_eq!(lists.len(), 1);
    let waited = lists[0].0 - watches[0].0;
    assert!(
        waited >= Duration::from_secs(60) && waited < Duration::from_secs(61),
        "the list came {waited:?} after the streaming list"
    );
    assert!(r.reflector.watch_list_given_up());

    // A relist (the history compacted, the watch closed: its version is gone) lists at once.
    env.faults().compact_history();
    env.faults().close_all_watches();
    eventually("the relist", 60, || lw.list_calls().len() == 2).await;
    create_config_maps(&api, "more", 1).await;
    eventually("watch events after the relist", 60, || {
        store.cache.len() == 4
    })
    .await;
    let streamed = streaming(&lw.watch_calls(), |o| o.send_initial_events);
    assert_eq!(streamed.len(), 1, "no streaming list after giving up");
    assert_eq!(*store.replaces.lock(), 2);
    store.assert_no_violations();
    r.stop().await;
}

#[tokio::test(start_paused = true)]
async fn streaming_lists_that_keep_closing_before_their_end_should_give_up_within_the_bound() {
    if skip(
        "streaming_lists_that_keep_closing_before_their_end_should_give_up_within_the_bound",
        "fault injection (closed watches, latency) and a paused clock",
    ) {
        return;
    }
    let env = start_env().await;
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    create_config_maps(&api, "cm", 4).await;
    // Each streaming list sends two of the four objects, then the server closes it; every
    // request takes 10 s.
    env.faults().omit_initial_events_end("configmaps");
    env.faults().close_watches_after_events(Some(2));
    env.faults().set_latency(Duration::from_secs(10));
    let lw = Recorded::new(api.clone());
    let store = Checked::<ConfigMap>::new();
    let r = run(Reflector::new(lw.clone(), store.clone()));
    eventually("the sync by the fallback list", 600, || {
        store.cache.len() == 4
    })
    .await;
    let streamed = streaming(&lw.watch_calls(), |o| o.send_initial_events);
    let lists = lw.list_calls();
    // Opened at 10 s, 20 s, ... 70 s: the minute from the first opening has passed.
    assert_eq!(streamed.len(), 7, "{streamed:?}");
    assert_eq!(lists[0].0 - streamed[0], Duration::from_secs(70));
    assert!(r.reflector.watch_list_given_up());
    r.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_initializing_watch_cache_should_be_waited_out_on_retry_after_without_a_list() {
    if skip(
        "an_initializing_watch_cache_should_be_waited_out_on_retry_after_without_a_list",
        "fault injection (an initializing watch cache) and a paused clock",
    ) {
        return;
    }
    let env = start_env().await;
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    create_config_maps(&api, "cm", 2).await;
    env.faults()
        .initialize_watch_cache("configmaps", Duration::from_secs(5));
    let lw = Recorded::new(Api::<ConfigMap>::namespaced(
        support::client_without_retries(&env),
        "default",
    ));
    let store = Checked::<ConfigMap>::new();
    let r = run(Reflector::new(lw.clone(), store.clone()));
    eventually("the streamed sync", 60, || store.cache.len() == 2).await;
    let watches = streaming(&lw.watch_calls(), |o| o.send_initial_events);
    // Refused at 0 s ... 4 s, each retried after exactly its Retry-After; served at 5 s.
    assert_eq!(watches.len(), 6, "{watches:?}");
    for pair in watches.windows(2) {
        assert_eq!(pair[1] - pair[0], Duration::from_secs(1));
    }
    assert!(lw.list_calls().is_empty(), "a 429 is no reason to list");
    let errors = lw.errors.lock().clone();
    assert_eq!(errors.len(), 5);
    assert!(
        errors
            .iter()
            .all(|(_, reason)| reason == "too_many_requests")
    );
    assert!(!r.reflector.watch_list_given_up());
    r.stop().await;
}

#[tokio::test(start_paused = true)]
async fn an_initializing_watch_cache_should_be_waited_out_on_list_with_retry_after_capped() {
    if skip(
        "an_initializing_watch_cache_should_be_waited_out_on_list_with_retry_after_capped",
        "fault injection (an initializing watch cache) and a paused clock",
    ) {
        return;
    }
    let env = start_env().await;
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    create_config_maps(&api, "cm", 2).await;
    env.faults()
        .initialize_watch_cache("configmaps", Duration::from_secs(2));
    let lw = Recorded::new(Api::<ConfigMap>::namespaced(
        support::client_without_retries(&env),
        "default",
    ));
    let store = Checked::<ConfigMap>::new();
    // The server asks for 1 s; the backoff's maximum (400 ms) caps it. A list with a label
    // selector is one the initializing cache refuses.
    let backoff = BackoffConfig::new(Duration::from_millis(100), Duration::from_millis(400));
    let r = run(Reflector::new(lw.clone(), store.clone())
        .use_watch_list(false)
        .label_selector(OWN)
        .backoff(backoff));
    eventually("the listed sync", 60, || store.cache.len() == 2).await;
    let lists: Vec<Instant> = lw.list_calls().iter().map(|(at, _)| *at).collect();
    // Refused at 0, 0.4 ... 1.6 s; served at 2 s.
    assert_eq!(lists.len(), 6, "{lists:?}");
    for pair in lists.windows(2) {
        assert_eq!(pair[1] - pair[0], Duration::from_millis(400));
    }
    r.stop().await;
}

/// ConfigMaps of about 1 KiB of data each.
async fn create_big_config_maps(api: &Api<ConfigMap>, n: usize) {
    for i in 0..n {
        let cm = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("big-{i:04}")),
                labels: Some(support::own_labels()),
                ..ObjectMeta::default()
            },
            data: Some(
                [(
                    "config.yaml".to_owned(),
                    format!("server:\n  port: {}\n  name: item-{i}\n", 8000 + i)
                        + &"# padding line\n".repeat(64),
                )]
                .into(),
            ),
            ..ConfigMap::default()
        };
        api.create(&PostParams::default(), &cm)
            .await
            .unwrap_or_else(|e| panic!("create: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_and_streaming_lists_should_come_gzip_compressed_and_decode_the_same() {
    if skip(
        "lists_and_streaming_lists_should_come_gzip_compressed_and_decode_the_same",
        "a byte-counting proxy in front of kcr-testenv",
    ) {
        return;
    }
    let env = start_env().await;
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    create_big_config_maps(&api, 300).await;
    let mut reference: Option<Vec<(String, String)>> = None;
    for format in [WireFormat::Protobuf, WireFormat::Json] {
        for watch_list in [true, false] {
            let mut bytes = Vec::new();
            for gzip in [true, false] {
                let proxy = CountingProxy::start(env.addr()).await;
                let lw = ApiListerWatcher::new(Api::<ConfigMap>::namespaced(
                    proxy.client(&env),
                    "default",
                ))
                .wire_format(format)
                .gzip(gzip);
                let store = Checked::<ConfigMap>::new();
                let r = run(Reflector::new(lw, store.clone()).use_watch_list(watch_list));
                eventually("the sync", 30, || store.cache.len() == 300).await;
                r.stop().await;
                bytes.push(proxy.bytes());
                let mut contents: Vec<(String, String)> = store
                    .cache
                    .list()
                    .iter()
                    .map(|cm| {
                        let data = cm.data.as_ref().and_then(|d| d.get("config.yaml"));
                        (
                            cm.metadata.name.clone().unwrap_or_default(),
                            data.cloned().unwrap_or_default(),
                        )
                    })
                    .collect();
                contents.sort();
                match &reference {
                    None => reference = Some(contents),
                    Some(r) => assert_eq!(&contents, r, "{format:?} gzip {gzip}"),
                }
            }
            let (compressed, plain) = (bytes[0], bytes[1]);
            println!(
                "{format:?}, streaming list {watch_list}: {compressed} bytes with gzip, \
                 {plain} without"
            );
            assert!(
                compressed * 4 < plain,
                "{format:?} streaming list {watch_list}: {compressed} with gzip, {plain} without"
            );
        }
    }
}
