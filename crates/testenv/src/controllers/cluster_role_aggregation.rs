//! kube-controller-manager's clusterrole-aggregation controller: a ClusterRole with an
//! `aggregationRule` gets, in its `rules`, the rules of the ClusterRoles its selectors match
//! (selector by selector, the matching roles by name, each rule once, itself left out), written
//! by a forced server-side apply as field manager `clusterrole-aggregation-controller` whenever
//! they differ from what it holds. A role that aggregates an aggregated role picks up its rules
//! on the pass after that role's rules are written, as on a cluster.

use std::sync::Arc;

use http::Method;
use serde_json::{Value, json};

use super::events::Recorder;
use super::job::Clock;
use super::requests;
use crate::meta::meta_str;
use crate::selector::LabelSelector;
use crate::server::Shared;

const CLUSTER_ROLES: &str = "rbac.authorization.k8s.io/clusterroles";
const FIELD_MANAGER: &str = "clusterrole-aggregation-controller";
const USER_AGENT: &str = "kube-controller-manager/v1.36.2 (linux/amd64) kubernetes/0000000/system:serviceaccount:kube-system:clusterrole-aggregation-controller";

/// The rules `role` aggregates from `roles` (sorted by name), `None` without an
/// `aggregationRule`.
fn aggregated(role: &Value, roles: &[Value]) -> Option<Vec<Value>> {
    let selectors = role
        .pointer("/aggregationRule/clusterRoleSelectors")?
        .as_array()?;
    let name = meta_str(role, "name").unwrap_or_default();
    let mut rules: Vec<Value> = Vec::new();
    for selector in selectors {
        let Ok(selector) = LabelSelector::parse(&crate::subresources::selector_string(selector))
        else {
            continue;
        };
        for other in roles {
            if meta_str(other, "name") == Some(name) || !selector.matches(other) {
                continue;
            }
            for rule in other
                .get("rules")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if !rules.contains(rule) {
                    rules.push(rule.clone());
                }
            }
        }
    }
    Some(rules)
}

/// The roles whose rules differ from what they aggregate, with those rules. A role that
/// aggregates nothing and holds none is left alone (kube-controller-manager's apply of no rules
/// changes nothing there).
fn out_of_date(roles: &[Value]) -> Vec<(String, Vec<Value>)> {
    roles
        .iter()
        .filter_map(|role| {
            let want = aggregated(role, roles)?;
            let have = role
                .get("rules")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            (want != have).then(|| (meta_str(role, "name").unwrap_or_default().to_owned(), want))
        })
        .collect()
}

/// One pass: the aggregated roles brought up to date.
async fn pass(shared: &Arc<Shared>, _: &Recorder, _: &Clock) -> Option<i64> {
    let work = {
        let store = shared.store.lock();
        let mut roles: Vec<Value> = store
            .keys(CLUSTER_ROLES, None)
            .iter()
            .filter_map(|k| store.get(CLUSTER_ROLES, k))
            .map(|s| Value::clone(&s.value))
            .collect();
        roles.sort_by(|a, b| meta_str(a, "name").cmp(&meta_str(b, "name")));
        out_of_date(&roles)
    };
    for (name, rules) in work {
        let mut body = json!({"apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole", "metadata": {"name": name}});
        if !rules.is_empty() {
            body["rules"] = Value::Array(rules);
        }
        let answer = requests::send_with(
            shared,
            USER_AGENT,
            Method::PATCH,
            &format!("/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}"),
            &format!("fieldManager={FIELD_MANAGER}&force=true"),
            Some(&body),
            "application/apply-patch+yaml",
        )
        .await;
        if !answer.ok() {
            tracing::debug!(role = %name, status = answer.status, "aggregation not written");
        }
    }
    None
}

/// Runs the controller until the server is gone.
pub(super) async fn run(shared: std::sync::Weak<Shared>) {
    super::run_timed(shared, |shared, recorder, clock| {
        Box::pin(pass(shared, recorder, clock))
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(name: &str, labels: Value, rules: Value, aggregation: Option<Value>) -> Value {
        let mut r = json!({"metadata": {"name": name, "labels": labels}, "rules": rules});
        if let Some(a) = aggregation {
            r["aggregationRule"] = a;
        }
        r
    }

    #[test]
    fn an_aggregated_role_should_hold_the_matching_roles_rules_once_each() {
        let get = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]});
        let list = json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]});
        let roles = vec![
            role("a", json!({"agg": "x"}), json!([get.clone()]), None),
            role(
                "b",
                json!({"agg": "x"}),
                json!([get.clone(), list.clone()]),
                None,
            ),
            role("c", json!({}), json!([]), None),
            role(
                "view",
                json!({"agg": "x"}),
                Value::Null,
                Some(json!({"clusterRoleSelectors": [{"matchLabels": {"agg": "x"}}]})),
            ),
        ];
        assert_eq!(
            out_of_date(&roles),
            vec![("view".to_owned(), vec![get, list])]
        );
        // Once written, nothing is out of date.
        let mut written = roles.clone();
        written[3]["rules"] = json!([roles[0]["rules"][0], roles[1]["rules"][1]]);
        assert!(out_of_date(&written).is_empty());
    }
}
