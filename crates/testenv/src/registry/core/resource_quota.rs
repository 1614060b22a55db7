//! ResourceQuotas: a new quota's status is empty (`status: {}`) until the quota controller
//! fills it (kube-apiserver's `PrepareForCreate` resets it). `ValidateResourceQuotaSpec`'s
//! `hard` limits: each resource a standard quota resource or a qualified name with a prefix,
//! each amount not negative, and whole for the resources counted in objects; `scopes` known
//! and not conflicting (`BestEffort` with `NotBestEffort`, `Terminating` with
//! `NotTerminating`; which scope suits which resource is not checked).

use serde_json::{Map, Value, json};

use crate::registry::ResourceDef;
use crate::registry::rest::Strategy;
use crate::store::Store;
use crate::validation::field::FieldError;
use crate::validation::names;

/// The ResourceQuota strategy.
pub(crate) struct ResourceQuotaStrategy;

/// The resources a quota may limit by their plain names.
const QUOTA_RESOURCES: [&str; 19] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

/// The resources counted in whole objects.
const INTEGER_RESOURCES: [&str; 9] = [
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

fn is_quota_resource(name: &str) -> bool {
    QUOTA_RESOURCES.contains(&name)
        || name.starts_with("hugepages-")
        || name.starts_with("requests.hugepages-")
}

/// A quantity's value in thousandths, from its text (`None`: unreadable).
fn milli_value(q: &Value) -> Option<f64> {
    crate::admission::quantity::Quantity::from_value(q).map(|q| q.as_f64() * 1000.0)
}

fn quantity_text(q: &Value) -> Value {
    match q {
        Value::String(_) => q.clone(),
        other => json!(other.to_string()),
    }
}

/// `ValidateResourceQuotaSpec`'s `hard` entries.
fn quota_spec(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let hard = obj
        .get("spec")
        .and_then(|s| s.get("hard"))
        .and_then(Value::as_object);
    let mut entries: Vec<(&String, &Value)> = hard.into_iter().flatten().collect();
    entries.sort_by_key(|(k, _)| *k);
    for (name, amount) in entries {
        let at = format!("spec.hard[{name}]");
        let name_errs = names::qualified_name(name);
        let plain = !name.contains('/');
        for msg in &name_errs {
            errs.push(FieldError::invalid(&at, &json!(name), msg));
        }
        if name_errs.is_empty() && plain && !is_quota_resource(name) && name != "storage" {
            errs.push(FieldError::invalid(
                &at,
                &json!(name),
                "must be a standard resource type or fully qualified",
            ));
        }
        if plain && !is_quota_resource(name) {
            errs.push(FieldError::invalid(
                &at,
                &json!(name),
                "must be a standard resource for quota",
            ));
        }
        let milli = milli_value(amount);
        if milli.is_some_and(|m| m < 0.0) {
            errs.push(FieldError::invalid(
                &at,
                &quantity_text(amount),
                "must be greater than or equal to 0",
            ));
        }
        let integer = INTEGER_RESOURCES.contains(&name.as_str()) || name.starts_with("count/");
        if integer && milli.is_some_and(|m| m.round() % 1000.0 != 0.0) {
            errs.push(FieldError::invalid(
                &at,
                &quantity_text(amount),
                "must be an integer",
            ));
        }
    }
    errs
}

/// `validateResourceQuotaScopes`, but for the scopes' fit to the limited resources.
fn quota_scopes(obj: &Map<String, Value>, errs: &mut Vec<FieldError>) {
    let Some(scopes) = obj
        .get("spec")
        .and_then(|s| s.get("scopes"))
        .and_then(Value::as_array)
        .filter(|s| !s.is_empty())
    else {
        return;
    };
    let shown = Value::Array(scopes.clone());
    let names: Vec<&str> = scopes.iter().filter_map(Value::as_str).collect();
    for scope in scopes {
        let known = matches!(
            scope.as_str(),
            Some(
                "Terminating"
                    | "NotTerminating"
                    | "BestEffort"
                    | "NotBestEffort"
                    | "PriorityClass"
                    | "CrossNamespacePodAffinity"
                    | "VolumeAttributesClass"
            )
        );
        if !known {
            errs.push(FieldError::invalid(
                "spec.scopes",
                &shown,
                "unsupported scope",
            ));
        }
    }
    for (a, b) in [
        ("BestEffort", "NotBestEffort"),
        ("Terminating", "NotTerminating"),
    ] {
        if names.contains(&a) && names.contains(&b) {
            errs.push(FieldError::invalid(
                "spec.scopes",
                &shown,
                "conflicting scopes",
            ));
        }
    }
}

impl Strategy for ResourceQuotaStrategy {
    fn prepare_for_create(&self, _store: &Store, _namespace: &str, obj: &mut Map<String, Value>) {
        obj.insert("status".into(), json!({}));
    }

    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        let mut errs = quota_spec(obj);
        quota_scopes(obj, &mut errs);
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hard_limits_should_name_quota_resources_with_sane_amounts() {
        let rq = json!({"spec": {"hard": {"pods": "1500m", "requests.cpu": "-1",
            "count/deployments.apps": "3", "gpus": "1", "example.com/widgets": "2"}}});
        let got: Vec<(String, String)> = quota_spec(rq.as_object().unwrap())
            .into_iter()
            .map(|e| (e.field, e.message))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "spec.hard[gpus]",
                    "Invalid value: \"gpus\": must be a standard resource type or fully qualified"
                ),
                (
                    "spec.hard[gpus]",
                    "Invalid value: \"gpus\": must be a standard resource for quota"
                ),
                (
                    "spec.hard[pods]",
                    "Invalid value: \"1500m\": must be an integer"
                ),
                (
                    "spec.hard[requests.cpu]",
                    "Invalid value: \"-1\": must be greater than or equal to 0"
                ),
            ]
            .map(|(f, m)| (f.to_owned(), m.to_owned()))
        );
    }

    #[test]
    fn scopes_should_be_known_and_not_conflict() {
        let rq = json!({"spec": {"hard": {"pods": "1"},
            "scopes": ["Terminating", "NotTerminating", "Cheap"]}});
        let mut errs = Vec::new();
        quota_scopes(rq.as_object().unwrap(), &mut errs);
        let shown = "[\"Terminating\",\"NotTerminating\",\"Cheap\"]";
        assert_eq!(
            errs.into_iter()
                .map(|e| (e.field, e.message))
                .collect::<Vec<_>>(),
            [
                (
                    "spec.scopes".to_owned(),
                    format!("Invalid value: {shown}: unsupported scope")
                ),
                (
                    "spec.scopes".to_owned(),
                    format!("Invalid value: {shown}: conflicting scopes")
                ),
            ]
        );
    }
}
