//! StorageClasses, as storage/v1's `SetDefaults_StorageClass` (reclaim policy `Delete`, binding
//! mode `Immediate`), kube-apiserver's `storageclass` strategy and `ValidateStorageClassUpdate`:
//! `parameters`, `provisioner` and `reclaimPolicy` may not change (`Forbidden: updates to ...
//! are forbidden.`), nor may `volumeBindingMode` (`field is immutable`). `ValidateStorageClass`
//! on every write: a provisioner that is a qualified name, parameters with non-empty keys and at
//! most 512 of them, a reclaim policy of `Delete` or `Retain`, a known binding mode.

use serde_json::{Map, Value, json};

use crate::defaults::json::or_insert_str;
use crate::registry::ResourceDef;
use crate::registry::rest::Strategy;
use crate::validation::field::FieldError;
use crate::validation::names;

/// The most parameters a StorageClass may have.
const MAX_PARAMETERS: usize = 512;
/// The largest total size of the parameters (keys and values), in bytes.
const MAX_PARAMETERS_SIZE: usize = 256 * 1024;

/// `ValidateStorageClass` (after the metadata).
fn storage_class(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let text = |k: &str| obj.get(k).and_then(Value::as_str).unwrap_or_default();
    let provisioner = text("provisioner");
    if provisioner.is_empty() {
        errs.push(FieldError::required("provisioner", ""));
    } else {
        let lower = provisioner.to_lowercase();
        for msg in names::qualified_name(&lower) {
            errs.push(FieldError::invalid("provisioner", &json!(lower), &msg));
        }
    }
    if let Some(params) = obj.get("parameters").and_then(Value::as_object) {
        if params.len() > MAX_PARAMETERS {
            errs.push(FieldError::too_long("parameters", MAX_PARAMETERS));
        } else {
            let mut total = 0;
            for (k, v) in params {
                if k.is_empty() {
                    errs.push(FieldError::invalid(
                        "parameters",
                        &json!(k),
                        "field can not be empty.",
                    ));
                }
                total += k.len() + v.as_str().map_or(0, str::len);
            }
            if total > MAX_PARAMETERS_SIZE {
                errs.push(FieldError::too_long("parameters", MAX_PARAMETERS_SIZE));
            }
        }
    }
    let reclaim = text("reclaimPolicy");
    if !reclaim.is_empty() && !matches!(reclaim, "Delete" | "Retain") {
        errs.push(FieldError::not_supported(
            "reclaimPolicy",
            &json!(reclaim),
            &["Delete", "Retain"],
        ));
    }
    match obj.get("volumeBindingMode").and_then(Value::as_str) {
        None => errs.push(FieldError::required("volumeBindingMode", "")),
        Some("Immediate" | "WaitForFirstConsumer") => {}
        Some(mode) => errs.push(FieldError::not_supported(
            "volumeBindingMode",
            &json!(mode),
            &["Immediate", "WaitForFirstConsumer"],
        )),
    }
    errs
}

/// The StorageClass strategy.
pub(crate) struct StorageClassStrategy;

impl Strategy for StorageClassStrategy {
    fn defaults(&self, obj: &mut Map<String, Value>) {
        or_insert_str(obj, "reclaimPolicy", "Delete");
        or_insert_str(obj, "volumeBindingMode", "Immediate");
    }

    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        storage_class(obj)
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

    #[test]
    fn a_class_should_name_a_qualified_provisioner_and_known_policies() {
        let mut sc = json!({"metadata": {"name": "fast"}, "provisioner": "Bad Provisioner!",
            "parameters": {"": "x"}, "reclaimPolicy": "Recycle", "volumeBindingMode": "Later"});
        StorageClassStrategy.defaults(sc.as_object_mut().unwrap());
        let got: Vec<(String, String)> = storage_class(sc.as_object().unwrap())
            .into_iter()
            .map(|e| (e.field, e.message))
            .collect();
        let mut want: Vec<(String, String)> = names::qualified_name("bad provisioner!")
            .into_iter()
            .map(|m| {
                (
                    "provisioner".to_owned(),
                    format!("Invalid value: \"bad provisioner!\": {m}"),
                )
            })
            .collect();
        want.extend([
            ("parameters".to_owned(), "Invalid value: \"\": field can not be empty.".to_owned()),
            ("reclaimPolicy".to_owned(), "Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\"".to_owned()),
            ("volumeBindingMode".to_owned(), "Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\"".to_owned()),
        ]);
        assert!(!want.is_empty());
        assert_eq!(got, want);
        let mut none = json!({"metadata": {"name": "x"}});
        StorageClassStrategy.defaults(none.as_object_mut().unwrap());
        assert_eq!(
            storage_class(none.as_object().unwrap())
                .into_iter()
                .map(|e| (e.field, e.message))
                .collect::<Vec<_>>(),
            [("provisioner".to_owned(), "Required value".to_owned())]
        );
    }

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
