//! kube-apiserver's RBAC bootstrap policy: the ClusterRoles and ClusterRoleBindings its
//! `rbac/bootstrap-roles` post-start hook creates (`cluster-admin`, `admin`, `edit`, `view`, the
//! `system:*` roles that components and controllers bind to), read from `policy.txt` (its
//! format is described at the top of that file). The aggregated roles (`admin`, `edit`,
//! `view`) get the rules of the roles their `aggregationRule` selects, as kube-controller-manager's
//! ClusterRole aggregation controller fills them on every cluster.

use serde_json::{Map, Value, json};

const POLICY: &str = include_str!("policy.txt");

const BOOTSTRAPPING: &str = "kubernetes.io/bootstrapping";
const AUTOUPDATE: &str = "rbac.authorization.kubernetes.io/autoupdate";
const AGGREGATE_PREFIX: &str = "rbac.authorization.k8s.io/";
const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

fn list(s: &str) -> Vec<Value> {
    s.split(',')
        .map(|item| Value::String(if item == "-" { "" } else { item }.to_owned()))
        .collect()
}

fn bootstrap_metadata(name: &str, labels: Map<String, Value>) -> Value {
    let mut all = Map::new();
    all.insert(BOOTSTRAPPING.into(), json!("rbac-defaults"));
    all.extend(labels);
    json!({
        "name": name,
        "labels": all,
        "annotations": {AUTOUPDATE: "true"},
    })
}

fn rule(line: &str) -> Option<Value> {
    let cols: Vec<&str> = line.split_whitespace().collect();
    match cols.as_slice() {
        ["url", urls, verbs] => Some(json!({"verbs": list(verbs), "nonResourceURLs": list(urls)})),
        [groups, resources, verbs, names @ ..] => {
            let mut r = json!({
                "verbs": list(verbs),
                "apiGroups": list(groups),
                "resources": list(resources),
            });
            if let [names] = names {
                r["resourceNames"] = Value::Array(list(names));
            }
            Some(r)
        }
        _ => None,
    }
}

fn subject(s: &str) -> Option<Value> {
    let (kind, name) = s.split_once(':')?;
    Some(match kind {
        "ServiceAccount" => {
            let (namespace, name) = name.split_once('/')?;
            json!({"kind": kind, "name": name, "namespace": namespace})
        }
        _ => json!({"kind": kind, "apiGroup": RBAC_GROUP, "name": name}),
    })
}

/// One bootstrap role while it is read: the object, its namespace (`None`: a ClusterRole) and
/// the label its aggregation selects (if any).
struct Role {
    object: Value,
    namespace: Option<String>,
    aggregates: Option<String>,
}

/// The bootstrap policy's objects (without `kind`/`apiVersion`), each with its namespace
/// (`None`: cluster-scoped), in the policy's order.
#[derive(Debug, Default)]
pub(crate) struct Policy {
    pub(crate) cluster_roles: Vec<Value>,
    pub(crate) cluster_role_bindings: Vec<Value>,
    pub(crate) roles: Vec<(String, Value)>,
    pub(crate) role_bindings: Vec<(String, Value)>,
}

/// The RBAC bootstrap policy.
pub(crate) fn bootstrap_policy() -> Policy {
    let mut roles: Vec<Role> = Vec::new();
    let mut policy = Policy::default();
    for line in POLICY.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("role ") {
            let mut words = rest.split_whitespace();
            let name = words.next().unwrap_or_default();
            let mut labels = Map::new();
            let mut aggregates = None;
            let mut namespace = None;
            for w in words {
                if let Some(ns) = w.strip_prefix("namespace=") {
                    namespace = Some(ns.to_owned());
                } else if let Some(l) = w.strip_prefix("label=") {
                    labels.insert(format!("{AGGREGATE_PREFIX}{l}"), json!("true"));
                } else if let Some(l) = w.strip_prefix("aggregates=") {
                    aggregates = Some(format!("{AGGREGATE_PREFIX}{l}"));
                }
            }
            let mut object = json!({"metadata": bootstrap_metadata(name, labels), "rules": []});
            if let Some(label) = &aggregates {
                object["aggregationRule"] =
                    json!({"clusterRoleSelectors": [{"matchLabels": {label.as_str(): "true"}}]});
            }
            roles.push(Role {
                object,
                namespace,
                aggregates,
            });
        } else if let Some(rest) = line.strip_prefix("binding ") {
            let mut words = rest.split_whitespace();
            let name = words.next().unwrap_or_default();
            let role = words.next().unwrap_or_default();
            let mut namespace = None;
            let mut subjects = Vec::new();
            for w in words {
                match w.strip_prefix("namespace=") {
                    Some(ns) => namespace = Some(ns.to_owned()),
                    None => subjects.extend(subject(w)),
                }
            }
            let role_kind = if namespace.is_some() {
                "Role"
            } else {
                "ClusterRole"
            };
            let mut b = json!({
                "metadata": bootstrap_metadata(name, Map::new()),
                "roleRef": {"apiGroup": RBAC_GROUP, "kind": role_kind, "name": role},
            });
            if !subjects.is_empty() {
                b["subjects"] = Value::Array(subjects);
            }
            match namespace {
                Some(ns) => policy.role_bindings.push((ns, b)),
                None => policy.cluster_role_bindings.push(b),
            }
        } else if let (Some(last), Some(r)) = (roles.last_mut(), rule(line))
            && let Some(rules) = last.object["rules"].as_array_mut()
        {
            rules.push(r);
        }
    }
    aggregate(&mut roles);
    for role in roles {
        match role.namespace {
            Some(ns) => policy.roles.push((ns, role.object)),
            None => policy.cluster_roles.push(role.object),
        }
    }
    policy
}

/// Fills each aggregated role with the rules of the roles its selector matches (by name, each
/// rule once), until nothing changes (`view` feeds `edit`, which feeds `admin`).
fn aggregate(roles: &mut [Role]) {
    loop {
        let mut changed = false;
        for i in 0..roles.len() {
            let Some(label) = roles[i].aggregates.clone() else {
                continue;
            };
            let mut sources: Vec<&Role> = roles
                .iter()
                .filter(|r| r.object["metadata"]["labels"][label.as_str()] == "true")
                .collect();
            sources.sort_by(|a, b| {
                a.object["metadata"]["name"]
                    .as_str()
                    .cmp(&b.object["metadata"]["name"].as_str())
            });
            let mut rules: Vec<Value> = Vec::new();
            for source in sources {
                for r in source.object["rules"].as_array().into_iter().flatten() {
                    if !rules.contains(r) {
                        rules.push(r.clone());
                    }
                }
            }
            if roles[i].object["rules"].as_array() != Some(&rules) {
                roles[i].object["rules"] = Value::Array(rules);
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role<'a>(roles: &'a [Value], name: &str) -> &'a Value {
        roles
            .iter()
            .find(|r| r["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("{name}"))
    }

    #[test]
    fn the_policy_should_hold_the_well_known_roles_and_bindings() {
        let Policy {
            cluster_roles: roles,
            cluster_role_bindings: bindings,
            roles: namespaced,
            role_bindings,
        } = bootstrap_policy();
        let admin = role(&roles, "cluster-admin");
        assert_eq!(
            admin["rules"],
            json!([
                {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
                {"verbs": ["*"], "nonResourceURLs": ["*"]}
            ])
        );
        let scheduler = role(&roles, "system:kube-scheduler");
        assert!(
            scheduler["rules"]
                .as_array()
                .unwrap()
                .contains(&json!({"verbs": ["get", "update"], "apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": ["kube-scheduler"]}))
        );
        let masters = bindings
            .iter()
            .find(|b| b["metadata"]["name"] == "cluster-admin")
            .unwrap();
        assert_eq!(
            masters["subjects"],
            json!([{"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "system:masters"}])
        );
        let dns = bindings
            .iter()
            .find(|b| b["metadata"]["name"] == "system:kube-dns")
            .unwrap();
        assert_eq!(
            dns["subjects"],
            json!([{"kind": "ServiceAccount", "name": "kube-dns", "namespace": "kube-system"}])
        );
        let (ns, reader) = namespaced
            .iter()
            .find(|(_, r)| r["metadata"]["name"] == "extension-apiserver-authentication-reader")
            .unwrap();
        assert_eq!(ns, "kube-system");
        assert_eq!(
            reader["rules"][0]["resourceNames"],
            json!(["extension-apiserver-authentication"])
        );
        assert!(!roles.iter().any(|r| r == reader));
        let (_, binding) = role_bindings
            .iter()
            .find(|(_, b)| b["metadata"]["name"] == "system::leader-locking-kube-scheduler")
            .unwrap();
        assert_eq!(binding["roleRef"]["kind"], "Role");
    }

    #[test]
    fn aggregated_roles_should_hold_the_rules_of_the_roles_they_select() {
        let roles = bootstrap_policy().cluster_roles;
        let rules = |name: &str| role(&roles, name)["rules"].as_array().unwrap().clone();
        assert_eq!(rules("view"), rules("system:aggregate-to-view"));
        let edit = rules("edit");
        assert!(
            rules("system:aggregate-to-edit")
                .iter()
                .all(|r| edit.contains(r))
        );
        assert!(rules("view").iter().all(|r| edit.contains(r)));
        let admin = rules("admin");
        assert!(edit.iter().all(|r| admin.contains(r)));
        assert!(
            rules("system:aggregate-to-admin")
                .iter()
                .all(|r| admin.contains(r))
        );
        assert_eq!(
            role(&roles, "admin")["aggregationRule"],
            json!({"clusterRoleSelectors": [{"matchLabels": {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}}]})
        );
    }
}
