//! Watches through `kube::Client`: replay from a version, synthetic initial events, bookmarks,
//! `410 Gone`, watch-list, selectors, timeouts, and many watchers at once.

use crate::common;

use std::time::Duration;

use common::configmap;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kcr_testenv::TestEnv;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::json;

fn describe(e: &WatchEvent<ConfigMap>) -> String {
    match e {
        WatchEvent::Added(c) => format!("ADDED {}", c.metadata.name.as_deref().unwrap_or("")),
        WatchEvent::Modified(c) => format!("MODIFIED {}", c.metadata.name.as_deref().unwrap_or("")),
        WatchEvent::Deleted(c) => format!("DELETED {}", c.metadata.name.as_deref().unwrap_or("")),
        WatchEvent::Bookmark(b) => format!("BOOKMARK {}", b.metadata.resource_version),
        WatchEvent::Error(s) => format!("ERROR {} {}", s.code, s.reason),
    }
}

/// Reads `n` events that are not bookmarks.
async fn next_events(
    stream: &mut (impl futures::Stream<Item = kube::Result<WatchEvent<ConfigMap>>> + Unpin),
    n: usize,
) -> Vec<String> {
    let mut out = Vec::new();
    while out.len() < n {
        let e = stream
            .try_next()
            .await
            .unwrap()
            .expect("the stream ended early");
        if !matches!(e, WatchEvent::Bookmark(_)) {
            out.push(describe(&e));
        }
    }
    out
}

#[tokio::test]
async fn a_watch_from_a_version_should_replay_every_later_change() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    api.create(&PostParams::default(), &configmap("before", &[]))
        .await
        .unwrap();
    let from = env.resource_version().to_string();
    api.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    api.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"x": "1"}})),
    )
    .await
    .unwrap();
    api.delete("a", &DeleteParams::default()).await.unwrap();
    let mut stream = api
        .watch(&WatchParams::default().disable_bookmarks(), &from)
        .await
        .unwrap()
        .boxed();
    assert_eq!(
        next_events(&mut stream, 3).await,
        ["ADDED a", "MODIFIED a", "DELETED a"]
    );
    // Live events follow the replayed ones.
    api.create(&PostParams::default(), &configmap("b", &[]))
        .await
        .unwrap();
    assert_eq!(next_events(&mut stream, 1).await, ["ADDED b"]);
}

#[tokio::test]
async fn a_deleted_event_should_carry_the_deletion_resource_version() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let created = api
        .create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    let from = created.metadata.resource_version.clone().unwrap();
    api.delete("a", &DeleteParams::default()).await.unwrap();
    let mut stream = api
        .watch(&WatchParams::default().disable_bookmarks(), &from)
        .await
        .unwrap()
        .boxed();
    let Some(WatchEvent::Deleted(gone)) = stream.try_next().await.unwrap() else {
        panic!("expected DELETED")
    };
    assert_eq!(
        gone.metadata.resource_version,
        Some(env.resource_version().to_string())
    );
}

#[tokio::test]
async fn a_watch_from_zero_should_start_with_the_current_state() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    for n in ["a", "b"] {
        api.create(&PostParams::default(), &configmap(n, &[]))
            .await
            .unwrap();
    }
    let mut stream = api
        .watch(&WatchParams::default().disable_bookmarks(), "0")
        .await
        .unwrap()
        .boxed();
    assert_eq!(next_events(&mut stream, 2).await, ["ADDED a", "ADDED b"]);
    api.delete("b", &DeleteParams::default()).await.unwrap();
    assert_eq!(next_events(&mut stream, 1).await, ["DELETED b"]);
}

#[tokio::test(start_paused = true)]
async fn bookmarks_should_report_the_current_resource_version() {
    let env = TestEnv::builder()
        .bookmark_interval(Duration::from_secs(60))
        .start()
        .await
        .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let from = env.resource_version().to_string();
    let mut stream = api
        .watch(&WatchParams::default(), &from)
        .await
        .unwrap()
        .boxed();
    // Changes elsewhere move the version; the bookmark reports it without sending them.
    let leases: Api<k8s_openapi::api::coordination::v1::Lease> =
        Api::namespaced(env.client(), "default");
    let mut lease = k8s_openapi::api::coordination::v1::Lease::default();
    lease.metadata.name = Some("l".into());
    leases.create(&PostParams::default(), &lease).await.unwrap();
    let started = tokio::time::Instant::now();
    let e = stream.try_next().await.unwrap().unwrap();
    assert_eq!(describe(&e), format!("BOOKMARK {}", env.resource_version()));
    assert!(
        started.elapsed() >= Duration::from_secs(59),
        "bookmarks come at the configured interval"
    );
}

#[tokio::test]
async fn a_watch_from_a_compacted_version_should_get_410_gone() {
    let (_env, api, from) = common::env_past_its_history().await;
    let mut stream = api
        .watch(&WatchParams::default().disable_bookmarks(), &from)
        .await
        .unwrap()
        .boxed();
    let e = stream.try_next().await.unwrap().unwrap();
    let WatchEvent::Error(status) = e else {
        panic!("expected an ERROR event, got {}", describe(&e))
    };
    assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
    assert!(
        status.message.starts_with("too old resource version"),
        "{}",
        status.message
    );
    assert!(
        stream.try_next().await.unwrap().is_none(),
        "the watch ends after the error"
    );
}

#[tokio::test]
async fn a_watch_list_should_end_its_initial_events_with_an_annotated_bookmark() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    for n in ["a", "b"] {
        api.create(&PostParams::default(), &configmap(n, &[]))
            .await
            .unwrap();
    }
    let synced_at = env.resource_version().to_string();
    let mut stream = api
        .watch(&WatchParams::streaming_lists(), "")
        .await
        .unwrap()
        .boxed();
    let mut seen = Vec::new();
    loop {
        let e = stream.try_next().await.unwrap().unwrap();
        if let WatchEvent::Bookmark(b) = &e {
            assert_eq!(
                b.metadata
                    .annotations
                    .get("k8s.io/initial-events-end")
                    .map(String::as_str),
                Some("true")
            );
            assert_eq!(b.metadata.resource_version, synced_at);
            break;
        }
        seen.push(describe(&e));
    }
    assert_eq!(seen, ["ADDED a", "ADDED b"]);
    api.create(&PostParams::default(), &configmap("c", &[]))
        .await
        .unwrap();
    assert_eq!(next_events(&mut stream, 1).await, ["ADDED c"]);
}

#[tokio::test]
async fn watch_list_without_not_older_than_should_be_invalid() {
    let env = TestEnv::start().await.unwrap();
    let r = common::raw(
        env.addr(),
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true&allowWatchBookmarks=true",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 422);
    assert_eq!(r.json()["reason"], "Invalid");
}

#[tokio::test]
async fn an_object_that_stops_matching_the_selector_should_be_sent_as_deleted() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let from = env.resource_version().to_string();
    let wp = WatchParams::default().labels("app=web").disable_bookmarks();
    let mut stream = api.watch(&wp, &from).await.unwrap().boxed();
    api.create(
        &PostParams::default(),
        &configmap("other", &[("app", "db")]),
    )
    .await
    .unwrap();
    api.create(&PostParams::default(), &configmap("a", &[("app", "web")]))
        .await
        .unwrap();
    let relabel = |app: &str| Patch::Merge(json!({"metadata": {"labels": {"app": app}}}));
    api.patch("a", &PatchParams::default(), &relabel("db"))
        .await
        .unwrap();
    api.patch("other", &PatchParams::default(), &relabel("web"))
        .await
        .unwrap();
    assert_eq!(
        next_events(&mut stream, 3).await,
        ["ADDED a", "DELETED a", "ADDED other"]
    );
}

#[tokio::test]
async fn a_field_selector_watch_should_follow_one_object() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let from = env.resource_version().to_string();
    let wp = WatchParams::default()
        .fields("metadata.name=b")
        .disable_bookmarks();
    let mut stream = api.watch(&wp, &from).await.unwrap().boxed();
    for n in ["a", "b", "c"] {
        api.create(&PostParams::default(), &configmap(n, &[]))
            .await
            .unwrap();
    }
    assert_eq!(next_events(&mut stream, 1).await, ["ADDED b"]);
}

#[tokio::test(start_paused = true)]
async fn a_watch_should_end_after_its_timeout() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let from = env.resource_version().to_string();
    let started = tokio::time::Instant::now();
    let mut stream = api
        .watch(
            &WatchParams::default().timeout(30).disable_bookmarks(),
            &from,
        )
        .await
        .unwrap()
        .boxed();
    assert!(stream.try_next().await.unwrap().is_none());
    assert!(started.elapsed() >= Duration::from_secs(30));
}

#[tokio::test]
async fn events_should_arrive_as_chunked_json_lines() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    api.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    let r = common::raw(
        env.addr(),
        "GET",
        "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0&timeoutSeconds=1",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("transfer-encoding"), Some("chunked"));
    assert_eq!(r.header("content-type"), Some("application/json"));
    let text = String::from_utf8(r.body.clone()).unwrap();
    assert!(
        text.starts_with("{\"type\":\"ADDED\",\"object\":{"),
        "{text}"
    );
    assert!(text.ends_with("}\n"));
    assert_eq!(r.lines()[0]["object"]["metadata"]["name"], "a");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_watches_should_each_receive_every_event() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let from = env.resource_version().to_string();
    let mut watchers = Vec::new();
    for _ in 0..1000 {
        let stream = api
            .watch(&WatchParams::default().disable_bookmarks(), &from)
            .await
            .unwrap();
        watchers.push(stream.boxed());
    }
    for i in 0..5 {
        api.create(&PostParams::default(), &configmap(&format!("c{i}"), &[]))
            .await
            .unwrap();
    }
    let received = futures::future::join_all(watchers.iter_mut().map(|s| next_events(s, 5))).await;
    assert!(
        received
            .iter()
            .all(|events| events.len() == 5 && events[4] == "ADDED c4")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_watch_should_not_hold_up_the_others() {
    let env = TestEnv::builder().watch_buffer(4).start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let from = env.resource_version().to_string();

    // A client that opens a watch and never reads it: far more than the socket buffers hold
    // is sent its way, so its watch blocks.
    let mut stalled = tokio::net::TcpStream::connect(env.addr()).await.unwrap();
    let req = format!(
        "GET /api/v1/namespaces/default/configmaps?watch=true&resourceVersion={from} HTTP/1.1\r\nHost: x\r\n\r\n"
    );
    tokio::io::AsyncWriteExt::write_all(&mut stalled, req.as_bytes())
        .await
        .unwrap();
    let mut reader = api
        .watch(&WatchParams::default().disable_bookmarks(), &from)
        .await
        .unwrap()
        .boxed();

    let big = "x".repeat(64 * 1024);
    let writer = {
        let api = api.clone();
        tokio::spawn(async move {
            for i in 0..400 {
                let mut cm = configmap(&format!("c{i:03}"), &[]);
                cm.data = Some([("big".to_owned(), big.clone())].into());
                api.create(&PostParams::default(), &cm).await.unwrap();
            }
        })
    };
    let events = next_events(&mut reader, 400).await;
    assert_eq!(events.last().map(String::as_str), Some("ADDED c399"));
    writer.await.unwrap();
    drop(stalled);
}
