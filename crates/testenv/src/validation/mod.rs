//! Validation, as kube-apiserver's `pkg/apis/*/validation` and apimachinery's
//! `ValidateObjectMeta` / `ValidateCreateOptions` do it: each rule answers with the field errors
//! kube-apiserver names, and a list of them becomes one `422 Invalid` Status.
//!
//! [`on_create`] and [`on_update`] are the hooks the request handlers call with the object as
//! it will be stored (after defaulting).

mod apps;
mod coordination;
mod core;
pub(crate) mod crd;
pub(crate) mod field;
pub(crate) mod names;
mod object_meta;
pub(crate) mod options;
mod pod_policies;
pub(crate) mod preconditions;
mod service;
pub(crate) mod unknown_fields;
mod volumes;

use serde_json::{Map, Value};

use crate::registry::ResourceDef;
use crate::status::ApiResult;
use field::FieldError;

/// The rules of `def`'s kind for any stored state of an object.
fn validate_kind(def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
    if def.custom {
        return crate::custom_resource::validate(def, obj);
    }
    match (def.group.as_str(), def.kind.as_str()) {
        ("", "ConfigMap") => core::config_map(obj),
        ("", "Secret") => core::secret(obj),
        ("", "Service") => {
            let mut errs = core::service(obj);
            errs.extend(service::policies(obj));
            errs
        }
        ("", "Pod") => core::pod_spec(obj.get("spec"), "spec"),
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") => apps::workload(obj),
        ("coordination.k8s.io", "Lease") => coordination::lease(obj),
        ("events.k8s.io", "Event") => coordination::event_v1(obj),
        _ => Vec::new(),
    }
}

/// The group kube-apiserver names in a kind's `Invalid` errors: that of its internal type
/// (events.k8s.io Events are stored and validated as core Events).
fn error_group(def: &ResourceDef) -> &str {
    match (def.group.as_str(), def.kind.as_str()) {
        ("events.k8s.io", "Event") => "",
        (group, _) => group,
    }
}

fn name_of(obj: &Map<String, Value>) -> &str {
    obj.get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Validates a new object: `422 Invalid` with every cause.
pub(crate) fn on_create(def: &ResourceDef, obj: &Map<String, Value>) -> ApiResult<()> {
    let mut errs = object_meta::validate(def, obj);
    errs.extend(validate_kind(def, obj));
    field::check(error_group(def), &def.kind, name_of(obj), errs)
}

/// Validates an update of `old` to `new` (the main resource): the kind's rules on the new
/// state plus the fields that cannot change.
pub(crate) fn on_update(def: &ResourceDef, old: &Value, new: &Map<String, Value>) -> ApiResult<()> {
    let mut errs = object_meta::validate(def, new);
    if !def.custom {
        match (def.group.as_str(), def.kind.as_str()) {
            ("", "ConfigMap") => errs.extend(core::immutable_data(old, new)),
            ("", "Secret") => {
                errs.extend(core::secret_update(old, new));
                errs.extend(core::immutable_data(old, new));
            }
            ("", "Service") => errs.extend(service::update(old, new)),
            ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") => {
                errs.extend(apps::workload_update(old, new));
            }
            ("events.k8s.io", "Event") => errs.extend(coordination::event_v1_update(old, new)),
            _ => {}
        }
    }
    errs.extend(validate_kind(def, new));
    field::check(error_group(def), &def.kind, name_of(new), errs)
}
