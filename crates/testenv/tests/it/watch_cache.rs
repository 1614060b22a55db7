//! The watch cache's rules through `kube::Client` and raw HTTP: a storage compaction leaves the
//! window of recent history served, versions older than the window are `410 Gone`, and lists
//! from the future fail with "Too large resource version" after kube-apiserver's wait.

use crate::common;

use std::time::Duration;

use common::configmap;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kcr_testenv::TestEnv;
use kube::api::{
    Api, ListParams, Patch, PatchParams, PostParams, VersionMatch, WatchEvent, WatchParams,
};
use serde_json::json;

/// `(code, reason, message)` of an API error.
fn status(e: kube::Error) -> (u16, String, String) {
    match e {
        kube::Error::Api(s) => (s.code, s.reason, s.message),
        other => panic!("expected an API error, got {other}"),
    }
}

/// Five ConfigMaps, a list of them (its version and a continue token after two), then three
/// changes of `c0`.
async fn five_then_three_changes(api: &Api<ConfigMap>) -> (String, String) {
    for i in 0..5 {
        api.create(&PostParams::default(), &configmap(&format!("c{i}"), &[]))
            .await
            .unwrap();
    }
    let first = api.list(&ListParams::default().limit(2)).await.unwrap();
    for i in 0..3 {
        api.patch(
            "c0",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"i": i.to_string()}})),
        )
        .await
        .unwrap();
    }
    (
        first.metadata.resource_version.unwrap(),
        first.metadata.continue_.unwrap(),
    )
}

#[tokio::test]
async fn a_watch_from_a_compacted_but_cached_version_should_replay_the_changes() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let (at, token) = five_then_three_changes(&api).await;
    env.faults().compact_storage();

    let mut stream = api
        .watch(&WatchParams::default().disable_bookmarks(), &at)
        .await
        .unwrap()
        .boxed();
    for i in 0..3 {
        match stream.try_next().await.unwrap().unwrap() {
            WatchEvent::Modified(cm) => {
                assert_eq!(cm.data.unwrap()["i"], i.to_string());
            }
            other => panic!("expected MODIFIED, got {other:?}"),
        }
    }

    // An exact list and a continue token from before the compaction: the cache's snapshot.
    let exact = api
        .list(&ListParams::default().at(&at).matching(VersionMatch::Exact))
        .await
        .unwrap();
    assert_eq!(exact.items.len(), 5);
    assert_eq!(exact.items[0].data.as_ref().unwrap().get("i"), None);
    let rest = api
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    let names: Vec<_> = rest
        .items
        .iter()
        .map(|c| c.metadata.name.clone().unwrap())
        .collect();
    assert_eq!(names, ["c2", "c3"]);
    assert_eq!(rest.metadata.remaining_item_count, Some(1));
}

#[tokio::test]
async fn emptying_the_window_should_make_every_older_version_gone() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let (at, token) = five_then_three_changes(&api).await;
    env.faults().compact_history();

    let mut stream = api
        .watch(&WatchParams::default().disable_bookmarks(), &at)
        .await
        .unwrap()
        .boxed();
    let Some(WatchEvent::Error(e)) = stream.try_next().await.unwrap() else {
        panic!("expected an ERROR event");
    };
    assert_eq!((e.code, e.reason.as_str()), (410, "Expired"));
    let (code, reason, message) = status(
        api.list(&ListParams::default().at(&at).matching(VersionMatch::Exact))
            .await
            .unwrap_err(),
    );
    assert_eq!((code, reason.as_str()), (410, "Expired"));
    assert_eq!(
        message,
        "The resourceVersion for the provided list is too old."
    );
    let (code, _, _) = status(
        api.list(&ListParams::default().limit(2).continue_token(&token))
            .await
            .unwrap_err(),
    );
    assert_eq!(code, 410);
}

#[tokio::test]
async fn a_version_older_than_the_window_should_be_gone_with_or_without_a_compaction() {
    let env = TestEnv::builder().history_size(3).start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let (at, _) = five_then_three_changes(&api).await;
    api.create(&PostParams::default(), &configmap("later", &[]))
        .await
        .unwrap();
    // Out of the window, but not compacted in storage: a real server would read it from etcd;
    // kcr-testenv keeps no more, and says which version the window starts after.
    let exact = ListParams::default().at(&at).matching(VersionMatch::Exact);
    let (code, _, message) = status(api.list(&exact).await.unwrap_err());
    assert_eq!(code, 410);
    assert!(
        message.starts_with("too old resource version: "),
        "{message}"
    );
    env.faults().compact_storage();
    let (code, _, message) = status(api.list(&exact).await.unwrap_err());
    assert_eq!(code, 410);
    assert_eq!(
        message,
        "The resourceVersion for the provided list is too old."
    );
}

#[tokio::test(start_paused = true)]
async fn a_list_from_a_future_version_should_time_out_after_three_seconds() {
    let env = TestEnv::start().await.unwrap();
    let future = env.resource_version() + 100_000;
    let current = env.resource_version();
    let started = tokio::time::Instant::now();
    let path = format!("/api/v1/namespaces/default/configmaps?resourceVersion={future}");
    let r = common::raw(env.addr(), "GET", &path, &[], b"").await;
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "kube-apiserver's wait"
    );
    assert_eq!(r.status, 504);
    assert_eq!(
        r.json(),
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("Timeout: Too large resource version: {future}, current: {current}"),
            "reason": "Timeout",
            "details": {
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1
            },
            "code": 504
        })
    );
}

#[tokio::test(start_paused = true)]
async fn a_watch_list_from_a_future_version_should_end_with_an_error_after_three_seconds() {
    let env = TestEnv::start().await.unwrap();
    let future = env.resource_version() + 100_000;
    let started = tokio::time::Instant::now();
    let path = format!(
        "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&resourceVersion={future}&timeoutSeconds=10"
    );
    let r = common::raw(env.addr(), "GET", &path, &[], b"").await;
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "kube-apiserver's wait"
    );
    assert_eq!(r.status, 200);
    let lines = r.lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["type"], "ERROR");
    assert_eq!(lines[0]["object"]["code"], 504);
    assert_eq!(
        lines[0]["object"]["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
}

#[tokio::test]
async fn a_list_with_resource_version_zero_should_ignore_the_limit() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    five_then_three_changes(&api).await;
    // kube's `ListParams` leaves `resourceVersion=0` out when a limit is set: send it raw.
    let path = "/api/v1/namespaces/default/configmaps?resourceVersion=0&limit=2";
    let all = common::raw(env.addr(), "GET", path, &[], b"").await.json();
    assert_eq!(all["items"].as_array().map(Vec::len), Some(5));
    assert_eq!(all["metadata"].get("continue"), None);
    let paged = api.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(paged.items.len(), 2);
    assert_eq!(paged.metadata.remaining_item_count, Some(3));
}
