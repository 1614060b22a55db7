//! The networking (`networking.k8s.io/v1`) kinds with rules of their own: NetworkPolicies
//! (`SetDefaults_NetworkPolicy`: a policy without `policyTypes` is an `Ingress` policy, and an
//! `Egress` one too when it has egress rules; ports are TCP unless they say otherwise) and
//! IngressClasses (parameters are cluster-scoped unless they say otherwise). Both keep
//! `metadata.generation`.

use serde_json::{Map, Value, json};

use crate::defaults::json::{existing, items, or_insert};
use crate::registry::rest::{Generation, Strategy};

/// The NetworkPolicy strategy.
pub(crate) struct NetworkPolicyStrategy;

/// The IngressClass strategy.
pub(crate) struct IngressClassStrategy;

impl Strategy for NetworkPolicyStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
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
