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

/// One bootstrap ClusterRole while it is read: the object and the label its aggregation
/// selects (if any).
struct Role {
    object: Value,
    aggregates: Option<String>,
}

/// The bootstrap ClusterRoles and ClusterRoleBindings (without `kind`/`apiVersion`), in the
/// policy's order.
pub(crate) fn cluster_roles_and_bindings() -> (Vec<Value>, Vec<Value>) {
    let mut roles: Vec<Role> = Vec::new();
    let mut bindings = Vec::new();
    for line in POLICY.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("role ") {
            let mut words = rest.split_whitespace();
            let name = words.next().unwrap_or_default();
            let mut labels = Map::new();
            let mut aggregates = None;
            for w in words {
                if let Some(l) = w.strip_prefix("label=") {
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
            roles.push(Role { object, aggregates });
        } else if let Some(rest) = line.strip_prefix("binding ") {
            let mut words = rest.split_whitespace();
            let name = words.next().unwrap_or_default();
            let role = words.next().unwrap_or_default();
            let subjects: Vec<Value> = words.filter_map(subject).collect();
            let mut b = json!({
                "metadata": bootstrap_metadata(name, Map::new()),
                "roleRef": {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": role},
            });
            if !subjects.is_empty() {
                b["subjects"] = Value::Array(subjects);
            }
            bindings.push(b);
        } else if let (Some(last), Some(r)) = (roles.last_mut(), rule(line))
            && let Some(rules) = last.object["rules"].as_array_mut()
        {
            rules.push(r);
        }
    }
    aggregate(&mut roles);
    (roles.into_iter().map(|r| r.object).collect(), bindings)
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
        let (roles, bindings) = cluster_roles_and_bindings();
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
    }

    #[test]
    fn aggregated_roles_should_hold_the_rules_of_the_roles_they_select() {
        let (roles, _) = cluster_roles_and_bindings();
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
