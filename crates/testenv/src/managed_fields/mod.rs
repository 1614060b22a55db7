//! Field management and server-side apply, as kube-apiserver's field manager and
//! structured-merge-diff define them: `metadata.managedFields` on every write, field
//! ownership per manager, apply conflicts, and the list and map semantics of each type.

mod builtin_types;
mod field_manager;
mod fieldpath;
mod schema;
mod typed;
pub(crate) mod typed_patch;

use serde_json::Value;

pub(crate) use field_manager::{FieldManager, Reset, apply_through_scale};
pub(crate) use schema::{Schema, Ty};

use crate::registry::ResourceDef;
use crate::store::{Store, object_key};

/// The manager of a write: the `fieldManager` parameter, else the user agent up to its first
/// `/` (kube-apiserver's default).
pub(crate) fn manager_name(field_manager: Option<&str>, user_agent: &str) -> String {
    match field_manager.filter(|m| !m.is_empty()) {
        Some(m) => m.to_owned(),
        None => user_agent.split('/').next().unwrap_or_default().to_owned(),
    }
}

/// The schema of a resource's objects: the built-in table, or the CRD's `openAPIV3Schema`
/// of the served version.
pub(crate) fn schema_for(store: &Store, def: &ResourceDef) -> Schema {
    if !def.custom {
        return Schema::builtin(&def.group, &def.version, &def.kind);
    }
    let crd = store.get(
        "apiextensions.k8s.io/customresourcedefinitions",
        &object_key(None, &format!("{}.{}", def.plural, def.group)),
    );
    let open_api = crd.and_then(|c| {
        c.value
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .and_then(|vs| {
                vs.iter()
                    .find(|v| v.get("name").and_then(Value::as_str) == Some(def.version.as_str()))
            })
            .and_then(|v| v.pointer("/schema/openAPIV3Schema"))
            .cloned()
    });
    Schema::custom(open_api.as_ref())
}

/// The field manager of a write to `def` through `subresource` (`None`: the main resource).
pub(crate) fn field_manager_for(
    store: &Store,
    def: &ResourceDef,
    subresource: Option<&str>,
) -> FieldManager {
    let (sub, reset) = match subresource {
        // The older status strategies that take metadata from the request (see
        // `registry::generic::status_metadata`) record it too.
        Some("status") if !crate::registry::generic::status_metadata(def).is_empty() => {
            ("status", Reset::AllButStatusAndMetadata)
        }
        Some("status") => ("status", Reset::AllButStatus),
        Some(other) => (other, Reset::Nothing),
        None if def.status => ("", Reset::Status),
        None => ("", Reset::Nothing),
    };
    let manager = FieldManager::new(
        schema_for(store, def),
        &def.api_version(),
        sub,
        reset,
        def.custom,
    );
    match crate::validation::unknown_fields::zero_object(def) {
        Some(zero) => manager.with_zero(zero),
        None => manager,
    }
}

/// Why an apply body could not be read.
#[derive(Debug, thiserror::Error)]
#[error("error decoding YAML: error converting YAML to JSON: yaml: {0}")]
pub(crate) struct ApplyBodyError(String);

/// Parses an apply body: YAML (a JSON document is YAML too), its first document only, as
/// `sigs.k8s.io/yaml` reads it (see [`go_yaml`](crate::wire::go_yaml)); an empty body is `null`.
pub(crate) fn parse_apply_body(body: &[u8]) -> Result<Value, ApplyBodyError> {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return Ok(v);
    }
    crate::wire::go_yaml::unmarshal(body).map_err(ApplyBodyError)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the `apply_body` fuzz target: serde_json's default float parsing can be one unit
    /// in the last place off, so the same apply body read as JSON and as YAML differed.
    #[test]
    fn an_apply_body_should_read_the_same_numbers_as_json_and_as_yaml() {
        let exact: f64 = "3.894668420158396e-159".parse().unwrap();
        let json = parse_apply_body(b"[3.894668420158396e-159]").unwrap();
        let yaml = parse_apply_body(b"- 3.894668420158396e-159\n").unwrap();
        assert_eq!(json, yaml);
        assert_eq!(json[0].as_f64(), Some(exact));
    }
}
