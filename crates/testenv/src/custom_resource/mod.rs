//! Custom resources as apiextensions-apiserver serves them: the structural schema of the
//! version (its `openAPIV3Schema`) prunes unknown fields, fills defaults and validates each
//! write; the scale subresource maps a `Scale` onto the paths the CRD names. The schemas
//! themselves are checked when a CRD is written ([`structural`], [`openapi_schema`]), and
//! [`crd_status`] is the status apiextensions-apiserver's controllers give a new CRD.
//!
//! The schema rules are written here rather than taken from a JSON-schema crate: kube-apiserver
//! answers with its own causes (`spec.size in body must be of type integer: "string"`), prunes
//! and defaults, which no JSON-schema validator does, and treats `nullable`,
//! `x-kubernetes-preserve-unknown-fields` and `x-kubernetes-int-or-string` its own way.

pub(crate) mod crd_status;
pub(crate) mod defaulting;
pub(crate) mod openapi_schema;
pub(crate) mod pruning;
pub(crate) mod scale;
pub(crate) mod schema_validation;
pub(crate) mod structural;
pub(crate) mod validation_rules;

use serde_json::{Map, Value};

use crate::registry::ResourceDef;
use crate::status::{ApiError, ApiResult};
use crate::validation::field::FieldError;
use crate::validation::unknown_fields::FieldValidation;

/// The `openAPIV3Schema` of the version `def` serves, if it is a custom resource.
pub(crate) fn schema_of(def: &ResourceDef) -> Option<&Value> {
    def.crd_version
        .as_deref()?
        .pointer("/schema/openAPIV3Schema")
}

/// Decodes a custom resource as kube-apiserver's decoder does: unknown fields are pruned (and
/// returned as warnings under `Warn`, refused with `400` under `Strict`), then the schema's
/// defaults are filled in.
pub(crate) fn decode(
    def: &ResourceDef,
    obj: &mut Map<String, Value>,
    mode: FieldValidation,
) -> ApiResult<Vec<String>> {
    let Some(schema) = schema_of(def) else {
        return Ok(Vec::new());
    };
    let mut value = Value::Object(std::mem::take(obj));
    let unknown = pruning::prune(&mut value, schema);
    if mode == FieldValidation::Strict && !unknown.is_empty() {
        let list: Vec<String> = unknown
            .iter()
            .map(|p| format!("unknown field {p:?}"))
            .collect();
        return Err(ApiError::bad_request(format!(
            "{kind} in version {version:?} cannot be handled as a {kind}: strict decoding error: {}",
            list.join(", "),
            kind = def.kind,
            version = def.version,
        )));
    }
    defaulting::apply_defaults(&mut value, schema);
    if let Value::Object(m) = value {
        *obj = m;
    }
    Ok(match mode {
        FieldValidation::Warn => unknown
            .iter()
            .map(|p| format!("unknown field {p:?}"))
            .collect(),
        _ => Vec::new(),
    })
}

/// A body of the resource's group and kind but of another version (which the create or
/// update then refuses, its version not being the endpoint's): apiextensions-apiserver's decoder
/// has pruned it by the schema of the body's version first (none for a version the CRD does not
/// have: everything but `apiVersion`, `kind` and `metadata` is unknown), so the pruned fields
/// are warnings (`unknown field "spec"`) under `Warn`, a strict decoding error under `Strict`.
/// Another group, another kind or no `apiVersion` is not pruned.
pub(crate) fn other_version_fields(
    store: &crate::store::Store,
    def: &ResourceDef,
    body: &Map<String, Value>,
    mode: FieldValidation,
) -> ApiResult<Vec<String>> {
    let text = |k: &str| body.get(k).and_then(Value::as_str).unwrap_or_default();
    let Some((group, version)) = text("apiVersion").split_once('/') else {
        return Ok(Vec::new());
    };
    if group != def.group || text("kind") != def.kind || version == def.version {
        return Ok(Vec::new());
    }
    let crd = store.get(
        "apiextensions.k8s.io/customresourcedefinitions",
        &crate::store::object_key(None, &format!("{}.{}", def.plural, def.group)),
    );
    let none = serde_json::json!({});
    let schema = crd
        .as_ref()
        .and_then(|c| c.value.pointer("/spec/versions").and_then(Value::as_array))
        .and_then(|vs| {
            vs.iter()
                .find(|v| v.get("name").and_then(Value::as_str) == Some(version))
        })
        .and_then(|v| v.pointer("/schema/openAPIV3Schema"))
        .cloned()
        .unwrap_or(none);
    let mut value = Value::Object(body.clone());
    let unknown = pruning::prune(&mut value, &schema);
    let messages: Vec<String> = unknown
        .iter()
        .map(|p| format!("unknown field {p:?}"))
        .collect();
    match mode {
        FieldValidation::Strict if !messages.is_empty() => Err(ApiError::bad_request(format!(
            "{kind} in version {version:?} cannot be handled as a {kind}: strict decoding error: {}",
            messages.join(", "),
            kind = def.kind,
        ))),
        FieldValidation::Warn => Ok(messages),
        _ => Ok(Vec::new()),
    }
}

/// The schema rules of `def`'s version for an object as it will be stored.
pub(crate) fn validate(def: &ResourceDef, obj: &Map<String, Value>) -> Vec<FieldError> {
    match schema_of(def) {
        Some(schema) => schema_validation::validate(obj, schema),
        None => Vec::new(),
    }
}

/// The causes of the validation rules (`x-kubernetes-validations`) of `def`'s version on `new`,
/// the object as it will be stored; `old`: the stored object on an update. `schema_errors`:
/// what the schema validation found (see [`validation_rules::validate`]).
pub(crate) fn validate_rules(
    def: &ResourceDef,
    new: &Map<String, Value>,
    old: Option<&Value>,
    schema_errors: &[FieldError],
) -> Vec<FieldError> {
    match schema_of(def) {
        Some(schema) => {
            validation_rules::validate(schema, &Value::Object(new.clone()), old, schema_errors)
        }
        None => Vec::new(),
    }
}

/// The warnings of the validation rules of `def`'s version that fail on values an update of
/// `old` to `new` keeps (ratcheting: kube-apiserver lets the update through and warns).
pub(crate) fn rule_warnings(def: &ResourceDef, old: &Value, new: &Value) -> Vec<String> {
    match schema_of(def) {
        Some(schema) => validation_rules::ratcheting_warnings(schema, new, old),
        None => Vec::new(),
    }
}
