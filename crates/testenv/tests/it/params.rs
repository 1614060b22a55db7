//! Query parameters and create bodies as kube-apiserver reads them, beyond the recorded
//! `params` cases: Go's boolean conversion, `strconv` errors, a get's `resourceVersion`, and a
//! create body's `resourceVersion` and `generation`.

use serde_json::json;

use crate::common::raw;

#[tokio::test]
async fn boolean_parameters_should_be_true_for_anything_but_zero_and_false() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let base = "/api/v1/namespaces/default/secrets";
    let watch = raw(
        addr,
        "GET",
        &format!("{base}?watch=on&timeoutSeconds=1"),
        &[],
        b"",
    )
    .await;
    assert_eq!(watch.status, 200);
    assert!(
        watch.json().is_null(),
        "a watch streams events, not one list"
    );
    for off in ["FALSE", "0", "False"] {
        let list = raw(addr, "GET", &format!("{base}?watch={off}"), &[], b"").await;
        assert_eq!(list.json()["kind"], "SecretList", "watch={off}");
    }
}

#[tokio::test]
async fn unparsable_numbers_should_get_go_strconv_messages() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    for path in [
        "/api/v1/pods?watch=true&timeoutSeconds=1e3",
        "/apis/apps/v1/deployments?timeoutSeconds=1e3",
    ] {
        let r = raw(addr, "GET", path, &[], b"").await;
        assert_eq!(r.status, 400, "{path}");
        assert_eq!(
            r.json()["message"],
            "strconv.ParseInt: parsing \"1e3\": invalid syntax"
        );
    }
    // A negative timeout is a number: the watch ends at once.
    let r = raw(
        addr,
        "GET",
        "/api/v1/pods?watch=1&timeoutSeconds=-5",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn a_get_with_an_unparsable_resource_version_should_be_an_internal_error() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let r = raw(
        addr,
        "GET",
        "/api/v1/namespaces/default/services/kubernetes?resourceVersion=x1",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 500);
    let status = r.json();
    assert!(status.get("reason").is_none());
    assert_eq!(
        status["message"],
        "resourceVersion: Invalid value: \"x1\": strconv.ParseUint: parsing \"x1\": invalid syntax"
    );
    // A version the store has reached is served.
    let ok = raw(
        addr,
        "GET",
        "/api/v1/namespaces/default/services/kubernetes?resourceVersion=1",
        &[],
        b"",
    )
    .await;
    assert_eq!(ok.status, 200);
}

#[tokio::test]
async fn a_create_body_with_a_resource_version_should_be_refused_by_the_storage() {
    let env = kcr_testenv::TestEnv::start().await.expect("start");
    let addr = env.addr();
    let body = json!({"apiVersion": "v1", "kind": "Secret",
                      "metadata": {"name": "s1", "resourceVersion": "12", "generation": 4}});
    let r = raw(
        addr,
        "POST",
        "/api/v1/namespaces/default/secrets",
        &[("Content-Type", "application/json")],
        &serde_json::to_vec(&body).unwrap_or_default(),
    )
    .await;
    assert_eq!(r.status, 500);
    assert_eq!(
        r.json()["message"],
        "resourceVersion should not be set on objects to be created"
    );
    // Without it the create goes through, and a kind that does not track generation keeps
    // the one sent.
    let body = json!({"apiVersion": "v1", "kind": "Secret",
                      "metadata": {"name": "s1", "generation": 4}});
    let r = raw(
        addr,
        "POST",
        "/api/v1/namespaces/default/secrets",
        &[("Content-Type", "application/json")],
        &serde_json::to_vec(&body).unwrap_or_default(),
    )
    .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.json()["metadata"]["generation"], 4);
}
