//! ResourceQuotas: a new quota's status is empty (`status: {}`) until the quota controller
//! fills it (kube-apiserver's `PrepareForCreate` resets it).

use serde_json::{Map, Value, json};

use crate::registry::rest::Strategy;
use crate::store::Store;

/// The ResourceQuota strategy.
pub(crate) struct ResourceQuotaStrategy;

impl Strategy for ResourceQuotaStrategy {
    fn prepare_for_create(&self, _store: &Store, _namespace: &str, obj: &mut Map<String, Value>) {
        obj.insert("status".into(), json!({}));
    }
}
