//! `componentstatuses` (`v1`, `get` and `list`), as kube-apiserver's component status registry
//! answers them: not stored objects but the health of the control plane's parts, probed at
//! each request.
//!
//! kube-apiserver probes `etcd-0` (its storage), `scheduler` (`https://127.0.0.1:10259/healthz`)
//! and `controller-manager` (`https://127.0.0.1:10257/healthz`). kcr-testenv answers for them
//! as follows:
//!
//! - `etcd-0`: `Healthy` `True` with the message `ok`, as kube-apiserver reports a storage that
//!   answers. kcr-testenv's storage is in memory, in the same process, and always answers: the
//!   one component it can report truthfully.
//! - `scheduler` and `controller-manager`: kcr-testenv runs neither, so they are `Healthy`
//!   `False` with the message a kube-apiserver writes when nothing listens on their port
//!   (`connection refused`). No probe is sent: that message stands for the absence.
//!
//! A `get` of any other name answers as kube-apiserver does: `500` with the message
//! `Component not found: <name>` and no reason. Label and field selectors filter the list (no
//! component has labels; `metadata.name` may be selected).

use http::{Method, Response};
use serde_json::{Value, json};

use crate::body::Body;
use crate::endpoints::Target;
use crate::registry::field_labels::FieldLabels;
use crate::selector::{FieldSelector, LabelSelector};
use crate::server::{Request, error_response, json_response};
use crate::status::ApiError;

/// The components, in kube-apiserver's terms: name, health and message.
const COMPONENTS: &[(&str, &str, &str)] = &[
    (
        "scheduler",
        "False",
        "Get \"https://127.0.0.1:10259/healthz\": dial tcp 127.0.0.1:10259: connect: connection refused",
    ),
    (
        "controller-manager",
        "False",
        "Get \"https://127.0.0.1:10257/healthz\": dial tcp 127.0.0.1:10257: connect: connection refused",
    ),
    ("etcd-0", "True", "ok"),
];

fn status_of(name: &str, healthy: &str, message: &str) -> Value {
    json!({
        "kind": "ComponentStatus",
        "apiVersion": "v1",
        "metadata": {"name": name},
        "conditions": [{"type": "Healthy", "status": healthy, "message": message}],
    })
}

/// The components a list's label and field selectors keep (`metadata.name` is the one field).
fn selected(req: &Request) -> Result<Vec<Value>, ApiError> {
    let labels = LabelSelector::parse(req.param("labelSelector").unwrap_or_default())?;
    let fields = FieldSelector::parse(
        req.param("fieldSelector").unwrap_or_default(),
        FieldLabels::metadata(),
    )?;
    Ok(COMPONENTS
        .iter()
        .map(|(n, h, m)| status_of(n, h, m))
        .filter(|c| labels.matches(c) && fields.matches(c))
        .collect())
}

/// Serves `GET` of `componentstatuses` (a watch is left to the caller, which refuses it);
/// `None` for any other request.
pub(crate) fn handle(req: &Request, t: &Target) -> Option<Response<Body>> {
    if !(t.def.group.is_empty() && t.def.plural == "componentstatuses")
        || t.sub.is_some()
        || req.method != Method::GET
        || req.param("watch").is_some_and(|w| w == "true" || w == "1")
    {
        return None;
    }
    let found = |name: &str| COMPONENTS.iter().find(|(n, _, _)| *n == name);
    Some(match t.name.as_deref() {
        Some(name) => match found(name) {
            Some((n, h, m)) => json_response(200, to_vec(&status_of(n, h, m))),
            None => error_response(&ApiError::new(
                500,
                "",
                format!("Component not found: {name}"),
            )),
        },
        None => match selected(req) {
            Ok(items) => {
                let list = json!({
                    "kind": "ComponentStatusList",
                    "apiVersion": "v1",
                    "metadata": {},
                    "items": items,
                });
                json_response(200, to_vec(&list))
            }
            Err(e) => error_response(&e),
        },
    })
}

fn to_vec(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap_or_default()
}
