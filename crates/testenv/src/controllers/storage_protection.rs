//! kube-controller-manager's PVC and PV protection controllers: a PersistentVolumeClaim being
//! deleted loses its `kubernetes.io/pvc-protection` finalizer once no Pod of its namespace that
//! has not ended uses it (as a `persistentVolumeClaim` volume); a PersistentVolume being deleted
//! loses `kubernetes.io/pv-protection` once no claim is bound to it (`spec.claimRef` of a claim
//! that exists).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::admission::storage_protection::{PV_PROTECTION, PVC_PROTECTION};
use crate::meta::{meta_str, metadata_mut};
use crate::registry::generic;
use crate::server::Shared;
use crate::store::{EventType, Store, object_key};

fn finalizers(v: &Value) -> Vec<&str> {
    v.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Whether a Pod of `namespace` that has not ended mounts the claim `name`.
fn claim_in_use(store: &Store, namespace: &str, name: &str) -> bool {
    store.keys("/pods", Some(namespace)).iter().any(|k| {
        store.get("/pods", k).is_some_and(|p| {
            let ended = matches!(
                p.value.pointer("/status/phase").and_then(Value::as_str),
                Some("Succeeded" | "Failed")
            );
            !ended
                && p.value
                    .pointer("/spec/volumes")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .any(|v| {
                        v.pointer("/persistentVolumeClaim/claimName")
                            .and_then(Value::as_str)
                            == Some(name)
                    })
        })
    })
}

/// Whether a claim named by a volume's `spec.claimRef` exists.
fn volume_in_use(store: &Store, volume: &Value) -> bool {
    let (Some(ns), Some(name)) = (
        volume
            .pointer("/spec/claimRef/namespace")
            .and_then(Value::as_str),
        volume
            .pointer("/spec/claimRef/name")
            .and_then(Value::as_str),
    ) else {
        return false;
    };
    store
        .get("/persistentvolumeclaims", &object_key(Some(ns), name))
        .is_some()
}

/// Removes `finalizer` from the stored object as kube-controller-manager.
fn release(shared: &Shared, store: &mut Store, storage: &str, key: &str, finalizer: &str) {
    let Some(stored) = store.get(storage, key) else {
        return;
    };
    let Some(def) = store
        .defs()
        .iter()
        .find(|d| &*d.storage == storage)
        .cloned()
    else {
        return;
    };
    let old: Arc<Value> = stored.value.clone();
    let mut new = (*old).clone();
    if let Some(m) = new.as_object_mut() {
        let meta = metadata_mut(m);
        let kept: Vec<Value> = finalizers(&old)
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
    crate::managed_fields::field_manager_for(store, &def, None).update(
        Some(&old),
        &mut new,
        super::MANAGER,
    );
    if let Some(m) = new.as_object_mut() {
        generic::set_rv(m, store.next_rv());
    }
    let kind = if finalizers(&new).is_empty() {
        EventType::Deleted
    } else {
        EventType::Modified
    };
    let namespace = meta_str(&old, "namespace").map(str::to_owned);
    generic::commit(shared, store, &def, namespace.as_deref(), key, kind, new);
}

/// One pass of both controllers.
pub(super) fn sync(shared: &Shared, store: &mut Store) {
    let mut releases = Vec::new();
    for key in store.keys("/persistentvolumeclaims", None) {
        let Some(claim) = store.get("/persistentvolumeclaims", &key) else {
            continue;
        };
        let v = &claim.value;
        if v.pointer("/metadata/deletionTimestamp").is_none()
            || !finalizers(v).contains(&PVC_PROTECTION)
        {
            continue;
        }
        let ns = meta_str(v, "namespace").unwrap_or_default();
        let name = meta_str(v, "name").unwrap_or_default();
        if !claim_in_use(store, ns, name) {
            releases.push(("/persistentvolumeclaims", key, PVC_PROTECTION));
        }
    }
    for key in store.keys("/persistentvolumes", None) {
        let Some(volume) = store.get("/persistentvolumes", &key) else {
            continue;
        };
        let v = &volume.value;
        if v.pointer("/metadata/deletionTimestamp").is_some()
            && finalizers(v).contains(&PV_PROTECTION)
            && !volume_in_use(store, v)
        {
            releases.push(("/persistentvolumes", key, PV_PROTECTION));
        }
    }
    for (storage, key, finalizer) in releases {
        release(shared, store, storage, &key, finalizer);
    }
}
