//! coordination.k8s.io/v1 Leases and events.k8s.io/v1 Events, as kube-apiserver validates
//! them: a lease's durations must be positive; an event needs `eventTime` and a known `type`.

use serde_json::{Map, Value, json};

use super::field::FieldError;

/// `spec.leaseDurationSeconds` (and `spec.leaseTransitions`) of a Lease.
pub(crate) fn lease(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec");
    if let Some(d) = spec
        .and_then(|s| s.get("leaseDurationSeconds"))
        .and_then(Value::as_i64)
        && d <= 0
    {
        errs.push(FieldError::invalid(
            "spec.leaseDurationSeconds",
            &json!(d),
            "must be greater than 0",
        ));
    }
    if let Some(t) = spec
        .and_then(|s| s.get("leaseTransitions"))
        .and_then(Value::as_i64)
        && t < 0
    {
        errs.push(FieldError::invalid(
            "spec.leaseTransitions",
            &json!(t),
            "must be greater than or equal to 0",
        ));
    }
    errs
}

/// An events.k8s.io/v1 Event: `eventTime` is required and `type` is `Normal` or `Warning`.
pub(crate) fn event_v1(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if obj.get("eventTime").is_none_or(Value::is_null) {
        errs.push(FieldError::required("eventTime", ""));
    }
    let ty = obj.get("type").and_then(Value::as_str).unwrap_or_default();
    if !matches!(ty, "Normal" | "Warning") {
        // kube-apiserver reports the value as "" and names it in the detail.
        errs.push(FieldError::invalid(
            "type",
            &json!(""),
            &format!("has invalid value: {ty}"),
        ));
    }
    errs
}
