//! PersistentVolumes: core/v1's `SetDefaults_PersistentVolume` (reclaim policy `Retain`, volume
//! mode `Filesystem`, a host path's empty `type`) before the field manager records the write,
//! and the strategy's `PrepareForCreate`: a new volume's status is `Pending` since now.

use serde_json::{Map, Value, json};

use crate::defaults::json::{existing, or_insert, or_insert_str};
use crate::registry::rest::Strategy;
use crate::store::Store;

/// The PersistentVolume strategy.
pub(crate) struct PersistentVolumeStrategy;

impl Strategy for PersistentVolumeStrategy {
    fn defaults(&self, obj: &mut Map<String, Value>) {
        let Some(spec) = existing(obj, "spec") else {
            return;
        };
        or_insert_str(spec, "persistentVolumeReclaimPolicy", "Retain");
        or_insert_str(spec, "volumeMode", "Filesystem");
        if let Some(host_path) = existing(spec, "hostPath") {
            or_insert(host_path, "type", json!(""));
        }
    }

    fn prepare_for_create(&self, _store: &Store, _namespace: &str, obj: &mut Map<String, Value>) {
        obj.insert(
            "status".into(),
            json!({"phase": "Pending", "lastPhaseTransitionTime": crate::meta::now_rfc3339()}),
        );
    }
}
