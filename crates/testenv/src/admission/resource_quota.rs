//! The `ResourceQuota` admission plugin, and the usage the quota controller counts
//! ([`crate::controllers`]'s `resource_quota`).
//!
//! A new object is checked against every ResourceQuota of its namespace that matches it: one
//! whose `status.hard` (what the quota controller copied from `spec.hard`; a quota the
//! controller has not seen yet constrains nothing) names a resource the object uses, and whose
//! scopes all match it. For such a quota, a Pod must request (`requests.cpu`, `cpu`, ...) or
//! limit (`limits.memory`, ...) each constrained CPU and memory resource in every container
//! (`403` `failed quota: <q>: must specify limits.memory for: app; requests.cpu for: app`),
//! the quota must have `status.used` for what it constrains (`status unknown for quota`), and
//! `used` plus the object's usage must stay within `hard` (`403` `exceeded quota: <q>,
//! requested: pods=1, used: pods=1, limited: pods=1`). An admitted create is charged at once:
//! `status.used` is written as kube-apiserver writes it (field manager `kube-apiserver`,
//! subresource `status`).
//!
//! Usage, as kube-apiserver's evaluators count it: a Pod that has not ended counts `pods` and
//! `count/pods` 1, and its requests and limits (`requests.cpu` and `cpu`, `requests.memory`
//! and `memory`, `limits.cpu`, `limits.memory`, and the same for `ephemeral-storage`: the sum
//! over its containers, at least its largest init container); a Service counts `services`,
//! `services.loadbalancers` and `services.nodeports`; a PersistentVolumeClaim counts
//! `persistentvolumeclaims` and `requests.storage` (also per storage class,
//! `<class>.storageclass.storage.k8s.io/...`); a ConfigMap, Secret, ReplicationController or
//! ResourceQuota its legacy name; every object `count/<resource>[.<group>]`. Scopes:
//! `BestEffort`, `NotBestEffort`, `Terminating`, `NotTerminating` and `PriorityClass`
//! (through `scopeSelector`, operators `In`, `NotIn`, `Exists`, `DoesNotExist`); a quota with
//! a scope matches Pods only.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::quantity::Quantity;
use super::{Attributes, Plugin};
use crate::registry::ResourceDef;
use crate::registry::generic;
use crate::server::Shared;
use crate::store::{EventType, Store};

/// The field manager of kube-apiserver's own status writes.
const APISERVER: &str = "kube-apiserver";

/// A resource list, by resource name.
pub(crate) type Usage = BTreeMap<String, Quantity>;

/// The plugin.
pub(crate) struct ResourceQuota;

/// The resources a Pod must request or limit in every container when a quota constrains them.
const POD_REQUIRED: &[&str] = &[
    "cpu",
    "memory",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

fn list(v: Option<&Value>) -> Usage {
    v.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, q)| Some((k.clone(), Quantity::from_value(q)?)))
        .collect()
}

/// `resource` qualified by `group` as `count/` names it.
fn count_name(def: &ResourceDef) -> String {
    if def.group.is_empty() {
        format!("count/{}", def.plural)
    } else {
        format!("count/{}.{}", def.plural, def.group)
    }
}

/// Whether an evaluator for `def` counts `resource` (its `MatchingResources`).
fn counts(def: &ResourceDef, resource: &str) -> bool {
    if resource == count_name(def) {
        return true;
    }
    if def.custom || !def.group.is_empty() {
        return false;
    }
    match def.plural.as_str() {
        "pods" => {
            matches!(
                resource,
                "pods"
                    | "cpu"
                    | "memory"
                    | "ephemeral-storage"
                    | "requests.cpu"
                    | "requests.memory"
                    | "requests.ephemeral-storage"
                    | "limits.cpu"
                    | "limits.memory"
                    | "limits.ephemeral-storage"
            ) || resource.starts_with("requests.hugepages-")
                || resource.starts_with("hugepages-")
        }
        "services" => matches!(
            resource,
            "services" | "services.loadbalancers" | "services.nodeports"
        ),
        "persistentvolumeclaims" => {
            matches!(resource, "persistentvolumeclaims" | "requests.storage")
                || resource.contains(".storageclass.storage.k8s.io/")
        }
        "configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas" => {
            resource == def.plural
        }
        _ => false,
    }
}

fn sum_into(total: &mut Usage, key: &str, q: Quantity) {
    let sum = total.get(key).map_or(q, |t| t.add(q));
    total.insert(key.to_owned(), sum);
}

/// A Pod's requests (`field` `requests`) or limits: the sum over its containers, at least the
/// largest of its init containers.
fn pod_resources(spec: &Value, field: &str) -> Usage {
    let of = |c: &Value| list(c.pointer(&format!("/resources/{field}")));
    let mut total = Usage::new();
    for c in spec
        .get("containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for (k, q) in of(c) {
            sum_into(&mut total, &k, q);
        }
    }
    for c in spec
        .get("initContainers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for (k, q) in of(c) {
            if total.get(&k).is_none_or(|t| q > *t) {
                total.insert(k, q);
            }
        }
    }
    total
}

/// Whether a Pod has ended (its usage no longer counts, except `count/pods`).
fn pod_ended(obj: &Value) -> bool {
    matches!(
        obj.pointer("/status/phase").and_then(Value::as_str),
        Some("Succeeded" | "Failed")
    ) || obj.pointer("/metadata/deletionTimestamp").is_some()
}

/// What `obj` uses, every resource an evaluator for `def` counts (zeros included).
pub(crate) fn usage(def: &ResourceDef, obj: &Value) -> Usage {
    let mut u = Usage::new();
    let one = Quantity::from_units(1);
    u.insert(count_name(def), one);
    if def.custom || !def.group.is_empty() {
        return u;
    }
    match def.plural.as_str() {
        "pods" => {
            if pod_ended(obj) {
                return u;
            }
            let spec = obj.get("spec").cloned().unwrap_or(json!({}));
            u.insert("pods".into(), one);
            let requests = pod_resources(&spec, "requests");
            let limits = pod_resources(&spec, "limits");
            for r in ["cpu", "memory", "ephemeral-storage"] {
                let request = requests.get(r).copied().unwrap_or(Quantity::ZERO);
                u.insert(format!("requests.{r}"), request);
                u.insert(r.to_owned(), request);
                u.insert(
                    format!("limits.{r}"),
                    limits.get(r).copied().unwrap_or(Quantity::ZERO),
                );
            }
            for (k, q) in requests {
                if k.starts_with("hugepages-") {
                    u.insert(format!("requests.{k}"), q);
                    u.insert(k, q);
                }
            }
        }
        "services" => {
            let ty = obj.pointer("/spec/type").and_then(Value::as_str);
            let ports = obj
                .pointer("/spec/ports")
                .and_then(Value::as_array)
                .map_or(0, Vec::len) as i64;
            u.insert("services".into(), one);
            u.insert(
                "services.loadbalancers".into(),
                Quantity::from_units(i64::from(ty == Some("LoadBalancer"))),
            );
            let node_ports = if matches!(ty, Some("NodePort" | "LoadBalancer")) {
                ports
            } else {
                0
            };
            u.insert(
                "services.nodeports".into(),
                Quantity::from_units(node_ports),
            );
        }
        "persistentvolumeclaims" => {
            let storage = obj
                .pointer("/spec/resources/requests/storage")
                .and_then(Quantity::from_value)
                .unwrap_or(Quantity::ZERO);
            u.insert("persistentvolumeclaims".into(), one);
            u.insert("requests.storage".into(), storage);
            if let Some(class) = obj
                .pointer("/spec/storageClassName")
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty())
            {
                u.insert(
                    format!("{class}.storageclass.storage.k8s.io/persistentvolumeclaims"),
                    one,
                );
                u.insert(
                    format!("{class}.storageclass.storage.k8s.io/requests.storage"),
                    storage,
                );
            }
        }
        "configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas" => {
            u.insert(def.plural.clone(), one);
        }
        _ => {}
    }
    u
}

/// Whether a Pod is best effort (its QoS class).
fn best_effort(obj: &Value) -> bool {
    obj.get("spec")
        .and_then(Value::as_object)
        .is_none_or(|s| crate::registry::core::pod::qos_class(s) == "BestEffort")
}

fn terminating(obj: &Value) -> bool {
    obj.pointer("/spec/activeDeadlineSeconds")
        .and_then(Value::as_i64)
        .is_some_and(|s| s >= 0)
}

/// Whether one scope selector requirement matches a Pod.
fn scope_matches(scope: &str, operator: &str, values: &[&str], pod: &Value) -> bool {
    let holds = match scope {
        "BestEffort" => best_effort(pod),
        "NotBestEffort" => !best_effort(pod),
        "Terminating" => terminating(pod),
        "NotTerminating" => !terminating(pod),
        "PriorityClass" => {
            let class = pod
                .pointer("/spec/priorityClassName")
                .and_then(Value::as_str);
            return match operator {
                "Exists" => class.is_some_and(|c| !c.is_empty()),
                "DoesNotExist" => class.is_none_or(str::is_empty),
                "In" => class.is_some_and(|c| values.contains(&c)),
                "NotIn" => class.is_none_or(|c| !values.contains(&c)),
                _ => false,
            };
        }
        "CrossNamespacePodAffinity" => false,
        _ => return false,
    };
    match operator {
        "Exists" | "In" => holds,
        "DoesNotExist" | "NotIn" => !holds,
        _ => false,
    }
}

/// Whether every scope of `quota` matches `obj` (a quota with scopes matches Pods only).
fn scopes_match(quota: &Value, def: &ResourceDef, obj: &Value) -> bool {
    let mut requirements: Vec<(String, String, Vec<String>)> = quota
        .pointer("/spec/scopes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|s| (s.to_owned(), "Exists".to_owned(), Vec::new()))
        .collect();
    let expressions = quota
        .pointer("/spec/scopeSelector/matchExpressions")
        .and_then(Value::as_array);
    for e in expressions.into_iter().flatten() {
        let field = |k: &str| {
            e.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let values = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
        requirements.push((field("scopeName"), field("operator"), values));
    }
    if requirements.is_empty() {
        return true;
    }
    let is_pod = !def.custom && def.group.is_empty() && def.plural == "pods";
    is_pod
        && requirements.iter().all(|(scope, op, values)| {
            let values: Vec<&str> = values.iter().map(String::as_str).collect();
            scope_matches(scope, op, &values, obj)
        })
}

/// Whether `quota` counts `obj` (in the quota controller's sum): it names a resource the
/// object's evaluator counts and all its scopes match.
pub(crate) fn quota_counts(quota: &Value, hard: &Usage, def: &ResourceDef, obj: &Value) -> bool {
    hard.keys().any(|r| counts(def, r)) && scopes_match(quota, def, obj)
}

/// `k=v,k=v` in name order.
fn pretty(u: &Usage) -> String {
    u.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// A quota's change after admitting an object: its name, key and new `status.used`.
struct Charge {
    key: String,
    used: Usage,
}

/// The quotas `obj` is charged to, or the refusal (kube-apiserver's `checkRequest`).
fn check(
    a_store: &Store,
    def: &ResourceDef,
    namespace: &str,
    obj: &Value,
) -> Result<Vec<Charge>, String> {
    let mut interesting = Vec::new();
    for key in a_store.keys("/resourcequotas", Some(namespace)) {
        let Some(stored) = a_store.get("/resourcequotas", &key) else {
            continue;
        };
        let quota = &stored.value;
        let name = quota
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let hard = list(quota.pointer("/status/hard"));
        if !hard.keys().any(|r| counts(def, r)) || !scopes_match(quota, def, obj) {
            continue;
        }
        let restricted: Vec<&String> = hard.keys().filter(|r| counts(def, r)).collect();
        if !def.custom && def.group.is_empty() && def.plural == "pods" {
            pod_constraints(&restricted, obj).map_err(|e| format!("failed quota: {name}: {e}"))?;
        }
        let used = list(quota.pointer("/status/used"));
        if restricted.iter().any(|r| !used.contains_key(*r)) {
            let names: Vec<&str> = restricted.iter().map(|s| s.as_str()).collect();
            return Err(format!(
                "status unknown for quota: {name}, resources: {}",
                names.join(",")
            ));
        }
        interesting.push((key, name, hard, used));
    }
    if interesting.is_empty() {
        return Ok(Vec::new());
    }
    let delta: Usage = usage(def, obj)
        .into_iter()
        .filter(|(_, q)| !q.is_zero())
        .collect();
    if delta.is_empty() {
        return Ok(Vec::new());
    }
    let mut charges = Vec::new();
    for (key, name, hard, used) in interesting {
        let requested: Usage = delta
            .iter()
            .filter(|(k, _)| hard.contains_key(*k))
            .map(|(k, q)| (k.clone(), *q))
            .collect();
        let mut new_used = used.clone();
        for (k, q) in &requested {
            sum_into(&mut new_used, k, *q);
        }
        let exceeded: Vec<&String> = requested
            .keys()
            .filter(|k| new_used[*k] > hard[*k])
            .collect();
        if !exceeded.is_empty() {
            let mask = |u: &Usage| -> Usage {
                u.iter()
                    .filter(|(k, _)| exceeded.contains(k))
                    .map(|(k, q)| (k.clone(), *q))
                    .collect()
            };
            return Err(format!(
                "exceeded quota: {name}, requested: {}, used: {}, limited: {}",
                pretty(&mask(&requested)),
                pretty(&mask(&used)),
                pretty(&mask(&hard))
            ));
        }
        if new_used != used {
            charges.push(Charge {
                key,
                used: new_used,
            });
        }
    }
    Ok(charges)
}

/// kube-apiserver's Pod evaluator `Constraints`: every container requests or limits each
/// constrained CPU and memory resource.
fn pod_constraints(restricted: &[&String], pod: &Value) -> Result<(), String> {
    let mut missing: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for list_name in ["containers", "initContainers"] {
        let containers = pod
            .pointer(&format!("/spec/{list_name}"))
            .and_then(Value::as_array);
        for c in containers.into_iter().flatten() {
            let name = c.get("name").and_then(Value::as_str).unwrap_or_default();
            for r in restricted.iter().map(|r| r.as_str()) {
                if !POD_REQUIRED.contains(&r) {
                    continue;
                }
                let (field, resource) = match r.split_once('.') {
                    Some(("limits", res)) => ("limits", res),
                    Some((_, res)) => ("requests", res),
                    None => ("requests", r),
                };
                let has = c
                    .pointer(&format!("/resources/{field}/{resource}"))
                    .is_some();
                if !has {
                    let names = missing.entry(r).or_default();
                    if !names.iter().any(|n| n == name) {
                        names.push(name.to_owned());
                        names.sort();
                    }
                }
            }
        }
    }
    if missing.is_empty() {
        return Ok(());
    }
    let parts: Vec<String> = missing
        .iter()
        .map(|(r, names)| format!("{r} for: {}", names.join(",")))
        .collect();
    Err(format!("must specify {}", parts.join("; ")))
}

impl Plugin for ResourceQuota {
    fn name(&self) -> &'static str {
        "ResourceQuota"
    }

    fn validate_create(
        &self,
        a: &Attributes<'_>,
        obj: &Map<String, Value>,
    ) -> crate::status::ApiResult<()> {
        if !a.def.namespaced {
            return Ok(());
        }
        check(a.store, a.def, a.namespace, &Value::Object(obj.clone()))
            .map(|_| ())
            .map_err(|why| a.forbidden(&why))
    }
}

/// Writes `used` as a quota's `status.used` as `manager` does through `resourcequotas/status`.
pub(crate) fn write_status(
    shared: &Shared,
    store: &mut Store,
    key: &str,
    status: Value,
    manager: &str,
) {
    let Some(stored) = store.get("/resourcequotas", key) else {
        return;
    };
    let Some(def) = store
        .defs()
        .iter()
        .find(|d| !d.custom && d.group.is_empty() && d.plural == "resourcequotas")
        .cloned()
    else {
        return;
    };
    let old = stored.value.clone();
    let mut new = (*old).clone();
    new["status"] = status;
    if new == *old {
        return;
    }
    crate::managed_fields::field_manager_for(store, &def, Some("status")).update(
        Some(&old),
        &mut new,
        manager,
    );
    if let Some(m) = new.as_object_mut() {
        generic::set_rv(m, store.next_rv());
    }
    let namespace = old
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .map(str::to_owned);
    generic::commit(
        shared,
        store,
        &def,
        namespace.as_deref(),
        key,
        EventType::Modified,
        new,
    );
}

/// A resource list as JSON.
pub(crate) fn to_json(u: &Usage) -> Value {
    Value::Object(u.iter().map(|(k, q)| (k.clone(), q.to_json())).collect())
}

/// Charges an admitted create to the quotas it counts in (kube-apiserver's quota status
/// update after admission).
pub(crate) fn charge(
    shared: &Shared,
    store: &mut Store,
    def: &ResourceDef,
    namespace: &str,
    obj: &Map<String, Value>,
) {
    if !def.namespaced {
        return;
    }
    let Ok(charges) = check(store, def, namespace, &Value::Object(obj.clone())) else {
        return;
    };
    for c in charges {
        let Some(stored) = store.get("/resourcequotas", &c.key) else {
            continue;
        };
        let mut status = stored
            .value
            .get("status")
            .cloned()
            .unwrap_or_else(|| json!({}));
        if let Some(s) = status.as_object_mut() {
            s.insert("used".into(), to_json(&c.used));
        }
        write_status(shared, store, &c.key, status, APISERVER);
    }
}

/// A Pod with `spec`.
#[cfg(test)]
fn pod(spec: Value) -> Value {
    json!({"metadata": {"name": "p"}, "spec": spec})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_requests_should_be_named_per_resource() {
        let p = pod(json!({"containers": [
            {"name": "b", "resources": {"requests": {"cpu": "1"}}},
            {"name": "a"}
        ]}));
        let restricted = ["requests.cpu".to_owned(), "limits.memory".to_owned()];
        let restricted: Vec<&String> = restricted.iter().collect();
        assert_eq!(
            pod_constraints(&restricted, &p).unwrap_err(),
            "must specify limits.memory for: a,b; requests.cpu for: a"
        );
    }

    #[test]
    fn scopes_should_follow_the_pod() {
        let be = pod(json!({"containers": [{"name": "a"}]}));
        let burstable =
            pod(json!({"containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}]}));
        assert!(scope_matches("BestEffort", "Exists", &[], &be));
        assert!(!scope_matches("BestEffort", "Exists", &[], &burstable));
        assert!(scope_matches("NotBestEffort", "Exists", &[], &burstable));
        let high = pod(json!({"priorityClassName": "high", "containers": []}));
        assert!(scope_matches("PriorityClass", "In", &["high"], &high));
        assert!(!scope_matches("PriorityClass", "NotIn", &["high"], &high));
    }
}
