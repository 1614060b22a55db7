//! Pods: the strategy around the shared pod-spec defaults ([`crate::defaults::pod`]) and
//! validation ([`crate::validation::core::pod_spec`]).

use serde_json::{Map, Value, json};

use crate::meta::{self, metadata_mut};
use crate::registry::ResourceDef;
use crate::registry::rest::{Generation, Strategy};
use crate::store::Store;
use crate::validation::{self, field::FieldError};
use crate::wire::go_internal;

/// The Pod strategy: pod-spec defaults, the initial `Pending` status with its QoS class, and
/// graceful deletion.
pub(crate) struct PodStrategy;

impl Strategy for PodStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

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
        let mut status = json!({"phase": "Pending", "qosClass": qos});
        // A Pod created with scheduling gates says why it is not scheduled
        // (`applySchedulingGatedCondition`).
        let gated = obj
            .get("spec")
            .and_then(|s| s.get("schedulingGates"))
            .and_then(Value::as_array)
            .is_some_and(|g| !g.is_empty());
        if gated {
            status["conditions"] = json!([{
                "type": "PodScheduled",
                "status": "False",
                "lastProbeTime": null,
                "lastTransitionTime": meta::now_rfc3339(),
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
            }]);
        }
        obj.insert("status".into(), status);
    }

    fn prepare_for_update(&self, _old: &Value, new: &mut Map<String, Value>) {
        clamp_grace_period(new);
    }

    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        validation::core::pod_spec(obj.get("spec"), "spec")
    }

    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        spec_update(old.get("spec"), new.get("spec"))
    }

    fn validates_new_state_first(&self) -> bool {
        true
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

/// What a Pod update may change, as `ValidatePodUpdate` lists it.
const UPDATABLE: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

fn array<'a>(spec: Option<&'a Value>, key: &str) -> &'a [Value] {
    spec.and_then(|s| s.get(key))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `ValidatePodUpdate`'s rules for the spec: the same containers (only their images may
/// change), an `activeDeadlineSeconds` that may only be set or lowered, tolerations that may
/// only be added (or change their `tolerationSeconds`), scheduling gates that may only be
/// removed; anything else that differs is refused with the diff of the old spec and the new one
/// (with what may change taken from the old), as the internal Go types encode them.
pub(crate) fn spec_update(old: Option<&Value>, new: Option<&Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    for (key, path) in [
        ("containers", "spec.containers"),
        ("initContainers", "spec.initContainers"),
    ] {
        let (before, after) = (array(old, key), array(new, key));
        if before.len() != after.len() {
            errs.push(FieldError::forbidden(
                path,
                "pod updates may not add or remove containers",
            ));
            return errs;
        }
        for (i, c) in after.iter().enumerate() {
            if c.get("image")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                errs.push(FieldError::required(format!("{path}[{i}].image"), ""));
            }
        }
    }
    let deadline = |s: Option<&Value>| {
        s.and_then(|s| s.get("activeDeadlineSeconds"))
            .and_then(Value::as_i64)
    };
    let path = "spec.activeDeadlineSeconds";
    match (deadline(old), deadline(new)) {
        (_, Some(n)) if !(0..=i64::from(i32::MAX)).contains(&n) => {
            errs.push(FieldError::invalid(
                path,
                &json!(n),
                "must be between 0 and 2147483647, inclusive",
            ));
            return errs;
        }
        (Some(o), Some(n)) if o < n => {
            errs.push(FieldError::invalid(
                path,
                &json!(n),
                "must be less than or equal to previous value",
            ));
            return errs;
        }
        (Some(_), None) => errs.push(FieldError::invalid(
            path,
            &Value::Null,
            "must not update from a positive integer to nil value",
        )),
        _ => {}
    }
    // Tolerations: each old one must still be there (its tolerationSeconds may change).
    let new_tolerations = array(new, "tolerations");
    for before in array(old, "tolerations") {
        let without_seconds = |t: &Value| {
            let mut t = t.as_object().cloned().unwrap_or_default();
            t.remove("tolerationSeconds");
            t
        };
        if !new_tolerations
            .iter()
            .any(|t| without_seconds(t) == without_seconds(before))
        {
            errs.push(FieldError::forbidden(
                "spec.tolerations",
                "existing toleration can not be modified except its tolerationSeconds",
            ));
            break;
        }
    }
    // Scheduling gates may only be removed.
    let old_gates = array(old, "schedulingGates");
    for (i, gate) in array(new, "schedulingGates").iter().enumerate() {
        if !old_gates.contains(gate) {
            let name = gate.get("name").and_then(Value::as_str).unwrap_or_default();
            errs.push(FieldError::forbidden(
                format!("spec.schedulingGates[{i}].name"),
                &format!("only deletion is allowed, but found new scheduling gate '{name}'"),
            ));
        }
    }
    // The new spec with what may change taken from the old one.
    let mut munged = new.cloned().unwrap_or_else(|| json!({}));
    if let Some(m) = munged.as_object_mut() {
        for key in ["containers", "initContainers"] {
            let before = array(old, key).to_vec();
            if let Some(Value::Array(after)) = m.get_mut(key) {
                for (c, o) in after.iter_mut().zip(&before) {
                    if let (Some(c), Some(image)) = (c.as_object_mut(), o.get("image")) {
                        c.insert("image".into(), image.clone());
                    }
                }
            }
        }
        for key in ["activeDeadlineSeconds", "tolerations", "schedulingGates"] {
            match old.and_then(|o| o.get(key)) {
                Some(v) => m.insert(key.into(), v.clone()),
                None => m.remove(key),
            };
        }
        let grace = |s: Option<&Value>| {
            s.and_then(|s| s.get("terminationGracePeriodSeconds"))
                .and_then(Value::as_i64)
        };
        if grace(old).is_some_and(|g| g < 0)
            && grace(Some(&Value::Object(m.clone()))) == Some(1)
            && let Some(g) = old.and_then(|o| o.get("terminationGracePeriodSeconds"))
        {
            m.insert("terminationGracePeriodSeconds".into(), g.clone());
        }
        // A Pod with scheduling gates may gain node selector entries (no change or removal).
        if !old_gates.is_empty() {
            let selector = |s: Option<&Value>| {
                s.and_then(|s| s.get("nodeSelector"))
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default()
            };
            let (before, after) = (selector(old), selector(Some(&Value::Object(m.clone()))));
            if before != after {
                if before.iter().any(|(k, v)| after.get(k) != Some(v)) {
                    errs.push(FieldError {
                        field: "spec.nodeSelector".into(),
                        reason: "FieldValueInvalid",
                        message: format!(
                            "Invalid value: {}: only additions to spec.nodeSelector are allowed (no mutations or deletions)",
                            go_string_map(m.get("nodeSelector"))
                        ),
                    });
                }
                match old.and_then(|o| o.get("nodeSelector")) {
                    Some(v) => m.insert("nodeSelector".into(), v.clone()),
                    None => m.remove("nodeSelector"),
                };
            }
        }
    }
    let before = go_internal::pod_spec_json_indented(old);
    let after = go_internal::pod_spec_json_indented(Some(&munged));
    if before != after {
        let diff = crate::wire::difflib::unified_diff(&before, &after, 3);
        errs.push(FieldError::forbidden(
            "spec",
            &format!("pod updates may not change fields other than {UPDATABLE}\n{diff}"),
        ));
    }
    errs
}

/// Go's `%#v` of a `map[string]string` (`map[string]string{"a":"b"}`, `map[string]string(nil)`).
fn go_string_map(v: Option<&Value>) -> String {
    let Some(Value::Object(m)) = v else {
        return "map[string]string(nil)".into();
    };
    let entries: Vec<String> = m
        .iter()
        .map(|(k, v)| {
            format!(
                "{}:{}",
                crate::wire::go_strconv::go_quote(k),
                crate::wire::go_strconv::go_quote(v.as_str().unwrap_or_default())
            )
        })
        .collect();
    format!("map[string]string{{{}}}", entries.join(", "))
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
