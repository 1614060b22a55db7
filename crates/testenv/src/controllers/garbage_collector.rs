//! kube-controller-manager's garbage collector: an object whose owners (its
//! `metadata.ownerReferences`) are all gone is deleted (in the background); a reference to an
//! owner that is gone is dropped while another owner remains; an owner deleted with
//! `propagationPolicy=Foreground` keeps its `foregroundDeletion` finalizer until its dependents
//! are gone, one deleted with `Orphan` keeps its `orphan` finalizer until its dependents no
//! longer name it.
//!
//! An owner is found as kube-controller-manager finds it: by the reference's `apiVersion`
//! group, `kind` and `name`, in the dependent's namespace (or cluster-wide for cluster-scoped
//! kinds), and counts only if its `uid` is the reference's.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Value, json};

use crate::meta::{meta_str, metadata_mut};
use crate::registry::ResourceDef;
use crate::registry::generic;
use crate::server::Shared;
use crate::store::{EventType, Store, object_key};

const FOREGROUND: &str = "foregroundDeletion";
const ORPHAN: &str = "orphan";

/// One object of the store.
struct Object {
    def: Arc<ResourceDef>,
    key: String,
    value: Arc<Value>,
}

/// What the collector does in a pass.
enum Action {
    /// Delete the dependent (background).
    Delete(usize),
    /// Drop these owner uids from the dependent's references.
    DropOwners(usize, BTreeSet<String>),
    /// Remove a finalizer from an owner.
    RemoveFinalizer(usize, &'static str),
}

fn finalizers(v: &Value) -> Vec<&str> {
    v.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn deleting(v: &Value) -> bool {
    v.pointer("/metadata/deletionTimestamp").is_some()
}

fn owner_refs(v: &Value) -> &[Value] {
    v.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Every object of the store, one storage per resource (the first served version's def).
fn objects(store: &Store) -> Vec<Object> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for def in store.defs() {
        if !seen.insert(def.storage.clone()) {
            continue;
        }
        for key in store.keys(&def.storage, None) {
            if let Some(s) = store.get(&def.storage, &key) {
                out.push(Object {
                    def: def.clone(),
                    key,
                    value: s.value.clone(),
                });
            }
        }
    }
    out
}

/// The stored owner a reference of `dependent` names, if it exists with the reference's uid.
fn owner<'a>(store: &'a Store, dependent: &Object, reference: &Value) -> Option<&'a Arc<Value>> {
    let api_version = reference.get("apiVersion").and_then(Value::as_str)?;
    let group = api_version.split_once('/').map_or("", |(g, _)| g);
    let kind = reference.get("kind").and_then(Value::as_str)?;
    let name = reference.get("name").and_then(Value::as_str)?;
    let uid = reference.get("uid").and_then(Value::as_str)?;
    let def = store
        .defs()
        .iter()
        .find(|d| d.group == group && d.kind == kind)?;
    let namespace = if def.namespaced {
        // A cluster-scoped dependent cannot have a namespaced owner.
        Some(meta_str(&dependent.value, "namespace").filter(|_| dependent.def.namespaced)?)
    } else {
        None
    };
    let found = store.get(&def.storage, &object_key(namespace, name))?;
    (meta_str(&found.value, "uid") == Some(uid)).then_some(&found.value)
}

/// The actions of one pass.
fn plan(store: &Store, all: &[Object]) -> Vec<Action> {
    let mut actions = Vec::new();
    // Owner uids that some dependent still names.
    let mut named: BTreeSet<String> = BTreeSet::new();
    for (i, dependent) in all.iter().enumerate() {
        let refs = owner_refs(&dependent.value);
        if refs.is_empty() {
            continue;
        }
        let mut solid = 0;
        let mut gone = BTreeSet::new();
        let mut orphaning = BTreeSet::new();
        for r in refs {
            let uid = r.get("uid").and_then(Value::as_str).unwrap_or_default();
            named.insert(uid.to_owned());
            match owner(store, dependent, r) {
                None => {
                    gone.insert(uid.to_owned());
                }
                Some(o) if deleting(o) && finalizers(o).contains(&ORPHAN) => {
                    orphaning.insert(uid.to_owned());
                }
                Some(o) if deleting(o) && finalizers(o).contains(&FOREGROUND) => {}
                Some(_) => solid += 1,
            }
        }
        if !orphaning.is_empty() {
            actions.push(Action::DropOwners(i, orphaning));
        } else if solid == 0 {
            if !deleting(&dependent.value) {
                actions.push(Action::Delete(i));
            }
        } else if !gone.is_empty() {
            actions.push(Action::DropOwners(i, gone));
        }
    }
    for (i, o) in all.iter().enumerate() {
        if !deleting(&o.value) {
            continue;
        }
        let uid = meta_str(&o.value, "uid").unwrap_or_default();
        if named.contains(uid) {
            continue;
        }
        for f in [FOREGROUND, ORPHAN] {
            if finalizers(&o.value).contains(&f) {
                actions.push(Action::RemoveFinalizer(i, f));
            }
        }
    }
    actions
}

/// Writes `new` over `o` as kube-controller-manager; removes it when it is terminating and has
/// no finalizer left.
fn write(shared: &Shared, store: &mut Store, o: &Object, mut new: Value) {
    crate::managed_fields::field_manager_for(store, &o.def, None).update(
        Some(&o.value),
        &mut new,
        super::MANAGER,
    );
    let rv = store.next_rv();
    if let Some(m) = new.as_object_mut() {
        metadata_mut(m).insert("resourceVersion".into(), json!(rv.to_string()));
    }
    let namespace = meta_str(&o.value, "namespace").map(str::to_owned);
    let kind = if deleting(&new) && finalizers(&new).is_empty() {
        EventType::Deleted
    } else {
        EventType::Modified
    };
    generic::commit(
        shared,
        store,
        &o.def,
        namespace.as_deref(),
        &o.key,
        kind,
        new,
    );
}

/// Whether `o` is still stored as the pass saw it (an earlier action of the pass may have
/// changed it; the next pass then sees the change).
fn unchanged(store: &Store, o: &Object) -> bool {
    store.get(&o.def.storage, &o.key).is_some_and(|s| {
        meta_str(&s.value, "resourceVersion") == meta_str(&o.value, "resourceVersion")
    })
}

/// One pass of the collector.
pub(super) fn collect(shared: &Shared, store: &mut Store) {
    let all = objects(store);
    for action in plan(store, &all) {
        let i = match action {
            Action::Delete(i) | Action::DropOwners(i, _) | Action::RemoveFinalizer(i, _) => i,
        };
        if !unchanged(store, &all[i]) {
            continue;
        }
        match action {
            Action::Delete(i) => {
                let o = &all[i];
                let _ = generic::delete_one(shared, store, &o.def, &o.key, &json!({}), false);
            }
            Action::DropOwners(i, uids) => {
                let o = &all[i];
                let mut new = (*o.value).clone();
                if let Some(m) = new.as_object_mut() {
                    let meta = metadata_mut(m);
                    let kept: Vec<Value> = meta
                        .get("ownerReferences")
                        .and_then(Value::as_array)
                        .map(|refs| {
                            refs.iter()
                                .filter(|r| {
                                    !uids.contains(
                                        r.get("uid").and_then(Value::as_str).unwrap_or_default(),
                                    )
                                })
                                .cloned()
                                .collect()
                        })
                        .unwrap_or_default();
                    if kept.is_empty() {
                        meta.remove("ownerReferences");
                    } else {
                        meta.insert("ownerReferences".into(), Value::Array(kept));
                    }
                }
                write(shared, store, o, new);
            }
            Action::RemoveFinalizer(i, finalizer) => {
                let o = &all[i];
                let mut new = (*o.value).clone();
                if let Some(m) = new.as_object_mut() {
                    let meta = metadata_mut(m);
                    let kept: Vec<Value> = finalizers(&o.value)
                        .into_iter()
                        .filter(|f| *f != finalizer)
                        .map(|f| json!(f))
                        .collect();
                    if kept.is_empty() {
                        meta.remove("finalizers");
                    } else {
                        meta.insert("finalizers".into(), Value::Array(kept));
                    }
                }
                write(shared, store, o, new);
            }
        }
    }
}
