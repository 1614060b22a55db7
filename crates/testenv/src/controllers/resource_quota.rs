//! kube-controller-manager's resource quota controller: every ResourceQuota's `status.hard` is
//! its `spec.hard`, and its `status.used` what the objects of its namespace that it counts use
//! (see [`crate::admission::resource_quota`] for what counts), `0` for a resource nothing uses.
//! A resource of `spec.hard` that no evaluator counts has no `used` entry.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::admission::quantity::Quantity;
use crate::admission::resource_quota::{self, Usage};
use crate::server::Shared;
use crate::store::Store;

/// One pass: the status of every quota brought up to date.
pub(super) fn sync(shared: &Shared, store: &mut Store) {
    let quotas: Vec<(String, Value)> = store
        .keys("/resourcequotas", None)
        .into_iter()
        .filter_map(|k| {
            let v = store.get("/resourcequotas", &k)?.value.clone();
            Some((k, (*v).clone()))
        })
        .collect();
    for (key, quota) in quotas {
        if quota.pointer("/metadata/deletionTimestamp").is_some() {
            continue;
        }
        let Some(namespace) = quota.pointer("/metadata/namespace").and_then(Value::as_str) else {
            continue;
        };
        let hard_json = quota
            .pointer("/spec/hard")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let hard: Usage = hard_json
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, q)| Some((k.clone(), Quantity::from_value(q)?)))
            .collect();
        let used = used(store, namespace, &quota, &hard);
        let status = json!({"hard": hard_json, "used": resource_quota::to_json(&used)});
        if quota.get("status") != Some(&status) {
            resource_quota::write_status(shared, store, &key, status, super::MANAGER);
        }
    }
}

/// What the objects of `namespace` that `quota` counts use, per resource of `hard`.
fn used(store: &Store, namespace: &str, quota: &Value, hard: &Usage) -> Usage {
    let mut used = Usage::new();
    let mut seen = BTreeSet::new();
    for def in store.defs() {
        if !def.namespaced || !seen.insert(def.storage.clone()) {
            continue;
        }
        let probe = resource_quota::usage(def, &json!({}));
        let counted: Vec<&String> = hard
            .keys()
            .filter(|r| probe.contains_key(*r) || counts_more(def, r))
            .collect();
        if counted.is_empty() {
            continue;
        }
        for r in &counted {
            used.entry((*r).clone()).or_insert(Quantity::ZERO);
        }
        for key in store.keys(&def.storage, Some(namespace)) {
            let Some(obj) = store.get(&def.storage, &key) else {
                continue;
            };
            if !resource_quota::quota_counts(quota, hard, def, &obj.value) {
                continue;
            }
            for (r, q) in resource_quota::usage(def, &obj.value) {
                if hard.contains_key(&r) {
                    let sum = used.get(&r).map_or(q, |t| t.add(q));
                    used.insert(r, sum);
                }
            }
        }
    }
    used
}

/// Resources an evaluator counts that an empty object does not show (per storage class).
fn counts_more(def: &crate::registry::ResourceDef, resource: &str) -> bool {
    !def.custom
        && def.group.is_empty()
        && def.plural == "persistentvolumeclaims"
        && resource.contains(".storageclass.storage.k8s.io/")
}
