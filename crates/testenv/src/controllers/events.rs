//! The Events the workload controllers record, as client-go's legacy event recorder writes them
//! (`record.EventRecorder` with `EventSinkImpl`): a core/v1 Event named
//! `<object>.<nanoseconds in hex>` about the object, with the controller as its source and
//! reporting component, `count: 1` and both timestamps now. Repeats are not aggregated.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use http::Method;
use serde_json::{Value, json};

use super::requests::{self, collection};
use crate::server::Shared;

/// One Event to record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Event {
    /// `Normal` or `Warning`.
    pub(crate) kind: &'static str,
    /// The reason (`SuccessfulCreate`, ...).
    pub(crate) reason: &'static str,
    /// The message.
    pub(crate) message: String,
}

impl Event {
    /// A `Normal` Event.
    pub(crate) fn normal(reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind: "Normal",
            reason,
            message: message.into(),
        }
    }

    /// A `Warning` Event.
    pub(crate) fn warning(reason: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind: "Warning",
            reason,
            message: message.into(),
        }
    }
}

/// Records `event` about `object` (of `api_version` and `kind`) from `component`.
pub(crate) async fn record(
    shared: &Arc<Shared>,
    component: &str,
    object: &Value,
    api_version: &str,
    kind: &str,
    event: &Event,
) {
    let str_at = |p: &str| {
        object
            .pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let ns = str_at("/metadata/namespace");
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let now = crate::meta::now_rfc3339();
    let body = json!({
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": format!("{}.{nanos:x}", str_at("/metadata/name")),
            "namespace": ns
        },
        "involvedObject": {
            "kind": kind,
            "namespace": ns,
            "name": str_at("/metadata/name"),
            "uid": str_at("/metadata/uid"),
            "apiVersion": api_version,
            "resourceVersion": str_at("/metadata/resourceVersion")
        },
        "reason": event.reason,
        "message": event.message,
        "source": {"component": component},
        "firstTimestamp": now,
        "lastTimestamp": now,
        "count": 1,
        "type": event.kind,
        "eventTime": null,
        "reportingComponent": component,
        "reportingInstance": ""
    });
    let path = collection("v1", ns, "events");
    requests::send(shared, Method::POST, &path, "", Some(&body)).await;
}
