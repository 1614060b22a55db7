//! PodDisruptionBudgets: the kind keeps `metadata.generation`, and `ValidatePodDisruptionBudget`
//! checks the spec on create and update alike: `minAvailable` and `maxUnavailable` exclusive,
//! each a non-negative number or a percentage of at most 100%, the selector, the unhealthy pod
//! eviction policy. The strategy validates no name format of its own: the name only has to be
//! a valid path segment.

use serde_json::{Map, Value, json};

use crate::registry::ResourceDef;
use crate::registry::autoscaling::path_segment_name;
use crate::registry::networking::label_selector;
use crate::registry::rest::{Generation, NameRule, Strategy};
use crate::validation::field::FieldError;

const PERCENT_MSG: &str = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/// The PodDisruptionBudget strategy.
pub(crate) struct PodDisruptionBudgetStrategy;

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent` of the value at `path`.
fn int_or_percent(value: &Value, path: &str, errs: &mut Vec<FieldError>) {
    match value {
        Value::String(s) => {
            let digits = s.strip_suffix('%');
            let valid =
                digits.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
            if !valid {
                errs.push(FieldError::invalid(path, value, PERCENT_MSG));
            } else if digits
                .and_then(|d| d.parse::<u64>().ok())
                .is_none_or(|n| n > 100)
            {
                errs.push(FieldError::invalid(
                    path,
                    value,
                    "must not be greater than 100%",
                ));
            }
        }
        Value::Number(n) if n.as_i64().is_some_and(|n| n < 0) => {
            errs.push(FieldError::invalid(
                path,
                value,
                "must be greater than or equal to 0",
            ));
        }
        _ => {}
    }
}

/// A label selector as Go's JSON writes it (`matchLabels` before `matchExpressions`).
fn selector_json(sel: &Value) -> String {
    let mut parts = Vec::new();
    for key in ["matchLabels", "matchExpressions"] {
        if let Some(v) = sel.get(key).filter(|v| !v.is_null()) {
            parts.push(format!("{}:{v}", json!(key)));
        }
    }
    format!("{{{}}}", parts.join(","))
}

/// The spec as Go's JSON writes the internal type (its fields in declaration order).
fn spec_json(spec: &Value) -> String {
    let mut parts = Vec::new();
    for key in [
        "minAvailable",
        "selector",
        "maxUnavailable",
        "unhealthyPodEvictionPolicy",
    ] {
        if let Some(v) = spec.get(key).filter(|v| !v.is_null()) {
            let text = if key == "selector" {
                selector_json(v)
            } else {
                v.to_string()
            };
            parts.push(format!("{}:{text}", json!(key)));
        }
    }
    format!("{{{}}}", parts.join(","))
}

/// `ValidatePodDisruptionBudgetSpec`.
fn pdb_spec(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    let get = |key: &str| spec.get(key).filter(|v| !v.is_null());
    if get("minAvailable").is_some() && get("maxUnavailable").is_some() {
        errs.push(FieldError {
            field: "spec".into(),
            reason: "FieldValueInvalid",
            message: format!(
                "Invalid value: {}: minAvailable and maxUnavailable cannot be both set",
                spec_json(spec)
            ),
        });
    }
    for key in ["minAvailable", "maxUnavailable"] {
        if let Some(v) = get(key) {
            int_or_percent(v, &format!("spec.{key}"), &mut errs);
        }
    }
    label_selector(get("selector"), "spec.selector", &mut errs);
    if let Some(policy) = get("unhealthyPodEvictionPolicy").and_then(Value::as_str)
        && !matches!(policy, "AlwaysAllow" | "IfHealthyBudget")
    {
        errs.push(FieldError::not_supported(
            "spec.unhealthyPodEvictionPolicy",
            &json!(policy),
            &["AlwaysAllow", "IfHealthyBudget"],
        ));
    }
    errs
}

impl Strategy for PodDisruptionBudgetStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }

    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        pdb_spec(obj)
    }

    fn name_rule(&self) -> NameRule {
        path_segment_name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn causes(errs: Vec<FieldError>) -> Vec<(String, String)> {
        errs.into_iter().map(|e| (e.field, e.message)).collect()
    }

    fn validate(v: Value) -> Vec<(String, String)> {
        causes(pdb_spec(v.as_object().unwrap()))
    }

    #[test]
    fn a_budget_should_set_one_bound_within_range() {
        assert_eq!(
            validate(json!({"spec": {"minAvailable": "150%", "maxUnavailable": -1,
                "selector": {"matchExpressions": [{"key": "app", "operator": "Is"}], "matchLabels": {"app": "web"}},
                "unhealthyPodEvictionPolicy": "Never"}})),
            [
                ("spec", "Invalid value: {\"minAvailable\":\"150%\",\"selector\":{\"matchLabels\":{\"app\":\"web\"},\"matchExpressions\":[{\"key\":\"app\",\"operator\":\"Is\"}]},\"maxUnavailable\":-1,\"unhealthyPodEvictionPolicy\":\"Never\"}: minAvailable and maxUnavailable cannot be both set"),
                ("spec.minAvailable", "Invalid value: \"150%\": must not be greater than 100%"),
                ("spec.maxUnavailable", "Invalid value: -1: must be greater than or equal to 0"),
                ("spec.selector.matchExpressions[0].operator", "Invalid value: \"Is\": not a valid selector operator"),
                ("spec.unhealthyPodEvictionPolicy", "Unsupported value: \"Never\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\""),
            ]
            .map(|(f, m)| (f.to_owned(), m.to_owned()))
        );
        assert_eq!(
            validate(json!({"spec": {"minAvailable": "half"}})),
            [(
                "spec.minAvailable".to_owned(),
                format!("Invalid value: \"half\": {PERCENT_MSG}")
            )]
        );
        assert_eq!(
            validate(json!({"spec": {"maxUnavailable": "25%", "selector": {}}})),
            []
        );
    }
}
