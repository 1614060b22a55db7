//! The writes of the workload controllers (Deployment, ReplicaSet, StatefulSet, Job): each one a request through the
//! same handlers as a client's (routing, decoding, defaults, admission, validation, the field
//! manager), sent as kube-controller-manager with its user-agent, so what a controller writes
//! is what a client could write and `managedFields` name `kube-controller-manager`.

use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, header};
use http_body_util::BodyExt;
use parking_lot::Mutex;
use serde_json::Value;

use crate::server::{Request, Shared, parse_query};

/// The user-agent of kube-controller-manager v1.36.2 (its field manager is the part before `/`).
const USER_AGENT: &str = "kube-controller-manager/v1.36.2 (linux/amd64) kubernetes/controller";

/// A controller request's answer.
#[derive(Debug)]
pub(super) struct Answer {
    /// The HTTP status.
    pub(super) status: u16,
    /// The body (`Value::Null` when it is not JSON).
    pub(super) body: Value,
}

impl Answer {
    /// A `2xx` status.
    pub(super) fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }
}

/// Sends `method path?query` with `body` (JSON, or a JSON merge patch for `PATCH`) as
/// kube-controller-manager.
pub(super) async fn send(
    shared: &Arc<Shared>,
    method: Method,
    path: &str,
    query: &str,
    body: Option<&Value>,
) -> Answer {
    let content_type = if method == Method::PATCH {
        "application/merge-patch+json"
    } else {
        "application/json"
    };
    send_as(shared, method, path, query, body, content_type).await
}

/// A strategic merge patch of `path` with `body` (client-go's `Patch(types.StrategicMergePatchType)`).
pub(super) async fn strategic_patch(shared: &Arc<Shared>, path: &str, body: &Value) -> Answer {
    send_as(
        shared,
        Method::PATCH,
        path,
        "",
        Some(body),
        "application/strategic-merge-patch+json",
    )
    .await
}

async fn send_as(
    shared: &Arc<Shared>,
    method: Method,
    path: &str,
    query: &str,
    body: Option<&Value>,
    content_type: &'static str,
) -> Answer {
    send_with(shared, USER_AGENT, method, path, query, body, content_type).await
}

/// Sends `method path?query` with `body` as `content_type` under `user_agent` (the controllers
/// of kube-controller-manager differ in the user-agent's tail).
pub(super) async fn send_with(
    shared: &Arc<Shared>,
    user_agent: &'static str,
    method: Method,
    path: &str,
    query: &str,
    body: Option<&Value>,
    content_type: &'static str,
) -> Answer {
    let mut headers = HeaderMap::new();
    headers.insert(header::USER_AGENT, HeaderValue::from_static(user_agent));
    headers.insert(header::ACCEPT, HeaderValue::from_static("application/json"));
    let body = match body {
        Some(b) => {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
            Bytes::from(serde_json::to_vec(b).unwrap_or_default())
        }
        None => Bytes::new(),
    };
    let req = Request {
        method,
        path: path.to_owned(),
        query: parse_query(query),
        headers,
        body,
        warnings: Mutex::new(Vec::new()),
        user: crate::rbac::authentication::admin(),
    };
    let resp = crate::endpoints::handle(shared, req).await;
    let status = resp.status().as_u16();
    let bytes = match resp.into_body().collect().await {
        Ok(c) => c.to_bytes(),
        Err(never) => match never {},
    };
    Answer {
        status,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    }
}

/// The path of a namespaced collection: `/api/v1/namespaces/<ns>/<plural>` for the core group,
/// `/apis/<group>/<version>/namespaces/<ns>/<plural>` otherwise.
pub(super) fn collection(group_version: &str, namespace: &str, plural: &str) -> String {
    if group_version == "v1" {
        format!("/api/v1/namespaces/{namespace}/{plural}")
    } else {
        format!("/apis/{group_version}/namespaces/{namespace}/{plural}")
    }
}
