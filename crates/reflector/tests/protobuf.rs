//! Lists and watches in Kubernetes' protobuf wire format: over real HTTP against kcr-testenv
//! with `kube::Client` (paging, watches, streaming lists and their initial-events-end
//! bookmark, `410 Expired`), and against a scripted server for what a real one would not send
//! (an oversized or cut frame) and to see what is asked for.

use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{Binding, ConfigMap};
use kcr_reflector::{
    ApiListerWatcher, DEFAULT_MAX_EVENT_BYTES, Error, ListOptions, ListerWatcher, VersionMatch,
    WatchEvent, WatchOptions, WireFormat,
};
use kcr_testenv::TestEnv;
use kube::Api;
use kube::api::{ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::PartialObjectMeta;
use parking_lot::Mutex;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn configmap(name: &str) -> ConfigMap {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"app": "web"}},
        "data": {"k": name},
    }))
    .unwrap()
}

async fn env_with_configmaps(history: usize, n: usize) -> (TestEnv, Api<ConfigMap>) {
    let env = TestEnv::builder()
        .history_size(history)
        .start()
        .await
        .unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    for i in 0..n {
        api.create(&PostParams::default(), &configmap(&format!("c{i}")))
            .await
            .unwrap();
    }
    (env, api)
}

fn protobuf(api: &Api<ConfigMap>) -> ApiListerWatcher<ConfigMap> {
    ApiListerWatcher::new(api.clone()).wire_format(WireFormat::Protobuf)
}

/// The switch back to JSON.
fn json(api: &Api<ConfigMap>) -> ApiListerWatcher<ConfigMap> {
    ApiListerWatcher::new(api.clone()).wire_format(WireFormat::Json)
}

async fn list_all(lw: &ApiListerWatcher<ConfigMap>, limit: u32) -> (Vec<ConfigMap>, usize) {
    let mut options = ListOptions::default();
    options.limit = Some(limit);
    let (mut items, mut pages) = (Vec::new(), 0);
    loop {
        let page = lw.list(&options).await.unwrap();
        pages += 1;
        items.extend(page.items);
        match page.continue_token {
            Some(token) => options.continue_token = Some(token),
            None => return (items, pages),
        }
    }
}

#[tokio::test]
async fn protobuf_list_pages_should_decode_as_the_json_ones() {
    let (_env, api) = env_with_configmaps(1000, 5).await;
    for drop in [true, false] {
        let (json_items, _) = list_all(&json(&api).drop_managed_fields(drop), 2).await;
        let (items, pages) = list_all(&protobuf(&api).drop_managed_fields(drop), 2).await;
        assert_eq!(pages, 3);
        assert_eq!(items.len(), 5);
        assert_eq!(
            items.iter().all(|cm| cm.metadata.managed_fields.is_some()),
            !drop,
            "managedFields are skipped only when asked"
        );
        assert_eq!(items, json_items);
    }
}

fn names(events: &[WatchEvent<ConfigMap>]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            WatchEvent::Added(cm) => format!("ADDED {}", cm.metadata.name.as_deref().unwrap_or("")),
            WatchEvent::Modified(cm) => {
                format!("MODIFIED {}", cm.metadata.name.as_deref().unwrap_or(""))
            }
            WatchEvent::Deleted(cm) => {
                format!("DELETED {}", cm.metadata.name.as_deref().unwrap_or(""))
            }
            WatchEvent::Bookmark(b) => format!("BOOKMARK end={}", b.is_initial_events_end()),
            WatchEvent::Error(s) => format!("ERROR {} {}", s.code, s.reason),
        })
        .collect()
}

#[tokio::test]
async fn a_protobuf_streaming_list_should_end_its_initial_events_with_a_bookmark() {
    let (_env, api) = env_with_configmaps(1000, 3).await;
    let lw = protobuf(&api).drop_managed_fields(true);
    let mut options = WatchOptions::new("");
    options.resource_version_match = Some(VersionMatch::NotOlderThan);
    options.allow_watch_bookmarks = true;
    options.send_initial_events = true;
    let mut stream = lw.watch(&options).await.unwrap();
    let mut events = Vec::new();
    for _ in 0..4 {
        events.push(stream.next().await.unwrap().unwrap());
    }
    api.patch(
        "c1",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "changed"}})),
    )
    .await
    .unwrap();
    let modified = stream.next().await.unwrap().unwrap();
    let WatchEvent::Modified(cm) = &modified else {
        panic!("expected an update, got {:?}", names(&[modified]));
    };
    assert_eq!(cm.data.as_ref().unwrap()["k"], "changed");
    assert!(cm.metadata.managed_fields.is_none());
    assert_eq!(
        names(&events),
        ["ADDED c0", "ADDED c1", "ADDED c2", "BOOKMARK end=true"]
    );
}

#[tokio::test]
async fn a_protobuf_watch_from_a_compacted_version_should_report_410_expired() {
    let (env, api) = env_with_configmaps(5, 0).await;
    let from = env.resource_version().to_string();
    for i in 0..10 {
        api.create(&PostParams::default(), &configmap(&format!("c{i}")))
            .await
            .unwrap();
    }
    let mut stream = protobuf(&api)
        .watch(&WatchOptions::new(from))
        .await
        .unwrap();
    let event = stream.next().await.unwrap().unwrap();
    let WatchEvent::Error(status) = event else {
        panic!("expected an ERROR event, got {:?}", names(&[event]));
    };
    assert_eq!((status.code, status.reason.as_str()), (410, "Expired"));
    assert!(status.message.starts_with("too old resource version"));
}

/// A server that answers every request with `content_type` and `body` in chunks, recording
/// the `Accept` header of each request.
async fn scripted(
    content_type: &'static str,
    chunks: Vec<Vec<u8>>,
) -> (String, Arc<Mutex<Vec<String>>>) {
    scripted_with_code(200, content_type, chunks).await
}

/// [`scripted`] with another status code.
async fn scripted_with_code(
    code: u16,
    content_type: &'static str,
    chunks: Vec<Vec<u8>>,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let accepts = Arc::new(Mutex::new(Vec::new()));
    tokio::spawn({
        let accepts = accepts.clone();
        async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let (accepts, chunks) = (accepts.clone(), chunks.clone());
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") {
                        if socket.read(&mut byte).await.unwrap_or(0) == 0 {
                            return;
                        }
                        head.push(byte[0]);
                    }
                    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
                    let accept = head
                        .lines()
                        .find_map(|l| l.strip_prefix("accept: "))
                        .unwrap_or_default()
                        .to_owned();
                    accepts.lock().push(accept);
                    let mut out = format!(
                        "HTTP/1.1 {code} Scripted\r\ncontent-type: {content_type}\r\n\
                         transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
                    )
                    .into_bytes();
                    for chunk in &chunks {
                        out.extend(format!("{:x}\r\n", chunk.len()).as_bytes());
                        out.extend(chunk);
                        out.extend(b"\r\n");
                    }
                    out.extend(b"0\r\n\r\n");
                    let _ = socket.write_all(&out).await;
                    let _ = socket.shutdown().await;
                });
            }
        }
    });
    (url, accepts)
}

fn client(url: &str) -> kube::Client {
    let mut config = kube::Config::new(url.parse().unwrap());
    config.default_retry = false;
    kube::Client::try_from(config).unwrap()
}

/// Every event (or error) a protobuf watch of ConfigMaps reads from a scripted server that
/// sends `chunks`, with events of at most `max_event_bytes`.
async fn scripted_watch(
    chunks: Vec<Vec<u8>>,
    max_event_bytes: usize,
) -> Vec<kcr_reflector::Result<WatchEvent<ConfigMap>>> {
    let (url, _) = scripted(kcr_protobuf::WATCH_MEDIA_TYPE, chunks).await;
    let api: Api<ConfigMap> = Api::namespaced(client(&url), "default");
    protobuf(&api)
        .max_event_bytes(max_event_bytes)
        .watch(&WatchOptions::new("1"))
        .await
        .unwrap()
        .collect()
        .await
}

fn added_frame(name: &str, big: usize) -> Vec<u8> {
    let object = kcr_protobuf::object::encode(&json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": "5"},
        "data": {"big": "x".repeat(big)},
    }))
    .unwrap();
    kcr_protobuf::watch::encode_frame("ADDED", &object).unwrap()
}

#[tokio::test]
async fn protobuf_should_be_asked_for_first_by_default_and_only_for_proven_kinds() {
    let frames: Vec<Vec<u8>> = vec![added_frame("a", 1)];
    let (url, accepts) = scripted(kcr_protobuf::WATCH_MEDIA_TYPE, frames).await;
    let api: Api<ConfigMap> = Api::namespaced(client(&url), "default");
    // The default: a proven built-in kind is asked for in protobuf first.
    let mut stream = ApiListerWatcher::new(api.clone())
        .watch(&WatchOptions::new("1"))
        .await
        .unwrap();
    assert_eq!(names(&[stream.next().await.unwrap().unwrap()]), ["ADDED a"]);
    assert!(stream.next().await.is_none());
    // `Api<K>` as a lister-watcher does the same.
    let _ = ListerWatcher::list(&api, &ListOptions::default()).await;
    // The switch back to JSON.
    let _ = json(&api).list(&ListOptions::default()).await;
    // A built-in kind the oracle does not cover (not listable, so not recorded) is asked for
    // in JSON, as are dynamic objects and custom resources.
    let bindings: Api<Binding> = Api::all(client(&url));
    let _ = ApiListerWatcher::new(bindings)
        .wire_format(WireFormat::Protobuf)
        .list(&ListOptions::default())
        .await;
    let dynamic: Api<DynamicObject> =
        Api::all_with(client(&url), &ApiResource::erase::<ConfigMap>(&()));
    let _ = ApiListerWatcher::new(dynamic)
        .list(&ListOptions::default())
        .await;
    let both = "application/vnd.kubernetes.protobuf, application/json";
    assert_eq!(
        *accepts.lock(),
        [
            both,
            both,
            "application/json",
            "application/json",
            "application/json"
        ]
    );
}

#[tokio::test]
async fn a_json_answer_to_a_protobuf_request_should_be_read_as_json() {
    let line = br#"{"type":"ADDED","object":{"metadata":{"name":"j","resourceVersion":"2"}}}
"#;
    let (url, _) = scripted("application/json", vec![line.to_vec()]).await;
    let api: Api<ConfigMap> = Api::namespaced(client(&url), "default");
    let mut stream = protobuf(&api).watch(&WatchOptions::new("1")).await.unwrap();
    assert_eq!(names(&[stream.next().await.unwrap().unwrap()]), ["ADDED j"]);
}

#[tokio::test]
async fn a_frame_over_the_limit_should_end_the_watch_with_a_typed_error() {
    // The second frame announces about 1 MiB; the limit is 64 KiB. It comes in 1 KiB chunks.
    let big = added_frame("big", 1 << 20);
    let mut chunks = vec![added_frame("small", 10)];
    chunks.extend(big.chunks(1024).map(<[u8]>::to_vec));
    let events = scripted_watch(chunks, 64 * 1024).await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(matches!(events[0], Ok(WatchEvent::Added(_))));
    assert!(matches!(
        events[1],
        Err(Error::EventTooLarge { limit: 65_536 })
    ));
}

#[tokio::test]
async fn a_watch_cut_inside_a_frame_or_a_malformed_frame_should_give_typed_errors() {
    let mut cut = added_frame("cut", 100);
    cut.truncate(50);
    let events = scripted_watch(vec![cut], DEFAULT_MAX_EVENT_BYTES).await;
    assert!(
        matches!(
            &events[..],
            [Err(Error::Protobuf {
                source: kcr_protobuf::Error::Truncated { .. },
                ..
            })]
        ),
        "{events:?}"
    );
    // A frame whose object's `data` value is sent as a number.
    let object = kcr_protobuf::envelope::wrap(
        "v1",
        "ConfigMap",
        &[0x0a, 0x03, 0x0a, 0x01, b'x', 0x10, 0x05],
    );
    let frame = kcr_protobuf::watch::encode_frame("ADDED", &object).unwrap();
    let events = scripted_watch(vec![frame], DEFAULT_MAX_EVENT_BYTES).await;
    match &events[..] {
        [Err(Error::Protobuf { kind, name, source })] => {
            assert_eq!((kind.as_str(), name.as_str()), ("ConfigMap", "x"));
            assert!(matches!(
                source,
                kcr_protobuf::Error::WrongWireType { field: 2, .. }
            ));
            assert!(events[0].as_ref().unwrap_err().is_decode());
        }
        other => panic!("expected a protobuf decode error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_protobuf_status_body_should_become_the_api_error() {
    // kube-apiserver answers a protobuf client's failed list with a protobuf Status.
    let status = kcr_protobuf::object::encode(&json!({
        "apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
        "message": "The provided continue parameter is too old", "reason": "Expired",
        "code": 410,
    }))
    .unwrap();
    let (url, _) = scripted_with_code(410, kcr_protobuf::MEDIA_TYPE, vec![status]).await;
    let api: Api<ConfigMap> = Api::namespaced(client(&url), "default");
    match protobuf(&api).list(&ListOptions::default()).await {
        Err(e @ Error::Api { .. }) => {
            assert!(e.is_expired(), "{e}");
            let Error::Api { status, .. } = e else {
                unreachable!()
            };
            assert_eq!(status.message, "The provided continue parameter is too old");
        }
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn an_expired_continue_token_should_be_a_410_expired_error_in_protobuf_as_in_json() {
    // kcr-testenv, as kube-apiserver, answers the error in the format the client asked for.
    let (env, api) = env_with_configmaps(1000, 5).await;
    let mut messages = Vec::new();
    for lw in [json(&api), protobuf(&api)] {
        let mut options = ListOptions::default();
        options.limit = Some(2);
        let first = lw.list(&options).await.unwrap();
        options.continue_token = first.continue_token;
        assert!(options.continue_token.is_some());
        // A change, then a compaction at its version: the token's version is gone.
        api.patch(
            "c0",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"k": messages.len().to_string()}})),
        )
        .await
        .unwrap();
        env.faults().compact_history();
        match lw.list(&options).await {
            Err(e @ Error::Api { .. }) => {
                assert!(e.is_expired(), "{e}");
                messages.push(e.status().unwrap().message.clone());
            }
            other => panic!("expected an API error, got {other:?}"),
        }
    }
    assert_eq!(messages[0], messages[1]);
    assert!(!messages[0].is_empty());
}

/// What client-go's metadata client asks for (lists / watches): protobuf as
/// `PartialObjectMetadata(List)`, else JSON as it, else plain JSON.
const METADATA_LIST_ACCEPT: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
const METADATA_WATCH_ACCEPT: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

fn metadata_names(
    events: &[kcr_reflector::Result<WatchEvent<PartialObjectMeta<ConfigMap>>>],
) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            Ok(WatchEvent::Added(o)) => {
                format!("ADDED {}", o.metadata.name.as_deref().unwrap_or(""))
            }
            Ok(WatchEvent::Modified(o)) => {
                format!("MODIFIED {}", o.metadata.name.as_deref().unwrap_or(""))
            }
            Ok(WatchEvent::Deleted(o)) => {
                format!("DELETED {}", o.metadata.name.as_deref().unwrap_or(""))
            }
            Ok(WatchEvent::Bookmark(b)) => format!("BOOKMARK end={}", b.is_initial_events_end()),
            Ok(WatchEvent::Error(s)) => format!("ERROR {}", s.code),
            Err(e) => format!("Err {e}"),
        })
        .collect()
}

#[tokio::test]
async fn metadata_lists_and_watches_should_ask_for_partial_object_metadata_as_client_go_does() {
    let (url, accepts) = scripted(kcr_protobuf::WATCH_MEDIA_TYPE, vec![]).await;
    let api: Api<PartialObjectMeta<ConfigMap>> = Api::namespaced(client(&url), "default");
    // A proven kind's metadata: protobuf first, by default.
    let lw = ApiListerWatcher::new(api.clone());
    let _ = lw.list(&ListOptions::default()).await;
    let _ = lw.watch(&WatchOptions::new("1")).await;
    // `Api<K>` as a lister-watcher does the same.
    let _ = ListerWatcher::list(&api, &ListOptions::default()).await;
    // JSON when asked, as kube-client asks.
    let lw = ApiListerWatcher::new(api.clone()).wire_format(WireFormat::Json);
    let _ = lw.list(&ListOptions::default()).await;
    let _ = lw.watch(&WatchOptions::new("1")).await;
    // A kind without a proven table (dynamic objects, custom resources): JSON.
    let dynamic: Api<PartialObjectMeta<DynamicObject>> =
        Api::all_with(client(&url), &ApiResource::erase::<ConfigMap>(&()));
    let _ = ApiListerWatcher::new(dynamic)
        .list(&ListOptions::default())
        .await;
    assert_eq!(
        *accepts.lock(),
        [
            METADATA_LIST_ACCEPT.to_ascii_lowercase(),
            METADATA_WATCH_ACCEPT.to_ascii_lowercase(),
            METADATA_LIST_ACCEPT.to_ascii_lowercase(),
            "application/json;as=partialobjectmetadatalist;g=meta.k8s.io;v=v1".to_owned(),
            "application/json;as=partialobjectmetadata;g=meta.k8s.io;v=v1".to_owned(),
            "application/json;as=partialobjectmetadatalist;g=meta.k8s.io;v=v1".to_owned(),
        ]
    );
}

/// A server (or proxy) that ignores `as=` and sends the full objects: a typed error, in JSON
/// and in protobuf, for lists and watches, never full objects taken for metadata.
#[tokio::test]
async fn full_objects_answering_a_metadata_request_should_give_a_typed_error() {
    let metadata = |url: &str| {
        let api: Api<PartialObjectMeta<ConfigMap>> = Api::namespaced(client(url), "default");
        ApiListerWatcher::new(api)
    };
    let not_metadata = |e: &Error, want: &str| {
        matches!(e, Error::NotMetadata { kind } if kind == want) && e.is_decode()
    };
    // JSON list.
    let list = br#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a"},"data":{"k":"v"}}]}"#;
    let (url, _) = scripted("application/json", vec![list.to_vec()]).await;
    let err = metadata(&url)
        .list(&ListOptions::default())
        .await
        .unwrap_err();
    assert!(not_metadata(&err, "ConfigMapList"), "{err:?}");
    // JSON watch.
    let line = br#"{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"2"}}}
"#;
    let (url, _) = scripted("application/json", vec![line.to_vec()]).await;
    let events: Vec<_> = metadata(&url)
        .watch(&WatchOptions::new("1"))
        .await
        .unwrap()
        .collect()
        .await;
    assert!(
        matches!(&events[..], [Err(e)] if not_metadata(e, "ConfigMap")),
        "{events:?}"
    );
    // Protobuf list.
    let schema = kcr_protobuf::Schema::for_kind("v1", "ConfigMap").unwrap();
    let body = kcr_protobuf::list::encode(
        schema,
        json!({"resourceVersion": "5"}).as_object().unwrap(),
        &[json!({"metadata": {"name": "a"}, "data": {"k": "v"}})],
    )
    .unwrap();
    let (url, _) = scripted(kcr_protobuf::MEDIA_TYPE, vec![body]).await;
    let err = metadata(&url)
        .list(&ListOptions::default())
        .await
        .unwrap_err();
    assert!(not_metadata(&err, "ConfigMapList"), "{err:?}");
    // Protobuf watch.
    let (url, _) = scripted(kcr_protobuf::WATCH_MEDIA_TYPE, vec![added_frame("a", 1)]).await;
    let events: Vec<_> = metadata(&url)
        .watch(&WatchOptions::new("1"))
        .await
        .unwrap()
        .collect()
        .await;
    assert!(
        matches!(&events[..], [Err(e)] if not_metadata(e, "ConfigMap")),
        "{events:?}"
    );
    // What a metadata request should get, in JSON, decodes.
    let line = br#"{"type":"ADDED","object":{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":{"name":"a","resourceVersion":"2"}}}
"#;
    let (url, _) = scripted("application/json", vec![line.to_vec()]).await;
    let events: Vec<_> = metadata(&url)
        .watch(&WatchOptions::new("1"))
        .await
        .unwrap()
        .collect()
        .await;
    assert_eq!(metadata_names(&events), ["ADDED a"]);
}

/// Over HTTP: metadata-only lists and streaming lists in protobuf read what the JSON ones
/// read: each object's metadata (labels, annotations, owner references), nothing else.
#[tokio::test]
async fn metadata_in_protobuf_should_read_as_the_json_metadata() {
    let (_env, api) = env_with_configmaps(1000, 3).await;
    api.patch(
        "c1",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"annotations": {"note": "x"}, "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "c0", "uid": "5a1c6f1e-0000-4000-8000-000000000000"}
        ]}})),
    )
    .await
    .unwrap();
    let meta: Api<PartialObjectMeta<ConfigMap>> =
        Api::namespaced(api.clone().into_client(), "default");
    let full = api
        .list(&kube::api::ListParams::default())
        .await
        .unwrap()
        .items;
    for drop in [true, false] {
        let lw = |format| {
            ApiListerWatcher::new(meta.clone())
                .wire_format(format)
                .drop_managed_fields(drop)
        };
        let pb = lw(WireFormat::Protobuf)
            .list(&ListOptions::default())
            .await
            .unwrap();
        let js = lw(WireFormat::Json)
            .list(&ListOptions::default())
            .await
            .unwrap();
        assert_eq!(pb.items.len(), 3);
        for ((p, j), f) in pb.items.iter().zip(&js.items).zip(&full) {
            let mut want = f.metadata.clone();
            if drop {
                want.managed_fields = None;
            }
            assert_eq!(p.metadata, want);
            assert_eq!(j.metadata, want);
            // The JSON form names its type; protobuf items carry none (as client-go reads them).
            assert_eq!(
                j.types.as_ref().map(|t| t.kind.as_str()),
                Some("PartialObjectMetadata")
            );
            assert!(p.types.is_none());
        }
        // A streaming list in protobuf.
        let mut options = WatchOptions::new("");
        options.resource_version_match = Some(VersionMatch::NotOlderThan);
        options.allow_watch_bookmarks = true;
        options.send_initial_events = true;
        let mut stream = lw(WireFormat::Protobuf).watch(&options).await.unwrap();
        let mut events = Vec::new();
        for _ in 0..4 {
            events.push(stream.next().await.unwrap());
        }
        assert_eq!(
            metadata_names(&events),
            ["ADDED c0", "ADDED c1", "ADDED c2", "BOOKMARK end=true"]
        );
        let Ok(WatchEvent::Added(c1)) = &events[1] else {
            unreachable!()
        };
        assert_eq!(c1.metadata.annotations.as_ref().unwrap()["note"], "x");
        assert_eq!(c1.metadata.owner_references.as_ref().unwrap()[0].name, "c0");
    }
}
