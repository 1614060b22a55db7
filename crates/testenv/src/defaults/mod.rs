//! Defaulting of built-in objects, as kube-apiserver's `pkg/apis/*/v1/defaults.go` and the
//! registries' `PrepareForCreate` do it: each kind has its own file.

mod namespace;

use serde_json::{Map, Value};

use crate::registry::ResourceDef;

/// Fills the defaults of a new object of `def`'s kind.
pub(crate) fn on_create(def: &ResourceDef, obj: &mut Map<String, Value>) {
    if def.custom {
        return;
    }
    if let ("", "Namespace") = (def.group.as_str(), def.kind.as_str()) {
        namespace::on_create(obj);
    }
    on_write(def, obj);
}

/// Fills the defaults every write of `def`'s kind gets (create and update).
pub(crate) fn on_write(def: &ResourceDef, obj: &mut Map<String, Value>) {
    if def.custom {
        return;
    }
    if let ("", "Namespace") = (def.group.as_str(), def.kind.as_str()) {
        namespace::on_write(obj);
    }
}
