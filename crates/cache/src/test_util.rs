//! Helpers shared by the unit tests.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;

/// A ConfigMap `ns/name` (cluster-scoped if `ns` is empty) whose data holds
/// `version` under "v".
pub(crate) fn cm(ns: &str, name: &str, version: u32) -> Arc<ConfigMap> {
    let mut cm = ConfigMap::default();
    if !ns.is_empty() {
        cm.metadata.namespace = Some(ns.to_owned());
    }
    cm.metadata.name = Some(name.to_owned());
    cm.data = Some(BTreeMap::from([("v".to_owned(), version.to_string())]));
    Arc::new(cm)
}

/// A ConfigMap with labels.
pub(crate) fn cm_labels(ns: &str, name: &str, labels: &[(&str, &str)]) -> Arc<ConfigMap> {
    let mut obj = Arc::unwrap_or_clone(cm(ns, name, 0));
    obj.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    );
    Arc::new(obj)
}

/// The "v" data entry of a ConfigMap.
pub(crate) fn version(cm: &ConfigMap) -> u32 {
    cm.data
        .as_ref()
        .and_then(|d| d.get("v"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(u32::MAX)
}
