//! Secret defaults: `type` defaults to `Opaque`, and `stringData` (write-only) is merged into
//! `data` (base64, replacing keys of the same name) as kube-apiserver's conversion does when it
//! decodes the request, before the field manager: the manager owns `data` keys, never
//! `stringData`.

use serde_json::{Map, Value};

use crate::defaults::json::{object, or_insert_str};

use crate::registry::ResourceDef;
use crate::registry::rest::Strategy;
use crate::validation::{self, field::FieldError};

/// The base64 form of `text`, as Go encodes a `[]byte`.
fn base64(text: &str) -> Value {
    serde_json::to_value(k8s_openapi::ByteString(text.as_bytes().to_vec())).unwrap_or(Value::Null)
}

pub(crate) fn on_write(obj: &mut Map<String, Value>) {
    or_insert_str(obj, "type", "Opaque");
    let Some(Value::Object(string_data)) = obj.remove("stringData") else {
        return;
    };
    if string_data.is_empty() {
        return;
    }
    if let Some(data) = object(obj, "data") {
        for (k, v) in string_data {
            data.insert(k, base64(v.as_str().unwrap_or_default()));
        }
    }
}

/// The Secret strategy: `type` and `stringData` defaults, the keys each type requires, and
/// `type` and `immutable` data fixed once set.
pub(crate) struct SecretStrategy;

impl Strategy for SecretStrategy {
    fn defaults(&self, obj: &mut Map<String, Value>) {
        on_write(obj);
    }

    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        validation::core::secret(obj)
    }

    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        let mut errs = validation::core::secret_update(old, new);
        errs.extend(validation::core::immutable_data(old, new));
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn string_data_should_merge_into_data_and_vanish() {
        let mut s = json!({"data": {"a": "eA==", "b": "eQ=="}, "stringData": {"b": "admin"}});
        on_write(s.as_object_mut().unwrap());
        assert_eq!(
            s,
            json!({"type": "Opaque", "data": {"a": "eA==", "b": "YWRtaW4="}})
        );
    }
}
