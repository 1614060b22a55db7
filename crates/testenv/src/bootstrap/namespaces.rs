//! The namespaces a new kube-apiserver creates.

use serde_json::json;

use crate::meta::{self};
use crate::registry::generic::commit;
use crate::server::Shared;
use crate::store::EventType;

/// Creates `default`, `kube-system`, `kube-public` and `kube-node-lease`.
pub(crate) fn create_default_namespaces(shared: &Shared) {
    let mut store = shared.store.lock();
    let Some(def) = store.def("", "v1", "namespaces").cloned() else {
        return;
    };
    for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let rv = store.next_rv();
        let obj = json!({
            "kind": "Namespace",
            "apiVersion": "v1",
            "metadata": {
                "name": name,
                "uid": meta::new_uid(),
                "resourceVersion": rv.to_string(),
                "creationTimestamp": meta::now_rfc3339(),
                "labels": {"kubernetes.io/metadata.name": name}
            },
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"}
        });
        commit(shared, &mut store, &def, None, name, EventType::Added, obj);
    }
}
