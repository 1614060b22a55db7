//! `admissionregistration.k8s.io/v1`: webhook configurations and admission policies, with the
//! defaults kube-apiserver's v1 defaulters set (`SetDefaults_ValidatingWebhook`,
//! `SetDefaults_MutatingWebhook`, `SetDefaults_Rule`, `SetDefaults_ServiceReference`,
//! `SetDefaults_ValidatingAdmissionPolicySpec`, `SetDefaults_MutatingAdmissionPolicySpec`,
//! `SetDefaults_MatchResources`). What the admission chain does with policies is in
//! `crate::admission::validating_admission_policy`.

use serde_json::{Map, Value, json};

use crate::defaults::json::{existing, items, or_insert};
use crate::registry::rest::{Generation, Strategy};
use crate::store::Store;

/// Which kind of the group a strategy defaults.
#[derive(Clone, Copy)]
enum Kind {
    ValidatingWebhookConfiguration,
    MutatingWebhookConfiguration,
    /// `ValidatingAdmissionPolicy`: `spec.failurePolicy` and `spec.matchConstraints`; a new
    /// policy's status is empty (`status: {}`) until the type checker writes it.
    ValidatingPolicy,
    /// `MutatingAdmissionPolicy`: the same defaults, and no status.
    MutatingPolicy,
    /// `ValidatingAdmissionPolicyBinding` and `MutatingAdmissionPolicyBinding`:
    /// `spec.matchResources`.
    Binding,
}

/// The strategy of one admissionregistration kind.
pub(crate) struct AdmissionRegistrationStrategy(Kind);

pub(crate) static VALIDATING_WEBHOOK_CONFIGURATION: AdmissionRegistrationStrategy =
    AdmissionRegistrationStrategy(Kind::ValidatingWebhookConfiguration);
pub(crate) static MUTATING_WEBHOOK_CONFIGURATION: AdmissionRegistrationStrategy =
    AdmissionRegistrationStrategy(Kind::MutatingWebhookConfiguration);
pub(crate) static VALIDATING_POLICY: AdmissionRegistrationStrategy =
    AdmissionRegistrationStrategy(Kind::ValidatingPolicy);
pub(crate) static MUTATING_POLICY: AdmissionRegistrationStrategy =
    AdmissionRegistrationStrategy(Kind::MutatingPolicy);
pub(crate) static BINDING: AdmissionRegistrationStrategy =
    AdmissionRegistrationStrategy(Kind::Binding);

impl Strategy for AdmissionRegistrationStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }

    fn defaults(&self, obj: &mut Map<String, Value>) {
        match self.0 {
            Kind::ValidatingWebhookConfiguration => {
                for webhook in items(obj, "webhooks") {
                    webhook_defaults(webhook);
                }
            }
            Kind::MutatingWebhookConfiguration => {
                for webhook in items(obj, "webhooks") {
                    webhook_defaults(webhook);
                    or_insert(webhook, "reinvocationPolicy", json!("Never"));
                }
            }
            Kind::ValidatingPolicy | Kind::MutatingPolicy => {
                if let Some(spec) = existing(obj, "spec") {
                    or_insert(spec, "failurePolicy", json!("Fail"));
                    if let Some(m) = existing(spec, "matchConstraints") {
                        match_resources_defaults(m);
                    }
                }
            }
            Kind::Binding => {
                if let Some(m) =
                    existing(obj, "spec").and_then(|spec| existing(spec, "matchResources"))
                {
                    match_resources_defaults(m);
                }
            }
        }
    }

    fn prepare_for_create(&self, _store: &Store, _namespace: &str, obj: &mut Map<String, Value>) {
        // `PrepareForCreate` resets the status, which Go encodes even when empty.
        if let Kind::ValidatingPolicy = self.0 {
            obj.insert("status".into(), json!({}));
        }
    }
}

/// What a webhook of either configuration gets: failure and match policies, both selectors
/// empty (match everything), a 10 s timeout, each rule's scope, the service's port.
fn webhook_defaults(webhook: &mut Map<String, Value>) {
    or_insert(webhook, "failurePolicy", json!("Fail"));
    or_insert(webhook, "matchPolicy", json!("Equivalent"));
    or_insert(webhook, "namespaceSelector", json!({}));
    or_insert(webhook, "objectSelector", json!({}));
    or_insert(webhook, "timeoutSeconds", json!(10));
    for rule in items(webhook, "rules") {
        or_insert(rule, "scope", json!("*"));
    }
    if let Some(service) = existing(webhook, "clientConfig").and_then(|c| existing(c, "service")) {
        or_insert(service, "port", json!(443));
    }
}

/// `SetDefaults_MatchResources`, and `SetDefaults_Rule` of its (excluded) resource rules.
fn match_resources_defaults(m: &mut Map<String, Value>) {
    or_insert(m, "matchPolicy", json!("Equivalent"));
    or_insert(m, "namespaceSelector", json!({}));
    or_insert(m, "objectSelector", json!({}));
    for key in ["resourceRules", "excludeResourceRules"] {
        for rule in items(m, key) {
            or_insert(rule, "scope", json!("*"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaulted(strategy: &AdmissionRegistrationStrategy, obj: Value) -> Value {
        let Value::Object(mut obj) = obj else {
            unreachable!()
        };
        strategy.defaults(&mut obj);
        Value::Object(obj)
    }

    #[test]
    fn a_policys_match_constraints_should_get_the_v1_defaults() {
        let obj = defaulted(
            &VALIDATING_POLICY,
            json!({"spec": {"matchConstraints": {"resourceRules": [{"resources": ["pods"]}],
                "excludeResourceRules": [{"resources": ["secrets"], "scope": "Namespaced"}]}}}),
        );
        assert_eq!(
            obj["spec"],
            json!({"failurePolicy": "Fail", "matchConstraints": {
                "matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {},
                "resourceRules": [{"resources": ["pods"], "scope": "*"}],
                "excludeResourceRules": [{"resources": ["secrets"], "scope": "Namespaced"}]}})
        );
    }

    #[test]
    fn a_binding_without_match_resources_should_get_none() {
        let obj = defaulted(&BINDING, json!({"spec": {"policyName": "p"}}));
        assert_eq!(obj["spec"], json!({"policyName": "p"}));
        let obj = defaulted(&BINDING, json!({"spec": {"matchResources": {}}}));
        assert_eq!(
            obj["spec"]["matchResources"],
            json!({"matchPolicy": "Equivalent", "namespaceSelector": {}, "objectSelector": {}})
        );
    }

    #[test]
    fn webhooks_should_get_their_policies_timeout_scope_and_port() {
        let webhook = json!({"name": "w", "rules": [{"operations": ["CREATE"]}],
            "clientConfig": {"service": {"name": "s", "namespace": "n"}}});
        let validating = defaulted(
            &VALIDATING_WEBHOOK_CONFIGURATION,
            json!({"webhooks": [webhook.clone()]}),
        );
        let w = &validating["webhooks"][0];
        assert_eq!(w["failurePolicy"], "Fail");
        assert_eq!(w["matchPolicy"], "Equivalent");
        assert_eq!(w["timeoutSeconds"], 10);
        assert_eq!(w["namespaceSelector"], json!({}));
        assert_eq!(w["objectSelector"], json!({}));
        assert_eq!(w["rules"][0]["scope"], "*");
        assert_eq!(w["clientConfig"]["service"]["port"], 443);
        assert!(w.get("reinvocationPolicy").is_none());
        let mutating = defaulted(
            &MUTATING_WEBHOOK_CONFIGURATION,
            json!({"webhooks": [webhook]}),
        );
        assert_eq!(mutating["webhooks"][0]["reinvocationPolicy"], "Never");
    }
}
