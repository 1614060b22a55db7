//! Validation of a write's query options (`CreateOptions`, `UpdateOptions`, `PatchOptions`,
//! `DeleteOptions`), as apimachinery's `ValidateCreateOptions` and friends: `dryRun` takes only
//! `All`, `fieldValidation` only `Ignore`, `Warn` or `Strict`, `propagationPolicy` only
//! `Foreground`, `Background` or `Orphan`.

use serde_json::{Value, json};

use super::field::{FieldError, check};
use crate::server::Request;
use crate::status::ApiResult;

/// The options kind of a verb, as named in the 422 body.
fn options_kind(verb: &str) -> &'static str {
    match verb {
        "create" => "CreateOptions",
        "update" => "UpdateOptions",
        "patch" => "PatchOptions",
        _ => "DeleteOptions",
    }
}

/// Validates the options of a write (`verb` is `create`, `update`, `patch`, `delete` or
/// `deletecollection`); `body_options` is the DeleteOptions body of a delete.
pub(crate) fn validate(req: &Request, verb: &str, body_options: Option<&Value>) -> ApiResult<()> {
    let mut errors = Vec::new();
    let mut dry_run: Vec<&str> = req
        .query
        .iter()
        .filter(|(k, _)| k == "dryRun")
        .map(|(_, v)| v.as_str())
        .collect();
    if let Some(values) = body_options
        .and_then(|o| o.get("dryRun"))
        .and_then(Value::as_array)
    {
        dry_run.extend(values.iter().map(|v| v.as_str().unwrap_or_default()));
    }
    if dry_run.iter().any(|v| *v != "All") {
        errors.push(FieldError::not_supported(
            "dryRun",
            &json!(dry_run),
            &["All"],
        ));
    }
    if matches!(verb, "create" | "update" | "patch")
        && let Some(v) = req.param("fieldValidation")
        && !matches!(v, "" | "Ignore" | "Strict" | "Warn")
    {
        errors.push(FieldError::not_supported(
            "fieldValidation",
            &json!(v),
            &["", "Ignore", "Strict", "Warn"],
        ));
    }
    if matches!(verb, "delete" | "deletecollection") {
        let policy = req
            .param("propagationPolicy")
            .map(str::to_owned)
            .or_else(|| {
                body_options
                    .and_then(|o| o.get("propagationPolicy"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
        if let Some(p) = policy
            && !matches!(p.as_str(), "Foreground" | "Background" | "Orphan")
        {
            errors.push(FieldError::not_supported(
                "propagationPolicy",
                &json!(p),
                &["Foreground", "Background", "Orphan", "nil"],
            ));
        }
    }
    check("meta.k8s.io", options_kind(verb), "", errors)
}

/// The deletion propagation a delete asks for (query first, then the DeleteOptions body).
pub(crate) fn propagation_policy(req: &Request, body_options: &Value) -> Option<String> {
    req.param("propagationPolicy")
        .map(str::to_owned)
        .or_else(|| {
            body_options
                .get("propagationPolicy")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .or_else(|| match body_options.get("orphanDependents") {
            Some(Value::Bool(true)) => Some("Orphan".to_owned()),
            _ => None,
        })
}

/// The DeleteOptions with the query's `propagationPolicy` (which wins over the body's).
pub(crate) fn with_query_policy(req: &Request, mut options: Value) -> Value {
    if let Some(policy) = propagation_policy(req, &options)
        && let Some(map) = options.as_object_mut()
    {
        map.insert("propagationPolicy".into(), Value::String(policy));
    }
    options
}

/// The `propagationPolicy` of DeleteOptions (after [`with_query_policy`]).
pub(crate) fn propagation_policy_of(options: &Value) -> Option<&str> {
    options.get("propagationPolicy").and_then(Value::as_str)
}
