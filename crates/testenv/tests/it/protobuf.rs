//! Protobuf answers over real HTTP (`kube::Client`): objects, list pages and watch streams of
//! the kinds kcr-protobuf has tables for, as kube-apiserver writes them; JSON for the others.

use crate::common;

use common::configmap;
use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;
use kcr_protobuf::{DecodeOptions, list, object, watch};
use kcr_testenv::TestEnv;
use kube::api::{Api, ListParams, PostParams};

/// What client-go asks for by default.
const CLIENT_GO: &str = "application/vnd.kubernetes.protobuf, application/json";

async fn send(client: &kube::Client, path: &str, accept: &str) -> http::Response<bytes::Bytes> {
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, accept)
        .body(Vec::new())
        .unwrap();
    let response = client
        .send(request.map(kube::client::Body::from))
        .await
        .unwrap();
    let (parts, body) = response.into_parts();
    let body = http_body_util::BodyExt::collect(body)
        .await
        .unwrap()
        .to_bytes();
    http::Response::from_parts(parts, body)
}

fn content_type(r: &http::Response<bytes::Bytes>) -> &str {
    r.headers()[http::header::CONTENT_TYPE].to_str().unwrap()
}

async fn env_with_configmaps(n: usize) -> (TestEnv, Api<ConfigMap>) {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    for i in 0..n {
        api.create(
            &PostParams::default(),
            &configmap(&format!("c{i}"), &[("app", "web")]),
        )
        .await
        .unwrap();
    }
    (env, api)
}

#[tokio::test]
async fn a_get_should_answer_protobuf_to_a_client_that_asks_for_it_first() {
    let (env, api) = env_with_configmaps(1).await;
    let r = send(
        &env.client(),
        "/api/v1/namespaces/default/configmaps/c0",
        CLIENT_GO,
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(content_type(&r), "application/vnd.kubernetes.protobuf");
    let u = kcr_protobuf::envelope::unwrap(r.body()).unwrap();
    assert_eq!((&*u.api_version, &*u.kind), ("v1", "ConfigMap"));
    let decoded: ConfigMap = object::decode(r.body(), DecodeOptions::default()).unwrap();
    let as_json = api.get("c0").await.unwrap();
    assert_eq!(decoded, as_json);
    assert!(
        decoded.metadata.managed_fields.is_some(),
        "the server writes managedFields"
    );
    // JSON first: JSON.
    let r = send(
        &env.client(),
        "/api/v1/namespaces/default/configmaps/c0",
        "application/json, application/vnd.kubernetes.protobuf",
    )
    .await;
    assert_eq!(content_type(&r), "application/json");
}

#[tokio::test]
async fn list_pages_should_answer_protobuf_with_their_continue_tokens() {
    let (env, api) = env_with_configmaps(5).await;
    let expected = api.list(&ListParams::default()).await.unwrap();
    let mut items = Vec::new();
    let mut path = "/api/v1/namespaces/default/configmaps?limit=2".to_owned();
    let mut pages = 0;
    loop {
        let r = send(&env.client(), &path, CLIENT_GO).await;
        assert_eq!(content_type(&r), "application/vnd.kubernetes.protobuf");
        let u = kcr_protobuf::envelope::unwrap(r.body()).unwrap();
        assert_eq!((&*u.api_version, &*u.kind), ("v1", "ConfigMapList"));
        let page = list::decode::<ConfigMap>(r.body(), DecodeOptions::default()).unwrap();
        pages += 1;
        items.extend(page.items);
        if page.metadata.continue_token.is_empty() {
            assert_eq!(page.metadata.remaining_item_count, None);
            break;
        }
        assert_eq!(page.metadata.remaining_item_count, Some(5 - 2 * pages));
        path = format!(
            "/api/v1/namespaces/default/configmaps?limit=2&continue={}",
            page.metadata.continue_token
        );
    }
    assert_eq!(pages, 3);
    assert_eq!(items, expected.items);
}

#[tokio::test]
async fn kinds_without_a_table_should_answer_json() {
    // Custom resources have no protobuf (kube-apiserver answers them in JSON, or 406 when
    // protobuf is all a client accepts); their definitions do, as on kube-apiserver.
    let env = TestEnv::start().await.unwrap();
    let crds: Api<kube::api::DynamicObject> = Api::all_with(
        env.client(),
        &kube::api::ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk(
                "apiextensions.k8s.io",
                "v1",
                "CustomResourceDefinition",
            ),
            "customresourcedefinitions",
        ),
    );
    let crd = serde_json::from_value(serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    }))
    .unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    let r = send(
        &env.client(),
        "/apis/example.com/v1/namespaces/default/widgets",
        CLIENT_GO,
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(content_type(&r), "application/json");
    let _: serde_json::Value = serde_json::from_slice(r.body()).unwrap();
    let r = send(
        &env.client(),
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        CLIENT_GO,
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(content_type(&r), kcr_protobuf::MEDIA_TYPE);
    let list = list::decode::<serde_json::Value>(r.body(), DecodeOptions::default()).unwrap();
    assert_eq!(list.items.len(), 1);
}

#[tokio::test]
async fn pods_and_deployments_should_answer_protobuf_as_their_json() {
    let env = TestEnv::start().await.unwrap();
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"containers": [{
            "name": "web", "image": "nginx:1.27",
            "ports": [{"containerPort": 80}],
            "resources": {"limits": {"cpu": "500m", "memory": "128Mi"}},
            "readinessProbe": {"httpGet": {"path": "/", "port": 80}},
            "securityContext": {"runAsNonRoot": true, "capabilities": {"drop": ["ALL"]}},
        }]},
    }))
    .unwrap();
    pods.create(&PostParams::default(), &pod).await.unwrap();
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(env.client(), "default");
    let deployment = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}],
                         "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                             {"weight": 1, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                              "labelSelector": {"matchLabels": {"app": "web"}}}}]}}},
            },
        },
    }))
    .unwrap();
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    let r = send(
        &env.client(),
        "/api/v1/namespaces/default/pods/web",
        CLIENT_GO,
    )
    .await;
    assert_eq!(content_type(&r), kcr_protobuf::MEDIA_TYPE);
    let decoded: Pod = object::decode(r.body(), DecodeOptions::default()).unwrap();
    assert_eq!(decoded, pods.get("web").await.unwrap());
    let r = send(
        &env.client(),
        "/apis/apps/v1/namespaces/default/deployments",
        CLIENT_GO,
    )
    .await;
    assert_eq!(content_type(&r), kcr_protobuf::MEDIA_TYPE);
    let list =
        list::decode::<k8s_openapi::api::apps::v1::Deployment>(r.body(), DecodeOptions::default())
            .unwrap();
    assert_eq!(
        list.items,
        deployments
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
    );
}

/// A watch response read frame by frame.
struct Frames {
    content_type: String,
    body: http_body_util::BodyDataStream<kube::client::Body>,
    reader: watch::FrameReader,
}

impl Frames {
    async fn open(client: &kube::Client, path: &str) -> Self {
        Self::open_as(client, path, CLIENT_GO).await
    }

    async fn open_as(client: &kube::Client, path: &str, accept: &str) -> Self {
        let request = http::Request::get(path)
            .header(http::header::ACCEPT, accept)
            .body(kube::client::Body::empty())
            .unwrap();
        let response = client.send(request).await.unwrap();
        let content_type = response.headers()[http::header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .to_owned();
        Self {
            content_type,
            body: http_body_util::BodyExt::into_data_stream(response.into_body()),
            reader: watch::FrameReader::new(1 << 20),
        }
    }

    async fn next(&mut self) -> bytes::Bytes {
        loop {
            if let Some(frame) = self.reader.next_frame().unwrap() {
                return frame;
            }
            let chunk = self.body.next().await.expect("the watch ended early");
            self.reader.push(&chunk.unwrap());
        }
    }
}

#[tokio::test]
async fn a_streaming_list_should_send_protobuf_frames_and_the_initial_events_end_bookmark() {
    let (env, api) = env_with_configmaps(3).await;
    let path = "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true\
                &resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=";
    let mut watch = Frames::open(&env.client(), path).await;
    assert_eq!(
        watch.content_type,
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    let mut frames = Vec::new();
    for _ in 0..4 {
        frames.push(watch.next().await);
    }
    // A change after the initial events.
    api.create(&PostParams::default(), &configmap("later", &[]))
        .await
        .unwrap();
    frames.push(watch.next().await);
    let events: Vec<_> = frames
        .iter()
        .map(|f| watch::decode_event(f).unwrap())
        .collect();
    let types: Vec<&str> = events.iter().map(|e| &*e.event_type).collect();
    assert_eq!(types, ["ADDED", "ADDED", "ADDED", "BOOKMARK", "ADDED"]);
    let names: Vec<String> = events
        .iter()
        .filter(|e| e.event_type == "ADDED")
        .map(|e| {
            let cm: ConfigMap = object::decode(e.object, DecodeOptions::default()).unwrap();
            cm.metadata.name.unwrap()
        })
        .collect();
    assert_eq!(names, ["c0", "c1", "c2", "later"]);
    let bookmark: ConfigMap = object::decode(events[3].object, DecodeOptions::default()).unwrap();
    assert_eq!(
        bookmark.metadata.annotations.unwrap()["k8s.io/initial-events-end"],
        "true"
    );
    assert!(bookmark.metadata.resource_version.is_some());
}

#[tokio::test]
async fn a_watch_from_a_compacted_version_should_end_with_a_410_status_frame() {
    let (env, _api, from) = common::env_past_its_history().await;
    let path = format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={from}");
    let frame = Frames::open(&env.client(), &path).await.next().await;
    let event = watch::decode_event(&frame).unwrap();
    assert_eq!(event.event_type, "ERROR");
    let status: Status = object::decode(event.object, DecodeOptions::default()).unwrap();
    assert_eq!(status.code, Some(410));
    assert_eq!(status.reason.as_deref(), Some("Expired"));
}

/// The `Status` of an error answer, checked to be protobuf (`k8s\0` + `Unknown` of `v1`
/// `Status`) under the protobuf media type.
fn protobuf_status(r: &http::Response<bytes::Bytes>) -> Status {
    assert_eq!(content_type(r), kcr_protobuf::MEDIA_TYPE);
    let u = kcr_protobuf::envelope::unwrap(r.body()).unwrap();
    assert_eq!((&*u.api_version, &*u.kind), ("v1", "Status"));
    object::decode(r.body(), DecodeOptions::default()).unwrap()
}

#[tokio::test]
async fn errors_should_answer_a_protobuf_status_to_a_client_that_asks_for_protobuf_first() {
    let (env, _) = env_with_configmaps(3).await;
    let client = env.client();
    // A kind with a table and one without: kube-apiserver negotiates the error's format, not
    // the kind's, so both answer their `Status` in protobuf, the same `Status` as in JSON.
    for path in [
        "/api/v1/namespaces/default/configmaps/missing",
        "/api/v1/namespaces/default/pods/missing",
        // An expired continue token: 410 Expired, on a list.
        "/api/v1/namespaces/default/configmaps?limit=1&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJjMFx1MDAwMCJ9",
    ] {
        let json = send(&client, path, "application/json").await;
        let r = send(&client, path, CLIENT_GO).await;
        assert!(r.status().is_client_error(), "{path}: {}", r.status());
        assert_eq!(r.status(), json.status(), "{path}");
        assert_eq!(content_type(&json), "application/json");
        let expected: Status = serde_json::from_slice(json.body()).unwrap();
        assert_eq!(protobuf_status(&r), expected, "{path}");
    }
    // A throttled request keeps its `Retry-After` header and details. Sent raw: kube's client
    // retries a 429 itself.
    env.faults()
        .fail_next(1, kcr_testenv::Failure::too_many_requests(7));
    let r = common::raw(
        env.addr(),
        "GET",
        "/api/v1/namespaces/default/configmaps",
        &[("Accept", CLIENT_GO)],
        b"",
    )
    .await;
    assert_eq!(r.status, 429);
    assert_eq!(r.header("retry-after"), Some("7"));
    assert_eq!(r.header("content-type"), Some(kcr_protobuf::MEDIA_TYPE));
    let status: Status = object::decode(&r.body, DecodeOptions::default()).unwrap();
    assert_eq!(status.code, Some(429));
    assert_eq!(status.details.and_then(|d| d.retry_after_seconds), Some(7));
}

#[tokio::test]
async fn errors_of_custom_resources_should_stay_json() {
    let env = TestEnv::start().await.unwrap();
    let crd = serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]
        }
    });
    let crds: Api<kube::api::DynamicObject> = Api::all_with(
        env.client(),
        &kube::api::ApiResource::from_gvk_with_plural(
            &kube::api::GroupVersionKind::gvk(
                "apiextensions.k8s.io",
                "v1",
                "CustomResourceDefinition",
            ),
            "customresourcedefinitions",
        ),
    );
    crds.create(
        &PostParams::default(),
        &serde_json::from_value(crd).unwrap(),
    )
    .await
    .unwrap();
    crds.get("widgets.example.com").await.unwrap();
    let r = send(
        &env.client(),
        "/apis/example.com/v1/namespaces/default/widgets/missing",
        CLIENT_GO,
    )
    .await;
    assert_eq!(r.status(), 404);
    assert_eq!(content_type(&r), "application/json");
    let status: Status = serde_json::from_slice(r.body()).unwrap();
    assert_eq!(status.reason.as_deref(), Some("NotFound"));
}

/// What client-go's metadata client asks for: protobuf as `PartialObjectMetadata(List)` first.
const METADATA_LIST: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
const METADATA: &str = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

#[tokio::test]
async fn metadata_only_requests_in_protobuf_should_answer_partial_object_metadata() {
    let (env, api) = env_with_configmaps(2).await;
    let as_json = api.list_metadata(&ListParams::default()).await.unwrap();
    // A list: a `meta.k8s.io/v1` `PartialObjectMetadataList`, each item the object's metadata.
    let r = send(
        &env.client(),
        "/api/v1/namespaces/default/configmaps",
        METADATA_LIST,
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(content_type(&r), "application/vnd.kubernetes.protobuf");
    let u = kcr_protobuf::envelope::unwrap(r.body()).unwrap();
    assert_eq!(
        (&*u.api_version, &*u.kind),
        ("meta.k8s.io/v1", "PartialObjectMetadataList")
    );
    let page = list::decode::<serde_json::Value>(r.body(), DecodeOptions::default()).unwrap();
    assert_eq!(page.items.len(), 2);
    for (item, expected) in page.items.iter().zip(&as_json.items) {
        assert_eq!(
            item["metadata"],
            serde_json::to_value(&expected.metadata).unwrap()
        );
        assert!(item.get("data").is_none());
    }
    // One object.
    let r = send(
        &env.client(),
        "/api/v1/namespaces/default/configmaps/c0",
        METADATA,
    )
    .await;
    assert_eq!(content_type(&r), "application/vnd.kubernetes.protobuf");
    let u = kcr_protobuf::envelope::unwrap(r.body()).unwrap();
    assert_eq!(
        (&*u.api_version, &*u.kind),
        ("meta.k8s.io/v1", "PartialObjectMetadata")
    );
    // A streaming list: frames of `PartialObjectMetadata`, bookmarks included.
    let path = "/api/v1/namespaces/default/configmaps?watch=true&sendInitialEvents=true\
                &resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=";
    let mut watch = Frames::open_as(&env.client(), path, METADATA).await;
    assert_eq!(
        watch.content_type,
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    let mut kinds = Vec::new();
    for _ in 0..3 {
        let frame = watch.next().await;
        let event = watch::decode_event(&frame).unwrap();
        let u = kcr_protobuf::envelope::unwrap(event.object).unwrap();
        kinds.push((event.event_type.into_owned(), u.kind.into_owned()));
    }
    assert_eq!(
        kinds,
        [
            ("ADDED".to_owned(), "PartialObjectMetadata".to_owned()),
            ("ADDED".to_owned(), "PartialObjectMetadata".to_owned()),
            ("BOOKMARK".to_owned(), "PartialObjectMetadata".to_owned()),
        ]
    );
    // JSON as PartialObjectMetadata first: JSON, as before.
    let r = send(
        &env.client(),
        "/api/v1/namespaces/default/configmaps",
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
    )
    .await;
    assert_eq!(content_type(&r), "application/json");
    // An error to a client asking for protobuf metadata comes in JSON (its first range that
    // needs no conversion).
    let r = send(
        &env.client(),
        "/api/v1/namespaces/default/configmaps/missing",
        METADATA,
    )
    .await;
    assert_eq!(r.status(), 404);
    assert_eq!(content_type(&r), "application/json");
}
