//! Subresources with behaviour of their own (beyond `status` and `scale`), as kube-apiserver's
//! registries implement them:
//!
//! - `serviceaccounts/token` ([`token`]): TokenRequest.
//! - `pods/eviction` ([`eviction`]): deletes the Pod unless a PodDisruptionBudget forbids it.
//! - `pods/log` ([`log`]): what a test wrote with [`TestEnv::set_pod_log`](crate::TestEnv::set_pod_log)
//!   and its siblings, with kube-apiserver's and the kubelet's `PodLogOptions`.
//! - `pods/binding` ([`binding`]): assigns the Pod to a node.
//! - `pods/exec`, `pods/attach`, `pods/portforward` ([`connect`]): kube-apiserver's checks
//!   before it would stream to the kubelet (`400` for a Pod without a node).
//! - `pods/ephemeralcontainers`, `pods/resize`, `certificatesigningrequests/approval`
//!   ([`partial_update`]): read and write one part of the object.

pub(crate) mod binding;
pub(crate) mod connect;
pub(crate) mod eviction;
pub(crate) mod log;
pub(crate) mod partial_update;
pub(crate) mod token;

use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Response};
use serde_json::{Value, json};

use crate::body::Body;
use crate::endpoints::Target;
use crate::registry::ResourceDef;
use crate::server::{Request, Shared, error_response, json_response};
use crate::status::{ApiError, ApiResult};

/// Whether `def` has the subresource `sub` served here.
pub(crate) fn serves(def: &ResourceDef, sub: &str) -> bool {
    matches!(
        (def.group.as_str(), def.plural.as_str(), sub),
        (
            "",
            "pods",
            "log"
                | "eviction"
                | "binding"
                | "ephemeralcontainers"
                | "resize"
                | "exec"
                | "attach"
                | "portforward"
        ) | ("", "serviceaccounts", "token")
            | (
                "certificates.k8s.io",
                "certificatesigningrequests",
                "approval"
            )
    )
}

/// Serves a request for one of these subresources; `None` for any other target.
pub(crate) fn handle(shared: &Arc<Shared>, req: &Request, t: &Target) -> Option<Response<Body>> {
    let sub = t.sub.as_deref()?;
    if !serves(&t.def, sub) {
        return None;
    }
    let ns = t.namespace.as_deref().unwrap_or_default();
    let name = t.name.as_deref().unwrap_or_default();
    let result = match (sub, &req.method) {
        ("log", &Method::GET) => return Some(log::get(shared, req, ns, name)),
        ("exec" | "attach" | "portforward", &Method::GET | &Method::POST) => {
            connect::connect(shared, req, sub, ns, name)
        }
        ("eviction", &Method::POST) => eviction::create(shared, req, t),
        ("binding", &Method::POST) => binding::create(shared, req, t),
        ("token", &Method::POST) => token::create(shared, req, ns, name),
        (
            "ephemeralcontainers" | "resize" | "approval",
            &Method::GET | &Method::PUT | &Method::PATCH,
        ) => partial_update::handle(shared, req, t),
        _ => Err(ApiError::method_not_allowed()),
    };
    Some(match result {
        Ok((code, body)) => json_response(code, body),
        Err(e) => error_response(&e),
    })
}

/// The `Status` `Success` a create of `eviction` or `binding` answers with (`201`).
pub(crate) fn success() -> (u16, Bytes) {
    let status = json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "code": 201,
    });
    (
        201,
        Bytes::from(serde_json::to_vec(&status).unwrap_or_default()),
    )
}

/// A `metav1.LabelSelector` (`matchLabels`, `matchExpressions`) in the label selector syntax, as
/// `LabelSelectorAsSelector(...).String()` writes it: requirements sorted by key, values sorted.
/// An absent or empty selector is `""`.
pub(crate) fn selector_string(selector: &Value) -> String {
    let mut reqs: Vec<(String, String)> = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (k, v) in labels {
            reqs.push((k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())));
        }
    }
    if let Some(exprs) = selector.get("matchExpressions").and_then(Value::as_array) {
        for e in exprs {
            let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
            let mut values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            values.sort_unstable();
            values.dedup();
            let text = match e
                .get("operator")
                .and_then(Value::as_str)
                .unwrap_or_default()
            {
                "In" => format!("{key} in ({})", values.join(",")),
                "NotIn" => format!("{key} notin ({})", values.join(",")),
                "Exists" => key.to_owned(),
                "DoesNotExist" => format!("!{key}"),
                _ => continue,
            };
            reqs.push((key.to_owned(), text));
        }
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    reqs.into_iter()
        .map(|(_, r)| r)
        .collect::<Vec<_>>()
        .join(",")
}

/// A plain label map (a ReplicationController's `spec.selector`) in the selector syntax.
pub(crate) fn map_selector_string(labels: &Value) -> String {
    selector_string(&json!({"matchLabels": labels}))
}

/// The body of a write as JSON.
pub(crate) fn body_json(req: &Request, kind: &str) -> ApiResult<Value> {
    let v: Value = serde_json::from_slice(&req.body).map_err(|e| {
        ApiError::bad_request(format!(
            "the body of the request is not a valid {kind}: {e}"
        ))
    })?;
    if !v.is_object() {
        return Err(ApiError::bad_request(format!(
            "the body of the request is not a valid {kind}"
        )));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_should_print_as_label_selector_strings() {
        let s = json!({
            "matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["web", "api"]},
                {"key": "env", "operator": "NotIn", "values": ["dev"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "app", "operator": "Exists"}
            ]
        });
        assert_eq!(
            selector_string(&s),
            "a=1,app,b=2,!canary,env notin (dev),tier in (api,web)"
        );
        assert_eq!(selector_string(&json!({})), "");
        assert_eq!(map_selector_string(&json!({"app": "x"})), "app=x");
    }
}
