//! Fault injection: each fault as a client sees it from a real API server.

use crate::common;

use std::time::Duration;

use common::configmap;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use kcr_testenv::{Failure, TestEnv};
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};

/// A client without kube's default retries (429, 503, 504), to see each answer.
fn plain_client(env: &TestEnv) -> kube::Client {
    let mut config = env.config().unwrap();
    config.default_retry = false;
    kube::Client::try_from(config).unwrap()
}

fn api_code(r: kube::Result<impl Sized>) -> (u16, String) {
    match r {
        Err(kube::Error::Api(s)) => (s.code, s.reason.clone()),
        Err(other) => panic!("expected an API error, got {other:?}"),
        Ok(_) => panic!("expected an API error, got success"),
    }
}

fn lease(name: &str) -> Lease {
    let mut l = Lease::default();
    l.metadata.name = Some(name.into());
    l
}

#[tokio::test]
async fn closing_all_watches_should_end_every_open_stream() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let from = env.resource_version().to_string();
    let mut a = api
        .watch(&WatchParams::default(), &from)
        .await
        .unwrap()
        .boxed();
    let mut b = api
        .watch(&WatchParams::default(), &from)
        .await
        .unwrap()
        .boxed();
    env.faults().close_all_watches();
    assert!(a.try_next().await.unwrap().is_none());
    assert!(b.try_next().await.unwrap().is_none());
    // New watches are not affected.
    let mut c = api
        .watch(&WatchParams::default().disable_bookmarks(), &from)
        .await
        .unwrap()
        .boxed();
    api.create(&PostParams::default(), &configmap("x", &[]))
        .await
        .unwrap();
    assert!(matches!(
        c.try_next().await.unwrap(),
        Some(WatchEvent::Added(_))
    ));
}

#[tokio::test]
async fn a_closed_watch_should_send_nothing_after_the_close() {
    // A one-event buffer, and objects large enough that the connection's buffers hold only a
    // few of them: the watch is still sending when it is closed.
    let env = TestEnv::builder().watch_buffer(1).start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let from = env.resource_version().to_string();
    let mut w = api
        .watch(&WatchParams::default().disable_bookmarks(), &from)
        .await
        .unwrap()
        .boxed();
    let big = "x".repeat(900 * 1024);
    let created = 24;
    for i in 0..created {
        let mut cm = configmap(&format!("c{i}"), &[]);
        cm.data = Some([("k".to_owned(), big.clone())].into());
        api.create(&PostParams::default(), &cm).await.unwrap();
    }
    env.faults().close_all_watches();
    let mut received = 0;
    while let Some(event) = w.try_next().await.unwrap() {
        assert!(matches!(event, WatchEvent::Added(_)));
        received += 1;
    }
    // What was already on its way arrives; nothing is sent after the close.
    assert!(
        received < created,
        "{received} of {created} events after the close"
    );
}

#[tokio::test]
async fn watches_should_end_after_the_configured_number_of_events() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    env.faults().close_watches_after_events(Some(2));
    let from = env.resource_version().to_string();
    for n in ["a", "b", "c"] {
        api.create(&PostParams::default(), &configmap(n, &[]))
            .await
            .unwrap();
    }
    let events: Vec<_> = api
        .watch(&WatchParams::default().disable_bookmarks(), &from)
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(events.len(), 2);
    env.faults().close_watches_after_events(None);
    let mut s = api
        .watch(&WatchParams::default().disable_bookmarks(), &from)
        .await
        .unwrap()
        .boxed();
    for _ in 0..3 {
        assert!(matches!(
            s.try_next().await.unwrap(),
            Some(WatchEvent::Added(_))
        ));
    }
}

#[tokio::test]
async fn compaction_should_make_older_versions_gone() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let old = env.resource_version().to_string();
    api.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    let current = env.resource_version().to_string();
    // A watch that is up to date survives compaction.
    let mut live = api
        .watch(&WatchParams::default().disable_bookmarks(), &current)
        .await
        .unwrap()
        .boxed();
    env.faults().compact_history();

    let mut s = api
        .watch(&WatchParams::default(), &old)
        .await
        .unwrap()
        .boxed();
    let Some(WatchEvent::Error(status)) = s.try_next().await.unwrap() else {
        panic!("expected ERROR")
    };
    assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
    let lp = ListParams::default()
        .at(&old)
        .matching(kube::api::VersionMatch::Exact);
    assert_eq!(api_code(api.list(&lp).await), (410, "Expired".to_owned()));

    api.create(&PostParams::default(), &configmap("b", &[]))
        .await
        .unwrap();
    assert!(matches!(
        live.try_next().await.unwrap(),
        Some(WatchEvent::Added(_))
    ));
}

#[tokio::test]
async fn the_next_requests_should_fail_with_the_chosen_status() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(plain_client(&env), "default");
    let faults = env.faults();
    for (failure, reason) in [
        (Failure::internal_error(), "InternalError"),
        (Failure::too_many_requests(3), "TooManyRequests"),
        (Failure::conflict(), "Conflict"),
        (Failure::service_unavailable(), "ServiceUnavailable"),
    ] {
        let code = failure.code();
        faults.fail_next(1, failure);
        assert_eq!(
            api_code(api.list(&ListParams::default()).await),
            (code, reason.to_owned())
        );
        api.list(&ListParams::default()).await.unwrap();
    }
}

#[tokio::test]
async fn too_many_requests_should_carry_retry_after() {
    let env = TestEnv::start().await.unwrap();
    env.faults().fail_next(1, Failure::too_many_requests(7));
    let r = common::raw(
        env.addr(),
        "GET",
        "/api/v1/namespaces/default/configmaps",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after"), Some("7"));
    assert_eq!(r.json()["details"]["retryAfterSeconds"], 7);
}

#[tokio::test]
async fn failures_should_match_only_their_verb_and_resource() {
    let env = TestEnv::start().await.unwrap();
    let leases: Api<Lease> = Api::namespaced(plain_client(&env), "default");
    let cms: Api<ConfigMap> = Api::namespaced(plain_client(&env), "default");
    env.faults()
        .fail_next(2, Failure::conflict().verb("update").resource("leases"));
    let created = leases
        .create(&PostParams::default(), &lease("l"))
        .await
        .unwrap();
    cms.create(&PostParams::default(), &configmap("c", &[]))
        .await
        .unwrap();
    let c = cms.get("c").await.unwrap();
    cms.replace("c", &PostParams::default(), &c).await.unwrap();
    for _ in 0..2 {
        assert_eq!(
            api_code(leases.replace("l", &PostParams::default(), &created).await).0,
            409
        );
    }
    leases
        .replace("l", &PostParams::default(), &created)
        .await
        .unwrap();
}

#[tokio::test(start_paused = true)]
async fn kube_should_retry_through_transient_unavailability() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    env.faults().fail_next(2, Failure::service_unavailable());
    api.list(&ListParams::default()).await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn latency_should_delay_every_request() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    env.faults().set_latency(Duration::from_secs(2));
    let started = tokio::time::Instant::now();
    api.list(&ListParams::default()).await.unwrap();
    assert!(started.elapsed() >= Duration::from_secs(2));
    env.faults().set_latency(Duration::ZERO);
    let started = tokio::time::Instant::now();
    api.list(&ListParams::default()).await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[tokio::test(start_paused = true)]
async fn a_watch_event_delay_should_hold_events_but_not_writes() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let from = env.resource_version().to_string();
    let mut events = api
        .watch(&WatchParams::default(), &from)
        .await
        .unwrap()
        .boxed();
    env.faults().delay_watch_events(Duration::from_secs(3));
    let started = tokio::time::Instant::now();
    api.create(&PostParams::default(), &configmap("delayed", &[]))
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "the write itself is not delayed"
    );
    let event = events.try_next().await.unwrap();
    assert!(
        matches!(event, Some(WatchEvent::Added(cm)) if cm.metadata.name.as_deref() == Some("delayed"))
    );
    assert!(started.elapsed() >= Duration::from_secs(3));
    env.faults().delay_watch_events(Duration::ZERO);
    let started = tokio::time::Instant::now();
    api.create(&PostParams::default(), &configmap("prompt", &[]))
        .await
        .unwrap();
    let event = events.try_next().await.unwrap();
    assert!(
        matches!(event, Some(WatchEvent::Added(cm)) if cm.metadata.name.as_deref() == Some("prompt"))
    );
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn writes_from_a_refused_user_agent_should_fail() {
    let env = TestEnv::start().await.unwrap();
    let a: Api<Lease> =
        Api::namespaced(env.client_with_user_agent("replica-a").unwrap(), "default");
    let b: Api<Lease> =
        Api::namespaced(env.client_with_user_agent("replica-b").unwrap(), "default");
    let created = a
        .create(&PostParams::default(), &lease("lock"))
        .await
        .unwrap();
    env.faults().refuse_updates_from_user_agent("replica-a");
    assert_eq!(
        api_code(a.replace("lock", &PostParams::default(), &created).await).0,
        500
    );
    a.get("lock").await.unwrap(); // reads still work
    b.replace("lock", &PostParams::default(), &created)
        .await
        .unwrap();
    env.faults().clear();
    let current = a.get("lock").await.unwrap();
    a.replace("lock", &PostParams::default(), &current)
        .await
        .unwrap();
}

#[tokio::test]
async fn writes_to_a_refused_object_should_fail() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Lease> = Api::namespaced(env.client(), "default");
    env.faults()
        .refuse_updates_to("leases", Some("default"), "lock");
    assert_eq!(
        api_code(api.create(&PostParams::default(), &lease("lock")).await).0,
        500
    );
    api.create(&PostParams::default(), &lease("other"))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_stopped_server_should_refuse_connections_until_it_restarts() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(plain_client(&env), "default");
    api.create(&PostParams::default(), &configmap("kept", &[]))
        .await
        .unwrap();
    let mut watch = api
        .watch(&WatchParams::default(), "0")
        .await
        .unwrap()
        .boxed();
    assert!(matches!(
        watch.try_next().await.unwrap(),
        Some(WatchEvent::Added(_))
    ));

    env.faults().stop_serving().await;
    assert!(watch.try_next().await.is_err() || watch.try_next().await.unwrap().is_none());
    match api.list(&ListParams::default()).await {
        Err(kube::Error::Api(s)) => panic!("expected a connection error, got status {}", s.code),
        Err(_) => {}
        Ok(_) => panic!("a stopped server answered"),
    }
    env.faults().restart_serving().await.unwrap();
    let fresh: Api<ConfigMap> = Api::namespaced(plain_client(&env), "default");
    let items = fresh.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(items.len(), 1, "the state survives a restart");
}

#[tokio::test]
async fn the_admin_endpoint_should_inject_faults_over_http() {
    let env = TestEnv::builder()
        .admin_endpoint(true)
        .start()
        .await
        .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(plain_client(&env), "default");
    let post = |path: &'static str| common::raw(env.addr(), "POST", path, &[], b"");

    assert_eq!(
        post("/kcr/faults/fail?count=1&status=503&verb=list&resource=configmaps")
            .await
            .status,
        200
    );
    assert_eq!(api_code(api.list(&ListParams::default()).await).0, 503);
    api.list(&ListParams::default()).await.unwrap();

    let from = env.resource_version().to_string();
    let mut w = api
        .watch(&WatchParams::default(), &from)
        .await
        .unwrap()
        .boxed();
    assert_eq!(post("/kcr/faults/close-watches").await.status, 200);
    assert!(w.try_next().await.unwrap().is_none());

    api.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    assert_eq!(post("/kcr/faults/compact").await.status, 200);
    let mut w = api
        .watch(&WatchParams::default(), &from)
        .await
        .unwrap()
        .boxed();
    assert!(matches!(w.try_next().await.unwrap(), Some(WatchEvent::Error(s)) if s.code == 410));

    assert_eq!(
        post("/kcr/faults/refuse-object?resource=configmaps&namespace=default&name=b")
            .await
            .status,
        200
    );
    assert_eq!(
        api_code(
            api.create(&PostParams::default(), &configmap("b", &[]))
                .await
        )
        .0,
        500
    );
    assert_eq!(post("/kcr/faults/clear").await.status, 200);
    api.create(&PostParams::default(), &configmap("b", &[]))
        .await
        .unwrap();

    assert_eq!(
        post("/kcr/faults/initialize-watch-cache?resource=configmaps&ms=60000")
            .await
            .status,
        200
    );
    let (code, reason) = api_code(api.list(&ListParams::default().match_any()).await);
    assert_eq!((code, reason.as_str()), (429, "TooManyRequests"));
    assert_eq!(
        post("/kcr/faults/omit-initial-events-end?resource=configmaps")
            .await
            .status,
        200
    );
    assert_eq!(post("/kcr/faults/clear").await.status, 200);
    api.list(&ListParams::default().match_any()).await.unwrap();
    assert_eq!(
        post("/kcr/faults/omit-initial-events-end").await.status,
        400
    );

    assert_eq!(post("/kcr/faults/fail?status=abc").await.status, 400);
    assert_eq!(post("/kcr/faults/nonsense").await.status, 404);
    assert_eq!(
        common::raw(env.addr(), "GET", "/kcr/faults/clear", &[], b"")
            .await
            .status,
        405
    );
}

#[tokio::test]
async fn the_admin_endpoint_should_be_off_unless_enabled() {
    let env = TestEnv::start().await.unwrap();
    let r = common::raw(env.addr(), "POST", "/kcr/faults/compact", &[], b"").await;
    assert_eq!(r.status, 404);
}

/// ConfigMaps whose list is larger than kube-apiserver's 128 KiB compression threshold.
async fn big_config_maps(api: &Api<ConfigMap>, count: usize) {
    for i in 0..count {
        let mut cm = configmap(&format!("big-{i:04}"), &[("set", "big")]);
        cm.data = Some([("blob".to_owned(), format!("{i:04}-").repeat(200))].into());
        api.create(&PostParams::default(), &cm).await.unwrap();
    }
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[tokio::test]
async fn responses_should_be_gzip_compressed_over_128_kib_when_the_client_accepts_gzip() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    big_config_maps(&api, 150).await;
    let path = "/api/v1/namespaces/default/configmaps";
    let plain = common::raw(env.addr(), "GET", path, &[], b"").await;
    assert_eq!(plain.status, 200);
    assert!(plain.body.len() > 128 * 1024, "{}", plain.body.len());
    assert_eq!(plain.header("content-encoding"), None);
    let gzip = [("Accept-Encoding", "gzip")];
    let compressed = common::raw(env.addr(), "GET", path, &gzip, b"").await;
    assert_eq!(compressed.header("content-encoding"), Some("gzip"));
    assert_eq!(compressed.header("vary"), Some("Accept-Encoding"));
    assert!(compressed.body.len() * 5 < plain.body.len());
    let list: serde_json::Value = serde_json::from_slice(&gunzip(&compressed.body)).unwrap();
    assert_eq!(list["items"].as_array().map(Vec::len), Some(150));
    // Below the threshold (one object), or a token with parameters: not compressed.
    let one = format!("{path}/big-0001");
    let small = common::raw(env.addr(), "GET", &one, &gzip, b"").await;
    assert_eq!(small.status, 200);
    assert_eq!(small.header("content-encoding"), None);
    let q = [("Accept-Encoding", "gzip;q=1.0")];
    let with_q = common::raw(env.addr(), "GET", path, &q, b"").await;
    assert_eq!(with_q.header("content-encoding"), None);
}

#[tokio::test]
async fn streaming_lists_should_be_compressed_and_plain_watches_not() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    big_config_maps(&api, 3).await;
    let gzip = [("Accept-Encoding", "gzip")];
    let watch_list = "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true\
                      &resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=1";
    let streamed = common::raw(env.addr(), "GET", watch_list, &gzip, b"").await;
    assert_eq!(streamed.header("content-encoding"), Some("gzip"));
    let text = String::from_utf8(gunzip(&streamed.body)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[3].contains("k8s.io/initial-events-end"));
    let rv = env.resource_version();
    let plain_watch = format!(
        "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}&timeoutSeconds=1"
    );
    let plain = common::raw(env.addr(), "GET", &plain_watch, &gzip, b"").await;
    assert_eq!(plain.status, 200);
    assert_eq!(plain.header("content-encoding"), None);
}

#[tokio::test]
async fn an_omitted_initial_events_end_should_leave_the_streaming_list_open_without_it() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    api.create(&PostParams::default(), &configmap("a", &[]))
        .await
        .unwrap();
    env.faults().omit_initial_events_end("configmaps");
    let watch_list = "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true\
                      &resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=3";
    let streamed = common::raw(env.addr(), "GET", watch_list, &[], b"").await;
    let text = String::from_utf8(streamed.body).unwrap();
    assert!(text.contains("\"ADDED\""), "{text}");
    assert!(!text.contains("k8s.io/initial-events-end"), "{text}");
    // Other resources, and everything after `clear`, end their initial events.
    let leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases?watch=true\
                  &sendInitialEvents=true&resourceVersionMatch=NotOlderThan\
                  &allowWatchBookmarks=true&timeoutSeconds=1";
    let other = common::raw(env.addr(), "GET", leases, &[], b"").await;
    assert!(String::from_utf8_lossy(&other.body).contains("k8s.io/initial-events-end"));
    env.faults().clear();
    let watch_list = watch_list.replace("timeoutSeconds=3", "timeoutSeconds=1");
    let streamed = common::raw(env.addr(), "GET", &watch_list, &[], b"").await;
    assert!(String::from_utf8_lossy(&streamed.body).contains("k8s.io/initial-events-end"));
}

#[tokio::test(start_paused = true)]
async fn an_initializing_watch_cache_should_answer_429_as_kube_apiserver_until_it_is_ready() {
    let env = TestEnv::start().await.unwrap();
    env.faults()
        .initialize_watch_cache("configmaps", Duration::from_secs(5));
    let path = "/api/v1/namespaces/default/configmaps";
    let watch = common::raw(env.addr(), "GET", &format!("{path}?watch=true"), &[], b"").await;
    assert_eq!(watch.status, 429);
    assert_eq!(watch.header("retry-after"), Some("1"));
    // kube-apiserver's body (kcr-testenv writes a Status's members after `metadata` sorted).
    let body: serde_json::Value = serde_json::from_slice(&watch.body).unwrap();
    let kube_apiserver: serde_json::Value = serde_json::from_str(
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"storage is (re)initializing","reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429}"#,
    )
    .unwrap();
    assert_eq!(body, kube_apiserver);
    let status = |q: &str| {
        let url = format!("{path}{q}");
        let addr = env.addr();
        async move { common::raw(addr, "GET", &url, &[], b"").await.status }
    };
    assert_eq!(status("?resourceVersion=0").await, 429);
    assert_eq!(
        status("?resourceVersion=0&limit=500&labelSelector=a%3Db").await,
        429
    );
    // What kube-apiserver sends to etcd meanwhile is served.
    assert_eq!(status("?resourceVersion=0&limit=500").await, 200);
    assert_eq!(status("").await, 200);
    assert_eq!(status("?labelSelector=a%3Db").await, 200);
    // Other resources are ready.
    let leases =
        "/apis/coordination.k8s.io/v1/namespaces/default/leases?watch=true&timeoutSeconds=1";
    assert_eq!(
        common::raw(env.addr(), "GET", leases, &[], b"")
            .await
            .status,
        200
    );
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(status("?resourceVersion=0").await, 200);
}
