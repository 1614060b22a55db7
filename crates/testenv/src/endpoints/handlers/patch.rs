//! `patch`: JSON, merge and strategic merge patches, and server-side apply (kube-apiserver's
//! `endpoints/handlers/patch.go`).

use bytes::Bytes;
use http::Method;
use serde_json::{Map, Value, json};

use crate::conversion;
use crate::endpoints::handlers::create::create_managed;
use crate::endpoints::handlers::list::bool_param;
use crate::endpoints::handlers::rest::decode_fields;
use crate::endpoints::handlers::rest::decoded;
use crate::endpoints::handlers::rest::dry_run;
use crate::endpoints::handlers::rest::manage_write;
use crate::endpoints::handlers::rest::to_bytes;
use crate::endpoints::handlers::rest::{check_apply_type, check_type};
use crate::endpoints::handlers::scale::{apply_scale, write_scale};
use crate::endpoints::installer::Target;
use crate::managed_fields;
use crate::meta::metadata_mut;
use crate::patch::{self, JsonPatchError, SmpError};
use crate::registry::generic::Part;
use crate::registry::generic::prepare_update;
use crate::registry::generic::store_update;
use crate::server::{Request, Shared};
use crate::status::{ApiError, ApiResult};

/// The kinds of patch kube-apiserver accepts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum PatchKind {
    Json,
    Merge,
    Strategic,
    Apply,
}

pub(crate) fn patch(shared: &Shared, req: &Request, t: &Target) -> ApiResult<(u16, Bytes)> {
    let def = &t.def;
    let content_type = req.header("content-type");
    let media = content_type.split(';').next().unwrap_or_default().trim();
    let kind = match media {
        "application/json-patch+json" => PatchKind::Json,
        "application/merge-patch+json" => PatchKind::Merge,
        "application/strategic-merge-patch+json" if !def.custom => PatchKind::Strategic,
        "application/apply-patch+yaml" => PatchKind::Apply,
        _ if def.custom => {
            return Err(ApiError::new(
                415,
                "UnsupportedMediaType",
                "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
            ));
        }
        _ => {
            return Err(
                ApiError::new(415, "UnsupportedMediaType", "415: Unsupported Media Type")
                    .with_details(json!({})),
            );
        }
    };
    crate::validation::options::validate(req, "patch", kind == PatchKind::Apply)?;
    if kind == PatchKind::Apply {
        return apply(shared, req, t);
    }
    let body: Value = match serde_json::from_slice(&req.body) {
        Ok(v) => v,
        Err(e) if kind == PatchKind::Strategic => {
            return Err(ApiError::bad_request(patch::go_json_error(&req.body, &e)));
        }
        Err(e) => {
            return Err(ApiError::bad_request(format!(
                "error decoding patch: {}",
                patch::go_json_error(&req.body, &e)
            )));
        }
    };
    // A merge patch is first decoded into a Go map (unless `fieldValidation=Ignore`), then
    // `jsonpatch.MergePatch` refuses what is not an object; a strategic merge patch is decoded
    // into a map, where `null` is an empty patch.
    let body = match (&kind, body) {
        (PatchKind::Json, body) | (_, body @ Value::Object(_)) => body,
        (PatchKind::Strategic, Value::Null) => json!({}),
        (PatchKind::Merge, Value::Null) => {
            return Err(ApiError::bad_request("Invalid JSON Patch"));
        }
        (PatchKind::Merge, _) if req.param("fieldValidation") == Some("Ignore") => {
            return Err(ApiError::bad_request("Invalid JSON Patch"));
        }
        (kind, other) => {
            let prefix = if *kind == PatchKind::Merge {
                "error decoding patch: "
            } else {
                ""
            };
            return Err(ApiError::bad_request(format!(
                "{prefix}json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                crate::wire::go_json::value_kind(&other)
            )));
        }
    };
    let schema = managed_fields::schema_for(&shared.store.lock(), def);
    let apply_patch = |current: &Value| -> ApiResult<Value> {
        let mut target = current.clone();
        match kind {
            PatchKind::Json => {
                patch::json_patch(&mut target, &body).map_err(|e| match e {
                    JsonPatchError::Malformed(m) => {
                        ApiError::bad_request(format!("error decoding patch: {m}"))
                    }
                    // kube-apiserver words every failed operation the same way.
                    JsonPatchError::Failed(_) => ApiError::new(
                        422,
                        "Invalid",
                        "the server rejected our request due to an error in our request",
                    )
                    .with_details(json!({})),
                })?;
            }
            PatchKind::Strategic if t.sub.as_deref() != Some("scale") => {
                target =
                    patch::strategic_merge_patch(&schema, current, &body).map_err(|e| match e {
                        SmpError::UnknownDirective(..) => ApiError::new(500, "", e.to_string()),
                        SmpError::Invalid(m) => ApiError::bad_request(m),
                    })?;
            }
            _ => patch::merge_patch(&mut target, &body),
        }
        Ok(target)
    };
    if t.sub.as_deref() == Some("scale") {
        return write_scale(shared, req, t, apply_patch);
    }
    let mut store = shared.store.lock();
    let old = store
        .get(&def.storage, &t.key())
        .map(|s| conversion::stored_as(def, s))
        .ok_or_else(|| ApiError::not_found(&def.group, &def.plural, t.name()))?;
    let patched = apply_patch(&old.value)?;
    let Value::Object(mut patched) = patched else {
        return Err(ApiError::bad_request(
            "the patched object is not a JSON object",
        ));
    };
    if kind == PatchKind::Strategic {
        // A strategic merge patch is applied to the typed object: `apiVersion` and `kind` in it
        // change nothing.
        for key in ["apiVersion", "kind"] {
            match old.value.get(key) {
                Some(v) => patched.insert(key.into(), v.clone()),
                None => patched.remove(key),
            };
        }
    }
    check_type(&patched, def)?;
    if def.custom {
        decode_fields(req, def, &mut patched)?;
    } else {
        // The patched object is decoded into the kind's Go types: a field they lack is dropped
        // with a warning (refused under `fieldValidation=Strict`).
        use crate::validation::unknown_fields::{FieldValidation, decode};
        let raw = serde_json::to_vec(&patched).unwrap_or_default();
        let mode = FieldValidation::from_param(req.param("fieldValidation"));
        let warnings = decode(def, &mut patched, mode, &raw)?;
        req.warnings.lock().extend(warnings);
        decoded(def, &mut patched);
    }
    if let Some(n) = patched
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        && n != t.name()
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({})",
            t.name()
        )));
    }
    let part = if t.sub.as_deref() == Some("status") {
        Part::Status
    } else {
        Part::Main
    };
    let new = prepare_update(
        def,
        &old.value,
        patched,
        part,
        false,
        false,
        store.next_rv(),
        &|old, new| {
            manage_write(&store, t, req, old, new);
            crate::admission::admit_update(shared, &store, req, t, old, new)
        },
    )?;
    crate::admission::validate_update(shared, &store, req, t, &old.value, new.as_ref())?;
    store_update(shared, &mut store, t, &old, new, dry_run(req))
}

/// Server-side apply (`application/apply-patch+yaml`): the configuration merges into the
/// object (or creates it) with field ownership per manager.
pub(crate) fn apply(shared: &Shared, req: &Request, t: &Target) -> ApiResult<(u16, Bytes)> {
    let def = &t.def;
    // Present: the options validation requires it.
    let manager = req.param("fieldManager").unwrap_or_default();
    let force = bool_param(req, "force")?.unwrap_or(false);
    let config = managed_fields::parse_apply_body(&req.body)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    // Decoded into a Go map: `null` (an empty body too) leaves it empty, anything but an
    // object cannot be.
    let config = match config {
        Value::Null => Value::Object(Map::new()),
        Value::Object(_) => config,
        other => {
            let kind = match other {
                Value::Array(_) => "array",
                Value::String(_) => "string",
                Value::Number(_) => "number",
                _ => "bool",
            };
            return Err(ApiError::bad_request(format!(
                "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
            )));
        }
    };
    let Value::Object(config_map) = &config else {
        return Err(ApiError::internal("object is not a map"));
    };
    if t.sub.as_deref() == Some("scale") {
        let api_version = config_map
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let kind = config_map
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if (api_version, kind) != ("autoscaling/v1", "Scale") {
            let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
            return Err(ApiError::bad_request(format!(
                "invalid object type: {group}/{version}, Kind={kind}"
            )));
        }
    } else {
        check_apply_type(config_map, def)?;
    }
    if let Some(n) = config_map
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        && n != t.name()
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({})",
            t.name()
        )));
    }
    // structured-merge-diff's field manager refuses a configuration that brings managed
    // fields (even an empty list): only the server writes them on an apply.
    if config_map
        .get("metadata")
        .and_then(|m| m.get("managedFields"))
        .is_some_and(|f| !f.is_null())
    {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    // structured-merge-diff types the configuration before it merges it.
    if t.sub.as_deref() != Some("scale") {
        managed_fields::typed_patch::check(def, config_map)?;
    }
    if t.sub.as_deref() == Some("scale") {
        return apply_scale(shared, req, t, &config, manager, force);
    }
    let mut store = shared.store.lock();
    let fm = managed_fields::field_manager_for(&store, def, t.sub.as_deref());
    let Some(old) = store
        .get(&def.storage, &t.key())
        .map(|s| conversion::stored_as(def, s))
    else {
        if t.sub.is_some() {
            return Err(ApiError::not_found(&def.group, &def.plural, t.name()));
        }
        let mut obj = fm.apply(None, &config, manager, force)?;
        check_repeated_keys(req)?;
        if let Some(m) = obj.as_object_mut() {
            metadata_mut(m).insert("name".into(), Value::String(t.name().to_owned()));
        }
        drop(store);
        let create_req = Request {
            method: Method::POST,
            path: req.path.clone(),
            query: req.query.clone(),
            headers: req.headers.clone(),
            body: to_bytes(&obj),
            warnings: parking_lot::Mutex::new(Vec::new()),
            user: req.user.clone(),
        };
        return create_managed(shared, &create_req, t, true);
    };
    let applied = fm.apply(Some(&old.value), &config, manager, force)?;
    check_repeated_keys(req)?;
    let Value::Object(mut applied) = applied else {
        return Err(ApiError::internal("object is not a map"));
    };
    if def.custom {
        decode_fields(req, def, &mut applied)?;
    } else {
        decoded(def, &mut applied);
    }
    let part = if t.sub.as_deref() == Some("status") {
        Part::Status
    } else {
        Part::Main
    };
    let new = prepare_update(
        def,
        &old.value,
        applied,
        part,
        false,
        false,
        store.next_rv(),
        // Server-side apply has recorded the fields already.
        &|old, new| crate::admission::admit_update(shared, &store, req, t, old, new),
    )?;
    crate::admission::validate_update(shared, &store, req, t, &old.value, new.as_ref())?;
    store_update(shared, &mut store, t, &old, new, dry_run(req))
}

/// The strict decoding of an apply body, after the apply itself succeeded (as kube-apiserver's
/// apply patcher does it): a repeated map key is a warning each (`line 7: key "a" already set in
/// map`, the default `fieldValidation=Warn`), a `400` under `Strict`, nothing under `Ignore`.
fn check_repeated_keys(req: &Request) -> ApiResult<()> {
    let mode = req.param("fieldValidation");
    if mode == Some("Ignore") {
        return Ok(());
    }
    let repeated = crate::wire::go_yaml::duplicate_keys(&req.body);
    if repeated.is_empty() {
        return Ok(());
    }
    if mode == Some("Strict") {
        return Err(ApiError::bad_request(format!(
            "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  {}",
            repeated.join("\n  ")
        )));
    }
    req.warnings.lock().extend(repeated);
    Ok(())
}
