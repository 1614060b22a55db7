//! The networking (`networking.k8s.io/v1`) kinds with rules of their own: NetworkPolicies
//! (`SetDefaults_NetworkPolicy`: a policy without `policyTypes` is an `Ingress` policy, and an
//! `Egress` one too when it has egress rules; ports are TCP unless they say otherwise) and
//! IngressClasses (parameters are cluster-scoped unless they say otherwise), and Ingresses.
//! All keep `metadata.generation`; their validation is in [`validation`].

mod validation;

pub(crate) use validation::label_selector;

use serde_json::{Map, Value, json};

use crate::defaults::json::{existing, items, or_insert};
use crate::registry::ResourceDef;
use crate::registry::rest::{Generation, Strategy};
use crate::validation::field::FieldError;

/// The Ingress strategy: `ValidateIngressCreate`, and on update `ValidateIngressUpdate` (the
/// new state, lenient with what the stored Ingress already had).
pub(crate) struct IngressStrategy;

impl Strategy for IngressStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }

    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        validation::ingress(obj, None)
    }

    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        validation::ingress(new, Some(old))
    }

    fn validates_new_state_on_update(&self) -> bool {
        false
    }
}

/// The NetworkPolicy strategy.
pub(crate) struct NetworkPolicyStrategy;

/// The IngressClass strategy.
pub(crate) struct IngressClassStrategy;

impl Strategy for NetworkPolicyStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }

    /// `ValidateNetworkPolicySpec` (create and update alike).
    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        validation::network_policy(obj)
    }

    fn defaults(&self, obj: &mut Map<String, Value>) {
        let Some(spec) = existing(obj, "spec") else {
            return;
        };
        for direction in ["ingress", "egress"] {
            for rule in items(spec, direction) {
                for port in items(rule, "ports") {
                    or_insert(port, "protocol", json!("TCP"));
                }
            }
        }
        if spec
            .get("policyTypes")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            let egress = spec
                .get("egress")
                .and_then(Value::as_array)
                .is_some_and(|e| !e.is_empty());
            let types = if egress {
                json!(["Ingress", "Egress"])
            } else {
                json!(["Ingress"])
            };
            spec.insert("policyTypes".into(), types);
        }
    }
}

impl Strategy for IngressClassStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }

    /// `validateIngressClassSpec`.
    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        validation::ingress_class(obj)
    }

    /// `ValidateIngressClassUpdate`: the controller may not change (checked before the new
    /// state).
    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        validation::ingress_class_update(old, new)
    }

    fn defaults(&self, obj: &mut Map<String, Value>) {
        if let Some(parameters) = existing(obj, "spec").and_then(|s| existing(s, "parameters")) {
            or_insert(parameters, "scope", json!("Cluster"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_with_egress_rules_should_be_an_egress_policy_too() {
        let mut np = json!({"spec": {"podSelector": {},
            "egress": [{"ports": [{"port": 53, "protocol": "UDP"}, {"port": 443}]}]}});
        NetworkPolicyStrategy.defaults(np.as_object_mut().unwrap());
        assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
        assert_eq!(np["spec"]["egress"][0]["ports"][0]["protocol"], "UDP");
        assert_eq!(np["spec"]["egress"][0]["ports"][1]["protocol"], "TCP");
    }
}
