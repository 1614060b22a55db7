//! Wire-level answers over raw HTTP: anonymous requests, content negotiation, undecodable
//! bodies, unknown API groups, and Go's wording for malformed query parameters.

use crate::common;

use kcr_testenv::TestEnv;
use serde_json::json;

const CM: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn a_request_without_credentials_should_be_forbidden_to_anonymous() {
    let env = TestEnv::builder().token("s3cret").start().await.unwrap();
    let r = common::raw(env.addr(), "GET", CM, &[], b"").await;
    assert_eq!(r.status, 403);
    assert_eq!(
        r.json(),
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "configmaps is forbidden: User \"system:anonymous\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\"",
            "reason": "Forbidden", "details": {"kind": "configmaps"}, "code": 403
        })
    );
    // Anonymous may read the version; a wrong token is 401.
    assert_eq!(
        common::raw(env.addr(), "GET", "/version", &[], b"")
            .await
            .status,
        200
    );
    let wrong = [("Authorization", "Bearer nope")];
    assert_eq!(
        common::raw(env.addr(), "GET", CM, &wrong, b"").await.status,
        401
    );
}

#[tokio::test]
async fn an_unacceptable_media_type_should_get_406() {
    let env = TestEnv::start().await.unwrap();
    let r = common::raw(env.addr(), "GET", CM, &[("Accept", "application/xml")], b"").await;
    assert_eq!(r.status, 406);
    assert_eq!(r.json()["reason"], "NotAcceptable");
    assert!(
        r.json()["message"]
            .as_str()
            .unwrap()
            .starts_with("406: Not Acceptable\n\nAvailable representations: application/json")
    );
    let ok = common::raw(
        env.addr(),
        "GET",
        CM,
        &[("Accept", "application/yaml, */*")],
        b"",
    )
    .await;
    assert_eq!(ok.status, 200);
}

#[tokio::test]
async fn bodies_should_be_json_or_yaml_and_decodable() {
    let env = TestEnv::start().await.unwrap();
    let text = [("Content-Type", "text/plain")];
    let r = common::raw(env.addr(), "POST", CM, &text, b"{}").await;
    assert_eq!(
        (r.status, r.json()["reason"].clone()),
        (415, json!("UnsupportedMediaType"))
    );

    let yaml = [("Content-Type", "application/yaml")];
    let body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  a: b\n";
    let r = common::raw(env.addr(), "POST", CM, &yaml, body).await;
    assert_eq!(r.status, 201, "{:?}", r.json());
    assert_eq!(r.json()["data"], json!({"a": "b"}));

    let json_ct = [("Content-Type", "application/json")];
    let r = common::raw(env.addr(), "POST", CM, &json_ct, b"{bad").await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.json()["message"],
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'b' looking for beginning of object key string ({bad)"
    );
    let secret = br#"{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"}}"#;
    let r = common::raw(env.addr(), "POST", CM, &json_ct, secret).await;
    assert_eq!(
        r.json()["message"],
        "Secret in version \"v1\" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion"
    );
}

#[tokio::test]
async fn an_unknown_group_or_version_should_get_go_s_plain_404() {
    let env = TestEnv::start().await.unwrap();
    for path in [
        "/apis/nope.example.com/v1/things",
        "/apis/apps/v9/deployments",
    ] {
        let r = common::raw(env.addr(), "GET", path, &[], b"").await;
        assert_eq!(r.status, 404, "{path}");
        assert_eq!(r.body, b"404 page not found\n", "{path}");
    }
    // A served group/version without that resource: a Status.
    let r = common::raw(env.addr(), "GET", "/apis/apps/v1/nothings", &[], b"").await;
    assert_eq!(
        (r.status, r.json()["reason"].clone()),
        (404, json!("NotFound"))
    );
}

#[tokio::test]
async fn malformed_numbers_should_be_reported_in_go_s_wording() {
    let env = TestEnv::start().await.unwrap();
    let get = |query: &'static str| {
        let addr = env.addr();
        async move { common::raw(addr, "GET", &format!("{CM}?{query}"), &[], b"").await }
    };
    let r = get("limit=abc").await;
    assert_eq!(
        (r.status, r.json()["message"].clone()),
        (
            400,
            json!("strconv.ParseInt: parsing \"abc\": invalid syntax")
        )
    );
    let r = get("resourceVersion=abc").await;
    assert_eq!(
        (r.status, r.json()["message"].clone()),
        (
            400,
            json!(
                "invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"
            )
        )
    );
    let r = get("watch=1&resourceVersion=-1").await;
    assert_eq!(r.status, 500);
    assert_eq!(r.json().get("reason"), None);
}
