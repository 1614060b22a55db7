//! Update rules kube-apiserver applies to every kind (`ValidateObjectMetaUpdate` and the
//! handlers' identity checks), on kinds and verbs beyond the recorded cases.

use serde_json::{Value, json};

use crate::common::raw;

async fn create(addr: std::net::SocketAddr, path: &str, body: Value) -> Value {
    let r = raw(
        addr,
        "POST",
        path,
        &[("Content-Type", "application/json")],
        &serde_json::to_vec(&body).unwrap_or_default(),
    )
    .await;
    assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
    r.json()
}

async fn patch(
    addr: std::net::SocketAddr,
    path: &str,
    content_type: &str,
    body: Value,
) -> (u16, Value) {
    let r = raw(
        addr,
        "PATCH",
        path,
        &[("Content-Type", content_type)],
        &serde_json::to_vec(&body).unwrap_or_default(),
    )
    .await;
    (r.status, r.json())
}

fn causes(status: &Value) -> Vec<(String, String)> {
    status["details"]["causes"]
        .as_array()
        .map(|c| {
            c.iter()
                .map(|c| {
                    (
                        c["field"].as_str().unwrap_or_default().to_owned(),
                        c["message"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_patch_changing_the_uid_of_a_secret_should_be_refused_as_immutable_twice() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/secrets";
    create(
        addr,
        path,
        json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}}),
    )
    .await;
    let uid = "6f0e7b1c-0000-4000-8000-000000000002";
    let (status, body) = patch(
        addr,
        &format!("{path}/s1"),
        "application/merge-patch+json",
        json!({"metadata": {"uid": uid}}),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(
        body["message"],
        format!(
            "Secret \"s1\" is invalid: metadata.uid: Invalid value: \"{uid}\": field is immutable"
        )
    );
    let expected = (
        "metadata.uid".to_owned(),
        format!("Invalid value: \"{uid}\": field is immutable"),
    );
    assert_eq!(causes(&body), vec![expected.clone(), expected]);
}

#[tokio::test]
async fn deletion_fields_of_a_deployment_should_not_change_through_a_strategic_merge_patch() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/apis/apps/v1/namespaces/default/deployments";
    create(
        addr,
        path,
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"},
               "spec": {"selector": {"matchLabels": {"a": "b"}},
                        "template": {"metadata": {"labels": {"a": "b"}},
                                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}),
    )
    .await;
    let (status, body) = patch(
        addr,
        &format!("{path}/d1"),
        "application/strategic-merge-patch+json",
        json!({"metadata": {"deletionGracePeriodSeconds": 5}}),
    )
    .await;
    assert_eq!(status, 422);
    let expected = (
        "metadata.deletionGracePeriodSeconds".to_owned(),
        "Invalid value: 5: field is immutable".to_owned(),
    );
    assert_eq!(causes(&body), vec![expected.clone(), expected]);
}

#[tokio::test]
async fn a_put_setting_a_deletion_timestamp_on_a_service_should_be_refused() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/services";
    let mut svc = create(
        addr,
        path,
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s1"},
               "spec": {"ports": [{"port": 80}]}}),
    )
    .await;
    svc["metadata"]["deletionTimestamp"] = json!("2030-01-01T00:00:00Z");
    let r = raw(
        addr,
        "PUT",
        &format!("{path}/s1"),
        &[("Content-Type", "application/json")],
        &serde_json::to_vec(&svc).unwrap_or_default(),
    )
    .await;
    assert_eq!(r.status, 422);
    assert_eq!(
        causes(&r.json())[0],
        (
            "metadata.deletionTimestamp".to_owned(),
            "Invalid value: \"2030-01-01T00:00:00Z\": field is immutable".to_owned()
        )
    );
}

#[tokio::test]
async fn a_put_with_another_uid_should_still_fail_its_precondition() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/configmaps";
    let mut cm = create(
        addr,
        path,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c1"}}),
    )
    .await;
    cm["metadata"]["uid"] = json!("6f0e7b1c-0000-4000-8000-000000000003");
    let r = raw(
        addr,
        "PUT",
        &format!("{path}/c1"),
        &[("Content-Type", "application/json")],
        &serde_json::to_vec(&cm).unwrap_or_default(),
    )
    .await;
    assert_eq!(r.status, 409);
}

#[tokio::test]
async fn patches_naming_another_object_should_be_bad_requests() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
    create(addr, path, json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l1"}})).await;
    let (status, body) = patch(
        addr,
        &format!("{path}/l1"),
        "application/merge-patch+json",
        json!({"metadata": {"namespace": "kube-system"}}),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["message"],
        "the namespace of the provided object does not match the namespace sent on the request"
    );
    let (status, body) = patch(
        addr,
        &format!("{path}/l1"),
        "application/json-patch+json",
        json!([{"op": "replace", "path": "/metadata/name", "value": "l2"}]),
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["message"],
        "the name of the object (l2) does not match the name on the URL (l1)"
    );
}

#[tokio::test]
async fn system_fields_in_a_patch_should_be_reset_without_an_error() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/serviceaccounts";
    let sa = create(
        addr,
        path,
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "a1"}}),
    )
    .await;
    let (status, body) = patch(
        addr,
        &format!("{path}/a1"),
        "application/merge-patch+json",
        json!({"metadata": {"creationTimestamp": "2001-01-01T00:00:00Z", "generation": 7}}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(
        body["metadata"]["creationTimestamp"],
        sa["metadata"]["creationTimestamp"]
    );
    assert!(body["metadata"].get("generation").is_none());
}
