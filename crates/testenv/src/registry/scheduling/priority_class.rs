//! PriorityClasses, as kube-apiserver's `priorityclass` strategy and
//! `pkg/apis/scheduling/validation`: `metadata.generation` is 1 from the create on (and never
//! bumped); a user-defined class may not exceed 1,000,000,000, and a name with the `system-`
//! prefix must be one of the two system classes with its value; an update may not change
//! `value` or `preemptionPolicy`, and is not checked against the create rules again.

use serde_json::{Map, Value};

use crate::registry::ResourceDef;
use crate::registry::rest::{Generation, Strategy};
use crate::validation::field::FieldError;

/// The highest value a user-defined PriorityClass may have.
const HIGHEST_USER_DEFINABLE: i64 = 1_000_000_000;
const SYSTEM_PREFIX: &str = "system-";
/// kube-apiserver's system classes: name, value, globalDefault.
const SYSTEM_CLASSES: [(&str, i64); 2] = [
    ("system-node-critical", 2_000_001_000),
    ("system-cluster-critical", 2_000_000_000),
];

/// The PriorityClass strategy.
pub(crate) struct PriorityClassStrategy;

fn name_of(obj: &Map<String, Value>) -> &str {
    obj.get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `IsKnownSystemPriorityClass`'s refusal, if any.
fn system_class_error(name: &str, value: i64, global_default: bool) -> Option<String> {
    let Some((known, want)) = SYSTEM_CLASSES.iter().find(|(n, _)| *n == name) else {
        return Some(format!("{name} is not a known system priority class"));
    };
    if *want != value {
        return Some(format!("value of {known} PriorityClass must be {want}"));
    }
    if global_default {
        return Some(format!(
            "globalDefault of {known} PriorityClass must be false"
        ));
    }
    None
}

impl Strategy for PriorityClassStrategy {
    /// scheduling/v1's `SetDefaults_PriorityClass`: a class preempts lower priorities.
    fn defaults(&self, obj: &mut Map<String, Value>) {
        crate::defaults::json::or_insert_str(obj, "preemptionPolicy", "PreemptLowerPriority");
    }

    fn generation(&self) -> Generation {
        Generation::OnCreate
    }

    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        let mut errs = Vec::new();
        let name = name_of(obj);
        let value = obj.get("value").and_then(Value::as_i64).unwrap_or(0);
        if name.starts_with(SYSTEM_PREFIX) {
            let global_default = obj.get("globalDefault").and_then(Value::as_bool) == Some(true);
            if let Some(err) = system_class_error(name, value, global_default) {
                errs.push(FieldError::forbidden(
                    "metadata.name",
                    &format!(
                        "priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only. error: {err}"
                    ),
                ));
            }
        } else if value > HIGHEST_USER_DEFINABLE {
            errs.push(FieldError::forbidden(
                "value",
                &format!(
                    "maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE}"
                ),
            ));
        }
        if let Some(policy) = obj.get("preemptionPolicy").filter(|p| !p.is_null()) {
            let supported = ["Never", "PreemptLowerPriority"];
            if !policy.as_str().is_some_and(|p| supported.contains(&p)) {
                errs.push(FieldError::not_supported(
                    "preemptionPolicy",
                    policy,
                    &supported,
                ));
            }
        }
        errs
    }

    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        let mut errs = Vec::new();
        if old.get("value") != new.get("value") {
            errs.push(FieldError::forbidden(
                "value",
                "may not be changed in an update.",
            ));
        }
        let policy = new.get("preemptionPolicy").unwrap_or(&Value::Null);
        if old.get("preemptionPolicy").unwrap_or(&Value::Null) != policy {
            errs.push(FieldError::invalid(
                "preemptionPolicy",
                policy,
                "field is immutable",
            ));
        }
        errs
    }

    /// `ValidatePriorityClassUpdate` does not check the create rules again.
    fn validates_new_state_on_update(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def() -> ResourceDef {
        crate::registry::builtins()
            .into_iter()
            .find(|d| d.kind == "PriorityClass")
            .unwrap()
    }

    #[test]
    fn a_user_class_should_stay_under_the_system_values() {
        let pc = json!({"metadata": {"name": "high"}, "value": 1_000_000_001});
        let errs = PriorityClassStrategy.validate(&def(), pc.as_object().unwrap());
        assert_eq!(
            errs[0].message,
            "Forbidden: maximum allowed value of a user defined priority is 1000000000"
        );
        let pc = json!({"metadata": {"name": "system-mine"}, "value": 1});
        let errs = PriorityClassStrategy.validate(&def(), pc.as_object().unwrap());
        assert_eq!(
            errs[0].message,
            "Forbidden: priority class names with 'system-' prefix are reserved for system use \
             only. error: system-mine is not a known system priority class"
        );
    }

    #[test]
    fn value_and_preemption_policy_should_not_change() {
        let old = json!({"value": 10, "preemptionPolicy": "PreemptLowerPriority"});
        let new = json!({"value": 11, "preemptionPolicy": "Never"});
        let errs = PriorityClassStrategy.validate_update(&old, new.as_object().unwrap());
        let msgs: Vec<&str> = errs.iter().map(|e| e.message.as_str()).collect();
        assert_eq!(
            msgs,
            [
                "Forbidden: may not be changed in an update.",
                "Invalid value: \"Never\": field is immutable"
            ]
        );
    }
}
