//! apps/v1 workloads (Deployments, ReplicaSets, StatefulSets, DaemonSets), as kube-apiserver's
//! `pkg/apis/apps/validation`: a selector is required, must match the template's labels and
//! cannot change; the template needs containers.

use serde_json::{Map, Value};

use super::core;
use super::field::FieldError;

/// Whether `labels` satisfy `selector`'s `matchLabels` and `matchExpressions`.
pub(crate) fn selects(selector: &Value, labels: &Map<String, Value>) -> bool {
    let match_labels = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let expressions = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .all(|e| {
            let key = e.get("key").and_then(Value::as_str).unwrap_or_default();
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let actual = labels.get(key).and_then(Value::as_str);
            match e
                .get("operator")
                .and_then(Value::as_str)
                .unwrap_or_default()
            {
                "In" => actual.is_some_and(|a| values.contains(&a)),
                "NotIn" => actual.is_none_or(|a| !values.contains(&a)),
                "Exists" => actual.is_some(),
                "DoesNotExist" => actual.is_none(),
                _ => false,
            }
        });
    match_labels && expressions
}

fn selector_is_empty(selector: &Value) -> bool {
    let none = |k: &str| {
        selector.get(k).is_none_or(|v| {
            v.as_object().is_some_and(Map::is_empty) || v.as_array().is_some_and(Vec::is_empty)
        })
    };
    none("matchLabels") && none("matchExpressions")
}

/// The selector and template of a workload.
pub(crate) fn workload(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = obj.get("spec");
    let selector = spec
        .and_then(|s| s.get("selector"))
        .filter(|s| !s.is_null());
    let template = spec.and_then(|s| s.get("template"));
    let labels = template
        .and_then(|t| t.pointer("/metadata/labels"))
        .and_then(Value::as_object);
    match selector {
        None => errs.push(FieldError::required("spec.selector", "")),
        Some(sel) if selector_is_empty(sel) => errs.push(FieldError::invalid(
            "spec.selector",
            sel,
            "empty selector is invalid for deployment",
        )),
        Some(_) => {}
    }
    let matches = match (selector, labels) {
        (Some(sel), Some(labels)) => selector_is_empty(sel) || selects(sel, labels),
        _ => false,
    };
    if !matches {
        let shown = labels.map_or(Value::Null, |l| Value::Object(l.clone()));
        errs.push(FieldError::invalid(
            "spec.template.metadata.labels",
            &shown,
            "`selector` does not match template `labels`",
        ));
    }
    if let Some(replicas) = spec.and_then(|s| s.get("replicas")).and_then(Value::as_i64)
        && replicas < 0
    {
        errs.push(FieldError::invalid(
            "spec.replicas",
            &Value::from(replicas),
            "must be greater than or equal to 0",
        ));
    }
    errs.extend(core::pod_spec(
        template.and_then(|t| t.get("spec")),
        "spec.template.spec",
    ));
    // A Deployment that recreates its pods has no rolling update.
    if let Some(strategy) = spec.and_then(|s| s.get("strategy"))
        && strategy.get("type").and_then(Value::as_str) == Some("Recreate")
        && strategy.get("rollingUpdate").is_some_and(|r| !r.is_null())
    {
        errs.push(FieldError::forbidden(
            "spec.strategy.rollingUpdate",
            "may not be specified when strategy `type` is 'Recreate'",
        ));
    }
    // The pods of a workload's template always restart.
    if let Some(policy) = template
        .and_then(|t| t.pointer("/spec/restartPolicy"))
        .and_then(Value::as_str)
        .filter(|p| *p != "Always")
    {
        errs.push(FieldError::not_supported(
            "spec.template.spec.restartPolicy",
            &Value::from(policy),
            &["Always"],
        ));
    }
    errs
}

/// What a StatefulSet update may change in `spec` (`ValidateStatefulSetUpdate`).
const STATEFUL_SET_MUTABLE: &[&str] = &[
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

/// The update rules of the workload `kind`: a StatefulSet may change only
/// [`STATEFUL_SET_MUTABLE`]; the selector of a Deployment, ReplicaSet or DaemonSet cannot
/// change.
pub(crate) fn workload_update(
    kind: &str,
    old: &Value,
    new: &Map<String, Value>,
) -> Vec<FieldError> {
    let new_spec = new.get("spec");
    if kind == "StatefulSet" {
        let rest = |spec: Option<&Value>| -> Map<String, Value> {
            let mut m = spec.and_then(Value::as_object).cloned().unwrap_or_default();
            m.retain(|k, v| !STATEFUL_SET_MUTABLE.contains(&k.as_str()) && !v.is_null());
            m
        };
        if rest(old.get("spec")) != rest(new_spec) {
            return vec![FieldError::forbidden(
                "spec",
                "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            )];
        }
        return Vec::new();
    }
    let before = old.pointer("/spec/selector");
    let after = new_spec.and_then(|s| s.get("selector"));
    match (before, after) {
        (Some(b), Some(a)) if a != b => {
            vec![FieldError::invalid(
                "spec.selector",
                a,
                "field is immutable",
            )]
        }
        _ => Vec::new(),
    }
}

/// A DaemonSet's update strategy type (`ValidateDaemonSetUpdateStrategy`); the value shown is
/// the internal strategy as Go encodes it.
pub(crate) fn daemon_set(obj: &Map<String, Value>) -> Vec<FieldError> {
    let Some(strategy) = obj.get("spec").and_then(|s| s.get("updateStrategy")) else {
        return Vec::new();
    };
    let kind = strategy
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if matches!(kind, "RollingUpdate" | "OnDelete") {
        return Vec::new();
    }
    let rolling = match strategy.get("rollingUpdate").filter(|r| !r.is_null()) {
        Some(r) => format!(
            "{{\"MaxUnavailable\":{},\"MaxSurge\":{}}}",
            r.get("maxUnavailable").cloned().unwrap_or(Value::from(0)),
            r.get("maxSurge").cloned().unwrap_or(Value::from(0))
        ),
        None => "null".to_owned(),
    };
    vec![FieldError {
        field: "spec.updateStrategy".into(),
        reason: "FieldValueNotSupported",
        message: format!(
            "Unsupported value: {{\"Type\":{},\"RollingUpdate\":{rolling}}}: supported values: \"RollingUpdate\", \"OnDelete\"",
            Value::from(kind)
        ),
    }]
}

/// The internal `RollingUpdateStatefulSetStrategy` as Go encodes it in a message.
fn stateful_set_rolling_update(r: &Value) -> String {
    if r.is_null() {
        return "null".into();
    }
    format!(
        "{{\"Partition\":{},\"MaxUnavailable\":{}}}",
        r.get("partition").cloned().unwrap_or(Value::from(0)),
        r.get("maxUnavailable").cloned().unwrap_or(Value::Null)
    )
}

/// A StatefulSet's update strategy (`ValidateStatefulSetUpdateStrategy`): `OnDelete` takes no
/// `rollingUpdate`, another type than `RollingUpdate` or `OnDelete` is refused.
pub(crate) fn stateful_set(obj: &Map<String, Value>) -> Vec<FieldError> {
    let Some(strategy) = obj.get("spec").and_then(|s| s.get("updateStrategy")) else {
        return Vec::new();
    };
    let kind = strategy
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match kind {
        "RollingUpdate" => Vec::new(),
        "OnDelete" => match rolling {
            Some(r) => vec![FieldError {
                field: "spec.updateStrategy.rollingUpdate".into(),
                reason: "FieldValueInvalid",
                message: format!(
                    "Invalid value: {}: only allowed for updateStrategy 'RollingUpdate'",
                    stateful_set_rolling_update(r)
                ),
            }],
            None => Vec::new(),
        },
        "" => vec![FieldError {
            field: "spec.updateStrategy".into(),
            reason: "FieldValueRequired",
            message: "Required value".into(),
        }],
        other => vec![FieldError {
            field: "spec.updateStrategy".into(),
            reason: "FieldValueInvalid",
            message: format!(
                "Invalid value: {{\"Type\":{},\"RollingUpdate\":{}}}: must be 'RollingUpdate' or 'OnDelete'",
                Value::from(other),
                stateful_set_rolling_update(rolling.unwrap_or(&Value::Null))
            ),
        }],
    }
}
