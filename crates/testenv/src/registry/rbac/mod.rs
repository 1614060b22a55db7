//! RBAC (`rbac.authorization.k8s.io/v1`): Roles, ClusterRoles and their bindings, as
//! kube-apiserver's `pkg/apis/rbac/validation` and the four RBAC strategies check them. Names
//! are path segments (anything but `.`, `..`, `/` and `%`), rules need verbs and, unless they
//! name non-resource URLs, API groups and resources; a binding's `roleRef` names a `Role` (a
//! RoleBinding only) or `ClusterRole` of `rbac.authorization.k8s.io` and cannot change, and its
//! subjects are ServiceAccounts, Users or Groups. A binding's update validates the new state
//! twice (the strategy's `ValidateRoleBinding`, then `ValidateRoleBindingUpdate`, which calls
//! it again), so its causes are listed twice, as kube-apiserver lists them.

use serde_json::{Map, Value};

use crate::registry::ResourceDef;
use crate::registry::rest::{NameRule, Strategy};
use crate::validation::field::FieldError;
use crate::validation::names;

const GROUP: &str = "rbac.authorization.k8s.io";

/// What an RBAC object is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RbacKind {
    Role,
    ClusterRole,
    RoleBinding,
    ClusterRoleBinding,
}

/// The strategy of one RBAC kind.
pub(crate) struct RbacStrategy(RbacKind);

/// Roles.
pub(crate) static ROLE: RbacStrategy = RbacStrategy(RbacKind::Role);
/// ClusterRoles.
pub(crate) static CLUSTER_ROLE: RbacStrategy = RbacStrategy(RbacKind::ClusterRole);
/// RoleBindings.
pub(crate) static ROLE_BINDING: RbacStrategy = RbacStrategy(RbacKind::RoleBinding);
/// ClusterRoleBindings.
pub(crate) static CLUSTER_ROLE_BINDING: RbacStrategy = RbacStrategy(RbacKind::ClusterRoleBinding);

/// `path.IsValidPathSegmentName`: the rule of every RBAC object's name.
pub(crate) fn path_segment_name(name: &str) -> Vec<String> {
    for illegal in [".", ".."] {
        if name == illegal {
            return vec![format!("may not be '{illegal}'")];
        }
    }
    ["/", "%"]
        .into_iter()
        .filter(|c| name.contains(c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

fn str_at<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn strings(v: &Value, key: &str) -> usize {
    v.get(key).and_then(Value::as_array).map_or(0, Vec::len)
}

/// A `[]string` as Go's `%#v` prints it (`[]string{"a", "b"}`).
fn go_strings(v: Option<&Value>) -> String {
    let items: Vec<String> = v
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|s| format!("{:?}", s.as_str().unwrap_or_default()))
        .collect();
    format!("[]string{{{}}}", items.join(", "))
}

/// A `field.Invalid` whose value Go prints with `%#v` (a struct or a slice).
fn invalid_go(field: impl Into<String>, shown: &str, detail: &str) -> FieldError {
    FieldError {
        field: field.into(),
        reason: "FieldValueInvalid",
        message: format!("Invalid value: {shown}: {detail}"),
    }
}

/// `validatePolicyRule`.
fn policy_rule(rule: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if strings(rule, "verbs") == 0 {
        errs.push(FieldError::required(
            format!("{path}.verbs"),
            "verbs must contain at least one value",
        ));
    }
    let urls = go_strings(rule.get("nonResourceURLs"));
    if strings(rule, "nonResourceURLs") > 0 {
        if namespaced {
            errs.push(invalid_go(
                format!("{path}.nonResourceURLs"),
                &urls,
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if strings(rule, "apiGroups") > 0
            || strings(rule, "resources") > 0
            || strings(rule, "resourceNames") > 0
        {
            errs.push(invalid_go(
                format!("{path}.nonResourceURLs"),
                &urls,
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if strings(rule, "apiGroups") == 0 {
        errs.push(FieldError::required(
            format!("{path}.apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if strings(rule, "resources") == 0 {
        errs.push(FieldError::required(
            format!("{path}.resources"),
            "resource rules must supply at least one resource",
        ));
    }
    if strings(rule, "resourceNames") > 0 && strings(rule, "resources") > 1 {
        errs.push(FieldError::required(
            format!("{path}.resourceNames"),
            "resource names cannot apply to multiple resources",
        ));
    }
    errs
}

/// `validateRoleBindingSubject`.
fn subject(s: &Value, namespaced: bool, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let name = str_at(s, "name");
    let api_group = str_at(s, "apiGroup");
    if name.is_empty() {
        errs.push(FieldError::required(format!("{path}.name"), ""));
    }
    match str_at(s, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                for msg in names::dns1123_subdomain(name) {
                    errs.push(FieldError::invalid(
                        format!("{path}.name"),
                        &Value::String(name.into()),
                        &msg,
                    ));
                }
            }
            if !api_group.is_empty() {
                errs.push(FieldError::not_supported(
                    format!("{path}.apiGroup"),
                    &Value::String(api_group.into()),
                    &[""],
                ));
            }
            if !namespaced && str_at(s, "namespace").is_empty() {
                errs.push(FieldError::required(format!("{path}.namespace"), ""));
            }
        }
        kind @ ("User" | "Group") => {
            if name.is_empty() {
                let what = if kind == "User" { "user" } else { "group" };
                errs.push(FieldError::invalid(
                    format!("{path}.name"),
                    &Value::String(String::new()),
                    &format!("{what} name cannot be empty"),
                ));
            }
            if api_group != GROUP {
                errs.push(FieldError::not_supported(
                    format!("{path}.apiGroup"),
                    &Value::String(api_group.into()),
                    &[GROUP],
                ));
            }
        }
        other => errs.push(FieldError::not_supported(
            format!("{path}.kind"),
            &Value::String(other.into()),
            &["ServiceAccount", "User", "Group"],
        )),
    }
    errs
}

/// `ValidateRoleBinding` / `ValidateClusterRoleBinding` beyond the metadata.
fn binding(obj: &Value, namespaced: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let role_ref = obj.get("roleRef").cloned().unwrap_or(Value::Null);
    let api_group = str_at(&role_ref, "apiGroup");
    if api_group != GROUP {
        errs.push(FieldError::not_supported(
            "roleRef.apiGroup",
            &Value::String(api_group.into()),
            &[GROUP],
        ));
    }
    let kind = str_at(&role_ref, "kind");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        errs.push(FieldError::not_supported(
            "roleRef.kind",
            &Value::String(kind.into()),
            kinds,
        ));
    }
    let name = str_at(&role_ref, "name");
    if name.is_empty() {
        errs.push(FieldError::required("roleRef.name", ""));
    } else {
        for msg in path_segment_name(name) {
            errs.push(FieldError::invalid(
                "roleRef.name",
                &Value::String(name.into()),
                &msg,
            ));
        }
    }
    for (i, s) in obj
        .get("subjects")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        errs.extend(subject(s, namespaced, &format!("subjects[{i}]")));
    }
    errs
}

/// A `roleRef` as Go's `%#v` prints the internal `rbac.RoleRef` in a `field.Invalid` message.
fn go_role_ref(role_ref: &Value) -> String {
    format!(
        "rbac.RoleRef{{APIGroup:{:?}, Kind:{:?}, Name:{:?}}}",
        str_at(role_ref, "apiGroup"),
        str_at(role_ref, "kind"),
        str_at(role_ref, "name")
    )
}

impl RbacStrategy {
    fn namespaced(&self) -> bool {
        matches!(self.0, RbacKind::Role | RbacKind::RoleBinding)
    }

    fn is_binding(&self) -> bool {
        matches!(self.0, RbacKind::RoleBinding | RbacKind::ClusterRoleBinding)
    }

    fn rules(&self, obj: &Value) -> Vec<FieldError> {
        if self.is_binding() {
            return binding(obj, self.namespaced());
        }
        obj.get("rules")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
            .flat_map(|(i, r)| policy_rule(r, self.namespaced(), &format!("rules[{i}]")))
            .collect()
    }
}

impl Strategy for RbacStrategy {
    /// rbac/v1's `SetDefaults_Subject` and `SetDefaults_RoleRef`: a User's or Group's
    /// `apiGroup` is `rbac.authorization.k8s.io` when empty, and so is the role reference's.
    fn defaults(&self, obj: &mut Map<String, Value>) {
        if !self.is_binding() {
            return;
        }
        if let Some(role_ref) = obj.get_mut("roleRef").and_then(Value::as_object_mut)
            && role_ref
                .get("apiGroup")
                .is_none_or(|g| g.is_null() || g == "")
        {
            role_ref.insert("apiGroup".into(), Value::String(GROUP.into()));
        }
        for s in obj
            .get_mut("subjects")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            let kind = s.get("kind").and_then(Value::as_str).unwrap_or_default();
            let unset = s.get("apiGroup").is_none_or(|g| g.is_null() || g == "");
            if unset && matches!(kind, "User" | "Group") {
                s.insert("apiGroup".into(), Value::String(GROUP.into()));
            }
        }
    }

    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        self.rules(&Value::Object(obj.clone()))
    }

    /// The update checks the new state a second time (the first is
    /// [`validate`](Strategy::validate)); a binding's `roleRef` cannot change.
    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        let new = Value::Object(new.clone());
        let mut errs = self.rules(&new);
        if !self.is_binding() {
            return errs;
        }
        let role_ref = new.get("roleRef").cloned().unwrap_or(Value::Null);
        if old.get("roleRef").unwrap_or(&Value::Null) != &role_ref {
            errs.push(invalid_go(
                "roleRef",
                &go_role_ref(&role_ref),
                "cannot change roleRef",
            ));
        }
        errs
    }

    fn validates_new_state_first(&self) -> bool {
        true
    }

    fn name_rule(&self) -> NameRule {
        path_segment_name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_should_be_path_segments() {
        assert!(path_segment_name("system:controller:x").is_empty());
        assert_eq!(path_segment_name(".."), ["may not be '..'"]);
        assert_eq!(
            path_segment_name("a/b%c"),
            ["may not contain '/'", "may not contain '%'"]
        );
    }

    #[test]
    fn a_changed_role_ref_should_be_shown_as_go_prints_it() {
        let old = json!({"roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"}});
        let new = json!({"roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "edit"}});
        let errs = CLUSTER_ROLE_BINDING.validate_update(&old, new.as_object().unwrap());
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].message,
            "Invalid value: rbac.RoleRef{APIGroup:\"rbac.authorization.k8s.io\", \
             Kind:\"ClusterRole\", Name:\"edit\"}: cannot change roleRef"
        );
    }

    #[test]
    fn a_cluster_role_binding_should_name_a_cluster_role_and_namespaced_service_accounts() {
        let b = json!({"roleRef": {"apiGroup": GROUP, "kind": "Role", "name": "r"},
            "subjects": [{"kind": "ServiceAccount", "name": "sa"}, {"kind": "Robot", "name": "x"}]});
        let errs = binding(&b, false);
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["roleRef.kind", "subjects[0].namespace", "subjects[1].kind"]
        );
    }

    #[test]
    fn a_rule_should_need_verbs_groups_and_resources() {
        let errs = policy_rule(&json!({}), true, "rules[0]");
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["rules[0].verbs", "rules[0].apiGroups", "rules[0].resources"]
        );
        let errs = policy_rule(
            &json!({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}),
            true,
            "rules[0]",
        );
        assert_eq!(
            errs[0].message,
            "Invalid value: []string{\"/healthz\"}: namespaced rules cannot apply to non-resource URLs"
        );
    }
}
