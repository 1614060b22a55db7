//! Whether one RBAC `PolicyRule` allows a request, as kube-apiserver's `RuleAllows` decides.

use serde_json::Value;

use super::request_info::Attributes;

/// A `rbac.authorization.k8s.io/v1` `PolicyRule`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PolicyRule {
    pub(crate) verbs: Vec<String>,
    pub(crate) api_groups: Vec<String>,
    pub(crate) resources: Vec<String>,
    pub(crate) resource_names: Vec<String>,
    pub(crate) non_resource_urls: Vec<String>,
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

impl PolicyRule {
    /// Reads a rule from its JSON form.
    pub(crate) fn from_json(v: &Value) -> Self {
        Self {
            verbs: strings(v, "verbs"),
            api_groups: strings(v, "apiGroups"),
            resources: strings(v, "resources"),
            resource_names: strings(v, "resourceNames"),
            non_resource_urls: strings(v, "nonResourceURLs"),
        }
    }

    /// The rules of a Role or ClusterRole object (`rules`).
    pub(crate) fn of_role(role: &Value) -> Vec<Self> {
        role.get("rules")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(Self::from_json).collect())
            .unwrap_or_default()
    }

    /// Whether this rule allows the request.
    pub(crate) fn allows(&self, a: &Attributes) -> bool {
        if !self.verb_matches(&a.verb) {
            return false;
        }
        if !a.resource_request {
            return self.non_resource_url_matches(&a.path);
        }
        let combined = if a.subresource.is_empty() {
            a.resource.clone()
        } else {
            format!("{}/{}", a.resource, a.subresource)
        };
        self.api_group_matches(&a.api_group)
            && self.resource_matches(&combined, &a.subresource)
            && self.resource_name_matches(&a.name)
    }

    fn verb_matches(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == "*" || v == verb)
    }

    fn api_group_matches(&self, group: &str) -> bool {
        self.api_groups.iter().any(|g| g == "*" || g == group)
    }

    /// `*`, the resource (with `/subresource`), or `*/subresource`.
    fn resource_matches(&self, combined: &str, subresource: &str) -> bool {
        self.resources.iter().any(|r| {
            r == "*"
                || r == combined
                || (!subresource.is_empty()
                    && r.strip_prefix("*/").is_some_and(|s| s == subresource))
        })
    }

    /// No names: every name (and none); else the request's name must be listed.
    fn resource_name_matches(&self, name: &str) -> bool {
        self.resource_names.is_empty() || self.resource_names.iter().any(|n| n == name)
    }

    /// `*`, the path, or a prefix ending in `*`.
    fn non_resource_url_matches(&self, path: &str) -> bool {
        self.non_resource_urls.iter().any(|u| {
            u == "*"
                || u == path
                || u.strip_suffix('*')
                    .is_some_and(|prefix| path.starts_with(prefix))
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::review::UserInfo;

    fn res(verb: &str, group: &str, resource: &str, sub: &str, name: &str) -> Attributes {
        Attributes::resource(UserInfo::new("u"), verb, "ns", group, resource, sub, name)
    }

    #[test]
    fn verbs_groups_and_resources_should_match_exactly_or_by_star() {
        let rule = PolicyRule::from_json(&json!({
            "verbs": ["get", "list"], "apiGroups": ["apps"], "resources": ["deployments"]
        }));
        assert!(rule.allows(&res("get", "apps", "deployments", "", "d")));
        assert!(rule.allows(&res("list", "apps", "deployments", "", "")));
        assert!(!rule.allows(&res("delete", "apps", "deployments", "", "d")));
        assert!(!rule.allows(&res("get", "", "deployments", "", "d")));
        assert!(!rule.allows(&res("get", "apps", "replicasets", "", "d")));
        // A subresource is a resource of its own.
        assert!(!rule.allows(&res("get", "apps", "deployments", "scale", "d")));
        let all = PolicyRule::from_json(&json!({
            "verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]
        }));
        assert!(all.allows(&res("deletecollection", "x.io", "things", "status", "")));
        // A rule without apiGroups matches no resource.
        let no_group = PolicyRule::from_json(&json!({"verbs": ["*"], "resources": ["*"]}));
        assert!(!no_group.allows(&res("get", "", "pods", "", "p")));
    }

    #[test]
    fn subresources_should_match_by_name_or_star_slash() {
        let rule = PolicyRule::from_json(&json!({
            "verbs": ["get"], "apiGroups": [""], "resources": ["pods/log", "*/status"]
        }));
        assert!(rule.allows(&res("get", "", "pods", "log", "p")));
        assert!(rule.allows(&res("get", "", "services", "status", "s")));
        assert!(!rule.allows(&res("get", "", "pods", "", "p")));
        assert!(!rule.allows(&res("get", "", "pods", "exec", "p")));
    }

    #[test]
    fn resource_names_should_limit_the_names() {
        let rule = PolicyRule::from_json(&json!({
            "verbs": ["get", "list"], "apiGroups": [""], "resources": ["configmaps"],
            "resourceNames": ["settings"]
        }));
        assert!(rule.allows(&res("get", "", "configmaps", "", "settings")));
        assert!(!rule.allows(&res("get", "", "configmaps", "", "other")));
        // A list names nothing, so a rule with names does not allow it.
        assert!(!rule.allows(&res("list", "", "configmaps", "", "")));
    }

    #[test]
    fn non_resource_urls_should_match_exactly_or_by_prefix() {
        let rule = PolicyRule::from_json(&json!({
            "verbs": ["get"], "nonResourceURLs": ["/healthz", "/apis/*"]
        }));
        let path = |p: &str| Attributes::non_resource(UserInfo::new("u"), "get", p);
        assert!(rule.allows(&path("/healthz")));
        assert!(rule.allows(&path("/apis/apps/v1")));
        assert!(!rule.allows(&path("/healthz/etcd")));
        assert!(!rule.allows(&path("/api")));
        assert!(!rule.allows(&res("get", "", "pods", "", "")));
    }
}
