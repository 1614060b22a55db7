//! CustomResourceDefinition defaults, as apiextensions-apiserver's `v1` defaulting: no
//! conversion means `strategy: None`; a webhook service listens on port 443.

use serde_json::{Map, Value, json};

use crate::registry::rest::{Generation, Strategy};
use crate::validation::field::FieldError;

pub(crate) fn crd_on_write(obj: &mut Map<String, Value>) {
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let conversion = spec
        .entry("conversion")
        .or_insert_with(|| json!({"strategy": "None"}));
    if let Some(service) = conversion
        .pointer_mut("/webhook/clientConfig/service")
        .and_then(Value::as_object_mut)
    {
        service.entry("port").or_insert(json!(443));
    }
}

/// The CustomResourceDefinition strategy: apiextensions-apiserver's `v1` defaults. (Its
/// validation, status and serving are in [`crate::custom_resource`] and the handlers.)
pub(crate) struct CustomResourceDefinitionStrategy;

impl Strategy for CustomResourceDefinitionStrategy {
    fn generation(&self) -> Generation {
        Generation::OnSpecChange
    }

    fn defaults(&self, obj: &mut Map<String, Value>) {
        crd_on_write(obj);
    }

    fn declares_resources(&self) -> bool {
        true
    }

    /// `ValidateCustomResourceDefinitionSpecUpdate`: once established, the scope and kind
    /// (which decide the storage) cannot change; the group and plural (the resource's name)
    /// never can.
    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        let established = old
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|c| {
                c.get("type") == Some(&json!("Established"))
                    && c.get("status") == Some(&json!("True"))
            });
        let mut fields = Vec::new();
        if established {
            fields.extend([("scope", "/spec/scope"), ("names.kind", "/spec/names/kind")]);
        }
        fields.extend([
            ("group", "/spec/group"),
            ("names.plural", "/spec/names/plural"),
        ]);
        let new = Value::Object(new.clone());
        fields
            .into_iter()
            .filter_map(|(field, pointer)| {
                let after = new.pointer(pointer).cloned().unwrap_or(Value::Null);
                (old.pointer(pointer).cloned().unwrap_or(Value::Null) != after).then(|| {
                    FieldError::invalid(format!("spec.{field}"), &after, "field is immutable")
                })
            })
            .collect()
    }
}
