//! Defaulting of built-in objects, as kube-apiserver's `pkg/apis/*/v1/defaults.go` and the
//! registries' `PrepareForCreate` do it: each kind has its own file.
//!
//! The order matters for `managedFields`. kube-apiserver defaults an object when it decodes
//! the request, before the field manager records the write, so the manager owns the defaulted
//! fields ([`on_write`]). The registry's strategy (`PrepareForCreate` / `PrepareForUpdate`) and
//! the allocators run after the field manager, so nobody owns what they set
//! ([`prepare_for_create`], [`prepare_for_update`]).

mod apiextensions;
mod apps;
mod json;
mod namespace;
pub(crate) mod pod;
mod pod_admission;
mod secret;
pub(crate) mod service;

pub(crate) use pod_admission::qos_class;

use serde_json::{Map, Value};

use crate::registry::ResourceDef;
use crate::store::Store;

/// Fills the defaults of a new object of `def`'s kind as it is decoded.
pub(crate) fn on_create(def: &ResourceDef, obj: &mut Map<String, Value>) {
    on_write(def, obj);
}

/// Fills the defaults every decoded object of `def`'s kind gets (create, update and the result
/// of a patch).
pub(crate) fn on_write(def: &ResourceDef, obj: &mut Map<String, Value>) {
    if def.custom {
        return;
    }
    match (def.group.as_str(), def.kind.as_str()) {
        ("", "Namespace") => namespace::on_write(obj),
        ("", "Pod") => pod::pod(obj),
        ("", "Secret") => secret::on_write(obj),
        ("", "Service") => service::on_write(obj),
        ("apps", kind) => apps::workload(kind, obj),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => apiextensions::crd_on_write(obj),
        _ => {}
    }
}

/// What the kind's strategy sets on a new object after the field manager: the Namespace
/// finalizer, empty statuses, a Pod's phase, a Service's cluster IPs.
/// `namespace`: the request's (empty for cluster-scoped kinds).
pub(crate) fn prepare_for_create(
    def: &ResourceDef,
    store: &Store,
    namespace: &str,
    obj: &mut Map<String, Value>,
) {
    if def.custom {
        return;
    }
    match (def.group.as_str(), def.kind.as_str()) {
        ("", "Namespace") => namespace::prepare_for_create(obj),
        ("", "Pod") => pod_admission::prepare_for_create(store, namespace, obj),
        ("", "Service") => service::prepare_for_create(store, obj),
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") => {
            apps::prepare_for_create(obj);
        }
        _ => {}
    }
}

/// What the kind's strategy keeps from the stored object when its main resource is updated:
/// a Namespace's finalizers, a Service's allocated cluster IPs.
pub(crate) fn prepare_for_update(def: &ResourceDef, old: &Value, new: &mut Map<String, Value>) {
    if def.custom {
        return;
    }
    match (def.group.as_str(), def.kind.as_str()) {
        ("", "Namespace") => namespace::prepare_for_update(old, new),
        ("", "Service") => service::prepare_for_update(old, new),
        _ => {}
    }
}
