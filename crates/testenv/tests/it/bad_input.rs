//! Bad input: malformed requests, each answered with the right `metav1.Status`, and the server
//! still serving afterwards.

use crate::common;

use kcr_testenv::TestEnv;

const CM: &str = "/api/v1/namespaces/default/configmaps";
const JSON: (&str, &str) = ("Content-Type", "application/json");

struct Case {
    what: &'static str,
    method: &'static str,
    path: &'static str,
    content_type: Option<&'static str>,
    body: Vec<u8>,
    code: u16,
    reason: &'static str,
}

fn case(
    what: &'static str,
    method: &'static str,
    path: &'static str,
    body: &str,
    code: u16,
    reason: &'static str,
) -> Case {
    Case {
        what,
        method,
        path,
        content_type: Some(JSON.1),
        body: body.as_bytes().to_vec(),
        code,
        reason,
    }
}

fn cases() -> Vec<Case> {
    vec![
        case("malformed JSON", "POST", CM, "{not json", 400, "BadRequest"),
        case(
            "truncated JSON",
            "POST",
            CM,
            r#"{"metadata": {"name": "a""#,
            400,
            "BadRequest",
        ),
        case("a JSON array", "POST", CM, "[1, 2]", 400, "BadRequest"),
        case(
            "a JSON string",
            "POST",
            CM,
            r#""configmap""#,
            400,
            "BadRequest",
        ),
        case("empty body", "POST", CM, "", 400, "BadRequest"),
        case(
            "metadata not an object",
            "POST",
            CM,
            r#"{"metadata": 5}"#,
            400,
            "BadRequest",
        ),
        case(
            "wrong kind",
            "POST",
            CM,
            r#"{"kind": "Secret", "apiVersion": "v1", "metadata": {"name": "a"}}"#,
            400,
            "BadRequest",
        ),
        case(
            "wrong apiVersion",
            "POST",
            CM,
            r#"{"kind": "ConfigMap", "apiVersion": "apps/v1", "metadata": {"name": "a"}}"#,
            400,
            "BadRequest",
        ),
        case(
            "kind not a string",
            "POST",
            CM,
            r#"{"kind": 7, "metadata": {"name": "a"}}"#,
            400,
            "BadRequest",
        ),
        case(
            "missing name",
            "POST",
            CM,
            r#"{"metadata": {}}"#,
            422,
            "Invalid",
        ),
        case(
            "invalid name",
            "POST",
            CM,
            r#"{"metadata": {"name": "Not_Valid"}}"#,
            422,
            "Invalid",
        ),
        case(
            "name too long",
            "POST",
            CM,
            &format!(r#"{{"metadata": {{"name": "{}"}}}}"#, "a".repeat(300)),
            422,
            "Invalid",
        ),
        case(
            "namespace mismatch",
            "POST",
            CM,
            r#"{"metadata": {"name": "a", "namespace": "kube-system"}}"#,
            400,
            "BadRequest",
        ),
        case(
            "name mismatch on update",
            "PUT",
            "/api/v1/namespaces/default/configmaps/exists",
            r#"{"metadata": {"name": "other"}}"#,
            400,
            "BadRequest",
        ),
        case(
            "update of a missing object",
            "PUT",
            "/api/v1/namespaces/default/configmaps/missing",
            r#"{"metadata": {"name": "missing"}}"#,
            404,
            "NotFound",
        ),
        case(
            "unknown resource",
            "GET",
            "/api/v1/namespaces/default/widgets",
            "",
            404,
            "NotFound",
        ),
        // An unknown group or version is Go's plain-text 404: see tests/wire.rs.
        case(
            "unknown subresource",
            "GET",
            "/api/v1/namespaces/default/configmaps/exists/status",
            "",
            404,
            "NotFound",
        ),
        case(
            "too many segments",
            "GET",
            "/api/v1/namespaces/default/configmaps/exists/status/x/y",
            "",
            404,
            "NotFound",
        ),
        case(
            "unknown top-level path",
            "GET",
            "/nope",
            "",
            404,
            "NotFound",
        ),
        case(
            "namespaced path for a cluster resource",
            "GET",
            "/api/v1/namespaces/default/namespaces",
            "",
            404,
            "NotFound",
        ),
        case(
            "POST to an object",
            "POST",
            "/api/v1/namespaces/default/configmaps/exists",
            "{}",
            405,
            "MethodNotAllowed",
        ),
        case(
            "PUT to a collection",
            "PUT",
            CM,
            "{}",
            405,
            "MethodNotAllowed",
        ),
        case(
            "bad label selector",
            "GET",
            "/api/v1/namespaces/default/configmaps?labelSelector=a%20in%20b",
            "",
            400,
            "BadRequest",
        ),
        case(
            "unsupported field selector",
            "GET",
            "/api/v1/namespaces/default/configmaps?fieldSelector=data.x%3D1",
            "",
            400,
            "BadRequest",
        ),
        case(
            "bad limit",
            "GET",
            "/api/v1/namespaces/default/configmaps?limit=ten",
            "",
            400,
            "BadRequest",
        ),
        case(
            "bad resourceVersion",
            "GET",
            "/api/v1/namespaces/default/configmaps?resourceVersion=abc",
            "",
            400,
            "BadRequest",
        ),
        case(
            "bad continue token",
            "GET",
            "/api/v1/namespaces/default/configmaps?limit=1&continue=garbage",
            "",
            400,
            "BadRequest",
        ),
        case(
            "unsupported resourceVersionMatch",
            "GET",
            "/api/v1/namespaces/default/configmaps?resourceVersion=1&resourceVersionMatch=Newest",
            "",
            422,
            "Invalid",
        ),
        case(
            "sendInitialEvents on a list",
            "GET",
            "/api/v1/namespaces/default/configmaps?sendInitialEvents=true",
            "",
            422,
            "Invalid",
        ),
        case(
            // A junk boolean is true, as kube-apiserver converts it; a junk number is refused.
            "bad watch timeout",
            "GET",
            "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=maybe",
            "",
            400,
            "BadRequest",
        ),
        case(
            "bad DeleteOptions",
            "DELETE",
            "/api/v1/namespaces/default/configmaps/exists",
            "{oops",
            400,
            "BadRequest",
        ),
        Case {
            what: "patch with an unknown media type",
            method: "PATCH",
            path: "/api/v1/namespaces/default/configmaps/exists",
            content_type: Some("text/plain"),
            body: b"{}".to_vec(),
            code: 415,
            reason: "UnsupportedMediaType",
        },
        Case {
            what: "server-side apply with unparseable YAML",
            method: "PATCH",
            path: "/api/v1/namespaces/default/configmaps/exists?fieldManager=t",
            content_type: Some("application/apply-patch+yaml"),
            body: b"apiVersion: v1\nkind: [unclosed\n".to_vec(),
            code: 400,
            reason: "BadRequest",
        },
        Case {
            what: "server-side apply without a field manager",
            method: "PATCH",
            path: "/api/v1/namespaces/default/configmaps/exists",
            content_type: Some("application/apply-patch+yaml"),
            body: b"metadata:\n  name: exists\n".to_vec(),
            code: 422,
            reason: "Invalid",
        },
        Case {
            what: "force on a merge patch",
            method: "PATCH",
            path: "/api/v1/namespaces/default/configmaps/exists?force=true",
            content_type: Some("application/merge-patch+json"),
            body: b"{}".to_vec(),
            code: 422,
            reason: "Invalid",
        },
        Case {
            // Cut short: kube-apiserver's decoder refuses it as a bad request.
            what: "a truncated protobuf body",
            method: "POST",
            path: CM,
            content_type: Some("application/vnd.kubernetes.protobuf"),
            body: b"k8s\x00\x0a\x0b".to_vec(),
            code: 400,
            reason: "BadRequest",
        },
        Case {
            what: "malformed merge patch",
            method: "PATCH",
            path: "/api/v1/namespaces/default/configmaps/exists",
            content_type: Some("application/merge-patch+json"),
            body: b"[1]".to_vec(),
            code: 400,
            reason: "BadRequest",
        },
        Case {
            what: "JSON patch that is not a list",
            method: "PATCH",
            path: "/api/v1/namespaces/default/configmaps/exists",
            content_type: Some("application/json-patch+json"),
            body: br#"{"op": "add"}"#.to_vec(),
            code: 400,
            reason: "BadRequest",
        },
        Case {
            what: "JSON patch on a missing path",
            method: "PATCH",
            path: "/api/v1/namespaces/default/configmaps/exists",
            content_type: Some("application/json-patch+json"),
            body: br#"[{"op": "replace", "path": "/nope/deeper", "value": 1}]"#.to_vec(),
            code: 422,
            reason: "Invalid",
        },
        Case {
            what: "a patch that renames",
            method: "PATCH",
            path: "/api/v1/namespaces/default/configmaps/exists",
            content_type: Some("application/merge-patch+json"),
            body: br#"{"metadata": {"name": "renamed"}}"#.to_vec(),
            code: 400,
            reason: "BadRequest",
        },
        Case {
            what: "invalid UTF-8",
            method: "POST",
            path: CM,
            content_type: Some(JSON.1),
            body: b"{\"metadata\": {\"name\": \"\xff\xfe\"}}".to_vec(),
            code: 400,
            reason: "BadRequest",
        },
        case(
            "CRD without names",
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            r#"{"metadata": {"name": "x.example.com"}, "spec": {"group": "example.com", "scope": "Namespaced", "versions": []}}"#,
            422,
            "Invalid",
        ),
        case(
            "CRD with two storage versions",
            "POST",
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            r#"{"metadata": {"name": "xs.example.com"}, "spec": {"group": "example.com", "scope": "Cluster", "names": {"plural": "xs", "kind": "X"}, "versions": [{"name": "v1", "served": true, "storage": true}, {"name": "v2", "served": true, "storage": true}]}}"#,
            422,
            "Invalid",
        ),
        case(
            "scale with negative replicas",
            "PUT",
            "/apis/apps/v1/namespaces/default/deployments/web/scale",
            r#"{"spec": {"replicas": -1}}"#,
            422,
            "Invalid",
        ),
    ]
}

#[tokio::test]
async fn malformed_requests_should_get_the_right_status_and_leave_the_server_serving() {
    let env = TestEnv::builder()
        .body_limit(64 * 1024)
        .start()
        .await
        .unwrap();
    let setup = [
        (CM, r#"{"metadata": {"name": "exists"}}"#),
        (
            "/apis/apps/v1/namespaces/default/deployments",
            r#"{"metadata": {"name": "web"}, "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}"#,
        ),
    ];
    for (path, body) in setup {
        assert_eq!(
            common::raw(env.addr(), "POST", path, &[JSON], body.as_bytes())
                .await
                .status,
            201
        );
    }
    let before = env.resource_version();
    let mut failures = Vec::new();
    for c in cases() {
        let headers: Vec<(&str, &str)> = c
            .content_type
            .map(|ct| ("Content-Type", ct))
            .into_iter()
            .collect();
        let r = common::raw(env.addr(), c.method, c.path, &headers, &c.body).await;
        let status = r.json();
        let ok = r.status == c.code
            && status["kind"] == "Status"
            && status["apiVersion"] == "v1"
            && status["status"] == "Failure"
            && status["code"] == c.code
            && status["reason"] == c.reason
            && status["message"].as_str().is_some_and(|m| !m.is_empty());
        if !ok {
            failures.push(format!(
                "{}: expected {} {}, got {} {}",
                c.what, c.code, c.reason, r.status, status
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(
        env.resource_version(),
        before,
        "no bad request changed anything"
    );
    let r = common::raw(
        env.addr(),
        "GET",
        "/api/v1/namespaces/default/configmaps/exists",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 200, "the server still serves");
}

#[tokio::test]
async fn an_oversized_body_should_get_413() {
    let env = TestEnv::builder().body_limit(1024).start().await.unwrap();
    let body = format!(
        r#"{{"metadata": {{"name": "big"}}, "data": {{"x": "{}"}}}}"#,
        "y".repeat(4096)
    );
    let r = common::raw(env.addr(), "POST", CM, &[JSON], body.as_bytes()).await;
    assert_eq!(r.status, 413);
    assert_eq!(r.json()["reason"], "RequestEntityTooLarge");
    let ok = common::raw(
        env.addr(),
        "POST",
        CM,
        &[JSON],
        br#"{"metadata": {"name": "small"}}"#,
    )
    .await;
    assert_eq!(ok.status, 201);
}

#[tokio::test]
async fn garbage_on_the_socket_should_not_stop_the_server() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let env = TestEnv::start().await.unwrap();
    for garbage in [
        &b"\x00\x01\x02 not http\r\n\r\n"[..],
        b"GET /api HTTP/9.9\r\n\r\n",
        b"GET",
    ] {
        let mut s = tokio::net::TcpStream::connect(env.addr()).await.unwrap();
        s.write_all(garbage).await.unwrap();
        s.shutdown().await.unwrap();
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink).await;
    }
    let r = common::raw(
        env.addr(),
        "GET",
        "/api/v1/namespaces/default/configmaps",
        &[],
        b"",
    )
    .await;
    assert_eq!(r.status, 200);
}
