//! Robustness as kube-apiserver has it: a client that never finishes its request head is
//! disconnected after the read-header timeout, the `Bearer` scheme is case-insensitive, unknown
//! and duplicate fields are dropped with a `Warning` (in the order of the body) or refused under
//! `fieldValidation=Strict`, and a value of the wrong type is refused with Go's message.

use std::time::Duration;

use kcr_testenv::TestEnv;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::common;
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

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

#[tokio::test]
async fn unknown_and_duplicate_fields_should_be_reported_in_the_order_of_the_body() {
    let env = TestEnv::start().await.unwrap();
    let body = br#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"w","labels":{"a":"1","a":"2"}},"spec":{"zzz":1,"replicas":1,"selector":{"matchLabels":{"app":"w"}},"template":{"metadata":{"labels":{"app":"w"}},"spec":{"containers":[{"name":"c","image":"i","bogus":true}]}},"aaa":2}}"#;
    let answer = raw(env.addr(), "POST", DEPLOYMENTS, &[JSON], body).await;
    assert_eq!(answer.status, 201);
    let warnings: Vec<&str> = answer
        .headers
        .iter()
        .filter(|(k, _)| k.eq_ignore_ascii_case("warning"))
        .map(|(_, v)| v.as_str())
        .collect();
    assert_eq!(
        warnings,
        [
            r#"299 - "duplicate field \"metadata.labels.a\"""#,
            r#"299 - "unknown field \"spec.zzz\"""#,
            r#"299 - "unknown field \"spec.template.spec.containers[0].bogus\"""#,
            r#"299 - "unknown field \"spec.aaa\"""#,
        ]
    );
    let created = answer.json();
    assert_eq!(created["metadata"]["labels"]["a"], "2");
    assert!(created["spec"].get("zzz").is_none());
    assert!(
        created["spec"]["template"]["spec"]["containers"][0]
            .get("bogus")
            .is_none()
    );
}

#[tokio::test]
async fn a_value_of_the_wrong_type_should_be_named_as_kube_apiserver_names_it() {
    let env = TestEnv::start().await.unwrap();
    let body = br#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"w"},"spec":{"selector":{"matchLabels":{"app":"w"}},"template":{"metadata":{"labels":{"app":"w"}},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":"http"}]}]}}}}"#;
    let answer = raw(
        env.addr(),
        "POST",
        &format!("{DEPLOYMENTS}?fieldValidation=Strict"),
        &[JSON],
        body,
    )
    .await;
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.json()["message"],
        "Deployment in version \"v1\" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32"
    );
    let body = br#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i","resources":{"limits":{"memory":"lots"}}}]}}"#;
    let answer = raw(
        env.addr(),
        "POST",
        "/api/v1/namespaces/default/pods",
        &[JSON],
        body,
    )
    .await;
    assert_eq!(answer.status, 400);
    assert_eq!(
        answer.json()["message"],
        "Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
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
