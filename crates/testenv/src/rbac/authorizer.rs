//! The authorizer kube-apiserver runs with `--authorization-mode=RBAC`: members of
//! `system:masters` may do anything; every other request is allowed when a rule of a Role or
//! ClusterRole bound to its user, one of its groups or its ServiceAccount allows it, else it is
//! denied with `403 Forbidden`. kcr-testenv's [`AccessRule`](crate::AccessRule)s allow too.
//!
//! Rules are read from the stored objects at each request, so a binding created by a test takes
//! effect at once (kube-apiserver's informers take a moment). A ClusterRole with an
//! `aggregationRule` has the rules of the ClusterRoles its selectors match, as the
//! clusterrole-aggregation controller would write them into it.

use std::collections::HashSet;
use std::fmt::Write as _;

use serde_json::{Value, json};

use super::request_info::Attributes;
use super::rule::PolicyRule;
use crate::meta::meta_str;
use crate::review::UserInfo;
use crate::selector::LabelSelector;
use crate::server::Shared;
use crate::status::ApiError;
use crate::store::{Store, object_key};

/// The group whose members may do anything (`user.SystemPrivilegedGroup`).
pub(crate) const SYSTEM_MASTERS: &str = "system:masters";
const GROUP: &str = "rbac.authorization.k8s.io";
const ROLES: &str = "rbac.authorization.k8s.io/roles";
const ROLE_BINDINGS: &str = "rbac.authorization.k8s.io/rolebindings";
const CLUSTER_ROLES: &str = "rbac.authorization.k8s.io/clusterroles";
const CLUSTER_ROLE_BINDINGS: &str = "rbac.authorization.k8s.io/clusterrolebindings";

/// An authorizer's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Allowed, with the reason a `SubjectAccessReview` reports.
    Allow(String),
    /// Denied (no rule allows it), with the reason (empty, or the RBAC resolution errors).
    Deny(String),
}

impl Decision {
    pub(crate) fn allowed(&self) -> bool {
        matches!(self, Decision::Allow(_))
    }

    pub(crate) fn reason(&self) -> &str {
        match self {
            Decision::Allow(r) | Decision::Deny(r) => r,
        }
    }
}

/// Decides a request as kube-apiserver's authorizer union does.
pub(crate) fn authorize(shared: &Shared, a: &Attributes) -> Decision {
    if a.user.groups.iter().any(|g| g == SYSTEM_MASTERS) {
        return Decision::Allow(String::new());
    }
    if crate::review::access_rules_allow(&shared.reviews.lock().rules, a) {
        return Decision::Allow("allowed by a kcr-testenv access rule".into());
    }
    rbac(&shared.store.lock(), a)
}

/// The `403 Forbidden` answer to a denied request, worded as kube-apiserver's.
pub(crate) fn forbidden(a: &Attributes, reason: &str) -> ApiError {
    let mut msg = if a.resource_request {
        let resource = if a.subresource.is_empty() {
            a.resource.clone()
        } else {
            format!("{}/{}", a.resource, a.subresource)
        };
        let scope = if a.namespace.is_empty() {
            "at the cluster scope".to_owned()
        } else {
            format!("in the namespace {:?}", a.namespace)
        };
        format!(
            "User {:?} cannot {} resource {resource:?} in API group {:?} {scope}",
            a.user.name, a.verb, a.api_group
        )
    } else {
        format!("User {:?} cannot {} path {:?}", a.user.name, a.verb, a.path)
    };
    if !reason.is_empty() {
        let _ = write!(msg, ": {reason}");
    }
    let qualified = match (a.resource.is_empty(), a.api_group.is_empty()) {
        (true, _) => String::new(),
        (false, true) => a.resource.clone(),
        (false, false) => format!("{}.{}", a.resource, a.api_group),
    };
    let message = match (qualified.is_empty(), a.name.is_empty()) {
        (true, _) => format!("forbidden: {msg}"),
        (false, true) => format!("{qualified} is forbidden: {msg}"),
        (false, false) => format!("{qualified} {:?} is forbidden: {msg}", a.name),
    };
    let mut details = serde_json::Map::new();
    for (key, value) in [
        ("name", &a.name),
        ("group", &a.api_group),
        ("kind", &a.resource),
    ] {
        if !value.is_empty() {
            details.insert(key.into(), json!(value));
        }
    }
    ApiError::new(403, "Forbidden", message).with_details(Value::Object(details))
}

/// The `Subject`s of a binding.
fn subjects(binding: &Value) -> &[Value] {
    binding
        .get("subjects")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// Whether a binding's subject is this user (`namespace`: the RoleBinding's, which a
/// ServiceAccount subject without one defaults to).
fn applies_to(user: &UserInfo, subject: &Value, namespace: &str) -> bool {
    let name = str_of(subject, "name");
    match str_of(subject, "kind") {
        "User" => user.name == name,
        "Group" => user.groups.iter().any(|g| g == name),
        "ServiceAccount" => {
            let ns = match str_of(subject, "namespace") {
                "" => namespace,
                ns => ns,
            };
            !ns.is_empty() && user.name == format!("system:serviceaccount:{ns}:{name}")
        }
        _ => false,
    }
}

/// How a `SubjectAccessReview` names a subject (`ServiceAccount "name/namespace"`).
fn describe_subject(subject: &Value, binding_namespace: &str) -> String {
    let kind = str_of(subject, "kind");
    let name = str_of(subject, "name");
    if kind == "ServiceAccount" {
        let ns = match str_of(subject, "namespace") {
            "" => binding_namespace,
            ns => ns,
        };
        return format!("{kind} {:?}", format!("{name}/{ns}"));
    }
    format!("{kind} {name:?}")
}

fn not_found(resource: &str, name: &str) -> String {
    format!("{resource}.{GROUP} {name:?} not found")
}

/// The rules of a ClusterRole, aggregated ones included.
fn cluster_role_rules(store: &Store, name: &str) -> Result<Vec<PolicyRule>, String> {
    let role = store
        .get(CLUSTER_ROLES, name)
        .ok_or_else(|| not_found("clusterrole", name))?;
    let mut seen = HashSet::new();
    Ok(aggregated_rules(store, &role.value, &mut seen))
}

fn aggregated_rules(store: &Store, role: &Value, seen: &mut HashSet<String>) -> Vec<PolicyRule> {
    seen.insert(meta_str(role, "name").unwrap_or_default().to_owned());
    let selectors: Vec<LabelSelector> = role
        .pointer("/aggregationRule/clusterRoleSelectors")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| LabelSelector::parse(&crate::subresources::selector_string(s)).ok())
                .collect()
        })
        .unwrap_or_default();
    let mut rules = PolicyRule::of_role(role);
    if selectors.is_empty() {
        return rules;
    }
    for key in store.keys(CLUSTER_ROLES, None) {
        if seen.contains(&key) {
            continue;
        }
        let Some(other) = store.get(CLUSTER_ROLES, &key) else {
            continue;
        };
        // An empty selector matches nothing here, as in the aggregation controller.
        if selectors
            .iter()
            .any(|s| !s.is_empty() && s.matches(&other.value))
        {
            for rule in aggregated_rules(store, &other.value.clone(), seen) {
                if !rules.contains(&rule) {
                    rules.push(rule);
                }
            }
        }
    }
    rules
}

/// The rules a binding's `roleRef` grants (`namespace`: the RoleBinding's).
fn role_ref_rules(
    store: &Store,
    binding: &Value,
    namespace: &str,
) -> Result<Vec<PolicyRule>, String> {
    let role_ref = binding.get("roleRef").cloned().unwrap_or_default();
    let name = str_of(&role_ref, "name");
    match str_of(&role_ref, "kind") {
        "ClusterRole" => cluster_role_rules(store, name),
        "Role" if !namespace.is_empty() => store
            .get(ROLES, &object_key(Some(namespace), name))
            .map(|r| PolicyRule::of_role(&r.value))
            .ok_or_else(|| not_found("role", name)),
        kind => Err(format!("unsupported role reference kind: {kind:?}")),
    }
}

/// Every rule that applies to `user` in `namespace` (cluster-wide ones included) and the errors
/// met resolving them, as kube-apiserver's `RulesFor`.
pub(crate) fn rules_for(
    store: &Store,
    user: &UserInfo,
    namespace: &str,
) -> (Vec<PolicyRule>, Vec<String>) {
    let mut rules = Vec::new();
    let mut errors: Vec<String> = Vec::new();
    let mut visit = |binding: &Value, ns: &str| {
        if !subjects(binding).iter().any(|s| applies_to(user, s, ns)) {
            return;
        }
        match role_ref_rules(store, binding, ns) {
            Ok(r) => rules.extend(r),
            Err(e) if !errors.contains(&e) => errors.push(e),
            Err(_) => {}
        }
    };
    for key in store.keys(CLUSTER_ROLE_BINDINGS, None) {
        if let Some(b) = store.get(CLUSTER_ROLE_BINDINGS, &key) {
            visit(&b.value, "");
        }
    }
    if !namespace.is_empty() {
        for key in store.keys(ROLE_BINDINGS, Some(namespace)) {
            if let Some(b) = store.get(ROLE_BINDINGS, &key) {
                visit(&b.value, namespace);
            }
        }
    }
    (rules, errors)
}

/// The rules a binding's `roleRef` grants, for the escalation check of a binding.
pub(crate) fn rules_of_role_ref(
    store: &Store,
    binding: &Value,
    namespace: &str,
) -> Result<Vec<PolicyRule>, String> {
    role_ref_rules(store, binding, namespace)
}

/// The rules of a ClusterRole or Role object being written (aggregated rules included).
pub(crate) fn rules_of_new_role(store: &Store, role: &Value) -> Vec<PolicyRule> {
    aggregated_rules(store, role, &mut HashSet::new())
}

/// The RBAC authorizer on its own.
pub(crate) fn rbac(store: &Store, a: &Attributes) -> Decision {
    let mut errors: Vec<String> = Vec::new();
    let mut visit = |binding: &Value, namespace: &str| -> Option<String> {
        let subject = subjects(binding)
            .iter()
            .find(|s| applies_to(&a.user, s, namespace))?;
        match role_ref_rules(store, binding, namespace) {
            Ok(rules) if rules.iter().any(|r| r.allows(a)) => {
                let role_ref = binding.get("roleRef").cloned().unwrap_or_default();
                let name = meta_str(binding, "name").unwrap_or_default();
                let source = if namespace.is_empty() {
                    format!("ClusterRoleBinding {name:?}")
                } else {
                    format!("RoleBinding {:?}", format!("{name}/{namespace}"))
                };
                Some(format!(
                    "RBAC: allowed by {source} of {} {:?} to {}",
                    str_of(&role_ref, "kind"),
                    str_of(&role_ref, "name"),
                    describe_subject(subject, namespace)
                ))
            }
            Ok(_) => None,
            Err(e) => {
                if !errors.contains(&e) {
                    errors.push(e);
                }
                None
            }
        }
    };
    for key in store.keys(CLUSTER_ROLE_BINDINGS, None) {
        if let Some(b) = store.get(CLUSTER_ROLE_BINDINGS, &key)
            && let Some(reason) = visit(&b.value, "")
        {
            return Decision::Allow(reason);
        }
    }
    if !a.namespace.is_empty() {
        for key in store.keys(ROLE_BINDINGS, Some(&a.namespace)) {
            if let Some(b) = store.get(ROLE_BINDINGS, &key)
                && let Some(reason) = visit(&b.value, &a.namespace)
            {
                return Decision::Allow(reason);
            }
        }
    }
    Decision::Deny(match errors.len() {
        0 => String::new(),
        1 => format!("RBAC: {}", errors[0]),
        _ => format!("RBAC: [{}]", errors.join(", ")),
    })
}
