//! What kube-apiserver creates when it starts, before any client writes (besides the system
//! namespaces, see [`namespaces`]): the `default/kubernetes` Service with its
//! Endpoints and EndpointSlice (its bootstrap controller and endpoint reconciler), the default
//! PriorityClasses (the `scheduling/bootstrap-system-priority-classes` hook) and the RBAC
//! bootstrap policy (the `rbac/bootstrap-roles` hook).
//!
//! Each object is written as kube-apiserver writes it, with an `Update` entry of the manager
//! `kube-apiserver` in its `managedFields`.

pub(crate) mod namespaces;
mod policy;

use serde_json::{Map, Value, json};

use crate::managed_fields;
use crate::meta::{self, metadata_mut};
use crate::registry::generic;
use crate::server::Shared;
use crate::store::{EventType, Store, object_key};

/// The first address of kube-apiserver's default service range (`10.0.0.0/24`), which the
/// `kubernetes` Service gets.
pub(crate) const KUBERNETES_SERVICE_IP: &str = "10.0.0.1";

/// The field manager of the objects kube-apiserver writes itself.
const MANAGER: &str = "kube-apiserver";

/// Stores a new object as kube-apiserver's own write (skipped when the resource is not served
/// or the object exists).
fn create(
    shared: &Shared,
    store: &mut Store,
    resource: (&str, &str, &str),
    namespace: Option<&str>,
    obj: Value,
) {
    create_as(shared, store, MANAGER, resource, namespace, obj);
}

/// Stores a new object written by `manager` (a component of the control plane): `kind`,
/// `apiVersion`, `uid`, `creationTimestamp`, `generation` where the kind keeps one,
/// `managedFields` and `resourceVersion` are filled in. Skipped when the resource is not
/// served or the object exists.
pub(crate) fn create_as(
    shared: &Shared,
    store: &mut Store,
    manager: &str,
    (group, version, plural): (&str, &str, &str),
    namespace: Option<&str>,
    mut obj: Value,
) {
    let Some(def) = store.def(group, version, plural).cloned() else {
        return;
    };
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    let mut typed = Map::new();
    typed.insert("kind".into(), Value::String(def.kind.clone()));
    typed.insert("apiVersion".into(), Value::String(def.api_version()));
    typed.extend(std::mem::take(map));
    *map = typed;
    let meta = metadata_mut(map);
    let name = meta
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    if let Some(ns) = namespace {
        meta.insert("namespace".into(), json!(ns));
    }
    meta.insert("uid".into(), json!(meta::new_uid()));
    meta.insert("creationTimestamp".into(), json!(meta::now_rfc3339()));
    if def.generation() != crate::registry::rest::Generation::Untracked {
        meta.insert("generation".into(), json!(1));
    }
    let key = object_key(namespace, &name);
    if store.get(&def.storage, &key).is_some() {
        return;
    }
    managed_fields::field_manager_for(store, &def, None).update(None, &mut obj, manager);
    if let Some(m) = obj.as_object_mut() {
        metadata_mut(m).insert("resourceVersion".into(), json!(store.next_rv().to_string()));
    }
    generic::commit(shared, store, &def, namespace, &key, EventType::Added, obj);
}

/// The `default/kubernetes` Service, its Endpoints and its EndpointSlice, pointing at this
/// server.
fn kubernetes_service(shared: &Shared, store: &mut Store) {
    let ip = shared.addr.ip().to_string();
    let port = shared.addr.port();
    let ns = Some("default");
    create(
        shared,
        store,
        ("", "v1", "services"),
        ns,
        json!({
            "metadata": {
                "name": "kubernetes",
                "labels": {"component": "apiserver", "provider": "kubernetes"}
            },
            "spec": {
                "ports": [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}],
                "clusterIP": KUBERNETES_SERVICE_IP,
                "clusterIPs": [KUBERNETES_SERVICE_IP],
                "type": "ClusterIP",
                "sessionAffinity": "None",
                "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack",
                "internalTrafficPolicy": "Cluster"
            },
            "status": {"loadBalancer": {}}
        }),
    );
    create(
        shared,
        store,
        ("", "v1", "endpoints"),
        ns,
        json!({
            "metadata": {
                "name": "kubernetes",
                "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}
            },
            "subsets": [{
                "addresses": [{"ip": ip}],
                "ports": [{"name": "https", "port": port, "protocol": "TCP"}]
            }]
        }),
    );
    create(
        shared,
        store,
        ("discovery.k8s.io", "v1", "endpointslices"),
        ns,
        json!({
            "metadata": {
                "name": "kubernetes",
                "labels": {"kubernetes.io/service-name": "kubernetes"}
            },
            "addressType": "IPv4",
            "endpoints": [{"addresses": [ip], "conditions": {"ready": true}}],
            "ports": [{"name": "https", "protocol": "TCP", "port": port}]
        }),
    );
}

/// `system-node-critical` and `system-cluster-critical`.
fn priority_classes(shared: &Shared, store: &mut Store) {
    let classes = [
        (
            "system-node-critical",
            2_000_001_000_i64,
            "Used for system critical pods that must not be moved from their current node.",
        ),
        (
            "system-cluster-critical",
            2_000_000_000,
            "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
        ),
    ];
    for (name, value, description) in classes {
        create(
            shared,
            store,
            ("scheduling.k8s.io", "v1", "priorityclasses"),
            None,
            json!({
                "metadata": {"name": name},
                "value": value,
                "description": description,
                "preemptionPolicy": "PreemptLowerPriority"
            }),
        );
    }
}

/// The RBAC bootstrap policy.
fn rbac(shared: &Shared, store: &mut Store) {
    let policy = policy::bootstrap_policy();
    let group = "rbac.authorization.k8s.io";
    for role in policy.cluster_roles {
        create(shared, store, (group, "v1", "clusterroles"), None, role);
    }
    for binding in policy.cluster_role_bindings {
        create(
            shared,
            store,
            (group, "v1", "clusterrolebindings"),
            None,
            binding,
        );
    }
    for (ns, role) in policy.roles {
        create(shared, store, (group, "v1", "roles"), Some(&ns), role);
    }
    for (ns, binding) in policy.role_bindings {
        create(
            shared,
            store,
            (group, "v1", "rolebindings"),
            Some(&ns),
            binding,
        );
    }
}

/// Creates every object kube-apiserver creates at start.
pub(crate) fn create_startup_objects(shared: &Shared) {
    let mut store = shared.store.lock();
    kubernetes_service(shared, &mut store);
    priority_classes(shared, &mut store);
    rbac(shared, &mut store);
}
