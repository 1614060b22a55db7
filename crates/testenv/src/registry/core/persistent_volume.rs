//! PersistentVolumes: core/v1's `SetDefaults_PersistentVolume` (reclaim policy `Retain`, volume
//! mode `Filesystem`, a host path's empty `type`) before the field manager records the write,
//! and the strategy's `PrepareForCreate`: a new volume's status is `Pending` since now.
//!
//! `ValidatePersistentVolume`: access modes, a capacity of `storage` only and above zero, the
//! reclaim policy, node affinity, exactly one volume source (the common sources' own fields:
//! `hostPath`, `nfs`, `local`, `csi`), the class name and volume mode. On update the strategy
//! validates the new state twice (`ValidatePersistentVolume`, then again inside
//! `ValidatePersistentVolumeUpdate`) before what may not change: the volume source and the
//! volume mode.

use serde_json::{Map, Value, json};

use crate::defaults::json::{existing, or_insert, or_insert_str};
use crate::registry::ResourceDef;
use crate::registry::rest::Strategy;
use crate::store::Store;
use crate::validation::field::FieldError;
use crate::validation::names;

/// The volume sources of a PersistentVolume spec, in the order kube-apiserver checks them,
/// with the path their own rules name.
const SOURCES: [(&str, &str); 22] = [
    ("hostPath", "hostPath"),
    ("gcePersistentDisk", "persistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephfs"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
    ("csi", "csi"),
];

/// The name a source's "more than one volume type" cause uses (Go's field names differ in
/// case for two of them).
fn forbidden_name(key: &str) -> &str {
    match key {
        "cephfs" => "cephFS",
        other => other,
    }
}

/// A quantity's integer value, rounded up (`Quantity.Value()`); `None` when unreadable.
fn quantity_value(q: &Value) -> Option<f64> {
    quantity_number(q).map(f64::ceil)
}

/// A quantity's value as a number (`None` when unreadable).
pub(crate) fn quantity_number(q: &Value) -> Option<f64> {
    crate::admission::quantity::Quantity::from_value(q).map(|q| q.as_f64())
}

fn quantity_text(q: &Value) -> Value {
    match q {
        Value::String(_) => q.clone(),
        other => json!(other.to_string()),
    }
}

/// `validatePathNoBacksteps`.
fn no_backsteps(path: &str, field: &str, errs: &mut Vec<FieldError>) {
    if path.split('/').any(|part| part == "..") {
        errs.push(FieldError::invalid(
            field,
            &json!(path),
            "must not contain '..'",
        ));
    }
}

/// The rules of the common volume sources; the others are only counted.
fn source_rules(key: &str, src: &Value, at: &str, errs: &mut Vec<FieldError>) {
    let text = |k: &str| src.get(k).and_then(Value::as_str).unwrap_or_default();
    match key {
        "hostPath" => {
            if text("path").is_empty() {
                errs.push(FieldError::required(format!("{at}.path"), ""));
            } else {
                no_backsteps(text("path"), &format!("{at}.path"), errs);
            }
            const TYPES: [&str; 8] = [
                "",
                "BlockDevice",
                "CharDevice",
                "Directory",
                "DirectoryOrCreate",
                "File",
                "FileOrCreate",
                "Socket",
            ];
            if let Some(t) = src.get("type").and_then(Value::as_str)
                && !TYPES.contains(&t)
            {
                errs.push(FieldError::not_supported(
                    format!("{at}.type"),
                    &json!(t),
                    &TYPES,
                ));
            }
        }
        "nfs" => {
            if text("server").is_empty() {
                errs.push(FieldError::required(format!("{at}.server"), ""));
            }
            if text("path").is_empty() {
                errs.push(FieldError::required(format!("{at}.path"), ""));
            }
            if !text("path").starts_with('/') {
                errs.push(FieldError::invalid(
                    format!("{at}.path"),
                    &json!(text("path")),
                    "must be an absolute path",
                ));
            }
        }
        "local" => {
            if text("path").is_empty() {
                errs.push(FieldError::required(format!("{at}.path"), ""));
            } else {
                no_backsteps(text("path"), &format!("{at}.path"), errs);
            }
        }
        "csi" => {
            let driver = text("driver");
            if driver.is_empty() {
                errs.push(FieldError::required(format!("{at}.driver"), ""));
            } else {
                if driver.len() > 63 {
                    errs.push(FieldError::too_long(format!("{at}.driver"), 63));
                }
                for msg in names::dns1123_subdomain(&driver.to_lowercase()) {
                    errs.push(FieldError::invalid(
                        format!("{at}.driver"),
                        &json!(driver),
                        &msg,
                    ));
                }
            }
            if text("volumeHandle").is_empty() {
                errs.push(FieldError::required(format!("{at}.volumeHandle"), ""));
            }
        }
        _ => {}
    }
}

/// `ValidatePersistentVolumeSpec` (not inline) and the volume package's backstep check.
fn pv_spec(obj: &Map<String, Value>) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let null = Value::Null;
    let spec = obj.get("spec").unwrap_or(&null);
    let get = |key: &str| spec.get(key).filter(|v| !v.is_null());
    const MODES: [&str; 4] = [
        "ReadOnlyMany",
        "ReadWriteMany",
        "ReadWriteOnce",
        "ReadWriteOncePod",
    ];
    let modes = get("accessModes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if modes.is_empty() {
        errs.push(FieldError::required("spec.accessModes", ""));
    }
    let (mut once_pod, mut others) = (false, false);
    for mode in &modes {
        let mode = mode.as_str().unwrap_or_default();
        if !MODES.contains(&mode) {
            errs.push(FieldError::not_supported(
                "spec.accessModes",
                &json!(mode),
                &MODES,
            ));
        } else if mode == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            others = true;
        }
    }
    if once_pod && others {
        errs.push(FieldError::forbidden(
            "spec.accessModes",
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    let capacity = get("capacity")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    if capacity.is_empty() {
        errs.push(FieldError::required("spec.capacity", ""));
    }
    if !capacity.contains_key("storage") || capacity.len() > 1 {
        let shown: Map<String, Value> = capacity
            .iter()
            .map(|(k, v)| (k.clone(), quantity_text(v)))
            .collect();
        errs.push(FieldError::not_supported(
            "spec.capacity",
            &Value::Object(shown),
            &["storage"],
        ));
    }
    for (resource, q) in &capacity {
        let at = format!("spec.capacity[{resource}]");
        let value = quantity_value(q);
        if let Some(v) = value
            && v < 0.0
        {
            errs.push(FieldError::invalid(
                &at,
                &json!(v as i64),
                "must be a valid resource quantity",
            ));
        }
        if value.is_some_and(|v| v <= 0.0) {
            errs.push(FieldError::invalid(
                &at,
                &quantity_text(q),
                "must be greater than zero",
            ));
        }
    }
    let reclaim = get("persistentVolumeReclaimPolicy")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !reclaim.is_empty() && !matches!(reclaim, "Delete" | "Recycle" | "Retain") {
        errs.push(FieldError::not_supported(
            "spec.persistentVolumeReclaimPolicy",
            &json!(reclaim),
            &["Delete", "Recycle", "Retain"],
        ));
    }
    let affinity = get("nodeAffinity");
    if let Some(affinity) = affinity {
        match affinity.get("required").filter(|r| !r.is_null()) {
            None => errs.push(FieldError::required(
                "spec.nodeAffinity.required",
                "must specify required node constraints",
            )),
            Some(required) => {
                if required
                    .get("nodeSelectorTerms")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty)
                {
                    errs.push(FieldError::required(
                        "spec.nodeAffinity.required.nodeSelectorTerms",
                        "must have at least one node selector term",
                    ));
                }
            }
        }
    }
    let mut sources = 0;
    for (key, rules_path) in SOURCES {
        let Some(src) = get(key) else {
            continue;
        };
        if sources > 0 && key != "flexVolume" {
            errs.push(FieldError::forbidden(
                format!("spec.{}", forbidden_name(key)),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        sources += 1;
        source_rules(key, src, &format!("spec.{rules_path}"), &mut errs);
        if key == "local" && affinity.is_none() {
            errs.push(FieldError::required(
                "spec.nodeAffinity",
                "Local volume requires node affinity",
            ));
        }
    }
    if sources == 0 {
        errs.push(FieldError::required("spec", "must specify a volume type"));
    }
    if reclaim == "Recycle"
        && let Some(path) = get("hostPath")
            .and_then(|h| h.get("path"))
            .and_then(Value::as_str)
        && !path.is_empty()
        && path.split('/').all(|p| p.is_empty() || p == ".")
    {
        errs.push(FieldError::forbidden(
            "spec.persistentVolumeReclaimPolicy",
            "may not be 'recycle' for a hostPath mount of '/'",
        ));
    }
    if let Some(class) = get("storageClassName").and_then(Value::as_str)
        && !class.is_empty()
    {
        for msg in names::dns1123_subdomain(class) {
            errs.push(FieldError::invalid(
                "spec.storageClassName",
                &json!(class),
                &msg,
            ));
        }
    }
    if let Some(mode) = get("volumeMode").and_then(Value::as_str)
        && !matches!(mode, "Block" | "Filesystem")
    {
        errs.push(FieldError::not_supported(
            "spec.volumeMode",
            &json!(mode),
            &["Block", "Filesystem"],
        ));
    }
    // The volume package's own check of a host path.
    if let Some(path) = get("hostPath")
        .and_then(|h| h.get("path"))
        .and_then(Value::as_str)
    {
        no_backsteps(path, "spec.hostPath.path", &mut errs);
    }
    errs
}

/// The PersistentVolume strategy.
pub(crate) struct PersistentVolumeStrategy;

impl Strategy for PersistentVolumeStrategy {
    fn defaults(&self, obj: &mut Map<String, Value>) {
        let Some(spec) = existing(obj, "spec") else {
            return;
        };
        or_insert_str(spec, "persistentVolumeReclaimPolicy", "Retain");
        or_insert_str(spec, "volumeMode", "Filesystem");
        if let Some(host_path) = existing(spec, "hostPath") {
            or_insert(host_path, "type", json!(""));
        }
    }

    fn prepare_for_create(&self, _store: &Store, _namespace: &str, obj: &mut Map<String, Value>) {
        obj.insert(
            "status".into(),
            json!({"phase": "Pending", "lastPhaseTransitionTime": crate::meta::now_rfc3339()}),
        );
    }

    fn validate(&self, _def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
        pv_spec(obj)
    }

    /// `ValidatePersistentVolumeUpdate`: the new state again, then the volume source and
    /// the volume mode may not change.
    fn validate_update(&self, old: &Value, new: &Map<String, Value>) -> Vec<FieldError> {
        let mut errs = pv_spec(new);
        let new_spec = new.get("spec");
        let old_spec = old.get("spec");
        let source = |spec: Option<&Value>| -> Vec<(&str, Value)> {
            SOURCES
                .iter()
                .filter_map(|(key, _)| {
                    let v = spec?.get(*key).filter(|v| !v.is_null())?;
                    let mut v = v.clone();
                    // A CSI volume may gain the secret its controller expands with.
                    if *key == "csi"
                        && spec
                            .and_then(|_| old_spec?.pointer("/csi/controllerExpandSecretRef"))
                            .is_none()
                        && let Some(csi) = v.as_object_mut()
                    {
                        csi.remove("controllerExpandSecretRef");
                    }
                    Some((*key, v))
                })
                .collect()
        };
        if source(new_spec) != source(old_spec) {
            errs.push(FieldError::forbidden(
                "spec.persistentvolumesource",
                "spec.persistentvolumesource is immutable after creation",
            ));
        }
        let mode = |spec: Option<&Value>| spec.and_then(|s| s.get("volumeMode")).cloned();
        if mode(new_spec) != mode(old_spec) {
            errs.push(FieldError::invalid(
                "volumeMode",
                &mode(new_spec).unwrap_or(Value::Null),
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

    fn causes(errs: Vec<FieldError>) -> Vec<(String, String)> {
        errs.into_iter().map(|e| (e.field, e.message)).collect()
    }

    fn pv(spec: Value) -> Map<String, Value> {
        let mut obj = json!({"metadata": {"name": "pv"}, "spec": spec});
        PersistentVolumeStrategy.defaults(obj.as_object_mut().unwrap());
        obj.as_object().unwrap().clone()
    }

    #[test]
    fn a_volume_should_have_modes_a_storage_capacity_and_one_source() {
        let obj = pv(
            json!({"accessModes": ["ReadWriteOncePod", "ReadWriteOnce", "WriteSometimes"],
            "capacity": {"storage": "0", "cpu": "1"}, "persistentVolumeReclaimPolicy": "Keep",
            "hostPath": {"path": "/data/../etc"}, "nfs": {"server": "nfs", "path": "/x"}}),
        );
        assert_eq!(
            causes(pv_spec(&obj)),
            [
                ("spec.accessModes", "Unsupported value: \"WriteSometimes\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\""),
                ("spec.accessModes", "Forbidden: may not use ReadWriteOncePod with other access modes"),
                ("spec.capacity", "Unsupported value: {\"cpu\":\"1\",\"storage\":\"0\"}: supported values: \"storage\""),
                ("spec.capacity[storage]", "Invalid value: \"0\": must be greater than zero"),
                ("spec.persistentVolumeReclaimPolicy", "Unsupported value: \"Keep\": supported values: \"Delete\", \"Recycle\", \"Retain\""),
                ("spec.hostPath.path", "Invalid value: \"/data/../etc\": must not contain '..'"),
                ("spec.nfs", "Forbidden: may not specify more than 1 volume type"),
                ("spec.hostPath.path", "Invalid value: \"/data/../etc\": must not contain '..'"),
            ]
            .map(|(f, m)| (f.to_owned(), m.to_owned()))
        );
        let none = pv(
            json!({"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
            "local": {"path": "/mnt/disk"}}),
        );
        assert_eq!(
            causes(pv_spec(&none)),
            [(
                "spec.nodeAffinity".to_owned(),
                "Required value: Local volume requires node affinity".to_owned()
            )]
        );
        let empty = pv(json!({"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "-1Ki"}}));
        assert_eq!(
            causes(pv_spec(&empty)),
            [
                (
                    "spec.capacity[storage]",
                    "Invalid value: -1024: must be a valid resource quantity"
                ),
                (
                    "spec.capacity[storage]",
                    "Invalid value: \"-1Ki\": must be greater than zero"
                ),
                ("spec", "Required value: must specify a volume type"),
            ]
            .map(|(f, m)| (f.to_owned(), m.to_owned()))
        );
    }

    #[test]
    fn the_volume_source_should_be_immutable() {
        let old = pv(
            json!({"accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"},
            "csi": {"driver": "csi.example.com", "volumeHandle": "h1"}}),
        );
        let mut new = old.clone();
        new["spec"]["csi"]["volumeHandle"] = json!("h2");
        assert_eq!(
            causes(PersistentVolumeStrategy.validate_update(&Value::Object(old.clone()), &new)),
            [(
                "spec.persistentvolumesource".to_owned(),
                "Forbidden: spec.persistentvolumesource is immutable after creation".to_owned()
            )]
        );
        let mut grown = old.clone();
        grown["spec"]["capacity"]["storage"] = json!("2Gi");
        grown["spec"]["csi"]["controllerExpandSecretRef"] = json!({"name": "s", "namespace": "n"});
        assert_eq!(
            causes(PersistentVolumeStrategy.validate_update(&Value::Object(old), &grown)),
            []
        );
    }
}
