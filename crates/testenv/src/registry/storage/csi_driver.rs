//! CSIDrivers: the defaults of storage/v1's `SetDefaults_CSIDriver` (attach required, no pod
//! info on mount, no storage capacity, `ReadWriteOnceWithFSType`, persistent volumes only, no
//! republish, no SELinux mount).

use serde_json::{Map, Value, json};

use crate::defaults::json::{object, or_insert, or_insert_str};
use crate::registry::rest::Strategy;

/// The CSIDriver strategy.
pub(crate) struct CsiDriverStrategy;

impl Strategy for CsiDriverStrategy {
    fn defaults(&self, obj: &mut Map<String, Value>) {
        let Some(spec) = object(obj, "spec") else {
            return;
        };
        or_insert(spec, "attachRequired", json!(true));
        or_insert(spec, "podInfoOnMount", json!(false));
        or_insert(spec, "storageCapacity", json!(false));
        or_insert_str(spec, "fsGroupPolicy", "ReadWriteOnceWithFSType");
        if spec
            .get("volumeLifecycleModes")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            spec.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
        }
        or_insert(spec, "requiresRepublish", json!(false));
        or_insert(spec, "seLinuxMount", json!(false));
    }
}
