//! kube-controller-manager's root CA certificate publisher: every active namespace has a
//! ConfigMap `kube-root-ca.crt` whose `ca.crt` is the CA bundle that verifies the API server.

use serde_json::json;

use crate::bootstrap;
use crate::server::Shared;
use crate::store::{Store, object_key};

/// The ConfigMap's name.
const NAME: &str = "kube-root-ca.crt";

/// The annotation kube-controller-manager puts on the ConfigMap.
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

/// Creates `kube-root-ca.crt` in `namespace` unless it exists.
pub(super) fn ensure_root_ca(shared: &Shared, store: &mut Store, namespace: &str, ca_pem: &str) {
    if store
        .get("/configmaps", &object_key(Some(namespace), NAME))
        .is_some()
    {
        return;
    }
    bootstrap::create_as(
        shared,
        store,
        super::MANAGER,
        ("", "v1", "configmaps"),
        Some(namespace),
        json!({
            "metadata": {
                "name": NAME,
                "annotations": {"kubernetes.io/description": DESCRIPTION}
            },
            "data": {"ca.crt": ca_pem}
        }),
    );
}
