//! `null`s in built-in objects through `kube::Client`: kube-apiserver decodes every built-in
//! object into its Go types and encodes it again, so a `null` is dropped (a pointer, or a field
//! with `omitempty`), becomes a zero value (`{}` for a struct value, `""` for a string without
//! `omitempty`) or stays (a list without `omitempty`), on every write: create, update, merge
//! and JSON patch, and server-side apply (a strategic merge patch never leaves one). Custom resources keep theirs.

use kcr_testenv::TestEnv;
use kube::Client;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

/// Sends `body` as JSON (a merge patch for `PATCH`) and returns the answer, which must be a
/// success.
async fn send(client: &Client, method: http::Method, path: &str, body: &Value) -> Value {
    let content_type = if method == http::Method::PATCH {
        "application/merge-patch+json"
    } else {
        "application/json"
    };
    send_as(client, method, path, content_type, body).await
}

async fn send_as(
    client: &Client,
    method: http::Method,
    path: &str,
    content_type: &str,
    body: &Value,
) -> Value {
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", content_type)
        .body(serde_json::to_vec(body).unwrap())
        .unwrap();
    let text = client.request_text(req).await.unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A Deployment with `null`s where `kubectl create --dry-run -o json` and hand-written
/// manifests put them.
fn deployment_with_nulls() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": null, "creationTimestamp": null},
        "spec": {
            "replicas": null,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": null,
            "template": {
                "metadata": {"labels": {"app": "web"}, "creationTimestamp": null},
                "spec": {"containers": [{
                    "name": "app", "image": "nginx:1.27",
                    "resources": null, "command": null, "securityContext": null
                }]}
            }
        },
        "status": null
    })
}

/// What kube-apiserver makes of the nulls of [`deployment_with_nulls`].
fn assert_nulls_normalized(d: &Value) {
    assert!(d.pointer("/metadata/labels").is_none(), "{d:#}");
    assert!(
        d.pointer("/metadata/creationTimestamp")
            .unwrap()
            .is_string()
    );
    // A pointer set to null is absent, then defaulted.
    assert_eq!(d.pointer("/spec/replicas"), Some(&json!(1)), "{d:#}");
    let template = d.pointer("/spec/template/metadata").unwrap();
    assert_eq!(template, &json!({"labels": {"app": "web"}}), "{d:#}");
    let container = d.pointer("/spec/template/spec/containers/0").unwrap();
    // A struct value set to null is its zero: `{}`.
    assert_eq!(container["resources"], json!({}), "{d:#}");
    assert!(container.get("command").is_none(), "{d:#}");
    assert!(container.get("securityContext").is_none(), "{d:#}");
    assert_eq!(
        d.pointer("/spec/strategy/type"),
        Some(&json!("RollingUpdate"))
    );
}

#[tokio::test]
async fn nulls_in_a_created_deployment_should_be_dropped_or_zero_values() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client();
    let created = send(
        &client,
        http::Method::POST,
        DEPLOYMENTS,
        &deployment_with_nulls(),
    )
    .await;
    assert_nulls_normalized(&created);
    let got = send(
        &client,
        http::Method::GET,
        &format!("{DEPLOYMENTS}/web"),
        &json!({}),
    )
    .await;
    assert_nulls_normalized(&got);
    // What kube-apiserver stores has no null left to drop: the same object written back is
    // no change.
    let mut again = got.clone();
    again.as_object_mut().unwrap().remove("status");
    let updated = send(
        &client,
        http::Method::PUT,
        &format!("{DEPLOYMENTS}/web"),
        &again,
    )
    .await;
    assert_eq!(
        updated["metadata"]["resourceVersion"],
        got["metadata"]["resourceVersion"]
    );
}

#[tokio::test]
async fn nulls_in_an_updated_deployment_should_be_dropped_or_zero_values() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client();
    let mut d = deployment_with_nulls();
    d["spec"]["replicas"] = json!(2);
    let created = send(&client, http::Method::POST, DEPLOYMENTS, &d).await;
    let mut update = deployment_with_nulls();
    update["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"].clone();
    let updated = send(
        &client,
        http::Method::PUT,
        &format!("{DEPLOYMENTS}/web"),
        &update,
    )
    .await;
    assert_nulls_normalized(&updated);
}

#[tokio::test]
async fn nulls_left_by_a_merge_patch_should_be_dropped_or_zero_values() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client();
    let mut d = deployment_with_nulls();
    d["spec"]["template"]["spec"]["containers"][0]["resources"] = json!({"limits": {"cpu": "1"}});
    send(&client, http::Method::POST, DEPLOYMENTS, &d).await;
    // A merge patch replaces a list whole: the nulls inside its items stay for the decoder.
    let patch = json!({"spec": {"template": {"spec": {"containers": [{
        "name": "app", "image": "nginx:1.28", "resources": null, "command": null,
        "ports": [{"containerPort": 80, "name": null}]
    }]}}}});
    let patched = send(
        &client,
        http::Method::PATCH,
        &format!("{DEPLOYMENTS}/web"),
        &patch,
    )
    .await;
    let container = patched.pointer("/spec/template/spec/containers/0").unwrap();
    assert_eq!(container["image"], "nginx:1.28");
    assert_eq!(container["resources"], json!({}), "{patched:#}");
    assert!(container.get("command").is_none(), "{patched:#}");
    assert_eq!(
        container["ports"],
        json!([{"containerPort": 80, "protocol": "TCP"}]),
        "{patched:#}"
    );
}

#[tokio::test]
async fn a_null_added_by_a_json_patch_should_be_dropped_then_defaulted() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client();
    let mut d = deployment_with_nulls();
    d["spec"]["replicas"] = json!(3);
    send(&client, http::Method::POST, DEPLOYMENTS, &d).await;
    let patched = send_as(
        &client,
        http::Method::PATCH,
        &format!("{DEPLOYMENTS}/web"),
        "application/json-patch+json",
        &json!([
            {"op": "replace", "path": "/spec/replicas", "value": null},
            {"op": "add", "path": "/metadata/annotations", "value": null},
            {"op": "add", "path": "/spec/template/spec/containers/0/command", "value": null},
            {"op": "add", "path": "/spec/template/spec/containers/0/resources", "value": null}
        ]),
    )
    .await;
    assert!(
        patched.pointer("/metadata/annotations").is_none(),
        "{patched:#}"
    );
    assert!(
        patched
            .pointer("/spec/template/spec/containers/0/command")
            .is_none(),
        "{patched:#}"
    );
    assert_eq!(
        patched.pointer("/spec/replicas"),
        Some(&json!(1)),
        "{patched:#}"
    );
    assert_eq!(
        patched.pointer("/spec/template/spec/containers/0/resources"),
        Some(&json!({})),
        "{patched:#}"
    );
}

#[tokio::test]
async fn nulls_in_an_applied_configuration_should_be_dropped_or_zero_values() {
    let env = TestEnv::start().await.unwrap();
    let api: Api<DynamicObject> = Api::namespaced_with(
        env.client(),
        "default",
        &ApiResource::from_gvk(&GroupVersionKind::gvk("apps", "v1", "Deployment")),
    );
    let params = PatchParams::apply("nulls");
    // Creates, then updates with the same configuration.
    for _ in 0..2 {
        let applied = api
            .patch("web", &params, &Patch::Apply(deployment_with_nulls()))
            .await
            .unwrap();
        assert_nulls_normalized(&serde_json::to_value(applied).unwrap());
    }
}

#[tokio::test]
async fn a_null_string_without_omitempty_should_become_empty_and_a_list_stay_null() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client();
    // core/v1 Event: `reportingComponent` and `reportingInstance` have no `omitempty`.
    let event = send(
        &client,
        http::Method::POST,
        "/api/v1/namespaces/default/events",
        &json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e1"},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
            "reason": "Started", "message": "m", "type": "Normal",
            "reportingComponent": null, "reportingInstance": null, "source": null
        }),
    )
    .await;
    assert_eq!(event["reportingComponent"], "", "{event:#}");
    assert_eq!(event["reportingInstance"], "", "{event:#}");
    assert_eq!(event["source"], json!({}), "{event:#}");
    // rbac/v1 ClusterRole: `rules` has no `omitempty`; `aggregationRule` is a pointer.
    let role = send(
        &client,
        http::Method::POST,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        &json!({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "nulls"}, "rules": null, "aggregationRule": null
        }),
    )
    .await;
    assert_eq!(role.get("rules"), Some(&Value::Null), "{role:#}");
    assert!(role.get("aggregationRule").is_none(), "{role:#}");
}

#[tokio::test]
async fn nulls_in_a_custom_resource_should_be_kept() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client();
    send(
        &client,
        http::Method::POST,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        &json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {
                    "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                        "type": "object", "properties": {"size": {"type": "integer", "nullable": true}}
                    }}}
                }}]
            }
        }),
    )
    .await;
    let created = send(
        &client,
        http::Method::POST,
        "/apis/example.com/v1/namespaces/default/widgets",
        &json!({
            "apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w"}, "spec": {"size": null}
        }),
    )
    .await;
    assert_eq!(
        created.pointer("/spec/size"),
        Some(&Value::Null),
        "{created:#}"
    );
}

/// Empty lists and maps, and absent fields, as kube-apiserver answers them for several kinds:
/// decoding into the Go types drops an empty `omitempty` list or map, storing as protobuf turns
/// an empty list without `omitempty` into `null`, and encoding writes a struct held by value,
/// or a number without `omitempty`, when it is absent. The same on create, on a dry run, on
/// apply and on read.
#[tokio::test]
async fn empty_lists_maps_and_absent_fields_should_be_written_as_go_and_protobuf_make_them() {
    let env = TestEnv::start().await.unwrap();
    let client = env.client();
    let roles = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "empty-rules", "labels": {}, "finalizers": []}, "rules": []});
    let dry = send(
        &client,
        http::Method::POST,
        &format!("{roles}?dryRun=All"),
        &role,
    )
    .await;
    assert_eq!(dry["rules"], Value::Null, "{dry:#}");
    assert!(dry.get("rules").is_some(), "{dry:#}");
    let created = send(&client, http::Method::POST, roles, &role).await;
    assert!(
        created.get("rules").is_some_and(Value::is_null),
        "{created:#}"
    );
    assert!(created.pointer("/metadata/labels").is_none(), "{created:#}");
    assert!(
        created.pointer("/metadata/finalizers").is_none(),
        "{created:#}"
    );
    let got = send(
        &client,
        http::Method::GET,
        &format!("{roles}/empty-rules"),
        &json!({}),
    )
    .await;
    assert!(got.get("rules").is_some_and(Value::is_null), "{got:#}");

    // An omitempty map and list are dropped, and so is the same on a Service's spec.
    let cm = send(
        &client,
        http::Method::POST,
        "/api/v1/namespaces/default/configmaps",
        &json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "empty", "annotations": {}}, "data": {}, "binaryData": {}}),
    )
    .await;
    assert!(
        cm.get("data").is_none() && cm.get("binaryData").is_none(),
        "{cm:#}"
    );
    assert!(cm.pointer("/metadata/annotations").is_none(), "{cm:#}");
    let svc = send(
        &client,
        http::Method::POST,
        "/api/v1/namespaces/default/services",
        &json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "empty"},
            "spec": {"ports": [{"port": 80}], "externalIPs": [], "selector": {}}}),
    )
    .await;
    assert!(svc.pointer("/spec/externalIPs").is_none(), "{svc:#}");
    assert!(svc.pointer("/spec/selector").is_none(), "{svc:#}");

    // A CronJob's job template keeps its metadata struct, written `{}`, and an empty status.
    let cron = send(
        &client,
        http::Method::POST,
        "/apis/batch/v1/namespaces/default/cronjobs",
        &json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
            "spec": {"schedule": "@hourly", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}}),
    )
    .await;
    assert_eq!(
        cron.pointer("/spec/jobTemplate/metadata"),
        Some(&json!({})),
        "{cron:#}"
    );
    assert_eq!(
        cron.pointer("/spec/jobTemplate/spec/template/spec/containers/0/resources"),
        Some(&json!({})),
        "{cron:#}"
    );

    // Applied, the empty list is owned by the applier and still stored as `null`.
    let applied = send_as(
        &client,
        http::Method::PATCH,
        &format!("{roles}/applied?fieldManager=a"),
        "application/apply-patch+yaml",
        &json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "applied"}, "rules": []}),
    )
    .await;
    assert!(
        applied.get("rules").is_some_and(Value::is_null),
        "{applied:#}"
    );
    assert_eq!(
        applied.pointer("/metadata/managedFields/0/fieldsV1"),
        Some(&json!({"f:rules": {}})),
        "{applied:#}"
    );
}
