//! StorageClasses, as storage/v1's `SetDefaults_StorageClass` (reclaim policy `Delete`, binding
//! mode `Immediate`), kube-apiserver's `storageclass` strategy and `ValidateStorageClassUpdate`:
//! `parameters`, `provisioner` and `reclaimPolicy` may not change (`Forbidden: updates to ...
//! are forbidden.`), nor may `volumeBindingMode` (`field is immutable`).

use serde_json::{Map, Value};

use crate::defaults::json::or_insert_str;
use crate::registry::rest::Strategy;
use crate::validation::field::FieldError;

/// The StorageClass strategy.
pub(crate) struct StorageClassStrategy;

impl Strategy for StorageClassStrategy {
    fn defaults(&self, obj: &mut Map<String, Value>) {
        or_insert_str(obj, "reclaimPolicy", "Delete");
        or_insert_str(obj, "volumeBindingMode", "Immediate");
    }

    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        let field = |v: &Value, k: &str| v.get(k).cloned().unwrap_or(Value::Null);
        let new = Value::Object(new.clone());
        let mut errs = Vec::new();
        // Go compares the maps with `reflect.DeepEqual`: nil and empty differ, but both are
        // stored alike, so absent and `{}` are one here.
        let params = |v: &Value| {
            v.get("parameters")
                .and_then(Value::as_object)
                .filter(|m| !m.is_empty())
                .cloned()
        };
        if params(old) != params(&new) {
            errs.push(FieldError::forbidden(
                "parameters",
                "updates to parameters are forbidden.",
            ));
        }
        for (key, what) in [
            ("provisioner", "provisioner"),
            ("reclaimPolicy", "reclaimPolicy"),
        ] {
            if field(old, key) != field(&new, key) {
                errs.push(FieldError::forbidden(
                    key,
                    &format!("updates to {what} are forbidden."),
                ));
            }
        }
        let mode = field(&new, "volumeBindingMode");
        if field(old, "volumeBindingMode") != mode {
            errs.push(FieldError::invalid(
                "volumeBindingMode",
                &mode,
                "field is immutable",
            ));
        }
        errs
    }

    fn validates_new_state_first(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_a_provisioner_was_given_should_not_change() {
        let old = json!({"provisioner": "a", "reclaimPolicy": "Delete",
            "volumeBindingMode": "Immediate", "parameters": {"type": "ssd"}});
        let new = json!({"provisioner": "b", "reclaimPolicy": "Retain",
            "volumeBindingMode": "WaitForFirstConsumer"});
        let errs = StorageClassStrategy.validate_update(&old, new.as_object().unwrap());
        let msgs: Vec<String> = errs
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
        assert_eq!(
            msgs,
            [
                "parameters: Forbidden: updates to parameters are forbidden.",
                "provisioner: Forbidden: updates to provisioner are forbidden.",
                "reclaimPolicy: Forbidden: updates to reclaimPolicy are forbidden.",
                "volumeBindingMode: Invalid value: \"WaitForFirstConsumer\": field is immutable",
            ]
        );
    }
}
