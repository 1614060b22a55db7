//! Robustness as kube-apiserver has it: a client that never finishes its request head is
//! disconnected after the read-header timeout, the `Bearer` scheme is case-insensitive, and
//! unknown fields are dropped with a `Warning` or refused under `fieldValidation=Strict`.

use std::time::Duration;

use kcr_testenv::TestEnv;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod common;
use common::raw;

#[tokio::test(start_paused = true)]
async fn a_client_that_never_finishes_its_head_should_be_disconnected() {
    let env = TestEnv::start().await.unwrap();
    let mut stream = TcpStream::connect(env.addr()).await.unwrap();
    stream
        .write_all(b"GET /api HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // The head never ends; with time paused the server's 32 s timer fires as soon as nothing
    // else is runnable, and the connection is closed (read gives 0 bytes or an error).
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(120), stream.read_to_end(&mut buf)).await;
    assert!(read.is_ok(), "the connection stayed open");
}

#[tokio::test]
async fn the_bearer_scheme_should_be_case_insensitive() {
    let env = TestEnv::builder().token("secret").start().await.unwrap();
    for header in ["Bearer secret", "bearer secret", "BEARER secret"] {
        let answer = raw(
            env.addr(),
            "GET",
            "/api/v1/namespaces",
            &[("Authorization", header)],
            b"",
        )
        .await;
        assert_eq!(answer.status, 200, "{header}");
    }
    let answer = raw(
        env.addr(),
        "GET",
        "/api/v1/namespaces",
        &[("Authorization", "Basic secret")],
        b"",
    )
    .await;
    assert_eq!(answer.status, 401);
}

const CM: &str = "/api/v1/namespaces/default/configmaps";
const JSON: (&str, &str) = ("Content-Type", "application/json");

#[tokio::test]
async fn unknown_fields_should_be_dropped_with_a_warning_or_refused_when_strict() {
    let env = TestEnv::start().await.unwrap();
    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"},"bogus":1}"#;
    let answer = raw(env.addr(), "POST", CM, &[JSON], body).await;
    assert_eq!(answer.status, 201);
    assert_eq!(
        answer.header("warning"),
        Some(r#"299 - "unknown field \"bogus\"""#)
    );
    assert!(answer.json().get("bogus").is_none());

    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"b"},"bogus":1}"#;
    let answer = raw(
        env.addr(),
        "POST",
        &format!("{CM}?fieldValidation=Ignore"),
        &[JSON],
        body,
    )
    .await;
    assert_eq!(answer.status, 201);
    assert_eq!(answer.header("warning"), None);

    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"bogus":1}"#;
    let answer = raw(
        env.addr(),
        "POST",
        &format!("{CM}?fieldValidation=Strict"),
        &[JSON],
        body,
    )
    .await;
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.json()["message"],
        r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus""#
    );
}

#[tokio::test]
async fn values_of_the_wrong_type_and_invalid_objects_should_be_refused() {
    let env = TestEnv::start().await.unwrap();
    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":42}}"#;
    assert_eq!(raw(env.addr(), "POST", CM, &[JSON], body).await.status, 400);
    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","labels":{"bad key!":"x"}}}"#;
    let answer = raw(env.addr(), "POST", CM, &[JSON], body).await;
    assert_eq!(answer.status, 422);
    assert_eq!(
        answer.json()["details"]["causes"][0]["field"],
        "metadata.labels"
    );
    let deployment = br#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":1}}"#;
    let answer = raw(
        env.addr(),
        "POST",
        "/apis/apps/v1/namespaces/default/deployments",
        &[JSON],
        deployment,
    )
    .await;
    assert_eq!(answer.status, 422);
    let fields: Vec<String> = answer.json()["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(
        fields,
        [
            "spec.selector",
            "spec.template.metadata.labels",
            "spec.template.spec.containers"
        ]
    );
}

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn crd(group: &str, annotations: &str) -> Vec<u8> {
    format!(
        r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{{"name":"widgets.{group}"{annotations}}},"spec":{{"group":"{group}","scope":"Namespaced","names":{{"plural":"widgets","kind":"Widget"}},"versions":[{{"name":"v1","served":true,"storage":true,"schema":{{"openAPIV3Schema":{{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}}]}}}}"#
    )
    .into_bytes()
}

#[tokio::test]
async fn crds_should_stay_out_of_protected_and_built_in_groups() {
    let env = TestEnv::start().await.unwrap();
    let protected = raw(env.addr(), "POST", CRDS, &[JSON], &crd("x.k8s.io", "")).await;
    assert_eq!(protected.status, 422);
    assert_eq!(
        protected.json()["details"]["causes"][0]["field"],
        "metadata.annotations[api-approved.kubernetes.io]"
    );
    let approved = r#","annotations":{"api-approved.kubernetes.io":"unapproved, experimental"}"#;
    let answer = raw(
        env.addr(),
        "POST",
        CRDS,
        &[JSON],
        &crd("y.k8s.io", approved),
    )
    .await;
    assert_eq!(answer.status, 201);
    // A CRD named in the built-in group `apps` would shadow (and on deletion remove) Deployments.
    let apps = raw(env.addr(), "POST", CRDS, &[JSON], &crd("apps", "")).await;
    assert_eq!(apps.status, 422);
    assert_eq!(apps.json()["details"]["causes"][0]["field"], "spec.group");
}
