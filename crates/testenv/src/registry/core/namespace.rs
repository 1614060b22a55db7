//! Namespace defaults: the immutable `kubernetes.io/metadata.name` label (set to the name when
//! the object is decoded, so the writer owns it), and the `kubernetes` finalizer, which the
//! namespace strategy sets after the field manager (nobody owns it) and keeps on updates.

use serde_json::{Map, Value, json};

use crate::meta::metadata_mut;

use crate::registry::rest::{NameRule, Strategy};
use crate::store::Store;
use crate::validation::names;

/// The label every namespace carries, equal to its name.
pub(crate) const NAME_LABEL: &str = "kubernetes.io/metadata.name";

pub(crate) fn prepare_for_create(obj: &mut Map<String, Value>) {
    let spec = obj.entry("spec").or_insert_with(|| json!({}));
    if !spec.is_object() {
        *spec = json!({});
    }
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    let finalizers = spec.entry("finalizers").or_insert_with(|| json!([]));
    if !finalizers.is_array() {
        *finalizers = json!([]);
    }
    if let Some(list) = finalizers.as_array_mut()
        && !list.iter().any(|f| f == "kubernetes")
    {
        list.push(json!("kubernetes"));
    }
}

/// An update of the main resource cannot change `spec.finalizers` (only `/finalize` does).
pub(crate) fn prepare_for_update(old: &Value, new: &mut Map<String, Value>) {
    let old_finalizers = old.pointer("/spec/finalizers").cloned();
    let spec = new.entry("spec").or_insert_with(|| json!({}));
    if !spec.is_object() {
        *spec = json!({});
    }
    if let Some(spec) = spec.as_object_mut() {
        match old_finalizers {
            Some(f) => spec.insert("finalizers".into(), f),
            None => spec.remove("finalizers"),
        };
    }
}

pub(crate) fn on_write(obj: &mut Map<String, Value>) {
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

/// The Namespace strategy: a new namespace is `Active` with the `kubernetes` finalizer, its
/// name is a DNS-1123 label, updates keep its finalizers.
pub(crate) struct NamespaceStrategy;

impl Strategy for NamespaceStrategy {
    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn terminates_on_delete(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Map<String, Value>) {
        on_write(obj);
    }

    fn defaults_on_create(&self, obj: &mut Map<String, Value>) {
        obj.insert("status".into(), json!({"phase": "Active"}));
        on_write(obj);
    }

    fn prepare_for_create(&self, _store: &Store, _namespace: &str, obj: &mut Map<String, Value>) {
        prepare_for_create(obj);
    }

    fn prepare_for_update(&self, old: &Value, new: &mut Map<String, Value>) {
        prepare_for_update(old, new);
    }

    fn name_rule(&self) -> NameRule {
        names::dns1123_label
    }

    /// `ValidateNamespace`'s finalizer names: qualified names, and a name without a prefix is
    /// one of the standard finalizers.
    fn validate(
        &self,
        _def: &crate::registry::ResourceDef,
        obj: &Map<String, Value>,
    ) -> Vec<crate::validation::field::FieldError> {
        use crate::validation::field::FieldError;
        let mut errs = Vec::new();
        let finalizers = obj
            .get("spec")
            .and_then(|s| s.get("finalizers"))
            .and_then(Value::as_array);
        for name in finalizers.into_iter().flatten() {
            let name = name.as_str().unwrap_or_default();
            for msg in names::qualified_name(name) {
                errs.push(FieldError::invalid("spec.finalizers", &json!(name), &msg));
            }
            if !name.contains('/')
                && !matches!(name, "kubernetes" | "orphan" | "foregroundDeletion")
            {
                errs.push(FieldError::invalid(
                    "spec.finalizers",
                    &json!(name),
                    "name is neither a standard finalizer name nor is it fully qualified",
                ));
            }
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_finalizers_should_be_qualified_or_standard() {
        let def = crate::registry::builtins()
            .into_iter()
            .find(|d| d.kind == "Namespace")
            .unwrap();
        let ns =
            json!({"spec": {"finalizers": ["kubernetes", "example.com/cleanup", "cleanup", "-x"]}});
        let got: Vec<(String, String)> = NamespaceStrategy
            .validate(&def, ns.as_object().unwrap())
            .into_iter()
            .map(|e| (e.field, e.message))
            .collect();
        let mut want = vec![(
            "spec.finalizers".to_owned(),
            "Invalid value: \"cleanup\": name is neither a standard finalizer name nor is it fully qualified".to_owned(),
        )];
        for msg in names::qualified_name("-x") {
            want.push((
                "spec.finalizers".to_owned(),
                format!("Invalid value: \"-x\": {msg}"),
            ));
        }
        want.push((
            "spec.finalizers".to_owned(),
            "Invalid value: \"-x\": name is neither a standard finalizer name nor is it fully qualified".to_owned(),
        ));
        assert_eq!(got, want);
    }
}
