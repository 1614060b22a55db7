//! PersistentVolumeClaims: a claim's volume is a file system unless it says otherwise
//! (`SetDefaults_PersistentVolumeClaimSpec`), and a new claim is `Pending` (no binder runs).

use serde_json::{Map, Value, json};

use crate::defaults::json::object;
use crate::registry::rest::Strategy;
use crate::store::Store;

/// The PersistentVolumeClaim strategy.
pub(crate) struct PersistentVolumeClaimStrategy;

impl Strategy for PersistentVolumeClaimStrategy {
    fn defaults(&self, obj: &mut Map<String, Value>) {
        if let Some(spec) = object(obj, "spec") {
            crate::defaults::pod::persistent_volume_claim_spec(spec);
        }
    }

    fn prepare_for_create(&self, _store: &Store, _namespace: &str, obj: &mut Map<String, Value>) {
        obj.insert("status".into(), json!({"phase": "Pending"}));
    }
}
