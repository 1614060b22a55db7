//! Field management, server-side apply and strategic merge patch through `kube::Client`, as
//! kube-apiserver v1.36 answers them (the expected `managedFields` are those the conformance
//! corpus recorded for the same requests).

use crate::common;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kcr_testenv::TestEnv;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

fn applied_cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": data})
}

/// `(manager, operation, subresource, fieldsV1)` of each entry, sorted by manager (entries
/// written in different seconds sort by time on the server).
fn entries_by_manager(meta: &kube::api::ObjectMeta) -> Vec<(String, String, String, Value)> {
    let mut e = entries(meta);
    e.sort_by(|a, b| a.0.cmp(&b.0));
    e
}

/// `(manager, operation, subresource, fieldsV1)` of each entry, in the server's order.
fn entries(meta: &kube::api::ObjectMeta) -> Vec<(String, String, String, Value)> {
    meta.managed_fields
        .iter()
        .flatten()
        .map(|e| {
            (
                e.manager.clone().unwrap_or_default(),
                e.operation.clone().unwrap_or_default(),
                e.subresource.clone().unwrap_or_default(),
                e.fields_v1.as_ref().map_or(Value::Null, |f| f.0.clone()),
            )
        })
        .collect()
}

fn entry(manager: &str, operation: &str, fields: Value) -> (String, String, String, Value) {
    (manager.into(), operation.into(), String::new(), fields)
}

fn api_error(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other}"),
    }
}

#[tokio::test]
async fn two_appliers_should_share_equal_values_and_conflict_on_different_ones() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let a = PatchParams::apply("mgr-a");
    let b = PatchParams::apply("mgr-b");
    api.patch(
        "applied",
        &a,
        &Patch::Apply(applied_cm(json!({"k": "v", "j": "1"}))),
    )
    .await
    .unwrap();
    let shared = api
        .patch("applied", &b, &Patch::Apply(applied_cm(json!({"k": "v"}))))
        .await
        .unwrap();
    assert_eq!(
        entries(&shared.metadata),
        [
            entry("mgr-b", "Apply", json!({"f:data": {"f:k": {}}})),
            entry("mgr-a", "Apply", json!({"f:data": {"f:j": {}, "f:k": {}}})),
        ],
        "both own k; mgr-b's apply changed nothing, so its entry has no time and sorts first"
    );
    let e = api_error(
        api.patch(
            "applied",
            &b,
            &Patch::Apply(applied_cm(json!({"k": "other"}))),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(e.code, 409);
    assert_eq!(e.reason, "Conflict");
    assert_eq!(
        e.message,
        "Apply failed with 1 conflict: conflict with \"mgr-a\": .data.k"
    );
    assert_eq!(
        api.get("applied").await.unwrap().data.unwrap()["k"],
        "v",
        "a refused apply changes nothing"
    );
}

#[tokio::test]
async fn force_should_take_the_conflicting_fields_from_the_other_applier() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    api.patch(
        "applied",
        &PatchParams::apply("mgr-a"),
        &Patch::Apply(applied_cm(json!({"k": "v", "j": "1"}))),
    )
    .await
    .unwrap();
    let forced = api
        .patch(
            "applied",
            &PatchParams::apply("mgr-b").force(),
            &Patch::Apply(applied_cm(json!({"k": "other"}))),
        )
        .await
        .unwrap();
    assert_eq!(forced.data.unwrap()["k"], "other");
    assert_eq!(
        entries(&forced.metadata),
        [
            entry("mgr-a", "Apply", json!({"f:data": {"f:j": {}}})),
            entry("mgr-b", "Apply", json!({"f:data": {"f:k": {}}})),
        ]
    );
}

#[tokio::test]
async fn fields_an_applier_stops_applying_should_go_unless_another_manager_owns_them() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let a = PatchParams::apply("mgr-a");
    api.patch(
        "applied",
        &a,
        &Patch::Apply(applied_cm(json!({"k": "v", "s": "shared", "gone": "1"}))),
    )
    .await
    .unwrap();
    api.patch(
        "applied",
        &PatchParams::apply("mgr-b"),
        &Patch::Apply(applied_cm(json!({"s": "shared"}))),
    )
    .await
    .unwrap();
    let after = api
        .patch("applied", &a, &Patch::Apply(applied_cm(json!({"k": "v"}))))
        .await
        .unwrap();
    assert_eq!(
        after.data.unwrap(),
        [
            ("k".to_string(), "v".to_string()),
            ("s".into(), "shared".into())
        ]
        .into()
    );
    assert_eq!(
        entries(&after.metadata),
        [
            entry("mgr-b", "Apply", json!({"f:data": {"f:s": {}}})),
            entry("mgr-a", "Apply", json!({"f:data": {"f:k": {}}})),
        ],
        "mgr-b's apply changed nothing, so its entry has no time and sorts first"
    );
    assert!(after.metadata.managed_fields.unwrap()[0].time.is_none());
}

#[tokio::test]
async fn an_update_should_take_a_field_from_the_applier_and_the_next_apply_should_conflict() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let a = PatchParams::apply("mgr-a");
    api.patch("applied", &a, &Patch::Apply(applied_cm(json!({"k": "v"}))))
        .await
        .unwrap();
    let edited = api
        .patch(
            "applied",
            &PatchParams {
                field_manager: Some("editor".into()),
                ..PatchParams::default()
            },
            &Patch::Merge(json!({"data": {"k": "edited"}})),
        )
        .await
        .unwrap();
    assert_eq!(
        entries(&edited.metadata),
        [entry("editor", "Update", json!({"f:data": {"f:k": {}}}))],
        "the applier owns nothing any more, so its entry is gone"
    );
    let e = api_error(
        api.patch("applied", &a, &Patch::Apply(applied_cm(json!({"k": "v"}))))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        e.message,
        "Apply failed with 1 conflict: conflict with \"editor\" using v1: .data.k"
    );
}

#[tokio::test]
async fn managed_fields_should_follow_create_replace_and_patch_per_manager() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client_with_user_agent("my-tool/1.2 (linux)").unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let mut cm: ConfigMap = serde_json::from_value(json!({
        "metadata": {"name": "cm", "labels": {"app": "x"}}, "data": {"a": "1", "b": "2"}
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &cm).await.unwrap();
    assert_eq!(
        entries(&created.metadata),
        [entry(
            "my-tool",
            "Update",
            json!({"f:data": {".": {}, "f:a": {}, "f:b": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}})
        )],
        "the default manager is the user agent up to its first '/'"
    );
    cm = created;
    cm.data
        .as_mut()
        .unwrap()
        .insert("a".into(), "changed".into());
    let pp = PostParams {
        field_manager: Some("replacer".into()),
        ..PostParams::default()
    };
    let replaced = api.replace("cm", &pp, &cm).await.unwrap();
    assert_eq!(
        entries_by_manager(&replaced.metadata),
        [
            entry(
                "my-tool",
                "Update",
                json!({"f:data": {".": {}, "f:b": {}}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}})
            ),
            entry("replacer", "Update", json!({"f:data": {"f:a": {}}})),
        ]
    );
    let unchanged = api.replace("cm", &pp, &replaced).await.unwrap();
    assert_eq!(
        unchanged.metadata.resource_version, replaced.metadata.resource_version,
        "a write that changes nothing changes no entry either"
    );
    let patched = api
        .patch(
            "cm",
            &PatchParams {
                field_manager: Some("patcher".into()),
                ..PatchParams::default()
            },
            &Patch::Merge(json!({"data": {"b": null, "c": "3"}})),
        )
        .await
        .unwrap();
    assert_eq!(
        entries_by_manager(&patched.metadata),
        [
            entry(
                "my-tool",
                "Update",
                json!({"f:data": {}, "f:metadata": {"f:labels": {".": {}, "f:app": {}}}})
            ),
            entry("patcher", "Update", json!({"f:data": {"f:c": {}}})),
            entry("replacer", "Update", json!({"f:data": {"f:a": {}}})),
        ]
    );
}

#[tokio::test]
async fn apply_with_a_yaml_body_should_create_the_object() {
    let env = TestEnv::start().await.unwrap();
    let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: v\n";
    let r = common::raw(
        env.addr(),
        "PATCH",
        "/api/v1/namespaces/default/configmaps/applied?fieldManager=mgr-a",
        &[("Content-Type", "application/apply-patch+yaml")],
        yaml.as_bytes(),
    )
    .await;
    assert_eq!(r.status, 201);
    let api: Api<ConfigMap> = Api::namespaced(env.client(), "default");
    let cm = api.get("applied").await.unwrap();
    assert_eq!(cm.data.unwrap()["k"], "v");
    assert_eq!(
        entries(&cm.metadata),
        [entry("mgr-a", "Apply", json!({"f:data": {"f:k": {}}}))]
    );
    let r = common::raw(
        env.addr(),
        "PATCH",
        "/api/v1/namespaces/default/configmaps/applied",
        &[("Content-Type", "application/apply-patch+yaml")],
        yaml.as_bytes(),
    )
    .await;
    assert_eq!(r.status, 422, "apply needs a field manager");
    assert_eq!(r.json()["details"]["causes"][0]["field"], "fieldManager");
}

fn deployment(containers: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}}}})
}

fn images(d: &Deployment) -> Vec<(String, String)> {
    d.spec
        .template
        .spec
        .as_ref()
        .map(|p| {
            p.containers
                .iter()
                .map(|c| (c.name.clone(), c.image.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_strategic_merge_of_containers_should_keep_the_other_containers() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Deployment> = Api::namespaced(env.client(), "default");
    let d: Deployment = serde_json::from_value(deployment(json!([
        {"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]},
        {"name": "b", "image": "b:1"}
    ])))
    .unwrap();
    api.create(&PostParams::default(), &d).await.unwrap();
    let pp = PatchParams::default();
    let patch = |containers: Value| {
        Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": containers}}}}))
    };
    let out = api
        .patch("web", &pp, &patch(json!([{"name": "a", "image": "a:2"}])))
        .await
        .unwrap();
    assert_eq!(
        images(&out),
        [("a".into(), "a:2".into()), ("b".into(), "b:1".into())]
    );
    let out = api
        .patch(
            "web",
            &pp,
            &patch(json!([{"name": "a", "env": [{"name": "Y", "value": "22"}, {"name": "Z", "value": "3"}]}])),
        )
        .await
        .unwrap();
    let env_vars: Vec<(String, String)> = out.spec.template.spec.unwrap().containers[0]
        .env
        .iter()
        .flatten()
        .map(|e| (e.name.clone(), e.value.clone().unwrap_or_default()))
        .collect();
    assert_eq!(
        env_vars,
        [
            ("X".into(), "1".into()),
            ("Y".into(), "22".into()),
            ("Z".into(), "3".into())
        ]
    );
    let out = api
        .patch("web", &pp, &patch(json!([{"name": "c", "image": "c:1"}])))
        .await
        .unwrap();
    assert_eq!(
        images(&out),
        [
            ("c".into(), "c:1".into()),
            ("a".into(), "a:2".into()),
            ("b".into(), "b:1".into())
        ],
        "a new container comes first, as kube-apiserver orders it"
    );
    let out = api
        .patch(
            "web",
            &pp,
            &patch(json!([{"name": "b", "$patch": "delete"}])),
        )
        .await
        .unwrap();
    assert_eq!(
        images(&out),
        [("c".into(), "c:1".into()), ("a".into(), "a:2".into())]
    );
    // A JSON merge patch replaces the whole list.
    let out = api
        .patch(
            "web",
            &pp,
            &Patch::Merge(json!({"spec": {"template": {"spec": {"containers": [{"name": "z", "image": "z:1"}]}}}})),
        )
        .await
        .unwrap();
    assert_eq!(images(&out), [("z".into(), "z:1".into())]);
}

#[tokio::test]
async fn apply_to_the_status_subresource_should_record_it_and_leave_the_spec() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Deployment> = Api::namespaced(env.client(), "default");
    let created = api
        .patch(
            "web",
            &PatchParams::apply("mgr-a"),
            &Patch::Apply(deployment(json!([{"name": "app", "image": "nginx:1.27"}]))),
        )
        .await
        .unwrap();
    assert_eq!(
        entries(&created.metadata),
        [entry(
            "mgr-a",
            "Apply",
            json!({"f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {"f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {"f:containers": {"k:{\"name\":\"app\"}": {".": {}, "f:image": {}, "f:name": {}}}}}}})
        )],
        "the selector is atomic and containers are keyed by name"
    );
    let status = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"replicas": 5}, "status": {"replicas": 1, "readyReplicas": 1}});
    let out = api
        .patch_status(
            "web",
            &PatchParams::apply("status-mgr"),
            &Patch::Apply(status),
        )
        .await
        .unwrap();
    assert_eq!(out.spec.replicas, Some(1), "/status leaves the spec");
    assert_eq!(out.status.unwrap().ready_replicas, Some(1));
    let last = entries_by_manager(&out.metadata).pop().unwrap();
    assert_eq!(
        last,
        (
            "status-mgr".into(),
            "Apply".into(),
            "status".into(),
            json!({"f:status": {"f:readyReplicas": {}, "f:replicas": {}}})
        )
    );
}

#[tokio::test]
async fn apply_to_a_custom_resource_should_merge_its_list_maps_by_key() {
    let env = TestEnv::start().await.unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(env.client());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "integer"},
                        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                            "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}}}},
                    "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}}}]}
    }))
    .unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    let gvk = GroupVersionKind::gvk("example.com", "v1", "Widget");
    let api: Api<DynamicObject> =
        Api::namespaced_with(env.client(), "default", &ApiResource::from_gvk(&gvk));
    let widget = |spec: Value| {
        Patch::Apply(
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": spec}),
        )
    };
    api.patch(
        "w1",
        &PatchParams::apply("mgr-a"),
        &widget(json!({"size": 3, "ports": [{"name": "http", "port": 80}]})),
    )
    .await
    .unwrap();
    let both = api
        .patch(
            "w1",
            &PatchParams::apply("mgr-b"),
            &widget(json!({"ports": [{"name": "https", "port": 443}]})),
        )
        .await
        .unwrap();
    assert_eq!(
        both.data["spec"]["ports"],
        json!([{"name": "http", "port": 80}, {"name": "https", "port": 443}])
    );
    assert_eq!(
        entries(&both.metadata),
        [
            entry(
                "mgr-a",
                "Apply",
                json!({"f:spec": {"f:ports": {"k:{\"name\":\"http\"}": {".": {}, "f:name": {}, "f:port": {}}}, "f:size": {}}})
            ),
            entry(
                "mgr-b",
                "Apply",
                json!({"f:spec": {"f:ports": {"k:{\"name\":\"https\"}": {".": {}, "f:name": {}, "f:port": {}}}}})
            ),
        ]
    );
    let e = api_error(
        api.patch(
            "w1",
            &PatchParams::apply("mgr-b"),
            &widget(json!({"size": 4})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(
        e.message,
        "Apply failed with 1 conflict: conflict with \"mgr-a\": .spec.size"
    );
    let status = api
        .patch_status(
            "w1",
            &PatchParams::apply("status-mgr"),
            &Patch::Apply(json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "status": {"ready": true}})),
        )
        .await
        .unwrap();
    assert_eq!(status.data["status"], json!({"ready": true}));
    assert_eq!(
        entries_by_manager(&status.metadata).pop().unwrap(),
        (
            "status-mgr".into(),
            "Apply".into(),
            "status".into(),
            json!({"f:status": {"f:ready": {}}})
        )
    );
    let e = api_error(
        api.patch(
            "w1",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"size": 2}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(
        e.code, 415,
        "custom resources take no strategic merge patch"
    );
}

#[tokio::test]
async fn a_scale_should_be_recorded_as_a_write_of_the_scale_subresource() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<Deployment> = Api::namespaced(env.client(), "default");
    let d: Deployment =
        serde_json::from_value(deployment(json!([{"name": "a", "image": "a:1"}]))).unwrap();
    api.create(&PostParams::default(), &d).await.unwrap();
    let pp = PatchParams {
        field_manager: Some("scaler".into()),
        ..PatchParams::default()
    };
    api.patch_scale("web", &pp, &Patch::Merge(json!({"spec": {"replicas": 3}})))
        .await
        .unwrap();
    let scaled = api.get("web").await.unwrap();
    assert_eq!(scaled.spec.replicas, Some(3));
    let mine: Vec<_> = entries(&scaled.metadata)
        .into_iter()
        .filter(|e| e.0 == "scaler")
        .collect();
    assert_eq!(
        mine,
        [(
            "scaler".into(),
            "Update".into(),
            "scale".into(),
            json!({"f:spec": {"f:replicas": {}}})
        )]
    );
}
