//! Privilege escalation prevention, as kube-apiserver's RBAC registries enforce it when RBAC
//! authorizes requests: a user may create or update a Role or ClusterRole only with rules it
//! already holds (or with the `escalate` verb on it), and a RoleBinding or ClusterRoleBinding
//! only to a role whose rules it holds (or with the `bind` verb on that role). Members of
//! `system:masters` may do anything.
//!
//! Checked for `POST`, `PUT` and server-side apply of the four RBAC kinds (the rules written
//! are those of the body; other patches are not checked).

use http::Method;
use serde_json::Value;

use super::authorizer::{
    SYSTEM_MASTERS, authorize, rules_for, rules_of_new_role, rules_of_role_ref,
};
use super::request_info::{Attributes, attributes};
use super::rule::PolicyRule;
use crate::server::{Request, Shared};
use crate::status::ApiError;

const GROUP: &str = "rbac.authorization.k8s.io";

/// One permission: a verb on one group, resource and name, or on one URL.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Atom {
    verb: String,
    group: String,
    resource: String,
    name: String,
    url: String,
}

/// Splits rules into single permissions (`BreakdownRule`).
fn breakdown(rules: &[PolicyRule]) -> Vec<Atom> {
    let mut out = Vec::new();
    for r in rules {
        for verb in &r.verbs {
            for group in &r.api_groups {
                for resource in &r.resources {
                    let names: Vec<String> = if r.resource_names.is_empty() {
                        vec![String::new()]
                    } else {
                        r.resource_names.clone()
                    };
                    for name in names {
                        out.push(Atom {
                            verb: verb.clone(),
                            group: group.clone(),
                            resource: resource.clone(),
                            name,
                            url: String::new(),
                        });
                    }
                }
            }
            for url in &r.non_resource_urls {
                out.push(Atom {
                    verb: verb.clone(),
                    group: String::new(),
                    resource: String::new(),
                    name: String::new(),
                    url: url.clone(),
                });
            }
        }
    }
    out
}

fn has(set: &[String], item: &str) -> bool {
    set.iter().any(|s| s == item)
}

/// Whether an owner's rule covers one permission (`ruleCovers`).
fn covers(owner: &PolicyRule, atom: &Atom) -> bool {
    if !(has(&owner.verbs, "*") || has(&owner.verbs, &atom.verb)) {
        return false;
    }
    if !atom.url.is_empty() {
        return owner.non_resource_urls.iter().any(|u| {
            u == "*"
                || *u == atom.url
                || u.strip_suffix('*').is_some_and(|p| atom.url.starts_with(p))
        });
    }
    let group = has(&owner.api_groups, "*") || has(&owner.api_groups, &atom.group);
    let resource = has(&owner.resources, "*")
        || has(&owner.resources, &atom.resource)
        || atom
            .resource
            .split_once('/')
            .is_some_and(|(_, sub)| has(&owner.resources, &format!("*/{sub}")));
    let name = owner.resource_names.is_empty()
        || (!atom.name.is_empty() && has(&owner.resource_names, &atom.name));
    group && resource && name
}

fn quoted(items: &[&str]) -> String {
    let q: Vec<String> = items.iter().map(|s| format!("{s:?}")).collect();
    format!("[{}]", q.join(" "))
}

/// The missing permissions, compacted per group, resource and name and written as
/// `CompactString` does, sorted.
fn describe(missing: &[Atom]) -> String {
    let mut groups: Vec<(Atom, Vec<String>)> = Vec::new();
    for a in missing {
        let key = Atom {
            verb: String::new(),
            ..a.clone()
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, verbs)) => {
                if !verbs.contains(&a.verb) {
                    verbs.push(a.verb.clone());
                }
            }
            None => groups.push((key, vec![a.verb.clone()])),
        }
    }
    let mut lines: Vec<String> = groups
        .iter()
        .map(|(k, verbs)| {
            let verbs: Vec<&str> = verbs.iter().map(String::as_str).collect();
            let mut parts = Vec::new();
            if k.url.is_empty() {
                parts.push(format!("APIGroups:{}", quoted(&[&k.group])));
                parts.push(format!("Resources:{}", quoted(&[&k.resource])));
                if !k.name.is_empty() {
                    parts.push(format!("ResourceNames:{}", quoted(&[&k.name])));
                }
            } else {
                parts.push(format!("NonResourceURLs:{}", quoted(&[&k.url])));
            }
            parts.push(format!("Verbs:{}", quoted(&verbs)));
            format!("{{{}}}", parts.join(", "))
        })
        .collect();
    lines.sort();
    lines.dedup();
    lines.join("\n")
}

/// `Ok` when `user` holds every rule of `rules` in `namespace`; else the Forbidden error.
fn confirm_no_escalation(
    shared: &Shared,
    a: &Attributes,
    namespace: &str,
    rules: &[PolicyRule],
) -> Result<(), ApiError> {
    let (owner, errors) = rules_for(&shared.store.lock(), &a.user, namespace);
    let missing: Vec<Atom> = breakdown(rules)
        .into_iter()
        .filter(|atom| !owner.iter().any(|o| covers(o, atom)))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let groups: Vec<&str> = a.user.groups.iter().map(String::as_str).collect();
    let mut msg = format!(
        "user {:?} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        a.user.name,
        quoted(&groups),
        describe(&missing)
    );
    if !errors.is_empty() {
        msg.push_str(&format!("; resolution errors: [{}]", errors.join(" ")));
    }
    Err(forbidden(a, &msg))
}

fn forbidden(a: &Attributes, why: &str) -> ApiError {
    let name = if a.name.is_empty() {
        String::new()
    } else {
        format!(" {:?}", a.name)
    };
    ApiError::new(
        403,
        "Forbidden",
        format!("{}.{GROUP}{name} is forbidden: {why}", a.resource),
    )
    .with_details(serde_json::json!({"name": a.name, "group": GROUP, "kind": a.resource}))
}

/// Whether `user` may do `verb` on the role named `name` (`escalate`, `bind`).
fn may(
    shared: &Shared,
    a: &Attributes,
    verb: &str,
    resource: &str,
    name: &str,
    namespace: &str,
) -> bool {
    let check = Attributes::resource(a.user.clone(), verb, namespace, GROUP, resource, "", name);
    authorize(shared, &check).allowed()
}

/// The object a write of an RBAC kind would store (its body), `None` when not checked.
fn written_object(req: &Request) -> Option<Value> {
    let media = req.header("content-type");
    let media = media.split(';').next().unwrap_or_default().trim();
    match req.method {
        Method::POST | Method::PUT => serde_json::from_slice(&req.body).ok(),
        Method::PATCH if media == "application/apply-patch+yaml" => {
            crate::managed_fields::parse_apply_body(&req.body).ok()
        }
        _ => None,
    }
}

/// Refuses a write of a Role, ClusterRole or binding that would grant more than its writer
/// holds.
pub(crate) fn check(shared: &Shared, req: &Request) -> Result<(), ApiError> {
    if req.user.groups.iter().any(|g| g == SYSTEM_MASTERS) {
        return Ok(());
    }
    let mut a = attributes(req, req.user.clone());
    if !a.resource_request || a.api_group != GROUP || !a.subresource.is_empty() {
        return Ok(());
    }
    if !matches!(a.verb.as_str(), "create" | "update" | "patch") {
        return Ok(());
    }
    let Some(obj) = written_object(req) else {
        return Ok(());
    };
    if a.name.is_empty() {
        a.name = crate::meta::meta_str(&obj, "name")
            .unwrap_or_default()
            .to_owned();
    }
    let namespace = a.namespace.clone();
    match a.resource.as_str() {
        "roles" | "clusterroles" => {
            if may(shared, &a, "escalate", &a.resource, &a.name, &namespace) {
                return Ok(());
            }
            let rules = rules_of_new_role(&shared.store.lock(), &obj);
            confirm_no_escalation(shared, &a, &namespace, &rules)
        }
        "rolebindings" | "clusterrolebindings" => {
            let role_ref = obj.get("roleRef").cloned().unwrap_or_default();
            let kind = role_ref
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let role = role_ref
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let resource = if kind == "Role" {
                "roles"
            } else {
                "clusterroles"
            };
            if may(shared, &a, "bind", resource, role, &namespace) {
                return Ok(());
            }
            let rules = rules_of_role_ref(&shared.store.lock(), &obj, &namespace);
            match rules {
                Ok(rules) => confirm_no_escalation(shared, &a, &namespace, &rules),
                // The role does not exist: there is nothing to grant yet, as on kube-apiserver
                // only the `bind` check could allow it.
                Err(e) => Err(forbidden(&a, &e)),
            }
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn rule(v: Value) -> PolicyRule {
        PolicyRule::from_json(&v)
    }

    #[test]
    fn owner_rules_should_cover_by_star_subresource_star_and_names() {
        let atoms = breakdown(&[rule(json!({
            "verbs": ["get"], "apiGroups": [""], "resources": ["pods", "pods/log"], "resourceNames": ["p"]
        }))]);
        assert_eq!(atoms.len(), 2);
        let all = rule(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
        assert!(atoms.iter().all(|a| covers(&all, a)));
        let logs = rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["*/log"]}));
        assert!(covers(&logs, &atoms[1]));
        assert!(!covers(&logs, &atoms[0]));
        let named = rule(
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["q"]}),
        );
        assert!(!covers(&named, &atoms[0]));
    }

    #[test]
    fn missing_rules_should_be_described_as_kube_apiserver_does() {
        let atoms = breakdown(&[rule(json!({
            "verbs": ["get", "delete"], "apiGroups": [""], "resources": ["pods"]
        }))]);
        assert_eq!(
            describe(&atoms),
            "{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\" \"delete\"]}"
        );
    }
}
