//! The `StorageObjectInUseProtection` admission plugin: a new PersistentVolumeClaim gets the
//! finalizer `kubernetes.io/pvc-protection`, a new PersistentVolume `kubernetes.io/pv-protection`,
//! so that neither goes while in use (kube-controller-manager's protection controllers remove
//! the finalizer once nothing uses it; see [`crate::controllers`]).

use serde_json::{Map, Value, json};

use super::{Attributes, Plugin};
use crate::defaults::json::object;
use crate::status::ApiResult;

/// The finalizer of a claim.
pub(crate) const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
/// The finalizer of a volume.
pub(crate) const PV_PROTECTION: &str = "kubernetes.io/pv-protection";

/// The plugin.
pub(super) struct StorageObjectInUseProtection;

impl Plugin for StorageObjectInUseProtection {
    fn name(&self) -> &'static str {
        "StorageObjectInUseProtection"
    }

    fn admit_create(&self, a: &Attributes<'_>, obj: &mut Map<String, Value>) -> ApiResult<()> {
        let finalizer = if a.is_core("PersistentVolumeClaim") {
            PVC_PROTECTION
        } else if a.is_core("PersistentVolume") {
            PV_PROTECTION
        } else {
            return Ok(());
        };
        let Some(meta) = object(obj, "metadata") else {
            return Ok(());
        };
        let list = meta.entry("finalizers").or_insert_with(|| json!([]));
        if let Some(l) = list.as_array_mut()
            && !l.iter().any(|f| f.as_str() == Some(finalizer))
        {
            l.push(json!(finalizer));
        }
        Ok(())
    }
}
