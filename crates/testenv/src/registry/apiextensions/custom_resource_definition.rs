//! CustomResourceDefinition defaults, as apiextensions-apiserver's `v1` defaulting: no
//! conversion means `strategy: None`; a webhook service listens on port 443.

use serde_json::{Map, Value, json};

use crate::registry::rest::Strategy;

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
    fn defaults(&self, obj: &mut Map<String, Value>) {
        crd_on_write(obj);
    }
}
