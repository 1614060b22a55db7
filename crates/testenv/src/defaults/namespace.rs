//! Namespace defaults: the `kubernetes` finalizer and the immutable
//! `kubernetes.io/metadata.name` label (set to the name on every write).

use serde_json::{Map, Value, json};

use crate::meta::metadata_mut;

/// The label every namespace carries, equal to its name.
pub(crate) const NAME_LABEL: &str = "kubernetes.io/metadata.name";

pub(super) fn on_create(obj: &mut Map<String, Value>) {
    let spec = obj.entry("spec").or_insert_with(|| json!({}));
    if let Some(spec) = spec.as_object_mut()
        && spec
            .get("finalizers")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    {
        spec.insert("finalizers".into(), json!(["kubernetes"]));
    }
}

pub(super) fn on_write(obj: &mut Map<String, Value>) {
    let meta = metadata_mut(obj);
    let Some(name) = meta.get("name").and_then(Value::as_str).map(str::to_owned) else {
        return;
    };
    let labels = meta.entry("labels").or_insert_with(|| json!({}));
    if !labels.is_object() {
        *labels = json!({});
    }
    if let Some(labels) = labels.as_object_mut() {
        labels.insert(NAME_LABEL.into(), Value::String(name));
    }
}
