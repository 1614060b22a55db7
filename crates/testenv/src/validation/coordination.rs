//! coordination.k8s.io/v1 Leases and events.k8s.io/v1 Events, as kube-apiserver validates
//! them: a lease's durations must be positive; an event needs `eventTime` and a known `type`,
//! and its `note` cannot change.

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

/// An update of an events.k8s.io/v1 Event: its `note` is immutable (kube-apiserver's
/// `ValidateEventUpdate` names the field of the internal Event, `message`, and the new value).
/// Only `series` is meant to change: a client counts a repeat there.
pub(crate) fn event_v1_update(old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
    let before = old.get("note").unwrap_or(&Value::Null);
    let after = new.get("note").unwrap_or(&Value::Null);
    if before == after {
        return Vec::new();
    }
    let shown = if after.is_null() {
        json!("")
    } else {
        after.clone()
    };
    vec![FieldError::invalid("message", &shown, "field is immutable")]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(note: Option<&str>) -> Map<String, Value> {
        let mut e = json!({"eventTime": "2026-01-01T00:00:00.000000Z", "type": "Normal",
            "series": {"count": 2, "lastObservedTime": "2026-01-01T00:00:01.000000Z"}});
        if let Some(n) = note {
            e["note"] = json!(n);
        }
        e.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn an_events_v1_update_should_keep_its_note() {
        let old = Value::Object(event(Some("a")));
        let mut counted = event(Some("a"));
        counted["series"]["count"] = json!(3);
        assert!(event_v1_update(&old, &counted).is_empty());
        let changed = event_v1_update(&old, &event(Some("b")));
        assert_eq!(
            changed,
            vec![FieldError::invalid(
                "message",
                &json!("b"),
                "field is immutable"
            )]
        );
        assert_eq!(event_v1_update(&old, &event(None)).len(), 1);
        assert!(event_v1_update(&Value::Object(event(None)), &event(None)).is_empty());
    }
}
