//! Request errors as kube-apiserver words them, on kinds and fields beyond the recorded cases:
//! field selectors per kind (each kind's labels, its conversion's message, Go's zero values for
//! absent fields), label selector requirements, DeleteOptions from the body or the query,
//! `fieldManager`, and bodies of another kind or version.

use std::net::SocketAddr;

use serde_json::{Value, json};

use crate::common::raw;

async fn send(addr: SocketAddr, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let bytes = body
        .map(|b| serde_json::to_vec(&b).unwrap_or_default())
        .unwrap_or_default();
    let headers: &[(&str, &str)] = if bytes.is_empty() {
        &[]
    } else {
        &[("Content-Type", "application/json")]
    };
    let r = raw(addr, method, path, headers, &bytes).await;
    (r.status, r.json())
}

async fn create(addr: SocketAddr, path: &str, body: Value) -> Value {
    let (status, v) = send(addr, "POST", path, Some(body)).await;
    assert_eq!(status, 201, "{v}");
    v
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_owned))
        .collect()
}

fn message(v: &Value) -> &str {
    v["message"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn field_selectors_should_follow_each_kinds_conversion_and_go_zero_values() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    // A Node without spec.unschedulable is schedulable (Go's false), one cordoned is not.
    create(
        addr,
        "/api/v1/nodes",
        json!({"metadata": {"name": "free", "labels": {"t": "fs"}}}),
    )
    .await;
    create(
        addr,
        "/api/v1/nodes",
        json!({"metadata": {"name": "cordoned", "labels": {"t": "fs"}}, "spec": {"unschedulable": true}}),
    )
    .await;
    let (status, list) = send(
        addr,
        "GET",
        "/api/v1/nodes?labelSelector=t%3Dfs&fieldSelector=spec.unschedulable%3Dfalse",
        None,
    )
    .await;
    assert_eq!((status, names(&list)), (200, vec!["free".to_owned()]));
    let (_, list) = send(
        addr,
        "GET",
        "/api/v1/nodes?labelSelector=t%3Dfs&fieldSelector=spec.unschedulable%21%3Dfalse",
        None,
    )
    .await;
    assert_eq!(names(&list), ["cordoned"]);
    // Nodes and Namespaces have no metadata.namespace label.
    for path in [
        "/api/v1/nodes?fieldSelector=metadata.namespace%3Dx",
        "/api/v1/namespaces?fieldSelector=metadata.namespace%3Dx",
    ] {
        let (status, v) = send(addr, "GET", path, None).await;
        assert_eq!(
            (status, message(&v)),
            (400, "field label not supported: metadata.namespace"),
            "{path}"
        );
    }
    // A Pod without hostNetwork is on the pod network (false).
    create(
        addr,
        "/api/v1/namespaces/default/pods",
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "nginx"}]}}),
    )
    .await;
    let (_, list) = send(
        addr,
        "GET",
        "/api/v1/namespaces/default/pods?fieldSelector=spec.hostNetwork%3Dfalse,status.nominatedNodeName%3D",
        None,
    )
    .await;
    assert_eq!(names(&list), ["p"]);
    // Each conversion words its refusal in its own way.
    for (path, expected) in [
        (
            "/api/v1/namespaces/default/configmaps?fieldSelector=data.a%3D1",
            "\"data.a\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
        ),
        (
            "/apis/batch/v1/namespaces/default/jobs?fieldSelector=status.active%3D1",
            "field label \"status.active\" not supported for batchv1.Job",
        ),
        (
            "/apis/certificates.k8s.io/v1/certificatesigningrequests?fieldSelector=spec.username%3Dx",
            "field label not supported: spec.username",
        ),
        (
            "/apis/resource.k8s.io/v1/resourceslices?fieldSelector=spec.pool%3Dx",
            "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool",
        ),
        // Terms are sorted before their labels are converted.
        (
            "/api/v1/namespaces/default/services?fieldSelector=spec.x%3D1,spec.a%3D1",
            "field label not supported: spec.a",
        ),
        (
            "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Da%5Cb",
            "invalid field selector: invalid escape sequence: \\b",
        ),
    ] {
        let (status, v) = send(addr, "GET", path, None).await;
        assert_eq!((status, message(&v)), (400, expected), "{path}");
    }
    // A Job's succeeded count is 0 until it has one; a selector on it matches a new Job.
    create(
        addr,
        "/apis/batch/v1/namespaces/default/jobs",
        json!({"metadata": {"name": "j"}, "spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "a", "image": "busybox"}]}}}}),
    )
    .await;
    let (_, list) = send(
        addr,
        "GET",
        "/apis/batch/v1/namespaces/default/jobs?fieldSelector=status.successful%3D0",
        None,
    )
    .await;
    assert_eq!(names(&list), ["j"]);
}

#[tokio::test]
async fn label_selector_requirements_should_be_refused_with_the_field_errors() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    for (selector, expected) in [
        (
            "a%3Db%25",
            "unable to parse requirement: values[0][a]: Invalid value: \"b%\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
        (
            "%2Fa%3Db",
            "unable to parse requirement: <nil>: Invalid value: \"/a\": prefix part must be non-empty",
        ),
        (
            "a%3Ex",
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ] {
        let (status, v) = send(
            addr,
            "GET",
            &format!("/api/v1/namespaces/default/secrets?labelSelector={selector}"),
            None,
        )
        .await;
        assert_eq!((status, message(&v)), (400, expected), "{selector}");
    }
}

#[tokio::test]
async fn delete_options_should_come_from_the_body_or_else_the_query() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/secrets";
    create(addr, path, json!({"metadata": {"name": "s"}})).await;
    // With a body, the query's options are not read: its dryRun does not protect the object,
    // and a bad query value is not seen.
    let (status, v) = send(
        addr,
        "DELETE",
        &format!("{path}/s?propagationPolicy=Sideways"),
        Some(json!({"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]})),
    )
    .await;
    assert_eq!(status, 200, "{v}");
    assert_eq!(send(addr, "GET", &format!("{path}/s"), None).await.0, 200);
    // Several errors in one DeleteOptions come in ValidateDeleteOptions' order.
    let (status, v) = send(
        addr,
        "DELETE",
        &format!("{path}/s?propagationPolicy=Sideways&orphanDependents=false&dryRun=Nope"),
        None,
    )
    .await;
    assert_eq!(status, 422);
    let fields: Vec<&str> = v["details"]["causes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["field"].as_str())
        .collect();
    assert_eq!(fields, ["propagationPolicy", "propagationPolicy", "dryRun"]);
    assert_eq!(
        message(&v),
        "DeleteOptions.meta.k8s.io \"\" is invalid: [propagationPolicy: Invalid value: \"Sideways\": orphanDependents and deletionPropagation cannot be both set, propagationPolicy: Unsupported value: \"Sideways\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\", dryRun: Unsupported value: [\"Nope\"]: supported values: \"All\"]"
    );
    // A DeleteOptions body of an unknown media type.
    let r = raw(
        addr,
        "DELETE",
        &format!("{path}/s"),
        &[("Content-Type", "text/plain")],
        b"{}",
    )
    .await;
    assert_eq!(r.status, 415);
}

#[tokio::test]
async fn a_field_manager_should_be_short_and_printable_on_every_write() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let path = "/api/v1/namespaces/default/configmaps";
    create(addr, path, json!({"metadata": {"name": "c"}})).await;
    let (status, v) = send(
        addr,
        "PUT",
        &format!("{path}/c?fieldManager=tab%09here"),
        Some(json!({"metadata": {"name": "c"}, "data": {"a": "1"}})),
    )
    .await;
    assert_eq!(status, 422);
    assert_eq!(
        message(&v),
        "UpdateOptions.meta.k8s.io \"\" is invalid: fieldManager: Invalid value: \"tab\\there\": invalid character U+0009 (at position 3)"
    );
    // An apply without a manager and with a force on a merge patch: both, in one answer.
    let r = raw(
        addr,
        "PATCH",
        &format!("{path}/c?force=true&dryRun=Nope"),
        &[("Content-Type", "application/merge-patch+json")],
        b"{}",
    )
    .await;
    assert_eq!(r.status, 422);
    assert_eq!(
        message(&r.json()),
        "PatchOptions.meta.k8s.io \"\" is invalid: [force: Forbidden: may not be specified for non-apply patch, dryRun: Unsupported value: [\"Nope\"]: supported values: \"All\"]"
    );
}

#[tokio::test]
async fn a_body_of_another_kind_or_version_should_be_refused_as_the_decoder_does() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    for (path, body, expected) in [
        (
            "/apis/apps/v1/namespaces/default/statefulsets",
            json!({"apiVersion": "apps/v1beta1", "kind": "StatefulSet", "metadata": {"name": "s"}}),
            "the API version in the data (apps/v1beta1) does not match the expected API version (apps/v1)",
        ),
        (
            "/api/v1/namespaces/default/secrets",
            json!({"apiVersion": "apps/v1", "kind": "Secret", "metadata": {"name": "s"}}),
            "Secret in version \"v1\" cannot be handled as a Secret: no kind \"Secret\" is registered for version \"apps/v1\" in scheme \"pkg/api/legacyscheme/scheme.go:30\"",
        ),
        (
            "/apis/batch/v1/namespaces/default/jobs",
            json!({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "j"}}),
            "CronJob in version \"v1\" cannot be handled as a Job: converting (v1.CronJob) to (batch.Job): unknown conversion",
        ),
    ] {
        let (status, v) = send(addr, "POST", path, Some(body)).await;
        assert_eq!((status, message(&v)), (400, expected), "{path}");
    }
    // A body without kind and apiVersion is the endpoint's.
    create(
        addr,
        "/api/v1/namespaces/default/secrets",
        json!({"metadata": {"name": "typeless"}}),
    )
    .await;
    // Apply names the whole group, version and kind it was given.
    let r = raw(
        addr,
        "PATCH",
        "/api/v1/namespaces/default/secrets/typeless?fieldManager=m",
        &[("Content-Type", "application/apply-patch+yaml")],
        b"{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"typeless\"}}",
    )
    .await;
    assert_eq!(
        (r.status, message(&r.json()).to_owned()),
        (400, "invalid object type: /v1, Kind=ConfigMap".to_owned())
    );
}
