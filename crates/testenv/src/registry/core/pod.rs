//! Pods: the strategy around the shared pod-spec defaults ([`crate::defaults::pod`]) and
//! validation ([`crate::validation::core::pod_spec`]).

use serde_json::{Map, Value, json};

use crate::meta::{self, metadata_mut};
use crate::registry::ResourceDef;
use crate::registry::rest::Strategy;
use crate::store::Store;
use crate::validation::{self, field::FieldError};

/// The Pod strategy: pod-spec defaults, the initial `Pending` status with its QoS class, and
/// graceful deletion.
pub(crate) struct PodStrategy;

impl Strategy for PodStrategy {
    fn defaults(&self, obj: &mut Map<String, Value>) {
        crate::defaults::pod::pod(obj);
    }

    /// The initial status: `Pending`, with the pod's QoS class; a negative grace period becomes
    /// 1 (kube-apiserver has refused negative ones since they meant "delete at once").
    fn prepare_for_create(&self, _store: &Store, _namespace: &str, obj: &mut Map<String, Value>) {
        clamp_grace_period(obj);
        let qos = obj
            .get("spec")
            .and_then(Value::as_object)
            .map_or("BestEffort", qos_class);
        obj.insert(
            "status".into(),
            json!({"phase": "Pending", "qosClass": qos}),
        );
    }

    fn prepare_for_update(&self, _old: &Value, new: &mut Map<String, Value>) {
        clamp_grace_period(new);
    }

    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        validation::core::pod_spec(obj.get("spec"), "spec")
    }

    /// A Pod is deleted gracefully with a grace period of 0 (no kubelet runs it): its last
    /// state carries the deletion timestamp and, as Pods count graceful deletion as a change, a
    /// new generation.
    fn deleted_state(&self, obj: &Value) -> Option<Value> {
        let mut last = obj.clone();
        let meta = metadata_mut(last.as_object_mut()?);
        if meta.get("deletionTimestamp").is_none() {
            meta.insert(
                "deletionTimestamp".into(),
                Value::String(meta::now_rfc3339()),
            );
            if let Some(g) = meta.get("generation").and_then(Value::as_i64) {
                meta.insert("generation".into(), json!(g + 1));
            }
        }
        meta.insert("deletionGracePeriodSeconds".into(), json!(0));
        Some(last)
    }
}

/// `spec.terminationGracePeriodSeconds` below 0 set to 1.
fn clamp_grace_period(obj: &mut Map<String, Value>) {
    if let Some(grace) = obj
        .get_mut("spec")
        .and_then(|s| s.get_mut("terminationGracePeriodSeconds"))
        && grace.as_i64().is_some_and(|g| g < 0)
    {
        *grace = json!(1);
    }
}

/// The QoS class of a pod spec: `Guaranteed` when every container limits CPU and memory and
/// requests what it limits, `BestEffort` when none requests or limits either, else `Burstable`.
/// (Quantities are compared as written.)
pub(crate) fn qos_class(spec: &Map<String, Value>) -> &'static str {
    let mut any = false;
    let mut guaranteed = true;
    for list in ["initContainers", "containers"] {
        for c in spec
            .get(list)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let of = |k: &str| {
                c.pointer(&format!("/resources/{k}"))
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default()
            };
            let (requests, limits) = (of("requests"), of("limits"));
            for r in ["cpu", "memory"] {
                let request = requests.get(r).filter(|q| !is_zero(q));
                let limit = limits.get(r).filter(|q| !is_zero(q));
                any |= request.is_some() || limit.is_some();
                if limit.is_none() || request.is_some_and(|q| Some(q) != limit) {
                    guaranteed = false;
                }
            }
        }
    }
    match (any, guaranteed) {
        (false, _) => "BestEffort",
        (true, true) => "Guaranteed",
        (true, false) => "Burstable",
    }
}

/// Whether a quantity is zero (`0`, `"0"`, `"0m"`, `"0.0Gi"`).
fn is_zero(q: &Value) -> bool {
    match q {
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => {
            let number: String = s
                .chars()
                .take_while(|c| c.is_ascii_digit() || matches!(c, '.' | '+' | '-'))
                .filter(char::is_ascii_digit)
                .collect();
            !number.is_empty() && number.chars().all(|c| c == '0')
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_qos_class_should_follow_requests_and_limits() {
        let spec = |r: Value| {
            json!({"containers": [{"name": "a", "resources": r}]})
                .as_object()
                .cloned()
                .unwrap()
        };
        assert_eq!(qos_class(&spec(json!({}))), "BestEffort");
        assert_eq!(
            qos_class(&spec(json!({"limits": {"cpu": "1", "memory": "1Gi"},
                                   "requests": {"cpu": "1", "memory": "1Gi"}}))),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&spec(json!({"requests": {"cpu": "1"}}))),
            "Burstable"
        );
    }
}
