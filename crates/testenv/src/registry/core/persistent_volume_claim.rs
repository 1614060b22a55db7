//! PersistentVolumeClaims, as kube-apiserver's core/v1 defaulting and PVC strategy: the
//! `volumeMode` default, a `Pending` claim on create, and `ValidatePersistentVolumeClaimUpdate`:
//! the spec is immutable once created (a claim may still be given a volume name or a storage
//! class it did not have, and a bound claim may grow its storage request), refused with the diff
//! of the two internal specs as Go encodes them.

use serde_json::{Map, Value, json};

use crate::defaults::json::object;
use crate::defaults::pod;
use crate::registry::rest::Strategy;
use crate::store::Store;
use crate::validation::field::FieldError;

/// The PersistentVolumeClaim strategy.
pub(crate) struct PersistentVolumeClaimStrategy;

impl Strategy for PersistentVolumeClaimStrategy {
    fn defaults(&self, obj: &mut Map<String, Value>) {
        if let Some(spec) = object(obj, "spec") {
            pod::persistent_volume_claim_spec(spec);
        }
    }

    fn prepare_for_create(&self, _store: &Store, _namespace: &str, obj: &mut Map<String, Value>) {
        obj.insert("status".into(), json!({"phase": "Pending"}));
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            normalize_data_sources(spec);
        }
    }

    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        spec_update(old, new)
    }
}

/// `NormalizeDataSources`: a claim that names its data source one way gets the other too, a
/// `dataSource` copied into `dataSourceRef`, a `dataSourceRef` without a namespace into
/// `dataSource` (after the field manager: the writer owns only what it wrote).
fn normalize_data_sources(spec: &mut Map<String, Value>) {
    let set = |v: Option<&Value>| v.filter(|v| !v.is_null()).cloned();
    match (set(spec.get("dataSource")), set(spec.get("dataSourceRef"))) {
        (Some(source), None) => {
            spec.insert("dataSourceRef".into(), source);
        }
        (None, Some(Value::Object(r)))
            if r.get("namespace")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty) =>
        {
            let mut source = Map::new();
            for k in ["apiGroup", "kind", "name"] {
                if let Some(v) = r.get(k) {
                    source.insert(k.into(), v.clone());
                }
            }
            spec.insert("dataSource".into(), Value::Object(source));
        }
        _ => {}
    }
}

/// The internal `PersistentVolumeClaimSpec`, as `json.MarshalIndent(spec, "", " ")` writes it.
fn internal_spec(spec: &Map<String, Value>) -> String {
    let get = |k: &str| spec.get(k).filter(|v| !v.is_null());
    let string = |k: &str| get(k).cloned().unwrap_or_else(|| json!(""));
    let pointer = |k: &str| get(k).cloned().unwrap_or(Value::Null);
    let resources = get("resources");
    let list = |k: &str| {
        resources
            .and_then(|r| r.get(k))
            .filter(|v| !v.is_null())
            .cloned()
            .unwrap_or(Value::Null)
    };
    crate::wire::go_internal::indented(&[
        ("AccessModes", pointer("accessModes")),
        ("Selector", pointer("selector")),
        (
            "Resources",
            crate::wire::go_internal::ordered(&[
                ("Limits", list("limits")),
                ("Requests", list("requests")),
            ]),
        ),
        ("VolumeName", string("volumeName")),
        ("StorageClassName", pointer("storageClassName")),
        ("VolumeMode", pointer("volumeMode")),
        ("DataSource", pointer("dataSource")),
        ("DataSourceRef", pointer("dataSourceRef")),
        (
            "VolumeAttributesClassName",
            pointer("volumeAttributesClassName"),
        ),
    ])
}

/// `ValidatePersistentVolumeClaimUpdate`'s spec rules.
fn spec_update(old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
    let mut old_spec = old
        .get("spec")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut new_spec = new
        .get("spec")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    // A claim may be given the volume and the storage class it did not have yet.
    for key in ["volumeName", "storageClassName"] {
        let unset = old_spec
            .get(key)
            .is_none_or(|v| v.is_null() || v.as_str() == Some(""));
        if unset && let Some(v) = new_spec.get(key) {
            old_spec.insert(key.into(), v.clone());
        }
    }
    // A bound claim may change its storage request and volume attributes class.
    let bound = new
        .get("status")
        .and_then(|s| s.get("phase"))
        .and_then(Value::as_str)
        == Some("Bound");
    if bound {
        let storage = old_spec
            .get("resources")
            .and_then(|r| r.pointer("/requests/storage"))
            .cloned();
        if let (Some(storage), Some(requests)) = (
            storage,
            new_spec
                .get_mut("resources")
                .and_then(|r| r.get_mut("requests"))
                .and_then(Value::as_object_mut),
        ) {
            requests.insert("storage".into(), storage);
        }
        match old_spec.get("volumeAttributesClassName") {
            Some(v) => new_spec.insert("volumeAttributesClassName".into(), v.clone()),
            None => new_spec.remove("volumeAttributesClassName"),
        };
    }
    let (before, after) = (internal_spec(&old_spec), internal_spec(&new_spec));
    if before == after {
        return Vec::new();
    }
    vec![FieldError::forbidden(
        "spec",
        &format!(
            "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{}",
            crate::wire::difflib::unified_diff(&before, &after, 3)
        ),
    )]
}
