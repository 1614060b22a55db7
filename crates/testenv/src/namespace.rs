//! Namespace lifecycle: what kube-apiserver's namespace registry and `NamespaceLifecycle`
//! admission do, and what kube-controller-manager's namespace controller does.
//!
//! - Deleting a namespace moves it to `Terminating` (`deletionTimestamp`, `status.phase`); it
//!   stays until its `spec.finalizers` (`kubernetes`) and `metadata.finalizers` are gone.
//! - Creating an object in a terminating namespace gets `403 Forbidden` (`NamespaceTerminating`);
//!   objects already there can still be updated and deleted.
//! - `PUT .../namespaces/<name>/finalize` sets `spec.finalizers`; the namespace goes once both
//!   lists are empty.
//! - kcr-testenv's own namespace finalizer (on by default, [`crate::TestEnvBuilder::finalize_namespaces`])
//!   plays the namespace controller: it deletes every object in a terminating namespace (objects
//!   with finalizers are marked and waited for), then removes the `kubernetes` finalizer, so the
//!   namespace goes away as on a cluster with kube-controller-manager.

use std::sync::{Arc, Weak};

use serde_json::{Value, json};

use crate::meta::{self, metadata_mut};
use crate::registry::ResourceDef;
use crate::registry::generic;
use crate::server::Shared;
use crate::status::{ApiError, ApiResult};
use crate::store::{EventType, Store, Stored};

/// The finalizer the namespace controller owns.
const KUBERNETES: &str = "kubernetes";

/// Whether `def` is core/v1 `namespaces`.
pub(crate) fn is_namespaces(def: &ResourceDef) -> bool {
    def.group.is_empty() && def.plural == "namespaces"
}

/// Whether a namespace is being deleted.
pub(crate) fn terminating(ns: &Value) -> bool {
    ns.pointer("/metadata/deletionTimestamp").is_some()
}

fn spec_finalizers(ns: &Value) -> Vec<String> {
    ns.pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

fn meta_finalizers(ns: &Value) -> bool {
    ns.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
}

/// Deletes a namespace: it becomes `Terminating` and stays until its finalizers are gone.
pub(crate) fn delete(
    shared: &Shared,
    store: &mut Store,
    def: &ResourceDef,
    key: &str,
    old: &Stored,
    dry: bool,
) -> ApiResult<(u16, Stored)> {
    if terminating(&old.value) {
        return Ok((200, old.clone()));
    }
    let mut new = (*old.value).clone();
    if let Some(m) = new.as_object_mut() {
        let meta = metadata_mut(m);
        meta.insert(
            "deletionTimestamp".into(),
            Value::String(meta::now_rfc3339()),
        );
        m.insert("status".into(), json!({"phase": "Terminating"}));
    }
    if spec_finalizers(&new).is_empty() && !meta_finalizers(&new) {
        if dry {
            return Ok((200, Stored::new(new)));
        }
        let removed = generic::delete_now(shared, store, def, key).unwrap_or_else(|| old.clone());
        return Ok((200, removed));
    }
    // A dry run stores nothing, so it keeps the stored resourceVersion.
    if dry {
        return Ok((200, Stored::new(new)));
    }
    if let Some(m) = new.as_object_mut() {
        metadata_mut(m).insert(
            "resourceVersion".into(),
            Value::String(store.next_rv().to_string()),
        );
    }
    let stored = generic::commit(shared, store, def, None, key, EventType::Modified, new);
    Ok((200, stored))
}

/// `PUT .../finalize`: sets `spec.finalizers`; removes a terminating namespace whose finalizers
/// are all gone. Answers with the namespace as stored (or as it was when it went).
/// `manager`: the writer recorded in `managedFields` (subresource `finalize`).
pub(crate) fn finalize(
    shared: &Shared,
    store: &mut Store,
    def: &ResourceDef,
    name: &str,
    body: &Value,
    manager: &str,
    dry: bool,
) -> ApiResult<(u16, Stored)> {
    let old = store
        .get(&def.storage, name)
        .cloned()
        .ok_or_else(|| ApiError::not_found("", "namespaces", name))?;
    let finalizers = body
        .pointer("/spec/finalizers")
        .cloned()
        .unwrap_or(json!([]));
    let mut new = (*old.value).clone();
    if let Some(m) = new.as_object_mut() {
        let spec = m
            .entry("spec")
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .ok_or_else(|| ApiError::internal("namespace spec is not an object"))?;
        if finalizers.as_array().is_some_and(|a| !a.is_empty()) {
            spec.insert("finalizers".into(), finalizers);
        } else {
            spec.remove("finalizers");
        }
    }
    crate::managed_fields::field_manager_for(store, def, Some("finalize")).update(
        Some(&old.value),
        &mut new,
        manager,
    );
    // A dry run stores nothing, so it keeps the stored resourceVersion.
    if dry {
        return Ok((200, Stored::new(new)));
    }
    if let Some(m) = new.as_object_mut() {
        metadata_mut(m).insert(
            "resourceVersion".into(),
            Value::String(store.next_rv().to_string()),
        );
    }
    if terminating(&new) && spec_finalizers(&new).is_empty() && !meta_finalizers(&new) {
        let stored = generic::commit(shared, store, def, None, name, EventType::Deleted, new);
        return Ok((200, stored));
    }
    let stored = generic::commit(shared, store, def, None, name, EventType::Modified, new);
    Ok((200, stored))
}

/// One pass of the namespace finalizer over every terminating namespace.
fn finalize_pass(shared: &Shared) {
    let mut store = shared.store.lock();
    let Some(ns_def) = store.def("", "v1", "namespaces").cloned() else {
        return;
    };
    let terminating: Vec<String> = store
        .keys(&ns_def.storage, None)
        .into_iter()
        .filter(|k| {
            store.get(&ns_def.storage, k).is_some_and(|s| {
                terminating(&s.value) && spec_finalizers(&s.value).iter().any(|f| f == KUBERNETES)
            })
        })
        .collect();
    for name in terminating {
        let mut remaining = 0;
        for storage in store.storages() {
            let Some(def) = store
                .defs()
                .iter()
                .find(|d| d.storage == storage && d.namespaced)
                .cloned()
            else {
                continue;
            };
            for key in store.keys(&storage, Some(&name)) {
                remaining += 1;
                let marked = store
                    .get(&storage, &key)
                    .is_some_and(|s| s.value.pointer("/metadata/deletionTimestamp").is_some());
                if !marked {
                    let _ = generic::delete_one(shared, &mut store, &def, &key, &json!({}), false);
                }
            }
        }
        let left = content_left(&store, &name);
        if remaining > 0 && !left.is_empty() {
            set_conditions(shared, &mut store, &ns_def, &name, &left);
            continue;
        }
        let Some(ns) = store.get(&ns_def.storage, &name).cloned() else {
            continue;
        };
        let rest: Vec<String> = spec_finalizers(&ns.value)
            .into_iter()
            .filter(|f| f != KUBERNETES)
            .collect();
        if !rest.is_empty() {
            // Another finalizer keeps the namespace: the controller states that its content
            // is gone and leaves the rest to that finalizer's owner.
            set_conditions(shared, &mut store, &ns_def, &name, &[]);
        }
        let _ = finalize(
            shared,
            &mut store,
            &ns_def,
            &name,
            &json!({"spec": {"finalizers": rest}}),
            "kube-controller-manager",
            false,
        );
    }
}

/// What is left in a terminating namespace, per resource (`<plural>.<group>`): how many objects
/// and the finalizers they still carry.
fn content_left(store: &Store, namespace: &str) -> Vec<(String, usize, Vec<String>)> {
    let mut left = Vec::new();
    for storage in store.storages() {
        let keys = store.keys(&storage, Some(namespace));
        if keys.is_empty() {
            continue;
        }
        let mut finalizers = Vec::new();
        for key in &keys {
            if let Some(s) = store.get(&storage, key) {
                finalizers.extend(generic::finalizers(&s.value));
            }
        }
        // The storage key is `group/plural`; the controller names a resource `plural.group`.
        let (group, plural) = storage.split_once('/').unwrap_or(("", &storage));
        left.push((format!("{plural}.{group}"), keys.len(), finalizers));
    }
    left.sort();
    left
}

/// The namespace controller's conditions on a terminating namespace (its deletion status), as
/// kube-controller-manager writes them through `status`: discovery, parsing and deletion went
/// well; what content and which finalizers remain.
fn conditions(
    left: &[(String, usize, Vec<String>)],
) -> Vec<(&'static str, bool, &'static str, String)> {
    let mut out = vec![
        (
            "NamespaceDeletionDiscoveryFailure",
            false,
            "ResourcesDiscovered",
            "All resources successfully discovered".to_owned(),
        ),
        (
            "NamespaceDeletionGroupVersionParsingFailure",
            false,
            "ParsedGroupVersions",
            "All legacy kube types successfully parsed".to_owned(),
        ),
        (
            "NamespaceDeletionContentFailure",
            false,
            "ContentDeleted",
            "All content successfully deleted, may be waiting on finalization".to_owned(),
        ),
    ];
    if left.is_empty() {
        out.push((
            "NamespaceContentRemaining",
            false,
            "ContentRemoved",
            "All content successfully removed".to_owned(),
        ));
    } else {
        let list: Vec<String> = left
            .iter()
            .map(|(resource, n, _)| format!("{resource} has {n} resource instances"))
            .collect();
        out.push((
            "NamespaceContentRemaining",
            true,
            "SomeResourcesRemain",
            format!("Some resources are remaining: {}", list.join(", ")),
        ));
    }
    let mut by_finalizer: std::collections::BTreeMap<&str, usize> = Default::default();
    for (_, _, finalizers) in left {
        for f in finalizers {
            *by_finalizer.entry(f).or_default() += 1;
        }
    }
    if by_finalizer.is_empty() {
        out.push((
            "NamespaceFinalizersRemaining",
            false,
            "ContentHasNoFinalizers",
            "All content-preserving finalizers finished".to_owned(),
        ));
    } else {
        let list: Vec<String> = by_finalizer
            .iter()
            .map(|(f, n)| format!("{f} in {n} resource instances"))
            .collect();
        out.push((
            "NamespaceFinalizersRemaining",
            true,
            "SomeFinalizersRemain",
            format!(
                "Some content in the namespace has finalizers remaining: {}",
                list.join(", ")
            ),
        ));
    }
    out
}

/// Writes the conditions of [`conditions`] on the namespace `name` when they differ from its
/// current ones (a condition keeps its `lastTransitionTime` while its status stays).
fn set_conditions(
    shared: &Shared,
    store: &mut Store,
    ns_def: &ResourceDef,
    name: &str,
    left: &[(String, usize, Vec<String>)],
) {
    let Some(ns) = store.get(&ns_def.storage, name).cloned() else {
        return;
    };
    let current = ns
        .value
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let now = meta::now_rfc3339();
    let wanted: Vec<Value> = conditions(left)
        .into_iter()
        .map(|(kind, status, reason, message)| {
            let status = if status { "True" } else { "False" };
            let since = current
                .iter()
                .find(|c| {
                    c.get("type") == Some(&json!(kind)) && c.get("status") == Some(&json!(status))
                })
                .and_then(|c| c.get("lastTransitionTime").cloned())
                .unwrap_or_else(|| json!(now));
            json!({"type": kind, "status": status, "lastTransitionTime": since,
                   "reason": reason, "message": message})
        })
        .collect();
    if wanted == current {
        return;
    }
    let mut new = (*ns.value).clone();
    if let Some(status) = new.get_mut("status").and_then(Value::as_object_mut) {
        status.insert("conditions".into(), Value::Array(wanted));
    }
    crate::managed_fields::field_manager_for(store, ns_def, Some("status")).update(
        Some(&ns.value),
        &mut new,
        "kube-controller-manager",
    );
    if let Some(m) = new.as_object_mut() {
        metadata_mut(m).insert(
            "resourceVersion".into(),
            Value::String(store.next_rv().to_string()),
        );
    }
    generic::commit(shared, store, ns_def, None, name, EventType::Modified, new);
}

/// Runs the namespace finalizer until the server is dropped: a pass after every change.
pub(crate) async fn run_finalizer(shared: Weak<Shared>) {
    let mut changed = match shared.upgrade() {
        Some(s) => s.changed.subscribe(),
        None => return,
    };
    loop {
        {
            let Some(shared) = shared.upgrade() else {
                return;
            };
            finalize_pass(&shared);
        }
        if changed.changed().await.is_err() {
            return;
        }
    }
}

/// Starts the namespace finalizer for `shared`.
pub(crate) fn spawn_finalizer(shared: &Arc<Shared>) {
    tokio::spawn(run_finalizer(Arc::downgrade(shared)));
}
