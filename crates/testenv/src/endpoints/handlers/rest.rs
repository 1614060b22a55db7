//! What the handlers share (kube-apiserver's `endpoints/handlers/rest.go`): the body as served,
//! decoding a request body into an object of the target's kind, `dryRun`, the field manager.

use bytes::Bytes;
use serde_json::{Map, Value, json};

use crate::conversion;
use crate::custom_resource;
use crate::endpoints::installer::Target;
use crate::managed_fields;
use crate::registry::ResourceDef;
use crate::server::{Request, Shared};
use crate::status::{ApiError, ApiResult};
use crate::store::{Store, Stored};
use crate::validation;

/// The object's JSON as served to this target: custom resources read through another served
/// version get that version's `apiVersion`; metadata-only requests get `PartialObjectMetadata`.
pub(crate) fn served_json(t: &Target, stored: &Stored) -> Bytes {
    let def = &t.def;
    if t.metadata_only {
        let v = json!({
            "kind": "PartialObjectMetadata",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": stored.value.get("metadata").cloned().unwrap_or(json!({})),
        });
        return to_bytes(&v);
    }
    if let Some(v) = conversion::from_storage(def, &stored.value) {
        return to_bytes(&v);
    }
    if def.custom {
        let want = def.api_version();
        if stored.value.get("apiVersion").and_then(Value::as_str) != Some(want.as_str()) {
            let mut v = (*stored.value).clone();
            if let Some(m) = v.as_object_mut() {
                m.insert("apiVersion".into(), Value::String(want));
            }
            return to_bytes(&v);
        }
    }
    stored.json.clone()
}

pub(crate) fn to_bytes(v: &Value) -> Bytes {
    Bytes::from(crate::serializer::to_vec(v))
}

/// `dryRun: ["All"]` in a DeleteOptions body.
pub(crate) fn body_dry_run(options: &Value) -> bool {
    options
        .get("dryRun")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|v| v.as_str() == Some("All")))
}

/// `dryRun=All` (any other value is refused by the options validation).
pub(crate) fn dry_run(req: &Request) -> bool {
    req.param("dryRun") == Some("All")
}

/// Drops (or, under `fieldValidation=Strict`, refuses) fields the kind does not have, and
/// refuses values of the wrong type; the warnings go into the response. A built-in object's
/// `null`s become what its Go types make of them ([`decoded`]).
pub(crate) fn decode_fields(
    req: &Request,
    def: &ResourceDef,
    obj: &mut Map<String, Value>,
) -> ApiResult<()> {
    use validation::unknown_fields::{FieldValidation, decode};
    let mode = FieldValidation::from_param(req.param("fieldValidation"));
    let warnings = if def.custom {
        custom_resource::decode(def, obj, mode)?
    } else {
        let warnings = decode(def, obj, mode, &req.body)?;
        decoded(def, obj);
        warnings
    };
    req.warnings.lock().extend(warnings);
    Ok(())
}

/// An object as kube-apiserver has it once decoded into its kind's Go types: every write of a
/// built-in object (create, update, each kind of patch, apply, subresources) passes here before
/// it is defaulted, so that its `null`s (and the fields it leaves out) are dropped or become zero
/// values as Go's decoding and encoding make them, and what the internal type keeps of
/// two-form fields is written back ([`round_trip`](crate::conversion::round_trip)). Custom
/// resources keep theirs.
pub(crate) fn decoded(def: &ResourceDef, obj: &mut Map<String, Value>) {
    validation::unknown_fields::normalize_nulls(def, obj);
    crate::conversion::round_trip(def, obj);
}

/// Parses a request body as an object of the target's kind.
pub(crate) fn parse_object(
    shared: &Shared,
    req: &Request,
    def: &ResourceDef,
) -> ApiResult<Map<String, Value>> {
    let map = crate::wire::decode_error::parse_object(&req.body, &def.kind)?;
    if def.custom {
        // Decoded (and pruned by its own version's schema) before its version is checked.
        let mode =
            validation::unknown_fields::FieldValidation::from_param(req.param("fieldValidation"));
        let warnings =
            custom_resource::other_version_fields(&shared.store.lock(), def, &map, mode)?;
        req.warnings.lock().extend(warnings);
    }
    check_type(&map, def)?;
    Ok(map)
}

pub(crate) fn check_type(map: &Map<String, Value>, def: &ResourceDef) -> ApiResult<()> {
    let want_version = def.api_version();
    let api_version = match map.get("apiVersion") {
        None | Some(Value::Null) => "",
        Some(Value::String(v)) => v.as_str(),
        Some(_) => return Err(ApiError::bad_request("apiVersion must be a string")),
    };
    let kind = match map.get("kind") {
        None | Some(Value::Null) => "",
        Some(Value::String(k)) => k.as_str(),
        Some(_) => return Err(ApiError::bad_request("kind must be a string")),
    };
    if !def.custom && crate::wire::decode_error::in_scheme(&def.group) {
        crate::wire::decode_error::check_builtin_type(
            api_version,
            kind,
            &def.group,
            &def.version,
            &def.kind,
        )?;
    } else {
        // Custom resources (and the kinds of apiextensions-apiserver and the aggregator): the
        // version must be the resource's.
        if (def.custom || !api_version.is_empty()) && api_version != want_version {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({want_version})"
            )));
        }
        if !kind.is_empty() && kind != def.kind {
            if def.custom && kind == def.list_kind {
                return Err(ApiError::invalid(
                    &def.group,
                    kind,
                    "",
                    &[(
                        "kind",
                        "FieldValueInvalid",
                        format!("Invalid value: {kind:?}: must be {}", def.kind),
                    )],
                ));
            }
            return Err(ApiError::bad_request(format!(
                "{kind} in version \"{}\" cannot be handled as a {}: the kind in the data does not match the kind of the resource",
                def.version, def.kind
            )));
        }
    }
    if map
        .get("metadata")
        .is_some_and(|m| !m.is_object() && !m.is_null())
    {
        return Err(ApiError::bad_request("metadata must be an object"));
    }
    Ok(())
}

/// Checks the type of an apply configuration: its group, version and kind must be the
/// resource's (apimachinery's `versionCheckManager`: `invalid object type: <gvk>`).
pub(crate) fn check_apply_type(map: &Map<String, Value>, def: &ResourceDef) -> ApiResult<()> {
    let api_version = map
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or_default();
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    if (group, version, kind) != (def.group.as_str(), def.version.as_str(), def.kind.as_str()) {
        return Err(ApiError::bad_request(format!(
            "invalid object type: {group}/{version}, Kind={kind}"
        )));
    }
    Ok(())
}

/// The field manager of a write: `fieldManager`, else the user agent up to its first `/`.
pub(crate) fn manager_of(req: &Request) -> String {
    managed_fields::manager_name(req.param("fieldManager"), req.user_agent())
}

/// Records an update or patch of `t` in the new object's `managedFields` (see
/// [`crate::registry::generic::Manage`]).
pub(crate) fn manage_write(store: &Store, t: &Target, req: &Request, old: &Value, new: &mut Value) {
    managed_fields::field_manager_for(store, &t.def, t.sub.as_deref()).update(
        Some(old),
        new,
        &manager_of(req),
    );
}

pub(crate) fn str_of<'a>(v: &'a Value, pointer: &str) -> &'a str {
    v.pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}
